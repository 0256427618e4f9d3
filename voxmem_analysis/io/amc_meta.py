"""Which benchmark a release folder holds, from its ``release.json`` (light: no pandas, no polars).

``"benchmark": "audio-multichallenge"`` marks an Audio MultiChallenge release; the same name spelled
otherwise (``audio_multichallenge``, ``Audio MultiChallenge``, ``AMC``: compared without case, spaces,
``-`` or ``_``) is read as it, with a warning naming the spelling.  No ``benchmark`` (or ``voxmem``)
is a VoxMem release; any other value is named as a benchmark this workbook does not read, never
mistaken for a VoxMem folder without predictions.  Every command decides through
:func:`release_benchmark` (one place).
"""
from __future__ import annotations

import json
from pathlib import Path

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.jsonl import decode
from voxmem_analysis.textlimits import read_regular

__all__ = ["BENCHMARK_ID", "release_benchmark", "is_amc_release", "benchmark_problems"]

BENCHMARK_ID = "audio-multichallenge"
_AMC_SPELLINGS = ("audiomultichallenge", "amc")
_VOXMEM_SPELLINGS = ("voxmem", "voxmembench")


def _squeezed(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def release_benchmark(path) -> tuple[str | None, str | None]:
    """``(kind, written)`` of the folder at ``path``: kind ``"amc"``, ``"voxmem"`` or ``"unknown"``
    (a ``benchmark`` this workbook does not read), or None without a readable ``release.json``
    object; ``written`` is the ``benchmark`` value as written (None when absent)."""
    try:
        meta = json.loads(decode(read_regular(Path(path) / "release.json")))
    except (OSError, ValueError, RecursionError):
        return None, None
    if not isinstance(meta, dict):
        return None, None
    written = meta.get("benchmark")
    if written is None:
        return "voxmem", None
    name = _squeezed(str(written))
    if name in _AMC_SPELLINGS:
        return "amc", str(written)
    return ("voxmem" if name in _VOXMEM_SPELLINGS else "unknown"), str(written)


def is_amc_release(path) -> bool:
    """True when ``path/release.json`` names Audio MultiChallenge (in any spelling, see the module docstring)."""
    return release_benchmark(path)[0] == "amc"


def benchmark_problems(path) -> list[Problem]:
    """What ``release.json``'s ``benchmark`` says that a reader must name: an AMC spelling other than
    ``audio-multichallenge`` (warning ``benchmark_spelling``), a benchmark this workbook does not read
    (error ``unknown_benchmark``)."""
    kind, written = release_benchmark(path)
    if kind == "amc" and written != BENCHMARK_ID:
        return [Problem("benchmark_spelling", "warning", f"benchmark {written!r} read as {BENCHMARK_ID!r}",
                        "release.json", None, "benchmark")]
    if kind == "unknown":
        return [Problem("unknown_benchmark", "error", f"benchmark {written!r} is not one this workbook reads: "
                        f"{BENCHMARK_ID!r} (Audio MultiChallenge), or no `benchmark` for a VoxMem release",
                        "release.json", None, "benchmark")]
    return []
