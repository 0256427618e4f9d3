"""The subtype explorer: selection, hand-computed slices, the pooled line, labels, order, the dot plot.

The tiny release (tests/conftest.py) holds, after the paper's scoring rules:

====== ======= ====================== ======= =======================
model  budget  operation              correct note
====== ======= ====================== ======= =======================
A      8K      information_extraction True
A      8K      answer_refusal         True
A      64K     information_extraction False
A      64K     answer_refusal         False   failed -> wrong
B      8K      information_extraction --      provider rejected: out
B      8K      answer_refusal         False
B      64K     information_extraction False   ungraded -> wrong
B      64K     answer_refusal         True
====== ======= ====================== ======= =======================

All rows are subtype ``cue_to_fact``, evidence ``speaker_information``.
"""
from __future__ import annotations

import ast
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from voxmem_analysis.analysis import explore as E  # noqa: E402
from voxmem_analysis import load_release  # noqa: E402
from voxmem_analysis.errors import AnalysisInputError, MissingDataError  # noqa: E402
from voxmem_analysis.plots import slices as S  # noqa: E402
from voxmem_analysis.plots.style import OPERATION_COLORS  # noqa: E402

NOTEBOOK = Path(__file__).resolve().parents[1] / "notebooks" / "50_subtype_explorer.py"
Z = 1.959963984540054


def wilson(c: int, n: int) -> tuple[float, float]:
    """95% Wilson score interval in percent, written out."""
    p = c / n
    centre = (p + Z * Z / (2 * n)) / (1 + Z * Z / n)
    half = Z * math.sqrt(p * (1 - p) / n + Z * Z / (4 * n * n)) / (1 + Z * Z / n)
    return 100 * (centre - half), 100 * (centre + half)


@pytest.fixture
def release(tiny_release):
    return load_release(tiny_release)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def rows(table: pd.DataFrame, col: str) -> dict:
    return {r[col]: r for r in table.to_dict("records")}


# ----------------------------------------------------------------------------- selection
def test_select_rows_budget_and_models(release):
    f = release.frame
    assert len(E.select_rows(f)) == 8
    assert len(E.select_rows(f, "all", "all")) == 8
    assert sorted(E.select_rows(f, "8K")["item_id"].to_list()) == ["q_00010_8k", "q_00010_8k", "q_00011_8k", "q_00011_8k"]
    assert len(E.select_rows(f, "64k")) == 4                           # any spelling of the budget
    assert set(E.select_rows(f, None, "Model-B")["model"].to_list()) == {"Model-B"}
    assert len(E.select_rows(f, "8K", ["Model-A"])) == 2
    assert len(E.select_rows(f, "8K", "Model-A, Model-B")) == 4
    assert len(E.select_rows(f, "32K")) == 0                             # a budget the release lacks
    # a pandas frame selects the same rows
    pdf = f.to_pandas()
    assert sorted(E.select_rows(pdf, "64K", "Model-B")["item_id"]) == ["q_00010_64k", "q_00011_64k"]


def test_select_rows_rejects_bad_arguments(release):
    with pytest.raises(AnalysisInputError, match="unknown budget '12K'"):
        E.select_rows(release.frame, "12K")
    with pytest.raises(AnalysisInputError, match=r"unknown model\(s\) \['Model-Z'\]") as err:
        E.select_rows(release.frame, None, "Model-A,Model-Z")
    assert err.value.field == "models"


def test_parse_helpers():
    assert E.parse_by(" subtype , evidence_type") == ["subtype", "evidence_type"]
    assert E.parse_by(["model"]) == ["model"]
    with pytest.raises(AnalysisInputError):
        E.parse_by(" , ")
    assert E.parse_models(None) is None and E.parse_models("all") is None and E.parse_models("") is None
    assert E.parse_models("A, B") == ["A", "B"]


# ----------------------------------------------------------------------------- numbers
def test_slices_by_model_hand_computed(release):
    t = E.explore_slices(release, "model", interval="wilson")
    assert t["model"].astype(str).tolist() == ["Model-A", "Model-B", "overall"]
    r = rows(t.assign(model=t["model"].astype(str)), "model")
    # A: 2 of 4 scored; B: 1 of 3 scored (the provider-rejected row is out)
    assert (r["Model-A"]["n_correct"], r["Model-A"]["n"], r["Model-A"]["n_excluded"]) == (2, 4, 0)
    assert (r["Model-B"]["n_correct"], r["Model-B"]["n"], r["Model-B"]["n_excluded"]) == (1, 3, 1)
    assert (r["overall"]["n_correct"], r["overall"]["n"]) == (3, 7)
    assert r["Model-A"]["accuracy"] == pytest.approx(50.0)
    assert r["Model-B"]["accuracy"] == pytest.approx(100 / 3)
    assert r["overall"]["accuracy"] == pytest.approx(300 / 7)
    assert (r["Model-A"]["accuracy_ci_low"], r["Model-A"]["accuracy_ci_high"]) == pytest.approx(wilson(2, 4))
    assert (r["Model-B"]["accuracy_ci_low"], r["Model-B"]["accuracy_ci_high"]) == pytest.approx(wilson(1, 3))
    assert set(t["interval"]) == {"wilson"}


def test_slices_by_operation_and_budget(release):
    t = E.explore_slices(release, "operation")
    assert t["operation"].astype(str).tolist() == ["information_extraction", "answer_refusal", "overall", "macro"]
    acc = dict(zip(t["operation"].astype(str), t["accuracy"]))
    assert acc["information_extraction"] == pytest.approx(100 / 3)      # A8 yes, A64 no, B64 no; B8 out
    assert acc["answer_refusal"] == pytest.approx(50.0)                 # A8 yes, A64 no, B8 no, B64 yes
    assert acc["overall"] == pytest.approx(300 / 7)
    assert acc["macro"] == pytest.approx((100 / 3 + 50) / 2)

    t8 = E.explore_slices(release, "model", budget="8K")
    assert dict(zip(t8["model"].astype(str), t8["accuracy"])) == pytest.approx(
        {"Model-A": 100.0, "Model-B": 0.0, "overall": 200 / 3})
    tb = E.explore_slices(release, "budget,operation", models="Model-B")
    got = {(str(b), str(o)): (c, n) for b, o, c, n in tb[["budget", "operation", "n_correct", "n"]].itertuples(index=False)}
    assert got[("8K", "answer_refusal")] == (0, 1)
    assert got[("8K", "information_extraction")] == (0, 0)               # only a provider-rejected row
    assert got[("64K", "information_extraction")] == (0, 1)
    assert got[("64K", "answer_refusal")] == (1, 1)
    assert got[("64K", "overall")] == (1, 2)


def test_slices_bootstrap_is_seeded(release):
    a = E.explore_slices(release, "operation", interval="bootstrap", n_boot=300, seed=7)
    b = E.explore_slices(release, "operation", interval="bootstrap", n_boot=300, seed=7)
    pd.testing.assert_frame_equal(a, b)
    assert a["interval"].iloc[0] == "bootstrap"
    assert a["accuracy"].iloc[0] == pytest.approx(100 / 3)
    ok = a["accuracy_ci_low"].notna()      # one item per operation: the macro row has no bootstrap interval
    assert (a["accuracy_ci_low"] <= a["accuracy"])[ok].all() and (a["accuracy"] <= a["accuracy_ci_high"])[ok].all()
    assert a.loc[~ok, "accuracy_ci_flag"].str.contains("not estimable").all() and ok.sum() == 3


def test_slices_reject_empty_selection_and_bad_column(release):
    with pytest.raises(MissingDataError, match="no verdicts selected"):
        E.explore_slices(release, "model", budget="32K")
    with pytest.raises(AnalysisInputError, match="unknown column"):
        E.explore_slices(release, "not_a_column")


def test_pooled_accuracy(release):
    assert E.pooled_accuracy(release) == pytest.approx(300 / 7)
    assert E.pooled_accuracy(release, budget="8K") == pytest.approx(200 / 3)
    assert E.pooled_accuracy(release, budget="64K") == pytest.approx(25.0)
    assert E.pooled_accuracy(release, models="Model-B") == pytest.approx(100 / 3)
    assert E.pooled_accuracy(release.frame.to_pandas(), budget="8K", models="Model-A") == pytest.approx(100.0)
    assert math.isnan(E.pooled_accuracy(release, budget="32K"))
    # the pooled line is the overall row of a slicing without a type column
    t = E.explore_slices(release, "model", budget="64K")
    assert t.loc[t["level"] == "overall", "accuracy"].item() == pytest.approx(E.pooled_accuracy(release, budget="64K"))


# ----------------------------------------------------------------------------- labels and order
def test_labels_and_names():
    assert E.slice_label("subtype", "cue_to_fact") == "Cue-to-Fact"
    assert E.slice_label("evidence_type", "speaker_information") == "Speaker Identity"
    assert E.slice_label("operation", "answer_refusal") == "AR"
    assert E.slice_label("source_operation", "multi_session_reasoning") == "MSR"
    assert E.slice_label("evidence_type", "overall") == "overall"
    assert E.slice_label("session_count", 9) == "9"
    assert E.slice_label("model", "Model-A") == "Model-A"
    assert E.slice_label("answer_type", None) == "missing"
    assert E.column_name("evidence_session_count") == "Evidence sessions"
    assert E.column_name("whatever") == "whatever"


def test_titles_captions_names():
    assert E.slice_title("subtype,evidence_type", budget="32k") == \
        "Accuracy by subtype \u00d7 evidence type \u2014 32K, all models"
    assert E.slice_title("model", models=["Model-A", "Model-B"]) == \
        "Accuracy by model \u2014 all budgets, Model-A, Model-B"
    assert E.slice_caption("operation", budget="8K", models="Model-A", interval="bootstrap") == \
        "Accuracy by operation \u2014 8K, Model-A (%, 95% bootstrap interval)"
    assert E.output_name("subtype,evidence_type", "32K") == "explorer_subtype_evidence_type_32k"
    assert E.output_name("model", None) == "explorer_model_all"


def test_level_orders():
    got = E.level_orders({
        "operation": ["answer_refusal", "overall", "information_extraction", "macro", "answer_refusal"],
        "subtype": ["latest_state", "context_to_cue", "counting"],
        "session_count": [10, 9, "overall", 2],
        "model": ["Model-C", "Model-B", "Model-A", "overall"],
        "answer_type": ["yes_no", "number"],
    }, model_order=["Model-A", "Model-B"])
    assert got["operation"] == ["information_extraction", "answer_refusal", "overall", "macro"]
    assert got["subtype"] == ["context_to_cue", "counting", "latest_state"]
    assert got["session_count"] == [2, 9, 10, "overall"]
    assert got["model"] == ["Model-A", "Model-B", "Model-C", "overall"]   # unknown after known
    assert got["answer_type"] == ["yes_no", "number"]                    # no vocabulary: as found


def test_slices_follow_the_model_order_and_are_categorical(release):
    t = E.explore_slices(release, "model,operation", model_order=["Model-B", "Model-A"])
    assert isinstance(t["model"].dtype, pd.CategoricalDtype) and t["model"].cat.ordered
    assert list(t["model"].cat.categories) == ["Model-B", "Model-A"]
    assert list(t["operation"].cat.categories) == ["information_extraction", "answer_refusal", "overall", "macro"]
    keys = list(zip(t["model"].astype(str), t["operation"].astype(str)))
    assert keys[:4] == [("Model-B", "information_extraction"), ("Model-B", "answer_refusal"),
                        ("Model-B", "overall"), ("Model-B", "macro")]
    assert keys[4] == ("Model-A", "information_extraction")
    # the release's order by default
    t2 = E.explore_slices(release, "model")
    assert list(t2["model"].cat.categories) == ["Model-A", "Model-B", "overall"]


def test_labelled_table(release):
    t = E.explore_slices(release, "subtype,evidence_type")
    shown = E.labelled_table(t, "subtype,evidence_type")
    assert shown.index.name == "subtype / evidence_type"
    assert shown.index.tolist() == ["Cue-to-Fact / Speaker Identity", "Cue-to-Fact / overall", "Cue-to-Fact / macro"]
    assert "subtype" not in shown.columns and shown["n"].tolist() == [7, 7, 7]
    assert shown["accuracy"].iloc[0] == pytest.approx(300 / 7)


# ----------------------------------------------------------------------------- the dot plot
def _points(ax):
    """(x, y, x_low, x_high, colour) of every errorbar point, container by container."""
    out = []
    for c in ax.containers:
        line, _, (bars,) = c.lines[0], c.lines[1], c.lines[2]
        xs, ys = line.get_xdata(), line.get_ydata()
        for x, y, seg in zip(xs, ys, bars.get_segments()):
            out.append((float(x), float(y), float(seg[0][0]), float(seg[1][0]), line.get_color()))
    return out


def test_dot_plot_one_errorbar_per_slice(release):
    t = E.explore_slices(release, "model,operation", interval="wilson")
    ax = S.slice_dot_plot(t, "model,operation", overall=E.pooled_accuracy(release), title="T")
    slices = t[t["level"] == "slice"]
    assert len(slices) == 4
    assert len(ax.containers) == 2                                      # one per operation (colour)
    pts = _points(ax)
    assert len(pts) == len(slices)
    # IE first (taxonomy order), one point per model, dodged around the model's row
    ie = [p for p in pts if p[4] == OPERATION_COLORS["information_extraction"]]
    ar = [p for p in pts if p[4] == OPERATION_COLORS["answer_refusal"]]
    assert [p[0] for p in ie] == pytest.approx([50.0, 0.0])            # A: 1 of 2; B: 0 of 1 (8K rejected)
    assert [p[0] for p in ar] == pytest.approx([100.0 / 2, 100.0 / 2])   # A: 1 of 2, B: 1 of 2
    assert [p[1] for p in ie] == pytest.approx([-0.175, 0.825])
    assert [p[1] for p in ar] == pytest.approx([0.175, 1.175])
    lo, hi = wilson(1, 2)
    assert (ar[0][2], ar[0][3]) == pytest.approx((lo, hi))
    assert [x.get_text() for x in ax.get_yticklabels()] == ["Model-A", "Model-B"]
    assert ax.get_title() == "T"
    assert ax.get_xlabel() == "Accuracy (%) with 95% Wilson interval"
    assert ax.get_xlim() == (-3.0, 103.0)     # room at both ends: dots at 0 % and 100 % off the axis lines
    leg = ax.get_legend()
    assert leg.get_title().get_text() == "Operation"
    assert [x.get_text() for x in leg.get_texts()] == ["all pooled (42.9)", "IE", "AR"]
    pooled = [ln for ln in ax.lines if ln.get_linestyle() == "--"]
    assert len(pooled) == 1 and pooled[0].get_xdata()[0] == pytest.approx(300 / 7)


def test_dot_plot_single_column_on_given_axes(release):
    t = E.explore_slices(release, "operation", budget="8K")
    fig, ax = plt.subplots()
    out = S.slice_dot_plot(t, "operation", ax=ax)
    assert out is ax
    pts = _points(ax)
    assert len(ax.containers) == 1 and len(pts) == 2
    assert [p[0] for p in pts] == pytest.approx([100.0, 50.0])            # IE: A yes (B out); AR: A yes, B no
    assert [p[1] for p in pts] == [0.0, 1.0]
    assert {p[4] for p in pts} == {S.SINGLE_COLOR}
    assert [x.get_text() for x in ax.get_yticklabels()] == ["IE", "AR"]
    assert ax.get_legend() is None                                      # nothing to name: no legend
    assert not [ln for ln in ax.lines if ln.get_linestyle() == "--"]


def test_dot_plot_draws_rows_in_the_given_order(release):
    t = E.explore_slices(release, "model", model_order=["Model-B", "Model-A"])
    ax = S.slice_dot_plot(t, "model")
    assert [x.get_text() for x in ax.get_yticklabels()] == ["Model-B", "Model-A"]
    assert [p[0] for p in _points(ax)] == pytest.approx([100 / 3, 50.0])


# ----------------------------------------------------------------------------- widget and notebook
def test_widget_recomputes_with_the_package_functions(release):
    pytest.importorskip("ipywidgets")
    calls = []

    def draw(table, by, *, overall, title):
        calls.append((table, by, overall, title))
        return S.slice_dot_plot(table, by, overall=overall, title=title)

    box = E.widget(release, draw=draw, by="model", budget=None, models=None)
    w_by, w_budget, w_model, w_ci = box.children[0].children
    assert (w_by.value, w_budget.value, w_model.value, w_ci.value) == ("model", "all", "all", "auto")
    assert "subtype,evidence_type" in w_by.options and "model" in w_by.options
    assert len(calls) == 1 and calls[0][2] == pytest.approx(300 / 7)
    w_budget.value = "8K"
    table, by, overall, title = calls[-1]
    pd.testing.assert_frame_equal(table, E.explore_slices(release, "model", budget="8K"))
    assert (by, title) == ("model", E.slice_title("model", budget="8K"))
    assert overall == pytest.approx(200 / 3)
    w_model.value = "Model-B"
    assert calls[-1][2] == pytest.approx(0.0)
    n = len(calls)
    w_budget.value = "32K"                                             # nothing there: message, no draw
    assert len(calls) == n


def test_notebook_defines_nothing():
    """The notebook only calls the package: no function, class or lambda of its own."""
    tree = ast.parse(NOTEBOOK.read_text())
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))]
    assert defs == []
    src = NOTEBOOK.read_text()
    for call in ("explore.explore_slices", "explore.pooled_accuracy", "slice_dot_plot", "output.save_figure",
                 "output.save_table", "explore.widget"):
        assert call in src


def test_auto_interval_bootstraps_pooled_budgets(release):
    """Each model pools 8K and 64K answers to the same questions: not independent, so auto bootstraps."""
    t = E.explore_slices(release, "model", n_boot=300, seed=3)
    assert set(t["interval"]) == {"bootstrap"}
    t8 = E.explore_slices(release, "model", budget="8K", n_boot=300, seed=3)
    assert set(t8.loc[t8["level"] == "slice", "interval"]) == {"wilson"}


def test_explore_by_budget_stacks_every_run_budget(release):
    """The facet data of notebook 50: one explore_slices table per run budget, plus its pooled line."""
    facets, pooled = E.explore_by_budget(release, "model", n_boot=200, seed=3)
    assert list(pd.unique(facets["budget"])) == ["8K", "64K"]
    for b in ("8K", "64K"):
        one = E.explore_slices(release, "model", budget=b, n_boot=200, seed=3)
        got = facets[facets["budget"] == b].drop(columns="budget").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, one.reset_index(drop=True))
        assert pooled[b] == E.pooled_accuracy(release, budget=b)
