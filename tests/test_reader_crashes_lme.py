"""Issue 24's crash classes in the LongMemEval and error-attribution readers: each is a finding naming
file, line and field (exit 1), or is read as documented (exit 0), never an internal error (exit 3)."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from voxmem_analysis.cli import main

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

    from voxmem_analysis.io.longmemeval_manifest import manifest_rows

    # the reader reads the long cell whatever the process's limit is, and leaves that limit as it found it
    # (every CSV reader raises it only while it reads: textlimits.csv_field_limit)
    before = csv.field_size_limit(131072)
    try:
        if where == "manifest":
            rows, problems, _ = manifest_rows(lme / "m.csv")
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
