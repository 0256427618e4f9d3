"""The two notebooks of this issue execute end to end (jupytext -> papermill) and write their outputs."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import REPO, SYNTHETIC

jupytext = pytest.importorskip("jupytext")
papermill = pytest.importorskip("papermill")

FIX = Path(__file__).parent / "fixtures" / "results_tiny"
NOTEBOOKS = {
    "10_main_results": ["figures/fig4_model_evidence.png", "figures/fig5_operation_evidence_32k.pdf",
                        "figures/fig8_operation_evidence_shared.csv", "figures/table16_answerable_vs_refusal.png",
                        "tables/table15.csv", "tables/table16.md", "tables/table17.tex", "tables/groups.csv"],
    "20_context_scaling": ["figures/fig6_context_scaling.png", "figures/table18_forest.pdf",
                           "figures/d5_sensitivity.csv", "tables/table18.csv", "tables/fig6.md", "tables/d5.tex"],
}


def _run(name: str, data_dir: Path, tmp_path: Path) -> Path:
    nb = jupytext.read(REPO / "notebooks" / f"{name}.py")
    first = nb.cells[0]
    assert "parameters" in first.metadata.get("tags", []), "first cell must be tagged `parameters`"
    src = tmp_path / f"{name}.ipynb"
    jupytext.write(nb, src)
    out_dir = tmp_path / "out"
    papermill.execute_notebook(str(src), str(tmp_path / f"{name}_run.ipynb"), kernel_name="python3",
                               parameters={"data_dir": str(data_dir), "out_dir": str(out_dir), "n_boot": 200, "seed": 1},
                               cwd=str(REPO), progress_bar=False)
    return out_dir


@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_runs_on_fixture(name, tmp_path):
    out = _run(name, FIX, tmp_path)
    for rel in NOTEBOOKS[name]:
        assert (out / rel).is_file(), rel
    assert "SYNTHETIC" in (out / [r for r in NOTEBOOKS[name] if r.endswith(".md")][0]).read_text()


@pytest.mark.slow
@pytest.mark.skipif(not (SYNTHETIC / "predictions").is_dir(), reason="data/synthetic is not there yet")
@pytest.mark.parametrize("name", sorted(NOTEBOOKS))
def test_notebook_runs_on_synthetic_release(name, tmp_path):
    out = _run(name, SYNTHETIC, tmp_path)
    for rel in NOTEBOOKS[name]:
        assert (out / rel).is_file(), rel
