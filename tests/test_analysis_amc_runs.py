"""analysis/amc_runs.py: a task with a pred_error scored as the judge graded it (or as zero), Holm over every row
of the comparison, and one interval for each system's overall ARS in the slice, the comparison's strata and the
Table 2 layout."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl
import pytest

from voxmem_analysis.analysis import amc as A
from voxmem_analysis.analysis.amc_runs import amc_compare, amc_slice, task_frame
from voxmem_analysis.cli import main
from voxmem_analysis.io import load_amc_runs
from voxmem_analysis.stats import holm

ITEMS = {"t1": ["a", "b"], "t2": ["c"], "t3": ["d", "e"], "t4": ["f", "g", "h"]}
AXES = {"t1": "INFERENCE_MEMORY", "t2": "INSTRUCTION_RETENTION", "t3": "SELF_COHERENCE", "t4": "VOICE_EDITING"}


def _line(task, mets, **extra):
    return {"id": task, "rubric_results": [{"rubric_item": i, "criteria_met": m} for i, m in zip(ITEMS[task], mets)],
            **extra}


@pytest.fixture
def runs(tmp_path) -> Path:
    """sysA: every task judged.  sysB: t2 and t4 have a pred_error; the judge still graded them: t2 1 of 1 met
    (a pass as judged), t4 1 of 3 met."""
    tasks = [{"id": t, "axis": AXES[t], "rubric": json.dumps(ITEMS[t])} for t in ITEMS]
    a = [_line("t1", [True, True]), _line("t2", [False]), _line("t3", [True, False]), _line("t4", [True, True, True])]
    b = [_line("t1", [False, True]), _line("t2", [True], pred_error="timeout"), _line("t3", [True, True]),
         _line("t4", [True, False, False], pred_error="timeout", **{"pass": False})]
    for name, rows in (("tasks.jsonl", tasks), ("a.jsonl", a), ("b.jsonl", b)):
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "m.csv").write_text("path,system,output_modality\na.jsonl,sysA,Text\nb.jsonl,sysB,Text\n")
    return tmp_path


def test_a_task_without_response_keeps_the_judges_grades_by_default(runs):
    data = load_amc_runs(runs / "m.csv", runs / "tasks.jsonl")
    warn = [p for p in data.problems if p.code == "pred_error"]
    assert len(warn) == 1 and "2 task(s) have a pred_error" in warn[0].message
    assert "the judge marked 2 of 4 rubric items met" in warn[0].message
    frame, notes = task_frame(data)
    b = {r["task_id"]: (r["n_met"], r["passed"], r["pred_error"]) for r in frame.filter(
        pl.col("model") == "sysB").iter_rows(named=True)}
    assert b == {"t1": (1, False, False), "t2": (1, True, True), "t3": (2, True, False), "t4": (1, False, True)}
    # ARS as judged (.5 + 1 + 1 + 1/3) / 4, APR 2/4; zero: (.5 + 0 + 1 + 0) / 4, APR 1/4
    s = amc_slice(frame, ["system"], n_boot=200).set_index("system")
    assert s.loc["sysB (Text)", "ars"] == pytest.approx(100 * (0.5 + 1 + 1 + 1 / 3) / 4)
    assert s.loc["sysB (Text)", "apr"] == pytest.approx(50.0)
    assert notes == ["sysB (Text): 2 task(s) with a pred_error (no response); the judge marked 2 of 4 rubric items met "
                     "on them (1 passed). As judged (--pred-error as-judged, the default): ARS 70.83, APR 50.00; as 0 "
                     "items met (--pred-error zero): ARS 37.50, APR 25.00. Used here: as-judged"]
    zero, notes = task_frame(data, pred_error="zero")
    z = amc_slice(zero, ["system"], n_boot=200).set_index("system")
    assert z.loc["sysB (Text)", "ars"] == pytest.approx(37.5) and z.loc["sysB (Text)", "apr"] == pytest.approx(25.0)
    assert notes[0].endswith("Used here: zero")
    assert zero.filter(pl.col("pred_error"))["pred_error"].sum() == 2          # still counted as errors


def test_the_command_line_option(runs, capsys):
    args = ["slice", "--manifest", str(runs / "m.csv"), "--tasks", str(runs / "tasks.jsonl"), "--by", "system",
            "--n-boot", "200", "--format", "csv"]
    assert main(args + ["--pred-error", "zero"]) == 0
    out, err = capsys.readouterr()
    assert "Used here: zero" in err and "sysB (Text),overall" not in out
    assert main(["slice", "--data", str(runs), "--pred-error", "zero"]) == 2


def _frame(n_per_axis: int = 30, seed: int = 0) -> pl.DataFrame:
    """Three systems on 4 x n tasks whose pass rates differ by axis."""
    rng = np.random.default_rng(seed)
    rows = []
    for system, shift in (("S1", 0.0), ("S2", 0.15), ("S3", 0.3)):
        for ax, base in zip(("IM", "IR", "SC", "VE"), (0.3, 0.5, 0.6, 0.4)):
            for i in range(n_per_axis):
                n = int(rng.integers(1, 5))
                met = int(rng.binomial(n, min(base + shift, 0.95)))
                rows.append({"system": system, "model": system, "output_modality": "Text", "task_id": f"{ax}{i}",
                             "axis": ax, "n_rubrics": n, "n_met": met, "passed": met == n, "share": met / n})
    return pl.DataFrame(rows)


def test_compare_adjusts_over_every_row_it_prints():
    """3 pairs x (overall + 4 axes) = 15 rows: by default one Holm family of the 15 McNemar p-values (the old
    default adjusted each axis's 3 pairs apart); family="per-slice" keeps that narrower family."""
    t = amc_compare(_frame(), n_boot=200)
    assert len(t) == 15 and (t["n_family"] == 15).all() and (t["holm_family"] == "all rows (15 tests)").all()
    np.testing.assert_allclose(t["p_holm"], holm(t["p_mcnemar"].to_numpy())["p_adjusted"])
    per = amc_compare(_frame(), n_boot=200, family="per-slice")
    for ax, g in per.groupby("axis"):
        np.testing.assert_allclose(g["p_holm"], holm(g["p_mcnemar"].to_numpy())["p_adjusted"])
        assert (g["holm_family"] == f"axis {ax} (3 tests)").all()


def test_one_interval_for_a_systems_overall_ars():
    """The overall ARS of a system: the slice table and the Table 2 layout give one interval (tasks drawn within
    axes, the same draws), to the last digit; before, the Table 2 layout drew tasks unstratified."""
    frame = _frame()
    sl = amc_slice(frame, ["system", "axis"], n_boot=500, seed=3)
    over = sl[sl["level"] == "overall"].set_index("system")
    assert (over["ars_interval"] == "bootstrap (strata: axis)").all()
    verdicts = frame.to_pandas()
    # the Table 2 layout's apr_ars on a verdict frame of rubric items rebuilt from the task frame
    items = pd.DataFrame([{"model": r["model"], "output_modality": r["output_modality"], "task_id": r["task_id"],
                           "axis": r["axis"], "passed": k < r["n_met"]}
                          for r in verdicts.to_dict("records") for k in range(r["n_rubrics"])])
    t2 = A.apr_ars(items, n_boot=500, seed=3).set_index("model")
    for s in ("S1", "S2", "S3"):
        assert t2.loc[s, "ARS"] == pytest.approx(over.loc[s, "ars"])
        assert (t2.loc[s, "ARS_lo"], t2.loc[s, "ARS_hi"]) == (over.loc[s, "ars_ci_low"], over.loc[s, "ars_ci_high"])


def test_compare_draws_tasks_within_axes():
    from voxmem_analysis.stats import PairedSettings, paired_bootstrap_frame

    frame = _frame()
    t = amc_compare(frame.filter(pl.col("system") != "S3"), n_boot=400, seed=2, by_axis=False).iloc[0]
    d = frame.filter(pl.col("system") != "S3").to_pandas().assign(_s=0)
    ref = paired_bootstrap_frame(d, item="task_id", series="_s", condition="system", value="share", baseline="S1",
                                 comparison="S2", strata="axis",
                                 settings=PairedSettings(n_boot=400, seed=2, statistics="drop")).iloc[0]
    assert t["ars_diff_ci_low"] == pytest.approx(ref["ci_low"]) and t["ars_diff_ci_high"] == pytest.approx(ref["ci_high"])
