"""``items --manifest M --tasks T``: each system's response, rubric verdicts and the judge's explanations."""
from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd

from conftest import run_cli

AMC = Path(__file__).resolve().parent.parent / "data" / "examples" / "amc_run"
RUNS = ["--manifest", AMC / "manifest.csv", "--tasks", AMC / "tasks.jsonl"]


def _written(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_items_show_the_explanation_of_every_failed_rubric_item_of_either_system(capsys):
    rc, out, err = run_cli(["items", *RUNS, "--failed", "--format", "csv"], capsys)
    assert rc == 0, err
    t = pd.read_csv(io.StringIO(out))
    assert set(t["system"]) == {"synth-e2e (Audio)", "synth-e2e (Text)", "synth-cascade (Text)"}
    assert not t["task_passed"].any()
    failed = t[(t["criteria_met"] == False) & ~t["pred_error"]]   # noqa: E712
    assert len(failed) and failed["explanation"].notna().all()
    # the cascade's response and explanation, read back from its results file (line 2: task zmlpu8mwajeufcbx)
    line = _written(AMC / "results" / "synth-cascade-text.jsonl")[1]
    row = t[(t["system"] == "synth-cascade (Text)") & (t["task_id"] == line["id"]) & (t["rubric_index"] == 2)].iloc[0]
    assert row["response"] == line["model_response"]
    assert row["explanation"] == line["rubric_results"][1]["explanation"]
    assert row["criteria_met"] == (line["rubric_results"][1]["criteria_met"] == "True")


def test_items_filters_by_system_axis_and_where(capsys):
    rc, out, _ = run_cli(["items", *RUNS, "--system", "synth-cascade", "--axis", "VE", "--where",
                          "rubric_index = 1", "--format", "csv"], capsys)
    t = pd.read_csv(io.StringIO(out))
    assert rc == 0 and set(t["system"]) == {"synth-cascade (Text)"} and set(t["axis"]) == {"VE"}
    assert set(t["rubric_index"]) == {1} and len(t) == 12
    rc, _, err = run_cli(["items", *RUNS, "--system", "nobody"], capsys)
    assert rc == 2 and "--system: 'nobody' not among the systems" in err
    rc, _, err = run_cli(["items", *RUNS, "--wrong"], capsys)
    assert rc == 2 and "--wrong does not apply to judged Audio MultiChallenge runs" in err
