"""The columns of the tidy verdict frame (one row per model x item), each once with its type and meaning,
and the fields a harness line must carry."""
from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Column", "FRAME_COLUMNS", "COLUMN_NAMES", "ABLATION_CONDITIONS", "normalize_condition"]


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str          # polars dtype name
    description: str


FRAME_COLUMNS: tuple[Column, ...] = (
    Column("model", "Utf8", "Evaluated system, from the harness's `model` field (Table 12 names)."),
    Column("question_id", "Utf8", "Question id, shared by the four context lengths (`q_00010`)."),
    Column("item_id", "Utf8", "Item id: question x context length (`q_00010_32k`)."),
    Column("budget", "Enum(8K<16K<32K<64K)", "Context length, ordered 8K < 16K < 32K < 64K."),
    Column("family_id", "Utf8", "Groups an answerable question with its refusal variant(s)."),
    Column("evidence_type", "Utf8", "Canonical evidence type (taxonomy.EVIDENCE_TYPES)."),
    Column("operation", "Utf8", "Canonical memory operation; `answer_refusal` for AR items."),
    Column("subtype", "Utf8", "Canonical answerable subtype (taxonomy.SUBTYPES); for AR items, the source's subtype when known."),
    Column("is_ar", "Boolean", "True for answer-refusal items (expected_response = insufficient_evidence)."),
    Column("source_operation", "Utf8", "Operation of the answerable question an AR item derives from; an answerable item's own operation."),
    Column("paired_question_id", "Utf8", "For AR items, the answerable question they were derived from (item table)."),
    Column("answer_type", "Utf8", "Answer type (e.g. `ordered_list`, `categorical`, `yes_no`, `number`)."),
    Column("answer_normalization", "Utf8", "Normalisation rule applied by the judge."),
    Column("verdict", "Boolean", "The judge's value; null when not graded or unparseable."),
    Column("correct", "Boolean", "Scored correct by the paper's rules (Appendix C.4): graded and verdict true."),
    Column("status", "Utf8", "graded | ungraded | failed | provider_rejected (taxonomy.STATUSES)."),
    Column("scored", "Boolean", "In the denominator under the active convention (paper: all but provider_rejected)."),
    Column("judge", "Utf8", "Judge name."),
    Column("allow_abstention", "Boolean", "Whether the abstention-permitting instruction was used."),
    Column("system_prompt_delivery", "Utf8", "`native` or `folded`."),
    Column("n_audio_clips", "Int64", "Audio clips in the prompt."),
    Column("session_count", "Int64", "Sessions in the history."),
    Column("evidence_session_count", "Int64", "Evidence sessions in the history."),
    Column("samekey_haystack_session_count", "Int64", "Same-key distractor sessions in the history."),
    Column("response", "Utf8", "The model's text; null when the call failed."),
    Column("error", "Utf8", "Why the call failed, when it did."),
    Column("synthetic", "Boolean", "True when the line is marked as synthetic (not real model output)."),
    Column("source_file", "Utf8", "File the prediction was read from, relative to the release directory."),
    Column("source_line", "Int64", "1-based line number in that file."),
)
COLUMN_NAMES: tuple[str, ...] = tuple(c.name for c in FRAME_COLUMNS)

#: Item fields a prediction needs, from the line or from the item table.
ITEM_FIELDS: tuple[str, ...] = (
    "question_id", "context_length", "family_id", "evidence_type", "memory_operation", "subtype",
    "expected_response", "answer_type", "answer_normalization", "session_count",
    "evidence_session_count", "samekey_haystack_session_count",
)
REQUIRED_ITEM_FIELDS: tuple[str, ...] = (
    "question_id", "context_length", "evidence_type", "memory_operation", "expected_response",
)


#: Input conditions of the text-substitution ablation (paper section 4.4), as ``input_condition`` holds them.
ABLATION_CONDITIONS: tuple[str, ...] = ("full_audio", "transcript_only")
_CONDITION_ALIASES = {"full_audio": "full_audio", "full": "full_audio", "audio": "full_audio",
                      "transcript_only": "transcript_only", "transcript": "transcript_only",
                      "text_only": "transcript_only"}


def normalize_condition(value) -> str | None:
    """The canonical input condition of ``value`` (any case; spaces, dashes and dots read as ``_``;
    ``full``/``audio`` and ``transcript``/``text_only`` as aliases), or None when it is not one."""
    if not isinstance(value, str):
        return None
    key = re.sub(r"[^a-z0-9]+", "_", value.strip().lower()).strip("_")
    return _CONDITION_ALIASES.get(key)
