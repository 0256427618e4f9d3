"""Figures of the judge cross-validation (Table 13, Appendix C.5), drawn from :mod:`voxmem_analysis.analysis.judges`'
frames."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from voxmem_analysis.plots.style import fit_labels, from_zero, place_labels, styled

__all__ = ["FAMILY_PALETTE", "judge_scatter", "judge_slices"]

#: Colours assigned to families in order of first appearance (Okabe-Ito, then greys).
FAMILY_PALETTE = ("#D55E00", "#0072B2", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C564B",
                  "#000000", "#999999", "#882255", "#44AA99", "#AA4499", "#117733")


def _family_colors(families) -> dict:
    seen = dict.fromkeys("unknown" if f is None or (isinstance(f, float) and np.isnan(f)) else f for f in families)
    return {f: FAMILY_PALETTE[i % len(FAMILY_PALETTE)] for i, f in enumerate(seen)}


@styled
def judge_scatter(data: pd.DataFrame, *, ax=None, highlight_family: str | None = "Gemini", label_models: bool = True):
    """Per-model accuracy under the production judge (x) vs the second judge (y) from ``JudgeComparison.per_model``,
    coloured by family (``highlight_family`` first, black-edged), the identity line dashed; returns the Axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(4.6, 4.4))
    df = data.copy()
    df["family"] = df["family"].where(df["family"].notna(), "unknown")
    fams = list(df["family"])
    if highlight_family in fams:
        fams = [highlight_family] + [f for f in fams if f != highlight_family]
    colors = _family_colors(fams)
    lo = float(np.floor(min(df["judge1"].min(), df["judge2"].min()) / 5) * 5)
    hi = float(np.ceil(max(df["judge1"].max(), df["judge2"].max()) / 5) * 5)
    ax.plot([lo, hi], [lo, hi], ls="--", lw=0.8, color="#777777", zorder=1, label="identity")
    for fam in colors:
        sub = df[df["family"] == fam]
        if sub.empty:
            continue
        ax.scatter(sub["judge1"], sub["judge2"], s=30, color=colors[fam], zorder=3, label=fam,
                   edgecolor="black" if fam == highlight_family else "white", linewidth=0.8)
    j1 = df["judge1_name"].iloc[0] if "judge1_name" in df.columns else "production judge"
    j2 = df["judge2_name"].iloc[0] if "judge2_name" in df.columns else "second judge"
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel(f"Accuracy (%), {j1}")
    ax.set_ylabel(f"Accuracy (%), {j2}")
    legend = ax.legend(loc="upper left", fontsize=6, frameon=False, ncol=1, title="Family", title_fontsize=6.5)
    if label_models:
        place_labels(ax, df["judge1"].to_numpy(float), df["judge2"].to_numpy(float), fit_labels(df["model"]),
                     fontsize=5.5, avoid=(legend,))
    return ax


@styled
def judge_slices(data: pd.DataFrame, *, ax=None):
    """Table 13 (``agreement_table``) as paired dots: a row per slice, the two judges' accuracies joined, Δ,
    agreement and κ at the right; returns the Axes."""
    if ax is None:
        _, ax = plt.subplots(figsize=(5.6, 3.6))
    df = data.reset_index(drop=True)
    y = np.arange(len(df))[::-1].astype(float)
    j1 = df["judge1_name"].iloc[0] if "judge1_name" in df.columns else "production judge"
    j2 = df["judge2_name"].iloc[0] if "judge2_name" in df.columns else "second judge"
    for yi, a, b in zip(y, df["judge1"], df["judge2"]):
        ax.plot([a, b], [yi, yi], color="#BBBBBB", lw=2, zorder=1, solid_capstyle="round")
    ax.scatter(df["judge1"], y, s=28, color="#0072B2", zorder=3, label=j1)
    ax.scatter(df["judge2"], y, s=28, color="#D55E00", marker="D", zorder=3, label=j2)
    ax.set_yticks(y)
    ax.set_yticklabels([f"{s}  (n={n:,})" for s, n in zip(df["slice"], df["n"])])
    xmax = float(np.ceil(max(df["judge1"].max(), df["judge2"].max()) / 10) * 10) + 5
    ax.set_xlim(*from_zero(xmax))
    for yi, dl, ag, k in zip(y, df["delta_pp"], df["agreement"], df["kappa"]):
        ax.text(1.01, yi, f"{dl:+.1f}   {ag:.1f}%   {k:.3f}", transform=ax.get_yaxis_transform(), va="center",
                fontsize=6.5, color="#333333", family="DejaVu Sans Mono")
    ax.text(1.01, 1.0, "\u0394 pp  agree.    \u03ba", transform=ax.transAxes, va="bottom", fontsize=6.5,
            color="#333333", family="DejaVu Sans Mono")
    ax.set_ylim(-0.6, len(df) - 0.4)
    ax.set_xlabel("Accuracy (%)")
    ax.grid(axis="x", color="#EEEEEE", lw=0.6)
    ax.set_axisbelow(True)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=7, frameon=False, ncol=2)
    return ax
