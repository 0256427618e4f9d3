"""The context-length model: the odds ratio of a correct answer per doubling of the history, from the logistic GEE
``logit P(correct) = alpha_model + beta log2(budget / baseline)`` (exchangeable within each question, robust SE;
:mod:`voxmem_analysis.stats.gee`), per evidence type and pooled, on Table 18's selection."""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.clusters import attach_cluster, check_cluster
from voxmem_analysis.analysis.scaling import noted_budgets, scaling_plan
from voxmem_analysis.analysis.selection import OVERALL, evidence_label, scored_predictions
from voxmem_analysis.artifacts import artifact
from voxmem_analysis.errors import AnalysisInputError
from voxmem_analysis.stats import ci_level_alias, holm
from voxmem_analysis.stats.gee import doubling_slope

__all__ = ["fit_doubling_gee", "scaling_model", "scaling_model_table", "model_table", "budget_doublings"]


def budget_doublings(budget: pd.Series, reference: str = "8K") -> np.ndarray:
    """``log2(budget / reference)`` for budget labels like ``"32K"`` (8K -> 0, 64K -> 3)."""
    def kilo(b: str) -> float:
        s = str(b).strip().upper()
        if not s.endswith("K") or not s[:-1].isdigit():
            raise AnalysisInputError(f"budget {b!r} is not of the form '<number>K'", "budget")
        return float(s[:-1])
    return np.log2(np.array([kilo(b) for b in budget], dtype=float) / kilo(reference))


@ci_level_alias
def fit_doubling_gee(data: pd.DataFrame, *, groups: str = "question_id", ci_level: float = 0.95,
                     engine: str = "numpy") -> dict:
    """Fit ``correct ~ doublings + C(model)`` by GEE (Binomial, exchangeable) and summarise the slope.

    ``data``: ``correct`` (0/1), ``doublings``, ``model`` and the cluster column ``groups``; ``engine``: the vectorised
    fit (``"numpy"``) or the statsmodels formula fit it replicates (``"statsmodels"``). Returns dict: ``n_obs,
    n_clusters, n_models, log_or, robust_se, odds_ratio, or_ci_low, or_ci_high, p_value, working_corr, converged``."""
    df = data.assign(correct=data["correct"].astype(float)).sort_values([groups, "model", "doublings"],
                                                                      kind="stable")
    if engine == "numpy":
        return doubling_slope(df, groups=groups, ci_level=ci_level)
    if engine != "statsmodels":
        raise AnalysisInputError(f"fit_doubling_gee: engine must be 'numpy' or 'statsmodels', got {engine!r}", "engine")
    return _statsmodels_gee(df, groups=groups, ci_level=ci_level)


def _statsmodels_gee(df: pd.DataFrame, *, groups: str, ci_level: float) -> dict:
    import statsmodels.api as sm
    import statsmodels.formula.api as smf
    from scipy.stats import norm

    n_models = int(df["model"].nunique())
    formula = "correct ~ doublings" + (" + C(model)" if n_models > 1 else "")
    model = smf.gee(formula, groups=groups, data=df, family=sm.families.Binomial(),
                    cov_struct=sm.cov_struct.Exchangeable())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = model.fit()
    b, se = float(res.params["doublings"]), float(res.bse["doublings"])
    z = float(norm.ppf(0.5 + ci_level / 2))
    return {"n_obs": int(len(df)), "n_clusters": int(df[groups].nunique()), "n_models": n_models,
            "log_or": b, "robust_se": se, "odds_ratio": float(np.exp(b)), "or_ci_low": float(np.exp(b - z * se)),
            "or_ci_high": float(np.exp(b + z * se)), "p_value": float(res.pvalues["doublings"]),
            "working_corr": float(res.cov_struct.dep_params),
            "converged": not any("converge" in str(w.message).lower() for w in caught)}


@ci_level_alias
def scaling_model(release, *, models: Sequence[str] | None = None, baseline: str | None = None,
                  comparison: str | None = None, pairing: str = "all_budgets", cluster: str = "item",
                  ci_level: float = 0.95) -> pd.DataFrame:
    """Odds ratio of a correct answer per doubling of the history, per evidence type and pooled.

    Models and budgets as Table 18 (:func:`~voxmem_analysis.analysis.scaling.scaling_plan`: the models run at both
    budgets, every budget all of them were run at entering the fit); ``cluster``: GEE clusters by ``question_id``
    (``"item"``) or question ``"family"``. One row per evidence type then ``overall``: ``evidence_type``, the fields of
    :func:`fit_doubling_gee`, ``budgets`` (those fitted), ``reference_budget``, ``cluster``."""
    plan = scaling_plan(release, baseline=baseline, comparison=comparison, models=models)
    budgets = list(plan.budgets)
    pred = scored_predictions(release, models=list(plan.models), budgets=budgets, pairing=pairing)
    pred = attach_cluster(pred, release, check_cluster(cluster))
    groups = "question_id" if cluster == "item" else "family"
    pred = pred.assign(doublings=budget_doublings(pred["budget"], reference=budgets[0]))
    parts = [(e, pred[pred["evidence_type"] == e]) for e in tx.EVIDENCE_TYPES] + [(OVERALL, pred)]
    out = pd.DataFrame([{"evidence_type": ev, **fit_doubling_gee(part, groups=groups, ci_level=ci_level)}
                        for ev, part in parts if not part.empty and part["budget"].nunique() >= 2])
    out["budgets"], out["reference_budget"], out["cluster"] = ", ".join(budgets), budgets[0], groups
    return out


@artifact("scaling_model", title="Context-length model: odds ratio of a correct answer per doubling of the "
                                 "history (GEE, model fixed effects, robust 95% CI), models run at both budgets")
def scaling_model_table(release, *, seed: int = 0, n_boot: int = 10_000, models=None, pairing: str = "all_budgets",
                        baseline: str | None = None, comparison: str | None = None,
                        cluster: str = "item") -> pd.DataFrame:
    """:func:`model_table` of :func:`scaling_model` (``seed``/``n_boot`` unused: the fit is deterministic)."""
    plan = scaling_plan(release, baseline=baseline, comparison=comparison, models=models)
    sm = scaling_model(release, models=models, baseline=baseline, comparison=comparison, pairing=pairing,
                       cluster=cluster)
    return noted_budgets(model_table(sm), plan.baseline, plan.comparison, baseline, comparison)


def model_table(sm: pd.DataFrame) -> pd.DataFrame:
    """Rows: evidence types and ``Overall``; columns ``OR per doubling, CI low, CI high`` (robust 95%), ``p``,
    ``p (Holm)`` (over the evidence types' tests; the overall row is its own), ``Holm family``, ``working corr.``,
    ``observations, clusters, models``."""
    types = (sm["evidence_type"] != OVERALL).to_numpy()
    p_holm = sm["p_value"].to_numpy(dtype=float).copy()
    if types.any():
        p_holm[types] = holm(p_holm[types])["p_adjusted"].to_numpy()
    tested = int((types & np.isfinite(sm["p_value"].to_numpy(dtype=float))).sum())   # Holm skips a blank p
    family = np.where(types, f"the {tested} evidence types' tests", "this row alone")
    out = pd.DataFrame({
        "OR per doubling": sm["odds_ratio"].to_numpy(), "CI low": sm["or_ci_low"].to_numpy(),
        "CI high": sm["or_ci_high"].to_numpy(), "p": sm["p_value"].to_numpy(), "p (Holm)": p_holm,
        "Holm family": family, "working corr.": sm["working_corr"].to_numpy(),
        "observations": sm["n_obs"].astype(float).to_numpy(), "clusters": sm["n_clusters"].astype(float).to_numpy(),
        "models": sm["n_models"].astype(float).to_numpy(),
    }, index=pd.Index([evidence_label(e) for e in sm["evidence_type"]], name="Evidence type"))
    blank = [label for label, se in zip(out.index, sm["robust_se"]) if not np.isfinite(se)]
    if blank:   # separation: a model right (or wrong) on every item of the type at every budget
        out.attrs["note"] = (f"not estimable (left blank): {', '.join(blank)}: the fit has no finite odds ratio or "
                             "standard error, as when a model is right (or wrong) on every item at every budget")
    return out
