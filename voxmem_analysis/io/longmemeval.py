"""Read LongMemEval-format verdicts (VoiceLongMemEval, text memory benchmarks) into a tidy frame.

LongMemEval's ``evaluate_qa.py`` writes one JSON object per line (``../shared/FORMATS.md`` §5)::

    {"question_id": "e47becba", "hypothesis": "...",
     "autoeval_label": {"model": "gpt-4o-2024-08-06", "label": true}}

The question category is not in those files: it comes from a **question file** (the
LongMemEval question JSON as published -- a list of objects carrying ``question_id`` and
``question_type`` among many other fields -- or any CSV / JSONL / JSON table with those two
fields).  Which file holds which system's verdicts is said by a small **manifest** CSV::

    path,system,budget,judge
    runs/a_32k.jsonl.eval-results-gpt-4o,System-A,32k,gpt-4o
    ...

``path`` and ``system`` are required; ``budget`` (any label: ``32k``, ``115k``, ``oracle``)
and ``judge`` are optional; paths are relative to the manifest's folder; any other column
is an error.  When ``judge`` is empty the judge is the line's ``autoeval_label.model``.

The result is one row per (system, budget, judge, question) with the columns of
:data:`FRAME_COLUMNS` plus every extra field a line carries (VoiceLongMemEval adds fields;
they are kept, dicts/lists as JSON text).  Scoring follows the VoxMem paper's convention:
a line whose label is missing or not a JSON boolean is ``ungraded`` and counts as incorrect
(``convention="harness"`` leaves it out of the denominator instead).

Each rule is defined once, as a polars expression flagging rows of a raw frame (one row per
verdict, manifest row or question entry, its values as columns): the verdicts' rules are
:data:`voxmem_analysis.io.longmemeval_rules.RULES` and ``DUPLICATE_RULES``, the question file's
``question_rules``, the manifest's in :mod:`voxmem_analysis.io.longmemeval_manifest`; messages are
formatted from the flagged rows.  Who reads a verdict line (polars, or Python's ``json`` where polars
might read it differently) is decided in one place, :func:`verdict_raw_frame`.

Bad input is treated as in :func:`voxmem_analysis.io.release.load_release`: every finding is a
:class:`~voxmem_analysis.errors.Problem` with file, line and field; ``strict=True``
(default) raises :class:`~voxmem_analysis.errors.VoxMemDataError` listing all errors,
``strict=False`` returns the lines that passed and the problems (lines with an error are
left out, and counted).
"""
from __future__ import annotations

import csv
import io
import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis.io import bulk as bk
from voxmem_analysis.io.files import read_text
from voxmem_analysis.io.jsonl import iter_lines, parse_line, parse_object
from voxmem_analysis.io.longmemeval_rules import FRAME_COLUMNS, LABEL_FALSE, LABEL_TRUE, SCHEMA as _SCHEMA
from voxmem_analysis.io.longmemeval_rules import check_questions, check_verdicts, plain_part, python_part, tidy_frame
from voxmem_analysis.io.longmemeval_manifest import MANIFEST_COLUMNS, cell, manifest_rows, read_manifest
from voxmem_analysis.io.provenance import ManifestData
from voxmem_analysis.textlimits import csv_field_limit
from voxmem_analysis.errors import Problem, VoxMemDataError

__all__ = [
    "QUESTION_TYPES", "MANIFEST_COLUMNS", "FRAME_COLUMNS", "LongMemEvalData",
    "load_longmemeval", "read_manifest", "read_questions", "select_judge", "budget_sort_key", "BULK_MIN_LINES",
]

#: LongMemEval's six question types, in display order (VoiceLongMemEval has its own; any
#: string is accepted).
QUESTION_TYPES: tuple[str, ...] = (
    "single-session-user", "single-session-assistant", "single-session-preference",
    "multi-session", "temporal-reasoning", "knowledge-update",
)
_WS = re.compile(r"\s*")


# ----------------------------------------------------------------------------- helpers
def budget_sort_key(value) -> tuple:
    """Sort key putting budget labels in numeric order: ``8k < 32K < 115k < 1.5M < oracle``.

    Labels with a number (optionally followed by ``k``/``K``/``m``/``M``) sort by size; any
    other label sorts after them, alphabetically.
    """
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", str(value))
    if not m:
        return (1, float("inf"), str(value))
    mult = {"": 1.0, "k": 1e3, "m": 1e6}[m.group(2).lower()]
    return (0, float(m.group(1)) * mult, str(value))


def _read_text(path: Path, rel: str, problems: list[Problem]) -> str | None:
    """The text of a file (``.gz`` any case); what reading found goes to ``problems`` (see
    :func:`voxmem_analysis.io.files.read_text`: bare-CR line endings, a gzip stream cut short)."""
    text, found = read_text(path, rel)
    problems.extend(found)
    return text


# ----------------------------------------------------------------------------- questions
def _json_array_entries(text: str, start: int = 0):
    """Yield ``(object, 1-based line)`` for each element of the JSON array at ``start`` (a
    top-level array by default)."""
    dec = json.JSONDecoder()
    i = _WS.match(text, start).end()
    if text[i:i + 1] != "[":
        raise ValueError("expected a JSON list")
    i = _WS.match(text, i + 1).end()
    line, last = 1, 0
    if text[i:i + 1] == "]":
        return
    while True:
        line += text.count("\n", last, i)
        last = i
        obj, end = dec.raw_decode(text, i)
        yield obj, line
        i = _WS.match(text, end).end()
        ch = text[i:i + 1]
        if ch == ",":
            i = _WS.match(text, i + 1).end()
        elif ch == "]":
            return
        else:
            raise json.JSONDecodeError("expected ',' or ']' after a list element", text, i)


def _question_records(path: Path, rel: str, text: str, problems: list[Problem], type_key: str | None = None):
    """(record, line) pairs from any supported layout."""
    name = path.name.lower().removesuffix(".gz")
    stripped = text.lstrip()
    if name.endswith((".csv", ".tsv")) or (not name.endswith((".json", ".jsonl", ".ndjson"))
                                            and not stripped.startswith(("[", "{"))):
        yield from _csv_records(text, rel, problems, "\t" if name.endswith(".tsv") else ",", type_key)
        return
    if name.endswith((".jsonl", ".ndjson")) or (stripped.startswith("{") and not name.endswith(".json")):
        for lineno, line in iter_lines(text):
            obj, bad = parse_line(line)
            if bad is not None:
                problems.append(Problem("malformed_json", "error", bad[0], rel, lineno, bad[1]))
            else:
                yield obj, lineno
        return
    if stripped.startswith("{"):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            problems.append(Problem("malformed_json", "error", f"not valid JSON ({exc.msg})", rel, exc.lineno))
            return
        except RecursionError:
            problems.append(_too_deep(text, rel))
            return
        # {question_id: question_type} or {question_id: {"question_type": ...}}
        for qid, v in obj.items():
            rec = dict(v) if isinstance(v, dict) else {"question_type": v}
            rec.setdefault("question_id", qid)
            yield rec, None
        return
    try:
        yield from _json_array_entries(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem("malformed_json", "error", f"not valid JSON ({exc.msg})", rel, exc.lineno))
    except RecursionError:
        problems.append(_too_deep(text, rel))
    except ValueError as exc:
        problems.append(Problem("malformed_json", "error", f"not a JSON list of questions ({exc})", rel, 1))


def _csv_records(text: str, rel: str, problems: list[Problem], delimiter: str, type_key: str | None) -> list:
    """(record, line) pairs of a CSV/TSV question table (long cells read: :func:`csv_field_limit`)."""
    with csv_field_limit():
        reader = csv.DictReader(io.StringIO(text), delimiter=delimiter)
        fields = [f.strip() for f in (reader.fieldnames or [])]
        has_type = (type_key in fields) if type_key else ("question_type" in fields or "type" in fields)
        missing = [f for f, ok in (("question_id", "question_id" in fields), (type_key or "question_type", has_type)) if not ok]
        if missing:
            problems.append(Problem("questions_missing_field", "error",
                                    f"question table has no column(s) {missing} (columns: {fields})"
                                    + ("" if type_key else "; the type may be in `question_type` or `type`, or name "
                                       "its column with --type-key"), rel, 1, missing[0]))
            return []
        reader.fieldnames = fields
        return [(rec, reader.line_num) for rec in reader]


#: JSON nested deeper than this is refused (Python's parser would exhaust its stack on it).
MAX_DEPTH = 500


def _too_deep(text: str, rel: str) -> Problem:
    """The finding for a JSON document the parser could not read for its depth: where it first
    nests deeper than :data:`MAX_DEPTH` (strings aside), found by one vectorised pass in chunks."""
    depth, in_str, run, offset = 0, 0, 0, 0
    chunk = 1 << 20
    for start in range(0, len(text), chunk):
        b = np.frombuffer(text[start:start + chunk].encode("utf-32-le"), dtype=np.uint32)
        idx = np.arange(len(b))
        bs = b == 92
        last = np.maximum.accumulate(np.where(~bs, idx, -1))
        before = np.empty(len(b), dtype=np.int64)      # backslashes right before each character
        before[0] = run
        before[1:] = np.where(last[:-1] >= 0, idx[:-1] - last[:-1], run + idx[1:])
        quote = (b == 34) & (before % 2 == 0)
        inside = (in_str + np.cumsum(quote) - quote) % 2 == 1
        step = np.where(inside, 0, np.isin(b, (91, 123)).astype(np.int64) - np.isin(b, (93, 125)))
        level = depth + np.cumsum(step)
        over = np.flatnonzero(level > MAX_DEPTH)
        if len(over):
            offset = start + int(over[0])
            break
        depth, in_str = int(level[-1]), int((in_str + quote.sum()) % 2)
        run = int(len(b) - 1 - last[-1]) if last[-1] >= 0 else run + len(b)
    line = text.count("\n", 0, offset) + 1
    return Problem("malformed_json", "error", f"not valid JSON (nested deeper than {MAX_DEPTH} levels)", rel, line)


def read_questions(path, type_key: str | None = None) -> tuple[pl.DataFrame, list[Problem]]:
    """Read a question file into ``question_id, question_type, is_abstention, source_line``.

    Accepted layouts: the LongMemEval JSON list (objects with ``question_id`` and
    ``question_type`` among other fields), a JSON object ``{question_id: question_type}``,
    JSONL, CSV or TSV with those two columns (``.gz`` allowed).  Other fields are ignored.
    The type is read from ``question_type``, else from ``type``; ``type_key`` names another
    field (``--type-key`` on the command line).
    """
    path = Path(path)
    rel = str(path)
    problems: list[Problem] = []
    schema = {"question_id": pl.Utf8, "question_type": pl.Utf8, "is_abstention": pl.Boolean,
              "source_line": pl.Int64}
    if not path.is_file():
        problems.append(Problem("no_questions", "error", f"question file {rel!r} does not exist"))
        return pl.DataFrame(schema=schema), problems
    text = _read_text(path, rel, problems)
    if text is None:
        return pl.DataFrame(schema=schema), problems
    records, lines, keyed = [], [], []
    found: list[Problem] = []
    for rec, lineno in _question_records(path, rel, text, found, type_key):
        keyed += [((len(records), 0, 0, n), p) for n, p in enumerate(found)]   # what the parser found before it
        found.clear()
        records.append(rec)
        lines.append(lineno)
    keyed += [((len(records), 0, 0, n), p) for n, p in enumerate(found)]
    frame, rule_problems = check_questions(records, lines, rel, type_key)
    keyed += [((k[2], 1, k[3], k[4]), p) for k, p in rule_problems]
    problems += [p for _, p in sorted(keyed, key=lambda e: e[0])]
    if not frame.height and not any(p.severity == "error" for p in problems):
        problems.append(Problem("no_questions", "error", "question file holds no question", rel))
    return frame, problems


# ----------------------------------------------------------------------------- verdicts


def read_label(value) -> tuple[bool | None, str | None]:
    """``(label, how)`` of a label value: a JSON boolean as it is (``how`` None); the text
    ``"true"/"false"``, ``"yes"/"no"``, ``"1"/"0"`` (any case, spaces ignored: ``how="text"``)
    and the numbers 1/0 (``how="number"``) as booleans; null: ``(None, "missing")``; anything
    else ``(None, "invalid")`` -- an error for the line."""
    if value is None:
        return None, "missing"
    if isinstance(value, bool):
        return value, None
    if isinstance(value, (int, float)) and value in (0, 1):
        return bool(value), "number"
    if isinstance(value, str):
        t = value.strip().lower()
        if t in LABEL_TRUE or t in LABEL_FALSE:
            return t in LABEL_TRUE, "text"
    return None, "invalid"


def _verdict_layout(text: str) -> str:
    """``jsonl`` (one object per line, evaluate_qa.py), ``array`` (a JSON list of those objects) or
    ``results`` (a JSON object whose ``results`` list holds them), by the first non-space character."""
    head = text.lstrip()[:1]
    if head == "[":
        return "array"
    if head == "{":
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            return "jsonl"
        if isinstance(obj, dict) and isinstance(obj.get("results"), list):
            return "results"
    return "jsonl"


def _results_start(text: str) -> int:
    """Index of the ``[`` of the top-level ``results`` member of a JSON object (text known to parse)."""
    dec = json.JSONDecoder()
    i = _WS.match(text, text.index("{") + 1).end()
    while True:
        key, i = dec.raw_decode(text, i)
        i = _WS.match(text, i).end() + 1          # the colon
        i = _WS.match(text, i).end()
        if key == "results":
            return i
        _, i = dec.raw_decode(text, i)
        i = _WS.match(text, _WS.match(text, i).end() + 1).end()   # the comma


def _verdict_entries(text: str, rel: str):
    """``(line, record or None, problems)`` for each verdict of a file in any layout (see
    :func:`_verdict_layout`); an array cut short by bad JSON reports where, and how many entries
    were read before it (the rest of the file is lost)."""
    layout = _verdict_layout(text)
    if layout == "jsonl":
        for lineno, line in iter_lines(text):
            rec, bad = parse_object(line)
            yield lineno, rec, ([] if bad is None else [Problem(bad[0], "error", bad[1], rel, lineno, bad[2])])
        return
    n = 0
    try:
        for obj, lineno in _json_array_entries(text, _results_start(text) if layout == "results" else 0):
            n += 1
            if isinstance(obj, dict):
                yield lineno, obj, []
            else:
                yield lineno, None, [Problem("not_an_object", "error",
                                             f"verdict entry is a JSON {type(obj).__name__}, expected an object", rel, lineno)]
    except (json.JSONDecodeError, RecursionError, ValueError) as exc:
        where = getattr(exc, "lineno", None)
        msg = getattr(exc, "msg", str(exc))
        yield where, None, [Problem("malformed_json", "error",
                                    f"not valid JSON ({msg}); {n} entr(ies) of the {'results list' if layout == 'results' else 'JSON list'} "
                                    "were read before it, the rest of the file is lost", rel, where)]


# ----------------------------------------------------------------------------- columnar path
#: Loads whose JSON-lines verdict files hold fewer lines in all are read by Python's json alone even
#: with ``bulk=True`` (0: polars reads the plain lines of every load, in one call for all files --
#: as fast as Python's json on the 420 lines of the shipped example, benchmarks/bench_lme_attr.py);
#: the result is the same either way.
BULK_MIN_LINES = 0
#: ``autoeval_label`` as evaluate_qa.py writes it: ``{"model": "<text>", "label": true|false}``, nothing else.
_AUTO_FORM = (r'"autoeval_label"[ \t]*:[ \t]*\{[ \t]*"model"[ \t]*:[ \t]*"(?:[^"\\]|\\.)*"[ \t]*,[ \t]*'
              r'"label"[ \t]*:[ \t]*(?:true|false)[ \t]*\}')
_AUTO_SCHEMA = pl.Struct({"model": pl.Utf8, "label": pl.Boolean})
#: keys a plain line may not hold besides its own (they would change the row's meaning or names)
_NOT_EXTRA = set(_SCHEMA) | {"question_id", "hypothesis", "autoeval_label", "correct", "question_type", "model", "label"}
_EXTRA_TYPES = {'"': pl.Utf8, "t": pl.Boolean, "f": pl.Boolean, "n": None}


def _plain_extras(signature: str) -> list[tuple[str, object]] | None:
    """The extra keys (with their polars type, None for null) of a *plain* verdict line, or None
    when lines with this signature must be read alone.  Plain: ``question_id`` text, optional
    ``hypothesis`` text or null, ``autoeval_label`` the object ``{"model": text, "label": boolean}``,
    any other key a text, boolean or null not named like a frame column."""
    keys = bk.signature_keys(signature)
    if not keys:
        return None
    names = [k for k, _ in keys]
    if "question_id" not in names or "autoeval_label" not in names:
        return None
    i = names.index("autoeval_label")
    if keys[i:i + 3] not in ([("autoeval_label", "{"), ("model", '"'), ("label", "t")],
                             [("autoeval_label", "{"), ("model", '"'), ("label", "f")]):
        return None
    extras = []
    for k, c in keys[:i] + keys[i + 3:]:
        if k == "question_id" and c == '"' or k == "hypothesis" and c in '"n':
            continue
        if k in _NOT_EXTRA or k.startswith("autoeval_") or c not in _EXTRA_TYPES:
            return None
        extras.append((k, _EXTRA_TYPES[c]))
    return extras


def _plain_plan(signature: pl.Series) -> tuple[dict, dict]:
    """``(signature -> extra keys or None, schema)``: an extra key read as text on some lines and as
    a boolean on others sends those lines to the per-line reader."""
    plan = {sig: _plain_extras(sig) for sig in signature.unique().to_list()}
    types: dict[str, set] = {}
    for extras in plan.values():
        for k, t in extras or ():
            types.setdefault(k, set()).add(t)
    mixed = {k for k, ts in types.items() if len(ts - {None}) > 1}
    plan = {sig: (None if extras is None or any(k in mixed for k, _ in extras) else extras)
            for sig, extras in plan.items()}
    schema = {"question_id": pl.Utf8, "hypothesis": pl.Utf8, "autoeval_label": _AUTO_SCHEMA}
    schema.update({k: next(iter(ts - {None}), pl.Utf8) for k, ts in types.items() if k not in mixed})
    return plan, schema


# ----------------------------------------------------------------------------- result
@dataclass
class LongMemEvalData(ManifestData):
    """Verdicts read through a manifest.

    Attributes
    ----------
    frame : polars.DataFrame
        One row per verdict, columns :data:`FRAME_COLUMNS` then extra fields.
    questions : polars.DataFrame
        ``question_id, question_type, is_abstention, source_line`` of the question file.
    manifest : pandas.DataFrame
        The usable manifest rows, with ``manifest_line``, ``resolved`` and ``n_rows``.
    problems : list of Problem
    stats : dict
        ``files, lines, rows, rejected_lines, duplicates_identical, ungraded``.
    dropped : list of dict
        Manifest rows none of whose verdicts were kept (file missing or unreadable, every line
        rejected): ``system, budget, judge, manifest_line, reason`` (:func:`select_judge` names them).
    """

    UNNAMED = "longmemeval"

    frame: pl.DataFrame
    questions: pl.DataFrame
    questions_path: Path | None = None

    def systems(self) -> list[str]:
        """Systems in manifest order."""
        return list(dict.fromkeys(self.frame["system"].to_list()))

    def budgets(self) -> list:
        """Budgets present, in numeric order (see :func:`budget_sort_key`); None last."""
        vals = [b for b in dict.fromkeys(self.frame["budget"].to_list()) if b is not None]
        out = sorted(vals, key=budget_sort_key)
        return out + ([None] if self.frame["budget"].null_count() else [])

    def pandas(self, frame: pl.DataFrame | None = None) -> pd.DataFrame:
        """The frame as pandas (``label`` as nullable boolean)."""
        return (self.frame if frame is None else frame).to_pandas()


def load_longmemeval(manifest, questions, *, strict: bool = True, convention: str = "paper",
                     type_key: str | None = None, bulk: bool = True) -> LongMemEvalData:
    """Load the verdict files a manifest lists, with each question's type.

    Parameters
    ----------
    manifest : str or Path
        CSV ``path,system[,budget][,judge]``; paths relative to the manifest's folder.
    questions : str or Path
        Question file (see :func:`read_questions`).
    strict : bool
        Raise :class:`VoxMemDataError` listing every error (default); with ``False`` lines
        with an error are left out and listed in ``problems``.
    convention : {"paper", "harness"}
        ``paper``: ungraded verdicts count as incorrect and stay in the denominator;
        ``harness``: they leave it (``scored`` false).
    type_key : str, optional
        Field of the question file holding the question type (default ``question_type``, else ``type``).
    bulk : bool
        Read the plain lines of JSON-lines verdict files of at least :data:`BULK_MIN_LINES` lines in
        one parser call each and check them by columns (default); ``False`` reads every line alone.
        Both give the same result.

    Verdict files may be JSON Lines (evaluate_qa.py), a JSON list of the same objects, or a JSON
    object with a ``results`` list; labels may be ``autoeval_label.label``, a flat
    ``autoeval_label`` value or a ``correct`` field (see :func:`read_label` for the values read).

    Returns
    -------
    LongMemEvalData
    """
    if convention not in ("paper", "harness"):
        raise ValueError(f"convention must be 'paper' or 'harness', got {convention!r}")
    manifest, questions = Path(manifest), Path(questions)
    man, p, dropped = manifest_rows(manifest)
    keyed = [((-2, 0, 0, 0, n), x) for n, x in enumerate(p)]
    qframe, p = read_questions(questions, type_key)
    keyed += [((-1, 0, 0, 0, n), x) for n, x in enumerate(p)]
    stats = {"files": 0, "lines": 0, "rows": 0, "rejected_lines": 0, "duplicates_identical": 0, "ungraded": 0}
    runs = pl.DataFrame({"_fi": list(range(len(man))), "system": man["system"].tolist(),
                         "budget": [cell(b) for b in man["budget"].tolist()], "m.judge": [cell(j) for j in man["judge"].tolist()],
                         "path": man["path"].tolist(), "manifest_line": man["manifest_line"].tolist()},
                        schema={"_fi": pl.Int64, "system": pl.Utf8, "budget": pl.Utf8, "m.judge": pl.Utf8,
                                "path": pl.Utf8, "manifest_line": pl.Int64})
    frame = None
    n_rows = [0] * len(man)
    if qframe.height:  # without questions every line would be reported as unknown
        stats["files"] = len(man)
        raw, extras, unread = verdict_raw_frame(man, keyed, bulk)
        checked, found = check_verdicts(raw, qframe, runs)
        keyed += found
        frame = tidy_frame(checked, extras, convention)
        per = checked.group_by("_fi").agg(pl.len().alias("n"), (~pl.col("_ok")).sum().alias("rej"),
                                          pl.col("_keep").sum().alias("kept"))
        per = {r[0]: r[1:] for r in per.iter_rows()}
        for fi, r in enumerate(runs.iter_rows(named=True)):
            n, rej, kept = per.get(fi, (0, 0, 0))
            n_rows[fi] = kept
            if fi not in unread and not n:
                keyed.append(((fi, 2, 0, 0, 0), Problem("empty_file", "warning", "file holds no verdicts", r["path"])))
            if not kept:
                lost = "file unreadable" if fi in unread else f"all {rej} line(s) rejected" if rej else "file holds no verdicts"
                dropped.append({"system": r["system"], "budget": r["budget"], "judge": r["m.judge"],
                                "manifest_line": r["manifest_line"], "reason": lost})
        stats.update(lines=checked.height, rejected_lines=int((~checked["_ok"]).sum()),
                     duplicates_identical=int(checked["d0"].sum()),
                     ungraded=int(checked.filter(pl.col("_keep"))["_label"].null_count()))
    if frame is None:
        frame = pl.DataFrame(schema={c: _SCHEMA[c] for c in FRAME_COLUMNS})
    man = man.assign(n_rows=n_rows)
    stats["rows"] = frame.height
    problems = [x for _, x in sorted(keyed, key=lambda e: e[0])]
    _cross_checks(frame, qframe, problems)
    data = LongMemEvalData(frame, qframe, questions, manifest=man, problems=_collapse(problems), stats=stats,
                           manifest_path=manifest, dropped=dropped)
    if strict and data.errors():
        raise VoxMemDataError(data.problems, f"{sum(p.count for p in data.errors())} error(s) in LongMemEval verdicts "
                                             f"(manifest {str(manifest)!r}, questions {str(questions)!r})")
    return data


_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")   # text a surrogate can come from (UTF-8 holds none)


def verdict_raw_frame(man, keyed: list, bulk: bool) -> tuple[pl.DataFrame, list[dict], set[int]]:
    """``(raw frame, extras, files not read)`` of every verdict file of a manifest (see
    :mod:`voxmem_analysis.io.longmemeval_rules`); what reading a file found goes to ``keyed``.

    **Who reads a verdict** (decided here only): polars reads the *plain* lines of JSON-lines files
    (:func:`_plain_extras`: a text ``question_id``, ``autoeval_label`` exactly ``{"model": text,
    "label": true|false}``, other keys text, boolean or null, no escape or character polars may read
    differently from Python's json) in one call for all files, when ``bulk`` and the files hold at least
    :data:`BULK_MIN_LINES` lines; Python's json reads every other line, and JSON-list and
    ``{"results": [...]}`` files (which need a streaming decoder to number their entries)."""
    texts, fis, rels, entries, unread = [], [], [], [], set()
    for fi, (path, resolved) in enumerate(zip(man["path"].tolist(), man["resolved"].tolist())):
        text, found = read_text(Path(resolved), path)
        keyed += [((fi, 0, 0, 0, n), x) for n, x in enumerate(found)]
        if text is None:
            unread.add(fi)
        elif _verdict_layout(text) == "jsonl":
            texts.append(text), fis.append(fi), rels.append(path)
        else:
            for seq, (lineno, rec, errs) in enumerate(_verdict_entries(text, path)):
                p0 = (errs[0].code, errs[0].message, errs[0].field) if errs else None
                entries.append((fi, seq, path, lineno if not errs else errs[0].line, rec, p0, True))
    lines = bk.split_lines(texts, fis, rels, [None] * len(texts)) if texts else None
    extras: list[dict] = []
    parts = []
    if lines is not None and bulk and lines.height >= BULK_MIN_LINES:
        lines, part = _plain_lines(lines, extras)
        parts += part
    if lines is not None:
        for fi, rel, lineno, line in lines.select("_fi", "_file", "lineno", "line").iter_rows():
            rec, bad = parse_object(line)
            entries.append((fi, lineno, rel, lineno, rec, bad, not line.isascii() or _ESCAPE.search(line) is not None))
    parts.append(python_part(entries, extras))
    return pl.concat(parts, how="diagonal_relaxed"), extras, unread


def _plain_lines(lines: pl.DataFrame, extras: list[dict]) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """``(lines left to Python's json, [raw frame of the plain lines polars read])``."""
    signature = bk.line_signatures(lines["line"])
    plan, schema = _plain_plan(signature)
    lines = lines.with_columns(signature.alias("_sig"), pl.int_range(pl.len()).alias("_row"))
    ok = signature.replace_strict({s: e is not None for s, e in plan.items()}, return_dtype=pl.Boolean) \
        if len(signature) else signature.cast(pl.Boolean)
    plain = lines.filter(ok & lines["line"].str.contains(_AUTO_FORM))
    rec, _ = bk.parse_lines(plain["line"], schema)   # lines it rejects are read by Python's json
    if rec is None:
        return lines, []
    read = plain[rec["_pos"]]
    meta = read.select("_fi", pl.col("lineno").alias("_seq"), "_file", pl.col("lineno").alias("_line"))
    keys = {sig: [k for k, _ in plan[sig]] for sig in read["_sig"].unique().to_list()}
    part = plain_part(rec.drop("_pos"), meta, [keys[sig] for sig in read["_sig"].to_list()], extras)
    return lines.filter(~pl.col("_row").is_in(read["_row"].to_list())), [part]


def _cross_checks(frame: pl.DataFrame, questions: pl.DataFrame, problems: list[Problem]) -> None:
    if not frame.height:
        return
    n_q = questions.height
    cover = (frame.group_by("system", "budget", "judge", maintain_order=True)
             .agg(pl.len().alias("n"), pl.col("source_file").first(), pl.col("judge_model").drop_nulls().n_unique().alias("nm")))
    for r in cover.iter_rows(named=True):
        if r["n"] < n_q:
            problems.append(Problem("incomplete_run", "warning",
                                    f"system {r['system']!r} (budget {r['budget']}, judge {r['judge']}) has verdicts for "
                                    f"{r['n']} of the {n_q} questions of the question file", r["source_file"], None,
                                    "question_id", n_q - r["n"]))
        if r["nm"] > 1:
            problems.append(Problem("mixed_judge_models", "warning",
                                    f"system {r['system']!r} (budget {r['budget']}, judge {r['judge']}) was labelled by "
                                    f"{r['nm']} different autoeval_label.model values", r["source_file"], None,
                                    "autoeval_label.model"))


def _collapse(problems: list[Problem], limit: int = 50) -> list[Problem]:
    """Keep problems, but summarise a code repeated more than ``limit`` times in one file."""
    by: dict[tuple, list[Problem]] = {}
    for p in problems:
        by.setdefault((p.code, p.severity, p.file), []).append(p)
    out: list[Problem] = []
    for (code, sev, file), ps in by.items():
        out.extend(ps[:limit])
        if len(ps) > limit:
            out.append(Problem(code, sev, f"... and {len(ps) - limit} more like the above", file, None, ps[0].field,
                               sum(p.count for p in ps[limit:])))
    return out


# ----------------------------------------------------------------------------- judges
def select_judge(frame: pl.DataFrame, judge: str | None = None,
                 dropped: list[dict] | None = None) -> tuple[pl.DataFrame, list[str]]:
    """Keep one judge per (system, budget), so no question is counted twice.

    Where a (system, budget) has verdicts from several judges, keep ``judge`` if it is one
    of them, else the first judge listed (manifest order).  Returns the frame and one note
    per (system, budget) where a choice was made (never silent: print them): several judges,
    ``judge`` asked for but absent there, or a manifest row in ``dropped``
    (:attr:`LongMemEvalData.dropped`) whose verdicts were left out -- scored with another judge,
    or in no table at all.
    """
    if judge is not None and judge not in set(frame["judge"].drop_nulls().to_list()):
        raise VoxMemDataError([Problem("unknown_judge", "error",
                                       f"judge {judge!r} not in the data; judges: {sorted(set(frame['judge'].drop_nulls().to_list()))}",
                                       None, None, "judge")])
    notes: list[str] = []
    keep = []
    judges = (frame.with_row_index("_r").group_by("system", "budget", maintain_order=True)
              .agg(pl.col("judge").unique(maintain_order=True).alias("judges")))
    chosen_at: dict[tuple, object] = {}
    for r in judges.iter_rows(named=True):
        js = r["judges"]
        chosen = js[0] if judge is None or judge not in js else judge
        chosen_at[(r["system"], r["budget"])] = chosen
        if len(js) > 1:
            notes.append(f"system {r['system']!r} at budget {r['budget']} has verdicts from {len(js)} judges "
                         f"({', '.join(map(str, js))}); using {chosen!r}")
        elif judge is not None and chosen != judge:
            notes.append(f"system {r['system']!r} at budget {r['budget']} has no verdicts from judge {judge!r}; "
                         f"using {chosen!r}")
        keep.append({"system": r["system"], "budget": r["budget"], "judge": chosen})
    for d in dropped or []:
        what = (f"the verdicts of system {d['system']!r} at budget {d['budget']}"
                + (f" by judge {d['judge']!r}" if d.get("judge") is not None else "")
                + f" (manifest line {d['manifest_line']}) were left out: {d['reason']}")
        other = chosen_at.get((d["system"], d["budget"]))
        notes.append(f"{what}; scored with judge {other!r} instead" if other is not None and other != d.get("judge")
                     else f"{what}; that system and budget are in no table" if other is None else what)
    if not any(len(js) > 1 for js in judges["judges"].to_list()):
        return frame, notes
    sel = pl.DataFrame(keep, schema={"system": pl.Utf8, "budget": pl.Utf8, "judge": pl.Utf8})
    out = frame.join(sel, on=["system", "budget", "judge"], how="semi", nulls_equal=True)
    return out, notes
