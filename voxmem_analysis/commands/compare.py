"""``voxmem-analysis compare --manifest FILE --questions FILE``: every pair of systems at each budget.

On the questions both systems have: accuracies, the difference (pp) with a paired
bootstrap interval, the exact McNemar p and the Holm-adjusted p over all pairs
(:func:`voxmem_analysis.analysis.verdicts.compare_systems`).  Questions only one system has are
counted in ``only_a`` / ``only_b``.
"""
from __future__ import annotations

from voxmem_analysis.commands.slice import add_judge_arg, add_manifest_args, add_output_args, emit, load_manifest, one_judge, run_guarded


def register(sub) -> None:
    p = sub.add_parser("compare", help="paired comparison of every pair of systems at the same budget (LongMemEval format)",
                       description=__doc__.split("\n\n")[0])
    add_manifest_args(p)
    add_judge_arg(p)
    add_output_args(p)
    p.set_defaults(func=lambda a: run_guarded(run, a))


def run(args) -> int:
    from voxmem_analysis.analysis.verdicts import compare_systems

    data = load_manifest(args)
    frame = one_judge(data, args)
    table = compare_systems(frame, system="system", item="question_id", budget="budget",
                            n_boot=args.n_boot, seed=args.seed)
    emit(table, args.format, "Pairwise comparison of systems (diff = acc_a - acc_b, pp)")
    return 0
