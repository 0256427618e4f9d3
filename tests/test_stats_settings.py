"""stats/settings.py: one settings object, passed whole; its progress callback; no rewritten signatures."""
from __future__ import annotations

import inspect

import numpy as np
import pandas as pd
import pytest

from voxmem_analysis.analysis.verdicts import compare_systems, scaling_table, slice_accuracy
from voxmem_analysis.errors import StatsInputError
from voxmem_analysis.stats import BootstrapSettings, PairedSettings, paired_bootstrap_frame


def _long(n: int = 30) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"question_id": np.tile(np.arange(n), 2), "model": "A",
                         "budget": ["8K"] * n + ["64K"] * n, "correct": rng.random(2 * n) < 0.5})


def test_progress_is_called_as_blocks_of_resamples_complete():
    calls = []
    out = paired_bootstrap_frame(_long(), settings=PairedSettings(n_boot=2500, statistics="drop",
                                                                  progress=lambda d, t: calls.append((d, t))))
    assert calls == [(1000, 2500), (2000, 2500), (2500, 2500)]
    quiet = paired_bootstrap_frame(_long(), settings=PairedSettings(n_boot=2500, statistics="drop"))
    pd.testing.assert_frame_equal(out, quiet)                                  # it only reports
    with pytest.raises(StatsInputError, match="progress must be None or a callable"):
        paired_bootstrap_frame(_long(), settings=PairedSettings(progress="yes"))


def test_one_object_and_no_rewritten_signature():
    """The label-free functions take the settings whole (``settings=``); their signatures are their own (the old
    decorator rewrote ``__signature__`` to show five more keywords)."""
    for f in (slice_accuracy, compare_systems, scaling_table, paired_bootstrap_frame):
        assert not hasattr(f, "__wrapped__") and "n_boot" not in inspect.signature(f).parameters
        assert "settings" in inspect.signature(f).parameters
    run = BootstrapSettings(n_boot=300, seed=4, ci_level=0.9)
    assert run.paired("drop", None) == PairedSettings(n_boot=300, seed=4, ci_level=0.9, statistics="drop",
                                                      aggregate=None)
