"""The paper's scoring rules (Appendix C.4), explicit and overridable.

=================  =====================================================  ==============  =========
status             recognised by                                          counts as       in denom.
=================  =====================================================  ==============  =========
provider_rejected  ``response`` null/empty and ``error`` matches           --              no
                   :attr:`ScoringRules.rejection_pattern`, or the line
                   carries ``"provider_rejected": true``
failed             ``response`` null or blank (generation failed)         incorrect       yes
ungraded           a response, but ``verdict`` null / not a boolean       incorrect       paper: yes;
                                                                                          harness: no
graded             a response and a boolean verdict                       ``verdict``     yes
=================  =====================================================  ==============  =========

``convention="harness"`` reproduces the public harness's own reporting, which leaves
ungraded predictions out of the denominator, so a user can compare the two.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

__all__ = ["DEFAULT_REJECTION_PATTERN", "ScoringRules", "apply_scoring", "status_of"]

#: Errors that mean the provider refused the request before the model saw it.
DEFAULT_REJECTION_PATTERN = (
    r"(?i)(provider[ _-]?rejected|rejected (by|before)|blocked before inference|invalid_request"
    r"|content[ _-]?(policy|filter)|prompt (was )?blocked|context[ _-]?length[ _-]?exceeded"
    r"|maximum context length|input (is )?too long|request too large|http 413)"
)


@dataclass(frozen=True)
class ScoringRules:
    """How predictions are scored. ``convention`` is ``"paper"`` (default) or ``"harness"``."""

    rejection_pattern: str = DEFAULT_REJECTION_PATTERN
    convention: str = "paper"

    def __post_init__(self):
        if self.convention not in ("paper", "harness"):
            raise ValueError(f"convention must be 'paper' or 'harness', got {self.convention!r}")
        try:
            re.compile(self.rejection_pattern)
        except re.error as exc:
            raise ValueError(f"rejection_pattern is not a valid regular expression: {exc}") from None


def status_of(response, verdict, error, provider_rejected=None, rules: ScoringRules = ScoringRules()) -> str:
    """Status of one prediction (pure-Python twin of :func:`apply_scoring`, for tests and docs)."""
    blank = response is None or (isinstance(response, str) and not response.strip())
    if blank and (provider_rejected is True or (error and re.search(rules.rejection_pattern, str(error)))):
        return "provider_rejected"
    if blank:
        return "failed"
    if not isinstance(verdict, bool):
        return "ungraded"
    return "graded"


def apply_scoring(frame: pl.DataFrame, rules: ScoringRules = ScoringRules()) -> pl.DataFrame:
    """(Re)compute ``status``, ``correct`` and ``scored`` from ``response``, ``verdict``, ``error``."""
    blank = pl.col("response").is_null() | (pl.col("response").str.strip_chars() == "")
    rejected_flag = (
        pl.col("provider_rejected").fill_null(False).cast(pl.Boolean)
        if "provider_rejected" in frame.columns else pl.lit(False)
    )
    err_match = pl.col("error").fill_null("").str.contains(rules.rejection_pattern)
    status = (
        pl.when(blank & (rejected_flag | err_match)).then(pl.lit("provider_rejected"))
        .when(blank).then(pl.lit("failed"))
        .when(pl.col("verdict").is_null()).then(pl.lit("ungraded"))
        .otherwise(pl.lit("graded"))
    )
    frame = frame.with_columns(status.alias("status"))
    correct = (pl.col("status") == "graded") & pl.col("verdict").fill_null(False)
    if rules.convention == "paper":
        scored = pl.col("status") != "provider_rejected"
    else:
        scored = ~pl.col("status").is_in(["provider_rejected", "ungraded"])
    return frame.with_columns(correct.alias("correct"), scored.alias("scored"))
