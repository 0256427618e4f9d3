"""Argument checks of the statistics modules: :func:`require` raises :class:`StatsInputError` naming the argument,
what was expected and what was received (never ``assert``, which ``python -O`` removes)."""
from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, TypeVar

import numpy as np
import pandas as pd

from voxmem_analysis.errors import StatsInputError

__all__ = ["StatsInputError", "require", "check_ci_level", "ci_level_alias", "paired_vectors", "frame_columns",
           "whole_number"]

F = TypeVar("F", bound=Callable[..., Any])


def require(condition: Any, message: str, *, field: str | None = None) -> None:
    """Raise :class:`StatsInputError` with ``message`` (``field``: the argument or column) unless ``condition``."""
    if not condition:
        raise StatsInputError(message, field=field)


def whole_number(value: Any, name: str, *, low: int = 1, high: float = float("inf"), why: str = "") -> int:
    """``value`` as an int in ``[low, high)``, else :class:`StatsInputError` ("NAME must be a positive integer")."""
    require(isinstance(value, (int, np.integer)) and not isinstance(value, bool) and low <= value < high,
            f"{name} must be a {'positive' if low > 0 else 'non-negative'} integer{why}, got {value!r}", field=name)
    return int(value)


def as_float_vector(x: Any, name: str) -> np.ndarray:
    """1-D float array of ``x`` (None, NaN, pandas NA: NaN; bools: 0/1)."""
    arr = _to_numpy(x, name)
    require(arr.ndim == 1, f"{name} must be one-dimensional, got shape {arr.shape}", field=name)
    return arr


def as_float_matrix(x: Any, name: str) -> np.ndarray:
    """2-D float array of ``x`` (1-D: one column)."""
    arr = _to_numpy(x, name)
    if arr.ndim == 1:
        arr = arr[:, None]
    require(arr.ndim == 2, f"{name} must be a 2-D (n_items, k) array, got shape {arr.shape}", field=name)
    return arr


def _to_numpy(x: Any, name: str) -> np.ndarray:
    require(x is not None, f"{name} is required, got None", field=name)
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        try:  # pandas (nullable dtypes) / polars
            x = x.to_numpy(dtype=float, na_value=np.nan)
        except TypeError:
            x = x.to_numpy()
    arr = np.asarray(x)
    if arr.dtype == object:
        try:
            arr = np.array([np.nan if _is_missing(v) else float(v) for v in arr.ravel()],
                           dtype=float).reshape(arr.shape)
        except (TypeError, ValueError) as exc:
            raise StatsInputError(f"{name} must be numeric or boolean; {exc}", field=name) from None
    require(arr.dtype.kind in "biuf", f"{name} must be numeric or boolean, got dtype {arr.dtype}", field=name)
    return arr.astype(float, copy=True)


def _is_missing(v: Any) -> bool:
    if v is None:
        return True
    try:
        return bool(v != v)  # NaN, pandas.NA raises TypeError in bool()
    except TypeError:
        return True


def frame_columns(data: Any, columns, *, error: type = StatsInputError) -> pd.DataFrame:
    """The ``columns`` (None and repeats skipped) of a pandas or polars (lazy) frame as pandas, a fresh index;
    ``error``: the :class:`~voxmem_analysis.errors.InputError` raised."""
    columns = list(dict.fromkeys(c for c in columns if c is not None))
    polars = type(data).__module__.startswith("polars")
    if polars and hasattr(data, "collect") and not hasattr(data, "to_pandas"):
        data = data.collect()
    if not (polars or isinstance(data, pd.DataFrame)):
        raise error(f"data must be a pandas or polars DataFrame, got {type(data).__name__}", field="data")
    missing = [c for c in columns if c not in data.columns]
    if missing:
        raise error(f"unknown column(s) {missing}; the data has: {', '.join(map(str, data.columns))}",
                    field=missing[0])
    return data.select(columns).to_pandas() if polars else data.loc[:, columns].reset_index(drop=True)


def check_ci_level(ci_level: Any) -> float:
    """``ci_level`` as a float in (0, 1)."""
    require(isinstance(ci_level, (float, int, np.floating)) and not isinstance(ci_level, bool)
            and 0.0 < float(ci_level) < 1.0,
            "ci_level must be a confidence level strictly between 0 and 1 (e.g. 0.95), got "
            f"{ci_level!r}", field="ci_level")
    return float(ci_level)


def ci_level_alias(func: F) -> F:
    """Accept ``ci=``, the deprecated name of ``ci_level=``, with a DeprecationWarning (both: an error)."""
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if "ci" in kwargs:
            require("ci_level" not in kwargs, f"{func.__name__}: give ci_level only (ci is its "
                    "deprecated name)", field="ci")
            warnings.warn(f"{func.__name__}(ci=...) is deprecated, use ci_level=...; ci= will be "
                          "removed in the next release", DeprecationWarning, stacklevel=2)
            kwargs["ci_level"] = kwargs.pop("ci")
        return func(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


def paired_vectors(x: Any, y: Any, names: tuple[str, str] = ("x", "y"), *,
                   binary: bool = False,
                   finite: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, y, ok)``: two equal-length float vectors and where neither is missing (``binary``: values 0/1;
    ``finite``: none infinite)."""
    a, b = (as_float_vector(v, name) for v, name in ((x, names[0]), (y, names[1])))
    require(a.shape == b.shape, f"{names[0]} and {names[1]} must have the same length, got "
            f"{a.size} and {b.size}", field=names[1])
    if binary:
        check_binary(a, names[0])
        check_binary(b, names[1])
    if finite:
        require(not (np.isinf(a).any() or np.isinf(b).any()),
                f"{names[0]} and {names[1]} must not contain infinite values", field=names[0])
    return a, b, ~np.isnan(a) & ~np.isnan(b)


def check_binary(arr: np.ndarray, name: str) -> None:
    """The non-missing entries of ``arr`` must be 0/1."""
    ok = np.isnan(arr) | (arr == 0) | (arr == 1)
    bad = arr[~ok]
    require(bad.size == 0, f"{name} must be binary (0/1 or bool, NaN for missing); found {bad.size} other "
            f"value(s), e.g. {bad[:3].tolist()}", field=name)
