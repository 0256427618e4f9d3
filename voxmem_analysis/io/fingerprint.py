"""The fingerprint of a release folder: one digest of every file below it, by content.

``release_fingerprint(path)`` is ``"sha256:"`` followed by the SHA-256 of, for every file below
``path`` (symbolic links followed as the readers follow them, :func:`voxmem_analysis.io.files.walk_files`),
its path relative to ``path`` and the SHA-256 of its bytes, in sorted order.  Two folders with
the same files and bytes have the same fingerprint wherever they are; any changed, added or
removed file changes it (sizes and times play no part).  A file that cannot be read enters as
``unreadable``, so the fingerprint still exists and changes once it can be read.

The provenance record of every output (:mod:`voxmem_analysis.reproduce.provenance`) names the
release by this fingerprint, and ``reproduce`` compares it before and after a run.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from voxmem_analysis.io.engine.files import walk_files

__all__ = ["release_fingerprint", "file_digest"]

_CHUNK = 1 << 20


def file_digest(path: Path) -> str:
    """SHA-256 (hex) of the bytes of ``path``."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def release_fingerprint(path) -> str:
    """``"sha256:<hex>"`` over every file below ``path`` (a file: that file alone); see the module docstring."""
    root = Path(path)
    files = [root] if root.is_file() else walk_files(root)
    h = hashlib.sha256()
    for f in files:
        if not f.is_file():
            continue
        rel = f.name if f == root else f.relative_to(root).as_posix()
        try:
            seal = file_digest(f)
        except OSError:
            seal = "unreadable"
        h.update(f"{rel}\0{seal}\n".encode("utf-8", "surrogateescape"))
    return "sha256:" + h.hexdigest()
