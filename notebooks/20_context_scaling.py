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
# Comparison budget; None: 64K if any model was run at 64K, else the longest budget present.
comparison_budget = None
# Baseline budget; None: 8K if present, else the shortest budget present.
baseline_budget = None

# %% [markdown]
# # Context-length scaling (paper §4.4, Figure 6, Appendix D.4–D.5)
#
# In VoxMem the same question and evidence appear at every budget (the benchmark's nested design,
# App. B.6), so any change is due to the longer surrounding history. Models: those run at both the baseline and the comparison budget (in the
# paper, 8K and 64K: the 64K set, the same models at every budget). Drop = baseline − comparison
# accuracy in points; retention = comparison / baseline accuracy. Intervals: percentile 95%
# bootstrap over items, both budgets rescored on every resample.
#
# The budgets used are printed below; a section the release cannot support (e.g. a single
# budget) is skipped with the reason. Whether accuracy falls or rises with length here, and by how
# much, is computed from the tables (`voxmem_analysis.analysis.findings`) and shown next to the
# paper's finding.

# %%
from IPython.display import display

from voxmem_analysis import MissingDataError, load_release, output
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.analysis import findings as F
from voxmem_analysis.analysis import scaling as S
from voxmem_analysis.plots import scaling as P
from voxmem_analysis.analysis.results import section

release = load_release(resolve(data_dir))
out = OutputFolder(out_dir, notebook="20_context_scaling", release=release,
                   parameters=dict(data_dir=data_dir, seed=seed, n_boot=n_boot, models=models,
                                   budgets=budgets, comparison_budget=comparison_budget,
                                   baseline_budget=baseline_budget))
print(release.label())
print(S.describe_scaling(release, baseline=baseline_budget, comparison=comparison_budget, models=models))
try:
    plan = S.scaling_plan(release, baseline=baseline_budget, comparison=comparison_budget, models=models)
except MissingDataError:  # the reason was printed just above; every section below says it again
    plan = None
b0, b1 = (plan.baseline, plan.comparison) if plan else (baseline_budget, comparison_budget)
arrow = plan.arrow if plan else "scaling"

# %% [markdown]
# ## Figure 6 — accuracy and retention per evidence type

# %%
with section("Figure 6"):
    es = S.evidence_scaling(release, models=models, budgets=budgets, reference=b0, comparison=b1)
    fig = P.evidence_scaling_lines(es, title=plan.title() if plan else None)
    output.save_figure(fig, out, "fig6_context_scaling", data=es, release=release)
    output.save_table(S.fig6_table(es), out, "fig6", synthetic=release.synthetic,
                      caption=f"Figure 6: retention (% of {plan.baseline}) and accuracy (%), {plan.title()}")

# %% [markdown]
# ## Table 18 — paired change from 8K to 64K with bootstrap intervals
# (From the baseline to the comparison budget printed above.)

# %%
with section(f"Table 18 ({arrow})"):
    pc = S.paired_change(release, baseline=b0, comparison=b1, models=models, n_boot=n_boot, seed=seed)
    output.save_finding(F.length_change(pc), out)
    fig = P.change_forest(pc, title=plan.title())
    output.save_figure(fig, out, "table18_forest", data=pc, release=release)
    output.save_table(S.table18_table(pc), out, "table18", digits=3, synthetic=release.synthetic,
                      caption=f"Table 18: paired change {plan.arrow}, 95% percentile bootstrap CI "
                              f"({n_boot} resamples, seed {seed})")

# %% [markdown]
# ### Table 18 with question families resampled (beyond the paper)
# Each refusal question replays the history of the answerable question it was derived from, so the
# two are not independent. Resampling whole families instead of questions gives the intervals
# below; `drop deff` / `retention deff` are the design effects (family-level over question-level
# bootstrap variance; 1 = the pairing adds nothing), `... mc_se` the Monte-Carlo standard error
# of each endpoint (`voxmem-analysis table table18 --cluster family --mc-se true`).

# %%
with section(f"Table 18, family resampling ({arrow})"):
    t18f = S.table18(release, baseline=b0, comparison=b1, models=models, n_boot=n_boot, seed=seed,
                     cluster="family", mc_se=True)
    output.save_table(t18f, out, "table18_family", digits=3, synthetic=release.synthetic,
                      caption=f"Table 18 with question families resampled, {plan.arrow}: design effects and "
                              f"Monte-Carlo SEs ({n_boot} resamples, seed {seed})")

# %% [markdown]
# ## A model of the length effect — odds ratio per doubling of the history (beyond the paper)
# Table 18 compares two budgets by a ratio of means. Using every budget at once, a logistic GEE
# per evidence type (model fixed effects; exchangeable correlation within each question; robust
# 95% intervals) gives the odds ratio of a correct answer per doubling of the history, 8K → 16K →
# 32K → 64K, on the same models and items as Table 18. Below 1, the odds fall with each doubling;
# above 1, they rise.

# %%
with section(f"Scaling model ({arrow})"):
    from voxmem_analysis.analysis import scaling_model as SM

    smod = SM.scaling_model(release, baseline=b0, comparison=b1, models=models)
    output.save_finding(F.odds_per_doubling(smod), out)
    fig = P.odds_ratio_forest(smod, title=f"Odds of a correct answer per doubling, {plan.title()}")
    output.save_figure(fig, out, "scaling_model", data=smod, release=release)
    output.save_table(SM.model_table(smod), out,
                      "scaling_model", digits=3, synthetic=release.synthetic,
                      caption=f"Odds ratio per doubling of the history (GEE, robust 95% CI), {plan.title()}")

# %% [markdown]
# ## How small a change can these items detect? (power, beyond the paper)
# A paired comparison's power depends on the items and on how often the two sides disagree
# (the discordance). At the release's median discordance between the two budgets (per model),
# the minimum change detectable with 80% power (two-sided 5%), and the items a 3-point change
# would need (`voxmem-analysis power --data ... --compare budgets`).

# %%
with section(f"Power ({arrow})"):
    from voxmem_analysis.analysis.power import observed_discordance, release_power

    display(observed_discordance(release, compare="budgets", budget=b0, comparison=b1, models=models))
    display(release_power(release, compare="budgets", budget=b0, comparison=b1, models=models, target=0.03))

# %% [markdown]
# ## Appendix D.5 — baseline difficulty versus context sensitivity
# The paper reports that, over model × evidence cells, the drop in points is tied to the baseline
# level (a cell near the floor cannot lose many points) while retention is not, so retention
# separates weak memory from sensitivity to length. The change contains the baseline, so the two are
# coupled by construction; the change is also correlated with the mean of both budgets (Oldham's
# correction), and a model's four cells are not independent, so the intervals resample models.

# %%
with section(f"Appendix D.5 ({arrow})"):
    cells = S.cell_changes(release, baseline=b0, comparison=b1, models=models)
    corr = S.sensitivity_correlations(release, cells=cells, n_boot=n_boot, seed=seed)
    output.save_finding(F.baseline_sensitivity(corr), out)
    fig = P.sensitivity_scatter(cells, correlations=corr, title=plan.title())
    output.save_figure(fig, out, "d5_sensitivity", data=cells, release=release)
    output.save_table(S.d5_table(cells, corr), out, "d5", digits=3,
                      synthetic=release.synthetic,
                      caption=f"Appendix D.5: Spearman correlations over model x evidence cells, {plan.arrow}; p as "
                              f"the paper computes it (cells independent), 95% intervals resampling models "
                              f"({n_boot} resamples, seed {seed})")
    display(corr)
