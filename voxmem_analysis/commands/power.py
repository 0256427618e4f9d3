"""``voxmem-analysis power``: how small a paired difference n items can detect, and items needed.

For a paired comparison (two models, or one model at two budgets) on ``n`` items whose
answers disagree on a share ``discordance`` of them, print the minimum detectable accuracy
difference at the given power (default 80%, two-sided alpha 0.05) and, with ``--target``,
the items needed to detect that difference and the power at it.  Every number names its method
(:mod:`voxmem_analysis.stats.power`): ``*_normal`` from the normal approximation of McNemar's test
(Connor 1987), ``*_exact`` from the exact conditional (binomial) McNemar test that ``compare``
runs.  The exact test is conservative: ``power_exact_at_mdd_normal`` is its power at the normal
approximation's MDD (e.g. 0.78, not 0.80), ``mdd_exact_pp`` the difference it detects with the
requested power.  With ``--data`` the defaults of ``n`` and ``discordance`` are the release's
medians over every pair of models at ``--budget`` (or every model between ``--budget`` and
``--comparison`` with ``--compare budgets``); ``--n`` / ``--discordance`` override them.
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._shared import add_data_args, emit, load, note

_DESCRIPTION = """How small a paired difference n items can detect, and the items a difference needs.

Every number names its method: *_normal from the normal approximation of McNemar's test (Connor
1987), *_exact from the exact conditional (binomial) McNemar test that `compare` runs.  The exact
test is conservative: at the normal approximation's minimum detectable difference its power is below
the requested one (e.g. 0.78 instead of 0.80), and it needs a larger difference (mdd_exact_pp).
With --data, n and the discordance are the release's medians (--n / --discordance override them)."""

_EPILOG = """columns: mdd_normal_pp  minimum detectable difference, normal approximation (Connor 1987), points
         power_exact_at_mdd_normal  power of the exact McNemar test at that difference
         mdd_exact_pp  minimum detectable difference of the exact McNemar test, points
         with --target: target_pp, items_needed_normal, items_needed_exact,
         power_at_target_normal, power_at_target_exact"""


def register(sub) -> None:
    import argparse

    p = sub.add_parser("power", help="minimum detectable difference / items needed for a paired comparison "
                                     "(normal approximation and exact McNemar test)",
                       description=_DESCRIPTION,
                       epilog=_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_args(p, required=False)
    p.add_argument("--n", type=int, default=None, help="items compared (default: the release's median)")
    p.add_argument("--discordance", type=float, default=None,
                   help="share of items on which the two sides disagree, e.g. 0.2 (default: the release's median)")
    p.add_argument("--target", type=float, default=None, metavar="PP",
                   help="difference to detect, in percentage points: also print the items needed and the power "
                        "at it, by both methods")
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
    note("*_normal: normal approximation of McNemar's test (Connor 1987); *_exact: the exact conditional "
         "(binomial) McNemar test, as `compare` runs it")
    row = out.iloc[0]
    for method in ("normal", "exact"):
        if row[f"mdd_{method}"] != row[f"mdd_{method}"]:     # NaN
            note(f"mdd_{method}_pp is empty: by the {method} method no difference up to the discordance "
                 f"({100 * psi:.3g} pp) reaches power {args.power:g} with {n} items")
    if row["power_exact_at_mdd_normal"] < args.power:
        note(f"at the normal approximation's MDD ({100 * row['mdd_normal']:.2f} pp) the exact test's power is "
             f"{row['power_exact_at_mdd_normal']:.2f}, not {args.power:g}; it detects {100 * row['mdd_exact']:.2f} pp "
             f"with power {args.power:g}")
    for col in ("mdd_normal", "mdd_exact", "target"):
        if col in out:
            out[f"{col}_pp"] = 100.0 * out.pop(col)
    cols = ["n", "discordance", "alpha", "power", "mdd_normal_pp", "power_exact_at_mdd_normal", "mdd_exact_pp"]
    if target is not None:
        cols += ["target_pp", "items_needed_normal", "items_needed_exact", "power_at_target_normal",
                 "power_at_target_exact"]
    emit(out[cols], args.format, "Paired comparison: minimum detectable difference (pp) and items needed, "
                                 "normal approximation and exact McNemar test")
    return 0
