"""Figures of the label-free analyses draw what they are given (labels, values, marks)."""
from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from voxmem_analysis.analysis import verdicts as G  # noqa: E402
from voxmem_analysis.io import load_longmemeval, select_judge  # noqa: E402
from voxmem_analysis.plots import verdicts as P  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "longmemeval"


@pytest.fixture(scope="module")
def frame():
    d = load_longmemeval(FIX / "manifest.csv", FIX / "questions.json")
    return select_judge(d.frame)[0]


def test_significance_marks():
    assert [P.significance_mark(p) for p in (0.0005, 0.005, 0.03, 0.05, float("nan"))] == ["***", "**", "*", "", ""]


def test_accuracy_dots(frame):
    sl = G.slice_accuracy(frame, ["system", "budget", "question_type"])
    fig = P.accuracy_dots(sl)
    axes = [a for a in fig.axes if a.get_yticklabels()]
    assert [a.get_title() for a in fig.axes] == ["budget 32k", "budget 115k"]
    labels = [t.get_text() for t in axes[0].get_yticklabels()]
    assert labels == ["single-session-user", "multi-session", "temporal-reasoning", "Overall", "Macro"]
    # first series (System-A) at 32k: x positions are its accuracies in category order
    xs = axes[0].lines[0].get_xdata()
    assert np.allclose(xs, [75, 200 / 3, 200 / 3, 70, 100 * (3 / 4 + 2 / 3 + 2 / 3) / 3])
    plt.close(fig)


def test_comparison_matrix_and_scaling(frame):
    cmp = G.compare_systems(frame, groups="budget", settings=G.BootstrapSettings(n_boot=200))
    fig = P.comparison_matrix(cmp[cmp["budget"] == "115k"], facet=None)
    texts = sorted(t.get_text() for t in fig.axes[0].texts)
    # B - C = +60 (Holm p 0.1875: no mark), antisymmetric cells
    assert texts == sorted(["-50.0", "+50.0", "+10.0", "-10.0", "+60.0", "-60.0"])
    plt.close(fig)
    sc = G.scaling_table(frame, baseline="32k", settings=G.BootstrapSettings(n_boot=200))
    fig = P.scaling_curves(sc)
    titles = [a.get_title() for a in fig.axes if a.get_title()]
    assert titles == ["single-session-user", "multi-session", "temporal-reasoning", "Overall"]
    plt.close(fig)
