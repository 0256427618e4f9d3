"""Audio MultiChallenge release cases shared by the reading tests and the recorded readings
(``tests/fixtures/amc_expected``, written by its ``make.py``): a small release's tables (every optional
part), hand-made bad inputs, seeded corruptions, Parquet verdicts, and :func:`snapshot` of a reading."""
from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pandas as pd

from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_amc

RUBRICS = """rubric_id,task_id,instruction_type,edit_type,exclusion
r1a,t1,,,false
r1b,t1,,,true
r2a,t2,fixed,,false
r2b,t2,conditional,,false
r2c,t2,conditional,,false
r3a,t3,,,false
r4a,t4,,mid_utterance,false
r4b,t4,,prior_turn,false
r4c,t4,,unedited,false
r4d,t4,,unedited,false
"""
TASKS = """task_id,axis,audio_cue,interruption,tts_subset,user_audio_seconds,turns
t1,IM,true,false,false,30,3
t2,IR,false,false,true,90,4
t3,SC,false,false,true,200,5
t4,VE,false,false,true,400,3
"""
TASK_OF = {r.split(",")[0]: r.split(",")[1] for r in RUBRICS.splitlines()[1:]}
AMC_PARTS = ("tasks", "rubrics", "verdicts", "tts", "cascaded", "human", "judges", "lengths")
EXPECTED = Path(__file__).resolve().parent / "fixtures" / "amc_expected"
_JSONL = ("verdicts/a.csv", "verdicts/b.csv", "tts/a.csv", "rubrics.csv")


def amc_outcome(root: Path, *, strict: bool):
    """What ``load_amc`` gives: the release, or the problems it raised."""
    try:
        return "ok", load_amc(root, strict=strict)
    except VoxMemDataError as exc:
        return "raised", list(exc.problems)


def assert_consistent_amc(root: Path, rel=None) -> None:
    """Strict reading raises exactly when the lenient one (``rel``, read here when not given) finds errors,
    with the same problems; every problem names a file; no kept verdict breaks a rule the reader checks."""
    if rel is None:
        kind, strict = amc_outcome(root, strict=True)
        rel = amc_outcome(root, strict=False)[1] if kind == "raised" else strict   # not raised: the lenient reading
    else:   # strict reading differs from the lenient one only in raising its errors
        kind, strict = amc_outcome(root, strict=True) if rel.errors() else ("ok", rel)
    assert (kind == "raised") == bool(rel.errors())
    if kind == "raised":
        assert strict == rel.problems
    assert all(p.file for p in rel.problems if p.code != "no_release")
    for part in ("verdicts", "tts", "cascaded", "human", "judges"):
        df = getattr(rel, part)
        if df is not None and len(df):
            assert df["passed"].map(type).eq(bool).all() and set(df["output_modality"]) <= {"Text", "Audio"}
            assert set(df["task_id"]) <= set(rel.tasks["task_id"]) and set(df["rubric_id"]) <= set(rel.rubrics["rubric_id"])


SYSTEMS = {("M", "Text"): "r1a r1b r2a r2b r2c r3a r4a r4b r4c r4d",
           ("M", "Audio"): "r1a r1b r2a r2b r2c r3a r4a r4b r4c r4d",
           ("N", "Text"): "r1a r1b r2a r2b r2c r3a r4a r4b r4c r4d"}
VERDICT_HEADER = ["model", "output_modality", "task_id", "rubric_id", "passed"]


def amc_files() -> dict[str, list[list[str]]]:
    """A small release's tables as rows of cells (header first); 11 files with every optional part."""
    def verdicts(systems, pick=None, judge=None):
        rows = [(["judge"] if judge else []) + VERDICT_HEADER]
        for i, ((m, mod), rubrics) in enumerate(systems.items()):
            for j, r in enumerate(rubrics.split()):
                if pick is None or TASK_OF[r] in pick:
                    rows.append(([judge] if judge else []) + [m, mod, TASK_OF[r], r, "true" if (i + j) % 3 else "false"])
        return rows
    m = {k: v for k, v in SYSTEMS.items() if k[0] == "M"}
    return {
        "tasks.csv": [r.split(",") for r in TASKS.splitlines()],
        "rubrics.csv": [r.split(",") for r in RUBRICS.splitlines()],
        "verdicts/a.csv": verdicts(m),
        "verdicts/b.csv": verdicts({("N", "Text"): SYSTEMS[("N", "Text")]}),
        "tts/a.csv": verdicts(m, pick={"t2", "t3", "t4"}),
        "cascaded/a.csv": verdicts({("M", "Text"): SYSTEMS[("M", "Text")]}),
        "human_labels.csv": verdicts({("M", "Text"): "r1a r1b r2a r2b r2c"}),
        "judge_labels.csv": verdicts({("M", "Text"): "r1a r1b r2a r2b r2c"}, judge="J1")
        + verdicts({("M", "Text"): "r1a r1b"}, judge="J2")[1:],
        "response_lengths.csv": [["model", "output_modality", "task_id", "tokens"]]
        + [[m_, mod, t, str(10 * k + 3)] for k, ((m_, mod), t) in
           enumerate((s, t) for s in SYSTEMS for t in ("t1", "t2", "t3", "t4"))],
    }


def write_amc(root: Path, files: dict[str, list[list]], jsonl=(), raw: dict[str, str] | None = None) -> Path:
    """Write the tables; names in ``jsonl`` as JSON lines (cells as given, so any JSON type), the
    others as CSV joined by commas with no quoting (so a cell holding a comma or quote corrupts)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "release.json").write_text(json.dumps({"benchmark": "audio-multichallenge", "synthetic": True}))
    for name, rows in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if name in jsonl:
            header = rows[0]
            text = "".join(json.dumps(dict(zip(header, r))) + "\n" for r in rows[1:])
            path.with_suffix(".jsonl").write_text(text, encoding="utf-8")
        else:
            path.write_bytes(("\n".join(",".join(str(c) for c in r) for r in rows) + "\n").encode("utf-8", "surrogatepass"))
    for name, text in (raw or {}).items():
        (root / name).write_bytes(text.encode("utf-8", "surrogatepass"))
    return root


def _edit(files, name, row, col, value):
    files[name][row][col] = value
    return files


AMC_CASES = {
    "passed not boolean": lambda f: _edit(f, "verdicts/a.csv", 3, 4, "maybe"),
    "unknown rubric": lambda f: _edit(f, "verdicts/b.csv", 2, 3, "r9"),
    "rubric of another task": lambda f: _edit(f, "verdicts/a.csv", 2, 3, "r2a"),
    "unknown task": lambda f: _edit(f, "tts/a.csv", 1, 2, "t9"),
    "modality": lambda f: _edit(f, "verdicts/a.csv", 5, 1, "Video"),
    "empty model": lambda f: _edit(f, "verdicts/a.csv", 5, 0, "  "),
    "conflict across files": lambda f: f["verdicts/b.csv"].append(["M", "Text", "t1", "r1a", "true"]) or f,
    "identical repeat": lambda f: f["verdicts/a.csv"].append(list(f["verdicts/a.csv"][1])) or f,
    "missing rubric verdict": lambda f: f["verdicts/b.csv"].pop(4) and f,
    "missing task": lambda f: [f["verdicts/b.csv"].remove(r) for r in list(f["verdicts/b.csv"]) if r[2] == "t3"] and f,
    "tts task missing": lambda f: [f["tts/a.csv"].remove(r) for r in list(f["tts/a.csv"]) if r[2] == "t4"] and f,
    "judge without human label": lambda f: f["judge_labels.csv"].append(["J2", "M", "Text", "t3", "r3a", "true"]) or f,
    "bad token count": lambda f: _edit(f, "response_lengths.csv", 3, 3, "-4"),
    "repeated length": lambda f: f["response_lengths.csv"].append(list(f["response_lengths.csv"][2])) or f,
    "quoted cell": lambda f: _edit(f, "verdicts/a.csv", 2, 0, '"M"'),
    "extra cell": lambda f: _edit(f, "verdicts/a.csv", 2, 0, "M,x"),
    "missing column": lambda f: [r.pop(4) for r in f["cascaded/a.csv"]] and f,
    "empty verdict file": lambda f: f.update({"verdicts/b.csv": [VERDICT_HEADER]}) or f,
    "spaces around cells": lambda f: _edit(f, "verdicts/a.csv", 2, 1, " text "),
    "rubric labels": lambda f: _edit(_edit(_edit(f, "rubrics.csv", 3, 2, " Fixed "), "rubrics.csv", 7, 3, "mid-utterance"),
                                     "rubrics.csv", 2, 4, ""),
    "bad rubric label": lambda f: _edit(f, "rubrics.csv", 4, 3, "sideways"),
    "bad exclusion": lambda f: _edit(f, "rubrics.csv", 4, 4, "maybe"),
    "repeated rubric": lambda f: f["rubrics.csv"].append(list(f["rubrics.csv"][3])) or f,
    "boolean and number cells": lambda f: _edit(_edit(f, "verdicts/b.csv", 1, 0, True), "verdicts/a.csv", 3, 4, 1),
}


def write_amc_parquet(root: Path, edit: str = "clean") -> Path:
    """The AMC fixture with ``verdicts/a.csv`` written as Parquet (``passed`` boolean), after ``edit``:
    ``clean``, ``null model``, ``repeated row``, or ``passed`` as ``number``/``text``/``float``."""
    files = amc_files()
    rows = files.pop("verdicts/a.csv")
    frame = pd.DataFrame(rows[1:], columns=rows[0])
    frame["passed"] = frame["passed"] == "true"
    if edit == "null model":
        frame.loc[2, "model"] = None
    elif edit == "repeated row":
        frame = pd.concat([frame, frame.iloc[[3]]], ignore_index=True)
    elif edit == "number passed":
        frame["passed"] = frame["passed"].astype(int)
    elif edit == "text passed":
        frame["passed"] = frame["passed"].map({True: "TRUE", False: "false"})
    elif edit == "float passed":
        frame["passed"] = frame["passed"].astype(float)
    elif edit != "clean":
        raise ValueError(f"unknown edit {edit!r}")
    root = write_amc(root, files)
    frame.to_parquet(root / "verdicts" / "a.parquet")
    return root


# values a corrupted cell may take: texts (CSV and JSON) and, in JSON lines, every JSON type
_TEXTS = ["", " ", "true", "FALSE", "1", "0", "maybe", "t9", "t2", "r2a", "r1a", "r9", "Audio", "text", " M ", "N",
          "M\u00a0", "x\u2028y", "x\x1cy", "\x1f", '"q"', '"M"', "a,b", "r1a ", "é", "1e3", "-1", "nan", "1_000", "J2",
          "\ufeffM", "IR", "Instruction Retention", "fixed", "Mid-Utterance", "2.5", "3.0", "-0"]
_JSON_ONLY = [None, True, False, 0, 1, 2, 1.0, 2.5, [], {}, ["M"], {"a": 1}]


def _corrupt(seed: int):
    """A release's files after 1-4 random edits: a cell, a dropped, repeated or moved row, a row copied
    from another verdict file, or damaged text (seeded, so the same on every run)."""
    rng = random.Random(seed)
    files = amc_files()
    names = sorted(files)
    jsonl = set(rng.sample([n for n in names if n != "tasks.csv"], rng.randint(0, 3)))
    raw = {}
    for _ in range(rng.randint(1, 4)):
        name = rng.choice(names)
        rows = files[name]
        kind = rng.choice(["cell", "cell", "cell", "drop", "repeat", "move", "copy", "text"])
        i = rng.randint(1, max(1, len(rows) - 1)) if len(rows) > 1 else 0
        if kind == "cell" and rows:
            j = rng.randint(0, len(rows[i]) - 1)
            rows[i][j] = rng.choice(_TEXTS + (_JSON_ONLY if name in jsonl else []))
        elif kind == "drop" and len(rows) > 1:
            rows.pop(i)
        elif kind == "repeat" and len(rows) > 1:
            rows.insert(rng.randint(1, len(rows)), list(rows[i]))
        elif kind == "move" and len(rows) > 2:
            rows.insert(rng.randint(1, len(rows) - 1), rows.pop(i))
        elif kind == "copy":
            src = files[rng.choice(["verdicts/a.csv", "verdicts/b.csv", "tts/a.csv"])]
            if name.startswith(("verdicts", "tts", "cascaded")) and len(src) > 1:
                row = list(src[rng.randint(1, len(src) - 1)])
                row[4] = rng.choice(["true", "false"])
                rows.append(row)
        elif kind == "text" and name not in jsonl:
            text = "\n".join(",".join(str(c) for c in r) for r in rows) + "\n"
            how = rng.choice(["crlf", "bom", "blank", "no_newline", "trailing_blank", "empty", "quote"])
            raw[name] = {"crlf": text.replace("\n", "\r\n"), "bom": "\ufeff" + text, "empty": "",
                         "blank": text.replace("\n", "\n\n", 2), "no_newline": text.rstrip("\n"),
                         "trailing_blank": text + "\n\n", "quote": text.replace(",", ',"', 1)}[how]
    return files, sorted(jsonl), raw


def _case_corrupt(seed: int):
    def build(tmp: Path) -> Path:
        files, jsonl, raw = _corrupt(seed)
        return write_amc(tmp / "r", files, jsonl=jsonl, raw={n: t for n, t in raw.items() if n not in jsonl})
    return build


def _case_hand(name: str, jsonl: bool):
    def build(tmp: Path) -> Path:
        return write_amc(tmp / "r", AMC_CASES[name](amc_files()), jsonl=_JSONL if jsonl else ())
    return build


def _case_parquet(edit: str):
    def build(tmp: Path) -> Path:
        return write_amc_parquet(tmp / "r", edit)
    return build


def _case_tasks(edit: str):
    """The task table with odd values (JSON lines, so any JSON type)."""
    def build(tmp: Path) -> Path:
        files = amc_files()
        tasks = files["tasks.csv"]
        header = tasks[0]
        recs = [dict(zip(header, r)) for r in tasks[1:]]
        if edit == "types":
            recs[0].update(audio_cue=True, interruption=0, user_audio_seconds=30, turns=3.0)
            recs[1].update(tts_subset="TRUE ", user_audio_seconds="1e2", turns="4")
            recs[2].update(audio_cue=1.0, turns=2.5)
            recs[3].update(axis="voice editing", user_audio_seconds=None, turns=None)
        elif edit == "bad":
            recs[0].update(axis=3, turns=0)
            recs[1].update(audio_cue=True, user_audio_seconds=-1)
            recs[2].update(task_id=None, axis="SC")
            recs[3].update(interruption="maybe", tts_subset=[], user_audio_seconds="x")
        root = write_amc(tmp / "r", {k: v for k, v in files.items() if k != "tasks.csv"})
        (root / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs), encoding="utf-8")
        return root
    return build


#: Seeds of :func:`_corrupt` (those the old reader read without crashing: it raised on ``turns=inf``).
SEEDS = tuple(range(60))
CASES = {**{f"hand_{n.replace(' ', '_')}_{'jsonl' if j else 'csv'}": _case_hand(n, j)
            for n in sorted(AMC_CASES) for j in (False, True)},
         **{f"corrupt_{s}": _case_corrupt(s) for s in SEEDS},
         **{f"parquet_{e.replace(' ', '_')}": _case_parquet(e)
            for e in ("clean", "null model", "repeated row", "number passed", "text passed", "float passed")},
         **{f"tasks_{e}": _case_tasks(e) for e in ("types", "bad")}}


def _json_value(v):
    if v is None or isinstance(v, (str, bool)):
        return v
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    return repr(v)


def snapshot(rel) -> dict:
    """What a loaded release is made of, as JSON: parts (columns, types, rows), problems, counts."""
    parts = {}
    for name in AMC_PARTS:
        f = getattr(rel, name)
        parts[name] = None if f is None else {
            "columns": [str(c) for c in f.columns], "dtypes": [str(t) for t in f.dtypes],
            "rows": [[_json_value(v) for v in row] for row in f.itertuples(index=False, name=None)]}
    return {"parts": parts, "problems": [p.as_dict() for p in rel.problems], "stats": list(rel.stats.items())}


def read_case(name: str, tmp: Path):
    """``(root, lenient reading)`` of a recorded case."""
    root = CASES[name](tmp)
    return root, load_amc(root, strict=False)
