"""``voxmem-analysis cache [info|clear] [--limit SIZE]``: the parsed-release cache's folder, entries,
size and size limit; clearing it; setting the limit."""
from __future__ import annotations

import argparse
import sys
import time

_EPILOG = """\
The cache keeps each release a command parsed (frames as Arrow IPC, the rest as JSON; never
pickle) and reuses it while no file of the release changed.  Folder: $VOXMEM_CACHE_DIR, else
$XDG_CACHE_HOME/voxmem-analysis, else ~/.cache/voxmem-analysis, created private (mode 0700); a
folder owned by another user or writable by group or others is not used.  Size limit: 2 GiB
unless set with --limit (stored in settings.json in the folder); after each write the least
recently used entries are removed until the cache fits, and a release larger than the limit is
not kept (this command says which).  --no-cache on any command bypasses the cache."""


def register(sub) -> None:
    p = sub.add_parser("cache", help="show or clear the parsed-release cache, or set its size limit",
                       epilog=_EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", nargs="?", choices=("info", "clear"), default="info",
                   help="info: folder, entries, size and limit (default); clear: delete every entry")
    p.add_argument("--clear", dest="action", action="store_const", const="clear", help="same as `cache clear`")
    p.add_argument("--limit", metavar="SIZE", type=_size_arg,
                   help="keep the cache at most SIZE, e.g. 5GiB, 500MB, 2G (binary units), 0 (keep nothing) "
                        "or `default` (2 GiB); stored in the cache folder's settings.json")
    p.set_defaults(func=run)


def _size_arg(text: str):
    from voxmem_analysis.io.engine.cache import parse_size

    if text.strip().lower() == "default":
        return "default"
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args) -> int:
    from voxmem_analysis.io.engine import cache

    folder = cache.cache_dir()
    why = cache.refusal(folder)
    if why is not None:
        print(f"cache folder: {folder}\nnot used: it {why}; commands run without cache", file=sys.stderr)
        return 0 if args.action == "info" and args.limit is None else 2
    if args.limit is not None:
        folder = cache.usable_dir(create=True)
        if folder is None:
            return 2
        cache.set_limit(folder, None if args.limit == "default" else args.limit)
        removed = cache.evict(folder, cache.limit(folder)[0])
        if removed:
            print(f"removed {_entries(len(removed))} ({cache.format_size(sum(e.bytes for e in removed))}) "
                  "to fit the new limit")
    if args.action == "clear":
        n, size = cache.clear(folder)
        print(f"removed {_entries(n)} ({cache.format_size(size)}) from {folder}")
        return 0
    _show(cache, folder)
    return 0


def _entries(n: int) -> str:
    return f"{n} cache entr{'y' if n == 1 else 'ies'}"


def _show(cache, folder) -> None:
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
