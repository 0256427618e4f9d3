"""Rule tables for flat record files (LongMemEval manifests, question files and verdicts; error-attribution
audit records): each rule defined once, as a polars expression that flags rows of a *raw frame*.

A raw frame has one row per record (line, CSV row or JSON-list entry) and its values as columns
(:func:`value_columns`); ``_fi`` (file index), ``_seq`` (the record's place in its file), ``_file`` and
``_line`` say where it is.  A :class:`Rule` is one line of a table: code, severity, field, stage, the
expression flagging the rows that break it and the message, formatted from a flagged row.
:func:`check` evaluates a table stage by stage (an error at a stage stops the later stages for that
row) and :func:`flagged` lists the problems, per record in table order, records in file order --
the order the row-by-row readers always listed them in.

Values a record holds in the expected JSON type are typed columns; any other value (``"label": "yes"``,
``"source_session": 3.0``, ``"hypothesis": {...}``) leaves the typed column null and fills
``<field>.t`` (Python type name), ``.r`` (``repr``) and ``.s`` (``str``); ``<field>.has`` tells a
missing key from a null.  Nothing here judges a value: the tables are in the readers' modules.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.prediction_rules import PY_WHITESPACE

__all__ = ["Rule", "value_columns", "raw_frame", "check", "flagged", "blank", "typed", "odd", "PY_WHITESPACE",
           "I64_MIN", "I64_MAX", "shown"]

I64_MIN, I64_MAX = -2**63, 2**63 - 1
_TYPES = {"str": (pl.Utf8, lambda v: isinstance(v, str)),
          "bool": (pl.Boolean, lambda v: isinstance(v, bool)),
          "int": (pl.Int64, lambda v: isinstance(v, int) and not isinstance(v, bool) and I64_MIN <= v <= I64_MAX)}
_SUFFIXES = {".has": pl.Boolean, ".t": pl.Utf8, ".r": pl.Utf8, ".s": pl.Utf8}


@dataclass(frozen=True)
class Rule:
    """One rule: rows where ``flag`` is true break it; ``message`` formats a flagged row.

    ``field`` is the field a problem names (a callable: of the flagged row); ``each`` names a list
    column: a flagged row gives one problem per element, ``message(row, element)``, field the element."""

    code: str
    severity: str
    field: str | Callable[[dict], str] | None
    stage: int
    flag: Callable[[], pl.Expr]
    message: Callable[..., str]
    each: str | None = None


def value_columns(records: list, spec: dict[str, str]) -> dict[str, list]:
    """The columns of ``spec`` (``field: "str"|"bool"|"int"``) of Python records (dicts; anything
    else is a row of nulls): ``f`` (the value when of its type), ``f.has``, ``f.t``, ``f.r``, ``f.s``.
    Text that is not valid Unicode (an unpaired surrogate) is held with U+FFFD in its place, its
    ``repr`` in ``.r``."""
    out: dict[str, list] = {}
    dicts = [rec if isinstance(rec, dict) else {} for rec in records]
    for f, kind in spec.items():
        is_kind = _TYPES[kind][1]
        vals = [rec.get(f) for rec in dicts]
        t, r, s = [None] * len(vals), [None] * len(vals), [None] * len(vals)
        for i, v in enumerate(vals):
            if v is None or (is_kind(v) and kind != "str"):
                continue
            if kind == "str" and isinstance(v, str):
                if not v.isascii() and not _utf8(v):
                    vals[i], r[i] = v.encode("utf-8", "replace").decode("utf-8"), repr(v)
                continue
            vals[i], t[i], r[i], s[i] = None, type(v).__name__, repr(v), str(v)
        out.update({f: vals, f"{f}.has": [f in rec for rec in dicts], f"{f}.t": t, f"{f}.r": r, f"{f}.s": s})
    return out


def _utf8(v: str) -> bool:
    try:
        v.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def shown(row: dict, f: str):
    """The value a record held for ``f``, for ``repr`` in a message."""
    return _Repr(row[f"{f}.r"]) if row.get(f"{f}.r") is not None else row.get(f)


class _Repr:
    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def raw_frame(columns: dict[str, list], spec: dict[str, str], meta: dict[str, pl.DataType]) -> pl.DataFrame:
    """A raw frame from :func:`value_columns` output plus meta columns (types from ``meta``)."""
    schema = dict(meta)
    for f, kind in spec.items():
        schema[f] = _TYPES[kind][0]
        schema.update({f + k: t for k, t in _SUFFIXES.items()})
    n = len(next(iter(columns.values()), []))
    return pl.DataFrame({c: columns.get(c, [None] * n) for c in schema}, schema=schema)


def typed(f: str) -> pl.Expr:
    return pl.col(f)


def odd(f: str) -> pl.Expr:
    """The record holds ``f`` with a value of another JSON type than the field's (null aside)."""
    return pl.col(f"{f}.t").is_not_null()


def blank(f: str) -> pl.Expr:
    """``value is None or (isinstance(value, str) and not value.strip())``."""
    return ~odd(f) & (pl.col(f).is_null() | (pl.col(f).str.strip_chars(PY_WHITESPACE) == ""))


def check(frame, rules: tuple[Rule, ...], gate: pl.Expr | None = None, prefix: str = "r"):
    """``frame`` (eager or lazy) with ``<prefix><i>`` (row breaks rule i) for every rule and ``_ok`` (no
    error), stage by stage: a row with an error at one stage is checked no further; ``gate`` (default:
    all rows) says which rows are checked at all."""
    ok = pl.lit(True) if gate is None else gate
    frame = frame.with_columns(ok.fill_null(False).alias("_ok"))
    for stage in sorted({r.stage for r in rules}):
        idx = [i for i, r in enumerate(rules) if r.stage == stage]
        frame = frame.with_columns([(pl.col("_ok") & rules[i].flag()).fill_null(False).alias(f"{prefix}{i}") for i in idx])
        errors = [pl.col(f"{prefix}{i}") for i in idx if rules[i].severity == "error"]
        if errors:
            frame = frame.with_columns((pl.col("_ok") & ~pl.any_horizontal(errors)).alias("_ok"))
    return frame


def flagged(frame: pl.DataFrame, rules: tuple[Rule, ...], phase: int = 1, base: int = 0, prefix: str = "r") -> list:
    """``((file index, phase, record, base + rule, n), Problem)`` of every row :func:`check` flagged."""
    out: list = []
    if not frame.height:
        return out
    hits = frame.select([pl.col(f"{prefix}{i}").any() for i in range(len(rules))]).row(0)
    for i, (rule, hit) in enumerate(zip(rules, hits)):
        if not hit:
            continue
        for row in frame.filter(pl.col(f"{prefix}{i}")).iter_rows(named=True):
            key = (row["_fi"], phase, row["_seq"], base + i)
            if rule.each:
                for n, item in enumerate(row[rule.each]):
                    out.append(((*key, n), Problem(rule.code, rule.severity, rule.message(row, item), row["_file"],
                                                   row["_line"], item)))
                continue
            fld = rule.field(row) if callable(rule.field) else rule.field
            out.append(((*key, 0), Problem(rule.code, rule.severity, rule.message(row), row["_file"], row["_line"], fld)))
    return out
