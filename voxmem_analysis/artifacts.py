"""Registry of the paper's named artifacts (``voxmem-analysis table NAME``).

An artifact is a function ``(release, *, seed=0, n_boot=10_000, **params) -> DataFrame``
returning the table *as printed in the paper*: the index holds the paper's row labels,
the columns its column labels.  :func:`to_long` turns any of them into the long format
``artifact,row,column,value`` used by ``--format long`` and by ``reproduction.csv``.

Modules that define artifacts are listed in :data:`ARTIFACT_MODULES` and imported on
first use, so ``import voxmem_analysis`` stays light.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:  # pandas is imported where tables are built: `table --list` stays light
    import pandas as pd

__all__ = ["Artifact", "artifact", "get", "names", "compute", "to_long", "ARTIFACT_MODULES"]

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
    """Decorator registering ``func`` as the artifact ``name``."""
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
        raise KeyError(f"unknown artifact {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None


def compute(name: str, release, **params) -> pd.DataFrame:
    return get(name)(release, **params)


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
