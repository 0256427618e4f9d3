"""seaborn-drawn figures: the numbers drawn, the cells they sit in, and no style leak."""
from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.plots import results as P
from voxmem_analysis.plots import scaling as PS
from voxmem_analysis.plots import slices as PL

PLOTS = Path(P.__file__).parent


def _cells(ax) -> dict:
    """(row, col) -> annotation text of a seaborn heatmap (anchors at cell centres)."""
    return {(int(np.floor(t.get_position()[1])), int(np.floor(t.get_position()[0]))): t.get_text()
            for t in ax.texts}


def test_seaborn_draws_in_at_least_three_plot_modules():
    users = [p.name for p in PLOTS.glob("*.py") if re.search(r"^\s*import seaborn", p.read_text(), re.M)]
    assert len(users) >= 3, users
    # the copied text-contrast rule of the three heatmaps is gone: seaborn picks the annotation colour
    assert not any("0.299 *" in (PLOTS / f).read_text() for f in ("results.py", "verdicts.py"))


def test_evidence_heatmap_annotations_sit_in_their_cells():
    rows = []
    for i, m in enumerate(["M0", "M1"]):
        for j, e in enumerate([*tx.EVIDENCE_TYPES, "overall"]):
            acc = np.nan if (m == "M1" and e == "environmental_sound") else 10.0 * i + j + 0.25
            rows.append({"budget": "8K", "row": m, "kind": "model", "group": "open_weight", "evidence_type": e,
                         "accuracy": acc, "n": 5, "n_models": 1})
    rows.append({"budget": "8K", "row": "Mean all", "kind": "mean", "group": "all", "evidence_type": "overall",
                 "accuracy": 42.0, "n": np.nan, "n_models": 2})
    before = dict(matplotlib.rcParams)
    fig = P.evidence_heatmaps(pd.DataFrame(rows))
    ax = fig.axes[0]
    cells = _cells(ax)
    assert cells[(0, 0)] == "0.2" and cells[(1, 1)] == "11.2" and cells[(0, 4)] == "4.2"
    assert cells[(1, 3)] == "\u2013"                           # missing cell: a dash, no number
    assert cells[(2, 4)] == "42.0"
    bold = {(r, c) for (r, c), _ in cells.items()
            for t in ax.texts if _cells_key(t) == (r, c) and t.get_fontweight() == "bold"}
    assert (0, 4) in bold and (2, 4) in bold and (0, 0) not in bold
    # text colour follows the cell: light cell -> dark text, dark cell (42 of 0-70 in YlGnBu) -> white
    assert _text_at(ax, 0, 0).get_color() != _text_at(ax, 2, 4).get_color()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["M0", "M1", "Mean all"]
    assert dict(matplotlib.rcParams) == before                 # paper style stays scoped
    plt.close(fig)


def _cells_key(t) -> tuple[int, int]:
    x, y = t.get_position()
    return int(np.floor(y)), int(np.floor(x))


def _text_at(ax, r: int, c: int):
    return next(t for t in ax.texts if _cells_key(t) == (r, c))


def test_operation_heatmap_scores_counts_and_excluded_cell():
    rows = [{"budget": "32K", "operation": o, "evidence_type": e, "accuracy": 10.0 + i + j / 10,
             "n_questions": 20 + i, "n_models": 3}
            for i, o in enumerate(tx.OPERATIONS) for j, e in enumerate(tx.EVIDENCE_TYPES)
            if (o, e) in tx.VALID_CELLS]
    fig = P.operation_heatmap(pd.DataFrame(rows))
    ax = fig.axes[0]
    texts = [t.get_text() for t in ax.texts]
    assert "excluded\nby design" in texts
    i = tx.OPERATIONS.index("multi_session_reasoning")
    j = tx.EVIDENCE_TYPES.index("speaker_information")
    assert _text_at(ax, i, j).get_text() == f"{10.0 + i + j / 10:.1f}"
    assert f"n={20 + i}" in texts
    n_valid = len(rows)
    assert sum(bool(re.fullmatch(r"\d+\.\d", t)) for t in texts) == n_valid
    assert ax.get_title() == "32K  (3 models)"
    plt.close(fig)


def test_odds_ratio_forest_draws_the_given_numbers():
    data = pd.DataFrame({"evidence_type": ["speech_semantics", "overall"], "odds_ratio": [0.8, 0.85],
                         "or_ci_low": [0.75, 0.83], "or_ci_high": [0.86, 0.87], "budgets": "8K, 64K",
                         "cluster": "question_id"})
    fig = PS.odds_ratio_forest(data)
    ax = fig.axes[0]
    assert [t.get_text() for t in ax.texts] == ["0.800 [0.750, 0.860]", "0.850 [0.830, 0.870]"]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Speech Semantics", "Overall"]
    xs = [c.lines[0].get_xdata()[0] for c in ax.containers]
    assert xs == pytest.approx([0.8, 0.85])
    plt.close(fig)


def test_slice_facets_one_panel_per_budget():
    rows = []
    for b, base in (("8K", 60.0), ("64K", 40.0)):
        for k, ev in enumerate(["speech_semantics", "speaker_information"]):
            rows.append({"budget": b, "evidence_type": ev, "level": "slice", "correct": 3, "n": 5,
                         "accuracy": base + k, "accuracy_ci_low": base + k - 5, "accuracy_ci_high": base + k + 5,
                         "interval": "wilson"})
    g = PL.slice_facets(pd.DataFrame(rows), "evidence_type", overall={"8K": 61.0, "64K": 41.0})
    assert list(g.axes_dict) == ["8K", "64K"]
    for b, base in (("8K", 60.0), ("64K", 40.0)):
        ax = g.axes_dict[b]
        assert ax.get_title() == b
        pts = [c.lines[0].get_xdata() for c in ax.containers]
        assert np.concatenate(pts).tolist() == [base, base + 1]
        assert [ln.get_xdata()[0] for ln in ax.lines if ln.get_linestyle() == "--"] == [base + 1]  # its own pooled line
        assert ax.get_xlim() == (-3.0, 103.0)   # dots at 0 or 100 drawn whole, off the axis lines
    # one legend entry says what the dashed line is (no colours here: one series per row)
    assert [t.get_text() for t in g.figure.legends[0].get_texts()] == [PL.POOLED_PER_PANEL]
    plt.close(g.figure)
    g = PL.slice_facets(pd.DataFrame(rows), "evidence_type")                # no pooled lines: no legend
    assert not g.figure.legends
    plt.close(g.figure)
