"""Reading and checking error-attribution audit records (``<release>/attribution/``, FORMATS.md section 4).

One record per line of ``attribution/**/*.jsonl[.gz]``: ``model``, ``item_id`` and the
auditor's fields :data:`AUDIT_FIELDS`.  This module checks each record on its own
(:func:`check_record`), reads the files (:func:`read_audit_files`) and reports duplicate
records (:func:`drop_duplicate_records`); the check against the attribution population
(which needs the verdict frame) and the classification live in
:mod:`voxmem_analysis.analysis.attribution`.
"""
from __future__ import annotations

from itertools import repeat
from pathlib import Path
from typing import Iterable, Mapping

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io import bulk as bk
from voxmem_analysis.io.files import prediction_files, read_text, walk
from voxmem_analysis.io.files import rel as relpath
from voxmem_analysis.io.jsonl import iter_lines, not_unicode, parse_line

__all__ = ["COMMITS", "SOURCES", "RELATIONS", "AUDIT_FIELDS", "AUDIT_ENUMS", "audit_files", "check_record", "check_records",
           "read_audit_files", "drop_duplicate_records", "BULK_MIN_LINES"]

COMMITS: tuple[str, ...] = ("specific", "generic", "off_type", "none", "truncated")
SOURCES: tuple[str, ...] = ("evidence", "other_session", "absent", "none")
RELATIONS: tuple[str, ...] = (
    "matches_gold", "wrong_value_same_session", "same_value_other_session", "earlier_state",
    "later_state", "other_speaker", "count_off", "unrelated",
)
#: The auditor's record, in the order of the F.5 prompt.
AUDIT_FIELDS: tuple[str, ...] = ("commits", "answer", "evidence_recovered", "source", "source_session", "relation", "why")
#: The audit fields with a closed set of values.
AUDIT_ENUMS = {"commits": COMMITS, "source": SOURCES, "relation": RELATIONS}


def audit_files(root: Path) -> list[Path]:
    """``<root>/attribution/**/*.jsonl[.gz]`` (any letter case, symlinks followed), sorted by relative path."""
    return _audit_listing(Path(root))[0]


def _audit_listing(root: Path) -> tuple[list[Path], list[Problem]]:
    found, _, problems = walk(root / "attribution", root)
    return prediction_files(found)[0], problems


def check_record(obj, file: str | None, line: int | None) -> tuple[dict | None, list[Problem]]:
    """One audit record checked against FORMATS.md section 4: (row or None, problems naming file, line, field)."""
    probs: list[Problem] = []

    def err(code, msg, fld=None):
        probs.append(Problem(code, "error", msg, file, line, fld))

    if not isinstance(obj, dict):
        err("not_an_object", f"record is a JSON {type(obj).__name__}, expected an object")
        return None, probs
    for f in not_unicode(obj):   # "\ud800": valid JSON, but not text a frame can hold
        err("invalid_unicode", f"`{f}` holds text that is not valid Unicode (an unpaired surrogate escape)", f)
    for f in ("model", "item_id"):
        if not isinstance(obj.get(f), str) or not obj.get(f).strip():
            err("missing_field", f"required field `{f}` is missing or empty", f)
    for f in AUDIT_FIELDS:
        if f not in obj:
            err("missing_field", f"audit field `{f}` is missing", f)
    for f, allowed in AUDIT_ENUMS.items():
        if f in obj and obj[f] not in allowed:
            err("unknown_value", f"`{f}` is {obj[f]!r}; expected one of {', '.join(allowed)}", f)
    if "evidence_recovered" in obj and not isinstance(obj["evidence_recovered"], bool):
        err("invalid_value", f"`evidence_recovered` must be true or false, got {obj['evidence_recovered']!r}",
            "evidence_recovered")
    ss = obj.get("source_session")
    if ss is not None and (isinstance(ss, bool) or not isinstance(ss, int)):
        err("invalid_value", f"`source_session` must be a session number or null, got {ss!r}", "source_session")
    for f in ("answer", "why"):
        if obj.get(f) is not None and not isinstance(obj.get(f), str):
            err("invalid_value", f"`{f}` must be a string or null, got {type(obj.get(f)).__name__}", f)
    if probs:
        return None, probs
    row = {"model": obj["model"], "item_id": obj["item_id"], **{f: obj[f] for f in AUDIT_FIELDS},
           "source_file": file, "source_line": line}
    return row, probs


def check_records(records: Iterable[Mapping], file: str | None = None) -> tuple[list[dict], list[Problem]]:
    """Check in-memory records (``line`` = 1-based position): (valid rows, problems)."""
    rows, problems = [], []
    for i, obj in enumerate(records, 1):
        row, p = check_record(obj, file, i)
        problems += p
        if row is not None:
            rows.append(row)
    return rows, problems


def read_audit_files(release_dir, *, bulk: bool = True) -> tuple[list[dict], list[Problem]]:
    """Read and check every audit record file of a release: (valid rows, problems).

    Problems (each with file, line, field): ``no_audit_records``, ``file_unreadable``,
    ``malformed_json``, ``not_an_object``, ``missing_field``, ``unknown_value``, ``invalid_value``.
    ``bulk`` (default) reads the plain records of a file of at least :data:`BULK_MIN_LINES` lines in
    one parser call and checks them by columns (:func:`_bulk_entries`); smaller files, and every
    file with ``bulk=False``, are read line by line.  Both give the same rows and problems.
    """
    root = Path(release_dir)
    problems: list[Problem] = []
    rows: list[dict] = []
    files, problems = _audit_listing(root)
    if not files:
        problems.append(Problem("no_audit_records", "error", "no attribution/**/*.jsonl files found", "attribution"))
    for path in files:
        rel = relpath(path, root)
        text, found = read_text(path, rel)   # CR line endings, a gzip stream cut short: see io/files.py
        problems += found
        if text is None:
            continue
        columnar = bulk and text.count("\n") >= BULK_MIN_LINES
        for _, row, p in (_bulk_entries(text, rel) if columnar else map(_line_entry, iter_lines(text), repeat(rel))):
            problems += p
            if row is not None:
                rows.append(row)
    return rows, problems


def _line_entry(numbered: tuple[int, str], rel: str) -> tuple[int, dict | None, list[Problem]]:
    """``(line, row or None, problems)`` of one line read alone."""
    lineno, line = numbered
    obj, bad = parse_line(line)
    if bad is not None:
        return lineno, None, [Problem("malformed_json", "error", bad[0], rel, lineno, bad[1])]
    row, p = check_record(obj, rel, lineno)
    return lineno, row, p


#: Files with fewer lines are read line by line even with ``bulk=True``: below this the columnar
#: path's fixed cost outweighs what it saves (benchmarks/bench_load_parts.py: 0.7x at 2,375 records,
#: 1.2x at 23,750); the result is the same either way.
BULK_MIN_LINES = 5000
#: JSON types a plain record's fields hold (see :func:`voxmem_analysis.io.bulk.screen_lines`) ...
_PLAIN_TYPES = {"model": '"', "item_id": '"', "commits": '"', "answer": '"n', "evidence_recovered": "tf",
                "source": '"', "source_session": "0-n", "relation": '"', "why": '"n'}
#: ... and how the bulk parser reads them.
_PLAIN_SCHEMA = {"model": pl.Utf8, "item_id": pl.Utf8, "commits": pl.Utf8, "answer": pl.Utf8,
                 "evidence_recovered": pl.Boolean, "source": pl.Utf8, "source_session": pl.Int64,
                 "relation": pl.Utf8, "why": pl.Utf8}


def _bulk_entries(text: str, rel: str) -> list[tuple[int, dict | None, list[Problem]]]:
    """:func:`_line_entry` of every line of a file, the plain records read in one parser call and
    checked by columns; every other line (screened out, rejected by the parser, or with any finding)
    is read alone, so rows and problems are the same and in line order."""
    lines = bk.split_lines([text], [0], [rel], [None])
    suspect = bk.screen_lines(lines["line"], _PLAIN_TYPES, required=_PLAIN_TYPES)
    plain = lines.filter(~suspect)
    rec, rejected = bk.parse_lines(plain["line"], _PLAIN_SCHEMA)
    entries: list[tuple[int, dict | None, list[Problem]]] = []
    slow = set(lines.filter(suspect)["lineno"].to_list()) | set(plain["lineno"].gather(rejected).to_list())
    if rec is not None:
        rec = rec.with_columns(plain["lineno"].gather(rec["_pos"]).alias("source_line"))
        ok = pl.lit(True)
        for f in ("model", "item_id"):
            ok = ok & bk.per_value(rec[f], lambda v: bool(v.strip()), pl.Boolean)
        for f, allowed in AUDIT_ENUMS.items():
            ok = ok & pl.col(f).is_in(list(allowed))
        rec = rec.with_columns(ok.fill_null(False).alias("_ok"))
        slow |= set(rec.filter(~pl.col("_ok"))["source_line"].to_list())
        good = rec.filter(pl.col("_ok")).select("model", "item_id", *AUDIT_FIELDS, pl.lit(rel).alias("source_file"),
                                                "source_line")
        keys = good.columns   # rows built from whole columns: much faster than DataFrame.to_dicts
        entries = [(r[-1], dict(zip(keys, r)), []) for r in zip(*(good[c].to_list() for c in keys))]
    if slow:
        entries += [_line_entry((n, ln), rel) for n, ln in lines.filter(pl.col("lineno").is_in(list(slow)))
                    .select("lineno", "line").iter_rows()]
        entries.sort(key=lambda e: e[0])
    return entries


def drop_duplicate_records(rows: list[dict], problems: list[Problem]) -> list[dict]:
    """Rows without the (model, item_id) pairs recorded more than once; every copy is reported in ``problems``."""
    # every copy is reported and left out, so the prediction shows up as missing_record
    seen: dict[tuple, list[dict]] = {}
    for r in rows:
        seen.setdefault((r["model"], r["item_id"]), []).append(r)
    kept = []
    for key, rs in seen.items():
        if len(rs) == 1:
            kept.append(rs[0])
            continue
        where = ", ".join(f"{r['source_file']}:{r['source_line']}" for r in rs)
        for r in rs:
            problems.append(Problem("duplicate_record", "error",
                                    f"({key[0]}, {key[1]}) has {len(rs)} audit records ({where}); none is used",
                                    r["source_file"], r["source_line"], "item_id"))
    return kept
