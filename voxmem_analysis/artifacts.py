"""Registry of the paper's named artifacts (``voxmem-analysis table NAME``).  An artifact is a function
``(release, *, seed=0, n_boot=10_000, **params) -> DataFrame`` returning the table as printed in the paper (index:
its row labels; columns: its column labels); :func:`to_long` gives its long form ``artifact,row,column,value``.
The modules of :data:`ARTIFACT_MODULES` are imported on first use; titles and parameters can be read from their
source without importing them (:func:`source_titles`, :func:`source_parameters`)."""
from __future__ import annotations

import ast
import functools
import importlib
import importlib.util
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from voxmem_analysis.errors import UnknownNameError

if TYPE_CHECKING:  # pandas is imported where tables are built: `table --list` stays light
    import pandas as pd

__all__ = ["Artifact", "artifact", "get", "names", "compute", "to_long", "retitle", "caption", "ARTIFACT_MODULES",
           "source_titles", "SourceParameter", "source_parameters"]

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
    """Decorator registering ``func`` as the artifact ``name`` (``func`` returned unchanged)."""
    def deco(func):
        _REGISTRY[name] = Artifact(name, title, func, tuple(needs))
        return func
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
    """``title`` with the paper's budgets and models replaced by those of ``params`` (``budget``: ``at 64K`` and
    ``64K model set``; ``baseline``/``comparison``: ``8K to 64K``; ``models``, a list or ``"A,B"``: ``all
    models``); None or empty parameters leave the title as it is.

    >>> retitle("Table 15: accuracy (%) at 64K, 64K model set", {"budget": "32k"})
    'Table 15: accuracy (%) at 32K, models run at 32K'
    """
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
    """The title of artifact ``name`` for the parameters used (:func:`retitle`): a notebook's caption."""
    return retitle(get(name).title, params)


def to_long(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """Wide paper table -> ``artifact,row,column,value`` (row by row, missing cells dropped), as
    :func:`voxmem_analysis.output.long_rows`."""
    import pandas as pd

    # start-up: output costs `table --list` 20 ms (-X importtime), and only `--format long` needs it here
    from voxmem_analysis.output import LONG_COLUMNS, long_rows

    return pd.DataFrame(long_rows(table, name), columns=list(LONG_COLUMNS))


# ----------------------------------------------------------------------------- titles without imports
def _registrations(tree):
    """``(name, title node)`` of every ``artifact("name", title=...)`` / ``_artifact(...)`` call."""
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("artifact", "_artifact") and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            yield node.args[0].value, next((k.value for k in node.keywords if k.arg == "title"), None)


@functools.lru_cache(maxsize=1)
def _sources():
    """``(module name, parsed source)`` of every module of :data:`ARTIFACT_MODULES`, once; None when one is no
    ``.py`` file (callers then import the registry)."""
    out = []
    for mod in ARTIFACT_MODULES:
        spec = importlib.util.find_spec(mod)
        if spec is None or not spec.origin or not spec.origin.endswith(".py"):
            return None
        with open(spec.origin, encoding="utf-8") as fh:
            out.append((mod, ast.parse(fh.read(), filename=spec.origin)))
    return tuple(out)


def source_titles() -> dict[str, str] | None:
    """``{name: title}`` of every registration, read from the source (no pandas, SciPy or matplotlib); None when
    a module cannot be read so (the caller then imports the registry)."""
    sources = _sources()
    if sources is None:
        return None
    out: dict[str, str] = {}
    for _mod, tree in sources:
        for name, title in _registrations(tree):
            if not isinstance(title, ast.Constant) or not isinstance(title.value, str):
                return None
            out[name] = title.value
    return out


@dataclass(frozen=True)
class SourceParameter:
    """One analysis parameter of an artifact function as its source declares it (``annotation``: its text)."""

    name: str
    default: object = None
    annotation: str = ""


#: Keyword arguments every artifact takes; not analysis parameters.
_GENERAL = ("seed", "n_boot")


def _literals(tree) -> dict[str, object]:
    """Module-level ``NAME = <literal>`` assignments (a default may name one: ``budget=_DEFAULT_BUDGET``)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                out[node.targets[0].id] = ast.literal_eval(node.value)
            except (ValueError, SyntaxError, TypeError):
                pass
    return out


def _function_parameters(func, consts: dict) -> list[SourceParameter] | None:
    """The analysis parameters of an artifact's ``def`` (None when a default is not a literal)."""
    a = func.args
    positional = a.posonlyargs + a.args
    pos_defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    pairs = list(zip(positional, pos_defaults))[1:] + list(zip(a.kwonlyargs, a.kw_defaults))
    out = []
    for arg, default in pairs:
        if arg.arg in _GENERAL or arg.arg.startswith("_"):
            continue
        if default is None:
            value = None
        elif isinstance(default, ast.Name) and default.id in consts:
            value = consts[default.id]
        else:
            try:
                value = ast.literal_eval(default)
            except (ValueError, SyntaxError, TypeError):
                return None
        out.append(SourceParameter(arg.arg, value, ast.unparse(arg.annotation) if arg.annotation else ""))
    return out


def _decorated(tree):
    """``(artifact name, def node)`` of every function decorated with ``@artifact("name", ...)``."""
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for dec in node.decorator_list:
            regs = list(_registrations(dec)) if isinstance(dec, ast.Call) else []
            if regs:
                yield regs[0][0], node


def source_parameters() -> dict[str, list[SourceParameter]] | None:
    """``{artifact name: [SourceParameter, ...]}``: the keyword arguments of every artifact function besides
    ``seed`` and ``n_boot``, read from the source (what ``table NAME --help`` lists); None when it cannot be read
    so (an artifact not registered by decorator, a default that is no literal)."""
    sources = _sources()
    if sources is None:
        return None
    out: dict[str, list[SourceParameter]] = {}
    for _mod, tree in sources:
        consts = _literals(tree)
        for name, func in _decorated(tree):
            params = _function_parameters(func, consts)
            if params is None:
                return None
            out[name] = params
    titles = source_titles()
    return out if titles is not None and set(out) == set(titles) else None
