"""Which report ``voxmem-analysis reproduce`` writes: the paper's reproduction, or an analysis of your runs.

The paper's own release is the shipped calibrated synthetic release (``data/synthetic``); it is
recognised by its ``release.json`` identity -- :data:`PAPER_RELEASE`'s name and seed, not its
path -- so a copy of it anywhere is still "the paper's release", and a user's run folder that
happens to sit at ``data/synthetic`` is not.

* ``paper`` mode (the paper's release, or any release with ``--compare-published``): the
  reproduction scoreboard (``reproduction.csv``) and the audit of the paper's own numbers.
* ``analysis`` mode (every other release): no scoreboard; the report describes *your runs*
  and shows the paper's published numbers only as a labelled reference where comparable.
"""
from __future__ import annotations

from typing import Mapping

__all__ = ["PAPER_RELEASE", "is_paper_release", "report_mode"]

#: ``release.json`` fields identifying the paper's calibrated release
#: (``voxmem_analysis.synth.write_release(out, seed=DEFAULT_SEED)``).
PAPER_RELEASE = {"name": "voxmem-synthetic", "seed": 20260}


def is_paper_release(meta: Mapping | None) -> bool:
    """True when ``release.json`` (``meta``) names the paper's calibrated release."""
    meta = meta or {}
    return all(meta.get(k) == v for k, v in PAPER_RELEASE.items())


def report_mode(meta: Mapping | None, compare_published: bool = False) -> str:
    """``"paper"`` (scoreboard and audit) or ``"analysis"`` (your runs, paper as reference)."""
    return "paper" if compare_published or is_paper_release(meta) else "analysis"


def describe_runs(release) -> list[dict]:
    """One record per model x budget run: predictions, scored, correct, accuracy (%), answerable
    and refusal accuracy -- the "your runs" table of the analysis report (models in release order)."""
    import polars as pl

    fr = release.frame
    if not fr.height:
        return []
    g = (fr.with_columns(pl.col("budget").cast(pl.Utf8), pl.col("correct").fill_null(False))
         .group_by("model", "budget")
         .agg(pl.len().alias("predictions"), pl.col("scored").sum().alias("scored"),
              (pl.col("correct") & pl.col("scored")).sum().alias("correct"),
              (pl.col("scored") & ~pl.col("is_ar")).sum().alias("scored_answerable"),
              (pl.col("correct") & pl.col("scored") & ~pl.col("is_ar")).sum().alias("correct_answerable"),
              (pl.col("scored") & pl.col("is_ar")).sum().alias("scored_refusal"),
              (pl.col("correct") & pl.col("scored") & pl.col("is_ar")).sum().alias("correct_refusal")))
    order = {m: i for i, m in enumerate(release.model_order())}
    budgets = ("8K", "16K", "32K", "64K")
    recs = sorted(g.to_dicts(), key=lambda r: (order.get(r["model"], len(order)), r["model"],
                                               budgets.index(r["budget"]) if r["budget"] in budgets else 9))

    def pct(k, n):
        return round(100.0 * k / n, 4) if n else None

    for r in recs:
        r["accuracy"] = pct(r["correct"], r["scored"])
        r["accuracy_answerable"] = pct(r["correct_answerable"], r["scored_answerable"])
        r["accuracy_refusal"] = pct(r["correct_refusal"], r["scored_refusal"])
    return recs
