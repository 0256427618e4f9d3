"""Figures name only what they draw: colour bars that mark the overflow, Figure 8's title, points at
0 % and 100 % off the axis lines, labels no one can read as another point's, and no correlation drawn
over fewer than ``findings.MIN_CORRELATION_POINTS`` points."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import figure_harness as H  # noqa: E402
from voxmem_analysis.analysis.selection import describe_shared_set  # noqa: E402
from voxmem_analysis.plots import amc as PA  # noqa: E402
from voxmem_analysis.plots import results as PR  # noqa: E402
from voxmem_analysis.plots import scaling as PS  # noqa: E402
from voxmem_analysis.plots import style  # noqa: E402
from voxmem_analysis.plots.style import colorbar_extend  # noqa: E402

TYPES = ("speech_semantics", "speaker_information", "paralinguistic_information", "environmental_sound", "overall")


def _panels(top: float) -> pd.DataFrame:
    return pd.DataFrame([{"budget": "8K", "row": "M", "kind": "model", "group": "open_weight", "evidence_type": e,
                          "accuracy": a, "n": 10, "n_models": 1} for e, a in zip(TYPES, (top, 20, 10, 0, 30))])


def _extend_marks(fig) -> int:
    """The extend triangles of the figure's colour bar (drawn as patches of its axes)."""
    return len(next(ax for ax in fig.axes if ax.get_label() == "<colorbar>").patches)


@pytest.mark.parametrize("top, marks", [(79.3, 1), (100.0, 1), (70.0, 0)])
def test_heatmap_colour_bars_mark_values_beyond_the_scale(top, marks):
    fig = PR.evidence_heatmaps(_panels(top))
    assert _extend_marks(fig) == marks
    plt.close(fig)
    oe = pd.DataFrame([{"budget": "32K", "operation": "temporal_evolution_tracking", "evidence_type": "speech_semantics",
                        "accuracy": top, "n_models": 1, "n_questions": 5}])
    fig = PR.operation_heatmap(oe)
    assert _extend_marks(fig) == marks
    plt.close(fig)
    assert colorbar_extend([-1, 5], (0, 70)) == "min" and colorbar_extend([np.nan], (0, 70)) == "neither"


def test_figure8_title_names_only_the_budgets_drawn():
    ms = [f"M{i}" for i in range(10)]
    title = describe_shared_set(ms, ["8K", "16K", "32K", "64K"], "64K", ["8K", "16K", "64K"])
    assert "32K" not in title
    assert title == ("10 models run at 64K (8K, 16K, 64K shown); questions judged at every budget they were run at by "
                     "every one")
    assert describe_shared_set(ms, ["8K", "64K"], "64K", ["8K", "64K"]) == \
        "10 models run at 64K; questions judged at 8K, 64K by every one"


def test_points_at_0_and_100_percent_are_off_the_axis_lines():
    t16 = pd.DataFrame({"model": [f"M{i}" for i in range(6)], "answerable": [0.0, 10, 20, 30, 40, 50],
                        "ar": [100.0, 0, 20, 50, 60, 10]})
    fig = PR.answerable_refusal_scatter(t16)
    fig.draw_without_rendering()
    assert H.points_on_axis_lines(fig) == []
    ax = fig.axes[0]
    ax.set_xlim(0, 60)                               # as it was: the point at 0 % sat on the y axis line
    fig.draw_without_rendering()
    assert "marker(s) on the left axis line" in H.points_on_axis_lines(fig)[0]
    plt.close(fig)


def _fig9(n: int, spread: float = 30.0) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    x = np.r_[290.0, 290.5, 289.2, rng.uniform(100, 360, n - 3)]
    y = np.r_[67.5, 66.6, 66.0, rng.uniform(20, 80, n - 3)]
    pts = pd.DataFrame({"Mean tokens": x, "ARS": y}, index=[f"System {i}|Text" for i in range(n)])
    cor = pd.DataFrame({"estimate": [0.9, 0.8], "ci_low": [0.5, 0.4], "ci_high": [0.99, 0.95], "p": [0.01, 0.02],
                        "n": [n, n]}, index=["Pearson r", "Spearman rho"])
    return pd.concat([pts, cor])


def test_amc_figure9_labels_of_crowded_points_lead_to_their_point():
    fig = PA.plot_length(_fig9(12))
    ax = fig.axes[0]
    pts = ax.transData.transform(_fig9(12).iloc[:12][["Mean tokens", "ARS"]].to_numpy(float))
    r = fig.canvas.get_renderer()
    for a in [t for t in ax.texts if hasattr(t, "xy") and t.get_text().isdigit()]:
        k = int(a.get_text()) - 1
        if a.arrow_patch is None:                    # a label without a leader is nearer its own point than any other
            assert style._nearest(a.get_window_extent(r), pts) == k
        else:
            assert np.allclose(a.xy, _fig9(12).iloc[k][["Mean tokens", "ARS"]].to_numpy(float))
    crowded = [a for a in ax.texts if hasattr(a, "xy") and a.get_text() in ("1", "2", "3")]
    assert all(a.arrow_patch is not None for a in crowded)   # three touching markers: every label on a leader
    assert any("Pearson r = 0.90" in t.get_text() for t in ax.texts)
    plt.close(fig)


def test_no_correlation_is_drawn_over_four_points():
    fig = PA.plot_length(_fig9(4))
    ax = fig.axes[0]
    assert not any("Pearson" in t.get_text() for t in ax.texts)
    assert any(t.get_text() == "no correlation shown (4 systems; fewer than 5)" for t in ax.texts)
    assert not [ln for ln in ax.lines if ln.get_linestyle() == "--"]          # and no fitted line
    plt.close(fig)
    cells = pd.DataFrame({"model": "M", "evidence_type": list(TYPES[:4]), "baseline": [40.0, 30, 20, 10],
                          "comparison": [30.0, 25, 10, 9], "change": [-10.0, -5, -10, -1], "retention": [0.75, 0.83, 0.5, 0.9],
                          "baseline_budget": "8K", "comparison_budget": "64K"})
    corr = pd.DataFrame({"measure": ["retention", "change"], "n": [4, 4], "rho": [0.2, -0.8], "p_value": [0.8, 0.2],
                         "rho_ci_low": [np.nan, np.nan], "rho_ci_high": [np.nan, np.nan], "n_models": [1, 1]})
    fig = PS.sensitivity_scatter(cells, correlations=corr)
    titles = [ax.get_title() for ax in fig.axes]
    assert all("no correlation shown (4 cells, fewer than 5)" in t for t in titles) and not any("-0.80" in t for t in titles)
    plt.close(fig)
    t16 = pd.DataFrame({"model": ["A", "B", "C", "D"], "answerable": [1.0, 2, 3, 4], "ar": [4.0, 3, 2, 1]})
    s16 = pd.DataFrame([{"budget": "64K", "n_models": 4, "rho": -1.0, "p_value": 0.0, "rho_ci_low": np.nan,
                         "rho_ci_high": np.nan, "always_abstain": 16.3}])
    fig = PR.answerable_refusal_scatter(t16, summary=s16)
    assert fig.axes[0].get_title().startswith("64K: no correlation shown (4 models; fewer than 5)")
    plt.close(fig)
