"""The endpoints of a bootstrap interval from its replicates, their Monte-Carlo error and their resolution
(:func:`bootstrap_interval`, the one place an interval is made from replicates).

Percentile: the ``alpha/2``, ``1 - alpha/2`` quantiles of the valid replicates (numpy's interpolation).  BCa
(Efron 1987): quantiles at levels moved by ``z0 = Phi^-1((#{theta* < theta} + #{theta* = theta} / 2) / B)`` (ties
half, as ``scipy.stats.bootstrap``; decided exactly with ``order``) and the jackknife's acceleration ``a``.  The
Monte-Carlo SE of an endpoint is its standard deviation over seeds (:func:`endpoint_mc_se`); the resolution the
spacing of the values the replicates take there, which no number of resamples refines (:func:`lattice_step`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from voxmem_analysis.stats._validation import check_ci_level, require
from voxmem_analysis.stats.exact import TIE_RTOL, exact_acceleration, flat_jackknife
from voxmem_analysis.stats.settings import INTERVALS

__all__ = ["bootstrap_interval", "endpoint_mc_se", "lattice_step", "edge_interval", "constant_parts",
           "sum_distribution", "coverage_flag", "COVERAGE_EVENTS", "NO_VARIATION"]

#: Tail mass of the order-statistic distribution left out of :func:`endpoint_mc_se`'s window.
_WINDOW_TAIL = 1e-7
#: Spread (in order statistics) from which :func:`_order_weights` uses the midpoint rule.
_MIDPOINT_SD = 8.0
#: The ``ci_flag`` of an interval whose replicates all equal the estimate.
NO_VARIATION = "no variation in the resamples"


def lattice_step(valid: np.ndarray, endpoint: float) -> float:
    """The spacing of the distinct replicate values at ``endpoint`` (0 when all are equal): on a value, the mean of
    its gaps to its neighbours; between two values, their distance (values within :data:`.exact.TIE_RTOL` are one)."""
    if not np.isfinite(endpoint) or valid.size == 0:
        return float("nan")
    tol = TIE_RTOL * max(1.0, abs(float(endpoint)))
    lo_t, hi_t = endpoint - tol, endpoint + tol
    prev = float(np.max(valid, initial=-np.inf, where=valid < lo_t))
    nxt = float(np.min(valid, initial=np.inf, where=valid > hi_t))
    if not np.any((valid >= lo_t) & (valid <= hi_t)):     # between two values
        return nxt - prev if np.isfinite(prev) and np.isfinite(nxt) else 0.0
    gaps = [g for g in (endpoint - prev, nxt - endpoint) if np.isfinite(g)]
    return sum(gaps) / len(gaps) if gaps else 0.0


def _resolution(valid: np.ndarray, lo: float, hi: float) -> float:
    """The larger lattice step at the two endpoints, to 12 significant digits."""
    return float(f"{max(lattice_step(valid, lo), lattice_step(valid, hi)):.12g}")


def _beta(b: int, q: float, level_var: float | None) -> tuple[float, float]:
    """Beta law of the level another run of ``b`` reads the endpoint at (``level_var``: BCa's estimated level)."""
    h = (b - 1) * q + 1
    if level_var is None:
        return h, b + 1 - h
    m = h / (b + 1)
    s = m * (1 - m) / max(level_var, 1e-300) - 1
    return m * s, (1 - m) * s


def _window(b: int, shape: tuple[float, float]) -> tuple[int, int]:
    """Order statistics ``lo .. hi - 1`` (0-based) holding all but :data:`_WINDOW_TAIL` of the level's law."""
    from scipy.special import betaincinv

    lo_x, hi_x = betaincinv(*shape, [_WINDOW_TAIL, 1 - _WINDOW_TAIL])
    lo = int(min(max(np.floor(b * lo_x) - 1, 0), b - 1))
    return lo, int(min(max(np.ceil(b * hi_x) + 1, lo + 1), b))


def _order_weights(shape: tuple[float, float], b: int, lo: int, hi: int) -> np.ndarray:
    """P(level in ``((i-1)/b, i/b]``): incomplete-beta differences, or midpoint densities when spread (1e-3 rel.)."""
    from scipy.special import betainc, betaln

    a1, b1 = shape
    sd = b * np.sqrt(a1 * b1 / ((a1 + b1) ** 2 * (a1 + b1 + 1)))
    if sd < _MIDPOINT_SD:
        return np.diff(betainc(a1, b1, np.arange(lo, hi + 1) / b))
    mid = (np.arange(lo, hi) + 0.5) / b
    return np.exp((a1 - 1) * np.log(mid) + (b1 - 1) * np.log1p(-mid) - betaln(a1, b1)) / b


def endpoint_mc_se(valid: np.ndarray, q: float, endpoint: float | None = None, *,
                   part: np.ndarray | None = None, level_var: float | None = None) -> float:
    """Monte-Carlo standard error of the ``q``-quantile of the ``valid`` replicates (an interval endpoint).

    Maritz & Jarrett (1978, JASA 73: 194-196; ``scipy.stats.mstats.mjci``): the order statistic at numpy's
    position ``h = (B - 1) q + 1`` spread over the sorted replicates with weights ``I_{i/B}(h, B + 1 - h) -
    I_{(i-1)/B}(h, B + 1 - h)``; replicates equal within :data:`.exact.TIE_RTOL` share their weight (a constant
    statistic: exactly 0).  ``level_var``: the variance of an estimated level (BCa, :func:`bca_level_variances`);
    ``part``: ``valid`` partitioned at least at :func:`_window`'s window.  NaN below 2 replicates or ``q``
    outside (0, 1).
    """
    b = valid.size
    if b < 2 or not 0.0 < q < 1.0:
        return float("nan")
    shape = _beta(b, q, level_var)
    lo, hi = _window(b, shape)
    if part is None:
        part = np.partition(valid, (lo, hi - 1)) if hi - lo < b else valid
    x = np.sort(part[lo:hi])
    tol = TIE_RTOL * max(1.0, float(np.max(np.abs(x))))
    first = np.where(np.r_[True, np.diff(x) > tol], np.arange(x.size), 0)
    x = x[np.maximum.accumulate(first)] - x[0]   # values within rounding of each other count as one
    return 0.0 if x[-1] == 0.0 else _spread(x, _order_weights(shape, b, lo, hi))


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


def _below_share(valid: np.ndarray, est: float, order: np.ndarray | None, tol: float = 0.0) -> np.ndarray:
    """Per replicate: 1 below the estimate, 1/2 on it (within ``tol``), 0 above (BCa's mid-rank)."""
    if order is None:
        return (valid < est - tol) + 0.5 * (np.abs(valid - est) <= tol)
    return (order < 0) + 0.5 * (order == 0)


def _bca(valid: np.ndarray, est: float, jack: np.ndarray | None, ci_level: float, order: np.ndarray | None):
    """``(levels, z0, a, mid-rank shares)`` of the BCa interval, or None where it is undefined."""
    if jack is None or not np.isfinite(est):
        return None
    g = _below_share(valid, est, order)
    got = _bca_at(float(g.mean()), _acceleration(jack), ci_level)
    return None if got is None else (*got, g)


def _bca_at(frac: float, a: float, ci_level: float):
    """``(levels, z0, a)`` of BCa at the mid-rank share ``frac`` below the estimate and acceleration ``a``."""
    from scipy.stats import norm

    if not 0.0 < frac < 1.0 or not np.isfinite(a):
        return None
    z0 = float(norm.ppf(frac))
    w = z0 + norm.ppf([(1 - ci_level) / 2, (1 + ci_level) / 2])
    return norm.cdf(z0 + w / (1 - a * w)), z0, a


def bca_level_variances(got, endpoints: tuple[float, float], ci_level: float, law: tuple[np.ndarray, ...]) -> list[float]:
    """``B`` times the variance over seeds of the level at which each BCa endpoint is read (delta method).

    The level ``alpha1 = Phi(z0 + w / (1 - a w))``, ``w = z0 + z_alpha``, with ``z0 = Phi^-1(p)`` estimated from
    the same replicates: the endpoint ``x`` stands at ``U = alpha1 + c (p_B - p) - (F_B(x) - F(x))``, ``c =
    phi(z_alpha1) (1 + 1 / (1 - a w)^2) / phi(z0)``, so ``B Var(U) = alpha1 (1 - alpha1) + c^2 Var(g) - 2 c
    Cov(g, 1{theta* <= x})`` (``g``: 1 below the estimate, 1/2 on it).  ``got``: ``(levels, z0, a)``; ``law``:
    ``(points, weights, g)`` of the bootstrap distribution.
    """
    from scipy.stats import norm

    levels, z0, a = got[:3]
    points, weights, g = law
    mean_g = float(weights @ g)
    var_g = float(weights @ g ** 2) - mean_g ** 2
    out = []
    for lev, zq, x in zip(levels, norm.ppf([(1 - ci_level) / 2, (1 + ci_level) / 2]), endpoints):
        w = z0 + zq
        c = float(norm.pdf(norm.ppf(lev)) * (1 + 1 / (1 - a * w) ** 2) / norm.pdf(z0))
        below = (points <= x + TIE_RTOL * max(1.0, abs(x))).astype(float)
        cov = float(weights @ (g * below)) - mean_g * float(weights @ below)
        out.append(lev * (1 - lev) + c * c * var_g - 2 * c * cov)
    return out


def _exact_percentile_mc_se(values: np.ndarray, pmf: np.ndarray, q: float, b: int) -> float:
    """Exact MC error of numpy's ``q`` percentile of ``b`` draws from a lattice law (binomial order statistics)."""
    from scipy.stats import binom

    cdf = np.minimum(np.cumsum(pmf), 1.0)
    cdf[-1] = 1.0
    j = int(np.floor((b - 1) * q))
    f = (b - 1) * q - j
    at = np.diff(np.concatenate([[0.0], binom.sf(j, b, cdf)]))
    split = binom.pmf(j + 1, b, cdf[:-1]) if f > 0 else np.zeros(cdf.size - 1)
    split = np.minimum(split, at[:-1])
    points = np.concatenate([values, values[:-1] + f * np.diff(values)])
    return _spread(points, np.concatenate([at - np.concatenate([split, [0.0]]), split]))


def _spread(x: np.ndarray, w: np.ndarray) -> float:
    """Standard deviation of the values ``x`` with probabilities ``w``."""
    keep = w > 0
    x, w = x[keep] - x[keep].min(), w[keep]
    if x.size < 2:
        return 0.0
    mean = float(w @ x) / float(w.sum())
    return float(np.sqrt(max(float(w @ (x - mean) ** 2) / float(w.sum()), 0.0)))


#: Lattice counts :func:`_simulated_bca_mc_se` draws: runs between 2,000 and 20,000 (a move one run in a
#: thousand makes is then seen about 20 times).
_SIMULATED_COUNTS = 1_000_000
#: Lattices of more values than this are fine enough for the delta method (:func:`bca_level_variances`).
_COARSE_LATTICE = 200


def _simulated_bca_mc_se(values: np.ndarray, pmf: np.ndarray, est: float, a: float, ci_level: float,
                         b: int) -> list[float]:
    """SD of each BCa endpoint over seeded runs of ``b`` draws from the exact law, each with its own ``z0``."""
    from scipy.stats import norm

    keep = pmf > 1e-15
    v, p = values[keep], pmf[keep] / pmf[keep].sum()
    runs = int(min(max(_SIMULATED_COUNTS // v.size, 2_000), 20_000))
    counts = _multinomial_runs(np.random.default_rng(0), b, p, runs)
    g = _below_share(v, est, None, TIE_RTOL * max(1.0, abs(est)))
    frac = np.clip(counts @ g / b, 0.5 / b, 1 - 0.5 / b)
    z0 = norm.ppf(frac)
    cum = np.cumsum(counts, axis=1)
    out = []
    for zq in norm.ppf([(1 - ci_level) / 2, (1 + ci_level) / 2]):
        w = z0 + zq
        pos = (b - 1) * norm.cdf(z0 + w / (1 - a * w))
        first, frac_pos = np.floor(pos), pos - np.floor(pos)
        lo = v[np.argmax(cum > first[:, None], axis=1)]
        hi = v[np.argmax(cum > np.minimum(first + 1, b - 1)[:, None], axis=1)]
        x = lo + frac_pos * (hi - lo)
        out.append(float(np.std(x - x[0], ddof=1)))
    return out


def _multinomial_runs(rng: np.random.Generator, b: int, p: np.ndarray, runs: int) -> np.ndarray:
    """``runs`` multinomial(b, p) rows, drawn as conditional binomials of all runs at once."""
    out = np.empty((runs, p.size), dtype=np.int64)
    left, rest = np.full(runs, b, dtype=np.int64), 1.0
    for j, pj in enumerate(p[:-1]):
        out[:, j] = rng.binomial(left, min(max(pj / rest, 0.0), 1.0)) if rest > 0 else 0
        left -= out[:, j]
        rest -= pj
    out[:, -1] = left
    return out


def interval_summary(reps: np.ndarray, est: float, ci_level: float, method: str,
                     jack: np.ndarray | None = None, order: np.ndarray | None = None,
                     lattice: tuple[np.ndarray, np.ndarray] | None = None) -> dict:
    """Interval, invalid count, Monte-Carlo SE of each endpoint, resolution and flag of one statistic (``lattice``:
    its exact bootstrap law, :func:`sum_distribution`, from which the errors are computed instead of estimated)."""
    reps = np.where(np.isfinite(reps), reps, np.nan)
    ok = ~np.isnan(reps)
    valid = reps[ok]
    out = {"ci_low": float("nan"), "ci_high": float("nan"), "n_invalid": int(reps.size - valid.size),
           "ci_low_mc_se": float("nan"), "ci_high_mc_se": float("nan"), "ci_resolution": float("nan"), "ci_flag": ""}
    if valid.size == 0:
        return {**out, "ci_flag": "not estimable: undefined on every resample"}
    if float(valid.max() - valid.min()) <= TIE_RTOL * max(1.0, float(np.abs(valid).max())):
        v = float(valid[0])
        return {**out, "ci_low": v, "ci_high": v, "ci_low_mc_se": 0.0, "ci_high_mc_se": 0.0, "ci_resolution": 0.0,
                "ci_flag": NO_VARIATION}
    b = valid.size
    if lattice is not None:
        idx = np.argsort(lattice[0], kind="stable")
        lattice = (lattice[0][idx], lattice[1][idx])
    level_var = [None, None]
    if method == "bca":
        got = _bca(valid, est, jack, ci_level, None if order is None else np.asarray(order)[ok])
        if got is None:
            return out
        q_lo, q_hi = float(got[0][0]), float(got[0][1])
        lo, hi = np.quantile(valid, [q_lo, q_hi])
        if lattice is not None and int((lattice[1] > 1e-15).sum()) <= _COARSE_LATTICE:
            out.update(ci_low=float(lo), ci_high=float(hi), ci_resolution=_resolution(valid, float(lo), float(hi)))
            se = _simulated_bca_mc_se(*lattice, est, got[2], ci_level, b)
            return {**out, "ci_low_mc_se": se[0], "ci_high_mc_se": se[1]}
        lattice = None             # a fine lattice: the delta method on the replicates
        level_var = [v / b for v in bca_level_variances(got, (float(lo), float(hi)), ci_level,
                                                         (valid, np.full(b, 1.0 / b), got[3]))]
    else:
        q_lo, q_hi = (1 - ci_level) / 2, (1 + ci_level) / 2
        lo, hi = np.percentile(valid, [100 * q_lo, 100 * q_hi])   # = nanpercentile of reps, without the scan
    out.update(ci_low=float(lo), ci_high=float(hi), ci_resolution=_resolution(valid, float(lo), float(hi)))
    if not (b >= 2 and 0.0 < q_lo <= q_hi < 1.0):
        return out
    shapes = [_beta(b, q, v) for q, v in zip((q_lo, q_hi), level_var)]
    if lattice is not None:
        se = [_exact_percentile_mc_se(*lattice, q, b) for q in (q_lo, q_hi)]
    else:                                      # one partition for both endpoints' windows
        part = np.partition(valid, sorted({c for sh in shapes for c in (_window(b, sh)[0], _window(b, sh)[1] - 1)}))
        se = [endpoint_mc_se(valid, q, float(x), part=part, level_var=v)
              for q, x, v in zip((q_lo, q_hi), (lo, hi), level_var)]
    return {**out, "ci_low_mc_se": se[0], "ci_high_mc_se": se[1]}


def edge_interval(summary: dict, span: tuple[float, float] | None, parts, ci_level: float, unit: str = "item") -> dict:
    """``summary`` with a bootstrap that has no variation (every unit of a stratum the same value ``c``) replaced by
    an interval: for a mean of ``n`` units within ``span = (lo, hi)``, ``[c - (c - lo) u, c + (hi - c) u]`` with ``u
    = z^2 / (n + z^2)``, the Wilson bound of 0 events in ``n``, summed over the strata ``parts`` (``(weight, c,
    n)``); ``span`` or ``parts`` None: not estimable.  ``ci_flag`` says which."""
    from scipy.stats import norm

    if summary["ci_flag"] != NO_VARIATION:
        return summary
    z2 = float(norm.ppf(0.5 + ci_level / 2)) ** 2
    done = span is not None and bool(parts) and all(span[0] <= c <= span[1] and n >= 1 for _, c, n in parts)
    lo = hi = float("nan")
    if done:
        lo = sum(w * (c - (c - span[0]) * z2 / (n + z2)) for w, c, n in parts)
        hi = sum(w * (c + (span[1] - c) * z2 / (n + z2)) for w, c, n in parts)
        n_all = sum(n for _, _, n in parts)
        how = f"Wilson bound of 0 in {n_all} {unit}{'s' * (n_all != 1)}" + (" (per stratum)" if len(parts) > 1 else "")
    else:
        how = "not estimable"
    return {**summary, "ci_low": lo, "ci_high": hi, "ci_low_mc_se": 0.0 if done else float("nan"),
            "ci_high_mc_se": 0.0 if done else float("nan"), "ci_resolution": float("nan"),
            "ci_flag": f"{NO_VARIATION}; {how}"}


def constant_parts(values: np.ndarray, weights: np.ndarray, strata: np.ndarray | None):
    """``parts`` of :func:`edge_interval`: per stratum ``(share of the weights, value, units)`` when its units share
    one value (up to rounding), else None."""
    codes = np.zeros(values.size, dtype=np.int64) if strata is None else np.asarray(strata)
    total, parts = float(weights.sum()), []
    for c in np.unique(codes):
        v = values[codes == c]
        if float(v.max() - v.min()) > TIE_RTOL * max(1.0, float(np.abs(v).max())):
            return None
        parts.append((float(weights[codes == c].sum()) / total, float(v[0]), int(v.size)))
    return parts


def sum_distribution(values: np.ndarray, strata: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The exact bootstrap law ``(sums, probabilities)`` of the sum of integer ``values`` over units drawn with
    replacement (within ``strata``): one draw's law convolved ``n`` times (by squaring), the strata's convolved."""
    v = np.asarray(values, dtype=np.int64)
    codes = np.zeros(v.size, dtype=np.int64) if strata is None else np.asarray(strata)
    low, pmf = 0, np.ones(1)
    for c in np.unique(codes):
        x = v[codes == c]
        lo = int(x.min())
        one = np.bincount(x - lo).astype(float) / x.size
        part, power, n = np.ones(1), one, x.size
        while n:
            if n & 1:
                part = _convolve(part, power)
            n >>= 1
            if n:
                power = _convolve(power, power)
        low, pmf = low + lo * x.size, _convolve(pmf, part)
    return low + np.arange(pmf.size), pmf


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Convolution of two probability vectors (by FFT when long; below 1e-300: 0)."""
    if min(a.size, b.size) < 64:
        out = np.convolve(a, b)
    else:
        from scipy.signal import fftconvolve

        out = fftconvolve(a, b)
    out[out < 1e-300] = 0.0
    return out / out.sum()


#: Fewest events on each side from which an interval covers within 2 points of 95 % in
#: ``benchmarks/coverage_study.py`` (n = 5 to 100, accuracy 0 to 1), and fewest items for Wilson.
COVERAGE_EVENTS = {"wilson": 4, "percentile": 5, "bca": 15}
COVERAGE_WILSON_N = 30


def coverage_flag(method: str, low: float, high: float) -> str:
    """Why an interval from ``low`` and ``high`` events (successes and failures; discordant pairs each way) may not
    cover within 2 points of its level (:data:`COVERAGE_EVENTS`), or ``""``; ``method``: ``wilson``, ``percentile``
    or ``bca``."""
    need = COVERAGE_EVENTS[method]
    if method == "wilson" and low + high < COVERAGE_WILSON_N:
        return f"n = {low + high:g} < {COVERAGE_WILSON_N}: Wilson coverage may be off 95 % by > 2 points"
    if min(low, high) < need:
        return f"few events ({min(low, high):g} < {need}): {method} coverage may be off 95 % by > 2 points"
    return ""


def bootstrap_interval(replicates: Any, estimate: float, *, ci_level: float = 0.95, method: str = "percentile",
                       jackknife: Any = None, order: Any = None, lattice: Any = None) -> dict:
    """The interval of one statistic from its bootstrap replicates, as the paired engine makes it (for bootstraps
    run elsewhere, e.g. :func:`voxmem_analysis.analysis.verdicts.slice_accuracy`).

    Parameters
    ----------
    replicates : array-like of float
        The statistic on each resample; non-finite values are invalid (dropped, counted).
    estimate : float
        The statistic on the sample.
    method : {"percentile", "bca"}
    jackknife : array-like, optional
        Leave-one-unit-out values (BCa's acceleration, required for it): floats, or Fractions for an exact one.
    order : array-like of int, optional
        BCa: the sign of each replicate minus the estimate, decided exactly (:func:`.exact.exact_order`).
    lattice : (values, probabilities), optional
        The exact bootstrap law (:func:`sum_distribution`), for exact Monte-Carlo errors.

    Returns
    -------
    dict
        ``ci_low, ci_high, n_invalid, ci_low_mc_se, ci_high_mc_se`` (NaN where undefined), ``ci_resolution`` (the
        larger lattice step at the endpoints) and ``ci_flag`` (:data:`NO_VARIATION`, or empty).
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
    if lattice is not None:
        lattice = (np.asarray(lattice[0], dtype=float), np.asarray(lattice[1], dtype=float))
    return interval_summary(reps, float(estimate), check_ci_level(ci_level), method, jack, order, lattice)
