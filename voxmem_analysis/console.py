"""Tables and findings on the command line: CSV and Markdown for scripts (every column, full precision), an
aligned table for a terminal (numbers rounded to what their interval supports, display names, the key columns
unless asked for all), and what loading found, on standard error."""
from __future__ import annotations

import math
import sys
from collections import Counter

import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import lost_summary
from voxmem_analysis.output import markdown_cell, text_number

__all__ = ["table_format", "csv_text", "markdown_text", "terminal_text", "emit", "report_problems", "progress",
           "SHOWN_PROBLEMS"]

#: Findings printed one by one before the rest are summarised by code.
SHOWN_PROBLEMS = 20

#: Codes shown by their display names in a terminal table.
_LABELS = {"evidence_type": tx.EVIDENCE_LABELS, "operation": tx.OPERATION_LABELS, "subtype": tx.SUBTYPE_LABELS,
           "source_operation": tx.OPERATION_LABELS}
_WIDEST = 48


def table_format(fmt: str | None, stream=None) -> str:
    """``fmt`` if given, else ``terminal`` when ``stream`` (standard output) is a terminal, else ``csv``."""
    if fmt:
        return fmt
    stream = stream or sys.stdout
    return "terminal" if getattr(stream, "isatty", lambda: False)() else "csv"


def csv_text(df: pd.DataFrame) -> str:
    """Every column at full precision (``%.6g``), missing values empty: what scripts read."""
    return df.to_csv(None, index=False, float_format="%.6g", lineterminator="\n")


def markdown_text(df: pd.DataFrame, title: str | None = None, header: str | None = None) -> str:
    """A Markdown table (numbers ``.4g``), every cell escaped (:func:`~voxmem_analysis.output.markdown_cell`);
    ``title`` and the ``header`` line (options in force) above it."""
    clean = df.astype(object).where(df.notna(), None)
    clean = clean.map(lambda v: markdown_cell(v) if isinstance(v, str) else v)
    clean.columns = [markdown_cell(c) for c in clean.columns]
    lead = "".join(f"{t}\n\n" for t in (title, header) if t)
    return lead + clean.to_markdown(index=False, floatfmt=".4g", missingval="") + "\n"


def _decimals(half_width: float) -> int:
    """Decimals an interval of this half-width supports: one finer than its leading digit (4.3 -> 1), 0 to 4."""
    if not half_width or not math.isfinite(half_width) or half_width <= 0:
        return 1
    return max(0, min(4, 1 - math.floor(math.log10(half_width))))


def _number(v, decimals: int | None = None) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NA:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    v = float(v)
    if decimals is None:
        if v == round(v) and abs(v) < 1e15:
            return f"{v:.0f}"
        decimals = 0 if abs(v) >= 100 else 1 if abs(v) >= 10 else 2 if abs(v) >= 1 else 3
    return text_number(v, decimals)


def _text(v, column: str) -> str:
    if v is None or (not isinstance(v, str) and pd.isna(v)):
        return ""
    text = _LABELS.get(column, {}).get(v, str(v))
    text = " ".join(text.split())
    return text if len(text) <= _WIDEST else text[: _WIDEST - 1] + "\u2026"


def _cells(df: pd.DataFrame) -> dict[str, list[str]]:
    """The columns of ``df`` as text: an estimate with its ``_ci_low``/``_ci_high`` as one column ``x [low, high]``
    rounded to what the interval supports; p-values with 3 decimals (or ``<0.001``); display names."""
    out: dict[str, list[str]] = {}
    cols = list(df.columns)
    for c in cols:
        if c.endswith(("_ci_low", "_ci_high")) and c.rsplit("_ci_", 1)[0] in cols:
            continue
        col = df[c]
        low, high = f"{c}_ci_low", f"{c}_ci_high"
        if low in cols and high in cols and pd.api.types.is_numeric_dtype(col):
            half = ((df[high] - df[low]) / 2).astype(float)
            d = _decimals(float(half.median())) if half.notna().any() else 1
            out[f"{c} [95% CI]"] = [f"{_number(v, d)} [{_number(lo, d)}, {_number(hi, d)}]" if not pd.isna(v) else ""
                                    for v, lo, hi in zip(col, df[low], df[high])]
        elif c.startswith("p_") or c in ("p", "p_value"):
            out[c] = ["" if pd.isna(v) else "<0.001" if v < 0.001 else f"{v:.3f}" for v in col]
        elif pd.api.types.is_bool_dtype(col) or (pd.api.types.is_numeric_dtype(col)):
            out[c] = [_number(v) for v in col]
        else:
            out[c] = [_text(v, c) for v in col]
    return out


def terminal_text(df: pd.DataFrame, title: str | None = None, header: str | None = None, *,
                  keys=None, rename=None, all_columns: bool = False) -> str:
    """``df`` as an aligned text table for a terminal: ``keys`` (the columns a reader needs, in order) unless
    ``all_columns``, headed by their ``rename``d names; numbers right-aligned, text left-aligned."""
    shown = df
    if keys and not all_columns:
        wanted = [k for k in keys if k in df.columns]
        wanted += [f"{k}{e}" for k in wanted for e in ("_ci_low", "_ci_high") if f"{k}{e}" in df.columns]
        shown = df[list(dict.fromkeys(wanted))]
    cells = _cells(shown.reset_index(drop=True))
    numeric = {c: not (c in shown.columns and not pd.api.types.is_numeric_dtype(shown[c])) for c in cells}
    for old, new in (rename or {}).items():
        for c in [c for c in cells if c == old or c.startswith(old + " [")]:
            cells = {(new + c[len(old):] if k == c else k): v for k, v in cells.items()}
            numeric[new + c[len(old):]] = numeric[c]
    widths = {c: max([len(c), *map(len, v)]) for c, v in cells.items()}
    line = lambda row: "  ".join((row[c].rjust(widths[c]) if numeric[c] else row[c].ljust(widths[c]))  # noqa: E731
                                 for c in cells).rstrip()
    rows = [line({c: c for c in cells}), "  ".join("-" * widths[c] for c in cells)]
    rows += [line({c: v[i] for c, v in cells.items()}) for i in range(len(shown))]
    lead = "".join(f"{t}\n" for t in (title, header) if t)
    more = "" if all_columns or shown.shape[1] == df.shape[1] else (
        f"({df.shape[1] - shown.shape[1]} more column(s): --all-columns, or --format csv for every column at full "
        "precision)\n")
    return lead + "\n".join(rows) + "\n" + more


def emit(df: pd.DataFrame, fmt: str | None, title: str | None = None, *, header: str | None = None, keys=None,
         rename=None, all_columns: bool = False, stream=None) -> None:
    """Print ``df`` as ``fmt`` (``csv``, ``md``, ``terminal``; None: :func:`table_format`); with CSV the title
    and ``header`` go to standard error as ``# ...`` lines, so the output reads as CSV."""
    stream = stream or sys.stdout
    fmt = table_format(fmt, stream)
    if fmt == "csv":
        for line in (title, header):
            if line:
                print(f"# {line}", file=sys.stderr)
        stream.write(csv_text(df))
    elif fmt == "md":
        stream.write(markdown_text(df, title, header))
    else:
        stream.write(terminal_text(df, title, header, keys=keys, rename=rename, all_columns=all_columns))


def report_problems(problems, *, source: str, lenient: bool, left_out: int | None = None, hint: str | None = None,
                    limit: int | None = SHOWN_PROBLEMS, stream=None) -> None:
    """What loading found, on standard error: totals by code (lenient: and what was left out), the findings
    (errors first, at most ``limit``; None: all), where to see the rest; nothing when nothing was found."""
    stream = stream or sys.stderr
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    if not errors and not warnings:
        return
    counts = Counter()
    for p in errors + warnings:
        counts[p.code] += p.count
    head = (f"# {sum(p.count for p in errors)} error(s), {sum(p.count for p in warnings)} warning(s) in {source} ("
            + ", ".join(f"{c}={n}" for c, n in sorted(counts.items())) + ")")
    if lenient and errors:
        head += "; " + lost_summary(left_out, errors)
    print(head, file=stream)
    shown = (errors + warnings)[:limit] if limit is not None else errors + warnings
    for p in shown:
        print(f"#   {p}", file=stream)
    rest = len(errors) + len(warnings) - len(shown)
    if rest > 0:
        print(f"#   ... {rest} more finding(s)" + (f": {hint}" if hint else ""), file=stream)


def progress(what: str, stream=None, delay: float = 2.0):
    """A ``progress(done, total)`` callable: a bar on a terminal's standard error after ``delay`` seconds."""
    from tqdm import tqdm   # start-up: 40 ms, and only work that takes seconds needs it

    stream = stream or sys.stderr
    bar = tqdm(total=0, desc=what, delay=delay, file=stream, leave=False,
               disable=not getattr(stream, "isatty", lambda: False)())

    def update(done: int, total: int) -> None:
        bar.total, bar.n = total, done
        bar.refresh()
        if total and done >= total:
            bar.close()
    return update
