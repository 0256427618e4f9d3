"""Every pair of systems at the same budget, on the items both scored: :func:`compare_systems`
(paired bootstrap interval of the difference, exact McNemar, Holm, Cochran's Q)."""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis.analysis.verdicts._frames import (as_list, check_unique, cluster_of, fail,
                                                       groups_of, is_null, numeric_values, objectify, sort_levels,
                                                       to_pandas)
from voxmem_analysis.stats import STATISTICS, cochran_q, holm, mcnemar_exact, paired_bootstrap_frame
from voxmem_analysis.stats.settings import BootstrapSettings

__all__ = ["compare_systems", "holm_columns", "P_ADJUST_FAMILIES"]

#: Families of the Holm adjustment: every row of the table, or the rows of each budget (and ``groups`` values).
P_ADJUST_FAMILIES = ("all", "per-slice")

_COLUMNS = ["system_a", "system_b", "n_a", "n_b", "n_common", "only_a", "only_b", "n_correct_a", "n_correct_b",
            "acc_a", "acc_b", "diff", "diff_ci_low", "diff_ci_high", "diff_ci_flag", "a_right_b_wrong", "a_wrong_b_right",
            "p_mcnemar"]
#: The paired engine's interval columns, each copied as ``diff_<column>``.
_INTERVAL_COLUMNS = ("ci_low", "ci_high", "ci_low_mc_se", "ci_high_mc_se", "ci_resolution", "ci_flag")


def compare_systems(frame, *, system: str = "system", item: str = "question_id", value: str = "correct",
                    scored: str | None = "scored", groups: str | Sequence[str] | None = None,
                    systems: Sequence | None = None, alpha: float = 0.05, family: str = "all",
                    cluster: str | None = None, strata: str | None = None,
                    settings: BootstrapSettings = BootstrapSettings()) -> pd.DataFrame:
    """Every pair of systems within each ``groups`` value (e.g. each budget), on the items both scored.

    ``frame``: one row per (system, groups, item) (several judges: select one, or add ``judge`` to ``groups``);
    ``systems``: which to compare, in that order (default all, :func:`level_order`); ``family``: Holm over every row
    (``"all"``) or within each group (``"per-slice"``), the ``reject`` column at ``alpha``; ``cluster`` / ``strata``:
    item-level columns the paired bootstrap draws whole clusters of or draws within; ``settings``: the bootstrap's
    ``n_boot, seed, ci_level, progress``, its endpoints (``interval``) and ``mc_se``. Returns pandas.DataFrame:
    ``*groups, system_a, system_b, n_a, n_b`` (scored), ``n_common, only_a, only_b, n_correct_a, n_correct_b, acc_a,
    acc_b`` (on the common items, %), ``diff`` (acc_a − acc_b, pp) with ``diff_ci_low, diff_ci_high, diff_ci_flag``,
    ``a_right_b_wrong, a_wrong_b_right, p_mcnemar`` (exact), ``p_holm, n_family, holm_family, reject, n_boot, seed,
    p_cochran, n_cochran`` (Cochran's Q over three systems or more); with ``cluster`` ``cluster, diff_design_effect``;
    with ``mc_se`` or BCa ``interval`` (and ``diff_ci_low_mc_se, diff_ci_high_mc_se, diff_ci_resolution``)."""
    cfg = settings.check()
    if family not in P_ADJUST_FAMILIES:
        fail(f"family must be one of {P_ADJUST_FAMILIES}, got {family!r}", "family")
    gcols = as_list(groups)
    df = to_pandas(frame, list(dict.fromkeys([*gcols, system, item, value, scored] + [c for c in (cluster, strata) if c])))
    v, s = numeric_values(df, value, scored)
    df = df.assign(_v=v, _s=s)
    orders = objectify(df, [*gcols, system])
    check_unique(df, [*gcols, system, item],
                 "each system needs one verdict per item and budget (several judges? select one, or add `judge` to groups)")
    per_item = {"_cluster": cluster_of(df, item, cluster), "_strata": cluster_of(df, item, strata, "stratum")}
    binary = bool(np.isin(v[s], (0.0, 1.0)).all())
    sys_order = list(systems) if systems is not None else [x for x in orders[system] if x is not None]
    _require_pairs(df, gcols, system, sys_order)
    rows, long_parts = _pairs(df, gcols, system, item, sys_order, binary, per_item)
    if long_parts:
        _diff_intervals(rows, pd.concat(long_parts, ignore_index=True), cfg)
    out = pd.DataFrame(rows, columns=[*gcols, *_COLUMNS])
    for c in ("a_right_b_wrong", "a_wrong_b_right"):
        out[c] = out[c].astype("Int64")
    if binary:
        for c in ("n_correct_a", "n_correct_b"):
            out[c] = pd.array(out[c].round(), dtype="Int64")
    for c in ("acc_a", "acc_b", "diff", "diff_ci_low", "diff_ci_high"):
        out[c] = out[c].astype(float) + 0.0  # no negative zeros
    holm_columns(out, gcols if family == "per-slice" else [], alpha)
    out["n_boot"], out["seed"] = cfg.n_boot, cfg.seed
    out = _omnibus(out, df, gcols, system, item, binary)
    if cluster is not None:
        out["cluster"] = cluster
        out["diff_design_effect"] = [r.get("diff_design_effect", np.nan) for r in rows]
    if cfg.mc_se or cfg.interval != "percentile":
        out["interval"] = cfg.interval
    if cfg.mc_se:
        for c in ("diff_ci_low_mc_se", "diff_ci_high_mc_se", "diff_ci_resolution"):
            out[c] = [r.get(c, np.nan) for r in rows]
    return sort_levels(out, gcols, orders)


def _pairs(df: pd.DataFrame, gcols: list[str], system: str, item: str, sys_order: list, binary: bool,
           per_item: dict[str, pd.Series | None]) -> tuple[list[dict], list[pd.DataFrame]]:
    """One row per pair within each group, and the long frames of their common items for the bootstrap."""
    rows: list[dict] = []
    long_parts: list[pd.DataFrame] = []
    sc = df[df["_s"]]
    for key, idx in groups_of(df, gcols):
        part = df.iloc[idx]
        part_sc = sc[sc.index.isin(part.index)]
        present = set(part[system])
        names = [x for x in sys_order if x in present]
        by_sys = {x: part_sc.loc[part_sc[system] == x].set_index(item)["_v"] for x in names}
        for a, b in itertools.combinations(names, 2):
            xa, xb = by_sys[a], by_sys[b]
            common = xa.index.intersection(xb.index).sort_values()
            ya, yb = xa.loc[common].to_numpy(), xb.loc[common].to_numpy()
            r = {**dict(zip(gcols, key)), "system_a": a, "system_b": b, "n_a": len(xa), "n_b": len(xb),
                 "n_common": len(common), "only_a": len(xa) - len(common), "only_b": len(xb) - len(common),
                 "n_correct_a": float(ya.sum()), "n_correct_b": float(yb.sum()),
                 "acc_a": 100 * ya.mean() if len(common) else np.nan,
                 "acc_b": 100 * yb.mean() if len(common) else np.nan}
            r["diff"] = r["acc_a"] - r["acc_b"]
            r["diff_ci_low"] = r["diff_ci_high"] = np.nan
            r["diff_ci_flag"] = ""
            r["a_right_b_wrong"] = r["a_wrong_b_right"] = pd.NA
            r["p_mcnemar"] = np.nan
            if len(common) and binary:
                m = mcnemar_exact(ya, yb).iloc[0]
                r["a_right_b_wrong"], r["a_wrong_b_right"], r["p_mcnemar"] = int(m["n10"]), int(m["n01"]), float(m["p_value"])
            if len(common):
                long_parts.append(pd.DataFrame({
                    "_pair": len(rows), "_series": 0, "_item": np.concatenate([common.to_numpy(dtype=object)] * 2),
                    "_role": ["a"] * len(common) + ["b"] * len(common), "_val": np.concatenate([ya, yb]),
                    **{k: np.concatenate([m.loc[common].to_numpy(dtype=object)] * 2)
                       for k, m in per_item.items() if m is not None}}))
            rows.append(r)
    return rows, long_parts


def _diff_intervals(rows: list[dict], long: pd.DataFrame, cfg: BootstrapSettings) -> None:
    """The paired bootstrap interval of every pair's ``diff`` (the two systems as the two conditions), into ``rows``."""
    boot = paired_bootstrap_frame(long, item="_item", series="_series", condition="_role", value="_val",
                                  baseline="a", comparison="b", groups="_pair",
                                  cluster="_cluster" if "_cluster" in long else None,
                                  strata="_strata" if "_strata" in long else None,
                                  settings=cfg.paired({"diff": STATISTICS["drop"]}))
    for rec in boot.to_dict("records"):
        rows[int(rec["_pair"])].update({f"diff_{k}": rec[k] for k in _INTERVAL_COLUMNS},
                                       diff_design_effect=float(rec["design_effect"]))


def holm_columns(out: pd.DataFrame, fam_cols: list[str], alpha: float, p: str = "p_mcnemar") -> None:
    """``p_holm``, ``n_family``, ``holm_family`` and ``reject`` of ``out`` (in place): Holm over the p-values ``p`` of
    each family, the rows sharing ``fam_cols`` (``[]``: every row); ``holm_family`` names the family."""
    out["p_holm"], out["n_family"], out["holm_family"], out["reject"] = np.nan, 0, "", False
    if len(out):
        parts = ([(k, ix) for k, ix in out.groupby(fam_cols, sort=False, dropna=False).indices.items()]
                 if fam_cols else [((), np.arange(len(out)))])
        for key, idx in parts:
            idx = list(out.index[idx])
            h = holm(out.loc[idx, p].to_numpy(dtype=float), alpha=alpha)
            n = int(out.loc[idx, p].notna().sum())
            key = key if isinstance(key, tuple) else (key,)
            where = ", ".join(f"{c} {v}" for c, v in zip(fam_cols, key)) if fam_cols else "all rows"
            out.loc[idx, "p_holm"] = h["p_adjusted"].to_numpy()
            out.loc[idx, "reject"] = h["reject"].to_numpy()
            out.loc[idx, "n_family"] = n
            out.loc[idx, "holm_family"] = f"{where} ({n} test{'s' * (n != 1)})"
    out["reject"] = out["reject"].astype(bool)


def _require_pairs(df: pd.DataFrame, gcols: list[str], system: str, systems: Sequence) -> None:
    """An error unless some group holds two of ``systems`` (an empty table would look like a result)."""
    wanted = set(systems)
    found = sorted({str(x) for x in df[system].dropna() if x in wanted})
    if len(found) < 2:
        fail(f"compare needs at least two systems; found {len(found)}"
              + (f" ({', '.join(found)})" if found else "") + ": list two or more systems", system)
    if gcols and not any(len(set(df[system].iloc[idx].dropna()) & wanted) >= 2 for _, idx in groups_of(df, gcols)):
        fail(f"compare needs two systems at the same {', '.join(gcols)}; no {', '.join(gcols)} has more than one "
              f"of {', '.join(found)}", system)


def _omnibus(out: pd.DataFrame, df: pd.DataFrame, gcols: list[str], system: str, item: str,
             binary: bool) -> pd.DataFrame:
    """Cochran's Q over the systems of each group (3 or more), on the items all of them scored."""
    out["p_cochran"], out["n_cochran"] = np.nan, 0
    if not binary or out.empty:
        return out
    sc = df[df["_s"]]
    for key, idx in groups_of(sc, gcols):
        part = sc.iloc[idx]
        wide = part.pivot_table(index=item, columns=system, values="_v", aggfunc="first", observed=True).dropna()
        rows = _match_rows(out, gcols, key)
        names = set(out.loc[rows, "system_a"]) | set(out.loc[rows, "system_b"])
        wide = wide[[c for c in wide.columns if c in names]]
        if wide.shape[1] < 3 or wide.empty:
            continue
        q = cochran_q(wide.to_numpy(float)).iloc[0]
        out.loc[rows, "p_cochran"], out.loc[rows, "n_cochran"] = float(q["p_value"]), int(q["n"])
    return out


def _match_rows(out: pd.DataFrame, gcols: list[str], key) -> np.ndarray:
    mask = np.ones(len(out), dtype=bool)
    for c, k in zip(gcols, key):
        mask &= (out[c] == k).to_numpy() if not is_null(k) else out[c].isna().to_numpy()
    return mask
