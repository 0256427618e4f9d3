"""What every loaded release says about itself: its name, its one-line label, its problems.

:class:`ReleaseProvenance` is a mixin of the release classes (:class:`~voxmem_analysis.io.release.Release`,
:class:`~voxmem_analysis.io.amc.AmcRelease`, and through :class:`ManifestData` the verdicts read through a
manifest, :class:`~voxmem_analysis.io.longmemeval.LongMemEvalData` and :class:`~voxmem_analysis.io.amc_runs.AmcRuns`).
A class using it provides ``synthetic`` and ``problems``, and ``meta`` and ``path`` unless it
defines its own ``name``.
"""
from __future__ import annotations

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

    def errors(self) -> list[Problem]:
        """The problems of severity ``error``."""
        return [p for p in self.problems if p.severity == "error"]

    def warnings(self) -> list[Problem]:
        """The problems of severity ``warning``."""
        return [p for p in self.problems if p.severity == "warning"]


@dataclass(kw_only=True)
class ManifestData(ReleaseProvenance):
    """What verdicts read through a manifest have besides their frames (keyword fields): ``manifest``, the
    usable manifest rows; ``problems``; ``stats``; ``manifest_path``; ``dropped``, the manifest rows none
    of whose verdicts were kept (``manifest_line``, ``reason`` ...).  A subclass names the frame whose
    ``synthetic`` column says whether the data are synthetic (``VERDICTS``) and its name when it has no
    manifest path (``UNNAMED``)."""

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
        if "synthetic" not in frame.columns or not frame.height:
            return False
        col = frame["synthetic"]
        flags = (col.str.strip_chars().str.to_lowercase().is_in(["true", "1"]) if col.dtype == pl.Utf8
                 else col.cast(pl.Boolean, strict=False))
        return bool(flags.fill_null(False).any())

    @property
    def name(self) -> str:
        """``folder/manifest.csv`` of the manifest read."""
        m = self.manifest_path
        if m is None:
            return self.UNNAMED
        return f"{m.parent.name}/{m.name}" if m.parent.name else m.name
