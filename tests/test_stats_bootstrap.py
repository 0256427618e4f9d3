"""Paired bootstrap engine (voxmem_analysis.stats.bootstrap)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hst
from scipy import stats as st

from voxmem_analysis.errors import MissingDataError
from voxmem_analysis.stats import (
    STATISTICS,
    PairedSettings,
    Statistic,
    bootstrap_means,
    difference,
    iter_bootstrap_counts,
    mean_difference,
    mean_ratio,
    paired_bootstrap,
    paired_bootstrap_frame,
    paired_bootstrap_matrix,
    ratio,
)

RESULT_COLUMNS = ["statistic", "estimate", "ci_low", "ci_high", "n", "n_series", "n_invalid",
                  "n_boot", "seed", "ci_level", "interval", "ci_low_mc_se", "ci_high_mc_se", "ci_resolution",
                  "ci_flag", "cluster", "n_clusters", "design_effect"]


# ----------------------------------------------------------------------------- fixtures

def latent_paired(n_items: int, n_series: int, seed: int, shift: float = 0.7):
    """Paired 0/1 correctness with a shared item latent and a shared uniform per cell."""
    rng = np.random.default_rng(seed)
    z = rng.normal(size=(n_items, 1))
    a = rng.normal(-0.5, 0.5, size=(1, n_series))
    u = rng.random((n_items, n_series))
    base = (u < 1 / (1 + np.exp(-(z + a)))).astype(float)
    comp = (u < 1 / (1 + np.exp(-(z + a - shift)))).astype(float)
    return base, comp


def to_long(base, comp, *, items=None, series=None, labels=("8K", "64K"), extra=None):
    n, k = base.shape
    items = items if items is not None else [f"q{i:03d}" for i in range(n)]
    series = series if series is not None else [f"m{j}" for j in range(k)]
    parts = []
    for j in range(k):
        for lab, arr in zip(labels, (base, comp)):
            d = {"question_id": items, "model": series[j], "budget": lab, "correct": arr[:, j]}
            if extra:
                d.update(extra)
            parts.append(pd.DataFrame(d))
    df = pd.concat(parts, ignore_index=True)
    df["correct"] = df["correct"].astype("boolean")
    return df


def manual_replicates(base, comp, mask, n_boot, seed, strata=None):
    """Reference: per-series replicate accuracies by explicit loops over the count matrix."""
    keep = mask.any(axis=1)
    b, c, m = base[keep], comp[keep], mask[keep]
    st_ = None if strata is None else np.asarray(strata)[keep]
    C = np.vstack(list(iter_bootstrap_counts(b.shape[0], n_boot=n_boot, seed=seed, strata=st_)))
    k = b.shape[1]
    rb = np.empty((n_boot, k))
    rc = np.empty((n_boot, k))
    for r in range(n_boot):
        for j in range(k):
            w = C[r] * m[:, j]
            with np.errstate(invalid="ignore", divide="ignore"):
                rb[r, j] = (w * np.nan_to_num(b[:, j])).sum() / w.sum()
                rc[r, j] = (w * np.nan_to_num(c[:, j])).sum() / w.sum()
    return rb, rc


# ----------------------------------------------------------------------------- counts

def test_count_matrix_rows_are_multinomial_draws():
    C = np.vstack(list(iter_bootstrap_counts(37, n_boot=2500, seed=3)))
    assert C.shape == (2500, 37)
    assert (C.sum(axis=1) == 37).all()
    assert (C >= 0).all() and np.array_equal(C, np.round(C))
    # E[count] = 1 and Var[count] = 1 - 1/n for a multinomial(n, 1/n) cell.
    assert C.mean() == pytest.approx(1.0)
    assert C.var(axis=0).mean() == pytest.approx(1 - 1 / 37, abs=0.03)


def test_count_matrix_is_deterministic_given_seed():
    a = np.vstack(list(iter_bootstrap_counts(50, n_boot=1500, seed=11)))
    b = np.vstack(list(iter_bootstrap_counts(50, n_boot=1500, seed=11)))
    c = np.vstack(list(iter_bootstrap_counts(50, n_boot=1500, seed=12)))
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)


def test_count_matrix_with_strata_keeps_stratum_sizes():
    strata = np.array(["x"] * 7 + ["y"] * 3 + ["x"] * 5 + ["z"])
    C = np.vstack(list(iter_bootstrap_counts(16, n_boot=400, seed=0, strata=strata)))
    for s, size in (("x", 12), ("y", 3), ("z", 1)):
        assert (C[:, strata == s].sum(axis=1) == size).all()
    assert (C[:, strata == "z"] == 1).all()


def test_single_stratum_equals_unstratified():
    base, comp = latent_paired(120, 3, seed=5)
    plain = paired_bootstrap_matrix(base, comp, n_boot=3000, seed=4)
    one = paired_bootstrap_matrix(base, comp, n_boot=3000, seed=4, strata=["s"] * 120)
    pd.testing.assert_frame_equal(plain, one)


# ----------------------------------------------------------------------------- estimates

def test_hand_computed_estimates_vector():
    x = [1, 1, 1, 0, 1, 0, 1, 1]          # 6/8 = 0.75
    y = [1, 0, 1, 0, 0, 0, 1, 0]          # 3/8 = 0.375
    out = paired_bootstrap(x, y, ["drop", "retention", "difference", "change", "baseline",
                                  "comparison"], n_boot=500, seed=0)
    assert list(out.columns) == [c for c in RESULT_COLUMNS if c != "n_series"]
    got = dict(zip(out["statistic"], out["estimate"]))
    assert got == pytest.approx({"drop": 37.5, "retention": 0.5, "difference": 0.375,
                                 "change": -37.5, "baseline": 75.0, "comparison": 37.5})
    assert (out["n"] == 8).all() and (out["n_boot"] == 500).all() and (out["seed"] == 0).all()
    assert (out["ci_level"] == 0.95).all()
    assert (out["ci_low"] <= out["estimate"]).all() and (out["estimate"] <= out["ci_high"]).all()


def test_hand_computed_estimates_mean_over_series():
    # series 0: 8K 3/5, 64K 2/5; series 1: 8K 3/5, 64K 1/5 -> means 0.6 and 0.3
    base = np.array([[1, 1], [1, 0], [0, 1], [1, 1], [0, 0]], dtype=float)
    comp = np.array([[1, 0], [0, 0], [0, 1], [1, 0], [0, 0]], dtype=float)
    agg = paired_bootstrap_matrix(base, comp, n_boot=200, seed=1)
    assert list(agg.columns) == RESULT_COLUMNS
    assert agg.set_index("statistic")["estimate"].to_dict() == pytest.approx(
        {"drop": 30.0, "retention": 0.5})
    assert agg["n_series"].tolist() == [2, 2]
    per = paired_bootstrap_matrix(base, comp, aggregate=None, series=["A", "B"], n_boot=200,
                                  seed=1)
    assert list(per.columns) == ["series"] + RESULT_COLUMNS
    est = per.set_index(["series", "statistic"])["estimate"]
    assert est[("A", "drop")] == pytest.approx(20.0)
    assert est[("A", "retention")] == pytest.approx(2 / 3)
    assert est[("B", "drop")] == pytest.approx(40.0)
    assert est[("B", "retention")] == pytest.approx(1 / 3)


def test_retention_is_ratio_of_means_not_mean_of_ratios():
    base = np.array([[1, 1], [1, 0], [0, 0], [0, 0]], dtype=float)   # 0.5, 0.25
    comp = np.array([[1, 1], [0, 0], [0, 0], [0, 0]], dtype=float)   # 0.25, 0.25
    out = paired_bootstrap_matrix(base, comp, statistics="retention", n_boot=100)
    assert out["estimate"].iloc[0] == pytest.approx(0.5 / 0.75)


def test_estimate_is_original_sample_not_bootstrap_mean():
    base, comp = latent_paired(40, 1, seed=9)
    out = paired_bootstrap_matrix(base, comp, statistics="retention", n_boot=2000, seed=0)
    assert out["estimate"].iloc[0] == pytest.approx(comp.mean() / base.mean(), rel=1e-15)


def test_engine_matches_explicit_loop_reference_with_masks():
    base, comp = latent_paired(30, 3, seed=2)
    mask = np.ones_like(base, dtype=bool)
    mask[[0, 5, 6], 1] = False          # series 1 misses three items
    mask[7, :] = False                  # nobody judged item 7 -> not a resampling unit
    base[2, 2] = np.nan                 # series 2: baseline missing -> pair dropped
    n_boot, seed = 300, 8
    rb, rc = manual_replicates(base, comp, mask & ~np.isnan(base), n_boot, seed)
    stats = {"drop": mean_difference(), "retention": mean_ratio()}
    out = paired_bootstrap_matrix(base, comp, mask, statistics=stats, n_boot=n_boot, seed=seed)
    for name, fn in stats.items():
        v = fn(rb, rc)
        row = out.set_index("statistic").loc[name]
        lo, hi = np.nanpercentile(v, [2.5, 97.5])
        assert row["ci_low"] == pytest.approx(lo, rel=1e-12)
        assert row["ci_high"] == pytest.approx(hi, rel=1e-12)
    assert out["n"].iloc[0] == 29
    per = paired_bootstrap_matrix(base, comp, mask, aggregate=None, statistics="drop",
                                  n_boot=n_boot, seed=seed)
    assert per["n"].tolist() == [29, 26, 28]
    for j in range(3):
        lo, hi = np.nanpercentile(100 * (rb[:, j] - rc[:, j]), [2.5, 97.5])
        assert per["ci_low"].iloc[j] == pytest.approx(lo, rel=1e-12)
        assert per["ci_high"].iloc[j] == pytest.approx(hi, rel=1e-12)


# ----------------------------------------------------------------------------- vs SciPy

def _scipy_ci(data, fn, seed):
    res = st.bootstrap(data, fn, paired=True, vectorized=True, n_resamples=10_000,
                       method="percentile", confidence_level=0.95, batch=2000,
                       rng=np.random.default_rng(seed))
    return res.confidence_interval.low, res.confidence_interval.high


def test_single_series_matches_scipy_percentile_bootstrap():
    base, comp = latent_paired(300, 1, seed=42)
    x, y = base[:, 0], comp[:, 0]
    out = paired_bootstrap(x, y, ["drop", "retention"], n_boot=10_000, seed=0).set_index(
        "statistic")
    lo, hi = _scipy_ci((x, y), lambda a, b, axis=-1: 100 * (a.mean(axis) - b.mean(axis)), 1)
    assert abs(out.loc["drop", "ci_low"] - lo) <= 0.5
    assert abs(out.loc["drop", "ci_high"] - hi) <= 0.5
    lo, hi = _scipy_ci((x, y), lambda a, b, axis=-1: b.mean(axis) / a.mean(axis), 1)
    assert abs(out.loc["retention", "ci_low"] - lo) <= 0.01
    assert abs(out.loc["retention", "ci_high"] - hi) <= 0.01


def test_mean_over_series_matches_scipy_percentile_bootstrap():
    k = 4
    base, comp = latent_paired(232, k, seed=7)
    out = paired_bootstrap_matrix(base, comp, n_boot=10_000, seed=0).set_index("statistic")
    data = tuple(base.T) + tuple(comp.T)

    def accs(arrs, axis):
        m = np.stack([a.mean(axis=axis) for a in arrs], axis=-1)
        return m[..., :k].mean(-1), m[..., k:].mean(-1)

    def drop(*arrs, axis=-1):
        b, c = accs(arrs, axis)
        return 100 * (b - c)

    def retention(*arrs, axis=-1):
        b, c = accs(arrs, axis)
        return c / b

    lo, hi = _scipy_ci(data, drop, 3)
    assert abs(out.loc["drop", "ci_low"] - lo) <= 0.5
    assert abs(out.loc["drop", "ci_high"] - hi) <= 0.5
    lo, hi = _scipy_ci(data, retention, 3)
    assert abs(out.loc["retention", "ci_low"] - lo) <= 0.01
    assert abs(out.loc["retention", "ci_high"] - hi) <= 0.01


# ----------------------------------------------------------------------------- determinism

def test_same_seed_gives_identical_frame_and_other_seed_differs():
    base, comp = latent_paired(150, 5, seed=1)
    df = to_long(base, comp, extra={"evidence_type": np.repeat(list("abc"), 50)})
    a = paired_bootstrap_frame(df, groups="evidence_type", settings=PairedSettings(n_boot=2000, seed=5))
    b = paired_bootstrap_frame(df, groups="evidence_type", settings=PairedSettings(n_boot=2000, seed=5))
    c = paired_bootstrap_frame(df, groups="evidence_type", settings=PairedSettings(n_boot=2000, seed=6))
    pd.testing.assert_frame_equal(a, b)
    assert (a["seed"] == 5).all()
    pd.testing.assert_series_equal(a["estimate"], c["estimate"])
    assert not np.allclose(a["ci_low"], c["ci_low"])


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(perm_seed=hst.integers(0, 2**32 - 1))
def test_frame_result_does_not_depend_on_row_order(perm_seed):
    base, comp = latent_paired(40, 3, seed=0)
    df = to_long(base, comp)
    ref = paired_bootstrap_frame(df, settings=PairedSettings(n_boot=300, seed=2))
    shuffled = df.sample(frac=1.0, random_state=perm_seed % 2**32).reset_index(drop=True)
    pd.testing.assert_frame_equal(paired_bootstrap_frame(shuffled, settings=PairedSettings(n_boot=300, seed=2)), ref)


# ----------------------------------------------------------------------------- masking

def test_missing_item_is_dropped_for_that_series_only():
    base = np.array([[1, 1], [1, 1], [0, 1], [1, 0]], dtype=float)
    comp = np.array([[0, 1], [1, 0], [0, 1], [1, 0]], dtype=float)
    df = to_long(base, comp, series=["A", "B"])
    # A was provider-rejected on q001 at 64K: its 8K answer on q001 must leave too.
    df.loc[(df.model == "A") & (df.question_id == "q001") & (df.budget == "64K"),
           "correct"] = pd.NA
    per = paired_bootstrap_frame(df,  settings=PairedSettings(aggregate=None, statistics=["baseline", "comparison"], n_boot=200)).set_index(["model", "statistic"])
    # A on q000, q002, q003: 8K 2/3, 64K 1/3.  B keeps all four items: 8K 3/4, 64K 2/4.
    assert per.loc[("A", "baseline"), "estimate"] == pytest.approx(200 / 3)
    assert per.loc[("A", "comparison"), "estimate"] == pytest.approx(100 / 3)
    assert per.loc[("A", "baseline"), "n"] == 3
    assert per.loc[("B", "baseline"), "estimate"] == pytest.approx(75.0)
    assert per.loc[("B", "comparison"), "estimate"] == pytest.approx(50.0)
    assert per.loc[("B", "baseline"), "n"] == 4
    agg = paired_bootstrap_frame(df, settings=PairedSettings(n_boot=200)).set_index("statistic")
    assert agg.loc["drop", "estimate"] == pytest.approx(100 * ((2 / 3 + 3 / 4) - (1 / 3 + 2 / 4)) / 2)
    assert agg.loc["drop", "n"] == 4


def test_absent_rows_and_judged_column_also_break_the_pair():
    base, comp = latent_paired(20, 2, seed=4)
    df = to_long(base, comp, series=["A", "B"])
    df["scored"] = True
    df.loc[(df.model == "A") & (df.question_id == "q003") & (df.budget == "8K"), "scored"] = False
    dropped_row = df[~((df.model == "B") & (df.question_id == "q010") & (df.budget == "64K"))]
    per = paired_bootstrap_frame(dropped_row, judged="scored",
                                 settings=PairedSettings(aggregate=None, statistics="baseline", n_boot=100)).set_index("model")
    assert per.loc["A", "n"] == 19 and per.loc["B", "n"] == 19
    keep_a = np.arange(20) != 3
    keep_b = np.arange(20) != 10
    assert per.loc["A", "estimate"] == pytest.approx(100 * base[keep_a, 0].mean())
    assert per.loc["B", "estimate"] == pytest.approx(100 * base[keep_b, 1].mean())


def test_matrix_nan_in_one_condition_drops_the_pair():
    x = np.array([1, 0, 1, 1, np.nan])
    y = np.array([np.nan, 0, 1, 0, 1])
    out = paired_bootstrap(x, y, ["baseline", "comparison"], n_boot=100).set_index("statistic")
    assert out.loc["baseline", "estimate"] == pytest.approx(200 / 3)
    assert out.loc["comparison", "estimate"] == pytest.approx(100 / 3)
    assert (out["n"] == 3).all()


# ----------------------------------------------------------------------------- zero denominators

def test_ratio_with_zero_baseline_counts_invalid_replicates():
    # 1 success in 20 baseline items: a resample misses it with prob (19/20)^20 ~ 0.358
    x = np.zeros(20)
    x[4] = 1
    y = np.zeros(20)
    y[[4, 9]] = 1
    n_boot, seed = 5000, 3
    out = paired_bootstrap(x, y, ["retention", "drop"], n_boot=n_boot, seed=seed)
    out = out.set_index("statistic")
    C = np.vstack(list(iter_bootstrap_counts(20, n_boot=n_boot, seed=seed)))
    expected_invalid = int((C[:, 4] == 0).sum())
    assert out.loc["retention", "n_invalid"] == expected_invalid
    assert 0.30 < expected_invalid / n_boot < 0.42
    assert out.loc["drop", "n_invalid"] == 0
    assert out.loc["retention", "estimate"] == pytest.approx(2.0)
    valid = C[:, 4] > 0
    r = (C[valid] @ y) / (C[valid] @ x)
    lo, hi = np.percentile(r, [2.5, 97.5])
    assert out.loc["retention", "ci_low"] == pytest.approx(lo)
    assert out.loc["retention", "ci_high"] == pytest.approx(hi)


def test_ratio_with_all_zero_baseline_is_nan_not_an_error():
    out = paired_bootstrap([0, 0, 0, 0], [1, 0, 0, 0], "retention", n_boot=300)
    row = out.iloc[0]
    assert np.isnan(row["estimate"]) and np.isnan(row["ci_low"]) and np.isnan(row["ci_high"])
    assert row["n_invalid"] == 300


# ----------------------------------------------------------------------------- strata

def test_strata_remove_between_stratum_variance():
    # Accuracy is constant within each stratum, so resampling within strata keeps every
    # replicate accuracy equal to the estimate; plain resampling does not.  The stratified bootstrap has no
    # variation: flagged, and each stratum's Wilson bound of 0 events stands instead (30/30 and 0/20 at 95 %:
    # u_n = z^2 / (n + z^2)), weighted by the strata's shares 0.6 and 0.4.
    strata = np.repeat(["a", "b"], [30, 20])
    x = np.r_[np.ones(30), np.zeros(20)]
    y = np.r_[np.ones(30), np.zeros(20)]
    strat = paired_bootstrap(x, y, "baseline", n_boot=1000, strata=strata).iloc[0]
    plain = paired_bootstrap(x, y, "baseline", n_boot=1000).iloc[0]
    z2 = st.norm.ppf(0.975) ** 2
    assert strat["estimate"] == pytest.approx(60.0)
    assert strat["ci_low"] == pytest.approx(60 - 60 * z2 / (30 + z2))
    assert strat["ci_high"] == pytest.approx(60 + 40 * z2 / (20 + z2))
    assert strat["ci_flag"].startswith("no variation") and "per stratum" in strat["ci_flag"]
    assert plain["ci_high"] - plain["ci_low"] > 20 and plain["ci_flag"] == ""


def test_strata_frame_matches_matrix_engine():
    base, comp = latent_paired(90, 3, seed=6)
    ev = np.tile(["x", "y", "z"], 30)
    df = to_long(base, comp, extra={"evidence_type": ev})
    f = paired_bootstrap_frame(df, strata="evidence_type", settings=PairedSettings(n_boot=1000, seed=1))
    m = paired_bootstrap_matrix(base, comp, strata=ev, n_boot=1000, seed=1)
    pd.testing.assert_frame_equal(f, m)
    plain = paired_bootstrap_matrix(base, comp, n_boot=1000, seed=1)
    assert not np.allclose(plain["ci_low"], m["ci_low"])


def test_strata_must_be_constant_within_item():
    base, comp = latent_paired(10, 2, seed=0)
    df = to_long(base, comp, extra={"evidence_type": ["a"] * 10})
    df.loc[3, "evidence_type"] = "b"
    with pytest.raises(ValueError, match="constant within an item"):
        paired_bootstrap_frame(df, strata="evidence_type", settings=PairedSettings(n_boot=10))


# ----------------------------------------------------------------------------- frame helper

def test_frame_groups_and_per_series_rows_match_matrix_engine():
    base, comp = latent_paired(60, 3, seed=3)
    ev = np.repeat(["e1", "e2"], 30)
    df = to_long(base, comp, extra={"evidence_type": ev})
    g = paired_bootstrap_frame(df, groups="evidence_type", settings=PairedSettings(n_boot=800, seed=9))
    assert list(g.columns) == ["evidence_type"] + RESULT_COLUMNS
    assert g["evidence_type"].tolist() == ["e1", "e1", "e2", "e2"]
    for e in ("e1", "e2"):
        sel = ev == e
        m = paired_bootstrap_matrix(base[sel], comp[sel], n_boot=800, seed=9)
        pd.testing.assert_frame_equal(
            g[g.evidence_type == e].drop(columns="evidence_type").reset_index(drop=True), m)
    p = paired_bootstrap_frame(df, settings=PairedSettings(aggregate=None, n_boot=800, seed=9))
    assert list(p.columns) == ["model"] + RESULT_COLUMNS
    m = paired_bootstrap_matrix(base, comp, aggregate=None, series=["m0", "m1", "m2"],
                                n_boot=800, seed=9).rename(columns={"series": "model"})
    pd.testing.assert_frame_equal(p, m)


def test_frame_accepts_polars_with_enum_condition():
    base, comp = latent_paired(50, 2, seed=8)
    df = to_long(base, comp)
    pdf = pl.from_pandas(df).with_columns(
        pl.col("budget").cast(pl.Enum(["8K", "16K", "32K", "64K"])))
    pd.testing.assert_frame_equal(paired_bootstrap_frame(pdf, settings=PairedSettings(n_boot=500)),
                                  paired_bootstrap_frame(df, settings=PairedSettings(n_boot=500)))
    pd.testing.assert_frame_equal(paired_bootstrap_frame(pdf.lazy(), settings=PairedSettings(n_boot=500)),
                                  paired_bootstrap_frame(df, settings=PairedSettings(n_boot=500)))


def test_frame_is_label_agnostic_and_allows_rising_accuracy():
    # Generic column names, integer conditions, comparison better than baseline.
    comp, base = latent_paired(80, 2, seed=12)      # swapped: accuracy rises
    df = to_long(base, comp, labels=(1, 2)).rename(columns={
        "question_id": "unit", "model": "rater", "budget": "round", "correct": "score"})
    df["score"] = df["score"].astype(float)
    out = paired_bootstrap_frame(df, item="unit", series="rater", condition="round",
                                 value="score", baseline=1, comparison=2, settings=PairedSettings(n_boot=1000)).set_index("statistic")
    assert out.loc["drop", "estimate"] == pytest.approx(100 * (base.mean() - comp.mean()))
    assert out.loc["drop", "estimate"] < 0
    assert out.loc["retention", "estimate"] > 1
    assert out.loc["drop", "ci_low"] <= out.loc["drop", "estimate"] <= out.loc["drop", "ci_high"]


def test_frame_ignores_other_conditions_and_leaves_out_series_without_pairs():
    base, comp = latent_paired(30, 2, seed=1)
    df = to_long(base, comp, series=["A", "B"])
    other = df[df.budget == "8K"].assign(budget="16K")
    only_8k = pd.DataFrame({"question_id": ["q000"], "model": ["C"], "budget": ["8K"],
                            "correct": [True]})
    df2 = pd.concat([df, other, only_8k], ignore_index=True)
    pd.testing.assert_frame_equal(paired_bootstrap_frame(df2, settings=PairedSettings(n_boot=300)),
                                  paired_bootstrap_frame(df, settings=PairedSettings(n_boot=300)))
    per = paired_bootstrap_frame(df2, settings=PairedSettings(aggregate=None, statistics="drop", n_boot=300))
    assert per["model"].tolist() == ["A", "B"]


def test_custom_statistics_callable_and_mapping():
    base, comp = latent_paired(100, 3, seed=2)

    def worst_drop(b, c):
        return 100 * (b - c).max(axis=1)

    out = paired_bootstrap_matrix(
        base, comp, statistics=[worst_drop, Statistic("mean_of_ratios",
                                                      lambda b, c: (c / b).mean(axis=1))],
        n_boot=500).set_index("statistic")
    assert out.loc["worst_drop", "estimate"] == pytest.approx(
        100 * (base.mean(0) - comp.mean(0)).max())
    assert out.loc["mean_of_ratios", "estimate"] == pytest.approx(
        (comp.mean(0) / base.mean(0)).mean())
    out2 = paired_bootstrap_matrix(base, comp, statistics={"wd": worst_drop}, n_boot=500)
    assert out2["statistic"].tolist() == ["wd"]
    assert out2["ci_low"].iloc[0] == out.loc["worst_drop", "ci_low"]


def test_per_series_factories():
    b, c = np.array([[0.5], [0.4]]), np.array([[0.25], [0.1]])
    assert difference()(b, c) == pytest.approx([25.0, 30.0])
    assert difference(scale=1, reverse=True)(b, c) == pytest.approx([-0.25, -0.3])
    assert ratio()(b, c) == pytest.approx([0.5, 0.25])
    with pytest.raises(ValueError, match="exactly one series"):
        ratio()(np.ones((2, 2)), np.ones((2, 2)))
    assert set(STATISTICS) >= {"drop", "retention", "difference", "ratio", "change"}


def test_bootstrap_means_masks_and_drops_empty_rows():
    v = np.array([[1.0, 0.0], [0.0, np.nan], [1.0, 1.0], [np.nan, np.nan]])
    res = bootstrap_means(v, n_boot=400, seed=0)
    assert res.estimate == pytest.approx([2 / 3, 0.5])
    assert res.n.tolist() == [3, 2] and res.n_units == 3
    assert res.replicates.shape == (400, 2)
    assert np.nanmin(res.replicates) >= 0 and np.nanmax(res.replicates) <= 1


# ----------------------------------------------------------------------------- validation

@pytest.mark.parametrize("kwargs, match", [
    ({"n_boot": 0}, "n_boot must be a positive integer"),
    ({"seed": -1}, "seed must be a non-negative integer"),
    ({"seed": 1.5}, "seed must be a non-negative integer"),
    ({"ci_level": 95}, "ci_level must be a confidence level"),
    ({"statistic": "mean"}, "unknown statistic 'mean'"),
    ({"statistic": []}, "statistics is empty"),
    ({"statistic": ["drop", "drop"]}, "must be unique"),
    ({"statistic": lambda b, c: b}, "must return an array of shape"),
])
def test_bad_arguments_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        paired_bootstrap([1, 0, 1], [1, 1, 0], **kwargs)


def test_bad_inputs_raise_value_error():
    with pytest.raises(ValueError, match="same length"):
        paired_bootstrap([1, 0, 1], [1, 1])
    with pytest.raises(MissingDataError, match="no item is judged"):   # the data lacks pairs: skipped in a section
        paired_bootstrap([np.nan, 1], [1, np.nan])
    with pytest.raises(ValueError, match="same shape"):
        paired_bootstrap_matrix(np.ones((3, 2)), np.ones((3, 1)))
    with pytest.raises(ValueError, match="mask must have the shape"):
        paired_bootstrap_matrix(np.ones((3, 2)), np.ones((3, 2)), np.ones((2, 2), bool))
    with pytest.raises(ValueError, match="aggregate must be"):
        paired_bootstrap_matrix(np.ones((3, 2)), np.ones((3, 2)), aggregate="median")
    with pytest.raises(ValueError, match="found inf"):
        paired_bootstrap([1, np.inf], [1, 0])
    with pytest.raises(ValueError, match="strata must be one label per item"):
        paired_bootstrap([1, 0, 1], [1, 1, 0], strata=["a", "b"])


def test_frame_bad_inputs_raise_value_error():
    base, comp = latent_paired(5, 2, seed=0)
    df = to_long(base, comp)
    with pytest.raises(ValueError, match=r"unknown column\(s\) \['answer'\]"):
        paired_bootstrap_frame(df, value="answer")
    with pytest.raises(ValueError, match="comparison '32K' does not occur"):
        paired_bootstrap_frame(df, comparison="32K")
    with pytest.raises(ValueError, match="duplicated"):
        paired_bootstrap_frame(pd.concat([df, df.iloc[[0]]]), settings=PairedSettings(n_boot=10))
    with pytest.raises(ValueError, match="must be a pandas or polars DataFrame"):
        paired_bootstrap_frame({"a": [1]})
    with pytest.raises(ValueError, match="clash"):
        paired_bootstrap_frame(df.assign(n=1), groups="n")


# ----------------------------------------------------------------------------- shared count matrices
def test_shared_counts_are_the_iterated_counts_drawn_once_and_read_only(monkeypatch):
    from voxmem_analysis.stats import resampling as B

    monkeypatch.setattr(B, "_SHARED_COUNTS", {})
    strata = np.array(["b", "a", "b", "c", "a", "b", "c"], dtype=object)
    for kw in ({}, {"strata": strata}):
        want = np.vstack(list(B.iter_bootstrap_counts(7, n_boot=2_500, seed=3, **kw)))
        got = B.shared_bootstrap_counts(7, n_boot=2_500, seed=3, **kw)
        np.testing.assert_array_equal(np.vstack(got), want)
        assert B.shared_bootstrap_counts(7, n_boot=2_500, seed=3, **kw) is got      # drawn once
        assert not any(b.flags.writeable for b in got)
        with pytest.raises(ValueError):
            got[0][0, 0] = 99.0
    # the key is the partition into strata (sorted label order), not the labels' type
    codes = pd.factorize(strata, sort=True)[0]
    assert B.shared_bootstrap_counts(7, n_boot=2_500, seed=3, strata=codes) is \
        B.shared_bootstrap_counts(7, n_boot=2_500, seed=3, strata=strata)
    # another seed, size or partition is another matrix
    assert B.shared_bootstrap_counts(7, n_boot=2_500, seed=4) is not B.shared_bootstrap_counts(7, n_boot=2_500, seed=3)
    other = np.array(["a", "a", "b", "c", "a", "b", "c"], dtype=object)
    assert B.shared_bootstrap_counts(7, n_boot=2_500, seed=3, strata=other) is not \
        B.shared_bootstrap_counts(7, n_boot=2_500, seed=3, strata=strata)
    # the public iterator still yields fresh, writable blocks
    block = next(B.iter_bootstrap_counts(7, n_boot=10, seed=3))
    block[0, 0] = 1.0


def test_shared_counts_keep_at_most_their_byte_budget(monkeypatch):
    from voxmem_analysis.stats import resampling as B

    monkeypatch.setattr(B, "_SHARED_COUNTS", {})
    monkeypatch.setattr(B, "_SHARED_COUNTS_BYTES", 3 * 1_000 * 10 * 8)    # three 1,000 x 10 matrices
    first = B.shared_bootstrap_counts(10, n_boot=1_000, seed=0)
    for seed in (1, 2, 3):
        B.shared_bootstrap_counts(10, n_boot=1_000, seed=seed)
    assert len(B._SHARED_COUNTS) == 3
    assert B.shared_bootstrap_counts(10, n_boot=1_000, seed=0) is not first   # the oldest was dropped
    np.testing.assert_array_equal(np.vstack(B.shared_bootstrap_counts(10, n_boot=1_000, seed=0)), np.vstack(first))
    big = B.shared_bootstrap_counts(40, n_boot=1_000, seed=0)                  # over half the budget: not kept
    assert B.shared_bootstrap_counts(40, n_boot=1_000, seed=0) is not big
    assert all(k[0] != 40 for k in B._SHARED_COUNTS)
    with pytest.raises(Exception, match="n_units"):
        B.shared_bootstrap_counts(0)
