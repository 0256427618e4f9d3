"""The synthetic design reads the paper's numbers from published.csv, never re-types them."""
from __future__ import annotations

import pytest

from voxmem_analysis.reproduce import published as paper
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.synth import check
from voxmem_analysis.synth import design as D


def test_every_target_is_the_published_number():
    targets = D.targets()
    assert len(targets) == 173
    for t in targets:
        assert t.value == paper.lookup(t.artifact, t.row, t.column), (t.artifact, t.row, t.column)
    # one target per published cell
    assert len({(t.artifact, t.row, t.column) for t in targets}) == len(targets)


def test_dict_shapes_hold_published_values():
    assert D.TABLE15["Gemini-3.1-Pro"] == (68.5, 26.5, 19.7, 15.4, 34.3)
    assert list(D.TABLE15)[:4] == ["Gemini-3.1-Pro", "Gemini-3.8-Flash", "Ultravox-v0.6-Llama-3.1-8B",
                                   "Gemini-2.5-Pro"]                        # printed order
    assert set(D.TABLE15) == set(D.TABLE16) == set(D.SET64)
    models, vals = D.TABLE15_MEANS["Mean open-weight (7)"]
    assert models == D.OPEN64 and vals == (26.0, 21.8, 12.3, 11.0, 17.8)
    assert D.TABLE16["Gemini-2.5-Pro"] == (12.0, 67.7)
    assert D.TABLE17["64K"] == (28.9, 21.9, 35.0, 33.0, 31.9, 32.9, 25.9)
    assert D.TABLE18["overall"] == (799, 30.6, 21.0, 9.6, 8.3, 11.0, 0.685, 0.653, 0.718)
    assert isinstance(D.TABLE18[D.SEM][0], int)
    assert D.RETENTION == {D.SEM: 0.703, D.SPK: 0.665, D.PARA: 0.698, D.ENV: 0.632, "overall": 0.685}
    assert len(D.FIG5_32K) == 11 and D.FIG5_32K[D.IE, D.SPK] == 29.0
    assert D.FIG8[D.TET, D.ENV, "64K"] == 0.9 and len(D.FIG8) == 11
    assert D.GROUP_MEANS["8K", "open_weight"] == {"overall": 26.6}
    assert D.GROUP_MEANS["32K", "proprietary"] == {"overall": 33.0, D.SEM: 55.6, D.SPK: 32.7,
                                                   D.PARA: 20.0, D.ENV: 21.9}
    assert D.TOP3_32K == {"Qwen3.8-Omni-Flash": 38.5, "Gemini-3.1-Pro": 35.9, "Gemini-3.8-Flash": 34.0}
    assert D.TABLE13_8K["all"] == (11978, 31.1) and D.TABLE13_8K[D.AR] == (1949, 29.4)
    assert D.D5 == {"attempts": 4740, "incorrect": 4137}


def test_missing_published_cell_raises_keyerror_naming_it(monkeypatch):
    full = D._published()
    gone = ("table16", "Gemma-4-E4B-it", "AR")
    monkeypatch.setattr(D, "_published", lambda: {k: v for k, v in full.items() if k != gone})
    with pytest.raises(KeyError, match=r"artifact='table16', row='Gemma-4-E4B-it', column='AR'"):
        D._build()
    with pytest.raises(KeyError, match="table15"):
        D.published_value("table15", "No-Such-Model", "Overall")


def test_cell_sizes_reproduce_published_margins():
    ans = {ev: sum(n for (op, e), n in D.ANS_CELLS.items() if e == ev) for ev in tx.EVIDENCE_TYPES}
    ar = {ev: sum(n for (e, src), n in D.AR_CELLS.items() if e == ev) for ev in tx.EVIDENCE_TYPES}
    for ev in tx.EVIDENCE_TYPES:
        label = tx.EVIDENCE_LABELS[ev]
        assert ans[ev] + ar[ev] == paper.lookup("table15", "n", label)
        assert ar[ev] == paper.lookup("table17", "AR items", label)
    for src in tx.ANSWERABLE_OPERATIONS:
        n = sum(k for (e, s), k in D.AR_CELLS.items() if s == src)
        assert n == paper.lookup("table17", "AR items", tx.OPERATION_LABELS[src])
    assert sum(D.ANS_CELLS.values()) == paper.lookup("table16", "n", "Answerable")
    assert sum(D.AR_CELLS.values()) == paper.lookup("table16", "n", "AR")
    for ev in (D.PARA, D.ENV):
        assert D.ANS_CELLS[D.TET, ev] == paper.lookup("fig5", "TET", f"{tx.EVIDENCE_LABELS[ev]} n")
    audio_native = sum(n for (op, ev), n in D.ANS_CELLS.items() if ev != D.SEM)
    assert audio_native == paper.lookup("population", "Answerable audio-native items", "n")
    # Table 13 n: every 8K prediction of the 15 models minus the provider rejections
    for ev in tx.EVIDENCE_TYPES:
        scored = sum(D.denom(m, c) for m in D.MODEL_NAMES for c in D.CELLS if c[0] == ev)
        assert scored == paper.lookup("table13", tx.EVIDENCE_LABELS[ev], "n")


def _fake_rows(*cells):
    return lambda source, **kw: [dict(artifact=a, row=r, column=c, reproduced=v) for a, r, c, v in cells]


def test_check_takes_value_and_tolerance_from_published(monkeypatch):
    monkeypatch.setattr(check, "reproduced_values", _fake_rows(
        ("table16", "Gemini-2.5-Pro", "AR", 67.4), ("d5", "change", "p", 0.0004),
        ("groups", "8K|Top-3 spread", "Overall", 0.93), ("table18", "Overall", "drop_lo", 9.2)))
    rep = check.calibration_report(None).set_index(["artifact", "row", "column"])
    assert rep["published"].tolist() == [67.7, 0.001, 0.9, 8.3]
    assert rep["kind"].tolist() == ["calibrated", "emergent", "emergent", "emergent"]
    assert rep["within_tolerance"].tolist() == [True, True, True, True]
    # a tighter tolerance in the paper's table is honoured
    pub = paper.published()
    pub.loc[(pub["artifact"] == "table16") & (pub["row"] == "Gemini-2.5-Pro") & (pub["column"] == "AR"),
            "tolerance"] = 0.1
    monkeypatch.setattr(check.paper, "published", lambda: pub)
    rep = check.calibration_report(None)
    assert not rep.loc[0, "within_tolerance"]


def test_check_rejects_numbers_the_paper_lacks(monkeypatch):
    monkeypatch.setattr(check, "reproduced_values", _fake_rows(("table16", "All", "Median", 1.0)))
    with pytest.raises(KeyError, match=r"artifact='table16', row='All', column='Median'"):
        check.calibration_report(None)
