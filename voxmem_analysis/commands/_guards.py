"""The outputs a command names, checked before it does any work: one that cannot be written
(:func:`output_problem`), or that is, contains or lies inside a file or folder the command reads
(:func:`input_clash`); :func:`check_outputs` checks them all."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from voxmem_analysis.errors import InputError

__all__ = ["output_problem", "check_outputs", "input_clash", "command_inputs"]


def _first_existing(path: Path) -> Path:
    p = path
    while not os.path.lexists(p) and p != p.parent:
        p = p.parent
    return p


def output_problem(path, option: str, *, folder: bool = False) -> str | None:
    """Why ``path`` cannot be written (as a file, or a folder with ``folder=True``), or ``None``."""
    p = Path(os.path.abspath(os.path.expanduser(str(path))))
    shown = f"{option} {str(path)!r}"
    if folder and p.exists() and not p.is_dir():
        return f"{shown} is a regular file, not a folder; give a folder path (it is created if missing)"
    if not folder and p.is_dir():
        return f"{shown} is a folder; give a file name"
    base = _first_existing(p if folder else p.parent)
    if not base.is_dir():
        return (f"{shown}: {str(base)!r} is a regular file, so no folder can be created under it; "
                f"choose a path in a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        return (f"{shown}: cannot write in the folder {str(base)!r} (permission denied); "
                f"choose a location you can write to")
    if not folder and p.exists() and not os.access(p, os.W_OK):
        return f"{shown} exists and is not writable (permission denied); choose another file"
    return _probe(p if (folder and p.is_dir()) else p.parent, shown)


def _probe(parent: Path, shown: str) -> str | None:
    """Create ``parent`` (the folders above the output, written anyway) and a scratch folder in
    it, removed at once: the only test that also holds for root and special file systems."""
    try:
        parent.mkdir(parents=True, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(prefix=".voxmem-probe-", dir=parent))
    except OSError as exc:
        return (f"{shown}: cannot write in the folder {str(parent)!r} ({exc.strerror or exc}); "
                f"choose a location you can write to")
    return None


def _resolved(path) -> Path:
    try:
        return Path(os.path.expanduser(str(path))).resolve()
    except (OSError, RuntimeError, ValueError):   # a symlink loop, a NUL: compare the path as written
        return Path(os.path.abspath(os.path.expanduser(str(path))))


def input_clash(path, option: str, inputs) -> str | None:
    """Why ``path`` (an output) must not be written: it is, contains or lies inside one of
    ``inputs`` (files or folders the command reads); ``None`` when it touches none of them."""
    out = _resolved(path)
    for given in filter(None, inputs):
        src = _resolved(given)
        why = "is" if out == src else "lies inside" if src in out.parents else "contains" if out in src.parents else ""
        if why:
            return (f"{option} {str(path)!r} {why} the input {'folder' if src.is_dir() else 'file'} {str(given)!r}, "
                    f"which this command reads; an output never replaces an input: choose a path outside it")
    return None


def command_inputs(*, data=None, extra=()) -> list[str]:
    """Every input of ``reproduce`` or ``supplement``, resolved through links: the release folder ``data`` and
    each file in it, and ``extra`` (files or folders)."""
    found = [_resolved(p) for p in [data, *extra] if p]
    if data:
        seen: set[Path] = set()
        for dirpath, dirnames, filenames in os.walk(os.path.expanduser(str(data)), followlinks=True):
            real = _resolved(dirpath)
            if real in seen:   # a link back up the tree: walked once
                dirnames[:] = []
            else:
                seen.add(real)
                found += [_resolved(Path(dirpath) / f) for f in filenames]
    return [str(p) for p in found]


def check_outputs(files: dict | None = None, folders: dict | None = None, *, inputs=()) -> None:
    """An :class:`~voxmem_analysis.errors.InputError` (exit 2) naming every unusable output, before anything
    is written: ``files`` / ``folders`` map an option name (``"--out"``) to its value (``None``: not given);
    ``inputs``: every file and folder the command reads: an output that is, contains or lies inside one is
    refused."""
    inputs = list(inputs)
    outputs = [(k, v, False) for k, v in (files or {}).items() if v]
    outputs += [(k, v, True) for k, v in (folders or {}).items() if v]
    found = [output_problem(v, k, folder=folder) or input_clash(v, k, inputs) for k, v, folder in outputs]
    found = [m for m in found if m]
    if found:
        raise InputError("; ".join(found), outputs[0][0].lstrip("-"))
