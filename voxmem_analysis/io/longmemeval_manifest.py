"""The manifest of LongMemEval verdicts: a small CSV saying which file holds which system's verdicts
(format in :mod:`voxmem_analysis.io.longmemeval`), read with every problem named by line and column."""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pandas as pd

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.files import read_text

__all__ = ["MANIFEST_COLUMNS", "read_manifest", "manifest_rows"]

#: Columns a manifest may have (``path`` and ``system`` required).
MANIFEST_COLUMNS: tuple[str, ...] = ("path", "system", "budget", "judge")
_REQUIRED_MANIFEST = ("path", "system")


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


def manifest_rows(path, columns: tuple[str, ...] = MANIFEST_COLUMNS) -> tuple[pd.DataFrame, list[Problem], list[dict]]:
    """:func:`read_manifest` plus the rows whose verdict file cannot be read (``system, budget,
    judge, manifest_line, reason``), so that what they leave out can be named.  ``columns``: the
    columns a manifest may have (``path`` and ``system`` first; the Audio MultiChallenge manifest
    has ``output_modality`` where this one has ``budget``)."""
    dropped: list[dict] = []
    path = Path(path)
    rel = str(path)
    problems: list[Problem] = []
    cols = [*columns, "manifest_line", "resolved"]
    empty = pd.DataFrame(columns=cols)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "does not exist"
        problems.append(Problem("no_manifest", "error", f"manifest {rel!r} {what}"))
        return empty, problems, dropped
    text = _read_text(path, rel, problems)
    if text is None:
        return empty, problems, dropped
    reader = csv.reader(io.StringIO(text))
    header: list[str] | None = None
    rows: list[dict] = []
    seen_paths: dict[str, int] = {}
    for fields in reader:
        lineno = reader.line_num
        if not fields or all(not f.strip() for f in fields):
            continue
        if header is None:
            header = [f.strip().lower() for f in fields]
            unknown = [c for c in header if c not in columns]
            if unknown:
                problems.append(Problem("manifest_unknown_column", "error",
                                        f"unknown manifest column(s) {unknown}; allowed: {', '.join(columns)}",
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
        resolved = (path.parent / rec["path"]).resolve()
        if not resolved.is_file():
            what = "is a directory, not a file" if resolved.is_dir() else "does not exist"
            problems.append(Problem("missing_file", "error", f"verdict file {rec['path']!r} {what} "
                                    f"(looked for {resolved})", rel, lineno, "path"))
            dropped.append({**{c: rec.get(c) for c in columns if c != "path"}, "manifest_line": lineno,
                            "reason": f"file {what}"})
            continue
        key = str(resolved)
        if key in seen_paths:
            problems.append(Problem("manifest_duplicate_path", "error",
                                    f"{rec['path']!r} is already listed at line {seen_paths[key]}; "
                                    "its verdicts would be counted twice", rel, lineno, "path"))
            continue
        seen_paths[key] = lineno
        rows.append({**{c: rec.get(c) for c in columns}, "manifest_line": lineno, "resolved": key})
    if header is None:
        problems.append(Problem("manifest_empty", "error", "manifest has no header and no rows", rel))
    elif not rows and not any(p.severity == "error" for p in problems):
        problems.append(Problem("manifest_empty", "error", "manifest lists no verdict file", rel))
    return (pd.DataFrame(rows, columns=cols) if rows else empty), problems, dropped
