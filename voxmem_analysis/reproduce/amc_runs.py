"""``reproduce --manifest FILE --tasks FILE --out DIR``: an analysis report of judged Audio MultiChallenge runs.

The runs are what their users have (:mod:`voxmem_analysis.io.amc.runs`: judged results files listed in
a manifest, and the benchmark's task table).  The report describes *these runs*; it is never a
pass/fail scoreboard against the paper.  Written into ``OUT`` (built beside it and swapped in when
complete, as every ``reproduce`` output, :class:`voxmem_analysis.reproduce.atomic.StagedOutput`):

* ``tables/amc_runs_slice.csv`` -- APR (Wilson interval) and ARS (task-bootstrap interval) per system
  and axis, with each system's overall row (:func:`voxmem_analysis.analysis.amc_runs.amc_slice`);
* ``tables/amc_runs_table2.csv`` -- the AMC paper's Table 2 layout of these runs (one judge per system)
  with, for every system whose name matches a row of the paper's Table 2, that row's published values
  as labelled **reference** columns (``published_*``; the AMC paper's numbers, never a target);
* ``tables/amc_runs_compare.csv`` (two systems or more) -- every pair on the tasks both have: exact
  McNemar on task pass, paired task-bootstrap intervals of the APR and ARS differences, Holm per axis;
* ``tables/amc_runs_judges.csv`` (a system graded by two judges or more) -- rubric-level agreement, kappa;
* ``tables/amc_runs_findings.csv`` -- every finding of the reading (file, line, field, code, severity);
* ``report/index.md`` and ``report/index.html`` -- the same, as one document; ``run.json``.

The runs are read leniently (the lines with an error are left out, each named); the findings are
printed on standard error as for every command and listed in the report.
"""
from __future__ import annotations

import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from voxmem_analysis.reproduce.report_html import esc

__all__ = ["AmcRunsReport", "write_amc_runs_report", "paper_reference"]

KIND = "amc-runs"
_REFERENCE_SOURCE = "AMC paper, Table 2 (published; reference only)"


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
    from voxmem_analysis.reproduce.published import published

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


def _tables(data, *, judge, seed: int, n_boot: int) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """The report's tables (name -> DataFrame) and the notes of the choices made (judges)."""
    from voxmem_analysis.analysis import amc as A
    from voxmem_analysis.analysis.amc_runs import amc_compare, amc_judges, amc_slice, task_frame

    frame, notes = task_frame(data, judge)
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
    return tables, notes


def _runs_table(data) -> pd.DataFrame:
    import polars as pl

    if not data.results.height:
        return pd.DataFrame(columns=["system", "output_modality", "judge", "tasks", "passed", "pred_error"])
    return (data.results.group_by("system", "output_modality", "judge", maintain_order=True)
            .agg(tasks=pl.len(), passed=pl.col("passed").sum(), pred_error=pl.col("pred_error").sum())
            .to_pandas())


_SECTIONS = (
    ("amc_runs_slice", "APR and ARS (%) per system and axis",
     "APR: share of tasks whose every rubric item is met, with the Wilson 95% interval; ARS: mean over tasks of "
     "the share of items met, with the percentile interval of a task bootstrap (AMC paper §3.1, App. A.4)."),
    ("amc_runs_table2", "The paper's Table 2 layout of these runs",
     "One judge per system. Columns `published_*` are the AMC paper's Table 2 values of the row named in "
     "`published_row`, shown as a labelled reference where a system's name and output modality match one of the "
     "paper's rows; they are not a target and nothing here passes or fails against them."),
    ("amc_runs_compare", "Paired comparison of systems (differences: a - b, pp)",
     "On the tasks both systems have: exact McNemar test on task pass (two-sided binomial test on the discordant "
     "tasks), paired task-bootstrap intervals of the APR and ARS differences, Holm over the pairs of each axis."),
    ("amc_runs_judges", "Judge agreement on the same responses",
     "Rubric item by rubric item: percent agreement and Cohen's kappa between two judges that graded the same "
     "system's responses, per axis and overall."),
)


def _markdown(data, runs: pd.DataFrame, tables: dict, notes: list[str], head: dict) -> str:
    from voxmem_analysis.output import table_to_markdown

    lines = [f"# Audio MultiChallenge runs: analysis report{' [SYNTHETIC DATA]' if data.synthetic else ''}", ""]
    if data.synthetic:
        lines += ["**SYNTHETIC DATA — not real model output.** Do not cite any number computed from it.", ""]
    lines += [f"- manifest: `{head['manifest']}`", f"- task table: `{head['tasks']}` ({head['n_tasks']} tasks)",
              f"- seed {head['seed']}, {head['n_boot']} bootstrap resamples", ""]
    lines += ["## Your runs", "", table_to_markdown(runs.set_index("system"), digits=0)]
    lines += [f"- {n}" for n in notes] + ([""] if notes else [])
    lines += ["## Findings of the reading", "",
              f"{head['errors']} error(s), {head['warnings']} warning(s); {head['left_out']} line(s) left out "
              "(each named below; nothing else is left out).", ""]
    lines += [f"- {p}" for p in data.problems] + [""]
    for name, title, text in _SECTIONS:
        if name in tables:
            lines += [f"## {title}", "", text, ""]
            if name == "amc_runs_table2":
                lines += [_reference_sentence(tables[name]), ""]
            lines += [f"Table: `tables/{name}.csv`", "", table_to_markdown(_shown(tables[name]), digits=2), ""]
    return "\n".join(lines)


def _reference_sentence(table2: pd.DataFrame) -> str:
    if "published_row" not in table2 or not table2["published_row"].notna().any():
        return ("No system of these runs matches a row of the paper's Table 2 by name and output modality, so no "
                "published value is shown.")
    hits = [f"{r} (paper: {v})" for r, v in table2["published_row"].items() if pd.notna(v)]
    return f"Published reference shown for: {'; '.join(hits)}."


def _shown(table: pd.DataFrame) -> pd.DataFrame:
    return table if table.index.name or not isinstance(table.index, pd.RangeIndex) else table.set_index(table.columns[0])


def _code(text) -> str:
    """Escaped ``text`` with its `code` spans as ``<code>`` (the section texts and findings)."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", esc(text))


def _labelled(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with its row labels in the first column, as :func:`~voxmem_analysis.reproduce.report_html.table_html`
    shows them (the same rows and labels as the Markdown table)."""
    shown = _shown(table)
    return shown.rename_axis(shown.index.name or "").reset_index()


def _html(data, runs: pd.DataFrame, tables: dict, notes: list[str], head: dict) -> str:
    """The report as one self-contained page in the reproduction report's layout (``resources/report.html``,
    ``report.css``), its tables built from the DataFrames by :func:`~voxmem_analysis.reproduce.report_html.table_html`
    (numbers as the Markdown file prints them)."""
    from string import Template

    from voxmem_analysis import __version__
    from voxmem_analysis.reproduce.report_html import resource, table_html

    errors, warnings, left_out = head["errors"], head["warnings"], head["left_out"]
    sections = [("runs", "Your runs", table_html(runs, digits=0, max_rows=None)
                 + (("<ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>") if notes else "")),
                ("findings", "Findings of the reading",
                 f"<p>{errors} error(s), {warnings} warning(s); {left_out} line(s) left out (each named below; nothing "
                 "else is left out).</p>" + ("<ul>" + "".join(f"<li>{_code(p)}</li>" for p in data.problems) + "</ul>"
                                             if data.problems else ""))]
    for name, title, text in _SECTIONS:
        if name in tables:
            ref = f"<p>{esc(_reference_sentence(tables[name]))}</p>" if name == "amc_runs_table2" else ""
            sections.append((name, title, f'<p class="lead">{_code(text)}</p>{ref}<p>Table: <code>tables/{name}.csv'
                                          f"</code></p>" + table_html(_labelled(tables[name]), digits=2, max_rows=None)))
    synthetic = bool(data.synthetic)
    banner = ('<div class="banner synthetic"><p><span class="tag">SYNTHETIC DATA</span><b>Made from synthetic runs: '
              "not real model output.</b> Do not cite any number computed from it.</p></div>" if synthetic else
              f'<div class="banner"><p><span class="tag real">DATA</span>Made from the runs listed in '
              f"<code>{esc(head['manifest'])}</code>.</p></div>")
    cards = "".join(f'<div class="card{cls}"><div class="big">{big}</div><div class="sub">{sub}</div></div>' for big, sub, cls in (
        (len(runs), "runs (system &times; output modality &times; judge)", ""), (head["n_tasks"], "tasks in the task table", ""),
        (errors, "error(s) in the reading", " bad" if errors else " ok"), (warnings, "warning(s)", " warn" if warnings else " ok"),
        (left_out, "line(s) left out, each named", " warn" if left_out else " ok")))
    return Template(resource("report.html")).substitute(
        title=esc("Audio MultiChallenge runs: analysis report" + (" (SYNTHETIC DATA)" if synthetic else "")),
        css=resource("report.css"), banner=banner, cards=f'<div class="cards">{cards}</div>',
        lead=(f"The judged runs of the manifest <code>{esc(head['manifest'])}</code> on the task table "
              f"<code>{esc(head['tasks'])}</code> ({head['n_tasks']} tasks); seed {head['seed']}, {head['n_boot']} "
              "bootstrap resamples. The report describes these runs; the paper's numbers appear only as a labelled reference."),
        nav="".join(f'<a href="#{a}">{esc(h)}</a>' for a, h, _ in sections),
        body="\n".join(f'<h2 id="{a}">{esc(h)}</h2>\n{b}' for a, h, b in sections),
        footer=(f"voxmem-analysis {esc(__version__)} &middot; <code>voxmem-analysis reproduce --manifest "
                f"{esc(head['manifest'])} --tasks {esc(head['tasks'])} --seed {head['seed']} --n-boot {head['n_boot']}</code>"
                + (" &middot; SYNTHETIC DATA &mdash; not real model output" if synthetic else "")))


def write_amc_runs_report(data, out, *, seed: int = 0, n_boot: int = 10_000, judge: str | None = None,
                          stream=None) -> AmcRunsReport:
    """Write the report of ``data`` (judged runs read leniently: :func:`voxmem_analysis.io.load_amc_runs`
    with ``strict=False``; the lines with an error are left out and named) into ``out``; notes of the
    output folder on ``stream`` (default stderr)."""
    from voxmem_analysis.reproduce.atomic import StagedOutput

    t0 = time.perf_counter()
    manifest, tasks = data.manifest_path, data.tasks_path
    tables, notes = _tables(data, judge=judge, seed=seed, n_boot=n_boot)
    runs = _runs_table(data)
    head = {"manifest": str(manifest), "tasks": str(tasks), "n_tasks": data.tasks.height, "seed": seed, "n_boot": n_boot,
            "errors": sum(p.count for p in data.errors()), "warnings": sum(p.count for p in data.warnings()),
            "left_out": int(data.stats.get("rejected_lines", 0))}
    text = _markdown(data, runs, tables, notes, head)
    result = AmcRunsReport(Path(out).resolve(), errors=head["errors"], warnings=head["warnings"], lines_left_out=head["left_out"])
    if "amc_runs_table2" in tables and "published_row" in tables["amc_runs_table2"]:
        result.matched_reference = [str(r) for r, v in tables["amc_runs_table2"]["published_row"].items() if pd.notna(v)]
    staged = StagedOutput(result.out, data=manifest)
    try:
        with staged:
            _write_files(staged.staging, tables, text, _html(data, runs, tables, notes, head), result)
            run = {"kind": KIND, "benchmark": KIND, "mode": "analysis", "data_dir": str(Path(manifest).resolve()),
                   "manifest": str(Path(manifest).resolve()), "tasks": str(Path(tasks).resolve()), "seed": seed,
                   "n_boot": n_boot, "synthetic": bool(data.synthetic), "judge": judge, "notes": notes,
                   "runs": runs.to_dict(orient="records"), "stats": {k: int(v) for k, v in data.stats.items()},
                   "errors": result.errors, "warnings": result.warnings, "outputs": result.files,
                   "seconds": round(time.perf_counter() - t0, 2)}
            (staged.staging / "run.json").write_text(json.dumps(run, indent=2, default=str) + "\n", encoding="utf-8")
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
    (stage / "report" / "index.md").write_text(text, encoding="utf-8")
    (stage / "report" / "index.html").write_text(page, encoding="utf-8")
    result.files += ["report/index.md", "report/index.html"]
