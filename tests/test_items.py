"""Item drill-down (`items`), VoxMem paired comparison (`compare --data`) and `slice --by subtype` on a
model and budget -- each checked against counts taken directly from the verdict frame (and SciPy)."""
from __future__ import annotations

import io

import pandas as pd
import polars as pl
import pytest
from scipy.stats import binomtest

from tests.conftest import SYNTHETIC, harness_line, write_jsonl
from voxmem_analysis.analysis.items import gold_answer, item_table
from voxmem_analysis.analysis.paired import compare_models
from voxmem_analysis.cli import main
from voxmem_analysis.io import load_release


@pytest.fixture(scope="module")
def synthetic():
    return load_release(SYNTHETIC)


def _cli_csv(capsys, argv) -> pd.DataFrame:
    assert main(argv) == 0
    cap = capsys.readouterr()
    df = pd.read_csv(io.StringIO(cap.out))
    df.attrs["stderr"] = cap.err
    return df


# ----------------------------------------------------------------------------- items
def test_items_wrong_lists_exactly_the_incorrect_scored_items(synthetic, capsys):
    fr = synthetic.frame.filter((pl.col("model") == "Gemini-3.1-Pro") & (pl.col("budget").cast(pl.Utf8) == "32K"))
    expected = set(fr.filter(pl.col("scored") & ~pl.col("correct").fill_null(False))["item_id"].to_list())
    got = _cli_csv(capsys, ["items", "--data", str(SYNTHETIC), "--model", "Gemini-3.1-Pro", "--budget", "32K",
                            "--wrong"])
    assert set(got["item_id"]) == expected and len(got) == len(expected)
    assert not got["correct"].any() and got["scored"].all()
    assert list(got.columns[:6]) == ["item_id", "subtype", "evidence_type", "operation", "is_ar", "gold"]
    # the complement: every item listed without --wrong, correct ones among them
    all_items = _cli_csv(capsys, ["items", "--data", str(SYNTHETIC), "--model", "Gemini-3.1-Pro", "--budget", "32k"])
    assert len(all_items) == fr.height == 799
    assert int(all_items["correct"].sum()) == int(fr["correct"].sum())


def test_items_rules_on_a_tiny_release(tmp_path):
    """Failed generation and ungraded reply are wrong; a provider rejection is not listed as wrong."""
    rel = tmp_path / "rel"
    write_jsonl(rel / "predictions" / "a.jsonl", [
        harness_line(item_id="q_00001_8k", question_id="q_00001", response="paused", verdict=True),
        harness_line(item_id="q_00002_8k", question_id="q_00002", response=None, verdict=None, error="timeout"),
        harness_line(item_id="q_00003_8k", question_id="q_00003", response="x", verdict=None),
        harness_line(item_id="q_00004_8k", question_id="q_00004", response=None, verdict=None,
                     error="provider rejected: request blocked before inference (HTTP 400 invalid_request)"),
        harness_line(item_id="q_00005_8k", question_id="q_00005", response="drawer", verdict=False),
    ])
    release = load_release(rel)
    wrong = item_table(release, model="Model-A", budget="8K", wrong=True)
    assert wrong["item_id"].tolist() == ["q_00002_8k", "q_00003_8k", "q_00005_8k"]
    assert wrong["status"].tolist() == ["failed", "ungraded", "graded"]
    assert item_table(release, model="Model-A", budget="8K")["gold"].tolist() == ["paused"] * 5
    assert len(item_table(release, model="Model-A", budget="8K", where="status = 'graded'")) == 2


def test_items_by_and_errors(synthetic, capsys, tmp_path):
    t = item_table(synthetic, model="Gemini-2.5-Pro", budget="64K", wrong=True, by=["subtype"])
    assert t.columns[0] == "subtype" and t["subtype"].tolist() == sorted(t["subtype"].tolist(), key=str)
    out = tmp_path / "wrong.md"
    assert main(["items", "--data", str(SYNTHETIC), "--model", "Gemini-2.5-Pro", "--budget", "64K", "--wrong",
                 "--format", "md", "--out", str(out)]) == 0
    assert out.read_text().count("\n| q_") == len(item_table(synthetic, model="Gemini-2.5-Pro", budget="64K", wrong=True))
    assert main(["items", "--data", str(SYNTHETIC), "--model", "Nope", "--budget", "8K"]) == 2
    assert "unknown model" in capsys.readouterr().err
    assert main(["items", "--data", str(SYNTHETIC), "--model", "Gemini-2.5-Pro", "--budget", "12K"]) == 2


def test_gold_answer():
    assert gold_answer('{"answer": "pasta", "answer_type": "short_text"}') == "pasta"
    assert gold_answer('{"answer": ["a", "b"]}') == '["a", "b"]'
    assert gold_answer('"insufficient evidence"') == "insufficient evidence"
    assert gold_answer(None) is None


# ----------------------------------------------------------------------------- compare --data
def test_compare_gives_the_exact_mcnemar_p_of_the_discordant_pairs(synthetic, capsys):
    a, b = "Gemini-3.1-Pro", "Gemini-2.5-Pro"
    fr = synthetic.frame.filter(pl.col("budget").cast(pl.Utf8) == "64K").filter(pl.col("scored"))
    wide = (fr.filter(pl.col("model") == a).select("item_id", pl.col("correct").alias("a"))
            .join(fr.filter(pl.col("model") == b).select("item_id", pl.col("correct").alias("b")), on="item_id"))
    n10 = int((wide["a"] & ~wide["b"]).sum())
    n01 = int((~wide["a"] & wide["b"]).sum())
    p_ref = binomtest(min(n10, n01), n10 + n01, 0.5).pvalue
    got = _cli_csv(capsys, ["compare", "--data", str(SYNTHETIC), "--models", f"{a},{b}", "--budget", "64K",
                            "--n-boot", "300"])
    assert len(got) == 1
    row = got.iloc[0]
    assert (row["model_a"], row["model_b"], row["n_common"]) == (a, b, wide.height)
    assert (row["a_right_b_wrong"], row["a_wrong_b_right"]) == (n10, n01) == (138, 32)
    assert row["p_mcnemar"] == pytest.approx(p_ref, rel=1e-6)
    assert row["diff"] == pytest.approx(100 * (wide["a"].mean() - wide["b"].mean()), abs=1e-4)
    assert row["diff_ci_low"] < row["diff"] < row["diff_ci_high"]


def test_compare_three_models_holm_and_seed(synthetic):
    ms = ["Gemini-3.1-Pro", "Gemini-2.5-Pro", "Gemini-3.8-Flash"]
    t = compare_models(synthetic, ms, "64K", n_boot=200, seed=5)
    assert [(r.model_a, r.model_b) for r in t.itertuples()] == [(ms[0], ms[1]), (ms[0], ms[2]), (ms[1], ms[2])]
    p = t["p_mcnemar"].to_numpy()
    order = p.argsort()
    holm = [min(1.0, max((3 - k) * p[order[j]] for j in range(k + 1))) for k in range(3)]
    assert t["p_holm"].to_numpy()[order] == pytest.approx(holm)
    again = compare_models(synthetic, ms, "64K", n_boot=200, seed=5)
    pd.testing.assert_frame_equal(t, again)
    with pytest.raises(ValueError, match="unknown model"):
        compare_models(synthetic, ["Gemini-3.1-Pro", "X"], "64K")


def test_compare_only_common_items(tmp_path):
    rel = tmp_path / "rel"
    write_jsonl(rel / "predictions" / "a.jsonl", [
        harness_line(item_id="q_00001_8k", question_id="q_00001", verdict=True),
        harness_line(item_id="q_00002_8k", question_id="q_00002", verdict=True),
        harness_line(item_id="q_00003_8k", question_id="q_00003", verdict=False),
        harness_line(model="Model-B", item_id="q_00001_8k", question_id="q_00001", verdict=False),
        harness_line(model="Model-B", item_id="q_00002_8k", question_id="q_00002", verdict=True),
    ])
    t = compare_models(load_release(rel), ["Model-A", "Model-B"], "8K", n_boot=50)
    r = t.iloc[0]
    assert (r["n_common"], r["only_a"], r["only_b"], r["a_right_b_wrong"], r["a_wrong_b_right"]) == (2, 1, 0, 1, 0)
    assert r["p_mcnemar"] == pytest.approx(1.0)


# ----------------------------------------------------------------------------- slice --by subtype
def test_slice_subtype_sums_to_the_models_scored_answerable_predictions(synthetic, capsys):
    got = _cli_csv(capsys, ["slice", "--data", str(SYNTHETIC), "--by", "subtype", "--model", "Gemini-3.1-Pro",
                            "--budget", "32K", "--n-boot", "100"])
    fr = synthetic.frame.filter((pl.col("model") == "Gemini-3.1-Pro") & (pl.col("budget").cast(pl.Utf8) == "32K")
                                & pl.col("scored") & ~pl.col("is_ar"))
    slices = got[got["level"] == "slice"]
    assert int(slices["n"].sum()) == fr.height == 669
    assert int(slices["n_correct"].sum()) == int(fr["correct"].sum())
    per = fr.group_by("subtype").agg(pl.len()).to_pandas().set_index("subtype")["len"]
    assert dict(zip(slices["subtype"], slices["n"])) == per.to_dict()
    assert "130 answer-refusal prediction(s) left out" in got.attrs["stderr"]


def test_slice_include_refusal_where_out_plot(synthetic, capsys, tmp_path):
    base = ["slice", "--data", str(SYNTHETIC), "--by", "subtype", "--model", "Gemini-3.1-Pro", "--budget", "32K",
            "--n-boot", "100"]
    with_ar = _cli_csv(capsys, [*base, "--include-refusal"])
    assert int(with_ar.loc[with_ar["level"] == "slice", "n"].sum()) == 799
    where = _cli_csv(capsys, [*base, "--where", "evidence_type = 'speech_semantics'"])
    n_ss = synthetic.frame.filter((pl.col("model") == "Gemini-3.1-Pro") & (pl.col("budget").cast(pl.Utf8) == "32K")
                                  & ~pl.col("is_ar") & (pl.col("evidence_type") == "speech_semantics")).height
    assert int(where.loc[where["level"] == "slice", "n"].sum()) == n_ss
    out, png = tmp_path / "s.csv", tmp_path / "s.png"
    assert main([*base, "--out", str(out), "--plot", str(png)]) == 0
    assert pd.read_csv(out)["n"].iloc[0] > 0 and png.read_bytes()[:4] == b"\x89PNG"
    assert main([*base, "--where", "nonsense ==="]) == 2


def test_slice_notes_on_pooling(capsys):
    assert main(["slice", "--data", str(SYNTHETIC), "--by", "budget", "--n-boot", "50"]) == 0
    err = capsys.readouterr().err
    assert "pools 15 models" in err and "model set differs across budgets" in err and "10 at 64K" in err


def test_explorer_cell_items_are_the_slice_items(synthetic):
    from voxmem_analysis.analysis import explore
    from voxmem_analysis.analysis.items import cell_items

    t = explore.explore_slices(synthetic, "subtype,evidence_type", budget="32K", n_boot=50)
    title, d = cell_items(synthetic, t, "subtype,evidence_type", model="Gemini-3.1-Pro", budget="32K",
                          cell="counting,speaker_information")
    fr = synthetic.frame.filter((pl.col("model") == "Gemini-3.1-Pro") & (pl.col("budget").cast(pl.Utf8) == "32K")
                                & (pl.col("subtype") == "counting") & (pl.col("evidence_type") == "speaker_information")
                                & pl.col("scored") & ~pl.col("correct"))
    assert sorted(d["item_id"]) == sorted(fr["item_id"].to_list()) and len(d) == 8
    assert title.startswith("Gemini-3.1-Pro at 32K, subtype = counting")
    # default: the lowest-accuracy slice
    low = t[t["level"] == "slice"].sort_values("accuracy", kind="stable").iloc[0]
    title, _ = cell_items(synthetic, t, "subtype,evidence_type", budget="32K")
    assert f"subtype = {low['subtype']}" in title


def test_where_is_a_filter_only():
    from voxmem_analysis.analysis.subsets import filter_where

    f = pl.DataFrame({"a": [1, 2, 3], "s": ["x", "from y", "z"]})
    assert filter_where(f, "s = 'from y' OR a >= 3")["a"].to_list() == [2, 3]
    assert filter_where(f, "a IN (1, 3) AND s LIKE 'x%'")["a"].to_list() == [1]
    for bad in ("a = 1 UNION ALL SELECT * FROM read_csv('/etc/passwd')", "a = 1; DROP", "a IN (SELECT a FROM self)"):
        with pytest.raises(ValueError, match="one boolean expression"):
            filter_where(f, bad)
    with pytest.raises(ValueError, match="--where"):
        filter_where(f, "no_such_column = 1")
