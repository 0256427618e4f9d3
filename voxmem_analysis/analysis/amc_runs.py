"""APR and ARS of Audio MultiChallenge runs by any slice, paired comparisons, judge agreement.

Every function takes the task-level frame of :func:`task_frame` -- one row per system x task with
``passed`` (every rubric item met) and ``share`` (the share of items met) -- built from a release
(:class:`~voxmem_analysis.io.amc.AmcRelease`) or from judged runs (:class:`~voxmem_analysis.io.AmcRuns`),
and returns a tidy DataFrame.  The statistics are the package's engines (:mod:`voxmem_analysis.analysis.verdicts`):

* **APR** (% of tasks passed) with the Wilson interval; **ARS** (mean share of items met, %) with the
  percentile interval of a task bootstrap (:func:`slice_accuracy`: each slice's tasks drawn with
  replacement; an ``overall`` row draws within each axis).  Definitions: AMC paper §3.1, App. A.4.
* **Paired comparison** of two systems on the tasks both have (:func:`compare_systems`): exact McNemar
  on task pass (two-sided binomial test on the discordant tasks), paired task-bootstrap intervals of
  the APR and ARS differences (first minus second, pp), Holm over the pairs of each axis and over
  the overall pairs.
* **Judge agreement** of two judges grading the same responses, rubric item by rubric item
  (:func:`judge_agreement_pairs`): percent agreement, Cohen's kappa, per axis and overall.
"""
from __future__ import annotations

import pandas as pd
import polars as pl

from voxmem_analysis.analysis.verdicts import compare_systems, judge_agreement_pairs, slice_accuracy
from voxmem_analysis.errors import AnalysisInputError

__all__ = ["SYSTEM_COLUMNS", "system_label", "task_frame", "amc_slice", "amc_compare", "amc_judges", "default_by"]

#: Columns naming a system (never pooled into an overall row).
SYSTEM_COLUMNS = ("system", "model", "output_modality", "judge")
_SLICE_COLUMNS = ["level", "n_tasks", "n_passed", "apr", "apr_ci_low", "apr_ci_high", "ars", "ars_ci_low",
                  "ars_ci_high", "ars_interval", "n_boot", "seed"]


def system_label(model: str, modality: str | None) -> str:
    """``model (Text)`` -- or the model alone when the output modality is not known."""
    return f"{model} ({modality})" if modality else str(model)


def task_frame(data, judge: str | None = None) -> tuple[pl.DataFrame, list[str]]:
    """One row per system x task: ``system`` (:func:`system_label`), ``model``, ``output_modality``,
    ``task_id``, ``axis``, ``n_rubrics``, ``n_met``, ``passed``, ``share``, then the task's other
    columns; and notes (judges chosen).  ``data``: judged runs (one judge per system, ``judge`` if it
    graded it) or an Audio MultiChallenge release."""
    if getattr(data, "benchmark", None) == "amc-runs" and hasattr(data, "one_judge"):
        runs, notes = data.one_judge(judge)
        frame = runs.results.rename({"system": "model"}).drop("judge")
    else:
        from voxmem_analysis.analysis.amc import task_scores

        notes = []
        scores = task_scores(data.verdicts)
        frame = pl.from_pandas(scores.merge(data.tasks, on="task_id", how="left")).rename(
            {"n_passed": "n_met"})
    label = pl.struct("model", "output_modality").map_elements(
        lambda r: system_label(r["model"], r["output_modality"]), return_dtype=pl.Utf8)
    frame = frame.with_columns(label.alias("system"))
    first = ["system", "model", "output_modality", "task_id", "axis", "n_rubrics", "n_met", "passed", "share"]
    return frame.select(first + [c for c in frame.columns if c not in first]), notes


def default_by(frame: pl.DataFrame) -> list[str]:
    return ["system", "axis"]


def _type_col(by: list[str]) -> str | None:
    rest = [c for c in by if c not in SYSTEM_COLUMNS]
    return rest[-1] if rest else None


def amc_slice(frame, by, *, n_boot: int = 10_000, seed: int = 0, ci_level: float = 0.95) -> pd.DataFrame:
    """APR (Wilson) and ARS (task bootstrap) per slice of a task frame (:func:`task_frame`).

    ``by``: columns (``system``, ``axis``, any task column).  With a task column among them, each
    system's ``overall`` row pools its levels (the paper's overall APR and ARS); systems are never
    pooled.  Columns: ``*by, level, n_tasks, n_passed, apr, apr_ci_low, apr_ci_high, ars,
    ars_ci_low, ars_ci_high, ars_interval, n_boot, seed`` (percent)."""
    by = [c.strip() for c in by.split(",")] if isinstance(by, str) else list(by)
    missing = [c for c in by if c not in frame.columns]
    if missing:
        raise AnalysisInputError(f"no column {', '.join(map(repr, missing))} to slice by; columns: "
                                 f"{', '.join(frame.columns)}", "by")
    tcol = _type_col(by)
    common = dict(item="task_id", scored=None, type_col=tcol, n_boot=n_boot, seed=seed, ci_level=ci_level,
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
                ci_level: float = 0.95, alpha: float = 0.05) -> pd.DataFrame:
    """Every pair of systems on the tasks both have, overall and (``by_axis``) per axis.

    Columns: ``axis`` (``overall`` or the axis), ``system_a, system_b, n_tasks`` (tasks both have),
    ``only_a, only_b``, ``apr_a, apr_b, apr_diff, apr_diff_ci_low, apr_diff_ci_high``, ``a_pass_b_fail,
    a_fail_b_pass`` (the discordant tasks), ``p_mcnemar`` (exact, two-sided), ``p_holm``, ``n_family``,
    ``reject`` (Holm over the pairs of the same axis, at ``alpha``), ``ars_a, ars_b, ars_diff,
    ars_diff_ci_low, ars_diff_ci_high``, ``n_boot, seed``.  Differences are first minus second (pp)."""
    parts = []
    for groups in ([None] + (["axis"] if by_axis else [])):
        kw = dict(system="system", item="task_id", budget=None, scored=None, groups=groups and [groups],
                  systems=systems, n_boot=n_boot, seed=seed, ci_level=ci_level, alpha=alpha)
        apr = compare_systems(frame, value="passed", **kw)
        ars = compare_systems(frame, value="share", **kw)
        if groups is None:
            apr.insert(0, "axis", "overall")
            ars.insert(0, "axis", "overall")
        parts.append(_paired(apr, ars))
    return pd.concat(parts, ignore_index=True)


def _paired(apr: pd.DataFrame, ars: pd.DataFrame) -> pd.DataFrame:
    keys = ["axis", "system_a", "system_b"]
    a = apr[keys + ["n_common", "only_a", "only_b", "acc_a", "acc_b", "diff", "diff_ci_low", "diff_ci_high",
                    "a_right_b_wrong", "a_wrong_b_right", "p_mcnemar", "p_holm", "n_family", "reject"]].rename(columns={
        "n_common": "n_tasks", "acc_a": "apr_a", "acc_b": "apr_b", "diff": "apr_diff", "diff_ci_low": "apr_diff_ci_low",
        "diff_ci_high": "apr_diff_ci_high", "a_right_b_wrong": "a_pass_b_fail", "a_wrong_b_right": "a_fail_b_pass"})
    b = ars[keys + ["acc_a", "acc_b", "diff", "diff_ci_low", "diff_ci_high", "n_boot", "seed"]].rename(columns={
        "acc_a": "ars_a", "acc_b": "ars_b", "diff": "ars_diff", "diff_ci_low": "ars_diff_ci_low",
        "diff_ci_high": "ars_diff_ci_high"})
    for c in keys:
        a[c], b[c] = a[c].astype(object), b[c].astype(object)
    return a.merge(b, on=keys, how="left", validate="one_to_one", sort=False)


def amc_judges(rubric_results) -> pd.DataFrame:
    """Agreement of every pair of judges that graded the same responses (the same system), rubric item
    by rubric item, per axis and overall (:func:`judge_agreement_pairs`): ``system, judge_a, judge_b,
    axis, level, n, acc_a, acc_b, diff, agreement, kappa, n11, n10, n01, n00, only_a, only_b,
    n_excluded`` (``acc``: % of items met by each judge)."""
    frame = rubric_results
    if isinstance(frame, pl.DataFrame):
        label = pl.struct("system", "output_modality").map_elements(
            lambda r: system_label(r["system"], r["output_modality"]), return_dtype=pl.Utf8)
        frame = frame.with_columns(label.alias("system"))
    return judge_agreement_pairs(frame, judge="judge", within=("system",), item="rubric_id", by=("axis",),
                                 value="criteria_met", scored=None)
