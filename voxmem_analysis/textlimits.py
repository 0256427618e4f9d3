"""Limits of the standard library's text parsers, set deliberately.

:func:`csv_field_limit` is a scope in which :func:`csv.field_size_limit` (131,072 characters by
default, "field larger than field limit") is :data:`CSV_FIELD_LIMIT`: every reader that parses CSV
with the ``csv`` module reads inside it, so a long response or rubric text is read, not a crash,
and the process's own limit is set back on leaving (a library call leaves no global change).
:func:`read_regular` reads a file only if it is a regular file: a FIFO, device or socket named
like a data file raises :class:`OSError` "not a regular file (a FIFO)" instead of blocking forever.
"""
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
    """While open, the csv module's field limit is :data:`CSV_FIELD_LIMIT`; on leaving (also after
    an error) the limit found on entering is set back.  Nested and concurrent scopes (threads)
    share one raise: the last to leave restores it."""
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
    """The bytes of ``path`` if it is a regular file (links followed); else :class:`OSError`
    (``not a regular file (a FIFO, a named pipe)``) without blocking: opened non-blocking and
    checked before anything is read."""
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
