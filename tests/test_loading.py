"""The loader reads harness files as they are and applies the paper's scoring rules (FORMATS §1, §3)."""
from __future__ import annotations

import json

import polars as pl
import pytest

from voxmem_analysis import ScoringRules, VoxMemDataError, load_release
from voxmem_analysis.io.schema import COLUMN_NAMES
from voxmem_analysis.io.scoring import status_of

from conftest import harness_line, write_jsonl


def test_frame_columns_and_types(tiny_release):
    rel = load_release(tiny_release)
    f = rel.frame
    assert f.columns[: len(COLUMN_NAMES)] == list(COLUMN_NAMES)
    assert f.height == 8
    assert f["budget"].dtype == pl.Enum(["8K", "16K", "32K", "64K"])
    # '64k' (lower case) and a gzip file are read as they are
    assert sorted(f["budget"].cast(str).unique().to_list()) == ["64K", "8K"]
    # extra harness fields are kept
    assert {"question_text", "gold_json", "judge_raw"} <= set(f.columns)
    assert rel.models["model"].tolist() == ["Model-A", "Model-B"]
    assert rel.groups() == {"proprietary": ["Model-A"], "open_weight": ["Model-B"]}


def test_paper_scoring_rules(tiny_release):
    f = load_release(tiny_release).frame.sort("model", "item_id")
    got = {(r["model"], r["item_id"]): (r["status"], r["correct"], r["scored"]) for r in f.iter_rows(named=True)}
    assert got[("Model-A", "q_00010_8k")] == ("graded", True, True)
    assert got[("Model-A", "q_00010_64k")] == ("graded", False, True)
    # failed generation: kept, incorrect, in the denominator
    assert got[("Model-A", "q_00011_64k")] == ("failed", False, True)
    # provider rejection: out of the denominator
    assert got[("Model-B", "q_00010_8k")] == ("provider_rejected", False, False)
    # unparseable judge reply: incorrect, in the denominator
    assert got[("Model-B", "q_00010_64k")] == ("ungraded", False, True)
    # capability refusal on an AR item was judged incorrect
    assert got[("Model-B", "q_00011_8k")] == ("graded", False, True)


def test_harness_convention_excludes_unjudged(tiny_release):
    f = load_release(tiny_release, rules=ScoringRules(convention="harness")).frame
    row = f.filter((pl.col("model") == "Model-B") & (pl.col("item_id") == "q_00010_64k")).row(0, named=True)
    assert row["status"] == "ungraded" and row["scored"] is False
    # the public scorer counts only non-null verdicts: the failed generation (Model-A q_00011_64k),
    # the ungraded one and the provider rejection leave; 8 - 3 = 5 (issue 11)
    failed = f.filter((pl.col("model") == "Model-A") & (pl.col("item_id") == "q_00011_64k")).row(0, named=True)
    assert failed["status"] == "failed" and failed["scored"] is False
    assert f["scored"].sum() == 5


def test_rejection_rule_is_overridable(tiny_release):
    rules = ScoringRules(rejection_pattern=r"(?i)timeout")
    f = load_release(tiny_release, rules=rules).frame
    st = dict(zip(f["item_id"] + "|" + f["model"], f["status"]))
    assert st["q_00011_64k|Model-A"] == "provider_rejected"
    assert st["q_00010_8k|Model-B"] == "failed"
    with pytest.raises(ValueError, match="regular expression"):
        ScoringRules(rejection_pattern="(")
    with pytest.raises(ValueError, match="convention"):
        ScoringRules(convention="other")


def test_status_of_matches_frame():
    assert status_of(None, None, "provider rejected") == "provider_rejected"
    assert status_of(None, None, None, provider_rejected=True) == "provider_rejected"
    assert status_of("  ", None, "boom") == "failed"
    assert status_of("x", None, None) == "ungraded"
    assert status_of("x", False, None) == "graded"


def test_source_operation_from_item_table(tiny_release):
    f = load_release(tiny_release).frame
    ar = f.filter(pl.col("is_ar"))
    assert set(ar["source_operation"].to_list()) == {"information_extraction"}
    assert set(ar["operation"].to_list()) == {"answer_refusal"}
    ans = f.filter(~pl.col("is_ar"))
    assert (ans["source_operation"] == ans["operation"]).all()


def test_source_operation_missing_is_warned(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "p.jsonl", [harness_line(
        item_id="q_2_8k", question_id="q_2", memory_operation="answer_refusal",
        expected_response="insufficient_evidence", response="insufficient evidence")])
    rel = load_release(root)
    assert [p.code for p in rel.warnings()] == ["ar_source_unknown"]
    assert rel.frame["source_operation"].to_list() == [None]


def test_item_fields_filled_from_item_table(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "p.jsonl", [{"item_id": "q_1_8k", "model": "M", "response": "x", "verdict": True}])
    (root / "items.csv").write_text(
        "item_id,question_id,context_length,family_id,evidence_type,memory_operation,subtype,expected_response,session_count\n"
        "q_1_8k,q_1,8k,f1,environmental_sound,temporal_evolution_tracking,latest_state,answer,12\n")
    row = load_release(root).frame.row(0, named=True)
    assert (row["evidence_type"], row["operation"], row["budget"], row["session_count"]) == (
        "environmental_sound", "temporal_evolution_tracking", "8K", 12)


def test_spelling_variants_accepted(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "p.jsonl", [harness_line(
        subtype="Matching / Resolution", memory_operation="multi_session_reasoning", context_length="8k")])
    row = load_release(root).frame.row(0, named=True)
    assert row["subtype"] == "matching_resolution" and row["budget"] == "8K"


def test_synthetic_marker(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "p.jsonl", [harness_line(synthetic=True)])
    rel = load_release(root)
    assert rel.synthetic and "SYNTHETIC" in rel.label()
    root2 = tmp_path / "r2"
    write_jsonl(root2 / "predictions" / "p.jsonl", [harness_line()])
    (root2 / "release.json").write_text(json.dumps({"name": "x", "synthetic": True}))
    assert load_release(root2).synthetic
    root3 = tmp_path / "r3"
    write_jsonl(root3 / "predictions" / "p.jsonl", [harness_line()])
    assert not load_release(root3).synthetic


def test_judge2_and_ablation_parts(tiny_release):
    write_jsonl(tiny_release / "judge2" / "a.jsonl", [harness_line(judge="gpt-5.6-luna", verdict=False)])
    write_jsonl(tiny_release / "ablation" / "transcript_only" / "x.jsonl",
                [harness_line(model="Gemini-3.7-Flash", allow_abstention=False, verdict=False)])
    write_jsonl(tiny_release / "ablation" / "full_audio" / "x.jsonl",
                [harness_line(model="Gemini-3.7-Flash", allow_abstention=False)])
    rel = load_release(tiny_release)
    assert rel.judge2.height == 1 and rel.judge2["judge"].to_list() == ["gpt-5.6-luna"]
    assert sorted(rel.ablation["input_condition"].to_list()) == ["full_audio", "transcript_only"]


def test_release_cache_is_keyed_by_the_files(tiny_release, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("VOXMEM_CACHE_DIR", str(cache))
    first = load_release(tiny_release, cache=True)
    assert len(list(cache.glob("release-*"))) == 1
    again = load_release(tiny_release, cache=True)
    assert again.frame.equals(first.frame) and again.models.equals(first.models)
    # a changed file is a new key: the edit is seen, never a stale copy
    write_jsonl(tiny_release / "predictions" / "c" / "more.jsonl", [harness_line(model="Model-C")])
    third = load_release(tiny_release, cache=True)
    assert "Model-C" in third.frame["model"].to_list()
    assert len(list(cache.glob("release-*"))) == 2
    # another scoring convention is another key
    harness = load_release(tiny_release, rules=ScoringRules(convention="harness"), cache=True)
    assert harness.rules.convention == "harness"


def test_cached_release_with_errors_still_raises(tmp_path, monkeypatch):
    monkeypatch.setenv("VOXMEM_CACHE_DIR", str(tmp_path / "cache"))
    root = tmp_path / "bad"
    write_jsonl(root / "predictions" / "p.jsonl", [harness_line(), "{oops"])
    assert load_release(root, strict=False, cache=True).stats["rejected_lines"] == 1
    with pytest.raises(VoxMemDataError, match="malformed_json"):
        load_release(root, cache=True)


def test_inferred_64k_set_needs_a_complete_run(tmp_path):
    """Without models.csv, a model whose 64K calls were mostly rejected is not in the 64K set."""
    root = tmp_path / "r"
    lines = []
    for q in range(4):
        for b in ("8k", "64k"):
            base = dict(item_id=f"q_{q}_{b}", question_id=f"q_{q}", context_length=b)
            lines.append(harness_line(model="A", **base))
            if b == "64k" and q > 0:
                lines.append(harness_line(model="B", response=None, verdict=None,
                                          error="maximum context length exceeded", **base))
            else:
                lines.append(harness_line(model="B", **base))
    write_jsonl(root / "predictions" / "p.jsonl", lines)
    rel = load_release(root)
    assert rel.models_in_64k_set() == ["A"]
    (p,) = [p for p in rel.warnings() if p.code == "incomplete_64k_run"]
    assert "B" in p.message
    # with a registry flag, the registry decides
    (root / "models.csv").write_text("model,in_64k_set\nA,false\nB,true\n")
    assert load_release(root).models_in_64k_set() == ["B"]
