"""analysis/verdicts/slices.py: each interval's flag (a bootstrap without variation, few events), resolution and
Monte-Carlo error in the slice table."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from voxmem_analysis.analysis.verdicts import BootstrapSettings, compare_systems, slice_accuracy

Z2 = st.norm.ppf(0.975) ** 2


def _frame(counts: dict[str, tuple[int, int]]) -> pd.DataFrame:
    """One verdict per item: group -> (correct, n)."""
    rows = []
    for g, (k, n) in counts.items():
        rows += [{"g": g, "question_id": f"{g}{i}", "correct": i < k, "scored": True} for i in range(n)]
    return pd.DataFrame(rows)


def test_a_slice_bootstrap_without_variation_gets_the_wilson_bound_and_says_so():
    """0 of 12 and 12 of 12 give one value on every resample: [0, 100 u] and [100 (1 - u), 100], u = z^2 / (12 + z^2)
    (before: [0, 0] and [100, 100] with nothing said)."""
    t = slice_accuracy(_frame({"none": (0, 12), "all": (12, 12), "half": (6, 12)}), "g", interval="bootstrap",
                       item="question_id", type_col=None, settings=BootstrapSettings(n_boot=500, mc_se=True))
    t = t.set_index("g")
    u = Z2 / (12 + Z2)
    assert (t.loc["none", "accuracy_ci_low"], t.loc["none", "accuracy_ci_high"]) == (0.0, pytest.approx(100 * u))
    assert (t.loc["all", "accuracy_ci_low"], t.loc["all", "accuracy_ci_high"]) == (pytest.approx(100 * (1 - u)), 100.0)
    assert t.loc["none", "accuracy_ci_flag"] == "no variation in the resamples; Wilson bound of 0 in 12 items"
    assert t.loc["half", "accuracy_ci_flag"] == ""
    assert t.loc["half", "accuracy_ci_resolution"] == pytest.approx(100 / 12)
    assert t.loc["none", "accuracy_ci_low_mc_se"] == 0.0


def test_few_events_and_small_wilson_slices_are_flagged():
    t = slice_accuracy(_frame({"a": (2, 40), "b": (10, 40), "c": (5, 20)}), "g", interval="wilson",
                       item="question_id", type_col=None).set_index("g")
    assert t.loc["a", "accuracy_ci_flag"].startswith("few events (2 < 4): wilson coverage")
    assert t.loc["b", "accuracy_ci_flag"] == ""
    assert t.loc["c", "accuracy_ci_flag"].startswith("n = 20 < 30: Wilson coverage")
    b = slice_accuracy(_frame({"a": (4, 40), "b": (10, 40)}), "g", interval="bootstrap", item="question_id",
                       type_col=None, settings=BootstrapSettings(n_boot=300)).set_index("g")
    assert b.loc["a", "accuracy_ci_flag"].startswith("few events (4 < 5): percentile")
    assert b.loc["b", "accuracy_ci_flag"] == ""
    bca = slice_accuracy(_frame({"b": (10, 40)}), "g", interval="bootstrap", item="question_id", type_col=None,
                         settings=BootstrapSettings(n_boot=300, interval="bca")).iloc[0]
    assert bca["accuracy_ci_flag"].startswith("few events (10 < 15): bca")


def test_compare_flags_a_pair_without_discordant_items():
    """Two systems that agree on every item: no discordant pair, so the bootstrap of the difference has no
    variation; its interval is +-100 u (u for 0 events in 15 items), flagged."""
    rows = [{"system": s, "question_id": f"q{i}", "correct": i % 3 == 0, "scored": True}
            for s in ("A", "B") for i in range(15)]
    t = compare_systems(pd.DataFrame(rows), settings=BootstrapSettings(n_boot=300, mc_se=True)).iloc[0]
    u = Z2 / (15 + Z2)
    assert (t["diff_ci_low"], t["diff_ci_high"]) == (pytest.approx(-100 * u), pytest.approx(100 * u))
    assert t["diff_ci_flag"].startswith("no variation") and np.isnan(t["diff_ci_resolution"])
    assert t["holm_family"] == "all rows (1 test)"
