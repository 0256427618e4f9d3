"""Which predictions enter an accuracy: labels, partial releases, budgets taken from the data, item selection.

The pairing rule (paper Appendix C.6) is described in :mod:`voxmem_analysis.analysis.results`.
Every budget a notebook or command defaults to is the paper's when the release has it and one
taken from the release otherwise (:func:`comparison_budget`, :func:`baseline_budget`,
:func:`fig5_budget`, :func:`part_budget`); :func:`budget_note` says which was used.
"""
from __future__ import annotations

import contextlib
from typing import Iterable, Sequence

import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import AnalysisInputError, MissingDataError

__all__ = [
    "PAIRINGS", "OVERALL", "GROUP_LABELS", "GROUP_ORDER", "MissingDataError", "section", "skip_reason",
    "evidence_label", "mean_row_label", "check_budgets", "check_models", "fmt_budgets", "order_frame",
    "run_budgets", "models_at_budget", "budgets_run", "require_budgets", "comparison_budget", "baseline_budget",
    "fig5_budget", "describe_budgets", "shared_set", "fig8_panels", "describe_shared_set", "no_budget_error",
    "missing_source_operations", "models_at_or_fail", "scored_predictions", "scored_frame", "part_budget",
    "budget_note",
]

PAIRINGS = ("all_budgets", "shared", "none")
#: Code used in long frames for the pooled level of a grouping column ("Overall" when printed).
OVERALL = "overall"
#: Printed names of the access groups.
GROUP_LABELS = {"proprietary": "proprietary", "open_weight": "open-weight", "all": "all"}
#: Order of the access groups in tables and figures.
GROUP_ORDER = ("proprietary", "open_weight")
_ID_COLUMNS = ["model", "question_id", "item_id", "budget", "evidence_type", "operation", "is_ar",
               "source_operation", "status", "scored", "correct"]


# ============================================================================ labels
def evidence_label(code: str) -> str:
    """Paper's full name of an evidence type (``"Overall"`` for :data:`OVERALL`)."""
    return "Overall" if code == OVERALL else tx.EVIDENCE_LABELS.get(code, code)


def mean_row_label(group: str, n_models: int) -> str:
    """``"Mean proprietary (3)"``, ``"Mean open-weight (7)"``, ``"Mean all (10)"``."""
    return f"Mean {GROUP_LABELS.get(group, group)} ({n_models})"


# ============================================================================ partial releases
def skip_reason(exc: BaseException) -> str:
    """The one-line reason of a :class:`~voxmem_analysis.errors.MissingDataError` (or, for any other
    error, its first line)."""
    reason = getattr(exc, "reason", None)
    if reason:
        return reason
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


@contextlib.contextmanager
def section(title: str, *, stream=None):
    """Run a notebook section; if the release lacks an optional part it needs, print why and carry on.

    Only :class:`~voxmem_analysis.errors.MissingDataError` is caught.  Bad data
    (:class:`~voxmem_analysis.errors.VoxMemDataError`), a bad argument
    (:class:`~voxmem_analysis.errors.InputError`) and bugs propagate: the notebook fails and says
    why.  The printed line is ``"<title>: skipped — <reason>"``::

        with section("Table 15"):
            display(table15(release, budget=budget))
    """
    import sys

    try:
        yield
    except MissingDataError as exc:
        print(f"{title}: skipped \u2014 {skip_reason(exc)}", file=stream or sys.stdout)


def fmt_budgets(bs) -> str:
    bs = list(bs)
    return ", ".join(bs) if bs else "none"


# ============================================================================ argument checks and ordering

def check_budgets(budgets) -> list[str]:
    return tx.normalize_budgets(budgets)


def check_models(release, models) -> list[str]:
    order = release.model_order()
    if models is None:
        return order
    if isinstance(models, str):
        models = [models]
    unknown = [m for m in models if m not in order]
    if unknown:
        raise AnalysisInputError(f"unknown model(s) {', '.join(map(repr, unknown))}: not in the release, which has "
                                 f"{', '.join(order)}", "models")
    wanted = set(models)
    return [m for m in order if m in wanted]


def run_budgets(release) -> dict[str, tuple[str, ...]]:
    """Budgets each model was run at (C.6): at least one scored prediction there; 64K only for the 64K set.

    Returns ``{model: ("8K", "16K", ...)}`` in the paper's model order.
    """
    derived = getattr(release, "derived", None)
    if derived is not None:
        return dict(derived("run_budgets", lambda: _run_budgets(release)))
    return _run_budgets(release)


def _run_budgets(release) -> dict[str, tuple[str, ...]]:
    fr = release.frame
    present = (fr.filter(pl.col("scored")).select("model", pl.col("budget").cast(pl.Utf8))
               .unique().group_by("model").agg(pl.col("budget")))
    have = {r["model"]: set(r["budget"]) for r in present.iter_rows(named=True)}
    in64 = set(release.models_in_64k_set())
    out = {}
    for m in release.model_order():
        bs = have.get(m, set())
        if m not in in64:
            bs = bs - {"64K"}
        out[m] = tuple(b for b in tx.BUDGETS if b in bs)
    return out


def models_at_budget(release, budget: str, models: Sequence[str] | None = None) -> list[str]:
    """The models (paper order) run at ``budget`` among ``models`` (default: all)."""
    rb = run_budgets(release)
    return [m for m in check_models(release, models) if budget in rb.get(m, ())]


def budgets_run(release, models: Sequence[str] | None = None) -> list[str]:
    """Budgets (paper order) at which at least one of ``models`` (default all) was run (:func:`run_budgets`)."""
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
    """The budget of the paper's 64K artifacts: ``budget`` if given, else 64K if any model was run
    at 64K, else the longest budget present."""
    if budget is not None:
        return check_budgets([budget])[0]
    present = require_budgets(release, models)
    return "64K" if "64K" in present else present[-1]


def baseline_budget(release, budget: str | None = None, *, models: Sequence[str] | None = None) -> str:
    """The baseline of scaling comparisons: ``budget`` if given, else 8K if present, else the shortest."""
    if budget is not None:
        return check_budgets([budget])[0]
    present = require_budgets(release, models)
    return "8K" if "8K" in present else present[0]


def fig5_budget(release, budget: str | None = None, *, models: Sequence[str] | None = None) -> str:
    """Figure 5's budget: ``budget`` if given, else 32K if present, else the budget run by the most
    models (the longer one on ties)."""
    if budget is not None:
        return check_budgets([budget])[0]
    present = require_budgets(release, models)
    if "32K" in present:
        return "32K"
    counts = {b: len(models_at_budget(release, b, models)) for b in present}
    return max(present, key=lambda b: (counts[b], tx.BUDGETS.index(b)))


def budget_note(chosen: str, requested, paper: str, otherwise: str, present=None, *,
                absent: str = "no model was run at") -> str:
    """Why ``chosen`` was used: ``"as requested"``, ``"the paper's"`` or ``"no model was run at <paper>;
    <otherwise>"`` (``absent`` words the first half; ``present``: the budgets the data has, to flag a
    requested budget it lacks)."""
    if requested is not None:
        return "as requested" + ("" if present is None or chosen in present else f"; no model was run at {chosen}")
    return "the paper's" if chosen == paper else f"{absent} {paper}; {otherwise}"


def part_budget(frame, budget: str | None = None, *, paper: str = "8K") -> str:
    """The budget of an optional part run at one budget in the paper (the second judge, the ablation):
    ``budget`` if given, else ``paper`` when ``frame`` has rows there, else the budget with the most rows
    (the shorter on ties; ``paper`` when ``frame`` is empty or None)."""
    if budget is not None:
        return check_budgets([budget])[0]
    if frame is None or len(frame) == 0 or "budget" not in frame.columns:
        return paper
    col = frame["budget"]
    values = col.cast(pl.Utf8).to_list() if isinstance(col, pl.Series) else col.astype(str).tolist()
    counts: dict[str, int] = {}
    for v in values:
        b = tx.normalize_budget(v)
        if b is not None:
            counts[b] = counts.get(b, 0) + 1
    if paper in counts or not counts:
        return paper
    return max(counts, key=lambda b: (counts[b], -tx.BUDGETS.index(b)))


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
    """Figure 8's model set and shared budgets: the models run at ``budget`` (the 64K set) and the
    budgets every one of them was run at (all four on the paper's release).

    Raises :class:`MissingDataError` when no model was run at ``budget``.
    """
    b = comparison_budget(release, budget, models=models)
    ms = models_at_budget(release, b, models)
    if not ms:
        raise no_budget_error(release, [b], models, hint="pass budget= one of them")
    rb = run_budgets(release)
    common = set.intersection(*(set(rb[m]) for m in ms))
    return ms, [x for x in tx.BUDGETS if x in common]


def fig8_panels(release, budget: str | None, fig5: str, models: Sequence[str] | None = None
                ) -> tuple[list[str], list[str], list[str]]:
    """Figure 8's model set, shared budgets and panels: ``(models, shared, drawn)``.

    The models and shared budgets are :func:`shared_set`'s (``budget``: the comparison budget);
    the panels are the shared budgets but Figure 5's budget ``fig5`` (drawn there on all models),
    which stays when it is the comparison budget itself.  Raises :class:`MissingDataError` when
    Figure 8 would only repeat Figure 5: a single panel, at Figure 5's budget, of the models
    Figure 5 shows (a release run at one budget).
    """
    ms, shared = shared_set(release, budget, models)
    b = comparison_budget(release, budget, models=models)
    drawn = [x for x in shared if x != fig5 or x == b]
    if drawn == [fig5] and set(ms) == set(models_at_budget(release, fig5, models)):
        raise MissingDataError(f"Figure 8 would only repeat Figure 5: its models were run at {fig5} only, "
                               f"the budget of Figure 5", code="repeats_figure", field="context_length")
    return ms, shared, drawn


def describe_shared_set(models: Sequence[str], shared: Sequence[str], budget: str, drawn=None) -> str:
    """Figure 8's item set: ``"10 models run at 64K; questions judged at 8K, 16K, 32K, 64K by every one"``.
    With ``drawn`` (the panels; the title names nothing it does not draw) the budgets that are not drawn
    are left out: ``"10 models run at 64K (8K, 16K, 64K shown); questions judged at every budget ..."``."""
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


def missing_source_operations(release, *, models: Sequence[str] | None = None) -> str | None:
    """Why Table 17's by-source-operation columns cannot be computed, or ``None`` when they can.

    The source operation of a refusal (AR) item is that of its paired answerable question; it is
    known only from an item table with ``paired_question_id`` (or a ``source_operation`` field).
    """
    fr = release.frame.filter(pl.col("is_ar") & pl.col("scored"))
    if models is not None:
        fr = fr.filter(pl.col("model").is_in(check_models(release, models)))
    if not fr.height:
        return "no refusal (AR) item was scored"
    if fr["source_operation"].drop_nulls().len() == 0:
        return ("the source operation of every AR item is unknown (no items.csv with paired_question_id), "
                "so the IE/MSR/TET columns of Table 17 are left out")
    return None


def models_at_or_fail(release, budget: str, models=None) -> list[str]:
    ms = models_at_budget(release, budget, models)
    if not ms:
        raise no_budget_error(release, [budget], models, hint="pass budget= one of them")
    return ms


def scored_predictions(release, *, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None,
                       pairing: str = "all_budgets", shared_budgets: Iterable[str] | None = None) -> pd.DataFrame:
    """The scored predictions that enter the accuracies after the pairing rule (``"all_budgets"``,
    ``"shared"`` with ``shared_budgets``, ``"none"``; :mod:`voxmem_analysis.analysis.results`), as pandas:
    one row per (model, item) kept of ``models`` (a model only at the budgets it was run at) and ``budgets``
    (the rule still looks at every budget a model was run at): ``model, question_id, item_id, budget,
    evidence_type, operation, is_ar, source_operation, status, scored, correct``."""
    return scored_frame(release, models=models, budgets=budgets, pairing=pairing,
                        shared_budgets=shared_budgets).to_pandas()


def scored_frame(release, *, models: Sequence[str] | None = None, budgets: Iterable[str] | None = None,
                 pairing: str = "all_budgets", shared_budgets: Iterable[str] | None = None) -> pl.DataFrame:
    """:func:`scored_predictions` as a polars frame, computed once per release and arguments: the
    analyses work on it in polars up to their final table."""
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


def order_frame(df: pd.DataFrame, models: list[str]) -> pd.DataFrame:
    """``df`` sorted (stably) in the paper's order of every key column it has (models as in ``models``)."""
    orders = {
        "model": models,
        "budget": list(tx.BUDGETS),
        "operation": [*tx.OPERATIONS, OVERALL],
        "source_operation": [*tx.OPERATIONS, OVERALL],
        "evidence_type": [*tx.EVIDENCE_TYPES, OVERALL],
        "group": [*GROUP_ORDER, "unknown", "all"],
    }
    cols = [c for c in orders if c in df.columns]

    def key(s):
        o = {v: i for i, v in enumerate(orders[s.name])}
        return s.map(lambda v: o.get(v, len(o)))

    return df.sort_values(cols, key=key, kind="stable").reset_index(drop=True)
