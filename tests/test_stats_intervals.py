"""Wilson score intervals (voxmem_analysis.stats.intervals)."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from statsmodels.stats.proportion import proportion_confint

from voxmem_analysis.stats import wilson_interval


def test_columns_and_known_values():
    out = wilson_interval([0, 18, 30], 30)
    assert list(out.columns) == ["successes", "n", "proportion", "ci_low", "ci_high",
                                 "ci_level"]
    assert out["n"].tolist() == [30, 30, 30]
    assert out["proportion"].tolist() == pytest.approx([0.0, 0.6, 1.0])
    # 18/30: centre (0.6 + z^2/60) / (1 + z^2/30), z = 1.959964
    z = 1.959963984540054
    centre = (0.6 + z * z / 60) / (1 + z * z / 30)
    half = z / (1 + z * z / 30) * np.sqrt(0.6 * 0.4 / 30 + z * z / 3600)
    assert out["ci_low"].iloc[1] == pytest.approx(centre - half, rel=1e-12)
    assert out["ci_high"].iloc[1] == pytest.approx(centre + half, rel=1e-12)
    assert out["ci_low"].iloc[1] == pytest.approx(0.42320, abs=1e-5)
    assert out["ci_low"].iloc[0] == 0.0 and out["ci_high"].iloc[2] == 1.0


@pytest.mark.parametrize("ci", [0.8, 0.9, 0.95, 0.99])
def test_matches_statsmodels_on_a_grid(ci):
    sizes = [1, 2, 5, 13, 30, 147, 799]
    n = np.repeat(sizes, 9)
    x = np.concatenate([np.linspace(0, m, 9).round().astype(int) for m in sizes])
    out = wilson_interval(x, n, ci_level=ci)
    lo, hi = proportion_confint(x, n, alpha=1 - ci, method="wilson")
    np.testing.assert_allclose(out["ci_low"], lo, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(out["ci_high"], hi, rtol=1e-10, atol=1e-12)
    assert (out["ci_level"] == ci).all()


@settings(max_examples=200, deadline=None)
@given(n=hst.integers(1, 5000), frac=hst.floats(0, 1), ci=hst.floats(0.5, 0.999))
def test_matches_statsmodels_property(n, frac, ci):
    x = int(round(frac * n))
    out = wilson_interval(x, n, ci_level=ci).iloc[0]
    lo, hi = proportion_confint(x, n, alpha=1 - ci, method="wilson")
    assert out["ci_low"] == pytest.approx(max(lo, 0.0), rel=1e-9, abs=1e-12)
    assert out["ci_high"] == pytest.approx(min(hi, 1.0), rel=1e-9, abs=1e-12)
    assert 0.0 <= out["ci_low"] <= out["proportion"] <= out["ci_high"] <= 1.0


def test_zero_trials_give_nan():
    out = wilson_interval([0, 3], [0, 10])
    assert np.isnan(out.loc[0, ["proportion", "ci_low", "ci_high"]].astype(float)).all()
    assert np.isfinite(out.loc[1, ["proportion", "ci_low", "ci_high"]].astype(float)).all()


def test_accepts_pandas_and_scalars():
    import pandas as pd
    out = wilson_interval(pd.Series([3, 4]), pd.Series([10, 10]))
    assert out["successes"].tolist() == [3, 4]
    assert len(wilson_interval(5, 10)) == 1


@pytest.mark.parametrize("x, n, match", [
    ([11], [10], r"successes must lie in \[0, n\]"),
    ([-1], [10], r"successes must lie in \[0, n\]"),
    ([1.5], [10], "whole numbers"),
    ([1], [-2], "n must be >= 0"),
    ([1, 2, 3], [10, 10], "cannot be broadcast"),
    ([np.nan], [10], "finite"),
])
def test_bad_input_raises_value_error(x, n, match):
    with pytest.raises(ValueError, match=match):
        wilson_interval(x, n)


def test_bad_ci_raises():
    with pytest.raises(ValueError, match="ci_level must be a confidence level"):
        wilson_interval(1, 2, ci_level=1.0)


def test_ci_is_a_deprecated_alias_of_ci_level():
    # ci= (the name before issue 16) still works for one release, with a DeprecationWarning
    with pytest.warns(DeprecationWarning, match=r"wilson_interval\(ci=\.\.\.\) is deprecated"):
        old = wilson_interval(18, 30, ci=0.9)
    pd.testing.assert_frame_equal(old, wilson_interval(18, 30, ci_level=0.9))
    assert old["ci_level"].iloc[0] == 0.9
    with pytest.raises(ValueError, match="give ci_level only"):
        wilson_interval(18, 30, ci=0.9, ci_level=0.9)
