"""What every loaded input says about itself (``io/provenance.py``): LongMemEvalData and AmcRuns share
ManifestData (the manifest's fields, ``synthetic``, ``name``), and every loader's result carries
``inputs``, the resolved paths of every file and folder its readers opened (links followed)."""
from __future__ import annotations

import json
import shutil
from dataclasses import fields
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from conftest import harness_line, write_jsonl
from voxmem_analysis.io import AmcRuns, LongMemEvalData, load_amc, load_amc_runs, load_longmemeval, load_release
from voxmem_analysis.io.provenance import SYNTHETIC_TAG, ManifestData

DATA = Path(__file__).resolve().parents[1] / "data"

SHARED = ["manifest", "problems", "stats", "manifest_path", "dropped"]


def _lme(verdicts: pl.DataFrame, path=None) -> LongMemEvalData:
    return LongMemEvalData(verdicts, pl.DataFrame(), manifest=pd.DataFrame(), manifest_path=path)


def _amc(verdicts: pl.DataFrame, path=None) -> AmcRuns:
    empty = pl.DataFrame()
    return AmcRuns(empty, empty, verdicts, empty, manifest=pd.DataFrame(), manifest_path=path)


@pytest.mark.parametrize("make, unnamed", [(_lme, "longmemeval"), (_amc, "amc-runs")])
def test_shared_fields_synthetic_and_name(make, unnamed):
    cls = type(make(pl.DataFrame()))
    assert issubclass(cls, ManifestData) and [f.name for f in fields(cls) if f.name in SHARED] == SHARED
    assert make(pl.DataFrame()).synthetic is False                       # no verdicts, no column
    assert make(pl.DataFrame({"synthetic": [None, False]})).synthetic is False
    assert make(pl.DataFrame({"synthetic": [False, True]})).synthetic is True
    assert make(pl.DataFrame({"synthetic": ["x", "true"]})).synthetic is True   # text read as a flag
    assert make(pl.DataFrame()).name == unnamed
    data = make(pl.DataFrame({"synthetic": [True]}), Path("/runs/june/manifest.csv"))
    assert data.name == "june/manifest.csv" and data.label() == f"{SYNTHETIC_TAG}: june/manifest.csv"
    assert make(pl.DataFrame(), Path("manifest.csv")).name == "manifest.csv"
    assert data.problems == [] and data.stats == {} and data.dropped == []


# ----------------------------------------------------------------------------- inputs
def test_a_release_names_every_file_it_opened_through_its_links(tmp_path):
    """items.csv and a model folder that are links to elsewhere (the documented layout allows it): their
    targets are inputs, so an output path there is refused by the command line."""
    elsewhere = tmp_path / "elsewhere"
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "model-a" / "p.jsonl", [harness_line()])
    write_jsonl(elsewhere / "model-b" / "p.jsonl", [harness_line(model="Model-B")])
    (root / "predictions" / "model-b").symlink_to(elsewhere / "model-b", target_is_directory=True)
    (elsewhere / "items.csv").write_text("item_id,question_id\nq_00010_8k,q_00010\n")
    (root / "items.csv").symlink_to(elsewhere / "items.csv")
    rel = load_release(root)
    assert {elsewhere / "items.csv", elsewhere / "model-b", elsewhere / "model-b" / "p.jsonl", root.resolve(),
            root.resolve() / "predictions" / "model-a" / "p.jsonl"} <= set(rel.inputs)
    assert all(p.is_absolute() and p == p.resolve() for p in rel.inputs)
    assert root / "items.csv" not in rel.inputs   # the link itself resolves to its target


def test_verdicts_read_through_a_manifest_name_the_manifest_the_questions_and_each_file(tmp_path):
    lme = shutil.copytree(DATA / "examples" / "longmemeval", tmp_path / "lme")
    moved = tmp_path / "questions.json"
    shutil.move(lme / "questions.json", moved)
    (lme / "questions.json").symlink_to(moved)
    data = load_longmemeval(lme / "manifest.csv", lme / "questions.json")
    files = {lme.resolve() / p for p in pd.read_csv(lme / "manifest.csv")["path"]}
    assert set(data.inputs) == {(lme / "manifest.csv").resolve(), moved.resolve(), *files}


def test_amc_runs_and_release_name_what_they_read(tmp_path):
    runs = DATA / "examples" / "amc_run"
    data = load_amc_runs(runs / "manifest.csv", runs / "tasks.jsonl")
    results = {(runs / p).resolve() for p in pd.read_csv(runs / "manifest.csv")["path"]}
    assert set(data.inputs) == {(runs / "manifest.csv").resolve(), (runs / "tasks.jsonl").resolve(), *results}
    release, _ = data.as_release()
    assert release.inputs == data.inputs
    amc = load_amc(DATA / "synthetic-amc")
    assert (DATA / "synthetic-amc" / "tasks.csv").resolve() in amc.inputs and (DATA / "synthetic-amc").resolve() in amc.inputs
