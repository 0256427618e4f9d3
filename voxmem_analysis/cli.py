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


#: Set to 1 to see the Python traceback of an unexpected error (for bug reports).
DEBUG_ENV = "VOXMEM_DEBUG"


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand. No traceback reaches a user: every error is one message and an exit code.

    Exit codes: 0 ok, 1 bad input data or a release lacking what the command needs
    (:class:`~voxmem_analysis.errors.VoxMemDataError`), 2 bad arguments, limits or files/folders that
    cannot be used (:data:`~voxmem_analysis.errors.USAGE_ERRORS`, :class:`OSError`), 3 anything else:
    a bug, whatever its class (a bare ``ValueError``, ``KeyError``, ``TypeError`` ...; rerun with
    ``VOXMEM_DEBUG=1`` for the traceback), 130 Ctrl-C (128 + the signal's number for
    :class:`~voxmem_analysis.errors.Interrupted`: SIGTERM 143, SIGHUP 129).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `voxmem-analysis table ... | head`
        return 0
    except KeyboardInterrupt as exc:
        what, signum = getattr(exc, "what", "Ctrl-C"), getattr(exc, "signum", 2)
        print(f"interrupted ({what}): stopped; nothing half-written was kept", file=sys.stderr)
        return 128 + signum
    except Exception as exc:  # the last line of defence; commands handle what they expect
        return _report_unexpected(exc, args)


def cli_message(text: str) -> str:
    """A library hint in the words of the command line: ``pass budget= one of them`` -> ``pass --budget one
    of them``, ``pass baseline=/comparison= budgets ...`` -> ``pass --baseline/--comparison budgets ...``,
    ``pass model=`` -> ``pass --model``."""
    import re

    def options(m) -> str:
        names = [n[:-1] for n in m.group(1).split("/")]
        return "pass " + "/".join("--" + n.replace("_", "-") for n in names)

    return re.sub(r"\bpass ((?:\w+=/)*\w+=)(?=[\s,;.)]|$)", options, text)


def _report_unexpected(exc: BaseException, args) -> int:
    """The message and exit code of an exception no command handled (see :func:`main`): the one
    place errors become exit codes."""
    import os

    from voxmem_analysis.errors import USAGE_ERRORS, VoxMemDataError

    if os.environ.get(DEBUG_ENV) == "1":
        raise exc
    command = getattr(args, "command", None) or "voxmem-analysis"
    if isinstance(exc, VoxMemDataError):      # bad input data, or a release lacking a part the command needs
        print(cli_message(str(exc)), file=sys.stderr)
        return 1
    if isinstance(exc, USAGE_ERRORS):         # a bad argument, a limit, an output folder that cannot be used
        print(f"error: {command}: {cli_message(str(exc))}", file=sys.stderr)
        return 2
    if isinstance(exc, OSError):              # a file or folder that cannot be used (disk full, no permission)
        where = f" {exc.filename!r}" if getattr(exc, "filename", None) else ""
        print(f"error: {command}: cannot use{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"internal error in `{command}`: {type(exc).__name__}: {exc}\n"
          f"  this is a bug in voxmem-analysis; rerun with {DEBUG_ENV}=1 to see the traceback and report it",
          file=sys.stderr)
    return 3


if __name__ == "__main__":
    sys.exit(main())
