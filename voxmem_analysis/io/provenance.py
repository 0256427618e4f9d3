"""What every loaded release says about itself: its name, its one-line label, its problems.

:class:`ReleaseProvenance` is a mixin of the release classes (:class:`~voxmem_analysis.io.release.Release`,
:class:`~voxmem_analysis.io.amc.AmcRelease`; :class:`ManifestData`: LongMemEvalData, AmcRuns).
A class using it provides ``synthetic`` and ``problems``, and ``meta`` and ``path`` unless it
defines its own ``name``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from voxmem_analysis.errors import Problem

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SYNTHETIC_TAG", "ReleaseProvenance", "ManifestData"]

#: First words of the label of a synthetic release (figures, reports, CLI output).
SYNTHETIC_TAG = "SYNTHETIC DATA - not real model output"


class ReleaseProvenance:
    """``name``, ``label()``, ``errors()`` and ``warnings()`` of a loaded release."""

    @property
    def name(self) -> str:
        """``name`` in ``release.json``, else the folder's name."""
        return str(self.meta.get("name") or self.path.name)

    def label(self) -> str:
        """One-line provenance label used on figures and reports."""
        return f"{SYNTHETIC_TAG if self.synthetic else 'data'}: {self.name}"

    @property
    def inputs(self) -> list[Path]:
        """Every file and folder read, resolved through links (PROVISIONAL: walks the input paths; the
        readers' own record replaces it)."""
        return walk_inputs([getattr(self, "path", None)])

    def errors(self) -> list[Problem]:
        """The problems of severity ``error``."""
        return [p for p in self.problems if p.severity == "error"]

    def warnings(self) -> list[Problem]:
        """The problems of severity ``warning``."""
        return [p for p in self.problems if p.severity == "warning"]


@dataclass(kw_only=True)
class ManifestData(ReleaseProvenance):
    """The keyword fields, ``synthetic`` and ``name`` of verdicts read through a manifest (``manifest``: its
    usable rows; ``dropped``: rows none of whose verdicts were kept).  ``VERDICTS``: the frame whose
    ``synthetic`` column is read; ``UNNAMED``: the name without a manifest path."""

    VERDICTS: ClassVar[str] = "frame"
    UNNAMED: ClassVar[str] = "manifest"

    manifest: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    manifest_path: Path | None = None
    dropped: list[dict] = field(default_factory=list)

    @property
    def synthetic(self) -> bool:
        """True when any verdict says ``"synthetic": true`` (the shipped examples do; a text ``true``/``1``
        in any case counts too)."""
        import polars as pl

        frame = getattr(self, self.VERDICTS)
        col = frame["synthetic"] if "synthetic" in frame.columns else pl.Series([], dtype=pl.Boolean)
        if col.dtype == pl.Utf8:
            col = col.str.strip_chars().str.to_lowercase().is_in(["true", "1"])
        return bool(col.cast(pl.Boolean, strict=False).fill_null(False).any())

    @property
    def inputs(self) -> list[Path]:
        """The manifest, the question or task table and every file it lists, resolved (PROVISIONAL, as above)."""
        listed = list(self.manifest["resolved"]) if "resolved" in getattr(self.manifest, "columns", ()) else []
        return walk_inputs([self.manifest_path, getattr(self, "questions_path", None),
                            getattr(self, "tasks_path", None), *listed])

    @property
    def name(self) -> str:
        m = self.manifest_path
        if m is None:
            return self.UNNAMED
        return f"{m.parent.name}/{m.name}" if m.parent.name else m.name


def walk_inputs(paths) -> list[Path]:
    """PROVISIONAL: ``paths`` and everything under them (links followed, each folder once), resolved."""
    def real(path) -> Path:
        try:
            return Path(path).resolve()
        except (OSError, RuntimeError):   # a link loop: the path as written
            return Path(os.path.abspath(path))

    found: set[Path] = set()
    for given in paths:
        if given is None or not os.path.lexists(given):
            continue
        found.add(real(given))
        for top, dirs, files in os.walk(given, followlinks=True) if os.path.isdir(given) else ():
            folders = [real(Path(top, n)) for n in dirs]
            dirs[:] = [n for n, r in zip(dirs, folders) if r not in found]   # a link loop is walked once
            found.update(folders + [real(Path(top, n)) for n in files])
    return sorted(found)
