"""Confidence intervals for proportions."""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import as_float_vector, check_ci_level, ci_level_alias, require

__all__ = ["wilson_interval"]


@ci_level_alias
def wilson_interval(successes: Any, n: Any, *, ci_level: float = 0.95) -> pd.DataFrame:
    """Wilson score interval of the proportions ``successes / n`` (ints or arrays, broadcast together; ``ci=``: the
    deprecated name of ``ci_level``).

    Returns
    -------
    pandas.DataFrame
        One row per (broadcast) element: ``successes``, ``n``, ``proportion`` (NaN when ``n == 0``), ``ci_low``,
        ``ci_high`` (within [0, 1]; NaN when ``n == 0``), ``ci_level``.

    Notes
    -----
    ``(x + z^2/2) / (n + z^2) -/+ z / (n + z^2) sqrt(x (n - x) / n + z^2 / 4)`` (Wilson 1927), by statsmodels'
    ``proportion_confint(method="wilson")``.
    """
    ci = check_ci_level(ci_level)
    x = as_float_vector(np.atleast_1d(np.asarray(successes)), "successes")
    m = as_float_vector(np.atleast_1d(np.asarray(n)), "n")
    try:
        x, m = np.broadcast_arrays(x, m)
    except ValueError:
        require(False, f"successes and n cannot be broadcast together: lengths {x.size} and " f"{m.size}", field="n")
    require(np.isfinite(x).all() and np.isfinite(m).all(),
            "successes and n must be finite (no NaN)", field="successes")
    require((x == np.round(x)).all() and (m == np.round(m)).all(),
            "successes and n must be whole numbers", field="successes")
    require((m >= 0).all(), f"n must be >= 0, got min {m.min():g}", field="n")
    bad = (x < 0) | (x > m)
    if bad.any():
        require(False, f"successes must lie in [0, n]; {int(bad.sum())} element(s) do not, "
                f"e.g. successes={x[bad][0]:g}, n={m[bad][0]:g}", field="successes")
    from statsmodels.stats.proportion import proportion_confint  # lazy: ~2 s to import

    empty = m == 0
    safe_m = np.where(empty, 1.0, m)
    with np.errstate(divide="ignore", invalid="ignore"):
        lo, hi = proportion_confint(x, safe_m, alpha=1.0 - ci, method="wilson")
        p = x / safe_m
    lo = np.where(x == 0, 0.0, np.clip(lo, 0.0, 1.0))
    hi = np.where(x == m, 1.0, np.clip(hi, 0.0, 1.0))
    p, lo, hi = (np.where(empty, np.nan, a) for a in (p, lo, hi))
    return pd.DataFrame({"successes": x.astype(np.int64), "n": m.astype(np.int64),
                         "proportion": p, "ci_low": lo, "ci_high": hi, "ci_level": ci})
