"""Audio MultiChallenge table labels: ``model|modality``, and the model alone when the modality is unknown."""
from __future__ import annotations

from pathlib import Path

from voxmem_analysis.analysis.amc import amc_table2
from voxmem_analysis.io.amc_runs import load_amc_runs

AMC = Path(__file__).resolve().parent.parent / "data" / "examples" / "amc_run"


def test_table2_rows_without_a_modality_have_no_stray_separator(tmp_path):
    man = tmp_path / "m.csv"
    man.write_text(f"path,system\n{AMC / 'results' / 'synth-e2e-audio.jsonl'},Qwen3-Omni-Instruct\n")
    release, _ = load_amc_runs(man, AMC / "tasks.jsonl", strict=False).as_release()
    assert list(amc_table2(release, n_boot=0).index) == ["Qwen3-Omni-Instruct"]
