"""Supplementary material: the paper's tables (LaTeX), figures (PDF) and every number (CSV).

:func:`build_supplement` writes ``OUT/voxmem_supplement/`` and ``OUT/voxmem_supplement.zip``:

``tableN.tex``
    Every registered artifact ``tableN`` as a booktabs ``table`` environment (needs
    ``\\usepackage{booktabs}``), each cell printed with the number of decimals the paper prints
    it with (``published.csv``; cells the paper does not print take their column's usual
    precision).  The caption is the artifact's title (plus the SYNTHETIC label for a synthetic
    release).
``figureN.pdf``
    The PDF figures written by the notebooks (``figures/figN_*.pdf`` of a ``reproduce`` output);
    when several files draw one paper figure they keep a suffix (``figure5_operation_evidence_32k.pdf``).
    Other figures of paper artifacts keep their names (``table18_forest.pdf``); exploratory and
    validation figures are left out (and listed by :func:`build_supplement`).
``voxmem_numbers.csv``
    The long format ``artifact,row,column,value`` of every registered artifact.
``README.md``
    Which data the material was made from -- loudly SYNTHETIC when it was -- and the file list.

Figures come from an existing ``reproduce`` output (``from_dir``) or, by default, from running
the notebooks into a temporary folder.  Every file is deterministic for a given release, seed
and ``n_boot``, and so is the zip (fixed timestamps and permissions, sorted entries).
"""
from __future__ import annotations

import math
import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["build_supplement", "paper_figure_names", "write_zip", "format_table", "SupplementResult"]

FOLDER = "voxmem_supplement"
_FIG = re.compile(r"^fig(?:ure)?_?(\d+)([a-z]?)(?:[_-](.+))?$")
_ARTIFACT_PREFIX = re.compile(r"^(table\d+|d\d+|groups|judges|population)(?:[_-].+)?$")
_ZIP_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass
class SupplementResult:
    folder: Path
    zip_path: Path
    files: list[str] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)        # figures not part of the paper's material
    artifact_errors: dict[str, str] = field(default_factory=dict)
    reproduce_exit_code: int = 0
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if (self.artifact_errors or self.reproduce_exit_code) else 0


# ----------------------------------------------------------------------------- names
def paper_figure_names(stems) -> dict[str, str]:
    """Map figure file stems to their names in the supplement (stems left out are absent).

    ``fig5_operation_evidence_32k`` -> ``figure5`` (or ``figure5_operation_evidence_32k`` when
    another file also draws Figure 5); ``table18_forest`` -> ``table18_forest``; anything
    else (``explorer_*``, ``validation_*``) is not part of the paper's material.
    """
    stems = sorted(set(stems))
    by_fig: dict[str, list[tuple[str, str]]] = {}
    out: dict[str, str] = {}
    for s in stems:
        m = _FIG.match(s)
        if m:
            by_fig.setdefault(f"figure{int(m.group(1))}{m.group(2)}", []).append((s, m.group(3) or ""))
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
def _heuristic_decimals(values) -> int:
    vals = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    if not vals:
        return 1
    if all(float(v).is_integer() for v in vals):
        return 0
    if max(abs(v) for v in vals) < 1.5:
        return 2
    return 1


def format_table(table, name: str, published=None):
    """The wide artifact ``table`` with every number as text, at the paper's printed precision."""
    import pandas as pd

    exact: dict[tuple[str, str], int] = {}
    by_col: dict[str, int] = {}
    if published is not None and len(published):
        pub = published[published["artifact"] == name]
        exact = {(str(r), str(c)): int(d) for r, c, d in zip(pub["row"], pub["column"], pub["decimals"])}
        for c, g in pub.groupby("column"):
            by_col[str(c)] = int(g["decimals"].mode().iloc[0])
    out = pd.DataFrame(index=table.index.copy(), columns=list(table.columns), dtype=object)
    for c in table.columns:
        col = table[c]
        fallback = by_col.get(str(c))
        if fallback is None:
            fallback = _heuristic_decimals(col.tolist()) if pd.api.types.is_numeric_dtype(col) else 1
        for r, v in zip(table.index, col.tolist()):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                out.loc[r, c] = ""
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                d = exact.get((str(r), str(c)), fallback)
                out.loc[r, c] = f"{float(v):.{d}f}"
            else:
                out.loc[r, c] = str(v)
    out.index.name = table.index.name
    return out


# ----------------------------------------------------------------------------- zip
def write_zip(folder, zip_path) -> Path:
    """Zip ``folder`` (as its own top-level directory) deterministically: sorted entries, fixed times."""
    folder, zip_path = Path(folder), Path(zip_path)
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    tmp = zip_path.with_suffix(".zip.tmp")
    with zipfile.ZipFile(tmp, "w") as zf:
        for p in files:
            info = zipfile.ZipInfo(f"{folder.name}/{p.relative_to(folder).as_posix()}", date_time=_ZIP_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3
            info.external_attr = 0o100644 << 16
            zf.writestr(info, p.read_bytes(), compresslevel=9)
    tmp.replace(zip_path)
    return zip_path


# ----------------------------------------------------------------------------- README
def _readme(release, *, data_dir: Path, seed: int, n_boot: int, entries: list[tuple[str, str]],
            left_out: list[str], errors: dict[str, str]) -> str:
    from voxmem_analysis import __version__

    try:
        shown = data_dir.resolve().relative_to(Path(__file__).resolve().parents[2]).as_posix()
    except ValueError:
        shown = str(data_dir)
    lines = ["# VoxMem supplementary material", ""]
    if release.synthetic:
        lines += ["**SYNTHETIC DATA -- not real model output.** Every table, figure and number here was computed",
                  f"from the synthetic release `{shown}` ({release.name}): its verdicts were generated, not produced",
                  "by any model. The material demonstrates the analysis code; it is not a measurement of any model.",
                  ""]
    else:
        lines += [f"Computed from the release `{shown}` ({release.name}).", ""]
    desc = release.meta.get("description")
    if desc:
        lines += [f"Release description: {desc}", ""]
    lines += [f"Made by voxmem-analysis {__version__} (`voxmem-analysis supplement`), bootstrap seed {seed}, "
              f"{n_boot} resamples.", "",
              "LaTeX tables are booktabs `table` environments: add `\\usepackage{booktabs}` to the preamble and",
              "`\\input{table15.tex}`. Figures are vector PDFs. `voxmem_numbers.csv` holds every number of every",
              "artifact in the long format `artifact,row,column,value` (labels as printed in the paper).", "",
              "| file | content |", "| --- | --- |"]
    lines += [f"| `{f}` | {t} |" for f, t in entries]
    if left_out:
        lines += ["", "Figures of the workbook not part of the paper's material (not included): "
                  + ", ".join(f"`{s}`" for s in left_out) + "."]
    if errors:
        lines += ["", "Artifacts that could not be computed from this release:"]
        lines += [f"- `{a}`: {e.splitlines()[0]}" for a, e in errors.items()]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- build
def build_supplement(data_dir, out_dir, *, from_dir=None, seed: int = 0, n_boot: int = 10_000,
                     jobs: int | None = None, progress: bool | None = None, stream=None) -> SupplementResult:
    """Write ``out_dir/voxmem_supplement/`` and ``out_dir/voxmem_supplement.zip``.

    Parameters
    ----------
    data_dir : path
        Release directory.
    out_dir : path
        Where the folder and the zip go.
    from_dir : path, optional
        Output folder of an earlier ``voxmem-analysis reproduce`` run on the same data, seed and
        ``n_boot``, whose ``figures/*.pdf`` are taken.  Without it the notebooks are run into a
        temporary folder first.
    seed, n_boot, jobs
        As for ``reproduce``.
    """
    from voxmem_analysis import artifacts
    from voxmem_analysis.io.release import load_release
    from voxmem_analysis.output import SYNTHETIC_LABEL, table_to_latex
    from voxmem_analysis.reproduce.published import published

    data, out = Path(data_dir), Path(out_dir)
    release = load_release(data)
    folder = out / FOLDER
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    pub = published()
    entries: list[tuple[str, str]] = []
    errors: dict[str, str] = {}
    longs = []
    for name in artifacts.names():
        art = artifacts.get(name)
        try:
            table = art(release, seed=seed, n_boot=n_boot)
        except Exception as exc:  # noqa: BLE001 - reported in README and exit code
            errors[name] = f"{type(exc).__name__}: {exc}"
            continue
        longs.append(artifacts.to_long(table, name))
        if re.fullmatch(r"table\d+", name):
            caption = f"{art.title} [{SYNTHETIC_LABEL}]" if release.synthetic else art.title
            tex = table_to_latex(format_table(table, name, pub), caption=caption, label=f"tab:{name}")
            (folder / f"{name}.tex").write_text(tex, encoding="utf-8")
            entries.append((f"{name}.tex", art.title))
    import pandas as pd

    numbers = pd.concat(longs, ignore_index=True) if longs else pd.DataFrame(columns=["artifact", "row", "column", "value"])
    numbers.to_csv(folder / "voxmem_numbers.csv", index=False, float_format="%.6g", lineterminator="\n")
    entries.append(("voxmem_numbers.csv", f"every number of the {len(longs)} artifacts, long format"))

    result = SupplementResult(folder, out / f"{FOLDER}.zip", artifact_errors=errors)
    tmp = None
    if from_dir is None:
        from voxmem_analysis.reproduce.runner import run

        tmp = tempfile.mkdtemp(prefix="voxmem-supplement-")
        summary = run(data, tmp, jobs=jobs, seed=seed, n_boot=n_boot, progress=progress, reproduction=False,
                      report=False, stream=stream)
        result.reproduce_exit_code = summary.exit_code
        from_dir = tmp
    else:
        result.warnings += _check_from(Path(from_dir), data, seed, n_boot)
    try:
        pdfs = {p.stem: p for p in sorted((Path(from_dir) / "figures").glob("*.pdf"))}
        names = paper_figure_names(pdfs)
        titles = {n: artifacts.get(n).title for n in artifacts.names()}
        for stem, target in sorted(names.items(), key=lambda kv: kv[1]):
            shutil.copyfile(pdfs[stem], folder / f"{target}.pdf")
            key = re.sub(r"^figure(\d+)[a-z]?(?:_.*)?$", r"fig\1", target).split("_")[0]
            title = titles.get(key, stem)
            entries.append((f"{target}.pdf", title if target.startswith("figure") else f"figure of {title}"))
        result.left_out = sorted(set(pdfs) - set(names))
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    entries.sort(key=lambda e: _entry_order(e[0]))
    (folder / "README.md").write_text(_readme(release, data_dir=data, seed=seed, n_boot=n_boot, entries=entries,
                                              left_out=result.left_out, errors=errors), encoding="utf-8")
    write_zip(folder, result.zip_path)
    result.files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    return result


def _check_from(from_dir: Path, data: Path, seed: int, n_boot: int) -> list[str]:
    """Warn when the figures of ``from_dir`` were made from other data or settings."""
    import json

    try:
        run = json.loads((from_dir / "run.json").read_text())
    except (OSError, ValueError):
        return [f"{from_dir}: no run.json; cannot check which data its figures were made from"]
    out = []
    if Path(run.get("data_dir", "")).resolve() != data.resolve():
        out.append(f"{from_dir}: figures made from {run.get('data_dir')}, not {data}")
    if (run.get("seed"), run.get("n_boot")) != (seed, n_boot):
        out.append(f"{from_dir}: figures made with seed {run.get('seed')}, n_boot {run.get('n_boot')} "
                   f"(here: seed {seed}, n_boot {n_boot})")
    return out


def _entry_order(name: str):
    m = re.match(r"^(table|figure)(\d+)", name)
    if m:
        return (0 if m.group(1) == "table" else 1, int(m.group(2)), name)
    return (2, 0, name)
