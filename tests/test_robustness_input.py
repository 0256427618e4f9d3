"""Issue 11, input side: a whole model, judge or budget never disappears silently.

Each case is built as a tiny release; the tests assert what the loader does (reads the data, or
names the file, line and field of what it cannot use) and that the commands print it on standard
error without a traceback, refusing (exit 1) in strict mode where the data is clearly meant to be there.
"""
from __future__ import annotations

import gzip
import json
import os
import pathlib

import pytest

from conftest import harness_line, write_jsonl
from voxmem_analysis.cli import main
from voxmem_analysis.errors import VoxMemDataError
from voxmem_analysis.io import load_release

B64 = dict(item_id="q_00010_64k", context_length="64K")


def _release(tmp_path, name="r"):
    root = tmp_path / name
    write_jsonl(root / "predictions" / "model-a" / "p.jsonl", [harness_line(), harness_line(**B64)])
    return root


def _codes(rel):
    return {p.code for p in rel.problems}


def _only(rel, code):
    (p,) = [p for p in rel.problems if p.code == code]
    return p


def _run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return code, out, err


# ----------------------------------------------------------------------------- symlinks, folders, files
def test_a_model_folder_that_is_a_symlink_is_read(tmp_path):
    root = _release(tmp_path)
    elsewhere = write_jsonl(tmp_path / "disk2" / "model-b" / "p.jsonl", [harness_line(model="Model-B")]).parent
    (root / "predictions" / "model-b").symlink_to(elsewhere, target_is_directory=True)
    linked_file = write_jsonl(tmp_path / "disk2" / "c.jsonl", [harness_line(model="Model-C")])
    (root / "predictions" / "model-c.jsonl").symlink_to(linked_file)
    for bulk in (True, False):
        rel = load_release(root, bulk=bulk, cache=False)
        assert sorted(set(rel.frame["model"])) == ["Model-A", "Model-B", "Model-C"]
        assert set(rel.frame["source_file"]) == {"predictions/model-a/p.jsonl", "predictions/model-b/p.jsonl",
                                                 "predictions/model-c.jsonl"}


def test_a_symlink_loop_is_reported_and_not_followed(tmp_path):
    root = _release(tmp_path)
    (root / "predictions" / "model-a" / "again").symlink_to(root / "predictions", target_is_directory=True)
    rel = load_release(root, cache=False)
    p = _only(rel, "link_not_followed")
    assert (p.severity, p.file) == ("warning", "predictions/model-a/again")
    assert "already read" in p.message
    assert rel.frame.height == 2  # every line once


def test_an_unreadable_folder_is_an_error_naming_it(tmp_path, monkeypatch, capsys):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B")])
    real = os.scandir
    locked = str(root / "predictions" / "model-b")

    def scandir(path="."):
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    with pytest.raises(VoxMemDataError) as ei:
        load_release(root, cache=False)
    assert "ERROR folder_unreadable: predictions/model-b: cannot read folder: Permission denied" in str(ei.value)
    rel = load_release(root, strict=False, cache=False)
    assert set(rel.frame["model"]) == {"Model-A"} and _only(rel, "folder_unreadable").severity == "error"
    code, _, err = _run(capsys, "table", "table14", "--data", root, "--no-cache")
    assert code == 1 and "predictions/model-b" in err
    code, _, err = _run(capsys, "table", "table14", "--data", root, "--no-cache", "--lenient")
    assert code == 0 and "folder_unreadable=1" in err and "predictions/model-b" in err


def test_an_unreadable_file_says_why(tmp_path, monkeypatch):
    root = _release(tmp_path)
    locked = write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B")])
    from voxmem_analysis.io import files

    real = files.read_regular   # the one place prediction files are opened (tests run as root: chmod cannot lock)

    def read_regular(path):
        if pathlib.Path(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(files, "read_regular", read_regular)
    rel = load_release(root, strict=False, cache=False)
    p = _only(rel, "file_unreadable")
    assert (p.file, p.message) == ("predictions/model-b/p.jsonl", "cannot read file: Permission denied")
    assert rel.stats["files_unreadable"] == 1


def test_extensions_are_read_in_any_letter_case(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.JSONL", [harness_line(model="Model-B")])
    write_jsonl(root / "predictions" / "model-c" / "p.Jsonl.GZ", [harness_line(model="Model-C")], gz=True)
    (root / "predictions" / "notes.json").write_text("[]")
    for bulk in (True, False):
        rel = load_release(root, bulk=bulk, cache=False)
        assert sorted(set(rel.frame["model"])) == ["Model-A", "Model-B", "Model-C"]
        p = _only(rel, "file_not_read")
        assert p.file == "predictions/notes.json" and "any letter case" in p.message


# ----------------------------------------------------------------------------- one identity per model
def test_one_model_spelled_two_ways_is_an_error_naming_both(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-a" / "q.jsonl",
                [harness_line(model="model_a", item_id="q_00010_16k", context_length="16K")])
    with pytest.raises(VoxMemDataError) as ei:
        load_release(root, cache=False)
    msg = str(ei.value)
    assert "ERROR model_spelling: predictions/model-a/q.jsonl:1 [model]: one model spelled 2 ways:" in msg
    assert "'Model-A' (first at predictions/model-a/p.jsonl:1); 'model_a' (first at predictions/model-a/q.jsonl:1)" in msg


def test_a_model_folder_holding_another_model_is_an_error(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-a" / "q.jsonl",
                [harness_line(), harness_line(model="Model-B", item_id="q_00010_16k", context_length="16K")])
    rel = load_release(root, strict=False, cache=False)
    p = _only(rel, "mixed_models_in_folder")
    assert (p.severity, p.file, p.line, p.field) == ("error", "predictions/model-a/q.jsonl", 2, "model")
    assert "folder predictions/model-a/ holds 2 model names" in p.message


def test_a_folder_not_named_after_a_model_may_hold_several(tmp_path):
    root = tmp_path / "r"
    write_jsonl(root / "predictions" / "8k" / "all.jsonl", [harness_line(), harness_line(model="Model-B")])
    rel = load_release(root, cache=False)
    assert sorted(set(rel.frame["model"])) == ["Model-A", "Model-B"]
    assert not _codes(rel) & {"mixed_models_in_folder", "model_spelling"}


# ----------------------------------------------------------------------------- registry claims
def _registry(root, rows):
    (root / "models.csv").write_text("model,in_64k_set\n" + "".join(f"{m},{f}\n" for m, f in rows))


def test_a_64k_claim_without_64k_rows_is_refused_and_never_ticked(tmp_path, capsys):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B")])
    _registry(root, [("Model-A", "true"), ("Model-B", "true")])
    with pytest.raises(VoxMemDataError) as ei:
        load_release(root, cache=False)
    assert ("ERROR registry_64k_missing: models.csv [in_64k_set]: models.csv flags 'Model-B' as in the 64K set "
            "(in_64k_set=true) but the release has no 64K predictions for it") in str(ei.value)
    rel = load_release(root, strict=False, cache=False)
    assert rel.models_in_64k_set() == ["Model-A"]
    code, out, err = _run(capsys, "table", "table14", "--data", root, "--lenient", "--format", "csv")
    assert code == 0 and "registry_64k_missing=1" in err
    rows = {line.split(",")[0]: line for line in out.splitlines()[1:]}
    assert "\u2713" in rows["Model-A"] and "\u2713" not in rows["Model-B"]
    code, _, err = _run(capsys, "table", "table14", "--data", root)
    assert code == 1 and "'Model-B'" in err


def test_a_64k_claim_with_some_64k_rows_is_a_warning_with_the_count(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-a" / "q.jsonl",
                [harness_line(item_id="q_00012_64k", question_id="q_00012", context_length="64K")])
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B", **B64)])
    _registry(root, [("Model-A", "true"), ("Model-B", "true"), ("Model-Z", "false")])
    rel = load_release(root, cache=False)
    p = _only(rel, "registry_64k_incomplete")
    assert (p.message, p.count) == ("models.csv flags 'Model-B' as in the 64K set but it has 1 of the 2 items seen at 64K", 1)
    assert "Model-Z" in _only(rel, "registry_model_absent").message


# ----------------------------------------------------------------------------- ablation conditions
def test_ablation_conditions_other_spellings_warn_and_unknown_ones_are_errors(tmp_path):
    root = _release(tmp_path)
    write_jsonl(root / "ablation" / "Full-Audio" / "m" / "p.jsonl", [harness_line()])
    write_jsonl(root / "ablation" / "transcript_only" / "m" / "p.jsonl",
                [harness_line(), harness_line(item_id="q_00010_16k", context_length="16K", input_condition="Audio_Only")])
    write_jsonl(root / "ablation" / "loose.jsonl", [harness_line(), harness_line(model="Model-B", input_condition="TRANSCRIPT")])
    for bulk in (True, False):
        rel = load_release(root, strict=False, bulk=bulk, cache=False)
        found = {(p.code, p.file, p.line, p.field) for p in rel.problems if p.field == "input_condition"}
        assert found == {
            ("condition_spelling", "ablation/Full-Audio/m/p.jsonl", 1, "input_condition"),
            ("unknown_condition", "ablation/transcript_only/m/p.jsonl", 2, "input_condition"),
            ("unknown_condition", "ablation/loose.jsonl", 1, "input_condition"),
            ("condition_spelling", "ablation/loose.jsonl", 2, "input_condition"),
        }
        msgs = {p.line: p.message for p in rel.problems if p.file == "ablation/loose.jsonl"}
        assert msgs[1] == ("input_condition missing (neither the line nor its folder below ablation/ names one): "
                           "expected one of full_audio, transcript_only")
        assert msgs[2] == "input_condition 'TRANSCRIPT' read as 'transcript_only'"
        assert sorted(rel.ablation["input_condition"].to_list()) == ["full_audio", "transcript_only", "transcript_only"]
    with pytest.raises(VoxMemDataError, match=r"ablation/transcript_only/m/p.jsonl:2 \[input_condition\]: "
                                              r"input_condition 'Audio_Only': expected one of"):
        load_release(root, cache=False)


# ----------------------------------------------------------------------------- damaged files
def _lines(n, model="Model-B"):
    return [harness_line(model=model, item_id=f"q_{i:05d}_8k", question_id=f"q_{i:05d}") for i in range(n)]


def test_a_truncated_gzip_keeps_the_lines_before_the_cut_and_says_what_is_lost(tmp_path, capsys):
    root = _release(tmp_path)
    text = "".join(json.dumps(r) + "\n" for r in _lines(400))
    blob = gzip.compress(text.encode(), mtime=0)
    path = root / "predictions" / "model-b" / "p.jsonl.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(blob[: len(blob) // 2])
    for bulk in (True, False):
        rel = load_release(root, strict=False, bulk=bulk, cache=False)
        p = _only(rel, "truncated_gzip")
        n = rel.frame.filter(rel.frame["model"] == "Model-B").height
        assert 0 < n < 400
        assert p.message == (f"{n} line(s) read before the gzip stream ended at byte {len(blob) // 2}; "
                             "the rest of the file is lost")
        assert (p.severity, p.file, p.line) == ("error", "predictions/model-b/p.jsonl.gz", n + 1)
        assert rel.stats["files_unreadable"] == 0 and rel.stats["rejected_lines"] == 0
    code, _, err = _run(capsys, "export-frame", "--data", root, "--out", tmp_path / "f.csv", "--lenient")
    assert code == 0 and "truncated_gzip=1" in err and "the rest of the file is lost" in err
    code, _, err = _run(capsys, "export-frame", "--data", root, "--out", tmp_path / "f.csv")
    assert code == 1 and "truncated_gzip" in err


def test_cr_only_line_endings_are_line_breaks(tmp_path):
    root = _release(tmp_path)
    text = "".join(json.dumps(r) + "\r" for r in _lines(5))
    (root / "predictions" / "model-b").mkdir(parents=True)
    (root / "predictions" / "model-b" / "p.jsonl").write_bytes(text.encode())
    (root / "predictions" / "model-b" / "q.jsonl").write_bytes(
        (json.dumps(harness_line(model="Model-B", item_id="q_00010_16k", context_length="16K")) + "\r\n").encode())
    for bulk in (True, False):
        rel = load_release(root, bulk=bulk, cache=False)
        b = rel.frame.filter(rel.frame["model"] == "Model-B")
        assert b.height == 6 and b["source_line"].to_list()[:5] == [1, 2, 3, 4, 5]
        p = _only(rel, "cr_line_endings")
        assert (p.file, p.message) == ("predictions/model-b/p.jsonl",
                                       "5 bare carriage return(s) (old Mac line endings) read as line breaks")


# ----------------------------------------------------------------------------- every command reports
@pytest.mark.parametrize("argv", [
    ["table", "table14"], ["slice", "--by", "model"], ["export-frame", "--out", "{tmp}/f.csv"],
    ["items", "--model", "Model-A", "--budget", "8K"], ["compare", "--models", "Model-A,Model-B", "--budget", "8K", "--n-boot", "50"],
    ["power", "--n", "100"],   # exits 1: too few items to measure a discordance -- after the warnings
])
def test_every_command_that_loads_a_release_prints_its_warnings(tmp_path, capsys, argv):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", [harness_line(model="Model-B"), harness_line(model="Model-B", **B64)])
    (root / "predictions" / "model-b" / "old.json").write_text("[]")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    code, out, err = _run(capsys, *argv[:1], "--data", root, *argv[1:])
    assert code == (1 if argv[0] == "power" else 0), err
    assert "file_not_read=1" in err and "predictions/model-b/old.json" in err
    assert "file_not_read" not in out


def test_a_lenient_command_names_what_it_left_out(tmp_path, capsys):
    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", ["{broken", harness_line(model="Model-B")])
    code, out, err = _run(capsys, "slice", "--data", root, "--by", "model", "--lenient")
    assert code == 0
    assert "1 error(s)" in err and "; 1 line(s) left out" in err
    assert "ERROR malformed_json: predictions/model-b/p.jsonl:1" in err
    code, _, err = _run(capsys, "slice", "--data", root, "--by", "model")
    assert code == 1 and "predictions/model-b/p.jsonl:1" in err


def test_reproduce_reports_the_release_findings_before_running(tmp_path, capsys):
    from voxmem_analysis.commands._shared import report_release

    root = _release(tmp_path)
    write_jsonl(root / "predictions" / "model-b" / "p.jsonl", ["{broken", harness_line(model="Model-B")])
    report_release(root)
    err = capsys.readouterr().err
    assert f"# 1 error(s), 0 warning(s) in release {str(root)!r} (malformed_json=1); 1 line(s) left out" in err
    assert "predictions/model-b/p.jsonl:1" in err


def test_release_json_that_is_a_folder_is_an_error_not_a_traceback(tmp_path, capsys):
    root = _release(tmp_path)
    (root / "release.json").mkdir()
    with pytest.raises(VoxMemDataError, match="release.json cannot be read: Is a directory"):
        load_release(root, cache=False)
    code, _, err = _run(capsys, "validate", "--data", root)
    assert code == 1 and "release_json_unreadable" in err


def test_an_unreadable_or_unusable_judge2_folder_is_not_skipped_silently(tmp_path, monkeypatch):
    root = _release(tmp_path)
    (root / "ablation" / "full_audio").mkdir(parents=True)
    (root / "ablation" / "full_audio" / "runs.json").write_text("[]")
    write_jsonl(root / "judge2" / "model-a" / "p.jsonl", [harness_line(judge="judge-2")])
    real = os.scandir
    locked = str(root / "judge2")

    def scandir(path="."):
        if str(path) == locked:
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    rel = load_release(root, strict=False, cache=False)
    assert rel.judge2 is None
    found = {(p.code, p.severity, p.file) for p in rel.problems if p.file and not p.file.startswith("predictions")}
    assert found == {("folder_unreadable", "error", "judge2"), ("file_not_read", "warning", "ablation/full_audio/runs.json")}
