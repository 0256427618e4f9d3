"""``voxmem-analysis judges --manifest FILE --questions FILE``: agreement between two judges.

For every system and budget with verdicts from two (or more) judges -- the manifest's
``judge`` column, else the lines' ``autoeval_label.model`` -- and every pair of them:
per question type and overall, n, each judge's accuracy, percent agreement and Cohen's
kappa (:func:`voxmem_analysis.analysis.verdicts.judge_agreement_pairs`).
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._shared import add_manifest_args, add_output_args, emit, load_manifest, run_guarded


def register(sub) -> None:
    p = sub.add_parser("judges", help="agreement and Cohen's kappa between judges per question type (LongMemEval format)",
                       description=__doc__.split("\n\n")[0])
    add_manifest_args(p)
    add_output_args(p, bootstrap=False)
    p.set_defaults(func=lambda a: run_guarded(run, a))


def run(args) -> int:
    from voxmem_analysis.analysis.verdicts import judge_agreement_pairs

    data = load_manifest(args)
    table = judge_agreement_pairs(data.frame, judge="judge", within=("system", "budget"), item="question_id",
                                  by=("question_type",))
    if table.empty:
        print("error: no system and budget has verdicts from two judges; list both judges' files in the manifest "
              "with the same system and budget and different `judge` values", file=sys.stderr)
        return 1
    emit(table, args.format, "Judge agreement (accuracy and agreement in %)")
    return 0
