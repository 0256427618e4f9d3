"""The tiny example run folder ``data/examples/my_eval/`` (SYNTHETIC), derived from ``data/synthetic``.

It stands for what a user's own evaluation run looks like: **one** model, run at **8K and
32K** only, harness files as ``run_voxmembench.py`` + ``score_voxmembench.py`` write them
(plain ``.jsonl``), next to the item table of the public dataset (``items.csv``, the rows of those
items: it gives each refusal item its source operation, ``paired_question_id``), no
``models.csv``, no optional parts.  It is made deterministically -- no randomness at all -- from
the shipped synthetic release:

* the predictions of :data:`SOURCE_MODEL` at the budgets :data:`BUDGETS`;
* of the questions whose number is a multiple of :data:`EVERY` (``q_00008``, ``q_00016`` ...),
  plus every refusal variant in those questions' families, so answerable items and their
  answer-refusal (AR) items stay together;
* renamed to the model :data:`EXAMPLE_MODEL`; every line keeps ``"synthetic": true``;
* ``items.csv``: the lines of the source's ``items.csv`` for exactly those items, unchanged.

Regenerate it with :func:`write_example_run`
(``python -m voxmem_analysis.synth.example_run [OUT]``).  A test regenerates the folder and
compares it byte for byte with the shipped one.
"""
from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path

__all__ = ["SOURCE_MODEL", "EXAMPLE_MODEL", "BUDGETS", "EVERY", "write_example_run", "example_lines", "example_items"]

SOURCE_MODEL = "Gemini-2.5-Pro"
EXAMPLE_MODEL = "MyModel-v1"
BUDGETS = ("8K", "32K")
EVERY = 8
_REPO = Path(__file__).resolve().parents[2]
DEFAULT_SOURCE = _REPO / "data" / "synthetic"
DEFAULT_OUT = _REPO / "data" / "examples" / "my_eval"

_RELEASE = {
    "name": "my-eval-example",
    "synthetic": True,
    "description": (f"SYNTHETIC example of a user's own run: one model ({EXAMPLE_MODEL}) at 8K and 32K, "
                    f"every {EVERY}th question of data/synthetic ({SOURCE_MODEL}'s synthetic predictions, "
                    f"renamed); not real model output."),
    "generator": "voxmem_analysis.synth.example_run.write_example_run",
}

_README = f"""# `my_eval/` — a tiny example run (SYNTHETIC, not real model output)

This folder imitates what **your own evaluation run** looks like: one model (`{EXAMPLE_MODEL}`)
at two context lengths (8K, 32K), written by the VoxMem harness (`run_voxmembench.py`, then
`score_voxmembench.py`) as one JSON object per line, with the benchmark's item table
(`items.csv`, one row per item, as the public dataset has it) beside it. It is **synthetic**: the
lines are {SOURCE_MODEL}'s synthetic predictions from `data/synthetic/` (every {EVERY}th question
and its refusal variants), renamed, and the item rows are those of `data/synthetic/items.csv`. No
model was run and no judge was called.

It is generated, never edited by hand:

    .venv/bin/python -m voxmem_analysis.synth.example_run data/examples/my_eval

The examples of the top-level `README.md` run on it (a test executes them), e.g.

    voxmem-analysis table table15 --data data/examples/my_eval --budget 32K --format md
    voxmem-analysis reproduce --data data/examples/my_eval --out /tmp/my_report

The formats are documented in `data/README.md`.
"""


def _keep(line: dict, families: set[str]) -> bool:
    return line.get("family_id") in families


def example_lines(source=DEFAULT_SOURCE, budget: str = "8K") -> list[str]:
    """The example's prediction lines at ``budget`` (JSON text, source order, model renamed)."""
    folder = Path(source) / "predictions"
    path = next(p for p in sorted(folder.rglob(f"predictions_{budget.lower()}.jsonl*"))
                if _first_model(p) == SOURCE_MODEL)
    rows = [json.loads(l) for l in _read(path).splitlines() if l.strip()]
    families = {r["family_id"] for r in rows
                if r.get("expected_response") == "answer" and int(r["question_id"].split("_")[1]) % EVERY == 0}
    out = []
    for r in rows:
        if _keep(r, families):
            r["model"] = EXAMPLE_MODEL
            out.append(json.dumps(r, ensure_ascii=False))
    return out


def _read(path: Path) -> str:
    if path.suffix == ".gz":
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            return fh.read()
    return path.read_text(encoding="utf-8")


def _first_model(path: Path) -> str | None:
    for line in _read(path).splitlines():
        if line.strip():
            return json.loads(line).get("model")
    return None


def example_items(source=DEFAULT_SOURCE, item_ids=None) -> str:
    """The source's ``items.csv`` restricted to ``item_ids`` (header and rows as they are, source order)."""
    import csv
    import io

    text = (Path(source) / "items.csv").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    keep = set(item_ids or ())
    out = [lines[0]]
    # the first field of each CSV record is item_id; records may span lines (quoted newlines)
    reader = csv.reader(io.StringIO(text))
    next(reader)
    start = 1
    for rec in reader:
        end = reader.line_num
        if rec and rec[0] in keep:
            out.extend(lines[start:end])
        start = end
    return "".join(out)


def write_example_run(out=DEFAULT_OUT, source=DEFAULT_SOURCE) -> Path:
    """Write the example run folder to ``out`` (created); return it."""
    out = Path(out)
    pred = out / "predictions" / EXAMPLE_MODEL.lower()
    pred.mkdir(parents=True, exist_ok=True)
    ids = []
    for b in BUDGETS:
        lines = example_lines(source, b)
        ids += [json.loads(line)["item_id"] for line in lines]
        (pred / f"predictions_{b.lower()}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (out / "items.csv").write_text(example_items(source, ids), encoding="utf-8")
    (out / "release.json").write_text(json.dumps(_RELEASE, indent=2) + "\n", encoding="utf-8")
    (out / "README.md").write_text(_README, encoding="utf-8")
    return out


if __name__ == "__main__":  # python -m voxmem_analysis.synth.example_run [OUT]
    print(write_example_run(sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT))
