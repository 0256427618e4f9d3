"""Regression tests for adversarial input (the review of the loaders): no crash, no silent loss."""
from __future__ import annotations

import json

import pytest

from voxmem_analysis import VoxMemDataError, load_release
from voxmem_analysis.cli import main

from conftest import harness_line, write_jsonl

G = harness_line()


def codes(rel):
    return {p.code: p for p in rel.problems}


def test_input_condition_field_outside_ablation_does_not_double_count(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    write_jsonl(root / "predictions" / "a2.jsonl", [harness_line(input_condition="x")])
    rel = load_release(root)
    assert rel.frame.height == 1 and rel.stats["duplicates_identical"] == 1


def test_item_id_without_budget_keeps_every_budget(tmp_path):
    root = tmp_path / "r"
    lines = [harness_line(item_id="q_00010", context_length=b) for b in ("8K", "16K", "32K", "64K")]
    write_jsonl(root / "predictions" / "a.jsonl", lines)
    rel = load_release(root)
    assert sorted(rel.frame["budget"].cast(str).to_list()) == ["16K", "32K", "64K", "8K"]
    assert codes(rel)["item_id_no_budget"].severity == "warning"


def test_registry_duplicates_and_bad_values(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    (root / "models.csv").write_text("model,access,in_64k_set\nModel-A,proprietary,true\nModel-A,proprietary,true\n"
                                     "Model-B,closed,maybe\n")
    rel = load_release(root, strict=False)
    c = [(p.code, p.line, p.field) for p in rel.errors()]
    assert ("models_duplicate", 3, "model") in c
    assert ("unknown_label", 4, "access") in c and ("invalid_field", 4, "in_64k_set") in c
    assert rel.model_order() == ["Model-A"]


@pytest.mark.parametrize("content", [b"", b'model,family\n"Model-A,F\n', "model\nCaf\xe9\n".encode("latin-1")])
def test_unreadable_registry_is_an_error_not_a_crash(tmp_path, content):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    (root / "models.csv").write_bytes(content)
    rel = load_release(root, strict=False)
    assert any(p.file == "models.csv" and p.severity == "error" for p in rel.problems)


def test_files_not_read_are_reported(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    write_jsonl(root / "predictions" / "b.JSONL", [harness_line(model="Model-B")])
    (root / "predictions" / "dangling.jsonl").symlink_to(tmp_path / "nowhere")
    rel = load_release(root)
    notread = {p.file for p in rel.problems if p.code == "file_not_read"}
    assert notread == {"predictions/dangling.jsonl"}  # the extension is read in any letter case (issue 11)
    assert set(rel.frame["model"].to_list()) == {"Model-A", "Model-B"}


def test_unicode_line_separators_inside_strings(tmp_path):
    root = tmp_path / "r"
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [
        harness_line(response="line1\u2028line2"), harness_line(item_id="q_00010_16k", context_length="16K",
                                                                response="a\x85b"), "{bad"])
    (root / "predictions").mkdir(parents=True)
    (root / "predictions" / "a.jsonl").write_text(text.replace('"{bad"', "{bad"), encoding="utf-8")
    rel = load_release(root, strict=False)
    assert rel.frame.height == 2 and rel.frame["response"].to_list()[0] == "line1\u2028line2"
    (bad,) = [p for p in rel.problems if p.code == "malformed_json"]
    assert bad.line == 3


def test_bom_duplicate_keys_surrogates_and_nesting(tmp_path):
    root = tmp_path / "r"
    (root / "predictions").mkdir(parents=True)
    lines = [json.dumps(G),
             '{"item_id": "q_00010_16k", "model": "Model-A", "verdict": true, "verdict": false}',
             json.dumps(harness_line(item_id="q_00010_32k", context_length="32K"))[:-1] + ', "x": "\\ud800"}',
             '{"item_id": ' + "[" * 100_000 + "]" * 100_000 + "}"]
    (root / "predictions" / "a.jsonl").write_bytes(b"\xef\xbb\xbf" + "\n".join(lines).encode())
    rel = load_release(root, strict=False)
    assert rel.frame.height == 1                                   # the BOM line is read
    got = {(p.code, p.line, p.field) for p in rel.errors()}
    assert ("malformed_json", 2, "verdict") in got                 # repeated key named
    assert ("invalid_unicode", 3, "x") in got
    assert any(c == "malformed_json" and l == 4 for c, l, _ in got)


def test_boolean_fields_given_as_text(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [
        harness_line(response=None, verdict=None, provider_rejected="true", synthetic="false"),
        harness_line(item_id="q_00010_16k", context_length="16K", provider_rejected="maybe")])
    rel = load_release(root, strict=False)
    assert rel.frame["status"].to_list() == ["provider_rejected"] and not rel.synthetic
    (p,) = [p for p in rel.errors() if p.field == "provider_rejected"]
    assert p.line == 2


def test_release_json_must_be_an_object(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    (root / "release.json").write_text("[1, 2]")
    assert "release.json" in {p.file for p in load_release(root, strict=False).errors()}
    (root / "release.json").write_bytes('{"name": "Caf\xe9"}'.encode("latin-1"))
    assert "release.json" in {p.file for p in load_release(root, strict=False).errors()}
    (root / "release.json").write_text('{"synthetic": "false"}')
    assert not load_release(root).synthetic


def test_zero_predictions_is_an_error(tmp_path):
    root = tmp_path / "r"
    (root / "predictions").mkdir(parents=True)
    (root / "predictions" / "a.jsonl").write_text("\n")
    with pytest.raises(VoxMemDataError, match="hold no predictions"):
        load_release(root)


def test_numeric_fields_that_are_not_numbers_are_reported(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [harness_line(session_count="nine", n_audio_clips=3.7)])
    rel = load_release(root)
    fields = {p.field for p in rel.warnings() if p.code == "invalid_field"}
    assert fields == {"session_count", "n_audio_clips"}
    assert rel.frame["session_count"].to_list() == [None]


def test_non_string_model_is_an_error(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [harness_line(model=123), harness_line(model="Model-A ")])
    rel = load_release(root, strict=False)
    assert ("invalid_field", 1, "model") in {(p.code, p.line, p.field) for p in rel.errors()}
    assert "model_whitespace" in codes(rel)


def test_cli_lenient_says_what_it_left_out(tmp_path, capsys):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G, "{oops"])
    out = tmp_path / "f.csv"
    assert main(["export-frame", "--data", str(root), "--out", str(out), "--lenient"]) == 0
    err = capsys.readouterr().err
    assert "1 line(s) left out" in err and "predictions/a.jsonl:2" in err


def test_export_frame_into_a_directory(tmp_path, capsys):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    (tmp_path / "x.csv").mkdir()
    assert main(["export-frame", "--data", str(root), "--out", str(tmp_path / "x.csv")]) == 2
    assert not (tmp_path / "x.csv.part").exists()


def test_validate_reports_orphan_second_judge_lines(tmp_path, capsys):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "a.jsonl", [G])
    write_jsonl(root / "judge2" / "a.jsonl", [harness_line(model="Model-Z", judge="gpt-5.6-luna")])
    assert main(["validate", "--data", str(root)]) == 0
    assert "judge2_unmatched: judge2/a.jsonl:1" in capsys.readouterr().err


# Lines that made the reader of fbde6f2 crash (TypeError / ValueError) are findings now.
@pytest.mark.parametrize("over, code, field, severity, message", [
    ({"system_prompt_delivery": ["native"]}, "unknown_label", "system_prompt_delivery", "warning",
     "system_prompt_delivery ['native'] is neither 'native' nor 'folded'"),
    ({"expected_response": {"a": 1}}, "unknown_label", "expected_response", "error",
     "unknown expected_response {'a': 1} (expected 'answer' or 'insufficient_evidence')"),
    ({"session_count": "--5"}, "invalid_field", "session_count", "warning",
     "`session_count` should be a whole number, got '--5'; read as missing"),
    ({"n_audio_clips": "²"}, "invalid_field", "n_audio_clips", "warning",
     "`n_audio_clips` should be a whole number, got '²'; read as missing"),
    ({"context_length": "²", "item_id": "q_00010"}, "unknown_label", "context_length", "error",
     "unknown context_length '²' (expected one of 8K, 16K, 32K, 64K, any case)"),
])
def test_values_that_crashed_the_old_reader_are_findings(tmp_path, over, code, field, severity, message):
    write_jsonl(tmp_path / "predictions" / "p.jsonl", [harness_line(**over)])
    rel = load_release(tmp_path, strict=False, cache=False)
    hits = [p for p in rel.problems if p.code == code and p.field == field]
    assert [(p.severity, p.message, p.file, p.line) for p in hits] == [(severity, message, "predictions/p.jsonl", 1)]
