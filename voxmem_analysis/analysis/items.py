"""Item drill-down: which items a model got right or wrong (``voxmem-analysis items``).

:func:`item_table` lists one model's predictions at one budget, one row per item: the item
id, subtype, evidence type, memory operation, the gold answer, the model's response and the
verdict with its scoring status (paper Appendix C.4).  ``wrong=True`` keeps exactly the
incorrect *scored* items (failed generations and ungraded replies count as incorrect under
the paper's convention; provider rejections are never scored).  ``where`` filters with a
polars SQL ``WHERE`` clause on the verdict frame's columns
(:func:`voxmem_analysis.analysis.subsets.filter_where`).
"""
from __future__ import annotations

import json
from typing import Sequence

import pandas as pd
import polars as pl

from voxmem_analysis.analysis.selection import check_budgets, check_models
from voxmem_analysis.analysis.subsets import filter_where
from voxmem_analysis.errors import AnalysisInputError

__all__ = ["ITEM_COLUMNS", "item_table", "gold_answer"]

#: Columns of :func:`item_table`, in order.
ITEM_COLUMNS = ("item_id", "subtype", "evidence_type", "operation", "is_ar", "gold", "response",
                "verdict", "correct", "status", "scored")


def gold_answer(gold_json) -> str | None:
    """The reference answer of a ``gold_json`` string (its ``answer`` field, else the JSON as text)."""
    if gold_json is None:
        return None
    try:
        val = json.loads(gold_json)
    except (TypeError, ValueError, RecursionError):
        return str(gold_json)
    if isinstance(val, dict) and "answer" in val:
        val = val["answer"]
    return val if isinstance(val, str) else json.dumps(val, ensure_ascii=False)


def item_table(release, *, model: str, budget: str, wrong: bool = False, by: Sequence[str] | None = None,
               where: str | None = None) -> pd.DataFrame:
    """One model's items at one budget (see the module docstring), sorted by ``by`` then item id.

    ``by`` (e.g. ``["subtype"]``) sorts the rows so each group's items are together; its
    columns are put first.
    """
    b = check_budgets([budget])[0]
    check_models(release, [model])
    fr = release.frame.filter((pl.col("model") == model) & (pl.col("budget").cast(pl.Utf8) == b))
    fr = filter_where(fr, where)
    if wrong:
        fr = fr.filter(pl.col("scored") & ~pl.col("correct").fill_null(False))
    gold = fr["gold_json"].to_list() if "gold_json" in fr.columns else [None] * fr.height
    out = fr.with_columns(pl.Series("gold", [gold_answer(g) for g in gold], dtype=pl.Utf8))
    by = [c for c in (by or []) if c]
    unknown = [c for c in by if c not in out.columns]
    if unknown:
        raise AnalysisInputError(f"unknown column(s) in --by: {', '.join(unknown)}; e.g. subtype, evidence_type, "
                                 "operation", "by")
    cols = list(dict.fromkeys([*by, *ITEM_COLUMNS]))
    out = out.select(cols).sort([*by, "item_id"])
    return out.to_pandas()


def _sql_literal(v) -> str:
    return "'" + str(v).replace("'", "''") + "'"


def cell_items(release, table: pd.DataFrame, by, *, model: str | None = None, budget: str | None = None,
               cell: str | Sequence | None = None, wrong: bool = True) -> tuple[str, pd.DataFrame]:
    """The items behind one slice of an explorer table (``explore.explore_slices``), for one model.

    ``cell`` gives the values of the ``by`` columns (``"counting,speaker_information"``);
    default: the slice with the lowest accuracy.  ``model`` defaults to the release's first
    model, ``budget`` to 32K.  Returns ``(title, item_table(...))``.
    """
    cols = [c.strip() for c in (by.split(",") if isinstance(by, str) else by) if c.strip()]
    slices = table[table["level"] == "slice"]
    if cell is None:
        row = slices.sort_values("accuracy", kind="stable").iloc[0]
        values = [row[c] for c in cols]
    else:
        values = [v.strip() for v in cell.split(",")] if isinstance(cell, str) else list(cell)
        if len(values) != len(cols):
            raise AnalysisInputError(f"cell {cell!r} needs one value per column of by={cols}", "cell")
    model = model or release.model_order()[0]
    b = budget or "32K"
    where = " AND ".join(f"{c} = {_sql_literal(v)}" for c, v in zip(cols, values) if c not in ("model", "budget"))
    if "model" in cols:
        model = str(values[cols.index("model")])
    if "budget" in cols:
        b = str(values[cols.index("budget")])
    items = item_table(release, model=model, budget=b, wrong=wrong, where=where or None)
    what = "incorrect scored items" if wrong else "items"
    title = f"{model} at {b}, {', '.join(f'{c} = {v}' for c, v in zip(cols, values))}: {len(items)} {what}"
    return title, items
