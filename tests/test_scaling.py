"""voxmem_analysis.analysis.scaling: hand-computed values, Spearman vs SciPy, bootstrap intervals vs scipy.stats.bootstrap."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from voxmem_analysis import artifacts, load_release
from voxmem_analysis.analysis import scaling as S

FIX = Path(__file__).parent / "fixtures" / "results_tiny"
EV = ("speech_semantics", "speaker_information", "paralinguistic_information", "environmental_sound")


@pytest.fixture(scope="module")
def rel():
    return load_release(FIX)


# --------------------------------------------------------------------------- hand-computed (fixture)
def test_evidence_scaling_fixture(rel):
    es = S.evidence_scaling(rel)
    assert set(es.loc[es["evidence_type"] == "overall", "n_models"]) == {2}  # the 64K set, at every budget
    assert set(es.loc[es["evidence_type"] == "environmental_sound", "n_models"]) == {1}  # B lost q4
    o = es[es["evidence_type"] == "overall"].set_index("budget")
    np.testing.assert_allclose(o.loc[["8K", "16K", "32K", "64K"], "accuracy"], [50, 60, 50, 40])
    np.testing.assert_allclose(o.loc[["8K", "16K", "32K", "64K"], "retention"], [1, 1.2, 1, 0.8])
    p = es[es["evidence_type"] == "paralinguistic_information"].set_index("budget")
    # A: q6 only (0,1,1,1); B: q3,q6 (8K 1,0 -> 50; 64K 1,1 -> 100): mean 25 -> 100
    assert p.loc["8K", "accuracy"] == pytest.approx(25.0)
    assert p.loc["64K", "retention"] == pytest.approx(4.0)  # a gain stays a gain
    f = artifacts.compute("fig6", rel)
    assert f.loc["Overall", "64K"] == pytest.approx(80.0)
    assert f.loc["Overall", "64K accuracy"] == pytest.approx(40.0)


def test_paired_change_estimates_fixture(rel):
    pc = S.paired_change(rel, n_boot=500, seed=1).set_index("key")
    assert pc.loc["overall", "baseline"] == pytest.approx(50.0)
    assert pc.loc["overall", "comparison"] == pytest.approx(40.0)
    assert pc.loc["overall", "change"] == pytest.approx(-10.0)
    assert pc.loc["overall", "retention"] == pytest.approx(0.8)
    assert pc.loc["Model-A", "change"] == pytest.approx(-20.0)
    assert pc.loc["Model-A", "retention"] == pytest.approx(2 / 3)
    assert pc.loc["Model-A", "n"] == 5
    assert pc.loc["paralinguistic_information", "change"] == pytest.approx(75.0)  # a gain is kept
    assert pc.loc["paralinguistic_information", "retention"] == pytest.approx(4.0)
    assert "Model-C" not in pc.index
    for c in ("change", "retention"):
        ok = pc[c].notna() & pc[f"{c}_ci_low"].notna()
        assert (pc.loc[ok, f"{c}_ci_low"] <= pc.loc[ok, c] + 1e-9).all()
        assert (pc.loc[ok, f"{c}_ci_high"] >= pc.loc[ok, c] - 1e-9).all()
    t = artifacts.compute("table18", rel, n_boot=300)
    full = S.paired_change(rel, n_boot=300)
    # Table 18 prints the paper's drop: exactly the negated change, bounds swapped
    assert (t["drop"].to_numpy() == -full["change"].to_numpy()).all()
    assert (t["drop_lo"].to_numpy() == -full["change_ci_high"].to_numpy()).all()
    assert (t["drop_hi"].to_numpy() == -full["change_ci_low"].to_numpy()).all()
    assert list(t.columns) == ["n", "8K", "64K", "drop", "drop_lo", "drop_hi", "retention", "retention_lo",
                               "retention_hi"]
    assert list(t.index[:5]) == ["Speech Semantics", "Speaker Identity", "Paralinguistic Cues",
                                 "Environmental Sound", "Overall"]


def test_cells_and_spearman_vs_scipy(rel):
    cells = S.cell_changes(rel)
    a = cells.set_index(["model", "evidence_type"])
    assert a.loc[("Model-A", "speech_semantics"), "baseline"] == 100.0
    assert a.loc[("Model-A", "speech_semantics"), "comparison"] == 50.0
    assert np.isnan(a.loc[("Model-B", "speaker_information"), "retention"])  # 0 at 8K
    assert "drop" not in cells.columns        # one sign: change = comparison - baseline
    sc = S.sensitivity_correlations(rel, cells=cells, measures=("retention", "change")).set_index("measure")
    with pytest.raises(ValueError, match="measure must be"):
        S.sensitivity_correlations(rel, cells=cells, measures=("drop",))
    for m in ("retention", "change"):
        ok = cells["baseline"].notna() & cells[m].notna()
        ref = st.spearmanr(cells.loc[ok, "baseline"], cells.loc[ok, m])
        assert sc.loc[m, "rho"] == pytest.approx(ref.statistic)
        assert sc.loc[m, "p_value"] == pytest.approx(ref.pvalue)
        assert sc.loc[m, "n"] == ok.sum()
    d = artifacts.compute("d5", rel)
    assert d.loc["cells", "n"] == 7
    assert d.loc["change", "rho"] == pytest.approx(sc.loc["change", "rho"])  # the paper's sign (64K - 8K)
    assert d.loc["retention", "n"] == 4


# --------------------------------------------------------------------------- bootstrap vs SciPy
def _write_random_release(root: Path, n_items: int = 240, seed: int = 7) -> dict:
    """Two 64K-set models, every item judged at 8K and 64K; returns the correctness vectors."""
    rng = np.random.default_rng(seed)
    ev = np.array(EV)[rng.integers(0, 4, n_items)]
    latent = rng.normal(size=n_items)
    vecs = {}
    lines = []
    for m, (a8, a64) in {"M1": (0.3, -0.3), "M2": (-0.2, -0.6)}.items():
        c8 = (latent + rng.normal(scale=0.8, size=n_items) < a8).astype(int)
        c64 = ((latent + rng.normal(scale=0.8, size=n_items) < a64) & (rng.random(n_items) < 0.95)).astype(int)
        vecs[m] = (c8, c64)
        for b, c in (("8K", c8), ("64K", c64)):
            for i in range(n_items):
                q = f"q_{i:05d}"
                lines.append({"item_id": f"{q}_{b.lower()}", "question_id": q, "context_length": b,
                              "evidence_type": ev[i], "memory_operation": "multi_session_reasoning",
                              "subtype": "counting", "expected_response": "answer", "model": m,
                              "allow_abstention": True, "response": "x", "verdict": bool(c[i])})
    (root / "predictions").mkdir(parents=True)
    (root / "predictions" / "all.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (root / "models.csv").write_text("model,family,access,architecture,llm_params_b,total_params_b,in_64k_set,order\n"
                                     "M1,F,proprietary,api,,,true,1\nM2,G,open_weight,api,,,true,2\n")
    return {"vecs": vecs, "ev": ev}


@pytest.fixture(scope="module")
def random_release(tmp_path_factory):
    root = tmp_path_factory.mktemp("rand_release")
    info = _write_random_release(root)
    return load_release(root), info


def _scipy_ci(samples, stat):
    res = st.bootstrap(samples, stat, paired=True, vectorized=False, method="percentile", n_resamples=10_000,
                       confidence_level=0.95, random_state=np.random.default_rng(123))
    return res.confidence_interval.low, res.confidence_interval.high


def _close(ours, theirs, width):
    # Monte-Carlo error of a 2.5% / 97.5% percentile with 10,000 resamples is ~1% of the interval
    # width per side; allow 6% of the width (about 4 standard errors of the difference).
    assert abs(ours - theirs) <= 0.06 * width, (ours, theirs, width)


def test_per_model_intervals_match_scipy(random_release):
    rel, info = random_release
    pc = S.paired_change(rel, n_boot=10_000, seed=0).set_index("key")
    for m, (c8, c64) in info["vecs"].items():
        change = lambda a, b: 100 * (b.mean() - a.mean())  # noqa: E731
        ret = lambda a, b: b.mean() / a.mean()  # noqa: E731
        assert pc.loc[m, "change"] == pytest.approx(change(c8, c64))
        assert pc.loc[m, "retention"] == pytest.approx(ret(c8, c64))
        for name, f in (("change", change), ("retention", ret)):
            lo, hi = _scipy_ci((c8, c64), f)
            _close(pc.loc[m, f"{name}_ci_low"], lo, hi - lo)
            _close(pc.loc[m, f"{name}_ci_high"], hi, hi - lo)


def test_mean_over_models_intervals_match_scipy(random_release):
    rel, info = random_release
    pc = S.paired_change(rel, n_boot=10_000, seed=0).set_index("key")
    (a8, a64), (b8, b64) = info["vecs"]["M1"], info["vecs"]["M2"]
    change = lambda w, x, y, z: 100 * ((x.mean() + z.mean()) / 2 - (w.mean() + y.mean()) / 2)  # noqa: E731
    ret = lambda w, x, y, z: (x.mean() + z.mean()) / (w.mean() + y.mean())  # noqa: E731
    for key, mask in (("overall", np.ones(len(a8), bool)), ("speaker_information", info["ev"] == "speaker_information")):
        samples = tuple(v[mask] for v in (a8, a64, b8, b64))
        assert pc.loc[key, "change"] == pytest.approx(change(*samples))
        assert pc.loc[key, "retention"] == pytest.approx(ret(*samples))
        assert pc.loc[key, "n"] == mask.sum()
        for name, f in (("change", change), ("retention", ret)):
            lo, hi = _scipy_ci(samples, f)
            _close(pc.loc[key, f"{name}_ci_low"], lo, hi - lo)
            _close(pc.loc[key, f"{name}_ci_high"], hi, hi - lo)


def test_bootstrap_is_seeded(random_release):
    rel, _ = random_release
    a = S.paired_change(rel, n_boot=400, seed=3)
    b = S.paired_change(rel, n_boot=400, seed=3)
    c = S.paired_change(rel, n_boot=400, seed=4)
    pd.testing.assert_frame_equal(a, b)
    assert not np.allclose(a["change_ci_low"], c["change_ci_low"])
