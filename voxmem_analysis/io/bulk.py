"""Columnar reading of flat JSON-lines records (error-attribution audit records, LongMemEval
verdicts): a raw-text screen telling which lines polars' NDJSON reader reads exactly as Python's
``json`` module does, and a batch parser.

1. :func:`screen_lines` flags, from the raw text, every line whose JSON the bulk parser might
   read differently from Python's ``json``: control characters, a byte-order mark, a surrogate
   escape, a key holding an escape, a nested object or array, a repeated key, a key the record
   does not know, or a value of another JSON type than the record's (:func:`line_signatures`,
   :func:`signature_keys`).
2. :func:`parse_lines` reads lines with ``polars.read_ndjson`` and an explicit schema, in one
   call; a batch the parser rejects is split in halves until each bad line is on its own.

Every test is conservative: a false alarm only costs a slower read of that line.  The prediction
reader decides this differently, without a regular expression (:mod:`voxmem_analysis.io.key_census`);
it shares :data:`SCHEMA` and :func:`extra_series` from here.
"""
from __future__ import annotations

import io
import re

import polars as pl


__all__ = ["extra_series", "STR_FIELDS", "BOOL_FIELDS", "INT_FIELDS", "SCHEMA", "split_lines",
           "parse_lines", "screen_lines", "per_value", "line_signatures", "signature_keys"]

STR_FIELDS = ("item_id", "model", "question_id", "context_length", "family_id", "evidence_type", "memory_operation",
              "subtype", "expected_response", "answer_type", "answer_normalization", "question_text", "gold_json",
              "judge_raw", "paired_question_id", "source_operation", "system_prompt_delivery", "response", "judge",
              "error", "input_condition")
BOOL_FIELDS = ("verdict", "allow_abstention", "provider_rejected", "synthetic")
INT_FIELDS = ("n_audio_clips", "session_count", "evidence_session_count", "samekey_haystack_session_count")
SCHEMA = {**{f: pl.Utf8 for f in STR_FIELDS}, **{f: pl.Boolean for f in BOOL_FIELDS}, **{f: pl.Int64 for f in INT_FIELDS}}

# One scan of each line with these alternatives (leftmost first, non-overlapping) finds:
# 1. every key made of a-z and _ with the first character of its value (``"model": "``);
#    such a token cannot start inside a string, where a quote is always escaped;
# 2. the end of any other key (``":``), or an escaped quote followed by a colon (``\\":``,
#    inside a string: harmless); a key ending in an escaped backslash (``\\\\":``) or in an
#    escaped quote and a plain name (``"x\\"model":``, which would look like ``"model":``) is suspect;
# 3. text on which Python's json / str.strip and the Rust parser / trimming may disagree:
#    control characters (a tab aside), a byte-order mark, surrogate and U+001C..U+001F
#    escapes, invalid escapes.
_TOKEN = (r'"[a-z_]+"[ \t]*:[ \t]*[^ \t]|\\\\"[ \t]*:|\\"[a-z_]+"[ \t]*:|\\?"[ \t]*:|[\x00-\x08\x0a-\x1f\x{feff}]'
          r'|\\(?:[^"\\/bfnrtu]|u(?:[dD][89abAB]|001[c-fC-F]|[0-9a-fA-F]{0,3}[^0-9a-fA-F]))')
_KEY_TOKEN = re.compile(r'"([a-z_]+)"[ \t]*:[ \t]*(.)$')
_HARMLESS = re.compile(r'\\"[ \t]*:$')
_BISECT_FLOOR = 32


def split_lines(texts: list[str], files: list[int], names: list[str], conditions: list[str | None]) -> pl.DataFrame:
    """``_fi, _file, _cond, lineno, line`` of the non-blank lines of several files' texts at once
    (split on ``\\n`` only, trailing ``\\r`` dropped), numbered as
    :func:`voxmem_analysis.io.jsonl.iter_lines` numbers them."""
    frame = pl.DataFrame({"_fi": files, "_file": names, "_cond": conditions, "line": texts},
                         schema={"_fi": pl.Int64, "_file": pl.Utf8, "_cond": pl.Utf8, "line": pl.Utf8})
    line = pl.col("line").str.strip_chars_end("\r") if any("\r" in t for t in texts) else pl.col("line")
    frame = frame.with_columns(pl.col("line").str.split("\n")).explode("line").with_columns(
        pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("_fi").alias("lineno"), line)
    # Python's str.isspace also counts U+001C..U+001F as blank
    return frame.filter(~pl.col("line").str.contains(r"^[\s\x1c-\x1f]*$"))


def parse_lines(lines: pl.Series, schema: dict | None = None) -> tuple[pl.DataFrame | None, list[int]]:
    """Parse ``lines`` (already checked by :func:`suspect_lines`, or another reader's screen) with
    ``schema`` (default: the predictions' :data:`SCHEMA`): ``(frame of the parsed lines with their
    position _pos, positions it rejected)``.

    A rejected batch is halved until the bad lines stand alone (batches below a few dozen lines
    are given up on as a whole: the per-line reader takes them).
    """
    parts: list[pl.DataFrame] = []
    rejected: list[int] = []

    def go(start: int, stop: int) -> None:
        chunk = lines.slice(start, stop - start)
        try:
            df = pl.read_ndjson(io.BytesIO(chunk.str.join("\n").item().encode()), schema=schema or SCHEMA)
            if df.height != stop - start:
                raise ValueError("row count differs from line count")
            parts.append(df.with_columns(pl.int_range(start, stop, dtype=pl.Int64).alias("_pos")))
        except Exception:  # noqa: BLE001 - any parser complaint: split, then leave it to the per-line reader
            if stop - start <= _BISECT_FLOOR:
                rejected.extend(range(start, stop))
            else:
                mid = (start + stop) // 2
                go(start, mid)
                go(mid, stop)

    if len(lines):
        go(0, len(lines))
    return (pl.concat(parts) if parts else None), rejected


# ----------------------------------------------------------------------------- other flat record files
# The same screening and parsing for the records of other JSON-lines inputs (attribution audit
# records, LongMemEval verdicts): their readers pass their own key types and schema.
def line_signatures(lines: pl.Series) -> pl.Series:
    """The key tokens of each line, in order, joined by ``|`` (digits as 0; see ``_TOKEN``)."""
    expr = pl.col("line").str.extract_all(_TOKEN).list.join("|").str.replace_all("[1-9]", "0")
    return lines.to_frame("line").select(expr).to_series()


def signature_keys(signature: str) -> list[tuple[str, str]] | None:
    """``(key, first character of its value)`` of each key token of a signature, in order; None when
    a token is not a plain key (a key with an escape or other characters, text the bulk parser may
    read differently) or a key repeats (an escaped quote before a colon, inside a string, is skipped)."""
    keys: list[tuple[str, str]] = []
    for tok in signature.split("|") if signature else []:
        if _HARMLESS.match(tok):
            continue
        m = _KEY_TOKEN.match(tok)
        if m is None or any(k == m.group(1) for k, _ in keys):
            return None
        keys.append((m.group(1), m.group(2)))
    return keys


def screen_lines(lines: pl.Series, type_chars: dict[str, str], required=()) -> pl.Series:
    """:func:`suspect_lines` for another flat record: True for a line whose keys are not each a key
    of ``type_chars`` (once, with a value whose JSON type starts with one of its characters:
    ``"`` text, ``t``/``f`` boolean, ``0``/``-`` number, ``n`` null), that lacks a ``required`` key,
    or that holds text the bulk parser may read differently (control characters, surrogates...)."""
    signature = line_signatures(lines)
    need = set(required)

    def fits(sig: str) -> bool:
        keys = signature_keys(sig)
        return (bool(keys) and all(c in type_chars.get(k, "") for k, c in keys)
                and need <= {k for k, _ in keys})

    verdict = {sig: not fits(sig) for sig in signature.unique().to_list()}
    return signature.replace_strict(verdict, return_dtype=pl.Boolean) if len(signature) else signature.cast(pl.Boolean)


def per_value(col: pl.Series, fn, dtype=pl.Utf8) -> pl.Series:
    """``fn`` of each value of ``col`` (null stays null), computed once per distinct value."""
    table = {v: fn(v) for v in col.unique().to_list() if v is not None}
    if not table:
        return pl.Series(col.name, [None] * col.len(), dtype=dtype)
    return col.replace_strict(table, default=None, return_dtype=dtype)


def extra_series(name: str, values: list) -> pl.Series:
    """The column of a field outside the schema: Boolean when every value is true/false, Int64 when
    every value is an integer that fits, Float64 for numbers, else text (``str`` of each value) --
    also for integers beyond 64 bits, which are kept exact as text rather than rounded or refused."""
    kinds = {type(v) for v in values if v is not None}
    try:
        if kinds and kinds <= {bool}:
            return pl.Series(name, values, dtype=pl.Boolean)
        if kinds and kinds <= {int}:
            return pl.Series(name, values, dtype=pl.Int64)
        if kinds and kinds <= {int, float}:
            return pl.Series(name, [None if v is None else float(v) for v in values], dtype=pl.Float64)
    except (OverflowError, TypeError, ValueError, pl.exceptions.PolarsError):
        pass
    return pl.Series(name, [None if v is None else str(v) for v in values], dtype=pl.Utf8)
