"""The LongMemEval and error-attribution readers give the readings they always gave: frames (columns,
types, rows), problems (codes, severities, files, lines, fields, messages, order) and counts, recorded
from the readers before their rules became one table of polars expressions
(``tests/fixtures/reader_expected``, written by its ``make.py``), on the shipped LongMemEval example,
the synthetic release's audit records, hand-made bad inputs and seeded corruptions of both
(``tests/reader_cases.py``); both reading paths (per file and columnar) give them."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import reader_cases as C

EXPECTED = Path(__file__).resolve().parent / "fixtures" / "reader_expected"
_LME = json.loads((EXPECTED / "lme.json").read_text(encoding="utf-8"))
_ATTR = json.loads((EXPECTED / "attribution.json").read_text(encoding="utf-8"))


def _same(got: dict, want: dict) -> None:
    got = json.loads(json.dumps(got, sort_keys=True, allow_nan=True))
    if "problems" in want:
        assert got["problems"] == want["problems"]
    assert got == want


@pytest.mark.parametrize("bulk", [True, False])
@pytest.mark.parametrize("name", sorted(_LME))
def test_longmemeval_reading(name, bulk, tmp_path):
    if name.startswith("big_") and not bulk:
        pytest.skip("the per-file path of a big case is the columnar path's reference; read once")
    _same(C.lme_reading(name, tmp_path, bulk), _LME[name])


@pytest.mark.parametrize("bulk", [True, False])
@pytest.mark.parametrize("name", sorted(k for k in _ATTR if not k.startswith("_")))
def test_attribution_reading(name, bulk, tmp_path):
    _same(C.attr_reading(name, tmp_path, bulk), _ATTR[name])


def test_check_records_reading():
    _same(C.records_reading(), _ATTR["_check_records"])


def test_every_case_recorded():
    """Every case but the crash of issue 24 (an empty budget cell; tests/test_reader_crashes_lme.py) has a reading."""
    assert set(C.LME_CASES) - set(_LME) == {"manifest_empty_budget_judge"}
    assert set(C.ATTR_CASES) <= set(_ATTR)
