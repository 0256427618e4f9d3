"""The statistics of paired per-series accuracies the bootstrap computes (paper Appendix D.4): a
:class:`Statistic` is a named function of two ``(m, k)`` accuracy arrays (``k`` series on ``m`` samples); the
factories build them, :data:`STATISTICS` names the built-ins, :func:`resolve_statistics` reads what a caller gave.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from voxmem_analysis.stats._validation import require

__all__ = ["Statistic", "STATISTICS", "difference", "ratio", "mean_difference", "mean_ratio", "mean_level",
           "resolve_statistics"]

StatFunc = Callable[[np.ndarray, np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Statistic:
    """``func(baseline, comparison)`` of two ``(m, k)`` accuracy arrays returning ``(m,)`` (a non-finite value marks
    a replicate invalid), named ``name`` (the ``statistic`` column).  ``exact``: the same on object arrays of
    :class:`fractions.Fraction`, so BCa decides ties and the jackknife exactly (:mod:`.exact`); ``linear``:
    ``(w_b, w_c)`` when it is the mean over series of ``w_b * baseline + w_c * comparison``, so its bootstrap
    law is computed exactly and a bootstrap without variation gets an interval (:mod:`.endpoints`)."""

    name: str
    func: StatFunc
    description: str = ""
    exact: StatFunc | None = None
    linear: tuple[float, float] | None = None

    def __call__(self, baseline: np.ndarray, comparison: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.asarray(self.func(baseline, comparison), dtype=float)
        m = baseline.shape[0]
        require(out.shape == (m,), f"statistic {self.name!r} must return an array of shape ({m},) for inputs of "
                f"shape {baseline.shape}, got shape {out.shape}", field="statistics")
        return out


def _times(factor: float, arr: np.ndarray) -> np.ndarray:
    """``factor * arr``, exactly when ``arr`` holds Fractions."""
    return (Fraction(factor) if arr.dtype == object else factor) * arr


def _single(arr: np.ndarray, name: str) -> np.ndarray:
    require(arr.shape[1] == 1, f"statistic {name!r} is per-series and needs exactly one series (k == 1), got "
            f"k = {arr.shape[1]}; use the mean_* variant or aggregate=None", field="statistics")
    return arr[:, 0]


def difference(*, scale: float = 100.0, reverse: bool = False, name: str = "drop") -> Statistic:
    """``scale * (baseline - comparison)`` of one series (``reverse``: the other way), labelled ``name``."""
    sign = -1.0 if reverse else 1.0

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return _times(sign * scale, _single(b, name) - _single(c, name))

    return Statistic(name, f, f"{'-' if reverse else ''}{scale:g} * (baseline - comparison)", exact=f,
                     linear=(sign * scale, -sign * scale))


def ratio(*, name: str = "retention") -> Statistic:
    """``comparison / baseline`` of one series (NaN, counted invalid, when the baseline is 0)."""

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return _single(c, name) / _single(b, name)

    return Statistic(name, f, "comparison / baseline", exact=f)


def mean_difference(*, scale: float = 100.0, reverse: bool = False, name: str = "drop") -> Statistic:
    """``scale * (mean_k baseline - mean_k comparison)`` (``reverse``: the other way; ``scale`` 100: points)."""
    sign = -1.0 if reverse else 1.0

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return _times(sign * scale, b.mean(axis=1) - c.mean(axis=1))

    return Statistic(name, f, f"{'-' if reverse else ''}{scale:g} * (mean baseline - mean "
                              "comparison) over series", exact=f, linear=(sign * scale, -sign * scale))


def mean_ratio(*, name: str = "retention") -> Statistic:
    """``mean_k comparison / mean_k baseline``: a ratio of means, as Table 18's evidence rows (NaN at a 0 baseline)."""

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return c.mean(axis=1) / b.mean(axis=1)

    return Statistic(name, f, "mean comparison / mean baseline over series", exact=f)


def mean_level(which: str = "baseline", *, scale: float = 100.0, name: str | None = None) -> Statistic:
    """``scale`` times the mean accuracy over series at ``which`` condition (``baseline``, ``comparison``)."""
    require(which in ("baseline", "comparison"), f"which must be 'baseline' or 'comparison', got {which!r}",
            field="which")
    idx = 0 if which == "baseline" else 1

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return _times(scale, (b, c)[idx].mean(axis=1))

    return Statistic(name or which, f, f"{scale:g} * mean {which} accuracy over series", exact=f,
                     linear=(scale, 0.0) if idx == 0 else (0.0, scale))


#: Built-in statistics by name; all average over the series first, so they serve one series and the mean alike.
STATISTICS: dict[str, Statistic] = {
    "drop": mean_difference(scale=100.0, name="drop"),
    "change": mean_difference(scale=100.0, reverse=True, name="change"),
    "difference": mean_difference(scale=1.0, name="difference"),
    "retention": mean_ratio(name="retention"),
    "ratio": mean_ratio(name="ratio"),
    "baseline": mean_level("baseline", name="baseline"),
    "comparison": mean_level("comparison", name="comparison"),
}


def resolve_statistics(statistics: Any) -> list[Statistic]:
    """Names / Statistic / callables / {name: callable} -> list of Statistic."""
    if isinstance(statistics, (str, Statistic)) or callable(statistics):
        statistics = [statistics]
    if isinstance(statistics, Mapping):
        items = [(str(k), v) for k, v in statistics.items()]
    else:
        require(isinstance(statistics, Sequence) and not isinstance(statistics, str),
                "statistics must be a name, a Statistic, a callable, a sequence of these or a "
                f"mapping name -> callable; got {type(statistics).__name__}", field="statistics")
        items = [(None, v) for v in statistics]
    require(len(items) > 0, "statistics is empty; give at least one statistic", field="statistics")
    out: list[Statistic] = []
    for label, s in items:
        if isinstance(s, str):
            require(s in STATISTICS, f"unknown statistic {s!r}; built-ins are "
                    f"{sorted(STATISTICS)}, or pass a callable(baseline, comparison)",
                    field="statistics")
            s = STATISTICS[s]
        elif not isinstance(s, Statistic):
            require(callable(s), f"statistic {s!r} is neither a built-in name, a Statistic "
                    "nor a callable", field="statistics")
            s = Statistic(label or getattr(s, "__name__", f"statistic_{len(out)}"), s)
        if label is not None and label != s.name:
            s = dataclasses.replace(s, name=label)
        out.append(s)
    names = [s.name for s in out]
    require(len(set(names)) == len(names), f"statistic names must be unique, got {names}", field="statistics")
    return out
