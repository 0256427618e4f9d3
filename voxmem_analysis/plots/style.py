"""Shared look of every figure: one context manager, fixed palettes, no global state left behind."""
from __future__ import annotations

import contextlib
import math
import re


__all__ = ["paper_style", "without_canvas_draw", "fit_label", "fit_labels", "log_ticks", "LABEL_WIDTH", "EVIDENCE_COLORS",
           "OPERATION_COLORS", "CLASS_COLORS", "ROLE_COLORS", "GROUP_COLORS", "HEATMAP_CMAP", "ACC_RANGE", "PERCENT_LIMITS",
           "from_zero", "colorbar_extend"]

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
#: Sequential map for accuracy heatmaps, and the range it spans (percent).
HEATMAP_CMAP = "YlGnBu"
ACC_RANGE = (0.0, 70.0)
#: Limits of a 0-100 % axis with room at both ends: a point at 0 % or 100 % stays off the axis line.
PERCENT_LIMITS = (-3.0, 103.0)


def from_zero(top: float, pad: float = 0.03) -> tuple[float, float]:
    """Axis limits from 0 to ``top`` with room below 0 (``pad`` of the span) for points at 0."""
    return -pad * top, top


def colorbar_extend(values, vrange) -> str:
    """``extend=`` of a colour bar over ``vrange`` for ``values``: an arrow at each end the data pass."""
    import numpy as np

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


@contextlib.contextmanager
def without_canvas_draw(fig):
    """Inside the block ``fig.canvas`` is a bare ``FigureCanvasBase``: ``draw()`` does nothing and
    there is no ``get_renderer`` (text is still measured: ``fig`` makes a renderer on demand).
    The figure's own canvas (with its callbacks and manager) is back on exit.

    For seaborn calls that force a full draw of the figure (``fig.canvas.draw()``) where that
    draw changes nothing in what is finally drawn, and costs a render of every panel drawn so
    far (annotations included):

    * ``seaborn.heatmap`` draws to test whether the tick labels it set overlap (and rotates them
      if so): called with ``xticklabels=False, yticklabels=False`` (the callers set their own
      ticks afterwards) there is nothing to test;
    * ``FacetGrid.add_legend`` draws twice to measure its legend, which is measurable without
      rendering.
    """
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
    """``text`` as a label of at most ``lines`` lines of ``width`` characters.

    A longer name is wrapped after a separator (``-``, ``_``, ``.``, ``/``, space); when it still
    does not fit, its middle is cut (``"Gemini-3.1-Pro-Preview-native-" / "\u2026context-2026-01-15-exp"``),
    so that both its start and its end, where versions and dates are, stay.  The full name stays
    in the data drawn (the CSV ``output.save_figure`` writes beside the figure).  A name of
    ``width`` characters or fewer is returned as it is.
    """
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
    """:func:`fit_label` of each name; names whose fitted labels would be the same are wrapped
    whole instead (every line of ``width``, none cut), so no two labels of a figure read alike."""
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
    """Round tick values for a log axis from ``lo`` to ``hi`` (both > 0) that cannot overprint.

    Candidates: multiples of a round step (0.01 ... 0.5: narrow ranges around 1, as odds and
    retention ratios are) and round values per decade (1-2-3-5, 1-2-5, 1-3, 1, then every 2nd,
    3rd ... decade).  Of the candidate sets with 2 to ``max_ticks`` values inside the axis whose
    neighbours are at least ``min_gap`` of the axis width apart (in log units), the one with the
    most values is taken (the first listed on a tie).  1 is among them whenever the axis shows
    it (every candidate set holds 1).  Returns ``[]`` for an empty or invalid range.
    """
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
