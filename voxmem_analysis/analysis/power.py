"""How small a difference can a release detect?  :func:`observed_discordance` measures the share of items two
compared sides disagree on (models at one budget, or a model between two budgets), and :func:`release_power` the
minimum detectable difference at it, normal and exact (:mod:`voxmem_analysis.stats.power`).
"""
from __future__ import annotations

from itertools import combinations
from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis.analysis.selection import check_models, run_budgets, scored_predictions
from voxmem_analysis.errors import AnalysisInputError, MissingDataError
from voxmem_analysis.stats.power import power_summary

__all__ = ["observed_discordance", "release_power"]


def _pair_row(first: pd.Series, second: pd.Series, **keys) -> dict:
    both = first.index.intersection(second.index)
    x, y = first.loc[both].to_numpy(bool), second.loc[both].to_numpy(bool)
    n10, n01 = int((x & ~y).sum()), int((~x & y).sum())
    n = int(len(both))
    return {**keys, "n": n, "n10": n10, "n01": n01,
            "discordance": (n10 + n01) / n if n else np.nan,
            "difference": (n10 - n01) / n if n else np.nan}


def observed_discordance(release, *, compare: str = "models", budget: str = "8K",
                         comparison: str = "64K", models: Sequence[str] | None = None) -> pd.DataFrame:
    """Discordance of every paired comparison of a kind, on the items both sides were scored on.

    Parameters
    ----------
    release : Release
    compare : {"models", "budgets"}
        ``"models"``: every pair of models run at ``budget``; ``"budgets"``: every model run
        at ``budget`` and ``comparison``, the first against the second.
    budget, comparison : str
        Budgets (``comparison`` only for ``compare="budgets"``).
    models : list of str, optional

    Returns
    -------
    DataFrame
        ``a, b`` (models, or budgets), ``model`` (for budgets), ``n`` (items both scored),
        ``n10, n01`` (a right & b wrong, the reverse), ``discordance`` = (n10 + n01) / n and
        ``difference`` = (n10 - n01) / n (shares).
    """
    if compare not in ("models", "budgets"):
        raise AnalysisInputError(f"compare must be 'models' or 'budgets', got {compare!r}", "compare")
    need = [budget] if compare == "models" else [budget, comparison]
    if any(b is None for b in need):
        raise MissingDataError("the release has no " + ("budget" if compare == "models" else "two budgets")
                               + " to compare", "pass --budget (and --comparison) budgets that were run",
                               code="budget_not_run", field="context_length")
    ms = check_models(release, models)
    rb = run_budgets(release)
    ms = [m for m in ms if set(need) <= set(rb[m])]
    if len(ms) < (2 if compare == "models" else 1):
        raise MissingDataError(f"no {'pair of models' if compare == 'models' else 'model'} was run at "
                               f"{' and '.join(need)}", "pass --budget (and --comparison) budgets that were run",
                               code="budget_not_run", field="context_length")
    pred = scored_predictions(release, models=ms, budgets=need, pairing="none")
    series = {(m, b): g.set_index("question_id")["correct"] for (m, b), g in pred.groupby(["model", "budget"])}
    rows = []
    if compare == "models":
        for ma, mb in combinations(ms, 2):
            if (ma, budget) in series and (mb, budget) in series:
                rows.append(_pair_row(series[(ma, budget)], series[(mb, budget)], a=ma, b=mb, budget=budget))
    else:
        for m in ms:
            if (m, budget) in series and (m, comparison) in series:
                rows.append(_pair_row(series[(m, budget)], series[(m, comparison)], a=budget, b=comparison,
                                      model=m))
    return pd.DataFrame(rows)


def release_power(release, *, compare: str = "models", budget: str = "8K", comparison: str = "64K",
                  models: Sequence[str] | None = None, target: float | None = None, alpha: float = 0.05,
                  power: float = 0.8) -> pd.DataFrame:
    """Minimum detectable difference at the release's median observed discordance and item count.

    Each number says which method gives it (:mod:`voxmem_analysis.stats.power`): ``mdd_normal`` from
    Connor's normal approximation, ``mdd_exact`` and ``power_exact_at_mdd_normal`` from the exact
    McNemar test the workbook runs (``compare``); the exact test is conservative, so at the normal
    MDD its power is below the target (0.78 instead of 0.80 between the synthetic release's models).

    Returns
    -------
    DataFrame
        One row: ``compare, comparisons`` (pairs measured), ``discordance_min``,
        ``discordance_max`` and the columns of :func:`voxmem_analysis.stats.power.power_summary`
        at the median ``discordance`` and median ``n``.
    """
    d = observed_discordance(release, compare=compare, budget=budget, comparison=comparison, models=models)
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
    return out
