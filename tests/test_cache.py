"""The parsed-release cache (io/cache.py): every kind of change gives a new key, a damaged entry is
ignored and rewritten, never trusted; ``--no-cache`` and ``cache clear`` on the command line."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import harness_line, write_jsonl
from voxmem_analysis.cli import main
from voxmem_analysis.io import cache
from voxmem_analysis.io.release import Release, load_release
from voxmem_analysis.io.scoring import ScoringRules


@pytest.fixture
def cache_folder(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(folder))
    return folder


def _key(root: Path, rules=ScoringRules()) -> str:
    from voxmem_analysis.io.release import cache_key

    return cache_key(root, rules)


def test_cached_release_is_reused_and_equal(tiny_release, cache_folder):
    first = load_release(tiny_release, cache=True)
    assert len(cache.entries()) == 1
    again = load_release(tiny_release, cache=True)
    assert again.frame.equals(first.frame) and again.models.equals(first.models)
    assert [p.as_dict() for p in again.problems] == [p.as_dict() for p in first.problems]
    assert len(cache.entries()) == 1


def test_no_cache_by_default_in_the_library(tiny_release, cache_folder):
    load_release(tiny_release)
    assert cache.entries() == []


def _one_file(root: Path) -> Path:
    return root / "predictions" / "b" / "all.jsonl"


def test_same_size_same_mtime_content_change_is_seen(tiny_release, cache_folder):
    load_release(tiny_release, cache=True)
    path = _one_file(tiny_release)
    st = path.stat()
    text = path.read_text()
    changed = text.replace('"response": "paused"', '"response": "pausex"', 1)
    assert len(changed) == len(text) and changed != text
    path.write_text(changed)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))   # same size, same mtime: only the bytes differ
    rel = load_release(tiny_release, cache=True)
    assert "pausex" in rel.frame["response"].to_list()
    assert len(cache.entries()) == 2


def test_mtime_size_added_and_removed_files_change_the_key(tiny_release, cache_folder):
    keys = [_key(tiny_release)]
    path = _one_file(tiny_release)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))            # touched
    keys.append(_key(tiny_release))
    with open(path, "a") as fh:                                             # grown
        fh.write("\n")
    keys.append(_key(tiny_release))
    extra = write_jsonl(tiny_release / "predictions" / "c" / "more.jsonl", [harness_line(model="Model-C")])
    keys.append(_key(tiny_release))                                         # added
    rel = load_release(tiny_release, cache=True)
    assert "Model-C" in rel.frame["model"].to_list()
    extra.unlink()
    keys.append(_key(tiny_release))                                         # removed
    assert len(set(keys)) == len(keys) - 1 and keys[-1] == keys[2]          # removing restores the earlier state
    rel = load_release(tiny_release, cache=True)
    assert "Model-C" not in rel.frame["model"].to_list()


def test_rules_are_part_of_the_key_strictness_is_not(tiny_release, cache_folder):
    harness = ScoringRules(convention="harness")
    assert _key(tiny_release) != _key(tiny_release, harness)
    a = load_release(tiny_release, cache=True)
    b = load_release(tiny_release, cache=True, rules=harness)
    assert b.rules.convention == "harness" and a.rules.convention == "paper"
    assert not a.frame["scored"].equals(b.frame["scored"])   # one prediction is ungraded
    c = load_release(tiny_release, cache=True, strict=False)   # the same release: the same entry
    assert c.frame.equals(a.frame)
    assert len(cache.entries()) == 2


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_damaged_entry_is_ignored_and_rebuilt(tiny_release, cache_folder, damage):
    good = load_release(tiny_release, cache=True)
    (entry,) = cache.entries()
    blob = entry.read_bytes()
    bad = {"truncate": blob[: len(blob) // 2], "flip": blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:],
           "garbage": b"not a cache entry at all", "empty": b""}[damage]
    entry.write_bytes(bad)
    assert cache.read_entry(cache_folder, _key(tiny_release)) is None
    rel = load_release(tiny_release, cache=True)
    assert rel.frame.equals(good.frame)
    assert isinstance(cache.read_entry(cache_folder, _key(tiny_release)), Release)   # rewritten, whole


def test_cached_errors_still_raise_in_strict_mode(tmp_path, cache_folder):
    from voxmem_analysis.errors import VoxMemDataError

    root = tmp_path / "bad"
    write_jsonl(root / "predictions" / "p.jsonl", [harness_line(), "{oops"])
    for _ in range(2):
        with pytest.raises(VoxMemDataError, match="malformed_json"):
            load_release(root, cache=True)
        assert load_release(root, strict=False, cache=True).stats["rejected_lines"] == 1


def test_unwritable_cache_folder_is_not_an_error(tiny_release, tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(blocker / "cache"))   # below a file: cannot be created
    monkeypatch.delenv(cache.CACHE_ENV, raising=False)
    assert load_release(tiny_release, cache=True).frame.height


def test_cli_uses_the_cache_and_no_cache_bypasses_it(tiny_release, cache_folder, tmp_path, capsys):
    out = tmp_path / "f.parquet"
    assert main(["export-frame", "--data", str(tiny_release), "--out", str(out), "--no-cache"]) == 0
    assert cache.entries() == []
    assert main(["export-frame", "--data", str(tiny_release), "--out", str(out)]) == 0
    assert len(cache.entries()) == 1
    assert main(["cache"]) == 0
    assert str(cache_folder) in capsys.readouterr().out
    assert main(["cache", "clear"]) == 0
    assert "removed 1 cache entry" in capsys.readouterr().out
    assert cache.entries() == []


def test_runner_variable_names_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv(cache.CACHE_DIR_ENV, str(tmp_path / "user"))
    monkeypatch.setenv(cache.CACHE_ENV, str(tmp_path / "run"))
    assert cache.cache_dir() == tmp_path / "run"
    monkeypatch.delenv(cache.CACHE_ENV)
    assert cache.cache_dir() == tmp_path / "user"
    monkeypatch.delenv(cache.CACHE_DIR_ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache.cache_dir() == tmp_path / "xdg" / "voxmem-analysis"
