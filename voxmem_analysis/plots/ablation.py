"""Figure of the transcript-only ablation (Table 2), drawn from ``AblationResult.table``: full audio vs transcript
only per row, and the drop with its paired bootstrap interval."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import MultipleLocator

from voxmem_analysis.plots.style import fit_label, styled

__all__ = ["CONDITION_COLORS", "ablation_bars", "ablation_drop", "ablation_figure", "make_room_above"]

CONDITION_COLORS = {"full_audio": "#0072B2", "transcript_only": "#E69F00"}
_DROP_GID = "ablation-drop-label"
_LABELS = {"full_audio": "Full Audio", "transcript_only": "Transcript Only"}


def _positions(rows) -> np.ndarray:
    """x positions with a gap before the pooled rows (All, Audio-native)."""
    x, pos = 0.0, []
    for r in rows:
        if r in ("All", "Audio-native") and (not pos or rows[len(pos) - 1] not in ("All", "Audio-native")):
            x += 0.5
        pos.append(x)
        x += 1.0
    return np.array(pos)


@styled
def ablation_bars(data: pd.DataFrame, *, ax=None, show_drop: bool = True):
    """Grouped bars of full-audio and transcript-only accuracy per row, the drop and its interval above each
    (``show_drop``); returns the Axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.2, 3.4))
    rows = list(data["row"])
    x = _positions(rows)
    w = 0.38
    for k, (cond, off) in enumerate((("full_audio", -w / 2), ("transcript_only", w / 2))):
        bars = ax.bar(x + off, data[cond], width=w, color=CONDITION_COLORS[cond], label=_LABELS[cond],
                      edgecolor="white", linewidth=0.5)
        for b, v in zip(bars, data[cond]):
            ax.text(b.get_x() + b.get_width() / 2, v + 0.8, f"{v:.1f}", ha="center", va="bottom", fontsize=6)
    if show_drop:
        top = np.maximum(data["full_audio"], data["transcript_only"]).to_numpy()
        for xi, t, d, lo, hi in zip(x, top, data["delta_pp"], data["ci_low"], data["ci_high"]):
            ax.text(xi, t + 6.5, f"\u0394 {d:.1f}\n[{lo:.1f}, {hi:.1f}]", ha="center", va="bottom", fontsize=6,
                    color="#444444", gid=_DROP_GID)
    ax.set_xticks(x)
    ax.set_xticklabels([f"{r.replace(' ', chr(10))}\n(n={n})" for r, n in zip(rows, data["n"])], fontsize=7)
    ax.set_ylabel("Accuracy (%)")
    ax.set_ylim(0, 100)
    ax.legend(loc="upper left", fontsize=7, frameon=False, ncol=2)
    return ax


@styled
def ablation_drop(data: pd.DataFrame, *, ax=None):
    """The drop (full audio − transcript only, pp) per row with its paired bootstrap interval and the exact
    McNemar p; returns the Axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(3.4, 3.4))
    rows = list(data["row"])
    y = -_positions(rows)
    d = data["delta_pp"].to_numpy(float)
    lo = data["ci_low"].to_numpy(float)
    hi = data["ci_high"].to_numpy(float)
    ax.errorbar(d, y, xerr=[d - lo, hi - d], fmt="o", color="#333333", ms=4, capsize=2.5, lw=1)
    ax.axvline(0, color="#999999", lw=0.7, ls="--")
    ax.set_yticks(y)
    ax.set_yticklabels(rows, fontsize=7)
    if "p_value" in data.columns:
        for yi, p in zip(y, data["p_value"]):
            ax.text(1.02, yi, f"p={p:.2g}" if p >= 1e-3 else "p<0.001", transform=ax.get_yaxis_transform(),
                    va="center", fontsize=6, color="#444444")
    lvl = int(round(100 * float(data["ci_level"].iloc[0]))) if "ci_level" in data.columns else 95
    ax.set_xlabel(f"Drop (pp), {lvl}% paired bootstrap CI")
    ax.set_xlim(min(-5.0, float(np.nanmin(lo)) - 5), float(np.nanmax(hi)) + 5)
    return ax


def make_room_above(ax, *, bottom: float = 0.0, ticks_to: float = 100.0, rounds: int = 3) -> None:
    """Raise the top of ``ax``'s y axis until the drop labels of :func:`ablation_bars` stand inside it and below its
    legend (ticks stay at 0-``ticks_to``), measured on the laid-out figure."""
    labels = [t for t in ax.texts if t.get_gid() == _DROP_GID]
    legend = ax.get_legend()
    for _ in range(rounds):
        ax.figure.draw_without_rendering()
        r = ax.figure.canvas.get_renderer()
        inv = ax.transData.inverted()
        y0, y1 = ax.get_ylim()
        leg = legend.get_window_extent(r) if legend is not None else None
        need = y1
        for t in labels:
            box = t.get_window_extent(r)
            top = inv.transform((0, box.y1))[1]
            if leg is not None and box.x1 > leg.x0 and box.x0 < leg.x1:   # under the legend: stay below it
                top += y1 - inv.transform((0, leg.y0))[1]
            need = max(need, top)
        if need <= y1 + 1e-9:
            return
        ax.set_ylim(bottom, need + 0.02 * (need - bottom))
        ax.yaxis.set_major_locator(MultipleLocator(20))
        ax.set_yticks([v for v in ax.get_yticks() if bottom <= v <= ticks_to])


@styled
def ablation_figure(data: pd.DataFrame, *, title: str | None = None):
    """Bars and drop side by side (a long ``title`` wrapped to the bar panel's width); returns the Figure."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(10.0, 3.8), gridspec_kw={"width_ratios": [2.1, 1]})
    ablation_bars(data, ax=a)
    a.set_title(fit_label(title or "Full audio vs transcript only", width=60))
    ablation_drop(data, ax=b)
    b.set_title("Drop with paired bootstrap interval")
    fig.tight_layout()
    make_room_above(a)
    return fig
