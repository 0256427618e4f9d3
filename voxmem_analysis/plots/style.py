"""The shared look and layout of every figure: the style (scoped, no global state left behind), the palettes,
labels that fit, round log ticks, labels placed beside their points, a footer kept free for the SYNTHETIC stamp.
matplotlib is imported where it draws: the ``slice`` command imports this module at start-up."""
from __future__ import annotations

import contextlib
import functools
import math
import re

import numpy as np

__all__ = ["paper_style", "styled", "without_canvas_draw", "fit_label", "fit_labels", "log_ticks", "LABEL_WIDTH",
           "EVIDENCE_COLORS", "OPERATION_COLORS", "SERIES_COLORS", "CLASS_COLORS", "ROLE_COLORS", "GROUP_COLORS",
           "HEATMAP_CMAP", "ACC_RANGE", "PERCENT_LIMITS", "FOOTER_IN", "from_zero", "colorbar_extend", "finish",
           "reserve_footer", "place_labels"]

#: Colour-blind-safe (Okabe-Ito) colours per evidence type.
EVIDENCE_COLORS = {
    "speech_semantics": "#0072B2", "speaker_information": "#E69F00",
    "paralinguistic_information": "#009E73", "environmental_sound": "#CC79A7",
}
OPERATION_COLORS = {
    "information_extraction": "#56B4E9", "multi_session_reasoning": "#D55E00",
    "temporal_evolution_tracking": "#009E73", "answer_refusal": "#999999",
}
CLASS_COLORS = {
    "recognition": "#0072B2", "binding": "#E69F00", "operation": "#009E73",
    "unsupported": "#CC79A7", "not_attributable": "#BBBBBB",
}
#: Okabe-Ito colours per session role (evidence stands out; filler recedes).
ROLE_COLORS = {
    "evidence_sessions": "#D55E00", "samekey_haystack_sessions": "#E69F00",
    "topical_haystack_sessions": "#56B4E9", "filler_sessions": "#C8C8C8", "unknown_sessions": "#FFFFFF",
}
GROUP_COLORS = {"proprietary": "#D55E00", "open_weight": "#0072B2", "unknown": "#777777"}
#: Okabe-Ito colours, cycled over series (systems, models).
SERIES_COLORS = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#D55E00", "#56B4E9", "#F0E442", "#000000")
#: Sequential map for accuracy heatmaps, and the range it spans (percent).
HEATMAP_CMAP = "YlGnBu"
ACC_RANGE = (0.0, 70.0)
#: Limits of a 0-100 % axis with room at both ends: a point at 0 % or 100 % stays off the axis line.
PERCENT_LIMITS = (-3.0, 103.0)
#: Height (inches) kept free at the bottom of every figure for the synthetic-data stamp.
FOOTER_IN = 0.2


def from_zero(top: float, pad: float = 0.03) -> tuple[float, float]:
    """Axis limits from 0 to ``top`` with room below 0 (``pad`` of the span) for points at 0."""
    return -pad * top, top


def colorbar_extend(values, vrange) -> str:
    """``extend=`` of a colour bar over ``vrange`` for ``values``: an arrow at each end the data pass."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    low, high = bool(v.size and v.min() < vrange[0]), bool(v.size and v.max() > vrange[1])
    return "both" if low and high else "min" if low else "max" if high else "neither"


_RC = {
    "figure.dpi": 110, "savefig.dpi": 200, "font.size": 9, "axes.titlesize": 10, "axes.labelsize": 9,
    "xtick.labelsize": 8, "ytick.labelsize": 8, "legend.fontsize": 8, "axes.spines.top": False,
    "axes.spines.right": False, "pdf.fonttype": 42, "ps.fonttype": 42, "svg.hashsalt": "voxmem",
    "font.family": "DejaVu Sans", "axes.titleweight": "bold",
}


@contextlib.contextmanager
def paper_style(**overrides):
    """Scoped matplotlib/seaborn style for paper figures (restored on exit)."""
    import matplotlib as mpl

    with mpl.rc_context({**_RC, **overrides}):
        yield


def styled(func):
    """``func`` drawn inside :func:`paper_style`."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        with paper_style():
            return func(*args, **kwargs)
    return wrapper


def finish(fig, title: str | None = None, note: str | None = None):
    """``fig`` with ``note`` in small grey type at its bottom left and ``title`` above it (each when given)."""
    if note:
        fig.text(0.005, 0.003, note, fontsize=6.5, color="#666666", ha="left", va="bottom")
    if title:
        fig.suptitle(title)
    return fig


def reserve_footer(fig, inches: float = FOOTER_IN) -> None:
    """Keep a strip at the bottom of a constrained-layout figure free (for ``output.stamp_synthetic``)."""
    eng = fig.get_layout_engine()
    if eng is not None and hasattr(eng, "set"):
        f = inches / fig.get_figheight()
        eng.set(rect=(0, f, 1, 1 - f))


@contextlib.contextmanager
def without_canvas_draw(fig):
    """Inside the block ``fig.canvas`` is a bare ``FigureCanvasBase`` whose ``draw()`` does nothing: for seaborn
    calls that force a full draw that changes nothing drawn (``heatmap``'s tick-label overlap test, with tick
    labels off; ``FacetGrid.add_legend`` measuring its legend).  The figure's own canvas is back on exit."""
    from matplotlib.backend_bases import FigureCanvasBase

    canvas = fig.canvas
    FigureCanvasBase(fig)   # attaches itself to fig
    try:
        yield
    finally:
        fig.set_canvas(canvas)


#: Characters per line of a name drawn as a label (model and system names; the paper's are shorter).
LABEL_WIDTH = 30


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width`` characters, broken after separators where possible."""
    parts = re.findall(r"[^-_./ ]+[-_./ ]?|[-_./ ]", text)
    out, line = [], ""
    for part in parts:
        while len(line) + len(part) > width and len(part) > width:   # a run longer than a line: cut it
            room = width - len(line)
            out.append(line + part[:room])
            part, line = part[room:], ""
        if len(line) + len(part) > width:
            out.append(line)
            line = ""
        line += part
    out.append(line)
    return [o.strip() for o in out if o.strip()]


def fit_label(text, width: int = LABEL_WIDTH, lines: int = 2) -> str:
    """``text`` in at most ``lines`` lines of ``width`` characters: wrapped after a separator (``-_./`` or space),
    else cut in the middle (``"…"``) so that its start and its end (versions, dates) stay."""
    text = str(text)
    if len(text) <= width:
        return text
    wrapped = _wrap(text, width)
    if len(wrapped) <= lines:
        return "\n".join(wrapped)
    if lines == 1:
        head = (width - 1) // 2
        return text[:head].rstrip() + "\u2026" + _tail(text, width - 1 - head)
    kept = wrapped[:lines - 1]
    return "\n".join([*kept, "\u2026" + _tail(text[len("".join(kept)) + 1:], width - 1)])


def _tail(text: str, n: int) -> str:
    """The last ``n`` characters of ``text``, starting after a separator when one is near their start."""
    tail = text[-n:]
    cut = re.search(r"[-_./ ]", tail)
    return (tail[cut.end():] if cut and cut.end() <= len(tail) // 3 else tail).lstrip()


def fit_labels(names, width: int = LABEL_WIDTH, lines: int = 2) -> list[str]:
    """:func:`fit_label` of each name; names whose labels would read alike are wrapped whole instead."""
    names = [str(n) for n in names]
    fitted = [fit_label(n, width, lines) for n in names]
    seen: dict[str, set] = {}
    for n, f in zip(names, fitted):
        seen.setdefault(f, set()).add(n)
    return [f if len(seen[f]) == 1 else "\n".join(_wrap(n, width)) for n, f in zip(names, fitted)]


def _decade(m: int, e: int) -> float:
    """``m * 10**e`` as the float its decimal text reads as (``3e-1`` is 0.3, not 0.30000000000000004)."""
    return float(f"{m}e{e}")


def log_ticks(lo: float, hi: float, *, max_ticks: int = 6, min_gap: float = 0.12) -> list[float]:
    """Round ticks for a log axis from ``lo`` to ``hi`` that cannot overprint: of the candidate sets (multiples of a
    round step; 1-2-3-5 ... per decade; every k-th decade) with 2 to ``max_ticks`` values inside, neighbours at
    least ``min_gap`` of the axis apart, the one with the most values (1 among them whenever shown)."""
    if not (0 < lo < hi) or not math.isfinite(hi):
        return []
    span = math.log10(hi) - math.log10(lo)
    e0, e1 = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    sets = []
    for step in (0.01, 0.02, 0.025, 0.05, 0.1, 0.2, 0.25, 0.5):
        k0, k1 = max(1, math.ceil(lo / step - 1e-9)), math.floor(hi / step + 1e-9)
        if k1 - k0 < 2 * max_ticks:
            sets.append([round(k * step, 10) for k in range(k0, k1 + 1)])
    for subs in ((1, 2, 3, 5), (1, 2, 5), (1, 3), (1,)):
        sets.append([_decade(m, e) for e in range(e0, e1 + 1) for m in subs])
    for every in (2, 3, 5, 10, 20, 50):
        sets.append([_decade(1, e) for e in range(e0, e1 + 1) if e % every == 0])
    best: list[float] = []
    for values in sets:
        inside = sorted(v for v in values if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9))
        if not 2 <= len(inside) <= max_ticks or len(inside) <= len(best):
            continue
        gaps = [math.log10(b) - math.log10(a) for a, b in zip(inside, inside[1:])]
        if min(gaps) >= min_gap * span:
            best = inside
    return best


def place_labels(ax, x, y, labels, *, fontsize: float = 6.5, pad_pt: float = 4.0, color: str = "#222222",
                 avoid=()) -> None:
    """Write ``labels`` beside the points ``(x, y)``, overlapping no other label, marker or ``avoid`` artist, inside the
    axes: for each point (top first) the first of eight positions at growing distances that fits; a label beside
    its point is nearer to it than to any other, one further away hangs on a leader line."""
    import matplotlib.transforms as mtrans

    fig = ax.figure
    fig.draw_without_rendering()   # lays the figure out (its layout engine) without rasterizing it
    r = fig.canvas.get_renderer()
    to_disp = ax.transData
    pts = to_disp.transform(np.column_stack([x, y]))
    dpi_scale = fig.dpi / 72.0
    mk = 4.0 * dpi_scale
    taken = [mtrans.Bbox.from_extents(px - mk, py - mk, px + mk, py + mk) for px, py in pts]
    taken += [a.get_window_extent(r) for a in avoid]
    axbox = ax.get_window_extent(r)
    dirs = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1)]
    gaps = np.hypot(*(pts[:, None, :] - pts[None, :, :]).transpose(2, 0, 1)) + np.eye(len(pts)) * 1e9
    for k in np.argsort(-np.asarray(y, float), kind="stable"):
        px, py = pts[k]
        t = ax.text(0, 0, labels[k], fontsize=fontsize, color=color, transform=None)
        w, h = (lambda b: (b.width, b.height))(t.get_window_extent(r))
        best = None
        crowded = len(pts) > 1 and gaps[k].min() < 2 * mk   # markers touching: label away, on a visible leader
        for dist in (2.2, 3.6, 5.2, 7.0, 9.0, 11.5, 14.0) if crowded else (1.0, 2.2, 3.6, 5.2, 7.0, 9.0, 11.5, 14.0):
            for dx, dy in dirs:
                off = pad_pt * dpi_scale * dist
                cx = px + dx * (off + (w / 2 if dx else 0))
                cy = py + dy * (off + (h / 2 if dy else 0))
                box = mtrans.Bbox.from_extents(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
                inside = (box.x0 >= axbox.x0 and box.x1 <= axbox.x1 and box.y0 >= axbox.y0 and box.y1 <= axbox.y1)
                near = dist > 1 or _nearest(box, pts) == k   # a label beside a point must be nearest to its own
                if inside and near and not any(box.overlaps(o) for o in taken):
                    best = (cx, cy, box, dist)
                    break
            if best:
                break
        t.remove()
        if best is None:
            cx, cy = px + pad_pt * dpi_scale + w / 2, py
            box, dist = mtrans.Bbox.from_extents(cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2), 1.0
        else:
            cx, cy, box, dist = best
        taken.append(box)
        tx_, ty_ = to_disp.inverted().transform((cx, cy))
        ax.annotate(labels[k], (x[k], y[k]), xytext=(tx_, ty_), textcoords="data", ha="center", va="center",
                    fontsize=fontsize, color=color,
                    arrowprops=dict(arrowstyle="-", lw=0.5, color="#777777", shrinkA=0, shrinkB=0) if dist > 1 else None)


def _nearest(box, pts: np.ndarray) -> int:
    """Index of the point (display px) nearest to ``box`` (distance 0 inside it)."""
    dx = np.maximum(np.maximum(box.x0 - pts[:, 0], pts[:, 0] - box.x1), 0)
    dy = np.maximum(np.maximum(box.y0 - pts[:, 1], pts[:, 1] - box.y1), 0)
    return int(np.argmin(np.hypot(dx, dy)))
