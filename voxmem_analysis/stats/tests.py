"""Paired hypothesis tests and multiplicity adjustment.

(The module is named ``tests`` after the statistical tests it holds; pytest only collects
``tests/test_*.py``, so the name does not clash with the test suite.)
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _st

from voxmem_analysis.stats._validation import as_float_vector, check_binary, require

__all__ = ["mcnemar_exact", "holm"]


def mcnemar_exact(x: Any, y: Any) -> pd.DataFrame:
    """Exact McNemar test for two paired binary outcomes.

    Parameters
    ----------
    x, y : array-like of bool or 0/1, shape (n,)
        Outcomes of the same items under two conditions (e.g. correct at 8K and at 64K).
        Pairs with a missing value (NaN/None) on either side are dropped.

    Returns
    -------
    pandas.DataFrame
        One row, columns:

        - ``n`` -- complete pairs used;
        - ``n_dropped`` -- pairs dropped for a missing value;
        - ``n01`` -- pairs with ``x = 0, y = 1``;
        - ``n10`` -- pairs with ``x = 1, y = 0``;
        - ``statistic`` -- ``min(n01, n10)``;
        - ``p_value`` -- two-sided exact p-value.

    Notes
    -----
    Only the discordant pairs carry information.  Under :math:`H_0` (equal marginal
    probabilities) :math:`n_{01} \\mid n_{01}+n_{10} = d \\sim \\text{Binomial}(d, 1/2)`, and

    .. math:: p = \\min\\{1,\\; 2\\,P(\\text{Bin}(d, 1/2) \\le \\min(n_{01}, n_{10}))\\},

    which is :math:`p = 1` when there are no discordant pairs.  This matches
    ``statsmodels.stats.contingency_tables.mcnemar(table, exact=True)`` with the table
    ``[[n00, n01], [n10, n11]]`` (rows ``x``, columns ``y``).

    Examples
    --------
    >>> x = [1, 1, 1, 1, 1, 1, 0, 0, 1, 0]
    >>> y = [0, 0, 0, 0, 0, 1, 0, 1, 1, 0]
    >>> mcnemar_exact(x, y).round(4)
        n  n_dropped  n01  n10  statistic  p_value
    0  10          0    1    5          1   0.2188
    """
    xv = as_float_vector(x, "x")
    yv = as_float_vector(y, "y")
    require(xv.shape == yv.shape, f"x and y must have the same length, got {xv.size} and "
            f"{yv.size}", field="y")
    check_binary(xv, "x")
    check_binary(yv, "y")
    ok = ~np.isnan(xv) & ~np.isnan(yv)
    xv, yv = xv[ok], yv[ok]
    n01 = int(((xv == 0) & (yv == 1)).sum())
    n10 = int(((xv == 1) & (yv == 0)).sum())
    stat = min(n01, n10)
    d = n01 + n10
    p = 1.0 if d == 0 else float(min(1.0, 2.0 * _st.binom.cdf(stat, d, 0.5)))
    return pd.DataFrame({"n": [int(ok.sum())], "n_dropped": [int((~ok).sum())],
                         "n01": [n01], "n10": [n10], "statistic": [stat], "p_value": [p]})


def holm(p_values: Any, *, alpha: float = 0.05) -> pd.DataFrame:
    """Holm step-down adjustment of a family of p-values.

    Parameters
    ----------
    p_values : array-like of float, shape (m,)
        Unadjusted p-values in [0, 1]; NaN entries are left out of the family and stay NaN.
    alpha : float, default 0.05
        Family-wise error rate for the ``reject`` column.

    Returns
    -------
    pandas.DataFrame
        One row per input p-value, in input order, columns:

        - ``p_value`` -- the unadjusted p-value;
        - ``p_adjusted`` -- Holm-adjusted p-value (NaN where the input is NaN);
        - ``reject`` -- ``p_adjusted <= alpha`` (False where NaN).

    Notes
    -----
    Sort the :math:`m` non-missing p-values :math:`p_{(1)} \\le \\dots \\le p_{(m)}`; then

    .. math:: \\tilde p_{(i)} = \\min\\Big\\{1,\\; \\max_{j \\le i}\\,(m - j + 1)\\,p_{(j)}\\Big\\},

    which controls the family-wise error rate at :math:`\\alpha` under any dependence.
    Equals ``statsmodels.stats.multitest.multipletests(p, method="holm")``.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03, 0.20])
       p_value  p_adjusted  reject
    0     0.01        0.04    True
    1     0.04        0.09   False
    2     0.03        0.09   False
    3     0.20        0.20   False
    """
    p = as_float_vector(np.atleast_1d(np.asarray(p_values, dtype=object)), "p_values")
    require(isinstance(alpha, (float, int)) and 0 < float(alpha) < 1,
            f"alpha must lie strictly between 0 and 1, got {alpha!r}", field="alpha")
    ok = ~np.isnan(p)
    require(((p[ok] >= 0) & (p[ok] <= 1)).all(), "p_values must lie in [0, 1]",
            field="p_values")
    adj = np.full(p.shape, np.nan)
    q = p[ok]
    m = q.size
    if m:
        order = np.argsort(q, kind="stable")
        scaled = (m - np.arange(m)) * q[order]
        stepped = np.minimum(1.0, np.maximum.accumulate(scaled))
        out = np.empty(m)
        out[order] = stepped
        adj[ok] = out
    reject = np.where(np.isnan(adj), False, adj <= float(alpha))
    return pd.DataFrame({"p_value": p, "p_adjusted": adj, "reject": reject.astype(bool)})
