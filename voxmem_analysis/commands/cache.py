"""``voxmem-analysis cache [info|clear] [--limit SIZE]``: the parsed-release cache's folder, entries,
size and size limit; clearing it; setting the limit."""
from __future__ import annotations

import sys
import time

from voxmem_analysis.errors import InputError
from voxmem_analysis.io.engine import cache


def _size(text: str | None):
    """``--limit``: None (not given), ``"default"`` or a number of bytes."""
    if text is None or text.strip().lower() == "default":
        return None if text is None else "default"
    try:
        return cache.parse_size(text)
    except ValueError as exc:
        raise InputError(f"--limit: {exc}", "limit") from None


def run(args) -> int:
    args.limit = _size(args.limit)
    folder = cache.cache_dir()
    why = cache.refusal(folder)
    if why is not None:
        if args.action == "info" and args.limit is None:
            print(f"cache folder: {folder}\nnot used: it {why}; commands run without cache", file=sys.stderr)
            return 0
        raise InputError(f"cache folder {str(folder)!r} not used: it {why}; commands run without cache", "cache")
    if args.limit is not None:
        folder = cache.usable_dir(create=True)   # a folder it cannot use is said (a warning line)
        if folder is None:
            raise InputError(f"the cache folder {str(cache.cache_dir())!r} cannot be used: the limit was not set",
                             "limit")
        cache.set_limit(folder, None if args.limit == "default" else args.limit)
        removed = cache.evict(folder, cache.limit(folder)[0])
        if removed:
            print(f"removed {_entries(len(removed))} ({cache.format_size(sum(e.bytes for e in removed))}) "
                  "to fit the new limit")
    if args.action == "clear":
        n, size = cache.clear(folder)
        print(f"removed {_entries(n)} ({cache.format_size(size)}) from {folder}")
        return 0
    _show(folder)
    return 0


def _entries(n: int) -> str:
    return f"{n} cache entr{'y' if n == 1 else 'ies'}"


def _show(folder) -> None:
    lim, source = cache.limit(folder)
    found = cache.entries(folder)
    size = sum(e.bytes for e in found)
    print(f"cache folder: {folder}  (set VOXMEM_CACHE_DIR to move it; --no-cache to bypass it)")
    print(f"limit: {cache.format_size(lim)} ({source}; change with `voxmem-analysis cache --limit SIZE`)")
    print(f"entries: {len(found)}  size: {cache.format_size(size)}")
    for e in reversed(found):   # most recently used first
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(e.last_used))
        print(f"  {cache.format_size(e.bytes):>10}  last used {when}  {e.release or '(unreadable entry)'}")
    note = cache.skipped(folder)
    if note is not None:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(note["when"]))
        print(f"not kept ({when}): {note['release']} needs about {cache.format_size(note['bytes'])}, over the limit of "
              f"{cache.format_size(note['limit'])}; raise it with `voxmem-analysis cache --limit SIZE` to keep it")
