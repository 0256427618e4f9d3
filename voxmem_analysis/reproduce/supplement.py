"""Supplementary material from the files of a ``reproduce`` output: ``OUT/voxmem_supplement/`` and its zip.

``tableN.tex`` (every paper table, rebuilt exactly from its long-form numbers at the paper's printed precision),
``figureN.pdf`` (the paper's figures; exploratory ones left out and listed), ``voxmem_numbers.csv`` (every number)
and ``README.md`` (the data, loudly SYNTHETIC when it is, what made it and what is missing, with why).  Nothing
is computed again (without ``from_dir`` the notebooks run into a temporary folder first); outputs made otherwise
than their run, or of an older layout, are refused unless ``allow_mixed``.  Every file and the zip are
deterministic.
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

import pandas as pd

from voxmem_analysis import __version__
from voxmem_analysis.errors import OutputFolderError
from voxmem_analysis.io import release_fingerprint
from voxmem_analysis.output import SYNTHETIC_LABEL, read_long, table_to_latex, write_long
from voxmem_analysis.reproduce.notebook import display_path
from voxmem_analysis.reproduce.provenance import (findings, grouped, has_digests, notebook_source, params_text,
                                                  read_records)
from voxmem_analysis.reproduce.published import printed_decimals, published
from voxmem_analysis.reproduce.report_html import render
from voxmem_analysis.reproduce.report_outputs import captions
from voxmem_analysis.reproduce.runner import RunOptions, run
from voxmem_analysis.textlimits import csv_field_limit
from voxmem_analysis.writing import atomic_write, replace_folder

__all__ = ["build_supplement", "paper_figure_names", "write_zip", "SupplementResult"]

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
    """``{figure file stem: its name in the supplement}``: ``fig5_operation_evidence_32k`` -> ``figure5`` (or
    ``figure5_operation_evidence_32k`` when another file draws Figure 5 too), ``amc_fig5`` -> ``amc_figure5``,
    ``table18_forest`` kept; others (``explorer_*``, ``validation_*``) are not the paper's and are absent."""
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
def _readme(run: dict, records: dict, entries: list[tuple[str, str]], res: SupplementResult) -> str:
    rel = run.get("release") or {}
    made = []
    for n in sorted({r.get("notebook") for r in records.values() if r.get("notebook")}):
        src = notebook_source(records, n) or {}
        made.append((n, params_text(src.get("parameters") or {}), str((src.get("release") or {}).get("name")),
                     str((src.get("release") or {}).get("fingerprint"))[:23], str(src.get("version"))))
    return render("supplement_readme.md", version=__version__, made=made, entries=entries, mixed=res.mixed,
                  benchmark="Audio MultiChallenge" if rel.get("benchmark") == "audio-multichallenge" else "VoxMem",
                  synthetic=bool(rel.get("synthetic")), name=rel.get("name") or "?", description=rel.get("description"),
                  shown=display_path(rel.get("path") or run.get("data_dir")), seed=str(run.get("seed")),
                  n_boot=str(run.get("n_boot")), left_out=", ".join(f"`{s}`" for s in res.left_out),
                  not_included=[(a, e.splitlines()[0]) for a, e in {**res.skipped, **res.artifact_errors}.items()],
                  sections=[(nb, sec, why) for nb, secs in res.sections_skipped.items() for sec, why in secs])


# ----------------------------------------------------------------------------- build
_PAPER_TABLE = re.compile(r"^(amc_)?table\d+$")


def wide_from_long(rows, index_name: str | None = None):
    """The paper-shaped table of long rows ``(artifact, row, column, value)`` (rows and columns in their first
    order of appearance, exact values, missing cells NaN)."""
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


def _tables(src: Path, folder: Path, synthetic: bool, caps: dict, res: SupplementResult) -> tuple[list, list]:
    """LaTeX of the paper tables of ``src/tables`` and the long rows of every table; the entries written."""
    pub = published(benchmark="all")
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
        tex = table_to_latex(table, caption=caption, label=f"tab:{name}", decimals=printed_decimals(name, pub))
        (folder / f"{name}.tex").write_text(tex, encoding="utf-8")
        entries.append((f"{name}.tex", title))
    return entries, numbers


def _figures(src: Path, folder: Path, caps: dict, res: SupplementResult) -> list[tuple[str, str]]:
    pdfs = {p.stem: p for p in sorted((src / "figures").glob("*.pdf"))}
    names = paper_figure_names(pdfs)
    entries = []
    for stem, target in sorted(names.items(), key=lambda kv: kv[1]):
        shutil.copyfile(pdfs[stem], folder / f"{target}.pdf")
        entries.append((f"{target}.pdf", caps.get(f"figures/{stem}.png", stem)))
    res.left_out = sorted(set(pdfs) - set(names))
    return entries


def _check_source(src: Path, data: Path, seed: int | None, n_boot: int | None, allow_mixed: bool,
                  res: SupplementResult) -> tuple[dict, dict]:
    """run.json and records of ``src``; :class:`OutputFolderError` when made otherwise than asked or mixed."""
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
    """Write ``out_dir/voxmem_supplement/`` and its zip from the ``reproduce`` output ``from_dir`` of ``data_dir``
    (None: the notebooks run into a temporary folder first, with ``seed`` 0, ``n_boot`` 10,000 unless given;
    given with ``from_dir``, they are checked against the run's).  ``allow_mixed``: package outputs made
    otherwise than the rest of the run (the README lists them) instead of refusing."""
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


def _package(src: Path, folder: Path, run_info: dict, records: dict, res: SupplementResult) -> None:
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
    caps = captions(src)
    entries, numbers = _tables(src, folder, synthetic, caps, res)
    write_long(numbers, folder / "voxmem_numbers.csv")
    n_tables = len({r[0] for r in numbers})
    entries.append(("voxmem_numbers.csv", f"every number of the {n_tables} tables, long format"))
    entries += _figures(src, folder, caps, res)
    entries.sort(key=lambda e: _entry_order(e[0]))
    (folder / "README.md").write_text(_readme(run_info, records, entries, res), encoding="utf-8")


def _entry_order(name: str):
    """VoxMem tables, then figures, by number; then the Audio MultiChallenge ones; then the rest."""
    m = re.match(r"^(amc_)?(table|figure)(\d+)", name)
    if m:
        return (1 if m.group(1) else 0, 0 if m.group(2) == "table" else 1, int(m.group(3)), name)
    return (2, 0, 0, name)
