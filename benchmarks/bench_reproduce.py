"""Wall time of ``make reproduce`` (``voxmem-analysis reproduce --data data/synthetic --jobs 2``), this tree
against another commit, alternating, and whether the two give the same outputs.

    .venv/bin/python benchmarks/bench_reproduce.py [--repeat 3] [--ref fbde6f2] [--jobs 2] [--no-compare]

Each run is a fresh process tree started from outside, as ``make reproduce`` starts it: the runner,
its workers and one new kernel per notebook.  With ``--ref REF`` the commit is unpacked with
``git archive`` into a temporary folder and run with ``PYTHONPATH`` pointing at it (the kernels
inherit it, so every process imports that tree's package, with this environment's libraries); the
two trees run in turn, A B A B ..., so that a machine whose speed drifts affects both alike.
Printed: every run's wall time and the machine's busy CPU seconds over the run (``/proc/stat``: all
processes, so only the run's own on an idle machine; the load average is printed beside it), the
medians, and the ratio of the medians (this tree / REF) with the ratio of each pair.

Unless ``--no-compare``, the last outputs of the two trees are compared file by file
(``figures/``, ``tables/``, ``reproduction.csv``, ``audit.csv``): identical, differing, or present
in one tree only (the executed notebooks, logs, run.json, provenance.json and the report hold
times and paths, and are left out).
"""
from __future__ import annotations

import argparse
import filecmp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COMPARED = ("figures", "tables", "reproduction.csv", "audit.csv")


def machine_cpu() -> float:
    """CPU seconds the whole machine has been busy (user, nice, system, irq, softirq, steal)."""
    with open("/proc/stat", encoding="ascii") as fh:
        f = fh.readline().split()
    user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in f[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def unpack(ref: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref], check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_once(tree: Path, out: Path, jobs: int) -> tuple[float, float, int]:
    """(wall seconds, machine CPU seconds, exit code) of one reproduction of ``tree``."""
    shutil.rmtree(out, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    cmd = [sys.executable, "-m", "voxmem_analysis", "reproduce", "--data", str(tree / "data" / "synthetic"),
           "--out", str(out), "--jobs", str(jobs), "--no-progress"]
    cpu0, t0 = machine_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, env=env, cwd=tree, capture_output=True, text=True)
    wall, cpu = time.perf_counter() - t0, machine_cpu() - cpu0
    if proc.returncode:
        print(proc.stdout[-2000:], proc.stderr[-2000:], sep="\n", file=sys.stderr)
    return wall, cpu, proc.returncode


def compare_outputs(a: Path, b: Path) -> tuple[int, list[str], list[str]]:
    """(identical files, differing files, files in one output only) under :data:`COMPARED`."""
    def files(root: Path) -> set[str]:
        found = set()
        for part in COMPARED:
            p = root / part
            if p.is_file():
                found.add(part)
            elif p.is_dir():
                found |= {q.relative_to(root).as_posix() for q in p.rglob("*") if q.is_file()}
        return found

    fa, fb = files(a), files(b)
    same = [f for f in sorted(fa & fb) if filecmp.cmp(a / f, b / f, shallow=False)]
    differ = sorted(set(fa & fb) - set(same))
    return len(same), differ, sorted(fa ^ fb)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each tree (default 3)")
    ap.add_argument("--ref", default=None, help="a commit to run alternately with this tree (e.g. fbde6f2)")
    ap.add_argument("--jobs", type=int, default=2, help="--jobs of reproduce (default 2, as make reproduce)")
    ap.add_argument("--no-compare", action="store_true", help="do not compare the two trees' outputs")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bench-reproduce-"))
    trees = {"this tree": REPO}
    if args.ref:
        trees[args.ref] = unpack(args.ref, work / "ref")
    print(f"{os.cpu_count()} cores; load average before: {os.getloadavg()[0]:.2f}")
    walls: dict[str, list[float]] = {k: [] for k in trees}
    for i in range(args.repeat):
        for label, tree in trees.items():
            wall, cpu, rc = run_once(tree, work / f"out-{label.replace(' ', '_')}", args.jobs)
            walls[label].append(wall)
            print(f"run {i + 1} {label:>10}: {wall:6.1f} s wall, {cpu:6.1f} s machine CPU, exit {rc}, "
                  f"load {os.getloadavg()[0]:.2f}", flush=True)
    for label, w in walls.items():
        print(f"{label:>10}: median {statistics.median(w):.1f} s (min {min(w):.1f}, max {max(w):.1f})")
    if args.ref:
        a, b = walls["this tree"], walls[args.ref]
        print(f"ratio of medians (this tree / {args.ref}): {statistics.median(a) / statistics.median(b):.2f}; "
              "per pair: " + ", ".join(f"{x / y:.2f}" for x, y in zip(a, b)))
        if not args.no_compare:
            same, differ, alone = compare_outputs(work / "out-this_tree", work / f"out-{args.ref}")
            print(f"outputs: {same} identical, {len(differ)} differ, {len(alone)} in one tree only")
            for f in differ:
                print(f"  differs: {f}")
            for f in alone:
                print(f"  only in one: {f}")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
