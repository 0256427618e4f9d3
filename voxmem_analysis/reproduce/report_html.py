"""Small HTML helpers of the report pages (escaping, numbers, paths, tables)."""
from __future__ import annotations

import html
import math
from importlib import resources
from pathlib import Path

__all__ = ["esc", "resource", "num", "signed", "display_path", "read_csv", "read_table", "truthy", "column_decimals", "table_html",
           "html_number", "natural_key", "MAX_TABLE_ROWS", "OPEN_ROWS"]

_REPO_ROOT = Path(__file__).resolve().parents[2]
MAX_TABLE_ROWS = 40
OPEN_ROWS = 20   # tables this short are shown open


def esc(x) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def resource(name: str) -> str:
    return resources.files("voxmem_analysis").joinpath(f"resources/{name}").read_text(encoding="utf-8")


def _sci(text: str) -> str:
    """``7.3e-20`` as ``7.3×10<sup>−20</sup>``."""
    mant, exp = text.lower().split("e")
    return f"{mant}\u00d710<sup>{int(exp)}</sup>".replace("<sup>-", "<sup>\u2212")


def num(v, digits: int = 3) -> str:
    """A number of the report's own tables (published vs reproduced, audit): whole numbers as
    integers, others to at most ``digits`` decimals (trailing zeros dropped), numbers too small for
    that with two significant digits (``0.0042``, ``7.3×10<sup>−20</sup>``); a real minus sign."""
    if v is None or v == "":
        return ""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return esc(v)
    if math.isnan(f):
        return ""
    if math.isinf(f):
        return "\u2212\u221e" if f < 0 else "\u221e"
    if f == int(f) and abs(f) < 1e12:
        text = f"{int(f)}"
    elif abs(f) < 10 ** -digits:   # e.g. a p-value or a tiny delta: keep it visibly non-zero
        text = f"{f:.2g}"
        text = _sci(text) if "e" in text else text
    else:
        text = f"{f:.{digits}f}".rstrip("0").rstrip(".")
    return "\u2212" + text[1:] if text.startswith("-") else text


def signed(v, digits: int = 2) -> str:
    s = num(v, digits)
    try:
        positive = float(v) > 0
    except (TypeError, ValueError):
        return s
    return f"+{s}" if positive and s else s


def display_path(p: str | None) -> str:
    if not p:
        return "?"
    path = Path(p)
    try:
        return path.resolve().relative_to(_REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def read_csv(path: Path):
    import pandas as pd

    if not path.is_file():
        return None
    try:
        return pd.read_csv(path, keep_default_na=False, na_values=[""])
    except Exception:  # noqa: BLE001 - an unreadable CSV is shown as missing
        return None


def read_table(path: Path):
    """A table of ``OUT/tables`` (``NAME.csv``) for display, its numbers typed as the notebook wrote them:
    the CSV gives the shape and labels, ``NAME.long.csv`` (when there) the exact values, so a count
    stays an ``int`` and an accuracy of 50.0 a ``float`` (a CSV alone reads both as 50).  None when the
    CSV cannot be read."""
    from collections import defaultdict, deque

    from voxmem_analysis.output import read_long

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
    import re

    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.lower())
                 for part in re.split(r"(\d+)", str(name)) if part)


def column_decimals(values, digits: int = 3) -> int:
    """Decimals that show every non-integer float of a column (at most ``digits``): the column's
    numbers then line up (24.490 under 26.531, not 24.49)."""
    need = 0
    for v in values:
        if isinstance(v, float) and math.isfinite(v) and v != int(v) and abs(v) >= 10 ** -digits:
            tail = f"{v:.{digits}f}".rstrip("0").split(".")[1]
            need = max(need, len(tail))
    return need


def html_number(value, decimals: int = 1, kind: str = "number") -> str:
    """One number of a report table (the plan of :func:`voxmem_analysis.output.cell_formats`): a count as
    an integer, a p-value below 0.001 as ``7.3×10<sup>−20</sup>``, otherwise ``decimals`` decimals; a
    real minus sign.  Cells of class ``num`` never wrap (report.css)."""
    from voxmem_analysis.output import P_SCIENTIFIC_BELOW, is_missing

    if is_missing(value):
        return ""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return esc(value)
    v = float(value)
    if not math.isfinite(v):
        return "\u2212\u221e" if v < 0 else ("\u221e" if v > 0 else "")
    if kind == "p" and 0 < v < P_SCIENTIFIC_BELOW:
        mant, exp = f"{v:.1e}".split("e")
        mant = mant[:-2] if mant.endswith(".0") else mant
        return f"{mant}\u00d710<sup>{int(exp)}</sup>".replace("<sup>-", "<sup>\u2212")
    text = f"{abs(round(v)):d}" if kind == "count" else f"{abs(v):.{max(decimals, 3) if kind == 'p' else decimals}f}"
    return ("\u2212" if v < 0 and float(text) != 0 else "") + text


def table_html(df, digits: int = 1, decimals: dict | None = None, max_rows: int | None = MAX_TABLE_ROWS) -> str:
    """``df`` (as read from a table's CSV; the first column holds the row labels) as an HTML table:
    numbers as the LaTeX and Markdown files print them (:func:`voxmem_analysis.output.cell_formats`:
    counts as integers, percentages to ``digits`` decimals, ratios to 3, an interval with its
    estimate's decimals; ``decimals``: per column, e.g. the paper's printed precision), at most
    ``max_rows`` rows (None: all)."""
    from voxmem_analysis.output import cell_formats

    head = "".join(f"<th>{esc(c)}</th>" for c in df.columns)
    shown = df if max_rows is None else df.head(max_rows)
    body = []
    if shown.shape[1]:
        labels = shown.iloc[:, 0].tolist()
        rest = shown.iloc[:, 1:].set_axis(labels, axis=0)
        for label, cells in zip(labels, cell_formats(rest, digits, decimals)):
            tds = [f"<td>{esc(label)}</td>" if not isinstance(label, (int, float)) or isinstance(label, bool)
                   else f'<td class="num">{html_number(label, 0, "number" if label != round(label) else "count")}</td>']
            for v, kind, dec in cells:
                numeric = isinstance(v, (int, float)) and not isinstance(v, bool)
                tds.append(f'<td class="num">{html_number(v, dec, kind)}</td>' if numeric else f"<td>{esc(v)}</td>")
            body.append("<tr>" + "".join(tds) + "</tr>")
    more = (f'<p class="lead">&hellip; {len(df) - max_rows} more rows in the CSV.</p>'
            if max_rows is not None and len(df) > max_rows else "")
    return f'<div class="wide"><table><tr>{head}</tr>{"".join(body)}</table></div>{more}'
