"""The calibrated correct counts of the synthetic release, stored as data (``counts.json``).

``counts.json`` holds one row per (model, budget, cell): ``[model, budget, evidence_type,
operation, source_operation, correct]``, solved once by :mod:`voxmem_analysis.synth.calibrate`
against the paper's numbers (``python -m voxmem_analysis.synth.calibrate`` rewrites it) and
read by the generators (:mod:`~voxmem_analysis.synth.release`, :mod:`~voxmem_analysis.synth.judges`,
:mod:`~voxmem_analysis.synth.attribution`).  Generated; do not edit by hand.
"""
from __future__ import annotations

import json
import pathlib

__all__ = ["COUNTS_PATH", "read_counts", "write_counts"]

#: The data file shipped with the package (``[tool.setuptools.package-data]``).
COUNTS_PATH = pathlib.Path(__file__).with_name("counts.json")

_COMMENT = "correct counts per (model, budget, cell) solved by calibrate.py; generated, do not edit"
_FIELDS = ["model", "budget", "evidence_type", "operation", "source_operation", "correct"]


def read_counts(path: str | pathlib.Path | None = None) -> dict[tuple, int]:
    """``{(model, budget, (evidence_type, operation, source_operation)): correct}`` in file order."""
    doc = json.loads(pathlib.Path(path or COUNTS_PATH).read_text(encoding="utf-8"))
    if doc.get("fields") != _FIELDS:
        raise ValueError(f"{path or COUNTS_PATH}: expected fields {_FIELDS}, got {doc.get('fields')}")
    return {(m, b, (ev, op, src)): int(k) for m, b, ev, op, src, k in doc["rows"]}


def write_counts(counts: dict[tuple, int], path: str | pathlib.Path | None = None) -> None:
    """Write ``counts`` (keys as :func:`read_counts` returns them) in the given order, one row a line."""
    rows = [json.dumps([m, b, *cell, int(k)]) for (m, b, cell), k in counts.items()]
    text = ("{\n" f'  "comment": {json.dumps(_COMMENT)},\n' f'  "fields": {json.dumps(_FIELDS)},\n'
            '  "rows": [\n    ' + ",\n    ".join(rows) + "\n  ]\n}\n")
    pathlib.Path(path or COUNTS_PATH).write_text(text, encoding="utf-8")
