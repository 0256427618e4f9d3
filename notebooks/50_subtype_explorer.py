# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% tags=["parameters"]
data_dir = "data/synthetic"
out_dir = "figures"
seed = 0
n_boot = 10_000
by = "subtype,evidence_type"   # any columns of the verdict frame, comma-separated
budget = "32K"                 # "8K" "16K" "32K" "64K", or None for every budget pooled
models = None                  # None: every model; or "Model-A,Model-B"
ci = "wilson"                  # "wilson" or "bootstrap" (items resampled, n_boot resamples)
interactive = True             # widgets in JupyterLab; the reproduction runner sets False

# %% [markdown]
# # Subtype explorer
#
# Accuracy with a 95% interval for any grouping of the verdict frame's columns: subtype,
# operation, evidence type, budget, model, answer type, history composition
# (`session_count`, `evidence_session_count`, `samekey_haystack_session_count`) ...
# Slices come from `voxmem_analysis.generic.slice_accuracy` (Wilson interval per slice, or a
# percentile bootstrap over items); the denominator is the paper's (provider-rejected
# predictions out, failed and ungraded ones wrong).
#
# Run with papermill (or `voxmem-analysis reproduce`), the parameters above pick the slice.
# Opened in JupyterLab, the cell at the end shows drop-downs that recompute and redraw.

# %%
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis import load_release, output
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.generic import slice_accuracy
from voxmem_analysis.plots.style import EVIDENCE_COLORS, GROUP_COLORS, OPERATION_COLORS, paper_style

release = load_release(data_dir)
out = Path(out_dir)
print(release.label())

LABELS = {"subtype": tx.SUBTYPE_LABELS, "evidence_type": tx.EVIDENCE_LABELS, "operation": tx.OPERATION_LABELS,
          "source_operation": tx.OPERATION_LABELS}
ORDERS = {"subtype": tx.SUBTYPES, "evidence_type": tx.EVIDENCE_TYPES, "operation": tx.OPERATIONS,
          "source_operation": tx.OPERATIONS, "budget": tx.BUDGETS, "model": tuple(release.model_order())}
NAMES = {"subtype": "Subtype", "evidence_type": "Evidence type", "operation": "Operation",
         "source_operation": "Source operation", "budget": "Budget", "model": "Model", "answer_type": "Answer type",
         "session_count": "Sessions in history", "evidence_session_count": "Evidence sessions"}
COLORS = {"evidence_type": EVIDENCE_COLORS, "operation": OPERATION_COLORS, "source_operation": OPERATION_COLORS,
          "access": GROUP_COLORS}


def select(frame, budget=None, models=None):
    """Rows of one budget (None: all) and of the chosen models (None / "all": all)."""
    if budget not in (None, "", "all"):
        frame = frame.filter(pl.col("budget") == budget)
    if models not in (None, "", "all"):
        ms = [m.strip() for m in models.split(",")] if isinstance(models, str) else list(models)
        frame = frame.filter(pl.col("model").is_in(ms))
    return frame


def compute(by, budget=None, models=None, ci="wilson"):
    frame = select(release.frame, budget, models)
    return slice_accuracy(frame, by, ci=ci, item="item_id" if ci == "bootstrap" else None,
                          n_boot=n_boot, seed=seed)


def pooled_accuracy(budget=None, models=None):
    """Accuracy (%) of every selected row pooled (the dashed line)."""
    f = select(release.frame, budget, models)
    n = int(f["scored"].sum())
    return 100.0 * int((f["correct"].fill_null(False) & f["scored"]).sum()) / n if n else float("nan")


def label(col, v):
    return "overall" if v == "overall" else LABELS.get(col, {}).get(v, str(v))


# %% [markdown]
# The dot plot: one row per level of the first `by` column, one colour per level of the
# others; the bar is the interval, the dashed line the accuracy of every row pooled.

# %%
def dot_plot(table, by, *, overall=None, title=None, ax=None):
    """Dot plot with intervals of a ``slice_accuracy`` table (slice rows only)."""
    cols = [c.strip() for c in by.split(",")] if isinstance(by, str) else list(by)
    t = table[table["level"] == "slice"].reset_index(drop=True)
    y_col, hue_cols = cols[0], cols[1:]
    ys = list(dict.fromkeys(t[y_col]))
    if y_col in ORDERS:
        known = list(ORDERS[y_col])
        ys.sort(key=lambda v: known.index(v) if v in known else len(known))
    hue = t[hue_cols].astype(str).agg(" / ".join, axis=1) if hue_cols else pd.Series("all", index=t.index)
    hues = list(dict.fromkeys(hue))
    if len(hue_cols) == 1 and hue_cols[0] in ORDERS:
        known = [str(v) for v in ORDERS[hue_cols[0]]]
        hues.sort(key=lambda h: known.index(h) if h in known else len(known))
    palette = COLORS.get(hue_cols[0] if hue_cols else y_col, {})
    fallback = plt.get_cmap("tab10")
    with paper_style():
        if ax is None:
            per_row = 0.26 * (1 + 0.3 * (len(hues) - 1)) if hue_cols else 0.26
            fig, ax = plt.subplots(figsize=(6.4, min(1.3 + per_row * len(ys), 14)))
        width = 0.7
        step = width / max(len(hues), 1) if hue_cols else 0
        for k, h in enumerate(hues):
            sub = t[hue == h]
            pos = np.array([ys.index(v) for v in sub[y_col]], dtype=float)
            pos += (k - (len(hues) - 1) / 2) * step if hue_cols else 0
            key = h.split(" / ")[0]
            color = palette.get(key, fallback(k % 10)) if hue_cols else "#0072B2"
            acc = sub["accuracy"].to_numpy(float)
            err = np.vstack([acc - sub["ci_low"].to_numpy(float), sub["ci_high"].to_numpy(float) - acc])
            name = " / ".join(label(c, v) for c, v in zip(hue_cols, h.split(" / "))) if hue_cols else None
            ax.errorbar(acc, pos, xerr=err, fmt="o", ms=4.5, capsize=2, lw=1.1, color=color, label=name)
        ax.set_yticks(range(len(ys)), [label(y_col, v) for v in ys])
        ax.invert_yaxis()
        if overall is not None and np.isfinite(overall):
            ax.axvline(overall, ls="--", lw=0.8, color="#555555", label=f"all pooled ({overall:.1f})")
        ax.set_xlim(0, 100)
        method = str(t["method"].iloc[0]) if len(t) else ""
        ax.set_xlabel(f"Accuracy (%) with 95% {'Wilson' if method == 'wilson' else method} interval")
        ax.set_ylabel("")
        ax.legend(title=", ".join(NAMES.get(c, c) for c in hue_cols) or None, loc="lower right", frameon=False,
                  fontsize=7, title_fontsize=7)
        ax.set_title(title or "")
        ax.grid(axis="x", lw=0.4, alpha=0.5)
    return ax


def describe(by, budget, models, ci):
    cols = [c.strip() for c in by.split(",")] if isinstance(by, str) else list(by)
    what = " \u00d7 ".join(NAMES.get(c, c).lower() for c in cols)
    return f"Accuracy by {what} \u2014 {budget or 'all budgets'}, {models or 'all models'}"


# %% [markdown]
# ## The slice chosen by the parameters

# %%
table = compute(by, budget, models, ci)
ax = dot_plot(table, by, overall=pooled_accuracy(budget, models), title=describe(by, budget, models, ci))
slug = "_".join([c.strip() for c in by.split(",")] + [str(budget or "all").lower()])
output.save_figure(ax.figure, out, f"explorer_{slug}", data=table, release=release)
cols = [c.strip() for c in by.split(",")]
shown = table.drop(columns=cols)
shown.index = [" / ".join(label(c, v) for c, v in zip(cols, vals)) for vals in table[cols].itertuples(index=False)]
shown.index.name = " / ".join(cols)
output.save_table(shown, out, f"explorer_{slug}", synthetic=release.synthetic,
                  caption=f"{describe(by, budget, models, ci)} (%, 95% {ci} interval)")
table

# %% [markdown]
# ## Interactive (JupyterLab)
# Change the grouping, the budget, the model or the interval; the table and the plot follow.

# %%
if interactive:
    import ipywidgets as widgets
    from IPython.display import display

    choices = ["subtype,evidence_type", "subtype", "evidence_type", "operation,evidence_type", "operation",
               "evidence_type,budget", "model", "model,evidence_type", "answer_type", "answer_type,evidence_type",
               "session_count", "evidence_session_count,evidence_type", "source_operation,evidence_type"]
    choices = [c for c in choices if all(x in release.frame.columns for x in c.split(","))]
    if by not in choices:
        choices.insert(0, by)
    w_by = widgets.Dropdown(options=choices, value=by, description="by")
    w_budget = widgets.Dropdown(options=["all", *tx.BUDGETS], value=budget or "all", description="budget")
    w_model = widgets.Dropdown(options=["all", *release.model_order()],
                               value=models if models in release.model_order() else "all", description="model")
    w_ci = widgets.Dropdown(options=["wilson", "bootstrap"], value=ci, description="interval")
    w_out = widgets.Output()

    def redraw(*_):
        b = None if w_budget.value == "all" else w_budget.value
        m = None if w_model.value == "all" else w_model.value
        with w_out:
            w_out.clear_output(wait=True)
            t = compute(w_by.value, b, m, w_ci.value)
            dot_plot(t, w_by.value, overall=pooled_accuracy(b, m), title=describe(w_by.value, b, m, w_ci.value))
            plt.show()
            display(t)

    for w in (w_by, w_budget, w_model, w_ci):
        w.observe(redraw, names="value")
    display(widgets.HBox([w_by, w_budget, w_model, w_ci]), w_out)
    redraw()
