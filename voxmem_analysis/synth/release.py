"""Deterministic generator of the SYNTHETIC VoxMem release directory.

``write_release(out_dir, seed=DEFAULT_SEED)`` writes predictions (harness format,
FORMATS §1), ``items.csv`` (FORMATS §2), ``models.csv``, ``release.json``,
``README.md``, ``judge2/``, ``ablation/`` and ``attribution/`` (made by the modules named
in :data:`PARTS`; a failure there raises).  Nothing here is real model output.

How verdicts are made: the integer correct counts per (model, budget, cell) come
from ``counts.json`` (solved once by ``calibrate.py`` against the paper's numbers);
which items are correct is decided by ranking a latent score per (model, item,
budget) = shared item easiness + model-specific term + a random walk over budgets
(shared across models in part), and taking the top k of each cell.  So an item
hard for one model is hard for all, and a model correct at 64K was usually
correct at 8K.
"""
from __future__ import annotations

import gzip
import io
import json
import pathlib
import shutil

import numpy as np
import pandas as pd
import polars as pl

from voxmem_analysis.errors import InputError
from voxmem_analysis.taxonomy import BUDGETS, budget_tokens
from voxmem_analysis.synth import design as D
from voxmem_analysis.synth.design import AR, ENV, IE, MSR, PARA, SEM, SPK
from voxmem_analysis.synth.counts import read_counts

DEFAULT_SEED = 20260
BENCHMARK_VERSION = "voxmem-1.0-synthetic"
JUDGE = "gemini-3.7-flash"
JUDGE2 = "gpt-5.6-luna"

#: latent-score noise per evidence type: (model-specific sd, shared walk sd, model walk sd)
#: tuned so the paired bootstrap intervals of Table 18 come out near the paper's.
NOISE = {
    SEM: (0.6, 0.0, 0.5),
    SPK: (0.4, 0.15, 0.2),
    PARA: (0.4, 0.0, 0.2),
    ENV: (0.4, 0.45, 0.5),
}

PRED_FIELDS = (
    "item_id", "question_id", "context_length", "family_id", "evidence_type", "memory_operation",
    "subtype", "question_text", "expected_response", "gold_json", "answer_type",
    "answer_normalization", "session_count", "evidence_session_count",
    "samekey_haystack_session_count", "model", "allow_abstention", "system_prompt_delivery",
    "n_audio_clips", "response", "verdict", "judge", "judge_raw", "error", "synthetic",
)
ITEM_FIELDS = (
    "item_id", "question_id", "context_length", "family_id", "evidence_type", "memory_operation",
    "subtype", "question_text", "query_timestamp", "expected_response", "gold_json", "answer_type",
    "answer_normalization", "evidence_session_ids", "evidence_session_indices",
    "evidence_relative_positions", "session_count", "evidence_session_count",
    "filler_session_count", "topical_haystack_session_count", "samekey_haystack_session_count",
    "history_audio_tokens", "history_duration_seconds", "n_audio_clips", "paired_question_id",
    "benchmark_version",
)

# --- vocabularies for answers and questions -----------------------------------------
_VOCAB = {
    SEM: ["paused", "Thursday", "the blue lamp", "Lisbon", "the dentist", "pasta", "the morning shift",
          "cancelled", "the red bike", "yoga", "the garden", "a new laptop"],
    SPK: ["Speaker 1", "Speaker 2", "Speaker 3", "Speaker 4"],
    PARA: ["hesitant", "surprised", "emphatic", "laughing", "fast", "slow", "whispering", "excited",
           "sad", "calm"],
    ENV: ["traffic", "an alarm", "rain", "a dog barking", "a vacuum cleaner", "a crackling fire",
          "church bells", "keyboard typing", "birdsong", "a washing machine"],
}
_TOPICS = ["the lamp replacement", "the weekend trip", "the gym plan", "the dinner menu", "the new job",
           "the garden project", "the birthday party", "the car repair", "the reading list",
           "the flat viewing", "the concert tickets", "the study schedule"]
_ANSWER_TYPE = {
    "context_to_cue": "categorical", "cue_to_fact": "short_text", "counting": "number",
    "matching_resolution": "yes_no", "aggregation_comparison": "categorical",
    "latest_state": "categorical", "historical_state": "categorical",
    "evolution_transition": "ordered_list",
}
_NORMALIZATION = {"categorical": "closed_set", "yes_no": "closed_set", "number": "numeric",
                  "short_text": "semantic_equivalence", "ordered_list": "ordered_sequence"}
_QTEXT = {
    "context_to_cue": "When we talked about {t}, {what}?",
    "cue_to_fact": "In the session where {cue}, what did I decide about {t}?",
    "counting": "How many of our past sessions about {t} {cnt}?",
    "matching_resolution": "Were the two conversations about {t} {match}?",
    "aggregation_comparison": "Across our talks about {t}, {agg}?",
    "latest_state": "What is the most recent {state} in our conversations about {t}?",
    "historical_state": "What was the {state} when we first discussed {t}?",
    "evolution_transition": "How did the {state} change across our conversations about {t}? List it in order.",
}
_EV_WORDS = {
    SEM: dict(what="what did I say", cue="I mentioned the deadline", cnt="mentioned a deadline",
              match="about the same plan", agg="which option did I mention most", state="plan"),
    SPK: dict(what="who was speaking", cue="the person asking now was speaking", cnt="had a different speaker",
              match="spoken by the same person", agg="who spoke most often", state="speaker"),
    PARA: dict(what="how did I sound", cue="I sounded hesitant", cnt="did I sound excited in",
               match="spoken in the same tone", agg="which tone was most frequent", state="tone of my voice"),
    ENV: dict(what="what could be heard in the background", cue="there was rain in the background",
              cnt="had traffic in the background", match="recorded with the same background sound",
              agg="which background sound was most frequent", state="background sound"),
}
_REFUSAL_OK = [
    "The conversation does not contain enough evidence to determine this.",
    "I can't tell from our previous sessions; the evidence needed is missing.",
    "Insufficient evidence: the history does not support a unique answer.",
]
_REFUSAL_ANS = "There is not enough evidence in the conversation to answer that."
_CAPABILITY = "I'm sorry, I do not have access to previous conversations."


# --- item bank -------------------------------------------------------------------------
def _gold(ev: str, subtype: str, rng: np.random.Generator):
    at = _ANSWER_TYPE[subtype]
    if ev == SEM and at == "categorical":
        at = "short_text"
    if at == "number":
        return at, int(rng.integers(2, 6))
    if at == "yes_no":
        return at, ["yes", "no"][int(rng.integers(0, 2))]
    vocab = _VOCAB[ev]
    if at == "ordered_list":
        idx = rng.choice(len(vocab), size=int(rng.integers(2, 4)), replace=False)
        return at, [vocab[i] for i in idx]
    return at, vocab[int(rng.integers(0, len(vocab)))]


def build_questions(rng: np.random.Generator) -> list[dict]:
    """799 questions: 669 answerable (design.ANS_CELLS, subtypes per SUBTYPE_SPLIT) and
    130 refusal questions each derived from a distinct answerable source question."""
    ans: list[dict] = []
    for (op, ev), split in D.SUBTYPE_SPLIT.items():
        for st, n in split.items():
            for _ in range(n):
                ans.append({"evidence_type": ev, "memory_operation": op, "subtype": st, "source_operation": op})
    order = rng.permutation(len(ans))
    ans = [ans[i] for i in order]
    # refusal variants: pick sources per (ev, source op)
    ars: list[dict] = []
    used: set[int] = set()
    for (ev, src), n in D.AR_CELLS.items():
        pool = [i for i, q in enumerate(ans) if q["evidence_type"] == ev and q["memory_operation"] == src]
        pick = rng.choice(pool, size=n, replace=False)
        for i in sorted(int(x) for x in pick):
            used.add(i)
            ars.append({"evidence_type": ev, "memory_operation": AR, "subtype": ans[i]["subtype"],
                        "source_operation": src, "_src": i})
    # interleave: each refusal question follows its source in id order
    ar_by_src = {q["_src"]: q for q in ars}
    questions: list[dict] = []
    for i, q in enumerate(ans):
        fam = f"fam_{i + 1:05d}"
        q = dict(q, family_id=fam)
        questions.append(q)
        if i in ar_by_src:
            questions.append(dict(ar_by_src[i], family_id=fam, _srcq=q))
    for j, q in enumerate(questions):
        q["question_id"] = f"q_{j + 1:05d}"
    for q in questions:
        if q["memory_operation"] == AR:
            q["paired_question_id"] = q.pop("_srcq")["question_id"]
            q.pop("_src")
        else:
            q["paired_question_id"] = None
    # text, gold, answer type, history composition (shared by a family)
    comp: dict[str, dict] = {}
    for q in questions:
        ev, st = q["evidence_type"], q["subtype"]
        at, val = _gold(ev, st, rng)
        topic = _TOPICS[int(rng.integers(0, len(_TOPICS)))]
        q["question_text"] = _QTEXT[st].format(t=topic, **_EV_WORDS[ev])
        q["answer_type"] = at
        q["answer_value"] = val
        if q["memory_operation"] == AR:
            q["expected_response"] = "insufficient_evidence"
            q["gold_json"] = json.dumps({"answer": "insufficient_evidence", "answer_type": at})
            q["answer_normalization"] = "semantic_equivalence"
        else:
            q["expected_response"] = "answer"
            q["gold_json"] = json.dumps({"answer": val, "answer_type": at})
            q["answer_normalization"] = _NORMALIZATION[at]
        if q["family_id"] in comp:          # refusal variant reuses its source's history
            q["_comp"] = comp[q["family_id"]]
            continue
        op = q["source_operation"]
        n_ev = 1 if op == IE else int(rng.integers(2, 5)) if op == MSR else int(rng.integers(3, 6))
        rel = np.sort(rng.uniform(0.03, 0.97, size=n_ev))
        sess8 = int(rng.integers(6, 10))
        samekey, topical, sessions, clips = [], [], [], []
        s = int(rng.integers(0, 2)); t = 1 + (n_ev > 1) + int(rng.integers(0, 2)); n = sess8
        c = int(round(n * rng.uniform(2.6, 3.4))) + 1
        for k, b in enumerate(BUDGETS):
            if k:
                s = min(2 ** k, s + int(rng.integers(0, 2 ** (k - 1) + 1)))
                t = t + int(rng.integers(1, 2 + n_ev))
                n = int(round(n * rng.uniform(1.85, 2.1)))
                c = int(round(c * rng.uniform(1.9, 2.05)))
            n = max(n, n_ev + s + t + 2)
            samekey.append(s); topical.append(t); sessions.append(n); clips.append(c)
        frac = rng.uniform(0.895, 0.935)
        comp[q["family_id"]] = q["_comp"] = {
            "n_ev": n_ev, "rel": rel, "samekey": samekey, "topical": topical,
            "sessions": sessions, "clips": clips, "audio_frac": frac,
            "day": int(rng.integers(0, 120)), "hour": int(rng.integers(7, 22)), "minute": int(rng.integers(0, 60)),
        }
    return questions


def build_items(questions: list[dict]) -> pl.DataFrame:
    rows = []
    base = np.datetime64("2025-09-01")
    for q in questions:
        cp = q["_comp"]
        qnum = int(q["question_id"][2:])
        fam = int(q["family_id"][4:])
        suffix = "n" if q["memory_operation"] == AR else ""
        ids = [f"s_{fam:05d}_ev{j + 1}{suffix}" for j in range(cp["n_ev"])]
        ts = f"{base + np.timedelta64(cp['day'], 'D')} {cp['hour']:02d}:{cp['minute']:02d}"
        for k, b in enumerate(BUDGETS):
            n = cp["sessions"][k]
            idx: list[int] = []
            for r in cp["rel"]:
                i = int(round(r * (n - 1)))
                while i in idx:
                    i += 1
                idx.append(min(i, n - 1))
            idx = sorted(set(idx))
            while len(idx) < cp["n_ev"]:
                idx.append(idx[-1] + 1)
            relpos = [round(i / (n - 1), 3) for i in idx]
            tokens = int(round(budget_tokens(b) * cp["audio_frac"]))
            rows.append({
                "item_id": f"{q['question_id']}_{b.lower()}",
                "question_id": q["question_id"], "context_length": b, "family_id": q["family_id"],
                "evidence_type": q["evidence_type"], "memory_operation": q["memory_operation"],
                "subtype": q["subtype"], "question_text": q["question_text"], "query_timestamp": ts,
                "expected_response": q["expected_response"], "gold_json": q["gold_json"],
                "answer_type": q["answer_type"], "answer_normalization": q["answer_normalization"],
                "evidence_session_ids": json.dumps(ids), "evidence_session_indices": json.dumps(idx),
                "evidence_relative_positions": json.dumps(relpos),
                "session_count": n, "evidence_session_count": cp["n_ev"],
                "filler_session_count": n - cp["n_ev"] - cp["topical"][k] - cp["samekey"][k],
                "topical_haystack_session_count": cp["topical"][k],
                "samekey_haystack_session_count": cp["samekey"][k],
                "history_audio_tokens": tokens,
                "history_duration_seconds": round(tokens / 50.0, 1),
                "n_audio_clips": cp["clips"][k],
                "paired_question_id": q["paired_question_id"],
                "benchmark_version": BENCHMARK_VERSION,
            })
    return pl.DataFrame(rows).select(ITEM_FIELDS)


def models_frame() -> pd.DataFrame:
    rows = []
    for i, (name, fam, access, arch, llm, tot, in64) in enumerate(D.MODELS):
        rows.append({"model": name, "family": fam, "access": access, "architecture": arch,
                     "llm_params_b": llm, "total_params_b": tot, "in_64k_set": "true" if in64 else "false", "order": i + 1})
    return pd.DataFrame(rows)


# --- verdicts ----------------------------------------------------------------------------
def _cell_of(q: dict) -> tuple[str, str, str]:
    return (q["evidence_type"], q["memory_operation"], q["source_operation"])


def assign_verdicts(questions: list[dict], counts: dict, rng: np.random.Generator,
                    noise: dict | None = None) -> tuple[dict, dict]:
    """Correctness per (model, budget): bool array over questions; and the 8K rejections
    {model: [question index]}."""
    noise = noise or NOISE
    nq = len(questions)
    nm = len(D.MODEL_NAMES)
    nb = len(BUDGETS)
    ev = np.array([q["evidence_type"] for q in questions])
    sd = {k: np.array([noise[e][i] for e in ev]) for i, k in enumerate(("u", "w", "e"))}
    ease = rng.normal(0, 1, nq)
    u = rng.normal(0, 1, (nm, nq)) * sd["u"]
    w = rng.normal(0, 1, (nb, nq)) * sd["w"]
    e = rng.normal(0, 1, (nm, nb, nq)) * sd["e"]
    w[0] = 0.0
    e[:, 0] = 0.0
    walk = np.cumsum(w[None, :, :] + e, axis=1)             # (nm, nb, nq)
    z = ease[None, None, :] + u[:, None, :] + walk
    cells = [_cell_of(q) for q in questions]
    by_cell: dict[tuple, np.ndarray] = {c: np.array([i for i, x in enumerate(cells) if x == c]) for c in D.CELLS}
    # provider rejections: one random question of the named cell for the named model
    rejected: dict[str, list[int]] = {}
    for (m, evx, op, src) in D.REJECTIONS_8K:
        pool = [i for i in by_cell[(evx, op, src)] if i not in rejected.get(m, [])]
        rejected.setdefault(m, []).append(int(rng.choice(pool)))
    out: dict[tuple[str, str], np.ndarray] = {}
    for mi, m in enumerate(D.MODEL_NAMES):
        rej = set(rejected.get(m, []))
        for bi, b in enumerate(BUDGETS):
            if (m, b) not in counts["runs"]:
                continue
            corr = np.zeros(nq, dtype=bool)
            for c, idx in by_cell.items():
                idx = np.array([i for i in idx if i not in rej])
                k = counts["k"][m, b, c]
                if k:
                    top = idx[np.argsort(-z[mi, bi, idx], kind="stable")[:k]]
                    corr[top] = True
            out[m, b] = corr
    return out, rejected


# --- predictions --------------------------------------------------------------------------
def _fmt_answer(val) -> str:
    if isinstance(val, list):
        return ", then ".join(val)
    return str(val)


def _wrong_value(q: dict, rng: np.random.Generator):
    at, val = q["answer_type"], q["answer_value"]
    if at == "number":
        return int(val) + int(rng.choice([-2, -1, 1, 2]))
    if at == "yes_no":
        return "no" if val == "yes" else "yes"
    vocab = _VOCAB[q["evidence_type"]]
    if at == "ordered_list":
        return list(reversed(val)) if rng.random() < 0.5 else [vocab[int(rng.integers(0, len(vocab)))]]
    choices = [v for v in vocab if v != val] or vocab
    return choices[int(rng.integers(0, len(choices)))]


def _response(q: dict, correct: bool, ar_skill: float, rng: np.random.Generator) -> str:
    if q["memory_operation"] == AR:
        if correct:
            return _REFUSAL_OK[int(rng.integers(0, len(_REFUSAL_OK)))]
        if rng.random() < 0.12:
            return _CAPABILITY
        return f"It was {_fmt_answer(_wrong_value(dict(q, answer_value=q['answer_value']), rng))}."
    if correct:
        return f"{_fmt_answer(q['answer_value'])}."
    if rng.random() < 0.25 * ar_skill:
        return _REFUSAL_ANS
    return f"{_fmt_answer(_wrong_value(q, rng))}."


#: failed generations and ungraded verdicts at 8K-32K: (budget, model, kind)
FAILED_UNGRADED = (
    ("8K", "Phi-4-Multimodal", "failed"), ("8K", "MiMo-Audio-7B-Instruct", "failed"),
    ("8K", "Baichuan-Omni-1.5-7B", "failed"), ("8K", "Audio-Flamingo-Next", "ungraded"),
    ("8K", "Gemma-4-E4B-it", "ungraded"),
    ("16K", "Phi-4-Multimodal", "failed"), ("16K", "FireRedAudio-9B", "failed"),
    ("16K", "MiniCPM-o-4.5", "ungraded"),
    ("32K", "Phi-4-Multimodal", "failed"), ("32K", "Baichuan-Audio-7B", "failed"),
    ("32K", "Qwen3-Omni-30B-A3B", "ungraded"), ("32K", "Ultravox-v0.6-Llama-3.1-8B", "ungraded"),
)


def build_predictions(questions: list[dict], items: pl.DataFrame, verdicts: dict, rejected: dict,
                      rng: np.random.Generator) -> pl.DataFrame:
    item_rows = {(r["question_id"], r["context_length"]): r for r in items.iter_rows(named=True)}
    ar_skill = {m: 1.0 for m in D.MODEL_NAMES}
    for m, (_, ar) in D.TABLE16.items():
        ar_skill[m] = 0.4 + ar / 50
    special: dict[tuple[str, str], list[str]] = {}
    for b, m, kind in FAILED_UNGRADED:
        special.setdefault((m, b), []).append(kind)
    rows = []
    for m, b in D.runs():
        corr = verdicts[m, b]
        rej = set(rejected.get(m, []))
        # failed / ungraded go to incorrect, non-rejected predictions
        kinds = special.get((m, b), [])
        wrong = [i for i in range(len(questions)) if not corr[i] and i not in rej]
        pick = [int(x) for x in rng.choice(wrong, size=len(kinds), replace=False)] if kinds else []
        status = dict(zip(pick, kinds))
        delivery = "folded" if m in D.FOLDED_PROMPT else "native"
        for i, q in enumerate(questions):
            it = item_rows[q["question_id"], b]
            resp = _response(q, bool(corr[i]), ar_skill[m], rng)
            verdict: bool | None = bool(corr[i])
            raw = json.dumps({"verdict": "correct" if corr[i] else "incorrect"})
            error = None
            if b == "8K" and i in rej:
                resp, verdict, raw, error = None, None, None, D.REJECTION_ERROR
            elif status.get(i) == "failed":
                resp, verdict, raw = None, None, None
                error = "generation failed: CUDA out of memory during decoding" if m not in D.PROPRIETARY \
                    else "generation failed: upstream timeout after 3 retries"
            elif status.get(i) == "ungraded":
                verdict = None
                raw = "The response partially matches the reference but"
            rows.append({
                "item_id": it["item_id"], "question_id": q["question_id"], "context_length": b,
                "family_id": q["family_id"], "evidence_type": q["evidence_type"],
                "memory_operation": q["memory_operation"], "subtype": q["subtype"],
                "question_text": q["question_text"], "expected_response": q["expected_response"],
                "gold_json": q["gold_json"], "answer_type": q["answer_type"],
                "answer_normalization": q["answer_normalization"],
                "session_count": it["session_count"], "evidence_session_count": it["evidence_session_count"],
                "samekey_haystack_session_count": it["samekey_haystack_session_count"],
                "model": m, "allow_abstention": True, "system_prompt_delivery": delivery,
                "n_audio_clips": it["n_audio_clips"], "response": resp, "verdict": verdict,
                "judge": JUDGE, "judge_raw": raw, "error": error, "synthetic": True,
            })
    schema = {"verdict": pl.Boolean, "response": pl.Utf8, "judge_raw": pl.Utf8, "error": pl.Utf8}
    return pl.DataFrame(rows, schema_overrides=schema, infer_schema_length=None).select(PRED_FIELDS)


# --- writing -----------------------------------------------------------------------------
def _write_jsonl_gz(path: pathlib.Path, df: pl.DataFrame) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    cols = df.columns
    for row in df.iter_rows():
        obj = {}
        for k, v in zip(cols, row):
            if k == "error" and v is None:
                continue
            obj[k] = v
        obj["synthetic"] = True
        buf.write(json.dumps(obj, ensure_ascii=False))
        buf.write("\n")
    with open(path, "wb") as fh:
        with gzip.GzipFile(filename="", mode="wb", fileobj=fh, mtime=0, compresslevel=9) as gz:
            gz.write(buf.getvalue().encode("utf-8"))


def _write_predictions(root: pathlib.Path, preds: pl.DataFrame) -> None:
    for (m, b), part in preds.group_by(["model", "context_length"], maintain_order=True):
        _write_jsonl_gz(root / D.slug(m) / f"predictions_{b.lower()}.jsonl.gz", part)


def load_counts() -> dict:
    return {"k": read_counts(), "runs": set(D.runs())}


def build(seed: int = DEFAULT_SEED) -> dict:
    """All frames of the release (nothing written)."""
    rngs = {k: np.random.default_rng([seed, i]) for i, k in enumerate(
        ["questions", "verdicts", "predictions", "attribution", "judge2", "ablation"])}
    questions = build_questions(rngs["questions"])
    items = build_items(questions)
    verdicts, rejected = assign_verdicts(questions, load_counts(), rngs["verdicts"])
    preds = build_predictions(questions, items, verdicts, rejected, rngs["predictions"])
    return {"questions": questions, "items": items, "preds": preds, "models": models_frame(),
            "rngs": rngs, "seed": seed}


README = """# SYNTHETIC VoxMem release — not real model output

**Every file in this directory is synthetic.** It was generated by
`voxmem_analysis.synth.write_release(out_dir, seed={seed})` (`voxmem-analysis synth --out DIR
--seed {seed}`). No model was run, no audio was heard and no judge was called: the
responses are templates and the verdicts were constructed so that the paper's scoring
definitions, applied to them, give back the VoxMem paper's published numbers (Tables 2,
13, 15-18 and 20, Figures 5-8 and 10, Sections 3.3, 4.2-4.4, Appendices C.5 and D.5: all
436 numbers of `data/paper/published.csv`) within the tolerances of that file. Where the
paper's own numbers cannot all hold at once (e.g. Table 2's speech-semantics transcript-only
71.0 against its All row), the release follows the totals and says so in the calibration
report. Everything else (per-model values the paper does not print, item-level patterns,
response texts, audit records, history composition) is invented.

Use it as the workbook's demo and test oracle; replace it with your own harness output
via `--data DIR`. Every prediction line carries `"synthetic": true` and `release.json`
has `"synthetic": true`, so tables and figures made from it are labelled SYNTHETIC DATA.

Contents: `predictions/<model>/predictions_<8k|16k|32k|64k>.jsonl.gz` (harness format,
15 models at 8K-32K, the ten 64K models at 64K), `items.csv` (item metadata, 3,196
items), `models.csv` (paper Table 12/14), `judge2/` (the 8K predictions re-scored by a
second judge), `ablation/` (full-audio and transcript-only runs of one model, 669 questions
at 8K), `attribution/` (audit records of the 64K error attribution) and `release.json`
(unless `write_release(..., parts=...)` left some out: then `release.json` lists them).
`voxmem-analysis synth --check` prints the calibration report.
"""


#: Auxiliary parts of the release, each made by its own module: part -> (module, function).
PARTS: dict[str, tuple[str, str]] = {
    "attribution": ("attribution", "make_attribution"),
    "judge2": ("judges", "make_judge2"),
    "ablation": ("ablation", "make_ablation"),
}


def _part(name: str):
    """The generator function of an auxiliary part (an import error or a missing function propagates)."""
    import importlib

    module, func = PARTS[name]
    mod = importlib.import_module(f"{__package__}.{module}")
    try:
        return getattr(mod, func)
    except AttributeError:
        raise AttributeError(f"synth part {name!r}: {mod.__name__} has no {func}()") from None


def write_release(out_dir, seed: int = DEFAULT_SEED, *, parts=tuple(PARTS)) -> pathlib.Path:
    """Write the complete synthetic release into ``out_dir`` (replaced if it exists).

    Parameters
    ----------
    out_dir : path
    seed : int
    parts : iterable of str
        Auxiliary parts to generate, of :data:`PARTS` (default: all of them).  Leaving one out is
        a development aid (e.g. a release without ``attribution/`` to exercise that code path);
        the omitted parts are then listed under ``parts_omitted`` in ``release.json``.  Each part
        draws from its own random stream, so omitting one leaves the others unchanged.

    Raises
    ------
    Exception
        Whatever a requested part's generator raises: a release silently missing a part is
        worse than an error.  Every part is generated before anything is written, so a failing
        generator leaves ``out_dir`` untouched.
    """
    parts = tuple(dict.fromkeys((parts,) if isinstance(parts, str) else parts))
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        raise InputError(f"unknown synth part(s) {', '.join(map(repr, unknown))}; known: {', '.join(PARTS)}",
                         "parts")
    out = pathlib.Path(out_dir)
    fr = build(seed)
    items, preds, models, rngs = fr["items"], fr["preds"], fr["models"], fr["rngs"]
    # auxiliary parts, all generated before anything is written (attribution, then the second
    # judge, which re-scores the predictions as attribution left them)
    records = j2 = ab = None
    if "attribution" in parts:
        preds, records = _part("attribution")(preds, items, models, rngs["attribution"])
    if "judge2" in parts:
        res = _part("judge2")(preds, models, rngs["judge2"])
        # (preds_updated, judge2_frame): some 8K AR responses are rewritten for the second judge
        preds, j2 = res if isinstance(res, tuple) else (preds, res)
    if "ablation" in parts:
        ab = _part("ablation")(items, rngs["ablation"])
    if out.exists():
        for sub in ("predictions", *PARTS):
            shutil.rmtree(out / sub, ignore_errors=True)
    out.mkdir(parents=True, exist_ok=True)
    _write_predictions(out / "predictions", preds)
    items.write_csv(out / "items.csv")
    models.to_csv(out / "models.csv", index=False, lineterminator="\n")
    if records is not None:
        (out / "attribution").mkdir(parents=True, exist_ok=True)
        with open(out / "attribution" / "audit_64k.jsonl", "w", encoding="utf-8", newline="\n") as fh:
            for r in records:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    if j2 is not None:
        for m, part in j2.group_by("model", maintain_order=True):
            name = m[0] if isinstance(m, tuple) else m
            _write_jsonl_gz(out / "judge2" / D.slug(name) / "predictions_8k.jsonl.gz", part)
    if ab is not None:
        for (cond, m), part in ab.group_by(["input_condition", "model"], maintain_order=True):
            _write_jsonl_gz(out / "ablation" / cond / D.slug(m) / "predictions_8k.jsonl.gz", part)
    meta = {
        "name": "voxmem-synthetic",
        "synthetic": True,
        "description": "SYNTHETIC release generated by voxmem_analysis.synth; calibrated to the VoxMem "
                       "paper's published numbers; not real model output.",
        "seed": seed,
        "benchmark_version": BENCHMARK_VERSION,
        "judge": JUDGE,
        "generator": "voxmem_analysis.synth.write_release",
    }
    omitted = [p for p in PARTS if p not in parts]
    if omitted:
        meta["parts_omitted"] = omitted
    (out / "release.json").write_text(json.dumps(meta, indent=2) + "\n")
    (out / "README.md").write_text(README.format(seed=seed))
    return out
