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
# requires: ablation
data_dir = "data/synthetic"
out_dir = "figures"
seed = 0
n_boot = 10_000
model = None
budget = None          # None: 8K (the paper's) if the ablation ran there, else the budget it ran at most

# %% [markdown]
# # Transcript-only ablation (paper Table 2, §3.3)
#
# One model answers the answerable items of one budget (8K in the paper) twice, under the
# no-abstention instruction: with the audio history and with each user turn replaced by its
# synthesis text. Items that
# really need the audio should lose accuracy without it, while speech semantics (answerable from
# words) should not; the paper reports exactly that (audio-native 46.2% → 4.4%, speech semantics
# 75.9% → 71.0%, §3.3), and what this release shows is computed below. Items are paired by
# question; what the paper does not give is added: an exact McNemar test per row and a paired
# bootstrap 95% interval on each drop (items resampled; pooled rows within evidence type).

# %%
from IPython.display import display

from voxmem_analysis.analysis import ablation as A
from voxmem_analysis.analysis.selection import budget_note
from voxmem_analysis.analysis import findings as F
from voxmem_analysis import load_release, output
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.plots import ablation as P

release = load_release(resolve(data_dir))
out = OutputFolder(out_dir, notebook="31_transcript_ablation", release=release,
                   parameters=dict(data_dir=data_dir, seed=seed, n_boot=n_boot, model=model, budget=budget))
print(release.label())
res = A.transcript_ablation_release(release, model=model, budget=budget, seed=seed, n_boot=n_boot)
print(f"model: {res.model}; budget: {res.budget} "
      f"({budget_note(res.budget, budget, '8K', 'the budget it ran at most', absent='the ablation did not run at')})")
for problem in res.problems:
    print(problem)
if len(res.unpaired):
    display(res.unpaired)

# %% [markdown]
# ## Table 2 — full audio vs transcript only

# %%
t2 = res.wide()
output.save_finding(F.transcript_ablation(res.table), out)
output.save_table(t2, out, "table2", synthetic=release.synthetic,
                  caption=f"Table 2: acoustic-evidence validation with {res.model} ({res.budget}, answerable items)");

# %% [markdown]
# ## Figure
# Bars: accuracy under each condition; right: the drop with its paired bootstrap interval
# and the McNemar p-value.

# %%
fig = P.ablation_figure(res.table, title=f"{res.model}: full audio vs transcript only")
output.save_figure(fig, out, "table2_ablation", data=res.table, release=release)
res.table
