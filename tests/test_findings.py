"""Findings are computed from the tables, whichever way the data goes, and the paper's are labelled as such.

Each function of :mod:`voxmem_analysis.analysis.findings` gets a small hand-made table in the shape the
analysis returns; the sentences must say what *these* numbers say (also when they contradict the paper:
speaker identity best remembered, a model that improves with length, one model, one budget, no interval).
"""
from __future__ import annotations

import pandas as pd
import pytest

from voxmem_analysis.analysis import findings as F

MINUS = "\u2212"


def _panels(acc: dict[str, dict[str, float]], models=("A", "B")) -> pd.DataFrame:
    """Figure 4 panels: every model has the same accuracy ``acc[budget][evidence_type]`` plus a per-model offset."""
    rows = []
    for b, by_type in acc.items():
        for i, m in enumerate(models):
            for e, a in by_type.items():
                rows.append({"budget": b, "row": m, "kind": "model", "group": "open_weight", "evidence_type": e,
                             "accuracy": a + (1.0 if i == 0 else -1.0), "n": 10, "n_models": 1})
            rows.append({"budget": b, "row": "Mean all (2)", "kind": "mean", "group": "all", "evidence_type": e,
                         "accuracy": 99.0, "n": 10, "n_models": 2})   # mean rows are not used
    return pd.DataFrame(rows)


def test_every_paper_sentence_is_labelled_and_no_release_sentence_quotes_the_paper():
    panels = _panels({"8K": {"speech_semantics": 50.0, "speaker_information": 30.0}})
    f = F.evidence_types(panels)
    assert f.paper.startswith("The paper reports")
    assert "paper" not in f.release.lower()
    assert "**Evidence types.**" in f._repr_markdown_() and "*The paper reports" in f._repr_markdown_()


def test_evidence_types_where_speaker_identity_is_best_remembered():
    panels = _panels({"8K": {"speech_semantics": 20.0, "speaker_information": 60.0, "environmental_sound": 10.0},
                      "32K": {"speech_semantics": 15.0, "speaker_information": 40.0, "environmental_sound": 12.0}})
    f = F.evidence_types(panels)
    assert f.release.startswith("Speaker Identity is the best-remembered evidence type at every budget run "
                                "(mean over 2 models): 60.0% at 8K and 40.0% at 32K.")
    assert "Lowest: Environmental Sound at 8K (10.0%) and 32K (12.0%)." in f.release
    assert "speech semantics is remembered far better" in f.paper       # the paper's, quoted as the paper's


def test_evidence_types_that_change_between_budgets_and_ties():
    panels = _panels({"8K": {"speech_semantics": 50.0, "speaker_information": 30.0},
                      "64K": {"speech_semantics": 20.0, "speaker_information": 20.0, "environmental_sound": 5.0}})
    text = F.evidence_types(panels).release
    assert text.startswith("The best-remembered evidence type differs between budgets (mean over 2 models): "
                           "Speech Semantics at 8K (50.0%); Speech Semantics and Speaker Identity (tied) at 64K (20.0%).")


def test_evidence_types_one_budget_one_model():
    panels = _panels({"32K": {"speech_semantics": 50.0, "speaker_information": 4.5}}, models=("Mine",))
    text = F.evidence_types(panels).release
    # one model: its own accuracies (the offset is +1 for the first model)
    assert text == ("At 32K (one model), Speech Semantics is the best-remembered evidence type (51.0%). "
                    "Lowest: Speaker Identity at 32K (5.5%).")


def _pc(baseline, comparison, change, lo, hi, retention, models=()) -> pd.DataFrame:
    """Table 18's long frame (paired_change): the overall row, two evidence types and ``models``."""
    base = {"baseline_budget": "8K", "comparison_budget": "64K", "ci_level": 0.95, "n": 100, "n_models": 2}
    rows = [{**base, "level": "evidence_type", "key": "overall", "baseline": baseline, "comparison": comparison,
             "change": change, "change_ci_low": lo, "change_ci_high": hi, "retention": retention},
            {**base, "level": "evidence_type", "key": "speech_semantics", "baseline": 50.0, "comparison": 60.0,
             "change": 10.0, "change_ci_low": 5.0, "change_ci_high": 15.0, "retention": 1.2},
            {**base, "level": "evidence_type", "key": "environmental_sound", "baseline": 20.0, "comparison": 19.0,
             "change": -1.0, "change_ci_low": -3.0, "change_ci_high": 1.0, "retention": 0.95}]
    for m, (c, l, h) in models:
        rows.append({**base, "level": "model", "key": m, "n_models": 1, "baseline": 30.0, "comparison": 30.0 + c,
                     "change": c, "change_ci_low": l, "change_ci_high": h, "retention": (30.0 + c) / 30.0})
    return pd.DataFrame(rows)


def test_length_change_when_accuracy_rises_with_length():
    pc = _pc(30.0, 35.5, 5.5, 2.25, 8.75, 35.5 / 30.0, models=[("A", (7.0, 3.0, 11.0)), ("B", (4.0, -1.0, 9.0))])
    f = F.length_change(pc)
    assert f.release.startswith("From 8K to 64K (2 models, the same 100 questions at both), overall accuracy rises "
                                "from 30.0% to 35.5% (change +5.5 points, 95% CI 2.2 to 8.8; 118.3% retained).")
    assert "the interval lies below zero (a loss) for 0 of the 2 models and above zero (a gain) for 1." in f.release
    assert "retention ranges from 95.0% (Environmental Sound) to 120.0% (Speech Semantics)" in f.release
    assert "falls" not in f.release


def test_length_change_when_accuracy_falls_and_when_the_interval_includes_zero():
    falls = F.length_change(_pc(30.6, 21.0, -9.6, -11.1, -8.4, 0.685)).release
    assert f"overall accuracy falls from 30.6% to 21.0% (change {MINUS}9.6 points, 95% CI {MINUS}11.1 to {MINUS}8.4" in falls
    flat = F.length_change(_pc(30.0, 30.3, 0.3, -1.2, 1.8, 1.01)).release
    assert "overall accuracy changes from 30.0% to 30.3% (change +0.3 points, 95% CI " + MINUS + "1.2 to 1.8, which " \
           "includes zero;" in flat


def test_odds_per_doubling_reads_the_direction_from_the_interval():
    def smod(or_, lo, hi):
        return pd.DataFrame([{"evidence_type": "overall", "odds_ratio": or_, "or_ci_low": lo, "or_ci_high": hi,
                              "budgets": "8K, 16K"}])

    assert "accuracy rises with length" in F.odds_per_doubling(smod(1.2, 1.05, 1.4)).release
    assert "accuracy falls with length" in F.odds_per_doubling(smod(0.85, 0.83, 0.86)).release
    assert "no trend the items can detect" in F.odds_per_doubling(smod(1.02, 0.9, 1.1)).release
    assert F.odds_per_doubling(smod(1.2, 1.05, 1.4)).paper is None          # beyond the paper: nothing to quote


def test_answerable_vs_refusal_with_one_model_and_with_a_positive_correlation():
    one = pd.DataFrame([{"budget": "32K", "n_models": 1, "rho": float("nan"), "p_value": float("nan"),
                         "rho_ci_low": float("nan"), "rho_ci_high": float("nan")}])
    assert F.answerable_vs_refusal(one).release == ("With 1 model at 32K, the two columns cannot be compared as "
                                                    "rankings (a rank correlation needs at least three models).")
    pos = pd.DataFrame([{"budget": "64K", "n_models": 8, "rho": 0.81, "p_value": 0.015, "rho_ci_low": 0.2,
                         "rho_ci_high": 0.96}])
    text = F.answerable_vs_refusal(pos).release
    assert text == ("Over the 8 models run at 64K, answerable and refusal accuracy have Spearman \u03c1 = 0.81 "
                    "(95% CI 0.20 to 0.96, p = 0.015): the models rank alike on both.")


def test_refusal_profile_in_the_same_order_as_answering():
    oe = pd.DataFrame([{"budget": "32K", "operation": op, "evidence_type": e, "accuracy": a, "n_questions": 10}
                       for op, accs in (("information_extraction", (60, 40, 20)), ("answer_refusal", (50, 30, 10)))
                       for e, a in zip(("speech_semantics", "speaker_information", "environmental_sound"), accs)])
    text = F.refusal_profile(oe).release
    assert text.startswith("Answer-refusal accuracy is 50.0% on Speech Semantics, 30.0% on Speaker Identity and "
                           "10.0% on Environmental Sound.")
    assert "this order is the same as the answerable order (Spearman \u03c1 = 1.00" in text
    op = F.operation_evidence(oe).release
    assert op == ("At 32K, answerable operation \u00d7 evidence cells range from IE \u00d7 Environmental Sound (20.0%, "
                  "10 questions) to IE \u00d7 Speech Semantics (60.0%, 10 questions); within one operation the "
                  "evidence type moves accuracy by up to 40.0 points (IE).")


def test_baseline_sensitivity_and_transcript_ablation_in_either_direction():
    corr = pd.DataFrame([{"measure": "retention", "n": 12, "rho": 0.7, "p_value": 0.01, "rho_ci_low": 0.2,
                          "rho_ci_high": 0.9},
                         {"measure": "change", "n": 12, "rho": 0.1, "p_value": 0.7, "rho_ci_low": -0.5,
                          "rho_ci_high": 0.6}])
    assert F.baseline_sensitivity(corr).release == (
        "Over the 12 model \u00d7 evidence cells, the change in points shows no relation the cells can detect "
        "(\u03c1 = 0.10, 95% CI \u22120.50 to 0.60); retention rises with the baseline (\u03c1 = 0.70, 95% CI 0.20 to 0.90).")
    # transcript better than audio: delta_pp = full - transcript < 0, interval below zero -> accuracy rises
    t = pd.DataFrame([{"group": "audio_native", "row": "Audio-native", "n": 40, "full_audio": 20.0,
                       "transcript_only": 30.0, "delta_pp": -10.0, "ci_low": -15.0, "ci_high": -5.0, "p_value": 2e-5}])
    text = F.transcript_ablation(t).release
    assert text == ("Without the audio, on the audio-native items (40 questions) accuracy rises from 20.0% to 30.0% "
                    "(+10.0 points, 95% CI 5.0 to 15.0; McNemar p = 2 \u00d7 10\u207b\u2075).")


def test_judges_composition_and_error_profile():
    table = pd.DataFrame([
        {"slice": "All items", "n": 12000, "judge1": 30.0, "judge2": 29.0, "delta_pp": -1.0, "agreement": 97.0,
         "kappa": 0.93, "kappa_ci_low": 0.92, "kappa_ci_high": 0.94, "judge1_name": "J1", "judge2_name": "J2"},
        {"slice": "AR", "n": 100, "judge1": 30.0, "judge2": 25.0, "delta_pp": -5.0, "agreement": 90.0,
         "kappa": 0.8, "kappa_ci_low": 0.7, "kappa_ci_high": 0.9, "judge1_name": "J1", "judge2_name": "J2"}])
    summary = pd.DataFrame({"statistic": ["n_scored"], "estimate": [12000.0]})
    assert F.judge_agreement(summary, table).release == (
        "J1 and J2 agree on 97.0% of the 12,000 predictions both scored (Cohen's \u03ba = 0.930, 95% CI 0.920 to "
        "0.940); J2's accuracy is 1.0 points lower than J1's overall. They part most on AR (\u22125.0 points, "
        "\u03ba = 0.800).")
    comp = pd.DataFrame({"Speech Semantics": [3, 10, 2, 12], "Speaker Identity": [4, 5, 1, 6], "Total": [7, 15, 3, 18]},
                        index=["Operation|IE", "Total|Answerable", "Total|AR", "Total|All"])
    assert F.composition(comp).release == ("This release has 18 questions: 15 answerable and 3 answer-refusal; by "
                                           "evidence type 12 Speech Semantics and 6 Speaker Identity. It has 3 "
                                           "speech-semantics IE questions.")
    shares = pd.DataFrame([{"by": "operation", "group": "information_extraction", "label": "IE", "recognition": 20.0,
                            "binding": 10.0, "operation": 70.0, "unsupported": 0.0, "not_attributable": 0.0}])
    assert F.error_profile(shares).release == "The most frequent error class by operation: IE operation execution (70%)."


@pytest.mark.parametrize("p, text", [(0.5, "p = 0.50"), (0.0123, "p = 0.012"), (0.001, "p = 0.001"),
                                     (7.33e-20, "p = 7.3 \u00d7 10\u207b\u00b2\u2070"), (float("nan"), "p not available")])
def test_fmt_p(p, text):
    assert F.fmt_p(p) == text
