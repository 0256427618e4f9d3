"""Issue 11, property: corrupt random lines of a small release (truncate a line, put garbage in it,
drop a required field, give a field a value of the wrong type).  The result is either an error
naming exactly those lines (strict) or the same frame minus exactly the reported lines (lenient),
on both readers (columnar and line by line)."""
from __future__ import annotations

import json

import polars as pl
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import harness_line, write_jsonl
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_release

_BUDGETS = ("8K", "16K", "32K", "64K")
#: (file, records) of the clean release: two models, three questions, four budgets.
FILES = {
    f"predictions/{folder}/p_{b.lower()}.jsonl": [
        harness_line(model=model, item_id=f"q_{q:05d}_{b.lower()}", question_id=f"q_{q:05d}", context_length=b,
                     verdict=(q + i) % 2 == 0, response=f"answer {q}")
        for q in (10, 12, 14)]
    for folder, model in (("model-a", "Model-A"), ("model-b", "Model-B")) for i, b in enumerate(_BUDGETS)
}
LINES = [(f, i + 1) for f in sorted(FILES) for i in range(len(FILES[f]))]
#: Fields whose absence is an error when there is no item table.
REQUIRED = ("model", "item_id", "evidence_type", "memory_operation", "expected_response")
#: A value of the wrong type for a field, each an error.
WRONG = (("model", 5), ("model", ["Model-A"]), ("item_id", 3), ("verdict", "maybe"), ("verdict", 7),
         ("allow_abstention", "perhaps"), ("provider_rejected", {"x": 1}))


@st.composite
def corruption(draw):
    """``{(file, line): new text}`` for 1-6 distinct lines."""
    chosen = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=6, unique=True))
    out = {}
    for f, line in chosen:
        rec = dict(FILES[f][line - 1])
        text = json.dumps(rec)
        kind = draw(st.sampled_from(["truncate", "garbage", "drop", "wrong_type"]))
        if kind == "truncate":   # a strict prefix of an object is never a whole object
            text = text[:draw(st.integers(1, len(text) - 1))]
        elif kind == "garbage":  # a raw control character is invalid inside and outside JSON strings
            at = draw(st.integers(0, len(text)))
            junk = draw(st.text(alphabet='ab#@!{}[]:," 1', max_size=6))
            text = text[:at] + "\x01" + junk + text[at:]
        elif kind == "drop":
            del rec[draw(st.sampled_from(REQUIRED))]
            text = json.dumps(rec)
        else:
            key, value = draw(st.sampled_from(WRONG))
            rec[key] = value
            text = json.dumps(rec)
        out[(f, line)] = text
    return out


def _write(root, bad: dict) -> None:
    for f, recs in FILES.items():
        write_jsonl(root / f, [bad.get((f, i + 1), r) for i, r in enumerate(recs)])


def _clean(tmp_path_factory):
    root = tmp_path_factory.mktemp("clean")
    _write(root, {})
    return load_release(root, cache=False).frame


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(bad=corruption())
def test_corrupted_lines_are_named_exactly_or_left_out_exactly(tmp_path_factory, bad):
    clean = _clean(tmp_path_factory)
    root = tmp_path_factory.mktemp("bad")
    _write(root, bad)
    for bulk in (True, False):
        try:
            load_release(root, bulk=bulk, cache=False)
        except VoxMemDataError as exc:
            named = {(p.file, p.line) for p in exc.problems if p.severity == "error"}
            assert named == set(bad), exc
            for f, line in bad:
                assert f"{f}:{line}" in str(exc)
        else:
            raise AssertionError("a corrupted release loaded without an error")
        rel = load_release(root, strict=False, bulk=bulk, cache=False)
        assert {(p.file, p.line) for p in rel.errors()} == set(bad)
        assert rel.stats["rejected_lines"] == len(bad)
        gone = pl.DataFrame({"source_file": [f for f, _ in bad], "source_line": [ln for _, ln in bad]},
                            schema={"source_file": pl.Utf8, "source_line": pl.Int64})
        expected = clean.join(gone, on=["source_file", "source_line"], how="anti", maintain_order="left")
        assert rel.frame.columns == expected.columns
        assert rel.frame.equals(expected)
