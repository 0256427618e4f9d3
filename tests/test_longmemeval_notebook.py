"""The LongMemEval notebook runs on the shipped SYNTHETIC example, which is what its generator writes."""
from __future__ import annotations

import filecmp
import importlib.util
from pathlib import Path

import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = REPO / "data" / "examples" / "longmemeval"
NOTEBOOK = REPO / "notebooks" / "60_longmemeval.py"


def test_example_matches_its_generator(tmp_path):
    spec = importlib.util.spec_from_file_location("make_example", EXAMPLE / "make_example.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.main(tmp_path)
    for p in sorted(tmp_path.rglob("*")):
        if p.is_file():
            assert filecmp.cmp(p, EXAMPLE / p.relative_to(tmp_path), shallow=False), p.name
    shipped = {p.relative_to(EXAMPLE) for p in EXAMPLE.rglob("*") if p.is_file()}
    assert shipped - {p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file()} == {
        Path("README.md"), Path("make_example.py")}
    assert "SYNTHETIC" in (EXAMPLE / "README.md").read_text()


def test_example_loads_and_is_marked_synthetic():
    from voxmem_analysis.io import load_longmemeval

    d = load_longmemeval(EXAMPLE / "manifest.csv", EXAMPLE / "questions.json")
    assert d.synthetic and d.label().startswith("SYNTHETIC DATA")
    q = d.questions
    assert q.height == 60 and q["is_abstention"].sum() == 12 and q["question_type"].n_unique() == 6
    assert d.systems() == ["synth-full-context", "synth-rag", "synth-memory-agent"] and d.budgets() == ["32k", "115k"]
    assert {p.code for p in d.problems} == {"missing_label", "incomplete_run"}


def test_notebook_runs(tmp_path):
    jupytext = pytest.importorskip("jupytext")
    nb = jupytext.read(NOTEBOOK)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    assert "parameters" in cells[0].metadata.get("tags", [])
    ns: dict = {"display": lambda *a, **k: None}
    exec(compile(cells[0].source, "parameters", "exec"), ns)
    assert {"manifest", "questions", "out_dir", "baseline", "seed", "n_boot"} <= set(ns)
    ns.update(manifest=str(EXAMPLE / "manifest.csv"), questions=str(EXAMPLE / "questions.json"),
              out_dir=str(tmp_path), n_boot=200)
    for i, c in enumerate(cells[1:], 1):
        exec(compile(c.source, f"cell {i}", "exec"), ns)
    figs = tmp_path / "figures"
    for name in ("lme_accuracy_by_type", "lme_comparison_matrix", "lme_scaling"):
        for ext in ("png", "pdf", "csv"):
            assert (figs / f"{name}.{ext}").stat().st_size > 0
    for name in ("lme_slice", "lme_compare", "lme_scaling", "lme_scaling_correlations", "lme_judges"):
        assert (tmp_path / "tables" / f"{name}.csv").is_file()
    assert "SYNTHETIC" in (tmp_path / "tables" / "lme_slice.md").read_text()
    cmp = pd.read_csv(tmp_path / "tables" / "lme_compare.csv")
    assert len(cmp) == 6 and (cmp["n_boot"] == 200).all()
