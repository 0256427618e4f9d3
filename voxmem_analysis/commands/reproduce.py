"""``voxmem-analysis reproduce --data DIR --out DIR``: run every notebook, compare with the paper, report.

See :mod:`voxmem_analysis.reproduce.runner` for what is written.  The runner and the report (which
import pandas) are imported when the command runs.
"""
from __future__ import annotations

import ast
import functools
import json
import re
import sys
from pathlib import Path

from voxmem_analysis.commands._common import open_args, report_release
from voxmem_analysis.commands._guards import check_outputs, command_inputs
from voxmem_analysis.errors import InputError, OutputLockedError
from voxmem_analysis.reproduce.atomic import acquire_lock, lock_path, release_lock
from voxmem_analysis.reproduce.notebook import (AMC_EXAMPLE, LONGMEMEVAL_EXAMPLE, NOTEBOOKS_DIR, declared_parameters,
                                                discover, select)


def _literal(text: str):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _list(args) -> int:
    for path in select(discover(args.notebooks), args.only):
        src = path.read_text(encoding="utf-8")
        m = re.search(r"^# %%.*parameters.*\n((?:(?!# %%).*\n)*)", src, re.M)
        params = declared_parameters(m.group(1)) if m else {}
        shown = ", ".join(f"{k}={v!r}" for k, v in params.items()) if m else "(no parameters cell)"
        print(f"{path.stem:28s} {shown}")
    return 0


def _check_out(out, inputs) -> None:
    """An :class:`InputError` for an OUT that is, holds or lies in an input, or whose lock would replace one."""
    check_outputs(folders={"--out": out}, inputs=inputs)
    check_outputs(files={"the lock beside --out": str(lock_path(Path(out).resolve()))}, inputs=inputs)


def run(args) -> int:
    if args.list:
        return _list(args)
    if args.report_only:
        return _report_only(Path(args.out), embed=args.embed)
    if args.manifest or args.tasks:
        return _run_amc_runs(args)
    if not args.data:
        raise InputError("--data DIR is required", "data")
    if not Path(args.data).is_dir():
        raise InputError(f"release directory {args.data!r} does not exist", "data")
    _check_out(args.out, command_inputs(data=args.data, extra=[args.notebooks or NOTEBOOKS_DIR, AMC_EXAMPLE,
                                                               LONGMEMEVAL_EXAMPLE]))
    overrides = {}
    for item in args.parameter:
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier():
            raise InputError(f"--parameter expects NAME=VALUE, got {item!r}", "parameter")
        overrides[name] = _literal(value)
    # start-up: the runner imports pandas; a refused option or output folder is reported without it
    from voxmem_analysis.reproduce.runner import RunOptions, run as run_all  # start-up: as above

    options = RunOptions(jobs=args.jobs, seed=args.seed, n_boot=args.n_boot, only=args.only,
                         notebooks_dir=args.notebooks, overrides=overrides, timeout=args.timeout,
                         progress=False if args.no_progress else None, quiet=args.quiet,
                         compare_published=args.compare_published,
                         include_examples=args.include_examples, embed=args.embed, keep_going=args.keep_going)
    # the release's findings go to stderr while the notebooks run; an -p the runner owns, an unusable
    # output folder or an unknown notebook name is a usage error (exit 2) that cli.main reports
    summary = run_all(args.data, args.out, options, read_release=functools.partial(report_release, args.data))
    return summary.exit_code


#: Options of the notebook runner that an Audio MultiChallenge runs report (no notebooks) has no use for.
_NOTEBOOK_OPTIONS = ("data", "jobs", "only", "notebooks", "parameter", "compare_published", "include_examples", "embed")


def _run_amc_runs(args) -> int:
    """``reproduce --manifest FILE --tasks FILE --out DIR``: the analysis report of judged AMC runs
    (:mod:`voxmem_analysis.reproduce.amc_runs`)."""
    if not (args.manifest and args.tasks):
        raise InputError("--manifest FILE and --tasks FILE go together (judged Audio MultiChallenge runs and the task "
                         "table)", "manifest")
    given = [f"--{k.replace('_', '-')}" for k in _NOTEBOOK_OPTIONS if getattr(args, k, None)]
    if given:
        raise InputError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} not apply to --manifest/--tasks (an "
                         "analysis report of judged Audio MultiChallenge runs; no notebooks run)", given[0][2:])
    from voxmem_analysis.reproduce.amc_runs import write_amc_runs_report  # start-up: imports pandas and matplotlib

    # --out (and its lock) checked against every file read; every finding on stderr (the report lists them too)
    src = open_args(args, "reproduce", strict=False, out_folder=True)
    _check_out(args.out, src.inputs)
    data = src.data
    res = write_amc_runs_report(data, args.out, seed=args.seed, n_boot=args.n_boot, judge=args.judge)
    print(f"wrote {res.out}: {', '.join(res.files)}")
    print(f"findings: {res.errors} error(s), {res.warnings} warning(s); {res.lines_left_out} line(s) left out; "
          f"the paper's Table 2 shown as reference for: {', '.join(res.matched_reference) or 'no system (no name matches)'}")
    return 0


def _report_only(out, *, embed: bool) -> int:
    """Rebuild OUT/report/index.html under OUT's lock: never while a run writes or swaps OUT."""
    from voxmem_analysis.reproduce.report import read_run, write_report  # start-up: imports pandas

    if not out.is_dir():
        raise InputError(f"--report-only: {str(out)!r} is not a folder (run `reproduce --out` first)", "out")
    if _run_kind(out) == "amc-runs":
        raise InputError(f"--report-only: {str(out)!r} holds an analysis report of Audio MultiChallenge runs "
                         "(report/index.md, written with the run); rerun `reproduce --manifest FILE --tasks FILE` to "
                         "rebuild it", "out")
    notes: list[str] = []
    try:
        lock = acquire_lock(out, notes)
    except OutputLockedError as exc:   # another run writes OUT: exit 2 (cli.main)
        raise OutputLockedError(f"--report-only: {exc}") from None
    try:
        print(write_report(out, embed=embed))
        unreadable = read_run(out)[1]
        if unreadable:
            print(f"warning: reproduce --report-only: {unreadable}", file=sys.stderr)
    finally:
        release_lock(lock)
        for note in notes:
            print(f"# {note}", file=sys.stderr)
    return 0


def _run_kind(out) -> str | None:
    try:
        run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):   # a nested run.json is no kind, never a crash
        return None
    return run.get("kind") if isinstance(run, dict) else None
