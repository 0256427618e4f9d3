"""The declaration of a harness prediction line: its fields, the item table's values joined to it, the
derived columns and the rules (stages: parse 0, identity 1, rejecting errors 2, whole numbers 3)."""
from __future__ import annotations

import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.io.engine.records import Spec
from voxmem_analysis.io.engine.rules import PY_WHITESPACE, Rule, check, flagged, parser_rules, required, shown, unicode_rule
from voxmem_analysis.io.engine.values import Values, reading
from voxmem_analysis.io.schema import ABLATION_CONDITIONS, COLUMN_NAMES, ITEM_FIELDS, REQUIRED_ITEM_FIELDS, normalize_condition

__all__ = ["SPEC", "KNOWN_KEYS", "RULES", "LineValues", "check_lines"]

STR_FIELDS = ("item_id", "model", "question_id", "context_length", "family_id", "evidence_type", "memory_operation",
              "subtype", "expected_response", "answer_type", "answer_normalization", "question_text", "gold_json",
              "judge_raw", "paired_question_id", "source_operation", "system_prompt_delivery", "response", "judge",
              "error", "input_condition")
BOOL_FIELDS = ("verdict", "allow_abstention", "provider_rejected", "synthetic")
INT_FIELDS = ("n_audio_clips", "session_count", "evidence_session_count", "samekey_haystack_session_count")
#: How a harness line is read (one typed column per field of the frame; the census decides who reads it).
SPEC = Spec({**{f: "str" for f in STR_FIELDS}, **{f: "bool" for f in BOOL_FIELDS}, **{f: "int" for f in INT_FIELDS}},
            meta={"_cond": None})
#: Fields a line may carry that are not extra columns (the frame's own columns and the item fields).
KNOWN_KEYS = frozenset(COLUMN_NAMES) | frozenset(ITEM_FIELDS) | {
    "context_length", "memory_operation", "expected_response", "question_text", "gold_json", "judge_raw",
    "input_condition", "provider_rejected"}
#: Item-table columns the lines may take values from: text, and whole numbers.
ITEM_STR_FIELDS = ("question_id", "context_length", "family_id", "evidence_type", "memory_operation", "subtype",
                   "expected_response", "answer_type", "answer_normalization", "paired_question_id", "question_text",
                   "gold_json", "_source_operation")
ITEM_INT_FIELDS = ("session_count", "evidence_session_count", "samekey_haystack_session_count")
_ITEM_ID = r"^(.+)_(\d+[kK])\n?$"      # Python's `$` also matches before a final newline
_LONG_ITEM_FIELDS = ("question_text", "gold_json")
_EXPECTED = ("answer", "insufficient_evidence")
_DELIVERY = ("native", "folded")
_MISMATCH_FIELDS = ("question_id", "context_length", "evidence_type", "memory_operation", "subtype",
                    "expected_response", "family_id")
_NORMALIZERS = {"context_length": tx.normalize_budget, "evidence_type": tx.normalize_evidence,
                "memory_operation": tx.normalize_operation, "subtype": tx.normalize_subtype}


class LineValues(Values):
    """A line's values, or as the harness reader looked them up (``get_*``: the line's, else the item table's)."""

    @reading
    def get_label(self, f: str) -> pl.Expr:
        return pl.when(self.none(f)).then(pl.col(f"it.{f}").cast(pl.Utf8)).otherwise(self.label(f))

    @reading
    def get_text(self, f: str) -> pl.Expr:
        return pl.when(self.none(f)).then(pl.col(f"it.{f}").cast(pl.Utf8)).otherwise(self.text(f))

    @reading
    def get_empty(self, f: str) -> pl.Expr:
        return pl.when(self.none(f)).then(pl.col(f"it.{f}").cast(pl.Utf8).fill_null("") == "").otherwise(self.empty(f))

    @reading
    def get_truthy(self, f: str) -> pl.Expr:
        item = pl.col(f"it.{f}")
        item_truthy = (item != "") if f not in ITEM_INT_FIELDS else (item != 0)
        return pl.when(self.none(f)).then(item_truthy.fill_null(False)).otherwise(self.truthy(f))

    @reading
    def flag(self, f: str) -> tuple[pl.Expr, pl.Expr]:
        """``(value, ok)`` of a true/false field: a JSON boolean, or the text true/false in any case."""
        value = self.boolean(f)
        return value, self.none(f) | value.is_not_null()

    @reading
    def whole_via(self, f: str, via_item: bool) -> pl.Expr:
        own = self.whole(f)
        return pl.when(self.none(f)).then(pl.col(f"it.{f}")).otherwise(own) if via_item else own


def _values(frame: pl.DataFrame) -> LineValues:
    return LineValues(frame.columns, SPEC.fields, frame)


def _safe(fn, v):
    """``fn(v)``; a value the normaliser cannot read (``"²"`` for a budget) is no label."""
    try:
        return fn(v)
    except (ValueError, TypeError, OverflowError):
        return None


def item_columns(frame: pl.DataFrame, items: pl.DataFrame | None) -> pl.DataFrame:
    """``frame`` with the item table's values of each line's item (``it.<field>``, ``it.found``); a
    repeated item_id: the last row counts."""
    cols = {c: pl.Utf8 for c in ITEM_STR_FIELDS} | {c: pl.Int64 for c in ITEM_INT_FIELDS}
    if items is None:
        return frame.with_columns([pl.lit(None, dtype=t).alias(f"it.{c}") for c, t in cols.items()]
                                  + [pl.lit(False).alias("it.found")])
    for f in _LONG_ITEM_FIELDS:   # copied to every row only when some line lacks the field
        if f in frame.columns and frame[f].null_count() == 0:
            cols.pop(f)
    it = items.unique(subset="item_id", keep="last", maintain_order=True)
    it = it.select([pl.col("item_id").cast(pl.Utf8)] + [
        (_as_text(it[c]) if t == pl.Utf8 and c in it.columns else pl.col(c).cast(t, strict=False) if c in it.columns
         else pl.lit(None, dtype=t)).alias(f"it.{c}") for c, t in cols.items()]).with_columns(pl.lit(True).alias("it.found"))
    out = frame.join(it, left_on=pl.col("item_id"), right_on="item_id", how="left", maintain_order="left")
    missing = [pl.lit(None, dtype=pl.Utf8).alias(f"it.{f}") for f in _LONG_ITEM_FIELDS if f"it.{f}" not in out.columns]
    return out.with_columns(pl.col("it.found").fill_null(False), *missing)


def _as_text(col: pl.Series) -> pl.Expr:
    """An item column as text, each value as ``str()`` writes it."""
    if col.dtype in (pl.Utf8, pl.Null):
        return pl.col(col.name).cast(pl.Utf8)
    table = {v: str(v) for v in col.unique().to_list() if v is not None}
    return pl.col(col.name).replace_strict(table, default=None, return_dtype=pl.Utf8)


def _derived(frame: pl.DataFrame, has_items: bool) -> pl.DataFrame:
    """The values the rules read: the item_id's parts, the normalised labels and flags."""
    v = _values(frame)
    ids = frame.select(pl.col("item_id").unique().drop_nulls()).to_series()
    parts = ids.to_frame().select(pl.col("item_id").str.extract(_ITEM_ID, 1).alias("q"),
                                  pl.col("item_id").str.extract(_ITEM_ID, 2).alias("b"))
    ids = ids.to_list()    # each item_id's parts found once
    frame = frame.with_columns(
        pl.col("item_id").replace_strict(ids, parts["q"], default=None, return_dtype=pl.Utf8).alias("d.mq"),
        pl.col("item_id").replace_strict(ids, parts["b"], default=None, return_dtype=pl.Utf8).alias("d.mb"))
    qid = pl.when(v.get_truthy("question_id")).then(v.get_text("question_id")).otherwise(pl.col("d.mq"))
    rawb = pl.when(v.get_truthy("context_length")).then(v.get_text("context_length")).otherwise(pl.col("d.mb"))
    rawb_label = pl.when(v.get_truthy("context_length")).then(v.get_label("context_length")).otherwise(pl.col("d.mb"))
    frame = frame.with_columns(qid.alias("d.qid"), rawb.alias("d.rawb"), rawb_label.alias("d.rawb_label"),
                               *[v.get_label(f).alias(f"d.{f}") for f in ("evidence_type", "memory_operation", "subtype")],
                               v.get_text("expected_response").alias("d.expected_response"),
                               pl.when(v.truthy("input_condition")).then(pl.col("input_condition"))
                               .otherwise(pl.col("_cond")).alias("d.cond_raw"),
                               v.label("source_operation").alias("d.src_raw"),
                               v.truthy("input_condition").alias("d.cond_own"),
                               v.get_truthy("question_id").alias("d.qid_own"),
                               v.get_truthy("context_length").alias("d.rawb_own"),
                               *[_differ(v, f).alias(f"d.mm.{f}") for f in _MISMATCH_FIELDS])
    frame = frame.with_columns(_normalised(frame, {
        "d.budget": ("d.rawb_label", tx.normalize_budget), "d.mbn": ("d.mb", tx.normalize_budget),
        "d.ev": ("d.evidence_type", tx.normalize_evidence), "d.op": ("d.memory_operation", tx.normalize_operation),
        "d.st": ("d.subtype", tx.normalize_subtype), "d.cond": ("d.cond_raw", normalize_condition),
        "d.src": ("d.src_raw", tx.normalize_operation)}))
    frame = _same_up_to_spelling(frame, v)
    is_ar = pl.when(v.none("expected_response")).then(pl.col("it.expected_response")).otherwise(
        pl.col("expected_response")) == "insufficient_evidence"
    flags = {f: v.flag(f) for f in ("provider_rejected", "synthetic", "verdict", "allow_abstention")}
    return frame.with_columns(is_ar.fill_null(False).alias("d.is_ar"),
                              *[e.alias(f"d.{f}") for f, (e, _) in flags.items()],
                              *[ok.alias(f"d.{f}.ok") for f, (_, ok) in flags.items()],
                              pl.lit(has_items).alias("d.has_items"))


def _normalised(frame: pl.DataFrame, spec: dict) -> list[pl.Expr]:
    """``alias: normaliser(column)`` for each ``alias: (column, normaliser)``, each normaliser called
    once per distinct value (the distinct values of every column found in one pass)."""
    distinct = frame.select([pl.col(c).unique().drop_nulls().implode().alias(a) for a, (c, _) in spec.items()]).row(0)
    out = []
    for (alias, (col, fn)), values in zip(spec.items(), distinct):
        table = {x: _safe(fn, x) for x in values}
        out.append(pl.col(col).replace_strict(table, default=None, return_dtype=pl.Utf8).alias(alias))
    return out


def _differ(v: Values, f: str) -> pl.Expr:
    """The line's ``f`` and the item table's are both there and written differently."""
    b = pl.col(f"it.{f}")
    return (~v.none(f) & b.is_not_null() & (b != "") & (v.text(f) != b)).fill_null(False)


def _same_up_to_spelling(frame: pl.DataFrame, v: Values) -> pl.DataFrame:
    """``d.mm.<field>`` stays true where the two spellings are not the same label once normalised."""
    fields = [f for f in _MISMATCH_FIELDS if f in _NORMALIZERS]
    hit = frame.select([pl.col(f"d.mm.{f}").any().alias(f) for f in fields]).row(0, named=True)
    for f in (f for f in fields if hit[f]):
        pairs = frame.filter(pl.col(f"d.mm.{f}")).select(v.label(f).alias("a"), pl.col(f"it.{f}").alias("b")).unique()
        norm = _NORMALIZERS[f]
        same = [(a, b) for a, b in pairs.iter_rows() if _safe(norm, a) == _safe(norm, b)]
        if not same:
            continue
        table = pl.DataFrame(same, schema={"a": pl.Utf8, "b": pl.Utf8}, orient="row").with_columns(pl.lit(True).alias("s"))
        key = frame.select(v.label(f).alias("a"), pl.col(f"it.{f}").alias("b"))
        spelled = key.join(table, on=["a", "b"], how="left", maintain_order="left", nulls_equal=True)["s"].is_not_null()
        frame = frame.with_columns((pl.col(f"d.mm.{f}") & ~spelled).alias(f"d.mm.{f}"))
    return frame


def _shown_get(row: dict, f: str):
    own = shown(row, f)
    return own if own is not None or row.get(f"{f}.t") is not None else row.get(f"it.{f}")


def _label(f: str, expr_col: str, labels) -> Rule:
    return Rule("unknown_label", "error", f, 2, lambda v: ~v.get_empty(f) & pl.col(expr_col).is_null(),
                lambda r: f"unknown {f} {_shown_get(r, f)!r} (expected one of {', '.join(labels)})")


def _required(f: str) -> list[Rule]:
    return [required(f, lambda v: v.empty(f)),
            Rule("invalid_field", "error", f, 1, lambda v: ~v.empty(f) & v.odd(f),
                 lambda r: f"`{f}` must be a string, got {r[f + '.t']} {shown(r, f)!r}")]


def _whole(f: str, via_item: bool) -> Rule:
    return Rule("invalid_field", "warning", f, 3,
                lambda v: ~(v.get_empty(f) if via_item else v.empty(f)) & v.whole_via(f, via_item).is_null(),
                lambda r: f"`{f}` should be a whole number, got {(_shown_get(r, f) if via_item else shown(r, f))!r}; "
                "read as missing")


def _count(f: str) -> Rule:
    """A count the line holds below zero (the item table's own are checked where it is read)."""
    return Rule("invalid_field", "error", f, 2, lambda v: v.whole(f) < 0,
                lambda r: f"`{f}` is {shown(r, f)!r}: a count cannot be negative")


def _bool_rule(f: str, code: str, text: str) -> Rule:
    return Rule(code, "error", f, 2, lambda v: ~pl.col(f"d.{f}.ok"), lambda r: f"{text}, got {shown(r, f)!r}")


def _missing_item_field(f: str) -> Rule:
    by_id = f in ("question_id", "context_length")
    return Rule("missing_field", "error", f, 2,
                lambda v: v.get_empty(f) & (pl.col("d.mq").is_null() if by_id else pl.lit(True)),
                lambda r: f"field `{f}` is missing (not in the line nor in the item table)")


def _mismatch_rule(f: str) -> Rule:
    return Rule("item_mismatch", "error", f, 2, lambda v: pl.col("it.found") & pl.col(f"d.mm.{f}"),
                lambda r: f"`{f}` is {shown(r, f)!r} here but {r['it.' + f]!r} in the item table")


def _condition_text(r: dict) -> str:
    raw = shown(r, "input_condition") if r["d.cond_own"] else r["_cond"]
    text = "missing (neither the line nor its folder below ablation/ names one)" if raw in (None, "") else repr(raw)
    return f"input_condition {text}: expected one of {', '.join(ABLATION_CONDITIONS)}"


_COUNTS = (("n_audio_clips", False), ("session_count", True), ("evidence_session_count", True),
           ("samekey_haystack_session_count", True))

RULES: tuple[Rule, ...] = (
    *parser_rules(), *_required("item_id"), *_required("model"),
    unicode_rule(1),
    Rule("model_whitespace", "warning", "model", 2,
         lambda v: pl.col("model") != pl.col("model").str.strip_chars(PY_WHITESPACE),
         lambda r: f"model name {r['model']!r} has leading or trailing spaces: it is a different model from the name "
         "without them"),
    Rule("unknown_item", "error", "item_id", 2, lambda v: pl.col("d.has_items") & ~pl.col("it.found"),
         lambda r: f"item_id {r['item_id']!r} is not in the item table"),
    *[_mismatch_rule(f) for f in _MISMATCH_FIELDS],
    *[_missing_item_field(f) for f in REQUIRED_ITEM_FIELDS],
    Rule("unknown_label", "error", "context_length", 2,
         lambda v: pl.col("d.rawb").is_not_null() & pl.col("d.budget").is_null(),
         lambda r: f"unknown context_length {_raw_budget(r)!r} (expected one of {', '.join(tx.BUDGETS)}, any case)"),
    Rule("item_id_mismatch", "error", "item_id", 2,
         lambda v: pl.col("d.budget").is_not_null() & pl.col("d.mbn").is_not_null() & (pl.col("d.mbn") != pl.col("d.budget")),
         lambda r: f"item_id {r['item_id']!r} ends in {r['d.mb']!r} but context_length is {_raw_budget(r)!r}"),
    Rule("item_id_mismatch", "error", "question_id", 2,
         lambda v: pl.col("d.mq").is_not_null() & (pl.col("d.mq") != pl.col("d.qid")),
         lambda r: f"item_id {r['item_id']!r} does not start with question_id {_qid(r)!r}"),
    _label("evidence_type", "d.ev", tx.EVIDENCE_TYPES),
    _label("memory_operation", "d.op", tx.OPERATIONS),
    _label("subtype", "d.st", tx.SUBTYPES),
    Rule("unknown_label", "error", "expected_response", 2,
         lambda v: ~v.get_empty("expected_response") & ~pl.col("d.expected_response").is_in(_EXPECTED).fill_null(False),
         lambda r: f"unknown expected_response {_shown_get(r, 'expected_response')!r} (expected 'answer' or "
         "'insufficient_evidence')"),
    Rule("inconsistent_item", "error", "expected_response", 2,
         lambda v: pl.col("d.op").is_not_null() & _expected_ok(v)
         & ((pl.col("d.op") == "answer_refusal") != pl.col("d.is_ar")),
         lambda r: f"memory_operation {_shown_get(r, 'memory_operation')!r} contradicts expected_response "
         f"{_shown_get(r, 'expected_response')!r}"),
    Rule("invalid_cell", "error", "memory_operation", 2,
         lambda v: (pl.col("d.ev") == "speech_semantics") & (pl.col("d.op") == "information_extraction"),
         lambda r: "speech-semantics information extraction does not exist in VoxMem (excluded by design)"),
    Rule("item_id_no_budget", "warning", "item_id", 2,
         lambda v: pl.col("d.mq").is_null() & pl.col("d.budget").is_not_null(),
         lambda r: f"item_id {r['item_id']!r} does not end in its context length (e.g. `_32k`); items are told apart "
         "by (item_id, context_length)"),
    _bool_rule("provider_rejected", "invalid_field", "provider_rejected must be true, false or null"),
    _bool_rule("synthetic", "invalid_field", "synthetic must be true, false or null"),
    _bool_rule("verdict", "invalid_verdict", "verdict must be true, false or null"),
    _bool_rule("allow_abstention", "invalid_field", "allow_abstention must be a boolean"),
    Rule("ar_without_abstention", "error", "allow_abstention", 2,
         lambda v: (pl.col("d.allow_abstention") == False) & pl.col("d.is_ar"),  # noqa: E712 - false, not null
         lambda r: "refusal item scored under the no-abstention prompt (allow_abstention=false): its score is meaningless"),
    Rule("unknown_label", "warning", "system_prompt_delivery", 2,
         lambda v: ~v.none("system_prompt_delivery") & ~pl.col("system_prompt_delivery").is_in(_DELIVERY).fill_null(False),
         lambda r: f"system_prompt_delivery {shown(r, 'system_prompt_delivery')!r} is neither 'native' nor 'folded'"),
    Rule("invalid_field", "error", "response", 2, lambda v: v.odd("response"),
         lambda r: f"response must be a string or null, got {r['response.t']}"),
    Rule("inconsistent_verdict", "error", "verdict", 2,
         lambda v: (pl.col("d.verdict") == True)  # noqa: E712
         & (v.text("response").str.strip_chars(PY_WHITESPACE).fill_null("") == ""),
         lambda r: "verdict is true but the response is empty"),
    Rule("unknown_condition", "error", "input_condition", 2,
         lambda v: pl.col("_cond").is_not_null() & pl.col("d.cond").is_null(), _condition_text),
    Rule("condition_spelling", "warning", "input_condition", 2,
         lambda v: pl.col("_cond").is_not_null() & pl.col("d.cond").is_not_null() & (pl.col("d.cond") != pl.col("d.cond_raw")),
         lambda r: f"input_condition {r['d.cond_raw']!r} read as {r['d.cond']!r}"),
    *[_count(f) for f, _ in _COUNTS],
    *[_whole(f, via) for f, via in _COUNTS],
)


def _expected_ok(v: Values) -> pl.Expr:
    return pl.col("d.expected_response").is_in(_EXPECTED).fill_null(False) & ~v.odd("expected_response")


def _raw_budget(r: dict):
    return _shown_get(r, "context_length") if r["d.rawb_own"] else r["d.rawb"]


def _qid(r: dict):
    return _shown_get(r, "question_id") if r["d.qid_own"] else r["d.qid"]


_UNREAD = {"question_text", "gold_json", "judge_raw", "response", "line"}   # never in a message
_PARSER_COLUMNS = {"_p0_code": pl.Utf8, "_p0_msg": pl.Utf8, "_p0_field": pl.Utf8, "_uni": pl.List(pl.Utf8)}


def check_lines(raw: pl.DataFrame, items: pl.DataFrame | None, has_items: bool) -> tuple[pl.DataFrame, list, int]:
    """``(frame of the lines that passed, keyed problems, lines rejected)`` of a raw frame; keyed problems
    are ``((file index, line, 0, rule, n), Problem)``."""
    frame = _derived(item_columns(raw, items), has_items)
    frame = frame.with_columns([pl.lit(None, dtype=t).alias(c) for c, t in _PARSER_COLUMNS.items() if c not in frame.columns])
    frame = check(frame, RULES, _values(frame))
    keyed = flagged(frame, RULES, lambda r, i, n: (r["_fi"], r["_line"], 0, i, n), skip=_UNREAD)
    kept = frame.filter(pl.col("_ok"))
    return kept, keyed, frame.height - kept.height

