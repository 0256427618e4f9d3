"""analysis.accuracy: the one accuracy group-by, on hand-computed fixtures."""
import numpy as np
import pandas as pd
import polars as pl
import pytest

from voxmem_analysis.analysis.accuracy import accuracy_by_code, accuracy_table

FRAME = pl.DataFrame({
    "model": ["A", "A", "A", "B", "B", "B"],
    "correct": [True, None, False, True, True, False],
    "scored": [True, True, False, True, True, True],
})


def test_counts_and_denominator_by_hand():
    t = accuracy_table(FRAME, ["model"])
    assert list(t.columns) == ["model", "n_correct", "n", "accuracy", "n_excluded"]
    a, b = t.iloc[0], t.iloc[1]
    # A: 1 right, 1 null (wrong), 1 not scored (out of n)
    assert (a["model"], a["n_correct"], a["n"], a["n_excluded"]) == ("A", 1, 2, 1)
    assert a["accuracy"] == pytest.approx(50.0)
    assert (b["n_correct"], b["n"], b["n_excluded"]) == (2, 3, 0)
    assert b["accuracy"] == pytest.approx(200 / 3)


def test_pooled_row_pandas_input_and_empty_group():
    t = accuracy_table(FRAME.to_pandas(), [])
    assert (t["n_correct"].iloc[0], t["n"].iloc[0], t["n_excluded"].iloc[0]) == (3, 5, 1)
    assert t["accuracy"].iloc[0] == pytest.approx(60.0)
    none = accuracy_table(FRAME.filter(~pl.col("scored")), ["model"])
    assert none["n"].tolist() == [0] and np.isnan(none["accuracy"].iloc[0])


def test_numeric_scores_and_first_appearance_order():
    df = pd.DataFrame({"g": ["y", "x", "y"], "v": [0.5, 1.0, None], "s": [True, True, True]})
    t = accuracy_table(df, ["g"], value="v", scored="s", sort=False)
    assert t["g"].tolist() == ["y", "x"]
    assert t["n_correct"].tolist() == [0.5, 1.0] and t["accuracy"].tolist() == [25.0, 100.0]


def test_accuracy_by_code_matches_the_table():
    c, n, excl = accuracy_by_code(np.array([1.0, 0.0, 1.0, 1.0]), np.array([True, True, False, True]),
                                  np.array([0, 0, 1, 3]), 4)
    assert c.tolist() == [1.0, 0.0, 0.0, 1.0] and n.tolist() == [2, 0, 0, 1] and excl.tolist() == [0, 1, 0, 0]


def test_missing_column_is_named():
    with pytest.raises(ValueError, match="columns not in the frame: nope"):
        accuracy_table(FRAME, ["nope"])
