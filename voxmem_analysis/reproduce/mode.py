"""Which report ``reproduce`` writes, and what it says about the release: ``paper`` mode (the paper's release,
known by its ``release.json`` identity :data:`PAPER_RELEASE`, or ``--compare-published``) has the scoreboard
and the audit of the paper; ``analysis`` mode describes your runs, the paper's numbers only as a reference.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import files_not_read_in_full

__all__ = ["PAPER_RELEASE", "is_paper_release", "report_mode", "describe_runs", "release_info"]

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
    """One record per model x budget run (models in release order): ``predictions, scored, correct`` and their
    answerable and refusal parts, ``accuracy``, ``accuracy_answerable``, ``accuracy_refusal`` (%)."""
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
    recs = sorted(g.to_dicts(), key=lambda r: (order.get(r["model"], len(order)), r["model"],
                                               tx.BUDGETS.index(r["budget"]) if r["budget"] in tx.BUDGETS else 9))

    def pct(k, n):
        return round(100.0 * k / n, 4) if n else None

    for r in recs:
        r["accuracy"] = pct(r["correct"], r["scored"])
        r["accuracy_answerable"] = pct(r["correct_answerable"], r["scored_answerable"])
        r["accuracy_refusal"] = pct(r["correct_refusal"], r["scored_refusal"])
    return recs


def _problem_counts(problems) -> list[dict]:
    """The release's findings counted by severity and code, with one example each."""
    counts: dict = {}
    for p in problems:
        key = (p.severity, p.code)
        c = counts.setdefault(key, {"severity": p.severity, "code": p.code, "count": 0, "example": str(p)})
        c["count"] += int(getattr(p, "count", 1) or 1)
    return [counts[k] for k in sorted(counts)]


def release_info(release, data, compare_published: bool = False) -> tuple[dict, list[dict]]:
    """What run.json and the report say about the release ``reproduce`` read (``path, name, synthetic, label,
    description, predictions, models, stats, mode, paper_release, runs, model_names``; an AMC release also
    ``benchmark``), and its findings counted by code.  ``release`` may be the exception reading it raised:
    ``{"path", "error"}``."""
    path = str(Path(data).resolve())
    if isinstance(release, BaseException) or release is None:
        err = f"{type(release).__name__}: {release}" if release is not None else "not read"
        return {"path": path, "error": err, "synthetic": None}, _problem_counts(getattr(release, "problems", []))
    amc = getattr(release, "benchmark", None) == "amc"
    info = {"path": str(Path(release.path).resolve()) if amc else path, "name": release.name,
            "synthetic": bool(release.synthetic), "label": release.label(),
            "description": str(release.meta.get("description") or "")}
    if amc:
        info.update(predictions=int(len(release.verdicts)), models=len(release.systems()), stats=dict(release.stats),
                    model_names=[f"{m}|{o}" for m, o in release.systems()], benchmark="audio-multichallenge",
                    mode="paper", paper_release=False, runs=[])
    else:
        info.update(predictions=int(release.frame.height), models=len(release.model_order()),
                    stats={**release.stats, "files_not_read_in_full": files_not_read_in_full(release.problems)},
                    mode=report_mode(release.meta, compare_published), paper_release=is_paper_release(release.meta),
                    runs=describe_runs(release), model_names=release.model_order())
    return info, _problem_counts(release.problems)
