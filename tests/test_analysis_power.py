"""The power of a release's paired comparisons: the budgets compared come from the release when the paper's
8K / 64K are absent, and the result says which were used."""
from __future__ import annotations

import pytest

from voxmem_analysis.analysis.power import observed_discordance, release_power
from voxmem_analysis.cli import main
from voxmem_analysis.errors import MissingDataError


def test_models_compared_at_a_budget_taken_from_the_release(budget_subset):
    rel = budget_subset(("16K", "32K"))
    d = observed_discordance(rel)
    assert set(d["budget"]) == {"32K"} and len(d) == 3          # three pairs of models; no 8K: the most run, longer
    assert d.attrs["budgets"] == "32K (no model was run at 8K; the budget run by the most models)"
    out = release_power(rel)
    assert out["budgets"].iloc[0] == d.attrs["budgets"] and out["comparisons"].iloc[0] == 3
    assert release_power(budget_subset(("8K", "16K")))["budgets"].iloc[0] == "8K (the paper's)"


def test_budgets_compared_are_the_shortest_and_longest_run(budget_subset):
    rel = budget_subset(("8K", "16K"))
    d = observed_discordance(rel, compare="budgets")
    assert (d["a"] == "8K").all() and (d["b"] == "16K").all() and len(d) == 3
    assert d.attrs["budgets"] == "8K (the paper's) against 16K (no model was run at 64K; the longest budget run)"
    with pytest.raises(MissingDataError, match="comparing budgets needs two; the release was run at 32K only"):
        observed_discordance(budget_subset(("32K",)), compare="budgets")


def test_power_command_defaults_from_the_release(budget_subset, capsys):
    rel = budget_subset(("8K", "16K"))
    assert main(["power", "--data", str(rel.path), "--compare", "budgets"]) == 0
    header, row = capsys.readouterr().out.strip().splitlines()
    d = observed_discordance(rel, compare="budgets")
    assert float(dict(zip(header.split(","), row.split(",")))["discordance"]) == pytest.approx(
        float(d["discordance"].median()), abs=1e-6)
