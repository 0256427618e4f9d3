"""Selecting the verdicts a command-line slice or drill-down is about (``--model``, ``--budget``, ``--where``),
and saying what it pools."""
from __future__ import annotations

from typing import Sequence

import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.where import WhereError, parse_where, render
from voxmem_analysis.errors import AnalysisInputError

__all__ = ["filter_where", "select_verdicts", "empty_selection", "pooling_notes"]


def filter_where(frame: pl.DataFrame, where: str | None) -> pl.DataFrame:
    """``frame`` filtered by ``--where`` (:mod:`.where`: parsed, re-written, then run by polars SQL on the frame);
    :class:`AnalysisInputError` quoting the expression when it is refused or fails."""
    if not where:
        return frame
    shown = repr(where) if len(where) <= 200 else repr(where[:200]) + f" ({len(where):,} characters)"
    try:
        clause = render(parse_where(where, frame.columns))
    except WhereError as exc:
        raise AnalysisInputError(f"--where {shown}: one boolean expression on the frame's columns: {exc}",
                                 "where") from None
    fr = frame.with_columns(pl.col(c).cast(pl.Utf8) for c, t in frame.schema.items() if isinstance(t, pl.Enum))
    try:
        return fr.sql(f"SELECT * FROM self WHERE {clause}").cast(frame.schema)
    except BaseException as exc:  # noqa: BLE001 - polars raises several SQL errors, and a panic (a BaseException)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        first = next((line for line in str(exc).splitlines() if line.strip()), type(exc).__name__)
        raise AnalysisInputError(f"--where {shown}: polars cannot evaluate it: {first}", "where") from None


def _budgets(budget) -> list[str] | None:
    if budget in (None, "", "all"):
        return None
    parts = budget if isinstance(budget, (list, tuple)) else str(budget).split(",")
    return tx.normalize_budgets([str(x).strip() for x in parts if str(x).strip()])


def select_verdicts(frame: pl.DataFrame, *, models: Sequence[str] | str | None = None, budget=None,
                    where: str | None = None, answerable_only: bool = False) -> pl.DataFrame:
    """The verdicts of ``models`` (a list or comma-separated) at ``budget`` (one or a list), filtered by ``where``,
    without the answer-refusal items when ``answerable_only``; an unknown model or budget is an error."""
    ms = [m.strip() for m in models.split(",")] if isinstance(models, str) else models
    if ms:
        have = set(frame["model"].unique().to_list())
        bad = [m for m in ms if m not in have]
        if bad:
            raise AnalysisInputError(f"unknown model(s) {', '.join(map(repr, bad))}; the data has: "
                                     f"{', '.join(sorted(have))}", "models")
        frame = frame.filter(pl.col("model").is_in(list(ms)))
    bs = _budgets(budget)
    if bs:
        frame = frame.filter(pl.col("budget").cast(pl.Utf8).is_in(bs))
    if answerable_only:
        frame = frame.filter(~pl.col("is_ar"))
    return filter_where(frame, where)


def empty_selection(frame: pl.DataFrame, *, models=None, budget=None, where: str | None = None,
                    answerable_only: bool = False) -> str:
    """Why :func:`select_verdicts` selected nothing, naming what the data has."""
    fr = select_verdicts(frame, models=models)
    present = [b for b in tx.BUDGETS if b in set(fr["budget"].cast(pl.Utf8).to_list())]
    whose = "the selected models were" if models else "the data was"
    bs = _budgets(budget)
    if bs and not set(bs) & set(present):
        return (f"no verdicts selected: --budget {budget}: {whose} run at {', '.join(present) or 'no budget'}; "
                f"pass --budget one of them")
    fr = select_verdicts(fr, budget=budget, answerable_only=answerable_only)
    if where:
        return (f"no verdicts selected: --where {where!r} holds for none of the {fr.height:,} verdicts of the "
                f"selected models and budgets")
    return f"no verdicts selected (the data has {frame.height:,} verdicts; check --model, --budget, --where)"


def pooling_notes(frame: pl.DataFrame, by: Sequence[str]) -> list[str]:
    """Sentences on what each row of a table sliced ``by`` pools, and on its standard error."""
    notes = []
    fr = frame.filter(pl.col("scored"))
    budgets = [b for b in tx.BUDGETS if b in set(fr["budget"].cast(pl.Utf8).to_list())]
    models = sorted(set(fr["model"].to_list()))
    if "budget" not in by and len(budgets) > 1:
        notes.append(f"each row pools {len(budgets)} budgets ({', '.join(budgets)}): a question counts once per "
                     f"budget, so n overstates the independent items and a binomial standard error "
                     f"(sqrt(p(1-p)/n)) is too small; the item bootstrap (--interval auto|bootstrap) resamples questions")
    if "model" not in by and len(models) > 1:
        notes.append(f"each row pools {len(models)} models: verdicts of one question by different models are "
                     f"correlated, so the same caution on standard error applies; add model to --by to separate them")
    if "budget" in by and "model" not in by and len(budgets) > 1:
        sets = {b: set(fr.filter(pl.col("budget").cast(pl.Utf8) == b)["model"].to_list()) for b in budgets}
        if len({frozenset(s) for s in sets.values()}) > 1:
            notes.append("the model set differs across budgets (" + ", ".join(f"{len(sets[b])} at {b}" for b in budgets)
                         + "): differences between budget rows mix context length with which models were run; "
                           "use --model or --where to compare one set")
    return notes
