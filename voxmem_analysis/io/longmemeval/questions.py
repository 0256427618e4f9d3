"""A LongMemEval question file (JSON list, ``{question_id: type}`` object, JSON lines, CSV or TSV; ``.gz``
allowed): the type of each question, read with its rules."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from voxmem_analysis.io.engine.files import read_text, user_path_problem
from voxmem_analysis.io.engine.records import Spec, csv_entries, entry_rows, json_entries, python_frame, too_deep
from voxmem_analysis.io.engine.rules import (PY_WHITESPACE, Rule, check, fact, first_of_key, flagged, ordered,
                                             parser_rules)
from voxmem_analysis.io.engine.values import Values

__all__ = ["read_questions", "question_rules", "QUESTIONS_SCHEMA"]

QUESTIONS_SCHEMA = {"question_id": pl.Utf8, "question_type": pl.Utf8, "is_abstention": pl.Boolean, "source_line": pl.Int64}
MISSING_COLUMNS = fact("questions_missing_field", "error", lambda r: f"question table has no column(s) {r['missing']} "
                       f"(columns: {r['fields']})" + ("" if r["key"] else "; the type may be in `question_type` or "
                                                      "`type`, or name its column with --type-key"), lambda r: r["missing"][0])
NO_QUESTION = fact("no_questions", "error", lambda r: "question file holds no question")
NOT_JSON = "malformed_json"


def _type_of(rec: dict, type_key: str | None):
    if type_key:
        return rec.get(type_key)
    return rec["question_type"] if "question_type" in rec else rec.get("type")


def _where(r: dict) -> str:
    return f" (entry {r['_seq'] + 1})" if r["_line"] is None else ""


def question_rules(type_key: str | None) -> tuple[Rule, ...]:
    """The rules of one question-file entry, then of an entry against the first listed with its id."""
    name = f"`{type_key}`" if type_key else "`question_type` (or `type`)"

    def unusable(f: str):
        return lambda v: v.blank(f) | v.col(f"{f}.t").is_in(["dict", "list", "bool"])

    return (
        *parser_rules(),
        Rule("missing_field", "error", "question_id", 1, unusable("question_id"),
             lambda r: f"`question_id` is missing or empty{_where(r)}"),
        Rule("missing_field", "error", type_key or "question_type", 1, unusable("qt"),
             lambda r: f"{name} is missing or empty{_where(r)}"),
        Rule("duplicate_question", "warning", "question_id", 2, lambda _: pl.col("_copy") & (pl.col("_qt") == pl.col("_t0")),
             lambda r: f"question {r['_qid']!r} listed again (first at line {r['_l0']}); same type, ignored"),
        Rule("duplicate_question_conflict", "error", "question_type", 2,
             lambda _: pl.col("_copy") & (pl.col("_qt") != pl.col("_t0")),
             lambda r: f"question {r['_qid']!r} has type {r['_qt']!r} here but {r['_t0']!r} at line {r['_l0']}"),
    )


def _object(text: str) -> list:
    """``{question_id: question_type}`` or ``{question_id: {"question_type": ...}}``."""
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as exc:
        return [(exc.lineno, None, (NOT_JSON, f"not valid JSON ({exc.msg})", None))]
    except RecursionError:
        return [(too_deep(text), None, (NOT_JSON, "not valid JSON (nested deeper than 500 levels)", None))]
    out = []
    for qid, v in obj.items():
        rec = dict(v) if isinstance(v, dict) else {"question_type": v}
        rec.setdefault("question_id", qid)
        out.append((None, rec, None))
    return out


def _entries(path: Path, rel: str, text: str, type_key: str | None) -> tuple[list, list]:
    """``(entries (line, record or None, parser finding), problems)`` of any supported layout."""
    name = path.name.lower().removesuffix(".gz")
    stripped = text.lstrip()
    if name.endswith((".csv", ".tsv")) or (not name.endswith((".json", ".jsonl", ".ndjson"))
                                            and not stripped.startswith(("[", "{"))):
        fields, rows = csv_entries(text, "\t" if name.endswith(".tsv") else ",", strip_header=True)
        has_type = (type_key in fields) if type_key else ("question_type" in fields or "type" in fields)
        missing = [f for f, ok in (("question_id", "question_id" in fields), (type_key or "question_type", has_type))
                   if not ok]
        return ([], [MISSING_COLUMNS.problem(rel, 1, missing=missing, fields=fields, key=type_key)]) if missing else (rows, [])
    if name.endswith((".jsonl", ".ndjson")) or (stripped.startswith("{") and not name.endswith(".json")):
        return json_entries(text, rel, layout="lines", what="question entry"), []
    if stripped.startswith("{"):
        return _object(text), []
    return json_entries(text, rel, layout="list", entry="question entry", items="questions"), []


def read_questions(path, type_key: str | None = None) -> tuple[pl.DataFrame, list]:
    """``(question_id, question_type, is_abstention, source_line`` of each question, problems)``."""
    path = Path(path)
    rel = str(path)
    empty = pl.DataFrame(schema=QUESTIONS_SCHEMA)
    bad = user_path_problem(path, "no_questions", "question file")
    if bad is not None:
        return empty, [bad]
    text, problems = read_text(path, rel)
    if text is None:
        return empty, problems
    entries, found = _entries(path, rel, text, type_key)
    problems += found
    spec = Spec({"question_id": "str", "qt": "str"}, prepare=lambda r: {
        **({"question_id": r["question_id"]} if "question_id" in r else {}), "qt": _type_of(r, type_key)})
    raw, _ = python_frame(entry_rows(entries, 0, rel, check_unicode=False), spec)
    v = Values(raw.columns, spec.fields)
    rules = question_rules(type_key)
    text_of = {f: pl.coalesce(pl.col(f), v.col(f"{f}.s")).str.strip_chars(PY_WHITESPACE) for f in spec.fields}
    frame = check(raw.lazy().with_columns(text_of["question_id"].alias("_qid"), text_of["qt"].alias("_qt")), rules[:4], v)
    frame = first_of_key(frame, ["_qid", "_ok"], {"_t0": "_qt", "_l0": "_line"})
    frame = check(frame, rules[4:], v, gate=pl.col("_ok"), prefix="d").collect()
    problems += ordered(flagged(frame, rules[:4], lambda r, i, n: (r["_seq"], i, n))
                        + flagged(frame, rules[4:], lambda r, i, n: (r["_seq"], 4 + i, n), prefix="d"))
    out = frame.lazy().filter(pl.col("_ok") & ~pl.col("_copy")).select(
        pl.col("_qid").alias("question_id"), pl.col("_qt").alias("question_type"),
        pl.col("_qid").str.ends_with("_abs").alias("is_abstention"),
        pl.col("_line").alias("source_line")).cast(QUESTIONS_SCHEMA).collect()
    if not out.height and not any(p.severity == "error" for p in problems):
        problems.append(NO_QUESTION.problem(rel))
    return out, problems
