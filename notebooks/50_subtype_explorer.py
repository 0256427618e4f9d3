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
budget = "auto"                # "auto": 32K (the paper's) if run, else the budget run by the most models;
                               # "8K" "16K" "32K" "64K"; None or "all": every budget pooled
models = None                  # None: every model; or "Model-A,Model-B"
interval = "auto"              # "auto": item bootstrap where a question repeats in a slice (models or budgets pooled), else Wilson; or "wilson" / "bootstrap"
drill_cell = None              # items behind one slice: values of the `by` columns, e.g. "counting,speaker_information"; None: the lowest-accuracy slice
drill_model = None             # the model whose items are listed (None: the first selected model)
interactive = True             # widgets in JupyterLab; the reproduction runner sets False

# %% [markdown]
# # Subtype explorer
#
# Accuracy with a 95% interval for any grouping of the verdict frame's columns: subtype,
# operation, evidence type, budget, model, answer type, history composition
# (`session_count`, `evidence_session_count`, `samekey_haystack_session_count`) ...
# Slices come from `voxmem_analysis.analysis.explore.explore_slices`, which calls
# `voxmem_analysis.analysis.verdicts.slice_accuracy` (Wilson interval per slice, or a percentile
# bootstrap over items); the denominator is the paper's (provider-rejected predictions out,
# failed and ungraded ones wrong).  The figure is `voxmem_analysis.plots.slices.slice_dot_plot`.
#
# Run with papermill (or `voxmem-analysis reproduce`), the parameters above pick the slice.
# Opened in JupyterLab, the cell at the end shows drop-downs that recompute and redraw.

# %%
from voxmem_analysis.analysis import explore
from voxmem_analysis import load_release, output
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.plots.slices import slice_dot_plot

release = load_release(resolve(data_dir))
out = OutputFolder(out_dir, notebook="50_subtype_explorer", release=release,
                   parameters=dict(data_dir=data_dir, seed=seed, n_boot=n_boot, by=by, budget=budget,
                                   models=models, interval=interval, drill_cell=drill_cell,
                                   drill_model=drill_model, interactive=interactive))
print(release.label())
b, why = explore.explorer_budget(release, budget, models)
print(f"budget: {b or 'every budget pooled'} ({why})")

# %% [markdown]
# ## The slice chosen by the parameters
#
# The dot plot: one row per level of the first `by` column, one colour per level of the
# others; the bar is the interval, the dashed line the accuracy of every selected row pooled.

# %%
table = explore.explore_slices(release, by, budget=b, models=models, interval=interval, n_boot=n_boot, seed=seed)
overall = explore.pooled_accuracy(release, budget=b, models=models)

# %%
ax = slice_dot_plot(table, by, overall=overall, title=explore.slice_title(by, budget=b, models=models))
name = explore.output_name(by, b)
output.save_figure(ax.figure, out, name, data=table, release=release)
output.save_table(explore.labelled_table(table, by), out, name, synthetic=release.synthetic,
                  caption=explore.slice_caption(by, budget=b, models=models, interval=interval, why=why));

# %% [markdown]
# ## The same slices at every budget
# Small multiples (a seaborn `FacetGrid`, `voxmem_analysis.plots.slices.slice_facets`): one panel per
# budget, rows shared, each panel's dashed line its own pooled accuracy.

# %%
from voxmem_analysis.analysis.selection import section
from voxmem_analysis.plots.slices import slice_facets

with section("The slices by budget"):  # skipped on one budget: its one panel would repeat the figure above
    facets, pooled = explore.explore_by_budget(release, by, models=models, interval=interval, n_boot=n_boot, seed=seed)
    grid = slice_facets(facets, by, overall=pooled, title=explore.slice_title(by, budget=None, models=models))
    output.save_figure(grid.figure, out, explore.output_name(by, None) + "_by_budget", data=facets, release=release)

# %% [markdown]
# ## The items behind one slice
# Which items a model got wrong in the chosen slice: item id, subtype, evidence type, operation,
# gold answer, response and verdict (`voxmem_analysis.analysis.items`; the same table as
# `voxmem-analysis items --data DIR --model M --budget B --wrong --where ...`).

# %%
from voxmem_analysis.analysis.items import cell_items

drill_title, drill = cell_items(release, table, by, model=drill_model or (models.split(",")[0] if models else None),
                                budget=b, cell=drill_cell)
print(drill_title)
drill[["item_id", "subtype", "evidence_type", "operation", "gold", "response", "status"]].head(25)

# %% [markdown]
# ## Interactive (JupyterLab)
# Change the grouping, the budget, the model or the interval; the table and the plot follow
# (the same `explore` calls as above, redrawn with `slice_dot_plot`).

# %%
if interactive:
    from IPython.display import display

    display(explore.widget(release, draw=slice_dot_plot, by=by, budget=b, models=models, interval=interval,
                           n_boot=n_boot, seed=seed))
