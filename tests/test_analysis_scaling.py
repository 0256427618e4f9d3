"""Appendix D.5: intervals that resample models, and the change read against the mean of both budgets.

A model's cells are not independent and the change contains the baseline: the interval of each ρ
resamples whole models (checked against scipy on every expanded resample), and ``change_vs_mean``
removes the coupling that makes the change fall with the baseline by construction.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from voxmem_analysis.analysis import scaling as S
from voxmem_analysis.stats import iter_bootstrap_counts


def test_midranks_equal_scipy_on_every_expanded_resample():
    rng = np.random.default_rng(1)
    x = rng.integers(0, 5, 12).astype(float)                 # ties within and across models
    w = np.vstack(list(iter_bootstrap_counts(4, n_boot=20, seed=3)))[:, np.repeat(np.arange(4), 3)]
    ranks = S._midranks(x, w)
    for r in range(20):
        idx = np.repeat(np.arange(12), w[r].astype(int))
        np.testing.assert_allclose(ranks[r][idx], st.rankdata(x[idx]))


def _cells(models: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for m in range(models):
        level = rng.uniform(10, 60)
        for e in ("speech_semantics", "speaker_information", "paralinguistic_information", "environmental_sound"):
            b = level + rng.normal(0, 8)
            c = 0.7 * b + rng.normal(0, 3)               # a constant retention, with noise
            rows.append({"model": f"M{m}", "evidence_type": e, "baseline": b, "comparison": c, "change": c - b,
                         "retention": c / b})
    return pd.DataFrame(rows)


def test_rho_interval_resamples_models_as_scipy_on_the_expanded_cells():
    cells = _cells(6)
    sc = S.sensitivity_correlations(None, cells=cells, n_boot=400, seed=2).set_index("measure")
    codes = np.repeat(np.arange(6), 4)
    reps = []
    for c in np.vstack(list(iter_bootstrap_counts(6, n_boot=400, seed=2))):
        idx = np.repeat(np.arange(24), c[codes].astype(int))
        reps.append(st.spearmanr(cells["baseline"].to_numpy()[idx], cells["change"].to_numpy()[idx]).statistic)
    assert (sc.loc["change", "rho_ci_low"], sc.loc["change", "rho_ci_high"]) == \
        pytest.approx(tuple(np.percentile(reps, [2.5, 97.5])))
    assert sc.loc["change", "rho"] == pytest.approx(st.spearmanr(cells["baseline"], cells["change"]).statistic)
    assert sc.loc["change_vs_mean", "rho"] == pytest.approx(
        st.spearmanr((cells["baseline"] + cells["comparison"]) / 2, cells["change"]).statistic)
    assert set(sc["n_models"]) == {6} and set(sc["n"]) == {24}


def test_pure_noise_makes_the_change_fall_with_the_baseline_but_not_with_the_mean():
    """Two independent draws of the same accuracy: no cell is more sensitive to length than another, yet
    the change (comparison - baseline) falls as the baseline rises -- the coupling -- while the change
    against the mean of both budgets shows nothing."""
    rng = np.random.default_rng(7)
    true = np.repeat(rng.uniform(20, 40, 50), 4)
    b, c = true + rng.normal(0, 5, 200), true + rng.normal(0, 5, 200)
    cells = pd.DataFrame({"model": np.repeat([f"M{i}" for i in range(50)], 4), "evidence_type": "x", "baseline": b,
                          "comparison": c, "change": c - b, "retention": c / b})
    sc = S.sensitivity_correlations(None, cells=cells, n_boot=1000, seed=0).set_index("measure")
    assert sc.loc["change", "rho_ci_high"] < -0.3                            # "falls as the baseline rises"
    assert sc.loc["change_vs_mean", "rho_ci_low"] < 0 < sc.loc["change_vs_mean", "rho_ci_high"]


def test_no_interval_over_too_few_models():
    sc = S.sensitivity_correlations(None, cells=_cells(4), n_boot=100).set_index("measure")
    assert sc["rho_ci_low"].isna().all() and sc["rho"].notna().all() and S.MIN_RESAMPLED_MODELS == 5
    t = S.d5_table(_cells(4), sc.reset_index())
    assert list(t.index) == ["retention", "change", "change vs mean", "cells"]
