"""Issue 11, LongMemEval inputs: label encodings, JSON list and ``{"results": [...]}`` files, the
``type`` key, dropped files under --lenient, optional manifest cells, true error totals, notes
on standard error only."""
from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from voxmem_analysis.cli import main
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io.longmemeval import load_longmemeval, read_label

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
def test_read_label(value, expected):
    assert read_label(value) == expected


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
