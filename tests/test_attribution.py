"""Error attribution (App. D.5, E.1-E.5, F.5): rules, exclusions, loader, Table 20, macro averages."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest

from voxmem_analysis.analysis import attribution as A
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import VoxMemDataError

SPK, PARA, ENV = tx.AUDIO_NATIVE


def rec(**over) -> dict:
    base = dict(commits="specific", answer="lower drawer", evidence_recovered=False, source="evidence",
                source_session=12, relation="wrong_value_same_session", why="quoted line")
    base.update(over)
    return base


# ----------------------------------------------------------------------------- the rule table
RULE_CASES = [
    # (record, subtype, answer_type, class, rule)
    (rec(relation="matches_gold", source="evidence"), "cue_to_fact", None, "not_attributable", "answer_matches_gold"),
    (rec(commits="none", relation="matches_gold"), "counting", None, "not_attributable", "answer_matches_gold"),
    (rec(commits="generic", answer="calm and composed", source="none", relation="unrelated"), "context_to_cue", None,
     "recognition", "cue_missed_no_commitment"),
    (rec(commits="off_type", answer="the grocery errands", source="none", relation="unrelated"),
     "aggregation_comparison", "categorical", "recognition", "cue_missed_no_commitment"),          # Case 1
    (rec(commits="none", answer=None, source="none", source_session=None, relation="unrelated"), "latest_state", None,
     "recognition", "cue_missed_no_commitment"),
    (rec(commits="off_type", answer="crackling fire", evidence_recovered=True, source="none", relation="unrelated"),
     "counting", "number", "operation", "cue_named_operation_not_performed"),                       # E.2 (i)
    (rec(commits="generic", answer="hesitant", evidence_recovered=True, source="none", relation="unrelated"),
     "evolution_transition", None, "operation", "cue_named_operation_not_performed"),
    (rec(answer="crackling fire", evidence_recovered=True, relation="unrelated"), "counting", None,
     "operation", "count_answered_with_cue"),                                                       # E.2 (i)
    (rec(answer="Speaker 3", evidence_recovered=True, relation="unrelated"), "historical_state", "number",
     "operation", "count_answered_with_cue"),
    (rec(answer="Speaker 4", source="evidence", relation="other_speaker"), "context_to_cue", None,
     "binding", "attached_to_other_speaker"),
    # another speaker's content from a non-evidence session: the earlier stage decides (E.1)
    (rec(answer="Speaker 4", source="other_session", relation="other_speaker"), "context_to_cue", None,
     "recognition", "non_evidence_session"),
    (rec(answer="the lower drawer", source="other_session", relation="other_speaker"), "cue_to_fact", None,
     "binding", "cue_keyed_from_non_evidence_session"),
    (rec(answer="the blue folder", source="evidence", relation="other_speaker"), "historical_state", None,
     "binding", "attached_to_other_speaker"),
    (rec(answer="hanging caddy", source="other_session", source_session=26, relation="same_value_other_session"),
     "cue_to_fact", None, "binding", "cue_keyed_from_non_evidence_session"),                        # Case 3
    (rec(answer="yes", source="other_session", relation="unrelated"), "matching_resolution", "yes_no",
     "binding", "cue_keyed_from_non_evidence_session"),
    (rec(answer="10", source="other_session", relation="count_off"), "counting", "number",
     "recognition", "non_evidence_session"),                                                        # Case 2
    (rec(answer="rain", source="other_session", relation="same_value_other_session"), "context_to_cue", None,
     "recognition", "non_evidence_session"),
    (rec(answer="Yes, both chats are linked by the same vocal delivery", evidence_recovered=True,
         relation="unrelated"), "matching_resolution", None, "operation", "verdict_decided_wrongly"),  # Case 5b
    (rec(answer="different", evidence_recovered=True, relation="wrong_value_same_session"), "matching_resolution",
     "yes_no", "operation", "verdict_decided_wrongly"),                                             # E.2 (ii)
    (rec(answer="2", evidence_recovered=True, relation="count_off"), "counting", "number",
     "operation", "count_off_after_locating"),                                                      # Case 5
    (rec(answer="excited", relation="earlier_state"), "latest_state", None, "operation", "other_point_on_trajectory"),
    (rec(answer="rain", relation="later_state"), "historical_state", None, "operation", "other_point_on_trajectory"),
    (rec(answer="second shelf", relation="wrong_value_same_session"), "cue_to_fact", None,
     "recognition", "wrong_value_from_evidence"),
    (rec(answer="yes", evidence_recovered=False, relation="unrelated"), "matching_resolution", "yes_no",
     "recognition", "wrong_value_from_evidence"),            # verdict without both sessions located
    (rec(answer="3 sessions with kitchen sounds", source="absent", source_session=None, relation="unrelated"),
     "aggregation_comparison", None, "unsupported", "invented_answer"),                            # Case 6
    (rec(answer="Speaker 9", source="absent", source_session=None, relation="other_speaker"), "context_to_cue", None,
     "unsupported", "invented_answer"),                      # other_speaker needs real content
    (rec(answer="market route", source="none", source_session=None, relation="unrelated"), "cue_to_fact", None,
     "unsupported", "no_stage_rule"),
]


@pytest.mark.parametrize("record,subtype,answer_type,cls,rule", RULE_CASES)
def test_rules(record, subtype, answer_type, cls, rule):
    assert A.classify(record, subtype=subtype, answer_type=answer_type) == (cls, rule)


def test_every_rule_is_exercised_and_classes_are_valid():
    assert {c[4] for c in RULE_CASES} == {r.name for r in A.RULES}
    assert len({r.name for r in A.RULES}) == len(A.RULES)
    assert {r.attribution_class for r in A.RULES} == set(tx.ATTRIBUTION_CLASSES)
    assert A.RULES[-1].name == "no_stage_rule"


def test_rule_table_lists_the_rules_in_order():
    t = A.rule_table()
    assert t["rule"].tolist() == [r.name for r in A.RULES]
    assert t["order"].tolist() == list(range(1, len(A.RULES) + 1))


def test_retrieval_key_decides_binding_vs_localization():
    r = rec(answer="canal route", source="other_session", source_session=3, relation="same_value_other_session")
    assert A.classify(r, subtype="cue_to_fact")[0] == "binding"
    assert A.classify(r, subtype="matching")[0] == "binding"          # spelling variant, cue-keyed
    for st in ("context_to_cue", "counting", "aggregation_comparison", "latest_state", "historical_state",
               "evolution_transition"):
        assert A.classify(r, subtype=st)[0] == "recognition"


def test_ambiguous_case_i_cue_identified_separates_operation_from_recognition():
    base = rec(commits="off_type", answer="crackling fire", source="none", relation="unrelated")
    assert A.classify({**base, "evidence_recovered": True}, subtype="counting")[0] == "operation"
    assert A.classify({**base, "evidence_recovered": False}, subtype="counting")[0] == "recognition"


def test_ambiguous_case_ii_only_matching_verdicts():
    r = rec(answer="yes", evidence_recovered=True, relation="unrelated")
    assert A.classify(r, subtype="matching_resolution", answer_type="yes_no")[0] == "operation"
    # the same record on another subtype reads a wrong value from an evidence session
    assert A.classify(r, subtype="context_to_cue", answer_type="yes_no")[0] == "recognition"


def test_ambiguous_case_iii_not_attributable_is_never_redistributed():
    for commits in ("specific", "generic", "off_type", "none"):
        for source in A.SOURCES:
            r = rec(commits=commits, source=source, relation="matches_gold", evidence_recovered=True)
            assert A.classify(r, subtype="counting") == ("not_attributable", "answer_matches_gold")


def test_classify_rejects_truncated_and_bad_values():
    with pytest.raises(ValueError, match="truncated"):
        A.classify(rec(commits="truncated"), subtype="counting")
    with pytest.raises(ValueError, match="relation"):
        A.classify(rec(relation="nearby"), subtype="counting")
    with pytest.raises(ValueError, match="evidence_recovered"):
        A.classify(rec(evidence_recovered="yes"), subtype="counting")
    with pytest.raises(ValueError, match="subtype"):
        A.classify(rec(), subtype="no_such_subtype")


# ----------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("text", [
    "insufficient evidence", "Insufficient Evidence.", "It cannot be determined from our conversations.",
    "There is not enough information to answer.", "I cannot hear audio.", "I have no access to previous conversations.",
    "I don\u2019t have access to previous conversations.", "As an AI, I can't listen to recordings.", "I don't know.",
    "The conversation does not contain enough information to determine this.",
])
def test_refusals_detected(text):
    assert A.is_refusal(text)


@pytest.mark.parametrize("text", [
    None, "", "   ", "Lower drawer.", "I have noted that down.", "There was no background sound in that chat.",
    "You sounded calm and composed.", "2", "Yes, both chats are linked by the same vocal delivery.",
    "Wait, look at the timestamps: session 14 is the earliest, and the",
])
def test_non_refusals(text):
    assert not A.is_refusal(text)


def test_refusal_detector_is_overridable():
    det = A.make_refusal_detector(extra=[r"\bno idea\b"])
    assert det("No idea, sorry.") and not A.is_refusal("No idea, sorry.")
    only = A.make_refusal_detector([r"^pass$"])
    assert only("pass") and not only("insufficient evidence")
    assert A.is_refusal("pass", patterns=[r"^pass$"])


# ----------------------------------------------------------------------------- population and exclusions
def pred(model="M1", q=1, budget="64K", ev=SPK, sub="cue_to_fact", correct=False, status="graded",
         response="lower drawer", is_ar=False, answer_type=None):
    return dict(model=model, item_id=f"q_{q:05d}_{budget.lower()}", budget=budget, evidence_type=ev,
                operation="answer_refusal" if is_ar else tx.SUBTYPE_OPERATION[sub], subtype=sub, is_ar=is_ar,
                answer_type=answer_type, correct=correct, status=status, response=response)


def audit(model, q, **over):
    return {"model": model, "item_id": f"q_{q:05d}_64k", **rec(**over)}


@pytest.fixture
def population():
    frame = pd.DataFrame([
        pred(q=1, correct=True, response="market route"),                          # correct
        pred(q=2, response="insufficient evidence"),                                 # refusal (evidence)
        pred(q=3, response="I cannot hear audio."),                                  # refusal (capability), has record
        pred(q=4, status="failed", response=None),                                   # empty, has record
        pred(q=5, response="   "),                                                   # blank -> empty
        pred(q=6, response="Wait, look at the timestamps: session 14 is the"),       # truncated (record)
        pred(q=7, response="canal route"),                                           # attributed
        pred(q=8, sub="counting", response="2", answer_type="number"),               # attributed
        pred(q=9, ev=ENV, sub="context_to_cue", response="rain"),                    # missing record
        pred(q=10, status="ungraded", response="rain", ev=PARA, sub="latest_state"), # ungraded -> attributed
        # outside the population
        pred(q=11, budget="32K"), pred(q=12, ev="speech_semantics", sub="counting"),
        pred(q=13, is_ar=True, response="drawer"), pred(model="M9", q=14),
        pred(q=15, status="provider_rejected", response=None),
    ])
    records = pd.DataFrame([
        audit("M1", 3, commits="none", source="none", relation="unrelated"),
        audit("M1", 4, commits="none", source="none", relation="unrelated"),
        audit("M1", 6, commits="truncated", answer=None, source="none", relation="unrelated"),
        audit("M1", 7, answer="canal route", source="other_session", relation="same_value_other_session"),
        audit("M1", 8, answer="2", evidence_recovered=True, relation="count_off"),
        audit("M1", 10, answer="excited", relation="earlier_state"),
    ])
    return frame, records


def test_population_counts_and_exclusion_order(population):
    frame, records = population
    got = A.attribution_population(frame, records, models=["M1"]).set_index("stage")["count"].to_dict()
    assert got == {"attempts": 10, "incorrect": 9, "refusals": 2, "empty": 2, "truncated": 1, "attributed": 3,
                   "missing_record": 1, "unused_record": 2}
    stages = A.population_frame(frame, records, models=["M1"]).set_index("item_id")["stage"]
    assert stages["q_00003_64k"] == "refusal"        # refusal text wins over its record
    assert stages["q_00004_64k"] == "empty"          # failed generation wins over its record
    assert stages["q_00009_64k"] == "missing_record"


def test_models_default_and_registry(population):
    frame, records = population
    assert A.select_models(frame) == ["M1", "M9"]
    reg = pd.DataFrame({"model": ["M1", "M9"], "in_64k_set": [True, False]})
    assert A.select_models(frame, reg) == ["M1"]
    assert A.select_models(frame, pd.DataFrame({"model": ["M1"], "in_64k_set": [False]})) == ["M1", "M9"]
    got = A.attribution_population(frame, records).set_index("stage")["count"]
    assert got["attempts"] == 11 and got["missing_record"] == 2       # M9's error has no record


def test_attributed_errors_classes(population):
    frame, records = population
    err = A.attributed_errors(frame, records, models=["M1"])
    assert list(err.columns[:8]) == ["model", "item_id", "evidence_type", "operation", "subtype", "answer_type",
                                     "class", "rule"]
    got = dict(zip(err["item_id"], zip(err["class"], err["rule"])))
    assert got == {"q_00007_64k": ("binding", "cue_keyed_from_non_evidence_session"),
                   "q_00008_64k": ("operation", "count_off_after_locating"),
                   "q_00010_64k": ("operation", "other_point_on_trajectory")}


def test_population_with_polars_frame(population):
    pl = pytest.importorskip("polars")
    frame, records = population
    pf = pl.from_pandas(frame).with_columns(pl.col("budget").cast(pl.Enum(list(tx.BUDGETS))))
    got = A.attribution_population(pf, records, models=["M1"]).set_index("stage")["count"]
    assert got["attributed"] == 3 and got["refusals"] == 2


def test_population_by_model(population):
    frame, records = population
    by = A.attribution_population(frame, records, by="model")
    m9 = by[by["model"] == "M9"].set_index("stage")["count"]
    assert m9["attempts"] == 1 and m9["missing_record"] == 1


def test_population_table(population):
    frame, records = population
    t = A.population_table(frame, records, models=["M1"])
    assert t.index.tolist() == list(A.POPULATION_ROWS) and t.columns.tolist() == ["n", "pct"]
    assert t["n"].tolist() == [10, 1, 10, 9, 2, 2, 1, 3, 1, 0, 2, 1]
    assert t.loc["Operation", "pct"] == 66.7 and t.loc["Not attributable", "pct"] == 0.0
    assert t["pct"].isna().sum() == len(t) - 2
    both = A.population_table(frame, records)                          # M9 joins with one unaudited error
    assert both.loc[["Answerable audio-native items", "Systems", "Attempts", "Missing record"], "n"].tolist() == [11, 2, 11, 2]
    none = A.population_table(frame, None, models=["M1"])
    assert none.loc["Attributed", "n"] == 0 and none.loc["Missing record", "n"] == 5 and np.isnan(none.loc["Operation", "pct"])


# ----------------------------------------------------------------------------- loader
def write(path, lines, gz=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join((l if isinstance(l, str) else json.dumps(l)) + "\n" for l in lines)
    path.write_bytes(gzip.compress(text.encode(), mtime=0) if gz else text.encode())


def test_loader_reports_every_bad_record(tmp_path, population):
    frame, _ = population
    good = audit("M1", 7, answer="canal route", source="other_session", relation="same_value_other_session")
    bad_enum = audit("M1", 8, relation="nearby")
    missing = {k: v for k, v in audit("M1", 10).items() if k != "why"}
    write(tmp_path / "attribution" / "a.jsonl", [
        good, "{not json", bad_enum, missing, audit("M1", 1),                                 # 1-5
        audit("M1", 99), {**audit("M1", 6), "evidence_recovered": "true"}, "[1, 2]", "",       # 6-9
        {**audit("M1", 9), "source_session": "twelve"},                                       # 10
    ])
    write(tmp_path / "attribution" / "sub" / "b.jsonl.gz", [audit("M1", 7), audit("M1", 2)], gz=True)
    df, problems = A.load_audit_records(tmp_path, frame=frame, models=["M1"], strict=False)
    found = {(p.code, p.file, p.line, p.field) for p in problems}
    a, b = "attribution/a.jsonl", "attribution/sub/b.jsonl.gz"
    assert found == {
        ("duplicate_record", a, 1, "item_id"), ("duplicate_record", b, 1, "item_id"),
        ("malformed_json", a, 2, None),
        ("unknown_value", a, 3, "relation"),
        ("missing_field", a, 4, "why"),
        ("record_for_correct_prediction", a, 5, "item_id"),
        ("not_in_population", a, 6, "item_id"),
        ("invalid_value", a, 7, "evidence_recovered"),
        ("not_an_object", a, 8, None),
        ("invalid_value", a, 10, "source_session"),
    }
    assert all(p.severity == "error" for p in problems)
    # only the clean, unique, in-population record survives; nothing bad is classed
    assert df["item_id"].tolist() == ["q_00002_64k"]
    assert df.loc[0, "source_file"] == b and df.loc[0, "source_line"] == 2
    with pytest.raises(VoxMemDataError) as exc:
        A.load_audit_records(tmp_path, frame=frame, models=["M1"])
    assert len(exc.value.problems) == 10


def test_loader_clean_roundtrip_and_missing_directory(tmp_path, population):
    frame, records = population
    clean = [{k: (None if isinstance(v, float) and np.isnan(v) else v) for k, v in r.items()}
             for r in records.astype(object).to_dict("records")]
    write(tmp_path / "attribution" / "m1.jsonl", clean)
    df, problems = A.load_audit_records(tmp_path, frame=frame, models=["M1"])
    assert problems == [] and len(df) == 6
    assert df["evidence_recovered"].dtype == bool
    assert A.attribution_population(frame, df, models=["M1"]).set_index("stage")["count"]["attributed"] == 3
    with pytest.raises(VoxMemDataError, match="attribution"):
        A.load_audit_records(tmp_path / "nowhere")
    df, problems = A.load_audit_records(tmp_path / "nowhere", strict=False)
    assert [p.code for p in problems] == ["no_audit_records"] and df.empty


def test_audit_records_frame_in_memory():
    df, problems = A.audit_records_frame([audit("M1", 1), {**audit("M1", 2), "commits": "maybe"}], strict=False)
    assert len(df) == 1 and [(p.code, p.line, p.field) for p in problems] == [("unknown_value", 2, "commits")]


# ----------------------------------------------------------------------------- Table 20 and macro averages
def errors_frame(spec) -> pd.DataFrame:
    """spec: list of (model, evidence, subtype, class, count)."""
    rows = []
    for m, e, s, c, k in spec:
        rows += [dict(model=m, item_id=f"{m}-{e}-{s}-{c}-{i}", evidence_type=e, operation=tx.SUBTYPE_OPERATION[s],
                      subtype=s, **{"class": c}, rule="r") for i in range(k)]
    return pd.DataFrame(rows)


def test_macro_average_differs_from_pooled():
    err = errors_frame([
        ("M1", SPK, "cue_to_fact", "recognition", 8), ("M1", SPK, "cue_to_fact", "binding", 2),  # 10 errors
        ("M2", SPK, "cue_to_fact", "binding", 5),                                               # 5 errors
        ("M3", SPK, "context_to_cue", "unsupported", 3),                                        # 3 errors: < 5
    ])
    macro = A.class_proportions(err, by="operation").set_index("group").loc["information_extraction"]
    # cells (M1,spk): 80/20, (M2,spk): 0/100; (M3,spk) has 3 errors and is left out
    assert macro["recognition"] == pytest.approx(40.0)
    assert macro["binding"] == pytest.approx(60.0)
    assert macro["unsupported"] == pytest.approx(0.0)
    assert (macro["n_cells"], macro["n_errors"], macro["n_errors_all"]) == (2, 15, 18)
    pooled = A.class_proportions(err, by="operation", average="pooled").set_index("group").loc["information_extraction"]
    assert pooled["recognition"] == pytest.approx(100 * 8 / 18)
    assert pooled["binding"] == pytest.approx(100 * 7 / 18)
    assert pooled["unsupported"] == pytest.approx(100 * 3 / 18)
    assert pooled["n_errors"] == 18
    # by subtype, M1 and M2 qualify for Cue-to-Fact; Context-to-Cue has no qualifying cell
    sub = A.class_proportions(err, by="subtype").set_index("group")
    assert sub.loc["cue_to_fact", "binding"] == pytest.approx(60.0)
    assert sub.loc["context_to_cue", "n_cells"] == 0 and np.isnan(sub.loc["context_to_cue", "recognition"])
    assert A.class_proportions(err, by="subtype", min_errors=3).loc[0, "unsupported"] == pytest.approx(100.0)
    assert list(sub.index) == list(tx.SUBTYPES)
    assert list(sub["label"]) == [tx.SUBTYPE_LABELS[s] for s in tx.SUBTYPES]


def test_macro_by_evidence_type_averages_over_models():
    err = errors_frame([
        ("M1", PARA, "counting", "operation", 6), ("M1", PARA, "latest_state", "recognition", 2),   # 8: 75 % oper
        ("M2", PARA, "historical_state", "recognition", 20),                                         # 20: 0 % oper
    ])
    ev = A.class_proportions(err, by="evidence_type").set_index("group").loc[PARA]
    assert ev["operation"] == pytest.approx(37.5) and ev["recognition"] == pytest.approx(62.5)
    assert ev["n_cells"] == 2


def test_class_proportions_rejects_bad_arguments():
    err = errors_frame([("M1", SPK, "counting", "operation", 5)])
    with pytest.raises(ValueError):
        A.class_proportions(err, by="model")
    with pytest.raises(ValueError):
        A.class_proportions(err, average="median")


def test_table20_small_frame():
    err = errors_frame([
        ("M1", SPK, "cue_to_fact", "binding", 5), ("M1", SPK, "cue_to_fact", "recognition", 1),
        ("M2", PARA, "cue_to_fact", "binding", 4),
        ("M1", ENV, "counting", "operation", 3), ("M1", ENV, "counting", "unsupported", 2),
        ("M2", ENV, "counting", "not_attributable", 1),
    ])
    t = A.table20(err)
    labels = [tx.SUBTYPE_LABELS[s] for s in tx.SUBTYPES] + [tx.EVIDENCE_LABELS[e] for e in tx.AUDIO_NATIVE] + ["Total"]
    assert t.index.tolist() == labels
    assert t.columns.tolist() == ["Op.", "Recog.", "Bind.", "Oper.", "Unsup.", "N.a.", "Total", "Cells"]
    assert t.loc["Cue-to-Fact"].tolist() == ["IE", 1, 9, 0, 0, 0, 10, 1]      # (M1,spk) 6 errors; (M2,para) 4
    assert t.loc["Counting"].tolist() == ["MSR", 0, 0, 3, 2, 1, 6, 1]         # (M1,env) 5; (M2,env) 1
    assert t.loc["Context-to-Cue"].tolist() == ["IE", 0, 0, 0, 0, 0, 0, 0]
    assert t.loc["Speaker Identity", ["Recog.", "Bind.", "Total"]].tolist() == [1, 5, 6]
    assert t.loc["Environmental Sound", ["Oper.", "Unsup.", "N.a.", "Total"]].tolist() == [3, 2, 1, 6]
    assert t.loc["Total", ["Recog.", "Bind.", "Oper.", "Unsup.", "N.a.", "Total"]].tolist() == [1, 9, 3, 2, 1, 16]
    assert t.loc["Total", "Cells"] is None and t.loc["Total", "Op."] == ""
    assert A.table20(err, min_errors=1).loc["Counting", "Cells"] == 2


def test_artifacts_registered():
    from voxmem_analysis import artifacts

    assert {"table20", "fig7", "fig10", "population"} <= set(artifacts.names())


def test_audit_record_overrules_the_refusal_detector():
    """A hedged but committed answer matches the refusal detector; its audit record decides."""
    import pandas as pd

    from voxmem_analysis.analysis.attribution import population_frame

    frame = pd.DataFrame({
        "model": ["M", "M"], "item_id": ["q_1_64k", "q_2_64k"], "question_id": ["q_1", "q_2"],
        "budget": ["64K", "64K"], "evidence_type": ["speaker_information"] * 2,
        "operation": ["multi_session_reasoning"] * 2, "subtype": ["counting"] * 2, "is_ar": [False, False],
        "answer_type": ["number"] * 2, "status": ["graded"] * 2, "correct": [False, False], "scored": [True, True],
        "response": ["I can't say for sure, but I think you mentioned it three times.", "insufficient evidence"],
    })
    audit = pd.DataFrame([{"model": "M", "item_id": "q_1_64k", "commits": "specific", "answer": "three",
                           "evidence_recovered": True, "source": "evidence", "source_session": 4,
                           "relation": "count_off", "why": "counted three"}])
    pop = population_frame(frame, audit, models=["M"])
    stages = dict(zip(pop["item_id"], pop["stage"]))
    assert stages == {"q_1_64k": "attributed", "q_2_64k": "refusal"}
    assert pop.set_index("item_id").loc["q_1_64k", "detector_overridden"]
