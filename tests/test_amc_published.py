"""The SYNTHETIC Audio MultiChallenge release against the AMC paper's Tables 2-5."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from voxmem_analysis.io import load_amc
from voxmem_analysis.reproduce.published import AMC_ARTIFACTS, published
from voxmem_analysis.reproduce.scoreboard import reproduction_table

AMC_DATA = Path(__file__).resolve().parents[1] / "data" / "synthetic-amc"
MISPRINT = ("amc_table2", "Gemini 3 Pro Preview (Thinking)|Text", "IR")


@pytest.fixture(scope="module")
def release():
    return load_amc(AMC_DATA)


@pytest.fixture(scope="module")
def repro(release):
    return reproduction_table(release, n_boot=0)


def test_published_rows():
    pub = published(benchmark="amc")
    assert pub.groupby("artifact").size().to_dict() == {"amc_table2": 120, "amc_table3": 12, "amc_table4": 54,
                                                        "amc_table5": 28}
    assert set(pub["artifact"]) == set(AMC_ARTIFACTS)
    assert not pub.duplicated(["artifact", "row", "column"]).any()
    assert (pub.loc[pub["unit"] == "pct", "tolerance"] == 0.05).all()
    assert (pub.loc[pub["unit"] != "pct", "tolerance"] == 0.0005).all()
    assert len(published()) + len(pub) == len(published(benchmark="all"))
    assert not published()["artifact"].str.startswith("amc_").any()   # VoxMem consumers unchanged


def test_every_published_number_within_0_05_pp(repro):
    assert len(repro) == 214 and repro["reproduced"].notna().all()
    off = repro[~repro["within_tolerance"]]
    assert [tuple(k) for k in off[["artifact", "row", "column"]].itertuples(index=False)] == [MISPRINT]
    assert off["reproduced"].iloc[0] == pytest.approx(100 * 79 / 120)
    ok = repro[repro["within_tolerance"]]
    pct = ok["artifact"] != "amc_table3"
    assert (ok.loc[pct, "delta"].abs() <= 0.05).all() and (ok.loc[~pct, "delta"].abs() <= 0.0005).all()


def test_table2_apr_are_integer_counts(release):
    from voxmem_analysis.analysis.amc import apr_ars

    r = apr_ars(release, n_boot=0)
    assert (r["n_tasks"] == 452).all()
    assert r.loc[r["model"] == "Gemini 3 Pro Preview (Thinking)", "passes"].item() == 247   # 54.65% = 247/452


def test_release_is_labelled_synthetic(release):
    meta = json.loads((AMC_DATA / "release.json").read_text())
    assert meta["synthetic"] is True and meta["benchmark"] == "audio-multichallenge"
    assert release.synthetic and release.label().startswith("SYNTHETIC DATA")
    assert (AMC_DATA / "README.md").read_text().startswith("# SYNTHETIC Audio MultiChallenge release")
    assert "Inconsistencies in the paper" in (AMC_DATA / "CALIBRATION.md").read_text()
    assert release.stats["tasks"] == 452 and release.stats["rubrics"] == 1712
    assert release.tasks["axis"].value_counts().to_dict() == {"IM": 132, "IR": 120, "VE": 117, "SC": 83}
    assert int(release.tasks["tts_subset"].sum()) == 385


def test_generator_is_deterministic_and_matches_the_committed_release():
    from voxmem_analysis.synth.amc import DEFAULT_SEED, build_amc

    a, b = build_amc(DEFAULT_SEED), build_amc(DEFAULT_SEED)
    for k in ("tasks", "rubrics", "verdicts", "tts", "cascaded", "human_labels", "judge_labels"):
        pd.testing.assert_frame_equal(a[k], b[k])
    committed = pd.read_csv(AMC_DATA / "verdicts" / "01-gemini-3-pro-preview-thinking-text.csv")
    mine = a["verdicts"].query("model == 'Gemini 3 Pro Preview (Thinking)'").reset_index(drop=True)
    assert committed["passed"].tolist() == mine["passed"].tolist()


def test_inconsistencies_listed():
    from voxmem_analysis.synth.amc import inconsistencies, known_misprints

    inc = inconsistencies()
    assert known_misprints() == {MISPRINT}
    row = inc[inc["key"] == MISPRINT].iloc[0]
    assert row["printed"] == "65.283" and row["consistent_value"] == "65.83"
    assert inc["where"].str.startswith("Table 1").any()          # SC/VE sizes swapped in Table 1
    ir = inc[inc["where"].str.contains("mean IR")].iloc[0]       # §3.2's 25.08 needs 79/120, not 65.283
    assert "corrected cell" in ir["note"]


def test_synth_check_cli(capsys):
    from voxmem_analysis.cli import main

    assert main(["synth", "--benchmark", "amc", "--check", "--data", str(AMC_DATA)]) == 0
    out = capsys.readouterr().out
    assert "213/214 published numbers within tolerance; 1 known misprint(s); 0 unexplained" in out


def test_runner_passes_the_amc_release(tmp_path):
    from voxmem_analysis.reproduce.notebook import plan_parameters

    declared = {"amc_data_dir": "x", "out_dir": "o", "seed": 0, "n_boot": 1}
    inject, reason = plan_parameters(declared, data_dir=str(AMC_DATA), out_dir="o", seed=0, n_boot=10)
    assert reason is None and inject["amc_data_dir"] == str(AMC_DATA)
    inject, reason = plan_parameters(declared, data_dir=str(tmp_path), out_dir="o", seed=0, n_boot=10,
                                     include_examples=False)
    assert inject == {} and "Audio MultiChallenge" in reason


def test_reproduction_csv_for_an_amc_release_from_the_notebook_tables(tmp_path):
    from conftest import write_artifact_tables

    from voxmem_analysis.io import load_amc
    from voxmem_analysis.reproduce.mode import release_info
    from voxmem_analysis.reproduce.published import AMC_ARTIFACTS
    from voxmem_analysis.reproduce.scoreboard import reproduction_from_files, summarize, write_csv

    release = load_amc(AMC_DATA, strict=False)
    info, problems = release_info(release, AMC_DATA)
    assert info["mode"] == "paper" and info["benchmark"] == "audio-multichallenge" and problems == []
    write_artifact_tables(release, tmp_path, AMC_ARTIFACTS, n_boot=0)
    table = reproduction_from_files(tmp_path, benchmark=info["benchmark"])
    s = summarize(table)
    assert s["numbers"] == 214 and s["within"] == 213 and s["paper_inconsistent"] == 1
    write_csv(table, tmp_path / "reproduction.csv")
    rep = pd.read_csv(tmp_path / "reproduction.csv")
    assert len(rep) == 214 and rep["artifact"].str.startswith("amc_").all()
