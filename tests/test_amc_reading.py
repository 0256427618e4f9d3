"""The Audio MultiChallenge release reader gives the release it always gave: frames (columns, types,
rows), problems (codes, files, lines, fields, messages, order) and counts recorded from the reader of
commit fbde6f2 (two readers, row by row and columnar, which agreed) on the hand-made bad inputs of
``tests/test_bulk_parts.py``, on seeded random corruptions of every table (CSV and JSON lines, values
of every JSON type) and on Parquet verdict files (``tests/fixtures/amc_expected``, written by its
``make.py``) -- and what it now does beyond that reader (compressed files, links, empty files, a
misspelled benchmark) is a finding, never a loss."""
from __future__ import annotations

import gzip
import json
import math
import random
import shutil
from pathlib import Path

import pytest

from tests.test_bulk_parts import AMC_CASES, AMC_PARTS, VERDICT_HEADER, amc_files, write_amc, write_amc_parquet
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_amc

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXPECTED = FIXTURES / "amc_expected"
_JSONL = ("verdicts/a.csv", "verdicts/b.csv", "tts/a.csv", "rubrics.csv")

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


def read_case(name: str, tmp: Path) -> dict:
    return snapshot(load_amc(CASES[name](tmp), strict=False))


#: Recorded cases the reader now reads otherwise, on purpose (each checked by a test of its own below).
CHANGED = {"hand_extra_cell_csv": "a CSV row with more cells than its header is an error of that row; the rows "
                                  "after it are read (the old reader stopped reading the file there, unsaid)"}


@pytest.mark.parametrize("name", sorted(set(CASES) - set(CHANGED)))
def test_reading_is_the_recorded_one(tmp_path, name):
    expected_file = EXPECTED / f"{name}.json"
    expected = json.loads(expected_file.read_text(encoding="utf-8"))
    got = json.loads(json.dumps(read_case(name, tmp_path), sort_keys=True))
    assert got["problems"] == expected["problems"]
    assert got["stats"] == expected["stats"]
    assert got["parts"] == expected["parts"]


def test_recorded_cases_are_not_trivial():
    """The recorded readings hold rows, rejected rows and findings of many kinds."""
    codes, rows = set(), 0
    for name in CASES:
        expected = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
        codes |= {p["code"] for p in expected["problems"]}
        rows += len(expected["parts"]["verdicts"]["rows"])
    assert rows > 1000 and len(codes) >= 15, (rows, sorted(codes))


def test_strict_reading_raises_the_same_problems(tmp_path):
    root = CASES["hand_passed_not_boolean_csv"](tmp_path)
    lenient = load_amc(root, strict=False)
    with pytest.raises(VoxMemDataError) as exc:
        load_amc(root)
    assert exc.value.problems == lenient.problems and lenient.errors()


def test_a_csv_row_too_long_loses_only_itself(tmp_path):
    """The old reader stopped at the row ("M,x" in a cell of verdicts/a.csv, line 3) and lost the 19 rows
    after it; now that row alone is left out, and its task for that system (incomplete), both named."""
    old = json.loads((EXPECTED / "hand_extra_cell_csv.json").read_text(encoding="utf-8"))
    rel = load_amc(CASES["hand_extra_cell_csv"](tmp_path), strict=False)
    assert [(p.code, p.file, p.line) for p in rel.problems] == [
        ("malformed_csv", "verdicts/a.csv", 3), ("missing_rubric_verdicts", "verdicts/a.csv", 2)]
    assert "row has more cells than the header" in rel.problems[0].message
    assert len(old["parts"]["verdicts"]["rows"]) == 10 and len(rel.verdicts) == 28   # of 30: M/Text t1 left out
    assert rel.stats["rejected_rows"] == 1 and rel.stats["incomplete_task_rows"] == 1
