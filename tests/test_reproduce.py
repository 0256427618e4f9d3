"""The reproduction runner: discovery, parameters, a broken notebook, determinism of the outputs."""
from __future__ import annotations

import hashlib
import json
import textwrap
from pathlib import Path

import pytest

from voxmem_analysis.errors import InputError
from voxmem_analysis.reproduce import notebook as N
from voxmem_analysis.reproduce import runner as R
from voxmem_analysis.cli import main

REPO = Path(__file__).resolve().parents[1]
SYNTHETIC = REPO / "data" / "synthetic"

HEADER = """\
# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---
"""

GOOD = HEADER + '''
# %% tags=["parameters"]
data_dir = "data/synthetic"
out_dir = "figures"
seed = 0
n_boot = 10_000

# %%
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from voxmem_analysis import load_release, output
from voxmem_analysis.plots.style import paper_style

release = load_release(data_dir)
acc = (release.pandas().groupby("model", observed=True)["correct"].mean() * 100).rename("accuracy").to_frame()
rng = np.random.default_rng(seed)
acc["noise"] = rng.normal(size=len(acc)).round(6)
output.save_table(acc, out_dir, "good_accuracy", caption="Accuracy by model", synthetic=release.synthetic)

# %%
with paper_style():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.barh(acc.index, acc["accuracy"], color="#0072B2")
    ax.set_xlabel("Accuracy (%) \u2014 \u03ba")
    output.save_figure(fig, out_dir, "good_accuracy", data=acc, release=release)
'''

BROKEN = HEADER + '''
# %% tags=["parameters"]
data_dir = "data/synthetic"
out_dir = "figures"

# %%
from voxmem_analysis import output
import pandas as pd
output.save_table(pd.DataFrame({"x": [1.0]}), out_dir, "broken_before_failure")

# %%
counts = {"a": 0}
ratio = 1 / counts["a"]

# %%
output.save_table(pd.DataFrame({"x": [2.0]}), out_dir, "never_written")
'''

NO_PARAMS = HEADER + '''
# %%
print("no parameters cell")
'''


def _digest(root: Path) -> dict[str, str]:
    files = [p for sub in ("figures", "tables") for p in sorted((root / sub).rglob("*")) if p.is_file()]
    files += [root / f for f in ("reproduction.csv", "audit.csv") if (root / f).exists()]
    return {p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


@pytest.fixture
def notebooks(tmp_path) -> Path:
    d = tmp_path / "notebooks"
    d.mkdir()
    (d / "01_good.py").write_text(GOOD)
    (d / "02_broken.py").write_text(BROKEN)
    (d / "03_no_params.py").write_text(NO_PARAMS)
    (d / "helper.py").write_text("x = 1\n")   # not NN_name: not a notebook
    return d


# ----------------------------------------------------------------------------- units
def test_discover_and_select(notebooks):
    names = [p.stem for p in N.discover(notebooks)]
    assert names == ["01_good", "02_broken", "03_no_params"]
    paths = N.discover(notebooks)
    assert [p.stem for p in N.select(paths, "02_broken,01")] == ["01_good", "02_broken"]
    assert [p.stem for p in N.select(paths, ["good"])] == ["01_good"]
    assert N.select(paths, None) == paths
    with pytest.raises(ValueError, match="no notebook named 'nope'"):
        N.select(paths, "nope")
    with pytest.raises(InputError, match="notebooks directory .* does not exist"):
        N.discover(notebooks / "missing")


def test_repository_notebooks_resolved_from_package_location(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    assert N.NOTEBOOKS_DIR == REPO / "notebooks"
    assert "00_validate" in [p.stem for p in N.discover()]


def test_declared_parameters():
    src = 'data_dir = "x"\nout_dir: str = "y"\nseed = 3\nmodels = None\nfn = len\n# comment\n'
    assert N.declared_parameters(src) == {"data_dir": "x", "out_dir": "y", "seed": 3, "models": None, "fn": ...}
    assert N.declared_parameters("this is not python(") == {}


def test_plan_parameters(monkeypatch, tmp_path):
    declared = {"data_dir": "d", "out_dir": "o", "seed": 0, "budget": "32K", "interactive": True}
    inject, reason = N.plan_parameters(declared, data_dir="/data", out_dir="/out", seed=7, n_boot=100,
                                       overrides={"budget": "8K", "unknown": 1})
    assert reason is None
    # only what the notebook declares; n_boot is not declared, nor is `unknown`
    assert inject == {"data_dir": "/data", "out_dir": "/out", "seed": 7, "interactive": False, "budget": "8K"}
    # a LongMemEval notebook without the example manifest is skipped, with the reason
    monkeypatch.setattr(N, "LONGMEMEVAL_EXAMPLE", tmp_path / "none")
    inject, reason = N.plan_parameters({"manifest": None, "out_dir": "o"}, data_dir="/d", out_dir="/o", seed=0,
                                       n_boot=1)
    assert inject == {} and "manifest" in reason
    ex = tmp_path / "lme"
    ex.mkdir()
    (ex / "manifest.csv").write_text("path,system\n")
    (ex / "questions.json").write_text("[]")
    monkeypatch.setattr(N, "LONGMEMEVAL_EXAMPLE", ex)
    inject, reason = N.plan_parameters({"manifest": None, "questions": None, "out_dir": "o", "seed": 0},
                                       data_dir="/d", out_dir="/o", seed=5, n_boot=1)
    assert reason is None
    assert inject == {"manifest": str(ex / "manifest.csv"), "questions": str(ex / "questions.json"),
                      "out_dir": "/o", "seed": 5}
    _, reason = N.plan_parameters({"seed": 0}, data_dir="/d", out_dir="/o", seed=0, n_boot=1)
    assert "neither" in reason


# ----------------------------------------------------------------------------- end to end
def test_broken_notebook_is_reported_and_the_others_still_produce(notebooks, tiny_release, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["reproduce", "--data", str(tiny_release), "--out", str(out), "--notebooks", str(notebooks),
               "--jobs", "2", "--n-boot", "50", "--no-progress", "--compare-published"])
    assert rc == 1
    printed = capsys.readouterr().out
    assert "02_broken" in printed and "FAILED" in printed and "ZeroDivisionError" in printed

    run = json.loads((out / "run.json").read_text())
    assert run["exit_code"] == 1
    by = {nb["name"]: nb for nb in run["notebooks"]}
    assert by["01_good"]["status"] == "ok"
    assert by["03_no_params"]["status"] == "skipped" and "parameters" in by["03_no_params"]["reason"]

    broken = by["02_broken"]
    assert broken["status"] == "failed"
    err = broken["error"]
    assert err["ename"] == "ZeroDivisionError"
    assert "division by zero" in err["evalue"]
    assert 'ratio = 1 / counts["a"]' in err["source"]
    # executed notebook: 0 parameters, 1 injected parameters, 2 first cell, 3 the failing cell
    assert err["cell_index"] == 3
    script_lines = (notebooks / "02_broken.py").read_text().splitlines()
    assert script_lines[err["line"] - 1] == 'counts = {"a": 0}'
    # what the broken notebook wrote before failing is kept and attributed; nothing after it
    assert broken["outputs"] == ["tables/broken_before_failure.csv", "tables/broken_before_failure.long.csv",
                                 "tables/broken_before_failure.md", "tables/broken_before_failure.tex"]
    assert not (out / "tables" / "never_written.csv").exists()
    executed = json.loads((out / "notebooks" / "02_broken.ipynb").read_text())
    assert any(o.get("ename") == "ZeroDivisionError" for c in executed["cells"] for o in c.get("outputs", []))

    # the good notebook's outputs are all there
    assert sorted(by["01_good"]["outputs"]) == [
        "figures/good_accuracy.csv", "figures/good_accuracy.pdf", "figures/good_accuracy.png",
        "tables/good_accuracy.csv", "tables/good_accuracy.long.csv", "tables/good_accuracy.md",
        "tables/good_accuracy.tex"]
    for rel in by["01_good"]["outputs"]:
        assert (out / rel).stat().st_size > 0
    assert (out / "notebooks" / "01_good.ipynb").exists()
    assert not (out / ".staging").exists()
    # reproduction.csv has one row per published number even on a release that reproduces little
    from voxmem_analysis.reproduce.published import published

    assert (out / "reproduction.csv").read_text().count("\n") == len(published()) + 1
    html = (out / "report" / "index.html").read_text()
    assert "02_broken failed at cell 3" in html and "ZeroDivisionError" in html
    assert "figures/good_accuracy.png" in html


def test_only_keeps_other_outputs_and_removes_stale_ones(notebooks, tiny_release, tmp_path):
    out = tmp_path / "out"
    R.run(tiny_release, out, jobs=2, n_boot=20, notebooks_dir=notebooks, only="01,02", progress=False,
          reproduction=False, report=False)
    assert (out / "tables" / "broken_before_failure.csv").exists()
    (notebooks / "02_broken.py").write_text(BROKEN.replace("broken_before_failure", "renamed_table"))
    s = R.run(tiny_release, out, jobs=1, n_boot=20, notebooks_dir=notebooks, only="02", progress=False,
              reproduction=False, report=False)
    assert [nb.name for nb in s.notebooks] == ["02_broken"]
    assert [nb["name"] for nb in s.earlier] == ["01_good"]
    assert s.exit_code == 1
    assert not (out / "tables" / "broken_before_failure.csv").exists()   # stale output of 02 removed
    assert (out / "tables" / "renamed_table.csv").exists()
    assert (out / "tables" / "good_accuracy.csv").exists()                # 01 not re-run: kept


def test_two_runs_give_identical_tables_and_figures(notebooks, tiny_release, tmp_path):
    (notebooks / "02_broken.py").unlink()
    digests = []
    for k in (1, 2):
        out = tmp_path / f"run{k}"
        s = R.run(tiny_release, out, jobs=2, seed=3, n_boot=50, notebooks_dir=notebooks, progress=False,
                  compare_published=True)
        assert s.exit_code == 0, s.tasks_failed
        digests.append(_digest(out))
    assert "figures/good_accuracy.pdf" in digests[0] and "figures/good_accuracy.png" in digests[0]
    assert "reproduction.csv" in digests[0]
    assert digests[0] == digests[1]


@pytest.mark.skipif(not (SYNTHETIC / "predictions").is_dir(), reason="data/synthetic not present")
def test_paper_notebooks_are_deterministic(tmp_path, synthetic_scaling_explorer_run):
    """Two runs of two of the workbook's notebooks on the shipped release: byte-identical outputs (the first
    run is the session's run of the same two notebooks with the same settings)."""
    only = [n for n in ("20_context_scaling", "50_subtype_explorer") if (N.NOTEBOOKS_DIR / f"{n}.py").exists()]
    digests = [_digest(synthetic_scaling_explorer_run)]
    out = tmp_path / "run2"
    s = R.run(SYNTHETIC, out, jobs=2, seed=0, n_boot=50, only=only, progress=False)
    assert not s.failed, [nb.error for nb in s.failed]
    digests.append(_digest(out))
    assert any(k.endswith(".pdf") for k in digests[0]) and any(k.endswith(".png") for k in digests[0])
    diff = sorted(k for k in set(digests[0]) | set(digests[1]) if digests[0].get(k) != digests[1].get(k))
    assert diff == []


def test_cli_list_and_report_only(tmp_path, notebooks, capsys):
    assert main(["reproduce", "--out", str(tmp_path), "--notebooks", str(notebooks), "--list"]) == 0
    listed = capsys.readouterr().out
    assert "01_good" in listed and "n_boot=10000" in listed and "(no parameters cell)" in listed
    assert main(["reproduce", "--out", str(tmp_path / "o"), "--report-only"]) == 2   # no such folder: said so
    assert "is not a folder" in capsys.readouterr().err and not (tmp_path / "o").exists()
    (tmp_path / "o").mkdir()
    assert main(["reproduce", "--out", str(tmp_path / "o"), "--report-only"]) == 0
    assert (tmp_path / "o" / "report" / "index.html").exists()
    assert not list((tmp_path / "o" / "report").glob(".*tmp*"))                       # written whole, no leftovers
    assert main(["reproduce", "--out", str(tmp_path / "o"), "--data", str(tmp_path / "missing")]) == 2
    assert main(["reproduce", "--out", str(tmp_path / "o"), "--data", str(tmp_path), "-p", "bad"]) == 2


def test_cli_startup_does_not_import_the_runner_dependencies():
    import subprocess
    import sys

    code = textwrap.dedent("""
        import sys
        from voxmem_analysis.cli import build_parser
        build_parser()
        heavy = [m for m in ("papermill", "jupytext", "nbformat", "tqdm") if m in sys.modules]
        print(",".join(heavy))
    """)
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert res.stdout.strip() == ""


def test_script_line_matches_the_whole_cell():
    script = "# %%\nimport os\nx = 1\n\n# %%\nimport os\ny = 1 / 0\n"
    assert N._script_line(script, "import os\ny = 1 / 0") == 6
    assert N._script_line(script, "\nimport os\nx = 1\n") == 2
    assert N._script_line(script, "import os\nchanged") == 2      # first line only, as a fallback
    assert N._script_line(script, "   \n") is None


def test_report_only_waits_for_no_run_it_refuses_while_one_holds_the_lock(tmp_path, capsys):
    import json
    import os
    import socket

    from voxmem_analysis.reproduce.atomic import lock_path

    out = tmp_path / "o"
    out.mkdir()
    lock = lock_path(out)
    # a live process (this one's parent) holds the lock, as a running reproduce would
    lock.write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname(), "started": "now",
                                "command": "voxmem-analysis reproduce"}))
    assert main(["reproduce", "--out", str(out), "--report-only"]) == 2
    assert "error: reproduce: --report-only: " in capsys.readouterr().err
    assert not (out / "report").exists() and lock.exists()          # nothing written, the run's lock kept
    lock.unlink()
    assert main(["reproduce", "--out", str(out), "--report-only"]) == 0
    assert not lock.exists()                                         # its own lock released


def test_report_only_says_when_run_json_is_unreadable(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / "run.json").write_text("{not json")
    assert main(["reproduce", "--out", str(out), "--report-only"]) == 0       # the page is still built
    err = capsys.readouterr().err
    assert "run.json could not be read (JSONDecodeError" in err
    assert "run.json could not be read" in (out / "report" / "index.html").read_text()
    (out / "run.json").write_text("[1, 2]")
    assert main(["reproduce", "--out", str(out), "--report-only"]) == 0
    assert "holds a JSON list, not an object" in capsys.readouterr().err
