"""Rank correlation with a confidence interval (pingouin at run time)."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import check_ci_level, ci_level_alias, paired_vectors

__all__ = ["spearman"]


@ci_level_alias
def spearman(x: Any, y: Any, *, ci_level: float = 0.95) -> pd.DataFrame:
    """Spearman rank correlation of paired observations ``x``, ``y`` with its p-value and Fisher-z interval; a pair
    with NaN or None is dropped and counted (``ci=``: the deprecated name of ``ci_level``).

    Returns
    -------
    pandas.DataFrame
        One row: ``n`` (pairs used), ``n_dropped``, ``rho`` (NaN below 2 pairs or for a constant variable),
        ``p_value`` (two-sided, rho = 0; NaN below 3 pairs), ``rho_ci_low, rho_ci_high`` (NaN below 4 pairs),
        ``ci_level``.

    Notes
    -----
    pingouin's ``corr(method="spearman")`` and the Fisher-z interval of ``rho`` (``compute_esci``).
    """
    ci_level = check_ci_level(ci_level)
    xv, yv, ok = paired_vectors(x, y, finite=True)
    xs, ys = xv[ok], yv[ok]
    n = int(ok.sum())
    rho = p = lo = hi = float("nan")
    varies = n >= 2 and np.ptp(xs) > 0 and np.ptp(ys) > 0
    if varies and n == 2:
        rho = 1.0 if (xs[1] - xs[0]) * (ys[1] - ys[0]) > 0 else -1.0
    elif varies:
        import pingouin as pg  # lazy: ~3 s to import

        with warnings.catch_warnings():  # pingouin warns that it cannot estimate power for n <= 4
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            res = pg.corr(xs, ys, method="spearman")
            rho = float(np.clip(res["r"].iloc[0], -1.0, 1.0))
            p = 0.0 if abs(rho) == 1.0 else float(res["p_val"].iloc[0] if "p_val" in res else res["p-val"].iloc[0])
            if n >= 4:
                lo, hi = (float(v) for v in pg.compute_esci(stat=rho, nx=n, ny=n, eftype="r",
                                                             confidence=ci_level, decimals=15))
    return pd.DataFrame({"n": [n], "n_dropped": [int((~ok).sum())], "rho": [rho],
                         "p_value": [p], "rho_ci_low": [lo], "rho_ci_high": [hi],
                         "ci_level": [ci_level]})
