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
manifest = "data/examples/longmemeval/manifest.csv"
questions = "data/examples/longmemeval/questions.json"
out_dir = "figures"
baseline = None        # None: 32k (the paper's) if the manifest has it, else its shortest budget
seed = 0
n_boot = 10_000

# %% [markdown]
# # Beyond VoxMem: LongMemEval-format verdicts
#
# The same analyses as for VoxMem, on `evaluate_qa.py` output files (VoiceLongMemEval, or any
# text memory system evaluated on LongMemEval), listed in a manifest (`path,system,budget,judge`)
# and typed by the question file. Accuracy counts an ungraded verdict (label missing or not a
# boolean) as incorrect. Intervals: Wilson for accuracies; paired item bootstrap (percentile,
# `n_boot` resamples, `seed`) for differences, changes and the macro-average. The shipped
# example is **synthetic** (see `data/examples/longmemeval/README.md`).

# %%
from voxmem_analysis.analysis import verdicts as G
from voxmem_analysis import output
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.io import load_longmemeval, select_judge
from voxmem_analysis.plots import verdicts as P

data = load_longmemeval(resolve(manifest), resolve(questions), strict=True)
out = OutputFolder(out_dir, notebook="60_longmemeval", release=data,
                   parameters=dict(manifest=manifest, questions=questions, baseline=baseline, seed=seed,
                                   n_boot=n_boot))
print(data.label())
budgets = [b for b in data.budgets() if b is not None]
b0 = baseline or next((b for b in budgets if str(b).lower() == "32k"), budgets[0] if budgets else None)
why = "as requested" if baseline else "the paper's" if str(b0).lower() == "32k" else "no 32k here; the shortest budget"
print(f"{data.frame.height} verdicts; systems: {', '.join(data.systems())}; budgets: {', '.join(map(str, data.budgets()))}; "
      f"scaling baseline: {b0} ({why})")
for p in data.warnings():
    print(p)
frame, notes = select_judge(data.frame)  # one judge per system and budget (the first listed)
for n in notes:
    print(n)

# %% [markdown]
# ## Accuracy by question type and system
# Per system and budget: each type, the pooled overall, and the macro-average over types
# (LongMemEval's "task-averaged accuracy").

# %%
boot = G.BootstrapSettings(n_boot=n_boot, seed=seed)
sl = G.slice_accuracy(frame, ["system", "budget", "question_type"], item="question_id", settings=boot)
fig = P.accuracy_dots(sl, category="question_type", series="system", facet="budget")
output.save_figure(fig, out, "lme_accuracy_by_type", data=sl, release=data)
output.save_table(sl.set_index("system"), out, "lme_slice", digits=1, synthetic=data.synthetic,
                  caption="Accuracy (%) by system, budget and question type, Wilson 95% CI");

# %% [markdown]
# ## Pairwise comparison of systems
# Every pair at the same budget on the questions both have (questions only one has are
# counted, not used): difference in points with a paired bootstrap interval, exact McNemar
# p, Holm-adjusted over every pair of the table.

# %%
cmp = G.compare_systems(frame, groups="budget", settings=boot)
fig = P.comparison_matrix(cmp, facet="budget")
output.save_figure(fig, out, "lme_comparison_matrix", data=cmp, release=data)
output.save_table(cmp.set_index("budget"), out, "lme_compare", digits=3, synthetic=data.synthetic,
                  caption=f"Pairwise differences (pp), paired bootstrap 95% CI ({n_boot} resamples, seed {seed}), exact McNemar, Holm");

# %% [markdown]
# ## Scaling with the budget
# Accuracy at each budget (Wilson intervals); change and retention relative to the baseline
# on the questions present at both budgets. Nothing assumes a sign: a system may gain.

# %%
if len(budgets) >= 2:
    sc = G.scaling_table(frame, baseline=b0, settings=boot)
    fig = P.scaling_curves(sc)
    output.save_figure(fig, out, "lme_scaling", data=sc, release=data)
    output.save_table(sc.set_index("system"), out, "lme_scaling", digits=3, synthetic=data.synthetic,
                      caption=f"Accuracy by budget; change (pp) and retention vs {b0}, paired bootstrap 95% CI",
                      show=False)
    display(sc[sc["budget"] != sc["baseline_budget"]])  # the saved table without the baseline rows
    corr = G.scaling_correlations(sc)
    output.save_table(corr.set_index("budget"), out, "lme_scaling_correlations", digits=3, synthetic=data.synthetic,
                      caption="Spearman correlations over system x question-type cells (Appendix D.5)")
else:
    print("Scaling with the budget: skipped \u2014 the manifest has one budget only")

# %% [markdown]
# ## Judge agreement
# Where a system and budget were scored by two judges: accuracy under each, percent
# agreement and Cohen's kappa, per question type.

# %%
jd = G.judge_agreement_pairs(data.frame)
if len(jd):
    output.save_table(jd.set_index("system"), out, "lme_judges", digits=3, synthetic=data.synthetic,
                      caption="Judge agreement per question type")
else:
    print("Judge agreement: skipped \u2014 no system and budget has two judges")
