"""The reproduction runner: execute every notebook, compare with the paper, write the report.

``voxmem-analysis reproduce --data DIR --out DIR`` (see :func:`run`) does, in parallel over a
process pool of ``jobs`` workers:

* every notebook ``notebooks/NN_name.py`` (a jupytext percent script whose first cell is
  tagged ``parameters``) is converted to ``.ipynb`` and executed with papermill in kernel
  ``python3``.  The runner injects the parameters a notebook declares among
  :data:`RUNNER_PARAMETERS` (``data_dir``, ``out_dir``, ``seed``, ``n_boot``; ``interactive``
  is set to ``False``), plus ``manifest`` / ``questions`` for notebooks that take a
  LongMemEval manifest (run on ``data/examples/longmemeval/`` only with ``include_examples``
  or when named in ``only``; skipped, with the reason, otherwise), and ``amc_data_dir`` for the
  Audio MultiChallenge notebook (``--data`` if it is an AMC release; the bundled SYNTHETIC
  ``data/synthetic-amc`` on the paper's release or with ``include_examples``).  On an AMC release
  every other notebook is skipped: "not a VoxMem release".  Each notebook writes into its own staging folder, whose files are then moved
  under ``OUT`` -- so every output is attributed to the notebook that wrote it, and a file
  written by two notebooks is reported.
* each worker keeps one warm kernel (:mod:`voxmem_analysis.reproduce.kernels`) for the notebooks
  it executes: started and loaded with the libraries once, emptied before each notebook (names,
  figures, working folder, cell numbers) and replaced when a notebook changed process-wide
  settings (``rcParams``, warning filters, options, environment) or died; ``fresh_kernels=True``
  (``--fresh-kernels``) starts a new kernel per notebook instead.  The release the command read
  to report its findings seeds the run's release cache, so the notebooks do not parse it again.
* one task reads the release (models, budgets, counts: the report's "your runs") and, in
  ``paper`` mode only (:mod:`voxmem_analysis.reproduce.mode`: the paper's release, or
  ``compare_published``), computes ``OUT/reproduction.csv`` (:mod:`voxmem_analysis.reproduce.scoreboard`) and
  ``OUT/audit.csv`` (``voxmem_analysis.reproduce.paper_audit.audit_published``) and counts the release's
  validation problems.  It runs last, in a worker's warm kernel when there is one.

A failing notebook stops nothing else: its executed copy (with the error) is kept, its error
cell (index, source excerpt, exception, line of the script) is reported, and :func:`run`
returns a summary whose ``exit_code`` is 1.  ``OUT/run.json`` records the run (it is the
input of :mod:`voxmem_analysis.reproduce.report`, which writes ``OUT/report/index.html``).

The output is all or nothing (:mod:`voxmem_analysis.reproduce.atomic`): the run is built in a
staging folder beside ``OUT``, swapped in when complete, under a lock; an interrupted run
(Ctrl-C stops the workers; ``keep_going=False`` after a failure) leaves ``OUT`` as it was.

Layout of ``OUT``::

    figures/    PNG + PDF + CSV of every figure (written by the notebooks)
    tables/     CSV + Markdown + LaTeX of every table (written by the notebooks)
    notebooks/  the executed notebooks (NAME.ipynb) and their kernel logs (NAME.log)
    reproduction.csv, audit.csv, run.json
    report/index.html

Only this module's standard-library imports happen at import time; papermill, jupytext and
pandas are imported inside the worker processes.
"""
from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import shutil
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

__all__ = [
    "NOTEBOOKS_DIR", "REPO_ROOT", "RUNNER_PARAMETERS", "ErrorCell", "NotebookResult", "RunSummary",
    "discover", "select", "declared_parameters", "execute_notebook", "run",
]

#: Folders resolved from the package's location, never from the working directory.
PACKAGE_DIR = Path(__file__).resolve().parents[1]
REPO_ROOT = PACKAGE_DIR.parent
NOTEBOOKS_DIR = REPO_ROOT / "notebooks"
LONGMEMEVAL_EXAMPLE = REPO_ROOT / "data" / "examples" / "longmemeval"
#: The bundled SYNTHETIC Audio MultiChallenge release (notebooks declaring ``amc_data_dir``).
AMC_EXAMPLE = REPO_ROOT / "data" / "synthetic-amc"
KERNEL_NAME = "python3"
#: Parameters the runner sets in every notebook that declares them.
RUNNER_PARAMETERS = ("data_dir", "out_dir", "seed", "n_boot")
_NOTEBOOK_NAME = re.compile(r"^\d{2}_[A-Za-z0-9_]+$")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_STAGING = ".staging"
_EXCERPT_LINES = 12


# ----------------------------------------------------------------------------- records
@dataclass
class ErrorCell:
    """Where and how a notebook failed."""

    cell_index: int | None      # index of the failing cell in the executed notebook
    exec_count: int | None      # its ``In [n]`` number
    line: int | None            # first line of the cell's source in the ``.py`` script
    source: str                 # the cell's source (first lines)
    ename: str                  # exception class
    evalue: str                 # exception message
    traceback: str              # the traceback's last lines, colours stripped

    def headline(self) -> str:
        where = f"cell {self.cell_index}" if self.cell_index is not None else "before any cell ran"
        if self.line is not None:
            where += f" (script line {self.line})"
        return f"{where}: {self.ename}: {self.evalue}".rstrip(": ")


@dataclass
class NotebookResult:
    """Outcome of one notebook (``status``: ``ok``, ``failed`` or ``skipped``)."""

    name: str
    path: str
    status: str
    seconds: float = 0.0
    outputs: list[str] = field(default_factory=list)     # relative to OUT, sorted
    executed: str | None = None                          # relative to OUT
    parameters: dict = field(default_factory=dict)
    reason: str | None = None                            # why skipped
    error: ErrorCell | None = None
    collisions: list[str] = field(default_factory=list)  # outputs another notebook also wrote

    def to_dict(self) -> dict:
        return asdict(self)


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


# ----------------------------------------------------------------------------- discovery
def discover(notebooks_dir=None) -> list[Path]:
    """The notebooks ``NN_name.py`` of ``notebooks_dir`` (default: the repository's), sorted."""
    d = Path(notebooks_dir) if notebooks_dir is not None else NOTEBOOKS_DIR
    if not d.is_dir():
        raise FileNotFoundError(f"notebooks directory {str(d)!r} does not exist (pass --notebooks DIR)")
    return sorted((p for p in d.glob("*.py") if _NOTEBOOK_NAME.match(p.stem)), key=lambda p: p.name)


def select(paths: list[Path], only) -> list[Path]:
    """Keep the notebooks named in ``only`` (``"10_main_results"``, ``"main_results"`` or ``"10"``)."""
    if not only:
        return list(paths)
    wanted = [w.strip() for w in (only.split(",") if isinstance(only, str) else only) if w.strip()]
    keep: list[Path] = []
    for w in wanted:
        w = w[:-3] if w.endswith(".py") else w
        hits = [p for p in paths if w in (p.stem, p.stem.split("_", 1)[0], p.stem.split("_", 1)[-1])]
        if not hits:
            from voxmem_analysis.errors import UnknownNameError

            raise UnknownNameError(f"no notebook named {w!r}; known: {', '.join(p.stem for p in paths)}", "only")
        keep += [p for p in hits if p not in keep]
    return sorted(keep, key=lambda p: p.name)


def declared_parameters(source: str) -> dict:
    """Names assigned in a ``parameters`` cell and their literal defaults (``...`` if not literal)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    out: dict = {}
    for node in tree.body:
        targets, value = [], None
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        for t in targets:
            if isinstance(t, ast.Name):
                try:
                    out[t.id] = ast.literal_eval(value)
                except (ValueError, SyntaxError, TypeError):
                    out[t.id] = ...
    return out


def _shown(path: Path) -> str:
    try:
        return path.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def _longmemeval_inputs() -> dict:
    """``manifest`` (and ``questions`` when there is one) of the bundled LongMemEval example."""
    manifest = LONGMEMEVAL_EXAMPLE / "manifest.csv"
    if not manifest.is_file():
        return {}
    found = {"manifest": str(manifest)}
    for pat in ("questions.*", "*question*.json", "*question*.jsonl", "*question*.csv"):
        hits = sorted(p for p in LONGMEMEVAL_EXAMPLE.glob(pat) if p.is_file())
        if hits:
            found["questions"] = str(hits[0])
            break
    return found


def _release_meta(path) -> dict:
    try:
        meta = json.loads((Path(path) / "release.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def _is_amc(path) -> bool:
    return str(_release_meta(path).get("benchmark", "")).lower() == "audio-multichallenge"


def _is_paper_release(path) -> bool:
    from voxmem_analysis.reproduce.mode import is_paper_release

    return is_paper_release(_release_meta(path))


def _amc_release_dir(data_dir, include_examples: bool) -> str | None:
    """``data_dir`` when it is an Audio MultiChallenge release (release.json ``"benchmark":
    "audio-multichallenge"``), else the bundled synthetic one on the paper's release (reproduction
    mode regenerates every table and figure from ``data/``) or when examples are included."""
    if _is_amc(data_dir):
        return str(data_dir)
    bundled = include_examples or _is_paper_release(data_dir)
    return str(AMC_EXAMPLE) if bundled and _is_amc(AMC_EXAMPLE) else None


def not_for_release(script: str, data_dir) -> str | None:
    """Why a notebook does not run on ``data_dir``: on an Audio MultiChallenge release only the
    notebooks taking ``amc_data_dir`` run; the others are skipped as "not a VoxMem release"."""
    if not _is_amc(data_dir) or re.search(r"^amc_data_dir\s*[:=]", script, re.MULTILINE):
        return None
    return "not a VoxMem release (an Audio MultiChallenge release: only the AMC notebooks run on it)"


_REQUIRES = re.compile(r"^#\s*requires:\s*(.+)$", re.MULTILINE)


def missing_parts(script: str, data_dir) -> list[str]:
    """Optional release parts a notebook declares with a ``# requires: judge2, ablation`` line
    that are absent (no file below ``DATA/part``). Such a notebook is skipped, not failed."""
    m = _REQUIRES.search(script)
    if not m:
        return []
    parts = [p.strip() for p in m.group(1).split(",") if p.strip()]
    root = Path(data_dir)
    return [p for p in parts if not (root / p).is_dir() or not any(f.is_file() for f in (root / p).rglob("*"))]


def plan_parameters(declared: dict, *, data_dir: str, out_dir: str, seed: int, n_boot: int,
                    overrides: dict | None = None, include_examples: bool = True) -> tuple[dict, str | None]:
    """The parameters to inject into a notebook declaring ``declared``, or a reason to skip it.

    A notebook taking a LongMemEval ``manifest`` runs on the bundled example, not on the release:
    it is skipped unless ``include_examples``.
    """
    given = {"data_dir": data_dir, "out_dir": out_dir, "seed": seed, "n_boot": n_boot, "interactive": False}
    inject = {k: v for k, v in given.items() if k in declared}
    if "manifest" in declared and not include_examples:
        return {}, ("runs on the bundled LongMemEval example (synthetic), not on this release; "
                    "add --include-examples to run it")
    if "manifest" in declared:
        lme = _longmemeval_inputs()
        if not lme:
            return {}, f"takes a LongMemEval `manifest`; no example at {_shown(LONGMEMEVAL_EXAMPLE / 'manifest.csv')}"
        inject.update({k: v for k, v in lme.items() if k in declared})
    elif "amc_data_dir" in declared:
        amc = _amc_release_dir(data_dir, include_examples)
        if amc is None:
            return {}, ("takes an Audio MultiChallenge release (`amc_data_dir`): --data is none, and the bundled "
                        f"synthetic one ({_shown(AMC_EXAMPLE)}) runs only on the paper's release or with "
                        "--include-examples")
        inject["amc_data_dir"] = amc
    elif "data_dir" not in declared:
        return {}, "its parameters cell declares neither `data_dir` nor `manifest`"
    for k, v in (overrides or {}).items():
        if k in declared:
            inject[k] = v
    return inject, None


# ----------------------------------------------------------------------------- one notebook
def _script_line(script: str, cell_source: str) -> int | None:
    """Line of ``script`` where the cell with ``cell_source`` starts (its first non-blank line).

    The whole cell is matched as a block of consecutive lines, so a line repeated elsewhere
    (an import, a ``plt.show()``) does not mislead; failing that, the first line alone.
    """
    src = [l.rstrip() for l in cell_source.splitlines()]
    while src and not src[0]:
        src.pop(0)
    if not src:
        return None
    lines = [l.rstrip() for l in script.splitlines()]
    k = len(src)
    for i in range(len(lines) - k + 1):
        if lines[i:i + k] == src:
            return i + 1
    return next((i for i, l in enumerate(lines, 1) if l == src[0]), None)


def _error_from_exception(exc, script: str) -> ErrorCell:
    from papermill.exceptions import PapermillExecutionError

    if isinstance(exc, PapermillExecutionError):
        src = exc.source or ""
        tb = _ANSI.sub("", "\n".join(exc.traceback or []))
        return ErrorCell(exc.cell_index, exc.exec_count, _script_line(script, src),
                         "\n".join(src.splitlines()[:_EXCERPT_LINES]), exc.ename, str(exc.evalue),
                         "\n".join(tb.splitlines()[-15:]))
    # kernel death, time-out, conversion failure...: no cell to point at
    return ErrorCell(getattr(exc, "cell_index", None), None, None, "", type(exc).__name__,
                     _ANSI.sub("", str(exc)).strip()[:2000], "")


def execute_notebook(path, *, data_dir, out_dir, seed: int = 0, n_boot: int = 10_000,
                     overrides: dict | None = None, timeout: float | None = 900,
                     include_examples: bool = True) -> NotebookResult:
    """Convert and execute one notebook; outputs go to ``OUT/.staging/NAME`` (see :func:`run`).

    Never raises for a failing notebook: the failure is in the result.
    """
    t0 = time.perf_counter()
    path, out = Path(path), Path(out_dir)
    name = path.stem
    stage = out / _STAGING / name
    result = NotebookResult(name=name, path=str(path), status="ok")
    script = path.read_text(encoding="utf-8")
    try:
        import jupytext
        import nbformat

        other = not_for_release(script, data_dir)
        if other:
            result.status, result.reason = "skipped", other
            return result
        missing = missing_parts(script, data_dir)
        if missing:
            result.status = "skipped"
            result.reason = "the release has no " + ", ".join(f"{m}/ folder" for m in missing) + " (optional part)"
            return result
        nb = jupytext.reads(script, fmt="py:percent")
        pcell = next((c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
        if pcell is None:
            result.status, result.reason = "skipped", "no cell tagged `parameters`"
            return result
        inject, reason = plan_parameters(declared_parameters(pcell.source), data_dir=str(data_dir),
                                         out_dir=str(stage), seed=seed, n_boot=n_boot, overrides=overrides,
                                         include_examples=include_examples)
        result.parameters = {k: v for k, v in inject.items() if k != "out_dir"}
        if reason:
            result.status, result.reason = "skipped", reason
            return result
        if stage.exists():
            shutil.rmtree(stage)
        stage.mkdir(parents=True)
        nb.metadata["kernelspec"] = {"name": KERNEL_NAME, "display_name": "Python 3", "language": "python"}
        nb.metadata.setdefault("language_info", {"name": "python"})
        src_ipynb = out / _STAGING / f"{name}.input.ipynb"
        nbformat.write(nb, str(src_ipynb))
        (out / "notebooks").mkdir(parents=True, exist_ok=True)
        executed = out / "notebooks" / f"{name}.ipynb"
        result.executed = f"notebooks/{name}.ipynb"
        _execute(src_ipynb, executed, inject, stage, out / "notebooks" / f"{name}.log", timeout)
        src_ipynb.unlink(missing_ok=True)
    except Exception as exc:  # noqa: BLE001 - any failure is the notebook's result, not the runner's
        result.status = "failed"
        try:
            result.error = _error_from_exception(exc, script)
        except Exception:  # noqa: BLE001 - papermill itself missing
            result.error = ErrorCell(None, None, None, "", type(exc).__name__, str(exc), "")
    finally:
        result.seconds = round(time.perf_counter() - t0, 2)
    return result


def _worker_init(threads: int | None, cache_dir: str | None = None, memo_dir: str | None = None,
                 warm_kernels: bool = False, runner: int | None = None) -> None:
    """Set up a worker process of the pool (the kernels it starts inherit its environment).

    * ``PYTHONHASHSEED=0`` and thread pools sized to ``cores // jobs`` (polars, BLAS), so
      parallel notebooks neither oversubscribe the cores nor depend on hash order;
    * the optional ``rfc3987_syntax`` module is kept out: jsonschema imports it only for IRI
      format checks (which nbformat never uses), and it builds a parser grammar at import
      time, costing about 3 s per process on a 2-core machine.
    """
    _worker_signals()
    os.environ["PYTHONHASHSEED"] = "0"
    if warm_kernels:  # one kernel for the notebooks of this worker, stopped when the worker ends
        import multiprocessing.util

        _WARM["enabled"] = True
        multiprocessing.util.Finalize(None, _drop_warm_kernel, exitpriority=50)
    _exit_with_runner(runner)
    if cache_dir:  # notebooks of this run parse the release once (see io.cache.CACHE_ENV)
        from voxmem_analysis.io.cache import CACHE_ENV   # not io.release: a worker needs no polars

        os.environ[CACHE_ENV] = cache_dir
    if memo_dir:  # an artifact computed by a notebook is read back by reproduction.csv (artifacts.memoised)
        from voxmem_analysis.artifacts import MEMO_ENV

        os.environ[MEMO_ENV] = memo_dir
    if threads:
        for var in ("POLARS_MAX_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(threads)
    if "jsonschema" not in sys.modules:
        sys.modules.setdefault("rfc3987_syntax", None)


def _exit_with_runner(runner: int | None, poll: float = 1.0) -> None:
    """End this worker (and its warm kernel) when the runner process ``runner`` is gone without
    stopping it (killed).  The worker's parent is multiprocessing's fork server, which every worker
    keeps alive, so the parent never changes: the runner's own pid is watched.  Without this an
    orphaned worker and its kernel would wait for work forever."""
    import threading

    if not runner:
        return

    def gone() -> bool:
        try:
            os.kill(runner, 0)
        except ProcessLookupError:
            return True
        except OSError:  # exists, not ours to signal
            return False
        return False

    def watch():
        while True:
            time.sleep(poll)
            if gone():
                _drop_warm_kernel(kill=True)
                os._exit(1)

    threading.Thread(target=watch, name="voxmem-runner-watch", daemon=True).start()


def _worker_signals() -> None:
    """In a worker process: ignore Ctrl-C (the main process stops the run, without a
    KeyboardInterrupt traceback from every worker); SIGTERM -- how the main process ends a
    worker -- raises SystemExit, so ``finally`` blocks (papermill's kernel shutdown) run."""
    def _exit(signum, frame):  # noqa: ARG001 - signal handler signature
        # the run is being stopped on purpose: the kernel's death then surfaces in nbclient's pending
        # asyncio tasks as "Task exception was never retrieved ... DeadKernelError" tracebacks on
        # stderr, noise on top of the main process's one message; keep them out of the terminal
        import logging

        quiet = logging.getLogger("asyncio")
        quiet.addHandler(logging.NullHandler())
        quiet.propagate = False
        _drop_warm_kernel(kill=True)  # not papermill's: it does not own a warm kernel
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit)


#: This worker's warm kernel (:mod:`voxmem_analysis.reproduce.kernels`); ``enabled`` is set by
#: :func:`_worker_init` (``fresh_kernels=False``); outside a pool every notebook gets a fresh kernel.
_WARM: dict = {"enabled": False, "kernel": None}


def _drop_warm_kernel(kill: bool = False) -> None:
    kernel, _WARM["kernel"] = _WARM["kernel"], None
    if kernel is not None:
        kernel.kill() if kill else kernel.shutdown()


def _note_in_log(log_path: Path, text: str) -> None:
    """One line of the runner's own in a notebook's kernel log."""
    try:
        with open(log_path, "a", encoding="utf-8") as fh:
            fh.write(f"[voxmem-analysis reproduce] {text}\n")
    except OSError:
        pass


def _ready_kernel(cwd: Path, log_path: Path):
    """This worker's warm kernel, prepared for a notebook working in ``cwd``: started on first use,
    started again when the last notebook changed process-wide state or the kernel died.  None
    when warm kernels are off or one cannot be started here (the notebook then gets a fresh
    kernel); why a kernel was replaced or could not start is noted in the notebook's ``log_path``."""
    if not _WARM["enabled"]:
        return None
    from voxmem_analysis.reproduce.kernels import WarmKernel, WarmKernelError

    for attempt in range(2):
        kernel = _WARM["kernel"]
        if kernel is None:
            try:
                kernel = _WARM["kernel"] = WarmKernel(KERNEL_NAME, cwd.parent / f"kernel-{os.getpid()}-{attempt}.log", cwd)
            except Exception as exc:  # noqa: BLE001 - e.g. a library missing for the warm-up: fresh kernels then
                _note_in_log(log_path, f"no warm kernel ({type(exc).__name__}: {exc}); fresh kernels from now on")
                _WARM["enabled"] = False
                return None
        try:
            if kernel.prepare(cwd):
                return kernel
            why = "the last notebook changed " + ", ".join(kernel.changed)
        except WarmKernelError as exc:
            why = str(exc)
        _note_in_log(log_path, f"warm kernel replaced before this notebook: {why}")
        _drop_warm_kernel()
    return None


def _execute(src, dst, params, cwd, log_path, timeout) -> None:
    """papermill in this worker's warm kernel (see :func:`_ready_kernel`), else in a fresh kernel,
    with the kernel's stderr (start-up warnings, logs) sent to ``log_path``."""
    import logging

    import papermill as pm

    logging.getLogger("papermill").setLevel(logging.WARNING)
    kernel = _ready_kernel(Path(cwd), Path(log_path))
    if kernel is not None:
        from papermill.exceptions import PapermillExecutionError

        from voxmem_analysis.reproduce.kernels import register_engine

        try:
            pm.execute_notebook(str(src), str(dst), parameters=params, kernel_name=KERNEL_NAME, language="python",
                                progress_bar=False, log_output=False, execution_timeout=timeout,
                                request_save_on_cell_execute=False, engine_name=register_engine(),
                                km=kernel.km, kc=kernel.kc, coalesce_streams=True)
        except PapermillExecutionError:
            raise  # a cell's own error: the kernel is fine
        except BaseException:
            _drop_warm_kernel()  # timed out, died, interrupted: never reused
            raise
        finally:
            with open(log_path, "a", encoding="utf-8") as fh:
                fh.write(kernel.take_log())
        return
    log = open(log_path, "a", encoding="utf-8")  # noqa: SIM115 - closed below
    saved_fd = os.dup(2)
    sys.stderr.flush()
    os.dup2(log.fileno(), 2)
    try:
        pm.execute_notebook(str(src), str(dst), parameters=params, kernel_name=KERNEL_NAME, language="python",
                            progress_bar=False, log_output=False, cwd=str(cwd), execution_timeout=timeout,
                            request_save_on_cell_execute=False, coalesce_streams=True)
    finally:
        sys.stderr.flush()
        os.dup2(saved_fd, 2)
        os.close(saved_fd)
        log.close()


# ----------------------------------------------------------------------------- reproduction task
def reproduction_task(data_dir, out_dir, *, seed: int = 0, n_boot: int = 10_000,
                      compare_published: bool = False) -> dict:
    """Load the release, write ``reproduction.csv`` and ``audit.csv``; return what the report needs.

    Only in ``paper`` mode (:mod:`voxmem_analysis.reproduce.mode`: the paper's release, or
    ``compare_published``); on any other release the report describes the runs instead.
    """
    t0 = time.perf_counter()
    out = Path(out_dir)
    info: dict = {"release": {}, "reproduction": {}, "audit": {}, "problems": [], "failed": []}
    if _is_amc(data_dir):
        _amc_reproduction(data_dir, out, info, seed=seed, n_boot=n_boot)
        info["seconds"] = round(time.perf_counter() - t0, 2)
        return info
    try:
        from voxmem_analysis.io.release import load_release

        release = load_release(data_dir, strict=False)
        info["release"] = {"path": str(Path(data_dir).resolve()), "name": release.name,
                           "synthetic": bool(release.synthetic), "label": release.label(),
                           "description": str(release.meta.get("description") or ""),
                           "predictions": int(release.frame.height),
                           "models": len(release.model_order()), "stats": dict(release.stats)}
        counts: dict = {}
        for p in release.problems:
            key = (p.severity, p.code)
            c = counts.setdefault(key, {"severity": p.severity, "code": p.code, "count": 0, "example": str(p)})
            c["count"] += int(getattr(p, "count", 1) or 1)
        info["problems"] = [counts[k] for k in sorted(counts)]
        from voxmem_analysis.reproduce.mode import describe_runs, is_paper_release, report_mode

        info["release"].update(mode=report_mode(release.meta, compare_published),
                               paper_release=is_paper_release(release.meta), runs=describe_runs(release),
                               model_names=release.model_order())
    except Exception as exc:  # noqa: BLE001
        info["failed"].append("load")
        info["release"] = {"path": str(Path(data_dir).resolve()), "error": f"{type(exc).__name__}: {exc}",
                           "synthetic": None}
        info["seconds"] = round(time.perf_counter() - t0, 2)
        return info
    if info["release"]["mode"] != "paper":
        info["seconds"] = round(time.perf_counter() - t0, 2)
        return info
    try:
        from voxmem_analysis.reproduce import scoreboard as rp

        table = _with_amc_rows(rp.reproduction_table(release, seed=seed, n_boot=n_boot), data_dir,
                               seed=seed, n_boot=n_boot)
        rp.write_csv(table, out / "reproduction.csv")
        info["reproduction"] = rp.summarize(table)
    except Exception as exc:  # noqa: BLE001
        info["failed"].append("reproduction")
        info["reproduction"] = {"error": f"{type(exc).__name__}: {exc}"}
    try:
        from voxmem_analysis.reproduce.paper_audit import audit_published

        audit = audit_published()
        audit.to_csv(out / "audit.csv", index=False, float_format="%.6g", lineterminator="\n")
        holds = audit["holds"].astype(str).str.lower().isin(["true", "1"]) if "holds" in audit else None
        info["audit"] = {"identities": int(len(audit)),
                         "hold": int(holds.sum()) if holds is not None else None,
                         "fail": int((~holds).sum()) if holds is not None else None}
    except Exception as exc:  # noqa: BLE001
        info["failed"].append("audit")
        info["audit"] = {"error": f"{type(exc).__name__}: {exc}"}
    info["seconds"] = round(time.perf_counter() - t0, 2)
    return info


def _reproduction_in_worker(data_dir, out_dir, *, seed: int, n_boot: int, compare_published: bool,
                            timeout: float | None) -> dict:
    """:func:`reproduction_task` in this worker's warm kernel (its libraries are imported there
    already), else in the worker itself."""
    kwargs = {"data_dir": data_dir, "out_dir": out_dir, "seed": seed, "n_boot": n_boot,
              "compare_published": compare_published}
    folder = Path(out_dir) / _STAGING / "reproduction"
    folder.mkdir(parents=True, exist_ok=True)
    kernel = _ready_kernel(folder, folder / "kernel.log")
    if kernel is not None:
        from voxmem_analysis.reproduce.kernels import WarmKernelError

        try:
            return kernel.call(f"{__name__}.reproduction_task", kwargs, folder / "result.pickle", timeout=timeout)
        except (WarmKernelError, OSError, EOFError):
            _drop_warm_kernel()   # and compute it here
    return reproduction_task(**kwargs)


def _amc_reproduction(data_dir, out: Path, info: dict, *, seed: int, n_boot: int) -> None:
    """An Audio MultiChallenge release: ``reproduction.csv`` against the AMC paper's numbers
    (``published(benchmark="amc")``, same tolerance rules; the paper's known misprint marked
    ``paper_inconsistent`` by :mod:`voxmem_analysis.reproduce.amc`); no audit.csv (the AMC paper's
    inconsistencies are listed by ``voxmem_analysis.synth.amc.inconsistencies``)."""
    try:
        from voxmem_analysis.io.amc import load_amc
        from voxmem_analysis.reproduce.amc import release_info

        release = load_amc(data_dir, strict=False)
        info["release"] = {**release_info(release), "mode": "paper", "paper_release": False, "runs": []}
        info["problems"] = [{"severity": p.severity, "code": p.code, "count": p.count, "example": str(p)}
                            for p in release.problems]
    except Exception as exc:  # noqa: BLE001
        info["failed"].append("load")
        info["release"] = {"path": str(Path(data_dir).resolve()), "error": f"{type(exc).__name__}: {exc}",
                           "synthetic": None}
        return
    try:
        from voxmem_analysis.reproduce import scoreboard as rp
        from voxmem_analysis.reproduce.amc import amc_scoreboard

        table = amc_scoreboard(release, seed=seed, n_boot=n_boot)
        rp.write_csv(table, out / "reproduction.csv")
        info["reproduction"] = rp.summarize(table)
    except Exception as exc:  # noqa: BLE001
        info["failed"].append("reproduction")
        info["reproduction"] = {"error": f"{type(exc).__name__}: {exc}"}


def _with_amc_rows(table, data_dir, *, seed: int, n_boot: int):
    """On the paper's release: the VoxMem scoreboard followed by the 214 AMC rows computed from the
    bundled SYNTHETIC AMC release (:mod:`voxmem_analysis.reproduce.amc`); else ``table`` unchanged."""
    if not _is_paper_release(data_dir) or not _is_amc(AMC_EXAMPLE):
        return table
    import pandas as pd

    from voxmem_analysis.reproduce.amc import amc_scoreboard

    amc = amc_scoreboard(AMC_EXAMPLE, seed=seed, n_boot=n_boot)
    both = pd.concat([table, amc], ignore_index=True)
    both.attrs["artifact_errors"] = {**table.attrs.get("artifact_errors", {}), **amc.attrs.get("artifact_errors", {})}
    return both


# ----------------------------------------------------------------------------- merging outputs
def _collect(out: Path, name: str) -> list[str]:
    """Move ``OUT/.staging/NAME/**`` to ``OUT/**``; the moved files, relative to OUT, sorted."""
    stage = out / _STAGING / name
    moved: list[str] = []
    if not stage.is_dir():
        return moved
    for f in sorted(p for p in stage.rglob("*") if p.is_file()):
        rel = f.relative_to(stage)
        if rel.parts[0] in (".ipynb_checkpoints", "__pycache__"):
            continue
        dst = out / rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        os.replace(f, dst)
        moved.append(rel.as_posix())
    shutil.rmtree(stage, ignore_errors=True)
    return moved


def _previous_run(out: Path) -> dict:
    try:
        return json.loads((out / "run.json").read_text())
    except (OSError, ValueError):
        return {}


def _remove_previous_outputs(out: Path, previous: dict, names: set[str] | None) -> None:
    """Delete the files the previous run attributed to the notebooks about to run again (all: ``None``)."""
    for nb in previous.get("notebooks", []) + previous.get("earlier", []):
        if names is not None and nb.get("name") not in names:
            continue
        for rel in nb.get("outputs", []):
            p = (out / rel).resolve()
            if out.resolve() in p.parents and p.is_file():
                p.unlink()


# ----------------------------------------------------------------------------- the run
def _estimated_seconds(path: Path) -> float:
    """A notebook's expected time with no earlier run to go by: rendering figures (PNG + PDF) is most
    of it on the paper's release, so about 3 s per ``save_figure`` call plus kernel start-up."""
    try:
        return 3.0 + 3.0 * path.read_text(encoding="utf-8").count("save_figure(")
    except OSError:
        return 0.0


def run(data_dir, out_dir, *, jobs: int | None = None, seed: int = 0, n_boot: int = 10_000, only=None,
        notebooks_dir=None, overrides: dict | None = None, timeout: float | None = 900,
        progress: bool | None = None, reproduction: bool = True, report: bool = True,
        stream=None, compare_published: bool = False, include_examples: bool = False,
        embed: bool = False, keep_going: bool = True, fresh_kernels: bool = False, preloaded=None) -> RunSummary:
    """Execute the notebooks and the reproduction task in parallel; write run.json and the report.

    Parameters
    ----------
    data_dir, out_dir : path
        Release directory read by every notebook; output folder (created; see "Output folder").
    jobs : int
        Worker processes (default: the machine's cores).
    seed, n_boot : int
        Passed to every notebook declaring them and to ``reproduction.csv``.
    only : str or list of str
        Run only these notebooks (``"10_main_results,20"``); earlier outputs of the others stay.
    notebooks_dir : path
        Folder of notebooks (default: the repository's ``notebooks/``).
    overrides : dict
        Extra parameter values, set in the notebooks that declare them.
    progress : bool
        tqdm progress bar (default: when stderr is a terminal; otherwise one line per task).
    reproduction, report : bool
        Also write reproduction.csv/audit.csv (paper mode only), and report/index.html.
    compare_published : bool
        Write the reproduction scoreboard and the paper audit even when the release is not the
        paper's (:mod:`voxmem_analysis.reproduce.mode`).
    include_examples : bool
        Also run the notebooks on bundled examples (LongMemEval); always when named in ``only``.
    embed : bool
        Inline the figures into report/index.html (one shareable file).
    keep_going : bool
        ``True`` (default): a failing notebook stops nothing else and is reported in the new
        output.  ``False``: the first failure stops the run; the previous output stays as it was.
    fresh_kernels : bool
        ``False`` (default): each worker keeps one warm kernel for the notebooks it runs, emptied
        before each and replaced when a notebook changed process-wide settings
        (:mod:`voxmem_analysis.reproduce.kernels`).  ``True``: a new kernel per notebook.
    preloaded : Release or callable, optional
        ``data_dir`` as read by the caller (``load_release``, default rules), or a function
        returning it, called once the workers are starting (``reproduce`` prints the release's
        findings there): it seeds the run's release cache, so no notebook parses the release again.

    Output folder
    -------------
    The run is built in a staging folder beside ``out_dir`` and swapped in only when complete
    (:mod:`voxmem_analysis.reproduce.atomic`): a lock refuses a second run into the same folder,
    an interrupted run (Ctrl-C, ``keep_going=False``) leaves the previous output untouched,
    ``out_dir`` then holds only this run's files (with ``only``: also the other notebooks'
    earlier outputs; files no run wrote are kept, and said so), and ``only`` with another
    release than the one in ``out_dir`` is refused (:class:`~voxmem_analysis.errors.OutputFolderError`).
    Notes on what was kept, moved or cleaned go to standard error.
    """
    from voxmem_analysis.reproduce.atomic import StagedOutput

    stream = stream or sys.stdout
    out = Path(out_dir).resolve()
    paths = select(discover(notebooks_dir), only)
    staged = StagedOutput(out, data=data_dir, only={p.stem for p in paths} if only else None)
    try:
        with staged:
            try:
                summary = _run_staged(staged.staging, out, paths, data_dir, jobs=jobs, seed=seed, n_boot=n_boot,
                                      only=only, overrides=overrides, timeout=timeout, progress=progress,
                                      reproduction=reproduction, report=report, compare_published=compare_published,
                                      include_examples=include_examples, embed=embed, keep_going=keep_going,
                                      fresh_kernels=fresh_kernels, preloaded=preloaded)
            except _Stop as stop:
                staged.abandon(f"{stop.label} failed and --no-keep-going is set")
                summary = RunSummary(str(Path(data_dir).resolve()), str(staged.staging), seed, n_boot, jobs or 0,
                                     [stop.result] if stop.result is not None else [],
                                     tasks_failed=[f"stopped (--no-keep-going): {stop.label} failed"])
                for r in summary.notebooks:
                    r.executed, r.outputs = None, []   # they were in the removed staging folder
            else:
                staged.commit()
    finally:
        for note in staged.notes:
            print(f"# {note}", file=sys.stderr)
    print_summary(summary, stream)
    return summary


class _Stop(Exception):
    """A task failed and ``keep_going`` is off: the run stops (see :func:`run`)."""

    def __init__(self, label: str, result: NotebookResult | None):
        super().__init__(label)
        self.label, self.result = label, result


@contextlib.contextmanager
def _stopping(pool):
    """Stop the pool's workers at once when the run is left early (Ctrl-C, ``keep_going=False``)."""
    try:
        yield
    except BaseException:
        _stop_pool(pool)
        raise


def _completed(futures, poll: float = 0.5):
    """The futures as they complete, like ``concurrent.futures.as_completed``, but waking every
    ``poll`` seconds: with many threads in the process (polars) Ctrl-C may reach another thread, and
    the main thread only raises KeyboardInterrupt once it runs again."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pending = list(futures)
    while pending:
        done, _ = wait(pending, timeout=poll, return_when=FIRST_COMPLETED)
        for fut in [f for f in pending if f in done]:
            pending.remove(fut)
            yield fut


def _stop_pool(pool, grace: float = 10.0) -> None:
    """Cancel what has not started and end the running workers: SIGTERM (a worker then leaves through
    its ``finally`` blocks, so papermill shuts its kernel down), SIGKILL after ``grace`` seconds."""
    procs = [p for p in (getattr(pool, "_processes", None) or {}).values() if p is not None]
    pool.shutdown(wait=False, cancel_futures=True)
    for p in procs:
        if p.is_alive():
            p.terminate()
    deadline = time.monotonic() + grace
    for p in procs:
        p.join(max(0.1, deadline - time.monotonic()))
        if p.is_alive():
            p.kill()
            p.join(1.0)


class _Background(threading.Thread):
    """``func(*args)`` in a thread; :meth:`join` re-raises what it raised."""

    def __init__(self, func, *args):
        super().__init__(name="voxmem-seed-release-cache", daemon=True)
        self._call, self._error = (func, args), None
        self.start()

    def run(self) -> None:
        try:
            self._call[0](*self._call[1])
        except BaseException as exc:  # noqa: BLE001 - handed to the joining thread
            self._error = exc

    def join(self, timeout=None) -> None:
        super().join(timeout)
        if self._error is not None:
            raise self._error


def _seed_release_cache(folder: Path, data: Path, release) -> None:
    """Put a release the caller already read (or a function returning it, called here) into the
    run's release cache; only the caller's own function may raise, the cache never fails the run."""
    if callable(release):
        release = release()
    if release is None or Path(getattr(release, "path", "")).resolve() != data:
        return
    try:
        from voxmem_analysis.io import cache
        from voxmem_analysis.io.release import Release, cache_key
        from voxmem_analysis.io.scoring import ScoringRules

        if isinstance(release, Release) and release.rules == ScoringRules():
            cache.write_entry(folder, cache_key(data, release.rules), release)
    except Exception:  # noqa: BLE001 - the notebooks then read the release themselves
        pass


def _task_order(paths: list[Path], previous: dict, jobs: int, reproduction: bool) -> list[Path | None]:
    """The tasks in the order they are handed to the workers; ``None`` is reproduction.csv.

    Notebooks go longest first (as measured by the previous run in OUT, else estimated from the
    figures each saves), which keeps both workers busy until the end.  reproduction.csv comes after
    them (it reads the artifacts they computed from the run's memo), but with several workers
    before the last notebook that ran last time: that one keeps another worker busy meanwhile
    instead of leaving it idle at the end (skipped notebooks take no time and count for nothing)."""
    last = {nb["name"]: nb.get("seconds", 0) for nb in previous.get("notebooks", [])}
    skipped = {nb["name"] for nb in previous.get("notebooks", []) if nb.get("status") == "skipped"}
    order: list[Path | None] = sorted(paths, key=lambda p: (-last.get(p.stem, _estimated_seconds(p)), p.name))
    if reproduction:
        ran = [i for i, p in enumerate(order) if p.stem not in skipped]
        order.insert(ran[-1] if jobs > 1 and len(ran) > 1 else len(order), None)
    return order


def _run_staged(stage: Path, final: Path, paths: list[Path], data_dir, *, jobs: int | None, seed: int,
                n_boot: int, only, overrides: dict | None, timeout: float | None, progress: bool | None,
                reproduction: bool, report: bool, compare_published: bool, include_examples: bool,
                embed: bool, keep_going: bool, fresh_kernels: bool = False, preloaded=None) -> RunSummary:
    """The run of :func:`run`, written into the staging folder ``stage`` (the final folder is
    ``final``: run.json and the report name it).  Raises :class:`_Stop` when a task fails and
    ``keep_going`` is off."""
    from concurrent.futures import ProcessPoolExecutor

    t_start = time.perf_counter()
    data = Path(data_dir).resolve()
    out = Path(stage)
    out.mkdir(parents=True, exist_ok=True)
    jobs = max(1, int(jobs or os.cpu_count() or 1))
    threads = max(1, (os.cpu_count() or 1) // jobs)
    previous = _previous_run(out)
    _remove_previous_outputs(out, previous, {p.stem for p in paths} if only else None)
    shutil.rmtree(out / _STAGING, ignore_errors=True)
    (out / _STAGING).mkdir(parents=True)
    if reproduction:
        for f in ("reproduction.csv", "audit.csv"):
            (out / f).unlink(missing_ok=True)

    order = _task_order(paths, previous, jobs, reproduction)
    summary = RunSummary(str(data), str(final), seed, n_boot, jobs, [], only=[p.stem for p in paths] if only else None)
    results: dict[str, NotebookResult] = {}
    owner: dict[str, str] = {}
    # forkserver, not fork: forking a process that runs threads (a test runner, a Jupyter kernel)
    # can deadlock the children
    import multiprocessing

    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload([f"{__package__}.preload"])  # the workers' libraries, imported once
    # the caller's release is read while the fork server imports the workers' libraries (starting
    # the pool waits for it): a thread, joined before any result is read
    seeding = _Background(_seed_release_cache, out / _STAGING / "release-cache", data, preloaded) \
        if preloaded is not None else None
    with ProcessPoolExecutor(max_workers=jobs, initializer=_worker_init,
                             initargs=(threads, str(out / _STAGING / "release-cache"),
                                       str(out / _STAGING / "artifact-memo"), not fresh_kernels, os.getpid()),
                             mp_context=ctx) as pool, \
            _stopping(pool):
        futures = {}
        for p in order:
            if p is None:
                futures[pool.submit(_reproduction_in_worker, str(data), str(out), seed=seed, n_boot=n_boot,
                                    compare_published=compare_published, timeout=timeout)] = "reproduction"
                continue
            futures[pool.submit(execute_notebook, p, data_dir=str(data), out_dir=str(out), seed=seed, n_boot=n_boot,
                                overrides=overrides, timeout=timeout,
                                include_examples=include_examples or bool(only))] = p.stem
        if seeding is not None:
            seeding.join()
        bar = _progress(len(order), progress)   # the notebooks and reproduction.csv (None)
        for fut in _completed(futures):
            key = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # noqa: BLE001 - a worker died: report, carry on
                res = exc
            if key == "reproduction":
                if isinstance(res, Exception):
                    summary.tasks_failed.append(f"reproduction: {type(res).__name__}: {res}")
                else:
                    summary.release, summary.reproduction = res["release"], res["reproduction"]
                    summary.audit, summary.problems = res["audit"], res["problems"]
                    summary.reproduction["seconds"] = res.get("seconds")
                    for t in res["failed"]:
                        part = res["release"] if t == "load" else res.get(t, {})
                        summary.tasks_failed.append(f"{t}: {part.get('error', '')}")
                label = "reproduction.csv + audit.csv"
                status = "failed" if isinstance(res, Exception) or res["failed"] else "ok"
            else:
                if isinstance(res, Exception):
                    res = NotebookResult(key, "", "failed", error=ErrorCell(None, None, None, "", type(res).__name__,
                                                                            str(res), ""))
                res.outputs = _collect(out, key)
                for o in res.outputs:
                    if o in owner:
                        res.collisions.append(f"{o} (also written by {owner[o]})")
                    owner[o] = key
                results[key] = res
                label, status = key, res.status
            bar.done(label, status)
            if status == "failed" and not keep_going:
                bar.close()
                raise _Stop(label, results.get(key))
        bar.close()
    shutil.rmtree(out / _STAGING, ignore_errors=True)
    summary.notebooks = [results[p.stem] for p in paths]
    if only:   # keep the record of the notebooks not run this time (their outputs are still there)
        ran = {r.name for r in summary.notebooks}
        summary.earlier = [nb for nb in previous.get("notebooks", []) + previous.get("earlier", [])
                           if nb.get("name") not in ran]
        summary.earlier.sort(key=lambda nb: nb["name"])
    if not reproduction:
        for k in ("release", "reproduction", "audit", "problems"):
            if previous.get(k):
                setattr(summary, k, previous[k])
    summary.wall_seconds = round(time.perf_counter() - t_start, 2)
    (out / "run.json").write_text(json.dumps(summary.to_dict(), indent=1, sort_keys=True, default=str) + "\n")
    if report:
        try:
            from voxmem_analysis.reproduce.report import write_report

            write_report(out, embed=embed)
        except Exception as exc:  # noqa: BLE001
            summary.tasks_failed.append(f"report: {type(exc).__name__}: {exc}")
    summary.wall_seconds = round(time.perf_counter() - t_start, 2)
    (out / "run.json").write_text(json.dumps(summary.to_dict(), indent=1, sort_keys=True, default=str) + "\n")
    return summary


class _progress:
    """tqdm bar on a terminal, one line per finished task otherwise."""

    def __init__(self, total: int, enabled: bool | None):
        self.bar = None
        if enabled is None:
            enabled = sys.stderr.isatty()
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="reproduce", unit="task", file=sys.stderr)
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


# ----------------------------------------------------------------------------- printing
def _outputs_brief(outputs: list[str]) -> str:
    if not outputs:
        return "0"
    kinds: dict[str, int] = {}
    for o in outputs:
        k = o.split("/", 1)[0] if "/" in o else "other"
        kinds[k] = kinds.get(k, 0) + 1
    return f"{len(outputs)} (" + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())) + ")"


def print_summary(summary: RunSummary, stream=None) -> None:
    """The table printed at the end of ``reproduce``."""
    w = (stream or sys.stdout).write
    rows = summary.notebooks
    width = max([len(r.name) for r in rows] + [8])
    w(f"\n{'notebook':<{width}}  {'status':<7}  {'seconds':>7}  outputs written\n")
    w(f"{'-' * width}  {'-' * 7}  {'-' * 7}  {'-' * 30}\n")
    for r in rows:
        status = r.status.upper() if r.status == "failed" else r.status
        w(f"{r.name:<{width}}  {status:<7}  {r.seconds:>7.1f}  {_outputs_brief(r.outputs)}\n")
        if r.status == "skipped":
            w(f"{'':<{width}}    {r.reason}\n")
        if r.error is not None:
            w(f"{'':<{width}}    {r.error.headline()}\n")
            for line in r.error.source.splitlines()[:6]:
                w(f"{'':<{width}}    | {line}\n")
            if r.executed:
                w(f"{'':<{width}}    executed notebook: {Path(summary.out_dir) / r.executed}\n")
        for c in r.collisions:
            w(f"{'':<{width}}    warning: {c}\n")
    w("\n")
    rel = summary.release or {}
    if rel.get("error"):
        w(f"release {summary.data_dir}: could not be loaded: {rel['error']}\n")
    elif rel:
        amc = rel.get("benchmark") == "audio-multichallenge"
        w(f"release: {rel.get('label')} ({rel.get('predictions')} {'rubric verdicts' if amc else 'predictions'}, "
          f"{rel.get('models')} {'model x output-modality systems' if amc else 'models'})\n")
        if rel.get("mode") == "analysis":
            w(f"report mode: analysis of your runs ({', '.join(rel.get('model_names') or [])}); not the paper's "
              f"release, so no reproduction scoreboard or paper audit (--compare-published adds them)\n")
    rp = summary.reproduction or {}
    if rp.get("error"):
        w(f"reproduction.csv: FAILED: {rp['error']}\n")
    elif rp.get("numbers") is not None:
        w(f"reproduction.csv: {rp['numbers']} published numbers, {rp['within']} within tolerance, "
          f"{rp['outside']} outside, {rp['missing']} not reproduced"
          + (f", {rp['paper_inconsistent']} known paper inconsistenc{'y' if rp['paper_inconsistent'] == 1 else 'ies'}"
             if rp.get("paper_inconsistent") else "")
          + (f" ({rp['seconds']:.1f} s" + (", with audit.csv)" if summary.audit else ")") if rp.get("seconds") else "")
          + "\n")
        by_bench = rp.get("by_benchmark") or {}
        for b, c in (by_bench.items() if len(by_bench) > 1 else ()):
            w(f"  {'Audio MultiChallenge' if b == 'amc' else 'VoxMem'}: {c['within']}/{c['numbers']} within tolerance"
              + (f", {c['paper_inconsistent']} known paper inconsistency" if c.get("paper_inconsistent") else "") + "\n")
        for note in rp.get("inconsistent_notes") or ():
            w(f"  paper inconsistency: {note}\n")
        if rp.get("missing_artifacts"):
            w("  not reproduced: " + "; ".join(f"{a} ({n})" for a, n in rp["missing_artifacts"].items()) + "\n")
        for a, e in (rp.get("artifact_errors") or {}).items():
            w(f"  {a}: {e}\n")
    au = summary.audit or {}
    if au.get("error"):
        w(f"audit.csv: FAILED: {au['error']}\n")
    elif au:
        w(f"audit.csv: {au['identities']} identities, {au['hold']} hold, {au['fail']} fail\n")
    errs = sum(p["count"] for p in summary.problems if p["severity"] == "error")
    warns = sum(p["count"] for p in summary.problems if p["severity"] == "warning")
    kinds = sorted({f"{p['severity']} {p['code']}" for p in summary.problems})
    if summary.problems or rel:
        w(f"validation: {errs} error(s), {warns} warning(s)"
          + (f" [{'; '.join(kinds)}] (voxmem-analysis validate lists them)" if kinds else "") + "\n")
    for t in summary.tasks_failed:
        w(f"FAILED task {t}\n")
    if (Path(summary.out_dir) / "report" / "index.html").exists():
        w(f"report: {Path(summary.out_dir) / 'report' / 'index.html'}\n")
    n_ok = sum(r.status == "ok" for r in rows)
    w(f"{n_ok} of {len(rows)} notebooks ok, {len(summary.failed)} failed; wall time {summary.wall_seconds:.1f} s\n")
