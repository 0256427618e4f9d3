"""Loading LongMemEval-format verdicts (evaluate_qa.py output + question file + manifest), and the CLI.

Fixtures: tests/fixtures/longmemeval/ (see tests/test_generic.py for the label table) and
tests/fixtures/longmemeval/bad/, whose verdict file has one problem per line:

    1 valid (u01 true)             5 no autoeval_label (u04_abs)    9 m01 again, label false
    2 truncated JSON               6 question zz99 not in questions 10 blank
    3 no question_id               7 u01 again, same label          11 [1, 2]
    4 label "yes" (not a boolean)  8 m01 true
"""
from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from voxmem_analysis.cli import main
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io.longmemeval import (FRAME_COLUMNS, budget_sort_key, load_longmemeval, read_manifest,
                                         read_questions, select_judge)

FIX = Path(__file__).parent / "fixtures" / "longmemeval"
BAD = FIX / "bad"
BADFILE = "verdicts/hyp_bad.jsonl.eval-results-gpt-4o"
C32 = "verdicts/hyp_C_32k.jsonl.eval-results-gpt-4o-2024-08-06"


def _where(problems):
    return {(p.code, p.severity, p.file, p.line, p.field) for p in problems}


# ============================================================================ good input
def test_load_fixture_frame():
    d = load_longmemeval(FIX / "manifest.csv", FIX / "questions.json")
    f = d.frame
    assert f.columns == list(FRAME_COLUMNS)
    assert f.height == 10 + 10 + 10 + 10 + 9 + 10 + 10
    assert d.stats == {"files": 7, "lines": 69, "rows": 69, "rejected_lines": 0, "duplicates_identical": 0,
                       "ungraded": 1}
    assert d.systems() == ["System-A", "System-B", "System-C"]
    assert d.budgets() == ["32k", "115k"]
    assert sorted(f["question_id"].filter(f["is_abstention"]).unique().to_list()) == ["m03_abs", "u04_abs"]
    r = f.filter((pl.col("system") == "System-C") & (pl.col("budget") == "32k") & (pl.col("question_id") == "t02")).row(0, named=True)
    assert r["label"] is None and r["correct"] is False and r["scored"] is True and r["status"] == "ungraded"
    assert (r["source_file"], r["source_line"], r["question_type"]) == (C32, 9, "temporal-reasoning")
    r = f.filter((pl.col("judge") == "llama-3.1-70b") & (pl.col("question_id") == "u02")).row(0, named=True)
    assert (r["system"], r["label"], r["judge_model"]) == ("System-A", False, "meta-llama-3.1-70b-instruct")
    assert r["hypothesis"] == "System A answer to u02 at 32k"
    assert _where(d.problems) == {
        ("missing_label", "warning", C32, 9, "autoeval_label.label"),
        ("incomplete_run", "warning", C32, None, "question_id"),
    }
    assert not d.synthetic
    pdf = d.pandas()
    assert isinstance(pdf, pd.DataFrame) and len(pdf) == 69 and pdf["label"].isna().sum() == 1


def test_harness_convention_leaves_ungraded_out():
    d = load_longmemeval(FIX / "manifest.csv", FIX / "questions.json", convention="harness")
    f = d.frame.filter(pl.col("status") == "ungraded")
    assert f.height == 1 and f["scored"].to_list() == [False]
    with pytest.raises(ValueError, match="convention"):
        load_longmemeval(FIX / "manifest.csv", FIX / "questions.json", convention="other")


def test_question_file_layouts(tmp_path):
    ref, _ = read_questions(FIX / "questions.json")
    assert ref.height == 10 and ref["source_line"].to_list()[:2] == [2, 31]   # line where each list element opens
    csv, p = read_questions(BAD / "questions.csv")
    assert not p and csv["question_id"].to_list() == ["u01", "u02", "u03", "u04_abs", "m01"]
    assert csv["is_abstention"].to_list() == [False, False, False, True, False]
    assert csv["source_line"].to_list() == [2, 3, 4, 5, 6]
    jl = tmp_path / "q.jsonl"
    jl.write_text('{"question_id": "a", "question_type": "multi-session", "answer": "x"}\n\n'
                  '{"question_id": "b_abs", "question_type": "knowledge-update"}\n')
    f, p = read_questions(jl)
    assert not p and f.rows() == [("a", "multi-session", False, 1), ("b_abs", "knowledge-update", True, 3)]
    mp = tmp_path / "types.json"
    mp.write_text(json.dumps({"a": "multi-session", "b": {"question_type": "emotion-recall"}}))
    f, p = read_questions(mp)
    assert not p and dict(zip(f["question_id"], f["question_type"])) == {"a": "multi-session", "b": "emotion-recall"}
    gz = tmp_path / "q.json.gz"
    gz.write_bytes(gzip.compress((FIX / "questions.json").read_bytes(), mtime=0))
    f, p = read_questions(gz)
    assert not p and f.equals(ref)


def test_extra_fields_are_kept(tmp_path):
    (tmp_path / "v").write_text(json.dumps({
        "question_id": "u01", "hypothesis": "sad", "autoeval_label": {"model": "j", "label": True, "raw": "yes"},
        "emotion": "sad", "prosody": {"rate": "slow"}, "system": "inner-name", "n_turns": 3}) + "\n")
    (tmp_path / "m.csv").write_text("path,system\nv,S\n")
    d = load_longmemeval(tmp_path / "m.csv", BAD / "questions.csv")
    r = d.frame.row(0, named=True)
    assert (r["system"], r["budget"], r["judge"], r["judge_model"]) == ("S", None, "j", "j")  # judge from the label
    assert (r["emotion"], r["prosody"], r["record_system"], r["n_turns"], r["autoeval_raw"]) == (
        "sad", '{"rate": "slow"}', "inner-name", 3, "yes")


# ============================================================================ bad input
def test_bad_verdicts_strict_lists_every_error():
    with pytest.raises(VoxMemDataError) as ei:
        load_longmemeval(BAD / "manifest.csv", BAD / "questions.csv")
    msg = str(ei.value)
    assert "7 error(s)" in msg
    for where in (f"{BADFILE}:2", f"{BADFILE}:3 [question_id]", f"{BADFILE}:6 [question_id]",
                  f"{BADFILE}:9 [autoeval_label.label]", f"{BADFILE}:11", "manifest.csv:3 [path]",
                  "manifest.csv:4 [path]"):
        assert where in msg


def test_bad_verdicts_lenient_reports_with_file_and_line():
    d = load_longmemeval(BAD / "manifest.csv", BAD / "questions.csv", strict=False)
    man = str(BAD / "manifest.csv")
    assert _where(d.problems) == {
        ("missing_file", "error", man, 3, "path"),
        ("manifest_missing_value", "error", man, 4, "path"),
        ("malformed_json", "error", BADFILE, 2, None),
        ("missing_field", "error", BADFILE, 3, "question_id"),
        ("label_as_text", "warning", BADFILE, 4, "autoeval_label.label"),   # "yes" read as true (issue 11)
        ("missing_label", "warning", BADFILE, 5, "autoeval_label"),
        ("unknown_question", "error", BADFILE, 6, "question_id"),
        ("duplicate_identical", "warning", BADFILE, 7, "question_id"),
        ("duplicate_conflict", "error", BADFILE, 9, "autoeval_label.label"),
        ("not_an_object", "error", BADFILE, 11, None),
        ("incomplete_run", "warning", BADFILE, None, "question_id"),   # u02 (line 2) never read
    }
    f = d.frame
    assert list(zip(f["question_id"], f["label"], f["status"], f["source_line"])) == [
        ("u01", True, "graded", 1), ("u03", True, "graded", 4), ("u04_abs", None, "ungraded", 5),
        ("m01", True, "graded", 8)]
    assert f["correct"].to_list() == [True, True, False, True]
    assert d.stats["rejected_lines"] == 5 and d.stats["lines"] == 10 and d.stats["duplicates_identical"] == 1
    assert "'yes'" in next(p.message for p in d.problems if p.code == "label_as_text")
    assert "zz99" in next(p.message for p in d.problems if p.code == "unknown_question")


def test_manifest_unknown_column_and_bad_question_file():
    d = load_longmemeval(BAD / "manifest_extra_column.csv", BAD / "questions_bad.json", strict=False)
    qf = str(BAD / "questions_bad.json")
    assert _where(d.problems) == {
        ("manifest_unknown_column", "error", str(BAD / "manifest_extra_column.csv"), 1, "notes"),
        ("missing_field", "error", qf, 3, "question_type"),
        ("duplicate_question_conflict", "error", qf, 4, "question_type"),
        ("duplicate_question", "warning", qf, 6, "question_id"),
    }
    assert d.frame.height == 0


def test_manifest_edge_cases(tmp_path):
    (tmp_path / "v").write_text('{"question_id": "u01", "autoeval_label": {"model": "j", "label": true}}\n')
    (tmp_path / "m.csv").write_text("system,budget\nS,8k\n")
    _, p = read_manifest(tmp_path / "m.csv")
    assert _where(p) == {("manifest_missing_column", "error", str(tmp_path / "m.csv"), 1, "path")}
    (tmp_path / "m.csv").write_text("path,system\nv,S\nv,T\nv\n")
    m, p = read_manifest(tmp_path / "m.csv")
    assert m["system"].tolist() == ["S"]
    assert _where(p) == {("manifest_duplicate_path", "error", str(tmp_path / "m.csv"), 3, "path"),
                         ("manifest_bad_row", "error", str(tmp_path / "m.csv"), 4, None)}
    with pytest.raises(VoxMemDataError, match="does not exist"):
        load_longmemeval(tmp_path / "nope.csv", BAD / "questions.csv")
    with pytest.raises(VoxMemDataError, match="question file"):
        load_longmemeval(FIX / "manifest.csv", tmp_path / "nope.json")


def test_select_judge():
    d = load_longmemeval(FIX / "manifest.csv", FIX / "questions.json")
    f, notes = select_judge(d.frame)
    assert f.height == 59 and notes == [
        "system 'System-A' at budget 32k has verdicts from 2 judges (gpt-4o, llama-3.1-70b); using 'gpt-4o'"]
    f2, _ = select_judge(d.frame, "llama-3.1-70b")
    a32 = f2.filter((pl.col("system") == "System-A") & (pl.col("budget") == "32k"))
    assert set(a32["judge"]) == {"llama-3.1-70b"} and f2.height == 59
    with pytest.raises(VoxMemDataError, match="judge 'nobody' not in the data"):
        select_judge(d.frame, "nobody")


def test_budget_order():
    assert sorted(["115k", "oracle", "1.5M", "8K", "32k", "128000"], key=budget_sort_key) == [
        "8K", "32k", "115k", "128000", "1.5M", "oracle"]


# ============================================================================ CLI
ARGS = ["--manifest", str(FIX / "manifest.csv"), "--questions", str(FIX / "questions.json")]


def _csv(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text), keep_default_na=True)


def test_cli_slice_manifest(capsys):
    assert main(["slice", *ARGS, "--n-boot", "200"]) == 0
    cap = capsys.readouterr()
    t = _csv(cap.out)
    assert list(t.columns[:4]) == ["system", "budget", "question_type", "level"]   # budget added: two budgets
    assert "slicing by system,budget,question_type" in cap.err and "using 'gpt-4o'" in cap.err
    assert f"{C32}:9" in cap.err   # the warning, with file and line
    r = t[(t["system"] == "System-C") & (t["budget"] == "32k") & (t["question_type"] == "overall")].iloc[0]
    assert (r["n_correct"], r["n"]) == (3, 9)
    assert main(["slice", *ARGS, "--by", "system,is_abstention", "--judge", "llama-3.1-70b"]) == 0
    cap = capsys.readouterr()
    t = _csv(cap.out)
    # System-A abstention items u04_abs, m03_abs: llama at 32k 1, 0; gpt-4o at 115k 1, 1 -> 3 of 4
    r = t[(t["system"] == "System-A") & (t["is_abstention"].astype(str) == "True")].iloc[0]
    assert (r["n_correct"], r["n"]) == (3, 4)
    assert "pool 2 budgets" in cap.err and "using 'llama-3.1-70b'" in cap.err
    assert main(["slice", *ARGS, "--format", "md", "--n-boot", "100"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "Accuracy (%) by system, budget, question_type" and lines[5].startswith("|:---")
    assert lines[2] == "options in force: --convention paper --interval auto --seed 0 --n-boot 100"
    assert "| System-A | 32k      | macro" in "\n".join(lines)
    assert main(["slice", *ARGS, "--by", "system,nope"]) == 2
    assert "unknown column(s) ['nope']" in capsys.readouterr().err
    assert main(["slice", "--data", "x", *ARGS]) == 2
    assert main(["slice", "--manifest", str(FIX / "manifest.csv")]) == 2


def test_cli_compare_scaling_judges(capsys):
    assert main(["compare", *ARGS, "--n-boot", "200"]) == 0          # Holm over the 6 rows printed
    t = _csv(capsys.readouterr().out)
    assert len(t) == 6 and t["p_holm"].round(5).tolist() == [1.0, 0.5, 0.65625, 0.3125, 1.0, 0.1875]
    assert main(["compare", *ARGS, "--n-boot", "200", "--p-adjust-family", "per-slice"]) == 0
    t = _csv(capsys.readouterr().out)
    assert t["p_holm"].round(5).tolist() == [1.0, 0.375, 0.4375, 0.125, 1.0, 0.09375]
    assert main(["scaling", *ARGS, "--baseline", "32k", "--n-boot", "200", "--part", "table"]) == 0
    t = _csv(capsys.readouterr().out)
    r = t[(t["system"] == "System-B") & (t["question_type"] == "multi-session") & (t["budget"] == "115k")].iloc[0]
    assert r["change"] == pytest.approx(100 / 3, abs=1e-4) and r["retention"] == pytest.approx(1.5)
    assert main(["scaling", *ARGS, "--baseline", "32k", "--n-boot", "200"]) == 0
    out = capsys.readouterr().out
    table, corr = out.split("\n\n")
    assert _csv(corr)["y"].tolist() == ["retention", "change"] and len(_csv(table)) == 24
    assert main(["scaling", *ARGS, "--baseline", "64k"]) == 2
    assert "'64k' is not a value of 'budget'" in capsys.readouterr().err
    assert main(["judges", *ARGS]) == 0
    t = _csv(capsys.readouterr().out)
    assert t["kappa"].round(6).tolist() == [0.5, 0.4, 0.0, round(0.16 / 0.46, 6)]


def test_cli_bad_input_exits_1(tmp_path, capsys):
    assert main(["compare", "--manifest", str(BAD / "manifest.csv"), "--questions", str(BAD / "questions.csv")]) == 1
    err = capsys.readouterr().err
    assert f"{BADFILE}:2" in err and "manifest.csv:3 [path]" in err
    # lenient: the bad lines are left out (reported) and one system remains: nothing to compare (issue 11)
    assert main(["compare", "--manifest", str(BAD / "manifest.csv"), "--questions", str(BAD / "questions.csv"),
                 "--lenient", "--n-boot", "100"]) == 2
    assert "compare needs at least two systems; found 1" in capsys.readouterr().err
    (tmp_path / "v").write_text((FIX / "verdicts" / "hyp_A_32k.jsonl.eval-results-gpt-4o-2024-08-06").read_text())
    (tmp_path / "m.csv").write_text("path,system,budget\nv,A,32k\n")
    one = ["--manifest", str(tmp_path / "m.csv"), "--questions", str(FIX / "questions.json")]
    assert main(["judges", *one]) == 1
    assert "no system and budget has verdicts from two judges" in capsys.readouterr().err
    assert main(["scaling", *one, "--baseline", "32k"]) == 1
    assert "at least two budgets" in capsys.readouterr().err
