"""Columnar reading of harness prediction lines: parse a whole batch of lines in one call,
validate whole columns at once, and hand back only the lines that need a closer look.

The per-line reader (:func:`voxmem_analysis.io.release.parse_prediction_line`) stays the
definition of what a line means.  This module is a shortcut for the *plain* lines, the ones
that reader would accept without a single finding:

1. :func:`suspect_lines` flags, from the raw text, every line whose JSON the bulk parser might
   read differently from Python's ``json`` module: control characters, a byte-order mark, a
   surrogate escape, a key holding an escape, a nested object or array, a repeated key, a key
   the bulk schema does not know, or a value of another JSON type than the schema's.
2. :func:`parse_lines` reads the other lines with ``polars.read_ndjson`` and an explicit
   schema, in one call; a batch the parser rejects is split in halves until each bad line is
   on its own (those lines go to the per-line reader too).
3. :func:`build_rows` recomputes every rule of the per-line reader as column expressions and
   returns the frame rows together with a ``clean`` mask: a line is clean only when the
   per-line reader would report nothing for it.  Lines that are not clean are read again,
   one by one, by the per-line reader, so every problem keeps its own ``file:line [field]``
   message and code.

A line is never accepted here that the per-line reader would treat differently: every test is
conservative (a false alarm only costs a slower read of that line).  ``tests/test_loading_bulk.py``
checks that both paths give identical frames and problem lists.
"""
from __future__ import annotations

import io
import re

import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.io.schema import ABLATION_CONDITIONS

__all__ = ["extra_series", "STR_FIELDS", "BOOL_FIELDS", "INT_FIELDS", "SCHEMA", "ITEM_STR_FIELDS", "split_lines", "suspect_lines",
           "parse_lines", "parse_text", "build_rows", "items_supported", "screen_lines", "per_value",
           "line_signatures", "signature_keys"]

STR_FIELDS = ("item_id", "model", "question_id", "context_length", "family_id", "evidence_type", "memory_operation",
              "subtype", "expected_response", "answer_type", "answer_normalization", "question_text", "gold_json",
              "judge_raw", "paired_question_id", "source_operation", "system_prompt_delivery", "response", "judge",
              "error", "input_condition")
BOOL_FIELDS = ("verdict", "allow_abstention", "provider_rejected", "synthetic")
INT_FIELDS = ("n_audio_clips", "session_count", "evidence_session_count", "samekey_haystack_session_count")
SCHEMA = {**{f: pl.Utf8 for f in STR_FIELDS}, **{f: pl.Boolean for f in BOOL_FIELDS}, **{f: pl.Int64 for f in INT_FIELDS}}
#: Item-table columns the rows may take values from (text) ...
ITEM_STR_FIELDS = ("question_id", "context_length", "family_id", "evidence_type", "memory_operation", "subtype",
                   "expected_response", "answer_type", "answer_normalization", "paired_question_id", "question_text",
                   "gold_json", "_source_operation")
#: ... and whole numbers.
ITEM_INT_FIELDS = ("session_count", "evidence_session_count", "samekey_haystack_session_count")

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
_SCREEN_SLICE = 4096
_TYPE_CHARS = {**{f: '"n' for f in STR_FIELDS}, **{f: "tfn" for f in BOOL_FIELDS}, **{f: "0-n" for f in INT_FIELDS}}
_ITEM_ID = r"^(.+)_(\d+[kK])$"
_EXPECTED = ("answer", "insufficient_evidence")
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


def _signature_ok(signature: str) -> bool:
    """The tokens of one line (see ``_TOKEN``; digits as 0; an escaped quote before a colon, inside
    a string, is harmless and skipped) name known keys, each once, each holding a value of its
    schema type (or null), and nothing else."""
    seen = set()
    for tok in signature.split("|") if signature else []:
        if _HARMLESS.match(tok):
            continue
        m = _KEY_TOKEN.match(tok)
        if m is None or m.group(1) in seen or m.group(2) not in _TYPE_CHARS.get(m.group(1), ""):
            return False
        seen.add(m.group(1))
    return bool(seen)


def suspect_lines(lines: pl.Series) -> pl.Series:
    """True for every line the bulk parser must not be trusted with (see module docstring).

    Lines written by one harness share a handful of *signatures* (their key tokens, in order);
    each distinct signature is checked once (repeated keys, key names, value types).
    """
    # one expression per slice of lines, run side by side on polars' thread pool
    expr = pl.col("line").str.extract_all(_TOKEN).list.join("|").str.replace_all("[1-9]", "0")
    frame = lines.to_frame("line")
    step = max(_SCREEN_SLICE, -(-frame.height // 8))
    parts = pl.collect_all([frame.slice(i, step).lazy().select(expr) for i in range(0, frame.height, step)])
    signature = pl.concat(parts).to_series() if parts else pl.Series("line", [], dtype=pl.Utf8)
    verdict = {sig: not _signature_ok(sig) for sig in signature.unique().to_list()}
    return signature.replace_strict(verdict, return_dtype=pl.Boolean)


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


def parse_text(data: bytes, n_lines: int) -> pl.DataFrame | None:
    """All lines of ``data`` (files' texts joined by newlines) in one parser call, or None when the
    parser rejects any of them or its rows do not match the ``n_lines`` non-blank lines one to one
    (then :func:`parse_lines` reads the plain lines alone)."""
    try:
        frame = pl.read_ndjson(io.BytesIO(data), schema=SCHEMA)
    except Exception:  # noqa: BLE001 - any complaint: the careful path decides
        return None
    return frame if frame.height == n_lines else None


def items_supported(items: pl.DataFrame | None) -> bool:
    """The bulk path joins the item table; it handles the column types ``read_items`` produces."""
    if items is None:
        return True
    types = dict(items.schema)
    if types.get("item_id") != pl.Utf8:
        return False
    return (all(types.get(c, pl.Utf8) in (pl.Utf8, pl.Null) for c in ITEM_STR_FIELDS)
            and all(types.get(c, pl.Int64) in (pl.Int64, pl.Null) for c in ITEM_INT_FIELDS))


def _normalized(col: pl.Expr, frame: pl.DataFrame, fn) -> pl.Expr:
    """``fn`` (a taxonomy normaliser) of each value, computed once per distinct value."""
    values = frame.select(col.unique().drop_nulls()).to_series().to_list()
    mapping = {v: fn(v) for v in values}
    return col.replace_strict(mapping, default=None, return_dtype=pl.Utf8)


def _join_items(rec: pl.DataFrame, items: pl.DataFrame | None) -> pl.DataFrame:
    cols = {c: pl.Utf8 for c in ITEM_STR_FIELDS} | {c: pl.Int64 for c in ITEM_INT_FIELDS}
    if items is None:
        return rec.with_columns([pl.lit(None, dtype=t).alias(f"it.{c}") for c, t in cols.items()]
                                + [pl.lit(False).alias("it.found")])
    it = items.unique(subset="item_id", keep="last", maintain_order=True)  # as a dict keyed by item_id: last wins
    it = it.select([pl.col("item_id")] + [(pl.col(c).cast(t) if c in it.columns else pl.lit(None, dtype=t)).alias(f"it.{c}")
                                          for c, t in cols.items()]).with_columns(pl.lit(True).alias("it.found"))
    out = rec.join(it, on="item_id", how="left", maintain_order="left")
    return out.with_columns(pl.col("it.found").fill_null(False))


def _blank_or_null(e: pl.Expr) -> pl.Expr:
    return e.is_null() | (e == "")


def _mismatch_ok(rec: pl.DataFrame, f: str) -> pl.Expr:
    """No ``item_mismatch`` for field ``f``: the line and the item table agree (up to normalisation)."""
    a, b = pl.col(f), pl.col(f"it.{f}")
    ok = a.is_null() | _blank_or_null(b) | (a == b)
    norm = {"context_length": tx.normalize_budget, "evidence_type": tx.normalize_evidence,
            "memory_operation": tx.normalize_operation, "subtype": tx.normalize_subtype}.get(f)
    if norm is not None:
        ok = ok | _normalized(a, rec, norm).eq_missing(_normalized(b, rec, norm))
    return ok.fill_null(False)


def build_rows(rec: pl.DataFrame, items: pl.DataFrame | None, has_items: bool) -> pl.DataFrame:
    """Frame rows (columns of the per-line reader's rows) plus ``_clean`` for the parsed lines ``rec``.

    ``rec`` holds the :data:`SCHEMA` columns and ``_file``, ``_line``, ``_cond`` (ablation condition
    or null).  ``has_items``: an item table was read (then unknown items are errors).
    """
    rec = _join_items(rec, items)
    get = {f: pl.coalesce(pl.col(f), pl.col(f"it.{f}")) for f in ITEM_STR_FIELDS if f in rec.columns and f"it.{f}" in rec.columns}
    get.update({f: pl.coalesce(pl.col(f), pl.col(f"it.{f}")) for f in ITEM_INT_FIELDS})
    rec = rec.with_columns(pl.col("item_id").str.extract(_ITEM_ID, 1).alias("_mq"),
                           pl.col("item_id").str.extract(_ITEM_ID, 2).alias("_mb"),
                           *[e.alias(f"g.{f}") for f, e in get.items()])
    qid = pl.when(_blank_or_null(pl.col("g.question_id"))).then(pl.col("_mq")).otherwise(pl.col("g.question_id"))
    raw_b = pl.when(_blank_or_null(pl.col("g.context_length"))).then(pl.col("_mb")).otherwise(pl.col("g.context_length"))
    rec = rec.with_columns(qid.alias("_qid"), raw_b.alias("_rawb"))
    budget = _normalized(pl.col("_rawb"), rec, tx.normalize_budget)
    mbudget = _normalized(pl.col("_mb"), rec, tx.normalize_budget)
    ev = _normalized(pl.col("g.evidence_type"), rec, tx.normalize_evidence)
    op = _normalized(pl.col("g.memory_operation"), rec, tx.normalize_operation)
    st = _normalized(pl.col("g.subtype"), rec, tx.normalize_subtype)
    src = _normalized(pl.col("source_operation"), rec, tx.normalize_operation)
    mism = [_mismatch_ok(rec, f) for f in ("question_id", "context_length", "evidence_type", "memory_operation",
                                           "subtype", "expected_response", "family_id")]
    rec = rec.with_columns(budget.alias("budget"), mbudget.alias("_mbn"), ev.alias("evidence_type_n"),
                           op.alias("operation"), st.alias("subtype_n"), src.alias("_src"),
                           pl.all_horizontal(mism).alias("_mism_ok"))
    return _finish_rows(rec, has_items)


def _clean_mask(has_items: bool) -> pl.Expr:
    c = pl.col
    exp = c("g.expected_response")
    is_ar = exp == "insufficient_evidence"
    resp_blank = c("response").is_null() | (c("response").str.strip_chars() == "")
    conds = [
        ~_blank_or_null(c("item_id")), ~_blank_or_null(c("model")), c("model") == c("model").str.strip_chars(),
        c("it.found") if has_items else pl.lit(True), c("_mism_ok"), c("_mq").is_not_null(),
        ~c("item_id").str.contains("\n"),
        ~_blank_or_null(c("g.evidence_type")), ~_blank_or_null(c("g.memory_operation")), exp.is_in(_EXPECTED),
        c("budget").is_not_null(), c("_mbn").is_null() | (c("_mbn") == c("budget")), c("_mq") == c("_qid"),
        c("evidence_type_n").is_not_null(), c("operation").is_not_null(),
        _blank_or_null(c("g.subtype")) | c("subtype_n").is_not_null(),
        (c("operation") == "answer_refusal") == is_ar,
        ~((c("evidence_type_n") == "speech_semantics") & (c("operation") == "information_extraction")),
        ~(~c("allow_abstention").fill_null(True) & is_ar),      # false (not null) on a refusal item
        c("system_prompt_delivery").is_null() | c("system_prompt_delivery").is_in(["native", "folded"]),
        ~(c("verdict").fill_null(False) & resp_blank),          # true verdict, empty response
        # ablation lines: the condition (line's, else folder's) is already canonical
        c("_cond").is_null() | pl.when(_blank_or_null(c("input_condition"))).then(c("_cond"))
        .otherwise(c("input_condition")).is_in(list(ABLATION_CONDITIONS)),
    ]
    return pl.all_horizontal([e.fill_null(False) for e in conds])


def _finish_rows(rec: pl.DataFrame, has_items: bool) -> pl.DataFrame:
    c = pl.col
    is_ar = c("g.expected_response") == "insufficient_evidence"
    src = (pl.when(~is_ar).then(c("operation"))
           .when(~_blank_or_null(c("source_operation"))).then(c("_src"))
           .when(~_blank_or_null(c("it._source_operation"))).then(c("it._source_operation")))
    paired = c("g.paired_question_id")
    return rec.select(
        c("model"), c("_qid").alias("question_id"), c("item_id"), c("budget"), c("g.family_id").alias("family_id"),
        c("evidence_type_n").alias("evidence_type"), c("operation"), c("subtype_n").alias("subtype"),
        is_ar.alias("is_ar"), src.alias("source_operation"),
        pl.when(_blank_or_null(paired)).then(None).otherwise(paired).alias("paired_question_id"),
        c("g.answer_type").alias("answer_type"), c("g.answer_normalization").alias("answer_normalization"),
        c("verdict"), pl.lit(None, dtype=pl.Boolean).alias("correct"), pl.lit(None, dtype=pl.Utf8).alias("status"),
        pl.lit(None, dtype=pl.Boolean).alias("scored"), c("judge"), c("allow_abstention"), c("system_prompt_delivery"),
        c("n_audio_clips"), c("g.session_count").alias("session_count"),
        c("g.evidence_session_count").alias("evidence_session_count"),
        c("g.samekey_haystack_session_count").alias("samekey_haystack_session_count"),
        c("response"), c("error"), c("synthetic").fill_null(False), c("_file").alias("source_file"),
        c("_line").alias("source_line"), c("provider_rejected"),
        pl.when(_blank_or_null(c("input_condition"))).then(c("_cond")).otherwise(c("input_condition")).alias("input_condition"),
        pl.coalesce(c("question_text"), c("it.question_text")).alias("question_text"),
        c("g.gold_json").alias("gold_json"), c("judge_raw"), c("_cond").is_not_null().alias("_has_cond"),
        _clean_mask(has_items).alias("_clean"), c("_pos"),
    )


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
