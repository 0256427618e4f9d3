"""The reproduction runner: every notebook executed, then the scoreboard and the report built from the files.

:func:`run` executes the notebooks with papermill, ``jobs`` at a time on a process pool, each into its own staging
folder whose files then move under ``OUT`` with their provenance records, while it reads the release itself.  In
``paper`` mode it writes ``reproduction.csv`` and ``audit.csv``; then ``run.json`` and ``report/index.html``.  A
release that changed during the run, or (``keep_going`` off) a failed notebook, stops it; the output is all or
nothing (:mod:`~voxmem_analysis.reproduce.atomic`: a signal ends workers and kernels, ``OUT`` stays as it was).
"""
from __future__ import annotations

import contextlib
import dataclasses
import json
import multiprocessing
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from pathlib import Path

import psutil

from voxmem_analysis import writing
from voxmem_analysis.errors import InputError
from voxmem_analysis.io.amc import load_amc
from voxmem_analysis.io import release_fingerprint
from voxmem_analysis.io import load_release
from voxmem_analysis.paths import resolve
from voxmem_analysis.reproduce import report
from voxmem_analysis.reproduce import scoreboard as sb
from voxmem_analysis.reproduce.atomic import StagedOutput, read_json
from voxmem_analysis.reproduce.mode import release_info
from voxmem_analysis.reproduce.notebook import (STAGING, ErrorCell, NotebookResult, discover,
                                                execute_notebook, is_amc, nothing_written, select)
from voxmem_analysis.reproduce.provenance import (PROVENANCE_FILE, findings, merge_records, notebook_source,
                                                  read_records)
from voxmem_analysis.reproduce.summary import print_summary

__all__ = ["RunOptions", "RunSummary", "run", "print_summary"]


@dataclass(frozen=True)
class RunOptions:
    """The options of ``voxmem-analysis reproduce`` (``--help`` says each); ``overrides``: the ``-p NAME=VALUE``;
    ``progress``: a bar (default: on a terminal), else a line per notebook (``quiet``: neither); ``reproduction``,
    ``report``: also write reproduction.csv/audit.csv (paper mode) and report/index.html."""

    jobs: int | None = None
    seed: int = 0
    n_boot: int = 10_000
    only: object = None
    notebooks_dir: object = None
    overrides: dict = field(default_factory=dict)
    timeout: float | None = 900
    progress: bool | None = None
    quiet: bool = False
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
_STARTED = None   # in a worker: the queue it announces each notebook on (set by _worker_init)


def _worker_init(threads: int, started, scratch: str) -> None:
    """A worker: its threads, hash seed and kernel folder; SIGTERM (or its runner gone) ends its kernels and it."""
    global _STARTED
    _STARTED = started
    os.environ["PYTHONHASHSEED"] = "0"
    for var in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(threads)
    tempfile.tempdir = scratch
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _end_worker)
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()


def _end_worker(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    """End this worker's kernels (SIGTERM, then SIGKILL after 3 s), then the worker itself."""
    kids = psutil.Process().children(recursive=True)
    for k in kids:
        with contextlib.suppress(psutil.NoSuchProcess):
            k.terminate()
    alive = psutil.wait_procs(kids, timeout=3)[1]
    for k in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            k.kill()
    psutil.wait_procs(alive, timeout=3)
    os._exit(128 + signum)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(0.5)
    os.kill(os.getpid(), signal.SIGTERM)


def _run_notebook(path: Path, kwargs: dict) -> NotebookResult:
    """:func:`execute_notebook` in a worker, announced on the runner's queue when it starts."""
    if _STARTED is not None:
        _STARTED.put(path.stem)
    return execute_notebook(path, **kwargs)


def _stop_workers(pool, grace: float = 10.0) -> None:
    """Cancel what has not started; end the workers (SIGTERM, SIGKILL after ``grace`` s) and join them."""
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


def _completed(futures, started, progress, poll: float = 0.5):
    """The futures as they complete; every ``poll`` seconds the notebooks that started are shown."""
    pending = list(futures)
    while pending:
        done, _ = wait(pending, timeout=poll, return_when=FIRST_COMPLETED)
        while not started.empty():
            progress.started(started.get())
        progress.tick()
        for fut in [f for f in pending if f in done]:
            pending.remove(fut)
            yield fut


class _Stop(Exception):
    """The run stops and keeps nothing: ``task``, the summary's line; ``why``, the note on standard error."""

    def __init__(self, task: str, why: str, result: NotebookResult | None):
        super().__init__(task)
        self.task, self.why, self.result = task, why, result


# ----------------------------------------------------------------------------- merging outputs
_NOT_OUTPUTS = (".ipynb_checkpoints", "__pycache__")


def _collect(out: Path, name: str) -> tuple[list[str], dict]:
    """Move ``OUT/.staging/NAME/**`` to ``OUT/**``: the files moved (sorted) and their provenance records."""
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


def _remove_previous_outputs(out: Path, previous: dict, names: set[str] | None) -> None:
    """Delete the files the previous run attributed to the notebooks about to run again (all: ``None``)."""
    for nb in previous.get("notebooks", []) + previous.get("earlier", []):
        if names is not None and nb.get("name") not in names:
            continue
        for rel in nb.get("outputs", []):
            p = (out / rel).resolve()
            if out.resolve() in p.parents and p.is_file():
                p.unlink()


def _task_order(paths: list[Path], previous: dict) -> list[Path]:
    """The notebooks longest first: by their seconds in the previous run, else guessed from the figures they save."""
    last = {nb["name"]: nb.get("seconds", 0) for nb in previous.get("notebooks", [])}

    def guess(p: Path) -> float:
        try:
            return 3.0 + 3.0 * p.read_text(encoding="utf-8").count("save_figure(")
        except OSError:
            return 0.0

    return sorted(paths, key=lambda p: (-last.get(p.stem, guess(p)), p.name))


# ----------------------------------------------------------------------------- the run
def run(data_dir, out_dir, options: RunOptions | None = None, *, stream=None, read_release=None,
        **settings) -> RunSummary:
    """Execute the notebooks on the release ``data_dir`` into ``out_dir`` as ``options`` (or ``**settings``, its
    fields) say; the summary table goes to ``stream`` (stdout), notes to stderr.  ``read_release()``: the release
    read leniently while the notebooks run (default: ``load_release``/``load_amc``).  With ``only`` the other
    notebooks' earlier outputs and records are kept."""
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


#: Parameters the runner owns, with the option that sets each: ``-p`` cannot set them.
OWNED = {"data_dir": "--data", "out_dir": "--out", "seed": "--seed", "n_boot": "--n-boot",
         "amc_data_dir": "--data (an Audio MultiChallenge release) or --include-examples"}


def _check_overrides(overrides) -> None:
    """``-p`` may not set what the runner owns (what is read and written, and the recorded seed)."""
    for name in sorted(set(overrides or {}) & set(OWNED)):
        raise InputError(f"-p {name}: `{name}` is set by the runner from {OWNED[name]} (it decides what the run "
                         f"reads and writes, and is recorded in run.json); give {OWNED[name]} instead", "parameters")


def _run_staged(stage: Path, final: Path, paths: list[Path], data: Path, opts: RunOptions,
                read_release) -> RunSummary:
    """The run of :func:`run`, into the staging folder ``stage`` (``final``: the folder it becomes)."""
    t_start = time.perf_counter()
    out = Path(stage)
    out.mkdir(parents=True, exist_ok=True)
    jobs = max(1, int(opts.jobs or os.cpu_count() or 1))
    previous = read_json(out / "run.json")
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
        _task(summary, "report", "report/", lambda: report.write_report(out, embed=opts.embed))
    _write_run(out, summary, t_start)
    return summary


def _write_run(out: Path, summary: RunSummary, t_start: float) -> None:
    summary.wall_seconds = round(time.perf_counter() - t_start, 2)
    try:
        text = json.dumps(summary.to_dict(), indent=1, sort_keys=True, default=str) + "\n"
        writing.atomic_text(out / "run.json", text)
    except OSError as exc:
        raise _unwritable("run.json", exc) from exc


def _unwritable(what: str, exc: OSError) -> "_Stop":
    """The run stops (previous OUT kept) when one of its files cannot be written."""
    why = f"cannot write {what}: {exc.strerror or exc}"
    return _Stop(f"stopped: {why}", why, None)


def _execute_all(out: Path, paths: list[Path], data: Path, opts: RunOptions, jobs: int, previous: dict, read_release):
    """Every notebook on the pool while the release is read: ``(results by name, release or its exception)``."""
    threads = max(1, (os.cpu_count() or 1) // jobs)
    results: dict[str, NotebookResult] = {}
    owner: dict[str, str] = {}
    scratch = out / STAGING / ".kernels"
    scratch.mkdir(parents=True, exist_ok=True)
    # spawn: workers start from a clean interpreter (forking a process that runs threads can deadlock)
    ctx = multiprocessing.get_context("spawn")
    # SIGHUP blocked while multiprocessing starts its resource tracker (which ignores only SIGINT and SIGTERM):
    # it inherits the mask, so a hang-up of the group is the runner's to handle; one arriving now waits
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGHUP})
    try:
        started = ctx.SimpleQueue()
        pool = ProcessPoolExecutor(max_workers=jobs, mp_context=ctx, initializer=_worker_init,
                                   initargs=(threads, started, str(scratch)))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
    kwargs = dict(data_dir=str(data), out_dir=str(out), seed=opts.seed, n_boot=opts.n_boot, overrides=opts.overrides,
                  timeout=opts.timeout, include_examples=opts.include_examples or bool(opts.only))
    progress = None
    try:
        futures = {pool.submit(_run_notebook, p, kwargs): p.stem for p in _task_order(paths, previous)}
        release = _read_release(data, read_release)   # (its findings printed before the bar starts)
        progress = _Progress(len(paths), opts)
        for fut in _completed(futures, started, progress):
            res = _result(fut, futures[fut])
            res.outputs, records = _collect(out, res.name)
            res.provenance = notebook_source(records, res.name)
            why = nothing_written(res)
            if why:
                res.status, res.reason = "skipped", why
            for o in res.outputs:
                if o in owner:
                    res.collisions.append(f"{o} (also written by {owner[o]})")
                owner[o] = res.name
            results[res.name] = res
            (out / STAGING / f"{res.name}.provenance.json").write_text(json.dumps(records))
            progress.done(res)
            if res.status == "failed" and not opts.keep_going:
                raise _Stop(f"stopped (--no-keep-going): {res.name} failed",
                            f"{res.name} failed and --no-keep-going is set", res)
    except BaseException:
        if progress is not None:
            progress.close()
        _stop_workers(pool)
        raise
    progress.close()
    pool.shutdown(wait=True)
    return results, release


def _result(fut, name: str) -> NotebookResult:
    try:
        return fut.result()
    except Exception as exc:  # noqa: BLE001 - a worker died: the notebook's result, reported
        return NotebookResult(name, "", "failed", error=ErrorCell(None, None, None, "", type(exc).__name__,
                                                                  str(exc), ""))


def _read_release(data: Path, read_release):
    """The release as the caller reads it (else read leniently here); an exception is returned, not raised."""
    try:
        release = read_release() if read_release is not None else None
        if release is not None:
            return release
        if is_amc(data):
            return load_amc(data, strict=False)
        return load_release(data, strict=False)
    except Exception as exc:  # noqa: BLE001 - reported as the release that could not be read
        return exc


def _merge_provenance(out: Path, summary: RunSummary, previous: dict, opts: RunOptions) -> None:
    """Merge the notebooks' records into ``OUT/provenance.json`` (with ``only``: over the others' earlier ones)."""
    parts = []
    if opts.only:
        try:
            kept = read_records(out)
        except ValueError:
            kept = {}
        ran = {r.name for r in summary.notebooks}
        parts.append({k: v for k, v in kept.items() if v.get("notebook") not in ran and (out / k).is_file()})
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
        if fp and fp != before and rel.get("path") and resolve(rel["path"]).resolve() == data:
            return f"{r.name} read another version of {data} than the runner ({fp[:19]}... vs {before[:19]}...)"
    return None


def _release_summary(summary: RunSummary, release, data: Path, opts: RunOptions) -> None:
    """What run.json and the report say about the release (mode, runs, counts, findings)."""
    info, problems = release_info(release, data, opts.compare_published)
    if "error" in info:
        summary.tasks_failed.append(f"load: {info['error']}")
    summary.release = {**info, "fingerprint": summary.release.get("fingerprint")}
    summary.problems = problems


def _task(summary: RunSummary, what: str, file: str, work):
    """``work()``; a file it cannot write stops the run (previous OUT kept), any other error is a failed task of
    the run (``{"error": ...}`` returned, said in the summary and the report)."""
    try:
        return work()
    except OSError as exc:   # disk full, a size limit: the run cannot be complete
        raise _unwritable(file, exc) from exc
    except Exception as exc:  # noqa: BLE001 - one failed task of the run, named
        summary.tasks_failed.append(f"{what}: {type(exc).__name__}: {exc}")
        return {"error": f"{type(exc).__name__}: {exc}"}


def _scoreboard(out: Path, summary: RunSummary) -> None:
    """``reproduction.csv`` from the notebooks' long-form numbers and ``audit.csv`` from the paper's."""
    t0 = time.perf_counter()

    def reproduction() -> dict:
        table = sb.reproduction_from_files(out, benchmark=summary.release.get("benchmark"))
        sb.write_csv(table, out / "reproduction.csv")
        return sb.summarize(table)

    summary.reproduction = _task(summary, "reproduction", "reproduction.csv", reproduction)
    if summary.release.get("benchmark") != "audio-multichallenge":
        summary.audit = _task(summary, "audit", "audit.csv", lambda: sb.write_audit(out / "audit.csv"))
    summary.reproduction["seconds"] = round(time.perf_counter() - t0, 2)


class _Progress:
    """Progress on standard error: a bar on a terminal, else a line per notebook; nothing when ``quiet``."""

    def __init__(self, total: int, opts: RunOptions):
        self.bar, self.n, self.total, self.running = None, 0, total, []
        self.lines = not opts.quiet
        if not opts.quiet and (opts.progress if opts.progress is not None else sys.stderr.isatty()):
            from tqdm import tqdm

            size = shutil.get_terminal_size()   # 80 x 24 where the terminal says 0 x 0 (tqdm would hide the bar)
            self.bar = tqdm(total=total, desc="reproduce", unit="notebook", file=sys.stderr, ncols=size.columns,
                            nrows=size.lines, bar_format="{desc} {n_fmt}/{total_fmt} |{bar:20}| {elapsed}{postfix}")

    def started(self, name: str) -> None:
        self.running.append(name)
        self._show()

    def _show(self) -> None:
        if self.bar is not None:
            self.bar.set_postfix_str(f"running {', '.join(self.running)}" if self.running else "", refresh=True)

    def tick(self) -> None:
        if self.bar is not None:
            self.bar.refresh()

    def done(self, res: NotebookResult) -> None:
        self.n += 1
        if res.name in self.running:
            self.running.remove(res.name)
        if self.bar is not None:
            self.bar.write(f"  {res.status:<7} {res.name} ({res.seconds:.1f} s)", file=sys.stderr)
            self.bar.update(1)
            self._show()
        elif self.lines:
            print(f"[{self.n}/{self.total}] {res.name}: {res.status}", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
