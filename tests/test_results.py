"""Accuracies of voxmem_analysis.analysis.results against hand-computed values on tests/fixtures/results_tiny.

The fixture (see tests/fixtures/make_results_tiny.py) has three models x six questions x four
budgets.  Grid (q_00001..q_00006; 1 correct, 0 wrong, R provider-rejected, F failed,
U ungraded, - missing line):

    Model-A (proprietary, 64K set)   8K 111010  16K 110011  32K 10R011  64K 1000U1
    Model-B (open-weight, 64K set)   8K 101100  16K 001101  32K 1F0101  64K 001-01
    Model-C (open-weight, not 64K)   8K 110011  16K 100011  32K 000110  64K RRRRRR

q1 Speech Semantics MSR, q2 Speaker IE, q3 Paralinguistic TET, q4 Environmental IE,
q5 Speech Semantics AR (source MSR), q6 Paralinguistic AR (source TET).
Pairing "all_budgets": A loses q3 (rejected at 32K), B loses q4 (missing at 64K); C is run at
8K/16K/32K only (its 64K lines are all rejected and it is not in the 64K set).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from voxmem_analysis import ScoringRules, artifacts, load_release
from voxmem_analysis.analysis import results as R

FIX = Path(__file__).parent / "fixtures" / "results_tiny"


@pytest.fixture(scope="module")
def rel():
    return load_release(FIX)


def _acc(df, **keys):
    sub = df
    for k, v in keys.items():
        sub = sub[sub[k] == v]
    assert len(sub) == 1, (keys, sub)
    return float(sub["accuracy"].iloc[0])


def test_fixture_statuses(rel):
    st = rel.pandas().set_index(["model", "item_id"])["status"]
    assert st[("Model-A", "q_00003_32k")] == "provider_rejected"
    assert st[("Model-B", "q_00002_32k")] == "failed"
    assert st[("Model-A", "q_00005_64k")] == "ungraded"
    assert ("Model-B", "q_00004_64k") not in st.index


def test_run_budgets(rel):
    rb = R.run_budgets(rel)
    assert rb == {"Model-A": ("8K", "16K", "32K", "64K"), "Model-B": ("8K", "16K", "32K", "64K"),
                  "Model-C": ("8K", "16K", "32K")}
    assert R.models_at_budget(rel, "64K") == ["Model-A", "Model-B"]


def test_pooled_accuracy_all_budgets(rel):
    acc = R.accuracy(rel, [])
    expected = {("Model-A", "8K"): (5, 3), ("Model-A", "16K"): (5, 4), ("Model-A", "32K"): (5, 3),
                ("Model-A", "64K"): (5, 2),  # the ungraded q5 counts as wrong
                ("Model-B", "8K"): (5, 2), ("Model-B", "16K"): (5, 2),
                ("Model-B", "32K"): (5, 2),  # the failed q2 counts as wrong
                ("Model-B", "64K"): (5, 2),
                ("Model-C", "8K"): (6, 4), ("Model-C", "16K"): (6, 3), ("Model-C", "32K"): (6, 2)}
    got = {(r.model, r.budget): (r.n, r.n_correct) for r in acc.itertuples()}
    assert got == expected
    assert _acc(acc, model="Model-C", budget="8K") == pytest.approx(400 / 6)


def test_pooled_accuracy_no_pairing(rel):
    acc = R.accuracy(rel, [], pairing="none")
    assert _acc(acc, model="Model-A", budget="8K") == pytest.approx(400 / 6)
    assert _acc(acc, model="Model-A", budget="32K") == pytest.approx(60.0)   # 5 scored: rejection leaves
    assert _acc(acc, model="Model-B", budget="32K") == pytest.approx(50.0)   # failed stays, wrong
    assert _acc(acc, model="Model-B", budget="64K") == pytest.approx(40.0)   # 5 lines
    assert set(acc.loc[acc["model"] == "Model-C", "budget"]) == {"8K", "16K", "32K"}


def test_harness_convention_drops_ungraded():
    rel_h = load_release(FIX, rules=ScoringRules(convention="harness"))
    acc = R.accuracy(rel_h, [], pairing="none")
    assert _acc(acc, model="Model-A", budget="64K") == pytest.approx(200 / 5 * 1)  # q1, q6 of 5 graded
    acc = R.accuracy(rel_h, [])  # A now also loses q5 (not judged at 64K): q1, q2, q4, q6
    assert _acc(acc, model="Model-A", budget="8K") == pytest.approx(50.0)


def test_shared_pairing(rel):
    pred = R.scored_predictions(rel, models=["Model-A", "Model-B"], pairing="shared")
    assert sorted(pred["question_id"].unique()) == ["q_00001", "q_00002", "q_00005", "q_00006"]
    assert len(pred) == 2 * 4 * 4


def test_bad_arguments(rel):
    with pytest.raises(ValueError, match="pairing"):
        R.accuracy(rel, [], pairing="both")
    with pytest.raises(ValueError, match="budget"):
        R.accuracy(rel, [], budgets=["128K"])
    with pytest.raises(ValueError, match="not in the release"):
        R.accuracy(rel, [], models=["Nope"])


def test_table15_hand_computed(rel):
    t = artifacts.compute("table15", rel)
    assert list(t.columns) == ["Speech Semantics", "Speaker Identity", "Paralinguistic Cues", "Environmental Sound",
                               "Overall"]
    assert list(t.index) == ["Model-A", "Model-B", "Mean proprietary (1)", "Mean open-weight (1)", "Mean all (2)", "n"]
    np.testing.assert_allclose(t.loc["Model-A"].to_numpy(float), [50, 0, 100, 0, 40])
    np.testing.assert_allclose(t.loc["Model-B"].to_numpy(float), [0, 0, 100, np.nan, 40])
    np.testing.assert_allclose(t.loc["Mean all (2)"].to_numpy(float), [25, 0, 100, 0, 40])
    np.testing.assert_allclose(t.loc["n"].to_numpy(float), [2, 1, 2, 1, 6])


def test_fig4_and_groups(rel):
    f = artifacts.compute("fig4", rel)
    assert f.loc["8K|Model-C", "Overall"] == pytest.approx(400 / 6)
    assert f.loc["8K|Mean open-weight (2)", "Overall"] == pytest.approx((40 + 400 / 6) / 2)
    assert "64K|Model-C" not in f.index
    g = artifacts.compute("groups", rel)
    assert g.loc["8K|Proprietary", "Overall"] == pytest.approx(60.0)
    assert g.loc["8K|Open-weight", "Overall"] == pytest.approx((40 + 400 / 6) / 2)
    assert g.loc["8K|Open-weight", "Models"] == 2
    assert g.loc["64K|Open-weight", "Models"] == 1
    assert g.loc["8K|Top-3 spread", "Overall"] == pytest.approx(400 / 6 - 40)
    assert g.loc["32K|Open-weight", "Environmental Sound"] == pytest.approx(100.0)  # only C has q4 there


def test_table16_hand_computed(rel):
    t = R.answerable_vs_refusal(rel, budget="8K")
    assert list(t["model"]) == ["Model-A", "Model-B", "Model-C"]  # 66.7, 66.7 (tie: model order), 50
    np.testing.assert_allclose(t["answerable"], [200 / 3, 200 / 3, 50])
    np.testing.assert_allclose(t["ar"], [50, 0, 100])
    assert list(t["n_answerable"]) == [3, 3, 4] and list(t["n_ar"]) == [2, 2, 2]
    s = R.answerable_refusal_summary(rel, budget="8K", table=t)
    ref = spearmanr(t["answerable"], t["ar"])
    assert s["rho"].iloc[0] == pytest.approx(ref.statistic)
    assert s["p_value"].iloc[0] == pytest.approx(ref.pvalue)
    assert s["always_abstain"].iloc[0] == pytest.approx(100 * 2 / 6)
    w = artifacts.compute("table16", rel, budget="8K")
    assert w.loc["n", "Answerable"] == 4 and w.loc["n", "AR"] == 2
    assert w.loc["Always abstain", "Overall"] == pytest.approx(100 / 3)


def test_table17_hand_computed(rel):
    t = artifacts.compute("table17", rel)
    assert list(t.index) == ["8K", "16K", "32K", "64K", "AR items"]
    assert list(t["Models"].iloc[:4]) == [3, 3, 3, 2]
    assert t.loc["8K", "Speech Semantics"] == pytest.approx(200 / 3)     # q5: A 1, B 0, C 1
    assert t.loc["8K", "Paralinguistic Cues"] == pytest.approx(100 / 3)  # q6: A 0, B 0, C 1
    assert t.loc["8K", "MSR"] == pytest.approx(200 / 3)
    assert t.loc["8K", "TET"] == pytest.approx(100 / 3)
    assert np.isnan(t.loc["8K", "IE"])
    assert t.loc["64K", "Speech Semantics"] == pytest.approx(0.0)        # A ungraded, B wrong
    assert t.loc["AR items"].drop("Models").tolist() == [1, 0, 1, 0, 0, 1, 1]


def test_fig5_hand_computed(rel):
    oe = R.operation_evidence(rel, budgets=["32K"])
    assert len(oe) == 6  # cells with items in the fixture
    assert _acc(oe, operation="information_extraction", evidence_type="speaker_information") == 0.0
    assert _acc(oe, operation="information_extraction", evidence_type="environmental_sound") == 50.0  # A 0, C 1
    assert _acc(oe, operation="multi_session_reasoning", evidence_type="speech_semantics") == pytest.approx(200 / 3)
    assert _acc(oe, operation="temporal_evolution_tracking", evidence_type="paralinguistic_information") == 0.0
    w = artifacts.compute("fig5", rel)
    assert w.loc["IE", "Environmental Sound n"] == 1
    assert np.isnan(w.loc["IE", "Speech Semantics"])
    assert list(w.index) == ["IE", "MSR", "TET", "AR"]


def test_fig8_shared_set(rel):
    w = artifacts.compute("fig8", rel)
    assert w.loc["8K|MSR", "Speech Semantics"] == 100.0
    assert w.loc["8K|IE", "Speaker Identity"] == 50.0
    assert w.loc["64K|AR", "Speech Semantics"] == 0.0
    assert w.loc["64K|AR", "Paralinguistic Cues"] == 100.0
    assert "8K|TET" not in w.index  # q3 is not in the shared set
    assert w.loc["16K|AR", "Paralinguistic Cues n"] == 1


def test_long_format_labels(rel):
    long = artifacts.to_long(artifacts.compute("table15", rel), "table15")
    assert list(long.columns) == ["artifact", "row", "column", "value"]
    assert ("Mean all (2)", "Overall") in set(zip(long["row"], long["column"]))
