"""Arguments and helpers shared by subcommands.

Release commands (``--data DIR``): :func:`add_data_args`, :func:`load`, :func:`synthetic_banner`.
LongMemEval-format commands (``--manifest FILE --questions FILE``: ``slice``, ``compare``, ``scaling``,
``judges``): :func:`add_manifest_args`, :func:`add_output_args`, :func:`add_judge_arg`,
:func:`load_manifest`, :func:`one_judge`, :func:`emit`.

Errors are not caught here: :func:`voxmem_analysis.cli.main` turns each into its message and exit code.
"""
from __future__ import annotations

import sys
from collections import Counter
from typing import TYPE_CHECKING

from voxmem_analysis.commands._guards import n_boot_arg, regex_arg
from voxmem_analysis.errors import VoxMemDataError, lost_summary

if TYPE_CHECKING:
    import pandas as pd


def add_data_args(p, required: bool = True) -> None:
    p.add_argument("--data", required=required, metavar="DIR", help="release directory (see data/README.md)")
    p.add_argument("--convention", choices=("paper", "harness"), default="paper",
                   help="paper (default, App. C.4): failed and ungraded predictions count as incorrect; harness: the public scorer's rule, only predictions with a verdict count")
    p.add_argument("--rejection-pattern", metavar="REGEX", default=None, type=regex_arg,
                   help="regular expression on the `error` field that marks a provider rejection")
    p.add_argument("--lenient", action="store_true", help="leave out bad lines (reported) instead of failing")
    p.add_argument("--no-cache", action="store_true",
                   help="parse the release afresh instead of reusing the parsed-release cache "
                        "(see `voxmem-analysis cache --help`)")


def load(args, strict: bool | None = None):
    """The release of ``--data``, read strictly unless ``--lenient``; what was found is printed on
    standard error (:func:`report_problems`).  ``strict`` given: the caller (``validate``) prints."""
    from voxmem_analysis.io import load_release
    from voxmem_analysis.io.scoring import DEFAULT_REJECTION_PATTERN, ScoringRules

    _voxmem_only(args.data)
    rules = ScoringRules(rejection_pattern=args.rejection_pattern or DEFAULT_REJECTION_PATTERN,
                         convention=args.convention)
    release = load_release(args.data, strict=(not args.lenient) if strict is None else strict, rules=rules,
                           cache=not getattr(args, "no_cache", False))
    if strict is None:
        report_problems(release.problems, source=f"release {args.data!r}", lenient=bool(args.lenient),
                        left_out=release.stats.get("rejected_lines", 0),
                        hint=f"`voxmem-analysis validate --data {args.data}` lists them all")
    return release


def _voxmem_only(path) -> None:
    """Refuse a folder whose ``release.json`` names another benchmark than VoxMem (said as such, never read
    as a VoxMem release without predictions)."""
    from voxmem_analysis.errors import Problem
    from voxmem_analysis.io.meta import benchmark_problems, release_benchmark

    kind, written = release_benchmark(path)
    if kind == "unknown":
        raise VoxMemDataError(benchmark_problems(path), f"release {str(path)!r} is not one this workbook reads")
    if kind == "amc":
        raise VoxMemDataError([Problem("wrong_benchmark", "error", f"benchmark {written!r}: an Audio MultiChallenge "
                                       "release; this command reads VoxMem releases (Audio MultiChallenge: table amc_*, "
                                       "slice, compare, validate, export-frame, reproduce)", "release.json", None,
                                       "benchmark")])


#: Findings printed one by one before the rest are summarised by code.
SHOWN_PROBLEMS = 20


def report_problems(problems, *, source: str, lenient: bool, left_out: int | None = None, hint: str | None = None,
                    limit: int | None = SHOWN_PROBLEMS, stream=None) -> None:
    """Print what loading found on standard error: the one rule of every command that analyses data.

    Whatever would leave data out of an analysis (or, with ``--lenient``, was left out) is said
    with counts and names: a ``#`` line with the totals by code, then the findings themselves
    (errors first, ``limit`` at most; None: all), then where to see the rest.  A summary finding ("... and 40
    more like the above") counts as the findings it stands for.  Nothing is printed when nothing
    was found.  Standard output is left to the tables, so ``pandas.read_csv`` of it works.
    """
    stream = stream or sys.stderr
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity != "error"]
    if not errors and not warnings:
        return
    counts = Counter()
    for p in errors + warnings:
        counts[p.code] += p.count
    head = (f"# {sum(p.count for p in errors)} error(s), {sum(p.count for p in warnings)} warning(s) in {source} ("
            + ", ".join(f"{c}={n}" for c, n in sorted(counts.items())) + ")")
    if lenient and errors:
        head += "; " + lost_summary(left_out, errors)
    print(head, file=stream)
    shown = (errors + warnings)[:limit] if limit is not None else errors + warnings
    for p in shown:
        print(f"#   {p}", file=stream)
    rest = len(errors) + len(warnings) - len(shown)
    if rest > 0:
        print(f"#   ... {rest} more finding(s)" + (f": {hint}" if hint else ""), file=stream)


def report_release(path):
    """Print the findings of the release at ``path`` on standard error, for commands that hand the
    release to other code which reads it leniently (``reproduce``): the same lines as :func:`load`.
    Returns the release read (None for an AMC release or none at all)."""
    from voxmem_analysis.io import is_amc_release
    from voxmem_analysis.io import load_release

    try:
        if is_amc_release(path):
            return None
        release = load_release(path, strict=False, cache=True)
    except VoxMemDataError as exc:  # no release at all: the command says so itself
        report_problems(exc.problems, source=f"release {str(path)!r}", lenient=True)
        return None
    report_problems(release.problems, source=f"release {str(path)!r}", lenient=True,
                    left_out=release.stats.get("rejected_lines", 0),
                    hint=f"`voxmem-analysis validate --data {path}` lists them all")
    return release


def only_choice(given: str | None, choices, option: str, what: str, *, owner: str = "the release has") -> str:
    """``given``, else the only one of ``choices`` (noted on standard error); with none or several, an
    :class:`~voxmem_analysis.errors.InputError` naming ``option`` and listing them (exit 2):
    ``"{owner} 2 {what}s (8K, 32K): pass --budget one of them"``."""
    from voxmem_analysis.errors import InputError

    choices = list(choices)
    if given:
        return given
    if len(choices) == 1:
        note(f"{option} {choices[0]} (the only {what})")
        return choices[0]
    if not choices:
        raise InputError(f"{owner} no {what}: nothing to choose for {option}", option.lstrip("-"))
    raise InputError(f"{owner} {len(choices)} {what}s ({', '.join(map(str, choices))}): pass {option} "
                     f"one of them", option.lstrip("-"))


def release_budgets(release, models=None) -> list[str]:
    """Budgets (8K ... 64K order) at which any of ``models`` (default: all) has a prediction."""
    import polars as pl

    from voxmem_analysis import taxonomy as tx

    fr = release.frame if not models else release.frame.filter(pl.col("model").is_in(list(models)))
    present = set(fr["budget"].cast(pl.Utf8).unique().to_list())
    return [b for b in tx.BUDGETS if b in present]


def synthetic_banner(release) -> None:
    if release.synthetic:
        print(f"# {release.label()}", file=sys.stderr)


def add_manifest_args(p, *, required: bool = True, lenient: bool = True) -> None:
    p.add_argument("--manifest", required=required, metavar="FILE",
                   help="CSV path,system[,budget][,judge] listing evaluate_qa.py output files (paths relative to it)")
    p.add_argument("--questions", required=required, metavar="FILE",
                   help="question file: the LongMemEval question JSON, or CSV/JSONL/JSON with question_id,question_type")
    p.add_argument("--type-key", default=None, metavar="FIELD",
                   help="field of the question file holding the question type (default: question_type, else type)")
    if lenient:
        p.add_argument("--lenient", action="store_true", help="leave out bad lines (reported) instead of failing")
        p.add_argument("--convention", choices=("paper", "harness"), default="paper",
                       help="paper: ungraded verdicts count as incorrect (default); harness: they leave the denominator")


def add_output_args(p, *, bootstrap: bool = True) -> None:
    p.add_argument("--format", choices=("csv", "md"), default="csv", help="csv (default) or Markdown")
    if bootstrap:
        p.add_argument("--seed", type=int, default=0, help="seed of bootstrap intervals (default 0)")
        p.add_argument("--n-boot", type=n_boot_arg, default=10_000, help="bootstrap resamples (default 10000)")


def add_cluster_arg(p, *, adds: str) -> None:
    """``--cluster UNIT``: the bootstrap's resampling unit (item, family, or a column with --manifest)."""
    p.add_argument("--cluster", default="item", metavar="UNIT",
                   help="bootstrap resampling unit: item (default) or family (VoxMem: a refusal question with its "
                        "source; LongMemEval: X_abs with X); with --manifest also any column of the verdict frame. "
                        f"Adds {adds}")


def add_judge_arg(p) -> None:
    p.add_argument("--judge", default=None, metavar="NAME",
                   help="where a system and budget have verdicts from several judges, use this one "
                        "(default: the first listed in the manifest; the choice is printed)")


def note(msg: str) -> None:
    print(f"# {msg}", file=sys.stderr)


def load_manifest(args):
    """Load ``--manifest``/``--questions``; print warnings (and, lenient, errors) to stderr."""
    from voxmem_analysis.io import load_longmemeval

    data = load_longmemeval(args.manifest, args.questions, strict=not getattr(args, "lenient", False),
                            convention=getattr(args, "convention", "paper"), type_key=getattr(args, "type_key", None))
    if data.synthetic:
        note(data.label())
    # every finding (there is no `validate` for manifests); a code repeated over 50 times in one file is summarised
    report_problems(data.problems, source=f"manifest {args.manifest!r}", lenient=bool(getattr(args, "lenient", False)),
                    left_out=data.stats.get("rejected_lines"), limit=None)
    return data


def manifest_cluster(frame, cluster: str):
    """``(frame, cluster column or None)`` of ``--cluster`` on LongMemEval verdicts: ``item`` (None),
    ``family`` (an abstention question ``X_abs`` joins ``X``: the added column ``family``) or a column."""
    if cluster == "item":
        return frame, None
    if cluster == "family":
        from voxmem_analysis.analysis.clusters import with_abstention_families

        return with_abstention_families(frame), "family"
    return frame, cluster


def one_judge(data, args):
    """The frame with one judge per (system, budget); notes on stderr."""
    from voxmem_analysis.io import select_judge

    frame, notes = select_judge(data.frame, getattr(args, "judge", None), data.dropped)
    for n in notes:
        note(n)
    return frame


def describe_dropped(d: dict) -> str:
    """One manifest row whose verdicts a ``--lenient`` load left out (:attr:`LongMemEvalData.dropped`),
    in the words of :func:`one_judge`'s notes: system, budget, judge, manifest line and reason."""
    return (f"the verdicts of system {d['system']!r} at budget {d['budget']}"
            + (f" by judge {d['judge']!r}" if d.get("judge") is not None else "")
            + f" (manifest line {d['manifest_line']}) were left out: {d['reason']}")


def emit(df: pd.DataFrame, fmt: str, title: str | None = None) -> None:
    """Print a tidy table: CSV (``%.6g``, empty for missing) or a Markdown table."""
    if fmt == "md":
        if title:
            sys.stdout.write(f"{title}\n\n")
        clean = df.astype(object).where(df.notna(), None)  # pd.NA -> empty cell
        sys.stdout.write(clean.to_markdown(index=False, floatfmt=".4g", missingval="") + "\n")
    else:
        df.to_csv(sys.stdout, index=False, float_format="%.6g", lineterminator="\n")
