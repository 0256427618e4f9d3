"""Every library-backed statistic against an independent reference (hand formula or SciPy).

statsmodels now computes Wilson, exact McNemar, Cohen's kappa (with SE) and the power
calculations; pingouin Spearman (with CI) and Cochran's Q.  The references below do not go
through those libraries.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy import stats as st

from voxmem_analysis.stats import cochran_q, cohen_kappa, mcnemar_exact, spearman, wilson_interval


# ----------------------------------------------------------------------------- Wilson
def _wilson_hand(x: float, n: float, ci: float) -> tuple[float, float]:
    z = st.norm.ppf(1 - (1 - ci) / 2)
    p = x / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


@settings(max_examples=120, deadline=None)
@given(hst.integers(1, 2000), hst.floats(0, 1), hst.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_wilson_equals_the_score_formula(n, frac, ci):
    x = int(round(frac * n))
    row = wilson_interval(x, n, ci_level=ci).iloc[0]
    lo, hi = _wilson_hand(x, n, ci)
    assert row["ci_low"] == pytest.approx(lo, abs=1e-12)
    assert row["ci_high"] == pytest.approx(hi, abs=1e-12)


def test_wilson_paper_cell():
    # 18 of 30: hand value from the formula, 4 decimals
    row = wilson_interval(18, 30).iloc[0]
    assert (round(row["ci_low"], 4), round(row["ci_high"], 4)) == (0.4232, 0.7541)


# ----------------------------------------------------------------------------- McNemar
@settings(max_examples=120, deadline=None)
@given(hst.lists(hst.tuples(hst.integers(0, 1), hst.integers(0, 1)), min_size=1, max_size=150))
def test_mcnemar_equals_binomial_test(pairs):
    x = np.array([a for a, _ in pairs])
    y = np.array([b for _, b in pairs])
    row = mcnemar_exact(x, y).iloc[0]
    n01, n10 = int(((x == 0) & (y == 1)).sum()), int(((x == 1) & (y == 0)).sum())
    ref = 1.0 if n01 + n10 == 0 else st.binomtest(n01, n01 + n10, 0.5).pvalue
    assert (row["n01"], row["n10"]) == (n01, n10)
    assert row["p_value"] == pytest.approx(min(1.0, ref), rel=1e-9, abs=1e-15)


# ----------------------------------------------------------------------------- kappa
def _kappa_hand(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """kappa and its large-sample SE (Fleiss, Cohen & Everitt 1969), from the 2x2 table."""
    n = len(a)
    t = np.array([[np.sum((a == i) & (b == j)) for j in (1, 0)] for i in (1, 0)], float) / n
    r, c = t.sum(1), t.sum(0)
    po, pe = np.trace(t), float(r @ c)
    k = (po - pe) / (1 - pe)
    diag = sum(t[i, i] * ((1 - pe) - (r[i] + c[i]) * (1 - po)) ** 2 for i in range(2))
    off = (1 - po) ** 2 * sum(t[i, j] * (c[i] + r[j]) ** 2 for i in range(2) for j in range(2) if i != j)
    var = (diag + off - (po * pe - 2 * pe + po) ** 2) / (n * (1 - pe) ** 4)
    return k, float(np.sqrt(max(var, 0.0)))


@settings(max_examples=80, deadline=None)
@given(hst.lists(hst.tuples(hst.booleans(), hst.booleans()), min_size=4, max_size=200))
def test_kappa_and_se_equal_the_fleiss_formula(pairs):
    a = np.array([p for p, _ in pairs], dtype=int)
    b = np.array([q for _, q in pairs], dtype=int)
    row = cohen_kappa(a, b, ci_level=0.9).iloc[0]
    pa, pb = a.mean(), b.mean()
    if pa * pb + (1 - pa) * (1 - pb) >= 1:
        assert np.isnan(row["kappa"]) and np.isnan(row["kappa_se"])
        return
    k, se = _kappa_hand(a, b)
    assert row["kappa"] == pytest.approx(k, abs=1e-12)
    assert row["kappa_se"] == pytest.approx(se, rel=1e-9, abs=1e-6)  # var 0 up to rounding
    z = st.norm.ppf(0.95)
    assert row["kappa_ci_low"] == pytest.approx(max(-1.0, k - z * se), abs=1e-6)
    assert row["kappa_ci_high"] == pytest.approx(min(1.0, k + z * se), abs=1e-6)


def test_kappa_hand_example():
    # table [[4, 1], [0, 3]]: kappa 0.75, SE 0.2264 (hand, formula above)
    row = cohen_kappa([1, 1, 0, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 0, 1, 1]).iloc[0]
    assert row["kappa"] == pytest.approx(0.75)
    assert round(row["kappa_se"], 4) == 0.2264
    assert round(row["kappa_ci_low"], 4) == 0.3062 and row["kappa_ci_high"] == 1.0


# ----------------------------------------------------------------------------- Spearman
@settings(max_examples=60, deadline=None)
@given(hst.lists(hst.tuples(hst.integers(0, 9), hst.floats(-5, 5, allow_nan=False)), min_size=4, max_size=60),
       hst.sampled_from([0.9, 0.95]))
def test_spearman_ci_is_fisher_z_of_scipy_rho(pairs, ci):
    x = np.array([a for a, _ in pairs], float)
    y = np.array([b for _, b in pairs], float)
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return
    row = spearman(x, y, ci_level=ci).iloc[0]
    ref = st.spearmanr(x, y)
    assert row["rho"] == pytest.approx(ref.statistic, abs=1e-12)
    if abs(ref.statistic) < 1:
        assert row["p_value"] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
        z, h = np.arctanh(ref.statistic), st.norm.ppf(0.5 + ci / 2) / np.sqrt(len(x) - 3)
        assert row["rho_ci_low"] == pytest.approx(np.tanh(z - h), abs=1e-12)
        assert row["rho_ci_high"] == pytest.approx(np.tanh(z + h), abs=1e-12)


def test_spearman_ci_needs_four_pairs():
    row = spearman([1, 2, 3], [1, 3, 2]).iloc[0]
    assert row["rho"] == pytest.approx(0.5) and np.isnan(row["rho_ci_low"])


# ----------------------------------------------------------------------------- Cochran's Q
def _cochran_hand(X: np.ndarray) -> tuple[float, float]:
    k = X.shape[1]
    C, R, T = X.sum(0), X.sum(1), X.sum()
    q = (k - 1) * (k * np.sum(C ** 2) - T ** 2) / (k * T - np.sum(R ** 2))
    return q, st.chi2.sf(q, k - 1)


@settings(max_examples=60, deadline=None)
@given(hst.integers(3, 6), hst.integers(4, 80), hst.integers(0, 2**31 - 1))
def test_cochran_q_equals_the_formula(k, n, seed):
    X = (np.random.default_rng(seed).random((n, k)) < np.linspace(0.3, 0.7, k)).astype(float)
    row = cochran_q(X).iloc[0]
    R = X.sum(1)
    if not ((R > 0) & (R < k)).any():
        assert np.isnan(row["statistic"])
        return
    q, p = _cochran_hand(X)
    assert row["statistic"] == pytest.approx(q, rel=1e-10)
    assert row["p_value"] == pytest.approx(p, rel=1e-9, abs=1e-15)
    assert (row["k"], row["dof"], row["n"]) == (k, k - 1, n)


def test_cochran_q_drops_incomplete_items_and_needs_three():
    X = np.array([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0], [np.nan, 1, 0]])
    row = cochran_q(X).iloc[0]
    assert (row["n"], row["n_dropped"]) == (5, 1)
    assert row["statistic"] == pytest.approx(28 / 6)        # hand: 2 (3*21 - 49) / (21 - 15)
    with pytest.raises(ValueError, match="3 or more"):
        cochran_q(X[:, :2])


# ----------------------------------------------------------------------------- import cost
def test_libraries_load_lazily():
    """The stats package imports neither statsmodels nor pingouin until a function needs them."""
    import subprocess

    code = ("import sys, voxmem_analysis.stats, voxmem_analysis.cli; "
            "print('statsmodels' in sys.modules, 'pingouin' in sys.modules, 'seaborn' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False", "False"]
