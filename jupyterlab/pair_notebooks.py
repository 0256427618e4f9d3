"""Give each notebook script its hidden paired notebook (``notebooks/.NN_name.ipynb``, see jupytext.toml)
holding the ``language_info`` this environment's kernel reports, so that JupyterLab opens it clean: without
it, the kernel's ``language_info`` is added when the kernel starts and marks the notebook unsaved.  A pair
that already has that ``language_info`` (with your outputs) is left as it is.

Usage: ``python jupyterlab/pair_notebooks.py notebooks/*.py`` (``make lab`` runs it).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import jupytext
from ipykernel.ipkernel import IPythonKernel


def pair_path(script: Path) -> Path:
    return script.with_name(f".{script.stem}.ipynb")


def pair(script: Path) -> bool:
    """Write or update the pair of ``script``; whether it was written."""
    target, info = pair_path(script), dict(IPythonKernel.language_info)
    nb = jupytext.read(target if target.is_file() else script)
    if target.is_file() and nb.metadata.get("language_info") == info:
        return False
    nb.metadata["language_info"] = info
    jupytext.write(nb, target)
    st = script.stat()   # not newer than the script: jupytext then takes the inputs from the script
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return True


if __name__ == "__main__":
    written = [str(pair_path(Path(p))) for p in sys.argv[1:] if pair(Path(p))]
    if written:
        print(f"paired {len(written)} notebook(s) for JupyterLab: {', '.join(written)}")
