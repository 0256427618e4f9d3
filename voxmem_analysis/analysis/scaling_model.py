"""A model of the context-length effect: odds ratio per doubling of the history (GEE).

:func:`scaling_model` fits, per evidence type and pooled, ``logit P(correct) = alpha_model + beta log2(budget /
8K)`` by a logistic GEE (exchangeable correlation within each question, robust SE; :mod:`voxmem_analysis.stats.gee`,
checked against statsmodels): ``exp(beta)`` is the odds ratio per doubling (below 1: accuracy falls with length),
on Table 18's selection (the 64K set, every budget it was run at, ``pairing="all_budgets"``).
"""
from __future__ import annotations

import warnings
from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import AnalysisInputError
from voxmem_analysis.analysis.clusters import attach_cluster, check_cluster
from voxmem_analysis.analysis.scaling import scaling_plan
from voxmem_analysis.analysis.selection import OVERALL, evidence_label, scored_predictions
from voxmem_analysis.artifacts import artifact
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
    ref = kilo(reference)
    return np.log2(np.array([kilo(b) for b in budget], dtype=float) / ref)


@ci_level_alias
def fit_doubling_gee(data: pd.DataFrame, *, groups: str = "question_id", ci_level: float = 0.95,
                     engine: str = "numpy") -> dict:
    """Fit ``correct ~ doublings + C(model)`` by GEE (Binomial, exchangeable) and summarise the slope.

    The fit is :func:`voxmem_analysis.stats.gee.exchangeable_logit_gee`, a vectorised copy of
    statsmodels' ``GEE(family=Binomial(), cov_struct=Exchangeable()).fit()``; statsmodels is the
    reference that ``tests/test_gee_fast.py`` checks it against (parameters, robust SE, working
    correlation and p-value to 1e-6 relative), and ``engine="statsmodels"`` runs it instead.

    Parameters
    ----------
    data : DataFrame
        Columns ``correct`` (bool/0-1), ``doublings`` (float), ``model`` and ``groups``.
    groups : str
        Cluster column (``question_id``; ``family`` for families).
    ci_level : float
        Level of the robust Wald interval (``ci=``: deprecated name).
    engine : {"numpy", "statsmodels"}
        The vectorised fit (default) or the statsmodels formula fit it replicates.

    Returns
    -------
    dict
        ``n_obs, n_clusters, n_models, log_or, robust_se, odds_ratio, or_ci_low, or_ci_high,
        p_value, working_corr, converged``.
    """
    df = data.assign(correct=data["correct"].astype(float)).sort_values([groups, "model", "doublings"],
                                                                      kind="stable")
    if engine == "numpy":
        return doubling_slope(df, groups=groups, ci_level=ci_level)
    if engine != "statsmodels":
        raise AnalysisInputError(f"fit_doubling_gee: engine must be 'numpy' or 'statsmodels', got {engine!r}", "engine")
    return _statsmodels_gee(df, groups=groups, ci_level=ci_level)


def _statsmodels_gee(df: pd.DataFrame, *, groups: str, ci_level: float) -> dict:
    """The statsmodels formula fit (the reference of the vectorised one)."""
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
    converged = not any("converge" in str(w.message).lower() for w in caught)
    b, se = float(res.params["doublings"]), float(res.bse["doublings"])
    z = float(norm.ppf(0.5 + ci_level / 2))
    return {"n_obs": int(len(df)), "n_clusters": int(df[groups].nunique()), "n_models": n_models,
            "log_or": b, "robust_se": se, "odds_ratio": float(np.exp(b)), "or_ci_low": float(np.exp(b - z * se)),
            "or_ci_high": float(np.exp(b + z * se)), "p_value": float(res.pvalues["doublings"]),
            "working_corr": float(res.cov_struct.dep_params), "converged": converged}


@ci_level_alias
def scaling_model(release, *, models: Sequence[str] | None = None, baseline: str | None = "8K",
                  comparison: str | None = "64K", pairing: str = "all_budgets", cluster: str = "item",
                  ci_level: float = 0.95) -> pd.DataFrame:
    """Odds ratio of a correct answer per doubling of the history, per evidence type and pooled.

    Parameters
    ----------
    release : Release
    models, baseline, comparison, pairing
        As in :func:`voxmem_analysis.analysis.scaling.paired_change` (Table 18): the models run at
        both budgets; every budget all of them were run at enters the fit.
    cluster : {"item", "family"}
        GEE clusters: ``question_id`` (default, as specified) or the question family.
    ci_level : float
        Level of the robust interval (``ci=``: deprecated name).

    Returns
    -------
    DataFrame
        One row per evidence type then ``overall``: ``evidence_type`` and the fields of
        :func:`fit_doubling_gee`, plus ``budgets`` (those fitted), ``cluster``.
    """
    plan = scaling_plan(release, baseline=baseline, comparison=comparison, models=models)
    budgets = list(plan.budgets)
    pred = scored_predictions(release, models=list(plan.models), budgets=budgets, pairing=pairing)
    pred = attach_cluster(pred, release, check_cluster(cluster))
    groups = "question_id" if cluster == "item" else "family"
    pred = pred.assign(doublings=budget_doublings(pred["budget"], reference=budgets[0]))
    rows = []
    parts = [(e, pred[pred["evidence_type"] == e]) for e in tx.EVIDENCE_TYPES] + [(OVERALL, pred)]
    for ev, part in parts:
        if part.empty or part["budget"].nunique() < 2:
            continue
        rows.append({"evidence_type": ev, **fit_doubling_gee(part, groups=groups, ci_level=ci_level)})
    out = pd.DataFrame(rows)
    out["budgets"] = ", ".join(budgets)
    out["reference_budget"] = budgets[0]
    out["cluster"] = groups
    return out


@artifact("scaling_model", title="Context-length model: odds ratio of a correct answer per doubling of the "
                                 "history (GEE, model fixed effects, robust 95% CI), 64K set")
def scaling_model_table(release, *, seed: int = 0, n_boot: int = 10_000, models=None, pairing: str = "all_budgets",
                        baseline: str | None = "8K", comparison: str | None = "64K",
                        cluster: str = "item") -> pd.DataFrame:
    """Rows: evidence types (full names) and ``Overall``; columns ``OR per doubling``,
    ``CI low``, ``CI high`` (robust 95%), ``p``, ``p (Holm)`` (over the evidence types' tests; the overall row is
    its own test), ``Holm family``, ``working corr.``, ``observations``, ``questions``, ``models``.
    ``seed``/``n_boot`` are accepted for the registry and unused (the fit is deterministic)."""
    return model_table(scaling_model(release, models=models, baseline=baseline, comparison=comparison,
                                     pairing=pairing, cluster=cluster))


def model_table(sm: pd.DataFrame) -> pd.DataFrame:
    """The context-length model's table (:func:`scaling_model_table`) from a :func:`scaling_model` result."""
    types = (sm["evidence_type"] != OVERALL).to_numpy()
    p_holm = sm["p_value"].to_numpy(dtype=float).copy()
    if types.any():
        p_holm[types] = holm(p_holm[types])["p_adjusted"].to_numpy()
    family = np.where(types, f"the {int(types.sum())} evidence types' tests", "this row alone")
    out = pd.DataFrame({
        "OR per doubling": sm["odds_ratio"].to_numpy(), "CI low": sm["or_ci_low"].to_numpy(),
        "CI high": sm["or_ci_high"].to_numpy(), "p": sm["p_value"].to_numpy(), "p (Holm)": p_holm,
        "Holm family": family, "working corr.": sm["working_corr"].to_numpy(), "observations": sm["n_obs"].astype(float).to_numpy(),
        "clusters": sm["n_clusters"].astype(float).to_numpy(), "models": sm["n_models"].astype(float).to_numpy(),
    }, index=[evidence_label(e) for e in sm["evidence_type"]])
    out.index.name = "Evidence type"
    return out
