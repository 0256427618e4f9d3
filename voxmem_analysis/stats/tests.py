"""Paired hypothesis tests (exact McNemar, Cochran's Q) and Holm's multiplicity adjustment."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import (as_float_matrix, as_float_vector, check_binary, paired_vectors,
                                               require)

__all__ = ["mcnemar_exact", "holm", "cochran_q"]


def mcnemar_exact(x: Any, y: Any) -> pd.DataFrame:
    """Exact McNemar test of two paired binary outcomes ``x``, ``y`` of the same items (e.g. correct at 8K and at
    64K); a pair with a missing value is dropped and counted.

    Returns
    -------
    pandas.DataFrame
        One row: ``n`` (complete pairs), ``n_dropped``, ``n01`` (``x = 0, y = 1``), ``n10`` (``x = 1, y = 0``),
        ``statistic`` (``min(n01, n10)``), ``p_value`` (two-sided, exact).

    Notes
    -----
    ``p = min(1, 2 P(Bin(d, 1/2) <= min(n01, n10)))`` over the ``d`` discordant pairs (1 without any), by
    statsmodels' ``mcnemar(table, exact=True)``.
    """
    xv, yv, ok = paired_vectors(x, y, binary=True)
    xv, yv = xv[ok], yv[ok]
    n01 = int(((xv == 0) & (yv == 1)).sum())
    n10 = int(((xv == 1) & (yv == 0)).sum())
    n00 = int(((xv == 0) & (yv == 0)).sum())
    n11 = int(ok.sum()) - n00 - n01 - n10
    from statsmodels.stats.contingency_tables import mcnemar  # lazy: ~2 s to import

    p = float(min(1.0, mcnemar(np.array([[n00, n01], [n10, n11]]), exact=True).pvalue))
    return pd.DataFrame({"n": [int(ok.sum())], "n_dropped": [int((~ok).sum())], "n01": [n01], "n10": [n10],
                         "statistic": [min(n01, n10)], "p_value": [p]})


def holm(p_values: Any, *, alpha: float = 0.05) -> pd.DataFrame:
    """Holm step-down adjustment of a family of p-values (NaN left out of the family).

    Returns
    -------
    pandas.DataFrame
        One row per p-value, in input order: ``p_value``, ``p_adjusted`` (NaN where the input is), ``reject``
        (``p_adjusted <= alpha``).

    Notes
    -----
    ``p_(i) = min(1, max_{j <= i} (m - j + 1) p_(j))`` over the sorted p-values (Holm 1979): family-wise error
    control under any dependence, as statsmodels' ``multipletests(method="holm")``.
    """
    p = as_float_vector(np.atleast_1d(np.asarray(p_values, dtype=object)), "p_values")
    require(isinstance(alpha, (float, int)) and 0 < float(alpha) < 1,
            f"alpha must lie strictly between 0 and 1, got {alpha!r}", field="alpha")
    ok = ~np.isnan(p)
    require(((p[ok] >= 0) & (p[ok] <= 1)).all(), "p_values must lie in [0, 1]", field="p_values")
    adj, q = np.full(p.shape, np.nan), p[ok]
    if q.size:
        order, out = np.argsort(q, kind="stable"), np.empty(q.size)
        out[order] = np.minimum(1.0, np.maximum.accumulate((q.size - np.arange(q.size)) * q[order]))
        adj[ok] = out
    reject = np.where(np.isnan(adj), False, adj <= float(alpha))
    return pd.DataFrame({"p_value": p, "p_adjusted": adj, "reject": reject.astype(bool)})


def cochran_q(outcomes: Any, labels: Any = None) -> pd.DataFrame:
    """Cochran's Q: do ``k >= 3`` conditions (the columns of ``outcomes``, 0/1, e.g. models) have equal success rates
    on the same items (rows)?  An item with a missing value is dropped and counted; ``labels``: the columns' names.

    Returns
    -------
    pandas.DataFrame
        One row: ``n`` (complete items), ``n_dropped``, ``k``, ``dof`` (``k - 1``), ``statistic`` (Q),
        ``p_value`` (chi-square with ``k - 1`` degrees of freedom; NaN when no item differs across conditions).

    Notes
    -----
    Cochran (1950), by pingouin's ``cochran``.
    """
    M = as_float_matrix(outcomes, "outcomes")
    k = M.shape[1]
    require(k >= 3, f"Cochran's Q compares 3 or more conditions; outcomes has {k} column(s) (use mcnemar_exact for "
            "two)", field="outcomes")
    require(labels is None or len(labels) == k, f"labels must name the {k} columns", field="labels")
    for j in range(k):
        check_binary(M[:, j], f"outcomes[:, {j if labels is None else labels[j]!r}]")
    ok = ~np.isnan(M).any(axis=1)
    X = M[ok]
    n = int(ok.sum())
    stat = p = float("nan")
    row_tot = X.sum(axis=1)
    if n and ((row_tot > 0) & (row_tot < k)).any():
        import pingouin as pg  # lazy: ~3 s to import

        long = pd.DataFrame({"item": np.repeat(np.arange(n), k), "cond": np.tile(np.arange(k), n), "y": X.ravel()})
        res = pg.cochran(data=long, dv="y", within="cond", subject="item")
        stat, p = float(res["Q"].iloc[0]), float(res["p_unc"].iloc[0] if "p_unc" in res else res["p-unc"].iloc[0])
    return pd.DataFrame({"n": [n], "n_dropped": [int((~ok).sum())], "k": [k], "dof": [k - 1],
                         "statistic": [stat], "p_value": [p]})
