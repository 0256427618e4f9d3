"""How small a difference can a release detect: the observed discordance of paired comparisons and the minimum
detectable difference at it (:mod:`voxmem_analysis.stats.power`)."""
from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis.analysis.scaling import scaling_plan
from voxmem_analysis.analysis.selection import (budget_note, budgets_run, check_models, most_run_budget, run_budgets,
                                                scored_predictions)
from voxmem_analysis.errors import AnalysisInputError, MissingDataError
from voxmem_analysis.stats.power import power_summary

__all__ = ["observed_discordance", "release_power", "power_budgets"]


def power_budgets(release, compare: str = "models", budget: str | None = None, comparison: str | None = None,
                  models: Sequence[str] | None = None) -> tuple[list[str], str]:
    """The budgets a comparison runs at and why: ``compare="models"``: ``budget``, else the paper's 8K when run,
    else the budget run by the most models; ``"budgets"``: ``budget`` against ``comparison``, else the paper's 8K
    against 64K when run, else the shortest against the longest (:func:`~voxmem_analysis.analysis.scaling.scaling_plan`)."""
    if compare not in ("models", "budgets"):
        raise AnalysisInputError(f"compare must be 'models' or 'budgets', got {compare!r}", "compare")
    present = budgets_run(release, models)
    if compare == "models":
        b = most_run_budget(release, budget, paper="8K", models=models)
        return [b], f"{b} ({budget_note(b, budget, '8K', 'the budget run by the most models', present)})"
    if len(present) < 2:
        raise MissingDataError(f"comparing budgets needs two; the release was run at {', '.join(present)} only",
                               code="one_budget", field="context_length")
    plan = scaling_plan(release, baseline=budget, comparison=comparison, models=models)
    why = [f"{b} ({budget_note(b, asked, paper, other, present)})" for b, asked, paper, other in (
        (plan.baseline, budget, "8K", "the shortest budget run"),
        (plan.comparison, comparison, "64K", "the longest budget run"))]
    return [plan.baseline, plan.comparison], " against ".join(why)


def _pair_row(first: pd.Series, second: pd.Series, **keys) -> dict:
    both = first.index.intersection(second.index)
    x, y = first.loc[both].to_numpy(bool), second.loc[both].to_numpy(bool)
    n10, n01, n = int((x & ~y).sum()), int((~x & y).sum()), len(both)
    return {**keys, "n": n, "n10": n10, "n01": n01, "discordance": (n10 + n01) / n if n else np.nan,
            "difference": (n10 - n01) / n if n else np.nan}


def observed_discordance(release, *, compare: str = "models", budget: str | None = None,
                         comparison: str | None = None, models: Sequence[str] | None = None) -> pd.DataFrame:
    """Discordance of every paired comparison of a kind, on the items both sides were scored on.

    ``compare="models"``: every pair of models run at ``budget``; ``"budgets"``: every model run at ``budget`` and
    ``comparison``, the first against the second (budgets ``None``: :func:`power_budgets`). Columns ``a, b`` (models, or
    budgets), ``budget`` (models) or ``model`` (budgets), ``n`` (items both scored), ``n10, n01`` (a right & b wrong,
    the reverse), ``discordance`` = (n10 + n01) / n, ``difference`` = (n10 - n01) / n (shares); ``attrs["budgets"]``
    says which budgets and why."""
    need, why = power_budgets(release, compare, budget, comparison, models)
    rb = run_budgets(release)
    ms = [m for m in check_models(release, models) if set(need) <= set(rb[m])]
    if len(ms) < (2 if compare == "models" else 1):
        raise MissingDataError(f"no {'pair of models' if compare == 'models' else 'model'} was run at "
                               f"{' and '.join(need)}", "pass --budget (and --comparison) budgets that were run",
                               code="budget_not_run", field="context_length")
    pred = scored_predictions(release, models=ms, budgets=need, pairing="none")
    series = {key: g.set_index("question_id")["correct"] for key, g in pred.groupby(["model", "budget"])}
    if compare == "models":
        rows = [_pair_row(series[(a, need[0])], series[(b, need[0])], a=a, b=b, budget=need[0])
                for a, b in combinations(ms, 2) if (a, need[0]) in series and (b, need[0]) in series]
    else:
        rows = [_pair_row(series[(m, need[0])], series[(m, need[1])], a=need[0], b=need[1], model=m)
                for m in ms if (m, need[0]) in series and (m, need[1]) in series]
    out = pd.DataFrame(rows)
    out.attrs["budgets"] = why
    return out


def release_power(release, *, compare: str = "models", budget: str | None = None, comparison: str | None = None,
                  models: Sequence[str] | None = None, target: float | None = None, alpha: float = 0.05,
                  power: float = 0.8) -> pd.DataFrame:
    """Minimum detectable difference at the release's median observed discordance and item count.

    ``mdd_normal`` is Connor's normal approximation, ``mdd_exact`` and ``power_exact_at_mdd_normal`` the exact McNemar
    test ``compare`` runs (conservative: at the normal MDD its power is below the target). One row: ``compare,
    comparisons`` (pairs measured), the columns of :func:`voxmem_analysis.stats.power.power_summary` at the median
    ``discordance`` and ``n``, ``discordance_min, discordance_max`` and ``budgets`` (which budgets were compared, and
    why)."""
    d = observed_discordance(release, compare=compare, budget=budget, comparison=comparison, models=models)
    why = d.attrs["budgets"]
    d = d[d["n"] > 0]
    if d.empty:
        raise MissingDataError("no paired comparison has an item scored on both sides", None,
                               code="no_pairs", field="question_id")
    psi, n = float(d["discordance"].median()), int(d["n"].median())
    if psi == 0:   # measured, not given: the release is too small to show a discordant pair
        raise MissingDataError("no discordant pair: the discordance cannot be measured on this release",
                               f"median over {len(d)} comparison(s) of {n} item(s): 0; give the discordance instead",
                               code="no_discordance", field="correct")
    out = power_summary(n, psi, target=target, alpha=alpha, power=power)
    out.insert(0, "comparisons", len(d))
    out.insert(0, "compare", compare)
    out["discordance_min"], out["discordance_max"] = float(d["discordance"].min()), float(d["discordance"].max())
    out["budgets"] = why
    return out
