"""Main results on partial releases: a few models at some budgets, without models.csv or items.csv.

Every release here is cut out of tests/fixtures/results_tiny (see tests/test_results.py for its
grid) by :func:`partial_release`:

    Model-A   8K 111010  16K 110011  32K 10R011  64K 1000U1
    Model-B   8K 101100  16K 001101  32K 1F0101  64K 001-01
    Model-C   8K 110011  16K 100011  32K 000110  64K RRRRRR

q1 Speech Semantics MSR, q2 Speaker IE, q3 Paralinguistic TET, q4 Environmental IE,
q5 Speech Semantics AR (source MSR), q6 Paralinguistic AR (source TET).  The prediction lines
carry no ``paired_question_id``: without items.csv the AR source operation is unknown.

Shapes (:data:`SHAPES`):
``user``        A, B at 8K and 32K; no models.csv, no items.csv (a researcher's new models).
``single``      A at all four budgets; items.csv, no models.csv.
``no_registry`` A, B, C at all four budgets; items.csv, no models.csv (every group unknown).
``no_8k``       A, B at 16K, 32K, 64K; items.csv and models.csv.
``one_budget``  A, B at 8K only; nothing else.
``mixed``       A at all four budgets, B at 8K and 32K; no models.csv, no items.csv.
"""
from __future__ import annotations

import io
import shutil
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from voxmem_analysis import VoxMemDataError, artifacts, load_release
from voxmem_analysis.analysis import results as R

FIX = Path(__file__).parent / "fixtures" / "results_tiny"
ALL = ("8K", "16K", "32K", "64K")
EVIDENCE = ["Speech Semantics", "Speaker Identity", "Paralinguistic Cues", "Environmental Sound", "Overall"]
SHAPES = {  # name: ({model: budgets}, items.csv, models.csv)
    "user": ({"Model-A": ("8K", "32K"), "Model-B": ("8K", "32K")}, False, False),
    "single": ({"Model-A": ALL}, True, False),
    "no_registry": ({"Model-A": ALL, "Model-B": ALL, "Model-C": ALL}, True, False),
    "no_8k": ({"Model-A": ("16K", "32K", "64K"), "Model-B": ("16K", "32K", "64K")}, True, True),
    "one_budget": ({"Model-A": ("8K",), "Model-B": ("8K",)}, False, False),
    "mixed": ({"Model-A": ALL, "Model-B": ("8K", "32K")}, False, False),
}


def partial_release(root: Path, shape: str) -> Path:
    """Write the release ``shape`` of :data:`SHAPES` under ``root`` (copies of results_tiny files)."""
    runs, items, registry = SHAPES[shape]
    root = Path(root)
    for model, budgets in runs.items():
        (root / "predictions" / model).mkdir(parents=True, exist_ok=True)
        for b in budgets:
            shutil.copy(FIX / "predictions" / model / f"predictions_{b.lower()}.jsonl", root / "predictions" / model)
    shutil.copy(FIX / "release.json", root)
    if items:
        shutil.copy(FIX / "items.csv", root)
    if registry:
        shutil.copy(FIX / "models.csv", root)
    return root


@pytest.fixture(scope="module")
def rels(tmp_path_factory):
    base = tmp_path_factory.mktemp("partial")
    return {s: load_release(partial_release(base / s, s)) for s in SHAPES}


# --------------------------------------------------------------------------- budgets
@pytest.mark.parametrize("shape, comparison, baseline, fig5", [
    ("user", "32K", "8K", "32K"),
    ("single", "64K", "8K", "32K"),
    ("no_registry", "64K", "8K", "32K"),   # B lacks a 64K item, C's 64K lines are all rejected: A alone
    ("no_8k", "64K", "16K", "32K"),
    ("one_budget", "8K", "8K", "8K"),
    ("mixed", "64K", "8K", "32K"),
])
def test_budget_resolution(rels, shape, comparison, baseline, fig5):
    rel = rels[shape]
    assert R.comparison_budget(rel) == comparison
    assert R.baseline_budget(rel) == baseline
    assert R.fig5_budget(rel) == fig5
    assert R.comparison_budget(rel, "16k") == "16K"  # an explicit budget is only normalised


def test_describe_budgets(rels):
    text = R.describe_budgets(rels["user"])
    assert "Budgets run: 8K (2 models), 32K (2 models); not run: 16K, 64K" in text
    assert "Table 15, Table 16, Figure 8 at 32K (no model was run at 64K; the longest budget run)" in text
    assert "Figure 5 at 32K (the paper's)" in text
    assert "at 64K (the paper's)" in R.describe_budgets(rels["single"])
    assert "Figure 5 at 8K (no model was run at 32K" in R.describe_budgets(rels["one_budget"])


def test_fig5_budget_prefers_most_models(tmp_path):
    root = tmp_path / "r"
    for m, bs in {"Model-A": ("8K", "64K"), "Model-B": ("8K",)}.items():
        (root / "predictions" / m).mkdir(parents=True)
        for b in bs:
            shutil.copy(FIX / "predictions" / m / f"predictions_{b.lower()}.jsonl", root / "predictions" / m)
    rel = load_release(root)
    assert R.fig5_budget(rel) == "8K"           # two models at 8K, one at 64K
    assert R.comparison_budget(rel) == "64K"


# --------------------------------------------------------------------------- user shape: 2 models x 8K, 32K
def test_user_accuracies(rels):
    acc = R.accuracy(rels["user"], [])
    got = {(r.model, r.budget): (r.n, r.n_correct) for r in acc.itertuples()}
    # A loses q3 (rejected at 32K); B's failed q2 at 32K stays, wrong
    assert got == {("Model-A", "8K"): (5, 3), ("Model-A", "32K"): (5, 3),
                   ("Model-B", "8K"): (6, 3), ("Model-B", "32K"): (6, 3)}


def test_table15_at_resolved_budget(rels):
    rel = rels["user"]
    with pytest.raises(VoxMemDataError, match="no model was run at 64K") as exc:
        R.table15(rel, budget="64K")
    assert "budgets run in this release: 8K, 32K" in str(exc.value)
    assert isinstance(exc.value, R.MissingDataError)
    t = R.table15(rel)                                 # the default: 64K absent, so the longest budget run
    pd.testing.assert_frame_equal(t, R.table15(rel, budget="32K"))
    assert list(t.index) == ["Model-A", "Model-B", "Mean all (2)", "n"]  # no proprietary/open-weight rows
    assert list(t.columns) == EVIDENCE
    np.testing.assert_allclose(t.loc["Model-A"], [100, 0, 100, 0, 60])    # q1 q5 | q2 | q6 | q4
    np.testing.assert_allclose(t.loc["Model-B"], [50, 0, 50, 100, 50])    # q1 q5 | q2 (failed) | q3 q6 | q4
    np.testing.assert_allclose(t.loc["Mean all (2)"], [75, 0, 75, 50, 55])
    np.testing.assert_allclose(t.loc["n"], [2, 1, 2, 1, 6])


def test_table16_two_models(rels):
    t = R.table16(rels["user"], budget="32K")
    assert list(t.index[:2]) == ["Model-B", "Model-A"]  # answerable 50 > 33.3
    np.testing.assert_allclose(t.loc["Model-B", ["Answerable", "AR"]], [50, 50])
    np.testing.assert_allclose(t.loc["Model-A", ["Answerable", "AR"]], [100 / 3, 100])
    assert np.isnan(t.loc["All", "Spearman rho"])  # two points always give +-1: not reported
    assert t.loc["Always abstain", "Overall"] == pytest.approx(100 / 3)
    s = R.answerable_refusal_summary(rels["user"], budget="32K")
    assert s["n_models"].iloc[0] == 2 and np.isnan(s["rho"].iloc[0])


def test_table17_without_items(rels):
    rel = rels["user"]
    reason = R.missing_source_operations(rel)
    assert "source operation of every AR item is unknown" in reason and "items.csv" in reason
    t = R.table17(rel)
    assert list(t.columns) == ["Models", *EVIDENCE[:4]]  # no IE / MSR / TET
    assert list(t.index) == ["8K", "32K", "AR items"]
    assert t.loc["8K", "Speech Semantics"] == pytest.approx(50.0)       # q5: A 1, B 0
    assert t.loc["8K", "Paralinguistic Cues"] == pytest.approx(0.0)     # q6: A 0, B 0
    assert t.loc["32K", "Paralinguistic Cues"] == pytest.approx(100.0)  # q6: A 1, B 1
    assert t.loc["AR items", "Speech Semantics"] == 1
    forced = R.table17(rel, source_operations=True)
    assert forced[["IE", "MSR", "TET"]].iloc[:2].isna().all().all()


def test_table17_with_items_keeps_source_operations(rels):
    rel = rels["single"]
    assert R.missing_source_operations(rel) is None
    t = R.table17(rel)
    assert list(t.columns)[-3:] == ["IE", "MSR", "TET"]
    assert t.loc["8K", "MSR"] == pytest.approx(100.0)   # q5 (source q1, MSR): A right
    assert t.loc["8K", "TET"] == pytest.approx(0.0)     # q6 (source q3, TET): A wrong
    assert t.loc["64K", "MSR"] == pytest.approx(0.0)    # ungraded counts as wrong


def test_fig8_at_resolved_budget(rels):
    rel = rels["user"]
    with pytest.raises(VoxMemDataError, match="no model was run at 64K"):
        R.fig8(rel, budget="64K")
    pd.testing.assert_frame_equal(R.fig8(rel), R.fig8(rel, budget="32K"))
    assert R.shared_set(rel, None) == (["Model-A", "Model-B"], ["8K", "32K"])
    w = R.fig8(rel, budget="32K")
    assert sorted({i.split("|")[0] for i in w.index}) == ["32K", "8K"]
    assert "8K|TET" not in w.index                        # q3 is rejected for A at 32K
    assert w.loc["8K|MSR", "Speech Semantics"] == 100.0   # q1: A 1, B 1
    assert w.loc["8K|IE", "Speaker Identity"] == 50.0     # q2: A 1, B 0
    assert w.loc["32K|IE", "Speaker Identity"] == 0.0     # q2: A 0, B failed
    assert w.loc["32K|AR", "Paralinguistic Cues"] == 100.0
    assert w.loc["8K|AR", "Paralinguistic Cues n"] == 1


def test_fig8_mixed_budgets_shares_what_all_ran(rels):
    rel = rels["mixed"]   # only A was run at 64K; with 32K both models share 8K and 32K
    assert R.shared_set(rel, "64K") == (["Model-A"], list(ALL))
    assert R.shared_set(rel, "32K") == (["Model-A", "Model-B"], ["8K", "32K"])
    assert R.describe_shared_set(["Model-A"], list(ALL), "64K") == \
        "1 model run at 64K; questions judged at 8K, 16K, 32K, 64K by it"


def test_fig4_and_fig5_on_subsets(rels):
    f = R.fig4(rels["user"])
    assert [i for i in f.index if i.startswith("8K|")] == ["8K|Model-A", "8K|Model-B", "8K|Mean all (2)", "8K|n"]
    assert not any(i.startswith(("16K|", "64K|")) for i in f.index)
    assert f.loc["8K|Mean all (2)", "Overall"] == pytest.approx(55.0)
    with pytest.raises(VoxMemDataError, match="no model was run at 64K"):
        R.fig4(rels["user"], budgets=["64K"])
    w = R.fig5(rels["one_budget"], budget=None)                   # 8K: no 32K run
    assert w.loc["MSR", "Speech Semantics"] == 100.0              # q1: A 1, B 1
    with pytest.raises(VoxMemDataError, match="no model was run at 32K"):
        R.fig5(rels["one_budget"], budget="32K")
    pd.testing.assert_frame_equal(R.fig5(rels["one_budget"]), w)


# --------------------------------------------------------------------------- unknown groups
def test_group_means_without_registry(rels):
    rel = rels["no_registry"]
    assert set(rel.groups()) == {"unknown"}
    g = R.groups_table(rel)
    assert not any(("Proprietary" in i) or ("Open-weight" in i) or ("unknown" in i) for i in g.index)
    # Without models.csv the 64K set is inferred as the models with a *complete* 64K run: B lacks
    # q4 at 64K and C's 64K calls were all rejected, so only A is in it (and B, C keep every 8K item:
    # B 3 of 6 = 50%, not 2 of 5 as it would if its partial 64K run paired its budgets).
    assert rel.models_in_64k_set() == ["Model-A"]
    assert {p.code for p in rel.warnings()} >= {"incomplete_64k_run"}
    assert g.loc["8K|All", "Overall"] == pytest.approx((60 + 50 + 400 / 6) / 3)  # A, B, C
    assert g.loc["8K|All", "Models"] == 3
    assert g.loc["64K|All", "Models"] == 1
    t = R.table15(rel)
    assert list(t.index) == ["Model-A", "Mean all (1)", "n"]
    np.testing.assert_allclose(t.loc["Mean all (1)"], t.loc["Model-A"])
    panels = R.evidence_panels(rel)
    assert set(panels.loc[panels["kind"] == "mean", "row"]) == {"Mean all"}


def test_group_means_infers_text_keys():
    acc = pd.DataFrame({"model": ["a", "b", "a", "b"], "budget": ["8K", "8K", "32K", "32K"],
                        "accuracy": [10.0, 30.0, 50.0, 70.0]})
    gm = R.group_means(acc)
    assert list(gm["budget"]) == ["8K", "32K"]
    np.testing.assert_allclose(gm["accuracy"], [20.0, 60.0])


def test_known_groups_still_split(rels):
    t = R.table15(rels["no_8k"])
    assert list(t.index) == ["Model-A", "Model-B", "Mean proprietary (1)", "Mean open-weight (1)", "Mean all (2)", "n"]
    np.testing.assert_allclose(t.loc["Model-A"], [50, 0, 100, 0, 40])


# --------------------------------------------------------------------------- figures
def _panels(n_models: int, budgets) -> pd.DataFrame:
    rows = []
    for b in budgets:
        for i in range(n_models):
            for e in ("speech_semantics", "speaker_information", "paralinguistic_information",
                      "environmental_sound", "overall"):
                rows.append({"budget": b, "row": f"M{i:02d}", "kind": "model", "group": "unknown", "evidence_type": e,
                             "accuracy": float((7 * i + len(e)) % 70), "n": 10, "n_models": 1})
        for e in ("speech_semantics", "overall"):
            rows.append({"budget": b, "row": "Mean all", "kind": "mean", "group": "all", "evidence_type": e,
                         "accuracy": 30.0, "n": np.nan, "n_models": n_models})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("n_models, budgets", [(1, ["8K"]), (2, ["8K", "32K"]), (16, ["16K", "32K", "64K"])])
def test_evidence_heatmaps_any_size(n_models, budgets):
    import matplotlib.pyplot as plt

    from voxmem_analysis.plots import results as P

    fig = P.evidence_heatmaps(_panels(n_models, budgets))
    heat = [a for a in fig.axes if a.get_label() != "<colorbar>"]
    assert [a.get_title() for a in heat] == [f"{b}  ({n_models} model{'s' if n_models > 1 else ''})" for b in budgets]
    assert len(heat[0].get_yticklabels()) == n_models + 1
    plt.close(fig)


def test_figures_of_partial_release(rels):
    import matplotlib.pyplot as plt

    from voxmem_analysis.plots import results as P

    rel = rels["user"]
    fig = P.evidence_heatmaps(R.evidence_panels(rel))
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == ["Model-A", "Model-B", "Mean all"]
    t16 = R.answerable_vs_refusal(rel, budget="32K")
    fig2 = P.answerable_refusal_scatter(t16, summary=R.answerable_refusal_summary(rel, budget="32K", table=t16))
    assert fig2.axes[0].get_title().startswith("32K: no correlation shown (2 models; fewer than 5)")
    ms, shared = R.shared_set(rel, "32K")
    oe = R.operation_evidence(rel, budgets=shared, models=ms, pairing="shared", shared_budgets=shared)
    fig3 = P.operation_heatmaps(oe, title=R.describe_shared_set(ms, shared, "32K"))
    assert fig3._suptitle.get_text() == "2 models run at 32K; questions judged at 8K, 32K by every one"
    for f in (fig, fig2, fig3):
        plt.close(f)


# --------------------------------------------------------------------------- skipping and the CLI
def test_section_prints_reason_and_swallows_only_data_errors(rels):
    buf = io.StringIO()
    with R.section("Table 15", stream=buf):
        R.table15(rels["user"], budget="64K")
    assert buf.getvalue() == "Table 15: skipped \u2014 no model was run at 64K\n"
    with pytest.raises(ValueError, match="unknown budget"):
        with R.section("x", stream=buf):
            R.table15(rels["user"], budget="128K")


@pytest.mark.parametrize("name, message", [("table15", "no model was run at 64K"), ("table16", "no model was run at 64K"),
                                           ("fig8", "no model was run at 64K")])
def test_cli_table_gives_a_clean_message(rels, name, message):
    from voxmem_analysis.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        assert main(["table", name, "--data", str(rels["user"].path)]) == 0   # the default: from the data
        code = main(["table", name, "--data", str(rels["user"].path), "--budget", "64K"])
    assert f"{name},Model-A," in out.getvalue() or f"{name},32K|" in out.getvalue()
    out.truncate(0)
    out.seek(0)
    assert code == 1
    assert message in err.getvalue() and "8K, 32K" in err.getvalue()
    assert "Traceback" not in err.getvalue() and out.getvalue() == ""


@pytest.mark.parametrize("name", ["d5", "table18", "fig6"])
def test_cli_scaling_on_two_budgets_compares_them(rels, name):
    """A release run at exactly two budgets (8K, 32K) leaves no choice: the CLI compares them, and says so."""
    from voxmem_analysis.cli import main

    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = main(["table", name, "--data", str(rels["user"].path), "--n-boot", "50"])
    assert code == 0, err.getvalue()
    assert "# --baseline 8K (the shorter of the two budgets run)" in err.getvalue()
    assert "# --comparison 32K (the longer of the two budgets run)" in err.getvalue()
    assert out.getvalue().startswith("artifact,row,column,value\n")


def test_reproduction_records_the_reason(rels):
    from voxmem_analysis.reproduce.scoreboard import compute_long

    long, errors = compute_long(rels["user"], ["table15", "fig4", "table17"], n_boot=20)
    assert not errors and set(long["artifact"]) == {"table15", "fig4", "table17"}   # table15 at 32K, from the data
    long, errors = compute_long(rels["one_budget"], ["d5", "fig4"], n_boot=20)
    assert errors["d5"].startswith("MissingDataError: scaling needs two budgets")
    assert set(long["artifact"]) == {"fig4"}
    assert artifacts.to_long(R.table17(rels["user"]), "table17")["column"].isin(["IE", "MSR", "TET"]).sum() == 0
