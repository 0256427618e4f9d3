"""Arguments and helpers shared by subcommands."""
from __future__ import annotations

import sys

from voxmem_analysis.errors import VoxMemDataError


def add_data_args(p, required: bool = True) -> None:
    p.add_argument("--data", required=required, metavar="DIR", help="release directory (see data/README.md)")
    p.add_argument("--convention", choices=("paper", "harness"), default="paper",
                   help="paper: ungraded predictions count as incorrect (default); harness: they leave the denominator")
    p.add_argument("--rejection-pattern", metavar="REGEX", default=None,
                   help="regular expression on the `error` field that marks a provider rejection")
    p.add_argument("--lenient", action="store_true", help="leave out bad lines (reported) instead of failing")


def load(args, strict: bool | None = None):
    from voxmem_analysis.io.release import load_release
    from voxmem_analysis.io.scoring import DEFAULT_REJECTION_PATTERN, ScoringRules

    rules = ScoringRules(rejection_pattern=args.rejection_pattern or DEFAULT_REJECTION_PATTERN,
                         convention=args.convention)
    release = load_release(args.data, strict=(not args.lenient) if strict is None else strict, rules=rules)
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
