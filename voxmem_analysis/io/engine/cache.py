"""The parsed-release cache: a loaded release kept on disk, reused while none of its files changed, every
entry checked against the digests written with it before it is served.  No pickle: reading an entry
never runs code.

Where: ``$VOXMEM_CACHE_DIR``, else ``$XDG_CACHE_HOME/voxmem-analysis``, else ``~/.cache/voxmem-analysis``;
created private (0700); a folder owned by another user or writable by others is refused (one line on
stderr).  Key: SHA-256 of the format, version, the release class's layout, the scoring rules, the
release's resolved path and every file below it (path, size, mtime and SHA-256 of its bytes).  Entry:
``release-<key>/`` with ``entry.json`` (layout, versions, rules, meta, stats, each frame's size, rows,
schema and SHA-256), ``problems.json``, one uncompressed Arrow IPC file per frame (memory-mapped, fully
validated) and ``entry.sha256`` (the digest of ``entry.json``).  A file whose bytes do not match its
digest makes the entry a miss (one line on stderr) and it is rewritten.  Size limit: :data:`DEFAULT_LIMIT`
or ``cache --limit``; least recently used entries go first.  Writes go to a temporary folder renamed
into place.
"""
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
from dataclasses import dataclass, fields
from pathlib import Path

import polars as pl

from voxmem_analysis import __version__
from voxmem_analysis.errors import Problem
from voxmem_analysis.io.engine.files import walk_files
from voxmem_analysis.io.schema import COLUMN_NAMES

__all__ = ["CACHE_DIR_ENV", "DEFAULT_LIMIT", "FORMAT", "Entry", "cache_dir", "refusal", "usable_dir", "release_key",
           "read_release", "write_release", "entries", "evict", "clear", "limit", "set_limit", "skipped",
           "parse_size", "format_size", "VERIFY"]

#: The user's cache folder, when not the default one.
CACHE_DIR_ENV = "VOXMEM_CACHE_DIR"
#: The size limit of the cache when ``voxmem-analysis cache --limit`` did not set another.
DEFAULT_LIMIT = 2 * 2**30
#: Written into every entry and its key: another format is never read.
FORMAT = "voxmem-release-cache/3"
#: Check every file of an entry against its digest before serving it (False only to measure the cost).
VERIFY = True

_MANIFEST = "entry.json"
_SEAL = "entry.sha256"
_PROBLEMS = "problems.json"
_SETTINGS = "settings.json"
_SKIPPED = "skipped.json"
_PREFIX = "release-"
_TEMP_PREFIXES = (".tmp-", ".trash-")
_MAX_MANIFEST = 16 * 2**20      # bytes of entry.json / problems.json read at most
_MAX_SMALL_JSON = 64 * 2**10     # settings.json, skipped.json
_STALE_SECONDS = 3600            # a temporary folder this old was left by a process that died
_HASH_CHUNK = 1 << 20
_KEY = re.compile(r"^[0-9a-f]{32}$")
_HEX = re.compile(r"^[0-9a-f]{64}$")
# how each field of the release class is stored, by its annotation (an unknown one: the release is not cached)
_KINDS = {"Path": "path", "pl.DataFrame": "frame", "pl.DataFrame | None": "optional_frame", "dict": "json_object",
          "list[Problem]": "problems", "ScoringRules": "rules"}
_WARNED: set[tuple[str, str]] = set()


class _NotCacheable(Exception):
    """The release cannot be stored by this format (a field or dtype it does not know)."""


class _Damaged(Exception):
    """A file of an entry whose bytes are not those written (its digest differs)."""


# ----------------------------------------------------------------------------- the folder
def cache_dir() -> Path:
    """The cache folder of this process (see the module docstring); it may not exist yet."""
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
        return (f"can be written by {'group and others' if st.st_mode & 0o022 == 0o022 else 'group' if st.st_mode & 0o020 else 'others'} "
                f"(mode {stat.S_IMODE(st.st_mode):o}; `chmod 700` it to use it)")
    return None


def _warn(folder: Path, why: str) -> None:
    """One line on stderr, once per folder and reason in a process."""
    if (str(folder), why) in _WARNED:
        return
    _WARNED.add((str(folder), why))
    print(f"warning: parsed-release cache not used: {folder} {why}; running without cache", file=sys.stderr)


def usable_dir(*, create: bool) -> Path | None:
    """The cache folder when it may be used, else ``None`` (with a one-line warning when it exists
    but is refused, or cannot be created).  ``create``: make it (mode 0700) when missing."""
    folder = cache_dir()
    if create and not folder.exists():
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        except OSError as exc:
            _warn(folder, f"cannot be created ({exc.strerror or exc})")
            return None
    why = refusal(folder)
    if why is not None:
        _warn(folder, why)
        return None
    return folder if folder.is_dir() else None


# ----------------------------------------------------------------------------- small files
def _open_regular(path: Path) -> int:
    """A read-only descriptor of ``path`` when it is a regular file (never a link, pipe or device)."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return fd


def _read_json(path: Path, cap: int):
    """The JSON value in ``path``, or ``None`` when absent, not a regular file, over ``cap`` bytes
    or not JSON."""
    try:
        fd = _open_regular(path)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size > cap:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            raw = fh.read(cap + 1)
        return json.loads(raw) if len(raw) <= cap else None
    except (ValueError, RecursionError, OSError):
        return None
    finally:
        os.close(fd)


def _write_json(path: Path, value) -> None:
    """Write ``value`` to ``path`` whole (temporary file, then rename)."""
    tmp = path.with_name(f".tmp-{path.name}-{os.getpid()}-{secrets.token_hex(4)}")
    try:
        tmp.write_text(json.dumps(value, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# ----------------------------------------------------------------------------- settings
def parse_size(text: str) -> int:
    """Bytes in a size such as ``5GiB``, ``500MB``, ``2G`` (binary: K, M, G, T alone mean KiB...)
    or ``1073741824``.  Raises ``ValueError`` naming the accepted forms."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmMgGtT]?)(i?[bB])?\s*", str(text))
    if not m:
        raise ValueError(f"not a size: {text!r} (give bytes, or a number with KiB, MiB, GiB, TiB, kB, MB, GB or TB)")
    number, prefix, suffix = m.group(1), m.group(2).upper(), (m.group(3) or "").lower()
    if suffix == "ib" and not prefix:
        raise ValueError(f"not a size: {text!r} (give bytes, or a number with KiB, MiB, GiB, TiB, kB, MB, GB or TB)")
    power = " KMGT".index(prefix) if prefix else 0
    base = 1000 if suffix == "b" and prefix else 1024
    return int(float(number) * base**power)


def format_size(n: int) -> str:
    """``2.0 GiB``, ``611.0 MiB``, ``12 B``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{n} B"


def limit(folder: Path | None = None) -> tuple[int, str]:
    """``(limit in bytes, where it comes from)``: ``settings.json`` of the folder, else the default."""
    folder = cache_dir() if folder is None else Path(folder)
    settings = _read_json(folder / _SETTINGS, _MAX_SMALL_JSON)
    value = settings.get("limit_bytes") if isinstance(settings, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value, f"set in {folder / _SETTINGS}"
    return DEFAULT_LIMIT, "default"


def set_limit(folder: Path, n_bytes: int | None) -> None:
    """Store the size limit of the cache in ``folder`` (``None``: back to the default)."""
    settings = _read_json(folder / _SETTINGS, _MAX_SMALL_JSON)
    settings = settings if isinstance(settings, dict) else {}
    if n_bytes is None:
        settings.pop("limit_bytes", None)
    else:
        settings["limit_bytes"] = int(n_bytes)
    _write_json(folder / _SETTINGS, settings)
    _delete(folder / _SKIPPED)   # a note about the old limit says nothing true now


def skipped(folder: Path | None = None) -> dict | None:
    """The last release left out for being larger than the limit (``release``, ``bytes``, ``limit``: the
    current limit, ``when``); None when there is none or it fits the current limit."""
    folder = cache_dir() if folder is None else Path(folder)
    note = _read_json(folder / _SKIPPED, _MAX_SMALL_JSON)
    ok = isinstance(note, dict) and isinstance(note.get("release"), str) and isinstance(note.get("bytes"), int) \
        and isinstance(note.get("when"), (int, float))
    if not ok:
        return None
    lim = limit(folder)[0]
    return {**note, "limit": lim} if note["bytes"] > lim else None


def _note_skipped(folder: Path, release_path, n_bytes: int, lim: int) -> None:
    try:
        _write_json(folder / _SKIPPED, {"release": str(Path(release_path).resolve()), "bytes": int(n_bytes), "limit": int(lim),
                                        "when": time.time()})
    except OSError:
        pass


# ----------------------------------------------------------------------------- entries
@dataclass(frozen=True)
class Entry:
    """One entry of the cache folder, as listed by :func:`entries`."""

    path: Path
    key: str
    bytes: int
    last_used: float            # seconds since the epoch: written, or last read
    release: str | None         # the release folder it holds, as its entry.json says (None: unreadable)


def _entry_bytes(path: Path) -> int:
    """Bytes of the regular files in an entry folder (what it takes on disk; links count as nothing)."""
    total = 0
    try:
        with os.scandir(path) as it:
            for e in it:
                if e.is_file(follow_symlinks=False):
                    total += e.stat(follow_symlinks=False).st_size
    except OSError:
        pass
    return total


def entries(folder: Path | None = None) -> list[Entry]:
    """The entries in the cache folder, least recently used first."""
    folder = cache_dir() if folder is None else Path(folder)
    out = []
    try:
        listing = list(os.scandir(folder))
    except OSError:
        return []
    for e in listing:
        if not e.name.startswith(_PREFIX):
            continue
        path = Path(e.path)
        try:
            used = os.lstat(path / _MANIFEST).st_mtime if e.is_dir(follow_symlinks=False) else e.stat(follow_symlinks=False).st_mtime
        except OSError:
            used = 0.0
        manifest = _read_json(path / _MANIFEST, _MAX_MANIFEST) if e.is_dir(follow_symlinks=False) else None
        release = manifest.get("release") if isinstance(manifest, dict) else None
        out.append(Entry(path, e.name[len(_PREFIX):], _entry_bytes(path), used, release if isinstance(release, str) else None))
    return sorted(out, key=lambda x: (x.last_used, x.key))


def _delete(path: Path) -> None:
    """Delete a folder with what it holds, or a file or link (a link is never followed)."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    except OSError:
        pass


def _remove(path: Path) -> None:
    """Remove an entry out of sight first (renamed, then deleted): no reader finds half of it."""
    if path.is_dir() and not path.is_symlink():
        trash = path.with_name(f".trash-{path.name}-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            os.rename(path, trash)
        except OSError:
            return
        path = trash
    _delete(path)


def _stale_temporaries(folder: Path, older_than: float) -> list[Path]:
    now = time.time()
    out = []
    try:
        for e in os.scandir(folder):
            if e.name.startswith(_TEMP_PREFIXES):
                try:
                    if now - e.stat(follow_symlinks=False).st_mtime >= older_than:
                        out.append(Path(e.path))
                except OSError:
                    pass
    except OSError:
        pass
    return out


def evict(folder: Path, lim: int, keep: str | None = None) -> list[Entry]:
    """Remove the least recently used entries until the cache holds at most ``lim`` bytes (never
    the entry ``keep``), and temporary folders left by processes that died.  Returns the removed."""
    for p in _stale_temporaries(folder, _STALE_SECONDS):
        _delete(p)
    found = entries(folder)
    total = sum(e.bytes for e in found)
    removed = []
    for e in found:
        if total <= lim:
            break
        if e.key == keep:
            continue
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
        _delete(p)
    return len(found), sum(e.bytes for e in found)


# ----------------------------------------------------------------------------- the key
def _file_digest(path: Path) -> str:
    h = hashlib.sha256()   # hardware-accelerated on current CPUs: about 2x BLAKE2b here
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


def release_key(root: Path, parts: tuple) -> str:
    """Key of the release below ``root`` read with ``parts`` (version, layout, rules)."""
    h = hashlib.sha256(repr((FORMAT, tuple(parts), str(root.resolve()))).encode())
    for p in walk_files(root):   # symlinked folders followed, as the reader reads them
        if not p.is_file():   # a FIFO, device or broken link: named in the key (the reader reports it)
            h.update(f"{p.relative_to(root).as_posix()}|not-a-regular-file\n".encode())
            continue
        try:
            st = p.stat()
            seal = f"{st.st_size}|{st.st_mtime_ns}|{_file_digest(p)}"
        except OSError:  # unreadable: the reader reports it; the key changes once it can be read
            seal = "unreadable"
        h.update(f"{p.relative_to(root).as_posix()}|{seal}\n".encode())
    return h.hexdigest()[:32]


# ----------------------------------------------------------------------------- layout
def _layout(cls) -> list[tuple[str, str, str]]:
    """``(field, annotation, kind)`` of every field of the release class."""
    out = []
    for f in fields(cls):
        kind = _KINDS.get(str(f.type))
        if kind is None:
            raise _NotCacheable(f"{cls.__name__}.{f.name}: {f.type}")
        out.append((f.name, str(f.type), kind))
    return out


def _libraries() -> dict:
    import pyarrow as pa

    return {"voxmem_analysis": __version__, "polars": pl.__version__, "pyarrow": pa.__version__}


def _schema(frame) -> list[list[str]]:
    return [[name, str(dtype)] for name, dtype in frame.schema.items()]


# ----------------------------------------------------------------------------- writing
def write_release(key: str, release) -> bool:
    """Store ``release`` under ``key``; ``False`` when it was not stored (cache folder refused or not
    writable, a release this format cannot hold, or one larger than the size limit)."""
    folder = usable_dir(create=True)
    if folder is None or not _KEY.match(key):
        return False
    lim, _ = limit(folder)
    try:
        manifest, problems, frames = _encode(key, release)
    except (_NotCacheable, TypeError, ValueError):
        return False
    estimate = sum(f.estimated_size() for f in frames.values())
    if estimate > 2 * lim:   # surely over the limit, even after _compact: not written at all
        _note_skipped(folder, release.path, estimate, lim)
        return False
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{key}-", dir=folder))   # mode 0700
    except OSError:
        return False
    try:
        _write_frames(tmp, frames, manifest)
        blob = json.dumps(problems).encode("utf-8")
        (tmp / _PROBLEMS).write_bytes(blob)
        manifest["digests"] = {_PROBLEMS: hashlib.sha256(blob).hexdigest()}
        text = json.dumps(manifest).encode("utf-8")
        (tmp / _MANIFEST).write_bytes(text)
        (tmp / _SEAL).write_text(hashlib.sha256(text).hexdigest() + "\n", encoding="ascii")
        size = _entry_bytes(tmp)
        if size > lim or len(text) > _MAX_MANIFEST or len(blob) > _MAX_MANIFEST:
            _note_skipped(folder, release.path, size, lim)
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
    layout = _layout(type(release))
    manifest = {"format": FORMAT, "key": key, "layout": [[n, a] for n, a, _ in layout], "libraries": _libraries(),
                "release": str(Path(release.path).resolve()), "values": {}, "frames": {}}
    problems: list = []
    frames = {}
    for name, _, kind in layout:
        value = getattr(release, name)
        if kind in ("frame", "optional_frame"):
            if value is None and kind == "optional_frame":
                manifest["frames"][name] = None
            elif isinstance(value, pl.DataFrame):
                frames[name] = value
            else:
                raise _NotCacheable(f"{name} is a {type(value).__name__}")
        elif kind == "json_object":
            manifest["values"][name] = json.loads(json.dumps(value))
            if manifest["values"][name] != value:   # tuples, NaN: JSON would not give it back as it is
                raise _NotCacheable(f"{name} does not survive JSON")
        elif kind == "problems":
            problems = [p.as_dict() for p in value]
        elif kind == "rules":
            manifest["rules"] = _rules_dict(value)
    return manifest, problems, frames


def _rules_dict(rules) -> dict:
    return {f.name: getattr(rules, f.name) for f in fields(rules)}


def _compact(s):
    """``s`` with each distinct text stored once (a column of few distinct values longer than the 12
    bytes Arrow keeps inline gathered from its distinct values): equal values, equal dtype, less to
    write and to map."""
    if s.dtype != pl.String or not (s.str.len_bytes() > 12).any():
        return s
    distinct = s.unique().drop_nulls()
    if distinct.len() * 4 > s.len():
        return s
    return distinct.gather(s.cast(pl.Enum(distinct)).to_physical()).alias(s.name)


def _write_frames(tmp: Path, frames: dict, manifest: dict) -> None:
    """Each frame as an uncompressed Arrow IPC file (mappable), its size, rows, schema and digest noted;
    a frame whose schema does not come back the same from the file is not cacheable."""
    for name, frame in frames.items():
        path = tmp / f"{name}.arrow"
        frame.with_columns([_compact(frame[c]) for c in frame.columns]).write_ipc(path, compression="uncompressed")
        back = _schema_of_file(path)
        if back != _schema(frame):
            raise _NotCacheable(f"{name}: schema {back} read back as written {_schema(frame)}")
        manifest["frames"][name] = {"bytes": path.stat().st_size, "rows": frame.height, "schema": back,
                                    "sha256": _file_digest(path)}


def _schema_of_file(path: Path) -> list[list[str]]:
    """The polars schema of an Arrow IPC file, from its footer (no data read)."""
    import pyarrow as pa

    with pa.OSFile(str(path), "rb") as fh:
        schema = pa.ipc.open_file(fh).schema
    return _schema(pl.from_arrow(pa.Table.from_batches([], schema=schema)))   # (schema.empty_table() imports pandas)


def _sync(folder: Path) -> None:
    """Every file of ``folder`` and the folder itself on disk before the folder is renamed into place."""
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


# ----------------------------------------------------------------------------- reading
def read_release(key: str, root: Path, rules, cls):
    """The release (of class ``cls``) stored under ``key``, its ``path`` set to ``root``; None when there
    is none or the entry is not exactly what this code writes for ``rules`` -- a file whose bytes
    differ from its digest is said in one line on stderr."""
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


def _sealed_manifest(entry: Path):
    """``entry.json`` when its bytes are those ``entry.sha256`` names (None: no seal, another format)."""
    seal = _read_bytes(entry / _SEAL, 128)
    if seal is None:
        return None
    raw = _read_bytes(entry / _MANIFEST, _MAX_MANIFEST)
    if raw is None:
        raise _Damaged(_MANIFEST)
    if VERIFY and hashlib.sha256(raw).hexdigest() != seal.strip().decode("ascii", "replace"):
        raise _Damaged(_MANIFEST)
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise _Damaged(_MANIFEST) from None


def _read_bytes(path: Path, cap: int) -> bytes | None:
    try:
        fd = _open_regular(path)
    except OSError:
        return None
    try:
        if os.fstat(fd).st_size > cap:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read(cap + 1)
    finally:
        os.close(fd)


def _decode(entry: Path, key: str, root: Path, rules, lim: int, cls):
    """The release of a checked entry folder, or ``None``."""
    manifest = _sealed_manifest(entry)
    layout = _layout(cls)
    if not _manifest_fits(manifest, key, layout, rules, lim):
        return None
    specs = {name: manifest["frames"].get(name, "absent") for name, _, kind in layout
             if kind in ("frame", "optional_frame")}
    with ThreadPoolExecutor(max_workers=4) as pool:   # hashing releases the GIL: the frames are checked at once
        mapped = dict(zip(specs, pool.map(lambda kv: None if kv[1] is None else _map_frame(entry / f"{kv[0]}.arrow", kv[1]),
                                          specs.items())))
    values = {}
    for name, _, kind in layout:
        if kind == "path":
            values[name] = Path(root)
        elif kind == "rules":
            values[name] = rules
        elif kind == "json_object":
            values[name] = manifest["values"].get(name)
            if not isinstance(values[name], dict):
                return None
        elif kind == "problems":
            values[name] = _decode_problems(entry / _PROBLEMS, manifest["digests"].get(_PROBLEMS))
        else:
            if mapped[name] is None and kind != "optional_frame":
                return None
            values[name] = mapped[name]
    if not _frame_columns_ok(values.get("frame")):
        return None
    return cls(**values)


def _manifest_fits(manifest, key: str, layout: list, rules, lim: int) -> bool:
    """The entry's JSON is of this format, key, layout, library versions and rules, and its frame
    declarations are of the right types and sum to no more than the size limit."""
    if not isinstance(manifest, dict):
        return False
    if (manifest.get("format") != FORMAT or manifest.get("key") != key
            or manifest.get("layout") != [[n, a] for n, a, _ in layout]
            or manifest.get("libraries") != _libraries() or manifest.get("rules") != _rules_dict(rules)):
        return False
    frames, values, digests = manifest.get("frames"), manifest.get("values"), manifest.get("digests")
    if not isinstance(frames, dict) or not isinstance(values, dict) or not isinstance(digests, dict) \
            or not isinstance(digests.get(_PROBLEMS), str):
        return False
    declared = 0
    for name, _, kind in layout:
        spec = frames.get(name, "absent")
        if kind not in ("frame", "optional_frame") or (spec is None and kind == "optional_frame"):
            continue
        if not _frame_spec_ok(spec):
            return False
        declared += spec["bytes"]
    return declared <= lim   # never written over the limit: a larger declaration is not this code's


def _frame_spec_ok(spec) -> bool:
    def whole(v) -> bool:
        return isinstance(v, int) and not isinstance(v, bool) and v >= 0

    return (isinstance(spec, dict) and set(spec) == {"bytes", "rows", "schema", "sha256"} and whole(spec["bytes"])
            and whole(spec["rows"]) and isinstance(spec["sha256"], str) and _HEX.match(spec["sha256"]) is not None
            and isinstance(spec["schema"], list)
            and all(isinstance(c, list) and len(c) == 2 and all(isinstance(s, str) for s in c) for c in spec["schema"]))


def _decode_problems(path: Path, digest: str) -> list:
    """Problems from their dicts, each field of its type; raises when the file is not what was written."""
    raw = _read_bytes(path, _MAX_MANIFEST)
    if raw is None or (VERIFY and hashlib.sha256(raw).hexdigest() != digest):
        raise _Damaged(_PROBLEMS)
    items = json.loads(raw)
    types = {"code": (str,), "severity": (str,), "message": (str,), "file": (str, type(None)),
             "line": (int, type(None)), "field": (str, type(None)), "count": (int,)}
    out = []
    for d in items if isinstance(items, list) else [None]:
        if not isinstance(d, dict) or set(d) != set(types) or any(
                not isinstance(d[k], t) or isinstance(d[k], bool) for k, t in types.items()):
            raise ValueError("not a problem")
        out.append(Problem(**d))
    return out


def _map_frame(path: Path, spec: dict):
    """The frame in the Arrow IPC file ``path``, memory-mapped (no copy), after checking that it is a
    regular file of the declared size and digest, that every buffer is valid Arrow data, and that
    rows and schema are the declared ones.  Raises on any mismatch."""
    import pyarrow as pa

    fd = _open_regular(path)
    try:
        size = os.fstat(fd).st_size
        if size != spec["bytes"] or size == 0:
            raise _Damaged(f"{path.name}: {size} bytes, {spec['bytes']} written")
        mapped = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
    finally:
        os.close(fd)
    if VERIFY and hashlib.sha256(mapped).hexdigest() != spec["sha256"]:
        raise _Damaged(path.name)
    table = pa.ipc.open_file(pa.BufferReader(pa.py_buffer(mapped))).read_all()
    table.validate(full=True)
    if table.num_rows != spec["rows"]:
        raise ValueError(f"{path.name}: {table.num_rows} rows, declared {spec['rows']}")
    frame = pl.from_arrow(table, rechunk=False)
    if not isinstance(frame, pl.DataFrame) or _schema(frame) != spec["schema"]:
        raise ValueError(f"{path.name}: not the declared schema")
    return frame


def _frame_columns_ok(frame) -> bool:
    """The verdict frame has every declared column, in order, first."""
    return frame is not None and tuple(frame.columns[:len(COLUMN_NAMES)]) == COLUMN_NAMES
