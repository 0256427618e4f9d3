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
# requires: attribution
data_dir = "data/synthetic"
out_dir = "figures"

# %% [markdown]
# # Error attribution at 64K (paper §4.4 Finding 6, Appendix D.5, E.1–E.5, F.5)
#
# Every wrong, committed answer of the 64K model set's systems (ten in the paper) on the
# audio-native answerable items was audited: the auditor reports *where the answer came from* (`attribution/**/*.jsonl`),
# and the class is derived from that record by the fixed, ordered rule table of
# `voxmem_analysis.analysis.attribution` (Table 19, E.2). Refusals, empty generations and truncated
# answers carry no committed answer and are removed first, in that order (D.5).
# Proportions are macro-averaged over model × evidence-type cells with at least five errors.

# %%

from voxmem_analysis.analysis import attribution as att
from voxmem_analysis.analysis import findings as F
from voxmem_analysis import artifacts, load_release, output
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.plots import attribution as P

release = load_release(resolve(data_dir))
out = OutputFolder(out_dir, notebook="40_error_attribution", release=release,
                   parameters=dict(data_dir=data_dir))
models = release.models_in_64k_set()
print(release.label())
print("models:", ", ".join(models))

# %% [markdown]
# ## The rule table (Table 19 / E.2), as code applies it

# %%
att.rule_table()

# %% [markdown]
# ## Audit records and population (D.5)
# Records are validated (malformed lines, missing fields, unknown values, duplicates, records
# outside the population); problems are listed, never silently dropped.

# %%
audit, problems = att.load_audit_records(release.path, frame=release.frame, models=models, strict=False)
for p in problems:
    print(p)
population = att.attribution_population(release.frame, audit, models=models)
output.save_table(population.set_index("stage"), out, "attribution_population", digits=0,
                  synthetic=release.synthetic, caption="Appendix D.5: attribution population and exclusions")
output.save_table(att.population_table(release.frame, audit, models=models), out, "population",
                  synthetic=release.synthetic, caption=artifacts.caption("population"));

# %%
errors = att.attributed_errors(release.frame, audit, models=models)
errors.groupby(["class", "rule"]).size().rename("errors").to_frame()

# %% [markdown]
# ## Table 20 — attributed errors by subtype and evidence type

# %%
t20 = att.table20(errors)
output.save_table(t20, out, "table20", digits=0, synthetic=release.synthetic,
                  caption="Table 20: attributed errors at 64K by subtype (top) and by evidence type (middle)");

# %% [markdown]
# ## Figure 7 — class shares by memory operation and by evidence type
# The paper reports distinct error profiles (Finding 6: IE errors mostly binding, paralinguistic
# errors mostly localization, ...), reading the shares averaged over model × evidence cells; the
# most frequent class of each group here is counted below (and the mean over cells named where it differs).

# %%
fig7_data = att.class_proportions_by(errors, ("operation", "evidence_type"))
counts7 = att.class_proportions_by(errors, ("operation", "evidence_type"), average="count")
output.save_finding(F.error_profile(fig7_data, counts7), out)
fig = P.figure7(fig7_data)
output.save_figure(fig, out, "fig7_error_attribution", data=fig7_data, release=release)
output.save_table(att.figure_table(errors, ("operation", "evidence_type")), out, "fig7",
                  synthetic=release.synthetic, caption=artifacts.caption("fig7"));

# %% [markdown]
# ## Figure 10 — class shares by question subtype

# %%
fig10_data = att.class_proportions(errors, by="subtype")
fig = P.figure10(fig10_data)
output.save_figure(fig, out, "fig10_error_attribution_subtype", data=fig10_data, release=release)
output.save_table(att.figure_table(errors, ("subtype",)), out, "fig10",
                  synthetic=release.synthetic, caption=artifacts.caption("fig10"));

# %% [markdown]
# Macro-averaged and pooled shares differ where a group's errors are spread unevenly over
# systems; the pooled shares are the proportions of Table 20's counts.

# %%
att.class_proportions(errors, by="subtype", average="pooled")
