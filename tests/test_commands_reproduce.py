"""``reproduce --out`` never moves, replaces or truncates an input: OUT and the lock beside it are checked,
before anything is written, against every input of the run -- the release folder and each file in it
resolved through links, the notebooks, and every file of ``--manifest``/``--tasks``."""
from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

from conftest import REPO
from voxmem_analysis.cli import main
from voxmem_analysis.commands._guards import command_inputs

AMC_RUN = REPO / "data" / "examples" / "amc_run"


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_out_holding_the_task_table_is_refused(tmp_path, capsys):
    """The task table kept in ``runs/tables/`` and ``--out runs``: it would have gone to earlier-files/."""
    runs, judged = tmp_path / "runs", tmp_path / "judged"
    shutil.copytree(AMC_RUN, judged)
    (runs / "tables").mkdir(parents=True)
    tasks = shutil.move(judged / "tasks.jsonl", runs / "tables" / "tasks.jsonl")
    before = _sha(Path(tasks))
    rc = main(["reproduce", "--manifest", str(judged / "manifest.csv"), "--tasks", str(tasks),
               "--out", str(runs), "--n-boot", "20"])
    err = capsys.readouterr().err
    assert rc == 2 and "contains the input file" in err and "tasks.jsonl" in err, err
    assert _sha(Path(tasks)) == before and not (runs / "earlier-files").exists() and not (runs / "run.json").exists()


def test_out_holding_the_target_of_a_linked_release_file_is_refused(tiny_release, tmp_path, capsys):
    """The release's items.csv is a link into another folder's tables/: that folder is no --out."""
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "tables").mkdir(parents=True)
    target = shutil.move(tiny_release / "items.csv", elsewhere / "tables" / "items.csv")
    (tiny_release / "items.csv").symlink_to(target)
    before = _sha(Path(target))
    rc = main(["reproduce", "--data", str(tiny_release), "--out", str(elsewhere), "--only", "00", "--n-boot", "20"])
    err = capsys.readouterr().err
    assert rc == 2 and f"contains the input file {str(target)!r}" in err, err
    assert _sha(Path(target)) == before and sorted(p.name for p in elsewhere.iterdir()) == ["tables"]


def test_the_inputs_of_a_command(tiny_release, tmp_path):
    linked = tmp_path / "loop"
    (tiny_release / "more").symlink_to(tiny_release, target_is_directory=True)   # a link back up: walked once
    (tiny_release / "models.csv").rename(tmp_path / "models.csv")
    (tiny_release / "models.csv").symlink_to(tmp_path / "models.csv")
    found = command_inputs(data=tiny_release, extra=[linked])
    assert found[0] == str(tiny_release.resolve())
    assert str(tmp_path / "models.csv") in found and str(tiny_release / "items.csv") in found and str(linked) in found


def test_notebook_options_are_refused_for_judged_runs_before_reading(tmp_path, capsys):
    """The option table says which options judged Audio MultiChallenge runs take: every other one given is
    named, with why, before any file is read or written."""
    rc = main(["reproduce", "--manifest", str(AMC_RUN / "manifest.csv"), "--tasks", str(AMC_RUN / "tasks.jsonl"),
               "--out", str(tmp_path / "o"), "--jobs", "2", "-p", "x=1"])
    err = capsys.readouterr().err
    assert rc == 2 and not (tmp_path / "o").exists()
    assert err.strip() == ("error: reproduce: --jobs and --parameter do not apply to judged Audio MultiChallenge runs "
                           "(--manifest/--tasks write an analysis report of the runs; no notebooks run)")
