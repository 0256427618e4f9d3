"""Supplementary material from the files of a ``reproduce`` output: ``OUT/voxmem_supplement/`` and its zip.

``tableN.tex``: every paper table the notebooks wrote, rebuilt exactly from its long-form numbers
(``tables/NAME.long.csv``) as a booktabs ``table`` at the paper's printed precision
(:func:`voxmem_analysis.output.table_to_latex`); ``figureN.pdf`` (``amc_figureN.pdf``): the paper's figures
(other figures of paper artifacts keep their names, exploratory ones are left out and listed);
``voxmem_numbers.csv``: every number, long format; ``README.md``: the data (loudly SYNTHETIC when it is),
what made it (``provenance.json``) and what is not included, with the reason.  Nothing is computed again
(without ``from_dir`` the notebooks run into a temporary folder first).  An output made otherwise than
its run, without a record, or whose bytes differ from its record
(:func:`voxmem_analysis.reproduce.provenance.findings`) is refused unless ``allow_mixed`` (then the README
lists it); so is an output of an older layout.  Every file and the zip are deterministic.
"""
from __future__ import annotations

import csv
import json
import os
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from voxmem_analysis import __version__
from voxmem_analysis.errors import OutputFolderError
from voxmem_analysis.io import release_fingerprint
from voxmem_analysis.output import SYNTHETIC_LABEL, latex_cells, read_long, table_to_latex, write_long
from voxmem_analysis.reproduce.provenance import (IGNORED_PARAMETERS, findings, grouped, has_digests,
                                                  notebook_source, read_records)
from voxmem_analysis.reproduce.published import printed_decimals, published
from voxmem_analysis.reproduce.report_outputs import captions
from voxmem_analysis.reproduce.runner import RunOptions, run
from voxmem_analysis.textlimits import csv_field_limit
from voxmem_analysis.writing import atomic_write, replace_folder

__all__ = ["build_supplement", "paper_figure_names", "write_zip", "format_table", "paper_decimals", "SupplementResult"]

FOLDER = "voxmem_supplement"
_FIG = re.compile(r"^(amc_)?fig(?:ure)?_?(\d+)([a-z]?)(?:[_-](.+))?$")
_ARTIFACT_PREFIX = re.compile(r"^(table\d+|d\d+|groups|judges|population)(?:[_-].+)?$")
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass
class SupplementResult:
    folder: Path
    zip_path: Path
    files: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)        # figures not part of the paper's material
    artifact_errors: dict[str, str] = field(default_factory=dict)   # notebooks that failed: name -> error
    skipped: dict[str, str] = field(default_factory=dict)           # notebooks skipped: name -> reason
    sections_skipped: dict[str, list] = field(default_factory=dict)  # sections skipped: notebook -> [[section, reason]]
    reproduce_exit_code: int = 0
    warnings: list[str] = field(default_factory=list)
    mixed: list[tuple[str, str]] = field(default_factory=list)  # outputs made otherwise than the rest, packaged

    @property
    def exit_code(self) -> int:
        return 1 if (self.artifact_errors or self.reproduce_exit_code) else 0


# ----------------------------------------------------------------------------- names
def paper_figure_names(stems) -> dict[str, str]:
    """Map figure file stems to their names in the supplement (stems left out are absent).

    ``fig5_operation_evidence_32k`` -> ``figure5`` (or ``figure5_operation_evidence_32k`` when
    another file also draws Figure 5); the Audio MultiChallenge paper's ``amc_fig5`` -> ``amc_figure5``;
    ``table18_forest`` -> ``table18_forest``; anything else (``explorer_*``, ``validation_*``) is not
    part of the paper's material.
    """
    stems = sorted(set(stems))
    by_fig: dict[str, list[tuple[str, str]]] = {}
    out: dict[str, str] = {}
    for s in stems:
        m = _FIG.match(s)
        if m:
            by_fig.setdefault(f"{m.group(1) or ''}figure{int(m.group(2))}{m.group(3)}", []).append((s, m.group(4) or ""))
        elif _ARTIFACT_PREFIX.match(s):
            out[s] = s
    for base, members in by_fig.items():
        if len(members) == 1:
            out[members[0][0]] = base
        else:
            for s, rest in members:
                out[s] = f"{base}_{rest}" if rest else base
    return out


# ----------------------------------------------------------------------------- LaTeX
def paper_decimals(name: str, published=None) -> dict[str, int]:
    """:func:`voxmem_analysis.reproduce.published.printed_decimals` of ``name`` in ``published`` (none: {})."""
    if published is None or not len(published):
        return {}
    return printed_decimals(name, published)


def format_table(table, name: str, published=None):
    """The wide artifact ``table`` with every cell as the LaTeX text the supplement prints
    (:func:`voxmem_analysis.output.latex_cells` at the paper's printed precision, :func:`paper_decimals`)."""
    import pandas as pd

    cells = latex_cells(table, decimals=paper_decimals(name, published))
    out = pd.DataFrame(cells, index=table.index.copy(), columns=list(table.columns), dtype=object)
    out.index.name = table.index.name
    return out


# ----------------------------------------------------------------------------- zip
def write_zip(folder, zip_path) -> Path:
    """Zip ``folder`` (as its own top-level directory) deterministically: sorted entries, fixed times."""
    folder, zip_path = Path(folder), Path(zip_path)
    files = sorted(p for p in folder.rglob("*") if p.is_file())

    def write(tmp: Path) -> None:
        with zipfile.ZipFile(tmp, "w") as zf:
            for p in files:
                info = zipfile.ZipInfo(f"{folder.name}/{p.relative_to(folder).as_posix()}", date_time=_ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.create_system = 3
                info.external_attr = 0o100644 << 16
                zf.writestr(info, p.read_bytes(), compresslevel=9)

    return atomic_write(zip_path, write)


# ----------------------------------------------------------------------------- README
def _shown_path(p) -> str:
    try:
        return Path(p).resolve().relative_to(Path(__file__).resolve().parents[2]).as_posix()
    except (ValueError, TypeError):
        return str(p)


def _provenance_lines(records: dict) -> list[str]:
    names = sorted({r.get("notebook") for r in records.values() if r.get("notebook")})
    if not names:
        return []
    lines = ["## What made it", "", "| notebook | parameters | release | version |", "| --- | --- | --- | --- |"]
    for n in names:
        src = notebook_source(records, n) or {}
        params = ", ".join(f"{k}={v!r}" for k, v in sorted((src.get("parameters") or {}).items())
                           if k not in IGNORED_PARAMETERS) or "none"
        rel = src.get("release") or {}
        lines.append(f"| `{n}` | `{params}` | {rel.get('name')} (`{str(rel.get('fingerprint'))[:23]}...`) | "
                     f"{src.get('version')} |")
    return lines + [""]


def _readme(run: dict, records: dict, entries: list[tuple[str, str]], res: "SupplementResult") -> str:
    rel = run.get("release") or {}
    shown, name = _shown_path(rel.get("path") or run.get("data_dir")), rel.get("name") or "?"
    amc = rel.get("benchmark") == "audio-multichallenge"
    lines = [f"# {'Audio MultiChallenge' if amc else 'VoxMem'} supplementary material", ""]
    if rel.get("synthetic"):
        lines += ["**SYNTHETIC DATA -- not real model output.** Every table, figure and number here was computed",
                  f"from the synthetic release `{shown}` ({name}): its verdicts were generated, not produced",
                  "by any model. The material demonstrates the analysis code; it is not a measurement of any model.",
                  ""]
    else:
        lines += [f"Computed from the release `{shown}` ({name}).", ""]
    if rel.get("description"):
        lines += [f"Release description: {rel['description']}", ""]
    lines += [f"Packaged by voxmem-analysis {__version__} (`voxmem-analysis supplement`) from the files of one "
              f"`reproduce` run: bootstrap seed {run.get('seed')}, {run.get('n_boot')} resamples.", ""]
    lines += _provenance_lines(records)
    if res.mixed:
        lines += ["**Made otherwise than the rest of the run** (packaged on request, `--allow-mixed`):", ""]
        lines += [f"- `{o}`: {what}" for o, what in res.mixed] + [""]
    lines += ["LaTeX tables are booktabs `table` environments: add `\\usepackage{booktabs}` (and",
              "`\\usepackage{amssymb}` for the check marks of Table 14) to the preamble and `\\input{table15.tex}`.",
              "Figures are vector PDFs. `voxmem_numbers.csv` holds every number of every table in the long format",
              "`artifact,row,column,value` (labels as printed in the paper).", "",
              "| file | content |", "| --- | --- |"]
    lines += [f"| `{f}` | {t} |" for f, t in entries]
    if res.left_out:
        lines += ["", "Figures of the workbook not part of the paper's material (not included): "
                  + ", ".join(f"`{s}`" for s in res.left_out) + "."]
    if res.artifact_errors or res.skipped:
        lines += ["", "Not included (the run did not produce them):"]
        lines += [f"- `{a}`: {e.splitlines()[0]}" for a, e in {**res.skipped, **res.artifact_errors}.items()]
    if res.sections_skipped:
        lines += ["", "Sections the data could not support (skipped by the notebooks, with the reason they printed):"]
        lines += [f"- `{nb}`, {sec}: {why}" for nb, secs in res.sections_skipped.items() for sec, why in secs]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- build
_PAPER_TABLE = re.compile(r"^(amc_)?table\d+$")


def wide_from_long(rows, index_name: str | None = None):
    """The paper-shaped table of long rows ``(artifact, row, column, value)``: rows and columns in
    their first order of appearance, exact values, missing cells NaN."""
    import pandas as pd

    r_order = list(dict.fromkeys(r for _, r, _, _ in rows))
    c_order = list(dict.fromkeys(c for _, _, c, _ in rows))
    table = pd.DataFrame(index=pd.Index(r_order, name=index_name), columns=c_order, dtype=object)
    for _, r, c, v in rows:
        table.at[r, c] = v
    return table


def _index_name(csv_path: Path) -> str | None:
    try:
        with open(csv_path, encoding="utf-8", newline="") as fh, csv_field_limit():
            head = next(csv.reader(fh), [])
    except OSError:
        return None
    return head[0] if head and head[0] else None


def _tables(src: Path, folder: Path, synthetic: bool, res: "SupplementResult") -> tuple[list, list]:
    """LaTeX of the paper tables of ``src/tables`` and the long rows of every table; the entries written."""
    pub = published(benchmark="all")
    caps = captions(src)
    entries, numbers = [], []
    for long_path in sorted((src / "tables").glob("*.long.csv")):
        name = long_path.name[: -len(".long.csv")]
        try:
            rows = read_long(long_path)
        except (OSError, ValueError) as exc:
            res.warnings.append(f"tables/{long_path.name} could not be read ({exc}); its numbers are left out")
            continue
        numbers += rows
        if not _PAPER_TABLE.match(name):
            continue
        title = caps.get(f"tables/{name}.csv", name)
        table = wide_from_long(rows, _index_name(src / "tables" / f"{name}.csv"))
        caption = f"{title} [{SYNTHETIC_LABEL}]" if synthetic else title
        tex = table_to_latex(table, caption=caption, label=f"tab:{name}", decimals=paper_decimals(name, pub))
        (folder / f"{name}.tex").write_text(tex, encoding="utf-8")
        entries.append((f"{name}.tex", title))
    return entries, numbers


def _figures(src: Path, folder: Path, res: "SupplementResult") -> list[tuple[str, str]]:
    caps = captions(src)
    pdfs = {p.stem: p for p in sorted((src / "figures").glob("*.pdf"))}
    names = paper_figure_names(pdfs)
    entries = []
    for stem, target in sorted(names.items(), key=lambda kv: kv[1]):
        shutil.copyfile(pdfs[stem], folder / f"{target}.pdf")
        entries.append((f"{target}.pdf", caps.get(f"figures/{stem}.png", stem)))
    res.left_out = sorted(set(pdfs) - set(names))
    return entries


def _check_source(src: Path, data: Path, seed: int | None, n_boot: int | None, allow_mixed: bool,
                  res: "SupplementResult") -> tuple[dict, dict]:
    """run.json and provenance records of ``src``; refuses (``OutputFolderError``) a folder made from
    other data or settings than asked, or holding outputs made otherwise than the rest (unless ``allow_mixed``)."""
    try:
        run = json.loads((src / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise OutputFolderError(f"{src}: no readable run.json ({exc}); package a folder written by "
                                f"`voxmem-analysis reproduce`") from None
    fp = (run.get("release") or {}).get("fingerprint")
    if fp and fp != release_fingerprint(data):
        raise OutputFolderError(f"{src} was made from other data than {data} (release fingerprints differ); "
                                f"run `voxmem-analysis reproduce --data {data}` first, or drop --from")
    for key, asked in (("seed", seed), ("n_boot", n_boot)):
        if asked is not None and run.get(key) != asked:
            raise OutputFolderError(f"{src} was made with {key} {run.get(key)}, not {asked}: drop the option "
                                    f"(the run's value is used) or run `reproduce` again with it")
    records = read_records(src)
    older = _older_layout(src, records)
    if older:
        raise OutputFolderError(f"{src} was written by an older version of voxmem-analysis ({older}), so what it "
                                f"holds cannot be checked or packaged: run `voxmem-analysis reproduce --data {data} "
                                f"--out {src}` again")
    mixed = grouped(findings(src, run))
    if mixed and not allow_mixed:
        listed = "\n".join(f"  {o}: {what}" for o, what in mixed[:20])
        more = f"\n  ... and {len(mixed) - 20} more" if len(mixed) > 20 else ""
        raise OutputFolderError(f"{src} holds {len(mixed)} output(s) not made like the rest of its run:\n{listed}{more}\n"
                                f"re-run `voxmem-analysis reproduce` to make them all alike, or pass --allow-mixed to "
                                f"package them with this list in the README")
    res.mixed = mixed
    return run, records


def _older_layout(src: Path, records: dict) -> str | None:
    """Why ``src`` is a ``reproduce`` output of an older layout than this version packages, or None."""
    if not has_digests(records):
        return "its provenance.json records no digest of the outputs' bytes"
    tables = src / "tables"
    if any(tables.glob("*.csv")) and not any(tables.glob("*.long.csv")):
        return "its tables/ holds no *.long.csv, the exact numbers the LaTeX tables are built from"
    return None


def build_supplement(data_dir, out_dir, *, from_dir=None, seed: int | None = None, n_boot: int | None = None,
                     jobs: int | None = None, progress: bool | None = None, stream=None,
                     allow_mixed: bool = False) -> SupplementResult:
    """Write ``out_dir/voxmem_supplement/`` and ``out_dir/voxmem_supplement.zip`` from the files of a run.

    Parameters
    ----------
    data_dir : path
        Release directory.
    out_dir : path
        Where the folder and the zip go.
    from_dir : path, optional
        Output folder of an earlier ``voxmem-analysis reproduce`` run on ``data_dir``.  Without it the
        notebooks are run into a temporary folder first.
    seed, n_boot : int, optional
        For that run (default 0 and 10,000); with ``from_dir``, checked against the run's (None: any).
    jobs
        As for ``reproduce``.
    allow_mixed : bool
        Package outputs made otherwise than the rest of the run (listed in the README) instead of refusing.
    """
    data, out = Path(data_dir), Path(out_dir)
    folder = out / FOLDER
    tmp = None
    res = SupplementResult(folder, out / f"{FOLDER}.zip")
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{FOLDER}.staging-", dir=out))   # built whole, then swapped in
    build = stage / FOLDER
    try:
        if from_dir is None:
            tmp = tempfile.mkdtemp(prefix="voxmem-supplement-")
            opts = RunOptions(jobs=jobs, seed=0 if seed is None else seed,
                              n_boot=10_000 if n_boot is None else n_boot, progress=progress, report=False)
            res.reproduce_exit_code = run(data, tmp, opts, stream=stream).exit_code
            from_dir = tmp
        src = Path(from_dir)
        run_info, records = _check_source(src, data, seed, n_boot, allow_mixed, res)
        build.mkdir(parents=True)
        _package(src, build, run_info, records, res)
        write_zip(build, stage / f"{FOLDER}.zip")
        res.files = sorted(p.relative_to(build).as_posix() for p in build.rglob("*") if p.is_file())

        replace_folder(build, folder)                       # the previous folder and zip stay until now
        os.replace(stage / f"{FOLDER}.zip", res.zip_path)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(stage, ignore_errors=True)
    return res


def _package(src: Path, folder: Path, run_info: dict, records: dict, res: "SupplementResult") -> None:
    """The supplement's files from the run in ``src``, written into ``folder``."""
    synthetic = bool((run_info.get("release") or {}).get("synthetic"))
    for nb in run_info.get("notebooks", []):
        if nb.get("status") == "failed":
            res.artifact_errors[nb["name"]] = ("the notebook failed in the run, so its outputs are missing (the "
                                               "run's report/index.html shows where and why)")
        elif nb.get("status") == "skipped":
            res.skipped[nb["name"]] = str(nb.get("reason") or "skipped")
        if nb.get("status") != "skipped" and nb.get("sections_skipped"):
            res.sections_skipped[nb["name"]] = [list(x) for x in nb["sections_skipped"]]
    entries, numbers = _tables(src, folder, synthetic, res)
    write_long(numbers, folder / "voxmem_numbers.csv")
    n_tables = len({r[0] for r in numbers})
    entries.append(("voxmem_numbers.csv", f"every number of the {n_tables} tables, long format"))
    entries += _figures(src, folder, res)
    entries.sort(key=lambda e: _entry_order(e[0]))
    (folder / "README.md").write_text(_readme(run_info, records, entries, res), encoding="utf-8")


def _entry_order(name: str):
    """VoxMem tables, then figures, by number; then the Audio MultiChallenge ones; then the rest."""
    m = re.match(r"^(amc_)?(table|figure)(\d+)", name)
    if m:
        return (1 if m.group(1) else 0, 0 if m.group(2) == "table" else 1, int(m.group(3)), name)
    return (2, 0, 0, name)
