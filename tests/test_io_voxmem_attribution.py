"""Error-attribution audit records (``io/voxmem/attribution.py``): the readings recorded before the rules
became one table (``tests/fixtures/reader_expected/attribution.json``) on the synthetic release's records,
hand-made bad inputs and seeded corruptions; each rule named by line and field."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import reader_cases as C
from voxmem_analysis.io.voxmem.attribution import check_records, read_audit_files

DATA = Path(__file__).resolve().parents[1] / "data"
_ATTR = json.loads((Path(__file__).parent / "fixtures" / "reader_expected" / "attribution.json").read_text(encoding="utf-8"))
#: Messages the reader now words otherwise, on purpose: a field *name* that is not valid Unicode says so.
INTENDED = {("bad_lines", "invalid_unicode", 7): "field name `\\ud800` is not valid Unicode (an unpaired surrogate escape)"}


def _expected(name: str) -> dict:
    want = json.loads(json.dumps(_ATTR[name]))
    for p in want["problems"]:
        p[5] = INTENDED.get((name, p[0], p[3]), p[5])
    return want


@pytest.mark.parametrize("name", sorted(k for k in _ATTR if not k.startswith("_")))
def test_attribution_reading_is_the_recorded_one(name, tmp_path):
    got = json.loads(json.dumps(C.attr_reading(name, tmp_path), sort_keys=True, allow_nan=True))
    assert got == _expected(name)


def test_check_records_reading_is_the_recorded_one():
    assert json.loads(json.dumps(C.records_reading(), sort_keys=True)) == _ATTR["_check_records"]


def test_every_case_recorded_and_not_trivial():
    assert set(C.ATTR_CASES) <= set(_ATTR)
    codes = {p[0] for k, v in _ATTR.items() for p in v["problems"]}
    assert len(codes) >= 8 and sum(v.get("n_rows", 0) for v in _ATTR.values()) > 10000


def test_the_synthetic_release_audit_records_are_clean():
    rows, problems = read_audit_files(DATA / "synthetic")
    assert len(rows) == 2375 and not problems


def jline(pairs) -> str:
    return "{" + ", ".join(f'"{k}": {v}' for k, v in pairs) + "}"


def audit_pairs(model="M1", item="q1_64k", **over):
    base = {"model": f'"{model}"', "item_id": f'"{item}"', "commits": '"specific"', "answer": '"room 214"',
            "evidence_recovered": "false", "source": '"other_session"', "source_session": "12",
            "relation": '"same_value_other_session"', "why": '"The line is from \\"Session 12\\"."'}
    base.update(over)
    return list(base.items())


CASES = {
    "clean": [jline(audit_pairs(item=f"q{i}_64k")) for i in range(5)],
    "null session and answer": [jline(audit_pairs(source_session="null", answer="null", why="null"))],
    "bad enum": [jline(audit_pairs()), jline(audit_pairs(item="q2_64k", commits='"maybe"'))],
    "missing field": [jline([p for p in audit_pairs() if p[0] != "relation"]), jline(audit_pairs(item="q2_64k"))],
    "wrong types": [jline(audit_pairs(evidence_recovered="1")), jline(audit_pairs(source_session="1.5")),
                    jline(audit_pairs(source_session='"3"')), jline(audit_pairs(answer="7")),
                    jline(audit_pairs(source_session="true")), jline(audit_pairs(why="[]"))],
    "repeated key": [jline(audit_pairs() + [("commits", '"generic"')]), jline(audit_pairs(item="q2_64k"))],
    "escaped key": [jline(audit_pairs()).replace('"why"', '"wh\\u0079"', 1)],
    "extra key": [jline(audit_pairs() + [("note", '{"a": [1]}')]), jline(audit_pairs() + [("Note", "1")])],
}


def _codes(tmp_path: Path, case: str) -> list[tuple]:
    (tmp_path / case / "attribution").mkdir(parents=True)
    (tmp_path / case / "attribution" / "a.jsonl").write_text("\n".join(CASES[case]) + "\n", encoding="utf-8")
    return [(p.code, p.line, p.field) for p in read_audit_files(tmp_path / case)[1]]


def test_bad_records_are_found_by_line_and_field(tmp_path):
    assert _codes(tmp_path, "clean") == [] and _codes(tmp_path, "null session and answer") == []
    assert _codes(tmp_path, "bad enum") == [("unknown_value", 2, "commits")]
    assert _codes(tmp_path, "missing field") == [("missing_field", 1, "relation")]
    assert [c[0] for c in _codes(tmp_path, "wrong types")] == ["invalid_value"] * 6
    assert _codes(tmp_path, "repeated key") == [("malformed_json", 1, "commits")]
    assert _codes(tmp_path, "escaped key") == [] and _codes(tmp_path, "extra key") == []   # as Python reads them


def test_lone_surrogates_are_problems_not_crashes(tmp_path):
    """A lone surrogate escape in a text field, or where a boolean belongs: problems naming line and field."""
    line = next(iter((DATA / "synthetic" / "attribution").glob("*.jsonl"))).read_text().splitlines()[0]
    (tmp_path / "attribution").mkdir()
    bad = json.dumps({**json.loads(line), "evidence_recovered": "\ud800"})
    (tmp_path / "attribution" / "a.jsonl").write_text(line + "\n" + line.replace('"model": "', '"model": "\\ud800', 1)
                                                      + "\n" + bad + "\n")
    rows, probs = read_audit_files(tmp_path)
    assert len(rows) == 1 and [(p.code, p.line, p.field) for p in probs] == [
        ("invalid_unicode", 2, "model"), ("invalid_unicode", 3, "evidence_recovered"),
        ("invalid_value", 3, "evidence_recovered")]
    _, probs = check_records([json.loads(bad)], "f")
    assert probs[1].message == "`evidence_recovered` must be true or false, got '\\ud800'"
