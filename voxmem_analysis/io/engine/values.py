"""The one raw-value encoding of every reader and its readings.  A field ``f`` holds a value of its kind
(``str``/``bool``/``int``); ``f.t``/``f.s`` the type name and ``str()`` of another; ``f.r`` the ``repr()`` of a
text a frame cannot hold; ``f.j`` a list's or object's JSON; ``f.has`` whether the key is there."""
from __future__ import annotations

import polars as pl

__all__ = ["PY_WHITESPACE", "KINDS", "I64_MIN", "I64_MAX", "SUFFIXES", "Values", "per_distinct", "valid_text", "as_int",
           "py_float", "value_of", "reading"]

#: The characters Python's ``str.strip()`` removes (polars' default set lacks U+001C..U+001F).
PY_WHITESPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007"
                 "\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
KINDS = {"str": pl.Utf8, "bool": pl.Boolean, "int": pl.Int64}
I64_MIN, I64_MAX = -2**63, 2**63 - 1
SUFFIXES = {".t": pl.Utf8, ".s": pl.Utf8, ".r": pl.Utf8, ".j": pl.Utf8, ".has": pl.Boolean}


def valid_text(s: str) -> str:
    """``s`` as text a frame can hold (an unpaired surrogate is replaced; the record is rejected anyway)."""
    return s if s.isascii() else s.encode("utf-8", "replace").decode("utf-8")


def value_of(t: str | None, s: str | None):
    """The scalar a type name and text stand for (a list or object: its text)."""
    return None if t is None else {"int": int, "float": float, "bool": lambda x: x == "True"}.get(t, str)(s)


def as_int(v) -> int | None:
    """A whole number in the 64-bit range, or None (booleans, fractions, other texts)."""
    if v is None or v == "" or isinstance(v, bool):
        return None
    out = v if isinstance(v, int) else int(v) if isinstance(v, float) and v.is_integer() else None
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        try:
            out = int(v.strip())
        except ValueError:   # "--5", "²": digits to str.isdigit, not to int()
            return None
    return out if out is not None and I64_MIN <= out <= I64_MAX else None


def py_float(text: str) -> float:
    """``float(text)`` as Python reads it; NaN for a text that is no number."""
    try:
        return float(text)
    except (ValueError, OverflowError):
        return float("nan")


def per_distinct(frame: pl.DataFrame, col: pl.Expr, fn, dtype=pl.Utf8) -> pl.Expr:
    """``fn`` of each value of ``col`` (null stays null), called once per distinct value of ``frame``; a
    value ``fn`` cannot read (``ValueError``, ``TypeError``, ``OverflowError``) gives null."""
    table = {}
    for v in frame.select(col.unique().drop_nulls().alias("v"))["v"].to_list() if frame.height else []:
        try:
            table[v] = fn(v)
        except (ValueError, TypeError, OverflowError):
            table[v] = None
    return col.replace_strict(table, default=None, return_dtype=dtype) if table else pl.lit(None, dtype=dtype)


def _truthy(key: str) -> bool:
    t, _, s = key.partition("\x00")
    return s not in ("[]", "{}") if t in ("list", "dict") else bool(value_of(t, s))


def reading(fn):
    """A reading built once per field and arguments (the expressions are immutable; building them is the cost)."""
    def built(self, *args, **kw):
        key = (fn.__name__, args, tuple(kw.items()))
        if key not in self.memo:
            self.memo[key] = fn(self, *args, **kw)
        return self.memo[key]
    return built


class Values:
    """The readings of one raw frame's fields (``kinds``: field -> kind; a field not listed is ``str``;
    ``frame``: for the readings computed in Python, once per distinct value)."""

    def __init__(self, columns, kinds: dict[str, str] | None = None, frame: pl.DataFrame | None = None):
        self.cols = set(columns)
        self.kinds = kinds or {}
        self.frame = frame
        self.memo: dict = {}

    @reading
    def col(self, name: str, dtype=pl.Utf8) -> pl.Expr:
        return pl.col(name) if name in self.cols else pl.lit(None, dtype=dtype)

    def kind(self, f: str) -> str:
        return self.kinds.get(f, "str")

    @reading
    def typed(self, f: str) -> pl.Expr:
        """The column of values of the field's kind (a ``json`` field has none)."""
        return self.col(f, KINDS[self.kind(f)]) if self.kind(f) in KINDS else pl.lit(None, dtype=pl.Utf8)

    @reading
    def odd(self, f: str) -> pl.Expr:
        """The record holds ``f`` with a value of another JSON type than the field's."""
        return self.col(f"{f}.t").is_not_null() if f"{f}.t" in self.cols else pl.lit(False)

    @reading
    def type(self, f: str) -> pl.Expr:
        """The Python type name of the value (null when there is none)."""
        own = pl.when(self.typed(f).is_not_null()).then(pl.lit(self.kind(f)))
        return pl.coalesce(self.col(f"{f}.t"), own) if f"{f}.t" in self.cols else own

    @reading
    def none(self, f: str) -> pl.Expr:
        """No value (absent, null, a CSV cell the row lacks)."""
        return self.typed(f).is_null() & ~self.odd(f)

    @reading
    def has(self, f: str) -> pl.Expr:
        return self.col(f"{f}.has", pl.Boolean).fill_null(False)

    @reading
    def text(self, f: str) -> pl.Expr:
        """``str(value)`` (null when there is none)."""
        typed = self.typed(f)
        if self.kind(f) == "bool":
            typed = pl.when(typed).then(pl.lit("True")).when(~typed).then(pl.lit("False"))
        return pl.coalesce(typed.cast(pl.Utf8), self.col(f"{f}.s")) if f"{f}.s" in self.cols else typed.cast(pl.Utf8)

    @reading
    def stripped(self, f: str) -> pl.Expr:
        return self.text(f).str.strip_chars(PY_WHITESPACE)

    @reading
    def empty(self, f: str) -> pl.Expr:
        """``value in (None, "")``."""
        return self.none(f) | (self.text(f) == "").fill_null(False)

    @reading
    def blank(self, f: str) -> pl.Expr:
        """A value of the field's type that is null or white space only (a value of another type is not)."""
        return ~self.odd(f) & (self.col(f).is_null() | (self.col(f).str.strip_chars(PY_WHITESPACE) == ""))

    @reading
    def missing(self, f: str) -> pl.Expr:
        """No value, a text of white space only, or NaN (a table's cell that holds nothing)."""
        if f"{f}.t" not in self.cols:   # every value of the field's kind
            return (self.none(f) | (self.stripped(f) == "")).fill_null(True) if self.kind(f) == "str" else self.none(f)
        t = self.type(f)
        return (self.none(f) | ((t == "str") & (self.stripped(f) == "")) | ((t == "float") & (self.text(f) == "nan"))
                ).fill_null(True)

    @reading
    def label(self, f: str) -> pl.Expr:
        """The text a vocabulary reads: ``str(value)``, none for a list or object."""
        if f"{f}.t" not in self.cols:
            return self.text(f)
        return pl.when(self.col(f"{f}.t").is_in(["list", "dict"]).fill_null(False)).then(None).otherwise(self.text(f))

    @reading
    def boolean(self, f: str, true=("true",), false=("false",), *, numbers=()) -> pl.Expr:
        """The boolean a value means: a JSON boolean; a text in ``true``/``false`` (any case, spaces around);
        a number of a type in ``numbers`` (``"int"``, ``"float"``) equal to 0 or 1; else null."""
        t, low = self.type(f), self.stripped(f).str.to_lowercase()
        out = pl.when(t == "bool").then(self.text(f) == "True")
        if numbers:
            x = self.text(f).cast(pl.Float64, strict=False)
            out = out.when(t.is_in(list(numbers)) & ((x == 0) | (x == 1))).then(x == 1)
        return (out.when((t == "str") & low.is_in(list(true) + list(false))).then(low.is_in(list(true)))
                .otherwise(pl.lit(None, dtype=pl.Boolean)))

    def _python(self, f: str, fn, dtype) -> pl.Expr:
        if self.frame is None or f"{f}.t" not in self.cols:
            return pl.lit(None, dtype=dtype)
        return per_distinct(self.frame, self.col(f"{f}.t") + pl.lit("\x00") + self.col(f"{f}.s"), fn, dtype)

    @reading
    def truthy(self, f: str) -> pl.Expr:
        """``bool(value)``."""
        typed = {"str": self.col(f) != "", "bool": self.col(f, pl.Boolean), "int": self.col(f, pl.Int64) != 0}[self.kind(f)]
        return pl.coalesce(typed, self._python(f, _truthy, pl.Boolean)).fill_null(False)

    @reading
    def whole(self, f: str) -> pl.Expr:
        """:func:`as_int` of the value."""
        odd = self._python(f, lambda k: as_int(value_of(*k.split("\x00", 1))), pl.Int64)
        typed = self.typed(f)
        if self.kind(f) != "int":
            typed = per_distinct(self.frame, typed, as_int, pl.Int64) if self.frame is not None else pl.lit(None, pl.Int64)
        return pl.coalesce(typed, odd)

    @reading
    def number(self, f: str) -> pl.Expr:
        """Python's ``float`` of a text or number (NaN for a boolean, a list, a text that is no number)."""
        readable = self.type(f).is_in(["str", "int", "float"])
        return pl.when(readable).then(per_distinct(self.frame, self.text(f), py_float, pl.Float64)).otherwise(float("nan"))
