"""Read ``models.csv``, the model registry of a release (Table 12): one row per model with its
group columns, checked row by row (problems name the line and the column)."""
from __future__ import annotations

import csv
import io
import math
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from voxmem_analysis.errors import Problem

if TYPE_CHECKING:  # pandas only on demand
    import pandas as pd

__all__ = ["MODEL_COLUMNS", "read_registry", "read_models", "registry_pandas"]

MODEL_COLUMNS = ["model", "family", "access", "architecture", "llm_params_b", "total_params_b", "in_64k_set", "order"]
_MODEL_COLUMNS = MODEL_COLUMNS


_ACCESS = {"proprietary", "open_weight", ""}
_ARCH = {"audio_specialist", "omni_modal", "api", ""}
_BOOL_TEXT = {"true", "false", "1", "0", "yes", "no", ""}
_REGISTRY_NUMBERS = ("llm_params_b", "total_params_b", "order")


def _registry_number(text: str) -> float | None:
    """A finite number of models.csv (``nan``, ``inf``, ``1e999`` are not: they would hide a typo
    or break the ordering), else None."""
    try:
        v = float(text)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


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
                out.append(Problem("invalid_field", "warning", f"{col} {_short(v)!r} is not a finite number; read "
                                   "as missing", "models.csv", i, col))
    return out


def _read_registry_rows(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]], list[Problem]]:
    """Header and rows of models.csv (blank lines skipped; a row longer than the header is an error)."""
    from voxmem_analysis.textlimits import csv_field_limit, read_regular

    try:
        text = read_regular(path).decode("utf-8-sig")
    except (UnicodeDecodeError, OSError) as exc:
        return [], [], [Problem("models_unreadable", "error", f"cannot read models.csv: {exc}", "models.csv")]
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # strict: an unclosed quote is an error
    header: list[str] | None = None
    rows: list[tuple[int, dict[str, str]]] = []
    problems: list[Problem] = []
    try:
        with csv_field_limit():
            records = [(rec, reader.line_num) for rec in reader if any(rec)]   # blank lines skipped
    except csv.Error as exc:
        return [], [], [Problem("models_unreadable", "error", f"cannot read models.csv: {exc}", "models.csv",
                                reader.line_num)]
    for rec, end in records:
        if header is None:
            header = _unique_names(rec)
            continue
        line = end - sum(f.count("\n") for f in rec)  # where the row starts
        if len(rec) > len(header):
            problems.append(Problem("models_unreadable", "error", f"the line has {len(rec)} fields but the header "
                                    f"has {len(header)}: a comma too many or a value to quote", "models.csv", line, header[-1] if header else None))
            continue
        rows.append((line, dict(zip(header, rec + [""] * (len(header) - len(rec))))))
    if header is None:
        return [], [], [Problem("models_unreadable", "error", "cannot read models.csv: it has no header line",
                                "models.csv")]
    return header, rows, problems


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit] + f"... ({len(text):,} characters)"


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
