"""A harness line's raw values, as columns: the one place that decides which lines polars reads.

Every non-blank line of a prediction file becomes one row of a *raw frame*: ``_fi`` (file
index), ``_file``, ``_line`` (1-based, as a text editor numbers lines), ``_cond`` (the ablation
condition its folder names, null outside ``ablation/``) and one column per field of
:data:`SCHEMA` holding the line's value when it has the field's JSON type (text, boolean, whole
number in the 64-bit range), else null.

**Who reads a line** (:func:`polars_readable`, the only place this is decided): polars' NDJSON
reader reads every line that :func:`voxmem_analysis.io.bulk.suspect_lines` does not flag, i.e.
every line whose keys are fields of :data:`SCHEMA`, each once, each holding a value of its JSON type
or null, and whose text holds nothing the Rust parser may read differently from Python's ``json``
(control characters, a byte-order mark, surrogate escapes, escaped keys).  Those lines are read
exactly as Python's ``json`` reads them.  Every other line (and a line polars rejects) is read by
Python's ``json`` (:func:`python_frame`), which adds what only it can see:

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

import io
import json
from dataclasses import dataclass, field

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io import bulk as bk
from voxmem_analysis.io.jsonl import parse_object
from voxmem_analysis.io.schema import COLUMN_NAMES, ITEM_FIELDS

__all__ = ["SCHEMA", "STR_FIELDS", "BOOL_FIELDS", "INT_FIELDS", "KNOWN_KEYS", "ODD_SUFFIXES", "FileBatch",
           "split_lines", "polars_readable", "polars_frame", "python_frame", "raw_frame", "as_int", "parse_bool"]

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
_BLANK = r"^[\s\x1c-\x1f]*$"   # Python's str.isspace also counts U+001C..U+001F


@dataclass
class FileBatch:
    """Files read so far and not yet split into lines: raw UTF-8 bytes with index, name, condition."""

    raws: list[bytes] = field(default_factory=list)
    fis: list[int] = field(default_factory=list)
    rels: list[str] = field(default_factory=list)
    conds: list[str | None] = field(default_factory=list)
    size: int = 0

    def add(self, raw: bytes, fi: int, rel: str, cond: str | None) -> None:
        self.raws.append(raw)
        self.fis.append(fi)
        self.rels.append(rel)
        self.conds.append(cond)
        self.size += len(raw)


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
def split_lines(batch: FileBatch) -> tuple[pl.DataFrame, list[int]]:
    """``(lines, files that are not UTF-8)``: ``_fi, _file, _cond, _line, line`` of every non-blank
    line of the batch's files (split on ``\\n`` only; a ``\\r`` before it dropped)."""
    binary = pl.Series("line", batch.raws, dtype=pl.Binary)
    try:
        text = binary.cast(pl.Utf8)   # checks that every file is UTF-8
    except pl.exceptions.ComputeError:
        text = pl.Series("line", [_utf8(binary[i:i + 1]) for i in range(len(binary))], dtype=pl.Utf8)
    del binary
    bad = [batch.fis[i] for i in text.is_null().arg_true().to_list()]
    frame = pl.DataFrame({"_fi": batch.fis, "_file": batch.rels, "_cond": batch.conds}, schema={
        "_fi": pl.Int64, "_file": pl.Utf8, "_cond": pl.Utf8}).with_columns(text)
    if bad:
        frame = frame.filter(pl.col("line").is_not_null())
    line = pl.col("line").str.strip_suffix("\r") if any(b"\r" in r for r in batch.raws) else pl.col("line")
    frame = frame.with_columns(pl.col("line").str.split("\n")).explode("line").with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("_fi").alias("_line"), line)
    return frame.filter(~pl.col("line").str.contains(_BLANK)), bad


def _utf8(one: pl.Series) -> str | None:
    """The text of a one-file binary series, or None when it is not UTF-8."""
    try:
        return one.cast(pl.Utf8).item()
    except pl.exceptions.ComputeError:
        return None


def polars_readable(lines: pl.Series) -> pl.Series:
    """True for each line polars' reader reads exactly as Python's ``json`` does (see the module
    docstring); the others are read by :func:`python_frame`."""
    return ~bk.suspect_lines(lines).cast(pl.Boolean)


def polars_frame(raws: list[bytes], lines: pl.DataFrame, readable: pl.Series) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``(raw frame of the readable lines polars parsed, lines left for Python's json)``.

    ``lines`` carries ``_bi``, the position of its file's bytes in ``raws``.  Each file's bytes are
    parsed in one call (the text is not copied); a file whose parse fails or does not give one row
    per line has its readable lines parsed again on their own, a rejected group halved until the
    bad lines stand alone (those go to Python's json)."""
    parts: list[pl.DataFrame] = []
    slow = [lines.filter(~readable)]
    for part in lines.with_columns(readable.alias("_ok")).partition_by("_fi", maintain_order=True):
        ok = part["_ok"]
        try:
            rec = pl.read_ndjson(io.BytesIO(raws[part["_bi"][0]]), schema=SCHEMA)
        except Exception:  # noqa: BLE001 - any parser complaint: the lines are parsed a group at a time
            rec = None
        keep = part.filter(ok) if not ok.all() else part
        if rec is not None and rec.height == part.height:
            rec = rec.filter(ok) if not ok.all() else rec
        else:
            rec, rejected = bk.parse_lines(keep["line"])
            if rejected:
                slow.append(keep[rejected])
                keep = keep[rec["_pos"].to_list()] if rec is not None else keep.clear()
            rec = rec.drop("_pos") if rec is not None else None
        if rec is not None and rec.height:
            parts.append(pl.concat([keep.select(list(_META)), rec], how="horizontal"))
    frame = pl.concat(parts) if parts else pl.DataFrame(schema={**_META, **SCHEMA})
    return frame, pl.concat([s.select("_fi", "_file", "_cond", "_line", "line") for s in slow])


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


def raw_frame(batch: FileBatch) -> tuple[pl.DataFrame, dict[tuple[int, int], dict], list[int], dict[int, int]]:
    """``(raw frame in file and line order, extras by (file index, line), files not UTF-8, lines per file)``."""
    lines, bad = split_lines(batch)
    counts = dict(lines.group_by("_fi").len().iter_rows())
    position = {fi: k for k, fi in enumerate(batch.fis)}
    lines = lines.with_columns(pl.col("_fi").replace_strict(position, return_dtype=pl.Int64).alias("_bi"))
    fast, slow = polars_frame(batch.raws, lines, polars_readable(lines["line"]))
    parts = [fast]
    extras: dict[tuple[int, int], dict] = {}
    if slow.height:
        slow = slow.sort("_fi", "_line")
        py, ext = python_frame(slow)
        parts.append(py)
        keys = slow.select("_fi", "_line").rows()
        extras = {keys[i]: e for i, e in ext.items()}
    frame = pl.concat(parts, how="diagonal_relaxed") if len(parts) > 1 else fast
    if len(parts) > 1:
        frame = frame.sort("_fi", "_line")
    return frame, extras, bad, counts
