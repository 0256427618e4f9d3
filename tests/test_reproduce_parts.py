"""Notebooks that need an optional release part are skipped (not failed) when it is absent."""
from __future__ import annotations

from voxmem_analysis.reproduce.notebook import missing_parts

from conftest import harness_line, write_jsonl


def test_missing_parts(tmp_path):
    script = '# %% tags=["parameters"]\n# requires: judge2, ablation\ndata_dir = "x"\n'
    (tmp_path / "ablation").mkdir()              # an empty folder does not count
    assert missing_parts(script, tmp_path) == ["judge2", "ablation"]
    write_jsonl(tmp_path / "judge2" / "p.jsonl", [harness_line()])
    write_jsonl(tmp_path / "ablation" / "full_audio" / "p.jsonl", [harness_line()])
    assert missing_parts(script, tmp_path) == []
    assert missing_parts('data_dir = "x"\n', tmp_path) == []


def test_paper_notebooks_declare_their_parts():
    from pathlib import Path

    nb = Path(__file__).resolve().parents[1] / "notebooks"
    declared = {p.stem: missing_parts(p.read_text(), "/nonexistent") for p in nb.glob("*.py")}
    assert declared["30_judge_agreement"] == ["judge2"]
    assert declared["31_transcript_ablation"] == ["ablation"]
    assert declared["40_error_attribution"] == ["attribution"]
    assert declared["10_main_results"] == []


def test_task_order_longest_first(tmp_path):
    from pathlib import Path

    from voxmem_analysis.reproduce.runner import _task_order

    paths = [Path(f"{n}.py") for n in ("00_validate", "10_main", "20_scaling", "60_lme")]
    previous = {"notebooks": [{"name": "00_validate", "seconds": 0.3, "status": "ok"},
                              {"name": "10_main", "seconds": 8.0, "status": "ok"},
                              {"name": "20_scaling", "seconds": 3.5, "status": "ok"},
                              {"name": "60_lme", "seconds": 0.0, "status": "skipped"}]}
    assert [p.stem for p in _task_order(paths, previous)] == ["10_main", "20_scaling", "00_validate", "60_lme"]
    # a fresh folder: estimated from the figures each notebook saves (unreadable paths: 0 s, then by name)
    assert [p.stem for p in _task_order(paths, {})] == ["00_validate", "10_main", "20_scaling", "60_lme"]