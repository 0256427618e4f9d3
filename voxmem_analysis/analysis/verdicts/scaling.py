"""Accuracy at each budget and the paired change / retention against a baseline budget: :func:`scaling_table`,
and the Spearman correlations of Appendix D.5 over its cells: :func:`scaling_correlations`."""
from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis.analysis.verdicts._frames import (OVERALL, as_list, check_unique, cluster_of,
                                                       constant_within, fail, groups_of, level_order, numeric_values,
                                                       objectify, sort_levels, to_pandas)
from voxmem_analysis.analysis.verdicts.slices import slice_accuracy
from voxmem_analysis.errors import MissingDataError
from voxmem_analysis.stats import paired_bootstrap_frame, spearman
from voxmem_analysis.stats.settings import BootstrapSettings

__all__ = ["scaling_table", "scaling_correlations"]

_SCALING_STATS = ("change", "retention", "baseline", "comparison")
_PAIRED = ["n_paired", "acc_baseline_paired", "acc_paired", "change", "change_ci_low", "change_ci_high",
           "retention", "retention_ci_low", "retention_ci_high", "retention_n_invalid"]
#: The paired engine's columns of each statistic, as the scaling table names them.
_PICKS = {
    "change": {"n": "n_paired", "estimate": "change", "ci_low": "change_ci_low", "ci_high": "change_ci_high",
               "design_effect": "change_design_effect"},
    "retention": {"estimate": "retention", "ci_low": "retention_ci_low", "ci_high": "retention_ci_high",
                  "n_invalid": "retention_n_invalid"},
    "baseline": {"estimate": "acc_baseline_paired"},
    "comparison": {"estimate": "acc_paired"},
}


def scaling_table(frame, *, system: str = "system", type_col: str | None = "question_type", item: str = "question_id",
                  budget: str = "budget", baseline, value: str = "correct", scored: str | None = "scored",
                  budgets: Sequence | None = None, groups: Sequence[str] | None = None, cluster: str | None = None,
                  settings: BootstrapSettings = BootstrapSettings()) -> pd.DataFrame:
    """Accuracy at each budget, and the paired change and retention against the ``baseline`` budget.

    ``frame``: one row per (system, budget, item); ``baseline``: a value of ``budget`` (any case); ``budgets``: those
    reported, in order (default all); ``groups``: further keys (e.g. ``["judge"]``); ``type_col``: per-type rows and
    their pooled ``overall`` (None: pooled rows only); ``cluster``: an item-level column the paired bootstrap draws
    whole; ``settings``: its ``n_boot, seed, ci_level, interval, progress``.  Each system is compared on its own items
    scored at both budgets, both rescored on every draw; pooled rows resample items within types. Returns
    pandas.DataFrame: ``*groups, system, type, budget, level, n, n_correct, accuracy, accuracy_ci_low,
    accuracy_ci_high`` (all scored items, Wilson, %), then on the items scored at both budgets (null at the baseline):
    ``n_paired, acc_baseline_paired, acc_paired, change`` (pp) with ``change_ci_low, change_ci_high``, ``retention``
    with ``retention_ci_low, retention_ci_high, retention_n_invalid``; ``baseline_budget, ci_level, n_boot, seed`` (with
    ``cluster``: ``cluster, change_design_effect``)."""
    cfg = settings.check()
    gcols = as_list(groups)
    tcols = [type_col] if type_col else []
    df = to_pandas(frame, [*gcols, system, budget, *tcols, item, value, scored] + ([cluster] if cluster else []))
    v, s = numeric_values(df, value, scored)
    df = df.assign(_v=v, _s=s)
    orders = objectify(df, [*gcols, system, budget, *tcols])
    cluster_of(df, item, cluster)  # checks: one cluster per item, none missing
    check_unique(df, [*gcols, system, budget, item],
                 "each system needs one verdict per item and budget (several judges? select one, or add `judge` to groups)")
    levels = [b for b in orders[budget] if b is not None]
    if budgets is not None:
        levels = [_match_level(b, levels, budget) for b in budgets]
        df = df[df[budget].isin(levels)]
        orders[budget] = levels
    base = _match_level(baseline, levels, budget)
    acc = slice_accuracy(df, [*gcols, system, budget, *tcols], value="_v", scored="_s", interval="wilson",
                         type_col=type_col, settings=cfg)
    acc = acc[acc["level"] != "macro"].drop(columns=["interval", "n_excluded"])
    if not tcols:
        acc = acc[acc["level"] == "slice"].assign(level="overall")
    tname = type_col or "_type"
    if not tcols:
        acc[tname] = OVERALL
    columns = dict(system=system, budget=budget, item=item, type_col=type_col, tname=tname, cluster=cluster)
    paired = [res for b in levels if b != base for res in _paired_changes(df, base, b, gcols, columns, cfg)]
    keys = [*gcols, system, tname, budget]
    if paired:
        p = pd.concat(paired, ignore_index=True)
        pw = None
        for stat, names in _PICKS.items():
            part = p.loc[p["statistic"] == stat, [*keys, *names]].rename(columns=names)
            pw = part if pw is None else pw.merge(part, on=keys, how="outer")
        out = acc.merge(pw, on=keys, how="left")
    else:
        out = acc.assign(**{c: np.nan for c in _PAIRED})
    for c in ("n_paired", "retention_n_invalid"):
        out[c] = pd.array(out[c], dtype="Float64").round().astype("Int64")
    for c in ("change", "change_ci_low", "change_ci_high", "retention", "retention_ci_low", "retention_ci_high"):
        out[c] = out[c].astype(float) + 0.0  # no negative zeros
    out["baseline_budget"] = base
    out["ci_level"], out["n_boot"], out["seed"] = cfg.ci_level, cfg.n_boot, cfg.seed
    extra = []
    if cluster is not None:
        out["cluster"] = cluster
        if "change_design_effect" not in out:
            out["change_design_effect"] = np.nan
        extra = ["cluster", "change_design_effect"]
    out = out[[*keys[:-2], tname, budget, "level", "n", "n_correct", "accuracy", "accuracy_ci_low",
               "accuracy_ci_high", *_PAIRED, "baseline_budget", "ci_level", "n_boot", "seed", *extra]]
    if not tcols:
        return sort_levels(out.drop(columns=[tname]), [*gcols, system, budget], orders)
    return sort_levels(out, [*gcols, system, type_col, budget], orders)


def _paired_changes(df: pd.DataFrame, base, b, gcols: list[str], columns: dict, cfg: BootstrapSettings) -> list:
    """The paired bootstrap of ``b`` against ``base``, per type and pooled over types (``[]``: no item at both)."""
    budget, type_col, tname, cluster = columns["budget"], columns["type_col"], columns["tname"], columns["cluster"]
    tcols = [type_col] if type_col else []
    sub = df[df[budget].isin([base, b])]
    if not (sub[budget] == b).any():
        return []
    out = []
    calls = [(gcols + tcols, None)] if tcols else []
    calls.append((gcols, type_col))
    for grp, strata in calls:
        if cluster and strata and not constant_within(sub[cluster].to_numpy(), sub[strata].to_numpy()):
            strata = None  # a cluster spans two types: resample clusters unstratified
        try:
            res = paired_bootstrap_frame(sub, item=columns["item"], series=columns["system"], condition=budget,
                                         value="_v", judged="_s", baseline=base, comparison=b,
                                         groups=grp or None, strata=strata, cluster=cluster,
                                         settings=cfg.paired(_SCALING_STATS, aggregate=None))
        except MissingDataError:
            continue  # no item scored at both budgets for any system: paired columns stay null
        if not tcols or grp == gcols:
            res[tname] = OVERALL
        res[budget] = b
        out.append(res)
    return out


def _match_level(wanted, levels: list, column: str):
    if wanted in levels:
        return wanted
    for lv in levels:
        if lv is not None and str(lv).strip().lower() == str(wanted).strip().lower():
            return lv
    fail(f"{wanted!r} is not a value of {column!r}; values: {[x for x in levels if x is not None]}", column)


def scaling_correlations(table: pd.DataFrame, *, system: str = "system", type_col: str = "question_type",
                         budget: str = "budget", groups: Sequence[str] | None = None) -> pd.DataFrame:
    """Appendix D.5 over the per-type cells of a :func:`scaling_table`: Spearman ρ of ``retention`` and of ``change``
    against the baseline accuracy on the same paired items, per comparison budget (and ``groups``). Returns
    pandas.DataFrame: ``*groups, budget, baseline_budget, x, y, n`` (cells used), ``n_dropped`` (undefined cells),
    ``rho, p_value``."""
    gcols = as_list(groups)
    need = [*gcols, system, type_col, budget, "level", "acc_baseline_paired", "change", "retention", "baseline_budget"]
    t = to_pandas(table, need)
    t = t[(t["level"] == "slice") & t["acc_baseline_paired"].notna()]
    rows = []
    orders = {c: level_order(t[c]) for c in [*gcols, budget]}
    for key, idx in groups_of(t, [*gcols, budget]):
        part = t.iloc[idx]
        for y in ("retention", "change"):
            r = spearman(part["acc_baseline_paired"].to_numpy(float), part[y].to_numpy(float)).iloc[0]
            rows.append({**dict(zip([*gcols, budget], key)), "baseline_budget": part["baseline_budget"].iloc[0],
                         "x": "baseline_accuracy", "y": y, "n": int(r["n"]), "n_dropped": int(r["n_dropped"]),
                         "rho": float(r["rho"]), "p_value": float(r["p_value"])})
    out = pd.DataFrame(rows, columns=[*gcols, budget, "baseline_budget", "x", "y", "n", "n_dropped", "rho", "p_value"])
    return sort_levels(out, [*gcols, budget], orders)
