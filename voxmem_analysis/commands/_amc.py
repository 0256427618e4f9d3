"""The Audio MultiChallenge side of ``slice``, ``compare``, ``judges``, ``validate`` and ``table``.

Two inputs, read as their users have them:

* ``--manifest FILE --tasks FILE``: judged results files (one JSON line per task, the dataset card's
  judge output) listed in a manifest ``path,system[,output_modality][,judge]``, and the benchmark's
  task table (``ScaleAI/audiomc``'s test split as distributed or exported);
* ``--data DIR``: an Audio MultiChallenge release folder (``release.json`` ``"benchmark":
  "audio-multichallenge"``).

Every finding of the reading is printed on standard error (a ``#`` line with the totals by code, then
each finding), under ``--lenient`` too; the tables go to standard output.
"""
from __future__ import annotations

import sys

from voxmem_analysis.commands._shared import emit, note, report_problems

__all__ = ["add_tasks_arg", "is_amc_runs", "load_runs", "load_release", "tasks_data", "run_slice", "run_compare",
           "run_judges", "run_validate"]


def add_tasks_arg(p) -> None:
    p.add_argument("--tasks", metavar="FILE", default=None,
                   help="with --manifest: the Audio MultiChallenge task table (ScaleAI/audiomc test split as Parquet, "
                        "JSON lines, JSON or CSV: id, axis, rubric); the manifest then lists judged results files "
                        "(path,system[,output_modality][,judge])")


def is_amc_runs(args) -> bool:
    return bool(getattr(args, "tasks", None))


def check_sources(args) -> str | None:
    """Why the options given name no input (a usage error), or None."""
    if getattr(args, "tasks", None) and getattr(args, "questions", None):
        return "--tasks (Audio MultiChallenge) and --questions (LongMemEval) cannot be combined"
    if getattr(args, "tasks", None) and not getattr(args, "manifest", None):
        return "--tasks needs --manifest FILE (the judged results files it lists)"
    return None


def load_runs(args, lenient: bool | None = None):
    """The runs of ``--manifest`` / ``--tasks``, read strictly unless ``--lenient`` (or ``lenient``); every
    finding on stderr."""
    from voxmem_analysis.io import load_amc_runs

    lenient = bool(getattr(args, "lenient", False)) if lenient is None else lenient
    data = load_amc_runs(args.manifest, args.tasks, strict=not lenient)
    report_problems(data.problems, source=f"manifest {args.manifest!r} with tasks {args.tasks!r}", lenient=lenient,
                    left_out=data.stats.get("rejected_lines"), limit=None)
    return data


def load_release(args, strict: bool | None = None):
    """The Audio MultiChallenge release of ``--data``; every finding on stderr (as for any release)."""
    from voxmem_analysis.io import load_amc

    lenient = bool(getattr(args, "lenient", False))
    release = load_amc(args.data, strict=(not lenient) if strict is None else strict)
    if strict is None:
        report_problems(release.problems, source=f"release {args.data!r}", lenient=lenient,
                        left_out=sum(v for k, v in release.stats.items() if k.startswith(("rejected_", "incomplete_"))),
                        hint=f"`voxmem-analysis validate --data {args.data}` lists them all")
    return release


def tasks_data(args):
    """``(task frame, label)`` of the AMC input named by ``args``: judged runs or a release folder."""
    from voxmem_analysis.analysis.amc_runs import task_frame

    data = load_runs(args) if is_amc_runs(args) else load_release(args)
    if data.synthetic:
        note(data.label())
    frame, notes = task_frame(data, getattr(args, "judge", None))
    for n in notes:
        note(n)
    return frame, data


def _title(what: str, data) -> str:
    return what + (f" [{data.label()}]" if data.synthetic else "")


def run_slice(args) -> int:
    """``slice``: APR (Wilson) and ARS (task bootstrap) by ``--by`` (default ``system,axis``)."""
    from voxmem_analysis.analysis.amc_runs import amc_slice

    frame, data = tasks_data(args)
    by = [c.strip() for c in (args.by or "system,axis").split(",") if c.strip()]
    table = amc_slice(frame, by, n_boot=args.n_boot, seed=args.seed)
    _write(table, args, _title(f"APR and ARS (%) by {', '.join(by)}: Wilson interval (APR), task bootstrap (ARS)", data))
    return 0


def run_compare(args) -> int:
    """``compare``: every pair of systems, overall and per axis."""
    from voxmem_analysis.analysis.amc_runs import amc_compare

    frame, data = tasks_data(args)
    systems = [s.strip() for s in args.models.split(",")] if getattr(args, "models", None) else None
    if systems is not None:
        known = set(frame["system"].to_list()) | set(frame["model"].to_list())
        unknown = [s for s in systems if s not in known]
        if unknown:
            from voxmem_analysis.errors import AnalysisInputError

            raise AnalysisInputError(f"--models: {', '.join(map(repr, unknown))} not among the systems "
                                     f"({', '.join(dict.fromkeys(frame['system'].to_list()))})", "models")
        labels = dict(zip(frame["model"].to_list(), frame["system"].to_list()))
        systems = [labels.get(s, s) for s in systems]
    table = amc_compare(frame, systems=systems, n_boot=args.n_boot, seed=args.seed)
    emit(table, args.format, _title("Paired comparison on the tasks both systems have (diff = a - b, pp): exact "
                                    "McNemar on task pass, paired task bootstrap, Holm over the pairs of each axis", data))
    return 0


def run_judges(args) -> int:
    """``judges``: rubric-level agreement of judges that graded the same responses."""
    from voxmem_analysis.analysis.amc_runs import amc_judges

    data = load_runs(args)
    if data.synthetic:
        note(data.label())
    table = amc_judges(data.rubric_results)
    if table.empty:
        print("error: judges: no system was graded by two judges; list each judge's results file in the manifest with "
              "the same system and output_modality and different `judge` values", file=sys.stderr)
        return 1
    emit(table, args.format, _title("Judge agreement on the same responses, rubric item by rubric item (agreement, "
                                    "accuracies in %)", data))
    return 0


def run_validate(args) -> int:
    """``validate --manifest --tasks``: what was read, per run, and every finding."""
    import pandas as pd
    import polars as pl

    from voxmem_analysis.io import load_amc_runs

    data = load_amc_runs(args.manifest, args.tasks, strict=False)
    st = data.stats
    axes = data.tasks["axis"].value_counts().to_pandas().set_index("axis")["count"] if data.tasks.height else {}
    print(f"manifest: {args.manifest}  tasks: {args.tasks}  ({data.label()}; Audio MultiChallenge runs)")
    print(f"tasks: {st.get('tasks', 0)} (" + ", ".join(f"{a} {int(axes.get(a, 0))}" for a in ("IM", "IR", "SC", "VE"))
          + f")  rubric items: {data.items.height}")
    print(f"files: {st.get('files', 0)}  lines: {st.get('lines', 0)}  task results kept: {st.get('task_results', 0)}  "
          f"lines rejected: {st.get('rejected_lines', 0)}  identical repeats: {st.get('duplicates_identical', 0)}")
    if data.results.height:
        per = (data.results.group_by("system", "output_modality", "judge", maintain_order=True)
               .agg(tasks=pl.len(), passed=pl.col("passed").sum(), pred_error=pl.col("pred_error").sum()))
        with pd.option_context("display.max_rows", None, "display.width", 200):
            print(per.to_pandas().to_string(index=False))
    errors, warnings = data.errors(), data.warnings()
    for p in errors + warnings:
        print(str(p), file=sys.stderr)
    print(f"{sum(p.count for p in errors)} error(s), {sum(p.count for p in warnings)} warning(s)")
    return 1 if errors else 0


def _write(table, args, title: str) -> None:
    out = getattr(args, "out", None)
    if not out:
        emit(table, args.format, title)
        return
    import contextlib
    from pathlib import Path

    Path(out).parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", encoding="utf-8", newline="") as fh, contextlib.redirect_stdout(fh):
        emit(table, args.format, title)
    note(f"wrote {out}")
