"""LongMemEval verdicts read through a manifest into a tidy frame (system x budget x judge x question),
with each question's type.  Budgets written several ways for one size are one budget (a warning)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import polars as pl

from voxmem_analysis.errors import Problem, VoxMemDataError
from voxmem_analysis.io.engine.files import resolved
from voxmem_analysis.io.engine.manifest import cell, manifest_rows
from voxmem_analysis.io.engine.rules import collapse, fact, ordered
from voxmem_analysis.io.longmemeval.questions import read_questions
from voxmem_analysis.io.longmemeval.verdicts import FRAME_COLUMNS, SCHEMA, check_verdicts, read_verdicts, tidy_frame
from voxmem_analysis.io.provenance import ManifestData

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["QUESTION_TYPES", "MANIFEST_COLUMNS", "FRAME_COLUMNS", "LongMemEvalData", "load_longmemeval",
           "read_manifest", "read_questions", "select_judge", "budget_sort_key", "one_budget_per_size"]

#: LongMemEval's six question types, in display order (any string is accepted).
QUESTION_TYPES: tuple[str, ...] = (
    "single-session-user", "single-session-assistant", "single-session-preference",
    "multi-session", "temporal-reasoning", "knowledge-update",
)
#: Columns a manifest may have (``path`` and ``system`` required).
MANIFEST_COLUMNS: tuple[str, ...] = ("path", "system", "budget", "judge")
_SIZE = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([kKmM]?)\s*")

EMPTY_FILE = fact("empty_file", "warning", lambda r: "file holds no verdicts")
INCOMPLETE = fact("incomplete_run", "warning", lambda r: f"system {r['system']!r} (budget {r['budget']}, judge "
                  f"{r['judge']}) has verdicts for {r['n']} of the {r['n_q']} questions of the question file", "question_id")
MIXED_JUDGES = fact("mixed_judge_models", "warning", lambda r: f"system {r['system']!r} (budget {r['budget']}, judge "
                    f"{r['judge']}) was labelled by {r['nm']} different autoeval_label.model values", "autoeval_label.model")
BUDGET_SPELLING = fact("budget_spelling", "warning", lambda r: "budgets written several ways for one size are read as "
                       "one budget: " + "; ".join(f"{', '.join(w)} as {c}" for c, w in r["groups"]), "budget")
UNKNOWN_JUDGE = fact("unknown_judge", "error", lambda r: f"judge {r['judge']!r} not in the data; judges: {r['judges']}",
                     "judge")


def budget_sort_key(value) -> tuple:
    """Sort key putting budget labels in numeric order: ``8k < 32K < 115k < 1.5M < oracle`` (labels with a
    number, optionally followed by ``k``/``m``, by size; any other after them, alphabetically)."""
    m = _SIZE.fullmatch(str(value))
    if not m:
        return (1, float("inf"), str(value))
    return (0, float(m.group(1)) * {"": 1.0, "k": 1e3, "m": 1e6}[m.group(2).lower()], str(value))


def _canonical(size: float) -> str:
    """The one label of a size: ``32k``, ``1.5M``, ``500``."""
    if size >= 1e6:
        return f"{size / 1e6:g}M"
    return f"{size / 1e3:g}k" if size >= 1e3 else f"{size:g}"


def one_budget_per_size(budgets: list) -> tuple[dict, list[tuple[str, list[str]]]]:
    """``(label -> canonical label, [(canonical, spellings met)])`` for the sizes written several ways."""
    by: dict[float, list[str]] = {}
    for b in budgets:
        if b is not None:
            k = budget_sort_key(b)
            if k[0] == 0 and b not in by.setdefault(k[1], []):
                by[k[1]].append(b)
    groups = [(_canonical(size), spelled) for size, spelled in by.items() if len(spelled) > 1]
    return {b: c for c, spelled in groups for b in spelled}, groups


def read_manifest(path) -> tuple[pd.DataFrame, list[Problem]]:
    """``(usable rows: path, system, budget, judge, manifest_line, resolved; problems)`` of a manifest."""
    frame, problems, _ = manifest_rows(path, MANIFEST_COLUMNS)
    return frame, problems


@dataclass
class LongMemEvalData(ManifestData):
    """Verdicts read through a manifest: ``frame`` (one row per verdict), ``questions``, ``manifest`` (the
    usable rows), ``stats`` and ``dropped`` (rows none of whose verdicts were kept)."""

    UNNAMED = "longmemeval"

    frame: pl.DataFrame
    questions: pl.DataFrame
    questions_path: Path | None = None

    def systems(self) -> list[str]:
        """Systems in manifest order."""
        return list(dict.fromkeys(self.frame["system"].to_list()))

    def budgets(self) -> list:
        """Budgets present, in numeric order (see :func:`budget_sort_key`); None last."""
        vals = [b for b in dict.fromkeys(self.frame["budget"].to_list()) if b is not None]
        return sorted(vals, key=budget_sort_key) + ([None] if self.frame["budget"].null_count() else [])

    def pandas(self, frame: pl.DataFrame | None = None) -> pd.DataFrame:
        """The frame as pandas (``label`` as nullable boolean)."""
        return (self.frame if frame is None else frame).to_pandas()


def load_longmemeval(manifest, questions, *, strict: bool = True, convention: str = "paper",
                     type_key: str | None = None, progress=None) -> LongMemEvalData:
    """Load the verdict files a manifest lists, with each question's type from ``questions``.  ``strict``:
    raise listing every error, else leave the lines with an error out; ``type_key``: the type's field;
    ``progress(done, total)`` as verdict files are read."""
    if convention not in ("paper", "harness"):
        raise ValueError(f"convention must be 'paper' or 'harness', got {convention!r}")
    manifest, questions = Path(manifest), Path(questions)
    man, p, dropped = manifest_rows(manifest, MANIFEST_COLUMNS)
    keyed = [((-2, 0, 0, 0, n), x) for n, x in enumerate(p)]
    budgets, groups = one_budget_per_size([cell(b) for b in man["budget"].tolist()] + [d["budget"] for d in dropped])
    for d in dropped:
        d["budget"] = budgets.get(d["budget"], d["budget"])
    if groups:
        keyed.append(((-2, 1, 0, 0, 0), BUDGET_SPELLING.problem(str(manifest), groups=groups)))
    qframe, p = read_questions(questions, type_key)
    keyed += [((-1, 0, 0, 0, n), x) for n, x in enumerate(p)]
    runs = pl.DataFrame({"_fi": list(range(len(man))), "system": man["system"].tolist(),
                         "budget": [budgets.get(cell(b), cell(b)) for b in man["budget"].tolist()],
                         "m.judge": [cell(j) for j in man["judge"].tolist()], "path": man["path"].tolist(),
                         "manifest_line": man["manifest_line"].tolist()},
                        schema={"_fi": pl.Int64, "system": pl.Utf8, "budget": pl.Utf8, "m.judge": pl.Utf8,
                                "path": pl.Utf8, "manifest_line": pl.Int64})
    stats = {"files": 0, "lines": 0, "rows": 0, "rejected_lines": 0, "duplicates_identical": 0, "ungraded": 0}
    frame, n_rows = None, [0] * len(man)
    if qframe.height:  # without questions every line would be reported as unknown
        stats["files"] = len(man)
        paths = [(Path(r), p) for r, p in zip(man["resolved"].tolist(), man["path"].tolist())]
        raw, extras, unread = read_verdicts(paths, keyed, progress)
        checked, found = check_verdicts(raw, qframe, runs)
        keyed += found
        frame = tidy_frame(checked, extras, convention)
        _per_file(checked, runs, unread, keyed, dropped, n_rows)
        stats.update(lines=checked.height, rejected_lines=int((~checked["_ok"]).sum()),
                     duplicates_identical=int(checked["d0"].sum()),
                     ungraded=int(checked.filter(pl.col("_keep"))["_label"].null_count()))
    if frame is None:
        frame = pl.DataFrame(schema={c: SCHEMA[c] for c in FRAME_COLUMNS})
    man = man.assign(n_rows=n_rows)
    stats["rows"] = frame.height
    problems = collapse(ordered(keyed) + _cross_checks(frame, qframe))
    data = LongMemEvalData(frame, qframe, questions, manifest=man, problems=problems, stats=stats, manifest_path=manifest,
                           dropped=dropped, inputs=resolved([manifest, questions, *man["resolved"].tolist()]))
    if strict and data.errors():
        raise VoxMemDataError(data.problems, f"{sum(p.count for p in data.errors())} error(s) in LongMemEval verdicts "
                                             f"(manifest {str(manifest)!r}, questions {str(questions)!r})")
    return data


def _per_file(checked: pl.DataFrame, runs: pl.DataFrame, unread: set, keyed: list, dropped: list, n_rows: list) -> None:
    """Each manifest row's verdicts kept (``n_rows``); an empty file and a row with none kept are said."""
    per = checked.group_by("_fi").agg(pl.len().alias("n"), (~pl.col("_ok")).sum().alias("rej"),
                                      pl.col("_keep").sum().alias("kept"))
    per = {r[0]: r[1:] for r in per.iter_rows()}
    for fi, r in enumerate(runs.iter_rows(named=True)):
        n, rej, kept = per.get(fi, (0, 0, 0))
        n_rows[fi] = kept
        if fi not in unread and not n:
            keyed.append(((fi, 2, 0, 0, 0), EMPTY_FILE.problem(r["path"])))
        if not kept:
            lost = "file unreadable" if fi in unread else f"all {rej} line(s) rejected" if rej else "file holds no verdicts"
            dropped.append({"system": r["system"], "budget": r["budget"], "judge": r["m.judge"],
                            "manifest_line": r["manifest_line"], "reason": lost})


def _cross_checks(frame: pl.DataFrame, questions: pl.DataFrame) -> list[Problem]:
    if not frame.height:
        return []
    n_q = questions.height
    cover = (frame.group_by("system", "budget", "judge", maintain_order=True)
             .agg(pl.len().alias("n"), pl.col("source_file").first(), pl.col("judge_model").drop_nulls().n_unique().alias("nm")))
    out = []
    for r in cover.iter_rows(named=True):
        if r["n"] < n_q:
            out.append(INCOMPLETE.problem(r["source_file"], None, n_q - r["n"], n_q=n_q, **r))
        if r["nm"] > 1:
            out.append(MIXED_JUDGES.problem(r["source_file"], **r))
    return out


def select_judge(frame: pl.DataFrame, judge: str | None = None,
                 dropped: list[dict] | None = None) -> tuple[pl.DataFrame, list[str]]:
    """One judge per (system, budget): ``judge`` where it is one, else the first listed; ``(frame, notes)``
    with a note for every choice and dropped manifest row."""
    judges_met = sorted(set(frame["judge"].drop_nulls().to_list()))
    if judge is not None and judge not in judges_met:
        raise VoxMemDataError([UNKNOWN_JUDGE.problem(judge=judge, judges=judges_met)])
    notes: list[str] = []
    keep = []
    judges = (frame.with_row_index("_r").group_by("system", "budget", maintain_order=True)
              .agg(pl.col("judge").unique(maintain_order=True).alias("judges")))
    chosen_at: dict[tuple, object] = {}
    for r in judges.iter_rows(named=True):
        js = r["judges"]
        chosen = js[0] if judge is None or judge not in js else judge
        chosen_at[(r["system"], r["budget"])] = chosen
        if len(js) > 1:
            notes.append(f"system {r['system']!r} at budget {r['budget']} has verdicts from {len(js)} judges "
                         f"({', '.join(map(str, js))}); using {chosen!r}")
        elif judge is not None and chosen != judge:
            notes.append(f"system {r['system']!r} at budget {r['budget']} has no verdicts from judge {judge!r}; "
                         f"using {chosen!r}")
        keep.append({"system": r["system"], "budget": r["budget"], "judge": chosen})
    for d in dropped or []:
        what = (f"the verdicts of system {d['system']!r} at budget {d['budget']}"
                + (f" by judge {d['judge']!r}" if d.get("judge") is not None else "")
                + f" (manifest line {d['manifest_line']}) were left out: {d['reason']}")
        other = chosen_at.get((d["system"], d["budget"]))
        notes.append(f"{what}; scored with judge {other!r} instead" if other is not None and other != d.get("judge")
                     else f"{what}; that system and budget are in no table" if other is None else what)
    if not any(len(js) > 1 for js in judges["judges"].to_list()):
        return frame, notes
    sel = pl.DataFrame(keep, schema={"system": pl.Utf8, "budget": pl.Utf8, "judge": pl.Utf8})
    return frame.join(sel, on=["system", "budget", "judge"], how="semi", nulls_equal=True), notes
