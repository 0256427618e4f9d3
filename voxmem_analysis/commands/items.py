"""``voxmem-analysis items``: one VoxMem model's items at one budget, or judged Audio MultiChallenge tasks with
each system's response, rubric verdicts and the judge's explanations."""
from __future__ import annotations

from voxmem_analysis.analysis.items import amc_task_items, item_table
from voxmem_analysis.commands._common import noted, only_choice, open_args, release_budgets, report, show
from voxmem_analysis.commands._parsers import comma_list

_KEYS = ["item_id", "subtype", "gold", "response", "verdict", "correct", "status"]
_AMC_KEYS = ["task_id", "axis", "system", "task_passed", "rubric_index", "rubric_text", "criteria_met", "explanation"]


def run(args) -> int:
    src = open_args(args, kinds=("voxmem", "amc_runs"), selects=True)
    if src.kind == "amc_runs":
        table = noted(amc_task_items(src.data, systems=comma_list(args.system) or None,
                                     axes=comma_list(args.axis) or None, failed=args.failed, where=args.where,
                                     judge=args.judge))
        title = (f"{table['task_id'].nunique()} {'failed ' if args.failed else ''}task(s) x system: response, rubric "
                 f"verdicts and the judge's explanations ({len(table)} rows)")
        keys = _AMC_KEYS
    else:
        release = src.data
        model = only_choice(args.model, release.model_order(), "--model", "model")
        budget = only_choice(args.budget, release_budgets(release, [model] if model in release.model_order() else None),
                             "--budget", "budget")
        table = item_table(release, model=model, budget=budget, wrong=args.wrong, by=comma_list(args.by),
                           where=args.where)
        report(src, args, selected=release.frame.filter(release.frame["model"] == model))
        title = (f"{model} at {table.attrs.get('budget', budget.upper())}: {len(table)} "
                 f"{'incorrect scored items' if args.wrong else 'items'}")
        keys = [*comma_list(args.by), *_KEYS]
    show(table, args, title, src, keys=keys)
    return 0
