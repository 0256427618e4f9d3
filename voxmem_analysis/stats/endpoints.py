"""The endpoints of a bootstrap interval from its replicates: percentile or BCa, and their Monte-Carlo error.

:func:`bootstrap_interval` is the one place an interval is made from replicates (the paired engine of
:mod:`~voxmem_analysis.stats.bootstrap` and the slice accuracies of
:func:`voxmem_analysis.analysis.verdicts.slice_accuracy` both call it):

- **percentile**: the ``alpha/2`` and ``1 - alpha/2`` quantiles of the valid replicates (``numpy``'s
  linear interpolation);
- **BCa** (Efron 1987): the same quantiles at levels moved by the bias correction ``z0`` and the
  acceleration ``a``.  ``z0 = Phi^-1((#{theta* < theta} + #{theta* = theta} / 2) / B)``: replicates equal
  to the estimate count half below and half above (the mid-rank convention, as
  ``scipy.stats.bootstrap``), so a statistic on a lattice, whose replicates often equal the estimate,
  is not biased either way.  Whether a replicate is below, equal to or above the estimate is decided
  exactly when the caller passes ``order`` (:func:`voxmem_analysis.stats.exact.exact_order`), and the
  acceleration exactly when the jackknife values are Fractions
  (:func:`voxmem_analysis.stats.exact.exact_acceleration`);
- **Monte-Carlo standard error** of each endpoint (:func:`endpoint_mc_se`): how much another seed moves it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from voxmem_analysis.stats._validation import check_ci_level, require
from voxmem_analysis.stats.exact import TIE_RTOL, exact_acceleration, flat_jackknife
from voxmem_analysis.stats.settings import INTERVALS

__all__ = ["bootstrap_interval", "bca_levels", "endpoint_mc_se", "lattice_step"]

#: Tail mass of the order-statistic distribution left out of :func:`endpoint_mc_se`'s window.
_WINDOW_TAIL = 1e-7
#: Spread (in order statistics) from which :func:`_order_weights` uses the midpoint rule.
_MIDPOINT_SD = 8.0


def lattice_step(valid: np.ndarray, endpoint: float, window: np.ndarray | None = None) -> float:
    """The spacing of the distinct replicate values around ``endpoint`` (0 when all are equal).

    Values closer than :data:`~voxmem_analysis.stats.exact.TIE_RTOL` (relative) count as one: a lattice
    value reached by different counts differs from itself by rounding only.  On a value, the mean of
    the gaps to its neighbours (the lattice step on a regular lattice); between two values (a linear
    interpolation), their distance.  ``window``: sorted replicates around the endpoint, searched first
    (the whole of ``valid`` is scanned only when a neighbour lies outside it).
    """
    if not np.isfinite(endpoint) or valid.size == 0:
        return float("nan")
    tol = TIE_RTOL * max(1.0, abs(float(endpoint)))
    lo_t, hi_t = endpoint - tol, endpoint + tol
    prev = nxt = None
    if window is not None and window.size:
        i = int(np.searchsorted(window, lo_t, side="left"))
        j = int(np.searchsorted(window, hi_t, side="right"))
        prev = float(window[i - 1]) if i > 0 else None
        nxt = float(window[j]) if j < window.size else None
        on_value = j > i
    else:
        on_value = bool(np.any((valid >= lo_t) & (valid <= hi_t)))
    # a neighbour beyond the window (an atom covers its edge) or no window: one pass over everything
    if prev is None:
        m = float(np.max(valid, initial=-np.inf, where=valid < lo_t))
        prev = m if m > -np.inf else None
    if nxt is None:
        m = float(np.min(valid, initial=np.inf, where=valid > hi_t))
        nxt = m if m < np.inf else None
    if not on_value:                    # between two values
        return 0.0 if prev is None or nxt is None else nxt - prev
    gaps = [g for g in ((endpoint - prev) if prev is not None else None,
                        (nxt - endpoint) if nxt is not None else None) if g is not None]
    return sum(gaps) / len(gaps) if gaps else 0.0


def _window(b: int, q: float) -> tuple[float, int, int]:
    """``(h, lo, hi)``: numpy's interpolation position ``h`` of the ``q``-quantile of ``b`` replicates and the
    order statistics ``lo .. hi - 1`` (0-based) holding all but :data:`_WINDOW_TAIL` of its distribution."""
    from scipy.special import betaincinv

    h = (b - 1) * q + 1
    lo_x, hi_x = betaincinv(h, b + 1 - h, [_WINDOW_TAIL, 1 - _WINDOW_TAIL])
    lo = int(min(max(np.floor(b * lo_x) - 1, 0), b - 1))
    return h, lo, int(min(max(np.ceil(b * hi_x) + 1, lo + 1), b))


def endpoint_mc_se(valid: np.ndarray, q: float, endpoint: float | None = None, *,
                   part: np.ndarray | None = None) -> float:
    """Monte-Carlo standard error of the ``q``-quantile of ``valid`` replicates (an interval endpoint).

    Two parts, and the larger is reported:

    1. **Maritz-Jarrett** (Maritz & Jarrett 1978, "A note on estimating the variance of the sample
       median", JASA 73, 194-196; ``scipy.stats.mstats.mjci``): the standard deviation of the quantile over another ``B`` resamples, taking the
       ``B`` replicates at hand as the distribution they come from.  The order statistic at ``numpy``'s
       interpolation position ``h = (B - 1) q + 1`` is then distributed over the sorted replicates with
       weights ``W_i = I_{i/B}(h, B + 1 - h) - I_{(i-1)/B}(h, B + 1 - h)`` (regularized incomplete beta;
       exact for integer ``h``).  Replicates that tie simply share their weight, so a lattice is
       handled as is: the estimate is the spread over the lattice values another seed could land on
       (about ``sqrt(q (1 - q) / B) / f`` for a smooth statistic, ``f`` the density at the endpoint).
    2. **Resolution** ``h / sqrt(12)``, ``h`` the lattice step at the endpoint (:func:`lattice_step`):
       the standard deviation of a quantity known to the nearest lattice value (a rounding error uniform
       over one step has variance ``h^2 / 12``: Sheppard's correction for grouped data, Sheppard 1898).  On a lattice the plug-in of part 1 can be 0 -- the ``B`` replicates put
       ``q`` inside one value's mass -- while another seed moves the endpoint by one step, because
       the mass of that value is itself estimated; the floor says the endpoint is not known more
       finely than the lattice, and more resamples do not reduce it.  For a smooth statistic the
       spacing is about ``1 / (B f)`` and the floor is negligible.

    Parameters
    ----------
    valid : ndarray
        Finite replicates.
    q : float
        Level of the endpoint (the BCa-adjusted level for BCa).
    endpoint : float, optional
        The endpoint (default: ``numpy.quantile(valid, q)``).
    part : ndarray, optional
        ``valid`` partitioned (``numpy.partition``) at least at the window of :func:`_window`
        (one partition can serve both endpoints).

    Returns
    -------
    float
        NaN with fewer than 2 replicates or ``q`` outside (0, 1).
    """
    b = valid.size
    if b < 2 or not 0.0 < q < 1.0:
        return float("nan")
    if endpoint is None:
        endpoint = float(np.quantile(valid, q))
    h, lo, hi = _window(b, q)
    if part is None:
        part = np.partition(valid, (lo, hi - 1)) if hi - lo < b else valid
    x = np.sort(part[lo:hi])
    w = _order_weights(h, b, lo, hi)
    total = float(w.sum())
    mean = float(w @ x) / total
    mj = float(np.sqrt(max(float(w @ (x - mean) ** 2) / total, 0.0)))
    step = lattice_step(valid, float(endpoint), x)
    return max(mj, step / np.sqrt(12.0)) if np.isfinite(step) else mj


def _order_weights(h: float, b: int, lo: int, hi: int) -> np.ndarray:
    """Probabilities that the order statistic at position ``h`` of ``b`` draws is the ``i``-th smallest
    replicate, ``i = lo + 1 .. hi``: ``I_{i/b}(h, b + 1 - h) - I_{(i-1)/b}(h, b + 1 - h)``.

    When the distribution spans many order statistics (standard deviation of ``_MIDPOINT_SD`` or more
    of them, e.g. 15.6 for ``b = 10,000`` at ``q = 0.025``) each difference is the Beta density at the
    cell's midpoint over ``b`` (midpoint rule: relative error about ``1 / (24 sd^2)``, under 1e-3;
    the weights are normalised), seven times faster than the incomplete beta.
    """
    from scipy.special import betainc, betaln

    a1, b1 = h, b + 1 - h
    sd = b * np.sqrt(a1 * b1 / ((a1 + b1) ** 2 * (a1 + b1 + 1)))
    if sd < _MIDPOINT_SD:
        return np.diff(betainc(a1, b1, np.arange(lo, hi + 1) / b))
    mid = (np.arange(lo, hi) + 0.5) / b
    return np.exp((a1 - 1) * np.log(mid) + (b1 - 1) * np.log1p(-mid) - betaln(a1, b1)) / b


def _acceleration(jack: np.ndarray) -> float:
    """BCa's acceleration from jackknife values: exact for Fractions, else the float formula."""
    if jack.dtype == object:
        return exact_acceleration(jack)
    jack = jack[np.isfinite(jack)]
    if jack.size < 3:
        return float("nan")
    if flat_jackknife(jack):     # equal up to rounding: no influence to be skewed, not noise over noise
        return 0.0
    dev = jack.mean() - jack
    den = 6.0 * np.sum(dev ** 2) ** 1.5
    return float(np.sum(dev ** 3) / den) if den > 0 else 0.0


def bca_levels(valid: np.ndarray, est: float, jack: np.ndarray | None, ci_level: float,
               order: np.ndarray | None = None) -> tuple[float, float]:
    """Adjusted percentile levels of the BCa interval (Efron 1987); NaN if undefined.

    ``order`` (one of -1, 0, 1 per valid replicate: its sign against the estimate) decides which
    replicates lie below or on the estimate; without it, floats are compared.
    """
    from scipy.stats import norm

    alpha = 1.0 - ci_level
    if jack is None or not np.isfinite(est):
        return float("nan"), float("nan")
    if order is None:
        below, ties = np.sum(valid < est), np.sum(valid == est)
    else:
        below, ties = np.sum(order < 0), np.sum(order == 0)
    frac = (below + 0.5 * ties) / valid.size   # mid-rank: ties count half below, half above
    a = _acceleration(jack)
    if not 0.0 < frac < 1.0 or not np.isfinite(a):
        return float("nan"), float("nan")
    z0 = norm.ppf(frac)
    zs = norm.ppf([alpha / 2, 1 - alpha / 2])
    levels = norm.cdf(z0 + (z0 + zs) / (1 - a * (z0 + zs)))
    return float(levels[0]), float(levels[1])


def interval_summary(reps: np.ndarray, est: float, ci_level: float, method: str,
                     jack: np.ndarray | None = None, order: np.ndarray | None = None) -> dict:
    """Interval, invalid count and Monte-Carlo SE of each endpoint for one statistic."""
    reps = np.where(np.isfinite(reps), reps, np.nan)
    ok = ~np.isnan(reps)
    valid = reps[ok]
    n_invalid = int(reps.size - valid.size)
    out = {"ci_low": float("nan"), "ci_high": float("nan"), "n_invalid": n_invalid,
           "ci_low_mc_se": float("nan"), "ci_high_mc_se": float("nan")}
    if valid.size == 0:
        return out
    alpha = 1.0 - ci_level
    if method == "bca":
        q_lo, q_hi = bca_levels(valid, est, jack, ci_level, None if order is None else np.asarray(order)[ok])
        if not np.isfinite(q_lo):
            return out
        lo, hi = np.quantile(valid, [q_lo, q_hi])
    else:
        q_lo, q_hi = alpha / 2, 1 - alpha / 2
        lo, hi = np.percentile(valid, [100 * q_lo, 100 * q_hi])   # = nanpercentile of reps, without the scan
    part = None
    if valid.size >= 2 and 0.0 < q_lo <= q_hi < 1.0:      # one partition for both endpoints' windows
        (_, a0, a1), (_, b0, b1) = _window(valid.size, q_lo), _window(valid.size, q_hi)
        part = np.partition(valid, sorted({a0, a1 - 1, b0, b1 - 1}))
    out.update(ci_low=float(lo), ci_high=float(hi), ci_low_mc_se=endpoint_mc_se(valid, q_lo, float(lo), part=part),
               ci_high_mc_se=endpoint_mc_se(valid, q_hi, float(hi), part=part))
    return out


def bootstrap_interval(replicates: Any, estimate: float, *, ci_level: float = 0.95,
                       method: str = "percentile", jackknife: Any = None, order: Any = None) -> dict:
    """Interval of one statistic from its bootstrap replicates, as the paired engine computes it.

    For bootstraps run elsewhere (e.g. the slice accuracies of
    :func:`voxmem_analysis.analysis.verdicts.slice_accuracy`): the same endpoints and the same
    Monte-Carlo standard errors as the ``ci_low, ci_high, ci_low_mc_se, ci_high_mc_se`` columns of
    :func:`~voxmem_analysis.stats.bootstrap.paired_bootstrap_matrix`.

    Parameters
    ----------
    replicates : array-like of float
        The statistic on each resample; non-finite values are invalid (dropped, counted).
    estimate : float
        The statistic on the original sample (BCa's bias correction).
    ci_level : float, default 0.95
    method : {"percentile", "bca"}
    jackknife : array-like, optional
        Leave-one-unit-out values of the statistic (BCa's acceleration; required for "bca"): floats,
        or an object array of :class:`fractions.Fraction` for an exact acceleration.
    order : array-like of int, optional
        For BCa: the sign (-1, 0, 1) of each replicate minus the estimate, decided exactly by the
        caller (:func:`voxmem_analysis.stats.exact.exact_order`); default: the floats are compared.

    Returns
    -------
    dict
        ``ci_low, ci_high, n_invalid, ci_low_mc_se, ci_high_mc_se`` (NaN where undefined).
    """
    require(method in INTERVALS, f"interval must be one of {INTERVALS}, got {method!r}", field="interval")
    require(method != "bca" or jackknife is not None, "the BCa interval needs the jackknife values",
            field="jackknife")
    reps = np.asarray(replicates, dtype=float)
    if order is not None:
        order = np.asarray(order)
        require(order.shape == reps.shape, f"order must give one sign per replicate ({reps.size}), got shape "
                f"{order.shape}", field="order")
    jack = None
    if jackknife is not None:
        jack = np.asarray(jackknife)
        jack = jack if jack.dtype == object else jack.astype(float)
    return interval_summary(reps, float(estimate), check_ci_level(ci_level), method, jack, order)
