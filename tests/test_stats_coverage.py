"""Reduced coverage study of the paired bootstrap (benchmarks/coverage_study.py).

Slow (~10-20 s): deselected by default; run with ``-m slow``.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

STUDY = Path(__file__).resolve().parents[1] / "benchmarks" / "coverage_study.py"


def _load_study():
    spec = importlib.util.spec_from_file_location("coverage_study", STUDY)
    mod = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("coverage_study", mod)       # dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_truth_matches_a_large_simulated_sample():
    study = _load_study()
    sc = study.Scenario("check", n_items=200_000, n_models=3)
    base, comp = study.simulate(sc, np.random.default_rng(0))
    tv = study.truth(sc)
    np.testing.assert_allclose(base.mean(axis=0), tv["acc8"], atol=0.006)
    np.testing.assert_allclose(comp.mean(axis=0), tv["acc64"], atol=0.006)


@pytest.mark.slow
def test_percentile_intervals_cover_about_95_percent():
    study = _load_study()
    res = study.coverage_study(n_replicates=200, n_boot=1000, seed=1).set_index(
        ["scenario", "statistic"])
    # 200 replicates: binomial SE ~1.5 pp for the mean rows (2,000 trials for per-model rows),
    # so [0.90, 0.99] is a > 3 SE band around the nominal 0.95.
    for key, row in res.iterrows():
        assert 0.90 <= row["coverage"] <= 0.99, (key, row["coverage"])
    per_model = res.xs("per_model", level="scenario")
    assert ((per_model["coverage"] >= 0.925) & (per_model["coverage"] <= 0.975)).all()
    assert (res["invalid_share"] < 1e-3).all()
