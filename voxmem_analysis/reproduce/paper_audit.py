"""Consistency audit of the paper's own published numbers (``audit.csv``): :func:`audit_published` checks the
identities that must hold among them (weighted means, sums, differences, ratios, integer counts), one row each:
``identity, artifact, description, relation, lhs, rhs, delta (lhs - rhs), tolerance, holds, detail``.

``relation``: ``=`` holds when ``|delta| <= tolerance``; ``<=`` when ``delta <= tolerance``; ``<``, ``>`` strictly;
``overlap``: two ranges of integer counts reconstructed from rounded percentages intersect (``delta``: their gap).
A number printed with ``d`` decimals stands for any value within ``h = 0.5 * 10**-d`` (counts: 0); the tolerance
of ``lhs = f(x)`` is ``h(lhs) + max |f(x') - f(x)|`` over the box ``|x'_i - x_i| <= h(x_i)``, at its corners
(every ``f`` here is monotone in each argument; beyond 12 inputs the per-argument changes are summed, exact for
the linear ones used).  Count level ("GRIM"): a percentage over ``n`` items must be ``100 k / n`` for an integer
``k`` within ``h``; applied only where the paper states ``n`` exactly (Table 2: one model, 669 items; Tables 15,
16 and the 64K row of Table 17: every 64K model ran all 799 items), not to 8K-32K means (provider rejections).
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.reproduce.published import MODELS_64K, OPEN_64K, PROPRIETARY_64K
from voxmem_analysis.reproduce.published import published as published_numbers

__all__ = ["audit_published", "AUDIT_COLUMNS", "half_unit", "grim_counts"]

AUDIT_COLUMNS = ("identity", "artifact", "description", "relation", "lhs", "rhs", "delta",
                 "tolerance", "holds", "detail")

EV = tuple(tx.EVIDENCE_LABELS[e] for e in tx.EVIDENCE_TYPES)
AUDIO_NATIVE = EV[1:]
OPS3 = tuple(tx.OPERATION_LABELS[o] for o in tx.ANSWERABLE_OPERATIONS)
SUBTYPES = tuple(tx.SUBTYPE_LABELS[s] for s in tx.SUBTYPES)
CLASSES = tuple(tx.ATTRIBUTION_LABELS[c] for c in tx.ATTRIBUTION_CLASSES)
_EPS = 1e-9
_DEFAULT_DECIMALS = {"pct": 1, "ratio": 3, "kappa": 3, "rho": 2, "p": 2, "count": 0}


def half_unit(decimals: int, unit: str) -> float:
    """Half a unit of the last printed digit (0 for counts)."""
    return 0.0 if unit == "count" else 0.5 * 10.0 ** (-int(decimals))


def grim_counts(p: float, n: int, h: float) -> list[int]:
    """Integers ``k`` with ``|100 k / n - p| <= h``."""
    lo = math.ceil((p - h) * n / 100.0 - _EPS)
    hi = math.floor((p + h) * n / 100.0 + _EPS)
    return list(range(max(lo, 0), min(hi, n) + 1))


@dataclass(frozen=True)
class _P:
    value: float
    half: float
    label: str


class _Audit:
    def __init__(self, pub: pd.DataFrame):
        pub = pub.copy()
        if "decimals" not in pub.columns:
            pub["decimals"] = [_DEFAULT_DECIMALS.get(u, 1) for u in pub["unit"]]
        self._idx = {(a, r, c): (float(v), half_unit(d, u), int(d))
                     for a, r, c, v, d, u in zip(pub["artifact"], pub["row"], pub["column"],
                                                 pub["value"], pub["decimals"], pub["unit"])}
        self.rows: list[dict] = []

    # --- access -----------------------------------------------------------------------
    def p(self, artifact: str, row: str, column: str) -> _P:
        try:
            v, h, d = self._idx[(artifact, row, column)]
        except KeyError:
            raise KeyError(f"published.csv has no ({artifact!r}, {row!r}, {column!r})") from None
        return _P(v, h, f"{artifact}[{row} | {column}]={v:.{d}f}")

    # --- recording ----------------------------------------------------------------------
    def _add(self, identity, artifact, description, relation, lhs, rhs, tolerance, holds, detail):
        delta = lhs - rhs if relation != "overlap" else None
        self.rows.append(dict(identity=identity, artifact=artifact, description=description,
                              relation=relation, lhs=float(lhs), rhs=float(rhs),
                              delta=float(delta) if delta is not None else float("nan"),
                              tolerance=float(tolerance), holds=bool(holds), detail=detail))

    def eq(self, identity: str, artifact: str, description: str, lhs: _P,
           f: Callable[..., float], args: Sequence[_P], formula: str, lhs_half: float | None = None):
        """``lhs == f(args)`` within the rounding slack."""
        vals = [a.value for a in args]
        rhs = f(*vals)
        slack = _deviation(f, vals, [a.half for a in args])
        tol = (lhs.half if lhs_half is None else lhs_half) + slack
        delta = lhs.value - rhs
        detail = f"{lhs.label} vs {formula} = {rhs:.4f}; inputs: " + ", ".join(a.label for a in args)
        self._add(identity, artifact, description, "=", lhs.value, rhs, tol, abs(delta) <= tol + _EPS, detail)

    def cmp(self, identity: str, artifact: str, description: str, lhs_value: float, relation: str,
            rhs_value: float, detail: str, tolerance: float = 0.0):
        holds = {"<=": lhs_value - rhs_value <= tolerance + _EPS, "<": lhs_value < rhs_value,
                 ">": lhs_value > rhs_value}[relation]
        self._add(identity, artifact, description, relation, lhs_value, rhs_value, tolerance, holds, detail)

    def overlap(self, identity: str, artifact: str, description: str,
                lhs: tuple[int, int], rhs: tuple[int, int], detail: str):
        gap = max(lhs[0] - rhs[1], rhs[0] - lhs[1], 0)
        sign = 1 if lhs[0] > rhs[1] else -1
        self.rows.append(dict(identity=identity, artifact=artifact, description=description,
                              relation="overlap", lhs=(lhs[0] + lhs[1]) / 2, rhs=(rhs[0] + rhs[1]) / 2,
                              delta=float(sign * gap), tolerance=0.0, holds=gap == 0,
                              detail=f"lhs {_rng(lhs)} vs rhs {_rng(rhs)}; {detail}"))

    def grim(self, identity: str, artifact: str, description: str, p: _P, n: int, label_n: str) -> list[int]:
        ks = grim_counts(p.value, n, p.half)
        nearest = min(range(n + 1), key=lambda k: abs(100.0 * k / n - p.value))
        rhs = 100.0 * nearest / n
        detail = (f"{p.label} over n={n} ({label_n}): attainable counts {ks or 'none'}; "
                  f"nearest {nearest}/{n} = {rhs:.3f}")
        self._add(identity, artifact, description, "=", p.value, rhs, p.half, bool(ks), detail)
        return ks

    def frame(self) -> pd.DataFrame:
        return pd.DataFrame(self.rows, columns=list(AUDIT_COLUMNS))


# --- helpers ---------------------------------------------------------------------------------
def _rng(r: tuple[int, int]) -> str:
    return str(r[0]) if r[0] == r[1] else f"{r[0]}..{r[1]}"


def _deviation(f: Callable[..., float], vals: Sequence[float], halves: Sequence[float]) -> float:
    """max |f(x') - f(x)| over the box x' in x +- h (corners; summed per argument if k > 12)."""
    base = f(*vals)
    idx = [i for i, h in enumerate(halves) if h > 0]
    if not idx:
        return 0.0
    if len(idx) <= 12:
        worst = 0.0
        for signs in itertools.product((-1.0, 1.0), repeat=len(idx)):
            x = list(vals)
            for i, s in zip(idx, signs):
                x[i] = vals[i] + s * halves[i]
            worst = max(worst, abs(f(*x) - base))
        return worst
    total = 0.0
    for i in idx:
        x_hi, x_lo = list(vals), list(vals)
        x_hi[i] += halves[i]
        x_lo[i] -= halves[i]
        total += max(abs(f(*x_hi) - base), abs(f(*x_lo) - base))
    return total


def _wmean(weights: Sequence[float]) -> Callable[..., float]:
    tot = float(sum(weights))
    return lambda *x: sum(w * v for w, v in zip(weights, x)) / tot


def _mean(*x: float) -> float:
    return sum(x) / len(x)


def _krange(ks: list[int]) -> tuple[int, int] | None:
    return (min(ks), max(ks)) if ks else None


def _sum_ranges(ranges: Sequence[tuple[int, int] | None]) -> tuple[int, int] | None:
    if any(r is None for r in ranges):
        return None
    return (sum(r[0] for r in ranges), sum(r[1] for r in ranges))


# --- the audit ---------------------------------------------------------------------------------
def audit_published(published: pd.DataFrame | None = None) -> pd.DataFrame:
    """Check the identities among the paper's published numbers; one row per identity."""
    if published is None:
        published = published_numbers()
    a = _Audit(published)
    _table15_16(a)
    _table18(a)
    _table2(a)
    _table13_judges(a)
    _table17(a)
    _counts_64k(a)
    _attribution(a)
    _groups_figures(a)
    return a.frame()


def _table15_16(a: _Audit) -> None:
    n = {e: int(a.p("table15", "n", e).value) for e in EV}
    n_ans, n_ar = int(a.p("table16", "n", "Answerable").value), int(a.p("table16", "n", "AR").value)
    w = [n[e] for e in EV]
    a.eq("table15.n_total", "table15", "Table 15 question counts sum to 799",
         a.p("table15", "n", "Overall"), lambda *x: sum(x), [a.p("table15", "n", e) for e in EV],
         "232+147+264+156")
    a.eq("table16.n_total", "table16", "Answerable + AR questions = 799 (Table 15 caption)",
         a.p("table15", "n", "Overall"), lambda x, y: x + y,
         [a.p("table16", "n", "Answerable"), a.p("table16", "n", "AR")], "669+130")
    rows15 = MODELS_64K + ("Mean proprietary (3)", "Mean open-weight (7)", "Mean all (10)")
    for m in rows15:
        a.eq(f"table15.overall_from_evidence[{m}]", "table15",
             "Table 15 Overall = item-weighted mean of the four evidence columns (232,147,264,156)",
             a.p("table15", m, "Overall"), _wmean(w), [a.p("table15", m, e) for e in EV],
             "Σ n_e·acc_e / 799")
    for m in MODELS_64K:
        a.eq(f"table15.overall_from_table16[{m}]", "table15",
             "Table 15 Overall = (669·Answerable + 130·AR)/799 from Table 16",
             a.p("table15", m, "Overall"), _wmean([n_ans, n_ar]),
             [a.p("table16", m, "Answerable"), a.p("table16", m, "AR")], "(669·ans + 130·AR)/799")
    for label, members in (("Mean proprietary (3)", PROPRIETARY_64K), ("Mean open-weight (7)", OPEN_64K),
                           ("Mean all (10)", MODELS_64K)):
        for c in EV + ("Overall",):
            a.eq(f"table15.mean_row[{label}|{c}]", "table15",
                 f"Table 15 '{label}' = unweighted mean of the model rows",
                 a.p("table15", label, c), _mean, [a.p("table15", m, c) for m in members],
                 f"mean over {len(members)} models")
    a.eq("table16.always_abstain", "table16", "Always abstain = 130/799 (App. D.3)",
         a.p("table16", "Always abstain", "Overall"), lambda x, y: 100.0 * x / y,
         [a.p("table16", "n", "AR"), a.p("table15", "n", "Overall")], "100·130/799")
    # Spearman rho of the two Table 16 columns, from the printed values (average ranks for ties).
    from scipy.stats import spearmanr
    ans = [a.p("table16", m, "Answerable").value for m in MODELS_64K]
    ar = [a.p("table16", m, "AR").value for m in MODELS_64K]
    rho = float(spearmanr(ans, ar).statistic)
    lhs = a.p("table16", "All", "Spearman rho")
    a._add("table16.spearman_from_columns", "table16",
           "Spearman rho between Table 16 columns, recomputed from the printed values (ties averaged)",
           "=", lhs.value, rho, lhs.half, abs(lhs.value - rho) <= lhs.half + _EPS,
           f"{lhs.label} vs spearman(Answerable, AR) over 10 models = {rho:.4f}")
    # Claims in §D.1 / §D.3 that are arithmetic on the printed numbers.
    g = a.p("table16", "Gemini-2.5-Pro", "AR").value * n_ar / (n_ans + n_ar)
    o = a.p("table15", "Gemini-2.5-Pro", "Overall").value
    a.cmp("table16.claim_gemini25_ar_share", "table16",
          "'more than half of [Gemini-2.5-Pro's] overall score comes from AR items'",
          g, ">", o / 2, f"130·67.7/799 = {g:.3f} pp vs half of overall 21.0 = {o / 2:.2f}")
    for e in AUDIO_NATIVE:
        pr, op = a.p("table15", "Mean proprietary (3)", e), a.p("table15", "Mean open-weight (7)", e)
        a.cmp(f"table15.claim_within_five[{e}]", "table15",
              "'on the three audio-native types the two groups are within five points'",
              pr.value - op.value, "<", 5.0, f"{pr.label} − {op.label}")


def _table18(a: _Audit) -> None:
    n = {e: int(a.p("table15", "n", e).value) for e in EV}
    for r in EV + ("Overall",):
        a.eq(f"table18.n[{r}]", "table18", "Table 18 n = Table 15 question count",
             a.p("table18", r, "n"), lambda x: x, [a.p("table15", "n", r)], "Table 15 n")
        a.eq(f"table18.64k_eq_table15[{r}]", "table18", "Table 18 64K = Table 15 'Mean all (10)'",
             a.p("table18", r, "64K"), lambda x: x, [a.p("table15", "Mean all (10)", r)],
             "Table 15 Mean all (10)")
        a.eq(f"table18.drop[{r}]", "table18", "Table 18 drop = 8K − 64K",
             a.p("table18", r, "drop"), lambda x, y: x - y,
             [a.p("table18", r, "8K"), a.p("table18", r, "64K")], "8K − 64K")
        a.eq(f"table18.retention[{r}]", "table18", "Table 18 retention = 64K / 8K",
             a.p("table18", r, "retention"), lambda x, y: y / x,
             [a.p("table18", r, "8K"), a.p("table18", r, "64K")], "64K / 8K")
        lo, hi = a.p("table18", r, "drop_lo"), a.p("table18", r, "drop_hi")
        d = a.p("table18", r, "drop")
        a.cmp(f"table18.drop_ci_order[{r}]", "table18", "drop CI contains the point estimate",
              max(lo.value - d.value, d.value - hi.value), "<=", 0.0, f"{lo.label} ≤ {d.label} ≤ {hi.label}")
        a.cmp(f"table18.drop_ci_excludes_zero[{r}]", "table18",
              "'Every interval on the drop excludes zero'", 0.0, "<", lo.value, lo.label)
        lo, hi = a.p("table18", r, "retention_lo"), a.p("table18", r, "retention_hi")
        rt = a.p("table18", r, "retention")
        a.cmp(f"table18.retention_ci_order[{r}]", "table18", "retention CI contains the point estimate",
              max(lo.value - rt.value, rt.value - hi.value), "<=", 0.0,
              f"{lo.label} ≤ {rt.label} ≤ {hi.label}")
    for c in ("8K", "64K"):
        a.eq(f"table18.overall_weighted[{c}]", "table18",
             "Table 18 Overall = item-weighted mean of the evidence rows",
             a.p("table18", "Overall", c), _wmean([n[e] for e in EV]), [a.p("table18", e, c) for e in EV],
             "Σ n_e·acc_e / 799")
    for e in EV:
        a.eq(f"fig6.retention_eq_table18[{e}]", "fig6", "Figure 6 retention (%) = 100 × Table 18 retention",
             a.p("fig6", e, "64K"), lambda x: 100.0 * x, [a.p("table18", e, "retention")],
             "100 × Table 18 retention")


def _table2(a: _Audit) -> None:
    rows = ("Speaker Identity", "Paralinguistic Cues", "Environmental Sound", "Speech Semantics")
    n = {r: int(a.p("table2", r, "n").value) for r in rows + ("All",)}
    a.eq("table2.n_sum", "table2", "Table 2 n rows sum to All (669)", a.p("table2", "All", "n"),
         lambda *x: sum(x), [a.p("table2", r, "n") for r in rows], "126+222+126+195")
    a.eq("table2.n_eq_table16", "table2", "Table 2 All n = Table 16 answerable n",
         a.p("table2", "All", "n"), lambda x: x, [a.p("table16", "n", "Answerable")], "669")
    for r in rows:
        a.eq(f"table2.n_eq_table15_minus_ar[{r}]", "table2",
             "answerable questions = Table 15 questions − Table 17 AR items, per evidence type",
             a.p("table2", r, "n"), lambda x, y: x - y,
             [a.p("table15", "n", r), a.p("table17", "AR items", r)], "Table 15 n − Table 17 AR items")
    for c in ("Full Audio", "Transcript Only"):
        a.eq(f"table2.all_weighted[{c}]", "table2", "Table 2 All = n-weighted mean of the rows",
             a.p("table2", "All", c), _wmean([n[r] for r in rows]), [a.p("table2", r, c) for r in rows],
             "Σ n·acc / 669")
        an = rows[:3]
        a.eq(f"table2.audio_native[{c}]", "table2",
             "§3.3 audio-native accuracy = n-weighted mean of the three audio-native rows",
             a.p("table2", "Audio-native", c), _wmean([n[r] for r in an]),
             [a.p("table2", r, c) for r in an], "Σ n·acc / 474")
    for r in rows + ("All",):
        a.eq(f"table2.delta[{r}]", "table2", "Table 2 Δ = Full Audio − Transcript Only",
             a.p("table2", r, "Δ"), lambda x, y: x - y,
             [a.p("table2", r, "Full Audio"), a.p("table2", r, "Transcript Only")], "Full − Transcript")
    # Count level: one model (Gemini-3.7-Flash) on n questions -> every percentage is k/n.
    k: dict[tuple[str, str], list[int]] = {}
    for r in rows + ("All",):
        for c in ("Full Audio", "Transcript Only"):
            k[(r, c)] = a.grim(f"table2.grim[{r}|{c}]", "table2",
                               "Table 2 accuracy is attainable as k/n correct answers (one model, n questions)",
                               a.p("table2", r, c), n[r], "Table 2 n")
    for c in ("Full Audio", "Transcript Only"):
        # the Speech Semantics count implied by the All row and the three audio-native rows
        k_all = k[("All", c)]
        others = [k[(r, c)] for r in rows[:3]]
        sem = a.p("table2", "Speech Semantics", c)
        if k_all and all(others):
            lo = min(k_all) - sum(max(o) for o in others)
            hi = max(k_all) - sum(min(o) for o in others)
            cand = [100.0 * x / n["Speech Semantics"] for x in range(lo, hi + 1)]
            implied = min(cand, key=lambda v: abs(v - sem.value))
            a._add(f"table2.counts_sem_from_all[{c}]", "table2",
                   "Speech Semantics count implied by the All row minus the audio-native rows "
                   "reproduces the printed Speech Semantics accuracy",
                   "=", sem.value, implied, sem.half, abs(sem.value - implied) <= sem.half + _EPS,
                   f"{sem.label}; All count {_rng(_krange(k_all))}/669 − audio-native counts "
                   f"{[_rng(_krange(o)) for o in others]} = {_rng((lo, hi))}/195 → {implied:.3f}%")
    for r in rows + ("All",):
        kf, kt = k[(r, "Full Audio")], k[(r, "Transcript Only")]
        if r == "Speech Semantics" and not kt:  # use the count implied by the All row instead
            kt = [x - sum(min(k[(q, "Transcript Only")]) for q in rows[:3]) for x in k[("All", "Transcript Only")]]
        d = a.p("table2", r, "Δ")
        diffs = sorted({100.0 * (x - y) / n[r] for x in kf for y in kt})
        if not diffs:
            continue
        best = min(diffs, key=lambda v: abs(v - d.value))
        a._add(f"table2.delta_counts[{r}]", "table2",
               "Table 2 Δ = (Full count − Transcript count)/n at the count level",
               "=", d.value, best, d.half, abs(d.value - best) <= d.half + _EPS,
               f"{d.label}; full counts {kf}, transcript counts {kt} over n={n[r]} → {best:.3f}")


def _table13_judges(a: _Audit) -> None:
    ev_rows, op_rows = EV, OPS3 + ("AR",)
    for name, grp in (("evidence", ev_rows), ("operation", op_rows)):
        a.eq(f"table13.n_sum[{name}]", "table13", f"Table 13 {name} rows' n sum to All",
             a.p("table13", "All", "n"), lambda *x: sum(x), [a.p("table13", r, "n") for r in grp],
             " + ".join(grp))
        w = [a.p("table13", r, "n").value for r in grp]
        for c in ("Gemini-3.7-Flash", "GPT-5.6-Luna", "Agreement"):
            a.eq(f"table13.all_weighted[{name}|{c}]", "table13", f"Table 13 All = n-weighted mean of the {name} rows",
                 a.p("table13", "All", c), _wmean(w), [a.p("table13", r, c) for r in grp],
                 "Σ n·x / 11,978")
    for r in ("All",) + ev_rows + op_rows:
        a.eq(f"table13.delta[{r}]", "table13", "Table 13 Δ = GPT-5.6-Luna − Gemini-3.7-Flash",
             a.p("table13", r, "Δ (pp)"), lambda x, y: y - x,
             [a.p("table13", r, "Gemini-3.7-Flash"), a.p("table13", r, "GPT-5.6-Luna")], "GPT − Gemini")
    # n are at most 15 models x questions (provider rejections leave the denominator).
    q = {e: a.p("table15", "n", e) for e in EV}
    for e in EV:
        nn = a.p("table13", e, "n")
        a.cmp(f"table13.n_le_15x_questions[{e}]", "table13", "Table 13 n ≤ 15 models × questions",
              nn.value, "<=", 15 * q[e].value, f"{nn.label} ≤ 15 × {q[e].label}")
    nn = a.p("table13", "AR", "n")
    a.cmp("table13.n_le_15x_questions[AR]", "table13", "Table 13 n ≤ 15 models × questions",
          nn.value, "<=", 15 * a.p("table16", "n", "AR").value, f"{nn.label} ≤ 15 × 130")
    implied = {o: math.ceil(a.p("table13", o, "n").value / 15) for o in OPS3}
    a._add("table13.implied_op_questions_sum", "table13",
           "answerable questions per operation implied by Table 13 (ceil(n/15)) sum to 669",
           "=", float(sum(implied.values())), a.p("table2", "All", "n").value, 0.0,
           sum(implied.values()) == a.p("table2", "All", "n").value,
           f"ceil(n/15): {implied}; assumes fewer than 15 rejected predictions per operation")
    # §C.5 vs Table 13
    a.eq("judges.n_eq_table13", "judges", "§C.5 11,978 predictions = Table 13 All n",
         a.p("judges", "All", "n"), lambda x: x, [a.p("table13", "All", "n")], "Table 13 All n")
    a.eq("judges.agreement_eq_table13", "judges", "§C.5 97.95% agreement rounds to Table 13's 98.0%",
         a.p("table13", "All", "Agreement"), lambda x: x, [a.p("judges", "All", "Agreement")],
         "§C.5 agreement")
    a.eq("judges.kappa_eq_table13", "judges", "§C.5 κ = Table 13 All κ",
         a.p("judges", "All", "κ"), lambda x: x, [a.p("table13", "All", "κ")], "Table 13 κ")
    a.eq("judges.favoritism", "judges", "favoritism 0.88 = (other − Gemini-family) shift = 1.00 − 0.13",
         a.p("judges", "Gemini favoritism", "Δ (pp)"), lambda x, y: x - y,
         [a.p("judges", "Other families", "Δ (pp)"), a.p("judges", "Gemini family", "Δ (pp)")],
         "1.00 − 0.13")
    cap, only = a.p("judges", "AR", "Capability refusals"), a.p("judges", "AR", "Second judge only")
    a.cmp("judges.capability_le_second_only", "judges",
          "capability refusals are a subset of the AR items only the second judge credits",
          cap.value, "<=", only.value, f"{cap.label} ≤ {only.label}")
    ar_n = a.p("table13", "AR", "n").value
    dis = (100 - a.p("table13", "AR", "Agreement").value) / 100 * ar_n
    a.cmp("judges.second_only_le_disagreements", "judges",
          "AR items credited only by the second judge ≤ AR disagreements implied by Table 13",
          only.value, "<=", dis, f"{only.label} ≤ (1 − 0.973)·1,949 = {dis:.1f}",
          tolerance=0.0005 * ar_n)
    # Table 13 All (8K, pooled) vs the §4.4 8K group means (5 proprietary, 10 open-weight).
    a.eq("table13.all_eq_group_means_8k", "table13",
         "Table 13 All (8K, production judge) = (5·proprietary + 10·open-weight 8K means)/15 "
         "(pooled vs model mean; 7 rejected predictions make this approximate)",
         a.p("table13", "All", "Gemini-3.7-Flash"), lambda x, y: (5 * x + 10 * y) / 15,
         [a.p("groups", "8K|Proprietary", "Overall"), a.p("groups", "8K|Open-weight", "Overall")],
         "(5·40.1 + 10·26.6)/15")


def _table17(a: _Audit) -> None:
    ev_n = [a.p("table17", "AR items", e).value for e in EV]
    op_n = [a.p("table17", "AR items", o).value for o in OPS3]
    a.eq("table17.ar_items[evidence]", "table17", "Table 17 AR items by evidence type sum to 130",
         a.p("table16", "n", "AR"), lambda *x: sum(x), [a.p("table17", "AR items", e) for e in EV],
         "37+21+42+30")
    a.eq("table17.ar_items[operation]", "table17", "Table 17 AR items by source operation sum to 130",
         a.p("table16", "n", "AR"), lambda *x: sum(x), [a.p("table17", "AR items", o) for o in OPS3],
         "47+49+34")
    for b in ("8K", "16K", "32K", "64K"):
        # both groupings cover the same 130 AR items and the same models
        f_ev, f_op = _wmean(ev_n), _wmean(op_n)
        ev_args = [a.p("table17", b, e) for e in EV]
        op_args = [a.p("table17", b, o) for o in OPS3]
        rhs = f_op(*[x.value for x in op_args])
        tol = _deviation(f_op, [x.value for x in op_args], [x.half for x in op_args])
        lhs_v = f_ev(*[x.value for x in ev_args])
        tol += _deviation(f_ev, [x.value for x in ev_args], [x.half for x in ev_args])
        a._add(f"table17.groupings_agree[{b}]", "table17",
               "AR-item-weighted mean over evidence types = over source operations (same 130 items)",
               "=", lhs_v, rhs, tol, abs(lhs_v - rhs) <= tol + _EPS,
               f"{b}: Σ n_e·acc_e/130 = {lhs_v:.4f} vs Σ n_o·acc_o/130 = {rhs:.4f}")
    ar64 = [a.p("table16", m, "AR") for m in MODELS_64K]
    a.eq("table17.64k_eq_table16_ar_mean", "table17",
         "Table 17 64K AR accuracy (AR-item-weighted over evidence) = mean of Table 16 AR column",
         _P(_wmean(ev_n)(*[a.p("table17", "64K", e).value for e in EV]),
            _deviation(_wmean(ev_n), [a.p("table17", "64K", e).value for e in EV],
                       [a.p("table17", "64K", e).half for e in EV]),
            "Σ n_e·Table17[64K|e]/130"),
         _mean, ar64, "mean of Table 16 AR over 10 models")
    a.eq("table17.8K_eq_table13_ar", "table17",
         "Table 17 8K AR accuracy (AR-item-weighted) = Table 13 AR (production judge, 8K); "
         "1 rejected prediction makes this approximate",
         a.p("table13", "AR", "Gemini-3.7-Flash"), _wmean(ev_n), [a.p("table17", "8K", e) for e in EV],
         "Σ n_e·Table17[8K|e]/130")
    for e in EV:
        a.eq(f"fig5.ar_eq_table17_32k[{e}]", "fig5", "Figure 5 AR row = Table 17 32K row",
             a.p("fig5", "AR", e), lambda x: x, [a.p("table17", "32K", e)], "Table 17 32K")
    a.eq("fig8.64k_ar_para_eq_table17", "fig8",
         "Figure 8 64K AR × Paralinguistic = Table 17 64K Paralinguistic (same ten models)",
         a.p("fig8", "64K|AR", "Paralinguistic Cues"), lambda x: x,
         [a.p("table17", "64K", "Paralinguistic Cues")], "Table 17 64K")


def _counts_64k(a: _Audit) -> None:
    """Integer consistency at 64K: every model ran every one of the 799 items (Table 14)."""
    n = {e: int(a.p("table15", "n", e).value) for e in EV}
    n_ans, n_ar = int(a.p("table16", "n", "Answerable").value), int(a.p("table16", "n", "AR").value)
    k15: dict[tuple[str, str], tuple[int, int] | None] = {}
    k16: dict[tuple[str, str], tuple[int, int] | None] = {}
    for m in MODELS_64K:
        for e in EV:
            k15[(m, e)] = _krange(a.grim(f"table15.grim[{m}|{e}]", "table15",
                                         "Table 15 cell attainable as k/n (model ran all items)",
                                         a.p("table15", m, e), n[e], "Table 15 caption"))
        k15[(m, "Overall")] = _krange(a.grim(f"table15.grim[{m}|Overall]", "table15",
                                             "Table 15 Overall attainable as k/799",
                                             a.p("table15", m, "Overall"), 799, "799"))
        for c, nn in (("Answerable", n_ans), ("AR", n_ar)):
            k16[(m, c)] = _krange(a.grim(f"table16.grim[{m}|{c}]", "table16",
                                         "Table 16 cell attainable as k/n", a.p("table16", m, c), nn,
                                         f"n={nn}"))
        s = _sum_ranges([k15[(m, e)] for e in EV])
        if s and k15[(m, "Overall")]:
            a.overlap(f"table15.counts_overall[{m}]", "table15",
                      "correct answers: Σ evidence-cell counts = Overall count",
                      k15[(m, "Overall")], s, "Overall k/799 vs Σ_e k_e/n_e")
        s16 = _sum_ranges([k16[(m, "Answerable")], k16[(m, "AR")]])
        if s16 and k15[(m, "Overall")]:
            a.overlap(f"table16.counts_overall[{m}]", "table16",
                      "correct answers: Table 16 answerable + AR counts = Table 15 Overall count",
                      k15[(m, "Overall")], s16, "Table 15 k/799 vs Table 16 k/669 + k/130")
    # ten-model means are K/(10 n)
    for c, nn in list(n.items()) + [("Overall", 799)]:
        ks = _krange(grim_counts(a.p("table15", "Mean all (10)", c).value, 10 * nn,
                                 a.p("table15", "Mean all (10)", c).half))
        s = _sum_ranges([k15[(m, c)] for m in MODELS_64K])
        if ks and s:
            a.overlap(f"table15.counts_mean_all[{c}]", "table15",
                      "Σ over models of cell counts = 'Mean all (10)' × 10 n", ks, s,
                      f"Mean all (10) as K/{10 * nn} vs Σ_m k_m")
    # AR correct answers at 64K, three ways
    ar_t16 = _sum_ranges([k16[(m, "AR")] for m in MODELS_64K])
    t17 = {}
    for c in EV + OPS3:
        nn = 10 * int(a.p("table17", "AR items", c).value)
        t17[c] = _krange(a.grim(f"table17.grim[64K|{c}]", "table17",
                                "Table 17 64K cell attainable as K/(10 models × AR items)",
                                a.p("table17", "64K", c), nn, "10 × Table 17 AR items"))
    ar_ev = _sum_ranges([t17[e] for e in EV])
    ar_op = _sum_ranges([t17[o] for o in OPS3])
    if ar_t16 and ar_ev:
        a.overlap("counts64k.ar_table16_vs_table17_evidence", "table17",
                  "64K correct AR answers: Σ Table 16 AR counts = Σ Table 17 64K counts by evidence type",
                  ar_t16, ar_ev, "Table 16 k/130 summed over models vs Table 17 K_e/(10 n_e)")
    if ar_ev and ar_op:
        a.overlap("counts64k.ar_table17_evidence_vs_operation", "table17",
                  "64K correct AR answers: Table 17 by evidence type = by source operation",
                  ar_ev, ar_op, "Σ_e K_e vs Σ_o K_o")
    # answerable audio-native correct at 64K vs the attribution population (4,740 − 4,137)
    an_all = _sum_ranges([k15[(m, e)] for m in MODELS_64K for e in AUDIO_NATIVE])
    an_ar = _sum_ranges([t17[e] for e in AUDIO_NATIVE])
    att, inc = a.p("population", "Attempts", "n").value, a.p("population", "Incorrect", "n").value
    if an_all and an_ar:
        rng = (an_all[0] - an_ar[1], an_all[1] - an_ar[0])
        corr = int(att - inc)
        a.overlap("counts64k.audio_native_correct_vs_population", "population",
                  "correct answerable audio-native answers at 64K (Table 15 counts − Table 17 AR counts) "
                  "= attempts − incorrect (4,740 − 4,137)",
                  rng, (corr, corr), "Σ_m Σ_audio-native k − Σ_e K_AR,e vs 603")
    sem_ans = _sum_ranges([k15[(m, "Speech Semantics")] for m in MODELS_64K])
    ans16 = _sum_ranges([k16[(m, "Answerable")] for m in MODELS_64K])
    if sem_ans and t17["Speech Semantics"] and an_all and an_ar and ans16:
        rng = (sem_ans[0] - t17["Speech Semantics"][1] + an_all[0] - an_ar[1],
               sem_ans[1] - t17["Speech Semantics"][0] + an_all[1] - an_ar[0])
        a.overlap("counts64k.answerable_table15_vs_table16", "table16",
                  "64K correct answerable answers: Table 15 counts − Table 17 AR counts = Σ Table 16 answerable",
                  rng, ans16, "all four evidence types")


def _attribution(a: _Audit) -> None:
    P = lambda r: a.p("population", r, "n")  # noqa: E731
    a.eq("population.attempts", "population", "4,740 attempts = 474 items × 10 systems",
         P("Attempts"), lambda x, y: x * y, [P("Answerable audio-native items"), P("Systems")], "474 × 10")
    a.eq("population.items_eq_table2", "population",
         "474 answerable audio-native items = Table 2 speaker + paralinguistic + environmental n",
         P("Answerable audio-native items"), lambda *x: sum(x),
         [a.p("table2", r, "n") for r in AUDIO_NATIVE], "126+222+126")
    a.eq("population.attributed", "population", "2,213 = 4,137 − 1,595 − 167 − 162",
         P("Attributed"), lambda w, x, y, z: w - x - y - z,
         [P("Incorrect"), P("Refusals"), P("Empty"), P("Truncated")], "4,137 − 1,595 − 167 − 162")
    a.eq("population.systems_eq_64k", "population", "10 systems = Table 17 64K models",
         P("Systems"), lambda x: x, [a.p("table17", "64K", "Models")], "Table 17")
    for r, col in (("Not attributable", "N.a."), ("Operation", "Oper.")):
        a.eq(f"population.{col}_eq_table20", "population", f"{r} count = Table 20 Total row {col}",
             P(r), lambda x: x, [a.p("table20", "Total", col)], "Table 20")
        a.eq(f"population.pct[{r}]", "population", f"{r} share = count / 2,213",
             a.p("population", r, "pct"), lambda x, y: 100.0 * x / y, [P(r), P("Attributed")],
             "100 × count / 2,213")
    a.eq("table20.total_eq_population", "table20", "Table 20 grand total = 2,213 attributed",
         a.p("table20", "Total", "Total"), lambda x: x, [P("Attributed")], "population")
    classes_t = CLASSES + ("Total",)
    for r in SUBTYPES + AUDIO_NATIVE + ("Total",):
        a.eq(f"table20.row_sum[{r}]", "table20", "Table 20 row: classes sum to Total",
             a.p("table20", r, "Total"), lambda *x: sum(x), [a.p("table20", r, c) for c in CLASSES],
             " + ".join(CLASSES))
    for name, grp in (("subtype", SUBTYPES), ("evidence", AUDIO_NATIVE)):
        for c in classes_t:
            a.eq(f"table20.col_sum[{name}|{c}]", "table20", f"Table 20 column: {name} rows sum to Total row",
                 a.p("table20", "Total", c), lambda *x: sum(x), [a.p("table20", r, c) for r in grp],
                 f"Σ over {name} rows")
    cells = [a.p("table20", s, "Cells") for s in SUBTYPES]
    a.cmp("table20.cells_le_30", "table20", "Cells ≤ 10 systems × 3 audio-native types = 30",
          max(c.value for c in cells), "<=", 30.0, ", ".join(c.label for c in cells))
    tots = [a.p("table20", s, "Total") for s in SUBTYPES]
    a.cmp("table20.claim_min_101", "table20", "'every subtype has at least 101 attributed errors'",
          101.0, "<=", min(t.value for t in tots), ", ".join(t.label for t in tots))
    a.eq("fig10.aggregation_oper_1_of_101", "fig10", "'1% (1 of 101) in Aggregation' = Table 20 Oper./Total",
         a.p("fig10", "Aggregation", "Oper."), lambda x, y: 100.0 * x / y,
         [a.p("table20", "Aggregation", "Oper."), a.p("table20", "Aggregation", "Total")], "100 × 1/101")
    a.eq("d5.cells", "d5", "40 cells = 10 models × 4 evidence types", a.p("d5", "cells", "n"),
         lambda x: 4 * x, [P("Systems")], "10 × 4")


def _groups_figures(a: _Audit) -> None:
    n = [a.p("table15", "n", e).value for e in EV]
    for g in ("Proprietary", "Open-weight"):
        a.eq(f"groups.32k_overall_weighted[{g}]", "groups",
             "32K group Overall = item-weighted mean of the group's evidence means (232,147,264,156)",
             a.p("groups", f"32K|{g}", "Overall"), _wmean(n),
             [a.p("groups", f"32K|{g}", e) for e in EV], "Σ n_e·acc_e / 799")
    best = [a.p("groups", f"32K|{m}", "Overall") for m in ("Qwen3.8-Omni-Flash", "Gemini-3.1-Pro",
                                                          "Gemini-3.8-Flash")]
    prop = a.p("groups", "32K|Proprietary", "Overall")
    rest = (5 * prop.value - sum(b.value for b in best)) / 2
    a.cmp("groups.32k_best3_feasible", "groups",
          "the other two proprietary models' 32K mean (from 5 × 33.0 − three best) ≤ the third best",
          rest, "<=", best[2].value, f"(5·{prop.label} − Σ best three)/2 = {rest:.2f}",
          tolerance=5 * prop.half / 2 + 3 * best[2].half / 2 + best[2].half)
    a.cmp("groups.claim_no_model_above_40", "groups", "'no evaluated model exceeds 40%' at 32K",
          best[0].value, "<=", 40.0, best[0].label)
