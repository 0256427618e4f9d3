"""Figures of the Audio MultiChallenge paper (Figures 5-9), drawn from the tables of
:mod:`voxmem_analysis.analysis.amc`."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.lines import Line2D

from voxmem_analysis.analysis.findings import MIN_CORRELATION_POINTS
from voxmem_analysis.plots.style import fit_labels, from_zero, place_labels, styled

__all__ = ["plot_grouped", "plot_audio_cue", "plot_rubric_types", "plot_bins", "plot_length", "AXIS_COLORS"]

#: Okabe-Ito colours per AMC axis (and "All").
AXIS_COLORS = {"IM": "#0072B2", "IR": "#E69F00", "SC": "#009E73", "VE": "#CC79A7", "All": "#333333"}
_PAIR = ("#D55E00", "#56B4E9", "#009E73")


def _short(labels, lines: int = 2) -> list[str]:
    """``"Model|Text"`` as ``"Model (T)"``, fitted to ``lines`` lines of 40 characters, no two alike."""
    parts = [str(label).partition("|") for label in labels]
    return fit_labels([f"{model} ({mod[0]})" if mod else model for model, _, mod in parts], width=40, lines=lines)


@styled
def plot_grouped(table: pd.DataFrame, columns, *, xlabel: str, title: str, colors=_PAIR):
    """Horizontal grouped bars: one group per system row of ``table`` (the ``Mean`` row left out), one bar per
    column."""
    rows = [r for r in table.index if str(r) != "Mean"]
    data = table.loc[rows, list(columns)]
    fig, ax = plt.subplots(figsize=(6.4, 0.34 * len(rows) + 1.2))
    h = 0.8 / len(columns)
    y = np.arange(len(rows))
    for i, (c, col) in enumerate(zip(columns, colors)):
        ax.barh(y + (i - (len(columns) - 1) / 2) * h, data[c].to_numpy(), height=h, color=col, label=str(c))
    ax.set_yticks(y, _short(rows))
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_xlim(0, 100)
    ax.set_title(title, loc="left")
    ax.grid(axis="x", color="#dddddd", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.legend(loc="lower right", frameon=False, ncol=len(columns))
    fig.tight_layout()
    return fig


def plot_audio_cue(table: pd.DataFrame, *, metric: str = "APR"):
    """Figure 5: Inference Memory ``metric`` for audio-cue vs semantic tasks per system."""
    n = table.iloc[0]
    title = (f"Inference Memory {metric}:\naudio-cue (n={int(n['Audio-cue n'])}) vs "
             f"semantic (n={int(n['Semantic n'])}) tasks")
    t = table.rename(columns={f"Audio-cue {metric}": "Audio-cue", f"Semantic {metric}": "Semantic"})
    return plot_grouped(t, ["Semantic", "Audio-cue"], xlabel=f"{metric} (%)", title=title)


def plot_rubric_types(table: pd.DataFrame, types, *, title: str):
    """Figures 6 and 7: ARS by rubric type (``types``: the type columns)."""
    counts = ", ".join(f"{t} n={int(table.iloc[0][f'{t} n'])}" for t in types if f"{t} n" in table.columns)
    return plot_grouped(table, list(types), xlabel="ARS (%)", title=f"{title}\n(tasks: {counts})")


def _bin_labels(part: pd.DataFrame, cols, min_n: int) -> list[str]:
    """x labels: the bin, its tasks and the tasks per axis (``*`` below ``min_n``)."""
    out = []
    for i in part.index:
        per = "/".join(f"{int(part.loc[i, f'{c} n'])}" + ("*" if part.loc[i, f"{c} n"] < min_n else "")
                       for c in cols if c != "All" and f"{c} n" in part.columns)
        out.append(f"{str(i).split('|', 1)[1]}\nn={int(part.loc[i, 'All n'])}\n{per}")
    return out


def _draw_bin_panel(ax, part: pd.DataFrame, cols, min_n: int) -> None:
    """One panel of Figure 8: a line per axis; points on fewer than ``min_n`` tasks open, grey and dotted, a bin with
    fewer in all shaded."""
    x = np.arange(len(part))
    for c in cols:
        y = part[c].to_numpy(dtype=float)
        n = part[f"{c} n"].to_numpy(dtype=float) if f"{c} n" in part.columns else np.full(len(y), np.inf)
        small = n < min_n
        width = 2.0 if c == "All" else 1.2
        ax.plot(x, y, color=AXIS_COLORS[c], linewidth=0.8, linestyle=":", alpha=0.7)  # joins small bins
        ax.plot(x, np.where(small, np.nan, y), marker="o", ms=3.5, color=AXIS_COLORS[c], label=c, linewidth=width)
        if small.any():  # unclipped, so a 0 % point shows whole (an empty unclipped line upsets tight_layout)
            ax.plot(x[small], y[small], linestyle="none", marker="o", ms=4.5, markerfacecolor="white",
                    markeredgecolor="#999999", markeredgewidth=1.0, zorder=4, clip_on=False)
    for k, total in enumerate(part["All n"].to_numpy(dtype=float)):
        if total < min_n:
            ax.axvspan(k - 0.5, k + 0.5, color="#eeeeee", zorder=0)
    ax.set_xticks(x, _bin_labels(part, cols, min_n), fontsize=7)
    ax.grid(axis="y", color="#dddddd", linewidth=0.6)


@styled
def plot_bins(table: pd.DataFrame, *, min_n: int = 5):
    """Figure 8: APR by (a) turn count and (b) cumulative user-audio bin, one line per axis, the tasks under each
    x label; points on fewer than ``min_n`` tasks marked, empty bins left out."""
    cols = [c for c in ("IM", "IR", "SC", "VE", "All") if c in table.columns]
    fig, panels = plt.subplots(1, 2, figsize=(10.0, 3.9), sharey=True)
    for ax, var, name in zip(panels, ("turns", "duration"), ("(a) turn count", "(b) cumulative user audio")):
        part = table[[str(i).startswith(var + "|") for i in table.index]]
        part = part[part["All n"].fillna(0) > 0]  # an empty bin has nothing to draw
        _draw_bin_panel(ax, part, cols, min_n)
        ax.set_title(name, loc="left")
    panels[0].set_ylabel("APR (%), pooled over systems")
    panels[0].set_ylim(*from_zero(panels[0].get_ylim()[1]))   # a 0 % point off the axis line
    handles, labels = panels[1].get_legend_handles_labels()
    handles.append(Line2D([], [], linestyle=":", marker="o", markerfacecolor="white", markeredgecolor="#999999",
                          color="#999999"))
    labels.append(f"< {min_n} tasks")
    panels[1].legend(handles, labels, frameon=False, loc="upper right", ncol=3, fontsize=7)
    fig.text(0.01, 0.01, f"x labels: bin, tasks n, tasks per axis IM/IR/SC/VE (* fewer than {min_n})",
             fontsize=7, color="#555555")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    return fig


@styled
def plot_length(table: pd.DataFrame):
    """Figure 9: ARS vs mean response length per system (numbered, named in a key), with the Pearson and Spearman
    rows."""
    corr_rows = [i for i in ("Pearson r", "Spearman rho") if i in table.index]
    pts, cor = table.drop(index=corr_rows), table.loc[corr_rows]
    x, y = pts["Mean tokens"].to_numpy(dtype=float), pts["ARS"].to_numpy(dtype=float)
    fig, ax = plt.subplots(figsize=(8.6, 4.4))
    modality = np.array([str(i).partition("|")[2][:1].upper() for i in pts.index])
    for mask, look in ((modality == "T", dict(color="#0072B2", label="Text output")),
                       (~np.isin(modality, ["T", ""]), dict(color="#D55E00", marker="s", label="Audio output")),
                       (modality == "", dict(color="#777777", marker="D", label="output modality not given"))):
        if mask.any() or look["label"] != "output modality not given":
            ax.scatter(x[mask], y[mask], s=18, zorder=3, edgecolor="white", linewidth=0.5, **look)
    if len(x) >= MIN_CORRELATION_POINTS:   # no fitted line over too few points to show a relation
        slope, icpt = np.polyfit(x, y, 1)
        xs = np.linspace(x.min(), x.max(), 50)
        ax.plot(xs, icpt + slope * xs, color="#777777", linewidth=1, linestyle="--")
    key = "\n".join(f"{k:>2}  {lab}" for k, lab in enumerate(_short(pts.index, lines=1), 1))
    ax.text(1.02, 1.0, key, transform=ax.transAxes, va="top", ha="left", fontsize=6.5, family="DejaVu Sans Mono")
    lines = [f"{'Pearson r' if i.startswith('Pearson') else 'Spearman ρ'} = {r['estimate']:.2f} "
             f"[{r['ci_low']:.2f}, {r['ci_high']:.2f}], n={int(r['n'])}" for i, r in cor.iterrows()
             if r["n"] >= MIN_CORRELATION_POINTS] or \
        [f"no correlation shown ({len(pts)} systems; fewer than {MIN_CORRELATION_POINTS})"]
    note = ax.text(0.02, 0.98, "\n".join(lines), transform=ax.transAxes, va="top", fontsize=7.5)
    ax.set_xlabel("Mean response length (tokens)")
    ax.set_ylabel("ARS (%)")
    legend = ax.legend(frameon=False, loc="lower right")
    ax.grid(color="#eeeeee", linewidth=0.6)
    fig.tight_layout()
    # numbered points (names in the key), each number where it covers no other, nor the notes
    place_labels(ax, x, y, [str(k) for k in range(1, len(x) + 1)], fontsize=6, pad_pt=2.5, color="#444444",
                 avoid=(note, legend))
    return fig
