"""Checks run before a command does any work: output paths, ``--n-boot``, regular expressions.

* :func:`output_problem` -- an output file or folder that cannot be written (a path under a regular
  file, a folder given as a file or the reverse, no permission, a read-only file system); the folders
  above the output are created (they would be anyway) and a scratch folder in the nearest is made and
  removed at once;
* :func:`input_clash` / :func:`check_outputs` -- an output that is, contains or lies inside a file or
  folder the command reads (links resolved): refused before anything is written; :func:`command_inputs`
  lists the inputs of ``reproduce`` and ``supplement`` (the release's files, links resolved, and the manifest's);
* :func:`n_boot_arg`, :func:`regex_arg` -- argparse ``type=`` of ``--n-boot`` and ``--rejection-pattern``.
"""
from __future__ import annotations

import argparse
import csv
import io
import os
import re
import tempfile
from pathlib import Path

from voxmem_analysis.errors import InputError, ResourceLimitError
from voxmem_analysis.textlimits import csv_field_limit, read_regular

__all__ = ["output_problem", "check_outputs", "input_clash", "release_inputs", "manifest_inputs", "command_inputs",
           "n_boot_arg", "regex_arg"]


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


def _inside(inner: Path, outer: Path) -> bool:
    return inner == outer or outer in inner.parents


def input_clash(path, option: str, inputs) -> str | None:
    """Why ``path`` (an output) must not be written: it is, contains or lies inside one of
    ``inputs`` (files or folders the command reads); ``None`` when it touches none of them."""
    out = _resolved(path)
    for given in inputs:
        if not given:
            continue
        src = _resolved(given)
        if out == src:
            why = "is"
        elif _inside(out, src):
            why = "lies inside"
        elif _inside(src, out):
            why = "contains"
        else:
            continue
        kind = "folder" if src.is_dir() else "file"
        return (f"{option} {str(path)!r} {why} the input {kind} {str(given)!r}, which this command reads; "
                f"an output never replaces an input: choose a path outside it")
    return None


def release_inputs(data) -> list[str]:
    """The inputs of a command reading the release folder ``data``: the folder (and all inside it)."""
    return [data] if data else []


def manifest_inputs(manifest, questions=None) -> list[str]:
    """The inputs of a command reading a LongMemEval ``manifest``: the manifest, the question file
    and every file the manifest lists (its ``path`` column, relative to the manifest).  A manifest
    that cannot be read here lists only itself: the reader reports why."""
    found = [p for p in (manifest, questions) if p]
    if not manifest:
        return found
    base = Path(os.path.expanduser(str(manifest))).parent

    try:   # never blocks on a FIFO; the reader says what is wrong with the file
        with csv_field_limit():
            rows = csv.reader(io.StringIO(read_regular(manifest).decode("utf-8-sig"), newline=""))
            header = [h.strip().lower() for h in next(rows, [])]
            col = header.index("path") if "path" in header else 0
            for row in rows:
                if len(row) > col and row[col].strip():
                    found.append(str(base / os.path.expanduser(row[col].strip())))
    except (OSError, UnicodeDecodeError, csv.Error, ValueError):
        pass
    return found


def command_inputs(*, data=None, manifest=None, questions=None, tasks=None, extra=()) -> list[str]:
    """Every input of a command resolved through links: the folder ``data`` and each file in it, the
    ``manifest`` and every file it lists, ``questions``, ``tasks`` and ``extra`` (files or folders)."""
    found = [_resolved(p) for p in [data, *manifest_inputs(manifest, questions), tasks, *extra] if p]
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
    ``inputs``: every file and folder the command reads (a :class:`~voxmem_analysis.io.source.Source`'s
    ``inputs``, :func:`release_inputs`): an output that is, contains or lies inside one is refused."""
    inputs = list(inputs)
    outputs = [(k, v, False) for k, v in (files or {}).items() if v]
    outputs += [(k, v, True) for k, v in (folders or {}).items() if v]
    found = [output_problem(v, k, folder=folder) or input_clash(v, k, inputs) for k, v, folder in outputs]
    found = [m for m in found if m]
    if found:
        raise InputError("; ".join(found), outputs[0][0].lstrip("-"))


def n_boot_arg(text: str) -> int:
    """argparse ``type=`` of ``--n-boot``: a whole number from 1 to the maximum (see stats.resources)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number of resamples, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    # start-up: the package voxmem_analysis.stats imports pandas; argument parsing must not
    from voxmem_analysis.stats.resources import check_n_boot

    try:
        check_n_boot(value, option="--n-boot")
    except ResourceLimitError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def regex_arg(text: str) -> str:
    """argparse ``type=`` of a regular-expression option: the text, if it compiles."""
    try:
        re.compile(text)
    except re.error as exc:
        raise argparse.ArgumentTypeError(f"not a valid regular expression ({exc}): {text!r}; "
                                         "escape special characters such as ( [ + with a backslash") from None
    return text
