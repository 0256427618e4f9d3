"""``voxmem-analysis validate --data DIR``: counts per model x budget x status, and every problem.

An Audio MultiChallenge release (``release.json`` ``"benchmark": "audio-multichallenge"``) is read
with the AMC loader (:func:`voxmem_analysis.io.amc.load_amc`): counts of tasks per axis, rubric
items, verdict rows per part and system, and every problem (``file:line [field]``).
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._shared import add_data_args, load


def register(sub) -> None:
    p = sub.add_parser("validate", help="check a release directory and count its predictions")
    add_data_args(p)
    p.set_defaults(func=run)


def run(args) -> int:
    import polars as pl

    from voxmem_analysis.io.amc import is_amc_release

    if is_amc_release(args.data):
        return _run_amc(args)
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

    from voxmem_analysis.io.amc import load_amc

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
    for pr in errors + warnings:   # the first 10 of each code, then a count of the rest
        shown[pr.code] = shown.get(pr.code, 0) + 1
        if shown[pr.code] <= 10:
            print(str(pr), file=sys.stderr)
    for code, n in shown.items():
        if n > 10:
            print(f"... and {n - 10} more {code} problem(s)", file=sys.stderr)
    if shown:
        print("problems by code: " + ", ".join(f"{c} {n}" for c, n in shown.items()))
    if errors:
        print("strict mode (the default of table / export-frame) refuses this release; --lenient leaves the rows "
              "above out", file=sys.stderr)
    print(f"{sum(p.count for p in errors)} error(s), {sum(p.count for p in warnings)} warning(s)")
    return 1 if errors else 0
