"""Item drill-down (``voxmem-analysis items``): the items a VoxMem model got right or wrong at one budget with its
answer, and judged Audio MultiChallenge tasks with each rubric verdict and the judge's explanation."""
from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Sequence

import pandas as pd
import polars as pl

from voxmem_analysis.analysis.selection import budget_note, check_budgets, check_models, most_run_budget
from voxmem_analysis.analysis.subsets import filter_where
from voxmem_analysis.errors import AnalysisInputError
from voxmem_analysis.taxonomy import system_label

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
    """One model's predictions at one budget, sorted by ``by`` (its columns first) then item id; ``wrong``: the
    incorrect scored ones only; ``where``: :func:`~voxmem_analysis.analysis.subsets.filter_where`. Columns ``*by``,
    :data:`ITEM_COLUMNS` (``gold``: the reference answer, ``verdict``, ``status``: App. C.4)."""
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
    return out.select(list(dict.fromkeys([*by, *ITEM_COLUMNS]))).sort([*by, "item_id"]).to_pandas()


def _sql_literal(v) -> str:
    return "'" + str(v).replace("'", "''") + "'"


def cell_items(release, table: pd.DataFrame, by, *, model: str | None = None, budget: str | None = None,
               cell: str | Sequence | None = None, wrong: bool = True) -> tuple[str, pd.DataFrame]:
    """The items of one model behind one slice of an explorer table (``explore.explore_slices``):
    ``(title, item_table(...))``.

    ``cell``: the values of the ``by`` columns (``"counting,speaker_information"``; default: the slice with the
    lowest accuracy); ``model``: default the release's first; ``budget``: default the paper's 32K when the model
    was run there, else the longest budget it was run at (the title says which).
    """
    cols = [c.strip() for c in (by.split(",") if isinstance(by, str) else by) if c.strip()]
    if cell is None:
        row = table[table["level"] == "slice"].sort_values("accuracy", kind="stable").iloc[0]
        values = [row[c] for c in cols]
    else:
        values = [v.strip() for v in cell.split(",")] if isinstance(cell, str) else list(cell)
        if len(values) != len(cols):
            raise AnalysisInputError(f"cell {cell!r} needs one value per column of by={cols}", "cell")
    chosen = dict(zip(cols, values))
    model = str(chosen.get("model", model or release.model_order()[0]))
    b, why = str(chosen.get("budget", budget or "")), ""
    if not b:
        b = most_run_budget(release, paper="32K", models=[model])
        if b != "32K":
            why = f" ({budget_note(b, None, '32K', 'the longest it was run at', absent=f'{model} was not run at')})"
    where = " AND ".join(f"{c} = {_sql_literal(v)}" for c, v in chosen.items() if c not in ("model", "budget"))
    items = item_table(release, model=model, budget=b, wrong=wrong, where=where or None)
    what = "incorrect scored items" if wrong else "items"
    return f"{model} at {b}{why}, {', '.join(f'{c} = {v}' for c, v in chosen.items())}: {len(items)} {what}", items


#: Columns of :func:`amc_task_items`, in order.
AMC_ITEM_COLUMNS = ("task_id", "axis", "system", "judge", "task_passed", "n_met", "n_rubrics", "response",
                    "rubric_index", "rubric_text", "criteria_met", "explanation", "pred_error")


def _lines(path: Path, wanted: set[int]) -> dict[int, dict]:
    """The JSON objects on lines ``wanted`` (1-based) of a results file (plain or gzip; ``{}`` for no object)."""
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
    """The judge's result for rubric item ``index``: the one naming its text (a line may list them in another
    order), else the one at its position."""
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
    """One row per task x system x rubric item of judged Audio MultiChallenge runs (one judge per system, ``judge``
    where it graded it), ``response`` and ``explanation`` read back from the results files (a task without a
    response: one row, no rubric item).  ``systems`` (``name`` or ``name (Modality)``), ``axes`` and ``failed``
    select; ``where`` filters the rows.  Returns ``(table with :data:`AMC_ITEM_COLUMNS`, notes on the judges)``."""
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
