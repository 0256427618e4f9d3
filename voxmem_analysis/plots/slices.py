"""The subtype explorer's figures: dot plots of :func:`voxmem_analysis.analysis.explore.explore_slices` tables, rows and
colours in the order of their ``by`` columns, labels from the taxonomy.  matplotlib and seaborn are imported where
they draw: the ``slice`` command imports this module at start-up."""
from __future__ import annotations

import numpy as np
import pandas as pd

from voxmem_analysis.analysis.explore import column_name, parse_by, slice_label
from voxmem_analysis.errors import InputError
from voxmem_analysis.plots.style import (EVIDENCE_COLORS, GROUP_COLORS, OPERATION_COLORS, PERCENT_LIMITS, SERIES_COLORS,
                                         styled, without_canvas_draw)

__all__ = ["PALETTES", "SINGLE_COLOR", "slice_dot_plot", "slice_facets"]

#: Colour of each value of a colour column, when the taxonomy has one (else :data:`SERIES_COLORS`, cycled).
PALETTES = {"evidence_type": EVIDENCE_COLORS, "operation": OPERATION_COLORS, "source_operation": OPERATION_COLORS,
            "access": GROUP_COLORS}
#: Colour of the dots when ``by`` has a single column.
SINGLE_COLOR = "#0072B2"
_MISSING = object()


def _levels(col: pd.Series) -> list:
    """Values of ``col`` in their given order: categories present, else first appearance; nulls last."""
    if isinstance(col.dtype, pd.CategoricalDtype):
        present = set(col.dropna().astype(object))
        out = [c for c in col.cat.categories if c in present]
    else:
        out = list(dict.fromkeys(v for v in col.astype(object) if not pd.isna(v)))
    return out + ([_MISSING] if col.isna().any() else [])


def _keys(t: pd.DataFrame, cols: list[str]) -> list[tuple]:
    return [tuple(_MISSING if pd.isna(v) else v for v in row) for row in t[cols].astype(object).itertuples(index=False)]


def _value(v):
    return None if v is _MISSING else v


@styled
def slice_dot_plot(data: pd.DataFrame, by, *, overall: float | None = None, title: str | None = None, ax=None):
    """Dot plot of the ``slice`` rows with their intervals: the first ``by`` column gives the rows, the others the
    (dodged) colours, ``overall`` (pooled %) a dashed line, the legend right of the axes; returns the Axes."""
    import matplotlib.pyplot as plt

    cols = parse_by(by)
    y_col, hue_cols = cols[0], cols[1:]
    t = data[data["level"] == "slice"].reset_index(drop=True)
    ys = _levels(t[y_col])
    y_pos = {v: i for i, v in enumerate(ys)}
    row_keys = [k[0] for k in _keys(t, [y_col])]
    if hue_cols:
        orders = [{v: i for i, v in enumerate(_levels(t[c]))} for c in hue_cols]
        hue_keys = _keys(t, hue_cols)
        hues = sorted(dict.fromkeys(hue_keys), key=lambda h: tuple(o[v] for o, v in zip(orders, h)))
    else:
        hue_keys = [()] * len(t)
        hues = [()]
    palette = PALETTES.get(hue_cols[0], {}) if len(hue_cols) == 1 else {}
    hue_idx = np.array([hues.index(h) for h in hue_keys], dtype=int)
    if ax is None:
        per_row = 0.26 * (1 + 0.3 * (len(hues) - 1)) if hue_cols else 0.26
        _, ax = plt.subplots(figsize=(6.4, min(1.3 + per_row * len(ys), 14)))
    width = 0.7
    step = width / len(hues) if hue_cols else 0.0
    for k, h in enumerate(hues):
        sub = t[hue_idx == k]
        pos = np.array([y_pos[row_keys[i]] for i in np.flatnonzero(hue_idx == k)], dtype=float)
        pos += (k - (len(hues) - 1) / 2) * step
        if hue_cols:
            color = palette.get(_value(h[0]), SERIES_COLORS[k % len(SERIES_COLORS)])
            name = " / ".join(slice_label(c, _value(v)) for c, v in zip(hue_cols, h))
        else:
            color, name = SINGLE_COLOR, None
        acc = sub["accuracy"].to_numpy(float)
        err = np.vstack([acc - sub["accuracy_ci_low"].to_numpy(float), sub["accuracy_ci_high"].to_numpy(float) - acc])
        ax.errorbar(acc, pos, xerr=err, fmt="o", ms=4.5, capsize=2, lw=1.1, color=color, label=name)
    ax.set_yticks(range(len(ys)), [slice_label(y_col, _value(v)) for v in ys])
    if not ax.yaxis_inverted():  # first row on top; shared y axes (slice_facets) are inverted once
        ax.invert_yaxis()
    if overall is not None and np.isfinite(overall):
        ax.axvline(overall, ls="--", lw=0.8, color="#555555", label=f"all pooled ({overall:.1f})")
    ax.set_xlim(*PERCENT_LIMITS)   # room at both ends: a dot at 0 % or 100 % stays off the axis line
    methods = sorted({str(m).split(" ")[0] + (" bca" if "bca" in str(m) else "") for m in t["interval"]}) \
        if len(t) else []
    names = {"wilson": "Wilson", "bootstrap": "item-bootstrap", "bootstrap bca": "BCa item-bootstrap"}
    ax.set_xlabel("Accuracy (%) with 95% " + " / ".join(names.get(m, m) for m in methods) + " interval")
    ax.set_ylabel("")
    if hue_cols or (overall is not None and np.isfinite(overall)):
        # beside the axes (right, top-aligned), where it hides no dot or interval
        ax.legend(title=", ".join(column_name(c) for c in hue_cols) or None, loc="upper left",
                  bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False, fontsize=7, title_fontsize=7)
    ax.set_title(title or "")
    ax.grid(axis="x", lw=0.4, alpha=0.5)
    return ax


#: Legend label of the dashed line in :func:`slice_facets` (each panel's own pooled accuracy).
POOLED_PER_PANEL = "all pooled (each panel's own)"


@styled
def slice_facets(data: pd.DataFrame, by, *, col: str = "budget", overall: dict | None = None,
                 col_wrap: int | None = None, height: float | None = None, title: str | None = None):
    """:func:`slice_dot_plot` per value of ``col`` (a seaborn ``FacetGrid``, rows shared; ``overall``: each panel's pooled
    accuracy); returns the grid."""
    import seaborn as sns

    if col not in data.columns:
        raise InputError(f"data has no facet column {col!r}; stack explore_slices tables with it")
    facets = _levels(data[col])
    n_rows = len(_levels(data[data["level"] == "slice"][parse_by(by)[0]]))
    wrap = col_wrap or (2 if len(facets) == 4 else min(len(facets), 3))
    g = sns.FacetGrid(data, col=col, col_order=facets, col_wrap=wrap if len(facets) > wrap else None,
                      sharex=True, sharey=True, height=height or min(1.2 + 0.3 * n_rows, 12), aspect=1.1,
                      despine=False)
    xlabel, handles, legend_title, dashed = "", {}, None, False
    for value, ax in g.axes_dict.items():
        sub = data[data[col] == value]
        pooled = (overall or {}).get(value)
        dashed = dashed or (pooled is not None and bool(np.isfinite(pooled)))
        slice_dot_plot(sub, by, overall=pooled, title=f"{value}", ax=ax)
        xlabel = ax.get_xlabel() or xlabel
        ax.set_xlabel("")
        leg = ax.get_legend()
        if leg is not None:
            legend_title = leg.get_title().get_text() or None
            for h, lab in zip(*ax.get_legend_handles_labels()):
                if not lab.startswith("all pooled"):  # the pooled line differs per panel
                    handles.setdefault(lab, h)
            leg.remove()
    g.figure.supxlabel(xlabel, fontsize=9)
    if dashed:   # what the panels' dashed lines are (each is its own panel's pooled accuracy)
        from matplotlib.lines import Line2D

        handles[POOLED_PER_PANEL] = Line2D([], [], ls="--", lw=0.8, color="#555555")
    if handles:   # (seaborn's two full draws here only measure the legend: skipped)
        with without_canvas_draw(g.figure):
            g.add_legend(legend_data=handles, title=legend_title)
    if title:
        g.figure.suptitle(title)
    g.tight_layout()
    return g
