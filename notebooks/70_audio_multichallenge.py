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
amc_data_dir = "data/synthetic-amc"
out_dir = "figures"
seed = 0
n_boot = 10_000

# %% [markdown]
# # Audio MultiChallenge: rubric-graded spoken dialogue (AMC paper, Tables 2-5, Figures 5-9)
#
# Every task of Audio MultiChallenge is graded by binary rubric items. **APR** counts a task
# as passed only if all its items pass; **ARS** is the mean over tasks of the share of items
# satisfied (§3.1, App. A.4). Beyond the paper: Wilson 95% intervals on APR and task-bootstrap
# intervals on ARS, an exact McNemar test per system for human vs TTS audio, and Fisher-z
# intervals on the length correlations. The runner passes `amc_data_dir` (the `--data`
# release if it is an AMC release, else the bundled SYNTHETIC one).

# %%
from voxmem_analysis import output
from voxmem_analysis.analysis import amc as A
from voxmem_analysis.io import load_amc
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.plots import amc as P

release = load_amc(resolve(amc_data_dir))
out = OutputFolder(out_dir, notebook="70_audio_multichallenge", release=release,
                   parameters=dict(amc_data_dir=amc_data_dir, seed=seed, n_boot=n_boot))
print(release.label(), release.stats)
syn = release.synthetic

# %% [markdown]
# ## Table 2 — APR and ARS per system, per-axis APR

# %%
t2 = A.amc_table2(release, seed=seed, n_boot=n_boot)
output.save_table(t2, out, "amc_table2", digits=2, synthetic=syn,
                  caption="AMC Table 2: APR / ARS (%) with Wilson / task-bootstrap 95% intervals, per-axis APR");

# %% [markdown]
# ## Table 3 — LLM judges against human labels

# %%
t3 = A.amc_table3(release)
output.save_table(t3, out, "amc_table3", digits=3, synthetic=syn, caption="AMC Table 3: judge agreement with humans");

# %% [markdown]
# ## Table 4 — human vs TTS user audio (385-task subset)

# %%
t4 = A.amc_table4(release)
output.save_table(t4, out, "amc_table4", digits=2, synthetic=syn,
                  caption="AMC Table 4: APR (%) on human vs TTS user audio; exact McNemar p per system");

# %% [markdown]
# ## Table 5 — cascaded (ASR + LLM) vs end-to-end

# %%
t5 = A.amc_table5(release)
output.save_table(t5, out, "amc_table5", digits=2, synthetic=syn,
                  caption="AMC Table 5: cascaded vs E2E APR (%); a: 385 tasks, b: 67 audio-specific tasks");

# %% [markdown]
# ## Figures 5-7 — audio-cue memory, instruction types, edit types

# %%
f5 = A.amc_fig5(release, seed=seed, n_boot=n_boot)
output.save_figure(P.plot_audio_cue(f5, metric="APR"), out, "amc_fig5", data=f5, release=release)
f6 = A.amc_fig6(release)
output.save_figure(P.plot_rubric_types(f6, ["Fixed", "Conditional"], title="Instruction Retention ARS by instruction type"),
                   out, "amc_fig6", data=f6, release=release)
f7 = A.amc_fig7(release)
output.save_figure(P.plot_rubric_types(f7, ["Mid-utterance", "Prior-turn", "Unedited"],
                                       title="Voice Editing ARS by edit type"), out, "amc_fig7", data=f7, release=release)
f5.loc[["Mean"]]

# %% [markdown]
# ## Figure 8 — APR by turn count and by cumulative user audio
#
# Under each bin: its task count `n` and the count per axis (IM/IR/SC/VE). A point resting on fewer
# than 5 tasks is an open grey marker joined by a dotted line (read it as anecdote, not a rate);
# a bin with fewer than 5 tasks in all is shaded.

# %%
f8 = A.amc_fig8(release)
output.save_figure(P.plot_bins(f8), out, "amc_fig8", data=f8, release=release)
f8

# %% [markdown]
# ## Figure 9 — ARS vs mean response length

# %%
f9 = A.amc_fig9(release)
output.save_figure(P.plot_length(f9), out, "amc_fig9", data=f9, release=release)
f9.loc[["Pearson r", "Spearman rho"]]
