"""One door in: what a command or notebook names (``--data``, or ``--manifest`` with ``--questions`` or
``--tasks``) opened as a :class:`Source` of one of :data:`KINDS`, knowing its frame, label and problems."""
from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

from voxmem_analysis.errors import InputError, Problem, VoxMemDataError
from voxmem_analysis.io.amc import load_amc, load_amc_runs
from voxmem_analysis.io.engine.files import resolved
from voxmem_analysis.io.longmemeval import load_longmemeval
from voxmem_analysis.io.meta import benchmark_problems, release_benchmark
from voxmem_analysis.io.scoring import DEFAULT_REJECTION_PATTERN, ScoringRules
from voxmem_analysis.io.voxmem.release import load_release

__all__ = ["KINDS", "KIND_NAMES", "Source", "source_kind", "open_source"]

KINDS = ("voxmem", "amc_release", "longmemeval", "amc_runs")
#: What each kind is, in a message ("... does not apply to {name}").
KIND_NAMES = {"voxmem": "a VoxMem release", "amc_release": "an Audio MultiChallenge release",
              "longmemeval": "LongMemEval verdicts (--manifest --questions)",
              "amc_runs": "judged Audio MultiChallenge runs (--manifest --tasks)"}
_NO_INPUT = ("give either --data DIR, or --manifest FILE with --questions FILE (LongMemEval) or --tasks FILE "
             "(Audio MultiChallenge)")


@dataclass(frozen=True)
class Source:
    """An opened input: ``kind`` (:data:`KINDS`), ``data`` (the loader's object: a ``Release``, ``AmcRelease``,
    ``LongMemEvalData`` or ``AmcRuns``) and ``named``, the files the user named beside a manifest."""

    kind: str
    data: object
    named: tuple = ()

    @property
    def frame(self):
        """The verdict frame: a release's or LongMemEval's ``frame``, an AMC release's rubric-level frame,
        the AMC runs' task results."""
        if self.kind == "amc_release":
            return self.data.frame()
        return self.data.results if self.kind == "amc_runs" else self.data.frame

    @property
    def synthetic(self) -> bool:
        return bool(self.data.synthetic)

    @property
    def problems(self) -> list[Problem]:
        return list(self.data.problems)

    @property
    def is_amc(self) -> bool:
        return self.kind in ("amc_release", "amc_runs")

    def label(self) -> str:
        return self.data.label()

    @property
    def inputs(self) -> list[Path]:
        """Every file and folder the readers opened and the paths named, resolved through links."""
        return sorted(set(self.data.inputs) | set(resolved(self.named)))


def _usable(path, option: str, *, folder: bool) -> None:
    """An :class:`InputError` (exit 2) when ``path`` is missing or not a folder / regular file as needed."""
    shown = f"{option} {str(path)!r}"
    if not os.path.lexists(path):
        raise InputError(f"{shown} does not exist", option.lstrip("-"))
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        raise InputError(f"{shown} cannot be read ({exc.strerror or exc})", option.lstrip("-")) from None
    if folder and not stat.S_ISDIR(mode):
        raise InputError(f"{shown} is not a folder; give the release folder", option.lstrip("-"))
    if not folder and stat.S_ISDIR(mode):
        raise InputError(f"{shown} is a folder; give a file", option.lstrip("-"))
    if not folder and not stat.S_ISREG(mode):
        raise InputError(f"{shown} is not a regular file (a device or a pipe); give a file", option.lstrip("-"))


def source_kind(*, data=None, manifest=None, questions=None, tasks=None) -> str:
    """The kind the given paths name; an :class:`InputError` for none or a wrong mix, or a path that is
    missing or of the wrong type; a :class:`VoxMemDataError` for a ``release.json`` naming another benchmark."""
    if questions and tasks:
        raise InputError("--tasks (Audio MultiChallenge) and --questions (LongMemEval) cannot be combined", "tasks")
    if data and (manifest or questions or tasks):
        raise InputError(f"--data cannot be combined with --manifest/--questions/--tasks; {_NO_INPUT}", "data")
    if not data and not manifest:
        what = "--tasks" if tasks else "--questions" if questions else None
        raise InputError(f"{what} needs --manifest FILE (the results files it lists)" if what else _NO_INPUT,
                         "manifest")
    if manifest and not (questions or tasks):
        raise InputError("--manifest needs --questions FILE (LongMemEval: the question types come from it) or "
                         "--tasks FILE (Audio MultiChallenge: the task table)", "manifest")
    for option, path in (("--manifest", manifest), ("--questions", questions), ("--tasks", tasks)):
        if path:
            _usable(path, option, folder=False)
    if manifest:
        return "amc_runs" if tasks else "longmemeval"
    _usable(data, "--data", folder=True)
    kind, written = release_benchmark(data)
    if kind == "unknown":
        raise VoxMemDataError(benchmark_problems(data), f"release {str(data)!r} is not one this workbook reads")
    return "amc_release" if kind == "amc" else "voxmem"


def open_source(*, data=None, manifest=None, questions=None, tasks=None, strict: bool = True,
                convention: str = "paper", rejection_pattern: str | None = None, type_key: str | None = None,
                cache: bool = True, progress=None) -> Source:
    """Open ``data`` (a release folder of either benchmark), or ``manifest`` with ``questions`` (LongMemEval) or
    ``tasks`` (judged AMC runs).  ``strict`` raises listing every error, else bad lines are left out and listed;
    ``convention``/``rejection_pattern``: the scoring rules; ``type_key``: the question type's field (LongMemEval);
    ``cache``: the parsed-release cache (VoxMem); ``progress(done, total)`` while reading."""
    kind = source_kind(data=data, manifest=manifest, questions=questions, tasks=tasks)
    if kind == "voxmem":
        rules = ScoringRules(rejection_pattern=rejection_pattern or DEFAULT_REJECTION_PATTERN, convention=convention)
        loaded = load_release(data, strict=strict, rules=rules, cache=cache, progress=progress)
    elif kind == "amc_release":
        loaded = load_amc(data, strict=strict, progress=progress)
    elif kind == "longmemeval":
        loaded = load_longmemeval(manifest, questions, strict=strict, convention=convention, type_key=type_key,
                                  progress=progress)
    else:
        loaded = load_amc_runs(manifest, tasks, strict=strict, progress=progress)
    return Source(kind, loaded, tuple(str(p) for p in (manifest, questions, tasks) if p))
