"""The explorer widget's synthetic label, the dot plot's legend beside the
data, report captions that follow the budgets used, Table 15 in the paper's order, Monte-Carlo
standard errors and BCa in slice/compare, the judges command's note on a dropped judge file."""
from __future__ import annotations

import io
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from voxmem_analysis.cli import main  # noqa: E402
from voxmem_analysis.output import SYNTHETIC_LABEL  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SYNTHETIC = ROOT / "data" / "synthetic"
EXAMPLE = ROOT / "data" / "examples" / "my_eval"


@pytest.fixture(scope="module")
def synthetic():
    from voxmem_analysis.io import load_release

    return load_release(SYNTHETIC)


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# ----------------------------------------------------------------------------- 1. widget label
def test_the_explorer_widget_labels_a_synthetic_figure(synthetic, monkeypatch):
    pytest.importorskip("ipywidgets")
    import IPython.display

    from voxmem_analysis.analysis import explore as E
    from voxmem_analysis.plots.slices import slice_dot_plot

    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, *a, **k: shown.append(obj))
    E.widget(synthetic, draw=slice_dot_plot, by="evidence_type", budget="32K", interval="wilson")
    figs = [o for o in shown if hasattr(o, "savefig")]
    assert len(figs) == 1
    fig = figs[0]
    fig.canvas.draw()
    texts = [t for t in fig.texts if t.get_visible()]
    assert [t.get_text() for t in texts] == [SYNTHETIC_LABEL]
    # drawn inside the figure (not clipped off): its box lies within the figure's
    box, whole = texts[0].get_window_extent(), fig.bbox
    assert whole.x0 <= box.x0 and box.x1 <= whole.x1 + 1 and whole.y0 <= box.y0 and box.y1 <= whole.y1


def test_the_explorer_widget_leaves_real_data_unlabelled(tiny_release, monkeypatch):
    pytest.importorskip("ipywidgets")
    import IPython.display

    from voxmem_analysis.analysis import explore as E
    from voxmem_analysis.io import load_release
    from voxmem_analysis.plots.slices import slice_dot_plot

    release = load_release(tiny_release)
    assert not release.synthetic
    shown = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, *a, **k: shown.append(obj))
    E.widget(release, draw=slice_dot_plot, by="model", budget="8K")
    (fig,) = [o for o in shown if hasattr(o, "savefig")]
    assert not any(SYNTHETIC_LABEL in t.get_text() for t in fig.texts)


# ----------------------------------------------------------------------------- 2. legend beside the data
def _data_points(ax) -> np.ndarray:
    """Display coordinates of every dot and every interval end drawn on ``ax``."""
    pts = []
    for line in ax.lines:
        xy = np.column_stack([line.get_xdata(orig=False), line.get_ydata(orig=False)]).astype(float)
        if line.get_linestyle() == "--":   # the pooled line spans the axes; it is not data
            continue
        pts.append(ax.transData.transform(xy))
    for coll in ax.collections:             # interval bars
        for seg in coll.get_segments():
            pts.append(ax.transData.transform(np.asarray(seg, float)))
    return np.vstack(pts)


@pytest.mark.parametrize("by", ["subtype,evidence_type", "evidence_type"])
def test_the_dot_plot_legend_covers_no_data(synthetic, by):
    from voxmem_analysis.analysis import explore as E
    from voxmem_analysis.plots.slices import slice_dot_plot

    table = E.explore_slices(synthetic, by, budget="32K", models="Gemini-3.1-Pro", interval="wilson")
    ax = slice_dot_plot(table, by, overall=E.pooled_accuracy(synthetic, budget="32K", models="Gemini-3.1-Pro"))
    fig = ax.figure
    fig.canvas.draw()
    leg = ax.get_legend().get_window_extent()
    pts = _data_points(ax)
    assert len(pts) >= 2 * len(table[table["level"] == "slice"])
    inside = (pts[:, 0] >= leg.x0) & (pts[:, 0] <= leg.x1) & (pts[:, 1] >= leg.y0) & (pts[:, 1] <= leg.y1)
    assert not inside.any()
    assert not leg.overlaps(ax.get_window_extent())   # beside the axes, not on them
    # and every caller gets it: the CLI's --plot keeps the function's legend (its own markers)
    import matplotlib.pyplot as plt

    plt.close(fig)


def test_slice_plot_from_the_cli_has_the_legend_beside_the_axes(tmp_path, capsys, monkeypatch):
    import matplotlib.figure

    saved = []
    orig = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda self, *a, **k: (saved.append(self), orig(self, *a, **k))[1])
    code, _, err = _run(capsys, "slice", "--data", SYNTHETIC, "--by", "subtype,evidence_type", "--model",
                        "Gemini-3.1-Pro", "--budget", "32K", "--plot", tmp_path / "p.png")
    assert code == 0, err
    (fig,) = saved
    ax = fig.axes[0]
    leg = ax.get_legend()
    assert leg.get_title().get_text() == "Evidence type"
    assert not leg.get_window_extent().overlaps(ax.get_window_extent())


# ----------------------------------------------------------------------------- 6. judges: dropped file
def _lme(tmp_path):
    qids = ["a1", "a2", "a3", "a4"]
    (tmp_path / "questions.json").write_text(json.dumps(
        [{"question_id": q, "question_type": "multi-session" if i < 2 else "temporal-reasoning"}
         for i, q in enumerate(qids)]))

    def verdicts(name, labels):
        (tmp_path / name).write_text("".join(json.dumps({"question_id": q, "hypothesis": "h", "autoeval_label":
                                                         {"model": "x", "label": lab}}) + "\n"
                                             for q, lab in zip(qids, labels)))
        return name

    rows = [(verdicts("s_j1.jsonl", [True, True, False, False]), "S", "32k", "judge-1"),
            (verdicts("s_j2.jsonl", [True, False, False, False]), "S", "32k", "judge-2"),
            ("s_j3_missing.jsonl", "S", "32k", "judge-3"),
            (verdicts("t_j1.jsonl", [True, True, True, False]), "T", "32k", "judge-1"),
            ("t_j2_missing.jsonl", "T", "32k", "judge-2")]
    (tmp_path / "manifest.csv").write_text("path,system,budget,judge\n" + "".join(",".join(r) + "\n" for r in rows))
    return tmp_path / "manifest.csv", tmp_path / "questions.json"


def test_judges_names_a_dropped_judge_file_under_lenient(tmp_path, capsys):
    man, q = _lme(tmp_path)
    code, _, err = _run(capsys, "judges", "--manifest", man, "--questions", q)
    assert code == 1 and "s_j3_missing.jsonl" in err                  # strict: refused
    code, out, err = _run(capsys, "judges", "--manifest", man, "--questions", q, "--lenient")
    assert code == 0, err
    assert ("# the verdicts of system 'S' at budget 32k by judge 'judge-3' (manifest line 4) were left out: "
            "file does not exist; judge agreement there compares the judges left ('judge-1', 'judge-2')") in err
    assert ("# the verdicts of system 'T' at budget 32k by judge 'judge-2' (manifest line 6) were left out: "
            "file does not exist; only judge 'judge-1' is left there: that system and budget are in no "
            "agreement table") in err
    table = pd.read_csv(io.StringIO(out))
    assert set(table["system"]) == {"S"}                              # notes on stderr only
    # the same words as slice/compare print for a dropped file
    code, _, err2 = _run(capsys, "slice", "--manifest", man, "--questions", q, "--by", "system", "--lenient")
    assert code == 0
    assert "# the verdicts of system 'T' at budget 32k by judge 'judge-2' (manifest line 6) were left out: " in err2


# ----------------------------------------------------------------------------- 3. captions follow the budgets
def test_artifact_caption_names_the_budget_used():
    from voxmem_analysis import artifacts

    assert artifacts.caption("fig8", budget="32K") == (
        "Figure 8: operation x evidence cells per budget, models run at 32K on the shared item set")
    assert artifacts.caption("fig8", budget="64K") == artifacts.get("fig8").title     # the paper's own words
    assert artifacts.caption("fig5", budget="16K").startswith("Figure 5: mean accuracy (%) of the operation x "
                                                              "evidence cells at 16K")
    assert artifacts.caption("table18", comparison="32K").startswith("Table 18: paired change 8K to 32K")
    assert artifacts.caption("fig5", budget="32K", models="A,B").endswith("at 32K, models A, B")
    assert artifacts.caption("fig5", budget="32K", models=None).endswith("at 32K, all models")


def test_report_caption_of_figure_8_on_a_32k_only_run(tmp_path):
    """A 32K-only run (the example folder): the notebook's caption, stored in the PNG, is the report's."""
    import matplotlib.pyplot as plt

    from voxmem_analysis import artifacts
    from voxmem_analysis.analysis import results as R
    from voxmem_analysis.io import load_release
    from voxmem_analysis.output import figure_caption, save_figure
    from voxmem_analysis.reproduce.report import captions

    release = load_release(EXAMPLE)
    b_cmp = R.comparison_budget(release, None)
    assert b_cmp == "32K"
    ms, shared = R.shared_set(release, b_cmp, None)
    cap = f"{artifacts.caption('fig8', budget=b_cmp)} ({R.describe_shared_set(ms, shared, b_cmp)})"   # as notebook 10
    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    png = save_figure(fig, tmp_path, "fig8_operation_evidence_shared", release=release, caption=cap)[0]
    save_figure(plt.subplots()[0], tmp_path, "fig5_operation_evidence_32k", release=release,
                caption=artifacts.caption("fig5", budget="32K"))
    assert figure_caption(png) == cap
    caps = captions(tmp_path)
    assert caps["figures/fig8_operation_evidence_shared.png"] == (
        "Figure 8: operation x evidence cells per budget, models run at 32K on the shared item set "
        "(1 model run at 32K; questions judged at 8K, 32K by it)")
    assert "64K" not in caps["figures/fig8_operation_evidence_shared.png"]
    assert caps["figures/fig5_operation_evidence_32k.png"].startswith("Figure 5: ")
    # a figure saved without a caption keeps the registry's title (the paper's budgets)
    save_figure(plt.subplots()[0], tmp_path, "fig7_error_attribution", release=release)
    assert captions(tmp_path)["figures/fig7_error_attribution.png"] == artifacts.get("fig7").title


def test_a_caption_gives_the_same_bytes_twice(tmp_path):
    import matplotlib.pyplot as plt

    from voxmem_analysis.output import save_figure

    paths = []
    for k in range(2):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        paths.append(save_figure(fig, tmp_path / str(k), "f", caption="Figure 8: \u00d7 \u2014 32K")[:2])
    assert [p.read_bytes() for p in paths[0]] == [p.read_bytes() for p in paths[1]]


def test_notebook_10_passes_the_captions_it_uses():
    src = (ROOT / "notebooks" / "10_main_results.py").read_text()
    assert 'caption=artifacts.caption("fig5", budget=b_fig5, models=models)' in src
    assert "caption=caption8" in src and "artifacts.caption('fig8', budget=b_cmp)" in src


# ----------------------------------------------------------------------------- 4. Table 15 in the paper's order
def _published_table15_rows():
    from voxmem_analysis.reproduce.published import published

    pub = published()
    return list(dict.fromkeys(pub.loc[pub["artifact"] == "table15", "row"]))


def test_table15_rows_in_the_papers_order(synthetic, tmp_path):
    from voxmem_analysis.analysis.results import TABLE15_PAPER_ORDER
    from voxmem_analysis.artifacts import compute
    from voxmem_analysis.output import save_table

    rows = _published_table15_rows()
    assert list(TABLE15_PAPER_ORDER) == rows[:10]            # the constant is published.csv's row order
    t = compute("table15", synthetic)
    assert list(t.index) == rows
    save_table(t, tmp_path, "table15", formats=("csv",))
    csv = pd.read_csv(tmp_path / "tables" / "table15.csv")
    assert csv["Model"].tolist() == rows
    # not the release's order (models.csv `order`), which differs
    assert [m for m in synthetic.model_order() if m in TABLE15_PAPER_ORDER] != list(TABLE15_PAPER_ORDER)


def test_table15_subset_of_paper_models_keeps_the_paper_order(synthetic):
    from voxmem_analysis.artifacts import compute

    t = compute("table15", synthetic, models=["FireRedAudio-9B", "Gemini-2.5-Pro", "Ultravox-v0.6-Llama-3.1-8B"])
    assert list(t.index[:3]) == ["Ultravox-v0.6-Llama-3.1-8B", "Gemini-2.5-Pro", "FireRedAudio-9B"]


def test_table15_other_models_in_models_csv_order(synthetic):
    from voxmem_analysis.artifacts import compute
    from voxmem_analysis.io import load_release

    t = compute("table15", synthetic, budget="32K")             # 15 models: 5 are not in the paper's Table 15
    ms = [r for r in t.index if not (r.startswith("Mean ") or r == "n")]
    assert ms == synthetic.model_order()
    assert list(synthetic.models.sort_values("order")["model"]) == ms
    own = load_release(EXAMPLE)
    assert list(compute("table15", own, budget="32K").index) == ["MyModel-v1", "Mean all (1)", "n"]


# ----------------------------------------------------------------------------- 5. Monte-Carlo SE and BCa
def _one_slice(n=1500, p=0.3, seed=7):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < p
    return y, pd.DataFrame({"g": "a", "question_id": np.arange(n), "correct": y, "scored": True})


def test_slice_mc_se_is_the_sd_of_the_bootstrap_endpoints():
    from voxmem_analysis.analysis.verdicts import BootstrapSettings, slice_accuracy

    y, df = _one_slice()
    B = 1000
    reported = []
    for seed in range(20):
        t = slice_accuracy(df, "g", interval="bootstrap", item="question_id", 
                           type_col=None, settings=BootstrapSettings(n_boot=B, seed=seed, mc_se=True))
        reported.append(t.loc[0, ["accuracy_ci_low_mc_se", "accuracy_ci_high_mc_se"]].to_numpy(float))
    # independently: the percentile endpoints of 150 separate bootstrap runs of the same size, their SD
    ends = []
    for k in range(150):
        idx = np.random.default_rng(1_000 + k).integers(0, len(y), size=(B, len(y)))
        ends.append(np.percentile(100 * y[idx].mean(axis=1), [2.5, 97.5]))
    sd = np.std(np.array(ends), axis=0, ddof=1)
    assert np.mean(reported, axis=0) == pytest.approx(sd, rel=0.25)
    assert sd[0] > 0.05                                       # a real Monte-Carlo error, not a lattice artefact


def test_slice_mc_se_columns_only_when_asked_and_nan_for_wilson():
    from voxmem_analysis.analysis.verdicts import BootstrapSettings, slice_accuracy

    _, df = _one_slice(n=200)
    plain = slice_accuracy(df, "g", item="question_id", type_col=None, interval="wilson")
    assert "accuracy_ci_low_mc_se" not in plain.columns
    w = slice_accuracy(df, "g", item="question_id", type_col=None, interval="wilson", settings=BootstrapSettings(mc_se=True))
    assert w["accuracy_ci_low_mc_se"].isna().all() and w["accuracy_ci_high_mc_se"].isna().all()


def test_slice_bca_matches_the_stats_layer():
    """BCa endpoints of one slice equal stats.paired_bootstrap_matrix's BCa of the same 0/1 column
    (the same draws: one item per row, the same seed) -- and differ from the percentile ones."""
    from voxmem_analysis.analysis.verdicts import BootstrapSettings, slice_accuracy
    from voxmem_analysis.stats import mean_level, paired_bootstrap_matrix

    y, df = _one_slice(n=120, p=0.1, seed=3)
    t = slice_accuracy(df, "g", interval="bootstrap", item="question_id", 
                       type_col=None, settings=BootstrapSettings(n_boot=4000, seed=5, mc_se=True, interval="bca"))
    ref = paired_bootstrap_matrix(y[:, None].astype(float), y[:, None].astype(float), n_boot=4000, seed=5,
                                  statistics=[mean_level("baseline")], interval="bca")
    row = ref.iloc[0]
    assert t.loc[0, "interval"] == "bootstrap (bca)"
    assert t.loc[0, "accuracy_ci_low"] == pytest.approx(row["ci_low"], abs=1e-9)
    assert t.loc[0, "accuracy_ci_high"] == pytest.approx(row["ci_high"], abs=1e-9)
    assert t.loc[0, "accuracy_ci_low_mc_se"] == pytest.approx(row["ci_low_mc_se"], abs=1e-9)
    pct = slice_accuracy(df, "g", interval="bootstrap", item="question_id", type_col=None, settings=BootstrapSettings(n_boot=4000, seed=5))
    assert pct.loc[0, ["accuracy_ci_low", "accuracy_ci_high"]].tolist() != pytest.approx(
        t.loc[0, ["accuracy_ci_low", "accuracy_ci_high"]].tolist(), abs=1e-6)   # skewed (10%): BCa moves it


def test_compare_mc_se_and_bca_pass_through(synthetic):
    from voxmem_analysis.analysis.paired import compare_models
    from voxmem_analysis.stats import PairedSettings, paired_bootstrap_frame, STATISTICS

    ms = ["Gemini-3.1-Pro", "Gemini-2.5-Pro"]
    for interval in ("percentile", "bca"):
        t = compare_models(synthetic, ms, "64K", n_boot=2000, seed=4, interval=interval, mc_se=True)
        fr = synthetic.frame.to_pandas()
        fr = fr[fr["model"].isin(ms) & (fr["budget"].astype(str) == "64K") & fr["scored"]]
        long = fr.assign(role=np.where(fr["model"] == ms[0], "a", "b"), val=fr["correct"].fillna(False).astype(float))
        ref = paired_bootstrap_frame(long, item="item_id", series="budget", condition="role", value="val",
                                     baseline="a", comparison="b", 
                                     settings=PairedSettings(statistics={"diff": STATISTICS["drop"]}, aggregate="mean", n_boot=2000, seed=4, interval=interval)).iloc[0]
        row = t.iloc[0]
        assert row["interval"] == interval
        for ours, theirs in (("diff_ci_low", "ci_low"), ("diff_ci_high", "ci_high"),
                             ("diff_ci_low_mc_se", "ci_low_mc_se"), ("diff_ci_high_mc_se", "ci_high_mc_se")):
            assert row[ours] == pytest.approx(ref[theirs], abs=1e-9), (interval, ours)
        assert row["diff_ci_low_mc_se"] > 0


def test_cli_interval_choices_and_mc_se_columns(capsys):
    code, out, err = _run(capsys, "compare", "--data", SYNTHETIC, "--models", "Gemini-3.1-Pro,Gemini-2.5-Pro",
                          "--budget", "64K", "--n-boot", "500", "--interval", "bca")
    assert code == 0, err
    t = pd.read_csv(io.StringIO(out))
    assert t.loc[0, "interval"] == "bca" and t.loc[0, "diff_ci_low_mc_se"] > 0
    code, out, err = _run(capsys, "slice", "--data", EXAMPLE, "--by", "evidence_type", "--budget", "32K",
                          "--interval", "bootstrap", "--bootstrap-interval", "bca", "--n-boot", "500")
    assert code == 0, err
    t = pd.read_csv(io.StringIO(out))
    assert set(t["interval"]) <= {"bootstrap (bca)", "bootstrap (bca; strata: evidence_type)"}
    assert (t["accuracy_ci_low_mc_se"] >= 0).all()
    with pytest.raises(SystemExit):
        main(["compare", "--data", str(SYNTHETIC), "--models", "A,B", "--budget", "64K", "--interval", "bootstrap"])
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["table", "table18", "--data", str(SYNTHETIC), "--interval", "nope"])
    assert "argument --interval: invalid choice: 'nope' (choose from 'percentile', 'bca')" in capsys.readouterr().err


def test_facets_put_the_first_row_on_top_in_every_panel(synthetic):
    """Panels share their y axis: each slice_dot_plot call must not flip it back (two panels did)."""
    import matplotlib.pyplot as plt

    from voxmem_analysis.analysis import explore as E
    from voxmem_analysis.plots.slices import slice_facets

    parts = [E.explore_slices(synthetic, "evidence_type,operation", budget=b, models="Gemini-3.1-Pro",
                              interval="wilson").assign(budget=b) for b in ("8K", "32K")]
    g = slice_facets(pd.concat(parts, ignore_index=True), "evidence_type,operation")
    first = list(g.axes_dict.values())[0]
    assert first.get_yticklabels()[0].get_text() == "Speech Semantics"
    for ax in g.axes_dict.values():
        assert ax.yaxis_inverted()
        # row 0 (Speech Semantics, the first evidence type) is drawn above the last row
        assert ax.transData.transform((0, 0))[1] > ax.transData.transform((0, 3))[1]
        leg = g.legend.get_window_extent()
        assert not leg.overlaps(ax.get_window_extent())
    plt.close(g.figure)
