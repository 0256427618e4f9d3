"""Power of a paired comparison of two accuracies on the same items (McNemar design).

Two systems (or two budgets) are scored on the same ``n`` items.  Only discordant items
carry information: with :math:`p_{10}` the share of items the first gets right and the
second wrong, :math:`p_{01}` the reverse, the *discordance* is
:math:`\\psi = p_{10} + p_{01}` and the accuracy difference :math:`\\delta = p_{10} - p_{01}`.
The normal approximation of McNemar's test (Connor 1987) has null standard deviation
:math:`\\sqrt{\\psi}` and alternative standard deviation :math:`\\sqrt{\\psi - \\delta^2}` per
item, so

.. math:: n = \\frac{\\big(z_{1-\\alpha/2}\\sqrt{\\psi} + z_{1-\\beta}\\sqrt{\\psi-\\delta^2}\\big)^2}{\\delta^2}.

Computed with ``statsmodels.stats.power`` (``normal_power_het`` and
``normal_sample_size_one_tail``, which take the two standard deviations); the minimum
detectable difference solves power = target for :math:`\\delta` (``scipy.optimize.brentq``).
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import require

__all__ = ["paired_power", "minimum_detectable_difference", "items_needed", "power_summary"]


def _check(discordance: Any, alpha: Any, power: Any) -> tuple[float, float, float]:
    require(isinstance(discordance, (int, float, np.floating)) and 0 < float(discordance) <= 1,
            f"discordance must be a share of items in (0, 1], got {discordance!r}", field="discordance")
    require(isinstance(alpha, (int, float, np.floating)) and 0 < float(alpha) < 1,
            f"alpha must lie strictly between 0 and 1, got {alpha!r}", field="alpha")
    require(isinstance(power, (int, float, np.floating)) and 0 < float(power) < 1,
            f"power must lie strictly between 0 and 1, got {power!r}", field="power")
    return float(discordance), float(alpha), float(power)


def paired_power(difference: float, n: int, discordance: float, *, alpha: float = 0.05) -> float:
    """Power of the two-sided paired test to detect an accuracy ``difference`` (a share, e.g. 0.03).

    Parameters
    ----------
    difference : float
        :math:`|\\delta|`, as a share of items (0.03 = 3 points); must satisfy
        :math:`\\delta^2 < \\psi` (a difference cannot exceed the discordance).
    n : int
        Items compared.
    discordance : float
        :math:`\\psi`, share of items on which the two disagree.
    alpha : float
        Two-sided level.

    Returns
    -------
    float

    Examples
    --------
    >>> round(paired_power(0.05, 799, 0.20, alpha=0.05), 3)
    0.886
    """
    from statsmodels.stats.power import normal_power_het  # lazy: statsmodels imports slowly

    psi, alpha, _ = _check(discordance, alpha, 0.5)
    d = abs(float(difference))
    require(0 < d < np.sqrt(psi), f"difference must lie in (0, sqrt(discordance)) = (0, {np.sqrt(psi):.4f}), "
            f"got {difference!r}", field="difference")
    require(isinstance(n, (int, np.integer)) and n >= 1, f"n must be a positive integer, got {n!r}", field="n")
    return float(normal_power_het(d, int(n), alpha, std_null=np.sqrt(psi), std_alternative=np.sqrt(psi - d * d),
                                  alternative="two-sided"))


def minimum_detectable_difference(n: int, discordance: float, *, alpha: float = 0.05,
                                  power: float = 0.8) -> float:
    """Smallest accuracy difference (share of items) detected with the given power on ``n`` items.

    Returns NaN when even the largest possible difference (:math:`\\sqrt{\\psi}`) is not
    detected with that power.

    Examples
    --------
    >>> round(100 * minimum_detectable_difference(799, 0.20), 2)   # in points
    4.43
    """
    from scipy.optimize import brentq

    psi, alpha, power = _check(discordance, alpha, power)
    require(isinstance(n, (int, np.integer)) and n >= 1, f"n must be a positive integer, got {n!r}", field="n")
    top = np.sqrt(psi) * (1 - 1e-9)
    if paired_power(top, n, psi, alpha=alpha) < power:
        return float("nan")
    return float(brentq(lambda d: paired_power(d, n, psi, alpha=alpha) - power, 1e-9, top, xtol=1e-12))


def items_needed(difference: float, discordance: float, *, alpha: float = 0.05, power: float = 0.8) -> int:
    """Items needed to detect ``difference`` (share) with the given power (rounded up).

    Examples
    --------
    >>> items_needed(0.03, 0.20)
    1742
    """
    from statsmodels.stats.power import normal_sample_size_one_tail

    psi, alpha, power = _check(discordance, alpha, power)
    d = abs(float(difference))
    require(0 < d < np.sqrt(psi), f"difference must lie in (0, sqrt(discordance)) = (0, {np.sqrt(psi):.4f}), "
            f"got {difference!r}", field="difference")
    n = normal_sample_size_one_tail(d, power, alpha / 2, std_null=np.sqrt(psi),
                                    std_alternative=np.sqrt(psi - d * d))
    return int(np.ceil(float(n) - 1e-9))


def power_summary(n: int, discordance: float, *, target: float | None = None, alpha: float = 0.05,
                  power: float = 0.8) -> pd.DataFrame:
    """One row: ``n, discordance, alpha, power, mdd`` (share) and, with ``target``,
    ``target, items_needed, power_at_target``."""
    row = {"n": int(n), "discordance": float(discordance), "alpha": alpha, "power": power,
           "mdd": minimum_detectable_difference(n, discordance, alpha=alpha, power=power)}
    if target is not None:
        row.update(target=float(target), items_needed=items_needed(target, discordance, alpha=alpha, power=power),
                   power_at_target=paired_power(target, n, discordance, alpha=alpha))
    return pd.DataFrame([row])


