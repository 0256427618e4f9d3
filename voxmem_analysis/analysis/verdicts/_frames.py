"""The frame helpers of the label-free analyses: column checks, level orders, groups in first-appearance order."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import AnalysisInputError
from voxmem_analysis.io.longmemeval import QUESTION_TYPES, budget_sort_key
from voxmem_analysis.stats import frame_columns

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


def fail(message: str, field: str | None = None):
    raise AnalysisInputError(message, field)


def as_list(cols) -> list[str]:
    if cols is None:
        return []
    if isinstance(cols, str):
        return [c.strip() for c in cols.split(",") if c.strip()] if "," in cols else [cols]
    return list(cols)


def to_pandas(frame, columns: Sequence[str]) -> pd.DataFrame:
    return frame_columns(frame, columns, error=AnalysisInputError)


def is_null(v) -> bool:
    return v is None or (isinstance(v, float) and np.isnan(v)) or v is pd.NA or v is pd.NaT


def level_order(values) -> list:
    """The display order of a column's values: a categorical's categories, False before True, numbers ascending,
    a known vocabulary's order (budgets, evidence types, operations, subtypes, LongMemEval question types),
    budget-like labels (``8k``, ``1.5M``) by size, else first appearance; nulls last."""
    s = values if isinstance(values, pd.Series) else pd.Series(list(values), dtype=object)
    has_null = bool(s.isna().any())
    if isinstance(s.dtype, pd.CategoricalDtype):
        present = set(s.dropna().astype(object))
        out = [c for c in s.cat.categories if c in present]
    else:
        uniq = [v for v in pd.unique(s.astype(object)) if not is_null(v)]
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


def objectify(df: pd.DataFrame, cols: Sequence[str]) -> dict[str, list]:
    """Each column's level order, then the column as object dtype with None for nulls (in place)."""
    orders = {}
    for c in cols:
        orders[c] = level_order(df[c])
        df[c] = df[c].astype(object).where(df[c].notna(), None)
    return orders


def sort_levels(df: pd.DataFrame, cols: Sequence[str], orders: dict[str, list], tail: Sequence[str] = (OVERALL, MACRO)) -> pd.DataFrame:
    """Stable sort by ``cols`` in their level order, ``overall``/``macro`` after the levels."""
    if df.empty or not cols:
        return df.reset_index(drop=True)
    keys = {}
    for c in cols:
        order = orders.get(c) or level_order(df[c])
        pos = {}
        for i, v in enumerate(order):
            pos.setdefault(("null",) if is_null(v) else ("v", v), i)
        extra = {t: len(order) + 1 + j for j, t in enumerate(tail)}

        def rank(v, pos=pos, extra=extra, n=len(order)):
            if is_null(v):
                return pos.get(("null",), n)
            if isinstance(v, str) and v in extra and ("v", v) not in pos:
                return extra[v]
            return pos.get(("v", v), n)

        keys[c] = df[c].map(rank).astype(float)
    tmp = df.assign(**{f"__k{i}": keys[c] for i, c in enumerate(cols)})
    tmp = tmp.sort_values([f"__k{i}" for i in range(len(cols))], kind="stable")
    return tmp.drop(columns=[f"__k{i}" for i in range(len(cols))]).reset_index(drop=True)


def numeric_values(df: pd.DataFrame, value: str, scored: str | None) -> tuple[np.ndarray, np.ndarray]:
    """``(value as float, nulls 0; scored mask)``."""
    col = df[value]
    try:
        v = col.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        fail(f"column {value!r} must be boolean or numeric, got dtype {col.dtype}", value)
    if np.isinf(v).any():
        fail(f"column {value!r} contains infinite values", value)
    if scored is None:
        s = np.ones(len(df), dtype=bool)
    else:
        try:
            s = df[scored].astype("boolean").fillna(False).to_numpy(dtype=bool)
        except (TypeError, ValueError):
            fail(f"column {scored!r} must be boolean, got dtype {df[scored].dtype}", scored)
    return np.where(np.isnan(v), 0.0, v), s


def check_binary(v: np.ndarray, s: np.ndarray, value: str, what: str) -> None:
    bad = s & ~np.isin(v, (0.0, 1.0))
    if bad.any():
        fail(f"{what} needs a binary {value!r} column (0/1 or bool); found {int(bad.sum())} other value(s), "
              f"e.g. {v[bad][:3].tolist()}", value)


def resolve_type_col(by: list[str], type_col) -> str | None:
    if type_col in (None, False, "none", ""):
        return None
    if type_col == "auto":
        found = [c for c in by if c in TYPE_COLUMNS]
        return found[-1] if found else None
    if type_col not in by:
        fail(f"type_col {type_col!r} must be one of the `by` columns {by}", "type_col")
    return type_col


def groups_of(df: pd.DataFrame, keys: list[str]):
    """Iterate ``(key tuple, index array)`` in first-appearance order (nulls are a group)."""
    if not keys:
        yield (), np.arange(len(df))
        return
    if not len(df):
        return
    codes = df.groupby([df[k].astype(object) for k in keys], sort=False, dropna=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")   # groups numbered in order of first appearance
    for idx in np.split(order, np.flatnonzero(np.diff(codes[order])) + 1):
        yield tuple(df[k].iloc[idx[0]] for k in keys), idx


def check_unique(df: pd.DataFrame, keys: list[str], hint: str) -> None:
    dup = df.duplicated(keys, keep=False)
    if dup.any():
        ex = df.loc[dup, keys].iloc[0].to_dict()
        fail(f"{int(dup.sum())} rows share their ({', '.join(keys)}), e.g. {ex}; {hint}", keys[-1])


def cluster_of(df: pd.DataFrame, item: str, cluster: str | None, what: str = "cluster") -> pd.Series | None:
    """item -> its ``cluster`` label (one per item, none missing), or None without the column."""
    if cluster is None:
        return None
    if df[cluster].isna().any():
        fail(f"{what} column {cluster!r} has missing values; every item needs a {what}", cluster)
    per = df[[item, cluster]].drop_duplicates()
    if per[item].duplicated().any():
        fail(f"{what} column {cluster!r} must be constant within an item; "
              f"{per[item][per[item].duplicated()].nunique()} item(s) have several values", cluster)
    return per.set_index(item)[cluster]


def constant_within(units: np.ndarray, strata: np.ndarray) -> bool:
    per = pd.DataFrame({"u": units, "s": strata})
    return bool((per.groupby("u")["s"].nunique(dropna=False) <= 1).all())
