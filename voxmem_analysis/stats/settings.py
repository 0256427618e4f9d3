"""How a bootstrap runs, as one small object: :class:`BootstrapSettings` and :class:`PairedSettings`.

A function that bootstraps takes ``settings=`` besides its own arguments and, through
:func:`settings_keywords`, the same fields as keywords (``f(x, n_boot=2_000)`` or
``f(x, settings=BootstrapSettings(n_boot=2_000))``; a keyword replaces its field of ``settings``).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable

from voxmem_analysis.stats._validation import check_ci_level, require
from voxmem_analysis.stats.resampling import check_n_boot_seed

__all__ = ["BootstrapSettings", "PairedSettings", "INTERVALS", "settings_keywords"]

#: Endpoints of a bootstrap interval: percentile, or bias-corrected and accelerated.
INTERVALS = ("percentile", "bca")


@dataclass(frozen=True)
class BootstrapSettings:
    """``n_boot`` resamples drawn with ``numpy.random.default_rng(seed)``; intervals at ``ci_level`` with
    ``interval`` endpoints (:data:`INTERVALS`); ``mc_se``: report each endpoint's Monte-Carlo error."""

    n_boot: int = 10_000
    seed: int = 0
    ci_level: float = 0.95
    interval: str = "percentile"
    mc_se: bool = False

    def check(self, interval_name: str | None = "interval") -> BootstrapSettings:
        """The settings, checked (:class:`~voxmem_analysis.errors.StatsInputError` naming the bad one);
        ``interval_name``: what the caller calls the endpoints (None: it has none)."""
        n_boot, seed = check_n_boot_seed(self.n_boot, self.seed)
        ci_level = check_ci_level(self.ci_level)
        require(interval_name is None or self.interval in INTERVALS,
                f"{interval_name} must be one of {INTERVALS}, got {self.interval!r}", field=interval_name)
        return dataclasses.replace(self, n_boot=n_boot, seed=seed, ci_level=ci_level)


@dataclass(frozen=True)
class PairedSettings(BootstrapSettings):
    """The paired engine's (:func:`voxmem_analysis.stats.paired_bootstrap_frame`): which ``statistics``
    (names, :class:`~voxmem_analysis.stats.Statistic` objects or callables) and ``aggregate``
    (``"mean"`` over series, or None: per series), besides :class:`BootstrapSettings`."""

    statistics: Any = ("drop", "retention")
    aggregate: str | None = "mean"


def settings_keywords(default: Any, *, fields: tuple[str, ...] | None = None,
                      rename: dict[str, str] | None = None) -> Callable:
    """Decorator: ``func(..., settings=default)`` also takes the settings' ``fields`` (default: all) as
    keywords; ``rename`` maps a keyword to its field where the field's name is an argument of ``func``."""
    names = [f.name for f in dataclasses.fields(default) if fields is None or f.name in fields]
    keywords = {next((k for k, v in (rename or {}).items() if v == f), f): f for f in names}

    def wrap(func: Callable) -> Callable:
        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {keywords[k]: kwargs.pop(k) for k in list(kwargs) if k in keywords}
            kwargs["settings"] = dataclasses.replace(kwargs.get("settings") or default, **given)
            return func(*args, **kwargs)

        sig = inspect.signature(func)
        shown = [p for p in sig.parameters.values() if p.name != "settings"]
        shown += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=getattr(default, f))
                  for k, f in keywords.items()]
        wrapper.__signature__ = sig.replace(parameters=[*shown, sig.parameters["settings"]])
        return wrapper

    return wrap
