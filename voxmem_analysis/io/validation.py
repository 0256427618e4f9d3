"""Counts that show what a release holds, used by ``voxmem-analysis validate`` and
``notebooks/00_validate.py``."""
from __future__ import annotations

import pandas as pd

from voxmem_analysis import taxonomy as tx

__all__ = ["status_counts", "design_counts", "problem_summary", "problems_frame"]


def status_counts(release) -> pd.DataFrame:
    """Predictions per model x budget (rows ``"Model|Budget"``, in display order) and status.

    Returns
    -------
    pandas.DataFrame
        Columns ``graded, ungraded, failed, provider_rejected, total`` (counts); only the
        model x budget combinations present.
    """
    f = release.pandas()
    counts = pd.crosstab([pd.Categorical(f["model"], categories=release.model_order(), ordered=True), f["budget"]],
                         pd.Categorical(f["status"], categories=list(tx.STATUSES)), dropna=False)
    counts = counts[counts.sum(axis=1) > 0].copy()
    counts["total"] = counts.sum(axis=1)
    counts.index = [f"{m}|{b}" for m, b in counts.index]
    counts.index.name = "Model|Budget"
    counts.columns = [str(c) for c in counts.columns]
    counts.columns.name = None
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
