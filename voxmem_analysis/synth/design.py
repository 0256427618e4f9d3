"""Design constants of the synthetic release: models, item bank cell sizes, and
the published numbers the synthetic verdicts are calibrated to.

Everything here is a plain constant so the calibration solver (``calibrate.py``),
the generator (``core.py``) and the checker (``check.py``) share one definition.
The numbers quoted are from the VoxMem paper (Tables 12-18, Figures 5 and 8,
Sections 4.2-4.4, Appendices C.5-D.5).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..taxonomy import EVIDENCE_TYPES, BUDGETS

SEM, SPK, PARA, ENV = EVIDENCE_TYPES
IE, MSR, TET, AR = "information_extraction", "multi_session_reasoning", "temporal_evolution_tracking", "answer_refusal"
ANS_OPS = (IE, MSR, TET)

# --- models (Table 12, Table 14) ------------------------------------------------
# name, family, access, architecture, llm_params_b, total_params_b, in_64k_set, slug
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


def slug(model: str) -> str:
    return model.lower().replace(".", "-").replace("_", "-")


def runs() -> list[tuple[str, str]]:
    """(model, budget) pairs that were evaluated: all 15 at 8K-32K, the ten of Table 14 at 64K."""
    return [(m, b) for b in BUDGETS for m in MODEL_NAMES if b != "64K" or m in SET64]


# --- item bank (questions per cell) -------------------------------------------------
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


# --- provider rejections at 8K (Table 13: 11,978 of 11,985 scored) ----------------
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


# --- published targets ---------------------------------------------------------------
@dataclass(frozen=True)
class Target:
    """One published number expressed over calibration cells.

    ``agg``: ``mean`` = unweighted mean over ``models`` of per-model accuracy over the
    selected cells; ``pooled`` = correct / scored pooled over models and cells;
    ``model`` = a single model's accuracy (``models`` has one entry).
    """
    artifact: str
    row: str
    column: str
    value: float
    budget: str
    models: tuple[str, ...]
    agg: str
    ev: tuple[str, ...] = EVIDENCE_TYPES
    ops: tuple[str, ...] = (IE, MSR, TET, AR)       # item operation
    srcops: tuple[str, ...] = (IE, MSR, TET)        # source operation
    unit: str = "%"
    half_width: float = 0.05                          # printed precision
    weight: float = 1.0
    kind: str = "calibrated"

    def cells(self) -> list[tuple[str, str, str]]:
        return [c for c in CELLS if c[0] in self.ev and c[1] in self.ops and c[2] in self.srcops]


EV_SHORT = {SEM: "Speech Sem.", SPK: "Speaker", PARA: "Paraling.", ENV: "Environ."}
EV_LONG = {SEM: "Speech Semantics", SPK: "Speaker Identity", PARA: "Paralinguistic Cues", ENV: "Environmental Sound"}
GROUP_LABEL = {"proprietary": "Proprietary", "open_weight": "Open-weight"}
EV_ABBR = {SEM: "Sem.", SPK: "Spk.", PARA: "Para.", ENV: "Env."}
OP_ABBR = {IE: "IE", MSR: "MSR", TET: "TET", AR: "AR"}
ANS = (IE, MSR, TET)

TABLE15 = {  # model: (sem, spk, para, env, overall)
    "Gemini-3.1-Pro": (68.5, 26.5, 19.7, 15.4, 34.3),
    "Gemini-3.8-Flash": (50.9, 38.1, 16.7, 15.4, 30.3),
    "Ultravox-v0.6-Llama-3.1-8B": (28.0, 29.3, 12.9, 17.9, 21.3),
    "Gemini-2.5-Pro": (35.8, 14.3, 14.4, 16.7, 21.0),
    "Qwen3-Omni-30B-A3B": (31.5, 21.8, 15.9, 11.5, 20.7),
    "Gemma-4-E4B-it": (27.2, 24.5, 12.9, 11.5, 18.9),
    "Audio-Flamingo-Next": (26.3, 22.4, 12.9, 9.0, 17.8),
    "Baichuan-Audio-7B": (26.7, 29.3, 9.8, 7.1, 17.8),
    "Baichuan-Omni-1.5-7B": (20.3, 13.6, 11.4, 11.5, 14.4),
    "FireRedAudio-9B": (22.0, 11.6, 10.2, 8.3, 13.5),
}
TABLE15_MEANS = {  # (group label, models): (sem, spk, para, env, overall)
    "Mean proprietary (3)": (PROP64, (51.7, 26.3, 16.9, 15.8, 28.5)),
    "Mean open-weight (7)": (OPEN64, (26.0, 21.8, 12.3, 11.0, 17.8)),
    "Mean all (10)": (SET64, (33.7, 23.1, 13.7, 12.4, 21.0)),
}
TABLE16 = {  # model: (answerable, AR)
    "Gemini-3.1-Pro": (29.0, 61.5), "Gemini-3.8-Flash": (26.6, 49.2),
    "Ultravox-v0.6-Llama-3.1-8B": (21.1, 22.3), "Audio-Flamingo-Next": (20.6, 3.1),
    "Qwen3-Omni-30B-A3B": (20.2, 23.1), "Baichuan-Audio-7B": (20.2, 5.4),
    "Gemma-4-E4B-it": (17.9, 23.8), "FireRedAudio-9B": (15.1, 5.4),
    "Gemini-2.5-Pro": (12.0, 67.7), "Baichuan-Omni-1.5-7B": (8.4, 45.4),
}
TABLE17 = {  # budget: (sem, spk, para, env, IE, MSR, TET)
    "8K": (22.0, 16.2, 35.2, 39.3, 27.2, 32.9, 27.3),
    "16K": (23.6, 14.6, 35.6, 37.6, 28.8, 31.7, 26.5),
    "32K": (19.9, 16.2, 34.3, 34.2, 28.0, 28.2, 25.0),
    "64K": (28.9, 21.9, 35.0, 33.0, 31.9, 32.9, 25.9),
}
TABLE18 = {  # evidence: (n, 8K, 64K, drop, drop_lo, drop_hi, ret, ret_lo, ret_hi)
    SEM: (232, 48.0, 33.7, 14.3, 11.9, 16.7, 0.703, 0.666, 0.741),
    SPK: (147, 34.8, 23.1, 11.6, 8.0, 15.4, 0.665, 0.590, 0.749),
    PARA: (264, 19.6, 13.7, 5.9, 4.1, 7.8, 0.698, 0.626, 0.775),
    ENV: (156, 19.7, 12.4, 7.2, 4.1, 10.7, 0.632, 0.511, 0.764),
    "overall": (799, 30.6, 21.0, 9.6, 8.3, 11.0, 0.685, 0.653, 0.718),
}
FIG5_32K = {  # (op, ev): mean over 15 models at 32K
    (MSR, SEM): 41.8, (MSR, SPK): 43.1, (MSR, PARA): 26.7, (MSR, ENV): 25.2,
    (IE, SPK): 29.0, (IE, PARA): 8.8, (IE, ENV): 13.5,
    (TET, SEM): 44.5, (TET, SPK): 20.0, (TET, PARA): 3.4, (TET, ENV): 1.2,
}
FIG8 = {  # (op, ev, budget): mean over the ten 64K models
    (TET, SEM, "8K"): 57.3, (TET, SEM, "16K"): 52.5, (TET, SEM, "64K"): 33.9,
    (MSR, SEM, "64K"): 35.5, (AR, PARA, "64K"): 35.0,
    (TET, PARA, "8K"): 3.3, (TET, PARA, "16K"): 3.7, (TET, PARA, "64K"): 3.1,
    (TET, ENV, "8K"): 2.2, (TET, ENV, "16K"): 1.9, (TET, ENV, "64K"): 0.9,
}
GROUP_MEANS = {  # (budget, group): overall or by evidence (Sections 4.2, 4.4)
    ("8K", "proprietary"): {"overall": 40.1},
    ("8K", "open_weight"): {"overall": 26.6},
    ("32K", "proprietary"): {"overall": 33.0, SEM: 55.6, SPK: 32.7, PARA: 20.0, ENV: 21.9},
    ("32K", "open_weight"): {"overall": 21.9, SEM: 31.6, SPK: 26.7, PARA: 14.5, ENV: 15.5},
}
TOP3_32K = {"Qwen3.8-Omni-Flash": 38.5, "Gemini-3.1-Pro": 35.9, "Gemini-3.8-Flash": 34.0}
#: the three strongest at 8K (Section C.5: 'within 0.9 pp of each other')
TOP3_8K = ("Qwen3.8-Omni-Flash", "Gemini-3.1-Pro", "Gemini-3.8-Flash")
TABLE13_8K = {  # slice: (n, gemini accuracy)
    "All items": (11978, 31.1),
    SEM: (3478, 48.0), SPK: (2202, 37.0), PARA: (3958, 19.7), ENV: (2340, 19.7),
    IE: (3447, 26.3), MSR: (3313, 35.0), TET: (3269, 33.2), AR: (1949, 29.4),
}
D5 = {"attempts": 4740, "incorrect": 4137, "rho_retention": 0.03, "rho_drop": -0.77}
TABLE16_RHO = -0.02


def targets() -> list[Target]:
    """Every calibrated number, as linear functionals of the per-cell correct counts."""
    t: list[Target] = []
    evs = EVIDENCE_TYPES
    # Table 15 / Table 16 (64K, per model)
    for m, vals in TABLE15.items():
        for ev, v in zip(evs, vals[:4]):
            t.append(Target("table15", m, EV_LONG[ev], v, "64K", (m,), "model", ev=(ev,), weight=3))
        t.append(Target("table15", m, "Overall", vals[4], "64K", (m,), "model", weight=3))
    for g, (ms, vals) in TABLE15_MEANS.items():
        for ev, v in zip(evs, vals[:4]):
            t.append(Target("table15", g, EV_LONG[ev], v, "64K", ms, "mean", ev=(ev,)))
        t.append(Target("table15", g, "Overall", vals[4], "64K", ms, "mean"))
    for m, (a, r) in TABLE16.items():
        t.append(Target("table16", m, "Answerable", a, "64K", (m,), "model", ops=ANS, weight=3))
        t.append(Target("table16", m, "AR", r, "64K", (m,), "model", ops=(AR,), weight=3))
    # Table 17 (AR, mean over models, every length)
    for b, vals in TABLE17.items():
        ms = SET64 if b == "64K" else MODEL_NAMES
        for ev, v in zip(evs, vals[:4]):
            t.append(Target("table17", b, EV_LONG[ev], v, b, ms, "mean", ev=(ev,), ops=(AR,)))
        for op, v in zip(ANS, vals[4:]):
            t.append(Target("table17", b, OP_ABBR[op], v, b, ms, "mean", ops=(AR,), srcops=(op,)))
    # Table 18 (8K and 64K means over the ten 64K models)
    for key, row in TABLE18.items():
        sel = dict(ev=(key,)) if key != "overall" else {}
        label = EV_LONG.get(key, "Overall")
        t.append(Target("table18", label, "8K", row[1], "8K", SET64, "mean", **sel))
        t.append(Target("table18", label, "64K", row[2], "64K", SET64, "mean", **sel))
    # Figure 5 (32K, 15 models) incl. AR row = Table 17 32K
    for (op, ev), v in FIG5_32K.items():
        t.append(Target("fig5", OP_ABBR[op], EV_LONG[ev], v, "32K", MODEL_NAMES, "mean", ev=(ev,), ops=(op,)))
    for ev, v in zip(evs, TABLE17["32K"][:4]):
        t.append(Target("fig5", "AR", EV_LONG[ev], v, "32K", MODEL_NAMES, "mean", ev=(ev,), ops=(AR,)))
    # Figure 8 (ten 64K models)
    for (op, ev, b), v in FIG8.items():
        t.append(Target("fig8", f"{b}|{OP_ABBR[op]}", EV_LONG[ev], v, b, SET64, "mean", ev=(ev,), ops=(op,)))
    # group means
    for (b, g), vals in GROUP_MEANS.items():
        ms = PROPRIETARY if g == "proprietary" else OPEN
        for k, v in vals.items():
            sel = {} if k == "overall" else dict(ev=(k,))
            t.append(Target("groups", f"{b}|{GROUP_LABEL[g]}", EV_LONG.get(k, "Overall"), v, b, ms, "mean", **sel))
    for m, v in TOP3_32K.items():
        t.append(Target("groups", f"32K|{m}", "Overall", v, "32K", (m,), "model", weight=3))
    # Table 13 (production judge, 8K, pooled over all scored predictions)
    for key, (n, v) in TABLE13_8K.items():
        if key in evs:
            sel = dict(ev=(key,))
        elif key == "All items":
            sel = {}
        else:
            sel = dict(ops=(key,))
        label = EV_LONG.get(key, {IE: "IE", MSR: "MSR", TET: "TET", AR: "AR"}.get(key, "All"))
        t.append(Target("table13", label, "Gemini-3.7-Flash", v, "8K", MODEL_NAMES, "pooled", **sel))
    return t


#: Table 18 retention ratios (ratio of the 64K and 8K means over the ten models)
RETENTION = {SEM: 0.703, SPK: 0.665, PARA: 0.698, ENV: 0.632, "overall": 0.685}
