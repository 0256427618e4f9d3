"""The record front end (``io/engine/records.py``, ``census.py``, ``values.py``): the key census keeps exactly
the lines polars reads as Python's ``json`` does (decided from sums over a file, or line by line); the
front end's reading of any lines equals Python's reading of them, for every reader's declaration
(hypothesis); lone surrogates, integers beyond 64 bits, non-finite numbers; CSV (long cells, the
process's limit left as it was) and Parquet (any column type carrying text read as text)."""
from __future__ import annotations

import csv
import json
import shutil
import threading
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

from conftest import harness_line, run_cli
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_amc, load_amc_runs, load_longmemeval, load_release
from voxmem_analysis.io.amc.tables import spec as amc_spec
from voxmem_analysis.io.engine import census, records
from voxmem_analysis.io.engine.values import Values, as_int
from voxmem_analysis.io.longmemeval import read_manifest, read_questions
from voxmem_analysis.io.longmemeval.verdicts import SPEC as LME_SPEC
from voxmem_analysis.io.voxmem.attribution import SPEC as AUDIT_SPEC
from voxmem_analysis.io.voxmem.lines import SPEC as LINE_SPEC
from voxmem_analysis.io.voxmem.predictions import extra_series
from voxmem_analysis.textlimits import CSV_FIELD_LIMIT, csv_field_limit

SCHEMA = LINE_SPEC.schema()


# ----------------------------------------------------------------------------- the key census
PLAIN = json.dumps(harness_line())
AWKWARD = [
    PLAIN[:-1] + ', "latency_ms": 812}',                     # a field outside the frame
    PLAIN[:-1] + ', "latency_ms": null}',                    # ... even when null
    PLAIN[:-1] + ', "verdict": null}',                       # a repeated key (null after a value)
    PLAIN.replace('"response": "paused"', '"response": 5'),  # a number where text belongs
    PLAIN.replace('"gold_json": "{\\"answer\\": \\"paused\\"}"', '"gold_json": {"answer": "paused"}'),
    PLAIN.replace('"response": "paused"', '"response": ["paused"]'),
    PLAIN.replace('"response": "paused"', '"response": "\\ud800"'),   # an unpaired surrogate
    PLAIN.replace('"model": ', '"model" : '),                 # white space before a colon
    PLAIN.replace('"model": "Model-A"', '"m\\u006fdel": "Model-A", "model": "N"'),
    PLAIN.replace('"response": "paused"', '"response": 5, "latency_ms": "x"'),   # one line short, one over: sums equal
]


def _per_line(raw: bytes) -> list[bool]:
    starts, ends, _ = census.line_ranges(raw)
    rec = pl.read_ndjson(raw, schema=SCHEMA)
    n_keys, n_text, counted, names = census.census(raw, starts, ends)
    n_all, n_str = census.filled(rec)
    return census.readable(rec, n_keys - n_all, n_text - n_str, counted, names, SCHEMA).tolist()


def _sums_first(raw: bytes) -> list[bool]:
    starts, ends, _ = census.line_ranges(raw)
    rec = pl.read_ndjson(raw, schema=SCHEMA)
    return census.readable_lines(raw, rec, starts, ends, SCHEMA, whole=True)[0].tolist()


@pytest.mark.parametrize("line", AWKWARD)
def test_sums_leave_each_awkward_line_to_python(line):
    raw = "\n".join([PLAIN, line, PLAIN, ""]).encode("utf-8", "surrogatepass")
    assert _sums_first(raw) == _per_line(raw) == [True, False, True]


def test_compensating_lines_are_not_settled_by_sums():
    # line 2 has one string key too few (a number in a text field), line 3 one key too many (an extra
    # field holding text): the totals of key tokens differ, so the lines are counted one by one
    short = PLAIN.replace('"response": "paused"', '"response": 5')
    extra = PLAIN[:-1] + ', "latency_ms": "x"}'
    raw = "\n".join([PLAIN, short, extra]).encode()
    rec = pl.read_ndjson(raw, schema=SCHEMA)
    starts, ends, _ = census.line_ranges(raw)
    n_keys, n_text, counted, names = census.census(raw, starts, ends)
    assert not census.settled_by_sums(rec, n_keys, n_text, counted, len(names))
    assert _sums_first(raw) == [True, False, False]


def test_plain_file_is_settled_by_sums_with_its_nulls():
    lines = [PLAIN, PLAIN.replace('"response": "paused"', '"response": null'),
             PLAIN.replace('"response": "paused"', '"response": "3 (\\"three\\": yes)"'),
             json.dumps(harness_line(response="é ✓ 😀"), ensure_ascii=True)]
    raw = ("\n".join(lines) + "\n\n").encode()
    rec = pl.read_ndjson(raw, schema=SCHEMA)
    starts, ends, _ = census.line_ranges(raw)
    n_keys, n_text, counted, names = census.census(raw, starts, ends)
    assert names == [(1, "response")]
    assert n_keys.tolist() == [23, 23, 23, 23] and n_text.tolist() == [17, 16, 17, 17]   # 23 fields, 17 of them text
    assert census.settled_by_sums(rec, n_keys, n_text, counted, len(names))
    assert _sums_first(raw) == _per_line(raw) == [True] * 4


def _per_line_lines(lines: list[str]) -> list[bool]:
    return _per_line("\n".join(lines).encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("line", [
    PLAIN[:-1] + ', "latency_ms": 812}',                     # a field outside the frame: an extra column
    PLAIN[:-1] + ', "latency_ms": null}',                    # ... even when null
    PLAIN[:-1] + ', "verdict": null}',                       # a repeated key (null after a value)
    '{"verdict": null, ' + PLAIN[1:-1] + ', "verdict": null}'.replace(', "verdict": true', ""),
    PLAIN.replace('"response": "paused"', '"response": 5'),  # a number where text belongs
    PLAIN.replace('"judge": "gemini-3.7-flash"', '"judge": 100000000000000000000'),
    PLAIN.replace('"gold_json": "{\\"answer\\": \\"paused\\"}"', '"gold_json": {"answer": "paused"}'),
    PLAIN.replace('"response": "paused"', '"response": ["paused"]'),
    PLAIN.replace('"response": "paused"', '"response": "\\ud800"'),   # an unpaired surrogate
    PLAIN.replace('"model": ', '"model" : '),                 # white space before a colon
    PLAIN.replace('"model": "Model-A"', '"m\\u006fdel": "Model-A", "model": "N"'),
])
def test_census_leaves_each_awkward_line_to_python(line):
    assert _per_line_lines([PLAIN, line, PLAIN]) == [True, False, True]


def test_census_reads_plain_lines_with_polars():
    lines = [PLAIN, PLAIN.replace('"response": "paused"', '"response": null'),
             PLAIN.replace('"response": "paused"', '"response": "3 (\\"three\\": yes)"'),
             json.dumps(harness_line(response="é ✓ 😀"), ensure_ascii=True), json.dumps(harness_line(response="é ✓ 😀"),
                                                                                    ensure_ascii=False)]
    assert _per_line_lines(lines) == [True] * len(lines)


# ----------------------------------------------------------------------------- the front end against Python's json
def jline(pairs, sep=", ", colon=": ") -> str:
    """One JSON object written from ``(key text, value JSON text)`` pairs, as given (so keys may repeat)."""
    return "{" + sep.join(f'"{k}"{colon}{v}' for k, v in pairs) + "}"


#: Raw JSON value texts: every JSON type, odd numbers, escapes polars might read differently, control
#: characters, a lone surrogate.
JSON_VALUES = st.sampled_from([
    '"x"', '""', '"  "', 'null', 'true', 'false', '0', '1', '12', '-3', '1.5', '12.0', '1e3', '99999999999999999999',
    '[]', '{}', '[1]', '{"a": 1}', '"\\u00e9"', '"\\ud800"', '"a\\"b"', '"\\\\"', '"\\u0000"', '"tab\\there"',
    '"\u2028"', '"\x1f"', '"\ufeff"', 'NaN', '-Infinity', '"yes"', '"specific"', '"u01"', '" u01 "',
    '{"model": "gpt-4o", "label": true}', '{"model": "gpt-4o", "label": "yes"}', '{"label": true}',
    '{"model": "g", "label": true, "x": 1}', '{"model": 4, "label": false}'])
KEYS = st.sampled_from(["model", "item_id", "commits", "answer", "source", "source_session", "evidence_recovered",
                        "question_id", "hypothesis", "autoeval_label", "label", "correct", "verdict", "session_count",
                        "response", "passed", "task_id", "note", "Model", "mo\\u0064el", "x y"])
SPECS = {"predictions": LINE_SPEC, "audit": AUDIT_SPEC, "longmemeval": LME_SPEC,
         "amc": amc_spec(("model", "output_modality", "task_id", "rubric_id", "passed"))}


@st.composite
def json_lines(draw):
    """Up to 8 lines of a few keys each, values of any JSON type, written with odd spacing now and then."""
    out = []
    for _ in range(draw(st.integers(1, 8))):
        pairs = draw(st.lists(st.tuples(KEYS, JSON_VALUES), min_size=0, max_size=6))
        kind = draw(st.sampled_from(["plain", "plain", "plain", "spacing", "garbage"]))
        if kind == "spacing":
            out.append(jline(pairs, sep=draw(st.sampled_from([",", ",\t"])), colon=draw(st.sampled_from([":", " :\t"]))))
        elif kind == "garbage":
            out.append(draw(st.sampled_from(["[1, 2]", "{", "not json", '"text"', "  ", jline(pairs) + " x"])))
        else:
            out.append(jline(pairs))
    return out


def _encoding(frame: pl.DataFrame, spec: records.Spec) -> pl.DataFrame:
    """The encoding columns of a raw frame (absent ones null), by line."""
    names = ["_line", "_p0_code", "_p0_msg", "_p0_field", *spec.plain]
    names += [f"{f}{s}" for f in spec.fields for s in ("", ".t", ".s", ".r", ".j", ".has") if spec.fields[f] != "json" or s]
    cols = [frame[c] if c in frame.columns else pl.Series(c, [None] * frame.height, dtype=pl.Utf8) for c in names]
    out = pl.DataFrame(cols).with_columns(
        pl.Series("_uni", [u or [] for u in frame["_uni"].to_list()] if "_uni" in frame.columns else [[]] * frame.height))
    return out.sort("_line").with_columns([pl.col(c).cast(pl.Utf8) for c in names if c != "_line"])


@settings(max_examples=120, deadline=None)
@given(lines=json_lines(), which=st.sampled_from(sorted(SPECS)))
@example(lines=["{}", '{"model": "x", "model": "x"}'], which="audit")   # a line only Python reads has every .has
def test_the_front_end_reads_every_line_as_pythons_json_does(lines, which):
    """polars' rows (those the census keeps) and Python's rows together are Python's reading of every line."""
    spec = SPECS[which]
    raw = "\n".join(lines).encode("utf-8", "surrogatepass")
    read = records.parse_file(records.FileRead(0, "f.jsonl", None, {}, [], raw), spec)
    fast, _, _ = records.raw_frame([read], spec)
    starts, ends, numbers = census.line_ranges(raw)
    entries = []
    for s, e, n in zip(starts.tolist(), ends.tolist(), numbers.tolist()):
        text = raw[s:e].decode("utf-8", "surrogatepass").rstrip("\r")
        if text.strip():
            entries.append((0, "f.jsonl", n, n, *records.parse_object(text, spec.what), True, {}))
    python, _ = records.python_frame(entries, spec)
    assert_frame_equal(_encoding(fast, spec), _encoding(python, spec))


def test_the_census_sends_polars_the_plain_lines_of_every_reader():
    """Plain lines are read by polars, not left to Python (the fast path is taken)."""
    lines = {"predictions": json.dumps(harness_line()),
             "audit": '{"model": "M", "item_id": "q1_64k", "commits": "specific", "answer": null, "evidence_recovered": '
                      'false, "source": "none", "source_session": 3, "relation": "unrelated", "why": "w"}',
             "longmemeval": '{"question_id": "u01", "hypothesis": "h", "autoeval_label": {"model": "m", "label": true}}',
             "amc": '{"model": "M", "output_modality": "Text", "task_id": "t1", "rubric_id": "r1", "passed": true}'}
    for which, line in lines.items():
        read = records.parse_file(records.FileRead(0, "f", None, {}, [], ((line + "\n") * 3).encode()), SPECS[which])
        assert read.readable.tolist() == [True] * 3, which


def test_presence_of_a_null_key_is_seen_on_the_fast_path():
    line = '{"model": "M", "item_id": "q1", "answer": null}'
    read = records.parse_file(records.FileRead(0, "f", None, {}, [], (line + "\n").encode()), AUDIT_SPEC)
    frame, _, _ = records.raw_frame([read], AUDIT_SPEC)
    assert read.readable.tolist() == [True]
    assert frame.select("answer.has", "why.has").row(0) == (True, False)


# ----------------------------------------------------------------------------- values
def test_whole_numbers_beyond_64_bits_and_odd_texts():
    assert [as_int(v) for v in (3, 3.0, 3.5, " -7 ", "--5", "\u00b2", 10**20, True, "")] == [3, 3, None, -7, None, None,
                                                                                          None, None, None]
    frame, _ = records.python_frame([(0, "f", i, i + 1, {"session_count": v}, None, False, {})
                                     for i, v in enumerate([3, 3.0, "7", 10**20, [1], None])], LINE_SPEC)
    v = Values(frame.columns, LINE_SPEC.fields, frame)
    assert frame.select(v.whole("session_count")).to_series().to_list() == [3, 3, 7, None, None, None]
    assert frame.select(v.truthy("session_count")).to_series().to_list() == [True, True, True, True, True, False]


def test_extra_field_with_an_integer_beyond_64_bits_is_kept_as_text():
    assert extra_series("x", [1, None, 2]).dtype == pl.Int64
    assert extra_series("x", [1, 2.5]).to_list() == [1.0, 2.5]
    assert extra_series("x", [True, None]).dtype == pl.Boolean
    big = extra_series("x", [1, 99999999999999999999, None])
    assert big.dtype == pl.Utf8 and big.to_list() == ["1", "99999999999999999999", None]
    assert extra_series("x", [1.5, 10 ** 400]).to_list() == ["1.5", str(10 ** 400)]


# ----------------------------------------------------------------------------- Parquet
@pytest.mark.parametrize("make", ["pandas category", "polars categorical", "polars enum", "arrow dictionary",
                                  "arrow large string"])
def test_every_column_type_carrying_text_is_read_as_text(tmp_path, make):
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    values = ["IM", "IR", None, "IM"]
    path = tmp_path / "t.parquet"
    if make == "pandas category":
        pd.DataFrame({"axis": pd.Categorical(values)}).to_parquet(path)
    elif make == "polars categorical":
        pl.DataFrame({"axis": values}, schema={"axis": pl.Categorical}).write_parquet(path)
    elif make == "polars enum":
        pl.DataFrame({"axis": values}, schema={"axis": pl.Enum(["IM", "IR"])}).write_parquet(path)
    elif make == "arrow dictionary":
        pq.write_table(pa.table({"axis": pa.array(values).dictionary_encode()}), path)
    else:
        pq.write_table(pa.table({"axis": pa.array(values, type=pa.large_string())}), path)
    frame, problems = records.parquet_frame(path, "t.parquet", records.Spec({"axis": "str"}))
    assert not problems and frame["axis"].dtype == pl.Utf8 and frame["axis"].to_list() == values


# ----------------------------------------------------------------------------- CSV: cells of any length
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
    "guards_manifest": (_lme, lambda p: repr(load_longmemeval(p["m"], p["q"], strict=False).inputs),
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
    spec = records.Spec({"a": "str", "b": "str"})
    before = csv.field_size_limit(100)
    try:
        small = records.csv_frame(text, "t.csv", spec)
    finally:
        csv.field_size_limit(before)
    assert small.equals(records.csv_frame(text, "t.csv", spec))
    assert small.rows() == [(2, "x" * 200, "1")]


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
