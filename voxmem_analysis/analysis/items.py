"""Item drill-down (``voxmem-analysis items``): which items a model got right or wrong, and what it answered.

:func:`item_table` lists one VoxMem model's predictions at one budget (item, subtype, evidence type,
operation, gold answer, response, verdict and scoring status, paper App. C.4); ``wrong=True`` keeps the
incorrect *scored* items.  :func:`amc_task_items` lists judged Audio MultiChallenge tasks, one row per task x
system x rubric item, with the system's response, the rubric verdict and the judge's explanation, read
back from the results files.
"""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Sequence

import pandas as pd
import polars as pl

from voxmem_analysis.analysis.amc_runs import system_label
from voxmem_analysis.analysis.selection import check_budgets, check_models
from voxmem_analysis.analysis.subsets import filter_where
from voxmem_analysis.errors import AnalysisInputError

__all__ = ["ITEM_COLUMNS", "AMC_ITEM_COLUMNS", "item_table", "gold_answer", "amc_task_items"]

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


#: Columns of :func:`amc_task_items`, in order.
AMC_ITEM_COLUMNS = ("task_id", "axis", "system", "judge", "task_passed", "n_met", "n_rubrics", "response",
                    "rubric_index", "rubric_text", "criteria_met", "explanation", "pred_error")


def _lines(path: Path, wanted: set[int]) -> dict[int, dict]:
    """The JSON objects on lines ``wanted`` (1-based) of a results file (plain or gzip)."""
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw).decode("utf-8", errors="replace")
    out = {}
    for number, line in enumerate(text.splitlines(), 1):
        if number in wanted:
            try:
                rec = json.loads(line)
            except ValueError:
                rec = None
            out[number] = rec if isinstance(rec, dict) else {}
    return out


def _written(records: dict, key: tuple) -> tuple[str | None, list]:
    rec = records.get(key[0], {}).get(key[1], {})
    results = rec.get("rubric_results")
    if isinstance(results, str):
        try:
            results = json.loads(results)
        except ValueError:
            results = None
    response = rec.get("model_response", rec.get("response"))
    return (None if response is None else str(response)), (results if isinstance(results, list) else [])


def _said(written: list, index: int | None, text: str | None) -> dict:
    """The judge's result for rubric item ``index`` of a line: the one naming its text (a line may list the
    items in another order), else the one at its position."""
    results = [w for w in written if isinstance(w, dict)]
    norm = " ".join(str(text).split()).casefold() if text else None
    named = [w for w in results if norm and " ".join(str(w.get("rubric_item", "")).split()).casefold() == norm]
    if named:
        return named[0]
    at = written[index - 1] if index and 0 < index <= len(written) else None
    return at if isinstance(at, dict) else {}


def amc_task_items(runs, *, systems: Sequence[str] | None = None, axes: Sequence[str] | None = None,
                   failed: bool = False, where: str | None = None,
                   judge: str | None = None) -> tuple[pd.DataFrame, list[str]]:
    """One row per task x system x rubric item of judged Audio MultiChallenge runs (one judge per system,
    ``judge`` where it graded it): :data:`AMC_ITEM_COLUMNS`.  ``response`` and each item's ``explanation``
    are read back from the results files (``source_file``, ``source_line``); a task without a response
    (``pred_error``) has one row with no rubric item.  ``systems`` (a name, or ``name (Modality)``), ``axes``
    (IM, IR, SC, VE) and ``failed`` (tasks not passed) select; ``where`` filters the rows
    (:func:`~voxmem_analysis.analysis.subsets.filter_where`).  Returns ``(table, notes)``: the judges chosen."""
    one, notes = runs.one_judge(judge)
    res = one.results.with_columns(pl.struct("system", "output_modality").map_elements(
        lambda r: system_label(r["system"], r["output_modality"]), return_dtype=pl.Utf8).alias("label"))
    if systems:
        known = dict.fromkeys(res["label"].to_list() + res["system"].to_list())
        unknown = [x for x in systems if x not in known]
        if unknown:
            raise AnalysisInputError(f"--system: {', '.join(map(repr, unknown))} not among the systems "
                                     f"({', '.join(dict.fromkeys(res['label'].to_list()))})", "system")
        res = res.filter(pl.col("label").is_in(list(systems)) | pl.col("system").is_in(list(systems)))
    if axes:
        res = res.filter(pl.col("axis").is_in([a.strip().upper() for a in axes]))
    if failed:
        res = res.filter(~pl.col("passed"))
    where_file = dict(zip(runs.manifest["path"].astype(str), runs.manifest["resolved"].astype(str)))
    records = {f: _lines(Path(where_file.get(f, f)), set(res.filter(pl.col("source_file") == f)["source_line"]))
               for f in dict.fromkeys(res["source_file"].to_list())}
    texts = dict(zip(zip(runs.items["task_id"].to_list(), runs.items["rubric_index"].to_list()),
                     runs.items["rubric_text"].to_list()))
    verdicts = {}
    for r in one.rubric_results.iter_rows(named=True):
        verdicts.setdefault((r["system"], r["output_modality"], r["task_id"]), []).append(r)
    rows = []
    for r in res.iter_rows(named=True):
        response, written = _written(records, (r["source_file"], r["source_line"]))
        base = {"task_id": r["task_id"], "axis": r["axis"], "system": r["label"], "judge": r["judge"],
                "task_passed": r["passed"], "n_met": r["n_met"], "n_rubrics": r["n_rubrics"], "response": response,
                "pred_error": r["pred_error"]}
        items = verdicts.get((r["system"], r["output_modality"], r["task_id"]), [])
        for v in items or [None]:
            i = None if v is None else v["rubric_index"]
            said = _said(written, i, texts.get((r["task_id"], i)))
            rows.append({**base, "rubric_index": i, "rubric_text": texts.get((r["task_id"], i)),
                         "criteria_met": None if v is None else v["criteria_met"],
                         "explanation": None if said.get("explanation") is None else str(said["explanation"])})
    schema = {"task_id": pl.Utf8, "axis": pl.Utf8, "system": pl.Utf8, "judge": pl.Utf8, "task_passed": pl.Boolean,
              "n_met": pl.Int64, "n_rubrics": pl.Int64, "response": pl.Utf8, "pred_error": pl.Boolean,
              "rubric_index": pl.Int64, "rubric_text": pl.Utf8, "criteria_met": pl.Boolean, "explanation": pl.Utf8}
    out = filter_where(pl.DataFrame(rows, schema=schema), where).select(AMC_ITEM_COLUMNS)
    return out.to_pandas(), notes
