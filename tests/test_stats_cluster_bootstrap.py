"""Cluster (family) resampling, BCa intervals and Monte-Carlo standard errors of the bootstrap engine."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from voxmem_analysis.stats import PairedSettings, iter_bootstrap_counts, paired_bootstrap, paired_bootstrap_frame


def _families(n_fam: int, k: int, seed: int, share: float = 0.8) -> pd.DataFrame:
    """Long frame: families of 1-3 questions whose answers are strongly correlated within a family."""
    rng = np.random.default_rng(seed)
    rows = []
    q = 0
    for f in range(n_fam):
        size = 1 + rng.integers(0, 3)
        for m in range(k):
            p8 = rng.uniform(0.3, 0.8)
            base = rng.random() < p8                       # the family's shared outcome at 8K
            lose = rng.random() < 0.3
            for j in range(size):
                b = base if rng.random() < share else rng.random() < p8
                c = b and not (lose if rng.random() < share else rng.random() < 0.3)
                rows += [(f"q{q + j}", f"f{f}", f"M{m}", "8K", b), (f"q{q + j}", f"f{f}", f"M{m}", "64K", c)]
        q += size
    return pd.DataFrame(rows, columns=["question_id", "family", "model", "budget", "correct"])


def _family_bootstrap_by_hand(df: pd.DataFrame, n_boot: int, seed: int) -> np.ndarray:
    """Independent reference: draw families with replacement, stack their rows, recompute the mean drop."""
    rng = np.random.default_rng(seed)
    w = df.pivot_table(index=["family", "question_id"], columns=["model", "budget"], values="correct",
                       aggfunc="first").astype(float)
    fams = w.index.get_level_values(0).to_numpy()
    labels, codes = np.unique(fams, return_inverse=True)
    rows_of = [np.flatnonzero(codes == i) for i in range(len(labels))]
    models = sorted(df["model"].unique())
    b = np.stack([w[(m, "8K")].to_numpy() for m in models], 1)
    c = np.stack([w[(m, "64K")].to_numpy() for m in models], 1)
    out = np.empty(n_boot)
    for r in range(n_boot):
        pick = np.concatenate([rows_of[i] for i in rng.integers(0, len(labels), len(labels))])
        out[r] = 100 * (b[pick].mean(0).mean() - c[pick].mean(0).mean())
    return out


def test_family_interval_matches_an_independent_family_bootstrap():
    df = _families(150, 3, seed=1)
    ours = paired_bootstrap_frame(df, cluster="family", settings=PairedSettings(statistics="drop", n_boot=4000, seed=3)).iloc[0]
    ref = _family_bootstrap_by_hand(df, 4000, seed=99)
    lo, hi = np.percentile(ref, [2.5, 97.5])
    assert ours["cluster"] == "family" and ours["n_clusters"] == 150
    # the two runs use different random streams: agree within Monte-Carlo error (4 SE of the difference)
    tol_lo = 4 * np.sqrt(2) * ours["ci_low_mc_se"]
    tol_hi = 4 * np.sqrt(2) * ours["ci_high_mc_se"]
    assert abs(ours["ci_low"] - lo) < tol_lo
    assert abs(ours["ci_high"] - hi) < tol_hi
    # and the design effect is the variance ratio of the two bootstraps (> 1: families are correlated)
    item = paired_bootstrap_frame(df, settings=PairedSettings(statistics="drop", n_boot=4000, seed=3)).iloc[0]
    assert item["design_effect"] == 1.0 and item["cluster"] == "item"
    assert ours["design_effect"] > 1.2
    assert ours["ci_high"] - ours["ci_low"] > item["ci_high"] - item["ci_low"]


def test_duplicated_items_have_design_effect_two():
    """Families of two identical questions: the variance of a mean doubles under family resampling."""
    rng = np.random.default_rng(0)
    x = (rng.random(300) < 0.6).astype(float)
    y = np.where(rng.random(300) < 0.8, x, 1 - x)
    xs, ys = np.repeat(x, 2), np.repeat(y, 2)
    fam = np.repeat(np.arange(300), 2)
    out = paired_bootstrap(xs, ys, "difference", clusters=fam, n_boot=6000, seed=0).iloc[0]
    assert out["n_clusters"] == 300
    # item resampling of 600 rows ~ var/600; family resampling of 300 pairs ~ var/300
    assert out["design_effect"] == pytest.approx(2.0, rel=0.1)


def test_cluster_counts_expand_whole_clusters():
    cl = np.array(["a", "a", "b", "c", "c", "c"])
    C = np.vstack(list(iter_bootstrap_counts(6, n_boot=50, seed=2, clusters=cl)))
    assert (C[:, 0] == C[:, 1]).all() and (C[:, 3] == C[:, 4]).all() and (C[:, 4] == C[:, 5]).all()
    # three clusters drawn per resample
    assert (C[:, 0] + C[:, 2] + C[:, 3] == 3).all()


def test_cluster_must_be_constant_within_item_and_present():
    df = _families(5, 1, seed=0)
    bad = df.copy()
    bad.loc[0, "family"] = "other"
    with pytest.raises(ValueError, match="constant within an item"):
        paired_bootstrap_frame(bad, cluster="family", settings=PairedSettings(n_boot=10))
    bad = df.copy()
    bad["family"] = bad["family"].astype(object)
    bad.loc[bad["question_id"] == "q0", "family"] = None
    with pytest.raises(ValueError, match="missing values"):
        paired_bootstrap_frame(bad, cluster="family", settings=PairedSettings(n_boot=10))


# ----------------------------------------------------------------------------- Monte-Carlo error
def test_mc_se_predicts_the_seed_to_seed_spread_of_the_endpoints():
    rng = np.random.default_rng(5)
    x = (rng.random(250) < 0.55).astype(float)
    y = np.where(rng.random(250) < 0.75, x, rng.random(250) < 0.4).astype(float)
    runs = pd.concat([paired_bootstrap(x, y, "drop", n_boot=1000, seed=s) for s in range(40)])
    for end in ("ci_low", "ci_high"):
        spread = runs[end].std(ddof=1)
        predicted = runs[f"{end}_mc_se"].mean()
        assert 0.6 < spread / predicted < 1.6, (end, spread, predicted)


def test_mc_se_shrinks_like_one_over_root_n_boot():
    rng = np.random.default_rng(6)
    x, y = rng.normal(size=300), rng.normal(0.2, 1, size=300)
    se1 = paired_bootstrap(x, y, n_boot=2000, seed=0)["ci_low_mc_se"].iloc[0]
    se4 = paired_bootstrap(x, y, n_boot=32000, seed=0)["ci_low_mc_se"].iloc[0]
    assert se1 / se4 == pytest.approx(4.0, rel=0.3)


# ----------------------------------------------------------------------------- BCa
def test_bca_matches_scipy_within_monte_carlo_error():
    rng = np.random.default_rng(7)
    x = rng.exponential(1.0, size=60)                 # skewed: BCa differs from percentile
    y = x * rng.uniform(0.2, 1.0, size=60)
    ours = paired_bootstrap(x, y, "difference", interval="bca", n_boot=20000, seed=1).iloc[0]
    ref = st.bootstrap((x, y), lambda a, b, axis=-1: a.mean(axis) - b.mean(axis), paired=True,
                       n_resamples=20000, method="BCa", random_state=np.random.default_rng(2)).confidence_interval
    assert ours["interval"] == "bca"
    assert abs(ours["ci_low"] - ref.low) < 4 * np.sqrt(2) * ours["ci_low_mc_se"]
    assert abs(ours["ci_high"] - ref.high) < 4 * np.sqrt(2) * ours["ci_high_mc_se"]
    pct = paired_bootstrap(x, y, "difference", n_boot=20000, seed=1).iloc[0]
    assert ours["ci_high"] > pct["ci_high"]          # right skew moves the BCa interval up


def test_unknown_interval_is_refused():
    with pytest.raises(ValueError, match="interval must be one of"):
        paired_bootstrap([1, 0, 1], [0, 0, 1], interval="studentized")
