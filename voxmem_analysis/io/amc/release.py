"""An Audio MultiChallenge release folder: task and rubric tables, rubric-level verdicts and the optional
parts.  Lenient mode leaves out the offending rows (and a system's task with incomplete rubric verdicts)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from voxmem_analysis.errors import Problem, VoxMemDataError
from voxmem_analysis.io.amc.tables import (LENGTH_FIELDS, RUBRIC_FIELDS, RUBRIC_RULES, TASK_FIELDS, TASK_RULES,
                                           LENGTH_RULES, VERDICT_COLUMNS, flag, incomplete, part_files, read_rows,
                                           repeated, repeated_verdicts, table_file, table_suffix, values, verdict_rules)
from voxmem_analysis.io.engine import files
from voxmem_analysis.io.engine.rules import fact, ordered
from voxmem_analysis.io.meta import read_meta
from voxmem_analysis.io.provenance import ReleaseProvenance

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AmcRelease", "load_amc", "to_pandas"]

#: Tables at the top of a release.
_TABLES = ("tasks", "rubrics", "human_labels", "judge_labels", "response_lengths")
_TASK_COLUMNS = ["task_id", "axis", "audio_cue", "interruption", "tts_subset", "user_audio_seconds", "turns", "_line"]
_RUBRIC_COLUMNS = ["rubric_id", "task_id", "instruction_type", "edit_type", "exclusion", "_line"]

MISSING_TABLE = fact("missing_table", "error", lambda r: r["why"])
EMPTY_TABLE = fact("empty_table", "error", lambda r: "the table holds no rows")
NO_RUBRICS = fact("task_without_rubrics", "error", lambda r: f"task {r['task_id']!r} has no rubric item in the rubric "
                  "table", "task_id")
NO_VERDICTS = fact("no_verdicts", "error", lambda r: "no verdicts/*.jsonl|csv|parquet files found")
NOT_A_TABLE = fact("file_not_read", "warning", lambda r: "not read: not a table of an Audio MultiChallenge release "
                   f"({', '.join(_TABLES)})")
UNPAIRED = fact("unpaired_label", "error", lambda r: f"{r['n']} judge label(s) have no human label, e.g. {r['judge']} on "
                f"rubric {r['rubric_id']!r}", "rubric_id")
MISSING_PART = fact("missing_part", "error", lambda r: f"the release has no {r['part']} part")
_ARROW_SAME: list[bool] = []


def to_pandas(frame: pl.DataFrame) -> pd.DataFrame:
    """``pd.DataFrame`` of ``frame``'s rows as pandas builds it from Python row values (through Arrow when
    this pandas gives text and boolean columns the same types that way, checked once)."""
    import pandas as pd

    if not _ARROW_SAME:
        probe = pl.DataFrame({"a": ["x"], "b": [True], "c": [1.5]})
        _ARROW_SAME.append(probe.to_pandas().dtypes.to_dict() == pd.DataFrame([probe.row(0, named=True)]).dtypes.to_dict())
    if _ARROW_SAME[0]:
        return frame.to_pandas()
    return pd.DataFrame({c: frame[c].to_list() for c in frame.columns})


def _records(frame: pl.DataFrame | None, columns: list[str]) -> pd.DataFrame:
    """A small table as pandas builds it from Python row values (the types the readers always gave)."""
    import pandas as pd

    if frame is None or not frame.height:
        return pd.DataFrame(columns=columns)
    return pd.DataFrame([dict(zip(columns, r)) for r in frame.select(columns).iter_rows()])


def _task_rows(ok: pl.DataFrame) -> pl.DataFrame:
    v = values(ok)
    cue, inter, tts = (flag(v, f).fill_null(False) for f in ("audio_cue", "interruption", "tts_subset"))
    tts = pl.when(v.missing("tts_subset")).then(~(cue | inter)).otherwise(tts)
    number = {f: pl.when(v.missing(f)).then(None).otherwise(pl.col(f"d.num.{f}")) for f in ("user_audio_seconds", "turns")}
    return ok.select(pl.col("d.task_id").alias("task_id"), pl.col("d.axis").alias("axis"), cue.alias("audio_cue"),
                     inter.alias("interruption"), tts.alias("tts_subset"),
                     number["user_audio_seconds"].alias("user_audio_seconds"),
                     number["turns"].cast(pl.Int64).alias("turns"), "_line", "_fi", "_file")


def _rubric_rows(ok: pl.DataFrame) -> pl.DataFrame:
    v = values(ok)
    return ok.select(v.stripped("rubric_id").alias("rubric_id"), pl.col("d.task_id").alias("task_id"),
                     pl.col("d.instruction_type").alias("instruction_type"), pl.col("d.edit_type").alias("edit_type"),
                     flag(v, "exclusion").fill_null(False).alias("exclusion"), "_line", "_fi", "_file")


def _length_rows(ok: pl.DataFrame) -> pl.DataFrame:
    v = values(ok)
    return ok.select(v.stripped("model").alias("model"), pl.col("d.output_modality").alias("output_modality"),
                     pl.col("d.task_id").alias("task_id"), pl.col("d.num.tokens").alias("tokens"), "_fi", "_file", "_line")


_KINDS = {"tasks": (TASK_FIELDS, TASK_RULES, _task_rows), "rubrics": (RUBRIC_FIELDS, RUBRIC_RULES, _rubric_rows),
          "lengths": (LENGTH_FIELDS, LENGTH_RULES, _length_rows)}


def _keyed_table(root: Path, stem: str, kind: str, key: list[str], shown_key: str, shown, optional: bool = False,
                 **known) -> tuple[pl.DataFrame | None, list[Problem], int, str]:
    """One top-level table: its rows that passed (a key seen before is an error), its problems, the rows
    left out, its file name (``stem`` when there is none; ``optional``: no table is no problem)."""
    path, problems = table_file(root, stem)
    if path is None:
        missing = [] if optional else [MISSING_TABLE.problem(stem, why=f"no {stem}.jsonl/.csv/.parquet file")]
        return None, problems or missing, 0, stem
    fields, rules, rows_of = _KINDS[kind]
    ok, keyed, rejected = read_rows([(path, path.name)], fields, rules, kind, **known)
    rows, dup = repeated(rows_of(ok), key, shown_key, len(rules), shown)
    problems = ordered(keyed + dup)
    if not ok.height and not rejected and not keyed:
        problems.append(EMPTY_TABLE.problem(path.name))
    return rows, problems, rejected + len(dup), path.name


def _read_tables(root: Path, stats: dict) -> tuple[pd.DataFrame, pd.DataFrame, list[Problem]]:
    tasks, problems, stats["rejected_task_rows"], tname = _keyed_table(
        root, "tasks", "tasks", ["task_id"], "task_id", lambda r: r["task_id"])
    known = tasks["task_id"].to_list() if tasks is not None else []
    rubrics, found, stats["rejected_rubric_rows"], _ = _keyed_table(
        root, "rubrics", "rubrics", ["rubric_id"], "rubric_id", lambda r: r["rubric_id"], tasks=known)
    problems += found
    has = rubrics["task_id"].unique().to_list() if rubrics is not None else []
    if tasks is not None:
        problems += [NO_RUBRICS.problem(tname, r["_line"], **r) for r in tasks.filter(~pl.col("task_id").is_in(has))
                     .iter_rows(named=True)]
    task_frame = _records(tasks, _TASK_COLUMNS)
    task_frame = task_frame[task_frame["task_id"].isin(set(has))]
    return (task_frame.drop(columns="_line").reset_index(drop=True),
            _records(rubrics, _RUBRIC_COLUMNS).drop(columns="_line").reset_index(drop=True), problems)


def _verdict_rows(ok: pl.DataFrame, extra: tuple) -> pl.DataFrame:
    v = values(ok)
    return ok.select(*[v.stripped(f).alias(f) for f in extra], v.stripped("model").alias("model"),
                     pl.col("d.output_modality").alias("output_modality"), pl.col("d.task_id").alias("task_id"),
                     pl.col("d.rubric_id").alias("rubric_id"), flag(v, "passed").alias("passed"), "_fi", "_file", "_line")


def _read_verdicts(root: Path, paths: list[Path], tasks: pd.DataFrame, rubrics: pd.DataFrame, *, expected: set,
                   extra: tuple = (), what: str = "verdicts", stats: dict) -> tuple[pd.DataFrame, list[Problem]]:
    """The verdicts of ``paths`` (one part): rows checked, repeated verdicts resolved, systems x tasks with
    incomplete rubric verdicts left out."""
    import pandas as pd

    owner = dict(zip(rubrics["rubric_id"], rubrics["task_id"])) if len(rubrics) else {}
    rules = verdict_rules(extra)
    ok, keyed, rejected = read_rows([(p, files.rel(p, root)) for p in paths], VERDICT_COLUMNS + tuple(extra), rules,
                                    "verdicts", tasks=list(tasks["task_id"]), rubrics=owner)
    rows, dup = repeated_verdicts(_verdict_rows(ok, extra), [*extra, "model", "output_modality", "rubric_id"], len(rules))
    if paths:
        stats["rejected_rows"] = stats.get("rejected_rows", 0) + rejected + len(dup)
    task_rubrics: dict[str, list[str]] = {}
    for rid, tid in owner.items():
        task_rubrics.setdefault(tid, []).append(rid)
    kept, found = incomplete(rows, task_rubrics, expected, tuple(extra), what)
    stats["incomplete_task_rows"] = stats.get("incomplete_task_rows", 0) + rows.height - kept.height
    cols = list(extra) + list(VERDICT_COLUMNS)
    if not kept.height:
        frame = pd.DataFrame({c: pd.Series(dtype=bool if c == "passed" else object) for c in cols})
    else:
        frame = to_pandas(kept.select(cols))
    return frame, ordered(keyed + dup) + found


def _read_lengths(root: Path, tasks: list, stats: dict) -> tuple[pd.DataFrame | None, list[Problem]]:
    rows, problems, stats["rejected_length_rows"], _ = _keyed_table(
        root, "response_lengths", "lengths", ["model", "output_modality", "task_id"], "_key",
        lambda r: (r["model"], r["output_modality"], r["task_id"]), optional=True, tasks=tasks)
    return (_records(rows, ["model", "output_modality", "task_id", "tokens"]) if rows is not None and rows.height
            else None), problems


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
            raise VoxMemDataError([MISSING_PART.problem(part, part=part)])
        out = df.merge(self.tasks, on="task_id", how="left", validate="many_to_one")
        return out.merge(self.rubrics.drop(columns="task_id"), on="rubric_id", how="left", validate="many_to_one")


def _unread_tables(root: Path) -> list[Problem]:
    """Table-like files at the top of the release that no table of the layout is named after."""
    try:
        names = sorted(p.name for p in root.iterdir() if p.is_file())
    except OSError:
        return []
    return [NOT_A_TABLE.problem(n) for n in names if table_suffix(n) is not None and n[: -len(table_suffix(n))] not in _TABLES]


def _read_optional(root: Path, tasks: pd.DataFrame, rubrics: pd.DataFrame, stats: dict) -> tuple[dict, list[Problem]]:
    out, problems = {}, []
    for part, expected in (("tts", set(tasks.loc[tasks["tts_subset"].astype(bool), "task_id"])),
                           ("cascaded", set(tasks["task_id"]))):
        paths, listing = part_files(root, part)
        problems += listing
        if paths:
            out[part], p = _read_verdicts(root, paths, tasks, rubrics, expected=expected, stats=stats,
                                          what=f"{part} verdicts")
            problems += p
    for stem, extra in (("human_labels", ()), ("judge_labels", ("judge",))):
        path, p = table_file(root, stem)
        problems += p
        if path is not None:
            out[stem], p = _read_verdicts(root, [path], tasks, rubrics, expected=set(), extra=extra, stats=stats, what=stem)
            problems += p
    lengths, p = _read_lengths(root, list(tasks["task_id"]), stats)
    problems += p
    if lengths is not None:
        out["lengths"] = lengths
    return out, problems


def _check_judges(opt: dict) -> list[Problem]:
    """Every judge label must grade a response that has a human label (the agreement pairs)."""
    human, judges = opt.get("human_labels"), opt.get("judge_labels")
    if judges is None or not len(judges):
        return []
    if human is None:
        return [MISSING_TABLE.problem("human_labels", why="judge_labels needs human_labels to compare with")]
    keys = ["model", "output_modality", "task_id", "rubric_id"]
    merged = judges.merge(human[keys], on=keys, how="left", indicator=True)
    orphan = merged[merged["_merge"] == "left_only"]
    if not len(orphan):
        return []
    return [UNPAIRED.problem("judge_labels", None, len(orphan), n=len(orphan), judge=orphan.iloc[0]["judge"],
                             rubric_id=orphan.iloc[0]["rubric_id"])]


def load_amc(path, *, strict: bool = True, progress=None) -> AmcRelease:
    """Load an Audio MultiChallenge release folder.  ``strict``: raise listing every error, else leave bad rows
    out (counted in ``stats``); ``progress(done, total)`` as parts are read."""
    root = Path(path)
    bad = files.user_path_problem(root, "no_release", "release directory", folder=True)
    if bad is not None:
        raise VoxMemDataError([bad])
    stats: dict = {}
    meta, problems = read_meta(root, required=True)
    problems += _unread_tables(root)
    tasks, rubrics, p = _read_tables(root, stats)
    problems += p
    paths, listing = part_files(root, "verdicts")
    problems += listing
    if not paths:
        problems.append(NO_VERDICTS.problem("verdicts"))
    if progress is not None:
        progress(1, 2)
    verdicts, p = _read_verdicts(root, paths, tasks, rubrics, expected=set(tasks["task_id"]), stats=stats)
    problems += p
    opt, p = _read_optional(root, tasks, rubrics, stats)
    problems += p + _check_judges(opt)
    if progress is not None:
        progress(2, 2)
    stats.update(tasks=len(tasks), rubrics=len(rubrics), verdict_rows=len(verdicts))
    release = AmcRelease(root, tasks, rubrics, verdicts, meta, problems, stats, tts=opt.get("tts"),
                         cascaded=opt.get("cascaded"), human=opt.get("human_labels"),
                         judges=opt.get("judge_labels"), lengths=opt.get("lengths"))
    if strict and release.errors():
        raise VoxMemDataError(problems, f"{len(release.errors())} error(s) in Audio MultiChallenge release {str(root)!r}")
    return release
