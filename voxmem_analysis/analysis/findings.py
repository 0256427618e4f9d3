"""Findings as sentences: what this release's tables show (with their counts), next to what the paper reports.

A claim is made only when its rule holds at :data:`ALPHA` (two-sided), else the sentence says what cannot be
detected with the counts at hand: "highest / lowest" needs an exact sign test over models (one model: an exact
test on its items); "same / opposite order" an exact permutation test on the ranks, never over fewer than
:data:`MIN_CORRELATION_POINTS` points; "falls / rises" an interval excluding zero that resamples the sampled unit;
"most frequent" is by count, the runner-up tested; a change correlated with its own baseline is named as coupled.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from voxmem_analysis import taxonomy as tx

__all__ = ["Finding", "ALPHA", "MIN_CORRELATION_POINTS", "exact_rank_p", "sign_test", "evidence_types",
           "operation_evidence", "refusal_profile", "answerable_vs_refusal", "length_change", "baseline_sensitivity",
           "odds_per_doubling", "judge_agreement", "capability_refusals", "transcript_ablation", "composition",
           "history_growth", "evidence_share", "error_profile", "fmt_p"]

_MINUS = "\u2212"
#: Two-sided level of every "detectable" in the sentences.
ALPHA = 0.05
#: The fewest points a correlation is stated over, in a sentence or on a figure: with four points the
#: smallest two-sided exact permutation p of a rank correlation is 2/4! = 0.083, so nothing is detectable.
MIN_CORRELATION_POINTS = 5
#: Largest n for which :func:`exact_rank_p` enumerates every permutation (8! = 40,320).
_EXACT_MAX = 8


@dataclass(frozen=True)
class Finding:
    """``topic``, ``release`` (the sentences about this release) and ``paper`` (the paper's own finding, or None)."""

    topic: str
    release: str
    paper: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.topic}: {self.release}" + (f"\n  {self.paper}" if self.paper else "")

    def _repr_markdown_(self) -> str:
        return (f"**{self.topic}.** {self.release}" + (f"\n\n*{self.paper}*" if self.paper else ""))


# ----------------------------------------------------------------------------- rules
def exact_rank_p(x, y) -> float:
    """Two-sided exact permutation p of Spearman's ρ (mid-ranks); NaN beyond n = 8 or for a constant side."""
    from scipy.stats import rankdata

    rx, ry = rankdata(np.asarray(x, float)), rankdata(np.asarray(y, float))
    n = len(rx)
    if n < 2 or n > _EXACT_MAX or np.ptp(rx) == 0 or np.ptp(ry) == 0:
        return float("nan")
    perms = np.array(list(itertools.permutations(ry)))
    cx, cp = rx - rx.mean(), perms - perms.mean(axis=1, keepdims=True)
    rho = (cp @ cx) / np.sqrt((cp ** 2).sum(axis=1) * (cx ** 2).sum())
    observed = abs(float(rho[0]))
    return float(np.mean(np.abs(rho) >= observed - 1e-12))


def sign_test(a, b) -> tuple[int, int, float]:
    """``(wins, losses, p)``: how often ``a`` exceeds ``b`` pairwise and the exact two-sided sign-test p (ties out)."""
    from scipy.stats import binomtest

    d = np.asarray(a, float) - np.asarray(b, float)
    d = d[np.isfinite(d)]
    wins, losses = int((d > 0).sum()), int((d < 0).sum())
    return wins, losses, float(binomtest(wins, wins + losses).pvalue) if wins + losses else float("nan")


def _binomial_p(k: int, n: int) -> float:
    from scipy.stats import binomtest

    return float(binomtest(int(k), int(n)).pvalue) if n else float("nan")


def _fisher_p(k1: int, n1: int, k2: int, n2: int) -> float:
    from scipy.stats import fisher_exact

    return float(fisher_exact([[k1, n1 - k1], [k2, n2 - k2]]).pvalue)


def _lead(acc_a: np.ndarray, acc_b: np.ndarray, n_a: float, n_b: float) -> tuple[bool, str]:
    """Whether ``a`` is detectably above ``b`` and the evidence in words: an exact sign test over models, or for one
    model Fisher's exact test on its items."""
    if len(acc_a) == 1:
        if not (_finite(n_a) and _finite(n_b) and n_a and n_b):
            return False, "no item counts"
        ka, kb = round(acc_a[0] * n_a / 100), round(acc_b[0] * n_b / 100)
        p = _fisher_p(ka, int(n_a), kb, int(n_b))
        return p < ALPHA, f"{ka} of {int(n_a)} against {kb} of {int(n_b)} questions right, Fisher's exact {fmt_p(p)}"
    wins, losses, p = sign_test(acc_a, acc_b)
    k = int(np.isfinite(np.asarray(acc_a, float) - np.asarray(acc_b, float)).sum())   # models with both
    return p < ALPHA, f"higher in {wins} of {k} models, sign test {fmt_p(p)}"


# ----------------------------------------------------------------------------- wording
def _num(x: float, digits: int = 1) -> str:
    text = f"{x:.{digits}f}"
    if float(text) == 0:
        text = f"{0:.{digits}f}"
    return text.replace("-", _MINUS)


def _pct(x: float, digits: int = 1) -> str:
    return f"{_num(x, digits)}%"


def _signed(x: float, digits: int = 1) -> str:
    text = _num(x, digits)
    return text if text.startswith(_MINUS) or float(text.replace(_MINUS, "-")) == 0 else "+" + text


def _ci(lo: float, hi: float, digits: int = 1, level: float = 0.95) -> str:
    if lo is None or hi is None or not (math.isfinite(lo) and math.isfinite(hi)):
        return "no interval"
    return f"{round(level * 100):d}% CI {_num(lo, digits)} to {_num(hi, digits)}"


_SUPERSCRIPT = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def fmt_p(p: float) -> str:
    """``p = 0.14``, ``p = 0.003``, ``p = 1.4 × 10⁻⁵⁴`` (as the tables print p-values)."""
    if p is None or not math.isfinite(p):
        return "p not available"
    if p >= 0.001:
        return f"p = {p:.3f}" if p < 0.1 else f"p = {p:.2f}"
    if p == 0:
        return "p < 10\u207b\u00b3\u2070\u2070"
    mant, exp = f"{p:.1e}".split("e")
    mant = mant[:-2] if mant.endswith(".0") else mant
    return f"p = {mant} \u00d7 10{str(int(exp)).translate(_SUPERSCRIPT)}"


def _and(items: list[str]) -> str:
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _ev(code) -> str:
    return tx.EVIDENCE_LABELS.get(str(code), str(code))


def _op(code) -> str:
    return tx.OPERATION_LABELS.get(str(code), str(code))


def _count(n) -> str:
    return f"{int(n):,}"


def _plural(k: int, word: str) -> str:
    return f"{_count(k)} {word}{'s' if k != 1 else ''}"


def _models(k: int) -> str:
    return _plural(k, "model")


def _finite(x) -> bool:
    try:
        return x is not None and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def _in_order(codes) -> tuple:
    """Evidence-type codes in the paper's order (the order ties are named in)."""
    order = {e: i for i, e in enumerate(tx.EVIDENCE_TYPES)}
    return tuple(sorted(codes, key=lambda e: (order.get(e, len(order)), str(e))))


def _ranked(values: dict[str, float]) -> list[tuple[str, float]]:
    """``(name, value)`` highest first (ties in the given order)."""
    return sorted(((k, v) for k, v in values.items() if _finite(v)), key=lambda kv: -kv[1])


def _tied(a: float, b: float, digits: int = 1) -> bool:
    return round(a, digits) == round(b, digits)


def _direction(lo: float, hi: float, zero: float = 0.0) -> str:
    """``below`` / ``above`` when the interval excludes ``zero``, else ``includes``."""
    if not (_finite(lo) and _finite(hi)):
        return "unknown"
    return "below" if hi < zero else ("above" if lo > zero else "includes")


def _change_words(lo: float, hi: float) -> str:
    return {"below": "falls", "above": "rises"}.get(_direction(lo, hi), "changes")


def _zero_note(lo: float, hi: float, n) -> str:
    return (f", which includes zero: no change detectable with {_plural(n, 'question')}"
            if _direction(lo, hi) == "includes" else "")


# ----------------------------------------------------------------------------- the paper's findings
_PAPER_EVIDENCE = ("The paper reports that speech semantics is remembered far better than who spoke (speaker "
                   "identity), how it was said (paralinguistic cues) or what was audible (environmental sound): at "
                   "32K, proprietary models average 55.6% on speech semantics against 32.7%, 20.0% and 21.9% "
                   "(\u00a74.2, Finding 2).")

_PAPER_OPEV = ("The paper reports that difficulty depends on the pairing of operation and evidence type: at 32K, "
               "temporal evolution tracking reaches 44.5% on speech semantics but 3.4% on paralinguistic and 1.2% "
               "on environmental evidence, while multi-session reasoning stays at 25.2-43.1% on every type "
               "(\u00a74.3, Finding 3).")

_PAPER_REFUSAL = ("The paper reports that answer refusal runs opposite to answering: models abstain more "
                  "successfully on paralinguistic and environmental questions (34.3% and 34.2% at 32K) than on "
                  "speech semantics and speaker identity (19.9% and 16.2%) (\u00a74.3, Finding 4).")

_PAPER_T16 = ("The paper reports that answerable and refusal accuracy rank the models almost independently "
              "(Spearman \u03c1 = \u22120.02 over the ten 64K models, Appendix D.3, Table 16).")

_PAPER_LENGTH = ("The paper reports that accuracy falls from 8K to 64K for every model and all four evidence "
                 "types, every interval of Table 18 excluding zero; at 64K models retain 70.3% of their 8K accuracy "
                 "on speech semantics, 69.8% on paralinguistic cues, 66.5% on speaker identity and 63.2% on "
                 "environmental sound (\u00a74.4, Finding 5; Appendix D.4).")

_PAPER_D5 = ("The paper reports that over the 40 model \u00d7 evidence cells retention shows no detectable relation "
             "to 8K accuracy (Spearman \u03c1 = 0.03) while the change in points correlates strongly with it "
             "(\u03c1 = \u22120.77): low accuracy and sensitivity to length are different failure modes "
             "(Appendix D.5).")

_PAPER_JUDGES = ("The paper reports that the two judges agree closely at 8K, with the largest gap on AR items, "
                 "where the second judge credits capability refusals that the rubric counts as incorrect "
                 "(Table 13, Appendix C.5).")

_PAPER_CAPABILITY = ("The paper reports that of the 50 AR predictions the second judge credits and the production "
                     "judge rejects, 32 are capability refusals (\u201cI do not have access to previous "
                     "conversations\u201d), which the rubric of Appendix C.4 counts as incorrect (Table 13).")

_PAPER_T2 = ("The paper reports that transcript-only input reduces accuracy on audio-native questions from "
             "46.2% to 4.4%, but on speech semantics only from 75.9% to 71.0% (\u00a73.3, Table 2).")

_PAPER_COMP = ("The paper reports 799 questions: 669 answerable (IE, MSR, TET) and 130 answer-refusal items "
               "derived from them; speech-semantics IE is excluded by design (\u00a73, Table 3).")

_PAPER_SCALE = ("The paper reports histories of about 2.5 to 20 minutes of audio from 8K to 64K, each longer history "
                "strictly extending the shorter one with haystack and filler sessions only (\u00a73.2, Appendix B.6).")

_PAPER_ROLES = ("The paper reports that the evidence of each question is the same at every budget, the longer "
                "histories adding only haystack and filler sessions (Appendix B.6).")

_PAPER_ERRORS = ("The paper reports that IE errors are dominated by binding failures (46%), MSR errors split between "
                 "localization (48%) and operation execution (32%), TET errors are mostly localization (55%); speaker "
                 "errors are most often binding (48%), paralinguistic errors localization (63%), environmental "
                 "errors split between localization (41%) and unsupported answers (39%) (\u00a74.4, Finding 6).")


# ----------------------------------------------------------------------------- main results (notebook 10)
def _by_budget(at: list[tuple[str, tuple, float]]) -> str:
    """``"Paralinguistic Cues at 8K (19.7%) and 16K (17.2%); Environmental Sound at 64K (12.4%)"``."""
    groups: dict[tuple, list[str]] = {}
    for b, who, v in at:
        groups.setdefault(who, []).append(f"{b} ({_pct(v)})")
    return "; ".join(_and([_ev(e) for e in who]) + (" (tied)" if len(who) > 1 else "") + " at " + _and(places)
                     for who, places in groups.items())


def _separations(checks: list[tuple[str, str, str, bool, str]], verb: str) -> str:
    """Where a budget's leader is not detectably ``verb`` the next type (``checks``: ``(budget, leader, next,
    detectable, evidence)``), with the evidence."""
    failed = [c for c in checks if not c[3]]
    which = "highest" if verb == "above" else "lowest"
    if not checks or (not failed and len(checks) == 1):
        return "" if not checks else f" It is detectably {verb} the next ({checks[0][4]})."
    if not failed:
        return f" At every budget the {which} type is detectably {verb} the next."
    if len(failed) == 1:
        b, a, c, _, why = failed[0]
        return f" At {b}, {_ev(a)} is not detectably {verb} {_ev(c)} ({why})."
    return (f" At {_and([c[0] for c in failed])} the {which} type is not detectably {verb} the next ("
            + "; ".join(f"{c[0]}: {_ev(c[2] if verb == 'below' else c[1])} {c[4]}" for c in failed) + ").")


def evidence_types(panels: pd.DataFrame) -> Finding:
    """Which evidence type is best and worst remembered at each budget, from Figure 4's panels
    (:func:`~voxmem_analysis.analysis.results.evidence_panels`; the mean over each budget's models)."""
    models = panels[panels["kind"] == "model"]
    tops, lows, counts, up, down, nq = [], [], {}, [], [], {}
    for b in [b for b in tx.BUDGETS if b in set(models["budget"].astype(str))]:
        at = models[models["budget"].astype(str) == b]
        acc = at.pivot_table(index="row", columns="evidence_type", values="accuracy", observed=True)
        n = at.groupby("evidence_type", observed=True)["n"].max()
        ranked = _ranked(acc.mean().to_dict())
        if len(ranked) < 2:
            continue
        counts[b] = len(acc)
        top, low = ranked[0][1], ranked[-1][1]
        tops.append((b, _in_order(e for e, v in ranked if _tied(v, top)), top))
        lows.append((b, _in_order(e for e, v in ranked if _tied(v, low)), low))
        nq[b] = int(n.get(ranked[0][0], 0))
        for (a, _), (c, _), out in ((ranked[0], ranked[1], up), (ranked[-1], ranked[-2], down)):
            hi, lo = (a, c) if out is up else (c, a)
            ok, why = _lead(acc[hi].to_numpy(float), acc[lo].to_numpy(float), n.get(hi), n.get(lo))
            out.append((b, a, c, ok, why))
    if not tops:
        return Finding("Evidence types", "No accuracy by evidence type could be compared (fewer than two evidence "
                       "types scored at every budget).", _PAPER_EVIDENCE)
    ks = sorted(set(counts.values()))
    who = ("one model" if ks == [1] else f"mean over {_models(ks[0])}" if len(ks) == 1
           else "unweighted mean over the models run at each budget, " + _and([str(counts[b]) for b in counts]))
    names = _and([_ev(e) for e in tops[0][1]])
    verb = "have" if len(tops[0][1]) > 1 else "has"
    if len(tops) == 1:
        text = (f"At {tops[0][0]} ({who}), {names} {verb} the highest accuracy of the evidence types "
                f"({_pct(tops[0][2])}, {_plural(nq[tops[0][0]], 'question')}).")
    elif len({t for _, t, _ in tops}) == 1:
        sizes = set(nq.values())
        text = (f"{names} {verb} the highest accuracy of the evidence types at every budget run ({who}; "
                + (f"{_plural(sizes.pop(), 'question')} at each" if len(sizes) == 1 else "questions: "
                   + _and([f"{nq[b]} at {b}" for b in nq])) + "): " + _and([f"{_pct(v)} at {b}" for b, _, v in tops])
                + ".")
    else:
        text = f"The evidence type with the highest accuracy differs between budgets ({who}): {_by_budget(tops)}."
    text += _separations([c for c, (_, t, _) in zip(up, tops) if len(t) == 1], "above")
    text += f" Lowest: {_by_budget(lows)}."
    text += _separations([c for c, (_, t, _) in zip(down, lows) if len(t) == 1], "below")
    return Finding("Evidence types", text, _PAPER_EVIDENCE)


def operation_evidence(oe: pd.DataFrame, per_model: pd.DataFrame | None = None) -> Finding:
    """The easiest and hardest answerable operation × evidence cell and the widest spread within one operation, from
    Figure 5's cells; ``per_model`` (accuracy by operation and evidence type) lets the spread be tested."""
    cells = oe[(oe["operation"] != "answer_refusal") & oe["accuracy"].notna()]
    if cells.empty:
        return Finding("Operation x evidence", "No answerable operation x evidence cell could be computed.",
                       _PAPER_OPEV)
    b = ", ".join(sorted(set(cells["budget"].astype(str)), key=lambda x: tx.BUDGETS.index(x)
                         if x in tx.BUDGETS else 99))
    k = int(cells["n_models"].max()) if "n_models" in cells else 0
    hi, lo = cells.loc[cells["accuracy"].idxmax()], cells.loc[cells["accuracy"].idxmin()]

    def cell(r) -> str:
        return f"{_op(r['operation'])} \u00d7 {_ev(r['evidence_type'])} ({_pct(r['accuracy'])}, {int(r['n_questions'])} questions)"

    at = f"At {b}" + (f" (mean over {_models(k)})" if k > 1 else " (one model)" if k == 1 else "")
    if len(cells) == 1:
        return Finding("Operation x evidence", f"{at} only one answerable cell was computed: {cell(hi)}.", _PAPER_OPEV)
    spreads = cells.groupby("operation")["accuracy"].agg(lambda s: s.max() - s.min())
    widest = spreads.idxmax()
    inner = cells[cells["operation"] == widest].set_index("evidence_type")
    top, bottom = inner["accuracy"].idxmax(), inner["accuracy"].idxmin()
    text = (f"{at}, answerable operation \u00d7 evidence cells range from {cell(lo)} to {cell(hi)}; within one "
            f"operation the evidence type moves accuracy by up to {_num(spreads.max())} points ({_op(widest)}, "
            f"{_ev(top)} against {_ev(bottom)}")
    if per_model is None or per_model.empty:
        return Finding("Operation x evidence", text + "; not tested without per-model accuracies).", _PAPER_OPEV)
    pm = per_model[per_model["operation"] == widest].pivot_table(index="model", columns="evidence_type",
                                                                 values="accuracy", observed=True)
    ok, why = _lead(pm[top].to_numpy(float), pm[bottom].to_numpy(float), inner.loc[top, "n_questions"],
                    inner.loc[bottom, "n_questions"])
    text += f": {_ev(top)} {why}" + ("" if ok else "; not detectable") + ")."
    return Finding("Operation x evidence", text, _PAPER_OPEV)


def refusal_profile(oe: pd.DataFrame) -> Finding:
    """Answer-refusal accuracy by evidence type, its order against the answerable one decided on the ranks."""
    ok = oe["accuracy"].notna()
    ar_rows = oe[(oe["operation"] == "answer_refusal") & ok].set_index("evidence_type")
    ar = ar_rows["accuracy"]
    ans = oe[(oe["operation"] != "answer_refusal") & ok].groupby("evidence_type")["accuracy"].mean()
    if ar.empty:
        return Finding("Answer refusal", "No answer-refusal item was scored.", _PAPER_REFUSAL)
    k = int(ar_rows["n_models"].max()) if "n_models" in ar_rows else 0
    who = f" (mean over {_models(k)})" if k > 1 else " (one model)" if k == 1 else ""
    text = (f"Answer-refusal accuracy{who} is " + _and([f"{_pct(v)} on {_ev(e)} ({int(ar_rows.loc[e, 'n_questions'])} "
                                                         f"questions)" for e, v in _ranked(ar.to_dict())]) + ".")
    common = [e for e in ar.index if e in ans.index]
    if len(common) < 3:
        return Finding("Answer refusal", text, _PAPER_REFUSAL)
    x, y = ar[common].astype(float), ans[common].astype(float)
    p = exact_rank_p(x, y)
    ry, rx = y.rank(ascending=False), x.rank(ascending=False)
    pairs = list(itertools.combinations(common, 2))
    opposite = sum((rx[a] - rx[b]) * (ry[a] - ry[b]) < 0 for a, b in pairs)
    how = ("exactly the reverse" if opposite == len(pairs) else "the same" if opposite == 0 else
           f"opposite on {opposite} of the {len(pairs)} pairs of types")
    text += (f" Mean answerable accuracy orders the {len(common)} types "
             f"{' > '.join(_ev(e) for e, _ in _ranked(y.to_dict()))}; the refusal order is {how} "
             f"(exact permutation test on the ranks, {fmt_p(p)}")
    n = len(common)
    if n < MIN_CORRELATION_POINTS:
        floor = 2 / math.factorial(n)
        text += (f"): with {n} types no relation between the two orders is detectable (even an exact reversal "
                 f"would have p = {floor:.3f}).")
    elif p < ALPHA:
        rho = float(x.corr(y, method="spearman"))
        text += f", Spearman \u03c1 = {_num(rho, 2)}): the two orders {'run opposite' if rho < 0 else 'agree'}."
    else:
        text += f"): no relation between the two orders is detectable with {n} types."
    return Finding("Answer refusal", text, _PAPER_REFUSAL)


def answerable_vs_refusal(summary: pd.DataFrame, table: pd.DataFrame | None = None) -> Finding:
    """Whether answerable and refusal accuracy rank the models alike, from Table 16's summary (with ``table`` and at
    most eight models: the exact permutation p)."""
    r = summary.iloc[0]
    k, b = int(r["n_models"]), r["budget"]
    if k < MIN_CORRELATION_POINTS or not _finite(r["rho"]):
        return Finding("Answerable vs refusal", f"With {_models(k)} at {b}, no rank correlation between answerable "
                       f"and refusal accuracy is stated (fewer than {MIN_CORRELATION_POINTS} models: no relation "
                       "could be detected).", _PAPER_T16)
    p = r["p_value"]
    if table is not None and k <= _EXACT_MAX:
        p = exact_rank_p(table["answerable"], table["ar"])
    lo, hi = r["rho_ci_low"], r["rho_ci_high"]
    side = "below" if p < ALPHA and r["rho"] < 0 else "above" if p < ALPHA else "includes"
    nq = f" ({_count(r['n_questions'])} questions)" if "n_questions" in r.index and _finite(r["n_questions"]) else ""
    text = (f"Over the {_models(k)} run at {b}{nq}, answerable and refusal accuracy have Spearman \u03c1 = "
            f"{_num(r['rho'], 2)} ({_ci(lo, hi, 2)}, {fmt_p(p)}): ")
    if side == "includes":
        room = [w for w, v in (("a strong negative", lo), ("a strong positive", hi)) if _finite(v) and abs(v) >= 0.5]
        text += (f"no relation between the two rankings is detectable with {_models(k)}"
                 + (f", and the interval does not rule out {' or '.join(room)} one" if room else "") + ".")
    else:
        text += "the models rank alike on both." if side == "above" else "the models rank in opposite orders."
    return Finding("Answerable vs refusal", text, _PAPER_T16)


# ----------------------------------------------------------------------------- context length (notebook 20)
def length_change(pc: pd.DataFrame) -> Finding:
    """Whether accuracy falls or rises from the baseline to the comparison budget, in how many models, and which
    evidence type keeps most, from :func:`~voxmem_analysis.analysis.scaling.paired_change`."""
    ev = pc[pc["level"] == "evidence_type"].set_index("key")
    if "overall" not in ev.index:
        return Finding("Context length", "No paired change could be computed.", _PAPER_LENGTH)
    o = ev.loc["overall"]
    b0, b1 = o["baseline_budget"], o["comparison_budget"]
    level = float(o.get("ci_level", 0.95))
    lo, hi = o["change_ci_low"], o["change_ci_high"]
    text = (f"From {b0} to {b1} ({_models(int(o['n_models']))}, the same {_count(o['n'])} questions at both), overall "
            f"accuracy {_change_words(lo, hi)} from {_pct(o['baseline'])} to {_pct(o['comparison'])} "
            f"(change {_signed(o['change'])} points, {_ci(lo, hi, 1, level)}{_zero_note(lo, hi, o['n'])}; "
            f"{_pct(100 * o['retention'])} retained).")
    per = pc[pc["level"] == "model"]
    if len(per) > 1:
        sides = [_direction(a, b) for a, b in zip(per["change_ci_low"], per["change_ci_high"])]
        falls, rises = sides.count("below"), sides.count("above")
        text += (f" Per model, the interval lies below zero (a loss) for {falls} of the {len(per)} models and "
                 f"above zero (a gain) for {rises}.")
    ranked = _ranked({e: 100 * r for e, r in ev.drop(index="overall")["retention"].items()})
    if len(ranked) > 1:
        text += (f" By evidence type, retention ranges from {_pct(ranked[-1][1])} ({_ev(ranked[-1][0])}) to "
                 f"{_pct(ranked[0][1])} ({_ev(ranked[0][0])}).")
    return Finding("Context length", text, _PAPER_LENGTH)


def _rho(r) -> str:
    """``"ρ = −0.81, 95% CI −0.90 to −0.68"``."""
    return f"\u03c1 = {_num(r['rho'], 2)}, {_ci(r['rho_ci_low'], r['rho_ci_high'], 2)}"


def baseline_sensitivity(corr: pd.DataFrame) -> Finding:
    """How change and retention relate to the baseline accuracy over model × evidence cells (D.5's correlations; the
    change named as coupled to the baseline and read against the mean of both budgets)."""
    rows = corr.set_index("measure")
    n = int(rows["n"].max()) if len(rows) else 0
    k = int(rows["n_models"].max()) if "n_models" in rows and len(rows) else 0
    if n < MIN_CORRELATION_POINTS:
        return Finding("Baseline and sensitivity", f"With {_plural(n, 'model × evidence cell')}, no correlation with "
                       f"the baseline is stated (fewer than {MIN_CORRELATION_POINTS}).", _PAPER_D5)

    def side(m):
        r = rows.loc[m]
        return _direction(r["rho_ci_low"], r["rho_ci_high"]) if _finite(r["rho"]) else "unknown"

    def rel(m: str) -> str:
        return {"below": "falls as the baseline rises", "above": "rises with the baseline"}.get(
            side(m), f"shows no relation to the baseline detectable with {_models(k)}")

    parts = []
    if "change" in rows.index and _finite(rows.loc["change", "rho"]):
        parts.append(f"the change in points {rel('change')} ({_rho(rows.loc['change'])}), but the change "
                     "contains the baseline, so the two are coupled by construction")
        if "change_vs_mean" in rows.index and _finite(rows.loc["change_vs_mean", "rho"]):
            m = side("change_vs_mean")
            parts[-1] += ("; against the mean of the two budgets, which removes that coupling, "
                          + {"below": "cells with higher accuracy still lose more points",
                             "above": "cells with higher accuracy lose fewer points"}.get(
                              m, f"no relation is detectable with {_models(k)}")
                          + f" ({_rho(rows.loc['change_vs_mean'])})")
    if "retention" in rows.index and _finite(rows.loc["retention", "rho"]):
        parts.append(f"retention {rel('retention')} ({_rho(rows.loc['retention'])})")
    if not parts:
        return Finding("Baseline and sensitivity", "No correlation could be computed.", _PAPER_D5)
    how = ("95% intervals resample the models" if _finite(rows["rho_ci_low"].max()) else
           f"no interval: {_models(k)} are too few to resample" if k != 1 else "one model: no interval")
    text = f"Over the {n} model \u00d7 evidence cells of {_models(k)} ({how}), " + "; ".join(parts) + "."
    return Finding("Baseline and sensitivity", text, _PAPER_D5)


def odds_per_doubling(smod: pd.DataFrame) -> Finding:
    """The odds ratio of a correct answer per doubling of the history (the length model; beyond the paper)."""
    rows = smod.set_index("evidence_type")
    if "overall" not in rows.index or not _finite(rows.loc["overall", "odds_ratio"]):
        return Finding("Length model", "The odds-ratio model could not be fitted.")
    o = rows.loc["overall"]
    n = f", {_count(o['n_clusters'])} questions" if "n_clusters" in o.index and _finite(o["n_clusters"]) else ""
    verdict = {"below": "accuracy falls with length", "above": "accuracy rises with length",
               "unknown": "no interval"}.get(_direction(o["or_ci_low"], o["or_ci_high"], zero=1.0),
                                             "no trend detectable with these questions")
    text = (f"Per doubling of the history ({o['budgets']}{n}), the odds of a correct answer are multiplied by "
            f"{_num(o['odds_ratio'], 2)} overall ({_ci(o['or_ci_low'], o['or_ci_high'], 2)}): {verdict}.")
    types = _ranked({e: v for e, v in rows["odds_ratio"].items() if e != "overall"})
    if len(types) > 1:
        text += (f" By evidence type from {_num(types[-1][1], 2)} ({_ev(types[-1][0])}) to "
                 f"{_num(types[0][1], 2)} ({_ev(types[0][0])}).")
    return Finding("Length model", text)


# ----------------------------------------------------------------------------- judges (notebook 30)
def _than(a: str, b: str, r) -> str:
    """``"A's accuracy is 0.8 points higher than B's (95% CI 0.5 to 1.1)"``, or why no difference is claimed."""
    diff, lo, hi = r["delta_pp"], r.get("delta_ci_low"), r.get("delta_ci_high")
    ci = _ci(lo, hi)
    if _direction(lo, hi) in ("includes", "unknown") or _tied(diff, 0.0):
        items = r.get("n_items")
        with_n = f" with {_plural(items, 'item')}" if _finite(items) else ""
        return (f"no difference between {a}'s and {b}'s overall accuracy is detectable{with_n} ({_signed(diff)} "
                f"points, {ci})")
    return f"{a}'s overall accuracy is {_num(abs(diff))} points {'higher' if diff > 0 else 'lower'} than {b}'s ({ci})"


def judge_agreement(summary: pd.DataFrame, table: pd.DataFrame) -> Finding:
    """Agreement, κ and where the judges part on each measure, from ``JudgeComparison.summary`` and ``.table`` (a gap
    claimed only when its item-resampled interval excludes zero)."""
    s = dict(zip(summary["statistic"], summary["estimate"]))
    t = table.set_index("slice")
    if "All items" not in t.index or not int(s.get("n_scored", 0) or 0):
        return Finding("Judge agreement", "No prediction was scored by both judges.", _PAPER_JUDGES)
    a = t.loc["All items"]
    j1, j2 = a.get("judge1_name", "the production judge"), a.get("judge2_name", "the second judge")
    text = (f"{j1} and {j2} agree on {_pct(a['agreement'])} of the {_count(a['n'])} predictions both scored "
            f"(Cohen's \u03ba = {_num(a['kappa'], 3)}, {_ci(a.get('kappa_ci_low'), a.get('kappa_ci_high'), 3)}); "
            f"{_than(j2, j1, a)}.")
    if _finite(a.get("n_items")):
        text += f" Intervals resample the {_count(a['n_items'])} items, which the models share."
    rest = t.drop(index="All items")
    rest = rest[rest["delta_pp"].notna() & (rest["n"] > 0)]
    if len(rest) < 2:
        return Finding("Judge agreement", text, _PAPER_JUDGES)
    gap, agr, kap = rest["delta_pp"].abs().idxmax(), rest["agreement"].idxmin(), rest["kappa"].idxmin()
    g = rest.loc[gap]
    gap_text = (f"{gap} ({_signed(g['delta_pp'])} points, {_count(g['n'])} predictions, "
                f"{_ci(g.get('delta_ci_low'), g.get('delta_ci_high'))})")
    detectable = _direction(g.get("delta_ci_low"), g.get("delta_ci_high")) in ("below", "above")
    lead = "The accuracy gap is largest on " if detectable else "No slice's accuracy gap is detectable; the largest is on "
    if gap == agr == kap and detectable:
        text += (f" They part most on {gap} on every measure: {_signed(g['delta_pp'])} points "
                 f"({_ci(g['delta_ci_low'], g['delta_ci_high'])}), agreement {_pct(g['agreement'])}, "
                 f"\u03ba = {_num(g['kappa'], 3)}.")
    elif agr == kap:
        text += (f" {lead}{gap_text}; agreement and \u03ba are lowest on {agr} ({_pct(rest.loc[agr, 'agreement'])}, "
                 f"\u03ba = {_num(rest.loc[agr, 'kappa'], 3)}).")
    else:
        text += (f" {lead}{gap_text}; agreement is lowest on {agr} ({_pct(rest.loc[agr, 'agreement'])}) and \u03ba "
                 f"on {kap} ({_num(rest.loc[kap, 'kappa'], 3)}).")
    return Finding("Judge agreement", text, _PAPER_JUDGES)


def capability_refusals(disagreements: pd.DataFrame) -> Finding:
    """How many AR predictions only the second judge credits are capability refusals."""
    d = disagreements[(disagreements["stratum"] == "AR") & (disagreements["direction"] == "second_only")]
    n = int(d["n"].sum()) if len(d) else 0
    if not n:
        return Finding("Capability refusals", "No AR prediction is credited by the second judge alone.",
                       _PAPER_CAPABILITY)
    k = int(d["n_capability_refusal"].sum())
    text = (f"Of the {n} AR prediction{'s' if n != 1 else ''} only the second judge credits, {k} "
            f"{'is a capability refusal' if k == 1 else 'are capability refusals'} ({_pct(100 * k / n, 0)}).")
    return Finding("Capability refusals", text, _PAPER_CAPABILITY)


# ----------------------------------------------------------------------------- transcript ablation (notebook 31)
def transcript_ablation(table: pd.DataFrame) -> Finding:
    """What replacing the audio by its transcript does on the audio-native items and on speech semantics (Table 2)."""
    t = table.set_index("group")
    parts = []
    for group in ("audio_native", "speech_semantics"):
        if group not in t.index:
            continue
        r = t.loc[group]
        lo, hi = -r["ci_high"], -r["ci_low"]
        parts.append(f"on {'the audio-native items' if group == 'audio_native' else 'Speech Semantics'} "
                     f"({_count(r['n'])} questions) accuracy {_change_words(lo, hi)} from "
                     f"{_pct(r['full_audio'])} to {_pct(r['transcript_only'])} ({_signed(-r['delta_pp'])} points, "
                     f"{_ci(lo, hi)}{_zero_note(lo, hi, r['n'])}; McNemar {fmt_p(r['p_value'])})")
    if not parts:
        return Finding("Transcript-only ablation", "Neither the audio-native items nor speech semantics were "
                       "scored under both conditions.", _PAPER_T2)
    return Finding("Transcript-only ablation", "Without the audio, " + "; ".join(parts) + ".", _PAPER_T2)


# ----------------------------------------------------------------------------- benchmark design (notebook 05)
def composition(comp: pd.DataFrame) -> Finding:
    """The questions of this release (:func:`~voxmem_analysis.analysis.design.benchmark_composition`)."""
    def cell(row, col="Total"):
        return int(comp.loc[row, col]) if row in comp.index and _finite(comp.loc[row, col]) else 0

    total, ans, ar = cell("Total|All"), cell("Total|Answerable"), cell("Total|AR")
    if not total:
        return Finding("Composition", "The release holds no question.", _PAPER_COMP)
    types = [(c, cell("Total|All", c)) for c in comp.columns if c != "Total"]
    text = (f"This release has {total} questions: {ans} answerable and {ar} answer-refusal; by evidence type "
            + _and([f"{n} {c}" for c, n in types if n]) + ".")
    if "Operation|IE" in comp.index and "Speech Semantics" in comp.columns:
        ie_sem = cell("Operation|IE", "Speech Semantics")
        text += (" No speech-semantics IE question." if not ie_sem else
                 f" It has {ie_sem} speech-semantics IE question{'s' if ie_sem != 1 else ''}.")
    return Finding("Composition", text, _PAPER_COMP)


def history_growth(scale: pd.DataFrame) -> Finding:
    """How sessions, audio clips and minutes per history grow from the shortest to the longest budget (Figure 2(a))."""
    present = [b for b in tx.BUDGETS if b in set(scale["budget"].astype(str))]
    if len(present) < 2:
        one = present[0] if present else "no budget"
        return Finding("History scale", f"The release has histories at {one} only: no growth to describe.",
                       _PAPER_SCALE)
    parts = []
    for q in ("sessions", "audio_clips", "audio_minutes"):
        rows = scale[scale["quantity"] == q]
        rows = rows.set_index(rows["budget"].astype(str))
        if rows.empty:
            continue
        first, last = rows.loc[present[0], "mean"], rows.loc[present[-1], "mean"]
        label = str(rows["label"].iloc[0]).lower()
        parts.append(f"{label} from {_num(first)} to {_num(last)} per history (\u00d7{_num(last / first) if first else '?'})")
    n = scale.set_index(scale["budget"].astype(str))["n_items"] if "n_items" in scale else None
    k0, k1 = (int(n.loc[present[0]].max()), int(n.loc[present[-1]].max())) if n is not None else (0, 0)
    over = "" if n is None else (f" ({_count(k0)} histories at each)" if k0 == k1 else
                                 f" (means over {_count(k0)} and {_count(k1)} histories)")
    return Finding("History scale", f"From {present[0]} to {present[-1]}{over}, " + _and(parts) + ".", _PAPER_SCALE)


def evidence_share(roles: pd.DataFrame) -> Finding:
    """The share of evidence sessions at the shortest and the longest budget (session roles)."""
    ev = roles[roles["role"] == "evidence_sessions"]
    ev = ev.set_index(ev["budget"].astype(str))
    present = [b for b in tx.BUDGETS if b in ev.index]
    if not present:
        return Finding("Session roles", "No evidence session is recorded (no items table with session counts).",
                       _PAPER_ROLES)
    first, last = ev.loc[present[0]], ev.loc[present[-1]]
    n = f" ({_count(first['n_items'])} histories per budget)" if "n_items" in ev else ""
    if len(present) == 1:
        text = (f"At {present[0]}{n}, evidence sessions are {_pct(100 * first['share'])} of a history "
                f"({_num(first['mean_sessions'])} per history).")
    else:
        same = _tied(first["mean_sessions"], last["mean_sessions"], 2)
        text = (f"Evidence sessions are {_pct(100 * first['share'])} of a history at {present[0]} and "
                f"{_pct(100 * last['share'])} at {present[-1]}{n}; their number per history "
                + ("stays at " + _num(first["mean_sessions"], 2) if same else
                   f"changes from {_num(first['mean_sessions'], 2)} to {_num(last['mean_sessions'], 2)}") + ".")
    return Finding("Session roles", text, _PAPER_ROLES)


# ----------------------------------------------------------------------------- error attribution (notebook 40)
_CLASS_WORDS = {"recognition": "recognition/localization", "binding": "binding", "operation": "operation execution",
                "unsupported": "unsupported answers", "not_attributable": "not attributable"}


def _most_frequent(label: str, counts: dict[str, float], macro: dict[str, float]) -> str:
    """``"IE recognition/localization (513 of 1,140 errors, 45%; next binding, 445, exact binomial p = 0.030)"``."""
    ranked = _ranked(counts)
    n = int(sum(v for _, v in ranked))
    if not ranked or not n:
        return f"{label} none (no attributed error)"
    (top, a), (nxt, b) = ranked[0], ranked[1] if len(ranked) > 1 else ("", 0)
    p = _binomial_p(int(a), int(a + b))
    head = f"{label} {_CLASS_WORDS.get(top, top)} ({_count(a)} of {_count(n)} errors, {_pct(100 * a / n, 0)}"
    if not p < ALPHA:
        head = (f"{label} {_CLASS_WORDS.get(top, top)} and {_CLASS_WORDS.get(nxt, nxt)}, not separable with "
                f"{_plural(n, 'error')} ({_count(a)} and {_count(b)}, exact binomial {fmt_p(p)}")
    elif p >= 0.001:
        head += f"; next {_CLASS_WORDS.get(nxt, nxt)}, {_count(b)}, exact binomial {fmt_p(p)}"
    m = _ranked(macro)
    if m and m[0][0] != top:
        head += (f"; the mean over model \u00d7 evidence cells puts {_CLASS_WORDS.get(m[0][0], m[0][0])} first, "
                 f"{_pct(m[0][1], 0)}")
    return head + ")"


def error_profile(shares: pd.DataFrame, counts: pd.DataFrame) -> Finding:
    """The most frequent error class of each operation and evidence type by count (``counts``: class counts), the
    runner-up tested, and the mean over cells (``shares``: Figure 7's) named where its first class differs."""
    classes = [c for c in tx.ATTRIBUTION_CLASSES if c in counts.columns]
    macro = shares.set_index(["by", "group"])
    parts = []
    for by, what in (("operation", "by operation"), ("evidence_type", "by evidence type")):
        said = [_most_frequent(r["label"], {c: r[c] for c in classes},
                               macro.loc[(by, r["group"]), classes].to_dict() if (by, r["group"]) in macro.index else {})
                for _, r in counts[counts["by"] == by].iterrows() if r["n_errors"] > 0]
        if said:
            parts.append(f"{what}, " + "; ".join(said))
    if not parts:
        return Finding("Error profiles", "No group had an attributed error.", _PAPER_ERRORS)
    return Finding("Error profiles", "By count, the most frequent error class is: " + "; ".join(parts) + ".",
                   _PAPER_ERRORS)
