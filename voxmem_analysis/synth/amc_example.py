"""The Audio MultiChallenge example ``data/examples/amc_run/`` (SYNTHETIC): judged runs as users have them.

It imitates what someone evaluating models on Audio MultiChallenge holds: the benchmark's task
table as exported from the ``ScaleAI/audiomc`` test split (``id``, ``axis`` written
``INFERENCE_MEMORY`` ..., ``rubric`` as a JSON list in a text, user transcripts; audio columns
dropped) -- as Parquet *and* JSON Lines -- and one judged results file per system, one JSON line per
task, as an evaluation pipeline writes the dataset card's rubric judge output
(``rubric_results: [{"rubric_item", "criteria_met", "explanation"}]``, ``pass``, ``pred_error``,
``model_response``), listed in ``manifest.csv``.  Nothing here is real: tasks, rubric items,
responses and verdicts are drawn at random (seed :data:`SEED`), every results line says
``"synthetic": true``.

Three systems over :data:`N_PER_AXIS` tasks per axis: ``synth-e2e`` (Audio output), ``synth-e2e``
(Text output, its file gzipped) and ``synth-cascade`` (Text output); the Text run of ``synth-e2e``
is graded again by a second judge (``synthetic-judge-2``, the same responses) for ``judges``.  Two
things a reader must say, and does, as warnings: ``synth-cascade``'s pipeline writes
``criteria_met`` as the text ``"True"``/``"False"``, and two tasks of ``synth-e2e`` (Audio) have a
``pred_error`` (counted as failed).

``python -m voxmem_analysis.synth.amc_example [OUT]`` writes it; the same files every time
(``tests/test_amc_runs.py`` regenerates the folder and compares it with the shipped one).
"""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

import numpy as np

__all__ = ["SEED", "N_PER_AXIS", "SYSTEMS", "write_amc_example", "DEFAULT_OUT"]

SEED = 20260702
N_PER_AXIS = 12
AXES = ("INFERENCE_MEMORY", "INSTRUCTION_RETENTION", "SELF_COHERENCE", "VOICE_EDITING")
#: (system, output modality, file name, judge, P(rubric item met) per axis in AXES order)
SYSTEMS = (
    ("synth-e2e", "Audio", "synth-e2e-audio.jsonl", "synthetic-judge-1", (0.70, 0.80, 0.85, 0.60)),
    ("synth-e2e", "Text", "synth-e2e-text.jsonl.gz", "synthetic-judge-1", (0.80, 0.85, 0.90, 0.70)),
    ("synth-cascade", "Text", "synth-cascade-text.jsonl", "synthetic-judge-1", (0.60, 0.90, 0.85, 0.75)),
)
JUDGE2 = ("synth-e2e", "Text", "synth-e2e-text.judge2.jsonl", "synthetic-judge-2")
#: Tasks of synth-e2e (Audio) with no response (pred_error), by position in the task table.
PRED_ERRORS = (5, 30)
_REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = _REPO / "data" / "examples" / "amc_run"
_WORDS = ("the", "blue", "recipe", "meeting", "Tuesday", "garden", "train", "budget", "sister", "song", "coffee",
          "hotel", "list", "rain", "window", "dog", "report", "bike", "lunch", "museum")
_ITEMS = ("Recalls that {w}", "Avoids mentioning {w}", "Keeps the {w} constraint", "States the final {w}",
          "Uses the corrected {w}", "Refers to the {w} heard earlier")

_README = """# `amc_run/` — Audio MultiChallenge runs as users have them (SYNTHETIC, not real model output)

Everything here was drawn at random by `voxmem_analysis/synth/amc_example.py` (seed {seed}). The
tasks, rubric items, responses and verdicts are made up; no model was run and no judge was called.
The files exist so that the Audio MultiChallenge commands have something to run on, in the two
shapes real users have. Do not cite any number computed from them.

| file | what |
| --- | --- |
| `tasks.parquet`, `tasks.jsonl` | The task table as exported from the `ScaleAI/audiomc` test split (the same {n} tasks in both): `id`, `axis` (`INFERENCE_MEMORY`, `INSTRUCTION_RETENTION`, `SELF_COHERENCE`, `VOICE_EDITING`), `rubric` (the rubric items as a JSON list in a text), `user_turn_<k>_transcript`; the audio columns dropped. |
| `results/*.jsonl[.gz]` | Judged results, one JSON line per task as an evaluation pipeline writes the dataset card's rubric judge output: `id`, `axis`, `rubric_results` (`rubric_item`, `criteria_met`, `explanation`, in the task's rubric order), `pass`, `pred_error`, `model_response`, `"synthetic": true`. |
| `manifest.csv` | `path,system,output_modality,judge`: `synth-e2e` (Audio and Text output), `synth-cascade` (Text), all by `synthetic-judge-1`; `synth-e2e` (Text) graded again by `synthetic-judge-2`. |

On purpose, so that the checks show up (warnings; nothing is lost): `synth-cascade`'s pipeline writes
`criteria_met` as the text `"True"`/`"False"` (read as booleans, said once per file), and two tasks of
`synth-e2e` (Audio) have a `pred_error` (no response: counted as failed, with no rubric item met).

```sh
voxmem-analysis validate --manifest data/examples/amc_run/manifest.csv --tasks data/examples/amc_run/tasks.parquet
voxmem-analysis slice    --manifest data/examples/amc_run/manifest.csv --tasks data/examples/amc_run/tasks.parquet --by system,axis
voxmem-analysis compare  --manifest data/examples/amc_run/manifest.csv --tasks data/examples/amc_run/tasks.jsonl
voxmem-analysis judges   --manifest data/examples/amc_run/manifest.csv --tasks data/examples/amc_run/tasks.jsonl
voxmem-analysis table amc_table2 --manifest data/examples/amc_run/manifest.csv --tasks data/examples/amc_run/tasks.parquet --format md
voxmem-analysis reproduce --manifest data/examples/amc_run/manifest.csv --tasks data/examples/amc_run/tasks.parquet --out amc_report
```
"""


def _tasks(rng: np.random.Generator) -> list[dict]:
    tasks = []
    for axis in AXES:
        for _ in range(N_PER_AXIS):
            tid = "".join(rng.choice(list("abcdefghijklmnopqrstuvwxyz0123456789"), 16))
            items = [str(rng.choice(_ITEMS)).format(w=" ".join(rng.choice(_WORDS, 2))) for _ in range(int(rng.integers(2, 6)))]
            n_turns = int(rng.integers(3, 7))
            rec = {"id": tid, "axis": axis}
            for k in range(1, 8):
                rec[f"user_turn_{k}_transcript"] = (" ".join(rng.choice(_WORDS, 6)).capitalize() + "."
                                                    if k <= n_turns else None)
            rec["rubric"] = json.dumps(items)
            tasks.append(rec)
    return tasks


def _results(rng: np.random.Generator, tasks: list[dict], system: tuple, base=None, agree: float = 1.0) -> list[dict]:
    """One results line per task; with ``base`` (another judge's lines), the same responses re-graded,
    each verdict kept with probability ``agree``."""
    name, modality, _, _, p = system
    lines = []
    for i, task in enumerate(tasks):
        items = json.loads(task["rubric"])
        if base is not None:
            mets = [m if rng.random() < agree else not m for m in (r["criteria_met"] for r in base[i]["rubric_results"])]
            response = base[i]["model_response"]
        else:
            mets = [bool(rng.random() < p[AXES.index(task["axis"])]) for _ in items]
            response = " ".join(rng.choice(_WORDS, 8)).capitalize() + "."
        error = "generation failed: timeout" if (name, modality) == ("synth-e2e", "Audio") and i in PRED_ERRORS else None
        if error:
            lines.append({"id": task["id"], "axis": task["axis"], "model_response": None, "rubric_results": [],
                          "pass": False, "pred_error": error, "synthetic": True})
            continue
        text_verdicts = name == "synth-cascade"
        results = [{"rubric_item": it, "criteria_met": (str(m) if text_verdicts else m),
                    "explanation": "SYNTHETIC: drawn at random."} for it, m in zip(items, mets)]
        lines.append({"id": task["id"], "axis": task["axis"], "model_response": response, "rubric_results": results,
                      "pass": all(mets), "pred_error": None, "synthetic": True})
    return lines


def _write_lines(path: Path, lines: list[dict]) -> None:
    data = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines).encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if path.name.endswith(".gz") else data)


def write_amc_example(out=DEFAULT_OUT) -> Path:
    """Write the example (see the module docstring) into ``out``; returns ``out``."""
    import polars as pl

    out = Path(out)
    (out / "results").mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    tasks = _tasks(rng)
    _write_lines(out / "tasks.jsonl", tasks)
    pl.DataFrame(tasks).write_parquet(out / "tasks.parquet", statistics=False)
    manifest = ["path,system,output_modality,judge"]
    first = {}
    for system in SYSTEMS:
        lines = _results(rng, tasks, system)
        first[system[:2]] = lines
        _write_lines(out / "results" / system[2], lines)
        manifest.append(f"results/{system[2]},{system[0]},{system[1]},{system[3]}")
    _write_lines(out / "results" / JUDGE2[2], _results(rng, tasks, (*JUDGE2, None), base=first[JUDGE2[:2]], agree=0.9))
    manifest.append(f"results/{JUDGE2[2]},{JUDGE2[0]},{JUDGE2[1]},{JUDGE2[3]}")
    (out / "manifest.csv").write_text("\n".join(manifest) + "\n", encoding="utf-8")
    (out / "README.md").write_text(_README.format(seed=SEED, n=len(tasks)), encoding="utf-8")
    return out


if __name__ == "__main__":
    print(write_amc_example(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT))
