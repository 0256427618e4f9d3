"""A manifest: the CSV saying which file holds which system's verdicts (``path,system,...``, paths relative
to it), read with every problem named by line and column; each reader names the columns it allows."""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path

import polars as pl

from voxmem_analysis.io.engine.files import read_text, user_path_problem
from voxmem_analysis.io.engine.rules import Rule, check, fact, first_of_key, flagged, ordered
from voxmem_analysis.textlimits import csv_field_limit

__all__ = ["manifest_rows", "cell", "REQUIRED"]

REQUIRED = ("path", "system")
EMPTY = fact("manifest_empty", "error", lambda r: r["why"])
UNKNOWN_COLUMN = fact("manifest_unknown_column", "error",
                      lambda r: f"unknown manifest column(s) {r['cols']}; allowed: {', '.join(r['allowed'])}",
                      lambda r: r["field"])
DUPLICATE_COLUMN = fact("manifest_duplicate_column", "error", lambda r: f"manifest column(s) {r['cols']} appear more "
                        "than once", lambda r: r["field"])
MISSING_COLUMN = fact("manifest_missing_column", "error", lambda r: f"manifest has no `{r['col']}` column (header: "
                      f"{','.join(r['header'])})", lambda r: r["field"])

_MISSING_FILE = Rule("missing_file", "error", "path", 2, lambda _: pl.col("_what").is_not_null(),
                     lambda r: f"verdict file {r['path']!r} {r['_what']} (looked for {r['_looked']})")
#: Each rule of one manifest row, once; then a row against the first listing the same file.
ROW_RULES: tuple[Rule, ...] = (
    Rule("manifest_bad_row", "error", None, 0, lambda _: pl.col("_n") != pl.col("_h"),
         lambda r: f"row has {r['_n']} field(s), the header has {r['_h']}"),
    *[Rule("manifest_missing_value", "error", c, 1, lambda _, c=c: pl.col(c).is_null(), lambda r, c=c: f"`{c}` is empty")
      for c in REQUIRED],
    _MISSING_FILE,
)
PATH_RULES: tuple[Rule, ...] = (
    Rule("manifest_duplicate_path", "error", "path", 3, lambda _: pl.col("_copy"),
         lambda r: f"{r['path']!r} is already listed at line {r['_l0']}; its verdicts would be counted twice"),
)


def cell(value):
    """A manifest cell as the loader reads it: None for an empty cell (pandas shows it as NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return value


def _target(base: Path, rel: str) -> tuple[Path | None, str | None]:
    """``(absolute path, why it is no verdict file)`` of a manifest path (a link looping: not resolved)."""
    try:
        target = (base / rel).resolve()
    except (RuntimeError, OSError) as exc:   # Python 3.11-3.12 raise RuntimeError("Symlink loop ..."), 3.13 OSError
        return None, f"cannot be resolved ({exc})"
    if target.is_file():
        return target, None
    return target, "is a directory, not a file" if target.is_dir() else "does not exist"


def manifest_rows(path, columns: tuple[str, ...]):
    """``(usable rows, problems, dropped rows)`` of a manifest: pandas ``*columns, manifest_line, resolved``;
    the dropped rows (verdict file unreadable) as ``system, ..., manifest_line, reason``."""
    import pandas as pd

    path = Path(path)
    rel = str(path)
    cols = [*columns, "manifest_line", "resolved"]
    empty = pd.DataFrame(columns=cols)
    bad = user_path_problem(path, "no_manifest", "manifest")
    if bad is not None:
        return empty, [bad], []
    text, problems = read_text(path, rel)
    if text is None:
        return empty, problems, []
    with csv_field_limit():
        reader = csv.reader(io.StringIO(text))
        records = [(fields, reader.line_num) for fields in reader]
    body = [(f, n) for f, n in records if f and not all(not c.strip() for c in f)]   # blank rows are skipped
    if not body:
        return empty, problems + [EMPTY.problem(rel, why="manifest has no header and no rows")], []
    (fields, lineno), body = body[0], body[1:]
    header = [f.strip().lower() for f in fields]
    problems += _header_problems(header, rel, lineno, columns)
    if any(p.severity == "error" for p in problems):
        return empty, problems, []
    frame = check(_row_frame(header, body, path.parent, rel, columns).lazy(), ROW_RULES)
    frame = first_of_key(frame, ["resolved", "_ok"], {"_l0": "_line"})
    frame = check(frame, PATH_RULES, gate=pl.col("_ok"), prefix="d").collect()
    problems += ordered(flagged(frame, ROW_RULES, lambda r, i, n: (r["_seq"], i))
                        + flagged(frame, PATH_RULES, lambda r, i, n: (r["_seq"], len(ROW_RULES) + i), prefix="d"))
    missing = ROW_RULES.index(_MISSING_FILE)
    dropped = [{**{c: r[c] for c in columns if c != "path"}, "manifest_line": r["_line"], "reason": f"file {r['_what']}"}
               for r in frame.filter(pl.col(f"r{missing}")).iter_rows(named=True)]
    rows = frame.lazy().filter(pl.col("_ok")).select(*columns, pl.col("_line").alias("manifest_line"), "resolved").collect()
    if not rows.height and not any(p.severity == "error" for p in problems):
        problems.append(EMPTY.problem(rel, why="manifest lists no verdict file"))
    return (pd.DataFrame(rows.rows(), columns=cols) if rows.height else empty), problems, dropped


def _header_problems(header: list[str], rel: str, lineno: int, columns: tuple[str, ...]) -> list:
    """The header's problems: unknown, repeated and missing columns."""
    out = []
    unknown = [c for c in header if c not in columns]
    if unknown:
        out.append(UNKNOWN_COLUMN.problem(rel, lineno, cols=unknown, allowed=columns, field=unknown[0]))
    dup = sorted({c for c in header if header.count(c) > 1})
    if dup:
        out.append(DUPLICATE_COLUMN.problem(rel, lineno, cols=dup, field=dup[0]))
    out += [MISSING_COLUMN.problem(rel, lineno, col=c, header=header, field=c) for c in REQUIRED if c not in header]
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
        target, why = _target(base, cells["path"][-1]) if cells["path"][-1] and cells["system"][-1] else (None, None)
        resolved.append(None if target is None else str(target))
        what.append(why)
        looked.append(str(target) if target is not None else str(base / cells["path"][-1]) if cells["path"][-1] else None)
    return pl.DataFrame({**cells, "_fi": [0] * len(body), "_seq": list(range(len(body))), "_file": [rel] * len(body),
                         "_line": [n for _, n in body], "_n": [len(f) for f, _ in body], "_h": [len(header)] * len(body),
                         "resolved": resolved, "_what": what, "_looked": looked},
                        schema_overrides={c: pl.Utf8 for c in (*columns, "resolved", "_what", "_looked")})
