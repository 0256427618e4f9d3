"""Bad input gets a clear message naming file, line and field; nothing is lost silently."""
from __future__ import annotations

import gzip
import json
import random

import polars as pl
import pytest
from hypothesis import given, settings, strategies as st

from voxmem_analysis import VoxMemDataError, load_release
from voxmem_analysis.cli import main

from conftest import harness_line, write_jsonl

GOOD = harness_line()
AR = dict(item_id="q_00011_8k", question_id="q_00011", memory_operation="answer_refusal",
          expected_response="insufficient_evidence", response="insufficient evidence")

# (id, lines of predictions/p.jsonl, expected code, line, field, severity)
CASES = [
    ("malformed_json", ['{"item_id": "q_1_8k", "model": '], "malformed_json", 1, None, "error"),
    ("not_an_object", ['["q_1_8k", "M"]'], "not_an_object", 1, None, "error"),
    ("missing_item_id", [{k: v for k, v in GOOD.items() if k != "item_id"}], "missing_field", 1, "item_id", "error"),
    ("missing_model", [harness_line(model=None)], "missing_field", 1, "model", "error"),
    ("missing_evidence", [{k: v for k, v in GOOD.items() if k != "evidence_type"}], "missing_field", 1, "evidence_type", "error"),
    ("missing_expected", [{k: v for k, v in GOOD.items() if k != "expected_response"}], "missing_field", 1, "expected_response", "error"),
    ("unknown_evidence", [harness_line(evidence_type="visual_scene")], "unknown_label", 1, "evidence_type", "error"),
    ("evidence_as_list", [harness_line(evidence_type=["speaker_information"])], "unknown_label", 1, "evidence_type", "error"),
    ("unknown_operation", [harness_line(memory_operation="summarisation")], "unknown_label", 1, "memory_operation", "error"),
    ("unknown_budget", [harness_line(item_id="q_00010_128k", context_length="128K")], "unknown_label", 1, "context_length", "error"),
    ("unknown_subtype", [harness_line(subtype="sentiment")], "unknown_label", 1, "subtype", "error"),
    ("unknown_expected", [harness_line(expected_response="maybe")], "unknown_label", 1, "expected_response", "error"),
    ("item_id_budget_mismatch", [harness_line(item_id="q_00010_16k")], "item_id_mismatch", 1, "item_id", "error"),
    ("item_id_question_mismatch", [harness_line(question_id="q_99999")], "item_id_mismatch", 1, "question_id", "error"),
    ("verdict_string", [GOOD, harness_line(item_id="q_00010_16k", context_length="16K", verdict="yes")], "invalid_verdict", 2, "verdict", "error"),
    ("allow_abstention_string", [harness_line(allow_abstention="sometimes")], "invalid_field", 1, "allow_abstention", "error"),
    ("response_not_string", [harness_line(response=42)], "invalid_field", 1, "response", "error"),
    ("true_verdict_empty_response", [harness_line(response="", verdict=True)], "inconsistent_verdict", 1, "verdict", "error"),
    ("op_vs_expected", [harness_line(memory_operation="answer_refusal")], "inconsistent_item", 1, "expected_response", "error"),
    ("semantic_ie", [harness_line(evidence_type="speech_semantics")], "invalid_cell", 1, "memory_operation", "error"),
    ("ar_without_abstention", [harness_line(allow_abstention=False, **AR)], "ar_without_abstention", 1, "allow_abstention", "error"),
    ("duplicate_conflict", [GOOD, harness_line(verdict=False, response="drawer")], "duplicate_conflict", 2, "verdict", "error"),
    ("duplicate_identical", [GOOD, GOOD], "duplicate_identical", 2, "item_id", "warning"),
    ("delivery_unknown", [harness_line(system_prompt_delivery="inline")], "unknown_label", 1, "system_prompt_delivery", "warning"),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_line_is_reported(tmp_path, case):
    _, lines, code, line, field, severity = case
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "p.jsonl", lines)
    rel = load_release(root, strict=False)
    hits = [p for p in rel.problems if p.code == code]
    assert hits, f"expected {code}, got {[str(p) for p in rel.problems]}"
    p = hits[0]
    assert (p.file, p.line, p.field, p.severity) == ("predictions/p.jsonl", line, field, severity)
    assert p.message
    n_lines = len(lines)
    # every line is either in the frame or counted as rejected / duplicate: nothing vanishes
    assert rel.frame.height + rel.stats["rejected_lines"] + rel.stats["duplicates_identical"] == n_lines
    if severity == "error":
        with pytest.raises(VoxMemDataError) as exc:
            load_release(root)
        assert any(q.code == code for q in exc.value.problems)
        assert f"predictions/p.jsonl:{line}" in str(exc.value)
    else:
        load_release(root)  # warnings do not raise


def test_mixed_abstention_per_model(tmp_path):
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "a.jsonl", [GOOD])
    write_jsonl(root / "predictions" / "b.jsonl", [harness_line(item_id="q_00010_16k", context_length="16K", allow_abstention=False)])
    rel = load_release(root, strict=False)
    (p,) = [p for p in rel.problems if p.code == "mixed_abstention"]
    assert p.severity == "error" and p.field == "allow_abstention" and "Model-A" in p.message


def test_mixed_prompt_delivery_is_a_warning(tmp_path):
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "a.jsonl", [GOOD, harness_line(model="Model-B", system_prompt_delivery="folded")])
    rel = load_release(root)  # does not raise
    (p,) = [p for p in rel.problems if p.code == "mixed_prompt_delivery"]
    assert p.severity == "warning" and "Model-B" in p.message


def test_item_table_disagreement(tmp_path):
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "p.jsonl", [GOOD])
    (root / "items.csv").write_text("item_id,question_id,context_length,evidence_type,memory_operation,expected_response\n"
                                    "q_00010_8k,q_00010,8K,paralinguistic_information,information_extraction,answer\n")
    rel = load_release(root, strict=False)
    (p,) = [p for p in rel.problems if p.code == "item_mismatch"]
    assert (p.file, p.line, p.field) == ("predictions/p.jsonl", 1, "evidence_type")
    assert "speaker_information" in p.message and "paralinguistic_information" in p.message


def test_unknown_item(tmp_path):
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "p.jsonl", [GOOD])
    (root / "items.csv").write_text("item_id,question_id,context_length,evidence_type,memory_operation,expected_response\n"
                                    "q_7_8k,q_7,8K,speaker_information,information_extraction,answer\n")
    (p,) = [p for p in load_release(root, strict=False).problems if p.code == "unknown_item"]
    assert p.line == 1 and p.field == "item_id"


def test_corrupt_gzip_and_not_utf8(tmp_path):
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "ok.jsonl", [GOOD])
    (root / "predictions" / "bad.jsonl.gz").write_bytes(b"not gzip at all")
    (root / "predictions" / "latin.jsonl").write_bytes('{"model": "Caf\xe9"}\n'.encode("latin-1"))
    codes = {(p.code, p.file) for p in load_release(root, strict=False).problems}
    assert ("file_unreadable", "predictions/bad.jsonl.gz") in codes
    assert ("not_utf8", "predictions/latin.jsonl") in codes


def test_no_predictions_and_missing_dir(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(VoxMemDataError, match="no predictions"):
        load_release(tmp_path / "empty")
    with pytest.raises(VoxMemDataError, match="does not exist"):
        load_release(tmp_path / "nope")


def test_empty_file_and_incomplete_run_warnings(tmp_path):
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "a.jsonl", [GOOD, harness_line(item_id="q_00012_8k", question_id="q_00012")])
    write_jsonl(root / "predictions" / "b.jsonl", [harness_line(model="Model-B")])
    (root / "predictions" / "c.jsonl").write_text("\n")
    rel = load_release(root)
    codes = {p.code: p for p in rel.warnings()}
    assert codes["empty_file"].file == "predictions/c.jsonl"
    assert "Model-B" in codes["incomplete_run"].message and codes["incomplete_run"].count == 1


def test_unknown_fields_are_kept(tmp_path):
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "p.jsonl", [harness_line(latency_ms=812, trace={"id": 3}, seed_tag="a")])
    f = load_release(root).frame
    assert f["latency_ms"].to_list() == [812]
    assert json.loads(f["trace"][0]) == {"id": 3} and f["seed_tag"][0] == "a"


def test_many_errors_all_listed(tmp_path):
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "p.jsonl", ["{broken"] * 3 + [harness_line(evidence_type="x")])
    with pytest.raises(VoxMemDataError) as exc:
        load_release(root)
    assert len(exc.value.problems) == 4
    assert "predictions/p.jsonl:4 [evidence_type]" in str(exc.value)


def test_validate_cli_counts_and_exit_codes(tiny_release, tmp_path, capsys):
    assert main(["validate", "--data", str(tiny_release)]) == 0
    out = capsys.readouterr().out
    assert "predictions kept: 8" in out
    assert "totals: failed=1, graded=5, provider_rejected=1, ungraded=1" in out
    bad = tmp_path / "bad"
    write_jsonl(bad / "predictions" / "p.jsonl", [GOOD, "{oops"])
    assert main(["validate", "--data", str(bad)]) == 1
    captured = capsys.readouterr()
    assert "malformed_json: predictions/p.jsonl:2" in captured.err


def test_export_frame_is_atomic(tiny_release, tmp_path):
    out = tmp_path / "o" / "frame.parquet"
    assert main(["export-frame", "--data", str(tiny_release), "--out", str(out)]) == 0
    back = pl.read_parquet(out)
    assert back.height == 8 and back.columns[:3] == ["model", "question_id", "item_id"]
    csv = tmp_path / "frame.csv"
    assert main(["export-frame", "--data", str(tiny_release), "--out", str(csv)]) == 0
    assert pl.read_csv(csv).height == 8
    bad = tmp_path / "bad"
    write_jsonl(bad / "predictions" / "p.jsonl", ["{oops"])
    target = tmp_path / "never.parquet"
    assert main(["export-frame", "--data", str(bad), "--out", str(target)]) == 1
    assert not target.exists() and not (tmp_path / "never.parquet.part").exists()


def _canonical(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.drop("source_file", "source_line").sort("model", "item_id")


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_shuffling_lines_changes_nothing(tmp_path_factory, seed):
    """Property: the order of lines and files does not change the frame (beyond provenance columns)."""
    lines = []
    for m in ("M1", "M2"):
        for q in range(6):
            for b in ("8k", "64k"):
                lines.append(harness_line(model=m, item_id=f"q_{q:05d}_{b}", question_id=f"q_{q:05d}", context_length=b,
                                          verdict=None if q == 5 else bool((q + len(m) + len(b)) % 3), response=None if q == 5 else "x",
                                          error="generation failed" if q == 5 else None))
    base = tmp_path_factory.mktemp("base")
    write_jsonl(base / "predictions" / "p.jsonl", lines)
    ref = _canonical(load_release(base).frame)
    rng = random.Random(seed)
    shuffled = lines[:]
    rng.shuffle(shuffled)
    k = rng.randint(1, len(shuffled) - 1)
    other = tmp_path_factory.mktemp("shuf")
    write_jsonl(other / "predictions" / "z" / "first.jsonl", shuffled[:k])
    write_jsonl(other / "predictions" / "a.jsonl.gz", shuffled[k:], gz=True)
    got = _canonical(load_release(other).frame)
    assert got.equals(ref)
