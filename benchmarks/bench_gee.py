"""Benchmark: the context-length GEE (``scaling_model``) with statsmodels and with the vectorised fit.

``voxmem_analysis.analysis.scaling_model.scaling_model`` fits ``correct ~ doublings + C(model)``
(Binomial logit, exchangeable working correlation, robust SE) once per evidence type and once
pooled: five fits on ``data/synthetic`` (item clusters; ``--cluster family`` for families).
The frames are captured from a real ``scaling_model`` call, then each engine of
``fit_doubling_gee`` fits all five, ``--repeat`` times.  Printed: the median wall and CPU time of
the five fits per engine, their ratio, and the largest relative difference of the reported
numbers (log OR, robust SE, OR and CI, p, working correlation).  Not a test: times depend on
the machine and its load (2 shared cores here).

Usage::

    .venv/bin/python benchmarks/bench_gee.py [--data data/synthetic] [--cluster item|family] [--repeat 3]
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voxmem_analysis import load_release  # noqa: E402
from voxmem_analysis.analysis import scaling_model as SM  # noqa: E402

FIELDS = ("log_or", "robust_se", "odds_ratio", "or_ci_low", "or_ci_high", "p_value", "working_corr")


def capture(data: Path, cluster: str) -> list:
    """The (frame, keywords) pairs ``scaling_model`` passes to ``fit_doubling_gee``."""
    release = load_release(data)
    real, calls = SM.fit_doubling_gee, []

    def spy(frame, **kw):
        calls.append((frame, kw))
        return real(frame, **kw)

    SM.fit_doubling_gee = spy
    try:
        SM.scaling_model.__wrapped__(release, cluster=cluster)  # unwrapped: no per-run memo
    finally:
        SM.fit_doubling_gee = real
    return calls


def run(calls: list, engine: str, repeat: int) -> tuple[float, float, list]:
    """Median wall and CPU seconds of fitting every captured frame, and the last results."""
    walls, cpus, out = [], [], []
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        out = [SM.fit_doubling_gee(frame, engine=engine, **kw) for frame, kw in calls]
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return statistics.median(walls), statistics.median(cpus), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "synthetic")
    ap.add_argument("--cluster", choices=("item", "family"), default="item")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    calls = capture(args.data, args.cluster)
    import statsmodels.api  # noqa: F401  - import costs outside the timings
    SM.fit_doubling_gee(calls[0][0], engine="numpy", **calls[0][1])  # scipy, threadpoolctl: warm
    sizes = ", ".join(str(len(frame)) for frame, _ in calls)
    print(f"{args.data} (synthetic data), {len(calls)} fits, {args.cluster} clusters, rows: {sizes}; "
          f"median of {args.repeat}")
    sm_wall, sm_cpu, ref = run(calls, "statsmodels", args.repeat)
    np_wall, np_cpu, new = run(calls, "numpy", args.repeat)
    print(f"  statsmodels GEE : {sm_wall:7.3f} s wall  {sm_cpu:7.3f} s CPU")
    print(f"  vectorised GEE  : {np_wall:7.3f} s wall  {np_cpu:7.3f} s CPU")
    print(f"  ratio           : {sm_wall / np_wall:7.1f}x wall  {sm_cpu / np_cpu:7.1f}x CPU")
    worst = max(abs(a[k] - b[k]) / abs(b[k]) for a, b in zip(new, ref) for k in FIELDS if b[k] != 0)
    print(f"  largest relative difference of the reported numbers: {worst:.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
