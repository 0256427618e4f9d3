"""Random corruptions of every reader's files and every output path (property tests).

For a VoxMem release (predictions, ``.gz`` predictions, items, models, release.json), an Audio
MultiChallenge release (tasks, rubrics, verdicts, response lengths) and a LongMemEval manifest
(manifest, questions, verdict files), one corruption is drawn -- truncate, flip bytes, insert a
non-finite or huge number, duplicate a line, delete a field, nest deeply, a huge cell, a symlink
loop, a FIFO, an empty file, a BOM, CRLF line ends, a gzip stream cut short -- and the command
line runs in-process, validating and writing an output over a previous one.  Always:

* the exit code is 0, 1 or 2 (never 3, "internal error"), and no traceback is printed;
* no input file is modified (SHA-256 before and after);
* no partial output: the output folder holds the output file only (no temporary file); after a
  failure it holds the previous bytes, after success a whole, readable file;
* every lost record is counted (VoxMem, read leniently): lines read = predictions kept + lines
  rejected + identical duplicates, the rejected lines are named by findings with a line, the
  command's "N line(s) left out" is that count, and a file not read in full is named beside it.

The LongMemEval crash classes of issue 24 (empty cells, a self-looping link, deep nesting, huge
cells) are also tested one by one at the end.
"""
from __future__ import annotations

import contextlib
import gzip
import zlib
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import harness_line, run_cli, write_jsonl
from test_amc import write_release as write_amc

FIX = Path(__file__).parent / "fixtures" / "longmemeval"
PREVIOUS = b"PREVIOUS COMPLETE OUTPUT\n"
KINDS = ("truncate", "flip", "nonfinite", "duplicate", "delete_field", "deep", "huge_cell", "loop", "fifo",
         "empty", "bom", "crlf", "gzip_cut")
_NUMBERS = ("NaN", "Infinity", "-Infinity", "1e999", "123456789012345678901234567890", "-1e400")


# ----------------------------------------------------------------------------- inputs
def voxmem_release(root: Path) -> Path:
    lines = [harness_line(item_id=f"q_{q:05d}_{b.lower()}", question_id=f"q_{q:05d}", context_length=b,
                          model=m, verdict=(q + i) % 2 == 0, response=f"answer {q}")
             for i, m in enumerate(("Model-A", "Model-B")) for q in (10, 12, 14) for b in ("8K", "64K")]
    write_jsonl(root / "predictions" / "a" / "p_8k.jsonl", [r for r in lines if r["model"] == "Model-A"][:3])
    write_jsonl(root / "predictions" / "a" / "p_64k.jsonl.gz", [r for r in lines if r["model"] == "Model-A"][3:], gz=True)
    write_jsonl(root / "predictions" / "b" / "all.jsonl", [r for r in lines if r["model"] == "Model-B"])
    items = ["item_id,question_id,context_length,evidence_type,memory_operation,subtype,expected_response,session_count"]
    items += [f"q_{q:05d}_{b.lower()},q_{q:05d},{b},speaker_information,information_extraction,cue_to_fact,answer,{q}"
              for q in (10, 12, 14) for b in ("8K", "64K")]
    (root / "items.csv").write_text("\n".join(items) + "\n")
    (root / "models.csv").write_text("model,family,access,architecture,llm_params_b,total_params_b,in_64k_set,order\n"
                                     "Model-A,Fam,proprietary,api,,,true,1\nModel-B,Other,open_weight,omni_modal,7.6,8.0,true,2\n")
    (root / "release.json").write_text(json.dumps({"name": "prop", "synthetic": True}) + "\n")
    return root


def lme_copy(root: Path) -> Path:
    shutil.copytree(FIX, root, ignore=shutil.ignore_patterns("bad"))
    return root


def regular_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*")
                  if p.is_file() and not p.is_symlink() and not p.name.startswith("."))


def digest(root: Path) -> dict[str, str]:
    out = {}
    for p in sorted(root.rglob("*")):
        try:
            if stat.S_ISREG(os.lstat(p).st_mode):
                out[p.relative_to(root).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
        except OSError:
            pass
    return out


# ----------------------------------------------------------------------------- corruptions
@st.composite
def corruption(draw, files: list[str], kinds=KINDS):
    return draw(st.sampled_from(files)), draw(st.sampled_from(kinds)), draw(st.randoms(use_true_random=False))


def _lines(raw: bytes) -> list[bytes]:
    return raw.splitlines(keepends=True) or [b""]


def corrupt(root: Path, name: str, kind: str, rnd) -> None:
    """Apply ``kind`` to ``root/name`` (a .gz file is corrupted inside its stream, except gzip_cut)."""
    path = root / name
    raw = path.read_bytes()
    gz = name.endswith(".gz")
    if gz and kind not in ("gzip_cut", "loop", "fifo", "empty", "flip"):
        raw = gzip.decompress(raw)
    lines = _lines(raw)
    i = rnd.randrange(len(lines))
    if kind == "truncate":
        raw = raw[: rnd.randrange(len(raw) + 1)]
    elif kind == "flip":
        b = bytearray(raw)
        for _ in range(rnd.randint(1, 4)):
            if b:
                b[rnd.randrange(len(b))] ^= 1 << rnd.randrange(8)
        raw = bytes(b)
    elif kind == "nonfinite":   # a number field becomes NaN, Infinity, 1e999 ...
        text = raw.decode("utf-8", "replace")
        nums = list(re.finditer(r"(?<=[:,])\s*-?\d+(\.\d+)?(?=[,}\n\r])", text))
        if nums:
            m = nums[rnd.randrange(len(nums))]
            text = text[: m.start()] + rnd.choice(_NUMBERS) + text[m.end():]
        raw = text.encode()
    elif kind == "duplicate":
        lines.insert(i, lines[i] if lines[i].endswith(b"\n") else lines[i] + b"\n")
        raw = b"".join(lines)
    elif kind == "delete_field":
        line = lines[i].decode("utf-8", "replace")
        if line.lstrip().startswith("{"):
            line = re.sub(r'"[^"]+":\s*("[^"]*"|[^,}]*),?\s*', "", line, count=1)
        else:
            cells = line.rstrip("\r\n").split(",")
            if len(cells) > 1:
                cells[rnd.randrange(len(cells))] = ""
            line = ",".join(cells) + "\n"
        lines[i] = line.encode()
        raw = b"".join(lines)
    elif kind == "deep":
        lines.insert(i, b"[" * 50_000 + b"]" * 50_000 + b"\n")
        raw = b"".join(lines)
    elif kind == "huge_cell":
        line = lines[i].rstrip(b"\r\n")
        cut = rnd.randrange(len(line) + 1)
        lines[i] = line[:cut] + b"x" * 200_000 + line[cut:] + b"\n"
        raw = b"".join(lines)
    elif kind == "empty":
        raw = b""
    elif kind == "bom":
        raw = b"\xef\xbb\xbf" + raw
    elif kind == "crlf":
        raw = raw.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
    elif kind == "gzip_cut":
        if gz:
            raw = raw[: rnd.randrange(10, max(11, len(raw) - 8))]
    if kind == "loop":
        path.unlink()
        path.symlink_to(path.name)
    elif kind == "fifo":
        path.unlink()
        os.mkfifo(path)
    else:
        path.write_bytes(gzip.compress(raw, mtime=0) if gz and kind not in ("gzip_cut", "flip", "empty") else raw)


# ----------------------------------------------------------------------------- running
def check_run(argv: list[str], target: Path) -> tuple[int, str]:
    """Run a command writing ``target`` over a previous output; the invariants of every run."""
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(PREVIOUS)
    rc, out, err = run_cli(argv)                             # no traceback, no "internal error"
    assert rc in (0, 1, 2), (argv, rc, err[-2000:])
    assert sorted(p.name for p in target.parent.iterdir()) == [target.name], list(target.parent.iterdir())
    if rc == 0:
        if target.suffix == ".csv":
            pl.read_csv(target, infer_schema_length=0)       # whole and readable
        else:
            pl.read_parquet(target)
    else:
        assert target.read_bytes() == PREVIOUS
    return rc, out + err


@contextlib.contextmanager
def corrupted(make, change, commands):
    """``make(root)`` in a new folder with one corruption ``change`` (file, kind, random) applied, then every
    ``(argv, output file name or None)`` of ``commands(root)`` run by :func:`check_run` (``--out`` added
    when named); no input file modified.  Yields ``(root, [(exit code, text) of each command])`` while the
    folder exists."""
    name, kind, rnd = change
    with tempfile.TemporaryDirectory() as tmp:
        root = make(Path(tmp) / "in")
        corrupt(root, name, kind, rnd)
        before = digest(root)
        said = []
        for i, (argv, out) in enumerate(commands(root)):
            target = Path(tmp) / f"o{i}" / (out or "unused.csv")
            said.append(check_run([*argv, *(["--out", str(target)] if out else [])], target))
        assert digest(root) == before                        # no input modified
        yield root, said


# Each example draws one (file, kind of corruption, random position) of the reader's files x KINDS; derandomized,
# the same examples on every run.  A crash (exit 3, a traceback), a changed input, a partial output or a line
# dropped uncounted on any drawn case fails the test.  The example counts keep the suite's time budget.
_SETTINGS = settings(max_examples=30, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _voxmem_commands(root: Path) -> list[tuple[list[str], str | None]]:
    data = ["--data", str(root)]
    return [(["validate", *data], None), (["export-frame", *data, "--lenient"], "frame.csv"),
            (["slice", *data, "--lenient", "--by", "model", "--interval", "wilson"], "s.csv"),
            (["items", *data, "--lenient", "--model", "Model-A", "--budget", "8K"], "i.csv")]


VOXMEM_FILES = ["predictions/a/p_8k.jsonl", "predictions/a/p_64k.jsonl.gz", "predictions/b/all.jsonl", "items.csv",
                "models.csv", "release.json"]


@_SETTINGS
@given(change=corruption(VOXMEM_FILES))
def test_voxmem_release_corrupted_at_random(change):
    from voxmem_analysis.errors import files_not_read_in_full
    from voxmem_analysis.io import load_release

    with corrupted(voxmem_release, change, _voxmem_commands) as (root, said):
        rc, text = said[1]
        try:
            rel = load_release(root, strict=False, cache=False)
        except Exception as exc:  # noqa: BLE001 - no release at all: a data error the commands said (exit 1)
            assert type(exc).__name__ == "VoxMemDataError" and rc == 1
            return
        s = rel.stats
        # every line read is kept, rejected or an identical duplicate: nothing dropped uncounted
        assert s["lines"] == rel.frame.height + s["rejected_lines"] + s["duplicates_identical"], s
        named = sum(p.count for p in rel.errors() if p.line is not None)
        assert named >= s["rejected_lines"], (s, [str(p) for p in rel.errors()])
        if rc == 0 and rel.errors():
            assert f"; {s['rejected_lines']} line(s) left out" in text
            for f in files_not_read_in_full(rel.problems):
                assert f in text.split("left out", 1)[1].splitlines()[0]


AMC_FILES = ["tasks.csv", "rubrics.csv", "verdicts/v.csv", "release.json"]


def _lme_files() -> list[str]:
    return ["manifest.csv", "questions.json"] + sorted(f"verdicts/{p.name}" for p in (FIX / "verdicts").iterdir())


# ----------------------------------------------------------------------------- odd output paths
def _odd_target(kind: str, out: Path, release: Path) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    t = out / "t.csv"
    if kind == "symlink-loop":
        t.symlink_to(t.name)
    elif kind == "fifo":
        os.mkfifo(t)
    elif kind == "dangling-link":
        t.symlink_to(out / "nowhere" / "x.csv")
    elif kind == "link-into-release":
        t.symlink_to(release / "items.csv")
    elif kind == "folder":
        t.mkdir()
    elif kind == "under-a-file":
        (out / "file").write_text("x")
        t = out / "file" / "t.csv"
    return t


@pytest.mark.parametrize("kind", ["symlink-loop", "fifo", "dangling-link", "link-into-release", "folder",
                                  "under-a-file"])
@pytest.mark.parametrize("command", ["slice", "items", "export-frame"])
def test_odd_output_paths_are_written_whole_or_refused(tmp_path, kind, command):
    root = voxmem_release(tmp_path / "rel")
    before = digest(root)
    target = _odd_target(kind, tmp_path / "out", root)
    argv = {"slice": ["slice", "--data", str(root), "--by", "model", "--interval", "wilson"],
            "items": ["items", "--data", str(root), "--model", "Model-A", "--budget", "8K"],
            "export-frame": ["export-frame", "--data", str(root)]}[command]
    rc, out, err = run_cli([*argv, "--out", str(target)])
    assert rc in (0, 2), err
    assert digest(root) == before
    assert not [p for p in (tmp_path / "out").rglob("*.part")] and not [p for p in tmp_path.rglob(".*.part")]
    if kind in ("link-into-release", "folder", "under-a-file"):
        assert rc == 2 and str(target) in err
    if rc == 0:   # a link or pipe at the path is replaced by the whole file, never written through
        assert stat.S_ISREG(os.lstat(target).st_mode) and pl.read_csv(target).height > 0


# ----------------------------------------------------------------------------- LongMemEval crash classes


def _manifest_row(root: Path, i: int, **cells) -> None:
    rows = (root / "manifest.csv").read_text().splitlines()
    head = rows[0].split(",")
    row = rows[i].split(",")
    for k, v in cells.items():
        row[head.index(k)] = v
    rows[i] = ",".join(row)
    (root / "manifest.csv").write_text("\n".join(rows) + "\n")


def _loop(root: Path) -> None:
    p = root / (root / "manifest.csv").read_text().splitlines()[1].split(",")[0]
    p.unlink()
    p.symlink_to(p.name)


@pytest.mark.parametrize("mutate", [
    pytest.param(lambda r: _manifest_row(r, 1, budget=""), id="empty-budget"),
    pytest.param(lambda r: _manifest_row(r, 1, judge=""), id="empty-judge"),
    pytest.param(_loop, id="self-looping-symlink"),
    pytest.param(lambda r: (r / "questions.json").write_text("[" * 100_000 + "]" * 100_000), id="deep-questions"),
    pytest.param(lambda r: _manifest_row(r, 1, system="S" * 200_000), id="huge-manifest-cell"),   # csv_field_limit
])
def test_longmemeval_crash_classes(tmp_path, mutate):
    root = lme_copy(tmp_path / "lme")
    mutate(root)
    check_run(["slice", "--manifest", str(root / "manifest.csv"), "--questions", str(root / "questions.json"),
               "--by", "system", "--interval", "wilson", "--out", str(tmp_path / "o" / "s.csv")], tmp_path / "o" / "s.csv")


# ----------------------------------------------------------------------------- attribution records, AMC runs
def _attribution_release(root: Path) -> Path:
    """The small VoxMem release plus 40 audit records of data/synthetic (SYNTHETIC) in attribution/."""
    voxmem_release(root)
    src = Path(__file__).resolve().parents[1] / "data" / "synthetic" / "attribution" / "audit_64k.jsonl"
    with open(src, encoding="utf-8") as fh:
        head = [next(fh) for _ in range(40)]
    (root / "attribution").mkdir()
    (root / "attribution" / "audit_64k.jsonl").write_text("".join(head), encoding="utf-8")
    with gzip.open(root / "attribution" / "more.jsonl.gz", "wt", encoding="utf-8") as fh:
        fh.write("".join(head[:10]))
    return root


@settings(_SETTINGS, max_examples=20)
@given(change=corruption(["attribution/audit_64k.jsonl", "attribution/more.jsonl.gz"]))
def test_attribution_records_corrupted_at_random(change):
    from voxmem_analysis.io.voxmem.attribution import read_audit_files

    with corrupted(_attribution_release, change, lambda root: [(["validate", "--data", str(root)], None)]) as (root, _):
        if change[1] in ("loop", "fifo"):
            return
        rows, problems = read_audit_files(root)   # the reader itself: every loss is named by file (and line)
        lines = sum(1 for f in ("audit_64k.jsonl", "more.jsonl.gz") for ln in _text_lines(root / "attribution" / f))
        line_errors = sum(p.count for p in problems if p.severity == "error" and p.line is not None)
        whole_files = [p for p in problems if p.severity == "error" and p.line is None]
        assert all(p.file for p in problems), [str(p) for p in problems]
        assert whole_files or len(rows) + line_errors >= lines - 10, (len(rows), line_errors, lines)


def _text_lines(path: Path) -> list[str]:
    """Non-blank lines of a (possibly gzipped, possibly damaged) file, as far as it can be read."""
    try:
        raw = path.read_bytes()
        raw = gzip.decompress(raw) if path.suffix == ".gz" else raw
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error):
        return []
    return [ln for ln in raw.decode("utf-8", "replace").replace("\r", "\n").split("\n") if ln.strip()]


AMC_RUN = Path(__file__).resolve().parents[1] / "data" / "examples" / "amc_run"
AMC_RUN_FILES = ["manifest.csv", "tasks.jsonl", "results/synth-e2e-text.jsonl.gz", "results/synth-cascade-text.jsonl",
                 "results/synth-e2e-audio.jsonl"]


def amc_run_copy(root: Path) -> Path:
    shutil.copytree(AMC_RUN, root)
    return root


def _amc_run_commands(root: Path) -> list[tuple[list[str], str | None]]:
    args = ["--manifest", str(root / "manifest.csv"), "--tasks", str(root / "tasks.jsonl")]
    return [(["validate", *args], None), (["slice", *args, "--lenient", "--by", "system", "--n-boot", "50"], "s.csv")]


#: reader: (inputs, files corrupted, commands run, examples)
CORRUPTED = {
    "amc_release": (write_amc, AMC_FILES, lambda root: [(["validate", "--data", str(root)], None),
                                                        (["export-frame", "--data", str(root), "--lenient"], "f.parquet")], 25),
    "longmemeval_manifest": (lme_copy, _lme_files(), lambda root: [(["slice", "--manifest", str(root / "manifest.csv"),
                             "--questions", str(root / "questions.json"), "--by", "system", "--interval", "wilson"], "s.csv")], 40),
    "amc_runs": (amc_run_copy, AMC_RUN_FILES, _amc_run_commands, 20),   # users' task table + judged results via a manifest
}


@pytest.mark.parametrize("reader", sorted(CORRUPTED))
def test_reader_files_corrupted_at_random(reader):
    make, files, commands, examples = CORRUPTED[reader]

    @settings(_SETTINGS, max_examples=examples)
    @given(change=corruption(files))
    def run(change):
        with corrupted(make, change, commands):
            pass

    run()
