"""How a bootstrap runs, as one small object: :class:`BootstrapSettings` and :class:`PairedSettings`.

A function that bootstraps takes ``settings=`` (one of these frozen dataclasses) besides its own
arguments, and, through :func:`settings_keywords`, the same fields as keywords, so both calls work::

    compare_systems(frame, n_boot=2_000, seed=1)
    compare_systems(frame, settings=BootstrapSettings(n_boot=2_000, seed=1))

A keyword given with ``settings=`` replaces that field of it.  The function's signature (``help``,
``inspect.signature``) lists the keywords it takes.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["BootstrapSettings", "PairedSettings", "settings_keywords"]


@dataclass(frozen=True)
class BootstrapSettings:
    """Resamples ``n_boot`` drawn from ``numpy.random.default_rng(seed)``; intervals at ``ci_level``
    with ``interval`` endpoints (``"percentile"`` or ``"bca"``); ``mc_se``: also report the
    Monte-Carlo standard error of each endpoint."""

    n_boot: int = 10_000
    seed: int = 0
    ci_level: float = 0.95
    interval: str = "percentile"
    mc_se: bool = False


@dataclass(frozen=True)
class PairedSettings:
    """The settings of the paired bootstrap engine (:func:`voxmem_analysis.stats.paired_bootstrap_frame`):
    which ``statistics`` (names, :class:`~voxmem_analysis.stats.Statistic` objects or callables),
    ``aggregate`` (``"mean"`` over series, or None: per series), and the resampling as in
    :class:`BootstrapSettings`."""

    statistics: Any = ("drop", "retention")
    aggregate: str | None = "mean"
    n_boot: int = 10_000
    seed: int = 0
    ci_level: float = 0.95
    interval: str = "percentile"


def settings_keywords(default: Any, *, fields: tuple[str, ...] | None = None,
                      rename: dict[str, str] | None = None) -> Callable:
    """Decorator: ``func(..., settings=default)`` also takes the settings' fields as keywords.

    ``fields``: the fields the function uses (default: all); ``rename``: keyword -> field, for a
    field whose keyword would clash with an argument of the function (``bootstrap_interval`` ->
    ``interval``).  An unknown keyword is a ``TypeError``, as for any function.
    """
    names = [f.name for f in dataclasses.fields(default) if fields is None or f.name in fields]
    keywords = {next((k for k, v in (rename or {}).items() if v == f), f): f for f in names}

    def wrap(func: Callable) -> Callable:
        sig = inspect.signature(func)

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {keywords[k]: kwargs.pop(k) for k in list(kwargs) if k in keywords}
            base = kwargs.get("settings") or default
            kwargs["settings"] = dataclasses.replace(base, **given) if given else base
            return func(*args, **kwargs)

        shown = [p for p in sig.parameters.values() if p.name != "settings"]
        shown += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=getattr(default, f))
                  for k, f in keywords.items()]
        wrapper.__signature__ = sig.replace(parameters=[*shown, sig.parameters["settings"]])
        return wrapper

    return wrap
