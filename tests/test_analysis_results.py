"""Artifacts computed at a budget taken from the release say so (their titles name the paper's budgets)."""
from __future__ import annotations

from voxmem_analysis import artifacts
from voxmem_analysis.cli import main


def test_artifacts_note_the_budgets_taken_from_the_release(budget_subset, capsys):
    rel = budget_subset(("8K", "16K"))
    assert artifacts.compute("table15", rel).attrs["note"] == \
        "budget 16K: no model was run at 64K; the longest budget run"
    assert artifacts.compute("fig5", rel).attrs["note"] == \
        "budget 16K: no model was run at 32K; the budget run by the most models"
    assert artifacts.compute("table18", rel, n_boot=20).attrs["note"] == \
        "comparison 16K: no model was run at 64K; the longest budget run"
    assert "note" not in artifacts.compute("table15", rel, budget="16K").attrs   # as requested: nothing to say
    assert main(["table", "table16", "--data", str(rel.path), "--format", "csv"]) == 0
    assert "budget 16K: no model was run at 64K; the longest budget run" in capsys.readouterr().err
