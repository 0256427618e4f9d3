"""``voxmem-analysis slice``: accuracy per slice of a verdict frame, with overall and macro rows; APR and ARS of
Audio MultiChallenge tasks."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import polars as pl

from voxmem_analysis.analysis.amc_runs import amc_slice
from voxmem_analysis.analysis.explore import level_orders, pooled_accuracy, slice_title
from voxmem_analysis.analysis.subsets import empty_selection, pooling_notes, select_verdicts
from voxmem_analysis.analysis.verdicts import AnalysisInputError, BootstrapSettings, pooled_across, slice_accuracy
from voxmem_analysis.commands._common import amc_tasks, note, one_judge, open_args, report, show, with_cluster
from voxmem_analysis.commands._parsers import comma_list
from voxmem_analysis.console import progress
from voxmem_analysis.plots.slices import slice_dot_plot
from voxmem_analysis.io.provenance import SYNTHETIC_TAG
from voxmem_analysis.writing import atomic_write

DEFAULT_BY = {"voxmem": "model,budget,evidence_type", "longmemeval": "system,question_type",
              "amc_release": "system,axis", "amc_runs": "system,axis"}
_KEYS = ["level", "n_correct", "n", "accuracy", "interval"]
_AMC_KEYS = ["level", "n_tasks", "n_passed", "apr", "ars"]


def run(args) -> int:
    src = open_args(args, selects=True)
    by = comma_list(args.by or DEFAULT_BY[src.kind])
    if src.is_amc:
        table = amc_slice(amc_tasks(src, args), by, n_boot=args.n_boot, seed=args.seed, progress=progress("bootstrap"))
        show(table, args, f"APR and ARS (%) by {', '.join(by)}: Wilson interval (APR), task bootstrap within axes "
             "(ARS)", src, keys=[*by, *_AMC_KEYS])
        return 0
    if src.kind == "voxmem":
        frame = _select(src.frame, by, args)
        report(src, args, selected=frame)
    else:
        frame = _manifest_frame(src.data, by, args)
    frame, cluster = with_cluster(frame, args.cluster, src.data if src.kind == "voxmem" else None)
    system = "model" if src.kind == "voxmem" else "system"
    type_col = None if args.type_col in ("none", "") else args.type_col
    separate = None
    if not args.pool and system in by:
        separate = [system]
        if pooled_across(frame, by, [system], type_col=type_col):
            note(f"no overall or macro row pooling several {system}s (each {system} is its own analysis); --pool "
                 "adds it")
    boot = BootstrapSettings(n_boot=args.n_boot, seed=args.seed, interval=args.bootstrap_interval, mc_se=True,
                             progress=progress("bootstrap"))
    table = slice_accuracy(frame, by, interval=args.interval, item="question_id", type_col=type_col,
                           cluster=cluster, separate=separate, settings=boot)
    if args.interval == "auto":
        used = sorted(set(table.loc[table["level"] != "macro", "interval"]))
        note("interval: " + ", ".join(used) + " (auto: item bootstrap where a question repeats within a row, "
             "e.g. several models or budgets pooled; Wilson otherwise)")
    show(table, args, f"Accuracy (%) by {', '.join(by)}", src, keys=[*by, *_KEYS])
    if args.plot:
        title = slice_title(by, budget=args.budget, models=args.model)
        _plot(table, by, args.plot, title + (f"\n{SYNTHETIC_TAG}" if src.synthetic else ""), frame)
    return 0


def _manifest_frame(data, by: list[str], args):
    """LongMemEval verdicts: budget added to the default slices when there are several; one judge per system."""
    budgets = data.budgets()
    if len(budgets) > 1 and "budget" not in by:
        if args.by is None:
            by.insert(by.index("system") + 1 if "system" in by else 0, "budget")
            note(f"several budgets ({', '.join(map(str, budgets))}): slicing by {','.join(by)}")
        else:
            note(f"warning: slices pool {len(budgets)} budgets ({', '.join(map(str, budgets))}); add budget to --by "
                 "to separate them")
    if "judge" not in by:
        return one_judge(data, args)[0]
    if args.judge is None:
        return data.frame
    judges = sorted(str(j) for j in data.frame["judge"].drop_nulls().unique().to_list())
    if args.judge not in judges:
        raise AnalysisInputError(f"--judge {args.judge!r} is not in the data; judges: {', '.join(judges)}", "judge")
    note(f"--judge {args.judge}: only its verdicts")
    return data.frame.filter(pl.col("judge") == args.judge)


def _select(frame, by: list[str], args):
    """The verdicts after --model/--budget/--where and the answerable-only rule; notes on stderr."""
    answerable_only = "subtype" in by and not args.include_refusal
    out = select_verdicts(frame, models=args.model, budget=args.budget, where=args.where,
                          answerable_only=answerable_only)
    if answerable_only:
        n_ar = select_verdicts(frame, models=args.model, budget=args.budget, where=args.where).height - out.height
        note(f"subtype slices count the answerable items only, as in the paper: {n_ar} answer-refusal "
             f"prediction(s) left out (--include-refusal counts them under their source subtype)")
    for n in pooling_notes(out, by):
        note(n)
    if out.height == 0:
        raise AnalysisInputError(empty_selection(frame, models=args.model, budget=args.budget, where=args.where,
                                                 answerable_only=answerable_only), "budget")
    return out


def _plot(table, by: list[str], path: str, title: str, frame) -> None:
    """The subtype explorer's dot plot of ``table``; the dashed line is every selected verdict pooled."""
    import matplotlib   # start-up: only --plot draws

    matplotlib.use("Agg")
    t = table.copy()
    orders = level_orders({c: t[c] for c in by})
    for c in by:
        t[c] = pd.Categorical(t[c].astype(object), categories=orders[c], ordered=True)
    ax = slice_dot_plot(t.sort_values(by, kind="stable"), by, overall=pooled_accuracy(frame), title=title)
    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    atomic_write(path, lambda tmp: ax.figure.savefig(tmp, dpi=150, bbox_inches="tight", format=fmt))
    note(f"wrote {path}")
