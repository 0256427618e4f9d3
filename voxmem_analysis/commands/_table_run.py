"""The computation of ``voxmem-analysis table NAME``: open the input, choose the defaults the release leaves no
choice about (:func:`release_defaults`), compute the artifact and print it (long, csv, md or tex)."""
from __future__ import annotations

import sys

from voxmem_analysis import artifacts
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.selection import budgets_run
from voxmem_analysis.commands._common import header_line, note, open_args
from voxmem_analysis.output import SYNTHETIC_LABEL, table_to_latex, table_to_markdown
from voxmem_analysis.reproduce.published import printed_decimals

#: What a default chosen from the release says (a parameter the release has only one value of).
_ONLY = {"budget": "the only budget run", "model": "the only model"}


def _part_budgets(release, needs: tuple) -> list[str]:
    """Budgets of the predictions an artifact reads: the second judge's (``judge2``), the ablation
    runs' (``ablation``) or the release's budgets run (:func:`voxmem_analysis.analysis.selection.budgets_run`)."""
    for part in ("judge2", "ablation"):
        if part in needs:
            frame = getattr(release, part, None)
            present = set() if frame is None or not frame.height else set(frame["budget"].cast(str).unique().to_list())
            return [b for b in tx.BUDGETS if b in present]
    return budgets_run(release)


def _part_models(release, needs: tuple) -> list[str]:
    """Models of the predictions an artifact reads (the ablation runs', the second judge's, or the release's)."""
    for part in ("judge2", "ablation"):
        if part in needs:
            frame = getattr(release, part, None)
            return [] if frame is None or not frame.height else sorted(set(frame["model"].to_list()))
    return release.model_order()


def release_defaults(release, spec, params: dict, needs: tuple = ()) -> dict[str, str]:
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


def print_artifact(spec, opts, params: dict) -> int:
    """Compute artifact ``spec`` (:class:`~voxmem_analysis.commands.table.ArtifactSpec`) on the input ``opts``
    name, with ``params``, and print it as ``opts.format``."""
    src = open_args(opts, "table")
    release = src.data
    if src.kind == "amc_runs":   # judged runs laid out as a release, one judge per system
        release, notes = release.as_release(opts.judge)
        for n in notes:
            note(n)
    art = artifacts.get(spec.name)
    for k, v in release_defaults(release, spec, params, art.needs).items():
        what = _ONLY.get(k, f"the {'shorter' if k == 'baseline' else 'longer'} of the two budgets run")
        note(f"--{k.replace('_', '-')} {v} ({what})")
    table = art(release, seed=opts.seed, n_boot=opts.n_boot, **params)   # errors: exit 1 or 2 (cli.main)
    if getattr(table, "attrs", {}).get("note"):   # what the table counts, when it is not what was evaluated
        note(str(table.attrs["note"]))
    note(header_line(opts, "table", src.kind) or "options in force: the defaults")
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
