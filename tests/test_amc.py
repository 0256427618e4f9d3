"""Audio MultiChallenge: APR / ARS by hand on a tiny release, intervals against references,
the exported frame against the artifact, and the CLI dispatch."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from voxmem_analysis.analysis import amc as A
from voxmem_analysis.io import is_amc_release, load_amc

AMC_DATA = Path(__file__).resolve().parents[1] / "data" / "synthetic-amc"

TASKS = """task_id,axis,audio_cue,interruption,tts_subset,user_audio_seconds,turns
t1,IM,true,false,false,30,3
t2,IR,false,false,true,90,4
t3,SC,false,false,true,200,5
t4,VE,false,false,true,400,3
"""
RUBRICS = """rubric_id,task_id,instruction_type,edit_type,exclusion
r1a,t1,,,false
r1b,t1,,,true
r2a,t2,fixed,,false
r2b,t2,conditional,,false
r2c,t2,conditional,,false
r3a,t3,,,false
r4a,t4,,mid_utterance,false
r4b,t4,,prior_turn,false
r4c,t4,,unedited,false
r4d,t4,,unedited,false
"""
# M Text: t1 pass (1), t2 2/3, t3 0, t4 pass (1)     -> APR 50, ARS 66.667
# M Audio: t1 1/2, t2 pass, t3 pass, t4 1/4           -> APR 50, ARS 68.75
VERDICTS = {
    ("M", "Text"): dict(r1a=1, r1b=1, r2a=1, r2b=0, r2c=1, r3a=0, r4a=1, r4b=1, r4c=1, r4d=1),
    ("M", "Audio"): dict(r1a=1, r1b=0, r2a=1, r2b=1, r2c=1, r3a=1, r4a=0, r4b=0, r4c=1, r4d=0),
}
TASK_OF = {r.split(",")[0]: r.split(",")[1] for r in RUBRICS.splitlines()[1:]}


def verdict_csv(systems=VERDICTS) -> str:
    lines = ["model,output_modality,task_id,rubric_id,passed"]
    for (m, mod), v in systems.items():
        lines += [f"{m},{mod},{TASK_OF[r]},{r},{'true' if p else 'false'}" for r, p in v.items()]
    return "\n".join(lines) + "\n"


def write_release(root: Path, *, tasks=TASKS, rubrics=RUBRICS, verdicts=None, extra: dict | None = None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "release.json").write_text(json.dumps({"benchmark": "audio-multichallenge", "synthetic": True}))
    (root / "tasks.csv").write_text(tasks)
    (root / "rubrics.csv").write_text(rubrics)
    (root / "verdicts").mkdir(exist_ok=True)
    (root / "verdicts" / "v.csv").write_text(verdict_csv() if verdicts is None else verdicts)
    for name, text in (extra or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@pytest.fixture()
def tiny(tmp_path) -> Path:
    return write_release(tmp_path / "rel")


def test_apr_ars_by_hand(tiny):
    rel = load_amc(tiny)
    assert is_amc_release(tiny) and rel.synthetic
    res = A.apr_ars(rel, n_boot=0).set_index(["model", "output_modality"])
    assert res.loc[("M", "Text"), "APR"] == pytest.approx(50.0)
    assert res.loc[("M", "Text"), "ARS"] == pytest.approx(100 * (1 + 2 / 3 + 0 + 1) / 4)
    assert res.loc[("M", "Audio"), "APR"] == pytest.approx(50.0)
    assert res.loc[("M", "Audio"), "ARS"] == pytest.approx(68.75)
    t2 = A.amc_table2(rel, n_boot=200)
    assert t2.loc["M|Text", ["IM", "IR", "SC", "VE"]].tolist() == [100.0, 0.0, 0.0, 100.0]
    assert t2.loc["M|Audio", ["IM", "IR", "SC", "VE"]].tolist() == [0.0, 100.0, 100.0, 0.0]


def test_ars_weighs_tasks_not_rubrics(tiny):
    """ARS is the mean over tasks of the task's share, not the share of all rubric items."""
    rel = load_amc(tiny)
    pooled = 100 * rel.verdicts.query("output_modality == 'Text'")["passed"].mean()   # 8/10 = 80
    ars = A.apr_ars(rel, n_boot=0).query("output_modality == 'Text'")["ARS"].item()
    assert pooled == pytest.approx(80.0) and ars == pytest.approx(66.6667, abs=1e-4)


def test_wilson_matches_statsmodels(tiny):
    from statsmodels.stats.proportion import proportion_confint

    rel = load_amc(tiny)
    row = A.apr_ars(rel, n_boot=0).iloc[0]
    lo, hi = proportion_confint(2, 4, alpha=0.05, method="wilson")
    assert (row["APR_lo"], row["APR_hi"]) == pytest.approx((100 * lo, 100 * hi), abs=1e-9)


def test_ars_bootstrap_is_seeded_and_brackets_the_estimate(tiny):
    rel = load_amc(tiny)
    a = A.apr_ars(rel, seed=3, n_boot=500)
    b = A.apr_ars(rel, seed=3, n_boot=500)
    pd.testing.assert_frame_equal(a, b)
    assert ((a["ARS_lo"] <= a["ARS"]) & (a["ARS"] <= a["ARS_hi"])).all()
    assert a["ARS_lo"].min() >= 0 and a["ARS_hi"].max() <= 100


def test_rubric_types_by_hand(tiny):
    rel = load_amc(tiny)
    f6 = A.amc_fig6(rel)
    assert f6.loc["M|Text", "Fixed"] == 100.0 and f6.loc["M|Text", "Conditional"] == 50.0
    f7 = A.amc_fig7(rel)
    assert f7.loc["M|Audio", ["Mid-utterance", "Prior-turn", "Unedited"]].tolist() == [0.0, 0.0, 50.0]


def test_bins_by_hand(tiny):
    f8 = A.amc_fig8(load_amc(tiny))
    # duration: t1 30 s (0-60), t2 90 s (1-3 min), t3 200 s (3-5 min), t4 400 s (5-8 min); 2 systems
    assert f8.loc["duration|0-60 s", "All"] == 50.0 and f8.loc["duration|0-60 s", "All n"] == 1
    assert f8.loc["turns|3", "All"] == 50.0 and f8.loc["turns|3", "All n"] == 2   # t1 (1/2) + t4 (1/2)


def test_macro_f1_matches_sklearn():
    from sklearn.metrics import f1_score

    rng = np.random.default_rng(0)
    a, b = rng.random(200) < 0.6, rng.random(200) < 0.5
    assert A.macro_f1(a, b) == pytest.approx(f1_score(a, b, average="macro"))


def test_correlation_interval_pearson_fisher_z():
    lo, hi = A.correlation_interval(0.5, 28, method="pearson")
    z = np.arctanh(0.5)
    assert (lo, hi) == pytest.approx((np.tanh(z - 1.959964 / 5), np.tanh(z + 1.959964 / 5)), abs=1e-6)


def test_export_frame_recomputes_the_artifact(tmp_path):
    """APR / ARS recomputed directly from the exported rubric-level frame equal amc_table2."""
    from voxmem_analysis.cli import main

    out = tmp_path / "frame.parquet"
    assert main(["export-frame", "--data", str(AMC_DATA), "--out", str(out)]) == 0
    f = pd.read_parquet(out)
    assert {"model", "output_modality", "task_id", "axis", "rubric_id", "passed", "audio_cue",
            "instruction_type", "edit_type", "exclusion", "turns", "user_audio_seconds"} <= set(f.columns)
    per_task = f.groupby(["model", "output_modality", "task_id"], sort=False)["passed"].agg(["all", "mean"])
    direct = per_task.groupby(level=[0, 1], sort=False).mean() * 100
    t2 = A.amc_table2(load_amc(AMC_DATA), n_boot=0)
    for (m, mod), r in direct.iterrows():
        assert t2.loc[f"{m}|{mod}", "APR"] == pytest.approx(r["all"], abs=1e-9)
        assert t2.loc[f"{m}|{mod}", "ARS"] == pytest.approx(r["mean"], abs=1e-9)
    assert len(direct) == 20


def test_table_command_dispatches_to_the_amc_loader(capsys):
    from voxmem_analysis.cli import main

    assert main(["table", "amc_table3", "--data", str(AMC_DATA), "--format", "long"]) == 0
    out = capsys.readouterr()
    assert out.out.startswith("artifact,row,column,value\namc_table3,o4 Mini,κ,0.873")
    assert "SYNTHETIC" in out.err


def test_parquet_and_jsonl_tables_read_like_csv(tmp_path):
    csv_rel = load_amc(write_release(tmp_path / "csv"))
    root = write_release(tmp_path / "pq", verdicts="")
    (root / "verdicts" / "v.csv").unlink()
    csv_rel.verdicts.to_parquet(root / "verdicts" / "v.parquet")
    (root / "tasks.csv").unlink()
    csv_rel.tasks.to_json(root / "tasks.jsonl", orient="records", lines=True)
    rel = load_amc(root)
    pd.testing.assert_frame_equal(rel.verdicts, csv_rel.verdicts)
    pd.testing.assert_frame_equal(A.apr_ars(rel, n_boot=0), A.apr_ars(csv_rel, n_boot=0))
