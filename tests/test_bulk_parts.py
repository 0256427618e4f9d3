"""The columnar (bulk) readers of the other inputs give exactly what the row-by-row readers give:
same frames, same problems (code, file, line, field, message) in the same order, same counts --
on the shipped data, on hand-made bad inputs, and on randomly corrupted files (hypothesis).

Audio MultiChallenge has one reader (its readings are checked against recorded ones in
``tests/test_amc_reading.py``, which builds its cases from the releases written here); the tests
here say what any reading of those releases must give."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_amc

from tests.test_amc import RUBRICS, TASK_OF, TASKS

DATA = Path(__file__).resolve().parents[1] / "data"
AMC_PARTS = ("tasks", "rubrics", "verdicts", "tts", "cascaded", "human", "judges", "lengths")


# ----------------------------------------------------------------------------- Audio MultiChallenge
def amc_outcome(root: Path, *, strict: bool):
    """What ``load_amc`` gives: the release, or the problems it raised."""
    try:
        return "ok", load_amc(root, strict=strict)
    except VoxMemDataError as exc:
        return "raised", list(exc.problems)


def assert_consistent_amc(root: Path) -> None:
    """Strict reading raises exactly when the lenient one finds errors, with the same problems; every
    problem names a file; no kept verdict breaks a rule the reader checks."""
    kind, strict = amc_outcome(root, strict=True)
    _, rel = amc_outcome(root, strict=False)
    assert (kind == "raised") == bool(rel.errors())
    if kind == "raised":
        assert strict == rel.problems
    assert all(p.file for p in rel.problems if p.code != "no_release")
    for part in ("verdicts", "tts", "cascaded", "human", "judges"):
        df = getattr(rel, part)
        if df is not None and len(df):
            assert df["passed"].map(type).eq(bool).all() and set(df["output_modality"]) <= {"Text", "Audio"}
            assert set(df["task_id"]) <= set(rel.tasks["task_id"]) and set(df["rubric_id"]) <= set(rel.rubrics["rubric_id"])


def test_amc_synthetic_release_is_clean():
    rel = load_amc(DATA / "synthetic-amc")
    assert len(rel.verdicts) == 34240 and not rel.problems     # the shipped release is clean


SYSTEMS = {("M", "Text"): "r1a r1b r2a r2b r2c r3a r4a r4b r4c r4d",
           ("M", "Audio"): "r1a r1b r2a r2b r2c r3a r4a r4b r4c r4d",
           ("N", "Text"): "r1a r1b r2a r2b r2c r3a r4a r4b r4c r4d"}
VERDICT_HEADER = ["model", "output_modality", "task_id", "rubric_id", "passed"]


def amc_files() -> dict[str, list[list[str]]]:
    """A small release's tables as rows of cells (header first); 11 files with every optional part."""
    def verdicts(systems, pick=None, judge=None):
        rows = [(["judge"] if judge else []) + VERDICT_HEADER]
        for i, ((m, mod), rubrics) in enumerate(systems.items()):
            for j, r in enumerate(rubrics.split()):
                if pick is None or TASK_OF[r] in pick:
                    rows.append(([judge] if judge else []) + [m, mod, TASK_OF[r], r, "true" if (i + j) % 3 else "false"])
        return rows
    m = {k: v for k, v in SYSTEMS.items() if k[0] == "M"}
    return {
        "tasks.csv": [r.split(",") for r in TASKS.splitlines()],
        "rubrics.csv": [r.split(",") for r in RUBRICS.splitlines()],
        "verdicts/a.csv": verdicts(m),
        "verdicts/b.csv": verdicts({("N", "Text"): SYSTEMS[("N", "Text")]}),
        "tts/a.csv": verdicts(m, pick={"t2", "t3", "t4"}),
        "cascaded/a.csv": verdicts({("M", "Text"): SYSTEMS[("M", "Text")]}),
        "human_labels.csv": verdicts({("M", "Text"): "r1a r1b r2a r2b r2c"}),
        "judge_labels.csv": verdicts({("M", "Text"): "r1a r1b r2a r2b r2c"}, judge="J1")
        + verdicts({("M", "Text"): "r1a r1b"}, judge="J2")[1:],
        "response_lengths.csv": [["model", "output_modality", "task_id", "tokens"]]
        + [[m_, mod, t, str(10 * k + 3)] for k, ((m_, mod), t) in
           enumerate((s, t) for s in SYSTEMS for t in ("t1", "t2", "t3", "t4"))],
    }


def write_amc(root: Path, files: dict[str, list[list]], jsonl=(), raw: dict[str, str] | None = None) -> Path:
    """Write the tables; names in ``jsonl`` as JSON lines (cells as given, so any JSON type), the
    others as CSV joined by commas with no quoting (so a cell holding a comma or quote corrupts)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "release.json").write_text(json.dumps({"benchmark": "audio-multichallenge", "synthetic": True}))
    for name, rows in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name in jsonl:
            header = rows[0]
            text = "".join(json.dumps(dict(zip(header, r))) + "\n" for r in rows[1:])
            path.with_suffix(".jsonl").write_text(text, encoding="utf-8")
        else:
            path.write_bytes(("\n".join(",".join(str(c) for c in r) for r in rows) + "\n").encode("utf-8", "surrogatepass"))
    for name, text in (raw or {}).items():
        (root / name).write_bytes(text.encode("utf-8", "surrogatepass"))
    return root


def test_amc_tiny_release_is_clean_in_csv_and_json_lines(tmp_path):
    root = write_amc(tmp_path / "r", amc_files())
    rel = load_amc(root)
    assert not rel.problems and len(rel.verdicts) == 30 and len(rel.tts) == 16 and len(rel.judges) == 7
    root = write_amc(tmp_path / "j", amc_files(), jsonl=("verdicts/a.csv", "judge_labels.csv", "response_lengths.csv"))
    other = load_amc(root)
    assert other.verdicts.equals(rel.verdicts) and other.judges.equals(rel.judges) and other.lengths.equals(rel.lengths)


def _edit(files, name, row, col, value):
    files[name][row][col] = value
    return files


AMC_CASES = {
    "passed not boolean": lambda f: _edit(f, "verdicts/a.csv", 3, 4, "maybe"),
    "unknown rubric": lambda f: _edit(f, "verdicts/b.csv", 2, 3, "r9"),
    "rubric of another task": lambda f: _edit(f, "verdicts/a.csv", 2, 3, "r2a"),
    "unknown task": lambda f: _edit(f, "tts/a.csv", 1, 2, "t9"),
    "modality": lambda f: _edit(f, "verdicts/a.csv", 5, 1, "Video"),
    "empty model": lambda f: _edit(f, "verdicts/a.csv", 5, 0, "  "),
    "conflict across files": lambda f: f["verdicts/b.csv"].append(["M", "Text", "t1", "r1a", "true"]) or f,
    "identical repeat": lambda f: f["verdicts/a.csv"].append(list(f["verdicts/a.csv"][1])) or f,
    "missing rubric verdict": lambda f: f["verdicts/b.csv"].pop(4) and f,
    "missing task": lambda f: [f["verdicts/b.csv"].remove(r) for r in list(f["verdicts/b.csv"]) if r[2] == "t3"] and f,
    "tts task missing": lambda f: [f["tts/a.csv"].remove(r) for r in list(f["tts/a.csv"]) if r[2] == "t4"] and f,
    "judge without human label": lambda f: f["judge_labels.csv"].append(["J2", "M", "Text", "t3", "r3a", "true"]) or f,
    "bad token count": lambda f: _edit(f, "response_lengths.csv", 3, 3, "-4"),
    "repeated length": lambda f: f["response_lengths.csv"].append(list(f["response_lengths.csv"][2])) or f,
    "quoted cell": lambda f: _edit(f, "verdicts/a.csv", 2, 0, '"M"'),
    "extra cell": lambda f: _edit(f, "verdicts/a.csv", 2, 0, "M,x"),
    "missing column": lambda f: [r.pop(4) for r in f["cascaded/a.csv"]] and f,
    "empty verdict file": lambda f: f.update({"verdicts/b.csv": [VERDICT_HEADER]}) or f,
    "spaces around cells": lambda f: _edit(f, "verdicts/a.csv", 2, 1, " text "),
    "rubric labels": lambda f: _edit(_edit(_edit(f, "rubrics.csv", 3, 2, " Fixed "), "rubrics.csv", 7, 3, "mid-utterance"),
                                     "rubrics.csv", 2, 4, ""),
    "bad rubric label": lambda f: _edit(f, "rubrics.csv", 4, 3, "sideways"),
    "bad exclusion": lambda f: _edit(f, "rubrics.csv", 4, 4, "maybe"),
    "repeated rubric": lambda f: f["rubrics.csv"].append(list(f["rubrics.csv"][3])) or f,
    "boolean and number cells": lambda f: _edit(_edit(f, "verdicts/b.csv", 1, 0, True), "verdicts/a.csv", 3, 4, 1),
}


@pytest.mark.parametrize("case", sorted(AMC_CASES))
def test_amc_bad_inputs_consistent(tmp_path, case):
    assert_consistent_amc(write_amc(tmp_path / "r", AMC_CASES[case](amc_files())))
    assert_consistent_amc(write_amc(tmp_path / "j", AMC_CASES[case](amc_files()),
                                    jsonl=("verdicts/a.csv", "verdicts/b.csv", "tts/a.csv", "rubrics.csv")))


def test_amc_bad_inputs_are_found(tmp_path):
    """The cases above really are findings (so the identity is not between two empty lists)."""
    codes = {}
    for case, make in AMC_CASES.items():
        rel = load_amc(write_amc(tmp_path / case.replace(" ", "_"), make(amc_files())), strict=False)
        codes[case] = {p.code for p in rel.problems}
    assert "not_boolean" in codes["passed not boolean"] and "unknown_rubric" in codes["unknown rubric"]
    assert codes["conflict across files"] >= {"duplicate_conflict"}
    assert codes["identical repeat"] == {"duplicate_identical"}
    assert "missing_rubric_verdicts" in codes["missing rubric verdict"]
    assert codes["missing task"] == {"missing_tasks"} and codes["tts task missing"] == {"missing_tasks"}
    assert codes["judge without human label"] == {"unpaired_label"}
    assert codes["bad token count"] == {"invalid_field"} and codes["repeated length"] == {"duplicate_id"}
    assert codes["spaces around cells"] == set() and codes["quoted cell"] == set()   # stripped / unquoted by csv
    assert codes["empty verdict file"] >= {"empty_file"}


# random corruption: each step edits one cell, drops, repeats, moves or inserts a row, or damages the text
CELLS = st.sampled_from(["", " ", "true", "FALSE", "1", "0", "maybe", "t9", "t2", "r2a", "r1a", "r9", "Audio", "text",
                         " M ", "N", "M\u00a0", "x\u2028y", "x\x1cy", "\x1f", '"q"', '"M"', "a,b", "r1a ", "é", "1e3",
                         "-1", "nan", "inf", "1_000", "J2", "\ufeffM", "\ud800"])
PLAUSIBLE = st.sampled_from(["r1a", "r1b", "r2a", "r2c", "r3a", "r4d", "t1", "t2", "t3", "t4", "Text", "true", "false", "M"])
CELLS = st.one_of(CELLS, PLAUSIBLE)
JSON_CELLS = st.one_of(CELLS, st.sampled_from([None, True, False, 0, 1, 2, 1.0, [], {}, ["M"], {"a": 1}]))
FILES = sorted(amc_files())


@st.composite
def amc_corruption(draw):
    files = amc_files()
    jsonl = draw(st.sets(st.sampled_from([n for n in FILES if n != "tasks.csv"]), max_size=3))
    raw = {}
    for _ in range(draw(st.integers(1, 4))):
        name = draw(st.sampled_from(FILES))
        rows = files[name]
        kind = draw(st.sampled_from(["cell", "cell", "cell", "drop", "repeat", "move", "copy", "text"]))
        i = draw(st.integers(1, max(1, len(rows) - 1))) if len(rows) > 1 else 0
        if kind == "cell" and rows:
            j = draw(st.integers(0, len(rows[i]) - 1))
            rows[i][j] = draw(JSON_CELLS if name in jsonl else CELLS)
        elif kind == "drop" and len(rows) > 1:
            rows.pop(i)
        elif kind == "repeat" and len(rows) > 1:
            rows.insert(draw(st.integers(1, len(rows))), list(rows[i]))
        elif kind == "move" and len(rows) > 2:
            rows.insert(draw(st.integers(1, len(rows) - 1)), rows.pop(i))
        elif kind == "copy":   # a row of another verdict file (cross-file duplicates, conflicts)
            src = files[draw(st.sampled_from(["verdicts/a.csv", "verdicts/b.csv", "tts/a.csv"]))]
            if name.startswith(("verdicts", "tts", "cascaded")) and len(src) > 1:
                row = list(src[draw(st.integers(1, len(src) - 1))])
                row[4] = draw(st.sampled_from(["true", "false"]))
                rows.append(row)
        elif kind == "text" and name not in jsonl:
            text = "\n".join(",".join(str(c) for c in r) for r in rows) + "\n"
            how = draw(st.sampled_from(["crlf", "bom", "blank", "no_newline", "trailing_blank", "nul", "empty"]))
            text = {"crlf": text.replace("\n", "\r\n"), "bom": "\ufeff" + text,
                    "blank": text.replace("\n", "\n\n", 2), "no_newline": text.rstrip("\n"),
                    "trailing_blank": text + "\n\n", "nul": text.replace("t1", "t\x001", 1), "empty": ""}[how]
            raw[name] = text
    return files, jsonl, raw


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=amc_corruption())
def test_amc_random_corruption_read_consistently(tmp_path_factory, case):
    files, jsonl, raw = case
    root = write_amc(tmp_path_factory.mktemp("amc"), files, jsonl=jsonl, raw={n: t for n, t in raw.items() if n not in jsonl})
    assert_consistent_amc(root)


# ----------------------------------------------------------------------------- JSON lines: records as key/value texts
def jline(pairs, sep=", ", colon=": ") -> str:
    """One JSON object written from ``(key text, value JSON text)`` pairs, as given (so keys may repeat)."""
    return "{" + sep.join(f'"{k}"{colon}{v}' for k, v in pairs) + "}"


#: Raw JSON value texts random corruption draws from: every JSON type, odd numbers, escapes the
#: bulk parser might read differently, control characters, a lone surrogate.
JSON_VALUES = st.sampled_from([
    '"x"', '""', '"  "', 'null', 'true', 'false', '0', '1', '12', '-3', '1.5', '12.0', '1e3', '99999999999999999999',
    '[]', '{}', '[1]', '{"a": 1}', '"\\u00e9"', '"\\ud800"', '"a\\"b"', '"\\\\"', '"\\u0000"', '"tab\\there"',
    '"\u2028"', '"\x1f"', '"\ufeff"', 'NaN', '-Infinity', '"yes"', '"specific"', '"none"', '"evidence"',
    '"earlier_state"', '"M1"', '"q1_64k"', '"u01"', '"u01_abs"', '" u01 "', '"zz"',
])
KEY_TEXTS = st.sampled_from(["model", "item_id", "commits", "answer", "source", "why", "question_id", "hypothesis",
                             "autoeval_label", "label", "correct", "synthetic", "note", "Model", "mo\\u0064el",
                             "question_type", "autoeval_x", "x y", "status"])


def _mutate_line(draw, pairs: list, values) -> str:
    pairs = list(pairs)
    kind = draw(st.sampled_from(["value", "value", "drop", "add", "repeat", "spacing", "garbage", "keep"]))
    if kind == "value" and pairs:
        i = draw(st.integers(0, len(pairs) - 1))
        pairs[i] = (pairs[i][0], draw(values))
    elif kind == "drop" and pairs:
        pairs.pop(draw(st.integers(0, len(pairs) - 1)))
    elif kind == "add":
        pairs.insert(draw(st.integers(0, len(pairs))), (draw(KEY_TEXTS), draw(values)))
    elif kind == "repeat" and pairs:
        pairs.append(pairs[draw(st.integers(0, len(pairs) - 1))])
    elif kind == "garbage":
        return draw(st.sampled_from(["[1, 2]", "{", "not json", '"text"', "{}", jline(pairs) + " x", jline(pairs) + ",",
                                     jline(pairs)[:-1], "\ufeff" + jline(pairs), jline(pairs) + jline(pairs), "  "]))
    if kind == "spacing":
        return jline(pairs, sep=draw(st.sampled_from([",", ",\t", " , "])), colon=draw(st.sampled_from([":", " :\t", ":  "])))
    return jline(pairs)


# ----------------------------------------------------------------------------- attribution records
import voxmem_analysis.io.voxmem.attribution as attribution_io   # noqa: E402
from voxmem_analysis.io.voxmem.attribution import read_audit_files   # noqa: E402


def audit_pairs(model="M1", item="q1_64k", **over):
    base = {"model": f'"{model}"', "item_id": f'"{item}"', "commits": '"specific"', "answer": '"room 214"',
            "evidence_recovered": "false", "source": '"other_session"', "source_session": "12",
            "relation": '"same_value_other_session"', "why": '"The line is from \\"Session 12\\"."'}
    base.update(over)
    return list(base.items())


@pytest.fixture()
def always_bulk(monkeypatch):
    """Take the columnar path for files of any size (by default only long files take it)."""
    import voxmem_analysis.io.longmemeval as longmemeval_io
    monkeypatch.setattr(attribution_io, "BULK_MIN_LINES", 0)
    monkeypatch.setattr(longmemeval_io, "BULK_MIN_LINES", 0)


def assert_same_audit(root: Path) -> None:
    a_rows, a_problems = read_audit_files(root, bulk=False)
    b_rows, b_problems = read_audit_files(root, bulk=True)
    assert b_problems == a_problems
    assert [list(r.items()) for r in b_rows] == [list(r.items()) for r in a_rows]
    assert [[type(v) for v in r.values()] for r in b_rows] == [[type(v) for v in r.values()] for r in a_rows]


def test_audit_records_of_the_synthetic_release_same_on_both_paths(always_bulk):
    assert_same_audit(DATA / "synthetic")
    rows, problems = read_audit_files(DATA / "synthetic")
    assert len(rows) == 2375 and not problems


def write_audit(root: Path, files: dict[str, list[str]], *, crlf=False) -> Path:
    for name, lines in files.items():
        path = root / "attribution" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "\n".join(lines) + "\n"
        path.write_bytes((text.replace("\n", "\r\n") if crlf else text).encode("utf-8", "surrogatepass"))
    return root


AUDIT_CASES = {
    "clean": [jline(audit_pairs(item=f"q{i}_64k")) for i in range(5)],
    "null session and answer": [jline(audit_pairs(source_session="null", answer="null", why="null"))],
    "bad enum": [jline(audit_pairs()), jline(audit_pairs(item="q2_64k", commits='"maybe"'))],
    "blank model": [jline(audit_pairs(model="  ")), jline(audit_pairs(item="q2_64k"))],
    "missing field": [jline([p for p in audit_pairs() if p[0] != "relation"]), jline(audit_pairs(item="q2_64k"))],
    "wrong types": [jline(audit_pairs(evidence_recovered="1")), jline(audit_pairs(source_session="1.5")),
                    jline(audit_pairs(source_session='"3"')), jline(audit_pairs(answer="7")),
                    jline(audit_pairs(source_session="true")), jline(audit_pairs(why="[]"))],
    "repeated key": [jline(audit_pairs() + [("commits", '"generic"')]), jline(audit_pairs(item="q2_64k"))],
    "escaped key": [jline(audit_pairs()).replace('"why"', '"wh\\u0079"', 1)],
    "extra key": [jline(audit_pairs() + [("note", '{"a": [1]}')]), jline(audit_pairs() + [("Note", "1")])],
    "malformed": [jline(audit_pairs()), "{", "[1, 2]", "", "   ", jline(audit_pairs(item="q3_64k"))],
    "odd text": [jline(audit_pairs(why='"\\ud800"')), jline(audit_pairs(answer='"\\u00e9\u2028"')),
                 "\ufeff" + jline(audit_pairs()), jline(audit_pairs(model='"M\\u0031"'))],
    "duplicates kept for later": [jline(audit_pairs()), jline(audit_pairs())],
}


@pytest.mark.parametrize("case", sorted(AUDIT_CASES))
def test_audit_bad_inputs_same_on_both_paths(tmp_path, always_bulk, case):
    root = write_audit(tmp_path / "r", {"a.jsonl": AUDIT_CASES[case], "sub/b.jsonl": AUDIT_CASES["clean"]})
    assert_same_audit(root)
    assert_same_audit(write_audit(tmp_path / "crlf", {"a.jsonl": AUDIT_CASES[case]}, crlf=True))


def test_audit_bad_inputs_are_found(tmp_path, always_bulk):
    def codes(case):
        return [(p.code, p.line, p.field) for p in read_audit_files(write_audit(tmp_path / case, {"a.jsonl": AUDIT_CASES[case]}))[1]]
    assert codes("clean") == [] and codes("null session and answer") == []
    assert codes("bad enum") == [("unknown_value", 2, "commits")]
    assert codes("missing field") == [("missing_field", 1, "relation")]
    assert [c[0] for c in codes("wrong types")] == ["invalid_value"] * 6
    assert codes("repeated key") == [("malformed_json", 1, "commits")]
    assert codes("escaped key") == [] and codes("extra key") == []   # read as Python reads them: not flagged


@st.composite
def audit_corruption(draw):
    """Eight records of two systems; up to five of them corrupted (one change each), CRLF or not."""
    base = [audit_pairs(model=m, item=f"q{i}_64k") for m in ("M1", "M2") for i in range(4)]
    lines = [jline(p) for p in base]
    for i in draw(st.sets(st.integers(0, len(base) - 1), min_size=1, max_size=5)):
        lines[i] = _mutate_line(draw, base[i], JSON_VALUES)
    return lines, draw(st.booleans())


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=audit_corruption())
def test_audit_random_corruption_same_on_both_paths(tmp_path_factory, always_bulk, case):
    lines, crlf = case
    root = write_audit(tmp_path_factory.mktemp("att"), {"a.jsonl": lines}, crlf=crlf)
    assert_same_audit(root)


# ----------------------------------------------------------------------------- LongMemEval verdicts
from polars.testing import assert_frame_equal as assert_pl_equal   # noqa: E402

from voxmem_analysis.io.longmemeval import load_longmemeval   # noqa: E402

LME_FIX = Path(__file__).parent / "fixtures" / "longmemeval"


def lme_outcome(manifest: Path, questions: Path, **kw):
    try:
        return "ok", load_longmemeval(manifest, questions, **kw)
    except VoxMemDataError as exc:
        return "raised", list(exc.problems)


def assert_same_lme(manifest: Path, questions: Path) -> None:
    for strict in (True, False):
        for convention in ("paper", "harness"):
            kw = dict(strict=strict, convention=convention)
            kind, a = lme_outcome(manifest, questions, bulk=False, **kw)
            kind2, b = lme_outcome(manifest, questions, bulk=True, **kw)
            assert kind == kind2, (kw, a, b)
            if kind != "ok":
                assert b == a
                continue
            assert b.problems == a.problems
            assert list(b.stats.items()) == list(a.stats.items())
            assert_pl_equal(b.frame, a.frame)
            assert_pl_equal(b.questions, a.questions)
            pd.testing.assert_frame_equal(b.manifest, a.manifest)
            assert b.dropped == a.dropped


def test_longmemeval_examples_and_fixtures_same_on_both_paths(always_bulk):
    ex = DATA / "examples" / "longmemeval"
    assert_same_lme(ex / "manifest.csv", ex / "questions.json")
    assert load_longmemeval(ex / "manifest.csv", ex / "questions.json", strict=False).frame.height == 418
    assert_same_lme(LME_FIX / "manifest.csv", LME_FIX / "questions.json")
    assert_same_lme(LME_FIX / "bad" / "manifest.csv", LME_FIX / "questions.json")


def lme_pairs(qid="u01", label="true", model='"gpt-4o"', hyp='"an answer"', **extra):
    pairs = [("question_id", f'"{qid}"'), ("hypothesis", hyp),
             ("autoeval_label", f'{{"model": {model}, "label": {label}}}')]
    return pairs + [(k, v) for k, v in extra.items()]


QIDS = ["u01", "u02", "u03", "u04_abs", "m01", "m02", "m03_abs", "t01", "t02", "t03"]
LME_VALUES = st.one_of(JSON_VALUES, st.sampled_from([
    '{"model": "gpt-4o", "label": true}', '{"model": "gpt-4o", "label": false}', '{"model": "gpt-4o", "label": "yes"}',
    '{"model": "gpt-4o", "label": null}', '{"label": true, "model": "gpt-4o"}', '{"model": "gpt-4o"}',
    '{"model": "gpt-4o", "label": true, "explanation": "x"}', '{"model": 4, "label": true}',
    '{"model": "g\\"p\\"t", "label": false}', '"u01"', '"m01"']))


def write_lme(root: Path, files: dict[str, list[str]]) -> tuple[Path, Path]:
    """A manifest listing ``files`` (two runs of one system, one of another), and the fixture questions."""
    (root / "verdicts").mkdir(parents=True, exist_ok=True)
    rows = ["path,system,budget,judge"]
    for i, (name, lines) in enumerate(files.items()):
        (root / "verdicts" / name).write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
        rows.append(f"verdicts/{name},{'S1' if i < 2 else 'S2'},32k,gpt-4o")
    (root / "manifest.csv").write_text("\n".join(rows) + "\n")
    return root / "manifest.csv", LME_FIX / "questions.json"


LME_CASES = {
    "extras of several types": [jline(lme_pairs(q, synthetic="true", note='"n"', tag="null")) for q in QIDS],
    "extra read as text and as boolean": [jline(lme_pairs("u01", flag='"x"')), jline(lme_pairs("u02", flag="true"))],
    "label variants": [jline(lme_pairs("u01", label='"yes"')), jline(lme_pairs("u02", label="1")),
                       jline(lme_pairs("u03", label="null")), jline(lme_pairs("m01", label="false"))],
    "unknown and blank ids": [jline(lme_pairs("zz")), jline(lme_pairs("  ")), jline(lme_pairs(" u01 "))],
    "flat label and correct": ['{"question_id": "u01", "autoeval_label": true}', '{"question_id": "u02", "correct": false}'],
    "frame-named extras": [jline(lme_pairs("u01", status='"x"')), jline(lme_pairs("u02", label_note='"x"')),
                           jline(lme_pairs("u03", question_type='"multi-session"'))],
    "hypothesis not text": [jline(lme_pairs("u01", hyp="[1]")), jline(lme_pairs("u02", hyp="null"))],
    "unpaired surrogate escapes": [jline(lme_pairs("u01", hyp='"\\ud800"')), jline(lme_pairs("u02", note='"a\\udfff"')),
                                   '{"question_id": "u03", "autoeval_label": {"model": "\\ud83d", "label": true}}'],
}


def test_longmemeval_unpaired_surrogate_is_a_problem_not_a_crash(tmp_path):
    """Valid JSON that is not UTF-8 text ("\\ud800") is reported by line and field on both paths."""
    manifest, questions = write_lme(tmp_path, {"a.jsonl": LME_CASES["unpaired surrogate escapes"]})
    for bulk in (False, True):
        with pytest.raises(VoxMemDataError) as info:
            load_longmemeval(manifest, questions, bulk=bulk)
        found = [(p.code, p.line, p.field) for p in info.value.problems if p.code == "invalid_unicode"]
        assert found == [("invalid_unicode", 1, "hypothesis"), ("invalid_unicode", 2, "note"),
                         ("invalid_unicode", 3, "autoeval_label.model")]
        lenient = load_longmemeval(manifest, questions, strict=False, bulk=bulk)
        assert not any(p.code == "invalid_unicode" and p.severity != "error" for p in lenient.problems)


@pytest.mark.parametrize("case", sorted(LME_CASES))
def test_longmemeval_bad_inputs_same_on_both_paths(tmp_path, always_bulk, case):
    clean = [jline(lme_pairs(q)) for q in QIDS]
    assert_same_lme(*write_lme(tmp_path, {"a.jsonl": LME_CASES[case], "b.jsonl": clean,
                                          "c.jsonl": clean[:3] + LME_CASES[case]}))


@st.composite
def lme_corruption(draw):
    """Three verdict files of ten questions (two of one system: cross-file repeats); up to six
    lines changed, repeated or moved between files."""
    files = {}
    for name in ("a.jsonl", "b.jsonl", "c.jsonl"):
        base = [lme_pairs(q, label=draw(st.sampled_from(["true", "false"])),
                          **({"synthetic": "true"} if draw(st.booleans()) else {})) for q in QIDS]
        lines = [jline(p) for p in base]
        for i in draw(st.sets(st.integers(0, len(base) - 1), max_size=3)):
            lines[i] = _mutate_line(draw, base[i], LME_VALUES)
        files[name] = lines
    for _ in range(draw(st.integers(0, 3))):
        src, dst = draw(st.sampled_from(sorted(files))), draw(st.sampled_from(sorted(files)))
        files[dst].insert(draw(st.integers(0, len(files[dst]))), draw(st.sampled_from(files[src])))
    return files


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(files=lme_corruption())
def test_longmemeval_random_corruption_same_on_both_paths(tmp_path_factory, always_bulk, files):
    assert_same_lme(*write_lme(tmp_path_factory.mktemp("lme"), files))


def write_amc_parquet(root: Path, edit: str = "clean") -> Path:
    """The AMC fixture with ``verdicts/a.csv`` written as Parquet (``passed`` boolean), after ``edit``:
    ``clean``, ``null model``, ``repeated row``, or ``passed`` as ``number``/``text``/``float``."""
    files = amc_files()
    rows = files.pop("verdicts/a.csv")
    frame = pd.DataFrame(rows[1:], columns=rows[0])
    frame["passed"] = frame["passed"] == "true"
    if edit == "null model":
        frame.loc[2, "model"] = None
    elif edit == "repeated row":
        frame = pd.concat([frame, frame.iloc[[3]]], ignore_index=True)
    elif edit == "number passed":
        frame["passed"] = frame["passed"].astype(int)
    elif edit == "text passed":
        frame["passed"] = frame["passed"].map({True: "TRUE", False: "false"})
    elif edit == "float passed":
        frame["passed"] = frame["passed"].astype(float)
    elif edit != "clean":
        raise ValueError(f"unknown edit {edit!r}")
    root = write_amc(root, files)
    frame.to_parquet(root / "verdicts" / "a.parquet")
    return root


@pytest.mark.parametrize("edit", ["clean", "null model", "repeated row", "number passed", "text passed"])
def test_amc_parquet_verdicts(tmp_path, edit):
    root = write_amc_parquet(tmp_path / "r", edit)
    assert_consistent_amc(root)
    assert len(load_amc(root, strict=False).verdicts) == (27 if edit == "null model" else 30)   # M/Text t2 left out


def test_unpaired_surrogates_in_amc_and_attribution_are_problems_not_crashes(tmp_path):
    """JSON lines may escape a lone surrogate ("\\ud800"): a problem with line and field, on every path."""
    from voxmem_analysis.io.amc_tables import read_table
    from voxmem_analysis.io.voxmem.attribution import read_audit_files

    f = tmp_path / "v.jsonl"
    f.write_text('{"model": "m", "task_id": "t"}\n{"model": "m\\ud800", "task_id": "t"}\n')
    rows, problems = read_table(f, "v.jsonl", ("model", "task_id"))
    assert rows["_line"].to_list() == [1]
    assert [(p.code, p.line, p.field) for p in problems] == [("invalid_unicode", 2, "model")]
    good = (DATA / "synthetic" / "attribution").glob("*.jsonl")
    line = next(iter(next(good).read_text().splitlines()))
    (tmp_path / "attribution").mkdir()
    bad = line.replace('"model": "', '"model": "\\ud800', 1)
    assert bad != line
    (tmp_path / "attribution" / "a.jsonl").write_text(line + "\n" + bad + "\n")
    for bulk in (False, True):
        recs, probs = read_audit_files(tmp_path, bulk=bulk)
        assert len(recs) == 1
        assert [(p.code, p.line, p.field) for p in probs if p.code == "invalid_unicode"] == [("invalid_unicode", 2, "model")]


def test_a_lone_surrogate_in_a_field_of_another_type_is_a_problem_not_a_crash(tmp_path):
    """A text with a lone surrogate where a boolean belongs (found by the random-corruption test): two
    problems naming line and field, the same on both paths; the records and the LongMemEval label too."""
    from voxmem_analysis.io.voxmem.attribution import check_records, read_audit_files
    from voxmem_analysis.io import load_longmemeval

    line = next(iter((DATA / "synthetic" / "attribution").glob("*.jsonl"))).read_text().splitlines()[0]
    bad = json.dumps({**json.loads(line), "evidence_recovered": "\ud800"})
    (tmp_path / "attribution").mkdir()
    (tmp_path / "attribution" / "a.jsonl").write_text(line + "\n" + bad + "\n")
    expected = [("invalid_unicode", 2, "evidence_recovered"), ("invalid_value", 2, "evidence_recovered")]
    for bulk in (False, True):
        recs, probs = read_audit_files(tmp_path, bulk=bulk)
        assert len(recs) == 1 and [(p.code, p.line, p.field) for p in probs] == expected
    _, probs = check_records([json.loads(bad)], "f")
    assert [p.message for p in probs][1] == "`evidence_recovered` must be true or false, got '\\ud800'"
    manifest, questions = write_lme(tmp_path / "lme", {"a.jsonl": [jline(lme_pairs("u01", label='"\\udfff"'))]})
    for bulk in (False, True):
        found = [(p.code, p.line, p.field) for p in load_longmemeval(manifest, questions, strict=False, bulk=bulk).problems]
        assert found == [("invalid_label", 1, "autoeval_label.label"), ("invalid_unicode", 1, "autoeval_label.label")]


def test_extra_field_with_an_integer_beyond_64_bits_is_kept_as_text():
    """A field outside the schema holding 99999999999999999999 (valid JSON) is kept exact, as text."""
    import polars as pl

    from voxmem_analysis.io.bulk import extra_series

    assert extra_series("x", [1, None, 2]).dtype == pl.Int64
    assert extra_series("x", [1, 2.5]).to_list() == [1.0, 2.5]
    assert extra_series("x", [True, None]).dtype == pl.Boolean
    big = extra_series("x", [1, 99999999999999999999, None])
    assert big.dtype == pl.Utf8 and big.to_list() == ["1", "99999999999999999999", None]
    assert extra_series("x", [1.5, 10 ** 400]).to_list() == ["1.5", str(10 ** 400)]
