"""The counts of ``validate`` and notebook 00 (``io/validation.py``), by hand on the tiny fixture and on the
synthetic release."""
from __future__ import annotations

from voxmem_analysis import load_release
from voxmem_analysis.io import validation as V

from conftest import SYNTHETIC


def test_status_counts_by_hand(tiny_release):
    c = V.status_counts(load_release(tiny_release))
    assert list(c.index) == ["Model-A|8K", "Model-A|64K", "Model-B|8K", "Model-B|64K"]
    assert c.loc["Model-A|64K"].to_dict() == {"graded": 1, "ungraded": 0, "failed": 1, "provider_rejected": 0, "total": 2}
    assert c.loc["Model-B|8K"].to_dict() == {"graded": 1, "ungraded": 0, "failed": 0, "provider_rejected": 1, "total": 2}
    assert c.loc["Model-B|64K", "ungraded"] == 1


def test_design_counts_on_the_synthetic_release():
    d = V.design_counts(load_release(SYNTHETIC))
    assert d["Total"].tolist() == [232, 147, 264, 156, 799]
    assert d.loc["Speech Semantics", "IE"] == 0
    assert d.loc["Total", ["IE", "MSR", "TET", "AR"]].tolist() == [230, 221, 218, 130]


def test_problem_summary(tmp_path):
    from conftest import harness_line, write_jsonl

    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [harness_line(), "{x", "{y"])
    s = V.problem_summary(load_release(root, strict=False).problems)
    assert s.loc["malformed_json"].tolist() == ["error", 2]
    assert V.problem_summary([]).empty
