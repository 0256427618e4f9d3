"""Defaults taken from the data: every analysis a notebook runs with its default parameters works on a
release run at any subset of the budgets, and says which budget it used.

The paper's budgets (8K, 32K, 64K) are the defaults when the release has them; otherwise a budget is
taken from the release.  Each of the 15 non-empty subsets of {8K, 16K, 32K, 64K} is cut from
``data/synthetic`` (:mod:`shapes`) and the notebooks' calls are made on it; ``reproduce`` itself runs on
a release at 8K and 64K, where notebook 50 stopped ("no verdicts selected (budget='32K')").
"""
from __future__ import annotations

import itertools
import json

import polars as pl
import pytest

import shapes as S
from voxmem_analysis import load_release
from voxmem_analysis.analysis import ablation as A
from voxmem_analysis.analysis import explore as E
from voxmem_analysis.analysis import judges as J
from voxmem_analysis.analysis import results as R
from voxmem_analysis.analysis import scaling as SC
from voxmem_analysis.analysis.selection import budget_note, part_budget
from voxmem_analysis.cli import main
from voxmem_analysis.errors import MissingDataError

SUBSETS = [bs for k in range(1, 5) for bs in itertools.combinations(S.BUDGETS, k)]
MODELS = {"Gemini-3.1-Pro": "Gemini-3.1-Pro", "Gemma-4-E4B-it": "Gemma-4-E4B-it", "Qwen3-Omni-30B-A3B": "Qwen3-Omni-30B-A3B"}


def _release(budgets: tuple, root):
    name = "budgets_" + "_".join(budgets)
    S.SHAPES[name] = S.Shape(f"three models at {', '.join(budgets)}", MODELS, budgets=budgets, every=12,
                             parts=("judge2", "ablation"))
    return S.build(name, root)


@pytest.mark.parametrize("budgets", SUBSETS, ids=["+".join(b) for b in SUBSETS])
def test_the_notebooks_defaults_work_on_every_subset_of_budgets(budgets, tmp_path):
    rel = load_release(_release(budgets, tmp_path))
    R.evidence_panels(rel)
    b5 = R.fig5_budget(rel)
    assert b5 == ("32K" if "32K" in budgets else budgets[-1])
    R.operation_evidence(rel, budgets=[b5])
    assert R.table15(rel).index[-1] == "n" and R.table16(rel).index[-1] == "Always abstain"
    assert R.answerable_refusal_summary(rel)["budget"].iloc[0] == ("64K" if "64K" in budgets else budgets[-1])
    R.table17(rel)
    b, why = E.explorer_budget(rel)                      # notebook 50: was budget="32K" whatever the release
    assert b == b5 and why == ("the paper's" if b == "32K" else f"no model was run at 32K; the budget run by the "
                                                                "most models")
    assert len(E.explore_slices(rel, "subtype,evidence_type", budget=b, n_boot=20))
    if len(budgets) > 1:
        R.fig8(rel)
        plan = SC.scaling_plan(rel)
        assert (plan.baseline, plan.comparison) == (budgets[0], budgets[-1])
        assert SC.d5(rel, n_boot=20).index[-1] == "cells" and len(SC.table18(rel, n_boot=20))
    else:
        with pytest.raises(MissingDataError, match="scaling needs two budgets"):
            SC.scaling_plan(rel)
    if "8K" in budgets:                                   # the shapes copy the second judge and the ablation at 8K
        assert J.compare_judges(rel, n_boot=20).budget == "8K"
        assert A.transcript_ablation_release(rel, n_boot=20).budget == "8K"


def test_part_budget_and_budget_note():
    frame = pl.DataFrame({"budget": ["16k", "16K", "64K", "32768"]})
    assert part_budget(frame) == "16K"                                 # no 8K: the budget with the most rows
    assert part_budget(pl.DataFrame({"budget": ["32K", "64K"]})) == "32K"   # a tie: the shorter
    assert part_budget(frame.to_pandas(), paper="64K") == "64K" and part_budget(None) == "8K"
    assert part_budget(frame, "8k") == "8K"
    assert budget_note("32K", None, "32K", "x") == "the paper's"
    assert budget_note("64K", None, "32K", "the budget run by the most models") == \
        "no model was run at 32K; the budget run by the most models"
    assert budget_note("16K", "16K", "32K", "", ["8K"]) == "as requested; no model was run at 16K"


def test_reproduce_runs_on_a_release_at_8k_and_64k(tmp_path, capsys):
    data = _release(("8K", "64K"), tmp_path)
    rc = main(["reproduce", "--data", str(data), "--out", str(tmp_path / "out"), "--only",
               "10_main_results,50_subtype_explorer", "--n-boot", "50", "--jobs", "2", "--no-progress"])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    assert (tmp_path / "out" / "tables" / "explorer_subtype_evidence_type_64k.csv").exists()
    for nb in ("10_main_results", "50_subtype_explorer"):   # no stray echo (a list of PosixPaths) in any cell
        cells = json.loads((tmp_path / "out" / "notebooks" / f"{nb}.ipynb").read_text())["cells"]
        echoed = ["".join(o["data"].get("text/plain", "")) for c in cells for o in c.get("outputs", [])
                  if o["output_type"] == "execute_result"]
        assert not [e for e in echoed if "PosixPath" in e], nb
