"""Benchmark: every command that reads a release, on a replicated release of N predictions.

For each ``--predictions`` size, builds (once, under ``benchmarks/.cache/``) the synthetic release
replicated as ``bench_load.py`` does (every prediction, judge2 and ablation file copied once per
replica with the model names suffixed), then runs, one after the other:

* the floor: a fresh interpreter that gunzips every prediction file the loader reads and reads each
  with ``polars.read_ndjson`` (``bench_load.FLOOR``);
* each command of :data:`COMMANDS` three ways: ``--no-cache``; with an empty cache folder (cold: it
  loads and writes the cache); with that cache filled (warm).  The cache folder's size limit is set
  to ``--cache-limit`` (32 GiB): with the default 2 GiB a release of 10M predictions (about 3.5 GB
  cached) is not kept, and warm would be no-cache.

Prints wall time and peak resident memory (``/usr/bin/time``, else ``getrusage`` of the children)
of every run and, for ``export-frame --no-cache`` (the loading path), the ratio to the floor.  Not a
test: it prints numbers, which depend on the machine and its load.

    .venv/bin/python benchmarks/bench_scale.py [--predictions 400000,1700000] [--commands validate,export-frame]
        [--modes no-cache,cold,warm] [--runs export-frame:no-cache,validate:cold,...] [--no-floor]
"""
from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_load as bl  # noqa: E402

#: Commands that read a release (arguments after ``--data DIR``).
COMMANDS = {
    "validate": ["validate"],
    "table table15": ["table", "table15"],
    "slice": ["slice", "--n-boot", "200"],
    "compare": ["compare", "--models", "Gemini-2.5-Pro,Gemini-3.1-Pro", "--budget", "8K", "--n-boot", "200"],
    "items": ["items", "--model", "Gemini-2.5-Pro", "--budget", "8K"],
    "export-frame": ["export-frame", "--out", "{work}/frame.parquet"],
}
PER_REPLICA = 57_268   # predictions (lines) of data/synthetic (predictions, judge2 and ablation): n = replicas x this


def run(cmd_args: list[str], root: Path, work: Path, mode: str, cache_limit: str) -> tuple[float, float]:
    """Wall seconds and peak MiB of one command in one cache mode (the cache folder's size limit set
    to ``cache_limit`` beforehand, untimed, so that a large release is kept)."""
    env = dict(os.environ)
    env.pop("VOXMEM_RELEASE_CACHE", None)
    cache = work / "cache"
    env["VOXMEM_CACHE_DIR"] = str(cache)
    if mode == "cold":
        shutil.rmtree(cache, ignore_errors=True)
        subprocess.run([str(bl.BIN / "voxmem-analysis"), "cache", "--limit", cache_limit], env=env, check=True,
                       stdout=subprocess.DEVNULL)
    args = [a.format(work=work) for a in cmd_args]
    cmd = [str(bl.BIN / "voxmem-analysis"), *args[:1 if args[0] != "table" else 2], "--data", str(root),
           *args[1 if args[0] != "table" else 2:]]
    if mode == "no-cache":
        cmd.append("--no-cache")
    try:
        wall, mib, _ = bl.timed(cmd, env)
    except SystemExit as exc:   # a failed run (killed for memory, say) is reported, and the others still run
        print(f"  FAILED {' '.join(args)} ({mode}): {str(exc)[-500:]}", file=sys.stderr, flush=True)
        return math.nan, math.nan
    print(f"  {' '.join(args[:2])} {mode}: {wall:.1f} s, {mib:,.0f} MiB", file=sys.stderr, flush=True)
    return wall, mib


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--predictions", default="400000", help="comma-separated sizes (default 400000)")
    ap.add_argument("--commands", default=",".join(COMMANDS), help="comma-separated names of COMMANDS")
    ap.add_argument("--modes", default="no-cache,cold,warm", help="comma-separated of no-cache, cold, warm")
    ap.add_argument("--runs", default=None,
                    help="instead of --commands x --modes: comma-separated COMMAND:MODE run in this order, sharing "
                         "one cache folder (e.g. 'export-frame:no-cache,export-frame:cold,validate:warm')")
    ap.add_argument("--no-floor", action="store_true", help="skip the floor (and the load ratio)")
    ap.add_argument("--cache-limit", default="32GiB",
                    help="size limit of the benchmark's cache folder (default 32GiB: the 2 GiB default keeps no "
                         "release beyond about 6M predictions, and warm would be no-cache)")
    args = ap.parse_args()
    if args.runs:
        runs = [tuple(r.strip().rsplit(":", 1)) for r in args.runs.split(",")]
    else:
        runs = [(c.strip(), m.strip()) for c in args.commands.split(",") for m in args.modes.split(",")]
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    for size in (int(x) for x in args.predictions.split(",")):
        replicas = max(1, math.ceil(size / PER_REPLICA))
        root = bl.replicate(replicas)
        with tempfile.TemporaryDirectory(prefix="voxmem-scale-") as tmp:
            work = Path(tmp)
            fw = math.nan
            if not args.no_floor:
                floor = work / "floor_read.py"
                floor.write_text(bl.FLOOR)
                fw, fm, _ = bl.timed([sys.executable, str(floor), str(root)], dict(os.environ))
                print(f"floor {fw:.1f} s, {fm:,.0f} MiB", file=sys.stderr, flush=True)
            results = {}
            for name, mode in runs:
                results[name, mode] = run(COMMANDS[name], root, work, mode, args.cache_limit)
            _table(replicas * PER_REPLICA, root, fw, fm if not args.no_floor else math.nan, results)


def _table(n: int, root: Path, fw: float, fm: float, results: dict) -> None:
    """One row per command: wall s and peak MiB per mode run, and export-frame --no-cache / floor."""
    modes = [m for m in ("no-cache", "cold", "warm") if any(k[1] == m for k in results)]
    print(f"\n{n:,} predictions ({root.name}); floor {fw:.1f} s, {fm:,.0f} MiB")
    print(f"{'command':<16} " + " ".join(f"{m + ' s':>10} {'MiB':>7}" for m in modes) + "   load x floor")
    for name in dict.fromkeys(k[0] for k in results):
        cells = [f"{results[name, m][0]:>10.1f} {results[name, m][1]:>7,.0f}" if (name, m) in results else f"{'-':>10} {'-':>7}"
                 for m in modes]
        ratio = f"   {results[name, 'no-cache'][0] / fw:.2f}" if name == "export-frame" and (name, "no-cache") in results else ""
        print(f"{name:<16} " + " ".join(cells) + ratio, flush=True)


if __name__ == "__main__":
    main()
