"""Agreement between two judges' verdicts on the same responses: :func:`judge_agreement` (per slice),
:func:`judge_agreement_pairs` (every pair of judges within each group)."""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np
import pandas as pd

from voxmem_analysis.analysis.verdicts._frames import (OVERALL, as_list, check_binary, check_unique, fail, groups_of,
                                                       is_null, numeric_values, objectify, resolve_type_col,
                                                       sort_levels, to_pandas)
from voxmem_analysis.stats import cohen_kappa

__all__ = ["judge_agreement", "judge_agreement_pairs"]


def judge_agreement(frame_a, frame_b, *, keys: Sequence[str], by: Sequence[str] | str | None = None,
                    value: str = "correct", scored: str | None = "scored", type_col: str | None = "auto") -> pd.DataFrame:
    """Agreement between two judges' verdicts on the same responses, per slice.

    ``keys``: the columns naming the same verdict in both frames (unique in each); ``by``: slicing columns of
    ``frame_a``; ``value``, ``scored``, ``type_col`` as in :func:`slice_accuracy` (a pair counts when both sides are
    scored). Returns pandas.DataFrame: ``*by, level, n`` (scored pairs), ``acc_a, acc_b, diff`` (a − b), ``agreement``
    (%), ``kappa`` (Cohen's), ``n11, n10, n01, n00`` (``n10``: credited by a only), ``only_a, only_b`` (verdicts without
    a counterpart; ``only_b`` in a slice only when ``frame_b`` has the ``by`` columns), ``n_excluded`` (pairs
    unscored)."""
    keys, by = as_list(keys), as_list(by)
    if not keys:
        fail("keys must name at least one column", "keys")
    tcol = resolve_type_col(by, type_col)
    a = to_pandas(frame_a, [*keys, *by, value, scored])
    b_by = [c for c in by if c not in keys and c in frame_b.columns]
    b = to_pandas(frame_b, [*keys, value, scored, *b_by])
    for f, name in ((a, "frame_a"), (b, "frame_b")):
        check_unique(f, keys, f"{name} must hold one verdict per key")
    va, sa = numeric_values(a, value, scored)
    vb, sb = numeric_values(b, value, scored)
    check_binary(va, sa, value, "Cohen's kappa")
    check_binary(vb, sb, value, "Cohen's kappa")
    a = a.assign(_va=va, _sa=sa)
    b = b.assign(_vb=vb, _sb=sb)
    orders = objectify(a, by)
    for k in keys:
        a[k] = a[k].astype(object)
        b[k] = b[k].astype(object)
    bsl = b[[*keys, "_vb", "_sb", *b_by]].rename(columns={c: f"{c}__b" for c in b_by})
    m = a.merge(bsl, on=keys, how="outer", indicator=True)
    right = (m["_merge"] == "right_only").to_numpy()
    for c in b_by:  # verdicts only judge b has: slice them by frame_b's own columns
        m[c] = m[c].astype(object)
        m.loc[right, c] = m.loc[right, f"{c}__b"].astype(object)
    m["_both"] = m["_merge"] == "both"
    m["_pair"] = m["_both"] & m["_sa"].fillna(False).astype(bool) & m["_sb"].fillna(False).astype(bool)
    attributable = all(c in b_by or c in keys for c in by)

    def stats_row(keys_, idx, level):
        part = m.iloc[idx]
        pr = part[part["_pair"]]
        ya, yb = pr["_va"].to_numpy(float), pr["_vb"].to_numpy(float)
        k = cohen_kappa(ya, yb).iloc[0]
        n = int(k["n"])
        acc_a = 100 * ya.mean() if n else np.nan
        acc_b = 100 * yb.mean() if n else np.nan
        return {**keys_, "level": level, "n": n, "acc_a": acc_a, "acc_b": acc_b, "diff": acc_a - acc_b,
                "agreement": 100 * float(k["agreement"]) if n else np.nan, "kappa": float(k["kappa"]),
                "n11": int(k["n11"]), "n10": int(k["n10"]), "n01": int(k["n01"]), "n00": int(k["n00"]),
                "only_a": int((part["_merge"] == "left_only").sum()),
                "only_b": int((part["_merge"] == "right_only").sum()) if (attributable or level != "slice") else pd.NA,
                "n_excluded": int((part["_both"] & ~part["_pair"]).sum())}

    rows = []
    if by:
        for key, idx in groups_of(m, by):
            if all(is_null(x) for x in key) and not attributable:
                continue
            rows.append(stats_row(dict(zip(by, key)), idx, "slice"))
    rest = [c for c in by if c != tcol] if tcol else []
    if tcol is None:
        rows.append(stats_row({c: OVERALL for c in by}, np.arange(len(m)), "overall"))
    else:
        for key, idx in groups_of(m, rest):
            rows.append(stats_row({**dict(zip(rest, key)), tcol: OVERALL}, idx, "overall"))
    out = pd.DataFrame(rows, columns=[*by, "level", "n", "acc_a", "acc_b", "diff", "agreement", "kappa",
                                      "n11", "n10", "n01", "n00", "only_a", "only_b", "n_excluded"])
    out["only_b"] = out["only_b"].astype("Int64")
    return sort_levels(out, by, orders)


def judge_agreement_pairs(frame, *, judge: str = "judge", within: Sequence[str] = ("system", "budget"),
                          item: str = "question_id", by: Sequence[str] | str | None = ("question_type",),
                          value: str = "correct", scored: str | None = "scored") -> pd.DataFrame:
    """``*within, judge_a, judge_b`` and :func:`judge_agreement` for every pair of judges within each ``within`` group
    (empty when no group has two judges)."""
    within, by = as_list(within), as_list(by)
    df = to_pandas(frame, [*within, judge, item, *by, value, scored])
    orders = objectify(df, [*within, judge])
    parts = []
    for key, idx in groups_of(df, within):
        part = df.iloc[idx]
        js = [j for j in orders[judge] if j is not None and (part[judge] == j).any()]
        for ja, jb in itertools.combinations(js, 2):
            res = judge_agreement(part[part[judge] == ja], part[part[judge] == jb], keys=[item], by=by,
                                  value=value, scored=scored)
            res.insert(0, "judge_b", jb)
            res.insert(0, "judge_a", ja)
            for c, kv in reversed(list(zip(within, key))):
                res.insert(0, c, kv)
            parts.append(res)
    if not parts:
        return pd.DataFrame(columns=[*within, "judge_a", "judge_b", *by, "level", "n", "acc_a", "acc_b", "diff",
                                     "agreement", "kappa", "n11", "n10", "n01", "n00", "only_a", "only_b", "n_excluded"])
    return pd.concat(parts, ignore_index=True)
