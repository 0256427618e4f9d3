"""Main results: accuracy by model, evidence type, operation and budget (paper §4, App. D.1–D.3).

Every function takes a :class:`~voxmem_analysis.io.Release` and returns a tidy pandas
DataFrame; the ``@artifact`` functions at the bottom reshape them into the paper's printed tables.

* **Accuracy** = ``correct / scored`` in percent (the release's ``scored`` column: provider
  rejections out, failed generations and unparseable verdicts in as wrong; Appendix C.4).
* **Group means** are unweighted means of per-model accuracies; **Overall** pools every item.
* **Pairing** (Appendix C.6): ``"all_budgets"`` (the paper's) scores each model on the questions it
  was judged on at every budget it was run at (64K only for the 64K set); ``"shared"`` uses one
  question set judged at ``shared_budgets`` for every requested model (Figure 8); ``"none"`` scores
  every budget on its own items.
* **Budgets**: ``budget=None`` takes the paper's budget when the release has it and one from the
  release otherwise (:mod:`voxmem_analysis.analysis.selection`); what a release cannot support
  raises :class:`MissingDataError`, which :func:`section` prints as a skipped section.
"""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.accuracy import accuracy_table
from voxmem_analysis.artifacts import artifact
from voxmem_analysis.stats import spearman
from voxmem_analysis.analysis.selection import (GROUP_LABELS, GROUP_ORDER, OVERALL, PAIRINGS, MissingDataError,
                                                baseline_budget, budgets_run, check_budgets, check_models,
                                                comparison_budget, describe_budgets, describe_shared_set, fig8_panels,
                                                evidence_label, fig5_budget, fmt_budgets, mean_row_label,
                                                missing_source_operations, models_at_budget, models_at_or_fail,
                                                no_budget_error, order_frame, run_budgets, scored_frame,
                                                scored_predictions, section, shared_set, skip_reason)

__all__ = [
    "PAIRINGS", "OVERALL", "GROUP_LABELS", "GROUP_TITLES", "MissingDataError", "section", "skip_reason",
    "budgets_run", "comparison_budget", "baseline_budget", "fig5_budget", "describe_budgets", "shared_set",
    "fig8_panels", "describe_shared_set",
    "missing_source_operations", "run_budgets", "models_at_budget", "scored_predictions",
    "accuracy", "group_means", "evidence_accuracy", "evidence_panels", "group_summary", "answerable_vs_refusal",
    "answerable_refusal_summary", "operation_evidence", "refusal_breakdown",
    "table15", "table16", "table17", "fig4", "fig5", "fig8", "groups_table", "TABLE15_PAPER_ORDER", "paper_row_order",
    "evidence_label", "mean_row_label",
]


# ============================================================================ accuracies
def _per_model(pred: pl.DataFrame, by: list[str], overall: bool) -> pd.DataFrame:
    """``model, budget, *by, n, n_correct, accuracy`` of scored predictions (:func:`accuracy_table`),
    plus the pooled rows (every ``by`` column :data:`OVERALL`) when ``overall``; models in order of
    first appearance (the paper's order in :func:`scored_predictions` output)."""
    keys = ["model", "budget", *by]
    parts = [accuracy_table(pred, keys)]
    if overall and by:
        o = accuracy_table(pred, ["model", "budget"])
        for c in by:
            o[c] = OVERALL
        parts.append(o[parts[0].columns])
    out = pd.concat(parts, ignore_index=True)[[*keys, "n", "n_correct", "accuracy"]]
    return order_frame(out, list(dict.fromkeys(pred["model"])))


def accuracy(release, by: str | Sequence[str] = ("evidence_type",), *, models: Sequence[str] | None = None,
             budgets: Iterable[str] | None = None, pairing: str = "all_budgets", overall: bool = True,
             where: pl.Expr | None = None, shared_budgets: Iterable[str] | None = None) -> pd.DataFrame:
    """Per-model accuracy (%) by any grouping of the verdict frame: ``model, budget, *by, n, n_correct,
    accuracy`` (``n`` scored items), in the paper's order.

    ``by``: columns besides model and budget (``"evidence_type"``, ``"operation"``, ``"is_ar"`` ...; ``[]``:
    the pooled score); ``models, budgets, pairing, shared_budgets`` as in :func:`scored_predictions`;
    ``overall`` adds the pooled level (every ``by`` column :data:`OVERALL`); ``where``: a polars filter
    applied after the pairing rule (which it leaves unchanged)."""
    by = [by] if isinstance(by, str) else list(by)
    models = check_models(release, models)
    pred = scored_frame(release, models=models, budgets=budgets, pairing=pairing, shared_budgets=shared_budgets)
    if where is not None:
        pred = pred.filter(where)
    return order_frame(_per_model(pred, by, overall), models)


def _questions(pred: pl.DataFrame, by: list[str]) -> pd.DataFrame:
    """``*by, n``: distinct questions per group of scored predictions (groups with a null key left out)."""
    return (pred.drop_nulls(by).group_by(by).agg(pl.col("question_id").n_unique().cast(pl.Int64).alias("n"))
            .to_pandas())


_UNKNOWN_GROUPS = ("unknown", "")


def _access_groups(release, models: Sequence[str], *, include_unknown: bool = False) -> dict[str, list[str]]:
    """``{access group: models}`` among ``models``; models without a group (no ``models.csv`` row)
    are left out unless ``include_unknown`` (their group is then ``"unknown"``)."""
    grp = release.groups()
    out = {g: [m for m in grp.get(g, []) if m in set(models)] for g in grp
           if include_unknown or g not in _UNKNOWN_GROUPS}
    return {g: ms for g, ms in out.items() if ms}


def group_means(acc: pd.DataFrame, groups: dict[str, Sequence[str]] | None = None, *, by: Sequence[str] | None = None,
                value: str = "accuracy", include_all: bool = True) -> pd.DataFrame:
    """Unweighted mean over models of the per-model frame ``acc``, per group of ``groups``
    (``{group: [models]}``) and over every model (``"all"``, unless ``include_all=False``):
    ``group, *by, <value>, n_models``; ``by`` defaults to every non-numeric column but ``model``."""
    if by is None:
        by = [c for c in acc.columns if c not in ("model", "n", "n_correct", value)
              and not pd.api.types.is_numeric_dtype(acc[c])]
    by = list(by)
    sets = dict(groups or {})
    if include_all:
        sets["all"] = list(dict.fromkeys(acc["model"]))
    parts = []
    for g, ms in sets.items():
        sub = acc[acc["model"].isin(list(ms))]
        if sub.empty:
            continue
        if by:
            agg = sub.groupby(by, observed=True, sort=False).agg(**{value: (value, "mean"), "n_models": ("model", "nunique")})
            agg = agg.reset_index()
        else:
            agg = pd.DataFrame({value: [sub[value].mean()], "n_models": [sub["model"].nunique()]})
        agg.insert(0, "group", g)
        parts.append(agg)
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["group", *by, value, "n_models"])
    return order_frame(out, [])


def evidence_accuracy(release, *, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None,
                      pairing: str = "all_budgets") -> pd.DataFrame:
    """Figure 4 / Table 15 numbers, long: per model × budget × evidence type (+ ``overall``).

    Returns
    -------
    DataFrame
        ``model, group, budget, evidence_type, n, n_correct, accuracy`` (``group`` is the
        model's access group).
    """
    acc = accuracy(release, "evidence_type", models=models, budgets=budgets, pairing=pairing, overall=True)
    access = dict(zip(release.models["model"], release.models["access"]))
    acc.insert(1, "group", acc["model"].map(lambda m: access.get(m) or "unknown"))
    return acc


def evidence_panels(release, *, budgets: Iterable[str] | None = None, models: Sequence[str] | None = None,
                    pairing: str = "all_budgets") -> pd.DataFrame:
    """Figure 4 data: ``budget, row, kind, group, evidence_type, accuracy, n, n_models``, per budget one
    row per model run there (``kind == "model"``, ``n`` scored items; proprietary first, then open-weight,
    each in the release's order) and one per group mean (``kind == "mean"``, ``row`` ``"Mean proprietary"``
    ..., ``n_models`` averaged) last."""
    acc = evidence_accuracy(release, models=models, budgets=budgets, pairing=pairing)
    parts = []
    for b in check_budgets(budgets):
        sub = acc[acc["budget"] == b]
        if sub.empty:
            continue
        ms = list(dict.fromkeys(sub["model"]))
        groups = _access_groups(release, ms)
        every = _access_groups(release, ms, include_unknown=True)
        order = [m for g in [*GROUP_ORDER, *[g for g in every if g not in GROUP_ORDER]] for m in every.get(g, [])]
        rank = {m: i for i, m in enumerate(order)}
        mrows = sub.assign(row=sub["model"], kind="model", n_models=1,
                           _o=sub["model"].map(rank)).sort_values(["_o"], kind="stable").drop(columns=["_o", "model"])
        gm = group_means(sub, groups, by=["budget", "evidence_type"])
        gorder = [*[g for g in GROUP_ORDER if g in groups], *[g for g in groups if g not in GROUP_ORDER], "all"]
        gm = gm.assign(row=["Mean " + GROUP_LABELS.get(g, g) for g in gm["group"]], kind="mean", n=np.nan,
                       _o=gm["group"].map({g: i for i, g in enumerate(gorder)})).sort_values("_o", kind="stable")
        parts += [mrows, gm.drop(columns="_o")]
    if not parts:
        raise no_budget_error(release, budgets, models)
    out = pd.concat(parts, ignore_index=True)
    return out[["budget", "row", "kind", "group", "evidence_type", "accuracy", "n", "n_models"]]


def group_summary(release, *, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None,
                  pairing: str = "all_budgets") -> pd.DataFrame:
    """Proprietary / open-weight / all means per budget × evidence type (+ ``overall``).

    At each budget the models are those run there (so 64K uses the 64K set).

    Returns
    -------
    DataFrame
        ``group, budget, evidence_type, accuracy, n_models``.
    """
    acc = accuracy(release, "evidence_type", models=models, budgets=budgets, pairing=pairing, overall=True)
    parts = []
    for b, sub in acc.groupby("budget", observed=True, sort=False):
        gm = group_means(sub, _access_groups(release, list(dict.fromkeys(sub["model"]))), by=["budget", "evidence_type"])
        parts.append(gm)
    if not parts:
        raise no_budget_error(release, budgets, models)
    out = pd.concat(parts, ignore_index=True)
    return order_frame(out, [])


def answerable_vs_refusal(release, *, budget: str | None = None, models: Sequence[str] | None = None,
                          pairing: str = "all_budgets") -> pd.DataFrame:
    """Table 16: accuracy on answerable and on AR items per model at one budget.

    Sorted as the paper: by answerable accuracy, highest first (ties keep model order).
    ``budget=None``: :func:`comparison_budget`.  Raises :class:`MissingDataError` when no model
    was run at ``budget``.

    Returns
    -------
    DataFrame
        ``model, answerable, ar, overall, n_answerable, n_ar, n`` (accuracies in %).
    """
    budget = comparison_budget(release, budget, models=models)
    ms = models_at_or_fail(release, budget, models)
    acc = accuracy(release, "is_ar", models=ms, budgets=[budget], pairing=pairing, overall=True)
    key = acc["is_ar"].map(lambda v: "overall" if v == OVERALL else ("ar" if bool(v) else "answerable"))
    acc = acc.assign(stratum=key)
    wide = acc.pivot(index="model", columns="stratum", values="accuracy")
    n = acc.pivot(index="model", columns="stratum", values="n")
    out = pd.DataFrame({
        "model": wide.index,
        "answerable": wide.get("answerable"), "ar": wide.get("ar"), "overall": wide.get("overall"),
        "n_answerable": n.get("answerable"), "n_ar": n.get("ar"), "n": n.get("overall"),
    }).reset_index(drop=True)
    for c in ("n_answerable", "n_ar", "n"):
        out[c] = out[c].fillna(0).astype(int)
    order = {m: i for i, m in enumerate(ms)}
    out["_o"] = out["model"].map(order)
    # ties on answerable accuracy are broken by overall accuracy, as the paper's Table 16 lists
    # Qwen3-Omni-30B-A3B (overall 20.7) before Baichuan-Audio-7B (17.8), both at 135/669
    out["_a"] = out["answerable"].round(9)
    out = out.sort_values(["_a", "overall", "_o"], ascending=[False, False, True], kind="stable")
    return out.drop(columns=["_o", "_a"]).reset_index(drop=True)


def _spearman(x, y) -> tuple[float, float, float, float]:
    """rho, p and the Fisher-z 95% interval of rho (pingouin, via ``stats.spearman``)."""
    r = spearman(np.asarray(x, float), np.asarray(y, float)).iloc[0]
    return float(r["rho"]), float(r["p_value"]), float(r["rho_ci_low"]), float(r["rho_ci_high"])


def answerable_refusal_summary(release, *, budget: str | None = None, models: Sequence[str] | None = None,
                               pairing: str = "all_budgets", table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Spearman ρ between the two columns of Table 16 and the "always abstain" bound, one row: ``budget,
    n_models, rho, p_value, n_questions, n_ar_questions, always_abstain`` (the AR share of the questions, %)
    and ``rho_ci_low, rho_ci_high`` (Fisher-z 95%, pingouin).  ρ is NaN with fewer than three models, its
    interval with fewer than four."""
    budget = comparison_budget(release, budget, models=models)
    t = table if table is not None else answerable_vs_refusal(release, budget=budget, models=models, pairing=pairing)
    rho, p, lo, hi = _spearman(t["answerable"], t["ar"]) if len(t) >= 3 else (np.nan,) * 4
    q = scored_frame(release, models=list(t["model"]), budgets=[budget], pairing=pairing).unique("question_id")
    nq, nar = q.height, int(q["is_ar"].sum())
    return pd.DataFrame([{"budget": budget, "n_models": len(t), "rho": rho, "p_value": p, "n_questions": nq,
                          "n_ar_questions": nar, "always_abstain": 100.0 * nar / nq if nq else np.nan,
                          "rho_ci_low": lo, "rho_ci_high": hi}])


def operation_evidence(release, *, budgets: Iterable[str] | None = None, models: Sequence[str] | None = None,
                       pairing: str = "all_budgets", shared_budgets: Iterable[str] | None = None) -> pd.DataFrame:
    """Mean accuracy (%) over models of the operation × evidence cells: ``budget, operation, evidence_type,
    accuracy, n_models, n_questions`` (distinct questions in the cell).  Figure 5: one budget, all models;
    Figure 8: the comparison budget's models, ``pairing="shared"``."""
    budgets = check_budgets(budgets)
    parts = []
    for b in budgets:
        ms = models_at_budget(release, b, models) if pairing != "shared" else check_models(release, models)
        if not ms:
            continue
        pred = scored_frame(release, models=ms, budgets=[b], pairing=pairing, shared_budgets=shared_budgets)
        if pred.is_empty():
            continue
        per = _per_model(pred, ["operation", "evidence_type"], overall=False)
        cell = per.groupby(["budget", "operation", "evidence_type"], sort=False).agg(
            accuracy=("accuracy", "mean"), n_models=("model", "nunique")).reset_index()
        parts.append(cell.merge(_questions(pred, ["operation", "evidence_type"]).rename(columns={"n": "n_questions"}),
                                on=["operation", "evidence_type"], how="left"))
    if not parts:
        raise no_budget_error(release, budgets, models)
    out = pd.concat(parts, ignore_index=True)
    valid = set(tx.VALID_CELLS)
    out = out[[(o, e) in valid for o, e in zip(out["operation"], out["evidence_type"])]]
    return order_frame(out, [])


def refusal_breakdown(release, *, budgets: Iterable[str] | None = None, models: Sequence[str] | None = None,
                      pairing: str = "all_budgets") -> pd.DataFrame:
    """Table 17: mean AR accuracy (%) over models per budget, by evidence type and by source operation:
    ``budget, dimension, level, accuracy, n_models, n_items`` (distinct AR questions of the cell); AR items
    of unknown source operation are left out of the by-source rows only."""
    budgets = check_budgets(budgets)
    parts = []
    for b in budgets:
        ms = models_at_budget(release, b, models)
        if not ms:
            continue
        pred = scored_frame(release, models=ms, budgets=[b], pairing=pairing).filter(pl.col("is_ar"))
        if pred.is_empty():
            continue
        for dim, levels in (("evidence_type", tx.EVIDENCE_TYPES), ("source_operation", tx.ANSWERABLE_OPERATIONS)):
            sub = pred.filter(pl.col(dim).is_not_null())
            per = _per_model(sub, [dim], overall=False)
            cell = per.groupby(dim, sort=False).agg(accuracy=("accuracy", "mean"), n_models=("model", "nunique"))
            nq = _questions(sub, [dim]).set_index(dim)["n"]
            for lv in levels:
                parts.append({"budget": b, "dimension": dim, "level": lv,
                              "accuracy": cell["accuracy"].get(lv, np.nan),
                              "n_models": int(cell["n_models"].get(lv, 0)), "n_items": int(nq.get(lv, 0)),
                              "models_at_budget": len(ms)})
    if not parts:
        if not budgets_run(release, models) or not any(models_at_budget(release, b, models) for b in budgets):
            raise no_budget_error(release, budgets, models)
        raise MissingDataError("no refusal (AR) item was scored at " + fmt_budgets(budgets),
                               "Table 17 needs items with memory_operation answer_refusal",
                               code="no_ar_items", field="memory_operation")
    return pd.DataFrame(parts)


# ============================================================================ artifacts (wide, as printed)
#
# Label scheme (shared with data/paper/published.csv): row labels are the paper's (model
# names as in Table 12, "Mean proprietary (3)", "AR items", "n"); columns are evidence types
# by full name ("Speech Semantics" ... "Environmental Sound"), "Overall", budgets ("8K"),
# operations ("IE", "MSR", "TET", "AR").  Where one artifact spans several budgets the row
# label is "<budget>|<label>" ("8K|TET", "32K|Proprietary").  Question counts of Figure 5/8
# cells are the columns "<Evidence type> n".
_EVIDENCE_COLS = [tx.EVIDENCE_LABELS[e] for e in tx.EVIDENCE_TYPES]
#: Capitalised group names used in the ``groups`` artifact rows.
GROUP_TITLES = {"proprietary": "Proprietary", "open_weight": "Open-weight", "all": "All"}


def _model_evidence_wide(release, budget: str, *, models=None, pairing="all_budgets",
                         counts: bool = False) -> pd.DataFrame:
    budget = comparison_budget(release, budget, models=models)
    ms = models_at_or_fail(release, budget, models)
    acc = evidence_accuracy(release, models=ms, budgets=[budget], pairing=pairing)
    cols = [*tx.EVIDENCE_TYPES, OVERALL]
    wide = acc.pivot(index="model", columns="evidence_type", values="accuracy").reindex(index=ms, columns=cols)
    rows = [wide]
    groups = _access_groups(release, ms)
    gm = group_means(acc, groups, by=["evidence_type"])
    for g in [*[g for g in GROUP_ORDER if g in groups], *[g for g in groups if g not in GROUP_ORDER], "all"]:
        sub = gm[gm["group"] == g]
        if sub.empty:
            continue
        n = int(sub["n_models"].max())
        rows.append(sub.set_index("evidence_type")["accuracy"].reindex(cols).to_frame(mean_row_label(g, n)).T)
    if counts:
        pred = scored_frame(release, models=ms, budgets=[budget], pairing=pairing)
        nq = _questions(pred, ["evidence_type"]).set_index("evidence_type")["n"]
        nq[OVERALL] = pred["question_id"].n_unique()
        rows.append(nq.reindex(cols).astype(float).to_frame("n").T)
    out = pd.concat(rows)
    out.columns = [evidence_label(c) for c in cols]
    out.index.name = "Model"
    return out


#: Table 15's model rows as the paper prints them (Appendix D.1: by Overall accuracy, highest first);
#: ``data/paper/published.csv`` lists its rows in this order (checked by tests/test_workbook_gaps.py).
TABLE15_PAPER_ORDER = (
    "Gemini-3.1-Pro", "Gemini-3.8-Flash", "Ultravox-v0.6-Llama-3.1-8B", "Gemini-2.5-Pro", "Qwen3-Omni-30B-A3B",
    "Gemma-4-E4B-it", "Audio-Flamingo-Next", "Baichuan-Audio-7B", "Baichuan-Omni-1.5-7B", "FireRedAudio-9B",
)


def paper_row_order(models, paper_order) -> list:
    """``models`` in the paper's order when every one of them is a row of the paper's table
    (``paper_order``), else unchanged (the release's order: ``models.csv``'s ``order`` column)."""
    models = list(models)
    if not models or not set(models) <= set(paper_order):
        return models
    return [m for m in paper_order if m in set(models)]


@artifact("table15", title="Table 15: accuracy (%) at 64K by evidence type, 64K model set, with group means")
def table15(release, *, seed: int = 0, n_boot: int = 10_000, budget: str | None = None, models=None,
            pairing: str = "all_budgets") -> pd.DataFrame:
    """Table 15 as printed: the models run at ``budget`` (:func:`comparison_budget` when ``None``), in the
    paper's row order when they are all the paper's (:data:`TABLE15_PAPER_ORDER`), else the release's; the
    group means of the models whose access group is known, ``Mean all (k)`` and ``n`` (questions per column);
    columns the four evidence types and ``Overall``."""
    out = _model_evidence_wide(release, budget, models=models, pairing=pairing, counts=True)
    rows = [str(r) for r in out.index]
    ms = [r for r in rows if not (r.startswith("Mean ") or r == "n")]
    return out.loc[paper_row_order(ms, TABLE15_PAPER_ORDER) + [r for r in rows if r not in ms]]


@artifact("fig4", title="Figure 4: accuracy (%) by model, evidence type and budget (with pooled Overall)")
def fig4(release, *, seed: int = 0, n_boot: int = 10_000, budgets=None, models=None,
         pairing: str = "all_budgets") -> pd.DataFrame:
    """Rows ``"<budget>|<model>"``, ``"<budget>|Mean proprietary (k)"`` …, ``"<budget>|n"``;
    columns the four evidence types and ``Overall``.  Each budget has the models run there."""
    parts = []
    for b in check_budgets(budgets):
        if not models_at_budget(release, b, models):
            continue
        w = _model_evidence_wide(release, b, models=models, pairing=pairing, counts=True)
        w.index = [f"{b}|{i}" for i in w.index]
        parts.append(w)
    if not parts:
        raise no_budget_error(release, budgets, models)
    out = pd.concat(parts)
    out.index.name = "Budget|Model"
    return out


@artifact("groups", title="Group means (%) by budget: proprietary / open-weight / all, per model, top-3 spread")
def groups_table(release, *, seed: int = 0, n_boot: int = 10_000, budgets=None, models=None,
                 pairing: str = "all_budgets") -> pd.DataFrame:
    """Rows per budget: ``"<budget>|Proprietary"``, ``"<budget>|Open-weight"``, ``"<budget>|All"``
    (unweighted means over the models run there), ``"<budget>|<model>"`` and
    ``"<budget>|Top-3 spread"`` (Overall of the best model minus that of the third best);
    columns the four evidence types, ``Overall`` and ``Models`` (models averaged)."""
    acc = evidence_accuracy(release, models=models, budgets=budgets, pairing=pairing)
    cols = [*tx.EVIDENCE_TYPES, OVERALL]
    rows = {}
    for b in check_budgets(budgets):
        sub = acc[acc["budget"] == b]
        if sub.empty:
            continue
        ms = list(dict.fromkeys(sub["model"]))
        gm = group_means(sub, _access_groups(release, ms), by=["evidence_type"])
        for g in [*[g for g in GROUP_ORDER if g in set(gm["group"])],
                  *[g for g in dict.fromkeys(gm["group"]) if g not in (*GROUP_ORDER, "all")], "all"]:
            s = gm[gm["group"] == g].set_index("evidence_type")
            rec = {evidence_label(c): s["accuracy"].get(c, np.nan) for c in cols}
            rec["Models"] = float(s["n_models"].max())
            rows[f"{b}|{GROUP_TITLES.get(g, g)}"] = rec
        w = sub.pivot(index="model", columns="evidence_type", values="accuracy").reindex(index=ms, columns=cols)
        for m in ms:
            rows[f"{b}|{m}"] = {evidence_label(c): w.loc[m, c] for c in cols}
        top = np.sort(w[OVERALL].dropna().to_numpy())[::-1]
        if len(top) >= 3:
            rows[f"{b}|Top-3 spread"] = {"Overall": float(top[0] - top[2])}
    if not rows:
        raise no_budget_error(release, budgets, models)
    out = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=[*_EVIDENCE_COLS, "Overall", "Models"])
    out.index.name = "Budget|Row"
    return out


@artifact("table16", title="Table 16: accuracy (%) on answerable and AR items per model at 64K")
def table16(release, *, seed: int = 0, n_boot: int = 10_000, budget: str | None = None, models=None,
            pairing: str = "all_budgets") -> pd.DataFrame:
    """Rows: models sorted by answerable accuracy (highest first), then ``n`` (questions per
    column), ``All`` (``Spearman rho``, ``Spearman p`` between the two columns over models)
    and ``Always abstain`` (``Overall``: overall accuracy of a system that always declines,
    the AR share of the questions).  Columns ``Answerable``, ``AR``, ``Spearman rho``,
    ``Spearman p``, ``Overall``, then ``rho CI low`` / ``rho CI high`` (Fisher-z 95% interval of
    ρ, pingouin; beyond the paper).  ``budget`` as in :func:`table15`; ρ is empty with fewer than
    three models (its interval with fewer than four)."""
    budget = comparison_budget(release, budget, models=models)
    t = answerable_vs_refusal(release, budget=budget, models=models, pairing=pairing)
    s = answerable_refusal_summary(release, budget=budget, pairing=pairing, table=t)
    out = t.set_index("model")[["answerable", "ar"]].rename(columns={"answerable": "Answerable", "ar": "AR"})
    out = out.reindex(columns=["Answerable", "AR", "Spearman rho", "Spearman p", "Overall", "rho CI low", "rho CI high"])
    nq = float(s["n_questions"].iloc[0])
    nar = float(s["n_ar_questions"].iloc[0])
    out.loc["n", ["Answerable", "AR", "Overall"]] = [nq - nar, nar, nq]
    out.loc["All", ["Spearman rho", "Spearman p", "rho CI low", "rho CI high"]] = [
        s["rho"].iloc[0], s["p_value"].iloc[0], s["rho_ci_low"].iloc[0], s["rho_ci_high"].iloc[0]]
    out.loc["Always abstain", "Overall"] = s["always_abstain"].iloc[0]
    out.index.name = "Model"
    return out


@artifact("table17", title="Table 17: mean AR accuracy (%) by evidence type and by source operation, per budget")
def table17(release, *, seed: int = 0, n_boot: int = 10_000, budgets=None, models=None,
            pairing: str = "all_budgets", source_operations: bool | None = None) -> pd.DataFrame:
    """Rows: budgets then ``AR items``; columns ``Models``, the four evidence types by full name,
    ``IE``, ``MSR``, ``TET`` (source operation of the AR item).  The ``AR items`` row counts the
    AR questions of each column at the first budget shown (the same at every budget on a
    complete release).

    ``source_operations``: include the ``IE``/``MSR``/``TET`` columns; default (``None``) only
    when some AR item's source operation is known (:func:`missing_source_operations` says why
    not)."""
    rb = refusal_breakdown(release, budgets=budgets, models=models, pairing=pairing)
    if source_operations is None:
        source_operations = bool((rb["dimension"].eq("source_operation") & rb["n_items"].gt(0)).any())
    if not source_operations:
        rb = rb[rb["dimension"] != "source_operation"].copy()
    label = {**{e: tx.EVIDENCE_LABELS[e] for e in tx.EVIDENCE_TYPES},
             **{o: tx.OPERATION_LABELS[o] for o in tx.ANSWERABLE_OPERATIONS}}
    rb["col"] = rb["level"].map(label)
    cols = ["Models", *[label[e] for e in tx.EVIDENCE_TYPES],
            *([label[o] for o in tx.ANSWERABLE_OPERATIONS] if source_operations else [])]
    wide = rb.pivot_table(index="budget", columns="col", values="accuracy", sort=False, dropna=False)
    wide["Models"] = rb.groupby("budget", sort=False)["models_at_budget"].first().astype(float)
    wide = wide.reindex(columns=cols)
    first = rb[rb["budget"] == rb["budget"].iloc[0]].set_index("col")["n_items"]
    items = first.reindex(cols).astype(float).to_frame("AR items").T
    out = pd.concat([wide, items])
    out.index.name = "Budget"
    return out


def _opev_wide(oe: pd.DataFrame, prefix_budget: bool) -> pd.DataFrame:
    """Rows ``"<OP>"`` or ``"<budget>|<OP>"``; columns evidence names, then ``"<Evidence> n"``."""
    rows = {}
    for (b, op), sub in oe.groupby(["budget", "operation"], sort=False):
        s = sub.set_index("evidence_type")
        rec = {tx.EVIDENCE_LABELS[e]: s["accuracy"].get(e, np.nan) for e in tx.EVIDENCE_TYPES}
        rec.update({f"{tx.EVIDENCE_LABELS[e]} n": float(s["n_questions"].get(e, np.nan)) for e in tx.EVIDENCE_TYPES})
        rows[f"{b}|{tx.OPERATION_LABELS[op]}" if prefix_budget else tx.OPERATION_LABELS[op]] = rec
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = "Budget|Operation" if prefix_budget else "Operation"
    return out


@artifact("fig5", title="Figure 5: mean accuracy (%) of the operation x evidence cells at 32K, all models")
def fig5(release, *, seed: int = 0, n_boot: int = 10_000, budget: str | None = None, models=None,
         pairing: str = "all_budgets") -> pd.DataFrame:
    """Rows ``IE``, ``MSR``, ``TET``, ``AR``; columns the evidence types (mean accuracy over the
    models run at ``budget``) and ``"<Evidence type> n"`` (questions in the cell).  The
    Speech-Semantics IE cell is empty (excluded by design).  ``budget=None``: :func:`fig5_budget`."""
    budget = fig5_budget(release, budget, models=models)
    return _opev_wide(operation_evidence(release, budgets=[budget], models=models, pairing=pairing), False)


@artifact("fig8", title="Figure 8: operation x evidence cells per budget, 64K model set on the shared item set")
def fig8(release, *, seed: int = 0, n_boot: int = 10_000, budgets=None, models=None,
         budget: str | None = None) -> pd.DataFrame:
    """Rows ``"<budget>|<OP>"``; columns as :func:`fig5`.  Models: those run at ``budget`` (the
    64K set; ``None``: :func:`comparison_budget`); items: those judged at every budget all of
    them were run at (all four on the paper's release) for every one of them
    (``pairing="shared"``, :func:`shared_set`).  Rows for the ``budgets`` given (default: those
    shared budgets)."""
    ms, shared = shared_set(release, budget, models)
    bs = shared if budgets is None else [b for b in check_budgets(budgets) if b in shared]
    if not bs:
        raise MissingDataError(f"the models run at {comparison_budget(release, budget, models=models)} share none of "
                               f"the budgets {fmt_budgets(check_budgets(budgets))}",
                               f"they share: {fmt_budgets(shared)}", code="budget_not_run", field="context_length")
    return _opev_wide(operation_evidence(release, budgets=bs, models=ms, pairing="shared", shared_budgets=shared), True)
