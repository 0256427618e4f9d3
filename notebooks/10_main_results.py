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
# Budget of Table 15, Table 16 and Figure 8's model set; None: 64K if any model was run at 64K,
# else the longest budget present.
comparison_budget = None
# Budget of Figure 5; None: 32K if present, else the budget run by the most models.
fig5_budget = None

# %% [markdown]
# # Main results (paper §4.2–4.3, Appendix D.1–D.3)
#
# Accuracy is `correct / scored` per model (provider-rejected predictions leave the
# denominator; failed generations and unparseable verdicts count as wrong), each model scored
# on the questions it was judged on at every budget it was run at (Appendix C.6). Group means
# are unweighted means over models (proprietary / open-weight only for models listed in
# `models.csv`). Every number below comes from `voxmem_analysis.analysis.results`.
#
# The release may hold only some models at some budgets: the budgets used are printed below,
# and a section the release cannot support is skipped with the reason. Where a section states a
# finding, the sentence about this release is computed from its tables
# (`voxmem_analysis.analysis.findings`) and shown next to the paper's own finding.

# %%
from IPython.display import display

from voxmem_analysis import artifacts, load_release, output
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.analysis import findings as F
from voxmem_analysis.analysis import results as R
from voxmem_analysis.plots import results as P

release = load_release(resolve(data_dir))
out = OutputFolder(out_dir, notebook="10_main_results", release=release,
                   parameters=dict(data_dir=data_dir, seed=seed, n_boot=n_boot, models=models,
                                   budgets=budgets, comparison_budget=comparison_budget,
                                   fig5_budget=fig5_budget))
print(release.label())
n_models = len(release.model_order())
print(f"{release.frame.height} predictions, {n_models} model{'s' if n_models != 1 else ''}")
b_cmp = R.comparison_budget(release, comparison_budget, models=models)
b_fig5 = R.fig5_budget(release, fig5_budget, models=models)
print(R.describe_budgets(release, comparison=comparison_budget, fig5=fig5_budget, models=models))

# %% [markdown]
# ## Figure 4 — accuracy by model, evidence type and history length
# The paper reports that speech semantics is remembered far better than who spoke, how it was
# said, or what was audible (Finding 2). Which evidence type this release remembers best is
# computed below.

# %%
with R.section("Figure 4"):
    panels = R.evidence_panels(release, budgets=budgets, models=models)
    output.save_finding(F.evidence_types(panels), out)
    fig = P.evidence_heatmaps(panels)
    output.save_figure(fig, out, "fig4_model_evidence", data=panels, release=release)
    fig4 = R.fig4(release, budgets=budgets, models=models)
    output.save_table(fig4, out, "fig4", synthetic=release.synthetic, caption="Figure 4: accuracy (%)")

# %% [markdown]
# Proprietary and open-weight means by budget (overall and per evidence type):

# %%
with R.section("Group means"):
    groups = R.groups_table(release, budgets=budgets, models=models)
    output.save_table(groups, out, "groups", synthetic=release.synthetic, caption="Group means (%)",
                      show=False)  # shown below without the empty rows
    display(groups[~groups["Models"].isna()])

# %% [markdown]
# ## Table 15 — the 64K model set at 64K
# (At the comparison budget printed above when the release has no 64K run.)

# %%
with R.section(f"Table 15 ({b_cmp})"):
    t15 = R.table15(release, budget=b_cmp, models=models)
    output.save_table(t15, out, "table15", synthetic=release.synthetic,
                      caption=f"Table 15: accuracy (%) at {b_cmp}, models run at {b_cmp}")

# %% [markdown]
# ## Figure 5 — operation × evidence at 32K, all models
# The paper reports that difficulty lives in the pairing of operation and evidence (Finding 3) and
# that answer refusal runs opposite to answering (Finding 4); what this release shows is computed
# below. Numbers under each score are the questions in the cell.

# %%
with R.section(f"Figure 5 ({b_fig5})"):
    oe5 = R.operation_evidence(release, budgets=[b_fig5], models=models)
    per_model5 = R.accuracy(release, ["operation", "evidence_type"], budgets=[b_fig5], models=models, overall=False)
    output.save_finding(F.operation_evidence(oe5, per_model5), out)
    output.save_finding(F.refusal_profile(oe5), out)
    fig = P.operation_heatmap(oe5)
    output.save_figure(fig, out, f"fig5_operation_evidence_{b_fig5.lower()}", data=oe5, release=release,
                       caption=artifacts.caption("fig5", budget=b_fig5, models=models))
    output.save_table(R.fig5(release, budget=b_fig5, models=models), out, "fig5", synthetic=release.synthetic,
                      caption=artifacts.caption("fig5", budget=b_fig5, models=models))

# %% [markdown]
# ## Figure 8 — the same cells at the other lengths, on one shared item set
# The models run at the comparison budget (the 64K set), on the questions judged at every budget
# all of them were run at (all four in the paper), for every one of them.

# %%
with R.section(f"Figure 8 (models run at {b_cmp})"):
    # the paper leaves out Figure 5's budget (drawn above on all models) but keeps the comparison budget
    ms8, shared, drawn = R.fig8_panels(release, b_cmp, b_fig5, models)
    oe_shared = R.operation_evidence(release, budgets=shared, models=ms8, pairing="shared", shared_budgets=shared)
    caption8 = f"{artifacts.caption('fig8', budget=b_cmp)} ({R.describe_shared_set(ms8, shared, b_cmp)})"
    print("Figure 8:", R.describe_shared_set(ms8, shared, b_cmp), "| panels:", ", ".join(drawn))
    fig = P.operation_heatmaps(oe_shared, budgets=drawn, title=R.describe_shared_set(ms8, shared, b_cmp, drawn))
    output.save_figure(fig, out, "fig8_operation_evidence_shared", data=oe_shared, release=release, caption=caption8)
    output.save_table(R.fig8(release, budget=b_cmp, models=models), out, "fig8", synthetic=release.synthetic,
                      caption=artifacts.caption("fig8", budget=b_cmp))

# %% [markdown]
# ## Table 16 — answerable versus refusal at 64K
# The paper reports that the two columns rank the models almost independently (Spearman ρ = −0.02,
# Appendix D.3); the rank correlation of this release is computed below.

# %%
with R.section(f"Table 16 ({b_cmp})"):
    t16 = R.answerable_vs_refusal(release, budget=b_cmp, models=models)
    summary16 = R.answerable_refusal_summary(release, budget=b_cmp, models=models, table=t16)
    output.save_finding(F.answerable_vs_refusal(summary16, t16), out)
    access = dict(zip(release.models["model"], release.models["access"]))
    fig = P.answerable_refusal_scatter(t16, summary=summary16, groups=access)
    output.save_figure(fig, out, "table16_answerable_vs_refusal", data=t16, release=release)
    output.save_table(R.table16(release, budget=b_cmp, models=models), out, "table16", synthetic=release.synthetic,
                      caption=f"Table 16: answerable and AR accuracy (%) at {b_cmp}")
    display(summary16)
    display(t16)

# %% [markdown]
# ## Table 17 — refusal accuracy by evidence type and by source operation

# %%
with R.section("Table 17"):
    t17 = R.table17(release, budgets=budgets, models=models)
    note17 = R.missing_source_operations(release, models=models)
    if note17:
        print(f"Table 17 by source operation: skipped \u2014 {note17}")
    output.save_table(t17, out, "table17", synthetic=release.synthetic, caption="Table 17: mean AR accuracy (%)")
