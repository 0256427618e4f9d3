"""Benchmark: start-up and single-command times of the command line, next to a bare polars import.

Times, alternating, ``--repeat`` times each (medians printed, with the ratio to
``python -c "import polars"``):

* ``voxmem-analysis --help``, ``table --list`` and ``table table18 --help`` (no heavy library may be
  imported: the modules each imports are listed with ``-X importtime`` and the heavy ones named; the
  target for ``table NAME --help`` is within 2x the bare polars import);
* ``table table15 --data DIR`` and ``slice --data DIR``, cold (``--no-cache``: parse the
  release) and with the parsed-release cache warm.

Not a test: it prints numbers.

    .venv/bin/python benchmarks/bench_cli.py [--data data/synthetic] [--repeat 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
HEAVY = ("scipy", "matplotlib", "seaborn", "papermill", "statsmodels", "pandas", "pingouin")


def wall(cmd: list[str], env: dict) -> float:
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(cmd)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - t


def heavy_imports(args: list[str], env: dict) -> list[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "voxmem_analysis", *args], env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    mods = {line.rsplit("|", 1)[-1].strip().split(".")[0] for line in done.stderr.splitlines() if "|" in line}
    return sorted(mods & set(HEAVY))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(REPO / "data" / "synthetic"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cli = str(BIN / "voxmem-analysis")
    with tempfile.TemporaryDirectory(prefix="voxmem-bench-cli-") as cache:
        env = dict(os.environ, VOXMEM_CACHE_DIR=cache)
        cases = {
            "python -c 'import polars'": [sys.executable, "-c", "import polars"],
            "--help": [cli, "--help"],
            "table --list": [cli, "table", "--list"],
            "table table18 --help": [cli, "table", "table18", "--help"],
            "table table15 (cold)": [cli, "table", "table15", "--data", args.data, "--no-cache"],
            "table table15 (cached)": [cli, "table", "table15", "--data", args.data],
            "slice (cold)": [cli, "slice", "--data", args.data, "--no-cache"],
            "slice (cached)": [cli, "slice", "--data", args.data],
        }
        wall(cases["table table15 (cached)"], env)   # fill the cache
        times: dict[str, list[float]] = {k: [] for k in cases}
        for _ in range(args.repeat):
            for name, cmd in cases.items():
                times[name].append(wall(cmd, env))
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; medians of {args.repeat} alternating runs")
    floor = statistics.median(times["python -c 'import polars'"])
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:28s} {med:6.2f} s   {med / floor:5.1f} x import polars")
    for a in (["--help"], ["table", "--list"], ["table", "table18", "--help"]):
        print(f"heavy libraries imported by `voxmem-analysis {' '.join(a)}`: {', '.join(heavy_imports(a, env)) or 'none'}")


if __name__ == "__main__":
    main()
