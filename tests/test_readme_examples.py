"""README.md's examples run as written: every ```sh block (shell commands) and ```python block.

`voxmem-analysis` is run as `python -m voxmem_analysis` from the repository root; output paths
under /tmp/ are redirected into the test's temporary folder.  Each command must exit 0 without a
traceback, and its outputs must exist.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

import pytest

from tests.conftest import REPO

README = REPO / "README.md"
_BLOCK = re.compile(r"^```(sh|python)\n(.*?)^```", re.M | re.S)


def _blocks(kind: str) -> list[str]:
    return [body for k, body in _BLOCK.findall(README.read_text(encoding="utf-8")) if k == kind]


def _commands() -> list[str]:
    cmds = []
    for body in _blocks("sh"):
        for line in body.splitlines():
            line = line.strip()
            if line and not line.startswith("#"):
                cmds.append(line)
    return cmds


def test_readme_has_runnable_examples_on_the_shipped_folder():
    cmds = _commands()
    assert len(cmds) >= 8
    assert all(c.startswith("voxmem-analysis ") for c in cmds)
    for c in cmds:
        for m in re.finditer(r"--data (\S+)", c):
            assert (REPO / m.group(1)).is_dir(), f"README example uses a missing folder: {c}"


#: the README's `reproduce` of its own-run example: run once per session (the ``my_eval_report`` fixture of
#: conftest.py), its output read by this test and by test_own_data_reproduce.py
MY_EVAL_REPRODUCE = next(c for c in _commands() if c.startswith("voxmem-analysis reproduce --data data/examples/my_eval"))


def run_as_written(command: str, tmp_path) -> tuple[list[str], subprocess.CompletedProcess]:
    """``command`` run from the repository root, its /tmp/ paths moved into ``tmp_path``."""
    argv = shlex.split(command, comments=True)
    argv = [str(tmp_path / a[len("/tmp/"):]) if a.startswith("/tmp/") else a for a in argv[1:]]
    if argv[0] == "reproduce":   # as written, plus a smaller bootstrap to keep the test short
        argv += ["--n-boot", "50", "--no-progress"]
    proc = subprocess.run([sys.executable, "-m", "voxmem_analysis", *argv], cwd=REPO, capture_output=True,
                          text=True, timeout=900)
    return argv, proc


@pytest.mark.parametrize("command", _commands(), ids=lambda c: " ".join(c.split()[1:3]))
def test_readme_command_runs_as_written(command, tmp_path, request):
    if command == MY_EVAL_REPRODUCE:          # run once per session, as written
        tmp_path = request.getfixturevalue("my_eval_report")
        done = json.loads((tmp_path / "result.json").read_text())
        argv, proc = done["argv"], subprocess.CompletedProcess(done["argv"], done["returncode"], done["stdout"],
                                                                done["stderr"])
    else:
        argv, proc = run_as_written(command, tmp_path)
    assert proc.returncode == 0, f"{command}\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}"
    assert "Traceback" not in proc.stderr
    assert proc.stdout.strip() or any(tmp_path.iterdir())
    for a in argv:
        if a.startswith(str(tmp_path)):
            assert (tmp_path / a[len(str(tmp_path)) + 1:]).exists(), a
    if argv[0] == "reproduce" and "--manifest" in argv:   # users' Audio MultiChallenge runs
        html = (tmp_path / "amc_report" / "report" / "index.html").read_text()
        assert "synth-cascade" in html and "SYNTHETIC" in html and "pass/fail" not in html.lower()
    elif argv[0] == "reproduce":
        html = (tmp_path / "my_eval_report" / "report" / "index.html").read_text()
        assert "MyModel-v1" in html and "Published vs reproduced" not in html


def test_readme_python_examples_run(monkeypatch):
    monkeypatch.chdir(REPO)
    for body in _blocks("python"):
        exec(compile(body, "README.md", "exec"), {})
