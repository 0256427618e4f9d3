"""``voxmem-analysis slice``: accuracy per slice of a verdict frame, with overall and macro rows.

Two sources, one function (:func:`voxmem_analysis.analysis.verdicts.slice_accuracy`):

* ``--data DIR``: a VoxMem release; slices the tidy verdict frame by any of its columns
  (``model, budget, evidence_type, operation, subtype, answer_type, session_count`` ...);
  default ``--by model,budget,evidence_type``.  Every row's own scored predictions (no
  pairing rule across budgets).  ``--model``, ``--budget`` and ``--where EXPR`` (a polars SQL
  WHERE clause, :mod:`voxmem_analysis.analysis.subsets`) select the verdicts; slicing by
  ``subtype`` counts the answerable items only, as the paper's subtypes do
  (``--include-refusal`` adds the refusal items under their source subtype).  ``--out FILE``
  writes the table, ``--plot FILE`` the subtype explorer's dot plot.
* ``--manifest FILE --questions FILE``: LongMemEval-format verdicts
  (:mod:`voxmem_analysis.io.longmemeval`); default ``--by system,question_type`` (``budget`` is
  added when the manifest has several budgets).
* ``--manifest FILE --tasks FILE`` (judged Audio MultiChallenge results and the task table) or
  ``--data DIR`` of an Audio MultiChallenge release: APR (Wilson) and ARS (task bootstrap) per
  system and any task column; default ``--by system,axis`` (:mod:`voxmem_analysis.commands._amc`).
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._amc import add_tasks_arg, check_sources, is_amc_runs, run_slice
from voxmem_analysis.commands._shared import (add_cluster_arg, add_data_args, add_judge_arg, add_manifest_args, add_output_args, emit,
                                              load, load_manifest, manifest_cluster, note, one_judge,
                                              synthetic_banner)

_DATA_DEFAULT_BY = "model,budget,evidence_type"
_MANIFEST_DEFAULT_BY = "system,question_type"


# ----------------------------------------------------------------------------- slice
def register(sub) -> None:
    p = sub.add_parser("slice", help="accuracy per slice (any columns), with the overall and macro-average rows",
                       description=__doc__.split("\n\n")[0])
    add_data_args(p, required=False)
    add_manifest_args(p, required=False, lenient=False)
    add_tasks_arg(p)
    p.add_argument("--by", default=None, metavar="COL[,COL...]",
                   help=f"columns to slice by (default: {_DATA_DEFAULT_BY} with --data, {_MANIFEST_DEFAULT_BY} with --manifest "
                        "--questions, system,axis for Audio MultiChallenge)")
    p.add_argument("--interval", choices=("auto", "wilson", "bootstrap"), default="auto",
                   help="interval: Wilson score, or percentile bootstrap over questions; auto (default) uses the "
                        "bootstrap when a slice holds several rows of one question (several models or budgets "
                        "pooled), since their verdicts are not independent, and Wilson otherwise")
    p.add_argument("--bootstrap-interval", choices=("percentile", "bca"), default="percentile",
                   help="endpoints of the bootstrap rows: percentile (default) or bca (bias-corrected and "
                        "accelerated, for small or low-accuracy slices); every bootstrap row states the Monte-Carlo "
                        "standard error of its endpoints (accuracy_ci_low_mc_se, accuracy_ci_high_mc_se)")
    add_cluster_arg(p, adds="the columns cluster and design_effect (clustered / item-level variance)")
    p.add_argument("--type-col", default="auto", metavar="COL",
                   help="column pooled into the overall row and averaged into the macro row "
                        "(default: auto = last of question_type/evidence_type/operation/subtype in --by; 'none' to disable)")
    g = p.add_argument_group("with --data")
    g.add_argument("--model", default=None, metavar="NAME[,NAME...]", help="only these models")
    g.add_argument("--budget", default=None, metavar="B[,B...]", help="only these context lengths (8K, 16K, 32K, 64K)")
    g.add_argument("--where", default=None, metavar="EXPR",
                   help="polars SQL WHERE clause on the verdict frame, e.g. \"evidence_type = 'speech_semantics' "
                        "AND session_count >= 20\" (see data/README.md)")
    g.add_argument("--include-refusal", action="store_true",
                   help="with --by subtype: also count the answer-refusal items under their source subtype "
                        "(default: answerable items only, as the paper's subtypes)")
    p.add_argument("--out", default=None, metavar="FILE", help="write the table to FILE (csv or md by --format)")
    p.add_argument("--plot", default=None, metavar="FILE", help="write the dot plot of the slices (PNG/PDF/SVG by suffix)")
    p.add_argument("--pool", action="store_true",
                   help="with system (--manifest) or model (--data) in --by: also the overall row pooling "
                        "several systems (default: none; each system is its own analysis)")
    add_judge_arg(p)
    add_output_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if bool(args.data) == bool(args.manifest):
        print("give either --data DIR, or --manifest FILE with --questions FILE (LongMemEval) or --tasks FILE "
              "(Audio MultiChallenge)", file=sys.stderr)
        return 2
    why = check_sources(args)
    if why:
        print(why, file=sys.stderr)
        return 2
    if args.manifest and not (args.questions or args.tasks):
        print("--manifest needs --questions FILE (LongMemEval: the question types come from it) or --tasks FILE "
              "(Audio MultiChallenge: the task table)", file=sys.stderr)
        return 2
    from voxmem_analysis.commands._guards import check_outputs, manifest_inputs, release_inputs

    inputs = release_inputs(args.data) + manifest_inputs(args.manifest, args.questions)
    if check_outputs("slice", files={"--out": args.out, "--plot": args.plot}, inputs=inputs):
        return 2
    if is_amc_runs(args) or (args.data and _is_amc(args.data)):
        unused = _not_for_amc(args)
        if unused:
            print(f"slice: {', '.join(unused)} do not apply to Audio MultiChallenge (APR: Wilson interval; ARS: task "
                  "bootstrap; --by any task column)", file=sys.stderr)
            return 2
        return run_slice(args)
    return _run(args)


def _is_amc(path) -> bool:
    from voxmem_analysis.io import is_amc_release

    return is_amc_release(path)


def _not_for_amc(args) -> list[str]:
    """The options given that an Audio MultiChallenge slice has no use for."""
    given = {"--model": args.model, "--budget": args.budget, "--where": args.where,
             "--include-refusal": args.include_refusal, "--plot": args.plot, "--pool": args.pool,
             "--interval": args.interval != "auto", "--bootstrap-interval": args.bootstrap_interval != "percentile",
             "--cluster": args.cluster != "item", "--type-col": args.type_col != "auto", "--type-key": args.type_key}
    return [k for k, v in given.items() if v]


def _run(args) -> int:
    from voxmem_analysis.analysis.verdicts import slice_accuracy

    type_col = None if args.type_col in ("none", "") else args.type_col
    label = None
    if args.data and args.judge:
        print("--judge selects among the judges of a --manifest; a VoxMem release (--data) has one verdict per "
              "prediction (judge agreement: `voxmem-analysis table table13 --data DIR`)", file=sys.stderr)
        return 2
    if args.data:
        release = load(args)
        synthetic_banner(release)
        label = release.label() if release.synthetic else None
        by = [c.strip() for c in (args.by or _DATA_DEFAULT_BY).split(",") if c.strip()]
        frame = _select(release.frame, by, args)
    elif args.model or args.budget or args.where or args.include_refusal:
        print("--model, --budget, --where and --include-refusal need --data DIR", file=sys.stderr)
        return 2
    else:
        data = load_manifest(args)
        by = [c.strip() for c in (args.by or _MANIFEST_DEFAULT_BY).split(",") if c.strip()]
        frame = data.frame
        budgets = data.budgets()
        if len(budgets) > 1 and "budget" not in by:
            if args.by is None:
                by.insert(by.index("system") + 1 if "system" in by else 0, "budget")
                note(f"several budgets ({', '.join(map(str, budgets))}): slicing by {','.join(by)}")
            else:
                note(f"warning: slices pool {len(budgets)} budgets ({', '.join(map(str, budgets))}); add budget to --by to separate them")
        frame = one_judge(data, args) if "judge" not in by else _only_judge(frame, args.judge)
    frame, cluster = _with_cluster(frame, args, release if args.data else None)
    separate = _separate(frame, by, "model" if args.data else "system", args)
    table = slice_accuracy(frame, by, interval=args.interval, item="question_id", type_col=type_col,
                           n_boot=args.n_boot, seed=args.seed, cluster=cluster, separate=separate,
                           bootstrap_interval=args.bootstrap_interval, mc_se=True)
    if args.interval == "auto":
        used = sorted(set(table.loc[table["level"] != "macro", "interval"]))
        note("interval: " + ", ".join(used) + " (auto: item bootstrap where a question repeats within a row, "
             "e.g. several models or budgets pooled; Wilson otherwise)")
    title = f"Accuracy (%) by {', '.join(by)}" + (f" [{label}]" if label else "")
    _write(table, args, title)
    if args.plot:
        from voxmem_analysis.analysis.explore import slice_title

        budget = args.budget if args.data else None
        ptitle = slice_title(by, budget=budget, models=args.model if args.data else None)
        _plot(table, by, args.plot, ptitle + ("\nSYNTHETIC DATA - not real model output" if label else ""), frame)
    return 0


def _only_judge(frame, judge: str | None):
    """``--by ...,judge`` with ``--judge NAME``: the verdicts of that judge only (noted)."""
    if judge is None:
        return frame
    import polars as pl

    from voxmem_analysis.analysis.verdicts import AnalysisInputError

    judges = sorted(str(j) for j in frame["judge"].drop_nulls().unique().to_list())
    if judge not in judges:
        raise AnalysisInputError(f"--judge {judge!r} is not in the data; judges: {', '.join(judges)}", "judge")
    note(f"--judge {judge}: only its verdicts")
    return frame.filter(pl.col("judge") == judge)


def _separate(frame, by: list[str], system: str, args) -> list[str] | None:
    """The system column, kept out of the pooled rows unless ``--pool`` (noted when it matters)."""
    from voxmem_analysis.analysis.verdicts import pooled_across

    if args.pool or system not in by:
        return None
    type_col = None if args.type_col in ("none", "") else args.type_col
    if pooled_across(frame, by, [system], type_col=type_col):
        note(f"no overall or macro row pooling several {system}s (each {system} is its own analysis); "
             f"--pool adds it")
    return [system]


def _with_cluster(frame, args, release):
    """(frame, cluster column or None) for ``--cluster``: item, family, or a column of the frame."""
    if args.cluster == "family" and release is not None:
        from voxmem_analysis.analysis.clusters import attach_cluster

        pdf = frame.to_pandas() if hasattr(frame, "to_pandas") else frame
        return attach_cluster(pdf, release, "family"), "family"
    return manifest_cluster(frame, args.cluster)


def _select(frame, by: list[str], args):
    """The --data verdicts after --model/--budget/--where and the answerable-only rule; notes on stderr."""
    from voxmem_analysis.analysis.subsets import pooling_notes, select_verdicts
    from voxmem_analysis.analysis.verdicts import AnalysisInputError

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
        raise AnalysisInputError("no verdicts selected (check --model, --budget, --where)")
    return out


def _write(table, args, title: str) -> None:
    if not args.out:
        emit(table, args.format, title)
        return
    import contextlib
    import io

    from voxmem_analysis.writing import atomic_text

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        emit(table, args.format, title)
    atomic_text(args.out, buf.getvalue())   # whole or not at all: an earlier file stays as it was
    note(f"wrote {args.out}")


def _plot(table, by: list[str], path: str, title: str, frame) -> None:
    """The subtype explorer's dot plot of ``table``; the dashed line is every selected verdict pooled."""
    import matplotlib
    import pandas as pd

    matplotlib.use("Agg")
    from voxmem_analysis.analysis.explore import level_orders, pooled_accuracy
    from voxmem_analysis.plots.slices import slice_dot_plot

    t = table.copy()
    orders = level_orders({c: t[c] for c in by})
    for c in by:
        t[c] = pd.Categorical(t[c].astype(object), categories=orders[c], ordered=True)
    ax = slice_dot_plot(t.sort_values(by, kind="stable"), by, overall=pooled_accuracy(frame), title=title)
    from pathlib import Path

    from voxmem_analysis.writing import atomic_write

    fmt = Path(path).suffix.lstrip(".").lower() or "png"
    atomic_write(path, lambda tmp: ax.figure.savefig(tmp, dpi=150, bbox_inches="tight", format=fmt))
    note(f"wrote {path}")
