"""LongMemEvalData and AmcRuns share ManifestData: the manifest's fields, ``synthetic`` and ``name``, written once."""
from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pandas as pd
import polars as pl
import pytest

from voxmem_analysis.io import AmcRuns
from voxmem_analysis.io import LongMemEvalData
from voxmem_analysis.io.provenance import SYNTHETIC_TAG, ManifestData

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
