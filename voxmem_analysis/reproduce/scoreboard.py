"""``reproduction.csv``: every number the paper prints, next to the number this code computes.

:func:`reproduction_from_files` reads the long-form numbers the notebooks wrote
(``OUT/tables/NAME.long.csv``, :func:`voxmem_analysis.output.save_table`) and joins them with the
published table (:func:`voxmem_analysis.reproduce.published.published`) on ``artifact, row, column``:
what ``reproduce`` does, computing nothing again.  :func:`reproduction_table` computes the artifacts
from a loaded release instead (:func:`voxmem_analysis.artifacts.compute`; for a scoreboard without
running the notebooks, from Python).

Columns
-------
``artifact, row, column``
    The paper's labels (``data/paper/README.md``).
``published``
    The number as printed.
``reproduced``
    The number computed from the release; empty when the artifact failed or has no such cell.
``delta``
    ``reproduced - published``.
``kind``
    ``calibrated`` (the synthetic release is built to give it back), ``emergent`` (only comes
    out of the item-level construction) or ``derived`` (arithmetic of other printed numbers).
``within_tolerance``
    The published comparator applied with its tolerance: ``approx`` ``|delta| <= tolerance``;
    ``lt`` ``reproduced < published``; ``le`` ``reproduced <= published + tolerance``.  A
    published number without a reproduced counterpart is ``False``.
``status``
    ``within``, ``outside`` (reproduced, outside tolerance), ``missing`` (no reproduced value) or
    ``paper_inconsistent``: outside tolerance where the paper contradicts itself -- a known
    misprint listed by :func:`mark_paper_inconsistent` (e.g. AMC Table 2's IR 65.283, which no count
    over 120 tasks gives; 79/120 = 65.83).  Counted apart from ``outside`` by :func:`summarize`.
``note``
    Why a row is ``paper_inconsistent``; empty otherwise.

Rows come in the published table's order.  Nothing is dropped: a published number with no
reproduced value is kept (``reproduced`` empty) and counted by :func:`summarize`.
"""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

__all__ = ["COLUMNS", "STATUSES", "reproduction_table", "reproduction_from_files", "long_from_files", "compute_long",
           "compare", "mark_paper_inconsistent", "summarize", "write_csv", "write_audit"]

COLUMNS = ("artifact", "row", "column", "published", "reproduced", "delta", "kind", "within_tolerance",
           "status", "note")
STATUSES = ("within", "outside", "missing", "paper_inconsistent")
_EPS = 1e-9


def _norm(label) -> str:
    from voxmem_analysis.reproduce.published import normalize_label

    return "|".join(normalize_label(part) for part in str(label).split("|"))


def compute_long(release, names, *, seed: int = 0, n_boot: int = 10_000) -> tuple[pd.DataFrame, dict[str, str]]:
    """Long table ``artifact,row,column,value`` of the artifacts ``names``, and the errors of those that failed.

    An artifact that is not registered, needs a part the release lacks, or raises, is
    reported in the returned ``{name: message}`` and contributes no rows.
    """
    from voxmem_analysis import artifacts

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
            table = art(release, seed=seed, n_boot=n_boot)
            parts.append(artifacts.to_long(table, name))
        except Exception as exc:  # noqa: BLE001 - one broken artifact must not hide the others
            errors[name] = f"{type(exc).__name__}: {exc}"
    cols = ["artifact", "row", "column", "value"]
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
    """Join the published long table with a reproduced one (``artifact,row,column,value``).

    Labels of the reproduced table are normalised with :func:`voxmem_analysis.reproduce.published.normalize_label`
    (so ``Speaker`` meets ``Speaker Identity``); if a cell appears twice, the first value is used.
    """
    lookup: dict[tuple[str, str, str], object] = {}
    for a, r, c, v in reproduced[["artifact", "row", "column", "value"]].itertuples(index=False):
        lookup.setdefault((str(a), _norm(r), _norm(c)), v)
    rows = []
    for rec in published.itertuples(index=False):
        key = (str(rec.artifact), str(rec.row), str(rec.column))
        pub = _number(rec.value)
        raw = lookup.get(key)
        rep = _number(raw)
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
    """Set ``status`` to ``paper_inconsistent`` (and ``note``) on the rows ``known`` names.

    ``known`` maps ``(artifact, row, column)`` to the note explaining the paper's inconsistency.
    Only a row that is reproduced but outside tolerance is re-marked (``within_tolerance`` stays
    ``False``: the printed number is not reproduced); a known misprint that *is* reproduced, or
    has no reproduced value, keeps its status -- the note is still attached.
    """
    out = table.copy()
    keys = list(zip(out["artifact"].astype(str), out["row"].astype(str), out["column"].astype(str)))
    for i, key in enumerate(keys):
        if key in known:
            out.iloc[i, out.columns.get_loc("note")] = str(known[key])
            if out["status"].iat[i] == "outside":
                out.iloc[i, out.columns.get_loc("status")] = "paper_inconsistent"
    out.attrs.update(table.attrs)
    return out


def reproduction_table(release, published: pd.DataFrame | None = None, *, seed: int = 0,
                       n_boot: int = 10_000) -> pd.DataFrame:
    """One row per published number with the reproduced value (see the module docstring).

    Parameters
    ----------
    release : Release
        From :func:`voxmem_analysis.load_release`.
    published : DataFrame, optional
        The published long table (default :func:`voxmem_analysis.reproduce.published.published`).
    seed, n_boot : int
        Passed to every artifact (bootstrap intervals).

    Returns
    -------
    DataFrame
        Columns :data:`COLUMNS`.  ``attrs["artifact_errors"]`` maps each artifact that could not
        be computed to its error message.
    """
    if published is None:
        from voxmem_analysis.reproduce.published import published as _published

        published = _published(benchmark=getattr(release, "benchmark", "voxmem"))
    long, errors = compute_long(release, published["artifact"].tolist(), seed=seed, n_boot=n_boot)
    out = compare(published, long)
    out.attrs["artifact_errors"] = errors
    return out


def long_from_files(out_dir, names) -> tuple[pd.DataFrame, dict[str, str]]:
    """``artifact,row,column,value`` of the artifacts ``names`` as the notebooks wrote them
    (``OUT/tables/NAME.long.csv``), and ``{name: why}`` for each that no notebook wrote."""
    from voxmem_analysis.output import LONG_COLUMNS, read_long

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
    """One row per published number with the value the notebooks wrote into ``out_dir`` (see the module docstring).

    ``benchmark``: ``"audio-multichallenge"`` for an AMC release (the AMC paper's rows only); else the
    VoxMem paper's rows, followed by the AMC rows when ``with_amc`` (default: when the AMC notebook
    wrote its tables into ``out_dir``, as it does from the bundled synthetic AMC release on the paper's
    release).  The AMC paper's known misprints are marked ``paper_inconsistent``.
    ``attrs["artifact_errors"]`` maps each published artifact no notebook wrote to why.
    """
    from voxmem_analysis.reproduce.amc import table2_misprints
    from voxmem_analysis.reproduce.published import AMC_ARTIFACTS
    from voxmem_analysis.reproduce.published import published as _published

    amc_only = benchmark in ("audio-multichallenge", "amc")
    if with_amc is None:
        with_amc = any((Path(out_dir) / "tables" / f"{a}.long.csv").is_file() for a in AMC_ARTIFACTS)
    if published is None:
        parts = [] if amc_only else [_published(benchmark="voxmem")]
        if amc_only or with_amc:
            parts.append(_published(benchmark="amc"))
        published = pd.concat(parts, ignore_index=True)
    long, errors = long_from_files(out_dir, published["artifact"].tolist())
    out = mark_paper_inconsistent(compare(published, long), table2_misprints())
    out.attrs["artifact_errors"] = errors
    return out


def write_audit(path) -> dict:
    """Write ``audit.csv`` (the paper's own consistency checks, from its published numbers); its counts."""
    from voxmem_analysis.reproduce.paper_audit import audit_published

    from voxmem_analysis.writing import atomic_write

    audit = audit_published()
    atomic_write(path, lambda tmp: audit.to_csv(tmp, index=False, float_format="%.6g", lineterminator="\n"))
    holds = audit["holds"].astype(str).str.lower().isin(["true", "1"]) if "holds" in audit else None
    return {"identities": int(len(audit)), "hold": int(holds.sum()) if holds is not None else None,
            "fail": int((~holds).sum()) if holds is not None else None}


def summarize(table: pd.DataFrame) -> dict:
    """Counts for the run summary and the report.

    ``numbers``, ``within``, ``outside`` (reproduced but outside tolerance, known paper
    inconsistencies excepted), ``missing`` (no reproduced value), ``paper_inconsistent`` (outside
    tolerance where the paper contradicts itself) with their ``inconsistent_notes``,
    ``missing_artifacts`` ``{artifact: count}``, ``artifact_errors``,
    ``by_kind`` ``{kind: {"numbers", "within"}}``, ``by_artifact`` ``{artifact: {"numbers", "within", "missing"}}``,
    ``by_benchmark`` ``{"voxmem" | "amc": {"numbers", "within", "outside", "missing", "paper_inconsistent"}}``.
    """
    missing = table["reproduced"].isna()
    within = table["within_tolerance"].astype(bool)
    status = table["status"] if "status" in table else pd.Series("", index=table.index)
    inconsistent = status.eq("paper_inconsistent")
    by_kind = {k: {"numbers": int(len(g)), "within": int(g["within_tolerance"].sum())}
               for k, g in table.groupby("kind", sort=True)}
    by_artifact = {a: {"numbers": int(len(g)), "within": int(g["within_tolerance"].sum()),
                       "missing": int(g["reproduced"].isna().sum())}
                   for a, g in table.groupby("artifact", sort=False)}
    return {
        "numbers": int(len(table)), "within": int(within.sum()),
        "outside": int((~within & ~missing & ~inconsistent).sum()), "missing": int(missing.sum()),
        "paper_inconsistent": int(inconsistent.sum()),
        "inconsistent_notes": [f"{r.artifact} {r.row} / {r.column}: {r.note}"
                               for r in table[inconsistent].itertuples(index=False)],
        "by_benchmark": _by_benchmark(table, within, missing, inconsistent),
        "missing_artifacts": {a: int(n) for a, n in table.loc[missing, "artifact"].value_counts(sort=False).items()},
        "artifact_errors": dict(table.attrs.get("artifact_errors", {})),
        "by_kind": by_kind, "by_artifact": by_artifact,
    }


def _by_benchmark(table, within, missing, inconsistent) -> dict:
    """Counts per benchmark (``amc`` for the ``amc_*`` artifacts, else ``voxmem``), in that order."""
    bench = table["artifact"].astype(str).str.startswith("amc_").map({True: "amc", False: "voxmem"})
    out = {}
    for b in ("voxmem", "amc"):
        m = bench.eq(b)
        if m.any():
            out[b] = {"numbers": int(m.sum()), "within": int((within & m).sum()),
                      "outside": int((~within & ~missing & ~inconsistent & m).sum()),
                      "missing": int((missing & m).sum()), "paper_inconsistent": int((inconsistent & m).sum())}
    return out


def write_csv(table: pd.DataFrame, path) -> Path:
    """Write ``reproduction.csv`` (deterministic text: ``%.6g`` floats, ``\\n`` line ends)."""
    from voxmem_analysis.writing import atomic_write

    cols = table.loc[:, list(COLUMNS)]
    return atomic_write(path, lambda tmp: cols.to_csv(tmp, index=False, float_format="%.6g", lineterminator="\n"))
