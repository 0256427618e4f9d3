"""``release.json``, read once for every reader: what a release says about itself and which benchmark it
holds (Audio MultiChallenge, or VoxMem when absent)."""
from __future__ import annotations

import json
from pathlib import Path

from voxmem_analysis.errors import Problem
from voxmem_analysis.io.engine.rules import fact
from voxmem_analysis.textlimits import read_regular

__all__ = ["BENCHMARK_ID", "read_meta", "release_benchmark", "is_amc_release", "benchmark_problems"]

BENCHMARK_ID = "audio-multichallenge"
_AMC_SPELLINGS = ("audiomultichallenge", "amc")
_VOXMEM_SPELLINGS = ("voxmem", "voxmembench")
_NAME = "release.json"

MISSING = fact("missing_table", "error", lambda r: "no release.json")
UNREADABLE = fact("release_json_unreadable", "error", lambda r: f"release.json cannot be read: {r['why']}")
NOT_JSON = fact("malformed_json", "error", lambda r: f"release.json is not valid JSON: {r['why']}")
NOT_OBJECT = fact("invalid_field", "error", lambda r: f"release.json must hold a JSON object, got {r['type']}")
SYNTHETIC = fact("invalid_field", "error", lambda r: f"synthetic must be true or false, got {r['v']!r}", "synthetic")
SPELLING = fact("benchmark_spelling", "warning", lambda r: f"benchmark {r['v']!r} read as {BENCHMARK_ID!r}", "benchmark")
UNKNOWN = fact("unknown_benchmark", "error", lambda r: f"benchmark {r['v']!r} is not one this workbook reads: "
               f"{BENCHMARK_ID!r} (Audio MultiChallenge), or no `benchmark` for a VoxMem release", "benchmark")


def _squeezed(text: str) -> str:
    return "".join(ch for ch in text.lower() if ch.isalnum())


def _synthetic(v) -> tuple[bool, bool]:
    """``(value, ok)``: a boolean, null, 0/1, or the text true/false/1/0 in any case."""
    if v is None or isinstance(v, bool):
        return bool(v), True
    if isinstance(v, int) and v in (0, 1):
        return bool(v), True
    if isinstance(v, str) and v.strip().lower() in ("true", "false", "1", "0"):
        return v.strip().lower() in ("true", "1"), True
    return False, False


def read_meta(root, *, required: bool = False) -> tuple[dict, list[Problem]]:
    """``(meta, problems)`` of ``root/release.json`` (``synthetic`` read as a boolean), one problem per
    fault (absent, an error only when ``required``)."""
    path = Path(root) / _NAME
    if not path.exists() and not path.is_symlink():
        return {}, [MISSING.problem(_NAME)] if required else []
    try:
        meta = json.loads(read_regular(path).decode("utf-8-sig"))   # a FIFO: OSError, not a hang
    except json.JSONDecodeError as exc:
        return {}, [NOT_JSON.problem(_NAME, exc.lineno, why=exc.msg)]
    except (UnicodeDecodeError, RecursionError, ValueError) as exc:
        return {}, [NOT_JSON.problem(_NAME, why=exc)]
    except OSError as exc:  # a folder, no permission, a broken link
        return {}, [UNREADABLE.problem(_NAME, why=exc.strerror or exc)]
    if not isinstance(meta, dict):
        return {}, [NOT_OBJECT.problem(_NAME, type=type(meta).__name__)]
    value, ok = _synthetic(meta.get("synthetic"))
    meta["synthetic"] = value
    problems = [] if ok else [SYNTHETIC.problem(_NAME, v=meta.get("synthetic"))]
    return meta, problems + benchmark_problems(root, meta)


def _kind(meta: dict) -> tuple[str, str | None]:
    written = meta.get("benchmark")
    if written is None:
        return "voxmem", None
    name = _squeezed(str(written))
    if name in _AMC_SPELLINGS:
        return "amc", str(written)
    return ("voxmem" if name in _VOXMEM_SPELLINGS else "unknown"), str(written)


def release_benchmark(path) -> tuple[str | None, str | None]:
    """``(kind, written)`` of the folder at ``path``: kind ``"amc"``, ``"voxmem"`` or ``"unknown"``, or
    None without a readable ``release.json`` object; ``written`` is the ``benchmark`` value as written."""
    try:
        meta = json.loads(read_regular(Path(path) / _NAME).decode("utf-8-sig"))
    except (OSError, ValueError, RecursionError):
        return None, None
    return _kind(meta) if isinstance(meta, dict) else (None, None)


def is_amc_release(path) -> bool:
    """True when ``path/release.json`` names Audio MultiChallenge (in any spelling)."""
    return release_benchmark(path)[0] == "amc"


def benchmark_problems(path, meta: dict | None = None) -> list[Problem]:
    """What ``release.json``'s ``benchmark`` says that a reader must name: an AMC spelling other than
    ``audio-multichallenge`` (warning), a benchmark this workbook does not read (error)."""
    kind, written = _kind(meta) if meta is not None else release_benchmark(path)
    if kind == "amc" and written != BENCHMARK_ID:
        return [SPELLING.problem(_NAME, v=written)]
    if kind == "unknown":
        return [UNKNOWN.problem(_NAME, v=written)]
    return []
