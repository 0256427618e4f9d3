"""``voxmem-analysis scaling --manifest FILE --questions FILE [--baseline BUDGET]``: change across budgets.

Per system and question type (and pooled): accuracy at each budget, change (pp) and
retention relative to the baseline budget on the questions present at both, with paired
bootstrap intervals (:func:`voxmem_analysis.analysis.verdicts.scaling_table`), then the Spearman
correlations of Appendix D.5 over system x type cells
(:func:`voxmem_analysis.analysis.verdicts.scaling_correlations`).  With ``--part both`` (default)
the two tables are printed one after the other, separated by an empty line.
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._shared import (add_cluster_arg, add_judge_arg, add_manifest_args, add_output_args, emit,
                                              load_manifest, manifest_cluster, note, one_judge)


def register(sub) -> None:
    p = sub.add_parser("scaling", help="accuracy, change and retention across budgets (LongMemEval format)",
                       description=__doc__.split("\n\n")[0])
    add_manifest_args(p)
    p.add_argument("--baseline", default=None, metavar="BUDGET",
                   help="the baseline budget, as written in the manifest (default: the shortest, when every budget "
                        "is a number of tokens such as 32k or 115000)")
    p.add_argument("--part", choices=("both", "table", "correlations"), default="both",
                   help="print the scaling table, the correlations, or both (default)")
    add_cluster_arg(p, adds="the columns cluster and change_design_effect")
    add_judge_arg(p)
    add_output_args(p)
    p.set_defaults(func=run)


def _tokens(budget) -> float | None:
    """``"32k"`` -> 32000, ``"115000"`` -> 115000, ``"1M"`` -> 1e6; None when not a number of tokens."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", str(budget))
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()]


def shortest_budget(budgets) -> str:
    """The default ``--baseline``: the shortest of ``budgets`` (noted on standard error); an
    :class:`~voxmem_analysis.errors.InputError` naming ``--baseline`` when they are not all numbers of tokens."""
    from voxmem_analysis.errors import InputError

    sizes = {b: _tokens(b) for b in budgets}
    if not budgets or any(v is None for v in sizes.values()):
        raise InputError(f"the manifest's budgets ({', '.join(map(str, budgets))}) are not all numbers of tokens: "
                         f"pass --baseline one of them", "baseline")
    chosen = min(budgets, key=lambda b: sizes[b])
    note(f"--baseline {chosen} (the shortest budget)")
    return chosen


def run(args) -> int:
    from voxmem_analysis.analysis.verdicts import BootstrapSettings, scaling_correlations, scaling_table

    data = load_manifest(args)
    if len([b for b in data.budgets() if b is not None]) < 2:
        print(f"error: scaling needs at least two budgets in the manifest's budget column; found {data.budgets()}",
              file=sys.stderr)
        return 1
    baseline = args.baseline or shortest_budget([b for b in data.budgets() if b is not None])
    frame, cluster = manifest_cluster(one_judge(data, args), args.cluster)
    table = scaling_table(frame, baseline=baseline, cluster=cluster,
                          settings=BootstrapSettings(n_boot=args.n_boot, seed=args.seed))
    if args.part in ("both", "table"):
        emit(table, args.format, f"Accuracy (%) by budget; change (pp) and retention vs {table['baseline_budget'].iloc[0]}")
    if args.part == "both":
        sys.stdout.write("\n")
    if args.part in ("both", "correlations"):
        emit(scaling_correlations(table), args.format,
             "Spearman correlations over system x question-type cells (Appendix D.5)")
    return 0
