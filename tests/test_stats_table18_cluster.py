"""`table table18 --cluster family` against an independent family bootstrap of the Overall drop."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voxmem_analysis import artifacts

from conftest import SYNTHETIC, scored_at_every_budget

N_BOOT = 4000


@pytest.fixture(scope="module")
def release():
    from voxmem_analysis import load_release

    return load_release(SYNTHETIC)


def _family_sums(release) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per family x model: correct at 8K, correct at 64K, paired items -- rebuilt from the raw
    frame and items.csv (the 64K set; a question counts for a model if scored at all four budgets)."""
    fr = scored_at_every_budget(release)
    items = pd.read_csv(SYNTHETIC / "items.csv", usecols=["question_id", "family_id"]).drop_duplicates()
    fr = fr.drop(columns="family_id").merge(items, on="question_id", how="left", validate="many_to_one")
    assert fr["family_id"].notna().all()
    w = fr.pivot_table(index=["family_id", "model"], columns="budget", values="correct", aggfunc="sum")
    m = fr[fr["budget"] == "8K"].groupby(["family_id", "model"]).size()
    fams = sorted(fr["family_id"].unique())
    models = sorted(fr["model"].unique())
    idx = pd.MultiIndex.from_product([fams, models])
    b = w["8K"].reindex(idx, fill_value=0).to_numpy(float).reshape(len(fams), len(models))
    c = w["64K"].reindex(idx, fill_value=0).to_numpy(float).reshape(len(fams), len(models))
    n = m.reindex(idx, fill_value=0).to_numpy(float).reshape(len(fams), len(models))
    return b, c, n


def test_overall_drop_matches_an_independent_family_bootstrap(release):
    t = artifacts.compute("table18", release, cluster="family", n_boot=N_BOOT, seed=0, mc_se=True)
    row = t.loc["Overall"]
    b, c, n = _family_sums(release)
    assert b.shape[0] == 669
    est = 100 * (np.mean(b.sum(0) / n.sum(0)) - np.mean(c.sum(0) / n.sum(0)))
    assert row["drop"] == pytest.approx(est, abs=1e-9)
    rng = np.random.default_rng(12345)
    reps = np.empty(N_BOOT)
    for r in range(N_BOOT):
        w = np.bincount(rng.integers(0, b.shape[0], b.shape[0]), minlength=b.shape[0]).astype(float)
        nn = w @ n
        reps[r] = 100 * (np.mean((w @ b) / nn) - np.mean((w @ c) / nn))
    lo, hi = np.percentile(reps, [2.5, 97.5])
    # independent random streams: equal within Monte-Carlo error (4 SE of a difference of two runs)
    assert abs(row["drop_lo"] - lo) < 4 * np.sqrt(2) * row["drop_lo mc_se"]
    assert abs(row["drop_hi"] - hi) < 4 * np.sqrt(2) * row["drop_hi mc_se"]
    # the output states the unit and the design effect: variance ratio against item resampling
    assert row["cluster"] == "family"
    item = artifacts.compute("table18", release, n_boot=N_BOOT, seed=0)
    assert "cluster" not in item.columns                    # the paper's table is unchanged by default
    assert row["drop deff"] == pytest.approx(np.var(reps, ddof=1) / _item_var(release, item), rel=0.2)


def _item_var(release, item_table) -> float:
    """Item-level replicate variance of the Overall drop, from its 95% interval width (normal approx.)."""
    r = item_table.loc["Overall"]
    return ((r["drop_hi"] - r["drop_lo"]) / (2 * 1.959964)) ** 2


def test_cluster_option_reaches_the_cli(capsys):
    from voxmem_analysis.cli import main

    rc = main(["table", "table18", "--data", str(SYNTHETIC), "--format", "csv", "--cluster", "family",
               "--n-boot", "200", "--models", "Gemini-2.5-Pro"])
    out = capsys.readouterr().out
    assert rc in (0, None)
    header = out.splitlines()[0].split(",")
    assert header[-3:] == ["cluster", "drop deff", "retention deff"]
    assert ",family," in out
