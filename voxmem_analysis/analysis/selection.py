"""Which predictions enter an accuracy: labels, partial releases, the budgets taken from the data and the
pairing rule (Appendix C.6).

A budget a notebook or command defaults to is the paper's when the release has it, else one taken from the
release; :func:`budget_note` says which was used.
"""
from __future__ import annotations

import contextlib
import sys
from typing import Iterable, Sequence

import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import AnalysisInputError, MissingDataError

__all__ = [
    "PAIRINGS", "OVERALL", "GROUP_LABELS", "GROUP_ORDER", "MissingDataError", "section", "skip_reason",
    "evidence_label", "mean_row_label", "check_budgets", "check_models", "fmt_budgets", "order_frame",
    "run_budgets", "models_at_budget", "budgets_run", "require_budgets", "comparison_budget", "baseline_budget",
    "fig5_budget", "most_run_budget", "describe_budgets", "shared_set", "fig8_panels", "describe_shared_set",
    "no_budget_error", "missing_source_operations", "models_at_or_fail", "scored_predictions", "scored_frame",
    "part_budget", "budget_note", "noted",
]

PAIRINGS = ("all_budgets", "shared", "none")
#: Code of the pooled level of a grouping column in long frames ("Overall" when printed).
OVERALL = "overall"
GROUP_LABELS = {"proprietary": "proprietary", "open_weight": "open-weight", "all": "all"}
GROUP_ORDER = ("proprietary", "open_weight")
_ID_COLUMNS = ["model", "question_id", "item_id", "budget", "evidence_type", "operation", "is_ar",
               "source_operation", "status", "scored", "correct"]


def evidence_label(code: str) -> str:
    """Paper's full name of an evidence type (``"Overall"`` for :data:`OVERALL`)."""
    return "Overall" if code == OVERALL else tx.EVIDENCE_LABELS.get(code, code)


def mean_row_label(group: str, n_models: int) -> str:
    """``"Mean proprietary (3)"``, ``"Mean open-weight (7)"``, ``"Mean all (10)"``."""
    return f"Mean {GROUP_LABELS.get(group, group)} ({n_models})"


def skip_reason(exc: BaseException) -> str:
    """The one-line reason of a :class:`MissingDataError` (of any other error, its first line)."""
    return getattr(exc, "reason", None) or (str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


@contextlib.contextmanager
def section(title: str, *, stream=None):
    """A notebook section that prints ``"<title>: skipped — <reason>"`` and carries on when the release lacks
    an optional part it needs (:class:`MissingDataError`); every other error propagates."""
    try:
        yield
    except MissingDataError as exc:
        print(f"{title}: skipped \u2014 {skip_reason(exc)}", file=stream or sys.stdout)


def fmt_budgets(bs) -> str:
    return ", ".join(bs) or "none"


def check_budgets(budgets) -> list[str]:
    return tx.normalize_budgets(budgets)


def check_models(release, models) -> list[str]:
    """``models`` (a name or a list; ``None``: all) in the release's order; an unknown name is an error."""
    order = release.model_order()
    if models is None:
        return order
    models = [models] if isinstance(models, str) else models
    unknown = [m for m in models if m not in order]
    if unknown:
        raise AnalysisInputError(f"unknown model(s) {', '.join(map(repr, unknown))}: not in the release, which has "
                                 f"{', '.join(order)}", "models")
    return [m for m in order if m in set(models)]


def run_budgets(release) -> dict[str, tuple[str, ...]]:
    """``{model: budgets}`` each model was run at (C.6: a scored prediction there; 64K only for the 64K set)."""
    derived = getattr(release, "derived", None)
    if derived is not None:
        return dict(derived("run_budgets", lambda: _run_budgets(release)))
    return _run_budgets(release)


def _run_budgets(release) -> dict[str, tuple[str, ...]]:
    present = (release.frame.filter(pl.col("scored")).select("model", pl.col("budget").cast(pl.Utf8))
               .unique().group_by("model").agg(pl.col("budget")))
    have = {r["model"]: set(r["budget"]) for r in present.iter_rows(named=True)}
    in64 = set(release.models_in_64k_set())
    return {m: tuple(b for b in tx.BUDGETS if b in have.get(m, set()) and (b != "64K" or m in in64))
            for m in release.model_order()}


def models_at_budget(release, budget: str, models: Sequence[str] | None = None) -> list[str]:
    """The models (paper order) run at ``budget`` among ``models`` (default: all)."""
    rb = run_budgets(release)
    return [m for m in check_models(release, models) if budget in rb.get(m, ())]


def budgets_run(release, models: Sequence[str] | None = None) -> list[str]:
    """Budgets (paper order) at which at least one of ``models`` (default all) was run."""
    rb = run_budgets(release)
    have = {b for m in check_models(release, models) for b in rb.get(m, ())}
    return [b for b in tx.BUDGETS if b in have]


def require_budgets(release, models=None) -> list[str]:
    present = budgets_run(release, models)
    if not present:
        raise MissingDataError("no model has a scored prediction at any budget",
                               code="no_scored_predictions", field="verdict")
    return present


def comparison_budget(release, budget: str | None = None, *, models: Sequence[str] | None = None) -> str:
    """The budget of the paper's 64K artifacts: ``budget``, else 64K when run, else the longest budget run."""
    if budget is not None:
        return check_budgets([budget])[0]
    present = require_budgets(release, models)
    return "64K" if "64K" in present else present[-1]


def baseline_budget(release, budget: str | None = None, *, models: Sequence[str] | None = None) -> str:
    """The baseline of scaling comparisons: ``budget``, else 8K when run, else the shortest budget run."""
    if budget is not None:
        return check_budgets([budget])[0]
    present = require_budgets(release, models)
    return "8K" if "8K" in present else present[0]


def most_run_budget(release, budget: str | None = None, *, paper: str,
                    models: Sequence[str] | None = None) -> str:
    """``budget``, else ``paper`` when run, else the budget run by the most models (the longer on ties)."""
    if budget is not None:
        return check_budgets([budget])[0]
    present = require_budgets(release, models)
    if paper in present:
        return paper
    counts = {b: len(models_at_budget(release, b, models)) for b in present}
    return max(present, key=lambda b: (counts[b], tx.BUDGETS.index(b)))


def fig5_budget(release, budget: str | None = None, *, models: Sequence[str] | None = None) -> str:
    """Figure 5's budget: :func:`most_run_budget` with the paper's 32K."""
    return most_run_budget(release, budget, paper="32K", models=models)


def budget_note(chosen: str, requested, paper: str, otherwise: str, present=None, *,
                absent: str = "no model was run at") -> str:
    """Why ``chosen`` was used: ``"as requested"`` (``present``: the budgets run, to flag one it lacks),
    ``"the paper's"`` or ``"<absent> <paper>; <otherwise>"``."""
    if requested is not None:
        return "as requested" + ("" if present is None or chosen in present else f"; no model was run at {chosen}")
    return "the paper's" if chosen == paper else f"{absent} {paper}; {otherwise}"


def noted(table: pd.DataFrame, what: str, chosen: str, requested, paper: str, otherwise: str) -> pd.DataFrame:
    """``table`` with ``attrs["note"]`` naming the budget ``what`` took from the release when it is not the
    paper's (the paper's title names the paper's budget; ``voxmem-analysis table`` prints the note)."""
    if requested is None and chosen != paper:
        said = table.attrs.get("note")
        table.attrs["note"] = (f"{said}; " if said else "") + f"{what} {chosen}: {budget_note(chosen, None, paper, otherwise)}"
    return table


def part_budget(frame, budget: str | None = None, *, paper: str = "8K") -> str:
    """The budget of an optional part run at one budget in the paper (the second judge, the ablation):
    ``budget``, else ``paper`` when ``frame`` has rows there (or is empty), else the budget with the most rows
    (the shorter on ties)."""
    if budget is not None:
        return check_budgets([budget])[0]
    if frame is None or len(frame) == 0 or "budget" not in frame.columns:
        return paper
    col = frame["budget"]
    values = col.cast(pl.Utf8).to_list() if isinstance(col, pl.Series) else col.astype(str).tolist()
    counts = pd.Series([tx.normalize_budget(v) for v in values], dtype=object).value_counts()
    if paper in counts.index or counts.empty:
        return paper
    return max(counts.index, key=lambda b: (counts[b], -tx.BUDGETS.index(b)))


def describe_budgets(release, *, comparison: str | None = None, fig5: str | None = None,
                     models: Sequence[str] | None = None) -> str:
    """Which budgets the main-results notebook uses, and why (a few printable lines)."""
    present = require_budgets(release, models)
    counts = {b: len(models_at_budget(release, b, models)) for b in present}
    b_cmp = comparison_budget(release, comparison, models=models)
    b_f5 = fig5_budget(release, fig5, models=models)
    runs = ", ".join(f"{b} ({counts[b]} model{'s' if counts[b] != 1 else ''})" for b in present)
    missing = [b for b in tx.BUDGETS if b not in present]
    return "\n".join([
        f"Budgets run: {runs}" + (f"; not run: {fmt_budgets(missing)}" if missing else ""),
        f"Table 15, Table 16, Figure 8 at {b_cmp} "
        f"({budget_note(b_cmp, comparison, '64K', 'the longest budget run', present)})",
        f"Figure 5 at {b_f5} ({budget_note(b_f5, fig5, '32K', 'the budget run by the most models', present)})",
    ])


def shared_set(release, budget: str | None = None, models: Sequence[str] | None = None) -> tuple[list[str], list[str]]:
    """Figure 8's models (those run at the comparison ``budget``) and the budgets every one of them was run at."""
    b = comparison_budget(release, budget, models=models)
    ms = models_at_or_fail(release, b, models)
    rb = run_budgets(release)
    common = set.intersection(*(set(rb[m]) for m in ms))
    return ms, [x for x in tx.BUDGETS if x in common]


def fig8_panels(release, budget: str | None, fig5: str, models: Sequence[str] | None = None
                ) -> tuple[list[str], list[str], list[str]]:
    """Figure 8's ``(models, shared budgets, panels drawn)``: the shared budgets but Figure 5's ``fig5`` (unless it
    is the comparison budget).  :class:`MissingDataError` when Figure 8 would only repeat Figure 5."""
    ms, shared = shared_set(release, budget, models)
    b = comparison_budget(release, budget, models=models)
    drawn = [x for x in shared if x != fig5 or x == b]
    if drawn == [fig5] and set(ms) == set(models_at_budget(release, fig5, models)):
        raise MissingDataError(f"Figure 8 would only repeat Figure 5: its models were run at {fig5} only, "
                               f"the budget of Figure 5", code="repeats_figure", field="context_length")
    return ms, shared, drawn


def describe_shared_set(models: Sequence[str], shared: Sequence[str], budget: str, drawn=None) -> str:
    """``"10 models run at 64K; questions judged at 8K, 16K, 32K, 64K by every one"``; with ``drawn`` (the panels)
    naming only what is drawn: ``"10 models run at 64K (8K, 16K, 64K shown); questions judged at every budget ..."``."""
    k = len(models)
    who = "every one" if k != 1 else "it"
    if drawn is not None and list(drawn) != list(shared):
        return (f"{k} model{'s' if k != 1 else ''} run at {budget} ({fmt_budgets(drawn)} shown); questions judged "
                f"at every budget they were run at by {who}")
    return f"{k} model{'s' if k != 1 else ''} run at {budget}; questions judged at {fmt_budgets(shared)} by {who}"


def no_budget_error(release, budgets, models, *, reason: str | None = None, hint: str = "") -> MissingDataError:
    """"no model was run at ``budgets``" (or ``reason``), with the budgets the release has and a ``hint``."""
    return MissingDataError(reason or f"no model was run at {fmt_budgets(check_budgets(budgets))}",
                            f"budgets run in this release: {fmt_budgets(budgets_run(release, models))}"
                            + (f"; {hint}" if hint else ""), code="budget_not_run", field="context_length")


def models_at_or_fail(release, budget: str, models=None) -> list[str]:
    ms = models_at_budget(release, budget, models)
    if not ms:
        raise no_budget_error(release, [budget], models, hint="pass budget= one of them")
    return ms


def missing_source_operations(release, *, models: Sequence[str] | None = None) -> str | None:
    """Why Table 17's by-source-operation columns cannot be computed (an AR item's source operation is its
    paired question's, known only from ``paired_question_id`` or ``source_operation``), or ``None``."""
    fr = release.frame.filter(pl.col("is_ar") & pl.col("scored"))
    if models is not None:
        fr = fr.filter(pl.col("model").is_in(check_models(release, models)))
    if not fr.height:
        return "no refusal (AR) item was scored"
    if fr["source_operation"].drop_nulls().len() == 0:
        return ("the source operation of every AR item is unknown (no items.csv with paired_question_id), "
                "so the IE/MSR/TET columns of Table 17 are left out")
    return None


def scored_predictions(release, *, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None,
                       pairing: str = "all_budgets", shared_budgets: Iterable[str] | None = None) -> pd.DataFrame:
    """The scored predictions that enter the accuracies after the pairing rule, one row per (model, item) of
    ``models`` at ``budgets`` (a model only where it was run): ``model, question_id, item_id, budget,
    evidence_type, operation, is_ar, source_operation, status, scored, correct``.

    ``pairing``: ``"all_budgets"`` (the paper's: each model on the questions judged at every budget it was run
    at), ``"shared"`` (one question set judged at ``shared_budgets`` for every model) or ``"none"``.
    """
    return scored_frame(release, models=models, budgets=budgets, pairing=pairing,
                        shared_budgets=shared_budgets).to_pandas()


def scored_frame(release, *, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None,
                 pairing: str = "all_budgets", shared_budgets: Iterable[str] | None = None) -> pl.DataFrame:
    """:func:`scored_predictions` as a polars frame, computed once per release and arguments."""
    if pairing not in PAIRINGS:
        raise AnalysisInputError(f"pairing must be one of {', '.join(PAIRINGS)}, got {pairing!r}", "pairing")
    models = check_models(release, models)
    budgets = check_budgets(budgets)
    derived = getattr(release, "derived", None)
    if derived is None:
        return _scored_frame(release, models, budgets, pairing, shared_budgets)
    key = ("scored_frame", tuple(models), tuple(budgets), pairing,
           tuple(check_budgets(shared_budgets)) if pairing == "shared" else None)
    return derived(key, lambda: _scored_frame(release, models, budgets, pairing, shared_budgets))


def _scored_frame(release, models: list[str], budgets: list[str], pairing: str, shared_budgets) -> pl.DataFrame:
    rb = run_budgets(release)
    allowed = pl.DataFrame({"model": [m for m in models for b in rb[m]],
                            "budget": [b for m in models for b in rb[m]]},
                           schema={"model": pl.Utf8, "budget": pl.Utf8})
    fr = (release.frame.select(_ID_COLUMNS).with_columns(pl.col("budget").cast(pl.Utf8))
          .join(allowed, on=["model", "budget"], how="inner").filter(pl.col("scored")))
    if pairing == "all_budgets":
        need = allowed.group_by("model").agg(pl.len().alias("_need"))
        keep = (fr.group_by("model", "question_id").agg(pl.col("budget").n_unique().alias("_have"))
                .join(need, on="model").filter(pl.col("_have") == pl.col("_need")).select("model", "question_id"))
        fr = fr.join(keep, on=["model", "question_id"], how="semi")
    elif pairing == "shared":
        sb = check_budgets(shared_budgets)
        ms = [m for m in models if set(sb) <= set(rb[m])]
        if not ms:
            raise MissingDataError(f"no model among {models} was run at all of {sb}", code="budget_not_run",
                                   field="context_length")
        sub = fr.filter(pl.col("model").is_in(ms) & pl.col("budget").is_in(sb))
        keep = (sub.group_by("question_id").agg(pl.struct("model", "budget").n_unique().alias("_have"))
                .filter(pl.col("_have") == len(ms) * len(sb)).select("question_id"))
        fr = fr.filter(pl.col("model").is_in(ms)).join(keep, on="question_id", how="semi")
    ranks = [pl.col("budget").replace_strict(list(tx.BUDGETS), list(range(len(tx.BUDGETS)))),
             pl.col("model").replace_strict(models, list(range(len(models)))), pl.col("question_id")]
    return (fr.filter(pl.col("budget").is_in(budgets)).with_columns(pl.col("correct").fill_null(False))
            .sort(ranks, maintain_order=True, nulls_last=True))


_ORDERS = {"model": None, "budget": list(tx.BUDGETS), "operation": [*tx.OPERATIONS, OVERALL],
           "source_operation": [*tx.OPERATIONS, OVERALL], "evidence_type": [*tx.EVIDENCE_TYPES, OVERALL],
           "group": [*GROUP_ORDER, "unknown", "all"]}


def order_frame(df: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """``df`` sorted (stably) in the paper's order of every key column it has (models as in ``models``)."""
    orders = {**_ORDERS, "model": models}
    cols = [c for c in orders if c in df.columns]

    def key(s):
        o = {v: i for i, v in enumerate(orders[s.name])}
        return s.map(lambda v: o.get(v, len(o)))

    return df.sort_values(cols, key=key, kind="stable").reset_index(drop=True)
