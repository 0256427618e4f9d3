"""Problems found in input data, and the exception that carries them."""
from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["Problem", "VoxMemDataError", "format_problems"]


@dataclass(frozen=True)
class Problem:
    """One thing wrong (``severity='error'``) or worth knowing (``'warning'``) about the input.

    ``file`` is relative to the release directory, ``line`` is 1-based (``None`` when the
    problem concerns a whole file or several lines), ``field`` names the JSON field.
    ``count`` > 1 when one message summarises several identical findings.
    """

    code: str
    severity: str
    message: str
    file: str | None = None
    line: int | None = None
    field: str | None = None
    count: int = 1

    def location(self) -> str:
        loc = self.file or "<release>"
        if self.line is not None:
            loc += f":{self.line}"
        if self.field:
            loc += f" [{self.field}]"
        return loc

    def __str__(self) -> str:
        more = f" (x{self.count})" if self.count > 1 else ""
        return f"{self.severity.upper()} {self.code}: {self.location()}: {self.message}{more}"

    def as_dict(self) -> dict:
        return asdict(self)


class VoxMemDataError(ValueError):
    """Raised when input data breaks a rule; ``problems`` lists every finding, not just the first."""

    def __init__(self, problems: list[Problem], summary: str | None = None):
        self.problems = list(problems)
        errors = [p for p in self.problems if p.severity == "error"]
        head = summary or f"{len(errors)} error(s) in input data"
        shown = "\n".join(f"  {p}" for p in errors[:20])
        more = f"\n  ... and {len(errors) - 20} more" if len(errors) > 20 else ""
        super().__init__(f"{head}\n{shown}{more}")


def format_problems(problems: list[Problem]) -> str:
    return "\n".join(str(p) for p in problems)
