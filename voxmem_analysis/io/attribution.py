"""Reading and checking error-attribution audit records (``<release>/attribution/``, FORMATS.md section 4).

One record per line of ``attribution/**/*.jsonl[.gz]``: ``model``, ``item_id`` and the
auditor's fields :data:`AUDIT_FIELDS`.  This module checks each record on its own
(:func:`check_record`), reads the files (:func:`read_audit_files`) and reports duplicate
records (:func:`drop_duplicate_records`); the check against the attribution population
(which needs the verdict frame) and the classification live in
:mod:`voxmem_analysis.analysis.attribution`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.files import prediction_files, read_text, walk
from voxmem_analysis.io.files import rel as relpath
from voxmem_analysis.io.jsonl import iter_lines, parse_line

__all__ = ["COMMITS", "SOURCES", "RELATIONS", "AUDIT_FIELDS", "AUDIT_ENUMS", "audit_files", "check_record", "check_records",
           "read_audit_files", "drop_duplicate_records"]

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


def read_audit_files(release_dir) -> tuple[list[dict], list[Problem]]:
    """Read and check every audit record file of a release: (valid rows, problems).

    Problems (each with file, line, field): ``no_audit_records``, ``file_unreadable``,
    ``malformed_json``, ``not_an_object``, ``missing_field``, ``unknown_value``, ``invalid_value``.
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
        for lineno, line in iter_lines(text):
            obj, bad = parse_line(line)
            if bad is not None:
                problems.append(Problem("malformed_json", "error", bad[0], rel, lineno, bad[1]))
                continue
            row, p = check_record(obj, rel, lineno)
            problems += p
            if row is not None:
                rows.append(row)
    return rows, problems


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
