"""``voxmem-analysis power``: how small a paired difference n items can detect, and items needed.

For a paired comparison (two models, or one model at two budgets) on ``n`` items whose
answers disagree on a share ``discordance`` of them, print the minimum detectable accuracy
difference at the given power (default 80%, two-sided alpha 0.05) and, with ``--target``,
the items needed to detect that difference (:mod:`voxmem_analysis.stats.power`).  With
``--data`` the defaults of ``n`` and ``discordance`` are the release's medians over every
pair of models at ``--budget`` (or every model between ``--budget`` and ``--comparison``
with ``--compare budgets``); ``--n`` / ``--discordance`` override them.
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._shared import add_data_args, emit, load, note


def register(sub) -> None:
    p = sub.add_parser("power", help="minimum detectable difference / items needed for a paired comparison",
                       description=__doc__.split("\n\n")[0])
    add_data_args(p, required=False)
    p.add_argument("--n", type=int, default=None, help="items compared (default: the release's median)")
    p.add_argument("--discordance", type=float, default=None,
                   help="share of items on which the two sides disagree, e.g. 0.2 (default: the release's median)")
    p.add_argument("--target", type=float, default=None, metavar="PP",
                   help="difference to detect, in percentage points: also print the items needed")
    p.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="power (default 0.8)")
    p.add_argument("--compare", choices=("models", "budgets"), default="models",
                   help="with --data: discordance between models at --budget (default) or between budgets per model")
    p.add_argument("--budget", default="8K", help="with --data: the budget (default 8K)")
    p.add_argument("--comparison", default="64K", help="with --data and --compare budgets: the second budget")
    p.add_argument("--format", choices=("csv", "md"), default="csv", help="csv (default) or Markdown")
    p.set_defaults(func=run)


def run(args) -> int:
    from voxmem_analysis.stats import power_summary

    target = None if args.target is None else args.target / 100.0
    n, psi, source = args.n, args.discordance, "given"
    if args.data is not None and (n is None or psi is None):
        from voxmem_analysis.analysis.power import release_power

        release = load(args)
        if release.synthetic:
            note(release.label())
        obs = release_power(release, compare=args.compare, budget=args.budget, comparison=args.comparison)
        n = int(obs["n"].iloc[0]) if n is None else n
        psi = float(obs["discordance"].iloc[0]) if psi is None else psi
        source = (f"release median over {int(obs['comparisons'].iloc[0])} {args.compare} comparison(s) "
                  f"(discordance {obs['discordance_min'].iloc[0]:.3f}-{obs['discordance_max'].iloc[0]:.3f})")
    if n is None or psi is None:
        print("error: power: give --n and --discordance, or --data to measure them on a release", file=sys.stderr)
        return 2
    out = power_summary(n, psi, target=target, alpha=args.alpha, power=args.power)   # a bad value: exit 2
    note(f"n and discordance: {source}")
    for col in ("mdd", "target"):
        if col in out:
            out[f"{col}_pp"] = 100.0 * out.pop(col)
    emit(out, args.format, "Paired comparison: minimum detectable difference (pp) and items needed")
    return 0
