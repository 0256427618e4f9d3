"""The main-results and scaling notebooks run to completion on partial releases (voxmem_analysis.reproduce.runner).

Shapes from tests/test_results_partial.py: ``user`` (two models at 8K and 32K, no models.csv,
no items.csv) and ``one_budget`` (two models at 8K only).  What the notebooks print is checked:
the budgets they used, and the reason of every section they skipped.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest

from test_results_partial import partial_release

pytest.importorskip("papermill")
pytest.importorskip("jupytext")

NOTEBOOKS = "10_main_results,20_context_scaling"


def _printed(nb_path: Path) -> tuple[str, list[str]]:
    """stdout of every cell of an executed notebook, and the names of the errors raised."""
    nb = json.loads(nb_path.read_text())
    text, errors = [], []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream" and o.get("name") == "stdout":
                text.append("".join(o["text"]))
            elif o.get("output_type") == "error":
                errors.append(o["ename"])
    return "".join(text), errors


def _run(tmp_path: Path, shape: str, statuses=("ok", "ok")):
    from voxmem_analysis.reproduce import runner as reproduce

    data = partial_release(tmp_path / shape, shape)
    out = tmp_path / f"{shape}_out"
    summary = reproduce.run(data, out, jobs=2, n_boot=50, seed=1, only=NOTEBOOKS, reproduction=False,
                            report=False, progress=False, stream=io.StringIO())
    assert summary.exit_code == 0, [(r.name, r.error.headline() if r.error else r.reason) for r in summary.notebooks]
    assert [r.status for r in summary.notebooks] == list(statuses)
    return out


@pytest.fixture(scope="module")
def user_run(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("nb_user"), "user")


@pytest.fixture(scope="module")
def one_budget_run(tmp_path_factory):
    # the scaling notebook writes nothing on one budget: reported as skipped, with the reasons it printed
    return _run(tmp_path_factory.mktemp("nb_one"), "one_budget", statuses=("ok", "skipped"))


def test_main_results_on_user_release(user_run):
    text, errors = _printed(user_run / "notebooks" / "10_main_results.ipynb")
    assert errors == []
    assert "Budgets run: 8K (2 models), 32K (2 models); not run: 16K, 64K" in text
    assert "Table 15, Table 16, Figure 8 at 32K (no model was run at 64K; the longest budget run)" in text
    assert "Figure 8: 2 models run at 32K; questions judged at 8K, 32K by every one | panels: 8K, 32K" in text
    assert "Table 17 by source operation: skipped \u2014 the source operation of every AR item is unknown" in text
    t15 = pd.read_csv(user_run / "tables" / "table15.csv", index_col=0)
    assert list(t15.index) == ["Model-A", "Model-B", "Mean all (2)", "n"]
    assert t15.loc["Mean all (2)", "Overall"] == pytest.approx(55.0)
    assert "at 32K" in (user_run / "tables" / "table15.md").read_text().splitlines()[0]
    t17 = pd.read_csv(user_run / "tables" / "table17.csv", index_col=0)
    assert "MSR" not in t17.columns
    for rel in ("figures/fig4_model_evidence.png", "figures/fig5_operation_evidence_32k.pdf",
                "figures/fig8_operation_evidence_shared.csv", "figures/table16_answerable_vs_refusal.png",
                "tables/groups.csv", "tables/table16.md"):
        assert (user_run / rel).is_file(), rel


def test_scaling_on_user_release(user_run):
    text, errors = _printed(user_run / "notebooks" / "20_context_scaling.ipynb")
    assert errors == []
    assert "Scaling 8K\u219232K (baseline 8K, comparison 32K: no model was run at 64K" in text
    assert "Models (2, run at both): Model-A, Model-B" in text
    t18 = pd.read_csv(user_run / "tables" / "table18.csv", index_col=0)
    assert list(t18.columns[:3]) == ["n", "8K", "32K"]
    assert t18.loc["Overall", "drop"] == pytest.approx(0.0)
    assert t18.loc["Speaker Identity", "drop"] == pytest.approx(50.0)
    assert "8K\u219232K" in (user_run / "tables" / "table18.md").read_text().splitlines()[0]
    f6 = pd.read_csv(user_run / "tables" / "fig6.csv", index_col=0)
    assert f6.loc["Paralinguistic Cues", "32K"] == pytest.approx(300.0)
    for rel in ("figures/fig6_context_scaling.png", "figures/table18_forest.pdf", "figures/d5_sensitivity.csv",
                "tables/d5.tex"):
        assert (user_run / rel).is_file(), rel


def test_single_budget_skips_scaling_with_reason(one_budget_run):
    text, errors = _printed(one_budget_run / "notebooks" / "20_context_scaling.ipynb")
    assert errors == []
    reason = "scaling needs two budgets, but the release was run at one budget only (8K)"
    assert f"Context scaling cannot be computed: {reason}. The sections below are skipped." in text
    for section in ("Figure 6", "Table 18 (scaling)", "Appendix D.5 (scaling)"):
        assert f"{section}: skipped \u2014 {reason}" in text
    assert not (one_budget_run / "tables" / "table18.csv").exists()
    run = json.loads((one_budget_run / "run.json").read_text())
    nb20 = next(nb for nb in run["notebooks"] if nb["name"] == "20_context_scaling")
    assert nb20["status"] == "skipped" and nb20["reason"] == f"wrote nothing: every section was skipped ({reason}; " \
        "comparing budgets needs two; the release was run at 8K only)"
    text10, errors10 = _printed(one_budget_run / "notebooks" / "10_main_results.ipynb")
    assert errors10 == []
    assert "Table 15, Table 16, Figure 8 at 8K" in text10 and "Figure 5 at 8K" in text10
    assert (one_budget_run / "tables" / "table15.csv").is_file()
    assert (one_budget_run / "figures" / "fig5_operation_evidence_8k.png").is_file()
