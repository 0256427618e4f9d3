"""The key census: which lines polars' NDJSON reader reads exactly as Python's ``json`` does, decided
from a whole file's bytes at once (numpy).  A *key token* is a colon after an unescaped quote; a line is
polars' when its key tokens are its fields read as not null plus its ``"field": null``, its string keys its
text fields, and it holds no lone high surrogate escape.  Any other line goes to Python."""
from __future__ import annotations

import numpy as np
import polars as pl

__all__ = ["line_ranges", "census", "filled", "settled_by_sums", "readable", "readable_lines"]

_QUOTE, _COLON, _BACKSLASH, _SPACE, _TAB, _CR = 34, 58, 92, 32, 9, 13


def line_ranges(raw: bytes) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(start, end, 1-based number)`` of each line of ``raw`` holding more than spaces, tabs and CRs."""
    a = np.frombuffer(raw, dtype=np.uint8)
    nl = np.flatnonzero(a == 10)
    starts, ends = np.concatenate(([0], nl + 1)), np.concatenate((nl, [len(a)]))
    first = a[np.minimum(starts, max(len(a) - 1, 0))] if len(a) else np.zeros(len(starts), dtype=np.uint8)
    keep = np.ones(len(starts), dtype=bool)
    for i in np.flatnonzero((starts >= ends) | np.isin(first, (_SPACE, _TAB, _CR))).tolist():
        keep[i] = bool(raw[starts[i]:ends[i]].strip(b" \t\r"))
    return starts[keep], ends[keep], np.flatnonzero(keep) + 1


def _rows_at(pos: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(line index, which positions lie on a line)`` of byte positions."""
    row = np.searchsorted(starts, pos, side="right") - 1
    inside = (row >= 0) & (pos < ends[np.maximum(row, 0)]) if len(starts) else np.zeros(len(pos), dtype=bool)
    return row[inside], inside


def _tokens(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(colons that make counting not plain, key tokens, which hold null, which hold a string)``."""
    c = np.flatnonzero(a == _COLON)
    c = c[c >= 3]
    prev, prev2 = a[c - 1], a[c - 2]
    odd = np.isin(prev, (_SPACE, _TAB, _CR)) | ((prev == _QUOTE) & (prev2 == _BACKSLASH) & (a[c - 3] == _BACKSLASH))
    key = c[(prev == _QUOTE) & (prev2 != _BACKSLASH)]
    at = key + 1
    at = at + (a[np.minimum(at, len(a) - 1)] == _SPACE)
    null = at + 3 < len(a)
    for k, byte in enumerate(b"null"):
        null &= a[np.minimum(at + k, len(a) - 1)] == byte
    return c[odd], key, null, a[np.minimum(at, len(a) - 1)] == _QUOTE


def _null_names(raw: bytes, rows: np.ndarray, colons: np.ndarray) -> list[tuple[int, str]]:
    """``(line, name)`` of each ``"name": null`` (``"\\x00"``: a name ending in an escaped quote)."""
    out = []
    for r, k in zip(rows.tolist(), colons.tolist()):
        o = raw.rfind(b'"', 0, k - 1)
        out.append((r, raw[o + 1:k - 1].decode("utf-8", "replace") if raw[o - 1:o] != b"\\" else "\x00"))
    return out


def escapes_ok(raw: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """False for lines with a high surrogate escape not followed by a low one (polars reads U+0000)."""
    ok = np.ones(len(starts), dtype=bool)
    a = np.frombuffer(raw, dtype=np.uint8)
    if len(a) < 6:
        return ok
    b = np.flatnonzero(a[:-5] == _BACKSLASH)
    b = b[(a[b + 1] == ord("u")) & ((a[b + 2] == ord("d")) | (a[b + 2] == ord("D")))]
    bad = [i for i in b.tolist() if raw[i + 3:i + 4].lower() in (b"8", b"9", b"a", b"b") and not (
        raw[i + 6:i + 9].lower() == b"\\ud" and raw[i + 9:i + 10].lower() in (b"c", b"d", b"e", b"f"))]
    if bad:
        ok[_rows_at(np.asarray(bad), starts, ends)[0]] = False
    return ok


def census(raw: bytes, starts: np.ndarray, ends: np.ndarray):
    """``(key tokens per line, of them those holding a string, lines counted plainly, (line, name) of
    each "name": null)`` of the lines ``raw[starts[i]:ends[i]]``."""
    n = len(starts)
    a = np.frombuffer(raw, dtype=np.uint8)
    odd, key, null, text = _tokens(a)
    counted = np.ones(n, dtype=bool)
    counted[_rows_at(odd, starts, ends)[0]] = False
    row, inside = _rows_at(key, starts, ends)
    key, null, text = key[inside], null[inside], text[inside]
    return (np.bincount(row, minlength=n), np.bincount(row[text], minlength=n),
            counted & escapes_ok(raw, starts, ends), _null_names(raw, row[null], key[null]))


def filled(rec: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """``(values, text values)`` polars read as not null in each row (an object field's fields counted)."""
    every, text = [], []
    for f, t in rec.schema.items():
        every.append(pl.col(f))
        inner = [(pl.col(f).struct.field(x.name), x.dtype) for x in t.fields] if isinstance(t, pl.Struct) else []
        every += [e for e, _ in inner]
        text += [e for e, d in inner if d == pl.Utf8] + ([pl.col(f)] if t == pl.Utf8 else [])
    counts = rec.select(pl.sum_horizontal([e.is_not_null().cast(pl.Int64) for e in every]).alias("all"),
                        pl.sum_horizontal([e.is_not_null().cast(pl.Int64) for e in text] or [pl.lit(0)]).alias("text"))
    return counts["all"].to_numpy(), counts["text"].to_numpy()


def settled_by_sums(rec: pl.DataFrame, n_keys, n_text, counted, n_null_names: int) -> bool:
    """True when the sums alone show every row readable but for its ``"field": null`` (no per-row counts)."""
    if not rec.height or not np.all(counted):
        return False
    if any(isinstance(t, pl.Struct) for t in rec.schema.values()):
        n_all, n_str = (int(x.sum()) for x in filled(rec))
    else:
        nulls = {s.name: s.null_count() for s in rec.iter_columns()}   # kept by each column: no pass over the data
        text = [f for f, t in rec.schema.items() if t == pl.Utf8]
        n_all = rec.height * rec.width - sum(nulls.values())
        n_str = rec.height * len(text) - sum(nulls[f] for f in text)
    return int(np.sum(n_keys)) - n_null_names == n_all and int(np.sum(n_text)) == n_str


def readable(rec: pl.DataFrame, extra_keys, extra_text, counted, names: list[tuple[int, str]],
             schema: dict) -> np.ndarray:
    """True for each row read exactly as Python reads its line: its extra key tokens are its ``"field":
    null`` (of the schema, once, read as null) and its string keys its text fields."""
    ok = counted & (extra_text == 0)
    n_null = np.zeros(rec.height, dtype=np.int64)
    seen, by_field = set(), {}
    for row, name in names:
        n_null[row] += 1
        if name not in schema or (row, name) in seen:
            ok[row] = False
        seen.add((row, name))
        by_field.setdefault(name, []).append(row)
    for name, rows in by_field.items():
        if name in schema:
            ok[np.asarray(rows)[rec[name].gather(rows).is_not_null().to_numpy()]] = False
    return ok & (extra_keys == n_null)


def readable_lines(raw: bytes, rec: pl.DataFrame, starts: np.ndarray, ends: np.ndarray, schema: dict,
                   whole: bool) -> tuple[np.ndarray, list[tuple[int, str]]]:
    """``(readable rows, (row, name) of each "name": null)`` of ``rec``; ``whole`` (all the lines of ``raw``):
    the sums of the whole text settle the usual case, else the per-line counts decide."""
    a = np.frombuffer(raw, dtype=np.uint8)
    if whole and len(starts) == rec.height and len(a) >= 4:
        odd, key, null, text = _tokens(a)
        if not len(odd) and escapes_ok(raw, starts, ends).all():
            names = _null_names(raw, _rows_at(key[null], starts, ends)[0], key[null])
            if settled_by_sums(rec, len(key), int(text.sum()), True, len(names)):
                rows = np.asarray([r for r, _ in names], dtype=np.int64)
                return readable(rec, np.bincount(rows, minlength=rec.height), np.zeros(rec.height, dtype=np.int64),
                                np.ones(rec.height, dtype=bool), names, schema), names
    n_keys, n_text, counted, names = census(raw, starts, ends)
    n_all, n_str = filled(rec)
    return readable(rec, n_keys - n_all, n_text - n_str, counted, names, schema), names
