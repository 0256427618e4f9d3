"""Main results (paper §4, App. D.1-D.3): accuracy by model, evidence type, operation and budget, as tidy frames
and as the printed Tables 15-17 and Figures 4, 5 and 8. Accuracy is ``correct / scored`` in percent (Appendix C.4),
group means unweighted over models; the pairing rule and the default budgets are :mod:`.selection`'s; what a
release cannot support raises :class:`MissingDataError`."""
from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.accuracy import accuracy_table
from voxmem_analysis.analysis.selection import (GROUP_LABELS, GROUP_ORDER, OVERALL, PAIRINGS, MissingDataError,
                                                baseline_budget, budgets_run, check_budgets, check_models,
                                                comparison_budget, describe_budgets, describe_shared_set,
                                                evidence_label, fig5_budget, fig8_panels, fmt_budgets,
                                                mean_row_label, missing_source_operations, models_at_budget,
                                                models_at_or_fail, no_budget_error, noted, order_frame, run_budgets,
                                                scored_frame, scored_predictions, section, shared_set, skip_reason)
from voxmem_analysis.artifacts import artifact
from voxmem_analysis.stats import spearman

__all__ = [
    "PAIRINGS", "OVERALL", "GROUP_LABELS", "GROUP_TITLES", "MissingDataError", "section", "skip_reason",
    "budgets_run", "comparison_budget", "baseline_budget", "fig5_budget", "describe_budgets", "shared_set",
    "fig8_panels", "describe_shared_set", "missing_source_operations", "run_budgets", "models_at_budget",
    "scored_predictions", "accuracy", "group_means", "evidence_accuracy", "evidence_panels", "answerable_vs_refusal",
    "answerable_refusal_summary", "operation_evidence", "refusal_breakdown", "table15", "table16", "table17", "fig4",
    "fig5", "fig8", "groups_table", "TABLE15_PAPER_ORDER", "paper_row_order", "evidence_label", "mean_row_label",
]

#: Capitalised group names of the ``groups`` artifact's rows.
GROUP_TITLES = {"proprietary": "Proprietary", "open_weight": "Open-weight", "all": "All"}
_EVIDENCE_COLS = [tx.EVIDENCE_LABELS[e] for e in tx.EVIDENCE_TYPES]
_UNKNOWN_GROUPS = ("unknown", "")


def _per_model(pred: pl.DataFrame, by: list[str], overall: bool) -> pd.DataFrame:
    """``model, budget, *by, n, n_correct, accuracy``, plus the pooled rows (``by`` all :data:`OVERALL`)."""
    keys = ["model", "budget", *by]
    parts = [accuracy_table(pred, keys)]
    if overall and by:
        parts.append(accuracy_table(pred, ["model", "budget"]).assign(**{c: OVERALL for c in by})[parts[0].columns])
    out = pd.concat(parts, ignore_index=True)[[*keys, "n", "n_correct", "accuracy"]]
    return order_frame(out, list(dict.fromkeys(pred["model"])))


def accuracy(release, by: str | Sequence[str] = ("evidence_type",), *, models: Sequence[str] | None = None,
             budgets: Iterable[str] | None = None, pairing: str = "all_budgets", overall: bool = True,
             where: pl.Expr | None = None, shared_budgets: Iterable[str] | None = None) -> pd.DataFrame:
    """Per-model accuracy (%) by any grouping of the verdict frame, in the paper's order.

    ``by``: columns besides model and budget (``[]``: the pooled score); ``models, budgets, pairing, shared_budgets`` as
    in :func:`scored_predictions`; ``overall`` adds the pooled level; ``where``: a polars filter applied after the
    pairing rule. Columns ``model, budget, *by, n`` (scored items), ``n_correct, accuracy``."""
    by = [by] if isinstance(by, str) else list(by)
    models = check_models(release, models)
    pred = scored_frame(release, models=models, budgets=budgets, pairing=pairing, shared_budgets=shared_budgets)
    if where is not None:
        pred = pred.filter(where)
    return order_frame(_per_model(pred, by, overall), models)


def _questions(pred: pl.DataFrame, by: list[str]) -> pd.DataFrame:
    """``*by, n``: distinct questions per group (groups with a null key left out)."""
    return (pred.drop_nulls(by).group_by(by).agg(pl.col("question_id").n_unique().cast(pl.Int64).alias("n"))
            .to_pandas())


def _access_groups(release, models: Sequence[str], *, include_unknown: bool = False) -> dict[str, list[str]]:
    """``{access group: models}`` among ``models`` (models without a group only with ``include_unknown``)."""
    grp = release.groups()
    out = {g: [m for m in grp.get(g, []) if m in set(models)] for g in grp
           if include_unknown or g not in _UNKNOWN_GROUPS}
    return {g: ms for g, ms in out.items() if ms}


def _group_order(groups) -> list[str]:
    """Proprietary, open-weight, any other group, then ``all``."""
    return [*[g for g in GROUP_ORDER if g in groups], *[g for g in groups if g not in (*GROUP_ORDER, "all")], "all"]


def group_means(acc: pd.DataFrame, groups: dict[str, Sequence[str]] | None = None, *, by: Sequence[str] | None = None,
                value: str = "accuracy", include_all: bool = True) -> pd.DataFrame:
    """Unweighted mean over the models of the per-model frame ``acc``, per group of ``groups`` (``{group: models}``) and
    over every model (``"all"``, unless ``include_all=False``); ``by`` defaults to every non-numeric column but
    ``model``. Columns ``group, *by, <value>, n_models``."""
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
            agg = sub.groupby(by, observed=True, sort=False).agg(**{value: (value, "mean"),
                                                                     "n_models": ("model", "nunique")}).reset_index()
        else:
            agg = pd.DataFrame({value: [sub[value].mean()], "n_models": [sub["model"].nunique()]})
        parts.append(agg.assign(group=g)[["group", *agg.columns]])
    out = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["group", *by, value, "n_models"])
    return order_frame(out, [])


def evidence_accuracy(release, *, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None,
                      pairing: str = "all_budgets") -> pd.DataFrame:
    """Figure 4 / Table 15 numbers: ``model, group`` (access group), ``budget, evidence_type`` (with
    ``overall``), ``n, n_correct, accuracy``."""
    acc = accuracy(release, "evidence_type", models=models, budgets=budgets, pairing=pairing, overall=True)
    access = dict(zip(release.models["model"], release.models["access"]))
    acc.insert(1, "group", acc["model"].map(lambda m: access.get(m) or "unknown"))
    return acc


def evidence_panels(release, *, budgets: Iterable[str] | None = None, models: Sequence[str] | None = None,
                    pairing: str = "all_budgets") -> pd.DataFrame:
    """Figure 4 data: per budget one row per model run there (``kind == "model"``, proprietary first) and one per group
    mean (``kind == "mean"``, ``row`` ``"Mean proprietary"`` ...) last. Columns ``budget, row, kind, group,
    evidence_type, accuracy, n`` (scored items; NaN for means), ``n_models`` (models averaged)."""
    acc = evidence_accuracy(release, models=models, budgets=budgets, pairing=pairing)
    parts = []
    for b in check_budgets(budgets):
        sub = acc[acc["budget"] == b]
        if sub.empty:
            continue
        ms = list(dict.fromkeys(sub["model"]))
        groups = _access_groups(release, ms)
        every = _access_groups(release, ms, include_unknown=True)
        rank = {m: i for i, m in enumerate(m for g in _group_order(every)[:-1] for m in every[g])}
        mrows = sub.assign(row=sub["model"], kind="model", n_models=1, _o=sub["model"].map(rank))
        gm = group_means(sub, groups, by=["budget", "evidence_type"])
        gorder = {g: i for i, g in enumerate(_group_order(groups))}
        gm = gm.assign(row=["Mean " + GROUP_LABELS.get(g, g) for g in gm["group"]], kind="mean", n=np.nan,
                       _o=gm["group"].map(gorder))
        parts += [mrows.sort_values("_o", kind="stable").drop(columns=["_o", "model"]),
                  gm.sort_values("_o", kind="stable").drop(columns="_o")]
    if not parts:
        raise no_budget_error(release, budgets, models)
    out = pd.concat(parts, ignore_index=True)
    return out[["budget", "row", "kind", "group", "evidence_type", "accuracy", "n", "n_models"]]


def answerable_vs_refusal(release, *, budget: str | None = None, models: Sequence[str] | None = None,
                          pairing: str = "all_budgets") -> pd.DataFrame:
    """Table 16: accuracy on answerable and on AR items per model at one budget (:func:`comparison_budget`), by
    answerable accuracy, highest first (ties: overall accuracy, then model order, as the paper lists Qwen3-Omni-30B-A3B
    before Baichuan-Audio-7B at 135/669). Columns ``model, answerable, ar, overall`` (%), ``n_answerable, n_ar, n``."""
    budget = comparison_budget(release, budget, models=models)
    ms = models_at_or_fail(release, budget, models)
    acc = accuracy(release, "is_ar", models=ms, budgets=[budget], pairing=pairing, overall=True)
    acc["stratum"] = acc["is_ar"].map(lambda v: "overall" if v == OVERALL else ("ar" if bool(v) else "answerable"))
    wide = acc.pivot(index="model", columns="stratum", values="accuracy")
    n = acc.pivot(index="model", columns="stratum", values="n")
    out = pd.DataFrame({
        "model": wide.index, "answerable": wide.get("answerable"), "ar": wide.get("ar"), "overall": wide.get("overall"),
        "n_answerable": n.get("answerable"), "n_ar": n.get("ar"), "n": n.get("overall"),
    }).reset_index(drop=True)
    for c in ("n_answerable", "n_ar", "n"):
        out[c] = out[c].fillna(0).astype(int)
    out["_o"] = out["model"].map({m: i for i, m in enumerate(ms)})
    out["_a"] = out["answerable"].round(9)
    out = out.sort_values(["_a", "overall", "_o"], ascending=[False, False, True], kind="stable")
    return out.drop(columns=["_o", "_a"]).reset_index(drop=True)


def answerable_refusal_summary(release, *, budget: str | None = None, models: Sequence[str] | None = None,
                               pairing: str = "all_budgets", table: pd.DataFrame | None = None) -> pd.DataFrame:
    """Spearman ρ between Table 16's two columns and the "always abstain" bound, one row (ρ NaN with fewer than three
    models, its interval with fewer than four); ``table``: Table 16 already computed. Columns ``budget, n_models, rho,
    p_value, n_questions, n_ar_questions, always_abstain`` (the AR share of the questions, %), ``rho_ci_low,
    rho_ci_high`` (Fisher-z 95%, pingouin)."""
    budget = comparison_budget(release, budget, models=models)
    t = table if table is not None else answerable_vs_refusal(release, budget=budget, models=models, pairing=pairing)
    rho, p, lo, hi = (np.nan,) * 4
    if len(t) >= 3:
        r = spearman(np.asarray(t["answerable"], float), np.asarray(t["ar"], float)).iloc[0]
        rho, p, lo, hi = (float(r[c]) for c in ("rho", "p_value", "rho_ci_low", "rho_ci_high"))
    q = scored_frame(release, models=list(t["model"]), budgets=[budget], pairing=pairing).unique("question_id")
    nq, nar = q.height, int(q["is_ar"].sum())
    return pd.DataFrame([{"budget": budget, "n_models": len(t), "rho": rho, "p_value": p, "n_questions": nq,
                          "n_ar_questions": nar, "always_abstain": 100.0 * nar / nq if nq else np.nan,
                          "rho_ci_low": lo, "rho_ci_high": hi}])


def operation_evidence(release, *, budgets: Iterable[str] | None = None, models: Sequence[str] | None = None,
                       pairing: str = "all_budgets", shared_budgets: Iterable[str] | None = None) -> pd.DataFrame:
    """Mean accuracy (%) over models of the operation × evidence cells (Figure 5: one budget, all models; Figure 8: the
    comparison budget's models, ``pairing="shared"``). Columns ``budget, operation, evidence_type, accuracy, n_models,
    n_questions`` (distinct questions in the cell)."""
    budgets = check_budgets(budgets)
    parts = []
    for b in budgets:
        ms = models_at_budget(release, b, models) if pairing != "shared" else check_models(release, models)
        pred = scored_frame(release, models=ms, budgets=[b], pairing=pairing, shared_budgets=shared_budgets) \
            if ms else None
        if pred is None or pred.is_empty():
            continue
        keys = ["operation", "evidence_type"]
        cell = _per_model(pred, keys, overall=False).groupby(["budget", *keys], sort=False).agg(
            accuracy=("accuracy", "mean"), n_models=("model", "nunique")).reset_index()
        parts.append(cell.merge(_questions(pred, keys).rename(columns={"n": "n_questions"}), on=keys, how="left"))
    if not parts:
        raise no_budget_error(release, budgets, models)
    out = pd.concat(parts, ignore_index=True)
    valid = set(tx.VALID_CELLS)
    out = out[[(o, e) in valid for o, e in zip(out["operation"], out["evidence_type"])]]
    return order_frame(out, [])


def refusal_breakdown(release, *, budgets: Iterable[str] | None = None, models: Sequence[str] | None = None,
                      pairing: str = "all_budgets") -> pd.DataFrame:
    """Table 17: mean AR accuracy (%) over models per budget, by evidence type and by source operation (AR items of
    unknown source operation left out of the by-source rows only). Columns ``budget, dimension, level, accuracy,
    n_models, n_items`` (distinct AR questions), ``models_at_budget``."""
    budgets = check_budgets(budgets)
    parts = []
    for b in budgets:
        ms = models_at_budget(release, b, models)
        pred = scored_frame(release, models=ms, budgets=[b], pairing=pairing).filter(pl.col("is_ar")) if ms else None
        if pred is None or pred.is_empty():
            continue
        for dim, levels in (("evidence_type", tx.EVIDENCE_TYPES), ("source_operation", tx.ANSWERABLE_OPERATIONS)):
            sub = pred.filter(pl.col(dim).is_not_null())
            cell = _per_model(sub, [dim], overall=False).groupby(dim, sort=False).agg(
                accuracy=("accuracy", "mean"), n_models=("model", "nunique"))
            nq = _questions(sub, [dim]).set_index(dim)["n"]
            parts += [{"budget": b, "dimension": dim, "level": lv, "accuracy": cell["accuracy"].get(lv, np.nan),
                       "n_models": int(cell["n_models"].get(lv, 0)), "n_items": int(nq.get(lv, 0)),
                       "models_at_budget": len(ms)} for lv in levels]
    if not parts:
        if not any(models_at_budget(release, b, models) for b in budgets):
            raise no_budget_error(release, budgets, models)
        raise MissingDataError("no refusal (AR) item was scored at " + fmt_budgets(budgets),
                               "Table 17 needs items with memory_operation answer_refusal",
                               code="no_ar_items", field="memory_operation")
    return pd.DataFrame(parts)


# ---------------------------------------------------------------------------- artifacts (as printed)
# Row labels are the paper's (model names, "Mean proprietary (3)", "n"); columns are evidence types by full
# name, "Overall", budgets or operations; an artifact spanning budgets labels its rows "<budget>|<label>".
def _model_evidence_wide(release, budget: str, *, models=None, pairing="all_budgets") -> pd.DataFrame:
    """Models × evidence types (+ Overall) at ``budget``, the group means and ``n`` (questions per column)."""
    budget = comparison_budget(release, budget, models=models)
    ms = models_at_or_fail(release, budget, models)
    acc = evidence_accuracy(release, models=ms, budgets=[budget], pairing=pairing)
    cols = [*tx.EVIDENCE_TYPES, OVERALL]
    rows = [acc.pivot(index="model", columns="evidence_type", values="accuracy").reindex(index=ms, columns=cols)]
    groups = _access_groups(release, ms)
    gm = group_means(acc, groups, by=["evidence_type"])
    for g in _group_order(groups):
        sub = gm[gm["group"] == g]
        if len(sub):
            label = mean_row_label(g, int(sub["n_models"].max()))
            rows.append(sub.set_index("evidence_type")["accuracy"].reindex(cols).to_frame(label).T)
    pred = scored_frame(release, models=ms, budgets=[budget], pairing=pairing)
    nq = _questions(pred, ["evidence_type"]).set_index("evidence_type")["n"]
    nq[OVERALL] = pred["question_id"].n_unique()
    out = pd.concat([*rows, nq.reindex(cols).astype(float).to_frame("n").T])
    out.columns = [evidence_label(c) for c in cols]
    out.index.name = "Model"
    return out


#: Table 15's model rows as the paper prints them (by Overall accuracy, highest first), as in
#: ``data/paper/published.csv``.
TABLE15_PAPER_ORDER = (
    "Gemini-3.1-Pro", "Gemini-3.8-Flash", "Ultravox-v0.6-Llama-3.1-8B", "Gemini-2.5-Pro", "Qwen3-Omni-30B-A3B",
    "Gemma-4-E4B-it", "Audio-Flamingo-Next", "Baichuan-Audio-7B", "Baichuan-Omni-1.5-7B", "FireRedAudio-9B",
)


def paper_row_order(models, paper_order) -> list:
    """``models`` in ``paper_order`` when every one of them is in it, else unchanged (the release's order)."""
    models = list(models)
    if not models or not set(models) <= set(paper_order):
        return models
    return [m for m in paper_order if m in set(models)]


@artifact("table15", title="Table 15: accuracy (%) at 64K by evidence type, 64K model set, with group means")
def table15(release, *, seed: int = 0, n_boot: int = 10_000, budget: str | None = None, models=None,
            pairing: str = "all_budgets") -> pd.DataFrame:
    """Table 15: the models run at ``budget`` (:func:`comparison_budget`; the paper's row order when they are
    all the paper's), the group means and ``n``; columns the four evidence types and ``Overall``."""
    out = _model_evidence_wide(release, budget, models=models, pairing=pairing)
    rows = [str(r) for r in out.index]
    ms = [r for r in rows if not (r.startswith("Mean ") or r == "n")]
    out = out.loc[paper_row_order(ms, TABLE15_PAPER_ORDER) + [r for r in rows if r not in ms]]
    return noted(out, "budget", comparison_budget(release, budget, models=models), budget, "64K",
                 "the longest budget run")


@artifact("fig4", title="Figure 4: accuracy (%) by model, evidence type and budget (with pooled Overall)")
def fig4(release, *, seed: int = 0, n_boot: int = 10_000, budgets=None, models=None,
         pairing: str = "all_budgets") -> pd.DataFrame:
    """Rows ``"<budget>|<model>"``, ``"<budget>|Mean proprietary (k)"`` ..., ``"<budget>|n"`` (the models run
    at each budget); columns the four evidence types and ``Overall``."""
    parts = []
    for b in check_budgets(budgets):
        if models_at_budget(release, b, models):
            w = _model_evidence_wide(release, b, models=models, pairing=pairing)
            parts.append(w.set_axis([f"{b}|{i}" for i in w.index]))
    if not parts:
        raise no_budget_error(release, budgets, models)
    return pd.concat(parts).rename_axis("Budget|Model")


@artifact("groups", title="Group means (%) by budget: proprietary / open-weight / all, per model, top-3 spread")
def groups_table(release, *, seed: int = 0, n_boot: int = 10_000, budgets=None, models=None,
                 pairing: str = "all_budgets") -> pd.DataFrame:
    """Rows per budget: ``"<budget>|Proprietary"``, ``"|Open-weight"``, ``"|All"`` (means over the models run
    there), ``"|<model>"`` and ``"|Top-3 spread"`` (Overall of the best model minus the third best); columns the
    four evidence types, ``Overall`` and ``Models`` (models averaged)."""
    acc = evidence_accuracy(release, models=models, budgets=budgets, pairing=pairing)
    cols = [*tx.EVIDENCE_TYPES, OVERALL]
    rows = {}
    for b in check_budgets(budgets):
        sub = acc[acc["budget"] == b]
        if sub.empty:
            continue
        ms = list(dict.fromkeys(sub["model"]))
        gm = group_means(sub, _access_groups(release, ms), by=["evidence_type"])
        for g in _group_order(dict.fromkeys(gm["group"])):
            s = gm[gm["group"] == g].set_index("evidence_type")
            rows[f"{b}|{GROUP_TITLES.get(g, g)}"] = {**{evidence_label(c): s["accuracy"].get(c, np.nan) for c in cols},
                                                     "Models": float(s["n_models"].max())}
        w = sub.pivot(index="model", columns="evidence_type", values="accuracy").reindex(index=ms, columns=cols)
        rows.update({f"{b}|{m}": {evidence_label(c): w.loc[m, c] for c in cols} for m in ms})
        top = np.sort(w[OVERALL].dropna().to_numpy())[::-1]
        if len(top) >= 3:
            rows[f"{b}|Top-3 spread"] = {"Overall": float(top[0] - top[2])}
    if not rows:
        raise no_budget_error(release, budgets, models)
    out = pd.DataFrame.from_dict(rows, orient="index").reindex(columns=[*_EVIDENCE_COLS, "Overall", "Models"])
    return out.rename_axis("Budget|Row")


@artifact("table16", title="Table 16: accuracy (%) on answerable and AR items per model at 64K")
def table16(release, *, seed: int = 0, n_boot: int = 10_000, budget: str | None = None, models=None,
            pairing: str = "all_budgets") -> pd.DataFrame:
    """Table 16: models by answerable accuracy, then ``n`` (questions per column), ``All`` (``Spearman rho``,
    ``Spearman p`` over models) and ``Always abstain`` (``Overall``: the AR share of the questions); columns
    ``Answerable, AR, Spearman rho, Spearman p, Overall`` and ``rho CI low / high`` (Fisher-z 95%, beyond the
    paper; ρ empty with fewer than three models)."""
    b = comparison_budget(release, budget, models=models)
    t = answerable_vs_refusal(release, budget=b, models=models, pairing=pairing)
    s = answerable_refusal_summary(release, budget=b, pairing=pairing, table=t).iloc[0]
    out = t.set_index("model")[["answerable", "ar"]].rename(columns={"answerable": "Answerable", "ar": "AR"})
    out = out.reindex(columns=["Answerable", "AR", "Spearman rho", "Spearman p", "Overall", "rho CI low", "rho CI high"])
    nq, nar = float(s["n_questions"]), float(s["n_ar_questions"])
    out.loc["n", ["Answerable", "AR", "Overall"]] = [nq - nar, nar, nq]
    out.loc["All", ["Spearman rho", "Spearman p", "rho CI low", "rho CI high"]] = [
        s["rho"], s["p_value"], s["rho_ci_low"], s["rho_ci_high"]]
    out.loc["Always abstain", "Overall"] = s["always_abstain"]
    out.index.name = "Model"
    return noted(out, "budget", b, budget, "64K", "the longest budget run")


@artifact("table17", title="Table 17: mean AR accuracy (%) by evidence type and by source operation, per budget")
def table17(release, *, seed: int = 0, n_boot: int = 10_000, budgets=None, models=None,
            pairing: str = "all_budgets", source_operations: bool | None = None) -> pd.DataFrame:
    """Table 17: rows the budgets then ``AR items`` (AR questions per column at the first budget); columns
    ``Models``, the four evidence types, ``IE``, ``MSR``, ``TET`` (the source operation; by default only when
    some AR item's is known, :func:`missing_source_operations`)."""
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
    first = rb[rb["budget"] == rb["budget"].iloc[0]].set_index("col")["n_items"]
    out = pd.concat([wide.reindex(columns=cols), first.reindex(cols).astype(float).to_frame("AR items").T])
    return out.rename_axis("Budget")


def _opev_wide(oe: pd.DataFrame, prefix_budget: bool) -> pd.DataFrame:
    """Rows ``"<OP>"`` or ``"<budget>|<OP>"``; columns evidence names, then ``"<Evidence> n"``."""
    rows = {}
    for (b, op), sub in oe.groupby(["budget", "operation"], sort=False):
        s = sub.set_index("evidence_type")
        rec = {tx.EVIDENCE_LABELS[e]: s["accuracy"].get(e, np.nan) for e in tx.EVIDENCE_TYPES}
        rec.update({f"{tx.EVIDENCE_LABELS[e]} n": float(s["n_questions"].get(e, np.nan)) for e in tx.EVIDENCE_TYPES})
        rows[f"{b}|{tx.OPERATION_LABELS[op]}" if prefix_budget else tx.OPERATION_LABELS[op]] = rec
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("Budget|Operation" if prefix_budget else "Operation")


@artifact("fig5", title="Figure 5: mean accuracy (%) of the operation x evidence cells at 32K, all models")
def fig5(release, *, seed: int = 0, n_boot: int = 10_000, budget: str | None = None, models=None,
         pairing: str = "all_budgets") -> pd.DataFrame:
    """Rows ``IE``, ``MSR``, ``TET``, ``AR``; columns the evidence types (mean over the models run at ``budget``,
    :func:`fig5_budget`) and ``"<Evidence type> n"`` (questions in the cell; Speech-Semantics IE excluded)."""
    b = fig5_budget(release, budget, models=models)
    out = _opev_wide(operation_evidence(release, budgets=[b], models=models, pairing=pairing), False)
    return noted(out, "budget", b, budget, "32K", "the budget run by the most models")


@artifact("fig8", title="Figure 8: operation x evidence cells per budget, 64K model set on the shared item set")
def fig8(release, *, seed: int = 0, n_boot: int = 10_000, budgets=None, models=None,
         budget: str | None = None) -> pd.DataFrame:
    """Rows ``"<budget>|<OP>"``, columns as :func:`fig5`: the models run at ``budget`` (:func:`comparison_budget`)
    on the items judged at every budget all of them were run at (:func:`shared_set`); rows for ``budgets``
    (default: those shared budgets)."""
    ms, shared = shared_set(release, budget, models)
    b = comparison_budget(release, budget, models=models)
    bs = shared if budgets is None else [x for x in check_budgets(budgets) if x in shared]
    if not bs:
        raise MissingDataError(f"the models run at {b} share none of the budgets {fmt_budgets(check_budgets(budgets))}",
                               f"they share: {fmt_budgets(shared)}", code="budget_not_run", field="context_length")
    out = _opev_wide(operation_evidence(release, budgets=bs, models=ms, pairing="shared", shared_budgets=shared), True)
    return noted(out, "budget", b, budget, "64K", "the longest budget run")
