"""Which lines polars' NDJSON reader reads exactly as Python's ``json`` module reads them.

polars is given a strict schema (:data:`STRICT`: short text fields as ``Categorical``, which
refuses numbers, booleans, objects and arrays; ``Boolean``; ``Int64``), so a line whose value has
another JSON type than its field's makes the parser fail and goes to Python's ``json``.  What a
strict schema cannot see is decided here, from the raw bytes, for every line at once (numpy,
no per-line Python, no regular expression), by a *key census*:

* a key token is an unescaped closing quote followed by ``:``; a line's key tokens must be
  exactly its fields that polars read as not null, plus its fields written ``"field": null``
  (their names read from the bytes, each a field of the schema, once, read by polars as null).
  A key outside the schema (kept as an extra column by Python's reader), a repeated key (an error
  for Python's reader), or an object with keys in a long text field breaks the equality;
* a long text field (``response``, ``question_text``, ``gold_json``, ``judge_raw``, ``error``; polars
  writes any JSON value there as text) whose text could be a number, ``true``/``false``, ``{}`` or an
  array is checked in the bytes to be written as a string (``"response": "``);
* a text polars read as holding U+0000 (also what it makes of an unpaired surrogate escape);
* lines with an escaped backslash (``\\\\``, which makes quote counting ambiguous) or with space
  between a closing quote and what follows (``"key" : 1``) are not counted: Python reads them.

A line that fails any test is read by Python's ``json`` (a false alarm only costs time).
"""
from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["TEXT_LONG", "strict_schema", "line_ranges", "readable_rows"]

_QUOTE, _COLON, _BACKSLASH, _SPACE, _TAB, _CR = 34, 58, 92, 32, 9, 13
#: Text fields that may be long (read as ``Utf8``; their type is checked here).
TEXT_LONG = ("question_text", "gold_json", "judge_raw", "response", "error")


def strict_schema(schema: dict) -> dict:
    """The schema polars parses with: short text fields as ``Categorical`` (type-strict)."""
    return {f: (pl.Categorical if t == pl.Utf8 and f not in TEXT_LONG else t) for f, t in schema.items()}


def line_ranges(raw: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, end, 1-based number)`` of each line of ``raw`` holding more than spaces, tabs and
    carriage returns (the lines polars reads; a line of other white space makes its parse fail)."""
    a = np.frombuffer(raw, dtype=np.uint8)
    nl = np.flatnonzero(a == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(a)]))
    if len(a) and a[-1] == 10:
        starts, ends = starts[:-1], ends[:-1]
    ink = (a != _SPACE) & (a != _TAB) & (a != _CR) & (a != 10)
    cum = np.concatenate(([0], np.cumsum(ink, dtype=np.int64)))
    keep = cum[ends] > cum[starts]
    return starts[keep], ends[keep], np.flatnonzero(keep) + 1


def _line_of(pos: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.searchsorted(starts, pos, side="right") - 1


def readable_rows(raw: bytes, starts: np.ndarray, ends: np.ndarray, rec: pl.DataFrame, schema: dict) -> np.ndarray:
    """True for each row of ``rec`` (parsed by polars from the line ``raw[starts[i]:ends[i]]``) that
    Python's ``json`` would read the same (see the module docstring)."""
    n = len(starts)
    ok = np.ones(n, dtype=bool)
    if not n:
        return ok
    a = np.frombuffer(raw, dtype=np.uint8)
    bs = np.flatnonzero(a == _BACKSLASH)
    if len(bs) > 1:
        double = bs[1:][np.diff(bs) == 1]
        ok[_rows_at(double, starts, ends)] = False
    q = np.flatnonzero(a == _QUOTE)
    if len(q):
        q = q[(q == 0) | (a[np.maximum(q - 1, 0)] != _BACKSLASH)]     # unescaped quotes
    qrow = _line_of(q, starts)
    inrow = (qrow >= 0) & (q < ends[np.maximum(qrow, 0)])
    q, qrow = q[inrow], qrow[inrow]
    first = np.searchsorted(qrow, np.arange(n))
    closing = ((np.arange(len(q)) - first[qrow]) % 2) == 1
    after = a[np.minimum(q + 1, len(a) - 1)]
    after = np.where(q + 1 < len(a), after, 0)
    spaced = closing & ((after == _SPACE) | (after == _TAB) | (after == _CR))
    ok[qrow[spaced]] = False
    keys = closing & (after == _COLON)
    kpos, krow = q[keys], qrow[keys]
    n_keys = np.bincount(krow, minlength=n)
    vstart = kpos + 2
    vstart = vstart + (a[np.minimum(vstart, len(a) - 1)] == _SPACE)
    is_null = _is_null_at(a, vstart)
    nonnull = rec.select(pl.sum_horizontal([pl.col(f).is_not_null().cast(pl.Int64) for f in schema])).to_series().to_numpy()
    n_null = np.bincount(krow[is_null], minlength=n)
    ok &= n_keys == nonnull + n_null
    if is_null.any():
        ok &= _null_names_ok(raw, q, qrow, kpos[is_null], krow[is_null], rec, schema, n)
    ok &= _long_text_ok(raw, starts, ends, rec)
    return ok


def _rows_at(pos: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    row = _line_of(pos, starts)
    keep = (row >= 0) & (pos < ends[np.maximum(row, 0)])
    return row[keep]


def _is_null_at(a: np.ndarray, at: np.ndarray) -> np.ndarray:
    if not len(at) or len(a) < 4:
        return np.zeros(len(at), dtype=bool)
    out = at + 3 < len(a)
    idx = np.minimum(at, len(a) - 4)
    for k, byte in enumerate(b"null"):
        out &= a[idx + k] == byte
    return out


def _null_names_ok(raw: bytes, q: np.ndarray, qrow: np.ndarray, kpos: np.ndarray, krow: np.ndarray,
                   rec: pl.DataFrame, schema: dict, n: int) -> np.ndarray:
    """False for rows with a ``"name": null`` whose name is not a schema field, is repeated in the
    line, or was read by polars as not null."""
    ok = np.ones(n, dtype=bool)
    opening = q[np.searchsorted(q, kpos) - 1]
    names = [raw[o + 1:k].decode("utf-8", "replace") for o, k in zip(opening.tolist(), kpos.tolist())]
    seen: set = set()
    by_field: dict[str, list[int]] = {}
    for row, name in zip(krow.tolist(), names):
        if name not in schema or (row, name) in seen:
            ok[row] = False
            continue
        seen.add((row, name))
        by_field.setdefault(name, []).append(row)
    for name, rows in by_field.items():
        filled = rec[name].gather(rows).is_not_null().to_numpy()
        ok[np.asarray(rows)[filled]] = False
    return ok


_LOOKS_OTHER = r"^(?:-?[0-9]|\[|\{\}$|true$|false$)"
#: polars reads a whole number beyond 64 bits into a Categorical field as the text ``Static(U128(...))``.
_LOOKS_WIDE = r"^Static\("


def _long_text_ok(raw: bytes, starts: np.ndarray, ends: np.ndarray, rec: pl.DataFrame) -> np.ndarray:
    """False for rows with a text field polars may have made from another JSON type (a long field:
    any; a short one: a whole number beyond 64 bits), unless the bytes show it written as a string;
    and for rows holding U+0000 in any text."""
    n = rec.height
    ok = np.ones(n, dtype=bool)
    text = [f for f, t in rec.schema.items() if t == pl.Utf8]
    nul = rec.select(pl.any_horizontal([pl.col(f).str.contains("\x00", literal=True) for f in text])
                     .fill_null(False)).to_series().to_numpy()
    ok &= ~nul
    pattern = {f: (_LOOKS_OTHER if f in TEXT_LONG else _LOOKS_WIDE) for f in text}
    looks = rec.select([pl.col(f).str.contains(pattern[f]).fill_null(False).alias(f) for f in text])
    for f in text:
        rows = looks[f].arg_true().to_list()
        pats = (f'"{f}": "'.encode(), f'"{f}":"'.encode())
        for i in rows:
            s, e = int(starts[i]), int(ends[i])
            if raw.find(pats[0], s, e) < 0 and raw.find(pats[1], s, e) < 0:
                ok[i] = False
    return ok
