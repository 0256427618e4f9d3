"""The attribution rule engine: the ordered rule table of Table 19 / Appendix E.2 (:data:`RULES`, the first rule
that holds decides an audit record's class; :func:`rule_table` lists it) and refusal detection."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.errors import AnalysisInputError
from voxmem_analysis.io.voxmem.attribution import AUDIT_ENUMS, AUDIT_FIELDS, COMMITS, RELATIONS, SOURCES

__all__ = [
    "AUDIT_FIELDS", "COMMITS", "SOURCES", "RELATIONS", "NON_SPECIFIC_COMMITS", "VERDICT_ANSWER_TYPES",
    "COUNT_ANSWER_TYPES", "REFUSAL_PATTERNS", "AuditContext", "Rule", "RULES", "classify", "rule_table",
    "is_refusal", "make_refusal_detector",
]

NON_SPECIFIC_COMMITS: frozenset[str] = frozenset({"none", "generic", "off_type"})
#: Answer types whose answer is a same-or-different verdict (E.2 ii).
VERDICT_ANSWER_TYPES: frozenset[str] = frozenset({"yes_no", "boolean", "binary", "same_different"})
#: Answer types that make a question a count question (E.2 i).
COUNT_ANSWER_TYPES: frozenset[str] = frozenset({"number", "integer", "count", "numeric"})
_VERDICT_RE = re.compile(
    r"^\W*(yes|no|same|different|true|false|identical|not the same|they (?:do not|don't|do) match|match(?:es)?)\b", re.I)
_NUMBER_RE = re.compile(
    r"(?<!speaker )(?<!session )(?<!sessions )(?<!user )(?<!voice )(?<!room )\b(\d+|zero|one|two|three|four|five"
    r"|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|twenty|thirty|once|twice|thrice|none)\b", re.I)


@dataclass(frozen=True)
class AuditContext:
    """One audit record plus the item facts a rule may look at (normalised)."""

    commits: str
    answer: str | None
    evidence_recovered: bool
    source: str
    source_session: object
    relation: str
    why: str | None
    subtype: str | None
    answer_type: str | None

    @property
    def non_specific(self) -> bool:
        return self.commits in NON_SPECIFIC_COMMITS

    @property
    def cue_keyed(self) -> bool:
        return self.subtype in tx.CUE_KEYED_SUBTYPES

    @property
    def count_question(self) -> bool:
        return self.subtype == "counting" or (self.answer_type or "").lower() in COUNT_ANSWER_TYPES

    @property
    def verdict_answer(self) -> bool:
        if (self.answer_type or "").lower() in VERDICT_ANSWER_TYPES:
            return True
        return bool(self.answer) and bool(_VERDICT_RE.match(str(self.answer)))

    @property
    def numeric_answer(self) -> bool:
        """The answer states a number (a label such as "Speaker 3" or "Session 12" is not one)."""
        return bool(self.answer) and bool(_NUMBER_RE.search(str(self.answer)))


@dataclass(frozen=True)
class Rule:
    """One row of the rule table: ``condition(ctx) -> bool`` decides ``attribution_class``."""

    name: str
    condition: Callable[[AuditContext], bool]
    attribution_class: str
    paper_reference: str
    description: str = ""


RULES: tuple[Rule, ...] = (
    Rule("answer_matches_gold", lambda c: c.relation == "matches_gold", "not_attributable",
         "Table 19 (Not attributable); E.2 (iii)", "relation = matches_gold"),
    Rule("cue_missed_no_commitment", lambda c: c.non_specific and not c.evidence_recovered, "recognition",
         "Table 19 (Recognition: commits to nothing, a generic description or a wrong-type answer without "
         "identifying the cue); Case 1", "commits non-specific and not evidence_recovered"),
    Rule("cue_named_operation_not_performed", lambda c: c.non_specific and c.evidence_recovered, "operation",
         "E.2 (i); Table 19 (Operation: the cue is identified but the requested operation is not carried out)",
         "commits non-specific and evidence_recovered"),
    Rule("count_answered_with_cue",
         lambda c: c.count_question and c.commits == "specific" and c.evidence_recovered and not c.numeric_answer,
         "operation", 'E.2 (i) ("I heard a crackling fire" to a how-many question)',
         "count question, commits specific, evidence_recovered, answer contains no number"),
    Rule("attached_to_other_speaker",
         lambda c: c.relation == "other_speaker" and c.source == "evidence", "binding",
         "Table 19 (Binding: the audit places it with another speaker); from a non-evidence session the "
         "earlier stage (rules 6-7) decides, E.1",
         "relation = other_speaker and source = evidence"),
    Rule("cue_keyed_from_non_evidence_session", lambda c: c.source == "other_session" and c.cue_keyed, "binding",
         "Table 19 (Binding: non-evidence session on a cue-keyed question); E.1; Case 3",
         "source = other_session and subtype cue-keyed"),
    Rule("non_evidence_session", lambda c: c.source == "other_session", "recognition",
         "Table 19 (Localization: content from a non-evidence session, retrieval key not a cue); Case 2",
         "source = other_session (subtype not cue-keyed)"),
    Rule("verdict_decided_wrongly",
         lambda c: c.subtype == "matching_resolution" and c.verdict_answer and c.evidence_recovered
         and c.source == "evidence", "operation", "E.2 (ii); Case 5b",
         "subtype Matching, verdict answer, evidence_recovered, source = evidence"),
    Rule("count_off_after_locating", lambda c: c.relation == "count_off" and c.source == "evidence", "operation",
         "Table 19 (Operation: a wrong count); Case 5", "relation = count_off and source = evidence"),
    Rule("other_point_on_trajectory",
         lambda c: c.relation in ("earlier_state", "later_state") and c.source == "evidence", "operation",
         "Table 19 (Operation: another point on the same state trajectory); E.3",
         "relation in {earlier_state, later_state} and source = evidence"),
    Rule("wrong_value_from_evidence", lambda c: c.source == "evidence", "recognition",
         "Table 19 (Recognition: reads a wrong value from an evidence session)", "source = evidence"),
    Rule("invented_answer", lambda c: c.source == "absent", "unsupported",
         "Table 19 (Unsupported, incl. invented inventories); Case 6", "source = absent"),
    Rule("no_stage_rule", lambda c: True, "unsupported",
         "Table 19 (Unsupported: any committed answer no stage rule covers)", "any other committed answer"),
)


def rule_table() -> pd.DataFrame:
    """The rule table as a DataFrame: ``order, rule, condition, attribution_class, paper_reference``."""
    return pd.DataFrame([(i, r.name, r.description, r.attribution_class, r.paper_reference)
                         for i, r in enumerate(RULES, 1)],
                        columns=["order", "rule", "condition", "attribution_class", "paper_reference"])


def _context(record: Mapping, subtype, answer_type) -> AuditContext:
    for f in ("commits", "source", "relation"):
        v = record.get(f)
        if v not in AUDIT_ENUMS[f]:
            raise AnalysisInputError(f"audit field {f!r} has unknown value {v!r} (expected one of "
                                     f"{', '.join(AUDIT_ENUMS[f])})", f)
    rec = record.get("evidence_recovered")
    if not isinstance(rec, (bool, np.bool_)):
        raise AnalysisInputError(f"audit field 'evidence_recovered' must be a boolean, got "
                                 f"{record.get('evidence_recovered')!r}", "evidence_recovered")
    st = tx.normalize_subtype(subtype) if subtype is not None else None
    if subtype is not None and st is None:
        raise AnalysisInputError(f"unknown subtype {subtype!r}", "subtype")
    answer = record.get("answer")
    return AuditContext(record["commits"], None if answer is None else str(answer), bool(rec), record["source"],
                        record.get("source_session"), record["relation"], record.get("why"), st,
                        None if answer_type is None or (isinstance(answer_type, float) and np.isnan(answer_type))
                        else str(answer_type))


def classify(record: Mapping, *, subtype: str | None, answer_type: str | None = None) -> tuple[str, str]:
    """``(attribution class, rule name)`` of one wrong, committed answer: the first rule of :data:`RULES` that
    holds for its audit ``record``; the item's ``subtype`` decides whether the retrieval key is a cue, its
    ``answer_type`` whether it is a count or a verdict question.  A truncated record (an exclusion, not a class),
    an unknown value or a non-boolean ``evidence_recovered`` is an :class:`AnalysisInputError`."""
    ctx = _context(record, subtype, answer_type)
    if ctx.commits == "truncated":
        raise AnalysisInputError("truncated answers are excluded before attribution (App. D.5); they have no class",
                                 "commits")
    for rule in RULES:
        if rule.condition(ctx):
            return rule.attribution_class, rule.name
    raise AssertionError("the last rule always applies")  # pragma: no cover


#: Refusal patterns (case-insensitive): evidence-based abstentions and capability/policy refusals.  A flat denial
#: that anything was heard ("there was no background sound") is not one: the audit records ``commits = none``.
REFUSAL_PATTERNS: tuple[str, ...] = (
    r"\binsufficient (?:evidence|information|context|data)\b",
    r"\bnot (?:enough|sufficient) (?:information|evidence|context|details?|data)\b",
    r"\b(?:cannot|can ?not|can't|unable to|not able to|impossible to|not possible to) (?:be )?"
    r"(?:determined?|tell|answer|say|know|identif(?:y|ied)|infer(?:red)?|recall|confirm|verif(?:y|ied))\b",
    r"\b(?:does not|doesn't|do not|don't) (?:contain|provide|include|mention|specify|give) "
    r"(?:enough |sufficient |any |the )?(?:information|evidence|details?|context)\b",
    r"\bI (?:cannot|can ?not|can't|am unable to|am not able to|'m unable to|'m not able to) "
    r"(?:hear|listen|process|access|perceive|play|analy[sz]e|remember)\b",
    r"\b(?:no|without|don't have|do not have|lack) (?:access to|memory of|the ability to)\b",
    r"\bas an AI\b",
    r"\bI (?:do not|don't) (?:know|remember|recall|have (?:that|this|any|enough) information)\b",
    r"\bno (?:information|evidence|record|mention|details?) (?:about|of|on|regarding|is available|available)\b",
    r"\bnot (?:mentioned|specified|stated|provided|recorded) in (?:the|our|this) (?:conversation|history|sessions?|audio|chats?)\b",
)


def make_refusal_detector(patterns: Iterable[str] | None = None, *, extra: Iterable[str] = ()) -> Callable[[object], bool]:
    """A refusal detector from regular expressions (default :data:`REFUSAL_PATTERNS`, plus ``extra``)."""
    pats = tuple(REFUSAL_PATTERNS if patterns is None else patterns) + tuple(extra)
    rx = re.compile("|".join(f"(?:{p})" for p in pats), re.I) if pats else None

    def detector(text) -> bool:
        if rx is None or text is None or not isinstance(text, str) or not text.strip():
            return False
        return bool(rx.search(text.replace("\u2019", "'").replace("\u2018", "'")))

    return detector


_DEFAULT_DETECTOR = make_refusal_detector()


def is_refusal(text, patterns: Iterable[str] | None = None) -> bool:
    """True when ``text`` declines to answer ("insufficient evidence", "I cannot hear audio", "I don't know");
    blank text is an empty generation, not a refusal.  ``patterns`` replace :data:`REFUSAL_PATTERNS`."""
    return (_DEFAULT_DETECTOR if patterns is None else make_refusal_detector(patterns))(text)
