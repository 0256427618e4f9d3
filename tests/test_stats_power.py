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


def test_power_command(capsys):
    from voxmem_analysis.cli import main

    assert main(["power", "--n", "799", "--discordance", "0.2", "--target", "3"]) in (0, None)
    out = capsys.readouterr()
    header, row = out.out.strip().splitlines()
    vals = dict(zip(header.split(","), row.split(",")))
    assert vals["items_needed"] == "1742" and float(vals["mdd_pp"]) == pytest.approx(4.42592, abs=1e-4)
    assert "n and discordance: given" in out.err
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
