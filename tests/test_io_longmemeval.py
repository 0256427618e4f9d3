"""LongMemEval verdicts (``io/longmemeval/``): the readings recorded before the rules became one table
(``tests/fixtures/reader_expected/lme.json``) on the shipped example, hand-made bad inputs and seeded
corruptions; label encodings, JSON list and results documents, question files in every layout, the
manifest's optional cells; budgets written several ways for one size read as one; issue 24's crash
classes are findings naming file, line and field."""
from __future__ import annotations

from pathlib import Path
from voxmem_analysis.cli import main
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io.longmemeval import load_longmemeval
from tests import reader_cases as C
import io
import json
import os
import os
import pandas as pd
import polars as pl
import pytest
import shutil


# ============================================================================ labels, layouts, type key, lenient notes (issue 11)
QIDS = ["a1", "a2", "a3", "a4"]


def _questions(tmp_path, key="question_type", name="questions.json"):
    path = tmp_path / name
    path.write_text(json.dumps([{"question_id": q, key: "multi-session" if i < 2 else "temporal-reasoning",
                                 "question": "?"} for i, q in enumerate(QIDS)]))
    return path


def _verdicts(tmp_path, name, labels, *, layout="jsonl", field="autoeval"):
    def rec(q, lab):
        if field == "autoeval":
            return {"question_id": q, "hypothesis": "h", "autoeval_label": {"model": "gpt-4o", "label": lab}}
        if field == "flat":
            return {"question_id": q, "hypothesis": "h", "autoeval_label": lab}
        return {"question_id": q, "hypothesis": "h", "correct": lab}
    recs = [rec(q, lab) for q, lab in zip(QIDS, labels)]
    path = tmp_path / name
    if layout == "jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))
    elif layout == "array":
        path.write_text("[\n" + ",\n".join(json.dumps(r) for r in recs) + "\n]\n")
    else:
        path.write_text('{"model": "x",\n "results": [\n' + ",\n".join(json.dumps(r) for r in recs) + "\n]}\n")
    return name


def _manifest(tmp_path, rows, header="path,system,budget,judge"):
    path = tmp_path / "manifest.csv"
    path.write_text(header + "\n" + "".join(",".join(r) + "\n" for r in rows))
    return path


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# ----------------------------------------------------------------------------- labels
@pytest.mark.parametrize("value, expected", [
    (True, (True, None)), (False, (False, None)), ("yes", (True, "text")), (" No ", (False, "text")),
    ("TRUE", (True, "text")), ("0", (False, "text")), (1, (True, "number")), (0, (False, "number")),
    (1.0, (True, "number")), (None, (None, "missing")), ("maybe", (None, "invalid")), (2, (None, "invalid")),
    ([True], (None, "invalid")),
])
def test_read_label(tmp_path, value, expected):
    man = _manifest(tmp_path, [(_verdicts(tmp_path, "v.jsonl", [value]), "S", "32k", "")])
    d = load_longmemeval(man, _questions(tmp_path), strict=False)
    how = {"label_as_text": "text", "label_as_number": "number", "missing_label": "missing", "invalid_label": "invalid"}
    found = next((h for c, h in how.items() if c in {p.code for p in d.problems}), None)
    assert ((d.frame["label"].to_list() or [None])[0], found) == expected


@pytest.mark.parametrize("field, labels", [
    ("autoeval", ["yes", "no", "YES", "no"]), ("autoeval", [1, 0, 1, 0]), ("flat", [True, False, True, False]),
    ("flat", ["yes", "no", "yes", "no"]), ("correct", [True, False, 1, "no"]),
])
def test_label_encodings_are_scored_not_zeroed(tmp_path, field, labels):
    man = _manifest(tmp_path, [(_verdicts(tmp_path, "v.jsonl", labels, field=field), "S", "32k", "")])
    d = load_longmemeval(man, _questions(tmp_path))
    assert d.frame["label"].to_list() == [True, False, True, False]
    assert d.frame["correct"].sum() == 2 and set(d.frame["status"]) == {"graded"}


def test_any_other_label_is_an_error_on_every_line(tmp_path):
    man = _manifest(tmp_path, [(_verdicts(tmp_path, "v.jsonl", ["maybe", True, 2, "?"]), "S", "32k", "")])
    with pytest.raises(VoxMemDataError) as ei:
        load_longmemeval(man, _questions(tmp_path))
    msg = str(ei.value)
    assert msg.startswith("3 error(s)")
    for line, val in ((1, "'maybe'"), (3, "2"), (4, "'?'")):
        assert (f"ERROR invalid_label: v.jsonl:{line} [autoeval_label.label]: `autoeval_label.label` must be true or "
                f"false (also read: \"yes\"/\"no\", \"true\"/\"false\", 1/0), got {val}") in msg
    d = load_longmemeval(man, _questions(tmp_path), strict=False)
    assert d.frame["question_id"].to_list() == ["a2"] and d.stats["rejected_lines"] == 3


# ----------------------------------------------------------------------------- file layouts
@pytest.mark.parametrize("layout", ["array", "results"])
def test_json_list_and_results_documents_are_read_with_line_numbers(tmp_path, layout):
    name = _verdicts(tmp_path, "v.json", [True, False, "yes", 0], layout=layout, field="correct")
    d = load_longmemeval(_manifest(tmp_path, [(name, "S", "32k", "j")]), _questions(tmp_path))
    assert d.frame["label"].to_list() == [True, False, True, False]
    first = 2 if layout == "array" else 3
    assert d.frame["source_line"].to_list() == [first, first + 1, first + 2, first + 3]
    assert "record_correct" not in d.frame.columns


def test_a_broken_json_list_says_where_and_how_much_was_read(tmp_path):
    (tmp_path / "v.json").write_text('[\n{"question_id": "a1", "correct": true},\n{"question_id": "a2", "correct": tru\n]')
    d = load_longmemeval(_manifest(tmp_path, [("v.json", "S", "32k", "j")]), _questions(tmp_path), strict=False)
    (p,) = d.errors()
    assert (p.code, p.file, p.line) == ("malformed_json", "v.json", 3)
    assert "1 entr(ies) of the JSON list were read before it, the rest of the file is lost" in p.message
    assert d.frame["question_id"].to_list() == ["a1"]


# ----------------------------------------------------------------------------- question type key
def test_question_files_with_a_type_key_and_the_type_key_option(tmp_path, capsys):
    man = _manifest(tmp_path, [(_verdicts(tmp_path, "v.jsonl", [True, False, True, True]), "S", "32k", "")])
    d = load_longmemeval(man, _questions(tmp_path, key="type"))
    assert d.frame["question_type"].to_list() == ["multi-session"] * 2 + ["temporal-reasoning"] * 2
    q = _questions(tmp_path, key="category", name="q2.json")
    with pytest.raises(VoxMemDataError, match=r"q2.json:\d+ \[question_type\]: `question_type` \(or `type`\) is missing"):
        load_longmemeval(man, q)
    code, out, err = _run(capsys, "slice", "--manifest", man, "--questions", q, "--type-key", "category",
                          "--by", "question_type")
    assert code == 0, err
    table = pd.read_csv(io.StringIO(out))
    assert set(table["question_type"].dropna()) >= {"multi-session", "temporal-reasoning"}


# ----------------------------------------------------------------------------- lenient never swaps a judge silently
def test_lenient_names_a_dropped_judge_file_and_the_judge_used_instead(tmp_path, capsys):
    j2 = _verdicts(tmp_path, "v_j2.jsonl", [True, True, True, False])
    man = _manifest(tmp_path, [("missing_j1.jsonl", "S", "32k", "judge-1"), (j2, "S", "32k", "judge-2"),
                               (_verdicts(tmp_path, "t.jsonl", [True, False, False, False]), "T", "32k", "judge-1")])
    code, _, err = _run(capsys, "slice", "--manifest", man, "--questions", _questions(tmp_path), "--by", "system")
    assert code == 1 and "missing_j1.jsonl" in err
    code, out, err = _run(capsys, "slice", "--manifest", man, "--questions", _questions(tmp_path), "--by", "system",
                          "--lenient")
    assert code == 0
    assert ("# the verdicts of system 'S' at budget 32k by judge 'judge-1' (manifest line 2) were left out: "
            "file does not exist; scored with judge 'judge-2' instead") in err
    assert "missing_file=1" in err
    pd.read_csv(io.StringIO(out))


def test_a_judge_asked_for_but_absent_at_a_budget_is_said(tmp_path, capsys):
    man = _manifest(tmp_path, [(_verdicts(tmp_path, "a.jsonl", [True] * 4), "S", "32k", "judge-1"),
                               (_verdicts(tmp_path, "b.jsonl", [False] * 4), "S", "115k", "judge-2")])
    code, _, err = _run(capsys, "slice", "--manifest", man, "--questions", _questions(tmp_path), "--by", "budget",
                        "--judge", "judge-1")
    assert code == 0
    assert "# system 'S' at budget 115k has no verdicts from judge 'judge-1'; using 'judge-2'" in err


# ----------------------------------------------------------------------------- optional manifest cells
@pytest.mark.parametrize("cmd", [["slice", "--by", "system"], ["slice", "--by", "question_type"],
                                 ["compare", "--n-boot", "50"]])
def test_empty_budget_and_judge_cells_work(tmp_path, capsys, cmd):
    man = _manifest(tmp_path, [(_verdicts(tmp_path, "a.jsonl", [True, False, True, True]), "S", "", ""),
                               (_verdicts(tmp_path, "b.jsonl", [False, False, True, True]), "T", "", "")])
    code, out, err = _run(capsys, *cmd[:1], "--manifest", man, "--questions", _questions(tmp_path), *cmd[1:])
    assert code == 0, err
    assert len(pd.read_csv(io.StringIO(out)))


# ----------------------------------------------------------------------------- totals and streams
def test_error_totals_count_every_finding_not_summary_lines(tmp_path, capsys):
    (tmp_path / "v.jsonl").write_text("".join('{"question_id": "zz%d", "autoeval_label": true}\n' % i for i in range(70)))
    man = _manifest(tmp_path, [("v.jsonl", "S", "32k", "j"), (_verdicts(tmp_path, "ok.jsonl", [True] * 4), "T", "32k", "j")])
    with pytest.raises(VoxMemDataError) as ei:
        load_longmemeval(man, _questions(tmp_path))
    assert str(ei.value).startswith("70 error(s)")
    code, out, err = _run(capsys, "slice", "--manifest", man, "--questions", _questions(tmp_path), "--by", "system",
                          "--lenient")
    assert code == 0
    assert f"# 70 error(s), 0 warning(s) in manifest {str(man)!r} (unknown_question=70); 70 line(s) left out" in err
    assert all(not line.startswith("#") for line in out.splitlines())
    assert "S" not in set(pd.read_csv(io.StringIO(out))["system"])

# ============================================================================ crash classes (issue 24)
LME = Path(__file__).resolve().parents[1] / "data" / "examples" / "longmemeval"


SYN = Path(__file__).resolve().parents[1] / "data" / "synthetic"


@pytest.fixture
def lme(tmp_path) -> Path:
    shutil.copytree(LME, tmp_path / "lme")
    return tmp_path / "lme"


def _manifest_lines() -> list[str]:
    return (LME / "manifest.csv").read_text(encoding="utf-8").splitlines()


def _slice(capsys, manifest: Path, questions: Path, *extra) -> tuple[int, str, str]:
    code = main(["slice", "--manifest", str(manifest), "--questions", str(questions), *extra])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("cells", [",,", ",32k,", ",,synthetic-judge-1"])
def test_empty_budget_or_judge_cell_is_not_given(lme, capsys, cells):
    """README: an empty budget or judge cell means "not given" (was: TypeError, Float64 NaN in Series 'budget')."""
    head, first = _manifest_lines()[:2]
    (lme / "m.csv").write_text(f"{head}\n{','.join(first.split(',')[:2])}{cells}\n", encoding="utf-8")
    code, out, err = _slice(capsys, lme / "m.csv", lme / "questions.json")
    assert code == 0, err
    assert "internal error" not in err
    rows = [ln.split(",") for ln in out.splitlines() if ln.startswith("synth-full-context")]
    assert rows and not any("nan" in r for r in rows)
    overall = [r for r in rows if "overall" in r][0]
    assert overall[overall.index("overall") + 3] == "60"           # the 60 questions of the example, all read


def test_self_looping_symlink_is_a_finding(lme, capsys):
    os.symlink("loop", lme / "loop")
    (lme / "m.csv").write_text("path,system\nloop,S\n" + _manifest_lines()[1] + "\n", encoding="utf-8")
    code, _, err = _slice(capsys, lme / "m.csv", lme / "questions.json")
    assert code == 1
    assert "ERROR missing_file: " in err and "m.csv:2 [path]: verdict file 'loop' cannot be resolved" in err
    assert "internal error" not in err


def test_deeply_nested_question_file_names_file_and_line(lme, capsys):
    (lme / "q.json").write_text('[\n{"question_id": "a", "question_type": "x"},\n' + "[" * 100_000 + "]" * 100_000 + "]",
                                encoding="utf-8")
    code, _, err = _slice(capsys, lme / "manifest.csv", lme / "q.json")
    assert code == 1
    assert "ERROR malformed_json: " in err and "q.json:3: not valid JSON (nested deeper than 500 levels)" in err


def test_deeply_nested_question_object_and_verdict_file(lme, capsys):
    (lme / "q.json").write_text('{"a":\n\n' + '{"b": "[[[[", "c": ' * 5000 + "1" + "}" * 5001, encoding="utf-8")
    code, _, err = _slice(capsys, lme / "manifest.csv", lme / "q.json")
    assert code == 1 and "q.json:3: not valid JSON (nested deeper than 500 levels)" in err
    verdict = lme / _manifest_lines()[1].split(",")[0]
    verdict.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    code, _, err = _slice(capsys, lme / "manifest.csv", lme / "questions.json")
    assert code == 1 and "malformed_json" in err and "internal error" not in err


@pytest.mark.parametrize("where", ["manifest", "questions"])
def test_csv_cell_over_the_csv_module_limit_is_read(lme, capsys, where):
    long = "x" * 140_000
    if where == "manifest":
        head, first = _manifest_lines()[:2]
        parts = first.split(",")
        (lme / "m.csv").write_text(f"{head}\n{parts[0]},{long},{parts[2]},{parts[3]}\n", encoding="utf-8")
        code, out, err = _slice(capsys, lme / "m.csv", lme / "questions.json")
        assert code == 0, err
        assert out.count(long) > 0
    else:
        qs = json.loads((lme / "questions.json").read_text(encoding="utf-8"))
        text = "question_id,question_type,question\n" + "".join(
            f"{q['question_id']},{q['question_type']},{long if i == 0 else 'q'}\n" for i, q in enumerate(qs))
        (lme / "q.csv").write_text(text, encoding="utf-8")
        code, out, err = _slice(capsys, lme / "manifest.csv", lme / "q.csv")
        assert code == 0, err
    import csv

    from voxmem_analysis.io.engine.manifest import manifest_rows

    # the reader reads the long cell whatever the process's limit is, and leaves that limit as it found it
    # (every CSV reader raises it only while it reads: textlimits.csv_field_limit)
    before = csv.field_size_limit(131072)
    try:
        if where == "manifest":
            rows, problems, _ = manifest_rows(lme / "m.csv", ("path", "system", "budget", "judge"))
            assert rows["system"].tolist() == [long] and not [p for p in problems if p.severity == "error"]
        assert csv.field_size_limit() == 131072
    finally:
        csv.field_size_limit(before)


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_in_verdicts(lme, capsys, value):
    """Numbers JSON does not allow (Python's json reads them): in an extra field (response length,
    score) they are kept as floats; as a label they are an invalid label naming file, line and field."""
    verdict = lme / _manifest_lines()[1].split(",")[0]
    lines = verdict.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0][:-1] + f', "response_length": {value}, "score": {value}}}'
    rec = json.loads(lines[1])
    lines[1] = lines[1].replace(f'"label": {json.dumps(rec["autoeval_label"]["label"])}', f'"label": {value}')
    verdict.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = _slice(capsys, lme / "manifest.csv", lme / "questions.json")
    assert code == 1
    assert f"{verdict.relative_to(lme)}:2 [autoeval_label.label]: `autoeval_label.label` must be true or false" in err
    assert "internal error" not in err
    code, out, err = _slice(capsys, lme / "manifest.csv", lme / "questions.json", "--lenient")
    assert code == 0, err


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_non_finite_numbers_in_questions_and_audit_records(lme, tmp_path, capsys, value):
    qs = (lme / "questions.json").read_text(encoding="utf-8")
    (lme / "q.json").write_text(qs.replace('"question_type": "single-session-user"', f'"question_type": {value}', 1),
                                encoding="utf-8")
    code, _, err = _slice(capsys, lme / "manifest.csv", lme / "q.json", "--lenient")
    assert code == 0, err and "internal error" not in err
    rel = tmp_path / "rel"
    shutil.copytree(SYN, rel)
    audit = rel / "attribution" / "audit_64k.jsonl"
    lines = audit.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace('"source_session": ', f'"source_session": {value}, "was": ', 1)
    audit.write_text("\n".join(lines) + "\n", encoding="utf-8")
    code = main(["validate", "--data", str(rel)])
    err = capsys.readouterr().err
    assert code == 1
    shown = {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf", "1e999": "inf"}[value]
    assert (f"ERROR invalid_value: attribution/audit_64k.jsonl:1 [source_session]: `source_session` must be a session "
            f"number or null, got {shown}") in err


# ============================================================================ recorded readings
EXPECTED = json.loads((Path(__file__).parent / "fixtures" / "reader_expected" / "lme.json").read_text(encoding="utf-8"))
#: Messages the reader now words otherwise, on purpose: a JSON list that stops being one says how many entries
#: were read before it; a field *name* that is not valid Unicode says so.
INTENDED = {
    ("questions_bad_json", "malformed_json", 2): "not valid JSON (Expecting value); 1 entr(ies) of the JSON list were "
                                                 "read before it, the rest of the file is lost",
    ("unicode", "invalid_unicode", 2): "field name `\\udc00k` is not valid Unicode (an unpaired surrogate escape)",
}


def _expected(name: str) -> dict:
    want = json.loads(json.dumps(EXPECTED[name]))
    for p in want["problems"]:
        if (name, p[0], p[3]) in INTENDED and (p[0] != "invalid_unicode" or p[4] == "\\udc00k"):
            p[5] = INTENDED[(name, p[0], p[3])]
    return want


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_longmemeval_reading_is_the_recorded_one(name, tmp_path):
    """Problems in any order (the reader lists them by file, line and rule; the recorded one grouped them
    by code), frames, counts and dropped rows as recorded."""
    got = json.loads(json.dumps(C.lme_reading(name, tmp_path), sort_keys=True, allow_nan=True))
    want = _expected(name)
    assert sorted(map(json.dumps, got.pop("problems"))) == sorted(map(json.dumps, want.pop("problems")))
    assert got == want


def test_every_case_recorded():
    """Every case but the crash of issue 24 (an empty budget cell, tested above) has a reading."""
    assert set(C.LME_CASES) - set(EXPECTED) == {"manifest_empty_budget_judge"}


# ============================================================================ one budget per size
def test_budgets_written_several_ways_for_one_size_are_one_budget(tmp_path):
    man = _manifest(tmp_path, [(_verdicts(tmp_path, "a.jsonl", [True] * 4), "S", "32K", "j"),
                               (_verdicts(tmp_path, "b.jsonl", [False] * 4), "T", "32000", "j"),
                               (_verdicts(tmp_path, "c.jsonl", [True, False, True, False]), "U", "32k", "j"),
                               (_verdicts(tmp_path, "d.jsonl", [True] * 4), "U", "oracle", "j"),
                               (_verdicts(tmp_path, "e.jsonl", [True] * 4), "U", "115k", "j")])
    d = load_longmemeval(man, _questions(tmp_path))
    assert d.budgets() == ["32k", "115k", "oracle"]
    assert d.frame.filter(pl.col("budget") == "32k")["system"].unique().sort().to_list() == ["S", "T", "U"]
    (p,) = [p for p in d.problems if p.code == "budget_spelling"]
    assert (p.severity, p.file, p.field) == ("warning", str(man), "budget")
    assert p.message == "budgets written several ways for one size are read as one budget: 32K, 32000, 32k as 32k"


@pytest.mark.parametrize("what, make", [("missing", lambda p: p), ("folder", lambda p: p.mkdir() or p),
                                        ("FIFO", lambda p: os.mkfifo(p) or p)])
def test_a_question_file_that_is_no_file_is_named_as_what_it_is(tmp_path, what, make):
    man = _manifest(tmp_path, [(_verdicts(tmp_path, "a.jsonl", [True] * 4), "S", "32k", "j")])
    d = load_longmemeval(man, make(tmp_path / "q.json"), strict=False)
    (p,) = [p for p in d.problems if p.code == "no_questions"]
    assert p.message == f"question file {str(tmp_path / 'q.json')!r} " + {
        "missing": "does not exist", "folder": "is a folder, not a file",
        "FIFO": "is a FIFO, a named pipe, not a regular file"}[what]


# ============================================================================ lone surrogates, the examples
def _write_lme(root: Path, lines: list[str]) -> tuple[Path, Path]:
    (root / "verdicts").mkdir(parents=True, exist_ok=True)
    (root / "verdicts" / "a.jsonl").write_bytes(("\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    (root / "manifest.csv").write_text("path,system,budget,judge\nverdicts/a.jsonl,S1,32k,gpt-4o\n")
    return root / "manifest.csv", FIX / "questions.json"


FIX = Path(__file__).parent / "fixtures" / "longmemeval"


def test_unpaired_surrogates_are_problems_naming_line_and_field(tmp_path):
    """Valid JSON that is not UTF-8 text ("\\ud800") in a hypothesis, an extra field, the judge model or the
    label: problems by line and field, never a crash."""
    manifest, questions = _write_lme(tmp_path, [
        '{"question_id": "u01", "hypothesis": "\\ud800", "autoeval_label": {"model": "g", "label": true}}',
        '{"question_id": "u02", "note": "a\\udfff", "autoeval_label": {"model": "g", "label": true}}',
        '{"question_id": "u03", "autoeval_label": {"model": "\\ud83d", "label": true}}',
        '{"question_id": "u01", "autoeval_label": {"model": "g", "label": "\\udfff"}}'])
    with pytest.raises(VoxMemDataError) as info:
        load_longmemeval(manifest, questions)
    found = [(p.code, p.line, p.field) for p in info.value.problems if p.code in ("invalid_unicode", "invalid_label")]
    assert found == [("invalid_unicode", 1, "hypothesis"), ("invalid_unicode", 2, "note"),
                     ("invalid_unicode", 3, "autoeval_label.model"), ("invalid_label", 4, "autoeval_label.label"),
                     ("invalid_unicode", 4, "autoeval_label.label")]


def test_the_shipped_example_reads_clean():
    ex = Path(__file__).resolve().parents[1] / "data" / "examples" / "longmemeval"
    d = load_longmemeval(ex / "manifest.csv", ex / "questions.json", strict=False)
    assert d.frame.height == 418 and not d.errors()
