"""Where a notebook's relative paths point: the repository root, whatever the kernel's working directory.
:func:`resolve` expands ``~``, keeps an absolute path and joins a relative one to :func:`repo_root`: the folder
named by ``VOXMEM_ROOT``, else the nearest folder at or above the working directory holding this project (a
``pyproject.toml`` naming ``voxmem-analysis`` and ``notebooks/``), else the project holding the imported
package (an editable install), else the working directory."""
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
    """The folder relative notebook paths are resolved against (``start``: where the upward search begins)."""
    env = os.environ.get(ROOT_ENV, "").strip()
    if env:
        return Path(env).expanduser().resolve()
    here = Path(start if start is not None else os.getcwd()).expanduser().resolve()
    found = _find_upwards(here)
    if found is None:
        found = _find_upwards(Path(__file__).resolve().parent)
    return found if found is not None else here


def resolve(path, *, root=None) -> Path:
    """``path`` as an absolute path: ``~`` expanded, absolute kept, relative joined to ``root`` (:func:`repo_root`)."""
    if path is None:
        raise TypeError("resolve() needs a path, got None")
    p = Path(os.fspath(path)).expanduser()
    if p.is_absolute():
        return p
    base = Path(root).expanduser().resolve() if root is not None else repo_root()
    return base / p
