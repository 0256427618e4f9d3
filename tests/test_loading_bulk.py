"""The prediction reader gives the release it always gave: the frames (values, column order, types),
problems (codes, files, lines, fields, messages, order) and counts recorded from the reader of
commit fbde6f2 (the last with a line-by-line and a columnar reader, which agreed) on awkward lines,
on the input cases of issue 11 and on randomly corrupted files (``tests/fixtures/loading_expected``,
written by its ``make.py``); plus properties any reading must have, and the key census that decides
which lines polars reads (``io/key_census.py``)."""
from __future__ import annotations

import gzip
import json
import random
import shutil
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import SYNTHETIC, harness_line, write_jsonl
from voxmem_analysis.io import load_release

FIXTURES = Path(__file__).resolve().parent / "fixtures"
EXPECTED = FIXTURES / "loading_expected"


AWKWARD = [
    '{"item_id": "q_1_8k", "model": "M", "model": "N"}',                       # repeated key
    '\ufeff' + json.dumps(harness_line(item_id="q_00010_16k", context_length="16K")),
    json.dumps(harness_line(response="line\u2028separator\u2029inside", item_id="q_00010_32k", context_length="32K")),
    json.dumps(harness_line(response="\ud800", item_id="q_00012_8k", question_id="q_00012")),   # lone surrogate
    json.dumps(harness_line(verdict="true", item_id="q_00013_8k", question_id="q_00013")),     # bool as text
    json.dumps(harness_line(session_count=3.0, item_id="q_00014_8k", question_id="q_00014")),
    json.dumps(harness_line(session_count=3.5, item_id="q_00015_8k", question_id="q_00015")),
    json.dumps(harness_line(session_count="7", item_id="q_00016_8k", question_id="q_00016")),
    json.dumps(harness_line(n_audio_clips=10**20, item_id="q_00017_8k", question_id="q_00017")),
    json.dumps(harness_line(gold_json={"answer": "x", "b": [1, {"c": None}]}, item_id="q_00018_8k", question_id="q_00018")),
    json.dumps(harness_line(judge_raw={"verdict": "correct"}, item_id="q_00019_8k", question_id="q_00019")),
    json.dumps(harness_line(latency_ms=812, item_id="q_00020_8k", question_id="q_00020")),   # extra field
    json.dumps(harness_line(model=" Spaced ", item_id="q_00021_8k", question_id="q_00021")),
    json.dumps(harness_line(item_id="q_00022", question_id="q_00022")),                      # no budget suffix
    json.dumps(harness_line(response="", verdict=True, item_id="q_00023_8k", question_id="q_00023")),
    json.dumps(harness_line(response="\u001c", verdict=True, item_id="q_00024_8k", question_id="q_00024")),
    json.dumps(harness_line(system_prompt_delivery="other", item_id="q_00025_8k", question_id="q_00025")),
    json.dumps(harness_line(context_length="32k", item_id="q_00026_8k", question_id="q_00026")),
    json.dumps(harness_line(evidence_type="nonsense", item_id="q_00027_8k", question_id="q_00027")),
    json.dumps(harness_line(provider_rejected=True, response=None, verdict=None, item_id="q_00028_8k", question_id="q_00028")),
    '{"item_id": "q_00029_8k", "model": "M", "verdict": NaN}',
    '{"item_id": "q_00030_8k", "model": "M"} trailing',
    '[1, 2, 3]',
    '{"item_id": "q_00031_8k", "session_count": 007, "model": "M"}',
    '{"item_id": "q_\\u0030\\u00300_8k", "m\\u006fdel": "M", "model": "N"}',               # escaped key repeated
    json.dumps(harness_line()) + "\r",                                                         # CRLF
    json.dumps(harness_line()),                                                                # identical duplicate
    json.dumps(harness_line(verdict=False, response="other")),                                 # conflicting duplicate
    "   ",
    json.dumps(harness_line(item_id="q_00032_8k", question_id="q_00032", input_condition="transcript_only")),
]




def _awkward(tmp: Path, with_items: bool) -> Path:
    root = tmp / "rel"
    write_jsonl(root / "predictions" / "c" / "awkward.jsonl", AWKWARD)
    write_jsonl(root / "ablation" / "transcript_only" / "x.jsonl", AWKWARD[-6:])
    write_jsonl(root / "predictions" / "d" / "empty.jsonl", [])
    if with_items:
        shutil.copy(SYNTHETIC / "items.csv", root / "items.csv")
    return root


#: Values of every JSON type, in any field (the reader must treat each as Python's json reads it).
ODD = [None, "", " ", "true", "FALSE ", 0, 1, 3.0, 3.5, -0.0, True, False, "7", " -7 ", 10**20, {"a": 1}, [1], [], {},
       ["x"], "8k", "32K", "speech", "answer_refusal", "insufficient_evidence", "audio", "Transcript", "\u001c", "x\u00a0",
       "q_00010", "q_00010_8k\n", "native", "other"]
FIELDS = list(harness_line().keys()) + ["provider_rejected", "synthetic", "input_condition", "source_operation",
                                        "paired_question_id", "error", "latency_ms", "status", "budget", "Model"]


def _corrupt(tmp: Path, seed: int) -> Path:
    """40 lines of the synthetic release with values of other types, keys added or dropped, text inserted."""
    rng = random.Random(seed)
    root = tmp / "rel"
    lines = []
    for ln in _BASE_40:
        rec = json.loads(ln)
        if rng.random() < 0.5:
            for _ in range(rng.randint(1, 3)):
                f = rng.choice(FIELDS)
                if rng.random() < 0.2:
                    rec.pop(f, None)
                else:
                    rec[f] = rng.choice(ODD)
        text = json.dumps(rec, ensure_ascii=rng.random() < 0.5)
        if rng.random() < 0.15:
            pos = rng.randint(0, len(text))
            text = text[:pos] + rng.choice(_TRICKY) + text[pos:]
        if rng.random() < 0.05:
            text = text[:-1] + ', "model": "Z"}'
        lines.append(text)
        if rng.random() < 0.05:
            lines.append(text)
    sub = rng.choice(["predictions", "predictions", "ablation"])
    folder = rng.choice(["full_audio", "transcript", "m", "FULL"]) if sub == "ablation" else "m"
    path = root / sub / folder / "p.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogatepass"))
    if sub == "ablation":
        write_jsonl(root / "predictions" / "m" / "p.jsonl", [_BASE_40[0]])
    if rng.random() < 0.6:
        shutil.copy(SYNTHETIC / "items.csv", root / "items.csv")
    return root


def _base_lines() -> list[str]:
    path = sorted((SYNTHETIC / "predictions").rglob("*.jsonl.gz"))[0]
    return gzip.decompress(path.read_bytes()).decode().split("\n")[:40]


_BASE_40 = _base_lines()
_BASE = _BASE_40[:12]
_TRICKY = ['"', "\\", "{", "}", ",", ":", " ", "0", "n", "t", "\u2028", "\r", "\ufeff", "\x00", "\\u", "\\ud800",
           '"model": "X", ', '"verdict": "true", ', '"session_count": 2.5, ', '"extra": [1], ', "null", "\n",
           'x\\"', '"Model": "x", ', "\\\\", "\t", '"n_audio_clips": 1e2, ', '"response": "\\u001c", ']


@st.composite
def corrupted(draw):
    lines = list(_BASE)
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(lines) - 1))
        kind = draw(st.sampled_from(["insert", "delete", "duplicate", "swap_value"]))
        line = lines[i]
        pos = draw(st.integers(0, max(len(line), 1)))
        if kind == "insert":
            lines[i] = line[:pos] + draw(st.sampled_from(_TRICKY)) + line[pos:]
        elif kind == "delete" and line:
            lines[i] = line[:pos] + line[pos + 1:]
        elif kind == "duplicate":
            lines.insert(draw(st.integers(0, len(lines))), line)
        else:
            lines[i] = line.replace('"verdict": false', '"verdict": true').replace('"native"', '"folded"')
    return lines


def _issue11(tmp_path: Path) -> Path:
    """Symlinked folders and files, extensions in any case, CR-only line endings, a gzip stream cut
    short, ablation conditions spelled otherwise / unknown / missing, a model spelled two ways."""
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "model-a" / "p.JSONL", [harness_line(), harness_line(item_id="q_00010_64k",
                                                                                             context_length="64K")])
    other = write_jsonl(tmp_path / "elsewhere" / "model-b" / "p.jsonl", [harness_line(model="Model-B")]).parent
    (root / "predictions" / "model-b").symlink_to(other, target_is_directory=True)
    (root / "predictions" / "model-b-loop").symlink_to(root / "predictions", target_is_directory=True)
    (root / "predictions" / "model-c").mkdir()
    (root / "predictions" / "model-c" / "p.jsonl").write_bytes(
        "".join(json.dumps(harness_line(model="Model-C", item_id=f"q_{i:05d}_8k", question_id=f"q_{i:05d}")) + "\r"
                for i in range(20, 26)).encode())
    blob = gzip.compress("".join(json.dumps(harness_line(model="Model-D", item_id=f"q_{i:05d}_8k", question_id=f"q_{i:05d}"))
                                 + "\n" for i in range(30, 130)).encode(), mtime=0)
    (root / "predictions" / "model-d").mkdir()
    (root / "predictions" / "model-d" / "p.Jsonl.Gz").write_bytes(blob[: len(blob) * 2 // 3])
    write_jsonl(root / "predictions" / "model-e" / "p.jsonl", [harness_line(model="model a")])
    write_jsonl(root / "ablation" / "FULL_AUDIO" / "m" / "p.jsonl", [harness_line(), harness_line(
        item_id="q_00010_16k", context_length="16K", input_condition="transcript")])
    write_jsonl(root / "ablation" / "transcript_only" / "m" / "p.jsonl", [harness_line(input_condition="whisper")])
    write_jsonl(root / "ablation" / "top.jsonl", [harness_line(), harness_line(model="B", input_condition="full_audio")])
    return root


#: Releases whose expected reading is recorded (seeds of `_corrupt` chosen among those the old reader
#: read without crashing; the crashes it had are tested in test_validation_adversarial.py).
CASES = {"awkward_items": lambda t: _awkward(t, True), "awkward_no_items": lambda t: _awkward(t, False),
         "issue11": _issue11, **{f"corrupt_{s}": (lambda t, s=s: _corrupt(t, s)) for s in (0, 1, 2, 3, 6, 7, 9, 10, 11, 12, 13, 14)}}


def _json_value(v):
    return v if v is None or isinstance(v, (str, bool, int)) else repr(v)


def snapshot(rel) -> dict:
    """What a loaded release is made of, as JSON: frames (columns, types, rows), problems, counts."""
    frames = {}
    for name in ("frame", "judge2", "ablation"):
        f = getattr(rel, name)
        frames[name] = None if f is None else {
            "columns": f.columns, "dtypes": [str(t) for t in f.dtypes],
            "rows": [[_json_value(v) for v in row] for row in f.rows()]}
    return {"frames": frames, "problems": [p.as_dict() for p in rel.problems], "stats": rel.stats}


@pytest.mark.parametrize("name", sorted(CASES))
def test_reading_is_the_recorded_one(tmp_path, name):
    rel = load_release(CASES[name](tmp_path), strict=False, cache=False)
    expected = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
    got = json.loads(json.dumps(snapshot(rel), sort_keys=True))
    assert got["problems"] == expected["problems"]
    assert got["stats"] == expected["stats"]
    assert got["frames"] == expected["frames"]


def test_recorded_cases_are_not_trivial():
    """The recorded readings hold rows, rejected lines and findings of many kinds."""
    codes, rows = set(), 0
    for name in CASES:
        expected = json.loads((EXPECTED / f"{name}.json").read_text(encoding="utf-8"))
        codes |= {p["code"] for p in expected["problems"]}
        rows += len(expected["frames"]["frame"]["rows"])
    assert rows > 100 and len(codes) >= 20, (rows, sorted(codes))


# ------------------------------------------------------------------ properties (hypothesis)
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=corrupted(), with_items=st.booleans())
def test_randomly_corrupted_files_lose_no_line(tmp_path_factory, lines, with_items):
    """Every non-blank line is a row, a rejected line or an identical copy; every row holds the
    values Python's json reads on its line; every line finding names its file and line."""
    root = tmp_path_factory.mktemp("corrupt")
    (root / "predictions").mkdir()
    text = "\n".join(lines)
    (root / "predictions" / "p.jsonl").write_text(text, encoding="utf-8", errors="surrogatepass")
    if with_items:
        shutil.copy(SYNTHETIC / "items.csv", root / "items.csv")
    rel = load_release(root, strict=False, cache=False)
    s = rel.stats
    # as the reader reads the file (io/files.py): a leading byte-order mark dropped; "\r\n" and, in a file
    # that has any, each bare "\r" read as a line break
    read = text[1:] if text.startswith("\ufeff") else text
    read = read.replace("\r\n", "\n").replace("\r", "\n") if "\r" in read else read
    numbered = {n: ln for n, ln in enumerate(read.split("\n"), 1) if ln.strip()}
    assert s["lines"] == len(numbered)
    assert s["rows"] + s["rejected_lines"] + s["duplicates_identical"] == s["lines"]
    for r in rel.frame.select("source_line", "model", "item_id", "verdict", "response").iter_rows(named=True):
        rec = json.loads(numbered[r["source_line"]])
        assert (rec["model"], rec["item_id"], rec.get("response")) == (r["model"], r["item_id"], r["response"])
        assert r["verdict"] == (rec.get("verdict") if not isinstance(rec.get("verdict"), str)
                                else rec["verdict"].strip().lower() == "true")
    for p in rel.problems:
        if p.code not in ("no_predictions", "mixed_prompt_delivery", "mixed_judges", "incomplete_run",
                          "ar_source_unknown", "model_not_in_registry", "incomplete_64k_run"):
            # file-level findings (an empty file, bare carriage returns read as line breaks) name no line
            file_level = p.code in ("empty_file", "cr_line_endings") and p.line is None
            assert p.file == "predictions/p.jsonl" and (p.line in numbered or file_level), p


# ------------------------------------------------------------------ the key census
def _readable(lines: list[str]) -> list[bool]:
    from voxmem_analysis.io.key_census import census, filled, line_ranges, readable
    from voxmem_analysis.io.prediction_lines import SCHEMA

    raw = "\n".join(lines).encode("utf-8", "surrogatepass")
    starts, ends, _ = line_ranges(raw)
    rec = pl.read_ndjson(raw, schema=SCHEMA)
    n_keys, n_text, counted, names = census(raw, starts, ends)
    n_all, n_str = filled(rec)
    return readable(rec, n_keys - n_all, n_text - n_str, counted, names, SCHEMA).tolist()


PLAIN = json.dumps(harness_line())


@pytest.mark.parametrize("line", [
    PLAIN[:-1] + ', "latency_ms": 812}',                     # a field outside the frame: an extra column
    PLAIN[:-1] + ', "latency_ms": null}',                    # ... even when null
    PLAIN[:-1] + ', "verdict": null}',                       # a repeated key (null after a value)
    '{"verdict": null, ' + PLAIN[1:-1] + ', "verdict": null}'.replace(', "verdict": true', ""),
    PLAIN.replace('"response": "paused"', '"response": 5'),  # a number where text belongs
    PLAIN.replace('"judge": "gemini-3.7-flash"', '"judge": 100000000000000000000'),
    PLAIN.replace('"gold_json": "{\\"answer\\": \\"paused\\"}"', '"gold_json": {"answer": "paused"}'),
    PLAIN.replace('"response": "paused"', '"response": ["paused"]'),
    PLAIN.replace('"response": "paused"', '"response": "\\ud800"'),   # an unpaired surrogate
    PLAIN.replace('"model": ', '"model" : '),                 # white space before a colon
    PLAIN.replace('"model": "Model-A"', '"m\\u006fdel": "Model-A", "model": "N"'),
])
def test_census_leaves_each_awkward_line_to_python(line):
    assert _readable([PLAIN, line, PLAIN]) == [True, False, True]


def test_census_reads_plain_lines_with_polars():
    lines = [PLAIN, PLAIN.replace('"response": "paused"', '"response": null'),
             PLAIN.replace('"response": "paused"', '"response": "3 (\\"three\\": yes)"'),
             json.dumps(harness_line(response="é ✓ 😀"), ensure_ascii=True), json.dumps(harness_line(response="é ✓ 😀"),
                                                                                    ensure_ascii=False)]
    assert _readable(lines) == [True] * len(lines)
