"""Warm kernels (voxmem_analysis.reproduce.kernels): one kernel per worker, reused by its notebooks,
and never carrying one notebook's state into the next."""
from __future__ import annotations

import json
import textwrap

import pytest

from voxmem_analysis.reproduce import runner as R

_HEAD = textwrap.dedent('''\
    # %% tags=["parameters"]
    data_dir = "."
    out_dir = "out"

    # %%
    import json, os
    from pathlib import Path
    ''')


def _probe(name: str, extra: str = "") -> str:
    """A notebook that records its kernel's pid, working folder, leftovers and settings, then runs ``extra``."""
    return _HEAD + textwrap.dedent(f'''\
        import matplotlib
        import warnings
        seen = {{"pid": os.getpid(), "cwd": os.getcwd(), "leak": "leak" in globals(),
                 "dpi": matplotlib.rcParams["figure.dpi"], "filters": len(warnings.filters)}}
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "{name}.json").write_text(json.dumps(seen))
        leak = 1

        # %%
        {extra}
        ''')


@pytest.fixture()
def probe_dir(tmp_path):
    d = tmp_path / "notebooks"
    d.mkdir()
    return d


def _run(notebooks, tmp_path, **kw):
    out = tmp_path / "out"
    s = R.run(tmp_path, out, jobs=1, notebooks_dir=notebooks, progress=False, reproduction=False, report=False, **kw)
    return s, out


def _outputs(out, names):
    """What each probe notebook recorded (written in its staging folder, moved under OUT)."""
    return {n: json.loads(next(out.rglob(f"{n}.json")).read_text()) for n in names}


def test_one_kernel_serves_the_notebooks_of_a_worker_with_a_clean_namespace(probe_dir, tmp_path):
    for n in ("01_a", "02_b", "03_c"):
        (probe_dir / f"{n}.py").write_text(_probe(n))
    s, out = _run(probe_dir, tmp_path)
    assert s.exit_code == 0, [nb.error for nb in s.notebooks]
    seen = _outputs(out, ("01_a", "02_b", "03_c"))
    pids = {v["pid"] for v in seen.values()}
    assert len(pids) == 1                                # one kernel for the three notebooks
    assert not any(v["leak"] for v in seen.values())      # the previous notebook's names are gone
    for n, v in seen.items():                             # each works in its own staging folder
        assert v["cwd"].endswith(f"/.staging/{n}")
    for n in ("01_a", "02_b", "03_c"):                    # cells numbered from 1 in every executed notebook
        cells = json.loads((out / "notebooks" / f"{n}.ipynb").read_text())["cells"]
        counts = [c["execution_count"] for c in cells if c["cell_type"] == "code" and "".join(c["source"]).strip()]
        assert counts == list(range(1, len(counts) + 1))


def test_a_notebook_that_changes_settings_gets_the_next_one_a_new_kernel(probe_dir, tmp_path):
    (probe_dir / "01_a.py").write_text(_probe("01_a", 'matplotlib.rcParams["figure.dpi"] = 33'))
    (probe_dir / "02_b.py").write_text(_probe("02_b", 'import warnings; warnings.simplefilter("ignore")'))
    (probe_dir / "03_c.py").write_text(_probe("03_c"))
    s, out = _run(probe_dir, tmp_path)
    assert s.exit_code == 0
    seen = _outputs(out, ("01_a", "02_b", "03_c"))
    assert len({v["pid"] for v in seen.values()}) == 3   # each change forced a new kernel
    assert seen["02_b"]["dpi"] == seen["01_a"]["dpi"] != 33
    assert seen["03_c"]["filters"] == seen["01_a"]["filters"]


def test_a_dead_kernel_is_replaced_and_the_next_notebook_runs(probe_dir, tmp_path):
    (probe_dir / "01_a.py").write_text(_probe("01_a", "os._exit(3)"))
    (probe_dir / "02_b.py").write_text(_probe("02_b"))
    s, out = _run(probe_dir, tmp_path, timeout=60)
    by = {nb.name: nb for nb in s.notebooks}
    assert by["01_a"].status == "failed" and by["02_b"].status == "ok"
    seen = _outputs(out, ("01_a", "02_b"))
    assert seen["01_a"]["pid"] != seen["02_b"]["pid"]


def test_a_cell_error_keeps_the_kernel(probe_dir, tmp_path):
    (probe_dir / "01_a.py").write_text(_probe("01_a", "1 / 0"))
    (probe_dir / "02_b.py").write_text(_probe("02_b"))
    s, out = _run(probe_dir, tmp_path)
    by = {nb.name: nb for nb in s.notebooks}
    assert by["01_a"].status == "failed" and by["01_a"].error.ename == "ZeroDivisionError"
    assert by["02_b"].status == "ok"
    seen = _outputs(out, ("01_a", "02_b"))
    assert seen["01_a"]["pid"] == seen["02_b"]["pid"] and not seen["02_b"]["leak"]


def test_fresh_kernels_start_one_kernel_per_notebook(probe_dir, tmp_path):
    for n in ("01_a", "02_b"):
        (probe_dir / f"{n}.py").write_text(_probe(n))
    s, out = _run(probe_dir, tmp_path, fresh_kernels=True)
    assert s.exit_code == 0
    seen = _outputs(out, ("01_a", "02_b"))
    assert seen["01_a"]["pid"] != seen["02_b"]["pid"]


def _alive(pid: int) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (exited, not yet reaped by its parent) is gone for our purpose
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def test_a_killed_runner_leaves_no_worker_or_kernel_behind(probe_dir, tmp_path):
    """SIGKILL to the runner (no clean-up possible there): its workers notice and end with their kernels."""
    import os
    import signal
    import subprocess
    import sys
    import time

    (probe_dir / "01_wait.py").write_text(_HEAD + textwrap.dedent('''\
        import time
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir).parent.parent / "pids.json").write_text(json.dumps({"kernel": os.getpid(), "worker": os.getppid()}))
        time.sleep(120)
        '''))
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "voxmem_analysis", "reproduce", "--data", str(tmp_path), "--out", str(out),
                             "--notebooks", str(probe_dir), "--jobs", "1", "--no-progress"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        pids = None
        while time.monotonic() < deadline and pids is None:
            found = list(tmp_path.glob("**/pids.json"))
            pids = json.loads(found[0].read_text()) if found and found[0].read_text() else None
            time.sleep(0.2)
        assert pids, "the probe notebook never started"
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and (_alive(pids["worker"]) or _alive(pids["kernel"])):
            time.sleep(0.2)
        assert not _alive(pids["worker"]) and not _alive(pids["kernel"])
    finally:
        if proc.poll() is None:
            proc.kill()


def test_the_warm_up_freezes_the_libraries_but_a_notebooks_own_garbage_is_still_collected(probe_dir, tmp_path):
    # 01_a leaves a reference cycle behind whose finaliser writes a file; once the kernel is emptied
    # for 02_b the cycle must have been collected (gc.freeze after the warm-up covers only what
    # existed then), and the frozen generation holds the imported libraries
    marker = tmp_path / "collected.txt"
    cycle = (f"class Cycle:\n    def __del__(self):\n        __import__('pathlib').Path({str(marker)!r}).write_text('collected')\n"
             "c = Cycle()\nc.me = c\n")
    (probe_dir / "01_a.py").write_text(_probe("01_a", f"exec({cycle!r})"))
    (probe_dir / "02_b.py").write_text(_probe("02_b", (
        f"import gc; Path(out_dir, 'gc.json').write_text(json.dumps({{'frozen': gc.get_freeze_count(), "
        f"'collected': Path({str(marker)!r}).exists()}}))")))
    s, out = _run(probe_dir, tmp_path)
    assert s.exit_code == 0, [nb.error for nb in s.notebooks]
    seen = _outputs(out, ("01_a", "02_b"))
    assert seen["01_a"]["pid"] == seen["02_b"]["pid"]   # the same kernel
    got = json.loads(next(out.rglob("gc.json")).read_text())
    assert got["collected"] is True
    assert got["frozen"] > 100_000   # the stack imported by the warm-up (numpy, pandas, polars, matplotlib...)


def test_the_callers_release_is_read_once_beside_the_starting_pool_and_its_error_is_raised(probe_dir, tmp_path):
    import threading

    (probe_dir / "01_a.py").write_text(_probe("01_a"))
    calls = []
    s, out = _run(probe_dir, tmp_path, preloaded=lambda: calls.append(threading.current_thread().name))
    assert s.exit_code == 0
    assert calls == ["voxmem-seed-release-cache"]   # once, in its own thread while the workers start

    def broken():
        raise RuntimeError("the caller's own failure")

    with pytest.raises(RuntimeError, match="the caller's own failure"):
        _run(probe_dir, tmp_path, preloaded=broken)
    assert (out / "run.json").exists()               # the previous output is left as it was
    assert not list(tmp_path.glob("*staging*"))      # and no staging folder is left behind


class _FakeClient:
    """A blocking client whose kernel answers each kernel_info on shell; the IOPub ``idle`` of the
    first ``lost`` requests never arrives (a subscription not yet in place)."""

    def __init__(self, lost: int = 0, answers: bool = True):
        import queue

        self.lost, self.answers, self.sent = lost, answers, 0
        self.shell, self.iopub = queue.Queue(), queue.Queue()

    def kernel_info(self):
        self.sent += 1
        msg_id = f"m{self.sent}"
        if self.answers:
            self.shell.put({"parent_header": {"msg_id": msg_id}, "msg_type": "kernel_info_reply"})
            self.iopub.put({"parent_header": {"msg_id": msg_id}, "msg_type": "status", "content": {"execution_state": "busy"}})
            if self.sent > self.lost:
                self.iopub.put({"parent_header": {"msg_id": msg_id}, "msg_type": "status",
                                "content": {"execution_state": "idle"}})
        return msg_id

    def get_shell_msg(self, timeout=None):
        return self.shell.get(timeout=timeout)

    def get_iopub_msg(self, timeout=None):
        return self.iopub.get(timeout=timeout)


def test_a_client_is_ready_once_shell_and_iopub_both_answer_its_request():
    from jupyter_core.utils import run_sync

    from voxmem_analysis.reproduce.kernels import _await_answering

    wait = run_sync(_await_answering)
    fake = _FakeClient(lost=2)
    wait(fake, 10)
    assert fake.sent == 3                     # the two requests whose idle was lost were sent again
    control = _FakeClient(lost=5)
    wait(control, 10, iopub=False)            # shell replies are enough for the control client
    assert control.sent == 1
    with pytest.raises(RuntimeError, match="died"):
        wait(_FakeClient(answers=False), 10, alive=lambda: False)
    with pytest.raises(RuntimeError, match="didn't respond in 0.3 seconds"):
        wait(_FakeClient(answers=False), 0.3)


class _LateClient(_FakeClient):
    """A starting kernel that answers each kernel_info only when the next one arrives."""

    def kernel_info(self):
        self.sent += 1
        if self.sent > 1:
            prev = f"m{self.sent - 1}"
            self.shell.put({"parent_header": {"msg_id": prev}, "msg_type": "kernel_info_reply"})
            self.iopub.put({"parent_header": {"msg_id": prev}, "msg_type": "status",
                            "content": {"execution_state": "idle"}})
        return f"m{self.sent}"


def test_a_reply_to_an_earlier_request_counts():
    from jupyter_core.utils import run_sync

    from voxmem_analysis.reproduce.kernels import _await_answering

    late = _LateClient()
    run_sync(_await_answering)(late, 10)
    assert late.sent == 2


class _DrowsyChannel:
    """An asynchronous channel whose waits are not woken by the message they wait for: one is
    handed over only by a poll that starts after it arrived (``ready_after`` seconds)."""

    def __init__(self, ready_after: float | None):
        import time

        self.t0, self.ready_after, self.polls = time.monotonic(), ready_after, []

    async def get_msg(self, timeout=None):
        import asyncio
        import queue
        import time

        self.polls.append(timeout)
        if self.ready_after is not None and time.monotonic() - self.t0 >= self.ready_after:
            return {"msg_type": "execute_reply"}
        await asyncio.sleep(timeout if timeout is not None else 3600)   # not woken by the arrival
        raise queue.Empty


def test_the_notebooks_client_waits_in_slices_so_a_missed_wake_up_costs_one_slice():
    import queue
    import time
    import types

    from jupyter_core.utils import run_sync

    from voxmem_analysis.reproduce.kernels import _poll_in_slices

    kc = types.SimpleNamespace(shell_channel=_DrowsyChannel(0.05), iopub_channel=_DrowsyChannel(None))
    _poll_in_slices(kc, slice_seconds=0.02)
    t = time.monotonic()
    assert run_sync(kc.shell_channel.get_msg)(timeout=900) == {"msg_type": "execute_reply"}
    assert time.monotonic() - t < 5                      # not the 900 s of one whole poll
    assert all(p <= 0.02 + 1e-9 for p in kc.shell_channel.polls)
    t = time.monotonic()
    with pytest.raises(queue.Empty):                     # nothing comes: Empty once the timeout has passed
        run_sync(kc.iopub_channel.get_msg)(timeout=0.1)
    assert 0.09 < time.monotonic() - t < 2
