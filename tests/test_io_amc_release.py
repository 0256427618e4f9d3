"""An Audio MultiChallenge release (``io/amc/``): the readings recorded from the reader of commit fbde6f2
(``tests/fixtures/amc_expected``) on hand-made bad inputs, seeded corruptions of every table (CSV and JSON
lines, values of every JSON type) and Parquet verdicts; strict reading raises exactly the lenient
reading's errors; any corruption is read consistently (hypothesis)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.amc_cases import (AMC_CASES, CASES, EXPECTED, amc_files, assert_consistent_amc, read_case, snapshot, write_amc,
                             write_amc_parquet)
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_amc
from voxmem_analysis.io.amc.tables import read_rows

DATA = Path(__file__).resolve().parents[1] / "data"


#: Recorded cases the reader now reads otherwise, on purpose (each checked by a test of its own below).
CHANGED = {"hand_extra_cell_csv": "a CSV row with more cells than its header is an error of that row; the rows "
                                  "after it are read (the old reader stopped reading the file there, unsaid)"}


@pytest.mark.parametrize("name", sorted(set(CASES) - set(CHANGED)))
def test_reading_is_the_recorded_one(tmp_path, name):
    expected_file = EXPECTED / f"{name}.json"
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    root, rel = read_case(name, tmp_path)
    got = json.loads(json.dumps(snapshot(rel), sort_keys=True))
    assert got["problems"] == expected["problems"]
    assert got["stats"] == expected["stats"]
    assert got["parts"] == expected["parts"]
    if name.startswith("hand_"):   # the hand-made bad inputs, CSV and JSON lines: strict reading consistent
        assert_consistent_amc(root, rel)


def test_recorded_cases_are_not_trivial():
    """The recorded readings hold rows, rejected rows and findings of many kinds."""
    codes, rows = set(), 0
    for name in CASES:
        expected = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
        codes |= {p["code"] for p in expected["problems"]}
        rows += len(expected["parts"]["verdicts"]["rows"])
    assert rows > 1000 and len(codes) >= 15, (rows, sorted(codes))


def test_strict_reading_raises_the_same_problems(tmp_path):
    root = CASES["hand_passed_not_boolean_csv"](tmp_path)
    lenient = load_amc(root, strict=False)
    with pytest.raises(VoxMemDataError) as exc:
        load_amc(root)
    assert exc.value.problems == lenient.problems and lenient.errors()


def test_a_csv_row_too_long_loses_only_itself(tmp_path):
    """The old reader stopped at the row ("M,x" in a cell of verdicts/a.csv, line 3) and lost the 19 rows
    after it; now that row alone is left out, and its task for that system (incomplete), both named."""
    old = json.loads((EXPECTED / "hand_extra_cell_csv.json").read_text(encoding="utf-8"))
    root = CASES["hand_extra_cell_csv"](tmp_path)
    rel = load_amc(root, strict=False)
    assert_consistent_amc(root, rel)
    assert [(p.code, p.file, p.line) for p in rel.problems] == [
        ("malformed_csv", "verdicts/a.csv", 3), ("missing_rubric_verdicts", "verdicts/a.csv", 2)]
    assert "row has more cells than the header" in rel.problems[0].message
    assert len(old["parts"]["verdicts"]["rows"]) == 10 and len(rel.verdicts) == 28   # of 30: M/Text t1 left out
    assert rel.stats["rejected_rows"] == 1 and rel.stats["incomplete_task_rows"] == 1


def test_amc_synthetic_release_is_clean():
    rel = load_amc(DATA / "synthetic-amc")
    assert len(rel.verdicts) == 34240 and not rel.problems     # the shipped release is clean


def test_amc_tiny_release_is_clean_in_csv_and_json_lines(tmp_path):
    root = write_amc(tmp_path / "r", amc_files())
    rel = load_amc(root)
    assert not rel.problems and len(rel.verdicts) == 30 and len(rel.tts) == 16 and len(rel.judges) == 7
    root = write_amc(tmp_path / "j", amc_files(), jsonl=("verdicts/a.csv", "judge_labels.csv", "response_lengths.csv"))
    other = load_amc(root)
    assert other.verdicts.equals(rel.verdicts) and other.judges.equals(rel.judges) and other.lengths.equals(rel.lengths)


def test_amc_bad_inputs_are_found():
    """The hand-made bad inputs really are findings (read as recorded: the test above)."""
    codes = {case: {p["code"] for p in json.loads((EXPECTED / f"hand_{case.replace(' ', '_')}_csv.json").read_text(
        encoding="utf-8"))["problems"]} for case in AMC_CASES}
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


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=amc_corruption())
def test_amc_random_corruption_read_consistently(tmp_path_factory, case):
    files, jsonl, raw = case
    root = write_amc(tmp_path_factory.mktemp("amc"), files, jsonl=jsonl, raw={n: t for n, t in raw.items() if n not in jsonl})
    assert_consistent_amc(root)


@pytest.mark.parametrize("edit", ["clean", "null model", "repeated row", "number passed", "text passed"])
def test_amc_parquet_verdicts(tmp_path, edit):
    root = write_amc_parquet(tmp_path / "r", edit)
    assert_consistent_amc(root)
    assert len(load_amc(root, strict=False).verdicts) == (27 if edit == "null model" else 30)   # M/Text t2 left out




def test_a_lone_surrogate_is_a_problem_of_its_line(tmp_path):
    f = tmp_path / "v.jsonl"
    f.write_text('{"model": "m", "task_id": "t"}\n{"model": "m\\ud800", "task_id": "t"}\n')
    from voxmem_analysis.io.amc.tables import TASK_RULES
    ok, keyed, rejected = read_rows([(f, "v.jsonl")], ("model", "task_id"), TASK_RULES[:4], "lengths")
    assert ok["_line"].to_list() == [1] and rejected == 1
    assert [(p.code, p.line, p.field) for _, p in keyed] == [("invalid_unicode", 2, "model")]
