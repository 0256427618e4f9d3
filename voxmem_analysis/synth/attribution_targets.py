"""Targets of the synthetic error attribution, read from the paper's published numbers.

Every target comes from :func:`voxmem_analysis.reproduce.published.published` (artifacts
``table20``, ``fig7``, ``fig10``, ``population``; ``data/paper/published.csv``) when this module
is imported; the constants below are derived from it, not restated.  Also the shorthands of
the attribution vocabulary shared by the other ``synth.attribution_*`` modules
(:data:`CLASSES`, :data:`EVS`, :data:`SUBS`, :data:`OPS`, :data:`SPK`, :data:`PARA`, :data:`ENV`).
"""
from __future__ import annotations

import pandas as pd

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.reproduce.published import published

__all__ = [
    "published_targets", "TARGETS", "TABLE20_COUNTS", "TABLE20_EVIDENCE", "TABLE20_CELLS", "MACRO_TARGETS", "MACRO_BOUNDS",
    "EXCLUSIONS", "POPULATION", "WRONG_TIME_STATES", "SOLVER_TOL", "CLASSES", "EVS", "SUBS", "OPS", "SPK", "PARA", "ENV",
]

CLASSES = tx.ATTRIBUTION_CLASSES          # recognition, binding, operation, unsupported, not_attributable
EVS = tx.AUDIO_NATIVE
SUBS = tx.SUBTYPES
OPS = tx.ANSWERABLE_OPERATIONS
SPK, PARA, ENV = EVS


# ----------------------------------------------------------------------------- published targets
# Every target is read from the paper's published numbers (voxmem_analysis.reproduce.published.published(),
# data/paper/published.csv), the single source of truth; nothing is restated here.
_BY_ROW_LABELS = {
    "fig7": {**{tx.OPERATION_LABELS[o]: ("operation", o) for o in OPS},
             **{tx.EVIDENCE_LABELS[e]: ("evidence_type", e) for e in EVS}},
    "fig10": {tx.SUBTYPE_LABELS[s]: ("subtype", s) for s in SUBS},
}
_CLASS_OF_LABEL = {tx.ATTRIBUTION_LABELS[c]: c for c in CLASSES}


def published_targets(pub: pd.DataFrame | None = None) -> dict:
    """The attribution targets from the published table (default :func:`voxmem_analysis.reproduce.published.published`).

    Returns a dict with the module constants' values (``TABLE20_COUNTS`` ... ``WRONG_TIME_STATES``)
    plus ``table20_totals`` ``{row label: Total}``, ``table20_total_row`` (Total row by class),
    ``tolerance`` ``{(by, group, class): published tolerance}`` for the macro targets and bounds
    and ``shares`` ``{class: (%, printed half-unit)}`` (E.2, E.5).  A missing cell raises ``KeyError``.
    """
    if pub is None:
        pub = published()
    cells = {(r.artifact, r.row, r.column): r for r in pub.itertuples(index=False)}

    def cell(artifact: str, row: str, column: str):
        try:
            return cells[(artifact, row, column)]
        except KeyError:
            raise KeyError(f"published.csv has no number for ({artifact}, {row}, {column}); "
                           "the synthetic attribution is calibrated to it") from None

    def count(artifact: str, row: str, column: str) -> int:
        v = float(cell(artifact, row, column).value)
        if v != int(v):
            raise ValueError(f"published ({artifact}, {row}, {column}) = {v} is not a count")
        return int(v)

    labels = [tx.ATTRIBUTION_LABELS[c] for c in CLASSES]
    macro, bounds, tol = [], [], {}
    for r in pub.itertuples(index=False):          # published order
        if r.artifact not in _BY_ROW_LABELS:
            continue
        try:
            by, group = _BY_ROW_LABELS[r.artifact][r.row]
            cls = _CLASS_OF_LABEL[r.column]
        except KeyError:
            raise ValueError(f"published ({r.artifact}, {r.row}, {r.column}): not a group x class share "
                             "the synthetic attribution knows") from None
        target = (by, group, cls, float(r.value))
        if r.comparator == "approx":
            macro.append(target)
        elif r.comparator == "le":
            bounds.append(target)
        else:
            raise ValueError(f"published ({r.artifact}, {r.row}, {r.column}): comparator {r.comparator!r} "
                             "is not supported by the synthetic attribution")
        tol[(by, group, cls)] = float(r.tolerance)
    shares = {}
    for cls, row in (("operation", "Operation"), ("not_attributable", "Not attributable")):
        c = cell("population", row, "pct")
        shares[cls] = (float(c.value), 0.5 * 10.0 ** -int(c.decimals))
    return {
        "TABLE20_COUNTS": {s: tuple(count("table20", tx.SUBTYPE_LABELS[s], lab) for lab in labels) for s in SUBS},
        "TABLE20_EVIDENCE": {e: tuple(count("table20", tx.EVIDENCE_LABELS[e], lab) for lab in labels) for e in EVS},
        "TABLE20_CELLS": {s: count("table20", tx.SUBTYPE_LABELS[s], "Cells") for s in SUBS},
        "MACRO_TARGETS": tuple(macro),
        "MACRO_BOUNDS": tuple(bounds),
        "EXCLUSIONS": {"refusal": count("population", "Refusals", "n"), "empty": count("population", "Empty", "n"),
                       "truncated": count("population", "Truncated", "n")},
        "POPULATION": {"attempts": count("population", "Attempts", "n"),
                       "incorrect": count("population", "Incorrect", "n"),
                       "attributed": count("population", "Attributed", "n")},
        "WRONG_TIME_STATES": count("population", "Wrong time point", "n"),
        "table20_totals": {lab: count("table20", lab, "Total")
                           for lab in [*(tx.SUBTYPE_LABELS[s] for s in SUBS), *(tx.EVIDENCE_LABELS[e] for e in EVS),
                                       "Total"]},
        "table20_total_row": tuple(count("table20", "Total", lab) for lab in labels),
        "tolerance": tol,
        "shares": shares,
    }


#: Everything :func:`published_targets` read (also the totals and tolerances the checker compares with).
TARGETS = published_targets()
#: Table 20, subtype rows: (Recog., Bind., Oper., Unsup., N.a.)
TABLE20_COUNTS: dict[str, tuple[int, int, int, int, int]] = TARGETS["TABLE20_COUNTS"]
#: Table 20, evidence-type rows.
TABLE20_EVIDENCE: dict[str, tuple[int, int, int, int, int]] = TARGETS["TABLE20_EVIDENCE"]
#: Table 20, Cells column (model x evidence cells with >= 5 errors in the subtype).
TABLE20_CELLS: dict[str, int] = TARGETS["TABLE20_CELLS"]
#: Macro-averaged percentages quoted in Section 4.4 (Finding 6) and Appendix E.3 (Figures 7 and 10,
#: comparator ``approx``): (by, group, class, %), in published order.
MACRO_TARGETS: tuple[tuple[str, str, str, float], ...] = TARGETS["MACRO_TARGETS"]
#: Upper bounds stated in E.3 ("0-14% in every other subtype", "at most 12% elsewhere"; comparator
#: ``le``), as printed (rounded): (by, group, class, %).
MACRO_BOUNDS: tuple[tuple[str, str, str, float], ...] = TARGETS["MACRO_BOUNDS"]
#: App. D.5 exclusions.
EXCLUSIONS: dict[str, int] = TARGETS["EXCLUSIONS"]
#: App. D.5 population.
POPULATION: dict[str, int] = TARGETS["POPULATION"]
#: E.3: "Only 4 errors in the whole population report a real value of the tracked attribute at the wrong point in time".
WRONG_TIME_STATES: int = TARGETS["WRONG_TIME_STATES"]
SOLVER_TOL = 0.3
