"""The one record front end of every JSON reader: files -> a raw frame (one row per record, its values in
the encoding of :mod:`voxmem_analysis.io.engine.values`).

polars' NDJSON reader parses each file whole with the reader's schema; the key census
(:mod:`~voxmem_analysis.io.engine.census`) keeps the rows polars read exactly as Python's ``json``
reads their line, and Python's ``json`` reads every other line (:func:`encode`), adding what only it
sees: ``_p0_code``/``_p0_msg``/``_p0_field`` (not JSON, not an object), ``_uni`` (names or texts that
are not valid Unicode) and the parsed record (for fields outside the schema).  Files are read and
parsed by a few threads, ahead of the batch being checked.  JSON documents (a list of records, a
``{"results": [...]}`` object) are read entry by entry with their line numbers (:func:`entries`).
"""
from __future__ import annotations

import csv
import io
import json
import os
import re
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np
import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.engine import files
from voxmem_analysis.io.engine.census import line_ranges, readable_lines
from voxmem_analysis.io.engine.rules import fact
from voxmem_analysis.io.engine.values import I64_MAX, I64_MIN, KINDS, SUFFIXES, valid_text
from voxmem_analysis.textlimits import CSV_FIELD_LIMIT, csv_field_limit, read_regular

__all__ = ["Spec", "FileRead", "read_file", "parse_file", "batches", "raw_frame", "encode", "python_frame", "parse_object",
           "not_unicode", "entries", "document", "MAX_DEPTH", "too_deep", "BATCH_BYTES", "read_parquet", "TEXT_TYPES", "parquet_frame", "csv_frame", "MALFORMED_CSV"]

#: Text read before a batch is checked.
BATCH_BYTES = 64 * 2**20
#: Bytes on disk the reading threads may be ahead of the batch being checked (beyond ``2 * THREADS`` files).
AHEAD_BYTES = BATCH_BYTES // 8
THREADS = max(1, min(4, os.cpu_count() or 1))
_MAX_AHEAD = 64
_GROUP_FLOOR = 8
#: JSON nested deeper than this is refused (Python's parser would exhaust its stack on it).
MAX_DEPTH = 500
_META = {"_fi": pl.Int64, "_file": pl.Utf8, "_line": pl.Int64, "_seq": pl.Int64}
_PARSER = {"_p0_code": pl.Utf8, "_p0_msg": pl.Utf8, "_p0_field": pl.Utf8, "_uni": pl.List(pl.Utf8)}
_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")   # text a surrogate can come from (UTF-8 holds none)

NOT_AN_OBJECT = fact("not_an_object", "error", lambda r: f"{r['what']} is a JSON {r['type']}, expected an object")
NOT_A_LIST = fact("malformed_json", "error", lambda r: f"not a JSON list of {r['items']} (expected a JSON list)")
MALFORMED_DOCUMENT = fact("malformed_json", "error", lambda r: f"not valid JSON ({r['msg']}); {r['n']} entr(ies) of the "
                          f"{r['what']} were read before it, the rest of the file is lost")


@dataclass(frozen=True)
class Spec:
    """How a reader's records are read: ``fields`` (name -> ``str``/``bool``/``int``: the encoding's
    typed column; ``json``: the value kept in the record only), ``polars`` (the schema polars parses,
    default the typed fields), ``prepare(record)`` (a Python record as the fields see it) and ``after``
    (polars' rows as the fields see them), ``plain`` (columns these two give as they are), ``presence``
    (the ``.has`` columns), ``meta`` (constant columns of a file, e.g. its ablation condition), ``what`` (a
    record's name in a message), ``extras`` (polars also reads the scalar fields outside the schema that
    are not ``reserved``: the record of such a row holds them)."""

    fields: dict[str, str]
    polars: dict | None = None
    prepare: Callable[[dict], dict] | None = None
    after: Callable[[pl.DataFrame], pl.DataFrame] | None = None
    plain: dict = field(default_factory=dict)
    presence: bool = False
    meta: dict = field(default_factory=dict)
    what: str = "line"
    extras: bool = False
    reserved: frozenset = frozenset()

    def schema(self) -> dict:
        if self.polars is not None:
            return self.polars
        return {f: KINDS[k] for f, k in self.fields.items() if k in KINDS}


# ----------------------------------------------------------------------------- Python's reading
def parse_object(line: str, what: str = "line") -> tuple[dict | None, tuple | None]:
    """``(dict, None)`` or ``(None, (code, message, field))`` for one line that must hold one object:
    ``malformed_json`` (a repeated key names its field; deep nesting is a finding, never a crash) or
    ``not_an_object``."""
    try:
        obj = json.loads(line, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        return None, ("malformed_json", f"key {exc.key!r} appears twice in one object", exc.key)
    except json.JSONDecodeError as exc:
        return None, ("malformed_json", f"not valid JSON ({exc.msg} at column {exc.colno})", None)
    except RecursionError:
        return None, ("malformed_json", "not valid JSON (nested too deeply to read)", None)
    except ValueError as exc:  # numbers too large to convert
        return None, ("malformed_json", f"not valid JSON ({exc})", None)
    if not isinstance(obj, dict):
        return None, ("not_an_object", NOT_AN_OBJECT.message({"what": what, "type": type(obj).__name__}), None)
    return obj, None


class _Duplicate(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def _bad(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def not_unicode(value, where: str = "") -> list[str]:
    """``k<name>`` / ``v<field>`` for each name or text (nested ones as ``a.b``) holding an unpaired
    surrogate escape: valid JSON, but no text a frame can hold."""
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            name = f"{where}.{k}" if where else str(k)
            if _bad(str(k)):
                out.append("k" + name.encode("utf-8", "backslashreplace").decode("utf-8"))
            else:
                out += not_unicode(v, name)
    elif isinstance(value, list):
        for v in value:
            out += not_unicode(v, where)
    elif isinstance(value, str) and _bad(value):
        out.append("v" + where)
    return out


def encode(records: list, spec: Spec, check_unicode: list[bool] | None = None) -> dict[str, list]:
    """The encoding of Python records (``None``: a record that is not an object): the fields' columns
    and ``_uni``; ``prepare`` first (see :class:`Spec`)."""
    n = len(records)
    cols: dict[str, list] = {f: [None] * n for f, k in spec.fields.items() if k in KINDS}
    cols.update({c: [None] * n for c in spec.plain})
    odd: dict[str, list] = {}
    uni: list[list[str]] = [[] for _ in range(n)]
    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            continue
        if check_unicode is None or check_unicode[i]:
            uni[i] = not_unicode(rec)
        values = spec.prepare(rec) if spec.prepare else rec
        for c in spec.plain:
            cols[c][i] = values.get(c)
        for f, kind in spec.fields.items():
            if spec.presence:
                odd.setdefault(f"{f}.has", [False] * n)[i] = f in values
            v = values.get(f)
            if v is not None:
                _put(cols, odd, f, kind, v, i, n)
    cols.update(odd)
    cols["_uni"] = uni
    return cols


def _put(cols: dict, odd: dict, f: str, kind: str, v, i: int, n: int) -> None:
    """Value ``v`` of field ``f`` at row ``i``: typed when of the field's kind, else described."""
    if kind == "str" and isinstance(v, str):
        cols[f][i] = valid_text(v)
        if cols[f][i] != v:
            odd.setdefault(f"{f}.r", [None] * n)[i] = repr(v)
        return
    if kind == "bool" and isinstance(v, bool) or (
            kind == "int" and isinstance(v, int) and not isinstance(v, bool) and I64_MIN <= v <= I64_MAX):
        cols[f][i] = v
        return
    odd.setdefault(f"{f}.t", [None] * n)[i] = type(v).__name__
    odd.setdefault(f"{f}.s", [None] * n)[i] = valid_text(str(v))
    if isinstance(v, str) and valid_text(v) != v:
        odd.setdefault(f"{f}.r", [None] * n)[i] = repr(v)
    if isinstance(v, (dict, list)):
        odd.setdefault(f"{f}.j", [None] * n)[i] = valid_text(json.dumps(v, sort_keys=True))


def python_frame(rows: list[tuple], spec: Spec) -> tuple[pl.DataFrame, list]:
    """``(raw frame, records)`` of entries ``(fi, file, seq, line, record or None, parser finding or None,
    check unicode, meta)`` read by Python (``meta``: the file's constant columns)."""
    recs = [r[4] for r in rows]
    cols = encode(recs, spec, [r[6] for r in rows])
    cols.update(_fi=[r[0] for r in rows], _file=[r[1] for r in rows], _seq=[r[2] for r in rows],
                _line=[r[3] for r in rows], _p0_code=[r[5] and r[5][0] for r in rows],
                _p0_msg=[r[5] and r[5][1] for r in rows], _p0_field=[r[5] and r[5][2] for r in rows])
    for m in spec.meta:
        cols[m] = [r[7].get(m) for r in rows]
    return pl.DataFrame(cols, schema=_schema(cols, spec)), recs


def _schema(cols: dict, spec: Spec) -> dict:
    out = {}
    for c in cols:
        base, dot, suffix = c.rpartition(".")
        if c in _META or c in _PARSER:
            out[c] = (_META | _PARSER)[c]
        elif c in spec.plain:
            out[c] = spec.plain[c]
        elif c in spec.meta:
            out[c] = pl.Utf8
        elif dot and f".{suffix}" in SUFFIXES and base in spec.fields:
            out[c] = SUFFIXES[f".{suffix}"]
        else:
            out[c] = KINDS[spec.fields[c]]
    return out


# ----------------------------------------------------------------------------- polars' reading
@dataclass
class FileRead:
    """One file read and parsed (see :func:`read_file`)."""

    fi: int
    rel: str
    path: Path
    meta: dict = field(default_factory=dict)
    problems: list = field(default_factory=list)
    raw: bytes | None = None
    utf8: bool = True
    rec: pl.DataFrame | None = None
    parsed: np.ndarray | None = None
    ranges: tuple = ()
    readable: np.ndarray | None = None   # rows of rec polars read as Python's json reads their line
    nulls: list = field(default_factory=list)   # (row of rec, field) of each "field": null
    extra: list = field(default_factory=list)   # the columns of rec outside the reader's schema


def read_file(path: Path, fi: int, rel: str, spec: Spec, meta: dict | None = None) -> FileRead:
    """Read, parse and count the keys of one file (the work of one thread: decompression, parsing and
    counting release the GIL)."""
    raw, problems = files.read_bytes(path, rel)
    return parse_file(FileRead(fi, rel, Path(path), meta or {}, problems, raw), spec)


def parse_file(out: FileRead, spec: Spec) -> FileRead:
    """``out`` (its bytes read) parsed by polars, its lines counted by the census."""
    raw = out.raw
    if raw is None:
        return out
    schema = spec.schema()
    starts, ends, numbers = line_ranges(raw)
    if spec.extras and len(starts):
        extra = _extra_schema([raw[s:e] for s, e in zip(starts[:_INFER].tolist(), ends[:_INFER].tolist())], schema,
                              spec.reserved)
        out.extra, schema = list(extra), schema | extra
    try:
        rec = pl.read_ndjson(io.BytesIO(raw), schema=schema) if len(starts) else None
    except Exception:  # noqa: BLE001 - any parser complaint: the lines are parsed a group at a time
        rec = None
    whole = rec is not None and rec.height == len(starts)
    if whole:
        parsed = np.arange(len(starts))
    else:
        rec, parsed = _parse_groups([raw[s:e] for s, e in zip(starts.tolist(), ends.tolist())], schema)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            out.utf8 = False
    if rec is None or not len(parsed):
        rec, parsed = pl.DataFrame(schema=schema), np.zeros(0, dtype=np.int64)
    out.rec, out.parsed, out.ranges = rec, parsed, (starts, ends, numbers)
    out.readable, nulls = readable_lines(raw, rec, starts[parsed], ends[parsed], schema, whole)
    out.nulls = nulls if spec.presence or out.extra else []   # (kept only when read: many per file)
    return out


_INFER = 100
_SCALAR = {str: pl.Utf8, bool: pl.Boolean, int: pl.Int64}


def _extra_schema(head: list[bytes], schema: dict, reserved) -> dict:
    """The fields outside ``schema`` (and not ``reserved``) that the first lines Python's json reads hold as
    text, booleans or whole numbers, each always of one type (a line holding another type is left to
    Python's json by the parse or the census)."""
    types: dict[str, set] = {}
    for line in head:
        try:
            rec = json.loads(line)
        except (ValueError, RecursionError):
            continue
        for k, v in rec.items() if isinstance(rec, dict) else ():
            if k not in schema and k not in reserved and v is not None and not _bad(k):
                types.setdefault(k, set()).add(type(v))
    return {k: _SCALAR[t.pop()] for k, t in types.items() if len(t) == 1 and next(iter(t)) in _SCALAR}


def _parse_groups(lines: list[bytes], schema: dict) -> tuple[pl.DataFrame | None, np.ndarray]:
    """Lines parsed in groups, a rejected group halved until its bad lines stand alone."""
    parts: list[pl.DataFrame] = []
    index: list[np.ndarray] = []

    def go(start: int, stop: int) -> None:
        try:
            df = pl.read_ndjson(io.BytesIO(b"\n".join(lines[start:stop])), schema=schema)
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


def batches(tasks: list[tuple], spec: Spec, batch_bytes: int = BATCH_BYTES, progress=None):
    """The files of ``tasks`` (``(path, rel, meta)``) read by a few threads, in order, in batches of at
    most ``batch_bytes`` of text; a file that could not be read (or is not UTF-8) is a batch of its own
    kind (``FileRead.raw`` None).  ``progress(done, total)`` is called as files are read."""
    batch: list[FileRead] = []
    size = 0
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        for done, f in enumerate(_in_order(pool, tasks, spec), 1):
            if progress is not None:
                progress(done, len(tasks))
            batch.append(f)
            size += len(f.raw or b"")
            if size >= batch_bytes:
                yield batch
                batch, size = [], 0
    if batch:
        yield batch


def _in_order(pool: ThreadPoolExecutor, tasks: list[tuple], spec: Spec):
    pending: deque = deque()
    ahead = 0
    for fi, (path, rel, meta) in enumerate(tasks):
        try:
            size = path.stat().st_size
        except OSError:   # reading it says why
            size = 0
        pending.append((pool.submit(read_file, path, fi, rel, spec, meta), size))
        ahead += size
        while len(pending) >= _MAX_AHEAD or (len(pending) >= 2 * THREADS and ahead >= AHEAD_BYTES):
            future, size = pending.popleft()
            ahead -= size
            yield future.result()
    while pending:
        yield pending.popleft()[0].result()


def raw_frame(batch: list[FileRead], spec: Spec) -> tuple[pl.DataFrame, dict[tuple, dict], dict[int, int]]:
    """``(raw frame in file and line order, records, non-blank lines per file)`` of files read by
    :func:`read_file` (UTF-8 ones): polars' rows for the lines the census keeps, Python's for the others.
    ``records`` maps a row's ``(_fi, _line)`` to its parsed record (Python's rows) or to its fields outside
    the schema (polars' rows, with ``extras``)."""
    recs, lines, slow, records = [], [], [], {}
    for f in batch:
        starts, ends, numbers = f.ranges
        ok = f.readable
        rows = _present(f, spec) if spec.presence else f.rec
        rows = rows.filter(pl.Series(ok)) if not ok.all() else rows
        lines.append(numbers[f.parsed][ok])
        if f.extra:
            records.update(_extra_records(f, rows, lines[-1]))
            rows = rows.drop(f.extra)
        recs.append(rows)
        rest = np.setdiff1d(np.arange(len(starts)), f.parsed[ok], assume_unique=True)
        slow += [(f, int(numbers[i]), f.raw[starts[i]:ends[i]]) for i in rest.tolist()]
    frame = _fast_rows(batch, recs, lines, spec) if batch else None
    counts = {f.fi: len(n) for f, n in zip(batch, lines)}
    entries_ = []
    for f, number, text in slow:
        line = text.decode("utf-8").rstrip("\r")
        if not line.strip():
            continue
        counts[f.fi] += 1
        rec, bad = parse_object(line, spec.what)
        entries_.append((f.fi, f.rel, number, number, rec, bad, not line.isascii() or _ESCAPE.search(line) is not None,
                         f.meta))
    if entries_:
        py, parsed = python_frame(entries_, spec)
        records.update({(e[0], e[3]): r for e, r in zip(entries_, parsed) if r is not None})
        frame = py if frame is None else pl.concat([frame, py], how="diagonal_relaxed").sort("_fi", "_line")
    if frame is None:
        frame = pl.DataFrame(schema=_META | _PARSER)
    return frame, records, counts


def _fast_rows(batch: list[FileRead], recs: list[pl.DataFrame], lines: list[np.ndarray], spec: Spec) -> pl.DataFrame:
    """polars' rows of the files with their meta columns (each file's constants gathered once)."""
    files_ = pl.DataFrame([(f.fi, f.rel, *(f.meta.get(m) for m in spec.meta)) for f in batch], orient="row",
                          schema={"_fi": pl.Int64, "_file": pl.Utf8, **{m: pl.Utf8 for m in spec.meta}})
    at = np.repeat(np.arange(len(batch)), [len(n) for n in lines])
    line = pl.Series("_line", np.concatenate(lines) if lines else [], dtype=pl.Int64)
    out = pl.concat([files_[at].with_columns(line, line.alias("_seq")),
                     pl.concat(recs, how="vertical" if len({tuple(r.schema.items()) for r in recs}) == 1
                               else "diagonal_relaxed")], how="horizontal")
    if spec.after is not None:
        out = spec.after(out)
    return out.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in (spec.plain | _PARSER).items() if c not in out.columns])


def _extra_records(f: FileRead, rows: pl.DataFrame, lines: np.ndarray) -> dict:
    """The fields outside the schema of polars' rows, as a record of each: the non-null values and the
    ``"field": null`` (the census's names), in the order polars met them."""
    nulls: dict[int, set] = {}
    for row, name in f.nulls:
        nulls.setdefault(int(f.ranges[2][f.parsed[row]]), set()).add(name)
    out = {}
    for line, values in zip(lines.tolist(), rows.select(f.extra).iter_rows()):
        rec = {k: v for k, v in zip(f.extra, values) if v is not None or k in nulls.get(line, ())}
        if rec:
            out[(f.fi, line)] = rec
    return out


def _present(f: FileRead, spec: Spec) -> pl.DataFrame:
    """polars' rows with ``<field>.has``: read as not null, or written ``"field": null`` (the census's names)."""
    nulls: dict[str, list[int]] = {}
    for row, name in f.nulls:
        nulls.setdefault(name, []).append(row)
    out = []
    for c in spec.fields:
        has = pl.col(c).is_not_null()
        if nulls.get(c):
            has = has | pl.int_range(pl.len()).is_in(nulls[c])
        out.append(has.alias(f"{c}.has"))
    return f.rec.with_columns(out)


# ----------------------------------------------------------------------------- JSON documents
_WS = re.compile(r"\s*")


def entries(text: str, start: int = 0):
    """``(object, 1-based line)`` of each element of the JSON list at ``start``; raises
    ``json.JSONDecodeError`` (``ValueError`` when there is no list) where the text stops being one."""
    dec = json.JSONDecoder()
    i = _WS.match(text, start).end()
    if text[i:i + 1] != "[":
        raise ValueError("expected a JSON list")
    i = _WS.match(text, i + 1).end()
    line, last = 1, 0
    if text[i:i + 1] == "]":
        return
    while True:
        line += text.count("\n", last, i)
        last = i
        obj, end = dec.raw_decode(text, i)
        yield obj, line
        i = _WS.match(text, end).end()
        ch = text[i:i + 1]
        if ch == ",":
            i = _WS.match(text, i + 1).end()
        elif ch == "]":
            return
        else:
            raise json.JSONDecodeError("expected ',' or ']' after a list element", text, i)


def document(text: str, rel: str, what: str = "JSON list", start: int = 0, items: str = "entries"
             ) -> tuple[list[tuple[int, object]], Problem | None]:
    """The entries of a JSON list (:func:`entries`) and, when the text stops being one, the problem
    saying where and how many entries were read before it (``what``: the list's name in it)."""
    out: list = []
    if text[_WS.match(text, start).end():][:1] != "[":
        return out, NOT_A_LIST.problem(rel, 1, items=items)
    try:
        out.extend((line, obj) for obj, line in entries(text, start))
    except RecursionError:
        line = too_deep(text)
        return out, MALFORMED_DOCUMENT.problem(rel, line, msg=f"nested deeper than {MAX_DEPTH} levels", n=len(out),
                                               what=what)
    except ValueError as exc:
        return out, MALFORMED_DOCUMENT.problem(rel, getattr(exc, "lineno", None), msg=getattr(exc, "msg", str(exc)),
                                               n=len(out), what=what)
    return out, None



def too_deep(text: str) -> int:
    """The line where a JSON text first nests deeper than :data:`MAX_DEPTH` (strings aside), found by
    one vectorised pass in chunks."""
    depth, in_str, run, offset = 0, 0, 0, 0
    chunk = 1 << 20
    for start in range(0, len(text), chunk):
        b = np.frombuffer(text[start:start + chunk].encode("utf-32-le"), dtype=np.uint32)
        idx = np.arange(len(b))
        bs = b == 92
        last = np.maximum.accumulate(np.where(~bs, idx, -1))
        before = np.empty(len(b), dtype=np.int64)      # backslashes right before each character
        before[0] = run
        before[1:] = np.where(last[:-1] >= 0, idx[:-1] - last[:-1], run + idx[1:])
        quote = (b == 34) & (before % 2 == 0)
        inside = (in_str + np.cumsum(quote) - quote) % 2 == 1
        step = np.where(inside, 0, np.isin(b, (91, 123)).astype(np.int64) - np.isin(b, (93, 125)))
        level = depth + np.cumsum(step)
        over = np.flatnonzero(level > MAX_DEPTH)
        if len(over):
            offset = start + int(over[0])
            break
        depth, in_str = int(level[-1]), int((in_str + quote.sum()) % 2)
        run = int(len(b) - 1 - last[-1]) if last[-1] >= 0 else run + len(b)
    return text.count("\n", 0, offset) + 1


# ----------------------------------------------------------------------------- Parquet
#: polars types that carry text (a pandas ``category`` column, an Arrow dictionary, an enum): read as text.
TEXT_TYPES = (pl.Categorical, pl.Enum)


def read_parquet(path: Path, columns: list[str] | None = None) -> pl.DataFrame:
    """A Parquet file (a regular file only: never a wait on a FIFO), every column that carries text --
    categorical, enum, dictionary-encoded, large string -- read as text."""
    df = pl.read_parquet(io.BytesIO(read_regular(path)), columns=columns)
    return df.with_columns([pl.col(c).cast(pl.Utf8) for c, t in df.schema.items() if isinstance(t, TEXT_TYPES)])


def _odd_cells(s: pl.Series) -> tuple[list, list]:
    """``(type names, texts)`` of a column's values as Python writes them."""
    if s.dtype in (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64):
        text = s.cast(pl.Utf8).to_list()
        return [None if v is None else "int" for v in text], text
    values = s.to_list()
    return [None if v is None else type(v).__name__ for v in values], [None if v is None else str(v) for v in values]


def parquet_frame(path: Path, rel: str, spec: Spec) -> tuple[pl.DataFrame | None, list[Problem]]:
    """A Parquet table as a raw frame (``_line``: the 1-based row): a column of the field's type as it is,
    any other written as Python writes each value (``.t``, ``.s``)."""
    try:
        df = read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - a damaged or foreign file is a data problem, named
        return None, [files.FILE_UNREADABLE.problem(rel, why=f"{type(exc).__name__}: {exc}")]
    cols = [pl.Series("_line", range(1, df.height + 1), dtype=pl.Int64)]
    for f, kind in spec.fields.items():
        if f not in df.columns:
            continue
        s = df[f]
        if s.dtype == KINDS.get(kind):
            cols.append(s)
            continue
        t, text = _odd_cells(s)
        cols += [pl.Series(f"{f}.t", t, dtype=pl.Utf8), pl.Series(f"{f}.s", text, dtype=pl.Utf8)]
    return pl.DataFrame(cols), []


# ----------------------------------------------------------------------------- CSV
MALFORMED_CSV = "row has more cells than the header"


def _plain_csv(text: str) -> pl.DataFrame | None:
    """Text columns and ``_line`` of a CSV text the csv module reads by splitting lines at commas (no
    quote, CR, NUL or blank line, a distinct header, every row as many cells as the header, no cell of
    :data:`~voxmem_analysis.textlimits.CSV_FIELD_LIMIT` characters); None for any other text."""
    if '"' in text or "\r" in text or "\x00" in text:
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2 or "" in lines or len(lines[0]) >= CSV_FIELD_LIMIT:
        return None
    header = lines[0].split(",")
    if len(set(header)) != len(header) or "" in header:
        return None
    body = pl.Series("line", lines[1:], dtype=pl.Utf8)
    if (body.str.count_matches(",", literal=True) != len(header) - 1).any() or body.str.len_chars().max() >= CSV_FIELD_LIMIT:
        return None
    cells = body.str.split_exact(",", len(header) - 1).struct.rename_fields(header).struct.unnest()
    return cells.with_columns(pl.int_range(2, body.len() + 2, dtype=pl.Int64).alias("_line"))


def csv_frame(text: str, rel: str, spec: Spec) -> pl.DataFrame:
    """A CSV table as a raw frame: ``_line`` (the line where a row ends, the header being line 1), each
    field's cell as text (a ``str`` field's column; another kind's ``.t``/``.s``); a row with more cells
    than the header is a row with the parser's finding ``malformed_csv``."""
    plain = _plain_csv(text)
    if plain is None:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        with csv_field_limit():
            rows = [(reader.line_num, rec) for rec in reader]
        plain = pl.DataFrame({"_line": [n for n, _ in rows],
                              **{f: [None if None in rec else rec.get(f) for _, rec in rows] for f in spec.fields},
                              "_p0_code": ["malformed_csv" if None in rec else None for _, rec in rows]},
                             schema={"_line": pl.Int64, **{f: pl.Utf8 for f in spec.fields}, "_p0_code": pl.Utf8})
        plain = plain.with_columns(pl.when(pl.col("_p0_code").is_not_null()).then(pl.lit(MALFORMED_CSV)).alias("_p0_msg"))
    cols = [pl.col("_line"), *[pl.col(c) for c in ("_p0_code", "_p0_msg") if c in plain.columns]]
    for f, kind in spec.fields.items():
        if f not in plain.columns:
            continue
        if kind == "str":
            cols.append(pl.col(f))
        else:
            cols += [pl.when(pl.col(f).is_not_null()).then(pl.lit("str")).alias(f"{f}.t"), pl.col(f).alias(f"{f}.s")]
    return plain.select(cols)
