"""Where a notebook's relative paths point: the repository root, whatever the working directory.

A notebook's ``data_dir = "data/synthetic"`` means the repository's ``data/synthetic`` whether
the kernel started in ``notebooks/`` (JupyterLab, ``jupyter nbconvert --execute``), in the
repository (``papermill --cwd .``) or anywhere else (``papermill --cwd /tmp``).  :func:`resolve`
applies one rule:

* ``~`` is expanded, and an absolute path is used as given;
* a relative path is joined to :func:`repo_root`.

:func:`repo_root` is, in this order: the directory named by the environment variable
``VOXMEM_ROOT`` (an explicit override); the nearest directory at or above the working
directory that holds this project (a ``pyproject.toml`` naming ``voxmem-analysis`` and a
``notebooks/`` folder); the project holding the imported package (an editable install);
otherwise the working directory itself, so an installed package behaves like a plain path.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["ROOT_ENV", "repo_root", "resolve", "is_project_root"]

#: Environment variable naming the directory that relative notebook paths are resolved against.
ROOT_ENV = "VOXMEM_ROOT"
_PROJECT_NAME = re.compile(r'^\s*name\s*=\s*["\']voxmem-analysis["\']', re.MULTILINE)


def is_project_root(path) -> bool:
    """True when ``path`` holds this project: ``pyproject.toml`` naming it, and ``notebooks/``."""
    p = Path(path)
    try:
        text = (p / "pyproject.toml").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    return (p / "notebooks").is_dir() and bool(_PROJECT_NAME.search(text))


def _find_upwards(start: Path) -> Path | None:
    for d in (start, *start.parents):
        if is_project_root(d):
            return d
    return None


def repo_root(start=None) -> Path:
    """The directory relative notebook paths are resolved against (see the module docstring).

    ``start`` replaces the working directory as the place the upward search begins.
    """
    env = os.environ.get(ROOT_ENV, "").strip()
    if env:
        return Path(env).expanduser().resolve()
    here = Path(start if start is not None else os.getcwd()).expanduser().resolve()
    found = _find_upwards(here)
    if found is None:
        found = _find_upwards(Path(__file__).resolve().parent)
    return found if found is not None else here


def resolve(path, *, root=None) -> Path:
    """``path`` as an absolute path: ``~`` expanded, absolute kept, relative joined to the root.

    ``root`` (default :func:`repo_root`) is the base of a relative path.
    """
    if path is None:
        raise TypeError("resolve() needs a path, got None")
    p = Path(os.fspath(path)).expanduser()
    if p.is_absolute():
        return p
    base = Path(root).expanduser().resolve() if root is not None else repo_root()
    return base / p
