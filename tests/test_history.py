"""voxmem_analysis.analysis.design: hand-computed history scale and nesting checks on a tiny release,
the design counts of §3 / Table 3 and Tables 12 / 14 on the synthetic release, and what the
two figures draw."""
from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from conftest import SYNTHETIC, harness_line, write_jsonl
from voxmem_analysis import artifacts, load_release
from voxmem_analysis.analysis import design as H

_HEAD = ("item_id,question_id,context_length,family_id,evidence_type,memory_operation,subtype,expected_response,"
         "paired_question_id,answer_type,evidence_session_ids,session_count,evidence_session_count,filler_session_count,"
         "topical_haystack_session_count,samekey_haystack_session_count,history_audio_tokens,history_duration_seconds")
_IE = "fam_00009,speaker_information,information_extraction,cue_to_fact,answer,,short_text"
_AR = "fam_00009,speaker_information,answer_refusal,cue_to_fact,insufficient_evidence,q_00010,short_text"
_EV = '"[""s1""]"'


def _items(rows) -> str:
    return "\n".join([_HEAD, *rows]) + "\n"


#: Sessions 9/11 at 8K and 70/66 at 64K; roles add up; minutes 2.5/2.6 and 20/20.5.
_GOOD = _items([
    f"q_00010_8k,q_00010,8K,{_IE},{_EV},9,1,5,2,1,8000,150",
    f"q_00010_64k,q_00010,64K,{_IE},{_EV},70,1,50,12,7,64000,1200",
    f"q_00011_8k,q_00011,8K,{_AR},{_EV},11,1,6,3,1,8100,156",
    f"q_00011_64k,q_00011,64K,{_AR},{_EV},66,1,46,13,6,64500,1230",
])


@pytest.fixture
def history_release(tiny_release):
    """tiny_release + an item table with history columns + a third model that reports a
    different clip count for q_00010_8k (and is absent from models.csv: a warning only)."""
    (tiny_release / "items.csv").write_text(_GOOD)
    write_jsonl(tiny_release / "predictions" / "c" / "p.jsonl",
                [harness_line(model="Model-C", n_audio_clips=44),
                 harness_line(model="Model-C", item_id="q_00010_64k", context_length="64K", n_audio_clips=150)])
    return tiny_release


@pytest.fixture(scope="module")
def synth():
    return load_release(SYNTHETIC)


# --------------------------------------------------------------------------- hand-computed (tiny release)
def test_history_scale_hand_computed(history_release):
    rel = load_release(history_release)
    sc = H.history_scale(rel).set_index(["budget", "quantity"])
    s8 = sc.loc[("8K", "sessions")]
    assert s8["n_items"] == 2
    assert (s8["mean"], s8["median"], s8["q1"], s8["q3"], s8["iqr"], s8["min"], s8["max"]) == \
        pytest.approx((10.0, 10.0, 9.5, 10.5, 1.0, 9.0, 11.0))
    s64 = sc.loc[("64K", "sessions")]
    assert (s64["mean"], s64["q1"], s64["q3"]) == pytest.approx((68.0, 67.0, 69.0))
    assert sc.loc[("8K", "audio_minutes"), "mean"] == pytest.approx((150 + 156) / 2 / 60)   # 2.55
    assert sc.loc[("64K", "audio_minutes"), "max"] == pytest.approx(20.5)
    assert sc.loc[("64K", "reference_tokens"), "median"] == pytest.approx(64250.0)
    assert sc.loc[("64K", "filler_sessions"), "mean"] == pytest.approx(48.0)
    assert sc.loc[("64K", "samekey_haystack_sessions"), "mean"] == pytest.approx(6.5)
    # clips: one value per item (median over models), not one per prediction:
    # 8K items q_00010 (A 40, B 40, C 44 -> 40) and q_00011 (40, 40) -> mean 40, not 40.8
    assert sc.loc[("8K", "audio_clips"), "mean"] == pytest.approx(40.0)
    # 64K q_00010: A 40, B 40, C 150 -> median 40
    assert sc.loc[("64K", "audio_clips"), "max"] == pytest.approx(40.0)
    hi = H.history_items(rel).set_index("item_id")
    assert hi.loc["q_00010_8k", "audio_clips_values"] == 2
    assert hi.loc["q_00011_8k", "audio_clips_values"] == 1
    assert list(H.history_items(rel)["budget"]) == ["8K", "8K", "64K", "64K"]


def test_session_roles_shares(history_release):
    rel = load_release(history_release)
    ro = H.session_roles(rel).set_index(["budget", "role"])
    assert list(ro.index.get_level_values("role")[:4]) == list(H.ROLE_QUANTITIES)
    # 8K role means: evidence 1, same-key 1, topical 2.5, filler 5.5 -> total 10 = mean sessions
    assert ro.loc[("8K", "filler_sessions"), "mean_sessions"] == pytest.approx(5.5)
    assert ro.loc[("8K", "filler_sessions"), "share"] == pytest.approx(0.55)
    assert ro.loc[("8K", "evidence_sessions"), "share"] == pytest.approx(0.10)
    assert ro.xs("64K")["share"].sum() == pytest.approx(1.0)


def test_fig2a_artifact_rows(history_release):
    rel = load_release(history_release)
    t = artifacts.compute("fig2a", rel)
    assert list(t.columns) == ["Items", "Mean", "Median", "Q1", "Q3", "Min", "Max"]
    assert list(t.index[:2]) == ["Sessions|8K", "Sessions|64K"]
    assert t.loc["Minutes of audio|8K", "Mean"] == pytest.approx(2.55)
    long = artifacts.to_long(t, "fig2a")
    assert len(long) == 8 * 2 * 7


def test_nesting_check_passes_and_flags(history_release):
    assert H.nesting_check(load_release(history_release)).empty
    bad = _items([
        f"q_00010_8k,q_00010,8K,{_IE},{_EV},9,1,5,2,1,8000,150",
        f"q_00010_64k,q_00010,64K,{_IE},{_EV},70,1,50,12,7,64000,1200",
        f"q_00011_8k,q_00011,8K,{_AR},{_EV},11,1,6,3,2,8100,156",                # 2 same-key at 8K > 1
        f"q_00011_64k,q_00011,64K,{_AR},\"[\"\"s2\"\"]\",10,2,4,2,2,7900,150",   # shrinks; evidence changed
    ])
    (history_release / "items.csv").write_text(bad)
    nc = H.nesting_check(load_release(history_release))
    assert list(nc.columns) == ["question_id", "rules", "n_rules", "detail"]
    assert list(nc["question_id"]) == ["q_00011"]                                # one row per question
    r = nc.iloc[0]
    assert r["rules"] == "sessions_decrease;role_decrease;audio_decrease;samekey_cap;evidence_changed"
    assert r["n_rules"] == 5
    assert "sessions 11 (8K) > 10 (64K)" in r["detail"]
    assert "2 same-key haystack sessions at 8K (at most 1)" in r["detail"]


def test_without_item_table_uses_prediction_lines(tiny_release):
    (tiny_release / "items.csv").unlink()
    rel = load_release(tiny_release, strict=False)
    sc = H.history_scale(rel)
    assert set(sc["quantity"]) == {"sessions", "audio_clips", "evidence_sessions", "samekey_haystack_sessions"}
    s = sc.set_index(["budget", "quantity"])
    assert s.loc[("8K", "sessions"), "median"] == 9 and s.loc[("64K", "audio_clips"), "mean"] == 40
    assert H.nesting_check(rel).empty
    comp = H.benchmark_composition(rel)
    assert comp.loc["Total|All", "Total"] == 2
    assert comp.loc["AR source|unknown", "Speaker Identity"] == 1        # no paired_question_id anywhere


def test_table12_repo_column_and_groups(tiny_release):
    t = artifacts.compute("table12", load_release(tiny_release))
    assert list(t.columns) == ["Group", "Family", "LLM", "LLM+Enc."]         # models.csv has no repo column
    assert list(t.index) == ["Model-B", "Model-A"]                           # omni-modal before proprietary
    assert t.loc["Model-B", "LLM"] == "7.6B" and t.loc["Model-A", "LLM+Enc."] == "\u2014"
    (tiny_release / "models.csv").write_text(
        "model,family,access,architecture,llm_params_b,total_params_b,in_64k_set,order,hf_repo,api_model_string\n"
        "Model-A,Fam,proprietary,api,,,true,1,,model-a-2026-01\nModel-B,Other,open_weight,omni_modal,7.6,8.0,false,2,org/b,\n")
    t = artifacts.compute("table12", load_release(tiny_release))
    assert list(t["Hugging Face Repo / API Model String"]) == ["org/b", "model-a-2026-01"]
    t14 = artifacts.compute("table14", load_release(tiny_release))
    assert list(t14.index) == ["Model-A", "Model-B"]
    assert list(t14["64K Status"]) == ["\u2713", "\u00d7"]


# --------------------------------------------------------------------------- synthetic release
def test_composition_counts_synthetic(synth):
    c = H.benchmark_composition(synth)
    assert c.loc["Total|All", "Total"] == 799
    assert c.loc["Total|Answerable", "Total"] == 669
    assert c.loc["Total|AR", "Total"] == 130
    ev = ["Speech Semantics", "Speaker Identity", "Paralinguistic Cues", "Environmental Sound"]
    assert list(c.loc["Operation|AR", ev]) == [37, 21, 42, 30]
    assert [c.loc[f"AR source|{o}", "Total"] for o in ("IE", "MSR", "TET")] == [47, 49, 34]
    assert [c.loc[f"Operation|{o}", "Total"] for o in ("IE", "MSR", "TET")] == [230, 221, 218]
    assert list(c.loc["Total|All", ev]) == [232, 147, 264, 156]                # Table 15 caption
    assert c.loc["Operation|IE", "Speech Semantics"] == 0                      # excluded by design
    assert [c.loc[f"Routes|{o}", "Total"] for o in ("IE", "MSR", "TET")] == [6, 12, 12]   # Table 3
    sub = c[c.index.str.startswith("Subtype|")]
    assert sub["Total"].sum() == 669 and len(sub) == 8
    at = c[c.index.str.startswith("Answer type|")]
    assert at["Total"].sum() == 799 and len(at) == 5
    assert artifacts.compute("composition", synth).equals(c)


def test_nesting_holds_on_synthetic(synth):
    assert H.nesting_check(synth).empty


def test_history_scale_synthetic_shape(synth):
    sc = H.history_scale(synth)
    assert set(sc["n_items"]) == {799}
    med = sc[sc["quantity"] == "audio_minutes"].set_index("budget")["median"]
    assert list(med.index) == ["8K", "16K", "32K", "64K"]
    assert np.all(np.diff(med.to_numpy()) > 0)
    assert 2.0 < med["8K"] < 3.0 and 18.0 < med["64K"] < 22.0                 # "approximately 2.5 to 20 minutes"
    sk = sc[sc["quantity"] == "samekey_haystack_sessions"].set_index("budget")["max"]
    assert all(sk[b] <= cap for b, cap in H.SAMEKEY_CAP.items())


_TEN = {"Gemini-3.1-Pro", "Gemini-3.8-Flash", "Gemini-2.5-Pro", "Qwen3-Omni-30B-A3B", "Gemma-4-E4B-it",
        "Ultravox-v0.6-Llama-3.1-8B", "Audio-Flamingo-Next", "Baichuan-Audio-7B", "FireRedAudio-9B",
        "Baichuan-Omni-1.5-7B"}


def test_table14_marks_the_ten_64k_models(synth):
    t = artifacts.compute("table14", synth)
    assert len(t) == 15
    assert set(t.index[t["64K Status"] == "\u2713"]) == _TEN
    assert set(t["64K Status"]) == {"\u2713", "\u00d7"}
    assert list(t["64K Status"][:10]) == ["\u2713"] * 10
    assert set(t.loc[list(_TEN), "64K items"]) == {799}


def test_table12_synthetic(synth):
    t = artifacts.compute("table12", synth)
    assert len(t) == 15
    assert t["Group"].value_counts().to_dict() == {"Audio-specialist models": 5, "Omni-modal models": 5,
                                                   "Proprietary APIs": 5}
    assert list(t.index[:2]) == ["Audio-Flamingo-Next", "MiMo-Audio-7B-Instruct"]
    assert t.loc["Qwen3-Omni-30B-A3B", "LLM+Enc."] == "31.7B"


# --------------------------------------------------------------------------- figures draw what they are given
def test_figures_draw_the_data(history_release):
    from voxmem_analysis.plots import design as P

    rel = load_release(history_release)
    sc = H.history_scale(rel)
    fig = P.history_scale_panels(sc)
    axes = [a for a in fig.axes if a.get_title()]
    assert [a.get_title() for a in axes] == ["Sessions", "Audio clips", "Minutes of audio"]
    line = axes[0].get_lines()[0]
    np.testing.assert_allclose(line.get_ydata(), [10.0, 68.0])
    np.testing.assert_allclose(line.get_xdata(), [13.0, 16.0])                # log2 of 8192, 65536
    fig = P.session_roles_bars(H.session_roles(rel, scale=sc))
    a1 = fig.axes[0]
    heights = pd.Series([p.get_height() for p in a1.patches])
    assert len(heights) == 4 * 2 and heights.sum() == pytest.approx(10.0 + 68.0)
