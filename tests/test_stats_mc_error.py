"""Monte-Carlo standard errors of bootstrap interval endpoints: the Maritz-Jarrett spread of the quantile over
the replicates, or, where the engine knows the exact bootstrap distribution, the spread computed from it; the
lattice step is the separate ``ci_resolution``, never an error floor."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy.stats.mstats import mjci

from voxmem_analysis.stats import paired_bootstrap
from voxmem_analysis.stats.endpoints import bootstrap_interval, endpoint_mc_se, lattice_step


def test_maritz_jarrett_part_is_the_sd_of_the_resampled_order_statistic():
    """Five distinct replicates, q = 0.5 (numpy's position h = 3: the median): the reported error is
    the standard deviation of the median of 5 draws with replacement, enumerated over all 5**5."""
    vals = np.array([0.0, 1.0, 3.0, 4.0, 7.0])
    medians = [np.median(vals[list(draw)]) for draw in itertools.product(range(5), repeat=5)]
    assert endpoint_mc_se(vals, 0.5) == pytest.approx(float(np.std(medians)), rel=1e-12)
    assert float(np.std(medians)) > 1.5 / np.sqrt(12)          # above the lattice floor: the spread counts


@pytest.mark.parametrize("q", [0.025, 0.5, 0.975])
def test_agrees_with_scipy_maritz_jarrett_on_a_smooth_statistic(q):
    """scipy.stats.mstats.mjci (Maritz-Jarrett with Beta(m - 1, n - m), m = round(q n)) on 10,000
    continuous replicates: within 3 % (the two place the order statistic one apart)."""
    x = np.random.default_rng(0).gamma(2.0, size=10_000)
    assert endpoint_mc_se(x, q) == pytest.approx(float(mjci(x, [q])[0]), rel=0.03)


def test_lattice_step():
    v = np.array([0.0, 2.5, 2.5, 2.5 + 1e-14, 5.0, 7.5])
    assert lattice_step(v, 2.5) == pytest.approx(2.5)          # on a value (rounding copies merged)
    assert lattice_step(v, 3.0) == pytest.approx(2.5)          # between 2.5 and 5.0
    assert lattice_step(v, 7.5) == pytest.approx(2.5)          # at the top: the one gap
    assert lattice_step(np.array([1.0, 1.0, 1.0]), 1.0) == 0.0
    # a constant statistic has no Monte-Carlo error at all
    assert bootstrap_interval(np.full(500, 4.0), 4.0)["ci_low_mc_se"] == 0.0


def _lattice_runs(n: int, n_boot: int) -> pd.DataFrame:
    rng = np.random.default_rng(n)
    x = (rng.random(n) < 0.6).astype(float)
    y = np.where(rng.random(n) < 0.8, x, 1 - x)
    return pd.concat([paired_bootstrap(x, y, "drop", n_boot=n_boot, seed=s) for s in range(60)])


@pytest.mark.parametrize("n, n_boot", [(40, 1000), (120, 2000), (200, 4000)])
def test_mc_se_on_a_lattice_matches_the_spread_over_seeds(n, n_boot):
    """One series' drop on n items lies on a lattice of step h = 100 / n pp.  Over 60 seeds each endpoint takes
    3-5 lattice values; the reported MC SE (the same on every seed: it is computed from the exact bootstrap
    distribution of the difference) matches their standard deviation within 0.8-1.25 (measured over 200 seeds:
    0.90-1.04; the floor h / sqrt(12) of the old estimate reported 1.2-2.9 times the truth at n = 120)."""
    runs = _lattice_runs(n, n_boot)
    h = 100.0 / n
    for end in ("ci_low", "ci_high"):
        spread = runs[end].std(ddof=1)
        reported = runs[f"{end}_mc_se"]
        assert runs[end].round(9).nunique() >= 3 and spread > 0.1 * h        # another seed moves it
        assert reported.nunique() == 1
        assert 0.8 < reported.iloc[0] / spread < 1.25, (end, reported.iloc[0], spread)
    assert runs["ci_resolution"].to_numpy() == pytest.approx(np.full(len(runs), h))


def test_mc_se_of_an_endpoint_that_no_seed_moves_is_near_zero_and_its_step_is_the_resolution():
    """n = 80, 4,000 resamples: the lower endpoint is -1.25 pp on all 60 seeds (it sits deep inside one lattice
    value's mass).  Its MC SE is what another seed would change, about 0.06 h (a move one run in 300 would
    make), not the old floor h / sqrt(12) = 0.29 h; the step h is the ci_resolution."""
    runs = _lattice_runs(80, 4000)
    h = 100.0 / 80
    assert runs["ci_low"].round(9).nunique() == 1 and runs["ci_low"].iloc[0] == pytest.approx(-1.25)
    assert runs["ci_low_mc_se"].max() < 0.1 * h
    assert (runs["ci_resolution"] == h).all()


def test_same_seed_same_mc_se_and_bca_levels():
    rng = np.random.default_rng(1)
    x = (rng.random(50) < 0.5).astype(float)
    y = (rng.random(50) < 0.4).astype(float)
    for interval in ("percentile", "bca"):
        a = paired_bootstrap(x, y, ["drop", "retention"], n_boot=3000, seed=9, interval=interval)
        b = paired_bootstrap(x, y, ["drop", "retention"], n_boot=3000, seed=9, interval=interval)
        assert a.equals(b)
        assert (a["ci_low_mc_se"] > 0).all() and (a["ci_high_mc_se"] > 0).all()
