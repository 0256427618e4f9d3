"""The pieces that keep every figure's data and texts in view (issue 23), on hand-made inputs."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import harness_line, write_jsonl

import figure_harness as H
from voxmem_analysis import load_release, output
from voxmem_analysis.analysis import design, explore, results
from voxmem_analysis.errors import MissingDataError
from voxmem_analysis.plots import scaling as PS
from voxmem_analysis.plots.style import fit_label, fit_labels, log_ticks


# ----------------------------------------------------------------------------- ticks and labels
def test_log_ticks_of_the_paper_axis_are_its_printed_ticks():
    assert log_ticks(0.775 * 0.97, 1.03) == [0.8, 0.85, 0.9, 0.95, 1.0]


def test_log_ticks_of_a_wide_axis_are_round_and_well_spaced():
    # my_eval's odds ratios run from 0.19 to 1.457: the old fixed ticks stopped at 1 and overprinted
    assert log_ticks(0.184, 1.5) == [0.2, 0.3, 0.5, 1.0]
    assert log_ticks(1e-5, 1e4) == [1e-4, 1e-2, 1.0, 100.0, 1e4]


@pytest.mark.parametrize("lo,hi", [(0.97, 1.03), (0.9, 1.2), (0.5, 2.0), (0.3, 1.01), (0.99, 7.5), (0.02, 1.0),
                                   (0.75, 1.8), (1e-3, 50.0)])
def test_log_ticks_hold_one_and_never_crowd(lo, hi):
    ticks = log_ticks(lo, hi)
    span = math.log10(hi / lo)
    assert 1.0 in ticks
    assert 2 <= len(ticks) <= 6
    assert all(lo <= t <= hi for t in ticks)
    assert min(math.log10(b / a) for a, b in zip(ticks, ticks[1:])) >= 0.12 * span


def test_log_ticks_of_an_invalid_axis_are_none():
    assert log_ticks(0.0, 1.0) == [] and log_ticks(2.0, 1.0) == [] and log_ticks(0.5, math.inf) == []


def test_fit_label_keeps_short_names_and_wraps_long_ones():
    assert fit_label("Ultravox-v0.6-Llama-3.1-8B") == "Ultravox-v0.6-Llama-3.1-8B"   # the paper's longest
    name = "Gemini-3.1-Pro-Preview-native-audio-dialog-long-context-2026-01-15-experimental"
    # the middle goes, the start and the end (version, date) stay
    assert fit_label(name).split("\n") == ["Gemini-3.1-Pro-Preview-native-", "\u20262026-01-15-experimental"]
    assert fit_label(name, lines=1) == "Gemini-3.1-Pro\u2026experimental"
    assert fit_label("x" * 55) == "x" * 30 + "\n" + "x" * 25   # fits in two lines: nothing cut
    assert all(len(line) <= 30 for line in fit_label("x" * 75).split("\n"))


def test_fit_labels_never_make_two_names_alike():
    a = "experiment-alpha-" + "b" * 30 + "-middle1-" + "c" * 20 + "-final"
    b = a.replace("middle1", "middle2")
    assert fit_label(a) == fit_label(b)
    fa, fb, short = fit_labels([a, b, "short"])
    assert fa != fb and fa.replace("\n", "") == a and fb.replace("\n", "") == b and short == "short"


def test_ratio_limits_hold_one_every_interval_end_and_a_margin():
    lo, hi = PS.ratio_limits([0.463, 0.190, 1.130, 1.078, 0.932, 1.247, np.nan])
    assert lo == pytest.approx(0.190 * 0.97) and hi == pytest.approx(1.247 * 1.03)
    assert PS.ratio_limits([1.1, 1.2]) == pytest.approx((0.95 * 0.97, 1.2 * 1.03))   # 1 in view below the data
    assert PS.ratio_limits([np.nan]) == pytest.approx((0.95 * 0.97, 1.03))


def _or_frame() -> pd.DataFrame:
    rows = [("speech_semantics", 0.655, 0.479, 0.895, True), ("speaker_information", 0.463, 0.190, 1.130, True),
            ("paralinguistic_information", 1.078, 0.932, 1.247, True),
            ("environmental_sound", np.nan, np.nan, np.nan, False), ("overall", 0.843, 0.731, 0.972, True)]
    df = pd.DataFrame(rows, columns=["evidence_type", "odds_ratio", "or_ci_low", "or_ci_high", "converged"])
    return df.assign(budgets="8K, 32K", cluster="question_id")


def _laid_out_problems(fig, synthetic: bool = True) -> list[str]:
    output.prepare_figure(fig, synthetic=synthetic)
    fig.set_dpi(200)
    with output.laid_out(fig, 200):
        problems = H.figure_problems(fig)
    plt.close(fig)
    return problems


def test_odds_ratio_forest_shows_every_interval_and_says_what_it_cannot_estimate():
    fig = PS.odds_ratio_forest(_or_frame())
    ax = fig.axes[0]
    lo, hi = ax.get_xlim()
    assert lo <= 0.190 and hi >= 1.247 and lo < 1.0 < hi
    assert [t.get_text() for t in ax.get_xticklabels() if t.get_text()] == ["0.2", "0.3", "0.5", "1"]
    texts = [t.get_text() for t in ax.texts]
    assert "1.078 [0.932, 1.247]" in texts and "not estimable (no convergence)" in texts
    assert _laid_out_problems(fig) == []


def test_evidence_scaling_lines_says_where_retention_is_not_defined():
    rows = [(b, e, a, a / base if base else np.nan)
            for b, accs in (("8K", (50.0, 0.0, 30.0)), ("64K", (40.0, 0.0, 20.0)))
            for e, a, base in zip(("speech_semantics", "environmental_sound", "overall"), accs, (50.0, 0.0, 30.0))]
    df = pd.DataFrame(rows, columns=["budget", "evidence_type", "accuracy", "retention"]).assign(reference_budget="8K")
    fig = PS.evidence_scaling_lines(df)
    right = fig.axes[1]
    assert [t.get_text() for t in right.texts] == ["0.80", "0.67"]   # no "nan" written at a line's end
    assert right.get_xlabel().endswith("\nno retention for Environmental Sound (0 % at 8K)")
    assert _laid_out_problems(fig) == []


# ----------------------------------------------------------------------------- the synthetic stamp
def _crowded_corner():
    """A figure whose x label sits where the stamp goes (bottom right, no margin kept for it)."""
    fig, ax = plt.subplots(figsize=(3.0, 2.0))
    ax.plot([0, 1], [0, 1])
    ax.set_xlabel("a long x label that reaches the right edge of the figure")
    fig.tight_layout(pad=0)
    return fig


def test_a_stamp_that_would_cover_a_label_moves_below_the_figure():
    fig = _crowded_corner()
    output.stamp_synthetic(fig)
    output.stamp_synthetic(fig)   # once only
    stamps = [t for t in fig.texts if t.get_gid() == output.STAMP_GID]
    assert len(stamps) == 1
    fig.draw_without_rendering()
    label_box = fig.axes[0].xaxis.label.get_window_extent()
    assert stamps[0].get_window_extent().overlaps(label_box)
    assert output.clear_stamp(fig) is True
    assert stamps[0].get_window_extent().y1 < label_box.y0   # now under everything
    assert _laid_out_problems(fig) == []


def test_a_stamp_in_a_free_corner_stays_where_it_was():
    fig, ax = plt.subplots(figsize=(4.0, 3.0), constrained_layout=True)
    ax.plot([0, 1], [0, 1])
    from voxmem_analysis.plots.style import reserve_footer

    reserve_footer(fig)
    output.stamp_synthetic(fig)
    fig.draw_without_rendering()
    assert output.clear_stamp(fig) is False
    assert fig.texts[-1].get_position() == (0.995, 0.003)
    plt.close(fig)


# ----------------------------------------------------------------------------- session roles
def _release(tmp_path, lines):
    root = tmp_path / "shape"
    write_jsonl(root / "predictions" / "a" / "p.jsonl", lines)
    return load_release(root)


def test_session_role_shares_are_of_all_sessions(tmp_path):
    # two questions at 8K: 9 and 11 sessions, 1 and 3 evidence, 1 and 1 same-key -> means 10, 2, 1
    lines = [harness_line(item_id="q_00010_8k", session_count=9, evidence_session_count=1),
             harness_line(item_id="q_00012_8k", question_id="q_00012", family_id="fam_00012", session_count=11,
                          evidence_session_count=3)]
    roles = design.session_roles(_release(tmp_path, lines)).set_index("role")
    assert list(roles.index) == ["evidence_sessions", "samekey_haystack_sessions", "unknown_sessions"]
    assert roles["mean_sessions"].tolist() == pytest.approx([2.0, 1.0, 7.0])
    assert roles["share"].tolist() == pytest.approx([0.2, 0.1, 0.7])   # not 2/3 and 1/3 of the known roles
    assert roles.loc["unknown_sessions", "label"] == "Sessions of unknown role"


def test_session_roles_of_a_release_reporting_every_role_have_no_unknown():
    from conftest import SYNTHETIC

    roles = design.session_roles(load_release(SYNTHETIC))
    assert "unknown_sessions" not in set(roles["role"])
    assert roles.groupby("budget")["share"].sum().tolist() == pytest.approx([1.0] * 4)


# ----------------------------------------------------------------------------- panels that would repeat another
def _one_budget(tmp_path):
    return _release(tmp_path, [harness_line(), harness_line(model="Model-B", verdict=False)])


def test_figure8_is_not_drawn_when_it_would_repeat_figure5(tmp_path, tiny_release):
    release = _one_budget(tmp_path)
    with pytest.raises(MissingDataError, match="would only repeat Figure 5"):
        results.fig8_panels(release, None, "8K")
    models, shared, drawn = results.fig8_panels(load_release(tiny_release), "64K", "8K")
    assert (models, shared, drawn) == (["Model-A", "Model-B"], ["8K", "64K"], ["64K"])


def test_the_explorer_by_budget_is_not_drawn_on_one_budget(tmp_path):
    with pytest.raises(MissingDataError, match="would only repeat the one above"):
        explore.explore_by_budget(_one_budget(tmp_path), "evidence_type")
