"""``export-frame`` of judged Audio MultiChallenge runs (task and rubric level) and its output guard."""
from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from conftest import run_cli
from voxmem_analysis.io import load_amc_runs

AMC = Path(__file__).resolve().parent.parent / "data" / "examples" / "amc_run"
RUNS = ["--manifest", AMC / "manifest.csv", "--tasks", AMC / "tasks.jsonl"]


def test_the_task_and_the_rubric_frames_of_judged_runs(tmp_path, capsys):
    rc, out, err = run_cli(["export-frame", *RUNS, "--out", tmp_path / "t.parquet"], capsys)
    assert rc == 0, err
    tasks = pl.read_parquet(tmp_path / "t.parquet")
    assert tasks.height == 3 * 48 and {"system", "task_id", "passed", "share"} <= set(tasks.columns)
    rc, out, err = run_cli(["export-frame", *RUNS, "--level", "rubric", "--out", tmp_path / "r.csv"], capsys)
    assert rc == 0, err
    rubric = pl.read_csv(tmp_path / "r.csv")
    runs = load_amc_runs(AMC / "manifest.csv", AMC / "tasks.jsonl", strict=False).one_judge(None)[0]
    assert rubric.height == runs.rubric_results.height
    assert {"response", "rubric_text", "criteria_met", "explanation"} <= set(rubric.columns)


def test_an_output_on_the_target_of_a_linked_model_folder_is_refused(tiny_release, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    (tiny_release / "predictions" / "b").rename(elsewhere)
    os.symlink(elsewhere, tiny_release / "predictions" / "b")
    before = (elsewhere / "all.jsonl").read_bytes()
    rc, _, err = run_cli(["export-frame", "--data", tiny_release, "--out", elsewhere / "all.csv"], capsys)
    assert rc == 2 and "lies inside the input folder" in err
    rc, _, err = run_cli(["items", "--data", tiny_release, "--model", "Model-B", "--budget", "8K", "--out",
                          tiny_release / "predictions" / "b" / "x.csv"], capsys)
    assert rc == 2 and not (elsewhere / "x.csv").exists() and not (elsewhere / "all.csv").exists()
    assert (elsewhere / "all.jsonl").read_bytes() == before
