"""The fingerprint of a release folder: SHA-256 over each file's relative path and SHA-256 (links
followed as the readers follow them; an unreadable file enters as ``unreadable``)."""
from __future__ import annotations

import hashlib
from pathlib import Path

from voxmem_analysis.io.engine.files import file_digest, walk_files

__all__ = ["release_fingerprint", "file_digest"]


def release_fingerprint(path) -> str:
    """``"sha256:<hex>"`` over every file below ``path`` (a file: that file alone)."""
    root = Path(path)
    h = hashlib.sha256()
    for f in [root] if root.is_file() else walk_files(root):
        if f.is_file():
            try:
                seal = file_digest(f)
            except OSError:
                seal = "unreadable"
            h.update(f"{f.name if f == root else f.relative_to(root).as_posix()}\0{seal}\n".encode("utf-8", "surrogateescape"))
    return "sha256:" + h.hexdigest()
