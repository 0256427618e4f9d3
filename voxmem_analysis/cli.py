"""``voxmem-analysis`` command line (also ``python -m voxmem_analysis``): the parsers come from
:mod:`voxmem_analysis.commands._parsers` (light); a command's module is imported only when it runs.
:func:`main` alone prints errors and picks the exit code."""
from __future__ import annotations

import importlib
import os
import re
import sys

from voxmem_analysis import __version__
from voxmem_analysis.commands._parsers import Parser, build
from voxmem_analysis.errors import USAGE_ERRORS, VoxMemDataError

__all__ = ["main", "build_parser", "cli_message"]

#: Set to 1 to see the Python traceback of an unexpected error (for bug reports).
DEBUG_ENV = "VOXMEM_DEBUG"


def build_parser() -> tuple[Parser, dict]:
    """The top-level parser and ``{command: its parser}``."""
    parser = Parser(prog="voxmem-analysis", description="Analysis and reproduction workbook for the VoxMem benchmark.")
    parser.add_argument("--version", action="version", version=f"voxmem-analysis {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser, build(sub)


def main(argv: list[str] | None = None) -> int:
    """Run one subcommand: every error is one message and an exit code, never a traceback.

    0 ok; 1 bad data (:class:`~voxmem_analysis.errors.VoxMemDataError`); 2 bad arguments, limits, files
    that cannot be used (:data:`~voxmem_analysis.errors.USAGE_ERRORS`, :class:`OSError`); 3 anything else,
    a bug (``VOXMEM_DEBUG=1`` shows the traceback); 128 + the signal's number when interrupted (Ctrl-C 130).
    """
    parser, parsers = build_parser()
    args, extra = parser.parse_known_args(argv)
    if not args.command:
        parser.print_help()
        return 2
    if extra:   # the subcommand's own usage, and the option it resembles
        parsers[args.command].unknown(extra)
    try:   # the command's module, imported when it runs (`--help` imports no pandas or polars)
        return int(importlib.import_module(f"voxmem_analysis.commands.{args.module}").run(args) or 0)
    except BrokenPipeError:  # e.g. `voxmem-analysis table ... | head`
        return 0
    except KeyboardInterrupt as exc:   # Ctrl-C, or errors.Interrupted (a signal: SIGTERM, SIGHUP)
        what, signum = getattr(exc, "what", "Ctrl-C"), getattr(exc, "signum", 2)
        print(f"interrupted ({what}): stopped; nothing half-written was kept", file=sys.stderr)
        return 128 + signum
    except Exception as exc:  # noqa: BLE001 - the one place errors become messages and exit codes
        return report_error(exc, args.command)


def cli_message(text: str) -> str:
    """A library hint in the words of the command line: ``pass budget= one of them`` -> ``pass --budget one
    of them``, ``pass baseline=/comparison= budgets ...`` -> ``pass --baseline/--comparison budgets ...``."""
    def options(m) -> str:
        names = [n[:-1] for n in m.group(1).split("/")]
        return "pass " + "/".join("--" + n.replace("_", "-") for n in names)

    return re.sub(r"\bpass ((?:\w+=/)*\w+=)(?=[\s,;.)]|$)", options, text)


def report_error(exc: BaseException, command: str | None) -> int:
    """Print the message of an error on standard error; its exit code (see :func:`main`)."""
    if os.environ.get(DEBUG_ENV) == "1":
        raise exc
    command = command or "voxmem-analysis"
    if isinstance(exc, VoxMemDataError):      # bad input data, or a release lacking a part the command needs
        print(cli_message(str(exc)), file=sys.stderr)
        return 1
    if isinstance(exc, USAGE_ERRORS):         # a bad argument, a limit, an output that cannot be used
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
