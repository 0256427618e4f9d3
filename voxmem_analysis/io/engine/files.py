"""Finding and opening input files so that none disappears silently: folders walked through links (each
real folder once), UTF-8 text (BOM dropped, bare CR a line break), a cut gzip stream read to its last line."""
from __future__ import annotations

import hashlib
import os
import stat
import zlib
from pathlib import Path

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.engine.rules import fact
from voxmem_analysis.textlimits import read_regular, special_kind

__all__ = ["rel", "is_prediction_name", "is_gzip_name", "walk", "walk_files", "tree", "read_bytes", "read_text",
           "not_utf8", "user_path_problem", "resolved", "Listing", "file_digest"]

_SKIPPED_NAMES = ("readme.md", "readme.txt", "readme")

FOLDER_UNREADABLE = fact("folder_unreadable", "error", lambda r: f"cannot read folder: {r['why']}; its files are not read")
LINK_NOT_FOLLOWED = fact("link_not_followed", "warning", lambda r: "folder link not followed: it leads to a folder "
                         "already read (a loop or a second link to the same folder)")
FILE_UNREADABLE = fact("file_unreadable", "error", lambda r: f"cannot read file{r.get('how', '')}: {r['why']}")
CR_LINE_ENDINGS = fact("cr_line_endings", "warning",
                       lambda r: f"{r['n']} bare carriage return(s) (old Mac line endings) read as line breaks")
TRUNCATED_GZIP = fact("truncated_gzip", "error", lambda r: f"{r['n']} line(s) read before the gzip stream ended at "
                      f"byte {r['cut']}; the rest of the file is lost")
NOT_UTF8 = fact("not_utf8", "error", lambda r: f"file is not UTF-8 text{r['why']}")


def rel(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` with ``/`` separators (the path itself when outside)."""
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return str(path)


def is_prediction_name(name: str) -> bool:
    """True for ``*.jsonl`` and ``*.jsonl.gz`` in any letter case."""
    low = name.lower()
    return low.endswith(".jsonl") or low.endswith(".jsonl.gz")


def is_gzip_name(name: str) -> bool:
    return name.lower().endswith(".gz")


def _real(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Listing:
    """What :func:`walk` found: ``files`` (sorted by relative path; hidden names left out), ``skipped``
    (links not followed), ``folders`` and ``problems``."""

    def __init__(self):
        self.files: list[Path] = []
        self.skipped: list[Path] = []
        self.folders: list[Path] = []
        self.problems: list[Problem] = []

    def split(self, keep) -> tuple[list[Path], list[Path]]:
        """``(files keep() accepts, other files)``; README files are in neither."""
        yes, no = [], []
        for p in self.files:
            if keep(p):
                yes.append(p)
            elif p.name.lower() not in _SKIPPED_NAMES:
                no.append(p)
        return yes, no


def walk(base: Path, root: Path) -> Listing:
    """Every file below ``base``, following symbolic links (see :class:`Listing`)."""
    out = Listing()
    if not base.is_dir():
        return out
    seen = {_real(str(base))}
    out.folders.append(base)

    def onerror(exc: OSError) -> None:
        out.problems.append(FOLDER_UNREADABLE.problem(rel(Path(exc.filename or base), root), why=exc.strerror or exc))

    for top, dirs, names in os.walk(base, onerror=onerror, followlinks=True):
        keep = []
        for d in sorted(dirs):
            if d.startswith("."):
                continue
            full = os.path.join(top, d)
            real = _real(full)
            if real is None or real in seen:
                out.skipped.append(Path(full))
                out.problems.append(LINK_NOT_FOLLOWED.problem(rel(Path(full), root)))
                continue
            seen.add(real)
            keep.append(d)
            out.folders.append(Path(full))
        dirs[:] = keep
        out.files += [Path(top) / n for n in names if not n.startswith(".")]
    out.files.sort(key=lambda p: rel(p, root))
    return out


def file_digest(path: Path) -> str:
    """SHA-256 (hex) of the bytes of ``path`` (hardware-accelerated on current CPUs: about 2x BLAKE2b)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


def walk_files(root: Path) -> list[Path]:
    """Every file below ``root`` (links followed, each real folder once), sorted."""
    return walk(Path(root), Path(root)).files


def resolved(paths) -> tuple[Path, ...]:
    """Each path made absolute through its links (a link that cannot be resolved: as it is), sorted, once."""
    out = set()
    for p in paths:
        if p is None:
            continue
        try:
            out.add(Path(p).resolve())
        except (OSError, RuntimeError):
            out.add(Path(os.path.abspath(p)))
    return tuple(sorted(out))


def tree(root: Path) -> tuple[Path, ...]:
    """:func:`resolved` of ``root`` and every folder and file below it (links followed)."""
    listing = walk(Path(root), Path(root))
    return resolved([root, *listing.folders, *listing.files])


_WHAT = {"folder": "is a folder, not a file", "file": "is a file, not a folder"}


def user_path_problem(path: Path, code: str, what: str, *, folder: bool = False) -> Problem | None:
    """The problem of a path a user named as a file (``folder``: a folder) that is not one: missing, the
    other kind, or a FIFO, device or socket -- named as what it is.  None when it is usable."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        why = "does not exist" if not os.path.lexists(path) else "cannot be resolved (a broken or looping link)"
        return fact(code, "error", lambda r: f"{what} {r['p']!r} {why}").problem(p=str(path))
    if folder and stat.S_ISDIR(mode) or not folder and stat.S_ISREG(mode):
        return None
    why = _WHAT["folder" if stat.S_ISDIR(mode) else "file"] if stat.S_ISDIR(mode) or stat.S_ISREG(mode) \
        else f"is {special_kind(mode)}, not a {'folder' if folder else 'regular file'}"
    return fact(code, "error", lambda r: f"{what} {r['p']!r} {why}").problem(p=str(path))


def _gunzip(raw: bytes) -> tuple[bytes, int | None]:
    """Decompressed bytes of every gzip member, and the compressed byte where the data stopped early
    (None when the stream is complete).  Raises ``zlib.error`` for data that is not gzip."""
    out: list[bytes] = []
    pos = 0
    if not raw:
        return raw, None
    while True:
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        out.append(d.decompress(raw[pos:]))
        if not d.eof:
            out.append(d.flush())
            return b"".join(out), len(raw)
        rest = d.unused_data
        pos = len(raw) - len(rest)
        if not rest.strip(b"\x00"):
            return b"".join(out), None


def _file_bytes(path: Path, name: str) -> tuple[bytes | None, int | None, list[Problem]]:
    """The bytes of one file, gunzipped when its name says gzip, and where a gzip stream cut short
    ended (the bytes then end at the last complete line); None and the error when nothing can be read."""
    try:
        raw = read_regular(path)   # a FIFO or device named like a data file: an error, never a wait
    except OSError as exc:
        return None, None, [FILE_UNREADABLE.problem(name, why=exc.strerror or exc)]
    if not is_gzip_name(path.name):
        return raw, None, []
    try:
        raw, cut = _gunzip(raw)
    except zlib.error as exc:
        return None, None, [FILE_UNREADABLE.problem(name, why=exc, how=" (damaged or not gzip)")]
    return (raw if cut is None else raw[:raw.rfind(b"\n") + 1]), cut, []


def read_bytes(path: Path, name: str) -> tuple[bytes | None, list[Problem]]:
    """The bytes of one text file (BOM dropped, bare CR made ``\\n``, a cut gzip stream kept to its last
    complete line, not decoded) and what reading found; None when nothing can be read."""
    raw, cut, unread = _file_bytes(path, name)
    if raw is None:
        return None, unread
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    problems: list[Problem] = []
    bare = raw.count(b"\r") - raw.count(b"\r\n") if b"\r" in raw else 0
    if bare:
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        problems.append(CR_LINE_ENDINGS.problem(name, n=bare))
    if cut is not None:
        try:
            n = sum(1 for line in raw.decode("utf-8").split("\n") if line.strip())
        except UnicodeDecodeError:
            n = 0
        problems.append(TRUNCATED_GZIP.problem(name, raw.count(b"\n") + 1, n=n, cut=cut))
    return raw, problems


def not_utf8(path: Path, name: str) -> Problem:
    """The ``not_utf8`` error of a file whose bytes are not UTF-8, naming the first bad byte as Python's
    decoder does (the file is read again, as it is on disk)."""
    raw, _, _ = _file_bytes(path, name)
    try:
        (raw or b"").decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return NOT_UTF8.problem(name, why=f": {exc}")
    return NOT_UTF8.problem(name, why="")


def read_text(path: Path, name: str) -> tuple[str | None, list[Problem]]:
    """The text of one file (see :func:`read_bytes`); None when it cannot be read or is not UTF-8."""
    raw, problems = read_bytes(path, name)
    if raw is None:
        return None, problems
    try:
        return raw.decode("utf-8"), problems
    except UnicodeDecodeError:
        return None, [not_utf8(path, name)]
