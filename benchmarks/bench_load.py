"""Benchmark: load a release from its JSON-lines files, next to the polars floor.

For each scale (1x, 4x, 10x, 30x the synthetic release: every prediction, judge2 and ablation
file copied once per replica with the model names suffixed, so the predictions never collide),
runs side by side, alternating, ``--repeat`` times each:

* floor: a fresh interpreter that decompresses every prediction file the loader reads and reads
  each with ``polars.read_ndjson``, keeping the frames (``floor_read.py`` below);
* ``voxmem-analysis export-frame --no-cache`` (the real path: parse, validate, score, write Parquet);
* ``voxmem-analysis export-frame`` with a warm parsed-release cache (from the 2nd repeat on).

Prints medians of wall time, CPU time (user + system: less sensitive than wall time to other
jobs on a shared machine) and peak resident memory (``/usr/bin/time``, or ``resource.getrusage``
of the children when ``/usr/bin/time`` is missing) and the ratios to the floor.  Not a test: it prints numbers.  Replicated releases are built once under
``benchmarks/.cache/`` (about 130 MB at 30x).

    .venv/bin/python benchmarks/bench_load.py [--scales 1,4,10,30] [--repeat 3]
    .venv/bin/python benchmarks/bench_load.py --parquet-rows 10000000   # the old 10M-row Parquet table
"""
from __future__ import annotations

import argparse
import gzip
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CACHE = REPO / "benchmarks" / ".cache"
SYNTHETIC = REPO / "data" / "synthetic"
BIN = Path(sys.executable).parent
FLOOR = '''
import gzip, io, pathlib, sys
import polars as pl
root = pathlib.Path(sys.argv[1])
frames = []
for sub in ("predictions", "judge2", "ablation"):
    for p in sorted((root / sub).rglob("*.jsonl*")):
        raw = p.read_bytes()
        if p.suffix == ".gz":
            raw = gzip.decompress(raw)
        frames.append(pl.read_ndjson(io.BytesIO(raw)))
print(sum(f.height for f in frames))
'''
_MODEL = re.compile(rb'("model": ")([^"]*)(")')


def replicate(n: int) -> Path:
    """The synthetic release with every prediction file present ``n`` times (models renamed)."""
    if n == 1:
        return SYNTHETIC
    out = CACHE / f"release_x{n}"
    if (out / ".complete").exists():
        return out
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    for name in ("items.csv", "models.csv", "release.json"):
        shutil.copy(SYNTHETIC / name, out / name)
    t = time.perf_counter()
    for sub in ("predictions", "judge2", "ablation"):
        for path in sorted((SYNTHETIC / sub).rglob("*.jsonl*")):
            raw = path.read_bytes()
            raw = gzip.decompress(raw) if path.suffix == ".gz" else raw
            rel = path.relative_to(SYNTHETIC / sub)
            for k in range(n):
                text = raw if k == 0 else _MODEL.sub(lambda m: m.group(1) + m.group(2) + f" r{k}".encode() + m.group(3), raw)
                target = out / sub / (f"{rel.parts[0]}" if sub == "ablation" else f"r{k}") / \
                    (f"r{k}_" + "_".join(rel.parts[1:]) if sub == "ablation" else rel.as_posix().replace("/", "_"))
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(gzip.compress(text, compresslevel=1, mtime=0) if path.suffix == ".gz" else text)
    (out / ".complete").write_text("")
    print(f"built {out} in {time.perf_counter() - t:.0f} s", flush=True)
    return out


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MiB) and CPU seconds (user + system) of one command."""
    gnu_time = shutil.which("time", path="/usr/bin")
    with tempfile.NamedTemporaryFile("r", suffix=".time") as fh:
        full = [gnu_time, "-f", "%e %M %U %S", "-o", fh.name, *cmd] if gnu_time else cmd
        t = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run(full, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wall = time.perf_counter() - t
        if done.returncode:
            raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
        if gnu_time:
            _, kb, user, system = fh.read().split()[-4:]
            return wall, int(kb) / 1024, float(user) + float(system)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, max(before.ru_maxrss, after.ru_maxrss) / 1024, cpu


def predictions(root: Path) -> int:
    n = 0
    for sub in ("predictions", "judge2", "ablation"):
        for p in (root / sub).rglob("*.jsonl*"):
            raw = p.read_bytes()
            n += (gzip.decompress(raw) if p.suffix == ".gz" else raw).count(b"\n")
    return n


def bench_scale(n: int, repeat: int, work: Path) -> dict:
    root = replicate(n)
    env = dict(os.environ, VOXMEM_CACHE_DIR=str(work / f"cache_x{n}"))
    floor_py = work / "floor_read.py"
    floor_py.write_text(FLOOR)
    out = work / "frame.parquet"
    cli = [str(BIN / "voxmem-analysis"), "export-frame", "--data", str(root), "--out", str(out)]
    runs: dict[str, list[tuple[float, float, float]]] = {"floor": [], "export": [], "cached": []}
    for i in range(repeat):
        runs["floor"].append(timed([sys.executable, str(floor_py), str(root)], env))
        runs["export"].append(timed(cli + ["--no-cache"], env))
        if i == 0:
            timed(cli, env)   # fills the cache
        runs["cached"].append(timed(cli, env))
    med = {k: tuple(statistics.median(r[i] for r in v) for i in range(3)) for k, v in runs.items()}
    return {"scale": n, "predictions": predictions(root), **med}


def report(rows: list[dict]) -> None:
    print(f"\n{'scale':>5} {'predictions':>11} | {'floor s':>7} {'cpu s':>6} {'MiB':>6} | {'export s':>8} {'cpu s':>6} "
          f"{'MiB':>6} {'x floor':>7} {'cpu x':>6} {'mem x':>6} | {'cached s':>8} {'x floor':>7}")
    for r in rows:
        (fw, fm, fc), (ew, em, ec), (cw, _, _) = r["floor"], r["export"], r["cached"]
        print(f"{r['scale']:>4}x {r['predictions']:>11,} | {fw:>7.2f} {fc:>6.2f} {fm:>6.0f} | {ew:>8.2f} {ec:>6.2f} "
              f"{em:>6.0f} {ew / fw:>7.2f} {ec / fc:>6.2f} {em / fm:>6.2f} | {cw:>8.2f} {cw / fw:>7.2f}")


def parquet_table(n_rows: int) -> None:
    """The former benchmark: a 10M-row verdict frame from Parquet, then the accuracy table."""
    import numpy as np
    import polars as pl

    from voxmem_analysis import taxonomy as tx
    from voxmem_analysis.analysis.accuracy import accuracy_table

    path = CACHE / f"frame_{n_rows}.parquet"
    if not path.exists():
        rng = np.random.default_rng(0)
        st = np.array(["graded", "ungraded", "failed", "provider_rejected"])[rng.choice(4, n_rows, p=[0.97, 0.01, 0.015, 0.005])]
        verdict = rng.random(n_rows) < 0.3
        CACHE.mkdir(parents=True, exist_ok=True)
        pl.DataFrame({
            "model": np.array([f"model-{i:03d}" for i in range(250)])[rng.integers(0, 250, n_rows)],
            "question_id": pl.Series(rng.integers(0, 799, n_rows)).cast(pl.Utf8),
            "budget": pl.Series(np.array(tx.BUDGETS)[rng.integers(0, 4, n_rows)]).cast(pl.Enum(list(tx.BUDGETS))),
            "evidence_type": np.array(tx.EVIDENCE_TYPES)[rng.integers(0, 4, n_rows)],
            "operation": np.array(tx.OPERATIONS)[rng.integers(0, 4, n_rows)],
            "status": st, "verdict": verdict, "correct": verdict & (st == "graded"), "scored": st != "provider_rejected",
        }).write_parquet(path)
    t0 = time.perf_counter()
    frame = pl.read_parquet(path)
    t1 = time.perf_counter()
    table = accuracy_table(frame, by=["model", "evidence_type", "budget"])
    t2 = time.perf_counter()
    print(f"parquet: {frame.height:,} rows, {table.shape[0]:,} cells; load {t1 - t0:.2f} s, accuracy table {t2 - t1:.2f} s, "
          f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="1,4,10,30", help="comma-separated replication factors (default 1,4,10,30)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per command and scale; medians are printed")
    ap.add_argument("--parquet-rows", type=int, default=0, help="also time the N-row Parquet accuracy table")
    args = ap.parse_args()
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; medians of {args.repeat} alternating runs")
    rows = []
    with tempfile.TemporaryDirectory(prefix="voxmem-bench-") as work:
        for n in (int(x) for x in args.scales.split(",")):
            rows.append(bench_scale(n, args.repeat, Path(work)))
            report(rows[-1:])
    print("\nall scales (x floor = wall time / floor's; mem x = peak RSS / floor's):")
    report(rows)
    if args.parquet_rows:
        parquet_table(args.parquet_rows)


if __name__ == "__main__":
    main()
