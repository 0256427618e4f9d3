"""Read an Audio MultiChallenge (AMC) release: rubric-level verdicts plus task and rubric tables.

An AMC release is a folder (format in ``data/README.md``, section "Audio MultiChallenge release")::

    release.json        {"benchmark": "audio-multichallenge", "synthetic": false, ...}
    tasks.<ext>         one row per task: task_id, axis, audio_cue, interruption, tts_subset,
                        user_audio_seconds, turns
    rubrics.<ext>       one row per rubric item: rubric_id, task_id, instruction_type, edit_type,
                        exclusion
    verdicts/*.<ext>    one row per model x output modality x rubric item: model,
                        output_modality, task_id, rubric_id, passed
    tts/*.<ext>         optional, same columns: verdicts on TTS re-synthesised user audio
    cascaded/*.<ext>    optional, same columns: ASR + LLM (cascaded) verdicts
    human_labels.<ext>  optional, same columns: the human grade of one judged response
    judge_labels.<ext>  optional, the same plus ``judge``: each LLM judge's grade of it
    response_lengths.<ext>  optional: model, output_modality, task_id, tokens

``<ext>`` is ``jsonl`` (``.jsonl.gz``), ``csv`` or ``parquet``.  Every row is validated; a
problem names the file, the line (JSON lines and CSV: the line in the file, the CSV header
being line 1; Parquet: the 1-based row) and the field.  Strict mode (default) raises
:class:`~voxmem_analysis.errors.VoxMemDataError` listing every error; lenient mode leaves the
offending rows out -- and, for a task whose rubric verdicts are incomplete, all of that
system's rows for the task -- and counts them in :attr:`AmcRelease.stats` and
:attr:`AmcRelease.problems`.

Files whose rows are all plain (the usual case) are read and checked by whole columns (section
"columnar path" below, about 4x faster on data/synthetic-amc); any other file is read row by
row.  ``load_amc(..., bulk=False)`` reads every file row by row; both give the same frames and
problems (``tests/test_bulk_parts.py``).
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import polars as pl

from voxmem_analysis.errors import Problem, VoxMemDataError
from voxmem_analysis.io.amc_values import as_bool as _bool
from voxmem_analysis.io.amc_values import empty as _empty
from voxmem_analysis.io.amc_values import mapped as _mapped
from voxmem_analysis.io.amc_values import plain_csv as _plain_csv
from voxmem_analysis.io.amc_values import record_cell as _record_cell
from voxmem_analysis.io.amc_values import text as _text
from voxmem_analysis.io.amc_values import to_pandas as _to_pandas
from voxmem_analysis.io.jsonl import decode, iter_lines, not_unicode, parse_object
from voxmem_analysis.io.provenance import ReleaseProvenance
from voxmem_analysis.io.textlimits import allow_large_csv_fields, read_regular

__all__ = [
    "AmcRelease", "load_amc", "is_amc_release", "AXES", "AXIS_LABELS", "INSTRUCTION_TYPES",
    "EDIT_TYPES", "MODALITIES", "BENCHMARK_ID", "VERDICT_COLUMNS",
]

BENCHMARK_ID = "audio-multichallenge"
AXES = ("IM", "IR", "SC", "VE")
AXIS_LABELS = {"IM": "Inference Memory", "IR": "Instruction Retention", "SC": "Self Coherence",
               "VE": "Voice Editing"}
INSTRUCTION_TYPES = ("fixed", "conditional")
EDIT_TYPES = ("mid_utterance", "prior_turn", "unedited")
MODALITIES = ("Text", "Audio")
VERDICT_COLUMNS = ("model", "output_modality", "task_id", "rubric_id", "passed")
_EXTS = (".jsonl", ".jsonl.gz", ".csv", ".parquet")
_AXIS_ALIASES = {**{a.lower(): a for a in AXES}, **{v.lower(): k for k, v in AXIS_LABELS.items()}}
_PARTS = ("verdicts", "tts", "cascaded")


# ----------------------------------------------------------------------------- reading rows
def _suffix(path: Path) -> str:
    name = path.name.lower()
    return ".jsonl.gz" if name.endswith(".jsonl.gz") else path.suffix.lower()


def _rows(path: Path, rel: str) -> tuple[list[tuple[int, dict]], list[Problem]]:
    """``(line, record)`` pairs of one table file, and the problems met reading it."""
    suf = _suffix(path)
    try:
        if suf == ".parquet":
            df = pd.read_parquet(path)
            return [(i, rec) for i, rec in enumerate(df.to_dict("records"), 1)], []
        raw = read_regular(path)
        text = decode(gzip.decompress(raw) if suf == ".jsonl.gz" else raw)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return [], [Problem("file_unreadable", "error", f"cannot read file: {exc}", rel)]
    except Exception as exc:  # noqa: BLE001 - a damaged Parquet file is a data problem
        return [], [Problem("file_unreadable", "error", f"cannot read file: {type(exc).__name__}: {exc}", rel)]
    if suf == ".csv":
        allow_large_csv_fields()   # issue 24: a cell over 131,072 characters is read, not a crash
        reader = csv.DictReader(io.StringIO(text, newline=""))
        out = []
        try:
            for rec in reader:
                if None in rec:
                    return out, [Problem("malformed_csv", "error", "row has more cells than the header",
                                         rel, reader.line_num)]
                out.append((reader.line_num, rec))
        except csv.Error as exc:
            return out, [Problem("malformed_csv", "error", f"cannot read the CSV: {exc}", rel, reader.line_num)]
        return out, []
    out, problems = [], []
    for lineno, line in iter_lines(text):
        obj, bad = parse_object(line)
        if bad is not None:
            problems.append(Problem(bad[0], "error", bad[1], rel, lineno, bad[2]))
        elif not_unicode(obj):   # "\ud800": valid JSON, but not text a table can hold
            problems += [Problem("invalid_unicode", "error", f"`{f}` holds text that is not valid Unicode (an unpaired "
                                 "surrogate escape)", rel, lineno, f) for f in not_unicode(obj)]
        else:
            out.append((lineno, obj))
    return out, problems


def _table_file(root: Path, stem: str) -> tuple[Path | None, list[Problem]]:
    hits = [root / f"{stem}{e}" for e in _EXTS if (root / f"{stem}{e}").is_file()]
    if len(hits) > 1:
        return None, [Problem("ambiguous_file", "error", "several files hold this table: "
                              + ", ".join(h.name for h in hits), hits[0].name)]
    return (hits[0] if hits else None), []


def _part_files(root: Path, sub: str) -> list[Path]:
    base = root / sub
    if not base.is_dir():
        return []
    return sorted((p for p in base.rglob("*") if p.is_file() and _suffix(p) in _EXTS),
                  key=lambda p: p.relative_to(root).as_posix())


# ----------------------------------------------------------------------------- tasks / rubrics
class _Sink:
    """Collects problems of one file and the number of rows left out."""

    def __init__(self, rel: str):
        self.rel, self.problems, self.dropped = rel, [], 0

    def err(self, code, msg, line=None, fld=None):
        self.problems.append(Problem(code, "error", msg, self.rel, line, fld))

    def warn(self, code, msg, line=None, fld=None, count=1):
        self.problems.append(Problem(code, "warning", msg, self.rel, line, fld, count))


def _required(sink: _Sink, rec: dict, line: int, fields) -> bool:
    ok = True
    for f in fields:
        if f not in rec or _empty(rec[f]):
            sink.err("missing_field", f"required field `{f}` is missing or empty", line, f)
            ok = False
    return ok


def _opt_bool(sink: _Sink, rec: dict, line: int, name: str, default=False):
    if name not in rec or _empty(rec[name]):
        return default, True
    val, ok = _bool(rec[name])
    if not ok:
        sink.err("not_boolean", f"`{name}` must be true or false, got {rec[name]!r}", line, name)
    return val, ok


def _opt_number(sink: _Sink, rec: dict, line: int, name: str, *, integer: bool, minimum: float):
    if name not in rec or _empty(rec[name]):
        return None, True
    v = rec[name]
    try:
        x = float(v) if not isinstance(v, bool) else float("nan")
    except (TypeError, ValueError):
        x = float("nan")
    if not math.isfinite(x) or x < minimum or (integer and x != int(x)):   # issue 24: inf is not a number here
        kind = "a whole number" if integer else "a number"
        sink.err("invalid_field", f"`{name}` must be {kind} >= {minimum:g}, got {v!r}", line, name)
        return None, False
    return (int(x) if integer else x), True


def _parse_task(sink: _Sink, line: int, rec: dict):
    if not _required(sink, rec, line, ("task_id", "axis")):
        return None
    axis = _AXIS_ALIASES.get(_text(rec["axis"]).lower())
    if axis is None:
        sink.err("unknown_axis", f"axis {rec['axis']!r} is not one of {', '.join(AXES)} "
                 f"(or their full names)", line, "axis")
    cue, ok1 = _opt_bool(sink, rec, line, "audio_cue")
    inter, ok2 = _opt_bool(sink, rec, line, "interruption")
    tts, ok3 = _opt_bool(sink, rec, line, "tts_subset", default=None)
    secs, ok4 = _opt_number(sink, rec, line, "user_audio_seconds", integer=False, minimum=0)
    turns, ok5 = _opt_number(sink, rec, line, "turns", integer=True, minimum=1)
    if axis is not None and cue and axis != "IM":
        sink.err("invalid_field", f"audio_cue is true on a {axis} task; only Inference Memory (IM) "
                 "tasks are audio-cue gated", line, "audio_cue")
        return None
    if axis is None or not all((ok1, ok2, ok3, ok4, ok5)):
        return None
    if tts is None:
        tts = not (cue or inter)
    return {"task_id": _text(rec["task_id"]), "axis": axis, "audio_cue": bool(cue),
            "interruption": bool(inter), "tts_subset": bool(tts), "user_audio_seconds": secs,
            "turns": turns, "_line": line}


def _vocab(sink: _Sink, rec: dict, line: int, name: str, allowed) -> tuple[str | None, bool]:
    if name not in rec or _empty(rec[name]):
        return None, True
    v = _text(rec[name]).lower().replace("-", "_").replace(" ", "_")
    if v not in allowed:
        sink.err("unknown_label", f"`{name}` {rec[name]!r} is not one of {', '.join(allowed)}", line, name)
        return None, False
    return v, True


def _parse_rubric(sink: _Sink, line: int, rec: dict, tasks: dict):
    if not _required(sink, rec, line, ("rubric_id", "task_id")):
        return None
    tid = _text(rec["task_id"])
    ok0 = tid in tasks
    if not ok0:
        sink.err("unknown_task", f"rubric for task {tid!r}, which is not in the task table", line, "task_id")
    itype, ok1 = _vocab(sink, rec, line, "instruction_type", INSTRUCTION_TYPES)
    etype, ok2 = _vocab(sink, rec, line, "edit_type", EDIT_TYPES)
    excl, ok3 = _opt_bool(sink, rec, line, "exclusion")
    if not all((ok0, ok1, ok2, ok3)):
        return None
    return {"rubric_id": _text(rec["rubric_id"]), "task_id": tid, "instruction_type": itype,
            "edit_type": etype, "exclusion": bool(excl), "_line": line}


def _read_keyed(root: Path, stem: str, parse, key: str, *extra) -> tuple[pd.DataFrame | None, list[Problem], int]:
    path, problems = _table_file(root, stem)
    if path is None:
        if not problems:
            problems.append(Problem("missing_table", "error", f"no {stem}.jsonl/.csv/.parquet file", stem))
        return None, problems, 0
    sink = _Sink(path.name)
    rows, p = _rows(path, path.name)
    sink.problems += p
    out, seen = [], {}
    for line, rec in rows:
        row = parse(sink, line, rec, *extra)
        if row is None:
            sink.dropped += 1
            continue
        if row[key] in seen:
            sink.err("duplicate_id", f"{key} {row[key]!r} appears twice (first on line {seen[row[key]]})", line, key)
            sink.dropped += 1
            continue
        seen[row[key]] = line
        out.append(row)
    if not rows and not sink.problems:
        sink.err("empty_table", "the table holds no rows")
    return pd.DataFrame(out), sink.problems, sink.dropped


# ----------------------------------------------------------------------------- verdicts
def _modality(sink: _Sink, rec: dict, line: int) -> tuple[str, bool]:
    """``output_modality`` as ``Text``/``Audio``, and whether it is one of them (else an error)."""
    mod = _text(rec["output_modality"]).capitalize()
    if mod not in MODALITIES:
        sink.err("unknown_label", f"output_modality {rec['output_modality']!r} is not Text or Audio",
                 line, "output_modality")
        return mod, False
    return mod, True


def _task(sink: _Sink, rec: dict, line: int, tasks: dict) -> tuple[str, bool]:
    """``task_id``, and whether the task table holds it (else an error)."""
    tid = _text(rec["task_id"])
    if tid not in tasks:
        sink.err("unknown_task", f"task {tid!r} is not in the task table", line, "task_id")
        return tid, False
    return tid, True


def _parse_verdict(sink: _Sink, line: int, rec: dict, tasks: dict, rubrics: dict, extra: tuple):
    if not _required(sink, rec, line, ("model", "output_modality", "task_id", "rubric_id", "passed") + extra):
        return None
    mod, ok_mod = _modality(sink, rec, line)
    tid, ok_task = _task(sink, rec, line, tasks)
    rid = _text(rec["rubric_id"])
    ok = ok_mod and ok_task
    if rid not in rubrics:
        sink.err("unknown_rubric", f"rubric {rid!r} is not in the rubric table", line, "rubric_id")
        ok = False
    elif tid in tasks and rubrics[rid] != tid:
        sink.err("rubric_task_mismatch", f"rubric {rid!r} belongs to task {rubrics[rid]!r}, not {tid!r}",
                 line, "rubric_id")
        ok = False
    passed, okb = _bool(rec["passed"])
    if not okb:
        sink.err("not_boolean", f"`passed` must be true or false, got {rec['passed']!r}", line, "passed")
    if not (ok and okb):
        return None
    row = {"model": _text(rec["model"]), "output_modality": mod, "task_id": tid, "rubric_id": rid,
           "passed": bool(passed)}
    for f in extra:
        row[f] = _text(rec[f])
    return row


def _read_verdict_files(root: Path, files: list[Path], tasks: dict, rubrics: dict, extra: tuple,
                        stats: dict) -> tuple[list[dict], list[Problem]]:
    """Parsed rows (with ``_file``/``_line``) of verdict files; duplicates resolved."""
    rows, problems, seen = [], [], {}
    for path in files:
        got, p = _verdict_file_rows(root, path, tasks, rubrics, extra, seen, stats)
        rows += got
        problems += p
    return rows, problems


def _verdict_file_rows(root: Path, path: Path, tasks: dict, rubrics: dict, extra: tuple, seen: dict,
                       stats: dict) -> tuple[list[dict], list[Problem]]:
    """Rows of one verdict file read row by row; ``seen`` (verdict key -> first row) is updated."""
    key_fields = extra + ("model", "output_modality", "rubric_id")
    rows = []
    rel = path.relative_to(root).as_posix()
    sink = _Sink(rel)
    recs, p = _rows(path, rel)
    sink.problems += p
    if not recs and not p:
        sink.warn("empty_file", "file holds no verdicts")
    for line, rec in recs:
        row = _parse_verdict(sink, line, rec, tasks, rubrics, extra)
        if row is None:
            sink.dropped += 1
            continue
        key = tuple(row[k] for k in key_fields)
        if key in seen:
            first = seen[key]
            if first["passed"] == row["passed"]:
                sink.warn("duplicate_identical", f"verdict repeated (first at {first['_file']}:{first['_line']}); "
                          "kept once", line, "rubric_id")
            else:
                sink.err("duplicate_conflict", f"a different verdict for the same rubric item is at "
                         f"{first['_file']}:{first['_line']}", line, "passed")
            sink.dropped += 1
            continue
        row["_file"], row["_line"] = rel, line
        seen[key] = row
        rows.append(row)
    stats["rejected_rows"] = stats.get("rejected_rows", 0) + sink.dropped
    return rows, sink.problems


def _check_complete(rows: list[dict], task_rubrics: dict, expected: set, extra: tuple, what: str,
                    stats: dict) -> tuple[list[dict], list[Problem]]:
    """Every system must grade every rubric of every expected task; incomplete tasks are left out."""
    problems: list[Problem] = []
    groups: dict[tuple, list[dict]] = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in extra + ("model", "output_modality", "task_id")), []).append(r)
    bad = set()
    for key, grp in groups.items():
        missing = sorted(task_rubrics.get(key[-1], set()) - {r["rubric_id"] for r in grp})
        if missing:
            first = min(grp, key=lambda r: (r["_file"], r["_line"]))
            shown = ", ".join(missing[:5]) + (f" ... ({len(missing)} in all)" if len(missing) > 5 else "")
            problems.append(Problem("missing_rubric_verdicts", "error",
                                    f"{' / '.join(key[:-1])}: task {key[-1]!r} has verdicts for "
                                    f"{len(grp)} of its {len(grp) + len(missing)} rubric items; missing {shown} "
                                    "(lenient mode leaves this system's rows of the task out)",
                                    first["_file"], first["_line"], "rubric_id"))
            bad.add(key)
    systems: dict[tuple, set] = {}
    for key in groups:
        systems.setdefault(key[:-1], set()).add(key[-1])
    for sys_key, have in systems.items():
        lacking = sorted(expected - have)
        if lacking:
            first = min((r for r in rows if tuple(r[k] for k in extra + ("model", "output_modality")) == sys_key),
                        key=lambda r: (r["_file"], r["_line"]))
            problems.append(Problem("missing_tasks", "error",
                                    f"{' / '.join(sys_key)} has no {what} for {len(lacking)} task(s), e.g. "
                                    + ", ".join(lacking[:5]), first["_file"], None, "task_id", len(lacking)))
    kept = [r for r in rows if tuple(r[k] for k in extra + ("model", "output_modality", "task_id")) not in bad]
    stats["incomplete_task_rows"] = stats.get("incomplete_task_rows", 0) + len(rows) - len(kept)
    return kept, problems


def _frame(rows: list[dict], extra: tuple = ()) -> pd.DataFrame:
    cols = list(extra) + list(VERDICT_COLUMNS)
    if not rows:
        return pd.DataFrame({c: pd.Series(dtype=bool if c == "passed" else object) for c in cols})
    return pd.DataFrame(rows)[cols]


def _read_verdicts(root: Path, files: list[Path], tasks: pd.DataFrame, rubrics: pd.DataFrame,
                   *, expected: set, extra: tuple = (), what: str = "verdicts",
                   stats: dict, bulk: bool = True) -> tuple[pd.DataFrame, list[Problem]]:
    tmap = dict.fromkeys(tasks["task_id"]) if len(tasks) else {}
    rmap = dict(zip(rubrics["rubric_id"], rubrics["task_id"])) if len(rubrics) else {}
    task_rubrics: dict[str, set] = {}
    for rid, tid in rmap.items():
        task_rubrics.setdefault(tid, set()).add(rid)
    if bulk:
        frame, problems = _bulk_verdict_files(root, files, tmap, rmap, extra, stats)
        frame, p = _bulk_check_complete(frame, task_rubrics, expected, extra, what, stats)
        return _frame_of(frame, extra), problems + p
    rows, problems = _read_verdict_files(root, files, tmap, rmap, extra, stats)
    rows, p = _check_complete(rows, task_rubrics, expected, extra, what, stats)
    return _frame(rows, extra), problems + p


def _parse_length(sink: _Sink, line: int, rec: dict, tasks: dict):
    if not _required(sink, rec, line, ("model", "output_modality", "task_id", "tokens")):
        return None
    tokens, ok = _opt_number(sink, rec, line, "tokens", integer=False, minimum=0)
    tid, ok_task = _task(sink, rec, line, tasks)
    mod, ok_mod = _modality(sink, rec, line)
    if not (ok and ok_task and ok_mod):
        return None
    return {"model": _text(rec["model"]), "output_modality": mod, "task_id": tid, "tokens": tokens,
            "_key": (_text(rec["model"]), mod, tid)}


# ----------------------------------------------------------------------------- columnar path
# The row-by-row functions above define what a row means.  The columnar path below takes a whole
# file at once when every one of its rows is *plain*: each field is checked once per distinct value
# (with the same functions), whole columns are compared, and the file is accepted only when the
# row-by-row reader would report nothing for any of its rows.  Any other file (a single bad,
# repeated or unusual row) is read again by the row-by-row reader, so problems, their order and
# the rows kept are the same on both paths (``tests/test_bulk_parts.py``).


def _columns(path: Path, rel: str, fields: tuple, optional: tuple = ()) -> pl.DataFrame | None:
    """``fields`` (text) and ``_line`` of every row of one table file, or None when the file is not
    plain (then the row-by-row reader takes it).  JSON lines and Parquet: each row must hold every
    one of ``fields``; ``optional`` fields are read when present (null when not).  CSV: every column."""
    if _suffix(path) == ".csv":
        try:
            return _plain_csv(decode(path.read_bytes()))
        except (OSError, UnicodeDecodeError):
            return None
    recs, problems = _rows(path, rel)
    if problems or not recs or any(f not in rec for f in fields for _, rec in recs):
        return None
    cols = {f: [_record_cell(rec.get(f), f in ("passed", "exclusion")) for _, rec in recs] for f in fields + optional}
    if any(v is ... for c in cols.values() for v in c):
        return None
    cols["_line"] = [line for line, _ in recs]
    return pl.DataFrame(cols, schema={**dict.fromkeys(fields + optional, pl.Utf8), "_line": pl.Int64})


def _nonempty(v):
    return None if _empty(v) else _text(v)


def _known(allowed):
    def fn(v):
        t = _nonempty(v)
        return t if t in allowed else None
    return fn


def _modality_of(v):
    mod = None if _empty(v) else _text(v).capitalize()
    return mod if mod in MODALITIES else None


def _passed_of(v):
    return None if _empty(v) else _bool(v)[0]


def _bulk_verdict_rows(frames: dict[int, pl.DataFrame], rels: dict[int, str], tasks: dict, rubrics: dict,
                       extra: tuple) -> dict[int, pl.DataFrame]:
    """Rows of the files (index -> text columns) in which every row is accepted without a finding."""
    fields = extra + VERDICT_COLUMNS
    parts = [df.select(fields).with_columns(df["_line"], pl.lit(fi, dtype=pl.Int64).alias("_fi"))
             for fi, df in frames.items() if df.height and all(f in df.columns for f in fields)]
    if not parts:
        return {}
    df = pl.concat(parts)
    cols = {f: _mapped(df[f], _nonempty) for f in extra + ("model",)}
    cols["output_modality"] = _mapped(df["output_modality"], _modality_of)
    cols["task_id"] = _mapped(df["task_id"], _known(tasks))
    cols["rubric_id"] = _mapped(df["rubric_id"], _known(rubrics))
    cols["passed"] = _mapped(df["passed"], _passed_of, pl.Boolean)
    out = pl.DataFrame(cols).select(*fields).with_columns(
        df["_fi"].replace_strict(rels, return_dtype=pl.Utf8).alias("_file"), df["_line"], df["_fi"])
    owner = _mapped(out["rubric_id"], rubrics.get)
    ok = out.select(pl.all_horizontal(pl.all().is_not_null()) & (owner == pl.col("task_id")).fill_null(False))
    bad = set(out.filter(~ok.to_series())["_fi"].unique().to_list())
    return {fi: part.drop("_fi") for (fi,), part in out.partition_by("_fi", as_dict=True, maintain_order=True).items()
            if fi not in bad}


def _frame_of_rows(rows: list[dict], extra: tuple) -> pl.DataFrame:
    schema = {**{c: pl.Utf8 for c in extra + VERDICT_COLUMNS}, "passed": pl.Boolean, "_file": pl.Utf8,
              "_line": pl.Int64}
    return pl.DataFrame(rows, schema=schema)


def _seen_of(frames: list[pl.DataFrame], key_fields: tuple) -> dict:
    """The ``seen`` map of the row-by-row reader, rebuilt from the rows accepted so far."""
    seen: dict = {}
    if frames:
        for r in pl.concat(frames).iter_rows(named=True):
            seen.setdefault(tuple(r[k] for k in key_fields), r)
    return seen


def _bulk_verdict_files(root: Path, files: list[Path], tasks: dict, rubrics: dict, extra: tuple,
                        stats: dict) -> tuple[pl.DataFrame, list[Problem]]:
    """:func:`_read_verdict_files` with plain files read by columns (same rows, problems, order)."""
    key_fields = list(extra + ("model", "output_modality", "rubric_id"))
    rels = {fi: path.relative_to(root).as_posix() for fi, path in enumerate(files)}
    cols = {fi: _columns(path, rels[fi], extra + VERDICT_COLUMNS) for fi, path in enumerate(files)}
    fast = _bulk_verdict_rows({fi: df for fi, df in cols.items() if df is not None}, rels, tasks, rubrics, extra)
    if len(fast) == len(files) and files:
        whole = pl.concat(list(fast.values()))
        if not whole.select(key_fields).is_duplicated().any():   # the usual case: every file plain
            stats["rejected_rows"] = stats.get("rejected_rows", 0)
            return whole, []
    frames: list[pl.DataFrame] = []
    problems: list[Problem] = []
    keys: pl.DataFrame | None = None
    for fi, path in enumerate(files):
        out = fast.get(fi)
        if out is not None:
            k = out.select(key_fields)
            if k.is_duplicated().any() or (keys is not None and k.join(keys, on=key_fields, how="semi").height):
                out = None
        if out is None:
            rows, p = _verdict_file_rows(root, path, tasks, rubrics, extra, _seen_of(frames, tuple(key_fields)), stats)
            out = _frame_of_rows(rows, extra)
            problems += p
        else:
            stats["rejected_rows"] = stats.get("rejected_rows", 0)
        frames.append(out)
        keys = out.select(key_fields) if keys is None else pl.concat([keys, out.select(key_fields)])
    return (pl.concat(frames) if frames else _frame_of_rows([], extra)), problems


def _bulk_check_complete(rows: pl.DataFrame, task_rubrics: dict, expected: set, extra: tuple, what: str,
                         stats: dict) -> tuple[pl.DataFrame, list[Problem]]:
    """:func:`_check_complete` over columns: the rare incomplete groups and systems are described by
    the row-by-row function itself."""
    gkey, skey = list(extra) + ["model", "output_modality", "task_id"], list(extra) + ["model", "output_modality"]
    need = {t: len(r) for t, r in task_rubrics.items()}
    groups = rows.group_by(gkey, maintain_order=True).len()
    short = groups.filter(pl.col("len") < _mapped(groups["task_id"], need.get, pl.UInt32).fill_null(0))
    systems = rows.group_by(skey, maintain_order=True).agg(pl.col("task_id").unique())
    lacking = [i for i, tids in enumerate(systems["task_id"].to_list()) if expected - set(tids)]
    stats["incomplete_task_rows"] = stats.get("incomplete_task_rows", 0)
    if not short.height and not lacking:
        return rows, []
    # some group or system is incomplete: the row-by-row function describes it, from every row of
    # the systems concerned (filtering whole systems keeps the order in which groups first appear)
    concerned = pl.concat([short.select(skey), systems[lacking].select(skey)]).unique()
    sub = rows.join(concerned, on=skey, how="semi", maintain_order="left")
    _, problems = _check_complete(sub.to_dicts(), task_rubrics, expected, extra, what, {})
    kept = rows.join(short.select(gkey), on=gkey, how="anti", maintain_order="left")
    stats["incomplete_task_rows"] += rows.height - kept.height
    return kept, problems


def _frame_of(rows: pl.DataFrame, extra: tuple = ()) -> pd.DataFrame:
    """:func:`_frame` of rows held in a polars frame."""
    if not rows.height:
        return _frame([], extra)
    return _to_pandas(rows.select(*extra, *VERDICT_COLUMNS))


_BAD = "\x00invalid"   # a label that is no label: marks a value the row-by-row reader rejects


def _label_of(allowed):
    """:func:`_vocab` of one value: None when empty, the normalised label, or :data:`_BAD`."""
    def fn(v):
        if _empty(v):
            return None
        t = _text(v).lower().replace("-", "_").replace(" ", "_")
        return t if t in allowed else _BAD
    return fn


def _flag_of(v):
    """:func:`_opt_bool` (default False) of one value: the boolean, or None when it is not one."""
    return False if _empty(v) else _bool(v)[0]


def _bulk_rubrics(root: Path, tasks: dict) -> pd.DataFrame | None:
    """:func:`_read_keyed` of the rubric table when every row is accepted without a finding, else None."""
    path, problems = _table_file(root, "rubrics")
    df = None if path is None or problems else _columns(path, path.name, ("rubric_id", "task_id"),
                                                          ("instruction_type", "edit_type", "exclusion"))
    if df is None or not df.height or "rubric_id" not in df.columns or "task_id" not in df.columns:
        return None
    absent = pl.Series([None] * df.height, dtype=pl.Utf8)
    opt = {f: df[f] if f in df.columns else absent for f in ("instruction_type", "edit_type", "exclusion")}
    out = pl.DataFrame({"rubric_id": _mapped(df["rubric_id"], _nonempty),
                        "task_id": _mapped(df["task_id"], _known(tasks)),
                        "instruction_type": _mapped(opt["instruction_type"], _label_of(INSTRUCTION_TYPES)),
                        "edit_type": _mapped(opt["edit_type"], _label_of(EDIT_TYPES)),
                        "exclusion": _mapped(opt["exclusion"], _flag_of, pl.Boolean),
                        "_line": df["_line"]})
    # a missing cell (JSON null or no such field) is the default, false
    out = out.with_columns(pl.when(opt["exclusion"].is_null()).then(False).otherwise(pl.col("exclusion")).alias("exclusion"))
    bad = (out["rubric_id"].is_null() | out["task_id"].is_null() | out["exclusion"].is_null()
           | (out["instruction_type"] == _BAD).fill_null(False) | (out["edit_type"] == _BAD).fill_null(False))
    if bad.any() or out["rubric_id"].is_duplicated().any():
        return None
    cols = list(out.columns)   # the frame as the row-by-row reader builds it: from row dicts
    return pd.DataFrame([dict(zip(cols, r)) for r in zip(*(out[c].to_list() for c in cols))])


def _tokens_of(v):
    val, ok = _opt_number(_Sink(""), {"tokens": v}, 0, "tokens", integer=False, minimum=0)
    return val if ok else None


def _bulk_lengths(root: Path, tasks: dict) -> pd.DataFrame | None:
    """The response-length table when every row is accepted without a finding, else None."""
    path, problems = _table_file(root, "response_lengths")
    fields = ("model", "output_modality", "task_id", "tokens")
    df = None if path is None or problems else _columns(path, path.name, fields)
    if df is None or not df.height or any(f not in df.columns for f in fields):
        return None
    out = pl.DataFrame({"model": _mapped(df["model"], _nonempty),
                        "output_modality": _mapped(df["output_modality"], _modality_of),
                        "task_id": _mapped(df["task_id"], _known(tasks)),
                        "tokens": _mapped(df["tokens"], _tokens_of, pl.Float64)})
    if out.null_count().sum_horizontal().item() or out.select(fields[:3]).is_duplicated().any():
        return None
    return _to_pandas(out)


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


def is_amc_release(path) -> bool:
    """True when ``path/release.json`` declares ``"benchmark": "audio-multichallenge"``."""
    meta_file = Path(path) / "release.json"
    try:
        meta = json.loads(decode(read_regular(meta_file)))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(meta, dict) and str(meta.get("benchmark", "")).lower() == BENCHMARK_ID


def _read_meta(root: Path) -> tuple[dict, list[Problem]]:
    try:
        meta = json.loads(decode(read_regular(root / "release.json")))
    except OSError:
        return {}, [Problem("missing_table", "error", "no release.json", "release.json")]
    except (ValueError, RecursionError) as exc:
        return {}, [Problem("malformed_json", "error", f"release.json cannot be read: {exc}", "release.json")]
    if not isinstance(meta, dict):
        return {}, [Problem("invalid_field", "error", "release.json must hold a JSON object", "release.json")]
    syn, ok = _bool(meta.get("synthetic", False))
    if not ok:
        return meta, [Problem("not_boolean", "error", f"synthetic must be true or false, got {meta.get('synthetic')!r}",
                              "release.json", None, "synthetic")]
    meta["synthetic"] = bool(syn)
    return meta, []


def _read_tables(root: Path, stats: dict, bulk: bool = True) -> tuple[pd.DataFrame, pd.DataFrame, list[Problem]]:
    tasks, problems, dropped = _read_keyed(root, "tasks", _parse_task, "task_id")
    stats["rejected_task_rows"] = dropped
    if tasks is None or not len(tasks):
        tasks = pd.DataFrame(columns=["task_id", "axis", "audio_cue", "interruption", "tts_subset",
                                      "user_audio_seconds", "turns", "_line"])
    fast = _bulk_rubrics(root, dict.fromkeys(tasks["task_id"])) if bulk else None
    rubrics, p, dropped = ((fast, [], 0) if fast is not None else
                           _read_keyed(root, "rubrics", _parse_rubric, "rubric_id", dict.fromkeys(tasks["task_id"])))
    problems += p
    stats["rejected_rubric_rows"] = dropped
    if rubrics is None or not len(rubrics):
        rubrics = pd.DataFrame(columns=["rubric_id", "task_id", "instruction_type", "edit_type", "exclusion", "_line"])
    has = set(rubrics["task_id"])
    tfile = (_table_file(root, "tasks")[0] or Path("tasks")).name
    for tid, line in zip(tasks["task_id"], tasks["_line"]):
        if tid not in has:
            problems.append(Problem("task_without_rubrics", "error", f"task {tid!r} has no rubric item in the "
                                    "rubric table", tfile, int(line), "task_id"))
    tasks = tasks[tasks["task_id"].isin(has)].drop(columns="_line").reset_index(drop=True)
    rubrics = rubrics.drop(columns="_line").reset_index(drop=True)
    return tasks, rubrics, problems


def _read_optional(root: Path, tasks, rubrics, stats, bulk: bool = True) -> tuple[dict, list[Problem]]:
    out, problems = {}, []
    all_tasks = set(tasks["task_id"])
    for part, expected in (("tts", set(tasks.loc[tasks["tts_subset"].astype(bool), "task_id"])),
                           ("cascaded", all_tasks)):
        files = _part_files(root, part)
        if files:
            out[part], p = _read_verdicts(root, files, tasks, rubrics, expected=expected, stats=stats,
                                          what=f"{part} verdicts", bulk=bulk)
            problems += p
    for stem, extra in (("human_labels", ()), ("judge_labels", ("judge",))):
        path, p = _table_file(root, stem)
        problems += p
        if path is not None:
            out[stem], p = _read_verdicts(root, [path], tasks, rubrics, expected=set(), extra=extra,
                                          stats=stats, what=stem, bulk=bulk)
            problems += p
    fast = _bulk_lengths(root, dict.fromkeys(all_tasks)) if bulk else None
    if fast is not None:
        lengths, p, dropped = fast, [], 0
    else:
        lengths, p, dropped = (_read_keyed(root, "response_lengths", _parse_length, "_key", dict.fromkeys(all_tasks))
                               if _table_file(root, "response_lengths")[0] is not None else (None, [], 0))
    problems += p
    stats["rejected_length_rows"] = dropped
    if lengths is not None and len(lengths):
        out["lengths"] = lengths.drop(columns=["_key", "_line"], errors="ignore")
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
    bad rows out and records each problem (with counts in ``stats``).  ``bulk=False`` reads every
    row one by one (the reference the columnar path is tested against; same result, slower).
    """
    root = Path(path)
    if not root.is_dir():
        raise VoxMemDataError([Problem("no_release", "error", f"release directory {str(root)!r} does not exist")])
    stats: dict = {}
    meta, problems = _read_meta(root)
    tasks, rubrics, p = _read_tables(root, stats, bulk)
    problems += p
    files = _part_files(root, "verdicts")
    if not files:
        problems.append(Problem("no_verdicts", "error", "no verdicts/*.jsonl|csv|parquet files found", "verdicts"))
    verdicts, p = _read_verdicts(root, files, tasks, rubrics, expected=set(tasks["task_id"]), stats=stats, bulk=bulk)
    problems += p
    opt, p = _read_optional(root, tasks, rubrics, stats, bulk)
    problems += p
    _check_judges(opt, problems)
    stats.update(tasks=len(tasks), rubrics=len(rubrics), verdict_rows=len(verdicts))
    release = AmcRelease(root, tasks, rubrics, verdicts, meta, problems, stats, tts=opt.get("tts"),
                         cascaded=opt.get("cascaded"), human=opt.get("human_labels"),
                         judges=opt.get("judge_labels"), lengths=opt.get("lengths"))
    if strict and release.errors():
        raise VoxMemDataError(problems, f"{len(release.errors())} error(s) in Audio MultiChallenge release {str(root)!r}")
    return release
