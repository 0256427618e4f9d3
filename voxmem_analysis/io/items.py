"""Read the item table of a release (``items.parquet`` / ``items.csv`` / ``items.jsonl[.gz]``)."""
from __future__ import annotations

import io
from pathlib import Path

import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import Problem
from voxmem_analysis.io import files as rf
from voxmem_analysis.textlimits import read_regular

__all__ = ["read_items", "add_source_operation"]


def _open_text(path: Path) -> bytes:
    import gzip

    raw = read_regular(path)
    return gzip.decompress(raw) if rf.is_gzip_name(path.name) else raw


def read_items(root: Path) -> tuple[pl.DataFrame | None, list[Problem]]:
    """Read ``items.parquet`` / ``items.csv`` / ``items.jsonl`` if present."""
    problems: list[Problem] = []
    for name in ("items.parquet", "items.csv", "items.jsonl", "items.jsonl.gz"):
        path = root / name
        if not path.exists():
            continue
        try:
            if name.endswith(".parquet"):
                df = pl.read_parquet(io.BytesIO(read_regular(path)))
            elif name.endswith(".csv"):
                df = pl.read_csv(io.BytesIO(read_regular(path)), infer_schema_length=0)  # all text; typed below
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
            if col in df.columns:
                df = _numeric_column(df, col, dtype, name, problems)
        dup = df.filter(pl.col("item_id").is_duplicated())
        if dup.height:
            problems.append(Problem("items_duplicate", "error",
                                    f"item_id repeated in item table: {sorted(set(dup['item_id'].to_list()))[:5]}",
                                    name, None, "item_id", dup.height))
        return df.with_columns(pl.lit(name).alias("_items_file")), problems
    return None, problems


def _numeric_column(df: pl.DataFrame, col: str, dtype, name: str, problems: list[Problem]) -> pl.DataFrame:
    """``col`` as ``dtype``; values that are not finite numbers (text, ``NaN``, ``Infinity``,
    ``1e999``, a count past Int64) read as missing, counted in one warning naming the first line."""
    before = df[col]
    text = before.cast(pl.Utf8).str.strip_chars()
    after = text.cast(dtype, strict=False)
    if dtype == pl.Float64:
        after = pl.select(pl.when(after.is_finite()).then(after).otherwise(None)).to_series()
    bad = before.is_not_null() & (text != "") & after.is_null()
    lost = int(bad.sum())
    if lost:
        first = int(bad.arg_true()[0])
        line = first + (2 if name.endswith(".csv") else 1) if not name.endswith(".parquet") else None
        where = f"line {line}" if line else f"row {first + 1}"
        problems.append(Problem("invalid_field", "warning",
                                f"{lost} value(s) of `{col}` are not finite numbers (first: {_short(text[first])!r} "
                                f"on {where}); read as missing", name, line, col, lost))
    return df.with_columns(after.alias(col))


def _short(text, limit: int = 60) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


def add_source_operation(items: pl.DataFrame | None) -> pl.DataFrame | None:
    if items is None:
        return None
    if "paired_question_id" not in items.columns or "memory_operation" not in items.columns:
        return items.with_columns(pl.lit(None, dtype=pl.Utf8).alias("_source_operation"))
    qop = (items.select("question_id", "memory_operation").unique(subset="question_id", keep="first")
           .rename({"question_id": "paired_question_id", "memory_operation": "_source_operation"}))
    out = items.with_columns(pl.col("paired_question_id").cast(pl.Utf8)).join(qop, on="paired_question_id", how="left")
    return out.with_columns(pl.col("_source_operation").map_elements(tx.normalize_operation, return_dtype=pl.Utf8))
