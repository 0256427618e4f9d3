"""Paired power (voxmem_analysis.stats.power): the normal approximation against Connor's formula and a
simulation; the exact McNemar power against hand-computed cases, statsmodels' rejection region and a
simulation of statsmodels' exact test."""
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
    assert out["items_needed_normal"] == 1742 and round(100 * out["mdd_normal"], 2) == 4.43
    assert out["power_at_target_normal"] == pytest.approx(paired_power(0.03, 799, 0.2))
    assert out["items_needed_exact"] == items_needed(0.03, 0.2, method="exact") == 1800
    assert out["power_at_target_exact"] == pytest.approx(paired_power(0.03, 799, 0.2, method="exact"))
    assert out["power_exact_at_mdd_normal"] == pytest.approx(paired_power(out["mdd_normal"], 799, 0.2, method="exact"))
    assert round(100 * out["mdd_exact"], 2) == 4.53
    with pytest.raises(ValueError, match="discordance"):
        items_needed(0.03, 1.5)
    with pytest.raises(ValueError, match="difference must lie"):
        items_needed(0.5, 0.2)
    with pytest.raises(ValueError, match="difference must lie"):   # more than the discordance: p01 < 0
        paired_power(0.25, 100, 0.2)
    with pytest.raises(ValueError, match="n must be a positive integer"):
        minimum_detectable_difference(0, 0.2)
    with pytest.raises(ValueError, match="method must be one of"):
        paired_power(0.05, 100, 0.2, method="simulated")


def test_mdd_is_nan_when_no_possible_difference_reaches_the_power():
    """20 items at discordance 0.2: even delta = psi (every discordant item one way) has power < 0.8.
    (The old search went up to sqrt(psi) and reported 26.4 points, a difference the items cannot show.)"""
    assert paired_power(0.2 * (1 - 1e-9), 20, 0.2) < 0.8
    assert np.isnan(minimum_detectable_difference(20, 0.2))
    assert np.isnan(minimum_detectable_difference(20, 0.2, method="exact"))


# ----------------------------------------------------------------------------- exact McNemar power
def test_exact_power_by_hand():
    # psi = 0.9 and delta = 0.9: every discordant pair goes one way, n10 = D ~ Bin(6, 0.9); the test
    # rejects iff 2 * 0.5**D <= 0.05, i.e. D = 6: power 0.9**6
    assert paired_power(0.9, 6, 0.9, method="exact") == pytest.approx(0.9 ** 6, rel=1e-12)
    # psi = 1: D = 6 always, n10 ~ Bin(6, 0.75); the region is n10 in {0, 6}: 0.25**6 + 0.75**6
    assert paired_power(0.5, 6, 1.0, method="exact") == pytest.approx(0.25 ** 6 + 0.75 ** 6, rel=1e-12)
    # 5 pairs can never reject at 5% (2 * 0.5**5 = 0.0625)
    assert paired_power(0.5, 5, 1.0, method="exact") == 0.0


def test_rejection_region_matches_statsmodels():
    """c_d against statsmodels' binomial rejection interval (reject x <= x_low or x >= x_upp) for every
    d up to 400, and the resulting decisions against mcnemar(exact=True) for every table with d <= 40."""
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.proportion import binom_test_reject_interval

    from voxmem_analysis.stats.power import mcnemar_critical_values

    for dd in range(1, 401):
        x_low, x_upp = binom_test_reject_interval(0.5, dd, alpha=0.05)
        cd = int(mcnemar_critical_values(dd, 0.05))
        assert (cd, dd - cd) == (x_low, x_upp), dd
    for dd in range(1, 41):
        cd = mcnemar_critical_values(dd, 0.05)
        for n10 in range(dd + 1):
            p = mcnemar(np.array([[5, dd - n10], [n10, 5]]), exact=True).pvalue
            assert (p <= 0.05) == (n10 <= cd or n10 >= dd - cd), (dd, n10, p)


def test_exact_power_at_the_normal_mdd_is_078_by_simulation():
    """The audit's case: 799 items, discordance 0.198742 (the synthetic release's median between
    models).  The normal MDD is 4.41 pp; 40,000 simulated tables tested exactly (statsmodels' p-value
    formula, vectorised; checked against mcnemar on 300 of them) reject 78.1% of the time (SE 0.2%):
    the computed exact power 0.7807, not 0.80."""
    from statsmodels.stats.contingency_tables import mcnemar

    n, psi = 799, 0.198742
    mdd = minimum_detectable_difference(n, psi)
    assert 100 * mdd == pytest.approx(4.41198, abs=1e-4)
    exact = paired_power(mdd, n, psi, method="exact")
    assert exact == pytest.approx(0.78072, abs=1e-4)
    rng = np.random.default_rng(23)
    counts = rng.multinomial(n, [(psi + mdd) / 2, (psi - mdd) / 2, 1 - psi], size=40_000)
    n10, n01 = counts[:, 0], counts[:, 1]
    p = np.minimum(1.0, 2 * st.binom.cdf(np.minimum(n10, n01), n10 + n01, 0.5))
    for i in range(300):
        ref = mcnemar(np.array([[0, n01[i]], [n10[i], 0]]), exact=True).pvalue
        assert p[i] == pytest.approx(ref, rel=1e-12)
    rate = float(np.mean(p <= 0.05))
    se = np.sqrt(exact * (1 - exact) / counts.shape[0])
    assert abs(rate - exact) < 3 * se
    assert 0.80 - rate > 6 * se                       # resolves 0.78 from 0.80
    # the exact MDD does reach 0.80, and it is larger
    mdd_exact = minimum_detectable_difference(n, psi, method="exact")
    assert paired_power(mdd_exact, n, psi, method="exact") == pytest.approx(0.8, abs=1e-9)
    assert 100 * mdd_exact == pytest.approx(4.5153, abs=1e-3)


def test_exact_items_needed_is_the_first_size_reaching_the_power():
    n = items_needed(0.03, 0.2, method="exact")
    assert paired_power(0.03, n, 0.2, method="exact") >= 0.8 > paired_power(0.03, n - 1, 0.2, method="exact")
    # every item discordant (psi = 1): the binomial test's power saw-tooths in n; the answer is past the dips
    n1 = items_needed(0.3, 1.0, method="exact")
    powers = [paired_power(0.3, m, 1.0, method="exact") for m in range(n1, n1 + 100)]
    assert min(powers) >= 0.8 and paired_power(0.3, n1 - 1, 1.0, method="exact") < 0.8


def test_power_command(capsys):
    from voxmem_analysis.cli import main

    assert main(["power", "--n", "799", "--discordance", "0.2", "--target", "3"]) in (0, None)
    out = capsys.readouterr()
    header, row = out.out.strip().splitlines()
    vals = dict(zip(header.split(","), row.split(",")))
    assert vals["items_needed_normal"] == "1742" and float(vals["mdd_normal_pp"]) == pytest.approx(4.42592, abs=1e-4)
    assert vals["items_needed_exact"] == "1800" and float(vals["mdd_exact_pp"]) == pytest.approx(4.5294, abs=1e-3)
    assert float(vals["power_exact_at_mdd_normal"]) == pytest.approx(0.7807, abs=1e-4)
    assert "n and discordance: given" in out.err
    assert "Connor 1987" in out.err and "the exact test's power is 0.78, not 0.8" in out.err
    assert main(["power", "--n", "799"]) == 2                     # discordance missing: a message, no traceback
    assert "give --n and --discordance" in capsys.readouterr().err


def test_power_command_measures_a_release(capsys):
    from voxmem_analysis.analysis.power import observed_discordance
    from voxmem_analysis.cli import main
    from voxmem_analysis import load_release

    from conftest import SYNTHETIC

    assert main(["power", "--data", str(SYNTHETIC), "--compare", "budgets"]) in (0, None)
    out = capsys.readouterr()
    vals = dict(zip(*[line.split(",") for line in out.out.strip().splitlines()]))
    d = observed_discordance(load_release(SYNTHETIC), compare="budgets")
    # independent: the median share of items a model answers differently at 8K and 64K
    rel = load_release(SYNTHETIC).frame.to_pandas()
    rel = rel[rel["scored"] & rel["budget"].astype(str).isin(["8K", "64K"])]
    w = rel.pivot_table(index=["model", "question_id"], columns=rel["budget"].astype(str), values="correct",
                        aggfunc="first").dropna()
    shares = (w["8K"] != w["64K"]).groupby(level=0).mean()
    assert float(vals["discordance"]) == pytest.approx(float(np.median(shares)), abs=1e-6)
    assert len(d) == len(shares)
    assert "SYNTHETIC" in out.err
