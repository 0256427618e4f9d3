"""Release shapes for the figure tests: small SYNTHETIC releases built from the shipped ones.

Every figure must show all its data on any release, not only on the paper's.  Each shape here
is a release folder written by filtering and rewriting the files of a shipped SYNTHETIC release
(never by hand), fast enough for ``make test``:

VoxMem (from ``data/synthetic``; ``paper`` and ``my_eval`` are the shipped folders themselves)
    ``one_model``    one model at the four budgets, every optional part (judge2, ablation, attribution)
    ``one_budget``   three models at 32K only
    ``improves``     two models, one of which gets *better* with a longer history (its outcomes at
                     8K/16K/32K/64K are the source model's at 64K/32K/16K/8K)
    ``extremes``     two models, one correct on every speech-semantics item and wrong on every
                     environmental-sound item (100 % and 0 % cells at every budget)
    ``long_names``   three models with names of 60+ characters, every optional part
    ``two_models``   two models at 8K and 64K, judge2 and ablation

LongMemEval (from ``data/examples/longmemeval``): ``lme_example`` (the shipped one),
``lme_one_budget``, ``lme_long_names``, ``lme_extremes`` (a system right on
every question of some types and wrong on every question of others).

Audio MultiChallenge (from ``data/synthetic-amc``): ``amc_paper`` (the shipped one),
``amc_long_names`` (four systems, all but the two end-to-end references of Table 5 renamed to 60+
characters), ``amc_extremes`` (the same four systems; one passes every rubric item, one fails every one).

Every written release says ``"synthetic": true`` in ``release.json`` (and every prediction line
keeps its own ``"synthetic": true``): figures made from them carry the SYNTHETIC DATA stamp.

What each shape exposed when the figure test was first run (issue 23; all fixed):

* ``paper``: the judges scatter's x label touched the SYNTHETIC stamp; the numbers of AMC
  Figure 9 overprinted each other (5/13, 7/13, 9/14, 10/15, 16/18).
* ``my_eval``: the odds-ratio figure cut every interval above 1 (its x axis stopped at 1.03)
  and hid the point at OR 1.078; its fixed ticks overprinted (0.7/0.75/.../1).  (Its session
  shares over the known roles only -- 44 % same-key at 32K -- are a number, checked in
  ``test_figure_layout.py``.)
* ``one_model``: the same odds-ratio cut and overprint; the ablation's drop label ran into its legend.
* ``one_budget``: Figure 8 and the explorer's figure by budget were drawn as exact copies of
  Figure 5 and of the explorer's figure (now skipped, with the reason printed).
* ``improves``: every odds ratio above 1 was outside the axis (7 points, 5 intervals).
* ``extremes``: an odds-ratio interval end above 1.03 was cut and the ticks overprinted; the
  environmental-sound row, which cannot be estimated (a model at 0 % at every budget), read
  "nan [nan, nan]".
* ``long_names``: Table 18's two x labels overprinted (the long row labels squeezed the panels);
  the ablation title ran into the next panel's; names pushed figures to twice their width.
* ``two_models``: the odds-ratio interval above 1 was cut.
* ``lme_long_names``: the comparison matrix's rotated names overprinted each other, the cells
  and the note under the figure.
* ``amc_long_names``: AMC Figure 9's key and numbers ran into the correlation note.
* ``lme_example``, ``lme_one_budget``, ``lme_extremes``, ``amc_paper`` (but Figure 9),
  ``amc_extremes``: nothing.
"""
from __future__ import annotations

import csv
import gzip
import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SYNTHETIC = REPO / "data" / "synthetic"
MY_EVAL = REPO / "data" / "examples" / "my_eval"
LME = REPO / "data" / "examples" / "longmemeval"
AMC = REPO / "data" / "synthetic-amc"
BUDGETS = ("8K", "16K", "32K", "64K")

LONG = {
    "Gemini-3.1-Pro": "Gemini-3.1-Pro-Preview-native-audio-dialog-long-context-2026-01-15-experimental",
    "Qwen3-Omni-30B-A3B": "Qwen3-Omni-30B-A3B-Instruct-with-extended-audio-memory-adapter-v2-rc1",
    "Audio-Flamingo-Next": "Audio-Flamingo-Next-8B-speech-memory-finetune-checkpoint-step-120000-final",
}


@dataclass(frozen=True)
class Shape:
    """How a VoxMem shape is cut from ``data/synthetic``."""

    description: str
    models: dict                      # source model -> name in the shape (order kept)
    budgets: tuple = BUDGETS
    every: int = 3                    # keep the families whose number is a multiple of this (1 in 3: 266 questions)
    parts: tuple = ()                 # optional parts copied: judge2, ablation, attribution
    rewrite: dict = field(default_factory=dict)   # name in the shape -> "reverse" | "extremes"
    items: bool = True                # write items.csv and models.csv


SHAPES: dict[str, Shape] = {
    "one_model": Shape("one model at the four budgets, with judge2, ablation and attribution",
                       {"Qwen3-Omni-30B-A3B": "Qwen3-Omni-30B-A3B"}, every=4,
                       parts=("judge2", "ablation", "attribution")),
    "one_budget": Shape("three models at 32K only",
                        {"Gemini-2.5-Pro": "Gemini-2.5-Pro", "Gemma-4-E4B-it": "Gemma-4-E4B-it",
                         "Qwen3-Omni-30B-A3B": "Qwen3-Omni-30B-A3B"}, budgets=("32K",)),
    "improves": Shape("two models; Gemini-3.1-Pro gets better with a longer history (outcomes reversed across budgets)",
                      {"Gemini-3.1-Pro": "Gemini-3.1-Pro", "Gemma-4-E4B-it": "Gemma-4-E4B-it"}, every=4,
                      rewrite={"Gemini-3.1-Pro": "reverse"}),
    "extremes": Shape("two models; Ceiling-Floor is right on every speech-semantics item and wrong on every "
                      "environmental-sound item (100 % and 0 % cells)",
                      {"Gemini-3.8-Flash": "Ceiling-Floor", "Baichuan-Audio-7B": "Baichuan-Audio-7B"},
                      every=4, rewrite={"Ceiling-Floor": "extremes"}),
    "long_names": Shape("three models with names of 60+ characters, every optional part",
                        dict(LONG), every=4, parts=("judge2", "ablation", "attribution")),
    "two_models": Shape("two models at 8K and 64K, with judge2 and ablation",
                        {"Gemini-3.1-Pro": "Gemini-3.1-Pro", "Baichuan-Omni-1.5-7B": "Baichuan-Omni-1.5-7B"},
                        budgets=("8K", "64K"), parts=("judge2", "ablation")),
}
#: Every VoxMem shape, the shipped releases first.
VOXMEM = ("paper", "my_eval", *SHAPES)
LONGMEMEVAL = ("lme_example", "lme_one_budget", "lme_long_names", "lme_extremes")
AUDIO_MULTICHALLENGE = ("amc_paper", "amc_long_names", "amc_extremes")


def build(name: str, root) -> Path:
    """The release folder of shape ``name``, written below ``root`` (the shipped folder for
    ``paper``, ``my_eval``, ``lme_example`` and ``amc_paper``).  For a LongMemEval shape the folder
    holds ``manifest.csv`` and ``questions.json``."""
    shipped = {"paper": SYNTHETIC, "my_eval": MY_EVAL, "lme_example": LME, "amc_paper": AMC}
    if name in shipped:
        return shipped[name]
    out = Path(root) / name
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if name in SHAPES:
        _voxmem(SHAPES[name], out)
    elif name in LONGMEMEVAL:
        _longmemeval(name, out)
    elif name in AUDIO_MULTICHALLENGE:
        _amc(name, out)
    else:
        raise KeyError(f"unknown shape {name!r}")
    return out


def _meta(out: Path, name: str, description: str, **extra) -> None:
    meta = {"name": f"shape-{name}", "synthetic": True,
            "description": f"SYNTHETIC test shape ({description}), cut from a shipped synthetic release; "
                           "not real model output.", **extra}
    (out / "release.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")


# ----------------------------------------------------------------------------- VoxMem
def _read_lines(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _family_kept(family_id: str, every: int) -> bool:
    return int(family_id.rsplit("_", 1)[1]) % every == 0


def _files_by_model(folder: Path) -> dict[str, list[Path]]:
    """``{model: [files]}`` of a predictions-like folder (model named on the first line)."""
    out: dict[str, list[Path]] = {}
    for path in sorted(folder.rglob("*.jsonl*")):
        first = _read_lines(path)[:1]
        if first:
            out.setdefault(first[0]["model"], []).append(path)
    return out


def _right(rec: dict) -> dict:
    rec.pop("error", None)
    rec["response"] = rec.get("response") or "the answer"
    rec.update(verdict=True, judge_raw='{"verdict": "correct"}')
    return rec


def _wrong(rec: dict) -> dict:
    rec.update(verdict=False, judge_raw='{"verdict": "incorrect"}')
    return rec


_OUTCOME = ("response", "verdict", "judge_raw", "error", "provider_rejected")


def _reverse(rows: list[dict], budgets: tuple) -> list[dict]:
    """Each prediction gets the outcome of the same question at the mirrored budget (8K <-> 64K, 16K <-> 32K)."""
    mirror = dict(zip(budgets, reversed(budgets)))
    by_key = {(r["question_id"], r["context_length"].upper()): r for r in rows}
    out = []
    for r in rows:
        src = by_key.get((r["question_id"], mirror[r["context_length"].upper()]), r)
        new = {k: v for k, v in r.items() if k not in _OUTCOME}
        new.update({k: src[k] for k in _OUTCOME if k in src})
        out.append(new)
    return out


def _extremes(rows: list[dict]) -> list[dict]:
    return [_right(r) if r["evidence_type"] == "speech_semantics" else
            _wrong(r) if r["evidence_type"] == "environmental_sound" else r for r in rows]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def _copy_predictions(shape: Shape, src: Path, dst: Path, budgets: tuple) -> None:
    for model, files in _files_by_model(src).items():
        if model not in shape.models:
            continue
        name = shape.models[model]
        rows = [r for f in files for r in _read_lines(f)
                if r["context_length"].upper() in budgets and _family_kept(r["family_id"], shape.every)]
        how = shape.rewrite.get(name)
        rows = _reverse(rows, budgets) if how == "reverse" else _extremes(rows) if how == "extremes" else rows
        for r in rows:
            r["model"] = name
        for b in budgets:
            part = [r for r in rows if r["context_length"].upper() == b]
            if part:
                _write_jsonl(dst / _slug(name) / f"predictions_{b.lower()}.jsonl", part)


def _copy_csv(src: Path, dst: Path, keep, rename=None) -> None:
    with open(src, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh)
        rows = [rename(r) if rename else r for r in reader if keep(r)]
        fields = reader.fieldnames
    with open(dst, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)


def _voxmem(shape: Shape, out: Path) -> None:
    _meta(out, out.name, shape.description)
    _copy_predictions(shape, SYNTHETIC / "predictions", out / "predictions", shape.budgets)
    if shape.items:
        _copy_csv(SYNTHETIC / "items.csv", out / "items.csv",
                  lambda r: r["context_length"].upper() in shape.budgets and _family_kept(r["family_id"], shape.every))
        _copy_csv(SYNTHETIC / "models.csv", out / "models.csv", lambda r: r["model"] in shape.models,
                  lambda r: {**r, "model": shape.models[r["model"]],
                             "in_64k_set": r["in_64k_set"] if "64K" in shape.budgets else "false"})
    if "judge2" in shape.parts and "8K" in shape.budgets:
        _copy_predictions(shape, SYNTHETIC / "judge2", out / "judge2", ("8K",))
    if "ablation" in shape.parts and "8K" in shape.budgets:
        _ablation(shape, out)
    if "attribution" in shape.parts and "64K" in shape.budgets:
        keep = {r["item_id"] for r in _read_lines(next((SYNTHETIC / "predictions").rglob("predictions_64k*")))
                if _family_kept(r["family_id"], shape.every)}
        rows = [{**r, "model": shape.models[r["model"]]} for r in _read_lines(SYNTHETIC / "attribution" / "audit_64k.jsonl")
                if r["model"] in shape.models and r["item_id"] in keep]
        _write_jsonl(out / "attribution" / "audit_64k.jsonl", rows)


def _ablation(shape: Shape, out: Path) -> None:
    """The ablation model, renamed to the shape's first model name when the shape has long names."""
    for cond in ("full_audio", "transcript_only"):
        for path in sorted((SYNTHETIC / "ablation" / cond).rglob("*.jsonl*")):
            rows = [r for r in _read_lines(path) if _family_kept(r["family_id"], shape.every)]
            if shape.models == LONG:
                for r in rows:
                    r["model"] = "Gemini-3.7-Flash-native-audio-dialog-preview-with-transcript-ablation-harness"
            if rows:
                _write_jsonl(out / "ablation" / cond / _slug(rows[0]["model"]) / "predictions_8k.jsonl", rows)


# ----------------------------------------------------------------------------- LongMemEval
_LME_LONG = {"synth-full-context": "full-context-baseline-gpt-4o-2024-08-06-with-128k-window-no-retrieval-v3",
             "synth-rag": "retrieval-augmented-generation-bm25-top10-sessions-with-reranker-and-time-aware-index",
             "synth-memory-agent": "memory-agent-with-episodic-and-semantic-stores-reflection-every-session"}


def _longmemeval(name: str, out: Path) -> None:
    shutil.copy(LME / "questions.json", out / "questions.json")
    types = {q["question_id"]: q["question_type"] for q in json.loads((LME / "questions.json").read_text())}
    with open(LME / "manifest.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    if name == "lme_one_budget":
        rows = [r for r in rows if r["budget"] == "32k"]
    elif name == "lme_long_names":
        rows = [{**r, "system": _LME_LONG[r["system"]]} for r in rows]
    (out / "verdicts").mkdir()
    for r in rows:
        lines = _read_lines(LME / r["path"])
        if name == "lme_extremes" and r["system"] == "synth-rag":
            for line in lines:   # right on single-session questions, wrong on multi-session ones
                t = types.get(line["question_id"], "")
                if t.startswith("single-session"):
                    line["autoeval_label"]["label"] = True
                elif t == "multi-session":
                    line["autoeval_label"]["label"] = False
        _write_jsonl(out / r["path"], lines)
    with open(out / "manifest.csv", "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=["path", "system", "budget", "judge"], lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    _meta(out, name, "LongMemEval verdicts")


# ----------------------------------------------------------------------------- Audio MultiChallenge
_AMC_KEEP = ("Gemini 3 Pro Preview (Thinking)", "GPT 4o Audio Preview", "GPT Realtime", "Gemini 2.5 Flash")


def _amc(name: str, out: Path) -> None:
    meta = json.loads((AMC / "release.json").read_text(encoding="utf-8"))
    for f in ("tasks.csv", "rubrics.csv", "human_labels.csv", "judge_labels.csv"):
        shutil.copy(AMC / f, out / f)
    if name == "amc_long_names":
        def rename(r):
            m = r["model"]
            return r if m in ("GPT 4o Audio Preview", "GPT Realtime") else {
                **r, "model": f"{m} with an extended spoken-dialogue memory adapter, release candidate 2026-02"}
    else:   # amc_extremes
        def rename(r):
            if r["model"] == "Gemini 3 Pro Preview (Thinking)" and "passed" in r:
                return {**r, "passed": "true"}
            if r["model"] == "Gemini 2.5 Flash" and "passed" in r:
                return {**r, "passed": "false"}
            return r

    def keep(r):
        return r.get("model") in _AMC_KEEP

    for part in ("verdicts", "tts", "cascaded"):
        (out / part).mkdir()
        for path in sorted((AMC / part).glob("*.csv")):
            with open(path, encoding="utf-8", newline="") as fh:
                first = next(csv.DictReader(fh), None)
            if first is not None and (part == "cascaded" or keep(first)):
                _copy_csv(path, out / part / path.name, keep if part != "cascaded" else (lambda r: True), rename)
    _copy_csv(AMC / "response_lengths.csv", out / "response_lengths.csv", keep, rename)
    _meta(out, name, "Audio MultiChallenge", benchmark=meta["benchmark"])
