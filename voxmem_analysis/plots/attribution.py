"""Figures of error attribution (Figure 7 by operation and evidence type, Figure 10 by subtype), drawn from
:func:`voxmem_analysis.analysis.attribution.class_proportions` rows."""
from __future__ import annotations

import matplotlib.patches as mpatches
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import InputError
from voxmem_analysis.plots.style import CLASS_COLORS, finish, reserve_footer, styled

__all__ = ["class_bars", "figure7", "figure10"]

_TITLES = {"operation": "By memory operation", "evidence_type": "By evidence type", "subtype": "By question subtype"}


def _check(data: pd.DataFrame) -> None:
    need = {"label", "n_cells", "n_errors", *tx.ATTRIBUTION_CLASSES}
    missing = need - set(data.columns)
    if missing:
        raise InputError(f"data lacks column(s) {sorted(missing)}; pass attribution.class_proportions() output")


def class_bars(data: pd.DataFrame, *, ax=None, title: str | None = None, min_label: float = 4.0,
               show_counts: bool = True, row_labels=None):
    """Stacked horizontal bars of the class shares (%) per row (``row_labels`` override the labels), segments under
    ``min_label`` % unlabelled, "cells / errors" at the right (``show_counts``); returns the Axes."""
    _check(data)
    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 0.42 * len(data) + 0.8))
    labels = list(row_labels) if row_labels is not None else data["label"].astype(str).tolist()
    y = np.arange(len(data))
    left = np.zeros(len(data))
    for cls in tx.ATTRIBUTION_CLASSES:
        vals = data[cls].to_numpy(float)
        vals = np.where(np.isfinite(vals), vals, 0.0)
        ax.barh(y, vals, left=left, height=0.68, color=CLASS_COLORS[cls], edgecolor="white", linewidth=0.6,
                label=tx.ATTRIBUTION_LABELS[cls])
        for yy, l0, v in zip(y, left, vals):
            if v >= min_label:
                r, g, b = (int(CLASS_COLORS[cls][i:i + 2], 16) / 255 for i in (1, 3, 5))
                dark = (0.299 * r + 0.587 * g + 0.114 * b) < 0.55
                ax.text(l0 + v / 2, yy, f"{v:.0f}", ha="center", va="center", fontsize=6.8,
                        color="white" if dark else "black")
        left = left + vals
    if show_counts:
        for yy, c, n in zip(y, data["n_cells"], data["n_errors"]):
            ax.text(101.5, yy, f"{int(c)} cells\n{int(n):,} errors", ha="left", va="center", fontsize=6.3,
                    color="#444444", linespacing=0.95)
    ax.set_yticks(y, labels)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xticks([0, 25, 50, 75, 100])
    avg = str(data["average"].iloc[0]) if "average" in data.columns and len(data) else "macro"
    ax.set_xlabel("Share of attributed errors (%, " + ("macro-averaged over cells)" if avg == "macro" else "pooled)"))
    ax.spines["left"].set_visible(False)
    ax.tick_params(axis="y", length=0)
    if title:
        ax.set_title(title, loc="left")
    return ax


def _legend(fig) -> None:
    handles = [mpatches.Patch(color=CLASS_COLORS[c], label=tx.ATTRIBUTION_LABELS[c]) for c in tx.ATTRIBUTION_CLASSES]
    fig.legend(handles=handles, loc="outside upper center", ncol=len(handles), frameon=False)


@styled
def figure7(data: pd.DataFrame, *, title: str | None = None):
    """Figure 7: class shares by memory operation (left) and evidence type (right), from the stacked
    ``class_proportions`` rows of both (told apart by ``by``)."""
    _check(data)
    panels = [b for b in ("operation", "evidence_type") if b in set(data["by"])]
    if not panels:
        raise InputError("data has no rows with by='operation' or by='evidence_type'")
    fig, axes = plt.subplots(1, len(panels), figsize=(4.3 * len(panels) + 0.6, 2.4), constrained_layout=True,
                             squeeze=False)
    reserve_footer(fig)
    for ax, b in zip(axes[0], panels):
        class_bars(data[data["by"] == b], ax=ax, title=_TITLES[b])
    _legend(fig)
    return finish(fig, title)


@styled
def figure10(data: pd.DataFrame, *, title: str | None = None):
    """Figure 10: class shares by question subtype, rows labelled with their operation."""
    _check(data)
    labels = [f"{tx.OPERATION_LABELS[tx.SUBTYPE_OPERATION[g]]} \u00b7 {lab}" if g in tx.SUBTYPE_OPERATION else lab
              for g, lab in zip(data["group"], data["label"])]
    fig, ax = plt.subplots(figsize=(6.4, 0.36 * len(data) + 1.3), constrained_layout=True)
    reserve_footer(fig)
    class_bars(data, ax=ax, row_labels=labels, title=_TITLES["subtype"])
    ops = [tx.SUBTYPE_OPERATION.get(g) for g in data["group"]]
    for i in range(1, len(ops)):
        if ops[i] != ops[i - 1]:
            ax.axhline(i - 0.5, color="#999999", lw=0.7, ls=":")
    _legend(fig)
    return finish(fig, title)
