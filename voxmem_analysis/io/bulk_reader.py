"""The columnar path of :func:`voxmem_analysis.io.release.read_predictions`.

Files are decompressed, then split into lines and read in batches of up to 16 MB of text
(the plain lines by :mod:`voxmem_analysis.io.bulk` in one parser call per batch, the
others by the per-line reader).  Duplicates (same model, item, budget and condition) are found
over all files at once, in file and line order, as the per-line reader finds them.  Problems are
returned in the per-line reader's order (file, line; a line's own problems before its duplicate
finding), so both paths give the same list.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from voxmem_analysis.errors import Problem
from voxmem_analysis.io import bulk as bk
from voxmem_analysis.io.release import (BUDGET_DTYPE, file_condition, item_index_of, parse_prediction_line,
                                        read_file_text, rows_to_frame)
from voxmem_analysis.io.schema import COLUMN_NAMES

__all__ = ["read_files_bulk"]

_BATCH_BYTES = 16 * 2**20
_EXTRA_TAIL = ("question_text", "gold_json", "judge_raw")


class _State:
    """What the batches accumulate: keyed problems, rows of both paths, counts."""

    def __init__(self, files: list[Path], items: pl.DataFrame | None):
        self.keyed: list[tuple[tuple, Problem]] = []
        self.vec: list[pl.DataFrame] = []
        self.py_rows: list[tuple[int, int, dict]] = []
        self.stats = {"files": len(files), "files_unreadable": 0, "lines": 0, "rows": 0, "rejected_lines": 0,
                      "duplicates_identical": 0}
        self.items = items
        self.has_items = items is not None and items.height > 0
        self._index: dict | None = None

    def add(self, fi: int, line: int, phase: int, problem: Problem) -> None:
        self.keyed.append(((fi, line, phase, len(self.keyed)), problem))

    @property
    def item_index(self) -> dict:
        if self._index is None:
            self._index = item_index_of(self.items)
        return self._index


def _rel(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def read_files_bulk(root: Path, sub: str, files: list[Path], items, condition_from_dir: bool):
    """``(frame, problems, stats)`` for ``files`` (already listed), like the per-line reader."""
    state = _State(files, items)
    batch: list[tuple] = []
    size = 0
    for fi, path in enumerate(files):
        rel = _rel(path, root)
        text, bad = read_file_text(path, rel)
        for p in bad:  # CR line endings, a gzip stream cut short (text kept up to the cut), unreadable
            state.add(fi, -1, 0, p)
        if text is None:
            state.stats["files_unreadable"] += 1
            continue
        batch.append((text, fi, rel, file_condition(root, sub, path, condition_from_dir)))
        size += len(text)
        if size >= _BATCH_BYTES:
            _split_and_read(batch, state)
            batch, size = [], 0
    if batch:
        _split_and_read(batch, state)
    _drop_duplicates(state)
    frame = _combine(state)
    state.stats["rows"] = frame.height
    problems = [p for _, p in sorted(state.keyed, key=lambda kp: kp[0])]
    return frame.drop("_fi").with_columns(pl.col("budget").cast(BUDGET_DTYPE)), problems, state.stats


def _split_and_read(batch: list[tuple], state: _State) -> None:
    texts, fis, rels, conds = (list(x) for x in zip(*batch))
    batch.clear()
    lines = bk.split_lines(texts, fis, rels, conds)
    data = "\n".join(texts).encode()
    del texts
    counts = dict(lines.group_by("_fi").len().iter_rows())
    for fi, rel in zip(fis, rels):
        if not counts.get(fi):
            state.add(fi, -1, 0, Problem("empty_file", "warning", "file holds no predictions", rel))
    state.stats["lines"] += lines.height
    if lines.height:
        _read_batch(lines, data, state)


def _read_batch(lines: pl.DataFrame, data: bytes, state: _State) -> None:
    """Bulk-read the plain lines of ``lines`` (whose files' texts ``data`` holds); the others go
    through the per-line reader."""
    suspect = bk.suspect_lines(lines["line"])
    plain = lines.filter(~suspect)
    whole = bk.parse_text(data, lines.height)
    del data
    if whole is not None:   # one call for the batch: keep the plain lines' rows
        kept = whole.filter(~suspect) if suspect.any() else whole
        rec, rejected = kept.with_columns(pl.int_range(0, plain.height, dtype=pl.Int64).alias("_pos")), []
        del whole, kept
    else:
        rec, rejected = bk.parse_lines(plain["line"])
    slow = [lines.filter(suspect)]
    if rejected:
        slow.append(plain[rejected])
    if rec is not None:
        meta = plain.select(pl.col("_fi"), pl.col("_file"), pl.col("lineno").alias("_line"), pl.col("_cond"))
        rec = pl.concat([rec, meta[rec["_pos"].to_list()] if rejected else meta], how="horizontal")
        rows = bk.build_rows(rec, state.items, state.has_items)
        rows = rows.with_columns(rec["_fi"].alias("_fi"))
        del rec
        clean = rows["_clean"]
        if clean.all():
            state.vec.append(rows.drop("_clean", "_pos"))
        else:
            state.vec.append(rows.filter(clean).drop("_clean", "_pos"))
            slow.append(plain[rows.filter(~clean)["_pos"].to_list()])
    for r in pl.concat(slow).sort("_fi", "lineno").iter_rows(named=True):
        row, errs = parse_prediction_line(r["line"], r["_file"], r["lineno"], state.item_index, r["_cond"])
        for e in errs:
            state.add(r["_fi"], r["lineno"], 0, e)
        if row is None or any(e.severity == "error" for e in errs):
            state.stats["rejected_lines"] += 1
        else:
            state.py_rows.append((r["_fi"], r["lineno"], row))


def _vec_keys(has_pr: bool, has_cond: bool) -> list[str]:
    """Key order of a row dict the per-line reader builds for a plain line."""
    return (["provider_rejected"] if has_pr else []) + (["input_condition"] if has_cond else []) + list(_EXTRA_TAIL)


def _extra_order(vec: pl.DataFrame, py_rows: list[tuple[int, int, dict]]) -> list[str]:
    """Extra columns in order of first appearance, as :func:`rows_to_frame` orders them."""
    events: list[tuple[tuple[int, int], list[str]]] = []
    if vec.height:
        first = vec.row(0, named=True)
        events.append(((first["_fi"], first["source_line"]),
                       _vec_keys(first["provider_rejected"] is not None, first["_has_cond"])))
        for mask in (pl.col("provider_rejected").is_not_null(), pl.col("_has_cond")):
            hit = vec.filter(mask).head(1)
            if hit.height:
                r = hit.row(0, named=True)
                events.append(((r["_fi"], r["source_line"]),
                               _vec_keys(r["provider_rejected"] is not None, r["_has_cond"])))
    events += [((fi, line), list(row)) for fi, line, row in py_rows]
    order: list[str] = []
    known = set(COLUMN_NAMES)
    for _, keys in sorted(events, key=lambda e: e[0]):
        order += [k for k in keys if k not in known and k not in order]
    return order


def _combine(state: _State) -> pl.DataFrame:
    """One frame of both paths' rows, in file and line order, with the per-line reader's columns and types."""
    vec = pl.concat(state.vec, rechunk=False) if state.vec else None
    if vec is None or not vec.height:
        return _py_frame([row for _, _, row in state.py_rows], keep_budget_text=True).with_columns(
            pl.Series("_fi", [fi for fi, _, _ in state.py_rows], dtype=pl.Int64))
    vec = vec.with_columns(pl.when(pl.col("_has_cond")).then(pl.col("input_condition")).alias("input_condition"))
    columns = list(COLUMN_NAMES) + _extra_order(vec, state.py_rows)
    if not state.py_rows:
        return vec.select(columns + ["_fi"])
    py = _py_frame([row for _, _, row in state.py_rows], keep_budget_text=True).with_columns(
        pl.Series("_fi", [fi for fi, _, _ in state.py_rows], dtype=pl.Int64))
    common = [c for c in columns if c in py.columns and c in vec.columns]
    if any(py.schema[c] != vec.schema[c] for c in common):  # odd value types: let rows_to_frame decide them all
        return _all_rows_frame(vec, state)
    both = pl.concat([vec.select([c for c in columns if c in vec.columns] + ["_fi"]),
                      py.select([c for c in columns if c in py.columns] + ["_fi"])], how="diagonal")
    return both.sort("_fi", "source_line").select(columns + ["_fi"])


def _py_frame(rows: list[dict], keep_budget_text: bool) -> pl.DataFrame:
    frame = rows_to_frame(rows)
    return frame.with_columns(pl.col("budget").cast(pl.Utf8)) if keep_budget_text else frame


def _all_rows_frame(vec: pl.DataFrame, state: _State) -> pl.DataFrame:
    rows = list(state.py_rows)
    for r in vec.iter_rows(named=True):
        row = {k: r[k] for k in COLUMN_NAMES}
        for k in _vec_keys(r["provider_rejected"] is not None, r["_has_cond"]):
            row[k] = r[k]
        rows.append((r["_fi"], r["source_line"], row))
    rows.sort(key=lambda t: (t[0], t[1]))
    return _py_frame([row for _, _, row in rows], keep_budget_text=True).with_columns(
        pl.Series("_fi", [fi for fi, _, _ in rows], dtype=pl.Int64))


_KEY_COLUMNS = ["_fi", "source_line", "model", "item_id", "budget", "input_condition", "verdict", "response"]


def _key_frame(state: _State) -> pl.DataFrame:
    """Duplicate-relevant fields of every accepted row of both paths, in file and line order."""
    parts = [v.select(pl.col("_fi"), pl.col("source_line"), pl.col("model"), pl.col("item_id"), pl.col("budget"),
                      pl.when(pl.col("_has_cond")).then(pl.col("input_condition")).alias("input_condition"),
                      pl.col("verdict"), pl.col("response")) for v in state.vec]
    if state.py_rows:
        def text(v):  # a non-text condition (odd line) must not equal any text one
            return v if v is None or isinstance(v, str) else f"\x00{v!r}"
        parts.append(pl.DataFrame({
            "_fi": [fi for fi, _, _ in state.py_rows], "source_line": [ln for _, ln, _ in state.py_rows],
            "model": [r["model"] for _, _, r in state.py_rows], "item_id": [r["item_id"] for _, _, r in state.py_rows],
            "budget": [r["budget"] for _, _, r in state.py_rows],
            "input_condition": [text(r.get("input_condition")) for _, _, r in state.py_rows],
            "verdict": [r["verdict"] for _, _, r in state.py_rows],
            "response": [r["response"] for _, _, r in state.py_rows]},
            schema={"_fi": pl.Int64, "source_line": pl.Int64, "model": pl.Utf8, "item_id": pl.Utf8, "budget": pl.Utf8,
                    "input_condition": pl.Utf8, "verdict": pl.Boolean, "response": pl.Utf8}))
    return pl.concat(parts).sort("_fi", "source_line") if parts else pl.DataFrame(schema=_KEY_COLUMNS)


def _drop_duplicates(state: _State) -> None:
    """Keep the first row per (model, item_id, budget, input_condition); report and drop the others."""
    keys = ["model", "item_id", "budget", "input_condition"]
    kf = _key_frame(state)
    if not kf.height:
        return
    kf = kf.with_columns(pl.struct(keys).is_first_distinct().alias("_first"))
    if kf["_first"].all():
        return
    first = [pl.col(c).first().over(keys).alias(f"_0{c}") for c in ("verdict", "response", "_fi", "source_line")]
    later = kf.with_columns(first).filter(~pl.col("_first"))
    files = {fi: f for v in state.vec for fi, f in v.select("_fi", "source_file").unique().iter_rows()}
    files.update({fi: r["source_file"] for fi, _, r in state.py_rows})
    for r in later.iter_rows(named=True):
        where = f"{files[r['_0_fi']]}:{r['_0source_line']}"
        if r["verdict"] == r["_0verdict"] and r["response"] == r["_0response"]:
            state.stats["duplicates_identical"] += 1
            p = Problem("duplicate_identical", "warning",
                        f"({r['model']}, {r['item_id']}) already read at {where}; identical copy ignored",
                        files[r["_fi"]], r["source_line"], "item_id")
        else:
            state.stats["rejected_lines"] += 1
            p = Problem("duplicate_conflict", "error",
                        f"({r['model']}, {r['item_id']}) read twice with different verdicts/responses "
                        f"(first at {where}: verdict={r['_0verdict']!r}; here verdict={r['verdict']!r})",
                        files[r["_fi"]], r["source_line"], "verdict")
        state.add(r["_fi"], r["source_line"], 1, p)
    gone = later.select("_fi", "source_line")
    state.vec = [v.join(gone, on=["_fi", "source_line"], how="anti", maintain_order="left") for v in state.vec]
    dropped = set(gone.iter_rows())
    state.py_rows = [t for t in state.py_rows if (t[0], t[1]) not in dropped]
