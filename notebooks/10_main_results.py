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
# # Main results (paper §4.2–4.3, Appendix D.1–D.3)
#
# Accuracy is `correct / scored` per model (provider-rejected predictions leave the
# denominator; failed generations and unparseable verdicts count as wrong), each model scored
# on the questions it was judged on at every budget it was run at (Appendix C.6). Group means
# are unweighted means over models. Every number below comes from `voxmem_analysis.results`.

# %%
from pathlib import Path

from voxmem_analysis import load_release, output
from voxmem_analysis import results as R
from voxmem_analysis.plots import results as P

release = load_release(data_dir)
out = Path(out_dir)
print(release.label())
print(f"{release.frame.height} predictions, {len(release.model_order())} models; 64K set: {len(release.models_in_64k_set())}")

# %% [markdown]
# ## Figure 4 — accuracy by model, evidence type and history length
# Speech semantics is remembered far better than who spoke, how it was said, or what was audible.

# %%
panels = R.evidence_panels(release, budgets=budgets, models=models)
fig = P.evidence_heatmaps(panels)
output.save_figure(fig, out, "fig4_model_evidence", data=panels, release=release)
fig4 = R.fig4(release, budgets=budgets, models=models)
output.save_table(fig4, out, "fig4", synthetic=release.synthetic, caption="Figure 4: accuracy (%)")
fig4

# %% [markdown]
# Proprietary and open-weight means by budget (overall and per evidence type):

# %%
groups = R.groups_table(release, budgets=budgets, models=models)
output.save_table(groups, out, "groups", synthetic=release.synthetic, caption="Group means (%)")
groups[~groups["Models"].isna()]

# %% [markdown]
# ## Table 15 — the 64K model set at 64K

# %%
t15 = R.table15(release, models=models)
output.save_table(t15, out, "table15", synthetic=release.synthetic, caption="Table 15: accuracy (%) at 64K")
t15

# %% [markdown]
# ## Figure 5 — operation × evidence at 32K, all models
# Difficulty lives in the pairing of operation and evidence; numbers under each score are the
# questions in the cell.

# %%
oe32 = R.operation_evidence(release, budgets=["32K"], models=models)
fig = P.operation_heatmap(oe32)
output.save_figure(fig, out, "fig5_operation_evidence_32k", data=oe32, release=release)
R.fig5(release, models=models)

# %% [markdown]
# ## Figure 8 — the same cells at the other lengths, on one shared item set
# The 64K model set, on the questions judged at all four budgets for all of them.

# %%
oe_shared = R.operation_evidence(release, models=release.models_in_64k_set() if models is None else models,
                                 pairing="shared")
fig = P.operation_heatmaps(oe_shared, budgets=[b for b in ("8K", "16K", "64K") if b in set(oe_shared["budget"])],
                           title="64K model set, questions judged at all four budgets by every model")
output.save_figure(fig, out, "fig8_operation_evidence_shared", data=oe_shared, release=release)
R.fig8(release, models=models)

# %% [markdown]
# ## Table 16 — answerable versus refusal at 64K
# Refusal runs opposite to answering: the two columns rank models almost independently.

# %%
t16 = R.answerable_vs_refusal(release, models=models)
summary16 = R.answerable_refusal_summary(release, models=models, table=t16)
access = dict(zip(release.models["model"], release.models["access"]))
fig = P.answerable_refusal_scatter(t16, summary=summary16, groups=access)
output.save_figure(fig, out, "table16_answerable_vs_refusal", data=t16, release=release)
output.save_table(R.table16(release, models=models), out, "table16", synthetic=release.synthetic,
                  caption="Table 16: answerable and AR accuracy (%) at 64K")
summary16

# %%
t16

# %% [markdown]
# ## Table 17 — refusal accuracy by evidence type and by source operation

# %%
t17 = R.table17(release, budgets=budgets, models=models)
output.save_table(t17, out, "table17", synthetic=release.synthetic, caption="Table 17: mean AR accuracy (%)")
t17
