"""Power of a paired comparison of two accuracies on the same items (McNemar design).

Only discordant items inform: with ``p10`` (first right, second wrong) and ``p01``, the discordance is ``psi = p10 +
p01`` and the difference ``delta = p10 - p01``.  ``method="normal"``: the normal approximation of McNemar's test
(Connor 1987, Biometrics 43: 207-211; null SD ``sqrt(psi)``, alternative ``sqrt(psi - delta^2)``), by
``statsmodels.stats.power``; ``"exact"``: the exact conditional test the workbook runs (it rejects at ``n10 <=
c_d`` or ``n10 >= d - c_d`` given ``d`` discordant pairs), its power summed exactly over ``D ~ Bin(n, psi)`` and
``n10 ~ Bin(d, p10 / psi)`` (terms below 1e-15 at either end left out).  The exact test is conservative: at 799
items and discordance 0.199 the normal MDD is 4.41 points, where its power is 0.78 (its own MDD 4.52).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import require, whole_number

__all__ = ["paired_power", "minimum_detectable_difference", "items_needed", "power_summary", "POWER_METHODS",
           "mcnemar_critical_values"]

#: How a power is computed: Connor's normal approximation, or the exact conditional McNemar test.
POWER_METHODS = ("normal", "exact")

#: Probability of the discordant-pair counts left out at either end of the exact sum.
_TAIL = 1e-15
#: Sample sizes after the exact ``items_needed`` checked for a dip of the power below the target.
_CHECK_AFTER = 200


def _check(discordance: Any, alpha: Any, power: Any) -> tuple[float, float, float]:
    require(isinstance(discordance, (int, float, np.floating)) and 0 < float(discordance) <= 1,
            f"discordance must be a share of items in (0, 1], got {discordance!r}", field="discordance")
    require(isinstance(alpha, (int, float, np.floating)) and 0 < float(alpha) < 1,
            f"alpha must lie strictly between 0 and 1, got {alpha!r}", field="alpha")
    require(isinstance(power, (int, float, np.floating)) and 0 < float(power) < 1,
            f"power must lie strictly between 0 and 1, got {power!r}", field="power")
    return float(discordance), float(alpha), float(power)


def _check_difference(difference: Any, psi: float) -> float:
    d = abs(float(difference))
    require(0 < d <= psi and d < 1, f"difference must lie in (0, discordance] = (0, {psi:.4g}] (the first side "
            f"cannot win more items than the two disagree on), got {difference!r}", field="difference")
    return d


def _check_method(method: Any) -> str:
    require(method in POWER_METHODS, f"method must be one of {POWER_METHODS}, got {method!r}", field="method")
    return method


def mcnemar_critical_values(d: Any, alpha: float) -> np.ndarray:
    """``c_d``: the largest ``k`` with ``2 P(Bin(d, 1/2) <= k) <= alpha`` (up to 1e-12 relative; -1 when ``d``
    discordant pairs cannot reject)."""
    from scipy.stats import binom

    d = np.asarray(d, dtype=np.int64)
    c = binom.ppf(alpha / 2, d, 0.5)
    c = np.where(2 * binom.cdf(c, d, 0.5) <= alpha * (1 + 1e-12), c, c - 1)
    return np.where(d > 0, c, -1.0).astype(np.int64)


def _reject_given_d(d: np.ndarray, pi: float, alpha: float) -> np.ndarray:
    """P(the exact test rejects | ``d`` discordant pairs), ``n10 ~ Bin(d, pi)``."""
    from scipy.special import bdtr, bdtrc

    c = mcnemar_critical_values(d, alpha)
    low = np.where(c >= 0, bdtr(np.maximum(c, 0), d, pi), 0.0)        # P(n10 <= c)
    return low + bdtrc(d - c - 1, d, pi)                                # + P(n10 >= d - c)


def _d_window(n: int, psi: float) -> np.ndarray:
    """Discordant-pair counts of probability above :data:`_TAIL` at either end (all for small n)."""
    from scipy.stats import binom

    if n <= 50:
        return np.arange(0, n + 1, dtype=np.int64)
    lo, hi = int(binom.ppf(_TAIL, n, psi)), int(binom.isf(_TAIL, n, psi))
    return np.arange(max(lo - 1, 0), min(hi + 1, n) + 1, dtype=np.int64)


def _exact_power(d: float, n: int, psi: float, alpha: float) -> float:
    from scipy.stats import binom

    D = _d_window(n, psi)
    return float(binom.pmf(D, n, psi) @ _reject_given_d(D, (psi + d) / (2 * psi), alpha))


def paired_power(difference: float, n: int, discordance: float, *, alpha: float = 0.05,
                 method: str = "normal") -> float:
    """Power of the two-sided paired test to detect an accuracy ``difference`` (a share: 0.03 = 3 points, at most
    the ``discordance``, the share of items the two disagree on) on ``n`` items; ``method``: ``normal`` or
    ``exact`` (module docstring)."""
    psi, alpha, _ = _check(discordance, alpha, 0.5)
    d = _check_difference(difference, psi)
    n = whole_number(n, "n")
    if _check_method(method) == "exact":
        return _exact_power(d, n, psi, alpha)
    from statsmodels.stats.power import normal_power_het  # lazy: statsmodels imports slowly

    return float(normal_power_het(d, n, alpha, std_null=np.sqrt(psi), std_alternative=np.sqrt(psi - d * d),
                                  alternative="two-sided"))


def minimum_detectable_difference(n: int, discordance: float, *, alpha: float = 0.05,
                                  power: float = 0.8, method: str = "normal") -> float:
    """Smallest accuracy difference (a share) detected with ``power`` on ``n`` items (``brentq``); NaN when even
    every discordant item going one way is not."""
    from scipy.optimize import brentq

    psi, alpha, power = _check(discordance, alpha, power)
    n = whole_number(n, "n")
    method = _check_method(method)
    top = psi * (1 - 1e-9)
    if paired_power(top, n, psi, alpha=alpha, method=method) < power:
        return float("nan")
    return float(brentq(lambda d: paired_power(d, n, psi, alpha=alpha, method=method) - power, 1e-9, top, xtol=1e-12))


def items_needed(difference: float, discordance: float, *, alpha: float = 0.05, power: float = 0.8,
                 method: str = "normal") -> int:
    """Items needed to detect ``difference`` (a share) with ``power``: Connor's formula rounded up (``normal``), or
    the smallest ``n`` whose exact power reaches it (``exact``: doubling and bisection from the normal ``n``,
    then the next 200 sizes checked, since a discrete test's power can dip as ``n`` grows)."""
    psi, alpha, power = _check(discordance, alpha, power)
    d = _check_difference(difference, psi)
    from statsmodels.stats.power import normal_sample_size_one_tail

    n_normal = normal_sample_size_one_tail(d, power, alpha / 2, std_null=np.sqrt(psi),
                                           std_alternative=np.sqrt(max(psi - d * d, 1e-300)))
    n_normal = max(int(np.ceil(float(n_normal) - 1e-9)), 1)
    if _check_method(method) == "normal":
        return n_normal
    return _exact_items(d, psi, alpha, power, n_normal)


def _exact_items(d: float, psi: float, alpha: float, power: float, start: int) -> int:
    """Smallest ``n`` of exact power >= ``power``; powers of several sizes are one product over the counts ``D``."""
    from scipy.stats import binom

    pi = (psi + d) / (2 * psi)

    def powers(ns: np.ndarray) -> np.ndarray:
        D = np.arange(_d_window(int(ns.min()), psi)[0], _d_window(int(ns.max()), psi)[-1] + 1)
        return binom.pmf(D[None, :], ns[:, None], psi) @ _reject_given_d(D, pi, alpha)

    def ok(n: int) -> bool:
        return bool(powers(np.array([n]))[0] >= power)

    lo, hi = 0, start                   # invariant: ok(hi); lo = 0 or not ok(lo)
    while not ok(hi):
        lo, hi = hi, 2 * hi
        require(hi < 10**9, "the exact test does not reach that power below 10**9 items", field="difference")
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    after = np.arange(hi + 1, hi + _CHECK_AFTER + 1)
    dips = after[powers(after) < power]        # a later dip below the target: the answer starts after it
    return int(dips.max()) + 1 if dips.size else hi


def power_summary(n: int, discordance: float, *, target: float | None = None, alpha: float = 0.05,
                  power: float = 0.8) -> pd.DataFrame:
    """The power analysis of ``n`` items at ``discordance``, one row.

    Returns
    -------
    pandas.DataFrame
        ``n, discordance, alpha, power``; ``mdd_normal`` (Connor's MDD, a share), ``power_exact_at_mdd_normal``
        (the exact test's power there: below ``power``), ``mdd_exact``; with ``target`` (a share) also
        ``target, items_needed_normal, items_needed_exact, power_at_target_normal, power_at_target_exact``.
    """
    psi, alpha, power = _check(discordance, alpha, power)
    mdd = minimum_detectable_difference(n, psi, alpha=alpha, power=power)
    row = {"n": whole_number(n, "n"), "discordance": psi, "alpha": alpha, "power": power, "mdd_normal": mdd,
           "power_exact_at_mdd_normal": (paired_power(mdd, n, psi, alpha=alpha, method="exact")
                                         if np.isfinite(mdd) else float("nan")),
           "mdd_exact": minimum_detectable_difference(n, psi, alpha=alpha, power=power, method="exact")}
    if target is not None:
        row.update(target=float(target),
                   items_needed_normal=items_needed(target, psi, alpha=alpha, power=power),
                   items_needed_exact=items_needed(target, psi, alpha=alpha, power=power, method="exact"),
                   power_at_target_normal=paired_power(target, n, psi, alpha=alpha),
                   power_at_target_exact=paired_power(target, n, psi, alpha=alpha, method="exact"))
    return pd.DataFrame([row])
