"""Judged Audio MultiChallenge results, one JSON line per task: the line and rubric-result declarations,
their rules and the reading of a run's files.  A line with an error is left out, with its task for that run."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from voxmem_analysis.io.amc.tables import ROW, check_table, duplicates, flag
from voxmem_analysis.io.amc.tasks import axis_of, normalized_text, task_key
from voxmem_analysis.io.engine import files
from voxmem_analysis.io.engine.records import Spec, encode, entry_rows, json_entries, python_frame
from voxmem_analysis.io.engine.rules import Rule, fact, parser_rules, required, shown, true_or_false, unicode_rule
from voxmem_analysis.io.engine.values import PY_WHITESPACE, Values, per_distinct

__all__ = ["LINE_RULES", "ITEM_RULES", "TASK_RULES", "read_results"]

#: Where a rubric result without ``rubric_item`` may hold the item's text (the task table's spellings).
_ITEM_TEXT_ALIASES = ("rubric", "criterion", "criteria", "item", "text")
_SHORT = 60
RUBRIC_ORDER = fact("rubric_order", "warning", lambda r: f"the rubric results of task {r['task']!r} list its items in "
                    "another order than the task table; matched by text", "rubric_item")


def _clip(text: str) -> str:
    text = normalized_text(text)
    return text if len(text) <= _SHORT else text[:_SHORT - 3] + "..."


def _text_bool(f: str, code: str, what: str) -> tuple[Rule, Rule]:
    """A true/false field: a text true/false read as it (a warning), anything else but a boolean an error
    (never 0/1, never truthiness)."""
    return (Rule(code, "warning", f, 2, lambda v: (v.type(f) == "str") & v.boolean(f).is_not_null(),
                 lambda r: f"{what} is the text {r[f + '.s']!r}; read as {r[f + '.s'].strip().lower()}"),
            true_or_false(f, lambda v: ~v.none(f) & v.boolean(f).is_null(), what=what))


LINE_RULES: tuple[Rule, ...] = (
    *parser_rules(), unicode_rule(0),
    required("id", lambda c: c.missing("id"), shown_as="`id` (or `task_id`)"),
    Rule("invalid_field", "error", "id", 1, lambda c: ~c.missing("id") & pl.col("d.task_id").is_null(),
         lambda r: f"task id {shown(r, 'id')!r} is not a text or a whole number"),
    Rule("unknown_task", "error", "id", 1, lambda c: ~pl.col("d.task_known"),
         lambda r: f"task {r['d.task_id']!r} is not in the task table"),
    Rule("axis_mismatch", "error", "axis", 2, lambda c: pl.col("d.axis").is_not_null() & (pl.col("d.axis") != pl.col("t.axis")),
         lambda r: f"task {r['d.task_id']!r} is {r['t.axis']} in the task table, but the line says {shown(r, 'axis')!r}"),
    Rule("unknown_axis", "warning", "axis", 2, lambda c: ~c.missing("axis") & pl.col("d.axis").is_null(),
         lambda r: f"axis {shown(r, 'axis')!r} not read; task {r['d.task_id']!r} is {r['t.axis']} in the task table"),
    Rule("missing_field", "error", "rubric_results", 2, lambda c: c.none("rubric_results") & ~pl.col("d.failed"),
         lambda r: f"task {r['d.task_id']!r} has no `rubric_results` (and no pred_error)"),
    Rule("invalid_field", "error", "rubric_results", 2,
         lambda c: ~c.none("rubric_results") & (pl.col("d.n_results").is_null()) & ~pl.col("d.failed"),
         lambda r: f"`rubric_results` must be a list of rubric results, got {r['rubric_results.t']}"),
    *_text_bool("pass", "pass_as_text", "`pass`"),
    Rule("invalid_field", "warning", "synthetic", 2, lambda c: ~c.none("synthetic") & flag(c, "synthetic").is_null(),
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
         lambda c: pl.col("t.text").is_not_null() & ~c.missing("rubric_item")
         & (pl.col("d.text") != pl.col("t.norm")),
         lambda r: f"rubric result {r['_pos']} of task {r['d.task_id']!r} is for {_clip(_text(r, 'rubric_item'))!r}, but the "
                   f"task's item {r['_pos']} is {_clip(r['t.text'])!r}"),
)

#: A line that passed the stage-0 and stage-1 rules of :data:`LINE_RULES` (read, its task known).
_PASSED_STAGE_1 = ~pl.any_horizontal([pl.col(f"r{i}") for i, r in enumerate(LINE_RULES) if r.stage <= 1])


def _text(r: dict, f: str) -> str:
    return r[f] if r.get(f) is not None else r.get(f + ".s") or ""

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


def _results_value(value):
    """``rubric_results`` as a list when it is one, or a JSON list written in a text; else as it is."""
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except (ValueError, RecursionError):
            return value
        return parsed if isinstance(parsed, list) else value
    return value


def _line(rec: dict) -> dict:
    results = _results_value(rec.get("rubric_results"))
    return {**rec, "id": rec["id"] if rec.get("id") is not None else rec.get("task_id"), "rubric_results": results,
            "d.n_results": len(results) if isinstance(results, list) else None}


def _item(item) -> dict:
    fields = item if isinstance(item, dict) else {"criteria_met": item} if isinstance(item, bool) else {}
    if fields and fields.get("rubric_item") is None:
        fields = {**fields, "rubric_item": next((fields[k] for k in _ITEM_TEXT_ALIASES if isinstance(fields.get(k), str)),
                                                None)}
    return {**fields, "item.t": type(item).__name__}


LINE_SPEC = Spec({"id": "str", "axis": "str", "pass": "bool", "pred_error": "str", "rubric_results": "json",
                  "synthetic": "bool"}, prepare=_line, plain={"d.n_results": pl.Int64})
ITEM_SPEC = Spec({"rubric_item": "str", "criteria_met": "bool"}, plain={"item.t": pl.Utf8})


def _raw_frames(paths: list[tuple[Path, str]], progress=None) -> tuple[pl.DataFrame, pl.DataFrame, list]:
    """One row per line of the results files (JSON lines or a JSON list; the line fields in the value encoding)
    and one row per rubric result."""
    rows, keyed = [], []
    for fi, (path, rel) in enumerate(paths):
        if progress is not None:
            progress(fi + 1, len(paths))
        text, problems = files.read_text(path, rel)
        keyed += [((fi, 0, 0, 0, n), p) for n, p in enumerate(problems)]
        found = json_entries(text, rel, entry="entry {i}", items="tasks") if text is not None else []
        rows += entry_rows(found, fi, rel)
    lines, recs = python_frame(rows, LINE_SPEC)
    meta = []
    for (fi, _, _, line, *_), rec in zip(rows, recs):
        results = _line(rec)["rubric_results"] if isinstance(rec, dict) else None
        for pos, item in enumerate(results if isinstance(results, list) else (), 1):
            meta.append((fi, line, pos, _item(item)))
    cols = encode([m[3] for m in meta], ITEM_SPEC)
    cols.update(_fi=[m[0] for m in meta], _line=[m[1] for m in meta], _pos=[m[2] for m in meta])
    item_frame = pl.DataFrame(cols, schema_overrides={"_fi": pl.Int64, "_line": pl.Int64, "_pos": pl.Int64,
                                                     "rubric_item": pl.Utf8, "criteria_met": pl.Boolean,
                                                     "item.t": pl.Utf8, "_uni": pl.List(pl.Utf8)})
    return lines, item_frame, keyed


def _lines_checked(lines: pl.DataFrame, tasks: pl.DataFrame) -> tuple[pl.DataFrame, list]:
    """The line frame with its task's axis and item count (``t.*``) and readings (``d.*``), checked."""
    v = Values(lines.columns, LINE_SPEC.fields, lines)
    pairs = lines.select(v.text("id").alias("a"), v.type("id").alias("b")).rows()
    ids = {pair: task_key(*pair) for pair in set(pairs)}
    t, text = v.type("pred_error"), v.text("pred_error")
    no_error = v.none("pred_error") | ((t == "str") & (text.str.strip_chars(PY_WHITESPACE) == "")) \
        | ((t == "bool") & (text == "False"))
    frame = lines.with_columns(
        pl.Series("d.task_id", [ids[pair] for pair in pairs], dtype=pl.Utf8),
        pl.when(v.type("axis") == "str").then(per_distinct(lines, v.text("axis"), axis_of)).alias("d.axis"),
        (~no_error).fill_null(True).alias("d.failed"))
    known = tasks.select(pl.col("task_id").alias("d.task_id"), pl.col("axis").alias("t.axis"),
                         pl.col("n_rubrics").alias("t.n"), pl.lit(True).alias("d.task_known"))
    frame = frame.join(known, on="d.task_id", how="left", maintain_order="left").with_columns(
        pl.col("d.task_known").fill_null(False))
    return check_table(frame, LINE_RULES, kinds=LINE_SPEC.fields)


def _items_checked(items: pl.DataFrame, lines: pl.DataFrame, task_items: pl.DataFrame) -> tuple[pl.DataFrame, list]:
    """The rubric results of the lines naming a known task (a pred_error's too: the judge's grades stand), matched to the task's
    items (by text where a line lists them in another order), checked by :data:`ITEM_RULES`."""
    head = lines.filter(_PASSED_STAGE_1).select("_fi", "_line", "_file", "d.task_id")
    frame = items.join(head, on=["_fi", "_line"], how="inner", maintain_order="left")
    v = Values(frame.columns, ITEM_SPEC.fields, frame)
    frame = frame.with_columns(per_distinct(frame, v.stripped("rubric_item"), normalized_text).alias("d.text"),
                               v.boolean("criteria_met").alias("d.met"))
    expected = task_items.select(pl.col("task_id").alias("d.task_id"), pl.col("rubric_index").alias("_pos"),
                                 pl.col("rubric_text").alias("t.text"),
                                 per_distinct(task_items, pl.col("rubric_text"), normalized_text).alias("t.norm"))
    frame, reordered = _reordered(frame, expected)
    frame = frame.join(expected, on=["d.task_id", "_pos"], how="left", maintain_order="left")
    checked, keyed = check_table(frame, ITEM_RULES, kinds=ITEM_SPEC.fields, offset=len(LINE_RULES), sub="_pos")
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
        keyed.append(((fi, ROW, line, len(LINE_RULES), 0), RUBRIC_ORDER.problem(g["_file"][0], line, task=task)))
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
    frame = frame.with_columns(Values(frame.columns, LINE_SPEC.fields, frame).boolean("pass").alias("d.pass"))
    frame = frame.with_columns(((pl.col("d.n_met") == pl.col("t.n"))
                                & (pl.col("d.n_results") == pl.col("t.n"))).alias("d.all_met"))
    checked, keyed = check_table(frame, TASK_RULES, kinds=LINE_SPEC.fields, offset=len(LINE_RULES) + len(ITEM_RULES))
    return checked.with_columns((pl.col("_ok") & pl.col("line_ok") & ~pl.col("d.item_error")).alias("kept")), keyed


_LAST = len(LINE_RULES) + len(ITEM_RULES) + len(TASK_RULES)


def _repeated_tasks(judged: pl.DataFrame, items: pl.DataFrame) -> tuple[pl.DataFrame, list]:
    """A task judged on several lines of one run: the first line decides; a later one is a warning when
    its outcome is the same (``duplicate_identical``), else an error (``duplicate_conflict``)."""
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


def read_results(files: list[tuple[Path, str, int]], tasks: pl.DataFrame, task_items: pl.DataFrame,
                 progress=None) -> tuple[pl.DataFrame, pl.DataFrame, list, dict]:
    """``(tasks judged, rubric results, keyed problems, counts)`` of results files ``(path, name, run index)``
    read against the task table: one row per run x task, one per run x task x rubric item."""
    lines, items, keyed = _raw_frames([(p, rel) for p, rel, _ in files], progress)
    runs = pl.DataFrame({"_fi": list(range(len(files))), "_run": [r for _, _, r in files]},
                        schema={"_fi": pl.Int64, "_run": pl.Int64})
    lines = lines.join(runs, on="_fi", how="left", maintain_order="left")
    lines, found = _lines_checked(lines, tasks)
    items, found_items = _items_checked(items, lines, task_items)
    judged, found_tasks = _lines_judged(lines, items)
    kept, found_dup = _repeated_tasks(judged, items)
    keyed += found + found_items + found_tasks + found_dup
    identical = sum(1 for _, p in found_dup if p.code == "duplicate_identical")
    stats = {"lines": lines.height, "rejected_lines": lines.height - kept.height - identical,
             "duplicates_identical": identical}
    task_rows = kept.select("_run", pl.col("d.task_id").alias("task_id"), pl.col("t.axis").alias("axis"),
                            pl.col("t.n").alias("n_rubrics"), pl.col("d.n_met").alias("n_met"),
                            pl.col("d.all_met").alias("passed"),
                            (pl.col("d.n_met") / pl.col("t.n")).alias("share"), pl.col("d.failed").alias("pred_error"),
                            pl.col("_file").alias("source_file"), pl.col("_line").alias("source_line"),
                            Values(kept.columns, LINE_SPEC.fields, kept).boolean("synthetic").fill_null(False)
                            .alias("synthetic"))
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
