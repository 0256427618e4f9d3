"""Reading a VoxMem release (``io/voxmem/``): the harness lines as they are, the paper's scoring rules,
every bad line named by file, line and field, nothing lost; the readings recorded from the reader of
commit fbde6f2 (``tests/fixtures/loading_expected``) on awkward lines, the inputs of issue 11 and
seeded corruptions; links, folders, gzip streams cut short, CR line ends; the item table and
models.csv; properties of any reading (hypothesis)."""
from __future__ import annotations

from conftest import SYNTHETIC, harness_line, write_jsonl
from conftest import harness_line, write_jsonl
from hypothesis import HealthCheck, given, settings
from hypothesis import given, settings, strategies as st
from hypothesis import strategies as st
from pathlib import Path
from voxmem_analysis import ScoringRules, VoxMemDataError, load_release
from voxmem_analysis import VoxMemDataError, load_release
from voxmem_analysis.cli import main
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_release
from voxmem_analysis.io.schema import COLUMN_NAMES
from voxmem_analysis.io.scoring import apply_scoring
import gzip
import json
import os
import pathlib
import polars as pl
import pytest
import random
import shutil


# ============================================================================ loading and scoring
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


def test_status_of_each_kind_of_prediction():
    rows = pl.DataFrame({"response": [None, None, "  ", "x", "x"], "verdict": [None, None, None, None, False],
                         "error": ["provider rejected", None, "boom", None, None],
                         "provider_rejected": [None, True, None, None, None]})
    assert apply_scoring(rows)["status"].to_list() == ["provider_rejected", "provider_rejected", "failed", "ungraded",
                                                       "graded"]


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

# ============================================================================ bad lines
GOOD = harness_line()


AR = dict(item_id="q_00011_8k", question_id="q_00011", memory_operation="answer_refusal",
          expected_response="insufficient_evidence", response="insufficient evidence")


# (id, lines of predictions/p.jsonl, expected code, line, field, severity)
BAD_LINES = [
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


@pytest.mark.parametrize("case", BAD_LINES, ids=[c[0] for c in BAD_LINES])
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

# ============================================================================ adversarial input
G = harness_line()


def codes(rel):
    return {p.code: p for p in rel.problems}


def test_input_condition_field_outside_ablation_does_not_double_count(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    write_jsonl(root / "predictions" / "a2.jsonl", [harness_line(input_condition="x")])
    rel = load_release(root)
    assert rel.frame.height == 1 and rel.stats["duplicates_identical"] == 1


def test_item_id_without_budget_keeps_every_budget(tmp_path):
    root = tmp_path / "r"
    lines = [harness_line(item_id="q_00010", context_length=b) for b in ("8K", "16K", "32K", "64K")]
    write_jsonl(root / "predictions" / "a.jsonl", lines)
    rel = load_release(root)
    assert sorted(rel.frame["budget"].cast(str).to_list()) == ["16K", "32K", "64K", "8K"]
    assert codes(rel)["item_id_no_budget"].severity == "warning"


def test_registry_duplicates_and_bad_values(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    (root / "models.csv").write_text("model,access,in_64k_set\nModel-A,proprietary,true\nModel-A,proprietary,true\n"
                                     "Model-B,closed,maybe\n")
    rel = load_release(root, strict=False)
    c = [(p.code, p.line, p.field) for p in rel.errors()]
    assert ("models_duplicate", 3, "model") in c
    assert ("unknown_label", 4, "access") in c and ("invalid_field", 4, "in_64k_set") in c
    assert rel.model_order() == ["Model-A"]


@pytest.mark.parametrize("content", [b"", b'model,family\n"Model-A,F\n', "model\nCaf\xe9\n".encode("latin-1")])
def test_unreadable_registry_is_an_error_not_a_crash(tmp_path, content):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    (root / "models.csv").write_bytes(content)
    rel = load_release(root, strict=False)
    assert any(p.file == "models.csv" and p.severity == "error" for p in rel.problems)


def test_files_not_read_are_reported(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    write_jsonl(root / "predictions" / "b.JSONL", [harness_line(model="Model-B")])
    (root / "predictions" / "dangling.jsonl").symlink_to(tmp_path / "nowhere")
    rel = load_release(root)
    notread = {p.file for p in rel.problems if p.code == "file_not_read"}
    assert notread == {"predictions/dangling.jsonl"}  # the extension is read in any letter case (issue 11)
    assert set(rel.frame["model"].to_list()) == {"Model-A", "Model-B"}


def test_unicode_line_separators_inside_strings(tmp_path):
    root = tmp_path / "r"
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [
        harness_line(response="line1\u2028line2"), harness_line(item_id="q_00010_16k", context_length="16K",
                                                                response="a\x85b"), "{bad"])
    (root / "predictions").mkdir(parents=True)
    (root / "predictions" / "a.jsonl").write_text(text.replace('"{bad"', "{bad"), encoding="utf-8")
    rel = load_release(root, strict=False)
    assert rel.frame.height == 2 and rel.frame["response"].to_list()[0] == "line1\u2028line2"
    (bad,) = [p for p in rel.problems if p.code == "malformed_json"]
    assert bad.line == 3


def test_bom_duplicate_keys_surrogates_and_nesting(tmp_path):
    root = tmp_path / "r"
    (root / "predictions").mkdir(parents=True)
    lines = [json.dumps(G),
             '{"item_id": "q_00010_16k", "model": "Model-A", "verdict": true, "verdict": false}',
             json.dumps(harness_line(item_id="q_00010_32k", context_length="32K"))[:-1] + ', "x": "\\ud800"}',
             '{"item_id": ' + "[" * 100_000 + "]" * 100_000 + "}"]
    (root / "predictions" / "a.jsonl").write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    rel = load_release(root, strict=False)
    assert rel.frame.height == 1                                   # the BOM line is read
    got = {(p.code, p.line, p.field) for p in rel.errors()}
    assert ("malformed_json", 2, "verdict") in got                 # repeated key named
    assert ("invalid_unicode", 3, "x") in got
    assert any(c == "malformed_json" and l == 4 for c, l, _ in got)


def test_boolean_fields_given_as_text(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [
        harness_line(response=None, verdict=None, provider_rejected="true", synthetic="false"),
        harness_line(item_id="q_00010_16k", context_length="16K", provider_rejected="maybe")])
    rel = load_release(root, strict=False)
    assert rel.frame["status"].to_list() == ["provider_rejected"] and not rel.synthetic
    (p,) = [p for p in rel.errors() if p.field == "provider_rejected"]
    assert p.line == 2


def test_release_json_must_be_an_object(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    (root / "release.json").write_text("[1, 2]")
    assert "release.json" in {p.file for p in load_release(root, strict=False).errors()}
    (root / "release.json").write_bytes('{"name": "Caf\xe9"}'.encode("latin-1"))
    assert "release.json" in {p.file for p in load_release(root, strict=False).errors()}
    (root / "release.json").write_text('{"synthetic": "false"}')
    assert not load_release(root).synthetic


def test_zero_predictions_is_an_error(tmp_path):
    root = tmp_path / "r"
    (root / "predictions").mkdir(parents=True)
    (root / "predictions" / "a.jsonl").write_text("\n")
    with pytest.raises(VoxMemDataError, match="hold no predictions"):
        load_release(root)


def test_numeric_fields_that_are_not_numbers_are_reported(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [harness_line(session_count="nine", n_audio_clips=3.7)])
    rel = load_release(root)
    fields = {p.field for p in rel.warnings() if p.code == "invalid_field"}
    assert fields == {"session_count", "n_audio_clips"}
    assert rel.frame["session_count"].to_list() == [None]


def test_non_string_model_is_an_error(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [harness_line(model=123), harness_line(model="Model-A ")])
    rel = load_release(root, strict=False)
    assert ("invalid_field", 1, "model") in {(p.code, p.line, p.field) for p in rel.errors()}
    assert "model_whitespace" in codes(rel)


def test_cli_lenient_says_what_it_left_out(tmp_path, capsys):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G, "{oops"])
    out = tmp_path / "f.csv"
    assert main(["export-frame", "--data", str(root), "--out", str(out), "--lenient"]) == 0
    err = capsys.readouterr().err
    assert "1 line(s) left out" in err and "predictions/a.jsonl:2" in err


def test_export_frame_into_a_directory(tmp_path, capsys):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    (tmp_path / "x.csv").mkdir()
    assert main(["export-frame", "--data", str(root), "--out", str(tmp_path / "x.csv")]) == 2
    assert not (tmp_path / "x.csv.part").exists()


def test_validate_reports_orphan_second_judge_lines(tmp_path, capsys):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    write_jsonl(root / "judge2" / "a.jsonl", [harness_line(model="Model-Z", judge="gpt-5.6-luna")])
    assert main(["validate", "--data", str(root)]) == 0
    assert "judge2_unmatched: judge2/a.jsonl:1" in capsys.readouterr().err


# Lines that made the reader of fbde6f2 crash (TypeError / ValueError) are findings now.
@pytest.mark.parametrize("over, code, field, severity, message", [
    ({"system_prompt_delivery": ["native"]}, "unknown_label", "system_prompt_delivery", "warning",
     "system_prompt_delivery ['native'] is neither 'native' nor 'folded'"),
    ({"expected_response": {"a": 1}}, "unknown_label", "expected_response", "error",
     "unknown expected_response {'a': 1} (expected 'answer' or 'insufficient_evidence')"),
    ({"session_count": "--5"}, "invalid_field", "session_count", "warning",
     "`session_count` should be a whole number, got '--5'; read as missing"),
    ({"n_audio_clips": "²"}, "invalid_field", "n_audio_clips", "warning",
     "`n_audio_clips` should be a whole number, got '²'; read as missing"),
    ({"context_length": "²", "item_id": "q_00010"}, "unknown_label", "context_length", "error",
     "unknown context_length '²' (expected one of 8K, 16K, 32K, 64K, any case)"),
])
def test_values_that_crashed_the_old_reader_are_findings(tmp_path, over, code, field, severity, message):
    write_jsonl(tmp_path / "predictions" / "p.jsonl", [harness_line(**over)])
    rel = load_release(tmp_path, strict=False, cache=False)
    hits = [p for p in rel.problems if p.code == code and p.field == field]
    assert [(p.severity, p.message, p.file, p.line) for p in hits] == [(severity, message, "predictions/p.jsonl", 1)]

# ============================================================================ files, folders, identities (issue 11)
B64 = dict(item_id="q_00010_64k", context_length="64K")


def _release(tmp_path, name="r"):
    root = tmp_path / name
    write_jsonl(root / "predictions" / "model-a" / "p.jsonl", [harness_line(), harness_line(**B64)])
    return root


def _codes(rel):
    return {p.code for p in rel.problems}


def _only(rel, code):
    (p,) = [p for p in rel.problems if p.code == code]
    return p


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# ----------------------------------------------------------------------------- symlinks, folders, files
def test_a_model_folder_that_is_a_symlink_is_read(tmp_path):
    root = _release(tmp_path)
    elsewhere = write_jsonl(tmp_path / "disk2" / "model-b" / "p.jsonl", [harness_line(model="Model-B")]).parent
    (root / "predictions" / "model-b").symlink_to(elsewhere, target_is_directory=True)
    linked_file = write_jsonl(tmp_path / "disk2" / "c.jsonl", [harness_line(model="Model-C")])
    (root / "predictions" / "model-c.jsonl").symlink_to(linked_file)
    rel = load_release(root, cache=False)
    assert sorted(set(rel.frame["model"])) == ["Model-A", "Model-B", "Model-C"]
    assert set(rel.frame["source_file"]) == {"predictions/model-a/p.jsonl", "predictions/model-b/p.jsonl",
                                             "predictions/model-c.jsonl"}


def test_a_symlink_loop_is_reported_and_not_followed(tmp_path):
    root = _release(tmp_path)
    (root / "predictions" / "model-a" / "again").symlink_to(root / "predictions", target_is_directory=True)
    rel = load_release(root, cache=False)
    p = _only(rel, "link_not_followed")
    assert (p.severity, p.file) == ("warning", "predictions/model-a/again")
    assert "already read" in p.message
    assert rel.frame.height == 2  # every line once


def test_an_unreadable_folder_is_an_error_naming_it(tmp_path, monkeypatch, capsys):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B")])
    real = os.scandir
    locked = str(root / "predictions" / "model-b")

    def scandir(path="."):
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(VoxMemDataError) as ei:
        load_release(root, cache=False)
    assert "ERROR folder_unreadable: predictions/model-b: cannot read folder: Permission denied" in str(ei.value)
    rel = load_release(root, strict=False, cache=False)
    assert set(rel.frame["model"]) == {"Model-A"} and _only(rel, "folder_unreadable").severity == "error"
    code, _, err = _run(capsys, "table", "table14", "--data", root, "--no-cache")
    assert code == 1 and "predictions/model-b" in err
    code, _, err = _run(capsys, "table", "table14", "--data", root, "--no-cache", "--lenient")
    assert code == 0 and "folder_unreadable=1" in err and "predictions/model-b" in err


def test_an_unreadable_file_says_why(tmp_path, monkeypatch):
    root = _release(tmp_path)
    locked = write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B")])
    from voxmem_analysis.io.engine import files

    real = files.read_regular   # the one place prediction files are opened (tests run as root: chmod cannot lock)

    def read_regular(path):
        if pathlib.Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(files, "read_regular", read_regular)
    rel = load_release(root, strict=False, cache=False)
    p = _only(rel, "file_unreadable")
    assert (p.file, p.message) == ("predictions/model-b/p.jsonl", "cannot read file: Permission denied")
    assert rel.stats["files_unreadable"] == 1


def test_extensions_are_read_in_any_letter_case(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.JSONL", [harness_line(model="Model-B")])
    write_jsonl(root / "predictions" / "model-c" / "p.Jsonl.GZ", [harness_line(model="Model-C")], gz=True)
    (root / "predictions" / "notes.json").write_text("[]")
    rel = load_release(root, cache=False)
    assert sorted(set(rel.frame["model"])) == ["Model-A", "Model-B", "Model-C"]
    p = _only(rel, "file_not_read")
    assert p.file == "predictions/notes.json" and "any letter case" in p.message


# ----------------------------------------------------------------------------- one identity per model
def test_one_model_spelled_two_ways_is_an_error_naming_both(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-a" / "q.jsonl",
                [harness_line(model="model_a", item_id="q_00010_16k", context_length="16K")])
    with pytest.raises(VoxMemDataError) as ei:
        load_release(root, cache=False)
    msg = str(ei.value)
    assert "ERROR model_spelling: predictions/model-a/q.jsonl:1 [model]: one model spelled 2 ways:" in msg
    assert "'Model-A' (first at predictions/model-a/p.jsonl:1); 'model_a' (first at predictions/model-a/q.jsonl:1)" in msg


def test_a_model_folder_holding_another_model_is_an_error(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-a" / "q.jsonl",
                [harness_line(), harness_line(model="Model-B", item_id="q_00010_16k", context_length="16K")])
    rel = load_release(root, strict=False, cache=False)
    p = _only(rel, "mixed_models_in_folder")
    assert (p.severity, p.file, p.line, p.field) == ("error", "predictions/model-a/q.jsonl", 2, "model")
    assert "folder predictions/model-a/ holds 2 model names" in p.message


def test_a_folder_not_named_after_a_model_may_hold_several(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "8k" / "all.jsonl", [harness_line(), harness_line(model="Model-B")])
    rel = load_release(root, cache=False)
    assert sorted(set(rel.frame["model"])) == ["Model-A", "Model-B"]
    assert not _codes(rel) & {"mixed_models_in_folder", "model_spelling"}


# ----------------------------------------------------------------------------- registry claims
def _registry(root, rows):
    (root / "models.csv").write_text("model,in_64k_set\n" + "".join(f"{m},{f}\n" for m, f in rows))


def test_a_64k_claim_without_64k_rows_is_refused_and_never_ticked(tmp_path, capsys):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B")])
    _registry(root, [("Model-A", "true"), ("Model-B", "true")])
    with pytest.raises(VoxMemDataError) as ei:
        load_release(root, cache=False)
    assert ("ERROR registry_64k_missing: models.csv [in_64k_set]: models.csv flags 'Model-B' as in the 64K set "
            "(in_64k_set=true) but the release has no 64K predictions for it") in str(ei.value)
    rel = load_release(root, strict=False, cache=False)
    assert rel.models_in_64k_set() == ["Model-A"]
    code, out, err = _run(capsys, "table", "table14", "--data", root, "--lenient", "--format", "csv")
    assert code == 0 and "registry_64k_missing=1" in err
    rows = {line.split(",")[0]: line for line in out.splitlines()[1:]}
    assert "\u2713" in rows["Model-A"] and "\u2713" not in rows["Model-B"]
    code, _, err = _run(capsys, "table", "table14", "--data", root)
    assert code == 1 and "'Model-B'" in err


def test_a_64k_claim_with_some_64k_rows_is_a_warning_with_the_count(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-a" / "q.jsonl",
                [harness_line(item_id="q_00012_64k", question_id="q_00012", context_length="64K")])
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B", **B64)])
    _registry(root, [("Model-A", "true"), ("Model-B", "true"), ("Model-Z", "false")])
    rel = load_release(root, cache=False)
    p = _only(rel, "registry_64k_incomplete")
    assert (p.message, p.count) == ("models.csv flags 'Model-B' as in the 64K set but it has 1 of the 2 items seen at 64K", 1)
    assert "Model-Z" in _only(rel, "registry_model_absent").message


# ----------------------------------------------------------------------------- ablation conditions
def test_ablation_conditions_other_spellings_warn_and_unknown_ones_are_errors(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "ablation" / "Full-Audio" / "m" / "p.jsonl", [harness_line()])
    write_jsonl(root / "ablation" / "transcript_only" / "m" / "p.jsonl",
                [harness_line(), harness_line(item_id="q_00010_16k", context_length="16K", input_condition="Audio_Only")])
    write_jsonl(root / "ablation" / "loose.jsonl", [harness_line(), harness_line(model="Model-B", input_condition="TRANSCRIPT")])
    rel = load_release(root, strict=False, cache=False)
    found = {(p.code, p.file, p.line, p.field) for p in rel.problems if p.field == "input_condition"}
    assert found == {
        ("condition_spelling", "ablation/Full-Audio/m/p.jsonl", 1, "input_condition"),
        ("unknown_condition", "ablation/transcript_only/m/p.jsonl", 2, "input_condition"),
        ("unknown_condition", "ablation/loose.jsonl", 1, "input_condition"),
        ("condition_spelling", "ablation/loose.jsonl", 2, "input_condition"),
    }
    msgs = {p.line: p.message for p in rel.problems if p.file == "ablation/loose.jsonl"}
    assert msgs[1] == ("input_condition missing (neither the line nor its folder below ablation/ names one): "
                       "expected one of full_audio, transcript_only")
    assert msgs[2] == "input_condition 'TRANSCRIPT' read as 'transcript_only'"
    assert sorted(rel.ablation["input_condition"].to_list()) == ["full_audio", "transcript_only", "transcript_only"]
    with pytest.raises(VoxMemDataError, match=r"ablation/transcript_only/m/p.jsonl:2 \[input_condition\]: "
                                              r"input_condition 'Audio_Only': expected one of"):
        load_release(root, cache=False)


# ----------------------------------------------------------------------------- damaged files
def _lines(n, model="Model-B"):
    return [harness_line(model=model, item_id=f"q_{i:05d}_8k", question_id=f"q_{i:05d}") for i in range(n)]


def test_a_truncated_gzip_keeps_the_lines_before_the_cut_and_says_what_is_lost(tmp_path, capsys):
    root = _release(tmp_path)
    text = "".join(json.dumps(r) + "\n" for r in _lines(400))
    blob = gzip.compress(text.encode(), mtime=0)
    path = root / "predictions" / "model-b" / "p.jsonl.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(blob[: len(blob) // 2])
    rel = load_release(root, strict=False, cache=False)
    p = _only(rel, "truncated_gzip")
    n = rel.frame.filter(rel.frame["model"] == "Model-B").height
    assert 0 < n < 400
    assert p.message == (f"{n} line(s) read before the gzip stream ended at byte {len(blob) // 2}; "
                         "the rest of the file is lost")
    assert (p.severity, p.file, p.line) == ("error", "predictions/model-b/p.jsonl.gz", n + 1)
    assert rel.stats["files_unreadable"] == 0 and rel.stats["rejected_lines"] == 0
    code, _, err = _run(capsys, "export-frame", "--data", root, "--out", tmp_path / "f.csv", "--lenient")
    assert code == 0 and "truncated_gzip=1" in err and "the rest of the file is lost" in err
    code, _, err = _run(capsys, "export-frame", "--data", root, "--out", tmp_path / "f.csv")
    assert code == 1 and "truncated_gzip" in err


def test_cr_only_line_endings_are_line_breaks(tmp_path):
    root = _release(tmp_path)
    text = "".join(json.dumps(r) + "\r" for r in _lines(5))
    (root / "predictions" / "model-b").mkdir(parents=True)
    (root / "predictions" / "model-b" / "p.jsonl").write_bytes(text.encode())
    (root / "predictions" / "model-b" / "q.jsonl").write_bytes(
        (json.dumps(harness_line(model="Model-B", item_id="q_00010_16k", context_length="16K")) + "\r\n").encode())
    rel = load_release(root, cache=False)
    b = rel.frame.filter(rel.frame["model"] == "Model-B")
    assert b.height == 6 and b["source_line"].to_list()[:5] == [1, 2, 3, 4, 5]
    p = _only(rel, "cr_line_endings")
    assert (p.file, p.message) == ("predictions/model-b/p.jsonl",
                                   "5 bare carriage return(s) (old Mac line endings) read as line breaks")


# ----------------------------------------------------------------------------- every command reports
@pytest.mark.parametrize("argv", [
    ["table", "table14"], ["slice", "--by", "model"], ["export-frame", "--out", "{tmp}/f.csv"],
    ["items", "--model", "Model-A", "--budget", "8K"], ["compare", "--models", "Model-A,Model-B", "--budget", "8K", "--n-boot", "50"],
    ["power", "--n", "100"],   # exits 1: too few items to measure a discordance -- after the warnings
])
def test_every_command_that_loads_a_release_prints_its_warnings(tmp_path, capsys, argv):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B"), harness_line(model="Model-B", **B64)])
    (root / "predictions" / "model-b" / "old.json").write_text("[]")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = _run(capsys, *argv[:1], "--data", root, *argv[1:])
    assert code == (1 if argv[0] == "power" else 0), err
    assert "file_not_read=1" in err and "predictions/model-b/old.json" in err
    assert "file_not_read" not in out


def test_a_lenient_command_names_what_it_left_out(tmp_path, capsys):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", ["{broken", harness_line(model="Model-B")])
    code, out, err = _run(capsys, "slice", "--data", root, "--by", "model", "--lenient")
    assert code == 0
    assert "1 error(s)" in err and "; 1 line(s) left out" in err
    assert "ERROR malformed_json: predictions/model-b/p.jsonl:1" in err
    code, _, err = _run(capsys, "slice", "--data", root, "--by", "model")
    assert code == 1 and "predictions/model-b/p.jsonl:1" in err


def test_reproduce_reports_the_release_findings_before_running(tmp_path, capsys):
    from voxmem_analysis.commands._common import report_release

    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", ["{broken", harness_line(model="Model-B")])
    report_release(root)
    err = capsys.readouterr().err
    assert f"# 1 error(s), 0 warning(s) in release {str(root)!r} (malformed_json=1); 1 line(s) left out" in err
    assert "predictions/model-b/p.jsonl:1" in err


def test_release_json_that_is_a_folder_is_an_error_not_a_traceback(tmp_path, capsys):
    root = _release(tmp_path)
    (root / "release.json").mkdir()
    with pytest.raises(VoxMemDataError, match="release.json cannot be read: Is a directory"):
        load_release(root, cache=False)
    code, _, err = _run(capsys, "validate", "--data", root)
    assert code == 1 and "release_json_unreadable" in err


def test_an_unreadable_or_unusable_judge2_folder_is_not_skipped_silently(tmp_path, monkeypatch):
    root = _release(tmp_path)
    (root / "ablation" / "full_audio").mkdir(parents=True)
    (root / "ablation" / "full_audio" / "runs.json").write_text("[]")
    write_jsonl(root / "judge2" / "model-a" / "p.jsonl", [harness_line(judge="judge-2")])
    real = os.scandir
    locked = str(root / "judge2")

    def scandir(path="."):
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    rel = load_release(root, strict=False, cache=False)
    assert rel.judge2 is None
    found = {(p.code, p.severity, p.file) for p in rel.problems if p.file and not p.file.startswith("predictions")}
    assert found == {("folder_unreadable", "error", "judge2"), ("file_not_read", "warning", "ablation/full_audio/runs.json")}

# ============================================================================ corrupted lines are named exactly (property)
_BUDGETS = ("8K", "16K", "32K", "64K")


#: (file, records) of the clean release: two models, three questions, four budgets.
FILES = {
    f"predictions/{folder}/p_{b.lower()}.jsonl": [
        harness_line(model=model, item_id=f"q_{q:05d}_{b.lower()}", question_id=f"q_{q:05d}", context_length=b,
                     verdict=(q + i) % 2 == 0, response=f"answer {q}")
        for q in (10, 12, 14)]
    for folder, model in (("model-a", "Model-A"), ("model-b", "Model-B")) for i, b in enumerate(_BUDGETS)
}


LINES = [(f, i + 1) for f in sorted(FILES) for i in range(len(FILES[f]))]


#: Fields whose absence is an error when there is no item table.
REQUIRED = ("model", "item_id", "evidence_type", "memory_operation", "expected_response")


#: A value of the wrong type for a field, each an error.
WRONG = (("model", 5), ("model", ["Model-A"]), ("item_id", 3), ("verdict", "maybe"), ("verdict", 7),
         ("allow_abstention", "perhaps"), ("provider_rejected", {"x": 1}))


@st.composite
def corruption(draw):
    """``{(file, line): new text}`` for 1-6 distinct lines."""
    chosen = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=6, unique=True))
    out = {}
    for f, line in chosen:
        rec = dict(FILES[f][line - 1])
        text = json.dumps(rec)
        kind = draw(st.sampled_from(["truncate", "garbage", "drop", "wrong_type"]))
        if kind == "truncate":   # a strict prefix of an object is never a whole object
            text = text[:draw(st.integers(1, len(text) - 1))]
        elif kind == "garbage":  # a raw control character is invalid inside and outside JSON strings
            at = draw(st.integers(0, len(text)))
            junk = draw(st.text(alphabet='ab#@!{}[]:," 1', max_size=6))
            text = text[:at] + "\x01" + junk + text[at:]
        elif kind == "drop":
            del rec[draw(st.sampled_from(REQUIRED))]
            text = json.dumps(rec)
        else:
            key, value = draw(st.sampled_from(WRONG))
            rec[key] = value
            text = json.dumps(rec)
        out[(f, line)] = text
    return out


def _write(root, bad: dict) -> None:
    for f, recs in FILES.items():
        write_jsonl(root / f, [bad.get((f, i + 1), r) for i, r in enumerate(recs)])


def _clean(tmp_path_factory):
    root = tmp_path_factory.mktemp("clean")
    _write(root, {})
    return load_release(root, cache=False).frame


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=corruption())
def test_corrupted_lines_are_named_exactly_or_left_out_exactly(tmp_path_factory, bad):
    clean = _clean(tmp_path_factory)
    root = tmp_path_factory.mktemp("bad")
    _write(root, bad)
    try:
        load_release(root, cache=False)
    except VoxMemDataError as exc:
        named = {(p.file, p.line) for p in exc.problems if p.severity == "error"}
        assert named == set(bad), exc
        for f, line in bad:
            assert f"{f}:{line}" in str(exc)
    else:
        raise AssertionError("a corrupted release loaded without an error")
    rel = load_release(root, strict=False, cache=False)
    assert {(p.file, p.line) for p in rel.errors()} == set(bad)
    assert rel.stats["rejected_lines"] == len(bad)
    gone = pl.DataFrame({"source_file": [f for f, _ in bad], "source_line": [ln for _, ln in bad]},
                        schema={"source_file": pl.Utf8, "source_line": pl.Int64})
    expected = clean.join(gone, on=["source_file", "source_line"], how="anti", maintain_order="left")
    assert rel.frame.columns == expected.columns
    assert rel.frame.equals(expected)

# ============================================================================ recorded readings
FIXTURES = Path(__file__).resolve().parent / "fixtures"


EXPECTED = FIXTURES / "loading_expected"


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


def _awkward(tmp: Path, with_items: bool) -> Path:
    root = tmp / "rel"
    write_jsonl(root / "predictions" / "c" / "awkward.jsonl", AWKWARD)
    write_jsonl(root / "ablation" / "transcript_only" / "x.jsonl", AWKWARD[-6:])
    write_jsonl(root / "predictions" / "d" / "empty.jsonl", [])
    if with_items:
        shutil.copy(SYNTHETIC / "items.csv", root / "items.csv")
    return root


#: Values of every JSON type, in any field (the reader must treat each as Python's json reads it).
ODD = [None, "", " ", "true", "FALSE ", 0, 1, 3.0, 3.5, -0.0, True, False, "7", " -7 ", 10**20, {"a": 1}, [1], [], {},
       ["x"], "8k", "32K", "speech", "answer_refusal", "insufficient_evidence", "audio", "Transcript", "\u001c", "x\u00a0",
       "q_00010", "q_00010_8k\n", "native", "other"]


FIELDS = list(harness_line().keys()) + ["provider_rejected", "synthetic", "input_condition", "source_operation",
                                        "paired_question_id", "error", "latency_ms", "status", "budget", "Model"]


def _corrupt(tmp: Path, seed: int) -> Path:
    """40 lines of the synthetic release with values of other types, keys added or dropped, text inserted."""
    rng = random.Random(seed)
    root = tmp / "rel"
    lines = []
    for ln in _BASE_40:
        rec = json.loads(ln)
        if rng.random() < 0.5:
            for _ in range(rng.randint(1, 3)):
                f = rng.choice(FIELDS)
                if rng.random() < 0.2:
                    rec.pop(f, None)
                else:
                    rec[f] = rng.choice(ODD)
        text = json.dumps(rec, ensure_ascii=rng.random() < 0.5)
        if rng.random() < 0.15:
            pos = rng.randint(0, len(text))
            text = text[:pos] + rng.choice(_TRICKY) + text[pos:]
        if rng.random() < 0.05:
            text = text[:-1] + ', "model": "Z"}'
        lines.append(text)
        if rng.random() < 0.05:
            lines.append(text)
    sub = rng.choice(["predictions", "predictions", "ablation"])
    folder = rng.choice(["full_audio", "transcript", "m", "FULL"]) if sub == "ablation" else "m"
    path = root / sub / folder / "p.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    if sub == "ablation":
        write_jsonl(root / "predictions" / "m" / "p.jsonl", [_BASE_40[0]])
    if rng.random() < 0.6:
        shutil.copy(SYNTHETIC / "items.csv", root / "items.csv")
    return root


def _base_lines() -> list[str]:
    path = sorted((SYNTHETIC / "predictions").rglob("*.jsonl.gz"))[0]
    return gzip.decompress(path.read_bytes()).decode().split("\n")[:40]


_BASE_40 = _base_lines()


_BASE = _BASE_40[:12]


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


def _issue11(tmp_path: Path) -> Path:
    """Symlinked folders and files, extensions in any case, CR-only line endings, a gzip stream cut
    short, ablation conditions spelled otherwise / unknown / missing, a model spelled two ways."""
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
    return root


#: Releases whose expected reading is recorded (seeds of `_corrupt` chosen among those the old reader
#: read without crashing; the crashes it had are tested in test_validation_adversarial.py).
CASES = {"awkward_items": lambda t: _awkward(t, True), "awkward_no_items": lambda t: _awkward(t, False),
         "issue11": _issue11, **{f"corrupt_{s}": (lambda t, s=s: _corrupt(t, s)) for s in (0, 1, 2, 3, 6, 7, 9, 10, 11, 12, 13, 14)}}


def _json_value(v):
    return v if v is None or isinstance(v, (str, bool, int)) else repr(v)


def snapshot(rel) -> dict:
    """What a loaded release is made of, as JSON: frames (columns, types, rows), problems, counts."""
    frames = {}
    for name in ("frame", "judge2", "ablation"):
        f = getattr(rel, name)
        frames[name] = None if f is None else {
            "columns": f.columns, "dtypes": [str(t) for t in f.dtypes],
            "rows": [[_json_value(v) for v in row] for row in f.rows()]}
    return {"frames": frames, "problems": [p.as_dict() for p in rel.problems], "stats": rel.stats}


#: What the reader now reads otherwise than the recorded reader, on purpose: a negative count is an error of its
#: line (the line is left out, counted as rejected).
INTENDED = {"corrupt_1": [("predictions/m/p.jsonl", 22, "session_count", "`session_count` is ' -7 ': a count cannot be negative")]}


def _intended(name: str, expected: dict) -> dict:
    """The recorded reading with the intended changes of :data:`INTENDED` made."""
    for file, line, fld, message in INTENDED.get(name, []):
        frame = expected["frames"]["frame"]
        at = frame["columns"].index("source_line"), frame["columns"].index("source_file")
        kept = [r for r in frame["rows"] if (r[at[1]], r[at[0]]) != (file, line)]
        expected["stats"]["rows"] -= len(frame["rows"]) - len(kept)
        expected["stats"]["rejected_lines"] += len(frame["rows"]) - len(kept)
        frame["rows"] = kept
        expected["problems"].append({"code": "invalid_field", "severity": "error", "message": message, "file": file,
                                     "line": line, "field": fld, "count": 1})
    return expected


@pytest.mark.parametrize("name", sorted(CASES))
def test_reading_is_the_recorded_one(tmp_path, name):
    """The recorded problems in any order (the reader lists them by file, line and rule; the recorded one
    grouped them by code), the frames and counts as recorded."""
    rel = load_release(CASES[name](tmp_path), strict=False, cache=False)
    expected = _intended(name, json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8")))
    got = json.loads(json.dumps(snapshot(rel), sort_keys=True))
    def key(p):
        return json.dumps(p, sort_keys=True)
    assert sorted(map(key, got["problems"])) == sorted(map(key, expected["problems"]))
    for file in {p["file"] for p in got["problems"]}:   # each file's problems by line
        lines = [p["line"] for p in got["problems"] if p["file"] == file and p["line"] is not None]
        assert lines == sorted(lines), file
    assert got["stats"] == expected["stats"]
    assert got["frames"] == expected["frames"]


def test_recorded_cases_are_not_trivial():
    """The recorded readings hold rows, rejected lines and findings of many kinds."""
    codes, rows = set(), 0
    for name in CASES:
        expected = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
        codes |= {p["code"] for p in expected["problems"]}
        rows += len(expected["frames"]["frame"]["rows"])
    assert rows > 100 and len(codes) >= 20, (rows, sorted(codes))


# ------------------------------------------------------------------ properties (hypothesis)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=corrupted(), with_items=st.booleans())
def test_randomly_corrupted_files_lose_no_line(tmp_path_factory, lines, with_items):
    """Every non-blank line is a row, a rejected line or an identical copy; every row holds the
    values Python's json reads on its line; every line finding names its file and line."""
    root = tmp_path_factory.mktemp("corrupt")
    (root / "predictions").mkdir()
    text = "\n".join(lines)
    (root / "predictions" / "p.jsonl").write_text(text, encoding="utf-8", errors="surrogatepass")
    if with_items:
        shutil.copy(SYNTHETIC / "items.csv", root / "items.csv")
    rel = load_release(root, strict=False, cache=False)
    s = rel.stats
    # as the reader reads the file (io/files.py): a leading byte-order mark dropped; "\r\n" and, in a file
    # that has any, each bare "\r" read as a line break
    read = text[1:] if text.startswith("\ufeff") else text
    read = read.replace("\r\n", "\n").replace("\r", "\n") if "\r" in read else read
    numbered = {n: ln for n, ln in enumerate(read.split("\n"), 1) if ln.strip()}
    assert s["lines"] == len(numbered)
    assert s["rows"] + s["rejected_lines"] + s["duplicates_identical"] == s["lines"]
    for r in rel.frame.select("source_line", "model", "item_id", "verdict", "response").iter_rows(named=True):
        rec = json.loads(numbered[r["source_line"]])
        assert (rec["model"], rec["item_id"], rec.get("response")) == (r["model"], r["item_id"], r["response"])
        assert r["verdict"] == (rec.get("verdict") if not isinstance(rec.get("verdict"), str)
                                else rec["verdict"].strip().lower() == "true")
    for p in rel.problems:
        if p.code not in ("no_predictions", "mixed_prompt_delivery", "mixed_judges", "incomplete_run",
                          "ar_source_unknown", "model_not_in_registry", "incomplete_64k_run"):
            # file-level findings (an empty file, bare carriage returns read as line breaks) name no line
            file_level = p.code in ("empty_file", "cr_line_endings") and p.line is None
            assert p.file == "predictions/p.jsonl" and (p.line in numbered or file_level), p


# ============================================================================ impossible values, what a path is
def test_a_negative_count_in_a_line_is_an_error_of_its_line(tmp_path):
    write_jsonl(tmp_path / "predictions" / "p.jsonl", [harness_line(), harness_line(item_id="q_00010_16k",
                context_length="16K", session_count=-5), harness_line(item_id="q_00010_32k", context_length="32K",
                                                                      n_audio_clips="-2")])
    rel = load_release(tmp_path, strict=False, cache=False)
    assert [(p.code, p.severity, p.line, p.field, p.message) for p in rel.errors()] == [
        ("invalid_field", "error", 2, "session_count", "`session_count` is -5: a count cannot be negative"),
        ("invalid_field", "error", 3, "n_audio_clips", "`n_audio_clips` is '-2': a count cannot be negative")]
    assert rel.frame.height == 1 and rel.stats["rejected_lines"] == 2


def test_impossible_and_huge_numbers_in_the_item_table_and_models_csv(tmp_path):
    """A negative count (items) or size (models.csv) is an error naming file, line and field, read as missing;
    1e308 is a finite number; a count that is no whole number is said to be that, not "not finite"."""
    write_jsonl(tmp_path / "predictions" / "p.jsonl", [harness_line(), harness_line(item_id="q_00010_16k",
                                                                                    context_length="16K")])
    (tmp_path / "items.csv").write_text(
        "item_id,question_id,context_length,evidence_type,memory_operation,expected_response,session_count,"
        "evidence_session_count,history_duration_seconds\n"
        "q_00010_8k,q_00010,8K,speaker_information,information_extraction,answer,-3,1e308,1e308\n"
        "q_00010_16k,q_00010,16K,speaker_information,information_extraction,answer,4,2,\n")
    (tmp_path / "models.csv").write_text("model,llm_params_b,total_params_b\nModel-A,-7,1e308\n")
    rel = load_release(tmp_path, strict=False, cache=False)
    found = {(p.code, p.severity, p.file, p.line, p.field): p.message for p in rel.problems if p.file != "predictions/p.jsonl"}
    assert found == {
        ("invalid_field", "error", "items.csv", 2, "session_count"):
            "1 value(s) of `session_count` are negative (first: '-3' on line 2): a count cannot be negative; read as missing",
        ("invalid_field", "warning", "items.csv", 2, "evidence_session_count"):
            "1 value(s) of `evidence_session_count` are not whole numbers (first: '1e308' on line 2); read as missing",
        ("invalid_field", "error", "models.csv", 2, "llm_params_b"):
            "llm_params_b '-7' is negative: a size cannot be; read as missing"}
    assert rel.items["history_duration_seconds"].to_list() == [1e308, None]
    assert rel.items["session_count"].to_list() == [None, 4]
    assert rel.registry["llm_params_b"].to_list() == [None] and rel.registry["total_params_b"].to_list() == [1e308]


@pytest.mark.parametrize("what, make, said", [
    ("missing", lambda p: p, "does not exist"), ("file", lambda p: (p.write_text("x"), p)[1], "is a file, not a folder"),
    ("fifo", lambda p: os.mkfifo(p) or p, "is a FIFO, a named pipe, not a folder")])
def test_a_release_path_that_is_no_folder_is_named_as_what_it_is(tmp_path, what, make, said):
    path = make(tmp_path / "rel")
    with pytest.raises(VoxMemDataError) as info:
        load_release(path)
    assert [(p.code, p.message) for p in info.value.problems] == [("no_release", f"release directory {str(path)!r} {said}")]
