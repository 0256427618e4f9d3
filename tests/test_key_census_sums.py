"""The key census decided from sums over a whole file (``key_census.readable_lines``) keeps exactly the
rows the per-line census keeps, and settles a plain file without per-line counts."""
from __future__ import annotations

import json

import polars as pl
import pytest

from conftest import harness_line
from voxmem_analysis.io import key_census as kc
from voxmem_analysis.io.prediction_lines import SCHEMA

PLAIN = json.dumps(harness_line())
AWKWARD = [
    PLAIN[:-1] + ', "latency_ms": 812}',                     # a field outside the frame
    PLAIN[:-1] + ', "latency_ms": null}',                    # ... even when null
    PLAIN[:-1] + ', "verdict": null}',                       # a repeated key (null after a value)
    PLAIN.replace('"response": "paused"', '"response": 5'),  # a number where text belongs
    PLAIN.replace('"gold_json": "{\\"answer\\": \\"paused\\"}"', '"gold_json": {"answer": "paused"}'),
    PLAIN.replace('"response": "paused"', '"response": ["paused"]'),
    PLAIN.replace('"response": "paused"', '"response": "\\ud800"'),   # an unpaired surrogate
    PLAIN.replace('"model": ', '"model" : '),                 # white space before a colon
    PLAIN.replace('"model": "Model-A"', '"m\\u006fdel": "Model-A", "model": "N"'),
    PLAIN.replace('"response": "paused"', '"response": 5, "latency_ms": "x"'),   # one line short, one over: sums equal
]


def _per_line(raw: bytes) -> list[bool]:
    starts, ends, _ = kc.line_ranges(raw)
    rec = pl.read_ndjson(raw, schema=SCHEMA)
    n_keys, n_text, counted, names = kc.census(raw, starts, ends)
    n_all, n_str = kc.filled(rec)
    return kc.readable(rec, n_keys - n_all, n_text - n_str, counted, names, SCHEMA).tolist()


def _sums_first(raw: bytes) -> list[bool]:
    starts, ends, _ = kc.line_ranges(raw)
    rec = pl.read_ndjson(raw, schema=SCHEMA)
    return kc.readable_lines(raw, rec, starts, ends, SCHEMA, whole=True).tolist()


@pytest.mark.parametrize("line", AWKWARD)
def test_sums_leave_each_awkward_line_to_python(line):
    raw = "\n".join([PLAIN, line, PLAIN, ""]).encode("utf-8", "surrogatepass")
    assert _sums_first(raw) == _per_line(raw) == [True, False, True]


def test_compensating_lines_are_not_settled_by_sums():
    # line 2 has one string key too few (a number in a text field), line 3 one key too many (an extra
    # field holding text): the totals of key tokens differ, so the lines are counted one by one
    short = PLAIN.replace('"response": "paused"', '"response": 5')
    extra = PLAIN[:-1] + ', "latency_ms": "x"}'
    raw = "\n".join([PLAIN, short, extra]).encode()
    rec = pl.read_ndjson(raw, schema=SCHEMA)
    starts, ends, _ = kc.line_ranges(raw)
    n_keys, n_text, counted, names = kc.census(raw, starts, ends)
    assert not kc.settled_by_sums(rec, n_keys, n_text, counted, len(names))
    assert _sums_first(raw) == [True, False, False]


def test_plain_file_is_settled_by_sums_with_its_nulls():
    lines = [PLAIN, PLAIN.replace('"response": "paused"', '"response": null'),
             PLAIN.replace('"response": "paused"', '"response": "3 (\\"three\\": yes)"'),
             json.dumps(harness_line(response="é ✓ 😀"), ensure_ascii=True)]
    raw = ("\n".join(lines) + "\n\n").encode()
    rec = pl.read_ndjson(raw, schema=SCHEMA)
    starts, ends, _ = kc.line_ranges(raw)
    n_keys, n_text, counted, names = kc.census(raw, starts, ends)
    assert names == [(1, "response")]
    assert n_keys.tolist() == [23, 23, 23, 23] and n_text.tolist() == [17, 16, 17, 17]   # 23 fields, 17 of them text
    assert kc.settled_by_sums(rec, n_keys, n_text, counted, len(names))
    assert _sums_first(raw) == _per_line(raw) == [True] * 4
