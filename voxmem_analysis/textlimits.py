"""Limits of the standard library's parsers, set deliberately: :func:`csv_field_limit`, the scope in which every
``csv`` reader reads fields of any length (the process's limit set back on leaving), and :func:`read_regular`,
which reads regular files only (a FIFO is an :class:`OSError`, never a wait)."""
from __future__ import annotations

import contextlib
import csv
import errno
import os
import stat
import threading

__all__ = ["CSV_FIELD_LIMIT", "csv_field_limit", "read_regular", "special_kind"]

#: Largest CSV field accepted (characters): 1 GiB.
CSV_FIELD_LIMIT = 1 << 30

_LOCK, _OPEN = threading.Lock(), []   # _OPEN: the limit found by the outermost open scope, once per open scope


@contextlib.contextmanager
def csv_field_limit():
    """While open, the csv module's field limit is :data:`CSV_FIELD_LIMIT`; the last scope to leave (nested or
    in other threads) sets back the limit found."""
    with _LOCK:
        _OPEN.append(csv.field_size_limit(CSV_FIELD_LIMIT) if not _OPEN else _OPEN[0])
    try:
        yield
    finally:
        with _LOCK:
            old = _OPEN.pop()
            if not _OPEN:
                csv.field_size_limit(old)


def special_kind(mode: int) -> str:
    """What a non-regular file is, in words (``a FIFO, a named pipe``)."""
    if stat.S_ISFIFO(mode):
        return "a FIFO, a named pipe"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a file"


def read_regular(path) -> bytes:
    """The bytes of ``path`` if it is a regular file (links followed), else :class:`OSError` ("not a regular file
    (a FIFO, a named pipe)"), without blocking: opened non-blocking and checked before reading."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, f"not a regular file ({special_kind(mode)})", str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as fh:
            return fh.read()
    finally:
        os.close(fd)
