"""Exact arithmetic for the decisions a bootstrap interval takes on counts (BCa's ties and acceleration).

The paired statistics are rational functions of integer counts; in floats two equal resamples can differ in the
last bits (``==`` splits exact ties: 189 of 435 on one Table 18 drop) and a flat jackknife shows rounding noise
(an acceleration of 0.17 instead of 0).  Both are decided in :class:`fractions.Fraction` over the integer sums,
behind a float filter (Shewchuk 1997): only replicates within :data:`TIE_RTOL` of the estimate, and a jackknife
flat up to rounding, are recomputed exactly, each distinct count pattern once.
"""
from __future__ import annotations

from collections import Counter
from fractions import Fraction
from typing import Any, Callable

import numpy as np

__all__ = ["TIE_RTOL", "exact_sums", "fraction_accuracies", "exact_order", "mean_ratio_order", "flat_jackknife",
           "exact_jackknife", "exact_acceleration"]

#: Relative distance below which a replicate is compared with the estimate exactly (the float filter).
#: Far above the rounding of these statistics (a few units of 1e-16 relative per operation).
TIE_RTOL = 1e-9

_EXACT_LIMIT = 2.0 ** 53


def exact_sums(A: np.ndarray, n_draws: int) -> bool:
    """Whether ``C @ A`` is exact in float64 for every count matrix ``C`` of ``n_draws`` draws: ``A`` holds integers
    and ``n_draws * max_j sum_i |A_ij| < 2**53``."""
    if A.size == 0 or not np.all(np.isfinite(A)) or not np.array_equal(A, np.round(A)):
        return False
    return float(n_draws) * float(np.abs(A).sum(axis=0).max()) < _EXACT_LIMIT


def fraction_accuracies(rows: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Exact accuracies ``(baseline, comparison)``, object arrays ``(m, k)`` of Fractions, from rows of integer sums
    ``[baseline | comparison | scored]`` (every ``scored`` sum positive)."""
    ints = np.asarray(rows, dtype=np.int64)
    made: dict[tuple[int, int], Fraction] = {}     # a count pair recurs across rows: make each once

    def frac(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        out = np.empty(num.shape, dtype=object)
        flat = out.reshape(-1)
        for idx, key in enumerate(zip(num.reshape(-1).tolist(), den.reshape(-1).tolist())):
            value = made.get(key)
            if value is None:
                value = made[key] = Fraction(*key)
            flat[idx] = value
        return out

    den = ints[:, 2 * k:3 * k]
    return frac(ints[:, :k], den), frac(ints[:, k:2 * k], den)


def _exact_rows(func: Callable[[np.ndarray, np.ndarray], Any], rows: np.ndarray, k: int) -> tuple[list, np.ndarray]:
    """The statistic on each distinct row of integer sums (None: undefined), and each row's distinct index."""
    uniq, inv = np.unique(rows, axis=0, return_inverse=True)
    values: list = [None] * uniq.shape[0]
    ok = np.flatnonzero((uniq[:, 2 * k:3 * k] != 0).all(axis=1))
    if ok.size:
        try:
            got = list(np.asarray(func(*fraction_accuracies(uniq[ok], k)), dtype=object).reshape(-1))
        except ZeroDivisionError:       # some row is undefined: evaluate one by one
            got = []
            for r in ok:
                try:
                    got.append(np.asarray(func(*fraction_accuracies(uniq[r:r + 1], k)), dtype=object).reshape(-1)[0])
                except ZeroDivisionError:
                    got.append(None)
        for r, v in zip(ok.tolist(), got):
            values[r] = v if isinstance(v, (Fraction, int)) else None
    return values, np.asarray(inv).reshape(-1)


def exact_order(replicates: np.ndarray, estimate: float, func: Callable[[np.ndarray, np.ndarray], Any],
                sums: np.ndarray, estimate_sums: np.ndarray, k: int) -> np.ndarray | None:
    """The sign (-1, 0, 1) of each replicate minus the estimate, ties decided exactly; None when the estimate is
    undefined exactly (compare floats then).

    ``replicates``, ``estimate``: the statistic in floats (non-finite: sign 0); ``func``: the statistic on
    Fractions (:attr:`.paired_statistics.Statistic.exact`); ``sums`` (m, 3k), ``estimate_sums`` (3k,): the
    integer sums ``[baseline | comparison | scored]`` of each resample and of the sample; ``k``: series.
    """
    est_exact = _exact_rows(func, estimate_sums[None, :], k)[0][0]
    if est_exact is None or not np.isfinite(estimate):
        return None
    order = np.sign(np.where(np.isfinite(replicates), replicates - estimate, 0.0)).astype(np.int8)
    finite = np.isfinite(replicates)
    scale = max(1.0, abs(estimate), float(np.abs(replicates[finite]).max()) if finite.any() else 0.0)
    near = np.flatnonzero(finite & (np.abs(replicates - estimate) <= TIE_RTOL * scale))
    if near.size:
        values, inv = _exact_rows(func, sums[near], k)
        signs = np.array([0 if v is None else (v > est_exact) - (v < est_exact) for v in values], dtype=np.int8)
        order[near] = signs[inv]
    return order


def _mean_of_first(b: np.ndarray, c: np.ndarray) -> np.ndarray:
    return b.mean(axis=1)


def mean_ratio_order(replicates: np.ndarray, estimate: float, num: np.ndarray, den: np.ndarray,
                     estimate_num: np.ndarray, estimate_den: np.ndarray) -> np.ndarray | None:
    """:func:`exact_order` of ``s * mean_j(num_j / den_j)`` (``s > 0``, e.g. a macro accuracy) from ``(m, k)``
    resampled sums and ``(k,)`` sample sums; None (compare floats) unless all are integers below 2**53."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    est = np.concatenate([np.asarray(estimate_num, dtype=float), np.asarray(estimate_num, dtype=float),
                          np.asarray(estimate_den, dtype=float)])
    if num.ndim != 2 or num.shape != den.shape or est.size != 3 * num.shape[1]:
        return None
    sums = np.hstack([num, num, den])
    if not (exact_sums(sums, 1) and exact_sums(est[None, :], 1)):
        return None
    return exact_order(np.asarray(replicates, dtype=float), estimate, _mean_of_first, sums, est, num.shape[1])


def flat_jackknife(jack: np.ndarray) -> bool:
    """Whether the finite jackknife values are equal up to rounding (within :data:`TIE_RTOL`): the float formula of
    the acceleration would divide noise by itself, so it is decided exactly (elsewhere it is accurate, within
    2e-12 relative on Table 18)."""
    jack = jack[np.isfinite(jack)]
    if jack.size < 3:
        return False
    scale = max(1.0, float(np.abs(jack).max()))
    return float(np.abs(jack - jack.mean()).max()) <= TIE_RTOL * scale


def exact_jackknife(func: Callable[[np.ndarray, np.ndarray], Any], units: np.ndarray, k: int) -> np.ndarray:
    """Leave-one-unit-out values of the statistic on the total minus each unit's integer sums (rows), exactly: an
    object array of the defined ones."""
    total = units.sum(axis=0)
    values, inv = _exact_rows(func, total[None, :] - units, k)
    return np.array([values[i] for i in inv if values[i] is not None], dtype=object)


def exact_acceleration(jack: np.ndarray) -> float:
    """BCa's acceleration ``sum d^3 / (6 (sum d^2)^{3/2})``, ``d_i`` the mean minus each jackknife value (Efron 1987,
    eq. 6.6), summed exactly over the distinct values: 0 when all are equal, NaN below 3."""
    counts = Counter(jack.tolist())
    n = sum(counts.values())
    if n < 3:
        return float("nan")
    mean = sum((v * w for v, w in counts.items()), Fraction(0)) / n
    s2 = sum((w * (mean - v) ** 2 for v, w in counts.items()), Fraction(0))
    s3 = sum((w * (mean - v) ** 3 for v, w in counts.items()), Fraction(0))
    if s2 == 0:
        return 0.0
    return float(s3 / s2) / (6.0 * float(s2) ** 0.5)
