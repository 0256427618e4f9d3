"""Resource guard of the bootstrap: refuse before allocating what would not fit.

:func:`check_bootstrap_memory` raises :class:`~voxmem_analysis.errors.ResourceLimitError` beyond
:func:`memory_limit` (2 GiB, or :data:`MEMORY_ENV`, e.g. ``VOXMEM_BOOTSTRAP_MEMORY=8GiB``); :func:`check_n_boot`
bounds ``n_boot`` by :func:`max_n_boot` (1,000,000, or :data:`MAX_N_BOOT_ENV`), beyond which the Monte-Carlo error
is far below any printed digit.
"""
from __future__ import annotations

import os
import re
from typing import Any

from voxmem_analysis.errors import ResourceLimitError

__all__ = ["MEMORY_ENV", "MAX_N_BOOT_ENV", "DEFAULT_MEMORY_LIMIT", "DEFAULT_MAX_N_BOOT", "memory_limit",
           "max_n_boot", "parse_bytes", "format_bytes", "bootstrap_memory", "check_bootstrap_memory", "check_n_boot"]

#: Environment variable overriding the bootstrap memory limit (bytes, or with a unit: ``8GiB``, ``500MB``).
MEMORY_ENV = "VOXMEM_BOOTSTRAP_MEMORY"
#: Environment variable overriding the largest accepted ``n_boot``.
MAX_N_BOOT_ENV = "VOXMEM_MAX_N_BOOT"
DEFAULT_MEMORY_LIMIT = 2 * 2**30
DEFAULT_MAX_N_BOOT = 1_000_000
_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?(?:[eE][0-9]+)?)\s*([A-Za-z]*)\s*$")


def parse_bytes(text: str) -> int:
    """``"2GiB"`` -> 2147483648; ``"500MB"`` -> 500000000; ``"1e9"`` -> 1000000000."""
    m = _SIZE.match(str(text))
    unit = m.group(2).lower() if m else None
    if m is None or unit not in _UNITS:
        raise ResourceLimitError(f"{MEMORY_ENV}={text!r} is not a size; give bytes or a size such as 4GiB or 500MB",
                                 field=MEMORY_ENV)
    return int(float(m.group(1)) * _UNITS[unit])


def format_bytes(n: float) -> str:
    """Binary units, three significant digits: ``45.3 GiB``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


def memory_limit() -> int:
    """The bootstrap memory limit in bytes (:data:`MEMORY_ENV`, default 2 GiB)."""
    text = os.environ.get(MEMORY_ENV, "").strip()
    return parse_bytes(text) if text else DEFAULT_MEMORY_LIMIT


def max_n_boot() -> int:
    """The largest accepted ``n_boot`` (:data:`MAX_N_BOOT_ENV`, default 1,000,000)."""
    text = os.environ.get(MAX_N_BOOT_ENV, "").strip()
    if not text:
        return DEFAULT_MAX_N_BOOT
    try:
        value = int(float(text))
    except ValueError:
        raise ResourceLimitError(f"{MAX_N_BOOT_ENV}={text!r} is not a whole number", field=MAX_N_BOOT_ENV) from None
    return max(1, value)


def bootstrap_memory(n_boot: int, columns: int, arrays: int = 2) -> int:
    """Bytes held by ``arrays`` float64 arrays of shape ``(n_boot, columns)``."""
    return int(n_boot) * max(1, int(columns)) * 8 * max(1, int(arrays))


def check_n_boot(n_boot: Any, *, option: str = "n_boot") -> int:
    """``n_boot`` if at most :func:`max_n_boot`; else :class:`ResourceLimitError` naming ``option``."""
    limit = max_n_boot()
    if isinstance(n_boot, (int, float)) and not isinstance(n_boot, bool) and n_boot > limit:
        raise ResourceLimitError(
            f"{option} {int(n_boot):,} is more than the maximum of {limit:,} resamples (the Monte-Carlo error of "
            f"an interval endpoint at 10,000 is already about 0.1 pp); lower {option}, or set {MAX_N_BOOT_ENV} "
            f"to raise the maximum", field=option, estimate=float(n_boot), limit=float(limit))
    return n_boot


def check_bootstrap_memory(n_boot: int, columns: int, *, arrays: int = 2, what: str = "the bootstrap") -> int:
    """The estimated bytes of ``arrays`` float64 arrays of ``(n_boot, columns)`` alive at once (``what``: what is
    computed, for the message); :class:`ResourceLimitError` above :func:`memory_limit`."""
    need = bootstrap_memory(n_boot, columns, arrays)
    limit = memory_limit()
    if need > limit:
        raise ResourceLimitError(
            f"{what} would need about {format_bytes(need)} of memory ({int(n_boot):,} resamples x {int(columns):,} "
            f"column(s) x 8 bytes x {int(arrays)} array(s)), more than the limit of {format_bytes(limit)}; lower "
            f"n_boot (--n-boot), or raise the limit with {MEMORY_ENV} (e.g. {MEMORY_ENV}=8GiB)",
            field="n_boot", estimate=float(need), limit=float(limit))
    return need
