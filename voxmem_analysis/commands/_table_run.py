"""The computation of ``voxmem-analysis table NAME``: open the input, choose the defaults the release leaves no
choice about (:func:`release_defaults`), compute the artifact and print it (long, csv, md or tex)."""
from __future__ import annotations

import sys

from voxmem_analysis import artifacts
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.selection import budgets_run
from voxmem_analysis.commands._common import header_line, note, noted, open_args
from voxmem_analysis.output import SYNTHETIC_LABEL, table_to_latex, table_to_markdown
from voxmem_analysis.reproduce.published import printed_decimals

#: What a default chosen from the release says (a parameter the release has only one value of).
_ONLY = {"budget": "the only budget run", "model": "the only model", "baseline": "the shorter of the two budgets run",
         "comparison": "the longer of the two budgets run"}


def _part_values(release, needs: tuple, column: str) -> list[str] | None:
    """Budgets (paper order) or models of the second judge's (``judge2``) or the ablation runs' (``ablation``)
    predictions when the artifact reads them; None for the release's own."""
    part = next((p for p in ("judge2", "ablation") if p in needs), None)
    if part is None:
        return None
    frame = getattr(release, part, None)
    present = set() if frame is None or not frame.height else set(frame[column].cast(str).unique().to_list())
    return [b for b in tx.BUDGETS if b in present] if column == "budget" else sorted(present)


def release_defaults(release, spec, params: dict, needs: tuple = ()) -> dict[str, str]:
    """The parameters the release leaves no choice about, among those not given: ``budget`` = the only
    budget run, ``baseline`` / ``comparison`` = the shorter / longer of exactly two budgets, ``model``
    = the only model.  Returns ``{parameter: value}`` (also set in ``params``); a VoxMem release only."""
    if not hasattr(release, "model_order"):
        return {}
    names = {q.name for q in spec.parameters}
    free = names - set(params)
    chosen: dict[str, str] = {}
    if names & {"budget", "baseline", "comparison"}:
        budgets = _part_values(release, needs, "budget")
        budgets = budgets_run(release) if budgets is None else budgets
        if "budget" in free and len(budgets) == 1:
            chosen["budget"] = budgets[0]
        if {"baseline", "comparison"} <= names and len(budgets) == 2:
            chosen.update({k: b for k, b in zip(("baseline", "comparison"), budgets) if k in free})
    if "model" in free:
        models = _part_values(release, needs, "model")
        models = release.model_order() if models is None else models
        if len(models) == 1:
            chosen["model"] = models[0]
    params.update(chosen)
    return chosen


def print_artifact(spec, opts, params: dict) -> int:
    """Compute artifact ``spec`` (:class:`~voxmem_analysis.commands.table.ArtifactSpec`) on the input ``opts``
    name, with ``params``, and print it as ``opts.format``."""
    src = open_args(opts)
    release = src.data
    if src.kind == "amc_runs":   # judged runs laid out as a release, one judge per system
        release = noted(release.as_release(opts.judge))
    art = artifacts.get(spec.name)
    for k, v in release_defaults(release, spec, params, art.needs).items():
        note(f"--{k} {v} ({_ONLY[k]})")
    table = art(release, seed=opts.seed, n_boot=opts.n_boot, **params)   # errors: exit 1 or 2 (cli.main)
    if getattr(table, "attrs", {}).get("note"):   # what the table counts, when it is not what was evaluated
        note(str(table.attrs["note"]))
    note(header_line(opts, src.kind) or "options in force: the defaults")
    title = f"{art.title} [{SYNTHETIC_LABEL}]" if release.synthetic else art.title
    if params:
        title = artifacts.retitle(title, params)
        title += " (" + ", ".join(f"{k}={','.join(v) if isinstance(v, list) else v}" for k, v in params.items()) + ")"
    if opts.format == "long":
        artifacts.to_long(table, art.name).to_csv(sys.stdout, index=False, float_format="%.6g", lineterminator="\n")
    elif opts.format == "csv":
        table.to_csv(sys.stdout, float_format="%.6g", lineterminator="\n")
    elif opts.format == "md":
        sys.stdout.write(table_to_markdown(table, caption=title, decimals=printed_decimals(art.name)))
    else:
        sys.stdout.write(table_to_latex(table, caption=title, label=f"tab:{art.name}",
                                        decimals=printed_decimals(art.name)))
    return 0
