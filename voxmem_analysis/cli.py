"""``voxmem-analysis`` command line (also ``python -m voxmem_analysis``).

Subcommands live in ``voxmem_analysis/commands/*.py``; each module defines
``register(subparsers)`` and is discovered automatically.
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from voxmem_analysis import __version__

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="voxmem-analysis",
        description="Analysis and reproduction workbook for the VoxMem benchmark.",
    )
    parser.add_argument("--version", action="version", version=f"voxmem-analysis {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    from voxmem_analysis import commands

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"{commands.__name__}.{info.name}")
        if hasattr(mod, "register"):
            mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `voxmem-analysis table ... | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())
