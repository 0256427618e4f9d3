"""``voxmem-analysis judges``: agreement between judges of the same verdicts; under ``--lenient`` a judge file left
out is named, with what it means for the agreement of its system and budget."""
from __future__ import annotations

from voxmem_analysis.analysis.amc_runs import amc_judges
from voxmem_analysis.analysis.verdicts import judge_agreement_pairs
from voxmem_analysis.commands._common import note, open_args, show
from voxmem_analysis.errors import MissingDataError


def run(args) -> int:
    src = open_args(args, kinds=("longmemeval", "amc_runs"))
    if src.kind == "amc_runs":
        table = amc_judges(src.data.rubric_results)
        if table.empty:
            raise MissingDataError("no system was graded by two judges; list each judge's results file in the manifest "
                                   "with the same system and output_modality and different `judge` values",
                                   code="one_judge")
        title = "Judge agreement on the same responses, rubric item by rubric item (agreement, accuracies in %)"
    else:
        for text in dropped_judge_notes(src.data):
            note(text)
        table = judge_agreement_pairs(src.data.frame, judge="judge", within=("system", "budget"), item="question_id",
                                      by=("question_type",))
        if table.empty:
            raise MissingDataError("no system and budget has verdicts from two judges; list both judges' files in the "
                                   "manifest with the same system and budget and different `judge` values",
                                   code="one_judge")
        title = "Judge agreement (accuracy and agreement in %)"
    show(table, args, title, src)
    return 0


def dropped_judge_notes(data) -> list[str]:
    """One note per manifest row left out (``--lenient``): which verdicts, why, and the judges of that system
    and budget that are still compared."""
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
        by = f" by judge {d['judge']!r}" if d.get("judge") is not None else ""
        out.append(f"the verdicts of system {d['system']!r} at budget {d['budget']}{by} (manifest line "
                   f"{d['manifest_line']}) were left out: {d['reason']}; {what}")
    return out
