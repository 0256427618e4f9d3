"""analysis/amc.py: table labels (``model|modality``, the model alone when the modality is unknown); Table 4 with
Holm's adjustment over its per-system McNemar tests, named; the Table 2 layout's ARS interval drawn within axes."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from voxmem_analysis.analysis import amc as A
from voxmem_analysis.analysis.amc import amc_table2
from voxmem_analysis.io.amc import load_amc
from voxmem_analysis.io import load_amc_runs
from voxmem_analysis.stats import holm

ROOT = Path(__file__).resolve().parents[1]
AMC = ROOT / "data" / "examples" / "amc_run"
AMC_DATA = ROOT / "data" / "synthetic-amc"


@pytest.fixture(scope="module")
def release():
    return load_amc(AMC_DATA)


def test_table2_rows_without_a_modality_have_no_stray_separator(tmp_path):
    man = tmp_path / "m.csv"
    man.write_text(f"path,system\n{AMC / 'results' / 'synth-e2e-audio.jsonl'},Qwen3-Omni-Instruct\n")
    rel, _ = load_amc_runs(man, AMC / "tasks.jsonl", strict=False).as_release()
    assert list(amc_table2(rel, n_boot=0).index) == ["Qwen3-Omni-Instruct"]


def test_table4_adjusts_its_per_system_tests_and_names_the_family(release):
    t = A.amc_table4(release)
    per_system = t["p (McNemar)"].notna().to_numpy()
    assert per_system.sum() >= 2 and not per_system.all()               # 4a has p-values, 4b none
    np.testing.assert_allclose(t.loc[per_system, "p (Holm)"], holm(t.loc[per_system, "p (McNemar)"])["p_adjusted"])
    assert t["p (Holm)"][~per_system].isna().all()
    assert (t.loc[per_system, "Holm family"] == f"the {per_system.sum()} per-system McNemar tests (4a)").all()
    assert (t["p (Holm)"][per_system] >= t["p (McNemar)"][per_system]).all()


def test_table2_ars_interval_is_stratified_by_axis(release):
    """The Table 2 layout's ARS interval is the slice table's (tasks drawn within axes): replacing every task's axis
    by one value changes it."""
    t2 = A.apr_ars(release, n_boot=400, seed=1)
    flat = release.frame().assign(axis="IM")
    one = A.apr_ars(flat, n_boot=400, seed=1)
    assert (t2["ARS"].to_numpy() == pytest.approx(one["ARS"].to_numpy()))
    assert not np.allclose(t2["ARS_lo"], one["ARS_lo"])
