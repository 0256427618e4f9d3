"""Paired item bootstrap for accuracy changes between two conditions (paper Appendix D.4).

The paper compares each model's accuracy at a *baseline* condition (8K context) with a
*comparison* condition (64K) on the same items.  Items are the resampling unit: one bootstrap
resample draws ``n`` items with replacement, and **both** conditions of **every** series
(model) are rescored on that same draw, so the pairing between conditions and the
correlation between models are kept.

Design
------
The data are held as per-item matrices of shape ``(n_items, k)`` -- one column per series --
for the baseline scores, the comparison scores and a boolean *mask* ("this item was judged
for this series at both conditions").  A resample is a vector of multiplicities ``c`` (how
often each item was drawn; a multinomial(``n``, 1/n) draw).  Stacking ``n_boot`` of them gives
the count matrix ``C`` (``n_boot x n_items``), and the resampled sums are matrix products::

    S_base = C @ (baseline * mask)     S_comp = C @ (comparison * mask)     N = C @ mask

so per-series accuracies on every resample are ``S_base / N`` and ``S_comp / N``.  ``C`` is
drawn once per resampling-unit set (in blocks of rows to bound memory) and reused by every
statistic and every series.  Statistics are functions of the ``(n_boot, k)`` accuracy arrays.

Public API
----------
:func:`paired_bootstrap`          two per-item score vectors -> tidy frame
:func:`paired_bootstrap_matrix`   ``(n_items, k)`` matrices -> tidy frame
:func:`paired_bootstrap_frame`    long pandas/polars frame -> tidy frame (pivot + engine)
:func:`bootstrap_interval`        the interval of one statistic from replicates run elsewhere
                                  (:mod:`~voxmem_analysis.stats.endpoints`)

The engine's parts live in their own modules and are importable from here as before:
:mod:`~voxmem_analysis.stats.resampling` (:func:`iter_bootstrap_counts`,
:func:`shared_bootstrap_counts`, :func:`bootstrap_means`), :mod:`~voxmem_analysis.stats.paired_statistics`
(:class:`Statistic`, the factories :func:`difference`, :func:`ratio`, :func:`mean_difference`,
:func:`mean_ratio`, :func:`mean_level`, the built-ins :data:`STATISTICS`) and
:mod:`~voxmem_analysis.stats.settings` (:class:`PairedSettings`).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np
import pandas as pd

from voxmem_analysis.errors import MissingDataError
from voxmem_analysis.stats._validation import as_float_matrix, as_float_vector, ci_level_alias, frame_columns, require
from voxmem_analysis.stats.endpoints import (bootstrap_interval, constant_parts, coverage_flag, edge_interval,
                                             interval_summary, sum_distribution)
from voxmem_analysis.stats.exact import exact_jackknife, exact_order, exact_sums, flat_jackknife
from voxmem_analysis.stats.paired_statistics import (STATISTICS, Statistic, difference, mean_difference, mean_level,
                                                     mean_ratio, ratio, resolve_statistics)
from voxmem_analysis.stats.resampling import (BootstrapMeans, bootstrap_means, combine_mask, iter_bootstrap_counts,
                                              resampled_sums, shared_bootstrap_counts, strata_codes)
from voxmem_analysis.stats.resources import check_bootstrap_memory
from voxmem_analysis.stats.settings import INTERVALS, PairedSettings

__all__ = [
    "Statistic", "STATISTICS", "difference", "ratio", "mean_difference", "mean_ratio",
    "mean_level", "BootstrapMeans", "iter_bootstrap_counts", "shared_bootstrap_counts", "bootstrap_means",
    "paired_bootstrap", "paired_bootstrap_matrix", "paired_bootstrap_frame", "INTERVALS",
    "bootstrap_interval", "PairedSettings",
]


# =========================================================================================
# Summaries
# =========================================================================================

def _finite_or_nan(x: float) -> float:
    return float(x) if np.isfinite(x) else float("nan")


_RESULT_COLUMNS = ["statistic", "estimate", "ci_low", "ci_high", "n", "n_series", "n_invalid",
                   "n_boot", "seed", "ci_level", "interval", "ci_low_mc_se", "ci_high_mc_se", "ci_resolution",
                   "ci_flag", "cluster", "n_clusters", "design_effect"]


def _checked(settings: PairedSettings) -> PairedSettings:
    """The settings every paired entry point checks, with ``statistics`` resolved to :class:`Statistic` objects."""
    require(settings.aggregate in ("mean", None), f"aggregate must be 'mean' or None, got {settings.aggregate!r}",
            field="aggregate")
    return dataclasses.replace(settings.check(), statistics=resolve_statistics(settings.statistics))


def _accuracies(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and comparison accuracies from stacked sums ``[B*M | C*M | M]`` (rows)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return A[:, :k] / A[:, 2 * k:], A[:, k:2 * k] / A[:, 2 * k:]


def _unit_sums(A: np.ndarray, clusters: np.ndarray | None) -> np.ndarray:
    """The rows of ``A`` summed within each resampling unit (the cluster when given)."""
    return A if clusters is None else pd.DataFrame(A).groupby(clusters, sort=True).sum().to_numpy()


def _sum_columns(sl: slice, k: int) -> np.ndarray:
    """Columns of the stacked sums ``[B*M | C*M | M]`` of the series ``sl``."""
    idx = np.arange(k)[sl]
    return np.concatenate([idx, k + idx, 2 * k + idx])


@dataclasses.dataclass(frozen=True)
class _BcaInputs:
    """What BCa needs besides the replicates: the float jackknife accuracies and, where the scores are
    counts, the integer sums of every resample, of the sample and of every unit, on which a statistic
    with an exact form (:attr:`Statistic.exact`) is ordered against its estimate and jackknifed exactly
    (:mod:`voxmem_analysis.stats.exact`)."""

    sums: np.ndarray
    total: np.ndarray
    units: np.ndarray
    k: int
    exact: bool
    jack: tuple[np.ndarray, np.ndarray]

    @classmethod
    def build(cls, A: np.ndarray, sums: np.ndarray, k: int, clusters: np.ndarray | None) -> _BcaInputs:
        units = _unit_sums(A, clusters)
        return cls(sums, A.sum(axis=0), units, k, exact_sums(units, units.shape[0]),
                   _accuracies(units.sum(axis=0)[None, :] - units, k))

    def parts(self, s: Statistic, sl: slice, reps: np.ndarray, est: float):
        """``(jackknife values, order of the replicates or None)`` of statistic ``s`` on series ``sl``."""
        jack = s(self.jack[0][:, sl], self.jack[1][:, sl])
        if not self.exact or s.exact is None:
            return jack, None
        cols = _sum_columns(sl, self.k)
        kk = cols.size // 3
        order = exact_order(reps, est, s.exact, self.sums[:, cols], self.total[cols], kk)
        if flat_jackknife(jack):      # equal up to rounding: noise over noise is no acceleration
            jack = exact_jackknife(s.exact, self.units[:, cols], kk)
        return jack, order


def _paired_core(B: np.ndarray, Cm: np.ndarray, M: np.ndarray, run: PairedSettings, *, series: Sequence[Any],
                 strata: np.ndarray | None, clusters: np.ndarray | None = None,
                 cluster_name: str = "item") -> list[dict]:
    """Engine shared by the three public entry points; returns result rows (dicts).

    With ``clusters`` the resampling draws whole clusters, and the item-level bootstrap is
    run as well (same seed) to report the design effect: the variance of the statistic's
    replicates under cluster resampling over its variance under item resampling.
    """
    keep = M.any(axis=1)
    if not keep.any():   # the data lacks pairs: a partial release, not a bad argument
        raise MissingDataError("no item is judged at both conditions for any series; nothing to bootstrap",
                               code="no_pairs", field="mask")
    B, Cm, M = B[keep], Cm[keep], M[keep]
    strata = None if strata is None else strata[keep]
    clusters = None if clusters is None else pd.factorize(clusters[keep], sort=True)[0]
    if clusters is not None and strata is not None:
        nun = pd.Series(strata).groupby(clusters).nunique()
        require((nun <= 1).all(), f"strata must be constant within a {cluster_name} cluster; "
                f"{int((nun > 1).sum())} cluster(s) span several strata", field="strata")
    n_units, k = M.shape
    A = np.hstack([np.where(M, B, 0.0), np.where(M, Cm, 0.0), M.astype(np.float64)])
    # resampled sums (3k columns) + the two accuracy arrays (2k) + one statistic's replicates (k);
    # twice the sums and accuracies with clusters (the item-level run for the design effect)
    check_bootstrap_memory(run.n_boot, k, arrays=(11 if clusters is not None else 6), what="the paired bootstrap")
    est_b, est_c = _accuracies(A.sum(axis=0)[None, :], k)
    sums = resampled_sums(A, run, strata=strata, clusters=clusters)
    rep_b, rep_c = _accuracies(sums, k)
    item_reps = None
    if clusters is not None:
        item_reps = _accuracies(resampled_sums(A, dataclasses.replace(run, progress=None), strata=strata), k)
    bca = _BcaInputs.build(A, sums, k, clusters) if run.interval == "bca" else None
    n_clusters = n_units if clusters is None else int(clusters.max()) + 1
    common = {"n_boot": run.n_boot, "seed": run.seed, "ci_level": run.ci_level, "interval": run.interval,
              "cluster": cluster_name, "n_clusters": n_clusters}

    scores = A[:, :2 * k]
    unit_scores = bool(((scores >= 0) & (scores <= 1)).all())      # Statistic.linear's span holds
    lattice = clusters is None and bool(np.array_equal(scores, np.round(scores)))

    def one(s: Statistic, sl: slice) -> dict:
        est = _finite_or_nan(s(est_b[:, sl], est_c[:, sl])[0])
        reps = s(rep_b[:, sl], rep_c[:, sl])
        jk, order = (None, None) if bca is None else bca.parts(s, sl, reps, est)
        linear = clusters is None and s.linear is not None and bool(M[:, sl].all())
        law = _linear_law(s, B[:, sl], Cm[:, sl], strata) if linear and lattice else None
        summary = interval_summary(reps, est, run.ci_level, run.interval, jk, order, law)
        if summary["ci_flag"]:
            per_unit = (s.linear[0] * B[:, sl] + s.linear[1] * Cm[:, sl]).mean(axis=1) if linear else None
            parts = None if per_unit is None else constant_parts(per_unit, np.ones(per_unit.size), strata)
            summary = edge_interval(summary, _span(s) if unit_scores else None, parts, run.ci_level)
        elif linear and lattice and unit_scores and B[:, sl].shape[1] == 1:
            summary["ci_flag"] = coverage_flag(run.interval, *_events(s, B[:, sl][:, 0], Cm[:, sl][:, 0]))
        row = {"statistic": s.name, "estimate": est, **summary}
        deff = 1.0
        if item_reps is not None:
            v_item = _finite_var(s(item_reps[0][:, sl], item_reps[1][:, sl]))
            deff = _finite_var(reps) / v_item if v_item > 0 else float("nan")
        return {**row, "design_effect": deff, **common}

    rows: list[dict] = []
    if run.aggregate == "mean":
        for s in run.statistics:
            rows.append({**one(s, slice(None)), "n": int(n_units), "n_series": int(k)})
    else:
        n_per_series = M.sum(axis=0)
        for j in range(k):
            for s in run.statistics:
                rows.append({"series": series[j], **one(s, slice(j, j + 1)),
                             "n": int(n_per_series[j]), "n_series": 1})
    return rows


def _span(s: Statistic) -> tuple[float, float] | None:
    """The range of a linear statistic (:attr:`Statistic.linear`) of accuracies in [0, 1]."""
    if s.linear is None:
        return None
    wb, wc = s.linear
    return min(wb, 0.0) + min(wc, 0.0), max(wb, 0.0) + max(wc, 0.0)


def _linear_law(s: Statistic, B: np.ndarray, C: np.ndarray, strata: np.ndarray | None):
    """The exact bootstrap distribution ``(values, probabilities)`` of a linear statistic (weights 0 or +-w) of
    integer scores judged on every unit: ``w / (n k)`` times a sum of per-unit integers
    (:func:`~voxmem_analysis.stats.endpoints.sum_distribution`); None for any other statistic."""
    if s.linear is None:
        return None
    w = max(abs(s.linear[0]), abs(s.linear[1]))
    if w == 0 or any(abs(x) not in (0.0, w) for x in s.linear):
        return None
    t = (np.sign(s.linear[0]) * B + np.sign(s.linear[1]) * C).sum(axis=1)
    sums, pmf = sum_distribution(np.round(t).astype(np.int64), strata)
    return w * sums / B.size, pmf


def _events(s: Statistic, b: np.ndarray, c: np.ndarray) -> tuple[float, float]:
    """The two event counts a 0/1 statistic's coverage depends on: the discordant pairs each way for a difference,
    successes and failures for a level."""
    if s.linear[0] and s.linear[1]:
        return float(np.sum(b > c)), float(np.sum(b < c))
    x = b if s.linear[0] else c
    return float(x.sum()), float(x.size - x.sum())


def _finite_var(reps: np.ndarray) -> float:
    v = reps[np.isfinite(reps)]
    return float(np.var(v, ddof=1)) if v.size > 1 else float("nan")


# =========================================================================================
# Public entry points
# =========================================================================================

@ci_level_alias
def paired_bootstrap_matrix(baseline: Any, comparison: Any, mask: Any = None, *,
                            statistics: Any = ("drop", "retention"),
                            aggregate: str | None = "mean", series: Sequence[Any] | None = None,
                            n_boot: int = 10_000, seed: int = 0, ci_level: float = 0.95,
                            strata: Any = None, clusters: Any = None,
                            interval: str = "percentile") -> pd.DataFrame:
    """Paired item bootstrap of statistics of ``k`` series measured at two conditions.

    Parameters
    ----------
    baseline, comparison : array-like, shape (n_items, k)
        Per-item scores of each series (column) at the baseline (e.g. 8K) and comparison
        (e.g. 64K) condition; row ``i`` is the same item in both.  NaN = not judged.
    mask : array-like of bool, shape (n_items, k), optional
        ``True`` where the item was judged for the series at both conditions.  The pair
        enters a series' accuracy only where ``mask`` holds and neither score is NaN, so both
        conditions of a series are always computed on identical items.
    statistics : str, Statistic, callable, sequence or mapping, default ("drop", "retention")
        Built-in names (:data:`STATISTICS`: ``drop`` = 100 (baseline - comparison) in pp,
        ``change`` = its negative, ``difference`` = raw baseline - comparison, ``retention``
        / ``ratio`` = comparison / baseline, ``baseline`` / ``comparison`` = accuracy in %),
        :class:`Statistic` objects, callables ``f(baseline, comparison) -> (m,)`` on the
        ``(m, k)`` accuracy arrays, or a mapping ``{name: callable}``.
    aggregate : {"mean", None}, default "mean"
        ``"mean"``: each statistic sees all ``k`` series (built-ins average accuracy over
        series first) -> one row per statistic.  ``None``: one row per series x statistic,
        the statistic seeing that series alone.
    series : sequence, optional
        Labels of the ``k`` series for the ``series`` column (default ``0 .. k-1``).
    n_boot : int, default 10_000
        Number of resamples.
    seed : int, default 0
        Seed for ``numpy.random.default_rng``; same inputs and seed give identical output.
    ci_level : float, default 0.95
        Confidence level of the interval (``ci=`` is its deprecated name).
    strata : array-like of length n_items, optional
        Resample items within these strata (e.g. evidence type), keeping their sizes fixed.
    clusters : array-like of length n_items, optional
        Cluster label per item (e.g. ``family_id``): resample whole clusters instead of
        items (:func:`iter_bootstrap_counts`), and report the design effect.
    interval : {"percentile", "bca"}, default "percentile"
        Percentile interval, or bias-corrected and accelerated (BCa; acceleration from the
        leave-one-unit-out jackknife, unit = cluster when clustered).  With integer scores (0/1:
        counts) a statistic with an exact form (the built-ins) has its replicates ordered against
        the estimate, ties included, and its jackknife taken in exact rational arithmetic
        (:mod:`~voxmem_analysis.stats.exact`); ties count half below the estimate
        (:mod:`~voxmem_analysis.stats.endpoints`).

    Returns
    -------
    pandas.DataFrame
        One row per statistic (``aggregate="mean"``) or per series x statistic (``None``),
        columns:

        - ``series`` -- series label (only when ``aggregate=None``);
        - ``statistic`` -- statistic name;
        - ``estimate`` -- the statistic on the original sample (not the bootstrap mean);
        - ``ci_low``, ``ci_high`` -- percentile interval endpoints over the valid replicates;
        - ``n`` -- items: resampling units (items judged for at least one series) for
          ``"mean"``, the series' paired items for ``None``;
        - ``n_series`` -- series the statistic averages over (1 for per-series rows);
        - ``n_invalid`` -- replicates where the statistic was not finite (excluded);
        - ``n_boot``, ``seed``, ``ci_level``, ``interval`` -- the settings used;
        - ``ci_low_mc_se``, ``ci_high_mc_se`` -- Monte-Carlo standard error of each endpoint
          (the resampling noise of the interval itself, not sampling error;
          :func:`~voxmem_analysis.stats.endpoints.endpoint_mc_se`): the Maritz-Jarrett spread of the
          quantile over another ``n_boot`` resamples, but never below ``h / sqrt(12)`` for replicates
          on a lattice of step ``h`` (e.g. 100 / n points for one series' drop), where another seed
          moves the endpoint by a whole step.  The first part shrinks as ``1 / sqrt(n_boot)``
          (``n_boot * (mc_se / t) ** 2`` resamples bring it to ``t``); the lattice part does not;
        - ``cluster`` -- the resampling unit (``"item"``, or the cluster column's name);
          ``n_clusters`` -- units resampled (clusters, or items when item-level);
        - ``design_effect`` -- replicate variance under cluster resampling over that under
          item resampling (same seed); 1.0 for item-level rows.

    Notes
    -----
    Let :math:`M_{ij}` indicate that item :math:`i` is paired for series :math:`j` and
    :math:`C` be the :math:`B \\times n` bootstrap count matrix
    (:func:`iter_bootstrap_counts`).  Replicate accuracies are

    .. math:: b^*_{rj} = \\frac{(C\\,(b \\odot M))_{rj}}{(C M)_{rj}}, \\qquad
              c^*_{rj} = \\frac{(C\\,(c \\odot M))_{rj}}{(C M)_{rj}},

    so baseline and comparison are rescored on the same draw, and all series share it.
    The interval is :math:`[q_{\\alpha/2}, q_{1-\\alpha/2}]` of the replicate statistics
    (``numpy.nanpercentile``, linear interpolation), :math:`\\alpha = 1 - \\text{ci\\_level}`.
    A replicate whose statistic is not finite -- e.g. a ratio whose baseline accuracy is 0
    on that resample, or a series that drew none of its items -- is *invalid*: it is
    dropped from the percentiles and counted in ``n_invalid``.  The interval is then
    conditional on the statistic being defined; inspect ``n_invalid`` (a few per 10,000 is
    harmless, a large share means the statistic is ill-posed for the data).  Items that no
    series judged at both conditions are removed before resampling.

    Examples
    --------
    >>> import numpy as np
    >>> base = np.array([[1, 1], [1, 0], [0, 1], [1, 1], [0, 0]], dtype=float)
    >>> comp = np.array([[1, 0], [0, 0], [0, 1], [1, 0], [0, 0]], dtype=float)
    >>> out = paired_bootstrap_matrix(base, comp, n_boot=1000, seed=0)
    >>> out[["statistic", "estimate", "n", "n_series"]]
       statistic  estimate  n  n_series
    0       drop      30.0  5         2
    1  retention       0.5  5         2
    """
    B = as_float_matrix(baseline, "baseline")
    Cm = as_float_matrix(comparison, "comparison")
    require(B.shape == Cm.shape, f"baseline and comparison must have the same shape, got "
            f"{B.shape} and {Cm.shape}", field="comparison")
    require(not (np.isinf(B).any() or np.isinf(Cm).any()),
            "baseline and comparison must be finite scores (NaN = not judged), found inf",
            field="baseline")
    M = combine_mask(mask, B.shape, ~np.isnan(B) & ~np.isnan(Cm))
    run = _checked(PairedSettings(statistics=statistics, aggregate=aggregate, n_boot=n_boot, seed=seed,
                                  ci_level=ci_level, interval=interval))
    k = B.shape[1]
    labels = list(range(k)) if series is None else list(series)
    require(len(labels) == k, f"series must give one label per column ({k}), got "
            f"{len(labels)}", field="series")
    codes = strata_codes(strata, B.shape[0])
    ccodes = strata_codes(clusters, B.shape[0])
    rows = _paired_core(B, Cm, M, run, series=labels, strata=codes, clusters=ccodes,
                        cluster_name="item" if clusters is None else "cluster")
    cols = (["series"] if aggregate is None else []) + _RESULT_COLUMNS
    return pd.DataFrame(rows, columns=cols)


@ci_level_alias
def paired_bootstrap(x: Any, y: Any, statistic: Any = "difference", *, n_boot: int = 10_000,
                     seed: int = 0, ci_level: float = 0.95, strata: Any = None, clusters: Any = None,
                     interval: str = "percentile") -> pd.DataFrame:
    """Paired bootstrap for two per-item score vectors (``x`` = baseline, ``y`` = comparison).

    Parameters
    ----------
    x, y : array-like, shape (n,)
        Scores of the same ``n`` items under the baseline and the comparison condition.
        A pair with NaN/None on either side is dropped.
    statistic : str, Statistic, callable, sequence or mapping, default "difference"
        As ``statistics`` in :func:`paired_bootstrap_matrix`; ``"difference"`` is
        ``mean(x) - mean(y)``, ``"drop"`` the same in percentage points, ``"ratio"`` /
        ``"retention"`` is ``mean(y) / mean(x)``.  A callable receives two ``(m, 1)`` arrays
        of resampled means.
    n_boot : int, default 10_000
        Number of resamples.
    seed : int, default 0
        Seed for ``numpy.random.default_rng``.
    ci_level : float, default 0.95
        Confidence level (``ci=``: deprecated name).
    strata : array-like of length n, optional
        Resample within strata.
    clusters : array-like of length n, optional
        Resample whole clusters (see :func:`paired_bootstrap_matrix`).
    interval : {"percentile", "bca"}, default "percentile"
        Interval method.

    Returns
    -------
    pandas.DataFrame
        One row per statistic; the columns of :func:`paired_bootstrap_matrix` without
        ``n_series`` (``n`` = complete pairs).

    Notes
    -----
    The special case ``k = 1`` of :func:`paired_bootstrap_matrix`: resample pair indices
    :math:`i^*_1..i^*_n` with replacement and recompute :math:`\\bar x^*`, :math:`\\bar y^*`
    from the same indices; percentile interval of :math:`\\theta(\\bar x^*, \\bar y^*)`.

    Examples
    --------
    >>> x = [1, 1, 1, 0, 1, 0, 1, 1]
    >>> y = [1, 0, 1, 0, 0, 0, 1, 0]
    >>> out = paired_bootstrap(x, y, ["drop", "retention"], n_boot=2000, seed=0)
    >>> out[["statistic", "estimate", "n"]]
       statistic  estimate  n
    0       drop      37.5  8
    1  retention       0.5  8
    """
    xv = as_float_vector(x, "x")
    yv = as_float_vector(y, "y")
    require(xv.shape == yv.shape, f"x and y must have the same length, got {xv.size} and "
            f"{yv.size}", field="y")
    out = paired_bootstrap_matrix(xv[:, None], yv[:, None], statistics=statistic,
                                  aggregate="mean", n_boot=n_boot, seed=seed, ci_level=ci_level,
                                  strata=strata, clusters=clusters, interval=interval)
    return out.drop(columns="n_series")


# =========================================================================================
# Long-frame helper
# =========================================================================================

def _pivot_pairs(df: pd.DataFrame, *, item: str, series: str, condition: str, value: str,
                 baseline: Any, comparison: Any, judged: str | None, strata: str | None,
                 cluster: str | None = None):
    """Long rows -> (B, C, M, item_labels, series_labels, strata_codes, cluster_codes)."""
    cond = df[condition]
    is_b = (cond == baseline).to_numpy(dtype=bool, na_value=False)
    is_c = (cond == comparison).to_numpy(dtype=bool, na_value=False)
    sub = df.loc[is_b | is_c]
    is_c = is_c[is_b | is_c]
    icode, ilabels = pd.factorize(sub[item], sort=True)
    scode, slabels = pd.factorize(sub[series], sort=True)
    require((icode >= 0).all(), f"column {item!r} has missing item ids", field=item)
    require((scode >= 0).all(), f"column {series!r} has missing series labels", field=series)
    n_i, n_s = len(ilabels), len(slabels)
    key = (icode.astype(np.int64) * n_s + scode) * 2 + is_c
    uniq, counts = np.unique(key, return_counts=True)
    if (counts > 1).any():
        dup = int(uniq[np.argmax(counts > 1)])
        raise_dup = (f"data has {int((counts > 1).sum())} duplicated ({item}, {series}, "
                     f"{condition}) combination(s), e.g. ({ilabels[dup // 2 // n_s]!r}, "
                     f"{slabels[dup // 2 % n_s]!r}, {comparison if dup % 2 else baseline!r}); "
                     "each item must appear once per series and condition")
        require(False, raise_dup, field=item)
    vals = _to_float_column(sub[value], value)
    if judged is not None:
        ok = _to_float_column(sub[judged], judged)
        require(np.isin(ok[~np.isnan(ok)], (0.0, 1.0)).all(),
                f"judged column {judged!r} must be boolean", field=judged)
        vals = np.where(ok == 1.0, vals, np.nan)
    B = np.full((n_i, n_s), np.nan)
    Cm = np.full((n_i, n_s), np.nan)
    B[icode[~is_c], scode[~is_c]] = vals[~is_c]
    Cm[icode[is_c], scode[is_c]] = vals[is_c]
    codes, ccodes = (None if col is None else _per_item_codes(sub[col], icode, n_i, col, what)
                     for col, what in ((strata, "strata"), (cluster, "cluster")))
    return B, Cm, ~np.isnan(B) & ~np.isnan(Cm), ilabels, slabels, codes, ccodes


def _per_item_codes(col: pd.Series, icode: np.ndarray, n_i: int, name: str,
                    what: str) -> np.ndarray:
    """One code per item from an item-level column (must be constant within an item)."""
    per_item = pd.DataFrame({"i": icode, "s": col.to_numpy()})
    nun = per_item.groupby("i")["s"].nunique(dropna=False)
    require((nun <= 1).all(), f"{what} column {name!r} must be constant within an item; "
            f"{int((nun > 1).sum())} item(s) have several values", field=name)
    if what == "cluster":
        require(per_item["s"].notna().all(), f"cluster column {name!r} has missing values; "
                "every item needs a cluster", field=name)
    first = per_item.drop_duplicates("i").sort_values("i")["s"].to_numpy()
    return strata_codes(first, n_i)


def _to_float_column(col: pd.Series, name: str) -> np.ndarray:
    try:
        arr = col.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        arr = None
    require(arr is not None, f"column {name!r} must be boolean or numeric (null = not "
            f"judged), got dtype {col.dtype}", field=name)
    require(not np.isinf(arr).any(), f"column {name!r} contains infinite values", field=name)
    return arr


def paired_bootstrap_frame(data: Any, *, item: str = "question_id", series: str = "model",
                           condition: str = "budget", value: str = "correct",
                           baseline: Any = "8K", comparison: Any = "64K",
                           groups: str | Sequence[str] | None = None, strata: str | None = None,
                           judged: str | None = None, cluster: str | None = None,
                           settings: PairedSettings = PairedSettings()) -> pd.DataFrame:
    """Paired item bootstrap from a long frame (one row per series x item x condition).

    Parameters
    ----------
    data : pandas.DataFrame or polars.DataFrame / LazyFrame
        Long data.  Rows whose ``condition`` is neither ``baseline`` nor ``comparison`` are
        ignored.  Each (item, series, condition) may appear at most once.
    item : str, default "question_id"
        Column identifying the resampling unit (shared across conditions).
    series : str, default "model"
        Column identifying the series (e.g. model).
    condition : str, default "budget"
        Column holding the condition.
    value : str, default "correct"
        Boolean or numeric score column; null = not judged.
    baseline, comparison : scalar, default "8K", "64K"
        Values of ``condition`` to compare.
    groups : str or list of str, optional
        Grouping columns; the bootstrap runs separately within each group (items of the group
        are its resampling units).  Group keys with nulls form their own group.
    strata : str, optional
        Item-level column to resample within (e.g. evidence type for an overall row).
    judged : str, optional
        Boolean column; rows where it is false (or null) are out of the denominator, as if
        ``value`` were null (e.g. ``"scored"`` of the verdict frame).
    cluster : str, optional
        Item-level column naming each item's cluster (e.g. ``"family_id"``: a refusal
        question and its source question).  Whole clusters are resampled; the output's
        ``cluster`` column holds this name and ``design_effect`` the variance ratio against
        item resampling.  ``None`` (default) resamples items.
    settings : PairedSettings
        ``statistics`` (see :func:`paired_bootstrap_matrix`; they share each group's resampling),
        ``aggregate`` (``"mean"``: average accuracy over the series of the group first, one row per group x
        statistic, the paper's evidence-type rows; ``None``: one row per group x series x statistic),
        ``n_boot``, ``seed`` (every group uses it afresh, so each row can be reproduced alone from its
        group's data), ``ci_level``, ``interval`` (see :func:`paired_bootstrap_matrix`), ``progress``.

    Returns
    -------
    pandas.DataFrame
        Columns: the ``groups`` columns; the ``series`` column (named as the ``series``
        argument, only when ``aggregate=None``); then ``statistic, estimate, ci_low,
        ci_high, n, n_series, n_invalid, n_boot, seed, ci_level, interval, ci_low_mc_se,
        ci_high_mc_se, cluster, n_clusters, design_effect`` as in
        :func:`paired_bootstrap_matrix` (``n`` = items of the group judged at both
        conditions by at least one series, or by the row's series when ``aggregate=None``;
        ``n_series`` = series averaged).

    Notes
    -----
    For each group the rows are pivoted to ``(n_items, n_series)`` matrices (items and
    series in sorted order, so the result does not depend on row order).  A pair counts for
    a series only if the item has a non-null value at *both* conditions for that series
    (and ``judged`` holds for both rows): each series is scored on its own paired items, and
    a series missing an item loses that item only for itself.  Series with no paired item in
    a group are left out of that group.  Nothing assumes the direction of the change: drops
    may be negative, retention above 1.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({
    ...     "question_id": ["q1", "q2", "q3", "q4"] * 4,
    ...     "model": ["A"] * 8 + ["B"] * 8,
    ...     "budget": (["8K"] * 4 + ["64K"] * 4) * 2,
    ...     "correct": [1, 1, 1, 0, 1, 0, 1, 0,  1, 0, 1, 0, 0, 0, 1, 0]})
    >>> out = paired_bootstrap_frame(df, settings=PairedSettings(n_boot=1000, seed=0))
    >>> out[["statistic", "estimate", "n", "n_series"]]
       statistic  estimate  n  n_series
    0       drop      25.0  4         2
    1  retention       0.6  4         2
    >>> per_model = paired_bootstrap_frame(df, settings=PairedSettings(n_boot=1000, statistics="drop", aggregate=None))
    >>> per_model[["model", "statistic", "estimate", "n"]]
      model statistic  estimate  n
    0     A      drop      25.0  4
    1     B      drop      25.0  4
    """
    for name, v in (("item", item), ("series", series), ("condition", condition),
                    ("value", value)):
        require(isinstance(v, str), f"{name} must be a column name (str), got {v!r}",
                field=name)
    require(baseline != comparison, f"baseline and comparison must differ, got {baseline!r} "
            "twice", field="comparison")
    group_cols = [] if groups is None else ([groups] if isinstance(groups, str) else list(groups))
    run = _checked(settings)
    reserved = set(_RESULT_COLUMNS) | ({series} if run.aggregate is None else set())
    clash = [g for g in group_cols if g in reserved]
    require(not clash, f"group column(s) {clash} clash with output columns", field="groups")
    needed = list(dict.fromkeys([item, series, condition, value, *group_cols]
                                + [c for c in (strata, judged, cluster) if c]))
    df = frame_columns(data, needed)
    present = pd.unique(df[condition].dropna())
    for which, lvl in (("baseline", baseline), ("comparison", comparison)):
        require((df[condition] == lvl).any(), f"{which} {lvl!r} does not occur in column "
                f"{condition!r}; values present: {sorted(present.tolist(), key=str)}", field=which)

    if group_cols:
        parts = [(k if isinstance(k, tuple) else (k,), g) for k, g in
                 df.groupby(group_cols, sort=True, dropna=False, observed=True)]
    else:
        parts = [((), df)]
    rows: list[dict] = []
    for key, part in parts:
        B, Cm, M, _, slabels, codes, ccodes = _pivot_pairs(
            part, item=item, series=series, condition=condition, value=value,
            baseline=baseline, comparison=comparison, judged=judged, strata=strata,
            cluster=cluster)
        has = M.any(axis=0)
        if not has.any():
            continue
        B, Cm, M = B[:, has], Cm[:, has], M[:, has]
        labels = [slabels[j] for j in np.flatnonzero(has)]
        got = _paired_core(B, Cm, M, run, series=labels, strata=codes, clusters=ccodes,
                           cluster_name=cluster or "item")
        for r in got:
            if run.aggregate is None:
                r[series] = r.pop("series")
            rows.append({**dict(zip(group_cols, key)), **r})
    if not rows:
        raise MissingDataError("no (item, series) pair is judged at both conditions in any group; check "
                               f"baseline={baseline!r}, comparison={comparison!r} and the {value!r} column",
                               code="no_pairs", field=value)
    cols = group_cols + ([series] if run.aggregate is None else []) + _RESULT_COLUMNS
    return pd.DataFrame(rows, columns=cols)
