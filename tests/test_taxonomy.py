"""Labels and spelling variants (FORMATS §1: accept both cases and spelling variants)."""
import pytest

from voxmem_analysis import taxonomy as tx


@pytest.mark.parametrize("raw, want", [("8k", "8K"), ("32K", "32K"), (" 64k ", "64K"), ("16384", "16K"),
                                       (32000, "32K"), ("128K", None), (None, None)])
def test_budgets(raw, want):
    assert tx.normalize_budget(raw) == want


def test_budget_lists():
    assert tx.normalize_budgets(None) == ["8K", "16K", "32K", "64K"]
    assert tx.normalize_budgets(["64k", "8K"]) == ["8K", "64K"]
    with pytest.raises(ValueError, match="unknown budget '12K'"):
        tx.normalize_budgets("12K")


@pytest.mark.parametrize("raw, want", [
    ("Speaker Identity", "speaker_information"), ("paralinguistic", "paralinguistic_information"),
    ("ENVIRONMENTAL_SOUND", "environmental_sound"), ("visual", None), (["speaker"], None)])
def test_evidence(raw, want):
    assert tx.normalize_evidence(raw) == want


@pytest.mark.parametrize("raw, want", [
    ("Matching / Resolution", "matching_resolution"), ("cue-to-fact", "cue_to_fact"),
    ("Aggregation/Comparison", "aggregation_comparison"), ("Evolution / Transition", "evolution_transition"),
    ("Context-to-Cue Retrieval", "context_to_cue"), ("sentiment", None)])
def test_subtypes(raw, want):
    assert tx.normalize_subtype(raw) == want


def test_design_constants():
    assert len(tx.VALID_CELLS) == 15 and ("information_extraction", "speech_semantics") not in tx.VALID_CELLS
    assert {tx.SUBTYPE_OPERATION[s] for s in tx.CUE_KEYED_SUBTYPES} == {"information_extraction", "multi_session_reasoning"}
    assert [tx.OPERATION_LABELS[o] for o in tx.OPERATIONS] == ["IE", "MSR", "TET", "AR"]
    assert tx.budget_tokens("64K") == 65536
