"""Digest-checked pickle files: the storage format of the per-run artifact memo
(:func:`voxmem_analysis.artifacts.memoised`).  The parsed-release cache no longer uses them
(:mod:`voxmem_analysis.io.cache` stores Arrow IPC and JSON: reading it runs no code).

A file is ``magic + sha256(payload) + payload``.  :func:`read_checked` returns ``None`` for
anything absent, foreign, truncated, altered or unpicklable, so a damaged file is rebuilt and
never trusted; :func:`write_checked` writes through a temporary file and a rename, and skips
silently when the object cannot be pickled or the folder written (both stores are optimisations).
"""
from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path

__all__ = ["read_checked", "write_checked"]

_DIGEST = 32  # bytes of a SHA-256 digest


def read_checked(path: Path, magic: bytes):
    """The object stored at ``path`` under ``magic``, or ``None`` when it cannot be trusted."""
    try:
        blob = Path(path).read_bytes()
    except OSError:
        return None
    head = len(magic) + _DIGEST
    if len(blob) < head or blob[:len(magic)] != magic:
        return None
    payload = blob[head:]
    if hashlib.sha256(payload).digest() != blob[len(magic):head]:
        return None
    try:
        return pickle.loads(payload)
    except Exception:  # noqa: BLE001 - e.g. written by an incompatible version: rebuilt
        return None


def write_checked(path: Path, magic: bytes, obj) -> bool:
    """Store ``obj`` at ``path`` atomically; ``False`` (and nothing written) when that is not possible."""
    path = Path(path)
    try:
        payload = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.part")
        tmp.write_bytes(magic + hashlib.sha256(payload).digest() + payload)
        os.replace(tmp, path)
    except Exception:  # noqa: BLE001 - unpicklable objects, read-only folders: the store is an optimisation
        return False
    return True
