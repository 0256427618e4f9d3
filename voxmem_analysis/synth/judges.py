"""Synthetic second-judge verdicts calibrated to Table 13 and Appendix C.5.

:func:`make_judge2` re-scores the 8K predictions of a synthetic release with the second
judge ``gpt-5.6-luna`` by flipping production verdicts, so that the analysis of
:mod:`voxmem_analysis.analysis.judges` reproduces the paper:

* every Table 13 slice: ``n`` (given by the predictions), both accuracies, ``Δ``,
  agreement and κ (:data:`TABLE13_TARGETS`);
* Appendix C.5 (:data:`C5_TARGETS`): agreement 97.95 %, κ 0.953, Spearman ρ 0.999 of the
  per-model accuracies, mean absolute per-model difference 0.86 pp, Gemini-family
  predictions 0.13 pp and all others 1.00 pp lower under the production judge
  (favoritism 0.88 pp), and 50 AR items credited by the second judge only, 32 of them
  capability refusals.

How (deterministic given the ``rng``)
-------------------------------------
1. *Slice totals.*  For every slice a flip pair ``(b, c)`` is chosen — ``b``
   production-only credits (production correct, second incorrect), ``c`` second-only
   credits — minimising a loss on the printed values (inside the printed rounding: almost
   no loss; outside: a steep one).  The four evidence slices and the four operation strata
   (IE/MSR/TET answerable, AR) each partition *All items*, so both families are solved by
   dynamic programming over the running totals ``(Σb, Σc)`` and joined at the *All items*
   total, which also carries the C.5 agreement/κ and the family split
   (``Σ_Gemini (c-b)`` and ``Σ_others (c-b)`` for the two family differences).
2. *Evidence × stratum grid.*  The 4 × 4 flip counts with those margins (15 valid cells)
   are found by iterative proportional fitting from the cell's candidate counts, rounded
   down, and completed by augmenting paths (a small max-flow), exploring in an order drawn
   from the rng.
3. *Per-model nets.*  Each model's net ``c - b`` is chosen (group sums fixed by step 1)
   by a seeded local search for the mean absolute per-model difference and the rank
   correlation; its ``b`` and ``c`` follow.
4. *Evidence × stratum × model.*  The integer flips per (cell, model) have the step-2 cell
   totals and the step-3 model totals (same transport solver), and the rows flipped in each
   (cell, model) are drawn from its candidates with the rng.
5. *AR wording.*  Of the AR second-only rows, 32/50 get a capability-refusal response
   (:data:`CAPABILITY_REFUSAL_TEXTS`, matched by
   :data:`voxmem_analysis.analysis.judges.CAPABILITY_REFUSAL_PATTERN`); the others a bare, lenient
   abstention the strict rubric rejects ("I don't know.", :data:`LENIENT_TEXTS`).

Candidates: a ``b`` flip needs a production-correct prediction; a ``c`` flip a
production-incorrect prediction *with a response* (graded false, or ungraded).  Provider
rejected rows stay rejected and failed rows stay failed (so incorrect) under the second
judge.

Interface used by the release generator (``synth/core.py``)
-----------------------------------------------------------
``make_judge2(preds, models, rng) -> (preds_updated, judge2)`` — note the **tuple**:
``preds_updated`` is ``preds`` (all budgets, same rows and order) with the ``response`` of
the AR 8K predictions that step 5 re-worded; ``judge2`` holds the 8K rows of
``preds_updated`` with ``judge``, ``verdict`` and ``judge_raw`` replaced.  Write
``preds_updated`` as the production predictions and ``judge2`` under ``judge2/``.

:func:`judge2_calibration_report` returns target vs achieved for every number.
:func:`standin_inputs` builds a stand-in item table, predictions and model registry from
``synth.design`` / ``synth/counts.json``: a small, fast input for tests (the release itself comes from
:mod:`voxmem_analysis.synth.release`).
"""
from __future__ import annotations

import json

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.io.scoring import ScoringRules, apply_scoring
from voxmem_analysis.analysis.judges import compare_judge_frames
from voxmem_analysis.synth import design as D
from voxmem_analysis.synth.counts import read_counts

__all__ = [
    "JUDGE2_NAME", "PRODUCTION_FAMILY", "TABLE13_TARGETS", "C5_TARGETS", "CAPABILITY_REFUSAL_TEXTS",
    "LENIENT_TEXTS", "plan_judge2_flips", "make_judge2", "judge2_calibration_report", "harness_to_tidy",
    "standin_inputs",
]

JUDGE2_NAME = "gpt-5.6-luna"
PRODUCTION_FAMILY = "Gemini"

#: Table 13 as printed: slice -> (n, production %, second %, Δ pp, agreement %, κ).
TABLE13_TARGETS: dict[str, tuple[int, float, float, float, float, float]] = {
    "All items": (11978, 31.1, 31.9, 0.8, 98.0, 0.953),
    "Speech Semantics": (3478, 48.0, 48.6, 0.6, 98.7, 0.974),
    "Speaker Identity": (2202, 37.0, 38.0, 1.0, 95.6, 0.907),
    "Paralinguistic Cues": (3958, 19.7, 20.5, 0.8, 98.3, 0.948),
    "Environmental Sound": (2340, 19.7, 20.7, 1.1, 98.4, 0.951),
    "IE (answerable)": (3447, 26.3, 26.4, 0.1, 97.5, 0.936),
    "MSR (answerable)": (3313, 35.0, 35.7, 0.7, 99.0, 0.978),
    "TET (answerable)": (3269, 33.2, 34.0, 0.8, 97.8, 0.950),
    "AR": (1949, 29.4, 31.8, 2.4, 97.3, 0.936),
}
#: Appendix C.5 (family differences are production - second, in pp).
C5_TARGETS: dict[str, float] = {
    "agreement": 97.95, "kappa": 0.953, "spearman_rho": 0.999, "mean_abs_model_diff_pp": 0.86,
    "family_diff_pp": -0.13, "others_diff_pp": -1.00, "favoritism_pp": 0.88,
    "ar_second_only": 50, "ar_second_only_capability_refusals": 32,
}
#: Printed decimals of the C.5 numbers.
_C5_DECIMALS = {"agreement": 2, "kappa": 3, "spearman_rho": 3, "mean_abs_model_diff_pp": 2,
                "family_diff_pp": 2, "others_diff_pp": 2, "favoritism_pp": 2,
                "ar_second_only": 0, "ar_second_only_capability_refusals": 0}
#: Tolerances of the calibration (brief: accuracies and agreement 0.5 pp, κ 0.01).
_T13_TOL = {"n": 0, "judge1": 0.5, "judge2": 0.5, "delta_pp": 0.5, "agreement": 0.5, "kappa": 0.01}
_T13_DECIMALS = {"n": 0, "judge1": 1, "judge2": 1, "delta_pp": 1, "agreement": 1, "kappa": 3}
_C5_TOL = {"agreement": 0.05, "kappa": 0.005, "spearman_rho": 0.002, "mean_abs_model_diff_pp": 0.05,
           "family_diff_pp": 0.05, "others_diff_pp": 0.05, "favoritism_pp": 0.05,
           "ar_second_only": 0, "ar_second_only_capability_refusals": 0}

#: Capability refusals (AR items only the lenient second judge credits).
CAPABILITY_REFUSAL_TEXTS: tuple[str, ...] = (
    "I do not have access to previous conversations.",
    "I'm sorry, but I do not have access to previous conversations, so I can't answer that.",
    "I cannot hear audio, so I am unable to tell.",
    "Sorry, I'm unable to process audio in this conversation.",
    "I don't have access to our past sessions, so I can't say.",
    "As an AI language model, I can't listen to recordings.",
)
#: Bare abstentions that do not attribute the gap to the conversation (Appendix C.4: not
#: sufficient; the second judge credits them anyway).  None matches the capability pattern.
LENIENT_TEXTS: tuple[str, ...] = (
    "I don't know.",
    "I'm not sure.",
    "Hard to say.",
    "I can't tell.",
    "Not sure, sorry.",
)

_EV = tx.EVIDENCE_TYPES
_ST = (*tx.ANSWERABLE_OPERATIONS, "answer_refusal")            # strata: IE, MSR, TET, AR
_EV_SLICES = tuple(tx.EVIDENCE_LABELS[e] for e in _EV)
_ST_SLICES = tuple(f"{tx.OPERATION_LABELS[o]} (answerable)" for o in tx.ANSWERABLE_OPERATIONS) + ("AR",)


# ============================================================================ harness -> tidy
def harness_to_tidy(frame: pl.DataFrame, rules=None) -> pl.DataFrame:
    """Harness-format rows (FORMATS §1) -> the columns :mod:`voxmem_analysis.analysis.judges` and
    :mod:`voxmem_analysis.analysis.ablation` read, scored by :func:`voxmem_analysis.io.scoring.apply_scoring`.

    A light in-memory stand-in for ``load_release`` (no files, no validation)."""
    def col(name, dtype=pl.Utf8):
        return pl.col(name) if name in frame.columns else pl.lit(None, dtype=dtype).alias(name)

    exprs = [
        pl.col("model"), pl.col("item_id"), col("question_id"),
        col("context_length").map_elements(tx.normalize_budget, return_dtype=pl.Utf8).alias("budget"),
        col("evidence_type").map_elements(tx.normalize_evidence, return_dtype=pl.Utf8).alias("evidence_type"),
        col("memory_operation").map_elements(tx.normalize_operation, return_dtype=pl.Utf8).alias("operation"),
        col("response"), col("verdict", pl.Boolean).cast(pl.Boolean).alias("verdict"), col("error"), col("judge"),
        col("allow_abstention", pl.Boolean).cast(pl.Boolean).alias("allow_abstention"),
    ]
    for extra in ("provider_rejected", "input_condition", "expected_response"):
        if extra in frame.columns:
            exprs.append(pl.col(extra))
    out = frame.select(exprs)
    if "expected_response" in out.columns:
        is_ar = pl.col("expected_response") == "insufficient_evidence"
    else:
        is_ar = pl.col("operation") == "answer_refusal"
    out = out.with_columns(is_ar.fill_null(False).alias("is_ar"), pl.lit(None, dtype=pl.Utf8).alias("source_operation"))
    return apply_scoring(out, rules or ScoringRules())


# ============================================================================ inputs
class _Rows:
    """The 8K predictions as arrays (sorted by model, item_id)."""

    def __init__(self, preds: pl.DataFrame, models):
        p = preds.with_row_index("_row")
        tidy = harness_to_tidy(p).with_columns(p.get_column("_row"))
        tidy = tidy.filter(pl.col("budget") == "8K").sort("model", "item_id")
        self.frame = tidy
        self.row = tidy.get_column("_row").to_numpy()
        self.models = sorted(tidy.get_column("model").unique().to_list())
        mi = {m: i for i, m in enumerate(self.models)}
        self.model = np.array([mi[m] for m in tidy.get_column("model").to_list()], dtype=int)
        ev = tidy.get_column("evidence_type").to_list()
        self.ev = np.array([_EV.index(e) if e in _EV else -1 for e in ev], dtype=int)
        ar = tidy.get_column("is_ar").to_numpy().astype(bool)
        op = tidy.get_column("operation").to_list()
        self.st = np.array([3 if a else (_ST.index(o) if o in _ST[:3] else -1) for a, o in zip(ar, op)], dtype=int)
        status = tidy.get_column("status").to_numpy()
        self.status = status
        self.scored = status != "provider_rejected"
        self.c1 = tidy.get_column("correct").fill_null(False).to_numpy().astype(bool)
        has_resp = np.isin(status, ["graded", "ungraded"])
        self.cand_b = self.scored & self.c1
        self.cand_c = self.scored & ~self.c1 & has_resp
        fam = {}
        if models is not None:
            mp = models.to_pandas() if isinstance(models, pl.DataFrame) else models
            fam = dict(zip(mp["model"], mp["family"]))
        self.is_family = np.array([fam.get(m) == PRODUCTION_FAMILY for m in self.models], dtype=bool)
        ok = (self.ev >= 0) & (self.st >= 0)
        if not ok[self.scored].all():
            bad = int((~ok & self.scored).sum())
            raise ValueError(f"{bad} scored 8K prediction(s) without a known evidence type / operation")

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Counts of ``mask`` by (evidence, stratum, model)."""
        out = np.zeros((4, 4, len(self.models)), dtype=int)
        np.add.at(out, (self.ev[mask], self.st[mask], self.model[mask]), 1)
        return out


# ============================================================================ losses
def _term(a, t, h):
    """~0 inside the printed rounding of ``t`` (half-unit ``h``), steep outside."""
    e = np.abs(np.asarray(a, dtype=float) - t) / h
    return 0.01 * e ** 2 + np.where(e > 1.0, 1.0 + (e - 1.0) ** 2, 0.0)


def _slice_loss(n, c1, b, c, target, *, agree_h=0.05, kappa_h=0.0005, extra=()):
    """Loss of flip counts (b, c) (arrays) for one slice with n scored and c1 correct."""
    _, _, acc2_t, delta_t, agree_t, kappa_t = target
    b = np.asarray(b, dtype=float)
    c = np.asarray(c, dtype=float)
    c2 = c1 - b + c
    acc2 = 100.0 * c2 / n
    delta = 100.0 * (c - b) / n
    po = 1.0 - (b + c) / n
    p1, p2 = c1 / n, c2 / n
    pe = p1 * p2 + (1 - p1) * (1 - p2)
    kappa = (po - pe) / (1 - pe)
    # Δ is derived from the two accuracies (published.csv: kind "derived"): half weight
    loss = _term(acc2, acc2_t, 0.05) + 0.5 * _term(delta, delta_t, 0.05) + _term(100 * po, agree_t, agree_h) \
        + _term(kappa, kappa_t, kappa_h)
    for (val, t, h) in extra:
        loss = loss + _term(val(b, c), t, h)
    return loss


def _candidates(n, c1, capb, capc, target, extra_c=None, slack=25.0):
    """Plausible (b, c) flip pairs of one slice with their losses (far-off pairs pruned)."""
    d = n * (1 - target[4] / 100.0)
    net = n * target[3] / 100.0
    b0, c0 = (d - net) / 2, (d + net) / 2
    w = max(8, int(0.2 * d))
    bs = np.arange(max(0, int(b0) - w), min(capb, int(b0) + w) + 1)
    cs = np.arange(max(0, int(c0) - w), min(capc, int(c0) + w) + 1)
    if extra_c is not None:
        cs = np.union1d(cs, np.arange(max(0, extra_c - 5), min(capc, extra_c + 5) + 1))
    bb, cc = np.meshgrid(bs, cs, indexing="ij")
    bb, cc = bb.ravel(), cc.ravel()
    loss = _slice_loss(n, c1, bb, cc, target)
    if extra_c is not None:
        loss = loss + _term(cc, extra_c, 0.5)
    keep = loss <= loss.min() + slack
    return bb[keep], cc[keep], loss[keep]


def _dp(cands, shape):
    """Min-cost choice of one candidate (b, c) per slice; returns (cost[B, C], backtrack)."""
    cost = np.full(shape, np.inf)
    cost[0, 0] = 0.0
    back = []
    for bb, cc, loss in cands:
        new = np.full(shape, np.inf)
        arg = np.full(shape, -1, dtype=int)
        for k in range(len(bb)):
            b, c = int(bb[k]), int(cc[k])
            if b >= shape[0] or c >= shape[1]:
                continue
            cand = cost[: shape[0] - b, : shape[1] - c] + loss[k]
            tgt = new[b:, c:]
            better = cand < tgt
            tgt[better] = cand[better]
            arg[b:, c:][better] = k
        back.append((bb, cc, arg))
        cost = new
    return cost, back


def _backtrack(back, B, C):
    out = []
    for bb, cc, arg in reversed(back):
        k = arg[B, C]
        b, c = int(bb[k]), int(cc[k])
        out.append((b, c))
        B, C = B - b, C - c
    return list(reversed(out))


# ============================================================================ transport
def _transport(row_tot, col_tot, cap, rng) -> np.ndarray:
    """Integer matrix x with row sums ``row_tot``, column sums ``col_tot``, 0 <= x <= cap.

    Iterative proportional fitting from ``cap`` (flips spread in proportion to the
    candidates), rounded down, then completed by unit augmenting paths (a max-flow on
    the bipartite graph, reverse edges allowed), searched in an rng-drawn order."""
    row_tot = np.asarray(row_tot, dtype=int)
    col_tot = np.asarray(col_tot, dtype=int)
    cap = np.asarray(cap, dtype=int)
    if row_tot.sum() != col_tot.sum():
        raise ValueError(f"transport margins differ: {row_tot.sum()} vs {col_tot.sum()}")
    x = cap.astype(float)
    for _ in range(200):
        rs = x.sum(1)
        x *= np.divide(row_tot, rs, out=np.zeros_like(rs), where=rs > 0)[:, None]
        cs = x.sum(0)
        x *= np.divide(col_tot, cs, out=np.zeros_like(cs), where=cs > 0)[None, :]
    x = np.minimum(np.floor(x), cap).astype(int)
    # keep the seed within the margins
    for i in range(len(row_tot)):
        while x[i].sum() > row_tot[i]:
            x[i, np.argmax(x[i])] -= 1
    for j in range(len(col_tot)):
        while x[:, j].sum() > col_tot[j]:
            x[np.argmax(x[:, j]), j] -= 1
    R, Cn = x.shape
    while True:
        need_r = row_tot - x.sum(1)
        need_c = col_tot - x.sum(0)
        if need_r.sum() == 0:
            return x
        # BFS from rows with spare supply to columns with spare demand
        starts = [i for i in rng.permutation(R) if need_r[i] > 0]
        parent_col = {}   # col j -> row i it was reached from
        parent_row = {i: None for i in starts}   # row i -> col j it was reached from (reverse edge)
        queue = list(starts)
        found = None
        while queue and found is None:
            i = queue.pop(0)
            for j in rng.permutation(Cn):
                if j in parent_col or x[i, j] >= cap[i, j]:
                    continue
                parent_col[j] = i
                if need_c[j] > 0:
                    found = j
                    break
                for i2 in rng.permutation(R):
                    if x[i2, j] > 0 and i2 not in parent_row:
                        parent_row[i2] = j
                        queue.append(i2)
        if found is None:
            raise ValueError("no integer flip assignment satisfies the margins within the candidates")
        j = found
        while True:
            i = parent_col[j]
            x[i, j] += 1
            jprev = parent_row[i]
            if jprev is None:
                break
            x[i, jprev] -= 1
            j = jprev


def _largest_remainder(total: int, weights: np.ndarray) -> np.ndarray:
    w = np.asarray(weights, dtype=float)
    if total <= 0 or w.sum() <= 0:
        return np.zeros(len(w), dtype=int)
    raw = total * w / w.sum()
    out = np.floor(raw).astype(int)
    rest = total - out.sum()
    order = np.argsort(-(raw - out), kind="stable")
    out[order[:rest]] += 1
    return out


# ============================================================================ per-model nets
def _midranks(a: np.ndarray) -> np.ndarray:
    _, inv, counts = np.unique(a, return_inverse=True, return_counts=True)
    end = np.cumsum(counts)
    return ((end - counts + 1 + end) / 2.0)[inv]


def _rank_rho(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rho (Pearson correlation of mid-ranks)."""
    rx, ry = _midranks(x), _midranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    den = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / den) if den > 0 else float("nan")


def _model_nets(n_m, c1_m, fam, G, O, capb_m, capc_m, rng, iters=6000):
    M = len(n_m)
    groups = [np.flatnonzero(fam), np.flatnonzero(~fam)]
    net = np.zeros(M, dtype=int)
    w = rng.gamma(4.0, size=M) * np.maximum(n_m - c1_m, 1)
    for g, tot in zip(groups, (G, O)):
        if len(g):
            sgn = 1 if tot >= 0 else -1
            net[g] = sgn * _largest_remainder(abs(tot), w[g])
    init = net.copy()
    acc1 = c1_m / n_m

    def loss(v):
        acc2 = (c1_m + v) / n_m
        meanabs = 100.0 * np.mean(np.abs(v) / n_m)
        rho = _rank_rho(acc1, acc2)
        feas = np.sum(np.maximum(0, v - capc_m)) + np.sum(np.maximum(0, -v - capb_m))
        return float(_term(meanabs, C5_TARGETS["mean_abs_model_diff_pp"], 0.005)
                     + _term(rho, C5_TARGETS["spearman_rho"], 0.0005)
                     + 1e-3 * np.sum((v - init) ** 2) / M + 100.0 * feas)

    best = loss(net)
    sizes = np.array([len(g) for g in groups], dtype=float)
    for _ in range(iters):
        g = groups[rng.choice(2, p=sizes / sizes.sum())]
        if len(g) < 2:
            continue
        i, j = rng.choice(g, size=2, replace=False)
        d = int(rng.integers(1, 3))
        net[i] += d
        net[j] -= d
        cur = loss(net)
        if cur <= best:
            best = cur
        else:
            net[i] -= d
            net[j] += d
    return net


# ============================================================================ plan
def plan_judge2_flips(preds: pl.DataFrame, models, rng: np.random.Generator) -> pd.DataFrame:
    """The integer flip plan: one row per (evidence_type, stratum, model) with the scored
    predictions ``n``, the production-correct ``correct_1``, ``production_only`` (b) and
    ``second_only`` (c) flips.  ``stratum`` is the operation for answerable items and
    ``answer_refusal`` for AR items.  Deterministic given ``rng``'s state."""
    plan, _ = _plan(_Rows(preds, models), rng)
    return plan


def _plan(R: _Rows, rng):
    M = len(R.models)
    n3 = R.count(R.scored)
    c13 = R.count(R.scored & R.c1)
    capb3 = R.count(R.cand_b)
    capc3 = R.count(R.cand_c)
    T = TABLE13_TARGETS

    ev_c = [_candidates(n3[e].sum(), c13[e].sum(), capb3[e].sum(), capc3[e].sum(), T[_EV_SLICES[e]])
            for e in range(4)]
    st_c = [_candidates(n3[:, s].sum(), c13[:, s].sum(), capb3[:, s].sum(), capc3[:, s].sum(), T[_ST_SLICES[s]],
                        extra_c=int(C5_TARGETS["ar_second_only"]) if s == 3 else None)
            for s in range(4)]
    shape = (int(max(sum(x[0].max() for x in ev_c), sum(x[0].max() for x in st_c))) + 1,
             int(max(sum(x[1].max() for x in ev_c), sum(x[1].max() for x in st_c))) + 1)
    ev_cost, ev_back = _dp(ev_c, shape)
    st_cost, st_back = _dp(st_c, shape)

    # All items: Table 13 row + C.5 agreement/kappa + family split
    n_all, c1_all = n3.sum(), c13.sum()
    Bg, Cg = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
    all_loss = _slice_loss(n_all, c1_all, Bg, Cg, T["All items"])
    all_loss = all_loss + _slice_loss(n_all, c1_all, Bg, Cg,
                                      (0, 0, T["All items"][2], T["All items"][3], C5_TARGETS["agreement"],
                                       C5_TARGETS["kappa"]), agree_h=0.005, kappa_h=0.0005)
    fam_rows = R.is_family[R.model] & R.scored
    n_f, n_o = int(fam_rows.sum()), int((R.scored & ~R.is_family[R.model]).sum())
    nets = np.arange(-shape[0], shape[1])
    fam_best = np.full(len(nets), np.inf)
    fam_G = np.zeros(len(nets), dtype=int)
    Gs = np.arange(-60, 61)
    for k, net in enumerate(nets):
        O = net - Gs
        d_f = -100.0 * Gs / max(n_f, 1)
        d_o = -100.0 * O / max(n_o, 1)
        l = (_term(d_f, C5_TARGETS["family_diff_pp"], 0.005) + _term(d_o, C5_TARGETS["others_diff_pp"], 0.005)
             + _term(d_f - d_o, C5_TARGETS["favoritism_pp"], 0.005))
        if n_f == 0:
            l = np.where(Gs == 0, 0.0, np.inf)
        i = int(np.argmin(l))
        fam_best[k], fam_G[k] = l[i], Gs[i]
    net_grid = Cg - Bg
    fam_loss = fam_best[net_grid + shape[0]]
    total = ev_cost + st_cost + all_loss + fam_loss
    B, C = np.unravel_index(int(np.argmin(total)), total.shape)
    B, C = int(B), int(C)
    G = int(fam_G[C - B + shape[0]])
    O = (C - B) - G

    ev_bc = _backtrack(ev_back, B, C)
    st_bc = _backtrack(st_back, B, C)

    # evidence x stratum grid
    b_grid = _transport([x[0] for x in ev_bc], [x[0] for x in st_bc], capb3.sum(2), rng)
    c_grid = _transport([x[1] for x in ev_bc], [x[1] for x in st_bc], capc3.sum(2), rng)

    # per-model nets, then b_m / c_m
    n_m = n3.sum((0, 1)).astype(float)
    c1_m = c13.sum((0, 1)).astype(float)
    capb_m, capc_m = capb3.sum((0, 1)), capc3.sum((0, 1))
    net = _model_nets(n_m, c1_m, R.is_family, G, O, capb_m, capc_m, rng)
    base = np.maximum(0, -net)
    b_m = base + _largest_remainder(B - int(base.sum()), c1_m)
    c_m = b_m + net

    # cell x model
    cells = [(e, s) for e in range(4) for s in range(4)]
    capb_cm = np.array([capb3[e, s] for e, s in cells])
    capc_cm = np.array([capc3[e, s] for e, s in cells])
    b_cm = _transport([b_grid[e, s] for e, s in cells], b_m, capb_cm, rng)
    c_cm = _transport([c_grid[e, s] for e, s in cells], c_m, capc_cm, rng)
    rows = []
    for ci, (e, s) in enumerate(cells):
        for m in range(M):
            if n3[e, s, m] == 0 and b_cm[ci, m] == 0 and c_cm[ci, m] == 0:
                continue
            rows.append({"evidence_type": _EV[e], "stratum": _ST[s], "model": R.models[m], "n": int(n3[e, s, m]),
                         "correct_1": int(c13[e, s, m]), "production_only": int(b_cm[ci, m]),
                         "second_only": int(c_cm[ci, m])})
    return pd.DataFrame(rows), (b_cm, c_cm, cells)


# ============================================================================ generator
def make_judge2(preds: pl.DataFrame, models, rng: np.random.Generator) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Second-judge (``gpt-5.6-luna``) re-scoring of the 8K predictions.

    Parameters
    ----------
    preds : polars.DataFrame
        Harness-format predictions (FORMATS §1) of every model and budget, scored by the
        production judge.
    models : pandas.DataFrame
        Model registry (``model, family``); the production judge's family is ``Gemini``.
    rng : numpy.random.Generator

    Returns
    -------
    (preds_updated, judge2) : tuple of polars.DataFrame
        ``preds_updated``: ``preds`` with the same rows, order and columns, where the
        ``response`` of the 8K AR predictions credited by the second judge only is replaced
        by a capability refusal (32 of 50) or a bare abstention (the rest);
        **write these as the production predictions**.  ``judge2``: the 8K rows of
        ``preds_updated`` with ``judge = "gpt-5.6-luna"``, ``verdict`` and ``judge_raw``
        replaced (provider-rejected rows stay rejected, failed rows failed).
    """
    R = _Rows(preds, models)
    _, (b_cm, c_cm, cells) = _plan(R, rng)
    M = len(R.models)
    flip_b = np.zeros(len(R.row), dtype=bool)
    flip_c = np.zeros(len(R.row), dtype=bool)
    for ci, (e, s) in enumerate(cells):
        in_cell = (R.ev == e) & (R.st == s)
        for m in range(M):
            sel = in_cell & (R.model == m)
            for k, cand, out in ((b_cm[ci, m], R.cand_b, flip_b), (c_cm[ci, m], R.cand_c, flip_c)):
                if k:
                    idx = np.flatnonzero(sel & cand)       # rows sorted by (model, item_id)
                    out[rng.choice(idx, size=int(k), replace=False)] = True
    c2 = (R.c1 & ~flip_b) | flip_c

    # AR wording of the second-only credits
    ar_c = np.flatnonzero(flip_c & (R.st == 3))
    ar_c = ar_c[rng.permutation(len(ar_c))]
    n_cap = int(round(len(ar_c) * C5_TARGETS["ar_second_only_capability_refusals"] / C5_TARGETS["ar_second_only"]))
    new_resp = {}
    for k, i in enumerate(ar_c):
        pool = CAPABILITY_REFUSAL_TEXTS if k < n_cap else LENIENT_TEXTS
        new_resp[int(R.row[i])] = pool[int(rng.integers(len(pool)))]

    resp = preds.get_column("response").to_list()
    for r, text in new_resp.items():
        resp[r] = text
    preds_updated = preds.with_columns(pl.Series("response", resp, dtype=pl.Utf8))

    # judge2 rows: the 8K rows in the input's order
    order = np.argsort(R.row, kind="stable")
    rows8 = R.row[order]
    graded2 = np.isin(R.status, ["graded", "ungraded"])[order]
    prod_verdict = preds.get_column("verdict").to_list() if "verdict" in preds.columns else [None] * preds.height
    verdict2, raw2 = [], []
    for g, r, v in zip(graded2, rows8, c2[order]):
        if g:
            verdict2.append(bool(v))
            raw2.append(json.dumps({"verdict": "correct" if v else "incorrect"}))
        else:  # rejected / failed: no response to judge
            verdict2.append(prod_verdict[r])
            raw2.append(None)
    j2 = preds_updated[rows8.tolist()].with_columns(
        pl.lit(JUDGE2_NAME).alias("judge"),
        pl.Series("verdict", verdict2, dtype=pl.Boolean),
        pl.Series("judge_raw", raw2, dtype=pl.Utf8),
    )
    return preds_updated, j2


# ============================================================================ report
def judge2_calibration_report(preds: pl.DataFrame, judge2: pl.DataFrame, models) -> pd.DataFrame:
    """Target vs achieved for Table 13 and Appendix C.5, computed by :mod:`voxmem_analysis.analysis.judges`.

    Returns ``artifact, row, column, target, achieved, diff, tolerance, within_tolerance,
    rounds_to_target`` (``rounds_to_target``: the achieved value printed at the paper's
    precision equals the paper's number).  Table 13's ``n`` and production accuracy come
    from the predictions (the release's calibration), the rest from the flips."""
    cmp = compare_judge_frames(harness_to_tidy(preds), harness_to_tidy(judge2), models=models)
    t = cmp.table.set_index("slice")
    rows = []
    for label, tgt in TABLE13_TARGETS.items():
        for col, target in zip(("n", "judge1", "judge2", "delta_pp", "agreement", "kappa"), tgt):
            a = float(t.loc[label, col])
            rows.append(("table13", label, col, float(target), a, _T13_TOL[col], _T13_DECIMALS[col]))
    s = dict(zip(cmp.summary["statistic"], cmp.summary["estimate"]))
    for k, target in C5_TARGETS.items():
        rows.append(("judges", "C.5", k, float(target), float(s[k]), _C5_TOL[k], _C5_DECIMALS[k]))
    df = pd.DataFrame(rows, columns=["artifact", "row", "column", "target", "achieved", "tolerance", "decimals"])
    df["diff"] = df["achieved"] - df["target"]
    df["within_tolerance"] = df["diff"].abs() <= df["tolerance"] + 1e-9
    df["rounds_to_target"] = [round(a + 1e-12 * np.sign(a), d) == round(t_, d)
                              for a, t_, d in zip(df["achieved"], df["target"], df["decimals"])]
    return df[["artifact", "row", "column", "target", "achieved", "diff", "tolerance", "within_tolerance",
               "rounds_to_target"]]


# ============================================================================ stand-in
def standin_inputs(seed: int = 0, budgets: tuple[str, ...] = tx.BUDGETS):
    """Stand-in (items, preds, models) for tests, without the release generator.

    Built from ``synth.design`` (cells, models, 8K rejections) and ``synth/counts.json`` (the
    calibrated correct counts): one harness row per (model, budget, item), responses
    rendered from the gold answer, a few failed generations.  Not the release generator.
    """
    counts = read_counts()

    rng = np.random.default_rng([seed, 7001])
    items = []
    q = 0
    by_cell: dict[tuple, list[str]] = {}
    ans_of: dict[tuple[str, str], list[str]] = {}
    for (op, ev), k in D.ANS_CELLS.items():
        for _ in range(k):
            q += 1
            qid = f"q_{q:05d}"
            by_cell.setdefault((ev, op, op), []).append(qid)
            ans_of.setdefault((ev, op), []).append(qid)
    for (ev, src), k in D.AR_CELLS.items():
        for _ in range(k):
            q += 1
            by_cell.setdefault((ev, D.AR, src), []).append(f"q_{q:05d}")
    words = ("blue", "Tom", "calm", "rain", "three", "the market route", "Maria", "excited", "a dog barking",
             "seven", "whispering", "the old bridge", "yes", "no", "Sarah", "church bells")
    meta = {}
    for cell, qids in by_cell.items():
        ev, op, src = cell
        for i, qid in enumerate(qids):
            paired = ans_of[(ev, src)][i % len(ans_of[(ev, src)])] if op == D.AR else None
            gold = words[int(rng.integers(len(words)))]
            meta[qid] = dict(evidence_type=ev, memory_operation=op, source=src, paired=paired, gold=gold)
    for qid, m in sorted(meta.items()):
        for b in budgets:
            items.append({
                "item_id": f"{qid}_{b.lower()}", "question_id": qid, "context_length": b,
                "family_id": f"fam_{(m['paired'] or qid)[2:]}", "evidence_type": m["evidence_type"],
                "memory_operation": m["memory_operation"], "subtype": None,
                "question_text": f"Question {qid}?",
                "expected_response": "insufficient_evidence" if m["memory_operation"] == D.AR else "answer",
                "gold_json": json.dumps(None if m["memory_operation"] == D.AR else m["gold"]),
                "answer_type": "categorical", "answer_normalization": "casefold",
                "paired_question_id": m["paired"],
            })
    items_df = pl.DataFrame(items, infer_schema_length=None)

    preds = []
    for model, b in D.runs():
        if b not in budgets:
            continue
        for cell in D.CELLS:
            qids = by_cell[cell]
            ev, op, src = cell
            rej = D.rejected_count(model, cell) if b == "8K" else 0
            order = rng.permutation(len(qids))
            rejected = set(order[:rej].tolist())
            pool = [i for i in order.tolist() if i not in rejected]
            k = min(counts.get((model, b, cell), 0), len(pool))
            correct = set(pool[:k])
            for i, qid in enumerate(qids):
                is_ar = op == D.AR
                gold = meta[qid]["gold"]
                row = {"item_id": f"{qid}_{b.lower()}", "question_id": qid, "context_length": b,
                       "evidence_type": ev, "memory_operation": op,
                       "expected_response": "insufficient_evidence" if is_ar else "answer",
                       "model": model, "allow_abstention": True, "system_prompt_delivery": "native",
                       "judge": "gemini-3.7-flash", "error": None, "synthetic": True}
                if i in rejected:
                    row.update(response=None, verdict=None, error=D.REJECTION_ERROR, judge_raw=None)
                elif i in correct:
                    row.update(response="insufficient evidence" if is_ar else gold, verdict=True,
                               judge_raw='{"verdict":"correct"}')
                elif rng.random() < 0.004:
                    row.update(response=None, verdict=None, error="generation failed: timeout after 600 s",
                               judge_raw=None)
                else:
                    wrong = words[int(rng.integers(len(words)))]
                    row.update(response=wrong if wrong != gold else f"not {gold}", verdict=False,
                               judge_raw='{"verdict":"incorrect"}')
                preds.append(row)
    preds_df = pl.DataFrame(preds, infer_schema_length=None)
    models_df = pd.DataFrame([{"model": m[0], "family": m[1], "access": m[2], "architecture": m[3],
                               "llm_params_b": m[4], "total_params_b": m[5], "in_64k_set": m[6], "order": i + 1}
                              for i, m in enumerate(D.MODELS)])
    return items_df, preds_df, models_df
