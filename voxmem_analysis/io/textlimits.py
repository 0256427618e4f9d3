"""Limits of the standard library's text parsers, set deliberately.

:func:`allow_large_csv_fields` raises :func:`csv.field_size_limit` (131,072 characters by
default, "field larger than field limit") to :data:`CSV_FIELD_LIMIT`: a cell is bounded by the
file's size, which is read into memory anyway, so a long response or rubric text is read, not a
crash.  :data:`JSON_MAX_DEPTH` is the nesting depth above which a JSON document is refused before
parsing (:func:`json_depth_problem`), so a hostile file is a finding, never a ``RecursionError``.
"""
from __future__ import annotations

import csv

__all__ = ["CSV_FIELD_LIMIT", "JSON_MAX_DEPTH", "allow_large_csv_fields", "json_depth_problem"]

#: Largest CSV field accepted (characters): 1 GiB.
CSV_FIELD_LIMIT = 1 << 30
#: Deepest nesting of arrays/objects accepted in a JSON document.
JSON_MAX_DEPTH = 200


def allow_large_csv_fields() -> None:
    """Raise the csv module's field limit to :data:`CSV_FIELD_LIMIT` (idempotent)."""
    if csv.field_size_limit() < CSV_FIELD_LIMIT:
        csv.field_size_limit(CSV_FIELD_LIMIT)


def json_depth_problem(text: str | bytes, limit: int = JSON_MAX_DEPTH) -> str | None:
    """Why ``text`` nests deeper than ``limit`` (with the line where it does), or None.

    Counts ``[``/``{`` outside strings in one linear pass: cheap next to parsing."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    if text.count("[") + text.count("{") <= limit:
        return None
    depth, in_str, esc, line = 0, False, False, 1
    for ch in text:
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return f"nested more than {limit} levels deep (line {line})"
        elif ch in "]}":
            depth -= 1
        if ch == "\n":
            line += 1
    return None
