"""The context-length model on releases without the paper's 8K or 64K: budgets from the release, said in a note."""
from __future__ import annotations

import pytest

from voxmem_analysis import artifacts
from voxmem_analysis.analysis import scaling_model as SM
from voxmem_analysis.errors import MissingDataError


def test_scaling_model_runs_without_64k_and_says_which_budgets(budget_subset):
    rel = budget_subset(("8K", "16K"))
    sm = SM.scaling_model(rel)
    assert set(sm["budgets"]) == {"8K, 16K"} and set(sm["reference_budget"]) == {"8K"}
    table = artifacts.compute("scaling_model", rel)
    assert table.index[-1] == "Overall" and table["models"].iloc[-1] == 3
    assert table.attrs["note"] == "comparison 16K: no model was run at 64K; the longest budget run"
    assert "note" not in artifacts.compute("scaling_model", rel, baseline="8K", comparison="16K").attrs


def test_scaling_model_on_one_budget_says_it_needs_two(budget_subset):
    with pytest.raises(MissingDataError, match="scaling needs two budgets"):
        SM.scaling_model(budget_subset(("32K",)))


def test_a_separated_evidence_type_is_left_blank_and_said(tmp_path):
    """A model right on every speech-semantics item (``extremes``): no finite odds ratio for that type; the table
    leaves it blank and its note says why, with no numpy warning on the way."""
    import warnings

    import numpy as np
    import shapes

    from voxmem_analysis import load_release

    rel = load_release(shapes.build("extremes", tmp_path))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        table = artifacts.compute("scaling_model", rel)
    assert np.isnan(table.loc["Speech Semantics", "OR per doubling"])
    assert np.isfinite(table.loc["Overall", "OR per doubling"])
    assert table.attrs["note"].startswith("not estimable (left blank): Speech Semantics: the fit has no finite")
    # Holm runs over the three types with a p-value, and the family says so
    assert set(table.loc[["Speaker Identity", "Paralinguistic Cues", "Environmental Sound"], "Holm family"]) == {
        "the 3 evidence types' tests"}
    p = table.loc["Speaker Identity", "p"]
    assert table.loc["Speaker Identity", "p (Holm)"] == pytest.approx(min(1.0, 3 * p))
