"""Audio MultiChallenge in `reproduce` and `validate`: the paper's release scores the 214 AMC numbers
beside VoxMem's 436, an AMC release runs only the AMC notebook(s), `validate` reads AMC releases, and
Figure 8 shows the bin sizes."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from voxmem_analysis.cli import main
from voxmem_analysis.reproduce import notebook as N
from voxmem_analysis.reproduce import scoreboard as rp
from voxmem_analysis.reproduce.scoreboard import table2_misprints

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "data" / "synthetic"
AMC_DATA = ROOT / "data" / "synthetic-amc"
MISPRINT = ("amc_table2", "Gemini 3 Pro Preview (Thinking)|Text", "IR")
need_data = pytest.mark.skipif(not (PAPER / "predictions").is_dir() or not (AMC_DATA / "verdicts").is_dir(),
                               reason="data/synthetic or data/synthetic-amc not present")


# ----------------------------------------------------------------------------- scoreboard
def test_misprint_is_found_by_the_integer_count_check_and_agrees_with_synth():
    from voxmem_analysis.synth.amc import known_misprints

    found = table2_misprints()
    assert set(found) == {MISPRINT} == known_misprints()
    assert "79/120 = 65.83" in found[MISPRINT] and "65.283" in found[MISPRINT]


def test_mark_paper_inconsistent_counts_apart_from_outside():
    pub = pd.DataFrame([("t", "a", "x", 10.0, "pct", "approx", 0.05, "calibrated", ""),
                        ("t", "b", "x", 20.0, "pct", "approx", 0.05, "calibrated", ""),
                        ("t", "c", "x", 30.0, "pct", "approx", 0.05, "calibrated", ""),
                        ("amc_t", "d", "x", 40.0, "pct", "approx", 0.05, "calibrated", "")],
                       columns=["artifact", "row", "column", "value", "unit", "comparator", "tolerance", "kind",
                                "source"])
    rep = pd.DataFrame([("t", "a", "x", 10.0), ("t", "b", "x", 21.0), ("amc_t", "d", "x", 41.0)],
                       columns=["artifact", "row", "column", "value"])
    out = rp.mark_paper_inconsistent(rp.compare(pub, rep), {("amc_t", "d", "x"): "misprint",
                                                            ("t", "c", "x"): "no value"})
    assert out["status"].tolist() == ["within", "outside", "missing", "paper_inconsistent"]
    assert out["note"].tolist() == ["", "", "no value", "misprint"]
    assert not out["within_tolerance"].iloc[3]                     # the printed number is still not reproduced
    s = rp.summarize(out)
    assert (s["numbers"], s["within"], s["outside"], s["missing"], s["paper_inconsistent"]) == (4, 1, 1, 1, 1)
    assert s["by_benchmark"] == {"voxmem": {"numbers": 3, "within": 1, "outside": 1, "missing": 1,
                                            "paper_inconsistent": 0},
                                 "amc": {"numbers": 1, "within": 0, "outside": 0, "missing": 0,
                                         "paper_inconsistent": 1}}
    assert s["inconsistent_notes"] == ["amc_t d / x: misprint"]


@need_data
def test_paper_release_scores_voxmem_and_amc_numbers(tmp_path):
    """reproduction.csv on the paper's release: 436 VoxMem + 214 AMC rows; every AMC number within
    tolerance but the documented misprint, which is `paper_inconsistent`, not a failure."""
    from voxmem_analysis.reproduce.published import published
    from voxmem_analysis.reproduce.report import render_report

    from conftest import write_artifact_tables

    from voxmem_analysis.io import load_amc
    from voxmem_analysis.io import load_release
    from voxmem_analysis.reproduce.mode import release_info

    # what notebooks 10-40 (on the paper's release) and 70 (on the bundled AMC release) write
    write_artifact_tables(load_release(PAPER), tmp_path, published()["artifact"], n_boot=200)
    write_artifact_tables(load_amc(AMC_DATA), tmp_path, published(benchmark="amc")["artifact"], n_boot=200)
    table = rp.reproduction_from_files(tmp_path)
    rp.write_csv(table, tmp_path / "reproduction.csv")
    info = {"release": release_info(load_release(PAPER), PAPER)[0], "reproduction": rp.summarize(table)}
    assert table.attrs["artifact_errors"] == {}
    rep = pd.read_csv(tmp_path / "reproduction.csv", keep_default_na=False, na_values=[""])
    amc = rep[rep["artifact"].str.startswith("amc_")]
    assert (len(rep), len(rep) - len(amc), len(amc)) == (650, 436, 214)
    assert len(published()) == 436 and len(published(benchmark="amc")) == 214
    assert amc["reproduced"].notna().all()
    off = amc[amc["status"] != "within"]
    assert [tuple(k) for k in off[["artifact", "row", "column"]].itertuples(index=False)] == [MISPRINT]
    row = off.iloc[0]
    assert row["status"] == "paper_inconsistent" and "79/120 = 65.83" in row["note"]
    assert row["published"] == 65.283 and row["reproduced"] == pytest.approx(100 * 79 / 120, abs=1e-4)
    assert (amc.loc[amc["status"] == "within", "within_tolerance"]).all()
    s = info["reproduction"]
    assert s["by_benchmark"]["amc"] == {"numbers": 214, "within": 213, "outside": 0, "missing": 0,
                                        "paper_inconsistent": 1}
    assert s["paper_inconsistent"] == 1 and s["by_benchmark"]["voxmem"]["numbers"] == 436
    # the report: AMC rows grouped under their own heading, the misprint shown and counted apart
    (tmp_path / "run.json").write_text(json.dumps({"notebooks": [], "release": info["release"],
                                                   "reproduction": s, "data_dir": str(PAPER)}, default=str))
    html = render_report(tmp_path)
    assert html.index("<h3>VoxMem</h3>") < html.index("<h3>Audio MultiChallenge</h3>")
    assert "paper inconsistent</span> known paper inconsistency: no count over 120 tasks gives 65.283" in html
    assert "known paper inconsistencies" in html          # its own summary card


@need_data
def test_paper_release_runs_the_amc_notebook_on_the_bundled_release(tmp_path):
    declared = {"amc_data_dir": "x", "out_dir": "o", "seed": 0, "n_boot": 1}
    inject, reason = N.plan_parameters(declared, data_dir=str(PAPER), out_dir="o", seed=0, n_boot=10,
                                       include_examples=False)
    assert reason is None and inject["amc_data_dir"] == str(N.AMC_EXAMPLE)
    # another (user's) VoxMem release: not without --include-examples
    (tmp_path / "release.json").write_text(json.dumps({"name": "mine", "seed": 1}))
    _, reason = N.plan_parameters(declared, data_dir=str(tmp_path), out_dir="o", seed=0, n_boot=10,
                                  include_examples=False)
    assert "paper's release or with --include-examples" in reason


# ----------------------------------------------------------------------------- an AMC release
@need_data
def test_reproduce_on_an_amc_release_skips_the_voxmem_notebooks(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["reproduce", "--data", str(AMC_DATA), "--out", str(out), "--only", "00,10,60,70",
               "--n-boot", "20", "--no-progress"])
    printed = capsys.readouterr().out
    assert rc == 0
    run = json.loads((out / "run.json").read_text())
    assert {nb["name"]: nb["status"] for nb in run["notebooks"]} == {
        "00_validate": "skipped", "10_main_results": "skipped", "60_longmemeval": "skipped",
        "70_audio_multichallenge": "ok"}
    assert all(nb["reason"].startswith("not a VoxMem release") for nb in run["notebooks"] if nb["status"] == "skipped")
    assert printed.count("not a VoxMem release") == 3 and "FAILED" not in printed
    rep = pd.read_csv(out / "reproduction.csv", keep_default_na=False, na_values=[""])
    assert len(rep) == 214 and (rep["status"] == "paper_inconsistent").sum() == 1
    assert (out / "figures" / "amc_fig8.png").is_file()
    assert "213 within tolerance, 0 outside, 0 not reproduced, 1 known paper inconsistency" in printed
    html = (out / "report" / "index.html").read_text()
    assert "<title>Audio MultiChallenge reproduction report: amc-synthetic (SYNTHETIC DATA)</title>" in html


# ----------------------------------------------------------------------------- validate
@need_data
def test_validate_recognises_an_amc_release(capsys):
    assert main(["validate", "--data", str(AMC_DATA)]) == 0
    out = capsys.readouterr().out
    assert "Audio MultiChallenge" in out
    assert "tasks: 452 (IM 132, IR 120, SC 83, VE 117)  rubric items: 1712" in out
    assert "verdicts       20 34240    452" in out
    assert "rows left out by --lenient: none" in out and "0 error(s), 0 warning(s)" in out


def test_validate_an_amc_release_with_a_bad_file(tmp_path, capsys):
    from tests.test_amc import TASKS, write_release

    root = write_release(tmp_path / "r", tasks=TASKS.replace("t3,SC,", "t3,XX,"))
    assert main(["validate", "--data", str(root)]) == 1
    cap = capsys.readouterr()
    assert "unknown_axis: tasks.csv:4 [axis]" in cap.err and "Traceback" not in cap.err
    assert "tasks: 3 (IM 1, IR 1, SC 0, VE 1)" in cap.out
    assert "rejected_task_rows=1" in cap.out              # what --lenient leaves out, counted
    assert "strict mode (the default of table / export-frame) refuses this release" in cap.err
    assert "problems by code: unknown_axis 1" in cap.out


# ----------------------------------------------------------------------------- Figure 8
def test_fig8_shows_bin_sizes_and_marks_small_bins():
    from voxmem_analysis.plots.amc import plot_bins

    cols = ["IM", "IR", "SC", "VE", "All"]
    t = pd.DataFrame([[20, 30, 40, 50, 35, 10, 10, 10, 10, 40],
                      [25, np.nan, 0, 50, 30, 6, 0, 2, 1, 9],
                      [10, 20, 30, 40, 25, 1, 1, 1, 1, 4]],
                     index=["turns|3", "duration|0-60 s", "duration|1-3 min"],
                     columns=cols + [f"{c} n" for c in cols])
    fig = plot_bins(t)
    a, b = fig.axes
    assert [x.get_text() for x in a.get_xticklabels()] == ["3\nn=40\n10/10/10/10"]
    assert [x.get_text() for x in b.get_xticklabels()] == ["0-60 s\nn=9\n6/0*/2*/1*", "1-3 min\nn=4\n1*/1*/1*/1*"]
    hollow = [ln for ln in b.get_lines() if ln.get_markerfacecolor() == "white"]
    # (b) open markers: IM bin 2; IR bins 1 (0 tasks, NaN: nothing drawn) and 2; SC, VE bins 1-2; All bin 2
    assert sorted(len(ln.get_xdata()) for ln in hollow) == [1, 1, 2, 2, 2]
    with_nan = [ln for ln in hollow if np.isnan(np.asarray(ln.get_ydata(), dtype=float)).any()]
    assert len(with_nan) == 1 and list(with_nan[0].get_ydata())[1] == 20          # IR
    assert len(b.patches) == 1                               # the bin with 4 tasks in all is shaded
    assert not [ln for ln in a.get_lines() if ln.get_markerfacecolor() == "white"]
    assert min(ax.get_position().width for ax in fig.axes) > 0.3    # layout not squeezed (each panel ~0.44)
    import matplotlib.pyplot as plt

    plt.close(fig)
