"""Accuracy per slice of any verdict frame: :func:`slice_accuracy` (Wilson or item-bootstrap intervals,
pooled ``overall`` rows and the ``macro`` average over types)."""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis.analysis.accuracy import accuracy_by_code
from voxmem_analysis.analysis.verdicts._frames import (INTERVALS, MACRO, OVERALL, as_list, check_binary,
                                                       cluster_of, constant_within, fail, groups_of, numeric_values,
                                                       objectify, resolve_type_col, sort_levels, to_pandas)
from voxmem_analysis.stats import wilson_interval
from voxmem_analysis.stats.bootstrap import bootstrap_interval as endpoint_interval
from voxmem_analysis.stats.endpoints import constant_parts, coverage_flag, edge_interval, sum_distribution
from voxmem_analysis.stats.exact import mean_ratio_order
from voxmem_analysis.stats.resampling import resampled_sums
from voxmem_analysis.stats.resources import check_bootstrap_memory
from voxmem_analysis.stats.settings import BootstrapSettings

__all__ = ["slice_accuracy", "pooled_across"]


def slice_accuracy(frame, by, *, value: str = "correct", scored: str | None = "scored", interval: str = "auto",
                   item: str | None = None, type_col: str | None = "auto", cluster: str | None = None,
                   separate: str | Sequence[str] | None = None,
                   settings: BootstrapSettings = BootstrapSettings()) -> pd.DataFrame:
    """Accuracy per slice of a verdict frame, with the pooled ``overall`` rows and the ``macro`` average.

    ``by``: columns to slice by (a comma-separated string is split); ``value``: the 0/1 (for a bootstrap, numeric)
    column, null counting 0; ``scored``: the boolean column of the denominator (None: every row); ``interval``:
    ``"wilson"``, ``"bootstrap"`` (items, or their ``cluster``, resampled afresh per row; needs ``item``) or ``"auto"``
    (the bootstrap where an item occurs more than once in a row, Wilson otherwise); ``type_col``: the column of ``by``
    pooled into ``overall`` and averaged into ``macro`` rows (``"auto"``: the last of :data:`TYPE_COLUMNS`);
    ``separate``: columns whose values no pooled row mixes; ``settings``: ``ci_level``, the bootstrap's ``n_boot, seed,
    progress``, its endpoints (``interval``: percentile or BCa) and ``mc_se``. Returns pandas.DataFrame: ``*by, level``
    (``slice``, ``overall``, ``macro``), ``n_correct`` (null for macro rows), ``n, n_excluded, accuracy,
    accuracy_ci_low, accuracy_ci_high`` (%), ``interval`` (``wilson``, ``bootstrap (strata: ...; cluster: ...)``,
    ``none``), ``accuracy_ci_flag`` (why an interval may not cover, else empty); with ``mc_se`` ``accuracy_ci_low_mc_se,
    accuracy_ci_high_mc_se, accuracy_ci_resolution``; with ``cluster`` ``cluster, design_effect``."""
    by, cfg = as_list(by), settings
    if interval not in INTERVALS:
        fail(f"interval must be one of {INTERVALS}, got {interval!r}", "interval")
    if interval == "bootstrap" and item is None:
        fail("interval='bootstrap' needs the item column (item=...) to resample", "item")
    cfg = cfg.check("bootstrap_interval")
    tcol = resolve_type_col(by, type_col)
    d, orders = _slicing(frame, by, value, scored, item, cluster, tcol, interval, cfg)
    rows: list[dict] = []
    slices = list(groups_of(d.df, by)) if by else []
    for (key, idx), counts in zip(slices, _group_counts(d.v, d.s, slices)):
        rows.append(_row(d, dict(zip(by, key)), idx, "slice", counts))
    rest = [c for c in by if c != tcol]
    pooled = list(groups_of(d.df, rest)) if tcol is not None else [((), np.arange(len(d.df)))]
    if _pools_across(d.df, by, tcol, separate):
        pooled = []
    for (key, idx), counts in zip(pooled, _group_counts(d.v, d.s, pooled)):
        if tcol is None:
            rows.append(_row(d, {c: OVERALL for c in by}, idx, "overall", counts))
        else:
            keys = dict(zip(rest, key))
            rows.append(_row(d, {**keys, tcol: OVERALL}, idx, "overall", counts, tcol))
            rows.append(_macro_row(d, idx, keys, tcol))
    out = pd.DataFrame(rows, columns=[*by, "level", "n_correct", "n", "n_excluded", "accuracy", "accuracy_ci_low",
                                      "accuracy_ci_high", "interval", "accuracy_ci_flag"]
                       + (["accuracy_ci_low_mc_se", "accuracy_ci_high_mc_se", "accuracy_ci_resolution"] if cfg.mc_se
                          else [])
                       + ([] if cluster is None else ["cluster", "design_effect"]))
    if np.isin(d.v[d.s], (0.0, 1.0)).all():
        out["n_correct"] = pd.array(out["n_correct"].round(), dtype="Int64")
    out["n"] = out["n"].astype("int64")
    out["n_excluded"] = out["n_excluded"].astype("int64")
    return sort_levels(out, by, orders)


@dataclass(frozen=True)
class _Slicing:
    """What every row of one :func:`slice_accuracy` call shares."""

    df: pd.DataFrame
    v: np.ndarray               # value per row, nulls as 0
    s: np.ndarray               # scored per row
    items: np.ndarray | None    # item per row
    units: np.ndarray | None    # resampling unit per row: the item, or its cluster
    interval: str
    cluster: str | None
    settings: BootstrapSettings
    binary: bool                # every scored value 0 or 1: the coverage flags of counts apply


def _slicing(frame, by: list[str], value: str, scored: str | None, item: str | None, cluster: str | None,
             tcol: str | None, interval: str, cfg: BootstrapSettings) -> tuple[_Slicing, dict[str, list]]:
    """The checked rows of a slice table and the level order of each ``by`` column."""
    df = to_pandas(frame, [*by, value, scored, item] + ([cluster] if cluster else []))
    v, s = numeric_values(df, value, scored)
    if interval in ("wilson", "auto"):
        check_binary(v, s, value, "the Wilson interval")
    orders = objectify(df, by)
    items = None if item is None else df[item].astype(object).to_numpy()
    if items is not None and pd.isna(pd.Series(items)).any():
        fail(f"item column {item!r} has missing values", item)
    if tcol is not None and items is not None:
        _item_strata(items, df[tcol].to_numpy(), item, tcol)
    units = items
    if cluster is not None:
        units = (cluster_of(df, item, cluster).reindex(items).to_numpy(dtype=object) if item is not None
                 else cluster_of(df.assign(_row=np.arange(len(df))), "_row", cluster).to_numpy(dtype=object))
    binary = bool(np.isin(v[s], (0.0, 1.0)).all())
    return _Slicing(df, v, s, items, units, interval, cluster, cfg, binary), orders


def _row(d: _Slicing, keys: dict, idx: np.ndarray, level: str, counts, strata_col: str | None = None) -> dict:
    """One slice or overall row: Wilson, or the item (cluster) bootstrap where items repeat (``auto``)."""
    c, n, n_excluded = counts
    method_here = d.interval
    if d.interval == "auto":
        repeated = d.units is not None and len(pd.unique(d.units[idx])) < len(idx)
        method_here = "bootstrap" if repeated else "wilson"
    deff, ci = np.nan, dict(_NO_INTERVAL)
    acc = 100.0 * c / n if n else float("nan")
    if method_here == "wilson":
        ci.update(_wilson_row(c, n, d.settings.ci_level))
        method = "wilson"
    else:
        stratified = False
        if n:
            ci, deff, stratified = _boot_row(d, idx, strata_col)
        method = _method_label(strata_col if stratified or (d.cluster is None and strata_col) else None, d.cluster,
                               d.settings.interval)
    if not ci["ci_flag"] and n and float(c).is_integer() and d.binary:
        ci["ci_flag"] = coverage_flag("wilson" if method_here == "wilson" else d.settings.interval, c, n - c)
    extra = {} if d.cluster is None else {"cluster": d.cluster, "design_effect": deff}
    return {**keys, "level": level, "n_correct": c, "n": n, "n_excluded": n_excluded, "accuracy": acc,
            **_accuracy_columns(ci), "interval": method, **extra}


#: The interval columns of a row without one.
_NO_INTERVAL = {"ci_low": float("nan"), "ci_high": float("nan"), "ci_low_mc_se": float("nan"),
                "ci_high_mc_se": float("nan"), "ci_resolution": float("nan"), "ci_flag": ""}


def _accuracy_columns(cols: dict) -> dict:
    return {f"accuracy_{k}": cols[k] for k in _NO_INTERVAL}


def _wilson_row(c: float, n: int, ci_level: float) -> dict:
    if n == 0:
        return {}
    w = wilson_interval(int(round(c)), int(n), ci_level=ci_level).iloc[0]
    return {"ci_low": 100.0 * float(w["ci_low"]), "ci_high": 100.0 * float(w["ci_high"])}


def _boot_row(d: _Slicing, idx: np.ndarray, strata_col: str | None = None) -> tuple[dict, float, bool]:
    """``(interval columns, design_effect, stratified)`` of rows ``idx``."""
    cfg, units, v, s = d.settings, d.units, d.v, d.s
    st = None if strata_col is None else d.df[strata_col].to_numpy()[idx]
    if d.cluster is not None and st is not None and not constant_within(units[idx], st):
        st = None  # a cluster spans two strata: resample clusters unstratified
    u = _UnitSums.of(units[idx], v[idx], s[idx], None, st)
    W, M = u.resampled(cfg)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = 100.0 * W[:, 0] / M[:, 0]
        deff = np.nan
        if d.cluster is not None:
            items = d.items[idx] if d.items is not None else np.arange(len(idx))
            Wi, Mi = _UnitSums.of(items, v[idx], s[idx], None, st).resampled(dataclasses.replace(cfg, progress=None))
            deff = _variance_ratio(reps, 100.0 * Wi[:, 0] / Mi[:, 0])
    est = 100.0 * float(u.W.sum()) / float(u.M.sum())
    law = u.law() if d.cluster is None else None
    ci = _interval(reps, cfg, est, u.jackknife, law=law)
    if ci["ci_flag"]:
        parts = constant_parts(100.0 * u.W[:, 0] / u.M[:, 0], u.M[:, 0],
                               None if u.strata is None else pd.factorize(u.strata)[0])
        ci = edge_interval(ci, u.span(), parts, cfg.ci_level, "cluster" if d.cluster else "item")
    return ci, deff, st is not None


@dataclass(frozen=True)
class _UnitSums:
    """Per resampling unit and cell: the value sum ``W``, the scored count ``M`` (units without a scored row left out)
    and the stratum."""

    W: np.ndarray
    M: np.ndarray
    strata: np.ndarray | None

    @classmethod
    def of(cls, units: np.ndarray, v: np.ndarray, s: np.ndarray, cells: np.ndarray | None,
           strata: np.ndarray | None) -> _UnitSums:
        icode, ilab = pd.factorize(pd.Series(units, dtype=object), sort=True)
        cells = np.zeros(len(units), dtype=np.int64) if cells is None else cells
        k = int(cells.max()) + 1 if len(cells) else 1
        W, M = np.zeros((len(ilab), k)), np.zeros((len(ilab), k))
        np.add.at(W, (icode, cells), np.where(s, v, 0.0))
        np.add.at(M, (icode, cells), s.astype(float))
        keep = M.sum(axis=1) > 0
        st = None
        if strata is not None:
            st = np.empty(len(ilab), dtype=object)
            st[icode] = strata
            st = st[keep]
        return cls(W[keep], M[keep], st)

    def resampled(self, run: BootstrapSettings) -> tuple[np.ndarray, np.ndarray]:
        """Resampled ``(W, M)`` per cell: one draw shared by every cell (and every call with as many units, strata and seed)."""
        k = self.W.shape[1]
        check_bootstrap_memory(run.n_boot, 2 * k, arrays=2, what="the item bootstrap")
        out = resampled_sums(np.hstack([self.W, self.M]), run, strata=self.strata)
        return out[:, :k], out[:, k:]

    def jackknife(self, ok: np.ndarray | None = None) -> np.ndarray:
        """Accuracy (%) with each unit left out in turn (several cells: the mean over the cells ``ok``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            acc = 100.0 * (self.W.sum(axis=0) - self.W) / (self.M.sum(axis=0) - self.M)
        return acc[:, 0] if ok is None else np.mean(acc[:, ok], axis=1)

    def law(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The exact bootstrap law of one cell's accuracy when every unit has as many scored rows and integer sums."""
        m = self.M[:, 0]
        if self.W.shape[1] != 1 or not (m == m[0]).all() or not np.array_equal(self.W, np.round(self.W)):
            return None
        sums, pmf = sum_distribution(np.round(self.W[:, 0]).astype(np.int64),
                                     None if self.strata is None else pd.factorize(self.strata)[0])
        return 100.0 * sums / (m[0] * m.size), pmf

    def span(self) -> tuple[float, float] | None:
        """``(0, 100)`` for values in [0, 1] (the accuracy's range), else None."""
        return (0.0, 100.0) if ((self.W >= 0) & (self.W <= self.M)).all() else None


def _pools_across(df: pd.DataFrame, by: list[str], tcol: str | None, separate) -> bool:
    """Whether the overall/macro rows would pool several values of a ``separate`` column."""
    cols = [c for c in as_list(separate) if c in by and (tcol is None or c == tcol)]
    return any(df[c].nunique(dropna=False) > 1 for c in cols)


def pooled_across(frame, by, separate, *, type_col: str | None = "auto") -> list[str]:
    """The columns of ``separate`` whose values the pooled rows of :func:`slice_accuracy` would mix
    (left out with ``separate=``); ``[]`` when the pooled rows stay within each of their values."""
    by = as_list(by)
    tcol = resolve_type_col(by, type_col)
    df = to_pandas(frame, [c for c in as_list(separate) if c in by])
    return [c for c in as_list(separate) if _pools_across(df, by, tcol, [c])]


def _group_counts(v: np.ndarray, s: np.ndarray, groups: list) -> list[tuple[float, int, int]]:
    """``(n_correct, n, n_excluded)`` of each ``(key, rows)`` group, through :func:`accuracy_by_code`."""
    if not groups:
        return []
    code = np.full(len(v), -1, dtype=np.int64)
    for i, (_, idx) in enumerate(groups):
        code[idx] = i
    inside = code >= 0
    c, n, excl = accuracy_by_code(v[inside], s[inside], code[inside], len(groups))
    return [(float(c[i]), int(n[i]), int(excl[i])) for i in range(len(groups))]


def _item_strata(items: np.ndarray, types: np.ndarray, item: str, type_col: str) -> None:
    per = pd.DataFrame({"i": items, "t": types}).drop_duplicates()
    dup = per["i"][per["i"].duplicated()]
    if len(dup):
        fail(f"item column {item!r} must have one {type_col!r} per item; {dup.nunique()} item(s) have several, "
              f"e.g. {dup.iloc[0]!r}", item)


def _interval(reps: np.ndarray, cfg: BootstrapSettings, estimate: float, jackknife, order=None, law=None) -> dict:
    """The interval columns of the replicates (``jackknife``: called for BCa only)."""
    jack = jackknife() if cfg.interval == "bca" else None
    r = endpoint_interval(reps, estimate, ci_level=cfg.ci_level, method=cfg.interval, jackknife=jack, order=order,
                          lattice=law)
    return {k: r[k] for k in _NO_INTERVAL}


def _variance_ratio(reps: np.ndarray, ref: np.ndarray) -> float:
    a, b = reps[np.isfinite(reps)], ref[np.isfinite(ref)]
    vb = float(np.var(b, ddof=1)) if b.size > 1 else np.nan
    return float(np.var(a, ddof=1)) / vb if a.size > 1 and vb > 0 else float("nan")


def _method_label(strata_col: str | None, cluster: str | None, endpoints: str = "percentile") -> str:
    parts = ((["bca"] if endpoints == "bca" else []) + ([f"strata: {strata_col}"] if strata_col else [])
             + ([f"cluster: {cluster}"] if cluster else []))
    return "bootstrap" + (f" ({'; '.join(parts)})" if parts else "")


def _macro_row(d: _Slicing, idx: np.ndarray, keys: dict, tcol: str) -> dict:
    """The unweighted mean of the type accuracies of rows ``idx`` (types with ``n > 0``), with its interval."""
    types = d.df[tcol].to_numpy()[idx]
    tcode, tlab = pd.factorize(pd.Series(types, dtype=object), use_na_sentinel=False)
    sv, ss, units, cfg = d.v[idx], d.s[idx], d.units, d.settings
    corr, n, _ = accuracy_by_code(sv, ss, tcode, len(tlab))
    ok = n > 0
    acc = 100.0 * float(np.mean(corr[ok] / n[ok])) if ok.any() else float("nan")
    ci, method = dict(_NO_INTERVAL), "none"
    if units is not None and ok.any():
        st = types if d.cluster is None or constant_within(units[idx], types) else None
        u = _UnitSums.of(units[idx], sv, ss, tcode, st)
        W, M = u.resampled(cfg)
        with np.errstate(divide="ignore", invalid="ignore"):
            reps = 100.0 * np.mean(W[:, ok] / M[:, ok], axis=1)
        # BCa's ties decided exactly on the counts (one slice's 100 W / M needs no help: IEEE division is exact
        # to the last bit, so equal fractions give equal floats; a mean of several does not)
        order = mean_ratio_order(reps, acc, W[:, ok], M[:, ok], corr[ok], n[ok]) if cfg.interval == "bca" else None
        ci = edge_interval(_interval(reps, cfg, acc, functools.partial(u.jackknife, ok), order=order), None, None,
                           cfg.ci_level)
        method = _method_label(tcol if st is not None else None, d.cluster, cfg.interval)
    extra = {} if d.cluster is None else {"cluster": d.cluster, "design_effect": np.nan}
    return {**keys, tcol: MACRO, "level": "macro", "n_correct": float("nan"), "n": int(ss.sum()),
            "n_excluded": int(len(idx) - ss.sum()), "accuracy": acc, **_accuracy_columns(ci), "interval": method,
            **extra}
