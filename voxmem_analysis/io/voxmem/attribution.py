"""The declaration of an error-attribution audit record (``attribution/**/*.jsonl[.gz]``) and its rules;
duplicates reported.  The classification lives in :mod:`voxmem_analysis.analysis.attribution`."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.engine import files, records
from voxmem_analysis.io.engine.records import NOT_AN_OBJECT, Spec
from voxmem_analysis.io.engine.rules import (Rule, check, fact, flagged, ordered, parser_rules, required, shown,
                                             true_or_false, unicode_rule)
from voxmem_analysis.io.engine.values import Values

__all__ = ["COMMITS", "SOURCES", "RELATIONS", "AUDIT_FIELDS", "AUDIT_ENUMS", "RULES", "check_records",
           "read_audit_files", "drop_duplicate_records"]

COMMITS: tuple[str, ...] = ("specific", "generic", "off_type", "none", "truncated")
SOURCES: tuple[str, ...] = ("evidence", "other_session", "absent", "none")
RELATIONS: tuple[str, ...] = (
    "matches_gold", "wrong_value_same_session", "same_value_other_session", "earlier_state",
    "later_state", "other_speaker", "count_off", "unrelated",
)
#: The auditor's record, in the order of the F.5 prompt.
AUDIT_FIELDS: tuple[str, ...] = ("commits", "answer", "evidence_recovered", "source", "source_session", "relation", "why")
#: The audit fields with a closed set of values.
AUDIT_ENUMS = {"commits": COMMITS, "source": SOURCES, "relation": RELATIONS}
#: How an audit record is read.
SPEC = Spec({"model": "str", "item_id": "str", "commits": "str", "answer": "str", "evidence_recovered": "bool",
             "source": "str", "source_session": "int", "relation": "str", "why": "str"}, presence=True, what="record")

NO_RECORDS = fact("no_audit_records", "error", lambda r: "no attribution/**/*.jsonl files found")
DUPLICATE = fact("duplicate_record", "error", lambda r: f"({r['model']}, {r['item_id']}) has {r['n']} audit records "
                 f"({r['where']}); none is used", "item_id")


def _enum_rule(f: str, allowed: tuple[str, ...]) -> Rule:
    return Rule("unknown_value", "error", f, 1, lambda v: v.has(f) & ~pl.col(f).is_in(list(allowed)).fill_null(False),
                lambda r: f"`{f}` is {shown(r, f)!r}; expected one of {', '.join(allowed)}")


#: Each rule of an audit record, once; problems of a record in this order.
RULES: tuple[Rule, ...] = (
    *parser_rules(), unicode_rule(1),
    *[required(f, lambda v, f=f: v.blank(f) | v.odd(f)) for f in ("model", "item_id")],
    *[Rule("missing_field", "error", f, 1, lambda v, f=f: ~v.has(f), lambda r, f=f: f"audit field `{f}` is missing")
      for f in AUDIT_FIELDS],
    *[_enum_rule(f, allowed) for f, allowed in AUDIT_ENUMS.items()],
    true_or_false("evidence_recovered", lambda v: v.has("evidence_recovered") & pl.col("evidence_recovered").is_null(),
                  code="invalid_value", stage=1),
    Rule("invalid_value", "error", "source_session", 1,   # a whole number beyond 64 bits is a session number too
         lambda v: v.odd("source_session") & (v.col("source_session.t") != "int"),
         lambda r: f"`source_session` must be a session number or null, got {shown(r, 'source_session')!r}"),
    *[Rule("invalid_value", "error", f, 1, lambda v, f=f: v.odd(f),
           lambda r, f=f: f"`{f}` must be a string or null, got {r[f + '.t']}") for f in ("answer", "why")],
)


def _listing(root: Path) -> tuple[list[Path], list[Problem]]:
    found = files.walk(root / "attribution", root)
    return found.split(lambda p: files.is_prediction_name(p.name) and p.is_file())[0], found.problems


def _checked(frame: pl.DataFrame) -> tuple[list[dict], list]:
    """``(rows, keyed problems)`` of a raw frame checked against :data:`RULES`."""
    frame = frame.with_columns([pl.lit(False).alias(f"{f}.has") for f in SPEC.fields if f"{f}.has" not in frame.columns])
    frame = frame.sort("_fi", "_seq")
    frame = check(frame, RULES, Values(frame.columns, SPEC.fields))
    keyed = flagged(frame, RULES, lambda r, i, n: (r["_fi"], 1, r["_seq"], i, n))
    good = frame.filter(pl.col("_ok"))
    rows = good.select("model", "item_id", *AUDIT_FIELDS, pl.col("_file").alias("source_file"),
                       pl.col("_line").alias("source_line")).to_dicts()
    if "source_session.t" in good.columns:   # whole numbers beyond 64 bits, kept exact
        for row, (t, text) in zip(rows, good.select("source_session.t", "source_session.s").iter_rows()):
            row["source_session"] = int(text) if t == "int" else row["source_session"]
    return rows, keyed


def check_records(records_: Iterable[Mapping], file: str | None = None) -> tuple[list[dict], list[Problem]]:
    """Check in-memory records (``line`` = 1-based position): (valid rows, problems)."""
    entries = [(0, file, i, i + 1, obj if isinstance(obj, dict) else None,
                None if isinstance(obj, dict) else
                ("not_an_object", NOT_AN_OBJECT.message({"what": "record", "type": type(obj).__name__}), None), True, {})
               for i, obj in enumerate(records_)]
    rows, keyed = _checked(records.python_frame(entries, SPEC)[0])
    return rows, ordered(keyed)


def read_audit_files(release_dir) -> tuple[list[dict], list[Problem]]:
    """Read and check every audit record file of a release: (valid rows, problems naming file, line, field)."""
    root = Path(release_dir)
    paths, problems = _listing(root)
    keyed = [((-1, 0, 0, 0, n), p) for n, p in enumerate(problems)]
    if not paths:
        keyed.append(((-1, 0, 0, 0, len(keyed)), NO_RECORDS.problem("attribution")))
    readable = []
    for batch in records.batches([(p, files.rel(p, root), {}) for p in paths], SPEC):
        for f in batch:
            keyed += [((f.fi, 0, 0, 0, n), p) for n, p in enumerate(f.problems)]
            if f.raw is not None and not f.utf8:
                keyed = [kp for kp in keyed if kp[0][0] != f.fi] + [((f.fi, 0, 0, 0, 0), files.not_utf8(f.path, f.rel))]
            elif f.raw is not None:
                readable.append(f)
    rows: list[dict] = []
    if readable:
        rows, found = _checked(records.raw_frame(readable, SPEC)[0])
        keyed += found
    return rows, ordered(keyed)


def drop_duplicate_records(rows: list[dict], problems: list[Problem]) -> list[dict]:
    """Rows without the (model, item_id) pairs recorded more than once; every copy is reported in
    ``problems`` and left out (the prediction then shows up as missing_record)."""
    seen: dict[tuple, list[dict]] = {}
    for r in rows:
        seen.setdefault((r["model"], r["item_id"]), []).append(r)
    kept = []
    for (model, item), rs in seen.items():
        if len(rs) == 1:
            kept.append(rs[0])
            continue
        where = ", ".join(f"{r['source_file']}:{r['source_line']}" for r in rs)
        problems += [DUPLICATE.problem(r["source_file"], r["source_line"], model=model, item_id=item, n=len(rs), where=where)
                     for r in rs]
    return kept
