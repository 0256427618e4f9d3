"""Tables, figures and findings as files, each written whole or not at all, with deterministic bytes:
:func:`save_table` writes ``tables/NAME.{csv,md,tex}`` and every number in long form (``NAME.long.csv``, what
``reproduction.csv``, the report and ``supplement`` read); :func:`save_figure` writes ``figures/NAME.{png,pdf}``
(a SYNTHETIC DATA label on synthetic data) and the numbers drawn as ``NAME.csv``.  In a Jupyter kernel both also
show what they wrote (``show=`` forces either way)."""
from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
import struct
import sys
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pandas is imported by the functions that use it: reading a caption needs none
    import pandas as pd

__all__ = ["save_table", "save_figure", "table_to_latex", "table_to_markdown", "markdown_cell", "latex_number",
           "latex_cells", "cell_formats", "is_missing", "readable_header", "interval_bound", "is_count_label",
           "is_p_label", "save_finding", "read_findings", "text_number", "latex_caption", "scientific",
           "SYNTHETIC_LABEL", "STAMP_GID", "stamp_synthetic", "clear_stamp", "drawn_texts", "prepare_figure",
           "is_synthetic", "in_kernel", "display_frame", "figure_caption", "laid_out", "long_rows", "write_long",
           "read_long", "LONG_COLUMNS"]

from voxmem_analysis.textlimits import csv_field_limit
from voxmem_analysis.writing import atomic_write
from voxmem_analysis.stamp import (SYNTHETIC_LABEL, STAMP_GID, clear_stamp, drawn_texts, is_synthetic, prepare_figure,
                                   stamp_synthetic)
_PNG_META = {"Software": None}
_PDF_META = {"Creator": None, "Producer": None, "CreationDate": None, "ModDate": None}


def column_digits(df: pd.DataFrame, digits: int = 1) -> list[int]:
    """Decimals per column: 0 for counts (integers not all within [-1.5, 1.5], or all zero), 3 when every
    value lies within [-1.5, 1.5] (ratios, kappa, p-values), ``digits`` otherwise."""
    import pandas as pd

    out = []
    for c in df.columns:
        col = pd.to_numeric(df[c], errors="coerce")
        vals = col.dropna()
        if vals.empty or col.isna().sum() > df[c].isna().sum():   # text column
            out.append(digits)
        elif (vals == vals.round()).all() and (pd.api.types.is_integer_dtype(df[c]) or not (vals.abs() <= 1.5).all()
                                               or (vals == 0).all()):
            out.append(0)
        elif (vals.abs() <= 1.5).all():
            out.append(3)
        else:
            out.append(digits)
    return out


def text_number(value, decimals: int = 1, kind: str = "number") -> str:
    """One number as the Markdown tables print it (:func:`cell_formats`): a count as an integer, a p-value
    below :data:`P_SCIENTIFIC_BELOW` as ``7.3×10⁻²⁰``, else ``decimals`` decimals; text as it is."""
    if is_missing(value):
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if abs(value) >= HUGE:
        inf = isinstance(value, float) and math.isinf(value)
        return ("-inf" if value < 0 else "inf") if inf else _mantissa(value).replace("e", "\u00d710^")
    v = float(value)
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    if kind == "count":
        return f"{round(v):d}"
    if kind == "p" and 0 < v < P_SCIENTIFIC_BELOW:
        mant, exp = scientific(v)
        return f"{mant}\u00d710" + str(exp).translate(_SUPERSCRIPTS)
    return f"{v:.{max(decimals, 3) if kind == 'p' else decimals}f}"


#: Numbers of this size or more are written with a power of ten (``1e308`` -> ``1×10^308``), never 309 digits.
HUGE = 1e15


def scientific(v: float) -> tuple[str, int]:
    """``7.3e-20`` -> ``("7.3", -20)``: two significant digits (``7e-20`` -> ``("7", -20)``)."""
    mant, exp = f"{v:.1e}".split("e")
    return (mant[:-2] if mant.endswith(".0") else mant), int(exp)


def _mantissa(v) -> str:
    """``1.2e308`` -> ``"1.2e308"`` (two significant digits, no ``+``); an integer of any size too."""
    if isinstance(v, int):
        digits = str(abs(v))
        return f"{'-' if v < 0 else ''}{digits[0]}.{digits[1]}e{len(digits) - 1}".replace(".0e", "e")
    return "{}e{}".format(*scientific(v))


_SUPERSCRIPTS = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def markdown_cell(text) -> str:
    """A Markdown table cell: ``|`` escaped, line breaks as ``<br>``."""
    return str(text).replace("|", "\\|").replace("\r\n", "<br>").replace("\n", "<br>").replace("\r", "<br>")


_md = markdown_cell


def table_to_markdown(df: pd.DataFrame, digits: int = 1, caption: str | None = None, *,
                      decimals: dict | None = None) -> str:
    """A Markdown (pipe) table, numbers as :func:`cell_formats` plans them (``decimals``: per column)."""
    idx = df.index.name or ""
    head = [_md(idx)] + [_md(c) for c in df.columns]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(["---"] + ["---:"] * len(df.columns)) + " |"]
    for r, cells in zip(df.index, cell_formats(df, digits, decimals)):
        lines.append("| " + " | ".join([_md(r)] + [_md(text_number(v, d, k)) for v, k, d in cells]) + " |")
    out = "\n".join(lines) + "\n"
    return (f"{caption}\n\n" + out) if caption else out


#: LaTeX's special characters escaped, and those pdfLaTeX's input encoding does not know as commands.
_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "$": r"\$", "{": r"\{", "}": r"\}",
        "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "|": r"\textbar{}", "<": r"$<$", ">": r"$>$",
        "\u0394": r"$\Delta$", "\u03ba": r"$\kappa$", "\u03c1": r"$\rho$", "\u03b1": r"$\alpha$", "\u2014": "---",
        "\u2013": "--", "\u2192": r"$\rightarrow$", "\u2190": r"$\leftarrow$", "\u2265": r"$\geq$", "\u2264": r"$\leq$",
        "\u00b1": r"$\pm$", "\u00d7": r"$\times$", "\u2713": r"$\checkmark$", "\u2212": "$-$", "\u2026": r"\dots{}",
        "\u00b7": r"$\cdot$"}


def _tex_escape(s: str) -> str:
    """``s`` as LaTeX text (one character at a time: an escape is never escaped again), line breaks as spaces."""
    s = " ".join(s.splitlines()) if ("\n" in s or "\r" in s) else s
    return "".join(_TEX.get(ch, ch) for ch in s)


# ----------------------------------------------------------------------------- LaTeX numbers
#: p-values below this are printed in scientific notation (``$7.3\times10^{-20}$``), never as 0.000.
P_SCIENTIFIC_BELOW = 0.001
_COUNT_LABELS = {"n", "N", "items", "Items", "AR items", "questions", "Questions", "tasks", "Tasks", "Models",
                 "models", "Cells", "cells", "Total", "total", "errors", "Errors", "observations", "clusters",
                 "count", "Count", "predictions", "scored", "correct"}
_BOUND = re.compile(r"^(?P<base>.*?)(?:[ _,]+(?:\d+(?:\.\d+)?\\?% )?(?:CI[ _]|ci_)?)(?P<end>lo|hi|low|high)"
                    r"(?P<rest>(?: .*)?)$")


_P_HEADERS = {"p": "p", "p_value": "p", "p_holm": "p (Holm)", "p_cochran": "p (Cochran's Q)",
              "p_mcnemar": "p (McNemar)"}


def is_count_label(label) -> bool:
    """A row or column label that holds counts: ``n``, ``items``, ``Total``, ``Speaker Identity n``, ``8K|n``."""
    text = str(label)
    last = text.rsplit("|", 1)[-1]
    return (text in _COUNT_LABELS or last in _COUNT_LABELS or text.endswith((" n", " items")) or text.startswith("n_")
            or text.endswith("_n") or text.startswith(("n (", "n ")))


def is_p_label(label) -> bool:
    """A label that names a p-value: ``p``, ``p_value``, ``p (McNemar)``, ``McNemar p``, ``Spearman p``, ``p_holm``."""
    t = str(label).strip().lower()
    return (t in ("p", "p-value", "p value", "p_value") or t.startswith(("p (", "p_", "p ")) or t.endswith((" p", "_p")))


def interval_bound(label) -> tuple[str, str] | None:
    """``(estimate label, "low" | "high")`` when ``label`` names an interval bound (``drop_lo``, ``APR hi``,
    ``κ CI low``, ``accuracy_ci_low``; not ``drop_lo mc_se``), else None."""
    m = _BOUND.match(str(label))
    if not m or not m.group("base") or m.group("rest"):
        return None
    return m.group("base"), "low" if m.group("end") in ("lo", "low") else "high"


_GREEK_LETTERS = {"rho": "\u03c1", "kappa": "\u03ba"}
_GREEK = re.compile(r"(?<![A-Za-z])(rho|kappa)(?![A-Za-z])")


def readable_header(label) -> str:
    """A label as a table header: ``drop_lo`` -> ``Drop, CI low``, ``p_value`` -> ``p``, ``n`` -> ``n``;
    labels written for print (``Full Audio``) unchanged; a generic index name (``row``, ``index``) -> empty."""
    text = str(label if label is not None else "")
    if text.lower() in ("row", "index", "level_0"):
        return ""
    bound = interval_bound(text)
    if bound and "CI" not in text:
        return f"{readable_header(bound[0])}, CI {bound[1]}"
    if is_p_label(text) and re.fullmatch(r"[a-z_]+", text):
        return _P_HEADERS.get(text, "p (" + text[2:].replace("_", " ") + ")")
    for tail, words in ((" mc_se", ", MC SE"), (" deff", ", design effect")):
        if text.endswith(tail):
            return readable_header(text[: -len(tail)]) + words
    text = _GREEK.sub(lambda m: _GREEK_LETTERS[m.group(0)], text)
    if re.fullmatch(r"n_[a-z0-9_]+", text):
        return "n " + text[2:].replace("_", " ")
    if re.fullmatch(r"[a-z][a-z0-9_]*", text) and text not in _COUNT_LABELS:
        words = text.replace("_", " ")
        return words[0].upper() + words[1:]
    return text


def is_missing(value) -> bool:
    """None, NaN, ``pd.NA`` or ``NaT`` (an empty cell)."""
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    if isinstance(value, (str, int, bool)):
        return False
    import pandas as pd

    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def latex_number(value, decimals: int = 1, *, kind: str = "number") -> str:
    """One number as a LaTeX table prints it: ``kind="count"`` an integer (``11,978`` from 10,000 on), ``"p"`` a
    p-value (below :data:`P_SCIENTIFIC_BELOW` as ``$7.3\\times10^{-20}$``, else at least 3 decimals),
    ``"number"`` ``decimals`` decimals; a typographic minus (``$-$4.0``); missing values empty."""
    if is_missing(value):
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return _tex_escape(str(value))
    if abs(value) >= HUGE:
        if isinstance(value, float) and math.isinf(value):
            return ("$-$" if value < 0 else "") + r"$\infty$"
        mant, exp = _mantissa(value).split("e")
        return f"${mant}\\times10^{{{exp}}}$"
    v = float(value)
    if kind == "count":
        text = f"{abs(round(v)):,d}" if abs(v) >= 10_000 else f"{abs(round(v)):d}"   # 11,978 as journals print it
    elif kind == "p" and 0 < v < P_SCIENTIFIC_BELOW:
        return "${}\\times10^{{{}}}$".format(*scientific(v))
    else:
        d = max(decimals, 3) if kind == "p" else max(decimals, 0)
        text = f"{abs(v):.{d}f}"
    negative = v < 0 and float(text.replace(",", "")) != 0
    return ("$-$" if negative else "") + text


def _cell_kind(row, col, value, whole_column: bool) -> str:
    """``p``, ``count`` or ``number`` of one cell; a Monte-Carlo error (``... mc_se``) as a p-value (never 0.000)."""
    whole = (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
             and float(value) == round(float(value)))
    if is_p_label(col) or is_p_label(row) or str(col).endswith("mc_se"):
        return "p"
    if whole and (whole_column or is_count_label(col) or is_count_label(row)):
        return "count"
    return "number"


def _integer_column(col) -> bool:
    """Integer numbers by type: an integer dtype, or an object column whose values are all ``int``."""
    import pandas as pd

    if pd.api.types.is_bool_dtype(col):
        return False
    if pd.api.types.is_integer_dtype(col):
        return True
    vals = [v for v in col.tolist() if not is_missing(v)]
    return col.dtype == object and bool(vals) and all(isinstance(v, int) and not isinstance(v, bool) for v in vals)


def _column_plan(df: pd.DataFrame, digits: int) -> tuple[dict, dict]:
    """``(decimals, integer)`` per column label: integers (by type, or whole numbers in a count column) without
    decimals; floats with 3 when every value (count rows aside) lies within [-1.5, 1.5], none when all are 0, else
    ``digits`` (a whole float, an accuracy of 50.0, keeps them)."""
    import pandas as pd

    body = df[[not is_count_label(r) for r in df.index]] if len(df) else df
    dec, integer = {}, {}
    for c, name in zip(df.columns, map(str, df.columns)):
        col = df[c]
        num = pd.to_numeric(col, errors="coerce")
        text = bool((num.isna() & ~col.map(is_missing)).any())
        vals = pd.to_numeric(body[c], errors="coerce").dropna()
        whole = bool(len(num.dropna())) and bool((num.dropna() == num.dropna().round()).all())
        integer[name] = not text and (_integer_column(col) or (whole and is_count_label(name)))
        if text or integer[name]:
            dec[name] = digits if text else 0
        elif len(vals) and (vals == 0).all():
            dec[name] = 0
        elif len(vals) and (vals.abs() <= 1.5).all():
            dec[name] = 3
        else:
            dec[name] = digits
    return dec, integer


def cell_formats(df: pd.DataFrame, digits: int = 1, decimals: dict | None = None) -> list[list[tuple]]:
    """How every cell of ``df`` is printed (by :func:`latex_number`, :func:`text_number` and the report):
    ``(value, kind, decimals)`` per cell, row by row, ``kind`` ``count``, ``p`` or ``number``.  Decimals per
    column from ``decimals`` (e.g. the paper's) or :func:`_column_plan`; an interval's bounds take their
    estimate's."""
    cols = [str(c) for c in df.columns]
    given = {str(c): int(d) for c, d in (decimals or {}).items()}
    planned, integer = _column_plan(df, digits)
    dec = {c: given.get(c, planned[c]) for c in cols}
    estimate = {}
    for c in cols:
        b = interval_bound(c)
        if b:
            estimate[c] = next((e for e in cols if e == b[0]), None) or next(
                (e for e in cols if e.endswith(" " + b[0]) and not interval_bound(e)), None)
    out = []
    for r, rec in zip(df.index, df.itertuples(index=False)):
        row = []
        for c, v in zip(cols, rec):
            v = v.item() if hasattr(v, "item") else v
            src = estimate.get(c) or c
            row.append((v, _cell_kind(r, c, v, integer[src] and not estimate.get(c)), dec[src]))
        out.append(row)
    return out


def latex_cells(df: pd.DataFrame, digits: int = 1, decimals: dict | None = None) -> list[list[str]]:
    """Every cell of ``df`` as LaTeX text: :func:`latex_number` of :func:`cell_formats`."""
    return [[latex_number(v, d, kind=k) for v, k, d in row] for row in cell_formats(df, digits, decimals)]


_CAPTION_TABLE = re.compile(r"^(?P<amc>AMC )?Table (?P<num>[A-Z]?\d+[a-z]?): (?P<rest>.+)$", re.S)
_CAPTION_FIGURE = re.compile(r"^(?:AMC )?Figure \d+")


def latex_caption(caption: str) -> tuple[str | None, str]:
    """``(table number, caption text)`` for ``\\caption``: ``"Table 18: paired change"`` -> ``("18", "Paired
    change")``, ``"AMC Table 2: ..."`` -> ``("AMC 2", ...)``, ``"Figure 4: x"`` -> ``(None, "Numbers of Figure 4:
    x")``; others unchanged."""
    m = _CAPTION_TABLE.match(caption)
    if m:
        rest = m["rest"]
        return (f"AMC {m['num']}" if m["amc"] else m["num"]), rest[:1].upper() + rest[1:]
    if _CAPTION_FIGURE.match(caption):
        return None, f"Numbers of {caption}"
    return None, caption


def table_to_latex(df: pd.DataFrame, digits: int = 1, caption: str | None = None, label: str | None = None,
                   *, decimals: dict | None = None) -> str:
    """A booktabs ``table`` environment (``amssymb`` for a ✓): numbers by :func:`latex_cells`, headers by
    :func:`readable_header`, text escaped."""
    cols = "l" + "r" * len(df.columns)
    head = " & ".join([_tex_escape(readable_header(df.index.name))]
                      + [_tex_escape(readable_header(c)) for c in df.columns]) + r" \\"
    body = [" & ".join([_tex_escape(str(r))] + cells) + r" \\" for r, cells in zip(df.index, latex_cells(df, digits, decimals))]
    parts = [r"\begin{table}[t]", r"\centering", r"\small"]
    if caption:
        number, caption = latex_caption(caption)
        if number:   # the paper's number, not LaTeX's next one (local to this table environment)
            parts.append(r"\renewcommand{\thetable}{" + _tex_escape(number) + "}")
        parts.append(r"\caption{" + _tex_escape(caption) + "}")
    if label:
        parts.append(r"\label{" + label + "}")
    parts += [r"\begin{tabular}{" + cols + "}", r"\toprule", head, r"\midrule", *body, r"\bottomrule",
              r"\end{tabular}", r"\end{table}"]
    return "\n".join(parts) + "\n"


def in_kernel() -> bool:
    """True in a Jupyter kernel (an IPython shell with a ``kernel``)."""
    if "IPython" not in sys.modules:   # a kernel has always imported it; never import it here
        return False
    from IPython import get_ipython

    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def _should_show(show: bool | None) -> bool:
    return in_kernel() if show is None else bool(show)


def _display(obj) -> None:
    from IPython.display import display

    display(obj)


def display_frame(df: pd.DataFrame, digits: int = 1) -> pd.DataFrame:
    """``df`` rounded to :func:`column_digits` (whole-number counts as integers) for display; text unchanged."""
    import pandas as pd

    out = df.copy()
    for c, d in zip(df.columns, column_digits(df, digits)):
        col = df[c]
        if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
            continue
        if d == 0 and (col.dropna() == col.dropna().round()).all():
            out[c] = col.round().astype("Int64")
        else:
            out[c] = col.round(d)
    return out


def _show_table(df: pd.DataFrame, digits: int, caption: str | None) -> None:
    from IPython.display import Markdown

    if caption:
        _display(Markdown(f"**{caption}**"))
    _display(display_frame(df, digits))


def save_table(df: pd.DataFrame, out_dir, name: str, *, digits: int = 1, caption: str | None = None,
               formats=("csv", "md", "tex"), synthetic: bool = False, show: bool | None = None) -> list[Path]:
    """Write ``out_dir/tables/name.{csv,md,tex}`` and, with the CSV, ``name.long.csv`` (every number, exactly:
    :func:`long_rows`); returns the paths.  A note the analysis left in ``df.attrs["note"]`` ends the caption.
    ``show`` (default: in a Jupyter kernel) also displays the caption and ``df`` rounded as in the Markdown file
    (:func:`display_frame`).
    """
    d = Path(out_dir) / "tables"
    d.mkdir(parents=True, exist_ok=True)
    note = df.attrs.get("note")   # what the table counts when it is not what was asked (analyses set it)
    if note:
        caption = f"{caption} (note: {note})" if caption else f"Note: {note}"
    if synthetic:
        caption = f"{caption} [{SYNTHETIC_LABEL}]" if caption else f"[{SYNTHETIC_LABEL}]"
    written = []
    if "csv" in formats:
        written.append(atomic_write(d / f"{name}.csv", lambda p: df.to_csv(p, float_format="%.6g", lineterminator="\n")))
        written.append(atomic_write(d / f"{name}.long.csv", lambda p: write_long(long_rows(df, name), p)))
    if "md" in formats:
        written.append(atomic_write(d / f"{name}.md", lambda p: p.write_text(table_to_markdown(df, digits, caption))))
    if "tex" in formats:
        written.append(atomic_write(d / f"{name}.tex",
                              lambda p: p.write_text(table_to_latex(df, digits, caption, label=f"tab:{name}"))))
    _record(out_dir, written)
    if _should_show(show):
        _show_table(df, digits, caption)
    return written


def _record(out_dir, written: list[Path]) -> None:
    """Hand the written files to ``out_dir``'s provenance record when it keeps one."""
    record = getattr(out_dir, "record", None)
    if callable(record) and written:
        record(written)


FINDINGS_DIR = "findings"


def save_finding(finding, out_dir, *, name: str | None = None, show: bool | None = None) -> Path:
    """Add ``finding`` (``topic``, ``release``: the sentence from this release, ``paper``: the paper's or None;
    :class:`voxmem_analysis.analysis.findings.Finding`) to ``out_dir/findings/NAME.json``, a JSON list in first
    saved order (a topic saved again replaces its record), and return that path.  ``NAME``: the notebook's
    (``out_dir.notebook``) unless given.  ``show`` (default: in a Jupyter kernel) also displays it."""
    name = name or getattr(out_dir, "notebook", None) or "findings"
    d = Path(out_dir) / FINDINGS_DIR
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"{name}.json"
    record = {"topic": str(finding.topic), "release": str(finding.release),
              "paper": None if finding.paper is None else str(finding.paper)}
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        kept = kept if isinstance(kept, list) else []
    except (OSError, ValueError, RecursionError):
        kept = []
    records = [r if not (isinstance(r, dict) and r.get("topic") == record["topic"]) else record for r in kept]
    if record not in records:
        records.append(record)
    text = json.dumps(records, ensure_ascii=False, indent=1) + "\n"
    _record(out_dir, [atomic_write(path, lambda p: p.write_text(text, encoding="utf-8"))])
    if _should_show(show):
        _display(finding)
    return path


def read_findings(out_dir) -> dict[str, list[dict]]:
    """``{name: [finding records]}`` of ``out_dir/findings/*.json`` (unreadable files left out)."""
    out = {}
    for f in sorted((Path(out_dir) / FINDINGS_DIR).glob("*.json")):
        try:
            recs = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(recs, list):
            out[f.stem] = [r for r in recs if isinstance(r, dict) and r.get("release")]
    return out


LONG_COLUMNS = ("artifact", "row", "column", "value")


def long_rows(table: pd.DataFrame, name: str) -> list[tuple]:
    """``(artifact, row, column, value)`` of every non-missing cell of ``table``, row by row (labels as text)."""
    import pandas as pd

    rows = []
    for r, rec in zip(table.index, table.itertuples(index=False)):
        for c, v in zip(table.columns, rec):
            if v is None or (pd.api.types.is_scalar(v) and pd.isna(v)):
                continue
            rows.append((name, str(r), str(c), v.item() if hasattr(v, "item") else v))
    return rows


def _long_text(v) -> str:
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return repr(v)   # the shortest text that reads back as the same float
    return str(v)


def write_long(rows, path) -> Path:
    """Write ``artifact,row,column,value`` rows as CSV (``\\n`` line ends, floats exact)."""
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(LONG_COLUMNS)
        w.writerows((a, r, c, _long_text(v)) for a, r, c, v in rows)
    return Path(path)


def read_long(path) -> list[tuple[str, str, str, object]]:
    """The rows of a ``*.long.csv`` file, numbers as ``float`` (``int`` when written as one); ``ValueError``
    naming the file and line when a line lacks its four fields."""
    out = []
    with open(path, encoding="utf-8", newline="") as fh, csv_field_limit():
        reader = csv.reader(fh)
        head = next(reader, None)
        if head is None or tuple(head) != LONG_COLUMNS:
            raise ValueError(f"{path}: line 1: header {head!r} is not {','.join(LONG_COLUMNS)}")
        for rec in reader:
            if len(rec) != 4:
                raise ValueError(f"{path}: line {reader.line_num}: {len(rec)} fields, 4 expected")
            out.append((rec[0], rec[1], rec[2], _long_value(rec[3])))
    return out


def _long_value(text: str):
    if text in ("True", "False"):
        return text == "True"
    for number in (int, float):
        try:
            return number(text)
        except ValueError:
            pass
    return text


def figure_caption(png) -> str | None:
    """The caption :func:`save_figure` stored in a PNG (its ``Title`` text chunk), or None; read with the
    standard library (the report reads every figure's caption without an imaging library)."""
    try:
        with open(png, "rb") as fh:
            if fh.read(8) != b"\x89PNG\r\n\x1a\n":
                return None
            while True:
                head = fh.read(8)
                if len(head) < 8:
                    return None
                size, kind = struct.unpack(">I4s", head)
                if kind in (b"IDAT", b"IEND"):   # text chunks that matter come before the image data
                    return None
                key, _, rest = fh.read(size + 4)[:size].partition(b"\0")   # + its CRC
                if key != b"Title":
                    continue
                if kind == b"tEXt":
                    return rest.decode("latin-1") or None
                if kind == b"zTXt":
                    return zlib.decompress(rest[1:]).decode("latin-1") or None
                if kind == b"iTXt":   # flags, method, language\0, translated keyword\0, text
                    text = rest[2:].split(b"\0", 2)[2]
                    return (zlib.decompress(text) if rest[0] else text).decode("utf-8") or None
    except (OSError, ValueError, struct.error, zlib.error, UnicodeDecodeError, IndexError):
        return None


def _show_figure(fig, png: Path | None, dpi: int, box) -> None:
    """Display the saved PNG (or one rendered in memory) at half its pixel size."""
    from IPython.display import Image

    if png is not None:
        data = png.read_bytes()
    else:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=dpi, metadata=_PNG_META, bbox_inches=box)
        data = buf.getvalue()
    _display(Image(data=data, format="png", retina=True))


@contextlib.contextmanager
def laid_out(fig, dpi: float):
    """Lay ``fig`` out once at ``dpi`` and yield its tight bounding box (inches, padded as ``"tight"`` pads) for
    every ``savefig`` of the block, which then only renders (the layout engine is off inside; engine and dpi
    restored on exit).  ``bbox_inches="tight"`` would lay the figure out twice per file.  The PNG is the one
    ``"tight"`` writes, byte for byte; the PDF shares its layout (its page may differ by a few points from a
    PDF laid out on its own).  A SYNTHETIC stamp that would cover anything is moved first (:func:`clear_stamp`).
    """
    import matplotlib as mpl

    engine, old_dpi = fig.get_layout_engine(), fig.get_dpi()
    fig.set_dpi(dpi)
    try:
        fig.draw_without_rendering()
        clear_stamp(fig)
        box = fig.get_tightbbox().padded(mpl.rcParams["savefig.pad_inches"])
    finally:
        fig.set_dpi(old_dpi)
    # with both rc switches off, set_layout_engine(None) leaves no engine (a "none" one would draw again)
    with mpl.rc_context({"figure.autolayout": False, "figure.constrained_layout.use": False}):
        fig.set_layout_engine(None)
    try:
        yield box
    finally:
        if engine is not None:
            fig.set_layout_engine(engine)


def save_figure(fig, out_dir, name: str, *, data: pd.DataFrame | None = None, release=None,
                synthetic: bool | None = None, formats=("png", "pdf"), dpi: int = 200,
                show: bool | None = None, caption: str | None = None) -> list[Path]:
    """Write ``out_dir/figures/name.{png,pdf}`` (deterministic, laid out once: :func:`laid_out`) and ``name.csv``
    with ``data``; the figure is closed.  ``caption`` is stored as the files' ``Title`` (read by the report,
    :func:`figure_caption`); ``show`` (default: in a Jupyter kernel) also displays the saved PNG.
    """
    import pandas as pd

    import matplotlib.pyplot as plt

    d = Path(out_dir) / "figures"
    d.mkdir(parents=True, exist_ok=True)
    prepare_figure(fig, synthetic=is_synthetic(release, synthetic))
    written = []
    title = {"Title": caption} if caption else {}
    show = _should_show(show)
    rendered = "png" in formats or "pdf" in formats or show
    with laid_out(fig, dpi) if rendered else contextlib.nullcontext() as box:   # one layout for every file
        if "png" in formats:
            written.append(atomic_write(d / f"{name}.png", lambda p: fig.savefig(
                p, format="png", dpi=dpi, metadata={**_PNG_META, **title}, bbox_inches=box)))
        if "pdf" in formats:
            written.append(atomic_write(d / f"{name}.pdf", lambda p: fig.savefig(
                p, format="pdf", metadata={**_PDF_META, **title}, bbox_inches=box)))
        if data is not None:
            written.append(atomic_write(d / f"{name}.csv", lambda p: data.to_csv(
                p, index=not isinstance(data.index, pd.RangeIndex), float_format="%.6g", lineterminator="\n")))
        _record(out_dir, written)
        if show:
            _show_figure(fig, d / f"{name}.png" if "png" in formats else None, dpi, box)
    plt.close(fig)
    return written
