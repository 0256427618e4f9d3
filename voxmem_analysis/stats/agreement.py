"""Agreement between two binary raters (e.g. two judges)."""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import check_ci_level, ci_level_alias, paired_vectors

__all__ = ["cohen_kappa"]


@ci_level_alias
def cohen_kappa(a: Any, b: Any, *, ci_level: float = 0.95) -> pd.DataFrame:
    """Raw agreement and Cohen's kappa of two binary ratings ``a``, ``b`` (0/1 or bool) of the same items, e.g. two
    judges; a pair with a missing rating is dropped and counted (``ci=``: the deprecated name of ``ci_level``).

    Returns
    -------
    pandas.DataFrame
        One row: ``n`` (complete pairs), ``n_dropped``, ``agreement`` (``(n11 + n00) / n``), ``kappa`` (NaN when
        undefined: one value for both raters), ``n11, n10, n01, n00`` (the 2x2 counts, ``a`` first),
        ``kappa_se`` (asymptotic), ``kappa_ci_low, kappa_ci_high`` (``kappa -/+ z se``, within [-1, 1]),
        ``ci_level``.

    Notes
    -----
    ``kappa = (p_o - p_e) / (1 - p_e)`` and its SE (Fleiss, Cohen & Everitt 1969), by statsmodels'
    ``cohens_kappa``.
    """
    ci_level = check_ci_level(ci_level)
    av, bv, ok = paired_vectors(a, b, ("a", "b"), binary=True)
    av, bv = av[ok], bv[ok]
    n = int(ok.sum())
    n11 = int(((av == 1) & (bv == 1)).sum())
    n10 = int(((av == 1) & (bv == 0)).sum())
    n01 = int(((av == 0) & (bv == 1)).sum())
    n00 = n - n11 - n10 - n01
    agreement = kappa = se = lo = hi = float("nan")
    if n:
        agreement = (n11 + n00) / n
        pa, pb = (n11 + n10) / n, (n11 + n01) / n
        if pa * pb + (1 - pa) * (1 - pb) < 1:
            from scipy.stats import norm
            from statsmodels.stats.inter_rater import cohens_kappa  # lazy: ~2 s to import

            with warnings.catch_warnings():  # its z-test divides by 0 when agreement is perfect
                warnings.simplefilter("ignore", RuntimeWarning)
                res = cohens_kappa(np.array([[n11, n10], [n01, n00]], dtype=float))
            kappa, se = float(res["kappa"]), float(res["std_kappa"])
            if np.isnan(se) and abs(float(res["var_kappa"])) < 1e-12:
                se = 0.0  # one rater constant: kappa is 0 on every sample; rounding made var < 0
            z = float(norm.ppf(0.5 + ci_level / 2))
            lo, hi = max(-1.0, kappa - z * se), min(1.0, kappa + z * se)
    return pd.DataFrame({"n": [n], "n_dropped": [int((~ok).sum())], "agreement": [agreement],
                         "kappa": [kappa], "n11": [n11], "n10": [n10], "n01": [n01],
                         "n00": [n00], "kappa_se": [se], "kappa_ci_low": [lo],
                         "kappa_ci_high": [hi], "ci_level": [ci_level]})
