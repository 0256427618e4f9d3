"""The one rule engine of every reader: each validation rule defined once, as a polars expression that
flags rows of a *raw frame*, its message formatted from a flagged row.

A raw frame has one row per record (a line, a CSV row, a JSON-list entry, a rubric result) and its
values as columns; ``_file`` and ``_line`` say where it is, and a reader adds what its problems' sort
key needs (``_fi``, the file's index; ``_seq``, the record's place in its file).  A :class:`Rule` is
one line of a reader's rule table: code, severity, field, stage, the expression flagging the rows that
break it (``flag(context)``: the reader's expressions over the frame, such as
:class:`~voxmem_analysis.io.prediction_rules.Values` or :class:`~voxmem_analysis.io.amc_values.Cells`,
or None) and the message.  :func:`check` evaluates a table stage by stage (an error at one stage stops
the later stages for that row); :func:`flagged` lists the problems keyed by the reader's sort key --
per record in table order, records in file order, as the row-by-row readers always listed them.
The tables stay with their readers (predictions, LongMemEval, error attribution, Audio MultiChallenge).

For Python records (a line Python's ``json`` read): values a record holds in the expected JSON type
are typed columns (:func:`value_columns`); any other value (``"label": "yes"``, ``"source_session":
3.0``) leaves the typed column null and fills ``<field>.t`` (Python type name), ``.r`` (``repr``) and
``.s`` (``str``); ``<field>.has`` tells a missing key from a null.  :func:`shown` gives the value a
record held, for ``repr`` in a message.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import polars as pl

from voxmem_analysis.errors import Problem

__all__ = ["Rule", "check", "flagged", "parser_rules", "unicode_rule", "Shown", "shown", "value_columns", "valid_text", "raw_frame",
           "blank", "odd", "PY_WHITESPACE", "I64_MIN", "I64_MAX"]

#: The characters Python's ``str.strip()`` removes (polars' default set lacks U+001C..U+001F).
PY_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                 "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
I64_MIN, I64_MAX = -2**63, 2**63 - 1
_TYPES = {"str": (pl.Utf8, lambda v: isinstance(v, str)),
          "bool": (pl.Boolean, lambda v: isinstance(v, bool)),
          "int": (pl.Int64, lambda v: isinstance(v, int) and not isinstance(v, bool) and I64_MIN <= v <= I64_MAX)}
_SUFFIXES = {".has": pl.Boolean, ".t": pl.Utf8, ".r": pl.Utf8, ".s": pl.Utf8}


@dataclass(frozen=True)
class Rule:
    """One rule: rows where ``flag(context)`` is true break it; ``message(row)`` formats a flagged row.

    ``field`` is the field a problem names (a callable: of the flagged row).  ``each`` names a list
    column: a flagged row gives one problem per element, ``message(row, element)``, ``field(row, element)``."""

    code: str
    severity: str
    field: str | Callable[..., str] | None
    stage: int
    flag: Callable[[Any], pl.Expr]
    message: Callable[..., str]
    each: str | None = None


def check(frame, rules: tuple[Rule, ...], context: Any = None, *, gate: pl.Expr | None = None, prefix: str = "r"):
    """``frame`` (eager or lazy) with ``<prefix><i>`` (the row breaks rule i) for every rule and ``_ok`` (no
    error), stage by stage: a row with an error at one stage is checked no further; ``gate`` (default:
    all rows) says which rows are checked at all; ``context`` is what each rule's ``flag`` is given."""
    frame = frame.with_columns((pl.lit(True) if gate is None else gate).fill_null(False).alias("_ok"))
    for stage in sorted({r.stage for r in rules}):
        idx = [i for i, r in enumerate(rules) if r.stage == stage]
        frame = frame.with_columns([(pl.col("_ok") & rules[i].flag(context)).fill_null(False).alias(f"{prefix}{i}")
                                    for i in idx])
        errors = [pl.col(f"{prefix}{i}") for i in idx if rules[i].severity == "error"]
        if errors:
            frame = frame.with_columns((pl.col("_ok") & ~pl.any_horizontal(errors)).alias("_ok"))
    return frame


def flagged(frame: pl.DataFrame, rules: tuple[Rule, ...], key: Callable[[dict, int, int], tuple], *,
            prefix: str = "r", skip=()) -> list:
    """``(key(row, rule index, n), Problem)`` of every row :func:`check` flagged, rule by rule (``n``
    numbers the problems of an ``each`` rule's row; 0 otherwise).  ``skip``: columns no message reads
    (left in the frame)."""
    out: list = []
    if not frame.height:
        return out
    flags = [f"{prefix}{i}" for i in range(len(rules))]
    hits = frame.select([pl.col(c).any() for c in flags]).row(0)
    cols = [c for c in frame.columns if c not in skip and c not in flags]
    for i, (rule, hit) in enumerate(zip(rules, hits)):
        if not hit:
            continue
        for row in frame.filter(pl.col(flags[i])).select(cols).iter_rows(named=True):
            for n, args in enumerate([(row, item) for item in row[rule.each]] if rule.each else [(row,)]):
                fld = rule.field(*args) if callable(rule.field) else rule.field
                out.append((key(row, i, n), Problem(rule.code, rule.severity, rule.message(*args), row["_file"],
                                                    row["_line"], fld)))
    return out


def parser_rules(not_an_object: Callable[[dict], str] = lambda r: r["_p0_msg"]) -> tuple[Rule, Rule]:
    """Stage 0, the parser's findings (``_p0_code``, ``_p0_msg``, ``_p0_field``): a line that is not JSON,
    or not an object (``not_an_object`` formats its message)."""
    return (Rule("malformed_json", "error", lambda r: r["_p0_field"], 0, lambda _: pl.col("_p0_code") == "malformed_json",
                 lambda r: r["_p0_msg"]),
            Rule("not_an_object", "error", None, 0, lambda _: pl.col("_p0_code") == "not_an_object", not_an_object))


def unicode_rule(stage: int) -> Rule:
    """A record holding text that is not valid Unicode (``_uni``: the fields)."""
    return Rule("invalid_unicode", "error", lambda r, f: f, stage, lambda _: pl.col("_uni").list.len() > 0,
                lambda r, f: f"`{f}` holds text that is not valid Unicode (an unpaired surrogate escape)", each="_uni")


class Shown:
    """A value whose ``repr`` is a given text (what Python wrote for a value of an unexpected type)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def shown(row: dict, f: str):
    """The value a row held for ``f``, for ``repr`` in a message: its ``repr`` where the frame holds one
    (``f.r``), else the value; in a frame of texts (``f`` holds ``str(value)``, ``f.t`` its type and there
    is no ``f.r``), a value that is no text as Python writes it."""
    r = row.get(f"{f}.r")
    if r is None and f"{f}.r" not in row and row.get(f"{f}.t") not in (None, "str"):
        r = row[f]
    return row.get(f) if r is None else Shown(r)


# ----------------------------------------------------------------------------- Python records
def value_columns(records: list, spec: dict[str, str]) -> dict[str, list]:
    """The columns of ``spec`` (``field: "str"|"bool"|"int"``) of Python records (dicts; anything
    else is a row of nulls): ``f`` (the value when of its type), ``f.has``, ``f.t``, ``f.r``, ``f.s``.
    Text that is not valid Unicode (an unpaired surrogate) is held as :func:`valid_text` makes it, its
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
                if valid_text(v) != v:
                    vals[i], r[i] = valid_text(v), repr(v)
                continue
            vals[i], t[i], r[i], s[i] = None, type(v).__name__, repr(v), valid_text(str(v))
        out.update({f: vals, f"{f}.has": [f in rec for rec in dicts], f"{f}.t": t, f"{f}.r": r, f"{f}.s": s})
    return out


def valid_text(s: str) -> str:
    """``s`` as text a frame can hold (an unpaired surrogate is replaced; the record is rejected anyway)."""
    return s if s.isascii() else s.encode("utf-8", "replace").decode("utf-8")


def raw_frame(columns: dict[str, list], spec: dict[str, str], meta: dict[str, pl.DataType]) -> pl.DataFrame:
    """A raw frame from :func:`value_columns` output plus meta columns (types from ``meta``)."""
    schema = dict(meta)
    for f, kind in spec.items():
        schema[f] = _TYPES[kind][0]
        schema.update({f + k: t for k, t in _SUFFIXES.items()})
    n = len(next(iter(columns.values()), []))
    return pl.DataFrame({c: columns.get(c, [None] * n) for c in schema}, schema=schema)


def odd(f: str) -> pl.Expr:
    """The record holds ``f`` with a value of another JSON type than the field's (null aside)."""
    return pl.col(f"{f}.t").is_not_null()


def blank(f: str) -> pl.Expr:
    """``value is None or (isinstance(value, str) and not value.strip())``."""
    return ~odd(f) & (pl.col(f).is_null() | (pl.col(f).str.strip_chars(PY_WHITESPACE) == ""))
