"""``voxmem-analysis table NAME``: print one artifact of the paper.  Its analysis parameters become options, read
from the artifact function's source, so ``table --list`` and ``table NAME --help`` import no analysis."""
from __future__ import annotations

import argparse
import inspect
from typing import NamedTuple

from voxmem_analysis import artifacts
from voxmem_analysis.artifacts import SourceParameter
from voxmem_analysis.commands._parsers import TABLE_GENERAL, Parser, add_option, comma_list
from voxmem_analysis.errors import InputError, UnknownNameError

#: Parameters whose value is a comma-separated list on the command line.
_LIST_PARAMS = ("models", "budgets")
#: Parameters with a fixed set of values (checked by argparse, listed in the help).
_CHOICES = {"interval": ("percentile", "bca")}
_HELP = {
    "budget": "context length the artifact is computed at (8K, 16K, 32K, 64K)",
    "comparison": "longer budget of a scaling comparison (8K..64K)",
    "baseline": "shorter budget of a scaling comparison (8K..64K)",
    "budgets": "comma-separated budgets to include",
    "models": "comma-separated model names to include (as in the predictions' `model` field)",
    "model": "one model name",
    "pairing": "which predictions enter: all_budgets (each budget's own scored items) or a pairing rule",
    "source_operations": "true/false: Table 17's by-source-operation columns",
    "production_family": "model family of the production judge",
    "cluster": "bootstrap resampling unit: item (questions, the paper's) or family (a refusal question "
               "with its source question); the output then states the design effect",
    "interval": "bootstrap interval: percentile (the paper's) or bca (bias-corrected and accelerated)",
    "mc_se": "true/false: add the Monte-Carlo standard error of every interval endpoint",
}


class ArtifactSpec(NamedTuple):
    """What ``table NAME`` knows before importing anything: the artifact's name, title and analysis parameters."""

    name: str
    title: str
    parameters: tuple


def artifact_spec(name: str) -> ArtifactSpec:
    """The :class:`ArtifactSpec` of ``name``, read from the source of the analyses (no import); from the
    imported registry only when the source cannot be read so.  An unknown name: ``UnknownNameError``."""
    titles, params = artifacts.source_titles(), artifacts.source_parameters()
    if titles is None or params is None:
        art = artifacts.get(name)
        return ArtifactSpec(art.name, art.title, tuple(inspected_parameters(art)))
    if name not in titles:
        raise UnknownNameError(f"unknown artifact {name!r}; known: {', '.join(sorted(titles))}", "name")
    return ArtifactSpec(name, titles[name], tuple(params[name]))


def inspected_parameters(art) -> list:
    """The analysis parameters of an imported artifact function, as :class:`SourceParameter` (the
    reference :func:`voxmem_analysis.artifacts.source_parameters` is tested against)."""
    sig = inspect.signature(art.func)
    out = []
    for n, q in list(sig.parameters.items())[1:]:
        if q.kind not in (q.KEYWORD_ONLY, q.POSITIONAL_OR_KEYWORD) or n in ("seed", "n_boot") or n.startswith("_"):
            continue
        default = None if q.default is inspect.Parameter.empty else q.default
        ann = q.annotation if isinstance(q.annotation, str) else (
            "" if q.annotation is inspect.Parameter.empty else getattr(q.annotation, "__name__", str(q.annotation)))
        out.append(SourceParameter(n, default, ann))
    return out


def _to_bool(text: str) -> bool:
    t = text.strip().lower()
    if t not in ("true", "yes", "1", "false", "no", "0"):
        raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")
    return t in ("true", "yes", "1")


def _default_text(name: str, default) -> str:
    shown = ",".join(default) if isinstance(default, (list, tuple)) else default
    shown = "chosen from the data" if shown is None else shown
    only = {"budget": "the release's only budget", "model": "the release's only model",
            "baseline": "the shorter of two budgets run", "comparison": "the longer of two budgets run"}.get(name)
    return f"{only}, else {shown}" if only else str(shown)


def artifact_parser(spec: ArtifactSpec) -> argparse.ArgumentParser:
    """The full parser of ``table NAME``: general options plus the artifact's own parameters."""
    p = Parser(prog=f"voxmem-analysis table {spec.name}", description=spec.title)
    for o in TABLE_GENERAL:
        add_option(p, o)
    g = p.add_argument_group(f"parameters of {spec.name}")
    for q in spec.parameters:
        flag = "--" + q.name.replace("_", "-")
        text = _HELP.get(q.name, q.name.replace("_", " "))
        conv = (comma_list if q.name in _LIST_PARAMS else
                _to_bool if isinstance(q.default, bool) or "bool" in q.annotation else str)
        g.add_argument(flag, dest=f"param_{q.name}", type=conv, default=None,
                       metavar=None if q.name in _CHOICES else q.name.upper(),
                       help=f"{text} (default: {_default_text(q.name, q.default)})",
                       **({"choices": _CHOICES[q.name]} if q.name in _CHOICES else {}))
    return p


def run(args) -> int:
    if args.help and not args.name:
        args.parser.print_help()
        return 0
    if args.list or not args.name:
        titles = artifacts.source_titles() or {n: artifacts.get(n).title for n in artifacts.names()}
        for n in sorted(titles):
            print(f"{n:10s} {titles[n]}")
        return 0
    spec = artifact_spec(args.name)
    parser = artifact_parser(spec)
    if args.help or "-h" in args.rest or "--help" in args.rest:
        parser.print_help()
        return 0
    opts, extra = parser.parse_known_args(args.rest, namespace=argparse.Namespace(
        **{k: v for k, v in vars(args).items() if k not in ("rest", "module", "parser")}))
    if extra:
        parser.unknown(extra)
    if bool(opts.data) == bool(opts.manifest) or bool(opts.manifest) != bool(opts.tasks):
        raise InputError(f"give --data DIR (voxmem-analysis table {spec.name} --data DIR), or for amc_table2 "
                         "--manifest FILE --tasks FILE (judged Audio MultiChallenge runs)", "data")
    if opts.manifest and spec.name != "amc_table2":
        raise InputError(f"--manifest/--tasks make amc_table2 (the paper's Table 2 layout of your runs); the other "
                         "Audio MultiChallenge tables need a release's other parts (see data/README.md)", "manifest")
    params = {k[len("param_"):]: v for k, v in vars(opts).items() if k.startswith("param_") and v is not None}
    # start-up: the computation imports polars and pandas; `table --list` and `NAME --help` do not
    from voxmem_analysis.commands._table_run import print_artifact

    return print_artifact(spec, opts, params)

