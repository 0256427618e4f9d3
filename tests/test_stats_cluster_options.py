"""`--cluster` through the analyses: families, slice / compare / scaling tables, Cochran's Q omnibus."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from voxmem_analysis.analysis import verdicts as V
from voxmem_analysis.analysis.clusters import question_families, with_abstention_families


def _twins(n: int = 200, seed: int = 0) -> pd.DataFrame:
    """Three systems; every question X has a twin X_abs answered identically (perfect within-family correlation)."""
    rng = np.random.default_rng(seed)
    rows = []
    for sys_, p in (("A", 0.7), ("B", 0.5), ("C", 0.45)):
        for b, shift in (("32k", 0.0), ("115k", -0.15)):
            ok = rng.random(n) < p + shift
            for i in range(n):
                for qid in (f"q{i}", f"q{i}_abs"):
                    rows.append({"system": sys_, "budget": b, "question_id": qid, "question_type": "t",
                                 "correct": bool(ok[i]), "scored": True})
    return pd.DataFrame(rows)


def test_families_from_ids_and_from_items():
    f = with_abstention_families(pd.DataFrame({"question_id": ["a", "a_abs", "b", "abs"]}))
    assert f["family"].tolist() == ["a", "a", "b", "abs"]
    items = pd.DataFrame({"question_id": ["q1", "q2", "q3"], "family_id": [None, None, "f9"],
                          "paired_question_id": [None, "q1", None]})
    assert question_families(items).set_index("question_id")["family"].to_dict() == {"q1": "q1", "q2": "q1",
                                                                                       "q3": "f9"}


def test_slice_design_effect_of_identical_twins_is_two():
    df = with_abstention_families(_twins())
    sub = df[(df["system"] == "A") & (df["budget"] == "32k")]
    out = V.slice_accuracy(sub, "system", interval="bootstrap", item="question_id", type_col=None,
                           cluster="family", settings=V.BootstrapSettings(n_boot=4000, seed=1))
    row = out[out["level"] == "slice"].iloc[0]
    assert row["interval"] == "bootstrap (cluster: family)" and row["cluster"] == "family"
    assert row["design_effect"] == pytest.approx(2.0, rel=0.12)
    plain = V.slice_accuracy(sub, "system", interval="bootstrap", item="question_id", type_col=None,
                             settings=V.BootstrapSettings(n_boot=4000, seed=1))
    assert "design_effect" not in plain.columns                     # default output unchanged
    assert row["accuracy_ci_high"] - row["accuracy_ci_low"] > plain["accuracy_ci_high"].iloc[0] - plain["accuracy_ci_low"].iloc[0]


def test_compare_adds_cluster_design_effect_and_cochran_omnibus():
    df = with_abstention_families(_twins())
    out = V.compare_systems(df, groups="budget", cluster="family", settings=V.BootstrapSettings(n_boot=2000, seed=0))
    assert set(out["cluster"]) == {"family"}
    assert (out["diff_design_effect"] > 1.5).all()
    # Cochran's Q per budget over the three systems, by hand
    for b, part in df[df["scored"]].groupby("budget"):
        X = part.pivot_table(index="question_id", columns="system", values="correct", aggfunc="first").to_numpy(float)
        k = X.shape[1]
        C, R, T = X.sum(0), X.sum(1), X.sum()
        q = (k - 1) * (k * np.sum(C ** 2) - T ** 2) / (k * T - np.sum(R ** 2))
        got = out.loc[out["budget"] == b]
        assert got["p_cochran"].to_numpy() == pytest.approx(st.chi2.sf(q, k - 1))
        assert (got["n_cochran"] == X.shape[0]).all()
    two = V.compare_systems(df[df["system"] != "C"], groups="budget", settings=V.BootstrapSettings(n_boot=200))
    assert two["p_cochran"].isna().all() and "cluster" not in two.columns


def test_scaling_table_cluster_columns():
    df = with_abstention_families(_twins(80))
    out = V.scaling_table(df, baseline="32k", cluster="family", settings=V.BootstrapSettings(n_boot=1500, seed=0))
    paired = out[out["budget"] == "115k"]
    assert set(paired["cluster"]) == {"family"}
    assert (paired["change_design_effect"] > 1.4).all()
    base = out[out["budget"] == "32k"]
    assert base["change_design_effect"].isna().all()


def test_cluster_must_be_constant_within_item():
    df = with_abstention_families(_twins(10))
    df.loc[df.index[0], "family"] = "other"
    with pytest.raises(ValueError, match="constant within an item"):
        V.compare_systems(df, groups="budget", cluster="family", settings=V.BootstrapSettings(n_boot=50))
