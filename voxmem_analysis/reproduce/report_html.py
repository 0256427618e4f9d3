"""What the report pages share: the Jinja2 templates (``reproduce/templates``, autoescaped), numbers as
HTML, paths as shown, and a table as the data its template draws."""
from __future__ import annotations

import math
import re
from collections import defaultdict, deque
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

from voxmem_analysis.output import P_SCIENTIFIC_BELOW, cell_formats, is_missing, read_long, scientific, table_to_markdown
from voxmem_analysis.reproduce.notebook import display_path, outputs_brief

__all__ = ["render", "num", "signed", "read_csv", "read_table", "truthy", "table_view", "table_html",
           "key_columns_first", "html_number", "natural_key", "MAX_TABLE_ROWS", "OPEN_ROWS", "KEY_COLUMNS"]

MAX_TABLE_ROWS = 40
OPEN_ROWS = 20   # tables this short are shown open

#: The columns a reader looks for first in a wide table, shown right after its label column (the files keep
#: their own order); columns a table does not have are passed over.
KEY_COLUMNS = {
    "table18_family": ("drop", "drop_lo", "drop_hi", "drop deff", "retention", "retention_lo", "retention_hi",
                       "retention deff"),
    "amc_runs_compare": ("system_a", "system_b", "n_tasks", "apr_diff", "apr_diff_ci_low", "apr_diff_ci_high",
                         "p_mcnemar", "p_holm", "ars_diff", "ars_diff_ci_low", "ars_diff_ci_high"),
}

_ENV = jinja2.Environment(loader=jinja2.PackageLoader("voxmem_analysis.reproduce", "templates"),
                          autoescape=jinja2.select_autoescape(["html"], default_for_string=True, default=False),
                          trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined,
                          finalize=lambda v: "" if v is None else v)


def render(template: str, **context) -> str:
    """The template ``template`` filled with ``context`` (the texts of an ``.html`` one escaped)."""
    return _ENV.get_template(template).render(**context)


def _sci(text: str) -> Markup:
    """``7.3e-20`` as ``7.3×10<sup>−20</sup>``."""
    mant, exp = text.lower().split("e")
    return Markup(f"{mant}\u00d710<sup>{int(exp)}</sup>".replace("<sup>-", "<sup>\u2212"))


def num(v, digits: int = 3) -> Markup:
    """A number of the scoreboard and audit tables: whole numbers as integers, others to at most ``digits``
    decimals, smaller ones with two significant digits (``0.0042``, ``7.3×10<sup>−20</sup>``); a real minus."""
    if v is None or v == "":
        return Markup("")
    try:
        f = float(v)
    except (TypeError, ValueError):
        return escape(v)
    if math.isnan(f):
        return Markup("")
    if math.isinf(f):
        return Markup("\u2212\u221e" if f < 0 else "\u221e")
    if f == int(f) and abs(f) < 1e12:
        text = f"{int(f)}"
    elif abs(f) < 10 ** -digits:   # e.g. a p-value or a tiny delta: keep it visibly non-zero
        text = f"{f:.2g}"
        text = _sci(text) if "e" in text else text
    else:
        text = f"{f:.{digits}f}".rstrip("0").rstrip(".")
    return Markup("\u2212") + text[1:] if text.startswith("-") else Markup(text)


def signed(v, digits: int = 2) -> Markup:
    s = num(v, digits)
    try:
        positive = float(v) > 0
    except (TypeError, ValueError):
        return s
    return Markup("+") + s if positive and s else s


def read_csv(path: Path):
    import pandas as pd

    if not path.is_file():
        return None
    try:
        return pd.read_csv(path, keep_default_na=False, na_values=[""])
    except Exception:  # noqa: BLE001 - an unreadable CSV is shown as missing
        return None


def read_table(path: Path):
    """A table of ``OUT/tables`` for display: the CSV's shape and labels, the exact values of ``NAME.long.csv``
    where there (a count an ``int``, an accuracy of 50.0 a ``float``); None when the CSV cannot be read."""
    df = read_csv(path)
    long = Path(path).with_name(Path(path).stem + ".long.csv")
    if df is None or df.shape[1] < 2 or not long.is_file():
        return df
    try:
        rows = read_long(long)
    except (OSError, ValueError):
        return df
    cells: dict = defaultdict(deque)
    for _, r, c, v in rows:
        cells[(r, c)].append(v)
    out = df.astype(object)
    for j, c in enumerate(df.columns[1:], start=1):
        for i, label in enumerate(df.iloc[:, 0].tolist()):
            q = cells.get((str(label), str(c)))
            if q:
                out.iat[i, j] = q.popleft()
    return out


def truthy(v) -> bool:
    return str(v).strip().lower() in ("true", "1", "yes")


def natural_key(name) -> tuple:
    """Sort key that orders the numbers inside names by value: ``table2`` < ``table13`` < ``table20``."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.lower())
                 for part in re.split(r"(\d+)", str(name)) if part)


def html_number(value, decimals: int = 1, kind: str = "number") -> Markup:
    """One number of a report table as :func:`voxmem_analysis.output.cell_formats` plans it (a p-value below 0.001
    as ``7.3×10<sup>−20</sup>``); a real minus sign."""
    if is_missing(value):
        return Markup("")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return escape(value)
    v = float(value)
    if not math.isfinite(v):
        return Markup("\u2212\u221e" if v < 0 else ("\u221e" if v > 0 else ""))
    if kind == "p" and 0 < v < P_SCIENTIFIC_BELOW:
        return _sci("{}e{}".format(*scientific(v)))
    text = f"{abs(round(v)):d}" if kind == "count" else f"{abs(v):.{max(decimals, 3) if kind == 'p' else decimals}f}"
    return Markup(("\u2212" if v < 0 and float(text) != 0 else "") + text)


def key_columns_first(df, name: str):
    """``df`` with the :data:`KEY_COLUMNS` of table ``name`` right after its first (label) column."""
    keys = [c for c in KEY_COLUMNS.get(name, ()) if c in df.columns[1:]]
    return df[[df.columns[0], *keys, *(c for c in df.columns[1:] if c not in keys)]] if keys else df


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def table_view(df, digits: int = 1, decimals: dict | None = None, max_rows: int | None = MAX_TABLE_ROWS) -> dict:
    """``df`` (first column: the row labels) as the template's table: ``head``, ``rows`` of ``(is_number, text)``
    as the LaTeX and Markdown files print them (``decimals``: per column), ``n`` rows, ``more`` left out beyond
    ``max_rows`` (None: all)."""
    shown = df if max_rows is None else df.head(max_rows)
    rows = []
    if shown.shape[1]:
        labels = shown.iloc[:, 0].tolist()
        rest = shown.iloc[:, 1:].set_axis(labels, axis=0)
        for label, cells in zip(labels, cell_formats(rest, digits, decimals)):
            first = ((True, html_number(label, 0, "number" if label != round(label) else "count"))
                     if _is_number(label) else (False, label))
            rows.append([first, *((True, html_number(v, dec, kind)) if _is_number(v) else (False, v)
                                  for v, kind, dec in cells)])
    more = len(df) - max_rows if max_rows is not None and len(df) > max_rows else 0
    return {"head": [str(c) for c in df.columns], "rows": rows, "n": len(df), "more": more}


def table_html(df, digits: int = 1, decimals: dict | None = None, max_rows: int | None = MAX_TABLE_ROWS) -> Markup:
    """:func:`table_view` of ``df`` as HTML (the template's table)."""
    return _ENV.get_template("macros.html").module.table(table_view(df, digits, decimals, max_rows))


def _headline(err: dict) -> str:
    where = f"cell {err.get('cell_index')}" if err.get("cell_index") is not None else "kernel"
    return f"{where}: {err.get('ename')}: {err.get('evalue')}"[:200]


def _note(nb: dict) -> str:
    """Why a notebook was skipped, or which of its sections were."""
    skipped = nb.get("sections_skipped") or []
    return nb.get("reason") or (f"{len(skipped)} section{'s' if len(skipped) != 1 else ''} skipped: "
                                + "; ".join(sec for sec, _ in skipped) if skipped else "")


_ENV.globals.update(open_rows=OPEN_ROWS, table_html=table_html,
                    markdown=lambda df, digits: table_to_markdown(df, digits=digits))
_ENV.filters.update(path=display_path, basename=lambda p: Path(str(p)).name, brief=outputs_brief, headline=_headline,
                    note=_note, percent=lambda v: html_number(v, 1),
                    code=lambda text: Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text)))),  # `x`
                    breakable=lambda text: Markup(str(escape(text)).replace("_", "_<wbr>")))  # wraps at _
