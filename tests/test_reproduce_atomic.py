"""``reproduce`` output is atomic -- staging and swap, a lock, no stale files, interruption.

Unit tests of :mod:`voxmem_analysis.reproduce.atomic` on hand-made folders, then the runner and
the command line on two tiny notebooks (a few seconds each).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from conftest import run_cli, write_tiny_release
from voxmem_analysis.errors import OutputFolderError, OutputLockedError
from voxmem_analysis.reproduce import atomic as A


def tree(root: Path) -> dict[str, str]:
    """Every file below ``root`` (hidden ones too) with its SHA-256: byte-identical means equal."""
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def fake_run(out: Path, data: str = "/data/rel", notebooks=(("01_a", ["tables/a.csv"]),), extra=()) -> dict:
    """A previous reproduce output: run.json, the notebooks' files, report, reproduction.csv."""
    nbs = []
    for name, outputs in notebooks:
        for rel in outputs:
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
            (out / rel).write_text(f"{name} wrote {rel}\n")
        (out / "notebooks").mkdir(parents=True, exist_ok=True)
        (out / "notebooks" / f"{name}.ipynb").write_text("{}")
        (out / "notebooks" / f"{name}.log").write_text("")
        nbs.append({"name": name, "outputs": list(outputs), "executed": f"notebooks/{name}.ipynb", "status": "ok"})
    run = {"data_dir": data, "out_dir": str(out), "notebooks": nbs, "earlier": []}
    (out / "run.json").write_text(json.dumps(run))
    (out / "reproduction.csv").write_text("artifact,row\n")
    (out / "report").mkdir(exist_ok=True)
    (out / "report" / "index.html").write_text("<p>all ok</p>")
    for rel in extra:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text("user file\n")
    return run


# ============================================================================ the lock
def test_lock_refuses_a_second_run_and_names_it(tmp_path):
    out = tmp_path / "out"
    notes: list[str] = []
    path = A.acquire_lock(out, notes)
    assert path == tmp_path / ".out.voxmem-reproduce.lock"
    info = json.loads(path.read_text())
    assert info["pid"] == os.getpid() and info["host"] == socket.gethostname()
    with pytest.raises(OutputLockedError) as ei:
        A.acquire_lock(out, notes)
    msg = str(ei.value)
    assert f"--out {str(out)!r} is being written by another `voxmem-analysis reproduce` (pid {os.getpid()}" in msg
    assert "wait for it to finish, or choose another --out" in msg and str(path) in msg
    A.release_lock(path)
    assert not path.exists()


def test_stale_lock_is_replaced_and_said(tmp_path):
    out = tmp_path / "out"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    pid = int(dead.stdout)
    A.lock_path(out).write_text(json.dumps({"pid": pid, "host": socket.gethostname(), "started": "then"}))
    notes: list[str] = []
    path = A.acquire_lock(out, notes)
    assert json.loads(path.read_text())["pid"] == os.getpid()
    assert len(notes) == 1 and notes[0].startswith("removed a stale lock") and f"pid {pid}" in notes[0]
    A.release_lock(path)


def test_lock_of_another_host_is_respected(tmp_path):
    out = tmp_path / "out"
    A.lock_path(out).write_text(json.dumps({"pid": 1, "host": "elsewhere.example", "started": "now"}))
    with pytest.raises(OutputLockedError, match="on host elsewhere.example.*delete the lock file"):
        A.acquire_lock(out, [])


def test_second_run_into_the_same_folder_refused(tmp_path):
    out = tmp_path / "out"
    with A.StagedOutput(out, data=tmp_path):
        with pytest.raises(OutputLockedError):
            with A.StagedOutput(out, data=tmp_path):
                pass
    assert not A.lock_path(out).exists()


# ============================================================================ staging and swap
def test_interrupted_run_leaves_previous_output_byte_identical(tmp_path):
    out = tmp_path / "out"
    fake_run(out, extra=("notes.txt",))
    before = tree(out)
    with pytest.raises(KeyboardInterrupt):
        with A.StagedOutput(out, data="/data/rel") as st:
            (st.staging / "tables").mkdir(exist_ok=True)
            (st.staging / "tables" / "half.csv").write_text("half-written\n")
            raise KeyboardInterrupt
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]  # no staging folder, no lock
    assert "the previous complete output is untouched" in st.notes[-1]


def test_commit_holds_only_this_runs_files_and_keeps_the_users(tmp_path):
    out = tmp_path / "out"
    fake_run(out, extra=("notes.txt", "figures/my_sketch.png"))
    (out / "tables" / "stale_from_an_older_version.csv").write_text("old\n")   # not in run.json
    with A.StagedOutput(out, data="/data/rel") as st:
        assert sorted(p.relative_to(st.staging).as_posix() for p in st.staging.rglob("*") if p.is_file()) == [
            "reproduction.csv", "run.json"]  # what the runner reads of the previous run
        (st.staging / "tables").mkdir()
        (st.staging / "tables" / "new.csv").write_text("new\n")
        (st.staging / "run.json").write_text(json.dumps({"data_dir": "/data/rel", "notebooks": []}))
        st.commit()
    assert sorted(tree(out)) == ["earlier-files/figures/my_sketch.png",
                                 "earlier-files/tables/stale_from_an_older_version.csv",
                                 "notes.txt", "reproduction.csv", "run.json", "tables/new.csv"]
    assert any(n.startswith("kept 1 file(s) in the output folder that reproduce did not write: notes.txt")
               for n in st.notes)
    assert any("figures/my_sketch.png -> earlier-files/figures/my_sketch.png" in n for n in st.notes)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_only_seeds_the_other_notebooks_outputs(tmp_path):
    out = tmp_path / "out"
    fake_run(out, notebooks=(("01_a", ["tables/a.csv"]), ("02_b", ["tables/b.csv", "figures/b.png"])))
    with A.StagedOutput(out, data="/data/rel", only={"02_b"}) as st:
        got = sorted(p.relative_to(st.staging).as_posix() for p in st.staging.rglob("*") if p.is_file())
    assert got == ["notebooks/01_a.ipynb", "notebooks/01_a.log", "reproduction.csv", "run.json", "tables/a.csv"]


def test_only_with_another_release_is_refused(tmp_path):
    out = tmp_path / "out"
    fake_run(out, data="/data/first")
    before = tree(out)
    with pytest.raises(OutputFolderError) as ei:
        with A.StagedOutput(out, data="/data/second", only={"01_a"}):
            pass
    msg = str(ei.value)
    assert "holds a run on '/data/first'; --only with --data '/data/second' would mix two releases" in msg
    assert "Rerun without --only (every notebook), or choose another --out" in msg
    assert tree(out) == before and not A.lock_path(out).exists()


def test_foreign_folder_is_refused(tmp_path):
    out = tmp_path / "home"
    (out / "thesis").mkdir(parents=True)
    (out / "thesis" / "main.tex").write_text("my work\n")
    with pytest.raises(OutputFolderError, match="holds no earlier reproduce run .no run.json. but folders of its "
                                                "own .thesis.; .*choose a new or empty folder"):
        with A.StagedOutput(out, data=tmp_path):
            pass
    assert (out / "thesis" / "main.tex").read_text() == "my work\n"


def test_folder_with_a_readme_is_used_and_the_readme_kept(tmp_path):
    """The repository's figures/ (make reproduce's default --out) holds a README.md and no run.json."""
    out = tmp_path / "figures"
    out.mkdir()
    (out / "README.md").write_text("outputs land here\n")
    with A.StagedOutput(out, data=tmp_path) as st:
        (st.staging / "run.json").write_text("{}")
        st.commit()
    assert sorted(tree(out)) == ["README.md", "run.json"]
    assert st.notes == []  # the folder's own README is carried over without a note on every run


def test_recovery_after_a_killed_run(tmp_path):
    out = tmp_path / "out"
    fake_run(out)
    before = tree(out)
    # killed between the two renames of a swap: OUT is gone, the previous output sits beside it
    os.rename(out, tmp_path / ".out.voxmem-previous-99999")
    (tmp_path / ".out.voxmem-staging-99999").mkdir()
    with A.StagedOutput(out, data="/data/rel") as st:
        pass
    assert tree(out) == before
    assert any(n.startswith("restored the previous output") for n in st.notes)
    assert any("unfinished staging folder of an interrupted run" in n for n in st.notes)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


# ============================================================================ the runner and the command line
HEADER = """\
# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---
"""


def notebook(table: str, body: str = "") -> str:
    """A notebook writing ``tables/<table>.csv`` (then running ``body``)."""
    return HEADER + textwrap.dedent(f'''
        # %% tags=["parameters"]
        data_dir = "data/synthetic"
        out_dir = "out"

        # %%
        from pathlib import Path
        Path(out_dir, "tables").mkdir(parents=True, exist_ok=True)
        Path(out_dir, "tables", "{table}.csv").write_text("x\\n1\\n")

        # %%
        {body}
        ''')


@pytest.fixture
def two_notebooks(tmp_path) -> Path:
    d = tmp_path / "notebooks"
    d.mkdir()
    (d / "01_first.py").write_text(notebook("first"))
    (d / "02_second.py").write_text(notebook("second"))
    return d


@pytest.fixture(scope="session")
def first_run(made_once) -> Path:
    """The output of one complete run of the two notebooks on the tiny release (made once; read only)."""
    def make(folder: Path) -> None:
        rel = write_tiny_release(folder / "rel")
        (folder / "notebooks").mkdir(parents=True)
        for name, table in (("01_first", "first"), ("02_second", "second")):
            (folder / "notebooks" / f"{name}.py").write_text(notebook(table))
        rc, out, err = run_cli(["reproduce", "--jobs", "1", "--no-progress", "--n-boot", "20", "--data", rel,
                                "--out", folder / "out", "--notebooks", folder / "notebooks"])
        assert rc == 0, out + err

    return made_once("atomic-first-run", make) / "out"


def reproduce(argv, capsys=None) -> tuple[int, str, str]:
    from voxmem_analysis.cli import main

    rc = main(["reproduce", "--jobs", "1", "--no-progress", "--n-boot", "20", *argv])
    out, err = capsys.readouterr() if capsys is not None else ("", "")
    assert "Traceback" not in err
    return rc, out, err


def test_rerun_holds_only_this_runs_files(two_notebooks, tiny_release, tmp_path, capsys, first_run):
    out = tmp_path / "out"
    args = ["--data", str(tiny_release), "--out", str(out), "--notebooks", str(two_notebooks)]
    shutil.copytree(first_run, out)                   # a complete earlier run of the same notebooks
    assert sorted(p.name for p in (out / "tables").iterdir()) == ["first.csv", "second.csv"]
    (out / "my_notes.txt").write_text("mine\n")
    (two_notebooks / "02_second.py").write_text(notebook("second_renamed"))
    rc, _, err = reproduce(args, capsys)
    assert rc == 0
    assert sorted(p.name for p in (out / "tables").iterdir()) == ["first.csv", "second_renamed.csv"]
    html = (out / "report" / "index.html").read_text()
    assert "second_renamed" in html and "tables/second.csv" not in html
    assert (out / "my_notes.txt").read_text() == "mine\n"
    assert "kept 1 file(s) in the output folder that reproduce did not write: my_notes.txt" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "out", "rel"]  # no staging, no lock


def test_failing_notebook_without_keep_going_leaves_previous_output(two_notebooks, tiny_release, tmp_path, capsys,
                                                                    first_run):
    out = tmp_path / "out"
    args = ["--data", str(tiny_release), "--out", str(out), "--notebooks", str(two_notebooks)]
    shutil.copytree(first_run, out)                   # a complete earlier run of the same notebooks
    before = tree(out)
    (two_notebooks / "01_first.py").write_text(notebook("first", "raise RuntimeError('broken on purpose')"))
    rc, printed, err = reproduce([*args, "--no-keep-going"], capsys)
    assert rc == 1
    assert tree(out) == before
    assert "01_first failed" in printed and "RuntimeError: broken on purpose" in printed
    assert "stopped (--no-keep-going)" in printed
    assert f"{str(out)!r} left as it was (the previous complete output is untouched)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "out", "rel"]
    # with --keep-going (the default) the failure is reported in a new, complete output
    rc, printed, _ = reproduce(args, capsys)
    assert rc == 1 and json.loads((out / "run.json").read_text())["exit_code"] == 1


def test_keyboard_interrupt_in_the_runner_leaves_previous_output(two_notebooks, tiny_release, tmp_path,
                                                                 monkeypatch, capsys, first_run):
    from voxmem_analysis.reproduce import runner as R

    out = tmp_path / "out"
    args = ["--data", str(tiny_release), "--out", str(out), "--notebooks", str(two_notebooks)]
    shutil.copytree(first_run, out)                   # a complete earlier run of the same notebooks
    before = tree(out)

    def interrupted(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(R, "_collect", interrupted)  # Ctrl-C while the first result comes in
    rc, _, err = reproduce(args, capsys)
    assert rc == 130
    assert tree(out) == before
    assert "stopped before the output was complete (Ctrl-C)" in err
    assert "interrupted (Ctrl-C)" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "out", "rel"]


def test_cli_refuses_a_locked_folder(two_notebooks, tiny_release, tmp_path, capsys):
    out = tmp_path / "out"
    lock = A.lock_path(out)
    lock.write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname(), "started": "earlier"}))
    rc, _, err = reproduce(["--data", str(tiny_release), "--out", str(out), "--notebooks", str(two_notebooks)],
                           capsys)
    assert rc == 2
    assert f"error: reproduce: --out {str(out.resolve())!r} is being written by another" in err
    assert f"(pid {os.getppid()} on host {socket.gethostname()}, started earlier" in err
    assert not out.exists() and lock.exists()


def test_cli_only_with_another_data_refused(two_notebooks, tiny_release, tmp_path, capsys, first_run):
    out = tmp_path / "out"
    shutil.copytree(first_run, out)                   # a complete earlier run of the same notebooks
    before = tree(out)
    other = tmp_path / "rel2"
    shutil.copytree(tiny_release, other)
    rc, _, err = reproduce(["--data", str(other), "--out", str(out), "--notebooks", str(two_notebooks),
                            "--only", "01"], capsys)
    assert rc == 2 and "would mix two releases in one report" in err
    assert tree(out) == before


SLOW = HEADER + textwrap.dedent('''
    # %% tags=["parameters"]
    data_dir = "data/synthetic"
    out_dir = "out"

    # %%
    from pathlib import Path
    Path(out_dir, "started").write_text("x")
    import time
    time.sleep(120)
    ''')


@pytest.mark.skipif(sys.platform == "win32", reason="process groups and SIGINT")
def test_ctrl_c_stops_workers_cleanly(tmp_path, tiny_release):
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while a notebook runs:
    exit 130, one message and no traceback, workers gone, staging removed, previous output kept."""
    import signal
    import time

    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    (nbs / "01_slow.py").write_text(SLOW)
    out = tmp_path / "out"
    fake_run(out, data=str(tiny_release))
    before = tree(out)
    exe = Path(sys.executable).with_name("voxmem-analysis")
    proc = subprocess.Popen([str(exe), "reproduce", "--data", str(tiny_release), "--out", str(out), "--notebooks",
                             str(nbs), "--jobs", "1", "--no-progress"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # as in a terminal
    started = None
    deadline = time.monotonic() + 120
    while started is None and time.monotonic() < deadline and proc.poll() is None:
        started = next(iter(tmp_path.glob(".out.voxmem-staging-*/.staging/01_slow/started")), None)
        time.sleep(0.2)
    assert started is not None, proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr
    assert "interrupted (Ctrl-C)" in stderr and "left as it was" in stderr
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notebooks", "out", "rel"]
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:  # every process of the run's group (workers, forkserver) ends
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    with pytest.raises(ProcessLookupError):
        os.killpg(proc.pid, 0)
