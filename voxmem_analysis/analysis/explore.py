"""The subtype explorer: accuracy with a 95% interval for any grouping of the verdict frame.

Everything ``notebooks/50_subtype_explorer.py`` computes lives here; the figure is drawn by
:func:`voxmem_analysis.plots.slices.slice_dot_plot`.

* :func:`select_rows` -- the verdicts of one budget and of some models;
* :func:`explore_slices` -- :func:`voxmem_analysis.analysis.verdicts.slice_accuracy` on that selection,
  its ``by`` columns made ordered categoricals in display order;
* :func:`pooled_accuracy` -- every selected verdict pooled (the dashed line of the plot);
* display helpers: :func:`slice_label`, :func:`column_name`, :func:`level_orders`,
  :func:`slice_title`, :func:`slice_caption`, :func:`output_name`, :func:`labelled_table`;
* :func:`widget` -- drop-downs that recompute with these functions and redraw (JupyterLab).

The denominator is the paper's: provider-rejected predictions leave it (``scored`` is
false), failed and ungraded ones count as wrong (``correct`` is false or null).
"""
from __future__ import annotations

from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.output import stamp_synthetic
from voxmem_analysis.analysis.accuracy import accuracy_table
from voxmem_analysis.analysis.verdicts import MACRO, OVERALL, AnalysisInputError, level_order, slice_accuracy
from voxmem_analysis.errors import MissingDataError

__all__ = [
    "LABELS", "ORDERS", "COLUMN_NAMES", "GROUPINGS", "parse_by", "parse_models", "select_rows",
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


# ----------------------------------------------------------------------------- arguments
def parse_by(by) -> list[str]:
    """The grouping columns of ``by``: ``"subtype, evidence_type"`` -> ``["subtype", "evidence_type"]``.

    Parameters
    ----------
    by : str or sequence of str
        Comma-separated column names, or a list of them.

    Returns
    -------
    list of str

    Raises
    ------
    AnalysisInputError
        When no column is named.
    """
    cols = [c.strip() for c in by.split(",")] if isinstance(by, str) else [str(c).strip() for c in by]
    cols = [c for c in cols if c]
    if not cols:
        raise AnalysisInputError("by must name at least one column of the verdict frame", "by")
    return cols


def parse_models(models) -> list[str] | None:
    """The model names of ``models``; ``None`` when every model is meant.

    Parameters
    ----------
    models : None, str or sequence of str
        ``None``, ``""`` or ``"all"``: every model; ``"Model-A,Model-B"`` or a list of names.

    Returns
    -------
    list of str or None
    """
    if isinstance(models, str):
        if models.strip() in _ALL:
            return None
        return [m.strip() for m in models.split(",") if m.strip()] or None
    if models is None:
        return None
    return [str(m) for m in models] or None


def _parse_budget(budget) -> str | None:
    if isinstance(budget, str) and budget.strip().lower() in ("", "all"):
        return None
    if budget is None:
        return None
    b = tx.normalize_budget(budget)
    if b is None:
        raise AnalysisInputError(f"unknown budget {budget!r}; one of {', '.join(tx.BUDGETS)} or None (all)", "budget")
    return b


def _frame_of(release_or_frame):
    return getattr(release_or_frame, "frame", release_or_frame)


def _is_polars(frame) -> bool:
    return type(frame).__module__.startswith("polars")


def _model_order(release_or_frame) -> list | None:
    get = getattr(release_or_frame, "model_order", None)
    return list(get()) if callable(get) else None


# ----------------------------------------------------------------------------- selection
def select_rows(frame, budget=None, models=None):
    """The verdicts of one budget and of the chosen models.

    Parameters
    ----------
    frame : polars or pandas DataFrame
        A verdict frame (:mod:`voxmem_analysis.io.schema` columns; at least ``budget`` and
        ``model`` when they are filtered on).
    budget : str, optional
        ``"8K"`` ... ``"64K"`` (any spelling :func:`voxmem_analysis.taxonomy.normalize_budget`
        accepts); ``None``, ``""`` or ``"all"``: every budget.
    models : None, str or sequence of str
        See :func:`parse_models`.

    Returns
    -------
    polars or pandas DataFrame
        The selected rows, same type as ``frame``.

    Raises
    ------
    AnalysisInputError
        Unknown budget, or a model the frame does not hold at all (a model without
        verdicts at ``budget`` just contributes no rows).
    """
    b = _parse_budget(budget)
    ms = parse_models(models)
    polars = _is_polars(frame)
    if ms is not None:
        have = set(frame["model"].unique().to_list() if polars else frame["model"].unique())
        unknown = [m for m in ms if m not in have]
        if unknown:
            raise AnalysisInputError(f"unknown model(s) {unknown}; the frame has: {', '.join(sorted(map(str, have)))}",
                                     "models")
    if polars:
        import polars as pl

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
    """Accuracy (%) of every selected verdict pooled: the plot's dashed line.

    Parameters
    ----------
    release_or_frame : Release or polars / pandas DataFrame
        A :class:`~voxmem_analysis.io.Release` (its ``frame`` is used) or a verdict frame.
    budget, models
        As in :func:`select_rows`.

    Returns
    -------
    float
        ``100 * correct / scored`` over the selection (null ``correct`` counts as wrong;
        unscored rows are out); NaN when nothing is scored.
    """
    f = select_rows(_frame_of(release_or_frame), budget, models)
    return float(accuracy_table(f, [])["accuracy"].iloc[0])


# ----------------------------------------------------------------------------- labels / order
def slice_label(column: str, value) -> str:
    """Display label of ``value`` in ``column`` (taxonomy label; ``overall`` / ``macro`` kept).

    Parameters
    ----------
    column : str
    value : object

    Returns
    -------
    str
        E.g. ``slice_label("subtype", "cue_to_fact") == "Cue-to-Fact"``; values outside the
        taxonomy as ``str(value)``; a missing value as ``"missing"``.
    """
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return "missing"
    if isinstance(value, str) and value in _TAIL:
        return value
    return str(LABELS.get(column, {}).get(value, value))


def column_name(column: str) -> str:
    """Display name of a verdict-frame column (``"evidence_type"`` -> ``"Evidence type"``)."""
    return COLUMN_NAMES.get(column, column)


def level_orders(values: Mapping[str, Sequence], *, model_order: Sequence | None = None) -> dict[str, list]:
    """Display order of the values found in each column.

    Parameters
    ----------
    values : mapping of column -> values
        The values of each column (e.g. ``{"subtype": table["subtype"]}``); duplicates allowed.
    model_order : sequence, optional
        Order of the ``model`` column (e.g. ``release.model_order()``).

    Returns
    -------
    dict of column -> list
        Taxonomy columns in taxonomy order (:data:`ORDERS`), ``model`` in ``model_order``,
        anything else as :func:`voxmem_analysis.analysis.verdicts.level_order` (numbers ascending);
        unknown values after the known ones, then ``overall`` and ``macro``; nulls dropped.
    """
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


# ----------------------------------------------------------------------------- the slices
def explore_by_budget(release, by, *, models=None, interval: str = "auto", n_boot: int = 10_000,
                      seed: int = 0) -> tuple[pd.DataFrame, dict[str, float]]:
    """:func:`explore_slices` at every budget the selected models were run at, for the facet plot.

    Returns
    -------
    (DataFrame, dict)
        The per-budget tables stacked with a ``budget`` column (budgets in run order), and the
        pooled accuracy (%) of each budget (the facets' dashed lines, :func:`pooled_accuracy`).

    Raises
    ------
    MissingDataError
        When the selected models were run at one budget only: its one panel would only repeat
        the figure of that budget (and of every budget pooled), so there is nothing to facet.
    """
    from voxmem_analysis.analysis.selection import budgets_run

    budgets = budgets_run(release, parse_models(models))
    if len(budgets) < 2:
        raise MissingDataError(f"the figure by budget would only repeat the one above: the selected models were run "
                               f"at {budgets[0] if budgets else 'no budget'} only", code="repeats_figure",
                               field="budget")
    per_budget = [explore_slices(release, by, budget=b, models=models, interval=interval, n_boot=n_boot,
                                 seed=seed).assign(budget=b)
                  for b in budgets]
    facets = pd.concat(per_budget, ignore_index=True)
    pooled = {b: pooled_accuracy(release, budget=b, models=models) for b in facets["budget"].unique()}
    return facets, pooled


def explore_slices(release_or_frame, by, *, budget=None, models=None, interval: str = "auto", n_boot: int = 10_000,
                   seed: int = 0, model_order: Sequence | None = None) -> pd.DataFrame:
    """Accuracy per slice of the selected verdicts, in display order.

    Parameters
    ----------
    release_or_frame : Release or polars / pandas DataFrame
        A :class:`~voxmem_analysis.io.Release` or a verdict frame.
    by : str or sequence of str
        Columns to slice by, e.g. ``"subtype,evidence_type"`` (first: rows of the plot;
        the others: its colours).
    budget, models
        As in :func:`select_rows`.
    interval : {"auto", "wilson", "bootstrap"}
        Wilson interval per slice, or a percentile bootstrap resampling ``item_id``.
    n_boot, seed : int
        Bootstrap resamples and seed (recorded by ``slice_accuracy``; used with ``interval="bootstrap"``).
    model_order : sequence, optional
        Order of the models; default: the release's (``release.model_order()``).

    Returns
    -------
    pandas.DataFrame
        The columns of :func:`voxmem_analysis.analysis.verdicts.slice_accuracy` (``*by, level,
        n_correct, n, n_excluded, accuracy, accuracy_ci_low, accuracy_ci_high, interval``), rows sorted by the
        ``by`` columns, each of which is an ordered pandas ``Categorical`` whose categories
        are :func:`level_orders` (``overall`` / ``macro`` last).

    Raises
    ------
    AnalysisInputError
        Bad ``by`` / ``interval`` / budget / model.
    MissingDataError
        No verdict selected (the release has none of these models at this budget).
    """
    cols = parse_by(by)
    frame = select_rows(_frame_of(release_or_frame), budget, models)
    if len(frame) == 0:
        raise MissingDataError(f"no verdicts selected (budget={budget!r}, models={models!r})", code="no_verdicts",
                               field="budget")
    table = slice_accuracy(frame, cols, interval=interval, item="question_id",
                           n_boot=n_boot, seed=seed)
    if model_order is None:
        model_order = _model_order(release_or_frame)
    orders = level_orders({c: table[c] for c in cols}, model_order=model_order)
    for c in cols:
        table[c] = pd.Categorical(table[c].astype(object), categories=orders[c], ordered=True)
    return table.sort_values(cols, kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------- titles, names, tables
def _models_text(models) -> str:
    ms = parse_models(models)
    return ", ".join(ms) if ms else "all models"


def slice_title(by, *, budget=None, models=None) -> str:
    """Figure title: ``"Accuracy by subtype × evidence type — 32K, all models"``.

    Parameters
    ----------
    by, budget, models
        As in :func:`explore_slices`.

    Returns
    -------
    str
    """
    what = " \u00d7 ".join(column_name(c).lower() for c in parse_by(by))
    b = _parse_budget(budget)
    return f"Accuracy by {what} \u2014 {b or 'all budgets'}, {_models_text(models)}"


def slice_caption(by, *, budget=None, models=None, interval: str = "auto") -> str:
    """Table caption: :func:`slice_title` plus ``" (%, 95% wilson interval)"``."""
    return f"{slice_title(by, budget=budget, models=models)} (%, 95% {interval} interval)"


def output_name(by, budget=None) -> str:
    """File stem of the outputs: ``explorer_<by columns>_<budget or all>`` in lower case.

    Examples
    --------
    >>> output_name("subtype,evidence_type", "32K")
    'explorer_subtype_evidence_type_32k'
    """
    b = _parse_budget(budget)
    return "explorer_" + "_".join([*parse_by(by), str(b or "all").lower()])


def labelled_table(table: pd.DataFrame, by) -> pd.DataFrame:
    """The table as printed: the ``by`` columns folded into a label index.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`explore_slices` output.
    by : str or sequence of str

    Returns
    -------
    pandas.DataFrame
        ``table`` without the ``by`` columns, indexed by ``"Cue-to-Fact / Speaker Identity"``
        style labels (:func:`slice_label` joined by ``" / "``); index name: the columns
        joined by ``" / "``.
    """
    cols = parse_by(by)
    shown = table.drop(columns=cols)
    shown.index = pd.Index([" / ".join(slice_label(c, v) for c, v in zip(cols, vals))
                            for vals in table[cols].itertuples(index=False)], name=" / ".join(cols))
    return shown


# ----------------------------------------------------------------------------- interactive
def grouping_choices(columns: Sequence[str], current=None) -> list[str]:
    """The :data:`GROUPINGS` whose columns are all in ``columns``; ``current`` first if not among them."""
    have = set(columns)
    out = [g for g in GROUPINGS if all(c in have for c in parse_by(g))]
    if current and current not in out:
        out.insert(0, current)
    return out


def widget(release, *, draw: Callable, by: str = "subtype,evidence_type", budget=None, models=None,
           interval: str = "auto", n_boot: int = 10_000, seed: int = 0):
    """Drop-downs (grouping, budget, model, interval) that recompute and redraw.

    Each change calls :func:`explore_slices`, :func:`pooled_accuracy` and :func:`slice_title`
    and hands the result to ``draw`` -- the same calls the notebook makes.  The figure of a
    synthetic release gets the visible "SYNTHETIC DATA" label
    (:func:`voxmem_analysis.output.stamp_synthetic`), as every saved figure does.

    Parameters
    ----------
    release : Release
        The loaded release.
    draw : callable
        ``draw(table, by, overall=..., title=...)`` returning a matplotlib Axes, e.g.
        :func:`voxmem_analysis.plots.slices.slice_dot_plot`.
    by, budget, models, interval, n_boot, seed
        Initial values, as in :func:`explore_slices`.

    Returns
    -------
    ipywidgets.VBox
        The drop-downs and the output area (already drawn once); ``.children[0].children``
        are the four drop-downs.
    """
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
