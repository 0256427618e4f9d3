"""The Audio MultiChallenge task table as its users have it: the ``ScaleAI/audiomc`` test split, read as it is.

One row per task (452 in the benchmark), as distributed or exported (Parquet, JSON Lines, a JSON
list of objects, or CSV; each may be ``.gz`` except Parquet):

* ``id`` (or ``task_id``): the task's id -- text or a whole number (``7`` and ``"7"`` are one id);
* ``axis``: ``INFERENCE_MEMORY``, ``INSTRUCTION_RETENTION``, ``SELF_COHERENCE``, ``VOICE_EDITING`` (the
  dataset's spelling), the paper's names (``Inference Memory`` ...) or letters (``IM``, ``IR``, ``SC``,
  ``VE``), in any case, with spaces, ``-`` or ``_``;
* ``rubric`` (or ``rubrics``): the task's rubric items, in order -- a JSON list in a text, or a list
  (Parquet, JSON); each item a text, or an object whose text is under ``rubric``, ``rubric_item``,
  ``criterion``, ``criteria``, ``text``, ``description``, ``item`` or ``requirement``;
* any other column is kept as a task attribute (``slice --by``); audio, lists and objects other than
  the rubric are not read.  Without a ``turns`` column, ``turns`` counts the ``user_turn_<k>_*`` columns
  holding a value (the user turns of the conversation).

Every rule is one polars expression over the task rows (:data:`TASK_TABLE_RULES`, as the other
readers' rule tables); the rubric list is read once per row by :func:`rubric_items`.  A problem
names ``file:line [field]`` (JSON lines and CSV: the line; a JSON list: the line where the entry
starts; Parquet: the 1-based row).
"""
from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io import files as rf
from voxmem_analysis.io.amc_rules import AXES, AXIS_LABELS, check, repeated
from voxmem_analysis.io.amc_values import Cells, per_distinct
from voxmem_analysis.io.bulk import extra_series
from voxmem_analysis.io.jsonl import not_unicode, parse_object
from voxmem_analysis.io.rules import Rule, shown
from voxmem_analysis.textlimits import csv_field_limit

__all__ = ["AXIS_SPELLINGS", "RUBRIC_TEXT_KEYS", "TASK_TABLE_RULES", "task_table_rules", "axis_of", "task_key",
           "rubric_items", "normalized_text", "read_task_table", "json_records"]

#: Axis spellings (upper case, runs of space, ``-``, ``_`` made one ``_``) read as each axis.
AXIS_SPELLINGS = {**{a: a for a in AXES}, **{v.upper().replace(" ", "_"): k for k, v in AXIS_LABELS.items()}}
#: Keys of a rubric item object that hold its text (all those present must agree).
RUBRIC_TEXT_KEYS = ("rubric", "rubric_item", "criterion", "criteria", "text", "description", "item", "requirement")
_ID_FIELDS, _RUBRIC_FIELDS = ("id", "task_id"), ("rubric", "rubrics")
_TURN = re.compile(r"^user_turn_(\d+)_")
_SCALARS = (pl.Utf8, pl.Boolean, pl.Float32, pl.Float64, pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16,
            pl.UInt32, pl.UInt64)


# ----------------------------------------------------------------------------- values
def axis_of(text: str | None) -> str | None:
    """``IM``/``IR``/``SC``/``VE`` of an axis spelling (see the module docstring), else None."""
    if text is None:
        return None
    key = re.sub(r"[\s_-]+", "_", str(text).strip().upper())
    return AXIS_SPELLINGS.get(key)


def task_key(text: str | None, kind: str | None) -> str | None:
    """A task id as one text: a text stripped, a whole number as written (``7.0`` is ``7``); None for a
    value that is no id (a boolean, a fraction, a list, an object, an empty text)."""
    if text is None or kind in (None, "bool", "list", "dict"):
        return None
    if kind == "float":
        number = float(text)
        return str(int(number)) if number.is_integer() else None
    out = text.strip()
    return out or None


def normalized_text(text: str) -> str:
    """A rubric item's text compared with another: white space runs made one space, ends stripped."""
    return " ".join(str(text).split())


def rubric_items(value) -> tuple[list[str] | None, str | None]:
    """``(item texts, None)`` of a rubric value -- a list, or a JSON list in a text (written twice as
    JSON is read too) -- or ``(None, why it cannot be read)``."""
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


# ----------------------------------------------------------------------------- rules
def task_table_rules(id_field: str = "id", rubric_field: str = "rubric") -> tuple[Rule, ...]:
    """The rules of a task row (the id and rubric fields named as the file names them)."""
    return (
        Rule("missing_field", "error", id_field, 1, lambda c: pl.col("d.task_id.raw").is_null(),
             lambda r: "required field `id` (or `task_id`) is missing or empty"),
        Rule("missing_field", "error", "axis", 1, lambda c: c.empty("axis"),
             lambda r: "required field `axis` is missing or empty"),
        Rule("missing_field", "error", rubric_field, 1, lambda c: c.empty(rubric_field),
             lambda r: "required field `rubric` (or `rubrics`) is missing or empty"),
        Rule("invalid_field", "error", id_field, 2, lambda c: pl.col("d.task_id").is_null(),
             lambda r: f"task id {r['d.task_id.raw']} is not a text or a whole number"),
        Rule("unknown_axis", "error", "axis", 2, lambda c: pl.col("d.axis").is_null(),
             lambda r: f"axis {shown(r, 'axis')!r} is not one of INFERENCE_MEMORY, INSTRUCTION_RETENTION, "
                       "SELF_COHERENCE, VOICE_EDITING (or the paper's names, or IM, IR, SC, VE)"),
        Rule("rubric_unreadable", "error", rubric_field, 2, lambda c: pl.col("d.rubric_error").is_not_null(),
             lambda r: f"the rubric {r['d.rubric_error']}"),
    )


TASK_TABLE_RULES = task_table_rules()


# ----------------------------------------------------------------------------- reading the file
def _records(path: Path, rel: str) -> tuple[list[tuple[int | None, dict]] | pl.DataFrame, list[Problem]]:
    """``(line, record)`` pairs of a JSON or CSV task table, or the frame of a Parquet one (its
    scalar columns and the rubric), and what reading found."""
    name = path.name.lower()
    if name.endswith(".parquet"):
        try:
            schema = pl.read_parquet_schema(path)
            keep = [c for c, t in schema.items() if t in _SCALARS or c in _RUBRIC_FIELDS]
            return pl.read_parquet(path, columns=keep), []
        except Exception as exc:  # noqa: BLE001 - a damaged file is a data problem, named
            return [], [Problem("file_unreadable", "error", f"cannot read file: {type(exc).__name__}: {exc}", rel)]
    text, problems = rf.read_text(path, rel)
    if text is None:
        return [], problems
    stem = name.removesuffix(".gz")
    if stem.endswith(".csv"):
        reader = csv.DictReader(io.StringIO(text, newline=""))
        with csv_field_limit():
            return [(reader.line_num, rec) for rec in reader], problems
    if not stem.endswith(".jsonl") and (stem.endswith(".json") or text.lstrip().startswith("[")):
        recs, found = json_records(text, rel)
        if recs is not None:
            return recs, problems + found
    return _json_lines(text, rel, problems)


def _json_lines(text: str, rel: str, problems: list[Problem]) -> tuple[list[tuple[int, dict]], list[Problem]]:
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        obj, bad = parse_object(line.rstrip("\r"))
        if bad is not None:
            problems.append(Problem(bad[0], "error", bad[1], rel, number, bad[2]))
        elif not_unicode(obj):
            problems += [Problem("invalid_unicode", "error", f"`{f}` holds text that is not valid Unicode (an unpaired "
                                 "surrogate escape)", rel, number, f) for f in not_unicode(obj)]
        else:
            out.append((number, obj))
    return out, problems


def json_records(text: str, rel: str) -> tuple[list[tuple[int, dict]] | None, list[Problem]]:
    """The objects of a JSON list (or of a ``{"data"|"rows"|"tasks"|"test": [...]}`` object), each with
    the line where it starts; None for a text that is not one JSON value (JSON lines, as
    ``datasets.Dataset.to_json`` writes them even to a ``.json`` file)."""
    try:
        obj = json.loads(text)
    except (ValueError, RecursionError) as exc:
        if text.lstrip().startswith("["):
            return [], [Problem("malformed_json", "error", f"not valid JSON ({exc})", rel, getattr(exc, "lineno", None))]
        return None, []
    at = text.index("[") if isinstance(obj, list) else -1
    if isinstance(obj, dict):
        key = next((k for k in ("data", "rows", "tasks", "test") if isinstance(obj.get(k), list)), None)
        if key is None:
            return None, []
        obj, at = obj[key], re.search(r'"%s"\s*:\s*\[' % key, text).end() - 1
    if not isinstance(obj, list):
        return [], [Problem("not_an_object", "error", "a JSON file here holds a list of objects (or one object per line)", rel, 1)]
    decoder, out, problems = json.JSONDecoder(), [], []
    for i, rec in enumerate(obj, 1):
        at = _skip(text, at + 1)
        line = text.count("\n", 0, at) + 1
        try:
            at = decoder.raw_decode(text, at)[1] - 1
        except ValueError:   # cannot happen for a text json.loads read; keeps the count honest anyway
            at = len(text)
        if isinstance(rec, dict):
            out.append((line, rec))
        else:
            problems.append(Problem("not_an_object", "error", f"entry {i} is a JSON {type(rec).__name__}, expected an "
                                    "object", rel, line))
    return out, problems


def _skip(text: str, at: int) -> int:
    """The index of the next value from ``at`` (white space and a comma skipped)."""
    while at < len(text) and (text[at].isspace() or text[at] == ","):
        at += 1
    return at


def _written(value) -> tuple[str | None, str | None]:
    return (None, None) if value is None else (str(value), type(value).__name__)


def _columns_of(recs) -> tuple[dict[str, list], dict[str, pl.Series | list], list[int | None]]:
    """From records or a Parquet frame: every column's Python values, the attribute columns (Parquet:
    its scalar columns as they are; JSON, CSV: the keys whose values are all scalars), each row's line."""
    if isinstance(recs, pl.DataFrame):
        values = {c: recs[c].to_list() for c in recs.columns}
        attrs = {c: recs[c] for c in recs.columns if recs[c].dtype in _SCALARS}
        return values, attrs, list(range(1, recs.height + 1))
    keys = list(dict.fromkeys(k for _, r in recs for k in r))
    values = {k: [r.get(k) for _, r in recs] for k in keys}
    attrs = {k: v for k, v in values.items() if all(x is None or isinstance(x, (str, bool, int, float)) for x in v)}
    return values, attrs, [line for line, _ in recs]


def read_task_table(path) -> tuple[pl.DataFrame, pl.DataFrame, list[Problem]]:
    """Read a task table (see the module docstring): ``(tasks, rubric items, problems)``.

    ``tasks``: ``task_id, axis, n_rubrics`` then the table's other columns (``turns`` counted when
    absent); ``rubric items``: ``task_id, rubric_index`` (1-based), ``rubric_id`` (``<task>#<index>``),
    ``rubric_text``.  Rows with an error are left out (a repeated id: the first is kept)."""
    path = Path(path)
    rel = str(path)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        return _no_tasks(), _no_items(), [Problem("no_tasks", "error", f"task table {rel!r} {what}")]
    recs, problems = _records(path, rel)
    values, attrs, lines = _columns_of(recs)
    id_field = "id" if "id" in values or "task_id" not in values else "task_id"
    rubric_field = "rubric" if "rubric" in values or "rubrics" not in values else "rubrics"
    n = len(lines)
    cols: dict[str, list] = {"_fi": [0] * n, "_file": [rel] * n, "_line": lines}
    for f in (id_field, "axis", rubric_field):
        pairs = [_written(v) for v in values.get(f, [None] * n)]
        cols[f], cols[f"{f}.t"] = [p[0] for p in pairs], [p[1] for p in pairs]
    parsed = [rubric_items(v) if v is not None else (None, None) for v in values.get(rubric_field, [None] * n)]
    ids = [task_key(t, k) for t, k in zip(cols[id_field], cols[f"{id_field}.t"])]
    frame = pl.DataFrame(cols, schema={"_fi": pl.Int64, "_file": pl.Utf8, "_line": pl.Int64,
                                       **{c: pl.Utf8 for c in cols if c[0] != "_"}})
    c = Cells(frame)
    frame = frame.with_columns(pl.when(c.empty(id_field)).then(None).otherwise(c.raw(id_field)).alias("d.task_id.raw"),
                               pl.Series("d.task_id", ids, dtype=pl.Utf8),
                               per_distinct(frame, c.raw("axis"), axis_of).alias("d.axis"),
                               pl.Series("d.rubric_error", [p[1] for p in parsed], dtype=pl.Utf8),
                               pl.Series("d.items", [p[0] for p in parsed], dtype=pl.List(pl.Utf8)))
    rules = task_table_rules(id_field, rubric_field)
    checked, keyed = check(frame, rules)
    ok = checked.with_columns(pl.int_range(pl.len()).alias("_row"), pl.col("d.task_id").alias("task_id")).filter("_ok")
    kept, dup = repeated(ok, ["task_id"], id_field, len(rules), lambda r: r["task_id"])
    problems += [p for _, p in sorted(keyed + dup, key=lambda kp: kp[0])]
    if not kept.height and not any(p.severity == "error" for p in problems):
        problems.append(Problem("no_tasks", "error", "the task table holds no task", rel))
    skip = {id_field, "id", "task_id", "axis", rubric_field, "rubric", "rubrics"}
    return _tasks_frame(kept, {k: v for k, v in attrs.items() if k not in skip}), _items_frame(kept), problems


def _tasks_frame(kept: pl.DataFrame, attrs: dict) -> pl.DataFrame:
    rows = kept["_row"].to_list()
    out = kept.select("task_id", pl.col("d.axis").alias("axis"), pl.col("d.items").list.len().cast(pl.Int64)
                      .alias("n_rubrics"))
    extra = [v.gather(rows) if isinstance(v, pl.Series) else extra_series(k, [v[i] for i in rows])
             for k, v in attrs.items() if k not in out.columns]
    turn_cols = [k for k in attrs if _TURN.match(k)]
    if "turns" not in attrs and turn_cols:
        by_turn: dict[str, list[str]] = {}
        for k in turn_cols:
            by_turn.setdefault(_TURN.match(k).group(1), []).append(k)
        listed = {k: (v.to_list() if isinstance(v, pl.Series) else v) for k, v in attrs.items() if k in turn_cols}
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
