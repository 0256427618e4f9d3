"""A CSV cell longer than the csv module's default limit (131,072 characters) is read by every reader
that parses CSV with Python's csv module, through the library as through the command line, and no
reader changes :func:`csv.field_size_limit` for the process (also when it raises).

Each case writes the same input twice, once with a short cell and once with a 140,000-character
one, reads both through the library API and through the command line, and compares: the results
differ only where the long cell is shown (replaced by the short one before comparing).
"""
from __future__ import annotations

import csv
import json
import shutil
import threading
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from conftest import run_cli
from voxmem_analysis.commands._guards import manifest_inputs
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_amc
from voxmem_analysis.io import load_amc_runs
from voxmem_analysis.io.amc_values import plain_csv
from voxmem_analysis.io.longmemeval import load_longmemeval, read_questions
from voxmem_analysis.io.longmemeval import read_manifest
from voxmem_analysis.io import load_release
from voxmem_analysis.textlimits import CSV_FIELD_LIMIT, csv_field_limit

REPO = Path(__file__).resolve().parent.parent
LME = Path(__file__).parent / "fixtures" / "longmemeval"
AMC_RUN = REPO / "data" / "examples" / "amc_run"
DEFAULT = 131_072
LONG, SHORT = "L" * 140_000, "S"


# ----------------------------------------------------------------------------- inputs
def _lme(root: Path, cell: str, tiny=None) -> dict:
    """The LongMemEval fixture, ``cell`` as the system of the manifest's first row and as the
    question text of a CSV question table."""
    shutil.copytree(LME, root)
    lines = (root / "manifest.csv").read_text(encoding="utf-8").splitlines()
    first = lines[1].split(",")
    lines[1] = ",".join([first[0], cell, *first[2:]])
    (root / "m.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    qs = json.loads((root / "questions.json").read_text(encoding="utf-8"))
    with open(root / "q.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(["question_id", "question_type", "question"])
        w.writerows([q["question_id"], q["question_type"], cell if i == 0 else "q"] for i, q in enumerate(qs))
    return {"m": root / "m.csv", "q": root / "questions.json", "qcsv": root / "q.csv", "root": root}


def _amc_run(root: Path, cell: str, tiny=None) -> dict:
    """The example runs, ``cell`` as the second judge's name and in an extra, quoted column of a CSV task
    table (quoted: the csv module reads it, not polars)."""
    shutil.copytree(AMC_RUN, root)
    m = root / "manifest.csv"
    m.write_text(m.read_text(encoding="utf-8").replace("synthetic-judge-2", cell), encoding="utf-8")
    rows = [json.loads(line) for line in (root / "tasks.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    with open(root / "tasks.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, [*rows[0], "note"], lineterminator="\n", quoting=csv.QUOTE_NONNUMERIC)
        w.writerows([{k: "" if v is None else v for k, v in r.items()} | {"note": cell if i == 0 else "n"}
                     for i, r in enumerate(rows)])
    text = (root / "tasks.csv").read_text(encoding="utf-8")
    (root / "tasks.csv").write_text(",".join(f'"{c}"' for c in [*rows[0], "note"]) + "\n" + text, encoding="utf-8")
    return {"m": m, "tasks": root / "tasks.csv", "root": root}


def _amc_release(root: Path, cell: str, tiny=None) -> dict:
    """The synthetic AMC release, ``cell`` in an extra, quoted column of one results table."""
    shutil.copytree(REPO / "data" / "synthetic-amc", root)
    table = sorted((root / "tts").glob("*.csv"))[0]
    lines = table.read_text(encoding="utf-8").splitlines()
    lines = [lines[0] + ",note", lines[1] + f',"{cell}"', *(line + ',"n"' for line in lines[2:])]
    table.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"root": root}


def _registry(root: Path, cell: str, tiny: Path) -> dict:
    """A tiny release whose models.csv names a family ``cell``."""
    shutil.copytree(tiny, root)
    text = (root / "models.csv").read_text(encoding="utf-8").replace("Fam,", f'"{cell}",', 1)
    (root / "models.csv").write_text(text, encoding="utf-8")
    return {"root": root}


def _frame_text(obj) -> str:
    if isinstance(obj, pl.DataFrame):
        return obj.write_csv()
    if isinstance(obj, pd.DataFrame):
        return obj.to_csv()
    return repr(obj)


CASES = {   # name: (inputs, library call -> comparable text, command line)
    "lme_manifest": (_lme, lambda p: _frame_text(read_manifest(p["m"])[0]) + _frame_text(
        load_longmemeval(p["m"], p["q"]).frame.sort("system", "question_id", "budget")),
        lambda p: ["slice", "--manifest", str(p["m"]), "--questions", str(p["q"]), "--by", "system"]),
    "lme_questions": (_lme, lambda p: _frame_text(read_questions(p["qcsv"])[0]) + _frame_text(
        load_longmemeval(p["m"], p["qcsv"]).frame),
        lambda p: ["slice", "--manifest", str(p["m"]), "--questions", str(p["qcsv"]), "--by", "question_type"]),
    "guards_manifest": (_lme, lambda p: repr(manifest_inputs(str(p["m"]), str(p["q"]))),
                        lambda p: ["slice", "--manifest", str(p["m"]), "--questions", str(p["q"]), "--out",
                                   str(p["root"] / (p["root"] / "manifest.csv").read_text().splitlines()[2].split(",")[0])]),
    "amc_runs": (_amc_run, lambda p: "".join(_frame_text(getattr(load_amc_runs(p["m"], p["tasks"]), part))
                                             for part in ("tasks", "results", "rubric_results", "manifest")),
                 lambda p: ["table", "amc_table2", "--manifest", str(p["m"]), "--tasks", str(p["tasks"]),
                            "--format", "long"]),
    "amc_release": (_amc_release, lambda p: _frame_text(load_amc(p["root"]).tts),
                    lambda p: ["table", "amc_table2", "--data", str(p["root"]), "--format", "long"]),
    "registry": (_registry, lambda p: _frame_text(load_release(p["root"]).registry),
                 lambda p: ["validate", "--data", str(p["root"])]),
}


def _same(text: str, long_root: Path, short_root: Path) -> str:
    return text.replace(str(long_root), str(short_root)).replace(LONG, SHORT)


@pytest.mark.parametrize("case", sorted(CASES))
def test_long_cell_read_by_the_library_as_by_the_command_line(case, tmp_path, tiny_release, capsys):
    build, library, argv = CASES[case]
    short, long = (build(tmp_path / d / "in", c, tiny_release) for d, c in (("s", SHORT), ("l", LONG)))
    before = csv.field_size_limit(DEFAULT)
    try:
        lib = [library(p) for p in (short, long)]
        assert csv.field_size_limit() == DEFAULT
        assert LONG in lib[1] or case in ("amc_release", "guards_manifest")
        assert _same(lib[1], long["root"], short["root"]) == lib[0]
        cli = [run_cli(argv(p), capsys) for p in (short, long)]
        assert csv.field_size_limit() == DEFAULT
    finally:
        csv.field_size_limit(before)
    assert cli[0][0] == cli[1][0] == (2 if case == "guards_manifest" else 0), cli[1][2][-2000:]   # 2: --out is an input
    assert "field larger than field limit" not in cli[1][1] + cli[1][2]
    assert [_same(t, long["root"], short["root"]) for t in cli[1][1:]] == list(cli[0][1:])


def test_limit_set_back_after_a_reader_raised(tmp_path):
    lme = _lme(tmp_path / "lme", LONG)
    (lme["root"] / lme["m"].read_text(encoding="utf-8").splitlines()[1].split(",")[0]).unlink()
    runs = _amc_run(tmp_path / "amc", LONG)
    (runs["root"] / "results" / "synth-e2e-audio.jsonl").write_text("{not json\n", encoding="utf-8")
    before = csv.field_size_limit(DEFAULT)
    try:
        with pytest.raises(VoxMemDataError, match="does not exist|cannot"):
            load_longmemeval(lme["m"], lme["q"])
        assert csv.field_size_limit() == DEFAULT
        with pytest.raises(VoxMemDataError, match="malformed_json|not valid JSON"):
            load_amc_runs(runs["m"], runs["tasks"])
        assert csv.field_size_limit() == DEFAULT
    finally:
        csv.field_size_limit(before)


def test_scope_nested_threaded_and_after_an_error():
    before = csv.field_size_limit(DEFAULT)
    try:
        with pytest.raises(csv.Error, match="field larger than field limit"):
            with csv_field_limit():
                assert csv.field_size_limit() == CSV_FIELD_LIMIT
                with csv_field_limit():
                    assert csv.field_size_limit() == CSV_FIELD_LIMIT
                assert csv.field_size_limit() == CSV_FIELD_LIMIT   # the inner scope left it raised
                csv.field_size_limit(10)
                list(csv.reader(["a" * 11]))
        assert csv.field_size_limit() == DEFAULT
        seen, gate = [], threading.Barrier(4)

        def read():
            with csv_field_limit():
                gate.wait()
                seen.append(len(next(csv.reader([LONG]))[0]))
                gate.wait()

        threads = [threading.Thread(target=read) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen == [len(LONG)] * 4 and csv.field_size_limit() == DEFAULT
    finally:
        csv.field_size_limit(before)


def test_plain_csv_decision_does_not_depend_on_the_process_limit():
    text = "a,b\n" + "x" * 200 + ",1\n"
    before = csv.field_size_limit(100)
    try:
        small = plain_csv(text)
    finally:
        csv.field_size_limit(before)
    assert small is not None and small.equals(plain_csv(text))
    assert small.rows() == [("x" * 200, "1", 2)]


def test_own_long_form_and_supplement_index_read_long_cells(tmp_path):
    """The workbook's own CSVs: a ``*.long.csv`` row and a table's index name over the default limit
    are read (the limit raised only while reading), and the process limit is left as it was."""
    from voxmem_analysis.output import read_long, write_long
    from voxmem_analysis.reproduce.supplement import _index_name

    path = write_long([("t", LONG, "accuracy", 0.5), ("t", "b", "n", 3)], tmp_path / "t.long.csv")
    table = tmp_path / "t.csv"
    table.write_text(f"{LONG},x\nr,1\n", encoding="utf-8")
    csv.field_size_limit(DEFAULT)
    assert read_long(path) == [("t", LONG, "accuracy", 0.5), ("t", "b", "n", 3)]
    assert _index_name(table) == LONG
    assert csv.field_size_limit() == DEFAULT
