"""BCa's bias correction and acceleration decided exactly on the counts (issue 23, statistics).

The drop of one series is ``100 (S_b - S_c) / N`` on every resample: a lattice of step 100 / n.  In
floats, resamples with the same ``S_b - S_c`` but different ``S_b`` round differently, so ``==``
against the estimate misses exact ties (and ``<`` misorders them).  Each test recomputes the BCa
interval independently -- its own count matrix product, :class:`fractions.Fraction` ties, an exact
jackknife -- and compares with the engine.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy.stats import norm

from voxmem_analysis.stats import iter_bootstrap_counts, paired_bootstrap, paired_bootstrap_matrix
from voxmem_analysis.stats.endpoints import bootstrap_interval
from voxmem_analysis.stats.exact import (exact_acceleration, exact_order, flat_jackknife, mean_ratio_order)
from voxmem_analysis.stats.paired_statistics import STATISTICS

@pytest.fixture(scope="module")
def synthetic():
    from conftest import SYNTHETIC
    from voxmem_analysis import load_release

    return load_release(SYNTHETIC)


# a constructed case: 30 items, the engine's resamples with seed 0
X30 = np.array([1, 1, 1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 0, 1, 0], float)
Y30 = np.array([0, 0, 1, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 1, 1, 1, 0, 1, 0, 1, 0, 1, 1, 0, 0, 0, 1, 0, 0, 0], float)


def _bca_by_hand(x: np.ndarray, y: np.ndarray, n_boot: int, seed: int, *, exact: bool):
    """BCa of the drop 100 (mean x - mean y), written out: ``(endpoints, below, ties, a)``."""
    n = x.size
    C = np.vstack(list(iter_bootstrap_counts(n, n_boot=n_boot, seed=seed)))
    sb, sc, sn = C @ x, C @ y, C.sum(axis=1)
    reps = 100.0 * (sb / sn - sc / sn)                      # as floats compute it
    est = 100.0 * (x.sum() / n - y.sum() / n)
    if exact:   # on the integers: (S_b - S_c) / n against (s_b - s_c) / n, the same n
        d, e = (sb - sc).astype(np.int64), int(x.sum() - y.sum())
        below, ties = int((d < e).sum()), int((d == e).sum())
        jack = [Fraction(int(x.sum() - x[i] - y.sum() + y[i]), n - 1) for i in range(n)]
        mean = sum(jack, Fraction(0)) / n
        dev = [mean - j for j in jack]
        s2, s3 = sum(v * v for v in dev), sum(v ** 3 for v in dev)
        a = 0.0 if s2 == 0 else float(s3) / (6.0 * float(s2) ** 1.5)
    else:       # the float comparisons the audit found
        below, ties = int((reps < est).sum()), int((reps == est).sum())
        jk = 100.0 * ((x.sum() - x) / (n - 1) - (y.sum() - y) / (n - 1))
        dev = jk.mean() - jk
        a = float((dev ** 3).sum() / (6.0 * (dev ** 2).sum() ** 1.5))
    z0 = norm.ppf((below + 0.5 * ties) / n_boot)            # mid-rank: ties count half
    zs = norm.ppf([0.025, 0.975])
    levels = norm.cdf(z0 + (z0 + zs) / (1 - a * (z0 + zs)))
    return np.quantile(reps, levels), below, ties, a


def test_float_equality_splits_exact_ties_and_the_engine_counts_them_exactly():
    (lo, hi), below, ties, _ = _bca_by_hand(X30, Y30, 2000, 0, exact=True)
    (lo_f, hi_f), below_f, ties_f, _ = _bca_by_hand(X30, Y30, 2000, 0, exact=False)
    assert (below, ties) == (917, 194)            # exact: 194 resamples equal the estimate (drop = 20 pp)
    assert (below_f, ties_f) == (917, 118)        # float ==: 76 of them missed (counted above the estimate)
    ours = paired_bootstrap(X30, Y30, "drop", n_boot=2000, seed=0, interval="bca").iloc[0]
    assert ours["ci_low"] == pytest.approx(lo, abs=1e-12) and ours["ci_high"] == pytest.approx(hi, abs=1e-12)
    assert lo == pytest.approx(-10.0) and lo_f == pytest.approx(-40 / 3)   # the float ties: one step (100/30) lower
    assert hi == pytest.approx(hi_f)


def test_table18_bca_rows_use_exact_ties(synthetic):
    """Audio-Flamingo-Next's Table 18 drop (799 items, 10,000 resamples): 435 replicates equal the
    estimate, float == finds 189, and the BCa lower bound moves by one lattice step (100/799 pp)."""
    from voxmem_analysis import artifacts
    from voxmem_analysis.analysis.selection import scored_predictions

    model = "Audio-Flamingo-Next"
    t = artifacts.compute("table18", synthetic, interval="bca", n_boot=10_000, seed=0)
    pred = scored_predictions(synthetic, models=list(t.index[5:]), budgets=["8K", "64K"], pairing="all_budgets")
    w = pred[pred["model"] == model].pivot(index="question_id", columns="budget", values="correct").sort_index()
    x, y = w["8K"].to_numpy(float), w["64K"].to_numpy(float)
    assert x.size == 799
    (lo, hi), below, ties, _ = _bca_by_hand(x, y, 10_000, 0, exact=True)
    (lo_f, _), _, ties_f, _ = _bca_by_hand(x, y, 10_000, 0, exact=False)
    assert (ties, ties_f) == (435, 189)
    row = t.loc[model]
    # Table 18 prints drop = baseline - comparison: its bounds are the engine's drop bounds
    assert row["drop_lo"] == pytest.approx(lo, abs=1e-9) and row["drop_hi"] == pytest.approx(hi, abs=1e-9)
    assert row["drop_lo"] - lo_f == pytest.approx(100 / 799, abs=1e-9)
    assert row["interval"] == "bca"


def test_a_jackknife_equal_up_to_rounding_has_no_acceleration():
    """Five items, three series, some pairs missing: every leave-one-item-out mean drop is exactly 0.
    In floats they differ by 1e-17, and the acceleration of that noise was -0.112, which moved the
    interval from [-8.9, 10.0] to [-20.0, 8.3] pp; exactly, a = 0."""
    nan = np.nan
    B = np.array([[1, 0, 1], [1, 1, nan], [0, nan, 0], [nan, 1, 0], [1, 0, 1]], float)
    C = np.array([[1, 0, 1], [1, 1, nan], [0, nan, 0], [nan, 0, 1], [1, 1, 0]], float)
    M = ~np.isnan(B)
    A = np.hstack([np.where(M, B, 0), np.where(M, C, 0), M.astype(float)])
    k = 3

    def drop(row):       # exact mean drop over the series, pp
        return 100 * sum(Fraction(int(row[j] - row[k + j]), int(row[2 * k + j])) for j in range(k)) / k

    T = A.sum(0)
    assert {drop(T - A[i]) for i in range(5)} == {Fraction(0)} and drop(T) == 0   # flat, exactly
    jb, jc = (T - A)[:, :k] / (T - A)[:, 2 * k:], (T - A)[:, k:2 * k] / (T - A)[:, 2 * k:]
    noisy = STATISTICS["drop"](jb, jc)
    dev = noisy.mean() - noisy
    assert np.abs(dev).max() < 1e-13 and (dev != 0).any()
    assert (dev ** 3).sum() / (6 * ((dev ** 2).sum()) ** 1.5) == pytest.approx(-0.1118034, abs=1e-6)
    assert flat_jackknife(noisy)

    counts = np.vstack(list(iter_bootstrap_counts(5, n_boot=2000, seed=0)))
    S = counts @ A
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = STATISTICS["drop"](S[:, :k] / S[:, 2 * k:], S[:, k:2 * k] / S[:, 2 * k:])
    ok = np.isfinite(reps)
    exact = [drop(r) for r in S[ok]]
    frac = (sum(v < 0 for v in exact) + 0.5 * sum(v == 0 for v in exact)) / ok.sum()
    z0, zs = norm.ppf(frac), norm.ppf([0.025, 0.975])
    by_hand = np.quantile(reps[ok], norm.cdf(z0 + (z0 + zs)))                     # a = 0
    out = paired_bootstrap_matrix(B, C, statistics="drop", n_boot=2000, seed=0, interval="bca").iloc[0]
    assert [out["ci_low"], out["ci_high"]] == pytest.approx(by_hand.tolist(), abs=1e-9)
    assert by_hand.tolist() == pytest.approx([-80 / 9, 10.0], abs=1e-9)
    # the noise's acceleration would have given [-20, 8.33]
    a = -0.1118034
    noisy_ends = np.quantile(reps[ok], norm.cdf(z0 + (z0 + zs) / (1 - a * (z0 + zs))))
    assert noisy_ends.tolist() == pytest.approx([-20.0, 25 / 3], abs=1e-6)
    # the float path of bootstrap_interval (no counts: e.g. a custom statistic) applies the same rule
    r = bootstrap_interval(reps, 0.0, method="bca", jackknife=noisy)
    assert [r["ci_low"], r["ci_high"]] == pytest.approx(by_hand.tolist(), abs=1e-9)


def test_exact_acceleration_by_hand():
    # values 0, 0, 1: deviations 1/3, 1/3, -2/3; sum d^2 = 2/3, sum d^3 = -2/9
    got = exact_acceleration(np.array([Fraction(0), Fraction(0), Fraction(1)], dtype=object))
    assert got == pytest.approx((-2 / 9) / (6 * (2 / 3) ** 1.5), rel=1e-15)
    assert exact_acceleration(np.array([Fraction(1, 3)] * 5, dtype=object)) == 0.0
    assert np.isnan(exact_acceleration(np.array([Fraction(1, 3)] * 2, dtype=object)))
    # the float jackknife path agrees when the values are not all equal
    r = bootstrap_interval(np.linspace(0, 1, 101), 0.5, method="bca", jackknife=[0.0, 0.0, 1.0])
    r_exact = bootstrap_interval(np.linspace(0, 1, 101), 0.5, method="bca",
                                 jackknife=np.array([Fraction(0), Fraction(0), Fraction(1)], dtype=object))
    assert r["ci_low"] == pytest.approx(r_exact["ci_low"], abs=1e-12)


def test_exact_order_against_fractions_for_every_replicate():
    """Mean drop over three series with different denominators: the order of every replicate against
    the estimate equals the one computed in Fractions for all of them (no float filter)."""
    rng = np.random.default_rng(11)
    n, k, m = 25, 3, 3000
    b = (rng.random((n, k)) < 0.5).astype(float)
    c = np.where(rng.random((n, k)) < 0.7, b, 1 - b)
    mask = rng.random((n, k)) < 0.8
    A = np.hstack([np.where(mask, b, 0), np.where(mask, c, 0), mask.astype(float)])
    counts = np.vstack(list(iter_bootstrap_counts(n, n_boot=m, seed=2)))
    S = counts @ A
    s = STATISTICS["drop"]
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = s(S[:, :k] / S[:, 2 * k:], S[:, k:2 * k] / S[:, 2 * k:])
        est = float(s(A.sum(0)[None, :k] / A.sum(0)[None, 2 * k:], A.sum(0)[None, k:2 * k] / A.sum(0)[None, 2 * k:])[0])
    order = exact_order(reps, est, s.exact, S, A.sum(0), k)

    def frac(row):
        return 100 * sum(Fraction(int(row[j] - row[k + j]), int(row[2 * k + j])) for j in range(k)) / k

    ref_est = frac(A.sum(0))
    ok = np.isfinite(reps)
    ref = np.array([(frac(r) > ref_est) - (frac(r) < ref_est) for r in S[ok]])
    assert (order[ok] == ref).all()
    assert (ref == 0).sum() > 0 and ((reps[ok] == est) != (ref == 0)).any()   # ties exist and floats miss some


def test_mean_ratio_order_and_non_integer_scores():
    num = np.array([[1, 2], [2, 4], [3, 3]], float)
    den = np.array([[3, 6], [6, 12], [9, 9]], float)
    reps = 100 * np.mean(num / den, axis=1)
    order = mean_ratio_order(reps, 100 * np.mean([1 / 3, 1 / 3]), num, den, np.array([1, 1]), np.array([3, 3]))
    assert order.tolist() == [0, 0, 0]                      # 1/3 + 2/6 = 2/6 + 4/12 = 3/9 + 3/9 = 2/3
    assert mean_ratio_order(reps, 33.3, num + 0.5, den, np.array([1, 1]), np.array([3, 3])) is None
    # non-integer scores: the engine keeps the float comparison and still gives an interval
    x = np.array([0.5, 0.25, 1.0, 0.0, 0.75, 0.5])
    out = paired_bootstrap(x, x[::-1], "drop", n_boot=500, seed=0, interval="bca").iloc[0]
    assert np.isfinite(out["ci_low"]) or out["n_invalid"] == 0


def test_percentile_endpoints_are_unchanged_and_bca_is_deterministic():
    ours = paired_bootstrap(X30, Y30, "drop", n_boot=2000, seed=0).iloc[0]
    C = np.vstack(list(iter_bootstrap_counts(30, n_boot=2000, seed=0)))
    reps = 100.0 * ((C @ X30) / 30 - (C @ Y30) / 30)
    assert [ours["ci_low"], ours["ci_high"]] == np.percentile(reps, [2.5, 97.5]).tolist()   # bit for bit
    a = paired_bootstrap(X30, Y30, ["drop", "retention"], n_boot=1500, seed=4, interval="bca")
    b = paired_bootstrap(X30, Y30, ["drop", "retention"], n_boot=1500, seed=4, interval="bca")
    assert a.equals(b)
