"""Faults of the command line by class: every case as a test.

* outputs are never an input (``--out`` inside the release, the manifest's files, ``reproduce --out``);
* outputs are whole or absent: a file-size limit (``RLIMIT_FSIZE``, SIGXFSZ ignored) while writing
  leaves the previous file byte-identical and no temporary file; ``reproduce`` keeps the previous OUT;
* ``reproduce`` owns ``data_dir`` / ``out_dir`` (``-p`` refused);
* ``--where`` is parsed: the issue's walk-arounds are refused with the reason;
* non-finite numbers, huge CSV cells, FIFOs: findings naming file, line and field, never exit 3;
* counts that agree: a truncated ``.gz`` is named beside "N line(s) left out"; the composition
  table says when its totals are not the questions evaluated.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import harness_line, write_jsonl, write_tiny_release
from conftest import run_cli as run

REPO = Path(__file__).resolve().parent.parent
FIX = Path(__file__).parent / "fixtures" / "longmemeval"


def digest(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


# ============================================================================ outputs never an input
def test_export_frame_and_slice_never_replace_a_release_file(tiny_release, capsys):
    before = digest(tiny_release)
    for argv, target in ((["export-frame", "--data", str(tiny_release)], "items.csv"),
                         (["slice", "--data", str(tiny_release), "--by", "model"], "models.csv"),
                         (["items", "--data", str(tiny_release), "--model", "Model-A", "--budget", "8K"], "items.csv"),
                         (["slice", "--data", str(tiny_release), "--by", "model", "--plot"], "plot.png")):
        out = str(tiny_release / target)
        rc, _, err = run([*argv, out] if argv[-1] == "--plot" else [*argv, "--out", out], capsys)
        assert rc == 2, argv
        assert f"lies inside the input folder {str(tiny_release)!r}" in err and "never replaces an input" in err
    assert digest(tiny_release) == before


def test_output_through_a_symlink_into_the_release_is_refused(tiny_release, tmp_path, capsys):
    (tmp_path / "link").symlink_to(tiny_release)
    before = digest(tiny_release)
    rc, _, err = run(["export-frame", "--data", str(tiny_release), "--out", str(tmp_path / "link" / "items.csv")],
                     capsys)
    assert rc == 2 and "lies inside the input folder" in err
    assert digest(tiny_release) == before


def test_slice_never_replaces_a_manifest_input(tmp_path, capsys):
    import shutil

    fix = tmp_path / "lme"
    shutil.copytree(FIX, fix)
    before = digest(fix)
    listed = next(r.split(",")[0] for r in (fix / "manifest.csv").read_text().splitlines()[1:] if r.strip())
    base = ["slice", "--manifest", str(fix / "manifest.csv"), "--questions", str(fix / "questions.json")]
    for target in (fix / "manifest.csv", fix / "questions.json", fix / listed):
        rc, _, err = run([*base, "--out", str(target)], capsys)
        assert rc == 2 and f"is the input file {str(target)!r}" in err.replace(str(fix / listed), str(target))
    assert digest(fix) == before
    rc, _, _ = run([*base, "--out", str(fix / "my_slice.csv")], capsys)    # beside the manifest: fine
    assert rc == 0 and (fix / "my_slice.csv").is_file()


def test_reproduce_out_containing_or_inside_the_release_is_refused(tiny_release, tmp_path, capsys):
    before = digest(tiny_release)
    for out in (tiny_release, tiny_release / "out", tiny_release.parent):
        rc, _, err = run(["reproduce", "--data", str(tiny_release), "--out", str(out)], capsys)
        assert rc == 2 and "which this command reads" in err, out
    assert digest(tiny_release) == before


def test_supplement_out_inside_the_release_is_refused(tiny_release, capsys):
    rc, _, err = run(["supplement", "--data", str(tiny_release), "--out", str(tiny_release)], capsys)
    assert rc == 2 and "lies inside the input folder" in err


# ============================================================================ reproduce owns its folders
@pytest.mark.parametrize("param, option", [("data_dir=/elsewhere", "--data"), ("out_dir=/tmp/x", "--out"),
                                           ("seed=3", "--seed"), ("n_boot=5", "--n-boot")])
def test_reproduce_p_cannot_override_what_the_runner_owns(tiny_release, tmp_path, capsys, param, option):
    rc, _, err = run(["reproduce", "--data", str(tiny_release), "--out", str(tmp_path / "o"), "-p", param], capsys)
    assert rc == 2 and f"is set by the runner from {option}" in err
    assert not (tmp_path / "o").exists()


def test_runner_refuses_owned_overrides_from_python(tiny_release, tmp_path):
    from voxmem_analysis.errors import InputError
    from voxmem_analysis.reproduce.runner import RunOptions, run as run_all

    with pytest.raises(InputError, match="out_dir"):
        run_all(tiny_release, tmp_path / "o", RunOptions(overrides={"out_dir": str(tmp_path / "x")}))


# ============================================================================ whole or absent
_LIMITED = textwrap.dedent("""
    import resource, signal, sys
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)          # EFBIG instead of being killed
    limit = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    from voxmem_analysis.cli import main
    sys.exit(main(sys.argv[2:]))
""")


def limited(argv: list[str], limit: int, env_cache: Path) -> subprocess.CompletedProcess:
    """The command line in a process that may not write a file over ``limit`` bytes."""
    env = {**os.environ, "VOXMEM_CACHE_DIR": str(env_cache), "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", _LIMITED, str(limit), *argv], capture_output=True, text=True,
                          env=env, timeout=300)


@pytest.mark.parametrize("argv_of", [
    lambda rel, out: ["slice", "--data", rel, "--by", "model", "--out", out + "/s.csv"],
    lambda rel, out: ["slice", "--data", rel, "--by", "model", "--plot", out + "/s.png"],
    lambda rel, out: ["items", "--data", rel, "--model", "Model-A", "--budget", "8K", "--out", out + "/i.csv"],
    lambda rel, out: ["export-frame", "--data", rel, "--out", out + "/f.parquet"],
    lambda rel, out: ["export-frame", "--data", rel, "--out", out + "/f.csv"],
], ids=["slice-out", "slice-plot", "items-out", "export-parquet", "export-csv"])
def test_full_disk_leaves_the_previous_output_untouched(tiny_release, tmp_path, argv_of):
    out = tmp_path / "out"
    out.mkdir()
    argv = argv_of(str(tiny_release), str(out))
    target = Path(argv[-1])
    target.write_bytes(b"PREVIOUS GOOD OUTPUT\n")
    cache = tmp_path / "cache"
    assert limited(argv, 10 ** 8, cache).returncode == 0   # fills the cache; the output fits
    target.write_bytes(b"PREVIOUS GOOD OUTPUT\n")
    res = limited(argv, 64, cache)
    assert res.returncode in (1, 2), res.stderr
    assert "Traceback" not in res.stderr and "internal error" not in res.stderr
    assert str(target) in res.stderr and "File too large" in res.stderr
    assert target.read_bytes() == b"PREVIOUS GOOD OUTPUT\n"
    assert sorted(p.name for p in out.iterdir()) == [target.name]       # no temporary file left


def test_atomic_write_on_failure_keeps_the_file_and_removes_the_temporary(tmp_path):
    from voxmem_analysis.writing import atomic_text, atomic_write

    target = tmp_path / "t.txt"
    atomic_text(target, "first\n")

    def half(tmp):
        tmp.write_text("half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError) as info:
        atomic_write(target, half)
    assert info.value.filename == str(target) and info.value.strerror == "No space left on device"
    assert target.read_text() == "first\n" and sorted(p.name for p in tmp_path.iterdir()) == ["t.txt"]


def test_supplement_failure_keeps_the_previous_folder_and_zip(tmp_path, monkeypatch):
    from voxmem_analysis.reproduce import supplement as S

    out = tmp_path / "out"
    (out / S.FOLDER).mkdir(parents=True)
    (out / S.FOLDER / "README.md").write_text("previous\n")
    (out / f"{S.FOLDER}.zip").write_bytes(b"previous zip")
    before = digest(out)
    monkeypatch.setattr(S, "_check_source", lambda *a, **k: ({"notebooks": []}, {}))

    def full(*a, **k):
        raise OSError(28, "No space left on device", "x")

    monkeypatch.setattr(S, "write_zip", full)
    with pytest.raises(OSError):
        S.build_supplement(tmp_path / "rel", out, from_dir=tmp_path)
    assert digest(out) == before and sorted(p.name for p in out.iterdir()) == [S.FOLDER, f"{S.FOLDER}.zip"]


def test_synth_writes_whole_or_nothing(tmp_path, monkeypatch, capsys):
    import voxmem_analysis.synth.release as SR

    out = tmp_path / "rel"
    out.mkdir()
    (out / "mine.txt").write_text("kept\n")

    def broken(folder, seed=0):
        Path(folder).mkdir(parents=True)
        (Path(folder) / "items.csv").write_text("half")
        raise OSError(27, "File too large", str(Path(folder) / "items.csv"))

    monkeypatch.setattr(SR, "write_release", broken)
    rc, _, err = run(["synth", "--out", str(out)], capsys)
    assert rc == 2 and "File too large" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rel"] and digest(out) == {"mine.txt": digest(out)["mine.txt"]}


def test_merge_folder_keeps_other_entries_and_replaces_the_written_ones(tmp_path):
    from voxmem_analysis.writing import merge_folder

    target, built = tmp_path / "t", tmp_path / "b"
    (target / "predictions").mkdir(parents=True)
    (target / "predictions" / "old.jsonl").write_text("old\n")
    (target / "mine.txt").write_text("mine\n")
    (built / "predictions").mkdir(parents=True)
    (built / "predictions" / "new.jsonl").write_text("new\n")
    (built / "items.csv").write_text("i\n")
    merge_folder(built, target)
    assert sorted(digest(target)) == ["items.csv", "mine.txt", "predictions/new.jsonl"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t"]


# ---------------------------------------------------------------------------- reproduce: previous OUT kept
def _notebook(name: str) -> str:
    return textwrap.dedent(f"""\
        # %% tags=["parameters"]
        data_dir = "data/synthetic"
        out_dir = "figures"
        seed = 0
        n_boot = 10000

        # %%
        from pathlib import Path
        p = Path(out_dir) / "tables" / "{name}.csv"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x\\n1\\n")
        """)


def _reproduce_argv(data: Path, out: Path, notebooks: Path) -> list[str]:
    return ["reproduce", "--jobs", "1", "--no-progress", "--n-boot", "20", "--data", str(data), "--out", str(out),
            "--notebooks", str(notebooks)]


@pytest.fixture(scope="session")
def first_run(made_once) -> Path:
    """The output of one complete run of the notebook on the tiny release (made once; read only)."""
    def make(folder: Path) -> None:
        (folder / "notebooks").mkdir(parents=True)
        (folder / "notebooks" / "01_first.py").write_text(_notebook("first"))
        argv = _reproduce_argv(write_tiny_release(folder / "rel"), folder / "out", folder / "notebooks")
        assert run(argv)[0] == 0

    return made_once("cannot-write-first-run", make) / "out"


@pytest.mark.parametrize("broken", ["report", "run.json"])
def test_reproduce_that_cannot_write_its_files_keeps_the_previous_out(tiny_release, tmp_path, monkeypatch, capsys,
                                                                      broken, first_run):
    import shutil

    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    (nbs / "01_first.py").write_text(_notebook("first"))
    out = tmp_path / "out"
    args = _reproduce_argv(tiny_release, out, nbs)
    shutil.copytree(first_run, out)                       # a complete earlier run of the same notebook
    before = digest(out)

    def full(*a, **k):
        raise OSError(27, "File too large", "x")

    if broken == "report":
        import voxmem_analysis.reproduce.report as RP

        monkeypatch.setattr(RP, "write_report", full)
    else:
        import voxmem_analysis.writing as W

        real = W.atomic_text
        monkeypatch.setattr(W, "atomic_text", lambda p, *a, **k: full() if Path(p).name == "run.json" else real(p, *a, **k))
    rc, out_text, err = run(args, capsys)
    assert rc == 1
    assert f"cannot write {'report/' if broken == 'report' else 'run.json'}: File too large" in out_text + err
    assert digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "out", "rel"]


# ============================================================================ --where parsed
@pytest.mark.parametrize("where, reason", [
    ("model = 'x' /* ' */ OR model IN (SELECT model FROM read_csv('/etc/passwd')) /* ' */", "comments"),
    ("model = 'x' -- '\n OR model IN (SELECT model FROM read_csv('/etc/passwd'))", "comments"),
    ("model IN (SELECT model FROM read_csv('/etc/passwd'))", "sub-query"),
    ("read_csv('/etc/passwd') IS NULL", "the function 'read_csv'"),
    ("model = 'a' UNION SELECT * FROM self", "not a query"),
    ("model = 'a'; DROP TABLE self", "';'"),
    ("no_such_column = 1", "unknown column 'no_such_column'"),
    ("model = \"Model-A\"", "single quotes"),
])
def test_where_walk_arounds_are_refused_with_the_reason(tiny_release, capsys, where, reason):
    rc, _, err = run(["slice", "--data", str(tiny_release), "--by", "model", "--where", where], capsys)
    assert rc == 2 and "one boolean expression on the frame's columns" in err and reason in err


def test_where_still_filters(tiny_release, capsys):
    rc, out, _ = run(["slice", "--data", str(tiny_release), "--by", "model", "--interval", "wilson", "--where",
                      "model = 'Model-A' AND budget IN ('8K') AND NOT is_ar"], capsys)
    assert rc == 0
    rows = [r for r in out.splitlines()[1:] if r.startswith("slice,") or ",slice," in r]
    assert len(rows) == 1 and "Model-A" in rows[0]


# ============================================================================ crash classes
def test_non_finite_numbers_in_models_and_items_are_named(tiny_release, capsys):
    models = (tiny_release / "models.csv").read_text().replace("7.6,8.0,true,2", "NaN,Infinity,true,1e999")
    (tiny_release / "models.csv").write_text(models)
    items = (tiny_release / "items.csv").read_text().splitlines()
    items[0] += ",session_count,history_duration_seconds"
    items[1:] = [items[1] + ",-Infinity,NaN", items[2] + ",12,1e999", items[3] + ",3,2.5", items[4] + ",4,inf"]
    (tiny_release / "items.csv").write_text("\n".join(items) + "\n")
    rc, out, err = run(["validate", "--data", str(tiny_release)], capsys)
    assert rc == 0
    text = out + err
    assert "models.csv:3 [total_params_b]: total_params_b 'Infinity' is not a finite number" in text
    assert "models.csv:3 [order]: order '1e999' is not a finite number" in text
    assert "items.csv:2 [session_count]: 1 value(s) of `session_count` are not finite numbers" in text
    assert "items.csv:2 [history_duration_seconds]: 3 value(s)" in text
    for argv in (["slice", "--by", "model"], ["table", "table12"], ["table", "composition"]):
        assert run([argv[0], "--data", str(tiny_release), *argv[1:]], capsys)[0] == 0


def test_huge_csv_cell_in_models_is_read(tiny_release, capsys):
    text = (tiny_release / "models.csv").read_text().replace("Fam,", '"' + "F" * 200_000 + '",', 1)
    (tiny_release / "models.csv").write_text(text)
    rc, _, err = run(["validate", "--data", str(tiny_release)], capsys)
    assert rc == 0 and "field larger than field limit" not in err


def test_a_fifo_named_like_predictions_is_not_a_regular_file(tiny_release, capsys):
    os.mkfifo(tiny_release / "predictions" / "pipe.jsonl")
    rc, out, err = run(["validate", "--data", str(tiny_release)], capsys)
    assert rc == 1
    assert ("ERROR not_a_regular_file: predictions/pipe.jsonl: not read: not a regular file (a FIFO, a named pipe)"
            in out + err)
    assert "only *.jsonl and *.jsonl.gz" not in out + err


# ============================================================================ counts that agree
def test_truncated_gzip_is_named_beside_the_lines_left_out(tmp_path, capsys):
    root = tmp_path / "rel"
    lines = [harness_line(item_id=f"q_{i:05d}_8k", question_id=f"q_{i:05d}", response=f"answer {i} " * 8)
             for i in range(600)]
    raw = gzip.compress("".join(json.dumps(r) + "\n" for r in lines).encode(), mtime=0)
    (root / "predictions").mkdir(parents=True)
    (root / "predictions" / "p.jsonl.gz").write_bytes(raw[: len(raw) // 2])
    rc, _, err = run(["slice", "--data", str(root), "--by", "model", "--lenient"], capsys)
    assert rc == 0
    head = next(l for l in err.splitlines() if l.startswith("# 1 error(s)"))
    assert head.endswith("; 0 line(s) left out, and the unread part of 1 file(s) whose lines could not be counted "
                         "(predictions/p.jsonl.gz)")
    rc, out, _ = run(["validate", "--data", str(root)], capsys)
    assert "files not read in full (lines lost there are not counted above): predictions/p.jsonl.gz" in out


def test_composition_says_when_its_totals_are_not_the_questions_evaluated(tiny_release, capsys):
    items = (tiny_release / "items.csv").read_text()
    items += ("q_00012_8k,q_00012,8K,fam_00012,speaker_information,information_extraction,cue_to_fact,answer,\n"
              "q_00013_8k,q_00013,8K,fam_00013,speaker_information,information_extraction,cue_to_fact,answer,\n")
    (tiny_release / "items.csv").write_text(items)
    rc, out, err = run(["table", "composition", "--data", str(tiny_release)], capsys)
    assert rc == 0
    assert ("the counts are of the 4 questions of the release's item table; 2 of them have predictions "
            "(row Total|Evaluated), 2 have none") in err
    cells = {tuple(l.split(",")[1:3]): l.split(",")[-1] for l in out.splitlines()[1:]}   # long form
    assert cells[("Total|All", "Total")] == "4" and cells[("Total|Evaluated", "Total")] == "2"


def test_deeply_nested_json_inside_a_field_is_text_not_a_crash(tmp_path, capsys):
    deep = "[" * 100_000 + "]" * 100_000
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "p.jsonl", [harness_line(gold_json=deep),
                                                   harness_line(item_id="q_00012_8k", question_id="q_00012")])
    for argv in (["items", "--data", str(root), "--model", "Model-A", "--budget", "8K"],
                 ["table", "composition", "--data", str(root)], ["validate", "--data", str(root)]):
        rc, _, _ = run(argv, capsys)
        assert rc in (0, 1), argv


def test_a_poisoned_run_json_in_out_is_no_crash(tiny_release, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "run.json").write_text("[" * 100_000 + "]" * 100_000)
    rc, _, err = run(["reproduce", "--out", str(out), "--report-only"], capsys)
    assert rc in (0, 1, 2)


def test_export_frame_csv_written_in_slices_is_polars_whole_csv(tiny_release, tmp_path, monkeypatch):
    """The CSV is written by Python in slices (polars never writes the file): the bytes are those of
    polars' own CSV of the whole frame, header once, for 0, 1, a slice's worth and several slices of rows."""
    import io

    import polars as pl

    import voxmem_analysis.commands.export_frame as ef

    monkeypatch.setattr(ef, "CSV_SLICE_ROWS", 3)
    assert run(["export-frame", "--data", str(tiny_release), "--out", str(tmp_path / "f.csv")])[0] == 0
    frame = pl.read_csv(tmp_path / "f.csv", infer_schema_length=0)
    assert frame.height == 8
    for n in (0, 1, 3, 8):
        part = frame.head(n)
        ef._write_file(part, tmp_path / "p.csv", ".csv")
        whole = io.BytesIO()
        part.write_csv(whole)
        assert (tmp_path / "p.csv").read_bytes() == whole.getvalue(), n
