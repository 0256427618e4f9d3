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

# %% [markdown]
# # Benchmark design (paper §3, Table 3, Appendix B.6, C.1, C.6)
#
# What the benchmark is made of, before any model is scored: the question composition
# (§3 / Table 3), the size of the histories at each budget (Figure 2(a), App. B.6), the
# nested-history rules, and the evaluated systems (Tables 12 and 14). Every number below comes
# from `voxmem_analysis.analysis.design`; no statistic here is random, so `seed` and `n_boot` are unused.

# %%
from IPython.display import display

from voxmem_analysis import load_release, output
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.analysis import design as H
from voxmem_analysis.analysis import findings as F
from voxmem_analysis.plots import design as P

release = load_release(resolve(data_dir))
out = OutputFolder(out_dir, notebook="05_benchmark_design", release=release,
                   parameters=dict(data_dir=data_dir, seed=seed, n_boot=n_boot))
print(release.label())

# %% [markdown]
# ## Composition — questions by evidence type, operation, subtype and answer type
# The paper's benchmark has 799 questions: 669 answerable (IE / MSR / TET) and 130 answer-refusal
# items derived from them, and excludes speech-semantics IE by design; the counts of this release
# follow. `Routes` counts the subtype × evidence cells of Table 3.

# %%
comp = H.benchmark_composition(release)
output.save_finding(F.composition(comp), out)
output.save_table(comp, out, "composition", synthetic=release.synthetic,
                  caption="Benchmark composition: questions per evidence type");

# %% [markdown]
# ## Figure 2(a) — history scale from 8K to 64K
# In the paper's design each budget doubles the history (about 2.5 to 20 minutes of audio from 8K
# to 64K) while the evidence stays fixed, so longer histories add only haystack and filler
# sessions; the growth in this release is computed below.

# %%
scale = H.history_scale(release)
output.save_finding(F.history_growth(scale), out)
fig = P.history_scale_panels(scale)
output.save_figure(fig, out, "fig2a_history_scale", data=scale, release=release)
fig2a = H.fig2a(release)
output.save_table(fig2a, out, "fig2a", synthetic=release.synthetic,
                  caption="Figure 2(a): history scale per budget (per item)");

# %% [markdown]
# ## Session roles per budget
# Mean sessions per history by role (evidence, same-key haystack, topical haystack, filler) and
# their shares; how the evidence share changes with the budget is computed below.

# %%
roles = H.session_roles(release, scale=scale)
output.save_finding(F.evidence_share(roles), out)
fig = P.session_roles_bars(roles)
output.save_figure(fig, out, "session_roles", data=roles, release=release)
roles

# %% [markdown]
# ## Nested design check (App. B.6)
# One row per question that breaks a rule (sessions and distractors only grow with the budget,
# same-key distractors at most 1/2/4/8, evidence and question unchanged). Empty means all hold.

# %%
nest = H.nesting_check(release)
print(f"{len(nest)} question(s) break the nested design" if len(nest) else "nested design holds for every question")
if len(nest):
    display(nest)

# %% [markdown]
# ## Table 12 — evaluated systems; Table 14 — the 64K model set

# %%
t12 = H.table12(release)
output.save_table(t12, out, "table12", synthetic=release.synthetic, caption="Table 12: evaluated systems");

# %%
t14 = H.table14(release)
output.save_table(t14, out, "table14", synthetic=release.synthetic, caption="Table 14: the 64K model set");
