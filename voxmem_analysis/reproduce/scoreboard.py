"""``reproduction.csv``: every number the paper prints, next to the number this code computes; and ``audit.csv``.

:func:`reproduction_from_files` joins the long-form numbers the notebooks wrote (``OUT/tables/NAME.long.csv``)
with the published table on ``artifact, row, column`` (what ``reproduce`` does); :func:`reproduction_table`
computes the artifacts from a loaded release instead.  Columns (:data:`COLUMNS`): ``artifact, row, column``
(the paper's labels), ``published``, ``reproduced`` (empty when not computed), ``delta``, ``kind``
(``calibrated``, ``emergent`` or ``derived``), ``within_tolerance`` (the published comparator: ``approx``
``|delta| <= tolerance``, ``lt`` ``reproduced < published``, ``le`` ``reproduced <= published + tolerance``),
``status`` (``within``, ``outside``, ``missing`` or ``paper_inconsistent``: outside tolerance where the paper
contradicts itself, :func:`table2_misprints`) and ``note``.  Rows in the published order; none is dropped.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from voxmem_analysis import artifacts
from voxmem_analysis.output import LONG_COLUMNS, read_long
from voxmem_analysis.reproduce.paper_audit import audit_published
from voxmem_analysis.reproduce import published as paper
from voxmem_analysis.reproduce.published import AMC_ARTIFACTS, normalize_label
from voxmem_analysis.writing import atomic_write

__all__ = ["COLUMNS", "STATUSES", "AXIS_TASKS", "N_TASKS", "reproduction_table", "reproduction_from_files",
           "long_from_files", "compute_long", "compare", "mark_paper_inconsistent", "table2_misprints",
           "summarize", "write_csv", "write_audit"]

COLUMNS = ("artifact", "row", "column", "published", "reproduced", "delta", "kind", "within_tolerance",
           "status", "note")
STATUSES = ("within", "outside", "missing", "paper_inconsistent")
_EPS = 1e-9
#: Tasks per axis of the AMC paper's Table 2 (its Table 1 swaps SC and VE; see CALIBRATION.md).
AXIS_TASKS = {"IM": 132, "IR": 120, "SC": 83, "VE": 117}
N_TASKS = sum(AXIS_TASKS.values())   # 452


def _norm(label) -> str:
    return "|".join(normalize_label(part) for part in str(label).split("|"))


def compute_long(release, names, *, seed: int = 0, n_boot: int = 10_000) -> tuple[pd.DataFrame, dict[str, str]]:
    """Long table ``artifact,row,column,value`` of the artifacts ``names``, and ``{name: error}`` of those that are
    not registered, need a part the release lacks, or raise (they contribute no rows)."""
    parts, errors = [], {}
    for name in dict.fromkeys(names):
        try:
            art = artifacts.get(name)
        except KeyError:
            errors[name] = "no such artifact is registered (voxmem-analysis table --list)"
            continue
        lacking = [n for n in art.needs if getattr(release, n, None) is None]
        if lacking:
            errors[name] = f"the release has no {', '.join(lacking)}"
            continue
        try:
            parts.append(artifacts.to_long(art(release, seed=seed, n_boot=n_boot), name))
        except Exception as exc:  # noqa: BLE001 - one broken artifact must not hide the others
            errors[name] = f"{type(exc).__name__}: {exc}"
    cols = list(LONG_COLUMNS)
    long = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=cols)
    return long[cols], errors


def _number(v):
    if v is None or isinstance(v, bool):
        return None if v is None else float(v)
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _within(comparator: str, published: float, reproduced: float | None, tolerance: float) -> bool:
    if reproduced is None or published is None:
        return False
    tol = 0.0 if tolerance is None or math.isnan(tolerance) else float(tolerance)
    if comparator == "approx":
        return abs(reproduced - published) <= tol + _EPS
    if comparator == "lt":
        return reproduced < published
    if comparator == "le":
        return reproduced <= published + tol + _EPS
    return False


def compare(published: pd.DataFrame, reproduced: pd.DataFrame) -> pd.DataFrame:
    """Join the published long table with a reproduced one (``artifact,row,column,value``; its labels
    normalised, :func:`~voxmem_analysis.reproduce.published.normalize_label`; a cell twice: the first value)."""
    lookup: dict[tuple[str, str, str], object] = {}
    for a, r, c, v in reproduced[list(LONG_COLUMNS)].itertuples(index=False):
        lookup.setdefault((str(a), _norm(r), _norm(c)), v)
    rows = []
    for rec in published.itertuples(index=False):
        pub, rep = _number(rec.value), _number(lookup.get((str(rec.artifact), str(rec.row), str(rec.column))))
        delta = (rep - pub) if (rep is not None and pub is not None) else None
        ok = _within(str(rec.comparator), pub, rep, _number(rec.tolerance) or 0.0)
        status = "within" if ok else ("missing" if rep is None else "outside")
        rows.append((rec.artifact, rec.row, rec.column, pub, rep, delta, rec.kind, ok, status, ""))
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    for col in ("published", "reproduced", "delta"):
        out[col] = out[col].astype(float)
    out["within_tolerance"] = out["within_tolerance"].astype(bool)
    return out


def mark_paper_inconsistent(table: pd.DataFrame, known) -> pd.DataFrame:
    """``table`` with the ``note`` of every row ``known`` names (``{(artifact, row, column): note}``), and the
    ``status`` of those reproduced outside tolerance set to ``paper_inconsistent``."""
    out = table.copy()
    keys = zip(out["artifact"].astype(str), out["row"].astype(str), out["column"].astype(str))
    for i, key in enumerate(keys):
        if key in known:
            out.iloc[i, out.columns.get_loc("note")] = str(known[key])
            if out["status"].iat[i] == "outside":
                out.iloc[i, out.columns.get_loc("status")] = "paper_inconsistent"
    out.attrs.update(table.attrs)
    return out


def _count(value: float, n: int) -> int | None:
    """The integer ``k`` with ``100 k / n`` printed as ``value`` (2 decimals), or None."""
    k = round(value * n / 100)
    return k if abs(100 * k / n - value) <= 0.005 + 1e-9 else None


def table2_misprints(pub: pd.DataFrame | None = None) -> dict[tuple[str, str, str], str]:
    """``{(artifact, row, column): note}`` of every AMC Table 2 APR cell no integer count over its tasks gives (a
    misprint: no release reproduces it), with the count the overall APR leaves after the other axes (IR 65.283
    printed, 79/120 = 65.83).  ``pub``: the published long table (default: the AMC paper's)."""
    pub = paper.published(benchmark="amc") if pub is None else pub
    t2 = pub[pub["artifact"] == "amc_table2"].pivot(index="row", columns="column", values="value")
    out: dict[tuple[str, str, str], str] = {}
    for row, r in t2.iterrows():
        for col, n in (("APR", N_TASKS), *AXIS_TASKS.items()):
            if col not in r or pd.isna(r[col]) or _count(float(r[col]), n) is not None:
                continue
            note = f"known paper inconsistency: no count over {n} tasks gives {r[col]:g}"
            total = _count(float(r["APR"]), N_TASKS) if col != "APR" else None
            others = [_count(float(r[a]), AXIS_TASKS[a]) for a in AXIS_TASKS if a != col]
            if total is not None and None not in others:
                k = total - sum(others)
                note += (f"; the overall APR ({total}/{N_TASKS}) minus the other axes leaves "
                         f"{k}/{n} = {100 * k / n:.2f} (a misprint; see data/synthetic-amc/CALIBRATION.md)")
            out[("amc_table2", str(row), str(col))] = note
    return out


def reproduction_table(release, published: pd.DataFrame | None = None, *, seed: int = 0,
                       n_boot: int = 10_000) -> pd.DataFrame:
    """One row per published number (default: the paper of the release's ``benchmark``) with the value computed
    from ``release`` (:func:`compute_long`; ``seed``, ``n_boot`` for every artifact): :data:`COLUMNS`, and
    ``attrs["artifact_errors"]`` ``{artifact: why it was not computed}``."""
    if published is None:
        published = paper.published(benchmark=getattr(release, "benchmark", "voxmem"))
    long, errors = compute_long(release, published["artifact"].tolist(), seed=seed, n_boot=n_boot)
    out = compare(published, long)
    out.attrs["artifact_errors"] = errors
    return out


def long_from_files(out_dir, names) -> tuple[pd.DataFrame, dict[str, str]]:
    """``artifact,row,column,value`` of the artifacts ``names`` as the notebooks wrote them
    (``OUT/tables/NAME.long.csv``), and ``{name: why}`` for each that no notebook wrote."""
    rows, errors = [], {}
    for name in dict.fromkeys(names):
        path = Path(out_dir) / "tables" / f"{name}.long.csv"
        if not path.is_file():
            errors[name] = f"no notebook wrote tables/{name}.long.csv (see the notebooks' status)"
            continue
        rows += [r for r in read_long(path) if r[0] == name]
    return pd.DataFrame(rows, columns=list(LONG_COLUMNS)), errors


def reproduction_from_files(out_dir, *, benchmark: str | None = None, published: pd.DataFrame | None = None,
                            with_amc: bool | None = None) -> pd.DataFrame:
    """:func:`reproduction_table` from the numbers the notebooks wrote into ``out_dir``: the AMC paper's rows only
    for ``benchmark="audio-multichallenge"``, else the VoxMem paper's, then the AMC paper's when ``with_amc``
    (default: when the AMC notebook wrote its tables, as it does on the paper's release); misprints marked."""
    amc_only = benchmark in ("audio-multichallenge", "amc")
    if with_amc is None:
        with_amc = any((Path(out_dir) / "tables" / f"{a}.long.csv").is_file() for a in AMC_ARTIFACTS)
    if published is None:
        parts = [] if amc_only else [paper.published(benchmark="voxmem")]
        if amc_only or with_amc:
            parts.append(paper.published(benchmark="amc"))
        published = pd.concat(parts, ignore_index=True)
    long, errors = long_from_files(out_dir, published["artifact"].tolist())
    out = mark_paper_inconsistent(compare(published, long), table2_misprints())
    out.attrs["artifact_errors"] = errors
    return out


def _write_frame(frame: pd.DataFrame, path) -> Path:
    """``frame`` as deterministic CSV text (``%.6g`` floats, ``\\n`` line ends), whole or not at all."""
    return atomic_write(path, lambda tmp: frame.to_csv(tmp, index=False, float_format="%.6g", lineterminator="\n"))


def write_audit(path) -> dict:
    """Write ``audit.csv`` (the paper's own consistency checks, :func:`audit_published`); its counts."""
    audit = audit_published()
    _write_frame(audit, path)
    holds = audit["holds"].astype(str).str.lower().isin(["true", "1"]) if "holds" in audit else None
    return {"identities": int(len(audit)), "hold": int(holds.sum()) if holds is not None else None,
            "fail": int((~holds).sum()) if holds is not None else None}


def write_csv(table: pd.DataFrame, path) -> Path:
    """Write ``reproduction.csv``."""
    return _write_frame(table.loc[:, list(COLUMNS)], path)


def _counts(table: pd.DataFrame, rows) -> dict:
    missing, within = table["reproduced"].isna() & rows, table["within_tolerance"].astype(bool) & rows
    inconsistent = (table["status"] if "status" in table else pd.Series("", index=table.index)).eq(
        "paper_inconsistent") & rows
    return {"numbers": int(rows.sum()), "within": int(within.sum()),
            "outside": int((rows & ~within & ~missing & ~inconsistent).sum()), "missing": int(missing.sum()),
            "paper_inconsistent": int(inconsistent.sum())}


def summarize(table: pd.DataFrame) -> dict:
    """Counts for the run summary and the report: ``numbers, within, outside`` (known paper inconsistencies
    aside), ``missing, paper_inconsistent`` (with ``inconsistent_notes``), ``by_benchmark`` (``voxmem``,
    ``amc``: the same counts), ``missing_artifacts`` ``{artifact: count}``, ``artifact_errors``, ``by_kind``
    ``{kind: {numbers, within}}`` and ``by_artifact`` ``{artifact: {numbers, within, missing}}``."""
    everything = pd.Series(True, index=table.index)
    missing = table["reproduced"].isna()
    inconsistent = table["status"].eq("paper_inconsistent") if "status" in table else ~everything
    bench = table["artifact"].astype(str).str.startswith("amc_").map({True: "amc", False: "voxmem"})
    return {
        **_counts(table, everything),
        "inconsistent_notes": [f"{r.artifact} {r.row} / {r.column}: {r.note}"
                               for r in table[inconsistent].itertuples(index=False)],
        "by_benchmark": {b: _counts(table, bench.eq(b)) for b in ("voxmem", "amc") if bench.eq(b).any()},
        "missing_artifacts": {a: int(n) for a, n in table.loc[missing, "artifact"].value_counts(sort=False).items()},
        "artifact_errors": dict(table.attrs.get("artifact_errors", {})),
        "by_kind": {k: {"numbers": int(len(g)), "within": int(g["within_tolerance"].sum())}
                    for k, g in table.groupby("kind", sort=True)},
        "by_artifact": {a: {"numbers": int(len(g)), "within": int(g["within_tolerance"].sum()),
                            "missing": int(g["reproduced"].isna().sum())} for a, g in table.groupby("artifact", sort=False)},
    }
