"""How a bootstrap runs, as one small object built once by the function a notebook or command calls and
passed whole below it: :class:`BootstrapSettings` (and :class:`PairedSettings` for the paired engine)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

from voxmem_analysis.stats._validation import check_ci_level, require, whole_number
from voxmem_analysis.stats.resources import check_n_boot

__all__ = ["BootstrapSettings", "PairedSettings", "INTERVALS", "check_n_boot_seed"]

#: Endpoints of a bootstrap interval: percentile, or bias-corrected and accelerated.
INTERVALS = ("percentile", "bca")


def check_n_boot_seed(n_boot: Any, seed: Any) -> tuple[int, int]:
    n_boot = check_n_boot(whole_number(n_boot, "n_boot"))
    why = " (it is passed to numpy.random.default_rng and reported in the output)"
    return n_boot, whole_number(seed, "seed", low=0, why=why)


@dataclass(frozen=True)
class BootstrapSettings:
    """``n_boot`` resamples drawn with ``numpy.random.default_rng(seed)``, intervals at ``ci_level`` with
    ``interval`` endpoints (:data:`INTERVALS`), ``mc_se``: each endpoint's Monte-Carlo error reported,
    ``progress``: None or ``progress(done, total)`` after each block of resamples."""

    n_boot: int = 10_000
    seed: int = 0
    ci_level: float = 0.95
    interval: str = "percentile"
    mc_se: bool = False
    progress: Callable[[int, int], Any] | None = None

    def check(self, interval_name: str | None = "interval") -> BootstrapSettings:
        """The settings, checked (``interval_name``: what the caller calls the endpoints; None: it has none)."""
        n_boot, seed = check_n_boot_seed(self.n_boot, self.seed)
        ci_level = check_ci_level(self.ci_level)
        require(interval_name is None or self.interval in INTERVALS,
                f"{interval_name} must be one of {INTERVALS}, got {self.interval!r}", field=interval_name)
        require(self.progress is None or callable(self.progress),
                f"progress must be None or a callable progress(done, total), got {self.progress!r}", field="progress")
        return dataclasses.replace(self, n_boot=n_boot, seed=seed, ci_level=ci_level)

    def paired(self, statistics: Any, aggregate: str | None = "mean") -> PairedSettings:
        """These settings for the paired engine, with its ``statistics`` and ``aggregate``."""
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(BootstrapSettings)}
        return PairedSettings(**fields, statistics=statistics, aggregate=aggregate)


@dataclass(frozen=True)
class PairedSettings(BootstrapSettings):
    """The paired engine's (:func:`voxmem_analysis.stats.paired_bootstrap_frame`): which ``statistics``
    (names, :class:`~voxmem_analysis.stats.Statistic` objects or callables) and ``aggregate``
    (``"mean"`` over series, or None: per series), besides :class:`BootstrapSettings`."""

    statistics: Any = ("drop", "retention")
    aggregate: str | None = "mean"
