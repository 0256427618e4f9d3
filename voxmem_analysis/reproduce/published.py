"""The papers' published numbers, one row per printed number (``voxmem_analysis/resources/published.csv``).

``data/paper/published.csv`` is the copy to edit (labels: ``data/paper/README.md``); ``python -m
voxmem_analysis.reproduce.published --sync`` copies it into the package (``tests/test_paper_numbers.py`` checks
they are the same).  Columns ``artifact,row,column,value,unit,comparator,tolerance,kind,source``;
:func:`published` adds ``decimals``, the digits printed after the point (``21.0`` -> 1).

>>> from voxmem_analysis.reproduce.published import lookup
>>> lookup("table15", "Mean all (10)", "Overall")
21.0
"""
from __future__ import annotations

import shutil
from functools import lru_cache
from importlib import resources
from pathlib import Path

import pandas as pd

from voxmem_analysis import taxonomy as tx

__all__ = [
    "COLUMNS", "ARTIFACTS", "UNITS", "COMPARATORS", "KINDS", "ROW_LABELS", "COLUMN_LABELS",
    "PACKAGE_CSV", "REPO_CSV", "AMC_ARTIFACTS", "BENCHMARKS", "published", "lookup", "normalize_label", "sync",
    "MODELS_64K", "PROPRIETARY_64K", "OPEN_64K",
]

COLUMNS: tuple[str, ...] = (
    "artifact", "row", "column", "value", "unit", "comparator", "tolerance", "kind", "source",
)
ARTIFACTS: tuple[str, ...] = (
    "table2", "table13", "judges", "table15", "table16", "table17", "table18",
    "fig5", "fig6", "fig7", "fig8", "fig10", "table20", "d5", "groups", "population",
)
UNITS: tuple[str, ...] = ("pct", "ratio", "count", "rho", "kappa", "p")
COMPARATORS: tuple[str, ...] = ("approx", "lt", "le")
KINDS: tuple[str, ...] = ("calibrated", "emergent", "derived")

#: Where the files live (``REPO_CSV`` only in a source checkout).
PACKAGE_CSV = "resources/published.csv"
REPO_CSV = Path(__file__).resolve().parents[2] / "data" / "paper" / "published.csv"

# --- label vocabulary ----------------------------------------------------------------
_EV = tuple(tx.EVIDENCE_LABELS[e] for e in tx.EVIDENCE_TYPES)
_OPS = tuple(tx.OPERATION_LABELS[o] for o in tx.OPERATIONS)
_SUB = tuple(tx.SUBTYPE_LABELS[s] for s in tx.SUBTYPES)
_CLS = tuple(tx.ATTRIBUTION_LABELS[c] for c in tx.ATTRIBUTION_CLASSES)
#: The paper's 64K model set (Table 15), proprietary then open-weight.
PROPRIETARY_64K = ("Gemini-3.1-Pro", "Gemini-3.8-Flash", "Gemini-2.5-Pro")
OPEN_64K = ("Ultravox-v0.6-Llama-3.1-8B", "Qwen3-Omni-30B-A3B", "Gemma-4-E4B-it", "Audio-Flamingo-Next",
            "Baichuan-Audio-7B", "Baichuan-Omni-1.5-7B", "FireRedAudio-9B")
MODELS_64K = PROPRIETARY_64K + OPEN_64K
_BEST_32K = ("Qwen3.8-Omni-Flash", "Gemini-3.1-Pro", "Gemini-3.8-Flash")
_T18_COLS = ("n", "8K", "64K", "drop", "drop_lo", "drop_hi", "retention", "retention_lo", "retention_hi")

#: Allowed row labels per artifact.
ROW_LABELS: dict[str, frozenset[str]] = {
    "table2": frozenset(_EV + ("All", "Audio-native")),
    "table13": frozenset(("All",) + _EV + _OPS),
    "judges": frozenset(("All", "Gemini family", "Other families", "Gemini favoritism", "AR")),
    "table15": frozenset(MODELS_64K + ("Mean proprietary (3)", "Mean open-weight (7)", "Mean all (10)", "n")),
    "table16": frozenset(MODELS_64K + ("n", "All", "Always abstain")),
    "table17": frozenset(tx.BUDGETS + ("AR items",)),
    "table18": frozenset(_EV + ("Overall",)),
    "fig5": frozenset(_OPS),
    "fig6": frozenset(_EV),
    "fig7": frozenset(_OPS[:3] + _EV[1:]),
    "fig8": frozenset(f"{b}|{o}" for b in tx.BUDGETS for o in _OPS),
    "fig10": frozenset(_SUB),
    "table20": frozenset(_SUB + _EV[1:] + ("Total",)),
    "d5": frozenset(("retention", "change", "cells")),
    "groups": frozenset(
        [f"{b}|{g}" for b in tx.BUDGETS for g in ("Proprietary", "Open-weight")]
        + [f"32K|{m}" for m in _BEST_32K] + ["8K|Top-3 spread"]),
    "population": frozenset((
        "Answerable audio-native items", "Systems", "Attempts", "Incorrect", "Refusals", "Empty",
        "Truncated", "Attributed", "Not attributable", "Operation", "Wrong time point")),
}
#: Allowed column labels per artifact.
COLUMN_LABELS: dict[str, frozenset[str]] = {
    "table2": frozenset(("n", "Full Audio", "Transcript Only", "Δ")),
    "table13": frozenset(("n", "Gemini-3.7-Flash", "GPT-5.6-Luna", "Δ (pp)", "Agreement", "κ")),
    "judges": frozenset(("n", "Agreement", "κ", "Spearman rho", "Mean abs diff (pp)", "Δ (pp)",
                         "Second judge only", "Capability refusals")),
    "table15": frozenset(_EV + ("Overall",)),
    "table16": frozenset(("Answerable", "AR", "Spearman rho", "Overall")),
    "table17": frozenset(("Models",) + _EV + _OPS[:3]),
    "table18": frozenset(_T18_COLS),
    "fig5": frozenset(_EV + tuple(f"{e} n" for e in _EV)),
    "fig6": frozenset(tx.BUDGETS),
    "fig7": frozenset(_CLS),
    "fig8": frozenset(_EV),
    "fig10": frozenset(_CLS),
    "table20": frozenset(_CLS + ("Total", "Cells")),
    "d5": frozenset(("rho", "p", "n")),
    "groups": frozenset(_EV + ("Overall",)),
    "population": frozenset(("n", "pct")),
}

# Spelling variants accepted by lookup() (the CSV itself uses only the canonical labels).
_ALIASES = {
    "delta": "Δ", "Δ": "Δ", "delta (pp)": "Δ (pp)", "kappa": "κ",
    "all items": "All", "ie (answerable)": "IE", "msr (answerable)": "MSR",
    "tet (answerable)": "TET",
    "speech sem.": "Speech Semantics", "sem.": "Speech Semantics", "speaker": "Speaker Identity",
    "spk.": "Speaker Identity", "paraling.": "Paralinguistic Cues", "para.": "Paralinguistic Cues",
    "paralinguistic": "Paralinguistic Cues", "environ.": "Environmental Sound",
    "env.": "Environmental Sound", "environmental": "Environmental Sound",
}


def normalize_label(label: str) -> str:
    """Map a spelling variant (``'Speaker'``, ``'Environ.'``, ``'kappa'``) to the CSV label."""
    s = str(label).strip()
    return _ALIASES.get(s.lower(), _ALIASES.get(s, s))


def _decimals(text: str) -> int:
    text = text.strip()
    return len(text.split(".", 1)[1]) if "." in text else 0


def _read(source) -> pd.DataFrame:
    df = pd.read_csv(source, dtype=str, keep_default_na=False, encoding="utf-8")
    if tuple(df.columns) != COLUMNS:
        raise ValueError(f"published.csv: expected columns {COLUMNS}, got {tuple(df.columns)}")
    df["decimals"] = df["value"].map(_decimals).astype(int)
    df["value"] = df["value"].astype(float)
    df["tolerance"] = df["tolerance"].astype(float)
    return df


#: Artifacts of the Audio MultiChallenge paper (prefix ``amc_``): ``published(benchmark="amc")`` (or ``"all"``).
AMC_ARTIFACTS: tuple[str, ...] = ("amc_table2", "amc_table3", "amc_table4", "amc_table5")
BENCHMARKS: tuple[str, ...] = ("voxmem", "amc", "all")


@lru_cache(maxsize=4)
def _cached(path: str | None) -> pd.DataFrame:
    if path is not None:
        return _read(path)
    with resources.files("voxmem_analysis").joinpath(PACKAGE_CSV).open("r", encoding="utf-8") as fh:
        return _read(fh)


def published(path: str | Path | None = None, *, benchmark: str = "voxmem") -> pd.DataFrame:
    """The published numbers of ``benchmark`` (``voxmem``, ``amc`` or ``all``) as a fresh DataFrame: the CSV's
    columns (``value``, ``tolerance`` as floats) and ``decimals``.  ``path``: another file with those columns."""
    if benchmark not in BENCHMARKS:
        raise ValueError(f"benchmark must be one of {BENCHMARKS}, got {benchmark!r}")
    df = _cached(None if path is None else str(path))
    if benchmark != "all":
        amc = df["artifact"].str.startswith("amc_")
        df = df[amc if benchmark == "amc" else ~amc].reset_index(drop=True)
    return df.copy()


def printed_decimals(name: str, published_df: pd.DataFrame | None = None) -> dict[str, int]:
    """``{column: decimals}`` the paper prints in each column of artifact ``name`` it publishes (the most frequent,
    the larger on a tie: a misprinted cell does not set its column's precision)."""
    df = published(benchmark="all") if published_df is None else published_df
    pub = df[df["artifact"] == name]
    out = {}
    for col, g in pub.groupby("column"):
        counts = g["decimals"].astype(int).value_counts()
        out[str(col)] = int(max(counts.index, key=lambda d: (counts[d], d)))
    return out


def lookup(artifact: str, row: str, column: str, *, published_df: pd.DataFrame | None = None) -> float:
    """The published value at ``(artifact, row, column)``; ``KeyError`` if the paper has none."""
    df = published() if published_df is None else published_df
    row_n, col_n = normalize_label(row), normalize_label(column)
    hit = df[(df["artifact"] == artifact) & (df["row"] == row_n) & (df["column"] == col_n)]
    if hit.empty:
        raise KeyError(f"no published number for ({artifact!r}, {row!r}, {column!r})")
    return float(hit["value"].iloc[0])


def sync(src: Path = REPO_CSV) -> Path:
    """Copy ``data/paper/published.csv`` into the package resources; return the target path."""
    target = Path(__file__).resolve().parents[1] / PACKAGE_CSV
    shutil.copyfile(src, target)
    _cached.cache_clear()
    return target


if __name__ == "__main__":  # pragma: no cover
    import sys
    if "--sync" in sys.argv:
        print(sync())
    else:
        df = published()
        print(df.groupby("artifact").size().to_string())
