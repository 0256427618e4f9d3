"""What every loaded input says about itself: name, label, problems and ``inputs`` (every file and folder
read, resolved through links)."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.engine.files import tree

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SYNTHETIC_TAG", "ReleaseProvenance", "ManifestData"]

#: First words of the label of a synthetic release (figures, reports, CLI output).
SYNTHETIC_TAG = "SYNTHETIC DATA - not real model output"


class ReleaseProvenance:
    """``name``, ``label()``, ``errors()``, ``warnings()`` and ``inputs`` of a loaded release."""

    @property
    def name(self) -> str:
        """``name`` in ``release.json``, else the folder's name."""
        return str(self.meta.get("name") or self.path.name)

    @property
    def inputs(self) -> tuple[Path, ...]:
        """Every file and folder of the release (the folder itself, what is below it, links followed),
        each resolved through symbolic links."""
        found = self.__dict__.get("_inputs")
        if found is None:
            found = self.__dict__["_inputs"] = tree(self.path)
        return found

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
    """The fields of verdicts read through a manifest (``manifest``: the usable rows; ``dropped``; ``inputs``);
    ``VERDICTS`` names the frame whose ``synthetic`` column is read."""

    VERDICTS: ClassVar[str] = "frame"
    UNNAMED: ClassVar[str] = "manifest"

    manifest: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)
    stats: dict = field(default_factory=dict)
    manifest_path: Path | None = None
    dropped: list[dict] = field(default_factory=list)
    inputs: tuple[Path, ...] = ()

    @property
    def synthetic(self) -> bool:
        """True when any verdict says ``"synthetic": true`` (a text ``true``/``1`` in any case too)."""
        frame = getattr(self, self.VERDICTS)
        col = frame["synthetic"] if "synthetic" in frame.columns else pl.Series([], dtype=pl.Boolean)
        if col.dtype == pl.Utf8:
            col = col.str.strip_chars().str.to_lowercase().is_in(["true", "1"])
        return bool(col.cast(pl.Boolean, strict=False).fill_null(False).any())

    @property
    def name(self) -> str:
        m = self.manifest_path
        if m is None:
            return self.UNNAMED
        return f"{m.parent.name}/{m.name}" if m.parent.name else m.name
