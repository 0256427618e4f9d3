"""The explorer's drill-down defaults to a budget the model was run at, and its title says which."""
from __future__ import annotations

from voxmem_analysis.analysis import explore
from voxmem_analysis.analysis.items import cell_items


def test_cell_items_default_budget_from_the_release(budget_subset):
    rel = budget_subset(("8K", "16K"))
    table = explore.explore_slices(rel, "evidence_type", budget=None, n_boot=20)
    title, items = cell_items(rel, table, "evidence_type", model="Gemma-4-E4B-it", wrong=False)
    assert title.startswith("Gemma-4-E4B-it at 16K (Gemma-4-E4B-it was not run at 32K; the longest it was run at), "
                            "evidence_type = ")
    assert len(items) > 0 and f": {len(items)} items" in title
    rel32 = budget_subset(("32K",))
    title, items = cell_items(rel32, explore.explore_slices(rel32, "evidence_type", n_boot=20), "evidence_type")
    assert title.startswith(f"{rel32.model_order()[0]} at 32K, evidence_type = ") and len(items) > 0
