"""data/paper/published.csv: shape, vocabulary, conventions and values re-read from the paper."""
from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest

from voxmem_analysis.reproduce import published as paper
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.reproduce.published import (ARTIFACTS, COLUMN_LABELS, COLUMNS, COMPARATORS, KINDS, ROW_LABELS,
                                   UNITS, lookup, published)

REPO = Path(__file__).resolve().parents[1]
DATA_CSV = REPO / "data" / "paper" / "published.csv"
PKG_CSV = REPO / "voxmem_analysis" / "resources" / "published.csv"

#: Table 12 model names, as printed.
TABLE12 = {
    "Audio-Flamingo-Next", "MiMo-Audio-7B-Instruct", "Baichuan-Audio-7B", "Ultravox-v0.6-Llama-3.1-8B",
    "FireRedAudio-9B", "Phi-4-Multimodal", "Gemma-4-E4B-it", "MiniCPM-o-4.5", "Baichuan-Omni-1.5-7B",
    "Qwen3-Omni-30B-A3B", "Qwen3.8-Omni-Flash", "Gemini-3.1-Pro", "Gemini-3.8-Flash",
    "Qwen3.5-Omni-Plus", "Gemini-2.5-Pro",
}
EVIDENCE = {tx.EVIDENCE_LABELS[e] for e in tx.EVIDENCE_TYPES}


@pytest.fixture(scope="module")
def pub() -> pd.DataFrame:
    return published()


@pytest.fixture(scope="module")
def raw() -> list[dict]:
    with DATA_CSV.open(encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


# --- files --------------------------------------------------------------------------------
def test_two_copies_are_identical():
    assert DATA_CSV.read_bytes() == PKG_CSV.read_bytes(), (
        "data/paper/published.csv and voxmem_analysis/resources/published.csv differ; "
        "run `python -m voxmem_analysis.reproduce.published --sync`")


def test_csv_parses_with_the_documented_columns(pub, raw):
    assert tuple(raw[0].keys()) == COLUMNS
    assert list(pub.columns) == list(COLUMNS) + ["decimals"]
    assert len(pub) == len([r for r in raw if not r["artifact"].startswith("amc_")]) == 436
    assert pub["value"].dtype == float and pub["tolerance"].dtype == float
    assert not pub[list(COLUMNS)].isna().any().any()
    assert all(r[c] != "" for r in raw for c in COLUMNS)


def test_no_duplicate_keys(pub):
    assert not pub.duplicated(["artifact", "row", "column"]).any()


def test_rows_per_artifact(pub):
    assert pub.groupby("artifact").size().to_dict() == {
        "table2": 22, "table13": 54, "judges": 10, "table15": 70, "table16": 24, "table17": 39,
        "table18": 45, "fig5": 17, "fig6": 4, "fig7": 9, "fig8": 11, "fig10": 17, "table20": 80,
        "d5": 5, "groups": 16, "population": 13,
    }
    assert set(pub["artifact"]) == set(ARTIFACTS)


# --- vocabulary -------------------------------------------------------------------------------
def test_enumerated_columns(pub):
    assert set(pub["unit"]) <= set(UNITS)
    assert set(pub["comparator"]) <= set(COMPARATORS)
    assert set(pub["kind"]) <= set(KINDS)


def test_every_label_is_in_the_documented_vocabulary(pub):
    bad = [(a, r, c) for a, r, c in zip(pub["artifact"], pub["row"], pub["column"])
           if r not in ROW_LABELS[a] or c not in COLUMN_LABELS[a]]
    assert bad == []


def test_vocabulary_comes_from_taxonomy_and_table12():
    for a in ARTIFACTS:
        for label in ROW_LABELS[a] | COLUMN_LABELS[a]:
            parts = label.split("|")
            if len(parts) == 2:
                assert parts[0] in tx.BUDGETS
    models = (ROW_LABELS["table15"] | ROW_LABELS["table16"]) - {
        "Mean proprietary (3)", "Mean open-weight (7)", "Mean all (10)", "n", "All", "Always abstain"}
    assert models <= TABLE12 and len(models) == 10
    best = {r.split("|")[1] for r in ROW_LABELS["groups"]} - {"Proprietary", "Open-weight", "Top-3 spread"}
    assert best == {"Qwen3.8-Omni-Flash", "Gemini-3.1-Pro", "Gemini-3.8-Flash"} and best <= TABLE12
    assert set(COLUMN_LABELS["table15"]) == EVIDENCE | {"Overall"}
    assert set(ROW_LABELS["table20"]) == {tx.SUBTYPE_LABELS[s] for s in tx.SUBTYPES} | (
        EVIDENCE - {"Speech Semantics"}) | {"Total"}
    assert set(COLUMN_LABELS["fig10"]) == set(tx.ATTRIBUTION_LABELS.values())


def test_abbreviated_headers_are_stored_with_full_names(pub):
    for short in ("Speaker", "Paraling.", "Environ.", "Speech Sem.", "Sem.", "Spk.", "Para.", "Env.",
                  "Paralinguistic", "Environmental", "All items", "IE (answerable)"):
        assert short not in set(pub["row"]) | set(pub["column"])


# --- conventions --------------------------------------------------------------------------------
def test_units_and_tolerances(pub):
    def tol(a, r, c):
        return pub.set_index(["artifact", "row", "column"]).loc[(a, r, c), "tolerance"]

    approx = pub[pub["comparator"] == "approx"]
    ci = approx["column"].isin(["drop_lo", "drop_hi"])
    assert (approx[(approx["unit"] == "pct") & ~ci & (approx["artifact"] != "fig6")]["tolerance"] == 0.5).all()
    assert (approx[ci]["tolerance"] == 1.0).all()
    assert (pub[pub["artifact"] == "fig6"]["tolerance"] == 1.0).all()
    assert (pub[pub["unit"] == "ratio"]["tolerance"] == 0.01).all()
    assert (pub[pub["unit"] == "count"]["tolerance"] == 0).all()
    assert (pub[pub["unit"] == "kappa"]["tolerance"] == 0.01).all()
    assert (pub[pub["unit"] == "rho"]["tolerance"] == 0.1).all()
    assert tol("d5", "retention", "p") == 1.0 and tol("d5", "change", "p") == 0.0
    lt = pub[pub["comparator"] == "lt"]
    assert list(zip(lt["artifact"], lt["row"], lt["column"])) == [("d5", "change", "p")]
    le = pub[pub["comparator"] == "le"]
    assert len(le) == 13 and set(le["artifact"]) == {"fig10", "groups"}


def test_kinds(pub):
    kind = pub.set_index(["artifact", "row", "column"])["kind"]
    for c in ("drop_lo", "drop_hi", "retention_lo", "retention_hi"):
        assert set(pub[(pub["artifact"] == "table18") & (pub["column"] == c)]["kind"]) == {"emergent"}
    for c in ("8K", "64K", "drop", "retention"):
        assert set(pub[(pub["artifact"] == "table18") & (pub["column"] == c)]["kind"]) == {"calibrated"}
    assert set(pub[pub["artifact"] == "d5"].query("column != 'n'")["kind"]) == {"emergent"}
    assert kind[("table16", "All", "Spearman rho")] == "emergent"
    assert kind[("table16", "Always abstain", "Overall")] == "derived"
    assert kind[("table2", "Audio-native", "Full Audio")] == "derived"
    assert set(pub[pub["row"].str.startswith("Mean ")]["kind"]) == {"derived"}
    t20 = pub[pub["artifact"] == "table20"]
    assert set(t20[(t20["row"] == "Total") | (t20["column"] == "Total")]["kind"]) == {"derived"}
    assert set(t20[(t20["row"] != "Total") & (t20["column"] != "Total")]["kind"]) == {"calibrated"}


def test_value_ranges(pub):
    counts = pub[pub["unit"] == "count"]["value"]
    assert (counts == counts.round()).all() and (counts >= 0).all()
    pct = pub[(pub["unit"] == "pct")]
    assert pct["value"].between(0, 100).all()
    assert pub[pub["unit"] == "ratio"]["value"].between(0, 1).all()
    assert pub[pub["unit"] == "kappa"]["value"].between(0, 1).all()


def test_values_are_stored_as_printed(raw, pub):
    text = {(r["artifact"], r["row"], r["column"]): r["value"] for r in raw}
    assert text[("table13", "TET", "κ")] == "0.950"
    assert text[("table15", "Mean all (10)", "Overall")] == "21.0"
    assert text[("judges", "Other families", "Δ (pp)")] == "1.00"
    assert text[("table13", "All", "n")] == "11978"
    dec = pub.set_index(["artifact", "row", "column"])["decimals"]
    assert dec[("judges", "All", "Agreement")] == 2
    assert dec[("table18", "Speech Semantics", "retention")] == 3
    assert dec[("fig7", "IE", "Bind.")] == 0


# --- values re-read from the paper ------------------------------------------------------------------
SPOT = [
    ("table2", "Speaker Identity", "Full Audio", 69.8),
    ("table2", "Speech Semantics", "Transcript Only", 71.0),
    ("table2", "All", "Δ", 31.0),
    ("table2", "Audio-native", "Transcript Only", 4.4),
    ("table13", "Environmental Sound", "Δ (pp)", 1.1),
    ("table13", "AR", "n", 1949),
    ("table13", "MSR", "κ", 0.978),
    ("judges", "Gemini favoritism", "Δ (pp)", 0.88),
    ("judges", "AR", "Capability refusals", 32),
    ("table15", "Gemini-3.8-Flash", "Speaker Identity", 38.1),
    ("table15", "Baichuan-Audio-7B", "Environmental Sound", 7.1),
    ("table15", "Mean open-weight (7)", "Overall", 17.8),
    ("table16", "Gemini-2.5-Pro", "AR", 67.7),
    ("table16", "Audio-Flamingo-Next", "AR", 3.1),
    ("table16", "All", "Spearman rho", -0.02),
    ("table16", "Always abstain", "Overall", 16.3),
    ("table17", "16K", "Speaker Identity", 14.6),
    ("table17", "64K", "TET", 25.9),
    ("table17", "AR items", "Speaker Identity", 21),
    ("table17", "AR items", "MSR", 49),
    ("table18", "Environmental Sound", "retention_lo", 0.511),
    ("table18", "Speaker Identity", "drop_hi", 15.4),
    ("table18", "Overall", "8K", 30.6),
    ("fig5", "TET", "Environmental Sound", 1.2),
    ("fig5", "IE", "Speaker Identity", 29.0),
    ("fig5", "TET", "Paralinguistic Cues n", 49),
    ("fig6", "Speaker Identity", "64K", 66.5),
    ("fig7", "Environmental Sound", "Unsup.", 39),
    ("fig8", "16K|TET", "Speech Semantics", 52.5),
    ("fig8", "64K|TET", "Environmental Sound", 0.9),
    ("fig10", "Aggregation", "Recog.", 89),
    ("table20", "Cue-to-Fact", "Bind.", 387),
    ("table20", "Paralinguistic Cues", "Total", 1023),
    ("table20", "Latest state", "Cells", 14),
    ("d5", "change", "rho", -0.77),
    ("groups", "32K|Open-weight", "Environmental Sound", 15.5),
    ("groups", "8K|Proprietary", "Overall", 40.1),
    ("groups", "32K|Gemini-3.8-Flash", "Overall", 34.0),
    ("population", "Refusals", "n", 1595),
    ("population", "Operation", "pct", 8.4),
]


@pytest.mark.parametrize("artifact,row,column,value", SPOT)
def test_spot_values(pub, artifact, row, column, value):
    assert lookup(artifact, row, column, published_df=pub) == pytest.approx(value, abs=1e-12)


def test_bounds_are_le(pub):
    row = pub.set_index(["artifact", "row", "column"])
    assert row.loc[("fig10", "Historical state", "Bind."), ["value", "comparator"]].tolist() == [14.0, "le"]
    assert row.loc[("fig10", "Evolution", "Oper."), ["value", "comparator"]].tolist() == [12.0, "le"]
    assert ("fig10", "Counting", "Oper.") in row.index and row.loc[("fig10", "Counting", "Oper."), "comparator"] == "approx"


# --- API -------------------------------------------------------------------------------------------
def test_lookup_aliases_and_errors():
    assert lookup("table2", "Speaker", "Delta") == 59.5
    assert lookup("table15", "Gemini-3.1-Pro", "Speech Sem.") == 68.5
    assert lookup("table17", "64K", "Env.") == 33.0
    assert lookup("table13", "All items", "kappa") == 0.953
    with pytest.raises(KeyError):
        lookup("table15", "Phi-4-Multimodal", "Overall")
    with pytest.raises(KeyError):
        lookup("fig5", "IE", "Speech Semantics")   # excluded by design


def test_published_returns_a_copy():
    a = published()
    a.loc[0, "value"] = -1.0
    assert published().loc[0, "value"] != -1.0


def test_published_reads_an_explicit_path(tmp_path):
    p = tmp_path / "x.csv"
    p.write_bytes(DATA_CSV.read_bytes())
    assert published(p).equals(published())
    assert paper.REPO_CSV == DATA_CSV
