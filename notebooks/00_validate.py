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
fail_on_error = True

# %% [markdown]
# # Validating the release
#
# Every other notebook reads the same release directory. Here it is read in lenient mode, so
# that every problem is listed (with file, line and field) instead of stopping at the first,
# and the predictions are counted per model, budget and scoring status (Appendix C.4:
# `provider_rejected` leaves the denominator, `failed` and `ungraded` count as wrong).

# %%
from voxmem_analysis import load_release, output
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce.provenance import OutputFolder
from voxmem_analysis.io import validation as V
from voxmem_analysis.errors import VoxMemDataError

release = load_release(resolve(data_dir), strict=False)
out = OutputFolder(out_dir, notebook="00_validate", release=release,
                   parameters=dict(data_dir=data_dir, fail_on_error=fail_on_error))
print(release.label())
print(f"description: {release.meta.get('description', '')}")
s = release.stats
print(f"files read: {s.get('files', 0)}; lines: {s.get('lines', 0)}; predictions kept: {release.frame.height}; "
      f"lines rejected: {s.get('rejected_lines', 0)}; identical duplicates ignored: {s.get('duplicates_identical', 0)}")
for part in ("judge2_rows", "ablation_rows"):
    if part in s:
        print(f"{part.replace('_rows', '')}: {s[part]} predictions")

# %% [markdown]
# ## Predictions per model, budget and status

# %%
counts = V.status_counts(release)
output.save_table(counts, out, "validation_counts", digits=0, synthetic=release.synthetic,
                  caption="Predictions per model, budget and scoring status");

# %%
print("totals:", ", ".join(f"{k}={int(v)}" for k, v in counts.drop(columns="total").sum().items()))

# %% [markdown]
# ## Questions per evidence type and operation (one budget)
# The paper reports 232 / 147 / 264 / 156 questions of speech semantics, speaker, paralinguistic
# and environmental evidence, and no speech-semantics information extraction; the table counts
# this release's questions.

# %%
design = V.design_counts(release)
output.save_table(design, out, "validation_design", digits=0, synthetic=release.synthetic,
                  caption="Questions per evidence type and operation");

# %% [markdown]
# ## Problems

# %%
by_code = V.problem_summary(release.problems)
output.save_table(by_code, out, "validation_problems", digits=0, synthetic=release.synthetic,
                  caption="Validation problems by code")
print(f"{len(release.errors())} error(s), {len(release.warnings())} warning(s)")
for p in release.problems[:50]:
    print(p)

# %%
if fail_on_error and release.errors():
    raise VoxMemDataError(release.problems, f"{len(release.errors())} error(s) in release {data_dir!r}")
