"""Checking the synthetic error attribution: every number recomputed through the analysis code."""
from __future__ import annotations

import pandas as pd
import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis import attribution as A
from voxmem_analysis.synth.attribution_targets import (CLASSES, EVS, EXCLUSIONS, MACRO_BOUNDS, MACRO_TARGETS,
                                                       POPULATION, SUBS, TABLE20_CELLS, TABLE20_COUNTS,
                                                       TABLE20_EVIDENCE, TARGETS, WRONG_TIME_STATES)
from voxmem_analysis.io.scoring import apply_scoring

__all__ = ["predictions_frame", "calibration_report"]


# ----------------------------------------------------------------------------- checking
def predictions_frame(preds: pl.DataFrame) -> pl.DataFrame:
    """Harness predictions -> the verdict-frame columns the attribution code reads (scored by the paper's rules)."""
    cols = {
        "model": pl.col("model"), "item_id": pl.col("item_id"),
        "budget": pl.col("context_length").map_elements(tx.normalize_budget, return_dtype=pl.Utf8),
        "evidence_type": pl.col("evidence_type").map_elements(tx.normalize_evidence, return_dtype=pl.Utf8),
        "operation": pl.col("memory_operation").map_elements(tx.normalize_operation, return_dtype=pl.Utf8),
        "subtype": pl.col("subtype").map_elements(tx.normalize_subtype, return_dtype=pl.Utf8),
        "is_ar": pl.col("expected_response") == "insufficient_evidence",
        "answer_type": pl.col("answer_type") if "answer_type" in preds.columns else pl.lit(None, dtype=pl.Utf8),
        "response": pl.col("response"), "verdict": pl.col("verdict"),
        "error": pl.col("error") if "error" in preds.columns else pl.lit(None, dtype=pl.Utf8),
    }
    df = preds.select([v.alias(k) for k, v in cols.items()])
    return apply_scoring(df)


def calibration_report(preds: pl.DataFrame, records: list[dict], models: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every calibrated number: published target vs what the analysis code computes from the synthetic output.

    Returns
    -------
    DataFrame
        ``quantity, group, column, target, achieved, tolerance, ok``.  Counts must match
        exactly; macro percentages within their published tolerance; bounds as printed (rounded);
        the E.2/E.5 shares within half a printed unit.
    """
    frame = predictions_frame(preds)
    sel = A.select_models(frame, models)
    audit, _ = A.audit_records_frame(records, frame=frame, models=sel, strict=True, file="<records>")
    pop = A.attribution_population(frame, audit, models=sel).set_index("stage")["count"]
    errors = A.attributed_errors(frame, audit, models=sel)
    t20 = A.table20(errors)
    rows = []

    def add(q, g, col, target, achieved, tol=0.0, kind="eq"):
        if kind == "eq":
            ok = abs(achieved - target) <= tol + 1e-9
        else:
            ok = round(achieved) <= target
        rows.append((q, g, col, float(target), float(achieved), tol, bool(ok)))

    add("population", "attempts", "count", POPULATION["attempts"], pop["attempts"])
    add("population", "incorrect", "count", POPULATION["incorrect"], pop["incorrect"])
    add("population", "refusals", "count", EXCLUSIONS["refusal"], pop["refusals"])
    add("population", "empty", "count", EXCLUSIONS["empty"], pop["empty"])
    add("population", "truncated", "count", EXCLUSIONS["truncated"], pop["truncated"])
    add("population", "attributed", "count", POPULATION["attributed"], pop["attributed"])
    add("population", "missing_record", "count", 0, pop["missing_record"])
    labels = [tx.ATTRIBUTION_LABELS[c] for c in CLASSES]
    for s in SUBS:
        row = t20.loc[tx.SUBTYPE_LABELS[s]]
        for lab, t in zip(labels, TABLE20_COUNTS[s]):
            add("table20", tx.SUBTYPE_LABELS[s], lab, t, row[lab])
        add("table20", tx.SUBTYPE_LABELS[s], "Total", TARGETS["table20_totals"][tx.SUBTYPE_LABELS[s]], row["Total"])
        add("table20", tx.SUBTYPE_LABELS[s], "Cells", TABLE20_CELLS[s], row["Cells"])
    for e in EVS:
        row = t20.loc[tx.EVIDENCE_LABELS[e]]
        for lab, t in zip(labels, TABLE20_EVIDENCE[e]):
            add("table20", tx.EVIDENCE_LABELS[e], lab, t, row[lab])
        add("table20", tx.EVIDENCE_LABELS[e], "Total", TARGETS["table20_totals"][tx.EVIDENCE_LABELS[e]], row["Total"])
    tot = t20.loc["Total"]
    for lab, t in zip(labels, TARGETS["table20_total_row"]):
        add("table20", "Total", lab, t, tot[lab])
    add("table20", "Total", "Total", TARGETS["table20_totals"]["Total"], tot["Total"])
    props = {b: A.class_proportions(errors, by=b).set_index("group") for b in ("operation", "evidence_type", "subtype")}
    label_of = {"operation": tx.OPERATION_LABELS, "evidence_type": tx.EVIDENCE_LABELS, "subtype": tx.SUBTYPE_LABELS}
    for by, g, c, t in MACRO_TARGETS:
        add(f"macro_{by}", label_of[by][g], tx.ATTRIBUTION_LABELS[c], t, props[by].loc[g, c],
            TARGETS["tolerance"][by, g, c])
    for by, g, c, t in MACRO_BOUNDS:
        add(f"bound_{by}", label_of[by][g], tx.ATTRIBUTION_LABELS[c] + " <=", t, props[by].loc[g, c], 0.0, kind="le")
    wrong_time = int(audit["relation"].isin(A.WRONG_TIME_RELATIONS).sum())
    add("records", "wrong point in time (E.3)", "count", WRONG_TIME_STATES, wrong_time)
    share, half = TARGETS["shares"]["operation"]
    add("records", "Oper. share of attributed (E.5)", "%", share, 100 * tot["Oper."] / tot["Total"], half)
    share, half = TARGETS["shares"]["not_attributable"]
    add("records", "N.a. share of attributed (E.2)", "%", share, 100 * tot["N.a."] / tot["Total"], half)
    return pd.DataFrame(rows, columns=["quantity", "group", "column", "target", "achieved", "tolerance", "ok"])
