"""The one accuracy group-by every accuracy rests on: ``100 * n_correct / n`` over the *scored* verdicts (the
paper's denominator: provider rejections out, failed and ungraded answers wrong), a null verdict counting 0."""
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
    """Accuracy per group of ``by`` (``[]``: one pooled row), with the paper's denominator.

    ``value``: the verdict (boolean, null wrong; a numeric score is summed as it is, ``n_correct`` then a float);
    ``scored``: whether the row is in the denominator; ``sort``: rows by ``by`` (else first appearance). Returns
    pandas.DataFrame: ``*by, n_correct, n`` (scored rows), ``accuracy`` (%; NaN when ``n == 0``), ``n_excluded``."""
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
    """:func:`accuracy_table` on arrays grouped by an integer ``code`` in ``0 .. n_groups - 1``: ``(n_correct, n,
    n_excluded)`` arrays (zeros for an empty group)."""
    table = accuracy_table(pl.DataFrame({"_g": np.asarray(code, dtype=np.int64),
                                         "_v": np.asarray(value, dtype=float),
                                         "_s": np.asarray(scored, dtype=bool)}), ["_g"], value="_v", scored="_s")
    out = (np.zeros(n_groups), np.zeros(n_groups, dtype=np.int64), np.zeros(n_groups, dtype=np.int64))
    g = table["_g"].to_numpy()
    out[0][g] = table["n_correct"].to_numpy(dtype=float)
    out[1][g] = table["n"].to_numpy(dtype=np.int64)
    out[2][g] = table["n_excluded"].to_numpy(dtype=np.int64)
    return out
