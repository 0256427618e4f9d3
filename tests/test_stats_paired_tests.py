"""Exact McNemar test and Holm adjustment (voxmem_analysis.stats.tests)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests

from voxmem_analysis.stats import holm, mcnemar_exact


def _table(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return [[int(((x == 0) & (y == 0)).sum()), int(((x == 0) & (y == 1)).sum())],
            [int(((x == 1) & (y == 0)).sum()), int(((x == 1) & (y == 1)).sum())]]


def test_mcnemar_hand_computed():
    x = [1, 1, 1, 1, 1, 1, 0, 0, 1, 0]
    y = [0, 0, 0, 0, 0, 1, 0, 1, 1, 0]
    row = mcnemar_exact(x, y).iloc[0]
    assert list(mcnemar_exact(x, y).columns) == ["n", "n_dropped", "n01", "n10", "statistic",
                                                 "p_value"]
    assert (row["n"], row["n01"], row["n10"], row["statistic"]) == (10, 1, 5, 1)
    assert row["p_value"] == pytest.approx(2 * 7 / 64)     # 2 P(Bin(6, 1/2) <= 1)


@settings(max_examples=150, deadline=None)
@given(hst.lists(hst.tuples(hst.booleans(), hst.booleans()), min_size=1, max_size=120))
def test_mcnemar_matches_statsmodels_exact(pairs):
    x = np.array([a for a, _ in pairs], dtype=int)
    y = np.array([b for _, b in pairs], dtype=int)
    ours = mcnemar_exact(x, y).iloc[0]
    ref = mcnemar(_table(x, y), exact=True)
    assert ours["statistic"] == ref.statistic
    assert ours["p_value"] == pytest.approx(ref.pvalue, rel=1e-12, abs=1e-300)


def test_mcnemar_large_sample_and_no_discordance():
    rng = np.random.default_rng(0)
    x = rng.random(799) < 0.3
    y = x & (rng.random(799) < 0.7)
    ours = mcnemar_exact(x, y).iloc[0]
    ref = mcnemar(_table(x, y), exact=True)
    assert ours["n01"] == 0 and ours["n10"] == (x & ~y).sum()
    assert ours["p_value"] == pytest.approx(ref.pvalue, rel=1e-10)
    same = mcnemar_exact([1, 0, 1], [1, 0, 1]).iloc[0]
    assert same["p_value"] == 1.0 and same["statistic"] == 0


def test_mcnemar_drops_incomplete_pairs_and_accepts_bool():
    out = mcnemar_exact([True, False, None, True], [False, np.nan, True, True]).iloc[0]
    assert (out["n"], out["n_dropped"], out["n10"], out["n01"]) == (2, 2, 1, 0)


@pytest.mark.parametrize("x, y, match", [
    ([0, 1, 2], [0, 1, 1], "x must be binary"),
    ([0, 1], [0, 1, 1], "same length"),
    ([[0, 1]], [[0, 1]], "one-dimensional"),
    (["a", "b"], [0, 1], "numeric or boolean"),
])
def test_mcnemar_bad_input(x, y, match):
    with pytest.raises(ValueError, match=match):
        mcnemar_exact(x, y)


def test_holm_hand_computed():
    out = holm([0.01, 0.04, 0.03, 0.20])
    assert list(out.columns) == ["p_value", "p_adjusted", "reject"]
    # sorted 0.01, 0.03, 0.04, 0.20 -> 0.04, 0.09, max(0.09, 0.08), max(0.09, 0.20)
    assert out["p_adjusted"].tolist() == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert out["reject"].tolist() == [True, False, False, False]


def _families():
    rng = np.random.default_rng(2024)
    yield [0.5]
    yield [0.0, 0.0, 1.0, 1.0]
    yield [0.01, 0.01, 0.02, 0.02, 0.5]                 # ties
    yield [0.001, 0.2, 0.0125, 0.0126, 0.013, 0.9]       # step-down boundary
    for size in (3, 17, 50):
        yield rng.random(size).tolist()
    yield (rng.random(30) ** 6).tolist()                 # many small p-values


# statsmodels' multipletests runs gc.collect() on every call (~0.1-0.3 s), so it is the
# reference on a fixed set of families; the property test uses the O(m^2) definition instead.
@pytest.mark.parametrize("p", list(_families()))
@pytest.mark.parametrize("alpha", [0.05])
def test_holm_matches_statsmodels(p, alpha):
    reject, adj, _, _ = multipletests(p, alpha=alpha, method="holm")
    out = holm(p, alpha=alpha)
    np.testing.assert_allclose(out["p_adjusted"], adj, rtol=1e-12, atol=0)
    assert out["reject"].tolist() == reject.tolist()


@settings(max_examples=150, deadline=None)
@given(hst.lists(hst.floats(0, 1), min_size=1, max_size=40))
def test_holm_matches_definition(p):
    q = np.asarray(p)
    m = q.size
    order = np.argsort(q, kind="stable")
    ref = np.empty(m)
    for i in range(m):
        ref[order[i]] = min(1.0, max((m - j) * q[order[j]] for j in range(i + 1)))
    np.testing.assert_allclose(holm(p)["p_adjusted"], ref, rtol=1e-12, atol=0)


def test_holm_leaves_nan_out_of_the_family():
    out = holm([0.01, np.nan, 0.02])
    ref = multipletests([0.01, 0.02], method="holm")[1]
    assert np.isnan(out["p_adjusted"].iloc[1]) and not out["reject"].iloc[1]
    assert out["p_adjusted"].iloc[[0, 2]].tolist() == pytest.approx(ref.tolist())


@pytest.mark.parametrize("p, kw, match", [
    ([0.1, 1.2], {}, r"in \[0, 1\]"),
    ([0.1], {"alpha": 0}, "alpha must lie"),
])
def test_holm_bad_input(p, kw, match):
    with pytest.raises(ValueError, match=match):
        holm(p, **kw)
