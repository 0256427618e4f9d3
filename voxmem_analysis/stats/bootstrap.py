"""Paired item bootstrap of accuracy changes between two conditions (paper Appendix D.4).

Items are resampled: a resample draws ``n`` items with replacement and rescores both conditions of every series
(model) on that draw.  With the count matrix ``C`` (:mod:`.resampling`), the resampled accuracies are ``C @ (B *
M) / C @ M`` (baseline ``B``, mask ``M``; likewise the comparison); statistics (:mod:`.paired_statistics`) are
functions of them, endpoints :mod:`.endpoints`'.  Entry points: :func:`paired_bootstrap` (two vectors),
:func:`paired_bootstrap_matrix` (matrices), :func:`paired_bootstrap_frame` (a long frame).
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
from voxmem_analysis.stats.resampling import (BootstrapMeans, bootstrap_means, combine_mask, constant_within,
                                              iter_bootstrap_counts, resampled_sums, shared_bootstrap_counts,
                                              strata_codes)
from voxmem_analysis.stats.resources import check_bootstrap_memory
from voxmem_analysis.stats.settings import INTERVALS, PairedSettings

__all__ = [
    "Statistic", "STATISTICS", "difference", "ratio", "mean_difference", "mean_ratio",
    "mean_level", "BootstrapMeans", "iter_bootstrap_counts", "shared_bootstrap_counts", "bootstrap_means",
    "paired_bootstrap", "paired_bootstrap_matrix", "paired_bootstrap_frame", "INTERVALS",
    "bootstrap_interval", "PairedSettings",
]


_RESULT_COLUMNS = ["statistic", "estimate", "ci_low", "ci_high", "n", "n_series", "n_invalid",
                   "n_boot", "seed", "ci_level", "interval", "ci_low_mc_se", "ci_high_mc_se", "ci_resolution",
                   "ci_flag", "cluster", "n_clusters", "design_effect"]


def _checked(settings: PairedSettings) -> PairedSettings:
    """``settings`` checked, ``statistics`` resolved to :class:`Statistic` objects."""
    require(settings.aggregate in ("mean", None), f"aggregate must be 'mean' or None, got {settings.aggregate!r}",
            field="aggregate")
    return dataclasses.replace(settings.check(), statistics=resolve_statistics(settings.statistics))


def _accuracies(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and comparison accuracies from stacked sums ``[B*M | C*M | M]`` (rows)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return A[:, :k] / A[:, 2 * k:], A[:, k:2 * k] / A[:, 2 * k:]


@dataclasses.dataclass(frozen=True)
class _BcaInputs:
    """BCa's jackknife and, on counts, the integer sums of resamples, sample and units for exact decisions."""

    sums: np.ndarray
    total: np.ndarray
    units: np.ndarray
    k: int
    exact: bool
    jack: tuple[np.ndarray, np.ndarray]

    @classmethod
    def build(cls, A: np.ndarray, sums: np.ndarray, k: int, clusters: np.ndarray | None) -> _BcaInputs:
        units = A if clusters is None else pd.DataFrame(A).groupby(clusters, sort=True).sum().to_numpy()
        return cls(sums, A.sum(axis=0), units, k, exact_sums(units, units.shape[0]),
                   _accuracies(units.sum(axis=0)[None, :] - units, k))

    def parts(self, s: Statistic, sl: slice, reps: np.ndarray, est: float):
        """``(jackknife values, order of the replicates or None)`` of statistic ``s`` on series ``sl``."""
        jack = s(self.jack[0][:, sl], self.jack[1][:, sl])
        if not self.exact or s.exact is None:
            return jack, None
        idx = np.arange(self.k)[sl]
        cols = np.concatenate([idx, self.k + idx, 2 * self.k + idx])   # of [B*M | C*M | M]
        kk = cols.size // 3
        order = exact_order(reps, est, s.exact, self.sums[:, cols], self.total[cols], kk)
        if flat_jackknife(jack):      # equal up to rounding: noise over noise is no acceleration
            jack = exact_jackknife(s.exact, self.units[:, cols], kk)
        return jack, order


def _paired_core(B: np.ndarray, Cm: np.ndarray, M: np.ndarray, run: PairedSettings, *, series: Sequence[Any],
                 strata: np.ndarray | None, clusters: np.ndarray | None = None,
                 cluster_name: str = "item") -> list[dict]:
    """The engine's result rows; with ``clusters``, the item-level run (same seed) gives the design effect."""
    keep = M.any(axis=1)
    if not keep.any():   # the data lacks pairs: a partial release, not a bad argument
        raise MissingDataError("no item is judged at both conditions for any series; nothing to bootstrap",
                               code="no_pairs", field="mask")
    B, Cm, M = B[keep], Cm[keep], M[keep]
    strata = None if strata is None else strata[keep]
    clusters = None if clusters is None else pd.factorize(clusters[keep], sort=True)[0]
    if clusters is not None and strata is not None:
        constant_within(strata, clusters, f"strata must be constant within a {cluster_name} cluster; {{n}} cluster(s) "
                        "span several strata", "strata")
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
        est = float(s(est_b[:, sl], est_c[:, sl])[0])
        est = est if np.isfinite(est) else float("nan")
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
    """Exact bootstrap law of a 0/+-w-weighted linear statistic of integer scores judged on every unit, or None."""
    if s.linear is None:
        return None
    w = max(abs(s.linear[0]), abs(s.linear[1]))
    if w == 0 or any(abs(x) not in (0.0, w) for x in s.linear):
        return None
    t = (np.sign(s.linear[0]) * B + np.sign(s.linear[1]) * C).sum(axis=1)
    sums, pmf = sum_distribution(np.round(t).astype(np.int64), strata)
    return w * sums / B.size, pmf


def _events(s: Statistic, b: np.ndarray, c: np.ndarray) -> tuple[float, float]:
    """The two event counts a 0/1 statistic's coverage rests on (discordant pairs, or successes and failures)."""
    if s.linear[0] and s.linear[1]:
        return float(np.sum(b > c)), float(np.sum(b < c))
    x = b if s.linear[0] else c
    return float(x.sum()), float(x.size - x.sum())


def _finite_var(reps: np.ndarray) -> float:
    v = reps[np.isfinite(reps)]
    return float(np.var(v, ddof=1)) if v.size > 1 else float("nan")


@ci_level_alias
def paired_bootstrap_matrix(baseline: Any, comparison: Any, mask: Any = None, *, statistics: Any = ("drop", "retention"),
                            aggregate: str | None = "mean", series: Sequence[Any] | None = None, n_boot: int = 10_000,
                            seed: int = 0, ci_level: float = 0.95, strata: Any = None, clusters: Any = None,
                            interval: str = "percentile") -> pd.DataFrame:
    """Paired item bootstrap of statistics of ``k`` series measured at two conditions.

    Parameters
    ----------
    baseline, comparison : array-like, shape (n_items, k)
        Per-item scores of each series at the two conditions (row ``i``: the same item; NaN = not judged).
    mask : array-like of bool, shape (n_items, k), optional
        Where an item counts for a series; a pair counts where ``mask`` holds and neither score is NaN.
    statistics : str, Statistic, callable, sequence or mapping, default ("drop", "retention")
        Built-ins (:data:`STATISTICS`: ``drop`` = 100 (baseline - comparison) pp, ``change`` its negative,
        ``difference`` unscaled, ``retention``/``ratio`` = comparison / baseline, ``baseline``/``comparison``
        accuracy in %), :class:`Statistic` objects, callables ``f(baseline, comparison) -> (m,)`` on ``(m, k)``
        accuracies, or ``{name: callable}``.
    aggregate : {"mean", None}, default "mean"
        One row per statistic over all series (built-ins average the accuracies first), or per series x statistic.
    n_boot, seed, ci_level
        Resamples, seed of ``numpy.random.default_rng`` (same inputs and seed: same output), level (``ci=``: its
        deprecated name).
    strata, clusters : array-like of length n_items, optional
        Resample within strata (keeping their sizes); resample whole clusters (e.g. a question family).
    interval : {"percentile", "bca"}, default "percentile"
        BCa: jackknife over units; with 0/1 scores the built-ins' ties and jackknife are decided exactly.

    Returns
    -------
    pandas.DataFrame
        One row per statistic (or ``series`` x statistic): ``statistic``, ``estimate``, ``ci_low, ci_high``, ``n``
        (items judged; per series with ``aggregate=None``), ``n_series``, ``n_invalid`` (replicates where the
        statistic is not finite, dropped), ``n_boot, seed, ci_level, interval``, ``ci_low_mc_se, ci_high_mc_se``
        (each endpoint's Monte-Carlo SE over seeds), ``ci_resolution`` (the step of the statistic's values at the
        endpoints), ``ci_flag`` (why the interval may not cover, or empty: :func:`.endpoints.edge_interval`,
        :func:`.endpoints.coverage_flag`), ``cluster, n_clusters``, ``design_effect`` (1 for items).
    """
    B, Cm = as_float_matrix(baseline, "baseline"), as_float_matrix(comparison, "comparison")
    require(B.shape == Cm.shape, f"baseline and comparison must have the same shape, got {B.shape} and {Cm.shape}",
            field="comparison")
    require(not (np.isinf(B).any() or np.isinf(Cm).any()),
            "baseline and comparison must be finite scores (NaN = not judged), found inf", field="baseline")
    M = combine_mask(mask, B.shape, ~np.isnan(B) & ~np.isnan(Cm))
    run = _checked(PairedSettings(statistics=statistics, aggregate=aggregate, n_boot=n_boot, seed=seed,
                                  ci_level=ci_level, interval=interval))
    k = B.shape[1]
    labels = list(range(k)) if series is None else list(series)
    require(len(labels) == k, f"series must give one label per column ({k}), got {len(labels)}", field="series")
    rows = _paired_core(B, Cm, M, run, series=labels, strata=strata_codes(strata, B.shape[0]),
                        clusters=strata_codes(clusters, B.shape[0]), cluster_name="item" if clusters is None else "cluster")
    cols = (["series"] if aggregate is None else []) + _RESULT_COLUMNS
    return pd.DataFrame(rows, columns=cols)


@ci_level_alias
def paired_bootstrap(x: Any, y: Any, statistic: Any = "difference", *, n_boot: int = 10_000, seed: int = 0,
                     ci_level: float = 0.95, strata: Any = None, clusters: Any = None,
                     interval: str = "percentile") -> pd.DataFrame:
    """:func:`paired_bootstrap_matrix` of two per-item score vectors (``x`` baseline, ``y`` comparison; a pair with
    NaN dropped), ``statistic`` its ``statistics`` (``"difference"``: ``mean(x) - mean(y)``); its columns but
    ``n_series``."""
    xv, yv = as_float_vector(x, "x"), as_float_vector(y, "y")
    require(xv.shape == yv.shape, f"x and y must have the same length, got {xv.size} and {yv.size}", field="y")
    out = paired_bootstrap_matrix(xv[:, None], yv[:, None], statistics=statistic, aggregate="mean", n_boot=n_boot,
                                  seed=seed, ci_level=ci_level, strata=strata, clusters=clusters, interval=interval)
    return out.drop(columns="n_series")


def _pivot_pairs(df: pd.DataFrame, *, item: str, series: str, condition: str, value: str,
                 baseline: Any, comparison: Any, judged: str | None, strata: str | None,
                 cluster: str | None = None):
    """Long rows -> ``(B, C, M, item labels, series labels, strata codes, cluster codes)``."""
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
        require(False, f"data has {int((counts > 1).sum())} duplicated ({item}, {series}, {condition}) "
                f"combination(s), e.g. ({ilabels[dup // 2 // n_s]!r}, {slabels[dup // 2 % n_s]!r}, "
                f"{comparison if dup % 2 else baseline!r}); each item must appear once per series and condition",
                field=item)
    vals = _to_float_column(sub[value], value)
    if judged is not None:
        ok = _to_float_column(sub[judged], judged)
        require(np.isin(ok[~np.isnan(ok)], (0.0, 1.0)).all(), f"judged column {judged!r} must be boolean",
                field=judged)
        vals = np.where(ok == 1.0, vals, np.nan)
    B, Cm = np.full((n_i, n_s), np.nan), np.full((n_i, n_s), np.nan)
    B[icode[~is_c], scode[~is_c]] = vals[~is_c]
    Cm[icode[is_c], scode[is_c]] = vals[is_c]
    codes, ccodes = (None if col is None else _per_item_codes(sub[col], icode, n_i, col, what)
                     for col, what in ((strata, "strata"), (cluster, "cluster")))
    return B, Cm, ~np.isnan(B) & ~np.isnan(Cm), ilabels, slabels, codes, ccodes


def _per_item_codes(col: pd.Series, icode: np.ndarray, n_i: int, name: str, what: str) -> np.ndarray:
    """One code per item from an item-level column (must be constant within an item)."""
    first = constant_within(col.to_numpy(), icode, f"{what} column {name!r} must be constant within an item; {{n}} "
                            "item(s) have several values", name, dropna=False)
    require(what != "cluster" or col.notna().all(), f"cluster column {name!r} has missing values; every item "
            "needs a cluster", field=name)
    return strata_codes(first, n_i)


def _to_float_column(col: pd.Series, name: str) -> np.ndarray:
    try:
        arr = col.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        arr = None
    require(arr is not None, f"column {name!r} must be boolean or numeric (null = not judged), got dtype {col.dtype}",
            field=name)
    require(not np.isinf(arr).any(), f"column {name!r} contains infinite values", field=name)
    return arr


def paired_bootstrap_frame(data: Any, *, item: str = "question_id", series: str = "model", condition: str = "budget",
                           value: str = "correct", baseline: Any = "8K", comparison: Any = "64K",
                           groups: str | Sequence[str] | None = None, strata: str | None = None,
                           judged: str | None = None, cluster: str | None = None,
                           settings: PairedSettings = PairedSettings()) -> pd.DataFrame:
    """Paired item bootstrap from a long frame (one row per series x item x condition).

    Parameters
    ----------
    data : pandas or polars DataFrame (or LazyFrame)
        Each (item, series, condition) at most once; rows of other conditions ignored.
    item, series, condition, value : str
        Columns: the resampling unit, the series, the condition, the score (boolean or numeric; null = not judged).
    baseline, comparison : scalar, default "8K", "64K"
        The values of ``condition`` compared.
    groups : str or list of str, optional
        The bootstrap runs within each group (nulls a group of their own), each from ``seed`` afresh.
    strata, cluster : str, optional
        Item-level columns: resample within strata; resample whole clusters (``design_effect``).
    judged : str, optional
        Boolean column; a false or null row is out of the denominator.
    settings : PairedSettings
        ``statistics``, ``aggregate`` (:func:`paired_bootstrap_matrix`), ``n_boot``, ``seed``, ``ci_level``,
        ``interval``, ``progress``.

    Returns
    -------
    pandas.DataFrame
        The ``groups`` columns, the ``series`` column (named as the argument; with ``aggregate=None``), then the
        columns of :func:`paired_bootstrap_matrix`.  Items and series are pivoted in sorted order (no dependence on
        row order); a series with no pair in a group is left out of it.
    """
    for name, v in (("item", item), ("series", series), ("condition", condition), ("value", value)):
        require(isinstance(v, str), f"{name} must be a column name (str), got {v!r}", field=name)
    require(baseline != comparison, f"baseline and comparison must differ, got {baseline!r} twice", field="comparison")
    group_cols = [] if groups is None else ([groups] if isinstance(groups, str) else list(groups))
    run = _checked(settings)
    reserved = set(_RESULT_COLUMNS) | ({series} if run.aggregate is None else set())
    clash = [g for g in group_cols if g in reserved]
    require(not clash, f"group column(s) {clash} clash with output columns", field="groups")
    df = frame_columns(data, [item, series, condition, value, *group_cols, strata, judged, cluster])
    present = pd.unique(df[condition].dropna())
    for which, lvl in (("baseline", baseline), ("comparison", comparison)):
        require((df[condition] == lvl).any(), f"{which} {lvl!r} does not occur in column "
                f"{condition!r}; values present: {sorted(present.tolist(), key=str)}", field=which)

    parts = df.groupby(group_cols, sort=True, dropna=False, observed=True) if group_cols else [((), df)]
    rows: list[dict] = []
    for key, part in parts:
        key = key if isinstance(key, tuple) else (key,)
        B, Cm, M, _, slabels, codes, ccodes = _pivot_pairs(
            part, item=item, series=series, condition=condition, value=value, baseline=baseline,
            comparison=comparison, judged=judged, strata=strata, cluster=cluster)
        has = M.any(axis=0)
        if not has.any():
            continue
        B, Cm, M = B[:, has], Cm[:, has], M[:, has]
        labels = [slabels[j] for j in np.flatnonzero(has)]
        for r in _paired_core(B, Cm, M, run, series=labels, strata=codes, clusters=ccodes,
                              cluster_name=cluster or "item"):
            if run.aggregate is None:
                r[series] = r.pop("series")
            rows.append({**dict(zip(group_cols, key)), **r})
    if not rows:
        raise MissingDataError("no (item, series) pair is judged at both conditions in any group; check "
                               f"baseline={baseline!r}, comparison={comparison!r} and the {value!r} column",
                               code="no_pairs", field=value)
    cols = group_cols + ([series] if run.aggregate is None else []) + _RESULT_COLUMNS
    return pd.DataFrame(rows, columns=cols)
