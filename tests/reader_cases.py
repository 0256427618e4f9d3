"""Inputs for the recorded readings of the LongMemEval and error-attribution readers
(``tests/test_io_longmemeval.py``, ``tests/test_io_voxmem_attribution.py``): hand-made bad inputs and seeded random corruptions of the
shipped LongMemEval example and of the synthetic release's audit records, and :func:`reading`, the
JSON-able snapshot of what a reader gave (frames, problems, counts).

``tests/fixtures/reader_expected/make.py`` writes the expected readings with the reader on PYTHONPATH."""
from __future__ import annotations

import gzip
import hashlib
import json
import math
import random
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LME = ROOT / "data" / "examples" / "longmemeval"
AUDIT = ROOT / "data" / "synthetic" / "attribution" / "audit_64k.jsonl"
VERDICT_FILE = "verdicts/synth-rag_32k.jsonl.eval-results-synthetic-judge-1"

# values a corrupted field may take: every JSON type, odd texts and numbers
_VALUES = [None, True, False, 0, 1, 2, -1, 1.0, 0.0, 2.5, "", " ", "true", "FALSE", "yes", "No", "1", "0", "maybe",
           "x\u2028y", "é", "\ufeffa", [], {}, ["a"], {"a": 1}, {"model": "m", "label": True}, 12, 10**20, "30c3e4ed",
           "specific", "none", "evidence", "unrelated", "single-session-user", "multi-session"]


# ----------------------------------------------------------------------------- LongMemEval
def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _edit_line(line: str, fn) -> str:
    rec = json.loads(line)
    fn(rec)
    return json.dumps(rec, ensure_ascii=False)


def lme_copy(tmp: Path) -> Path:
    dst = tmp / "lme"
    shutil.copytree(LME, dst)
    return dst


def _verdict_edit(fn_of_lines):
    def build(tmp: Path):
        root = lme_copy(tmp)
        p = root / VERDICT_FILE
        p.write_text(fn_of_lines(_lines(p)), encoding="utf-8")
        return root / "manifest.csv", root / "questions.json", {}
    return build


def _records(edits: dict):
    """Verdict file with the given line edits (index -> function of the record, or raw text)."""
    def f(lines):
        for i, e in edits.items():
            lines[i] = e if isinstance(e, str) else _edit_line(lines[i], e)
        return "\n".join(lines) + "\n"
    return _verdict_edit(f)


def _set(**kv):
    return lambda r: r.update(kv)


def _drop(*keys):
    return lambda r: [r.pop(k, None) for k in keys]


def _label(v):
    return lambda r: r["autoeval_label"].update(label=v)


def _raw_file(name: str, data: bytes | str, manifest: str | None = None, questions: str = "questions.json"):
    def build(tmp: Path):
        root = lme_copy(tmp)
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        (p.write_bytes if isinstance(data, bytes) else lambda d: p.write_text(d, encoding="utf-8"))(data)
        if manifest is not None:
            (root / "manifest.csv").write_text(manifest, encoding="utf-8")
        return root / "manifest.csv", root / questions, {}
    return build


def _verdict_text(fn):
    def build(tmp: Path):
        root = lme_copy(tmp)
        p = root / VERDICT_FILE
        data = fn(p.read_text(encoding="utf-8"))
        (p.write_bytes if isinstance(data, bytes) else lambda d: p.write_text(d, encoding="utf-8", newline=""))(data)
        return root / "manifest.csv", root / "questions.json", {}
    return build


def _manifest(text: str):
    return _raw_file("manifest.csv", text, None)


def _head(n: int = 2) -> str:
    return "\n".join(_lines(LME / "manifest.csv")[:n + 1]) + "\n"


def _questions(name: str, text, **kw):
    def build(tmp: Path):
        root = lme_copy(tmp)
        p = root / name
        (p.write_bytes if isinstance(text, bytes) else lambda d: p.write_text(d, encoding="utf-8"))(text)
        return root / "manifest.csv", p, kw
    return build


def _qlist() -> list[dict]:
    return json.loads((LME / "questions.json").read_text(encoding="utf-8"))


def _q_json(edit) -> str:
    qs = _qlist()
    edit(qs)
    return json.dumps(qs, indent=1)


def _q_csv(qs=None, sep=",") -> str:
    qs = qs or _qlist()
    return "question_id" + sep + "question_type\n" + "".join(f"{q['question_id']}{sep}{q['question_type']}\n" for q in qs)


def _results_layout(text: str) -> str:
    recs = [json.loads(ln) for ln in text.splitlines() if ln.strip()]
    return json.dumps({"meta": {"a": [1, 2]}, "results": recs}, indent=1)


def _array_layout(text: str) -> str:
    recs = [json.loads(ln) for ln in text.splitlines() if ln.strip()]
    return json.dumps(recs, indent=2)


def _big(n_copies: int, corrupt_seed: int | None):
    """Every verdict file repeated (question ids made unique by copy), for
    the columnar path; the questions repeated alike; optionally seeded corruptions."""
    def build(tmp: Path):
        root = lme_copy(tmp)
        qs = _qlist()
        allq = [dict(q, question_id=f"{q['question_id']}{'' if c == 0 else '_' + str(c)}") for c in range(n_copies) for q in qs]
        (root / "questions.json").write_text(json.dumps(allq), encoding="utf-8")
        rng = random.Random(corrupt_seed)
        for p in sorted((root / "verdicts").iterdir()):
            out = []
            for c in range(n_copies):
                for ln in _lines(p):
                    rec = json.loads(ln)
                    if c:
                        rec["question_id"] = f"{rec['question_id']}_{c}"
                    out.append(json.dumps(rec))
            if corrupt_seed is not None:
                for _ in range(40):
                    out = _corrupt_lines(out, rng)
            p.write_text("\n".join(out) + "\n", encoding="utf-8")
        return root / "manifest.csv", root / "questions.json", {}
    return build


def _corrupt_lines(lines: list[str], rng: random.Random) -> list[str]:
    i = rng.randrange(len(lines))
    kind = rng.choice(["value", "value", "value", "drop_key", "repeat", "truncate", "label", "extra", "text"])
    try:
        rec = json.loads(lines[i])
    except ValueError:
        rec = None
    if kind == "repeat":
        lines.insert(rng.randint(0, len(lines)), lines[i] if rng.random() < 0.5 else _swap_label(lines[i]))
    elif kind == "truncate":
        lines[i] = lines[i][: rng.randint(0, len(lines[i]))]
    elif kind == "text":
        lines[i] = rng.choice(["[1, 2]", "null", '"x"', "{", "{}", '{"question_id": "a", "question_id": "b"}',
                               lines[i].replace('"', "'", 1), lines[i] + " x", '{"question_id": "\\ud800"}'])
    elif isinstance(rec, dict):
        if kind == "value" and rec:
            rec[rng.choice(sorted(rec))] = rng.choice(_VALUES)
        elif kind == "drop_key" and rec:
            rec.pop(rng.choice(sorted(rec)))
        elif kind == "label" and isinstance(rec.get("autoeval_label"), dict):
            rec["autoeval_label"][rng.choice(["label", "model", "explanation"])] = rng.choice(_VALUES)
        elif kind == "extra":
            rec[rng.choice(["resp_len", "score", "status", "label", "model", "note", "autoeval_x"])] = rng.choice(_VALUES)
        lines[i] = json.dumps(rec, ensure_ascii=rng.random() < 0.5)
    return lines


def _swap_label(line: str) -> str:
    try:
        rec = json.loads(line)
        rec["autoeval_label"]["label"] = not rec["autoeval_label"]["label"]
        return json.dumps(rec)
    except (ValueError, TypeError, KeyError):
        return line


def _seeded(seed: int):
    def build(tmp: Path):
        rng = random.Random(seed)
        root = lme_copy(tmp)
        files = sorted((root / "verdicts").iterdir())
        for _ in range(rng.randint(1, 6)):
            p = rng.choice(files)
            lines = _lines(p)
            if lines:
                p.write_text("\n".join(_corrupt_lines(lines, rng)) + "\n", encoding="utf-8")
        if rng.random() < 0.3:
            p = rng.choice(files)
            t = p.read_text(encoding="utf-8")
            how = rng.choice(["crlf", "bom", "blank", "empty", "gzcut"])
            if how == "gzcut":
                data = gzip.compress(t.encode())
                p.write_bytes(data[: len(data) // 2])
            else:
                p.write_text({"crlf": t.replace("\n", "\r\n"), "bom": "\ufeff" + t, "blank": t.replace("\n", "\n\n  \n", 3),
                              "empty": ""}[how], encoding="utf-8", newline="")
        return root / "manifest.csv", root / "questions.json", {}
    return build


def _gz_verdicts(cut: bool):
    def build(tmp: Path):
        root = lme_copy(tmp)
        p = root / VERDICT_FILE
        data = gzip.compress(p.read_bytes())
        p.unlink()
        (root / (VERDICT_FILE + ".gz")).write_bytes(data[: len(data) * 2 // 3] if cut else data)
        m = (root / "manifest.csv").read_text().replace(VERDICT_FILE, VERDICT_FILE + ".gz")
        (root / "manifest.csv").write_text(m)
        return root / "manifest.csv", root / "questions.json", {}
    return build


LME_CASES = {
    "clean": _records({}),
    "truncated_line": _records({3: '{"question_id": "77f7a62e", "hypo'}),
    "bad_json": _records({4: "{'question_id': 'x'}", 5: "not json", 6: '{"a": 1,}'}),
    "not_object": _records({2: "[1, 2]", 3: '"text"', 4: "null", 5: "12"}),
    "missing_qid": _records({0: _drop("question_id"), 1: _set(question_id=""), 2: _set(question_id="  "),
                             3: _set(question_id=None), 4: _set(question_id=5), 5: _set(question_id=True),
                             6: _set(question_id=["a"]), 7: _set(question_id={"a": 1}), 8: _set(question_id=1.5)}),
    "unknown_qid": _records({0: _set(question_id="nope"), 1: _set(question_id=" 30c3e4ed ")}),
    "type_mismatch": _records({0: _set(question_type="multi-session"), 1: _set(question_type=3),
                               2: _set(question_type=""), 3: _set(question_type=None), 4: _set(question_type=["x"]),
                               5: _set(question_id="nope", question_type="x"), 6: _set(question_type="single-session-user")}),
    "labels": _records({0: _label(None), 1: _label("yes"), 2: _label(" TRUE "), 3: _label(1), 4: _label(0.0),
                        5: _label(2), 6: _label("maybe"), 7: _label([]), 8: _label({}), 9: _drop("autoeval_label"),
                        10: _set(autoeval_label=True), 11: _set(autoeval_label="no"), 12: _set(autoeval_label=None),
                        13: lambda r: (r.pop("autoeval_label"), r.update(correct=True)),
                        14: lambda r: (r.pop("autoeval_label"), r.update(correct="x")),
                        15: _set(autoeval_label=[1]), 16: _set(autoeval_label={"label": True}),
                        17: lambda r: r["autoeval_label"].pop("label"), 18: _label(1.5),
                        19: lambda r: r.update(correct=False), 20: _set(autoeval_label=1)}),
    "judge_model": _records({0: lambda r: r["autoeval_label"].update(model=None),
                             1: lambda r: r["autoeval_label"].update(model=5),
                             2: lambda r: r["autoeval_label"].update(model="other"),
                             3: lambda r: r["autoeval_label"].update(explanation="because", score=0.5),
                             4: lambda r: r["autoeval_label"].update(explanation={"a": [1]})}),
    "hypothesis": _records({0: _set(hypothesis=5), 1: _set(hypothesis={"a": "é"}), 2: _set(hypothesis=["x", 1]),
                            3: _set(hypothesis=None), 4: _drop("hypothesis"), 5: _set(hypothesis=True),
                            6: _set(hypothesis="x\u2028y\u0085z")}),
    "unicode": _records({0: '{"question_id": "30c3e4ed", "hypothesis": "\\ud800", "autoeval_label": {"model": "m", "label": true}}',
                         1: '{"question_id": "73a5ee48", "\\udc00k": 1, "autoeval_label": {"model": "\\ud83d", "label": true}}',
                         2: '{"question_id": "\\ud800", "autoeval_label": {"model": "m", "label": true}}'}),
    "duplicate_key": _records({0: '{"question_id": "30c3e4ed", "question_id": "30c3e4ed", "autoeval_label": true}'}),
    "duplicates": _records({1: lambda r: r.update(question_id=json.loads(_lines(LME / VERDICT_FILE)[0])["question_id"]),
                            2: lambda r: r.update(question_id=json.loads(_lines(LME / VERDICT_FILE)[0])["question_id"],
                                                  hypothesis="other"),
                            3: lambda r: (r.update(question_id=json.loads(_lines(LME / VERDICT_FILE)[0])["question_id"]),
                                          r["autoeval_label"].update(label=None)),
                            4: lambda r: r.update(question_id=json.loads(_lines(LME / VERDICT_FILE)[5])["question_id"]),
                            5: _label(None)}),
    "extras": _records({0: _set(resp_len=10, score=0.5, note="x", flag=True, nested={"a": [1, {"b": None}]}, lst=[1, "a"]),
                        1: _set(resp_len=11.5, score="high", flag=None, status="odd", label="dup", judge="j"),
                        2: _set(resp_len=10**20, source_file="s", correct=True),
                        3: _set(model="m", question_type="single-session-user")}),
    "crlf": _verdict_text(lambda t: t.replace("\n", "\r\n")),
    "bare_cr": _verdict_text(lambda t: t.replace("\n", "\r")),
    "bom": _verdict_text(lambda t: "\ufeff" + t),
    "blank_lines": _verdict_text(lambda t: "\n\n" + t.replace("\n", "\n \t\n", 4) + "\n\n"),
    "no_final_newline": _verdict_text(lambda t: t.rstrip("\n")),
    "empty_file": _verdict_text(lambda t: ""),
    "blank_file": _verdict_text(lambda t: "\n  \n"),
    "not_utf8": _verdict_text(lambda t: t.encode("utf-8").replace(b"SYNTHETIC", b"SYN\xffTHETIC", 1)),
    "gz": _gz_verdicts(False),
    "gz_cut": _gz_verdicts(True),
    "array_layout": _verdict_text(_array_layout),
    "results_layout": _verdict_text(_results_layout),
    "array_cut": _verdict_text(lambda t: _array_layout(t)[:1500]),
    "array_not_objects": _verdict_text(lambda t: "[1, {\"question_id\": \"30c3e4ed\", \"autoeval_label\": true}, [2], \"x\"]"),
    "array_empty": _verdict_text(lambda t: "[]"),
    "results_bad": _verdict_text(lambda t: '{"results": [{"question_id": "30c3e4ed", "correct": true}, 5, ]}'),
    "object_not_results": _verdict_text(lambda t: '{"a": 1}\n'),
    "manifest_unknown_column": _manifest("path,system,budget,judge,extra\n" + "".join(
        ln + ",x\n" for ln in _lines(LME / "manifest.csv")[1:3])),
    "manifest_dup_column": _manifest("path,system,system\nverdicts/x,a,b\n"),
    "manifest_missing_column": _manifest("path,budget\nverdicts/x,32k\n"),
    "manifest_case_spaces": _manifest(" PATH , System ,Budget,JUDGE\n" + "\n".join(_lines(LME / "manifest.csv")[1:3]) + "\n"),
    "manifest_bad_rows": _manifest(_head(2) + "a,b\n" + "x,y,z,w,v\n\n , \n"
                                   + _lines(LME / "manifest.csv")[3] + "\n"),
    "manifest_missing_value": _manifest(_head(1) + ",S,32k,j\n" + _lines(LME / "manifest.csv")[2].replace("synth-full-context", " ") + "\n"),
    "manifest_missing_file": _manifest(_head(1) + "verdicts/nope.jsonl,S,32k,j\nverdicts,T,8k,j\n"),
    "manifest_dup_path": _manifest(_head(2) + _lines(LME / "manifest.csv")[1].replace("verdicts/", "verdicts/../verdicts/") + "\n"),
    "manifest_empty": _manifest(""),
    "manifest_header_only": _manifest("path,system,budget,judge\n"),
    "manifest_blank_only": _manifest("\n \n"),
    "manifest_crlf_bom": _manifest("\ufeff" + _head(3).replace("\n", "\r\n")),
    "manifest_quoted": _manifest('path,system,budget,judge\n"' + _lines(LME / "manifest.csv")[1].replace(",", '","') + '"\n'),
    "manifest_empty_budget_judge": _manifest(_head(1) + ",".join(_lines(LME / "manifest.csv")[2].split(",")[:2]) + ",,\n"
                                             + ",".join(_lines(LME / "manifest.csv")[3].split(",")[:3]) + ",\n"),
    "manifest_no_budget_column": _manifest("path,system\n" + "".join(",".join(ln.split(",")[:2]) + "\n"
                                                                    for ln in _lines(LME / "manifest.csv")[1:])),
    "manifest_not_there": lambda tmp: (lme_copy(tmp) / "nope.csv", tmp / "lme" / "questions.json", {}),
    "manifest_is_dir": lambda tmp: (lme_copy(tmp) / "verdicts", tmp / "lme" / "questions.json", {}),
    "questions_not_there": lambda tmp: (lme_copy(tmp) / "manifest.csv", tmp / "lme" / "nope.json", {}),
    "questions_csv": _questions("q.csv", _q_csv()),
    "questions_tsv": _questions("q.tsv", _q_csv(sep="\t")),
    "questions_csv_type_col": _questions("q.csv", _q_csv().replace("question_type", "type", 1)),
    "questions_csv_missing": _questions("q.csv", _q_csv().replace("question_type", "kind", 1)),
    "questions_csv_missing_key": _questions("q.csv", _q_csv().replace("question_type", "kind", 1), type_key="cat"),
    "questions_csv_type_key": _questions("q.csv", _q_csv().replace("question_type", "cat", 1), type_key="cat"),
    "questions_csv_odd": _questions("q.csv", _q_csv().replace("\n", "\n,\n", 1).replace(",single", ", single ", 2)
                                    + "x\n\"q,1\",multi-session\n"),
    "questions_csv_no_ext": _questions("questions", _q_csv()),
    "questions_jsonl": _questions("q.jsonl", "".join(json.dumps(q) + "\n" for q in _qlist()) + "\n[1]\nbad\n{}\n"),
    "questions_json_dict": _questions("q.json", json.dumps({q["question_id"]: q["question_type"] for q in _qlist()})),
    "questions_json_dict_of_dicts": _questions("q.json", json.dumps({q["question_id"]: {"question_type": q["question_type"]}
                                                                     for q in _qlist()} | {"z": {"x": 1}, "y": 5})),
    "questions_dups": _questions("q.json", _q_json(lambda qs: qs.extend([qs[0], dict(qs[1], question_type="other"),
                                                                        dict(qs[2], question_id=" " + qs[2]["question_id"])]))),
    "questions_bad_values": _questions("q.json", _q_json(lambda qs: (
        qs[0].update(question_type=None), qs[1].update(question_id=""), qs[2].update(question_type=5),
        qs[3].update(question_id=True), qs[4].update(question_type=[1]), qs[5].pop("question_type"),
        qs[6].update(type="x"), qs.append(7), qs.append([1]), qs[7].update(question_id=3.0)))),
    "questions_type_field": _questions("q.json", _q_json(lambda qs: [q.update(type=q.pop("question_type")) for q in qs])),
    "questions_type_key": _questions("q.json", _q_json(lambda qs: [q.update(cat=q["question_type"]) for q in qs]),
                                     type_key="cat"),
    "questions_bad_json": _questions("q.json", '[{"question_id": "a", "question_type": "b"},\n {"question_id": }]'),
    "questions_bad_dict_json": _questions("q.json", '{"a": "b",\n "c": }'),
    "questions_empty_list": _questions("q.json", "[]"),
    "questions_empty_file": _questions("q.json", ""),
    "questions_scalar": _questions("q.json", "5"),
    "questions_gz": _questions("q.json.gz", gzip.compress(json.dumps(_qlist()).encode())),
    "questions_bom_crlf": _questions("q.csv", "\ufeff" + _q_csv().replace("\n", "\r\n")),
    "big_clean": _big(90, None),
    "big_corrupt": _big(90, 7),
    **{f"seeded_{s}": _seeded(s) for s in range(40)},
}


def _path(v, tmp: str):
    if isinstance(v, str):
        return v.replace(tmp, "<tmp>")
    return v


def _cell(v):
    if isinstance(v, float) and math.isnan(v):
        return "NaN"
    return v


def _frame(df) -> dict:
    """A polars or pandas frame as columns, types and rows."""
    import polars as pl
    if not isinstance(df, pl.DataFrame):
        df = pl.from_pandas(df.astype(object).where(df.notna(), None)) if len(df) else pl.DataFrame(
            {c: [] for c in df.columns})
    rows = json.dumps([[_cell(v) for v in r] for r in df.rows()], sort_keys=True, default=repr)
    return {"columns": df.columns, "types": [str(t) for t in df.dtypes], "height": df.height,
            "rows_sha256": hashlib.sha256(rows.encode()).hexdigest(), "head": json.loads(rows)[:3]}


def _problems(problems, tmp: str) -> list:
    return [[p.code, p.severity, _path(p.file, tmp), p.line, p.field, _path(p.message, tmp), p.count] for p in problems]


def lme_reading(name: str, tmp: Path) -> dict:
    """What ``load_longmemeval(strict=False)`` gives for case ``name`` (paths under ``tmp`` as ``<tmp>``)."""
    from voxmem_analysis.io import load_longmemeval
    manifest, questions, kw = LME_CASES[name](tmp)
    data = load_longmemeval(manifest, questions, strict=False, **kw)
    t = str(tmp)
    man = data.manifest.drop(columns=["resolved"])
    return {"frame": _frame(data.frame), "questions": _frame(data.questions), "manifest": _frame(man),
            "problems": _problems(data.problems, t), "stats": data.stats,
            "dropped": [{k: _path(v, t) for k, v in d.items()} for d in data.dropped]}


# ----------------------------------------------------------------------------- attribution
def _audit_records() -> list[str]:
    return _lines(AUDIT)


def _audit_case(edit=None, files=None, copies: int = 1):
    """A release folder with ``attribution/`` files: the synthetic audit records (``copies`` times,
    item ids made unique), edited by ``edit(lines)``; ``files`` maps other names to bytes or text."""
    def build(tmp: Path) -> Path:
        root = tmp / "rel"
        (root / "attribution").mkdir(parents=True)
        lines = []
        for c in range(copies):
            for ln in _audit_records():
                lines.append(ln if c == 0 else ln.replace('"item_id": "', f'"item_id": "c{c}_', 1))
        if edit is not None:
            lines = edit(lines)
        if lines is not None:
            (root / "attribution" / "audit_64k.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8", newline="")
        for name, data in (files or {}).items():
            p = root / "attribution" / name
            p.parent.mkdir(parents=True, exist_ok=True)
            (p.write_bytes if isinstance(data, bytes) else lambda d: p.write_text(d, encoding="utf-8", newline=""))(data)
        return root
    return build


def _aedit(edits: dict):
    def f(lines):
        for i, e in edits.items():
            lines[i] = e if isinstance(e, str) else _edit_line(lines[i], e)
        return lines
    return f


def _aseeded(seed: int, copies: int = 1):
    def edit(lines):
        rng = random.Random(seed)
        for _ in range(rng.randint(1, 12) * copies):
            i = rng.randrange(len(lines))
            kind = rng.choice(["value", "value", "value", "drop", "repeat", "truncate", "text", "extra"])
            try:
                rec = json.loads(lines[i])
            except ValueError:
                rec = None
            if kind == "repeat":
                lines.insert(rng.randint(0, len(lines)), lines[i])
            elif kind == "truncate":
                lines[i] = lines[i][: rng.randint(0, len(lines[i]))]
            elif kind == "text":
                lines[i] = rng.choice(["[1]", "null", "{", "{}", '{"model": "a", "model": "b"}', lines[i] + ",",
                                       '{"model": "\\ud800", "item_id": "x"}', "\ufeff" + lines[i]])
            elif isinstance(rec, dict):
                if kind == "value":
                    rec[rng.choice(sorted(rec))] = rng.choice(_VALUES)
                elif kind == "drop":
                    rec.pop(rng.choice(sorted(rec)))
                else:
                    rec[rng.choice(["extra", "note", "score"])] = rng.choice(_VALUES)
                lines[i] = json.dumps(rec, ensure_ascii=rng.random() < 0.5)
        if rng.random() < 0.2:
            lines = [ln + "\r" for ln in lines]
        return lines
    return edit


ATTR_CASES = {
    "clean": _audit_case(),
    "fields": _audit_case(_aedit({
        0: _drop("model"), 1: _set(model=""), 2: _set(model=5), 3: _set(item_id=None), 4: _drop("commits"),
        5: _set(commits="maybe"), 6: _set(commits=None), 7: _set(source=["evidence"]), 8: _set(relation={}),
        9: _set(evidence_recovered="true"), 10: _set(evidence_recovered=1), 11: _set(source_session=True),
        12: _set(source_session=3.0), 13: _set(source_session="3"), 14: _set(answer=5), 15: _set(why=["a"]),
        16: _set(answer=None, why=None, source_session=None), 17: _drop("why", "answer", "relation"),
        18: _set(model=" ", item_id=" ", commits=1, evidence_recovered=None, source_session=-1, answer=True),
        19: _set(extra=[1], other={"a": 1}), 20: _set(commits=True, source=0, relation=1.0),
        21: _set(source_session=10**20)})),
    "bad_lines": _audit_case(_aedit({0: "[1]", 1: "null", 2: '{"model": "a", "model": "b"}', 3: "{", 4: "x",
                                     5: '{"model": "\\ud800", "item_id": "x"}', 6: '{"\\ud800": 1}', 7: "5"})),
    "duplicates": _audit_case(lambda ls: ls + [ls[0], ls[1], ls[1]]),
    "crlf": _audit_case(lambda ls: [ln + "\r" for ln in ls]),
    "bom": _audit_case(lambda ls: ["\ufeff" + ls[0]] + ls[1:]),
    "blank": _audit_case(lambda ls: ["", "  "] + ls[:5] + ["\t"] + ls[5:]),
    "empty": _audit_case(lambda ls: None, {"audit_64k.jsonl": ""}),
    "no_files": lambda tmp: (tmp / "rel" / "attribution").mkdir(parents=True) or tmp / "rel",
    "no_folder": lambda tmp: (tmp / "rel").mkdir() or tmp / "rel",
    "gz_and_more": _audit_case(None, {"sub/b.jsonl.gz": gzip.compress("\n".join(_audit_records()[:30]).encode()),
                                      "C.JSONL": "\n".join(_audit_records()[30:40]) + "\n",
                                      "notes.txt": "x"}),
    "gz_cut": _audit_case(None, {"b.jsonl.gz": gzip.compress("\n".join(_audit_records()[:300]).encode())[:2000]}),
    "not_utf8": _audit_case(None, {"b.jsonl": b'{"model": "a\xff"}\n'}),
    "big_clean": _audit_case(copies=3),
    "big_corrupt": _audit_case(_aseeded(99, 5), copies=3),
    **{f"seeded_{s}": _audit_case(_aseeded(s)) for s in range(30)},
}


def attr_reading(name: str, tmp: Path) -> dict:
    """What ``read_audit_files`` and ``drop_duplicate_records`` give for case ``name``."""
    from voxmem_analysis.io.voxmem.attribution import drop_duplicate_records, read_audit_files
    root = ATTR_CASES[name](tmp)
    rows, problems = read_audit_files(root)
    kept = drop_duplicate_records(rows, problems)
    cells = json.dumps([[_cell(r[k]) for k in r] for r in rows], sort_keys=True, default=repr)
    return {"n_rows": len(rows), "rows_sha256": hashlib.sha256(cells.encode()).hexdigest(), "head": json.loads(cells)[:3],
            "keys": sorted({k for r in rows for k in r}), "kept": len(kept), "problems": _problems(problems, str(tmp))}


def records_reading() -> dict:
    """``check_records`` of in-memory records of every shape."""
    from voxmem_analysis.io.voxmem.attribution import check_records
    recs = [json.loads(ln) for ln in _audit_records()[:5]]
    recs += [5, None, [], {}, dict(recs[0], commits="x", source_session=2.0), dict(recs[1], answer=3)]
    rows, problems = check_records(recs, "mem")
    return {"rows": [[_cell(r[k]) for k in r] for r in rows], "problems": _problems(problems, "/nowhere")}
