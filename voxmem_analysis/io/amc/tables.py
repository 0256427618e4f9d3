"""The tables of an Audio MultiChallenge release: where they are, their declarations and rule tables,
and the rules over several rows (a key seen before, incomplete rubric verdicts)."""
from __future__ import annotations

from pathlib import Path

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.engine import files, records
from voxmem_analysis.io.engine.records import Spec
from voxmem_analysis.io.engine.rules import (Rule, check, fact, flagged, one_of, parser_rules, required, shown,
                                             true_or_false, unicode_rule)
from voxmem_analysis.io.engine.values import Values, per_distinct

__all__ = ["AXES", "AXIS_LABELS", "AXIS_ALIASES", "INSTRUCTION_TYPES", "EDIT_TYPES", "MODALITIES", "VERDICT_COLUMNS",
           "TASK_RULES", "RUBRIC_RULES", "LENGTH_RULES", "verdict_rules", "spec", "table_suffix", "table_file",
           "part_files", "read_rows", "check_table", "repeated", "duplicates", "repeated_verdicts", "incomplete", "ROW", "flag",
           "derived", "values"]

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
#: Fields whose JSON value is a boolean.
FLAG_FIELDS = frozenset({"passed", "exclusion", "audio_cue", "interruption", "tts_subset"})
#: Extensions of a table file, in the order an ambiguity lists them (any letter case).
TABLE_SUFFIXES = (".jsonl", ".jsonl.gz", ".csv", ".csv.gz", ".parquet")
#: Phase of a row's problems in the sort key (a file's reading problems are phase 0).
ROW = 1

AMBIGUOUS = fact("ambiguous_file", "error", lambda r: "several files hold this table: " + ", ".join(r["names"]))
NOT_A_TABLE = fact("file_not_read", "warning", lambda r: "not read: only *.jsonl, *.csv (each may be .gz) and "
                   "*.parquet files are verdict tables")
EMPTY_FILE = fact("empty_file", "warning", lambda r: "file holds no verdicts")


def spec(fields) -> Spec:
    """How a table with ``fields`` is read."""
    return Spec({f: "bool" if f in FLAG_FIELDS else "str" for f in fields})


def values(frame: pl.DataFrame) -> Values:
    return Values(frame.columns, {f: "bool" for f in FLAG_FIELDS}, frame)


def flag(v: Values, f: str) -> pl.Expr:
    """A true/false value: a JSON boolean, the numbers 0/1, or the texts true/false/1/0 in any case."""
    return v.boolean(f, ("true", "1"), ("false", "0"), numbers=("int",))


def _required(f: str) -> Rule:
    return required(f, lambda v: v.missing(f))


def _boolean(f: str) -> Rule:
    return true_or_false(f, lambda v: ~v.missing(f) & flag(v, f).is_null(), code="not_boolean")


def _number(f: str, *, integer: bool, minimum: float) -> Rule:
    def bad(v: Values) -> pl.Expr:
        x = pl.col(f"d.num.{f}")
        wrong = ~x.is_finite() | (x < minimum)   # NaN, Infinity, 1e999: no duration or count
        if integer:
            wrong = wrong | (x != x.floor())
        return ~v.missing(f) & wrong.fill_null(True)
    kind = "a whole number" if integer else "a number"
    return Rule("invalid_field", "error", f, 2, bad, lambda r: f"`{f}` must be {kind} >= {minimum:g}, got {shown(r, f)!r}")


def _label(f: str, allowed) -> Rule:
    return one_of(f, lambda v: ~v.missing(f) & pl.col(f"d.{f}").is_null(), allowed)


def _modality() -> Rule:
    return Rule("unknown_label", "error", "output_modality", 2, lambda v: ~pl.col("d.output_modality").is_in(MODALITIES),
                lambda r: f"output_modality {shown(r, 'output_modality')!r} is not Text or Audio")


def _unknown_task(text: str) -> Rule:
    return Rule("unknown_task", "error", "task_id", 2, lambda v: ~pl.col("d.task_known"), lambda r: text.format(r["d.task_id"]))


_READING = (*parser_rules(), Rule("malformed_csv", "error", None, 0, lambda v: pl.col("_p0_code") == "malformed_csv",
                                   lambda r: r["_p0_msg"]), unicode_rule(0))

TASK_RULES: tuple[Rule, ...] = (
    *_READING, _required("task_id"), _required("axis"),
    Rule("unknown_axis", "error", "axis", 2, lambda v: pl.col("d.axis").is_null(),
         lambda r: f"axis {shown(r, 'axis')!r} is not one of {', '.join(AXES)} (or their full names)"),
    _boolean("audio_cue"), _boolean("interruption"), _boolean("tts_subset"),
    _number("user_audio_seconds", integer=False, minimum=0), _number("turns", integer=True, minimum=1),
    Rule("invalid_field", "error", "audio_cue", 2,
         lambda v: pl.col("d.axis").is_not_null() & (flag(v, "audio_cue") == True) & (pl.col("d.axis") != "IM"),  # noqa: E712
         lambda r: f"audio_cue is true on a {r['d.axis']} task; only Inference Memory (IM) tasks are audio-cue gated"),
)

RUBRIC_RULES: tuple[Rule, ...] = (
    *_READING, _required("rubric_id"), _required("task_id"),
    _unknown_task("rubric for task {!r}, which is not in the task table"),
    _label("instruction_type", INSTRUCTION_TYPES), _label("edit_type", EDIT_TYPES), _boolean("exclusion"),
)

LENGTH_RULES: tuple[Rule, ...] = (
    *_READING, *[_required(f) for f in LENGTH_FIELDS],
    _number("tokens", integer=False, minimum=0),
    _unknown_task("task {!r} is not in the task table"),
    _modality(),
)


def verdict_rules(extra: tuple = ()) -> tuple[Rule, ...]:
    """The rules of a verdict row (``extra``: further required fields, ``("judge",)`` for judge labels)."""
    return (
        *_READING, *[_required(f) for f in VERDICT_COLUMNS + tuple(extra)],
        _modality(),
        _unknown_task("task {!r} is not in the task table"),
        Rule("unknown_rubric", "error", "rubric_id", 2, lambda v: ~pl.col("d.rubric_known"),
             lambda r: f"rubric {r['d.rubric_id']!r} is not in the rubric table"),
        Rule("rubric_task_mismatch", "error", "rubric_id", 2,
             lambda v: pl.col("d.rubric_known") & pl.col("d.task_known") & (pl.col("d.owner") != pl.col("d.task_id")),
             lambda r: f"rubric {r['d.rubric_id']!r} belongs to task {r['d.owner']!r}, not {r['d.task_id']!r}"),
        _boolean("passed"),
    )


def _label_of(allowed):
    def fn(text: str):
        t = text.lower().replace("-", "_").replace(" ", "_")
        return t if t in allowed else None
    return fn


def derived(frame: pl.DataFrame, kind: str, *, tasks=(), rubrics: dict | None = None) -> pl.DataFrame:
    """``frame`` with the columns the rules of table ``kind`` read (``tasks``: the task ids known;
    ``rubrics``: rubric id -> its task)."""
    v = values(frame)
    if kind == "tasks":
        cols = [per_distinct(frame, v.stripped("axis").str.to_lowercase(), AXIS_ALIASES.get).alias("d.axis"),
                v.number("user_audio_seconds").alias("d.num.user_audio_seconds"),
                v.number("turns").alias("d.num.turns")]
    elif kind == "rubrics":
        cols = [per_distinct(frame, v.stripped(f), _label_of(allowed)).alias(f"d.{f}")
                for f, allowed in (("instruction_type", INSTRUCTION_TYPES), ("edit_type", EDIT_TYPES))]
    else:
        cols = [per_distinct(frame, v.stripped("output_modality"), str.capitalize).alias("d.output_modality")]
        if kind == "lengths":
            cols.append(v.number("tokens").alias("d.num.tokens"))
        else:
            rub = pl.DataFrame({"k": list(rubrics or {}), "v": list((rubrics or {}).values())},
                               schema={"k": pl.Utf8, "v": pl.Utf8})
            cols += [v.stripped("rubric_id").alias("d.rubric_id"),
                     v.stripped("rubric_id").is_in(rub["k"].implode()).alias("d.rubric_known"),
                     v.stripped("rubric_id").replace_strict(rub["k"], rub["v"], default=None, return_dtype=pl.Utf8)
                     .alias("d.owner")]
    cols += [v.stripped("task_id").alias("d.task_id"),
             v.stripped("task_id").is_in(pl.Series(list(tasks), dtype=pl.Utf8).implode()).alias("d.task_known")]
    return frame.with_columns(cols)


def table_suffix(name: str) -> str | None:
    """The table extension of a file name (any letter case), else None."""
    low = name.lower()
    return next((suf for suf in (".jsonl.gz", ".csv.gz", ".jsonl", ".csv", ".parquet") if low.endswith(suf)), None)


def table_file(root: Path, stem: str) -> tuple[Path | None, list[Problem]]:
    """The file holding table ``stem`` at the top of ``root`` (None when there is none or several)."""
    hits = [root / f"{stem}{e}" for e in TABLE_SUFFIXES if (root / f"{stem}{e}").is_file()]
    if len(hits) > 1:
        return None, [AMBIGUOUS.problem(hits[0].name, names=[h.name for h in hits])]
    return (hits[0] if hits else None), []


def part_files(root: Path, sub: str) -> tuple[list[Path], list[Problem]]:
    """The table files below ``root/sub`` (links followed, sorted by path) and what listing them found."""
    found = files.walk(root / sub, root)
    tables, other = found.split(lambda p: table_suffix(p.name) is not None)
    return tables, found.problems + [NOT_A_TABLE.problem(files.rel(p, root)) for p in other]


def _read_table(path: Path, rel: str, fields, fi: int) -> tuple[pl.DataFrame | None, list[Problem]]:
    """The raw frame of one table file and what reading it found (before its rows are checked)."""
    sp = spec(fields)
    if table_suffix(path.name) == ".parquet":
        frame, problems = records.parquet_frame(path, rel, sp)
    else:
        raw, problems = files.read_bytes(path, rel)
        frame = None
        if raw is not None:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                return None, [files.not_utf8(path, rel)]
            if table_suffix(path.name) in (".csv", ".csv.gz"):
                frame = records.csv_frame(text, rel, sp)
            else:
                frame = records.raw_frame([records.parse_file(records.FileRead(fi, rel, path, {}, [], raw), sp)], sp)[0]
    if frame is not None:
        frame = frame.with_columns(pl.lit(fi, dtype=pl.Int64).alias("_fi"), pl.lit(rel, dtype=pl.Utf8).alias("_file"))
    return frame, problems


def read_rows(tables: list[tuple[Path, str]], fields, rules, kind: str, **known) -> tuple[pl.DataFrame, list, int]:
    """Read ``(path, name shown)`` files and check their rows: ``(rows that passed, keyed problems, rows
    rejected)``; a file's reading problems come before its rows'."""
    keyed: list = []
    frames = []
    for fi, (path, rel) in enumerate(tables):
        frame, problems = _read_table(path, rel, fields, fi)
        keyed += [((fi, 0, 0, 0, n), p) for n, p in enumerate(problems)]
        if kind == "verdicts" and (frame is None or not frame.height) and not problems:
            keyed.append(((fi, 0, 0, 0, 0), EMPTY_FILE.problem(rel)))
        if frame is not None:
            frames.append(frame)
    raw = pl.concat(frames, how="diagonal_relaxed") if frames else None
    if raw is None or not raw.height:
        raw = pl.DataFrame(schema={"_fi": pl.Int64, "_file": pl.Utf8, "_line": pl.Int64, **spec(fields).schema()})
    raw = raw.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in (("_p0_code", pl.Utf8), ("_p0_msg", pl.Utf8),
                            ("_p0_field", pl.Utf8), ("_uni", pl.List(pl.Utf8))) if c not in raw.columns])
    frame, found = check_table(derived(raw, kind, **known), rules)
    ok = frame.filter(pl.col("_ok"))
    return ok, keyed + found, frame.height - ok.height


def check_table(frame: pl.DataFrame, rules: tuple[Rule, ...], *, kinds: dict | None = None, offset: int = 0,
                sub: str | None = None) -> tuple[pl.DataFrame, list]:
    """``(frame with _ok, keyed problems)``: the key is ``(file index, ROW, line, offset + rule, row[sub] or 0)``;
    ``kinds``: the fields' kinds (default: a release table's)."""
    frame = check(frame, rules, values(frame) if kinds is None else Values(frame.columns, kinds, frame))
    return frame, flagged(frame, rules, lambda r, i, n: (r["_fi"], ROW, r["_line"], offset + i, r[sub] if sub else 0))


def duplicates(frame: pl.DataFrame, key: list[str], rules: tuple[Rule, ...], rule_index: int,
               first: list[str]) -> tuple[pl.DataFrame, list]:
    """``(the rows first with their key, keyed problems)``: ``rules`` flag a row whose ``key`` an earlier
    row has (``_new`` false) and read the first row's columns ``first`` (as ``_first<column>``)."""
    frame = frame.with_columns(*[pl.col(c).first().over(key).alias(f"_first{c}") for c in first],
                               pl.struct(key).is_first_distinct().alias("_new"))
    frame = check(frame, rules, prefix="_dup")
    keyed = flagged(frame, rules, lambda r, i, n: (r["_fi"], ROW, r["_line"], rule_index, 0), prefix="_dup")
    helpers = [f"_first{c}" for c in first] + [f"_dup{i}" for i in range(len(rules))] + ["_new", "_ok"]
    return frame.filter(pl.col("_new")).drop(helpers), keyed


def repeated(frame: pl.DataFrame, key: list[str], shown_key: str, rule_index: int, message) -> tuple[pl.DataFrame, list]:
    """Rows whose ``key`` an earlier row has: ``duplicate_id`` errors naming the first line."""
    rule = Rule("duplicate_id", "error", shown_key, 1, lambda _: ~pl.col("_new"),
                lambda r: f"{shown_key} {message(r)!r} appears twice (first on line {r['_first_line']})")
    return duplicates(frame, key, (rule,), rule_index, ["_line"])


def repeated_verdicts(frame: pl.DataFrame, key: list[str], rule_index: int) -> tuple[pl.DataFrame, list]:
    """Verdicts for a rubric item already graded: a warning when the verdict is the same, an error when it
    differs; either way the first is kept."""
    same = pl.col("passed") == pl.col("_firstpassed")
    rules = (Rule("duplicate_identical", "warning", "rubric_id", 1, lambda _: ~pl.col("_new") & same,
                  lambda r: f"verdict repeated (first at {r['_first_file']}:{r['_first_line']}); kept once"),
             Rule("duplicate_conflict", "error", "passed", 1, lambda _: ~pl.col("_new") & ~same,
                  lambda r: f"a different verdict for the same rubric item is at {r['_first_file']}:{r['_first_line']}"))
    return duplicates(frame, key, rules, rule_index, ["_file", "_line", "passed"])


MISSING_RUBRICS = fact("missing_rubric_verdicts", "error", lambda r: f"{r['names']}: task {r['task_id']!r} has verdicts for "
                       f"{r['_n']} of its {r['_n'] + len(r['missing'])} rubric items; missing {r['listed']} (lenient mode "
                       "leaves this system's rows of the task out)", "rubric_id")
MISSING_TASKS = fact("missing_tasks", "error", lambda r: f"{r['names']} has no {r['what']} for {len(r['lacking'])} task(s), "
                     "e.g. " + ", ".join(r["lacking"][:5]), "task_id")


def incomplete(rows: pl.DataFrame, task_rubrics: dict[str, list[str]], expected: set, extra: tuple,
               what: str) -> tuple[pl.DataFrame, list[Problem]]:
    """Systems x tasks lacking a verdict for some rubric item of the task (left out), and systems lacking
    tasks of ``expected``: ``(rows kept, problems)``."""
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
        problems.append(MISSING_RUBRICS.problem(g["_at"]["_file"], g["_at"]["_line"], names=" / ".join(g[k] for k in system),
                                                missing=missing, listed=listed, **g))
    if expected:
        per = (groups.group_by(system, maintain_order=True)
               .agg(pl.col("task_id"), pl.col("_at").sort_by(pl.col("_at").struct.field("_file"),
                                                              pl.col("_at").struct.field("_line")).first())
               .with_columns(pl.col("task_id").list.set_intersection(list(expected)).list.len().alias("_have")))
        for s in per.filter(pl.col("_have") < len(expected)).iter_rows(named=True):
            lacking = sorted(expected - set(s["task_id"]))
            problems.append(MISSING_TASKS.problem(s["_at"]["_file"], None, len(lacking), what=what, lacking=lacking,
                                                  names=" / ".join(s[k] for k in system)))
    short = groups.filter(pl.col("_short")).select(*system, "task_id")
    kept = rows.join(short, on=[*system, "task_id"], how="anti", maintain_order="left") if short.height else rows
    return kept, problems
