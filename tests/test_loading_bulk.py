"""The columnar reader (io/bulk.py) and the line-by-line reader give the same release: the same
frames (values, column order, types) and the same problem list (codes, files, lines, fields,
messages, order), on the fixtures, on hand-written awkward lines, and on randomly corrupted files."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SYNTHETIC, harness_line, write_jsonl
from voxmem_analysis.io import bulk as bk
from voxmem_analysis.io.release import load_release

FIXTURES = Path(__file__).resolve().parent / "fixtures"


def _frames(rel):
    return [("frame", rel.frame), ("judge2", rel.judge2), ("ablation", rel.ablation)]


def assert_same(root: Path) -> None:
    a = load_release(root, strict=False, bulk=True, cache=False)
    b = load_release(root, strict=False, bulk=False, cache=False)
    for (name, fa), (_, fb) in zip(_frames(a), _frames(b)):
        if fb is None:
            assert fa is None, name
            continue
        assert fa.columns == fb.columns, name
        assert fa.dtypes == fb.dtypes, name
        assert fa.equals(fb), name
    assert [p.as_dict() for p in a.problems] == [p.as_dict() for p in b.problems]
    assert a.stats == b.stats
    assert a.models.equals(b.models)


def test_synthetic_release_same_both_ways():
    assert_same(SYNTHETIC)


def test_results_tiny_fixture_same_both_ways():
    assert_same(FIXTURES / "results_tiny")


def test_tiny_release_same_both_ways(tiny_release):
    assert_same(tiny_release)


AWKWARD = [
    '{"item_id": "q_1_8k", "model": "M", "model": "N"}',                       # repeated key
    '\ufeff' + json.dumps(harness_line(item_id="q_00010_16k", context_length="16K")),
    json.dumps(harness_line(response="line\u2028separator\u2029inside", item_id="q_00010_32k", context_length="32K")),
    json.dumps(harness_line(response="\ud800", item_id="q_00012_8k", question_id="q_00012")),   # lone surrogate
    json.dumps(harness_line(verdict="true", item_id="q_00013_8k", question_id="q_00013")),     # bool as text
    json.dumps(harness_line(session_count=3.0, item_id="q_00014_8k", question_id="q_00014")),
    json.dumps(harness_line(session_count=3.5, item_id="q_00015_8k", question_id="q_00015")),
    json.dumps(harness_line(session_count="7", item_id="q_00016_8k", question_id="q_00016")),
    json.dumps(harness_line(n_audio_clips=10**20, item_id="q_00017_8k", question_id="q_00017")),
    json.dumps(harness_line(gold_json={"answer": "x", "b": [1, {"c": None}]}, item_id="q_00018_8k", question_id="q_00018")),
    json.dumps(harness_line(judge_raw={"verdict": "correct"}, item_id="q_00019_8k", question_id="q_00019")),
    json.dumps(harness_line(latency_ms=812, item_id="q_00020_8k", question_id="q_00020")),   # extra field
    json.dumps(harness_line(model=" Spaced ", item_id="q_00021_8k", question_id="q_00021")),
    json.dumps(harness_line(item_id="q_00022", question_id="q_00022")),                      # no budget suffix
    json.dumps(harness_line(response="", verdict=True, item_id="q_00023_8k", question_id="q_00023")),
    json.dumps(harness_line(response="\u001c", verdict=True, item_id="q_00024_8k", question_id="q_00024")),
    json.dumps(harness_line(system_prompt_delivery="other", item_id="q_00025_8k", question_id="q_00025")),
    json.dumps(harness_line(context_length="32k", item_id="q_00026_8k", question_id="q_00026")),
    json.dumps(harness_line(evidence_type="nonsense", item_id="q_00027_8k", question_id="q_00027")),
    json.dumps(harness_line(provider_rejected=True, response=None, verdict=None, item_id="q_00028_8k", question_id="q_00028")),
    '{"item_id": "q_00029_8k", "model": "M", "verdict": NaN}',
    '{"item_id": "q_00030_8k", "model": "M"} trailing',
    '[1, 2, 3]',
    '{"item_id": "q_00031_8k", "session_count": 007, "model": "M"}',
    '{"item_id": "q_\\u0030\\u00300_8k", "m\\u006fdel": "M", "model": "N"}',               # escaped key repeated
    json.dumps(harness_line()) + "\r",                                                         # CRLF
    json.dumps(harness_line()),                                                                # identical duplicate
    json.dumps(harness_line(verdict=False, response="other")),                                 # conflicting duplicate
    "   ",
    json.dumps(harness_line(item_id="q_00032_8k", question_id="q_00032", input_condition="transcript_only")),
]


@pytest.mark.parametrize("with_items", [True, False])
def test_awkward_lines_same_both_ways(tiny_release, with_items):
    write_jsonl(tiny_release / "predictions" / "c" / "awkward.jsonl", AWKWARD)
    write_jsonl(tiny_release / "ablation" / "transcript_only" / "x.jsonl", AWKWARD[-6:])
    if not with_items:
        (tiny_release / "items.csv").unlink()
    assert_same(tiny_release)


def test_awkward_lines_are_each_left_to_the_line_reader():
    """The raw-text screen sends every line the bulk parser could misread to the per-line reader."""
    import polars as pl

    lines = pl.Series(AWKWARD[:1] + AWKWARD[3:5] + AWKWARD[9:12] + AWKWARD[24:25])
    assert bk.suspect_lines(lines).to_list() == [True] * len(lines)
    plain = pl.Series([json.dumps(harness_line())])
    assert bk.suspect_lines(plain).to_list() == [False]


# ------------------------------------------------------------------ random corruption (hypothesis)
def _base_lines() -> list[str]:
    path = sorted((SYNTHETIC / "predictions").rglob("*.jsonl.gz"))[0]
    import gzip

    return gzip.decompress(path.read_bytes()).decode().split("\n")[:12]


_BASE = _base_lines()
_TRICKY = ['"', "\\", "{", "}", ",", ":", " ", "0", "n", "t", "\u2028", "\r", "\ufeff", "\x00", "\\u", "\\ud800",
           '"model": "X", ', '"verdict": "true", ', '"session_count": 2.5, ', '"extra": [1], ', "null", "\n",
           'x\\"', '"Model": "x", ', "\\\\", "\t", '"n_audio_clips": 1e2, ', '"response": "\\u001c", ']


@st.composite
def corrupted(draw):
    lines = list(_BASE)
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["insert", "delete", "duplicate", "swap_value"]))
        line = lines[i]
        pos = draw(st.integers(0, max(len(line), 1)))
        if kind == "insert":
            lines[i] = line[:pos] + draw(st.sampled_from(_TRICKY)) + line[pos:]
        elif kind == "delete" and line:
            lines[i] = line[:pos] + line[pos + 1:]
        elif kind == "duplicate":
            lines.insert(draw(st.integers(0, len(lines))), line)
        else:
            lines[i] = line.replace('"verdict": false', '"verdict": true').replace('"native"', '"folded"')
    return lines


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=corrupted(), with_items=st.booleans())
def test_randomly_corrupted_files_same_both_ways(tmp_path_factory, lines, with_items):
    root = tmp_path_factory.mktemp("corrupt")
    (root / "predictions").mkdir()
    (root / "predictions" / "p.jsonl").write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    if with_items:
        shutil.copy(SYNTHETIC / "items.csv", root / "items.csv")
    assert_same(root)


def test_issue11_input_cases_same_both_ways(tmp_path):
    """Symlinked folders and files, extensions in any case, CR-only line endings, a gzip stream cut
    short, ablation conditions spelled otherwise / unknown / missing, a model spelled two ways."""
    import gzip

    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "model-a" / "p.JSONL", [harness_line(), harness_line(item_id="q_00010_64k",
                                                                                             context_length="64K")])
    other = write_jsonl(tmp_path / "elsewhere" / "model-b" / "p.jsonl", [harness_line(model="Model-B")]).parent
    (root / "predictions" / "model-b").symlink_to(other, target_is_directory=True)
    (root / "predictions" / "model-b-loop").symlink_to(root / "predictions", target_is_directory=True)
    (root / "predictions" / "model-c").mkdir()
    (root / "predictions" / "model-c" / "p.jsonl").write_bytes(
        "".join(json.dumps(harness_line(model="Model-C", item_id=f"q_{i:05d}_8k", question_id=f"q_{i:05d}")) + "\r"
                for i in range(20, 26)).encode())
    blob = gzip.compress("".join(json.dumps(harness_line(model="Model-D", item_id=f"q_{i:05d}_8k", question_id=f"q_{i:05d}"))
                                 + "\n" for i in range(30, 130)).encode(), mtime=0)
    (root / "predictions" / "model-d").mkdir()
    (root / "predictions" / "model-d" / "p.Jsonl.Gz").write_bytes(blob[: len(blob) * 2 // 3])
    write_jsonl(root / "predictions" / "model-e" / "p.jsonl", [harness_line(model="model a")])
    write_jsonl(root / "ablation" / "FULL_AUDIO" / "m" / "p.jsonl", [harness_line(), harness_line(
        item_id="q_00010_16k", context_length="16K", input_condition="transcript")])
    write_jsonl(root / "ablation" / "transcript_only" / "m" / "p.jsonl", [harness_line(input_condition="whisper")])
    write_jsonl(root / "ablation" / "top.jsonl", [harness_line(), harness_line(model="B", input_condition="full_audio")])
    assert_same(root)
