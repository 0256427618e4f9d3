"""Context scaling on partial releases (shapes of tests/test_results_partial.py), hand-computed.

Per model and evidence type (pairing "all_budgets"; A loses q3, rejected at 32K; B loses q4,
missing at 64K, whenever 64K is among its budgets):

    user (A, B at 8K/32K)     8K: A SS 100 Sp 100 Pa 0 Env 0 (60)    B SS 50 Sp 0 Pa 50 Env 100 (50)
                              32K: A SS 100 Sp 0 Pa 100 Env 0 (60)   B SS 50 Sp 0 Pa 50 Env 100 (50)
    single (A, all budgets)   overall 60, 80, 60, 40
    no_8k (A, B at 16-64K)    16K: A 80, B 40; 64K: A 40, B 40
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from test_results_partial import SHAPES, partial_release
from voxmem_analysis import VoxMemDataError, load_release
from voxmem_analysis.analysis import scaling as S
from voxmem_analysis.analysis.results import MissingDataError


@pytest.fixture(scope="module")
def rels(tmp_path_factory):
    base = tmp_path_factory.mktemp("partial_scaling")
    return {s: load_release(partial_release(base / s, s)) for s in SHAPES}


@pytest.mark.parametrize("shape, kw, expected", [
    ("user", {}, ("8K", "32K", ("Model-A", "Model-B"), ("8K", "32K"))),
    ("single", {}, ("8K", "64K", ("Model-A",), ("8K", "16K", "32K", "64K"))),
    ("no_registry", {}, ("8K", "64K", ("Model-A",), ("8K", "16K", "32K", "64K"))),   # complete 64K runs only
    ("no_8k", {}, ("16K", "64K", ("Model-A", "Model-B"), ("16K", "32K", "64K"))),
    ("mixed", {}, ("8K", "64K", ("Model-A",), ("8K", "16K", "32K", "64K"))),
    ("mixed", {"comparison": "32K"}, ("8K", "32K", ("Model-A", "Model-B"), ("8K", "32K"))),
    ("mixed", {"baseline": "16K"}, ("16K", "64K", ("Model-A",), ("8K", "16K", "32K", "64K"))),
])
def test_scaling_plan(rels, shape, kw, expected):
    p = S.scaling_plan(rels[shape], **kw)
    assert (p.baseline, p.comparison, p.models, p.budgets) == expected


def test_scaling_plan_refuses_what_cannot_be_computed(rels):
    with pytest.raises(MissingDataError, match=r"scaling needs two budgets, but the release was run at one budget only \(8K\)"):
        S.scaling_plan(rels["one_budget"])
    with pytest.raises(MissingDataError, match="no model was run at 64K"):
        S.scaling_plan(rels["user"], comparison="64K")
    with pytest.raises(MissingDataError, match="no model was run at both 16K and 32K"):
        S.scaling_plan(rels["user"], baseline="16K", comparison="32K")
    with pytest.raises(ValueError, match="must differ"):
        S.scaling_plan(rels["user"], baseline="32K", comparison="32K")


def test_describe_scaling(rels):
    t = S.describe_scaling(rels["user"])
    assert "Scaling 8K\u219232K (baseline 8K, comparison 32K: no model was run at 64K" in t
    assert "Models (2, run at both): Model-A, Model-B" in t
    assert "baseline is the shortest, 16K" in S.describe_scaling(rels["no_8k"])
    assert S.describe_scaling(rels["one_budget"]).startswith("Context scaling cannot be computed: scaling needs two budgets")
    assert S.scaling_plan(rels["user"]).title() == "8K\u219232K: 2 models run at 8K, 32K"


def test_evidence_scaling_user(rels):
    rel = rels["user"]
    with pytest.raises(VoxMemDataError, match="no model was run at 64K"):  # was: TypeError rtruediv str/float64
        S.evidence_scaling(rel, comparison="64K")
    pd.testing.assert_frame_equal(S.evidence_scaling(rel), S.evidence_scaling(rel, reference="8K", comparison="32K"))
    es = S.evidence_scaling(rel, reference=None, comparison=None).set_index(["budget", "evidence_type"])
    assert es["retention"].dtype == float
    assert set(es["reference_budget"]) == {"8K"}
    assert es.loc[("8K", "overall"), "accuracy"] == pytest.approx(55.0)
    assert es.loc[("32K", "overall"), "accuracy"] == pytest.approx(55.0)
    assert es.loc[("32K", "speaker_information"), "retention"] == pytest.approx(0.0)        # 50 -> 0
    assert es.loc[("32K", "paralinguistic_information"), "retention"] == pytest.approx(3.0)  # 25 -> 75
    f = S.fig6(rel, baseline=None, comparison=None)
    assert list(f.columns) == ["8K", "32K", "8K accuracy", "32K accuracy"]
    assert f.loc["Overall", "32K"] == pytest.approx(100.0)
    assert f.loc["Paralinguistic Cues", "32K accuracy"] == pytest.approx(75.0)


def test_evidence_scaling_zero_reference_is_nan(rels):
    # A alone: at 8K Paralinguistic (q6) and Environmental (q4) are 0%, so their retention is undefined
    es = S.evidence_scaling(rels["single"], budgets=["8K", "64K"]).set_index(["budget", "evidence_type"])
    assert es["retention"].dtype == float
    assert es.loc[("64K", "overall"), "retention"] == pytest.approx(40 / 60)
    assert es.loc[("64K", "speech_semantics"), "retention"] == pytest.approx(0.5)  # q1 q5: 100 -> 50
    assert np.isnan(es.loc[("64K", "paralinguistic_information"), "retention"])
    assert np.isnan(es.loc[("8K", "environmental_sound"), "retention"])


def test_paired_change_user(rels):
    pc = S.paired_change(rels["user"], baseline=None, comparison=None, n_boot=300, seed=2).set_index("key")
    assert set(pc["baseline_budget"]) == {"8K"} and set(pc["comparison_budget"]) == {"32K"}
    assert pc.loc["overall", "change"] == pytest.approx(0.0)
    assert pc.loc["overall", "retention"] == pytest.approx(1.0)
    assert pc.loc["speaker_information", "change"] == pytest.approx(-50.0)
    assert pc.loc["paralinguistic_information", "change"] == pytest.approx(50.0)
    assert pc.loc["paralinguistic_information", "retention"] == pytest.approx(3.0)
    assert pc.loc["Model-A", "n"] == 5 and pc.loc["Model-B", "n"] == 6
    t = S.table18(rels["user"], baseline=None, comparison=None, n_boot=100)
    assert list(t.columns[:3]) == ["n", "8K", "32K"]
    assert t.loc["Model-B", "8K"] == pytest.approx(50.0)


def test_paired_change_single_model_and_no_8k(rels):
    pc = S.paired_change(rels["single"], n_boot=200).set_index("key")
    assert list(pc.index[-1:]) == ["Model-A"]
    assert pc.loc["overall", "baseline"] == pytest.approx(60.0)
    assert pc.loc["overall", "comparison"] == pytest.approx(40.0)
    assert pc.loc["Model-A", "retention"] == pytest.approx(2 / 3)
    f = S.fig6(rels["single"])
    np.testing.assert_allclose(f.loc["Overall", ["8K", "16K", "32K", "64K"]], [100, 400 / 3, 100, 200 / 3])
    pc = S.paired_change(rels["no_8k"], baseline=None, n_boot=200).set_index("key")
    assert pc.loc["overall", "baseline"] == pytest.approx(60.0)    # (80 + 40) / 2 at 16K
    assert pc.loc["overall", "comparison"] == pytest.approx(40.0)
    assert pc.loc["overall", "change"] == pytest.approx(-20.0)
    with pytest.raises(VoxMemDataError, match="no model was run at both 8K and 64K"):
        S.paired_change(rels["no_8k"], baseline="8K")
    pd.testing.assert_frame_equal(S.paired_change(rels["no_8k"], n_boot=200), S.paired_change(rels["no_8k"], baseline="16K", n_boot=200))
    f = S.fig6(rels["no_8k"], baseline=None)
    assert list(f.columns) == ["16K", "32K", "64K", "16K accuracy", "32K accuracy", "64K accuracy"]


def test_cells_and_d5_user(rels):
    rel = rels["user"]
    cells = S.cell_changes(rel, baseline=None, comparison=None)
    assert len(cells) == 8
    assert set(cells["baseline_budget"]) == {"8K"} and set(cells["comparison_budget"]) == {"32K"}
    c = cells.set_index(["model", "evidence_type"])
    assert c.loc[("Model-A", "speaker_information"), "change"] == pytest.approx(-100.0)
    assert c.loc[("Model-A", "paralinguistic_information"), "comparison"] == pytest.approx(100.0)
    assert np.isnan(c.loc[("Model-A", "paralinguistic_information"), "retention"])  # 0% baseline
    d = S.d5(rel, baseline=None, comparison=None)
    assert d.loc["cells", "n"] == 8 and d.loc["retention", "n"] == 5
    ok = cells["retention"].notna()
    ref = st.spearmanr(cells.loc[ok, "baseline"], cells.loc[ok, "retention"])
    assert d.loc["retention", "rho"] == pytest.approx(ref.statistic)
    assert d.loc["change", "rho"] == pytest.approx(st.spearmanr(cells["baseline"], cells["change"]).statistic)
    with pytest.raises(VoxMemDataError, match="no model was run at 64K"):
        S.d5(rel, comparison="64K")  # was: KeyError '8K'
    pd.testing.assert_frame_equal(S.d5(rel), d)          # the default: the budgets the release has


def test_scaling_figures_name_the_budgets(rels):
    import matplotlib.pyplot as plt

    from voxmem_analysis.plots import scaling as P

    rel = rels["no_8k"]
    plan = S.scaling_plan(rel)
    fig = P.evidence_scaling_lines(S.evidence_scaling(rel, reference=None), title=plan.title())
    assert fig.axes[1].get_title() == "Retention relative to 16K"
    assert fig.legends[0].get_title().get_text() == "16K\u219264K: 2 models run at 16K, 32K, 64K"
    cells = S.cell_changes(rel, baseline=None)
    fig2 = P.sensitivity_scatter(cells, correlations=S.sensitivity_correlations(rel, cells=cells))
    assert fig2.axes[0].get_xlabel() == "16K accuracy (%)"
    assert fig2.axes[1].get_ylabel() == "Change 16K\u219264K (pp, 64K \u2212 16K)"
    fig3 = P.change_forest(S.paired_change(rel, baseline=None, n_boot=50))
    assert fig3.axes[0].get_xlabel() == "Drop 16K\u219264K (pp), 95% CI"
    for f in (fig, fig2, fig3):
        plt.close(f)
