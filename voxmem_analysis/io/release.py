"""Read a release directory into the tidy verdict frame, losing nothing.

A *release directory* is the folder an evaluation run wrote (see ``data/README.md``):
``predictions/**/*.jsonl[.gz]`` in the public harness's format, plus optional
``items.*``, ``models.csv``, ``judge2/``, ``ablation/``, ``attribution/`` and
``release.json``.  Files are found and opened by :mod:`voxmem_analysis.io.files` (extensions
in any letter case, symbolic links followed with loop protection, unreadable folders and files
reported, bare-CR line endings, gzip streams cut short); after reading, one identity per model
(:func:`_model_identity`) and the registry's claims (:func:`_registry_claims`) are checked.

``load_release(path)`` validates everything it reads.  In strict mode (default) any
error raises :class:`~voxmem_analysis.errors.VoxMemDataError` listing *every* problem
with its file, line and field; in lenient mode (``strict=False``) the lines that
broke a rule are left out of the frame and the returned :class:`Release` carries the
list of problems, each counted, so nothing disappears silently.
"""
from __future__ import annotations

import csv
import gzip
import io
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import Problem, VoxMemDataError
from voxmem_analysis.io import bulk as bk
from voxmem_analysis.io import cache as _cache
from voxmem_analysis.io import files as rf
from voxmem_analysis.io.jsonl import decode, iter_lines, parse_object
from voxmem_analysis.io.provenance import ReleaseProvenance
from voxmem_analysis.io.schema import (ABLATION_CONDITIONS, COLUMN_NAMES, ITEM_FIELDS, REQUIRED_FIELDS,
                                       REQUIRED_ITEM_FIELDS, normalize_condition)
from voxmem_analysis.io.scoring import ScoringRules, apply_scoring

if TYPE_CHECKING:  # pandas only on demand: Release.models, Release.pandas
    import pandas as pd

__all__ = ["Release", "load_release", "read_predictions", "read_items", "read_models", "read_registry", "BUDGET_DTYPE"]

BUDGET_DTYPE = pl.Enum(list(tx.BUDGETS))
_PRED_GLOBS = ("*.jsonl", "*.jsonl.gz")
_EXPECTED = {"answer", "insufficient_evidence"}
_DELIVERY = {"native", "folded"}
_ITEM_ID = re.compile(r"^(?P<q>.+)_(?P<b>\d+[kK])$")
_MODEL_COLUMNS = ["model", "family", "access", "architecture", "llm_params_b", "total_params_b", "in_64k_set", "order"]


# ----------------------------------------------------------------------------- files
def _prediction_files(root: Path, sub: str) -> list[Path]:
    """``*.jsonl`` / ``*.jsonl.gz`` files (any case) below ``root/sub``, symlinks followed."""
    return _listing(root, sub)[0]


def _listing(root: Path, sub: str) -> tuple[list[Path], list[Path], list[Problem]]:
    """``(prediction files, other files, problems of the walk)`` below ``root/sub``."""
    found, _, problems = rf.walk(root / sub, root)
    preds, other = rf.prediction_files(found)
    return preds, other, problems


def _open_text(path: Path):
    raw = path.read_bytes()
    if rf.is_gzip_name(path.name):
        raw = gzip.decompress(raw)
    return raw


def _rel(path: Path, root: Path) -> str:
    return rf.rel(path, root)


# ----------------------------------------------------------------------------- items
def read_items(root: Path) -> tuple[pl.DataFrame | None, list[Problem]]:
    """Read ``items.parquet`` / ``items.csv`` / ``items.jsonl`` if present."""
    problems: list[Problem] = []
    for name in ("items.parquet", "items.csv", "items.jsonl", "items.jsonl.gz"):
        path = root / name
        if not path.exists():
            continue
        try:
            if name.endswith(".parquet"):
                df = pl.read_parquet(path)
            elif name.endswith(".csv"):
                df = pl.read_csv(path, infer_schema_length=0)  # all text; typed below
            else:
                df = pl.read_ndjson(io.BytesIO(_open_text(path)), infer_schema_length=None)
        except Exception as exc:  # noqa: BLE001 - report any reader failure with the file name
            problems.append(Problem("items_unreadable", "error", f"cannot read item table: {exc}", name))
            return None, problems
        if "item_id" not in df.columns:
            problems.append(Problem("items_missing_field", "error", "item table has no `item_id` column", name, None, "item_id"))
            return None, problems
        numeric = {c: pl.Int64 for c in ("session_count", "evidence_session_count", "samekey_haystack_session_count",
                                         "filler_session_count", "topical_haystack_session_count", "history_audio_tokens")}
        numeric["history_duration_seconds"] = pl.Float64
        for col, dtype in numeric.items():
            if col not in df.columns:
                continue
            before = df[col]
            after = before.cast(pl.Utf8).str.strip_chars().cast(dtype, strict=False)
            lost = int((before.is_not_null() & (before.cast(pl.Utf8).str.strip_chars() != "") & after.is_null()).sum())
            if lost:
                problems.append(Problem("invalid_field", "warning",
                                        f"{lost} value(s) of `{col}` are not numbers; read as missing", name, None, col, lost))
            df = df.with_columns(after.alias(col))
        dup = df.filter(pl.col("item_id").is_duplicated())
        if dup.height:
            problems.append(Problem("items_duplicate", "error",
                                    f"item_id repeated in item table: {sorted(set(dup['item_id'].to_list()))[:5]}",
                                    name, None, "item_id", dup.height))
        return df.with_columns(pl.lit(name).alias("_items_file")), problems
    return None, problems


_ACCESS = {"proprietary", "open_weight", ""}
_ARCH = {"audio_specialist", "omni_modal", "api", ""}
_BOOL_TEXT = {"true", "false", "1", "0", "yes", "no", ""}
_REGISTRY_NUMBERS = ("llm_params_b", "total_params_b", "order")


def _registry_number(text: str) -> float | None:
    """A number of models.csv (``nan`` is not one: it would hide a typo), else None."""
    try:
        v = float(text)
    except ValueError:
        return None
    return None if v != v else v


def _check_registry(rows: list[tuple[int, dict[str, str]]], columns: list[str]) -> list[Problem]:
    """Problems of the models.csv rows, each ``(line number, {column: text})``."""
    out: list[Problem] = []
    seen: dict[str, int] = {}
    for i, r in rows:
        m = r.get("model", "")
        if not m.strip():
            out.append(Problem("missing_field", "error", "empty model name", "models.csv", i, "model"))
        elif m in seen:
            out.append(Problem("models_duplicate", "error", f"model {m!r} listed twice (first on line {seen[m]})",
                               "models.csv", i, "model"))
        else:
            seen[m] = i
        for col, allowed in (("access", _ACCESS), ("architecture", _ARCH)):
            v = r.get(col, "").strip()
            if col in columns and v not in allowed:
                out.append(Problem("unknown_label", "error", f"{col} {v!r} is not one of "
                                   f"{', '.join(sorted(a for a in allowed if a))}", "models.csv", i, col))
        v = r.get("in_64k_set", "").strip().lower()
        if v not in _BOOL_TEXT:
            out.append(Problem("invalid_field", "error", f"in_64k_set must be true or false, got {v!r}",
                               "models.csv", i, "in_64k_set"))
        for col in _REGISTRY_NUMBERS:
            v = r.get(col, "").strip()
            if v and _registry_number(v) is None:
                out.append(Problem("invalid_field", "warning", f"{col} {v!r} is not a number; read as missing",
                                   "models.csv", i, col))
    return out


def _read_registry_rows(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]], list[Problem]]:
    """Header and rows of models.csv (blank lines skipped; a row longer than the header is an error)."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except (UnicodeDecodeError, OSError) as exc:
        return [], [], [Problem("models_unreadable", "error", f"cannot read models.csv: {exc}", "models.csv")]
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # strict: an unclosed quote is an error
    header: list[str] | None = None
    rows: list[tuple[int, dict[str, str]]] = []
    problems: list[Problem] = []
    try:
        for rec in reader:
            if not any(rec):
                continue  # a blank line
            if header is None:
                header = _unique_names(rec)
                continue
            line = reader.line_num - sum(f.count("\n") for f in rec)  # where the row starts
            if len(rec) > len(header):
                problems.append(Problem("models_unreadable", "error", f"the line has {len(rec)} fields but the header "
                                        f"has {len(header)}: a comma too many or a value to quote", "models.csv", line, header[-1] if header else None))
                continue
            rows.append((line, dict(zip(header, rec + [""] * (len(header) - len(rec))))))
    except csv.Error as exc:
        return [], [], [Problem("models_unreadable", "error", f"cannot read models.csv: {exc}", "models.csv",
                                reader.line_num)]
    if header is None:
        return [], [], [Problem("models_unreadable", "error", "cannot read models.csv: it has no header line",
                                "models.csv")]
    return header, rows, problems


def _unique_names(header: list[str]) -> list[str]:
    """Column names, a repeated one numbered ``name.1``, ``name.2`` (as pandas reads them)."""
    seen: dict[str, int] = {}
    out = []
    for h in header:
        n = seen.get(h, 0)
        seen[h] = n + 1
        out.append(h if n == 0 else f"{h}.{n}")
    return out


def read_registry(root: Path, present: list[str]) -> tuple[pl.DataFrame, list[Problem]]:
    """Read ``models.csv`` (the Table 12 registry) as a polars frame, without pandas.

    Columns ``model, family, access, architecture`` (text), ``llm_params_b, total_params_b, order``
    (Float64, missing when empty or not a number), ``in_64k_set`` (Boolean), then any other
    column of the file as text; one row per model (the first when listed twice, which is an
    error), models with predictions but no row get empty group columns; sorted by ``order``, then
    ``model``.  Problems name the line and column.
    """
    path = root / "models.csv"
    problems: list[Problem] = []
    header: list[str] = list(_MODEL_COLUMNS)
    rows: list[tuple[int, dict[str, str]]] = []
    if path.exists():
        header, rows, problems = _read_registry_rows(path)
        if not problems and "model" not in header:
            problems.append(Problem("models_missing_field", "error", "models.csv has no `model` column", "models.csv",
                                    None, "model"))
        if (problems and not rows) or "model" not in header:
            header, rows = list(_MODEL_COLUMNS), []
        problems += _check_registry(rows, header)
    extra = [c for c in header if c not in _MODEL_COLUMNS]
    records: list[dict[str, str]] = []
    listed: set[str] = set()
    for _, r in rows:
        if r.get("model", "") not in listed:
            listed.add(r.get("model", ""))
            records.append(r)
    missing = [m for m in present if m not in listed]
    if missing and path.exists():
        problems.append(Problem("model_not_in_registry", "warning",
                                f"models not in models.csv (no group information): {', '.join(missing)}",
                                "models.csv", count=len(missing)))
    records += [{"model": m} for m in missing]
    cols: dict[str, pl.Series] = {}
    for col in _MODEL_COLUMNS + extra:
        text = [r.get(col, "") for r in records]
        if col in _REGISTRY_NUMBERS:
            cols[col] = pl.Series(col, [_registry_number(v.strip()) if v.strip() else None for v in text], pl.Float64)
        elif col == "in_64k_set":
            cols[col] = pl.Series(col, [v.strip().lower() in ("true", "1", "yes") for v in text], pl.Boolean)
        else:
            cols[col] = pl.Series(col, text, pl.Utf8)
    reg = pl.DataFrame(list(cols.values()))
    return reg.sort(["order", "model"], nulls_last=True, maintain_order=True), problems


def registry_pandas(registry: pl.DataFrame) -> pd.DataFrame:
    """The registry as pandas (text columns as strings, numbers as float with NaN for missing)."""
    import pandas as pd

    data = {}
    for col in registry.columns:
        vals = registry[col].to_list()
        if registry[col].dtype == pl.Float64:
            data[col] = pd.array([float("nan") if v is None else v for v in vals], dtype="float64")
        elif registry[col].dtype == pl.Boolean:
            data[col] = pd.array(vals, dtype=bool)
        else:
            data[col] = pd.array(vals, dtype=str)
    return pd.DataFrame(data, columns=registry.columns)


def read_models(root: Path, present: list[str]) -> tuple[pd.DataFrame, list[Problem]]:
    """Read ``models.csv`` (the Table 12 registry) as pandas; see :func:`read_registry`."""
    reg, problems = read_registry(root, present)
    return registry_pandas(reg), problems


# ----------------------------------------------------------------------------- predictions
def _jsonable(v):
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return v


def _parse_bool(v):
    if isinstance(v, bool) or v is None:
        return v, True
    if isinstance(v, str) and v.strip().lower() in ("true", "false"):
        return v.strip().lower() == "true", True
    return None, False


def read_predictions(root: Path, sub: str = "predictions", *, items: pl.DataFrame | None = None,
                     condition_from_dir: bool = False, bulk: bool = True) -> tuple[pl.DataFrame, list[Problem], dict]:
    """Parse every harness file below ``root/sub``.

    Returns the rows that passed (as a polars frame, before scoring), the problems and
    counts (``lines``, ``rows``, ``rejected_lines``, ``duplicates_identical``).  ``bulk``
    (default) reads the files with the columnar reader of :mod:`voxmem_analysis.io.bulk`;
    ``bulk=False`` reads every line with :func:`parse_prediction_line`.  Both give the same
    frame, problems and counts.
    """
    root = Path(root)
    files, unread, problems = _listing(root, sub)
    for p in unread:
        problems.append(Problem("file_not_read", "warning",
                                "not read: only *.jsonl and *.jsonl.gz files (any letter case) are predictions"
                                + (" (broken link)" if p.is_symlink() and not p.exists() else ""),
                                _rel(p, root)))
    if bulk and bk.items_supported(items):
        from voxmem_analysis.io.bulk_reader import read_files_bulk

        frame, more, stats = read_files_bulk(root, sub, files, items, condition_from_dir)
        return frame, problems + more, stats
    return _read_by_line(root, sub, files, items, condition_from_dir, problems)


def read_file_text(path: Path, rel: str) -> tuple[str | None, list[Problem]]:
    """The decoded text of one prediction file (None when nothing can be read) and what reading
    it found: see :func:`voxmem_analysis.io.files.read_text` (CR line endings, a gzip stream
    cut short: the lines before the cut are read and the loss is an error)."""
    return rf.read_text(path, rel)


def file_condition(root: Path, sub: str, path: Path, condition_from_dir: bool) -> str | None:
    """Ablation condition named by the first folder below ``root/sub`` (None outside ablation runs;
    ``""`` for a file directly in ``root/sub``: its lines must name their own condition)."""
    if not condition_from_dir:
        return None
    parts = Path(rf.rel(path, root / sub)).parts
    return parts[0] if len(parts) > 1 else ""


def item_index_of(items: pl.DataFrame | None) -> dict[str, dict]:
    return {r["item_id"]: r for r in items.iter_rows(named=True)} if items is not None else {}


def _read_by_line(root: Path, sub: str, files: list[Path], items, condition_from_dir: bool, problems: list[Problem]):
    stats = {"files": len(files), "files_unreadable": 0, "lines": 0, "rows": 0, "rejected_lines": 0,
             "duplicates_identical": 0}
    item_index = item_index_of(items)
    rows: list[dict] = []
    seen: dict[tuple, tuple[str, object, object, int]] = {}

    for path in files:
        rel = _rel(path, root)
        text, bad = read_file_text(path, rel)
        problems.extend(bad)
        if text is None:
            stats["files_unreadable"] += 1
            continue
        lines = list(iter_lines(text))
        if not lines:
            problems.append(Problem("empty_file", "warning", "file holds no predictions", rel))
        condition = file_condition(root, sub, path, condition_from_dir)
        for lineno, line in lines:
            stats["lines"] += 1
            row, errs = parse_prediction_line(line, rel, lineno, item_index, condition)
            problems.extend(errs)
            if row is None or any(e.severity == "error" for e in errs):
                stats["rejected_lines"] += 1
                continue
            key = (row["model"], row["item_id"], row["budget"], row.get("input_condition"))
            if key in seen:
                f0, verdict0, resp0, l0 = seen[key]
                if verdict0 == row["verdict"] and resp0 == row["response"]:
                    stats["duplicates_identical"] += 1
                    problems.append(Problem("duplicate_identical", "warning",
                                            f"({row['model']}, {row['item_id']}) already read at {f0}:{l0}; identical copy ignored",
                                            rel, lineno, "item_id"))
                else:
                    stats["rejected_lines"] += 1
                    problems.append(Problem("duplicate_conflict", "error",
                                            f"({row['model']}, {row['item_id']}) read twice with different verdicts/responses "
                                            f"(first at {f0}:{l0}: verdict={verdict0!r}; here verdict={row['verdict']!r})",
                                            rel, lineno, "verdict"))
                continue
            seen[key] = (rel, row["verdict"], row["response"], lineno)
            rows.append(row)
    stats["rows"] = len(rows)
    return rows_to_frame(rows), problems, stats


class _Findings(list):
    """Problems of one line; calling it adds one (``code, message, field, severity``)."""

    def __init__(self, rel: str, lineno: int):
        super().__init__()
        self.rel, self.lineno = rel, lineno

    def __call__(self, code, msg, fld=None, sev="error"):
        self.append(Problem(code, sev, msg, self.rel, self.lineno, fld))

    def fatal(self) -> bool:
        return any(e.severity == "error" for e in self)


def parse_prediction_line(line: str, rel: str, lineno: int, item_index: dict, condition: str | None):
    """``(row, problems)`` of one harness line (``row`` is None when it cannot be read); the
    definition of what a line means, which the columnar reader reproduces for plain lines.

    ``condition``: None outside ``ablation/``; there, the input condition its folder names
    (``""`` for a file directly in ``ablation/``); a line's own ``input_condition`` overrides it.
    """
    err = _Findings(rel, lineno)
    rec = _line_record(line, err)
    if rec is None:
        return None, list(err)
    if rec["model"] != rec["model"].strip():
        err("model_whitespace", f"model name {rec['model']!r} has leading or trailing spaces: it is a different "
            "model from the name without them", "model", "warning")
    item_id = str(rec["item_id"])
    item = item_index.get(item_id)
    if item_index and item is None:
        err("unknown_item", f"item_id {item_id!r} is not in the item table", "item_id")
    get = _getter(rec, item)
    if item is not None:
        _item_mismatches(rec, item, err)
    cell = _item_cell(rec, item_id, get, err)
    flags = _line_flags(rec, cell["is_ar"], err)
    cond = _line_condition(rec, condition, err)
    if err.fatal():
        return None, list(err)
    row = _line_row(rec, item, get, cell, flags, err)
    if cond is not None:
        row["input_condition"] = cond
    row.update(_line_extras(rec, item, get))
    return row, list(err)


def _line_record(line: str, err: _Findings) -> dict | None:
    """The line's JSON object when it parses, has its required fields and valid Unicode."""
    rec, bad = parse_object(line)
    if bad is not None:
        err(*bad)
        return None
    for f in REQUIRED_FIELDS:
        if rec.get(f) in (None, ""):
            err("missing_field", f"required field `{f}` is missing or empty", f)
        elif not isinstance(rec.get(f), str):
            err("invalid_field", f"`{f}` must be a string, got {type(rec.get(f)).__name__} {rec.get(f)!r}", f)
    for k, v in rec.items():
        try:
            k.encode("utf-8")
        except UnicodeEncodeError:
            shown = k.encode("utf-8", "backslashreplace").decode("utf-8")
            err("invalid_unicode", f"field name `{shown}` is not valid Unicode (an unpaired surrogate escape)", shown)
            continue
        if isinstance(v, str):
            try:
                v.encode("utf-8")
            except UnicodeEncodeError:
                err("invalid_unicode", f"`{k}` holds text that is not valid Unicode (an unpaired surrogate escape)", k)
    return None if err else rec


def _getter(rec: dict, item: dict | None):
    def get(f):
        v = rec.get(f)
        if v is None and item is not None:
            v = item.get(f)
        return v
    return get


def _item_mismatches(rec: dict, item: dict, err: _Findings) -> None:
    """Item fields: the line's value, else the item table's; both present and different -> error."""
    for f in ("question_id", "context_length", "evidence_type", "memory_operation", "subtype", "expected_response", "family_id"):
        a, b = rec.get(f), item.get(f)
        if a is not None and b not in (None, "") and str(a) != str(b):
            norm = {"context_length": tx.normalize_budget, "evidence_type": tx.normalize_evidence,
                    "memory_operation": tx.normalize_operation, "subtype": tx.normalize_subtype}.get(f)
            if norm is None or norm(a) != norm(b):
                err("item_mismatch", f"`{f}` is {a!r} here but {b!r} in the item table", f)


def _item_cell(rec: dict, item_id: str, get, err: _Findings) -> dict:
    """Question, budget and taxonomy labels of the line (checked, normalised)."""
    m = _ITEM_ID.match(item_id)
    for f in REQUIRED_ITEM_FIELDS:
        if get(f) in (None, "") and not (f == "question_id" and m) and not (f == "context_length" and m):
            err("missing_field", f"field `{f}` is missing (not in the line nor in the item table)", f)
    qid = get("question_id") or (m.group("q") if m else None)
    raw_budget = get("context_length") or (m.group("b") if m else None)
    budget = tx.normalize_budget(raw_budget)
    if raw_budget is not None and budget is None:
        err("unknown_label", f"unknown context_length {raw_budget!r} (expected one of {', '.join(tx.BUDGETS)}, any case)", "context_length")
    if m and budget and tx.normalize_budget(m.group("b")) not in (None, budget):
        err("item_id_mismatch", f"item_id {item_id!r} ends in {m.group('b')!r} but context_length is {raw_budget!r}", "item_id")
    if m and qid and m.group("q") != str(qid):
        err("item_id_mismatch", f"item_id {item_id!r} does not start with question_id {qid!r}", "question_id")
    ev_raw, op_raw, st_raw = get("evidence_type"), get("memory_operation"), get("subtype")
    ev = tx.normalize_evidence(ev_raw)
    if ev_raw not in (None, "") and ev is None:
        err("unknown_label", f"unknown evidence_type {ev_raw!r} (expected one of {', '.join(tx.EVIDENCE_TYPES)})", "evidence_type")
    op = tx.normalize_operation(op_raw)
    if op_raw not in (None, "") and op is None:
        err("unknown_label", f"unknown memory_operation {op_raw!r} (expected one of {', '.join(tx.OPERATIONS)})", "memory_operation")
    st = tx.normalize_subtype(st_raw) if st_raw not in (None, "") else None
    if st_raw not in (None, "") and st is None:
        err("unknown_label", f"unknown subtype {st_raw!r} (expected one of {', '.join(tx.SUBTYPES)})", "subtype")
    expected = get("expected_response")
    if expected not in (None, "") and expected not in _EXPECTED:
        err("unknown_label", f"unknown expected_response {expected!r} (expected 'answer' or 'insufficient_evidence')", "expected_response")
    is_ar = expected == "insufficient_evidence"
    if op is not None and expected in _EXPECTED and (op == "answer_refusal") != is_ar:
        err("inconsistent_item", f"memory_operation {op_raw!r} contradicts expected_response {expected!r}", "expected_response")
    if ev == "speech_semantics" and op == "information_extraction":
        err("invalid_cell", "speech-semantics information extraction does not exist in VoxMem (excluded by design)", "memory_operation")
    if not m and budget:
        err("item_id_no_budget", f"item_id {item_id!r} does not end in its context length (e.g. `_32k`); "
            "items are told apart by (item_id, context_length)", "item_id", "warning")
    return {"qid": qid, "budget": budget, "ev": ev, "op": op, "st": st, "is_ar": is_ar}


def _line_flags(rec: dict, is_ar: bool, err: _Findings) -> dict:
    """Verdict, flags, prompt settings and response of the line (checked)."""
    out = {}
    for f in ("provider_rejected", "synthetic"):
        out[f], ok = _parse_bool(rec.get(f))
        if not ok:
            err("invalid_field", f"{f} must be true, false or null, got {rec.get(f)!r}", f)
    out["verdict"], ok = _parse_bool(rec.get("verdict"))
    if not ok:
        err("invalid_verdict", f"verdict must be true, false or null, got {rec.get('verdict')!r}", "verdict")
    out["allow"], ok = _parse_bool(rec.get("allow_abstention"))
    if not ok:
        err("invalid_field", f"allow_abstention must be a boolean, got {rec.get('allow_abstention')!r}", "allow_abstention")
    if out["allow"] is False and is_ar:
        err("ar_without_abstention", "refusal item scored under the no-abstention prompt (allow_abstention=false): its score is meaningless", "allow_abstention")
    delivery = out["delivery"] = rec.get("system_prompt_delivery")
    if delivery is not None and delivery not in _DELIVERY:
        err("unknown_label", f"system_prompt_delivery {delivery!r} is neither 'native' nor 'folded'", "system_prompt_delivery", "warning")
    response = out["response"] = rec.get("response")
    if response is not None and not isinstance(response, str):
        err("invalid_field", f"response must be a string or null, got {type(response).__name__}", "response")
    if out["verdict"] is True and (response is None or not str(response).strip()):
        err("inconsistent_verdict", "verdict is true but the response is empty", "verdict")
    return out


def _line_condition(rec: dict, condition: str | None, err: _Findings) -> str | None:
    """The ablation input condition of a line (None outside ``ablation/``): its own
    ``input_condition``, else its folder's; another spelling of a known condition is read as
    that condition (warning), anything else is an error."""
    if condition is None:
        return None
    raw = rec.get("input_condition") or condition
    canon = normalize_condition(raw)
    if canon is None:
        shown = "missing (neither the line nor its folder below ablation/ names one)" if raw in (None, "") else repr(raw)
        err("unknown_condition", f"input_condition {shown}: expected one of {', '.join(ABLATION_CONDITIONS)}",
            "input_condition")
    elif canon != raw:
        err("condition_spelling", f"input_condition {raw!r} read as {canon!r}", "input_condition", "warning")
    return canon


def _line_row(rec: dict, item: dict | None, get, cell: dict, flags: dict, err: _Findings) -> dict:
    """The frame row of a line that passed every check."""
    ints = {}
    for f in ("n_audio_clips", "session_count", "evidence_session_count", "samekey_haystack_session_count"):
        v = rec.get(f) if f == "n_audio_clips" else get(f)
        ints[f] = _as_int(v)
        if v not in (None, "") and ints[f] is None:
            err("invalid_field", f"`{f}` should be a whole number, got {v!r}; read as missing", f, "warning")
    paired = get("paired_question_id")
    is_ar, op = cell["is_ar"], cell["op"]
    source_op = op if not is_ar else None
    if is_ar:
        if rec.get("source_operation"):
            source_op = tx.normalize_operation(rec.get("source_operation"))
        elif item is not None and item.get("_source_operation"):
            source_op = item["_source_operation"]
    row = {
        "model": str(rec["model"]), "question_id": str(cell["qid"]), "item_id": str(rec["item_id"]),
        "budget": cell["budget"], "family_id": None if get("family_id") is None else str(get("family_id")),
        "evidence_type": cell["ev"], "operation": op, "subtype": cell["st"], "is_ar": is_ar,
        "source_operation": source_op, "paired_question_id": None if paired in (None, "") else str(paired),
        "answer_type": get("answer_type"), "answer_normalization": get("answer_normalization"),
        "verdict": flags["verdict"], "correct": None, "status": None, "scored": None,
        "judge": rec.get("judge"), "allow_abstention": flags["allow"], "system_prompt_delivery": flags["delivery"],
        "n_audio_clips": ints["n_audio_clips"], "session_count": ints["session_count"],
        "evidence_session_count": ints["evidence_session_count"],
        "samekey_haystack_session_count": ints["samekey_haystack_session_count"],
        "response": flags["response"], "error": None if rec.get("error") is None else str(rec.get("error")),
        "synthetic": bool(flags["synthetic"]), "source_file": err.rel, "source_line": err.lineno,
    }
    if flags["provider_rejected"] is not None:
        row["provider_rejected"] = flags["provider_rejected"]
    return row


_KNOWN_KEYS = set(COLUMN_NAMES) | set(ITEM_FIELDS) | {"context_length", "memory_operation", "expected_response",
                                                       "question_text", "gold_json", "judge_raw", "input_condition",
                                                       "provider_rejected"}


def _line_extras(rec: dict, item: dict | None, get) -> dict:
    """Fields the frame does not declare, kept as extra columns (dicts and lists as JSON text)."""
    extras = {k: _jsonable(v) for k, v in rec.items() if k not in _KNOWN_KEYS}
    extras["question_text"] = rec.get("question_text") if rec.get("question_text") is not None else (item or {}).get("question_text")
    extras["gold_json"] = _jsonable(get("gold_json"))
    extras["judge_raw"] = _jsonable(rec.get("judge_raw"))
    return extras


def _as_int(v):
    """A whole number, or None (bools, fractions, text that is not an integer and numbers outside
    the 64-bit range are None)."""
    if v is None or v == "" or isinstance(v, bool):
        return None
    if isinstance(v, int):
        out = v
    elif isinstance(v, float):
        out = int(v) if v.is_integer() else None
    elif isinstance(v, str) and v.strip().lstrip("-").isdigit():
        out = int(v.strip())
    else:
        return None
    return out if out is not None and -2**63 <= out < 2**63 else None


_TYPES = {
    "budget": pl.Utf8, "provider_rejected": pl.Boolean, "is_ar": pl.Boolean, "verdict": pl.Boolean, "correct": pl.Boolean, "scored": pl.Boolean,
    "allow_abstention": pl.Boolean, "synthetic": pl.Boolean, "n_audio_clips": pl.Int64, "session_count": pl.Int64,
    "evidence_session_count": pl.Int64, "samekey_haystack_session_count": pl.Int64, "source_line": pl.Int64,
}


def rows_to_frame(rows: list[dict]) -> pl.DataFrame:
    cols: dict[str, list] = defaultdict(list)
    keys: list[str] = list(COLUMN_NAMES)
    extra_keys: list[str] = []
    for r in rows:
        for k in r:
            if k not in keys and k not in extra_keys:
                extra_keys.append(k)
    all_keys = keys + extra_keys
    for r in rows:
        for k in all_keys:
            cols[k].append(r.get(k))
    series = []
    for k in all_keys:
        vals = cols[k] if rows else []
        dtype = _TYPES.get(k)
        series.append(pl.Series(k, vals, dtype=dtype) if dtype is not None else bk.extra_series(k, vals))
    frame = pl.DataFrame(series)
    return frame.with_columns(pl.col("budget").cast(BUDGET_DTYPE))


# ----------------------------------------------------------------------------- release
@dataclass
class Release(ReleaseProvenance):
    """Everything read from one release directory."""

    path: Path
    frame: pl.DataFrame
    registry: pl.DataFrame
    items: pl.DataFrame | None = None
    judge2: pl.DataFrame | None = None
    ablation: pl.DataFrame | None = None
    meta: dict = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    rules: ScoringRules = field(default_factory=ScoringRules)

    @property
    def models(self) -> pd.DataFrame:
        """``models.csv`` as pandas (:attr:`registry` is the same table in polars; pandas is imported
        on first use only, so loading a release never needs it)."""
        cached = self.__dict__.get("_models_pandas")
        if cached is None:
            cached = self.__dict__["_models_pandas"] = registry_pandas(self.registry)
        return cached

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k not in ("_models_pandas", "_derived")}

    def derived(self, key, compute):
        """``compute()``, kept for this release while its ``frame`` and ``registry`` are the same
        objects (the analyses ask for the model order, the budgets run and the scored predictions
        many times per table).  A cached value is shared: callers copy what they change."""
        store = self.__dict__.setdefault("_derived", {})
        if store.get("_frame") is not self.frame or store.get("_registry") is not self.registry:
            store.clear()
            store["_frame"], store["_registry"] = self.frame, self.registry
        if key not in store:
            store[key] = compute()
        return store[key]

    @property
    def synthetic(self) -> bool:
        """True when the release or any of its lines is marked synthetic (not real model output)."""
        return bool(self.meta.get("synthetic")) or bool(self.frame.height and self.frame["synthetic"].any())

    def model_order(self) -> list[str]:
        """The models with predictions: ``models.csv`` order, then the others alphabetically."""
        return list(self.derived("model_order", self._model_order))

    def _model_order(self) -> tuple[str, ...]:
        present = set(self.frame["model"].unique().to_list())
        order = [m for m in self.registry["model"].to_list() if m in present]
        return tuple(order + sorted(present - set(order)))

    def models_in_64k_set(self) -> list[str]:
        """The models reported at 64K (paper Appendix C.6, Table 14).

        ``in_64k_set`` in ``models.csv`` when any model is flagged there (a flagged model without
        any 64K prediction is left out: ``load_release`` reports it as an error).  Otherwise the models
        with a *complete* 64K run: a prediction for every item seen at 64K and none of them
        rejected by the provider (a model whose 64K calls were mostly rejected for context
        length did not take 64K histories, and must not enter the set: the pairing rule of C.6
        would then cut its shorter budgets down to its few 64K items).
        """
        return list(self.derived("models_in_64k_set", self._models_in_64k_set))

    def _models_in_64k_set(self) -> tuple[str, ...]:
        flagged = [m for m in self.registry.filter(pl.col("in_64k_set"))["model"].to_list() if m in set(self.model_order())]
        if flagged:
            # a flagged model without a single 64K prediction is not in the set (load_release reports it)
            at64 = set(self.frame.filter(pl.col("budget") == "64K")["model"].unique().to_list())
            return tuple(m for m in flagged if m in at64)
        complete = self._complete_at("64K")
        return tuple(m for m in self.model_order() if m in complete)

    def _complete_at(self, budget: str) -> set[str]:
        at = self.frame.filter(pl.col("budget") == budget)
        if not at.height:
            return set()
        n_items = at["item_id"].n_unique()
        per = at.group_by("model").agg(pl.col("item_id").n_unique().alias("n"),
                                       (pl.col("status") == "provider_rejected").sum().alias("rej"))
        return set(per.filter((pl.col("n") == n_items) & (pl.col("rej") == 0))["model"].to_list())

    def incomplete_64k_models(self) -> list[str]:
        """Models with 64K predictions left out of the inferred 64K set (see :meth:`models_in_64k_set`)."""
        if self.registry["in_64k_set"].any():
            return []
        at64 = set(self.frame.filter(pl.col("budget") == "64K")["model"].unique().to_list())
        return [m for m in self.model_order() if m in at64 - self._complete_at("64K")]

    def groups(self) -> dict[str, list[str]]:
        """Models by access group (``proprietary`` / ``open_weight``), in display order."""
        acc = dict(zip(self.registry["model"].to_list(), self.registry["access"].to_list()))
        out: dict[str, list[str]] = {}
        for m in self.model_order():
            out.setdefault(acc.get(m) or "unknown", []).append(m)
        return out

    def pandas(self, frame: pl.DataFrame | None = None) -> pd.DataFrame:
        """The verdict frame as pandas, ``budget`` as an ordered categorical."""
        import pandas as pd

        df = (self.frame if frame is None else frame).to_pandas()
        df["budget"] = pd.Categorical(df["budget"].astype(str), categories=list(tx.BUDGETS), ordered=True)
        return df


def _add_source_operation(items: pl.DataFrame | None) -> pl.DataFrame | None:
    if items is None:
        return None
    if "paired_question_id" not in items.columns or "memory_operation" not in items.columns:
        return items.with_columns(pl.lit(None, dtype=pl.Utf8).alias("_source_operation"))
    qop = (items.select("question_id", "memory_operation").unique(subset="question_id", keep="first")
           .rename({"question_id": "paired_question_id", "memory_operation": "_source_operation"}))
    out = items.with_columns(pl.col("paired_question_id").cast(pl.Utf8)).join(qop, on="paired_question_id", how="left")
    return out.with_columns(pl.col("_source_operation").map_elements(tx.normalize_operation, return_dtype=pl.Utf8))


def _cross_checks(frame: pl.DataFrame, problems: list[Problem]) -> None:
    """Checks that need many lines at once."""
    if not frame.height:
        return
    mixed = (frame.group_by("model").agg(pl.col("allow_abstention").drop_nulls().n_unique().alias("n"),
                                          pl.col("source_file").first())
             .filter(pl.col("n") > 1))
    for r in mixed.iter_rows(named=True):
        problems.append(Problem("mixed_abstention", "error",
                                f"model {r['model']!r} mixes allow_abstention=true and false across its files",
                                r["source_file"], None, "allow_abstention"))
    deliveries = frame.group_by("model").agg(pl.col("system_prompt_delivery").drop_nulls().unique().alias("d"))
    kinds = {d for ds in deliveries["d"].to_list() for d in ds}
    if len(kinds) > 1:
        by = {r["model"]: "/".join(sorted(r["d"])) for r in deliveries.iter_rows(named=True)}
        folded = sorted(m for m, d in by.items() if "folded" in d)
        problems.append(Problem("mixed_prompt_delivery", "warning",
                                "system prompts delivered both natively and folded into the user turn across models; "
                                f"a cross-model table mixing both is not strictly comparable (folded: {', '.join(folded)})",
                                None, None, "system_prompt_delivery"))
    judges = frame.group_by("model", "budget").agg(pl.col("judge").drop_nulls().n_unique().alias("n")).filter(pl.col("n") > 1)
    for r in judges.iter_rows(named=True):
        problems.append(Problem("mixed_judges", "warning", f"model {r['model']!r} at {r['budget']} was scored by more than one judge",
                                None, None, "judge"))
    ar_missing = frame.filter(pl.col("is_ar") & pl.col("source_operation").is_null())
    if ar_missing.height:
        problems.append(Problem("ar_source_unknown", "warning",
                                "refusal items whose source operation is unknown (no item table with paired_question_id); "
                                "they are left out of by-source-operation tables only",
                                None, None, "paired_question_id", ar_missing.height))
    cover = frame.group_by("model", "budget").agg(pl.len().alias("n"))
    full = frame.group_by("budget").agg(pl.col("item_id").n_unique().alias("n_items"))
    short = cover.join(full, on="budget").filter(pl.col("n") < pl.col("n_items"))
    for r in short.sort("model", "budget").iter_rows(named=True):
        problems.append(Problem("incomplete_run", "warning",
                                f"model {r['model']!r} has {r['n']} of the {r['n_items']} items seen at {r['budget']}",
                                None, None, "item_id", r["n_items"] - r["n"]))


def load_release(path, *, strict: bool = True, rules: ScoringRules | None = None, cache: bool = False,
                 bulk: bool = True) -> Release:
    """Load a release directory into a :class:`Release`.

    Parameters
    ----------
    path : str or Path
        The release directory (see ``data/README.md``).
    strict : bool
        Raise :class:`VoxMemDataError` listing every error (default).  With ``False``,
        lines that broke a rule are left out and reported in ``Release.problems``.
    rules : ScoringRules
        Scoring convention and provider-rejection rule (paper's by default).
    cache : bool
        Reuse / keep a parsed copy in the cache folder (:mod:`voxmem_analysis.io.cache`); off
        by default.  The command line passes ``True`` unless ``--no-cache`` is given.
    bulk : bool
        Columnar reader (default) or the line-by-line reader; both give the same release.
    """
    root = Path(path)
    rules = rules or ScoringRules()
    if not root.is_dir():
        raise VoxMemDataError([Problem("no_release", "error", f"release directory {str(root)!r} does not exist")])
    key = cache_key(root, rules) if cache else None
    if key is not None:
        release = _cache.read_release(key, root, rules)
        if release is not None:
            if strict and release.errors():
                raise VoxMemDataError(release.problems, f"{_n_errors(release)} error(s) in release {str(root)!r}")
            return release
    release = _read_release(root, rules, bulk)
    if key is not None:
        _cache.write_release(key, release)
    if strict and release.errors():
        raise VoxMemDataError(release.problems, f"{_n_errors(release)} error(s) in release {str(root)!r}")
    return release


def cache_key(root: Path, rules: ScoringRules) -> str:
    """The parsed-release cache key of the release below *root* read under *rules*.

    Strict and lenient loads read the same Release (strictness only decides whether to raise after
    reading), so one entry serves both.  The Release's fields (names and types) and every scoring
    rule are part of the key: an entry written by code with another layout is never read.
    """
    from voxmem_analysis import __version__

    layout = tuple((f.name, str(f.type)) for f in fields(Release))
    return _cache.release_key(root, (__version__, layout, tuple((f.name, getattr(rules, f.name)) for f in fields(rules))))


def _empty_part(root: Path, sub: str) -> list[Problem]:
    """Why an optional part (``judge2/``, ``ablation/``) that exists gave no prediction file: folders
    that cannot be read (error), links not followed, files that are not ``*.jsonl[.gz]`` (warnings)."""
    _, unread, problems = _listing(root, sub)
    return problems + [Problem("file_not_read", "warning", "not read: only *.jsonl and *.jsonl.gz files (any letter "
                               "case) are predictions", _rel(p, root)) for p in unread]


def _n_errors(release: Release) -> int:
    """Errors found (a summary line "... and 40 more like the above" counts as the 40 it stands for)."""
    return sum(p.count for p in release.errors())


def _read_release(root: Path, rules: ScoringRules, bulk: bool) -> Release:
    problems: list[Problem] = []
    meta: dict = {}
    if (root / "release.json").exists():
        try:
            meta = json.loads(decode((root / "release.json").read_bytes()))
        except json.JSONDecodeError as exc:
            problems.append(Problem("malformed_json", "error", f"release.json is not valid JSON: {exc.msg}", "release.json", exc.lineno))
        except (UnicodeDecodeError, RecursionError, ValueError) as exc:
            problems.append(Problem("malformed_json", "error", f"release.json cannot be read: {exc}", "release.json"))
        except OSError as exc:  # a folder, no permission
            problems.append(Problem("release_json_unreadable", "error",
                                    f"release.json cannot be read: {exc.strerror or exc}", "release.json"))
        if not isinstance(meta, dict):
            problems.append(Problem("invalid_field", "error", f"release.json must hold a JSON object, got {type(meta).__name__}",
                                    "release.json"))
            meta = {}
        syn, ok = _parse_bool(meta.get("synthetic"))
        if not ok:
            problems.append(Problem("invalid_field", "error", f"synthetic must be true or false, got {meta.get('synthetic')!r}",
                                    "release.json", None, "synthetic"))
        meta["synthetic"] = bool(syn)
    items, p = read_items(root)
    problems += p
    items = _add_source_operation(items)
    if not _prediction_files(root, "predictions"):
        problems.append(Problem("no_predictions", "error", "no predictions/**/*.jsonl[.gz] files found", "predictions"))
    frame, p, stats = read_predictions(root, "predictions", items=items, bulk=bulk)
    problems += p
    if stats["files"] and not stats["rows"] and not any(q.severity == "error" for q in p):
        problems.append(Problem("no_predictions", "error", "the prediction files hold no predictions", "predictions"))
    frame = apply_scoring(frame, rules)
    _cross_checks(frame, problems)
    models, p = read_registry(root, sorted(frame["model"].unique().to_list()) if frame.height else [])
    problems += p
    judge2 = ablation = None
    if _prediction_files(root, "judge2"):
        judge2, p, s = read_predictions(root, "judge2", items=items, bulk=bulk)
        problems += p
        judge2 = apply_scoring(judge2, rules)
        stats["judge2_rows"] = s["rows"]
    else:
        problems += _empty_part(root, "judge2")
    if _prediction_files(root, "ablation"):
        ablation, p, s = read_predictions(root, "ablation", items=items, condition_from_dir=True, bulk=bulk)
        problems += p
        ablation = apply_scoring(ablation, rules)
        stats["ablation_rows"] = s["rows"]
    else:
        problems += _empty_part(root, "ablation")
    _model_identity([f for f in (frame, judge2, ablation) if f is not None], problems)
    _registry_claims(frame, models, problems)
    problems = _collapse(problems)
    _pending = Release(root, frame, models, None, None, None, meta, [], stats, rules)
    left_out = _pending.incomplete_64k_models() if frame.height else []
    if left_out:
        problems.append(Problem("incomplete_64k_run", "warning",
                                "no models.csv flags the 64K set, so it is inferred as the models with a complete "
                                "64K run; left out (some 64K items missing or provider-rejected): " + ", ".join(left_out),
                                "models.csv", None, "in_64k_set", len(left_out)))
    return Release(root, frame, models, items.drop("_items_file", "_source_operation", strict=False) if items is not None else None,
                   judge2, ablation, meta, problems, stats, rules)


_SPELLING = re.compile(r"[\s_\-]+")


def _first_seen(frames: list[pl.DataFrame]) -> pl.DataFrame:
    """``model, folder, source_file, source_line``: where each model first appears in each folder."""
    parts = [f.select("model", "source_file", "source_line") for f in frames if f.height]
    if not parts:
        return pl.DataFrame(schema={"model": pl.Utf8, "folder": pl.Utf8, "source_file": pl.Utf8, "source_line": pl.Int64})
    df = pl.concat(parts).with_columns(pl.col("source_file").str.replace(r"/[^/]*$", "").alias("folder"))
    return (df.sort("source_file", "source_line").group_by("model", "folder", maintain_order=True)
            .agg(pl.col("source_file").first(), pl.col("source_line").first()))


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.casefold()).strip("-")


def _model_folder(folder: str, names: list[str]) -> bool:
    """A folder named after one of the models it holds (``predictions/<model>/``, with the name in
    any case and punctuation: ``gemini-2-5-pro`` for ``Gemini-2.5-Pro``), below predictions/,
    judge2/ or a condition folder of ablation/.  Other folders (``predictions/8k/``) may hold
    several models."""
    depth = folder.count("/")
    if depth < (2 if folder.startswith("ablation/") else 1):
        return False
    own = _slug(folder.rsplit("/", 1)[-1])
    return any(_slug(n) == own for n in names)


def _model_identity(frames: list[pl.DataFrame], problems: list[Problem]) -> None:
    """One model identity per folder, and one spelling per model (errors naming files and lines).

    Two names that differ only in letter case, spaces, ``-`` or ``_`` (``GPT-4o`` / ``gpt 4o``)
    are one model spelled two ways: an error, never merged silently (the analyses would show two
    half models).  A folder named after a model (``predictions/<model>/``) that holds lines of
    another model name is an error too.
    """
    seen = _first_seen(frames)
    if not seen.height:
        return
    for folder, grp in seen.group_by("folder", maintain_order=True):
        if grp.height > 1 and _model_folder(folder[0], grp["model"].to_list()):
            problems.append(_names_problem(grp, "mixed_models_in_folder",
                                           f"folder {folder[0]}/ holds {grp.height} model names: {{names}}; a model "
                                           "folder holds one model (correct the `model` field or move the files)"))
    first = seen.group_by("model", maintain_order=True).agg(pl.col("source_file").first(), pl.col("source_line").first())
    first = first.with_columns(pl.col("model").map_elements(lambda m: _SPELLING.sub("-", m.strip().casefold()),
                                                            return_dtype=pl.Utf8).alias("_key"))
    for _, grp in first.group_by("_key", maintain_order=True):
        if grp.height > 1:
            problems.append(_names_problem(grp, "model_spelling",
                                           f"one model spelled {grp.height} ways: {{names}}; names differing only in "
                                           "letter case, spaces, '-' or '_' are one model: use one spelling"))


def _names_problem(grp: pl.DataFrame, code: str, template: str) -> Problem:
    """An error about the model names of *grp* (first place of each), located at its second name.

    *template* holds ``{names}``, which becomes ``'A' (first at file:line); 'B' (first at ...)``.
    """
    names = "; ".join(f"{r['model']!r} (first at {r['source_file']}:{r['source_line']})" for r in grp.iter_rows(named=True))
    second = grp.row(1, named=True)
    return Problem(code, "error", template.replace("{names}", names, 1), second["source_file"], second["source_line"], "model")


def _registry_claims(frame: pl.DataFrame, models: pl.DataFrame, problems: list[Problem]) -> None:
    """What models.csv says, checked against the predictions: a model flagged ``in_64k_set`` needs
    64K predictions (none: error; fewer than the items seen at 64K: warning), and a model listed
    there without any predictions is named (warning)."""
    if not models.height:
        return
    present = set(frame["model"].unique().to_list()) if frame.height else set()
    at64 = frame.filter(pl.col("budget") == "64K") if frame.height else frame
    n_items = at64["item_id"].n_unique() if at64.height else 0
    per = dict(at64.group_by("model").agg(pl.col("item_id").n_unique()).iter_rows()) if at64.height else {}
    for m in models.filter(pl.col("in_64k_set"))["model"].to_list():
        if m not in present:
            continue
        if not per.get(m):
            problems.append(Problem("registry_64k_missing", "error",
                                    f"models.csv flags {m!r} as in the 64K set (in_64k_set=true) but the release has no "
                                    "64K predictions for it: add them or set in_64k_set=false",
                                    "models.csv", None, "in_64k_set"))
        elif per[m] < n_items:
            problems.append(Problem("registry_64k_incomplete", "warning",
                                    f"models.csv flags {m!r} as in the 64K set but it has {per[m]} of the {n_items} items "
                                    "seen at 64K", "models.csv", None, "in_64k_set", n_items - per[m]))
    absent = [m for m in models["model"].to_list() if m not in present]
    if absent and (frame.height or len(absent) < models.height):
        problems.append(Problem("registry_model_absent", "warning",
                                f"models.csv lists {len(absent)} model(s) with no predictions in this release: "
                                + ", ".join(absent), "models.csv", None, "model", len(absent)))


def _collapse(problems: list[Problem], limit: int = 50) -> list[Problem]:
    """Keep problems as they are, but summarise codes repeated more than ``limit`` times per file."""
    by: dict[tuple, list[Problem]] = defaultdict(list)
    for p in problems:
        by[(p.code, p.severity, p.file)].append(p)
    out: list[Problem] = []
    for (code, sev, file), ps in by.items():
        if len(ps) <= limit:
            out.extend(ps)
        else:
            out.extend(ps[:limit])
            out.append(Problem(code, sev, f"... and {len(ps) - limit} more like the above", file, None, ps[0].field,
                               sum(p.count for p in ps[limit:])))
    return out
