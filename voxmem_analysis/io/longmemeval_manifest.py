"""The manifest of LongMemEval verdicts: a small CSV saying which file holds which system's verdicts
(format in :mod:`voxmem_analysis.io.longmemeval`), read with every problem named by line and column."""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import pandas as pd
import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.files import read_text
from voxmem_analysis.io.rules import Rule, check, flagged
from voxmem_analysis.textlimits import csv_field_limit

__all__ = ["MANIFEST_COLUMNS", "read_manifest", "manifest_rows", "cell"]

#: Columns a manifest may have (``path`` and ``system`` required).
MANIFEST_COLUMNS: tuple[str, ...] = ("path", "system", "budget", "judge")
_REQUIRED_MANIFEST = ("path", "system")


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
    with csv_field_limit():
        reader = csv.reader(io.StringIO(text))
        records = [(fields, reader.line_num) for fields in reader]
    body = [(f, n) for f, n in records if f and not all(not c.strip() for c in f)]   # blank rows are skipped
    if not body:
        problems.append(Problem("manifest_empty", "error", "manifest has no header and no rows", rel))
        return empty, problems, dropped
    (fields, lineno), body = body[0], body[1:]
    header = [f.strip().lower() for f in fields]
    problems += _header_problems(header, rel, lineno, columns)
    if any(p.severity == "error" for p in problems):
        return empty, problems, dropped
    frame = check(_row_frame(header, body, path.parent, rel, columns).lazy(), _ROW_RULES)
    frame = frame.with_columns((pl.int_range(pl.len()).over("resolved", "_ok") > 0).alias("_copy"),
                               pl.col("_line").first().over("resolved", "_ok").alias("_l0"))
    frame = check(frame, _PATH_RULES, gate=pl.col("_ok"), prefix="d").collect()
    keyed = (flagged(frame, _ROW_RULES, lambda r, i, n: (r["_seq"], i))
             + flagged(frame, _PATH_RULES, lambda r, i, n: (r["_seq"], len(_ROW_RULES) + i), prefix="d"))
    problems += [p for _, p in sorted(keyed, key=lambda e: e[0])]
    missing = _ROW_RULES.index(_MISSING_FILE)
    dropped += [{**{c: r[c] for c in columns if c != "path"}, "manifest_line": r["_line"], "reason": f"file {r['_what']}"}
                for r in frame.filter(pl.col(f"r{missing}")).iter_rows(named=True)]
    rows = frame.lazy().filter(pl.col("_ok")).select(*columns, pl.col("_line").alias("manifest_line"),
                                                     "resolved").collect()
    if not rows.height and not any(p.severity == "error" for p in problems):
        problems.append(Problem("manifest_empty", "error", "manifest lists no verdict file", rel))
    return (pd.DataFrame(rows.rows(), columns=cols) if rows.height else empty), problems, dropped


def _header_problems(header: list[str], rel: str, lineno: int, columns: tuple[str, ...]) -> list[Problem]:
    """The header's problems: unknown, repeated and missing columns."""
    out = []
    unknown = [c for c in header if c not in columns]
    if unknown:
        out.append(Problem("manifest_unknown_column", "error",
                           f"unknown manifest column(s) {unknown}; allowed: {', '.join(columns)}", rel, lineno, unknown[0]))
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup:
        out.append(Problem("manifest_duplicate_column", "error", f"manifest column(s) {dup} appear more than once",
                           rel, lineno, dup[0]))
    for c in _REQUIRED_MANIFEST:
        if c not in header:
            out.append(Problem("manifest_missing_column", "error",
                               f"manifest has no `{c}` column (header: {','.join(header)})", rel, lineno, c))
    return out


def _row_frame(header: list[str], body: list, base: Path, rel: str, columns: tuple[str, ...]) -> pl.DataFrame:
    """The raw frame of the manifest rows: each cell stripped (None when empty), the field count, and
    where the path leads (``resolved``; ``_what`` says why it is not a verdict file)."""
    cells = {c: [] for c in columns}
    resolved, what, looked = [], [], []
    for fields, _ in body:
        rec = dict(zip(header, fields)) if len(fields) == len(header) else {}
        for c in columns:
            cells[c].append(rec.get(c, "").strip() or None)
        target, why = _resolved(base, cells["path"][-1]) if cells["path"][-1] and cells["system"][-1] else (None, None)
        if why is None and target is not None and not target.is_file():
            why = "is a directory, not a file" if target.is_dir() else "does not exist"
        resolved.append(None if target is None else str(target))
        what.append(why)
        looked.append(str(target) if target is not None else str(base / cells["path"][-1]) if cells["path"][-1] else None)
    return pl.DataFrame({**cells, "_fi": [0] * len(body), "_seq": list(range(len(body))), "_file": [rel] * len(body),
                         "_line": [n for _, n in body], "_n": [len(f) for f, _ in body], "_h": [len(header)] * len(body),
                         "resolved": resolved, "_what": what, "_looked": looked},
                        schema_overrides={c: pl.Utf8 for c in (*columns, "resolved", "_what", "_looked")})


_MISSING_FILE = Rule("missing_file", "error", "path", 2, lambda _: pl.col("_what").is_not_null(),
                     lambda r: f"verdict file {r['path']!r} {r['_what']} (looked for {r['_looked']})")
#: Each rule of one manifest row, once (the header's are :func:`_header_problems`); problems in this order.
_ROW_RULES: tuple[Rule, ...] = (
    Rule("manifest_bad_row", "error", None, 0, lambda _: pl.col("_n") != pl.col("_h"),
         lambda r: f"row has {r['_n']} field(s), the header has {r['_h']}"),
    *[Rule("manifest_missing_value", "error", c, 1, lambda _, c=c: pl.col(c).is_null(), lambda r, c=c: f"`{c}` is empty")
      for c in _REQUIRED_MANIFEST],
    _MISSING_FILE,
)
#: A row against the first listing the same verdict file.
_PATH_RULES: tuple[Rule, ...] = (
    Rule("manifest_duplicate_path", "error", "path", 3, lambda _: pl.col("_copy"),
         lambda r: f"{r['path']!r} is already listed at line {r['_l0']}; its verdicts would be counted twice"),
)
