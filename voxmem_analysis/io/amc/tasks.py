"""The Audio MultiChallenge task table as published (Parquet, JSON lines, a JSON list or CSV; ``.gz``
allowed): ``id``, ``axis`` in any spelling, the ``rubric`` items, any other scalar column as an attribute."""
from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl

from voxmem_analysis.io.amc.tables import AXES, AXIS_LABELS, check_table, repeated
from voxmem_analysis.io.engine import files
from voxmem_analysis.io.engine.records import (TEXT_TYPES, Spec, csv_entries, entry_rows, json_entries, python_frame,
                                               read_parquet)
from voxmem_analysis.io.engine.rules import Rule, fact, ordered, parser_rules, required, shown, unicode_rule
from voxmem_analysis.io.engine.values import Values, per_distinct
from voxmem_analysis.io.voxmem.predictions import extra_series

__all__ = ["AXIS_SPELLINGS", "RUBRIC_TEXT_KEYS", "task_table_rules", "axis_of", "task_key", "rubric_items",
           "normalized_text", "read_task_table"]

#: Axis spellings (upper case, runs of space, ``-``, ``_`` made one ``_``) read as each axis.
AXIS_SPELLINGS = {**{a: a for a in AXES}, **{v.upper().replace(" ", "_"): k for k, v in AXIS_LABELS.items()}}
#: Keys of a rubric item object that hold its text (all those present must agree).
RUBRIC_TEXT_KEYS = ("rubric", "rubric_item", "criterion", "criteria", "text", "description", "item", "requirement")
_RUBRIC_FIELDS = ("rubric", "rubrics")
_TURN = re.compile(r"^user_turn_(\d+)_")
_SCALARS = (pl.Utf8, pl.Boolean, pl.Float32, pl.Float64, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16,
            pl.UInt32, pl.UInt64)
_CONTAINERS = ("data", "rows", "tasks", "test")

NO_TASKS = fact("no_tasks", "error", lambda r: "the task table holds no task")


def axis_of(text: str | None) -> str | None:
    """``IM``/``IR``/``SC``/``VE`` of an axis spelling, else None."""
    if text is None:
        return None
    return AXIS_SPELLINGS.get(re.sub(r"[\s_-]+", "_", str(text).strip().upper()))


def task_key(text: str | None, kind: str | None) -> str | None:
    """A task id as one text: a text stripped, a whole number as written (``7.0`` is ``7``); None for a value
    that is no id (a boolean, a fraction, a list, an object, an empty text)."""
    if text is None or kind in (None, "bool", "list", "dict"):
        return None
    if kind == "float":
        number = float(text)
        return str(int(number)) if number.is_integer() else None
    return text.strip() or None


def normalized_text(text: str) -> str:
    """A rubric item's text compared with another: white space runs made one space, ends stripped."""
    return " ".join(str(text).split())


def rubric_items(value) -> tuple[list[str] | None, str | None]:
    """``(item texts, None)`` of a rubric value -- a list, or a JSON list in a text (written twice as JSON is
    read too) -- or ``(None, why it cannot be read)``."""
    items = value
    for _ in range(2):
        if not isinstance(items, str):
            break
        try:
            items = json.loads(items)
        except (ValueError, RecursionError) as exc:
            return None, f"is not a JSON list ({str(exc)[:80]})"
    if not isinstance(items, (list, tuple)):
        return None, f"is a {type(items).__name__}, not a list of rubric items"
    out = []
    for i, item in enumerate(items, 1):
        text, why = _item_text(item)
        if why:
            return None, f"item {i} {why}"
        out.append(text)
    return (out, None) if out else (None, "holds no rubric item")


def _item_text(item) -> tuple[str | None, str | None]:
    if isinstance(item, str):
        return (item, None) if item.strip() else (None, "is empty")
    if isinstance(item, dict):
        found = {k: item[k] for k in RUBRIC_TEXT_KEYS if isinstance(item.get(k), str) and item[k].strip()}
        if len({normalized_text(v) for v in found.values()}) == 1:
            return next(iter(found.values())), None
        if found:
            return None, f"has differing texts under {', '.join(found)}"
        return None, f"is an object without its text (one of: {', '.join(RUBRIC_TEXT_KEYS)})"
    return None, f"is a {type(item).__name__}, not a text or an object"


def task_table_rules(id_field: str = "id", rubric_field: str = "rubric") -> tuple[Rule, ...]:
    """The rules of a task row (the id and rubric fields named as the file names them)."""
    return (
        *parser_rules(), unicode_rule(0),
        required(id_field, lambda v: pl.col("d.task_id.raw").is_null(), shown_as="`id` (or `task_id`)"),
        required("axis", lambda v: v.missing("axis")),
        required(rubric_field, lambda v: v.missing(rubric_field), shown_as="`rubric` (or `rubrics`)"),
        Rule("invalid_field", "error", id_field, 2, lambda v: pl.col("d.task_id").is_null(),
             lambda r: f"task id {r['d.task_id.raw']} is not a text or a whole number"),
        Rule("unknown_axis", "error", "axis", 2, lambda v: pl.col("d.axis").is_null(),
             lambda r: f"axis {shown(r, 'axis')!r} is not one of INFERENCE_MEMORY, INSTRUCTION_RETENTION, "
                       "SELF_COHERENCE, VOICE_EDITING (or the paper's names, or IM, IR, SC, VE)"),
        Rule("rubric_unreadable", "error", rubric_field, 2, lambda v: pl.col("d.rubric_error").is_not_null(),
             lambda r: f"the rubric {r['d.rubric_error']}"),
    )


def _entries(path: Path, rel: str) -> tuple[list | pl.DataFrame, list]:
    """``(line, record, parser finding)`` of a JSON or CSV task table, or the frame of a Parquet one (its
    scalar columns -- any carrying text read as text -- and the rubric), and what reading found."""
    name = path.name.lower()
    if name.endswith(".parquet"):
        try:
            schema = pl.read_parquet_schema(path)
            keep = [c for c, t in schema.items() if t in _SCALARS or isinstance(t, TEXT_TYPES) or c in _RUBRIC_FIELDS]
            return read_parquet(path, keep), []
        except Exception as exc:  # noqa: BLE001 - a damaged file is a data problem, named
            return [], [files.FILE_UNREADABLE.problem(rel, why=f"{type(exc).__name__}: {exc}")]
    text, problems = files.read_text(path, rel)
    if text is None:
        return [], problems
    stem = name.removesuffix(".gz")
    if stem.endswith(".csv"):
        return csv_entries(text)[1], problems
    containers = {k: "JSON list" for k in _CONTAINERS}
    return json_entries(text, rel, layout="lines" if stem.endswith(".jsonl") else None, entry="entry {i}",
                        containers=containers, items="tasks"), problems


def _columns_of(entries) -> tuple[list[dict | None], dict[str, pl.Series | list], list[int | None], list]:
    """Each record, the attribute columns (Parquet: its scalar columns as they are; JSON, CSV: the keys
    whose values are all scalars), each record's line and parser finding."""
    if isinstance(entries, pl.DataFrame):
        attrs = {c: entries[c] for c in entries.columns if entries[c].dtype in _SCALARS}
        return entries.to_dicts(), attrs, list(range(1, entries.height + 1)), [None] * entries.height
    recs = [r for _, r, _ in entries]
    keys = list(dict.fromkeys(k for r in recs if r is not None for k in r if k is not None))
    values = {k: [r.get(k) if r is not None else None for r in recs] for k in keys}
    attrs = {k: v for k, v in values.items() if all(x is None or isinstance(x, (str, bool, int, float)) for x in v)}
    return recs, attrs, [line for line, _, _ in entries], [bad for _, _, bad in entries]


def read_task_table(path) -> tuple[pl.DataFrame, pl.DataFrame, list]:
    """``(tasks, rubric items, problems)``: ``task_id, axis, n_rubrics`` then the other columns; ``task_id,
    rubric_index, rubric_id, rubric_text``.  Rows with an error are left out (a repeated id: the first kept)."""
    path = Path(path)
    rel = str(path)
    bad = files.user_path_problem(path, "no_tasks", "task table")
    if bad is not None:
        return _no_tasks(), _no_items(), [bad]
    entries, problems = _entries(path, rel)
    recs, attrs, lines, findings = _columns_of(entries)
    keys = {k for r in recs if r is not None for k in r}
    id_field = "id" if "id" in keys or "task_id" not in keys else "task_id"
    rubric_field = "rubric" if "rubric" in keys or "rubrics" not in keys else "rubrics"
    spec = Spec({id_field: "str", "axis": "str", rubric_field: "json"})
    frame, _ = python_frame(entry_rows(list(zip(lines, recs, findings)), 0, rel), spec)
    v = Values(frame.columns, spec.fields, frame)
    parsed = [rubric_items(r.get(rubric_field)) if r is not None and r.get(rubric_field) is not None else (None, None)
              for r in recs]
    ids = [task_key(t, k) for t, k in frame.select(v.text(id_field), v.type(id_field)).iter_rows()]
    frame = frame.with_columns(pl.when(v.missing(id_field)).then(None).otherwise(v.text(id_field)).alias("d.task_id.raw"),
                               pl.Series("d.task_id", ids, dtype=pl.Utf8),
                               per_distinct(frame, v.text("axis"), axis_of).alias("d.axis"),
                               pl.Series("d.rubric_error", [p[1] for p in parsed], dtype=pl.Utf8),
                               pl.Series("d.items", [p[0] for p in parsed], dtype=pl.List(pl.Utf8)))
    rules = task_table_rules(id_field, rubric_field)
    checked, keyed = check_table(frame, rules, kinds=spec.fields)
    ok = checked.with_columns(pl.int_range(pl.len()).alias("_row"), pl.col("d.task_id").alias("task_id")).filter("_ok")
    kept, dup = repeated(ok, ["task_id"], id_field, len(rules), lambda r: r["task_id"])
    problems += ordered(keyed + dup)
    if not kept.height and not any(p.severity == "error" for p in problems):
        problems.append(NO_TASKS.problem(rel))
    skip = {id_field, "id", "task_id", "axis", rubric_field, "rubric", "rubrics"}
    return _tasks_frame(kept, {k: a for k, a in attrs.items() if k not in skip}), _items_frame(kept), problems


def _tasks_frame(kept: pl.DataFrame, attrs: dict) -> pl.DataFrame:
    rows = kept["_row"].to_list()
    out = kept.select("task_id", pl.col("d.axis").alias("axis"), pl.col("d.items").list.len().cast(pl.Int64)
                      .alias("n_rubrics"))
    extra = [a.gather(rows) if isinstance(a, pl.Series) else extra_series(k, [a[i] for i in rows])
             for k, a in attrs.items() if k not in out.columns]
    turn_cols = [k for k in attrs if _TURN.match(k)]
    if "turns" not in attrs and turn_cols:
        by_turn: dict[str, list[str]] = {}
        for k in turn_cols:
            by_turn.setdefault(_TURN.match(k).group(1), []).append(k)
        listed = {k: (a.to_list() if isinstance(a, pl.Series) else a) for k, a in attrs.items() if k in turn_cols}
        extra.append(pl.Series("turns", [sum(any(_filled(listed[k][i]) for k in ks) for ks in by_turn.values())
                                         for i in rows], dtype=pl.Int64))
    return out.with_columns(extra) if extra else out


def _filled(v) -> bool:
    return v is not None and not (isinstance(v, str) and not v.strip())


def _items_frame(kept: pl.DataFrame) -> pl.DataFrame:
    if not kept.height:
        return _no_items()
    out = kept.select("task_id", pl.col("d.items").alias("rubric_text")).explode("rubric_text")
    out = out.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("task_id").alias("rubric_index"))
    return out.select("task_id", "rubric_index", (pl.col("task_id") + "#" + pl.col("rubric_index").cast(pl.Utf8))
                      .alias("rubric_id"), "rubric_text")


def _no_tasks() -> pl.DataFrame:
    return pl.DataFrame(schema={"task_id": pl.Utf8, "axis": pl.Utf8, "n_rubrics": pl.Int64})


def _no_items() -> pl.DataFrame:
    return pl.DataFrame(schema={"task_id": pl.Utf8, "rubric_index": pl.Int64, "rubric_id": pl.Utf8, "rubric_text": pl.Utf8})
