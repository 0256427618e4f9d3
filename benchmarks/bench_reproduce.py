"""Wall time of the whole reproduction (what `make reproduce` runs), measured from outside.

    .venv/bin/python benchmarks/bench_reproduce.py [--repeat 2] [--jobs 2] [--out DIR] [--data DIR]

Runs ``voxmem-analysis reproduce --data data/synthetic --out OUT --jobs 2`` as a subprocess
(the installed entry point, as `make reproduce` does; OUT is a temporary folder unless
``--out`` is given) and prints, per repetition: the wall time, the CPU time the machine was busy
(``/proc/stat``, all processes: the runner, its workers and every kernel -- and other jobs), the machine's load average before and after (other people's jobs on the same
cores slow it down), and each notebook's time from ``OUT/run.json``.  Also the start-up time
of the command line (``voxmem-analysis --help``).

``--compare-fresh`` also runs the working tree with ``--fresh-kernels`` (a new kernel per notebook
instead of one warm kernel per worker), alternating.  ``--compare-memo`` also runs the working tree with the artifact memo left out (the shim below
replaces ``voxmem_analysis.artifacts.memoised`` by a no-op in every process), alternating: the
memo's effect alone, on the same code.  ``--compare-ref REF`` (e.g. ``HEAD~1``) also runs the reproduction of that commit, alternating
with the working tree's, and prints the two wall times side by side: the commit is unpacked
with ``git archive`` into a temporary folder and put first on the import path of the runner
and of its kernels (a ``sitecustomize`` shim), so both use this environment's libraries.

Per stage (every run, both trees): the same ``sitecustomize`` shim times, in every process of
the run, ``load_release`` and ``Figure.savefig`` (PNG + PDF of every figure) and logs them by
task (the kernel's working folder is its notebook's staging folder); the executed notebooks'
papermill timings give the kernel start (notebook start to first cell) and the set-up cell
(imports + loading the release); ``$VOXMEM_MEMO_LOG`` counts the artifact memo's hits and misses
(:func:`voxmem_analysis.artifacts.memoised`).  Printed per notebook and summed: kernel start,
imports, load, figures, the rest (analysis, tables, display).

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
    """CPU seconds the whole machine spent busy so far (``/proc/stat``: user, nice, system, irq,
    softirq, steal over all cores).  The run's workers are children of multiprocessing's fork
    server and its kernels children of the workers, so ``getrusage(RUSAGE_CHILDREN)`` misses most
    of them; the machine-wide count includes every process of the run -- and anyone else's, so it
    is only the run's own CPU on an idle machine (the load average printed beside it says)."""
    try:
        with open("/proc/stat", encoding="ascii") as fh:
            f = fh.readline().split()
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in f[1:9])
        return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
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
#: Times load_release and Figure.savefig in every process of a run (imported as sitecustomize).
_STAGE_SHIM = r"""
import functools, importlib.abc, importlib.util, os, sys, time

_LOG = os.environ.get("VOXMEM_BENCH_STAGES")


def _wrap(owner, attr, kind):
    func = getattr(owner, attr)

    @functools.wraps(func)
    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            try:
                with open(_LOG, "a") as fh:
                    fh.write(f"{os.path.basename(os.getcwd())}\t{kind}\t{time.perf_counter() - t0:.4f}\n")
            except OSError:
                pass
    setattr(owner, attr, timed)


_PATCH = {"matplotlib.figure": lambda m: _wrap(m.Figure, "savefig", "figures"),
          "voxmem_analysis.io.release": lambda m: _wrap(m, "load_release", "load")}
if os.environ.get("VOXMEM_BENCH_NO_MEMO"):   # --compare-memo: the same tree with the artifact memo left out
    _PATCH["voxmem_analysis.artifacts"] = lambda m: setattr(m, "memoised", lambda name: (lambda func: func))


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name not in _PATCH:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _PATCH[name](module)
        spec.loader.exec_module = exec_module
        return spec


if _LOG:
    sys.meta_path.insert(0, _Finder())
"""


def unpack(ref: str, into: Path) -> dict:
    """Unpack commit ``ref`` into ``into``; the environment that makes a process import it."""
    src = into / "src"
    src.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", ref], cwd=REPO, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    (into / "site").mkdir()
    (into / "site" / "sitecustomize.py").write_text(_SHIM.format(src=str(src)) + _STAGE_SHIM)
    return dict(os.environ, PYTHONPATH=str(into / "site"))


def stage_env(into: Path) -> dict:
    """The environment of a working-tree run: the stage shim only."""
    (into / "site").mkdir(parents=True, exist_ok=True)
    (into / "site" / "sitecustomize.py").write_text(_STAGE_SHIM)
    return dict(os.environ, PYTHONPATH=str(into / "site"))


def one_run(data: Path, out: Path, jobs: int, extra: list[str], env: dict) -> dict:
    stages_log, memo_log = out.parent / f"{out.name}.stages", out.parent / f"{out.name}.memo"
    env = dict(env, VOXMEM_BENCH_STAGES=str(stages_log), VOXMEM_MEMO_LOG=str(memo_log))
    load0 = os.getloadavg()[0]
    cpu0, t0 = _cpu(), time.perf_counter()
    proc = subprocess.run([_cli(), "reproduce", "--data", str(data), "--out", str(out), "--jobs", str(jobs),
                           "--no-progress", *extra], capture_output=True, text=True, cwd=out.parent, env=env)
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    run = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else {}
    return {"wall": wall, "cpu": cpu, "rc": proc.returncode, "load_before": load0, "load_after": os.getloadavg()[0],
            "run": run, "stdout": proc.stdout, "stderr": proc.stderr,
            "stages": stages(out, stages_log, memo_log)}


def _read_log(path: Path) -> list[list[str]]:
    try:
        return [line.split("\t") for line in path.read_text().splitlines() if line.count("\t") >= 2]
    except OSError:
        return []


def _papermill_times(ipynb: Path) -> tuple[float, float] | None:
    """(kernel start: notebook start to first code cell, seconds of the set-up cell) of an executed notebook.

    The set-up cell is the first code cell after the parameters (and injected-parameters) cells."""
    from datetime import datetime

    try:
        nb = json.loads(ipynb.read_text())
        start = datetime.fromisoformat(nb["metadata"]["papermill"]["start_time"])
        cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
        first = datetime.fromisoformat(cells[0]["metadata"]["papermill"]["start_time"])
        setup = next(c for c in cells if not {"parameters", "injected-parameters"} & set(c["metadata"].get("tags", [])))
        return (first - start).total_seconds(), float(setup["metadata"]["papermill"]["duration"] or 0.0)
    except (OSError, ValueError, KeyError, IndexError, StopIteration, TypeError):
        return None


def stages(out: Path, stages_log: Path, memo_log: Path) -> dict[str, dict]:
    """Per notebook: total, kernel, imports (set-up cell minus load), load, figures, rest; memo hits/misses."""
    per: dict[str, dict] = {}
    run = json.loads((out / "run.json").read_text()) if (out / "run.json").exists() else {}
    for nb in run.get("notebooks", []):
        if nb.get("status") != "ok":
            continue
        d = per.setdefault(nb["name"], {"total": nb["seconds"] or 0.0, "kernel": 0.0, "setup": 0.0, "load": 0.0,
                                        "figures": 0.0, "hits": 0, "misses": 0})
        times = _papermill_times(out / "notebooks" / f"{nb['name']}.ipynb")
        if times:
            d["kernel"], d["setup"] = times
    for task, kind, secs in _read_log(stages_log):
        if task in per:
            per[task][kind] = per[task].get(kind, 0.0) + float(secs)
    for task, _name, outcome, _secs in (r[:4] for r in _read_log(memo_log) if len(r) >= 4):
        if task in per:
            per[task]["hits" if outcome == "hit" else "misses"] += 1
    rp = run.get("reproduction") or {}
    if rp.get("seconds") is not None:
        memo = [r for r in _read_log(memo_log) if len(r) >= 4 and r[0] not in per]
        per["reproduction.csv"] = {"total": rp["seconds"], "hits": sum(r[2] == "hit" for r in memo),
                                   "misses": sum(r[2] == "miss" for r in memo)}
    for d in per.values():
        if "setup" in d:
            d["imports"] = max(0.0, d["setup"] - d["load"])
            d["rest"] = max(0.0, d["total"] - d["kernel"] - d["setup"] - d["figures"])
    stages_log.unlink(missing_ok=True)
    memo_log.unlink(missing_ok=True)
    return per


_COLS = ("total", "kernel", "imports", "load", "figures", "rest")


def _print_run(label: str, r: dict) -> None:
    run = r["run"]
    print(f"\n{label}: wall {r['wall']:.1f} s, CPU (machine busy) {r['cpu']:.1f} s, exit code {r['rc']}, "
          f"load average {r['load_before']:.1f} -> {r['load_after']:.1f}")
    print(f"  {'task':26s} " + " ".join(f"{c:>7s}" for c in _COLS) + "  memo hit/miss")
    sums = dict.fromkeys(_COLS, 0.0)
    for name, d in r["stages"].items():
        for c in _COLS:
            sums[c] += d.get(c, 0.0)
        print(f"  {name:26s} " + " ".join(f"{d[c]:7.1f}" if c in d else f"{'':7s}" for c in _COLS)
              + f"  {d['hits']}/{d['misses']}")
    print(f"  {'sum':26s} " + " ".join(f"{sums[c]:7.1f}" for c in _COLS))
    for nb in run.get("notebooks", []):
        if nb["status"] != "ok":
            print(f"  {nb['name']:26s} {nb['status']}")
    jobs = max(1, run.get("jobs", 1) or 1)
    print(f"  tasks: {sums['total']:.1f} s in all over {jobs} workers; the rest of the wall time is the "
          f"runner (start-up, pool, report) and waiting: {r['wall'] - sums['total'] / jobs:.1f} s")
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
    ap.add_argument("--compare-memo", action="store_true",
                    help="also time the working tree with the run-scoped artifact memo left out, alternating")
    ap.add_argument("--compare-fresh", action="store_true",
                    help="also time the working tree with a fresh kernel per notebook (--fresh-kernels), alternating")
    ap.add_argument("extra", nargs="*", help="more arguments for `reproduce` (after --)")
    args = ap.parse_args(argv)

    print(f"machine: {os.cpu_count()} cores; command-line start-up (voxmem-analysis --help): "
          f"{startup_seconds():.2f} s")
    walls: dict[str, list[float]] = {"working tree": []}
    sums: dict[str, list[dict]] = {"working tree": []}
    with tempfile.TemporaryDirectory(prefix="bench-reproduce-") as tmp:
        envs: dict[str, dict] = {"working tree": stage_env(Path(tmp) / "tree")}
        if args.compare_ref:
            envs[args.compare_ref] = unpack(args.compare_ref, Path(tmp) / "ref")
            walls[args.compare_ref], sums[args.compare_ref] = [], []
        if args.compare_memo:
            envs["no memo"] = dict(envs["working tree"], VOXMEM_BENCH_NO_MEMO="1")
            walls["no memo"], sums["no memo"] = [], []
        extra = {label: list(args.extra) for label in envs}
        if args.compare_fresh:
            envs["fresh kernels"] = envs["working tree"]
            extra["fresh kernels"] = [*args.extra, "--fresh-kernels"]
            walls["fresh kernels"], sums["fresh kernels"] = [], []
        for k in range(args.repeat):
            for label, env in envs.items():
                out = (Path(args.out) / label.replace(" ", "_") if args.out
                       else Path(tmp) / f"out{k}_{len(walls[label])}_{label[:3]}")
                out.parent.mkdir(parents=True, exist_ok=True)
                r = one_run(Path(args.data), out, args.jobs, extra[label], env)
                failed = [nb["name"] for nb in r["run"].get("notebooks", []) if nb["status"] == "failed"]
                if r["rc"] or failed:   # a broken run is not a timing: reported, left out of the medians
                    _print_run(f"run {k + 1} ({label}) FAILED ({', '.join(failed) or 'exit code'}), not counted", r)
                    if not args.out:
                        shutil.rmtree(out, ignore_errors=True)
                    continue
                sums[label].append({c: sum(d.get(c, 0.0) for d in r["stages"].values()) for c in _COLS})
                if not args.out:
                    shutil.rmtree(out, ignore_errors=True)
                walls[label].append(r["wall"])
                _print_run(f"run {k + 1} ({label})", r)
    for label, ws in walls.items():
        if not ws:
            print(f"\nwall time ({label}): no successful run")
            continue
        print(f"\nwall time ({label}): min {min(ws):.1f} s, median {statistics.median(ws):.1f} s over {len(ws)} run(s); "
              "median task seconds summed over tasks: "
              + ", ".join(f"{c} {statistics.median(x[c] for x in sums[label]):.1f}" for c in _COLS))
    for other in [o for o in (args.compare_ref, "no memo" if args.compare_memo else None,
                              "fresh kernels" if args.compare_fresh else None) if o]:
        if walls["working tree"] and walls[other]:
            new, old = statistics.median(walls["working tree"]), statistics.median(walls[other])
            print(f"working tree / {other}: {new / old:.2f} (median wall times)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
