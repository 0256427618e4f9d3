"""Paired comparison of models on VoxMem data (``voxmem-analysis compare --data DIR``)."""
from __future__ import annotations

from typing import Sequence

import pandas as pd
import polars as pl

from voxmem_analysis.analysis.clusters import attach_cluster, cluster_column
from voxmem_analysis.analysis.selection import check_budgets, check_models
from voxmem_analysis.analysis.verdicts import BootstrapSettings, compare_systems
from voxmem_analysis.errors import AnalysisInputError, MissingDataError

__all__ = ["compare_models"]


def compare_models(release, models: Sequence[str], budget: str, *, answerable_only: bool = False,
                   n_boot: int = 10_000, seed: int = 0, alpha: float = 0.05, cluster: str = "item",
                   interval: str = "percentile", mc_se: bool = False, progress=None,
                   family: str = "all") -> pd.DataFrame:
    """Every pair of ``models`` at ``budget`` on the items both were scored on (refusal items too unless
    ``answerable_only``): :func:`~voxmem_analysis.analysis.verdicts.compare_systems` of the release's verdicts, its
    columns ``system_a/b`` named ``model_a/b``.  ``cluster="family"`` resamples question families; ``interval``,
    ``mc_se``, ``progress`` as its :class:`~voxmem_analysis.stats.BootstrapSettings`; ``family``: Holm's family."""
    b = check_budgets([budget])[0]
    check_models(release, models)
    ms = list(models)
    if len(ms) < 2 or len(set(ms)) != len(ms):
        raise AnalysisInputError(f"give at least two different models, got {', '.join(ms) or 'none'}", "models")
    fr = release.frame.filter(pl.col("model").is_in(ms) & (pl.col("budget").cast(pl.Utf8) == b))
    if answerable_only:
        fr = fr.filter(~pl.col("is_ar"))
    missing = [m for m in ms if m not in set(fr["model"].to_list())]
    if missing:
        raise MissingDataError(f"no prediction of {', '.join(missing)} at {b}", code="budget_not_run", field="model")
    fr = fr.select("model", "item_id", "question_id", "budget", "correct", "scored").with_columns(
        pl.col("budget").cast(pl.Utf8))
    fr = attach_cluster(fr.to_pandas(), release, cluster)
    boot = BootstrapSettings(n_boot=n_boot, seed=seed, interval=interval, mc_se=mc_se, progress=progress)
    table = compare_systems(fr, system="model", item="item_id", groups="budget", systems=ms, alpha=alpha,
                            family=family, cluster=cluster_column(cluster), settings=boot)
    return table.rename(columns={"system_a": "model_a", "system_b": "model_b"})
