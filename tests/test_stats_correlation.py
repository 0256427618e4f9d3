"""Spearman correlation (voxmem_analysis.stats.correlation)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from scipy.stats import spearmanr

from voxmem_analysis.stats import spearman


def test_columns_and_hand_computed():
    out = spearman([1, 2, 3, 4], [10, 20, 40, 30])
    assert list(out.columns) == ["n", "n_dropped", "rho", "p_value", "rho_ci_low", "rho_ci_high",
                                 "ci_level"]
    # d = (0, 0, 1, -1): rho = 1 - 6 * 2 / (4 * 15) = 0.8
    assert out["rho"].iloc[0] == pytest.approx(0.8)
    assert out["n"].iloc[0] == 4 and out["n_dropped"].iloc[0] == 0


@settings(max_examples=150, deadline=None)
@given(hst.lists(hst.tuples(hst.integers(0, 6), hst.floats(-5, 5, allow_nan=False)),
                 min_size=3, max_size=60))
def test_matches_scipy_with_ties(pairs):
    x = np.array([a for a, _ in pairs], dtype=float)
    y = np.array([b for _, b in pairs], dtype=float)
    ours = spearman(x, y).iloc[0]
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        assert np.isnan(ours["rho"]) and np.isnan(ours["p_value"])
        return
    ref = spearmanr(x, y)
    assert ours["rho"] == pytest.approx(ref.statistic, abs=1e-12)
    assert ours["p_value"] == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)


def test_nan_pairs_are_dropped_and_counted():
    rng = np.random.default_rng(1)
    x = rng.normal(size=40)
    y = x + rng.normal(size=40)
    x[[3, 7]] = np.nan
    y[[7, 20, 21]] = np.nan
    out = spearman(x, y).iloc[0]
    keep = ~np.isnan(x) & ~np.isnan(y)
    ref = spearmanr(x[keep], y[keep])
    assert (out["n"], out["n_dropped"]) == (36, 4)
    assert out["rho"] == pytest.approx(ref.statistic)
    assert out["p_value"] == pytest.approx(ref.pvalue)


def test_degenerate_samples():
    two = spearman([1, 2], [2, 1]).iloc[0]
    assert two["rho"] == pytest.approx(-1.0) and np.isnan(two["p_value"])
    perfect = spearman([1, 2, 3, 4], [1, 5, 7, 9]).iloc[0]
    assert perfect["rho"] == 1.0 and perfect["p_value"] == 0.0
    assert np.isnan(spearman([1, 1, 1], [1, 2, 3])["rho"].iloc[0])
    assert spearman([None, 1.0], [1.0, None])["n"].iloc[0] == 0


def test_bad_input():
    with pytest.raises(ValueError, match="same length"):
        spearman([1, 2, 3], [1, 2])
    with pytest.raises(ValueError, match="infinite"):
        spearman([1, np.inf, 3], [1, 2, 3])
