"""The manifest of LongMemEval verdicts: a small CSV saying which file holds which system's verdicts
(format in :mod:`voxmem_analysis.io.longmemeval`), read with every problem named by line and column."""
from __future__ import annotations

import contextlib
import csv
import io
import math
from pathlib import Path

import pandas as pd

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.files import read_text

__all__ = ["MANIFEST_COLUMNS", "read_manifest", "manifest_rows", "csv_cells", "cell"]

#: Columns a manifest may have (``path`` and ``system`` required).
MANIFEST_COLUMNS: tuple[str, ...] = ("path", "system", "budget", "judge")
_REQUIRED_MANIFEST = ("path", "system")


@contextlib.contextmanager
def csv_cells(text: str):
    """While open, Python's csv module reads cells of any length in ``text`` (its default limit,
    131,072 characters, is for the process; a question table may hold long texts): the limit is
    raised to the text's length and set back after."""
    old = csv.field_size_limit()
    csv.field_size_limit(max(old, len(text) + 1))
    try:
        yield
    finally:
        csv.field_size_limit(old)


def cell(value):
    """A manifest cell as the loader reads it: None for an empty cell (pandas shows it as NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _resolved(base: Path, rel: str) -> tuple[Path | None, str | None]:
    """``(absolute path, None)`` of a manifest path, or ``(None, why)`` when it cannot be resolved
    (a symbolic link pointing at itself, directly or through others)."""
    try:
        return (base / rel).resolve(), None
    except (RuntimeError, OSError) as exc:   # Python 3.11-3.12 raise RuntimeError("Symlink loop ..."), 3.13 OSError
        return None, f"cannot be resolved ({exc})"


def _read_text(path: Path, rel: str, problems: list[Problem]) -> str | None:
    text, found = read_text(path, rel)
    problems.extend(found)
    return text


def read_manifest(path) -> tuple[pd.DataFrame, list[Problem]]:
    """Read a manifest CSV.

    Returns
    -------
    (DataFrame, problems)
        Columns ``path, system, budget, judge, manifest_line, resolved`` (``resolved``: the
        absolute path of the verdict file; ``budget``/``judge`` None when empty), one row per
        usable manifest row; rows with an error are left out and reported.
    """
    frame, problems, _ = manifest_rows(path)
    return frame, problems


def manifest_rows(path) -> tuple[pd.DataFrame, list[Problem], list[dict]]:
    """:func:`read_manifest` plus the rows whose verdict file cannot be read (``system, budget,
    judge, manifest_line, reason``), so that what they leave out can be named."""
    dropped: list[dict] = []
    path = Path(path)
    rel = str(path)
    problems: list[Problem] = []
    cols = [*MANIFEST_COLUMNS, "manifest_line", "resolved"]
    empty = pd.DataFrame(columns=cols)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        problems.append(Problem("no_manifest", "error", f"manifest {rel!r} {what}"))
        return empty, problems, dropped
    text = _read_text(path, rel, problems)
    if text is None:
        return empty, problems, dropped
    with csv_cells(text):
        reader = csv.reader(io.StringIO(text))
        records = [(fields, reader.line_num) for fields in reader]
    header: list[str] | None = None
    rows: list[dict] = []
    seen_paths: dict[str, int] = {}
    for fields, lineno in records:
        if not fields or all(not f.strip() for f in fields):
            continue
        if header is None:
            header = [f.strip().lower() for f in fields]
            unknown = [c for c in header if c not in MANIFEST_COLUMNS]
            if unknown:
                problems.append(Problem("manifest_unknown_column", "error",
                                        f"unknown manifest column(s) {unknown}; allowed: {', '.join(MANIFEST_COLUMNS)}",
                                        rel, lineno, unknown[0]))
            dup = sorted({c for c in header if header.count(c) > 1})
            if dup:
                problems.append(Problem("manifest_duplicate_column", "error",
                                        f"manifest column(s) {dup} appear more than once", rel, lineno, dup[0]))
            for c in _REQUIRED_MANIFEST:
                if c not in header:
                    problems.append(Problem("manifest_missing_column", "error",
                                            f"manifest has no `{c}` column (header: {','.join(header)})", rel, lineno, c))
            if any(p.severity == "error" for p in problems):
                return empty, problems, dropped
            continue
        if len(fields) != len(header):
            problems.append(Problem("manifest_bad_row", "error",
                                    f"row has {len(fields)} field(s), the header has {len(header)}", rel, lineno))
            continue
        rec = {c: (f.strip() or None) for c, f in zip(header, fields)}
        bad = False
        for c in _REQUIRED_MANIFEST:
            if rec.get(c) is None:
                problems.append(Problem("manifest_missing_value", "error", f"`{c}` is empty", rel, lineno, c))
                bad = True
        if bad:
            continue
        resolved, what = _resolved(path.parent, rec["path"])
        if resolved is None or not resolved.is_file():
            what = what or ("is a directory, not a file" if resolved.is_dir() else "does not exist")
            problems.append(Problem("missing_file", "error", f"verdict file {rec['path']!r} {what} "
                                    f"(looked for {resolved or path.parent / rec['path']})", rel, lineno, "path"))
            dropped.append({"system": rec["system"], "budget": rec.get("budget"), "judge": rec.get("judge"),
                            "manifest_line": lineno, "reason": f"file {what}"})
            continue
        key = str(resolved)
        if key in seen_paths:
            problems.append(Problem("manifest_duplicate_path", "error",
                                    f"{rec['path']!r} is already listed at line {seen_paths[key]}; "
                                    "its verdicts would be counted twice", rel, lineno, "path"))
            continue
        seen_paths[key] = lineno
        rows.append({"path": rec["path"], "system": rec["system"], "budget": rec.get("budget"),
                     "judge": rec.get("judge"), "manifest_line": lineno, "resolved": key})
    if header is None:
        problems.append(Problem("manifest_empty", "error", "manifest has no header and no rows", rel))
    elif not rows and not any(p.severity == "error" for p in problems):
        problems.append(Problem("manifest_empty", "error", "manifest lists no verdict file", rel))
    return (pd.DataFrame(rows, columns=cols) if rows else empty), problems, dropped
