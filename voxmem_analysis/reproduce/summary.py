"""The table ``reproduce`` prints at the end (template ``summary.txt``): notebooks, release, scoreboard, audit,
validation, provenance."""
from __future__ import annotations

import sys
from pathlib import Path

from voxmem_analysis.reproduce.report_html import render

__all__ = ["print_summary"]


class _Record(dict):
    """A run.json record whose missing keys read as None in the template."""

    def __missing__(self, key):
        return None


def print_summary(summary, stream=None) -> None:
    """Print the table of a :class:`~voxmem_analysis.reproduce.runner.RunSummary` (default: on standard output)."""
    report = Path(summary.out_dir) / "report" / "index.html"
    (stream or sys.stdout).write(render(
        "summary.txt", s=summary, rel=_Record(summary.release or {}), rp=_Record(summary.reproduction or {}),
        au=_Record(summary.audit or {}), width=max([len(r.name) for r in summary.notebooks] + [8]),
        joined=lambda rel: Path(summary.out_dir) / rel, report=report if report.exists() else None,
        errors=sum(p["count"] for p in summary.problems if p["severity"] == "error"),
        warnings=sum(p["count"] for p in summary.problems if p["severity"] == "warning"),
        kinds=sorted({f"{p['severity']} {p['code']}" for p in summary.problems})) + "\n")
