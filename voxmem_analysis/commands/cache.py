"""``voxmem-analysis cache [clear]``: where the parsed-release cache lives, and clearing it."""
from __future__ import annotations


def register(sub) -> None:
    p = sub.add_parser("cache", help="show or clear the parsed-release cache (see README, Performance)")
    p.add_argument("action", nargs="?", choices=("info", "clear"), default="info",
                   help="info: folder, entries and size (default); clear: delete every entry")
    p.add_argument("--clear", dest="action", action="store_const", const="clear", help="same as `cache clear`")
    p.set_defaults(func=run)


def run(args) -> int:
    from voxmem_analysis.io import cache

    folder = cache.cache_dir()
    if args.action == "clear":
        n, size = cache.clear(folder)
        print(f"removed {n} cache entr{'y' if n == 1 else 'ies'} ({size / 2**20:.1f} MiB) from {folder}")
        return 0
    found = cache.entries(folder)
    size = sum(p.stat().st_size for p in found)
    print(f"cache folder: {folder}  (set VOXMEM_CACHE_DIR to move it; --no-cache to bypass it)")
    print(f"entries: {len(found)}  size: {size / 2**20:.1f} MiB")
    return 0
