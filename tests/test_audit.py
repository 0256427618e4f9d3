"""The consistency audit of the paper's published numbers (voxmem_analysis.reproduce.paper_audit)."""
from __future__ import annotations

import pandas as pd
import pytest

from voxmem_analysis.reproduce.paper_audit import AUDIT_COLUMNS, audit_published, grim_counts, half_unit
from voxmem_analysis.reproduce.published import published

MODELS = ("Gemini-3.1-Pro", "Gemini-3.8-Flash", "Gemini-2.5-Pro", "Ultravox-v0.6-Llama-3.1-8B",
          "Qwen3-Omni-30B-A3B", "Gemma-4-E4B-it", "Audio-Flamingo-Next", "Baichuan-Audio-7B",
          "Baichuan-Omni-1.5-7B", "FireRedAudio-9B")
EV = ("Speech Semantics", "Speaker Identity", "Paralinguistic Cues", "Environmental Sound")

#: The paper's own inconsistencies: identity -> (lhs, rhs) as computed.
EXPECTED_FAILURES = {
    # 71.0% is not k/195 for any k (138/195 = 70.77, 139/195 = 71.28)
    "table2.grim[Speech Semantics|Transcript Only]": (71.0, 100 * 138 / 195),
    # the All row (23.8% = 159/669) minus 13 + 7 + 1 audio-native leaves 138/195 = 70.8%
    "table2.counts_sem_from_all[Transcript Only]": (71.0, 100 * 138 / 195),
    # hence Δ(Speech Semantics) = (148 − 138)/195 = 5.1, printed 4.9
    "table2.delta_counts[Speech Semantics]": (4.9, 100 * 10 / 195),
    # Δ(All) = (367 − 159)/669 = 31.09 -> 31.1, printed 31.0
    "table2.delta_counts[All]": (31.0, 100 * 208 / 669),
}


@pytest.fixture(scope="module")
def audit() -> pd.DataFrame:
    return audit_published()


def _row(audit, identity):
    hit = audit[audit["identity"] == identity]
    assert len(hit) == 1, identity
    return hit.iloc[0]


def test_shape(audit):
    assert tuple(audit.columns) == AUDIT_COLUMNS
    assert not audit["identity"].duplicated().any()
    assert len(audit) == 309
    assert audit["holds"].dtype == bool
    assert set(audit["relation"]) == {"=", "<=", "<", ">", "overlap"}
    assert (audit["tolerance"] >= 0).all()
    assert audit["detail"].str.len().gt(0).all()


def test_exactly_the_expected_identities_fail(audit):
    failed = set(audit.loc[~audit["holds"], "identity"])
    assert failed == set(EXPECTED_FAILURES)
    for identity, (lhs, rhs) in EXPECTED_FAILURES.items():
        r = _row(audit, identity)
        assert r["lhs"] == pytest.approx(lhs) and r["rhs"] == pytest.approx(rhs, abs=1e-9)
        assert r["delta"] == pytest.approx(lhs - rhs, abs=1e-9)
        assert r["tolerance"] == pytest.approx(0.05)
        assert abs(r["delta"]) > r["tolerance"]


def test_table2_holds_within_printed_rounding_but_not_at_count_level(audit):
    # Interval arithmetic on the printed numbers cannot detect it ...
    for c in ("Full Audio", "Transcript Only"):
        assert _row(audit, f"table2.all_weighted[{c}]")["holds"]
        assert _row(audit, f"table2.audio_native[{c}]")["holds"]
    r = _row(audit, "table2.all_weighted[Transcript Only]")
    assert r["rhs"] == pytest.approx(15954 / 669) and r["tolerance"] == pytest.approx(0.1)
    for r in ("Speaker Identity", "Paralinguistic Cues", "Environmental Sound", "Speech Semantics", "All"):
        assert _row(audit, f"table2.delta[{r}]")["holds"]
    assert _row(audit, "table2.delta[All]")["rhs"] == pytest.approx(31.1)
    # ... the counts can: every other cell of Table 2 is a k/n.
    assert _row(audit, "table2.grim[Speech Semantics|Full Audio]")["holds"]
    assert _row(audit, "table2.counts_sem_from_all[Full Audio]")["holds"]
    assert _row(audit, "table2.audio_native[Full Audio]")["rhs"] == pytest.approx(21900 / 474)


@pytest.mark.parametrize("m", MODELS + ("Mean proprietary (3)", "Mean open-weight (7)", "Mean all (10)"))
def test_table15_overall_is_weighted_mean_of_evidence(audit, m):
    assert _row(audit, f"table15.overall_from_evidence[{m}]")["holds"]


@pytest.mark.parametrize("m", MODELS)
def test_table15_overall_matches_table16_and_counts(audit, m):
    assert _row(audit, f"table15.overall_from_table16[{m}]")["holds"]
    assert _row(audit, f"table15.counts_overall[{m}]")["holds"]
    assert _row(audit, f"table16.counts_overall[{m}]")["holds"]


def test_specific_values(audit):
    r = _row(audit, "table15.overall_from_evidence[Gemini-3.1-Pro]")
    assert r["rhs"] == pytest.approx((68.5 * 232 + 26.5 * 147 + 19.7 * 264 + 15.4 * 156) / 799)
    assert r["tolerance"] == pytest.approx(0.1)
    r = _row(audit, "table15.overall_from_table16[Gemini-2.5-Pro]")
    assert r["rhs"] == pytest.approx((12.0 * 669 + 67.7 * 130) / 799)
    assert _row(audit, "table15.counts_overall[Gemini-3.1-Pro]")["lhs"] == 274
    r = _row(audit, "table18.drop[Speaker Identity]")      # 34.8 − 23.1 = 11.7, printed 11.6
    assert r["rhs"] == pytest.approx(11.7) and r["tolerance"] == pytest.approx(0.15) and r["holds"]
    r = _row(audit, "table18.retention[Environmental Sound]")   # 12.4/19.7 = 0.6294, printed 0.632
    assert r["rhs"] == pytest.approx(12.4 / 19.7)
    assert r["tolerance"] == pytest.approx(0.0005 + (12.45 / 19.65 - 12.4 / 19.7), rel=1e-9)
    assert r["holds"]
    r = _row(audit, "table13.delta[Environmental Sound]")      # 20.7 − 19.7 = 1.0, printed 1.1
    assert r["rhs"] == pytest.approx(1.0) and r["holds"]
    r = _row(audit, "judges.favoritism")
    assert (r["lhs"], r["rhs"]) == (0.88, pytest.approx(0.87)) and r["tolerance"] == pytest.approx(0.015)
    assert r["holds"]
    assert _row(audit, "table16.spearman_from_columns")["rhs"] == pytest.approx(-0.0213, abs=1e-4)
    assert _row(audit, "table16.always_abstain")["rhs"] == pytest.approx(100 * 130 / 799)
    assert _row(audit, "counts64k.ar_table16_vs_table17_evidence")["lhs"] == 399
    assert _row(audit, "counts64k.audio_native_correct_vs_population")["rhs"] == 603
    assert _row(audit, "counts64k.answerable_table15_vs_table16")["rhs"] == 1278


def test_brief_identities_hold(audit):
    ids = [f"table15.mean_row[{g}|{c}]" for g in ("Mean proprietary (3)", "Mean open-weight (7)", "Mean all (10)")
           for c in EV + ("Overall",)]
    ids += [f"table18.64k_eq_table15[{r}]" for r in EV + ("Overall",)]
    ids += [f"table18.{k}[{r}]" for k in ("drop", "retention") for r in EV + ("Overall",)]
    ids += ["table13.n_sum[evidence]", "table13.n_sum[operation]"]
    ids += [f"table13.delta[{r}]" for r in ("All",) + EV + ("IE", "MSR", "TET", "AR")]
    ids += ["population.attempts", "population.attributed", "table20.total_eq_population",
            "judges.favoritism", "table17.ar_items[evidence]", "table17.ar_items[operation]"]
    ids += [f"table20.row_sum[{r}]" for r in ("Context-to-Cue", "Cue-to-Fact", "Counting", "Matching",
                                              "Aggregation", "Latest state", "Historical state", "Evolution",
                                              "Speaker Identity", "Paralinguistic Cues",
                                              "Environmental Sound", "Total")]
    ids += [f"table20.col_sum[{g}|{c}]" for g in ("subtype", "evidence")
            for c in ("Recog.", "Bind.", "Oper.", "Unsup.", "N.a.", "Total")]
    ids += [f"table17.groupings_agree[{b}]" for b in ("8K", "16K", "32K", "64K")]
    ids += [f"fig6.retention_eq_table18[{e}]" for e in EV]
    rows = audit.set_index("identity").loc[ids]
    assert rows["holds"].all(), rows[~rows["holds"]]


# --- the rounding rule ---------------------------------------------------------------------------
def test_half_unit_and_grim():
    assert half_unit(1, "pct") == 0.05 and half_unit(3, "ratio") == 0.0005 and half_unit(0, "pct") == 0.5
    assert half_unit(0, "count") == 0.0
    assert grim_counts(71.0, 195, 0.05) == []
    assert grim_counts(70.8, 195, 0.05) == [138]
    assert grim_counts(35.0, 420, 0.05) == [147]
    assert grim_counts(0.0, 10, 0.05) == [0]


def test_audit_detects_a_perturbation():
    pub = published()
    sel = (pub["artifact"] == "table20") & (pub["row"] == "Cue-to-Fact") & (pub["column"] == "Bind.")
    pub.loc[sel, "value"] = 388.0
    out = audit_published(pub).set_index("identity")
    assert not out.loc["table20.row_sum[Cue-to-Fact]", "holds"]
    assert not out.loc["table20.col_sum[subtype|Bind.]", "holds"]
    assert out.loc["table20.col_sum[evidence|Bind.]", "holds"]


def test_audit_without_decimals_column_uses_unit_defaults(audit):
    pub = published().drop(columns="decimals")
    out = audit_published(pub)
    assert list(out["identity"]) == list(audit["identity"])
    # judges' 97.95 and 0.88 fall back to one decimal / pct defaults: same verdicts here
    assert set(out.loc[~out["holds"], "identity"]) == set(EXPECTED_FAILURES)


def test_default_argument_is_the_packaged_csv(audit):
    pd.testing.assert_frame_equal(audit_published(published()), audit)
