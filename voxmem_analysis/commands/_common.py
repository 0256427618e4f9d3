"""What the commands that read data share: opening the input named (:func:`open_args`), saying what loading
found (:func:`report`), and printing or writing a table with the options in force (:func:`show`)."""
from __future__ import annotations

import io
import shlex
import sys

import polars as pl

from voxmem_analysis import console
from voxmem_analysis.console import report_problems
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.amc_runs import task_frame
from voxmem_analysis.analysis.clusters import attach_cluster, with_abstention_families
from voxmem_analysis.commands._guards import check_outputs
from voxmem_analysis.commands._parsers import KIND_LETTERS, not_applying, options_of
from voxmem_analysis.errors import InputError, VoxMemDataError
from voxmem_analysis.io.longmemeval import select_judge
from voxmem_analysis.io.source import KIND_NAMES, KINDS, Source, open_source, source_kind
from voxmem_analysis.writing import atomic_text

__all__ = ["note", "noted", "open_args", "report", "show", "header_line", "amc_tasks", "one_judge", "with_cluster",
           "release_budgets", "only_choice", "report_release"]

#: Options never echoed in a table's header line (where the data come from and where the table goes).
_NOT_ECHOED = {"--data", "--manifest", "--questions", "--tasks", "--out", "--plot", "--format", "--all-columns",
               "--lenient", "--no-cache", "--type-key", "--rejection-pattern"}
#: Options echoed even at their default (what a reader needs to know of every table).
_ALWAYS_ECHOED = {"--convention", "--interval", "--n-boot", "--seed"}


def note(msg: str) -> None:
    print(f"# {msg}", file=sys.stderr)


def noted(result):
    """The value of a ``(value, notes)`` pair, its notes printed (:func:`note`)."""
    value, notes = result
    for n in notes:
        note(n)
    return value


def open_args(args, *, kinds=KINDS, strict: bool | None = None, quiet: bool = False, selects: bool = False,
              out_folder: bool = False) -> Source:
    """The input ``args`` name, opened for ``args.command`` (read strictly unless ``--lenient``, or ``strict``).

    A kind outside ``kinds``, or an option that does not apply to the kind, is an :class:`InputError`; every
    output (``--out``, ``--plot``; a folder with ``out_folder``) is checked before loading, and against every
    file read after it.  What loading found is printed (:func:`report`) unless ``quiet``, or, with ``selects``,
    the input is a VoxMem release (the command reports it after selecting its verdicts)."""
    named = {k: getattr(args, k, None) for k in ("data", "manifest", "questions", "tasks")}
    kind = source_kind(**named)
    if kind not in kinds:
        raise InputError(f"{args.command} reads {' or '.join(KIND_NAMES[k] for k in kinds)}, not "
                         f"{KIND_NAMES[kind]}", "data" if named["data"] else "manifest")
    not_applying(args.command, args, kind)
    outputs = {f"--{k}": getattr(args, k, None) for k in ("out", "plot")}
    files, folders = ({}, outputs) if out_folder else (outputs, {})
    check_outputs(files, folders, inputs=[p for p in named.values() if p])
    strict = not getattr(args, "lenient", False) if strict is None else strict
    src = open_source(**named, strict=strict, convention=getattr(args, "convention", None) or "paper",
                      rejection_pattern=getattr(args, "rejection_pattern", None),
                      type_key=getattr(args, "type_key", None), cache=not getattr(args, "no_cache", False),
                      progress=console.progress("reading"))
    if any(files.values()) or any(folders.values()):   # the files read are walked only when something is written
        check_outputs(files, folders, inputs=src.inputs)
    if not (quiet or (selects and kind == "voxmem")):
        report(src, args)
    return src


def report_release(path):
    """Print the findings of the release at ``path`` for ``reproduce`` (which reads it leniently), as
    :func:`report` does; the release read, or None for an Audio MultiChallenge release or none at all."""
    try:
        if source_kind(data=path) != "voxmem":
            return None
        src = open_source(data=path, strict=False)
    except (VoxMemDataError, InputError) as exc:   # no release at all: reproduce says so itself
        report_problems(getattr(exc, "problems", []), source=f"release {str(path)!r}", lenient=True)
        return None
    report_problems(src.problems, source=f"release {str(path)!r}", lenient=True,
                    left_out=src.data.stats.get("rejected_lines", 0),
                    hint=f"`voxmem-analysis validate --data {path}` lists them all")
    return src.data


def _about_selection(problems, frame) -> list:
    """The findings of a VoxMem release that concern the verdicts of ``frame`` (a selection): a warning naming
    a model that is not selected, or mixed prompt delivery when the selected models all share one, is left out."""
    models = set(frame["model"].unique().to_list())
    one_delivery = frame["system_prompt_delivery"].drop_nulls().n_unique() <= 1

    def elsewhere(p) -> bool:
        named = p.message.split("'")[1] if p.message.startswith("model '") else None
        return p.severity == "warning" and ((p.code == "mixed_prompt_delivery" and one_delivery)
                                            or (named is not None and named not in models))
    return [p for p in problems if not elsewhere(p)]


def report(src: Source, args, selected=None) -> None:
    """Print what loading ``src`` found (:func:`report_problems`), then its label when synthetic; with
    ``selected`` (the verdicts a VoxMem command uses), only the warnings that concern them."""
    lenient = bool(getattr(args, "lenient", False))
    stats = getattr(src.data, "stats", {})
    if src.kind in ("voxmem", "amc_release"):
        problems = (src.problems if selected is None or src.kind != "voxmem"
                    else _about_selection(src.problems, selected))
        left = (stats.get("rejected_lines", 0) if src.kind == "voxmem"
                else sum(v for k, v in stats.items() if k.startswith(("rejected_", "incomplete_"))))
        report_problems(problems, source=f"release {args.data!r}", lenient=lenient, left_out=left,
                        hint=f"`voxmem-analysis validate --data {args.data}` lists them all")
    else:
        where = f"manifest {args.manifest!r}" + (f" with tasks {args.tasks!r}" if src.kind == "amc_runs" else "")
        report_problems(src.problems, source=where, lenient=lenient, left_out=stats.get("rejected_lines"), limit=None)
    if src.synthetic:
        note(src.label())


def release_budgets(release, models=None) -> list[str]:
    """Budgets (8K ... 64K order) at which any of ``models`` (default: all) has a prediction."""
    fr = release.frame if not models else release.frame.filter(pl.col("model").is_in(list(models)))
    present = set(fr["budget"].cast(pl.Utf8).unique().to_list())
    return [b for b in tx.BUDGETS if b in present]


def only_choice(given: str | None, choices, option: str, what: str) -> str:
    """``given``, else the only one of ``choices`` (noted); with none or several, an :class:`InputError` naming
    ``option`` and listing them: ``"the release has 2 budgets (8K, 32K): pass --budget one of them"``."""
    choices = list(choices)
    if given:
        return given
    if len(choices) == 1:
        note(f"{option} {choices[0]} (the only {what})")
        return choices[0]
    if not choices:
        raise InputError(f"the release has no {what}: nothing to choose for {option}", option.lstrip("-"))
    raise InputError(f"the release has {len(choices)} {what}s ({', '.join(map(str, choices))}): pass {option} "
                     f"one of them", option.lstrip("-"))


def with_cluster(frame, cluster: str, release=None):
    """``(frame, cluster column or None)`` for ``--cluster``: item, family (a refusal question with its source
    question: of the VoxMem ``release``, else LongMemEval's ``X_abs`` with ``X``) or a column of the frame."""
    if cluster == "family":
        return (with_abstention_families(frame) if release is None
                else attach_cluster(frame.to_pandas(), release, "family")), "family"
    return frame, None if cluster == "item" else cluster


def one_judge(data, args, cluster: str = "item"):
    """LongMemEval verdicts with one judge per system and budget (the choices noted), and the ``--cluster``
    column (:func:`with_cluster`)."""
    return with_cluster(noted(select_judge(data.frame, getattr(args, "judge", None), data.dropped)), cluster)


def amc_tasks(src: Source, args) -> pl.DataFrame:
    """The task x system frame of an Audio MultiChallenge input (one judge per system; the choice noted)."""
    return noted(task_frame(src.data, getattr(args, "judge", None), getattr(args, "pred_error", None) or "as-judged"))


def header_line(args, kind: str | None = None) -> str | None:
    """The selection and the options in force, as the command line would give them:
    ``options in force: --where "..." --convention paper --n-boot 10000 --seed 0``."""
    letter = next((k for k, v in KIND_LETTERS.items() if v == kind), None)
    parts = []
    for o in options_of(args.command):
        if not o.flag.startswith("--") or o.flag in _NOT_ECHOED or (letter and letter not in o.kinds):
            continue
        value = o.value(args)
        if value is None or value is False or (value == o.kw.get("default") and o.flag not in _ALWAYS_ECHOED):
            continue
        parts.append(o.flag if value is True else f"{o.flag} {shlex.quote(str(value))}")
    return ("options in force: " + " ".join(parts)) if parts else None


def show(table, args, title: str, src: Source | None = None, *, keys=None, rename=None) -> None:
    """Print ``table`` (``--format``; a readable table on a terminal: ``keys`` columns, ``rename``d) or write it
    to ``args.out`` (csv or md, whole or not at all), titled (with the label of a synthetic ``src``) and with
    the options in force (:func:`header_line`)."""
    header = header_line(args, src.kind if src else None)
    title += f" [{src.label()}]" if src is not None and src.synthetic else ""
    if not getattr(args, "out", None):
        console.emit(table, getattr(args, "format", None), title, header=header, keys=keys, rename=rename,
                     all_columns=bool(getattr(args, "all_columns", False)))
        return
    buf = io.StringIO()
    console.emit(table, getattr(args, "format", None) or "csv", title, header=header, stream=buf)
    atomic_text(args.out, buf.getvalue())   # whole or not at all: an earlier file stays as it was
    note(f"wrote {args.out}")
