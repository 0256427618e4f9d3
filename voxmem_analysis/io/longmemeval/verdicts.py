"""The declaration of a LongMemEval verdict (JSON lines, a JSON list or a ``{"results": [...]}`` object):
fields, derived columns and rules, and the listed files read into one raw frame."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from voxmem_analysis.io.engine import files, records
from voxmem_analysis.io.engine.records import Spec
from voxmem_analysis.io.engine.rules import (PY_WHITESPACE, Rule, check, first_of_key, flagged, parser_rules, required,
                                             shown, unicode_rule)
from voxmem_analysis.io.engine.values import Values, valid_text
from voxmem_analysis.io.voxmem.predictions import extra_series

__all__ = ["FRAME_COLUMNS", "SCHEMA", "LABEL_TRUE", "LABEL_FALSE", "RULES", "DUPLICATE_RULES", "read_verdicts",
           "check_verdicts", "tidy_frame", "jsonable"]

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
_AUTO = pl.Struct({"model": pl.Utf8, "label": pl.Boolean})


def jsonable(v):
    """A value of a field outside the frame's columns as the frame keeps it (lists and objects as JSON text)."""
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True, ensure_ascii=False)
    return v


def _label_source(rec: dict) -> tuple[object, str, str | None]:
    """``(label value, its field, judge model)``: ``autoeval_label`` as evaluate_qa.py writes it, a flat
    ``autoeval_label`` value, or a ``correct`` field."""
    auto = rec.get("autoeval_label")
    if isinstance(auto, dict):
        model = None if auto.get("model") is None else valid_text(str(auto.get("model")))
        return auto.get("label"), "autoeval_label.label", model
    if auto is None and "correct" in rec:
        return rec["correct"], "correct", None
    return auto, "autoeval_label", None


def _prepare(rec: dict) -> dict:
    lab, where, model = _label_source(rec)
    hyp = rec.get("hypothesis")
    return {**{k: rec[k] for k in ("question_id", "question_type", "hypothesis") if k in rec}, "lab": lab,
            "lab.f": where, "jm": model,
            "_hypj": None if hyp is None or isinstance(hyp, str) else valid_text(json.dumps(hyp, ensure_ascii=False))}


def _after(rows: pl.DataFrame) -> pl.DataFrame:
    auto = pl.col("autoeval_label")
    return rows.with_columns(auto.struct.field("label").alias("lab"), auto.struct.field("model").alias("jm"),
                             pl.when(auto.is_null()).then(pl.lit("autoeval_label")).otherwise(pl.lit("autoeval_label.label"))
                             .alias("lab.f")).drop("autoeval_label")


#: How a verdict is read.
SPEC = Spec({"question_id": "str", "question_type": "str", "lab": "bool", "hypothesis": "str"},
            polars={"question_id": pl.Utf8, "hypothesis": pl.Utf8, "autoeval_label": _AUTO},
            prepare=_prepare, after=_after, plain={"lab.f": pl.Utf8, "jm": pl.Utf8, "_hypj": pl.Utf8},
            extras=True, reserved=frozenset(SCHEMA) | {"correct", "model", "label"})


def _extras(rec: dict) -> dict:
    """A record's fields outside the frame's columns (names of the frame's columns prefixed ``record_``)."""
    used = _KNOWN_FIELDS | ({"correct"} if rec.get("autoeval_label") is None and "correct" in rec else set())
    row = {k: jsonable(v) for k, v in rec.items() if k not in used}
    auto = rec.get("autoeval_label")
    if isinstance(auto, dict):
        row.update({f"autoeval_{k}": jsonable(v) for k, v in auto.items() if k not in ("model", "label")})
    return {(f"record_{k}" if k in SCHEMA else k): v for k, v in row.items()}


def _layout(raw: bytes) -> str:
    """``jsonl``, ``array`` (a JSON list of verdicts) or ``results`` (an object whose ``results`` list holds them)."""
    head = raw.lstrip()[:1]
    if head == b"[":
        return "array"
    if head == b"{":
        try:
            obj = json.loads(raw)
        except (ValueError, RecursionError):
            return "jsonl"
        if isinstance(obj, dict) and isinstance(obj.get("results"), list):
            return "results"
    return "jsonl"


def read_verdicts(paths: list[tuple[Path, str]], keyed: list, progress=None) -> tuple[pl.DataFrame, dict, set[int]]:
    """``(raw frame, extras by (_fi, _seq), files not read)`` of the verdict files ``(path, name shown)``
    of a manifest; what reading a file found goes to ``keyed``; ``progress(done, total)`` as files are read."""
    reads, rows, unread = [], [], set()
    for fi, (path, rel) in enumerate(paths):
        if progress is not None:
            progress(fi + 1, len(paths))
        raw, found = files.read_bytes(path, rel)
        keyed += [((fi, 0, 0, 0, n), p) for n, p in enumerate(found)]
        if raw is not None:
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                keyed[:] = [kp for kp in keyed if kp[0][0] != fi] + [((fi, 0, 0, 0, 0), files.not_utf8(path, rel))]
                raw = None
        if raw is None:
            unread.add(fi)
        elif _layout(raw) == "jsonl":
            reads.append(records.parse_file(records.FileRead(fi, rel, path, {}, [], raw), SPEC))
        else:
            rows += records.entry_rows(records.json_entries(text, rel, entry="verdict entry",
                                                            containers={"results": "results list"}), fi, rel)
    frame, recs, _ = records.raw_frame(reads, SPEC) if reads else (None, {}, {})
    if rows:
        more, doc_recs = records.python_frame(rows, SPEC)
        recs.update({(r[0], r[2]): rec for r, rec in zip(rows, doc_recs) if rec is not None})
        frame = more if frame is None else pl.concat([frame, more], how="diagonal_relaxed")
    if frame is None:
        frame = records.python_frame([], SPEC)[0]
    return frame, {k: _extras(r) for k, r in recs.items()}, unread


def _values(frame) -> Values:
    return Values(frame.collect_schema().names() if isinstance(frame, pl.LazyFrame) else frame.columns, SPEC.fields)


def _derived(frame: pl.LazyFrame, questions: pl.DataFrame, manifest: pl.DataFrame) -> pl.LazyFrame:
    """The values the rules read: the question id as text and its type, the label read, the run's key."""
    v = _values(frame)
    lab_s = v.col("lab.s").str.strip_chars(PY_WHITESPACE).str.to_lowercase()
    num = v.col("lab.s").cast(pl.Float64, strict=False)
    is_num = v.col("lab.t").is_in(["int", "float"]) & ((num == 0) | (num == 1))
    is_text = (v.col("lab.t") == "str") & lab_s.is_in(LABEL_TRUE + LABEL_FALSE)
    how = (pl.when(pl.col("lab").is_not_null()).then(pl.lit("bool"))
           .when(v.col("lab.t").is_null()).then(pl.lit("missing"))
           .when(is_num).then(pl.lit("number")).when(is_text).then(pl.lit("text")).otherwise(pl.lit("invalid")))
    label = (pl.when(pl.col("lab").is_not_null()).then(pl.col("lab")).when(is_num).then(num != 0)
             .when(is_text).then(lab_s.is_in(LABEL_TRUE)))
    qid = pl.coalesce(pl.col("question_id"), v.col("question_id.s")).str.strip_chars(PY_WHITESPACE)
    runs = [pl.col("_fi").replace_strict(manifest["_fi"], manifest[c], default=None, return_dtype=pl.Utf8).alias(c)
            for c in ("system", "budget", "m.judge")]
    frame = frame.with_columns(qid.alias("_qid"), qid.replace_strict(questions["question_id"], questions["question_type"],
                                                                      default=None, return_dtype=pl.Utf8).alias("_qtype"), *runs)
    return frame.with_columns(how.alias("_how"), label.alias("_label"), pl.coalesce(pl.col("hypothesis"), v.col("_hypj")).alias("_hyp"),
                              pl.coalesce("m.judge", "jm").alias("judge"))


def _qid_shown(r: dict):
    return shown(r, "question_id") if r.get("question_id.r") is not None and r.get("question_id.t") is None else r["_qid"]


def _label_rule(code: str, severity: str, how: str, message) -> Rule:
    return Rule(code, severity, lambda r: r["lab.f"], 2, lambda _: pl.col("_how") == how, message)


#: Each rule of one verdict, once; problems of a verdict in this order.
RULES: tuple[Rule, ...] = (
    *parser_rules(),
    required("question_id", lambda v: v.blank("question_id") | v.col("question_id.t").is_in(["dict", "list", "bool"])),
    Rule("unknown_question", "error", "question_id", 2, lambda _: pl.col("_qtype").is_null(),
         lambda r: f"question_id {_qid_shown(r)!r} is not in the question file"),
    Rule("question_mismatch", "error", "question_type", 2,
         lambda v: pl.col("_qtype").is_not_null() & ~v.blank("question_type")
         & (pl.coalesce(v.col("question_type"), v.col("question_type.s")) != pl.col("_qtype")),
         lambda r: f"question_type is {shown(r, 'question_type')!r} here but {r['_qtype']!r} in the question file"),
    _label_rule("missing_label", "warning", "missing", lambda r: f"`{r['lab.f']}` is missing or null: ungraded, counted incorrect"),
    _label_rule("invalid_label", "error", "invalid",
                lambda r: f"`{r['lab.f']}` must be true or false (also read: \"yes\"/\"no\", \"true\"/\"false\", 1/0), "
                f"got {shown(r, 'lab')!r}"),
    _label_rule("label_as_text", "warning", "text",
                lambda r: f"`{r['lab.f']}` is the text {shown(r, 'lab')!r}; read as {str(r['_label']).lower()}"),
    _label_rule("label_as_number", "warning", "number",
                lambda r: f"`{r['lab.f']}` is the number {shown(r, 'lab')!r}; read as {str(r['_label']).lower()}"),
    Rule("invalid_field", "warning", "hypothesis", 2, lambda v: v.odd("hypothesis"),
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
    ``_ok`` false for a rejected verdict, ``_keep`` true for a verdict kept (not a copy)."""
    lazy = _derived(raw.lazy().sort("_fi", "_seq"), questions, manifest)
    frame = check(lazy, RULES, _values(lazy))
    frame = first_of_key(frame, ["system", "budget", "judge", "_qid", "_ok"],
                         {"_lab0": "_label", "_f0": "_file", "_l0": "_line", "_hyp0": "_hyp"})
    frame = check(frame, DUPLICATE_RULES, gate=pl.col("_ok"), prefix="d").with_columns(
        (pl.col("_ok") & ~pl.col("d0")).alias("_keep")).collect()
    return frame, flagged(frame, RULES, _key(0)) + flagged(frame, DUPLICATE_RULES, _key(len(RULES)), prefix="d")


def _key(base: int):
    """A problem's sort key: ``(file index, 1, record, base + rule, n)``."""
    return lambda r, i, n: (r["_fi"], 1, r["_seq"], base + i, n)


def tidy_frame(frame: pl.DataFrame, extras: dict, convention: str) -> pl.DataFrame:
    """The tidy frame of the verdicts kept: :data:`FRAME_COLUMNS`, then every extra field (in the order
    first met; a column's type from its values)."""
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
    rows = [extras.get(k, {}) for k in kept.select("_fi", "_seq").rows()]
    names = list(dict.fromkeys(k for r in rows for k in r))
    if not names:
        return out
    return out.with_columns([extra_series(k, [r.get(k) for r in rows]) for k in names])
