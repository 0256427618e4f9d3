"""The rules an Audio MultiChallenge release's rows must follow, each defined once as a polars expression.

Each table has its rule table (:data:`TASK_RULES`, :data:`RUBRIC_RULES`, :func:`verdict_rules`,
:data:`LENGTH_RULES`): one :class:`~voxmem_analysis.io.rules.Rule` per line -- code, severity, field,
stage, the expression flagging the rows that break it (given the frame's
:class:`~voxmem_analysis.io.amc_values.Cells`), and the message formatted from a flagged row (file,
line and field come from the row).  :func:`check` applies a table with the shared engine
(:mod:`voxmem_analysis.io.rules`) to the raw frame of its files (:mod:`voxmem_analysis.io.amc_tables`)
with the derived columns of :func:`derived` (readings that need Python, computed once per distinct
value).  Stage 1 (a required field missing or empty) stops the checks of a row; any error of stage 2
rejects the row.

The rules over several rows are here too, as expressions over the rows that passed: a key seen
before (:func:`repeated`, :func:`repeated_verdicts`: rule tables on the same engine), a system x
task lacking rubric verdicts and a system lacking tasks (:func:`incomplete`).  Problems carry a sort
key ``(file index, phase, line, rule, n)``: a file's reading problems (phase 0) before its rows'
(phase 1), rows in line order, a row's problems in table order, its repetition last.
"""
from __future__ import annotations

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io import rules as E
from voxmem_analysis.io.amc_values import Cells, per_distinct, py_float
from voxmem_analysis.io.rules import Rule, shown

__all__ = ["AXES", "AXIS_LABELS", "AXIS_ALIASES", "INSTRUCTION_TYPES", "EDIT_TYPES", "MODALITIES", "VERDICT_COLUMNS",
           "TASK_FIELDS", "RUBRIC_FIELDS", "LENGTH_FIELDS", "TASK_RULES", "RUBRIC_RULES", "LENGTH_RULES",
           "verdict_rules", "derived", "check", "duplicates", "repeated", "repeated_verdicts", "incomplete", "ROW"]

AXES = ("IM", "IR", "SC", "VE")
AXIS_LABELS = {"IM": "Inference Memory", "IR": "Instruction Retention", "SC": "Self Coherence",
               "VE": "Voice Editing"}
#: Axis spellings read as each axis (lower case): the letters and the paper's names.
AXIS_ALIASES = {**{a.lower(): a for a in AXES}, **{v.lower(): k for k, v in AXIS_LABELS.items()}}
INSTRUCTION_TYPES = ("fixed", "conditional")
EDIT_TYPES = ("mid_utterance", "prior_turn", "unedited")
MODALITIES = ("Text", "Audio")
VERDICT_COLUMNS = ("model", "output_modality", "task_id", "rubric_id", "passed")
TASK_FIELDS = ("task_id", "axis", "audio_cue", "interruption", "tts_subset", "user_audio_seconds", "turns")
RUBRIC_FIELDS = ("rubric_id", "task_id", "instruction_type", "edit_type", "exclusion")
LENGTH_FIELDS = ("model", "output_modality", "task_id", "tokens")
#: Phase of a row's problems in the sort key (a file's reading problems are phase 0).
ROW = 1


# ----------------------------------------------------------------------------- rule builders
def _required(f: str) -> Rule:
    return Rule("missing_field", "error", f, 1, lambda c: c.empty(f), lambda r: f"required field `{f}` is missing or empty")


def _boolean(f: str) -> Rule:
    return Rule("not_boolean", "error", f, 2, lambda c: ~c.empty(f) & c.flag(f).is_null(),
                lambda r: f"`{f}` must be true or false, got {shown(r, f)!r}")


def _number(f: str, *, integer: bool, minimum: float) -> Rule:
    def bad(c: Cells) -> pl.Expr:
        x = pl.col(f"d.num.{f}")
        wrong = ~x.is_finite() | (x < minimum)   # NaN, Infinity, 1e999: no duration or count (issue 24)
        if integer:
            wrong = wrong | (x != x.floor())
        return ~c.empty(f) & wrong.fill_null(True)
    kind = "a whole number" if integer else "a number"
    return Rule("invalid_field", "error", f, 2, bad, lambda r: f"`{f}` must be {kind} >= {minimum:g}, got {shown(r, f)!r}")


def _label(f: str, allowed) -> Rule:
    return Rule("unknown_label", "error", f, 2, lambda c: ~c.empty(f) & pl.col(f"d.{f}").is_null(),
                lambda r: f"`{f}` {shown(r, f)!r} is not one of {', '.join(allowed)}")


def _modality() -> Rule:
    return Rule("unknown_label", "error", "output_modality", 2, lambda c: ~pl.col("d.output_modality").is_in(MODALITIES),
                lambda r: f"output_modality {shown(r, 'output_modality')!r} is not Text or Audio")


def _unknown_task(text: str) -> Rule:
    return Rule("unknown_task", "error", "task_id", 2, lambda c: ~pl.col("d.task_known"),
                lambda r: text.format(r["d.task_id"]))


# ----------------------------------------------------------------------------- the rule tables
TASK_RULES: tuple[Rule, ...] = (
    _required("task_id"), _required("axis"),
    Rule("unknown_axis", "error", "axis", 2, lambda c: pl.col("d.axis").is_null(),
         lambda r: f"axis {shown(r, 'axis')!r} is not one of {', '.join(AXES)} (or their full names)"),
    _boolean("audio_cue"), _boolean("interruption"), _boolean("tts_subset"),
    _number("user_audio_seconds", integer=False, minimum=0), _number("turns", integer=True, minimum=1),
    Rule("invalid_field", "error", "audio_cue", 2,
         lambda c: pl.col("d.axis").is_not_null() & (c.flag("audio_cue") == True) & (pl.col("d.axis") != "IM"),  # noqa: E712
         lambda r: f"audio_cue is true on a {r['d.axis']} task; only Inference Memory (IM) tasks are audio-cue gated"),
)

RUBRIC_RULES: tuple[Rule, ...] = (
    _required("rubric_id"), _required("task_id"),
    _unknown_task("rubric for task {!r}, which is not in the task table"),
    _label("instruction_type", INSTRUCTION_TYPES), _label("edit_type", EDIT_TYPES), _boolean("exclusion"),
)

LENGTH_RULES: tuple[Rule, ...] = (
    *[_required(f) for f in LENGTH_FIELDS],
    _number("tokens", integer=False, minimum=0),
    _unknown_task("task {!r} is not in the task table"),
    _modality(),
)


def verdict_rules(extra: tuple = ()) -> tuple[Rule, ...]:
    """The rules of a verdict row (``extra``: further required fields, ``("judge",)`` for judge labels)."""
    return (
        *[_required(f) for f in VERDICT_COLUMNS + tuple(extra)],
        _modality(),
        _unknown_task("task {!r} is not in the task table"),
        Rule("unknown_rubric", "error", "rubric_id", 2, lambda c: ~pl.col("d.rubric_known"),
             lambda r: f"rubric {r['d.rubric_id']!r} is not in the rubric table"),
        Rule("rubric_task_mismatch", "error", "rubric_id", 2,
             lambda c: pl.col("d.rubric_known") & pl.col("d.task_known") & (pl.col("d.owner") != pl.col("d.task_id")),
             lambda r: f"rubric {r['d.rubric_id']!r} belongs to task {r['d.owner']!r}, not {r['d.task_id']!r}"),
        _boolean("passed"),
    )


# ----------------------------------------------------------------------------- derived columns
def _label_of(allowed):
    def fn(text: str):
        t = text.lower().replace("-", "_").replace(" ", "_")
        return t if t in allowed else None
    return fn


def _capitalized(text: str) -> str:
    return text.capitalize()


def _number_of(frame: pl.DataFrame, c: Cells, f: str) -> pl.Expr:
    """Python's ``float`` of a value (NaN for a boolean, a list, a text that is no number)."""
    readable = c.type(f).is_in(["str", "int", "float"])
    return pl.when(readable).then(per_distinct(frame, c.raw(f), py_float, pl.Float64)).otherwise(float("nan"))


def derived(frame: pl.DataFrame, kind: str, *, tasks=(), rubrics: dict | None = None) -> pl.DataFrame:
    """``frame`` with the columns the rules of table ``kind`` read (``tasks``: the task ids known;
    ``rubrics``: rubric id -> its task)."""
    c = Cells(frame)
    cols: list[pl.Expr] = []
    if kind == "tasks":
        cols = [per_distinct(frame, c.text("axis").str.to_lowercase(), AXIS_ALIASES.get).alias("d.axis"),
                _number_of(frame, c, "user_audio_seconds").alias("d.num.user_audio_seconds"),
                _number_of(frame, c, "turns").alias("d.num.turns")]
    elif kind == "rubrics":
        cols = [per_distinct(frame, c.text(f), _label_of(allowed)).alias(f"d.{f}")
                for f, allowed in (("instruction_type", INSTRUCTION_TYPES), ("edit_type", EDIT_TYPES))]
    else:
        cols = [per_distinct(frame, c.text("output_modality"), _capitalized).alias("d.output_modality")]
        if kind == "lengths":
            cols.append(_number_of(frame, c, "tokens").alias("d.num.tokens"))
        else:
            rub = pl.DataFrame({"k": list(rubrics or {}), "v": list((rubrics or {}).values())},
                               schema={"k": pl.Utf8, "v": pl.Utf8})
            cols += [c.text("rubric_id").alias("d.rubric_id"),
                     c.text("rubric_id").is_in(rub["k"].implode()).alias("d.rubric_known"),
                     c.text("rubric_id").replace_strict(rub["k"], rub["v"], default=None, return_dtype=pl.Utf8)
                     .alias("d.owner")]
    cols += [c.text("task_id").alias("d.task_id"),
             c.text("task_id").is_in(pl.Series(list(tasks), dtype=pl.Utf8).implode()).alias("d.task_known")]
    return frame.with_columns(cols)


# ----------------------------------------------------------------------------- checking
def check(frame: pl.DataFrame, rules: tuple[Rule, ...], *, offset: int = 0, sub: str | None = None) -> tuple[pl.DataFrame, list]:
    """``(frame with _ok = the row passed, keyed problems)`` of a raw frame with its derived columns.

    A problem's sort key is ``(file index, ROW, line, offset + rule, row[sub] or 0)`` (``sub``: a column
    ordering several rows of one line, such as the rubric results of a judged task)."""
    frame = E.check(frame, rules, Cells(frame))
    return frame, E.flagged(frame, rules, lambda r, i, n: (r["_fi"], ROW, r["_line"], offset + i, r[sub] if sub else 0))


def duplicates(frame: pl.DataFrame, key: list[str], rules: tuple[Rule, ...], rule_index: int,
                first: list[str]) -> tuple[pl.DataFrame, list]:
    """``(the rows first with their key, keyed problems)``: ``rules`` flag a row whose ``key`` an earlier
    row has (``_new`` false) and read the first row's columns ``first`` (as ``_first<column>``)."""
    frame = frame.with_columns(*[pl.col(c).first().over(key).alias(f"_first{c}") for c in first],
                               pl.struct(key).is_first_distinct().alias("_new"))
    frame = E.check(frame, rules, prefix="_dup")
    keyed = E.flagged(frame, rules, lambda r, i, n: (r["_fi"], ROW, r["_line"], rule_index, 0), prefix="_dup")
    helpers = [f"_first{c}" for c in first] + [f"_dup{i}" for i in range(len(rules))] + ["_new", "_ok"]
    return frame.filter(pl.col("_new")).drop(helpers), keyed


def repeated(frame: pl.DataFrame, key: list[str], shown_key: str, rule_index: int, message) -> tuple[pl.DataFrame, list]:
    """Rows (that passed) whose ``key`` an earlier such row has: ``duplicate_id`` errors naming the first
    line; ``(frame without them, keyed problems)``.  ``message(row)`` formats the value shown."""
    rule = Rule("duplicate_id", "error", shown_key, 1, lambda _: ~pl.col("_new"),
                lambda r: f"{shown_key} {message(r)!r} appears twice (first on line {r['_first_line']})")
    return duplicates(frame, key, (rule,), rule_index, ["_line"])


def repeated_verdicts(frame: pl.DataFrame, key: list[str], rule_index: int) -> tuple[pl.DataFrame, list]:
    """Verdicts (that passed, in file and line order) for a rubric item already graded: a warning when
    the verdict is the same, an error when it differs; either way the first is kept."""
    same = pl.col("passed") == pl.col("_firstpassed")
    rules = (Rule("duplicate_identical", "warning", "rubric_id", 1, lambda _: ~pl.col("_new") & same,
                  lambda r: f"verdict repeated (first at {r['_first_file']}:{r['_first_line']}); kept once"),
             Rule("duplicate_conflict", "error", "passed", 1, lambda _: ~pl.col("_new") & ~same,
                  lambda r: f"a different verdict for the same rubric item is at {r['_first_file']}:{r['_first_line']}"))
    return duplicates(frame, key, rules, rule_index, ["_file", "_line", "passed"])


def incomplete(rows: pl.DataFrame, task_rubrics: dict[str, list[str]], expected: set, extra: tuple,
               what: str) -> tuple[pl.DataFrame, list[Problem]]:
    """Systems x tasks lacking a verdict for some rubric item of the task (``missing_rubric_verdicts``:
    left out), and systems lacking tasks of ``expected`` (``missing_tasks``); ``(rows kept, problems)``.

    The flags are expressions over the groups (verdicts counted against the task's rubric items,
    tasks counted against the expected ones); only flagged groups are described."""
    system = [*extra, "model", "output_modality"]
    need = pl.DataFrame({"task_id": list(task_rubrics), "_need": [len(v) for v in task_rubrics.values()]},
                        schema={"task_id": pl.Utf8, "_need": pl.Int64})
    groups = (rows.with_row_index("_i").group_by([*system, "task_id"], maintain_order=True)
              .agg(pl.len().alias("_n"), pl.col("rubric_id"), pl.struct("_file", "_line").sort_by("_file", "_line").first()
                   .alias("_at"))
              .join(need, on="task_id", how="left", maintain_order="left")
              .with_columns((pl.col("_n") < pl.col("_need").fill_null(0)).alias("_short")))
    problems = []
    for g in groups.filter(pl.col("_short")).iter_rows(named=True):
        missing = sorted(set(task_rubrics.get(g["task_id"], ())) - set(g["rubric_id"]))
        listed = ", ".join(missing[:5]) + (f" ... ({len(missing)} in all)" if len(missing) > 5 else "")
        names = " / ".join(g[k] for k in system)
        problems.append(Problem("missing_rubric_verdicts", "error",
                                f"{names}: task {g['task_id']!r} has verdicts for {g['_n']} of its {g['_n'] + len(missing)} "
                                f"rubric items; missing {listed} (lenient mode leaves this system's rows of the task out)",
                                g["_at"]["_file"], g["_at"]["_line"], "rubric_id"))
    if expected:
        per = (groups.group_by(system, maintain_order=True)
               .agg(pl.col("task_id"), pl.col("_at").sort_by(pl.col("_at").struct.field("_file"),
                                                              pl.col("_at").struct.field("_line")).first())
               .with_columns(pl.col("task_id").list.set_intersection(list(expected)).list.len().alias("_have")))
        for s in per.filter(pl.col("_have") < len(expected)).iter_rows(named=True):
            lacking = sorted(expected - set(s["task_id"]))
            problems.append(Problem("missing_tasks", "error", f"{' / '.join(s[k] for k in system)} has no {what} for "
                                    f"{len(lacking)} task(s), e.g. " + ", ".join(lacking[:5]), s["_at"]["_file"], None,
                                    "task_id", len(lacking)))
    short = groups.filter(pl.col("_short")).select(*system, "task_id")
    kept = rows.join(short, on=[*system, "task_id"], how="anti", maintain_order="left") if short.height else rows
    return kept, problems
