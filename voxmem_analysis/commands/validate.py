"""``voxmem-analysis validate``: what a release (or judged Audio MultiChallenge runs) holds, and every problem
(findings on standard error, counts on standard output; exit 1 when there is an error)."""
from __future__ import annotations

import sys
from collections import Counter

import pandas as pd
import polars as pl

from voxmem_analysis.analysis.attribution import load_audit_records
from voxmem_analysis.commands._common import open_args
from voxmem_analysis.errors import Problem, VoxMemDataError, files_not_read_in_full
from voxmem_analysis.io.validation import status_counts

_AXES = ("IM", "IR", "SC", "VE")


def run(args) -> int:
    kind = None
    try:
        src = open_args(args, strict=False, quiet=True)
        kind = src.kind
        with pd.option_context("display.max_rows", None, "display.width", 200):
            {"voxmem": _voxmem, "amc_release": _amc, "amc_runs": _runs}[kind](src.data, args)
        problems = src.problems + (_optional_parts(src.data) if kind == "voxmem" else [])
    except VoxMemDataError as exc:   # release.json naming another benchmark: said as a finding
        problems = exc.problems
    errors = [p for p in problems if p.severity == "error"]
    warnings = [p for p in problems if p.severity == "warning"]
    for pr in errors + warnings:
        print(str(pr), file=sys.stderr)
    if kind == "amc_release":
        by_code = Counter()
        for pr in errors + warnings:
            by_code[pr.code] += pr.count
        if by_code:
            print("problems by code: " + ", ".join(f"{c} {n}" for c, n in by_code.items()))
        if errors:
            print("strict mode (the default of table / export-frame) refuses this release; --lenient leaves the rows "
                  "above out", file=sys.stderr)
    # totals count findings: a summary line ("... and 40 more like the above") counts as the 40 it stands for
    print(f"{sum(p.count for p in errors)} error(s), {sum(p.count for p in warnings)} warning(s)")
    return 1 if errors else 0


def _voxmem(release, args) -> None:
    f, st = release.frame, release.stats
    print(f"release: {release.path}  ({release.label()})")
    unread = st.get("files_unreadable", 0)
    print(f"files read: {st.get('files', 0) - unread}" + (f" (+{unread} unreadable)" if unread else "")
          + f"  lines: {st.get('lines', 0)}  predictions kept: {f.height}  lines rejected: "
          f"{st.get('rejected_lines', 0)}  identical duplicates ignored: {st.get('duplicates_identical', 0)}")
    partial = files_not_read_in_full(release.problems)
    if partial:   # their lost lines are not in "lines rejected": say so beside it
        print(f"files not read in full (lines lost there are not counted above): {', '.join(partial)}")
    for part in ("judge2", "ablation"):
        if f"{part}_rows" in st:
            print(f"{part}: {st[f'{part}_rows']} predictions")
    if f.height:
        print(status_counts(release).to_string())
        tot = f.group_by("status").agg(pl.len()).sort("status")
        print("totals: " + ", ".join(f"{r[0]}={r[1]}" for r in tot.iter_rows()))


def _optional_parts(release) -> list:
    """Problems of the parts only their analyses read: second-judge verdicts without a prediction, and the
    audit records of attribution/."""
    out = []
    if release.judge2 is not None and release.judge2.height:
        orphans = release.judge2.join(release.frame.select("model", "item_id"), on=["model", "item_id"], how="anti")
        for r in orphans.head(20).iter_rows(named=True):
            out.append(Problem("judge2_unmatched", "warning", f"second-judge verdict for ({r['model']}, "
                               f"{r['item_id']}) has no prediction in predictions/", r["source_file"], r["source_line"],
                               "item_id"))
        if orphans.height > 20:
            out.append(Problem("judge2_unmatched", "warning", f"... and {orphans.height - 20} more", None, None,
                               "item_id", orphans.height - 20))
    if (release.path / "attribution").is_dir():
        try:
            out += list(load_audit_records(release.path, frame=release.frame, models=release.models, strict=False)[1])
        except Exception as exc:  # noqa: BLE001 - report, never crash validation
            out.append(Problem("attribution_unreadable", "error", f"cannot read attribution/: {exc}", "attribution"))
    return out


def _amc(release, args) -> None:
    st = release.stats
    print(f"release: {release.path}  ({release.label()}; Audio MultiChallenge)")
    axes = release.tasks["axis"].value_counts().reindex(list(_AXES), fill_value=0)
    print(f"tasks: {st.get('tasks', 0)} (" + ", ".join(f"{a} {n}" for a, n in axes.items()) + ")"
          f"  rubric items: {st.get('rubrics', 0)}")
    rows = [{"part": part, "systems": len(release.systems(part)), "rows": len(df),
             "tasks": int(df["task_id"].nunique())}
            for part in ("verdicts", "tts", "cascaded", "human", "judges")
            if (df := getattr(release, part)) is not None]
    if release.lengths is not None:
        rows.append({"part": "response_lengths", "systems": int(release.lengths[["model", "output_modality"]]
                                                                 .drop_duplicates().shape[0]),
                     "rows": len(release.lengths), "tasks": int(release.lengths["task_id"].nunique())})
    if rows:
        print(pd.DataFrame(rows).to_string(index=False))
    left_out = {k: v for k, v in st.items() if k.startswith(("rejected_", "incomplete_")) and v}
    print("rows left out by --lenient: " + (", ".join(f"{k}={v}" for k, v in left_out.items()) if left_out else "none"))


def _runs(data, args) -> None:
    st = data.stats
    axes = data.tasks["axis"].value_counts().to_pandas().set_index("axis")["count"] if data.tasks.height else {}
    print(f"manifest: {args.manifest}  tasks: {args.tasks}  ({data.label()}; Audio MultiChallenge runs)")
    print(f"tasks: {st.get('tasks', 0)} (" + ", ".join(f"{a} {int(axes.get(a, 0))}" for a in _AXES)
          + f")  rubric items: {data.items.height}")
    print(f"files: {st.get('files', 0)}  lines: {st.get('lines', 0)}  task results kept: {st.get('task_results', 0)}  "
          f"lines rejected: {st.get('rejected_lines', 0)}  identical repeats: {st.get('duplicates_identical', 0)}")
    if data.results.height:
        per = (data.results.group_by("system", "output_modality", "judge", maintain_order=True)
               .agg(tasks=pl.len(), passed=pl.col("passed").sum(), pred_error=pl.col("pred_error").sum()))
        print(per.to_pandas().to_string(index=False))
