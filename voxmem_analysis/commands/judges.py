"""``voxmem-analysis judges --manifest FILE --questions FILE``: agreement between two judges.

For every system and budget with verdicts from two (or more) judges -- the manifest's
``judge`` column, else the lines' ``autoeval_label.model`` -- and every pair of them:
per question type and overall, n, each judge's accuracy, percent agreement and Cohen's
kappa (:func:`voxmem_analysis.analysis.verdicts.judge_agreement_pairs`).  Under ``--lenient`` a
judge file that was left out is named on standard error, with what it means for the agreement of
its system and budget (as ``slice`` and ``compare`` name it).

``--manifest FILE --tasks FILE`` (Audio MultiChallenge): for every system graded by two (or more)
judges -- the same responses, the manifest's ``judge`` column telling the files apart -- agreement
and Cohen's kappa rubric item by rubric item, per axis and overall.
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._amc import add_tasks_arg, check_sources, is_amc_runs, run_judges
from voxmem_analysis.commands._shared import (add_manifest_args, add_output_args, describe_dropped, emit, load_manifest,
                                              note)


def register(sub) -> None:
    p = sub.add_parser("judges", help="agreement and Cohen's kappa between judges per question type (LongMemEval format)",
                       description=__doc__.split("\n\n")[0])
    add_manifest_args(p, required=False)
    add_tasks_arg(p)
    add_output_args(p, bootstrap=False)
    p.set_defaults(func=run)


def run(args) -> int:
    from voxmem_analysis.analysis.verdicts import judge_agreement_pairs

    why = check_sources(args) or (None if args.manifest else "give --manifest FILE with --questions FILE "
                                       "(LongMemEval) or --tasks FILE (Audio MultiChallenge)")
    if why is None and not (args.questions or args.tasks):
        why = "--manifest needs --questions FILE (LongMemEval) or --tasks FILE (Audio MultiChallenge)"
    if why:
        print(why, file=sys.stderr)
        return 2
    if is_amc_runs(args):
        return run_judges(args)

    data = load_manifest(args)
    for text in dropped_judge_notes(data):
        note(text)
    table = judge_agreement_pairs(data.frame, judge="judge", within=("system", "budget"), item="question_id",
                                  by=("question_type",))
    if table.empty:
        print("error: no system and budget has verdicts from two judges; list both judges' files in the manifest "
              "with the same system and budget and different `judge` values", file=sys.stderr)
        return 1
    emit(table, args.format, "Judge agreement (accuracy and agreement in %)")
    return 0


def dropped_judge_notes(data) -> list[str]:
    """One note per manifest row left out (``--lenient``): which verdicts, why, and the judges of
    that system and budget that are still compared."""
    frame = data.frame
    out = []
    for d in data.dropped:
        same_budget = (frame["budget"].is_null() if d.get("budget") is None
                       else frame["budget"].cast(str) == str(d["budget"]))
        at = frame.filter((frame["system"] == d["system"]) & same_budget)
        left = [str(j) for j in dict.fromkeys(at["judge"].drop_nulls().to_list())]
        if len(left) >= 2:
            what = f"judge agreement there compares the judges left ({', '.join(map(repr, left))})"
        elif left:
            what = f"only judge {left[0]!r} is left there: that system and budget are in no agreement table"
        else:
            what = "that system and budget have no verdicts left and are in no agreement table"
        out.append(f"{describe_dropped(d)}; {what}")
    return out
