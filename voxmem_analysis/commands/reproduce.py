"""``voxmem-analysis reproduce --data DIR --out DIR``: run every notebook, compare with the paper, report
(:mod:`voxmem_analysis.reproduce.runner`); ``--manifest --tasks``: the report of judged Audio MultiChallenge runs."""
from __future__ import annotations

import ast
import functools
import json
import re
import sys
from pathlib import Path

from voxmem_analysis.commands._common import note, open_args, report_release
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
        m = re.search(r"^# %%.*parameters.*\n((?:(?!# %%).*\n)*)", path.read_text(encoding="utf-8"), re.M)
        shown = ", ".join(f"{k}={v!r}" for k, v in declared_parameters(m.group(1)).items()) if m else ""
        print(f"{path.stem:28s} {shown if m else '(no parameters cell)'}")
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
    from voxmem_analysis.reproduce.runner import RunOptions, run as run_all

    options = RunOptions(jobs=args.jobs, seed=args.seed, n_boot=args.n_boot, only=args.only,
                         notebooks_dir=args.notebooks, overrides=overrides, timeout=args.timeout,
                         progress=False if args.no_progress else None, quiet=args.quiet,
                         compare_published=args.compare_published,
                         include_examples=args.include_examples, embed=args.embed, keep_going=args.keep_going)
    # the release's findings go to stderr while the notebooks run
    return run_all(args.data, args.out, options, read_release=functools.partial(report_release, args.data)).exit_code


def _run_amc_runs(args) -> int:
    """``reproduce --manifest FILE --tasks FILE --out DIR``: the analysis report of judged AMC runs."""
    if not (args.manifest and args.tasks):
        raise InputError("--manifest FILE and --tasks FILE go together (judged Audio MultiChallenge runs and the task "
                         "table)", "manifest")
    from voxmem_analysis.reproduce.amc_runs import write_amc_runs_report  # start-up: imports pandas and matplotlib

    src = open_args(args, strict=False, out_folder=True)   # every finding on stderr (the report lists them too)
    _check_out(args.out, src.inputs)
    res = write_amc_runs_report(src.data, args.out, seed=args.seed, n_boot=args.n_boot, judge=args.judge)
    print(f"wrote {res.out}: {', '.join(res.files)}")
    matched = ", ".join(res.matched_reference) or "no system (no name matches)"
    print(f"findings: {res.errors} error(s), {res.warnings} warning(s); {res.lines_left_out} line(s) left out; "
          f"the paper's Table 2 shown as reference for: {matched}")
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
    except OutputLockedError as exc:   # another run writes OUT
        raise OutputLockedError(f"--report-only: {exc}") from None
    try:
        print(write_report(out, embed=embed))
        unreadable = read_run(out)[1]
        if unreadable:
            print(f"warning: reproduce --report-only: {unreadable}", file=sys.stderr)
    finally:
        release_lock(lock)
        for text in notes:
            note(text)
    return 0


def _run_kind(out) -> str | None:
    try:
        run = json.loads((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):   # a nested run.json is no kind, never a crash
        return None
    return run.get("kind") if isinstance(run, dict) else None
