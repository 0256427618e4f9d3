"""Synthetic audit records: Table 20, the D.5 exclusions and the macro percentages are met exactly."""
from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from voxmem_analysis.analysis import attribution as A
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.synth import attribution as S


@pytest.fixture(scope="module")
def standin():
    return S.standin_inputs(0)


@pytest.fixture(scope="module")
def synth(standin):
    preds, items, models = standin
    out, records = S.make_attribution(preds, items, models, np.random.default_rng(11))
    return out, records


def test_standin_population(standin):
    preds, items, models = standin
    assert items.height == 799
    pop, chosen = S.population(preds, models)
    assert len(chosen) == 10 and pop.height == 4740 and int(pop["_incorrect"].sum()) == 4137
    per_ev = pop.group_by("_ev").agg(pl.col("question_id").n_unique()).sort("_ev")
    assert dict(per_ev.iter_rows()) == {tx.AUDIO_NATIVE[0]: 126, tx.AUDIO_NATIVE[1]: 222, tx.AUDIO_NATIVE[2]: 126}


def test_calibration_report_all_targets_met(synth, standin):
    out, records = synth
    rep = S.calibration_report(out, records, standin[2])
    assert rep["ok"].all(), rep[~rep["ok"]].to_string()
    # every published number is in the report
    assert len(rep) == 7 + 8 * 7 + 3 * 6 + 6 + len(S.MACRO_TARGETS) + len(S.MACRO_BOUNDS) + 3
    t = rep.set_index(["quantity", "group", "column"])["achieved"]
    assert t[("table20", "Cue-to-Fact", "Bind.")] == 387
    assert t[("table20", "Aggregation", "Cells")] == 11
    assert t[("table20", "Total", "Total")] == 2213
    assert t[("population", "refusals", "count")] == 1595
    macro = rep[rep["quantity"].str.startswith("macro")]
    assert (macro["achieved"] - macro["target"]).abs().max() <= 0.5


def test_records_are_consistent_with_the_rules_and_responses(synth, standin):
    out, records = synth
    frame = S.predictions_frame(out)
    audit, problems = A.audit_records_frame(records, frame=frame, models=standin[2])
    assert problems == []
    assert len(records) == 2213 + 162
    assert {r["commits"] for r in records} == set(A.COMMITS)
    assert sum(r["relation"] in ("earlier_state", "later_state") for r in records) == 4
    pop = A.population_frame(frame, audit, models=standin[2])
    wrong = pop[pop["stage"] != "correct"]
    refusals = wrong.loc[wrong["stage"] == "refusal", "response"]
    assert refusals.str.contains("insufficient evidence", case=False).any()
    assert refusals.str.contains("audio|access|memory", case=False).any()        # capability-based too
    trunc = wrong.loc[wrong["stage"] == "truncated", "response"]
    assert not trunc.str.rstrip().str[-1].isin([".", "!", "?"]).any()
    assert wrong.loc[wrong["stage"] == "empty", "response"].isna().all()
    # answers are varied, sessions are numbers
    assert len({r["answer"] for r in records if r["answer"]}) > 200
    assert len({r["why"] for r in records}) > 1000
    assert all(isinstance(r["source_session"], int) for r in records if r["source"] in ("evidence", "other_session"))


def test_only_population_errors_are_rewritten(synth, standin):
    preds = standin[0]
    out, _ = synth
    assert out.columns == preds.columns and out.height == preds.height
    key = ["model", "item_id"]
    both = preds.join(out, on=key, suffix="_new")
    changed = both.filter((pl.col("response").eq_missing(pl.col("response_new"))).not_()
                          | (pl.col("verdict").eq_missing(pl.col("verdict_new"))).not_())
    pop, _ = S.population(preds, standin[2])
    wrong = pop.filter(pl.col("_incorrect")).select(key)
    assert changed.join(wrong, on=key, how="anti").height == 0        # nothing outside the population changed
    assert both.filter(pl.col("verdict") == True)["verdict_new"].all()  # noqa: E712 - correct stay correct


def test_deterministic_for_a_given_rng(synth, standin):
    preds, items, models = standin
    out2, rec2 = S.make_attribution(preds, items, models, np.random.default_rng(11))
    out, rec = synth
    assert rec2 == rec
    assert out2.equals(out)


def test_release_roundtrip_through_loader_and_artifacts(synth, standin, tmp_path):
    from voxmem_analysis import artifacts, load_release

    out, records = synth
    models = standin[2]
    for (m,), part in out.group_by("model", maintain_order=True):
        p = tmp_path / "predictions" / f"{m}.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(json.dumps(r) + "\n" for r in part.to_dicts()))
    models.to_csv(tmp_path / "models.csv", index=False)
    S.write_attribution(records, tmp_path)
    release = load_release(tmp_path, strict=False)
    t20 = artifacts.compute("table20", release)
    for s in tx.SUBTYPES:
        row = t20.loc[tx.SUBTYPE_LABELS[s]]
        assert tuple(row[["Recog.", "Bind.", "Oper.", "Unsup.", "N.a."]]) == S.TABLE20_COUNTS[s]
        assert row["Cells"] == S.TABLE20_CELLS[s]
    f7 = artifacts.compute("fig7", release)
    assert abs(f7.loc["IE", "Bind."] - 46) <= 0.5 and abs(f7.loc["Environmental Sound", "Unsup."] - 39) <= 0.5
    f10 = artifacts.compute("fig10", release)
    assert abs(f10.loc["Cue-to-Fact", "Bind."] - 78) <= 0.5 and f10.loc["Aggregation", "Cells"] == 11
    long = artifacts.to_long(t20, "table20")
    assert len(long) == 8 * 8 + 4 * 7      # subtype rows carry Op. .. Cells; the others no Cells


def test_too_few_errors_is_an_error(standin):
    preds, items, models = standin
    with pytest.raises(ValueError, match="incorrect predictions"):
        S.make_attribution(preds.head(3000), items, models, np.random.default_rng(0), n_iter=10)


ATTRIBUTION_ARTIFACTS = ("table20", "fig7", "fig10", "population")


def test_committed_release_reproduces_every_published_attribution_number():
    import pathlib

    from voxmem_analysis import load_release
    from voxmem_analysis.reproduce.published import published
    from voxmem_analysis.reproduce.scoreboard import reproduction_table

    release = load_release(pathlib.Path(__file__).resolve().parents[1] / "data" / "synthetic")
    pub = published()
    pub = pub[pub["artifact"].isin(ATTRIBUTION_ARTIFACTS)].reset_index(drop=True)
    t = reproduction_table(release, pub)
    assert t.attrs["artifact_errors"] == {}
    assert len(t) == 9 + 17 + 80 + 13
    bad = t[t["reproduced"].isna() | ~t["within_tolerance"]]
    assert bad.empty, bad.to_string()
    pop = t[t["artifact"] == "population"].set_index(["row", "column"])["reproduced"]
    assert pop.to_dict() == {
        ("Answerable audio-native items", "n"): 474, ("Systems", "n"): 10, ("Attempts", "n"): 4740,
        ("Incorrect", "n"): 4137, ("Refusals", "n"): 1595, ("Empty", "n"): 167, ("Truncated", "n"): 162,
        ("Attributed", "n"): 2213, ("Not attributable", "n"): 45, ("Operation", "n"): 185,
        ("Wrong time point", "n"): 4, ("Not attributable", "pct"): 2.0, ("Operation", "pct"): 8.4}


def test_release_without_attribution_folder(synth, standin, tmp_path):
    from voxmem_analysis import artifacts, load_release
    from voxmem_analysis.errors import VoxMemDataError
    from voxmem_analysis.reproduce.published import published
    from voxmem_analysis.reproduce.scoreboard import reproduction_table

    out, _ = synth
    for (m,), part in out.group_by("model", maintain_order=True):
        p = tmp_path / "predictions" / f"{m}.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(json.dumps(r) + "\n" for r in part.to_dicts()))
    standin[2].to_csv(tmp_path / "models.csv", index=False)
    release = load_release(tmp_path, strict=False)
    for name in ATTRIBUTION_ARTIFACTS:
        with pytest.raises(VoxMemDataError, match=r"has no attribution/ folder") as exc:
            artifacts.compute(name, release)
        assert [(p.code, p.file) for p in exc.value.problems] == [("no_attribution_folder", "attribution/")]
    # the reproduction table records the numbers as unreproduced instead of failing
    pub = published()
    pub = pub[pub["artifact"].isin(ATTRIBUTION_ARTIFACTS)].reset_index(drop=True)
    t = reproduction_table(release, pub)
    assert len(t) == len(pub) and t["reproduced"].isna().all() and not t["within_tolerance"].any()
    errors = t.attrs["artifact_errors"]
    assert sorted(errors) == sorted(ATTRIBUTION_ARTIFACTS)
    assert all("no attribution/ folder" in msg for msg in errors.values())


def test_targets_come_from_the_published_table():
    from voxmem_analysis.reproduce.published import published

    pub = published()
    # the module constants are exactly the published cells
    for s in tx.SUBTYPES:
        row = pub[(pub["artifact"] == "table20") & (pub["row"] == tx.SUBTYPE_LABELS[s])].set_index("column")["value"]
        assert S.TABLE20_COUNTS[s] == tuple(int(row[tx.ATTRIBUTION_LABELS[c]]) for c in tx.ATTRIBUTION_CLASSES)
        assert S.TABLE20_CELLS[s] == int(row["Cells"])
    figs = pub[pub["artifact"].isin(["fig7", "fig10"])]
    assert len(S.MACRO_TARGETS) == (figs["comparator"] == "approx").sum() == 14
    assert len(S.MACRO_BOUNDS) == (figs["comparator"] == "le").sum() == 12
    assert ("subtype", "cue_to_fact", "binding", 78.0) == S.MACRO_TARGETS[9]
    assert S.EXCLUSIONS == {"refusal": 1595, "empty": 167, "truncated": 162}
    assert S.POPULATION == {"attempts": 4740, "incorrect": 4137, "attributed": 2213} and S.WRONG_TIME_STATES == 4
    # ... and follow the table when it changes
    edited = pub.copy()
    hit = (edited["artifact"] == "table20") & (edited["row"] == "Cue-to-Fact") & (edited["column"] == "Bind.")
    edited.loc[hit, "value"] = 388.0
    edited.loc[(edited["artifact"] == "population") & (edited["row"] == "Empty"), "value"] = 170.0
    got = S.published_targets(edited)
    assert got["TABLE20_COUNTS"]["cue_to_fact"][1] == 388 and got["EXCLUSIONS"]["empty"] == 170
    with pytest.raises(KeyError, match=r"\(table20, Counting, Cells\)"):
        S.published_targets(pub[~((pub["artifact"] == "table20") & (pub["row"] == "Counting")
                                   & (pub["column"] == "Cells"))])


def test_class_proportions_by_stacks_groupings_as_figure7():
    import pathlib

    import pandas as pd

    from voxmem_analysis import load_release

    release = load_release(pathlib.Path(__file__).resolve().parents[1] / "data" / "synthetic")
    models = release.models_in_64k_set()
    audit, _ = A.load_audit_records(release.path, frame=release.frame, models=models)
    errors = A.attributed_errors(release.frame, audit, models=models)
    both = A.class_proportions_by(errors, ("operation", "evidence_type"))
    parts = [A.class_proportions(errors, by=b) for b in ("operation", "evidence_type")]
    pd.testing.assert_frame_equal(both, pd.concat(parts, ignore_index=True))
    assert list(both["by"].unique()) == ["operation", "evidence_type"]
