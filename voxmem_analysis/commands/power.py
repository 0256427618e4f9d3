"""``voxmem-analysis power``: the minimum detectable difference of a paired comparison on n items and the items a
difference needs, by the normal approximation of McNemar's test and by the exact test; with ``--data`` n and the
discordance are the release's medians."""
from __future__ import annotations

from voxmem_analysis.analysis.power import release_power
from voxmem_analysis.commands._common import note, open_args, show
from voxmem_analysis.errors import InputError
from voxmem_analysis.stats import power_summary

_COLUMNS = ["n", "discordance", "alpha", "power", "mdd_normal_pp", "power_exact_at_mdd_normal", "mdd_exact_pp"]
_TARGET = ["target_pp", "items_needed_normal", "items_needed_exact", "power_at_target_normal", "power_at_target_exact"]


def run(args) -> int:
    target = None if args.target is None else args.target / 100.0
    n, psi, source = args.n, args.discordance, "given"
    if args.data is not None and (n is None or psi is None):
        src = open_args(args, kinds=("voxmem",))
        obs = release_power(src.data, compare=args.compare, budget=args.budget, comparison=args.comparison)
        n = int(obs["n"].iloc[0]) if n is None else n
        psi = float(obs["discordance"].iloc[0]) if psi is None else psi
        source = (f"release median over {int(obs['comparisons'].iloc[0])} {args.compare} comparison(s) "
                  f"(discordance {obs['discordance_min'].iloc[0]:.3f}-{obs['discordance_max'].iloc[0]:.3f})")
    if n is None or psi is None:
        raise InputError("give --n and --discordance, or --data to measure them on a release", "n")
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
    show(out[_COLUMNS + (_TARGET if target is not None else [])], args,
         "Paired comparison: minimum detectable difference (pp) and items needed, normal approximation and exact "
         "McNemar test")
    return 0
