"""Problems found in input data, and every exception class of the package.

Each class says what went wrong, and so what a notebook section and the command line do with it:

* :class:`VoxMemDataError` -- input data breaks a rule; carries every :class:`Problem` found.
  Never skipped; the CLI exits 1.
* :class:`MissingDataError` (a :class:`VoxMemDataError`) -- a (partial) release lacks an optional
  part an analysis needs (a budget, a second judge, AR source operations ...).  The only error
  :func:`voxmem_analysis.analysis.selection.section` turns into "skipped -- reason"; the CLI exits 1.
* :class:`InputError` -- one bad argument or column (an unknown budget or model, a level outside
  (0, 1) ...); :class:`AnalysisInputError` (analyses), :class:`StatsInputError`
  (:mod:`voxmem_analysis.stats`) and :class:`UnknownNameError` (a name looked up in a registry:
  an artifact, a notebook) are its kinds.  Never skipped; the CLI exits 2.
* :class:`ResourceLimitError` -- a computation would exceed a memory or size limit (a huge ``n_boot``).
  The CLI exits 2.
* :class:`OutputFolderError` (and :class:`OutputLockedError`) -- an output folder that cannot be
  used as asked: locked by another run, holding foreign files, or a mix of two releases.  The CLI exits 2.
* :class:`Interrupted` -- a run stopped by SIGINT, SIGTERM or SIGHUP (a :class:`KeyboardInterrupt`);
  the CLI exits 128 + the signal's number.

All are :class:`ValueError` subclasses (``UnknownNameError`` is a :class:`KeyError` too).  Anything
else reaching the command line (a bare ``ValueError``, ``KeyError``, ``TypeError``) is a bug: exit 3.
"""
from __future__ import annotations

import signal
from dataclasses import asdict, dataclass

__all__ = ["FILE_LOSS_CODES", "files_not_read_in_full", "lost_summary", "Problem", "VoxMemDataError", "MissingDataError", "InputError", "AnalysisInputError", "StatsInputError",
           "UnknownNameError", "ResourceLimitError", "OutputFolderError", "OutputLockedError", "USAGE_ERRORS",
           "Interrupted", "format_problems"]


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
        # the total counts findings: a summary problem ("... and 40 more like the above") carries
        # their number in `count`, so it is not one error, nor are the lines it stands for left out
        total = sum(p.count for p in errors)
        head = summary or f"{total} error(s) in input data"
        shown = "\n".join(f"  {p}" for p in errors[:20])
        more = f"\n  ... and {total - sum(p.count for p in errors[:20])} more" if len(errors) > 20 else ""
        super().__init__(f"{head}\n{shown}{more}")


class MissingDataError(VoxMemDataError):
    """The release lacks an optional part an analysis needs (a budget, a second judge, AR source operations…).

    Nothing in the data is wrong: a partial release simply cannot support this analysis.
    ``reason`` is one sentence saying what is missing (printed by
    :func:`voxmem_analysis.analysis.selection.section`, the only place that skips an error);
    the single :class:`Problem` carries what the release has instead.
    """

    def __init__(self, reason: str, detail: str | None = None, *, code: str = "missing_data",
                 field: str | None = None, file: str | None = None):
        self.reason = reason
        super().__init__([Problem(code, "error", detail or reason, file, None, field)], reason)


class InputError(ValueError):
    """One invalid argument or column: a one-line message naming it (``field``).

    A mistake in how a function or command was called, not in the data: never a
    :class:`VoxMemDataError`, so no notebook section skips it.
    """

    code = "input"

    def __init__(self, message: str, field: str | None = None):
        self.field = field
        super().__init__(message)

    def __str__(self) -> str:  # the message itself (not KeyError's quoted repr in UnknownNameError)
        return str(self.args[0]) if self.args else ""


class AnalysisInputError(InputError):
    """A bad argument or column of an analysis (:mod:`voxmem_analysis.analysis`): an unknown budget,
    model or column, a value outside its choices."""

    code = "analysis_input"


class StatsInputError(InputError):
    """Invalid argument passed to a statistics function (:mod:`voxmem_analysis.stats`)."""

    code = "stats_input"

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message, field)


class UnknownNameError(InputError, KeyError):
    """A name that is not in a registry (an artifact, a notebook): a bad argument, and a
    :class:`KeyError` for callers that look names up.  The message lists the known names."""

    code = "unknown_name"


class ResourceLimitError(ValueError):
    """A computation would need more memory (or resamples) than the configured limit.

    Raised before anything is allocated (:mod:`voxmem_analysis.stats.resources`); the message
    names the estimate, the limit and how to change either.  Deliberately *not* a
    :class:`VoxMemDataError`: nothing is wrong with the data, and a notebook section must not
    treat it as "the release lacks this part" and skip it.
    """

    def __init__(self, message: str, *, field: str | None = None, estimate: float | None = None,
                 limit: float | None = None):
        self.field, self.estimate, self.limit = field, estimate, limit
        super().__init__(message)


class OutputFolderError(ValueError):
    """An output folder cannot be used as asked (``reproduce --out``): it is not a reproduce output
    and not empty, or ``--only`` would mix two releases in one report.  The message says what to do."""


class OutputLockedError(OutputFolderError):
    """Another ``reproduce`` run is writing into the same output folder (its lock names pid and host)."""


class Interrupted(KeyboardInterrupt):
    """A signal stopped the command (``signum``; ``what``: "Ctrl-C" for SIGINT, else the signal's name)."""

    def __init__(self, signum: int):
        self.signum = int(signum)
        self.what = "Ctrl-C" if self.signum == signal.SIGINT else signal.Signals(self.signum).name
        super().__init__(self.what)


#: Errors of how something was asked (arguments, limits, output folders): the CLI exits 2.
USAGE_ERRORS: tuple[type[Exception], ...] = (InputError, ResourceLimitError, OutputFolderError)


def format_problems(problems: list[Problem]) -> str:
    return "\n".join(str(p) for p in problems)


#: Error codes whose loss is not counted in lines: a file not read at all, or the rest of one.
FILE_LOSS_CODES = frozenset({"truncated_gzip", "file_unreadable", "not_a_regular_file", "not_utf8",
                             "folder_unreadable", "items_unreadable", "models_unreadable"})


def files_not_read_in_full(problems) -> list[str]:
    """The files (sorted, once each) whose records were lost as a whole or in part without a line
    count (:data:`FILE_LOSS_CODES`): every summary that counts lost lines names these beside it."""
    return sorted({str(p.file) for p in problems
                   if p.severity == "error" and p.code in FILE_LOSS_CODES and p.file})


def lost_summary(left_out: int | None, problems) -> str:
    """``"3 line(s) left out"``, plus ``" and the unread part of 1 file (predictions/a.jsonl.gz)"``
    when a file was not read in full: one sentence for every place that reports a loss."""
    files = files_not_read_in_full(problems)
    text = f"{left_out} line(s) left out" if left_out is not None else "left out"
    if files:
        shown = ", ".join(files[:5]) + (f" and {len(files) - 5} more" if len(files) > 5 else "")
        text += (f", and the unread part of {len(files)} file(s) whose lines could not be counted "
                 f"({shown})")
    return text
