"""Paired item bootstrap for accuracy changes between two conditions (paper Appendix D.4).

The paper compares each model's accuracy at a *baseline* condition (8K context) with a
*comparison* condition (64K) on the same items.  Items are the resampling unit: one bootstrap
resample draws ``n`` items with replacement, and **both** conditions of **every** series
(model) are rescored on that same draw, so the pairing between conditions and the
correlation between models are kept.

Design
------
The data are held as per-item matrices of shape ``(n_items, k)`` -- one column per series --
for the baseline scores, the comparison scores and a boolean *mask* ("this item was judged
for this series at both conditions").  A resample is a vector of multiplicities ``c`` (how
often each item was drawn; a multinomial(``n``, 1/n) draw).  Stacking ``n_boot`` of them gives
the count matrix ``C`` (``n_boot x n_items``), and the resampled sums are matrix products::

    S_base = C @ (baseline * mask)     S_comp = C @ (comparison * mask)     N = C @ mask

so per-series accuracies on every resample are ``S_base / N`` and ``S_comp / N``.  ``C`` is
drawn once per resampling-unit set (in blocks of rows to bound memory) and reused by every
statistic and every series.  Statistics are functions of the ``(n_boot, k)`` accuracy arrays.

Public API
----------
:func:`paired_bootstrap`          two per-item score vectors -> tidy frame
:func:`paired_bootstrap_matrix`   ``(n_items, k)`` matrices -> tidy frame
:func:`paired_bootstrap_frame`    long pandas/polars frame -> tidy frame (pivot + engine)
:func:`bootstrap_means`           resampled per-series masked means (the raw engine)
:func:`iter_bootstrap_counts`     the count matrix ``C``, block by block
:func:`shared_bootstrap_counts`   the same blocks, drawn once per process (read-only)
:class:`Statistic` and the factories :func:`difference`, :func:`ratio`,
:func:`mean_difference`, :func:`mean_ratio`, :func:`mean_level`; built-in names in
:data:`STATISTICS`.
"""
from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import (as_float_matrix, as_float_vector, check_ci_level,
                                               ci_level_alias, require)
from voxmem_analysis.stats.resources import check_bootstrap_memory, check_n_boot

__all__ = [
    "Statistic", "STATISTICS", "difference", "ratio", "mean_difference", "mean_ratio",
    "mean_level", "BootstrapMeans", "iter_bootstrap_counts", "shared_bootstrap_counts", "bootstrap_means",
    "paired_bootstrap", "paired_bootstrap_matrix", "paired_bootstrap_frame", "INTERVALS",
    "bootstrap_interval",
]

#: Upper bound on the number of ``int64`` draws held at once (rows x items of one block).
_BLOCK_CELLS = 4_000_000
#: Upper bound on resamples per block (the RNG is called once per stratum and block).
_BLOCK_ROWS = 1_000

StatFunc = Callable[[np.ndarray, np.ndarray], np.ndarray]


# =========================================================================================
# Statistics
# =========================================================================================

@dataclass(frozen=True)
class Statistic:
    """A named statistic of paired per-series accuracies.

    Parameters
    ----------
    name : str
        Value written to the ``statistic`` column.
    func : callable
        ``func(baseline, comparison) -> values``.  ``baseline`` and ``comparison`` are float
        arrays of shape ``(m, k)``: the accuracies (means, as proportions in [0, 1] for
        binary scores) of the ``k`` series on ``m`` samples (``m = n_boot`` for the bootstrap
        replicates, ``m = 1`` for the original sample).  Must return shape ``(m,)``.
        Non-finite values (e.g. a ratio with a zero denominator) mark a replicate invalid.
    description : str, optional
        Human-readable definition.

    Examples
    --------
    >>> import numpy as np
    >>> odds = Statistic("log_odds_ratio", lambda b, c: np.log(
    ...     (c.mean(1) / (1 - c.mean(1))) / (b.mean(1) / (1 - b.mean(1)))))
    >>> float(odds(np.array([[0.5]]), np.array([[0.5]]))[0])
    0.0
    """

    name: str
    func: StatFunc
    description: str = ""

    def __call__(self, baseline: np.ndarray, comparison: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.asarray(self.func(baseline, comparison), dtype=float)
        m = baseline.shape[0]
        require(out.shape == (m,),
                f"statistic {self.name!r} must return an array of shape ({m},) for inputs of "
                f"shape {baseline.shape}, got shape {out.shape}", field="statistics")
        return out


def _single(arr: np.ndarray, name: str) -> np.ndarray:
    require(arr.shape[1] == 1,
            f"statistic {name!r} is per-series and needs exactly one series (k == 1), got "
            f"k = {arr.shape[1]}; use the mean_* variant or aggregate=None", field="statistics")
    return arr[:, 0]


def difference(*, scale: float = 100.0, reverse: bool = False, name: str = "drop") -> Statistic:
    """Per-series difference ``scale * (baseline - comparison)`` (``k`` must be 1).

    The one-series form of :func:`mean_difference`, with the same parameters:
    :math:`\\hat\\theta = s\\,(\\bar b - \\bar c)`, with :math:`\\bar b, \\bar c` the series'
    accuracies at baseline and comparison on its paired items.

    >>> import numpy as np
    >>> float(difference()(np.array([[0.5]]), np.array([[0.3]]))[0])
    20.0
    """
    sign = -1.0 if reverse else 1.0

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return sign * scale * (_single(b, name) - _single(c, name))

    return Statistic(name, f, f"{'-' if reverse else ''}{scale:g} * (baseline - comparison)")


def ratio(*, name: str = "retention") -> Statistic:
    """Per-series ratio ``comparison / baseline`` (``k`` must be 1), labelled *name*.

    The one-series form of :func:`mean_ratio`: :math:`\\hat\\theta = \\bar c / \\bar b`; undefined
    (NaN, counted in ``n_invalid``) when :math:`\\bar b = 0`.

    >>> import numpy as np
    >>> float(ratio()(np.array([[0.5]]), np.array([[0.3]]))[0])
    0.6
    """

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return _single(c, name) / _single(b, name)

    return Statistic(name, f, "comparison / baseline")


def mean_difference(*, scale: float = 100.0, reverse: bool = False,
                    name: str = "drop") -> Statistic:
    """Mean over series, then difference: ``scale * (mean_k baseline - mean_k comparison)``.

    Parameters
    ----------
    scale : float, default 100.0
        Multiplier; 100 gives percentage points.
    reverse : bool, default False
        If true, ``comparison - baseline``.
    name : str, default "drop"
        Label in the ``statistic`` column.

    Returns
    -------
    Statistic

    Notes
    -----
    :math:`\\hat\\theta = s\\,(\\tfrac1k\\sum_j \\bar b_j - \\tfrac1k\\sum_j \\bar c_j)`.
    Equal to the mean of the per-series differences; with ``k = 1`` it is :func:`difference`.

    Examples
    --------
    >>> import numpy as np
    >>> b, c = np.array([[0.6, 0.4]]), np.array([[0.3, 0.3]])
    >>> float(mean_difference()(b, c)[0])
    20.0
    """
    sign = -1.0 if reverse else 1.0

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return sign * scale * (b.mean(axis=1) - c.mean(axis=1))

    return Statistic(name, f, f"{'-' if reverse else ''}{scale:g} * (mean baseline - mean "
                              "comparison) over series")


def mean_ratio(*, name: str = "retention") -> Statistic:
    """Mean over series, then ratio: ``mean_k comparison / mean_k baseline``, labelled *name*.

    :math:`\\hat\\theta = \\sum_j \\bar c_j / \\sum_j \\bar b_j` (a ratio of means, as the
    paper's evidence-type rows of Table 18; not the mean of per-series ratios).  NaN when
    the mean baseline accuracy is 0.

    >>> import numpy as np
    >>> b, c = np.array([[0.6, 0.4]]), np.array([[0.3, 0.3]])
    >>> float(mean_ratio()(b, c)[0])
    0.6
    """

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return c.mean(axis=1) / b.mean(axis=1)

    return Statistic(name, f, "mean comparison / mean baseline over series")


def mean_level(which: str = "baseline", *, scale: float = 100.0,
               name: str | None = None) -> Statistic:
    """Mean accuracy over series at one condition, times *scale* (100 gives %).

    Parameters
    ----------
    which : {"baseline", "comparison"}
        The condition.
    scale : float, default 100.0
        Multiplier.
    name : str, optional
        Label; defaults to *which*.

    Returns
    -------
    Statistic

    Notes
    -----
    :math:`\\hat\\theta = s\\,\\tfrac1k\\sum_j \\bar b_j` (or :math:`\\bar c_j`).

    Examples
    --------
    >>> import numpy as np
    >>> float(mean_level("comparison")(np.array([[0.5]]), np.array([[0.25]]))[0])
    25.0
    """
    require(which in ("baseline", "comparison"),
            f"which must be 'baseline' or 'comparison', got {which!r}", field="which")
    idx = 0 if which == "baseline" else 1

    def f(b: np.ndarray, c: np.ndarray) -> np.ndarray:
        return scale * (b, c)[idx].mean(axis=1)

    return Statistic(name or which, f, f"{scale:g} * mean {which} accuracy over series")


#: Built-in statistics by name.  All average over the series first, so they apply to one
#: series (``aggregate=None``) and to the mean over series (``aggregate="mean"``) alike.
STATISTICS: dict[str, Statistic] = {
    "drop": mean_difference(scale=100.0, name="drop"),
    "change": mean_difference(scale=100.0, reverse=True, name="change"),
    "difference": mean_difference(scale=1.0, name="difference"),
    "retention": mean_ratio(name="retention"),
    "ratio": mean_ratio(name="ratio"),
    "baseline": mean_level("baseline", name="baseline"),
    "comparison": mean_level("comparison", name="comparison"),
}


def _resolve_statistics(statistics: Any) -> list[Statistic]:
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
    require(len(items) > 0, "statistics is empty; give at least one statistic",
            field="statistics")
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
            s = Statistic(label, s.func, s.description)
        out.append(s)
    names = [s.name for s in out]
    require(len(set(names)) == len(names), f"statistic names must be unique, got {names}",
            field="statistics")
    return out


# =========================================================================================
# Resampling engine
# =========================================================================================

def _check_n_boot_seed(n_boot: Any, seed: Any) -> tuple[int, int]:
    require(isinstance(n_boot, (int, np.integer)) and not isinstance(n_boot, bool)
            and n_boot >= 1, f"n_boot must be a positive integer, got {n_boot!r}",
            field="n_boot")
    check_n_boot(n_boot)
    require(isinstance(seed, (int, np.integer)) and not isinstance(seed, bool) and seed >= 0,
            f"seed must be a non-negative integer (it is passed to numpy.random.default_rng "
            f"and reported in the output), got {seed!r}", field="seed")
    return int(n_boot), int(seed)


def _check_settings(statistics: Any, aggregate: Any, n_boot: Any, seed: Any, ci_level: Any,
                    interval: Any) -> tuple[list[Statistic], int, int, float]:
    """The checks every paired entry point makes of its settings (statistics, n_boot, seed, ...)."""
    require(aggregate in ("mean", None), f"aggregate must be 'mean' or None, got {aggregate!r}",
            field="aggregate")
    stats = _resolve_statistics(statistics)
    n_boot, seed = _check_n_boot_seed(n_boot, seed)
    ci_level = check_ci_level(ci_level)
    require(interval in INTERVALS, f"interval must be one of {INTERVALS}, got {interval!r}",
            field="interval")
    return stats, n_boot, seed, ci_level


def _strata_codes(strata: Any, n: int) -> np.ndarray | None:
    if strata is None:
        return None
    arr = np.asarray(strata.to_numpy() if hasattr(strata, "to_numpy") else strata)
    require(arr.ndim == 1 and arr.shape[0] == n,
            f"strata must be one label per item (length {n}), got shape {arr.shape}",
            field="strata")
    codes, _ = pd.factorize(arr, sort=True, use_na_sentinel=False)
    return codes.astype(np.intp)


def iter_bootstrap_counts(n_units: int, *, n_boot: int = 10_000, seed: int = 0,
                          strata: Any = None, clusters: Any = None) -> Iterator[np.ndarray]:
    """Yield the bootstrap count matrix ``C`` in blocks of resamples.

    Parameters
    ----------
    n_units : int
        Number of resampling units (items).
    n_boot : int, default 10_000
        Number of resamples (rows of ``C``).
    seed : int, default 0
        Seed for ``numpy.random.default_rng``.
    strata : array-like of length n_units, optional
        Stratum label per unit; units are then drawn with replacement within each stratum,
        keeping every stratum's size fixed.
    clusters : array-like of length n_units, optional
        Cluster label per unit (e.g. the question family).  Whole clusters are then drawn
        with replacement (within strata, which must be constant within a cluster), and every
        unit of a drawn cluster gets the cluster's count.

    Yields
    ------
    counts : ndarray of float64, shape (rows, n_units)
        ``counts[r, i]`` is how often unit ``i`` was drawn in resample ``r``; each row sums
        to ``n_units`` (and to the stratum size within each stratum).

    Notes
    -----
    Row ``r`` is a multinomial(:math:`n`, :math:`(1/n, \\dots, 1/n)`) vector, obtained by
    drawing :math:`n` indices uniformly with ``Generator.integers`` and counting them
    (``bincount``), which is much faster than ``Generator.multinomial``.  With strata, each
    stratum :math:`s` gets an independent multinomial(:math:`n_s`, uniform) over its units.
    The stream is consumed block by block (at most 1,000 rows, at most 4 million draws per
    block), strata in sorted label order, so ``C`` depends only on ``n_units``, ``n_boot``,
    ``seed`` and the strata (indices are drawn as ``int32``).  With clusters, the cluster
    count matrix is drawn exactly as above with the clusters as units (in sorted label
    order) and expanded to the units, so rows no longer sum to ``n_units`` exactly.

    Examples
    --------
    >>> import numpy as np
    >>> C = np.vstack(list(iter_bootstrap_counts(5, n_boot=3, seed=1)))
    >>> C.shape, C.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    """
    require(isinstance(n_units, (int, np.integer)) and 1 <= n_units < 2**31,
            f"n_units must be a positive integer, got {n_units!r}", field="n_units")
    n_boot, seed = _check_n_boot_seed(n_boot, seed)
    n_units = int(n_units)
    if clusters is not None:
        yield from _cluster_counts(n_units, n_boot=n_boot, seed=seed, strata=strata,
                                   clusters=clusters)
        return
    codes = _strata_codes(strata, n_units)
    members = None if codes is None else [np.flatnonzero(codes == s)
                                          for s in range(int(codes.max()) + 1)]
    rng = np.random.default_rng(seed)
    block = int(max(1, min(_BLOCK_ROWS, _BLOCK_CELLS // n_units)))
    for start in range(0, n_boot, block):
        rows = min(block, n_boot - start)
        if members is None:
            flat = rng.integers(0, n_units, size=(rows, n_units), dtype=np.int32)
        else:
            flat = np.empty((rows, n_units), dtype=np.int32)
            for m in members:
                flat[:, m] = m[rng.integers(0, m.size, size=(rows, m.size), dtype=np.int32)]
        flat += (np.arange(rows, dtype=np.int32) * n_units)[:, None]
        counts = np.bincount(flat.ravel(), minlength=rows * n_units)
        yield counts.reshape(rows, n_units).astype(np.float64)


#: Bytes of count matrices :func:`shared_bootstrap_counts` keeps per process (least recently used
#: first out); a matrix larger than half of it is drawn afresh on every call.
_SHARED_COUNTS_BYTES = 128 * 2**20
_SHARED_COUNTS: dict[tuple, tuple[np.ndarray, ...]] = {}
_SHARED_COUNTS_LOCK = threading.Lock()


def shared_bootstrap_counts(n_units: int, *, n_boot: int = 10_000, seed: int = 0,
                            strata: Any = None) -> Iterable[np.ndarray]:
    """The blocks of :func:`iter_bootstrap_counts` ``(n_units, n_boot=, seed=, strata=)``, the same
    values, drawn once per process and shared: read-only arrays, for callers that only read them.

    An analysis that slices by model and subtype asks for the same count matrix once per model
    (the subtype's items, the same seed): the explorer drew 276 matrices, 33 of them distinct.
    The draw depends only on ``n_units``, ``n_boot``, ``seed`` and the partition of the units into
    strata (sorted label order), which is the key.  At most :data:`_SHARED_COUNTS_BYTES` (128 MiB)
    are kept; a matrix over half of that is not kept but streamed block by block, as
    :func:`iter_bootstrap_counts` does, so memory stays bounded.
    """
    require(isinstance(n_units, (int, np.integer)) and 1 <= n_units < 2**31,
            f"n_units must be a positive integer, got {n_units!r}", field="n_units")
    n_boot, seed = _check_n_boot_seed(n_boot, seed)
    codes = _strata_codes(strata, int(n_units))
    size = int(n_boot) * int(n_units) * 8
    if size > _SHARED_COUNTS_BYTES // 2:
        return iter_bootstrap_counts(n_units, n_boot=n_boot, seed=seed, strata=codes)
    key = (int(n_units), n_boot, seed, None if codes is None else codes.astype(np.int64).tobytes())
    with _SHARED_COUNTS_LOCK:
        blocks = _SHARED_COUNTS.pop(key, None)
        if blocks is None:
            blocks = tuple(iter_bootstrap_counts(n_units, n_boot=n_boot, seed=seed, strata=codes))
            for b in blocks:
                b.flags.writeable = False
        _SHARED_COUNTS[key] = blocks            # most recently used last
        total = sum(sum(b.nbytes for b in v) for v in _SHARED_COUNTS.values())
        while total > _SHARED_COUNTS_BYTES and len(_SHARED_COUNTS) > 1:
            oldest = next(iter(_SHARED_COUNTS))
            total -= sum(b.nbytes for b in _SHARED_COUNTS.pop(oldest))
    return blocks


def _cluster_counts(n_units: int, *, n_boot: int, seed: int, strata: Any,
                    clusters: Any) -> Iterator[np.ndarray]:
    """Cluster-level count matrix blocks expanded to the units (see iter_bootstrap_counts)."""
    ccodes = _strata_codes(clusters, n_units)
    require(ccodes is not None, "clusters must give one label per unit", field="clusters")
    n_clusters = int(ccodes.max()) + 1
    cstrata = None
    if strata is not None:
        scodes = _strata_codes(strata, n_units)
        per = pd.DataFrame({"c": ccodes, "s": scodes})
        nun = per.groupby("c")["s"].nunique()
        require((nun <= 1).all(), f"strata must be constant within a cluster; "
                f"{int((nun > 1).sum())} cluster(s) span several strata", field="strata")
        cstrata = per.drop_duplicates("c").sort_values("c")["s"].to_numpy()
    for Cc in iter_bootstrap_counts(n_clusters, n_boot=n_boot, seed=seed, strata=cstrata):
        yield Cc[:, ccodes]


def _resampled_sums(A: np.ndarray, *, n_boot: int, seed: int, strata: np.ndarray | None,
                    clusters: np.ndarray | None = None) -> np.ndarray:
    """``C @ A`` for the count matrix of (n_boot, seed, strata, clusters), block by block."""
    out = np.empty((n_boot, A.shape[1]), dtype=np.float64)
    r = 0
    if clusters is not None:  # C @ A == Cc @ (A summed within clusters): far fewer columns
        A = pd.DataFrame(A).groupby(clusters, sort=True).sum().to_numpy()
        strata = None if strata is None else pd.Series(strata).groupby(
            clusters, sort=True).first().to_numpy()
    with _single_threaded_blas():
        for C in shared_bootstrap_counts(A.shape[0], n_boot=n_boot, seed=seed, strata=strata):
            out[r:r + C.shape[0]] = C @ A
            r += C.shape[0]
    return out


def _single_threaded_blas():
    """Context limiting BLAS to one thread (if threadpoolctl is installed).

    The products here are thin (``A`` has a few dozen columns); multi-threaded OpenBLAS gains
    nothing on them and, on a loaded machine, was measured 20x slower than one thread.
    """
    global _BLAS_CONTROLLER
    if _BLAS_CONTROLLER is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - optional dependency
            _BLAS_CONTROLLER = False
        else:  # scanning the loaded libraries costs ~4 ms: do it once
            _BLAS_CONTROLLER = ThreadpoolController()
    if _BLAS_CONTROLLER is False:
        return contextlib.nullcontext()
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")


_BLAS_CONTROLLER = None


class BootstrapMeans(NamedTuple):
    """Result of :func:`bootstrap_means`.

    Attributes
    ----------
    estimate : ndarray, shape (k,)
        Masked mean of each column on the original sample.
    replicates : ndarray, shape (n_boot, k)
        Masked mean of each column on every resample (NaN where a resample holds no
        observation of that column).
    n : ndarray of int, shape (k,)
        Observations per column on the original sample.
    n_units : int
        Resampling units (rows with at least one observation).
    """

    estimate: np.ndarray
    replicates: np.ndarray
    n: np.ndarray
    n_units: int


def bootstrap_means(values: Any, mask: Any = None, *, n_boot: int = 10_000, seed: int = 0,
                    strata: Any = None) -> BootstrapMeans:
    """Bootstrap the masked column means of a per-item matrix, resampling rows.

    Parameters
    ----------
    values : array-like, shape (n_items, k)
        Per-item scores (e.g. 0/1 correctness); NaN marks a missing observation.
    mask : array-like of bool, shape (n_items, k), optional
        ``True`` where the observation counts; combined (AND) with ``~isnan(values)``.
    n_boot : int, default 10_000
        Number of resamples.
    seed : int, default 0
        Seed for ``numpy.random.default_rng``.
    strata : array-like of length n_items, optional
        Resample rows within these strata.

    Returns
    -------
    BootstrapMeans
        Named tuple ``(estimate, replicates, n, n_units)``; see :class:`BootstrapMeans`.

    Notes
    -----
    Rows without any observation are dropped first (they carry no data).  With
    :math:`W = \\text{values} \\odot M` and count matrix :math:`C`, the replicate means are
    :math:`(C W)_{rj} / (C M)_{rj}`, one matrix product for all columns.

    Examples
    --------
    >>> import numpy as np
    >>> res = bootstrap_means(np.array([[1.0, 0.0], [0.0, np.nan], [1.0, 1.0]]),
    ...                       n_boot=200, seed=0)
    >>> res.estimate.round(3).tolist(), res.n.tolist(), res.replicates.shape
    ([0.667, 0.5], [3, 2], (200, 2))
    """
    V = as_float_matrix(values, "values")
    require(not np.isinf(V).any(), "values must be finite (NaN = missing), found inf",
            field="values")
    M = _combine_mask(mask, V.shape, ~np.isnan(V))
    n_boot, seed = _check_n_boot_seed(n_boot, seed)
    codes = _strata_codes(strata, V.shape[0])
    keep = M.any(axis=1)
    require(keep.any(), "values holds no observation (all NaN or masked)", field="values")
    V, M = V[keep], M[keep]
    codes = None if codes is None else codes[keep]
    k = V.shape[1]
    A = np.hstack([np.where(M, V, 0.0), M.astype(np.float64)])
    check_bootstrap_memory(n_boot, A.shape[1], arrays=2, what="bootstrap_means")
    with np.errstate(divide="ignore", invalid="ignore"):
        tot = A.sum(axis=0)
        est = tot[:k] / tot[k:]
        S = _resampled_sums(A, n_boot=n_boot, seed=seed, strata=codes)
        reps = S[:, :k] / S[:, k:]
    return BootstrapMeans(est, reps, M.sum(axis=0).astype(int), int(V.shape[0]))


def _combine_mask(mask: Any, shape: tuple[int, ...], base: np.ndarray) -> np.ndarray:
    if mask is None:
        return base
    m = np.asarray(mask.to_numpy() if hasattr(mask, "to_numpy") else mask)
    if m.ndim == 1 and len(shape) == 2 and shape[1] == 1:
        m = m[:, None]
    require(m.shape == tuple(shape), f"mask must have the shape of the values {tuple(shape)}, "
            f"got {m.shape}", field="mask")
    require(m.dtype == bool or (m.dtype.kind in "iu" and np.isin(m, (0, 1)).all()),
            f"mask must be boolean (True = judged), got dtype {m.dtype}", field="mask")
    return base & m.astype(bool)


# =========================================================================================
# Summaries
# =========================================================================================

def _quantile_mc_se(valid: np.ndarray, q: float) -> float:
    """Monte-Carlo standard error of the *q*-quantile of *valid* replicates.

    The quantile's own sampling error over resamples: with B replicates the empirical
    q-quantile has standard error about sqrt(q (1 - q) / B) / f(x_q); the density f is
    estimated by the difference quotient of the empirical quantile function, so
    SE ~ (Q(q + d) - Q(q - d)) / 2 with d = sqrt(q (1 - q) / B) (a sectioning-free,
    distribution-free estimate; Hall & Martin 1988).
    """
    b = valid.size
    if b < 2 or not 0.0 < q < 1.0:
        return float("nan")
    d = np.sqrt(q * (1 - q) / b)
    lo, hi = np.quantile(valid, [max(q - d, 0.0), min(q + d, 1.0)])
    return float((hi - lo) / 2.0)


def _bca_levels(valid: np.ndarray, est: float, jack: np.ndarray | None,
                ci_level: float) -> tuple[float, float]:
    """Adjusted percentile levels of the BCa interval (Efron 1987); NaN if undefined."""
    from scipy.stats import norm

    alpha = 1.0 - ci_level
    if jack is None or not np.isfinite(est):
        return float("nan"), float("nan")
    # bias correction, ties split half/half (scores are 0/1: replicates tie often)
    frac = (np.sum(valid < est) + 0.5 * np.sum(valid == est)) / valid.size
    jack = jack[np.isfinite(jack)]
    if not 0.0 < frac < 1.0 or jack.size < 3:
        return float("nan"), float("nan")
    z0 = norm.ppf(frac)
    dev = jack.mean() - jack
    den = 6.0 * np.sum(dev ** 2) ** 1.5
    a = float(np.sum(dev ** 3) / den) if den > 0 else 0.0
    zs = norm.ppf([alpha / 2, 1 - alpha / 2])
    levels = norm.cdf(z0 + (z0 + zs) / (1 - a * (z0 + zs)))
    return float(levels[0]), float(levels[1])


def _interval(reps: np.ndarray, est: float, ci_level: float, method: str,
              jack: np.ndarray | None = None) -> dict:
    """Interval, invalid count and Monte-Carlo SE of each endpoint for one statistic."""
    reps = np.where(np.isfinite(reps), reps, np.nan)
    valid = reps[~np.isnan(reps)]
    n_invalid = int(reps.size - valid.size)
    out = {"ci_low": float("nan"), "ci_high": float("nan"), "n_invalid": n_invalid,
           "ci_low_mc_se": float("nan"), "ci_high_mc_se": float("nan")}
    if valid.size == 0:
        return out
    alpha = 1.0 - ci_level
    if method == "bca":
        q_lo, q_hi = _bca_levels(valid, est, jack, ci_level)
        if not np.isfinite(q_lo):
            return out
        lo, hi = np.quantile(valid, [q_lo, q_hi])
    else:
        q_lo, q_hi = alpha / 2, 1 - alpha / 2
        lo, hi = np.nanpercentile(reps, [100 * q_lo, 100 * q_hi])
    out.update(ci_low=float(lo), ci_high=float(hi), ci_low_mc_se=_quantile_mc_se(valid, q_lo),
               ci_high_mc_se=_quantile_mc_se(valid, q_hi))
    return out


def _finite_or_nan(x: float) -> float:
    return float(x) if np.isfinite(x) else float("nan")


_RESULT_COLUMNS = ["statistic", "estimate", "ci_low", "ci_high", "n", "n_series", "n_invalid",
                   "n_boot", "seed", "ci_level", "interval", "ci_low_mc_se", "ci_high_mc_se",
                   "cluster", "n_clusters", "design_effect"]
INTERVALS = ("percentile", "bca")


def bootstrap_interval(replicates: Any, estimate: float, *, ci_level: float = 0.95,
                       method: str = "percentile", jackknife: Any = None) -> dict:
    """Interval of one statistic from its bootstrap replicates, as the paired engine computes it.

    For bootstraps run elsewhere (e.g. the slice accuracies of
    :func:`voxmem_analysis.analysis.verdicts.slice_accuracy`): the same endpoints and the same
    Monte-Carlo standard errors as the ``ci_low, ci_high, ci_low_mc_se, ci_high_mc_se`` columns of
    :func:`paired_bootstrap_matrix`.

    Parameters
    ----------
    replicates : array-like of float
        The statistic on each resample; non-finite values are invalid (dropped, counted).
    estimate : float
        The statistic on the original sample (BCa's bias correction).
    ci_level : float, default 0.95
    method : {"percentile", "bca"}
    jackknife : array-like of float, optional
        Leave-one-unit-out values of the statistic (BCa's acceleration; required for "bca").

    Returns
    -------
    dict
        ``ci_low, ci_high, n_invalid, ci_low_mc_se, ci_high_mc_se`` (NaN where undefined).
    """
    require(method in INTERVALS, f"interval must be one of {INTERVALS}, got {method!r}", field="interval")
    require(method != "bca" or jackknife is not None, "the BCa interval needs the jackknife values",
            field="jackknife")
    jack = None if jackknife is None else np.asarray(jackknife, dtype=float)
    return _interval(np.asarray(replicates, dtype=float), float(estimate), check_ci_level(ci_level), method, jack)


def _accuracies(A: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Baseline and comparison accuracies from stacked sums ``[B*M | C*M | M]`` (rows)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return A[:, :k] / A[:, 2 * k:], A[:, k:2 * k] / A[:, 2 * k:]


def _jackknife(A: np.ndarray, k: int, clusters: np.ndarray | None):
    """Leave-one-unit-out accuracies (unit = cluster when given), for BCa's acceleration."""
    U = A if clusters is None else pd.DataFrame(A).groupby(clusters, sort=True).sum().to_numpy()
    return _accuracies(U.sum(axis=0)[None, :] - U, k)


def _paired_core(B: np.ndarray, Cm: np.ndarray, M: np.ndarray, *, stats: list[Statistic],
                 aggregate: str | None, series: Sequence[Any], n_boot: int, seed: int,
                 ci_level: float, strata: np.ndarray | None, clusters: np.ndarray | None = None,
                 cluster_name: str = "item", interval: str = "percentile") -> list[dict]:
    """Engine shared by the three public entry points; returns result rows (dicts).

    With ``clusters`` the resampling draws whole clusters, and the item-level bootstrap is
    run as well (same seed) to report the design effect: the variance of the statistic's
    replicates under cluster resampling over its variance under item resampling.
    """
    keep = M.any(axis=1)
    require(keep.any(), "no item is judged at both conditions for any series; nothing to "
            "bootstrap", field="mask")
    B, Cm, M = B[keep], Cm[keep], M[keep]
    strata = None if strata is None else strata[keep]
    clusters = None if clusters is None else pd.factorize(clusters[keep], sort=True)[0]
    if clusters is not None and strata is not None:
        nun = pd.Series(strata).groupby(clusters).nunique()
        require((nun <= 1).all(), f"strata must be constant within a {cluster_name} cluster; "
                f"{int((nun > 1).sum())} cluster(s) span several strata", field="strata")
    n_units, k = M.shape
    A = np.hstack([np.where(M, B, 0.0), np.where(M, Cm, 0.0), M.astype(np.float64)])
    # resampled sums (3k columns) + the two accuracy arrays (2k) + one statistic's replicates (k);
    # twice the sums and accuracies with clusters (the item-level run for the design effect)
    check_bootstrap_memory(n_boot, k, arrays=(11 if clusters is not None else 6), what="the paired bootstrap")
    est_b, est_c = _accuracies(A.sum(axis=0)[None, :], k)
    rep_b, rep_c = _accuracies(_resampled_sums(A, n_boot=n_boot, seed=seed, strata=strata,
                                               clusters=clusters), k)
    item_reps = None
    if clusters is not None:
        item_reps = _accuracies(_resampled_sums(A, n_boot=n_boot, seed=seed, strata=strata), k)
    jack = _jackknife(A, k, clusters) if interval == "bca" else None
    n_clusters = n_units if clusters is None else int(clusters.max()) + 1
    common = {"n_boot": n_boot, "seed": seed, "ci_level": ci_level, "interval": interval,
              "cluster": cluster_name, "n_clusters": n_clusters}

    def one(s: Statistic, sl: slice) -> dict:
        est = _finite_or_nan(s(est_b[:, sl], est_c[:, sl])[0])
        reps = s(rep_b[:, sl], rep_c[:, sl])
        jk = None if jack is None else s(jack[0][:, sl], jack[1][:, sl])
        row = {"statistic": s.name, "estimate": est, **_interval(reps, est, ci_level, interval, jk)}
        deff = 1.0
        if item_reps is not None:
            v_item = _finite_var(s(item_reps[0][:, sl], item_reps[1][:, sl]))
            deff = _finite_var(reps) / v_item if v_item > 0 else float("nan")
        return {**row, "design_effect": deff, **common}

    rows: list[dict] = []
    if aggregate == "mean":
        for s in stats:
            rows.append({**one(s, slice(None)), "n": int(n_units), "n_series": int(k)})
    else:
        n_per_series = M.sum(axis=0)
        for j in range(k):
            for s in stats:
                rows.append({"series": series[j], **one(s, slice(j, j + 1)),
                             "n": int(n_per_series[j]), "n_series": 1})
    return rows


def _finite_var(reps: np.ndarray) -> float:
    v = reps[np.isfinite(reps)]
    return float(np.var(v, ddof=1)) if v.size > 1 else float("nan")


# =========================================================================================
# Public entry points
# =========================================================================================

@ci_level_alias
def paired_bootstrap_matrix(baseline: Any, comparison: Any, mask: Any = None, *,
                            statistics: Any = ("drop", "retention"),
                            aggregate: str | None = "mean", series: Sequence[Any] | None = None,
                            n_boot: int = 10_000, seed: int = 0, ci_level: float = 0.95,
                            strata: Any = None, clusters: Any = None,
                            interval: str = "percentile") -> pd.DataFrame:
    """Paired item bootstrap of statistics of ``k`` series measured at two conditions.

    Parameters
    ----------
    baseline, comparison : array-like, shape (n_items, k)
        Per-item scores of each series (column) at the baseline (e.g. 8K) and comparison
        (e.g. 64K) condition; row ``i`` is the same item in both.  NaN = not judged.
    mask : array-like of bool, shape (n_items, k), optional
        ``True`` where the item was judged for the series at both conditions.  The pair
        enters a series' accuracy only where ``mask`` holds and neither score is NaN, so both
        conditions of a series are always computed on identical items.
    statistics : str, Statistic, callable, sequence or mapping, default ("drop", "retention")
        Built-in names (:data:`STATISTICS`: ``drop`` = 100 (baseline - comparison) in pp,
        ``change`` = its negative, ``difference`` = raw baseline - comparison, ``retention``
        / ``ratio`` = comparison / baseline, ``baseline`` / ``comparison`` = accuracy in %),
        :class:`Statistic` objects, callables ``f(baseline, comparison) -> (m,)`` on the
        ``(m, k)`` accuracy arrays, or a mapping ``{name: callable}``.
    aggregate : {"mean", None}, default "mean"
        ``"mean"``: each statistic sees all ``k`` series (built-ins average accuracy over
        series first) -> one row per statistic.  ``None``: one row per series x statistic,
        the statistic seeing that series alone.
    series : sequence, optional
        Labels of the ``k`` series for the ``series`` column (default ``0 .. k-1``).
    n_boot : int, default 10_000
        Number of resamples.
    seed : int, default 0
        Seed for ``numpy.random.default_rng``; same inputs and seed give identical output.
    ci_level : float, default 0.95
        Confidence level of the interval (``ci=`` is its deprecated name).
    strata : array-like of length n_items, optional
        Resample items within these strata (e.g. evidence type), keeping their sizes fixed.
    clusters : array-like of length n_items, optional
        Cluster label per item (e.g. ``family_id``): resample whole clusters instead of
        items (:func:`iter_bootstrap_counts`), and report the design effect.
    interval : {"percentile", "bca"}, default "percentile"
        Percentile interval, or bias-corrected and accelerated (BCa; acceleration from the
        leave-one-unit-out jackknife, unit = cluster when clustered).

    Returns
    -------
    pandas.DataFrame
        One row per statistic (``aggregate="mean"``) or per series x statistic (``None``),
        columns:

        - ``series`` -- series label (only when ``aggregate=None``);
        - ``statistic`` -- statistic name;
        - ``estimate`` -- the statistic on the original sample (not the bootstrap mean);
        - ``ci_low``, ``ci_high`` -- percentile interval endpoints over the valid replicates;
        - ``n`` -- items: resampling units (items judged for at least one series) for
          ``"mean"``, the series' paired items for ``None``;
        - ``n_series`` -- series the statistic averages over (1 for per-series rows);
        - ``n_invalid`` -- replicates where the statistic was not finite (excluded);
        - ``n_boot``, ``seed``, ``ci_level``, ``interval`` -- the settings used;
        - ``ci_low_mc_se``, ``ci_high_mc_se`` -- Monte-Carlo standard error of each endpoint
          (the resampling noise of the interval itself, not sampling error): about
          ``sqrt(q (1 - q) / n_boot) / f(endpoint)``; to bring it to a target ``t``, use
          ``n_boot * (mc_se / t) ** 2`` resamples;
        - ``cluster`` -- the resampling unit (``"item"``, or the cluster column's name);
          ``n_clusters`` -- units resampled (clusters, or items when item-level);
        - ``design_effect`` -- replicate variance under cluster resampling over that under
          item resampling (same seed); 1.0 for item-level rows.

    Notes
    -----
    Let :math:`M_{ij}` indicate that item :math:`i` is paired for series :math:`j` and
    :math:`C` be the :math:`B \\times n` bootstrap count matrix
    (:func:`iter_bootstrap_counts`).  Replicate accuracies are

    .. math:: b^*_{rj} = \\frac{(C\\,(b \\odot M))_{rj}}{(C M)_{rj}}, \\qquad
              c^*_{rj} = \\frac{(C\\,(c \\odot M))_{rj}}{(C M)_{rj}},

    so baseline and comparison are rescored on the same draw, and all series share it.
    The interval is :math:`[q_{\\alpha/2}, q_{1-\\alpha/2}]` of the replicate statistics
    (``numpy.nanpercentile``, linear interpolation), :math:`\\alpha = 1 - \\text{ci\\_level}`.
    A replicate whose statistic is not finite -- e.g. a ratio whose baseline accuracy is 0
    on that resample, or a series that drew none of its items -- is *invalid*: it is
    dropped from the percentiles and counted in ``n_invalid``.  The interval is then
    conditional on the statistic being defined; inspect ``n_invalid`` (a few per 10,000 is
    harmless, a large share means the statistic is ill-posed for the data).  Items that no
    series judged at both conditions are removed before resampling.

    Examples
    --------
    >>> import numpy as np
    >>> base = np.array([[1, 1], [1, 0], [0, 1], [1, 1], [0, 0]], dtype=float)
    >>> comp = np.array([[1, 0], [0, 0], [0, 1], [1, 0], [0, 0]], dtype=float)
    >>> out = paired_bootstrap_matrix(base, comp, n_boot=1000, seed=0)
    >>> out[["statistic", "estimate", "n", "n_series"]]
       statistic  estimate  n  n_series
    0       drop      30.0  5         2
    1  retention       0.5  5         2
    """
    B = as_float_matrix(baseline, "baseline")
    Cm = as_float_matrix(comparison, "comparison")
    require(B.shape == Cm.shape, f"baseline and comparison must have the same shape, got "
            f"{B.shape} and {Cm.shape}", field="comparison")
    require(not (np.isinf(B).any() or np.isinf(Cm).any()),
            "baseline and comparison must be finite scores (NaN = not judged), found inf",
            field="baseline")
    M = _combine_mask(mask, B.shape, ~np.isnan(B) & ~np.isnan(Cm))
    stats, n_boot, seed, ci_level = _check_settings(statistics, aggregate, n_boot, seed, ci_level,
                                                    interval)
    k = B.shape[1]
    labels = list(range(k)) if series is None else list(series)
    require(len(labels) == k, f"series must give one label per column ({k}), got "
            f"{len(labels)}", field="series")
    codes = _strata_codes(strata, B.shape[0])
    ccodes = _strata_codes(clusters, B.shape[0])
    rows = _paired_core(B, Cm, M, stats=stats, aggregate=aggregate, series=labels,
                        n_boot=n_boot, seed=seed, ci_level=ci_level, strata=codes, clusters=ccodes,
                        cluster_name="item" if clusters is None else "cluster",
                        interval=interval)
    cols = (["series"] if aggregate is None else []) + _RESULT_COLUMNS
    return pd.DataFrame(rows, columns=cols)


@ci_level_alias
def paired_bootstrap(x: Any, y: Any, statistic: Any = "difference", *, n_boot: int = 10_000,
                     seed: int = 0, ci_level: float = 0.95, strata: Any = None, clusters: Any = None,
                     interval: str = "percentile") -> pd.DataFrame:
    """Paired bootstrap for two per-item score vectors (``x`` = baseline, ``y`` = comparison).

    Parameters
    ----------
    x, y : array-like, shape (n,)
        Scores of the same ``n`` items under the baseline and the comparison condition.
        A pair with NaN/None on either side is dropped.
    statistic : str, Statistic, callable, sequence or mapping, default "difference"
        As ``statistics`` in :func:`paired_bootstrap_matrix`; ``"difference"`` is
        ``mean(x) - mean(y)``, ``"drop"`` the same in percentage points, ``"ratio"`` /
        ``"retention"`` is ``mean(y) / mean(x)``.  A callable receives two ``(m, 1)`` arrays
        of resampled means.
    n_boot : int, default 10_000
        Number of resamples.
    seed : int, default 0
        Seed for ``numpy.random.default_rng``.
    ci_level : float, default 0.95
        Confidence level (``ci=``: deprecated name).
    strata : array-like of length n, optional
        Resample within strata.
    clusters : array-like of length n, optional
        Resample whole clusters (see :func:`paired_bootstrap_matrix`).
    interval : {"percentile", "bca"}, default "percentile"
        Interval method.

    Returns
    -------
    pandas.DataFrame
        One row per statistic; the columns of :func:`paired_bootstrap_matrix` without
        ``n_series`` (``n`` = complete pairs).

    Notes
    -----
    The special case ``k = 1`` of :func:`paired_bootstrap_matrix`: resample pair indices
    :math:`i^*_1..i^*_n` with replacement and recompute :math:`\\bar x^*`, :math:`\\bar y^*`
    from the same indices; percentile interval of :math:`\\theta(\\bar x^*, \\bar y^*)`.

    Examples
    --------
    >>> x = [1, 1, 1, 0, 1, 0, 1, 1]
    >>> y = [1, 0, 1, 0, 0, 0, 1, 0]
    >>> out = paired_bootstrap(x, y, ["drop", "retention"], n_boot=2000, seed=0)
    >>> out[["statistic", "estimate", "n"]]
       statistic  estimate  n
    0       drop      37.5  8
    1  retention       0.5  8
    """
    xv = as_float_vector(x, "x")
    yv = as_float_vector(y, "y")
    require(xv.shape == yv.shape, f"x and y must have the same length, got {xv.size} and "
            f"{yv.size}", field="y")
    out = paired_bootstrap_matrix(xv[:, None], yv[:, None], statistics=statistic,
                                  aggregate="mean", n_boot=n_boot, seed=seed, ci_level=ci_level,
                                  strata=strata, clusters=clusters, interval=interval)
    return out.drop(columns="n_series")


# =========================================================================================
# Long-frame helper
# =========================================================================================

def _to_pandas(data: Any, columns: list[str]) -> pd.DataFrame:
    mod = type(data).__module__
    if mod.startswith("polars"):
        if hasattr(data, "collect") and not hasattr(data, "to_pandas"):
            data = data.collect()
        missing = [c for c in columns if c not in data.columns]
        require(not missing, f"data lacks column(s) {missing}; it has {list(data.columns)}",
                field=missing[0] if missing else None)
        return data.select(columns).to_pandas()
    require(isinstance(data, pd.DataFrame),
            f"data must be a pandas or polars DataFrame, got {type(data).__name__}",
            field="data")
    missing = [c for c in columns if c not in data.columns]
    require(not missing, f"data lacks column(s) {missing}; it has {list(data.columns)}",
            field=missing[0] if missing else None)
    return data.loc[:, columns]


def _pivot_pairs(df: pd.DataFrame, *, item: str, series: str, condition: str, value: str,
                 baseline: Any, comparison: Any, judged: str | None, strata: str | None,
                 cluster: str | None = None):
    """Long rows -> (B, C, M, item_labels, series_labels, strata_codes, cluster_codes)."""
    cond = df[condition]
    is_b = (cond == baseline).to_numpy(dtype=bool, na_value=False)
    is_c = (cond == comparison).to_numpy(dtype=bool, na_value=False)
    sub = df.loc[is_b | is_c]
    is_c = is_c[is_b | is_c]
    icode, ilabels = pd.factorize(sub[item], sort=True)
    scode, slabels = pd.factorize(sub[series], sort=True)
    require((icode >= 0).all(), f"column {item!r} has missing item ids", field=item)
    require((scode >= 0).all(), f"column {series!r} has missing series labels", field=series)
    n_i, n_s = len(ilabels), len(slabels)
    key = (icode.astype(np.int64) * n_s + scode) * 2 + is_c
    uniq, counts = np.unique(key, return_counts=True)
    if (counts > 1).any():
        dup = int(uniq[np.argmax(counts > 1)])
        raise_dup = (f"data has {int((counts > 1).sum())} duplicated ({item}, {series}, "
                     f"{condition}) combination(s), e.g. ({ilabels[dup // 2 // n_s]!r}, "
                     f"{slabels[dup // 2 % n_s]!r}, {comparison if dup % 2 else baseline!r}); "
                     "each item must appear once per series and condition")
        require(False, raise_dup, field=item)
    vals = _to_float_column(sub[value], value)
    if judged is not None:
        ok = _to_float_column(sub[judged], judged)
        require(np.isin(ok[~np.isnan(ok)], (0.0, 1.0)).all(),
                f"judged column {judged!r} must be boolean", field=judged)
        vals = np.where(ok == 1.0, vals, np.nan)
    B = np.full((n_i, n_s), np.nan)
    Cm = np.full((n_i, n_s), np.nan)
    B[icode[~is_c], scode[~is_c]] = vals[~is_c]
    Cm[icode[is_c], scode[is_c]] = vals[is_c]
    codes, ccodes = (None if col is None else _per_item_codes(sub[col], icode, n_i, col, what)
                     for col, what in ((strata, "strata"), (cluster, "cluster")))
    return B, Cm, ~np.isnan(B) & ~np.isnan(Cm), ilabels, slabels, codes, ccodes


def _per_item_codes(col: pd.Series, icode: np.ndarray, n_i: int, name: str,
                    what: str) -> np.ndarray:
    """One code per item from an item-level column (must be constant within an item)."""
    per_item = pd.DataFrame({"i": icode, "s": col.to_numpy()})
    nun = per_item.groupby("i")["s"].nunique(dropna=False)
    require((nun <= 1).all(), f"{what} column {name!r} must be constant within an item; "
            f"{int((nun > 1).sum())} item(s) have several values", field=name)
    if what == "cluster":
        require(per_item["s"].notna().all(), f"cluster column {name!r} has missing values; "
                "every item needs a cluster", field=name)
    first = per_item.drop_duplicates("i").sort_values("i")["s"].to_numpy()
    return _strata_codes(first, n_i)


def _to_float_column(col: pd.Series, name: str) -> np.ndarray:
    try:
        arr = col.astype("Float64").to_numpy(dtype=float, na_value=np.nan)
    except (TypeError, ValueError):
        arr = None
    require(arr is not None, f"column {name!r} must be boolean or numeric (null = not "
            f"judged), got dtype {col.dtype}", field=name)
    require(not np.isinf(arr).any(), f"column {name!r} contains infinite values", field=name)
    return arr


@ci_level_alias
def paired_bootstrap_frame(data: Any, *, item: str = "question_id", series: str = "model",
                           condition: str = "budget", value: str = "correct",
                           baseline: Any = "8K", comparison: Any = "64K",
                           groups: str | Sequence[str] | None = None,
                           statistics: Any = ("drop", "retention"),
                           aggregate: str | None = "mean", strata: str | None = None,
                           judged: str | None = None, n_boot: int = 10_000, seed: int = 0,
                           ci_level: float = 0.95, cluster: str | None = None,
                           interval: str = "percentile") -> pd.DataFrame:
    """Paired item bootstrap from a long frame (one row per series x item x condition).

    Parameters
    ----------
    data : pandas.DataFrame or polars.DataFrame / LazyFrame
        Long data.  Rows whose ``condition`` is neither ``baseline`` nor ``comparison`` are
        ignored.  Each (item, series, condition) may appear at most once.
    item : str, default "question_id"
        Column identifying the resampling unit (shared across conditions).
    series : str, default "model"
        Column identifying the series (e.g. model).
    condition : str, default "budget"
        Column holding the condition.
    value : str, default "correct"
        Boolean or numeric score column; null = not judged.
    baseline, comparison : scalar, default "8K", "64K"
        Values of ``condition`` to compare.
    groups : str or list of str, optional
        Grouping columns; the bootstrap runs separately within each group (items of the group
        are its resampling units).  Group keys with nulls form their own group.
    statistics : see :func:`paired_bootstrap_matrix`, default ("drop", "retention")
        Statistics to compute; they share each group's resampling.
    aggregate : {"mean", None}, default "mean"
        ``"mean"``: average accuracy over the series of the group first (one row per group x
        statistic; the paper's evidence-type rows).  ``None``: one row per group x series x
        statistic.
    strata : str, optional
        Item-level column to resample within (e.g. evidence type for an overall row).
    judged : str, optional
        Boolean column; rows where it is false (or null) are out of the denominator, as if
        ``value`` were null (e.g. ``"scored"`` of the verdict frame).
    n_boot : int, default 10_000
        Number of resamples.
    seed : int, default 0
        Seed for ``numpy.random.default_rng``; every group uses it afresh, so each row can be
        reproduced alone by running its group's data with the same seed.
    ci_level : float, default 0.95
        Confidence level (``ci=``: deprecated name).
    cluster : str, optional
        Item-level column naming each item's cluster (e.g. ``"family_id"``: a refusal
        question and its source question).  Whole clusters are resampled; the output's
        ``cluster`` column holds this name and ``design_effect`` the variance ratio against
        item resampling.  ``None`` (default) resamples items.
    interval : {"percentile", "bca"}, default "percentile"
        Interval method (see :func:`paired_bootstrap_matrix`).

    Returns
    -------
    pandas.DataFrame
        Columns: the ``groups`` columns; the ``series`` column (named as the ``series``
        argument, only when ``aggregate=None``); then ``statistic, estimate, ci_low,
        ci_high, n, n_series, n_invalid, n_boot, seed, ci_level, interval, ci_low_mc_se,
        ci_high_mc_se, cluster, n_clusters, design_effect`` as in
        :func:`paired_bootstrap_matrix` (``n`` = items of the group judged at both
        conditions by at least one series, or by the row's series when ``aggregate=None``;
        ``n_series`` = series averaged).

    Notes
    -----
    For each group the rows are pivoted to ``(n_items, n_series)`` matrices (items and
    series in sorted order, so the result does not depend on row order).  A pair counts for
    a series only if the item has a non-null value at *both* conditions for that series
    (and ``judged`` holds for both rows): each series is scored on its own paired items, and
    a series missing an item loses that item only for itself.  Series with no paired item in
    a group are left out of that group.  Nothing assumes the direction of the change: drops
    may be negative, retention above 1.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({
    ...     "question_id": ["q1", "q2", "q3", "q4"] * 4,
    ...     "model": ["A"] * 8 + ["B"] * 8,
    ...     "budget": (["8K"] * 4 + ["64K"] * 4) * 2,
    ...     "correct": [1, 1, 1, 0, 1, 0, 1, 0,  1, 0, 1, 0, 0, 0, 1, 0]})
    >>> out = paired_bootstrap_frame(df, n_boot=1000, seed=0)
    >>> out[["statistic", "estimate", "n", "n_series"]]
       statistic  estimate  n  n_series
    0       drop      25.0  4         2
    1  retention       0.6  4         2
    >>> per_model = paired_bootstrap_frame(df, aggregate=None, statistics="drop", n_boot=1000)
    >>> per_model[["model", "statistic", "estimate", "n"]]
      model statistic  estimate  n
    0     A      drop      25.0  4
    1     B      drop      25.0  4
    """
    for name, v in (("item", item), ("series", series), ("condition", condition),
                    ("value", value)):
        require(isinstance(v, str), f"{name} must be a column name (str), got {v!r}",
                field=name)
    require(baseline != comparison, f"baseline and comparison must differ, got {baseline!r} "
            "twice", field="comparison")
    group_cols = [] if groups is None else ([groups] if isinstance(groups, str) else list(groups))
    stats, n_boot, seed, ci_level = _check_settings(statistics, aggregate, n_boot, seed, ci_level,
                                                    interval)
    reserved = set(_RESULT_COLUMNS) | ({series} if aggregate is None else set())
    clash = [g for g in group_cols if g in reserved]
    require(not clash, f"group column(s) {clash} clash with output columns", field="groups")
    needed = list(dict.fromkeys([item, series, condition, value, *group_cols]
                                + [c for c in (strata, judged, cluster) if c]))
    df = _to_pandas(data, needed)
    present = pd.unique(df[condition].dropna())
    for which, lvl in (("baseline", baseline), ("comparison", comparison)):
        require((df[condition] == lvl).any(), f"{which} {lvl!r} does not occur in column "
                f"{condition!r}; values present: {sorted(present.tolist(), key=str)}", field=which)

    if group_cols:
        parts = [(k if isinstance(k, tuple) else (k,), g) for k, g in
                 df.groupby(group_cols, sort=True, dropna=False, observed=True)]
    else:
        parts = [((), df)]
    rows: list[dict] = []
    for key, part in parts:
        B, Cm, M, _, slabels, codes, ccodes = _pivot_pairs(
            part, item=item, series=series, condition=condition, value=value,
            baseline=baseline, comparison=comparison, judged=judged, strata=strata,
            cluster=cluster)
        has = M.any(axis=0)
        if not has.any():
            continue
        B, Cm, M = B[:, has], Cm[:, has], M[:, has]
        labels = [slabels[j] for j in np.flatnonzero(has)]
        got = _paired_core(B, Cm, M, stats=stats, aggregate=aggregate, series=labels,
                           n_boot=n_boot, seed=seed, ci_level=ci_level, strata=codes, clusters=ccodes,
                           cluster_name=cluster or "item", interval=interval)
        for r in got:
            if aggregate is None:
                r[series] = r.pop("series")
            rows.append({**dict(zip(group_cols, key)), **r})
    require(rows, "no (item, series) pair is judged at both conditions in any group; check "
            f"baseline={baseline!r}, comparison={comparison!r} and the {value!r} column",
            field=value)
    cols = group_cols + ([series] if aggregate is None else []) + _RESULT_COLUMNS
    return pd.DataFrame(rows, columns=cols)
