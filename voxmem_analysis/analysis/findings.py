"""Findings as sentences: what this release's tables show, next to what the paper reports.

Every notebook and the report state a finding in two parts (:class:`Finding`): the sentence about
*this* release, computed here from the tables the analyses returned (which evidence type is
highest, whether accuracy falls or rises with length, by how much, with the interval), and the
paper's own finding, always introduced as "The paper reports ...".  Nothing here assumes the
paper's direction: a release where speaker identity is best remembered, or where a model improves
with length, gets sentences that say so, and a release too small for a claim (one model, one
budget, no interval) gets a sentence that says what cannot be said.

Each function takes a table an analysis returned (the argument names say which) and returns one
:class:`Finding`; none computes an analysis itself.  Numbers are rounded as the tables print them.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import pandas as pd

from voxmem_analysis import taxonomy as tx

__all__ = ["Finding", "evidence_types", "operation_evidence", "refusal_profile", "answerable_vs_refusal",
           "length_change", "baseline_sensitivity", "odds_per_doubling", "judge_agreement",
           "capability_refusals", "transcript_ablation", "composition", "history_growth", "evidence_share",
           "error_profile", "fmt_p"]

_MINUS = "\u2212"


@dataclass(frozen=True)
class Finding:
    """One finding: ``release`` (sentences computed from this release's tables), ``paper`` (the paper's
    own finding, "The paper reports ...", or None beyond the paper) and a short ``topic``."""

    topic: str
    release: str
    paper: str | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def __str__(self) -> str:
        return f"{self.topic}: {self.release}" + (f"\n  {self.paper}" if self.paper else "")

    def _repr_markdown_(self) -> str:
        return (f"**{self.topic}.** {self.release}" + (f"\n\n*{self.paper}*" if self.paper else ""))


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


def _models(k: int) -> str:
    return f"{k} model{'s' if k != 1 else ''}"


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


# ----------------------------------------------------------------------------- main results (notebook 10)
_PAPER_EVIDENCE = ("The paper reports that speech semantics is remembered far better than who spoke (speaker "
                   "identity), how it was said (paralinguistic cues) or what was audible (environmental sound): at "
                   "32K, proprietary models average 55.6% on speech semantics against 32.7%, 20.0% and 21.9% "
                   "(\u00a74.2, Finding 2).")


def _by_budget(at: list[tuple[str, tuple, float]]) -> str:
    """``"Paralinguistic Cues at 8K (19.7%) and 16K (17.2%); Environmental Sound at 64K (12.4%)"``."""
    groups: dict[tuple, list[str]] = {}
    for b, who, v in at:
        groups.setdefault(who, []).append(f"{b} ({_pct(v)})")
    return "; ".join(_and([_ev(e) for e in who]) + (" (tied)" if len(who) > 1 else "") + " at " + _and(places)
                     for who, places in groups.items())


def evidence_types(panels: pd.DataFrame) -> Finding:
    """Which evidence type is best and worst remembered at each budget, from Figure 4's panels
    (:func:`voxmem_analysis.analysis.results.evidence_panels`: ``budget, kind, evidence_type,
    accuracy``; the unweighted mean over the ``kind == "model"`` rows of each budget)."""
    models = panels[panels["kind"] == "model"]
    tops, lows, counts = [], [], {}
    for b in [b for b in tx.BUDGETS if b in set(models["budget"].astype(str))]:
        at = models[models["budget"].astype(str) == b]
        ranked = _ranked(at.groupby("evidence_type", observed=True)["accuracy"].mean().to_dict())
        if len(ranked) < 2:
            continue
        counts[b] = at["row"].nunique()
        top, low = ranked[0][1], ranked[-1][1]
        tops.append((b, _in_order(e for e, v in ranked if _tied(v, top)), top))
        lows.append((b, _in_order(e for e, v in ranked if _tied(v, low)), low))
    if not tops:
        return Finding("Evidence types", "No accuracy by evidence type could be compared (fewer than two evidence "
                       "types scored at every budget).", _PAPER_EVIDENCE)
    ks = sorted(set(counts.values()))
    who = ("one model" if ks == [1] else f"mean over {_models(ks[0])}" if len(ks) == 1
           else "unweighted mean over the models run at each budget")
    names = _and([_ev(e) for e in tops[0][1]])
    verb = "are" if len(tops[0][1]) > 1 else "is"
    if len(tops) == 1:
        text = f"At {tops[0][0]} ({who}), {names} {verb} the best-remembered evidence type ({_pct(tops[0][2])})."
    elif len({t for _, t, _ in tops}) == 1:
        text = (f"{names} {verb} the best-remembered evidence type at every budget run ({who}): "
                + _and([f"{_pct(v)} at {b}" for b, _, v in tops]) + ".")
    else:
        text = f"The best-remembered evidence type differs between budgets ({who}): {_by_budget(tops)}."
    text += f" Lowest: {_by_budget(lows)}."
    return Finding("Evidence types", text, _PAPER_EVIDENCE)


_PAPER_OPEV = ("The paper reports that difficulty depends on the pairing of operation and evidence type: at 32K, "
               "temporal evolution tracking reaches 44.5% on speech semantics but 3.4% on paralinguistic and 1.2% "
               "on environmental evidence, while multi-session reasoning stays at 25.2-43.1% on every type "
               "(\u00a74.3, Finding 3).")


def operation_evidence(oe: pd.DataFrame) -> Finding:
    """The easiest and hardest operation x evidence cell of answerable questions, and the widest spread
    within one operation, from Figure 5's cells (:func:`voxmem_analysis.analysis.results.operation_evidence`:
    ``budget, operation, evidence_type, accuracy, n_questions``; one budget)."""
    cells = oe[(oe["operation"] != "answer_refusal") & oe["accuracy"].notna()]
    if cells.empty:
        return Finding("Operation x evidence", "No answerable operation x evidence cell could be computed.",
                       _PAPER_OPEV)
    b = ", ".join(sorted(set(cells["budget"].astype(str)), key=lambda x: tx.BUDGETS.index(x)
                         if x in tx.BUDGETS else 99))
    hi, lo = cells.loc[cells["accuracy"].idxmax()], cells.loc[cells["accuracy"].idxmin()]

    def cell(r) -> str:
        return f"{_op(r['operation'])} \u00d7 {_ev(r['evidence_type'])} ({_pct(r['accuracy'])}, {int(r['n_questions'])} questions)"

    if len(cells) == 1:
        return Finding("Operation x evidence", f"At {b} only one answerable cell was computed: {cell(hi)}.",
                       _PAPER_OPEV)
    spreads = cells.groupby("operation")["accuracy"].agg(lambda s: s.max() - s.min())
    widest = spreads.idxmax()
    text = (f"At {b}, answerable operation \u00d7 evidence cells range from {cell(lo)} to {cell(hi)}; "
            f"within one operation the evidence type moves accuracy by up to {_num(spreads.max())} points "
            f"({_op(widest)}).")
    return Finding("Operation x evidence", text, _PAPER_OPEV)


_PAPER_REFUSAL = ("The paper reports that answer refusal runs opposite to answering: models abstain more "
                  "successfully on paralinguistic and environmental questions (34.3% and 34.2% at 32K) than on "
                  "speech semantics and speaker identity (19.9% and 16.2%) (\u00a74.3, Finding 4).")


def refusal_profile(oe: pd.DataFrame) -> Finding:
    """Answer-refusal accuracy by evidence type against the answerable order, from Figure 5's cells
    (``operation == "answer_refusal"`` against the mean of the answerable operations per type)."""
    ar = oe[(oe["operation"] == "answer_refusal") & oe["accuracy"].notna()].set_index("evidence_type")["accuracy"]
    ans = (oe[(oe["operation"] != "answer_refusal") & oe["accuracy"].notna()]
           .groupby("evidence_type")["accuracy"].mean())
    if ar.empty:
        return Finding("Answer refusal", "No answer-refusal item was scored.", _PAPER_REFUSAL)
    ranked = _ranked(ar.to_dict())
    text = "Answer-refusal accuracy is " + _and([f"{_pct(v)} on {_ev(e)}" for e, v in ranked]) + "."
    common = [e for e in ar.index if e in ans.index]
    if len(common) >= 3:
        rho = float(ar[common].astype(float).corr(ans[common].astype(float), method="spearman"))
        if _finite(rho):
            order = ("the opposite of" if rho <= -0.5 else "the same as" if rho >= 0.5 else "unrelated to")
            text += (f" Across the {len(common)} evidence types this order is {order} the answerable order "
                     f"(Spearman \u03c1 = {_num(rho, 2)} between refusal and mean answerable accuracy).")
    return Finding("Answer refusal", text, _PAPER_REFUSAL)


_PAPER_T16 = ("The paper reports that answerable and refusal accuracy rank the models almost independently "
              "(Spearman \u03c1 = \u22120.02 over the ten 64K models, Appendix D.3, Table 16).")


def answerable_vs_refusal(summary: pd.DataFrame) -> Finding:
    """Whether answerable and refusal accuracy rank the models alike, from Table 16's summary
    (:func:`voxmem_analysis.analysis.results.answerable_refusal_summary`: ``budget, n_models, rho,
    p_value, rho_ci_low, rho_ci_high``)."""
    r = summary.iloc[0]
    k, b = int(r["n_models"]), r["budget"]
    if k < 3 or not _finite(r["rho"]):
        return Finding("Answerable vs refusal", f"With {_models(k)} at {b}, the two columns cannot be compared "
                       "as rankings (a rank correlation needs at least three models).", _PAPER_T16)
    side = _direction(r["rho_ci_low"], r["rho_ci_high"])
    how = {"includes": "the interval includes zero, so these models show no relation between the two rankings",
           "above": "the models rank alike on both", "below": "the models rank in opposite orders",
           "unknown": "no interval could be computed"}[side]
    text = (f"Over the {_models(k)} run at {b}, answerable and refusal accuracy have Spearman \u03c1 = "
            f"{_num(r['rho'], 2)} ({_ci(r['rho_ci_low'], r['rho_ci_high'], 2)}, {fmt_p(r['p_value'])}): {how}.")
    return Finding("Answerable vs refusal", text, _PAPER_T16)


# ----------------------------------------------------------------------------- context length (notebook 20)
_PAPER_LENGTH = ("The paper reports that accuracy falls from 8K to 64K for every model and all four evidence "
                 "types, every interval of Table 18 excluding zero; at 64K models retain 70.3% of their 8K accuracy "
                 "on speech semantics, 69.8% on paralinguistic cues, 66.5% on speaker identity and 63.2% on "
                 "environmental sound (\u00a74.4, Finding 5; Appendix D.4).")


def _change_words(change: float, lo: float, hi: float) -> str:
    side = _direction(lo, hi)
    return {"below": "falls", "above": "rises"}.get(side, "changes")


def _zero_note(lo: float, hi: float) -> str:
    return ", which includes zero" if _direction(lo, hi) == "includes" else ""


def length_change(pc: pd.DataFrame) -> Finding:
    """Whether accuracy falls or rises from the baseline to the comparison budget, by how much, in how many
    models, and which evidence type keeps most, from Table 18's long frame
    (:func:`voxmem_analysis.analysis.scaling.paired_change`: ``level, key, baseline, comparison, change,
    change_ci_low/high, retention``)."""
    ev = pc[pc["level"] == "evidence_type"].set_index("key")
    if "overall" not in ev.index:
        return Finding("Context length", "No paired change could be computed.", _PAPER_LENGTH)
    o = ev.loc["overall"]
    b0, b1 = o["baseline_budget"], o["comparison_budget"]
    level = float(o.get("ci_level", 0.95))
    k = int(o["n_models"])
    lo, hi = o["change_ci_low"], o["change_ci_high"]
    text = (f"From {b0} to {b1} ({_models(k)}, the same {_count(o['n'])} questions at both), overall accuracy "
            f"{_change_words(o['change'], lo, hi)} from {_pct(o['baseline'])} to {_pct(o['comparison'])} "
            f"(change {_signed(o['change'])} points, {_ci(lo, hi, 1, level)}{_zero_note(lo, hi)}; "
            f"{_pct(100 * o['retention'])} retained).")
    per = pc[pc["level"] == "model"]
    if len(per) > 1:
        sides = [_direction(a, b) for a, b in zip(per["change_ci_low"], per["change_ci_high"])]
        falls, rises = sides.count("below"), sides.count("above")
        text += (f" Per model, the interval lies below zero (a loss) for {falls} of the {len(per)} models and "
                 f"above zero (a gain) for {rises}.")
    types = ev.drop(index="overall")
    ranked = _ranked({e: 100 * r for e, r in types["retention"].items()})
    if len(ranked) > 1:
        text += (f" By evidence type, retention ranges from {_pct(ranked[-1][1])} ({_ev(ranked[-1][0])}) to "
                 f"{_pct(ranked[0][1])} ({_ev(ranked[0][0])}).")
    return Finding("Context length", text, _PAPER_LENGTH)


_PAPER_D5 = ("The paper reports that over the 40 model \u00d7 evidence cells retention shows no detectable relation "
             "to 8K accuracy (Spearman \u03c1 = 0.03) while the change in points correlates strongly with it "
             "(\u03c1 = \u22120.77): low accuracy and sensitivity to length are different failure modes "
             "(Appendix D.5).")


def baseline_sensitivity(corr: pd.DataFrame) -> Finding:
    """How change and retention relate to the baseline accuracy over model x evidence cells, from
    Appendix D.5's correlations (:func:`voxmem_analysis.analysis.scaling.sensitivity_correlations`:
    ``measure, n, rho, p_value, rho_ci_low, rho_ci_high``)."""
    rows = corr.set_index("measure")
    parts = []
    for measure, what in (("change", "the change in points"), ("retention", "retention")):
        if measure not in rows.index:
            continue
        r = rows.loc[measure]
        if not _finite(r["rho"]):
            parts.append(f"{what}: no correlation could be computed ({int(r['n'])} cells)")
            continue
        side = _direction(r["rho_ci_low"], r["rho_ci_high"])
        rel = {"below": "falls as the baseline rises", "above": "rises with the baseline",
               "includes": "shows no relation the cells can detect", "unknown": "has no interval"}[side]
        parts.append(f"{what} {rel} (\u03c1 = {_num(r['rho'], 2)}, {_ci(r['rho_ci_low'], r['rho_ci_high'], 2)})")
    if not parts:
        return Finding("Baseline and sensitivity", "No correlation could be computed.", _PAPER_D5)
    n = int(rows["n"].max())
    text = f"Over the {n} model \u00d7 evidence cells, " + "; ".join(parts) + "."
    return Finding("Baseline and sensitivity", text, _PAPER_D5)


def odds_per_doubling(smod: pd.DataFrame) -> Finding:
    """The odds ratio of a correct answer per doubling of the history, from the length model
    (:func:`voxmem_analysis.analysis.scaling_model.scaling_model`: ``evidence_type, odds_ratio,
    or_ci_low, or_ci_high, budgets``).  Beyond the paper: no paper finding."""
    rows = smod.set_index("evidence_type")
    if "overall" not in rows.index or not _finite(rows.loc["overall", "odds_ratio"]):
        return Finding("Length model", "The odds-ratio model could not be fitted.")
    o = rows.loc["overall"]
    side = _direction(o["or_ci_low"], o["or_ci_high"], zero=1.0)
    verdict = {"below": "accuracy falls with length", "above": "accuracy rises with length",
               "includes": "no trend the items can detect", "unknown": "no interval"}[side]
    text = (f"Per doubling of the history ({o['budgets']}), the odds of a correct answer are multiplied by "
            f"{_num(o['odds_ratio'], 2)} overall ({_ci(o['or_ci_low'], o['or_ci_high'], 2)}): {verdict}.")
    types = _ranked({e: v for e, v in rows["odds_ratio"].items() if e != "overall"})
    if len(types) > 1:
        text += (f" By evidence type from {_num(types[-1][1], 2)} ({_ev(types[-1][0])}) to "
                 f"{_num(types[0][1], 2)} ({_ev(types[0][0])}).")
    return Finding("Length model", text)


# ----------------------------------------------------------------------------- judges (notebook 30)
_PAPER_JUDGES = ("The paper reports that the two judges agree closely at 8K, with the largest gap on AR items, "
                 "where the second judge credits capability refusals that the rubric counts as incorrect "
                 "(Table 13, Appendix C.5).")


def _than(a: str, b: str, diff: float) -> str:
    """``"A's accuracy is 0.8 points higher than B's"`` (``diff`` = A - B, points)."""
    if _tied(diff, 0.0):
        return f"{a}'s accuracy equals {b}'s"
    return f"{a}'s accuracy is {_num(abs(diff))} points {'higher' if diff > 0 else 'lower'} than {b}'s"


def judge_agreement(summary: pd.DataFrame, table: pd.DataFrame) -> Finding:
    """Agreement, kappa and the slice where the judges part most, from
    :class:`voxmem_analysis.analysis.judges.JudgeComparison`'s ``summary`` (``statistic, estimate``) and
    ``table`` (``slice, n, judge1, judge2, delta_pp, agreement, kappa, kappa_ci_low, kappa_ci_high``)."""
    s = dict(zip(summary["statistic"], summary["estimate"]))
    t = table.set_index("slice")
    if "All items" not in t.index or not int(s.get("n_scored", 0) or 0):
        return Finding("Judge agreement", "No prediction was scored by both judges.", _PAPER_JUDGES)
    a = t.loc["All items"]
    j1, j2 = a.get("judge1_name", "the production judge"), a.get("judge2_name", "the second judge")
    text = (f"{j1} and {j2} agree on {_pct(a['agreement'])} of the {_count(a['n'])} predictions both scored "
            f"(Cohen's \u03ba = {_num(a['kappa'], 3)}, {_ci(a['kappa_ci_low'], a['kappa_ci_high'], 3)}); "
            f"{_than(j2, j1, a['delta_pp'])} overall.")
    rest = t.drop(index="All items")
    rest = rest[rest["delta_pp"].notna()]
    if len(rest):
        far = rest["delta_pp"].abs().idxmax()
        text += f" They part most on {far} ({_signed(rest.loc[far, 'delta_pp'])} points, \u03ba = {_num(rest.loc[far, 'kappa'], 3)})."
    return Finding("Judge agreement", text, _PAPER_JUDGES)


_PAPER_CAPABILITY = ("The paper reports that of the 50 AR predictions the second judge credits and the production "
                     "judge rejects, 32 are capability refusals (\u201cI do not have access to previous "
                     "conversations\u201d), which the rubric of Appendix C.4 counts as incorrect (Table 13).")


def capability_refusals(disagreements: pd.DataFrame) -> Finding:
    """How many AR predictions only the second judge credits are capability refusals, from
    ``JudgeComparison.disagreements`` (``stratum, direction, n, n_capability_refusal``)."""
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
_PAPER_T2 = ("The paper reports that transcript-only input reduces accuracy on audio-native questions from "
             "46.2% to 4.4%, but on speech semantics only from 75.9% to 71.0% (\u00a73.3, Table 2).")


def transcript_ablation(table: pd.DataFrame) -> Finding:
    """What replacing the audio by its transcript does to the audio-native items and to speech semantics,
    from :class:`voxmem_analysis.analysis.ablation.AblationResult`'s ``table`` (``group, row, n,
    full_audio, transcript_only, delta_pp`` = full - transcript, ``ci_low, ci_high, p_value``)."""
    t = table.set_index("group")
    parts = []
    for group in ("audio_native", "speech_semantics"):
        if group not in t.index:
            continue
        r = t.loc[group]
        lo, hi = -r["ci_high"], -r["ci_low"]
        parts.append(f"on {'the audio-native items' if group == 'audio_native' else 'Speech Semantics'} "
                     f"({_count(r['n'])} questions) accuracy {_change_words(-r['delta_pp'], lo, hi)} from "
                     f"{_pct(r['full_audio'])} to {_pct(r['transcript_only'])} ({_signed(-r['delta_pp'])} points, "
                     f"{_ci(lo, hi)}{_zero_note(lo, hi)}; McNemar {fmt_p(r['p_value'])})")
    if not parts:
        return Finding("Transcript-only ablation", "Neither the audio-native items nor speech semantics were "
                       "scored under both conditions.", _PAPER_T2)
    return Finding("Transcript-only ablation", "Without the audio, " + "; ".join(parts) + ".", _PAPER_T2)


# ----------------------------------------------------------------------------- benchmark design (notebook 05)
_PAPER_COMP = ("The paper reports 799 questions: 669 answerable (IE, MSR, TET) and 130 answer-refusal items "
               "derived from them; speech-semantics IE is excluded by design (\u00a73, Table 3).")


def composition(comp: pd.DataFrame) -> Finding:
    """The questions of this release, from the composition table
    (:func:`voxmem_analysis.analysis.design.benchmark_composition`: rows ``Total|All``,
    ``Total|Answerable``, ``Total|AR``, ``Operation|IE`` ...; column ``Total`` and the evidence types)."""
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


_PAPER_SCALE = ("The paper reports histories of about 2.5 to 20 minutes of audio from 8K to 64K, each longer history "
                "strictly extending the shorter one with haystack and filler sessions only (\u00a73.2, Appendix B.6).")


def history_growth(scale: pd.DataFrame) -> Finding:
    """How sessions, audio clips and minutes per history grow from budget to budget, from Figure 2(a)'s
    data (:func:`voxmem_analysis.analysis.design.history_scale`: ``budget, quantity, label, mean``)."""
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
    text = f"From {present[0]} to {present[-1]}, " + _and(parts) + "."
    return Finding("History scale", text, _PAPER_SCALE)


_PAPER_ROLES = ("The paper reports that the evidence of each question is the same at every budget, the longer "
                "histories adding only haystack and filler sessions (Appendix B.6).")


def evidence_share(roles: pd.DataFrame) -> Finding:
    """The share of evidence sessions at the shortest and the longest budget, from
    :func:`voxmem_analysis.analysis.design.session_roles` (``budget, role, mean_sessions, share``)."""
    ev = roles[roles["role"] == "evidence_sessions"]
    ev = ev.set_index(ev["budget"].astype(str))
    present = [b for b in tx.BUDGETS if b in ev.index]
    if not present:
        return Finding("Session roles", "No evidence session is recorded (no items table with session counts).",
                       _PAPER_ROLES)
    first, last = ev.loc[present[0]], ev.loc[present[-1]]
    if len(present) == 1:
        text = (f"At {present[0]}, evidence sessions are {_pct(100 * first['share'])} of a history "
                f"({_num(first['mean_sessions'])} per history).")
    else:
        same = _tied(first["mean_sessions"], last["mean_sessions"], 2)
        text = (f"Evidence sessions are {_pct(100 * first['share'])} of a history at {present[0]} and "
                f"{_pct(100 * last['share'])} at {present[-1]}; their number per history "
                + ("stays at " + _num(first["mean_sessions"], 2) if same else
                   f"changes from {_num(first['mean_sessions'], 2)} to {_num(last['mean_sessions'], 2)}") + ".")
    return Finding("Session roles", text, _PAPER_ROLES)


# ----------------------------------------------------------------------------- error attribution (notebook 40)
_PAPER_ERRORS = ("The paper reports that IE errors are dominated by binding failures (46%), MSR errors split between "
                 "localization (48%) and operation execution (32%), TET errors are mostly localization (55%); speaker "
                 "errors are most often binding (48%), paralinguistic errors localization (63%), environmental "
                 "errors split between localization (41%) and unsupported answers (39%) (\u00a74.4, Finding 6).")
_CLASS_WORDS = {"recognition": "recognition/localization", "binding": "binding", "operation": "operation execution",
                "unsupported": "unsupported answers", "not_attributable": "not attributable"}


def error_profile(shares: pd.DataFrame) -> Finding:
    """The most frequent error class of each memory operation and evidence type, from Figure 7's shares
    (:func:`voxmem_analysis.analysis.attribution.class_proportions_by`: ``by, group, label``, one column
    per class in percent, ``n_errors``)."""
    classes = [c for c in tx.ATTRIBUTION_CLASSES if c in shares.columns]
    parts = []
    for by, what in (("operation", "by operation"), ("evidence_type", "by evidence type")):
        rows = shares[shares["by"] == by]
        said = []
        for _, r in rows.iterrows():
            ranked = _ranked({c: r[c] for c in classes})
            if ranked:
                said.append(f"{r['label']} {_CLASS_WORDS.get(ranked[0][0], ranked[0][0])} ({_pct(ranked[0][1], 0)})")
        if said:
            parts.append(f"{what}: " + ", ".join(said))
    if not parts:
        return Finding("Error profiles", "No group had enough attributed errors for a share.", _PAPER_ERRORS)
    return Finding("Error profiles", "The most frequent error class " + "; ".join(parts) + ".", _PAPER_ERRORS)
