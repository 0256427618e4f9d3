"""Benchmark: Table 18 (paired 8K -> 64K bootstrap) with the engine and with SciPy.

Table 18 of the paper: for the ten 64K models, drop = acc8K - acc64K (pp) and retention =
acc64K / acc8K with percentile 95% intervals from 10,000 item resamples, both budgets rescored
on every resample.  Rows: the four evidence types and the overall row (mean over models) and
the ten per-model rows (pooled over evidence types).

The problem is read from a release directory (default ``data/synthetic``) through
``voxmem_analysis.load_release`` when both exist, otherwise generated from a seeded latent
model with the same shape (799 items: 232/147/264/156 by evidence type, 10 models).

The engine (``voxmem_analysis.stats.paired_bootstrap_frame``, three calls) and SciPy
(``scipy.stats.bootstrap(paired=True, method="percentile")``, one call per row and statistic,
30 calls, same masked statistics) both start from the long frame.  Printed: both wall times,
their ratio and the largest difference between interval endpoints (pp for drops, ratio units
for retention).  By default SciPy gets seed + 1, an independent stream, so endpoints differ by
Monte-Carlo error; ``--scipy-seed`` equal to ``--seed`` makes SciPy draw the same resamples as
the engine (both call ``Generator.integers(0, n)`` row by row), and the endpoints coincide.

Usage::

    .venv/bin/python benchmarks/bench_bootstrap.py [--source auto|release|latent]
        [--data data/synthetic] [--n-boot 10000] [--seed 0] [--scipy-seed N] [--repeat 3]
        [--no-scipy]
"""
from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as st

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from voxmem_analysis.stats import PairedSettings, paired_bootstrap_frame  # noqa: E402

EVIDENCE_SIZES = {"speech_semantics": 232, "speaker_information": 147,
                  "paralinguistic_information": 264, "environmental_sound": 156}
BASELINE, COMPARISON = "8K", "64K"


# ----------------------------------------------------------------------------- data

def latent_frame(seed: int = 0, n_models: int = 10, missing_rate: float = 0.003) -> pd.DataFrame:
    """Table-18-shaped long frame from a seeded latent model (synthetic, not model output).

    Item difficulty ``z_i ~ N(mu_e, 1.2)`` by evidence type, model ability ``a_m``;
    P(correct at 8K) = logistic(a_m + z_i), at 64K logistic(a_m + z_i - delta_e - 0.4 s_i)
    with item sensitivity ``s_i ~ N(0, 1)``.  The two budgets share a uniform draw with
    probability 0.6 (paired outcomes), and ``missing_rate`` of (model, item) pairs are
    provider-rejected at one budget (``correct`` null, ``scored`` false).
    """
    rng = np.random.default_rng(seed)
    mu = {"speech_semantics": 0.0, "speaker_information": -0.7,
          "paralinguistic_information": -1.6, "environmental_sound": -1.6}
    delta = {"speech_semantics": 0.75, "speaker_information": 0.7,
             "paralinguistic_information": 0.5, "environmental_sound": 0.65}
    ev = np.repeat(list(EVIDENCE_SIZES), list(EVIDENCE_SIZES.values()))
    n = ev.size
    z = np.array([mu[e] for e in ev]) + rng.normal(0, 1.2, n)
    d = np.array([delta[e] for e in ev]) + 0.4 * rng.normal(size=n)
    a = np.sort(rng.normal(-0.6, 0.45, n_models))[::-1]
    logit = z[:, None] + a[None, :]
    p8 = 1 / (1 + np.exp(-logit))
    p64 = 1 / (1 + np.exp(-(logit - d[:, None])))
    u8 = rng.random((n, n_models))
    same = rng.random((n, n_models)) < 0.6
    u64 = np.where(same, u8, rng.random((n, n_models)))
    c8, c64 = u8 < p8, u64 < p64
    rejected = rng.random((n, n_models)) < missing_rate
    which = rng.random((n, n_models)) < 0.5          # which budget was rejected
    qid = np.array([f"q_{i:05d}" for i in range(n)])
    parts = []
    for j in range(n_models):
        for budget, corr, rej in ((BASELINE, c8[:, j], rejected[:, j] & which[:, j]),
                                  (COMPARISON, c64[:, j], rejected[:, j] & ~which[:, j])):
            col = pd.array(corr, dtype="boolean")
            col[rej] = pd.NA
            parts.append(pd.DataFrame({"model": f"model_{j:02d}", "question_id": qid,
                                       "budget": budget, "evidence_type": ev,
                                       "correct": col, "scored": ~rej}))
    return pd.concat(parts, ignore_index=True)


def release_frame(path: Path) -> pd.DataFrame:
    """The release's verdict frame, restricted to the 64K model set and the two budgets."""
    from voxmem_analysis import load_release
    import polars as pl

    release = load_release(path)
    models = release.models_in_64k_set()
    frame = release.frame.filter(pl.col("model").is_in(models)
                                 & pl.col("budget").cast(pl.Utf8).is_in([BASELINE, COMPARISON]))
    df = frame.select(["model", "question_id", "budget", "evidence_type", "correct",
                       "scored"]).to_pandas()
    df["budget"] = df["budget"].astype(str)
    return df


def load_problem(source: str, data: Path, seed: int) -> tuple[pd.DataFrame, str]:
    if source in ("auto", "release"):
        try:
            import voxmem_analysis
            has_loader = hasattr(voxmem_analysis, "load_release")
        except ImportError:
            has_loader = False
        if has_loader and data.is_dir():
            try:
                return release_frame(data), f"release {data}"
            except ValueError as exc:          # VoxMemDataError is a ValueError
                if source == "release":
                    raise
                print(f"note: could not load {data} ({str(exc).splitlines()[0]}); "
                      "using the latent model", file=sys.stderr)
        if source == "release":
            raise SystemExit(f"--source release: {data} missing or load_release unavailable")
    return latent_frame(seed), f"seeded latent model (seed={seed})"


# ----------------------------------------------------------------------------- engine

def engine_table18(df: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    run = PairedSettings(n_boot=n_boot, seed=seed, statistics=("drop", "retention"))
    by_type = paired_bootstrap_frame(df, groups="evidence_type", judged="scored", settings=run)
    overall = paired_bootstrap_frame(df, judged="scored", settings=run).assign(evidence_type="overall")
    per_model = paired_bootstrap_frame(df, judged="scored", settings=dataclasses.replace(run, aggregate=None))
    top = pd.concat([by_type, overall], ignore_index=True).rename(columns={"evidence_type": "row"})
    return pd.concat([top, per_model.rename(columns={"model": "row"})], ignore_index=True)


# ----------------------------------------------------------------------------- SciPy

def _matrices(df: pd.DataFrame):
    d = df.copy()
    d["v"] = d["correct"].astype("Float64").where(d["scored"].astype(bool)).astype(float)
    wide = d.pivot_table(index="question_id", columns=["budget", "model"], values="v",
                         aggfunc="first", dropna=False)
    models = sorted(d["model"].unique())
    items = wide.index.to_numpy()
    b = wide[BASELINE].reindex(columns=models).to_numpy(dtype=float)
    c = wide[COMPARISON].reindex(columns=models).to_numpy(dtype=float)
    m = ~np.isnan(b) & ~np.isnan(c)
    ev = d.drop_duplicates("question_id").set_index("question_id")["evidence_type"]
    return items, models, np.nan_to_num(b), np.nan_to_num(c), m.astype(float), \
        ev.reindex(items).to_numpy()


def _scipy_ci(arrays, fn, n_boot, seed):
    res = st.bootstrap(arrays, fn, paired=True, vectorized=True, n_resamples=n_boot,
                       method="percentile", confidence_level=0.95, batch=500,
                       rng=np.random.default_rng(seed))
    return res.confidence_interval.low, res.confidence_interval.high


def _agg_stat(k: int, kind: str):
    def fn(*arrs, axis=-1):
        b, c, m = arrs[:k], arrs[k:2 * k], arrs[2 * k:]
        ab = np.mean([(bj * mj).sum(axis) / mj.sum(axis) for bj, mj in zip(b, m)], axis=0)
        ac = np.mean([(cj * mj).sum(axis) / mj.sum(axis) for cj, mj in zip(c, m)], axis=0)
        return 100 * (ab - ac) if kind == "drop" else ac / ab
    return fn


def scipy_table18(df: pd.DataFrame, n_boot: int, seed: int) -> pd.DataFrame:
    items, models, b, c, m, ev = _matrices(df)
    rows = []
    groups = [(e, ev == e) for e in sorted(set(ev))] + [("overall", np.ones(len(items), bool))]
    for label, sel in groups:
        bs, cs, ms = b[sel], c[sel], m[sel]
        keep = ms.any(axis=1)
        bs, cs, ms = bs[keep], cs[keep], ms[keep]
        k = bs.shape[1]
        arrays = tuple(bs.T) + tuple(cs.T) + tuple(ms.T)
        for kind in ("drop", "retention"):
            lo, hi = _scipy_ci(arrays, _agg_stat(k, kind), n_boot, seed)
            rows.append({"row": label, "statistic": kind, "scipy_low": lo, "scipy_high": hi})
    keep = m.any(axis=1)
    for j, model in enumerate(models):
        arrays = (b[keep, j], c[keep, j], m[keep, j])
        for kind in ("drop", "retention"):
            lo, hi = _scipy_ci(arrays, _agg_stat(1, kind), n_boot, seed)
            rows.append({"row": model, "statistic": kind, "scipy_low": lo, "scipy_high": hi})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- main

def bench_holm(sizes=(6, 28, 200), repeat: int = 20) -> pd.DataFrame:
    """Hand-written Holm (``stats.holm``) against ``statsmodels.stats.multitest.multipletests``.

    ``compare`` adjusts each group's pairwise McNemar p-values (3 systems: 3 tests; the 15
    VoxMem models: 105) once per group; the ratio decides whether the hand-written step-down
    stays (see the comment in ``voxmem_analysis/stats/tests.py``).
    """
    from statsmodels.stats.multitest import multipletests

    from voxmem_analysis.stats import holm

    rng = np.random.default_rng(0)
    rows = []
    for m in sizes:
        p = rng.uniform(size=m)
        assert np.allclose(holm(p)["p_adjusted"], multipletests(p, method="holm")[1])
        t0 = time.perf_counter()
        for _ in range(repeat):
            holm(p)
        hand = (time.perf_counter() - t0) / repeat
        t0 = time.perf_counter()
        for _ in range(repeat):
            multipletests(p, method="holm")
        lib = (time.perf_counter() - t0) / repeat
        rows.append({"m": m, "hand_ms": 1e3 * hand, "multipletests_ms": 1e3 * lib, "ratio": lib / hand})
    return pd.DataFrame(rows)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--source", choices=("auto", "release", "latent"), default="auto")
    ap.add_argument("--data", type=Path, default=ROOT / "data" / "synthetic")
    ap.add_argument("--n-boot", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--scipy-seed", type=int, default=None,
                    help="seed of the SciPy runs (default seed + 1: an independent stream, so "
                         "endpoint differences show Monte-Carlo error; with the engine's seed "
                         "SciPy draws the very same resamples and the endpoints coincide)")
    ap.add_argument("--repeat", type=int, default=3, help="engine timing runs (median shown)")
    ap.add_argument("--no-scipy", action="store_true")
    ap.add_argument("--holm", action="store_true", help="only time Holm: hand-written vs statsmodels")
    args = ap.parse_args(argv)
    if args.holm:
        h = bench_holm()
        print(h.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        return {"holm": h}

    df, origin = load_problem(args.source, args.data, args.seed)
    n_items = df["question_id"].nunique()
    print(f"problem: {origin}: {n_items} items, {df['model'].nunique()} models, "
          f"evidence sizes {df.drop_duplicates('question_id')['evidence_type'].value_counts().sort_index().to_dict()}")

    times, cpu = [], []
    for _ in range(max(1, args.repeat)):
        t0, c0 = time.perf_counter(), time.process_time()
        eng = engine_table18(df, args.n_boot, args.seed)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    t_engine = statistics.median(times)
    print(f"engine: {len(eng)} rows, n_boot={args.n_boot}: median wall {t_engine:.3f} s over "
          f"{len(times)} runs (first {times[0]:.3f} s; median CPU {statistics.median(cpu):.3f} s)")
    result = {"engine_s": t_engine, "engine_first_s": times[0],
              "engine_cpu_s": statistics.median(cpu), "origin": origin}
    if args.no_scipy:
        print(eng.to_string(index=False))
        return result

    scipy_seed = args.seed + 1 if args.scipy_seed is None else args.scipy_seed
    t0, c0 = time.perf_counter(), time.process_time()
    ref = scipy_table18(df, args.n_boot, scipy_seed)
    t_scipy = time.perf_counter() - t0
    c_scipy = time.process_time() - c0
    both = eng.merge(ref, on=["row", "statistic"], how="inner", validate="one_to_one")
    if len(both) != len(eng):
        raise SystemExit(f"row mismatch between engine ({len(eng)}) and SciPy ({len(both)})")
    both["d_low"] = (both["ci_low"] - both["scipy_low"]).abs()
    both["d_high"] = (both["ci_high"] - both["scipy_high"]).abs()
    show = both[["row", "statistic", "n", "estimate", "ci_low", "ci_high", "scipy_low",
                 "scipy_high", "n_invalid"]]
    print(show.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    dmax = both.groupby("statistic")[["d_low", "d_high"]].max().max(axis=1)
    print(f"\nscipy.stats.bootstrap (seed {scipy_seed}): {len(ref)} calls: wall {t_scipy:.3f} s "
          f"(CPU {c_scipy:.3f} s)")
    print(f"engine: {t_engine:.3f} s   speed-up: {t_scipy / t_engine:.1f}x")
    print(f"max |endpoint difference|: drop {dmax['drop']:.3f} pp, "
          f"retention {dmax['retention']:.4f}")
    result.update(scipy_s=t_scipy, ratio=t_scipy / t_engine, max_diff_drop_pp=dmax["drop"],
                  max_diff_retention=dmax["retention"])
    return result


if __name__ == "__main__":
    main()
