"""The repository's Jupyter configuration: jupytext pairing that keeps the scripts clean (outputs in a hidden
``notebooks/.NN_name.ipynb``), the JupyterLab setting (installed into the environment) that opens ``.py``
notebooks as notebooks, the server setting that lets it write the hidden pairs, and the pairs ``make lab``
writes so that a notebook opens clean."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

jupytext = pytest.importorskip("jupytext")
nbformat = pytest.importorskip("nbformat")

NOTEBOOKS = sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py"))
LAB_OVERRIDES = REPO / "jupyterlab" / "overrides.json"
INSTALLED = Path(sys.prefix) / "share" / "jupyter" / "lab" / "settings" / "overrides.d" / "voxmem-analysis.json"
SERVER_INSTALLED = Path(sys.prefix) / "etc" / "jupyter" / "jupyter_server_config.json"
PAIR_SCRIPT = REPO / "jupyterlab" / "pair_notebooks.py"


def _pair(script: Path) -> Path:
    return script.with_name(f".{script.stem}.ipynb")
JUPYTEXT_LAB = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "jupyterlab-jupytext"


def _copy_project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "notebooks").mkdir(parents=True)
    shutil.copy(REPO / "jupytext.toml", root / "jupytext.toml")
    for nb in NOTEBOOKS:
        shutil.copy(nb, root / "notebooks" / nb.name)
    return root


def _installed_kernelspec() -> dict:
    """The kernelspec JupyterLab writes into a notebook it runs: the installed ``python3`` kernel's."""
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    return {"display_name": spec.display_name, "language": spec.language, "name": "python3"}


def _as_lab_would_save(nb) -> None:
    """What a JupyterLab session adds before saving: outputs, the running kernel's spec, kernel/widget
    metadata, cell UI state."""
    nb.metadata["kernelspec"] = _installed_kernelspec()
    nb.metadata["language_info"] = {"name": "python", "version": "3.11.2", "mimetype": "text/x-python"}
    nb.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                                             "version_minor": 0}}
    for c in nb.cells:
        c.metadata.update(scrolled=True, collapsed=False, jupyter={"source_hidden": False},
                          execution={"iopub.execute_input": "2026-12-01T00:00:00Z"})
        if c.cell_type == "code":
            c["execution_count"] = 1
            c["outputs"] = [nbformat.v4.new_output("stream", name="stdout", text="ran\n")]


def test_saving_from_jupyterlab_changes_only_the_edited_line(tmp_path):
    from jupytext import TextFileContentsManager   # the contents manager JupyterLab's server uses

    root = _copy_project(tmp_path)
    cm = TextFileContentsManager(root_dir=str(root), allow_hidden=True)
    for script in NOTEBOOKS:
        rel = f"notebooks/{script.name}"
        model = cm.get(rel, content=True)
        assert model["type"] == "notebook", rel
        nb = model["content"]
        _as_lab_would_save(nb)
        params = nb.cells[0]
        assert "parameters" in params.metadata.get("tags", []), rel
        params.source = params.source + "\nedited = 1"
        cm.save({"type": "notebook", "format": "json", "content": nb}, rel)
        before = script.read_text(encoding="utf-8").splitlines()
        after = (root / rel).read_text(encoding="utf-8").splitlines()
        added = [line for line in after if line not in before]
        assert added == ["edited = 1"] and len(after) == len(before) + 1, (rel, added)
        assert not (root / rel).with_suffix(".ipynb").exists()   # one visible file per notebook
        paired = json.loads(_pair(root / rel).read_text())
        assert any(c.get("outputs") for c in paired["cells"]), f"{rel}: the paired .ipynb lost the outputs"
        assert "widgets" in paired["metadata"]


def test_saving_only_outputs_from_jupyterlab_leaves_every_script_byte_identical(tmp_path):
    """Run in Lab (outputs, the kernel's spec and UI metadata added) and saved: the tracked .py is unchanged
    to the byte.  The kernel `make` installs carries the display name the headers have ("Python 3"), so
    Lab's write-back of the running kernel's spec changes nothing."""
    from jupytext import TextFileContentsManager

    root = _copy_project(tmp_path)
    cm = TextFileContentsManager(root_dir=str(root), allow_hidden=True)
    for script in NOTEBOOKS:
        rel = f"notebooks/{script.name}"
        nb = cm.get(rel, content=True)["content"]
        _as_lab_would_save(nb)
        cm.save({"type": "notebook", "format": "json", "content": nb}, rel)
        assert (root / rel).read_bytes() == script.read_bytes(), rel


def test_the_installed_kernel_has_the_display_name_of_the_notebook_headers():
    headers = {line.strip() for nb in NOTEBOOKS for line in nb.read_text(encoding="utf-8").splitlines()
               if line.strip().startswith("#     display_name:")}
    assert headers == {"#     display_name: Python 3"}
    assert _installed_kernelspec()["display_name"] == "Python 3", "run `make install`: it installs the kernel"
    makefile = (REPO / "Makefile").read_text()
    assert "KERNEL_DISPLAY_NAME := Python 3" in makefile and '--display-name "$(KERNEL_DISPLAY_NAME)"' in makefile
    assert "ENV := $(STAMP) $(KERNEL_SPEC) $(LAB_SETTINGS)" in makefile


def test_jupytext_sync_leaves_every_script_byte_identical(tmp_path):
    root = _copy_project(tmp_path)
    subprocess.run([sys.executable, "-m", "jupytext", "--sync", *(f"notebooks/{p.name}" for p in NOTEBOOKS)],
                   cwd=root, check=True, capture_output=True, timeout=300)
    for script in NOTEBOOKS:
        assert (root / "notebooks" / script.name).read_bytes() == script.read_bytes(), script.name
        assert _pair(root / "notebooks" / script.name).is_file()


def test_paired_notebooks_are_git_ignored():
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    for paired in ("notebooks/20_context_scaling.ipynb", "notebooks/.20_context_scaling.ipynb"):
        assert subprocess.run(["git", "check-ignore", "-q", paired], cwd=REPO).returncode == 0, paired
    r = subprocess.run(["git", "check-ignore", "-q", "notebooks/20_context_scaling.py"], cwd=REPO)
    assert r.returncode == 1


def test_lab_setting_names_the_jupytext_viewer_for_python_files():
    setting = json.loads(LAB_OVERRIDES.read_text())
    viewers = setting["@jupyterlab/docmanager-extension:plugin"]["defaultViewers"]
    assert viewers == {"python": "Jupytext Notebook"}
    # the factory and file-type names the installed jupytext extension registers
    code = "".join(p.read_text(encoding="utf-8", errors="replace") for p in (JUPYTEXT_LAB / "static").glob("*.js"))
    assert 'FACTORY="Jupytext Notebook"' in code
    assert '"python"' in code


def test_lab_setting_is_installed_in_the_environment():
    if not INSTALLED.is_file():
        pytest.fail(f"{INSTALLED} is missing: `make install` (or `make lab-settings`) installs it")
    assert json.loads(INSTALLED.read_text()) == json.loads(LAB_OVERRIDES.read_text())
    makefile = (REPO / "Makefile").read_text()
    assert "share/jupyter/lab/settings/overrides.d/voxmem-analysis.json" in makefile


def test_server_setting_lets_lab_write_the_hidden_pairs():
    """Without it the server refuses the hidden pair: opening a notebook and listing notebooks/ fail with 404."""
    assert json.loads((REPO / "jupyterlab" / "jupyter_server_config.json").read_text()) == {
        "ContentsManager": {"allow_hidden": True}}
    if not SERVER_INSTALLED.is_file():
        pytest.fail(f"{SERVER_INSTALLED} is missing: `make install` (or `make lab-settings`) installs it")
    from jupyter_server.serverapp import ServerApp

    app = ServerApp()
    app.load_config_file()           # what `jupyter lab` of this environment reads
    assert app.config.ContentsManager.allow_hidden is True
    assert "$(VENV)/etc/jupyter/jupyter_server_config.json" in (REPO / "Makefile").read_text()


def test_pairs_carry_the_kernels_language_info_and_leave_the_scripts_alone(tmp_path):
    """What makes a notebook open clean in Lab: the model it loads already holds the ``language_info`` the
    kernel reports when it starts (else Lab adds it, and the notebook is marked unsaved)."""
    from ipykernel.ipkernel import IPythonKernel
    from jupytext import TextFileContentsManager

    root = _copy_project(tmp_path)
    scripts = sorted((root / "notebooks").glob("*.py"))
    cm = TextFileContentsManager(root_dir=str(root), allow_hidden=True)
    assert "language_info" not in cm.get("notebooks/00_validate.py", content=True)["content"].metadata
    done = subprocess.run([sys.executable, str(PAIR_SCRIPT), *map(str, scripts)], capture_output=True, text=True,
                          check=True, timeout=300)
    assert f"paired {len(scripts)} notebook(s)" in done.stdout
    for script in scripts:
        assert script.read_bytes() == (REPO / "notebooks" / script.name).read_bytes()
        assert _pair(script).stat().st_mtime_ns == script.stat().st_mtime_ns
        nb = cm.get(f"notebooks/{script.name}", content=True)["content"]   # no "more recent" refusal
        assert nb.metadata["language_info"] == IPythonKernel.language_info
    # a second run leaves pairs (with the user's outputs) alone; a pair of another Python is updated
    again = subprocess.run([sys.executable, str(PAIR_SCRIPT), *map(str, scripts)], capture_output=True, text=True,
                           check=True, timeout=300)
    assert again.stdout == ""
    old = json.loads(_pair(scripts[0]).read_text())
    old["metadata"]["language_info"]["version"] = "3.0.0"
    _pair(scripts[0]).write_text(json.dumps(old))
    subprocess.run([sys.executable, str(PAIR_SCRIPT), str(scripts[0])], check=True, timeout=300)
    assert json.loads(_pair(scripts[0]).read_text())["metadata"]["language_info"] == IPythonKernel.language_info
    assert "pair_notebooks.py notebooks/[0-9][0-9]_*.py" in (REPO / "Makefile").read_text()
