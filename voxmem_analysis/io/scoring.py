"""The paper's scoring rules (Appendix C.4), explicit and overridable.  A prediction is
``provider_rejected`` (blank response and a rejection error or ``"provider_rejected": true``: out of the
denominator; an error naming an output filter never is), ``failed`` (blank response: incorrect),
``ungraded`` (no boolean verdict: incorrect) or ``graded`` (scored by its verdict).  ``convention="harness"``
counts, as the public scorer does, every line with a verdict, correct when it is true."""
from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

__all__ = ["DEFAULT_REJECTION_PATTERN", "OUTPUT_FILTER_PATTERN", "ScoringRules", "apply_scoring"]

#: Errors that mean the provider refused the request before the model saw it.
DEFAULT_REJECTION_PATTERN = (
    r"(?i)(provider[ _-]?rejected|rejected (by the provider|before)|blocked before inference|invalid_request"
    r"|(prompt|input|request)( \w+){0,3}? (was |is )?(blocked|filtered|flagged)"
    r"|(prompt|input|request)\W+(\w+\W+){0,4}?content[ _-]?(policy|filter|management)"
    r"|prompt[ _-]?feedback|block[ _-]?reason"
    r"|context[ _-]?length[ _-]?exceeded|maximum context length|input (is )?too long|request too large|http 413)"
)
#: Errors that describe a filter on the model's output: after inference, so never a rejection.
OUTPUT_FILTER_PATTERN = (
    r"(?i)(finish[ _-]?reason|stop[ _-]?reason|(response|output|completion|generation|answer)( \w+){0,2}? "
    r"(was |is |has been )?(filtered|blocked|flagged|withheld|redacted)"
    r"|(output|response|completion)[ _-]?(content[ _-]?)?(filter|moderation)|filtered (the )?(output|response|completion))"
)


@dataclass(frozen=True)
class ScoringRules:
    """How predictions are scored. ``convention`` is ``"paper"`` (default) or ``"harness"``."""

    rejection_pattern: str = DEFAULT_REJECTION_PATTERN
    convention: str = "paper"
    output_filter_pattern: str = OUTPUT_FILTER_PATTERN

    def __post_init__(self):
        if self.convention not in ("paper", "harness"):
            raise ValueError(f"convention must be 'paper' or 'harness', got {self.convention!r}")
        for name in ("rejection_pattern", "output_filter_pattern"):
            try:
                re.compile(getattr(self, name))
            except re.error as exc:
                raise ValueError(f"{name} is not a valid regular expression: {exc}") from None


def apply_scoring(frame: pl.DataFrame, rules: ScoringRules = ScoringRules()) -> pl.DataFrame:
    """(Re)compute ``status``, ``correct`` and ``scored`` from ``response``, ``verdict``, ``error``."""
    blank = pl.col("response").is_null() | (pl.col("response").str.strip_chars() == "")
    rejected_flag = (
        pl.col("provider_rejected").fill_null(False).cast(pl.Boolean)
        if "provider_rejected" in frame.columns else pl.lit(False)
    )
    err = pl.col("error").fill_null("")
    err_match = err.str.contains(rules.rejection_pattern) & ~err.str.contains(rules.output_filter_pattern)
    status = (
        pl.when(blank & (rejected_flag | err_match)).then(pl.lit("provider_rejected"))
        .when(blank).then(pl.lit("failed"))
        .when(pl.col("verdict").is_null()).then(pl.lit("ungraded"))
        .otherwise(pl.lit("graded"))
    )
    frame = frame.with_columns(status.alias("status"))
    if rules.convention == "paper":
        correct = (pl.col("status") == "graded") & pl.col("verdict").fill_null(False)
        scored = pl.col("status") != "provider_rejected"
    else:  # the public scorer: counted when the verdict is not null, correct when it is true
        correct = pl.col("verdict").fill_null(False)
        scored = pl.col("verdict").is_not_null()
    return frame.with_columns(correct.alias("correct"), scored.alias("scored"))
