"""Figures of the main results (Figures 4, 5 and 8, the Table 16 scatter), drawn from the frames of
:mod:`voxmem_analysis.analysis.results` (only pivoted into the grid they are drawn on)."""
from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib import colors
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.findings import MIN_CORRELATION_POINTS
from voxmem_analysis.errors import InputError
from voxmem_analysis.plots.style import (ACC_RANGE, GROUP_COLORS, HEATMAP_CMAP, colorbar_extend, finish, fit_labels,
                                         from_zero, place_labels, reserve_footer, styled, without_canvas_draw)

__all__ = ["evidence_heatmaps", "operation_heatmap", "operation_heatmaps", "answerable_refusal_scatter"]

_EV_TICKS = {
    "speech_semantics": "Speech\nSemantics", "speaker_information": "Speaker\nIdentity",
    "paralinguistic_information": "Paralinguistic\nCues", "environmental_sound": "Environmental\nSound",
    "overall": "Overall",
}
_NA_COLOR = "#ececec"


def _annotated_heatmap(ax, grid: pd.DataFrame, labels: np.ndarray, *, cmap: str,
                       vrange: tuple[float, float], fontsize: float) -> None:
    """``seaborn.heatmap`` of ``grid`` annotated with ``labels`` (seaborn picks black or white text per cell), without
    its forced draw of the figure; axes bare."""
    with without_canvas_draw(ax.figure):
        sns.heatmap(grid, annot=labels, fmt="", cmap=cmap, vmin=vrange[0], vmax=vrange[1], cbar=False,
                    ax=ax, annot_kws={"fontsize": fontsize}, xticklabels=False, yticklabels=False)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.tick_params(length=0)
    ax.spines[:].set_visible(False)


def _cell_of(text) -> tuple[int, int]:
    """(row, column) of a seaborn annotation (anchored at the cell centre)."""
    x, y = text.get_position()
    return int(np.floor(y)), int(np.floor(x))


def _n_models(k: int) -> str:
    return f"{k} model" if k == 1 else f"{k} models"


def _budgets_in(data: pd.DataFrame, budgets) -> list[str]:
    have = set(data["budget"].astype(str))
    if budgets is None:
        return [b for b in tx.BUDGETS if b in have]
    missing = [b for b in budgets if b not in have]
    if missing:
        raise InputError(f"budgets {missing} are not in the data (it has {sorted(have, key=tx.BUDGETS.index)})")
    return [b for b in tx.BUDGETS if b in budgets]


@styled
def evidence_heatmaps(data: pd.DataFrame, *, budgets: Sequence[str] | None = None, annotate: bool = True,
                      vrange: tuple[float, float] = ACC_RANGE, cmap: str = HEATMAP_CMAP, title: str | None = None):
    """Figure 4 from :func:`~voxmem_analysis.analysis.results.evidence_panels`: one heatmap per budget, models ×
    evidence types, group means below a thick line; a model not run at a budget shows grey "–" cells; values
    beyond ``vrange`` (the paper's 0-70 %) take the end colour and an arrow on the bar."""
    bs = _budgets_in(data, budgets)
    # row order: union over budgets, as the analysis ordered it (proprietary first, means last)
    model_rows = list(dict.fromkeys(data.loc[data["kind"] == "model", "row"]))
    mean_rows = list(dict.fromkeys(data.loc[data["kind"] == "mean", "row"]))
    rows = model_rows + mean_rows
    group_of = dict(zip(data["row"], data["group"]))
    cols = [e for e in [*tx.EVIDENCE_TYPES, "overall"] if e in set(data["evidence_type"])]
    n_prop = sum(1 for r in model_rows if group_of.get(r) == "proprietary")
    cm = plt.get_cmap(cmap)
    norm = colors.Normalize(*vrange)
    if not bs:
        raise InputError("no budget to draw: the data is empty")
    height = 0.27 * len(rows) + 1.6 + (0.3 if title else 0.0)
    fig, axes = plt.subplots(1, len(bs), figsize=(2.05 * len(bs) + 2.6, max(height, 2.6)),
                             sharey=True, squeeze=False, constrained_layout=True)
    axes = axes[0]
    for ax, b in zip(axes, bs):
        sub = data[data["budget"].astype(str) == b]
        grid = sub.pivot_table(index="row", columns="evidence_type", values="accuracy", sort=False)
        grid = grid.reindex(index=rows, columns=cols)
        arr = grid.to_numpy(float)
        if annotate:
            labels = np.vectorize(lambda v: f"{v:.1f}")(arr)
            _annotated_heatmap(ax, grid, labels, cmap=cmap, vrange=vrange, fontsize=6.6)
            for t in ax.texts:
                i, j = _cell_of(t)
                t.set_fontweight("bold" if rows[i] in mean_rows or cols[j] == "overall" else "normal")
            for i, j in zip(*np.nonzero(~np.isfinite(arr))):
                ax.text(j + 0.5, i + 0.5, "\u2013", ha="center", va="center", fontsize=6.6, color="#888888")
        else:
            _annotated_heatmap(ax, grid, np.full(arr.shape, ""), cmap=cmap, vrange=vrange, fontsize=6.6)
        ax.set_facecolor(_NA_COLOR)
        n_models = int(sub.loc[sub["kind"] == "model", "row"].nunique())
        ax.set_title(f"{b}  ({_n_models(n_models)})")
        ax.set_xticks(np.arange(len(cols)) + 0.5, [_EV_TICKS.get(c, c) for c in cols], rotation=90, fontsize=7)
        ax.set_yticks(np.arange(len(rows)) + 0.5, fit_labels(rows), fontsize=7)
        if 0 < n_prop < len(model_rows):
            ax.axhline(n_prop, color="black", lw=0.8)
        if mean_rows:
            ax.axhline(len(model_rows), color="black", lw=1.8)
        if "overall" in cols:
            ax.axvline(cols.index("overall"), color="white", lw=2.5)
    sm = plt.cm.ScalarMappable(norm=norm, cmap=cm)
    drawn = data.loc[data["budget"].astype(str).isin(bs), "accuracy"]
    cb = fig.colorbar(sm, ax=list(axes), shrink=0.6 if len(rows) > 4 else 0.9, pad=0.02,
                      aspect=30 if len(rows) > 4 else 15, extend=colorbar_extend(drawn, vrange))
    cb.set_label("Accuracy (%)")
    reserve_footer(fig)
    return finish(fig, title)


@styled
def operation_heatmap(data: pd.DataFrame, *, budget: str | None = None, ax=None, show_n: bool = True,
                      vrange: tuple[float, float] = ACC_RANGE, cmap: str = HEATMAP_CMAP, colorbar: bool = True,
                      title: str | None = None):
    """Figure 5 from :func:`~voxmem_analysis.analysis.results.operation_evidence`: the operation × evidence heatmap
    of one ``budget`` (required when ``data`` holds several), the question count under each score, the
    Speech-Semantics IE cell hatched as excluded by design; on ``ax`` when given."""
    bs = _budgets_in(data, None)
    if budget is None:
        if len(bs) != 1:
            raise InputError(f"data holds budgets {bs}; pass budget=")
        budget = bs[0]
    sub = data[data["budget"].astype(str) == budget]
    ops, evs = list(tx.OPERATIONS), list(tx.EVIDENCE_TYPES)
    acc = sub.pivot_table(index="operation", columns="evidence_type", values="accuracy").reindex(index=ops, columns=evs)
    nq = sub.pivot_table(index="operation", columns="evidence_type", values="n_questions").reindex(index=ops, columns=evs)
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(4.6, 3.3), constrained_layout=True)
    valid = np.array([[(op, ev) in tx.VALID_CELLS for ev in evs] for op in ops])
    shown = acc.where(valid)
    labels = np.full(acc.shape, "", dtype=object)
    for i, j in zip(*np.nonzero(np.isfinite(shown.to_numpy(float)))):
        n = nq.iloc[i, j]
        labels[i, j] = (f"{acc.iloc[i, j]:.1f}\nn={int(n)}" if show_n and np.isfinite(n)
                        else f"{acc.iloc[i, j]:.1f}")
    _annotated_heatmap(ax, shown, labels, cmap=cmap, vrange=vrange, fontsize=8.5)
    for t in ax.texts:  # the count line smaller than the score: split into two texts
        if "\n" in t.get_text():
            score, count = t.get_text().split("\n")
            x, y = t.get_position()
            t.set_text(score)
            t.set_y(y - 0.1)
            ax.text(x, y + 0.22, count, ha="center", va="center", fontsize=6.5, color=t.get_color())
    ax.set_facecolor("white")
    for i, op in enumerate(ops):
        for j, ev in enumerate(evs):
            if not valid[i, j]:
                ax.add_patch(Rectangle((j, i), 1, 1, facecolor="#f4f4f4", edgecolor="#9a9a9a",
                                       hatch="////", lw=0))
                ax.text(j + 0.5, i + 0.5, "excluded\nby design", ha="center", va="center", fontsize=6.5,
                        color="#555555", bbox=dict(facecolor="#f4f4f4", edgecolor="none", pad=0.6))
            elif not np.isfinite(acc.iloc[i, j]):
                ax.text(j + 0.5, i + 0.5, "no items", ha="center", va="center", fontsize=6.5, color="#888888")
    ax.set_xticks(np.arange(len(evs)) + 0.5, [_EV_TICKS[e] for e in evs], fontsize=7.5, rotation=0)
    ax.set_yticks(np.arange(len(ops)) + 0.5, [tx.OPERATION_LABELS[o] for o in ops], rotation=0)
    if title is None:
        k = int(sub["n_models"].max()) if "n_models" in sub and len(sub) else None
        title = f"{budget}  ({_n_models(k)})" if k else budget
    ax.set_title(title)
    if colorbar and fig is not None:
        sm = plt.cm.ScalarMappable(norm=colors.Normalize(*vrange), cmap=plt.get_cmap(cmap))
        fig.colorbar(sm, ax=ax, shrink=0.85, pad=0.02,
                     extend=colorbar_extend(shown.to_numpy(float), vrange)).set_label("Mean accuracy (%)")
    if fig is not None:
        reserve_footer(fig)
    return fig if fig is not None else ax.figure


@styled
def operation_heatmaps(data: pd.DataFrame, *, budgets: Sequence[str] | None = None, show_n: bool = True,
                       vrange: tuple[float, float] = ACC_RANGE, cmap: str = HEATMAP_CMAP, title: str | None = None):
    """Figure 8: :func:`operation_heatmap` side by side per budget, one colour bar."""
    bs = _budgets_in(data, budgets)
    fig, axes = plt.subplots(1, len(bs), figsize=(3.5 * len(bs) + 0.8, 3.3), squeeze=False,
                             constrained_layout=True, sharey=True)
    for ax, b in zip(axes[0], bs):
        operation_heatmap(data, budget=b, ax=ax, show_n=show_n, vrange=vrange, cmap=cmap, colorbar=False)
    for ax in axes[0][1:]:
        ax.tick_params(labelleft=False)
    sm = plt.cm.ScalarMappable(norm=colors.Normalize(*vrange), cmap=plt.get_cmap(cmap))
    drawn = data.loc[data["budget"].astype(str).isin(bs), "accuracy"]
    fig.colorbar(sm, ax=list(axes[0]), shrink=0.85, pad=0.01, aspect=25,
                 extend=colorbar_extend(drawn, vrange)).set_label("Mean accuracy (%)")
    reserve_footer(fig)
    return finish(fig, title)


def _fmt_p(p: float) -> str:
    if not np.isfinite(p):
        return "p = n/a"
    return "p < 0.001" if p < 0.001 else f"p = {p:.2g}"


@styled
def answerable_refusal_scatter(data: pd.DataFrame, *, summary: pd.DataFrame | None = None, groups: dict | None = None,
                               ax=None, title: str | None = None):
    """Table 16 as a scatter: answerable vs AR accuracy per model coloured by ``groups`` (model → access group), ρ
    of ``summary`` in the title (none over fewer than ``MIN_CORRELATION_POINTS`` models), the always-abstain bound."""
    groups = groups or {}
    fig = None
    if ax is None:
        fig, ax = plt.subplots(figsize=(5.6, 4.2), constrained_layout=True)
        reserve_footer(fig)
    x, y = data["answerable"].to_numpy(float), data["ar"].to_numpy(float)
    cols = [GROUP_COLORS.get(groups.get(m, "unknown"), GROUP_COLORS["unknown"]) for m in data["model"]]
    xmax = float(np.nanmax(x)) if len(x) else 1.0
    ymax = float(np.nanmax(y)) if len(y) else 1.0
    ax.set_xlim(*from_zero(max(10.0, xmax * 1.35)))
    ax.set_ylim(-3, max(10.0, ymax * 1.22))
    if summary is not None and len(summary):
        s = summary.iloc[0]
        at = f"{s['budget']}: " if "budget" in s.index else ""
        k = int(s["n_models"])
        if np.isfinite(s["rho"]) and k >= MIN_CORRELATION_POINTS:
            ci = (f" [{s['rho_ci_low']:.2f}, {s['rho_ci_high']:.2f}]"
                  if np.isfinite(s.get("rho_ci_low", np.nan)) else "")
            corr = f"Spearman \u03c1 = {s['rho']:.2f}{ci} ({_fmt_p(s['p_value'])}, {_n_models(k)})"
        else:
            corr = f"no correlation shown ({_n_models(k)}; fewer than {MIN_CORRELATION_POINTS})"
        ab = s["always_abstain"]
        tail = f"; always abstaining scores {ab:.1f}% overall" if np.isfinite(ab) else ""
        ax.set_title(at + corr + tail, fontsize=8, fontweight="normal")
    ax.scatter(x, y, c=cols, s=30, zorder=3, edgecolor="white", linewidth=0.6)
    present = [g for g in ("proprietary", "open_weight") if g in set(groups.get(m) for m in data["model"])]
    if present:
        ax.figure.legend([Line2D([], [], marker="o", ls="", color=GROUP_COLORS[g]) for g in present],
                         [{"proprietary": "Proprietary", "open_weight": "Open-weight"}[g] for g in present],
                         loc="outside upper right", frameon=False, ncol=len(present))
    place_labels(ax, x, y, fit_labels(data["model"]))
    ax.set_xlabel("Answerable accuracy (%)")
    ax.set_ylabel("AR accuracy (%, correct refusals)")
    if title:
        ax.set_title(title)
    return fig if fig is not None else ax.figure
