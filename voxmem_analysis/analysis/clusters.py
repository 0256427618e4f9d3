"""Resampling clusters (``--cluster {item,family}``): a family is an answerable question with the answer-refusal
variants that replay its history (from ``family_id``, else ``paired_question_id``); a bootstrap resamples
questions or whole families and states the unit and the design effect."""
from __future__ import annotations

import pandas as pd

from voxmem_analysis.errors import AnalysisInputError, Problem, VoxMemDataError

__all__ = ["CLUSTERS", "ABSTENTION_SUFFIX", "check_cluster", "question_families", "attach_cluster", "cluster_column",
           "with_abstention_families"]

#: Accepted resampling units.
CLUSTERS = ("item", "family")


def check_cluster(cluster: str) -> str:
    """Validate a resampling unit name (``"item"`` or ``"family"``)."""
    if cluster not in CLUSTERS:
        raise AnalysisInputError(f"cluster must be one of {', '.join(CLUSTERS)}, got {cluster!r}", "cluster")
    return cluster


def question_families(source) -> pd.DataFrame:
    """One row per question of a release (its verdict frame) or a frame with ``question_id`` and ``family_id`` and/or
    ``paired_question_id``; a question listed in two families is a :class:`VoxMemDataError`. Columns ``question_id,
    family`` (a refusal question without ``family_id`` takes its source's id, any other its own)."""
    fr = getattr(source, "frame", source)
    cols = [c for c in ("question_id", "family_id", "paired_question_id") if c in fr.columns]
    if "question_id" not in cols:
        raise AnalysisInputError("cannot find question families: the data has no question_id column", "question_id")
    df = fr.select(cols).to_pandas() if hasattr(fr, "select") and not isinstance(fr, pd.DataFrame) \
        else fr.loc[:, cols]
    df = df.drop_duplicates()
    fam = df["question_id"].astype(str)
    if "paired_question_id" in df:
        src = df["paired_question_id"]
        fam = src.where(src.notna() & (src.astype(str) != ""), fam).astype(str)
    if "family_id" in df:
        fam = df["family_id"].where(df["family_id"].notna(), fam).astype(str)
    out = pd.DataFrame({"question_id": df["question_id"].to_numpy(), "family": fam.to_numpy()}).drop_duplicates()
    dup = out["question_id"].duplicated(keep=False)
    if dup.any():
        q = out.loc[dup, "question_id"].iloc[0]
        msg = (f"question {q!r} belongs to several families ({sorted(out.loc[out['question_id'] == q, 'family'])}); "
               "family_id must be constant per question")
        raise VoxMemDataError([Problem("inconsistent_family", "error", msg, None, None, "family_id")], msg)
    return out.reset_index(drop=True)


def cluster_column(cluster: str, item: str = "question_id") -> str | None:
    """Column a bootstrap resamples by for ``cluster`` (``None`` = the item itself)."""
    return None if check_cluster(cluster) == "item" else "family"


def attach_cluster(pred: pd.DataFrame, source, cluster: str, *, item: str = "question_id") -> pd.DataFrame:
    """``pred`` with the ``family`` column for ``cluster="family"`` (unchanged for ``"item"``); a question without a
    family is a :class:`VoxMemDataError`."""
    if check_cluster(cluster) == "item":
        return pred
    fam = question_families(source).rename(columns={"question_id": item})
    out = pred.merge(fam, on=item, how="left", validate="many_to_one")
    if out["family"].isna().any():
        miss = out.loc[out["family"].isna(), item].iloc[0]
        msg = f"question {miss!r} has no family in the release"
        raise VoxMemDataError([Problem("no_family", "error", msg, None, None, "family_id")], msg)
    return out


#: LongMemEval marks an abstention question derived from question ``X`` as ``X_abs``.
ABSTENTION_SUFFIX = "_abs"


def with_abstention_families(frame, *, item: str = "question_id", column: str = "family") -> pd.DataFrame:
    """LongMemEval verdicts (pandas or polars) with a ``family`` column: the abstention question ``X_abs`` joins ``X``."""
    df = frame.to_pandas() if hasattr(frame, "to_pandas") and not isinstance(frame, pd.DataFrame) else frame.copy()
    if item not in df.columns:
        raise AnalysisInputError(f"cannot form families: the data has no {item!r} column", item)
    ids = df[item].astype(str)
    df[column] = ids.where(~ids.str.endswith(ABSTENTION_SUFFIX), ids.str[: -len(ABSTENTION_SUFFIX)])
    return df
