"""``open_source``: one door in for every kind of input, with its kind, frame, label, problems and inputs."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from voxmem_analysis.errors import InputError
from voxmem_analysis.io.source import open_source, source_kind

REPO = Path(__file__).resolve().parent.parent
AMC = REPO / "data" / "examples" / "amc_run"
LME = REPO / "data" / "examples" / "longmemeval"


def test_each_kind_opens_with_its_frame_and_label(tiny_release):
    src = open_source(data=tiny_release, strict=False)
    assert src.kind == "voxmem" and src.frame.height == 8 and not src.synthetic
    runs = open_source(manifest=AMC / "manifest.csv", tasks=AMC / "tasks.jsonl", strict=False)
    assert runs.kind == "amc_runs" and runs.frame.height == 4 * 48 and runs.synthetic
    assert runs.label().startswith("SYNTHETIC")
    lme = open_source(manifest=LME / "manifest.csv", questions=LME / "questions.json", strict=False)
    assert lme.kind == "longmemeval" and lme.frame.height > 0
    assert open_source(data=REPO / "data" / "synthetic-amc").kind == "amc_release"


def test_inputs_are_every_file_read_resolved_through_links(tiny_release, tmp_path):
    target = tmp_path / "items_elsewhere.csv"
    (tiny_release / "items.csv").rename(target)
    os.symlink(target, tiny_release / "items.csv")
    inputs = open_source(data=tiny_release, strict=False).inputs
    assert target.resolve() in inputs and (tiny_release / "predictions" / "b" / "all.jsonl").resolve() in inputs
    runs = open_source(manifest=AMC / "manifest.csv", tasks=AMC / "tasks.jsonl", strict=False).inputs
    assert (AMC / "tasks.jsonl").resolve() in runs and (AMC / "results" / "synth-e2e-audio.jsonl").resolve() in runs


@pytest.mark.parametrize("given, message", [
    ({}, "give either --data DIR"),
    ({"tasks": AMC / "tasks.jsonl"}, "--tasks needs --manifest FILE"),
    ({"manifest": AMC / "manifest.csv"}, "--manifest needs --questions FILE"),
    ({"manifest": AMC / "manifest.csv", "tasks": AMC / "tasks.jsonl", "questions": LME / "questions.json"},
     "cannot be combined"),
    ({"data": REPO / "data" / "nowhere"}, "does not exist"),
])
def test_no_input_or_a_wrong_mix_is_one_input_error(given, message):
    with pytest.raises(InputError, match=message):
        source_kind(**given)
