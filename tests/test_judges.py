"""Judge cross-validation (Table 13, Appendix C.5) on a hand-made fixture.

Every expected number below is computed by hand from the fixture (fractions in comments).
"""
from __future__ import annotations

import math

import pandas as pd
import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from voxmem_analysis.analysis import judges as J
from voxmem_analysis.errors import VoxMemDataError

SS, SPK, PARA, ENV = "speech_semantics", "speaker_information", "paralinguistic_information", "environmental_sound"
IE, MSR, TET, AR = "information_extraction", "multi_session_reasoning", "temporal_evolution_tracking", "answer_refusal"

#: question -> (evidence, operation, is_ar)
ITEMS = {
    "q1": (SS, MSR, False), "q2": (SPK, IE, False), "q3": (PARA, TET, False),
    "q4": (ENV, IE, False), "q5": (SPK, AR, True), "q6": (SS, AR, True),
}
# (model, question): (production correct, second correct, status, response)
CAP1 = "I'm sorry, but I cannot hear audio."
CAP2 = "I do not have access to previous conversations."
PAIRS = {
    ("G1", "q1"): (1, 1, "graded", "blue"), ("G1", "q2"): (1, 0, "graded", "Tom"),
    ("G1", "q3"): (0, 0, "graded", "calm"), ("G1", "q4"): (1, 1, "graded", "rain"),
    ("G1", "q5"): (0, 1, "graded", CAP1), ("G1", "q6"): (1, 1, "graded", "insufficient evidence"),
    ("A", "q1"): (1, 1, "graded", "blue"), ("A", "q2"): (0, 1, "graded", "Tom?"),
    ("A", "q3"): (0, 0, "failed", None), ("A", "q4"): (0, 0, "graded", "dog"),
    ("A", "q5"): (0, 1, "graded", "I don't know."), ("A", "q6"): (0, 0, "graded", "Paris"),
    ("B", "q1"): (0, 0, "graded", "red"), ("B", "q2"): (1, 1, "graded", "Tom"),
    ("B", "q3"): (1, 0, "graded", "excited"), ("B", "q4"): (0, 0, "provider_rejected", None),
    ("B", "q5"): (1, 1, "graded", "insufficient evidence"), ("B", "q6"): (0, 1, "graded", CAP2),
}
MODELS = pd.DataFrame({"model": ["G1", "A", "B"], "family": ["Gemini", "X", "Y"], "order": [1, 2, 3]})


def _row(model, q, budget, correct, status, response, judge):
    ev, op, ar = ITEMS.get(q, (SPK, IE, False))
    return {"model": model, "item_id": f"{q}_{budget.lower()}", "question_id": q, "budget": budget,
            "evidence_type": ev, "operation": op, "is_ar": ar, "source_operation": None if ar else op,
            "verdict": None if status in ("failed", "provider_rejected") else bool(correct),
            "correct": bool(correct), "status": status, "scored": status != "provider_rejected",
            "response": response, "judge": judge}


def _frames():
    prod, sec = [], []
    for (m, q), (c1, c2, st, resp) in PAIRS.items():
        prod.append(_row(m, q, "8K", c1, st, resp, "gemini-3.7-flash"))
        sec.append(_row(m, q, "8K", c2, st, resp, "gpt-5.6-luna"))
    # another budget, judged differently: must be ignored at 8K
    prod.append(_row("G1", "q1", "16K", 1, "graded", "blue", "gemini-3.7-flash"))
    sec.append(_row("G1", "q1", "16K", 0, "graded", "blue", "gpt-5.6-luna"))
    # unmatched: production only / second only
    prod.append(_row("B", "q7", "8K", 1, "graded", "x", "gemini-3.7-flash"))
    sec.append(_row("A", "q8", "8K", 1, "graded", "y", "gpt-5.6-luna"))
    return pl.DataFrame(prod), pl.DataFrame(sec)


@pytest.fixture(scope="module")
def cmp():
    p, s = _frames()
    return J.compare_judge_frames(p, s, models=MODELS)


def _kappa(n, c1, c2, agree):
    po, p1, p2 = agree / n, c1 / n, c2 / n
    pe = p1 * p2 + (1 - p1) * (1 - p2)
    return (po - pe) / (1 - pe) if pe < 1 else math.nan


# slice: (n, production correct, second correct, agreeing pairs)
HAND = {
    "All items": (17, 8, 10, 11),
    "Speech Semantics": (6, 3, 4, 5),
    "Speaker Identity": (6, 3, 5, 2),
    "Paralinguistic Cues": (3, 1, 0, 2),
    "Environmental Sound": (2, 1, 1, 2),
    "IE (answerable)": (5, 3, 3, 3),
    "MSR (answerable)": (3, 2, 2, 3),
    "TET (answerable)": (3, 1, 0, 2),
    "AR": (6, 2, 5, 3),
}


def test_slices_in_paper_order(cmp):
    assert cmp.table["slice"].tolist() == list(J.SLICE_LABELS) == list(HAND)


@pytest.mark.parametrize("label", list(HAND))
def test_slice_numbers_by_hand(cmp, label):
    n, c1, c2, agree = HAND[label]
    row = cmp.table.set_index("slice").loc[label]
    assert row["n"] == n
    assert row["judge1"] == pytest.approx(100 * c1 / n)
    assert row["judge2"] == pytest.approx(100 * c2 / n)
    assert row["delta_pp"] == pytest.approx(100 * (c2 - c1) / n)
    assert row["agreement"] == pytest.approx(100 * agree / n)
    k = _kappa(n, c1, c2, agree)
    if math.isnan(k):
        assert math.isnan(row["kappa"])
    else:
        assert row["kappa"] == pytest.approx(k)


def test_all_items_kappa_exact_fraction(cmp):
    # po = 187/289, pe = (8*10 + 9*7)/289 = 143/289 -> kappa = 44/146
    assert cmp.table.loc[0, "kappa"] == pytest.approx(44 / 146)
    # paradigm case: Paralinguistic, second judge credits nothing -> kappa 0
    assert cmp.table.set_index("slice").loc["Paralinguistic Cues", "kappa"] == pytest.approx(0.0)


def test_kappa_matches_sklearn(cmp):
    p, s = _frames()
    m = J.match_judges(p, s)
    sc = m.scored
    y1 = sc["correct_1"].to_numpy().astype(int)
    y2 = sc["correct_2"].to_numpy().astype(int)
    assert cmp.table.loc[0, "kappa"] == pytest.approx(cohen_kappa_score(y1, y2))
    for label, mask in J._slice_masks(sc):
        if len(set(y1[mask]) | set(y2[mask])) > 1:
            got = cmp.table.set_index("slice").loc[label, "kappa"]
            assert got == pytest.approx(cohen_kappa_score(y1[mask], y2[mask])), label


def test_rejected_out_failed_in(cmp):
    p, s = _frames()
    m = J.match_judges(p, s)
    assert m.pairs.height == 18               # 6 questions x 3 models, budget 8K
    assert m.scored.height == 17              # B/q4 provider-rejected
    failed = m.scored.filter((pl.col("model") == "A") & (pl.col("question_id") == "q3"))
    assert failed.height == 1 and not failed["correct_1"][0] and not failed["correct_2"][0]


def test_unmatched_reported_not_dropped_silently(cmp):
    u = cmp.unmatched
    assert sorted(zip(u["model"], u["item_id"], u["present_in"])) == [
        ("A", "q8_8k", "second"), ("B", "q7_8k", "production")]
    codes = {p.code: p.count for p in cmp.problems}
    assert codes == {"unmatched_production": 1, "unmatched_second": 1}
    assert cmp.statistic("n_unmatched_production") == 1
    assert cmp.statistic("n_unmatched_second") == 1


def test_per_model(cmp):
    pm = cmp.per_model.set_index("model")
    assert pm.index.tolist() == ["G1", "A", "B"]          # registry order
    assert pm.loc["G1", ["n", "judge1", "judge2"]].tolist() == pytest.approx([6, 400 / 6, 400 / 6])
    assert pm.loc["A", ["n", "judge1", "judge2"]].tolist() == pytest.approx([6, 100 / 6, 300 / 6])
    assert pm.loc["B", ["n", "judge1", "judge2"]].tolist() == pytest.approx([5, 60, 60])
    assert pm.loc["A", "delta_pp"] == pytest.approx(200 / 6)


def test_summary_c5(cmp):
    assert cmp.statistic("n_scored") == 17
    assert cmp.statistic("agreement") == pytest.approx(100 * 11 / 17)
    assert cmp.statistic("kappa") == pytest.approx(44 / 146)
    assert cmp.statistic("spearman_rho") == pytest.approx(1.0)   # same order: G1 > B > A
    assert cmp.statistic("mean_abs_model_diff_pp") == pytest.approx((0 + 200 / 6 + 0) / 3)


def test_family_favoritism_by_hand(cmp):
    # Gemini (G1): 4/6 vs 4/6 -> 0 pp; others (A, B): 4/11 vs 6/11 -> -200/11 pp
    assert cmp.statistic("family_diff_pp") == pytest.approx(0.0)
    assert cmp.statistic("others_diff_pp") == pytest.approx(-200 / 11)
    assert cmp.statistic("favoritism_pp") == pytest.approx(200 / 11)
    n = cmp.summary.set_index("statistic")["n"]
    assert n["family_diff_pp"] == 6 and n["others_diff_pp"] == 11


def test_favoritism_other_family_parameter():
    p, s = _frames()
    c = J.compare_judge_frames(p, s, models=MODELS, production_family="X")   # family X = model A
    # A: 1/6 vs 3/6 -> -200/6; others G1+B: 7/11 vs 7/11 -> 0
    assert c.statistic("family_diff_pp") == pytest.approx(-200 / 6)
    assert c.statistic("others_diff_pp") == pytest.approx(0.0)
    assert c.statistic("favoritism_pp") == pytest.approx(-200 / 6)


def test_disagreement_crosstab(cmp):
    d = cmp.disagreements.set_index(["stratum", "direction"])
    assert d.loc[("answerable", "production_only"), "n"] == 2    # G1/q2, B/q3
    assert d.loc[("answerable", "second_only"), "n"] == 1        # A/q2
    assert d.loc[("AR", "production_only"), "n"] == 0
    assert d.loc[("AR", "second_only"), "n"] == 3                # G1/q5, A/q5, B/q6
    assert d.loc[("AR", "second_only"), "n_capability_refusal"] == 2   # CAP1, CAP2; not "I don't know."
    assert cmp.statistic("ar_second_only") == 3
    assert cmp.statistic("ar_second_only_capability_refusals") == 2


def test_disagreements_by_evidence():
    p, s = _frames()
    d = J.disagreements(J.match_judges(p, s), by="evidence_type")
    assert len(d) == 16
    sel = d[(d["evidence_type"] == SPK) & (d["stratum"] == "AR") & (d["direction"] == "second_only")]
    assert sel["n"].item() == 2 and sel["n_capability_refusal"].item() == 1


@pytest.mark.parametrize("text,expected", [
    ("I do not have access to previous conversations.", True),
    ("I don't have access to our previous sessions, so I can't say.", True),
    ("Sorry, I cannot hear audio.", True),
    ("I'm unable to process audio files.", True),
    ("As an AI language model, I can't listen to recordings.", True),
    ("I don't have the ability to listen to audio.", True),
    ("insufficient evidence", False),
    ("The conversation does not contain enough information to determine the answer.", False),
    ("I don't know.", False),
    ("The speaker sounded calm.", False),
    (None, False),
])
def test_capability_refusal_pattern(text, expected):
    assert J.is_capability_refusal(text) is expected


def test_wide_table13_labels(cmp):
    w = cmp.wide()
    assert w.index.tolist() == list(J.SLICE_LABELS)
    assert w.columns.tolist() == ["n", "Gemini-3.7-Flash", "GPT-5.6-Luna", "\u0394 (pp)", "Agreement", "\u03ba",
                                  "items", "\u0394 CI low", "\u0394 CI high", "\u03ba CI low", "\u03ba CI high"]
    assert w.loc["AR", "GPT-5.6-Luna"] == pytest.approx(100 * 5 / 6)
    ok = w["\u03ba"].notna() & w["\u03ba CI low"].notna()
    assert ((w.loc[ok, "\u03ba CI low"] <= w.loc[ok, "\u03ba"]) & (w.loc[ok, "\u03ba"] <= w.loc[ok, "\u03ba CI high"])).all()


def test_pandas_input_and_all_budgets():
    p, s = _frames()
    c = J.compare_judge_frames(p.to_pandas(), s.to_pandas(), models=MODELS)
    assert c.table.loc[0, "n"] == 17
    c_all = J.compare_judge_frames(p, s, models=MODELS, budget=None)
    assert c_all.table.loc[0, "n"] == 18       # + the 16K pair
    assert c_all.table.loc[0, "judge2"] == pytest.approx(100 * 10 / 18)


def test_duplicates_raise():
    p, s = _frames()
    with pytest.raises(VoxMemDataError, match="more than once"):
        J.match_judges(pl.concat([p, p.head(1)]), s)


def test_missing_column_raises():
    p, s = _frames()
    with pytest.raises(VoxMemDataError, match="status"):
        J.match_judges(p.drop("status"), s)


def test_no_family_registry_gives_nan_terms():
    p, s = _frames()
    c = J.compare_judge_frames(p, s, models=None)
    assert math.isnan(c.statistic("family_diff_pp"))
    assert c.statistic("others_diff_pp") == pytest.approx(100 * (8 - 10) / 17)


def test_spearman_with_a_swap():
    """Ranks change under judge 2: rho from the mid-ranks, compared with scipy."""
    from scipy.stats import spearmanr

    rows1, rows2 = [], []
    # three models, 4 items each; correct counts judge1 = 3, 2, 1; judge2 = 1, 2, 3
    for m, c1, c2 in (("M1", 3, 1), ("M2", 2, 2), ("M3", 1, 3)):
        for i in range(4):
            rows1.append(_row(m, f"q{i + 10}", "8K", i < c1, "graded", "r", "j1"))
            rows2.append(_row(m, f"q{i + 10}", "8K", i < c2, "graded", "r", "j2"))
    c = J.compare_judge_frames(pl.DataFrame(rows1), pl.DataFrame(rows2), models=None, production_family=None)
    assert c.statistic("spearman_rho") == pytest.approx(-1.0)
    assert c.statistic("spearman_rho") == pytest.approx(spearmanr([75, 50, 25], [25, 50, 75]).statistic)
    assert c.statistic("mean_abs_model_diff_pp") == pytest.approx((50 + 0 + 50) / 3)
    assert "family_diff_pp" not in set(c.summary["statistic"])


def test_plots_draw_what_they_are_given(cmp):
    import matplotlib.pyplot as plt

    from voxmem_analysis.plots import judges as PJ

    ax = PJ.judge_scatter(cmp.per_model)
    offsets = [xy for c in ax.collections for xy in c.get_offsets().tolist()]
    assert sorted(map(tuple, offsets)) == sorted(zip(cmp.per_model["judge1"], cmp.per_model["judge2"]))
    assert ax.get_xlabel().endswith("Gemini-3.7-Flash") and ax.get_ylabel().endswith("GPT-5.6-Luna")
    plt.close(ax.figure)
    ax = PJ.judge_slices(cmp.table)
    assert [t.get_text().split("  (n=")[0] for t in ax.get_yticklabels()] == list(J.SLICE_LABELS)
    xs = sorted(x for c in ax.collections for x, _ in c.get_offsets().tolist())
    assert xs == pytest.approx(sorted(list(cmp.table["judge1"]) + list(cmp.table["judge2"])))
    plt.close(ax.figure)
