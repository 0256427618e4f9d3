"""Wall time of the whole reproduction (what `make reproduce` runs), measured from outside.

    .venv/bin/python benchmarks/bench_reproduce.py [--repeat 2] [--jobs 2] [--out DIR] [--data DIR]

Runs ``voxmem-analysis reproduce --data data/synthetic --out OUT --jobs 2`` as a subprocess
(the installed entry point, as `make reproduce` does; OUT is a temporary folder unless
``--out`` is given) and prints, per repetition: the wall time, the CPU time of the whole
process tree (user + system, from ``getrusage(RUSAGE_CHILDREN)``: the runner, its workers and
every kernel), the machine's load average before and after (other people's jobs on the same
cores slow it down), and each notebook's time from ``OUT/run.json``.  Also the start-up time
of the command line (``voxmem-analysis --help``).

``--compare-ref REF`` (e.g. ``HEAD~1``) also runs the reproduction of that commit, alternating
with the working tree's, and prints the two wall times side by side: the commit is unpacked
with ``git archive`` into a temporary folder and put first on the import path of the runner
and of its kernels (a ``sitecustomize`` shim), so both use this environment's libraries.

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


_SHIM = """import sys
sys.path.insert(0, {src!r})
"""


def unpack(ref: str, into: Path) -> dict:
    """Unpack commit ``ref`` into ``into``; the environment that makes a process import it."""
    src = into / "src"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    (into / "site").mkdir()
    (into / "site" / "sitecustomize.py").write_text(_SHIM.format(src=str(src)))
    return dict(os.environ, PYTHONPATH=str(into / "site"))


def one_run(data: Path, out: Path, jobs: int, extra: list[str], env: dict | None = None) -> dict:
    load0 = os.getloadavg()[0]
    cpu0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run([_cli(), "reproduce", "--data", str(data), "--out", str(out), "--jobs", str(jobs),
                           "--no-progress", *extra], capture_output=True, text=True,
                          cwd=REPO if env is None else out.parent, env=env)
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    run = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else {}
    return {"wall": wall, "cpu": cpu, "rc": proc.returncode, "load_before": load0, "load_after": os.getloadavg()[0],
            "run": run, "stdout": proc.stdout, "stderr": proc.stderr}


def _print_run(label: str, r: dict) -> None:
    run = r["run"]
    print(f"\n{label}: wall {r['wall']:.1f} s, CPU (whole process tree) {r['cpu']:.1f} s, exit code {r['rc']}, "
          f"load average {r['load_before']:.1f} -> {r['load_after']:.1f}")
    total = 0.0
    for nb in run.get("notebooks", []):
        total += nb["seconds"] or 0.0
        print(f"  {nb['name']:26s} {nb['status']:8s} {nb['seconds']:6.1f} s")
    rp = run.get("reproduction") or {}
    if rp.get("seconds") is not None:
        total += rp["seconds"]
        print(f"  {'reproduction.csv + audit':26s} {'ok' if 'error' not in rp else 'failed':8s} {rp['seconds']:6.1f} s")
    print(f"  tasks: {total:.1f} s in all over {run.get('jobs', '?')} workers; the rest of the wall time is the "
          f"runner (start-up, pool, report): {r['wall'] - total / max(1, run.get('jobs', 1) or 1):.1f} s")
    if r["rc"] not in (0, 1):
        print(r["stderr"][-2000:])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default=str(REPO / "data" / "synthetic"))
    ap.add_argument("--out", default=None, help="output folder (default: a temporary one, removed afterwards)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--compare-ref", default=None, metavar="REF",
                    help="also time the reproduction of this commit (e.g. HEAD~1), alternating")
    ap.add_argument("extra", nargs="*", help="more arguments for `reproduce` (after --)")
    args = ap.parse_args(argv)

    print(f"machine: {os.cpu_count()} cores; command-line start-up (voxmem-analysis --help): "
          f"{startup_seconds():.2f} s")
    walls: dict[str, list[float]] = {"working tree": []}
    with tempfile.TemporaryDirectory(prefix="bench-reproduce-") as tmp:
        envs: dict[str, dict | None] = {"working tree": None}
        if args.compare_ref:
            envs[args.compare_ref] = unpack(args.compare_ref, Path(tmp) / "ref")
            walls[args.compare_ref] = []
        for k in range(args.repeat):
            for label, env in envs.items():
                out = Path(args.out) / label.replace(" ", "_") if args.out else Path(tmp) / f"out{k}_{len(walls[label])}_{label[:3]}"
                r = one_run(Path(args.data), out, args.jobs, args.extra, env)
                if not args.out:
                    shutil.rmtree(out, ignore_errors=True)
                walls[label].append(r["wall"])
                _print_run(f"run {k + 1} ({label})", r)
    for label, ws in walls.items():
        print(f"\nwall time ({label}): min {min(ws):.1f} s, median {statistics.median(ws):.1f} s over {len(ws)} run(s)")
    if args.compare_ref:
        new, old = statistics.median(walls["working tree"]), statistics.median(walls[args.compare_ref])
        print(f"working tree / {args.compare_ref}: {new / old:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
