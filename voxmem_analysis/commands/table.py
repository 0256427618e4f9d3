"""``voxmem-analysis table NAME --data DIR [--budget B ...] --format long|csv|md|tex``: print one artifact.

Each artifact's analysis parameters (``budget``, ``comparison``, ``baseline``, ``models``,
``pairing`` ...) become command-line options, read from the artifact function's source
(:func:`voxmem_analysis.artifacts.source_parameters`), so ``table NAME --help`` lists them without
importing the analyses.  A budget or model the release has only one of is the default
(:func:`release_defaults`).
``table amc_table2 --manifest FILE --tasks FILE`` lays out judged Audio MultiChallenge runs as the
paper's Table 2 (one judge per system, ``--judge``).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from voxmem_analysis.commands._amc import add_tasks_arg
from voxmem_analysis.commands._shared import add_data_args, load, note, synthetic_banner
from voxmem_analysis.commands._guards import n_boot_arg

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
#: What a default chosen from the release says (a parameter the release has only one value of).
_ONLY = {"budget": "the only budget run", "model": "the only model"}


@dataclass(frozen=True)
class ArtifactSpec:
    """What ``table NAME`` needs to know before importing anything: the artifact's name, title and
    analysis parameters (:class:`voxmem_analysis.artifacts.SourceParameter`)."""

    name: str
    title: str
    parameters: tuple


def artifact_spec(name: str) -> ArtifactSpec:
    """The :class:`ArtifactSpec` of ``name``, read from the source of the analyses (no import); from the
    imported registry only when the source cannot be read so.  An unknown name: ``UnknownNameError``."""
    from voxmem_analysis import artifacts
    from voxmem_analysis.errors import UnknownNameError

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
    import inspect

    from voxmem_analysis.artifacts import SourceParameter

    sig = inspect.signature(art.func)
    out = []
    for n, q in list(sig.parameters.items())[1:]:
        if q.kind not in (q.KEYWORD_ONLY, q.POSITIONAL_OR_KEYWORD) or n in ("seed", "n_boot") or n.startswith("_"):
            continue
        default = None if q.default is inspect.Parameter.empty else q.default
        ann = q.annotation if isinstance(q.annotation, str) else ("" if q.annotation is inspect.Parameter.empty
                                                                   else getattr(q.annotation, "__name__", str(q.annotation)))
        out.append(SourceParameter(n, default, ann))
    return out


def _general_args(p) -> None:
    add_data_args(p, required=False)
    p.add_argument("--manifest", metavar="FILE", default=None,
                   help="with --tasks and amc_table2: judged Audio MultiChallenge results (path,system[,output_modality]"
                        "[,judge])")
    add_tasks_arg(p)
    p.add_argument("--judge", metavar="NAME", default=None,
                   help="with --manifest: the judge to use where a system was graded by several (default: the first listed)")
    p.add_argument("--format", choices=("long", "csv", "md", "tex"), default="long",
                   help="long: CSV artifact,row,column,value (default)")
    p.add_argument("--seed", type=int, default=0, help="seed of bootstrap intervals (default 0)")
    p.add_argument("--n-boot", type=n_boot_arg, default=10_000, help="bootstrap resamples (default 10000)")


def register(sub) -> None:
    p = sub.add_parser("table", add_help=False,
                       help="print one of the paper's tables/figure tables (see --list; NAME --help for its options)",
                       description=__doc__.split("\n\n")[0])
    p.add_argument("-h", "--help", action="store_true", help="show this help (NAME --help: the artifact's options)")
    p.add_argument("name", nargs="?", help="artifact name, e.g. table15, fig5, table18")
    _general_args(p)
    p.add_argument("--list", action="store_true", help="list the artifact names")
    p.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    p.set_defaults(func=run, _parser=p)


def _to_bool(text: str) -> bool:
    t = text.strip().lower()
    if t in ("true", "yes", "1"):
        return True
    if t in ("false", "no", "0"):
        return False
    raise argparse.ArgumentTypeError(f"expected true or false, got {text!r}")


def _to_list(text: str) -> list[str]:
    return [x.strip() for x in text.split(",") if x.strip()]


def _default_text(name: str, default) -> str:
    shown = ",".join(default) if isinstance(default, (list, tuple)) else default
    if name in ("budget", "model", "baseline", "comparison"):
        only = "the release's only budget" if name != "model" else "the release's only model"
        if name in ("baseline", "comparison"):
            only = f"the {'shorter' if name == 'baseline' else 'longer'} of two budgets run"
        return f"{only}, else {shown if shown is not None else 'chosen from the data'}"
    return str(shown) if shown is not None else "chosen from the data"


def artifact_parser(spec: ArtifactSpec) -> argparse.ArgumentParser:
    """The full parser of ``table NAME``: general options plus the artifact's own parameters."""
    p = argparse.ArgumentParser(prog=f"voxmem-analysis table {spec.name}", description=spec.title)
    _general_args(p)
    g = p.add_argument_group(f"parameters of {spec.name}")
    for q in spec.parameters:
        flag = "--" + q.name.replace("_", "-")
        text = _HELP.get(q.name, q.name.replace("_", " "))
        if q.name in _LIST_PARAMS:
            conv = _to_list
        elif isinstance(q.default, bool) or "bool" in q.annotation:
            conv = _to_bool
        else:
            conv = str
        g.add_argument(flag, dest=f"param_{q.name}", type=conv, default=None,
                       metavar=None if q.name in _CHOICES else q.name.upper(),
                       help=f"{text} (default: {_default_text(q.name, q.default)})",
                       **({"choices": _CHOICES[q.name]} if q.name in _CHOICES else {}))
    return p


def retitle(title: str, params: dict) -> str:
    """The registry title with the paper's budgets replaced by those passed (:func:`voxmem_analysis.artifacts.retitle`)."""
    from voxmem_analysis.artifacts import retitle as _retitle

    return _retitle(title, params)


def run(args) -> int:
    if args.help and not args.name:
        args._parser.print_help()
        return 0
    if args.list or not args.name:
        from voxmem_analysis import artifacts

        titles = artifacts.source_titles() or {n: artifacts.get(n).title for n in artifacts.names()}
        for n in sorted(titles):
            print(f"{n:10s} {titles[n]}")
        return 0
    spec = artifact_spec(args.name)     # an unknown name: UnknownNameError, exit 2 (cli.main)
    parser = artifact_parser(spec)
    if args.help or "-h" in args.rest or "--help" in args.rest:
        parser.print_help()
        return 0
    base = argparse.Namespace(**{k: v for k, v in vars(args).items() if k not in ("rest", "func", "_parser")})
    opts = parser.parse_args(args.rest, namespace=base)
    if bool(opts.data) == bool(opts.manifest) or bool(opts.manifest) != bool(opts.tasks):
        print(f"give --data DIR (voxmem-analysis table {spec.name} --data DIR), or for amc_table2 --manifest FILE "
              "--tasks FILE (judged Audio MultiChallenge runs)", file=sys.stderr)
        return 2
    if opts.manifest and spec.name != "amc_table2":
        print(f"table {spec.name}: --manifest/--tasks make amc_table2 (the paper's Table 2 layout of your runs); the other "
              "Audio MultiChallenge tables need a release's other parts (see data/README.md)", file=sys.stderr)
        return 2
    params = {k[len("param_"):]: v for k, v in vars(opts).items() if k.startswith("param_") and v is not None}
    return _print(spec, opts, params)


def _part_budgets(release, needs: tuple) -> list[str]:
    """Budgets of the predictions an artifact reads: the second judge's (``judge2``), the ablation
    runs' (``ablation``) or the release's budgets run (:func:`voxmem_analysis.analysis.selection.budgets_run`)."""
    from voxmem_analysis import taxonomy as tx

    for part in ("judge2", "ablation"):
        if part in needs:
            frame = getattr(release, part, None)
            present = set() if frame is None or not frame.height else set(frame["budget"].cast(str).unique().to_list())
            return [b for b in tx.BUDGETS if b in present]
    from voxmem_analysis.analysis.selection import budgets_run

    return budgets_run(release)


def _part_models(release, needs: tuple) -> list[str]:
    """Models of the predictions an artifact reads (the ablation runs', the second judge's, or the release's)."""
    for part in ("judge2", "ablation"):
        if part in needs:
            frame = getattr(release, part, None)
            return [] if frame is None or not frame.height else sorted(set(frame["model"].to_list()))
    return release.model_order()


def release_defaults(release, spec: ArtifactSpec, params: dict, needs: tuple = ()) -> dict[str, str]:
    """The parameters the release leaves no choice about, among those not given: ``budget`` = the only
    budget run, ``baseline`` / ``comparison`` = the shorter / longer of exactly two budgets, ``model``
    = the only model.  Returns ``{parameter: value}`` (also set in ``params``); a VoxMem release only."""
    if not hasattr(release, "model_order"):
        return {}
    names = {q.name for q in spec.parameters}
    chosen: dict[str, str] = {}
    budgets = _part_budgets(release, needs) if names & {"budget", "baseline", "comparison"} else []
    if "budget" in names and "budget" not in params and len(budgets) == 1:
        chosen["budget"] = budgets[0]
    if {"baseline", "comparison"} <= names and len(budgets) == 2:
        for k, b in (("baseline", budgets[0]), ("comparison", budgets[1])):
            if k not in params:
                chosen[k] = b
    models = _part_models(release, needs) if "model" in names else []
    if "model" in names and "model" not in params and len(models) == 1:
        chosen["model"] = models[0]
    params.update(chosen)
    return chosen


def _printed(name: str) -> dict[str, int]:
    """The decimals the paper prints in each column of artifact ``name`` ({} when it prints none)."""
    from voxmem_analysis.reproduce.published import printed_decimals

    return printed_decimals(name)


def _print(spec: ArtifactSpec, opts, params: dict) -> int:
    from voxmem_analysis import artifacts
    from voxmem_analysis.commands._shared import note
    from voxmem_analysis.output import SYNTHETIC_LABEL, table_to_latex, table_to_markdown

    release = _release(opts)
    synthetic_banner(release)
    art = artifacts.get(spec.name)
    for k, v in release_defaults(release, spec, params, art.needs).items():
        what = _ONLY.get(k, f"the {'shorter' if k == 'baseline' else 'longer'} of the two budgets run")
        note(f"--{k.replace('_', '-')} {v} ({what})")
    table = art(release, seed=opts.seed, n_boot=opts.n_boot, **params)   # errors: exit 1 or 2 (cli.main)
    if getattr(table, "attrs", {}).get("note"):   # what the table counts, when it is not what was evaluated
        note(str(table.attrs["note"]))
    title = f"{art.title} [{SYNTHETIC_LABEL}]" if release.synthetic else art.title
    if params:
        title = retitle(title, params)
        title += " (" + ", ".join(f"{k}={','.join(v) if isinstance(v, list) else v}" for k, v in params.items()) + ")"
    if opts.format == "long":
        artifacts.to_long(table, art.name).to_csv(sys.stdout, index=False, float_format="%.6g", lineterminator="\n")
    elif opts.format == "csv":
        table.to_csv(sys.stdout, float_format="%.6g", lineterminator="\n")
    elif opts.format == "md":
        sys.stdout.write(table_to_markdown(table, caption=title, decimals=_printed(art.name)))
    else:
        sys.stdout.write(table_to_latex(table, caption=title, label=f"tab:{art.name}", decimals=_printed(art.name)))
    return 0


def _release(opts):
    """What ``--data`` (a release of either benchmark) or ``--manifest``/``--tasks`` (judged Audio
    MultiChallenge runs, as a release with one judge per system) hold; findings on stderr."""
    from voxmem_analysis.commands._amc import load_release as amc_load_release, load_runs as amc_load_runs
    from voxmem_analysis.io import is_amc_release

    if opts.manifest:
        release, notes = amc_load_runs(opts).as_release(opts.judge)
        for n in notes:
            note(n)
        return release
    # an Audio MultiChallenge release (release.json "benchmark": "audio-multichallenge") has its own loader
    return amc_load_release(opts) if is_amc_release(opts.data) else load(opts)
