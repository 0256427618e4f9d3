"""Design of the synthetic release: what it is calibrated to, and how it is built.

Two kinds of content, kept apart:

* **Design choices** (sections "models", "item bank", "provider rejections") -- choices of
  the synthetic release that the paper does not print: model registry details, the questions
  per operation x evidence cell (the paper fixes only the margins), the subtype split, which
  8K predictions the provider rejected, and the solver's band around each target.
* **Published numbers** (section "published targets") -- the paper's numbers the synthetic
  verdicts are calibrated to.  None is typed here: each is read from the paper's table
  (``data/paper/published.csv``, via :func:`voxmem_analysis.reproduce.published.published`) by
  :func:`published_value`; ``TABLE15``, ``TABLE16`` ... only arrange those values in the
  shapes the solver (``calibrate.py``), the generator (``core.py``) and the checker
  (``check.py``) use.  A cell the paper does not have raises ``KeyError`` naming artifact,
  row and column.

Labels are the taxonomy's (:mod:`voxmem_analysis.taxonomy`); the access-group titles and the
``Mean ... (n)`` row labels are those of :mod:`voxmem_analysis.analysis.results`.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from voxmem_analysis.reproduce import published as paper
from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.results import GROUP_TITLES, mean_row_label

SEM, SPK, PARA, ENV = tx.EVIDENCE_TYPES
IE, MSR, TET, AR = tx.OPERATIONS
ANS = tx.ANSWERABLE_OPERATIONS


# =============================================================================== design choices
# --- models (Table 12, Table 14) ------------------------------------------------------------
# name, family, access, architecture, llm_params_b, total_params_b, in_64k_set
MODELS: tuple[tuple, ...] = (
    ("Audio-Flamingo-Next", "Audio Flamingo", "open_weight", "audio_specialist", 7.6, 8.3, True),
    ("MiMo-Audio-7B-Instruct", "MiMo", "open_weight", "audio_specialist", 7.6, 8.4, False),
    ("Baichuan-Audio-7B", "Baichuan", "open_weight", "audio_specialist", 7.6, 8.6, True),
    ("Ultravox-v0.6-Llama-3.1-8B", "Ultravox", "open_weight", "audio_specialist", 8.0, 8.7, True),
    ("FireRedAudio-9B", "FireRed", "open_weight", "audio_specialist", 9.0, 9.6, True),
    ("Phi-4-Multimodal", "Phi", "open_weight", "omni_modal", 3.8, 5.6, False),
    ("Gemma-4-E4B-it", "Gemma", "open_weight", "omni_modal", 7.5, 8.0, True),
    ("MiniCPM-o-4.5", "MiniCPM", "open_weight", "omni_modal", 8.2, 9.0, False),
    ("Baichuan-Omni-1.5-7B", "Baichuan", "open_weight", "omni_modal", 7.6, 9.3, True),
    ("Qwen3-Omni-30B-A3B", "Qwen-Omni", "open_weight", "omni_modal", 30.5, 31.7, True),
    ("Qwen3.8-Omni-Flash", "Qwen-Omni", "proprietary", "api", None, None, False),
    ("Gemini-3.1-Pro", "Gemini", "proprietary", "api", None, None, True),
    ("Gemini-3.8-Flash", "Gemini", "proprietary", "api", None, None, True),
    ("Qwen3.5-Omni-Plus", "Qwen-Omni", "proprietary", "api", None, None, False),
    ("Gemini-2.5-Pro", "Gemini", "proprietary", "api", None, None, True),
)
MODEL_NAMES = tuple(m[0] for m in MODELS)
PROPRIETARY = tuple(m[0] for m in MODELS if m[2] == "proprietary")
OPEN = tuple(m[0] for m in MODELS if m[2] == "open_weight")
SET64 = tuple(m[0] for m in MODELS if m[6])
PROP64 = tuple(m for m in SET64 if m in PROPRIETARY)
OPEN64 = tuple(m for m in SET64 if m in OPEN)
#: Models run on the open-weight checkpoints with the system prompt folded into the first user turn.
FOLDED_PROMPT = ("Phi-4-Multimodal", "Baichuan-Audio-7B")
#: The three strongest at 8K, held within the paper's 'Top-3 spread' of each other (§C.5 names
#: no models; these are the 32K top three of §4.2).
TOP3_8K = ("Qwen3.8-Omni-Flash", "Gemini-3.1-Pro", "Gemini-3.8-Flash")
#: The production judge (the Table 13 column whose accuracies are calibrated).
PRODUCTION_JUDGE = "Gemini-3.7-Flash"


def slug(model: str) -> str:
    return model.lower().replace(".", "-").replace("_", "-")


def runs() -> list[tuple[str, str]]:
    """(model, budget) pairs that were evaluated: all 15 at 8K-32K, the ten of Table 14 at 64K."""
    return [(m, b) for b in tx.BUDGETS for m in MODEL_NAMES if b != "64K" or m in SET64]


# --- item bank (questions per cell) -----------------------------------------------------------
#: answerable questions per (operation, evidence); the paper fixes the margins
#: (195/126/222/126 by evidence; 230/221/218 by operation; paralinguistic TET 49,
#: environmental TET 32) and the remaining cells are chosen so that Figure 5's cell
#: means and the 32K group means of Section 4.2 are mutually consistent.
ANS_CELLS: dict[tuple[str, str], int] = {
    (MSR, SEM): 85, (TET, SEM): 110,
    (IE, SPK): 65, (MSR, SPK): 34, (TET, SPK): 27,
    (IE, PARA): 107, (MSR, PARA): 66, (TET, PARA): 49,
    (IE, ENV): 58, (MSR, ENV): 36, (TET, ENV): 32,
}
#: refusal (AR) questions per (evidence, source operation): 37/21/42/30 and 47/49/34.
AR_CELLS: dict[tuple[str, str], int] = {
    (SEM, MSR): 20, (SEM, TET): 17,
    (SPK, IE): 9, (SPK, MSR): 7, (SPK, TET): 5,
    (PARA, IE): 22, (PARA, MSR): 12, (PARA, TET): 8,
    (ENV, IE): 16, (ENV, MSR): 10, (ENV, TET): 4,
}
#: subtypes per answerable cell (sizes sum to the cell); chosen so that the 64K
#: audio-native error counts leave room for Table 20's attributed totals.
SUBTYPE_SPLIT: dict[tuple[str, str], dict[str, int]] = {
    (MSR, SEM): {"counting": 28, "matching_resolution": 29, "aggregation_comparison": 28},
    (TET, SEM): {"latest_state": 37, "historical_state": 37, "evolution_transition": 36},
    (IE, SPK): {"context_to_cue": 25, "cue_to_fact": 40},
    (MSR, SPK): {"counting": 11, "matching_resolution": 15, "aggregation_comparison": 8},
    (TET, SPK): {"latest_state": 7, "historical_state": 11, "evolution_transition": 9},
    (IE, PARA): {"context_to_cue": 62, "cue_to_fact": 45},
    (MSR, PARA): {"counting": 23, "matching_resolution": 29, "aggregation_comparison": 14},
    (TET, PARA): {"latest_state": 13, "historical_state": 20, "evolution_transition": 16},
    (IE, ENV): {"context_to_cue": 42, "cue_to_fact": 16},
    (MSR, ENV): {"counting": 14, "matching_resolution": 16, "aggregation_comparison": 6},
    (TET, ENV): {"latest_state": 8, "historical_state": 14, "evolution_transition": 10},
}

#: calibration cells: 11 answerable (op, ev) + 11 refusal (ev, source op); key = (ev, op, srcop)
CELLS: tuple[tuple[str, str, str], ...] = tuple(
    [(ev, op, op) for (op, ev) in ANS_CELLS] + [(ev, AR, src) for (ev, src) in AR_CELLS]
)


def cell_size(cell: tuple[str, str, str]) -> int:
    ev, op, src = cell
    return AR_CELLS[(ev, src)] if op == AR else ANS_CELLS[(op, ev)]


# --- provider rejections at 8K (Table 13: 11,978 of 11,985 scored) ------------------------------
#: (model, evidence, operation, source operation); 2/3/2/0 by evidence, 3/2/1/1 by operation.
REJECTIONS_8K: tuple[tuple[str, str, str, str], ...] = (
    ("Qwen3.8-Omni-Flash", SEM, MSR, MSR),
    ("Qwen3.8-Omni-Flash", SPK, IE, IE),
    ("Qwen3.8-Omni-Flash", SPK, TET, TET),
    ("Qwen3.8-Omni-Flash", PARA, IE, IE),
    ("Qwen3.5-Omni-Plus", SEM, AR, MSR),
    ("Qwen3.5-Omni-Plus", SPK, IE, IE),
    ("Qwen3.5-Omni-Plus", PARA, MSR, MSR),
)
REJECTION_ERROR = "provider rejected: request blocked before inference (HTTP 400 invalid_request)"


def rejected_count(model: str, cell: tuple[str, str, str]) -> int:
    ev, op, src = cell
    return sum(1 for (m, e, o, s) in REJECTIONS_8K if m == model and e == ev and o == op and s == src)


def denom(model: str, cell: tuple[str, str, str]) -> int:
    """Paper convention (App. C.6 'Denominators'): a model is scored on the items it was
    judged on at every budget it was run at, so an 8K rejection leaves all its budgets."""
    return cell_size(cell) - rejected_count(model, cell)


# ============================================================================ published targets
@lru_cache(maxsize=1)
def _published() -> dict[tuple[str, str, str], tuple[float, str]]:
    """(artifact, row, column) -> (value, unit), in the order of ``published.csv``."""
    df = paper.published()
    return {(a, r, c): (float(v), u) for a, r, c, v, u
            in df[["artifact", "row", "column", "value", "unit"]].itertuples(index=False)}


def published_value(artifact: str, row: str, column: str) -> float | int:
    """The paper's number at (artifact, row, column): an ``int`` for counts, else a ``float``.

    Raises ``KeyError`` naming the cell when ``published.csv`` has no such number.
    """
    try:
        value, unit = _published()[artifact, row, column]
    except KeyError:
        raise KeyError(f"no published number for artifact={artifact!r}, row={row!r}, "
                       f"column={column!r} (data/paper/published.csv)") from None
    return int(value) if unit == "count" else value


def _row(artifact: str, row: str, columns) -> tuple:
    return tuple(published_value(artifact, row, c) for c in columns)


def _printed(artifact: str) -> list[tuple[str, str]]:
    """The (row, column) cells the paper prints for an artifact, in printed order."""
    return [(r, c) for (a, r, c) in _published() if a == artifact]


def _in_printed_order(artifact: str, rows) -> list[str]:
    """``rows`` in the order the paper prints them (rows it lacks last; reading them raises)."""
    order = {r: i for i, r in enumerate(dict.fromkeys(r for r, _ in _printed(artifact)))}
    return sorted(rows, key=lambda r: order.get(r, len(order)))


EV_LABEL = tx.EVIDENCE_LABELS
OP_LABEL = tx.OPERATION_LABELS
_EV_CODE = {label: code for code, label in EV_LABEL.items()}
_OP_CODE = {label: code for code, label in OP_LABEL.items()}
_ACCESS_CODE = {GROUP_TITLES[g]: g for g in ("proprietary", "open_weight")}
_EV_COLS = tuple(EV_LABEL[e] for e in tx.EVIDENCE_TYPES)
_T15_COLS = _EV_COLS + ("Overall",)
_T17_COLS = _EV_COLS + tuple(OP_LABEL[o] for o in ANS)
_T18_COLS = ("n", "8K", "64K", "drop", "drop_lo", "drop_hi", "retention", "retention_lo", "retention_hi")


def _evidence_key(label: str) -> str:
    """Evidence code of a column label; ``'overall'`` for ``'Overall'``."""
    return "overall" if label == "Overall" else _EV_CODE[label]


def _build() -> dict[str, dict]:
    """The published numbers arranged as the module-level dicts below."""
    t15 = {m: _row("table15", m, _T15_COLS) for m in _in_printed_order("table15", SET64)}
    t15_means = {}
    for group, models in (("proprietary", PROP64), ("open_weight", OPEN64), ("all", SET64)):
        label = mean_row_label(group, len(models))
        t15_means[label] = (models, _row("table15", label, _T15_COLS))
    t18 = {ev: _row("table18", EV_LABEL[ev], _T18_COLS) for ev in tx.EVIDENCE_TYPES}
    t18["overall"] = _row("table18", "Overall", _T18_COLS)
    # figures: every answerable cell the paper quotes (Figure 5 at 32K, Figure 8 by budget)
    fig5 = {(_OP_CODE[r], _EV_CODE[c]): published_value("fig5", r, c)
            for r, c in _printed("fig5") if r != OP_LABEL[AR] and c in _EV_CODE}
    fig8 = {}
    for r, c in _printed("fig8"):
        budget, op = r.split("|")
        fig8[_OP_CODE[op], _EV_CODE[c], budget] = published_value("fig8", r, c)
    # access-group means (§4.2, §4.4) and the 32K top three (§4.2)
    groups: dict[tuple[str, str], dict[str, float]] = {}
    top3_32k: dict[str, float] = {}
    for r, c in _printed("groups"):
        budget, who = r.split("|")
        if who in _ACCESS_CODE:
            groups.setdefault((budget, _ACCESS_CODE[who]), {})[_evidence_key(c)] = \
                published_value("groups", r, c)
        elif who in MODEL_NAMES and budget == "32K":
            top3_32k[who] = published_value("groups", r, "Overall")
    t13_rows = {"all": "All", **{ev: EV_LABEL[ev] for ev in tx.EVIDENCE_TYPES},
                **{op: OP_LABEL[op] for op in tx.OPERATIONS}}
    return dict(
        TABLE15=t15,
        TABLE15_MEANS=t15_means,
        TABLE16={m: _row("table16", m, ("Answerable", "AR")) for m in _in_printed_order("table16", SET64)},
        TABLE17={b: _row("table17", b, _T17_COLS) for b in tx.BUDGETS},
        TABLE18=t18,
        RETENTION={key: row[_T18_COLS.index("retention")] for key, row in t18.items()},
        FIG5_32K=fig5,
        FIG8=fig8,
        GROUP_MEANS=groups,
        TOP3_32K=top3_32k,
        TABLE13_8K={key: _row("table13", label, ("n", PRODUCTION_JUDGE)) for key, label in t13_rows.items()},
        D5={"attempts": published_value("population", "Attempts", "n"),
            "incorrect": published_value("population", "Incorrect", "n")},
    )


_P = _build()
#: model: (sem, spk, para, env, overall) at 64K (Table 15), in printed order
TABLE15: dict[str, tuple[float, ...]] = _P["TABLE15"]
#: "Mean ... (n)" row: (models, (sem, spk, para, env, overall)) (Table 15)
TABLE15_MEANS: dict[str, tuple[tuple[str, ...], tuple[float, ...]]] = _P["TABLE15_MEANS"]
#: model: (answerable, AR) at 64K (Table 16)
TABLE16: dict[str, tuple[float, float]] = _P["TABLE16"]
#: budget: AR accuracy (sem, spk, para, env, IE, MSR, TET), mean over models (Table 17)
TABLE17: dict[str, tuple[float, ...]] = _P["TABLE17"]
#: evidence code or "overall": (n, 8K, 64K, drop, drop_lo, drop_hi, ret, ret_lo, ret_hi) (Table 18)
TABLE18: dict[str, tuple] = _P["TABLE18"]
#: Table 18 retention ratios (64K mean / 8K mean over the ten 64K models)
RETENTION: dict[str, float] = _P["RETENTION"]
#: (op, ev): mean over 15 models at 32K, the answerable cells the paper quotes (Figure 5)
FIG5_32K: dict[tuple[str, str], float] = _P["FIG5_32K"]
#: (op, ev, budget): mean over the ten 64K models (Figure 8, App. D.2)
FIG8: dict[tuple[str, str, str], float] = _P["FIG8"]
#: (budget, access group): {"overall" or evidence code: mean over the group} (§4.2, §4.4)
GROUP_MEANS: dict[tuple[str, str], dict[str, float]] = _P["GROUP_MEANS"]
#: model: overall accuracy at 32K of the three strongest (§4.2)
TOP3_32K: dict[str, float] = _P["TOP3_32K"]
#: "all", evidence or operation code: (n, production-judge accuracy) at 8K (Table 13)
TABLE13_8K: dict[str, tuple[int, float]] = _P["TABLE13_8K"]
#: App. D.5 population at 64K (ten models, audio-native answerable items)
D5: dict[str, int] = _P["D5"]
del _P


@dataclass(frozen=True)
class Target:
    """One published number expressed over calibration cells.

    ``agg``: ``mean`` = unweighted mean over ``models`` of per-model accuracy over the
    selected cells; ``pooled`` = correct / scored pooled over models and cells;
    ``model`` = a single model's accuracy (``models`` has one entry).
    ``half_width`` and ``weight`` are design choices of the solver: the band it aims for
    (the printed precision) and the cost of missing it.
    """
    artifact: str
    row: str
    column: str
    value: float
    budget: str
    models: tuple[str, ...]
    agg: str
    ev: tuple[str, ...] = tx.EVIDENCE_TYPES
    ops: tuple[str, ...] = tx.OPERATIONS            # item operation
    srcops: tuple[str, ...] = ANS                   # source operation
    unit: str = "%"
    half_width: float = 0.05                          # printed precision
    weight: float = 1.0

    def cells(self) -> list[tuple[str, str, str]]:
        return [c for c in CELLS if c[0] in self.ev and c[1] in self.ops and c[2] in self.srcops]


def targets() -> list[Target]:
    """Every calibrated number, as linear functionals of the per-cell correct counts."""
    t: list[Target] = []
    evs = tx.EVIDENCE_TYPES
    # Table 15 / Table 16 (64K, per model)
    for m, vals in TABLE15.items():
        for ev, v in zip(evs, vals[:4]):
            t.append(Target("table15", m, EV_LABEL[ev], v, "64K", (m,), "model", ev=(ev,), weight=3))
        t.append(Target("table15", m, "Overall", vals[4], "64K", (m,), "model", weight=3))
    for g, (ms, vals) in TABLE15_MEANS.items():
        for ev, v in zip(evs, vals[:4]):
            t.append(Target("table15", g, EV_LABEL[ev], v, "64K", ms, "mean", ev=(ev,)))
        t.append(Target("table15", g, "Overall", vals[4], "64K", ms, "mean"))
    for m, (a, r) in TABLE16.items():
        t.append(Target("table16", m, "Answerable", a, "64K", (m,), "model", ops=ANS, weight=3))
        t.append(Target("table16", m, "AR", r, "64K", (m,), "model", ops=(AR,), weight=3))
    # Table 17 (AR, mean over models, every length)
    for b, vals in TABLE17.items():
        ms = SET64 if b == "64K" else MODEL_NAMES
        for ev, v in zip(evs, vals[:4]):
            t.append(Target("table17", b, EV_LABEL[ev], v, b, ms, "mean", ev=(ev,), ops=(AR,)))
        for op, v in zip(ANS, vals[4:]):
            t.append(Target("table17", b, OP_LABEL[op], v, b, ms, "mean", ops=(AR,), srcops=(op,)))
    # Table 18 (8K and 64K means over the ten 64K models)
    for key, row in TABLE18.items():
        sel = dict(ev=(key,)) if key != "overall" else {}
        label = EV_LABEL.get(key, "Overall")
        t.append(Target("table18", label, "8K", row[1], "8K", SET64, "mean", **sel))
        t.append(Target("table18", label, "64K", row[2], "64K", SET64, "mean", **sel))
    # Figure 5 (32K, 15 models) incl. the AR row (= Table 17 at 32K)
    for (op, ev), v in FIG5_32K.items():
        t.append(Target("fig5", OP_LABEL[op], EV_LABEL[ev], v, "32K", MODEL_NAMES, "mean", ev=(ev,), ops=(op,)))
    for ev in evs:
        v = published_value("fig5", OP_LABEL[AR], EV_LABEL[ev])
        t.append(Target("fig5", OP_LABEL[AR], EV_LABEL[ev], v, "32K", MODEL_NAMES, "mean", ev=(ev,), ops=(AR,)))
    # Figure 8 (ten 64K models)
    for (op, ev, b), v in FIG8.items():
        t.append(Target("fig8", f"{b}|{OP_LABEL[op]}", EV_LABEL[ev], v, b, SET64, "mean", ev=(ev,), ops=(op,)))
    # group means
    for (b, g), vals in GROUP_MEANS.items():
        ms = PROPRIETARY if g == "proprietary" else OPEN
        for k, v in vals.items():
            sel = {} if k == "overall" else dict(ev=(k,))
            t.append(Target("groups", f"{b}|{GROUP_TITLES[g]}", EV_LABEL.get(k, "Overall"), v, b, ms, "mean",
                            **sel))
    for m, v in TOP3_32K.items():
        t.append(Target("groups", f"32K|{m}", "Overall", v, "32K", (m,), "model", weight=3))
    # Table 13 (production judge, 8K, pooled over all scored predictions)
    for key, (n, v) in TABLE13_8K.items():
        if key in evs:
            sel, label = dict(ev=(key,)), EV_LABEL[key]
        elif key == "all":
            sel, label = {}, "All"
        else:
            sel, label = dict(ops=(key,)), OP_LABEL[key]
        t.append(Target("table13", label, PRODUCTION_JUDGE, v, "8K", MODEL_NAMES, "pooled", **sel))
    return t
