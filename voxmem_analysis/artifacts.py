"""Registry of the paper's named artifacts (``voxmem-analysis table NAME``).

An artifact is a function ``(release, *, seed=0, n_boot=10_000, **params) -> DataFrame``
returning the table *as printed in the paper*: the index holds the paper's row labels,
the columns its column labels.  :func:`to_long` turns any of them into the long format
``artifact,row,column,value`` used by ``--format long`` and by ``reproduction.csv``.

Modules that define artifacts are listed in :data:`ARTIFACT_MODULES` and imported on
first use, so ``import voxmem_analysis`` stays light.
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
import importlib
import inspect
import os
import time
import types
import warnings
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, Callable

from voxmem_analysis.errors import UnknownNameError
from voxmem_analysis.store import read_checked, write_checked

if TYPE_CHECKING:  # pandas is imported where tables are built: `table --list` stays light
    import pandas as pd

__all__ = ["Artifact", "artifact", "get", "names", "compute", "to_long", "retitle", "caption", "ARTIFACT_MODULES",
           "memoised", "MEMO_ENV", "source_titles"]

#: Modules that register artifacts when imported (every one must exist).
ARTIFACT_MODULES = (
    "voxmem_analysis.analysis.results", "voxmem_analysis.analysis.scaling", "voxmem_analysis.analysis.judges",
    "voxmem_analysis.analysis.ablation", "voxmem_analysis.analysis.attribution",
    "voxmem_analysis.analysis.design", "voxmem_analysis.analysis.amc",
    "voxmem_analysis.analysis.scaling_model",
)


@dataclass(frozen=True)
class Artifact:
    name: str
    title: str
    func: Callable[..., pd.DataFrame]
    needs: tuple[str, ...] = ()   # release parts required, e.g. ("judge2",)

    def __call__(self, release, **params) -> pd.DataFrame:
        return self.func(release, **params)


_REGISTRY: dict[str, Artifact] = {}
_loaded = False


def artifact(name: str, *, title: str, needs: tuple[str, ...] = ()):
    """Decorator registering ``func`` as the artifact ``name`` (wrapped by :func:`memoised`: within
    one reproduction run a notebook's call and the scoreboard's call with the same parameters
    compute the table once)."""
    def deco(func):
        wrapped = memoised(f"artifact.{name}")(func)
        _REGISTRY[name] = Artifact(name, title, wrapped, tuple(needs))
        return wrapped
    return deco


def _load() -> None:
    global _loaded
    if _loaded:
        return
    for mod in ARTIFACT_MODULES:
        importlib.import_module(mod)
    _loaded = True


def names() -> list[str]:
    _load()
    return sorted(_REGISTRY)


def get(name: str) -> Artifact:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownNameError(f"unknown artifact {name!r}; known: {', '.join(sorted(_REGISTRY))}", "name") from None


def compute(name: str, release, **params) -> pd.DataFrame:
    return get(name)(release, **params)


_BUDGET = r"(8K|16K|32K|64K)"


def retitle(title: str, params: dict) -> str:
    """``title`` with the paper's budgets replaced by those in ``params``.

    ``budget``: ``at 64K`` -> ``at 32K`` and ``64K model set`` -> ``models run at 32K`` (kept for
    64K itself); ``baseline`` / ``comparison``: ``8K to 64K`` -> ``8K to 32K``; ``models`` (a list or
    a comma-separated string): ``all models`` -> ``models A, B``.  Other text and parameters left as
    they are (``None`` or empty: the title's own budget and models).

    >>> retitle("Table 15: accuracy (%) at 64K, 64K model set", {"budget": "32k"})
    'Table 15: accuracy (%) at 32K, models run at 32K'
    """
    import re

    b = str(params.get("budget") or "").upper()
    if b:
        title = re.sub(rf"\bat {_BUDGET}\b", f"at {b}", title)
        if b != "64K":
            title = title.replace("64K model set", f"models run at {b}")
    base, cmp_ = str(params.get("baseline") or "").upper(), str(params.get("comparison") or "").upper()
    m = re.search(rf"\b{_BUDGET} to {_BUDGET}\b", title)
    if m and (base or cmp_):
        title = title.replace(m.group(0), f"{base or m.group(1)} to {cmp_ or m.group(2)}")
    models = params.get("models")
    names = [x.strip() for x in models.split(",")] if isinstance(models, str) else list(models or [])
    if [x for x in names if x]:
        title = title.replace("all models", "models " + ", ".join(x for x in names if x))
    return title


def caption(name: str, **params) -> str:
    """The registry title of artifact ``name`` for the parameters used (:func:`retitle`): what a
    notebook passes as the caption of the figure or table it saves, so the report's caption
    names the budgets of the run, not the paper's."""
    return retitle(get(name).title, params)


def to_long(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """Wide paper table -> ``artifact,row,column,value`` (row-major, paper order, NaN cells dropped)."""
    import pandas as pd

    rows = []
    for r, rec in zip(table.index, table.itertuples(index=False)):
        for c, v in zip(table.columns, rec):
            if v is None or (isinstance(v, float) and pd.isna(v)):
                continue
            rows.append((name, str(r), str(c), v))
    return pd.DataFrame(rows, columns=["artifact", "row", "column", "value"])


# ----------------------------------------------------------------------------- run-scoped memo
#: Folder of the run-scoped memo.  Set only by the reproduction runner, to a folder inside its
#: staging area that is deleted with the run: outside a run nothing is stored or read.
MEMO_ENV = "VOXMEM_ARTIFACT_MEMO"
#: Optional file receiving one line per memoised call: task, name, hit/miss, seconds (benchmarks).
MEMO_LOG_ENV = "VOXMEM_MEMO_LOG"
_MEMO_MAGIC = b"voxmem-memo-v1\n"


class _Unkeyable(Exception):
    """An argument the memo cannot fingerprint exactly: the call is computed, not memoised."""


def memoised(name: str):
    """Decorator: within one reproduction run, compute ``func(release, **params)`` once across processes.

    When ``$VOXMEM_ARTIFACT_MEMO`` names a folder, the result is pickled there (a SHA-256 digest of
    the payload checked before it is unpickled) under a key made of ``name``, the function, the
    package version, every bound parameter (defaults applied, so ``f(r)`` and ``f(r, seed=0)``
    meet) and a fingerprint of the release's *contents* (every frame, hashed row by row, its
    metadata, and the size and mtime of each file below its folder); a later call with the same key,
    in any process of the run, returns the stored copy.  Warnings raised while computing are stored
    and raised again on a hit.  A function argument is keyed by its module and name (top-level
    functions only).  An argument that cannot be fingerprinted exactly (an object of unknown type,
    a lambda or closure, a frame whose cells cannot be hashed) means no memo for that call.  Without the
    variable the wrapper calls ``func`` directly.
    """
    def deco(func):
        sig = inspect.signature(func)

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            folder = os.environ.get(MEMO_ENV)
            key = _memo_key(name, func, sig, args, kwargs) if folder else None
            if key is None:
                return func(*args, **kwargs)
            t0 = time.perf_counter()
            stored = _memo_read(Path(folder), name, key)
            if stored is not None:
                value, caught = stored
                _reemit(caught)
                _memo_log(name, "hit", t0)
                return value
            rec: list = []
            try:
                with warnings.catch_warnings(record=True) as rec:
                    warnings.simplefilter("always")
                    value = func(*args, **kwargs)
            finally:  # raised again under the caller's filters, also when the call failed
                caught = list(dict.fromkeys((w.category, str(w.message), w.filename, w.lineno) for w in rec))
                _reemit(caught)
            _memo_write(Path(folder), name, key, (value, caught))
            _memo_log(name, "miss", t0)
            return value

        wrapper.memo_name = name
        return wrapper
    return deco


def _memo_log(name: str, outcome: str, t0: float) -> None:
    """One line per memoised call in ``$VOXMEM_MEMO_LOG`` when set (benchmarks/bench_reproduce.py):
    the working folder's name (a notebook's staging folder in a run), name, hit/miss, seconds."""
    log = os.environ.get(MEMO_LOG_ENV)
    if log:
        try:
            with open(log, "a", encoding="utf-8") as fh:
                fh.write(f"{os.path.basename(os.getcwd())}\t{name}\t{outcome}\t{time.perf_counter() - t0:.3f}\n")
        except OSError:
            pass


def _reemit(caught) -> None:
    for category, message, filename, lineno in caught:
        warnings.warn_explicit(message, category, filename, lineno)


def _memo_key(name: str, func, sig, args, kwargs) -> str | None:
    from voxmem_analysis import __version__

    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None   # let the call raise its own error
    bound.apply_defaults()
    h = hashlib.sha256(repr((name, func.__module__, func.__qualname__, __version__)).encode())
    try:
        for pname, value in bound.arguments.items():
            h.update(f"|{pname}=".encode())
            _feed(h, value, 0)
    except _Unkeyable:
        return None
    return h.hexdigest()[:40]


_SCALARS = (type(None), bool, int, float, complex, str, bytes)


def _feed(h, value, depth: int) -> None:
    """Feed an exact fingerprint of ``value`` to the hash ``h`` (raise :class:`_Unkeyable` if none)."""
    if depth > 8:
        raise _Unkeyable("nested too deeply")
    kind = type(value)
    h.update(f"<{kind.__module__}.{kind.__qualname__}>".encode())
    if isinstance(value, _SCALARS) or isinstance(value, enum.Enum):
        h.update(repr(value).encode())
    elif isinstance(value, (list, tuple, frozenset, set)):
        items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
        h.update(f"[{len(items)}".encode())
        for v in items:
            _feed(h, v, depth + 1)
    elif isinstance(value, dict):
        h.update(f"{{{len(value)}".encode())
        for k in sorted(value, key=repr):
            _feed(h, k, depth + 1)
            _feed(h, value[k], depth + 1)
    elif isinstance(value, PurePath):
        _feed_path(h, Path(value))
    elif isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):
        # a function defined at a module's top level (a refusal detector...) is its name; a lambda
        # or a closure has no name that says what it computes
        qual = getattr(value, "__qualname__", "")
        if "<" in qual or not getattr(value, "__module__", None):
            raise _Unkeyable(f"cannot fingerprint the function {qual or value!r}")
        h.update(f"{value.__module__}.{qual}".encode())
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            h.update(f"|{f.name}:".encode())
            _feed(h, getattr(value, f.name), depth + 1)
    else:
        _feed_frame(h, value)


def _feed_path(h, path: Path) -> None:
    """The path, and for a folder (a release) the name, size and mtime of every file below it."""
    h.update(str(path.resolve()).encode())
    if path.is_dir():
        for p in sorted(q for q in path.rglob("*") if q.is_file()):
            st = p.stat()
            h.update(f"{p.relative_to(path).as_posix()}|{st.st_size}|{st.st_mtime_ns};".encode())


def _feed_frame(h, value) -> None:
    """polars and pandas frames / series: schema, shape and a hash of every row, in order."""
    mod = type(value).__module__.split(".", 1)[0]
    try:
        if mod == "polars" and hasattr(value, "hash_rows"):
            h.update(repr(value.schema).encode() + f"{value.shape}".encode())
            if value.width:
                h.update(value.hash_rows(seed=0).to_numpy().tobytes())
            return
        if mod == "pandas" and hasattr(value, "index"):
            import pandas as pd

            frame = hasattr(value, "columns")
            cols = repr(list(value.columns)) + repr(list(value.dtypes)) if frame else repr(value.dtype)
            h.update(f"{cols}|{value.shape}|{value.index.dtype}|{value.attrs!r}".encode())
            # categorize: each distinct value hashed once (5x faster on string columns); every kind of
            # missing value (None, NaN, NA) then hashes alike, as pandas' own isna treats them
            h.update(pd.util.hash_pandas_object(value, index=True, categorize=True).to_numpy().tobytes())
            return
    except Exception as exc:  # noqa: BLE001 - e.g. object columns holding lists: no exact fingerprint
        raise _Unkeyable(str(exc)) from None
    raise _Unkeyable(f"cannot fingerprint a {type(value).__name__}")


def _memo_path(folder: Path, name: str, key: str) -> Path:
    return folder / f"{name}-{key}.pickle"


def _memo_read(folder: Path, name: str, key: str):
    """The stored ``(value, warnings)`` for ``key``, or None when absent or damaged (never trusted)."""
    stored = read_checked(_memo_path(folder, name, key), _MEMO_MAGIC)
    return stored if isinstance(stored, tuple) and len(stored) == 2 else None


def _memo_write(folder: Path, name: str, key: str, stored) -> None:
    """Store atomically (temporary file + rename); skipped silently when it cannot be pickled or written."""
    write_checked(_memo_path(folder, name, key), _MEMO_MAGIC, stored)


# ----------------------------------------------------------------------------- titles without imports
def _registrations(tree):
    """``(name, title node)`` of every ``artifact("name", title=...)`` / ``_artifact(...)`` call
    (as a decorator or called directly)."""
    import ast

    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("artifact", "_artifact") and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value, next((k.value for k in node.keywords if k.arg == "title"), None)


def source_titles() -> dict[str, str] | None:
    """``{name: title}`` of every ``artifact("name", title="...")`` registration, read from the source of
    :data:`ARTIFACT_MODULES` without importing them (so listing names and titles costs no pandas, SciPy
    or matplotlib); None when a module cannot be read this way (the caller then imports the registry).
    ``tests/test_cli_startup.py`` checks it matches the registry."""
    import ast
    import importlib.util

    out: dict[str, str] = {}
    for mod in ARTIFACT_MODULES:
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        with open(spec.origin, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), filename=spec.origin)
        for name, title in _registrations(tree):
            if not isinstance(title, ast.Constant) or not isinstance(title.value, str):
                return None
            out[name] = title.value
    return out
