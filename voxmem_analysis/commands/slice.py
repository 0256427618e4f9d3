"""``voxmem-analysis slice``: accuracy per slice of a verdict frame, with overall and macro rows.

Two sources, one function (:func:`voxmem_analysis.analysis.verdicts.slice_accuracy`):

* ``--data DIR``: a VoxMem release; slices the tidy verdict frame by any of its columns
  (``model, budget, evidence_type, operation, subtype, answer_type, session_count`` ...);
  default ``--by model,budget,evidence_type``.  Every row's own scored predictions (no
  pairing rule across budgets).
* ``--manifest FILE --questions FILE``: LongMemEval-format verdicts
  (:mod:`voxmem_analysis.io.longmemeval`); default ``--by system,question_type`` (``budget`` is
  added when the manifest has several budgets).

This module also holds the helpers the other LongMemEval commands (``compare``,
``scaling``, ``judges``) share.
"""
from __future__ import annotations

import sys
from collections import Counter

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.commands._shared import add_data_args, fail, load, synthetic_banner

_DATA_DEFAULT_BY = "model,budget,evidence_type"
_MANIFEST_DEFAULT_BY = "system,question_type"


# ----------------------------------------------------------------------------- shared helpers
def add_manifest_args(p, *, required: bool = True, lenient: bool = True) -> None:
    p.add_argument("--manifest", required=required, metavar="FILE",
                   help="CSV path,system[,budget][,judge] listing evaluate_qa.py output files (paths relative to it)")
    p.add_argument("--questions", required=required, metavar="FILE",
                   help="question file: the LongMemEval question JSON, or CSV/JSONL/JSON with question_id,question_type")
    if lenient:
        p.add_argument("--lenient", action="store_true", help="leave out bad lines (reported) instead of failing")
        p.add_argument("--convention", choices=("paper", "harness"), default="paper",
                       help="paper: ungraded verdicts count as incorrect (default); harness: they leave the denominator")


def add_output_args(p, *, bootstrap: bool = True) -> None:
    p.add_argument("--format", choices=("csv", "md"), default="csv", help="csv (default) or Markdown")
    if bootstrap:
        p.add_argument("--seed", type=int, default=0, help="seed of bootstrap intervals (default 0)")
        p.add_argument("--n-boot", type=int, default=10_000, help="bootstrap resamples (default 10000)")


def add_judge_arg(p) -> None:
    p.add_argument("--judge", default=None, metavar="NAME",
                   help="where a system and budget have verdicts from several judges, use this one "
                        "(default: the first listed in the manifest; the choice is printed)")


def note(msg: str) -> None:
    print(f"# {msg}", file=sys.stderr)


def load_manifest(args):
    """Load ``--manifest``/``--questions``; print warnings (and, lenient, errors) to stderr."""
    from voxmem_analysis.io.longmemeval import load_longmemeval

    data = load_longmemeval(args.manifest, args.questions, strict=not getattr(args, "lenient", False),
                            convention=getattr(args, "convention", "paper"))
    if data.synthetic:
        note(data.label())
    shown = data.errors() + data.warnings()
    for p in shown:
        print(str(p), file=sys.stderr)
    if shown:
        counts = Counter(p.code for p in shown)
        note(f"{len(data.errors())} error(s), {len(data.warnings())} warning(s): "
             + ", ".join(f"{c}={n}" for c, n in sorted(counts.items())))
    return data


def one_judge(data, args):
    """The frame with one judge per (system, budget); notes on stderr."""
    from voxmem_analysis.io.longmemeval import select_judge

    frame, notes = select_judge(data.frame, getattr(args, "judge", None))
    for n in notes:
        note(n)
    return frame


def emit(df: pd.DataFrame, fmt: str, title: str | None = None) -> None:
    """Print a tidy table: CSV (``%.6g``, empty for missing) or a Markdown table."""
    if fmt == "md":
        if title:
            sys.stdout.write(f"{title}\n\n")
        clean = df.astype(object).where(df.notna(), None)  # pd.NA -> empty cell
        sys.stdout.write(clean.to_markdown(index=False, floatfmt=".4g", missingval="") + "\n")
    else:
        df.to_csv(sys.stdout, index=False, float_format="%.6g", lineterminator="\n")


def run_guarded(func, args) -> int:
    """Run ``func(args)``; bad arguments exit 2, bad data exit 1, each with its message."""
    from voxmem_analysis.analysis.verdicts import AnalysisInputError

    try:
        return func(args)
    except AnalysisInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except VoxMemDataError as exc:
        return fail(exc)


# ----------------------------------------------------------------------------- slice
def register(sub) -> None:
    p = sub.add_parser("slice", help="accuracy per slice (any columns), with the overall and macro-average rows",
                       description=__doc__.split("\n\n")[0])
    add_data_args(p, required=False)
    add_manifest_args(p, required=False, lenient=False)
    p.add_argument("--by", default=None, metavar="COL[,COL...]",
                   help=f"columns to slice by (default: {_DATA_DEFAULT_BY} with --data, {_MANIFEST_DEFAULT_BY} with --manifest)")
    p.add_argument("--ci", choices=("auto", "wilson", "bootstrap"), default="auto",
                   help="interval: Wilson score, or percentile bootstrap over questions; auto (default) uses the "
                        "bootstrap when a slice holds several rows of one question (several models or budgets "
                        "pooled), since their verdicts are not independent, and Wilson otherwise")
    p.add_argument("--type-col", default="auto", metavar="COL",
                   help="column pooled into the overall row and averaged into the macro row "
                        "(default: auto = last of question_type/evidence_type/operation/subtype in --by; 'none' to disable)")
    add_judge_arg(p)
    add_output_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if bool(args.data) == bool(args.manifest):
        print("give either --data DIR or --manifest FILE --questions FILE", file=sys.stderr)
        return 2
    if args.manifest and not args.questions:
        print("--manifest needs --questions FILE (the question types come from it)", file=sys.stderr)
        return 2
    return run_guarded(_run, args)


def _run(args) -> int:
    from voxmem_analysis.analysis.verdicts import slice_accuracy

    type_col = None if args.type_col in ("none", "") else args.type_col
    if args.data:
        release = load(args)
        synthetic_banner(release)
        frame = release.frame
        by = [c.strip() for c in (args.by or _DATA_DEFAULT_BY).split(",") if c.strip()]
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
        if "judge" not in by:
            frame = one_judge(data, args)
    table = slice_accuracy(frame, by, ci=args.ci, item="question_id", type_col=type_col,
                           n_boot=args.n_boot, seed=args.seed)
    if args.ci == "auto":
        used = sorted(set(table.loc[table["level"] != "macro", "method"]))
        note("interval: " + ", ".join(used) + " (auto: item bootstrap where a question repeats within a row, "
             "e.g. several models or budgets pooled; Wilson otherwise)")
    emit(table, args.format, f"Accuracy (%) by {', '.join(by)}")
    return 0
