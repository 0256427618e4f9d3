"""Findings of judged Audio MultiChallenge runs as sentences, each with its counts, written from the
tables :func:`~voxmem_analysis.analysis.amc_runs.amc_slice`, :func:`~voxmem_analysis.analysis.amc_runs.amc_compare`
and :func:`~voxmem_analysis.analysis.amc_runs.amc_judges` return (columns read by name; others ignored).

A difference whose interval includes zero is "not detectable with n = ..." -- never "no difference".
"""
from __future__ import annotations

import math

import pandas as pd

from voxmem_analysis.analysis.findings import Finding, fmt_p

__all__ = ["amc_run_findings", "systems_overall", "axes_per_system", "paired_overall", "paired_by_axis",
           "rubric_items", "judge_agreement", "missing_responses"]

_OVERALL = "overall"


def _num(x: float) -> str:
    text = f"{x:.1f}"
    return ("0.0" if float(text) == 0 else text).replace("-", "\u2212")


def _pct(x: float) -> str:
    return f"{_num(x)}%"


def _pp(x: float) -> str:
    return f"{'+' if float(x) > 0 and _num(x) != '0.0' else ''}{_num(x)} pp"


def _finite(*xs) -> bool:
    return all(isinstance(x, (int, float)) and math.isfinite(x) for x in xs)


def _ci(lo: float, hi: float) -> str:
    return f"95% CI {_num(lo)} to {_num(hi)}" if _finite(lo, hi) else "no interval"


def _excludes_zero(lo, hi) -> bool:
    return _finite(lo, hi) and (lo > 0 or hi < 0)


def _count(n) -> str:
    return f"{int(n):,}"


def _axis(code, names: dict | None) -> str:
    name = (names or {}).get(str(code))
    return f"{name} ({code})" if name else str(code)


def systems_overall(table: pd.DataFrame) -> Finding:
    """Each system's tasks passed (APR, Wilson interval) and ARS overall, highest APR first."""
    rows = table[table["axis"].astype(str) == _OVERALL].sort_values("apr", ascending=False, kind="stable")
    parts = [f"{r['system']} passes {_count(r['n_passed'])} of {_count(r['n_tasks'])} tasks (APR {_pct(r['apr'])}, "
             f"{_ci(r['apr_ci_low'], r['apr_ci_high'])}; ARS {_pct(r['ars'])}, {_ci(r['ars_ci_low'], r['ars_ci_high'])})"
             for _, r in rows.iterrows()]
    lead = "By APR, highest first: " if len(parts) > 1 else ""
    return Finding("Systems", lead + "; ".join(parts) + ".")


def axes_per_system(table: pd.DataFrame, axis_names: dict | None = None) -> Finding | None:
    """Per system, the axis with the highest and the lowest APR (with their counts)."""
    rows = table[table["axis"].astype(str) != _OVERALL]
    if rows["axis"].nunique() < 2:
        only = ", ".join(_axis(a, axis_names) for a in dict.fromkeys(rows["axis"].astype(str)))
        return Finding("Axes", f"Only one axis was run ({only}): no comparison between axes.") if only else None
    parts = []
    for system, g in rows.groupby("system", sort=False):
        g = g.sort_values("apr", ascending=False, kind="stable")
        hi, lo = g.iloc[0], g.iloc[-1]
        if hi["apr"] == lo["apr"]:
            parts.append(f"{system} has the same APR on every axis ({_pct(hi['apr'])})")
            continue
        parts.append(f"{system} passes most on {_axis(hi['axis'], axis_names)} ({_count(hi['n_passed'])} of "
                     f"{_count(hi['n_tasks'])}, {_pct(hi['apr'])}) and least on {_axis(lo['axis'], axis_names)} "
                     f"({_count(lo['n_passed'])} of {_count(lo['n_tasks'])}, {_pct(lo['apr'])})")
    return Finding("Axes", "; ".join(parts) + ". The intervals per axis rest on these counts (figure and table below).")


def _difference(r, metric: str, n: int) -> str:
    d, lo, hi = r[f"{metric}_diff"], r[f"{metric}_diff_ci_low"], r[f"{metric}_diff_ci_high"]
    text = f"{metric.upper()} {_pp(d)} ({_ci(lo, hi)})"
    return text if _excludes_zero(lo, hi) else f"{text}, not detectable with n = {_count(n)} shared tasks"


def paired_overall(table: pd.DataFrame) -> Finding | None:
    """Every pair of systems overall: APR and ARS differences (first minus second) with their
    intervals, the discordant tasks and the exact McNemar test."""
    rows = table[table["axis"].astype(str) == _OVERALL]
    if not len(rows):
        return None
    parts = []
    for _, r in rows.iterrows():
        n, a, b, only_a = int(r["n_tasks"]), r["system_a"], r["system_b"], int(r["a_pass_b_fail"])
        holm = f", Holm-adjusted {fmt_p(r['p_holm'])}" if _finite(r.get("p_holm")) else ""
        parts.append(f"{a} minus {b}: {_difference(r, 'apr', n)}; {_difference(r, 'ars', n)}; of the {_count(n)} tasks "
                     f"both have, {_count(only_a)} {'is' if only_a == 1 else 'are'} passed by {a} only and "
                     f"{_count(r['a_fail_b_pass'])} by {b} only (exact McNemar {fmt_p(r['p_mcnemar'])}{holm})")
    return Finding("Paired differences", ". ".join(parts) + ".")


def paired_by_axis(table: pd.DataFrame, axis_names: dict | None = None) -> Finding | None:
    """The per-axis APR differences whose interval excludes zero, and how many do not."""
    rows = table[table["axis"].astype(str) != _OVERALL]
    if not len(rows):
        return None
    seen = rows[[_excludes_zero(lo, hi) for lo, hi in zip(rows["apr_diff_ci_low"], rows["apr_diff_ci_high"])]]
    ns = sorted({int(n) for n in rows["n_tasks"]})
    n_text = f"n = {_count(ns[0])}" if len(ns) == 1 else f"n = {_count(ns[0])} to {_count(ns[-1])}"
    said = [f"on {_axis(r['axis'], axis_names)}, {r['system_a']} minus {r['system_b']} {_pp(r['apr_diff'])} "
            f"({_ci(r['apr_diff_ci_low'], r['apr_diff_ci_high'])}; {_count(r['a_pass_b_fail'])} vs "
            f"{_count(r['a_fail_b_pass'])} discordant tasks of {_count(r['n_tasks'])})" for _, r in seen.iterrows()]
    rest = len(rows) - len(seen)
    text = (f"{len(seen)} of the {len(rows)} per-axis APR differences {'has' if len(seen) == 1 else 'have'} an interval "
            "that excludes zero")
    text += (": " + "; ".join(said)) if said else ""
    if rest:
        text += (f"; {'the other' if said else 'all'} {rest} {'is' if rest == 1 else 'are'} not detectable with "
                 f"{n_text} tasks per axis")
    return Finding("Per axis", text + ".")


def rubric_items(rates: pd.DataFrame, axis_names: dict | None = None) -> Finding | None:
    """Per system, the rubric items met overall and on its weakest axis."""
    if not len(rates):
        return None
    parts = []
    for system, g in rates.groupby("system", sort=False):
        t = g[g["axis"].astype(str) == _OVERALL].iloc[0]
        axes = g[g["axis"].astype(str) != _OVERALL].sort_values("rate", kind="stable")
        parts.append(f"{system} meets {_count(t['n_met'])} of {_count(t['n_items'])} rubric items ({_pct(t['rate'])})")
        if len(axes) > 1:
            w = axes.iloc[0]
            parts[-1] += (f", fewest on {_axis(w['axis'], axis_names)} ({_count(w['n_met'])} of {_count(w['n_items'])}, "
                          f"{_pct(w['rate'])})")
    return Finding("Rubric items", "; ".join(parts) + ".")


def judge_agreement(agreement: pd.DataFrame) -> Finding | None:
    """Two judges on the same responses: agreement and Cohen's kappa over the rubric items both graded."""
    rows = agreement[agreement["axis"].astype(str) == _OVERALL] if len(agreement) else agreement
    if not len(rows):
        return None
    parts = [f"{r['judge_a']} and {r['judge_b']} agree on {_pct(r['agreement'])} of the {_count(r['n'])} rubric items of "
             f"{r['system']} both graded (Cohen's \u03ba = {float(r['kappa']):.2f}); {r['judge_a']} counts "
             f"{_pct(r['acc_a'])} of them as met, {r['judge_b']} {_pct(r['acc_b'])}" for _, r in rows.iterrows()]
    return Finding("Judges", "; ".join(parts) + ".")


def missing_responses(runs: pd.DataFrame) -> Finding | None:
    """Tasks with no response (``pred_error``), counted as failed."""
    if "pred_error" not in runs.columns:
        return None
    hit = runs[runs["pred_error"].fillna(0) > 0]
    if not len(hit):
        return None
    parts = [f"{_count(r['pred_error'])} of the {_count(r['tasks'])} tasks of {r['system']} ({r['output_modality']}, "
             f"judge {r['judge']})" for _, r in hit.iterrows()]
    return Finding("Missing responses", f"No response (pred_error) for {'; '.join(parts)}: counted as failed, with no "
                                        "rubric item met.")


def amc_run_findings(tables: dict, rates: pd.DataFrame, runs: pd.DataFrame,
                     axis_names: dict | None = None) -> list[Finding]:
    """Every finding the tables of a runs report support (``tables``: name -> DataFrame, as written)."""
    found = []
    if "amc_runs_slice" in tables:
        found += [systems_overall(tables["amc_runs_slice"]), axes_per_system(tables["amc_runs_slice"], axis_names)]
    if "amc_runs_compare" in tables:
        found += [paired_overall(tables["amc_runs_compare"]), paired_by_axis(tables["amc_runs_compare"], axis_names)]
    found += [rubric_items(rates, axis_names), missing_responses(runs)]
    if "amc_runs_judges" in tables:
        found.append(judge_agreement(tables["amc_runs_judges"]))
    return [f for f in found if f is not None]
