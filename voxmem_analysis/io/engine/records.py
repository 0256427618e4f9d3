"""The one record front end: files -> a raw frame, one row per record, in the encoding of :mod:`.values`.
polars parses each JSON-lines file whole; the key census keeps the rows it read as Python would; Python
reads the other lines (adding the parser's findings ``_p0_*`` and ``_uni``).  JSON lists, CSV and Parquet
tables become the same encoding."""
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
           "not_unicode", "MAX_DEPTH", "too_deep", "BATCH_BYTES", "read_parquet", "TEXT_TYPES", "parquet_frame",
           "csv_frame", "NOT_AN_OBJECT", "json_entries", "entry_rows", "csv_entries"]

#: Text read before a batch is checked; bytes the reading threads may be ahead of it (beyond 2 files each).
BATCH_BYTES = 64 * 2**20
AHEAD_BYTES = BATCH_BYTES // 8
THREADS = max(1, min(4, os.cpu_count() or 1))
#: JSON nested deeper than this is refused (Python's parser would exhaust its stack on it).
MAX_DEPTH = 500
#: polars types that carry text (a pandas ``category`` column, an Arrow dictionary, an enum): read as text.
TEXT_TYPES = (pl.Categorical, pl.Enum)
_META = {"_fi": pl.Int64, "_file": pl.Utf8, "_line": pl.Int64, "_seq": pl.Int64}
_PARSER = {"_p0_code": pl.Utf8, "_p0_msg": pl.Utf8, "_p0_field": pl.Utf8, "_uni": pl.List(pl.Utf8)}
_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")   # text a surrogate can come from (UTF-8 holds none)
_WS = re.compile(r"\s*")
_INFER, _SCALAR = 100, {str: pl.Utf8, bool: pl.Boolean, int: pl.Int64}

NOT_AN_OBJECT = fact("not_an_object", "error", lambda r: f"{r['what']} is a JSON {r['type']}, expected an object")
NOT_A_LIST = fact("malformed_json", "error", lambda r: f"not a JSON list of {r['items']} (expected a JSON list)")
MALFORMED_DOCUMENT = fact("malformed_json", "error", lambda r: f"not valid JSON ({r['msg']}); {r['n']} entr(ies) of the "
                          f"{r['what']} were read before it, the rest of the file is lost")


@dataclass(frozen=True)
class Spec:
    """How a reader's records are read: ``fields`` (name -> ``str``/``bool``/``int``/``json``), the ``polars``
    schema, hooks, ``presence`` (``.has``), ``extras`` (scalar fields outside the schema, not ``reserved``)."""

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
        return self.polars if self.polars is not None else {f: KINDS[k] for f, k in self.fields.items() if k in KINDS}


class _Duplicate(ValueError):
    pass


def _no_duplicates(pairs):
    out = {}
    for k, v in pairs:
        if k in out:
            raise _Duplicate(k)
        out[k] = v
    return out


def parse_object(line: str, what: str = "line") -> tuple[dict | None, tuple | None]:
    """``(dict, None)`` or ``(None, (code, message, field))`` of a line that must hold one object: not JSON
    (a repeated key names its field; deep nesting is a finding, never a crash), or not an object."""
    try:
        obj = json.loads(line, object_pairs_hook=_no_duplicates)
    except _Duplicate as exc:
        return None, ("malformed_json", f"key {exc.args[0]!r} appears twice in one object", exc.args[0])
    except json.JSONDecodeError as exc:
        return None, ("malformed_json", f"not valid JSON ({exc.msg} at column {exc.colno})", None)
    except RecursionError:
        return None, ("malformed_json", "not valid JSON (nested too deeply to read)", None)
    except ValueError as exc:  # numbers too large to convert
        return None, ("malformed_json", f"not valid JSON ({exc})", None)
    if not isinstance(obj, dict):
        return None, ("not_an_object", NOT_AN_OBJECT.message({"what": what, "type": type(obj).__name__}), None)
    return obj, None


def _bad(text: str) -> bool:
    return not text.isascii() and valid_text(text) != text


def not_unicode(value, where: str = "") -> list[str]:
    """``k<name>`` / ``v<field>`` for each name or text (nested: ``a.b``) holding an unpaired surrogate."""
    out: list[str] = []
    if isinstance(value, dict):
        for k, v in value.items():
            name = f"{where}.{k}" if where else str(k)
            out += ["k" + name.encode("utf-8", "backslashreplace").decode("utf-8")] if _bad(str(k)) else not_unicode(v, name)
    elif isinstance(value, list):
        for v in value:
            out += not_unicode(v, where)
    elif isinstance(value, str) and _bad(value):
        out.append("v" + where)
    return out


def encode(records: list, spec: Spec, check_unicode: list[bool] | None = None) -> dict[str, list]:
    """The encoding of Python records (``None``: not an object) after ``prepare``: the fields' columns, ``_uni``."""
    n = len(records)
    cols: dict[str, list] = {c: [None] * n for c in [*(f for f, k in spec.fields.items() if k in KINDS), *spec.plain]}
    cols.update({f"{f}.has": [False] * n for f in spec.fields} if spec.presence else {})
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
                cols[f"{f}.has"][i] = f in values
            if values.get(f) is not None:
                _put(cols, f, kind, values[f], i, n)
    return {**cols, "_uni": uni}


def _put(cols: dict, f: str, kind: str, v, i: int, n: int) -> None:
    """Value ``v`` of field ``f`` at row ``i``: typed when of the field's kind, else described."""
    def put(suffix: str, value) -> None:
        cols.setdefault(f + suffix, [None] * n)[i] = value

    if (kind == "str" and isinstance(v, str)) or (kind == "bool" and isinstance(v, bool)) or (
            kind == "int" and isinstance(v, int) and not isinstance(v, bool) and I64_MIN <= v <= I64_MAX):
        put("", valid_text(v) if kind == "str" else v)
    else:
        put(".t", type(v).__name__)
        put(".s", valid_text(str(v)))
    if isinstance(v, str) and valid_text(v) != v:
        put(".r", repr(v))
    if isinstance(v, (dict, list)):
        put(".j", valid_text(json.dumps(v, sort_keys=True)))


def python_frame(rows: list[tuple], spec: Spec) -> tuple[pl.DataFrame, list]:
    """``(raw frame, records)`` of entries ``(fi, file, seq, line, record or None, parser finding or None,
    check unicode, meta)`` read by Python (``meta``: the file's constant columns)."""
    recs = [r[4] for r in rows]
    cols = encode(recs, spec, [r[6] for r in rows])
    cols.update({c: [r[i] for r in rows] for i, c in enumerate(("_fi", "_file", "_seq", "_line"))})
    cols.update({c: [r[5] and r[5][i] for r in rows] for i, c in enumerate(("_p0_code", "_p0_msg", "_p0_field"))})
    cols.update({m: [r[7].get(m) for r in rows] for m in spec.meta})
    types = _META | _PARSER | spec.plain | {m: pl.Utf8 for m in spec.meta}

    def dtype(c: str):
        suffix = "." + c.rpartition(".")[2]
        return types[c] if c in types else SUFFIXES[suffix] if suffix in SUFFIXES and c not in spec.fields else \
            KINDS[spec.fields[c]]

    return pl.DataFrame(cols, schema={c: dtype(c) for c in cols}), recs


@dataclass
class FileRead:
    """One file read and parsed: bytes, polars' rows (``rec``, of the lines ``parsed``), line ``ranges``, the
    rows the census found ``readable``, its ``nulls`` (row, field) and the ``extra`` columns."""

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
    readable: np.ndarray | None = None
    nulls: list = field(default_factory=list)
    extra: list = field(default_factory=list)


def read_file(path: Path, fi: int, rel: str, spec: Spec, meta: dict | None = None) -> FileRead:
    """Read, parse and count the keys of one file (a thread's work: each step releases the GIL)."""
    raw, problems = files.read_bytes(path, rel)
    return parse_file(FileRead(fi, rel, Path(path), meta or {}, problems, raw), spec)


def parse_file(out: FileRead, spec: Spec) -> FileRead:
    """``out`` (its bytes read) parsed by polars -- the whole file at once, else in halving groups of lines --
    and its rows counted by the census."""
    raw, schema = out.raw, spec.schema()
    if raw is None:
        return out
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
    parsed = np.arange(len(starts))
    if not whole:
        rec, parsed = _parse_groups([raw[s:e] for s, e in zip(starts.tolist(), ends.tolist())], schema)
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError:
            out.utf8 = False
    out.rec, out.parsed, out.ranges = rec, parsed, (starts, ends, numbers)
    out.readable, nulls = readable_lines(raw, rec, starts[parsed], ends[parsed], schema, whole)
    out.nulls = nulls if spec.presence or out.extra else []   # kept only when read: many per file
    return out


def _extra_schema(head: list[bytes], schema: dict, reserved) -> dict:
    """The fields outside ``schema`` (not ``reserved``) the first lines hold as scalars, each of one type."""
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


def _parse_groups(lines: list[bytes], schema: dict) -> tuple[pl.DataFrame, np.ndarray]:
    """Lines parsed in groups, a rejected group halved until its bad lines stand alone (groups of 8 or fewer
    are left to Python): ``(rows, index of the line of each row)``."""
    parts, index = [], []

    def go(start: int, stop: int) -> None:
        try:
            df = pl.read_ndjson(io.BytesIO(b"\n".join(lines[start:stop])), schema=schema)
            if df.height != stop - start:
                raise ValueError("row count differs from line count")
            parts.append(df)
            index.append(np.arange(start, stop))
        except Exception:  # noqa: BLE001 - any parser complaint: split, then leave it to Python's json
            if stop - start > 8:
                go(start, (start + stop) // 2)
                go((start + stop) // 2, stop)

    if lines:
        go(0, len(lines))
    if not parts:
        return pl.DataFrame(schema=schema), np.zeros(0, dtype=np.int64)
    return pl.concat(parts), np.concatenate(index)


def batches(tasks: list[tuple], spec: Spec, batch_bytes: int = BATCH_BYTES, progress=None):
    """The files of ``tasks`` (``(path, rel, meta)``) read by a few threads, in order, in batches of about
    ``batch_bytes`` of text; ``progress(done, total)`` is called as files are read."""
    batch, size, pending, ahead = [], 0, deque(), 0
    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        def done():
            nonlocal ahead
            future, n = pending.popleft()
            ahead -= n
            return future.result()

        for fi, (path, rel, meta) in enumerate([*tasks, (None, None, None)]):
            if path is not None:
                try:
                    n = path.stat().st_size
                except OSError:   # reading it says why
                    n = 0
                pending.append((pool.submit(read_file, path, fi, rel, spec, meta), n))
                ahead += n
            while pending and (path is None or len(pending) >= 64 or (len(pending) >= 2 * THREADS and ahead >= AHEAD_BYTES)):
                batch.append(done())
                size += len(batch[-1].raw or b"")
                if progress is not None:
                    progress(batch[-1].fi + 1, len(tasks))
                if size >= batch_bytes:
                    yield batch
                    batch, size = [], 0
    if batch:
        yield batch


def raw_frame(batch: list[FileRead], spec: Spec) -> tuple[pl.DataFrame, dict[tuple, dict], dict[int, int]]:
    """``(raw frame, records, lines per file)`` of a batch: polars' rows the census keeps, Python's for the
    others; ``records`` maps ``(_fi, _line)`` to a Python row's record or a fast row's extra fields."""
    recs, lines, slow, records = [], [], [], {}
    for f in batch:
        starts, ends, numbers = f.ranges
        rows = _present(f, spec) if spec.presence else f.rec
        rows = rows.filter(pl.Series(f.readable)) if not f.readable.all() else rows
        lines.append(numbers[f.parsed][f.readable])
        if f.extra:
            records.update(_extra_records(f, rows, lines[-1]))
            rows = rows.drop(f.extra)
        recs.append(rows)
        rest = np.setdiff1d(np.arange(len(starts)), f.parsed[f.readable], assume_unique=True)
        slow += [(f, int(numbers[i]), f.raw[starts[i]:ends[i]].decode("utf-8").rstrip("\r")) for i in rest.tolist()]
    frame = _fast_rows(batch, recs, lines, spec) if batch else pl.DataFrame(schema=_META | _PARSER)
    counts = {f.fi: len(n) for f, n in zip(batch, lines)}
    entries = [(f.fi, f.rel, n, n, *parse_object(line, spec.what), not line.isascii() or _ESCAPE.search(line) is not None,
                f.meta) for f, n, line in slow if line.strip()]
    if entries:
        py, parsed = python_frame(entries, spec)
        records.update({(e[0], e[3]): r for e, r in zip(entries, parsed) if r is not None})
        frame = pl.concat([frame, py], how="diagonal_relaxed").sort("_fi", "_line")
        for e in entries:
            counts[e[0]] += 1
    return frame, records, counts


def _fast_rows(batch: list[FileRead], recs: list[pl.DataFrame], lines: list[np.ndarray], spec: Spec) -> pl.DataFrame:
    """polars' rows of the files with their meta columns (each file's constants gathered once)."""
    files_ = pl.DataFrame([(f.fi, f.rel, *(f.meta.get(m) for m in spec.meta)) for f in batch], orient="row",
                          schema={"_fi": pl.Int64, "_file": pl.Utf8, **{m: pl.Utf8 for m in spec.meta}})
    line = pl.Series("_line", np.concatenate(lines), dtype=pl.Int64)
    same = len({tuple(r.schema.items()) for r in recs}) == 1
    out = pl.concat([files_[np.repeat(np.arange(len(batch)), [len(n) for n in lines])].with_columns(line, line.alias("_seq")),
                     pl.concat(recs, how="vertical" if same else "diagonal_relaxed")], how="horizontal")
    out = spec.after(out) if spec.after is not None else out
    return out.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in (spec.plain | _PARSER).items() if c not in out.columns])


def _extra_records(f: FileRead, rows: pl.DataFrame, lines: np.ndarray) -> dict:
    """The fields outside the schema of polars' rows: values and ``"field": null``, in the order polars met them."""
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
    """polars' rows with ``<field>.has``: read as not null, or written ``"field": null``."""
    rows = {name: [] for name in spec.fields}
    for row, name in f.nulls:
        rows.setdefault(name, []).append(row)
    return f.rec.with_columns([(pl.col(c).is_not_null() | pl.int_range(pl.len()).is_in(rows[c])).alias(f"{c}.has")
                               for c in spec.fields])


def _entries(text: str, start: int):
    """``(object, 1-based line)`` of each element of the JSON list at ``start``; raises where it stops being one."""
    dec = json.JSONDecoder()
    i = _WS.match(text, _WS.match(text, start).end() + 1).end()
    line, last = 1, 0
    while text[i:i + 1] != "]":
        line += text.count("\n", last, i)
        last = i
        obj, end = dec.raw_decode(text, i)
        yield obj, line
        i = _WS.match(text, end).end()
        if text[i:i + 1] == ",":
            i = _WS.match(text, i + 1).end()
        elif text[i:i + 1] != "]":
            raise json.JSONDecodeError("expected ',' or ']' after a list element", text, i)


def _member_start(text: str, key: str) -> int:
    """Index of the ``[`` of the top-level member ``key`` of a JSON object (a text known to parse)."""
    dec = json.JSONDecoder()
    i = _WS.match(text, text.index("{") + 1).end()
    while True:
        name, i = dec.raw_decode(text, i)
        i = _WS.match(text, _WS.match(text, i).end() + 1).end()   # past the colon
        if name == key:
            return i
        _, i = dec.raw_decode(text, i)
        i = _WS.match(text, _WS.match(text, i).end() + 1).end()   # past the comma


def json_entries(text: str, rel: str, *, layout: str | None = None, what: str = "line", entry: str = "entry",
                 containers: dict | None = None, items: str = "entries") -> list[tuple]:
    """``(line, object or None, parser finding or None)`` of each record of a JSON text: JSON lines, or the entries
    of a JSON list (``layout="list"``, a text starting with ``[``) or of the list an object holds under a key of
    ``containers`` (key -> the list's name); ``what``/``entry``: a line's/an entry's name (``{i}``: its place)."""
    start, name, head = None, "JSON list", text.lstrip()[:1]
    if layout == "list" or (layout is None and head == "["):
        start = 0
    elif layout is None and head == "{" and containers:
        try:
            obj = json.loads(text)
        except (ValueError, RecursionError):
            obj = None
        key = next((k for k in containers if isinstance(obj, dict) and isinstance(obj.get(k), list)), None)
        if key is not None:
            start, name = _member_start(text, key), containers[key]
    if start is None:
        return [(n, *parse_object(line.rstrip("\r"), what)) for n, line in enumerate(text.split("\n"), 1) if line.strip()]
    if text[_WS.match(text, start).end():][:1] != "[":
        return [(1, None, ("malformed_json", NOT_A_LIST.message({"items": items}), None))]
    found, bad = [], None
    try:
        found.extend((line, obj) for obj, line in _entries(text, start))
    except RecursionError:
        bad = (too_deep(text), f"nested deeper than {MAX_DEPTH} levels")
    except ValueError as exc:
        bad = (getattr(exc, "lineno", None), getattr(exc, "msg", str(exc)))
    out = [(line, obj, None) if isinstance(obj, dict) else (line, None, ("not_an_object", NOT_AN_OBJECT.message(
        {"what": entry.format(i=i), "type": type(obj).__name__}), None)) for i, (line, obj) in enumerate(found, 1)]
    if bad is not None:
        out.append((bad[0], None, ("malformed_json", MALFORMED_DOCUMENT.message({"msg": bad[1], "n": len(found),
                                                                                 "what": name}), None)))
    return out


def entry_rows(entries: list[tuple], fi: int, rel: str, check_unicode: bool = True) -> list[tuple]:
    """The rows :func:`python_frame` reads of ``(line, record, finding)`` entries of one file."""
    return [(fi, rel, seq, line, rec, bad, check_unicode, {}) for seq, (line, rec, bad) in enumerate(entries)]


def csv_entries(text: str, delimiter: str = ",", strip_header: bool = False) -> tuple[list[str], list[tuple]]:
    """``(header, (line where the row ends, record, None) of each row)`` of a CSV text (long cells read)."""
    with csv_field_limit():
        reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delimiter)
        if strip_header:
            reader.fieldnames = [f.strip() for f in (reader.fieldnames or [])]
        return list(reader.fieldnames or []), [(reader.line_num, rec, None) for rec in reader]


def too_deep(text: str) -> int:
    """The line where a JSON text first nests deeper than :data:`MAX_DEPTH` (strings aside; vectorised)."""
    depth, in_str, run, offset, chunk = 0, 0, 0, 0, 1 << 20
    for start in range(0, len(text), chunk):
        b = np.frombuffer(text[start:start + chunk].encode("utf-32-le"), dtype=np.uint32)
        idx = np.arange(len(b))
        last = np.maximum.accumulate(np.where(b != 92, idx, -1))
        before = np.empty(len(b), dtype=np.int64)      # backslashes right before each character
        before[0] = run
        before[1:] = np.where(last[:-1] >= 0, idx[:-1] - last[:-1], run + idx[1:])
        quote = (b == 34) & (before % 2 == 0)
        inside = (in_str + np.cumsum(quote) - quote) % 2 == 1
        level = depth + np.cumsum(np.where(inside, 0, np.isin(b, (91, 123)).astype(np.int64) - np.isin(b, (93, 125))))
        over = np.flatnonzero(level > MAX_DEPTH)
        if len(over):
            offset = start + int(over[0])
            break
        depth, in_str = int(level[-1]), int((in_str + quote.sum()) % 2)
        run = int(len(b) - 1 - last[-1]) if last[-1] >= 0 else run + len(b)
    return text.count("\n", 0, offset) + 1


def read_parquet(path: Path, columns: list[str] | None = None) -> pl.DataFrame:
    """A Parquet file (a regular file only: never a wait on a FIFO), every column carrying text read as text."""
    df = pl.read_parquet(io.BytesIO(read_regular(path)), columns=columns)
    return df.with_columns([pl.col(c).cast(pl.Utf8) for c, t in df.schema.items() if isinstance(t, TEXT_TYPES)])


def parquet_frame(path: Path, rel: str, spec: Spec) -> tuple[pl.DataFrame | None, list[Problem]]:
    """A Parquet table as a raw frame (``_line``: the 1-based row): a column of the field's type as it is,
    any other written as Python writes each value."""
    try:
        df = read_parquet(path)
    except Exception as exc:  # noqa: BLE001 - a damaged or foreign file is a data problem, named
        return None, [files.FILE_UNREADABLE.problem(rel, why=f"{type(exc).__name__}: {exc}")]
    cols = [pl.Series("_line", range(1, df.height + 1), dtype=pl.Int64)]
    for f in (f for f in spec.fields if f in df.columns):
        s = df[f]
        if s.dtype == KINDS.get(spec.fields[f]):
            cols.append(s)
            continue
        text = s.cast(pl.Utf8).to_list() if s.dtype.is_integer() else [None if v is None else str(v) for v in s.to_list()]
        kinds = ["int" if s.dtype.is_integer() else type(v).__name__ for v in s.to_list()]
        cols += [pl.Series(f"{f}.t", [k if t is not None else None for k, t in zip(kinds, text)], dtype=pl.Utf8),
                 pl.Series(f"{f}.s", text, dtype=pl.Utf8)]
    return pl.DataFrame(cols), []


def _plain_csv(text: str) -> pl.DataFrame | None:
    """The cells and ``_line`` of a CSV text that is lines split at commas (no quote, CR, NUL, blank line or
    long cell; a distinct header; rows as wide as it), else None."""
    if '"' in text or "\r" in text or "\x00" in text:
        return None
    lines = text.split("\n")
    lines = lines[:-1] if lines and lines[-1] == "" else lines
    if len(lines) < 2 or "" in lines or len(lines[0]) >= CSV_FIELD_LIMIT or len(set(header := lines[0].split(","))) != \
            len(header) or "" in header:
        return None
    body = pl.Series("line", lines[1:], dtype=pl.Utf8)
    if (body.str.count_matches(",", literal=True) != len(header) - 1).any() or body.str.len_chars().max() >= CSV_FIELD_LIMIT:
        return None
    cells = body.str.split_exact(",", len(header) - 1).struct.rename_fields(header).struct.unnest()
    return cells.with_columns(pl.int_range(2, body.len() + 2, dtype=pl.Int64).alias("_line"))


def csv_frame(text: str, rel: str, spec: Spec) -> pl.DataFrame:
    """A CSV table as a raw frame: ``_line`` (the header is line 1), each field's cell as text; a row wider
    than the header carries the finding ``malformed_csv``."""
    plain = _plain_csv(text)
    if plain is None:
        rows = [(n, r, None in r) for n, r, _ in csv_entries(text)[1]]   # a row wider than the header: a None key
        plain = pl.DataFrame({"_line": [n for n, _, _ in rows],
                              **{f: [None if wide else r.get(f) for _, r, wide in rows] for f in spec.fields},
                              "_p0_code": ["malformed_csv" if wide else None for *_, wide in rows],
                              "_p0_msg": ["row has more cells than the header" if wide else None for *_, wide in rows]},
                             schema={"_line": pl.Int64, **{f: pl.Utf8 for f in spec.fields}, "_p0_code": pl.Utf8,
                                     "_p0_msg": pl.Utf8})
    cols = [pl.col(c) for c in ("_line", "_p0_code", "_p0_msg") if c in plain.columns]
    for f in (f for f in spec.fields if f in plain.columns):
        cols += [pl.col(f)] if spec.fields[f] == "str" else [
            pl.when(pl.col(f).is_not_null()).then(pl.lit("str")).alias(f"{f}.t"), pl.col(f).alias(f"{f}.s")]
    return plain.select(cols)
