"""Small HTML helpers of the report pages (escaping, numbers, paths, tables)."""
from __future__ import annotations

import html
import math
from importlib import resources
from pathlib import Path

__all__ = ["esc", "resource", "num", "signed", "display_path", "read_csv", "truthy", "column_decimals", "table_html",
           "MAX_TABLE_ROWS", "OPEN_ROWS"]

_REPO_ROOT = Path(__file__).resolve().parents[2]
MAX_TABLE_ROWS = 40
OPEN_ROWS = 20   # tables this short are shown open


def esc(x) -> str:
    return html.escape("" if x is None else str(x), quote=True)


def resource(name: str) -> str:
    return resources.files("voxmem_analysis").joinpath(f"resources/{name}").read_text(encoding="utf-8")


def num(v, digits: int = 3) -> str:
    if v is None or v == "":
        return ""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return esc(v)
    if math.isnan(f):
        return ""
    if f == int(f) and abs(f) < 1e12:
        return f"{int(f)}"
    if abs(f) < 10 ** -digits:   # e.g. a p-value: keep it visibly non-zero
        return f"{f:.1e}"
    return f"{f:.{digits}f}".rstrip("0").rstrip(".")


def signed(v, digits: int = 2) -> str:
    s = num(v, digits)
    return f"+{s}" if s and not s.startswith("-") and float(s) != 0 else s


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


def truthy(v) -> bool:
    return str(v).strip().lower() in ("true", "1", "yes")




def column_decimals(values, digits: int = 3) -> int:
    """Decimals that show every non-integer float of a column (at most ``digits``): the column's
    numbers then line up (24.490 under 26.531, not 24.49)."""
    need = 0
    for v in values:
        if isinstance(v, float) and math.isfinite(v) and v != int(v) and abs(v) >= 10 ** -digits:
            tail = f"{v:.{digits}f}".rstrip("0").split(".")[1]
            need = max(need, len(tail))
    return need


def table_html(df) -> str:
    head = "".join(f"<th>{esc(c)}</th>" for c in df.columns)
    body = []
    shown = df.head(MAX_TABLE_ROWS)
    decimals = [column_decimals(shown.iloc[:, j].tolist()) for j in range(shown.shape[1])]
    for rec in shown.itertuples(index=False):
        cells = []
        for v, dec in zip(rec, decimals):
            if isinstance(v, float) and dec and math.isfinite(v) and (v == 0 or abs(v) >= 10 ** -3):
                cells.append(f'<td class="num">{v:.{dec}f}</td>')
            elif isinstance(v, float):
                cells.append(f'<td class="num">{num(v, 3)}</td>')
            elif isinstance(v, (int,)) and not isinstance(v, bool):
                cells.append(f'<td class="num">{v}</td>')
            else:
                cells.append(f"<td>{esc(v)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = (f'<p class="lead">&hellip; {len(df) - MAX_TABLE_ROWS} more rows in the CSV.</p>'
            if len(df) > MAX_TABLE_ROWS else "")
    return f'<div class="wide"><table><tr>{head}</tr>{"".join(body)}</table></div>{more}'
