"""Reading and checking error-attribution audit records (``<release>/attribution/``, FORMATS.md section 4).

One record per line of ``attribution/**/*.jsonl[.gz]``: ``model``, ``item_id`` and the auditor's
fields :data:`AUDIT_FIELDS`.  This module checks each record on its own (:func:`check_record`; the
rule table :data:`RULES` on the engine of :mod:`voxmem_analysis.io.rules`), reads the files
(:func:`read_audit_files`) and reports duplicate records (:func:`drop_duplicate_records`); the check
against the attribution population (which needs the verdict frame) and the classification live in
:mod:`voxmem_analysis.analysis.attribution`.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Mapping

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io import bulk as bk
from voxmem_analysis.io.files import prediction_files, read_text, walk
from voxmem_analysis.io.files import rel as relpath
from voxmem_analysis.io.jsonl import not_unicode, parse_line
from voxmem_analysis.io.rules import Rule, blank, check, flagged, odd, parser_rules, raw_frame, shown, unicode_rule, value_columns

__all__ = ["COMMITS", "SOURCES", "RELATIONS", "AUDIT_FIELDS", "AUDIT_ENUMS", "audit_files", "check_record", "check_records",
           "read_audit_files", "drop_duplicate_records", "BULK_MIN_LINES", "RULES"]

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


def audit_files(root: Path) -> list[Path]:
    """``<root>/attribution/**/*.jsonl[.gz]`` (any letter case, symlinks followed), sorted by relative path."""
    return _audit_listing(Path(root))[0]


def _audit_listing(root: Path) -> tuple[list[Path], list[Problem]]:
    found, _, problems = walk(root / "attribution", root)
    return prediction_files(found)[0], problems


#: Loads with fewer lines are read by Python's json alone even with ``bulk=True`` (0: polars reads the
#: plain lines of every load, one call for all files: faster from a few hundred lines on); the result
#: is the same either way.
BULK_MIN_LINES = 0
#: JSON types a plain record's fields hold (see :func:`voxmem_analysis.io.bulk.screen_lines`) ...
_PLAIN_TYPES = {"model": '"', "item_id": '"', "commits": '"', "answer": '"n', "evidence_recovered": "tf",
                "source": '"', "source_session": "0-n", "relation": '"', "why": '"n'}
#: ... and how the bulk parser reads them.
_PLAIN_SCHEMA = {"model": pl.Utf8, "item_id": pl.Utf8, "commits": pl.Utf8, "answer": pl.Utf8,
                 "evidence_recovered": pl.Boolean, "source": pl.Utf8, "source_session": pl.Int64,
                 "relation": pl.Utf8, "why": pl.Utf8}


# ----------------------------------------------------------------------------- the rules
_SPEC = {"model": "str", "item_id": "str", "commits": "str", "answer": "str", "evidence_recovered": "bool",
         "source": "str", "source_session": "int", "relation": "str", "why": "str"}
_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")   # text a surrogate can come from (UTF-8 holds none)
_META = {"_fi": pl.Int64, "_seq": pl.Int64, "_file": pl.Utf8, "_line": pl.Int64, "_p0_code": pl.Utf8,
         "_p0_msg": pl.Utf8, "_p0_field": pl.Utf8, "_uni": pl.List(pl.Utf8)}


def _enum_rule(f: str, allowed: tuple[str, ...]) -> Rule:
    return Rule("unknown_value", "error", f, 1,
                lambda _: pl.col(f"{f}.has") & ~pl.col(f).is_in(list(allowed)).fill_null(False),
                lambda r: f"`{f}` is {shown(r, f)!r}; expected one of {', '.join(allowed)}")


#: Each rule of an audit record (FORMATS.md section 4), once; problems of a record in this order.
RULES: tuple[Rule, ...] = (
    *parser_rules(lambda r: f"record is a JSON {r['_p0_msg']}, expected an object"), unicode_rule(1),
    *[Rule("missing_field", "error", f, 1, lambda _, f=f: blank(f) | odd(f),
           lambda r, f=f: f"required field `{f}` is missing or empty") for f in ("model", "item_id")],
    *[Rule("missing_field", "error", f, 1, lambda _, f=f: ~pl.col(f"{f}.has"), lambda r, f=f: f"audit field `{f}` is missing")
      for f in AUDIT_FIELDS],
    *[_enum_rule(f, allowed) for f, allowed in AUDIT_ENUMS.items()],
    Rule("invalid_value", "error", "evidence_recovered", 1,
         lambda _: pl.col("evidence_recovered.has") & pl.col("evidence_recovered").is_null(),
         lambda r: f"`evidence_recovered` must be true or false, got {shown(r, 'evidence_recovered')!r}"),
    Rule("invalid_value", "error", "source_session", 1,   # a whole number beyond 64 bits is a session number too
         lambda _: odd("source_session") & (pl.col("source_session.t") != "int"),
         lambda r: f"`source_session` must be a session number or null, got {shown(r, 'source_session')!r}"),
    *[Rule("invalid_value", "error", f, 1, lambda _, f=f: odd(f),
           lambda r, f=f: f"`{f}` must be a string or null, got {r[f + '.t']}") for f in ("answer", "why")],
)


# ----------------------------------------------------------------------------- reading
def _python_frame(records: list, fi: list[int], seq: list[int], files: list, lines: list, parsed: list,
                  texts: list[str] | None = None) -> pl.DataFrame:
    """The raw frame of records read by Python's json (``parsed``: None, or the parser's ``(code, message,
    field)`` for a line that is not a JSON object; ``texts``: the lines, to look for surrogates only
    in those with a surrogate escape)."""
    cols = value_columns(records, _SPEC)
    cols.update(_fi=fi, _seq=seq, _file=files, _line=lines,
                _p0_code=[p and p[0] for p in parsed], _p0_msg=[p and p[1] for p in parsed],
                _p0_field=[p and p[2] for p in parsed],
                _uni=[not_unicode(r) if isinstance(r, dict) and (ln is None or _ESCAPE.search(ln)) else []
                      for r, ln in zip(records, texts or [None] * len(records))])
    return raw_frame(cols, _SPEC, _META)


def _parse(line: str):
    """``(record, None)`` or ``(None, (code, message, field))``: Python's reading of one line."""
    obj, bad = parse_line(line)
    if bad is not None:
        return None, ("malformed_json", bad[0], bad[1])
    if not isinstance(obj, dict):
        return None, ("not_an_object", type(obj).__name__, None)
    return obj, None


def _checked(frame: pl.DataFrame) -> tuple[list[dict], list]:
    """``(rows, keyed problems)`` of a raw frame checked against :data:`RULES`."""
    frame = check(frame.sort("_fi", "_seq"), RULES)
    keyed = flagged(frame, RULES, lambda r, i, n: (r["_fi"], 1, r["_seq"], i, n))
    good = frame.filter(pl.col("_ok"))
    big = good["source_session.t"] == "int"   # whole numbers beyond 64 bits, kept exact
    session = good["source_session"].to_list()
    if big.any():
        for i, text in zip(big.arg_true().to_list(), good.filter(big)["source_session.s"].to_list()):
            session[i] = int(text)
    keys = ["model", "item_id", *AUDIT_FIELDS, "source_file", "source_line"]
    cols = [good[c].to_list() for c in ("model", "item_id", "commits", "answer", "evidence_recovered", "source")]
    cols += [session, good["relation"].to_list(), good["why"].to_list(), good["_file"].to_list(), good["_line"].to_list()]
    return [dict(zip(keys, r)) for r in zip(*cols)], keyed


def check_record(obj, file: str | None, line: int | None) -> tuple[dict | None, list[Problem]]:
    """One audit record checked against FORMATS.md section 4 (:data:`RULES`): (row or None, problems
    naming file, line, field)."""
    rows, problems = _check_objects([obj], file, [line])
    return (rows[0] if rows else None), problems


def check_records(records: Iterable[Mapping], file: str | None = None) -> tuple[list[dict], list[Problem]]:
    """Check in-memory records (``line`` = 1-based position): (valid rows, problems)."""
    records = list(records)
    return _check_objects(records, file, list(range(1, len(records) + 1)))


def _check_objects(records: list, file, lines: list) -> tuple[list[dict], list[Problem]]:
    parsed = [None if isinstance(r, dict) else ("not_an_object", type(r).__name__, None) for r in records]
    n = len(records)
    frame = _python_frame(records, [0] * n, list(range(n)), [file] * n, lines, parsed)
    rows, keyed = _checked(frame)
    return rows, [p for _, p in sorted(keyed, key=lambda e: e[0])]


def read_audit_files(release_dir, *, bulk: bool = True) -> tuple[list[dict], list[Problem]]:
    """Read and check every audit record file of a release: (valid rows, problems).

    Problems (each with file, line, field): ``no_audit_records``, ``file_unreadable``,
    ``malformed_json``, ``not_an_object``, ``missing_field``, ``unknown_value``, ``invalid_value``.
    Every line becomes a row of one raw frame checked by :data:`RULES`.  Who reads a line (here
    only): with ``bulk`` (default) and at least :data:`BULK_MIN_LINES` lines in all, polars reads
    the lines :func:`voxmem_analysis.io.bulk.screen_lines` passes (plain records polars reads as
    Python's ``json`` does) in one call; Python's ``json`` reads every other line (and all lines of
    smaller loads, or with ``bulk=False``).  Both give the same rows and problems.
    """
    root = Path(release_dir)
    files, problems = _audit_listing(root)
    keyed = [((-1, 0, 0, 0, n), p) for n, p in enumerate(problems)]
    if not files:
        keyed.append(((-1, 0, 0, 0, len(keyed)), Problem("no_audit_records", "error",
                                                         "no attribution/**/*.jsonl files found", "attribution")))
    texts, fis, rels = [], [], []
    for fi, path in enumerate(files):
        rel = relpath(path, root)
        text, found = read_text(path, rel)   # CR line endings, a gzip stream cut short: see io/files.py
        keyed += [((fi, 0, 0, 0, n), p) for n, p in enumerate(found)]
        if text is not None:
            texts.append(text)
            fis.append(fi)
            rels.append(rel)
    rows: list[dict] = []
    if texts:
        rows, found = _checked(_raw_frame(bk.split_lines(texts, fis, rels, [None] * len(texts)), bulk))
        keyed += found
    return rows, [p for _, p in sorted(keyed, key=lambda e: e[0])]


def _raw_frame(lines: pl.DataFrame, bulk: bool) -> pl.DataFrame:
    """The raw frame of every line: polars reads the plain records (see :func:`read_audit_files`), Python's json the rest."""
    lines = lines.with_columns(pl.col("lineno").alias("_seq"))
    parts = []
    python = lines
    if bulk and lines.height >= BULK_MIN_LINES:
        suspect = bk.screen_lines(lines["line"], _PLAIN_TYPES, required=_PLAIN_TYPES)
        plain = lines.filter(~suspect)
        rec, rejected = bk.parse_lines(plain["line"], _PLAIN_SCHEMA)
        if rec is not None:
            meta = plain.select("_fi", "_seq", "_file", pl.col("lineno").alias("_line")).gather(rec["_pos"])
            rec = pl.concat([rec.drop("_pos"), meta], how="horizontal").with_columns(
                *[pl.lit(True).alias(f"{f}.has") for f in _SPEC], pl.lit([], dtype=pl.List(pl.Utf8)).alias("_uni"))
            parts.append(rec)
            python = pl.concat([lines.filter(suspect), plain[rejected]]) if rejected else lines.filter(suspect)
    lines_list = python["line"].to_list()
    read = [_parse(ln) for ln in lines_list]
    parts.append(_python_frame([r for r, _ in read], python["_fi"].to_list(), python["_seq"].to_list(),
                               python["_file"].to_list(), python["lineno"].to_list(), [b for _, b in read], lines_list))
    return pl.concat(parts, how="diagonal_relaxed")


def drop_duplicate_records(rows: list[dict], problems: list[Problem]) -> list[dict]:
    """Rows without the (model, item_id) pairs recorded more than once; every copy is reported in ``problems``."""
    # every copy is reported and left out, so the prediction shows up as missing_record
    seen: dict[tuple, list[dict]] = {}
    for r in rows:
        seen.setdefault((r["model"], r["item_id"]), []).append(r)
    kept = []
    for key, rs in seen.items():
        if len(rs) == 1:
            kept.append(rs[0])
            continue
        where = ", ".join(f"{r['source_file']}:{r['source_line']}" for r in rs)
        for r in rs:
            problems.append(Problem("duplicate_record", "error",
                                    f"({key[0]}, {key[1]}) has {len(rs)} audit records ({where}); none is used",
                                    r["source_file"], r["source_line"], "item_id"))
    return kept
