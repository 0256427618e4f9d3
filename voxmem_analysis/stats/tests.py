"""Paired hypothesis tests and multiplicity adjustment.

(The module is named ``tests`` after the statistical tests it holds; pytest only collects
``tests/test_*.py``, so the name does not clash with the test suite.)
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import (as_float_matrix, as_float_vector, check_binary, paired_vectors,
                                               require)

__all__ = ["mcnemar_exact", "holm", "cochran_q"]


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
        One row; ``n`` counts the complete pairs, ``n_dropped`` the incomplete ones, and

        - ``n01`` -- pairs with ``x = 0, y = 1``;
        - ``n10`` -- pairs with ``x = 1, y = 0``;
        - ``statistic`` -- ``min(n01, n10)``;
        - ``p_value`` -- two-sided exact p-value.

    Notes
    -----
    Under equal marginals ``n01 | d ~ Bin(d, 1/2)``; ``p = min(1, 2 P(Bin(d, 1/2) <= min(n01, n10)))`` (1 without
    discordant pairs), by ``statsmodels``' ``mcnemar(table, exact=True)``.

    Examples
    --------
    >>> x = [1, 1, 1, 1, 1, 1, 0, 0, 1, 0]
    >>> y = [0, 0, 0, 0, 0, 1, 0, 1, 1, 0]
    >>> mcnemar_exact(x, y).round(4)
        n  n_dropped  n01  n10  statistic  p_value
    0  10          0    1    5          1   0.2188
    """
    xv, yv, ok = paired_vectors(x, y, binary=True)
    xv, yv = xv[ok], yv[ok]
    n01 = int(((xv == 0) & (yv == 1)).sum())
    n10 = int(((xv == 1) & (yv == 0)).sum())
    n00 = int(((xv == 0) & (yv == 0)).sum())
    n11 = int(ok.sum()) - n00 - n01 - n10
    from statsmodels.stats.contingency_tables import mcnemar  # lazy: ~2 s to import

    res = mcnemar(np.array([[n00, n01], [n10, n11]]), exact=True)
    stat = min(n01, n10)
    p = float(min(1.0, res.pvalue))
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
    ``p_(i) = min(1, max_{j <= i} (m - j + 1) p_(j))`` over the sorted p-values: family-wise error control under
    any dependence (the same as ``statsmodels``' ``multipletests(method="holm")``).

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


def cochran_q(outcomes: Any, labels: Any = None) -> pd.DataFrame:
    """Cochran's Q omnibus test: do ``k >= 3`` conditions have equal success rates on the same items?

    Parameters
    ----------
    outcomes : array-like of bool or 0/1, shape (n_items, k)
        Row ``i`` holds item ``i``'s outcome under each of the ``k`` conditions (e.g.
        models).  Items with a missing value (NaN) in any column are dropped and counted.
    labels : sequence of length k, optional
        Condition names (only used in messages).

    Returns
    -------
    pandas.DataFrame
        One row, columns:

        - ``n`` -- complete items used;  ``n_dropped`` -- items dropped for a missing value;
        - ``k`` -- conditions;  ``dof`` -- ``k - 1``;
        - ``statistic`` -- Cochran's Q;  ``p_value`` -- chi-square(``k - 1``) p-value
          (NaN when no item differs across conditions).

    Notes
    -----
    Cochran's Q (pingouin) on the complete rows; chi-square with ``k - 1`` degrees of freedom.

    Examples
    --------
    >>> cochran_q([[1, 1, 0], [1, 0, 0], [1, 1, 1], [0, 0, 0], [1, 0, 0]]).round(4)
       n  n_dropped  k  dof  statistic  p_value
    0  5          0  3    2     4.6667    0.097
    """
    M = as_float_matrix(outcomes, "outcomes")
    k = M.shape[1]
    require(k >= 3, f"Cochran's Q compares 3 or more conditions; outcomes has {k} column(s) "
            "(use mcnemar_exact for two)", field="outcomes")
    require(labels is None or len(labels) == k, f"labels must name the {k} columns",
            field="labels")
    for j in range(k):
        check_binary(M[:, j], f"outcomes[:, {j if labels is None else labels[j]!r}]")
    ok = ~np.isnan(M).any(axis=1)
    X = M[ok]
    n = int(ok.sum())
    stat = p = float("nan")
    row_tot = X.sum(axis=1)
    if n and ((row_tot > 0) & (row_tot < k)).any():
        import pingouin as pg  # lazy: ~3 s to import

        long = pd.DataFrame({"item": np.repeat(np.arange(n), k), "cond": np.tile(np.arange(k), n),
                             "y": X.ravel()})
        res = pg.cochran(data=long, dv="y", within="cond", subject="item")
        stat, p = float(res["Q"].iloc[0]), float(res["p_unc"].iloc[0] if "p_unc" in res
                                                else res["p-unc"].iloc[0])
    return pd.DataFrame({"n": [n], "n_dropped": [int((~ok).sum())], "k": [k], "dof": [k - 1],
                         "statistic": [stat], "p_value": [p]})
