"""Judge cross-validation (Table 13, Appendix C.5): the production judge's verdicts paired with a second
judge's re-scoring of the same responses on ``(model, item_id)`` at one budget.

A pair is scored unless either side is ``provider_rejected``; predictions one judge alone scored are listed and
counted, never dropped.  Every model answers the same items, so the intervals of Table 13 resample items.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.selection import noted, part_budget
from voxmem_analysis.artifacts import artifact
from voxmem_analysis.errors import AnalysisInputError, MissingDataError, Problem, UnknownNameError, VoxMemDataError
from voxmem_analysis.stats import cohen_kappa, iter_bootstrap_counts, spearman
from voxmem_analysis.stats.endpoints import bootstrap_interval

__all__ = [
    "CAPABILITY_REFUSAL_PATTERN", "SLICE_LABELS", "JUDGE_LABELS", "JudgePairs", "JudgeComparison",
    "is_capability_refusal", "judge_label", "match_judges", "agreement_table", "wide_table13",
    "per_model_agreement", "judge_summary", "disagreements", "compare_judge_frames",
    "compare_judges", "judge_budget", "table13", "judges", "judges_table", "printed_judges",
]

#: Capability / access refusals ("I cannot hear audio", "I do not have access to previous conversations"),
#: which Appendix C.4 counts incorrect on AR items; an evidence-based abstention or a bare "I don't know" does
#: not match.
CAPABILITY_REFUSAL_PATTERN = (
    r"(?i)("
    # no access to earlier conversations / history
    r"\b(do not|don't|does not|doesn't|cannot|can't|can ?not|am unable to|unable to|not able to)"
    r" (have )?(any )?access (to )?(any |the |our |your )?(previous|past|prior|earlier|former)\b"
    r".{0,20}\b(conversations?|sessions?|chats?|interactions?|messages?|history|discussions?)"
    # cannot hear / process audio
    r"|\b(cannot|can't|can ?not|unable to|not able to|do not|don't|am not able to|am unable to)"
    r" (hear|listen to|process|play|perceive|interpret|analy[sz]e|access)"
    r" (the |this |that |any |your |these |those )?(audio|sounds?|voices?|recordings?|speech|audio files?)\b"
    # no ability to hear / remember
    r"|\b(do not|don't|does not|doesn't|lack) (have )?(the )?(ability|capability|capacity) to"
    r" (hear|listen|process audio|remember|recall|access)"
    # no memory of earlier conversations
    r"|\b(do not|don't) (have|retain|keep) (any )?memor(y|ies) of (previous|past|prior|earlier|our)"
    # "as a text-based AI ..." / "I am just a text-based model"
    r"|\bas an? (ai|text[- ]based|language) (model|assistant)"
    r"|\bI(?: am|'m) (only |just )?an? text[- ]based"
    r")"
)
_CAPABILITY_RE = re.compile(CAPABILITY_REFUSAL_PATTERN)

#: Table 13 rows, in the paper's order.
SLICE_LABELS: tuple[str, ...] = (
    "All items",
    *(tx.EVIDENCE_LABELS[e] for e in tx.EVIDENCE_TYPES),
    *(f"{tx.OPERATION_LABELS[o]} (answerable)" for o in tx.ANSWERABLE_OPERATIONS),
    tx.OPERATION_LABELS["answer_refusal"],
)

#: Display names of judges whose API strings differ from the paper's spelling (others as in the data).
JUDGE_LABELS = {"gemini-3.7-flash": "Gemini-3.7-Flash", "gpt-5.6-luna": "GPT-5.6-Luna"}

_DEFAULT_BUDGET = "8K"
_NEEDED = ("model", "item_id", "budget", "evidence_type", "operation", "is_ar", "status", "correct")
_KEEP = ("question_id", "source_operation", "response")


def is_capability_refusal(text: object) -> bool:
    """True if ``text`` is a capability/access refusal (:data:`CAPABILITY_REFUSAL_PATTERN`)."""
    return isinstance(text, str) and _CAPABILITY_RE.search(text) is not None


def judge_label(name: object) -> str:
    """Paper spelling of a judge name (``'gpt-5.6-luna'`` -> ``'GPT-5.6-Luna'``)."""
    if name is None:
        return "unknown judge"
    s = str(name).strip()
    return JUDGE_LABELS.get(s.lower(), s)


def _as_polars(frame, what: str) -> pl.DataFrame:
    if frame is None:
        raise MissingDataError(f"{what} frame is missing", code="missing_input")
    if isinstance(frame, pd.DataFrame):
        frame = pl.from_pandas(frame)
    if not isinstance(frame, pl.DataFrame):
        raise AnalysisInputError(f"{what} must be a polars or pandas DataFrame, got {type(frame).__name__}", what)
    missing = [c for c in _NEEDED if c not in frame.columns]
    if missing:
        raise VoxMemDataError([Problem("missing_field", "error",
                                       f"{what} frame lacks column(s) {', '.join(missing)}", None, None, missing[0])])
    return frame


def _budget_filter(frame: pl.DataFrame, budget: str | None) -> pl.DataFrame:
    if budget is None:
        return frame
    return frame.filter(pl.col("budget").cast(pl.Utf8) == tx.normalize_budgets([budget])[0])


def _judge_name(frame: pl.DataFrame, fallback: str) -> str:
    names = frame.get_column("judge").drop_nulls() if "judge" in frame.columns else pl.Series([], dtype=pl.Utf8)
    return str(names.mode().sort()[0]) if names.len() else fallback


def _check_unique(frame: pl.DataFrame, what: str) -> None:
    dup = frame.group_by("model", "item_id").agg(pl.len().alias("k")).filter(pl.col("k") > 1)
    if dup.height:
        first = dup.sort("model", "item_id").row(0, named=True)
        raise VoxMemDataError([Problem(
            "duplicate_prediction", "error",
            f"{what} frame has {dup.height} (model, item_id) key(s) more than once, "
            f"e.g. ({first['model']}, {first['item_id']}) x{first['k']}", None, None, "item_id", dup.height)])


@dataclass
class JudgePairs:
    """Verdicts paired on ``(model, item_id)``: ``pairs`` (polars; ``status_1/2``, ``correct_1/2``, ``scored``),
    ``unmatched`` (pandas; ``model, item_id, budget, present_in``), the judges' names and the ``problems``."""

    pairs: pl.DataFrame
    unmatched: pd.DataFrame
    judge1: str
    judge2: str
    budget: str | None
    problems: list[Problem] = field(default_factory=list)

    @property
    def scored(self) -> pl.DataFrame:
        """The scored pairs (neither side provider-rejected)."""
        return self.pairs.filter(pl.col("scored"))


def match_judges(production, second, *, budget: str | None = _DEFAULT_BUDGET) -> JudgePairs:
    """Pair the production and second judge's verdict frames (polars or pandas) at ``budget`` (``None``: all)."""
    p = _budget_filter(_as_polars(production, "production"), budget)
    s = _budget_filter(_as_polars(second, "second-judge"), budget)
    _check_unique(p, "production")
    _check_unique(s, "second-judge")
    name1, name2 = judge_label(_judge_name(p, "judge 1")), judge_label(_judge_name(s, "judge 2"))
    name2 = f"{name2} (2)" if name1 == name2 else name2
    keep = [c for c in _KEEP if c in p.columns]
    left = p.select("model", "item_id", pl.col("budget").cast(pl.Utf8), "evidence_type", "operation", "is_ar", *keep,
                    pl.col("status").alias("status_1"), pl.col("correct").fill_null(False).alias("correct_1"))
    right_cols = [pl.col("status").alias("status_2"), pl.col("correct").fill_null(False).alias("correct_2")]
    if "response" in s.columns:
        right_cols.append(pl.col("response").alias("response_2"))
    right = s.select("model", "item_id", *right_cols)
    pairs = left.join(right, on=["model", "item_id"], how="inner")
    rejected = (pl.col("status_1") == "provider_rejected") | (pl.col("status_2") == "provider_rejected")
    pairs = pairs.with_columns((~rejected).alias("scored"))
    for col in ("question_id", "source_operation", "response"):
        if col not in pairs.columns:
            pairs = pairs.with_columns(pl.lit(None, dtype=pl.Utf8).alias(col))

    only_p = left.join(right, on=["model", "item_id"], how="anti").select(
        "model", "item_id", "budget", pl.lit("production").alias("present_in"))
    only_s = s.select("model", "item_id", pl.col("budget").cast(pl.Utf8)).join(
        left.select("model", "item_id"), on=["model", "item_id"], how="anti").with_columns(
        pl.lit("second").alias("present_in"))
    unmatched = pl.concat([only_p, only_s]).sort("present_in", "model", "item_id").to_pandas()

    rejected_one = (pl.col("status_1") == "provider_rejected") != (pl.col("status_2") == "provider_rejected")
    counts = [("unmatched_production", only_p.height, "item_id", "prediction(s) scored by the production judge only "
               "(no second judge verdict), left out of every comparison and listed in `unmatched`"),
              ("unmatched_second", only_s.height, "item_id", "prediction(s) scored by the second judge only (no "
               "production judge verdict), left out of every comparison and listed in `unmatched`"),
              ("rejection_mismatch", pairs.filter(rejected_one).height, "status",
               "pair(s) provider-rejected under one judge's frame only; left out of n")]
    if "response_2" in pairs.columns:
        counts.append(("response_mismatch", pairs.filter(
            pl.col("response").fill_null("") != pl.col("response_2").fill_null("")).height, "response",
            "pair(s) whose response differs between the two judges' frames (the second judge should re-score "
            "the same responses)"))
    problems = [Problem(code, "warning", f"{k} {text}", None, None, fld, k) for code, k, fld, text in counts if k]
    cols = ["model", "item_id", "question_id", "budget", "evidence_type", "operation", "is_ar",
            "source_operation", "response", "status_1", "status_2", "correct_1", "correct_2", "scored"]
    pairs = pairs.select(cols).sort("model", "item_id")
    return JudgePairs(pairs, unmatched, name1, name2, tx.normalize_budget(budget) if budget else None, problems)


def _pair_stats(y1: np.ndarray, y2: np.ndarray) -> dict:
    if not len(y1):
        nan = float("nan")
        return dict(n=0, judge1=nan, judge2=nan, delta_pp=nan, agreement=nan, kappa=nan,
                    n_production_only=0, n_second_only=0)
    k = cohen_kappa(y1, y2).iloc[0]
    a1, a2 = 100.0 * y1.mean(), 100.0 * y2.mean()
    return dict(n=len(y1), judge1=a1, judge2=a2, delta_pp=a2 - a1, agreement=100.0 * float(k["agreement"]),
                kappa=float(k["kappa"]), n_production_only=int(k["n10"]), n_second_only=int(k["n01"]))


def _item_intervals(items: np.ndarray, y1: np.ndarray, y2: np.ndarray, n_boot: int, seed: int) -> dict:
    """95% percentile intervals of Δ (pp), agreement (%) and κ resampling ``items`` (all predictions of a drawn
    item together) and ``n_items``; NaN with fewer than two items."""
    codes, names = pd.factorize(items, sort=True)
    out = {"n_items": len(names)}
    keys = ("delta", "agreement", "kappa")
    if len(names) < 2:
        return {**out, **{f"{k}_ci_{e}": np.nan for k in keys for e in ("low", "high")}}
    cells = np.column_stack([y1 & y2, y1 & ~y2, ~y1 & y2, ~y1 & ~y2]).astype(float)
    per_item = np.zeros((len(names), 4))
    np.add.at(per_item, codes, cells)
    sums = np.vstack([c @ per_item for c in iter_bootstrap_counts(len(names), n_boot=n_boot, seed=seed)])
    stats = dict(zip(keys, _agreement_stats(sums)))
    point = dict(zip(keys, _agreement_stats(per_item.sum(axis=0, keepdims=True))))
    for k in keys:
        ci = bootstrap_interval(stats[k], float(point[k][0]))
        out[f"{k}_ci_low"], out[f"{k}_ci_high"] = ci["ci_low"], ci["ci_high"]
    return out


def _agreement_stats(sums: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Δ (pp), agreement (%) and Cohen's κ from rows of (both, production only, second only, neither)."""
    n = sums.sum(axis=1)
    po = (sums[:, 0] + sums[:, 3]) / n
    pa, pb = (sums[:, 0] + sums[:, 1]) / n, (sums[:, 0] + sums[:, 2]) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
    return 100.0 * (sums[:, 2] - sums[:, 1]) / n, 100.0 * po, kappa


def _slice_masks(pairs: pl.DataFrame) -> list[tuple[str, np.ndarray]]:
    ev = pairs.get_column("evidence_type").to_numpy()
    op = pairs.get_column("operation").to_numpy()
    ar = pairs.get_column("is_ar").fill_null(False).to_numpy().astype(bool)
    out = [("All items", np.ones(pairs.height, dtype=bool))]
    out += [(tx.EVIDENCE_LABELS[e], ev == e) for e in tx.EVIDENCE_TYPES]
    out += [(f"{tx.OPERATION_LABELS[o]} (answerable)", (op == o) & ~ar) for o in tx.ANSWERABLE_OPERATIONS]
    out += [(tx.OPERATION_LABELS["answer_refusal"], ar)]
    return out


def _ys(pairs: pl.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    return (pairs.get_column("correct_1").to_numpy().astype(bool),
            pairs.get_column("correct_2").to_numpy().astype(bool))


def agreement_table(matched: JudgePairs, *, n_boot: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Table 13, long: one row per slice of :data:`SLICE_LABELS`. Columns ``slice, n, judge1, judge2`` (accuracies %),
    ``delta_pp, agreement, kappa, n_production_only, n_second_only, n_items`` (questions resampled),
    ``delta_ci_low/high, agreement_ci_low/high, kappa_ci_low/high, judge1_name, judge2_name``."""
    sc = matched.scored
    y1, y2 = _ys(sc)
    items = sc.select(pl.coalesce(pl.col("question_id").cast(pl.Utf8), pl.col("item_id").cast(pl.Utf8))).to_series()
    items = items.to_numpy().astype(str)
    rows = [{"slice": label, **_pair_stats(y1[mask], y2[mask]),
             **_item_intervals(items[mask], y1[mask], y2[mask], n_boot, seed)} for label, mask in _slice_masks(sc)]
    return pd.DataFrame(rows).assign(judge1_name=matched.judge1, judge2_name=matched.judge2)


def wide_table13(long: pd.DataFrame) -> pd.DataFrame:
    """Table 13 as printed: columns ``n, <judge 1>, <judge 2>, Δ (pp), Agreement, κ``, then ``items`` and the
    intervals resampling them, ``Δ CI low/high, κ CI low/high``."""
    cols = {"n": "n", "judge1": long["judge1_name"].iloc[0], "judge2": long["judge2_name"].iloc[0],
            "delta_pp": "\u0394 (pp)", "agreement": "Agreement", "kappa": "\u03ba", "n_items": "items",
            "delta_ci_low": "\u0394 CI low", "delta_ci_high": "\u0394 CI high", "kappa_ci_low": "\u03ba CI low",
            "kappa_ci_high": "\u03ba CI high"}
    return long.set_index("slice").rename_axis("Slice")[list(cols)].rename(columns=cols)


def _model_meta(models) -> pd.DataFrame:
    if models is None:
        return pd.DataFrame(columns=["model", "family", "order"])
    m = models.to_pandas() if isinstance(models, pl.DataFrame) else models
    return m.reindex(columns=["model", "family", "order"])


def per_model_agreement(matched: JudgePairs, models=None) -> pd.DataFrame:
    """Per model, in the registry's order (then by production accuracy, highest first). Columns ``model, family, n,
    judge1, judge2, delta_pp, agreement, kappa, n_production_only, n_second_only, judge1_name, judge2_name`` (accuracies
    and agreement in %)."""
    rows = [{"model": model, **_pair_stats(*_ys(sub))}
            for (model,), sub in matched.scored.group_by(["model"], maintain_order=True)]
    df = pd.DataFrame(rows, columns=["model", "n", "judge1", "judge2", "delta_pp", "agreement", "kappa",
                                     "n_production_only", "n_second_only"])
    df = df.merge(_model_meta(models), on="model", how="left")
    df = df.sort_values(["order", "judge1", "model"], ascending=[True, False, True], na_position="last")
    df = df.assign(judge1_name=matched.judge1, judge2_name=matched.judge2)
    return df[["model", "family", "n", "judge1", "judge2", "delta_pp", "agreement", "kappa",
               "n_production_only", "n_second_only", "judge1_name", "judge2_name"]].reset_index(drop=True)


def judge_summary(matched: JudgePairs, models=None, *, production_family: str | None = "Gemini") -> pd.DataFrame:
    """Appendix C.5 quantities: agreement, κ, the Spearman ρ and mean absolute difference of the per-model accuracies,
    family favoritism (production − second on ``production_family``'s predictions minus the same on the others), the AR
    pairs only the second judge credits and the unmatched predictions. Columns ``statistic, estimate, n`` (predictions,
    or models, behind it), ``description``."""
    sc = matched.scored
    y1, y2 = _ys(sc)
    overall = _pair_stats(y1, y2)
    pm = per_model_agreement(matched, models)
    rows = [
        ("n_scored", float(overall["n"]), overall["n"], "scored pairs (neither side provider-rejected)"),
        ("agreement", overall["agreement"], overall["n"], "percent of scored pairs with the same verdict"),
        ("kappa", overall["kappa"], overall["n"], "Cohen's kappa over all scored pairs"),
        ("spearman_rho", float(spearman(pm["judge1"].to_numpy(float), pm["judge2"].to_numpy(float))["rho"].iloc[0]),
         len(pm),
         "Spearman correlation of the per-model accuracies under the two judges"),
        ("mean_abs_model_diff_pp", float(np.mean(np.abs(pm["delta_pp"]))) if len(pm) else float("nan"), len(pm),
         "mean over models of |judge2 - judge1| accuracy (pp)"),
    ]
    meta = _model_meta(models)
    fam_of = dict(zip(meta["model"], meta["family"]))
    if production_family is not None:
        fam = np.array([fam_of.get(m) == production_family for m in sc.get_column("model").to_list()], dtype=bool)
        d_f = 100.0 * (y1[fam].mean() - y2[fam].mean()) if fam.any() else float("nan")
        d_o = 100.0 * (y1[~fam].mean() - y2[~fam].mean()) if (~fam).any() else float("nan")
        rows += [
            ("family_diff_pp", d_f, int(fam.sum()),
             f"production - second accuracy (pp) on {production_family}-family predictions"),
            ("others_diff_pp", d_o, int((~fam).sum()),
             "production - second accuracy (pp) on all other predictions"),
            ("favoritism_pp", d_f - d_o, int(sc.height),
             f"family_diff_pp - others_diff_pp: how much more the production judge credits {production_family} outputs"),
        ]
    dis = disagreements(matched)
    ar = dis[(dis["stratum"] == "AR") & (dis["direction"] == "second_only")]
    rows += [
        ("ar_second_only", float(ar["n"].sum()), int(ar["n"].sum()),
         "AR pairs credited by the second judge only"),
        ("ar_second_only_capability_refusals", float(ar["n_capability_refusal"].sum()), int(ar["n"].sum()),
         "of those, responses matching CAPABILITY_REFUSAL_PATTERN"),
        ("n_unmatched_production", float((matched.unmatched["present_in"] == "production").sum()), None,
         "predictions with a production verdict only"),
        ("n_unmatched_second", float((matched.unmatched["present_in"] == "second").sum()), None,
         "predictions with a second-judge verdict only"),
    ]
    df = pd.DataFrame(rows, columns=["statistic", "estimate", "n", "description"])
    df["n"] = df["n"].astype("Int64")
    return df


def disagreements(matched: JudgePairs, *, by: str | None = None) -> pd.DataFrame:
    """The scored pairs the judges disagree on, every combination listed (zero counts included). Columns ``[by,]
    stratum`` (``answerable``/``AR``), ``direction`` (``production_only``/``second_only``), ``n``,
    ``n_capability_refusal`` (responses matching :data:`CAPABILITY_REFUSAL_PATTERN`)."""
    sc = matched.scored
    y1, y2 = _ys(sc)
    ar = sc.get_column("is_ar").fill_null(False).to_numpy().astype(bool)
    cap = np.array([is_capability_refusal(r) for r in sc.get_column("response").to_list()], dtype=bool)
    groups: list[tuple[object, np.ndarray]]
    if by is None:
        groups = [(None, np.ones(sc.height, dtype=bool))]
    else:
        if by not in sc.columns:
            raise AnalysisInputError(f"cannot group disagreements by {by!r}: not a column of the pairs", "by")
        vals = sc.get_column(by).to_numpy()
        order = list(tx.EVIDENCE_TYPES) if by == "evidence_type" else sorted({v for v in vals if v is not None})
        groups = [(v, vals == v) for v in order]
    rows = [{**({by: g} if by is not None else {}), "stratum": stratum, "direction": direction,
             "n": int((gm & sm & dm).sum()), "n_capability_refusal": int((gm & sm & dm & cap).sum())}
            for g, gm in groups for stratum, sm in (("answerable", ~ar), ("AR", ar))
            for direction, dm in (("production_only", y1 & ~y2), ("second_only", ~y1 & y2))]
    return pd.DataFrame(rows)


@dataclass
class JudgeComparison:
    """Everything of Table 13 and Appendix C.5 for one pair of judges (all pandas)."""

    table: pd.DataFrame           # agreement_table (long)
    per_model: pd.DataFrame       # per_model_agreement
    summary: pd.DataFrame         # judge_summary
    disagreements: pd.DataFrame   # disagreements
    unmatched: pd.DataFrame       # JudgePairs.unmatched
    judge1: str
    judge2: str
    problems: list[Problem] = field(default_factory=list)
    budget: str | None = None     # the budget compared (None: every budget)

    def wide(self) -> pd.DataFrame:
        """Table 13 as printed."""
        return wide_table13(self.table)

    def statistic(self, name: str) -> float:
        """One estimate of :attr:`summary` by its ``statistic`` name."""
        row = self.summary.loc[self.summary["statistic"] == name, "estimate"]
        if row.empty:
            raise UnknownNameError(f"unknown statistic {name!r}; known: {', '.join(self.summary['statistic'])}",
                                   "name")
        return float(row.iloc[0])


def compare_judge_frames(production, second, *, models=None, budget: str | None = _DEFAULT_BUDGET,
                         production_family: str | None = "Gemini", n_boot: int = 10_000,
                         seed: int = 0) -> JudgeComparison:
    """Table 13 and Appendix C.5 for two judges' verdict frames (:func:`match_judges`); ``models``: the registry
    (``model, family[, order]``) the family terms need; ``n_boot``, ``seed``: Table 13's item bootstrap."""
    matched = match_judges(production, second, budget=budget)
    return JudgeComparison(
        table=agreement_table(matched, n_boot=n_boot, seed=seed),
        per_model=per_model_agreement(matched, models),
        summary=judge_summary(matched, models, production_family=production_family),
        disagreements=disagreements(matched),
        unmatched=matched.unmatched,
        judge1=matched.judge1, judge2=matched.judge2, problems=list(matched.problems), budget=matched.budget,
    )


def judge_budget(release, budget: str | None = None) -> str:
    """The budget the judges are compared at: ``budget`` if given, else the paper's 8K when the second
    judge scored it, else the budget it scored most (:func:`~voxmem_analysis.analysis.selection.part_budget`)."""
    return part_budget(getattr(release, "judge2", None), budget, paper=_DEFAULT_BUDGET)


def compare_judges(release, *, budget: str | None = None, production_family: str | None = "Gemini",
                   n_boot: int = 10_000, seed: int = 0) -> JudgeComparison:
    """:func:`compare_judge_frames` of a release's frame and ``judge2`` at :func:`judge_budget` (``"all"``: every
    budget)."""
    if getattr(release, "judge2", None) is None:
        raise MissingDataError("the release has no second-judge predictions (judge2/**/*.jsonl)", code="no_judge2",
                               field="judge2")
    at = None if str(budget).lower() == "all" else judge_budget(release, budget)
    return compare_judge_frames(release.frame, release.judge2, models=release.models, budget=at,
                                production_family=production_family, n_boot=n_boot, seed=seed)


@artifact("table13", title="Table 13: cross-judge agreement at 8K", needs=("judge2",))
def table13(release, *, seed: int = 0, n_boot: int = 10_000, budget: str | None = None) -> pd.DataFrame:
    """Table 13 (:func:`wide_table13`) at :func:`judge_budget` (8K in the paper)."""
    cmp = compare_judges(release, budget=budget, n_boot=n_boot, seed=seed)
    return noted(cmp.wide(), "budget", cmp.budget, budget, _DEFAULT_BUDGET, "the budget the second judge scored most")


@artifact("judges", title="Appendix C.5: judge cross-validation figures", needs=("judge2",))
def judges(release, *, seed: int = 0, n_boot: int = 10_000, budget: str | None = None,
           production_family: str = "Gemini") -> pd.DataFrame:
    """The Appendix C.5 figures as printed (:func:`judges_table`; no resampling)."""
    return judges_table(compare_judges(release, budget=budget, production_family=production_family, n_boot=1,
                                       seed=seed), production_family=production_family)


def judges_table(cmp: JudgeComparison, *, production_family: str = "Gemini") -> pd.DataFrame:
    """Appendix C.5 from a :func:`compare_judges` result: rows ``All`` (``n, Agreement, κ, Spearman rho, Mean abs
    diff (pp)``), ``<family> family``, ``Other families`` (``n``, ``Δ (pp)`` = second − production, as Table 13),
    ``<family> favoritism`` (``Δ (pp)``), ``AR`` (``Second judge only, Capability refusals``), ``Unmatched``
    (``Second judge only, Production only``)."""
    s = dict(zip(cmp.summary["statistic"], cmp.summary["estimate"]))
    n = dict(zip(cmp.summary["statistic"], cmp.summary["n"]))
    cols = ["n", "Agreement", "\u03ba", "Spearman rho", "Mean abs diff (pp)", "\u0394 (pp)",
            "Second judge only", "Capability refusals", "Production only"]
    nan = np.nan
    rows = {
        "All": [s["n_scored"], s["agreement"], s["kappa"], s["spearman_rho"], s["mean_abs_model_diff_pp"],
                nan, nan, nan, nan],
        f"{production_family} family": [float(n["family_diff_pp"]), nan, nan, nan, nan, -s["family_diff_pp"],
                                         nan, nan, nan],
        "Other families": [float(n["others_diff_pp"]), nan, nan, nan, nan, -s["others_diff_pp"], nan, nan, nan],
        f"{production_family} favoritism": [nan, nan, nan, nan, nan, s["favoritism_pp"], nan, nan, nan],
        "AR": [nan, nan, nan, nan, nan, nan, s["ar_second_only"], s["ar_second_only_capability_refusals"], nan],
        "Unmatched": [nan, nan, nan, nan, nan, nan, s["n_unmatched_second"], nan, s["n_unmatched_production"]],
    }
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols).rename_axis("Quantity")


def _fmt_num(v, fmt: str) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return ""
    return format(v, fmt)


def printed_judges(wide: pd.DataFrame) -> pd.DataFrame:
    """The :func:`judges` table as strings at the paper's precision."""
    digits = {"Agreement": ".2f", "\u03ba": ".3f", "Spearman rho": ".3f", "Mean abs diff (pp)": ".2f",
              "\u0394 (pp)": ".2f"}
    out = pd.DataFrame(index=wide.index)
    for c in wide.columns:
        fmt = digits.get(c)
        out[c] = [_fmt_num(v, fmt) if fmt else _fmt_num(int(v) if v == v else v, ",") for v in wide[c]]
    return out
