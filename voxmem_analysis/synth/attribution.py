"""Synthetic error-attribution audit records calibrated to Table 20, Figure 7/10 and D.5.

:func:`make_attribution` is called by the synthetic release generator with the 64K harness
predictions.  Among the 64K, audio-native, answerable, *incorrect* predictions of the ten
64K systems it decides which become refusals, empty generations and truncated answers
(App. D.5 exclusions) and which are attributed, and writes one audit record
(``FORMATS.md`` section 4) per attributed or truncated error, so that the rules of
:mod:`voxmem_analysis.analysis.attribution` give back exactly:

* Table 20's counts (subtype x class, evidence type x class, totals) and its ``Cells`` column;
* the macro-averaged percentages of Section 4.4 (Finding 6) and Appendix E.3 (within their
  published tolerance, 0.5 pp), and the bounds stated there (binding <= 14 % outside
  Cue-to-Fact, operation <= 12 % outside Counting/Matching/Aggregation);
* the exclusion counts of D.5 (1,595 / 167 / 162) and the four wrong-point-in-time answers of E.3.

All of these targets are read from :func:`voxmem_analysis.reproduce.published.published` (artifacts ``table20``,
``fig7``, ``fig10``, ``population``) when this module is imported; the module constants
(:data:`TABLE20_COUNTS` ... :data:`WRONG_TIME_STATES`) are derived from it, not restated.

How: (1) the subtype x evidence x class counts are fitted to both published margins by
iterative proportional fitting and rounded with a max-flow (exact margins); (2) a seeded
simulated annealing distributes them over the systems with count-preserving moves (move a
unit to another system; swap two classes between systems; a 2 x 2 cycle over evidence type
x subtype), minimising the misfit of the Cells column, the macro targets and bounds, plus
a weak pull toward each system's refusal propensity (its AR accuracy) and toward the
fitted table; (3) concrete predictions are drawn per system x evidence x subtype, records
and response texts are written from varied templates and every record is checked against
:func:`voxmem_analysis.analysis.attribution.classify`.  Everything random flows from the ``rng``
argument, so the output is a deterministic function of it.

:func:`calibration_report` recomputes every number through the analysis code (the
refusal detector included) and lists target vs achieved.  :func:`standin_inputs` builds
a stand-in of the generator's inputs for development and tests.
"""
from __future__ import annotations

import json
import math
from collections import defaultdict
from pathlib import Path

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis.analysis import attribution as A
from voxmem_analysis import taxonomy as tx

__all__ = [
    "make_attribution", "calibration_report", "standin_inputs", "write_attribution", "predictions_frame",
    "TABLE20_COUNTS", "TABLE20_EVIDENCE", "TABLE20_CELLS", "MACRO_TARGETS", "MACRO_BOUNDS", "EXCLUSIONS",
    "POPULATION", "WRONG_TIME_STATES",
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


def _published_targets(pub: pd.DataFrame | None = None) -> dict:
    """The attribution targets from the published table (default :func:`voxmem_analysis.reproduce.published.published`).

    Returns a dict with the module constants' values (``TABLE20_COUNTS`` ... ``WRONG_TIME_STATES``)
    plus ``table20_totals`` ``{row label: Total}``, ``table20_total_row`` (Total row by class),
    ``tolerance`` ``{(by, group, class): published tolerance}`` for the macro targets and bounds
    and ``shares`` ``{class: (%, printed half-unit)}`` (E.2, E.5).  A missing cell raises ``KeyError``.
    """
    if pub is None:
        from voxmem_analysis.reproduce.published import published

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


_TARGETS = _published_targets()
#: Table 20, subtype rows: (Recog., Bind., Oper., Unsup., N.a.)
TABLE20_COUNTS: dict[str, tuple[int, int, int, int, int]] = _TARGETS["TABLE20_COUNTS"]
#: Table 20, evidence-type rows.
TABLE20_EVIDENCE: dict[str, tuple[int, int, int, int, int]] = _TARGETS["TABLE20_EVIDENCE"]
#: Table 20, Cells column (model x evidence cells with >= 5 errors in the subtype).
TABLE20_CELLS: dict[str, int] = _TARGETS["TABLE20_CELLS"]
#: Macro-averaged percentages quoted in Section 4.4 (Finding 6) and Appendix E.3 (Figures 7 and 10,
#: comparator ``approx``): (by, group, class, %), in published order.
MACRO_TARGETS: tuple[tuple[str, str, str, float], ...] = _TARGETS["MACRO_TARGETS"]
#: Upper bounds stated in E.3 ("0-14% in every other subtype", "at most 12% elsewhere"; comparator
#: ``le``), as printed (rounded): (by, group, class, %).
MACRO_BOUNDS: tuple[tuple[str, str, str, float], ...] = _TARGETS["MACRO_BOUNDS"]
#: App. D.5 exclusions.
EXCLUSIONS: dict[str, int] = _TARGETS["EXCLUSIONS"]
#: App. D.5 population.
POPULATION: dict[str, int] = _TARGETS["POPULATION"]
#: E.3: "Only 4 errors in the whole population report a real value of the tracked attribute at the wrong point in time".
WRONG_TIME_STATES: int = _TARGETS["WRONG_TIME_STATES"]
_SOLVER_TOL = 0.3

# ----------------------------------------------------------------------------- vocabulary for records
_SOUNDS = (
    "dog barking", "rain on a window", "crackling fire", "clock ticking", "church bells", "car engine idling",
    "hen clucking", "rooster crowing", "vacuum cleaner", "keyboard typing", "knocking on a door", "siren",
    "chainsaw", "water drops", "crickets", "thunder", "washing machine", "footsteps", "sea waves",
    "birds chirping", "train passing", "helicopter", "glass breaking", "mouse clicks", "pouring water", "wind",
    "crying baby", "airplane overhead", "clapping", "snoring", "coughing", "frog croaking", "door creaking",
    "cat meowing", "cow mooing", "fireworks", "hand saw", "sheep bleating", "toilet flushing", "brushing teeth",
)
_DELIVERIES = (
    "hesitant", "excited", "sad and slow", "angry", "whispering", "fast-paced", "slow and deliberate", "emphatic",
    "laughing", "tense", "confident", "surprised", "reflective and slow", "nervous", "cheerful", "tired",
    "frustrated", "urgent", "sarcastic", "anxious", "playful", "solemn",
)
_GENERIC = {
    SPK: ("one of the users", "the usual person", "someone from the earlier chats", "a regular user"),
    PARA: ("clear", "neutral", "steady", "calm and composed", "a normal conversational tone", "relaxed and even"),
    ENV: ("some background noise", "general ambient noise", "a quiet room", "indistinct sounds", "faint room noise"),
}
_TOPICS = (
    "the grocery errands", "the weekend hiking trip", "the report review", "the hallway cabinet",
    "the garden shed repair", "the birthday dinner", "the car service", "the new phone plan",
    "the dentist appointment", "the book club pick", "the kitchen renovation", "the gym schedule",
    "the flight to Lisbon", "the quarterly budget", "the neighbour's party", "the piano lessons",
    "the moving boxes", "the tax forms", "the dog's vet visit", "the photo album", "the team offsite",
    "the bike repair", "the recipe swap", "the laundry rota", "the produce pickup", "the storage unit",
)
_FACTS = (
    "lower drawer", "market route", "canal route", "Thursday afternoon", "the blue folder", "hanging caddy",
    "second shelf", "the 7:40 train", "the green notebook", "Aunt Rosa", "the corner cafe", "room 214",
    "the oak table", "three o'clock", "the red suitcase", "platform nine", "the back porch", "the left cupboard",
    "the Friday meeting", "the spare bedroom", "the north entrance", "the pharmacy on Elm Street",
    "the striped umbrella", "the window seat", "the late shift", "the ferry", "the top bunk", "the shared drive",
)
_QUOTES = (
    "for {topic}, maybe we ought to choose {fact}",
    "I think {fact} makes the most sense for {topic}",
    "let's just go with {fact}, at least for {topic}",
    "honestly {fact} would be easier for {topic}",
    "I put it in {fact} after we sorted out {topic}",
    "we agreed on {fact} when we talked about {topic}",
)
_NONE_RESPONSES = (
    "I have noted that down.", "Thanks for letting me know, I'll keep that in mind.", "Got it.",
    "Sure, I can help with that whenever you're ready.", "Okay, noted.",
)
_DENIALS = {
    SPK: ("It was just you speaking in all of those chats.",),
    PARA: ("Nothing stood out about how you spoke.", "Your delivery was the same as always."),
    ENV: ("There was no background sound in that chat.", "It was completely silent behind you."),
}
_EVIDENCE_REFUSALS = (
    "insufficient evidence", "Insufficient evidence.", "insufficient evidence.",
    "The conversation does not contain enough information to determine this.",
    "There is not enough information in our previous conversations to answer that.",
    "I can't determine that from the earlier sessions.",
    "That cannot be determined from the conversation history.",
    "I don't know; the sessions don't mention it.",
)
_CAPABILITY_REFUSALS = (
    "I'm sorry, but I cannot hear audio, so I can't tell how anything sounded.",
    "I don't have access to previous conversations.",
    "As an AI text model, I am unable to listen to audio recordings.",
    "I have no memory of earlier sessions, so I cannot answer that.",
    "I cannot process the audio from previous chats.",
)
_FAIL_ERRORS = (
    "generation failed: timeout", "generation failed: timeout after 600 s", "generation failed: empty output",
    "generation failed: worker crashed (CUDA out of memory)", "generation failed: connection reset by peer",
)
_NUM_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")


# ----------------------------------------------------------------------------- input handling
def _norm_models(models: pd.DataFrame | None, preds: pl.DataFrame) -> list[str]:
    present = preds["model"].unique(maintain_order=True).to_list()
    if models is not None and len(models) and "in_64k_set" in models.columns:
        flag = models["in_64k_set"].map(lambda v: str(v).strip().lower() in ("true", "1", "yes"))
        flagged = [m for m in models.loc[flag, "model"] if m in set(present)]
        if flagged:
            return flagged
    return present


def _blank(v) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def _population(preds: pl.DataFrame, models: pd.DataFrame | None) -> tuple[pl.DataFrame, list[str]]:
    """64K audio-native answerable predictions of the selected systems, with ``_incorrect``."""
    df = preds.with_columns(
        pl.col("context_length").map_elements(tx.normalize_budget, return_dtype=pl.Utf8).alias("_budget"),
        pl.col("evidence_type").map_elements(tx.normalize_evidence, return_dtype=pl.Utf8).alias("_ev"),
        pl.col("subtype").map_elements(tx.normalize_subtype, return_dtype=pl.Utf8).alias("_sub"),
    )
    df = df.filter(pl.col("_budget") == A.BUDGET)
    chosen = _norm_models(models, df)
    answerable = pl.col("expected_response") == "answer" if "expected_response" in df.columns else \
        pl.col("memory_operation").map_elements(tx.normalize_operation, return_dtype=pl.Utf8) != "answer_refusal"
    df = df.filter(pl.col("_ev").is_in(list(EVS)) & answerable & pl.col("model").is_in(chosen))
    if "provider_rejected" in df.columns:
        df = df.filter(~pl.col("provider_rejected").fill_null(False).cast(pl.Boolean))
    resp_ok = pl.col("response").is_not_null() & (pl.col("response").str.strip_chars() != "")
    df = df.with_columns((~(resp_ok & pl.col("verdict").fill_null(False))).alias("_incorrect"))
    return df, chosen


def _ar_propensity(preds: pl.DataFrame, models: list[str]) -> dict[str, float]:
    """Each system's AR accuracy at 64K (refusal propensity); 0.3 when unknown."""
    out = {m: 0.3 for m in models}
    if "expected_response" not in preds.columns:
        return out
    ar = preds.filter((pl.col("expected_response") == "insufficient_evidence")
                      & (pl.col("context_length").map_elements(tx.normalize_budget, return_dtype=pl.Utf8) == A.BUDGET))
    if not ar.height:
        return out
    g = ar.group_by("model").agg(pl.col("verdict").fill_null(False).cast(pl.Float64).mean().alias("acc"))
    for m, acc in zip(g["model"].to_list(), g["acc"].to_list()):
        if m in out and acc is not None:
            out[m] = float(acc)
    return out


# ----------------------------------------------------------------------------- step 1: subtype x evidence x class
def _allowed() -> np.ndarray:
    """Structural zeros: binding outside the cue-keyed subtypes only through another speaker (speaker items)."""
    ok = np.ones((len(EVS), len(SUBS), len(CLASSES)), bool)
    b = CLASSES.index("binding")
    for j, s in enumerate(SUBS):
        if s not in tx.CUE_KEYED_SUBTYPES:
            for i, e in enumerate(EVS):
                if e != SPK:
                    ok[i, j, b] = False
    return ok


def _maxflow_round(X: np.ndarray, rows: np.ndarray, cols: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Integer matrix with the given row/column sums, within one unit of X (controlled rounding)."""
    F = np.floor(X + 1e-9).astype(int)
    F = np.where(allowed, F, 0)
    rdef = rows - F.sum(1)
    cdef = cols - F.sum(0)
    if (rdef < 0).any() or (cdef < 0).any():
        raise RuntimeError("rounding: floor exceeds a margin")
    frac = X - F
    R, C = X.shape
    # bipartite b-matching rows->cols, edge capacity 1, preferring large fractional parts
    edges = sorted(((frac[i, j], i, j) for i in range(R) for j in range(C) if allowed[i, j]), reverse=True)
    flow = np.zeros((R, C), int)
    rleft, cleft = rdef.copy(), cdef.copy()
    for _, i, j in edges:
        if rleft[i] > 0 and cleft[j] > 0 and flow[i, j] == 0:
            flow[i, j] = 1
            rleft[i] -= 1
            cleft[j] -= 1
    # augmenting paths for what the greedy pass left over
    while rleft.sum() > 0:
        src = [i for i in range(R) if rleft[i] > 0]
        prev: dict = {("r", i): None for i in src}
        queue = [("r", i) for i in src]
        end = None
        while queue and end is None:
            node = queue.pop(0)
            kind, k = node
            if kind == "r":
                for j in range(C):
                    if allowed[k, j] and flow[k, j] == 0 and ("c", j) not in prev:
                        prev[("c", j)] = node
                        if cleft[j] > 0:
                            end = ("c", j)
                            break
                        queue.append(("c", j))
            else:
                for i in range(R):
                    if flow[i, k] == 1 and ("r", i) not in prev:
                        prev[("r", i)] = node
                        queue.append(("r", i))
        if end is None:
            raise RuntimeError("rounding: no integer table with these margins")
        node = end
        while prev[node] is not None:
            p = prev[node]
            if p[0] == "r":
                flow[p[1], node[1]] = 1
            else:
                flow[node[1], p[1]] = 0
            node = p
        rleft[node[1]] -= 1
        cleft[end[1]] -= 1
    return F + flow


def _fit_table(I_es: np.ndarray, t_sub: np.ndarray, t_ev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """IPF of availability to both Table 20 margins, then exact integer rounding. Returns (real, integer)."""
    allowed = _allowed() & (t_sub[None, :, :] > 0) & (t_ev[:, None, :] > 0)
    X = I_es[:, :, None] * allowed.astype(float)
    for _ in range(500):
        s = X.sum(0)
        X *= np.divide(t_sub, s, out=np.zeros_like(s), where=s > 0)[None]
        e = X.sum(1)
        X *= np.divide(t_ev, e, out=np.zeros_like(e), where=e > 0)[:, None, :]
        if np.abs(X.sum(0) - t_sub).max() < 1e-7:
            break
    T = np.zeros(X.shape, int)
    for c in range(len(CLASSES)):
        T[:, :, c] = _maxflow_round(X[:, :, c], t_ev[:, c], t_sub[:, c], allowed[:, :, c])
    return X, T


# ----------------------------------------------------------------------------- step 2: over systems
_W_CELLS, _W_HARD, _W_PULL, _W_SHARE, _W_TABLE, _SHARE_BAND = 30.0, 10.0, 0.05, 400.0, 0.02, 0.05


class _State:
    """Counts n[model, evidence, subtype, class] with incrementally maintained macro averages.

    For each grouping (subtype, operation, evidence type) the sum of the class proportions
    over qualifying cells (>= MIN_ERRORS errors) and their number are kept up to date, so a
    move touching a few cells costs a few dozen float operations.
    """

    def __init__(self, n: np.ndarray, I: np.ndarray, share_target: np.ndarray, t_ref: np.ndarray):
        self.M, self.E, self.S, self.C = n.shape
        self.n = n.astype(int).tolist()            # nested lists [m][e][s][c]
        self.I = I.tolist()
        self.op_of = [OPS.index(tx.SUBTYPE_OPERATION[s]) for s in SUBS]
        self.O = len(OPS)
        self.share_target = share_target.tolist()
        self.I_m = [max(float(x), 1.0) for x in I.sum((1, 2))]
        self.t_ref = t_ref.tolist()
        self.cells_target = [TABLE20_CELLS[s] for s in SUBS]
        self.macro = [(g, _group_index(g, k), CLASSES.index(c), t) for g, k, c, t in MACRO_TARGETS]
        self.bounds = [(g, _group_index(g, k), CLASSES.index(c), t, _TARGETS["tolerance"][g, k, c])
                       for g, k, c, t in MACRO_BOUNDS]
        M, E, S, C, O = self.M, self.E, self.S, self.C, self.O
        self.A = [[[sum(self.n[m][e][s]) for s in range(S)] for e in range(E)] for m in range(M)]
        self.Nop = [[[[sum(self.n[m][e][s][c] for s in range(S) if self.op_of[s] == o) for c in range(C)]
                      for o in range(O)] for e in range(E)] for m in range(M)]
        self.Nev = [[[sum(self.n[m][e][s][c] for s in range(S)) for c in range(C)] for e in range(E)] for m in range(M)]
        self.Am = [sum(sum(self.A[m][e]) for e in range(E)) for m in range(M)]
        self.T = n.sum(0).astype(float).tolist()
        self.tpen = sum(((self.T[e][s][c] - self.t_ref[e][s][c]) ** 2) / (self.t_ref[e][s][c] + 2.0)
                        for e in range(E) for s in range(S) for c in range(C))
        self.sum = {"subtype": [[0.0] * C for _ in range(S)], "operation": [[0.0] * C for _ in range(O)],
                    "evidence_type": [[0.0] * C for _ in range(E)]}
        self.k = {"subtype": [0] * S, "operation": [0] * O, "evidence_type": [0] * E}
        for m in range(M):
            for e in range(E):
                for s_ in range(S):
                    self._contrib("subtype", s_, self.n[m][e][s_], +1)
                for o in range(O):
                    self._contrib("operation", o, self.Nop[m][e][o], +1)
                self._contrib("evidence_type", e, self.Nev[m][e], +1)

    def _contrib(self, grouping: str, g: int, counts: list, sign: int) -> None:
        tot = sum(counts)
        if tot >= A.MIN_ERRORS:
            acc = self.sum[grouping][g]
            for c, x in enumerate(counts):
                acc[c] += sign * x / tot
            self.k[grouping][g] += sign

    def apply(self, changes) -> None:
        sub_cells = {(m, e, s) for (m, e, s, _), _ in changes}
        op_cells = {(m, e, self.op_of[s]) for (m, e, s) in sub_cells}
        ev_cells = {(m, e) for (m, e, _) in sub_cells}
        for m, e, s in sub_cells:
            self._contrib("subtype", s, self.n[m][e][s], -1)
        for m, e, o in op_cells:
            self._contrib("operation", o, self.Nop[m][e][o], -1)
        for m, e in ev_cells:
            self._contrib("evidence_type", e, self.Nev[m][e], -1)
        for (m, e, s, c), d in changes:
            self.n[m][e][s][c] += d
            self.A[m][e][s] += d
            self.Nop[m][e][self.op_of[s]][c] += d
            self.Nev[m][e][c] += d
            self.Am[m] += d
            t, r = self.T[e][s][c], self.t_ref[e][s][c]
            self.tpen += (((t + d) - r) ** 2 - (t - r) ** 2) / (r + 2.0)
            self.T[e][s][c] = t + d
        for m, e, s in sub_cells:
            self._contrib("subtype", s, self.n[m][e][s], +1)
        for m, e, o in op_cells:
            self._contrib("operation", o, self.Nop[m][e][o], +1)
        for m, e in ev_cells:
            self._contrib("evidence_type", e, self.Nev[m][e], +1)

    def macro_value(self, grouping: str, g: int, c: int) -> float:
        k = self.k[grouping][g]
        return 100.0 * self.sum[grouping][g][c] / k if k else 0.0

    def value(self) -> tuple[float, float]:
        """(objective, misfit of the hard targets alone; 0 when all are met)."""
        hard = _W_CELLS * sum((k - t) ** 2 for k, t in zip(self.k["subtype"], self.cells_target))
        soft = _W_TABLE * self.tpen
        for g, k, c, t in self.macro:
            d = abs(self.macro_value(g, k, c) - t)
            if d > _SOLVER_TOL:
                hard += _W_HARD * (d - _SOLVER_TOL) ** 2
            soft += _W_PULL * d * d
        for g, k, c, t, tol in self.bounds:
            x = self.macro_value(g, k, c) - (t + tol - _SOLVER_TOL)
            if x > 0:
                hard += _W_HARD * x * x
        for m in range(self.M):
            x = abs(self.Am[m] / self.I_m[m] - self.share_target[m]) - _SHARE_BAND
            if x > 0:
                soft += _W_SHARE * x * x
        return hard + soft, hard

    def array(self) -> np.ndarray:
        return np.array(self.n, dtype=int)


def _anneal(st: _State, allowed: np.ndarray, rnd, n_iter: int, t0: float = 2.0, t1: float = 0.005) -> float:
    """Simulated annealing with count-preserving moves, in place; returns the final hard misfit.

    Moves: (a) one unit to another system (same evidence, subtype, class); (b) two classes
    swapped between two systems (same evidence, subtype); (c) a 2 x 2 cycle over evidence x
    subtype for one class.  All keep both Table 20 margins; capacities are respected.
    """
    M, E, S, C = st.M, st.E, st.S, st.C
    n, I, A_ = st.n, st.I, st.A
    ok = allowed.tolist()
    cur, cur_hard = st.value()
    best, best_val, best_hard = st.array(), cur, cur_hard
    ratio = t1 / t0
    for it in range(n_iter):
        temp = t0 * ratio ** (it / max(n_iter - 1, 1))
        m1, e, s, c = rnd.randrange(M), rnd.randrange(E), rnd.randrange(S), rnd.randrange(C)
        if n[m1][e][s][c] == 0:
            continue
        r = rnd.random()
        if r < 0.4:
            m2 = rnd.randrange(M)
            if m2 == m1 or A_[m2][e][s] >= I[m2][e][s]:
                continue
            changes = (((m1, e, s, c), -1), ((m2, e, s, c), 1))
        elif r < 0.8:
            m2, c2 = rnd.randrange(M), rnd.randrange(C)
            if m2 == m1 or c2 == c or n[m2][e][s][c2] == 0:
                continue
            changes = (((m1, e, s, c), -1), ((m1, e, s, c2), 1), ((m2, e, s, c2), -1), ((m2, e, s, c), 1))
        else:
            e2, s2 = rnd.randrange(E), rnd.randrange(S)
            if e2 == e or s2 == s or not (ok[e][s2][c] and ok[e2][s][c]):
                continue
            m2, m3, m4 = rnd.randrange(M), rnd.randrange(M), rnd.randrange(M)
            if n[m3][e2][s2][c] == 0 or A_[m2][e][s2] >= I[m2][e][s2] or A_[m4][e2][s] >= I[m4][e2][s]:
                continue
            changes = (((m1, e, s, c), -1), ((m2, e, s2, c), 1), ((m3, e2, s2, c), -1), ((m4, e2, s, c), 1))
        st.apply(changes)
        new, new_hard = st.value()
        if new <= cur or rnd.random() < math.exp(-(new - cur) / temp):
            cur, cur_hard = new, new_hard
            if cur < best_val:
                best, best_val, best_hard = st.array(), cur, cur_hard
        else:
            st.apply(tuple((idx, -d) for idx, d in changes))
    # leave the best state in place
    cur_arr = st.array()
    diff = best - cur_arr
    if diff.any():
        st.apply(tuple(((int(m), int(e), int(s), int(c)), int(diff[m, e, s, c])) for m, e, s, c in zip(*np.nonzero(diff))))
    return best_hard


def _solve(I: np.ndarray, share_target: np.ndarray, rng: np.random.Generator, n_iter: int) -> np.ndarray:
    """Counts n[model, evidence, subtype, class] meeting Table 20 exactly and the macro targets."""
    import random

    t_sub = np.array([TABLE20_COUNTS[s] for s in SUBS], float)
    t_ev = np.array([TABLE20_EVIDENCE[e] for e in EVS], float)
    I_es = I.sum(0).astype(float)
    X, T = _fit_table(I_es, t_sub, t_ev)
    allowed = _allowed() & (t_sub[None, :, :] > 0) & (t_ev[:, None, :] > 0)
    over = T.sum(2) > I_es
    if over.any():
        raise ValueError("too few incorrect predictions for Table 20 in "
                         + ", ".join(f"{EVS[i]}/{SUBS[j]}" for i, j in zip(*np.nonzero(over))))
    M = I.shape[0]
    n = np.zeros(I.shape + (len(CLASSES),), int)
    for i in range(len(EVS)):
        for j in range(len(SUBS)):
            units = np.repeat(np.arange(len(CLASSES)), T[i, j])
            rng.shuffle(units)
            for c in units:
                room = I[:, i, j] - n[:, i, j].sum(1)
                w = np.where(room > 0, share_target * room, 0.0)
                m = rng.choice(M, p=w / w.sum())
                n[m, i, j, c] += 1
    st = _State(n, I, share_target, X)
    rnd = random.Random(int(rng.integers(2**62)))
    hard = _anneal(st, allowed, rnd, n_iter)
    for _ in range(8):              # reheat while a hard target is still missed
        if hard <= 0:
            break
        hard = _anneal(st, allowed, rnd, max(n_iter // 2, 1), t0=0.5)
    return st.array()


def _group_index(by: str, group: str) -> int:
    return {"operation": OPS, "evidence_type": EVS, "subtype": SUBS}[by].index(group)


# ----------------------------------------------------------------------------- step 3: records
def _pick(rng, seq):
    return seq[int(rng.integers(len(seq)))]


def _cap(s: str) -> str:
    return s[:1].upper() + s[1:] if s else s


class _Item:
    """What a record needs to know about its item."""

    def __init__(self, row: dict, rng: np.random.Generator):
        self.ev = row["_ev"]
        self.sub = row["_sub"]
        self.answer_type = row.get("answer_type")
        sc = row.get("session_count")
        self.n_sessions = int(sc) if isinstance(sc, (int, np.integer)) and sc > 3 else int(rng.integers(70, 121))
        evs = row.get("evidence_session_indices")
        if isinstance(evs, str):
            try:
                evs = json.loads(evs)
            except json.JSONDecodeError:
                evs = None
        if evs is not None and not isinstance(evs, (list, tuple)):
            evs = list(evs)
        if evs:
            self.evidence = sorted({int(x) + (1 if min(evs) == 0 else 0) for x in evs})
        else:
            k = 1 if tx.SUBTYPE_OPERATION.get(self.sub) == "information_extraction" else int(rng.integers(2, 4))
            self.evidence = sorted(int(x) for x in rng.choice(np.arange(1, self.n_sessions + 1), size=k, replace=False))
        self.gold = _gold_text(row.get("gold_json"))

    def other_session(self, rng) -> int:
        while True:
            k = int(rng.integers(1, self.n_sessions + 1))
            if k not in self.evidence:
                return k

    def evidence_session(self, rng) -> int:
        return int(_pick(rng, self.evidence))


def _gold_text(g) -> str | None:
    if g is None:
        return None
    try:
        v = json.loads(g) if isinstance(g, str) else g
    except json.JSONDecodeError:
        return str(g)
    if isinstance(v, dict):
        v = v.get("answer", next(iter(v.values()), None))
    if isinstance(v, list):
        return " -> ".join(str(x) for x in v)
    return None if v is None else str(v)


def _cue_word(ev: str) -> str:
    return {SPK: "voice", PARA: "delivery", ENV: "sound"}[ev]


def _attribute_value(ev: str, rng) -> str:
    if ev == SPK:
        return f"Speaker {int(rng.integers(1, 7))}"
    if ev == PARA:
        return _pick(rng, _DELIVERIES)
    return _pick(rng, _SOUNDS)


def _specific_value(it: _Item, rng) -> str:
    """A concrete answer of the kind the question asks for."""
    s, ev = it.sub, it.ev
    if s == "counting":
        return str(int(rng.integers(0, 9)))
    if s == "matching_resolution":
        return _pick(rng, ("yes", "no", "same", "different"))
    if s == "aggregation_comparison":
        return _pick(rng, ("the first group", "the second group", "same", "different",
                           f"the {_attribute_value(ev, rng)} group"))
    if s == "evolution_transition":
        k = int(rng.integers(2, 4))
        return " -> ".join(_attribute_value(ev, rng) for _ in range(k))
    if s == "cue_to_fact":
        return _pick(rng, _FACTS)
    if s == "context_to_cue" and ev == SPK:
        return _pick(rng, ("yes, the same speaker", "no, a different speaker", f"Speaker {int(rng.integers(1, 7))}"))
    return _attribute_value(ev, rng)


def _quote(rng, fact: str | None = None) -> str:
    return _pick(rng, _QUOTES).format(topic=_pick(rng, _TOPICS), fact=fact or _pick(rng, _FACTS))


def _marked(ev: str, value: str) -> str:
    """How the auditor's transcript marks a cue value (F.5 prompt)."""
    if ev == ENV:
        return f"[background sound in this session: {value}]"
    if ev == PARA:
        return f"<|emotion:{value}|>"
    return f"{value}'s voice"


def _specific_response(answer: str, it: _Item, rng) -> str:
    if it.sub == "counting":
        return _pick(rng, (f"{answer}", f"There were {answer}.", f"{answer} times.",
                           f"There are {answer} chats that fit the specified condition."))
    if it.sub == "matching_resolution":
        tail = {SPK: "the same voice", PARA: "the same vocal delivery", ENV: "the same background sound"}[it.ev]
        return _pick(rng, (f"{_cap(answer)}.", f"{_cap(answer)}, both chats are linked by {tail}."
                           if answer in ("yes", "same") else f"{_cap(answer)}, they do not share {tail}."))
    return _pick(rng, (f"{_cap(answer)}.", answer, f"It was {answer}.", f"I believe it was {answer}.",
                       f"{_cap(answer)}, as far as I remember.", f"The answer is {answer}."))


def _record_for(kind: str, it: _Item, rng) -> tuple[dict, str]:
    """(audit record fields, response text) for one error of the given template kind."""
    ev, cue = it.ev, _cue_word(it.ev)
    rec = dict(commits="specific", answer=None, evidence_recovered=False, source="none", source_session=None,
               relation="unrelated", why=None)
    if kind == "rec_generic":
        g = _pick(rng, _GENERIC[ev])
        rec.update(commits="generic", answer=g,
                   why=f'The response only says "{g}", which would fit any session; no specific {cue} is named.')
        resp = {SPK: f"It was {g}.", PARA: f"You sounded {g}.", ENV: f"There was {g}."}[ev]
        if it.sub == "counting":
            resp = _pick(rng, ("A few times.", "Several times, I think.", "Quite often."))
            rec["answer"] = resp.rstrip(".").lower()
            rec["why"] = f'"{resp}" gives no number; the response never identifies the {cue} to count.'
        return rec, resp
    if kind == "rec_off_type":
        t1, t2 = _pick(rng, _TOPICS), _pick(rng, _TOPICS)
        if it.sub in ("aggregation_comparison", "matching_resolution"):
            resp = (f"The two groups are similar in their emphasis on {t1}, but the other thread "
                    f"also mentions {t2}.")
            why = f"The response compares what the threads are about ({t1}, {t2}); no {cue} is named."
        else:
            resp = _pick(rng, (f"That conversation was about {t1}.", f"You were talking about {t1}."))
            why = f"Asked about the {cue}, the response names the topic of the conversation ({t1})."
        rec.update(commits="off_type", answer=t1, why=why)
        return rec, resp
    if kind == "rec_none":
        if rng.random() < 0.5:
            resp = _pick(rng, _NONE_RESPONSES)
            why = f'The response is a bare acknowledgement ("{resp}") and commits to nothing.'
        else:
            resp = _pick(rng, _DENIALS[ev])
            why = f'The response flatly denies any {cue} ("{resp}") although an [EVIDENCE] session carries one.'
        rec.update(commits="none", why=why)
        return rec, resp
    if kind == "rec_other_session":
        k, ans = it.other_session(rng), _specific_value(it, rng)
        rel = "count_off" if it.sub == "counting" else _pick(rng, ("same_value_other_session", "same_value_other_session", "unrelated"))
        if it.sub == "counting":
            ans = str(int(rng.integers(4, 12)))
            why = (f"Session {k} [DISTRACTOR] is one of {ans} chats on the same topic (\"{_quote(rng)}\"); the response "
                   f"counted the topic, not the {cue} condition.")
        elif it.sub in ("context_to_cue", "latest_state", "historical_state"):
            why = (f"Session {k} [DISTRACTOR] carries {_marked(ev, ans)}; the answer comes from there, not from the "
                   "session the question points to.")
        else:
            why = (f'The answer "{ans}" matches Session {k} [DISTRACTOR], which is outside the evidence chain '
                   f'("{_quote(rng)}").')
        rec.update(answer=ans, source="other_session", source_session=k, relation=rel, why=why)
        return rec, _specific_response(ans, it, rng)
    if kind == "rec_wrong_value":
        k, ans = it.evidence_session(rng), _specific_value(it, rng)
        if it.sub == "cue_to_fact":
            why = (f'Session {k} [EVIDENCE] mentions "{ans}" in passing, but the fact the question asks about is '
                   f'another one ("{_quote(rng)}").')
        elif it.sub in ("matching_resolution", "aggregation_comparison"):
            why = f'Session {k} [EVIDENCE] was found, but its {cue} was misread, so the response answers "{ans}".'
        else:
            why = (f'Session {k} [EVIDENCE] is the session the question is about, but the response reports "{ans}" '
                   f"for it; the {cue} there is a different one.")
        rec.update(answer=ans, source="evidence", source_session=k,
                   relation=_pick(rng, ("wrong_value_same_session", "wrong_value_same_session", "unrelated")), why=why)
        return rec, _specific_response(ans, it, rng)
    if kind == "bind_speaker":
        # other_speaker binds only content read from an evidence session, or on a cue-keyed
        # question (rule 5 vs rules 6-7 of voxmem_analysis.analysis.attribution.RULES)
        cue_keyed = it.sub in ("cue_to_fact", "matching_resolution")
        src = _pick(rng, ("evidence", "other_session")) if cue_keyed else "evidence"
        k = it.evidence_session(rng) if src == "evidence" else it.other_session(rng)
        who = int(rng.integers(1, 7))
        if it.sub in ("cue_to_fact", "matching_resolution"):
            ans = _pick(rng, _FACTS) if it.sub == "cue_to_fact" else _specific_value(it, rng)
            why = (f'"{_quote(rng, ans if it.sub == "cue_to_fact" else None)}" is said by Speaker {who} in Session {k}, '
                   "not by the speaker the question refers to.")
        else:
            ans = f"Speaker {who}"
            why = (f"Speaker {who} is the voice of another user's turns in Session {k}; the response attaches the "
                   "content the question asks about to that speaker.")
        rec.update(answer=ans, source=src, source_session=k, relation="other_speaker",
                   evidence_recovered=bool(rng.random() < 0.4), why=why)
        return rec, _specific_response(ans, it, rng)
    if kind == "bind_cue_keyed":
        k, ev_k = it.other_session(rng), it.evidence_session(rng)
        ans = _specific_value(it, rng)
        q = _quote(rng, ans if it.sub == "cue_to_fact" else None)
        rec.update(answer=ans, source="other_session", source_session=k,
                   relation=_pick(rng, ("same_value_other_session", "same_value_other_session", "unrelated")),
                   why=f'The line is verbatim from Session {k} [DISTRACTOR] ("{q}"), but the question\'s {cue} '
                       f"points to Session {ev_k}; the system matched on topic.")
        return rec, _specific_response(ans, it, rng)
    if kind == "op_cue_named":
        val = _attribute_value(ev, rng)
        what = {"counting": "give the count asked for", "matching_resolution": "decide whether the sessions match",
                "aggregation_comparison": "compare the two groups", "evolution_transition": "track how it changed",
                "latest_state": "say which state is the latest", "historical_state": "say which state held at that time",
                }.get(it.sub, "answer the question asked")
        resp = {SPK: f"That was {val}'s voice.", PARA: f"You sounded {val} in that session.",
                ENV: f"I heard {val} in the background."}[ev]
        rec.update(commits="off_type", answer=val, evidence_recovered=True,
                   why=f'The response names the right {cue} ("{val}") but does not {what}.')
        return rec, resp
    if kind == "op_count_cue":
        val = _attribute_value(ev, rng)
        k = it.evidence_session(rng)
        rec.update(answer=val, evidence_recovered=True, source="evidence", source_session=k,
                   why=f'The response names the {cue} of Session {k} ("{val}") instead of counting its occurrences.')
        return rec, {SPK: f"{val}.", PARA: f"You sounded {val}.", ENV: f"I heard {val}."}[ev]
    if kind == "op_count_off":
        true_n = max(2, len(it.evidence))
        ans = str(max(0, true_n + _pick(rng, (-2, -1, 1, 2))))
        sess = ", ".join(str(x) for x in it.evidence[:-1]) + f" and {it.evidence[-1]}" if len(it.evidence) > 1 \
            else str(it.evidence[0])
        rec.update(answer=ans, evidence_recovered=True, source="evidence", source_session=it.evidence[0],
                   relation="count_off",
                   why=f"The qualifying mentions are in Session(s) {sess}; the response counts {ans}.")
        return rec, _specific_response(ans, it, rng)
    if kind == "op_verdict":
        ans = _pick(rng, ("yes", "no", "same", "different"))
        a, b = (it.evidence + [it.other_session(rng)])[:2]
        d1, d2 = _attribute_value(ev, rng), _attribute_value(ev, rng)
        rec.update(answer=ans, evidence_recovered=True, source="evidence", source_session=a,
                   relation=_pick(rng, ("wrong_value_same_session", "unrelated")),
                   why=f"Session {a} carries {d1} and Session {b} {d2}; both were described but the comparison "
                       "came out wrong.")
        return rec, _specific_response(ans, it, rng)
    if kind == "op_wrong_time":
        k = it.evidence_session(rng)
        ans = _attribute_value(ev, rng)
        rel = "later_state" if it.sub == "historical_state" and rng.random() < 0.5 else "earlier_state"
        rec.update(answer=ans, evidence_recovered=True, source="evidence", source_session=k, relation=rel,
                   why=f'"{ans}" is the real state in Session {k}, '
                       f"{'after' if rel == 'later_state' else 'before'} the point in time the question asks about.")
        return rec, _specific_response(ans, it, rng)
    if kind == "unsupported":
        if it.sub in ("aggregation_comparison", "counting") or rng.random() < 0.3:
            k = int(rng.integers(2, 5))
            things = {SPK: "different speakers", PARA: "sessions with a raised voice", ENV: "sessions with kitchen sounds"}[ev]
            ans = f"{k} {things}"
            resp = (f"There are {k} {things} and {k} without, so both groups have an equal count of {k}."
                    if it.sub == "aggregation_comparison" else f"I counted {k} {things}.")
            if it.sub == "counting":
                ans = str(k)
            why = f"The response invents an inventory ({k} {things}) that no session has."
        else:
            ans = _specific_value(it, rng) if it.sub != "cue_to_fact" else _pick(rng, _FACTS)
            resp = _specific_response(ans, it, rng)
            why = f'No session mentions "{ans}"; the answer appears nowhere in the conversation.'
        rec.update(answer=ans, source="absent", why=why)
        return rec, resp
    if kind == "not_attributable":
        g = it.gold or _specific_value(it, rng)
        k = it.evidence_session(rng)
        ans = _pick(rng, (g, f"the {g}" if not g.lower().startswith("the ") else g, _cap(g)))
        rec.update(answer=ans, evidence_recovered=True, source="evidence", source_session=k, relation="matches_gold",
                   why=f'The committed answer "{ans}" is equivalent to the reference; Session {k} [EVIDENCE] supports it.')
        return rec, _specific_response(ans, it, rng)
    if kind == "truncated":
        a, b = sorted(it.evidence + [it.other_session(rng)])[:2]
        resp = _pick(rng, (
            f"Wait, look at the timestamps: session {a} is the earliest, and the {cue} shows up again in session {b}, so the",
            f"Let me go through the sessions one by one. In session {a} you talked about {_pick(rng, _TOPICS)} and the",
            f"To answer this I need to compare session {a} with session {b}. In the first one the {cue} was",
        ))
        rec.update(commits="truncated", evidence_recovered=bool(rng.random() < 0.3),
                   why=f'The text stops mid-sentence ("...{resp[-40:]}") before reaching an answer.')
        return rec, resp
    raise ValueError(kind)  # pragma: no cover


def _kinds_for(cls: str, it: _Item) -> tuple[tuple[str, float], ...]:
    """Template kinds (with weights) that realise ``cls`` for this item under the rule table."""
    s, ev = it.sub, it.ev
    if cls == "recognition":
        if s == "aggregation_comparison":
            return (("rec_off_type", 0.8), ("rec_generic", 0.1), ("rec_wrong_value", 0.1))
        if s == "counting":
            return (("rec_other_session", 0.6), ("rec_generic", 0.2), ("rec_none", 0.2))
        if s in tx.CUE_KEYED_SUBTYPES:
            return (("rec_generic", 0.25), ("rec_off_type", 0.2), ("rec_none", 0.15), ("rec_wrong_value", 0.4))
        if ev == SPK:
            return (("rec_other_session", 0.5), ("rec_generic", 0.2), ("rec_none", 0.1), ("rec_wrong_value", 0.2))
        return (("rec_generic", 0.35), ("rec_off_type", 0.15), ("rec_none", 0.15), ("rec_other_session", 0.25),
                ("rec_wrong_value", 0.1))
    if cls == "binding":
        if s in tx.CUE_KEYED_SUBTYPES:
            return (("bind_cue_keyed", 0.5), ("bind_speaker", 0.5)) if ev == SPK else (("bind_cue_keyed", 1.0),)
        return (("bind_speaker", 1.0),)
    if cls == "operation":
        if s == "counting":
            return (("op_count_off", 0.7), ("op_count_cue", 0.15), ("op_cue_named", 0.15))
        if s == "matching_resolution":
            return (("op_verdict", 0.85), ("op_cue_named", 0.15))
        return (("op_cue_named", 1.0),)
    if cls == "unsupported":
        return (("unsupported", 1.0),)
    return (("not_attributable", 1.0),)


# ----------------------------------------------------------------------------- main entry point
def make_attribution(preds: pl.DataFrame, items: pl.DataFrame | None, models: pd.DataFrame | None,
                     rng: np.random.Generator, *, n_iter: int = 100_000) -> tuple[pl.DataFrame, list[dict]]:
    """Exclusions and audit records for the 64K audio-native incorrect predictions.

    Parameters
    ----------
    preds : polars.DataFrame
        Harness predictions (FORMATS section 1), any budgets; only 64K rows are touched.
    items : polars.DataFrame or None
        Item table; ``session_count``, ``evidence_session_indices`` and ``gold_json`` are used
        when present to make session numbers and not-attributable answers realistic.
    models : pandas.DataFrame or None
        Registry with ``model`` and ``in_64k_set``; the flagged systems form the population
        (all models with 64K predictions when none is flagged).
    rng : numpy.random.Generator
        Sole source of randomness.
    n_iter : int
        Annealing iterations.

    Returns
    -------
    (preds, records)
        ``preds`` with ``response``/``verdict``/``error`` (and ``judge_raw`` when present)
        rewritten for every incorrect population prediction: refusal text, null response +
        ``error`` for empty generations, a text stopping mid-sentence for truncated answers and
        an answer matching its audit record otherwise.  ``records``: one dict per attributed or
        truncated error (``model, item_id`` + the audit fields), sorted by (model, item_id).
    """
    pop, chosen = _population(preds, models)
    if items is not None and "item_id" in items.columns:
        extra = [c for c in ("session_count", "evidence_session_indices", "gold_json", "answer_type") if c in items.columns]
        extra = [c for c in extra if c not in pop.columns]
        if extra:
            pop = pop.join(items.select(["item_id", *extra]).unique(subset="item_id", keep="first"), on="item_id", how="left")
    wrong = pop.filter(pl.col("_incorrect")).sort(["model", "item_id"])
    n_wrong = wrong.height
    n_excl = n_wrong - POPULATION["attributed"]
    n_refusal = n_excl - EXCLUSIONS["empty"] - EXCLUSIONS["truncated"]
    if n_refusal < 0:
        raise ValueError(f"only {n_wrong} incorrect predictions; Table 20 needs {POPULATION['attributed']} "
                         f"attributed + {EXCLUSIONS['empty'] + EXCLUSIONS['truncated']} empty/truncated")
    # availability per system x evidence x subtype
    mi = {m: i for i, m in enumerate(chosen)}
    ei = {e: i for i, e in enumerate(EVS)}
    si = {s: i for i, s in enumerate(SUBS)}
    rows = wrong.to_dicts()
    bucket: dict[tuple[int, int, int], list[int]] = defaultdict(list)
    for r_i, r in enumerate(rows):
        bucket[(mi[r["model"]], ei[r["_ev"]], si[r["_sub"]])].append(r_i)
    I = np.zeros((len(chosen), len(EVS), len(SUBS)), int)
    for k, v in bucket.items():
        I[k] = len(v)
    # refusal propensity -> target share of each system's errors that is attributed
    prop = _ar_propensity(preds, chosen)
    q = np.array([0.25 + prop[m] for m in chosen])
    I_m = I.sum((1, 2)).astype(float)
    lo, hi = 0.0, 10.0
    for _ in range(100):
        lam = (lo + hi) / 2
        excl = np.clip(lam * q * I_m, 0.1 * I_m, 0.9 * I_m)
        lo, hi = (lam, hi) if excl.sum() < n_excl else (lo, lam)
    share_target = 1.0 - excl / np.maximum(I_m, 1)

    n = _solve(I, share_target, rng, n_iter)

    # concrete predictions
    cls_of: dict[int, str] = {}
    excluded: list[int] = []
    for key in sorted(bucket):
        idx = list(bucket[key])
        rng.shuffle(idx)
        labels = [CLASSES[c] for c in range(len(CLASSES)) for _ in range(n[key][c])]
        rng.shuffle(labels)
        for r_i, c in zip(idx, labels):
            cls_of[r_i] = c
        excluded += idx[len(labels):]
    excluded.sort()
    access = {}
    if models is not None and "access" in models.columns:
        access = dict(zip(models["model"], models["access"]))
    w_empty = np.array([0.4 if access.get(rows[i]["model"]) == "proprietary" else 1.6 for i in excluded])
    w_trunc = np.array([1.4 if access.get(rows[i]["model"]) == "proprietary" else 0.8 for i in excluded])
    pos = np.arange(len(excluded))
    empty_pos = rng.choice(pos, size=EXCLUSIONS["empty"], replace=False, p=w_empty / w_empty.sum())
    rest = np.setdiff1d(pos, empty_pos)
    trunc_pos = rng.choice(rest, size=EXCLUSIONS["truncated"], replace=False, p=w_trunc[rest] / w_trunc[rest].sum())
    kind_of = {excluded[p]: "refusal" for p in pos}
    kind_of.update({excluded[p]: "empty" for p in empty_pos})
    kind_of.update({excluded[p]: "truncated" for p in trunc_pos})

    # the four answers at the wrong point in time (E.3): TET operation errors
    tet_op = [i for i, c in sorted(cls_of.items()) if c == "operation"
              and tx.SUBTYPE_OPERATION[rows[i]["_sub"]] == "temporal_evolution_tracking"
              and rows[i]["_sub"] != "evolution_transition"]
    if len(tet_op) < WRONG_TIME_STATES:
        tet_op += [i for i, c in sorted(cls_of.items()) if c == "operation" and rows[i]["_sub"] == "evolution_transition"]
    wrong_time = set(rng.choice(tet_op, size=min(WRONG_TIME_STATES, len(tet_op)), replace=False).tolist())

    records: list[dict] = []
    updates: list[tuple] = []
    cap_share = {m: 0.15 + 0.35 * (1 - prop[m]) for m in chosen}
    for r_i, r in enumerate(rows):
        it = _Item(r, rng)
        kind = kind_of.get(r_i)
        if kind == "refusal":
            pool = _CAPABILITY_REFUSALS if rng.random() < cap_share[r["model"]] else _EVIDENCE_REFUSALS
            updates.append((r["model"], r["item_id"], _pick(rng, pool), False, None))
            continue
        if kind == "empty":
            updates.append((r["model"], r["item_id"], None, None, _pick(rng, _FAIL_ERRORS)))
            continue
        if kind == "truncated":
            tmpl = "truncated"
        else:
            cls = cls_of[r_i]
            if r_i in wrong_time:
                tmpl = "op_wrong_time"
            else:
                kinds = _kinds_for(cls, it)
                w = np.array([k[1] for k in kinds])
                tmpl = kinds[int(rng.choice(len(kinds), p=w / w.sum()))][0]
        for _ in range(20):
            rec, resp = _record_for(tmpl, it, rng)
            if not A.is_refusal(resp):
                break
        else:  # pragma: no cover
            raise RuntimeError(f"could not write a non-refusal response for {tmpl}")
        if kind != "truncated":
            got, rule = A.classify(rec, subtype=r["_sub"], answer_type=r.get("answer_type"))
            if got != cls_of[r_i]:  # pragma: no cover - a template/rule mismatch is a bug
                raise AssertionError(f"template {tmpl} gave {got} ({rule}), wanted {cls_of[r_i]}")
        records.append({"model": r["model"], "item_id": r["item_id"], **rec})
        updates.append((r["model"], r["item_id"], resp, False, None))

    upd = pl.DataFrame(updates, schema={"model": pl.Utf8, "item_id": pl.Utf8, "_resp": pl.Utf8,
                                        "_verdict": pl.Boolean, "_error": pl.Utf8}, orient="row")
    upd = upd.with_columns(pl.lit(True).alias("_touch"))
    key_ctx = pl.col("context_length").map_elements(tx.normalize_budget, return_dtype=pl.Utf8) == A.BUDGET
    out = preds.with_columns(key_ctx.alias("_is64")).join(upd, on=["model", "item_id"], how="left")
    touch = pl.col("_touch").fill_null(False) & pl.col("_is64")
    if "error" not in out.columns:
        out = out.with_columns(pl.lit(None, dtype=pl.Utf8).alias("error"))
    new_cols = [
        pl.when(touch).then(pl.col("_resp")).otherwise(pl.col("response")).alias("response"),
        pl.when(touch).then(pl.col("_verdict")).otherwise(pl.col("verdict")).alias("verdict"),
        pl.when(touch).then(pl.col("_error")).otherwise(pl.col("error")).alias("error"),
    ]
    if "judge_raw" in out.columns:
        new_cols.append(pl.when(touch).then(
            pl.when(pl.col("_verdict") == False).then(pl.lit('{"verdict":"incorrect"}')).otherwise(pl.lit(None, dtype=pl.Utf8))  # noqa: E712
        ).otherwise(pl.col("judge_raw")).alias("judge_raw"))
    out = out.with_columns(new_cols).drop(["_resp", "_verdict", "_error", "_touch", "_is64"])
    out = out.select([c for c in preds.columns] + [c for c in out.columns if c not in preds.columns])
    records.sort(key=lambda d: (d["model"], d["item_id"]))
    return out, records


def write_attribution(records: list[dict], release_dir) -> list[Path]:
    """Write ``<release>/attribution/<model>.jsonl`` (one record per line, sorted); returns the paths."""
    base = Path(release_dir) / "attribution"
    base.mkdir(parents=True, exist_ok=True)
    by: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by[r["model"]].append(r)
    paths = []
    for m in sorted(by):
        slug = "".join(ch if ch.isalnum() or ch in "-." else "-" for ch in m.lower())
        p = base / f"{slug}.jsonl"
        p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in sorted(by[m], key=lambda d: d["item_id"])))
        paths.append(p)
    return paths


# ----------------------------------------------------------------------------- checking
def predictions_frame(preds: pl.DataFrame) -> pl.DataFrame:
    """Harness predictions -> the verdict-frame columns the attribution code reads (scored by the paper's rules)."""
    from voxmem_analysis.io.scoring import apply_scoring

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
        add("table20", tx.SUBTYPE_LABELS[s], "Total", _TARGETS["table20_totals"][tx.SUBTYPE_LABELS[s]], row["Total"])
        add("table20", tx.SUBTYPE_LABELS[s], "Cells", TABLE20_CELLS[s], row["Cells"])
    for e in EVS:
        row = t20.loc[tx.EVIDENCE_LABELS[e]]
        for lab, t in zip(labels, TABLE20_EVIDENCE[e]):
            add("table20", tx.EVIDENCE_LABELS[e], lab, t, row[lab])
        add("table20", tx.EVIDENCE_LABELS[e], "Total", _TARGETS["table20_totals"][tx.EVIDENCE_LABELS[e]], row["Total"])
    tot = t20.loc["Total"]
    for lab, t in zip(labels, _TARGETS["table20_total_row"]):
        add("table20", "Total", lab, t, tot[lab])
    add("table20", "Total", "Total", _TARGETS["table20_totals"]["Total"], tot["Total"])
    props = {b: A.class_proportions(errors, by=b).set_index("group") for b in ("operation", "evidence_type", "subtype")}
    label_of = {"operation": tx.OPERATION_LABELS, "evidence_type": tx.EVIDENCE_LABELS, "subtype": tx.SUBTYPE_LABELS}
    for by, g, c, t in MACRO_TARGETS:
        add(f"macro_{by}", label_of[by][g], tx.ATTRIBUTION_LABELS[c], t, props[by].loc[g, c],
            _TARGETS["tolerance"][by, g, c])
    for by, g, c, t in MACRO_BOUNDS:
        add(f"bound_{by}", label_of[by][g], tx.ATTRIBUTION_LABELS[c] + " <=", t, props[by].loc[g, c], 0.0, kind="le")
    wrong_time = int(audit["relation"].isin(A.WRONG_TIME_RELATIONS).sum())
    add("records", "wrong point in time (E.3)", "count", WRONG_TIME_STATES, wrong_time)
    share, half = _TARGETS["shares"]["operation"]
    add("records", "Oper. share of attributed (E.5)", "%", share, 100 * tot["Oper."] / tot["Total"], half)
    share, half = _TARGETS["shares"]["not_attributable"]
    add("records", "N.a. share of attributed (E.2)", "%", share, 100 * tot["N.a."] / tot["Total"], half)
    return pd.DataFrame(rows, columns=["quantity", "group", "column", "target", "achieved", "tolerance", "ok"])


# ----------------------------------------------------------------------------- stand-in inputs
def standin_inputs(seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame, pd.DataFrame]:
    """A stand-in for the synthetic generator's 64K inputs: (preds, items, models).

    799 questions at 64K (answerable 195/126/222/126 and refusal 37/21/42/30 by evidence
    type, the subtype split of :mod:`voxmem_analysis.synth.design`), the ten 64K systems on
    every item and the correct counts per system x operation x evidence of
    :mod:`voxmem_analysis.synth._counts` (603 correct, 4,137 incorrect audio-native
    answerable predictions), plus partial 64K rows of two systems outside the 64K set.
    Responses are placeholders; :func:`make_attribution` rewrites the incorrect ones.
    """
    from voxmem_analysis.synth import _counts
    from voxmem_analysis.synth import design as D

    rng = np.random.default_rng([seed, 40])
    answer_types = {"counting": "number", "matching_resolution": "yes_no", "aggregation_comparison": "categorical",
                    "evolution_transition": "ordered_list", "cue_to_fact": "short_text", "context_to_cue": "categorical",
                    "latest_state": "categorical", "historical_state": "categorical"}
    items, qn = [], 0

    def add_item(ev, op, sub, ar=False, paired=None):
        nonlocal qn
        qn += 1
        qid = f"q_{qn:05d}"
        n_sess = int(rng.integers(70, 121))
        k = 1 if op == "information_extraction" else int(rng.integers(2, 5))
        evid = sorted(int(x) for x in rng.choice(np.arange(0, n_sess), size=k, replace=False))
        gold = "insufficient evidence" if ar else _gold_for(ev, sub, rng)
        items.append({
            "item_id": f"{qid}_64k", "question_id": qid, "context_length": "64K", "family_id": f"fam_{qn:05d}",
            "evidence_type": ev, "memory_operation": "answer_refusal" if ar else op, "subtype": sub,
            "question_text": f"Synthetic question {qid}", "expected_response": "insufficient_evidence" if ar else "answer",
            "gold_json": json.dumps({"answer": gold}), "answer_type": answer_types[sub],
            "answer_normalization": "semantic", "session_count": n_sess, "evidence_session_count": k,
            "samekey_haystack_session_count": 8, "evidence_session_indices": evid, "paired_question_id": paired,
        })
        return qid

    by_cell: dict[tuple[str, str], list[int]] = defaultdict(list)
    for (op, ev), split in D.SUBTYPE_SPLIT.items():
        for sub, k in split.items():
            for _ in range(k):
                add_item(ev, op, sub)
                by_cell[(op, ev)].append(len(items) - 1)
    for (ev, src), k in D.AR_CELLS.items():
        pool = by_cell[(src, ev)]
        for j in range(k):
            base = items[pool[j % len(pool)]]
            add_item(ev, src, base["subtype"], ar=True, paired=base["question_id"])
    easiness = rng.gamma(2.0, 1.0, size=len(items))
    preds = []
    for m in D.SET64:
        correct_idx: set[int] = set()
        for (op, ev), pool in by_cell.items():
            k = _counts.COUNTS[(m, "64K", (ev, op, op))]
            w = easiness[pool] / easiness[pool].sum()
            correct_idx |= set(np.asarray(pool)[rng.choice(len(pool), size=k, replace=False, p=w)].tolist())
        ar_acc = D.TABLE16[m][1] / 100
        for i, it in enumerate(items):
            ar = it["expected_response"] == "insufficient_evidence"
            ok = bool(rng.random() < ar_acc) if ar else i in correct_idx
            resp = ("insufficient evidence" if ok else "placeholder answer") if ar else \
                (json.loads(it["gold_json"])["answer"] if ok else ("placeholder wrong answer" if rng.random() > 0.03 else None))
            preds.append(_pred_row(it, m, resp, ok if resp is not None else None))
    for m in ("Qwen3.8-Omni-Flash", "MiniCPM-o-4.5"):       # partial 64K runs outside the 64K set
        for it in items[:150]:
            preds.append(_pred_row(it, m, "placeholder wrong answer", False))
    preds_df = pl.DataFrame(preds, infer_schema_length=None)
    items_df = pl.DataFrame(items, infer_schema_length=None)
    models = pd.DataFrame([{"model": r[0], "family": r[1], "access": r[2], "architecture": r[3],
                            "llm_params_b": r[4], "total_params_b": r[5], "in_64k_set": r[6], "order": i}
                           for i, r in enumerate(D.MODELS)])
    return preds_df, items_df, models


def _gold_for(ev: str, sub: str, rng) -> str:
    it = _Item.__new__(_Item)
    it.ev, it.sub = ev, sub
    return _specific_value(it, rng)


def _pred_row(it: dict, model: str, response, verdict) -> dict:
    keep = ("item_id", "question_id", "context_length", "family_id", "evidence_type", "memory_operation", "subtype",
            "question_text", "expected_response", "gold_json", "answer_type", "answer_normalization", "session_count",
            "evidence_session_count", "samekey_haystack_session_count")
    row = {k: it[k] for k in keep}
    row.update(model=model, allow_abstention=True, system_prompt_delivery="native", n_audio_clips=400,
               response=response, verdict=verdict, judge="gemini-3.7-flash",
               judge_raw=None if verdict is None else json.dumps({"verdict": "correct" if verdict else "incorrect"}),
               error=None if response is not None else "generation failed: timeout", synthetic=True)
    return row
