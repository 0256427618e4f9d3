"""Coverage study: do the engine's percentile 95% intervals cover the true drop and retention?

Datasets are simulated from a latent model whose population values are known exactly, the
engine (``paired_bootstrap_matrix``) is run on each, and the share of intervals containing the
truth is reported.  Models are fixed; items are the random sample, as in the paper's design.

Model (for every replicate): item difficulty ``z_i ~ N(0, sd_z)`` and context sensitivity
``s_i ~ N(0, 1)``; model ``j`` has ability ``a_j`` (fixed, evenly spaced around ``mu``)::

    P(correct_ij at baseline)   = logistic(a_j + z_i)
    P(correct_ij at comparison) = logistic(a_j + z_i - delta - tau * s_i)

The two conditions share one uniform with probability ``rho`` (paired outcomes, positive
correlation), otherwise use independent uniforms; marginals are exactly the probabilities
above.  Population accuracies are ``E[logistic(N(a_j, sd_z^2))]`` and
``E[logistic(N(a_j - delta, sd_z^2 + tau^2))]`` (Gauss-Hermite quadrature, 101 nodes), so

- mean rows (``aggregate="mean"``): drop = 100 (mean_j A8_j - mean_j A64_j),
  retention = mean_j A64_j / mean_j A8_j;
- per-series rows (``aggregate=None``): drop_j = 100 (A8_j - A64_j), retention_j = A64_j / A8_j
  (coverage pooled over the series).

Scenarios: ``evidence`` (156 items, 10 models, accuracies near 20% -> 13%: the smallest and
hardest evidence-type row of Table 18) and ``per_model`` (799 items, per-model rows).

Clustered scenario (:func:`cluster_coverage`): items come in *families* of 1-3 questions
(VoxMem's source question + refusal variant(s)) that share most of their difficulty and
context sensitivity: ``z_i = f_F + e_i`` with ``f_F ~ N(0, sd_f)``, ``e_i ~ N(0, sd_e)``,
``sd_f^2 + sd_e^2 = sd_z^2`` (so the marginal accuracies, and the truth, are unchanged), and
likewise for ``s``.  Item resampling then treats correlated questions as independent and
undercovers; family resampling (``clusters=``) should hold 95%.  The design effect
(family-level / item-level replicate variance) is reported.

Usage::

    .venv/bin/python benchmarks/coverage_study.py [--replicates 1000] [--n-boot 2000] [--seed 0]
        [--cluster-replicates 400]
"""
from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from voxmem_analysis.stats import paired_bootstrap_matrix  # noqa: E402


@dataclass(frozen=True)
class Scenario:
    name: str
    n_items: int
    n_models: int = 10
    aggregate: str | None = "mean"
    mu: float = -1.7
    sd_z: float = 1.2
    ability_range: tuple[float, float] = (-0.6, 0.6)
    delta: float = 0.6
    tau: float = 0.4
    rho: float = 0.6

    def abilities(self) -> np.ndarray:
        return self.mu + np.linspace(*self.ability_range, self.n_models)


SCENARIOS = (
    Scenario("evidence", n_items=156, aggregate="mean"),
    Scenario("per_model", n_items=799, aggregate=None, mu=-1.2),
)


def _expected_logistic(mean: np.ndarray, sd: float) -> np.ndarray:
    """E[logistic(X)], X ~ N(mean, sd^2), by Gauss-Hermite quadrature."""
    x, w = np.polynomial.hermite_e.hermegauss(101)          # weight exp(-x^2 / 2)
    w = w / w.sum()
    return (w[None, :] / (1 + np.exp(-(np.asarray(mean)[:, None] + sd * x[None, :])))).sum(1)


def truth(sc: Scenario) -> dict:
    """Population accuracies and the true statistics of a scenario."""
    a = sc.abilities()
    a8 = _expected_logistic(a, sc.sd_z)
    a64 = _expected_logistic(a - sc.delta, float(np.hypot(sc.sd_z, sc.tau)))
    return {"acc8": a8, "acc64": a64,
            "drop": 100 * (a8.mean() - a64.mean()), "retention": a64.mean() / a8.mean(),
            "drop_j": 100 * (a8 - a64), "retention_j": a64 / a8}


def simulate(sc: Scenario, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One dataset: (baseline, comparison) 0/1 matrices of shape (n_items, n_models)."""
    n, k = sc.n_items, sc.n_models
    z = sc.sd_z * rng.normal(size=(n, 1))          # item difficulty (mu is in the abilities)
    s = rng.normal(size=(n, 1))
    logit = z + sc.abilities()[None, :]
    p8 = 1 / (1 + np.exp(-logit))
    p64 = 1 / (1 + np.exp(-(logit - sc.delta - sc.tau * s)))
    u8 = rng.random((n, k))
    u64 = np.where(rng.random((n, k)) < sc.rho, u8, rng.random((n, k)))
    return (u8 < p8).astype(float), (u64 < p64).astype(float)


def coverage_study(n_replicates: int = 1000, n_boot: int = 2000, seed: int = 0,
                   scenarios=SCENARIOS, ci: float = 0.95) -> pd.DataFrame:
    """Empirical coverage of the engine's percentile intervals.

    Returns
    -------
    pandas.DataFrame
        One row per scenario x statistic: ``scenario, statistic, n_items, n_models,
        aggregate, truth`` (mean over series for per-series rows), ``trials`` (intervals
        checked), ``coverage``, ``coverage_se`` (binomial), ``miss_low`` / ``miss_high``
        (share of intervals entirely below / above the truth), ``mean_width``,
        ``invalid_share`` (invalid replicates / all), ``n_replicates, n_boot, seed``.
    """
    out = []
    for sc in scenarios:
        tv = truth(sc)
        hits: dict[str, list] = {"drop": [], "retention": []}
        widths: dict[str, list] = {"drop": [], "retention": []}
        invalid = {"drop": 0, "retention": 0}
        for r in range(n_replicates):
            rng = np.random.default_rng([seed, r])
            base, comp = simulate(sc, rng)
            res = paired_bootstrap_matrix(base, comp, aggregate=sc.aggregate, n_boot=n_boot,
                                          seed=r, ci_level=ci)
            for stat in ("drop", "retention"):
                rows = res[res["statistic"] == stat]
                t = tv[stat] if sc.aggregate == "mean" else tv[f"{stat}_j"][rows["series"]]
                lo, hi = rows["ci_low"].to_numpy(), rows["ci_high"].to_numpy()
                hits[stat].append(np.stack([lo > t, hi < t], axis=1))
                widths[stat].append(hi - lo)
                invalid[stat] += int(rows["n_invalid"].sum())
        for stat in ("drop", "retention"):
            h = np.concatenate(hits[stat])
            cov = 1 - h.any(axis=1).mean()
            trials = h.shape[0]
            t = tv[stat] if sc.aggregate == "mean" else float(np.mean(tv[f"{stat}_j"]))
            out.append({"scenario": sc.name, "statistic": stat, "n_items": sc.n_items,
                        "n_models": sc.n_models, "aggregate": sc.aggregate or "none",
                        "truth": t, "trials": trials, "coverage": cov,
                        "coverage_se": float(np.sqrt(cov * (1 - cov) / trials)),
                        "miss_low": float(h[:, 1].mean()), "miss_high": float(h[:, 0].mean()),
                        "mean_width": float(np.nanmean(np.concatenate(widths[stat]))),
                        "invalid_share": invalid[stat] / (trials * n_boot),
                        "n_replicates": n_replicates, "n_boot": n_boot, "seed": seed})
    return pd.DataFrame(out)


FAMILY_SCENARIO = Scenario("families", n_items=0, aggregate="mean", sd_z=1.2, tau=0.4)


def simulate_families(sc: Scenario, n_families: int, rng: np.random.Generator, share: float = 0.85):
    """One clustered dataset: (baseline, comparison, family) for families of 1-3 items.

    ``share`` is the part of the difficulty / sensitivity variance shared within a family.
    """
    sizes = rng.integers(1, 4, size=n_families)
    fam = np.repeat(np.arange(n_families), sizes)
    n, k = fam.size, sc.n_models
    sf, se = np.sqrt(share), np.sqrt(1 - share)
    z = sc.sd_z * (sf * rng.normal(size=n_families)[fam] + se * rng.normal(size=n))[:, None]
    s = (sf * rng.normal(size=n_families)[fam] + se * rng.normal(size=n))[:, None]
    logit = z + sc.abilities()[None, :]
    p8 = 1 / (1 + np.exp(-logit))
    p64 = 1 / (1 + np.exp(-(logit - sc.delta - sc.tau * s)))
    u8 = rng.random((n, k))
    u64 = np.where(rng.random((n, k)) < sc.rho, u8, rng.random((n, k)))
    return (u8 < p8).astype(float), (u64 < p64).astype(float), fam


def cluster_coverage(n_replicates: int = 400, n_boot: int = 1000, seed: int = 0, n_families: int = 150,
                     ci: float = 0.95) -> pd.DataFrame:
    """Coverage of the mean drop by item and by family resampling on correlated families.

    Returns
    -------
    pandas.DataFrame
        One row per resampling unit: ``unit, trials, truth, coverage, coverage_se,
        mean_width, design_effect`` (median over replicates; 1 for items).
    """
    sc = FAMILY_SCENARIO
    t = truth(sc)["drop"]
    res: dict[str, dict[str, list]] = {u: {"hit": [], "width": [], "deff": []} for u in ("item", "family")}
    for r in range(n_replicates):
        base, comp, fam = simulate_families(sc, n_families, np.random.default_rng([seed, 7, r]))
        for unit, cl in (("item", None), ("family", fam)):
            row = paired_bootstrap_matrix(base, comp, statistics="drop", n_boot=n_boot, seed=r, ci_level=ci,
                                          clusters=cl).iloc[0]
            res[unit]["hit"].append(row["ci_low"] <= t <= row["ci_high"])
            res[unit]["width"].append(row["ci_high"] - row["ci_low"])
            res[unit]["deff"].append(row["design_effect"])
    out = []
    for unit, v in res.items():
        cov = float(np.mean(v["hit"]))
        out.append({"unit": unit, "families": n_families, "trials": n_replicates, "truth": t, "coverage": cov,
                    "coverage_se": float(np.sqrt(cov * (1 - cov) / n_replicates)),
                    "mean_width": float(np.mean(v["width"])), "design_effect": float(np.median(v["deff"]))})
    return pd.DataFrame(out)


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cluster-replicates", type=int, default=400,
                    help="replicates of the clustered (family) scenario; 0 skips it")
    args = ap.parse_args(argv)
    for sc in SCENARIOS:
        tv = truth(sc)
        print(f"{sc.name}: n={sc.n_items}, k={sc.n_models}, aggregate={sc.aggregate}, "
              f"acc8 {100 * tv['acc8'].mean():.1f}%, acc64 {100 * tv['acc64'].mean():.1f}%, "
              f"drop {tv['drop']:.2f} pp, retention {tv['retention']:.3f}")
    t0 = time.perf_counter()
    res = coverage_study(args.replicates, args.n_boot, args.seed)
    took = time.perf_counter() - t0
    cols = ["scenario", "statistic", "trials", "truth", "coverage", "coverage_se", "miss_low",
            "miss_high", "mean_width", "invalid_share"]
    print(res[cols].to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"{args.replicates} replicates x {args.n_boot} resamples per scenario in {took:.1f} s")
    if args.cluster_replicates:
        cl = cluster_coverage(args.cluster_replicates, args.n_boot, args.seed)
        print("\ncorrelated families (1-3 questions sharing 85% of difficulty/sensitivity variance), mean drop:")
        print(cl.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    return res


if __name__ == "__main__":
    main()
