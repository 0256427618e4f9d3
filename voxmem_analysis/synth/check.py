"""Calibration report of a (synthetic) release against the paper's published numbers.

``calibration_report(release_dir_or_frames)`` recomputes, directly from the prediction
lines with simple group-bys, every number the synthetic release was calibrated to
(kind ``calibrated``, and ``derived`` where the paper prints arithmetic of them) and
the numbers that only emerge from the item-level construction (kind ``emergent``:
Table 18 intervals, App. D.5 and Table 16 Spearman correlations, the 8K top-3 spread).
Each number's published value, tolerance, comparator and kind are the paper's
(:func:`voxmem_analysis.reproduce.published.published`); a reproduced number the paper lacks is a
``KeyError``.

Scoring (paper App. C.4 / C.6): a prediction rejected by the provider leaves the
denominator, for that model at every budget; failed generations and ungraded verdicts
count as incorrect.
"""
from __future__ import annotations

import gzip
import io
import pathlib

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis.reproduce import published as paper
from voxmem_analysis.taxonomy import EVIDENCE_LABELS, EVIDENCE_TYPES, OPERATION_LABELS, OPERATIONS
from voxmem_analysis.synth import design as D
from voxmem_analysis.synth.design import AR, SEM
from voxmem_analysis.stats.bootstrap import paired_bootstrap_matrix

REPORT_COLUMNS = ["artifact", "row", "column", "published", "reproduced", "delta", "kind",
                  "within_tolerance"]
_REJECT = "provider rejected"


def _read_predictions(root: pathlib.Path) -> pl.DataFrame:
    frames = []
    for path in sorted((root / "predictions").rglob("*.jsonl*")):
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        frames.append(pl.read_ndjson(io.BytesIO(raw), infer_schema_length=None).select(
            ["model", "question_id", "context_length", "evidence_type", "memory_operation",
             "response", "verdict"] + (["error"] if b'"error"' in raw else [])))
    return pl.concat(frames, how="diagonal_relaxed")


def scored_frame(source) -> pl.DataFrame:
    """One row per prediction with ``model, question_id, budget, ev, op, srcop, correct, scored``."""
    if isinstance(source, dict):
        preds, items = source["preds"], source["items"]
    else:
        root = pathlib.Path(source)
        preds = _read_predictions(root)
        items = pl.read_csv(root / "items.csv", infer_schema_length=None)
    if "error" not in preds.columns:
        preds = preds.with_columns(pl.lit(None, dtype=pl.Utf8).alias("error"))
    q = (items.select(["question_id", "memory_operation", "paired_question_id"]).unique("question_id"))
    src = q.select([pl.col("question_id").alias("paired_question_id"),
                    pl.col("memory_operation").alias("_src_op")])
    q = q.join(src, on="paired_question_id", how="left").select(
        ["question_id", pl.coalesce(["_src_op", "memory_operation"]).alias("srcop")])
    df = preds.join(q, on="question_id", how="left").with_columns(
        pl.col("context_length").str.to_uppercase().alias("budget"),
        pl.col("evidence_type").alias("ev"), pl.col("memory_operation").alias("op"),
        (pl.col("response").is_null() & pl.col("error").fill_null("").str.contains(_REJECT)).alias("_rej"),
    )
    rej = df.filter(pl.col("_rej")).select(["model", "question_id"]).unique().with_columns(
        pl.lit(True).alias("_rej_any"))
    df = df.join(rej, on=["model", "question_id"], how="left").with_columns(
        (~pl.col("_rej_any").fill_null(False)).alias("scored"),
        (pl.col("verdict").fill_null(False) & pl.col("response").is_not_null()
         & (pl.col("response") != "")).alias("correct"),
    )
    return df.select(["model", "question_id", "budget", "ev", "op", "srcop", "correct", "scored"])


def _acc_table(df: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    return (df.filter(pl.col("scored")).group_by(keys)
            .agg(pl.col("correct").sum().alias("k"), pl.len().alias("n"))
            .with_columns((100.0 * pl.col("k") / pl.col("n")).alias("acc")))


def target_value(df: pl.DataFrame, t: D.Target) -> float:
    sub = df.filter((pl.col("budget") == t.budget) & pl.col("model").is_in(list(t.models))
                    & pl.col("ev").is_in(list(t.ev)) & pl.col("op").is_in(list(t.ops))
                    & pl.col("srcop").is_in(list(t.srcops)))
    if t.agg == "pooled":
        s = sub.filter(pl.col("scored"))
        return 100.0 * s["correct"].sum() / s.height
    acc = _acc_table(sub, ["model"])
    return float(acc["acc"].mean())


def _matrix(df: pl.DataFrame, budget: str, models, evs) -> np.ndarray:
    """(n_items, n_models) correctness at one budget, NaN where not scored."""
    sub = df.filter((pl.col("budget") == budget) & pl.col("model").is_in(list(models))
                    & pl.col("ev").is_in(list(evs))).sort("question_id")
    wide = sub.with_columns(pl.when(pl.col("scored")).then(pl.col("correct").cast(pl.Float64))
                            .otherwise(None).alias("v")).pivot(
        on="model", index="question_id", values="v").sort("question_id")
    return wide.select(list(models)).to_numpy().astype(float)


def _bootstrap(B: np.ndarray, C: np.ndarray, n_boot: int, seed: int) -> dict[str, tuple[float, float]]:
    out = paired_bootstrap_matrix(B, C, statistics=("drop", "retention"), n_boot=n_boot, seed=seed)
    return {r.statistic: (float(r.ci_low), float(r.ci_high)) for r in out.itertuples()}


def _spearman(x, y) -> tuple[float, float]:
    from scipy.stats import spearmanr
    r = spearmanr(x, y)
    return float(r.statistic), float(r.pvalue)


def reproduced_values(source, *, n_boot: int = 10_000, seed: int = 0) -> list[dict]:
    """Every number we can recompute: dicts ``artifact, row, column, reproduced``."""
    df = source if isinstance(source, pl.DataFrame) else scored_frame(source)
    out: list[dict] = []

    def add(artifact, row, column, value):
        out.append(dict(artifact=artifact, row=row, column=column, reproduced=float(value)))

    for t in D.targets():
        add(t.artifact, t.row, t.column, target_value(df, t))
    # Table 18 drops / retentions (ratio of means over the ten models) and intervals; Figure 6
    acc = _acc_table(df.filter(pl.col("model").is_in(list(D.SET64))), ["model", "budget", "ev"])
    tot = _acc_table(df.filter(pl.col("model").is_in(list(D.SET64))), ["model", "budget"])
    for key in (*EVIDENCE_TYPES, "overall"):
        label = EVIDENCE_LABELS.get(key, "Overall")
        src = tot if key == "overall" else acc.filter(pl.col("ev") == key)
        a8 = float(src.filter(pl.col("budget") == "8K")["acc"].mean())
        a64 = float(src.filter(pl.col("budget") == "64K")["acc"].mean())
        add("table18", label, "drop", a8 - a64)
        add("table18", label, "retention", a64 / a8)
        if key != "overall":
            add("fig6", label, "64K", 100 * a64 / a8)
        evs = EVIDENCE_TYPES if key == "overall" else (key,)
        ci = _bootstrap(_matrix(df, "8K", D.SET64, evs), _matrix(df, "64K", D.SET64, evs), n_boot, seed)
        add("table18", label, "drop_lo", ci["drop"][0])
        add("table18", label, "drop_hi", ci["drop"][1])
        add("table18", label, "retention_lo", ci["retention"][0])
        add("table18", label, "retention_hi", ci["retention"][1])
    # App. D.5: 40 model x evidence cells; 'change' row = 64K - 8K in pp, as the paper's sign
    a = acc.pivot(on="budget", index=["model", "ev"], values="acc").sort(["model", "ev"])
    ret_rho, ret_p = _spearman(a["64K"] / a["8K"], a["8K"])
    chg_rho, chg_p = _spearman(a["64K"] - a["8K"], a["8K"])
    add("d5", "retention", "rho", ret_rho)
    add("d5", "retention", "p", ret_p)
    add("d5", "change", "rho", chg_rho)
    add("d5", "change", "p", chg_p)
    add("d5", "cells", "n", a.height)
    # Table 16 rho
    t16 = df.filter((pl.col("budget") == "64K") & pl.col("model").is_in(list(D.SET64)))
    ans = _acc_table(t16.filter(pl.col("op") != AR), ["model"]).sort("model")
    arr = _acc_table(t16.filter(pl.col("op") == AR), ["model"]).sort("model")
    add("table16", "All", "Spearman rho", _spearman(ans["acc"], arr["acc"])[0])
    # 8K top-3 spread
    o8 = _acc_table(df.filter(pl.col("budget") == "8K"), ["model"]).sort("acc", descending=True)
    top = o8["acc"].to_list()[:3]
    add("groups", "8K|Top-3 spread", "Overall", max(top) - min(top))
    # App. D.5 population (before attribution's recoding, which keeps verdicts)
    pop = df.filter((pl.col("budget") == "64K") & pl.col("model").is_in(list(D.SET64))
                    & (pl.col("ev") != SEM) & (pl.col("op") != AR))
    add("population", "Attempts", "n", pop.height)
    add("population", "Incorrect", "n", int((~pop["correct"]).sum()))
    # denominators (Table 13 n)
    s8_all = df.filter(pl.col("budget") == "8K")
    for ev in EVIDENCE_TYPES:
        add("table13", EVIDENCE_LABELS[ev], "n", s8_all.filter(pl.col("ev") == ev).height - _rejected(df, ev=ev))
    for op in OPERATIONS:
        add("table13", OPERATION_LABELS[op], "n", s8_all.filter(pl.col("op") == op).height - _rejected(df, op=op))
    add("table13", "All", "n", s8_all.height - _rejected(df))
    return out


def _rejected(df: pl.DataFrame, ev: str | None = None, op: str | None = None) -> int:
    """8K predictions rejected by the provider (table 13 counts only the 8K budget)."""
    sub = df.filter((pl.col("budget") == "8K") & ~pl.col("scored"))
    if ev:
        sub = sub.filter(pl.col("ev") == ev)
    if op:
        sub = sub.filter(pl.col("op") == op)
    return sub.height


def calibration_report(source, *, n_boot: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Published vs reproduced for every number the synthetic release targets or lets emerge.

    The published value, tolerance, comparator and kind of each number come from
    :func:`voxmem_analysis.reproduce.published.published`; ``KeyError`` if the paper has no such number.
    """
    rows = reproduced_values(source, n_boot=n_boot, seed=seed)
    pub = paper.published().set_index(["artifact", "row", "column"])
    out = []
    seen = set()
    for r in rows:
        key = (r["artifact"], r["row"], r["column"])
        if key in seen:
            continue
        seen.add(key)
        if key not in pub.index:
            raise KeyError(f"no published number for artifact={key[0]!r}, row={key[1]!r}, "
                           f"column={key[2]!r} (data/paper/published.csv)")
        p = pub.loc[key]
        value, tol, comp = float(p["value"]), float(p["tolerance"]), p["comparator"]
        rep = r["reproduced"]
        delta = rep - value
        if comp == "lt":
            ok = rep < value
        elif comp == "le":
            ok = rep <= value + tol
        else:
            ok = abs(delta) <= tol + 1e-9
        out.append(dict(artifact=key[0], row=key[1], column=key[2], published=value,
                        reproduced=round(rep, 4), delta=round(delta, 4), kind=p["kind"],
                        within_tolerance=bool(ok)))
    return pd.DataFrame(out, columns=REPORT_COLUMNS)
