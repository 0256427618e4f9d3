"""Arguments and helpers shared by subcommands.

Release commands (``--data DIR``): :func:`add_data_args`, :func:`load`, :func:`fail`,
:func:`synthetic_banner`.  LongMemEval-format commands (``--manifest FILE --questions FILE``:
``slice``, ``compare``, ``scaling``, ``judges``): :func:`add_manifest_args`, :func:`add_output_args`,
:func:`add_judge_arg`, :func:`load_manifest`, :func:`one_judge`, :func:`emit`, :func:`run_guarded`.
"""
from __future__ import annotations

import sys
from collections import Counter
from typing import TYPE_CHECKING

from voxmem_analysis.commands._guards import n_boot_arg, regex_arg
from voxmem_analysis.errors import AnalysisInputError, VoxMemDataError

if TYPE_CHECKING:
    import pandas as pd


def add_data_args(p, required: bool = True) -> None:
    p.add_argument("--data", required=required, metavar="DIR", help="release directory (see data/README.md)")
    p.add_argument("--convention", choices=("paper", "harness"), default="paper",
                   help="paper: ungraded predictions count as incorrect (default); harness: they leave the denominator")
    p.add_argument("--rejection-pattern", metavar="REGEX", default=None, type=regex_arg,
                   help="regular expression on the `error` field that marks a provider rejection")
    p.add_argument("--lenient", action="store_true", help="leave out bad lines (reported) instead of failing")
    p.add_argument("--no-cache", action="store_true",
                   help="parse the release afresh instead of reusing the parsed-release cache "
                        "(see `voxmem-analysis cache --help`)")


def load(args, strict: bool | None = None):
    from voxmem_analysis.io.release import load_release
    from voxmem_analysis.io.scoring import DEFAULT_REJECTION_PATTERN, ScoringRules

    rules = ScoringRules(rejection_pattern=args.rejection_pattern or DEFAULT_REJECTION_PATTERN,
                         convention=args.convention)
    release = load_release(args.data, strict=(not args.lenient) if strict is None else strict, rules=rules,
                           cache=not getattr(args, "no_cache", False))
    if args.lenient and strict is None:
        # lenient mode leaves bad lines out: say so, every time (nothing disappears silently)
        errs = release.errors()
        if errs or release.stats.get("rejected_lines"):
            print(f"# --lenient: {release.stats.get('rejected_lines', 0)} line(s) left out, "
                  f"{sum(p.count for p in errs)} error(s); `voxmem-analysis validate --data {args.data}` lists them",
                  file=sys.stderr)
            for p in errs[:10]:
                print(f"#   {p}", file=sys.stderr)
    return release


def fail(exc: VoxMemDataError) -> int:
    print(str(exc), file=sys.stderr)
    return 1


def synthetic_banner(release) -> None:
    if release.synthetic:
        print(f"# {release.label()}", file=sys.stderr)


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
        p.add_argument("--n-boot", type=n_boot_arg, default=10_000, help="bootstrap resamples (default 10000)")


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
    if shown:  # totals count findings: a summary line ("... and 40 more") carries its count, not 1
        counts = Counter()
        for p in shown:
            counts[p.code] += p.count
        note(f"{sum(p.count for p in data.errors())} error(s), {sum(p.count for p in data.warnings())} warning(s): "
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
    try:
        return func(args)
    except AnalysisInputError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except VoxMemDataError as exc:
        return fail(exc)
