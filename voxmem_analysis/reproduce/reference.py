"""The paper's published numbers as a labelled reference beside your models, in the report of a release that is not
the paper's (never a score): a ``paper`` column wherever the paper publishes a comparable number (same budget, same
evidence-type breakdown; :func:`paper_columns`), and retention at 64K (% of 8K, Figure 6). Inputs: the notebooks'
``tables/fig4.csv``, ``tables/fig6.csv`` and :func:`voxmem_analysis.reproduce.published.published`."""
from __future__ import annotations

import pandas as pd

__all__ = ["EVIDENCE_COLUMNS", "paper_columns", "accuracy_reference", "retention_reference"]

EVIDENCE_COLUMNS = ("Speech Semantics", "Speaker Identity", "Paralinguistic Cues", "Environmental Sound", "Overall")


def _pub(pub: pd.DataFrame, artifact: str, row: str, column: str) -> float | None:
    hit = pub[(pub["artifact"] == artifact) & (pub["row"] == row) & (pub["column"] == column)]
    return float(hit["value"].iloc[0]) if len(hit) else None


def paper_columns(budget: str, pub: pd.DataFrame, models=()) -> dict[str, dict[str, float | None]]:
    """``{column label: {evidence column: published value}}`` comparable at ``budget`` (may be empty): at 8K the mean
    of the paper's 64K model set (Table 18), at 32K the proprietary and open-weight means (§4.2), at 64K the mean of
    its ten models and the Table 15 row of each of ``models`` it evaluated under the same name; 16K has none."""
    cols: dict[str, dict] = {}
    if budget == "8K":
        cols["paper: mean of its 10-model 64K set at 8K (Table 18)"] = {
            e: _pub(pub, "table18", e, "8K") for e in EVIDENCE_COLUMNS}
    elif budget == "32K":
        for grp in ("Proprietary", "Open-weight"):
            cols[f"paper: {grp.lower()} mean at 32K (§4.2)"] = {
                e: _pub(pub, "groups", f"32K|{grp}", e) for e in EVIDENCE_COLUMNS}
    elif budget == "64K":
        cols["paper: mean of its 10 models at 64K (Table 15)"] = {
            e: _pub(pub, "table15", "Mean all (10)", e) for e in EVIDENCE_COLUMNS}
        for m in models:
            vals = {e: _pub(pub, "table15", m, e) for e in EVIDENCE_COLUMNS}
            if any(v is not None for v in vals.values()):
                cols[f"paper: {m} at 64K (Table 15)"] = vals
    return {k: v for k, v in cols.items() if any(x is not None for x in v.values())}


def accuracy_reference(fig4: pd.DataFrame, pub: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """Per budget in ``fig4`` (the ``Budget|Model`` table of notebook 10): your models' accuracy by
    evidence type and, beside them, the comparable published columns.  ``[(budget, table)]``,
    rows = evidence types + Overall; budgets without a published number give a table without
    paper columns."""
    key = fig4.columns[0]
    parts = fig4[key].astype(str).str.split("|", n=1, expand=True)
    f = fig4.assign(_b=parts[0], _m=parts[1])
    out = []
    for b in dict.fromkeys(f["_b"]):
        rows = f[(f["_b"] == b) & ~f["_m"].str.startswith("Mean ") & (f["_m"] != "n")]
        models = list(rows["_m"])
        table = pd.DataFrame({m: [r.get(e) for e in EVIDENCE_COLUMNS] for m, r in
                              zip(models, rows.to_dict("records"))}, index=list(EVIDENCE_COLUMNS))
        for label, vals in paper_columns(b, pub, models).items():
            table[label] = [vals.get(e) for e in EVIDENCE_COLUMNS]
        n = f[(f["_b"] == b) & (f["_m"] == "n")]
        if len(n):
            table["n (your items)"] = [n.iloc[0].get(e) for e in EVIDENCE_COLUMNS]
        table.index.name = f"evidence type ({b})"
        out.append((b, table.reset_index()))
    return out


def retention_reference(fig6: pd.DataFrame | None, pub: pd.DataFrame) -> pd.DataFrame | None:
    """Retention at 64K (% of 8K) of your models' mean beside the paper's (Figure 6), or ``None``
    when your scaling table has no 64K column (the paper publishes retention at 64K only)."""
    if fig6 is None or "64K" not in fig6.columns or "8K" not in fig6.columns:
        return None
    key = fig6.columns[0]
    rows = []
    for rec in fig6.to_dict("records"):
        e = rec[key]
        rows.append({"evidence type": e, "yours: retention at 64K (% of 8K)": rec.get("64K"),
                     "paper: retention at 64K (Figure 6)": _pub(pub, "fig6", e, "64K")
                     if e != "Overall" else (None if _pub(pub, "table18", "Overall", "retention") is None
                                             else 100 * _pub(pub, "table18", "Overall", "retention"))})
    return pd.DataFrame(rows)
