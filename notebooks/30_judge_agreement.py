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
# requires: judge2
data_dir = "data/synthetic"
out_dir = "figures"
seed = 0
n_boot = 10_000
budget = None          # None: 8K (the paper's) if the second judge scored it, else the budget it scored most
production_family = "Gemini"

# %% [markdown]
# # Judge cross-validation (paper Table 13, Appendix C.5)
#
# Every prediction of one budget (8K in the paper) scored by the production judge is re-scored by a
# second judge with the same prompt; the two verdicts are paired on (model, item). Provider-rejected
# predictions leave every count; failed generations and unparseable verdicts count as wrong under
# both judges. Predictions that only one judge scored are listed, never dropped silently. Every
# model answers the same items, so the intervals resample items (`n_boot` resamples, `seed`).
# Every number below comes from `voxmem_analysis.analysis.judges`.

# %%
from IPython.display import display

from voxmem_analysis.analysis import findings as F
from voxmem_analysis.analysis import judges as J
from voxmem_analysis.analysis.selection import budget_note
from voxmem_analysis import load_release, output
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.plots import judges as P

release = load_release(resolve(data_dir))
out = OutputFolder(out_dir, notebook="30_judge_agreement", release=release,
                   parameters=dict(data_dir=data_dir, seed=seed, n_boot=n_boot, budget=budget,
                                   production_family=production_family))
print(release.label())
cmp = J.compare_judges(release, budget=budget, production_family=production_family, n_boot=n_boot, seed=seed)
print(f"judges: {cmp.judge1} (production) vs {cmp.judge2} at {cmp.budget} "
      f"({budget_note(cmp.budget, budget, '8K', 'the budget it scored most', absent='the second judge scored no prediction at')})")
for problem in cmp.problems:
    print(problem)
if len(cmp.unmatched):
    display(cmp.unmatched)

# %% [markdown]
# ## Table 13 — agreement per slice
# Δ is second − production accuracy in points; agreement is the share of predictions with the
# same verdict; κ is Cohen's kappa. The paper reports close agreement at 8K with the largest gap on
# AR items; how closely the judges of this release agree is computed below.

# %%
t13 = cmp.wide()
output.save_finding(F.judge_agreement(cmp.summary, cmp.table), out)
output.save_table(t13, out, "table13", synthetic=release.synthetic,
                  caption=f"Table 13: cross-judge agreement at {cmp.budget}; 95% intervals resample items "
                          f"({n_boot} resamples, seed {seed})");

# %% [markdown]
# ## Appendix C.5 — ranking, per-model differences and family favoritism
# Favoritism: how much more the production judge credits its own family's predictions than
# the others', relative to the second judge (pooled over predictions).

# %%
c5 = J.judges_table(cmp, production_family=production_family)
output.save_table(c5, out, "judges", formats=("csv",), show=False)
output.save_table(J.printed_judges(c5), out, "judges", formats=("md", "tex"), synthetic=release.synthetic,
                  caption="Appendix C.5: judge cross-validation (\u0394 = second - production judge)")
cmp.summary

# %% [markdown]
# ## Where the judges part
# Disagreements by stratum and direction. The paper reports that on refusal items the second judge
# credits capability refusals ("I do not have access to previous conversations"), which the rubric
# of Appendix C.4 counts as incorrect; how many there are in this release is computed below.

# %%
output.save_finding(F.capability_refusals(cmp.disagreements), out)
output.save_table(cmp.disagreements.set_index("stratum"), out, "judges_disagreements", digits=0,
                  synthetic=release.synthetic, caption="Disagreements between the judges");

# %% [markdown]
# ## Figures
# Left: each model's accuracy under the two judges (the identity line is perfect agreement
# on accuracy). Right: the Table 13 slices as paired dots.

# %%
ax = P.judge_scatter(cmp.per_model, highlight_family=production_family)
output.save_figure(ax.figure, out, "judges_per_model", data=cmp.per_model, release=release)
ax = P.judge_slices(cmp.table)
output.save_figure(ax.figure, out, "table13_slices", data=cmp.table, release=release)
cmp.per_model
