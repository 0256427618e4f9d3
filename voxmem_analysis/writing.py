"""Every file a command writes, written whole or not at all: into a temporary file beside the target, flushed,
renamed over it when complete; on failure the temporary file is removed and the target left as it was."""
from __future__ import annotations

import contextlib
import itertools
import os
from pathlib import Path
from typing import Callable

__all__ = ["atomic_write", "atomic_text", "replace_folder", "merge_folder"]

_counter = itertools.count()


def _fsync(path: Path) -> None:
    with contextlib.suppress(OSError), open(path, "rb") as fh:   # some network mounts have no fsync: renaming protects
        os.fsync(fh.fileno())


def atomic_write(path, write: Callable[[Path], object]) -> Path:
    """``write(tmp)`` into a temporary file beside ``path`` (``.NAME.<pid>.<n>.part``), renamed to ``path`` once
    complete; on failure ``path`` is untouched and an :class:`OSError` names it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{next(_counter)}.part")
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
    with contextlib.suppress(OSError):
        tmp.unlink()


def atomic_text(path, text: str, *, encoding: str = "utf-8") -> Path:
    """``text`` written to ``path`` whole or not at all (:func:`atomic_write`); newlines as given."""
    def write(tmp: Path) -> None:
        with open(tmp, "w", encoding=encoding, newline="") as fh:
            fh.write(text)
    return atomic_write(path, write)


def replace_folder(built, target) -> Path:
    """Put the complete folder ``built`` (a sibling) in place of ``target`` by renames only: the old one moved
    aside, then removed (put back if the second rename fails)."""
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
    """Move every entry of ``built`` into ``target``, each replacing its namesake whole (others stay)."""
    built, target = Path(built), Path(target)
    if not target.exists() or (target.is_dir() and not any(target.iterdir())):
        if target.exists():
            target.rmdir()
        return replace_folder(built, target)
    for entry in sorted(built.iterdir()):
        replace_folder(entry, target / entry.name)
    built.rmdir()
    return target
