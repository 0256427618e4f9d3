"""reproduction.csv: the join of published and reproduced numbers, comparators, missing numbers."""
from __future__ import annotations

import math

import pandas as pd
import pytest

from voxmem_analysis import artifacts
from voxmem_analysis.reproduce import scoreboard as rp


def _published(rows):
    return pd.DataFrame(rows, columns=["artifact", "row", "column", "value", "unit", "comparator", "tolerance",
                                       "kind", "source"])


PUB = _published([
    ("tA", "Model-A", "Overall", 21.0, "pct", "approx", 0.5, "calibrated", "Table A"),
    ("tA", "Model-A", "Speaker Identity", 30.0, "pct", "approx", 0.5, "calibrated", "Table A"),
    ("tA", "n", "Overall", 799.0, "count", "approx", 0.0, "calibrated", "Table A"),
    ("tA", "All", "Spearman rho", -0.02, "rho", "approx", 0.1, "emergent", "Table A"),
    ("tA", "drop", "p", 0.001, "p", "lt", 0.0, "emergent", "D.5"),
    ("tA", "Counting", "Bind.", 14.0, "pct", "le", 0.5, "calibrated", "App. E"),
    ("tA", "Cue-to-Fact", "Bind.", 14.0, "pct", "le", 0.5, "calibrated", "App. E"),
    ("tA", "Model-A", "AR", 50.0, "pct", "approx", 0.5, "derived", "Table A"),
    ("tB", "x", "y", 1.0, "pct", "approx", 0.5, "derived", "Table B"),
])

REP = pd.DataFrame([
    ("tA", "Model-A", "Overall", 21.5),          # |delta| = tolerance: within
    ("tA", "Model-A", "Speaker", 30.6),          # label normalised to "Speaker Identity"; 0.6 > 0.5: outside
    ("tA", "n", "Overall", 799.0),               # count, exact
    ("tA", "All", "Spearman rho", 0.07),         # 0.09 <= 0.1
    ("tA", "drop", "p", 0.0004),                 # lt: 0.0004 < 0.001
    ("tA", "Counting", "Bind.", 14.5),           # le: <= 14 + 0.5
    ("tA", "Cue-to-Fact", "Bind.", 14.6),        # le: outside
    ("tA", "Model-A", "Overall", 99.0),          # a duplicate cell: the first value is used
    ("tA", "Extra", "Overall", 5.0),             # not published: ignored
], columns=["artifact", "row", "column", "value"])


def test_compare_applies_each_comparator():
    out = rp.compare(PUB, REP)
    assert list(out.columns) == list(rp.COLUMNS)
    assert len(out) == len(PUB)                                    # one row per published number, same order
    assert out[["artifact", "row", "column"]].values.tolist() == PUB[["artifact", "row", "column"]].values.tolist()
    got = dict(zip(zip(out["row"], out["column"]), out["within_tolerance"]))
    assert got == {
        ("Model-A", "Overall"): True, ("Model-A", "Speaker Identity"): False, ("n", "Overall"): True,
        ("All", "Spearman rho"): True, ("drop", "p"): True, ("Counting", "Bind."): True,
        ("Cue-to-Fact", "Bind."): False, ("Model-A", "AR"): False, ("x", "y"): False,
    }
    first = out.iloc[0]
    assert first["reproduced"] == 21.5 and first["delta"] == pytest.approx(0.5)
    spk = out.iloc[1]
    assert spk["reproduced"] == 30.6 and spk["delta"] == pytest.approx(0.6)
    assert out.iloc[3]["delta"] == pytest.approx(0.09)
    # published numbers without a reproduced counterpart: kept, reproduced and delta empty, not within
    ar = out.iloc[7]
    assert math.isnan(ar["reproduced"]) and math.isnan(ar["delta"]) and not ar["within_tolerance"]
    assert ar["kind"] == "derived"


def test_lt_is_strict_and_count_tolerance_zero_is_exact():
    pub = _published([("t", "r", "p", 0.001, "p", "lt", 0.0, "emergent", ""),
                      ("t", "r", "n", 126.0, "count", "approx", 0.0, "calibrated", "")])
    rep = pd.DataFrame([("t", "r", "p", 0.001), ("t", "r", "n", 127.0)], columns=["artifact", "row", "column", "value"])
    assert rp.compare(pub, rep)["within_tolerance"].tolist() == [False, False]


def test_summarize_counts():
    out = rp.compare(PUB, REP)
    out.attrs["artifact_errors"] = {"tB": "boom"}
    s = rp.summarize(out)
    assert (s["numbers"], s["within"], s["outside"], s["missing"]) == (9, 5, 2, 2)
    assert s["missing_artifacts"] == {"tA": 1, "tB": 1}
    assert s["artifact_errors"] == {"tB": "boom"}
    assert s["by_kind"]["calibrated"] == {"numbers": 5, "within": 3}
    assert s["by_artifact"]["tB"] == {"numbers": 1, "within": 0, "missing": 1}


def test_reproduction_table_keeps_numbers_of_failing_or_unknown_artifacts(tiny_release, monkeypatch):
    from voxmem_analysis import load_release

    release = load_release(tiny_release)

    def good(release, *, seed=0, n_boot=10_000):
        return pd.DataFrame({"Overall": [21.2, seed]}, index=pd.Index(["Model-A", "seed"], name="Model"))

    def bad(release, *, seed=0, n_boot=10_000):
        raise RuntimeError("cannot compute")

    artifacts._load()
    monkeypatch.setitem(artifacts._REGISTRY, "test_good", artifacts.Artifact("test_good", "good", good))
    monkeypatch.setitem(artifacts._REGISTRY, "test_bad", artifacts.Artifact("test_bad", "bad", bad))
    monkeypatch.setitem(artifacts._REGISTRY, "test_needs", artifacts.Artifact("test_needs", "n", good, ("ablation",)))
    pub = _published([
        ("test_good", "Model-A", "Overall", 21.0, "pct", "approx", 0.5, "calibrated", ""),
        ("test_good", "seed", "Overall", 7.0, "count", "approx", 0.0, "calibrated", ""),
        ("test_bad", "Model-A", "Overall", 21.0, "pct", "approx", 0.5, "calibrated", ""),
        ("test_needs", "Model-A", "Overall", 21.0, "pct", "approx", 0.5, "calibrated", ""),
        ("test_unknown", "Model-A", "Overall", 21.0, "pct", "approx", 0.5, "calibrated", ""),
    ])
    out = rp.reproduction_table(release, pub, seed=7, n_boot=10)
    assert out["within_tolerance"].tolist() == [True, True, False, False, False]
    assert out["reproduced"].tolist()[:2] == [21.2, 7.0]                     # seed is passed through
    assert out["reproduced"].isna().tolist() == [False, False, True, True, True]
    errs = out.attrs["artifact_errors"]
    assert errs["test_bad"] == "RuntimeError: cannot compute"
    assert errs["test_needs"] == "the release has no ablation"
    assert "no such artifact" in errs["test_unknown"]


def test_write_csv_is_plain_and_stable(tmp_path):
    out = rp.compare(PUB, REP)
    p = rp.write_csv(out, tmp_path / "r.csv")
    text = p.read_text()
    assert text.splitlines()[0] == "artifact,row,column,published,reproduced,delta,kind,within_tolerance,status,note"
    assert "tA,Model-A,Overall,21,21.5,0.5,calibrated,True,within,\n" in text
    assert "tA,Model-A,AR,50,,,derived,False,missing,\n" in text
    assert "\r" not in text
