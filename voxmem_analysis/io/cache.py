"""The parsed-release cache: a loaded :class:`~voxmem_analysis.io.release.Release` kept on disk,
reused while none of the release's files changed.

Where
    ``$VOXMEM_RELEASE_CACHE`` when set (the reproduction runner points it at a folder of its
    own output for one run), else ``$VOXMEM_CACHE_DIR``, else ``$XDG_CACHE_HOME/voxmem-analysis``,
    else ``~/.cache/voxmem-analysis``.  Never inside the release, so read-only releases work;
    a cache folder that cannot be written is simply not used.
Key
    SHA-256 of the package version, the scoring rules, the release's resolved
    path and, for every file below it, its relative path, size, ``mtime_ns`` and SHA-256 hash of
    its bytes.  A changed, added or removed file (even with the same size and time) is a new key.
    Strict and lenient loads share an entry: both read the same release, and a strict load of
    an entry holding errors raises, as a fresh strict load does.
Entry
    ``release-<key>.pickle``: a 16-byte magic, the SHA-256 digest of the payload, then the
    payload (a pickled ``Release``; its polars frames pickle as Arrow IPC).  The digest is
    checked *before* the payload is unpickled: a truncated or damaged entry is ignored and
    rewritten, never trusted.  Entries are written to a temporary file and renamed, so a
    concurrent reader sees the old state or the whole entry.
Clearing
    ``voxmem-analysis cache clear`` (or delete the folder); ``--no-cache`` on any command that
    loads a release skips the cache.
"""
from __future__ import annotations

import hashlib
import os
from pathlib import Path

from voxmem_analysis.store import read_checked, write_checked

__all__ = ["CACHE_ENV", "CACHE_DIR_ENV", "cache_dir", "release_key", "read_entry", "write_entry", "clear", "entries"]

#: Folder of the cache for this process (set by the reproduction runner for one run).
CACHE_ENV = "VOXMEM_RELEASE_CACHE"
#: The user's cache folder, when not the default one.
CACHE_DIR_ENV = "VOXMEM_CACHE_DIR"
_MAGIC = b"voxmem-cache-v1\n"
_HASH_CHUNK = 1 << 20


def cache_dir() -> Path:
    """The folder the cache uses in this process (see the module docstring)."""
    for env in (CACHE_ENV, CACHE_DIR_ENV):
        if os.environ.get(env):
            return Path(os.environ[env])
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "voxmem-analysis"


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()   # hardware-accelerated on current CPUs: about 2x BLAKE2b here (README, Performance)
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def release_key(root: Path, parts: tuple) -> str:
    """Key of the release below ``root`` read with ``parts`` (version, rules, strictness...)."""
    h = hashlib.sha256(repr((tuple(parts), str(root.resolve()))).encode())
    from voxmem_analysis.io.files import walk_files  # symlinked folders followed, as load_release reads them

    for p in walk_files(root):
        if not p.is_file():
            continue
        try:
            st = p.stat()
            seal = f"{st.st_size}|{st.st_mtime_ns}|{_file_digest(p)}"
        except OSError:  # unreadable: load_release reports it; the key changes once it can be read
            seal = "unreadable"
        h.update(f"{p.relative_to(root).as_posix()}|{seal}\n".encode())
    return h.hexdigest()[:32]


def _entry_path(folder: Path, key: str) -> Path:
    return folder / f"release-{key}.pickle"


def read_entry(folder: Path, key: str):
    """The cached object for ``key``, or None when absent, damaged or unreadable."""
    return read_checked(_entry_path(folder, key), _MAGIC)


def write_entry(folder: Path, key: str, obj) -> None:
    """Store ``obj`` for ``key`` (silently skipped when the folder cannot be written)."""
    write_checked(_entry_path(folder, key), _MAGIC, obj)


def entries(folder: Path | None = None) -> list[Path]:
    folder = cache_dir() if folder is None else Path(folder)
    return sorted(folder.glob("release-*.pickle")) if folder.is_dir() else []


def clear(folder: Path | None = None) -> tuple[int, int]:
    """Delete every cache entry (and left-over partial writes): ``(files removed, bytes freed)``."""
    folder = cache_dir() if folder is None else Path(folder)
    n = size = 0
    if not folder.is_dir():
        return 0, 0
    for p in list(folder.glob("release-*.pickle")) + list(folder.glob("release-*.pickle.*.part")):
        try:
            size += p.stat().st_size
            p.unlink()
            n += 1
        except OSError:
            pass
    return n, size
