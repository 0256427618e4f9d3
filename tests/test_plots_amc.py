"""AMC figures: what each draws of the table it is given."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from voxmem_analysis.plots.amc import plot_audio_cue, plot_grouped  # noqa: E402


def test_grouped_bars_draw_every_system_row_with_or_without_a_modality():
    t = pd.DataFrame({"Semantic": [40.0, 30.0, 35.0], "Audio-cue": [20.0, 10.0, 15.0]},
                     index=["Model-A|Text", "Model-B", "Mean"])
    fig = plot_grouped(t, ["Semantic", "Audio-cue"], xlabel="APR (%)", title="t")
    ax = fig.axes[0]
    assert [x.get_text() for x in ax.get_yticklabels()] == ["Model-A (T)", "Model-B"]   # the Mean row is no system
    assert sorted(round(p.get_width(), 1) for p in ax.patches) == [10.0, 20.0, 30.0, 40.0]
    plt.close(fig)


def test_audio_cue_figure_of_a_run_without_modalities():
    t = pd.DataFrame({"Audio-cue APR": [20.0, 10.0, 15.0], "Semantic APR": [40.0, 30.0, 35.0],
                      "Audio-cue n": [12, 12, None], "Semantic n": [30, 30, None]}, index=["sys-1", "sys-2", "Mean"])
    fig = plot_audio_cue(t, metric="APR")
    assert [x.get_text() for x in fig.axes[0].get_yticklabels()] == ["sys-1", "sys-2"]
    assert "(n=12)" in fig.axes[0].get_title(loc="left") and "(n=30)" in fig.axes[0].get_title(loc="left")
    plt.close(fig)


def test_length_figure_draws_systems_without_a_modality():
    from voxmem_analysis.plots.amc import plot_length

    t = pd.DataFrame({"Mean tokens": [100.0, 200.0, 300.0], "ARS": [50.0, 60.0, 70.0]},
                     index=["A|Text", "B|Audio", "C"])
    cor = pd.DataFrame({"estimate": [1.0, 1.0], "ci_low": [float("nan")] * 2, "ci_high": [float("nan")] * 2,
                        "p": [0.0, 0.0], "n": [3, 3]}, index=["Pearson r", "Spearman rho"])
    fig = plot_length(pd.concat([t, cor]))
    ax = fig.axes[0]
    drawn = {c.get_label(): len(c.get_offsets()) for c in ax.collections}
    assert drawn == {"Text output": 1, "Audio output": 1, "output modality not given": 1}
    key = next(x.get_text() for x in ax.texts if x.get_text().startswith(" 1"))
    assert key.splitlines() == [" 1  A (T)", " 2  B (A)", " 3  C"]
    plt.close(fig)
