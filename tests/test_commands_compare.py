"""``compare`` says which system is subtracted from which, in the header and the column name."""
from __future__ import annotations

import io
from pathlib import Path

import pandas as pd

from conftest import run_cli
from voxmem_analysis.console import terminal_text

AMC = Path(__file__).resolve().parent.parent / "data" / "examples" / "amc_run"


def test_the_direction_of_the_difference_is_named(tiny_release, capsys):
    rc, out, err = run_cli(["compare", "--data", tiny_release, "--models", "Model-B,Model-A", "--budget", "8K",
                            "--n-boot", "50", "--format", "md"], capsys)
    assert rc == 0, err
    assert "(diff = Model-B minus Model-A, pp;" in out.splitlines()[0]
    rc, out, err = run_cli(["compare", "--manifest", AMC / "manifest.csv", "--tasks", AMC / "tasks.jsonl",
                            "--models", "synth-cascade (Text),synth-e2e (Audio)", "--n-boot", "50"], capsys)
    assert rc == 0 and "(apr_diff, ars_diff = synth-cascade (Text) minus synth-e2e (Audio), pp)" in err
    table = pd.read_csv(io.StringIO(out))
    assert list(table["system_a"].unique()) == ["synth-cascade (Text)"]
    shown = terminal_text(table, keys=["axis", "apr_diff"], rename={"apr_diff": "apr_diff (cascade - e2e)"})
    assert shown.splitlines()[0].split()[:2] == ["axis", "apr_diff"] and "(cascade - e2e) [95% CI]" in shown
