"""The parsed-release cache: a loaded release kept on disk (Arrow IPC frames and JSON, no pickle) in
``$VOXMEM_CACHE_DIR``, else ``$XDG_CACHE_HOME/voxmem-analysis``, else ``~/.cache/voxmem-analysis`` (0700;
one owned by another user or writable by others is refused).  An entry is served only while none of the
release's files changed and every file of the entry matches its digest; the least recently used go first
over the size limit."""
from __future__ import annotations

import errno
import hashlib
import json
import mmap
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from voxmem_analysis import __version__
from voxmem_analysis.errors import Problem
from voxmem_analysis.io.schema import COLUMN_NAMES

__all__ = ["CACHE_DIR_ENV", "DEFAULT_LIMIT", "FORMAT", "VERIFY", "Entry", "cache_dir", "refusal", "usable_dir",
           "release_key", "read_release", "write_release", "entries", "evict", "clear", "limit", "set_limit", "skipped",
           "parse_size", "format_size"]

#: The user's cache folder, when not the default one.
CACHE_DIR_ENV = "VOXMEM_CACHE_DIR"
#: The size limit of the cache when ``voxmem-analysis cache --limit`` did not set another.
DEFAULT_LIMIT = 2 * 2**30
#: Written into every entry and its key: another format is never read.
FORMAT = "voxmem-release-cache/3"
#: Check every file of an entry against its digest before serving it (False only to measure the cost).
VERIFY = True

_MANIFEST, _SEAL, _PROBLEMS, _SETTINGS, _SKIPPED = "entry.json", "entry.sha256", "problems.json", "settings.json", "skipped.json"
_PREFIX = "release-"
_TEMP_PREFIXES = (".tmp-", ".trash-")
_MAX_JSON = 16 * 2**20           # bytes of entry.json / problems.json read at most
_STALE_SECONDS = 3600            # a temporary folder this old was left by a process that died
_KEY = re.compile(r"^[0-9a-f]{32}$")
# how each field of the release class is stored, by its annotation (an unknown one: the release is not cached)
_KINDS = {"Path": "path", "pl.DataFrame": "frame", "pl.DataFrame | None": "optional_frame", "dict": "json_object",
          "list[Problem]": "problems", "ScoringRules": "rules"}
_WARNED: set[tuple[str, str]] = set()


class _Damaged(Exception):
    """A file of an entry whose bytes are not those written (its digest differs)."""


def cache_dir() -> Path:
    """The cache folder of this process; it may not exist yet."""
    if os.environ.get(CACHE_DIR_ENV):
        return Path(os.environ[CACHE_DIR_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"   # XDG: a relative value is ignored
    return base / "voxmem-analysis"


def refusal(folder: Path) -> str | None:
    """Why ``folder`` must not be used as a cache (``None``: it may, or it does not exist)."""
    try:
        st = os.stat(folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if not stat.S_ISDIR(st.st_mode):
        return "is not a folder"
    uid = os.geteuid() if hasattr(os, "geteuid") else st.st_uid
    if st.st_uid != uid:
        return f"is owned by another user (uid {st.st_uid}, you are {uid})"
    if st.st_mode & 0o022:
        who = "group and others" if st.st_mode & 0o022 == 0o022 else "group" if st.st_mode & 0o020 else "others"
        return f"can be written by {who} (mode {stat.S_IMODE(st.st_mode):o}; `chmod 700` it to use it)"
    return None


def usable_dir(*, create: bool) -> Path | None:
    """The cache folder when it may be used (``create``: made, 0700, when missing), else None, said once."""
    folder = cache_dir()
    why = None
    if create and not folder.exists():
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as exc:
            why = f"cannot be created ({exc.strerror or exc})"
    why = why or refusal(folder)
    if why is not None and (str(folder), why) not in _WARNED:
        _WARNED.add((str(folder), why))
        print(f"warning: parsed-release cache not used: {folder} {why}; running without cache", file=sys.stderr)
    return folder if why is None and folder.is_dir() else None


def _open_regular(path: Path) -> int:
    """A read-only descriptor of ``path`` when it is a regular file (never a link, pipe or device)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def _read_bytes(path: Path, cap: int = _MAX_JSON) -> bytes | None:
    """The bytes of a regular file of at most ``cap`` bytes, else None."""
    try:
        fd = _open_regular(path)
    except OSError:
        return None
    try:
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(cap + 1)
        return raw if len(raw) <= cap else None
    except OSError:
        return None
    finally:
        os.close(fd)


def _read_json(path: Path):
    try:
        return json.loads(_read_bytes(path) or b"null")
    except (ValueError, RecursionError):
        return None


def _write_json(path: Path, value) -> None:
    """Write ``value`` to ``path`` whole (temporary file, then rename)."""
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        tmp.write_text(json.dumps(value, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def parse_size(text: str) -> int:
    """Bytes in a size such as ``5GiB``, ``500MB``, ``2G`` (K, M, G, T alone are binary) or ``1073741824``."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?[bB])?\s*", str(text))
    if not m or ((m.group(3) or "").lower() == "ib" and not m.group(2)):
        raise ValueError(f"not a size: {text!r} (give bytes, or a number with KiB, MiB, GiB, TiB, kB, MB, GB or TB)")
    prefix, suffix = m.group(2).upper(), (m.group(3) or "").lower()
    return int(float(m.group(1)) * (1000 if suffix == "b" and prefix else 1024) ** (" KMGT".index(prefix) if prefix else 0))


def format_size(n: int) -> str:
    """``2.0 GiB``, ``611.0 MiB``, ``12 B``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def limit(folder: Path | None = None) -> tuple[int, str]:
    """``(limit in bytes, where it comes from)``: ``settings.json`` of the folder, else the default."""
    folder = cache_dir() if folder is None else Path(folder)
    settings = _read_json(folder / _SETTINGS)
    value = settings.get("limit_bytes") if isinstance(settings, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value, f"set in {folder / _SETTINGS}"
    return DEFAULT_LIMIT, "default"


def set_limit(folder: Path, n_bytes: int | None) -> None:
    """Store the size limit of the cache in ``folder`` (None: the default); the note of a skipped release goes."""
    settings = _read_json(folder / _SETTINGS)
    settings = settings if isinstance(settings, dict) else {}
    settings.pop("limit_bytes", None)
    _write_json(folder / _SETTINGS, settings if n_bytes is None else {**settings, "limit_bytes": int(n_bytes)})
    _remove(folder / _SKIPPED)


def skipped(folder: Path | None = None) -> dict | None:
    """The last release left out as larger than the limit (``release``, ``bytes``, ``when``, ``limit``), if so."""
    folder = cache_dir() if folder is None else Path(folder)
    note = _read_json(folder / _SKIPPED)
    if not (isinstance(note, dict) and isinstance(note.get("release"), str) and isinstance(note.get("bytes"), int)
            and isinstance(note.get("when"), (int, float))):
        return None
    lim = limit(folder)[0]
    return {**note, "limit": lim} if note["bytes"] > lim else None


def _note_skipped(folder: Path, release_path, n_bytes: int) -> None:
    try:
        _write_json(folder / _SKIPPED, {"release": str(Path(release_path).resolve()), "bytes": int(n_bytes),
                                        "when": time.time()})
    except OSError:
        pass


@dataclass(frozen=True)
class Entry:
    """One entry of the cache folder (``last_used``: seconds since the epoch; ``release`` None: unreadable)."""

    path: Path
    key: str
    bytes: int
    last_used: float
    release: str | None


def _entry_bytes(path: Path) -> int:
    """Bytes of the regular files in an entry folder (links count as nothing)."""
    try:
        with os.scandir(path) as it:
            return sum(e.stat(follow_symlinks=False).st_size for e in it if e.is_file(follow_symlinks=False))
    except OSError:
        return 0


def entries(folder: Path | None = None) -> list[Entry]:
    """The entries in the cache folder, least recently used first."""
    try:
        listing = list(os.scandir(cache_dir() if folder is None else Path(folder)))
    except OSError:
        return []
    out = []
    for e in (e for e in listing if e.name.startswith(_PREFIX)):
        path, is_dir = Path(e.path), e.is_dir(follow_symlinks=False)
        try:
            used = os.lstat(path / _MANIFEST).st_mtime if is_dir else e.stat(follow_symlinks=False).st_mtime
        except OSError:
            used = 0.0
        manifest = _read_json(path / _MANIFEST) if is_dir else None
        release = manifest.get("release") if isinstance(manifest, dict) else None
        out.append(Entry(path, e.name[len(_PREFIX):], _entry_bytes(path), used, release if isinstance(release, str) else None))
    return sorted(out, key=lambda x: (x.last_used, x.key))


def _remove(path: Path) -> None:
    """Delete a file or link (never followed), or a folder renamed out of sight first (no reader finds half)."""
    try:
        if not (path.is_dir() and not path.is_symlink()):
            path.unlink(missing_ok=True)
            return
        trash = path.with_name(f".trash-{path.name}-{os.getpid()}-{secrets.token_hex(4)}")
        os.rename(path, trash)
        shutil.rmtree(trash, ignore_errors=True)
    except OSError:
        pass


def _stale_temporaries(folder: Path, older_than: float) -> list[Path]:
    try:
        found = [e for e in os.scandir(folder) if e.name.startswith(_TEMP_PREFIXES)]
        return [Path(e.path) for e in found if time.time() - e.stat(follow_symlinks=False).st_mtime >= older_than]
    except OSError:
        return []


def evict(folder: Path, lim: int, keep: str | None = None) -> list[Entry]:
    """Remove (and return) the least recently used entries but ``keep`` until the cache holds at most ``lim``
    bytes, and temporary folders left by processes that died."""
    for p in _stale_temporaries(folder, _STALE_SECONDS):
        _remove(p)
    found = entries(folder)
    total = sum(e.bytes for e in found)
    removed = []
    for e in found:
        if total <= lim:
            break
        if e.key != keep:
            _remove(e.path)
            total -= e.bytes
            removed.append(e)
    return removed


def clear(folder: Path | None = None) -> tuple[int, int]:
    """Delete every entry, temporary folder and note (the settings stay): ``(entries removed, bytes freed)``."""
    folder = cache_dir() if folder is None else Path(folder)
    found = entries(folder)
    for e in found:
        _remove(e.path)
    for p in [*_stale_temporaries(folder, 0.0), folder / _SKIPPED]:
        _remove(p)
    return len(found), sum(e.bytes for e in found)


def release_key(root: Path, parts: tuple) -> str:
    """Key of the release below ``root`` read with ``parts`` (version, layout, rules)."""
    # start-up: the reader modules import polars; `voxmem-analysis cache` imports this module without them
    from voxmem_analysis.io.engine.files import file_digest, walk_files

    h = hashlib.sha256(repr((FORMAT, tuple(parts), str(root.resolve()))).encode())
    for p in walk_files(root):   # symlinked folders followed, as the reader reads them
        seal = "not-a-regular-file"   # a FIFO, device or broken link: named in the key (the reader reports it)
        if p.is_file():
            try:
                st = p.stat()
                seal = f"{st.st_size}|{st.st_mtime_ns}|{file_digest(p)}"
            except OSError:  # unreadable: the reader reports it; the key changes once it can be read
                seal = "unreadable"
        h.update(f"{p.relative_to(root).as_posix()}|{seal}\n".encode())
    return h.hexdigest()[:32]


def _layout(cls) -> list[tuple[str, str, str]]:
    """``(field, annotation, kind)`` of every field of the release class (``TypeError``: one it cannot store)."""
    out = [(f.name, str(f.type), _KINDS.get(str(f.type))) for f in fields(cls)]
    if any(kind is None for *_, kind in out):
        raise TypeError(f"{cls.__name__} has a field this cache cannot store")
    return out


def _libraries() -> dict:
    import polars as pl
    import pyarrow as pa

    return {"voxmem_analysis": __version__, "polars": pl.__version__, "pyarrow": pa.__version__}


def _schema(frame) -> list[list[str]]:
    return [[name, str(dtype)] for name, dtype in frame.schema.items()]


def write_release(key: str, release) -> bool:
    """Store ``release`` under ``key``; False when the folder is refused or not writable, or the release
    cannot be held or is larger than the size limit."""
    folder = usable_dir(create=True)
    if folder is None or not _KEY.match(key):
        return False
    lim, _ = limit(folder)
    try:
        manifest, problems, frames = _encode(key, release)
    except (TypeError, ValueError):
        return False
    estimate = sum(f.estimated_size() for f in frames.values())
    if estimate > 2 * lim:   # surely over the limit, even after _compact: not written at all
        _note_skipped(folder, release.path, estimate)
        return False
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=folder))   # mode 0700
    except OSError:
        return False
    try:
        _write_frames(tmp, frames, manifest)
        blob = json.dumps(problems).encode("utf-8")
        (tmp / _PROBLEMS).write_bytes(blob)
        text = json.dumps({**manifest, "digests": {_PROBLEMS: hashlib.sha256(blob).hexdigest()}}).encode("utf-8")
        (tmp / _MANIFEST).write_bytes(text)
        (tmp / _SEAL).write_text(hashlib.sha256(text).hexdigest() + "\n", encoding="ascii")
        size = _entry_bytes(tmp)
        if size > lim or len(text) > _MAX_JSON or len(blob) > _MAX_JSON:
            _note_skipped(folder, release.path, size)
            return False
        _sync(tmp)
        _install(tmp, folder / f"{_PREFIX}{key}")
    except Exception:  # noqa: BLE001 - a full disk, a dtype Arrow cannot hold: the cache is an optimisation
        return False
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    evict(folder, lim, keep=key)
    return True


def _encode(key: str, release) -> tuple[dict, list, dict]:
    """``(entry.json, problems.json, {field: frame})`` of ``release``."""
    import polars as pl

    layout = _layout(type(release))
    manifest = {"format": FORMAT, "key": key, "layout": [[n, a] for n, a, _ in layout], "libraries": _libraries(),
                "release": str(Path(release.path).resolve()), "values": {}, "frames": {}}
    problems, frames = [], {}
    for name, _, kind in layout:
        value = getattr(release, name)
        if kind == "optional_frame" and value is None:
            manifest["frames"][name] = None
        elif kind in ("frame", "optional_frame"):
            frames[name] = value if isinstance(value, pl.DataFrame) else pl.DataFrame(value)
        elif kind == "json_object":
            manifest["values"][name] = json.loads(json.dumps(value))
            if manifest["values"][name] != value:   # tuples, NaN: JSON would not give it back as it is
                raise ValueError(f"{name} does not survive JSON")
        elif kind == "problems":
            problems = [p.as_dict() for p in value]
        elif kind == "rules":
            manifest["rules"] = asdict(value)
    return manifest, problems, frames


def _compact(s):
    """``s`` with each distinct long text stored once when it has few (equal values and dtype, less to map)."""
    import polars as pl

    if s.dtype != pl.String or not (s.str.len_bytes() > 12).any():
        return s
    distinct = s.unique().drop_nulls()
    if distinct.len() * 4 > s.len():
        return s
    return distinct.gather(s.cast(pl.Enum(distinct)).to_physical()).alias(s.name)


def _write_frames(tmp: Path, frames: dict, manifest: dict) -> None:
    """Each frame as an uncompressed Arrow IPC file, its size, rows, schema and digest noted (``TypeError``:
    a schema that does not come back the same)."""
    import polars as pl
    import pyarrow as pa

    from voxmem_analysis.io.engine.files import file_digest  # start-up: as in release_key

    for name, frame in frames.items():
        path = tmp / f"{name}.arrow"
        frame.with_columns([_compact(frame[c]) for c in frame.columns]).write_ipc(path, compression="uncompressed")
        with pa.OSFile(str(path), "rb") as fh:   # the schema from the footer (no data read)
            back = _schema(pl.from_arrow(pa.Table.from_batches([], schema=pa.ipc.open_file(fh).schema)))
        if back != _schema(frame):
            raise TypeError(f"{name}: schema {back} read back as written {_schema(frame)}")
        manifest["frames"][name] = {"bytes": path.stat().st_size, "rows": frame.height, "schema": back,
                                    "sha256": file_digest(path)}


def _sync(folder: Path) -> None:
    """Every file of ``folder`` and the folder itself on disk (before it is renamed into place)."""
    for p in [*folder.iterdir(), folder]:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _install(tmp: Path, target: Path) -> None:
    """Rename ``tmp`` to ``target``; an entry already there is moved aside first."""
    try:
        os.rename(tmp, target)
        return
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY, errno.ENOTDIR, errno.EISDIR):
            raise
    _remove(target)
    os.rename(tmp, target)   # another writer won meanwhile: raises, and its whole entry stays


def read_release(key: str, root: Path, rules, cls):
    """The release of class ``cls`` stored under ``key`` with ``path`` ``root``, or None when there is none or
    the entry is not exactly what this code writes for ``rules`` (a damaged one is said)."""
    folder = usable_dir(create=False)
    if folder is None or not _KEY.match(key):
        return None
    entry = folder / f"{_PREFIX}{key}"
    try:
        if not stat.S_ISDIR(os.lstat(entry).st_mode):
            return None
        release = _decode(entry, key, root, rules, limit(folder)[0], cls)
    except _Damaged as exc:
        print(f"warning: parsed-release cache entry {entry.name} is damaged ({exc}); the release is read afresh "
              "and the entry rewritten", file=sys.stderr)
        return None
    except Exception:  # noqa: BLE001 - anything wrong with an entry is a miss, never trusted
        return None
    if release is not None:
        try:
            os.utime(entry / _MANIFEST, follow_symlinks=False)   # recency for the size limit
        except OSError:
            pass
    return release


def _checked(path: Path, digest) -> bytes:
    """The bytes of a file of an entry, when they are the ones its digest names."""
    raw = _read_bytes(path)
    if raw is None or (VERIFY and hashlib.sha256(raw).hexdigest() != digest):
        raise _Damaged(path.name)
    return raw


def _decode(entry: Path, key: str, root: Path, rules, lim: int, cls):
    """The release of a checked entry folder, or ``None`` (raises on anything not as written)."""
    seal = _read_bytes(entry / _SEAL, 128)
    if seal is None:   # no seal: not an entry of this format
        return None
    manifest = json.loads(_checked(entry / _MANIFEST, seal.strip().decode("ascii", "replace")))
    layout = _layout(cls)
    if (manifest.get("format"), manifest.get("key"), manifest.get("layout"), manifest.get("libraries"),
            manifest.get("rules")) != (FORMAT, key, [[n, a] for n, a, _ in layout], _libraries(), asdict(rules)):
        return None
    specs = {name: manifest["frames"][name] for name, _, kind in layout if kind in ("frame", "optional_frame")}
    if sum(s["bytes"] for s in specs.values() if s) > lim:   # never written over the limit
        return None
    with ThreadPoolExecutor(max_workers=4) as pool:   # hashing releases the GIL: the frames are checked at once
        mapped = dict(zip(specs, pool.map(lambda kv: kv[1] and _map_frame(entry / f"{kv[0]}.arrow", kv[1]),
                                          specs.items())))
    values = {}
    for name, _, kind in layout:
        if kind in ("frame", "optional_frame"):
            values[name] = mapped[name]
            if mapped[name] is None and kind == "frame":
                return None
        elif kind == "json_object":
            values[name] = manifest["values"][name]
            if not isinstance(values[name], dict):
                return None
        elif kind == "problems":
            values[name] = [Problem(**d) for d in json.loads(_checked(entry / _PROBLEMS, manifest["digests"][_PROBLEMS]))]
        else:
            values[name] = Path(root) if kind == "path" else rules
    frame = values.get("frame")
    return cls(**values) if frame is not None and tuple(frame.columns[:len(COLUMN_NAMES)]) == COLUMN_NAMES else None


def _map_frame(path: Path, spec: dict):
    """The memory-mapped frame of an Arrow IPC file whose size, digest, rows and schema are as declared."""
    import polars as pl
    import pyarrow as pa

    fd = _open_regular(path)
    try:
        if os.fstat(fd).st_size != spec["bytes"] or not spec["bytes"]:
            raise _Damaged(path.name)
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    if VERIFY and hashlib.sha256(mapped).hexdigest() != spec["sha256"]:
        raise _Damaged(path.name)
    table = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapped))).read_all()
    table.validate(full=True)
    frame = pl.from_arrow(table, rechunk=False)
    if table.num_rows != spec["rows"] or not isinstance(frame, pl.DataFrame) or _schema(frame) != spec["schema"]:
        raise ValueError(f"{path.name}: not the declared rows and schema")
    return frame
