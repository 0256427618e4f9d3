"""``voxmem-analysis compare``: paired comparison of systems, on LongMemEval verdicts or VoxMem data.

* ``--manifest FILE --questions FILE``: every pair of systems at each budget (LongMemEval format).
* ``--data DIR [--models A,B[,C...]] [--budget B]``: every pair of the given VoxMem models at one
  budget, on the items both were scored on (:func:`voxmem_analysis.analysis.paired.compare_models`);
  without ``--models`` every model run at the budget, without ``--budget`` the only budget all of them
  were run at.
* ``--manifest FILE --tasks FILE`` (judged Audio MultiChallenge results and the task table) or
  ``--data DIR`` of an Audio MultiChallenge release: every pair of systems (or of ``--models``) on the
  tasks both have, overall and per axis: exact McNemar on task pass, paired task-bootstrap intervals of
  the APR and ARS differences, Holm over the pairs of each axis (:mod:`voxmem_analysis.commands._amc`).

On the questions both systems have: accuracies, the difference (pp) with a paired
bootstrap interval, the exact McNemar p and the Holm-adjusted p over all pairs
(:func:`voxmem_analysis.analysis.verdicts.compare_systems`).  Questions only one system has are
counted in ``only_a`` / ``only_b``.
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._amc import add_tasks_arg, check_sources, is_amc_runs, run_compare
from voxmem_analysis.commands._shared import (add_cluster_arg, add_data_args, add_judge_arg, add_manifest_args, add_output_args, emit,
                                              load, load_manifest, manifest_cluster, note, one_judge, only_choice,
                                              release_budgets, synthetic_banner)


def register(sub) -> None:
    p = sub.add_parser("compare", help="paired comparison of systems at the same budget: bootstrap interval of the "
                                       "difference, exact McNemar, Holm (--data DIR or --manifest FILE)",
                       description=__doc__.split("\n\n")[0])
    add_data_args(p, required=False)
    add_manifest_args(p, required=False, lenient=False)
    add_tasks_arg(p)
    p.add_argument("--models", default=None, metavar="A,B[,C...]",
                   help="with --data: the models to compare (two or more; default: every model run at --budget); "
                        "Audio MultiChallenge: only these systems (default: all)")
    p.add_argument("--budget", default=None, metavar="B",
                   help="with --data: the context length (8K, 16K, 32K, 64K; default: the only budget the models share)")
    p.add_argument("--answerable-only", action="store_true",
                   help="with --data: leave out the answer-refusal (AR) items (default: all scored items)")
    add_cluster_arg(p, adds="the design effect (clustered / item-level variance)")
    p.add_argument("--interval", choices=("percentile", "bca"), default="percentile",
                   help="bootstrap interval of the difference: percentile (default) or bca (bias-corrected and "
                        "accelerated); the columns diff_ci_low_mc_se, diff_ci_high_mc_se give the Monte-Carlo "
                        "standard error of each endpoint")
    add_judge_arg(p)
    add_output_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    if bool(args.data) == bool(args.manifest):
        print("give either --data DIR [--models A,B --budget B], or --manifest FILE with --questions FILE (LongMemEval) "
              "or --tasks FILE (Audio MultiChallenge)", file=sys.stderr)
        return 2
    why = check_sources(args)
    if why:
        print(why, file=sys.stderr)
        return 2
    if is_amc_runs(args) or (args.data and _is_amc(args.data)):
        unused = [k for k, v in {"--budget": args.budget, "--answerable-only": args.answerable_only,
                                 "--cluster": args.cluster != "item", "--interval": args.interval != "percentile"}.items() if v]
        if unused:
            print(f"compare: {', '.join(unused)} do not apply to Audio MultiChallenge (tasks are the unit)", file=sys.stderr)
            return 2
        return run_compare(args)
    if args.data:
        return _run_data(args)
    if not args.questions:
        print("--manifest needs --questions FILE (LongMemEval: the question types come from it) or --tasks FILE "
              "(Audio MultiChallenge: the task table)", file=sys.stderr)
        return 2
    from voxmem_analysis.analysis.verdicts import compare_systems

    data = load_manifest(args)
    frame, cluster = manifest_cluster(one_judge(data, args), args.cluster)
    table = compare_systems(frame, system="system", item="question_id", budget="budget",
                            n_boot=args.n_boot, seed=args.seed, cluster=cluster, interval=args.interval, mc_se=True)
    emit(table, args.format, "Pairwise comparison of systems (diff = acc_a - acc_b, pp)")
    return 0


def _is_amc(path) -> bool:
    from voxmem_analysis.io import is_amc_release

    return is_amc_release(path)


def _run_data(args) -> int:
    from voxmem_analysis.analysis.paired import compare_models

    from voxmem_analysis.errors import InputError

    models = [m.strip() for m in (args.models or "").split(",") if m.strip()]
    if args.models is not None and len(models) < 2:
        print("--models needs two or more model names, comma-separated (--models A,B)", file=sys.stderr)
        return 2
    release = load(args)
    synthetic_banner(release)
    pool = models or release.model_order()
    if len(pool) < 2:
        raise InputError(f"the release has {len(pool)} model ({', '.join(pool)}): a comparison needs two or more",
                         "models")
    budget = args.budget or only_choice(
        None, [b for b in release_budgets(release) if all(b in release_budgets(release, [m]) for m in pool)],
        "--budget", "budget", owner=f"the {'given' if models else 'release'}'s models were all run at")
    if not models:
        models = [m for m in release.model_order() if budget.upper() in release_budgets(release, [m])]
        if len(models) < 2:
            raise InputError(f"the release has {len(models)} model run at {budget}: a comparison needs two or more "
                             f"(pass --budget with a budget several models were run at)", "models")
        note(f"--models {','.join(models)} (every model run at {budget})")
    table = compare_models(release, models, budget, answerable_only=args.answerable_only,
                           n_boot=args.n_boot, seed=args.seed, cluster=args.cluster, interval=args.interval,
                           mc_se=True)
    what = "answerable items" if args.answerable_only else "items"
    title = (f"Paired comparison at {table['budget'].iloc[0]} on the {what} both models were scored on "
             f"(diff = acc_a - acc_b, pp; exact McNemar; Holm over {len(table)} pair(s))")
    if release.synthetic:
        title += " [SYNTHETIC DATA - not real model output]"
    emit(table, args.format, title)
    return 0
