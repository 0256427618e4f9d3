"""Audio MultiChallenge (AMC) rows of the reproduction scoreboard.

The AMC paper's 214 printed numbers (``published(benchmark="amc")``, artifacts ``amc_*``) are
compared with the numbers computed from an AMC release by the same code and tolerance rules as
VoxMem's (:mod:`voxmem_analysis.reproduce.scoreboard`).  Two callers:

* the paper's own release (``data/synthetic``, reproduction mode): ``reproduction.csv`` holds the
  436 VoxMem rows *and* the 214 AMC rows that notebook 70 computed from the bundled SYNTHETIC AMC
  release ``data/synthetic-amc`` (read from its long-form tables,
  :func:`voxmem_analysis.reproduce.scoreboard.reproduction_from_files`; :func:`amc_scoreboard` computes
  the same rows from a loaded release);
* an AMC release (``reproduce --data DIR`` with ``"benchmark": "audio-multichallenge"``): only the
  214 AMC rows.

Known paper inconsistencies
---------------------------
:func:`table2_misprints` finds the Table 2 cells no release can reproduce: every APR of AMC
Table 2 is an integer count over 452 tasks (overall) or over the axis (IM 132, IR 120, SC 83,
VE 117), so a printed cell that no count gives is a misprint.  Its consistent value is what the
overall count leaves after the other axes (65.283 printed; 247/452 overall minus IM, SC, VE
leaves 79/120 = 65.83).  Such a row gets ``status = paper_inconsistent`` with that note
(:func:`voxmem_analysis.reproduce.scoreboard.mark_paper_inconsistent`), is counted apart from the
numbers outside tolerance, and does not fail the run.  ``voxmem_analysis.synth.amc.inconsistencies``
lists the same misprint among the paper's other inconsistencies (``CALIBRATION.md``).
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

__all__ = ["AXIS_TASKS", "N_TASKS", "table2_misprints", "amc_scoreboard", "release_info"]

#: Tasks per axis of the AMC paper's Table 2 (its Table 1 swaps SC and VE; see CALIBRATION.md).
AXIS_TASKS = {"IM": 132, "IR": 120, "SC": 83, "VE": 117}
N_TASKS = sum(AXIS_TASKS.values())   # 452


def _count(value: float, n: int) -> int | None:
    """The integer ``k`` with ``100 k / n`` printed as ``value`` (2 decimals), or ``None``."""
    k = round(value * n / 100)
    return k if abs(100 * k / n - value) <= 0.005 + 1e-9 else None


def table2_misprints(pub: pd.DataFrame | None = None) -> dict[tuple[str, str, str], str]:
    """``{(artifact, row, column): note}`` for every AMC Table 2 APR cell that is no integer count.

    ``pub``: the published long table (default ``published(benchmark="amc")``).
    """
    if pub is None:
        from voxmem_analysis.reproduce.published import published

        pub = published(benchmark="amc")
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


def release_info(release) -> dict:
    """What run.json records about an AMC release (``release`` of :func:`voxmem_analysis.io.load_amc`)."""
    return {"path": str(Path(release.path).resolve()), "name": release.name,
            "synthetic": bool(release.synthetic), "label": release.label(),
            "description": str(release.meta.get("description") or ""),
            "predictions": int(len(release.verdicts)), "models": len(release.systems()),
            "stats": dict(release.stats), "model_names": [f"{m}|{o}" for m, o in release.systems()],
            "benchmark": "audio-multichallenge"}


def amc_scoreboard(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """The 214 AMC rows of ``reproduction.csv`` for an AMC release (a path or a loaded release).

    A path is loaded leniently (its problems are the release's validation, reported elsewhere).
    Known misprints of the paper are marked ``paper_inconsistent`` (:func:`table2_misprints`).
    """
    from voxmem_analysis.reproduce.published import published
    from voxmem_analysis.reproduce.scoreboard import mark_paper_inconsistent, reproduction_table

    if isinstance(release, (str, Path)):
        from voxmem_analysis.io import load_amc

        release = load_amc(release, strict=False)
    pub = published(benchmark="amc")
    table = reproduction_table(release, pub, seed=seed, n_boot=n_boot)
    return mark_paper_inconsistent(table, table2_misprints(pub))
