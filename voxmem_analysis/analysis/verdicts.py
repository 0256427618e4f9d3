"""Analyses that assume no benchmark's labels: slicing, paired system comparison, scaling, judges.

Every function takes a long frame (polars or pandas, one row per verdict) and the *names*
of its columns, and returns a tidy pandas DataFrame.  The VoxMem verdict frame
(``Release.frame``: ``model, budget, evidence_type, operation, subtype, correct, scored``,
...) and the LongMemEval frame (:mod:`voxmem_analysis.io.longmemeval`: ``system, budget,
judge, question_type, correct, scored``, ...) go through the same code.

Conventions
-----------
* **Accuracy** of a set of rows is ``100 * sum(value) / n`` over the rows whose ``scored``
  column is true (``scored=None``: every row).  A null ``value`` on a scored row counts as 0
  (incorrect); the counts come from :func:`voxmem_analysis.analysis.accuracy.accuracy_by_code`,
  the group-by behind every accuracy of the package.  Accuracies, differences and changes are in
  percent / percentage points; retention is a ratio.  Column names follow one vocabulary:
  ``n``, ``n_correct``, ``<stat>_ci_low`` / ``<stat>_ci_high``, ``ci_level`` (the level),
  ``interval`` (the method), ``change`` = comparison − baseline, ``baseline_budget``.
* **Items** (``item=``) are the resampling unit of every bootstrap (a cluster bootstrap:
  all rows of a drawn item come along) and the pairing unit of paired comparisons.
* **Type column**: the column whose levels are "types" (``question_type``,
  ``evidence_type``, ``operation``, ``subtype``, ``source_operation``; see
  :data:`TYPE_COLUMNS`).  Rows pooled over it are labelled ``overall``, unweighted means
  over it ``macro`` (the LongMemEval "task-averaged accuracy").
* Randomness only through ``seed`` (``numpy.random.default_rng`` inside
  :mod:`voxmem_analysis.stats`); every slice / pair / group is resampled afresh with the
  same seed, so any one row can be reproduced from its own data.
* Nothing assumes the sign of a change: accuracy may rise or fall with budget, retention
  may exceed 1.
"""
from __future__ import annotations

import functools
import itertools
from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.accuracy import accuracy_by_code
from voxmem_analysis.errors import AnalysisInputError
from voxmem_analysis.stats.bootstrap import bootstrap_interval as endpoint_interval
from voxmem_analysis.stats.resources import check_bootstrap_memory, check_n_boot
from voxmem_analysis.io.longmemeval import QUESTION_TYPES, budget_sort_key
from voxmem_analysis.stats import (STATISTICS, StatsInputError, cochran_q, cohen_kappa, holm, mcnemar_exact,
                                   paired_bootstrap_frame, shared_bootstrap_counts, spearman, wilson_interval)

__all__ = [
    "TYPE_COLUMNS", "OVERALL", "MACRO", "INTERVALS", "AnalysisInputError", "level_order",
    "slice_accuracy", "compare_systems", "scaling_table", "scaling_correlations",
    "judge_agreement", "judge_agreement_pairs",
]

#: Columns recognised as a "type" column by ``type_col="auto"`` (the last one in ``by`` wins).
TYPE_COLUMNS: tuple[str, ...] = ("question_type", "evidence_type", "operation", "subtype", "source_operation")
OVERALL = "overall"
MACRO = "macro"
#: Interval methods of :func:`slice_accuracy` (``interval=``).
INTERVALS = ("auto", "wilson", "bootstrap")
_KNOWN_ORDERS: tuple[tuple, ...] = (
    tuple(tx.BUDGETS), tuple(tx.EVIDENCE_TYPES), tuple(tx.OPERATIONS), tuple(tx.SUBTYPES),
    tuple(QUESTION_TYPES), tuple(tx.STATUSES),
)


def _fail(message: str, field: str | None = None):
    raise AnalysisInputError(message, field)


# ============================================================================ frames
def _as_list(cols) -> list[str]:
    if cols is None:
        return []
    if isinstance(cols, str):
        return [c.strip() for c in cols.split(",") if c.strip()] if "," in cols else [cols]
    return list(cols)


def _to_pandas(frame, columns: Sequence[str]) -> pd.DataFrame:
    columns = list(dict.fromkeys(c for c in columns if c is not None))
    have = list(frame.columns)
    missing = [c for c in columns if c not in have]
    if missing:
        _fail(f"unknown column(s) {missing}; the frame has: {', '.join(map(str, have))}", missing[0])
    if type(frame).__module__.startswith("polars"):
        return frame.select(columns).to_pandas()
    if not isinstance(frame, pd.DataFrame):
        _fail(f"frame must be a polars or pandas DataFrame, got {type(frame).__name__}", "frame")
    return frame.loc[:, columns].reset_index(drop=True)


def _is_null(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT


def level_order(values) -> list:
    """The display order of a column's values.

    Categorical (e.g. VoxMem's ``budget`` Enum): category order.  Booleans: False, True.
    Numbers: ascending.  Values of a known vocabulary (VoxMem budgets, evidence types,
    operations, subtypes; LongMemEval question types): that vocabulary's order.  Budget-like
    labels (``8k``, ``115k``, ``1.5M``): numeric order.  Anything else: first appearance.
    Nulls last.
    """
    s = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    has_null = bool(s.isna().any())
    if isinstance(s.dtype, pd.CategoricalDtype):
        present = set(s.dropna().astype(object))
        out = [c for c in s.cat.categories if c in present]
    else:
        uniq = [v for v in pd.unique(s.astype(object)) if not _is_null(v)]
        if all(isinstance(v, (bool, np.bool_)) for v in uniq):
            out = sorted(uniq)
        elif all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))
                 for v in uniq):
            out = sorted(uniq)
        else:
            out = None
            strs = set(map(str, uniq))
            for order in _KNOWN_ORDERS:
                if strs and strs <= set(order):
                    out = sorted(uniq, key=lambda v: order.index(str(v)))
                    break
            if out is None and uniq and all(budget_sort_key(v)[0] == 0 for v in uniq):
                out = sorted(uniq, key=budget_sort_key)
            if out is None:
                out = uniq
    return out + ([None] if has_null else [])


def _objectify(df: pd.DataFrame, cols: Sequence[str]) -> dict[str, list]:
    """Record each column's level order, then make it plain object dtype with None for nulls."""
    orders = {}
    for c in cols:
        orders[c] = level_order(df[c])
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    return orders


def _sort(df: pd.DataFrame, cols: Sequence[str], orders: dict[str, list], tail: Sequence[str] = (OVERALL, MACRO)) -> pd.DataFrame:
    """Stable sort by ``cols`` in their level order; ``overall``/``macro`` after the levels."""
    if df.empty or not cols:
        return df.reset_index(drop=True)
    keys = {}
    for c in cols:
        order = orders.get(c) or level_order(df[c])
        pos = {}
        for i, v in enumerate(order):
            pos.setdefault(("null",) if _is_null(v) else ("v", v), i)
        extra = {t: len(order) + 1 + j for j, t in enumerate(tail)}

        def rank(v, pos=pos, extra=extra, n=len(order)):
            if _is_null(v):
                return pos.get(("null",), n)
            if isinstance(v, str) and v in extra and ("v", v) not in pos:
                return extra[v]
            return pos.get(("v", v), n)

        keys[c] = df[c].map(rank).astype(float)
    tmp = df.assign(**{f"__k{i}": keys[c] for i, c in enumerate(cols)})
    tmp = tmp.sort_values([f"__k{i}" for i in range(len(cols))], kind="stable")
    return tmp.drop(columns=[f"__k{i}" for i in range(len(cols))]).reset_index(drop=True)


def _values(df: pd.DataFrame, value: str, scored: str | None) -> tuple[np.ndarray, np.ndarray]:
    """(value as float with nulls -> 0, scored mask)."""
    col = df[value]
    try:
        v = col.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        _fail(f"column {value!r} must be boolean or numeric, got dtype {col.dtype}", value)
    if np.isinf(v).any():
        _fail(f"column {value!r} contains infinite values", value)
    if scored is None:
        s = np.ones(len(df), dtype=bool)
    else:
        try:
            s = df[scored].astype("boolean").fillna(False).to_numpy(dtype=bool)
        except (TypeError, ValueError):
            _fail(f"column {scored!r} must be boolean, got dtype {df[scored].dtype}", scored)
    return np.where(np.isnan(v), 0.0, v), s


def _check_binary(v: np.ndarray, s: np.ndarray, value: str, what: str) -> None:
    bad = s & ~np.isin(v, (0.0, 1.0))
    if bad.any():
        _fail(f"{what} needs a binary {value!r} column (0/1 or bool); found {int(bad.sum())} other value(s), "
              f"e.g. {v[bad][:3].tolist()}", value)


def _resolve_type_col(by: list[str], type_col) -> str | None:
    if type_col in (None, False, "none", ""):
        return None
    if type_col == "auto":
        found = [c for c in by if c in TYPE_COLUMNS]
        return found[-1] if found else None
    if type_col not in by:
        _fail(f"type_col {type_col!r} must be one of the `by` columns {by}", "type_col")
    return type_col


def _groups(df: pd.DataFrame, keys: list[str]):
    """Iterate ``(key tuple, index array)`` in first-appearance order (nulls are a group)."""
    if not keys:
        yield (), np.arange(len(df))
        return
    if not len(df):
        return
    codes = [pd.factorize(df[k].astype(object), use_na_sentinel=False)[0] for k in keys]
    combo = np.zeros(len(df), dtype=np.int64)
    for c in codes:
        combo = combo * (int(c.max()) + 1) + c
    _, inv = np.unique(combo, return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")
    bounds = np.flatnonzero(np.diff(inv[order])) + 1
    chunks = np.split(order, bounds)
    for idx in sorted(chunks, key=lambda ix: ix[0]):
        yield tuple(df[k].iloc[idx[0]] for k in keys), idx


def _item_strata(items: np.ndarray, types: np.ndarray, item: str, type_col: str) -> None:
    per = pd.DataFrame({"i": items, "t": types}).drop_duplicates()
    dup = per["i"][per["i"].duplicated()]
    if len(dup):
        _fail(f"item column {item!r} must have one {type_col!r} per item; {dup.nunique()} item(s) have several, "
              f"e.g. {dup.iloc[0]!r}", item)


# ============================================================================ bootstrap helpers
def _cluster_sums(items: np.ndarray, v: np.ndarray, s: np.ndarray, cells: np.ndarray | None, *,
                  n_boot: int, seed: int, strata: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Resampled (correct, n) sums per cell, resampling items (clusters of rows).

    ``cells`` gives each row a cell code (default: one cell); ``strata`` a stratum per row,
    constant within an item.  The count matrices come from
    :func:`voxmem_analysis.stats.shared_bootstrap_counts` (one draw shared by all cells, and by
    every later call on as many items with the same strata and seed).
    Returns two ``(n_boot, k)`` arrays.
    """
    icode, ilab = pd.factorize(pd.Series(items, dtype=object), sort=True)
    cells = np.zeros(len(items), dtype=np.int64) if cells is None else cells
    k = int(cells.max()) + 1 if len(cells) else 1
    W = np.zeros((len(ilab), k))
    M = np.zeros((len(ilab), k))
    np.add.at(W, (icode, cells), np.where(s, v, 0.0))
    np.add.at(M, (icode, cells), s.astype(float))
    keep = M.sum(axis=1) > 0
    W, M = W[keep], M[keep]
    st = None
    if strata is not None:
        per_item = np.empty(len(ilab), dtype=object)
        per_item[icode] = strata
        st = per_item[keep]
    A = np.hstack([W, M])
    check_bootstrap_memory(n_boot, 2 * k, arrays=2, what="the item bootstrap")
    out = np.empty((n_boot, 2 * k))
    r = 0
    for C in shared_bootstrap_counts(A.shape[0], n_boot=n_boot, seed=seed, strata=st):
        out[r:r + C.shape[0]] = C @ A
        r += C.shape[0]
    return out[:, :k], out[:, k:]


#: Bootstrap interval methods of :func:`slice_accuracy` and :func:`compare_systems` (``bootstrap_interval=`` /
#: ``interval=``): the stats layer's percentile and BCa intervals.
BOOTSTRAP_INTERVALS = ("percentile", "bca")


def _interval(reps: np.ndarray, level: float, *, estimate: float = float("nan"), method: str = "percentile",
              jackknife=None) -> tuple[float, float, float, float]:
    """``(ci_low, ci_high, ci_low_mc_se, ci_high_mc_se)`` of the replicates (non-finite ones dropped),
    by :func:`voxmem_analysis.stats.bootstrap.bootstrap_interval`; ``jackknife`` (a callable giving the
    leave-one-unit-out values) is called for BCa only."""
    jack = jackknife() if method == "bca" and jackknife is not None else None
    if method == "bca" and jack is None:
        return (float("nan"),) * 4
    r = endpoint_interval(reps, estimate, ci_level=level, method=method, jackknife=jack)
    return r["ci_low"], r["ci_high"], r["ci_low_mc_se"], r["ci_high_mc_se"]


def _jackknife_accuracy(units: np.ndarray, v: np.ndarray, s: np.ndarray, cells: np.ndarray | None = None,
                        ok: np.ndarray | None = None) -> np.ndarray:
    """Accuracy (%) with each unit (item or cluster holding a scored row) left out in turn; with
    ``cells``, the mean over the cells ``ok`` of their accuracies (the macro average)."""
    ucode, ulab = pd.factorize(pd.Series(units, dtype=object), sort=True)
    cells = np.zeros(len(units), dtype=np.int64) if cells is None else cells
    k = int(cells.max()) + 1 if len(cells) else 1
    W, M = np.zeros((len(ulab), k)), np.zeros((len(ulab), k))
    np.add.at(W, (ucode, cells), np.where(s, v, 0.0))
    np.add.at(M, (ucode, cells), s.astype(float))
    keep = M.sum(axis=1) > 0
    W, M = W[keep], M[keep]
    with np.errstate(divide="ignore", invalid="ignore"):
        acc = 100.0 * (W.sum(axis=0) - W) / (M.sum(axis=0) - M)
        return acc[:, 0] if ok is None else np.mean(acc[:, ok], axis=1)


def _check_boot(n_boot, seed, ci_level) -> None:
    if not isinstance(n_boot, (int, np.integer)) or isinstance(n_boot, bool) or n_boot < 1:
        _fail(f"n_boot must be a positive integer, got {n_boot!r}", "n_boot")
    check_n_boot(n_boot)
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        _fail(f"seed must be a non-negative integer, got {seed!r}", "seed")
    if not (isinstance(ci_level, (int, float)) and 0 < ci_level < 1):
        _fail(f"ci_level must lie strictly between 0 and 1, got {ci_level!r}", "ci_level")


# ============================================================================ slicing
def slice_accuracy(frame, by, *, value: str = "correct", scored: str | None = "scored", interval: str = "auto",
                   item: str | None = None, type_col: str | None = "auto", n_boot: int = 10_000, seed: int = 0,
                   ci_level: float = 0.95, cluster: str | None = None,
                   separate: str | Sequence[str] | None = None, bootstrap_interval: str = "percentile",
                   mc_se: bool = False) -> pd.DataFrame:
    """Accuracy per slice of a verdict frame, with the overall row and the macro-average.

    Parameters
    ----------
    frame : polars or pandas DataFrame
        One row per verdict.
    by : str or list of str
        Columns to slice by (``"system,question_type"`` is split on commas).
    value : str, default "correct"
        Boolean / 0-1 column (numeric allowed with ``interval="bootstrap"``); null counts as 0.
    scored : str or None, default "scored"
        Boolean column: rows where it is false are out of the denominator (counted in
        ``n_excluded``).  None: every row counts.
    interval : {"auto", "wilson", "bootstrap"}
        Interval method of slice and overall rows: Wilson score interval, or percentile interval of
        an item (cluster) bootstrap (needs ``item``).  "auto" (default): per row, the item
        bootstrap when an item occurs more than once in it (several systems or budgets pooled:
        their verdicts on one question are not independent, and a Wilson interval would be far
        too narrow), Wilson otherwise (and always Wilson without ``item``).
    item : str, optional
        Item column: resampling unit of the bootstrap, and needed for the macro interval.
    type_col : str, "auto" or None
        Column among ``by`` whose levels are pooled (``overall``) and averaged (``macro``);
        "auto": the last of ``by`` in :data:`TYPE_COLUMNS`.
    n_boot, seed, ci_level
        Bootstrap resamples, seed, confidence level.
    cluster : str, optional
        Column naming each item's cluster (e.g. a question family; constant within an item):
        bootstrap rows then draw whole clusters ("auto" bootstraps where a cluster repeats in
        a row), stratified by type only where no cluster spans two types, and the columns
        ``cluster`` and ``design_effect`` (replicate variance under cluster over item
        resampling; NaN for Wilson rows) are added.
    separate : str or list of str, optional
        Columns of ``by`` that are never pooled (e.g. ``"system"``): no overall or macro row
        mixes two of their values.  With a type column the overall rows are per value anyway;
        without one (or when the type column is among them) the pooled rows are left out when
        the column holds more than one value.  Default: pool as described below.
    bootstrap_interval : {"percentile", "bca"}, default "percentile"
        Endpoints of the bootstrap rows (and macro rows): percentile, or bias-corrected and
        accelerated (BCa; acceleration from the leave-one-item-out accuracies -- one cluster out
        with ``cluster``), as :func:`voxmem_analysis.stats.bootstrap.bootstrap_interval`.
    mc_se : bool, default False
        Add ``accuracy_ci_low_mc_se`` and ``accuracy_ci_high_mc_se``: the Monte-Carlo standard
        error of each bootstrap endpoint (the resampling noise of the interval itself, the stats
        layer's ``ci_low_mc_se`` / ``ci_high_mc_se``; NaN for Wilson rows).

    Returns
    -------
    pandas.DataFrame
        Columns ``*by, level, n_correct, n, n_excluded, accuracy, accuracy_ci_low, accuracy_ci_high,
        interval`` (then ``cluster, design_effect`` with ``cluster``):

        - ``level = "slice"``: one row per combination of ``by`` values present;
        - ``level = "overall"``: with a type column, per combination of the other ``by``
          columns, every type pooled (``type_col`` = ``"overall"``); without one, a single
          row pooling every row (every ``by`` column = ``"overall"``);
        - ``level = "macro"`` (only with a type column): unweighted mean of that group's
          type accuracies (types with ``n > 0``); ``n_correct`` is null, ``n`` the pooled n.

        ``accuracy``, ``accuracy_ci_low``, ``accuracy_ci_high`` in percent.  ``interval`` (the
        method used): ``wilson``,
        ``bootstrap``, ``bootstrap (strata: <type_col>)`` (overall / macro rows resample items
        within types, so each type keeps its size) or ``none`` (macro row without ``item``);
        ``bca`` joins the parentheses for BCa endpoints (``bootstrap (bca; strata: ...)``).

    Notes
    -----
    Wilson: :func:`voxmem_analysis.stats.wilson_interval` on (n_correct, n).  Bootstrap: the
    items of the slice are drawn with replacement (:func:`voxmem_analysis.stats.iter_bootstrap_counts`)
    and the accuracy recomputed as resampled correct / resampled n; each slice is resampled
    afresh with ``seed``.  Without an item column duplicated within a slice (e.g. one
    model per slice), each item is one row.
    """
    by = _as_list(by)
    if interval not in INTERVALS:
        _fail(f"interval must be one of {INTERVALS}, got {interval!r}", "interval")
    if interval == "bootstrap" and item is None:
        _fail("interval='bootstrap' needs the item column (item=...) to resample", "item")
    if bootstrap_interval not in BOOTSTRAP_INTERVALS:
        _fail(f"bootstrap_interval must be one of {BOOTSTRAP_INTERVALS}, got {bootstrap_interval!r}",
              "bootstrap_interval")
    _check_boot(n_boot, seed, ci_level)
    tcol = _resolve_type_col(by, type_col)
    df = _to_pandas(frame, [*by, value, scored, item] + ([cluster] if cluster else []))
    v, s = _values(df, value, scored)
    if interval in ("wilson", "auto"):
        _check_binary(v, s, value, "the Wilson interval")
    orders = _objectify(df, by)
    items = None if item is None else df[item].astype(object).to_numpy()
    if items is not None and pd.isna(pd.Series(items)).any():
        _fail(f"item column {item!r} has missing values", item)
    if tcol is not None and items is not None:
        _item_strata(items, df[tcol].to_numpy(), item, tcol)
    units = items
    if cluster is not None:
        units = (_cluster_of(df, item, cluster).reindex(items).to_numpy(dtype=object) if item is not None
                 else _cluster_of(df.assign(_row=np.arange(len(df))), "_row", cluster).to_numpy(dtype=object))

    def wilson_row(c, n):
        if n == 0:
            return float("nan"), float("nan"), float("nan")
        w = wilson_interval(int(round(c)), int(n), ci_level=ci_level).iloc[0]
        return 100.0 * c / n, 100.0 * float(w["ci_low"]), 100.0 * float(w["ci_high"])

    def boot_row(idx, strata_col=None):
        st = None if strata_col is None else df[strata_col].to_numpy()[idx]
        if cluster is not None and st is not None and not _constant_within(units[idx], st):
            st = None  # a cluster spans two strata: resample clusters unstratified
        W, M = _cluster_sums(units[idx], v[idx], s[idx], None, n_boot=n_boot, seed=seed, strata=st)
        with np.errstate(divide="ignore", invalid="ignore"):
            reps = 100.0 * W[:, 0] / M[:, 0]
            deff = np.nan
            if cluster is not None:
                Wi, Mi = _cluster_sums(items[idx] if items is not None else np.arange(len(idx)), v[idx], s[idx],
                                       None, n_boot=n_boot, seed=seed, strata=st)
                deff = _variance_ratio(reps, 100.0 * Wi[:, 0] / Mi[:, 0])
        est = 100.0 * float(np.where(s[idx], v[idx], 0.0).sum()) / float(s[idx].sum())
        jack = functools.partial(_jackknife_accuracy, units[idx], v[idx], s[idx])
        return (*_interval(reps, ci_level, estimate=est, method=bootstrap_interval, jackknife=jack), deff,
                st is not None)

    def row(keys, idx, level, counts, strata_col=None):
        c, n, n_excluded = counts
        method_here = interval
        if interval == "auto":
            repeated = units is not None and len(pd.unique(units[idx])) < len(idx)
            method_here = "bootstrap" if repeated else "wilson"
        deff = se_lo = se_hi = np.nan
        if method_here == "wilson":
            acc, lo, hi = wilson_row(c, n)
            method = "wilson"
        else:
            acc = 100.0 * c / n if n else float("nan")
            lo, hi, se_lo, se_hi, deff, stratified = boot_row(idx, strata_col) if n else (np.nan,) * 5 + (False,)
            method = _method_label(strata_col if stratified or (cluster is None and strata_col) else None, cluster,
                                   bootstrap_interval)
        extra = {} if cluster is None else {"cluster": cluster, "design_effect": deff}
        return {**keys, "level": level, "n_correct": c, "n": n, "n_excluded": n_excluded,
                "accuracy": acc, "accuracy_ci_low": lo, "accuracy_ci_high": hi, "interval": method,
                "accuracy_ci_low_mc_se": se_lo, "accuracy_ci_high_mc_se": se_hi, **extra}

    rows: list[dict] = []
    slices = list(_groups(df, by)) if by else []
    for (key, idx), counts in zip(slices, _group_counts(v, s, slices)):
        rows.append(row(dict(zip(by, key)), idx, "slice", counts))
    rest = [c for c in by if c != tcol]
    pooled = list(_groups(df, rest)) if tcol is not None else [((), np.arange(len(df)))]
    if _pools_across(df, by, tcol, separate):
        pooled = []
    for (key, idx), counts in zip(pooled, _group_counts(v, s, pooled)):
        if tcol is None:
            rows.append(row({c: OVERALL for c in by}, idx, "overall", counts))
        else:
            keys = dict(zip(rest, key))
            rows.append(row({**keys, tcol: OVERALL}, idx, "overall", counts, tcol))
            rows.append(_macro_row(df, idx, v, s, units, keys, tcol, n_boot=n_boot, seed=seed, ci_level=ci_level,
                                   bootstrap_interval=bootstrap_interval,
                                   cluster=cluster))
    out = pd.DataFrame(rows, columns=[*by, "level", "n_correct", "n", "n_excluded", "accuracy", "accuracy_ci_low",
                                      "accuracy_ci_high", "interval"]
                       + (["accuracy_ci_low_mc_se", "accuracy_ci_high_mc_se"] if mc_se else [])
                       + ([] if cluster is None else ["cluster", "design_effect"]))
    if np.isin(v[s], (0.0, 1.0)).all():
        out["n_correct"] = pd.array(out["n_correct"].round(), dtype="Int64")
    out["n"] = out["n"].astype("int64")
    out["n_excluded"] = out["n_excluded"].astype("int64")
    return _sort(out, by, orders)


def _pools_across(df: pd.DataFrame, by: list[str], tcol: str | None, separate) -> bool:
    """Whether the overall/macro rows would pool several values of a ``separate`` column."""
    cols = [c for c in _as_list(separate) if c in by and (tcol is None or c == tcol)]
    return any(df[c].nunique(dropna=False) > 1 for c in cols)


def pooled_across(frame, by, separate, *, type_col: str | None = "auto") -> list[str]:
    """The columns of ``separate`` whose values the pooled rows of :func:`slice_accuracy` would mix
    (left out with ``separate=``); ``[]`` when the pooled rows stay within each of their values."""
    by = _as_list(by)
    tcol = _resolve_type_col(by, type_col)
    df = _to_pandas(frame, [c for c in _as_list(separate) if c in by])
    return [c for c in _as_list(separate) if _pools_across(df, by, tcol, [c])]


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


def _constant_within(units: np.ndarray, strata: np.ndarray) -> bool:
    per = pd.DataFrame({"u": units, "s": strata})
    return bool((per.groupby("u")["s"].nunique(dropna=False) <= 1).all())


def _variance_ratio(reps: np.ndarray, ref: np.ndarray) -> float:
    a, b = reps[np.isfinite(reps)], ref[np.isfinite(ref)]
    vb = float(np.var(b, ddof=1)) if b.size > 1 else np.nan
    return float(np.var(a, ddof=1)) / vb if a.size > 1 and vb > 0 else float("nan")


def _method_label(strata_col: str | None, cluster: str | None, endpoints: str = "percentile") -> str:
    parts = ((["bca"] if endpoints == "bca" else []) + ([f"strata: {strata_col}"] if strata_col else [])
             + ([f"cluster: {cluster}"] if cluster else []))
    return "bootstrap" + (f" ({'; '.join(parts)})" if parts else "")


def _macro_row(df, idx, v, s, items, keys, tcol, *, n_boot, seed, ci_level, cluster=None,
               bootstrap_interval: str = "percentile") -> dict:
    types = df[tcol].to_numpy()[idx]
    tcode, tlab = pd.factorize(pd.Series(types, dtype=object), use_na_sentinel=False)
    sv, ss = v[idx], s[idx]
    corr, n, _ = accuracy_by_code(sv, ss, tcode, len(tlab))
    ok = n > 0
    acc = 100.0 * float(np.mean(corr[ok] / n[ok])) if ok.any() else float("nan")
    lo = hi = se_lo = se_hi = float("nan")
    method = "none"
    if items is not None and ok.any():
        st = types if cluster is None or _constant_within(items[idx], types) else None
        W, M = _cluster_sums(items[idx], sv, ss, tcode, n_boot=n_boot, seed=seed, strata=st)
        with np.errstate(divide="ignore", invalid="ignore"):
            reps = 100.0 * np.mean(W[:, ok] / M[:, ok], axis=1)
        jack = functools.partial(_jackknife_accuracy, items[idx], sv, ss, tcode, ok)
        lo, hi, se_lo, se_hi = _interval(reps, ci_level, estimate=acc, method=bootstrap_interval, jackknife=jack)
        method = _method_label(tcol if st is not None else None, cluster, bootstrap_interval)
    extra = {} if cluster is None else {"cluster": cluster, "design_effect": np.nan}
    return {**keys, tcol: MACRO, "level": "macro", "n_correct": float("nan"), "n": int(ss.sum()),
            "n_excluded": int(len(idx) - ss.sum()), "accuracy": acc, "accuracy_ci_low": lo, "accuracy_ci_high": hi,
            "interval": method, "accuracy_ci_low_mc_se": se_lo, "accuracy_ci_high_mc_se": se_hi, **extra}


# ============================================================================ pairwise comparison
def _check_unique(df: pd.DataFrame, keys: list[str], hint: str) -> None:
    dup = df.duplicated(keys, keep=False)
    if dup.any():
        ex = df.loc[dup, keys].iloc[0].to_dict()
        _fail(f"{int(dup.sum())} rows share their ({', '.join(keys)}), e.g. {ex}; {hint}", keys[-1])


def compare_systems(frame, *, system: str = "system", item: str = "question_id", budget: str | None = None,
                    value: str = "correct", scored: str | None = "scored", groups: Sequence[str] | None = None,
                    systems: Sequence | None = None, n_boot: int = 10_000, seed: int = 0, ci_level: float = 0.95,
                    alpha: float = 0.05, family: str = "budget", cluster: str | None = None,
                    interval: str = "percentile", mc_se: bool = False) -> pd.DataFrame:
    """Every pair of systems at the same budget, on the items both have scored.

    Parameters
    ----------
    frame : polars or pandas DataFrame
        One row per (system, budget, item) (duplicates are an error: select one judge first).
    system, item, budget, value, scored : str
        Column names; ``budget=None`` compares over the whole frame.
    groups : list of str, optional
        Further columns within which pairs are formed (e.g. ``["judge"]``).
    systems : sequence, optional
        Systems to compare and their order (default: every system, in :func:`level_order`).
    n_boot, seed, ci_level
        Paired bootstrap settings.
    alpha : float
        Family-wise level of the ``reject`` column (Holm).
    family : {"budget", "table"}
        The Holm family: all pairs at the same budget (and the same ``groups`` values), the
        default — the comparisons a reader makes at once; or every row of the table.
    cluster : str, optional
        Item-level column naming each item's cluster (e.g. a question family): the bootstrap
        then draws whole clusters, and the columns ``cluster`` and ``diff_design_effect``
        (replicate variance under cluster over item resampling) are added.
    interval : {"percentile", "bca"}, default "percentile"
        Endpoints of the paired bootstrap interval of ``diff`` (BCa: bias-corrected and
        accelerated, :func:`voxmem_analysis.stats.paired_bootstrap_frame`); any other than the
        default adds the column ``interval``.
    mc_se : bool, default False
        Add ``interval``, ``diff_ci_low_mc_se`` and ``diff_ci_high_mc_se``: the Monte-Carlo standard
        error of each endpoint (the stats layer's ``ci_low_mc_se`` / ``ci_high_mc_se``).

    Returns
    -------
    pandas.DataFrame
        One row per (budget, groups, system_a, system_b) with ``a`` before ``b`` in system
        order; columns ``n_a, n_b`` (scored items of each), ``n_common``, ``only_a, only_b``
        (scored items of one system missing or unscored for the other: reported, left out),
        ``n_correct_a, n_correct_b, acc_a, acc_b`` (on the common items, %), ``diff`` =
        ``acc_a - acc_b`` (pp; first minus second, as ``diff`` of :func:`judge_agreement`) and
        its paired bootstrap interval ``diff_ci_low, diff_ci_high``,
        ``a_right_b_wrong, a_wrong_b_right`` (discordant pairs), ``p_mcnemar`` (exact,
        two-sided), ``p_holm`` (Holm within the ``family``), ``n_family`` (the number of tests
        it adjusts for), ``reject``, ``n_boot, seed``, then ``p_cochran`` and ``n_cochran``:
        Cochran's Q omnibus p-value over every system of the group on the items all of them
        scored, and those items (NaN / 0 with fewer than three systems or non-binary values);
        read the pairwise tests when the omnibus rejects.

    Notes
    -----
    The interval is :func:`voxmem_analysis.stats.paired_bootstrap_frame` with the two
    systems as the two conditions of one series: the common items are drawn with
    replacement and both systems rescored on each draw.  McNemar:
    :func:`voxmem_analysis.stats.mcnemar_exact`; Holm: :func:`voxmem_analysis.stats.holm`.
    """
    _check_boot(n_boot, seed, ci_level)
    if interval not in BOOTSTRAP_INTERVALS:
        _fail(f"interval must be one of {BOOTSTRAP_INTERVALS}, got {interval!r}", "interval")
    gcols = ([budget] if budget else []) + _as_list(groups)
    df = _to_pandas(frame, [*gcols, system, item, value, scored] + ([cluster] if cluster else []))
    v, s = _values(df, value, scored)
    df = df.assign(_v=v, _s=s)
    orders = _objectify(df, [*gcols, system])
    _check_unique(df, [*gcols, system, item],
                  "each system needs one verdict per item and budget (several judges? select one, or add `judge` to groups)")
    cluster_of = _cluster_of(df, item, cluster)
    binary = bool(np.isin(v[s], (0.0, 1.0)).all())
    sys_order = list(systems) if systems is not None else [x for x in orders[system] if x is not None]
    _require_pairs(df, gcols, system, sys_order)
    rows: list[dict] = []
    long_parts: list[pd.DataFrame] = []
    sc = df[df["_s"]]
    for key, idx in _groups(df, gcols):
        part = df.iloc[idx]
        part_sc = sc[sc.index.isin(part.index)]
        present = set(part[system])
        names = [x for x in sys_order if x in present]
        by_sys = {x: part_sc.loc[part_sc[system] == x].set_index(item)["_v"] for x in names}
        for a, b in itertools.combinations(names, 2):
            xa, xb = by_sys[a], by_sys[b]
            common = xa.index.intersection(xb.index).sort_values()
            ya, yb = xa.loc[common].to_numpy(), xb.loc[common].to_numpy()
            r = {**dict(zip(gcols, key)), "system_a": a, "system_b": b, "n_a": len(xa), "n_b": len(xb),
                 "n_common": len(common), "only_a": len(xa) - len(common), "only_b": len(xb) - len(common),
                 "n_correct_a": float(ya.sum()), "n_correct_b": float(yb.sum()),
                 "acc_a": 100 * ya.mean() if len(common) else np.nan,
                 "acc_b": 100 * yb.mean() if len(common) else np.nan}
            r["diff"] = r["acc_a"] - r["acc_b"]
            r["diff_ci_low"] = r["diff_ci_high"] = np.nan
            r["a_right_b_wrong"] = r["a_wrong_b_right"] = pd.NA
            r["p_mcnemar"] = np.nan
            if len(common) and binary:
                m = mcnemar_exact(ya, yb).iloc[0]
                r["a_right_b_wrong"], r["a_wrong_b_right"], r["p_mcnemar"] = int(m["n10"]), int(m["n01"]), float(m["p_value"])
            if len(common):
                pid = len(rows)
                long_parts.append(pd.DataFrame({
                    "_pair": pid, "_series": 0, "_item": np.concatenate([common.to_numpy(dtype=object)] * 2),
                    "_role": ["a"] * len(common) + ["b"] * len(common), "_val": np.concatenate([ya, yb]),
                    **({} if cluster_of is None else
                       {"_cluster": np.concatenate([cluster_of.loc[common].to_numpy(dtype=object)] * 2)})}))
            rows.append(r)
    if long_parts:
        boot = paired_bootstrap_frame(pd.concat(long_parts, ignore_index=True), item="_item", series="_series",
                                      condition="_role", value="_val", baseline="a", comparison="b", groups="_pair",
                                      statistics={"diff": STATISTICS["drop"]}, aggregate="mean",
                                      n_boot=n_boot, seed=seed, ci_level=ci_level, interval=interval,
                                      cluster=None if cluster_of is None else "_cluster")
        for rec in boot.to_dict("records"):
            rows[int(rec["_pair"])].update(diff_ci_low=float(rec["ci_low"]), diff_ci_high=float(rec["ci_high"]),
                                           diff_design_effect=float(rec["design_effect"]),
                                           diff_ci_low_mc_se=float(rec["ci_low_mc_se"]),
                                           diff_ci_high_mc_se=float(rec["ci_high_mc_se"]))
    cols = [*gcols, "system_a", "system_b", "n_a", "n_b", "n_common", "only_a", "only_b", "n_correct_a",
            "n_correct_b", "acc_a", "acc_b", "diff", "diff_ci_low", "diff_ci_high", "a_right_b_wrong", "a_wrong_b_right", "p_mcnemar"]
    out = pd.DataFrame(rows, columns=cols)
    for c in ("a_right_b_wrong", "a_wrong_b_right"):
        out[c] = out[c].astype("Int64")
    if binary:
        for c in ("n_correct_a", "n_correct_b"):
            out[c] = pd.array(out[c].round(), dtype="Int64")
    for c in ("acc_a", "acc_b", "diff", "diff_ci_low", "diff_ci_high"):
        out[c] = out[c].astype(float) + 0.0  # no negative zeros
    if family not in ("budget", "table"):
        _fail(f"family must be 'budget' or 'table', got {family!r}", "family")
    out["p_holm"], out["n_family"], out["reject"] = np.nan, 0, False
    if len(out):
        fam_cols = gcols if family == "budget" else []
        parts = ([ix for _, ix in out.groupby(fam_cols, sort=False, dropna=False).indices.items()]
                 if fam_cols else [out.index])
        for idx in parts:
            idx = list(out.index[idx]) if fam_cols else list(idx)
            h = holm(out.loc[idx, "p_mcnemar"].to_numpy(dtype=float), alpha=alpha)
            out.loc[idx, "p_holm"] = h["p_adjusted"].to_numpy()
            out.loc[idx, "reject"] = h["reject"].to_numpy()
            out.loc[idx, "n_family"] = int(out.loc[idx, "p_mcnemar"].notna().sum())
    out["reject"] = out["reject"].astype(bool)
    out["n_boot"], out["seed"] = n_boot, seed
    out = _omnibus(out, df, gcols, system, item, binary)
    if cluster is not None:
        out["cluster"] = cluster
        out["diff_design_effect"] = [r.get("diff_design_effect", np.nan) for r in rows]
    if mc_se or interval != "percentile":
        out["interval"] = interval
    if mc_se:
        for c in ("diff_ci_low_mc_se", "diff_ci_high_mc_se"):
            out[c] = [r.get(c, np.nan) for r in rows]
    return _sort(out, gcols, orders)


def _require_pairs(df: pd.DataFrame, gcols: list[str], system: str, systems: Sequence) -> None:
    """Raise :class:`AnalysisInputError` unless some group (budget) holds two of ``systems``.

    A comparison of fewer than two systems has no pair: an empty table would look like a
    result, so it is an error that names the systems found.
    """
    wanted = set(systems)
    found = sorted({str(x) for x in df[system].dropna() if x in wanted})
    if len(found) < 2:
        _fail(f"compare needs at least two systems; found {len(found)}"
              + (f" ({', '.join(found)})" if found else "") + ": list two or more systems", system)
    if gcols and not any(len(set(df[system].iloc[idx].dropna()) & wanted) >= 2 for _, idx in _groups(df, gcols)):
        _fail(f"compare needs two systems at the same {', '.join(gcols)}; no {', '.join(gcols)} has more than one "
              f"of {', '.join(found)}", system)


def _cluster_of(df: pd.DataFrame, item: str, cluster: str | None) -> pd.Series | None:
    """item -> cluster label (one per item, none missing), or None without a cluster column."""
    if cluster is None:
        return None
    if df[cluster].isna().any():
        _fail(f"cluster column {cluster!r} has missing values; every item needs a cluster", cluster)
    per = df[[item, cluster]].drop_duplicates()
    if per[item].duplicated().any():
        _fail(f"cluster column {cluster!r} must be constant within an item; "
              f"{per[item][per[item].duplicated()].nunique()} item(s) have several values", cluster)
    return per.set_index(item)[cluster]


def _omnibus(out: pd.DataFrame, df: pd.DataFrame, gcols: list[str], system: str, item: str,
             binary: bool) -> pd.DataFrame:
    """Cochran's Q over the systems of each group (3 or more), on the items all of them scored."""
    out["p_cochran"], out["n_cochran"] = np.nan, 0
    if not binary or out.empty:
        return out
    sc = df[df["_s"]]
    for key, idx in _groups(sc, gcols):
        part = sc.iloc[idx]
        wide = part.pivot_table(index=item, columns=system, values="_v", aggfunc="first", observed=True).dropna()
        names = set(out.loc[_match_rows(out, gcols, key), "system_a"]) | set(out.loc[_match_rows(out, gcols, key), "system_b"])
        wide = wide[[c for c in wide.columns if c in names]]
        if wide.shape[1] < 3 or wide.empty:
            continue
        q = cochran_q(wide.to_numpy(float)).iloc[0]
        rows = _match_rows(out, gcols, key)
        out.loc[rows, "p_cochran"], out.loc[rows, "n_cochran"] = float(q["p_value"]), int(q["n"])
    return out


def _match_rows(out: pd.DataFrame, gcols: list[str], key) -> np.ndarray:
    mask = np.ones(len(out), dtype=bool)
    for c, k in zip(gcols, key):
        mask &= (out[c] == k).to_numpy() if not _is_null(k) else out[c].isna().to_numpy()
    return mask


# ============================================================================ scaling
def _match_level(wanted, levels: list, column: str):
    if wanted in levels:
        return wanted
    for lv in levels:
        if lv is not None and str(lv).strip().lower() == str(wanted).strip().lower():
            return lv
    _fail(f"{wanted!r} is not a value of {column!r}; values: {[x for x in levels if x is not None]}", column)


_SCALING_STATS = ("change", "retention", "baseline", "comparison")


def scaling_table(frame, *, system: str = "system", type_col: str | None = "question_type", item: str = "question_id",
                  budget: str = "budget", baseline, value: str = "correct", scored: str | None = "scored",
                  budgets: Sequence | None = None, groups: Sequence[str] | None = None, n_boot: int = 10_000,
                  seed: int = 0, ci_level: float = 0.95, cluster: str | None = None) -> pd.DataFrame:
    """Accuracy at each budget, and change / retention relative to the baseline budget.

    Parameters
    ----------
    frame : polars or pandas DataFrame
        One row per (system, budget, item).
    system, type_col, item, budget, value, scored : str
        Column names (``type_col=None``: pooled rows only).
    baseline
        The baseline budget (a value of ``budget``; case-insensitive match).
    budgets : sequence, optional
        Budgets to report and their order (default: all, in :func:`level_order`).
    groups : list of str, optional
        Further key columns (e.g. ``["judge"]``).
    n_boot, seed, ci_level
        Paired bootstrap settings.
    cluster : str, optional
        Item-level cluster column (e.g. a question family): the paired bootstrap draws whole
        clusters (``overall`` rows stratified by type only if no cluster spans two types) and
        the columns ``cluster`` and ``change_design_effect`` are added.

    Returns
    -------
    pandas.DataFrame
        One row per (groups, system, type, budget), the pooled type labelled ``overall``
        (``level`` = ``slice`` / ``overall``).  Columns: ``n, n_correct, accuracy,
        accuracy_ci_low, accuracy_ci_high`` (all scored items at that budget, Wilson, %); for budgets other than the
        baseline, on the items scored at **both** budgets: ``n_paired``,
        ``acc_baseline_paired``, ``acc_paired`` (%), ``change`` = ``acc_paired -
        acc_baseline_paired`` (pp) with ``change_ci_low, change_ci_high``, ``retention`` =
        ``acc_paired / acc_baseline_paired`` with ``retention_ci_low, retention_ci_high``
        and ``retention_n_invalid`` (resamples where the baseline accuracy was 0);
        ``baseline_budget``, ``ci_level``, ``n_boot``, ``seed``.  Baseline rows have null paired columns.

    Notes
    -----
    Intervals: :func:`voxmem_analysis.stats.paired_bootstrap_frame` per comparison budget
    with ``aggregate=None`` (each system on its own paired items; both budgets rescored on
    the same draw); per-type rows resample the type's items, ``overall`` rows resample items
    within types (``strata``).  No sign is assumed: change may be positive, retention > 1.
    """
    _check_boot(n_boot, seed, ci_level)
    gcols = _as_list(groups)
    tcols = [type_col] if type_col else []
    df = _to_pandas(frame, [*gcols, system, budget, *tcols, item, value, scored] + ([cluster] if cluster else []))
    v, s = _values(df, value, scored)
    df = df.assign(_v=v, _s=s)
    orders = _objectify(df, [*gcols, system, budget, *tcols])
    _cluster_of(df, item, cluster)  # checks: one cluster per item, none missing
    _check_unique(df, [*gcols, system, budget, item],
                  "each system needs one verdict per item and budget (several judges? select one, or add `judge` to groups)")
    levels = [b for b in orders[budget] if b is not None]
    if budgets is not None:
        levels = [_match_level(b, levels, budget) for b in budgets]
        df = df[df[budget].isin(levels)]
        orders[budget] = levels
    base = _match_level(baseline, levels, budget)
    by = [*gcols, system, budget, *tcols]
    acc = slice_accuracy(df, by, value="_v", scored="_s", interval="wilson", type_col=type_col, ci_level=ci_level)
    acc = acc[acc["level"] != "macro"].drop(columns=["interval", "n_excluded"])
    if not tcols:
        acc = acc[acc["level"] == "slice"].assign(level="overall")
    tname = type_col or "_type"
    if not tcols:
        acc[tname] = OVERALL
    paired: list[pd.DataFrame] = []
    for b in levels:
        if b == base:
            continue
        sub = df[df[budget].isin([base, b])]
        if not (sub[budget] == b).any():
            continue
        calls = [(gcols + tcols, None)] if tcols else []
        calls.append((gcols, type_col))
        for grp, strata in calls:
            if cluster and strata and not _constant_within(sub[cluster].to_numpy(), sub[strata].to_numpy()):
                strata = None  # a cluster spans two types: resample clusters unstratified
            try:
                res = paired_bootstrap_frame(sub, item=item, series=system, condition=budget,
                                             value="_v", judged="_s", baseline=base, comparison=b,
                                             groups=grp or None, statistics=_SCALING_STATS, aggregate=None,
                                             strata=strata, n_boot=n_boot, seed=seed, ci_level=ci_level,
                                             cluster=cluster)
            except StatsInputError:
                continue  # no item scored at both budgets for any system: paired columns stay null
            if not tcols or grp == gcols:
                res[tname] = OVERALL
            res[budget] = b
            paired.append(res)
    pcols = ["n_paired", "acc_baseline_paired", "acc_paired", "change", "change_ci_low", "change_ci_high",
             "retention", "retention_ci_low", "retention_ci_high", "retention_n_invalid"]
    keys = [*gcols, system, tname, budget]
    if paired:
        p = pd.concat(paired, ignore_index=True)
        picks = {
            "change": {"n": "n_paired", "estimate": "change", "ci_low": "change_ci_low", "ci_high": "change_ci_high",
                       "design_effect": "change_design_effect"},
            "retention": {"estimate": "retention", "ci_low": "retention_ci_low", "ci_high": "retention_ci_high",
                          "n_invalid": "retention_n_invalid"},
            "baseline": {"estimate": "acc_baseline_paired"},
            "comparison": {"estimate": "acc_paired"},
        }
        pw = None
        for stat, names in picks.items():
            part = p.loc[p["statistic"] == stat, [*keys, *names]].rename(columns=names)
            pw = part if pw is None else pw.merge(part, on=keys, how="outer")
        out = acc.merge(pw, on=keys, how="left")
    else:
        out = acc.assign(**{c: np.nan for c in pcols})
    for c in ("n_paired", "retention_n_invalid"):
        out[c] = pd.array(out[c], dtype="Float64").round().astype("Int64")
    for c in ("change", "change_ci_low", "change_ci_high", "retention", "retention_ci_low", "retention_ci_high"):
        out[c] = out[c].astype(float) + 0.0  # no negative zeros
    out["baseline_budget"] = base
    out["ci_level"], out["n_boot"], out["seed"] = ci_level, n_boot, seed
    extra = []
    if cluster is not None:
        out["cluster"] = cluster
        if "change_design_effect" not in out:
            out["change_design_effect"] = np.nan
        extra = ["cluster", "change_design_effect"]
    out = out[[*gcols, system, tname, budget, "level", "n", "n_correct", "accuracy", "accuracy_ci_low",
               "accuracy_ci_high", *pcols, "baseline_budget", "ci_level", "n_boot", "seed", *extra]]
    if not tcols:
        out = out.drop(columns=[tname])
        return _sort(out, [*gcols, system, budget], orders)
    return _sort(out, [*gcols, system, type_col, budget], orders)


def scaling_correlations(table: pd.DataFrame, *, system: str = "system", type_col: str = "question_type",
                         budget: str = "budget", groups: Sequence[str] | None = None) -> pd.DataFrame:
    """Appendix D.5: Spearman correlations over system x type cells of a :func:`scaling_table`.

    For each comparison budget (and ``groups``), over the per-type cells (``level ==
    "slice"``; the pooled rows are left out): ``retention`` vs baseline accuracy and
    ``change`` vs baseline accuracy, baseline accuracy being ``acc_baseline_paired`` (on the
    same paired items as the change).

    Returns
    -------
    pandas.DataFrame
        ``*groups, budget, baseline_budget, x, y, n, n_dropped, rho, p_value`` (``n`` = cells used;
        ``n_dropped`` = cells with an undefined value, e.g. retention with a zero baseline).
    """
    gcols = _as_list(groups)
    need = [*gcols, system, type_col, budget, "level", "acc_baseline_paired", "change", "retention", "baseline_budget"]
    t = _to_pandas(table, need)
    t = t[(t["level"] == "slice") & t["acc_baseline_paired"].notna()]
    rows = []
    orders = {c: level_order(t[c]) for c in [*gcols, budget]}
    for key, idx in _groups(t, [*gcols, budget]):
        part = t.iloc[idx]
        for y in ("retention", "change"):
            r = spearman(part["acc_baseline_paired"].to_numpy(float), part[y].to_numpy(float)).iloc[0]
            rows.append({**dict(zip([*gcols, budget], key)), "baseline_budget": part["baseline_budget"].iloc[0],
                         "x": "baseline_accuracy", "y": y, "n": int(r["n"]), "n_dropped": int(r["n_dropped"]),
                         "rho": float(r["rho"]), "p_value": float(r["p_value"])})
    out = pd.DataFrame(rows, columns=[*gcols, budget, "baseline_budget", "x", "y", "n", "n_dropped", "rho", "p_value"])
    return _sort(out, [*gcols, budget], orders)


# ============================================================================ judges
def judge_agreement(frame_a, frame_b, *, keys: Sequence[str], by: Sequence[str] | str | None = None,
                    value: str = "correct", scored: str | None = "scored", type_col: str | None = "auto") -> pd.DataFrame:
    """Agreement between two judges' verdicts on the same responses, per slice.

    Parameters
    ----------
    frame_a, frame_b : polars or pandas DataFrame
        The two judges' verdict frames.
    keys : list of str
        Columns identifying the same verdict in both (e.g. ``["system", "budget",
        "question_id"]``); unique within each frame.
    by : str or list of str, optional
        Slicing columns, taken from ``frame_a`` (e.g. ``"question_type"``).
    value, scored : str
        As in :func:`slice_accuracy`; a pair counts when both sides are scored.
    type_col : str, "auto" or None
        As in :func:`slice_accuracy`: the ``overall`` rows pool it.

    Returns
    -------
    pandas.DataFrame
        ``*by, level, n, acc_a, acc_b, diff, agreement, kappa, n11, n10, n01, n00,
        only_a, only_b, n_excluded``: ``n`` scored pairs; accuracies and agreement in %;
        ``diff = acc_a - acc_b`` (pp; first minus second, as ``diff`` of
        :func:`compare_systems`); ``kappa`` Cohen's (NaN when undefined);
        ``n10``: credited by ``a`` only, ``n01``: by ``b`` only; ``only_a`` / ``only_b``:
        verdicts without a counterpart in the other frame (reported, not used; ``only_b`` is
        attributed to a slice only when ``frame_b`` has the ``by`` columns);
        ``n_excluded``: matched pairs unscored on either side.
    """
    keys, by = _as_list(keys), _as_list(by)
    if not keys:
        _fail("keys must name at least one column", "keys")
    tcol = _resolve_type_col(by, type_col)
    a = _to_pandas(frame_a, [*keys, *by, value, scored])
    b_by = [c for c in by if c not in keys and c in frame_b.columns]
    b = _to_pandas(frame_b, [*keys, value, scored, *b_by])
    for f, name in ((a, "frame_a"), (b, "frame_b")):
        _check_unique(f, keys, f"{name} must hold one verdict per key")
    va, sa = _values(a, value, scored)
    vb, sb = _values(b, value, scored)
    _check_binary(va, sa, value, "Cohen's kappa")
    _check_binary(vb, sb, value, "Cohen's kappa")
    a = a.assign(_va=va, _sa=sa)
    b = b.assign(_vb=vb, _sb=sb)
    orders = _objectify(a, by)
    for k in keys:
        a[k] = a[k].astype(object)
        b[k] = b[k].astype(object)
    bsl = b[[*keys, "_vb", "_sb", *b_by]].rename(columns={c: f"{c}__b" for c in b_by})
    m = a.merge(bsl, on=keys, how="outer", indicator=True)
    right = (m["_merge"] == "right_only").to_numpy()
    for c in b_by:  # verdicts only judge b has: slice them by frame_b's own columns
        m[c] = m[c].astype(object)
        m.loc[right, c] = m.loc[right, f"{c}__b"].astype(object)
    m["_both"] = m["_merge"] == "both"
    m["_pair"] = m["_both"] & m["_sa"].fillna(False).astype(bool) & m["_sb"].fillna(False).astype(bool)
    attributable = all(c in b_by or c in keys for c in by)

    def stats_row(keys_, idx, level):
        part = m.iloc[idx]
        pr = part[part["_pair"]]
        ya, yb = pr["_va"].to_numpy(float), pr["_vb"].to_numpy(float)
        k = cohen_kappa(ya, yb).iloc[0]
        n = int(k["n"])
        acc_a = 100 * ya.mean() if n else np.nan
        acc_b = 100 * yb.mean() if n else np.nan
        return {**keys_, "level": level, "n": n, "acc_a": acc_a, "acc_b": acc_b, "diff": acc_a - acc_b,
                "agreement": 100 * float(k["agreement"]) if n else np.nan, "kappa": float(k["kappa"]),
                "n11": int(k["n11"]), "n10": int(k["n10"]), "n01": int(k["n01"]), "n00": int(k["n00"]),
                "only_a": int((part["_merge"] == "left_only").sum()),
                "only_b": int((part["_merge"] == "right_only").sum()) if (attributable or level != "slice") else pd.NA,
                "n_excluded": int((part["_both"] & ~part["_pair"]).sum())}

    rows = []
    if by:
        for key, idx in _groups(m, by):
            if all(_is_null(x) for x in key) and not attributable:
                continue
            rows.append(stats_row(dict(zip(by, key)), idx, "slice"))
    rest = [c for c in by if c != tcol] if tcol else []
    if tcol is None:
        rows.append(stats_row({c: OVERALL for c in by}, np.arange(len(m)), "overall"))
    else:
        for key, idx in _groups(m, rest):
            rows.append(stats_row({**dict(zip(rest, key)), tcol: OVERALL}, idx, "overall"))
    out = pd.DataFrame(rows, columns=[*by, "level", "n", "acc_a", "acc_b", "diff", "agreement", "kappa",
                                      "n11", "n10", "n01", "n00", "only_a", "only_b", "n_excluded"])
    out["only_b"] = out["only_b"].astype("Int64")
    return _sort(out, by, orders)


def judge_agreement_pairs(frame, *, judge: str = "judge", within: Sequence[str] = ("system", "budget"),
                          item: str = "question_id", by: Sequence[str] | str | None = ("question_type",),
                          value: str = "correct", scored: str | None = "scored") -> pd.DataFrame:
    """:func:`judge_agreement` for every pair of judges found within each ``within`` group.

    Returns
    -------
    pandas.DataFrame
        ``*within, judge_a, judge_b`` then the columns of :func:`judge_agreement`; empty
        when no group has two judges.
    """
    within, by = _as_list(within), _as_list(by)
    df = _to_pandas(frame, [*within, judge, item, *by, value, scored])
    orders = _objectify(df, [*within, judge])
    parts = []
    for key, idx in _groups(df, within):
        part = df.iloc[idx]
        js = [j for j in orders[judge] if j is not None and (part[judge] == j).any()]
        for ja, jb in itertools.combinations(js, 2):
            res = judge_agreement(part[part[judge] == ja], part[part[judge] == jb], keys=[item], by=by,
                                  value=value, scored=scored)
            res.insert(0, "judge_b", jb)
            res.insert(0, "judge_a", ja)
            for c, kv in reversed(list(zip(within, key))):
                res.insert(0, c, kv)
            parts.append(res)
    if not parts:
        return pd.DataFrame(columns=[*within, "judge_a", "judge_b", *by, "level", "n", "acc_a", "acc_b", "diff",
                                     "agreement", "kappa", "n11", "n10", "n01", "n00", "only_a", "only_b", "n_excluded"])
    return pd.concat(parts, ignore_index=True)
