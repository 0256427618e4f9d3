"""Transcript-only ablation (Table 2, §3.3) with the paired tests the paper lacks: one model answers the
answerable items of one budget with the audio history (``full_audio``) and with its transcript
(``transcript_only``), paired on ``question_id``; what cannot be paired is counted and said, never dropped."""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.selection import noted, part_budget
from voxmem_analysis.artifacts import artifact
from voxmem_analysis.errors import AnalysisInputError, MissingDataError, Problem, VoxMemDataError
from voxmem_analysis.stats import ci_level_alias, mcnemar_exact, paired_bootstrap

__all__ = ["ROW_LABELS", "AblationPairs", "AblationResult", "ablation_pairs", "ablation_table", "wide_table2",
           "transcript_ablation", "transcript_ablation_release", "table2"]

_GROUPS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    *((e, tx.EVIDENCE_LABELS[e], (e,)) for e in (*tx.AUDIO_NATIVE, "speech_semantics")),
    ("all", "All", tx.EVIDENCE_TYPES), ("audio_native", "Audio-native", tx.AUDIO_NATIVE))
#: Table 2 rows in order.
ROW_LABELS: tuple[str, ...] = tuple(label for _, label, _ in _GROUPS)
_NEEDED = ("model", "question_id", "budget", "evidence_type", "is_ar", "status", "correct", "input_condition")
_DEFAULT_BUDGET = "8K"
_CONDITIONS = {"full_audio": "full_audio", "full": "full_audio", "audio": "full_audio",
               "transcript_only": "transcript_only", "transcript": "transcript_only", "text_only": "transcript_only"}


def _condition(value: object) -> str | None:
    return None if value is None else _CONDITIONS.get(re.sub(r"[^a-z0-9]+", "_", str(value).strip().lower()).strip("_"))


@dataclass
class AblationPairs:
    """One model's scored pairs (polars; ``question_id, evidence_type, correct_full, correct_transcript``), the
    ``unpaired`` questions (pandas; ``model, question_id, evidence_type, present_in``) and the ``problems``."""

    model: str
    pairs: pl.DataFrame
    unpaired: pd.DataFrame
    allow_abstention: bool
    problems: list[Problem] = field(default_factory=list)


def ablation_pairs(ablation, *, model: str | None = None, budget: str | None = _DEFAULT_BUDGET) -> AblationPairs:
    """Pair one ``model``'s (required when the frame holds several) full-audio and transcript-only verdicts of a
    frame with ``input_condition`` (``Release.ablation``) at ``budget`` (``None``: all)."""
    if ablation is None:
        raise MissingDataError("no ablation frame given (the release has no ablation runs)", code="no_ablation",
                               field="ablation")
    if isinstance(ablation, pd.DataFrame):
        ablation = pl.from_pandas(ablation)
    missing = [c for c in _NEEDED if c not in ablation.columns]
    if missing:
        raise VoxMemDataError([Problem("missing_field", "error",
                                       f"ablation frame lacks column(s) {', '.join(missing)}", None, None, missing[0])])
    problems: list[Problem] = []
    model, df = _model_rows(ablation, model, budget, problems)
    allow = bool(df.get_column("allow_abstention").fill_null(False).any()) if "allow_abstention" in df.columns else False
    if allow:
        k = int(df.get_column("allow_abstention").fill_null(False).sum())
        problems.append(Problem("abstention_prompt", "warning",
                                f"{k} ablation row(s) ran with allow_abstention=true; the paper's ablation uses the "
                                "no-abstention instruction (Appendix F.4), so refusals may lower both conditions",
                                None, None, "allow_abstention", k))
    full = df.filter(pl.col("_cond") == "full_audio").select(
        "question_id", "evidence_type", pl.col("status").alias("status_full"),
        pl.col("correct").fill_null(False).alias("correct_full"))
    trans = df.filter(pl.col("_cond") == "transcript_only").select(
        "question_id", pl.col("evidence_type").alias("evidence_type_t"), pl.col("status").alias("status_t"),
        pl.col("correct").fill_null(False).alias("correct_transcript"))
    pairs = full.join(trans, on="question_id", how="inner")
    bad_ev = pairs.filter(pl.col("evidence_type") != pl.col("evidence_type_t"))
    if bad_ev.height:
        raise VoxMemDataError([Problem("inconsistent_item", "error",
                                       f"{bad_ev.height} question(s) have a different evidence_type in the two conditions, "
                                       f"e.g. {bad_ev.get_column('question_id')[0]}", None, None, "evidence_type", bad_ev.height)])
    only_f = full.join(trans, on="question_id", how="anti").select(
        "question_id", "evidence_type", pl.lit("full_audio").alias("present_in"))
    only_t = trans.join(full, on="question_id", how="anti").select(
        "question_id", pl.col("evidence_type_t").alias("evidence_type"), pl.lit("transcript_only").alias("present_in"))
    unpaired = pl.concat([only_f, only_t]).with_columns(pl.lit(model).alias("model")).select(
        "model", "question_id", "evidence_type", "present_in").sort("present_in", "question_id").to_pandas()
    for cond, sub in (("full_audio", only_f), ("transcript_only", only_t)):
        if sub.height:
            problems.append(Problem("unpaired", "warning",
                                    f"{sub.height} question(s) run under {cond} only; left out of every row and listed in `unpaired`",
                                    None, None, "question_id", sub.height))
    rej = (pl.col("status_full") == "provider_rejected") | (pl.col("status_t") == "provider_rejected")
    k = pairs.filter(rej).height
    if k:
        problems.append(Problem("rejected_pair", "warning",
                                f"{k} pair(s) provider-rejected under at least one condition; left out of n",
                                None, None, "status", k))
    pairs = pairs.filter(~rej).select("question_id", "evidence_type", "correct_full", "correct_transcript").sort("question_id")
    return AblationPairs(model, pairs, unpaired, allow, problems)


def _model_rows(ablation: pl.DataFrame, model: str | None, budget: str | None,
                problems: list[Problem]) -> tuple[str, pl.DataFrame]:
    """``(model, its answerable rows at budget under a known condition ``_cond``)``; what is left out is counted."""
    models = sorted(ablation.get_column("model").drop_nulls().unique().to_list())
    if model is None:
        if len(models) != 1:
            raise AnalysisInputError(f"the ablation frame holds {len(models)} models ({', '.join(models)}); "
                                     "pass model=", "model")
        model = models[0]
    elif model not in models:
        raise AnalysisInputError(f"model {model!r} is not in the ablation frame (models: {', '.join(models)})",
                                 "model")
    df = ablation.filter(pl.col("model") == model).with_columns(
        pl.col("input_condition").map_elements(_condition, return_dtype=pl.Utf8).alias("_cond"))

    def drop(mask: pl.Expr, code: str, msg: str, fld: str):
        nonlocal df
        k = df.filter(mask).height
        if k:
            problems.append(Problem(code, "warning", msg.format(k=k), None, None, fld, k))
            df = df.filter(~mask)

    drop(pl.col("_cond").is_null(), "unknown_condition",
         "{k} row(s) with an input_condition other than full_audio / transcript_only left out", "input_condition")
    if budget is not None:
        b = tx.normalize_budgets([budget])[0]
        drop(pl.col("budget").cast(pl.Utf8) != b, "other_budget", f"{{k}} row(s) at a budget other than {b} left out", "budget")
    drop(pl.col("is_ar").fill_null(False), "ar_in_ablation",
         "{k} answer-refusal row(s) left out (the ablation covers answerable items)", "expected_response")

    dup = df.group_by("question_id", "_cond").agg(pl.len().alias("k")).filter(pl.col("k") > 1)
    if dup.height:
        first = dup.sort("question_id").row(0, named=True)
        raise VoxMemDataError([Problem("duplicate_prediction", "error",
                                       f"{dup.height} (question_id, input_condition) key(s) occur more than once, "
                                       f"e.g. ({first['question_id']}, {first['_cond']})", None, None, "question_id", dup.height)])
    return model, df


@ci_level_alias
def ablation_table(paired: AblationPairs, *, seed: int = 0, n_boot: int = 10_000,
                   ci_level: float = 0.95) -> pd.DataFrame:
    """Table 2, long: rows the four evidence types, ``All`` and ``Audio-native``; each row's paired bootstrap resamples
    items (the pooled rows within evidence types). Columns ``row, group, n`` (scored pairs), ``full_audio,
    transcript_only`` (%), ``delta_pp`` (full − transcript) with ``ci_low, ci_high``, ``n_full_only, n_transcript_only``
    (discordant), ``p_value`` (exact McNemar), ``n_boot, seed, ci_level, warnings``."""
    ev = paired.pairs.get_column("evidence_type").to_numpy()
    yf = paired.pairs.get_column("correct_full").to_numpy().astype(bool)
    yt = paired.pairs.get_column("correct_transcript").to_numpy().astype(bool)
    warn = "; ".join(p.message for p in paired.problems if p.code in ("abstention_prompt", "unpaired"))
    rows = []
    for code, label, members in _GROUPS:
        m = np.isin(ev, members)
        n = int(m.sum())
        f, t = yf[m], yt[m]
        b, c = int(np.sum(f & ~t)), int(np.sum(~f & t))
        row = {"row": label, "group": code, "n": n,
               "full_audio": 100.0 * f.mean() if n else np.nan,
               "transcript_only": 100.0 * t.mean() if n else np.nan}
        row["delta_pp"] = row["full_audio"] - row["transcript_only"]
        if n:
            strata = ev[m] if len(members) > 1 else None
            boot = paired_bootstrap(f.astype(float), t.astype(float), "drop", n_boot=n_boot, seed=seed, ci_level=ci_level,
                                    strata=strata).iloc[0]
            lo, hi, nb, level = float(boot["ci_low"]), float(boot["ci_high"]), int(boot["n_boot"]), float(boot["ci_level"])
        else:
            lo = hi = np.nan
            nb, level = n_boot, ci_level
        p_value = float(mcnemar_exact(f, t)["p_value"].iloc[0]) if n else np.nan
        row.update(ci_low=lo, ci_high=hi, n_full_only=b, n_transcript_only=c, p_value=p_value,
                   n_boot=nb, seed=seed, ci_level=level, warnings=warn)
        rows.append(row)
    return pd.DataFrame(rows)


def wide_table2(long: pd.DataFrame) -> pd.DataFrame:
    """Table 2 as printed plus the paired test: ``n, Full Audio, Transcript Only, Δ, McNemar p, Δ 95% CI low/high``."""
    lvl = int(round(100 * float(long["ci_level"].iloc[0]))) if len(long) else 95
    cols = {"n": "n", "full_audio": "Full Audio", "transcript_only": "Transcript Only", "delta_pp": "\u0394",
            "p_value": "McNemar p", "ci_low": f"\u0394 {lvl}% CI low", "ci_high": f"\u0394 {lvl}% CI high"}
    return long.set_index("row").rename_axis("Evidence Type")[list(cols)].rename(columns=cols)


@dataclass
class AblationResult:
    """Table 2 of one model: ``table`` (:func:`ablation_table`), ``unpaired``, ``problems``, ``budget``."""

    model: str
    table: pd.DataFrame
    unpaired: pd.DataFrame
    problems: list[Problem] = field(default_factory=list)
    budget: str | None = None

    def wide(self) -> pd.DataFrame:
        return wide_table2(self.table)


@ci_level_alias
def transcript_ablation(ablation, *, model: str | None = None, budget: str | None = _DEFAULT_BUDGET,
                        seed: int = 0, n_boot: int = 10_000, ci_level: float = 0.95) -> AblationResult:
    """Table 2 of one model (:func:`ablation_pairs`, :func:`ablation_table`) from an ablation frame."""
    paired = ablation_pairs(ablation, model=model, budget=budget)
    return AblationResult(paired.model, ablation_table(paired, seed=seed, n_boot=n_boot, ci_level=ci_level),
                          paired.unpaired, list(paired.problems))


def transcript_ablation_release(release, *, budget: str | None = None, **kwargs) -> AblationResult:
    """:func:`transcript_ablation` of ``release.ablation`` at ``budget`` (``None``: the paper's 8K when the ablation
    ran there, else the budget it ran at most; the result's ``budget`` says which)."""
    if getattr(release, "ablation", None) is None:
        raise MissingDataError("the release has no ablation runs (ablation/<condition>/**/*.jsonl)",
                               code="no_ablation", field="ablation")
    at = part_budget(release.ablation, budget, paper=_DEFAULT_BUDGET)
    return replace(transcript_ablation(release.ablation, budget=at, **kwargs), budget=at)


@artifact("table2", title="Table 2: transcript-only ablation at 8K", needs=("ablation",))
def table2(release, *, seed: int = 0, n_boot: int = 10_000, model: str | None = None,
           budget: str | None = None) -> pd.DataFrame:
    """Table 2 (:func:`wide_table2`) at the budget of :func:`transcript_ablation_release` (8K in the paper)."""
    res = transcript_ablation_release(release, model=model, budget=budget, seed=seed, n_boot=n_boot)
    return noted(res.wide(), "budget", res.budget, budget, _DEFAULT_BUDGET, "the budget the ablation ran at most")
