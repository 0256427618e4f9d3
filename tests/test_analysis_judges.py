"""Table 13's intervals resample items, and the judges are compared at a budget the release has.

Every model answers the same items, so the predictions of one item are not independent: the intervals
of Δ, agreement and κ must resample items (all models' predictions of a drawn item together).  The
reference below expands every resample into its predictions and scores them with sklearn.
"""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from sklearn.metrics import cohen_kappa_score

from voxmem_analysis.analysis import judges as J
from voxmem_analysis.stats import cohen_kappa, iter_bootstrap_counts


def _frames(models: int, items: int, budget: str = "8K", seed: int = 1):
    """``models`` models that all give the same verdicts on each item (production, second)."""
    rng = np.random.default_rng(seed)
    y1 = rng.random(items) < 0.4
    y2 = np.where(rng.random(items) < 0.15, ~y1, y1)
    rows1, rows2 = [], []
    for m in range(models):
        for i in range(items):
            base = {"model": f"M{m}", "item_id": f"q{i}_{budget.lower()}", "question_id": f"q{i}", "budget": budget,
                    "evidence_type": "speech_semantics", "operation": "multi_session_reasoning", "is_ar": False,
                    "status": "graded", "response": "r"}
            rows1.append({**base, "correct": bool(y1[i]), "judge": "j1"})
            rows2.append({**base, "correct": bool(y2[i]), "judge": "j2"})
    return pl.DataFrame(rows1), pl.DataFrame(rows2), y1, y2


def test_kappa_interval_resamples_items_as_sklearn_on_the_expanded_resamples():
    p, s, y1, y2 = _frames(models=3, items=40)
    row = J.compare_judge_frames(p, s, n_boot=300, seed=4).table.set_index("slice").loc["All items"]
    order = np.array(sorted(range(40), key=lambda i: f"q{i}"))          # the resampled units: items in sorted order
    reps = []
    for c in np.vstack(list(iter_bootstrap_counts(40, n_boot=300, seed=4))):
        drawn = np.repeat(order, c.astype(int))
        idx = np.tile(drawn, 3)                                          # every model's copy of each drawn item
        reps.append(cohen_kappa_score(y1[idx], y2[idx]))
    assert (row["kappa_ci_low"], row["kappa_ci_high"]) == pytest.approx(tuple(np.percentile(reps, [2.5, 97.5])))
    assert row["n_items"] == 40 and row["n"] == 120


def test_copies_of_the_same_items_do_not_narrow_the_interval():
    """Ten models repeating one model's verdicts carry one model's information: the item interval stays
    as wide as for one model, where the interval of independent predictions shrinks by about sqrt(10)."""
    one = J.compare_judge_frames(*_frames(models=1, items=60)[:2], n_boot=2000).table.iloc[0]
    ten = J.compare_judge_frames(*_frames(models=10, items=60)[:2], n_boot=2000).table.iloc[0]
    assert ten["kappa"] == pytest.approx(one["kappa"])
    assert (ten["kappa_ci_low"], ten["kappa_ci_high"]) == pytest.approx((one["kappa_ci_low"], one["kappa_ci_high"]))
    p, s, y1, y2 = _frames(models=10, items=60)
    naive = cohen_kappa(np.tile(y1, 10), np.tile(y2, 10)).iloc[0]       # predictions taken as independent
    assert (naive["kappa_ci_high"] - naive["kappa_ci_low"]) < 0.5 * (ten["kappa_ci_high"] - ten["kappa_ci_low"])


def test_delta_and_agreement_intervals_and_seed():
    p, s, y1, y2 = _frames(models=2, items=50)
    a = J.compare_judge_frames(p, s, n_boot=500, seed=0).table.iloc[0]
    b = J.compare_judge_frames(p, s, n_boot=500, seed=0).table.iloc[0]
    assert a.equals(b)
    assert a["delta_ci_low"] <= a["delta_pp"] <= a["delta_ci_high"]
    assert a["agreement_ci_low"] <= a["agreement"] <= a["agreement_ci_high"]


def test_judge_budget_is_the_papers_when_scored_else_from_the_data():
    p16, s16, _, _ = _frames(models=2, items=5, budget="16K")
    p64, s64, _, _ = _frames(models=2, items=3, budget="64K")
    p8, s8, _, _ = _frames(models=2, items=2, budget="8K")

    class Release:
        frame = pl.concat([p16, p64])
        judge2 = pl.concat([s16, s64])
        models = None

    rel = Release()
    assert J.judge_budget(rel) == "16K"                 # no 8K second-judge run: the budget it scored most
    assert J.judge_budget(rel, "64k") == "64K"
    c = J.compare_judges(rel, n_boot=50)
    assert c.budget == "16K" and c.table.loc[0, "n"] == 10
    assert J.compare_judges(rel, budget="all", n_boot=50).table.loc[0, "n"] == 16
    rel.judge2, rel.frame = pl.concat([s16, s64, s8]), pl.concat([p16, p64, p8])
    assert J.judge_budget(rel) == "8K"                  # the paper's, though it holds the fewest predictions
