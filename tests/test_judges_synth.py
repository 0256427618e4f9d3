"""Synthetic second judge: calibration to Table 13 / Appendix C.5 and structure of the output."""
from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from voxmem_analysis import artifacts
from voxmem_analysis.reproduce import published as paper
from voxmem_analysis.analysis.judges import is_capability_refusal
from voxmem_analysis.synth import judges as SJ

SEED = 20260


@pytest.fixture(scope="module")
def inputs():
    from voxmem_analysis.synth import build

    fr = build(SEED)
    return fr["items"], fr["preds"], fr["models"]


@pytest.fixture(scope="module")
def made(inputs):
    _, preds, models = inputs
    return SJ.make_judge2(preds, models, np.random.default_rng(5))


@pytest.fixture(scope="module")
def report(made, inputs):
    pu, j2 = made
    return SJ.judge2_calibration_report(pu, j2, inputs[2])


def test_every_number_within_tolerance(report):
    bad = report[~report["within_tolerance"]]
    assert bad.empty, bad.to_string()
    assert len(report) == 9 * 6 + 9


def test_c5_numbers_round_to_the_paper(report):
    c5 = report[report["artifact"] == "judges"].set_index("column")
    assert c5["rounds_to_target"].all(), c5.to_string()
    assert c5.loc["ar_second_only", "achieved"] == 50
    assert c5.loc["ar_second_only_capability_refusals", "achieved"] == 32


def test_agreement_and_kappa_round_to_table13(report):
    t = report[(report["artifact"] == "table13") & report["column"].isin(["n", "agreement", "kappa"])]
    assert t["rounds_to_target"].all(), t[~t["rounds_to_target"]].to_string()


def test_second_judge_accuracy_rounds_to_table13(report):
    t = report[(report["artifact"] == "table13") & (report["column"] == "judge2")]
    assert t["rounds_to_target"].all(), t[~t["rounds_to_target"]].to_string()


def test_judge2_has_the_8k_rows(made, inputs):
    _, preds, _ = inputs
    pu, j2 = made
    p8 = pu.filter(pl.col("context_length").str.to_uppercase() == "8K")
    assert j2.height == p8.height
    assert j2.select("model", "item_id").equals(p8.select("model", "item_id"))
    assert set(j2["judge"].unique()) == {"gpt-5.6-luna"}
    assert j2["response"].equals(p8["response"])          # the second judge re-scores the same responses
    assert j2.columns == pu.columns


def test_rejected_and_failed_rows_keep_their_status(made):
    from voxmem_analysis.synth.judges import harness_to_tidy

    pu, j2 = made
    a = harness_to_tidy(pu.filter(pl.col("context_length").str.to_uppercase() == "8K")).sort("model", "item_id")
    b = harness_to_tidy(j2).sort("model", "item_id")
    for st in ("provider_rejected", "failed"):
        ma = (a["status"] == st).to_numpy()
        mb = (b["status"] == st).to_numpy()
        assert ma.sum() > 0 and (ma == mb).all(), st
    assert not b.filter(pl.col("status") == "failed")["correct"].any()
    raw = j2.filter(pl.col("verdict").is_not_null())["judge_raw"].to_list()
    assert all(json.loads(r)["verdict"] in ("correct", "incorrect") for r in raw)


def test_only_ar_8k_responses_are_reworded(made, inputs):
    _, preds, _ = inputs
    pu, _ = made
    assert pu.shape == preds.shape and pu.columns == preds.columns
    changed = pu.with_columns(pl.Series("_old", preds["response"])).filter(
        pl.col("response").fill_null("<null>") != pl.col("_old").fill_null("<null>"))
    assert changed.height == 50
    assert set(changed["expected_response"]) == {"insufficient_evidence"}
    assert set(changed["context_length"].str.to_uppercase()) == {"8K"}
    cap = [is_capability_refusal(r) for r in changed["response"]]
    assert sum(cap) == 32
    assert all(not is_capability_refusal(t) for t in SJ.LENIENT_TEXTS)
    assert all(is_capability_refusal(t) for t in SJ.CAPABILITY_REFUSAL_TEXTS)


def test_deterministic_given_the_rng(made, inputs):
    _, preds, models = inputs
    pu2, j22 = SJ.make_judge2(preds, models, np.random.default_rng(5))
    assert pu2.equals(made[0]) and j22.equals(made[1])


def test_plan_sums_match_the_flips(made, inputs):
    _, preds, models = inputs
    plan = SJ.plan_judge2_flips(preds, models, np.random.default_rng(5))
    assert set(plan.columns) == {"evidence_type", "stratum", "model", "n", "correct_1", "production_only", "second_only"}
    assert plan["n"].sum() == 11978
    assert plan.loc[plan["stratum"] == "answer_refusal", "second_only"].sum() == 50
    assert (plan["production_only"] <= plan["correct_1"]).all()
    assert (plan["second_only"] <= plan["n"] - plan["correct_1"]).all()


def test_transport_meets_margins_and_caps():
    rng = np.random.default_rng(0)
    cap = rng.integers(0, 6, size=(5, 7))
    x0 = np.minimum(cap, rng.integers(0, 3, size=cap.shape))     # a feasible solution exists
    x = SJ._transport(x0.sum(1), x0.sum(0), cap, np.random.default_rng(1))
    assert (x.sum(1) == x0.sum(1)).all() and (x.sum(0) == x0.sum(0)).all()
    assert (x >= 0).all() and (x <= cap).all()
    with pytest.raises(ValueError, match="no integer flip assignment"):
        SJ._transport([2, 0], [1, 1], np.array([[1, 0], [0, 1]]), np.random.default_rng(0))


def test_rank_rho_matches_scipy():
    from scipy.stats import spearmanr

    x = np.array([0.3, 0.1, 0.5, 0.5, 0.2])
    y = np.array([0.31, 0.12, 0.52, 0.49, 0.2])
    assert SJ._rank_rho(x, y) == pytest.approx(spearmanr(x, y).statistic)


def test_release_roundtrip_reproduces_the_paper(made, inputs, tmp_path):
    """Written as a release directory, loaded, and computed by the registered artifacts."""
    from voxmem_analysis.io import load_release

    items, _, models = inputs
    pu, j2 = made

    def write(df, path):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(r) + "\n" for r in df.iter_rows(named=True)))

    for (m,), part in pu.group_by(["model"], maintain_order=True):
        write(part, tmp_path / "predictions" / m / "predictions.jsonl")
    for (m,), part in j2.group_by(["model"], maintain_order=True):
        write(part, tmp_path / "judge2" / m / "predictions_8k.jsonl")
    items.write_csv(tmp_path / "items.csv")
    models.to_csv(tmp_path / "models.csv", index=False)
    rel = load_release(tmp_path)
    pub = paper.published()
    for name in ("table13", "judges"):
        long = artifacts.to_long(artifacts.compute(name, rel), name)
        got = {(paper.normalize_label(r), paper.normalize_label(c)): v for r, c, v in zip(long["row"], long["column"], long["value"])}
        sub = pub[pub["artifact"] == name]
        assert len(sub) > 0
        for r in sub.itertuples(index=False):
            assert (r.row, r.column) in got, (name, r.row, r.column)
            assert abs(got[(r.row, r.column)] - r.value) <= r.tolerance + 1e-9, (name, r.row, r.column)


def test_standin_inputs_shape():
    items, preds, models = SJ.standin_inputs(0, budgets=("8K",))
    assert items.height == 799 and preds.height == 15 * 799
    assert set(models["family"]) >= {"Gemini", "Qwen-Omni"}
