"""Notebook paths do not depend on the working directory: relative means the repository root."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from conftest import REPO
from voxmem_analysis import paths
from voxmem_analysis.paths import ROOT_ENV, is_project_root, repo_root, resolve


@pytest.fixture(autouse=True)
def _no_override(monkeypatch):
    monkeypatch.delenv(ROOT_ENV, raising=False)


def _fake_project(root: Path, name: str = "voxmem-analysis") -> Path:
    (root / "notebooks").mkdir(parents=True)
    (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "0"\n')
    return root


def test_the_repository_is_the_root_from_any_folder_inside_it(monkeypatch):
    assert is_project_root(REPO)
    for cwd in (REPO, REPO / "notebooks", REPO / "voxmem_analysis" / "io"):
        monkeypatch.chdir(cwd)
        assert repo_root() == REPO
        assert resolve("data/synthetic") == REPO / "data" / "synthetic"


def test_outside_any_project_the_package_location_decides(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert repo_root() == REPO            # editable install: the package lives in the repository
    assert resolve("figures") == REPO / "figures"


def test_installed_package_outside_a_project_keeps_the_working_directory(monkeypatch, tmp_path):
    monkeypatch.setattr(paths, "__file__", str(tmp_path / "site-packages" / "voxmem_analysis" / "paths.py"))
    monkeypatch.chdir(tmp_path)
    assert repo_root() == tmp_path.resolve()
    assert resolve("out") == tmp_path.resolve() / "out"


def test_nearest_project_above_the_working_directory_wins(monkeypatch, tmp_path):
    other = _fake_project(tmp_path / "clone")
    monkeypatch.chdir(other / "notebooks")
    assert repo_root() == other.resolve()
    assert repo_root(start=REPO / "notebooks") == REPO
    assert resolve("data/x") == other.resolve() / "data" / "x"


def test_a_different_project_is_not_a_root(tmp_path):
    assert not is_project_root(_fake_project(tmp_path / "p", name="something-else"))
    assert not is_project_root(tmp_path)                          # no pyproject.toml
    (tmp_path / "q").mkdir()
    (tmp_path / "q" / "pyproject.toml").write_text('[project]\nname = "voxmem-analysis"\n')
    assert not is_project_root(tmp_path / "q")                    # no notebooks/


def test_environment_variable_overrides(monkeypatch, tmp_path):
    monkeypatch.setenv(ROOT_ENV, str(tmp_path))
    monkeypatch.chdir(REPO / "notebooks")
    assert repo_root() == tmp_path.resolve()
    assert resolve("data/synthetic") == tmp_path.resolve() / "data" / "synthetic"
    monkeypatch.setenv(ROOT_ENV, "~/elsewhere")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert repo_root() == (tmp_path / "elsewhere").resolve()


def test_absolute_and_home_paths_are_used_as_given(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv(ROOT_ENV, "/somewhere/else")
    assert resolve(tmp_path / "abs") == tmp_path / "abs"
    assert resolve("/abs/data") == Path("/abs/data")
    assert resolve("~/releases/r1") == tmp_path / "releases" / "r1"
    assert resolve(Path("rel"), root=tmp_path) == tmp_path.resolve() / "rel"
    with pytest.raises(TypeError):
        resolve(None)


def test_notebooks_resolve_every_path_parameter():
    """Each notebook passes its path parameters through ``resolve`` (never a bare ``Path(...)``)."""
    for nb in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py")):
        src = nb.read_text(encoding="utf-8")
        assert "from voxmem_analysis.paths import resolve" in src, nb.name
        # the output folder is an OutputFolder, which resolves out_dir the same way (and records provenance)
        assert re.search(r'^out = OutputFolder\(out_dir, notebook="' + nb.stem + '"', src, re.M), nb.name
        assert "Path(out_dir)" not in src and "load_release(data_dir" not in src, nb.name
