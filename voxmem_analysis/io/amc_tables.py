"""The files of an Audio MultiChallenge release, found and read into raw frames (values as written).

**Finding files.**  A table is ``<stem>.<ext>`` at the top of the release, ``<ext>`` one of
:data:`TABLE_SUFFIXES` (JSON lines or CSV, each optionally gzip-compressed, or Parquet); two files
for one table are an error.  A verdict part (``verdicts/``, ``tts/``, ``cascaded/``) is every table
file below its folder, *links followed* (:func:`voxmem_analysis.io.files.walk`: a loop or a second
link to a folder already read is named, an unreadable folder is an error); any other file there is
named (``file_not_read``), never skipped silently.

**Reading a file** (:func:`read_table`) gives a *raw frame*: ``_fi``, ``_file``, ``_line`` (JSON lines
and CSV: the line in the file, a CSV header being line 1; Parquet: the 1-based row) and, for each
field asked for, ``f`` (``str(value)`` as Python writes it; a CSV cell as it is) and ``f.t`` (the
value's type: ``str``, ``bool``, ``int``, ``float``, ``list``, ``dict``; null when there is none).
What the values mean is :mod:`voxmem_analysis.io.amc_values`; nothing is judged here.

**Who reads what** (decided here, in :func:`_jsonl_frame`, :func:`_csv_frame` and :func:`_parquet_frame`):

* JSON lines: polars' NDJSON reader parses the file with a schema (text fields as text, the
  true/false fields of :data:`FLAG_FIELDS` as booleans); the key census
  (:func:`voxmem_analysis.io.key_census.readable`) keeps the rows polars read exactly as Python's
  ``json`` reads their line, and Python's ``json`` reads every other line (a number or a list in a
  text field, a text ``"true"``, an extra key, a repeated key, an escape polars reads otherwise).
  A line that is not a JSON object, repeats a key or holds text that is not Unicode is a problem of
  that line (``malformed_json``, ``not_an_object``, ``invalid_unicode``) and gives no row.
* CSV: a text the csv module would read by splitting at commas is split by polars
  (:func:`voxmem_analysis.io.amc_values.plain_csv`); any other is read by the csv module (a row with
  more cells than the header is a problem of that row, ``malformed_csv``, and gives no row).
* Parquet: polars, each column by its type.

Text files are read by :func:`voxmem_analysis.io.files.read_raw`: gzip (a stream cut short is named
with the lines it kept), a leading byte-order mark dropped, bare CR line breaks read as line breaks.
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io import files as rf
from voxmem_analysis.io.amc_values import plain_csv
from voxmem_analysis.io.bulk import parse_lines
from voxmem_analysis.io.jsonl import not_unicode, parse_object
from voxmem_analysis.io.key_census import census, filled, line_ranges, readable
from voxmem_analysis.textlimits import csv_field_limit

__all__ = ["TABLE_SUFFIXES", "FLAG_FIELDS", "UNREAD_LINE", "table_suffix", "table_file", "part_files", "read_table", "empty_raw"]

#: Extensions of a table file, in the order an ambiguity lists them (any letter case).
TABLE_SUFFIXES = (".jsonl", ".jsonl.gz", ".csv", ".csv.gz", ".parquet")
#: Fields whose JSON value is a boolean (polars reads them as such; other JSON types go to Python's json).
FLAG_FIELDS = frozenset({"passed", "exclusion", "audio_cue", "interruption", "tts_subset"})
_META = {"_fi": pl.Int64, "_file": pl.Utf8, "_line": pl.Int64}
_SKIPPED = ("readme", "readme.md", "readme.txt")
_INT_TYPES = (pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64)


def table_suffix(name: str) -> str | None:
    """The table extension of a file name (:data:`TABLE_SUFFIXES`, any letter case), else None."""
    low = name.lower()
    for suf in (".jsonl.gz", ".csv.gz", ".jsonl", ".csv", ".parquet"):
        if low.endswith(suf):
            return suf
    return None


def table_file(root: Path, stem: str) -> tuple[Path | None, list[Problem]]:
    """The file holding table ``stem`` at the top of ``root`` (None when there is none or several:
    ``ambiguous_file`` names them)."""
    hits = [root / f"{stem}{e}" for e in TABLE_SUFFIXES if (root / f"{stem}{e}").is_file()]
    if len(hits) > 1:
        return None, [Problem("ambiguous_file", "error", "several files hold this table: "
                              + ", ".join(h.name for h in hits), hits[0].name)]
    return (hits[0] if hits else None), []


def part_files(root: Path, sub: str) -> tuple[list[Path], list[Problem]]:
    """The table files below ``root/sub`` (links followed, sorted by path) and what listing them found:
    unreadable folders, links not followed, files that are not tables."""
    files, _, problems = rf.walk(root / sub, root)
    tables = []
    for p in files:
        if table_suffix(p.name) is not None:
            tables.append(p)
        elif p.name.lower() not in _SKIPPED:
            problems.append(Problem("file_not_read", "warning", "not read: only *.jsonl, *.csv (each may be .gz) "
                                    "and *.parquet files are verdict tables", rf.rel(p, root)))
    return tables, problems


def empty_raw(fields) -> pl.DataFrame:
    """A raw frame with no row."""
    return pl.DataFrame(schema={**_META, **{c: pl.Utf8 for f in fields for c in (f, f"{f}.t")}})


#: Codes of a line that gives no row (counted with the rows a reader leaves out).
UNREAD_LINE = ("malformed_json", "not_an_object", "invalid_unicode", "malformed_csv")


def read_table(path: Path, rel: str, fields, fi: int = 0) -> tuple[pl.DataFrame, list[Problem]]:
    """The raw frame of one table file (see the module docstring) and the problems reading it found
    (a line that gives no row: one of :data:`UNREAD_LINE`)."""
    suffix = table_suffix(path.name)
    if suffix == ".parquet":
        frame, problems = _parquet_frame(path, rel, fields)
    else:
        raw, problems = rf.read_raw(path, rel)
        frame = None
        if raw is not None:
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                problems = problems + [Problem("file_unreadable", "error", f"cannot read file: {exc}", rel)]
                raw = None
        if raw is not None:
            reader = _csv_frame if suffix in (".csv", ".csv.gz") else _jsonl_frame
            frame, found = reader(raw, rel, fields)
            problems = problems + found
    if frame is None or not frame.height:
        return empty_raw(fields), problems
    out = frame.with_columns(pl.lit(fi, dtype=pl.Int64).alias("_fi"), pl.lit(rel, dtype=pl.Utf8).alias("_file"))
    missing = [pl.lit(None, dtype=pl.Utf8).alias(c) for f in fields for c in (f, f"{f}.t") if c not in out.columns]
    return out.with_columns(missing).select([*_META, *(c for f in fields for c in (f, f"{f}.t"))]), problems


# ----------------------------------------------------------------------------- JSON lines
def _jsonl_frame(raw: bytes, rel: str, fields) -> tuple[pl.DataFrame, list[Problem]]:
    starts, ends, numbers = line_ranges(raw)
    schema = {f: (pl.Boolean if f in FLAG_FIELDS else pl.Utf8) for f in fields}
    rec, parsed = _parse(raw, starts, ends, schema)
    keys, texts, counted, names = census(raw, starts[parsed], ends[parsed])
    n_all, n_str = filled(rec)
    ok = readable(rec, keys - n_all, texts - n_str, counted, names, schema)
    fast = _typed(rec.filter(pl.Series(ok)), schema).with_columns(
        pl.Series("_line", numbers[parsed][ok], dtype=pl.Int64))
    slow = np.setdiff1d(np.arange(len(starts)), parsed[ok], assume_unique=True)
    rows, problems = [], []
    for i in slow.tolist():
        line = raw[starts[i]:ends[i]].decode("utf-8").rstrip("\r")
        if not line.strip():
            continue
        obj, bad = parse_object(line)
        number = int(numbers[i])
        if bad is not None:
            problems.append(Problem(bad[0], "error", bad[1], rel, number, bad[2]))
            continue
        odd = not_unicode(obj)
        if odd:   # "\ud800": valid JSON, but not text a table can hold
            problems += [Problem("invalid_unicode", "error", f"`{f}` holds text that is not valid Unicode (an unpaired "
                                 "surrogate escape)", rel, number, f) for f in odd]
            continue
        rows.append({"_line": number, **_written(obj, fields)})
    slow_frame = pl.DataFrame(rows, schema={"_line": pl.Int64, **{c: pl.Utf8 for f in fields for c in (f, f"{f}.t")}},
                              orient="row") if rows else None
    frame = fast if slow_frame is None else pl.concat([fast, slow_frame], how="diagonal_relaxed").sort("_line")
    return frame, problems


def _parse(raw: bytes, starts: np.ndarray, ends: np.ndarray, schema: dict) -> tuple[pl.DataFrame, np.ndarray]:
    """Rows polars parsed and the index of each one's line: the whole file in one call, else the
    lines in halving groups (:func:`voxmem_analysis.io.bulk.parse_lines`)."""
    if len(starts):
        try:
            rec = pl.read_ndjson(io.BytesIO(raw), schema=schema)
            if rec.height == len(starts):
                return rec, np.arange(len(starts))
        except Exception:  # noqa: BLE001 - any parser complaint: the lines are parsed a group at a time
            pass
        lines = pl.Series("line", [raw[s:e].decode("utf-8") for s, e in zip(starts.tolist(), ends.tolist())])
        rec, _ = parse_lines(lines, schema)
        if rec is not None:
            return rec.drop("_pos"), rec["_pos"].to_numpy()
    return pl.DataFrame(schema=schema), np.zeros(0, dtype=np.int64)


def _typed(rec: pl.DataFrame, schema: dict) -> pl.DataFrame:
    """The raw columns of rows polars read: text as it is, booleans as Python writes them."""
    cols = []
    for f, dtype in schema.items():
        c = pl.col(f)
        if dtype == pl.Boolean:
            cols += [pl.when(c).then(pl.lit("True")).when(~c).then(pl.lit("False")).alias(f),
                     pl.when(c.is_not_null()).then(pl.lit("bool")).alias(f"{f}.t")]
        else:
            cols += [c, pl.when(c.is_not_null()).then(pl.lit("str")).alias(f"{f}.t")]
    return rec.select(cols)


def _written(obj: dict, fields) -> dict:
    out = {}
    for f in fields:
        v = obj.get(f)
        out[f], out[f"{f}.t"] = (None, None) if v is None else (str(v), type(v).__name__)
    return out


# ----------------------------------------------------------------------------- CSV
def _csv_frame(raw: bytes, rel: str, fields) -> tuple[pl.DataFrame, list[Problem]]:
    text = raw.decode("utf-8")
    plain = plain_csv(text)
    if plain is not None:
        present = [f for f in fields if f in plain.columns]
        return plain.select("_line", *[c for f in present for c in (pl.col(f), pl.lit("str").alias(f"{f}.t"))]), []
    reader = csv.DictReader(io.StringIO(text, newline=""))
    with csv_field_limit():
        records = [(reader.line_num, rec) for rec in reader]
    rows = [{"_line": n, **_written(rec, fields)} for n, rec in records if None not in rec]
    problems = [Problem("malformed_csv", "error", "row has more cells than the header", rel, n) for n, rec in records if None in rec]
    schema = {"_line": pl.Int64, **{c: pl.Utf8 for f in fields for c in (f, f"{f}.t")}}
    return pl.DataFrame(rows, schema=schema, orient="row"), problems


# ----------------------------------------------------------------------------- Parquet
def _parquet_frame(path: Path, rel: str, fields) -> tuple[pl.DataFrame | None, list[Problem]]:
    try:
        present = [f for f in fields if f in pl.read_parquet_schema(path)]
        df = pl.read_parquet(path, columns=present) if present else None
        height = df.height if df is not None else pl.scan_parquet(path).select(pl.len()).collect().item()
    except Exception as exc:  # noqa: BLE001 - a damaged or foreign file is a data problem, named
        return None, [Problem("file_unreadable", "error", f"cannot read file: {type(exc).__name__}: {exc}", rel)]
    cols = [pl.Series("_line", range(1, height + 1), dtype=pl.Int64)]
    for f in present:
        cols += _parquet_column(df[f])
    return pl.DataFrame(cols), []


def _parquet_column(s: pl.Series) -> list[pl.Series]:
    """``f`` and ``f.t`` of one Parquet column, each value written as Python writes it."""
    name, dtype = s.name, s.dtype
    if dtype in (pl.Utf8, pl.Categorical) or isinstance(dtype, pl.Enum):
        text, kinds = s.cast(pl.Utf8).to_list(), None
        kind = "str"
    elif dtype in _INT_TYPES:
        text, kind = s.cast(pl.Utf8).to_list(), "int"
    elif dtype in (pl.Boolean, pl.Float32, pl.Float64):
        text, kind = [None if v is None else str(v) for v in s.to_list()], ("bool" if dtype == pl.Boolean else "float")
    else:   # lists, structs, dates, bytes...: as Python writes each value
        values = s.to_list()
        text, kind = [None if v is None else str(v) for v in values], None
        kinds = [None if v is None else type(v).__name__ for v in values]
    if kind is not None:
        kinds = [None if v is None else kind for v in text]
    return [pl.Series(name, text, dtype=pl.Utf8), pl.Series(f"{name}.t", kinds, dtype=pl.Utf8)]
