"""Benchmark: the parsed-release cache, cold vs warm, in wall time and peak memory.

For each scale (1x and 30x the synthetic release by default: every prediction, judge2 and
ablation file copied once per replica with the model names suffixed, as ``bench_load.py`` builds
them) and each command (``table table15`` and ``export-frame``), runs ``--repeat`` rounds of:

* ``--no-cache``: parse the release, no cache involved (the baseline);
* cold: the cache emptied first, so the command parses the release and writes its entry;
* warm: the entry is there; every file of it checked against its digest, the frames memory-mapped;
* unverified: the same without the digests checked (``cache.VERIFY = False`` in the process): the
  cost of checking is warm / unverified.

Prints medians of wall time and peak resident memory (``/usr/bin/time``'s maximum RSS, which
counts the mapped pages of the entry a warm run touches), the ratios warm / ``--no-cache`` and
cold / ``--no-cache``, and the entry's size per prediction.  Not a test: it prints numbers.

    .venv/bin/python benchmarks/bench_cache.py [--scales 1,30] [--repeat 3]
    .venv/bin/python benchmarks/bench_cache.py --code /path/to/other/checkout   # the same, for other code
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_load import BIN, predictions, replicate, timed  # noqa: E402  (the replicated releases and the timer)

COMMANDS = {"table15": ["table", "table15"], "export-frame": ["export-frame"]}
CLI = [str(BIN / "voxmem-analysis")]
UNVERIFIED = [sys.executable, "-c", "import sys\nfrom voxmem_analysis.io.engine import cache\ncache.VERIFY = False\n"
              "from voxmem_analysis.cli import main\nraise SystemExit(main(sys.argv[1:]))"]
CODE: str | None = None


def entry_bytes(folder: Path) -> int:
    """Bytes of the cache's entries (folders of files; older code: one file each)."""
    return sum(p.stat().st_size for p in [*folder.glob("release-*"), *folder.glob("release-*/*")] if p.is_file())


def clear(env: dict) -> None:
    timed([*CLI, "cache", "clear"], env)


def bench(n: int, name: str, repeat: int, work: Path) -> dict:
    root = replicate(n)
    folder = work / f"cache_x{n}_{name}"
    env = dict(os.environ, VOXMEM_CACHE_DIR=str(folder))
    if CODE:
        env["PYTHONPATH"] = CODE
    cmd = [*CLI, *COMMANDS[name], "--data", str(root)]
    if name == "export-frame":
        cmd += ["--out", str(work / "frame.parquet")]
    runs: dict[str, list[tuple[float, float, float]]] = {"no-cache": [], "cold": [], "warm": [], "unverified": []}
    for _ in range(repeat):
        runs["no-cache"].append(timed(cmd + ["--no-cache"], env))
        clear(env)
        runs["cold"].append(timed(cmd, env))
        runs["warm"].append(timed(cmd, env))
        runs["unverified"].append(timed(UNVERIFIED + cmd[len(CLI):], env))
    size = entry_bytes(folder)
    med = {k: tuple(statistics.median(r[i] for r in v) for i in range(3)) for k, v in runs.items()}
    return {"scale": n, "command": name, "predictions": predictions(root), "entry": size, **med}


def report(rows: list[dict]) -> None:
    print(f"\n{'scale':>5} {'command':>12} {'predictions':>11} | {'no-cache s':>10} {'MiB':>6} | {'cold s':>7} {'MiB':>6} "
          f"{'x':>5} {'mem x':>5} | {'warm s':>7} {'MiB':>6} {'x':>5} {'mem x':>5} | {'unverified s':>12} "
          f"{'warm/unv':>8} | {'entry MiB':>9} {'B/pred':>6}")
    for r in rows:
        (nw, nm, _), (cw, cm, _), (ww, wm, _), (uw, _, _) = r["no-cache"], r["cold"], r["warm"], r["unverified"]
        print(f"{r['scale']:>4}x {r['command']:>12} {r['predictions']:>11,} | {nw:>10.2f} {nm:>6.0f} | {cw:>7.2f} {cm:>6.0f} "
              f"{cw / nw:>5.2f} {cm / nm:>5.2f} | {ww:>7.2f} {wm:>6.0f} {ww / nw:>5.2f} {wm / nm:>5.2f} | {uw:>12.2f} "
              f"{ww / uw:>8.2f} | {r['entry'] / 2**20:>9.1f} {r['entry'] / r['predictions']:>6.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scales", default="1,30", help="comma-separated replication factors (default 1,30)")
    ap.add_argument("--repeat", type=int, default=3, help="rounds per command and scale; medians are printed")
    ap.add_argument("--commands", default=",".join(COMMANDS), help=f"comma-separated, of {', '.join(COMMANDS)}")
    ap.add_argument("--code", help="run the package found in this checkout (python -P -m voxmem_analysis, PYTHONPATH; -P: not the current folder's)")
    args = ap.parse_args()
    global CLI, CODE
    if args.code:
        CLI, CODE = [sys.executable, "-P", "-m", "voxmem_analysis"], str(Path(args.code).resolve())
    print(f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}; medians of {args.repeat} rounds "
          "(x = time / --no-cache's; mem x = peak RSS / --no-cache's)")
    rows = []
    with tempfile.TemporaryDirectory(prefix="voxmem-bench-cache-") as work:
        for n in (int(x) for x in args.scales.split(",")):
            for name in args.commands.split(","):
                rows.append(bench(n, name, args.repeat, Path(work)))
                report(rows[-1:])
    print("\nall:")
    report(rows)


if __name__ == "__main__":
    main()
