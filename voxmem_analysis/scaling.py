"""Context-length scaling: Figure 6, Table 18 and Appendix D.5.

All functions take a :class:`~voxmem_analysis.loading.Release`, default to the 64K model
set (Appendix C.6: the same models at every budget) and to the paper's pairing rule
(:func:`voxmem_analysis.results.scored_predictions`, ``pairing="all_budgets"``), and
return tidy pandas DataFrames.

Definitions
-----------
* **Drop** (percentage points) = baseline accuracy − comparison accuracy (8K − 64K by
  default).  Nothing assumes its sign: a negative drop is a gain with length.
* **Retention** = comparison accuracy / baseline accuracy (may exceed 1; undefined when
  the baseline accuracy is 0).  For a mean over models it is the ratio of the means
  (Table 18 top rows: 33.7 / 48.0 = 0.703), not the mean of per-model ratios.
* **Intervals** (Table 18, App. D.4): percentile 95% bootstrap over items (questions),
  10,000 resamples by default, both budgets of every model rescored on each resample;
  an item counts for a model only if it was judged at both budgets
  (:func:`voxmem_analysis.stats.paired_bootstrap_frame`).
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from . import taxonomy as tx
from .artifacts import artifact
from .results import (OVERALL, _check_budgets, _check_models, _order_frame, evidence_label, accuracy,
                      run_budgets)
from .stats import paired_bootstrap_frame, spearman

__all__ = ["scaling_models", "evidence_scaling", "paired_change", "cell_changes", "sensitivity_correlations",
           "fig6", "table18", "d5"]

_STAT_COLUMNS = ("baseline", "comparison", "drop", "retention")


def scaling_models(release, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None) -> list[str]:
    """Models run at every one of ``budgets`` (default: the 64K set, run at all four budgets)."""
    bs = _check_budgets(budgets)
    if models is None:
        models = release.models_in_64k_set()
    models = _check_models(release, models)
    rb = run_budgets(release)
    return [m for m in models if set(bs) <= set(rb[m])]


def evidence_scaling(release, *, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None,
                     pairing: str = "all_budgets", reference: str = "8K") -> pd.DataFrame:
    """Figure 6: mean accuracy (%) per evidence type (+ ``overall``) per budget, raw and as retention.

    Parameters
    ----------
    release : Release
    models : list of str, optional
        Default: the 64K set (the same models at every budget).
    budgets : list of str, optional
        Default: the four budgets.
    pairing : str
        See :func:`voxmem_analysis.results.scored_predictions`.
    reference : str
        Budget whose accuracy each type's retention is relative to (default 8K).

    Returns
    -------
    DataFrame
        ``budget, evidence_type, accuracy, retention, n_models`` (``retention`` =
        accuracy / the same type's accuracy at ``reference``).
    """
    bs = _check_budgets(budgets)
    ref = _check_budgets([reference])[0]
    ms = scaling_models(release, models, sorted(set(bs) | {ref}, key=tx.BUDGETS.index))
    acc = accuracy(release, "evidence_type", models=ms, budgets=sorted(set(bs) | {ref}, key=tx.BUDGETS.index),
                   pairing=pairing, overall=True)
    m = acc.groupby(["budget", "evidence_type"], sort=False).agg(
        accuracy=("accuracy", "mean"), n_models=("model", "nunique")).reset_index()
    base = m[m["budget"] == ref].set_index("evidence_type")["accuracy"]
    with np.errstate(divide="ignore", invalid="ignore"):
        m["retention"] = m["accuracy"] / m["evidence_type"].map(base).replace(0.0, np.nan)
    m = m[m["budget"].isin(bs)]
    return _order_frame(m[["budget", "evidence_type", "accuracy", "retention", "n_models"]], [])


def _bootstrap_long(boot: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Engine output (one row per statistic) -> one row per key with estimate/lo/hi columns."""
    wide = {}
    for rec in boot.to_dict("records"):
        k = tuple(rec[c] for c in keys)
        row = wide.setdefault(k, {**{c: rec[c] for c in keys}, "n": rec["n"], "n_models": rec["n_series"],
                                  "n_boot": rec["n_boot"], "seed": rec["seed"]})
        s = rec["statistic"]
        row[s] = rec["estimate"]
        if s in ("drop", "retention"):
            row[f"{s}_lo"], row[f"{s}_hi"] = rec["ci_low"], rec["ci_high"]
            row[f"{s}_invalid"] = rec["n_invalid"]
    return pd.DataFrame(list(wide.values()))


def paired_change(release, *, baseline: str = "8K", comparison: str = "64K", models: Sequence[str] | None = None,
                  pairing: str = "all_budgets", n_boot: int = 10_000, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """Table 18: paired change from ``baseline`` to ``comparison`` with percentile bootstrap intervals.

    Rows: one per evidence type (mean over the models), ``overall`` (mean over the models of
    the pooled accuracy) and one per model (pooled over evidence types).  Items are
    resampled (10,000 times by default) and both budgets of every model rescored on every
    resample; an item enters a model's accuracy only if judged at both budgets.  One seed
    serves every row (each row's resampling is reproducible alone with that seed).

    Returns
    -------
    DataFrame
        ``level`` (``"evidence_type"`` or ``"model"``), ``key`` (evidence code, ``overall``
        or model name), ``n`` (items), ``n_models``, ``baseline``, ``comparison`` (accuracy %),
        ``drop``, ``drop_lo``, ``drop_hi`` (pp), ``retention``, ``retention_lo``,
        ``retention_hi``, ``drop_invalid``, ``retention_invalid`` (resamples where the
        statistic was undefined), ``n_boot``, ``seed``.
    """
    from .results import scored_predictions

    b0, b1 = _check_budgets([baseline])[0], _check_budgets([comparison])[0]
    if b0 == b1:
        raise ValueError("baseline and comparison budgets must differ")
    ms = scaling_models(release, models, [b0, b1])
    if not ms:
        raise ValueError(f"no model was run at both {b0} and {b1}")
    pred = scored_predictions(release, models=ms, budgets=[b0, b1], pairing=pairing)
    kw = dict(item="question_id", series="model", condition="budget", value="correct", baseline=b0,
              comparison=b1, statistics=_STAT_COLUMNS, n_boot=n_boot, seed=seed, ci=ci)
    ev = _bootstrap_long(paired_bootstrap_frame(pred, groups="evidence_type", aggregate="mean", **kw),
                         ["evidence_type"]).rename(columns={"evidence_type": "key"})
    ov = _bootstrap_long(paired_bootstrap_frame(pred, aggregate="mean", **kw), [])
    ov.insert(0, "key", OVERALL)
    pm = _bootstrap_long(paired_bootstrap_frame(pred, aggregate=None, **kw), ["model"]).rename(columns={"model": "key"})
    ev.insert(0, "level", "evidence_type")
    ov.insert(0, "level", "evidence_type")
    pm.insert(0, "level", "model")
    ev = ev.set_index("key").reindex([e for e in tx.EVIDENCE_TYPES if e in set(ev["key"])]).reset_index()
    pm = pm.set_index("key").reindex([m for m in ms if m in set(pm["key"])]).reset_index()
    out = pd.concat([ev, ov, pm], ignore_index=True)
    out["baseline_budget"], out["comparison_budget"] = b0, b1
    cols = ["level", "key", "n", "n_models", "baseline", "comparison", "drop", "drop_lo", "drop_hi",
            "retention", "retention_lo", "retention_hi", "drop_invalid", "retention_invalid", "n_boot", "seed",
            "baseline_budget", "comparison_budget"]
    return out[cols]


def cell_changes(release, *, baseline: str = "8K", comparison: str = "64K", models: Sequence[str] | None = None,
                 pairing: str = "all_budgets", evidence_types: Sequence[str] | None = None) -> pd.DataFrame:
    """Per model × evidence type cell: baseline and comparison accuracy, drop and retention.

    Returns
    -------
    DataFrame
        ``model, evidence_type, baseline, comparison, drop, retention, change, n`` (accuracies
        in %; ``drop`` = baseline − comparison, ``change`` = comparison − baseline, both in
        points; ``retention`` NaN when the baseline accuracy is 0).
    """
    b0, b1 = _check_budgets([baseline])[0], _check_budgets([comparison])[0]
    ms = scaling_models(release, models, [b0, b1])
    acc = accuracy(release, "evidence_type", models=ms, budgets=[b0, b1], pairing=pairing, overall=False)
    if evidence_types is not None:
        acc = acc[acc["evidence_type"].isin([tx.normalize_evidence(e) for e in evidence_types])]
    w = acc.pivot_table(index=["model", "evidence_type"], columns="budget", values="accuracy", observed=True)
    n = acc[acc["budget"] == b0].set_index(["model", "evidence_type"])["n"]
    out = pd.DataFrame({"baseline": w[b0], "comparison": w[b1]}).reset_index()
    out["drop"] = out["baseline"] - out["comparison"]
    out["change"] = out["comparison"] - out["baseline"]
    with np.errstate(divide="ignore", invalid="ignore"):
        out["retention"] = out["comparison"] / out["baseline"].replace(0.0, np.nan)
    out["n"] = [int(n.get((m, e), 0)) for m, e in zip(out["model"], out["evidence_type"])]
    return _order_frame(out, ms)


def sensitivity_correlations(release, *, baseline: str = "8K", comparison: str = "64K",
                             models: Sequence[str] | None = None, pairing: str = "all_budgets",
                             cells: pd.DataFrame | None = None,
                             measures: Sequence[str] = ("retention", "change")) -> pd.DataFrame:
    """Appendix D.5: Spearman ρ and p of retention and of the change in points vs baseline accuracy.

    The correlations run over the model × evidence cells of :func:`cell_changes` (by default
    the ten 64K models × four evidence types = 40 cells).  The paper's "change in percentage
    points" is ``change`` = comparison − baseline (negative for a loss), which gives its
    ρ = −0.77; ``"drop"`` (baseline − comparison) is also accepted and has the opposite sign.

    Returns
    -------
    DataFrame
        ``measure``, ``n`` (cells used), ``n_dropped`` (cells left out because the measure is
        undefined, e.g. retention with a 0% baseline), ``rho``, ``p_value``.
    """
    c = cells if cells is not None else cell_changes(release, baseline=baseline, comparison=comparison,
                                                       models=models, pairing=pairing)
    parts = []
    for measure in measures:
        if measure not in ("retention", "change", "drop"):
            raise ValueError(f"measure must be 'retention', 'change' or 'drop', got {measure!r}")
        r = spearman(c["baseline"].to_numpy(float), c[measure].to_numpy(float))
        r.insert(0, "measure", measure)
        parts.append(r)
    return pd.concat(parts, ignore_index=True)


# ============================================================================ artifacts
@artifact("fig6", title="Figure 6: retention (% of 8K) and mean accuracy (%) per evidence type per budget, 64K set")
def fig6(release, *, seed: int = 0, n_boot: int = 10_000, models=None, budgets=None,
         pairing: str = "all_budgets") -> pd.DataFrame:
    """Rows: evidence types by full name and ``Overall``; columns ``"<budget>"`` = retention in
    % of the type's own 8K accuracy (the paper's "retain 70.3%"), then ``"<budget> accuracy"``
    = mean accuracy (%) over the models."""
    es = evidence_scaling(release, models=models, budgets=budgets, pairing=pairing)
    bs = list(dict.fromkeys(es["budget"]))
    rows = [*tx.EVIDENCE_TYPES, OVERALL]
    ret = 100.0 * es.pivot(index="evidence_type", columns="budget", values="retention").reindex(index=rows, columns=bs)
    acc = es.pivot(index="evidence_type", columns="budget", values="accuracy").reindex(index=rows, columns=bs)
    ret.columns = [str(b) for b in bs]
    acc.columns = [f"{b} accuracy" for b in bs]
    out = pd.concat([ret, acc], axis=1)
    out.index = [evidence_label(e) for e in out.index]
    out.index.name = "Evidence type"
    return out


@artifact("table18", title="Table 18: paired change 8K to 64K with 95% bootstrap CIs, by evidence type and per model")
def table18(release, *, seed: int = 0, n_boot: int = 10_000, models=None, pairing: str = "all_budgets",
            baseline: str = "8K", comparison: str = "64K") -> pd.DataFrame:
    """Rows: evidence types (full names), ``Overall``, then models; columns ``n``, ``8K``,
    ``64K``, ``drop``, ``drop_lo``, ``drop_hi``, ``retention``, ``retention_lo``, ``retention_hi``."""
    pc = paired_change(release, baseline=baseline, comparison=comparison, models=models, pairing=pairing,
                       n_boot=n_boot, seed=seed)
    b0, b1 = pc["baseline_budget"].iloc[0], pc["comparison_budget"].iloc[0]
    out = pd.DataFrame({
        "n": pc["n"].astype(float), b0: pc["baseline"], b1: pc["comparison"],
        "drop": pc["drop"], "drop_lo": pc["drop_lo"], "drop_hi": pc["drop_hi"],
        "retention": pc["retention"], "retention_lo": pc["retention_lo"], "retention_hi": pc["retention_hi"],
    })
    out.index = [evidence_label(k) if lv == "evidence_type" else k for lv, k in zip(pc["level"], pc["key"])]
    out.index.name = "Row"
    return out


@artifact("d5", title="Appendix D.5: Spearman rho of retention and of the point change vs 8K accuracy over model x evidence cells")
def d5(release, *, seed: int = 0, n_boot: int = 10_000, models=None, pairing: str = "all_budgets") -> pd.DataFrame:
    """Rows ``retention`` and ``change`` (columns ``rho``, ``p``, ``n`` = cells used) and ``cells``
    (column ``n`` = model x evidence cells with an 8K and a 64K accuracy).

    ``change`` is the paper's D.5 "change in percentage points", 64K − 8K, correlated with 8K
    accuracy: negative when high-baseline cells lose more (paper: ρ = −0.77).  The Spearman ρ of
    the drop ``8K − 64K`` is its negative.
    """
    cells = cell_changes(release, models=models, pairing=pairing)
    sc = sensitivity_correlations(release, cells=cells, measures=("retention", "change"))
    out = pd.DataFrame({"rho": sc["rho"].to_numpy(), "p": sc["p_value"].to_numpy(), "n": sc["n"].astype(float).to_numpy()},
                       index=["retention", "change"])
    n_cells = int((cells["baseline"].notna() & cells["comparison"].notna()).sum())
    out.loc["cells"] = [np.nan, np.nan, float(n_cells)]
    out.index.name = "Measure"
    return out
