"""One ``reproduce`` run per output folder, built beside it and swapped in when complete.

For ``OUT`` a run keeps beside it the lock ``.OUT.voxmem-reproduce.lock`` (a second run refuses; a stale lock is
removed, and said) and the staging folder ``.OUT.voxmem-staging-<pid>/``, renamed to ``OUT`` when complete.  An
interrupted run (a signal: :class:`StopSignals`, a failed notebook, a crash) removes only its staging folder; a
later run cleans what a killed one left.  Files no run wrote are never deleted (inside the runner's folders they
move to ``OUT/earlier-files/``), and are said.  A folder with folders of its own but no earlier run is refused.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from voxmem_analysis.errors import Interrupted, OutputFolderError, OutputLockedError

__all__ = ["RUNNER_FILES", "StagedOutput", "StopSignals", "lock_path", "acquire_lock", "release_lock", "read_json"]

LOCK_SUFFIX = ".voxmem-reproduce.lock"
_STAGING_TAG = ".voxmem-staging-"
_PREVIOUS_TAG = ".voxmem-previous-"
#: Files and folders of ``OUT`` that belong to the runner; others found in the folders go to KEPT_FOLDER.
RUNNER_FILES = ("run.json", "provenance.json", "reproduction.csv", "audit.csv")
RUNNER_FOLDERS = ("figures", "tables", "findings", "notebooks", "report", ".staging")
KEPT_FOLDER = "earlier-files"
_MAX_FOREIGN_FILES = 10     # files (a README ...) of a folder without run.json accepted as --out
_FRESH_LOCK_SECONDS = 60    # an unreadable lock file younger than this is being written: in use


# ----------------------------------------------------------------------------- the lock
def lock_path(out: Path) -> Path:
    return Path(out).parent / f".{Path(out).name}{LOCK_SUFFIX}"


def read_json(path: Path) -> dict:
    """The JSON object in ``path`` (a lock, a run.json); ``{}`` when there is none or it is unreadable."""
    try:
        info = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return info if isinstance(info, dict) else {}


def _pid_alive(pid) -> bool:
    import psutil

    return isinstance(pid, int) and psutil.pid_exists(pid)


def _lock_holder(info: dict, path: Path) -> str:
    return (f"pid {info.get('pid')} on host {info.get('host')}, started {info.get('started')}; "
            f"lock file {str(path)!r}")


def acquire_lock(out: Path, notes: list[str]) -> Path:
    """Create the lock of ``out`` or raise :class:`OutputLockedError`; a stale lock is replaced (noted)."""
    path = lock_path(out)
    payload = json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                          "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                          "command": " ".join(sys.argv)}) + "\n"
    for _ in range(3):
        try:
            fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        except FileExistsError:
            _check_existing_lock(path, out, notes)
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(payload)
        return path
    raise OutputLockedError(f"--out {str(out)!r}: could not take the lock {str(path)!r} (another run keeps "
                            f"taking it); try again")


def _check_existing_lock(path: Path, out: Path, notes: list[str]) -> None:
    """Remove ``path`` if stale (noted); raise :class:`OutputLockedError` if a live run holds it."""
    info = read_json(path)
    if not info:
        try:
            age = time.time() - path.stat().st_mtime
        except FileNotFoundError:
            return  # released meanwhile: try again
        if age < _FRESH_LOCK_SECONDS:
            raise OutputLockedError(f"--out {str(out)!r} is being written by another `voxmem-analysis reproduce` "
                                    f"(lock file {str(path)!r}, just created); wait for it to finish, or choose "
                                    f"another --out")
        notes.append(f"removed an unreadable lock file {str(path)!r} ({age:.0f} s old)")
    elif info.get("host") == socket.gethostname() and not _pid_alive(info.get("pid")):
        notes.append(f"removed a stale lock: the run that held --out {str(out)!r} ({_lock_holder(info, path)}) "
                     f"has ended without releasing it")
    else:
        other_host = info.get("host") != socket.gethostname()
        raise OutputLockedError(
            f"--out {str(out)!r} is being written by another `voxmem-analysis reproduce` ({_lock_holder(info, path)}); "
            f"wait for it to finish, or choose another --out"
            + ("; if that run is no longer active (its machine restarted), delete the lock file" if other_host else ""))
    path.unlink(missing_ok=True)


def release_lock(path: Path | None) -> None:
    """Remove the lock if this process holds it."""
    info = read_json(path) if path is not None else {}
    if info.get("pid") == os.getpid() and info.get("host") == socket.gethostname():
        path.unlink(missing_ok=True)


# ----------------------------------------------------------------------------- what belongs to a run
def _attributed(previous: dict) -> set[str]:
    """Files (relative to OUT) a run's run.json says it wrote."""
    own: set[str] = set()
    for nb in previous.get("notebooks", []) + previous.get("earlier", []):
        own.update(str(o) for o in nb.get("outputs") or [])
        if nb.get("executed"):
            own.add(str(nb["executed"]))
            own.add(str(Path(nb["executed"]).with_suffix(".log").as_posix()))
    return own


_EXECUTED = re.compile(r"^notebooks/\d{2}_[A-Za-z0-9_]+\.(ipynb|log)$")


def _is_runner_file(rel: str, attributed: set[str]) -> bool:
    return (rel in attributed or rel in RUNNER_FILES or rel == "report/index.html" or rel.startswith(".staging/")
            or _EXECUTED.match(rel) is not None)


def _walk_files(root: Path) -> list[str]:
    """Every file (and symlink) below ``root``, relative, sorted; symlinked folders are not entered."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for d in list(dirnames):
            if (base / d).is_symlink():
                dirnames.remove(d)
                filenames.append(d)
        found += [(base / f).relative_to(root).as_posix() for f in filenames]
    return sorted(found)


def foreign_files(folder: Path, previous: dict) -> list[tuple[str, str]]:
    """``(relative path, destination)`` of the files of a previous OUT no run wrote: under :data:`KEPT_FOLDER`
    inside the runner's folders, the same path elsewhere."""
    own = _attributed(previous)
    out = []
    for rel in _walk_files(folder):
        if _is_runner_file(rel, own):
            continue
        top = rel.split("/", 1)[0]
        out.append((rel, f"{KEPT_FOLDER}/{rel}" if top in RUNNER_FOLDERS else rel))
    return out


def _free(dest: Path) -> Path:
    k = 1
    cand = dest
    while os.path.lexists(cand):
        cand = dest.with_name(f"{dest.stem}.{k}{dest.suffix}")
        k += 1
    return cand


def carry_over(previous_dir: Path, new_out: Path, previous: dict) -> list[str]:
    """Move the foreign files of ``previous_dir`` into ``new_out``; one note per kind of move."""
    moved_in_place, moved_aside = [], []
    for rel, dest in foreign_files(previous_dir, previous):
        if dest == rel and os.path.lexists(new_out / rel):  # the new run wrote that path: keep both
            dest = f"{KEPT_FOLDER}/{rel}"
        target = _free(new_out / dest)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(previous_dir / rel, target)
        shown = target.relative_to(new_out).as_posix()
        (moved_in_place if shown == rel else moved_aside).append(rel if shown == rel else f"{rel} -> {shown}")
    notes = []
    # a README.md at the top of the folder (the repository's figures/README.md) is carried over silently
    moved_in_place = [r for r in moved_in_place if r != "README.md"]
    if moved_in_place:
        notes.append(f"kept {len(moved_in_place)} file(s) in the output folder that reproduce did not write: "
                     + _some(moved_in_place))
    if moved_aside:
        notes.append(f"moved {len(moved_aside)} file(s) that no reproduce run wrote out of the report's folders "
                     f"(stale outputs of an older run, or your own; not deleted, not in the report): "
                     + _some(moved_aside))
    return notes


def _some(items: list[str], n: int = 5) -> str:
    return ", ".join(items[:n]) + (f" ... and {len(items) - n} more" if len(items) > n else "")

# ----------------------------------------------------------------------------- signals
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """While entered (main thread), the first SIGINT, SIGTERM or SIGHUP raises
    :class:`~voxmem_analysis.errors.Interrupted` after the :meth:`held` block it arrives in; later ones are ignored
    (the clean-up runs to its end).  The previous handlers are restored on exit."""

    def __init__(self):
        self.received, self._held, self._raised, self._previous = None, 0, False, {}

    def __enter__(self) -> "StopSignals":
        if threading.current_thread() is threading.main_thread():
            self._previous = {s: signal.signal(s, self._handle) for s in STOP_SIGNALS}
        return self

    def __exit__(self, *exc) -> None:
        for s, h in self._previous.items():
            signal.signal(s, h)

    def _handle(self, signum, frame) -> None:  # noqa: ARG002 - signal handler signature
        if self.received is None:
            self.received = signum
            self._raise()

    def _raise(self) -> None:
        if self.received is not None and not self._held and not self._raised:
            self._raised = True
            raise Interrupted(self.received)

    @contextmanager
    def held(self):
        """A block no signal cuts short (the swap of the output folder)."""
        self._held += 1
        try:
            yield
        finally:
            self._held -= 1
        self._raise()


# ----------------------------------------------------------------------------- staging and swap
def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


class StagedOutput:
    """``with StagedOutput(out, data=..., only=names) as st:`` takes the lock, cleans up after an interrupted run,
    checks the folder (:class:`OutputFolderError`) and makes ``st.staging``, seeded with the previous run's
    :data:`RUNNER_FILES` (with ``only``: and the other notebooks' outputs); :meth:`commit` swaps it in, leaving the
    block otherwise removes it; :attr:`notes` says what happened."""

    def __init__(self, out, *, data, only: set[str] | None = None):
        self.signals = StopSignals()
        self.out = Path(out).resolve()
        self.data = str(Path(data).resolve())
        self.only = set(only) if only else None
        self.staging = self.out.parent / f".{self.out.name}{_STAGING_TAG}{os.getpid()}"
        self.notes: list[str] = []
        self.previous: dict = {}
        self.committed = False
        self.abandoned = False
        self._lock: Path | None = None

    # -- entering
    def __enter__(self) -> "StagedOutput":
        self.signals.__enter__()
        try:
            with self.signals.held():
                self._lock = self._take_lock()
            self._recover()
            self.previous = read_json(self.out / "run.json")
            self._check()
            self.staging.mkdir()
            self._seed()
        except BaseException:
            self._discard()
            release_lock(self._lock)
            self.signals.__exit__()
            raise
        return self

    def _take_lock(self) -> Path:
        try:
            self.out.parent.mkdir(parents=True, exist_ok=True)
            return acquire_lock(self.out, self.notes)
        except OSError as exc:
            raise OutputFolderError(f"--out {str(self.out)!r}: cannot create the lock beside it in "
                                    f"{str(self.out.parent)!r} ({exc.strerror or exc}); reproduce builds the new "
                                    f"output there and swaps it in when complete: choose an --out whose parent "
                                    f"folder you can write to") from None

    def _recover(self) -> None:
        """Clean up after a run that was killed: restore a cut-short swap, drop staging folders."""
        name = self.out.name
        for d in sorted(self.out.parent.glob(f".{name}{_PREVIOUS_TAG}*")):
            if not self.out.exists():
                os.rename(d, self.out)
                self.notes.append(f"restored the previous output from {d.name} (a swap was cut short)")
            else:
                self.notes += carry_over(d, self.out, read_json(d / "run.json"))
                shutil.rmtree(d, ignore_errors=True)
        for d in sorted(self.out.parent.glob(f".{name}{_STAGING_TAG}*")):
            shutil.rmtree(d, ignore_errors=True)
            self.notes.append(f"removed {d.name}, the unfinished staging folder of an interrupted run")

    def _check(self) -> None:
        if self.out.exists() and not self.out.is_dir():
            raise OutputFolderError(f"--out {str(self.out)!r} is a regular file, not a folder")
        visible = [p for p in self.out.iterdir() if not p.name.startswith(".")] if self.out.is_dir() else []
        own = [p.name for p in visible if p.is_dir() and p.name not in RUNNER_FOLDERS]
        if not self.previous and (own or len(visible) > _MAX_FOREIGN_FILES):
            raise OutputFolderError( f"--out {str(self.out)!r} holds no earlier reproduce run (no run.json) but "
                + (f"folders of its own ({_some(sorted(own), 3)})" if own else f"{len(visible)} files")
                + "; reproduce fills an output folder of its own: choose a new or empty folder")
        if self.only and self.previous and self.previous.get("data_dir") not in (None, self.data):
            raise OutputFolderError(
                f"--out {str(self.out)!r} holds a run on {self.previous.get('data_dir')!r}; --only with --data "
                f"{self.data!r} would mix two releases in one report.  Rerun without --only (every notebook), "
                f"or choose another --out")

    def _seed(self) -> None:
        """Hard-link (or copy) into the staging folder what the runner reads of the previous run."""
        prev = self.previous
        if not prev:
            return
        for f in RUNNER_FILES:
            if (self.out / f).is_file():
                _link_or_copy(self.out / f, self.staging / f)
        if not self.only:
            return
        for nb in prev.get("notebooks", []) + prev.get("earlier", []):
            if nb.get("name") in self.only:
                continue
            rels = list(nb.get("outputs") or []) + ([nb["executed"]] if nb.get("executed") else [])
            rels += [str(Path(nb["executed"]).with_suffix(".log").as_posix())] if nb.get("executed") else []
            for rel in rels:
                src = self.out / rel
                if src.is_file() and self.out in src.resolve().parents:
                    _link_or_copy(src, self.staging / rel)

    # -- leaving
    def commit(self) -> None:
        """Swap the staging folder in as ``out`` (no signal cuts it short), carrying over foreign files."""
        with self.signals.held():
            previous_dir = None
            if self.out.exists():
                previous_dir = self.out.parent / f".{self.out.name}{_PREVIOUS_TAG}{os.getpid()}"
                os.rename(self.out, previous_dir)
            try:
                os.rename(self.staging, self.out)
            except OSError:
                if previous_dir is not None:
                    os.rename(previous_dir, self.out)
                raise
            self.committed = True
            if previous_dir is not None:
                self.notes += carry_over(previous_dir, self.out, self.previous)
                shutil.rmtree(previous_dir, ignore_errors=True)

    def abandon(self, why: str) -> None:
        """Give the run up (``why``: e.g. a failed notebook): staging removed, ``out`` left as it was."""
        self._discard()
        kept = "the previous complete output is untouched" if self.out.exists() else "nothing was written"
        self.notes.append(f"stopped before the output was complete ({why}): {str(self.out)!r} left as it was "
                          f"({kept}); the unfinished run was removed")
        self.abandoned = True

    def _discard(self) -> None:
        if not self.committed:
            shutil.rmtree(self.staging, ignore_errors=True)

    def __exit__(self, exc_type, exc, tb) -> None:
        with self.signals.held():   # a signal now is raised once the folder is in order
            try:
                if not self.committed and not self.abandoned:
                    self.abandon("the run ended without committing its output" if exc_type is None
                                 else getattr(exc, "what", "Ctrl-C") if isinstance(exc, KeyboardInterrupt)
                                 else exc_type.__name__)
            finally:
                release_lock(self._lock)
                self.signals.__exit__()
