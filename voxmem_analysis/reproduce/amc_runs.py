"""``reproduce --manifest FILE --tasks FILE --out DIR``: an analysis report of judged Audio MultiChallenge runs.

The report describes these runs, never a pass/fail scoreboard against the paper.  Written into ``OUT``
(staged and swapped in when complete, :class:`voxmem_analysis.reproduce.atomic.StagedOutput`):
``tables/amc_runs_slice.csv`` (APR and ARS per system and axis), ``amc_runs_table2.csv`` (the AMC paper's
Table 2 layout, the paper's values as ``published_*`` reference columns where a system's name matches),
``amc_runs_compare.csv`` (every pair of systems), ``amc_runs_judges.csv`` (two judges or more),
``amc_runs_findings.csv`` (every problem of the reading); ``figures/amc_runs_*`` with the numbers drawn;
``findings/amc_runs.json``; ``report/index.md`` and ``report/index.html``; ``run.json``.
"""
from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import polars as pl

from voxmem_analysis import __version__, output
from voxmem_analysis.analysis import amc as A
from voxmem_analysis.analysis.amc_runs import amc_compare, amc_judges, amc_slice, task_frame
from voxmem_analysis.io.amc import AXIS_LABELS
from voxmem_analysis.plots import amc_runs as P
from voxmem_analysis.reproduce.amc_findings import amc_run_findings
from voxmem_analysis.reproduce.atomic import StagedOutput
from voxmem_analysis.reproduce.published import published
from voxmem_analysis.reproduce.report_html import key_columns_first, render, table_view
from voxmem_analysis.reproduce.report_outputs import figure_item

__all__ = ["AmcRunsReport", "write_amc_runs_report", "paper_reference", "rubric_rates"]

KIND = "amc-runs"


@dataclass
class AmcRunsReport:
    """What :func:`write_amc_runs_report` wrote: ``out``, the files (relative to it), the counts said."""

    out: Path
    files: list[str] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0
    lines_left_out: int = 0
    matched_reference: list[str] = field(default_factory=list)


def _key(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "", str(text).lower())


def paper_reference(table2: pd.DataFrame) -> pd.DataFrame:
    """The AMC paper's Table 2 values for the rows of ``table2`` (index ``system|modality``) whose system
    and output modality match one of the paper's rows (case, spaces and punctuation aside): one row per
    matched row, columns ``published_APR, published_ARS, published_IM ...`` and ``published_row``."""
    pub = published(benchmark="amc")
    pub = pub[pub["artifact"] == "amc_table2"].pivot(index="row", columns="column", values="value")
    by_key = {_key(r): r for r in pub.index}
    rows = {}
    for row in table2.index:
        name, _, modality = str(row).rpartition("|")
        hit = by_key.get(_key(f"{name}|{modality}")) if name else by_key.get(_key(row))
        if hit is not None:
            rows[row] = {"published_row": hit, **{f"published_{c}": pub.loc[hit, c] for c in pub.columns}}
    cols = ["published_row"] + [f"published_{c}" for c in ("APR", "ARS", "IM", "IR", "SC", "VE")]
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols)


def _tables(data, frame, *, judge: str | None, seed: int, n_boot: int) -> dict[str, pd.DataFrame]:
    """The report's tables (name -> DataFrame), in the order written."""
    tables: dict[str, pd.DataFrame] = {}
    if frame.height:
        tables["amc_runs_slice"] = amc_slice(frame, ["system", "axis"], n_boot=n_boot, seed=seed)
        release, _ = data.as_release(judge)
        t2 = A.amc_table2(release, seed=seed, n_boot=n_boot)
        ref = paper_reference(t2)
        tables["amc_runs_table2"] = t2.join(ref, how="left") if len(ref) else t2
        if frame["system"].n_unique() > 1:
            tables["amc_runs_compare"] = amc_compare(frame, n_boot=n_boot, seed=seed)
    agreement = amc_judges(data.rubric_results) if data.rubric_results.height else pd.DataFrame()
    if len(agreement):
        tables["amc_runs_judges"] = agreement
    tables["amc_runs_findings"] = pd.DataFrame(
        [{"severity": p.severity, "code": p.code, "file": p.file, "line": p.line, "field": p.field,
          "count": p.count, "message": p.message} for p in data.problems],
        columns=["severity", "code", "file", "line", "field", "count", "message"])
    return tables


def _runs_table(data) -> pd.DataFrame:
    if not data.results.height:
        return pd.DataFrame(columns=["system", "output_modality", "judge", "tasks", "passed", "pred_error"])
    return (data.results.group_by("system", "output_modality", "judge", maintain_order=True)
            .agg(tasks=pl.len(), passed=pl.col("passed").sum(), pred_error=pl.col("pred_error").sum())
            .to_pandas())


def rubric_rates(frame) -> pd.DataFrame:
    """Rubric items met per system and axis, and per system overall (``axis`` = ``overall``): ``system,
    axis, n_items, n_met, rate`` (%, of the items graded), from a task frame's ``n_rubrics`` and ``n_met``."""
    tasks = frame.select("system", "axis", "n_rubrics", "n_met").to_pandas()
    by_axis = tasks.groupby(["system", "axis"], sort=False, as_index=False)[["n_rubrics", "n_met"]].sum()
    overall = tasks.groupby("system", sort=False, as_index=False)[["n_rubrics", "n_met"]].sum().assign(axis="overall")
    out = pd.concat([by_axis, overall], ignore_index=True).rename(columns={"n_rubrics": "n_items"})
    order = {s: i for i, s in enumerate(dict.fromkeys(tasks["system"]))}
    out = out.sort_values("system", key=lambda s: s.map(order), kind="stable").reset_index(drop=True)
    out["rate"] = 100 * out["n_met"] / out["n_items"].where(out["n_items"] > 0)
    return out[["system", "axis", "n_items", "n_met", "rate"]]


#: The figures: (file name, caption, the table drawn, the plotting function).
_FIGURES = (
    ("amc_runs_apr_ars", "APR and ARS (%) per system and axis, with their 95% intervals (Wilson; task bootstrap)",
     "amc_runs_slice", P.plot_apr_ars),
    ("amc_runs_differences", "Paired differences between systems, first minus second (pp), with their paired "
     "task-bootstrap 95% intervals", "amc_runs_compare", P.plot_differences),
    ("amc_runs_rubric_rates", "Rubric items met (%) per system and axis, with the counts", "rubric_rates",
     P.plot_rubric_rates),
)


def _display(table: pd.DataFrame, name: str) -> pd.DataFrame:
    """``table`` as the report shows it: its row labels in the first column, then its key columns."""
    shown = table if table.index.name or not isinstance(table.index, pd.RangeIndex) else table.set_index(table.columns[0])
    return key_columns_first(shown.rename_axis(shown.index.name or "").reset_index(), name)


def _reference_sentence(matched: list[tuple]) -> str:
    if not matched:
        return ("No system of these runs matches a row of the paper's Table 2 by name and output modality, so no "
                "published value is shown.")
    return f"Published reference shown for: {'; '.join(f'{r} (paper: {v})' for r, v in matched)}."


def _figures(stage: Path, tables: dict, synthetic: bool) -> list[dict]:
    """Draw the figures the tables support into ``stage/figures``, each with the CSV of what it draws."""
    drawn = []
    for name, caption, source, plot in _FIGURES:
        table = tables.get(source)
        if table is not None and len(table):
            caption = f"Figure {len(drawn) + 1}: {caption}"
            output.save_figure(plot(table, axis_names=AXIS_LABELS), stage, name, data=table, synthetic=synthetic,
                               caption=caption, show=False)
            drawn.append(figure_item(stage / "figures" / f"{name}.png", caption))
    return drawn


def write_amc_runs_report(data, out, *, seed: int = 0, n_boot: int = 10_000, judge: str | None = None,
                          stream=None) -> AmcRunsReport:
    """Write the report of ``data`` (judged runs read leniently: :func:`voxmem_analysis.io.load_amc_runs`
    with ``strict=False``; the lines with an error are left out and named) into ``out``; notes of the
    output folder on ``stream`` (default stderr)."""
    t0 = time.perf_counter()
    frame, notes = task_frame(data, judge)
    tables = _tables(data, frame, judge=judge, seed=seed, n_boot=n_boot)
    runs = _runs_table(data)
    rates = rubric_rates(frame) if frame.height else pd.DataFrame()
    found = amc_run_findings(tables, rates, runs, AXIS_LABELS)
    head = {"manifest": str(data.manifest_path), "tasks": str(data.tasks_path), "n_tasks": data.tasks.height,
            "seed": seed, "n_boot": n_boot, "notes": notes, "errors": sum(p.count for p in data.errors()),
            "warnings": sum(p.count for p in data.warnings()), "left_out": int(data.stats.get("rejected_lines", 0))}
    result = AmcRunsReport(Path(out).resolve(), errors=head["errors"], warnings=head["warnings"],
                           lines_left_out=head["left_out"])
    published_row = tables.get("amc_runs_table2", pd.DataFrame()).get("published_row", pd.Series(dtype=object)).dropna()
    result.matched_reference, matched = [str(r) for r in published_row.index], list(published_row)
    staged = StagedOutput(result.out, data=data.manifest_path)
    try:
        with staged:
            stage = staged.staging
            view = {"head": head, "synthetic": bool(data.synthetic), "runs": runs, "problems": [str(p) for p in data.problems],
                    "figures": _figures(stage, {**tables, "rubric_rates": rates}, bool(data.synthetic)),
                    "findings": [f.to_dict() for f in found], "tables": {n: _display(t, n) for n, t in tables.items()},
                    "reference": _reference_sentence(list(zip(result.matched_reference, matched))), "version": __version__}
            for f in found:
                output.save_finding(f, stage, name="amc_runs", show=False)
            _write_files(stage, tables, render("amc_runs.md", **view), render("amc_runs.html", **view), result)
            run = {"kind": KIND, "benchmark": KIND, "mode": "analysis", "data_dir": str(Path(data.manifest_path).resolve()),
                   "manifest": str(Path(data.manifest_path).resolve()), "tasks": str(Path(data.tasks_path).resolve()),
                   "seed": seed, "n_boot": n_boot, "synthetic": bool(data.synthetic), "judge": judge, "notes": notes,
                   "runs": runs.to_dict(orient="records"), "stats": {k: int(v) for k, v in data.stats.items()},
                   "errors": result.errors, "warnings": result.warnings, "outputs": result.files,
                   "seconds": round(time.perf_counter() - t0, 2)}
            (stage / "run.json").write_text(json.dumps(run, indent=2, default=str) + "\n", encoding="utf-8")
            staged.commit()
    finally:
        for n in staged.notes:
            print(f"# {n}", file=stream or sys.stderr)
    return result


def _write_files(stage: Path, tables: dict, text: str, page: str, result: AmcRunsReport) -> None:
    (stage / "tables").mkdir(parents=True, exist_ok=True)
    (stage / "report").mkdir(parents=True, exist_ok=True)
    for name, table in tables.items():
        keep_index = not isinstance(table.index, pd.RangeIndex)
        table.to_csv(stage / "tables" / f"{name}.csv", index=keep_index, index_label="row" if keep_index else None,
                     float_format="%.6g", lineterminator="\n")
        result.files.append(f"tables/{name}.csv")
    result.files += sorted(p.relative_to(stage).as_posix() for d in ("figures", "findings") for p in (stage / d).glob("*"))
    (stage / "report" / "index.md").write_text(text, encoding="utf-8")
    (stage / "report" / "index.html").write_text(page, encoding="utf-8")
    result.files += ["report/index.md", "report/index.html"]
