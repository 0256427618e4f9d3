"""The Audio MultiChallenge task table as users have it (``io/amc/tasks.py``): a column of any type that
carries text is read as text (a pandas ``category`` axis in a Parquet export), and a path that is no file
is named as what it is."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from voxmem_analysis.io.amc.tasks import read_task_table

RUNS = Path(__file__).resolve().parents[1] / "data" / "examples" / "amc_run"


def test_a_categorical_axis_in_a_parquet_task_table_is_read_as_text(tmp_path):
    tasks = pd.read_parquet(RUNS / "tasks.parquet")
    want, items, problems = read_task_table(RUNS / "tasks.parquet")
    assert not [p for p in problems if p.severity == "error"]
    tasks["axis"] = tasks["axis"].astype("category")
    tasks.to_parquet(tmp_path / "t.parquet")
    got, got_items, problems = read_task_table(tmp_path / "t.parquet")
    assert not [p for p in problems if p.severity == "error"], problems[:3]
    assert got.select("task_id", "axis").equals(want.select("task_id", "axis")) and got_items.equals(items)


@pytest.mark.parametrize("what, make, said", [
    ("missing", lambda p: p, "does not exist"), ("folder", lambda p: p.mkdir() or p, "is a folder, not a file"),
    ("fifo", lambda p: os.mkfifo(p) or p, "is a FIFO, a named pipe, not a regular file"),
    ("device", lambda p: Path("/dev/null"), "is a device, not a regular file")])
def test_a_task_table_that_is_no_file_is_named_as_what_it_is(tmp_path, what, make, said):
    path = make(tmp_path / "tasks.jsonl")
    tasks, items, problems = read_task_table(path)
    assert tasks.height == 0 and [(p.code, p.message) for p in problems] == [("no_tasks", f"task table {str(path)!r} {said}")]


def test_a_json_list_of_tasks_cut_short_says_how_much_was_read(tmp_path):
    rows = [json.loads(line) for line in (RUNS / "tasks.jsonl").read_text().splitlines()[:3]]
    text = json.dumps(rows, indent=1)
    (tmp_path / "t.json").write_text(text[: len(text) - 20])
    tasks, _, problems = read_task_table(tmp_path / "t.json")
    (p,) = [p for p in problems if p.code == "malformed_json"]
    assert "2 entr(ies) of the JSON list were read before it" in p.message and tasks.height == 2
