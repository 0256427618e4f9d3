"""Figures of the label-free analyses (:mod:`voxmem_analysis.analysis.verdicts`): each draws the frame it is given,
names as they appear in the data, and returns the Figure (or draws on ``ax=``)."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.colors import TwoSlopeNorm

from voxmem_analysis.plots.style import SERIES_COLORS, fit_labels, reserve_footer, styled, without_canvas_draw

__all__ = ["accuracy_dots", "scaling_curves", "comparison_matrix", "significance_mark"]
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<")
_SPECIAL = ("overall", "macro")


def _series(data: pd.DataFrame, col: str) -> list:
    return list(dict.fromkeys(data[col].tolist()))


def significance_mark(p: float) -> str:
    """``***`` p < 0.001, ``**`` p < 0.01, ``*`` p < 0.05, else empty (NaN: empty)."""
    if p is None or not np.isfinite(p):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def _facets(data: pd.DataFrame, facet: str | None) -> list:
    return _series(data, facet) if facet is not None and facet in data.columns else [None]


@styled
def accuracy_dots(data: pd.DataFrame, *, category: str = "question_type", series: str = "system",
                  value: str = "accuracy", facet: str | None = "budget", ax=None, title: str | None = None,
                  xlim=(-2, 102), legend: bool = True):
    """Dot plot of ``slice_accuracy``: accuracy per ``category`` (``overall``/``macro`` below a rule) and ``series``
    with interval bars, a panel per ``facet`` value (or on ``ax``)."""
    cats = [c for c in _series(data, category) if c not in _SPECIAL]
    cats += [c for c in _SPECIAL if c in set(data[category])]
    systems = _series(data, series)
    facets = [None] if ax is not None else _facets(data, facet)
    if ax is None:
        h = 0.36 * len(cats) * max(1, len(systems)) ** 0.5 + 1.5
        fig, axes = plt.subplots(1, len(facets), figsize=(3.9 * len(facets) + 1.6, h), sharey=True,
                                 squeeze=False, constrained_layout=True)
        reserve_footer(fig)
        axs = list(axes[0])
    else:
        fig, axs = ax.figure, [ax]
    for a, fv in zip(axs, facets):
        part = data if fv is None else data[data[facet] == fv]
        _dots(a, part, cats, systems, category, series, value)
        a.set_xlim(*xlim)
        if fv is not None:
            a.set_title(f"{facet} {fv}", fontsize=9)
    if title:
        (fig.suptitle if len(axs) > 1 else axs[0].set_title)(title, fontsize=9)
    if legend:
        handles, labels = axs[0].get_legend_handles_labels()
        if ax is None:
            fig.legend(handles, labels, loc="outside upper center", ncol=min(len(systems), 4), frameon=False,
                       fontsize=8)
        else:
            ax.legend(handles, labels, loc="lower left", bbox_to_anchor=(0, 1.0), ncol=min(len(systems), 3),
                      frameon=False, fontsize=7.5)
    return fig


def _dots(ax, data, cats, systems, category, series, value) -> None:
    k = len(systems)
    names = fit_labels(systems)
    step = 0.72 / max(k, 1)
    for j, s in enumerate(systems):
        sub = data[data[series] == s].set_index(category)
        ys, xs, lo, hi = [], [], [], []
        for i, c in enumerate(cats):
            if c not in sub.index:
                continue
            r = sub.loc[c]
            ys.append(i + (j - (k - 1) / 2) * step)
            xs.append(float(r[value]))
            rlo, rhi = r[f"{value}_ci_low"], r[f"{value}_ci_high"]
            lo.append(float(r[value]) - float(rlo) if pd.notna(rlo) else 0.0)
            hi.append(float(rhi) - float(r[value]) if pd.notna(rhi) else 0.0)
        color = SERIES_COLORS[j % len(SERIES_COLORS)]
        ax.errorbar(xs, ys, xerr=[lo, hi], fmt=_MARKERS[j % len(_MARKERS)], color=color, ms=5, lw=1.1,
                    capsize=2, label=names[j])
    n_types = len([c for c in cats if c not in _SPECIAL])
    if n_types < len(cats):
        ax.axhline(n_types - 0.5, color="#999999", lw=0.6, ls="--")
    ax.set_yticks(range(len(cats)), [str(c).capitalize() if c in _SPECIAL else str(c) for c in cats])
    ax.set_ylim(len(cats) - 0.5, -0.5)
    ax.set_xlabel("Accuracy (%)")
    ax.grid(axis="x", color="#e5e5e5", lw=0.6)
    ax.set_axisbelow(True)


@styled
def scaling_curves(data: pd.DataFrame, *, budget: str = "budget", series: str = "system", panel: str = "question_type",
                   value: str = "accuracy", ncols: int = 4, title: str | None = None):
    """Accuracy against budget (``scaling_table``): a panel per category (``overall`` last), a line per series."""
    panels = [p for p in _series(data, panel) if p not in _SPECIAL] + [p for p in _SPECIAL if p in set(data[panel])]
    budgets = _series(data, budget)
    x = {b: i for i, b in enumerate(budgets)}
    systems = _series(data, series)
    ncols = min(ncols, len(panels))
    nrows = int(np.ceil(len(panels) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(1.9 * ncols + 0.6, 1.85 * nrows + 0.9), sharey=True,
                             squeeze=False, constrained_layout=True)
    reserve_footer(fig)
    k = len(systems)
    names = fit_labels(systems)
    off = 0.1
    for a, p in zip(axes.flat, panels):
        for j, s in enumerate(systems):
            sub = data[(data[panel] == p) & (data[series] == s)]
            if sub.empty:
                continue
            xs = np.array([x[b] for b in sub[budget]], dtype=float) + (j - (k - 1) / 2) * off
            y = sub[value].to_numpy(float)
            err = np.vstack([y - sub[f"{value}_ci_low"].to_numpy(float), sub[f"{value}_ci_high"].to_numpy(float) - y])
            a.errorbar(xs, y, yerr=err, color=SERIES_COLORS[j % len(SERIES_COLORS)],
                       marker=_MARKERS[j % len(_MARKERS)], ms=4, lw=1.3, capsize=2, label=names[j])
        a.set_title(str(p).capitalize() if p in _SPECIAL else str(p), fontsize=8, fontweight="bold" if p in _SPECIAL else None)
        a.set_xticks(range(len(budgets)), [str(b) for b in budgets])
        a.set_xlim(-0.4, len(budgets) - 0.6)
        a.set_ylim(-3, 103)
        a.grid(axis="y", color="#e5e5e5", lw=0.6)
        a.set_axisbelow(True)
    for a in axes.flat[len(panels):]:
        a.axis("off")
    for a in axes[:, 0]:
        a.set_ylabel("Accuracy (%)")
    handles, labels = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=min(k, 4), frameon=False, fontsize=8)
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


@styled
def comparison_matrix(data: pd.DataFrame, *, p_value: str = "p_holm", facet: str | None = "budget", ax=None,
                      title: str | None = None, limit: float | None = None):
    """Heatmap of ``compare_systems``: cell (a, b) the difference a − b (pp), marks from ``p_value``; a panel per
    ``facet`` value, the colour half-range ``limit`` (default the largest difference, at least 10) shared."""
    facets = [None] if ax is not None else _facets(data, facet)
    diffs = data["diff"].to_numpy(float)
    lim = limit or max(10.0, float(np.nanmax(np.abs(diffs))) if np.isfinite(diffs).any() else 10.0)
    norm = TwoSlopeNorm(vcenter=0.0, vmin=-lim, vmax=lim)
    systems = list(dict.fromkeys([*data["system_a"], *data["system_b"]]))
    n = len(systems)
    if ax is None:
        fig, axes = plt.subplots(1, len(facets), figsize=((1.0 * n + 1.6) * len(facets) + 1.0, 0.85 * n + 1.9),
                                 squeeze=False, constrained_layout=True)
        reserve_footer(fig)
        axs = list(axes[0])
    else:
        fig, axs = ax.figure, [ax]
    cmap = plt.get_cmap("RdBu")
    im = None
    for a, fv in zip(axs, facets):
        part = data if fv is None else data[data[facet] == fv]
        im = _matrix(a, part, systems, p_value, cmap, norm)
        if fv is not None:
            a.set_title(f"{facet} {fv}", fontsize=9)
    cb = fig.colorbar(im, ax=axs, shrink=0.8)
    cb.set_label("row − column (pp)")
    fig.text(0.01, 0.0, f"marks: {p_value} < 0.05 *, < 0.01 **, < 0.001 ***", fontsize=7, ha="left", va="bottom")
    if title:
        fig.suptitle(title, fontsize=9)
    return fig


def _matrix(ax, data, systems, p_value, cmap, norm):
    n = len(systems)
    pos = {s: i for i, s in enumerate(systems)}
    M = np.full((n, n), np.nan)
    marks = [["" for _ in range(n)] for _ in range(n)]
    for r in data.itertuples(index=False):
        i, j = pos[r.system_a], pos[r.system_b]
        d = float(r.diff)
        M[i, j], M[j, i] = d + 0.0, -d + 0.0
        marks[i][j] = marks[j][i] = significance_mark(float(getattr(r, p_value)))
    labels = np.array([[f"{M[i, j]:+.1f}{marks[i][j]}" if np.isfinite(M[i, j]) else "" for j in range(n)]
                       for i in range(n)], dtype=object)
    # seaborn draws the annotated cells and picks black/white text from each cell's luminance;
    # the norm is symmetric around 0, i.e. linear from vmin to vmax
    # (without its forced draw of the figure: a tick-label overlap test, and there are no tick labels yet)
    with without_canvas_draw(ax.figure):
        sns.heatmap(M, annot=labels, fmt="", cmap=cmap, vmin=norm.vmin, vmax=norm.vmax, cbar=False, ax=ax,
                    annot_kws={"fontsize": 8}, xticklabels=False, yticklabels=False)
    im = ax.collections[0]
    for i in range(n):
        ax.add_patch(plt.Rectangle((i, i), 1, 1, color="#eeeeee"))
    names = fit_labels(systems)
    ax.set_xticks(np.arange(n) + 0.5, names, rotation=30, ha="right")
    ax.set_yticks(np.arange(n) + 0.5, names, rotation=0)
    ax.spines[:].set_visible(False)
    return im
