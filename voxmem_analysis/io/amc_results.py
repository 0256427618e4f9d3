"""Judged Audio MultiChallenge results as evaluation pipelines write them: one JSON line per task.

The dataset card's rubric judge returns ``{"explanation", "criteria_met"}`` for each rubric item; a
pipeline writes, per task (JSON Lines, plain or ``.gz``)::

    {"id": "...", "axis": "VOICE_EDITING", "pass": false, "pred_error": null, "model_response": "...",
     "rubric_results": [{"rubric_item": "...", "criteria_met": true, "explanation": "..."}, ...]}

* ``id`` (or ``task_id``), text or number, names a task of the task table
  (:mod:`voxmem_analysis.io.amc_tasks`); ``axis``, when given, must be the task's (any spelling);
* ``rubric_results`` lists one result per rubric item of the task, in the task's order (a JSON list
  in a text is read too); each is matched to the task's item by position and checked by its
  ``rubric_item`` text (or, without one, ``rubric``/``criterion``/``criteria``/``item``/``text``; white
  space runs count as one space).  Results listing the task's items in
  another order are matched by text (a warning says so); any other difference is an error naming
  the task and the item;
* ``criteria_met``: ``true``/``false``; the text ``"true"``/``"false"`` in any case is read as that
  boolean (a warning; never Python's truthiness, under which ``"False"`` is true); missing, null or
  anything else is an error (the item has no verdict);
* ``pass``, when given, must agree with "every item met" (an error names each disagreement; neither
  is preferred silently);
* ``pred_error`` (not null, not ``""``, not ``false``): the model gave no response; the task is marked
  (``pred_error``) with the judge's rubric results as they stand (how to score it is the analysis's choice,
  :func:`voxmem_analysis.analysis.amc_runs.task_frame`), and each system's count of such tasks is said (a warning).

Every line is read by Python's ``json`` (the lines are nested: a rubric result per item), once,
into two raw frames -- one row per line, one row per rubric result -- and every rule is a polars
expression over them (:data:`LINE_RULES`, :data:`ITEM_RULES`, :data:`TASK_RULES`).  A line with an
error is left out (lenient reading) and so is its task for that system; nothing else is.
"""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io import files as rf
from voxmem_analysis.io.amc_rules import ROW, check, duplicates
from voxmem_analysis.io.amc_tasks import axis_of, normalized_text, task_key
from voxmem_analysis.io.amc_values import Cells, per_distinct
from voxmem_analysis.io.jsonl import not_unicode, parse_object
from voxmem_analysis.io.rules import Rule, shown

__all__ = ["LINE_RULES", "ITEM_RULES", "TASK_RULES", "read_results", "no_error"]

_LINE_FIELDS = ("id", "axis", "pass", "pred_error", "rubric_results", "synthetic")
_ITEM_FIELDS = ("rubric_item", "criteria_met")
#: Where a rubric result without ``rubric_item`` may hold the item's text (the task table's spellings).
_ITEM_TEXT_ALIASES = ("rubric", "criterion", "criteria", "item", "text")
_SHORT = 60


def no_error(text: str | None, kind: str | None) -> bool:
    """A ``pred_error`` value that says there was none: null, an empty text, ``false``."""
    return kind is None or (kind == "str" and not text.strip()) or (kind == "bool" and text == "False")


def _clip(text: str) -> str:
    text = normalized_text(text)
    return text if len(text) <= _SHORT else text[:_SHORT - 3] + "..."


# ----------------------------------------------------------------------------- rules
def _text_bool(f: str, code: str, what: str) -> tuple[Rule, Rule]:
    """A true/false field: a text true/false read as it (a warning), anything else but a boolean an error."""
    return (Rule(code, "warning", f, 2, lambda c: (c.type(f) == "str") & _truth(c, f).is_not_null(),
                 lambda r: f"{what} is the text {r[f]!r}; read as {str(r[f]).strip().lower()}"),
            Rule("invalid_field", "error", f, 2, lambda c: ~c.none(f) & _truth(c, f).is_null(),
                 lambda r: f"{what} must be true or false, got {shown(r, f)!r}"))


def _truth(c: Cells, f: str) -> pl.Expr:
    """A JSON boolean, or the text true/false in any case (never 0/1, never truthiness)."""
    low = c.text(f).str.to_lowercase()
    return (pl.when(c.type(f) == "bool").then(c.raw(f) == "True")
            .when((c.type(f) == "str") & low.is_in(["true", "false"])).then(low == "true")
            .otherwise(pl.lit(None, dtype=pl.Boolean)))


LINE_RULES: tuple[Rule, ...] = (
    Rule("missing_field", "error", "id", 1, lambda c: c.empty("id"), lambda r: "required field `id` (or `task_id`) is missing or empty"),
    Rule("invalid_field", "error", "id", 1, lambda c: ~c.empty("id") & pl.col("d.task_id").is_null(),
         lambda r: f"task id {shown(r, 'id')!r} is not a text or a whole number"),
    Rule("unknown_task", "error", "id", 1, lambda c: ~pl.col("d.task_known"),
         lambda r: f"task {r['d.task_id']!r} is not in the task table"),
    Rule("axis_mismatch", "error", "axis", 2, lambda c: pl.col("d.axis").is_not_null() & (pl.col("d.axis") != pl.col("t.axis")),
         lambda r: f"task {r['d.task_id']!r} is {r['t.axis']} in the task table, but the line says {shown(r, 'axis')!r}"),
    Rule("unknown_axis", "warning", "axis", 2, lambda c: ~c.empty("axis") & pl.col("d.axis").is_null(),
         lambda r: f"axis {shown(r, 'axis')!r} not read; task {r['d.task_id']!r} is {r['t.axis']} in the task table"),
    Rule("missing_field", "error", "rubric_results", 2, lambda c: c.none("rubric_results") & ~pl.col("d.failed"),
         lambda r: f"task {r['d.task_id']!r} has no `rubric_results` (and no pred_error)"),
    Rule("invalid_field", "error", "rubric_results", 2,
         lambda c: ~c.none("rubric_results") & (pl.col("d.n_results").is_null()) & ~pl.col("d.failed"),
         lambda r: f"`rubric_results` must be a list of rubric results, got {r['rubric_results.t']}"),
    *_text_bool("pass", "pass_as_text", "`pass`"),
    Rule("invalid_field", "warning", "synthetic", 2, lambda c: ~c.none("synthetic") & c.flag("synthetic").is_null(),
         lambda r: f"`synthetic` should be true or false, got {shown(r, 'synthetic')!r}; read as false"),
)

ITEM_RULES: tuple[Rule, ...] = (
    Rule("invalid_field", "error", "rubric_results", 1, lambda c: ~pl.col("item.t").is_in(["dict", "bool"]),
         lambda r: f"rubric result {r['_pos']} of task {r['d.task_id']!r} is a {r['item.t']}, not an object"),
    Rule("missing_criteria_met", "error", "criteria_met", 2, lambda c: c.none("criteria_met"),
         lambda r: f"rubric result {r['_pos']} of task {r['d.task_id']!r} has no `criteria_met` (the judge's verdict "
                   f"on {_clip(r['t.text'] or '')!r})"),
    *_text_bool("criteria_met", "criteria_as_text", "`criteria_met`"),
    Rule("rubric_text_mismatch", "error", "rubric_item", 2,
         lambda c: pl.col("t.text").is_not_null() & ~c.empty("rubric_item")
         & (pl.col("d.text") != pl.col("t.norm")),
         lambda r: f"rubric result {r['_pos']} of task {r['d.task_id']!r} is for {_clip(r['rubric_item'])!r}, but the "
                   f"task's item {r['_pos']} is {_clip(r['t.text'])!r}"),
)

#: A line that passed the stage-1 rules of :data:`LINE_RULES` (its task is known).
_PASSED_STAGE_1 = ~pl.any_horizontal([pl.col(f"r{i}") for i, r in enumerate(LINE_RULES) if r.stage == 1])

TASK_RULES: tuple[Rule, ...] = (
    Rule("rubric_count", "error", "rubric_results", 2,
         lambda c: ~pl.col("d.failed") & pl.col("d.n_results").is_not_null() & (pl.col("d.n_results") != pl.col("t.n")),
         lambda r: f"task {r['d.task_id']!r} has {r['t.n']} rubric item(s); the line has {r['d.n_results']} rubric "
                   f"result(s)"),
    Rule("pass_mismatch", "error", "pass", 2,
         lambda c: ~pl.col("d.item_error") & pl.col("d.pass").is_not_null() & (pl.col("d.pass") != pl.col("d.all_met")),
         lambda r: f"`pass` of task {r['d.task_id']!r} is {str(r['d.pass']).lower()} but {r['d.n_met']} of its "
                   f"{r['t.n']} rubric items are met{' (the line has a pred_error)' if r['d.failed'] else ''}"),
)


# ----------------------------------------------------------------------------- reading the lines
def _line_records(path: Path, rel: str) -> tuple[list[tuple[int, dict]], list]:
    """``(line, object)`` of each line of a results file (a JSON list of objects is read too), and the
    keyed problems of lines that are not one."""
    from voxmem_analysis.io.amc_tasks import json_records

    text, problems = rf.read_text(path, rel)
    keyed = [((0, 0, 0, 0, n), p) for n, p in enumerate(problems)]
    if text is None:
        return [], keyed
    if text.lstrip().startswith("["):
        recs, found = json_records(text, rel)
        return recs or [], keyed + [((0, ROW, p.line or 0, -1, 0), p) for p in found]
    out = []
    for number, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        obj, bad = parse_object(line)
        if bad is not None:
            keyed.append(((0, ROW, number, -1, 0), Problem(bad[0], "error", bad[1], rel, number, bad[2])))
        elif not_unicode(obj):
            keyed += [((0, ROW, number, -1, n), Problem("invalid_unicode", "error", f"`{f}` holds text that is not "
                                                         "valid Unicode (an unpaired surrogate escape)", rel, number, f))
                      for n, f in enumerate(not_unicode(obj))]
        else:
            out.append((number, obj))
    return out, keyed


def _results_value(value):
    """``rubric_results`` as a list when it is one, or a JSON list written in a text; else as it is."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return value
        return parsed if isinstance(parsed, list) else value
    return value


def _written(value) -> tuple[str | None, str | None]:
    return (None, None) if value is None else (str(value), type(value).__name__)


def _raw_frames(files: list[tuple[Path, str]]) -> tuple[pl.DataFrame, pl.DataFrame, list]:
    """One row per line (``_fi, _file, _line`` and each line field as ``f``, ``f.t``) and one row per
    rubric result (``_fi, _line, _pos``, ``item.t``, ``rubric_item``, ``criteria_met``)."""
    lines: dict[str, list] = {c: [] for c in ("_fi", "_file", "_line", "d.n_results",
                                              *(x for f in _LINE_FIELDS for x in (f, f"{f}.t")))}
    items: dict[str, list] = {c: [] for c in ("_fi", "_line", "_pos", "item.t",
                                              *(x for f in _ITEM_FIELDS for x in (f, f"{f}.t")))}
    keyed: list = []
    for fi, (path, rel) in enumerate(files):
        recs, found = _line_records(path, rel)
        keyed += [((fi, *k[1:]), p) for k, p in found]
        for number, rec in recs:
            results = _results_value(rec.get("rubric_results"))
            values = {**rec, "id": rec["id"] if rec.get("id") is not None else rec.get("task_id"),
                      "rubric_results": results}
            for f in _LINE_FIELDS:
                text, kind = _written(values.get(f))
                lines[f].append(text if f != "rubric_results" else None)
                lines[f"{f}.t"].append(kind)
            lines["_fi"].append(fi)
            lines["_file"].append(rel)
            lines["_line"].append(number)
            lines["d.n_results"].append(len(results) if isinstance(results, list) else None)
            for pos, item in enumerate(results if isinstance(results, list) else (), 1):
                fields = item if isinstance(item, dict) else {"criteria_met": item} if isinstance(item, bool) else {}
                if fields and fields.get("rubric_item") is None:
                    fields = {**fields, "rubric_item": next((fields[k] for k in _ITEM_TEXT_ALIASES
                                                             if isinstance(fields.get(k), str)), None)}
                items["_fi"].append(fi)
                items["_line"].append(number)
                items["_pos"].append(pos)
                items["item.t"].append(type(item).__name__)
                for f in _ITEM_FIELDS:
                    text, kind = _written(fields.get(f))
                    items[f].append(text)
                    items[f"{f}.t"].append(kind)
    ints = ("_fi", "_line", "d.n_results", "_pos")
    line_frame = pl.DataFrame(lines, schema={c: pl.Int64 if c in ints else pl.Utf8 for c in lines})
    item_frame = pl.DataFrame(items, schema={c: pl.Int64 if c in ints else pl.Utf8 for c in items})
    return line_frame, item_frame, keyed


# ----------------------------------------------------------------------------- checking
def _lines_checked(lines: pl.DataFrame, tasks: pl.DataFrame) -> tuple[pl.DataFrame, list]:
    """The line frame with its task's axis and item count (``t.*``) and its readings (``d.*``), checked by
    :data:`LINE_RULES`."""
    pairs = lines.select("id", "id.t").unique()
    ids = {(t, k): task_key(t, k) for t, k in pairs.iter_rows()}
    c = Cells(lines)
    frame = lines.with_columns(
        pl.Series("d.task_id", [ids[(t, k)] for t, k in lines.select("id", "id.t").iter_rows()], dtype=pl.Utf8),
        pl.when(c.type("axis") == "str").then(per_distinct(lines, c.raw("axis"), axis_of)).alias("d.axis"),
        pl.Series("d.failed", [not no_error(t, k) for t, k in lines.select("pred_error", "pred_error.t").iter_rows()],
                  dtype=pl.Boolean))
    known = tasks.select(pl.col("task_id").alias("d.task_id"), pl.col("axis").alias("t.axis"),
                         pl.col("n_rubrics").alias("t.n"), pl.lit(True).alias("d.task_known"))
    frame = frame.join(known, on="d.task_id", how="left", maintain_order="left").with_columns(
        pl.col("d.task_known").fill_null(False))
    return check(frame, LINE_RULES)


def _items_checked(items: pl.DataFrame, lines: pl.DataFrame, task_items: pl.DataFrame) -> tuple[pl.DataFrame, list]:
    """The rubric results of the lines naming a known task, matched to the task's items (by text where a line
    lists them in another order), checked by :data:`ITEM_RULES`."""
    head = lines.filter(_PASSED_STAGE_1).select("_fi", "_line", "_file", "d.task_id")
    frame = items.join(head, on=["_fi", "_line"], how="inner", maintain_order="left")
    c = Cells(frame)
    frame = frame.with_columns(per_distinct(frame, c.text("rubric_item"), normalized_text).alias("d.text"),
                               _truth(c, "criteria_met").alias("d.met"))
    expected = task_items.select(pl.col("task_id").alias("d.task_id"), pl.col("rubric_index").alias("_pos"),
                                 pl.col("rubric_text").alias("t.text"),
                                 per_distinct(task_items, pl.col("rubric_text"), normalized_text).alias("t.norm"))
    frame, reordered = _reordered(frame, expected)
    frame = frame.join(expected, on=["d.task_id", "_pos"], how="left", maintain_order="left")
    checked, keyed = check(frame, ITEM_RULES, offset=len(LINE_RULES), sub="_pos")
    return checked, keyed + reordered


def _reordered(frame: pl.DataFrame, expected: pl.DataFrame) -> tuple[pl.DataFrame, list]:
    """Lines whose rubric results name the task's items, each once, in another order: their positions
    made the task's (a ``rubric_order`` warning per line); other lines as they are."""
    at = frame.join(expected, on=["d.task_id", "_pos"], how="left", maintain_order="left")
    off = at.filter(pl.col("d.text").is_not_null() & pl.col("t.norm").is_not_null() & (pl.col("d.text") != pl.col("t.norm")))
    if not off.height:
        return frame, []
    moves: dict[tuple[int, int, int], int] = {}
    keyed = []
    wanted = {t: g["t.norm"].to_list() for (t,), g in expected.partition_by("d.task_id", as_dict=True).items()}
    lines = frame.join(off.select("_fi", "_line").unique(), on=["_fi", "_line"], how="semi", maintain_order="left")
    for (fi, line), g in lines.partition_by("_fi", "_line", as_dict=True, maintain_order=True).items():
        task, texts = g["d.task_id"][0], g["d.text"].to_list()
        target = wanted.get(task, [])
        if None in texts or sorted(texts) != sorted(target) or len(set(target)) != len(target):
            continue
        for pos, text in zip(g["_pos"].to_list(), texts):
            moves[(fi, line, pos)] = target.index(text) + 1
        keyed.append(((fi, ROW, line, len(LINE_RULES), 0),
                      Problem("rubric_order", "warning", f"the rubric results of task {task!r} list its items in another "
                              "order than the task table; matched by text", g["_file"][0], line, "rubric_item")))
    if not moves:
        return frame, []
    new = pl.DataFrame([(*k, v) for k, v in moves.items()], schema={"_fi": pl.Int64, "_line": pl.Int64, "_pos": pl.Int64,
                                                                    "_new": pl.Int64}, orient="row")
    frame = frame.join(new, on=["_fi", "_line", "_pos"], how="left", maintain_order="left")
    return frame.with_columns(pl.coalesce("_new", "_pos").alias("_pos")).drop("_new"), keyed


def _lines_judged(lines: pl.DataFrame, items: pl.DataFrame) -> tuple[pl.DataFrame, list]:
    """The lines naming a known task with their rubric results counted (``d.n_met``, ``d.all_met``,
    ``d.item_error``), checked by :data:`TASK_RULES`; ``kept`` = the line is used."""
    agg = items.group_by("_fi", "_line").agg((~pl.col("_ok")).any().alias("d.item_error"),
                                              pl.col("d.met").fill_null(False).sum().cast(pl.Int64).alias("d.n_met"))
    frame = lines.filter(_PASSED_STAGE_1).rename({"_ok": "line_ok"}).drop([f"r{i}" for i in range(len(LINE_RULES))])
    frame = frame.join(agg, on=["_fi", "_line"], how="left", maintain_order="left").with_columns(
        pl.col("d.item_error").fill_null(False), pl.col("d.n_met").fill_null(0))
    frame = frame.with_columns(_truth(Cells(frame), "pass").alias("d.pass"))
    frame = frame.with_columns(((pl.col("d.n_met") == pl.col("t.n"))
                                & (pl.col("d.n_results") == pl.col("t.n"))).alias("d.all_met"))
    checked, keyed = check(frame, TASK_RULES, offset=len(LINE_RULES) + len(ITEM_RULES))
    return checked.with_columns((pl.col("_ok") & pl.col("line_ok") & ~pl.col("d.item_error")).alias("kept")), keyed


_LAST = len(LINE_RULES) + len(ITEM_RULES) + len(TASK_RULES)


def _repeated_tasks(judged: pl.DataFrame, items: pl.DataFrame) -> tuple[pl.DataFrame, list]:
    """A task judged on several lines of one run: the first line decides (kept when it has no error);
    every later one is left out -- a warning when both are usable with the same outcome
    (``duplicate_identical``), else an error (``duplicate_conflict``)."""
    met = items.sort("_pos").group_by("_fi", "_line").agg(pl.col("d.met").alias("_mets"))
    frame = judged.join(met, on=["_fi", "_line"], how="left", maintain_order="left").with_columns(
        pl.struct("kept", "d.failed", "_mets").alias("_outcome"))
    same = pl.col("kept") & pl.col("_outcome").eq_missing(pl.col("_first_outcome"))
    again = "task {!r} is listed again for this system (first at {}:{}) "
    rules = (Rule("duplicate_identical", "warning", "id", 1, lambda _: ~pl.col("_new") & same,
                  lambda r: again.format(r["d.task_id"], r["_first_file"], r["_first_line"])
                  + "with the same results; read once"),
             Rule("duplicate_conflict", "error", "id", 1, lambda _: ~pl.col("_new") & ~same,
                  lambda r: again.format(r["d.task_id"], r["_first_file"], r["_first_line"])
                  + "with other results or an error; this line is left out"))
    kept, keyed = duplicates(frame, ["_run", "d.task_id"], rules, _LAST, ["_file", "_line", "_outcome"])
    return kept.filter(pl.col("kept")).drop("_outcome", "_mets"), keyed


def read_results(files: list[tuple[Path, str, int]], tasks: pl.DataFrame,
                 task_items: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame, list, dict]:
    """Read judged results files (``(path, name shown, run index)``; a run -- a system, its output
    modality and judge -- may have several files) against the task table.

    Returns ``(tasks judged, rubric results, keyed problems, counts)``: one row per run x task kept
    (``_run, task_id, axis, n_rubrics, n_met, passed, share, pred_error, source_file, source_line``),
    one row per run x task x rubric item (``_run, task_id, rubric_index, rubric_id, criteria_met``),
    and ``lines``, ``rejected_lines``, ``duplicates_identical``."""
    lines, items, keyed = _raw_frames([(p, rel) for p, rel, _ in files])
    runs = pl.DataFrame({"_fi": list(range(len(files))), "_run": [r for _, _, r in files]},
                        schema={"_fi": pl.Int64, "_run": pl.Int64})
    lines = lines.join(runs, on="_fi", how="left", maintain_order="left")
    lines, found = _lines_checked(lines, tasks)
    items, found_items = _items_checked(items, lines, task_items)
    judged, found_tasks = _lines_judged(lines, items)
    kept, found_dup = _repeated_tasks(judged, items)
    keyed += found + found_items + found_tasks + found_dup
    unread = len({(k[0], k[2]) for k, p in keyed if p.code in ("malformed_json", "not_an_object", "invalid_unicode")})
    identical = sum(1 for _, p in found_dup if p.code == "duplicate_identical")
    stats = {"lines": lines.height + unread, "rejected_lines": lines.height + unread - kept.height - identical,
             "duplicates_identical": identical}
    task_rows = kept.select("_run", pl.col("d.task_id").alias("task_id"), pl.col("t.axis").alias("axis"),
                            pl.col("t.n").alias("n_rubrics"), pl.col("d.n_met").alias("n_met"),
                            pl.col("d.all_met").alias("passed"),
                            (pl.col("d.n_met") / pl.col("t.n")).alias("share"), pl.col("d.failed").alias("pred_error"),
                            pl.col("_file").alias("source_file"), pl.col("_line").alias("source_line"),
                            _truth(Cells(kept), "synthetic").fill_null(False).alias("synthetic"))
    return task_rows, _rubric_rows(kept, items, task_items), keyed, stats


def _rubric_rows(kept: pl.DataFrame, items: pl.DataFrame, task_items: pl.DataFrame) -> pl.DataFrame:
    """One row per rubric item of each task kept: the judge's verdict (false where the line has none)."""
    base = kept.select("_fi", "_line", "_run", "d.task_id", "d.failed").join(
        task_items.select(pl.col("task_id").alias("d.task_id"), pl.col("rubric_index").alias("_pos"), "rubric_id"),
        on="d.task_id", how="left", maintain_order="left")
    met = items.select("_fi", "_line", "_pos", "d.met")
    out = base.join(met, on=["_fi", "_line", "_pos"], how="left", maintain_order="left")
    return out.select("_run", pl.col("d.task_id").alias("task_id"), pl.col("_pos").alias("rubric_index"), "rubric_id",
                      pl.col("d.met").fill_null(False).alias("criteria_met"))
