"""Audio MultiChallenge runs: judged results files listed in a manifest, read against the task table,
every loss named (a task a run lacks, a repeated task, each run's ``pred_error`` tasks)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from typing import TYPE_CHECKING

import polars as pl

from voxmem_analysis.errors import Problem, VoxMemDataError
from voxmem_analysis.io.amc.release import AmcRelease
from voxmem_analysis.io.amc.results import read_results
from voxmem_analysis.io.amc.tasks import read_task_table
from voxmem_analysis.io.engine.files import resolved
from voxmem_analysis.io.engine.manifest import manifest_rows
from voxmem_analysis.io.engine.rules import collapse, fact, ordered
from voxmem_analysis.io.provenance import ManifestData

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MANIFEST_COLUMNS", "AmcRuns", "load_amc_runs", "SHOWN_PER_FILE"]

MANIFEST_COLUMNS: tuple[str, ...] = ("path", "system", "output_modality", "judge")
RUN = ["system", "output_modality", "judge"]
#: Errors of one code listed per file before the rest are summed up in one line.
SHOWN_PER_FILE = 50
#: Warnings said once per file, with their count and first line.
_SUMMED = ("criteria_as_text", "pass_as_text", "rubric_order", "duplicate_identical", "unknown_axis")
BAD_MODALITY = fact("manifest_bad_value", "error", lambda r: f"output_modality {r['v']!r} is not Text or Audio",
                    "output_modality")
MISSING_TASKS = fact("missing_tasks", "error", lambda r: f"{r['label']} has no result for {r['n']} of the {r['of']} tasks "
                     "of the task table, e.g. " + ", ".join(r["lacking"][:5]), "id")
PRED_ERROR = fact("pred_error", "warning", lambda r: f"{r['label']}: {r['n']} task(s) have a pred_error (no response), "
                  f"on which the judge marked {r['met']} of {r['items']} rubric items met, e.g. {r['task']!r}", "pred_error")


@dataclass
class AmcRuns(ManifestData):
    """Judged runs read through a manifest: ``results`` (one row per run x task, then the task table's
    columns), ``rubric_results`` (one per run x task x rubric item), the task table and its ``items``."""

    VERDICTS, UNNAMED = "results", "amc-runs"

    tasks: pl.DataFrame
    items: pl.DataFrame
    results: pl.DataFrame
    rubric_results: pl.DataFrame
    tasks_path: Path | None = None
    benchmark: str = "amc-runs"

    def runs(self) -> list[tuple[str, str, str]]:
        """``(system, output_modality, judge)`` of each run read, in manifest order."""
        return [tuple(r) for r in self.results.select(RUN).unique(maintain_order=True).iter_rows()]

    def systems(self) -> list[tuple[str, str]]:
        """``(system, output_modality)`` pairs, in manifest order."""
        return list(dict.fromkeys((s, m) for s, m, _ in self.runs()))

    def one_judge(self, judge: str | None = None) -> tuple["AmcRuns", list[str]]:
        """These runs with one judge per system x output modality (``judge`` where it graded it, else the
        first listed), and a note for every choice made (never silent)."""
        notes, keep = [], []
        by_system: dict[tuple, list[str]] = {}
        for s, m, j in self.runs():
            by_system.setdefault((s, m), []).append(j)
        for (s, m), judges in by_system.items():
            chosen = judge if judge in judges else judges[0]
            label = f"{s}" + (f" ({m})" if m else "")
            if len(judges) > 1:
                notes.append(f"{label} was graded by {len(judges)} judges ({', '.join(map(repr, judges))}); using {chosen!r}")
            elif judge is not None and chosen != judge:
                notes.append(f"{label} has no results from judge {judge!r}; using {chosen!r}")
            keep.append((s, m, chosen))
        sel = pl.DataFrame(keep, schema={c: pl.Utf8 for c in RUN}, orient="row")
        pick = dict(results=self.results.join(sel, on=RUN, how="semi", maintain_order="left"),
                    rubric_results=self.rubric_results.join(sel, on=RUN, how="semi", maintain_order="left"))
        return AmcRuns(**{**self.__dict__, **pick}), notes

    def as_release(self, judge: str | None = None):
        """``(AmcRelease of these runs, notes)``: one judge per system (:meth:`one_judge`), ``model`` being the
        manifest's system, so every AMC analysis reads them as a release."""
        runs, notes = self.one_judge(judge)
        tasks = self.tasks.to_pandas()
        rubrics = self.items.select("rubric_id", "task_id", "rubric_text").to_pandas()
        verdicts = runs.rubric_results.select(pl.col("system").alias("model"), "output_modality", "task_id", "rubric_id",
                                              pl.col("criteria_met").alias("passed")).to_pandas()
        meta = {"name": self.name, "synthetic": self.synthetic,
                "description": f"Audio MultiChallenge runs of manifest {self.manifest_path}"}
        release = AmcRelease(self.manifest_path or Path("."), tasks, rubrics, verdicts, meta, list(self.problems),
                             dict(self.stats), benchmark="amc-runs")
        release.__dict__["_inputs"] = self.inputs
        return release, notes


def _modalities(man: pd.DataFrame, rel: str) -> tuple[pd.DataFrame, list[Problem]]:
    """``output_modality`` as ``Text``/``Audio`` (any case) or empty; any other value is an error of its row."""
    import pandas as pd

    problems, keep = [], []
    for i, r in man.iterrows():
        v = r.get("output_modality")
        text = "" if v is None or pd.isna(v) else str(v).strip().capitalize()
        if text not in ("", "Text", "Audio"):
            problems.append(BAD_MODALITY.problem(rel, int(r["manifest_line"]), v=v))
            continue
        man.at[i, "output_modality"] = text
        man.at[i, "judge"] = "" if r.get("judge") is None or pd.isna(r.get("judge")) else str(r["judge"])
        keep.append(i)
    return man.loc[keep].reset_index(drop=True), problems


def _summed(problems: list[Problem]) -> list[Problem]:
    """Warnings of :data:`_SUMMED` said once per file and code (the first one, with the count of them all);
    errors of one code beyond :data:`SHOWN_PER_FILE` in one file summed up in one line."""
    out: list[Problem] = []
    firsts: dict[tuple, int] = {}
    for p in problems:
        if p.severity == "warning" and p.code in _SUMMED and (p.code, p.file) in firsts:
            i = firsts[(p.code, p.file)]
            out[i] = replace(out[i], count=out[i].count + p.count)
            continue
        if p.severity == "warning" and p.code in _SUMMED:
            firsts[(p.code, p.file)] = len(out)
        out.append(p)
    return collapse(out, SHOWN_PER_FILE, ("error",))


def _coverage(results: pl.DataFrame, tasks: pl.DataFrame, first_file: dict) -> list[Problem]:
    """Per run (``first_file``: run -> its first file, in manifest order): the tasks of the table it
    lacks (error), and its tasks without a response (warning)."""
    out = []
    all_tasks = tasks["task_id"].to_list()
    parts = results.partition_by(RUN, as_dict=True, maintain_order=True)
    for (s, m, j) in first_file:
        g = parts.get((s, m, j), results.clear())
        label = f"system {s!r}" + (f" ({m})" if m else "") + (f", judge {j!r}" if j else "")
        lacking = sorted(set(all_tasks) - set(g["task_id"].to_list()))
        if lacking:
            out.append(MISSING_TASKS.problem(first_file[(s, m, j)], None, len(lacking), label=label, n=len(lacking),
                                             of=len(all_tasks), lacking=lacking))
        failed = g.filter(pl.col("pred_error"))
        if failed.height:
            out.append(PRED_ERROR.problem(failed["source_file"][0], failed["source_line"][0], failed.height, label=label,
                                          n=failed.height, task=failed["task_id"][0], met=int(failed["n_met"].sum()),
                                          items=int(failed["n_rubrics"].sum())))
    return out


def load_amc_runs(manifest, tasks, *, strict: bool = True, progress=None) -> AmcRuns:
    """Load the judged results files a manifest lists, against the task table.  ``strict``: raise listing
    every error, else leave the lines with an error out; ``progress(done, total)`` as files are read."""
    manifest, tasks = Path(manifest), Path(tasks)
    man, problems, dropped = manifest_rows(manifest, MANIFEST_COLUMNS)
    man, found = _modalities(man, str(manifest))
    problems += found
    table, items, found = read_task_table(tasks)
    problems += found
    runs = list(dict.fromkeys((r.system, r.output_modality, r.judge) for r in man.itertuples(index=False)))
    files = [(Path(r.resolved), r.path, runs.index((r.system, r.output_modality, r.judge)))
             for r in man.itertuples(index=False)] if table.height else []
    rows, rubric, keyed, stats = read_results(files, table, items, progress)
    problems += _summed(ordered(keyed))
    labels = pl.DataFrame([(i, *r) for i, r in enumerate(runs)], schema={"_run": pl.Int64, **{c: pl.Utf8 for c in RUN}},
                          orient="row")
    results = labels.join(rows, on="_run", how="inner").drop("_run")
    results = results.join(table.drop("axis", "n_rubrics"), on="task_id", how="left", maintain_order="left")
    rubric = labels.join(rubric, on="_run", how="inner").drop("_run").join(
        table.select("task_id", "axis"), on="task_id", how="left", maintain_order="left")
    first = {}
    for r in man.itertuples(index=False):
        first.setdefault((r.system, r.output_modality, r.judge), r.path)
    problems += _coverage(results, table, first) if table.height else []
    stats.update(files=len(files), tasks=table.height, runs=len(runs), task_results=results.height)
    data = AmcRuns(table, items, results, rubric, tasks, manifest=man, problems=problems, stats=stats,
                   manifest_path=manifest, dropped=dropped,
                   inputs=resolved([manifest, tasks, *man["resolved"].tolist()]))
    if strict and data.errors():
        raise VoxMemDataError(data.problems, f"{sum(p.count for p in data.errors())} error(s) in Audio MultiChallenge "
                                             f"runs (manifest {str(manifest)!r}, tasks {str(tasks)!r})")
    return data
