"""The rules a LongMemEval verdict must follow, each defined once, as a polars expression that flags rows.

Every verdict of every file a manifest lists becomes one row of a *raw frame* (:func:`python_part`
for the records Python's ``json`` read, :func:`plain_part` for the lines polars read; which reads
which is decided in :func:`voxmem_analysis.io.longmemeval.verdict_raw_frame`): ``_fi`` (manifest row),
``_seq`` (place in the file), ``_file``, ``_line``, the values of ``question_id``, ``question_type``,
``hypothesis`` and of the label (``lab``: ``autoeval_label.label``, a flat ``autoeval_label`` or
``correct``, named in ``lab.f``) as columns (see :mod:`voxmem_analysis.io.rules`), the judge
model ``jm``, and the parser's findings (``_p0_*``: not JSON, not an object; ``_uni``: text that is
not valid Unicode).  Fields outside the frame's columns stay beside it, by row (``_x``).

:data:`RULES` checks each verdict on its own (stage 0: the parser's findings; stage 1: a usable
``question_id``; stage 2: everything else, all reported); :data:`DUPLICATE_RULES` then compares the
verdicts that passed with the first one read for the same (system, budget, judge, question).
"""
from __future__ import annotations

import json

import polars as pl

from voxmem_analysis.io import bulk as bk
from voxmem_analysis.io.jsonl import not_unicode
from voxmem_analysis.io.rules import (PY_WHITESPACE, Rule, blank, check, flagged, odd, parser_rules, raw_frame, shown,
                                      unicode_rule, valid_text, value_columns)

__all__ = ["FRAME_COLUMNS", "SCHEMA", "LABEL_TRUE", "LABEL_FALSE", "RULES", "DUPLICATE_RULES", "python_part",
           "plain_part", "check_verdicts", "jsonable", "tidy_frame",
           "question_rules", "check_questions"]

#: Columns of the tidy frame, in order (extra fields of the lines follow).
FRAME_COLUMNS: tuple[str, ...] = (
    "system", "budget", "judge", "question_id", "question_type", "is_abstention", "hypothesis",
    "label", "correct", "scored", "status", "judge_model", "source_file", "source_line",
)
SCHEMA = {
    "system": pl.Utf8, "budget": pl.Utf8, "judge": pl.Utf8, "question_id": pl.Utf8,
    "question_type": pl.Utf8, "is_abstention": pl.Boolean, "hypothesis": pl.Utf8,
    "label": pl.Boolean, "correct": pl.Boolean, "scored": pl.Boolean, "status": pl.Utf8,
    "judge_model": pl.Utf8, "source_file": pl.Utf8, "source_line": pl.Int64,
}
#: Text and number spellings of a label read as a boolean (each read is reported as a warning).
LABEL_TRUE: tuple[str, ...] = ("true", "yes", "1")
LABEL_FALSE: tuple[str, ...] = ("false", "no", "0")
_KNOWN_FIELDS = {"question_id", "hypothesis", "autoeval_label"}
_SPEC = {"question_id": "str", "question_type": "str", "lab": "bool", "hypothesis": "str"}
_META = {"_fi": pl.Int64, "_seq": pl.Int64, "_file": pl.Utf8, "_line": pl.Int64, "_p0_code": pl.Utf8,
         "_p0_msg": pl.Utf8, "_p0_field": pl.Utf8, "_uni": pl.List(pl.Utf8), "lab.f": pl.Utf8, "jm": pl.Utf8,
         "hypothesis.j": pl.Utf8, "_x": pl.Int64}


def jsonable(v):
    """A value of a field outside the frame's columns as the frame keeps it (dicts and lists as JSON text)."""
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, ensure_ascii=False)
    return v


# ----------------------------------------------------------------------------- raw values
def _label_source(rec: dict) -> tuple[object, str, str | None, dict]:
    """``(label value, its field, judge model, extra autoeval fields)``: ``autoeval_label`` as
    evaluate_qa.py writes it (``{"model": ..., "label": ...}``), a flat ``autoeval_label`` value, or a
    ``correct`` field (results documents)."""
    auto = rec.get("autoeval_label")
    if isinstance(auto, dict):
        model = None if auto.get("model") is None else valid_text(str(auto.get("model")))
        extras = {f"autoeval_{k}": jsonable(v) for k, v in auto.items() if k not in ("model", "label")}
        return auto.get("label"), "autoeval_label.label", model, extras
    if auto is None and "correct" in rec:
        return rec["correct"], "correct", None, {}
    return auto, "autoeval_label", None, {}


def python_part(entries: list[tuple], extras: list[dict]) -> pl.DataFrame:
    """The raw frame of verdicts Python's json read: ``entries`` are ``(fi, seq, file, line, record or
    None, parser finding (code, message, field) or None, check_unicode)``; each record's fields outside
    the frame go to ``extras`` (``_x`` indexes it)."""
    values, labf, jm, hypj, xs, uni = [], [], [], [], [], []
    for *_, rec, _p0, uni_check in entries:
        if not isinstance(rec, dict):
            values.append(None)
            labf.append(None), jm.append(None), hypj.append(None), xs.append(None), uni.append([])
            continue
        lab, fld, model, auto_extras = _label_source(rec)
        values.append({**{k: rec[k] for k in ("question_id", "question_type", "hypothesis") if k in rec}, "lab": lab})
        hyp = rec.get("hypothesis")
        hypj.append(None if hyp is None or isinstance(hyp, str) else valid_text(json.dumps(hyp, ensure_ascii=False)))
        labf.append(fld), jm.append(model)
        used = _KNOWN_FIELDS | ({"correct"} if rec.get("autoeval_label") is None and "correct" in rec else set())
        row = {k: jsonable(v) for k, v in rec.items() if k not in used}
        row.update(auto_extras)
        xs.append(len(extras))
        extras.append({(f"record_{k}" if k in SCHEMA else k): v for k, v in row.items()})
        uni.append(not_unicode(rec) if uni_check else [])
    cols = value_columns(values, _SPEC)
    cols.update(_fi=[e[0] for e in entries], _seq=[e[1] for e in entries], _file=[e[2] for e in entries],
                _line=[e[3] for e in entries], _p0_code=[e[5] and e[5][0] for e in entries],
                _p0_msg=[e[5] and e[5][1] for e in entries], _p0_field=[e[5] and e[5][2] for e in entries],
                _uni=uni, **{"lab.f": labf, "jm": jm, "hypothesis.j": hypj, "_x": xs})
    return raw_frame(cols, _SPEC, _META)


def plain_part(rec: pl.DataFrame, meta: pl.DataFrame, extra_keys: list[list[str]], extras: list[dict]) -> pl.DataFrame:
    """The raw frame of plain verdict lines polars read (``rec``: ``question_id``, ``hypothesis``,
    ``autoeval_label {model, label}`` and extra columns; ``meta``: ``_fi, _seq, _file, _line`` of each
    row; ``extra_keys``: each row's extra keys, in line order)."""
    start = len(extras)
    names = sorted({k for ks in extra_keys for k in ks})
    values = {k: rec[k].to_list() for k in names}
    extras.extend({k: values[k][i] for k in ks} for i, ks in enumerate(extra_keys))
    auto = rec["autoeval_label"]
    frame = pl.concat([meta, rec.select("question_id", "hypothesis")], how="horizontal").with_columns(
        auto.struct.field("label").alias("lab"), auto.struct.field("model").alias("jm"),
        pl.lit("autoeval_label.label").alias("lab.f"), pl.lit(True).alias("question_id.has"),
        pl.int_range(start, start + rec.height, dtype=pl.Int64).alias("_x"))
    return frame


# ----------------------------------------------------------------------------- the rules
def _qid_text() -> pl.Expr:
    """``str(question_id).strip()``."""
    return pl.coalesce(pl.col("question_id"), pl.col("question_id.s")).str.strip_chars(PY_WHITESPACE)


def _derived(frame: pl.DataFrame, questions: pl.DataFrame, manifest: pl.DataFrame) -> pl.DataFrame:
    """The values the rules read: the question id as text and its type, the label read, the run's key."""
    lab_s = pl.col("lab.s").str.strip_chars(PY_WHITESPACE).str.to_lowercase()
    num = pl.col("lab.s").cast(pl.Float64, strict=False)
    is_num = pl.col("lab.t").is_in(["int", "float"]) & ((num == 0) | (num == 1))
    is_text = (pl.col("lab.t") == "str") & lab_s.is_in(LABEL_TRUE + LABEL_FALSE)
    how = (pl.when(pl.col("lab").is_not_null()).then(pl.lit("bool"))
           .when(pl.col("lab.t").is_null()).then(pl.lit("missing"))
           .when(is_num).then(pl.lit("number")).when(is_text).then(pl.lit("text")).otherwise(pl.lit("invalid")))
    label = (pl.when(pl.col("lab").is_not_null()).then(pl.col("lab")).when(is_num).then(num != 0)
             .when(is_text).then(lab_s.is_in(LABEL_TRUE)))
    qid = _qid_text()
    runs = [pl.col("_fi").replace_strict(manifest["_fi"], manifest[c], default=None, return_dtype=pl.Utf8).alias(c)
            for c in ("system", "budget", "m.judge")]
    frame = frame.with_columns(qid.alias("_qid"), qid.replace_strict(questions["question_id"], questions["question_type"],
                                                                      default=None, return_dtype=pl.Utf8).alias("_qtype"), *runs)
    return frame.with_columns(how.alias("_how"), label.alias("_label"),
                              pl.coalesce("hypothesis", "hypothesis.j").alias("_hyp"),
                              pl.coalesce("m.judge", "jm").alias("judge"))


def _qid_shown(r: dict):
    return shown(r, "question_id") if r["question_id.r"] is not None and r["question_id.t"] is None else r["_qid"]


def _label_rule(code: str, severity: str, how: str, message) -> Rule:
    return Rule(code, severity, lambda r: r["lab.f"], 2, lambda _: pl.col("_how") == how, message)


#: Each rule of one verdict, once; problems of a verdict in this order.
RULES: tuple[Rule, ...] = (
    *parser_rules(),
    Rule("missing_field", "error", "question_id", 1,
         lambda _: blank("question_id") | pl.col("question_id.t").is_in(["dict", "list", "bool"]),
         lambda r: "required field `question_id` is missing or empty"),
    Rule("unknown_question", "error", "question_id", 2, lambda _: pl.col("_qtype").is_null(),
         lambda r: f"question_id {_qid_shown(r)!r} is not in the question file"),
    Rule("question_mismatch", "error", "question_type", 2,
         lambda _: pl.col("_qtype").is_not_null() & ~blank("question_type")
         & (pl.coalesce("question_type", "question_type.s") != pl.col("_qtype")),
         lambda r: f"question_type is {shown(r, 'question_type')!r} here but {r['_qtype']!r} in the question file"),
    _label_rule("missing_label", "warning", "missing", lambda r: f"`{r['lab.f']}` is missing or null: ungraded, counted incorrect"),
    _label_rule("invalid_label", "error", "invalid",
                lambda r: f"`{r['lab.f']}` must be true or false (also read: \"yes\"/\"no\", \"true\"/\"false\", 1/0), "
                f"got {shown(r, 'lab')!r}"),
    _label_rule("label_as_text", "warning", "text",
                lambda r: f"`{r['lab.f']}` is the text {shown(r, 'lab')!r}; read as {str(r['_label']).lower()}"),
    _label_rule("label_as_number", "warning", "number",
                lambda r: f"`{r['lab.f']}` is the number {shown(r, 'lab')!r}; read as {str(r['_label']).lower()}"),
    Rule("invalid_field", "warning", "hypothesis", 2, lambda _: odd("hypothesis"),
         lambda r: f"`hypothesis` should be a string, got {r['hypothesis.t']}; kept as JSON text"),
    unicode_rule(2),
)


def _run(r: dict) -> str:
    return f"({r['system']}, {r['budget']}, {r['judge']}, {r['_qid']})"


#: A verdict that passed :data:`RULES` against the first one read for its (system, budget, judge, question).
DUPLICATE_RULES: tuple[Rule, ...] = (
    Rule("duplicate_identical", "warning", "question_id", 3, lambda _: pl.col("_copy") & pl.col("_label").eq_missing(pl.col("_lab0")),
         lambda r: f"{_run(r)} already read at {r['_f0']}:{r['_l0']} with the same label"
         + ("" if r["_hyp0"] == r["_hyp"] else " (different hypothesis)") + "; copy ignored"),
    Rule("duplicate_conflict", "error", "autoeval_label.label", 3,
         lambda _: pl.col("_copy") & ~pl.col("_label").eq_missing(pl.col("_lab0")),
         lambda r: f"{_run(r)} read twice with different labels (first at {r['_f0']}:{r['_l0']}: {r['_lab0']!r}; "
         f"here {r['_label']!r})"),
)


def check_verdicts(raw: pl.DataFrame, questions: pl.DataFrame, manifest: pl.DataFrame) -> tuple[pl.DataFrame, list]:
    """``(checked frame, keyed problems)`` of a raw frame (``manifest``: ``_fi, system, budget, m.judge``):
    ``_ok`` false for a rejected verdict, ``_keep`` true for a verdict kept (not a copy); one query."""
    frame = check(_derived(raw.lazy().sort("_fi", "_seq"), questions, manifest), RULES)
    key = ["system", "budget", "judge", "_qid", "_ok"]
    first = {"_lab0": "_label", "_f0": "_file", "_l0": "_line", "_hyp0": "_hyp"}
    frame = frame.with_columns((pl.int_range(pl.len()).over(key) > 0).alias("_copy"),
                               *[pl.col(c).first().over(key).alias(a) for a, c in first.items()])
    frame = check(frame, DUPLICATE_RULES, gate=pl.col("_ok"), prefix="d").with_columns(
        (pl.col("_ok") & ~pl.col("d0")).alias("_keep")).collect()
    return frame, flagged(frame, RULES, _key(0)) + flagged(frame, DUPLICATE_RULES, _key(len(RULES)), prefix="d")


def _key(base: int):
    """A problem's sort key: ``(file index, 1, record, base + rule, n)``."""
    return lambda r, i, n: (r["_fi"], 1, r["_seq"], base + i, n)


def tidy_frame(frame: pl.DataFrame, extras: list[dict], convention: str) -> pl.DataFrame:
    """The tidy frame of the verdicts kept: :data:`FRAME_COLUMNS`, then every extra field (in the order
    first met; a column's type from its values, :func:`voxmem_analysis.io.bulk.extra_series`)."""
    kept = frame.filter(pl.col("_keep"))
    graded = pl.col("_label").is_not_null()
    out = kept.lazy().select(
        "system", "budget", "judge", pl.col("_qid").alias("question_id"), pl.col("_qtype").alias("question_type"),
        pl.col("_qid").str.ends_with("_abs").alias("is_abstention"), pl.col("_hyp").alias("hypothesis"),
        pl.col("_label").alias("label"), pl.col("_label").fill_null(False).alias("correct"),
        (pl.lit(True) if convention == "paper" else graded).alias("scored"),
        pl.when(graded).then(pl.lit("graded")).otherwise(pl.lit("ungraded")).alias("status"),
        pl.col("jm").alias("judge_model"), pl.col("_file").alias("source_file"), pl.col("_line").alias("source_line"),
    ).cast(SCHEMA).collect()
    rows = [extras[i] for i in kept["_x"].to_list()]
    names = list(dict.fromkeys(k for r in rows for k in r))
    if not names:
        return out
    return out.with_columns([bk.extra_series(k, [r.get(k) for r in rows]) for k in names])


# ----------------------------------------------------------------------------- question files
_Q_SPEC = {"question_id": "str", "qt": "str"}
_Q_META = {"_fi": pl.Int64, "_seq": pl.Int64, "_file": pl.Utf8, "_line": pl.Int64, "_rt": pl.Utf8}
_Q_SCHEMA = {"question_id": pl.Utf8, "question_type": pl.Utf8, "is_abstention": pl.Boolean, "source_line": pl.Int64}


def _type_of(rec: dict, type_key: str | None):
    """The question type of a record: ``type_key`` when given, else ``question_type``, else ``type``."""
    if type_key:
        return rec.get(type_key)
    return rec["question_type"] if "question_type" in rec else rec.get("type")


def _where(r: dict) -> str:
    return f" (entry {r['_seq'] + 1})" if r["_line"] is None else ""


def _unusable(f: str) -> pl.Expr:
    return blank(f) | pl.col(f"{f}.t").is_in(["dict", "list", "bool"])


def question_rules(type_key: str | None) -> tuple[Rule, ...]:
    """The rules of one question-file entry (the type's field named by ``type_key``, default
    ``question_type`` or ``type``), then of an entry against the first listed with its id."""
    shown = f"`{type_key}`" if type_key else "`question_type` (or `type`)"
    return (
        Rule("not_an_object", "error", None, 0, lambda _: pl.col("_rt").is_not_null(),
             lambda r: f"question entry is a JSON {r['_rt']}, expected an object"),
        Rule("missing_field", "error", "question_id", 1, lambda _: _unusable("question_id"),
             lambda r: f"`question_id` is missing or empty{_where(r)}"),
        Rule("missing_field", "error", type_key or "question_type", 1, lambda _: _unusable("qt"),
             lambda r: f"{shown} is missing or empty{_where(r)}"),
        Rule("duplicate_question", "warning", "question_id", 2, lambda _: pl.col("_copy") & (pl.col("_qt") == pl.col("_t0")),
             lambda r: f"question {r['_qid']!r} listed again (first at line {r['_l0']}); same type, ignored"),
        Rule("duplicate_question_conflict", "error", "question_type", 2,
             lambda _: pl.col("_copy") & (pl.col("_qt") != pl.col("_t0")),
             lambda r: f"question {r['_qid']!r} has type {r['_qt']!r} here but {r['_t0']!r} at line {r['_l0']}"),
    )


def check_questions(records: list, lines: list, rel: str, type_key: str | None) -> tuple[pl.DataFrame, list]:
    """``(question frame, keyed problems)`` of the entries of a question file (``lines``: each one's
    line, None in a ``{question_id: type}`` object)."""
    values = [{**({"question_id": r["question_id"]} if "question_id" in r else {}), "qt": _type_of(r, type_key)}
              if isinstance(r, dict) else None for r in records]
    cols = value_columns(values, _Q_SPEC)
    n = len(records)
    cols.update(_fi=[0] * n, _seq=list(range(n)), _file=[rel] * n, _line=lines,
                _rt=[None if isinstance(r, dict) else type(r).__name__ for r in records])
    rules = question_rules(type_key)
    text = {f: pl.coalesce(f, f"{f}.s").str.strip_chars(PY_WHITESPACE) for f in _Q_SPEC}
    frame = check(raw_frame(cols, _Q_SPEC, _Q_META).lazy().with_columns(
        text["question_id"].alias("_qid"), text["qt"].alias("_qt")), rules[:3])
    key = ["_qid", "_ok"]
    frame = frame.with_columns((pl.int_range(pl.len()).over(key) > 0).alias("_copy"),
                               pl.col("_qt").first().over(key).alias("_t0"), pl.col("_line").first().over(key).alias("_l0"))
    frame = check(frame, rules[3:], gate=pl.col("_ok"), prefix="d").collect()
    keyed = flagged(frame, rules[:3], _key(0)) + flagged(frame, rules[3:], _key(3), prefix="d")
    out = frame.lazy().filter(pl.col("_ok") & ~pl.col("_copy")).select(
        pl.col("_qid").alias("question_id"), pl.col("_qt").alias("question_type"),
        pl.col("_qid").str.ends_with("_abs").alias("is_abstention"),
        pl.col("_line").alias("source_line")).cast(_Q_SCHEMA).collect()
    return out, keyed
