"""Figures of the benchmark design: Figure 2(a) (history scale per budget) and the session roles."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import InputError
from voxmem_analysis.plots.style import ROLE_COLORS, finish, reserve_footer, styled

__all__ = ["history_scale_panels", "session_roles_bars", "ROLE_COLORS"]

_LINE = "#0072B2"
_ROLE_SHORT = {
    "evidence_sessions": "Evidence", "samekey_haystack_sessions": "Same-key haystack",
    "topical_haystack_sessions": "Topical haystack", "filler_sessions": "Filler",
    "unknown_sessions": "Unknown role (not in the release)",
}
#: How the sessions of unknown role are drawn: no colour, hatched (the release does not say).
_UNKNOWN = dict(color="white", edgecolor="#999999", hatch="////")
_PANEL_Y = {"sessions": "Sessions per history", "audio_clips": "Audio clips per prompt",
            "audio_minutes": "Minutes of audio per history", "reference_tokens": "Reference tokens per history"}


@styled
def history_scale_panels(data: pd.DataFrame, *, quantities=("sessions", "audio_clips", "audio_minutes"),
                         title: str | None = None):
    """Figure 2(a) from :func:`~voxmem_analysis.analysis.design.history_scale`: per quantity the median, interquartile
    band and min-max range over a log2 budget axis, each y axis from 0."""
    qs = [q for q in quantities if q in set(data["quantity"])]
    if not qs:
        raise InputError(f"none of {list(quantities)} in data (have {sorted(set(data['quantity']))})")
    fig, axes = plt.subplots(1, len(qs), figsize=(2.45 * len(qs) + 0.3, 2.9), constrained_layout=True,
                             squeeze=False)
    reserve_footer(fig)
    for ax, q in zip(axes[0], qs):
        sub = data[data["quantity"] == q].copy()
        sub["x"] = sub["budget"].astype(str).map(lambda b: np.log2(tx.budget_tokens(b)))
        sub = sub.sort_values("x")
        x = sub["x"].to_numpy(float)
        ax.vlines(x, sub["min"], sub["max"], color=_LINE, lw=0.8, alpha=0.45, label="Min\u2013max")
        ax.scatter(np.r_[x, x], np.r_[sub["min"], sub["max"]], marker="_", s=30, color=_LINE, alpha=0.6, lw=0.9)
        ax.fill_between(x, sub["q1"], sub["q3"], color=_LINE, alpha=0.18, lw=0, label="Interquartile range")
        ax.plot(x, sub["median"], color=_LINE, marker="o", ms=4, lw=1.6, label="Median")
        for xi, m in zip(x, sub["median"]):
            text = f"{int(round(m))}" if abs(m - round(m)) < 1e-9 else f"{m:.1f}"
            ax.annotate(text, (xi, m), xytext=(-4, 5), textcoords="offset points", ha="right", va="bottom",
                        fontsize=7, color="#222222")
        ax.set_xticks(x, sub["budget"].astype(str))
        ax.set(xlim=(x.min() - 0.4, x.max() + 0.3), ylim=(0, float(sub["max"].max()) * 1.08),
               title=str(sub["label"].iloc[0]), ylabel=_PANEL_Y.get(q, str(sub["label"].iloc[0])),
               xlabel="History length (log\u2082)")
        ax.grid(axis="y", color="#e6e6e6", lw=0.6)
    handles, labels = axes[0][0].get_legend_handles_labels()
    order = [labels.index(l) for l in ("Median", "Interquartile range", "Min\u2013max") if l in labels]
    fig.legend([handles[i] for i in order], [labels[i] for i in order], loc="outside upper center",
               ncol=len(order), frameon=False)
    n = data.loc[data["quantity"].isin(qs), "n_items"]
    counts = f"{int(n.min()):,}\u2013{int(n.max()):,}" if n.min() != n.max() else f"{int(n.iloc[0]):,}"
    return finish(fig, title, f"Per item (question \u00d7 budget); {counts} items per budget.")


@styled
def session_roles_bars(data: pd.DataFrame, *, title: str | None = None):
    """Mean sessions per history by role (:func:`~voxmem_analysis.analysis.design.session_roles`), stacked per budget
    (left) and as shares (right), sessions of unknown role hatched on top."""
    bs = [b for b in tx.BUDGETS if b in set(data["budget"].astype(str))]
    roles = [r for r in ROLE_COLORS if r in set(data["role"])] + sorted(set(data["role"]) - set(ROLE_COLORS))
    xs = np.arange(len(bs))
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.2, 3.2), constrained_layout=True)
    reserve_footer(fig)
    bottom1, bottom2 = np.zeros(len(bs)), np.zeros(len(bs))
    for r in roles:
        sub = data[data["role"] == r].set_index(data.loc[data["role"] == r, "budget"].astype(str))
        m = sub["mean_sessions"].reindex(bs).fillna(0).to_numpy(float)
        s = sub["share"].reindex(bs).fillna(0).to_numpy(float) * 100
        look = _UNKNOWN if r == "unknown_sessions" else dict(color=ROLE_COLORS.get(r, "#888888"), edgecolor="white")
        a1.bar(xs, m, bottom=bottom1, width=0.62, lw=0.6, label=_ROLE_SHORT.get(r, r), **look)
        a2.bar(xs, s, bottom=bottom2, width=0.62, lw=0.6, **look)
        for i in range(len(bs)):
            if s[i] >= 7:
                a2.text(xs[i], bottom2[i] + s[i] / 2, f"{s[i]:.0f}%", ha="center", va="center", fontsize=7,
                        **({"bbox": dict(facecolor="white", edgecolor="none", pad=0.8)}
                           if r == "unknown_sessions" else {}))
        bottom1 += m
        bottom2 += s
    for i, t in enumerate(bottom1):
        a1.text(xs[i], t, f"{t:.1f}", ha="center", va="bottom", fontsize=7)
    for ax in (a1, a2):
        ax.set_xticks(xs, bs)
        ax.set_xlabel("History length")
        ax.grid(axis="y", color="#e6e6e6", lw=0.6)
        ax.set_axisbelow(True)
    a1.set(ylim=(0, bottom1.max() * 1.1), ylabel="Mean sessions per history", title="Sessions by role")
    a2.set(ylim=(0, 100), ylabel="Share of sessions (%)", title="Share of sessions by role")
    handles, labels = a1.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside upper center", ncol=len(labels), frameon=False)
    return finish(fig, title)
