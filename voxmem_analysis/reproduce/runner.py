"""The reproduction runner: execute every notebook, then build the scoreboard and the report from files.

``voxmem-analysis reproduce --data DIR --out DIR`` (see :func:`run`):

1. every notebook ``notebooks/NN_name.py`` is executed with papermill's standard engine, each in a
   fresh kernel, ``jobs`` at a time (a plain process pool; :mod:`voxmem_analysis.reproduce.notebook`).
   Each notebook writes into its own staging folder; its files are then moved under ``OUT``, so
   every output is attributed to the notebook that wrote it (a file written by two is reported),
   and the records of ``provenance.json`` are merged (:mod:`voxmem_analysis.reproduce.provenance`);
2. meanwhile the runner reads the release once itself (what the report says about it: models,
   budgets, counts, validation findings);
3. in ``paper`` mode (:mod:`voxmem_analysis.reproduce.mode`: the paper's release, or
   ``compare_published``), ``OUT/reproduction.csv`` is built from the long-form numbers the notebooks
   wrote (``OUT/tables/*.long.csv``; nothing is computed again) and ``OUT/audit.csv`` from the paper's
   published numbers;
4. ``OUT/run.json`` records the run and ``OUT/report/index.html`` is written from the files of ``OUT``.

The release's fingerprint (:func:`voxmem_analysis.io.release_fingerprint`) is taken
before and after the run, and every notebook records the one it read: a release that changed while
the run read it fails the run (the previous output stays as it was).  A failing notebook stops
nothing else (``keep_going``): its executed copy (with the error) is kept, its error cell is
reported, and the summary's ``exit_code`` is 1.  The output is all or nothing
(:mod:`voxmem_analysis.reproduce.atomic`).

Layout of ``OUT``::

    figures/    PNG + PDF + CSV of every figure (written by the notebooks)
    tables/     CSV + long CSV + Markdown + LaTeX of every table (written by the notebooks)
    notebooks/  the executed notebooks (NAME.ipynb) and their kernel logs (NAME.log)
    provenance.json, reproduction.csv, audit.csv, run.json
    report/index.html
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from voxmem_analysis.reproduce.notebook import (STAGING, ErrorCell, NotebookResult, discover, execute_notebook,
                                                is_amc, nothing_written, select)

__all__ = ["RunOptions", "RunSummary", "run", "print_summary"]


@dataclass(frozen=True)
class RunOptions:
    """How :func:`run` runs (the command line's options; every field has the command's default).

    ``jobs``: notebooks run at once (default: the machine's cores); ``seed``, ``n_boot``: passed to
    every notebook declaring them; ``only``: run only these notebooks (``"10_main_results,20"``;
    earlier outputs of the others stay); ``notebooks_dir``: folder of notebooks (default the
    repository's); ``overrides``: other parameter values, set in the notebooks that declare them;
    ``timeout``: per cell, seconds; ``progress``: a progress bar (default: when standard error is a
    terminal); ``reproduction``, ``report``: also write reproduction.csv/audit.csv (paper mode) and
    report/index.html; ``compare_published``: the scoreboard and audit on any release;
    ``include_examples``: also the notebooks on bundled examples (LongMemEval); ``embed``: figures
    inlined in the report; ``keep_going``: a failing notebook stops nothing else (``False``: the first
    failure stops the run and leaves the previous output as it was).
    """

    jobs: int | None = None
    seed: int = 0
    n_boot: int = 10_000
    only: object = None
    notebooks_dir: object = None
    overrides: dict = field(default_factory=dict)
    timeout: float | None = 900
    progress: bool | None = None
    reproduction: bool = True
    report: bool = True
    compare_published: bool = False
    include_examples: bool = False
    embed: bool = False
    keep_going: bool = True


@dataclass
class RunSummary:
    """Everything :func:`run` did; ``exit_code`` is 1 when a notebook or a task failed."""

    data_dir: str
    out_dir: str
    seed: int
    n_boot: int
    jobs: int
    notebooks: list[NotebookResult]
    release: dict = field(default_factory=dict)
    reproduction: dict = field(default_factory=dict)
    audit: dict = field(default_factory=dict)
    problems: list[dict] = field(default_factory=list)
    tasks_failed: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    only: list[str] | None = None
    earlier: list[dict] = field(default_factory=list)   # notebooks of earlier runs not re-run (--only)
    parameters: dict = field(default_factory=dict)      # -p NAME=VALUE given to the notebooks
    provenance: list[str] = field(default_factory=list)  # outputs made otherwise than the rest

    @property
    def failed(self) -> list[NotebookResult]:
        return [r for r in self.notebooks if r.status == "failed"]

    @property
    def exit_code(self) -> int:
        return 1 if (self.failed or self.tasks_failed) else 0

    def to_dict(self) -> dict:
        d = asdict(self)
        d["exit_code"] = self.exit_code
        return d


# ----------------------------------------------------------------------------- the pool
def _worker_init(threads: int) -> None:
    """Set up a worker process (the kernels it starts inherit its environment): thread pools sized to
    ``cores // jobs`` (polars, BLAS), so parallel notebooks do not oversubscribe the cores;
    ``PYTHONHASHSEED=0`` for the kernels; Ctrl-C is left to the runner, and SIGTERM (how the runner
    ends a worker) leaves through ``finally`` blocks, so papermill shuts its kernel down."""
    os.environ["PYTHONHASHSEED"] = "0"
    for var in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)

    def _exit(signum, frame):  # noqa: ARG001 - signal handler signature
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit)


def _stop_workers(pool, grace: float = 10.0) -> None:
    """Cancel what has not started and end the running workers (SIGTERM, SIGKILL after ``grace`` s)."""
    import multiprocessing

    workers = multiprocessing.active_children()
    pool.shutdown(wait=False, cancel_futures=True)
    for p in workers:
        p.terminate()
    deadline = time.monotonic() + grace
    for p in workers:
        p.join(max(0.1, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1.0)


def _completed(futures, poll: float = 0.5):
    """The futures as they complete, waking every ``poll`` seconds so that Ctrl-C is seen promptly."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = list(futures)
    while pending:
        done, _ = wait(pending, timeout=poll, return_when=FIRST_COMPLETED)
        for fut in [f for f in pending if f in done]:
            pending.remove(fut)
            yield fut


class _Stop(Exception):
    """The run stops and keeps nothing (see :func:`run`): ``task`` is the line of the summary,
    ``why`` the note on standard error."""

    def __init__(self, task: str, why: str, result: NotebookResult | None):
        super().__init__(task)
        self.task, self.why, self.result = task, why, result


# ----------------------------------------------------------------------------- merging outputs
_NOT_OUTPUTS = (".ipynb_checkpoints", "__pycache__")


def _collect(out: Path, name: str) -> tuple[list[str], dict]:
    """Move ``OUT/.staging/NAME/**`` to ``OUT/**``: the moved files (relative to OUT, sorted) and the
    notebook's provenance records."""
    from voxmem_analysis.reproduce.provenance import PROVENANCE_FILE, read_records

    stage = out / STAGING / name
    if not stage.is_dir():
        return [], {}
    try:
        records = read_records(stage)
    except ValueError:
        records = {}
    moved: list[str] = []
    for f in sorted(p for p in stage.rglob("*") if p.is_file()):
        rel = f.relative_to(stage)
        if rel.parts[0] in _NOT_OUTPUTS or rel.as_posix() in (PROVENANCE_FILE, ".provenance.lock"):
            continue
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(f, dst)
        moved.append(rel.as_posix())
    shutil.rmtree(stage, ignore_errors=True)
    return moved, {k: v for k, v in records.items() if k in moved}


def _previous_run(out: Path) -> dict:
    try:
        prev = json.loads((out / "run.json").read_text())
    except (OSError, ValueError, RecursionError):
        return {}
    return prev if isinstance(prev, dict) else {}


def _remove_previous_outputs(out: Path, previous: dict, names: set[str] | None) -> None:
    """Delete the files the previous run attributed to the notebooks about to run again (all: ``None``)."""
    for nb in previous.get("notebooks", []) + previous.get("earlier", []):
        if names is not None and nb.get("name") not in names:
            continue
        for rel in nb.get("outputs", []):
            p = (out / rel).resolve()
            if out.resolve() in p.parents and p.is_file():
                p.unlink()


def _estimated_seconds(path: Path) -> float:
    """A notebook's expected time with no earlier run to go by: about 3 s per figure plus start-up."""
    try:
        return 3.0 + 3.0 * path.read_text(encoding="utf-8").count("save_figure(")
    except OSError:
        return 0.0


def _task_order(paths: list[Path], previous: dict) -> list[Path]:
    """Longest notebook first (as measured by the previous run in OUT, else estimated), which keeps
    every worker busy until the end."""
    last = {nb["name"]: nb.get("seconds", 0) for nb in previous.get("notebooks", [])}
    return sorted(paths, key=lambda p: (-last.get(p.stem, _estimated_seconds(p)), p.name))


# ----------------------------------------------------------------------------- the run
def run(data_dir, out_dir, options: RunOptions | None = None, *, stream=None, read_release=None,
        **settings) -> RunSummary:
    """Execute the notebooks in parallel; write provenance.json, reproduction.csv, run.json and the report.

    Parameters
    ----------
    data_dir, out_dir : path
        Release directory read by every notebook; output folder (see "Output folder").
    options : RunOptions
        How to run (default: the command's defaults).
    **settings
        Fields of :class:`RunOptions` given one by one instead (``run(data, out, jobs=2, n_boot=200)``).
    stream : file
        Where the summary table is printed (default standard output).
    read_release : callable, optional
        ``read_release()`` returns ``data_dir`` as loaded leniently (``reproduce`` passes one that also
        prints the release's findings); called while the notebooks run.  Default:
        ``load_release(data_dir, strict=False)`` (or ``load_amc`` for an AMC release).

    Output folder
    -------------
    The run is built in a staging folder beside ``out_dir`` and swapped in only when complete
    (:mod:`voxmem_analysis.reproduce.atomic`): a lock refuses a second run into the same folder, an
    interrupted run (Ctrl-C, ``keep_going=False``, a release changed during the run) leaves the
    previous output untouched, ``out_dir`` then holds only this run's files (with ``only``: also the
    other notebooks' earlier outputs; files no run wrote are kept, and said so), and ``only`` with
    another release than the one in ``out_dir`` is refused.  Notes go to standard error.
    """
    from voxmem_analysis.reproduce.atomic import StagedOutput

    import dataclasses

    opts = dataclasses.replace(options or RunOptions(), **settings)
    _check_overrides(opts.overrides)
    stream = stream or sys.stdout
    out = Path(out_dir).resolve()
    paths = select(discover(opts.notebooks_dir), opts.only)
    staged = StagedOutput(out, data=data_dir, only={p.stem for p in paths} if opts.only else None)
    try:
        with staged:
            try:
                summary = _run_staged(staged.staging, out, paths, Path(data_dir).resolve(), opts, read_release)
            except _Stop as stop:
                staged.abandon(stop.why)
                summary = RunSummary(str(Path(data_dir).resolve()), str(staged.staging), opts.seed, opts.n_boot,
                                     opts.jobs or 0, [stop.result] if stop.result is not None else [],
                                     tasks_failed=[stop.task])
                for r in summary.notebooks:
                    r.executed, r.outputs = None, []   # they were in the removed staging folder
            else:
                staged.commit()
    finally:
        for note in staged.notes:
            print(f"# {note}", file=sys.stderr)
    print_summary(summary, stream)
    return summary


def _check_overrides(overrides) -> None:
    """``-p`` may not set what the runner owns (what is read and written, and the recorded seed)."""
    from voxmem_analysis.errors import InputError
    from voxmem_analysis.reproduce.notebook import RUNNER_PARAMETERS

    owned = sorted(set(overrides or {}) & set(RUNNER_PARAMETERS + ("amc_data_dir",)))
    if owned:
        raise InputError(f"parameter(s) {', '.join(owned)} are set by the runner (from --data, --out, --seed, "
                         f"--n-boot) and cannot be overridden", "parameters")


def _run_staged(stage: Path, final: Path, paths: list[Path], data: Path, opts: RunOptions,
                read_release) -> RunSummary:
    """The run of :func:`run`, written into the staging folder ``stage`` (``final``: the folder it
    becomes).  Raises :class:`_Stop` when a notebook fails and ``keep_going`` is off, or when the
    release changed during the run."""
    from voxmem_analysis.io import release_fingerprint

    t_start = time.perf_counter()
    out = Path(stage)
    out.mkdir(parents=True, exist_ok=True)
    jobs = max(1, int(opts.jobs or os.cpu_count() or 1))
    previous = _previous_run(out)
    _remove_previous_outputs(out, previous, {p.stem for p in paths} if opts.only else None)
    shutil.rmtree(out / STAGING, ignore_errors=True)
    (out / STAGING).mkdir(parents=True)
    for f in ("reproduction.csv", "audit.csv"):
        if opts.reproduction:
            (out / f).unlink(missing_ok=True)
    fingerprint = release_fingerprint(data)
    summary = RunSummary(str(data), str(final), opts.seed, opts.n_boot, jobs, [],
                         only=[p.stem for p in paths] if opts.only else None,
                         parameters=dict(opts.overrides or {}))
    summary.release = {"fingerprint": fingerprint}
    results, release = _execute_all(out, paths, data, opts, jobs, previous, read_release)
    summary.notebooks = [results[p.stem] for p in paths]
    _merge_provenance(out, summary, previous, opts)
    from voxmem_analysis.reproduce.provenance import findings

    summary.provenance = [str(f) for f in findings(out, summary.to_dict())]
    after = release_fingerprint(data)
    changed = _changed_release(summary, data, fingerprint, after)
    if changed:
        raise _Stop(f"stopped: {changed}", changed, None)
    shutil.rmtree(out / STAGING, ignore_errors=True)
    _release_summary(summary, release, data, opts)
    if opts.reproduction and summary.release.get("mode") == "paper":
        _scoreboard(out, summary)
    elif not opts.reproduction:
        for k in ("reproduction", "audit", "problems"):
            if previous.get(k):
                setattr(summary, k, previous[k])
    _write_run(out, summary, t_start)
    if opts.report:
        try:
            from voxmem_analysis.reproduce.report import write_report

            write_report(out, embed=opts.embed)
        except OSError as exc:
            raise _unwritable("report/", exc) from exc
        except Exception as exc:  # noqa: BLE001 - the report failing is a failed task of the run, said so
            summary.tasks_failed.append(f"report: {type(exc).__name__}: {exc}")
    _write_run(out, summary, t_start)
    return summary


def _write_run(out: Path, summary: RunSummary, t_start: float) -> None:
    from voxmem_analysis.writing import atomic_text

    summary.wall_seconds = round(time.perf_counter() - t_start, 2)
    try:
        atomic_text(out / "run.json", json.dumps(summary.to_dict(), indent=1, sort_keys=True, default=str) + "\n")
    except OSError as exc:
        raise _unwritable("run.json", exc) from exc


def _unwritable(what: str, exc: OSError) -> "_Stop":
    """The run stops (previous OUT kept) when one of its files cannot be written: a report of a
    partly written output would be worse than none."""
    why = f"cannot write {what}: {exc.strerror or exc}"
    return _Stop(f"stopped: {why}", why, None)


def _execute_all(out: Path, paths: list[Path], data: Path, opts: RunOptions, jobs: int, previous: dict,
                 read_release):
    """Every notebook on the pool (longest first) while this process reads the release; ``(results by
    name, the release or the exception reading it raised)``."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    threads = max(1, (os.cpu_count() or 1) // jobs)
    results: dict[str, NotebookResult] = {}
    owner: dict[str, str] = {}
    # spawn: workers start from a clean interpreter (forking a process that runs threads can deadlock)
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_worker_init, initargs=(threads,))
    try:
        futures = {pool.submit(execute_notebook, p, data_dir=str(data), out_dir=str(out), seed=opts.seed,
                               n_boot=opts.n_boot, overrides=opts.overrides, timeout=opts.timeout,
                               include_examples=opts.include_examples or bool(opts.only)): p.stem
                   for p in _task_order(paths, previous)}
        release = _read_release(data, read_release)
        bar = _progress(len(futures), opts.progress)
        for fut in _completed(futures):
            res = _result(fut, futures[fut])
            res.outputs, records = _collect(out, res.name)
            res.provenance = _own_source(records, res.name)
            why = nothing_written(res)
            if why:
                res.status, res.reason = "skipped", why
            for o in res.outputs:
                if o in owner:
                    res.collisions.append(f"{o} (also written by {owner[o]})")
                owner[o] = res.name
            results[res.name] = res
            (out / STAGING / f"{res.name}.provenance.json").write_text(json.dumps(records))
            bar.done(res.name, res.status)
            if res.status == "failed" and not opts.keep_going:
                bar.close()
                raise _Stop(f"stopped (--no-keep-going): {res.name} failed",
                            f"{res.name} failed and --no-keep-going is set", res)
        bar.close()
    except BaseException:
        _stop_workers(pool)
        raise
    pool.shutdown(wait=True)
    return results, release


def _result(fut, name: str) -> NotebookResult:
    try:
        return fut.result()
    except Exception as exc:  # noqa: BLE001 - a worker died: the notebook's result, reported
        return NotebookResult(name, "", "failed", error=ErrorCell(None, None, None, "", type(exc).__name__,
                                                                  str(exc), ""))


def _own_source(records: dict, name: str) -> dict | None:
    from voxmem_analysis.reproduce.provenance import notebook_source

    return notebook_source(records, name)


def _read_release(data: Path, read_release):
    """The release as the caller reads it (when it returns None: read leniently here); an exception is
    returned, not raised."""
    try:
        release = read_release() if read_release is not None else None
        if release is not None:
            return release
        if is_amc(data):
            from voxmem_analysis.io import load_amc

            return load_amc(data, strict=False)
        from voxmem_analysis.io import load_release

        return load_release(data, strict=False)
    except Exception as exc:  # noqa: BLE001 - reported as the release that could not be read
        return exc


def _merge_provenance(out: Path, summary: RunSummary, previous: dict, opts: RunOptions) -> None:
    """Merge the notebooks' records into ``OUT/provenance.json`` (with ``only``: over the earlier ones)."""
    from voxmem_analysis.reproduce.provenance import merge_records, read_records

    parts = []
    if opts.only:
        try:
            kept = read_records(out)
        except ValueError:
            kept = {}
        ran = {r.name for r in summary.notebooks}
        parts.append({k: v for k, v in kept.items() if v.get("notebook") not in ran})
        summary.earlier = sorted((nb for nb in previous.get("notebooks", []) + previous.get("earlier", [])
                                  if nb.get("name") not in ran), key=lambda nb: nb["name"])
    for r in summary.notebooks:
        f = out / STAGING / f"{r.name}.provenance.json"
        parts.append(json.loads(f.read_text()) if f.is_file() else {})
    merge_records(out, parts)


def _changed_release(summary: RunSummary, data: Path, before: str, after: str) -> str | None:
    """Why the run must not be kept when the release changed while it was read (else None)."""
    if after != before:
        return (f"the release {data} changed during the run (fingerprint {before[:19]}... before, "
                f"{after[:19]}... after); run again once it no longer changes")
    for r in summary.notebooks:
        rel = (r.provenance or {}).get("release") or {}
        fp = rel.get("fingerprint")
        if fp and fp != before and _same_place(rel.get("path"), data):
            return f"{r.name} read another version of {data} than the runner ({fp[:19]}... vs {before[:19]}...)"
    return None


def _same_place(path, data: Path) -> bool:
    from voxmem_analysis.paths import resolve

    return bool(path) and resolve(path).resolve() == data


def _release_summary(summary: RunSummary, release, data: Path, opts: RunOptions) -> None:
    """What run.json and the report say about the release (mode, runs, counts, findings)."""
    from voxmem_analysis.reproduce.mode import release_info

    info, problems = release_info(release, data, opts.compare_published)
    if "error" in info:
        summary.tasks_failed.append(f"load: {info['error']}")
    summary.release = {**info, "fingerprint": summary.release.get("fingerprint")}
    summary.problems = problems


def _scoreboard(out: Path, summary: RunSummary) -> None:
    """``reproduction.csv`` from the notebooks' long-form numbers and ``audit.csv`` from the paper's."""
    from voxmem_analysis.reproduce import scoreboard as sb

    t0 = time.perf_counter()
    try:
        table = sb.reproduction_from_files(out, benchmark=summary.release.get("benchmark"))
        sb.write_csv(table, out / "reproduction.csv")
        summary.reproduction = sb.summarize(table)
    except OSError as exc:   # disk full, a size limit: the run cannot be complete, the previous OUT stays
        raise _unwritable("reproduction.csv", exc) from exc
    except Exception as exc:  # noqa: BLE001 - a failed task of the run, named in the summary and report
        summary.tasks_failed.append(f"reproduction: {type(exc).__name__}: {exc}")
        summary.reproduction = {"error": f"{type(exc).__name__}: {exc}"}
    if summary.release.get("benchmark") != "audio-multichallenge":
        try:
            summary.audit = sb.write_audit(out / "audit.csv")
        except OSError as exc:
            raise _unwritable("audit.csv", exc) from exc
        except Exception as exc:  # noqa: BLE001
            summary.tasks_failed.append(f"audit: {type(exc).__name__}: {exc}")
            summary.audit = {"error": f"{type(exc).__name__}: {exc}"}
    summary.reproduction["seconds"] = round(time.perf_counter() - t0, 2)


class _progress:
    """tqdm bar on a terminal, one line per finished notebook otherwise."""

    def __init__(self, total: int, enabled: bool | None):
        self.bar = None
        if enabled is None:
            enabled = sys.stderr.isatty()
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="reproduce", unit="notebook", file=sys.stderr)
        self.n, self.total = 0, total

    def done(self, label: str, status: str) -> None:
        self.n += 1
        if self.bar is not None:
            self.bar.set_postfix_str(f"{label}: {status}", refresh=False)
            self.bar.update(1)
        else:
            print(f"[{self.n}/{self.total}] {label}: {status}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def print_summary(summary: RunSummary, stream=None) -> None:
    """The table printed at the end of ``reproduce`` (:mod:`voxmem_analysis.reproduce.summary`)."""
    from voxmem_analysis.reproduce.summary import print_summary as _print

    _print(summary, stream)
