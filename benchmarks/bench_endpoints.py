"""Benchmark: Table 18's paired bootstrap (``paired_change``) with this tree against another tree.

The interval endpoints' Monte-Carlo errors (Maritz-Jarrett with the lattice floor) and BCa's exact
tie decisions (``voxmem_analysis.stats.endpoints``, ``voxmem_analysis.stats.exact``) run on the
reproduce path: every Table 18 row computes the MC error of its four statistics' endpoints.  This
script times ``paired_change`` on the synthetic release -- percentile (as ``reproduce`` runs it) and
BCa -- and ``bootstrap_interval`` alone on 10,000 lattice replicates, once in this tree and once in the tree given by ``--against`` (e.g. an export of ``main``:
``git archive main voxmem_analysis | tar -x -C /tmp/main_tree``), each in its own process (alternating,
``--rounds`` times), and prints the fastest CPU times of the process (``time.process_time``: the
machine is shared, and CPU time is less sensitive to other load than wall time) and their ratios (this tree / the other; below 1 = faster here).

Usage::

    .venv/bin/python benchmarks/bench_endpoints.py --against /tmp/main_tree [--data data/synthetic]
        [--n-boot 10000] [--repeat 5] [--rounds 3]
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import json, statistics, sys, time
sys.path.insert(0, sys.argv[1])
from voxmem_analysis import load_release
from voxmem_analysis.analysis.scaling import paired_change
import voxmem_analysis
release = load_release(sys.argv[2])
n_boot, repeat = int(sys.argv[3]), int(sys.argv[4])
out = {"tree": voxmem_analysis.__file__}
for interval in ("percentile", "bca"):
    paired_change(release, n_boot=n_boot, seed=0, interval=interval)      # warm: imports, shared counts
    times = []
    for r in range(repeat):
        t0 = time.process_time()
        paired_change(release, n_boot=n_boot, seed=r + 1, interval=interval)
        times.append(time.process_time() - t0)
    out[interval] = min(times)
# the interval summary alone (endpoints + Monte-Carlo errors), 10,000 replicates on a lattice of step 0.125
import numpy as np
from voxmem_analysis.stats.bootstrap import bootstrap_interval
reps = np.round(np.random.default_rng(0).normal(10, 1.3, n_boot) * 8) / 8
bootstrap_interval(reps, 10.0)
times = []
for r in range(repeat):
    t0 = time.process_time()
    for _ in range(200):
        bootstrap_interval(reps, 10.0)
    times.append((time.process_time() - t0) / 200)
out["bootstrap_interval"] = min(times)
print(json.dumps(out))
"""


def _run(tree: Path, data: str, n_boot: int, repeat: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    res = subprocess.run([sys.executable, "-c", _CHILD, str(tree), data, str(n_boot), str(repeat)],
                         capture_output=True, text=True, env=env, cwd=str(tree), check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--against", required=True, type=Path, help="root of the other tree (holds voxmem_analysis/)")
    ap.add_argument("--data", default=str(ROOT / "data" / "synthetic"))
    ap.add_argument("--n-boot", type=int, default=10_000)
    ap.add_argument("--repeat", type=int, default=5, help="timed calls per process (the fastest counts)")
    ap.add_argument("--rounds", type=int, default=3, help="processes per tree, alternating (the fastest counts)")
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {"here": [], "other": []}
    for _ in range(args.rounds):       # alternate the trees: a load change on a shared machine hits both
        runs["here"].append(_run(ROOT, args.data, args.n_boot, args.repeat))
        runs["other"].append(_run(args.against.resolve(), args.data, args.n_boot, args.repeat))
    keys = ("percentile", "bca", "bootstrap_interval")
    here = {k: min(r[k] for r in runs["here"]) for k in keys}
    other = {k: min(r[k] for r in runs["other"]) for k in keys}
    print(f"this tree:  {runs['here'][0]['tree']}\nother tree: {runs['other'][0]['tree']}")
    for interval in ("percentile", "bca"):
        print(f"paired_change interval={interval:10s}  here {here[interval]:.3f} s   other {other[interval]:.3f} s   "
              f"ratio {here[interval] / other[interval]:.3f}")
    k = "bootstrap_interval"
    print(f"bootstrap_interval (one statistic) here {1e3 * here[k]:.3f} ms  other {1e3 * other[k]:.3f} ms  "
          f"ratio {here[k] / other[k]:.3f}")


if __name__ == "__main__":
    main()
