"""Which lines polars' NDJSON reader reads exactly as Python's ``json`` module reads them, decided from
the raw bytes for every line of a file at once (numpy; no per-line Python): the *key census*.

polars reads the lines with a schema: a value of another JSON type in a boolean or whole-number
field makes the parse fail, a key outside the schema is skipped, a repeated key keeps its first
value, any value in a text field is written as text.  A *key token* is a colon whose previous
character other than white space is an unescaped quote.  A line is read by polars when its key
tokens are exactly its fields polars read as not null (the fields of an object field counted too)
plus its ``"field": null``, its keys holding a string are exactly its text fields read as not null,
and it has no high surrogate escape without a low one.  A line where counting is not plain goes to
Python's ``json`` (a false alarm only costs time).  The sums over a whole file settle every line
when they are equal (:func:`settled_by_sums`); the per-line counts are worked out only otherwise.
"""
from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["line_ranges", "census", "filled", "settled_by_sums", "readable", "readable_lines"]

_QUOTE, _COLON, _BACKSLASH, _SPACE, _TAB, _CR = 34, 58, 92, 32, 9, 13


def line_ranges(raw: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, end, 1-based number)`` of each line of ``raw`` holding more than spaces, tabs and
    carriage returns (the lines polars reads; a line of other white space makes its parse fail)."""
    a = np.frombuffer(raw, dtype=np.uint8)
    nl = np.flatnonzero(a == 10)
    starts = np.concatenate(([0], nl + 1))
    ends = np.concatenate((nl, [len(a)]))
    first = a[np.minimum(starts, max(len(a) - 1, 0))] if len(a) else np.zeros(len(starts), dtype=np.uint8)
    maybe = (starts >= ends) | (first == _SPACE) | (first == _TAB) | (first == _CR)
    keep = np.ones(len(starts), dtype=bool)
    for i in np.flatnonzero(maybe).tolist():
        keep[i] = bool(raw[starts[i]:ends[i]].strip(b" \t\r"))
    return starts[keep], ends[keep], np.flatnonzero(keep) + 1


def _line_of(pos: np.ndarray, starts: np.ndarray) -> np.ndarray:
    return np.searchsorted(starts, pos, side="right") - 1


def census(raw: bytes, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                     list[tuple[int, str]]]:
    """``(key tokens per line, of them those whose value is a string, lines counted, (line, name) of
    each "name": null)`` of the lines ``raw[starts[i]:ends[i]]``.

    A key token is a colon whose previous character other than white space is an unescaped quote
    (inside a string every quote is escaped, so such a colon follows a key).  A line where that is
    not plain (a quote after backslashes, a colon after white space) is not counted: Python reads it.
    """
    n = len(starts)
    counted = np.ones(n, dtype=bool)
    if not n:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64), counted, []
    a = np.frombuffer(raw, dtype=np.uint8)
    c = np.flatnonzero(a == _COLON)
    c = c[c >= 3]
    row = _line_of(c, starts)
    keep = (row >= 0) & (c < ends[np.maximum(row, 0)])
    c, row = c[keep], row[keep]
    prev, prev2 = a[c - 1], a[c - 2]
    odd = ((prev == _SPACE) | (prev == _TAB) | (prev == _CR)) | ((prev == _QUOTE) & (prev2 == _BACKSLASH) & (a[c - 3] == _BACKSLASH))
    counted[row[odd]] = False
    key = (prev == _QUOTE) & (prev2 != _BACKSLASH)
    kpos, krow = c[key], row[key]
    vstart = kpos + 1
    vstart = vstart + (a[np.minimum(vstart, len(a) - 1)] == _SPACE)
    is_null = _is_null_at(a, vstart)
    is_text = a[np.minimum(vstart, len(a) - 1)] == _QUOTE
    names = _null_names(raw, krow[is_null], kpos[is_null])
    return (np.bincount(krow, minlength=n), np.bincount(krow[is_text], minlength=n),
            counted & escapes_ok(raw, starts, ends), names)


def _null_names(raw: bytes, rows: np.ndarray, colons: np.ndarray) -> list[tuple[int, str]]:
    """``(line, name)`` of each key token ``"name": null`` (its line and colon; ``"\\x00"``: a name
    ending in an escaped quote)."""
    names: list[tuple[int, str]] = []
    for r, k in zip(rows.tolist(), colons.tolist()):
        o = raw.rfind(b'"', 0, k - 1)
        names.append((r, raw[o + 1:k - 1].decode("utf-8", "replace") if raw[o - 1:o] != b"\\" else "\x00"))
    return names


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


def escapes_ok(raw: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """False for lines with a high surrogate escape (``\\ud800``) not followed by a low one: polars
    reads it as U+0000, Python's ``json`` as a lone surrogate (a lone low one makes polars fail)."""
    ok = np.ones(len(starts), dtype=bool)
    a = np.frombuffer(raw, dtype=np.uint8)
    if len(a) < 6:
        return ok
    b = np.flatnonzero(a[:-5] == _BACKSLASH)
    b = b[(a[b + 1] == ord("u")) & ((a[b + 2] == ord("d")) | (a[b + 2] == ord("D")))]
    bad = []
    for i in b.tolist():
        if raw[i + 3:i + 4].lower() in (b"8", b"9", b"a", b"b") and not (
                raw[i + 6:i + 9].lower() == b"\\ud" and raw[i + 9:i + 10].lower() in (b"c", b"d", b"e", b"f")):
            bad.append(i)
    if bad:
        ok[_rows_at(np.asarray(bad), starts, ends)] = False
    return ok


def _flat(rec: pl.DataFrame) -> tuple[list[pl.Expr], list[pl.Expr]]:
    """Every value a row's keys hold (an object field and each of its fields) and the text ones."""
    every, text = [], []
    for f, t in rec.schema.items():
        every.append(pl.col(f))
        if isinstance(t, pl.Struct):
            inner = [pl.col(f).struct.field(x.name) for x in t.fields]
            every += inner
            text += [e for e, x in zip(inner, t.fields) if x.dtype == pl.Utf8]
        elif t == pl.Utf8:
            text.append(pl.col(f))
    return every, text


def filled(rec: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(values, text values)`` of each row that polars read as not null."""
    every, text = _flat(rec)
    counts = rec.select(pl.sum_horizontal([e.is_not_null().cast(pl.Int64) for e in every]).alias("all"),
                        pl.sum_horizontal([e.is_not_null().cast(pl.Int64) for e in text] or [pl.lit(0)]).alias("text"))
    return counts["all"].to_numpy(), counts["text"].to_numpy()


def settled_by_sums(rec: pl.DataFrame, n_keys: np.ndarray, n_text: np.ndarray, counted: np.ndarray,
                    n_null_names: int) -> bool:
    """True when the sums alone show that every row's key tokens (:func:`census`) are its fields read
    as not null plus its ``"field": null`` and that its keys holding a string are its text fields read
    as not null (see the module docstring); then :func:`readable` needs no per-row counts
    (:func:`filled`): ``extra_keys`` is each row's count of ``"field": null`` and ``extra_text`` zero."""
    if not rec.height or not counted.all():
        return False
    if any(isinstance(t, pl.Struct) for t in rec.schema.values()):
        n_all, n_str = (int(x.sum()) for x in filled(rec))
    else:
        nulls = {s.name: s.null_count() for s in rec.iter_columns()}   # kept by each column: no pass over the data
        text = [f for f, t in rec.schema.items() if t == pl.Utf8]
        n_all = rec.height * rec.width - sum(nulls.values())
        n_str = rec.height * len(text) - sum(nulls[f] for f in text)
    return int(n_keys.sum()) - n_null_names == n_all and int(n_text.sum()) == n_str


def readable(rec: pl.DataFrame, extra_keys: np.ndarray, extra_text: np.ndarray, counted: np.ndarray,
             names: list[tuple[int, str]], schema: dict) -> np.ndarray:
    """True for each row of ``rec`` that polars read exactly as Python's ``json`` reads its line.

    ``extra_keys``: key tokens of the row's line (:func:`census`) less the fields polars read as not
    null (:func:`filled`); ``extra_text``: the same for keys holding a string and text fields;
    ``counted``, ``names``: :func:`census`.  A line passes when its other key tokens are exactly its
    ``"field": null`` (each a field of the schema, once, read as null), and its keys holding a string
    are exactly its text fields polars read as not null (polars would write a number or an object
    in a text field as text)."""
    ok = counted & (extra_text == 0)
    n_null = np.zeros(rec.height, dtype=np.int64)
    seen: set = set()
    by_field: dict[str, list[int]] = {}
    for row, name in names:
        n_null[row] += 1
        if name not in schema or (row, name) in seen:
            ok[row] = False
            continue
        seen.add((row, name))
        by_field.setdefault(name, []).append(row)
    for name, rows in by_field.items():
        taken = rec[name].gather(rows).is_not_null().to_numpy()
        ok[np.asarray(rows)[taken]] = False
    return ok & (extra_keys == n_null)


# ----------------------------------------------------------------------------- one file, sums first
def readable_lines(raw: bytes, rec: pl.DataFrame, starts: np.ndarray, ends: np.ndarray, schema: dict,
                   whole: bool) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """``(readable, names)``: :func:`readable` of the rows of ``rec`` (row ``i`` being the line
    ``raw[starts[i]:ends[i]]``) and the ``(row, name)`` of each ``"name": null``.  ``whole``: these are all
    the non-blank lines of ``raw``; then the sums of the whole text decide when they settle it (the usual
    case: no per-line counts), else the per-line :func:`census` and :func:`filled`."""
    sums = _key_sums(raw, starts, ends) if whole and len(starts) == rec.height else None
    if sums is not None:
        n_keys, n_text, names = sums
        if settled_by_sums(rec, np.array([n_keys]), np.array([n_text]), np.ones(1, dtype=bool), len(names)):
            rows = np.asarray([r for r, _ in names], dtype=np.int64)
            return readable(rec, np.bincount(rows, minlength=rec.height), np.zeros(rec.height, dtype=np.int64),
                            np.ones(rec.height, dtype=bool), names, schema), names
    n_keys_row, n_text_row, counted, names = census(raw, starts, ends)
    n_all, n_str = filled(rec)
    return readable(rec, n_keys_row - n_all, n_text_row - n_str, counted, names, schema), names


def _key_sums(raw: bytes, starts: np.ndarray, ends: np.ndarray) -> tuple[int, int, list[tuple[int, str]]] | None:
    """``(key tokens, of them those holding a string, (line, name) of each "name": null)`` of the whole
    text, whose lines are all ``starts``/``ends`` (the others blank); None when some line is not
    counted plainly (:func:`census` then says which)."""
    a = np.frombuffer(raw, dtype=np.uint8)
    if len(a) < 4:
        return None
    c = np.flatnonzero(a == _COLON)
    c = c[c >= 3]
    prev, prev2 = a[c - 1], a[c - 2]
    if ((prev == _SPACE) | (prev == _TAB) | (prev == _CR) | ((prev == _QUOTE) & (prev2 == _BACKSLASH)
                                                            & (a[c - 3] == _BACKSLASH))).any():
        return None
    kpos = c[(prev == _QUOTE) & (prev2 != _BACKSLASH)]
    vstart = kpos + 1
    vstart = vstart + (a[np.minimum(vstart, len(a) - 1)] == _SPACE)
    is_null = _is_null_at(a, vstart)
    n_text = int(np.count_nonzero(a[np.minimum(vstart, len(a) - 1)] == _QUOTE))
    if not escapes_ok(raw, starts, ends).all():
        return None
    at = kpos[is_null]
    return len(kpos), n_text, _null_names(raw, _line_of(at, starts), at)
