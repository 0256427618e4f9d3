"""Figures 7 and 10 draw exactly the DataFrame they are given."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from voxmem_analysis.analysis import attribution as A  # noqa: E402
from voxmem_analysis import taxonomy as tx  # noqa: E402
from voxmem_analysis.plots import attribution as P  # noqa: E402
from voxmem_analysis.plots.style import CLASS_COLORS  # noqa: E402

SPK, PARA, ENV = tx.AUDIO_NATIVE


@pytest.fixture
def errors():
    rows = []
    spec = [("M1", SPK, "cue_to_fact", "binding", 6), ("M1", SPK, "cue_to_fact", "recognition", 2),
            ("M2", PARA, "counting", "operation", 5), ("M2", PARA, "latest_state", "recognition", 7),
            ("M3", ENV, "historical_state", "unsupported", 5), ("M3", ENV, "historical_state", "not_attributable", 1)]
    for m, e, s, c, k in spec:
        rows += [dict(model=m, item_id=f"{m}{s}{c}{i}", evidence_type=e, operation=tx.SUBTYPE_OPERATION[s],
                      subtype=s, rule="r", **{"class": c}) for i in range(k)]
    yield pd.DataFrame(rows)
    plt.close("all")


def _bar_widths(ax):
    return [round(p.get_width(), 6) for p in ax.patches]


def test_figure7_draws_the_given_shares(errors):
    data = pd.concat([A.class_proportions(errors, by="operation"), A.class_proportions(errors, by="evidence_type")],
                     ignore_index=True)
    fig = P.figure7(data)
    a1, a2 = fig.axes
    assert [t.get_text() for t in a1.get_yticklabels()] == ["IE", "MSR", "TET"]
    assert [t.get_text() for t in a2.get_yticklabels()] == [tx.EVIDENCE_LABELS[e] for e in tx.AUDIO_NATIVE]
    # one bar per row and class, in class order, widths = the percentages
    assert len(a1.patches) == 3 * 5
    ie = data[(data["by"] == "operation") & (data["group"] == "information_extraction")].iloc[0]
    assert _bar_widths(a1)[0::3] == [round(ie[c], 6) for c in tx.ATTRIBUTION_CLASSES]
    assert a1.patches[0].get_facecolor()[:3] == pytest.approx(matplotlib.colors.to_rgb(CLASS_COLORS["recognition"]))
    texts = [t.get_text() for t in a1.texts]
    assert "75" in texts and "25" in texts                    # IE: 6/8 binding, 2/8 recognition
    assert "1 cells\n8 errors" in texts
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == [tx.ATTRIBUTION_LABELS[c] for c in tx.ATTRIBUTION_CLASSES]


def test_figure10_rows_and_counts(errors):
    data = A.class_proportions(errors, by="subtype")
    fig = P.figure10(data)
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "IE \u00b7 Context-to-Cue" and labels[-1] == "TET \u00b7 Evolution" and len(labels) == 8
    assert "0 cells\n0 errors" in [t.get_text() for t in ax.texts]          # Context-to-Cue: no qualifying cell
    assert "Macro" not in ax.get_xlabel() and "macro" in ax.get_xlabel()
    pooled = P.figure10(A.class_proportions(errors, by="subtype", average="pooled"))
    assert "pooled" in pooled.axes[0].get_xlabel()


def test_plots_refuse_other_frames():
    with pytest.raises(ValueError, match="class_proportions"):
        P.figure10(pd.DataFrame({"x": [1]}))
