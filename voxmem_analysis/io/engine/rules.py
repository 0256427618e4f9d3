"""The rule engine of every reader: a rule is data (code, severity, field, stage, flag expression, message),
each message written once.  :func:`check` evaluates a table stage by stage; :func:`flagged` makes the problems."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Callable

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.engine.values import PY_WHITESPACE, Values

__all__ = ["Rule", "fact", "check", "flagged", "ordered", "collapse", "parser_rules", "unicode_rule",
           "required", "true_or_false", "one_of", "first_of_key", "Shown", "shown", "PY_WHITESPACE"]


@dataclass(frozen=True)
class Rule:
    """Rows where ``flag(context)`` is true break the rule; ``message(row)`` says it; ``field`` (or a callable)
    is the field named; ``each``: a list column, one problem per element."""

    code: str
    severity: str
    field: str | Callable[..., str] | None
    stage: int
    flag: Callable[[Any], pl.Expr]
    message: Callable[..., str]
    each: str | None = None

    def problem(self, file: str | None = None, line: int | None = None, count: int = 1, /, **row) -> Problem:
        """The problem of one fact found outside a frame (a file, a folder, a group of rows)."""
        fld = self.field(row) if callable(self.field) else self.field
        return Problem(self.code, self.severity, self.message(row), file, line, fld, count)


def fact(code: str, severity: str, message: Callable[[dict], str], field=None) -> Rule:
    """A rule of facts found outside a frame (its problems made by :meth:`Rule.problem`)."""
    return Rule(code, severity, field, 0, lambda _: pl.lit(False), message)


def check(frame, rules: tuple[Rule, ...], context: Any = None, *, gate: pl.Expr | None = None, prefix: str = "r"):
    """``frame`` (eager or lazy) with ``<prefix><i>`` (the row breaks rule i) and ``_ok`` (no error); ``gate``
    says which rows are checked at all; ``context`` is what each rule's flag is given."""
    eager = isinstance(frame, pl.DataFrame)
    if context is None:
        context = Values(frame.columns if eager else frame.collect_schema().names())
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
            prefix: str = "r", skip=()) -> list[tuple[tuple, Problem]]:
    """``(key(row, rule index, n), Problem)`` of every row :func:`check` flagged, rule by rule (``n`` numbers
    the problems of an ``each`` rule's row); ``skip``: columns no message reads."""
    out: list = []
    if not frame.height:
        return out
    flags = [f"{prefix}{i}" for i in range(len(rules))]
    cols = [c for c in frame.columns if c not in skip and c not in flags]
    for i, (rule, hit) in enumerate(zip(rules, frame.select([pl.col(c).any() for c in flags]).row(0))):
        for row in frame.filter(pl.col(flags[i])).select(cols).iter_rows(named=True) if hit else ():
            for n, args in enumerate([(row, item) for item in row[rule.each]] if rule.each else [(row,)]):
                fld = rule.field(*args) if callable(rule.field) else rule.field
                out.append((key(row, i, n), Problem(rule.code, rule.severity, rule.message(*args), row["_file"],
                                                    row["_line"], fld)))
    return out


def ordered(keyed: list) -> list[Problem]:
    """The problems in the order of their keys (file, line, rule)."""
    return [p for _, p in sorted(keyed, key=lambda kp: kp[0])]


def collapse(problems: list[Problem], limit: int = 50, severities=("error", "warning")) -> list[Problem]:
    """Problems of one code (of ``severities``) beyond ``limit`` in one file said in one "... and N more like the
    above" (counting them all), right after the last one shown."""
    groups: dict[tuple, list[Problem]] = defaultdict(list)
    for p in problems:
        groups[(p.code, p.severity, p.file)].append(p)
    out: list[Problem] = []
    seen: dict[tuple, int] = defaultdict(int)
    for p in problems:
        key = (p.code, p.severity, p.file)
        seen[key] += 1 if p.severity in severities else 0
        if seen[key] <= limit:
            out.append(p)
        if seen[key] == limit and len(groups[key]) > limit:
            rest = groups[key][limit:]
            out.append(replace(groups[key][0], message=f"... and {len(rest)} more like the above", line=None,
                               count=sum(p.count for p in rest)))
    return out


def parser_rules() -> tuple[Rule, Rule]:
    """Stage 0, the parser's findings (``_p0_code``, ``_p0_msg``, ``_p0_field``): not JSON, not an object."""
    return tuple(Rule(code, "error", lambda r: r["_p0_field"], 0, lambda _, c=code: pl.col("_p0_code") == c,
                      lambda r: r["_p0_msg"]) for code in ("malformed_json", "not_an_object"))


_UNICODE = {"k": "field name `{}` is not valid Unicode (an unpaired surrogate escape)",
            "v": "`{}` holds text that is not valid Unicode (an unpaired surrogate escape)"}


def unicode_rule(stage: int) -> Rule:
    """A record holding a name or text that is not valid Unicode (``_uni``: ``k<name>`` / ``v<field>``)."""
    return Rule("invalid_unicode", "error", lambda r, e: e[1:], stage, lambda _: pl.col("_uni").list.len().fill_null(0) > 0,
                lambda r, e: _UNICODE[e[0]].format(e[1:]), each="_uni")


def required(f: str, empty: Callable[[Values], pl.Expr], *, shown_as: str | None = None, stage: int = 1) -> Rule:
    """A required field missing or empty (``empty``: the reader's reading of "empty")."""
    return Rule("missing_field", "error", f, stage, empty, lambda r: f"required field {shown_as or f'`{f}`'} is missing or empty")


def true_or_false(f: str, bad: Callable[[Values], pl.Expr], *, code: str = "invalid_field", stage: int = 2,
                  what: str | None = None) -> Rule:
    """A true/false field holding something else."""
    return Rule(code, "error", f, stage, bad, lambda r: f"{what or f'`{f}`'} must be true or false, got {shown(r, f)!r}")


def one_of(f: str, bad: Callable[[Values], pl.Expr], allowed, *, code: str = "unknown_label", stage: int = 2) -> Rule:
    """A field whose value is not one of ``allowed``."""
    return Rule(code, "error", f, stage, bad, lambda r: f"`{f}` {shown(r, f)!r} is not one of {', '.join(allowed)}")


def first_of_key(frame, key: list[str], first: dict[str, str]):
    """``frame`` with ``_copy`` (an earlier row has the same ``key``) and, for each ``alias: column`` of
    ``first``, that column of the first row with the key."""
    return frame.with_columns((pl.int_range(pl.len()).over(key) > 0).alias("_copy"),
                              *[pl.col(c).first().over(key).alias(a) for a, c in first.items()])


class Shown:
    """A value whose ``repr`` is a given text (what Python wrote for a value the frame cannot hold)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return self.text


def shown(row: dict, f: str):
    """The value a record held for ``f``, for ``repr`` in a message (its ``repr`` where the frame holds one)."""
    if row.get(f"{f}.r") is not None:
        return Shown(row[f"{f}.r"])
    if row.get(f) is None and row.get(f"{f}.s") is not None:
        return row[f"{f}.s"] if row.get(f"{f}.t") == "str" else Shown(row[f"{f}.s"])
    return row.get(f)
