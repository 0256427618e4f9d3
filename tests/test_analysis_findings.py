"""Findings say only what their numbers carry, whichever way the data goes.

Each function of :mod:`voxmem_analysis.analysis.findings` gets a small hand-made table in the shape the
analysis returns.  Every sentence kind is tried on a counter-example where the strong wording would be
wrong (a lead two models cannot show, a near-reversal of four ranks, an interval wide enough for a
strong relation, a class first by mean but not by count, a gap on one measure only, a change coupled
with its baseline): the sentence must say what cannot be detected, with its counts.
"""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from voxmem_analysis.analysis import findings as F

MINUS = "\u2212"
RHO = "\u03c1"


# ----------------------------------------------------------------------------- rules
@pytest.mark.parametrize("x, y", [([1, 2, 3, 4], [2, 1, 4, 3]), ([34.3, 34.2, 19.9, 16.2], [20.0, 30.0, 45.0, 25.0]),
                                  ([1, 2, 2, 3, 5], [5, 3, 4, 1, 2]), ([3, 1, 4, 1, 5, 9], [2, 6, 5, 3, 5, 8])])
def test_exact_rank_p_equals_scipys_exact_permutation_test(x, y):
    def rho(a, b, axis):
        ra, rb = st.rankdata(a, axis=axis), st.rankdata(b, axis=axis)
        ra, rb = ra - ra.mean(axis=axis, keepdims=True), rb - rb.mean(axis=axis, keepdims=True)
        return (ra * rb).sum(axis=axis) / np.sqrt((ra ** 2).sum(axis=axis) * (rb ** 2).sum(axis=axis))

    ref = st.permutation_test((x, y), rho, permutation_type="pairings", n_resamples=np.inf, vectorized=True,
                              alternative="two-sided")
    assert F.exact_rank_p(x, y) == pytest.approx(ref.pvalue)
    assert np.isnan(F.exact_rank_p(range(9), range(9)))          # beyond 8 points: not enumerated


def test_the_smallest_p_four_points_can_reach_is_above_the_level():
    best = min(F.exact_rank_p([1, 2, 3, 4], p) for p in itertools.permutations([1, 2, 3, 4]))
    assert best == pytest.approx(2 / 24) and best > F.ALPHA
    assert F.exact_rank_p([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]) == pytest.approx(2 / 120)
    assert 2 / 120 < F.ALPHA
    assert F.MIN_CORRELATION_POINTS == 5


def test_sign_test_equals_binomtest():
    assert F.sign_test([3, 4, 5, 6, 1], [1, 2, 3, 4, 1]) == (4, 0, pytest.approx(st.binomtest(4, 4).pvalue))


# ----------------------------------------------------------------------------- evidence types
def _panels(acc: dict[str, dict[str, list[float]]], n: int = 100) -> pd.DataFrame:
    """Figure 4 panels: ``acc[budget][evidence_type]`` is the list of per-model accuracies."""
    rows = []
    for b, by_type in acc.items():
        for e, values in by_type.items():
            for i, a in enumerate(values):
                rows.append({"budget": b, "row": f"M{i}", "kind": "model", "group": "open_weight", "evidence_type": e,
                             "accuracy": a, "n": n, "n_models": 1})
            rows.append({"budget": b, "row": "Mean", "kind": "mean", "group": "all", "evidence_type": e,
                         "accuracy": 99.0, "n": np.nan, "n_models": len(values)})   # mean rows are not used
    return pd.DataFrame(rows)


def test_a_lead_two_models_cannot_show_is_not_called_detectable():
    f = F.evidence_types(_panels({"8K": {"speech_semantics": [50.0, 52.0], "speaker_information": [48.0, 51.0],
                                         "environmental_sound": [10.0, 12.0]}}))
    assert f.release.startswith("At 8K (mean over 2 models), Speech Semantics has the highest accuracy of the evidence "
                                "types (51.0%, 100 questions).")
    assert ("Speech Semantics is not detectably above Speaker Identity (higher in 2 of 2 models, sign test p = 0.50)"
            in f.release)
    assert f.paper.startswith("The paper reports") and "paper" not in f.release.lower()


def test_a_lead_in_every_one_of_six_models_is_detectable_and_speaker_identity_may_win():
    six = {"32K": {"speech_semantics": [20.0] * 6, "speaker_information": [60.0, 55, 58, 61, 57, 59],
                   "environmental_sound": [5.0] * 6}}
    text = F.evidence_types(_panels(six)).release
    assert text.startswith("At 32K (mean over 6 models), Speaker Identity has the highest accuracy")
    assert "It is detectably above the next (higher in 6 of 6 models, sign test p = 0.031)." in text


def test_leaders_that_change_between_budgets_and_ties():
    text = F.evidence_types(_panels({"8K": {"speech_semantics": [50.0] * 6, "speaker_information": [30.0] * 6},
                                     "64K": {"speech_semantics": [20.0] * 6, "speaker_information": [20.0] * 6,
                                             "environmental_sound": [5.0] * 6}})).release
    assert text.startswith("The evidence type with the highest accuracy differs between budgets (mean over 6 models): "
                           "Speech Semantics at 8K (50.0%); Speech Semantics and Speaker Identity (tied) at 64K (20.0%).")
    assert "not detectably above" not in text            # a tie is said as a tie, not tested as a lead


def test_one_model_is_tested_on_its_items():
    text = F.evidence_types(_panels({"8K": {"speech_semantics": [50.0], "speaker_information": [40.0]}}, n=10)).release
    assert ("At 8K, Speech Semantics is not detectably above Speaker Identity (5 of 10 against 4 of 10 questions "
            "right, Fisher's exact p = 1.00)") in text
    ok = F.evidence_types(_panels({"8K": {"speech_semantics": [80.0], "speaker_information": [20.0]}})).release
    assert "It is detectably above the next (80 of 100 against 20 of 100 questions right" in ok


def test_operation_spread_without_the_models_to_show_it():
    oe = pd.DataFrame([{"budget": "32K", "operation": "information_extraction", "evidence_type": e, "accuracy": a,
                        "n_models": 1, "n_questions": 3} for e, a in (("speaker_information", 66.7),
                                                                      ("environmental_sound", 0.0))])
    pm = oe.assign(model="A")
    text = F.operation_evidence(oe, pm).release
    assert text == ("At 32K (one model), answerable operation \u00d7 evidence cells range from IE \u00d7 Environmental "
                    "Sound (0.0%, 3 questions) to IE \u00d7 Speaker Identity (66.7%, 3 questions); within one operation "
                    "the evidence type moves accuracy by up to 66.7 points (IE, Speaker Identity against Environmental "
                    "Sound: Speaker Identity 2 of 3 against 0 of 3 questions right, Fisher's exact p = 0.40; not "
                    "detectable).")
    assert "not tested without per-model accuracies" in F.operation_evidence(oe).release


# ----------------------------------------------------------------------------- refusal and Table 16
def _oe(refusal: dict[str, float], answerable: dict[str, float], n: int = 6) -> pd.DataFrame:
    rows = [{"budget": "32K", "operation": "answer_refusal", "evidence_type": e, "accuracy": a, "n_models": 1,
             "n_questions": n} for e, a in refusal.items()]
    rows += [{"budget": "32K", "operation": "information_extraction", "evidence_type": e, "accuracy": a, "n_models": 1,
              "n_questions": 10} for e, a in answerable.items()]
    return pd.DataFrame(rows)


TYPES = ("speech_semantics", "speaker_information", "paralinguistic_information", "environmental_sound")


def test_a_near_reversal_of_four_ranks_is_not_called_opposite():
    # the paper's release: refusal ranks the types 2, 1, 4, 3 where answering ranks them 4, 3, 1, 2 (rho = -0.80)
    oe = _oe(dict(zip(TYPES, (19.9, 16.2, 34.3, 34.2))), dict(zip(TYPES, (45.0, 30.0, 15.0, 16.0))))
    text = F.refusal_profile(oe).release
    assert "opposite of" not in text and "-0.80" not in text and f"{MINUS}0.80" not in text   # no rho over 4 points
    assert ("the refusal order is opposite on 5 of the 6 pairs of types (exact permutation test on the ranks, "
            "p = 0.33): with 4 types no relation between the two orders is detectable (even an exact reversal "
            "would have p = 0.083).") in text
    assert "100.0%" not in text and "34.3% on Paralinguistic Cues (6 questions)" in text       # counts with the rates


def test_an_exact_reversal_is_named_but_still_not_detectable_with_four_types():
    text = F.refusal_profile(_oe(dict(zip(TYPES, (10.0, 20.0, 30.0, 40.0))),
                                 dict(zip(TYPES, (40.0, 30.0, 20.0, 10.0))))).release
    assert "the refusal order is exactly the reverse (exact permutation test on the ranks, p = 0.083)" in text
    assert "no relation between the two orders is detectable" in text


def _t16(k, rho, p, lo, hi):
    return pd.DataFrame([{"budget": "64K", "n_models": k, "rho": rho, "p_value": p, "rho_ci_low": lo,
                          "rho_ci_high": hi, "n_questions": 799}])


def test_an_interval_through_zero_is_not_evidence_of_no_relation():
    text = F.answerable_vs_refusal(_t16(10, -0.02, 0.95, -0.64, 0.62)).release
    assert "show no relation" not in text
    assert text == (f"Over the 10 models run at 64K (799 questions), answerable and refusal accuracy have Spearman "
                    f"{RHO} = {MINUS}0.02 (95% CI {MINUS}0.64 to 0.62, p = 0.95): no relation between the two rankings "
                    "is detectable with 10 models, and the interval does not rule out a strong negative or a strong "
                    "positive one.")
    narrow = F.answerable_vs_refusal(_t16(400, 0.01, 0.8, -0.09, 0.11)).release
    assert narrow.endswith("no relation between the two rankings is detectable with 400 models.")


def test_no_rank_correlation_over_four_models_and_the_exact_p_over_six():
    assert "no rank correlation between answerable and refusal accuracy is stated (fewer than 5 models" in \
        F.answerable_vs_refusal(_t16(4, 0.8, 0.2, np.nan, np.nan)).release
    table = pd.DataFrame({"answerable": [1, 2, 3, 4, 5, 6], "ar": [1, 3, 2, 4, 6, 5]})
    rho = st.spearmanr(table["answerable"], table["ar"]).statistic
    text = F.answerable_vs_refusal(_t16(6, rho, 0.0004, 0.4, 0.99), table).release   # a t-test p that is too small
    assert f"p = {F.exact_rank_p(table['answerable'], table['ar']):.3f}" in text and "the models rank alike" in text


# ----------------------------------------------------------------------------- length and D.5
def _pc(change, lo, hi) -> pd.DataFrame:
    base = {"baseline_budget": "8K", "comparison_budget": "64K", "ci_level": 0.95, "n": 100, "n_models": 2}
    return pd.DataFrame([{**base, "level": "evidence_type", "key": "overall", "baseline": 30.0,
                          "comparison": 30.0 + change, "change": change, "change_ci_low": lo, "change_ci_high": hi,
                          "retention": (30 + change) / 30}])


def test_length_change_in_either_direction_and_when_no_change_is_detectable():
    assert "overall accuracy rises from 30.0% to 35.5% (change +5.5 points, 95% CI 2.2 to 8.8; 118.3% retained)" in \
        F.length_change(_pc(5.5, 2.25, 8.75)).release
    flat = F.length_change(_pc(0.3, -1.2, 1.8)).release
    assert (f"overall accuracy changes from 30.0% to 30.3% (change +0.3 points, 95% CI {MINUS}1.2 to 1.8, which "
            "includes zero: no change detectable with 100 questions;") in flat


def _d5(rows) -> pd.DataFrame:
    return pd.DataFrame([dict(zip(("measure", "n", "n_models", "rho", "rho_ci_low", "rho_ci_high"), r)) for r in rows])


def test_a_change_correlated_with_its_own_baseline_is_named_as_coupled():
    corr = _d5([("retention", 40, 10, -0.01, -0.33, 0.32), ("change", 40, 10, -0.81, -0.90, -0.68),
                ("change_vs_mean", 40, 10, -0.10, -0.50, 0.30)])
    text = F.baseline_sensitivity(corr).release
    assert text == (f"Over the 40 model \u00d7 evidence cells of 10 models (95% intervals resample the models), the "
                    f"change in points falls as the baseline rises ({RHO} = {MINUS}0.81, 95% CI {MINUS}0.90 to "
                    f"{MINUS}0.68), but the change contains the baseline, so the two are coupled by construction; "
                    f"against the mean of the two budgets, which removes that coupling, no relation is detectable "
                    f"with 10 models ({RHO} = {MINUS}0.10, 95% CI {MINUS}0.50 to 0.30); retention shows no relation to "
                    f"the baseline detectable with 10 models ({RHO} = {MINUS}0.01, 95% CI {MINUS}0.33 to 0.32).")


def test_no_correlation_over_four_cells_and_no_interval_over_three_models():
    assert "no correlation with the baseline is stated (fewer than 5)" in \
        F.baseline_sensitivity(_d5([("change", 4, 1, -1.0, np.nan, np.nan)])).release
    text = F.baseline_sensitivity(_d5([("retention", 12, 3, 0.7, np.nan, np.nan)])).release
    assert "(no interval: 3 models are too few to resample)" in text and "rises" not in text


def test_odds_per_doubling_reads_the_direction_from_the_interval():
    def smod(or_, lo, hi):
        return pd.DataFrame([{"evidence_type": "overall", "odds_ratio": or_, "or_ci_low": lo, "or_ci_high": hi,
                              "budgets": "8K, 16K", "n_clusters": 50}])

    assert "accuracy rises with length" in F.odds_per_doubling(smod(1.2, 1.05, 1.4)).release
    assert "(8K, 16K, 50 questions)" in F.odds_per_doubling(smod(0.85, 0.83, 0.86)).release
    assert "no trend detectable with these questions" in F.odds_per_doubling(smod(1.02, 0.9, 1.1)).release
    assert F.odds_per_doubling(smod(1.2, 1.05, 1.4)).paper is None


# ----------------------------------------------------------------------------- judges, ablation, design, errors
def _judges(rows) -> pd.DataFrame:
    keys = ("slice", "n", "delta_pp", "delta_ci_low", "delta_ci_high", "agreement", "kappa", "kappa_ci_low",
            "kappa_ci_high", "n_items")
    return pd.DataFrame([{**dict(zip(keys, r)), "judge1_name": "J1", "judge2_name": "J2"} for r in rows])


SUMMARY = pd.DataFrame({"statistic": ["n_scored"], "estimate": [11978.0]})


def test_where_the_judges_part_is_said_per_measure():
    t = _judges([("All items", 11978, 0.8, 0.5, 1.1, 98.0, 0.953, 0.946, 0.959, 799),
                 ("Speaker Identity", 2202, 1.0, -0.05, 2.1, 95.6, 0.907, 0.886, 0.925, 147),
                 ("AR", 1949, 2.4, 1.6, 3.2, 97.3, 0.936, 0.915, 0.954, 130)])
    text = F.judge_agreement(SUMMARY, t).release
    assert "part most on AR" not in text
    assert text == ("J1 and J2 agree on 98.0% of the 11,978 predictions both scored (Cohen's \u03ba = 0.953, 95% CI "
                    "0.946 to 0.959); J2's overall accuracy is 0.8 points higher than J1's (95% CI 0.5 to 1.1). "
                    "Intervals resample the 799 items, which the models share. The accuracy gap is largest on AR "
                    "(+2.4 points, 1,949 predictions, 95% CI 1.6 to 3.2); agreement and \u03ba are lowest on Speaker "
                    "Identity (95.6%, \u03ba = 0.907).")


def test_a_judge_gap_the_items_cannot_show():
    t = _judges([("All items", 600, 0.3, -0.2, 0.8, 97.0, 0.93, 0.9, 0.95, 40),
                 ("AR", 100, -1.0, -3.0, 1.0, 90.0, 0.8, 0.7, 0.9, 8), ("IE (answerable)", 100, 0.1, -1, 1, 99.0, 0.97,
                                                                       0.9, 1.0, 8)])
    text = F.judge_agreement(SUMMARY, t).release
    assert (f"no difference between J2's and J1's overall accuracy is detectable with 40 items (+0.3 points, 95% CI "
            f"{MINUS}0.2 to 0.8)") in text
    assert f"They part most on" not in text
    assert (f"No slice's accuracy gap is detectable; the largest is on AR ({MINUS}1.0 points, 100 predictions, 95% CI "
            f"{MINUS}3.0 to 1.0); agreement and \u03ba are lowest on AR (90.0%, \u03ba = 0.800).") in text


def test_transcript_ablation_says_when_no_change_is_detectable():
    t = pd.DataFrame([{"group": "speech_semantics", "row": "Speech Semantics", "n": 195, "full_audio": 75.9,
                       "transcript_only": 70.8, "delta_pp": 5.1, "ci_low": -1.0, "ci_high": 11.3, "p_value": 0.14},
                      {"group": "audio_native", "row": "Audio-native", "n": 40, "full_audio": 20.0,
                       "transcript_only": 30.0, "delta_pp": -10.0, "ci_low": -15.0, "ci_high": -5.0, "p_value": 2e-5}])
    text = F.transcript_ablation(t).release
    assert ("on the audio-native items (40 questions) accuracy rises from 20.0% to 30.0% (+10.0 points, 95% CI 5.0 to "
            "15.0; McNemar p = 2 \u00d7 10\u207b\u2075)") in text
    assert "which includes zero: no change detectable with 195 questions; McNemar p = 0.14" in text


def test_composition_and_history_counts():
    comp = pd.DataFrame({"Speech Semantics": [3, 10, 2, 12], "Speaker Identity": [4, 5, 1, 6], "Total": [7, 15, 3, 18]},
                        index=["Operation|IE", "Total|Answerable", "Total|AR", "Total|All"])
    assert F.composition(comp).release == ("This release has 18 questions: 15 answerable and 3 answer-refusal; by "
                                           "evidence type 12 Speech Semantics and 6 Speaker Identity. It has 3 "
                                           "speech-semantics IE questions.")
    scale = pd.DataFrame([{"budget": b, "quantity": "sessions", "label": "Sessions", "n_items": 20, "mean": m}
                          for b, m in (("8K", 8.0), ("64K", 64.0))])
    assert F.history_growth(scale).release == "From 8K to 64K (20 histories at each), sessions from 8.0 to 64.0 per " \
                                              "history (\u00d78.0)."


def _errors(group, label, counts, macro):
    classes = ("recognition", "binding", "operation", "unsupported", "not_attributable")
    row = {"by": "operation", "group": group, "label": label}
    return (pd.DataFrame([{**row, **dict(zip(classes, macro))}]),
            pd.DataFrame([{**row, **dict(zip(classes, counts)), "n_errors": sum(counts)}]))


def test_most_frequent_is_by_count_and_names_the_mean_over_cells_where_it_differs():
    shares, counts = _errors("information_extraction", "IE", (513, 445, 28, 125, 29), (36.0, 45.9, 2.4, 12.8, 2.9))
    text = F.error_profile(shares, counts).release
    assert "IE binding (46%)" not in text
    assert text == ("By count, the most frequent error class is: by operation, IE recognition/localization (513 of "
                    "1,140 errors, 45%; next binding, 445, exact binomial p = 0.030; the mean over model \u00d7 "
                    "evidence cells puts binding first, 46%).")


def test_two_classes_the_counts_cannot_separate():
    shares, counts = _errors("temporal_evolution_tracking", "TET", (10, 8, 1, 0, 0), (50.0, 40.0, 10.0, 0.0, 0.0))
    assert F.error_profile(shares, counts).release == (
        "By count, the most frequent error class is: by operation, TET recognition/localization and binding, not "
        "separable with 19 errors (10 and 8, exact binomial p = 0.81).")


@pytest.mark.parametrize("p, text", [(0.5, "p = 0.50"), (0.0123, "p = 0.012"), (0.001, "p = 0.001"),
                                     (7.33e-20, "p = 7.3 \u00d7 10\u207b\u00b2\u2070"), (float("nan"), "p not available")])
def test_fmt_p(p, text):
    assert F.fmt_p(p) == text
