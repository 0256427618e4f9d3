"""Context-length scaling (Figure 6, Table 18, Appendix D.5): accuracy, change and retention from a baseline to a
comparison budget (:func:`scaling_plan`: the paper's 8K and 64K when run, else the shortest and the longest; the
models run at both). Change = comparison − baseline (pp; Table 18 prints its negative, the paper's drop); retention
= comparison / baseline. Table 18's intervals resample items; D.5's correlations resample models and also use the
mean of the two budgets, free of the change's coupling."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.clusters import attach_cluster, cluster_column
from voxmem_analysis.analysis.results import accuracy
from voxmem_analysis.analysis.selection import (OVERALL, baseline_budget, budgets_run, check_budgets, check_models,
                                                comparison_budget, evidence_label, fmt_budgets, no_budget_error,
                                                noted, order_frame, run_budgets, scored_predictions)
from voxmem_analysis.artifacts import artifact
from voxmem_analysis.errors import AnalysisInputError, MissingDataError
from voxmem_analysis.stats import BootstrapSettings, iter_bootstrap_counts, paired_bootstrap_frame, spearman
from voxmem_analysis.stats.endpoints import bootstrap_interval

__all__ = ["ScalingPlan", "scaling_plan", "noted_budgets", "describe_scaling", "evidence_scaling", "paired_change",
           "cell_changes", "sensitivity_correlations", "D5_MEASURES", "MIN_RESAMPLED_MODELS", "fig6", "fig6_table",
           "table18", "table18_table", "d5", "d5_table"]

_STAT_COLUMNS = ("baseline", "comparison", "drop", "retention")
#: What each D.5 measure correlates with the baseline (``change_vs_mean``: the change with the mean of both budgets).
D5_MEASURES = ("retention", "change", "change_vs_mean")
#: The fewest models D.5's intervals resample (two models give three distinct resamples, four give 35).
MIN_RESAMPLED_MODELS = 5


@dataclass(frozen=True)
class ScalingPlan:
    """``baseline`` → ``comparison`` over ``models``, all run at every one of ``budgets`` (Figure 6's)."""

    baseline: str
    comparison: str
    models: tuple[str, ...]
    budgets: tuple[str, ...]

    @property
    def arrow(self) -> str:
        return f"{self.baseline}\u2192{self.comparison}"

    def title(self) -> str:
        """``"8K→64K: 10 models run at 8K, 16K, 32K, 64K"``."""
        k = len(self.models)
        return f"{self.arrow}: {k} model{'s' if k != 1 else ''} run at {fmt_budgets(self.budgets)}"


def scaling_plan(release, *, baseline: str | None = None, comparison: str | None = None,
                 models: Sequence[str] | None = None, budgets: Iterable[str] | None = None) -> ScalingPlan:
    """The budgets and models of a scaling comparison: ``comparison`` 64K, else the longest; ``baseline`` 8K, else
    the shortest budget of the models run at the comparison; the ``models`` run at both (and at every one of
    ``budgets``, default: every budget all of them were run at).  :class:`MissingDataError` for one budget or no
    model at both, :class:`AnalysisInputError` for equal budgets or an unknown name."""
    cand = check_models(release, models)
    rb = run_budgets(release)
    b1 = comparison_budget(release, comparison, models=cand)
    at1 = [m for m in cand if b1 in rb[m]]
    if not at1:
        raise no_budget_error(release, [b1], cand, hint="pass comparison= one of them")
    if baseline is None:
        others = [b for b in budgets_run(release, at1) if b != b1]
        if not others:
            present = budgets_run(release, cand)
            only = "the release was run at one budget only" if len(present) == 1 else \
                f"the models run at {b1} were run at no other budget"
            raise MissingDataError(f"scaling needs two budgets, but {only} ({b1})",
                                   f"budgets run in this release: {fmt_budgets(present)}",
                                   code="one_budget", field="context_length")
        b0 = "8K" if "8K" in others else others[0]
    else:
        b0 = baseline_budget(release, baseline, models=cand)
    if b0 == b1:
        raise AnalysisInputError(f"baseline and comparison budgets must differ (both {b0})", "baseline")
    ms = [m for m in at1 if b0 in rb[m]]
    if not ms:
        raise no_budget_error(release, None, cand, reason=f"no model was run at both {b0} and {b1}",
                              hint="pass baseline=/comparison= budgets some model was run at")
    if budgets is not None:
        bs = sorted(set(check_budgets(budgets)) | {b0, b1}, key=tx.BUDGETS.index)
        ms = [m for m in ms if set(bs) <= set(rb[m])]
        if not ms:
            raise no_budget_error(release, None, cand,
                                  reason=f"no model run at {b0} and {b1} was also run at every one of {fmt_budgets(bs)}")
    else:
        common = set.intersection(*(set(rb[m]) for m in ms))
        bs = [b for b in tx.BUDGETS if b in common]
    return ScalingPlan(b0, b1, tuple(ms), tuple(bs))


def noted_budgets(table: pd.DataFrame, b0: str, b1: str, baseline, comparison) -> pd.DataFrame:
    """``table`` noting the baseline ``b0`` and comparison ``b1`` taken from the release (:func:`.selection.noted`)."""
    table = noted(table, "baseline", b0, baseline, "8K", "the shortest budget run")
    return noted(table, "comparison", b1, comparison, "64K", "the longest budget run")


def describe_scaling(release, *, baseline: str | None = None, comparison: str | None = None,
                     models: Sequence[str] | None = None) -> str:
    """Printable account of :func:`scaling_plan`: budgets used and why, models; or why scaling is impossible."""
    try:
        plan = scaling_plan(release, baseline=baseline, comparison=comparison, models=models)
    except MissingDataError as exc:
        return f"Context scaling cannot be computed: {exc.reason}. The sections below are skipped."
    why = []
    if comparison is None and plan.comparison != "64K":
        why.append(f"no model was run at 64K, so the comparison is the longest budget run, {plan.comparison}")
    if baseline is None and plan.baseline != "8K":
        why.append(f"no model run at {plan.comparison} was run at 8K, so the baseline is the shortest, {plan.baseline}")
    k = len(plan.models)
    return "\n".join([
        f"Budgets run: {fmt_budgets(budgets_run(release, models))}",
        f"Scaling {plan.arrow} (baseline {plan.baseline}, comparison {plan.comparison}"
        + (": " + "; ".join(why) if why else "") + ")",
        f"Models ({k}, run at both): {', '.join(plan.models)}",
        f"Figure 6 budgets ({f'each run by all {k} models' if k != 1 else 'those it was run at'}): "
        f"{fmt_budgets(plan.budgets)}"])


def evidence_scaling(release, *, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None,
                     pairing: str = "all_budgets", reference: str | None = None,
                     comparison: str | None = None) -> pd.DataFrame:
    """Figure 6: mean accuracy (%) over the models of :func:`scaling_plan` per evidence type (+ ``overall``) and budget,
    and its retention relative to ``reference`` (the plan's baseline). Columns ``budget, evidence_type, accuracy,
    retention, n_models, reference_budget``."""
    plan = scaling_plan(release, baseline=reference, comparison=comparison, models=models, budgets=budgets)
    ref = plan.baseline
    bs = list(plan.budgets) if budgets is None else check_budgets(budgets)
    acc = accuracy(release, "evidence_type", models=list(plan.models),
                   budgets=sorted(set(bs) | {ref}, key=tx.BUDGETS.index), pairing=pairing, overall=True)
    m = acc.groupby(["budget", "evidence_type"], sort=False).agg(
        accuracy=("accuracy", "mean"), n_models=("model", "nunique")).reset_index()
    base = m[m["budget"] == ref].set_index("evidence_type")["accuracy"].astype(float)
    ref_acc = pd.to_numeric(m["evidence_type"].map(base.to_dict()), errors="coerce").astype(float)
    with np.errstate(divide="ignore", invalid="ignore"):
        m["retention"] = m["accuracy"].astype(float) / ref_acc.replace(0.0, np.nan)
    m = m[m["budget"].isin(bs)].assign(reference_budget=ref)
    return order_frame(m[["budget", "evidence_type", "accuracy", "retention", "n_models", "reference_budget"]], [])


def _bootstrap_long(boot: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The engine's rows (one per statistic) as one row per key.  Its ``drop`` comes back as ``change``, the exact
    negation (``0.0 - drop``, bounds swapped), so Table 18, which prints the drop, gets its numbers bit for bit."""
    wide = {}
    for rec in boot.to_dict("records"):
        row = wide.setdefault(tuple(rec[c] for c in keys), {
            **{c: rec[c] for c in keys}, "n": rec["n"], "n_models": rec["n_series"],
            **{c: rec[c] for c in ("n_boot", "seed", "cluster", "n_clusters", "interval")}})
        s = rec["statistic"]
        name, sign, lo, hi = ("change", -1.0, "ci_high", "ci_low") if s == "drop" else (s, 1.0, "ci_low", "ci_high")
        row[name] = 0.0 - rec["estimate"] if sign < 0 else rec["estimate"]
        if s in ("drop", "retention"):
            row.update({f"{name}_ci_low": 0.0 - rec[lo] if sign < 0 else rec[lo],
                        f"{name}_ci_high": 0.0 - rec[hi] if sign < 0 else rec[hi], f"{name}_n_invalid": rec["n_invalid"],
                        f"{name}_ci_low_mc_se": rec[f"{lo}_mc_se"], f"{name}_ci_high_mc_se": rec[f"{hi}_mc_se"],
                        f"{name}_design_effect": rec["design_effect"]})
    return pd.DataFrame(list(wide.values()))


_PAIRED_COLUMNS = ["level", "key", "n", "n_models", "baseline", "comparison", "change", "change_ci_low",
                   "change_ci_high", "retention", "retention_ci_low", "retention_ci_high", "change_n_invalid",
                   "retention_n_invalid", "ci_level", "n_boot", "seed", "baseline_budget", "comparison_budget",
                   "interval", "cluster", "n_clusters", "change_design_effect", "retention_design_effect",
                   "change_ci_low_mc_se", "change_ci_high_mc_se", "retention_ci_low_mc_se", "retention_ci_high_mc_se"]


def paired_change(release, *, baseline: str | None = None, comparison: str | None = None,
                  models: Sequence[str] | None = None, pairing: str = "all_budgets", n_boot: int = 10_000,
                  seed: int = 0, ci_level: float = 0.95, cluster: str = "item",
                  interval: str = "percentile") -> pd.DataFrame:
    """Table 18: the paired change from ``baseline`` to ``comparison`` (:func:`scaling_plan`) with bootstrap
    intervals, per evidence type and ``overall`` (means over the models) and per model.

    Items are resampled (``cluster="family"``: question families) and both budgets of every model rescored on every
    resample, an item entering a model's accuracy only when judged at both budgets; one ``seed`` serves every row.
    ``interval="bca"``: BCa endpoints (beyond the paper). Columns ``level`` (``evidence_type`` or ``model``), ``key``,
    ``n`` (items), ``n_models``, ``baseline``, ``comparison`` (%), ``change`` (pp) and ``retention`` each with
    ``_ci_low``, ``_ci_high``, ``_n_invalid`` (resamples where undefined), ``ci_level, n_boot, seed, baseline_budget,
    comparison_budget, interval, cluster, n_clusters``, ``change_design_effect, retention_design_effect`` (cluster over
    item replicate variance) and each endpoint's Monte-Carlo standard error (``change_ci_low_mc_se`` ...)."""
    plan = scaling_plan(release, baseline=baseline, comparison=comparison, models=models)
    b0, b1, ms = plan.baseline, plan.comparison, list(plan.models)
    pred = attach_cluster(scored_predictions(release, models=ms, budgets=[b0, b1], pairing=pairing), release, cluster)
    run = BootstrapSettings(n_boot=n_boot, seed=seed, ci_level=ci_level, interval=interval)
    kw = dict(item="question_id", series="model", condition="budget", value="correct", baseline=b0,
              comparison=b1, cluster=cluster_column(cluster))
    ev = _bootstrap_long(paired_bootstrap_frame(pred, groups="evidence_type", settings=run.paired(_STAT_COLUMNS), **kw),
                         ["evidence_type"]).rename(columns={"evidence_type": "key"})
    ov = _bootstrap_long(paired_bootstrap_frame(pred, settings=run.paired(_STAT_COLUMNS), **kw), []).assign(key=OVERALL)
    pm = _bootstrap_long(paired_bootstrap_frame(pred, settings=run.paired(_STAT_COLUMNS, None), **kw),
                         ["model"]).rename(columns={"model": "key"})
    ev = ev.set_index("key").reindex([e for e in tx.EVIDENCE_TYPES if e in set(ev["key"])]).reset_index()
    pm = pm.set_index("key").reindex([m for m in ms if m in set(pm["key"])]).reset_index()
    out = pd.concat([ev.assign(level="evidence_type"), ov.assign(level="evidence_type"), pm.assign(level="model")],
                    ignore_index=True)
    out["ci_level"], out["baseline_budget"], out["comparison_budget"], out["cluster"] = ci_level, b0, b1, cluster
    return out[_PAIRED_COLUMNS]


def cell_changes(release, *, baseline: str | None = None, comparison: str | None = None,
                 models: Sequence[str] | None = None, pairing: str = "all_budgets",
                 evidence_types: Sequence[str] | None = None) -> pd.DataFrame:
    """Per model × evidence type cell (budgets and models as :func:`paired_change`), change and retention (NaN at a 0 %
    baseline) each one division of exact integer counts, so cells with equal exact values stay equal (D.5's ties).
    Columns ``model, evidence_type, baseline, comparison, change, retention, n, baseline_budget, comparison_budget``."""
    plan = scaling_plan(release, baseline=baseline, comparison=comparison, models=models)
    b0, b1, ms = plan.baseline, plan.comparison, list(plan.models)
    acc = accuracy(release, "evidence_type", models=ms, budgets=[b0, b1], pairing=pairing, overall=False)
    if evidence_types is not None:
        acc = acc[acc["evidence_type"].isin([tx.normalize_evidence(e) for e in evidence_types])]
    w = acc.pivot_table(index=["model", "evidence_type"], columns="budget", values="accuracy", observed=True)
    w = w.reindex(columns=[b0, b1])
    n = acc[acc["budget"] == b0].set_index(["model", "evidence_type"])["n"]
    out = pd.DataFrame({"baseline": w[b0], "comparison": w[b1]}).reset_index()
    out["change"], out["retention"] = _exact_change_retention(acc, out, b0, b1)
    out["n"] = [int(n.get((m, e), 0)) for m, e in zip(out["model"], out["evidence_type"])]
    out["baseline_budget"], out["comparison_budget"] = b0, b1
    return order_frame(out, ms)


def _exact_change_retention(acc: pd.DataFrame, cells: pd.DataFrame, b0: str, b1: str) -> tuple[np.ndarray, np.ndarray]:
    """``change`` = 100 (c1 n0 − c0 n1) / (n0 n1) and ``retention`` = c1 n0 / (c0 n1) of ``cells`` in Python
    integers (the difference or ratio of two rounded percentages would split D.5's rank ties)."""
    key = ["model", "evidence_type"]
    counts = acc.set_index([*key, "budget"])[["n", "n_correct"]]
    idx = pd.MultiIndex.from_frame(cells[key])

    def at(budget: str, col: str) -> np.ndarray:
        s = counts[col].xs(budget, level="budget") if budget in set(acc["budget"]) else pd.Series(dtype=float)
        return s.reindex(idx).to_numpy(dtype=float)

    n0, c0, n1, c1 = at(b0, "n"), at(b0, "n_correct"), at(b1, "n"), at(b1, "n_correct")
    ok = ~(np.isnan(n0) | np.isnan(c0) | np.isnan(n1) | np.isnan(c1)) & (n0 > 0) & (n1 > 0)
    change, retention = np.full(len(cells), np.nan), np.full(len(cells), np.nan)
    for i in np.flatnonzero(ok):
        a0, m0, a1, m1 = int(c0[i]), int(n0[i]), int(c1[i]), int(n1[i])
        change[i] = (100 * (a1 * m0 - a0 * m1)) / (m0 * m1)
        if a0 > 0:
            retention[i] = (a1 * m0) / (a0 * m1)
    return change, retention


def sensitivity_correlations(release, *, baseline: str | None = None, comparison: str | None = None,
                             models: Sequence[str] | None = None, pairing: str = "all_budgets",
                             cells: pd.DataFrame | None = None, measures: Sequence[str] = D5_MEASURES,
                             n_boot: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Appendix D.5: Spearman ρ of retention and of the change against the baseline accuracy over the model ×
    evidence cells of :func:`cell_changes` (or ``cells``).

    ``rho`` and ``p_value`` are the paper's (cells independent); the interval resamples models, all cells of a drawn
    model together (percentile, ``n_boot``, ``seed``; NaN below :data:`MIN_RESAMPLED_MODELS`).  The change contains the
    baseline (coupled by construction), so ``change_vs_mean`` correlates it with the mean of the two budgets instead
    (Oldham 1962). Columns ``measure, n`` (cells used), ``n_dropped`` (cells where the measure is undefined), ``rho,
    p_value, rho_ci_low, rho_ci_high, ci_level, n_models, n_boot, seed``."""
    c = cells if cells is not None else cell_changes(release, baseline=baseline, comparison=comparison,
                                                       models=models, pairing=pairing)
    parts = []
    for measure in measures:
        if measure not in D5_MEASURES:
            raise AnalysisInputError(f"measure must be one of {', '.join(D5_MEASURES)}, got {measure!r}", "measures")
        x = c["baseline"].to_numpy(float)
        if measure == "change_vs_mean":
            x = (x + c["comparison"].to_numpy(float)) / 2
        y = c["retention" if measure == "retention" else "change"].to_numpy(float)
        ok = np.isfinite(x) & np.isfinite(y)
        lo, hi, k = _model_bootstrap_rho(x[ok], y[ok], c["model"].to_numpy()[ok], n_boot, seed)
        r = spearman(x, y).drop(columns=["rho_ci_low", "rho_ci_high"])
        parts.append(r.assign(rho_ci_low=lo, rho_ci_high=hi, n_models=k, n_boot=n_boot, seed=seed, measure=measure))
    cols = ["measure", "n", "n_dropped", "rho", "p_value", "rho_ci_low", "rho_ci_high", "ci_level", "n_models",
            "n_boot", "seed"]
    return pd.concat(parts, ignore_index=True)[cols]


def _midranks(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Mid-ranks of ``values`` in every resample whose multiplicities are the rows of ``weights`` (B x n)."""
    _, group = np.unique(values, return_inverse=True)
    member = np.zeros((len(values), group.max() + 1))
    member[np.arange(len(values)), group] = 1.0
    per = weights @ member                                  # B x groups: copies of each distinct value
    below = np.cumsum(per, axis=1) - per
    return (below + (per + 1) / 2)[:, group]


def _model_bootstrap_rho(x: np.ndarray, y: np.ndarray, model: np.ndarray, n_boot: int,
                         seed: int) -> tuple[float, float, int]:
    """Percentile 95% interval of Spearman's ρ(x, y) resampling the models, and the number of models."""
    codes, names = pd.factorize(model, sort=True)
    k = len(names)
    if k < MIN_RESAMPLED_MODELS or len(x) < 3:
        return np.nan, np.nan, k
    w = np.vstack(list(iter_bootstrap_counts(k, n_boot=n_boot, seed=seed)))[:, codes]
    rx, ry = _midranks(x, w), _midranks(y, w)
    tot = w.sum(axis=1, keepdims=True)
    mx, my = (w * rx).sum(1, keepdims=True) / tot, (w * ry).sum(1, keepdims=True) / tot
    cov = (w * (rx - mx) * (ry - my)).sum(1)
    var = (w * (rx - mx) ** 2).sum(1) * (w * (ry - my) ** 2).sum(1)
    with np.errstate(divide="ignore", invalid="ignore"):
        reps = np.where(var > 0, cov / np.sqrt(var), np.nan)
    ci = bootstrap_interval(reps, float(spearman(x, y)["rho"].iloc[0]))
    return ci["ci_low"], ci["ci_high"], k


# ---------------------------------------------------------------------------- artifacts
@artifact("fig6", title="Figure 6: retention (% of 8K) and mean accuracy (%) per evidence type per budget, 64K set")
def fig6(release, *, seed: int = 0, n_boot: int = 10_000, models=None, budgets=None,
         pairing: str = "all_budgets", baseline: str | None = None, comparison: str | None = None) -> pd.DataFrame:
    """Rows: evidence types and ``Overall``; columns ``"<budget>"`` (retention in % of the type's ``baseline``
    accuracy) and ``"<budget> accuracy"`` (mean over the models of :func:`scaling_plan`)."""
    plan = scaling_plan(release, baseline=baseline, comparison=comparison, models=models, budgets=budgets)
    out = fig6_table(evidence_scaling(release, models=models, budgets=budgets, pairing=pairing,
                                      reference=baseline, comparison=comparison))
    return noted_budgets(out, plan.baseline, plan.comparison, baseline, comparison)


def fig6_table(es: pd.DataFrame) -> pd.DataFrame:
    """Figure 6 as printed (:func:`fig6`) from an :func:`evidence_scaling` result."""
    bs = list(dict.fromkeys(es["budget"]))
    rows = [*tx.EVIDENCE_TYPES, OVERALL]
    ret = 100.0 * es.pivot(index="evidence_type", columns="budget", values="retention").reindex(index=rows, columns=bs)
    acc = es.pivot(index="evidence_type", columns="budget", values="accuracy").reindex(index=rows, columns=bs)
    ret.columns = [str(b) for b in bs]
    acc.columns = [f"{b} accuracy" for b in bs]
    out = pd.concat([ret, acc], axis=1)
    out.index = pd.Index([evidence_label(e) for e in out.index], name="Evidence type")
    return out


@artifact("table18", title="Table 18: paired change 8K to 64K with 95% bootstrap CIs, by evidence type and per model")
def table18(release, *, seed: int = 0, n_boot: int = 10_000, models=None, pairing: str = "all_budgets",
            baseline: str | None = None, comparison: str | None = None, cluster: str = "item",
            interval: str = "percentile", mc_se: bool = False) -> pd.DataFrame:
    """Table 18 as printed (:func:`table18_table` of :func:`paired_change`).  Beyond the paper:
    ``cluster="family"``, ``interval="bca"``, ``mc_se=True``; the defaults print the paper's table."""
    pc = paired_change(release, baseline=baseline, comparison=comparison, models=models, pairing=pairing,
                       n_boot=n_boot, seed=seed, cluster=cluster, interval=interval)
    return noted_budgets(table18_table(pc, mc_se=mc_se), pc["baseline_budget"].iloc[0],
                         pc["comparison_budget"].iloc[0], baseline, comparison)


def table18_table(pc: pd.DataFrame, *, mc_se: bool = False) -> pd.DataFrame:
    """Table 18 from a :func:`paired_change` result: rows evidence types, ``Overall``, models; columns ``n``, the
    two budgets, ``drop`` (= −change) with ``drop_lo, drop_hi``, ``retention`` with ``retention_lo, _hi``; then
    ``interval`` (not percentile), ``cluster, drop deff, retention deff`` (families) and ``<col> mc_se``."""
    interval = str(pc["interval"].iloc[0]) if "interval" in pc and len(pc) else "percentile"
    cluster = str(pc["cluster"].iloc[0]) if "cluster" in pc and len(pc) else "item"
    b0, b1 = pc["baseline_budget"].iloc[0], pc["comparison_budget"].iloc[0]
    out = pd.DataFrame({
        "n": pc["n"].astype(float), b0: pc["baseline"], b1: pc["comparison"],
        "drop": 0.0 - pc["change"], "drop_lo": 0.0 - pc["change_ci_high"], "drop_hi": 0.0 - pc["change_ci_low"],
        "retention": pc["retention"], "retention_lo": pc["retention_ci_low"], "retention_hi": pc["retention_ci_high"],
    })
    if interval != "percentile":
        out["interval"] = interval
    if cluster != "item":
        out["cluster"] = cluster
        out["drop deff"] = pc["change_design_effect"].to_numpy()
        out["retention deff"] = pc["retention_design_effect"].to_numpy()
    if mc_se:
        for col, src in (("drop_lo", "change_ci_high"), ("drop_hi", "change_ci_low"),
                         ("retention_lo", "retention_ci_low"), ("retention_hi", "retention_ci_high")):
            out[f"{col} mc_se"] = pc[f"{src}_mc_se"].to_numpy()
    out.index = pd.Index([evidence_label(k) if lv == "evidence_type" else k for lv, k in zip(pc["level"], pc["key"])],
                         name="Row")
    return out


@artifact("d5", title="Appendix D.5: Spearman rho of retention and of the point change vs 8K accuracy over model x evidence cells")
def d5(release, *, seed: int = 0, n_boot: int = 10_000, models=None, pairing: str = "all_budgets",
       baseline: str | None = None, comparison: str | None = None) -> pd.DataFrame:
    """Appendix D.5 as printed (:func:`d5_table` of :func:`cell_changes` and :func:`sensitivity_correlations`)."""
    cells = cell_changes(release, models=models, pairing=pairing, baseline=baseline, comparison=comparison)
    out = d5_table(cells, sensitivity_correlations(release, cells=cells, n_boot=n_boot, seed=seed))
    return noted_budgets(out, cells["baseline_budget"].iloc[0], cells["comparison_budget"].iloc[0], baseline,
                         comparison)


def d5_table(cells: pd.DataFrame, sc: pd.DataFrame) -> pd.DataFrame:
    """Rows ``retention``, ``change``, ``change vs mean`` (``rho``, ``p``, ``n`` = cells used, ``rho CI low /
    high`` resampling models) and ``cells`` (``n``: cells with both accuracies)."""
    out = pd.DataFrame({"rho": sc["rho"].to_numpy(), "p": sc["p_value"].to_numpy(), "n": sc["n"].astype(float).to_numpy(),
                        "rho CI low": sc["rho_ci_low"].to_numpy(), "rho CI high": sc["rho_ci_high"].to_numpy()},
                       index=[m.replace("_", " ") for m in sc["measure"]])
    out.loc["cells"] = [np.nan, np.nan, float((cells["baseline"].notna() & cells["comparison"].notna()).sum()),
                        np.nan, np.nan]
    out.index.name = "Measure"
    return out
