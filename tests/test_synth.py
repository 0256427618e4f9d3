"""The SYNTHETIC release: deterministic, the paper's item bank, calibrated to the paper."""
from __future__ import annotations

import filecmp
import gzip
import json
import pathlib

import polars as pl
import pytest

from voxmem_analysis.synth import DEFAULT_SEED, write_release
from voxmem_analysis.synth import design as D
from voxmem_analysis.synth.check import calibration_report

REPO = pathlib.Path(__file__).resolve().parents[1]
COMMITTED = REPO / "data" / "synthetic"


@pytest.fixture(scope="module")
def regenerated(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth") / "release"
    write_release(out, seed=DEFAULT_SEED)
    return out


def _files(root: pathlib.Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_regeneration_is_byte_identical(regenerated):
    assert json.loads((COMMITTED / "release.json").read_text())["seed"] == DEFAULT_SEED
    assert _files(regenerated) == _files(COMMITTED)
    for rel in _files(COMMITTED):
        assert filecmp.cmp(regenerated / rel, COMMITTED / rel, shallow=False), rel


def test_marked_synthetic():
    assert json.loads((COMMITTED / "release.json").read_text())["synthetic"] is True
    assert "synthetic" in (COMMITTED / "README.md").read_text().lower()
    for path in (COMMITTED / "predictions").rglob("*.jsonl.gz"):
        lines = gzip.decompress(path.read_bytes()).decode().splitlines()
        assert all(json.loads(x)["synthetic"] is True for x in lines[:50]), path


@pytest.fixture(scope="module")
def items():
    return pl.read_csv(COMMITTED / "items.csv", infer_schema_length=None)


def test_item_bank(items):
    assert items.height == 3196
    q = items.filter(pl.col("context_length") == "8K")
    assert q.height == 799
    by_ev = dict(q.group_by("evidence_type").len().iter_rows())
    assert by_ev == {D.SEM: 232, D.SPK: 147, D.PARA: 264, D.ENV: 156}
    ans = q.filter(pl.col("expected_response") == "answer")
    ar = q.filter(pl.col("expected_response") == "insufficient_evidence")
    assert dict(ans.group_by("evidence_type").len().iter_rows()) == {D.SEM: 195, D.SPK: 126, D.PARA: 222, D.ENV: 126}
    assert dict(ar.group_by("evidence_type").len().iter_rows()) == {D.SEM: 37, D.SPK: 21, D.PARA: 42, D.ENV: 30}
    assert dict(ans.group_by("memory_operation").len().iter_rows()) == {D.IE: 230, D.MSR: 221, D.TET: 218}
    assert ans.filter((pl.col("evidence_type") == D.SEM) & (pl.col("memory_operation") == D.IE)).height == 0
    tet = ans.filter(pl.col("memory_operation") == D.TET)
    assert tet.filter(pl.col("evidence_type") == D.PARA).height == 49
    assert tet.filter(pl.col("evidence_type") == D.ENV).height == 32
    # refusal items: linked to a distinct answerable source of the same evidence type and family
    src = ans.select(["question_id", pl.col("memory_operation").alias("src_op"),
                      pl.col("evidence_type").alias("src_ev"), pl.col("family_id").alias("src_fam"),
                      pl.col("subtype").alias("src_sub")])
    j = ar.join(src, left_on="paired_question_id", right_on="question_id", how="left")
    assert j["src_op"].null_count() == 0
    assert j["paired_question_id"].n_unique() == 130
    assert (j["evidence_type"] == j["src_ev"]).all() and (j["family_id"] == j["src_fam"]).all()
    assert (j["subtype"] == j["src_sub"]).all()
    assert dict(j.group_by("src_op").len().iter_rows()) == {D.IE: 47, D.MSR: 49, D.TET: 34}
    # subtypes on the right operations
    from voxmem_analysis.taxonomy import SUBTYPE_OPERATION
    assert all(SUBTYPE_OPERATION[s] == o for s, o in ans.select(["subtype", "memory_operation"]).iter_rows())
    assert ans["subtype"].n_unique() == 8
    # same-key distractors <= 1/2/4/8 and nested growth of the history
    lim = {"8K": 1, "16K": 2, "32K": 4, "64K": 8}
    for b, n in lim.items():
        assert items.filter(pl.col("context_length") == b)["samekey_haystack_session_count"].max() <= n
    w = items.pivot(on="context_length", index="question_id", values="session_count")
    assert ((w["8K"] < w["16K"]) & (w["16K"] < w["32K"]) & (w["32K"] < w["64K"])).all()
    mins = items.group_by("context_length").agg(pl.col("history_duration_seconds").mean() / 60)
    d = dict(mins.iter_rows())
    assert 2.2 < d["8K"] < 2.8 and 18 < d["64K"] < 21


def _preds(budget: str) -> pl.DataFrame:
    frames = []
    for path in sorted((COMMITTED / "predictions").rglob(f"predictions_{budget.lower()}.jsonl.gz")):
        rows = [json.loads(x) for x in gzip.decompress(path.read_bytes()).decode().splitlines()]
        frames.append(pl.DataFrame([{k: r.get(k) for k in ("model", "item_id", "response", "verdict", "error",
                                                              "evidence_type", "memory_operation")}
                                    for r in rows], schema_overrides={"verdict": pl.Boolean, "response": pl.Utf8,
                                                                      "error": pl.Utf8}))
    return pl.concat(frames)


def test_models_and_statuses():
    models = pl.read_csv(COMMITTED / "models.csv")
    assert models.height == 15 and models["in_64k_set"].cast(pl.Utf8).str.to_lowercase().eq("true").sum() == 10
    assert models.filter(pl.col("access") == "proprietary").height == 5
    p8 = _preds("8K")
    assert p8.height == 15 * 799
    rej = p8.filter(pl.col("error").fill_null("").str.starts_with("provider rejected"))
    assert rej.height == 7 and rej["response"].null_count() == 7 and rej["verdict"].null_count() == 7
    assert dict(rej.group_by("evidence_type").len().iter_rows()) == {D.SEM: 2, D.SPK: 3, D.PARA: 2}
    assert dict(rej.group_by("memory_operation").len().iter_rows()) == {D.IE: 3, D.MSR: 2, D.TET: 1, D.AR: 1}
    failed = p8.filter(pl.col("error").fill_null("").str.starts_with("generation failed"))
    ungraded = p8.filter(pl.col("response").is_not_null() & pl.col("verdict").is_null())
    assert failed.height == 3 and failed["verdict"].null_count() == 3
    assert ungraded.height == 2
    assert _preds("64K")["model"].n_unique() == 10


@pytest.fixture(scope="module")
def report():
    return calibration_report(COMMITTED, n_boot=10_000, seed=0)


def test_every_calibrated_number_within_tolerance(report):
    cal = report[report["kind"] == "calibrated"]
    assert len(cal) > 150
    bad = cal[~cal["within_tolerance"]]
    assert bad.empty, bad.to_string()
    pct = cal[cal["column"].isin(["8K", "64K", "Overall", "Answerable", "AR"])]
    assert (pct["delta"].abs() <= 0.5).all()


def test_emergent_numbers(report):
    em = report.set_index(["artifact", "row", "column"])
    assert em.loc[("population", "Incorrect", "n"), "reproduced"] == 4137
    assert em.loc[("population", "Attempts", "n"), "reproduced"] == 4740
    assert abs(em.loc[("d5", "retention", "rho"), "delta"]) <= 0.1
    assert abs(em.loc[("d5", "change", "rho"), "delta"]) <= 0.1
    assert abs(em.loc[("table16", "All", "Spearman rho"), "delta"]) <= 0.1
    assert em.loc[("groups", "8K|Top-3 spread", "Overall"), "reproduced"] <= 0.9
    ci = report[(report["artifact"] == "table18") & report["column"].str.endswith(("_lo", "_hi"))]
    assert len(ci) == 20 and ci["within_tolerance"].all(), ci.to_string()


def test_a_failing_part_raises_and_writes_nothing(tmp_path, monkeypatch):
    from voxmem_analysis.synth import attribution as SA

    def broken(*args, **kwargs):
        raise RuntimeError("attribution generator broke")

    monkeypatch.setattr(SA, "make_attribution", broken)
    out = tmp_path / "release"
    (out / "predictions").mkdir(parents=True)
    (out / "predictions" / "old.jsonl").write_text("{}\n")
    with pytest.raises(RuntimeError, match="attribution generator broke"):
        write_release(out, seed=DEFAULT_SEED)
    assert _files(out) == ["predictions/old.jsonl"]          # the existing release is left as it was


def test_parts_opt_out_is_explicit_and_recorded(tmp_path):
    from voxmem_analysis.synth.release import PARTS

    with pytest.raises(ValueError, match="unknown synth part"):
        write_release(tmp_path / "x", parts=("attribution", "judge3"))
    assert not (tmp_path / "x").exists()
    out = write_release(tmp_path / "bare", seed=DEFAULT_SEED, parts=())
    assert not any((out / p).exists() for p in PARTS)
    assert json.loads((out / "release.json").read_text())["parts_omitted"] == list(PARTS)
    assert "parts_omitted" not in json.loads((COMMITTED / "release.json").read_text())


def test_counts_file_round_trips(tmp_path):
    """synth/counts.json (the calibrated correct counts, stored as data) is read and rewritten byte for byte."""
    from voxmem_analysis.synth.counts import COUNTS_PATH, read_counts, write_counts

    counts = read_counts()
    assert len(counts) == 1210 and counts[("Audio-Flamingo-Next", "8K", ("speech_semantics", "multi_session_reasoning",
                                                                        "multi_session_reasoning"))] == 34
    write_counts(counts, tmp_path / "counts.json")
    assert (tmp_path / "counts.json").read_bytes() == COUNTS_PATH.read_bytes()
