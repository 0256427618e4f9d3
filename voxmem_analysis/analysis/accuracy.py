"""Small, fast operations on the tidy verdict frame shared by every analysis."""
from __future__ import annotations

import pandas as pd
import polars as pl

__all__ = ["accuracy_table", "to_polars"]


def to_polars(frame) -> pl.DataFrame:
    return frame if isinstance(frame, pl.DataFrame) else pl.from_pandas(frame)


def accuracy_table(frame, by: list[str], *, value: str = "correct", scored: str = "scored") -> pd.DataFrame:
    """Accuracy per group, with the paper's denominator (scored predictions only).

    Returns
    -------
    pandas.DataFrame
        The ``by`` columns, then ``correct`` (count), ``n`` (scored predictions),
        ``accuracy`` (percent, ``100 * correct / n``), ``n_excluded`` (predictions left
        out of the denominator, e.g. provider-rejected).  Sorted by ``by``.
    """
    f = to_polars(frame)
    missing = [c for c in [*by, value, scored] if c not in f.columns]
    if missing:
        raise ValueError(f"accuracy_table: columns not in the frame: {', '.join(missing)}")
    out = (
        f.lazy().group_by(by)
        .agg((pl.col(value).fill_null(False) & pl.col(scored)).sum().alias("correct"),
             pl.col(scored).sum().alias("n"),
             (~pl.col(scored)).sum().alias("n_excluded"))
        .with_columns((100.0 * pl.col("correct") / pl.col("n")).alias("accuracy"))
        .select(*by, "correct", "n", "accuracy", "n_excluded")
        .sort(by).collect()
    )
    return out.to_pandas()
