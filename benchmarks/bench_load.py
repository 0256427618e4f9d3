"""Benchmark: build the model x evidence x budget accuracy table from a 10-million-row verdict frame.

Generates (once, cached under benchmarks/.cache/) a Parquet file of 10,000,000 predictions
with the tidy frame's columns, then times loading it and building the accuracy table with
the package's own code path (`voxmem_analysis.analysis.accuracy.accuracy_table`), and prints wall time
and peak resident memory.  Not a test: it prints numbers.

    .venv/bin/python benchmarks/bench_load.py [--rows 10000000]
"""
from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.accuracy import accuracy_table

CACHE = Path(__file__).resolve().parent / ".cache"


def make_frame(n_rows: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    n_models = 250
    models = np.array([f"model-{i:03d}" for i in range(n_models)])
    ev = np.array(tx.EVIDENCE_TYPES)
    ops = np.array(tx.OPERATIONS)
    budgets = np.array(tx.BUDGETS)
    status = np.array(["graded", "ungraded", "failed", "provider_rejected"])
    st = status[rng.choice(4, n_rows, p=[0.97, 0.01, 0.015, 0.005])]
    verdict = rng.random(n_rows) < 0.3
    q = rng.integers(0, 799, n_rows)
    return pl.DataFrame({
        "model": models[rng.integers(0, n_models, n_rows)],
        "question_id": [f"q_{i:05d}" for i in q] if n_rows <= 100_000 else pl.Series(q).cast(pl.Utf8),
        "budget": pl.Series(budgets[rng.integers(0, 4, n_rows)]).cast(pl.Enum(list(tx.BUDGETS))),
        "evidence_type": ev[rng.integers(0, 4, n_rows)],
        "operation": ops[rng.integers(0, 4, n_rows)],
        "status": st,
        "verdict": verdict,
        "correct": verdict & (st == "graded"),
        "scored": st != "provider_rejected",
    })


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=10_000_000)
    args = ap.parse_args()
    CACHE.mkdir(exist_ok=True)
    path = CACHE / f"frame_{args.rows}.parquet"
    if not path.exists():
        t = time.perf_counter()
        make_frame(args.rows).write_parquet(path)
        print(f"generated {args.rows:,} rows in {time.perf_counter() - t:.1f} s -> {path} ({path.stat().st_size / 2**20:.0f} MiB)")
    t0 = time.perf_counter()
    frame = pl.read_parquet(path)
    t1 = time.perf_counter()
    table = accuracy_table(frame, by=["model", "evidence_type", "budget"])
    t2 = time.perf_counter()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rows: {frame.height:,}  cells: {table.shape[0]:,}")
    print(f"load parquet: {t1 - t0:.2f} s   accuracy table: {t2 - t1:.2f} s   total: {t2 - t0:.2f} s")
    print(f"peak RSS: {peak:,.0f} MiB")


if __name__ == "__main__":
    main()
