"""Read an Audio MultiChallenge (AMC) release: rubric-level verdicts plus task and rubric tables.

An AMC release is a folder (format in ``data/README.md``, section "Audio MultiChallenge release")::

    release.json        {"benchmark": "audio-multichallenge", "synthetic": false, ...}
    tasks.<ext>         one row per task: task_id, axis, audio_cue, interruption, tts_subset,
                        user_audio_seconds, turns
    rubrics.<ext>       one row per rubric item: rubric_id, task_id, instruction_type, edit_type,
                        exclusion
    verdicts/**.<ext>   one row per model x output modality x rubric item: model,
                        output_modality, task_id, rubric_id, passed
    tts/**.<ext>        optional, same columns: verdicts on TTS re-synthesised user audio
    cascaded/**.<ext>   optional, same columns: ASR + LLM (cascaded) verdicts
    human_labels.<ext>  optional, same columns: the human grade of one judged response
    judge_labels.<ext>  optional, the same plus ``judge``: each LLM judge's grade of it
    response_lengths.<ext>  optional: model, output_modality, task_id, tokens

``<ext>`` is ``jsonl`` or ``csv`` (each optionally ``.gz``) or ``parquet``; folders are read with their
links followed (:mod:`voxmem_analysis.io.amc_tables`).  Every row is checked by the rule tables of
:mod:`voxmem_analysis.io.amc_rules` (one polars expression per rule); a problem names the file, the
line (JSON lines and CSV: the line in the file, the CSV header being line 1; Parquet: the 1-based
row) and the field.  Strict mode (default) raises :class:`~voxmem_analysis.errors.VoxMemDataError`
listing every error; lenient mode leaves the offending rows out -- and, for a task whose rubric
verdicts are incomplete, all of that system's rows for the task -- and counts them in
:attr:`AmcRelease.stats` and :attr:`AmcRelease.problems`.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import polars as pl

from voxmem_analysis.errors import Problem, VoxMemDataError
from voxmem_analysis.io import amc_rules as R
from voxmem_analysis.io import files as rf
from voxmem_analysis.io.amc_meta import BENCHMARK_ID, benchmark_problems, is_amc_release
from voxmem_analysis.io.amc_rules import (AXES, AXIS_LABELS, EDIT_TYPES, INSTRUCTION_TYPES, MODALITIES,
                                          VERDICT_COLUMNS)
from voxmem_analysis.io.amc_tables import UNREAD_LINE, empty_raw, part_files, read_table, table_file, table_suffix
from voxmem_analysis.io.amc_values import Cells, to_pandas
from voxmem_analysis.io.jsonl import decode
from voxmem_analysis.textlimits import read_regular
from voxmem_analysis.io.provenance import ReleaseProvenance

__all__ = [
    "AmcRelease", "load_amc", "is_amc_release", "AXES", "AXIS_LABELS", "INSTRUCTION_TYPES",
    "EDIT_TYPES", "MODALITIES", "BENCHMARK_ID", "VERDICT_COLUMNS", "read_rows",
]

_PARTS = ("verdicts", "tts", "cascaded")
#: Tables at the top of a release, and the files there that are read otherwise.
_TABLES = ("tasks", "rubrics", "human_labels", "judge_labels", "response_lengths")
_TASK_COLUMNS = ["task_id", "axis", "audio_cue", "interruption", "tts_subset", "user_audio_seconds", "turns", "_line"]
_RUBRIC_COLUMNS = ["rubric_id", "task_id", "instruction_type", "edit_type", "exclusion", "_line"]


# ----------------------------------------------------------------------------- reading and checking files
def read_rows(files: list[tuple[Path, str]], fields, rules, kind: str, **known) -> tuple[pl.DataFrame, list, int]:
    """Read ``(path, name shown)`` files, check their rows: ``(rows that passed, keyed problems, rows
    rejected)``; a file's reading problems come before its rows' (see :mod:`voxmem_analysis.io.amc_rules`).
    A line that gives no row (not JSON, not an object, not Unicode, a CSV row too long) is a rejected row."""
    keyed: list = []
    frames = []
    unread = 0
    for fi, (path, rel) in enumerate(files):
        raw, problems = read_table(path, rel, fields, fi)
        keyed += [((fi, 0, 0, 0, n), p) for n, p in enumerate(problems)]
        unread += len({p.line for p in problems if p.code in UNREAD_LINE})
        if kind == "verdicts" and not raw.height and not problems:
            keyed.append(((fi, 0, 0, 0, 0), Problem("empty_file", "warning", "file holds no verdicts", rel)))
        frames.append(raw)
    raw = pl.concat(frames, how="vertical") if frames else empty_raw(fields)
    frame, found = R.check(R.derived(raw, kind, **known), rules)
    ok = frame.filter(pl.col("_ok"))
    return ok, keyed + found, frame.height - ok.height + unread


def _sorted(keyed: list) -> list[Problem]:
    return [p for _, p in sorted(keyed, key=lambda kp: kp[0])]


def _keyed_table(root: Path, stem: str, kind: str, rows_of, key: list[str], shown_key: str, shown,
                 **known) -> tuple[pl.DataFrame | None, list[Problem], int, str]:
    """One top-level table: its rows that passed (a key seen before is an error), its problems, the
    rows left out, its file name (``stem`` when there is none).  ``rows_of`` makes the table's
    columns of the rows that passed; ``shown(row)`` is the key value a repetition shows."""
    path, problems = table_file(root, stem)
    if path is None:
        return None, problems or [Problem("missing_table", "error", f"no {stem}.jsonl/.csv/.parquet file", stem)], 0, stem
    fields, rules = {"tasks": (R.TASK_FIELDS, R.TASK_RULES), "rubrics": (R.RUBRIC_FIELDS, R.RUBRIC_RULES),
                     "lengths": (R.LENGTH_FIELDS, R.LENGTH_RULES)}[kind]
    ok, keyed, rejected = read_rows([(path, path.name)], fields, rules, kind, **known)
    rows, dup = R.repeated(rows_of(ok), key, shown_key, len(rules), shown)
    problems = _sorted(keyed + dup)
    if not ok.height and not rejected and not keyed:
        problems.append(Problem("empty_table", "error", "the table holds no rows", path.name))
    return rows, problems, rejected + len(dup), path.name


# ----------------------------------------------------------------------------- tasks / rubrics
def _task_rows(ok: pl.DataFrame) -> pl.DataFrame:
    c = Cells(ok)
    cue, inter, tts = (c.flag(f).fill_null(False) for f in ("audio_cue", "interruption", "tts_subset"))
    tts = pl.when(c.empty("tts_subset")).then(~(cue | inter)).otherwise(tts)
    number = {f: pl.when(c.empty(f)).then(None).otherwise(pl.col(f"d.num.{f}")) for f in ("user_audio_seconds", "turns")}
    return ok.select(pl.col("d.task_id").alias("task_id"), pl.col("d.axis").alias("axis"), cue.alias("audio_cue"),
                     inter.alias("interruption"), tts.alias("tts_subset"),
                     number["user_audio_seconds"].alias("user_audio_seconds"),
                     number["turns"].cast(pl.Int64).alias("turns"), "_line", "_fi", "_file")


def _rubric_rows(ok: pl.DataFrame) -> pl.DataFrame:
    c = Cells(ok)
    return ok.select(c.text("rubric_id").alias("rubric_id"), pl.col("d.task_id").alias("task_id"),
                     pl.col("d.instruction_type").alias("instruction_type"), pl.col("d.edit_type").alias("edit_type"),
                     c.flag("exclusion").fill_null(False).alias("exclusion"), "_line", "_fi", "_file")


def _records(frame: pl.DataFrame | None, columns: list[str]) -> pd.DataFrame:
    """A small table as pandas builds it from Python row values (the types the readers always gave)."""
    if frame is None or not frame.height:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame([dict(zip(columns, r)) for r in frame.select(columns).iter_rows()])


def _read_tables(root: Path, stats: dict) -> tuple[pd.DataFrame, pd.DataFrame, list[Problem]]:
    tasks, problems, stats["rejected_task_rows"], tname = _keyed_table(
        root, "tasks", "tasks", _task_rows, ["task_id"], "task_id", lambda r: r["task_id"])
    known = tasks["task_id"].to_list() if tasks is not None else []
    rubrics, found, stats["rejected_rubric_rows"], _ = _keyed_table(
        root, "rubrics", "rubrics", _rubric_rows, ["rubric_id"], "rubric_id", lambda r: r["rubric_id"], tasks=known)
    problems += found
    has = rubrics["task_id"].unique().to_list() if rubrics is not None else []
    if tasks is not None:
        for r in tasks.filter(~pl.col("task_id").is_in(has)).iter_rows(named=True):
            problems.append(Problem("task_without_rubrics", "error", f"task {r['task_id']!r} has no rubric item in the "
                                    "rubric table", tname, r["_line"], "task_id"))
    task_frame = _records(tasks, _TASK_COLUMNS)
    task_frame = task_frame[task_frame["task_id"].isin(set(has))]
    return (task_frame.drop(columns="_line").reset_index(drop=True),
            _records(rubrics, _RUBRIC_COLUMNS).drop(columns="_line").reset_index(drop=True), problems)


# ----------------------------------------------------------------------------- verdicts
def _verdict_rows(ok: pl.DataFrame, extra: tuple) -> pl.DataFrame:
    c = Cells(ok)
    return ok.select(*[c.text(f).alias(f) for f in extra], c.text("model").alias("model"),
                     pl.col("d.output_modality").alias("output_modality"), pl.col("d.task_id").alias("task_id"),
                     pl.col("d.rubric_id").alias("rubric_id"), c.flag("passed").alias("passed"), "_fi", "_file", "_line")


def _read_verdicts(root: Path, files: list[Path], tasks: pd.DataFrame, rubrics: pd.DataFrame, *, expected: set,
                   extra: tuple = (), what: str = "verdicts", stats: dict) -> tuple[pd.DataFrame, list[Problem]]:
    """The verdicts of ``files`` (one part): rows checked, repeated verdicts resolved, systems x tasks
    with incomplete rubric verdicts left out (see :func:`voxmem_analysis.io.amc_rules.incomplete`)."""
    owner = dict(zip(rubrics["rubric_id"], rubrics["task_id"])) if len(rubrics) else {}
    rules = R.verdict_rules(extra)
    named = [(p, rf.rel(p, root)) for p in files]
    ok, keyed, rejected = read_rows(named, VERDICT_COLUMNS + tuple(extra), rules, "verdicts",
                                    tasks=list(tasks["task_id"]), rubrics=owner)
    key = [*extra, "model", "output_modality", "rubric_id"]
    rows, dup = R.repeated_verdicts(_verdict_rows(ok, extra), key, len(rules))
    if files:
        stats["rejected_rows"] = stats.get("rejected_rows", 0) + rejected + len(dup)
    task_rubrics: dict[str, list[str]] = {}
    for rid, tid in owner.items():
        task_rubrics.setdefault(tid, []).append(rid)
    kept, found = R.incomplete(rows, task_rubrics, expected, tuple(extra), what)
    stats["incomplete_task_rows"] = stats.get("incomplete_task_rows", 0) + rows.height - kept.height
    cols = list(extra) + list(VERDICT_COLUMNS)
    if not kept.height:
        frame = pd.DataFrame({c: pd.Series(dtype=bool if c == "passed" else object) for c in cols})
    else:
        frame = to_pandas(kept.select(cols))
    return frame, _sorted(keyed + dup) + found


def _length_rows(ok: pl.DataFrame) -> pl.DataFrame:
    c = Cells(ok)
    return ok.select(c.text("model").alias("model"), pl.col("d.output_modality").alias("output_modality"),
                     pl.col("d.task_id").alias("task_id"), pl.col("d.num.tokens").alias("tokens"), "_fi", "_file", "_line")


def _read_lengths(root: Path, tasks: list, stats: dict) -> tuple[pd.DataFrame | None, list[Problem]]:
    path, problems = table_file(root, "response_lengths")
    if path is None:
        stats["rejected_length_rows"] = 0
        return None, problems
    rows, problems, stats["rejected_length_rows"], _ = _keyed_table(
        root, "response_lengths", "lengths", _length_rows, ["model", "output_modality", "task_id"], "_key",
        lambda r: (r["model"], r["output_modality"], r["task_id"]), tasks=tasks)
    return (_records(rows, ["model", "output_modality", "task_id", "tokens"]) if rows.height else None), problems


@dataclass
class AmcRelease(ReleaseProvenance):
    """Everything read from one Audio MultiChallenge release folder (see the module docstring)."""

    path: Path
    tasks: pd.DataFrame
    rubrics: pd.DataFrame
    verdicts: pd.DataFrame
    meta: dict = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    benchmark: str = "amc"
    # the optional parts (None: the release has none)
    tts: pd.DataFrame | None = None
    cascaded: pd.DataFrame | None = None
    human: pd.DataFrame | None = None
    judges: pd.DataFrame | None = None
    lengths: pd.DataFrame | None = None

    @property
    def synthetic(self) -> bool:
        return bool(self.meta.get("synthetic"))

    def systems(self, part: str = "verdicts") -> list[tuple[str, str]]:
        """``(model, output_modality)`` pairs of a verdict part, in order of first appearance."""
        df = getattr(self, part)
        if df is None or not len(df):
            return []
        return list(dict.fromkeys(zip(df["model"], df["output_modality"])))

    def frame(self, part: str = "verdicts") -> pd.DataFrame:
        """The rubric-level tidy frame of a verdict part with task and rubric attributes."""
        df = getattr(self, part)
        if df is None:
            raise VoxMemDataError([Problem("missing_part", "error", f"the release has no {part} part", part)])
        out = df.merge(self.tasks, on="task_id", how="left", validate="many_to_one")
        out = out.merge(self.rubrics.drop(columns="task_id"), on="rubric_id", how="left", validate="many_to_one")
        return out


def _read_meta(root: Path) -> tuple[dict, list[Problem]]:
    try:
        meta = json.loads(decode(read_regular(root / "release.json")))
    except OSError:
        return {}, [Problem("missing_table", "error", "no release.json", "release.json")]
    except (ValueError, RecursionError) as exc:
        return {}, [Problem("malformed_json", "error", f"release.json cannot be read: {exc}", "release.json")]
    if not isinstance(meta, dict):
        return {}, [Problem("invalid_field", "error", "release.json must hold a JSON object", "release.json")]
    problems = benchmark_problems(root)
    syn = meta.get("synthetic", False)
    if isinstance(syn, bool) or (isinstance(syn, int) and syn in (0, 1)):
        value = bool(syn)
    elif isinstance(syn, str) and syn.strip().lower() in ("true", "false", "1", "0"):
        value = syn.strip().lower() in ("true", "1")
    else:
        return meta, problems + [Problem("not_boolean", "error", f"synthetic must be true or false, got {syn!r}",
                                         "release.json", None, "synthetic")]
    meta["synthetic"] = value
    return meta, problems


def _unread_tables(root: Path) -> list[Problem]:
    """Table-like files at the top of the release that no table of the layout is named after."""
    out = []
    try:
        names = sorted(p.name for p in root.iterdir() if p.is_file())
    except OSError:
        return out
    for name in names:
        suf = table_suffix(name)
        if suf is not None and name[: -len(suf)] not in _TABLES:
            out.append(Problem("file_not_read", "warning", "not read: not a table of an Audio MultiChallenge release "
                               f"({', '.join(_TABLES)})", name))
    return out


def _read_optional(root: Path, tasks: pd.DataFrame, rubrics: pd.DataFrame, stats: dict) -> tuple[dict, list[Problem]]:
    out, problems = {}, []
    for part, expected in (("tts", set(tasks.loc[tasks["tts_subset"].astype(bool), "task_id"])),
                           ("cascaded", set(tasks["task_id"]))):
        files, listing = part_files(root, part)
        problems += listing
        if files:
            out[part], p = _read_verdicts(root, files, tasks, rubrics, expected=expected, stats=stats,
                                          what=f"{part} verdicts")
            problems += p
    for stem, extra in (("human_labels", ()), ("judge_labels", ("judge",))):
        path, p = table_file(root, stem)
        problems += p
        if path is not None:
            out[stem], p = _read_verdicts(root, [path], tasks, rubrics, expected=set(), extra=extra, stats=stats,
                                          what=stem)
            problems += p
    lengths, p = _read_lengths(root, list(tasks["task_id"]), stats)
    problems += p
    if lengths is not None:
        out["lengths"] = lengths
    return out, problems


def _check_judges(opt: dict, problems: list[Problem]) -> None:
    """Every judge label must grade a response that has a human label (the agreement pairs)."""
    human, judges = opt.get("human_labels"), opt.get("judge_labels")
    if judges is None or not len(judges):
        return
    if human is None:
        problems.append(Problem("missing_table", "error", "judge_labels needs human_labels to compare with",
                                "human_labels"))
        return
    keys = ["model", "output_modality", "task_id", "rubric_id"]
    merged = judges.merge(human[keys], on=keys, how="left", indicator=True)
    orphan = merged[merged["_merge"] == "left_only"]
    if len(orphan):
        problems.append(Problem("unpaired_label", "error", f"{len(orphan)} judge label(s) have no human label, "
                                f"e.g. {orphan.iloc[0]['judge']} on rubric {orphan.iloc[0]['rubric_id']!r}",
                                "judge_labels", None, "rubric_id", len(orphan)))


def load_amc(path, *, strict: bool = True, bulk: bool = True) -> AmcRelease:
    """Load an Audio MultiChallenge release folder into an :class:`AmcRelease`.

    ``strict=True`` raises :class:`VoxMemDataError` listing every error; ``strict=False`` leaves
    bad rows out and records each problem (with counts in ``stats``).  ``bulk`` is ignored: kept so
    that calls written for the former two readers (columnar and row by row) still work.
    """
    root = Path(path)
    if not root.is_dir():
        raise VoxMemDataError([Problem("no_release", "error", f"release directory {str(root)!r} does not exist")])
    stats: dict = {}
    meta, problems = _read_meta(root)
    problems += _unread_tables(root)
    tasks, rubrics, p = _read_tables(root, stats)
    problems += p
    files, listing = part_files(root, "verdicts")
    problems += listing
    if not files:
        problems.append(Problem("no_verdicts", "error", "no verdicts/*.jsonl|csv|parquet files found", "verdicts"))
    verdicts, p = _read_verdicts(root, files, tasks, rubrics, expected=set(tasks["task_id"]), stats=stats)
    problems += p
    opt, p = _read_optional(root, tasks, rubrics, stats)
    problems += p
    _check_judges(opt, problems)
    stats.update(tasks=len(tasks), rubrics=len(rubrics), verdict_rows=len(verdicts))
    release = AmcRelease(root, tasks, rubrics, verdicts, meta, problems, stats, tts=opt.get("tts"),
                         cascaded=opt.get("cascaded"), human=opt.get("human_labels"),
                         judges=opt.get("judge_labels"), lengths=opt.get("lengths"))
    if strict and release.errors():
        raise VoxMemDataError(problems, f"{len(release.errors())} error(s) in Audio MultiChallenge release {str(root)!r}")
    return release
