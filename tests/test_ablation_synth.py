"""Synthetic transcript-only ablation: calibration to Table 2 and structure of the rows."""
from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from voxmem_analysis.analysis.ablation import transcript_ablation
from voxmem_analysis.synth import ablation as SA
from voxmem_analysis.synth.judges import harness_to_tidy

SEED = 20260


@pytest.fixture(scope="module")
def items():
    from voxmem_analysis.synth import build

    return build(SEED)["items"]


@pytest.fixture(scope="module")
def rows(items):
    return SA.make_ablation(items, np.random.default_rng(6))


def test_counts_at_paper_n():
    c = SA.ablation_counts({"speaker_information": 126, "paralinguistic_information": 222,
                            "environmental_sound": 126, "speech_semantics": 195}).set_index("evidence_type")
    assert c.loc["speaker_information", ["full_correct", "transcript_correct"]].tolist() == [88, 13]
    assert c.loc["paralinguistic_information", ["full_correct", "transcript_correct"]].tolist() == [95, 7]
    assert c.loc["environmental_sound", ["full_correct", "transcript_correct"]].tolist() == [36, 1]
    # 71.0 % is no integer of 195; 138 keeps the All row at 23.8 (159/669)
    assert c.loc["speech_semantics", ["full_correct", "transcript_correct"]].tolist() == [148, 138]


def test_counts_scale_with_other_n():
    c = SA.ablation_counts({"speaker_information": 63, "paralinguistic_information": 111,
                            "environmental_sound": 63, "speech_semantics": 98}).set_index("evidence_type")
    assert abs(c.loc["speaker_information", "full_correct"] - 0.698 * 63) <= 1
    assert abs(c.loc["speech_semantics", "transcript_correct"] - 0.71 * 98) <= 1


def test_rows_structure(rows):
    assert rows.height == 2 * 669
    assert set(rows["input_condition"]) == {"full_audio", "transcript_only"}
    assert set(rows["model"]) == {"Gemini-3.7-Flash"}
    assert rows["allow_abstention"].to_list() == [False] * rows.height
    assert set(rows["expected_response"]) == {"answer"}
    assert set(rows["context_length"].str.to_uppercase()) == {"8K"}
    assert rows.group_by("input_condition").agg(pl.col("question_id").n_unique())["question_id"].to_list() == [669, 669]
    assert rows["synthetic"].all()


def test_table2_reproduced(rows):
    rep = SA.ablation_calibration_report(rows, n_boot=200)
    assert rep["within_tolerance"].all(), rep.to_string()
    off = rep[~rep["rounds_to_target"]]
    # the paper's Speech-Semantics 71.0 (and the Δ 4.9, 31.0 derived from it) is no integer of 195
    assert set(zip(off["row"], off["column"])) <= {("Speech Semantics", "transcript_only"),
                                                   ("Speech Semantics", "delta_pp"), ("All", "delta_pp")}


def test_pairing_is_mostly_nested(rows):
    res = transcript_ablation(harness_to_tidy(rows), n_boot=200)
    t = res.table.set_index("row")
    trans_correct = t.loc["All", "transcript_only"] * t.loc["All", "n"] / 100
    assert t.loc["All", "n_transcript_only"] <= 0.25 * trans_correct
    assert res.unpaired.empty and not res.problems


def test_deterministic(items, rows):
    assert SA.make_ablation(items, np.random.default_rng(6)).equals(rows)
