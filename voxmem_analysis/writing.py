"""Every file a command writes, written whole or not at all.

:func:`atomic_write` calls ``write(tmp)`` on a temporary file beside the target (same folder, so
the rename stays on one file system), flushes it to disk and renames it over the target only when
it is complete.  If writing fails (disk full, a file-size limit, an exception of ``write``) the
temporary file is removed and the previous target, if any, is left exactly as it was; the error
names the target.  :func:`atomic_text` writes a string that way.  No heavy import: the command
line uses it before anything else is loaded.
"""
from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Callable

__all__ = ["atomic_write", "atomic_text", "temporary_name", "replace_folder", "merge_folder", "TEMP_SUFFIX"]

#: Suffix of the temporary files (``.NAME.<pid>.<n>.part``), removed on failure.
TEMP_SUFFIX = ".part"
_counter = itertools.count()


def temporary_name(path: Path) -> Path:
    """A hidden file beside ``path``, unique within this process: ``.NAME.<pid>.<n>.part``."""
    return path.with_name(f".{path.name}.{os.getpid()}.{next(_counter)}{TEMP_SUFFIX}")


def _fsync(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # a file system without fsync (some network mounts): the rename still protects
        pass
    finally:
        os.close(fd)


def atomic_write(path, write: Callable[[Path], object]) -> Path:
    """``write(tmp)`` into a temporary file beside ``path``, renamed to ``path`` once complete.

    On any failure the temporary file is removed and ``path`` is untouched; an :class:`OSError`
    is raised again naming ``path`` (``cannot write 'out.csv': File too large``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_name(path)
    try:
        write(tmp)
        _fsync(tmp)
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        if exc.filename == str(path):
            raise
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc
    except BaseException:
        _remove(tmp)
        raise
    return path


def _remove(tmp: Path) -> None:
    try:
        tmp.unlink()
    except OSError:
        pass


def atomic_text(path, text: str, *, encoding: str = "utf-8") -> Path:
    """``text`` written to ``path`` whole or not at all (:func:`atomic_write`); newlines as given."""
    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding=encoding, newline="") as fh:
            fh.write(text)
    return atomic_write(path, write)


def replace_folder(built, target) -> Path:
    """Put the complete folder ``built`` in place of ``target`` (renames only): a ``target`` that
    exists is moved aside, ``built`` renamed to it, and the old one removed; if the second rename
    fails the old ``target`` is put back.  Both must be on one file system (siblings)."""
    import shutil

    built, target = Path(built), Path(target)
    previous = None
    if os.path.lexists(target):
        previous = target.with_name(f".{target.name}.{os.getpid()}.{next(_counter)}.previous")
        os.replace(target, previous)
    try:
        os.replace(built, target)
    except BaseException:
        if previous is not None:
            os.replace(previous, target)
        raise
    if previous is not None:
        if previous.is_dir() and not previous.is_symlink():
            shutil.rmtree(previous, ignore_errors=True)
        else:
            _remove(previous)
    return target


def merge_folder(built, target) -> Path:
    """Move every entry of the complete folder ``built`` into ``target`` (each file or folder
    replaced whole by :func:`replace_folder`; entries of ``target`` not in ``built`` stay), then
    remove ``built``.  An absent or empty ``target`` is simply replaced by ``built``."""
    built, target = Path(built), Path(target)
    if not target.exists() or (target.is_dir() and not any(target.iterdir())):
        if target.exists():
            target.rmdir()
        return replace_folder(built, target)
    for entry in sorted(built.iterdir()):
        replace_folder(entry, target / entry.name)
    built.rmdir()
    return target
