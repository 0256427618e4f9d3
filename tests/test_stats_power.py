"""Paired power (voxmem_analysis.stats.power) against Connor's formula and a simulation."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from voxmem_analysis.stats import items_needed, minimum_detectable_difference, paired_power, power_summary


def _connor_n(d: float, psi: float, alpha: float = 0.05, power: float = 0.8) -> float:
    za, zb = st.norm.ppf(1 - alpha / 2), st.norm.ppf(power)
    return (za * np.sqrt(psi) + zb * np.sqrt(psi - d * d)) ** 2 / d ** 2


@pytest.mark.parametrize("d, psi", [(0.03, 0.2), (0.05, 0.1), (0.1, 0.3), (0.02, 0.25)])
def test_items_needed_is_connors_formula_rounded_up(d, psi):
    assert items_needed(d, psi) == int(np.ceil(_connor_n(d, psi)))


@pytest.mark.parametrize("n, psi", [(799, 0.2), (300, 0.15), (2000, 0.3)])
def test_mdd_inverts_the_formula(n, psi):
    d = minimum_detectable_difference(n, psi)
    # Connor's n ignores the far rejection tail, which the two-sided power counts (< 0.01 items here)
    assert _connor_n(d, psi) == pytest.approx(n, abs=0.01)
    assert paired_power(d, n, psi) == pytest.approx(0.8, abs=1e-9)


def test_power_matches_a_simulation_of_the_test():
    """Simulated rejection rate of the two-sided normal McNemar test equals the computed power."""
    n, psi, d = 400, 0.2, 0.06
    rng = np.random.default_rng(0)
    p10, p01 = (psi + d) / 2, (psi - d) / 2
    counts = rng.multinomial(n, [p10, p01, 1 - psi], size=40_000)
    n10, n01 = counts[:, 0], counts[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (n10 - n01) / np.sqrt(n * psi)               # the null SD the test assumes
    rate = float(np.mean(np.abs(z) > st.norm.ppf(0.975)))
    assert rate == pytest.approx(paired_power(d, n, psi), abs=0.015)


def test_summary_and_bad_input():
    out = power_summary(799, 0.2, target=0.03).iloc[0]
    assert out["items_needed"] == 1742 and round(100 * out["mdd"], 2) == 4.43
    assert out["power_at_target"] == pytest.approx(paired_power(0.03, 799, 0.2))
    with pytest.raises(ValueError, match="discordance"):
        items_needed(0.03, 1.5)
    with pytest.raises(ValueError, match="difference must lie"):
        items_needed(0.5, 0.2)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        minimum_detectable_difference(0, 0.2)
