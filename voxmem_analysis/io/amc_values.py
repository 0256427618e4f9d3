"""What a cell of an Audio MultiChallenge table means, each reading defined once as a polars expression.

A table file becomes a *raw frame* (:mod:`voxmem_analysis.io.amc_tables`): for each field ``f`` the
column ``f`` holds ``str(value)`` as Python writes it (a CSV cell as it is) and ``f.t`` the value's
type (``str``, ``bool``, ``int``, ``float``, ``list``, ``dict``; null when the row has no value for
``f``; :func:`voxmem_analysis.io.rules.shown` gives it for a message).  :class:`Cells` turns those
columns into the readings every rule's flag uses (the flags' context, see :mod:`voxmem_analysis.io.rules`):

* **empty**: no value, a text of white space only, or NaN;
* **text**: the value as text, white space around it removed (Python's ``str.strip``);
* **flag**: a true/false value -- a JSON boolean, the numbers 0/1, or the texts
  ``true``/``false``/``1``/``0`` in any case -- else null;
* **number**: the value as Python's ``float`` reads it (``"1e3"``, ``" 5 "``, ``"1_000"``), NaN for
  anything else (a boolean, a list, a text that is no number).

Readings that need Python (``float``, the axis and label vocabularies, ``str.capitalize``) are computed
once per distinct value (:func:`per_distinct`).  Also here: the CSV texts polars may split by itself
(:func:`plain_csv`) and the pandas frame of a polars frame (:func:`to_pandas`).
"""
from __future__ import annotations

import pandas as pd
import polars as pl

from voxmem_analysis.io.rules import PY_WHITESPACE
from voxmem_analysis.textlimits import CSV_FIELD_LIMIT

__all__ = ["Cells", "per_distinct", "py_float", "plain_csv", "to_pandas"]

_TRUE, _FALSE = ("true", "1"), ("false", "0")


class Cells:
    """Expressions over one raw frame (see the module docstring)."""

    def __init__(self, frame: pl.DataFrame):
        self.cols = set(frame.columns)

    def raw(self, f: str) -> pl.Expr:
        return pl.col(f) if f in self.cols else pl.lit(None, dtype=pl.Utf8)

    def type(self, f: str) -> pl.Expr:
        name = f"{f}.t"
        return pl.col(name) if name in self.cols else pl.lit(None, dtype=pl.Utf8)

    def none(self, f: str) -> pl.Expr:
        """The row has no value for ``f`` (absent, JSON null, a CSV cell the row lacks)."""
        return self.type(f).is_null()

    def empty(self, f: str) -> pl.Expr:
        t = self.type(f)
        blank = (t == "str") & (self.text(f) == "")
        return (self.none(f) | blank | ((t == "float") & (self.raw(f) == "nan"))).fill_null(True)

    def text(self, f: str) -> pl.Expr:
        return self.raw(f).str.strip_chars(PY_WHITESPACE)

    def flag(self, f: str) -> pl.Expr:
        """The boolean a true/false value means; null for a value that is none."""
        t, v = self.type(f), self.raw(f)
        low = self.text(f).str.to_lowercase()
        return (pl.when(t == "bool").then(v == "True")
                .when((t == "int") & v.is_in(["0", "1"])).then(v == "1")
                .when((t == "str") & low.is_in(_TRUE + _FALSE)).then(low.is_in(_TRUE))
                .otherwise(pl.lit(None, dtype=pl.Boolean)))


def per_distinct(frame: pl.DataFrame, col: pl.Expr, fn, dtype=pl.Utf8) -> pl.Expr:
    """``fn`` of each value of the text expression ``col`` (null stays null), called once per distinct
    value of ``frame``; a value ``fn`` cannot read (it raises ``ValueError``/``TypeError``) gives null."""
    values = frame.select(col.unique().drop_nulls().alias("v"))["v"].to_list() if frame.height else []
    table = {}
    for v in values:
        try:
            table[v] = fn(v)
        except (ValueError, TypeError, OverflowError):
            table[v] = None
    if not table:
        return pl.lit(None, dtype=dtype)
    return col.replace_strict(table, default=None, return_dtype=dtype)


def py_float(text: str) -> float:
    """``float(text)`` as Python reads it; NaN for a text that is no number."""
    try:
        return float(text)
    except (ValueError, OverflowError):
        return float("nan")


def plain_csv(text: str) -> pl.DataFrame | None:
    """Text columns and ``_line`` of a CSV text the csv module reads by splitting lines at commas
    (no quote, no CR, no NUL, no blank line, a distinct header, every row as many cells as the
    header, no cell of :data:`~voxmem_analysis.textlimits.CSV_FIELD_LIMIT` characters); None for any other text."""
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
    if ((body.str.count_matches(",", literal=True) != len(header) - 1).any()
            or body.str.len_chars().max() >= CSV_FIELD_LIMIT):
        return None
    cells = body.str.split_exact(",", len(header) - 1).struct.rename_fields(header).struct.unnest()
    return cells.with_columns(pl.int_range(2, body.len() + 2, dtype=pl.Int64).alias("_line"))


_ARROW_SAME: list[bool] = []


def to_pandas(frame: pl.DataFrame) -> pd.DataFrame:
    """``pd.DataFrame`` of ``frame``'s rows as pandas builds it from Python row values: through Arrow
    when this pandas gives text and boolean columns the same types that way (checked once), else
    from Python lists.  ``frame`` holds no nulls."""
    if not _ARROW_SAME:
        probe = pl.DataFrame({"a": ["x"], "b": [True], "c": [1.5]})
        _ARROW_SAME.append(probe.to_pandas().dtypes.to_dict() == pd.DataFrame([probe.row(0, named=True)]).dtypes.to_dict())
    if _ARROW_SAME[0]:
        return frame.to_pandas()
    return pd.DataFrame({c: frame[c].to_list() for c in frame.columns})
