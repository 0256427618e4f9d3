"""Figures of the Audio MultiChallenge runs report: APR and ARS per system and axis, the paired differences between
systems and the rubric items met, drawn from :mod:`voxmem_analysis.analysis.amc_runs`' tables."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from voxmem_analysis.plots.amc import AXIS_COLORS
from voxmem_analysis.plots.style import HEATMAP_CMAP, SERIES_COLORS, fit_label, fit_labels, styled

__all__ = ["plot_apr_ars", "plot_differences", "plot_rubric_rates"]

_MARKERS = ("o", "s", "D", "^")
_OVERALL = "overall"


def _axis_order(values) -> list[str]:
    """The axes in the order given, the overall row last."""
    seen = list(dict.fromkeys(str(v) for v in values))
    return [v for v in seen if v != _OVERALL] + ([_OVERALL] if _OVERALL in seen else [])


def _axis_label(axis: str, names: dict | None) -> str:
    if axis == _OVERALL:
        return "Overall"
    name = (names or {}).get(axis)
    return f"{axis}: {name}" if name else axis


def _dodge(k: int, width: float = 0.72) -> np.ndarray:
    """Offsets of ``k`` points around a row's centre."""
    return np.zeros(1) if k == 1 else np.linspace(-width / 2, width / 2, k)


def _interval_panel(ax, rows: pd.DataFrame, groups: list, keys, col: str, *, group_col: str, key_col: str,
                    style) -> None:
    """Dots with horizontal intervals of ``col``: a row per group, a dodged dot per key (``style(i)``: colour, marker)."""
    lo, hi = f"{col}_ci_low", f"{col}_ci_high"
    offsets = _dodge(len(keys))
    for i, key in enumerate(keys):
        part = rows[rows[key_col].astype(str) == str(key)]
        pos = {str(g): j for j, g in enumerate(groups)}
        y = np.array([pos[str(g)] for g in part[group_col]], dtype=float) + offsets[i]
        x = part[col].to_numpy(dtype=float)
        err = np.vstack([x - part[lo].to_numpy(dtype=float), part[hi].to_numpy(dtype=float) - x])
        color, marker = style(i)
        ax.errorbar(x, y, xerr=np.clip(np.nan_to_num(err), 0, None), fmt=marker, ms=4.5, color=color, ecolor=color,
                    elinewidth=1.2, capsize=2, label=str(key), clip_on=False, zorder=3)
    ax.set_yticks(np.arange(len(groups)))
    ax.set_ylim(len(groups) - 0.5, -0.5)
    ax.grid(axis="x", color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)


def _legend_below(fig, handles, labels, *, title: str) -> float:
    """A legend under the panels; returns the share of the figure's height it takes."""
    ncol = max(1, min(len(labels), 3 if max(len(s) for s in labels) > 24 else 4))
    lines = sum(max(1, s.count("\n") + 1) for s in labels[::ncol])
    fig.legend(handles, labels, loc="lower center", ncol=ncol, frameon=False, title=title, fontsize=7.5,
               title_fontsize=8, bbox_to_anchor=(0.5, 0.0))
    return (0.18 * lines + 0.25) / fig.get_figheight()


def _bands(ax, n: int) -> None:
    """A light band behind every other row, so each row's dots read as one group."""
    for j in range(0, n, 2):
        ax.axhspan(j - 0.5, j + 0.5, color="#f3f3f3", zorder=0, linewidth=0)


def _n_label(table: pd.DataFrame, axis: str) -> str:
    """``(12 tasks)`` when every system has that many tasks on ``axis``, else ''."""
    if "n_tasks" not in table.columns:
        return ""
    n = set(table.loc[table["axis"].astype(str) == axis, "n_tasks"].dropna().astype(int))
    return f"\n({n.pop()} tasks)" if len(n) == 1 else ""


@styled
def plot_apr_ars(table: pd.DataFrame, *, axis_names: dict | None = None):
    """APR (left) and ARS (right), %, with their intervals: a row per axis (``overall`` last), a dot per system
    (``amc_slice`` columns; ``axis_names``: a display name per axis code)."""
    systems = list(dict.fromkeys(table["system"].astype(str)))
    axes = _axis_order(table["axis"])
    fig, panels = plt.subplots(1, 2, sharey=True, figsize=(7.6, 1.6 + len(axes) * (0.3 + 0.16 * len(systems))
                                                             + 0.2 * ((len(systems) + 2) // 3)))
    for ax, col, name in zip(panels, ("apr", "ars"), ("APR: tasks passed (%)", "ARS: rubric items met per task (%)")):
        _bands(ax, len(axes))
        _interval_panel(ax, table, axes, systems, col, group_col="axis", key_col="system",   # past eight: next marker
                        style=lambda i: (SERIES_COLORS[i % 8], _MARKERS[(i // 8) % len(_MARKERS)]))
        ax.set(xlim=(-3, 103), xlabel=name)
        if _OVERALL in axes and len(axes) > 1:
            ax.axhline(axes.index(_OVERALL) - 0.5, color="#999999", linewidth=0.6)
    panels[0].set_yticklabels([fit_label(_axis_label(a, axis_names), 24) + _n_label(table, a) for a in axes])
    handles, _ = panels[0].get_legend_handles_labels()
    bottom = _legend_below(fig, handles, fit_labels(systems, 40, 2), title="system")
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return fig


@styled
def plot_differences(table: pd.DataFrame, *, axis_names: dict | None = None):
    """Paired differences (first − second system, pp) in APR and ARS with their intervals (``amc_compare`` columns): a
    row per pair, a dot per axis (``overall`` black), hollow where the interval includes zero."""
    t = table.assign(pair=[f"{fit_label(str(a), 30, 2)}\n\u2212 {fit_label(str(b), 30, 2)}"
                           for a, b in zip(table["system_a"], table["system_b"])])
    pairs = list(dict.fromkeys(t["pair"]))
    axes = _axis_order(t["axis"])
    colors = [AXIS_COLORS.get(a, "#333333") if a != _OVERALL else "#000000" for a in axes]
    fig, panels = plt.subplots(1, 2, sharey=True, figsize=(7.6, 1.6 + len(pairs) * (0.35 + 0.14 * len(axes))))
    for ax, col, name in zip(panels, ("apr", "ars"), ("APR difference (pp)", "ARS difference (pp)")):
        renamed = t.rename(columns={f"{col}_diff_ci_low": "d_ci_low", f"{col}_diff_ci_high": "d_ci_high",
                                    f"{col}_diff": "d"})
        _bands(ax, len(pairs))
        _interval_panel(ax, renamed, pairs, axes, "d", group_col="pair", key_col="axis",
                        style=lambda i: (colors[i], "o"))
        _hollow_if_zero_inside(ax, renamed, pairs, axes)
        ax.axvline(0, color="#555555", linewidth=0.8)
        span = np.nanmax(np.abs(renamed[["d_ci_low", "d_ci_high", "d"]].to_numpy(dtype=float)), initial=1.0)
        ax.set(xlim=(-min(100, span * 1.08 + 2), min(100, span * 1.08 + 2)), xlabel=name)
    panels[0].set_yticklabels(pairs)
    handles, _ = panels[0].get_legend_handles_labels()
    bottom = _legend_below(fig, handles, [_axis_label(a, axis_names) for a in axes],
                           title="axis (hollow: the interval includes 0)")
    fig.tight_layout(rect=(0, bottom, 1, 1))
    return fig


def _hollow_if_zero_inside(ax, rows: pd.DataFrame, pairs: list, axes: list) -> None:
    """White-filled markers over the dots whose interval holds zero."""
    offsets = _dodge(len(axes))
    inside = rows[(rows["d_ci_low"] <= 0) & (rows["d_ci_high"] >= 0)]
    pos = {p: j for j, p in enumerate(pairs)}
    for i, a in enumerate(axes):
        part = inside[inside["axis"].astype(str) == a]
        if len(part):
            ax.plot(part["d"].to_numpy(dtype=float), [pos[p] + offsets[i] for p in part["pair"]], "o", ms=2.6,
                    color="white", zorder=4, clip_on=False)


@styled
def plot_rubric_rates(table: pd.DataFrame, *, axis_names: dict | None = None):
    """Share of rubric items met (%) per system and axis (``overall`` last), each cell with its counts (columns
    ``system, axis, n_items, n_met, rate``)."""
    systems = list(dict.fromkeys(table["system"].astype(str)))
    axes = _axis_order(table["axis"])
    grid = table.assign(system=table["system"].astype(str), axis=table["axis"].astype(str)).set_index(["system", "axis"])
    rate = np.array([[grid["rate"].get((s, a), np.nan) for a in axes] for s in systems], dtype=float)
    fig, ax = plt.subplots(figsize=(1.6 + 1.15 * len(axes) + 1.6, 0.9 + 0.5 * len(systems)))
    im = ax.imshow(np.ma.masked_invalid(rate), cmap=HEATMAP_CMAP, vmin=0, vmax=100, aspect="auto")
    for i, s in enumerate(systems):
        for j, a in enumerate(axes):
            if (s, a) not in grid.index:
                continue
            r = grid.loc[(s, a)]
            ax.text(j, i, f"{r['rate']:.1f}%\n{int(r['n_met'])}/{int(r['n_items'])}", ha="center", va="center",
                    fontsize=7, color="white" if r["rate"] > 60 else "#222222")
    ax.set_xticks(np.arange(len(axes)), [_axis_label(a, axis_names).replace(": ", "\n") for a in axes])
    ax.set_yticks(np.arange(len(systems)), fit_labels(systems, 30, 2))
    ax.tick_params(length=0)
    ax.spines[:].set_visible(False)
    if _OVERALL in axes and len(axes) > 1:
        ax.axvline(axes.index(_OVERALL) - 0.5, color="white", linewidth=3)
    fig.colorbar(im, ax=ax, fraction=0.04, pad=0.02).set_label("rubric items met (%)")
    fig.tight_layout()
    return fig
