"""The one accuracy group-by every accuracy of the package rests on.

Accuracy of a set of verdicts is ``100 * n_correct / n`` where ``n`` counts the *scored*
verdicts (the paper's denominator: provider-rejected predictions are out, failed and
ungraded ones count as incorrect) and a null ``correct`` on a scored verdict counts as 0.
:func:`accuracy_table` computes it per group; :mod:`~voxmem_analysis.analysis.results`
(and through it :mod:`~voxmem_analysis.analysis.scaling`), :mod:`~voxmem_analysis.analysis.explore`
and the label-free :mod:`~voxmem_analysis.analysis.verdicts` (:func:`accuracy_by_code`) call it.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis.errors import AnalysisInputError

__all__ = ["accuracy_table", "accuracy_by_code", "to_polars"]


def to_polars(frame) -> pl.DataFrame:
    return frame if isinstance(frame, pl.DataFrame) else pl.from_pandas(frame)


def accuracy_table(frame, by: list[str], *, value: str = "correct", scored: str = "scored",
                   sort: bool = True) -> pd.DataFrame:
    """Accuracy per group, with the paper's denominator (scored predictions only).

    Parameters
    ----------
    frame : polars or pandas DataFrame
        One row per verdict, with the ``by``, ``value`` and ``scored`` columns.
    by : list of str
        Grouping columns (``[]``: one pooled row).
    value, scored : str
        The verdict (boolean; null counts as incorrect) and whether the row is in the denominator
        (boolean).  A numeric ``value`` (a score per verdict, e.g. 0/1 as floats) is summed as it is,
        null counting as 0, and ``n_correct`` is then a float.
    sort : bool
        Sort the rows by ``by`` (default); otherwise groups come in order of first appearance.

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, then ``n_correct`` (count), ``n`` (scored predictions),
        ``accuracy`` (percent, ``100 * n_correct / n``; NaN when ``n == 0``), ``n_excluded``
        (predictions left out of the denominator, e.g. provider-rejected).
    """
    f = to_polars(frame)
    missing = [c for c in [*by, value, scored] if c not in f.columns]
    if missing:
        raise AnalysisInputError(f"accuracy_table: columns not in the frame: {', '.join(missing)}", missing[0])
    if f.schema[value] == pl.Boolean:
        hits = (pl.col(value).fill_null(False) & pl.col(scored)).sum().cast(pl.Int64)
    else:
        hits = pl.when(pl.col(scored)).then(pl.col(value).cast(pl.Float64).fill_null(0.0)).otherwise(0.0).sum()
    aggs = [hits.alias("n_correct"),
            pl.col(scored).sum().cast(pl.Int64).alias("n"),
            (~pl.col(scored)).sum().cast(pl.Int64).alias("n_excluded")]
    lazy = f.lazy()
    grouped = lazy.group_by(by, maintain_order=not sort).agg(*aggs) if by else lazy.select(*aggs)
    out = (grouped
           .with_columns(pl.when(pl.col("n") > 0).then(100.0 * pl.col("n_correct") / pl.col("n"))
                         .otherwise(None).cast(pl.Float64).alias("accuracy"))
           .select(*by, "n_correct", "n", "accuracy", "n_excluded"))
    if sort and by:
        out = out.sort(by)
    return out.collect().to_pandas()


def accuracy_by_code(value: np.ndarray, scored: np.ndarray, code: np.ndarray,
                     n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`accuracy_table` on arrays: rows grouped by an integer ``code`` in ``0 .. n_groups - 1``.

    Returns ``(n_correct, n, n_excluded)`` arrays of length ``n_groups`` (float, int, int; a group
    without rows has zeros).  ``value`` is numeric (nulls already 0), ``scored`` boolean.
    """
    table = accuracy_table(pl.DataFrame({"_g": np.asarray(code, dtype=np.int64),
                                         "_v": np.asarray(value, dtype=float),
                                         "_s": np.asarray(scored, dtype=bool)}), ["_g"], value="_v", scored="_s")
    out = (np.zeros(n_groups), np.zeros(n_groups, dtype=np.int64), np.zeros(n_groups, dtype=np.int64))
    g = table["_g"].to_numpy()
    out[0][g] = table["n_correct"].to_numpy(dtype=float)
    out[1][g] = table["n"].to_numpy(dtype=np.int64)
    out[2][g] = table["n_excluded"].to_numpy(dtype=np.int64)
    return out
