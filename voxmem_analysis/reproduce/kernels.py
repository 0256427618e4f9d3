"""Warm kernels: one Jupyter kernel per runner worker, reused by the notebooks it executes.

Starting a kernel and importing the scientific stack in it costs about 1.5 s of CPU per
notebook; a reproduction runs ten notebooks on two workers.  A :class:`WarmKernel` is started
once per worker, imports the stack once (:data:`WARM_UP`), then takes a snapshot of the
process-wide state a notebook could change.  Before each notebook the runner calls
:meth:`WarmKernel.prepare`, which

* empties the user namespace (``%reset -f``: the next notebook sees none of the previous one's
  names), closes every figure, moves to the notebook's staging folder and sets the execution
  counter back to 1 (executed notebooks number their cells from 1, as in a fresh kernel);
* compares the process-wide state with the snapshot: matplotlib's ``rcParams``, the warning
  filters, numpy's print and error options, polars' and pandas' options, the environment.  If a
  notebook changed any of them, the kernel is *not* reused: the runner shuts it down and starts
  a fresh one, so a notebook never runs under another notebook's settings.

A kernel that died, timed out or failed in any way other than a notebook's own cell error is
also replaced.  The kernel's own standard error (start-up messages, C-level output) goes to one
file per kernel; :meth:`WarmKernel.take_log` returns what was written since the last call, so
every notebook's ``NAME.log`` holds the lines written while it ran.

``voxmem-analysis reproduce --fresh-kernels`` (``run(..., fresh_kernels=True)``) starts one
kernel per notebook instead, as papermill does by default.
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

__all__ = ["WarmKernel", "WARM_UP", "ENGINE_NAME", "register_engine"]

#: The papermill engine that executes a notebook in a given kernel through a given client.
ENGINE_NAME = "voxmem-warm-kernel"

#: Run once in a new kernel: what the notebooks import, so later notebooks find it imported, and
#: the snapshot of the process-wide state (taken after the imports, which add warning filters).
WARM_UP = r'''
def _voxmem_warm_up():
    import importlib, json, os, pkgutil, sys, types, warnings
    import matplotlib, matplotlib.pyplot, numpy, pandas, polars, seaborn, scipy.stats, pingouin  # noqa: F401
    # the statsmodels parts the package uses (statsmodels.api would add 0.5 s and no warning filter)
    import statsmodels.stats.contingency_tables, statsmodels.stats.inter_rater  # noqa: F401
    import statsmodels.stats.power, statsmodels.stats.proportion  # noqa: F401
    import IPython.display  # noqa: F401
    try:  # sets KMP_DUPLICATE_LIB_OK when first imported (the bootstrap and the GEE limit BLAS threads with it)
        import threadpoolctl  # noqa: F401
    except ImportError:
        pass
    try:  # pandas keeps its options in one dictionary (there is no public way to read them all)
        from pandas._config.config import _global_config
    except ImportError:
        _global_config = {}
    for sub in ("io", "stats", "analysis", "plots"):
        pkg = importlib.import_module(f"voxmem_analysis.{sub}")
        for m in pkgutil.iter_modules(pkg.__path__, f"voxmem_analysis.{sub}."):
            importlib.import_module(m.name)
    for m in ("output", "artifacts", "paths"):
        importlib.import_module(f"voxmem_analysis.{m}")

    def measure():
        return {"matplotlib rcParams": repr(sorted(matplotlib.rcParams.items())),
                "warning filters": repr(warnings.filters),
                "numpy print options": repr(numpy.get_printoptions()), "numpy error handling": repr(numpy.geterr()),
                "polars Config": polars.Config.save(),
                "pandas options": json.dumps(_global_config, default=repr, sort_keys=True),
                "environment variables": dict(os.environ)}

    state = types.ModuleType("_voxmem_warm_kernel")
    state.measure, state.snapshot = measure, measure()
    sys.modules["_voxmem_warm_kernel"] = state
_voxmem_warm_up()
del _voxmem_warm_up
# the imported stack (a few hundred thousand objects that live as long as the kernel) is left out
# of every later garbage collection: ``%reset -f`` before each notebook collects twice (0.25 s
# -> 0.01 s per notebook), and the notebooks' own full collections no longer walk the libraries
__import__("gc").collect()
__import__("gc").freeze()
'''

#: Run before each notebook (formatted with the staging folder): clean namespace, figures closed,
#: working folder, execution counter; ``changed`` names the process-wide settings that differ from the snapshot.
_PREPARE = r'''
__import__("os").chdir({cwd})  # first: the last notebook's folder may be gone (its outputs were moved)
get_ipython().run_line_magic("reset", "-f")
def _voxmem_prepare():
    import sys
    import matplotlib.pyplot as plt
    plt.close("all")
    state = sys.modules["_voxmem_warm_kernel"]
    now = state.measure()
    state.changed = [k for k in state.snapshot if now.get(k) != state.snapshot[k]]
    if "environment variables" in state.changed:
        old, new = state.snapshot["environment variables"], now["environment variables"]
        names = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
        state.changed[state.changed.index("environment variables")] = "environment variables " + ", ".join(names)
    get_ipython().execution_count = 1
_voxmem_prepare()
del _voxmem_prepare
'''
_CHANGED = '__import__("sys").modules["_voxmem_warm_kernel"].changed'


class WarmKernelError(RuntimeError):
    """The warm kernel could not be started or prepared (the runner then uses a fresh kernel)."""


class WarmKernel:
    """A started kernel (``python3``) with the stack imported; see the module's docstring."""

    def __init__(self, kernel_name: str, log_path: Path, cwd: Path, timeout: float = 300):
        import nbformat
        from nbclient import NotebookClient

        self.log_path = Path(log_path)
        self._offset = 0
        self._client = NotebookClient(nbformat.v4.new_notebook(), kernel_name=kernel_name, timeout=timeout)
        self._client.create_kernel_manager()
        log = open(self.log_path, "ab")  # noqa: SIM115 - the kernel inherits it as its standard error
        saved = os.dup(2)
        sys.stderr.flush()
        os.dup2(log.fileno(), 2)
        try:
            self._client.start_new_kernel(cwd=str(cwd))
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            log.close()
        # the runner's own messages (warm-up, prepare) go through a blocking client with its own
        # channels: papermill's asynchronous client lives in the event loop of each notebook's run
        from jupyter_core.utils import run_sync

        self._control = self.kc = None
        self._timeout = timeout
        try:
            self._control = self._client.km.blocking_client()
            self._control.start_channels()
            # the control client reads shell replies only (warm-up, prepare): no IOPub check
            run_sync(_await_answering)(self._control, timeout, iopub=False, alive=self.km.is_alive)
            self._run(WARM_UP)
            self.kc = self._ready_client()
        except BaseException:
            self.shutdown()  # never leave a started kernel behind
            raise

    @property
    def km(self):
        """The kernel manager (pass it to papermill as ``km=``)."""
        return self._client.km

    def _ready_client(self, tries: int = 3, wait: float = 20.0):
        """The asynchronous client every notebook of this kernel is executed through (papermill's
        ``kc``), checked once to receive the kernel's replies *and* its IOPub messages: a client
        connected afresh for each notebook can miss its first IOPub messages, and nbclient then
        waits for them."""
        from jupyter_core.utils import run_sync

        for attempt in range(tries):
            kc = self.km.client()
            kc.start_channels()
            try:
                run_sync(_await_answering)(kc, wait, alive=self.km.is_alive)
            except RuntimeError:
                kc.stop_channels()
                if attempt == tries - 1:
                    raise
                continue
            kc.allow_stdin = False
            _poll_in_slices(kc)
            return kc

    def call(self, function: str, kwargs: dict, result: Path, timeout: float | None = None):
        """``module.function(**kwargs)`` run in the kernel (after :meth:`prepare`), its value passed
        back through the pickle file ``result``; a failure in the kernel raises :class:`WarmKernelError`."""
        import pickle

        module, _, name = function.rpartition(".")
        code = (f"def _voxmem_call():\n    import importlib, pickle\n"
                f"    value = getattr(importlib.import_module({module!r}), {name!r})(**{kwargs!r})\n"
                f"    with open({str(result)!r}, 'wb') as fh:\n        pickle.dump(value, fh)\n"
                f"_voxmem_call()\ndel _voxmem_call\n")
        self._run(code, timeout=timeout)
        with open(result, "rb") as fh:
            return pickle.load(fh)

    def _run(self, code: str, expressions: dict | None = None, timeout: float | None = None) -> dict:
        import queue
        import time

        kc = self._control
        msg_id = kc.execute(code, silent=True, store_history=False, user_expressions=expressions or {})
        deadline = time.monotonic() + (timeout or self._timeout)
        content: dict = {}
        while time.monotonic() < deadline:
            try:
                reply = kc.get_shell_msg(timeout=max(0.1, deadline - time.monotonic()))
            except queue.Empty:
                break
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                content = reply.get("content", {})
                break
        if content.get("status") != "ok":
            raise WarmKernelError(f"{content.get('ename', 'no reply')}: {content.get('evalue', '')}".strip())
        return content.get("user_expressions", {})

    def alive(self) -> bool:
        try:
            from jupyter_core.utils import run_sync

            return bool(run_sync(self.km.is_alive)())
        except Exception:  # noqa: BLE001 - a manager in a bad state is a dead kernel
            return False

    def prepare(self, cwd: Path) -> bool:
        """Make the kernel ready for the next notebook; False when it must not be reused (dead, or
        process-wide settings changed: :attr:`changed` names them)."""
        import ast

        self.changed: list[str] = []
        if not self.alive():
            self.changed = ["the kernel is not running"]
            return False
        got = self._run(_PREPARE.format(cwd=json.dumps(str(cwd))), {"changed": _CHANGED})
        try:
            self.changed = list(ast.literal_eval(got["changed"]["data"]["text/plain"]))
        except (KeyError, ValueError, SyntaxError, TypeError):
            self.changed = ["no answer from the kernel"]
        return not self.changed

    def take_log(self) -> str:
        """What the kernel wrote to its standard error since the last call."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(self._offset)
                data = fh.read()
        except OSError:
            return ""
        self._offset += len(data)
        return data.decode("utf-8", "replace")

    def kill(self) -> None:
        """Kill the kernel's process at once (from a signal handler: no event loop, no messages)."""
        proc = getattr(getattr(self.km, "provisioner", None), "process", None)
        try:
            if proc is not None:
                proc.kill()
        except Exception:  # noqa: BLE001
            pass

    def shutdown(self) -> None:
        """Stop the kernel (now) and its client; never raises."""
        for client in (self.kc, self._control):
            try:
                if client is not None:
                    client.stop_channels()
            except Exception:  # noqa: BLE001
                pass
        try:
            from jupyter_core.utils import run_sync

            run_sync(self.km.shutdown_kernel)(now=True)
        except Exception:  # noqa: BLE001
            pass


#: Longest single wait of the notebooks' client on one channel (see :func:`_poll_in_slices`).
POLL_SLICE = 1.0


def _poll_in_slices(kc, slice_seconds: float | None = None) -> None:
    """Make the asynchronous client ``kc`` wait for shell and IOPub messages in slices of at most
    :data:`POLL_SLICE` seconds, up to the timeout it was asked for (none: for ever, as before).

    nbclient waits for a cell's ``execute_reply`` with one poll lasting the whole execution timeout.
    Twice in about seven full test runs, a reply the kernel had sent within half a second was
    handed over only when that poll timed out, 900 s later: the executed notebook recorded the
    kernel's reply time, and the cell ended exactly at the timeout without an error, so the
    message had been waiting while the poll was not woken.  Each slice ends with a fresh look at
    the socket, so a wake-up missed this way costs at most one slice."""
    import queue
    import time

    step = slice_seconds or POLL_SLICE
    for name in ("shell_channel", "iopub_channel"):
        channel = getattr(kc, name)
        whole = channel.get_msg

        async def get_msg(timeout=None, _whole=whole):
            deadline = None if timeout is None else time.monotonic() + timeout
            while True:
                left = step if deadline is None else max(0.0, min(step, deadline - time.monotonic()))
                try:
                    return await _whole(timeout=left)
                except queue.Empty:
                    if deadline is not None and time.monotonic() >= deadline:
                        raise

        channel.get_msg = get_msg


def _answered(msg: dict, sent: set, channel: str) -> bool:
    """A reply to any of the ``kernel_info`` requests ``sent`` (a kernel still starting may answer
    an earlier one only; jupyter_client accepts any reply too), or on IOPub the ``idle`` status
    closing one of them."""
    if channel == "iopub":
        return (msg.get("parent_header", {}).get("msg_id") in sent and msg.get("msg_type") == "status"
                and msg.get("content", {}).get("execution_state") == "idle")
    return msg.get("msg_type") == "kernel_info_reply"


async def _await_answering(kc, timeout: float, *, iopub: bool = True, alive=None) -> None:
    """Wait until the kernel answers a ``kernel_info`` request on the shell channel and, with
    ``iopub``, this client also receives the request's closing ``idle`` status on IOPub (its
    subscription is live: a client connected afresh can miss its first IOPub messages).

    jupyter_client's ``wait_for_ready`` checks the same, then waits until IOPub has been silent for
    0.2 s; twice per kernel start (the control client and the notebooks' client) that was 0.4 s of
    a start-up both workers wait for.  An ``idle`` lost before the subscription took hold means
    another request after 0.2 s, as there.  ``kc`` is a blocking or an asynchronous client;
    ``alive`` an (async) callable telling whether the kernel still runs.  Raises RuntimeError when
    it died or ``timeout`` passed first."""
    import asyncio
    import inspect
    import queue
    import time

    async def get(channel: str, wait: float):
        fetch = kc.get_iopub_msg if channel == "iopub" else kc.get_shell_msg
        try:
            msg = fetch(timeout=wait)
            return await msg if inspect.isawaitable(msg) else msg
        except (queue.Empty, asyncio.TimeoutError):
            return None

    deadline = time.monotonic() + timeout
    sent: set = set()
    while time.monotonic() < deadline:
        sent.add(kc.kernel_info())
        replied = False
        reply_end = min(deadline, time.monotonic() + 1.0)   # the kernel may still be starting
        while not replied and time.monotonic() < reply_end:
            msg = await get("shell", 0.1)
            replied = msg is not None and _answered(msg, sent, "shell")
        idle_end = min(deadline, time.monotonic() + 0.2)
        seen = not iopub
        while replied and not seen and time.monotonic() < idle_end:
            msg = await get("iopub", 0.05)
            seen = msg is not None and _answered(msg, sent, "iopub")
        if replied and seen:
            return
        if alive is not None:
            ok = alive()
            if not (await ok if inspect.isawaitable(ok) else ok):
                raise RuntimeError("Kernel died before replying to kernel_info")
    raise RuntimeError(f"Kernel didn't respond in {timeout:g} seconds")


def register_engine() -> str:
    """Register (once) and name the papermill engine that runs a notebook in an already started
    kernel through an already connected client: ``pm.execute_notebook(..., engine_name=ENGINE_NAME,
    km=kernel.km, kc=kernel.kc)``.  papermill's own engine always connects a new client (nbclient
    resets ``kc`` when it is constructed); this one sets it after construction."""
    from papermill.clientwrap import PapermillNotebookClient
    from papermill.engines import NBClientEngine, papermill_engines
    from papermill.log import logger

    class WarmKernelEngine(NBClientEngine):
        @classmethod
        def execute_managed_notebook(cls, nb_man, kernel_name, log_output=False, stdout_file=None, stderr_file=None,
                                     start_timeout=60, execution_timeout=None, **kwargs):
            km, kc = kwargs.pop("km"), kwargs.pop("kc")
            client = PapermillNotebookClient(nb_man, km=km, timeout=execution_timeout, startup_timeout=start_timeout,
                                             kernel_name=kernel_name, log=logger, log_output=log_output,
                                             stdout_file=stdout_file, stderr_file=stderr_file,
                                             coalesce_streams=kwargs.pop("coalesce_streams", False))
            client.kc = kc
            return client.execute()

    if not _REGISTERED:
        papermill_engines.register(ENGINE_NAME, WarmKernelEngine)
        _REGISTERED.append(ENGINE_NAME)
    return ENGINE_NAME


_REGISTERED: list[str] = []
