"""A harness line's raw values, as columns (polars for the lines it reads as Python's json does, json for the rest).

Every non-blank line of a prediction file becomes one row of a *raw frame*: ``_fi`` (file
index), ``_file``, ``_line`` (1-based, as a text editor numbers lines), ``_cond`` (the ablation
condition its folder names, null outside ``ablation/``) and one column per field of
:data:`SCHEMA` holding the line's value when it has the field's JSON type (text, boolean, whole
number in the 64-bit range), else null.

**Who reads a line** (decided in one place, :mod:`voxmem_analysis.io.key_census`): polars' NDJSON
reader parses every file whole with :data:`SCHEMA`; the key census then keeps the rows polars
read exactly as Python's ``json`` would (same keys, each once, text fields holding text, no
unpaired surrogate).  Every other line (one polars rejects, one the census does not keep) is read
by Python's ``json`` (:func:`python_frame`), which adds what only it can see:

* ``_p0_code``, ``_p0_msg``, ``_p0_field``: the line is not JSON, or not an object;
* ``_uni``: fields whose name or text is not valid Unicode (an unpaired surrogate escape);
* for a field holding a value of another JSON type (``"verdict": "true"``, ``"session_count": 3.0``,
  ``"judge_raw": {...}``), the columns ``<field>.t`` (Python type name), ``.s`` (``str(value)``), ``.r``
  (``repr(value)``), ``.j`` (``json.dumps`` of a dict or list), ``.truthy`` (``bool(value)``), ``.b``
  (the boolean a text ``"true"``/``"false"`` means) and ``.i`` (the whole number it means); these
  columns exist only in batches that need them;
* fields outside the frame (kept as extra columns), returned beside the frame by line position.

Nothing here judges a value: the rules are :mod:`voxmem_analysis.io.prediction_rules`.
"""
from __future__ import annotations

import bisect
import io
import json
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from voxmem_analysis.io import bulk as bk
from voxmem_analysis.io.files import read_raw
from voxmem_analysis.io.jsonl import parse_object
from voxmem_analysis.io.key_census import line_ranges, readable_lines
from voxmem_analysis.io.schema import COLUMN_NAMES, ITEM_FIELDS

__all__ = ["SCHEMA", "STR_FIELDS", "BOOL_FIELDS", "INT_FIELDS", "KNOWN_KEYS", "ODD_SUFFIXES", "FileRead", "read_file",
           "file_rows", "python_frame", "raw_frame", "as_int", "parse_bool"]

SCHEMA = bk.SCHEMA
STR_FIELDS, BOOL_FIELDS, INT_FIELDS = bk.STR_FIELDS, bk.BOOL_FIELDS, bk.INT_FIELDS
#: Fields a line may carry that are not extra columns (the frame's own columns and the item fields).
KNOWN_KEYS = frozenset(COLUMN_NAMES) | frozenset(ITEM_FIELDS) | {
    "context_length", "memory_operation", "expected_response", "question_text", "gold_json", "judge_raw",
    "input_condition", "provider_rejected"}
#: Columns describing a value of another JSON type than its field's (see the module docstring).
ODD_SUFFIXES = {".t": pl.Utf8, ".s": pl.Utf8, ".r": pl.Utf8, ".j": pl.Utf8, ".truthy": pl.Boolean, ".b": pl.Boolean,
                ".i": pl.Int64}
_META = {"_fi": pl.Int64, "_file": pl.Utf8, "_line": pl.Int64, "_cond": pl.Utf8}



@dataclass
class FileRead:
    """One prediction file read and parsed (see :func:`read_file`)."""

    fi: int
    rel: str
    cond: str | None
    problems: list = field(default_factory=list)
    raw: bytes | None = None
    utf8: bool = True
    rec: pl.DataFrame | None = None
    parsed: np.ndarray | None = None
    ranges: tuple = ()
    readable: np.ndarray | None = None   # rows of rec polars read as Python's json reads their line


def read_file(path, fi: int, rel: str, cond: str | None) -> FileRead:
    """Read, parse and count the keys of one file (:func:`voxmem_analysis.io.files.read_raw`,
    :func:`file_rows`); the work of one thread (decompression, parsing and counting release the GIL)."""
    raw, problems = read_raw(path, rel)
    out = FileRead(fi, rel, cond, problems, raw)
    if raw is None:
        return out
    out.rec, out.parsed, out.ranges, out.readable, whole = file_rows(raw)
    if not whole:
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            out.utf8 = False
    return out


# ----------------------------------------------------------------------------- value helpers
def parse_bool(v) -> tuple[bool | None, bool]:
    """``(value, ok)`` of a true/false field: a JSON boolean or null as it is, the text
    ``"true"``/``"false"`` (any case, spaces around) as that boolean; anything else is not ok."""
    if isinstance(v, bool) or v is None:
        return v, True
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true", True
    return None, False


def as_int(v) -> int | None:
    """A whole number, or None (booleans, fractions, text that is not an integer and numbers
    outside the 64-bit range are None)."""
    if v is None or v == "" or isinstance(v, bool):
        return None
    out = None
    if isinstance(v, int):
        out = v
    elif isinstance(v, float):
        out = int(v) if v.is_integer() else None
    elif isinstance(v, str) and v.strip().lstrip("-").isdigit():
        try:
            out = int(v.strip())
        except ValueError:   # "--5", "²": digits to str.isdigit, not to int()
            return None
    return out if out is not None and -2**63 <= out < 2**63 else None


def _text(s: str) -> str:
    """``s`` as text a frame can hold (an unpaired surrogate becomes U+FFFD; the line is rejected anyway)."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return s.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _jsonable(v):
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v


# ----------------------------------------------------------------------------- lines
def file_rows(raw: bytes) -> tuple[pl.DataFrame, np.ndarray, tuple, np.ndarray, bool]:
    """``(rows polars parsed, the index of each row's line, (line starts, ends and numbers), which rows
    polars read as Python's json reads their line, whether polars parsed the whole file)`` of one
    file's bytes.

    The whole file is parsed in one call (its bytes are not copied or decoded); when that fails or
    does not give one row per line, the lines are parsed in groups, a rejected group halved until
    the bad lines stand alone.  Which rows polars read as Python's ``json`` does is decided by
    :func:`voxmem_analysis.io.key_census.readable_lines` (the one place), in the reading thread."""
    starts, ends, numbers = line_ranges(raw)
    try:
        rec = pl.read_ndjson(io.BytesIO(raw), schema=SCHEMA) if len(starts) else None
    except Exception:  # noqa: BLE001 - any parser complaint: the lines are parsed a group at a time
        rec = None
    whole = rec is not None and rec.height == len(starts)
    if whole:
        parsed = np.arange(len(starts))
    else:
        rec, parsed = _parse_groups([raw[s:e] for s, e in zip(starts.tolist(), ends.tolist())])
    if rec is None or not len(parsed):
        rec, parsed = pl.DataFrame(schema=SCHEMA), np.zeros(0, dtype=np.int64)
    ok = readable_lines(raw, rec, starts[parsed], ends[parsed], SCHEMA, whole)
    return rec, parsed, (starts, ends, numbers), ok, whole


def _parse_groups(lines: list[bytes]) -> tuple[pl.DataFrame | None, np.ndarray]:
    """Lines parsed in groups (a rejected group halved until its bad lines stand alone): ``(rows,
    index of the line of each row)``."""
    parts: list[pl.DataFrame] = []
    index: list[np.ndarray] = []

    def go(start: int, stop: int) -> None:
        try:
            df = pl.read_ndjson(io.BytesIO(b"\n".join(lines[start:stop])), schema=SCHEMA)
            if df.height != stop - start:
                raise ValueError("row count differs from line count")
            parts.append(df)
            index.append(np.arange(start, stop))
        except Exception:  # noqa: BLE001 - any parser complaint: split, then leave it to Python's json
            if stop - start <= _GROUP_FLOOR:
                return
            mid = (start + stop) // 2
            go(start, mid)
            go(mid, stop)

    if lines:
        go(0, len(lines))
    if not parts:
        return None, np.zeros(0, dtype=np.int64)
    return pl.concat(parts), np.concatenate(index)


_GROUP_FLOOR = 8


def python_frame(lines: pl.DataFrame) -> tuple[pl.DataFrame, dict[int, dict]]:
    """``(raw frame, extras)`` of lines read by Python's ``json`` (``extras``: position -> fields
    outside the frame, in the line's order, dicts and lists as JSON text)."""
    n = lines.height
    cols: dict[str, list] = {f: [None] * n for f in SCHEMA}
    odd: dict[str, dict[str, list]] = {}
    p0 = {"_p0_code": [None] * n, "_p0_msg": [None] * n, "_p0_field": [None] * n}
    uni: list[list[str] | None] = [None] * n
    extras: dict[int, dict] = {}
    for i, line in enumerate(lines["line"].to_list()):
        rec, bad = parse_object(line)
        if bad is not None:
            p0["_p0_code"][i], p0["_p0_msg"][i], p0["_p0_field"][i] = bad
            continue
        uni[i] = _not_unicode(rec)
        for f, dtype in SCHEMA.items():
            v = rec.get(f)
            if v is not None:
                _put(cols, odd, f, dtype, v, i, n)
        if not uni[i]:
            ext = {k: _jsonable(v) for k, v in rec.items() if k not in KNOWN_KEYS}
            if ext:
                extras[i] = ext
    frame = lines.select(list(_META)).with_columns(
        [pl.Series(f, v, dtype=SCHEMA[f]) for f, v in cols.items()]
        + [pl.Series(k, v, dtype=pl.Utf8) for k, v in p0.items()]
        + [pl.Series("_uni", uni, dtype=pl.List(pl.Utf8))]
        + [pl.Series(f"{f}{s}", v, dtype=ODD_SUFFIXES[s]) for f, d in odd.items() for s, v in d.items()])
    return frame, extras


def _not_unicode(rec: dict) -> list[str]:
    """Field names (shown with ``\\u`` escapes) whose name or text holds an unpaired surrogate."""
    out = []
    for k, v in rec.items():
        try:
            k.encode("utf-8")
        except UnicodeEncodeError:
            out.append("k" + k.encode("utf-8", "backslashreplace").decode("utf-8"))
            continue
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                out.append("v" + k)
    return out


def _put(cols: dict, odd: dict, f: str, dtype, v, i: int, n: int) -> None:
    """Store value ``v`` of field ``f`` at row ``i``: in its column when of the field's JSON type,
    else described in the odd-value columns."""
    if dtype == pl.Utf8 and isinstance(v, str):
        cols[f][i] = _text(v)
        return
    if dtype == pl.Boolean and isinstance(v, bool):
        cols[f][i] = v
        return
    if dtype == pl.Int64 and isinstance(v, int) and not isinstance(v, bool) and -2**63 <= v < 2**63:
        cols[f][i] = v
        return
    d = odd.setdefault(f, {s: [None] * n for s in ODD_SUFFIXES})
    d[".t"][i], d[".s"][i], d[".r"][i] = type(v).__name__, _text(str(v)), repr(v)
    d[".j"][i] = json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else None
    d[".truthy"][i] = bool(v)
    d[".b"][i] = parse_bool(v)[0]
    d[".i"][i] = as_int(v)


def raw_frame(batch: list[FileRead]) -> tuple[pl.DataFrame, dict[tuple[int, int], dict], dict[int, int]]:
    """``(raw frame in file and line order, extras by (file index, line), non-blank lines per file)`` of
    files read by :func:`read_file` (UTF-8 ones): polars' rows for the lines it reads as Python's
    ``json`` does (decided by :func:`voxmem_analysis.io.key_census.readable_lines`, the one place), Python's
    ``json`` for the others."""
    recs, oks, where, meta = [], [], [], []
    slow: list[tuple[int, str, str | None, int, bytes]] = []
    offset = 0
    for f in batch:
        starts, ends, numbers = f.ranges
        recs.append(f.rec)
        oks.append(f.readable)
        where.append((offset, f.raw, starts[f.parsed], ends[f.parsed]))
        meta.append((f.fi, f.rel, f.cond, numbers[f.parsed]))
        rest = np.setdiff1d(np.arange(len(starts)), f.parsed, assume_unique=True)
        slow += [(f.fi, f.rel, f.cond, int(numbers[i]), f.raw[starts[i]:ends[i]]) for i in rest.tolist()]
        offset += f.rec.height
    rec = pl.concat(recs) if recs else pl.DataFrame(schema=SCHEMA)
    first_rows = [w[0] for w in where]

    def line_of(i: int) -> tuple[bytes, int, int]:
        off, raw, st, en = where[bisect.bisect_right(first_rows, i) - 1]
        return raw, int(st[i - off]), int(en[i - off])

    ok = _joined(oks, bool)
    files = pl.DataFrame([m[:3] for m in meta], schema={"_fi": pl.Int64, "_file": pl.Utf8, "_cond": pl.Utf8}, orient="row")
    at = np.repeat(np.arange(len(meta)), [len(m[3]) for m in meta])
    frame = pl.concat([files[at].with_columns(pl.Series("_line", np.concatenate([m[3] for m in meta]) if meta else [],
                                                        dtype=pl.Int64)).select(list(_META)), rec], how="horizontal")
    if not ok.all():
        mask = pl.Series(ok)
        again = frame.filter(~mask).select("_fi", "_file", "_cond", "_line").rows()
        lines = [line_of(i) for i in np.flatnonzero(~ok).tolist()]
        slow += [(fi, rel, cond, line, raw[s:e]) for (fi, rel, cond, line), (raw, s, e) in zip(again, lines)]
        frame = frame.filter(mask)
    return _with_python(frame, slow)


def _joined(parts: list[np.ndarray], dtype) -> np.ndarray:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)


def _with_python(frame: pl.DataFrame, slow: list) -> tuple:
    """``frame`` with the rows of the lines Python's ``json`` reads (blank ones to it are dropped)."""
    counts = dict(frame.group_by("_fi").len().iter_rows()) if frame.height else {}
    texts = [(fi, rel, cond, n, t) for fi, rel, cond, n, t in
             ((fi, rel, cond, n, b.decode("utf-8").rstrip("\r")) for fi, rel, cond, n, b in slow) if t.strip()]
    for fi, *_ in texts:
        counts[fi] = counts.get(fi, 0) + 1
    extras: dict[tuple[int, int], dict] = {}
    if texts:
        lines = pl.DataFrame(texts, schema={"_fi": pl.Int64, "_file": pl.Utf8, "_cond": pl.Utf8, "_line": pl.Int64,
                                            "line": pl.Utf8}, orient="row")
        py, ext = python_frame(lines)
        extras = {(texts[i][0], texts[i][3]): e for i, e in ext.items()}
        frame = pl.concat([frame, py], how="diagonal_relaxed").sort("_fi", "_line")
    return frame, extras, counts
