"""The subtype explorer (notebook 50): accuracy with a 95% interval for any grouping of the verdict frame, the
selection, display labels and orders, and the JupyterLab :func:`widget`."""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.output import stamp_synthetic
from voxmem_analysis.analysis.accuracy import accuracy_table
from voxmem_analysis.analysis.selection import budget_note, budgets_run, fig5_budget
from voxmem_analysis.analysis.verdicts import (MACRO, OVERALL, AnalysisInputError, BootstrapSettings, level_order,
                                              slice_accuracy)
from voxmem_analysis.errors import MissingDataError

__all__ = [
    "LABELS", "ORDERS", "COLUMN_NAMES", "GROUPINGS", "parse_by", "parse_models", "select_rows", "explorer_budget",
    "explore_slices", "explore_by_budget", "pooled_accuracy", "slice_label", "column_name", "level_orders", "slice_title",
    "slice_caption", "output_name", "labelled_table", "grouping_choices", "widget",
]

#: Display labels of the values of taxonomy columns (other values are shown as they are).
LABELS: dict[str, Mapping[str, str]] = {
    "subtype": tx.SUBTYPE_LABELS,
    "evidence_type": tx.EVIDENCE_LABELS,
    "operation": tx.OPERATION_LABELS,
    "source_operation": tx.OPERATION_LABELS,
    "budget": tx.BUDGET_LABELS,
}
#: Display order of the values of taxonomy columns (``model`` follows the release's order).
ORDERS: dict[str, tuple] = {
    "subtype": tx.SUBTYPES,
    "evidence_type": tx.EVIDENCE_TYPES,
    "operation": tx.OPERATIONS,
    "source_operation": tx.OPERATIONS,
    "budget": tx.BUDGETS,
}
#: Display names of the verdict frame's columns (axis and legend titles).
COLUMN_NAMES: dict[str, str] = {
    "subtype": "Subtype", "evidence_type": "Evidence type", "operation": "Operation",
    "source_operation": "Source operation", "budget": "Budget", "model": "Model", "answer_type": "Answer type",
    "session_count": "Sessions in history", "evidence_session_count": "Evidence sessions",
    "samekey_haystack_session_count": "Same-key haystack sessions",
}
#: Groupings offered by :func:`widget` (those whose columns the frame has).
GROUPINGS: tuple[str, ...] = (
    "subtype,evidence_type", "subtype", "evidence_type", "operation,evidence_type", "operation",
    "evidence_type,budget", "model", "model,evidence_type", "answer_type", "answer_type,evidence_type",
    "session_count", "evidence_session_count,evidence_type", "source_operation,evidence_type",
)
_ALL = (None, "", "all")
_TAIL = (OVERALL, MACRO)


def parse_by(by) -> list[str]:
    """The grouping columns of ``by`` (comma-separated or a list); none named is an error."""
    cols = [c.strip() for c in by.split(",")] if isinstance(by, str) else [str(c).strip() for c in by]
    cols = [c for c in cols if c]
    if not cols:
        raise AnalysisInputError("by must name at least one column of the verdict frame", "by")
    return cols


def parse_models(models) -> list[str] | None:
    """The model names of ``models`` (``"A,B"`` or a list); ``None`` for every model (``None``, ``""``, ``"all"``)."""
    if isinstance(models, str):
        return None if models.strip() in _ALL else [m.strip() for m in models.split(",") if m.strip()] or None
    return None if models is None else [str(m) for m in models] or None


def _parse_budget(budget) -> str | None:
    if budget is None or (isinstance(budget, str) and budget.strip().lower() in ("", "all")):
        return None
    b = tx.normalize_budget(budget)
    if b is None:
        raise AnalysisInputError(f"unknown budget {budget!r}; one of {', '.join(tx.BUDGETS)} or None (all)", "budget")
    return b


def _frame_of(release_or_frame):
    return getattr(release_or_frame, "frame", release_or_frame)


def explorer_budget(release, budget="auto", models=None) -> tuple[str | None, str]:
    """``(budget or None, why)``: ``"auto"``: the paper's 32K when run, else the budget run by the most models;
    ``None``/``"all"``: every budget pooled; any other budget as requested."""
    if isinstance(budget, str) and budget.strip().lower() == "auto":
        b = fig5_budget(release, None, models=parse_models(models))
        return b, budget_note(b, None, "32K", "the budget run by the most models")
    b = _parse_budget(budget)
    return b, "every budget pooled" if b is None else budget_note(b, b, "32K", "", budgets_run(release))


def select_rows(frame, budget=None, models=None):
    """The verdicts (polars or pandas, returned alike) of one ``budget`` (``None``/``"all"``: every budget) and of
    ``models`` (:func:`parse_models`); an unknown budget or model is an error."""
    b, ms = _parse_budget(budget), parse_models(models)
    polars = isinstance(frame, pl.DataFrame)
    if ms is not None:
        have = set(frame["model"].unique().to_list() if polars else frame["model"].unique())
        unknown = [m for m in ms if m not in have]
        if unknown:
            raise AnalysisInputError(f"unknown model(s) {unknown}; the frame has: {', '.join(sorted(map(str, have)))}",
                                     "models")
    if polars:
        if b is not None:
            frame = frame.filter(pl.col("budget").cast(pl.Utf8) == b)
        if ms is not None:
            frame = frame.filter(pl.col("model").is_in(ms))
    else:
        if b is not None:
            frame = frame[frame["budget"].astype(str) == b]
        if ms is not None:
            frame = frame[frame["model"].isin(ms)]
    return frame


def pooled_accuracy(release_or_frame, *, budget=None, models=None) -> float:
    """Accuracy (%) of every selected verdict pooled (the plot's dashed line; NaN when nothing is scored)."""
    f = select_rows(_frame_of(release_or_frame), budget, models)
    return float(accuracy_table(f, [])["accuracy"].iloc[0])


def slice_label(column: str, value) -> str:
    """Display label of ``value`` in ``column`` (``"cue_to_fact"`` -> ``"Cue-to-Fact"``; ``"missing"`` for none)."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "missing"
    if isinstance(value, str) and value in _TAIL:
        return value
    return str(LABELS.get(column, {}).get(value, value))


def column_name(column: str) -> str:
    """Display name of a verdict-frame column (``"evidence_type"`` -> ``"Evidence type"``)."""
    return COLUMN_NAMES.get(column, column)


def level_orders(values: Mapping[str, Sequence], *, model_order: Sequence | None = None) -> dict[str, list]:
    """Display order of the values of each column: :data:`ORDERS`, ``model_order`` for ``model``, else
    :func:`~voxmem_analysis.analysis.verdicts.level_order`; unknown values after the known, then ``overall`` and
    ``macro``; nulls dropped."""
    out: dict[str, list] = {}
    for col, vals in values.items():
        vals = list(vals)
        is_tail = [isinstance(v, str) and v in _TAIL for v in vals]
        tail = [t for t in _TAIL if t in vals]
        body = [v for v in level_order(pd.Series([v for v, t in zip(vals, is_tail) if not t], dtype=object))
                if v is not None]
        known = list(model_order) if (col == "model" and model_order is not None) else list(ORDERS.get(col, ()))
        if known:
            rank = {v: i for i, v in enumerate(known)}
            body.sort(key=lambda v: rank.get(v, len(known)))   # stable: unknown values keep their order
        out[col] = body + tail
    return out


def explore_by_budget(release, by, *, models=None, interval: str = "auto", n_boot: int = 10_000,
                      seed: int = 0) -> tuple[pd.DataFrame, dict[str, float]]:
    """``(tables, pooled)``: :func:`explore_slices` at every budget the models were run at, stacked with a
    ``budget`` column, and each budget's pooled accuracy; :class:`MissingDataError` for one budget only."""
    budgets = budgets_run(release, parse_models(models))
    if len(budgets) < 2:
        raise MissingDataError(f"the figure by budget would only repeat the one above: the selected models were run "
                               f"at {budgets[0] if budgets else 'no budget'} only", code="repeats_figure",
                               field="budget")
    facets = pd.concat([explore_slices(release, by, budget=b, models=models, interval=interval, n_boot=n_boot,
                                       seed=seed).assign(budget=b) for b in budgets], ignore_index=True)
    pooled = {b: pooled_accuracy(release, budget=b, models=models) for b in facets["budget"].unique()}
    return facets, pooled


def explore_slices(release_or_frame, by, *, budget=None, models=None, interval: str = "auto", n_boot: int = 10_000,
                   seed: int = 0, model_order: Sequence | None = None) -> pd.DataFrame:
    """Accuracy per slice of the verdicts :func:`select_rows` selects, in display order.

    ``by``: the columns to slice by (rows of the plot, then its colours); ``interval``: Wilson, a bootstrap resampling
    questions, or ``"auto"`` (the bootstrap where a question repeats in a slice); ``model_order``: default the
    release's.  :class:`MissingDataError` when nothing is selected. The columns of
    :func:`~voxmem_analysis.analysis.verdicts.slice_accuracy`, each ``by`` column an ordered ``Categorical``
    (:func:`level_orders`)."""
    cols = parse_by(by)
    frame = select_rows(_frame_of(release_or_frame), budget, models)
    if len(frame) == 0:
        have = sorted({str(b) for b in _frame_of(release_or_frame)["budget"].unique()},
                      key=lambda b: tx.BUDGETS.index(b) if b in tx.BUDGETS else 99)
        raise MissingDataError(f"no verdicts selected (budget={budget!r}, models={models!r}); budgets in the "
                               f"data: {', '.join(have) or 'none'}", code="no_verdicts", field="budget")
    table = slice_accuracy(frame, cols, interval=interval, item="question_id",
                           settings=BootstrapSettings(n_boot=n_boot, seed=seed))
    if model_order is None and callable(getattr(release_or_frame, "model_order", None)):
        model_order = list(release_or_frame.model_order())
    orders = level_orders({c: table[c] for c in cols}, model_order=model_order)
    for c in cols:
        table[c] = pd.Categorical(table[c].astype(object), categories=orders[c], ordered=True)
    return table.sort_values(cols, kind="stable").reset_index(drop=True)


def slice_title(by, *, budget=None, models=None) -> str:
    """Figure title: ``"Accuracy by subtype × evidence type — 32K, all models"``."""
    what = " \u00d7 ".join(column_name(c).lower() for c in parse_by(by))
    b = _parse_budget(budget)
    return f"Accuracy by {what} \u2014 {b or 'all budgets'}, {', '.join(parse_models(models) or ['all models'])}"


def slice_caption(by, *, budget=None, models=None, interval: str = "auto", why: str | None = None) -> str:
    """:func:`slice_title` plus ``" (%, 95% <interval> interval)"`` and ``why`` the budget was taken, when it was
    not the paper's."""
    note = f"; budget: {why}" if why and why not in ("the paper's", "as requested", "every budget pooled") else ""
    return f"{slice_title(by, budget=budget, models=models)} (%, 95% {interval} interval{note})"


def output_name(by, budget=None) -> str:
    """File stem of the outputs: ``output_name("subtype,evidence_type", "32K") == "explorer_subtype_evidence_type_32k"``."""
    b = _parse_budget(budget)
    return "explorer_" + "_".join([*parse_by(by), str(b or "all").lower()])


def labelled_table(table: pd.DataFrame, by) -> pd.DataFrame:
    """The table as printed: the ``by`` columns folded into an index of ``"Cue-to-Fact / Speaker Identity"``."""
    cols = parse_by(by)
    shown = table.drop(columns=cols)
    shown.index = pd.Index([" / ".join(slice_label(c, v) for c, v in zip(cols, vals))
                            for vals in table[cols].itertuples(index=False)], name=" / ".join(cols))
    return shown


def grouping_choices(columns: Sequence[str], current=None) -> list[str]:
    """The :data:`GROUPINGS` whose columns are all in ``columns``; ``current`` first if not among them."""
    have = set(columns)
    out = [g for g in GROUPINGS if all(c in have for c in parse_by(g))]
    if current and current not in out:
        out.insert(0, current)
    return out


def widget(release, *, draw: Callable, by: str = "subtype,evidence_type", budget=None, models=None,
           interval: str = "auto", n_boot: int = 10_000, seed: int = 0):
    """Drop-downs (grouping, budget, model, interval) that recompute :func:`explore_slices` and redraw with
    ``draw(table, by, overall=..., title=...)`` (e.g. :func:`voxmem_analysis.plots.slices.slice_dot_plot`), a
    synthetic release's figure stamped SYNTHETIC DATA; returns the ``ipywidgets.VBox``."""
    import ipywidgets as widgets
    from IPython.display import display

    model_names = [str(m) for m in release.model_order()]
    model_options = ["all", *model_names]
    if parse_models(models) and ",".join(parse_models(models)) not in model_options:
        model_options.insert(1, ",".join(parse_models(models)))
    w_by = widgets.Dropdown(options=grouping_choices(release.frame.columns, by), value=by, description="by")
    w_budget = widgets.Dropdown(options=["all", *tx.BUDGETS], value=_parse_budget(budget) or "all",
                                description="budget")
    w_model = widgets.Dropdown(options=model_options, value=",".join(parse_models(models) or ["all"]),
                               description="model")
    w_ci = widgets.Dropdown(options=["auto", "wilson", "bootstrap"], value=interval, description="interval")
    w_out = widgets.Output()

    def redraw(*_):
        b, m, g, c = w_budget.value, w_model.value, w_by.value, w_ci.value
        with w_out:
            w_out.clear_output(wait=True)
            try:
                table = explore_slices(release, g, budget=b, models=m, interval=c, n_boot=n_boot, seed=seed)
            except (AnalysisInputError, MissingDataError) as exc:
                print(exc)
                return
            ax = draw(table, g, overall=pooled_accuracy(release, budget=b, models=m),
                      title=slice_title(g, budget=b, models=m))
            fig = ax.figure
            if getattr(release, "synthetic", False):  # as output.save_figure labels every saved figure
                stamp_synthetic(fig)
            display(fig)
            import matplotlib.pyplot as plt

            plt.close(fig)
            display(table)

    for w in (w_by, w_budget, w_model, w_ci):
        w.observe(redraw, names="value")
    box = widgets.VBox([widgets.HBox([w_by, w_budget, w_model, w_ci]), w_out])
    redraw()
    return box
