"""Label-free analyses (voxmem_analysis.analysis.verdicts) against hand computation.

The LongMemEval fixture (tests/fixtures/longmemeval/, exact evaluate_qa.py format) holds ten
questions -- u01 u02 u03 u04_abs (single-session-user), m01 m02 m03_abs (multi-session),
t01 t02 t03 (temporal-reasoning) -- and these labels (1 correct, 0 wrong, U no label, - absent):

    system  budget  judge          u01 u02 u03 u04 | m01 m02 m03 | t01 t02 t03
    A       32k     gpt-4o          1   1   0   1  |  1   0   1  |  1   1   0
    A       115k    gpt-4o          1   0   0   1  |  0   0   1  |  1   0   0
    B       32k     gpt-4o          1   1   1   1  |  1   1   0  |  0   1   1
    B       115k    gpt-4o          1   1   0   1  |  1   1   1  |  1   1   1
    C       32k     gpt-4o          0   1   0   0  |  1   0   0  |  1   U   -
    C       115k    gpt-4o          0   0   0   1  |  1   0   0  |  0   0   1
    A       32k     llama-3.1-70b   1   0   0   1  |  1   0   0  |  1   1   1

Every expected number below is worked out by hand from this table (comments show how).
"""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest
from scipy import stats as st
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.contingency_tables import mcnemar as sm_mcnemar
from statsmodels.stats.proportion import proportion_confint

from voxmem_analysis.analysis import verdicts as G
from voxmem_analysis.cli import main
from voxmem_analysis.io import load_longmemeval, select_judge
from voxmem_analysis.stats import bootstrap_means, paired_bootstrap

FIX = Path(__file__).parent / "fixtures" / "longmemeval"
NB = 400
SSU, MS, TR = "single-session-user", "multi-session", "temporal-reasoning"
IDS = ["u01", "u02", "u03", "u04_abs", "m01", "m02", "m03_abs", "t01", "t02", "t03"]
LABELS = {  # (system, budget) -> labels in IDS order, None = absent; 'U' (ungraded) is 0 here
    ("System-A", "32k"): [1, 1, 0, 1, 1, 0, 1, 1, 1, 0],
    ("System-A", "115k"): [1, 0, 0, 1, 0, 0, 1, 1, 0, 0],
    ("System-B", "32k"): [1, 1, 1, 1, 1, 1, 0, 0, 1, 1],
    ("System-B", "115k"): [1, 1, 0, 1, 1, 1, 1, 1, 1, 1],
    ("System-C", "32k"): [0, 1, 0, 0, 1, 0, 0, 1, 0, None],
    ("System-C", "115k"): [0, 0, 0, 1, 1, 0, 0, 0, 0, 1],
}


@pytest.fixture(scope="module")
def lme():
    return load_longmemeval(FIX / "manifest.csv", FIX / "questions.json")


@pytest.fixture(scope="module")
def frame(lme):
    f, notes = select_judge(lme.frame)
    assert len(notes) == 1 and "gpt-4o" in notes[0]
    return f


def _row(df, **keys):
    m = np.ones(len(df), dtype=bool)
    for k, v in keys.items():
        m &= (df[k] == v).to_numpy()
    assert m.sum() == 1, (keys, int(m.sum()))
    return df[m].iloc[0]


# ============================================================================ slice_accuracy
SLICES = {  # (system, budget, type) -> (correct, n)
    ("System-A", "32k", SSU): (3, 4), ("System-A", "32k", MS): (2, 3), ("System-A", "32k", TR): (2, 3),
    ("System-A", "115k", SSU): (2, 4), ("System-A", "115k", MS): (1, 3), ("System-A", "115k", TR): (1, 3),
    ("System-B", "32k", SSU): (4, 4), ("System-B", "32k", MS): (2, 3), ("System-B", "32k", TR): (2, 3),
    ("System-B", "115k", SSU): (3, 4), ("System-B", "115k", MS): (3, 3), ("System-B", "115k", TR): (3, 3),
    ("System-C", "32k", SSU): (1, 4), ("System-C", "32k", MS): (1, 3), ("System-C", "32k", TR): (1, 2),  # t02 ungraded = 0, t03 absent
    ("System-C", "115k", SSU): (1, 4), ("System-C", "115k", MS): (1, 3), ("System-C", "115k", TR): (1, 3),
}
OVERALL = {("System-A", "32k"): (7, 10), ("System-A", "115k"): (4, 10), ("System-B", "32k"): (8, 10),
           ("System-B", "115k"): (9, 10), ("System-C", "32k"): (3, 9), ("System-C", "115k"): (3, 10)}
MACRO = {  # unweighted mean of the three type accuracies, in %
    ("System-A", "32k"): 100 * (3 / 4 + 2 / 3 + 2 / 3) / 3,   # 69.444
    ("System-A", "115k"): 100 * (2 / 4 + 1 / 3 + 1 / 3) / 3,  # 38.889
    ("System-B", "32k"): 100 * (4 / 4 + 2 / 3 + 2 / 3) / 3,   # 77.778
    ("System-B", "115k"): 100 * (3 / 4 + 1 + 1) / 3,          # 91.667
    ("System-C", "32k"): 100 * (1 / 4 + 1 / 3 + 1 / 2) / 3,   # 36.111
    ("System-C", "115k"): 100 * (1 / 4 + 1 / 3 + 1 / 3) / 3,  # 30.556
}


def test_slice_counts_accuracy_overall_and_macro(frame):
    t = G.slice_accuracy(frame, ["system", "budget", "question_type"], item="question_id", n_boot=NB)
    assert list(t.columns) == ["system", "budget", "question_type", "level", "n_correct", "n", "n_excluded",
                               "accuracy", "accuracy_ci_low", "accuracy_ci_high", "interval"]
    assert len(t) == 6 * 5
    for (s, b, q), (c, n) in SLICES.items():
        r = _row(t, system=s, budget=b, question_type=q)
        assert (r["level"], r["n_correct"], r["n"], r["n_excluded"]) == ("slice", c, n, 0)
        assert r["accuracy"] == pytest.approx(100 * c / n)
    for (s, b), (c, n) in OVERALL.items():
        r = _row(t, system=s, budget=b, question_type="overall")
        assert (r["level"], r["n_correct"], r["n"]) == ("overall", c, n)
        assert r["accuracy"] == pytest.approx(100 * c / n)
        m = _row(t, system=s, budget=b, question_type="macro")
        assert m["level"] == "macro" and pd.isna(m["n_correct"]) and m["n"] == n
        assert m["accuracy"] == pytest.approx(MACRO[(s, b)])
        assert m["interval"] == "bootstrap (strata: question_type)"
        assert m["accuracy_ci_low"] <= m["accuracy"] <= m["accuracy_ci_high"]
    # order: systems as in the manifest, budgets numerically (32k < 115k), types, then overall, macro
    assert t["system"].tolist()[:10] == ["System-A"] * 10
    assert t["budget"].tolist()[:5] == ["32k"] * 5 and t["budget"].tolist()[5:10] == ["115k"] * 5
    assert t["question_type"].tolist()[:5] == [SSU, MS, TR, "overall", "macro"]


def test_slice_wilson_matches_statsmodels(frame):
    t = G.slice_accuracy(frame, ["system", "budget", "question_type"], item="question_id", n_boot=NB)
    w = t[t["interval"] == "wilson"]
    assert len(w) == 24
    for r in w.itertuples(index=False):
        lo, hi = proportion_confint(int(r.n_correct), int(r.n), alpha=0.05, method="wilson")
        assert r.accuracy_ci_low == pytest.approx(100 * lo, abs=1e-9)
        assert r.accuracy_ci_high == pytest.approx(100 * hi, abs=1e-9)
    t90 = G.slice_accuracy(frame, ["system", "budget", "question_type"], ci_level=0.9)
    r = _row(t90, system="System-C", budget="32k", question_type=TR)   # 1 of 2
    lo, hi = proportion_confint(1, 2, alpha=0.10, method="wilson")
    assert (r["accuracy_ci_low"], r["accuracy_ci_high"]) == (pytest.approx(100 * lo), pytest.approx(100 * hi))
    # without item the macro row has no interval, and says so
    m = _row(t90, system="System-A", budget="32k", question_type="macro")
    assert m["interval"] == "none" and np.isnan(m["accuracy_ci_low"]) and m["accuracy"] == pytest.approx(MACRO[("System-A", "32k")])


def test_slice_bootstrap_uses_the_stats_engine(frame):
    t = G.slice_accuracy(frame, ["system", "budget", "question_type"], interval="bootstrap", item="question_id",
                         n_boot=NB, seed=3)
    # one row per item in a slice: the interval is the percentile interval of the stats engine's draws
    v = np.array(LABELS[("System-B", "115k")][:4], dtype=float)[:, None]  # B, 115k, user: 1 1 0 1
    reps = 100 * bootstrap_means(v, n_boot=NB, seed=3).replicates[:, 0]
    r = _row(t, system="System-B", budget="115k", question_type=SSU)
    assert r["interval"] == "bootstrap"
    assert (r["accuracy_ci_low"], r["accuracy_ci_high"]) == tuple(pytest.approx(x) for x in np.percentile(reps, [2.5, 97.5]))
    o = _row(t, system="System-A", budget="32k", question_type="overall")
    assert o["interval"] == "bootstrap (strata: question_type)" and o["accuracy"] == pytest.approx(70.0)
    again = G.slice_accuracy(frame, ["system", "budget", "question_type"], interval="bootstrap", item="question_id",
                             n_boot=NB, seed=3)
    pd.testing.assert_frame_equal(t, again)
    ok = t[t["n"] > 0]
    assert ((ok["accuracy_ci_low"] <= ok["accuracy"] + 1e-9) & (ok["accuracy"] <= ok["accuracy_ci_high"] + 1e-9)).all()


def test_slice_cluster_bootstrap_pools_rows_of_an_item():
    # item x appears twice (two systems), y once: pooled accuracy 2/3; bootstrap draws items
    df = pd.DataFrame({"arm": ["p", "q", "p"], "item": ["x", "x", "y"], "hit": [1, 1, 0]})
    t = G.slice_accuracy(df, [], value="hit", scored=None, interval="bootstrap", item="item", n_boot=2000, seed=0)
    r = t.iloc[0]
    assert (r["level"], r["n_correct"], r["n"]) == ("overall", 2, 3)
    # a resample holds x k times and y 2-k times: accuracy 2k / (2k + 2 - k) in {0, 2/3, 1}
    assert r["accuracy_ci_low"] == pytest.approx(0.0) and r["accuracy_ci_high"] == pytest.approx(100.0)


def test_slice_generic_columns_scored_and_no_type_column():
    df = pl.DataFrame({
        "arm": ["a", "a", "a", "b", "b", "b"], "cat": ["x", "y", "y", "x", "x", "y"],
        "hit": [True, None, True, False, True, True], "counted": [True, True, True, True, False, True],
    })
    t = G.slice_accuracy(df, "arm,cat", value="hit", scored="counted")
    # no type column among by: slice rows, then one overall row pooling everything
    assert t["level"].tolist() == ["slice"] * 4 + ["overall"]
    r = _row(t, arm="a", cat="y")
    assert (r["n_correct"], r["n"]) == (1, 2)                     # null hit counts as wrong
    r = _row(t, arm="b", cat="x")
    assert (r["n_correct"], r["n"], r["n_excluded"]) == (0, 1, 1)   # the unscored row leaves n
    o = t.iloc[-1]
    assert (o["arm"], o["cat"], o["n_correct"], o["n"], o["n_excluded"]) == ("overall", "overall", 3, 5, 1)
    # an explicit type column gives per-arm overall and macro rows
    t2 = G.slice_accuracy(df, ["arm", "cat"], value="hit", scored="counted", type_col="cat")
    m = _row(t2, arm="a", cat="macro")
    assert m["accuracy"] == pytest.approx(100 * (1 / 1 + 1 / 2) / 2)
    assert _row(t2, arm="b", cat="overall")["accuracy"] == pytest.approx(50.0)


def test_slice_bad_arguments(frame):
    with pytest.raises(G.AnalysisInputError, match=r"unknown column\(s\) \['nope'\]"):
        G.slice_accuracy(frame, ["system", "nope"])
    with pytest.raises(G.AnalysisInputError, match="needs the item column"):
        G.slice_accuracy(frame, ["system"], interval="bootstrap")
    with pytest.raises(G.AnalysisInputError, match="binary"):
        G.slice_accuracy(pd.DataFrame({"g": ["a"], "v": [0.5]}), ["g"], value="v", scored=None)
    with pytest.raises(G.AnalysisInputError, match="one 'question_type' per item"):
        G.slice_accuracy(pd.DataFrame({"question_type": ["a", "b"], "question_id": ["q", "q"], "correct": [1, 0]}),
                         ["question_type"], scored=None, item="question_id")


# ============================================================================ compare_systems
# Discordant pairs by hand from the table; McNemar p = min(1, 2 P(Bin(d, 1/2) <= min(n10, n01))).
COMPARE = {  # (budget, a, b): n_common, only_a, only_b, acc_a, acc_b, a_right_b_wrong, a_wrong_b_right, p
    ("32k", "System-A", "System-B"): (10, 0, 0, 70.0, 80.0, 2, 3, 1.0),            # 2*(1+5+10)/32 -> 1
    ("32k", "System-A", "System-C"): (9, 1, 0, 700 / 9, 300 / 9, 4, 0, 0.125),      # 2/16
    ("32k", "System-B", "System-C"): (9, 1, 0, 700 / 9, 300 / 9, 5, 1, 0.21875),    # 2*(1+6)/64
    ("115k", "System-A", "System-B"): (10, 0, 0, 40.0, 90.0, 0, 5, 0.0625),          # 2/32
    ("115k", "System-A", "System-C"): (10, 0, 0, 40.0, 30.0, 3, 2, 1.0),
    ("115k", "System-B", "System-C"): (10, 0, 0, 90.0, 30.0, 6, 0, 0.03125),         # 2/64
}
# Holm over the six p-values: sorted 0.03125*6, 0.0625*5, 0.125*4, 0.21875*3, 1*2 -> 1, 1*1
# Holm within each budget (m = 3), by hand from the McNemar p values of COMPARE:
# 32k: 0.125*3 = 0.375; max(0.21875*2, 0.375) = 0.4375; 1.0.  115k: 0.03125*3 = 0.09375; 0.0625*2 = 0.125; 1.0
HOLM = {("115k", "System-B", "System-C"): 0.09375, ("115k", "System-A", "System-B"): 0.125,
        ("32k", "System-A", "System-C"): 0.375, ("32k", "System-B", "System-C"): 0.4375,
        ("32k", "System-A", "System-B"): 1.0, ("115k", "System-A", "System-C"): 1.0}
# Holm over the whole table (m = 6): 0.03125*6, max(0.0625*5, .), max(0.125*4, .), max(0.21875*3, .), 1, 1
HOLM_TABLE = {("115k", "System-B", "System-C"): 0.1875, ("115k", "System-A", "System-B"): 0.3125,
              ("32k", "System-A", "System-C"): 0.5, ("32k", "System-B", "System-C"): 0.65625,
              ("32k", "System-A", "System-B"): 1.0, ("115k", "System-A", "System-C"): 1.0}


def test_compare_hand_numbers(frame):
    t = G.compare_systems(frame, budget="budget", n_boot=NB, seed=1)
    assert len(t) == 6
    assert list(zip(t["budget"], t["system_a"], t["system_b"])) == list(COMPARE)
    for (b, sa, sb), (n, oa, ob, aa, ab, rw, wr, p) in COMPARE.items():
        r = _row(t, budget=b, system_a=sa, system_b=sb)
        assert (r["n_common"], r["only_a"], r["only_b"]) == (n, oa, ob)
        assert r["acc_a"] == pytest.approx(aa) and r["acc_b"] == pytest.approx(ab)
        assert r["diff"] == pytest.approx(aa - ab)
        assert (r["a_right_b_wrong"], r["a_wrong_b_right"]) == (rw, wr)
        assert r["p_mcnemar"] == pytest.approx(p)
        assert r["p_holm"] == pytest.approx(HOLM[(b, sa, sb)]) and r["n_family"] == 3
        assert r["diff_ci_low"] <= r["diff"] <= r["diff_ci_high"]
        # and statsmodels agrees on the exact McNemar p
        table = [[0, wr], [rw, 0]]
        assert r["p_mcnemar"] == pytest.approx(sm_mcnemar(table, exact=True).pvalue)
    assert not t["reject"].any()
    whole = G.compare_systems(frame, budget="budget", n_boot=NB, seed=1, family="table")
    for (b, sa, sb), p in HOLM_TABLE.items():
        r = _row(whole, budget=b, system_a=sa, system_b=sb)
        assert r["p_holm"] == pytest.approx(p) and r["n_family"] == 6


def test_compare_interval_is_the_paired_bootstrap(frame):
    t = G.compare_systems(frame, budget="budget", n_boot=NB, seed=7)
    # A vs C at 32k on their 9 common questions (sorted ids), C's t02 ungraded = 0
    common = sorted(i for i in IDS if i != "t03")
    a = dict(zip(IDS, LABELS[("System-A", "32k")]))
    c = dict(zip(IDS, LABELS[("System-C", "32k")]))
    ref = paired_bootstrap([a[i] for i in common], [c[i] for i in common], "drop", n_boot=NB, seed=7).iloc[0]
    r = _row(t, budget="32k", system_a="System-A", system_b="System-C")
    assert r["diff"] == pytest.approx(ref["estimate"])
    assert (r["diff_ci_low"], r["diff_ci_high"]) == (pytest.approx(ref["ci_low"]), pytest.approx(ref["ci_high"]))
    assert (r["n_boot"], r["seed"]) == (NB, 7)


def test_compare_refuses_two_judges_pooled(lme):
    with pytest.raises(G.AnalysisInputError, match="several judges"):
        G.compare_systems(lme.frame, budget="budget", n_boot=NB)
    # ... unless the judge is a grouping column
    t = G.compare_systems(lme.frame, budget="budget", groups=["judge"], n_boot=NB)
    assert set(t["judge"]) == {"gpt-4o"}  # llama judged one system only: no pair


# ============================================================================ scaling
SCALING = {  # (system, type) at 115k vs 32k on paired items: n_paired, base acc, acc, change (pp), retention
    ("System-A", SSU): (4, 75.0, 50.0, -25.0, 2 / 3),
    ("System-A", MS): (3, 200 / 3, 100 / 3, -100 / 3, 0.5),
    ("System-A", TR): (3, 200 / 3, 100 / 3, -100 / 3, 0.5),
    ("System-A", "overall"): (10, 70.0, 40.0, -30.0, 4 / 7),
    ("System-B", SSU): (4, 100.0, 75.0, -25.0, 0.75),
    ("System-B", MS): (3, 200 / 3, 100.0, 100 / 3, 1.5),         # accuracy rises: positive change
    ("System-B", TR): (3, 200 / 3, 100.0, 100 / 3, 1.5),
    ("System-B", "overall"): (10, 80.0, 90.0, 10.0, 9 / 8),
    ("System-C", SSU): (4, 25.0, 25.0, 0.0, 1.0),
    ("System-C", MS): (3, 100 / 3, 100 / 3, 0.0, 1.0),
    ("System-C", TR): (2, 50.0, 0.0, -50.0, 0.0),                 # t03 absent at 32k: t01, t02 only
    ("System-C", "overall"): (9, 100 / 3, 200 / 9, -100 / 9, 2 / 3),
}


def test_scaling_hand_numbers(frame):
    t = G.scaling_table(frame, baseline="32k", n_boot=NB, seed=2)
    assert len(t) == 3 * 4 * 2
    for (s, q), (n, base, acc, ch, ret) in SCALING.items():
        r = _row(t, system=s, question_type=q, budget="115k")
        assert r["level"] == ("overall" if q == "overall" else "slice")
        assert r["n_paired"] == n
        assert r["acc_baseline_paired"] == pytest.approx(base)
        assert r["acc_paired"] == pytest.approx(acc)
        assert r["change"] == pytest.approx(ch, abs=1e-9)
        assert r["retention"] == pytest.approx(ret)
        assert r["change_ci_low"] <= r["change"] + 1e-9 <= r["change_ci_high"] + 2e-9
        b = _row(t, system=s, question_type=q, budget="32k")
        assert pd.isna(b["change"]) and pd.isna(b["n_paired"]) and b["baseline_budget"] == "32k"
    # level accuracy uses every scored item at its budget: C temporal at 115k is 1 of 3
    r = _row(t, system="System-C", question_type=TR, budget="115k")
    assert (r["n_correct"], r["n"], r["accuracy"]) == (1, 3, pytest.approx(100 / 3))
    lo, hi = proportion_confint(1, 3, method="wilson")
    assert (r["accuracy_ci_low"], r["accuracy_ci_high"]) == (pytest.approx(100 * lo), pytest.approx(100 * hi))


def test_scaling_interval_is_the_paired_bootstrap(frame):
    t = G.scaling_table(frame, baseline="32K", n_boot=NB, seed=5)   # budget matched case-insensitively
    b32 = LABELS[("System-B", "32k")][4:7]
    b115 = LABELS[("System-B", "115k")][4:7]
    ref = paired_bootstrap(b32, b115, ["change", "retention"], n_boot=NB, seed=5).set_index("statistic")
    r = _row(t, system="System-B", question_type=MS, budget="115k")
    assert (r["change_ci_low"], r["change_ci_high"]) == (pytest.approx(ref.loc["change", "ci_low"]),
                                                         pytest.approx(ref.loc["change", "ci_high"]))
    assert (r["retention_ci_low"], r["retention_ci_high"]) == (pytest.approx(ref.loc["retention", "ci_low"]),
                                                               pytest.approx(ref.loc["retention", "ci_high"]))
    assert r["retention_n_invalid"] == ref.loc["retention", "n_invalid"]


def test_scaling_correlations_match_scipy(frame):
    t = G.scaling_table(frame, baseline="32k", n_boot=NB)
    c = G.scaling_correlations(t)
    assert c[["budget", "baseline_budget", "x", "y"]].values.tolist() == [
        ["115k", "32k", "baseline_accuracy", "retention"], ["115k", "32k", "baseline_accuracy", "change"]]
    cells = [v for k, v in SCALING.items() if k[1] != "overall"]   # the nine system x type cells
    x = [v[1] for v in cells]
    for y, col in (("retention", 4), ("change", 3)):
        ref = st.spearmanr(x, [v[col] for v in cells])
        r = _row(c, y=y)
        assert r["n"] == 9 and r["n_dropped"] == 0
        assert r["rho"] == pytest.approx(ref.statistic) and r["p_value"] == pytest.approx(ref.pvalue)


def test_scaling_bad_baseline_and_generic_names():
    df = pd.DataFrame({"arm": ["p"] * 4, "size": ["small", "small", "large", "large"], "it": ["a", "b", "a", "b"],
                       "ok": [1, 0, 1, 1]})
    with pytest.raises(G.AnalysisInputError, match="'medium' is not a value of 'size'"):
        G.scaling_table(df, system="arm", type_col=None, item="it", budget="size", baseline="medium", value="ok",
                        scored=None)
    t = G.scaling_table(df, system="arm", type_col=None, item="it", budget="size", baseline="small", value="ok",
                        scored=None, budgets=["small", "large"], n_boot=NB)
    r = _row(t, size="large")
    assert (r["change"], r["retention"], r["n_paired"]) == (50.0, 2.0, 2)


# ============================================================================ judges
def test_judge_agreement_hand_numbers_and_sklearn(lme):
    f = lme.frame.filter((pl.col("system") == "System-A") & (pl.col("budget") == "32k"))
    a, b = f.filter(pl.col("judge") == "gpt-4o"), f.filter(pl.col("judge") == "llama-3.1-70b")
    t = G.judge_agreement(a, b, keys=["question_id"], by="question_type")
    # user   1 1 0 1 vs 1 0 0 1: po 3/4, pa 3/4, pb 1/2, pe 1/2          -> kappa 0.5
    # multi  1 0 1   vs 1 0 0  : po 2/3, pa 2/3, pb 1/3, pe 4/9          -> kappa 0.4
    # tempo  1 1 0   vs 1 1 1  : po 2/3, pb 1, pe 2/3                    -> kappa 0
    # all    po 7/10, pa 0.7, pb 0.6, pe 0.54                            -> kappa 0.16/0.46
    expect = {SSU: (4, 75.0, 50.0, 75.0, 0.5, (2, 1, 0, 1)), MS: (3, 200 / 3, 100 / 3, 200 / 3, 0.4, (1, 1, 0, 1)),
              TR: (3, 200 / 3, 100.0, 200 / 3, 0.0, (2, 0, 1, 0)),
              "overall": (10, 70.0, 60.0, 70.0, 0.16 / 0.46, (5, 2, 1, 2))}
    assert t["question_type"].tolist() == [SSU, MS, TR, "overall"]
    ja = dict(zip(IDS, [1, 1, 0, 1, 1, 0, 1, 1, 1, 0]))
    jb = dict(zip(IDS, [1, 0, 0, 1, 1, 0, 0, 1, 1, 1]))
    for q, (n, acc_a, acc_b, agree, kappa, cells) in expect.items():
        r = _row(t, question_type=q)
        assert r["n"] == n and r["acc_a"] == pytest.approx(acc_a) and r["acc_b"] == pytest.approx(acc_b)
        assert r["agreement"] == pytest.approx(agree) and r["kappa"] == pytest.approx(kappa, abs=1e-12)
        assert (r["n11"], r["n10"], r["n01"], r["n00"]) == cells
        assert r["diff"] == pytest.approx(acc_a - acc_b)  # first minus second, as compare_systems
        ids = {SSU: IDS[:4], MS: IDS[4:7], TR: IDS[7:], "overall": IDS}[q]
        assert r["kappa"] == pytest.approx(cohen_kappa_score([ja[i] for i in ids], [jb[i] for i in ids]), abs=1e-12)


def test_judge_agreement_unmatched_are_counted():
    a = pd.DataFrame({"k": ["1", "2", "3", "4"], "t": ["x", "x", "y", "y"], "v": [1, 0, 1, 1]})
    b = pd.DataFrame({"k": ["1", "2", "3", "5"], "t": ["x", "x", "y", "y"], "v": [1, 1, 1, 0]})
    t = G.judge_agreement(a, b, keys=["k"], by=["t"], value="v", scored=None, type_col="t")
    x, y, o = _row(t, t="x"), _row(t, t="y"), _row(t, t="overall")
    assert (x["n"], x["agreement"], x["only_a"], x["only_b"]) == (2, 50.0, 0, 0)
    assert (y["n"], y["only_a"], y["only_b"]) == (1, 1, 1)
    assert (o["n"], o["only_a"], o["only_b"]) == (3, 1, 1)
    with pytest.raises(G.AnalysisInputError, match="one verdict per key"):
        G.judge_agreement(pd.concat([a, a]), b, keys=["k"], value="v", scored=None)


def test_judge_agreement_pairs(lme):
    t = G.judge_agreement_pairs(lme.frame)
    assert t[["system", "budget", "judge_a", "judge_b"]].drop_duplicates().values.tolist() == [
        ["System-A", "32k", "gpt-4o", "llama-3.1-70b"]]
    assert _row(t, question_type="overall")["kappa"] == pytest.approx(0.16 / 0.46)
    assert _row(t, question_type="overall")["diff"] == pytest.approx(70.0 - 60.0)  # gpt-4o minus llama


def test_judge_agreement_and_compare_systems_share_one_sign():
    # the same two 0/1 vectors as two judges and as two systems: diff = first minus second in both
    a = pd.DataFrame({"question_id": list("pqrs"), "system": "A", "correct": [1, 1, 1, 0]})
    b = pd.DataFrame({"question_id": list("pqrs"), "system": "B", "correct": [1, 0, 0, 0]})
    ja = G.judge_agreement(a, b, keys=["question_id"], scored=None, type_col=None)
    cs = G.compare_systems(pd.concat([a, b]), scored=None, n_boot=200, seed=0)
    assert ja["diff"].iloc[0] == pytest.approx(50.0)
    assert (cs["system_a"].iloc[0], cs["system_b"].iloc[0]) == ("A", "B")
    assert cs["diff"].iloc[0] == pytest.approx(50.0)


# ============================================================================ VoxMem frames, same code
def test_voxmem_release_through_slice(tiny_release):
    from voxmem_analysis import load_release

    rel = load_release(tiny_release)
    t = G.slice_accuracy(rel.frame, ["model", "budget", "evidence_type"])
    # Model-A: q10 8K right, q11 8K right | q10 64K wrong, q11 64K failed (wrong)
    # Model-B: q10 8K provider-rejected (out), q11 8K wrong | q10 64K ungraded (wrong), q11 64K right
    s = t[t["level"] == "slice"]
    got = {(r.model, r.budget, r.n_correct, r.n, r.n_excluded) for r in s.itertuples()}
    assert got == {("Model-A", "8K", 2, 2, 0), ("Model-A", "64K", 0, 2, 0),
                   ("Model-B", "8K", 0, 1, 1), ("Model-B", "64K", 1, 2, 0)}
    assert s["budget"].tolist() == ["8K", "64K", "8K", "64K"]   # the Enum's order, not alphabetical
    t2 = G.slice_accuracy(rel.frame, "operation", item="question_id", n_boot=NB)
    ie, ar = _row(t2, operation="information_extraction"), _row(t2, operation="answer_refusal")
    assert (ie["n_correct"], ie["n"], ie["n_excluded"]) == (1, 3, 1)
    assert (ar["n_correct"], ar["n"]) == (2, 4)
    assert _row(t2, operation="overall")["accuracy"] == pytest.approx(300 / 7)
    assert _row(t2, operation="macro")["accuracy"] == pytest.approx(100 * (1 / 3 + 1 / 2) / 2)


def test_cli_slice_data_mode(tiny_release, capsys):
    rc = main(["slice", "--data", str(tiny_release), "--by", "model,operation", "--interval", "wilson", "--n-boot", "200"])
    out = capsys.readouterr().out
    assert rc == 0
    t = pd.read_csv(io.StringIO(out))
    assert list(t.columns[:3]) == ["model", "operation", "level"]
    r = _row(t, model="Model-B", operation="information_extraction")
    assert (r["n_correct"], r["n"], r["n_excluded"]) == (0, 1, 1)
    r = _row(t, model="Model-A", operation="overall")
    assert (r["n_correct"], r["n"], r["accuracy"]) == (2, 4, 50.0)
    lo, hi = proportion_confint(2, 4, method="wilson")
    assert r["accuracy_ci_low"] == pytest.approx(100 * lo, abs=1e-4) and r["accuracy_ci_high"] == pytest.approx(100 * hi, abs=1e-4)
    assert main(["slice", "--data", str(tiny_release), "--by", "model,no_such_column"]) == 2
    assert "no_such_column" in capsys.readouterr().err


def test_cli_slice_auto_interval_accounts_for_repeated_questions(tiny_release, capsys):
    """Pooling budgets repeats questions inside a slice: --interval auto switches to the item bootstrap."""
    assert main(["slice", "--data", str(tiny_release), "--by", "model", "--n-boot", "200"]) == 0
    captured = capsys.readouterr()
    assert "interval: bootstrap (" in captured.err  # each model pools two budgets of the same questions
    # no row pools several models unless --pool (issue 11); that pooled row repeats questions
    assert main(["slice", "--data", str(tiny_release), "--by", "model,budget", "--n-boot", "200"]) == 0
    captured = capsys.readouterr()
    assert "interval: wilson (" in captured.err and "--pool adds it" in captured.err
    assert main(["slice", "--data", str(tiny_release), "--by", "model,budget", "--n-boot", "200", "--pool"]) == 0
    captured = capsys.readouterr()
    assert "interval: bootstrap, wilson" in captured.err


def test_auto_interval_is_chosen_per_row():
    import pandas as pd

    from voxmem_analysis.analysis.verdicts import slice_accuracy

    df = pd.DataFrame({"system": ["a"] * 4 + ["b"] * 4, "question_id": list("wxyz") * 2,
                       "correct": [1, 1, 0, 0, 1, 0, 0, 0], "scored": [True] * 8})
    t = slice_accuracy(df, "system", item="question_id", n_boot=500, seed=1).set_index("system")
    assert t.loc["a", "interval"] == "wilson" and t.loc["b", "interval"] == "wilson"     # one row per question
    assert t.loc["overall", "interval"] == "bootstrap"                                 # questions repeat
    assert t.loc["overall", "accuracy"] == pytest.approx(37.5)
