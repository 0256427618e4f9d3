"""Transcript-only ablation (Table 2) on a hand-made fixture; every number by hand."""
from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from voxmem_analysis.analysis import ablation as A
from voxmem_analysis.errors import AnalysisInputError, VoxMemDataError
from voxmem_analysis.stats import paired_bootstrap

SS, SPK, PARA, ENV = "speech_semantics", "speaker_information", "paralinguistic_information", "environmental_sound"

# question: (evidence, full correct, transcript correct)
PAIRED = {
    "s1": (SPK, 1, 0), "s2": (SPK, 1, 0), "s3": (SPK, 1, 1), "s4": (SPK, 0, 0),
    "p1": (PARA, 1, 0), "p2": (PARA, 0, 1), "p3": (PARA, 1, 0),
    "e1": (ENV, 1, 0), "e2": (ENV, 0, 0),
    "t1": (SS, 1, 1), "t2": (SS, 1, 1), "t3": (SS, 1, 0),
}


def _row(q, ev, cond, correct, *, status="graded", budget="8K", is_ar=False, model="Gemini-3.7-Flash", allow=False):
    return {"model": model, "question_id": q, "item_id": f"{q}_{budget.lower()}", "budget": budget,
            "evidence_type": ev, "operation": "information_extraction", "is_ar": is_ar,
            "verdict": None if status != "graded" else bool(correct), "correct": bool(correct) and status == "graded",
            "status": status, "scored": status != "provider_rejected", "input_condition": cond,
            "allow_abstention": allow}


def _frame(**kw):
    rows = []
    for q, (ev, f, t) in PAIRED.items():
        st_f = "failed" if q == "e2" else "graded"
        rows.append(_row(q, ev, "full_audio", f, status=st_f, **kw))
        rows.append(_row(q, ev, "transcript_only", t, **kw))
    rows.append(_row("t4", SS, "full_audio", 1, **kw))                                   # rejected pair
    rows.append(_row("t4", SS, "transcript_only", 0, status="provider_rejected", **kw))
    rows.append(_row("s5", SPK, "full_audio", 1, **kw))                                  # unpaired
    rows.append(_row("r1", SPK, "full_audio", 1, is_ar=True, **kw))                      # AR: excluded
    rows.append(_row("r1", SPK, "transcript_only", 0, is_ar=True, **kw))
    rows.append(_row("s1", SPK, "full_audio", 0, budget="16K", **kw))                   # other budget
    return pl.DataFrame(rows)


# row: (n, full correct, transcript correct, full-only, transcript-only, exact McNemar p)
HAND = {
    "Speaker Identity": (4, 3, 1, 2, 0, 0.5),            # 2 * P(Bin(2,.5) <= 0) = 0.5
    "Paralinguistic Cues": (3, 2, 1, 2, 1, 1.0),         # 2 * (1+3)/8 = 1
    "Environmental Sound": (2, 1, 0, 1, 0, 1.0),
    "Speech Semantics": (3, 3, 2, 1, 0, 1.0),
    "All": (12, 9, 4, 6, 1, 0.125),                      # 2 * (1+7)/128
    "Audio-native": (9, 6, 2, 5, 1, 0.21875),            # 2 * (1+6)/64
}


@pytest.fixture(scope="module")
def res():
    return A.transcript_ablation(_frame(), n_boot=2000, seed=7)


def test_rows_in_order(res):
    assert res.table["row"].tolist() == list(A.ROW_LABELS) == list(HAND)


@pytest.mark.parametrize("label", list(HAND))
def test_numbers_by_hand(res, label):
    n, f, t, b, c, p = HAND[label]
    r = res.table.set_index("row").loc[label]
    assert r["n"] == n
    assert r["full_audio"] == pytest.approx(100 * f / n)
    assert r["transcript_only"] == pytest.approx(100 * t / n)
    assert r["delta_pp"] == pytest.approx(100 * (f - t) / n)
    assert (r["n_full_only"], r["n_transcript_only"]) == (b, c)
    assert r["p_value"] == pytest.approx(p)


@pytest.mark.parametrize("label", list(HAND))
def test_mcnemar_matches_statsmodels(res, label):
    n, f, t, b, c, _ = HAND[label]
    both = t - c
    table = [[n - f - c, c], [b, both]]   # rows full (0/1), columns transcript (0/1)
    r = res.table.set_index("row").loc[label]
    assert r["p_value"] == pytest.approx(mcnemar(table, exact=True).pvalue)


def test_bootstrap_interval(res):
    t = res.table.set_index("row")
    assert (t["ci_low"] <= t["delta_pp"]).all() and (t["delta_pp"] <= t["ci_high"]).all()
    assert (t["n_boot"] == 2000).all() and (t["seed"] == 7).all()
    # single-type row = the engine on that row's pairs with the same seed
    f = np.array([1, 1, 1, 0.]); tr = np.array([0, 0, 1, 0.])
    ref = paired_bootstrap(f, tr, "drop", n_boot=2000, seed=7).iloc[0]
    assert t.loc["Speaker Identity", "ci_low"] == pytest.approx(ref["ci_low"])
    assert t.loc["Speaker Identity", "ci_high"] == pytest.approx(ref["ci_high"])
    # Speech Semantics pairs all agree except t3 -> the drop is 0..100/3 (0, 1/3 ... of 3)
    assert 0 <= t.loc["Speech Semantics", "ci_low"] <= t.loc["Speech Semantics", "ci_high"] <= 100


def test_seeded_reproducible():
    a = A.transcript_ablation(_frame(), n_boot=500, seed=3).table
    b = A.transcript_ablation(_frame(), n_boot=500, seed=3).table
    pd.testing.assert_frame_equal(a, b)


def test_problems_and_unpaired(res):
    u = res.unpaired
    assert list(zip(u["question_id"], u["present_in"])) == [("s5", "full_audio")]
    codes = {p.code: p.count for p in res.problems}
    assert codes == {"other_budget": 1, "ar_in_ablation": 2, "unpaired": 1, "rejected_pair": 1}
    assert "abstention_prompt" not in codes


def test_abstention_warning():
    r = A.transcript_ablation(_frame(allow=True), n_boot=200)
    assert "abstention_prompt" in {p.code for p in r.problems}
    assert r.table["warnings"].str.contains("allow_abstention=true").all()


def test_wide_table2(res):
    w = res.wide()
    assert w.index.tolist() == list(A.ROW_LABELS)
    assert w.columns.tolist() == ["n", "Full Audio", "Transcript Only", "\u0394", "McNemar p",
                                  "\u0394 95% CI low", "\u0394 95% CI high"]
    assert w.loc["All", "\u0394"] == pytest.approx(500 / 12)


def test_model_selection():
    two = pl.concat([_frame(), _frame(model="Other")])
    with pytest.raises(AnalysisInputError, match="pass model="):
        A.transcript_ablation(two, n_boot=100)
    r = A.transcript_ablation(two, model="Other", n_boot=100)
    assert r.model == "Other" and r.table.loc[4, "n"] == 12
    with pytest.raises(AnalysisInputError, match="not in the ablation frame"):
        A.transcript_ablation(two, model="Nobody", n_boot=100)


def test_pandas_input_and_condition_spelling():
    df = _frame().to_pandas()
    df["input_condition"] = df["input_condition"].map({"full_audio": "Full-Audio", "transcript_only": "transcript only"})
    r = A.transcript_ablation(df, n_boot=100)
    assert r.table.loc[4, "n"] == 12


def test_duplicate_raises():
    f = _frame()
    with pytest.raises(VoxMemDataError, match="more than once"):
        A.transcript_ablation(pl.concat([f, f.head(1)]), n_boot=100)


def test_figure_draws_the_table(res):
    import matplotlib.pyplot as plt

    from voxmem_analysis.plots import ablation as PA

    fig = PA.ablation_figure(res.table)
    bars, drop = fig.axes
    heights = [p.get_height() for p in bars.patches]
    assert heights == pytest.approx(list(res.table["full_audio"]) + list(res.table["transcript_only"]))
    pts = drop.lines[0].get_xdata()
    assert list(pts) == pytest.approx(list(res.table["delta_pp"]))
    plt.close(fig)
