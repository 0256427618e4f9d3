"""Rank correlation."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _st

from voxmem_analysis.stats._validation import as_float_vector, require

__all__ = ["spearman"]


def spearman(x: Any, y: Any) -> pd.DataFrame:
    """Spearman rank correlation with a two-sided p-value, dropping incomplete pairs.

    Parameters
    ----------
    x, y : array-like of float, shape (n,)
        Paired observations (e.g. per model x evidence cell: 8K accuracy and retention).
        A pair with NaN/None on either side is dropped and counted.

    Returns
    -------
    pandas.DataFrame
        One row, columns:

        - ``n`` -- complete pairs used;
        - ``n_dropped`` -- pairs dropped for a missing value;
        - ``rho`` -- Spearman's rho (NaN if fewer than 2 pairs or a constant variable);
        - ``p_value`` -- two-sided p-value for :math:`\\rho = 0` (NaN if ``n < 3`` or rho
          is NaN).

    Notes
    -----
    :math:`\\rho` is the Pearson correlation of the mid-ranks (ties get their average rank).
    The p-value uses :math:`t = \\rho\\sqrt{(n-2)/(1-\\rho^2)}` on :math:`n - 2` degrees of
    freedom, as ``scipy.stats.spearmanr`` does; with :math:`|\\rho| = 1` it is 0.

    Examples
    --------
    >>> spearman([1, 2, 3, 4, 5, None], [5, 6, 7, 8, 7, 1]).round(4)
       n  n_dropped     rho  p_value
    0  5          1  0.8208   0.0886
    """
    xv = as_float_vector(x, "x")
    yv = as_float_vector(y, "y")
    require(xv.shape == yv.shape, f"x and y must have the same length, got {xv.size} and "
            f"{yv.size}", field="y")
    require(not (np.isinf(xv).any() or np.isinf(yv).any()),
            "x and y must not contain infinite values", field="x")
    ok = ~np.isnan(xv) & ~np.isnan(yv)
    n = int(ok.sum())
    rho = p = float("nan")
    if n >= 2:
        rx = _st.rankdata(xv[ok])
        ry = _st.rankdata(yv[ok])
        dx, dy = rx - rx.mean(), ry - ry.mean()
        den = np.sqrt((dx * dx).sum() * (dy * dy).sum())
        if den > 0:
            rho = float(np.clip((dx * dy).sum() / den, -1.0, 1.0))
    if n >= 3 and np.isfinite(rho):
        df = n - 2
        if abs(rho) == 1.0:
            p = 0.0
        else:
            t = rho * np.sqrt(df / ((1.0 - rho) * (1.0 + rho)))
            p = float(2 * _st.t.sf(abs(t), df))
    return pd.DataFrame({"n": [n], "n_dropped": [int((~ok).sum())], "rho": [rho],
                         "p_value": [p]})
