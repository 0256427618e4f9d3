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
models = None
budgets = None

# %% [markdown]
# # Context-length scaling (paper §4.4, Figure 6, Appendix D.4–D.5)
#
# The same question and evidence appear at every budget, so any change is due to the longer
# surrounding history. Models: the 64K set (the same models at every budget). Drop = 8K − 64K
# accuracy in points; retention = 64K / 8K accuracy. Intervals: percentile 95% bootstrap over
# items, both budgets rescored on every resample.

# %%
from pathlib import Path

from voxmem_analysis import load_release, output
from voxmem_analysis import scaling as S
from voxmem_analysis.plots import scaling as P

release = load_release(data_dir)
out = Path(out_dir)
print(release.label())
print("models:", ", ".join(S.scaling_models(release, models)))

# %% [markdown]
# ## Figure 6 — accuracy and retention per evidence type

# %%
es = S.evidence_scaling(release, models=models, budgets=budgets)
fig = P.evidence_scaling_lines(es)
output.save_figure(fig, out, "fig6_context_scaling", data=es, release=release)
f6 = S.fig6(release, models=models, budgets=budgets)
output.save_table(f6, out, "fig6", synthetic=release.synthetic, caption="Figure 6: retention (% of 8K) and accuracy (%)")
f6

# %% [markdown]
# ## Table 18 — paired change from 8K to 64K with bootstrap intervals

# %%
pc = S.paired_change(release, models=models, n_boot=n_boot, seed=seed)
fig = P.change_forest(pc)
output.save_figure(fig, out, "table18_forest", data=pc, release=release)
t18 = S.table18(release, models=models, n_boot=n_boot, seed=seed)
output.save_table(t18, out, "table18", digits=3, synthetic=release.synthetic,
                  caption=f"Table 18: paired change 8K to 64K, 95% percentile bootstrap CI ({n_boot} resamples, seed {seed})")
t18

# %% [markdown]
# ## Appendix D.5 — baseline difficulty versus context sensitivity
# Over model × evidence cells, the drop in points is tied to the 8K level (a cell near the
# floor cannot lose many points); retention is not, so retention separates weak memory from
# sensitivity to length.

# %%
cells = S.cell_changes(release, models=models)
corr = S.sensitivity_correlations(release, cells=cells)
fig = P.sensitivity_scatter(cells, correlations=corr)
output.save_figure(fig, out, "d5_sensitivity", data=cells, release=release)
output.save_table(S.d5(release, models=models), out, "d5", digits=3, synthetic=release.synthetic,
                  caption="Appendix D.5: Spearman correlations over model x evidence cells")
corr
