"""Small value readers of the Audio MultiChallenge tables (:mod:`voxmem_analysis.io.amc`): what an
empty cell is, how a true/false cell reads, plain CSV text read by columns, and values mapped once
per distinct value."""
from __future__ import annotations

import csv

import pandas as pd
import polars as pl

__all__ = ["empty", "as_bool", "text", "plain_csv", "record_cell", "mapped", "to_pandas"]

_BOOL_TEXT = {True: "true", False: "false"}


def empty(v) -> bool:
    return v is None or (isinstance(v, float) and v != v) or (isinstance(v, str) and not v.strip())


def as_bool(v):
    """``(value, ok)``: JSON booleans, 0/1, and the CSV texts true/false/1/0 (any case)."""
    if isinstance(v, bool):
        return v, True
    if isinstance(v, int) and v in (0, 1):
        return bool(v), True
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "1", "0"):
        return v.strip().lower() in ("true", "1"), True
    return None, False


def text(v) -> str:
    return str(v).strip()


def plain_csv(text: str) -> pl.DataFrame | None:
    """Text columns and ``_line`` of a CSV text the csv module reads by splitting lines at commas
    (no quote, no CR, no NUL, no blank line, a distinct header, every row as many cells as the
    header, no cell over the csv field limit); None for any other text."""
    if '"' in text or "\r" in text or "\x00" in text:
        return None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) < 2 or "" in lines or len(lines[0]) >= csv.field_size_limit():
        return None
    header = lines[0].split(",")
    if len(set(header)) != len(header) or "" in header:
        return None
    body = pl.Series("line", lines[1:], dtype=pl.Utf8)
    if ((body.str.count_matches(",", literal=True) != len(header) - 1).any()
            or body.str.len_chars().max() >= csv.field_size_limit()):
        return None
    cells = body.str.split_exact(",", len(header) - 1).struct.rename_fields(header).struct.unnest()
    return cells.with_columns(pl.int_range(2, body.len() + 2, dtype=pl.Int64).alias("_line"))


def record_cell(v, flag: bool):
    """A JSON/Parquet value as the CSV text the row checks treat alike (a boolean only in a
    true/false field ``flag``: elsewhere ``str(True)`` is ``True``), or ``...`` when it has none."""
    if v is None or type(v) is str:
        return v
    if type(v) is bool:
        return _BOOL_TEXT[v] if flag else ...
    if type(v) is int and v in (0, 1):
        return str(v)
    return ...


def mapped(col: pl.Series, fn, dtype=pl.Utf8) -> pl.Series:
    """``fn`` of each value (null for a missing cell), computed once per distinct value."""
    table = {v: fn(v) for v in col.unique().to_list() if v is not None}
    if not table:
        return pl.Series(col.name, [None] * col.len(), dtype=dtype)
    return col.replace_strict(table, default=None, return_dtype=dtype)


_ARROW_SAME: list[bool] = []


def to_pandas(frame: pl.DataFrame) -> pd.DataFrame:
    """``pd.DataFrame`` of ``frame``'s rows as the row-by-row path builds it (from Python values):
    through Arrow when this pandas gives text and boolean columns the same types that way (checked
    once), else from Python lists.  ``frame`` holds no nulls."""
    if not _ARROW_SAME:
        probe = pl.DataFrame({"a": ["x"], "b": [True], "c": [1.5]})
        _ARROW_SAME.append(probe.to_pandas().dtypes.to_dict() == pd.DataFrame([probe.row(0, named=True)]).dtypes.to_dict())
    if _ARROW_SAME[0]:
        return frame.to_pandas()
    return pd.DataFrame({c: frame[c].to_list() for c in frame.columns})
