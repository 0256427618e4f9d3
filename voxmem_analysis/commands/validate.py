"""``voxmem-analysis validate --data DIR``: counts per model x budget x status, and every problem.

An Audio MultiChallenge release (``release.json`` ``"benchmark": "audio-multichallenge"``, any
spelling) is read with the AMC loader (:func:`voxmem_analysis.io.load_amc`): counts of tasks per
axis, rubric items, verdict rows per part and system, and every problem (``file:line [field]``).
``validate --manifest FILE --tasks FILE`` checks judged Audio MultiChallenge results against the
task table (:func:`voxmem_analysis.io.load_amc_runs`): counts per run, every problem.
A ``release.json`` naming another benchmark is said so (exit 1).
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._amc import add_tasks_arg, run_validate
from voxmem_analysis.commands._shared import add_data_args, load


def register(sub) -> None:
    p = sub.add_parser("validate", help="check a release directory (or Audio MultiChallenge runs) and count what it holds")
    add_data_args(p, required=False)
    p.add_argument("--manifest", metavar="FILE", default=None,
                   help="with --tasks: judged Audio MultiChallenge results files (path,system[,output_modality][,judge])")
    add_tasks_arg(p)
    p.set_defaults(func=run)


def run(args) -> int:
    import polars as pl

    from voxmem_analysis.io.meta import benchmark_problems, release_benchmark

    if bool(args.data) == bool(args.manifest) or bool(args.manifest) != bool(args.tasks):
        print("give --data DIR (a release), or --manifest FILE --tasks FILE (Audio MultiChallenge runs)", file=sys.stderr)
        return 2
    if args.manifest:
        return run_validate(args)
    kind, _ = release_benchmark(args.data)
    if kind == "amc":
        return _run_amc(args)
    if kind == "unknown":
        for pr in benchmark_problems(args.data):
            print(str(pr), file=sys.stderr)
        print("1 error(s), 0 warning(s)")
        return 1
    from voxmem_analysis.errors import files_not_read_in_full

    release = load(args, strict=False)
    f = release.frame
    print(f"release: {release.path}  ({release.label()})")
    unread = release.stats.get("files_unreadable", 0)
    print(f"files read: {release.stats.get('files', 0) - unread}" + (f" (+{unread} unreadable)" if unread else "")
          + f"  lines: {release.stats.get('lines', 0)}  "
          f"predictions kept: {f.height}  lines rejected: {release.stats.get('rejected_lines', 0)}  "
          f"identical duplicates ignored: {release.stats.get('duplicates_identical', 0)}")
    partial = files_not_read_in_full(release.problems)
    if partial:   # their lost lines are not in "lines rejected": say so beside it
        print(f"files not read in full (lines lost there are not counted above): {', '.join(partial)}")
    for part in ("judge2_rows", "ablation_rows"):
        if part in release.stats:
            print(f"{part.replace('_rows', '')}: {release.stats[part]} predictions")
    if f.height:
        import pandas as pd

        from voxmem_analysis.io.validation import status_counts

        counts = status_counts(release)
        with pd.option_context("display.max_rows", None, "display.width", 200):
            print(counts.to_string())
        tot = f.group_by("status").agg(pl.len()).sort("status")
        print("totals: " + ", ".join(f"{r[0]}={r[1]}" for r in tot.iter_rows()))
    extra = _optional_parts(release)
    errors, warnings = release.errors() + [p for p in extra if p.severity == "error"], \
        release.warnings() + [p for p in extra if p.severity == "warning"]
    for pr in errors + warnings:
        print(str(pr), file=sys.stderr)
    # totals count findings: a summary line ("... and 40 more like the above") counts as the 40 it stands for
    print(f"{sum(p.count for p in errors)} error(s), {sum(p.count for p in warnings)} warning(s)")
    return 1 if errors else 0


def _optional_parts(release) -> list:
    """Problems of the optional parts that only their analyses read: second-judge predictions
    without a matching prediction, and the audit records of attribution/."""
    out = []
    if release.judge2 is not None and release.judge2.height:
        from voxmem_analysis.errors import Problem

        keys = release.frame.select("model", "item_id")
        orphans = release.judge2.join(keys, on=["model", "item_id"], how="anti")
        for r in orphans.head(20).iter_rows(named=True):
            out.append(Problem("judge2_unmatched", "warning",
                               f"second-judge verdict for ({r['model']}, {r['item_id']}) has no prediction in predictions/",
                               r["source_file"], r["source_line"], "item_id"))
        if orphans.height > 20:
            out.append(Problem("judge2_unmatched", "warning", f"... and {orphans.height - 20} more", None, None,
                               "item_id", orphans.height - 20))
    if (release.path / "attribution").is_dir():
        from voxmem_analysis.analysis.attribution import load_audit_records

        try:
            _, problems = load_audit_records(release.path, frame=release.frame, models=release.models, strict=False)
        except Exception as exc:  # noqa: BLE001 - report, never crash validation
            from voxmem_analysis.errors import Problem

            problems = [Problem("attribution_unreadable", "error", f"cannot read attribution/: {exc}", "attribution")]
        out += list(problems)
    return out


def _run_amc(args) -> int:
    """``validate`` of an Audio MultiChallenge release: read leniently so every problem is listed;
    say what strict mode (the default of ``table`` / ``export-frame``) and ``--lenient`` would do."""
    import pandas as pd

    from voxmem_analysis.io import load_amc

    release = load_amc(args.data, strict=False)
    st = release.stats
    print(f"release: {release.path}  ({release.label()}; Audio MultiChallenge)")
    axes = release.tasks["axis"].value_counts().reindex(["IM", "IR", "SC", "VE"], fill_value=0)
    print(f"tasks: {st.get('tasks', 0)} (" + ", ".join(f"{a} {n}" for a, n in axes.items()) + ")"
          f"  rubric items: {st.get('rubrics', 0)}")
    rows = []
    for part in ("verdicts", "tts", "cascaded", "human", "judges"):
        df = getattr(release, part)
        if df is not None:
            rows.append({"part": part, "systems": len(release.systems(part)), "rows": len(df),
                         "tasks": int(df["task_id"].nunique())})
    if release.lengths is not None:
        rows.append({"part": "response_lengths", "systems": int(release.lengths[["model", "output_modality"]]
                                                                 .drop_duplicates().shape[0]),
                     "rows": len(release.lengths), "tasks": int(release.lengths["task_id"].nunique())})
    if rows:
        print(pd.DataFrame(rows).to_string(index=False))
    left_out = {k: v for k, v in st.items() if k.startswith(("rejected_", "incomplete_")) and v}
    print("rows left out by --lenient: " + (", ".join(f"{k}={v}" for k, v in left_out.items()) if left_out else "none"))
    errors, warnings = release.errors(), release.warnings()
    shown: dict[str, int] = {}
    for pr in errors + warnings:   # every finding, as for a VoxMem release
        shown[pr.code] = shown.get(pr.code, 0) + pr.count
        print(str(pr), file=sys.stderr)
    if shown:
        print("problems by code: " + ", ".join(f"{c} {n}" for c, n in shown.items()))
    if errors:
        print("strict mode (the default of table / export-frame) refuses this release; --lenient leaves the rows "
              "above out", file=sys.stderr)
    print(f"{sum(p.count for p in errors)} error(s), {sum(p.count for p in warnings)} warning(s)")
    return 1 if errors else 0
