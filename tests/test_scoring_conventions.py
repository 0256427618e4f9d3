"""Scoring conventions: the paper's (C.4) and the public harness scorer's, and what a rejection is.

The harness reference below is written from the scorer's documented rule
(``voxmembench/metrics.py``: an item is *graded* when its ``verdict`` is not null; accuracy
is correct / graded; answerable and refusal strata are reported separately), applied to the
raw JSON lines, so it shares no code with the loader.
"""
from __future__ import annotations

import gzip
import json
import re
from collections import defaultdict

import polars as pl
import pytest

from conftest import SYNTHETIC, harness_line, write_jsonl
from voxmem_analysis import ScoringRules, load_release
from voxmem_analysis.io.scoring import DEFAULT_REJECTION_PATTERN, OUTPUT_FILTER_PATTERN


def status_of(response, verdict, error):
    """The status of one prediction by the rules of C.4, written on its own (the reference of the loader)."""
    blank = response is None or not response.strip()
    rejected = bool(error) and re.search(DEFAULT_REJECTION_PATTERN, error) is not None
    rejected = rejected and re.search(OUTPUT_FILTER_PATTERN, error) is None
    if blank:
        return "provider_rejected" if rejected else "failed"
    return "graded" if isinstance(verdict, bool) else "ungraded"


def _scorer_strata(root):
    """{(model, budget, is_ar): (graded, correct)} by the harness scorer's rule, from raw lines."""
    acc = defaultdict(lambda: [0, 0])
    for path in sorted((root / "predictions").rglob("*.jsonl*")):
        raw = path.read_bytes()
        text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8")
        for line in text.splitlines():
            if not line.strip():
                continue
            rec = json.loads(line)
            key = (rec["model"], rec["context_length"].upper(), rec["expected_response"] == "insufficient_evidence")
            if rec.get("verdict") is not None:
                acc[key][0] += 1
                acc[key][1] += bool(rec["verdict"])
    return {k: tuple(v) for k, v in acc.items()}


def _workbook_strata(release):
    g = (release.frame.group_by("model", "budget", "is_ar")
         .agg(pl.col("scored").sum().alias("n"), (pl.col("correct") & pl.col("scored")).sum().alias("n_correct")))
    return {(m, str(b), bool(a)): (int(n), int(c)) for m, b, a, n, c in g.iter_rows()}


def test_harness_convention_equals_public_scorer_on_synthetic():
    release = load_release(SYNTHETIC, rules=ScoringRules(convention="harness"))
    ours, ref = _workbook_strata(release), _scorer_strata(SYNTHETIC)
    assert set(ours) == set(ref)
    assert len(ref) == 110  # 15 models x budgets run x 2 strata
    diff = {k: (ours[k], ref[k]) for k in ref if ours[k] != ref[k]}
    assert diff == {}
    # and the accuracies the scorer prints (4 decimals) agree
    for k, (graded, correct) in ref.items():
        n, c = ours[k]
        assert round(c / n, 4) == round(correct / graded, 4)


def test_harness_and_paper_differ_exactly_by_unjudged_predictions():
    paper = load_release(SYNTHETIC).frame
    harness = load_release(SYNTHETIC, rules=ScoringRules(convention="harness")).frame
    # status is convention-free
    assert paper["status"].to_list() == harness["status"].to_list()
    failed = int((paper["status"] == "failed").sum())
    ungraded = int((paper["status"] == "ungraded").sum())
    assert failed > 0 and ungraded > 0
    assert int(paper["scored"].sum()) - int(harness["scored"].sum()) == failed + ungraded
    # correct answers are the same predictions under both
    assert int(paper["correct"].sum()) == int(harness["correct"].sum())


def test_harness_convention_on_tiny_fixture(tmp_path):
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "m" / "p.jsonl", [
        harness_line(),                                                          # graded, correct
        harness_line(item_id="q_00012_8k", question_id="q_00012", verdict=False, response="no"),   # graded, wrong
        harness_line(item_id="q_00013_8k", question_id="q_00013", response=None, verdict=None,
                     error="generation failed: timeout"),                       # failed: out of harness
        harness_line(item_id="q_00014_8k", question_id="q_00014", verdict=None),  # ungraded: out of harness
        harness_line(item_id="q_00015_8k", question_id="q_00015", response=None, verdict=None,
                     error="provider rejected: request blocked before inference"),  # rejected: out of both
    ])
    paper = load_release(root).frame.sort("item_id")
    harness = load_release(root, rules=ScoringRules(convention="harness")).frame.sort("item_id")
    assert paper["scored"].to_list() == [True, True, True, True, False]
    assert harness["scored"].to_list() == [True, True, False, False, False]
    assert paper["correct"].to_list() == harness["correct"].to_list() == [True, False, False, False, False]


BEFORE = [
    "provider rejected: request blocked before inference (HTTP 400 invalid_request)",
    "invalid_request_error: This model's maximum context length is 128000 tokens",
    "Your prompt was flagged by the content filter",
    "The request was blocked: the input triggered the content management policy",
    "promptFeedback: blockReason SAFETY",
    "HTTP 413 request too large",
    "context_length_exceeded",
]
AFTER = [
    "generation failed: finish_reason=content_filter",
    "The response was filtered due to the content policy",
    "output blocked by content filter",
    "completion withheld by moderation",
    "candidate finishReason: SAFETY",
    "generation failed: timeout",
]


@pytest.mark.parametrize("error", BEFORE)
def test_rejections_before_inference_leave_the_denominator(error):
    assert status_of(None, None, error) == "provider_rejected"


@pytest.mark.parametrize("error", AFTER)
def test_output_side_filters_and_failures_count_as_incorrect(error):
    assert status_of(None, None, error) == "failed"


def test_vectorised_and_scalar_rules_agree(tmp_path):
    errors = BEFORE + AFTER
    root = tmp_path / "rel"
    write_jsonl(root / "predictions" / "m" / "p.jsonl", [
        harness_line(item_id=f"q_{i:05d}_8k", question_id=f"q_{i:05d}", response=None, verdict=None, error=e)
        for i, e in enumerate(errors)])
    frame = load_release(root).frame.sort("item_id")
    assert frame["status"].to_list() == [status_of(None, None, e) for e in errors]


def test_invalid_output_filter_pattern_is_a_clear_error():
    with pytest.raises(ValueError, match="output_filter_pattern is not a valid regular expression"):
        ScoringRules(output_filter_pattern="(")


def test_slice_cli_harness_convention_equals_public_scorer(capsys):
    """Issue 11 'done when': `slice --convention harness --by model,budget,is_ar` = the scorer, every stratum."""
    import io

    import pandas as pd

    from voxmem_analysis.cli import main

    rc = main(["slice", "--data", str(SYNTHETIC), "--convention", "harness", "--by", "model,budget,is_ar",
               "--interval", "wilson"])
    out = capsys.readouterr().out
    assert rc == 0
    df = pd.read_csv(io.StringIO(out))
    df = df[df["level"] == "slice"]
    ours = {(m, b, bool(a)): (int(n), int(c)) for m, b, a, n, c in
            zip(df["model"], df["budget"], df["is_ar"], df["n"], df["n_correct"])}
    assert ours == _scorer_strata(SYNTHETIC)
    for k, (graded, correct) in _scorer_strata(SYNTHETIC).items():
        row = df[(df["model"] == k[0]) & (df["budget"] == k[1]) & (df["is_ar"] == k[2])]
        assert abs(float(row["accuracy"].iloc[0]) / 100 - correct / graded) < 1e-6  # printed to 6 digits
