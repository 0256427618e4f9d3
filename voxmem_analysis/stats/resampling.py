"""The resampling engine of every bootstrap: the count matrix ``C`` (``C[r, i]``: how often unit ``i`` was drawn
in resample ``r``; :func:`iter_bootstrap_counts`, :func:`shared_bootstrap_counts`) and resampled sums ``C @ A``
(:func:`resampled_sums`); :func:`bootstrap_means` on one matrix."""
from __future__ import annotations

import functools
import threading
from typing import Any, Iterable, Iterator, NamedTuple

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import as_float_matrix, require, whole_number
from voxmem_analysis.stats.resources import check_bootstrap_memory
from voxmem_analysis.stats.settings import BootstrapSettings, check_n_boot_seed

__all__ = ["BootstrapMeans", "iter_bootstrap_counts", "shared_bootstrap_counts", "bootstrap_means",
           "strata_codes", "resampled_sums", "combine_mask", "one_blas_thread", "constant_within"]

#: Upper bound on the number of ``int64`` draws held at once (rows x items of one block).
_BLOCK_CELLS = 4_000_000
#: Upper bound on resamples per block (the RNG is called once per stratum and block).
_BLOCK_ROWS = 1_000


def strata_codes(strata: Any, n: int) -> np.ndarray | None:
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
    """The bootstrap count matrix ``C`` (float64, ``C[r, i]``: how often unit ``i`` was drawn in resample ``r``), in
    blocks of resamples.

    ``strata`` (a label per unit): units drawn within each stratum, keeping its size; ``clusters`` (a label per
    unit, constant strata within one): whole clusters drawn, each unit getting its cluster's count.  A row is
    multinomial(n, 1/n), drawn as ``n`` uniform int32 indices counted by ``bincount``, in blocks of at most 1,000
    rows and 4 million draws, strata in sorted order: ``C`` depends only on ``n_units, n_boot, seed``, strata.
    """
    n_units = whole_number(n_units, "n_units", high=2**31)
    n_boot, seed = check_n_boot_seed(n_boot, seed)
    if clusters is not None:
        yield from _cluster_counts(n_units, n_boot=n_boot, seed=seed, strata=strata, clusters=clusters)
        return
    codes = strata_codes(strata, n_units)
    members = None if codes is None else [np.flatnonzero(codes == s) for s in range(int(codes.max()) + 1)]
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
    """The blocks of :func:`iter_bootstrap_counts`, drawn once per process and shared read-only (an analysis slicing
    by model asks for the same matrix once per model); at most :data:`_SHARED_COUNTS_BYTES` kept (least recently
    used out), a matrix over half of it drawn afresh."""
    n_units = whole_number(n_units, "n_units", high=2**31)
    n_boot, seed = check_n_boot_seed(n_boot, seed)
    codes = strata_codes(strata, n_units)
    size = n_boot * n_units * 8
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


def _cluster_counts(n_units: int, *, n_boot: int, seed: int, strata: Any, clusters: Any) -> Iterator[np.ndarray]:
    """Count matrix blocks of whole clusters, expanded to their units."""
    ccodes = strata_codes(clusters, n_units)
    require(ccodes is not None, "clusters must give one label per unit", field="clusters")
    n_clusters = int(ccodes.max()) + 1
    cstrata = None
    if strata is not None:
        cstrata = constant_within(strata_codes(strata, n_units), ccodes, "strata must be constant within a cluster; "
                                  "{n} cluster(s) span several strata", "strata")
    for Cc in iter_bootstrap_counts(n_clusters, n_boot=n_boot, seed=seed, strata=cstrata):
        yield Cc[:, ccodes]


def constant_within(values, groups, message: str, field: str, *, dropna: bool = True) -> np.ndarray:
    """The value of ``values`` in each group of ``groups`` (in sorted order); :class:`StatsInputError` ``message``
    (``{n}``: the groups holding several values) when one is not constant."""
    per = pd.DataFrame({"g": groups, "v": values})
    several = int((per.groupby("g")["v"].nunique(dropna=dropna) > 1).sum())
    require(several == 0, message.format(n=several), field=field)
    return per.drop_duplicates("g").sort_values("g")["v"].to_numpy()


def resampled_sums(A: np.ndarray, run: BootstrapSettings, *, strata: np.ndarray | None,
                   clusters: np.ndarray | None = None) -> np.ndarray:
    """``C @ A`` for the count matrix of ``run`` (``n_boot``, ``seed``), ``strata`` and ``clusters``, block by block
    (``run.progress(done, n_boot)`` after each)."""
    out = np.empty((run.n_boot, A.shape[1]), dtype=np.float64)
    r = 0
    if clusters is not None:  # C @ A == Cc @ (A summed within clusters): far fewer columns
        A = pd.DataFrame(A).groupby(clusters, sort=True).sum().to_numpy()
        strata = None if strata is None else pd.Series(strata).groupby( clusters, sort=True).first().to_numpy()
    with one_blas_thread():
        for C in shared_bootstrap_counts(A.shape[0], n_boot=run.n_boot, seed=run.seed, strata=strata):
            out[r:r + C.shape[0]] = C @ A
            r += C.shape[0]
            if run.progress is not None:
                run.progress(r, run.n_boot)
    return out


@functools.lru_cache(maxsize=1)
def _blas():
    from threadpoolctl import ThreadpoolController  # scanning the loaded libraries costs ms: once

    return ThreadpoolController()


def one_blas_thread():
    """A context limiting BLAS to one thread: the products here are thin, and multi-threaded OpenBLAS was measured
    3-20x slower than one thread on two loaded cores."""
    return _blas().limit(limits=1, user_api="blas")


class BootstrapMeans(NamedTuple):
    """Result of :func:`bootstrap_means`: the masked column means on the sample (``estimate``, (k,)) and on every
    resample (``replicates``, (n_boot, k); NaN without an observation), observations per column (``n``) and
    resampling units (``n_units``)."""

    estimate: np.ndarray
    replicates: np.ndarray
    n: np.ndarray
    n_units: int


def bootstrap_means(values: Any, mask: Any = None, *, n_boot: int = 10_000, seed: int = 0,
                    strata: Any = None) -> BootstrapMeans:
    """Bootstrap of the masked column means of a per-item matrix (NaN = missing; ``mask`` ANDed): rows resampled
    (within ``strata``), ``(C W) / (C M)`` in one product; rows without an observation dropped first."""
    V = as_float_matrix(values, "values")
    require(not np.isinf(V).any(), "values must be finite (NaN = missing), found inf", field="values")
    M = combine_mask(mask, V.shape, ~np.isnan(V))
    n_boot, seed = check_n_boot_seed(n_boot, seed)
    codes = strata_codes(strata, V.shape[0])
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
        S = resampled_sums(A, BootstrapSettings(n_boot=n_boot, seed=seed), strata=codes)
        reps = S[:, :k] / S[:, k:]
    return BootstrapMeans(est, reps, M.sum(axis=0).astype(int), int(V.shape[0]))


def combine_mask(mask: Any, shape: tuple[int, ...], base: np.ndarray) -> np.ndarray:
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
