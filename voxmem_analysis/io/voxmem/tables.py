"""The release's own tables: the item table (``items.parquet`` / ``items.csv`` / ``items.jsonl[.gz]``) and
``models.csv`` (the model registry of Table 12), each checked by its rules (problems name line and column)."""
from __future__ import annotations

import csv
import gzip
import io
import math
from pathlib import Path

import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.io.engine import files
from voxmem_analysis.io.engine.records import read_parquet
from voxmem_analysis.io.engine.rules import Rule, check, fact, first_of_key, flagged, ordered
from voxmem_analysis.io.engine.values import Values
from voxmem_analysis.textlimits import csv_field_limit, read_regular

__all__ = ["read_items", "add_source_operation", "MODEL_COLUMNS", "read_registry"]

ITEM_NAMES = ("items.parquet", "items.csv", "items.jsonl", "items.jsonl.gz")
_COUNTS = ("session_count", "evidence_session_count", "samekey_haystack_session_count", "filler_session_count",
           "topical_haystack_session_count", "history_audio_tokens")
ITEMS_UNREADABLE = fact("items_unreadable", "error", lambda r: f"cannot read item table: {r['why']}")
ITEMS_NO_ID = fact("items_missing_field", "error", lambda r: "item table has no `item_id` column", "item_id")
ITEMS_DUPLICATE = fact("items_duplicate", "error", lambda r: f"item_id repeated in item table: {r['ids']}", "item_id")
NOT_NUMBERS = fact("invalid_field", "warning", lambda r: f"{r['n']} value(s) of `{r['col']}` are not {r['what']} (first: "
                   f"{_short(r['first'])!r} on {r['where']}); read as missing", lambda r: r["col"])
NEGATIVE = fact("invalid_field", "error", lambda r: f"{r['n']} value(s) of `{r['col']}` are negative (first: "
                f"{_short(r['first'])!r} on {r['where']}): a count cannot be negative; read as missing", lambda r: r["col"])


def _short(text, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def read_items(root: Path) -> tuple[pl.DataFrame | None, list, Path | None]:
    """``(items, problems, file read)`` of the first item table present (None without one)."""
    for name in ITEM_NAMES:
        path = root / name
        if not path.exists():
            continue
        try:
            if name.endswith(".parquet"):
                df = read_parquet(path)
            elif name.endswith(".csv"):
                df = pl.read_csv(io.BytesIO(read_regular(path)), infer_schema_length=0)  # all text; typed below
            else:
                raw = read_regular(path)
                df = pl.read_ndjson(io.BytesIO(gzip.decompress(raw) if files.is_gzip_name(name) else raw),
                                    infer_schema_length=None)
        except Exception as exc:  # noqa: BLE001 - report any reader failure with the file name
            return None, [ITEMS_UNREADABLE.problem(name, why=exc)], path
        if "item_id" not in df.columns:
            return None, [ITEMS_NO_ID.problem(name)], path
        problems: list = []
        for col in (*_COUNTS, "history_duration_seconds"):
            if col in df.columns:
                df = _numeric_column(df, col, pl.Float64 if col == "history_duration_seconds" else pl.Int64, name, problems)
        dup = df.filter(pl.col("item_id").is_duplicated())
        if dup.height:
            problems.append(ITEMS_DUPLICATE.problem(name, None, dup.height, ids=sorted(set(dup["item_id"].to_list()))[:5]))
        return df.with_columns(pl.lit(name).alias("_items_file")), problems, path
    return None, [], None


def _numeric_column(df: pl.DataFrame, col: str, dtype, name: str, problems: list) -> pl.DataFrame:
    """``col`` as ``dtype``; non-numbers, fractions of counts and negatives read as missing, each kind said
    once naming its first line."""
    before = df[col]
    text = before.cast(pl.Utf8).str.strip_chars()
    after = text.cast(dtype, strict=False)
    if dtype == pl.Float64:
        after = pl.select(pl.when(after.is_finite()).then(after).otherwise(None)).to_series()
    bad = before.is_not_null() & (text != "") & after.is_null()
    finite = text.cast(pl.Float64, strict=False).is_finite().fill_null(False)
    negative = (after < 0).fill_null(False) if col in _COUNTS else pl.Series([False] * df.height)
    for mask, rule, what in ((bad & ~finite, NOT_NUMBERS, "finite numbers"), (bad & finite, NOT_NUMBERS, "whole numbers"),
                             (negative, NEGATIVE, "")):
        lost = int(mask.sum())
        if not lost:
            continue
        first = int(mask.arg_true()[0])
        line = first + (2 if name.endswith(".csv") else 1) if not name.endswith(".parquet") else None
        problems.append(rule.problem(name, line, lost, n=lost, col=col, what=what, first=text[first],
                                     where=f"line {line}" if line else f"row {first + 1}"))
    return df.with_columns(pl.when(negative).then(None).otherwise(after).alias(col))


def add_source_operation(items: pl.DataFrame | None) -> pl.DataFrame | None:
    """The item table with ``_source_operation``: the operation of the question a refusal item derives from."""
    if items is None:
        return None
    if "paired_question_id" not in items.columns or "memory_operation" not in items.columns:
        return items.with_columns(pl.lit(None, dtype=pl.Utf8).alias("_source_operation"))
    qop = (items.select("question_id", "memory_operation").unique(subset="question_id", keep="first")
           .rename({"question_id": "paired_question_id", "memory_operation": "_source_operation"}))
    out = items.with_columns(pl.col("paired_question_id").cast(pl.Utf8)).join(qop, on="paired_question_id", how="left")
    return out.with_columns(pl.col("_source_operation").map_elements(tx.normalize_operation, return_dtype=pl.Utf8))


MODEL_COLUMNS = ["model", "family", "access", "architecture", "llm_params_b", "total_params_b", "in_64k_set", "order"]
_ACCESS = ("proprietary", "open_weight")
_ARCH = ("audio_specialist", "omni_modal", "api")
_BOOL_TEXT = ("true", "false", "1", "0", "yes", "no", "")
_NUMBERS = ("llm_params_b", "total_params_b", "order")
_SIZES = ("llm_params_b", "total_params_b")
_M = "models.csv"
UNREADABLE = fact("models_unreadable", "error", lambda r: f"cannot read models.csv: {r['why']}")
LONG_ROW = fact("models_unreadable", "error", lambda r: f"the line has {r['n']} fields but the header has {r['h']}: a "
                "comma too many or a value to quote")
NO_MODEL_COLUMN = fact("models_missing_field", "error", lambda r: "models.csv has no `model` column", "model")
NOT_LISTED = fact("model_not_in_registry", "warning",
                  lambda r: f"models not in models.csv (no group information): {', '.join(r['models'])}")


def _number(text: str | None) -> float | None:
    """A finite number of models.csv (``nan``, ``inf``, ``1e999`` are not), else None."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _stripped(c: str) -> pl.Expr:
    return pl.col(c).fill_null("").str.strip_chars()


def _label_rule(col: str, allowed) -> Rule:
    return Rule("unknown_label", "error", col, 1, lambda v: pl.lit(col in v.cols) & ~_stripped(col).is_in([*allowed, ""]),
                lambda r: f"{col} {r[col].strip()!r} is not one of {', '.join(sorted(allowed))}")


def _number_rules(col: str) -> list[Rule]:
    value = pl.col(f"n.{col}")
    return [Rule("invalid_field", "warning", col, 1, lambda v: (_stripped(col) != "") & value.is_null(),
                 lambda r: f"{col} {_short(r[col].strip(), 80)!r} is not a finite number; read as missing"),
            *([Rule("invalid_field", "error", col, 1, lambda v: value < 0,
                    lambda r: f"{col} {_short(r[col].strip(), 80)!r} is negative: a size cannot be; read as missing")]
              if col in _SIZES else [])]


#: Each rule of a models.csv row, once.
REGISTRY_RULES: tuple[Rule, ...] = (
    Rule("missing_field", "error", "model", 1, lambda v: _stripped("model") == "", lambda r: "empty model name"),
    Rule("models_duplicate", "error", "model", 1, lambda v: (_stripped("model") != "") & pl.col("_copy"),
         lambda r: f"model {r['model']!r} listed twice (first on line {r['_l0']})"),
    _label_rule("access", _ACCESS), _label_rule("architecture", _ARCH),
    Rule("invalid_field", "error", "in_64k_set", 1, lambda v: ~_stripped("in_64k_set").str.to_lowercase().is_in(_BOOL_TEXT),
         lambda r: f"in_64k_set must be true or false, got {r['in_64k_set'].strip().lower()!r}"),
    *[rule for col in _NUMBERS for rule in _number_rules(col)],
)


def _registry_rows(path: Path) -> tuple[list[str], list[tuple[int, dict]], list]:
    """Header and rows of models.csv (blank lines skipped; a row longer than the header is an error)."""
    try:
        text = read_regular(path).decode("utf-8-sig")
    except (UnicodeDecodeError, OSError) as exc:
        return [], [], [UNREADABLE.problem(_M, why=exc)]
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # strict: an unclosed quote is an error
    try:
        with csv_field_limit():
            records = [(rec, reader.line_num) for rec in reader if any(rec)]   # blank lines skipped
    except csv.Error as exc:
        return [], [], [UNREADABLE.problem(_M, reader.line_num, why=exc)]
    if not records:
        return [], [], [UNREADABLE.problem(_M, why="it has no header line")]
    header = _unique_names(records[0][0])
    rows, problems = [], []
    for rec, end in records[1:]:
        line = end - sum(f.count("\n") for f in rec)  # where the row starts
        if len(rec) > len(header):
            problems.append(LONG_ROW.problem(_M, line, n=len(rec), h=len(header)))
            continue
        rows.append((line, dict(zip(header, rec + [""] * (len(header) - len(rec))))))
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


def read_registry(root: Path, present: list[str]) -> tuple[pl.DataFrame, list]:
    """``models.csv``: text columns, sizes as Float64 (missing when not a number or negative), ``in_64k_set``,
    then the others as text; one row per model (the first), sorted by ``order``, ``model``."""
    path = root / _M
    problems: list = []
    header, rows = list(MODEL_COLUMNS), []
    if path.exists():
        header, rows, problems = _registry_rows(path)
        if not problems and "model" not in header:
            problems.append(NO_MODEL_COLUMN.problem(_M))
        if (problems and not rows) or "model" not in header:
            header, rows = list(MODEL_COLUMNS), []
    cols = list(dict.fromkeys(MODEL_COLUMNS + header))
    raw = pl.DataFrame({"_line": [ln for ln, _ in rows], **{c: [r.get(c, "") for _, r in rows] for c in cols}},
                       schema={"_line": pl.Int64, **{c: pl.Utf8 for c in cols}})
    raw = first_of_key(raw.with_columns([pl.col(c).map_elements(_number, return_dtype=pl.Float64, skip_nulls=True)
                                         .alias(f"n.{c}") for c in _NUMBERS]), ["model"], {"_l0": "_line"})
    checked = check(raw.with_columns(pl.lit(_M).alias("_file")), REGISTRY_RULES, Values(header))
    problems += ordered(flagged(checked, REGISTRY_RULES, lambda r, i, n: (r["_line"], i)))
    first = checked.filter(~pl.col("_copy"))
    missing = [m for m in present if m not in set(first["model"].to_list())]
    if missing and path.exists():
        problems.append(NOT_LISTED.problem(_M, None, len(missing), models=missing))
    first = pl.concat([first, pl.DataFrame({"model": missing}, schema={"model": pl.Utf8})], how="diagonal")
    out = first.select(
        *[(pl.when(pl.col(f"n.{c}") >= 0).then(pl.col(f"n.{c}")) if c in _SIZES else pl.col(f"n.{c}")).alias(c)
          if c in _NUMBERS else
          _stripped(c).str.to_lowercase().is_in(["true", "1", "yes"]).alias(c) if c == "in_64k_set" else
          pl.col(c).fill_null("").alias(c) for c in cols])
    return out.sort(["order", "model"], nulls_last=True, maintain_order=True), problems
