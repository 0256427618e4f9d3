"""The runner as a caller meets it: SIGINT, SIGTERM and SIGHUP stop a run cleanly (workers and kernels
ended, the previous output whole, no staging, exit 128 + the signal, no process left holding the caller's
pipes); progress on a terminal, plain lines in a pipe, nothing with --quiet; ``--only`` keeps the records
of the notebooks it did not run, and a rerun keeps no copies of the runner's own files."""
from __future__ import annotations

import hashlib
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from conftest import write_tiny_release
from voxmem_analysis.cli import main

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pseudo-terminals")

EXE = Path(sys.executable).with_name("voxmem-analysis")
HEADER = "# ---\n# jupyter:\n#   kernelspec:\n#     display_name: Python 3\n#     language: python\n#     name: python3\n# ---\n"


def notebook(name: str, seconds: float = 0) -> str:
    """A notebook that records its start, waits ``seconds`` and saves one table through an OutputFolder."""
    return HEADER + textwrap.dedent(f'''
        # %% tags=["parameters"]
        data_dir = "data/synthetic"
        out_dir = "out"
        seed = 0

        # %%
        import time
        from pathlib import Path
        import pandas as pd
        from voxmem_analysis import output
        from voxmem_analysis.reproduce.provenance import OutputFolder

        Path(out_dir).mkdir(parents=True, exist_ok=True)
        Path(out_dir, "started_{name}").write_text("x")
        time.sleep({seconds})
        out = OutputFolder(out_dir, notebook="{name}", parameters=dict(seed=seed))
        output.save_table(pd.DataFrame({{"x": [1.0]}}), out, "{name}_table", formats=("csv",), show=False)
        ''')


def tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def make_notebooks(folder: Path, seconds: dict[str, float]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, s in seconds.items():
        (folder / f"{name}.py").write_text(notebook(name, s))
    return folder


def started(parent: Path, n: int) -> bool:
    return len(list(parent.glob(".*.voxmem-staging-*/.staging/*/started_*"))) >= n


def descendants(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def left_behind(procs: list[psutil.Process], grace: float = 5.0) -> list[str]:
    """The processes of ``procs`` still running ``grace`` seconds from now (zombies count as gone)."""
    deadline = time.monotonic() + grace
    alive = procs
    while alive and time.monotonic() < deadline:
        alive = [p for p in alive if p.is_running() and p.status() != psutil.STATUS_ZOMBIE]
        time.sleep(0.2)
    return [f"{p.pid} {' '.join(p.cmdline()[:4])}" for p in alive if p.is_running()]


# ----------------------------------------------------------------------------- signals
@pytest.fixture(scope="session")
def previous_run(made_once) -> Path:
    """The output of one complete `reproduce` of a quick notebook on the tiny release (made once; read only)."""
    def make(folder: Path) -> None:
        rel = write_tiny_release(folder / "rel")
        quick = make_notebooks(folder / "quick", {"01_first": 0})
        argv = [str(EXE), "reproduce", "--data", str(rel), "--out", str(folder / "out"), "--notebooks", str(quick),
                "--no-progress"]
        assert subprocess.run(argv, capture_output=True).returncode == 0

    return made_once("signals-previous-run", make) / "out"


@pytest.mark.parametrize("how", ["SIGINT to the group", "SIGTERM", "SIGHUP to the group", "SIGTERM to the group"])
def test_a_signal_stops_the_run_and_every_process_it_started(tiny_release, tmp_path, how, previous_run):
    """As a terminal (Ctrl-C, hang-up), `kill`, `timeout` or a CI runner stop it, while two notebooks run:
    the signal's exit code, one message, the previous output byte-identical, nothing beside it, no worker,
    kernel or resource tracker left (the caller's pipe closes)."""
    sig = getattr(signal, how.split()[0])
    nbs = make_notebooks(tmp_path / "notebooks", {"01_first": 120, "02_second": 120})
    out = tmp_path / "out"
    args = [str(EXE), "reproduce", "--data", str(tiny_release), "--out", str(out), "--notebooks", str(nbs),
            "--jobs", "2", "--n-boot", "20"]
    shutil.copytree(previous_run, out, symlinks=True)     # a complete earlier run of a quick notebook
    before = tree(out)
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 180
    while not started(tmp_path, 2) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert started(tmp_path, 2), proc.communicate()
    procs = descendants(proc.pid)
    assert sum("ipykernel" in " ".join(p.cmdline()) for p in procs) == 2, [p.cmdline() for p in procs]
    os.killpg(proc.pid, sig) if "group" in how else proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=90)        # returns once no process holds the pipes
    assert proc.returncode == 128 + sig, stderr
    what = "Ctrl-C" if sig == signal.SIGINT else sig.name
    assert f"interrupted ({what}): stopped; nothing half-written was kept" in stderr
    assert f"stopped before the output was complete ({what})" in stderr and "Traceback" not in stderr
    assert left_behind(procs, grace=2.0) == []
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "out", "rel"]


def test_a_run_killed_outright_leaves_no_worker_or_kernel(tiny_release, tmp_path):
    """SIGKILL cannot be handled: the workers notice their runner is gone and end themselves and their kernels."""
    nbs = make_notebooks(tmp_path / "notebooks", {"01_first": 120})
    proc = subprocess.Popen([str(EXE), "reproduce", "--data", str(tiny_release), "--out", str(tmp_path / "out"),
                             "--notebooks", str(nbs), "--jobs", "1", "--no-progress"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 180
    while not started(tmp_path, 1) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    assert started(tmp_path, 1)
    procs = descendants(proc.pid)
    assert any("ipykernel" in " ".join(p.cmdline()) for p in procs)
    proc.kill()
    proc.wait(timeout=30)
    assert left_behind(procs, grace=15.0) == []


# ----------------------------------------------------------------------------- progress
def _run_on_a_terminal(argv: list[str]) -> str:
    """Standard error of ``argv`` when it is a pseudo-terminal (of no stated size, as `script` makes)."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 1.0)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:          # the other end closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    proc.wait(timeout=60)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace")


def test_progress_on_a_terminal_in_a_pipe_and_quiet(tiny_release, tmp_path):
    nbs = make_notebooks(tmp_path / "notebooks", {"01_first": 2, "02_second": 0})
    args = [str(EXE), "reproduce", "--data", str(tiny_release), "--out", str(tmp_path / "out"), "--notebooks",
            str(nbs), "--jobs", "1", "--n-boot", "20"]
    shown = _run_on_a_terminal(args)
    assert "reproduce 0/2" in shown and "running 01_first" in shown        # as each starts, with the time
    assert "00:0" in shown and "reproduce 2/2" in shown
    assert "  ok      01_first (" in shown and "  ok      02_second (" in shown   # as each ends, with seconds
    piped = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert "[1/2] 01_first: ok\n[2/2] 02_second: ok\n" in piped.stderr and "reproduce 0/2" not in piped.stderr
    quiet = _run_on_a_terminal([*args, "--quiet"])
    assert "reproduce 0/2" not in quiet and "01_first" not in quiet


# ----------------------------------------------------------------------------- --only and reruns
def test_only_keeps_the_records_of_the_notebooks_it_did_not_run(tiny_release, tmp_path, capsys):
    from voxmem_analysis.reproduce.provenance import read_records

    nbs = make_notebooks(tmp_path / "notebooks", {"01_first": 0, "02_second": 0})
    out = tmp_path / "out"
    base = ["reproduce", "--data", str(tiny_release), "--out", str(out), "--notebooks", str(nbs), "--no-progress",
            "--n-boot", "20"]
    assert main([*base, "--only", "01,02"]) == 0
    first = read_records(out)
    assert sorted(first) == ["tables/01_first_table.csv", "tables/01_first_table.long.csv",
                             "tables/02_second_table.csv", "tables/02_second_table.long.csv"]
    capsys.readouterr()
    assert main([*base, "--only", "02"]) == 0
    printed, err = capsys.readouterr()
    assert read_records(out)["tables/01_first_table.csv"] == first["tables/01_first_table.csv"]
    assert "provenance:" not in printed and json.loads((out / "run.json").read_text())["provenance"] == []
    assert main(base) == 0                            # a full rerun: nothing of the runner's is carried aside
    err = capsys.readouterr().err
    assert "moved" not in err and "kept" not in err, err
    assert not (out / "earlier-files").exists()


# ----------------------------------------------------------------------------- property: links, outputs, signals
def _digest_inputs(rel: Path) -> dict[str, str]:
    """Every file of the release as the readers see it (through links), and where each link points."""
    found = {}
    for dirpath, _, files in os.walk(rel, followlinks=True):
        for f in files:
            p = Path(dirpath) / f
            found[p.relative_to(rel).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
            if p.is_symlink():
                found[p.relative_to(rel).as_posix() + " ->"] = os.readlink(p)
    return found


def _layout(tmp: Path, release: Path, link: str, out_kind: str, previous_run) -> tuple[Path, Path]:
    """The release at ``tmp/rel`` with ``link`` (a file or a folder moved to ``tmp/elsewhere`` and linked
    back), and the --out of ``out_kind``; ``previous_run(out)`` writes a complete earlier run."""
    import shutil

    rel = tmp / "rel"
    shutil.copytree(release, rel, symlinks=True)
    elsewhere = tmp / "elsewhere"
    (elsewhere / "tables").mkdir(parents=True)
    moved = {"items": ("items.csv", elsewhere / "tables" / "items.csv"),
             "folder": (next(p for p in (rel / "predictions").iterdir() if p.is_dir()).relative_to(rel).as_posix(),
                        elsewhere / "tables" / "predictions")}.get(link)
    if moved:
        src, dst = rel / moved[0], moved[1]
        shutil.move(src, dst)
        src.symlink_to(dst, target_is_directory=dst.is_dir())
    out = {"new": tmp / "out", "previous": tmp / "out", "link to previous": tmp / "out_link",
           "holds a linked input": elsewhere, "the release": rel}[out_kind]
    if out_kind in ("previous", "link to previous"):
        previous_run(rel, tmp / "out")
        if out_kind == "link to previous":
            out.symlink_to(tmp / "out", target_is_directory=True)
    return rel, out


def _check_one_run(tmp: Path, argv: list[str], sig: int, delay: float, to_group: bool) -> tuple[int, str]:
    """Run ``argv``, send ``sig`` after ``delay`` s (if still running); every process it started must end with it."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    seen: dict[int, psutil.Process] = {}
    t_end = time.monotonic() + delay
    while time.monotonic() < t_end and proc.poll() is None:
        seen.update({p.pid: p for p in descendants(proc.pid)})
        time.sleep(0.1)
    if proc.poll() is None:
        seen.update({p.pid: p for p in descendants(proc.pid)})
        os.killpg(proc.pid, sig) if to_group else proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    assert left_behind(list(seen.values()), grace=3.0) == []
    strays = [p.pid for p in psutil.process_iter(["cmdline", "status"])
              if str(tmp) in " ".join(p.info["cmdline"] or []) and p.info["status"] != psutil.STATUS_ZOMBIE]
    assert strays == [], strays
    if not seen and (proc.returncode == -sig or "Fatal Python error" in err or "KeyboardInterrupt" in err):
        return 128 + sig, ""   # the signal came while Python itself started, before the command ran: it ends
    return proc.returncode, err   # the same way (what a shell reports), nothing started, nothing written


def _reproduce_argv(notebooks: Path, only: str | None) -> list[str]:
    return [str(EXE), "reproduce", "--data", "DATA", "--notebooks", str(notebooks), "--jobs", "2", "--n-boot", "20",
            "--no-progress", *(["--only", only] if only else [])]


def _check_signals(release: Path, notebooks: Path, only: str | None, tmp: Path, sig, delay, link, out_kind, group,
                   earlier: Path | None = None):
    """One scenario of the property tests below. ``earlier``: a complete earlier run of ``notebooks`` on a copy
    of ``release``, copied to be the previous output (else one is run)."""
    base = _reproduce_argv(notebooks, only)

    def previous_run(rel: Path, out: Path) -> None:
        if earlier is not None:
            shutil.copytree(earlier, out, symlinks=True)
            return
        argv = [a if a != "DATA" else str(rel) for a in base] + ["--out", str(out)]
        assert subprocess.run(argv, capture_output=True, timeout=600).returncode == 0

    rel, out = _layout(tmp, release, link, out_kind, previous_run)
    inputs = _digest_inputs(rel)
    before = tree(out) if out.is_dir() else None
    rc, err = _check_one_run(tmp, [a if a != "DATA" else str(rel) for a in base] + ["--out", str(out)], sig, delay,
                             group)
    assert rc in (0, 1, 2, 128 + sig) and "Traceback" not in err, (rc, err[-3000:])
    assert _digest_inputs(rel) == inputs                          # no input moved, replaced or truncated
    refused = out_kind in ("the release",) or (out_kind == "holds a linked input" and link != "none")
    if refused:   # (unless the signal came first)
        assert rc == 128 + sig or (rc == 2 and "which this command reads" in err), err[-2000:]
    if rc == 0:                                                   # whole: this run, complete
        run = json.loads((out / "run.json").read_text())
        assert run["exit_code"] == 0 and all(nb["status"] == "ok" for nb in run["notebooks"])
    elif before is None:
        assert not out.exists() or not any(out.iterdir()), sorted(out.rglob("*"))
    else:
        assert tree(out) == before                                # the previous output, byte for byte
    leftovers = [p.name for p in out.resolve().parent.iterdir() if ".voxmem-" in p.name]
    assert leftovers == [], leftovers


def _scenarios():
    return dict(sig=st.sampled_from([signal.SIGINT, signal.SIGTERM, signal.SIGHUP]), delay=st.floats(0.5, 12.0),
                link=st.sampled_from(["none", "items", "folder"]),
                out_kind=st.sampled_from(["new", "previous", "link to previous", "holds a linked input",
                                          "the release"]),
                group=st.booleans())


def test_signals_links_and_outputs_at_random(tiny_release, tmp_path_factory, made_once):
    """Random links in the release, output paths and signals at random moments of `reproduce` (two short
    notebooks): no input changed, no process left, the previous output or a complete new one, never exit 3."""
    from hypothesis import HealthCheck, given, settings

    nbs = make_notebooks(tmp_path_factory.mktemp("nbs"), {"01_first": 1, "02_second": 1})

    def make(folder: Path) -> None:     # the previous output of the "previous" cases, made once
        rel = write_tiny_release(folder / "rel")
        argv = [a if a != "DATA" else str(rel) for a in _reproduce_argv(nbs, None)] + ["--out", str(folder / "out")]
        assert subprocess.run(argv, capture_output=True, timeout=600).returncode == 0

    earlier = made_once("signals-at-random-previous-run", make) / "out"

    @settings(max_examples=5, deadline=None, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(**_scenarios())
    def run(sig, delay, link, out_kind, group):
        _check_signals(tiny_release, nbs, None, tmp_path_factory.mktemp("case"), sig, delay, link, out_kind, group,
                       earlier)

    run()


@pytest.mark.slow
def test_signals_links_and_outputs_at_random_with_the_real_notebooks(tmp_path_factory):
    """The same with the repository's cheap notebooks (00, 05) on a small release of another shape."""
    from shapes import build
    from voxmem_analysis.reproduce.notebook import NOTEBOOKS_DIR

    release = build("one_model", tmp_path_factory.mktemp("shape"))

    @settings(max_examples=15, deadline=None, derandomize=True, database=None, phases=[Phase.generate],
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(**_scenarios())
    def run(sig, delay, link, out_kind, group):
        _check_signals(release, NOTEBOOKS_DIR, "00,05", tmp_path_factory.mktemp("case"), sig, delay * 2, link,
                       out_kind, group)

    run()
