"""Solve for the integer correct counts of the synthetic release.

``solve()`` builds an integer program (``scipy.optimize.milp``): one integer
variable k[model, budget, cell] per calibration cell (design.CELLS: 11 answerable
operation x evidence cells and 11 refusal evidence x source-operation cells), an
L1 slack on every published number (design.targets(), retention ratios, the
App. D.5 error count) and a weak two-tier L1 pull toward a smooth multiplicative
prior (model ability x cell difficulty x length decay).

The solution is stored in ``counts.json`` (``python -m voxmem_analysis.synth.calibrate``
rewrites it) so that generating the release needs no solver and is byte-reproducible.
"""
from __future__ import annotations

import numpy as np

from voxmem_analysis.taxonomy import BUDGETS, EVIDENCE_TYPES
from voxmem_analysis.synth import design as D
from voxmem_analysis.synth.design import AR, CELLS, SEM
from voxmem_analysis.synth.counts import write_counts as write_file

# --- prior --------------------------------------------------------------------------
# Design choices of the prior (latent model), except where read from design's published dicts.
#: designed per-model overall accuracy (%) at 8K and 32K (64K = Table 15); unpublished
#: except the group means, the 32K top three (None below: read from design.TOP3_32K) and
#: the 8K top-3 spread.
_OVERALL_CHOICE = {
    # model: (8K, 32K)
    "Qwen3.8-Omni-Flash": (42.9, None), "Gemini-3.1-Pro": (42.5, None),
    "Gemini-3.8-Flash": (42.2, None), "Qwen3.5-Omni-Plus": (36.4, 30.3),
    "Gemini-2.5-Pro": (36.5, 26.3),
    "Ultravox-v0.6-Llama-3.1-8B": (31.0, 25.0), "Qwen3-Omni-30B-A3B": (30.5, 25.0),
    "Gemma-4-E4B-it": (27.5, 22.0), "Audio-Flamingo-Next": (27.0, 21.5),
    "Baichuan-Audio-7B": (25.6, 20.6), "Baichuan-Omni-1.5-7B": (22.0, 17.4),
    "FireRedAudio-9B": (21.1, 16.3), "MiniCPM-o-4.5": (29.8, 26.6),
    "MiMo-Audio-7B-Instruct": (27.6, 24.0), "Phi-4-Multimodal": (23.9, 20.6),
}
OVERALL_DESIGN = {m: (o8, D.TOP3_32K[m] if o32 is None else o32) for m, (o8, o32) in _OVERALL_CHOICE.items()}
#: AR propensity relative to the mean (64K models: Table 16 / 30.69)
AR_FACTOR_NON64 = {"Qwen3.8-Omni-Flash": 1.1, "Qwen3.5-Omni-Plus": 0.8, "MiniCPM-o-4.5": 0.9,
                   "MiMo-Audio-7B-Instruct": 0.45, "Phi-4-Multimodal": 1.3}
#: evidence profile at 8K relative to overall (Table 13 pooled) for models without 64K data
EV_PROFILE_8K = {ev: D.TABLE13_8K[ev][1] / D.TABLE13_8K["all"][1] for ev in EVIDENCE_TYPES}
#: relative answerable-cell difficulty within an evidence type (Figure 5, 32K; at 8K and 16K
#: the cells Figure 8 gives at 8K)
CELL_REL = {(op, ev): v for (op, ev), v in D.FIG5_32K.items()}
CELL_REL_8K = dict(CELL_REL)
CELL_REL_8K.update({(op, ev): v for (op, ev, b), v in D.FIG8.items() if b == "8K"})
#: the solver holds the 8K top three this far inside the paper's 'Top-3 spread' bound (pp)
TOP3_SPREAD_MARGIN = 0.05


def _overall(m: str, b: str) -> float:
    o8, o32 = OVERALL_DESIGN[m]
    if b == "8K":
        return o8
    if b == "32K":
        return o32
    if b == "16K":
        return o8 * (o32 / o8) ** 0.45
    return D.TABLE15[m][4]


def prior(seed: int = 20260) -> dict[tuple[str, str, tuple], float]:
    """Prior accuracy (fraction) per (model, budget, cell)."""
    rng = np.random.default_rng([seed, 1])
    mean_ar64 = np.mean([v[1] for v in D.TABLE16.values()])
    evs = EVIDENCE_TYPES
    # per-model per-evidence overall accuracy (incl. AR) by budget
    A: dict[tuple[str, str, str], float] = {}
    for m in D.MODEL_NAMES:
        if m in D.SET64:
            a64 = dict(zip(evs, D.TABLE15[m][:4]))
            r_m = D.TABLE15[m][4] / OVERALL_DESIGN[m][0]
            for ev in evs:
                rel = D.RETENTION[ev] / D.RETENTION["overall"]
                r = float(np.clip(r_m * rel * np.exp(rng.normal(0, 0.10)), 0.35, 0.98))
                a8 = a64[ev] / r
                A[m, ev, "64K"] = a64[ev]
                A[m, ev, "8K"] = a8
                A[m, ev, "16K"] = a8 * r ** 0.33
                A[m, ev, "32K"] = a8 * (OVERALL_DESIGN[m][1] / OVERALL_DESIGN[m][0]) * (rel ** 0.6)
        else:
            for ev in evs:
                noise = np.exp(rng.normal(0, 0.08))
                for b in ("8K", "16K", "32K"):
                    A[m, ev, b] = _overall(m, b) * EV_PROFILE_8K[ev] * noise
    P: dict[tuple[str, str, tuple], float] = {}
    for m, b in D.runs():
        arf = (D.TABLE16[m][1] / mean_ar64) if m in D.SET64 else AR_FACTOR_NON64[m]
        t17 = dict(zip(list(evs) + list(D.ANS), D.TABLE17[b]))
        ar_all = np.mean(D.TABLE17[b][4:])
        rel = CELL_REL_8K if b in ("8K", "16K") else CELL_REL
        for ev in evs:
            ar_cells = [c for c in CELLS if c[0] == ev and c[1] == AR]
            an_cells = [c for c in CELLS if c[0] == ev and c[1] != AR]
            n_ev = sum(D.cell_size(c) for c in CELLS if c[0] == ev)
            ar_p = {c: min(0.9, t17[ev] / 100 * arf * t17[c[2]] / ar_all) for c in ar_cells}
            ar_k = sum(ar_p[c] * D.cell_size(c) for c in ar_cells)
            need = max(0.0, A[m, ev, b] / 100 * n_ev - ar_k)
            w = {c: rel[(c[1], ev)] for c in an_cells}
            tot = sum(w[c] * D.cell_size(c) for c in an_cells)
            x = need / tot
            for c in an_cells:
                P[m, b, c] = float(np.clip(w[c] * x, 0.003, 0.95))
            P.update({(m, b, c): float(np.clip(v, 0.003, 0.95)) for c, v in ar_p.items()})
    return P


# --- integer program -------------------------------------------------------------------
class _LP:
    def __init__(self) -> None:
        self.n = 0
        self.cost: list[float] = []
        self.lb: list[float] = []
        self.ub: list[float] = []
        self.integ: list[int] = []
        self.rows: list[tuple[dict[int, float], float, float]] = []

    def var(self, lb=0.0, ub=np.inf, cost=0.0, integer=False) -> int:
        self.cost.append(cost); self.lb.append(lb); self.ub.append(ub); self.integ.append(int(integer))
        self.n += 1
        return self.n - 1

    def row(self, coefs: dict[int, float], lo: float, hi: float) -> None:
        self.rows.append((coefs, lo, hi))

    def soft(self, coefs: dict[int, float], lo: float, hi: float, w: float) -> None:
        """lo <= expr <= hi with L1 slack of cost w per unit."""
        sp = self.var(cost=w); sn = self.var(cost=w)
        c = dict(coefs); c[sp] = -1.0; c[sn] = 1.0
        self.row(c, lo, hi)

    def solve(self, time_limit: float = 120.0):
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import coo_matrix
        r, cidx, vals, lo, hi = [], [], [], [], []
        for i, (coefs, a, b) in enumerate(self.rows):
            for j, v in coefs.items():
                r.append(i); cidx.append(j); vals.append(v)
            lo.append(a); hi.append(b)
        A = coo_matrix((vals, (r, cidx)), shape=(len(self.rows), self.n)).tocsr()
        res = milp(np.array(self.cost), constraints=LinearConstraint(A, lo, hi),
                   integrality=np.array(self.integ), bounds=Bounds(self.lb, self.ub),
                   options={"time_limit": time_limit, "mip_rel_gap": 1e-4, "disp": False})
        if res.x is None:
            raise RuntimeError(f"calibration MILP failed: {res.message}")
        return res


def _acc_coefs(kv, t: D.Target) -> dict[int, float]:
    """Linear coefficients (in %) of a target over the k variables."""
    coefs: dict[int, float] = {}
    cells = t.cells()
    if t.agg == "pooled":
        tot = sum(D.denom(m, c) for m in t.models for c in cells)
        for m in t.models:
            for c in cells:
                coefs[kv[m, t.budget, c]] = 100.0 / tot
    else:
        for m in t.models:
            tot = sum(D.denom(m, c) for c in cells)
            for c in cells:
                coefs[kv[m, t.budget, c]] = coefs.get(kv[m, t.budget, c], 0.0) + 100.0 / tot / len(t.models)
    return coefs


def solve(time_limit: float = 300.0) -> dict[tuple[str, str, tuple], int]:
    P = prior()
    lp = _LP()
    kv: dict[tuple[str, str, tuple], int] = {}
    for m, b in D.runs():
        for c in CELLS:
            n = D.denom(m, c)
            kv[m, b, c] = k = lp.var(0, n, 0.0, integer=True)
            target = P[m, b, c] * n
            t1 = 1.0 + 0.06 * n
            # two-tier L1 pull toward the prior: k - target = (p1 + p2) - (n1 + n2)
            p1 = lp.var(0, t1, 1.0); p2 = lp.var(cost=6.0)
            n1 = lp.var(0, t1, 1.0); n2 = lp.var(cost=6.0)
            lp.row({k: 1.0, p1: -1.0, p2: -1.0, n1: 1.0, n2: 1.0}, target, target)
    W = 2000.0  # per pp outside the printed band
    for t in D.targets():
        coefs = _acc_coefs(kv, t)
        lp.soft(coefs, t.value - t.half_width + 1e-6, t.value + t.half_width - 1e-6, W * t.weight)
    # retention ratios: mean64 - R * mean8 in [-tol*mean8, tol*mean8]  (approx. with fixed mean8)
    for key, R in D.RETENTION.items():
        sel = dict(ev=(key,)) if key != "overall" else {}
        c8 = _acc_coefs(kv, D.Target("x", "", "", 0, "8K", D.SET64, "mean", **sel))
        c64 = _acc_coefs(kv, D.Target("x", "", "", 0, "64K", D.SET64, "mean", **sel))
        coefs = dict(c64)
        for j, v in c8.items():
            coefs[j] = coefs.get(j, 0.0) - R * v
        lp.soft(coefs, -0.0004 * 30, 0.0004 * 30, W * 5)
    # App. D.5: 64K, ten models, audio-native answerable: 4,740 attempts, 4,137 incorrect
    coefs = {kv[m, "64K", c]: 1.0 for m in D.SET64 for c in CELLS if c[0] != SEM and c[1] != AR}
    correct = D.D5["attempts"] - D.D5["incorrect"]
    lp.soft(coefs, correct, correct, W)
    # the three strongest at 8K lie within the published spread of each other and above the rest
    spread = round(D.published_value("groups", "8K|Top-3 spread", "Overall") - TOP3_SPREAD_MARGIN, 6)
    def overall(m, b):
        tot = sum(D.denom(m, c) for c in CELLS)
        return {kv[m, b, c]: 100.0 / tot for c in CELLS}
    top = D.TOP3_8K
    for i, a in enumerate(top):
        for bm in top[i + 1:]:
            coefs = overall(a, "8K")
            for j, v in overall(bm, "8K").items():
                coefs[j] = coefs.get(j, 0.0) - v
            lp.soft(coefs, -spread, spread, W)
        for o in D.MODEL_NAMES:
            if o in top:
                continue
            coefs = overall(a, "8K")
            for j, v in overall(o, "8K").items():
                coefs[j] = coefs.get(j, 0.0) - v
            lp.soft(coefs, 0.5, np.inf, W)
    # no model above 40% at 32K; the top three of Section 4.2 are the top three
    for o in D.MODEL_NAMES:
        lim = 39.9 if o in D.TOP3_32K else min(D.TOP3_32K.values()) - 0.5
        lp.soft(overall(o, "32K"), 0.0, lim, W)
    # mild monotonicity: answerable accuracy should not rise with length by > 2 items
    for m in D.MODEL_NAMES:
        bs = [b for b in BUDGETS if (m, b) in {(x, y) for x, y in D.runs()}]
        for c in CELLS:
            if c[1] == AR:
                continue
            for b1, b2 in zip(bs, bs[1:]):
                lp.soft({kv[m, b2, c]: 1.0, kv[m, b1, c]: -1.0}, -np.inf, 1.0, 3.0)
    res = lp.solve(time_limit)
    return {key: int(round(res.x[j])) for key, j in kv.items()}


def write_counts(counts, path=None) -> None:
    """Store ``counts`` in ``synth/counts.json`` (or ``path``), in model, budget, cell order."""
    order = sorted(counts.items(), key=lambda kv: (D.MODEL_NAMES.index(kv[0][0]), BUDGETS.index(kv[0][1]),
                                                   CELLS.index(kv[0][2])))
    write_file(dict(order), path)


if __name__ == "__main__":  # pragma: no cover
    import time
    t0 = time.time()
    counts = solve()
    write_counts(counts)
    print(f"solved in {time.time() - t0:.1f}s; {len(counts)} counts written")


def target_from_counts(counts, t: "D.Target") -> float:
    cells = t.cells()
    if t.agg == "pooled":
        k = sum(counts[m, t.budget, c] for m in t.models for c in cells)
        n = sum(D.denom(m, c) for m in t.models for c in cells)
        return 100.0 * k / n
    vals = [100.0 * sum(counts[m, t.budget, c] for c in cells) / sum(D.denom(m, c) for c in cells)
            for m in t.models]
    return float(np.mean(vals))


def evaluate_counts(counts) -> list[tuple]:
    out = []
    for t in D.targets():
        v = target_from_counts(counts, t)
        out.append((t.artifact, t.row, t.column, t.value, round(v, 3), round(v - t.value, 3)))
    return out
