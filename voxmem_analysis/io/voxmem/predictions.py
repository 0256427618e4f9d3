"""The prediction files of a release read into the verdict frame, batch by batch.  Duplicates (model, item,
budget, condition): the first copy is kept, an identical one is a warning, another an error."""
from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.io.engine import files, records
from voxmem_analysis.io.engine.rules import fact, ordered
from voxmem_analysis.io.engine.values import value_of
from voxmem_analysis.io.schema import COLUMN_NAMES
from voxmem_analysis.io.voxmem.lines import KNOWN_KEYS, SPEC, LineValues, check_lines

__all__ = ["BUDGET_DTYPE", "read_prediction_files", "extra_series"]

BUDGET_DTYPE = pl.Enum(list(tx.BUDGETS))
#: Frame columns with a fixed type; the others take the type of their values (:func:`extra_series`).
TYPES = {
    "budget": pl.Utf8, "provider_rejected": pl.Boolean, "is_ar": pl.Boolean, "verdict": pl.Boolean, "correct": pl.Boolean,
    "scored": pl.Boolean, "allow_abstention": pl.Boolean, "synthetic": pl.Boolean, "n_audio_clips": pl.Int64,
    "session_count": pl.Int64, "evidence_session_count": pl.Int64, "samekey_haystack_session_count": pl.Int64,
    "source_line": pl.Int64,
}
#: Columns holding a line's value as it is (any JSON type): ``(field, via the item table, as JSON text)``.
_AS_IS = (("answer_type", True, False), ("answer_normalization", True, False), ("judge", False, False),
          ("system_prompt_delivery", False, False), ("question_text", True, False), ("gold_json", True, True),
          ("judge_raw", False, True))
_TAIL = ("question_text", "gold_json", "judge_raw")

EMPTY_FILE = fact("empty_file", "warning", lambda r: "file holds no predictions")
DUPLICATE_IDENTICAL = fact("duplicate_identical", "warning",
                           lambda r: f"({r['model']}, {r['item_id']}) already read at {r['at']}; identical copy ignored",
                           "item_id")
DUPLICATE_CONFLICT = fact("duplicate_conflict", "error",
                          lambda r: f"({r['model']}, {r['item_id']}) read twice with different verdicts/responses "
                          f"(first at {r['at']}: verdict={r['_v0']!r}; here verdict={r['verdict']!r})", "verdict")


def extra_series(name: str, values: list) -> pl.Series:
    """The column of a field outside the schema: Boolean, Int64 (fits), Float64 (numbers), else ``str`` of
    each value (integers beyond 64 bits kept exact)."""
    kinds = {type(v) for v in values if v is not None}
    try:
        if kinds and kinds <= {bool}:
            return pl.Series(name, values, dtype=pl.Boolean)
        if kinds and kinds <= {int}:
            return pl.Series(name, values, dtype=pl.Int64)
        if kinds and kinds <= {int, float}:
            return pl.Series(name, [None if v is None else float(v) for v in values], dtype=pl.Float64)
    except (OverflowError, TypeError, ValueError, pl.exceptions.PolarsError):
        pass
    return pl.Series(name, [None if v is None else str(v) for v in values], dtype=pl.Utf8)


def file_condition(root: Path, sub: str, path: Path, condition_from_dir: bool) -> str | None:
    """Ablation condition named by the first folder below ``root/sub`` (None outside ablation runs;
    ``""`` for a file directly in ``root/sub``: its lines must name their own condition)."""
    if not condition_from_dir:
        return None
    parts = Path(files.rel(path, root / sub)).parts
    return parts[0] if len(parts) > 1 else ""


class _Reading:
    """What the batches accumulate: keyed problems, kept rows, extras, counts."""

    def __init__(self, n_files: int, items: pl.DataFrame | None):
        self.keyed: list = []
        self.parts: list[pl.DataFrame] = []
        self.extras: dict[tuple[int, int], dict] = {}
        self.stats = {"files": n_files, "files_unreadable": 0, "lines": 0, "rows": 0, "rejected_lines": 0,
                      "duplicates_identical": 0}
        self.items = items
        self.has_items = items is not None and items.height > 0

    def add(self, fi: int, line: int, phase: int, problem) -> None:
        self.keyed.append(((fi, line, phase, -2, len(self.keyed)), problem))


def read_prediction_files(root: Path, sub: str, paths: list[Path], items: pl.DataFrame | None,
                          condition_from_dir: bool, progress=None) -> tuple[pl.DataFrame, list, dict]:
    """``(frame, problems, counts)`` of the prediction files ``paths`` (already listed) below ``root/sub``."""
    state = _Reading(len(paths), items)
    tasks = [(p, files.rel(p, root), {"_cond": file_condition(root, sub, p, condition_from_dir)}) for p in paths]
    for batch in records.batches(tasks, SPEC, progress=progress):
        for f in list(batch):
            for p in f.problems:
                state.add(f.fi, -1, 0, p)
            if f.raw is None or not f.utf8:
                batch.remove(f)
                state.stats["files_unreadable"] += 1
            if f.raw is not None and not f.utf8:   # not UTF-8: that error alone, as when the text could not be decoded
                state.keyed = [kp for kp in state.keyed if kp[0][0] != f.fi]
                state.add(f.fi, -1, 0, files.not_utf8(f.path, f.rel))
        if batch:
            _read_batch(batch, state)
    frame = _drop_duplicates(_assemble(state), state)
    state.stats["rows"] = frame.height
    return frame.drop("_fi").with_columns(pl.col("budget").cast(BUDGET_DTYPE)), ordered(state.keyed), state.stats


def _jsonable(v):
    return json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v


def _read_batch(batch: list, state: _Reading) -> None:
    """Check a batch of files and keep their rows (the files' bytes are let go once they are a raw frame)."""
    raw, recs, counts = records.raw_frame(batch, SPEC)
    for f in batch:
        if not counts.get(f.fi):
            state.add(f.fi, -1, 0, EMPTY_FILE.problem(f.rel))
    batch.clear()
    state.stats["lines"] += raw.height
    kept, keyed, rejected = check_lines(raw, state.items, state.has_items)
    state.keyed += keyed
    state.stats["rejected_lines"] += rejected
    for key, rec in recs.items():
        ext = {k: _jsonable(v) for k, v in rec.items() if k not in KNOWN_KEYS}
        if ext:
            state.extras[key] = ext
    state.parts.append(frame_rows(kept))


def frame_rows(kept: pl.DataFrame) -> pl.DataFrame:
    """The frame rows (the verdict frame's columns, ``provider_rejected``, ``input_condition`` and the
    tail columns, with ``_fi`` and ``_odd.<column>`` for values of another JSON type) of checked lines."""
    v = LineValues(kept.columns, SPEC.fields, kept)
    c = pl.col
    is_ar = c("d.is_ar")
    src = (pl.when(~is_ar).then(c("d.op"))
           .when(v.truthy("source_operation")).then(c("d.src"))
           .when(c("it._source_operation").fill_null("") != "").then(c("it._source_operation")))
    cols = [
        c("model"), c("d.qid").alias("question_id"), c("item_id"), c("d.budget").alias("budget"),
        v.get_text("family_id").alias("family_id"), c("d.ev").alias("evidence_type"), c("d.op").alias("operation"),
        c("d.st").alias("subtype"), is_ar.alias("is_ar"), src.alias("source_operation"),
        pl.when(v.get_empty("paired_question_id")).then(None).otherwise(v.get_text("paired_question_id"))
        .alias("paired_question_id"),
        c("d.verdict").alias("verdict"), pl.lit(None, dtype=pl.Boolean).alias("correct"),
        pl.lit(None, dtype=pl.Utf8).alias("status"), pl.lit(None, dtype=pl.Boolean).alias("scored"),
        c("d.allow_abstention").alias("allow_abstention"),
        v.whole_via("n_audio_clips", False).alias("n_audio_clips"),
        *[v.whole_via(f, True).alias(f) for f in ("session_count", "evidence_session_count", "samekey_haystack_session_count")],
        c("response"), v.text("error").alias("error"), c("d.synthetic").fill_null(False).alias("synthetic"),
        c("_file").alias("source_file"), c("_line").alias("source_line"),
        c("d.provider_rejected").alias("provider_rejected"), c("d.cond").alias("input_condition"), c("_fi"),
        c("_cond").is_not_null().alias("_has_cond"),
    ]
    for f, via_item, as_json in _AS_IS:
        cols.append((pl.when(v.none(f)).then(c(f"it.{f}")).otherwise(c(f)) if via_item else c(f)).alias(f))
        if f"{f}.t" in kept.columns:
            cols += [c(f"{f}.t").alias(f"_odd.{f}.t"), c(f"{f}.s").alias(f"_odd.{f}.s"),
                     (v.col(f"{f}.j") if as_json else pl.lit(None, dtype=pl.Utf8)).alias(f"_odd.{f}.j")]
    return kept.select(cols)


def _extra_order(rows: pl.DataFrame, extras: dict[tuple[int, int], dict]) -> list[str]:
    """Columns after the frame's own, in order of first appearance: a row holds ``provider_rejected``
    (when not null), ``input_condition`` (ablation), its extra fields, then the tail columns."""
    def keys(r: dict, ext: dict | None) -> list[str]:
        return ((["provider_rejected"] if r["provider_rejected"] is not None else [])
                + (["input_condition"] if r["_has_cond"] else []) + list(ext or ()) + list(_TAIL))

    events: list[tuple[tuple[int, int], list[str]]] = []
    if rows.height:
        for hit in (rows.head(1), rows.filter(pl.col("provider_rejected").is_not_null()).head(1),
                    rows.filter(pl.col("_has_cond")).head(1)):
            if hit.height:
                r = hit.row(0, named=True)
                events.append(((r["_fi"], r["source_line"]), keys(r, extras.get((r["_fi"], r["source_line"])))))
        if extras:
            where = pl.DataFrame({"_fi": [a for a, _ in extras], "source_line": [b for _, b in extras]},
                                 schema={"_fi": pl.Int64, "source_line": pl.Int64})
            at = rows.select("_fi", "source_line", "provider_rejected", "_has_cond").join(
                where, on=["_fi", "source_line"], how="semi", maintain_order="left")
            for r in at.iter_rows(named=True):
                events.append(((r["_fi"], r["source_line"]), keys(r, extras[(r["_fi"], r["source_line"])])))
    order: list[str] = []
    known = set(COLUMN_NAMES)
    for _, ks in sorted(events, key=lambda e: e[0]):
        order += [k for k in ks if k not in known and k not in order]
    return order


def _assemble(state: _Reading) -> pl.DataFrame:
    """One frame of every batch's rows: the verdict frame's columns, then the others in order of
    first appearance, each column typed as the harness reader types it."""
    rows = pl.concat(state.parts, how="diagonal_relaxed") if state.parts else _no_rows()
    state.parts = []
    order = _extra_order(rows, state.extras)
    out = [_column(rows, name, state.extras) for name in list(COLUMN_NAMES) + order]
    return pl.DataFrame(out).with_columns(rows["_fi"])


def _no_rows() -> pl.DataFrame:
    schema = {c: TYPES.get(c, pl.Utf8) for c in COLUMN_NAMES} | {"provider_rejected": pl.Boolean, "input_condition": pl.Utf8,
                                                                 "_fi": pl.Int64, "_has_cond": pl.Boolean}
    return pl.DataFrame(schema=schema | {c: pl.Utf8 for c in _TAIL})


def _column(rows: pl.DataFrame, name: str, extras: dict) -> pl.Series:
    """One column of the frame (see :func:`_assemble`)."""
    if name in TYPES:
        return rows[name].cast(TYPES[name]).alias(name)
    if name == "input_condition":
        return rows.select(pl.when(pl.col("_has_cond")).then(pl.col("input_condition"))).to_series().alias(name)
    if name in rows.columns and f"_odd.{name}.t" not in rows.columns:
        return extra_series(name, []) if not rows.height else rows[name].cast(pl.Utf8).alias(name)
    if name in rows.columns:   # some value of another JSON type: typed as the harness reader types them
        odd = rows.select(f"_odd.{name}.t", f"_odd.{name}.s", f"_odd.{name}.j").rows()
        values = [val if t is None else j if j is not None else value_of(t, s) for val, (t, s, j) in
                  zip(rows[name].to_list(), odd)]
        return extra_series(name, values)
    keys = rows.select("_fi", "source_line").rows()
    return extra_series(name, [extras.get(k, {}).get(name) for k in keys])


def _drop_duplicates(frame: pl.DataFrame, state: _Reading) -> pl.DataFrame:
    """Keep the first row per (model, item_id, budget, input_condition); report and drop the others."""
    if not frame.height:
        return frame
    cond = pl.col("input_condition") if "input_condition" in frame.columns else pl.lit(None, dtype=pl.Utf8)
    keys = ["model", "item_id", "budget", "_c"]
    cols = frame.select("_fi", "source_line", "source_file", "model", "item_id", "budget", cond.alias("_c"), "verdict",
                        "response")
    hashed = cols.select(pl.struct(keys).hash(seed=0).alias("h"))["h"]
    if not hashed.is_duplicated().any():    # the usual case, told apart by one hash per row
        return frame
    first = cols.select(pl.struct(keys).is_first_distinct()).to_series()
    if first.all():
        return frame
    firsts = cols.filter(first).select(*keys, pl.col("source_line").alias("_l0"), pl.col("source_file").alias("_file0"),
                                       pl.col("verdict").alias("_v0"), pl.col("response").alias("_r0"))
    later = cols.filter(~first).join(firsts, on=keys, how="left", maintain_order="left", nulls_equal=True)
    for r in later.iter_rows(named=True):
        at = f"{r['_file0']}:{r['_l0']}"
        if r["verdict"] == r["_v0"] and r["response"] == r["_r0"]:
            state.stats["duplicates_identical"] += 1
            p = DUPLICATE_IDENTICAL.problem(r["source_file"], r["source_line"], at=at, **r)
        else:
            state.stats["rejected_lines"] += 1
            p = DUPLICATE_CONFLICT.problem(r["source_file"], r["source_line"], at=at, **r)
        state.add(r["_fi"], r["source_line"], 1, p)
    return frame.filter(first)
