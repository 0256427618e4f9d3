"""`table scaling_model` against an independent statsmodels GEE fit of the stated model."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from voxmem_analysis import artifacts
from voxmem_analysis.analysis import scaling_model as SM

from conftest import SYNTHETIC, scored_at_every_budget


@pytest.fixture(scope="module")
def release():
    from voxmem_analysis import load_release

    return load_release(SYNTHETIC)


@pytest.fixture(scope="module")
def table(release):
    return artifacts.compute("scaling_model", release)


def _independent_data(release) -> pd.DataFrame:
    """The stated selection, rebuilt from the raw verdict frame: the 64K set, scored rows, and per
    model the questions scored at all four budgets."""
    fr = scored_at_every_budget(release)
    fr["x"] = np.log2(fr["budget"].str.rstrip("K").astype(float) / 8.0)
    fr["y"] = fr["correct"].astype(float)
    return fr


def _gee_or(df: pd.DataFrame) -> tuple[float, float, float]:
    import statsmodels.api as sm

    df = df.sort_values(["question_id", "model", "x"])
    X = pd.get_dummies(df["model"], drop_first=True, dtype=float)
    X.insert(0, "x", df["x"].to_numpy())
    X = sm.add_constant(X)
    res = sm.GEE(df["y"].to_numpy(), X, groups=df["question_id"].to_numpy(), family=sm.families.Binomial(),
                 cov_struct=sm.cov_struct.Exchangeable()).fit()
    lo, hi = res.conf_int().loc["x"]
    return float(np.exp(res.params["x"])), float(np.exp(lo)), float(np.exp(hi))


@pytest.mark.parametrize("evidence, label", [("speaker_information", "Speaker Identity"), (None, "Overall")])
def test_odds_ratios_equal_an_independent_gee(release, table, evidence, label):
    df = _independent_data(release)
    if evidence is not None:
        df = df[df["evidence_type"] == evidence]
    ref = _gee_or(df)
    row = table.loc[label]
    assert row["OR per doubling"] == pytest.approx(ref[0], abs=0.005)
    assert row["CI low"] == pytest.approx(ref[1], abs=0.005)
    assert row["CI high"] == pytest.approx(ref[2], abs=0.005)
    assert int(row["observations"]) == len(df)


def test_table_shape_and_values(table):
    assert list(table.index) == ["Speech Semantics", "Speaker Identity", "Paralinguistic Cues",
                                 "Environmental Sound", "Overall"]
    # synthetic release: accuracy falls with length, the interval excludes 1 everywhere
    assert (table["CI high"] < 1).all() and (table["OR per doubling"] > 0.7).all()
    assert table.loc["Overall", "models"] == 10 and table.loc["Overall", "clusters"] == 799
    assert table.loc["Overall", "OR per doubling"] == pytest.approx(0.846, abs=0.001)


def test_budget_doublings():
    assert SM.budget_doublings(pd.Series(["8K", "16K", "32K", "64K"])).tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="not of the form"):
        SM.budget_doublings(pd.Series(["8000"]))
