"""Every notebook runs with its default parameters from ``notebooks/`` and shows what it saves.

``papermill --cwd notebooks`` executes each notebook (as JupyterLab and ``nbconvert``
start the kernel) and only ``out_dir`` changed -- to a *relative* path, which must resolve
against the repository root and so lands in the test's temporary folder -- and ``n_boot``
(a smaller bootstrap).  The executed
notebook must hold every saved figure as an image output, byte for byte the PNG on disk, and
a rich (HTML) output for every saved table.  ``jupyter nbconvert --execute`` and the
reproduction runner's executed copies are checked the same way on one notebook each.
"""
from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

jupytext = pytest.importorskip("jupytext")
papermill = pytest.importorskip("papermill")

from voxmem_analysis.paths import ROOT_ENV, resolve  # noqa: E402
from voxmem_analysis.reproduce.notebook import declared_parameters, discover, missing_parts  # noqa: E402

NOTEBOOKS = discover(REPO / "notebooks")


def _images(nb: dict) -> list[bytes]:
    return [base64.b64decode(o["data"]["image/png"]) for c in nb["cells"] if c["cell_type"] == "code"
            for o in c.get("outputs", []) if "image/png" in o.get("data", {})]


def _html_outputs(nb: dict) -> int:
    return sum("text/html" in o.get("data", {}) for c in nb["cells"] if c["cell_type"] == "code"
               for o in c.get("outputs", []))


def _errors(nb: dict) -> list[str]:
    return [f"{o['ename']}: {o['evalue']}" for c in nb["cells"] if c["cell_type"] == "code"
            for o in c.get("outputs", []) if o.get("output_type") == "error"]


def _assert_shows_what_it_saved(nb: dict, out: Path) -> None:
    saved = {p.name: p.read_bytes() for p in sorted((out / "figures").glob("*.png"))}
    shown = _images(nb)
    assert sorted(shown) == sorted(saved.values()), (
        f"{len(shown)} image output(s) for {len(saved)} saved figure(s): {sorted(saved)}")
    tables = list((out / "tables").glob("*.md"))
    assert _html_outputs(nb) >= len(tables), f"{_html_outputs(nb)} rich outputs for {len(tables)} tables"


def _to_ipynb(script: Path, dst: Path) -> Path:
    jupytext.write(jupytext.read(script), dst)
    return dst


@pytest.fixture(autouse=True)
def _no_root_override(monkeypatch):
    monkeypatch.delenv(ROOT_ENV, raising=False)


@pytest.mark.parametrize("script", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_papermill_from_notebooks_dir_with_default_parameters(script, tmp_path):
    nb = jupytext.read(script)
    declared = declared_parameters(nb.cells[0].source)
    data = declared.get("data_dir")
    if isinstance(data, str) and missing_parts(script.read_text(encoding="utf-8"), resolve(data)):
        pytest.skip(f"the default release lacks a part {script.name} requires")
    out = tmp_path / "out"
    rel_out = os.path.relpath(out, REPO)          # relative: resolved against the repository root
    assert not Path(rel_out).is_absolute()
    executed = tmp_path / f"{script.stem}.run.ipynb"
    src = _to_ipynb(script, tmp_path / f"{script.stem}.ipynb")
    # the papermill command, as a user runs it (one process per notebook).  The cell time-out is
    # short: papermill waits for each reply with one poll as long as it, and twice in about seven
    # full runs a reply the kernel sent at once (notebook 50's widget cell) was only picked up when
    # that poll timed out (the cell then passes); at 120 s that costs 2 minutes, not 15
    # a smaller bootstrap than the default 10,000 (no test here reads a bootstrap number): -p n_boot as a user sets it
    small = ["-p", "n_boot", "200"] if "n_boot" in declared else []
    cmd = [sys.executable, "-m", "papermill", str(src), str(executed), "--cwd", "notebooks", "-p", "out_dir", rel_out,
           *small, "-k", "python3", "--no-progress-bar", "--execution-timeout", "120"]
    run = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900,
                         env={k: v for k, v in os.environ.items() if k != ROOT_ENV})
    assert run.returncode == 0, run.stderr[-3000:]
    result = json.loads(executed.read_text())
    assert not _errors(result)
    assert out.is_dir(), "relative out_dir was not resolved against the repository root"
    _assert_shows_what_it_saved(result, out)
    if any((out / "figures").glob("*.png")):
        assert _images(result)


def test_nbconvert_execute_runs_in_the_notebook_folder(tmp_path):
    """``jupyter nbconvert --execute`` starts the kernel beside the notebook: a copy outside the
    repository still finds the release (the package's project) and shows its figures."""
    script = REPO / "notebooks" / "05_benchmark_design.py"
    nb = jupytext.read(script)
    out = tmp_path / "out"
    nb.cells[0].source = nb.cells[0].source.replace('out_dir = "figures"', f"out_dir = {str(out)!r}")
    assert str(out) in nb.cells[0].source
    src = tmp_path / "work" / "05_benchmark_design.ipynb"
    src.parent.mkdir()
    jupytext.write(nb, src)
    env = {k: v for k, v in os.environ.items() if k != ROOT_ENV}
    subprocess.run([sys.executable, "-m", "jupyter", "nbconvert", "--to", "notebook", "--execute", "--inplace",
                    "--ExecutePreprocessor.kernel_name=python3", str(src)],
                   check=True, env=env, cwd=tmp_path, capture_output=True, timeout=600)
    result = json.loads(src.read_text())
    assert not _errors(result)
    assert len(_images(result)) == 2                       # Figure 2(a), session roles
    _assert_shows_what_it_saved(result, out)


def test_runner_executed_copies_show_the_figures(tmp_path, synthetic_scaling_explorer_run):
    """The executed copy of notebook 20 in the session's reproduce run of data/synthetic shows what it saved."""
    out = synthetic_scaling_explorer_run
    res = next(nb for nb in json.loads((out / "run.json").read_text())["notebooks"] if nb["name"] == "20_context_scaling")
    assert res["status"] == "ok", res["error"]
    executed = json.loads((out / res["executed"]).read_text())
    assert len(_images(executed)) >= 3                      # Figure 6, Table 18 forest, D.5 scatter, ...
    for rel in res["outputs"]:                              # what notebook 20 saved, without notebook 50's
        (tmp_path / "saved" / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(out / rel, tmp_path / "saved" / rel)
    _assert_shows_what_it_saved(executed, tmp_path / "saved")
