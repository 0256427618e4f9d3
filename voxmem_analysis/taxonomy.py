"""The VoxMem taxonomy: canonical codes (as the harness writes them), the paper's display names, and orderings.
Every table and figure takes its labels and row/column order from here.  No pandas or polars: instant to import.
"""
from __future__ import annotations

import re
from functools import lru_cache, update_wrapper

from voxmem_analysis.errors import InputError

__all__ = [
    "BUDGETS", "BUDGET_LABELS", "EVIDENCE_TYPES", "EVIDENCE_LABELS", "AUDIO_NATIVE", "OPERATIONS",
    "ANSWERABLE_OPERATIONS", "OPERATION_LABELS", "SUBTYPES", "SUBTYPE_LABELS", "SUBTYPE_OPERATION",
    "CUE_KEYED_SUBTYPES", "VALID_CELLS", "STATUSES", "ATTRIBUTION_CLASSES",
    "ATTRIBUTION_LABELS", "normalize_budget", "normalize_evidence", "normalize_operation",
    "normalize_subtype", "normalize_budgets", "budget_tokens", "system_label",
]

# --- context budgets -------------------------------------------------------
BUDGETS: tuple[str, ...] = ("8K", "16K", "32K", "64K")
BUDGET_LABELS = {b: b for b in BUDGETS}

# --- evidence types ----------------------------------------------------------
EVIDENCE_TYPES: tuple[str, ...] = (
    "speech_semantics", "speaker_information", "paralinguistic_information", "environmental_sound",
)
#: Paper's full names (Figure 4, Tables 13 and 18).
EVIDENCE_LABELS = {
    "speech_semantics": "Speech Semantics",
    "speaker_information": "Speaker Identity",
    "paralinguistic_information": "Paralinguistic Cues",
    "environmental_sound": "Environmental Sound",
}
#: The three types whose answer exists only in the audio.
AUDIO_NATIVE: tuple[str, ...] = EVIDENCE_TYPES[1:]

# --- memory operations ---------------------------------------------------------
OPERATIONS: tuple[str, ...] = (
    "information_extraction", "multi_session_reasoning", "temporal_evolution_tracking", "answer_refusal",
)
ANSWERABLE_OPERATIONS: tuple[str, ...] = OPERATIONS[:3]
OPERATION_LABELS = {
    "information_extraction": "IE",
    "multi_session_reasoning": "MSR",
    "temporal_evolution_tracking": "TET",
    "answer_refusal": "AR",
}

# --- subtypes (Table 3) --------------------------------------------------------
SUBTYPES: tuple[str, ...] = (
    "context_to_cue", "cue_to_fact",
    "counting", "matching_resolution", "aggregation_comparison",
    "latest_state", "historical_state", "evolution_transition",
)
#: Table 20 / Figure 10 labels.
SUBTYPE_LABELS = {
    "context_to_cue": "Context-to-Cue",
    "cue_to_fact": "Cue-to-Fact",
    "counting": "Counting",
    "matching_resolution": "Matching",
    "aggregation_comparison": "Aggregation",
    "latest_state": "Latest state",
    "historical_state": "Historical state",
    "evolution_transition": "Evolution",
}
SUBTYPE_OPERATION = {
    "context_to_cue": "information_extraction",
    "cue_to_fact": "information_extraction",
    "counting": "multi_session_reasoning",
    "matching_resolution": "multi_session_reasoning",
    "aggregation_comparison": "multi_session_reasoning",
    "latest_state": "temporal_evolution_tracking",
    "historical_state": "temporal_evolution_tracking",
    "evolution_transition": "temporal_evolution_tracking",
}
#: Subtypes whose retrieval key is an acoustic cue (Appendix E.1): content from a non-evidence session is a
#: *binding* failure there, a *localization* failure elsewhere.
CUE_KEYED_SUBTYPES: frozenset[str] = frozenset({"cue_to_fact", "matching_resolution"})

#: The 15 valid operation x evidence cells (Speech-Semantics IE excluded by design).
VALID_CELLS: tuple[tuple[str, str], ...] = tuple(
    (op, ev) for op in OPERATIONS for ev in EVIDENCE_TYPES
    if not (op == "information_extraction" and ev == "speech_semantics")
)

# --- prediction status -----------------------------------------------------------
#: ``graded`` (a verdict exists), ``ungraded`` (a response, no usable verdict: incorrect), ``failed`` (empty
#: response: incorrect), ``provider_rejected`` (rejected before inference: out of the denominator).
STATUSES: tuple[str, ...] = ("graded", "ungraded", "failed", "provider_rejected")

# --- error attribution (Appendix E) ---------------------------------------------
ATTRIBUTION_CLASSES: tuple[str, ...] = (
    "recognition", "binding", "operation", "unsupported", "not_attributable",
)
ATTRIBUTION_LABELS = {
    "recognition": "Recog.",
    "binding": "Bind.",
    "operation": "Oper.",
    "unsupported": "Unsup.",
    "not_attributable": "N.a.",
}

# --- normalisation of spelling variants --------------------------------------------
def _cached(func):
    """Memoise a normaliser (labels repeat on every line); unhashable input is no known label."""
    cached = lru_cache(maxsize=4096)(func)

    def wrapper(value):
        try:
            return cached(value)
        except TypeError:          # e.g. a list where a label belongs: not a known label
            return func(value) if not isinstance(value, (list, dict, set)) else None

    return update_wrapper(wrapper, func)


def _key(value: object) -> str:
    return re.sub(r"[^a-z0-9]+", "_", str(value).strip().lower()).strip("_")


_EVIDENCE_ALIASES = {
    **{e: e for e in EVIDENCE_TYPES},
    "semantic": "speech_semantics", "semantics": "speech_semantics", "speech": "speech_semantics",
    "speaker": "speaker_information", "speaker_identity": "speaker_information",
    "paralinguistic": "paralinguistic_information", "paralinguistic_cues": "paralinguistic_information",
    "environmental": "environmental_sound", "environment": "environmental_sound",
}
_OPERATION_ALIASES = {
    **{o: o for o in OPERATIONS},
    "ie": "information_extraction", "msr": "multi_session_reasoning",
    "tet": "temporal_evolution_tracking", "ar": "answer_refusal",
    "temporal_tracking": "temporal_evolution_tracking", "refusal": "answer_refusal",
}
_SUBTYPE_ALIASES = {
    **{s: s for s in SUBTYPES},
    "context_to_cue_retrieval": "context_to_cue", "cue_to_fact_association": "cue_to_fact",
    "matching": "matching_resolution", "resolution": "matching_resolution",
    "matching_and_resolution": "matching_resolution",
    "aggregation": "aggregation_comparison", "comparison": "aggregation_comparison",
    "aggregation_and_comparison": "aggregation_comparison",
    "latest": "latest_state", "historical": "historical_state",
    "evolution": "evolution_transition", "transition": "evolution_transition",
    "evolution_and_transition": "evolution_transition",
    "paired_derivation": "paired_derivation",
}


def _normalize(value: object, aliases: dict[str, str]) -> str | None:
    if value is None:
        return None
    return aliases.get(_key(value))


@_cached
def normalize_budget(value: object) -> str | None:
    """``'32k'``, ``'32K'``, ``32768`` or ``'32768'`` -> ``'32K'``; unknown -> ``None``."""
    if value is None:
        return None
    s = str(value).strip().upper()
    if s in BUDGETS:
        return s
    if s.isdigit():
        n = int(s)
        for b in BUDGETS:
            if n in (budget_tokens(b), budget_tokens(b) // 1024 * 1000):
                return b
    return None


def normalize_budgets(budgets) -> list[str]:
    """``None`` (every budget), one budget or several, any spelling -> canonical labels in
    budget order; an unknown budget raises :class:`~voxmem_analysis.errors.InputError` naming it."""
    if budgets is None:
        return list(BUDGETS)
    if isinstance(budgets, str):
        budgets = [budgets]
    out = []
    for b in budgets:
        nb = normalize_budget(b)
        if nb is None:
            raise InputError(f"unknown budget {b!r}; expected one of {', '.join(BUDGETS)}", "budget")
        out.append(nb)
    return [b for b in BUDGETS if b in out]


def budget_tokens(budget: str) -> int:
    """Nominal reference length of a budget in tokens (``'8K'`` -> 8192)."""
    return int(budget[:-1]) * 1024


@_cached
def normalize_evidence(value: object) -> str | None:
    return _normalize(value, _EVIDENCE_ALIASES)


@_cached
def normalize_operation(value: object) -> str | None:
    return _normalize(value, _OPERATION_ALIASES)


@_cached
def normalize_subtype(value: object) -> str | None:
    return _normalize(value, _SUBTYPE_ALIASES)


def system_label(model: str, modality: str | None) -> str:
    """An Audio MultiChallenge system as tables name it: ``model (Text)``, or the model alone when the output
    modality is not known."""
    return f"{model} ({modality})" if modality else str(model)
