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

Small samples and extreme accuracies (:func:`proportion_coverage`, :func:`paired_coverage`): the
intervals ``slice`` and ``compare`` print for ``k`` of ``n`` (Wilson, percentile and BCa bootstrap) and for a
paired difference of ``n10`` and ``n01`` discordant pairs, computed once for every possible outcome; a true
value's coverage is then exact, the binomial (trinomial) probability of the outcomes whose interval holds it,
and likewise the share of outcomes the table flags (``ci_flag``) and the coverage of the unflagged ones.

Usage::

    .venv/bin/python benchmarks/coverage_study.py [--replicates 1000] [--n-boot 2000] [--seed 0]
        [--cluster-replicates 400] [--small-n 5,10,20,30,50,100] [--small-n-boot 2000]
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

from voxmem_analysis.analysis.verdicts import BootstrapSettings, slice_accuracy  # noqa: E402
from voxmem_analysis.stats import paired_bootstrap, paired_bootstrap_matrix  # noqa: E402


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


#: True accuracies of the small-sample study (0 and 1 included).
SMALL_P = (0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98, 1.0)
#: True (p10, p01) discordant shares of the paired study.
PAIRED_P = ((0.0, 0.0), (0.02, 0.0), (0.05, 0.0), (0.05, 0.05), (0.1, 0.02), (0.1, 0.1), (0.2, 0.05), (0.2, 0.2),
            (0.3, 0.1))
METHODS = ("wilson", "percentile", "bca")


def _proportion_intervals(n: int, n_boot: int, seed: int, ci: float) -> pd.DataFrame:
    """The interval ``slice`` prints for every ``k`` of ``n`` (items, one verdict each), by method."""
    rows = []
    for k in range(n + 1):
        df = pd.DataFrame({"item": np.arange(n), "correct": np.r_[np.ones(k), np.zeros(n - k)], "g": "x"})
        for method in METHODS:
            boot = BootstrapSettings(n_boot=n_boot, seed=seed, ci_level=ci,
                                     interval="percentile" if method == "wilson" else method)
            r = slice_accuracy(df, "g", scored=None, item="item", type_col=None, settings=boot,
                               interval="wilson" if method == "wilson" else "bootstrap").iloc[0]
            rows.append({"n": n, "k": k, "method": method, "low": r["accuracy_ci_low"] / 100,
                         "high": r["accuracy_ci_high"] / 100, "flag": r["accuracy_ci_flag"]})
    return pd.DataFrame(rows)


def _coverage_rows(table: pd.DataFrame, weight, truth: float, keys: dict) -> list[dict]:
    """Coverage of each method's intervals in ``table`` (one row per outcome), outcomes weighted by ``weight``."""
    out = []
    for method, g in table.groupby("method", sort=False):
        w = weight(g)
        hit = ((g["low"] <= truth + 1e-12) & (truth - 1e-12 <= g["high"])).to_numpy()
        flagged = (g["flag"] != "").to_numpy()
        kept = float(w[~flagged].sum())
        out.append({**keys, "method": method, "coverage": float(w @ hit), "flagged": float(w @ flagged),
                    "coverage_unflagged": float(w[~flagged] @ hit[~flagged]) / kept if kept > 1e-12 else np.nan,
                    "mean_width": float(w @ (g["high"] - g["low"]).fillna(0).to_numpy())})
    return out


def proportion_coverage(ns=(5, 10, 20, 30, 50, 100), ps=SMALL_P, n_boot: int = 2000, seed: int = 0,
                        ci: float = 0.95) -> pd.DataFrame:
    """Exact coverage of the accuracy intervals of ``slice`` at ``n`` items and true accuracy ``p``.

    Returns one row per ``n, p, method`` (``wilson``, ``percentile``, ``bca``): ``coverage`` (binomial
    probability of the ``k`` whose interval holds ``p``), ``flagged`` (probability of a flagged row),
    ``coverage_unflagged`` (coverage among the unflagged rows) and ``mean_width``.
    """
    from scipy.stats import binom

    out = []
    for n in ns:
        table = _proportion_intervals(n, n_boot, seed, ci)
        for p in ps:
            out += _coverage_rows(table, lambda g: binom.pmf(g["k"].to_numpy(), n, p), p, {"n": n, "p": p})
    return pd.DataFrame(out)


def paired_coverage(ns=(10, 20, 40), ps=PAIRED_P, n_boot: int = 2000, seed: int = 0, ci: float = 0.95) -> pd.DataFrame:
    """Exact coverage of the paired difference interval of ``compare`` (``diff = acc_a - acc_b``) at ``n`` pairs
    with true discordant shares ``(p10, p01)``: one row per ``n, p10, p01, method`` (``percentile``, ``bca``),
    columns as :func:`proportion_coverage`."""
    from scipy.stats import multinomial

    out = []
    for n in ns:
        rows = []
        for n10 in range(n + 1):
            for n01 in range(n + 1 - n10):
                a = np.r_[np.ones(n10), np.zeros(n01), np.zeros(n - n10 - n01)]
                b = np.r_[np.zeros(n10), np.ones(n01), np.zeros(n - n10 - n01)]
                for method in METHODS[1:]:
                    r = paired_bootstrap(a, b, "difference", n_boot=n_boot, seed=seed, ci_level=ci,
                                         interval=method).iloc[0]
                    rows.append({"n10": n10, "n01": n01, "method": method, "low": r["ci_low"], "high": r["ci_high"],
                                 "flag": r["ci_flag"]})
        table = pd.DataFrame(rows)
        for p10, p01 in ps:
            def weight(g, p10=p10, p01=p01):
                x = np.c_[g["n10"], g["n01"], n - g["n10"] - g["n01"]]
                return multinomial.pmf(x, n, [p10, p01, 1 - p10 - p01])
            out += _coverage_rows(table, weight, p10 - p01, {"n": n, "p10": p10, "p01": p01})
    return pd.DataFrame(out)


def _small_sample_report(ns: list[int], n_boot: int, seed: int) -> None:
    t0 = time.perf_counter()
    prop = proportion_coverage(ns, n_boot=n_boot, seed=seed)
    wide = prop.pivot_table(index=["n", "p"], columns="method", values=["coverage", "flagged", "coverage_unflagged"])
    print(f"\naccuracy of k of n items, exact coverage (%) over k ({n_boot} resamples per interval):")
    print((100 * wide).round(1).to_string())
    paired = paired_coverage([n for n in ns if n <= 40] or [10], n_boot=n_boot, seed=seed)
    wide = paired.pivot_table(index=["n", "p10", "p01"], columns="method",
                              values=["coverage", "flagged", "coverage_unflagged"])
    print(f"\npaired difference of n pairs, exact coverage (%) over (n10, n01):")
    print((100 * wide).round(1).to_string())
    print(f"small-sample study in {time.perf_counter() - t0:.0f} s")


def main(argv: list[str] | None = None) -> pd.DataFrame:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--replicates", type=int, default=1000)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cluster-replicates", type=int, default=400,
                    help="replicates of the clustered (family) scenario; 0 skips it")
    ap.add_argument("--small-n", default="5,10,20,30,50,100",
                    help="item counts of the small-sample study (comma-separated; empty skips it)")
    ap.add_argument("--small-n-boot", type=int, default=2000, help="resamples per interval of the small-sample study")
    ap.add_argument("--only-small", action="store_true", help="run the small-sample study only")
    args = ap.parse_args(argv)
    if args.small_n:
        _small_sample_report([int(x) for x in args.small_n.split(",")], args.small_n_boot, args.seed)
    if args.only_small:
        return None
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
