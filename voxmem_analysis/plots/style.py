"""Shared look of every figure: one context manager, fixed palettes, no global state left behind."""
from __future__ import annotations

import contextlib

from voxmem_analysis import taxonomy as tx

__all__ = ["paper_style", "without_canvas_draw", "EVIDENCE_COLORS", "OPERATION_COLORS", "CLASS_COLORS", "ROLE_COLORS", "GROUP_COLORS", "HEATMAP_CMAP", "ACC_RANGE"]

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
    "topical_haystack_sessions": "#56B4E9", "filler_sessions": "#C8C8C8",
}
GROUP_COLORS = {"proprietary": "#D55E00", "open_weight": "#0072B2", "unknown": "#777777"}
#: Sequential map for accuracy heatmaps, and the range it spans (percent).
HEATMAP_CMAP = "YlGnBu"
ACC_RANGE = (0.0, 70.0)

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


def evidence_palette(codes=tx.EVIDENCE_TYPES) -> list[str]:
    return [EVIDENCE_COLORS[c] for c in codes]
