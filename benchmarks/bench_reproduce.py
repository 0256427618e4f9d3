"""Wall time of the whole reproduction (what `make reproduce` runs), measured from outside.

    .venv/bin/python benchmarks/bench_reproduce.py [--repeat 2] [--jobs 2] [--out DIR] [--data DIR]

Runs ``voxmem-analysis reproduce --data data/synthetic --out OUT --jobs 2`` as a subprocess
(the installed entry point, as `make reproduce` does; OUT is a temporary folder unless
``--out`` is given) and prints, per repetition: the wall time, the CPU time of the whole
process tree (user + system, from ``getrusage(RUSAGE_CHILDREN)``: the runner, its workers and
every kernel), the machine's load average before and after (other people's jobs on the same
cores slow it down), and each notebook's time from ``OUT/run.json``.  Also the start-up time
of the command line (``voxmem-analysis --help``).

The target is under 60 s of wall time on a 2-core machine.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _cli() -> str:
    exe = BIN / "voxmem-analysis"
    return str(exe) if exe.exists() else "voxmem-analysis"


def startup_seconds(n: int = 3) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([_cli(), "--help"], check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    return min(times)


def one_run(data: Path, out: Path, jobs: int, extra: list[str]) -> dict:
    load0 = os.getloadavg()[0]
    cpu0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run([_cli(), "reproduce", "--data", str(data), "--out", str(out), "--jobs", str(jobs),
                           "--no-progress", *extra], capture_output=True, text=True, cwd=REPO)
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    run = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else {}
    return {"wall": wall, "cpu": cpu, "rc": proc.returncode, "load_before": load0, "load_after": os.getloadavg()[0],
            "run": run, "stdout": proc.stdout, "stderr": proc.stderr}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO / "data" / "synthetic"))
    ap.add_argument("--out", default=None, help="output folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("extra", nargs="*", help="more arguments for `reproduce` (after --)")
    args = ap.parse_args(argv)

    print(f"machine: {os.cpu_count()} cores; command-line start-up (voxmem-analysis --help): "
          f"{startup_seconds():.2f} s")
    walls = []
    for k in range(args.repeat):
        tmp = None
        out = Path(args.out) if args.out else Path(tmp := tempfile.mkdtemp(prefix="bench-reproduce-"))
        try:
            r = one_run(Path(args.data), out, args.jobs, args.extra)
        finally:
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)
        walls.append(r["wall"])
        run = r["run"]
        print(f"\nrun {k + 1}: wall {r['wall']:.1f} s, CPU (whole process tree) {r['cpu']:.1f} s, exit code {r['rc']}, "
              f"load average {r['load_before']:.1f} -> {r['load_after']:.1f}")
        for nb in run.get("notebooks", []):
            print(f"  {nb['name']:26s} {nb['status']:8s} {nb['seconds']:6.1f} s")
        rp = run.get("reproduction") or {}
        if rp.get("seconds") is not None:
            print(f"  {'reproduction.csv + audit':26s} {'ok' if 'error' not in rp else 'failed':8s} {rp['seconds']:6.1f} s")
        if r["rc"] not in (0, 1):
            print(r["stderr"][-2000:])
    print(f"\nwall time: min {min(walls):.1f} s, median {statistics.median(walls):.1f} s over {len(walls)} run(s) "
          f"(target < 60 s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
