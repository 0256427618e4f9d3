"""``voxmem-analysis compare``: paired comparison of systems on the items (tasks) both have."""
from __future__ import annotations

import polars as pl

from voxmem_analysis.analysis.amc_runs import amc_compare
from voxmem_analysis.analysis.paired import compare_models
from voxmem_analysis.analysis.verdicts import BootstrapSettings, compare_systems
from voxmem_analysis.commands._common import amc_tasks, note, one_judge, open_args, release_budgets, report, show
from voxmem_analysis.commands._parsers import comma_list
from voxmem_analysis.console import progress
from voxmem_analysis.errors import AnalysisInputError, InputError

_KEYS = ["budget", "model_a", "system_a", "model_b", "system_b", "n_common", "acc_a", "acc_b", "diff", "p_mcnemar",
         "p_holm"]
_AMC_KEYS = ["axis", "system_a", "system_b", "n_tasks", "apr_a", "apr_b", "apr_diff", "ars_diff", "p_mcnemar", "p_holm"]


def run(args) -> int:
    models = comma_list(args.models)
    if args.models is not None and len(models) < 2:
        raise InputError("--models needs two or more model names, comma-separated (--models A,B)", "models")
    src = open_args(args, selects=True)
    if src.kind == "voxmem":
        table, title = _release(src, models, args)
    elif src.kind == "longmemeval":
        frame, cluster = one_judge(src.data, args, args.cluster)
        boot = BootstrapSettings(n_boot=args.n_boot, seed=args.seed, interval=args.interval, mc_se=True,
                                 progress=progress("bootstrap"))
        table = compare_systems(frame, system="system", item="question_id", groups="budget", cluster=cluster,
                                family=args.p_adjust_family, settings=boot)
        title = "Pairwise comparison of systems"
    else:
        table, title = _amc(src, models, args)
    a, b = ("system_a", "system_b") if "system_a" in table else ("model_a", "model_b")
    pairs = list(dict.fromkeys(zip(table[a], table[b])))
    diffs = [c for c in ("diff", "apr_diff", "ars_diff") if c in table]
    one = len(pairs) == 1
    title += (f" ({', '.join(diffs)} = {f'{pairs[0][0]} minus {pairs[0][1]}' if one else f'{a} minus {b} in each row'}"
              + (", pp)" if src.is_amc else f", pp; exact McNemar; Holm over {_family(args, 'budget')})"))
    sub = f"{pairs[0][0]} - {pairs[0][1]}" if one else "a - b"
    show(table, args, title, src, keys=_AMC_KEYS if src.is_amc else _KEYS, rename={c: f"{c} ({sub})" for c in diffs})
    return 0


def _release(src, models: list[str], args):
    """Every pair of the given VoxMem models (default: every model run at the budget) at one budget."""
    release = src.data
    pool = models or release.model_order()
    if len(pool) < 2:
        raise InputError(f"the release has {len(pool)} model ({', '.join(pool)}): a comparison needs two or more",
                         "models")
    budget = args.budget
    if not budget:
        shared = [b for b in release_budgets(release) if all(b in release_budgets(release, [m]) for m in pool)]
        owner = f"the {'given' if models else 'release'}'s models were all run at"
        if len(shared) != 1:
            raise InputError(f"{owner} {len(shared)} budgets ({', '.join(shared)}): pass --budget one of them"
                             if shared else f"{owner} no budget: nothing to choose for --budget", "budget")
        budget = shared[0]
        note(f"--budget {budget} (the only budget)")
    if not models:
        models = [m for m in release.model_order() if budget.upper() in release_budgets(release, [m])]
        if len(models) < 2:
            raise InputError(f"the release has {len(models)} model run at {budget}: a comparison needs two or more "
                             f"(pass --budget with a budget several models were run at)", "models")
        note(f"--models {','.join(models)} (every model run at {budget})")
    at = release.frame.filter(pl.col("model").is_in(models) & (pl.col("budget").cast(pl.Utf8) == budget.upper()))
    report(src, args, selected=at)
    table = compare_models(release, models, budget, answerable_only=args.answerable_only, n_boot=args.n_boot,
                           seed=args.seed, cluster=args.cluster, interval=args.interval, mc_se=True,
                           progress=progress("bootstrap"), family=args.p_adjust_family)
    what = "answerable items" if args.answerable_only else "items"
    return table, f"Paired comparison at {table['budget'].iloc[0]} on the {what} both models were scored on"


def _amc(src, systems: list[str], args):
    """Every pair of Audio MultiChallenge systems (or of ``--models``), overall and per axis."""
    frame = amc_tasks(src, args)
    if systems:
        known = set(frame["system"].to_list()) | set(frame["model"].to_list())
        unknown = [s for s in systems if s not in known]
        if unknown:
            raise AnalysisInputError(f"--models: {', '.join(map(repr, unknown))} not among the systems "
                                     f"({', '.join(dict.fromkeys(frame['system'].to_list()))})", "models")
        labels = dict(zip(frame["model"].to_list(), frame["system"].to_list()))
        systems = [labels.get(s, s) for s in systems]
    table = amc_compare(frame, systems=systems or None, n_boot=args.n_boot, seed=args.seed,
                        family=args.p_adjust_family, progress=progress("bootstrap"))
    return table, ("Paired comparison on the tasks both systems have: exact McNemar on task pass, paired task "
                   "bootstrap within axes, Holm over " + _family(args, "axis") + " (holm_family)")


def _family(args, unit: str) -> str:
    """The rows Holm's adjustment covers, in words (``--p-adjust-family``)."""
    return "every row" if args.p_adjust_family == "all" else f"the pairs of each {unit}"
