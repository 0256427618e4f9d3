"""Counts that show what a release holds, used by ``voxmem-analysis validate`` and
``notebooks/00_validate.py``."""
from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx

__all__ = ["status_counts", "design_counts", "problem_summary", "problems_frame"]


def status_counts(release) -> pd.DataFrame:
    """Predictions per model x budget (rows ``"Model|Budget"``, display order) and status: ``graded,
    ungraded, failed, provider_rejected, total``, counted in polars."""
    order = {m: i for i, m in enumerate(release.model_order())}
    per = (release.frame.group_by("model", "budget", "status").len()
           .with_columns(pl.col("model").replace_strict(order, default=None, return_dtype=pl.Int64).alias("_m"))
           .filter(pl.col("_m").is_not_null() & pl.col("budget").is_not_null() & pl.col("status").is_in(list(tx.STATUSES))))
    wide = per.pivot("status", index=["_m", "model", "budget"], values="len").sort("_m", "budget")
    counts = pd.DataFrame({s: (wide[s].fill_null(0).to_numpy() if s in wide.columns else np.zeros(wide.height, dtype=np.int64))
                           for s in tx.STATUSES}).astype("int64")
    counts["total"] = counts.sum(axis=1)
    counts.index = pd.Index([f"{m}|{b}" for m, b in zip(wide["model"].to_list(), wide["budget"].cast(pl.Utf8).to_list())],
                            name="Model|Budget")
    return counts.astype(int)


def design_counts(release) -> pd.DataFrame:
    """Questions per evidence type (rows, paper labels) x operation (columns IE … AR) at the
    shortest budget present, with ``Total`` row and column (the paper: 232/147/264/156)."""
    f = release.pandas()
    first = f[f["budget"] == f["budget"].dropna().min()]
    design = pd.crosstab(first["evidence_type"].map(tx.EVIDENCE_LABELS), first["operation"].map(tx.OPERATION_LABELS),
                         values=first["question_id"], aggfunc="nunique").fillna(0).astype(int)
    design = design.reindex(index=[tx.EVIDENCE_LABELS[e] for e in tx.EVIDENCE_TYPES],
                            columns=[tx.OPERATION_LABELS[o] for o in tx.OPERATIONS], fill_value=0)
    design["Total"] = design.sum(axis=1)
    design.loc["Total"] = design.sum()
    design.index.name = "Evidence type"
    design.columns.name = None
    return design


def problems_frame(problems) -> pd.DataFrame:
    """One row per :class:`~voxmem_analysis.errors.Problem`."""
    return pd.DataFrame([p.as_dict() for p in problems],
                        columns=["code", "severity", "message", "file", "line", "field", "count"])


def problem_summary(problems) -> pd.DataFrame:
    """Findings per severity and code: columns ``severity, count`` indexed by ``code``."""
    df = problems_frame(problems)
    if not len(df):
        return pd.DataFrame({"severity": pd.Series(dtype=str), "count": pd.Series(dtype=int)},
                            index=pd.Index([], name="code"))
    out = df.groupby(["severity", "code"], sort=True)["count"].sum().rename("count").reset_index()
    return out.set_index("code")[["severity", "count"]]
