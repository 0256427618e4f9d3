"""APR and ARS of Audio MultiChallenge runs (judged runs or a release) by any slice, paired comparisons of systems
and judge agreement, over the task frame of :func:`task_frame`; APR with the Wilson interval, ARS with a task
bootstrap drawing tasks within their axis, everywhere the same."""
from __future__ import annotations

import pandas as pd
import polars as pl

from voxmem_analysis.analysis.amc import task_scores
from voxmem_analysis.analysis.verdicts import BootstrapSettings, compare_systems, judge_agreement_pairs, slice_accuracy
from voxmem_analysis.analysis.verdicts.compare import P_ADJUST_FAMILIES, holm_columns
from voxmem_analysis.errors import AnalysisInputError
from voxmem_analysis.taxonomy import system_label

__all__ = ["SYSTEM_COLUMNS", "PRED_ERROR_SCORING", "task_frame", "amc_slice", "amc_compare",
           "amc_judges"]

#: Columns naming a system (never pooled into an overall row).
SYSTEM_COLUMNS = ("system", "model", "output_modality", "judge")
_SLICE_COLUMNS = ["level", "n_tasks", "n_passed", "apr", "apr_ci_low", "apr_ci_high", "ars", "ars_ci_low",
                  "ars_ci_high", "ars_interval", "n_boot", "seed"]


#: How a task with a ``pred_error`` (no response) is scored: the judge's rubric results as they stand (as the
#: evaluation pipelines score it), or zero items met.
PRED_ERROR_SCORING = ("as-judged", "zero")


def task_frame(data, judge: str | None = None, pred_error: str = "as-judged") -> tuple[pl.DataFrame, list[str]]:
    """One row per system × task, and notes (the judges chosen; tasks with a ``pred_error`` and what each scoring gives).

    ``data``: judged runs (one judge per system: ``judge`` where it graded it) or an Audio MultiChallenge release;
    ``pred_error``: ``"as-judged"`` keeps the judge's rubric results of a task without a response (it passes only when
    every item is met), ``"zero"`` scores it 0 items met. Returns (polars.DataFrame, list of str): ``system``
    (:func:`~voxmem_analysis.taxonomy.system_label`), ``model, output_modality, task_id, axis, n_rubrics, n_met, passed, share``, then the task's
    other columns."""
    if pred_error not in PRED_ERROR_SCORING:
        raise AnalysisInputError(f"pred_error must be one of {PRED_ERROR_SCORING}, got {pred_error!r}", "pred_error")
    if getattr(data, "benchmark", None) == "amc-runs" and hasattr(data, "one_judge"):
        runs, notes = data.one_judge(judge)
        frame = runs.results.rename({"system": "model"}).drop("judge")
    else:
        notes = []
        scores = task_scores(data.verdicts)
        frame = pl.from_pandas(scores.merge(data.tasks, on="task_id", how="left")).rename(
            {"n_passed": "n_met"})
    label = pl.struct("model", "output_modality").map_elements(
        lambda r: system_label(r["model"], r["output_modality"]), return_dtype=pl.Utf8)
    frame = frame.with_columns(label.alias("system"))
    if "pred_error" in frame.columns and frame["pred_error"].any():
        notes += _pred_error_notes(frame, pred_error)
        if pred_error == "zero":
            err = pl.col("pred_error")
            frame = frame.with_columns(pl.when(err).then(0).otherwise(pl.col("n_met")).alias("n_met"),
                                       pl.when(err).then(False).otherwise(pl.col("passed")).alias("passed"),
                                       pl.when(err).then(0.0).otherwise(pl.col("share")).alias("share"))
    first = ["system", "model", "output_modality", "task_id", "axis", "n_rubrics", "n_met", "passed", "share"]
    return frame.select(first + [c for c in frame.columns if c not in first]), notes


def _pred_error_notes(frame: pl.DataFrame, pred_error: str) -> list[str]:
    """Per system with tasks without a response: how many, the items the judge marked met on them, ARS and APR
    under each scoring."""
    per = (frame.group_by("system", maintain_order=True)
           .agg(n=pl.col("pred_error").sum(), met=pl.col("n_met").filter(pl.col("pred_error")).sum(),
                items=pl.col("n_rubrics").filter(pl.col("pred_error")).sum(),
                passed=(pl.col("passed") & pl.col("pred_error")).sum(), tasks=pl.len(),
                ars=pl.col("share").mean() * 100, ars_zero=pl.col("share").filter(~pl.col("pred_error")).sum(),
                apr=pl.col("passed").mean() * 100)
           .filter(pl.col("n") > 0))
    out = []
    for r in per.iter_rows(named=True):
        ars_zero, apr_zero = 100 * r["ars_zero"] / r["tasks"], r["apr"] - 100 * r["passed"] / r["tasks"]
        out.append(f"{r['system']}: {r['n']} task(s) with a pred_error (no response); the judge marked {r['met']} of "
                   f"{r['items']} rubric items met on them ({r['passed']} passed). As judged (--pred-error as-judged, "
                   f"the default): ARS {r['ars']:.2f}, APR {r['apr']:.2f}; as 0 items met (--pred-error zero): ARS "
                   f"{ars_zero:.2f}, APR {apr_zero:.2f}. Used here: {pred_error}")
    return out


def amc_slice(frame, by, *, n_boot: int = 10_000, seed: int = 0, ci_level: float = 0.95,
              progress=None) -> pd.DataFrame:
    """APR (Wilson) and ARS (task bootstrap) per slice of a :func:`task_frame` ``by`` its columns; with a task column
    among them each system's ``overall`` row pools its levels (systems are never pooled). Columns ``*by, level, n_tasks,
    n_passed, apr, apr_ci_low, apr_ci_high, ars, ars_ci_low, ars_ci_high, ars_interval, n_boot, seed`` (%)."""
    by = [c.strip() for c in by.split(",")] if isinstance(by, str) else list(by)
    missing = [c for c in by if c not in frame.columns]
    if missing:
        raise AnalysisInputError(f"no column {', '.join(map(repr, missing))} to slice by; columns: "
                                 f"{', '.join(frame.columns)}", "by")
    rest = [c for c in by if c not in SYSTEM_COLUMNS]
    tcol = rest[-1] if rest else None
    boot = BootstrapSettings(n_boot=n_boot, seed=seed, ci_level=ci_level, progress=progress)
    common = dict(item="task_id", scored=None, type_col=tcol, settings=boot,
                  separate=[c for c in by if c in SYSTEM_COLUMNS] or None)
    apr = slice_accuracy(frame, by, value="passed", interval="wilson", **common)
    ars = slice_accuracy(frame, by, value="share", interval="bootstrap", **common)
    apr, ars = apr[apr["level"] != "macro"], ars[ars["level"] != "macro"]
    keys = [*by, "level"]
    out = apr[keys + ["n", "n_correct", "accuracy", "accuracy_ci_low", "accuracy_ci_high"]].rename(columns={
        "n": "n_tasks", "n_correct": "n_passed", "accuracy": "apr", "accuracy_ci_low": "apr_ci_low",
        "accuracy_ci_high": "apr_ci_high"})
    ars = ars[keys + ["accuracy", "accuracy_ci_low", "accuracy_ci_high", "interval"]].rename(columns={
        "accuracy": "ars", "accuracy_ci_low": "ars_ci_low", "accuracy_ci_high": "ars_ci_high", "interval": "ars_interval"})
    for c in by:   # the two tables hold the same levels; object keys merge alike
        out[c], ars[c] = out[c].astype(object), ars[c].astype(object)
    out = out.merge(ars, on=keys, how="left", validate="one_to_one", sort=False)
    out["n_boot"], out["seed"] = n_boot, seed
    return out[[*by, *_SLICE_COLUMNS]].reset_index(drop=True)


def amc_compare(frame, *, systems=None, by_axis: bool = True, n_boot: int = 10_000, seed: int = 0,
                ci_level: float = 0.95, alpha: float = 0.05, family: str = "all", progress=None) -> pd.DataFrame:
    """Every pair of systems on the tasks both have, overall and (``by_axis``) per axis: exact McNemar on task pass, the
    paired task bootstrap (within axes) of the APR and ARS differences (first minus second, pp), Holm over every row
    (``family="per-slice"``: within each axis and the overall rows). Columns ``axis, system_a, system_b, n_tasks,
    only_a, only_b, apr_a, apr_b, apr_diff, apr_diff_ci_low, apr_diff_ci_high, apr_diff_ci_flag, a_pass_b_fail,
    a_fail_b_pass, p_mcnemar, p_holm, n_family, holm_family, reject, ars_a, ars_b, ars_diff, ars_diff_ci_low,
    ars_diff_ci_high, ars_diff_ci_flag, n_boot, seed``."""
    if family not in P_ADJUST_FAMILIES:
        raise AnalysisInputError(f"family must be one of {P_ADJUST_FAMILIES}, got {family!r}", "family")
    parts = []
    boot = BootstrapSettings(n_boot=n_boot, seed=seed, ci_level=ci_level, progress=progress)
    strata = "axis" if "axis" in frame.columns else None
    for groups in ([None] + (["axis"] if by_axis else [])):
        kw = dict(system="system", item="task_id", scored=None, groups=groups, systems=systems, alpha=alpha,
                  strata=strata, settings=boot)
        apr = compare_systems(frame, value="passed", **kw)
        ars = compare_systems(frame, value="share", **kw)
        if groups is None:
            apr.insert(0, "axis", "overall")
            ars.insert(0, "axis", "overall")
        parts.append(_paired(apr, ars))
    out = pd.concat(parts, ignore_index=True)
    holm_columns(out, ["axis"] if family == "per-slice" else [], alpha)
    return out[_COMPARE_COLUMNS]


_COMPARE_COLUMNS = ["axis", "system_a", "system_b", "n_tasks", "only_a", "only_b", "apr_a", "apr_b", "apr_diff",
                    "apr_diff_ci_low", "apr_diff_ci_high", "apr_diff_ci_flag", "a_pass_b_fail", "a_fail_b_pass",
                    "p_mcnemar", "p_holm", "n_family", "holm_family", "reject", "ars_a", "ars_b", "ars_diff",
                    "ars_diff_ci_low", "ars_diff_ci_high", "ars_diff_ci_flag", "n_boot", "seed"]


def _paired(apr: pd.DataFrame, ars: pd.DataFrame) -> pd.DataFrame:
    keys = ["axis", "system_a", "system_b"]
    a = apr[keys + ["n_common", "only_a", "only_b", "acc_a", "acc_b", "diff", "diff_ci_low", "diff_ci_high",
                    "diff_ci_flag", "a_right_b_wrong", "a_wrong_b_right", "p_mcnemar"]].rename(columns={
        "n_common": "n_tasks", "acc_a": "apr_a", "acc_b": "apr_b", "diff": "apr_diff", "diff_ci_low": "apr_diff_ci_low",
        "diff_ci_high": "apr_diff_ci_high", "diff_ci_flag": "apr_diff_ci_flag", "a_right_b_wrong": "a_pass_b_fail",
        "a_wrong_b_right": "a_fail_b_pass"})
    b = ars[keys + ["acc_a", "acc_b", "diff", "diff_ci_low", "diff_ci_high", "diff_ci_flag", "n_boot", "seed"]].rename(
        columns={"acc_a": "ars_a", "acc_b": "ars_b", "diff": "ars_diff", "diff_ci_low": "ars_diff_ci_low",
                 "diff_ci_high": "ars_diff_ci_high", "diff_ci_flag": "ars_diff_ci_flag"})
    for c in keys:
        a[c], b[c] = a[c].astype(object), b[c].astype(object)
    return a.merge(b, on=keys, how="left", validate="one_to_one", sort=False)


def amc_judges(rubric_results) -> pd.DataFrame:
    """Agreement of every pair of judges that graded the same system, rubric item by item, per axis and overall
    (:func:`~voxmem_analysis.analysis.verdicts.judge_agreement_pairs`; ``acc``: % of items met)."""
    frame = rubric_results
    if isinstance(frame, pl.DataFrame):
        label = pl.struct("system", "output_modality").map_elements(
            lambda r: system_label(r["system"], r["output_modality"]), return_dtype=pl.Utf8)
        frame = frame.with_columns(label.alias("system"))
    return judge_agreement_pairs(frame, judge="judge", within=("system",), item="rubric_id", by=("axis",),
                                 value="criteria_met", scored=None)
