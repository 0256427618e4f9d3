"""``voxmem-analysis scaling``: LongMemEval accuracy, change and retention across budgets, and the Spearman
correlations of Appendix D.5."""
from __future__ import annotations

import re
import sys

from voxmem_analysis.analysis.verdicts import BootstrapSettings, scaling_correlations, scaling_table
from voxmem_analysis.commands._common import note, one_judge, open_args, show
from voxmem_analysis.console import progress
from voxmem_analysis.errors import InputError, MissingDataError


def _tokens(budget) -> float | None:
    """``"32k"`` -> 32000, ``"115000"`` -> 115000, ``"1M"`` -> 1e6; None when not a number of tokens."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*", str(budget))
    if not m:
        return None
    return float(m.group(1)) * {"": 1, "k": 1e3, "m": 1e6}[m.group(2).lower()]


def shortest_budget(budgets) -> str:
    """The default ``--baseline``: the shortest of ``budgets`` (noted on standard error); an
    :class:`~voxmem_analysis.errors.InputError` naming ``--baseline`` when they are not all numbers of tokens."""
    sizes = {b: _tokens(b) for b in budgets}
    if not budgets or any(v is None for v in sizes.values()):
        raise InputError(f"the manifest's budgets ({', '.join(map(str, budgets))}) are not all numbers of tokens: "
                         f"pass --baseline one of them", "baseline")
    chosen = min(budgets, key=lambda b: sizes[b])
    note(f"--baseline {chosen} (the shortest budget)")
    return chosen


def run(args) -> int:
    src = open_args(args, kinds=("longmemeval",))
    data = src.data
    budgets = [b for b in data.budgets() if b is not None]
    if len(budgets) < 2:
        raise MissingDataError(f"scaling needs at least two budgets in the manifest's budget column; found "
                               f"{data.budgets()}", code="budget_not_run", field="budget")
    baseline = args.baseline or shortest_budget(budgets)
    frame, cluster = one_judge(data, args, args.cluster)
    boot = BootstrapSettings(n_boot=args.n_boot, seed=args.seed, progress=progress("bootstrap"))
    table = scaling_table(frame, baseline=baseline, cluster=cluster, settings=boot)
    if args.part in ("both", "table"):
        show(table, args, f"Accuracy (%) by budget; change (pp) and retention vs {table['baseline_budget'].iloc[0]}",
             src)
    if args.part == "both":
        sys.stdout.write("\n")
    if args.part in ("both", "correlations"):
        show(scaling_correlations(table), args, "Spearman correlations over system x question-type cells "
             "(Appendix D.5)", src)
    return 0
