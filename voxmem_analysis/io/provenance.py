"""What every loaded release says about itself: its name, its one-line label, its problems.

:class:`ReleaseProvenance` is a mixin of the three release classes (:class:`~voxmem_analysis.io.release.Release`,
:class:`~voxmem_analysis.io.amc.AmcRelease`, :class:`~voxmem_analysis.io.longmemeval.LongMemEvalData`).
A class using it provides ``synthetic`` and ``problems``, and ``meta`` and ``path`` unless it
defines its own ``name``.
"""
from __future__ import annotations

from voxmem_analysis.errors import Problem

__all__ = ["SYNTHETIC_TAG", "ReleaseProvenance"]

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
