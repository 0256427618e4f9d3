"""The run-scoped artifact memo (``voxmem_analysis.artifacts.memoised``, issue 10).

Inside a reproduction run (``$VOXMEM_ARTIFACT_MEMO`` names a folder of the run) a memoised call is
computed once and read back by every later call with the same key: the function, every bound
parameter (seed, n_boot...) and the release's contents.  Each part of the key is checked to
miss when it changes; outside a run nothing is stored; a damaged entry is recomputed.
"""
from __future__ import annotations

import warnings

import pandas as pd
import pytest

from voxmem_analysis import artifacts
from voxmem_analysis.io.release import load_release

CALLS: list[tuple] = []


@artifacts.memoised("test.counted")
def counted(release, *, seed: int = 0, n_boot: int = 10_000, models=None) -> pd.DataFrame:
    """A stand-in for an artifact: counts its real computations; its value depends on the release."""
    CALLS.append((seed, n_boot, models))
    acc = float(release.frame["correct"].cast(float).mean())
    return pd.DataFrame({"accuracy": [acc], "seed": [seed], "n": [release.frame.height]},
                        index=pd.Index(["All"], name="Row"))


@artifacts.memoised("test.warns")
def warns(release) -> int:
    CALLS.append(("warns",))
    warnings.warn("few items in this slice", UserWarning)
    return release.frame.height


@pytest.fixture
def memo(tmp_path, monkeypatch):
    CALLS.clear()
    folder = tmp_path / "run" / ".staging" / "artifact-memo"
    monkeypatch.setenv(artifacts.MEMO_ENV, str(folder))
    return folder


def test_second_call_is_read_back_identical(tiny_release, memo):
    rel = load_release(tiny_release, strict=False)
    first = counted(rel)
    again = counted(rel, seed=0, n_boot=10_000)      # defaults given explicitly: the same key
    assert len(CALLS) == 1
    pd.testing.assert_frame_equal(first, again, check_exact=True)
    assert first is not again                        # a stored copy: mutating one leaves the other
    assert len(list(memo.glob("test.counted-*.pickle"))) == 1


def test_a_reloaded_release_with_the_same_files_hits(tiny_release, memo):
    counted(load_release(tiny_release, strict=False))
    counted(load_release(tiny_release, strict=False, cache=False))   # another object, same contents
    assert len(CALLS) == 1


@pytest.mark.parametrize("change", [{"seed": 1}, {"n_boot": 999}, {"models": ["Model-A"]}])
def test_different_parameters_miss(tiny_release, memo, change):
    rel = load_release(tiny_release, strict=False)
    base = counted(rel)
    other = counted(rel, **change)
    assert len(CALLS) == 2
    if "seed" in change:
        assert other["seed"].iat[0] == 1 and base["seed"].iat[0] == 0


def test_different_release_misses(tiny_release, memo, tmp_path):
    rel = load_release(tiny_release, strict=False)
    a = counted(rel)
    # the same release with one line dropped: another result, another key
    b_dir = tmp_path / "rel_b"
    import shutil

    shutil.copytree(tiny_release, b_dir)
    (b_dir / "predictions" / "b" / "all.jsonl").write_text(
        "\n".join((b_dir / "predictions" / "b" / "all.jsonl").read_text().splitlines()[:-1]) + "\n")
    b = counted(load_release(b_dir, strict=False))
    assert len(CALLS) == 2
    assert b["n"].iat[0] == a["n"].iat[0] - 1


def test_in_memory_change_to_the_frame_misses(tiny_release, memo):
    import polars as pl

    rel = load_release(tiny_release, strict=False)
    counted(rel)
    rel.frame = rel.frame.with_columns(pl.lit(True).alias("correct"))
    assert counted(rel)["accuracy"].iat[0] == 1.0
    assert len(CALLS) == 2


def test_touched_file_misses(tiny_release, memo):
    import os

    rel = load_release(tiny_release, strict=False)
    counted(rel)
    f = tiny_release / "models.csv"
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    counted(rel)           # a file below the release changed (e.g. attribution records read later)
    assert len(CALLS) == 2


def test_outside_a_run_nothing_is_stored(tiny_release, tmp_path, monkeypatch):
    monkeypatch.delenv(artifacts.MEMO_ENV, raising=False)
    CALLS.clear()
    rel = load_release(tiny_release, strict=False)
    counted(rel)
    counted(rel)
    assert len(CALLS) == 2
    assert not any(tmp_path.rglob("*.pickle"))


def test_damaged_entry_is_recomputed(tiny_release, memo):
    rel = load_release(tiny_release, strict=False)
    first = counted(rel)
    (entry,) = memo.glob("test.counted-*.pickle")
    blob = bytearray(entry.read_bytes())
    blob[-5] ^= 0xFF
    entry.write_bytes(bytes(blob))
    again = counted(rel)
    assert len(CALLS) == 2
    pd.testing.assert_frame_equal(first, again, check_exact=True)


def test_unkeyable_argument_is_computed_not_memoised(tiny_release, memo):
    rel = load_release(tiny_release, strict=False)

    class Opaque:
        pass

    counted(rel, models=Opaque())
    counted(rel, models=Opaque())
    assert len(CALLS) == 2
    assert not any(memo.glob("*.pickle"))


def test_warnings_are_raised_again_on_a_hit(tiny_release, memo):
    rel = load_release(tiny_release, strict=False)
    for _ in range(2):
        with pytest.warns(UserWarning, match="few items"):
            assert warns(rel) == rel.frame.height
    assert CALLS == [("warns",)]


def test_registered_artifacts_are_memoised(tiny_release, memo):
    rel = load_release(tiny_release, strict=False)
    direct = artifacts.get("table12").func(rel)
    via_registry = artifacts.compute("table12", rel, seed=0, n_boot=10_000)
    pd.testing.assert_frame_equal(direct, via_registry, check_exact=True)
    assert len(list(memo.glob("artifact.table12-*.pickle"))) == 1


def test_runner_scopes_the_memo_to_its_staging_folder(tmp_path, monkeypatch):
    import os

    from voxmem_analysis.reproduce import runner

    import jsonschema  # noqa: F401 - imported: the worker set-up leaves sys.modules alone

    for var in (artifacts.MEMO_ENV, "PYTHONHASHSEED"):   # restored after the test
        monkeypatch.setenv(var, "")
    folder = tmp_path / "out" / ".staging" / "artifact-memo"
    runner._worker_init(None, None, str(folder))
    assert os.environ[artifacts.MEMO_ENV] == str(folder)
    assert folder.parent.name == ".staging"   # removed with the staging folder when the run ends


@artifacts.memoised("test.fails")
def fails(release) -> int:
    CALLS.append(("fails",))
    warnings.warn("about to fail", UserWarning)
    raise ValueError("no such slice")


def test_a_failing_call_stores_nothing_and_keeps_its_warnings(tiny_release, memo):
    rel = load_release(tiny_release, strict=False)
    for _ in range(2):
        with pytest.warns(UserWarning, match="about to fail"), pytest.raises(ValueError, match="no such slice"):
            fails(rel)
    assert CALLS == [("fails",), ("fails",)]
    assert not any(memo.glob("test.fails-*"))


@artifacts.memoised("test.pandas")
def from_pandas_frame(table: pd.DataFrame) -> int:
    CALLS.append(("pandas",))
    return len(table)


def test_pandas_frame_arguments_key_by_content(memo):
    # an Audio MultiChallenge release holds pandas frames (string columns): one changed cell, a
    # changed dtype or index is another key; an equal copy is the same key
    base = pd.DataFrame({"model": pd.array(["a", "b", None, "a"], dtype="string"), "passed": [True, False, True, True]})
    from_pandas_frame(base)
    from_pandas_frame(base.copy())
    assert len(CALLS) == 1
    changed = base.copy()
    changed.loc[1, "model"] = "c"
    from_pandas_frame(changed)
    from_pandas_frame(base.astype({"model": object}))
    from_pandas_frame(base.set_axis([1, 2, 3, 4]))
    from_pandas_frame(base.assign(passed=[True, False, True, False]))
    assert len(CALLS) == 5


@artifacts.memoised("test.with_function")
def with_function(release, detector) -> int:
    CALLS.append(("function",))
    return release.frame.height


def _top_level_detector(text) -> bool:
    return False


def test_a_top_level_function_argument_is_keyed_by_name_a_lambda_is_not_memoised(tiny_release, memo):
    tiny_release = load_release(tiny_release, strict=False)
    with_function(tiny_release, _top_level_detector)
    with_function(tiny_release, _top_level_detector)
    assert len(CALLS) == 1
    with_function(tiny_release, len)                   # another function: another key
    assert len(CALLS) == 2
    with_function(tiny_release, lambda t: False)       # no name says what it computes: computed each time
    with_function(tiny_release, lambda t: False)
    assert len(CALLS) == 4
