"""Cohen's kappa (voxmem_analysis.stats.agreement)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from sklearn.metrics import cohen_kappa_score

from voxmem_analysis.stats import cohen_kappa


def test_columns_and_hand_computed():
    out = cohen_kappa([1, 1, 0, 0, 1, 0, 1, 1], [1, 0, 0, 0, 1, 0, 1, 1])
    assert list(out.columns) == ["n", "n_dropped", "agreement", "kappa", "n11", "n10", "n01",
                                 "n00", "kappa_se", "kappa_ci_low", "kappa_ci_high", "ci_level"]
    row = out.iloc[0]
    assert (row["n11"], row["n10"], row["n01"], row["n00"]) == (4, 1, 0, 3)
    # po = 7/8, pe = 5/8 * 4/8 + 3/8 * 4/8 = 1/2 -> kappa = 0.75
    assert row["agreement"] == pytest.approx(0.875)
    assert row["kappa"] == pytest.approx(0.75)


@settings(max_examples=80, deadline=None)
@given(hst.lists(hst.tuples(hst.booleans(), hst.booleans()), min_size=1, max_size=200))
def test_matches_sklearn(pairs):
    a = np.array([p for p, _ in pairs], dtype=int)
    b = np.array([q for _, q in pairs], dtype=int)
    row = cohen_kappa(a, b).iloc[0]
    assert row["n11"] + row["n10"] + row["n01"] + row["n00"] == row["n"] == len(pairs)
    assert row["agreement"] == pytest.approx((a == b).mean())
    if len(set(a)) == 1 and len(set(b)) == 1 and a[0] == b[0]:
        assert np.isnan(row["kappa"])          # p_e = 1: undefined
    else:
        assert row["kappa"] == pytest.approx(cohen_kappa_score(a, b), abs=1e-12)


def test_missing_ratings_are_dropped():
    row = cohen_kappa([True, False, None, True], [True, np.nan, False, False]).iloc[0]
    assert (row["n"], row["n_dropped"], row["n11"], row["n10"]) == (2, 2, 1, 1)
    empty = cohen_kappa([None], [1]).iloc[0]
    assert empty["n"] == 0 and np.isnan(empty["agreement"]) and np.isnan(empty["kappa"])


def test_bad_input():
    with pytest.raises(ValueError, match="b must be binary"):
        cohen_kappa([0, 1], [0, 2])
    with pytest.raises(ValueError, match="same length"):
        cohen_kappa([0, 1], [0])
