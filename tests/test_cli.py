"""The command line as a whole: the subcommand's usage and a did-you-mean on a wrong option or value, help text
without reStructuredText marks and current for every input kind, exit codes (0 ok, 1 bad data, 2 usage)."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli

COMMANDS = ("cache", "compare", "export-frame", "items", "judges", "power", "reproduce", "scaling", "slice",
            "supplement", "synth", "table", "validate")

REPO = Path(__file__).resolve().parent.parent
AMC = REPO / "data" / "examples" / "amc_run"


def test_a_misspelled_option_prints_the_subcommands_usage_and_the_option_meant(capsys):
    rc, _, err = run_cli(["slice", "--budjet", "8K"], capsys)
    assert rc == 2
    assert err.startswith("usage: voxmem-analysis slice ")
    assert "unrecognized arguments: --budjet 8K; did you mean --budget?" in err


def test_a_wrong_choice_says_which_was_meant(capsys):
    rc, _, err = run_cli(["compare", "--interval", "bcaa"], capsys)
    assert rc == 2 and err.startswith("usage: voxmem-analysis compare ")
    assert "invalid choice: 'bcaa'" in err and "did you mean bca?" in err


def test_a_table_artifact_option_misspelled_names_the_artifacts_usage(capsys, tiny_release):
    rc, _, err = run_cli(["table", "table18", "--data", tiny_release, "--basline", "8K"], capsys)
    assert rc == 2 and err.startswith("usage: voxmem-analysis table table18 ")
    assert "did you mean --baseline?" in err


@pytest.mark.parametrize("command", COMMANDS)
def test_help_has_no_restructured_text_marks(command, capsys):
    rc, out, _ = run_cli([command, "--help"], capsys)
    assert rc == 0 and "``" not in out and ":func:" not in out and ":mod:" not in out


def test_help_describes_every_input_kind(capsys):
    out = run_cli(["judges", "--help"], capsys)[1]
    assert "(LongMemEval format)" not in out and "Audio MultiChallenge" in out
    manifest = " ".join(run_cli(["compare", "--help"], capsys)[1].split())
    assert "with --questions, LongMemEval verdicts" in manifest and "with --tasks, judged Audio MultiChallenge" in manifest
    assert "--all-columns" in manifest


def test_a_data_folder_that_does_not_exist_is_a_usage_error(tmp_path, capsys):
    rc, _, err = run_cli(["slice", "--data", tmp_path / "nowhere"], capsys)
    assert rc == 2 and f"--data {str(tmp_path / 'nowhere')!r} does not exist" in err


def test_a_file_given_as_the_data_folder_and_a_device_as_the_tasks(tmp_path, capsys):
    f = tmp_path / "x.csv"
    f.write_text("a\n")
    rc, _, err = run_cli(["slice", "--data", f], capsys)
    assert rc == 2 and "is not a folder" in err
    rc, _, err = run_cli(["slice", "--manifest", AMC / "manifest.csv", "--tasks", "/dev/null"], capsys)
    assert rc == 2 and "'/dev/null' is not a regular file" in err
    rc, _, err = run_cli(["slice", "--manifest", AMC / "manifest.csv", "--tasks", tmp_path], capsys)
    assert rc == 2 and "is a folder; give a file" in err


def test_options_that_do_not_apply_are_named_with_grammar(capsys):
    base = ["slice", "--manifest", AMC / "manifest.csv", "--tasks", AMC / "tasks.jsonl"]
    rc, _, err = run_cli([*base, "--budget", "8K"], capsys)
    assert rc == 2 and "--budget does not apply to judged Audio MultiChallenge runs" in err
    rc, _, err = run_cli([*base, "--budget", "8K", "--model", "x"], capsys)
    assert rc == 2 and "--model and --budget do not apply" in err


def test_no_input_and_a_wrong_mix_are_one_clear_message(capsys):
    rc, _, err = run_cli(["compare"], capsys)
    assert rc == 2 and "give either --data DIR, or --manifest FILE" in err
    rc, _, err = run_cli(["items", "--data", REPO / "data" / "synthetic-amc"], capsys)
    assert rc == 2 and "items reads a VoxMem release or judged Audio MultiChallenge runs" in err
    rc, _, err = run_cli(["slice", "--data", REPO / "data" / "synthetic", "--tasks", AMC / "tasks.jsonl"], capsys)
    assert rc == 2 and "--data cannot be combined with --manifest/--questions/--tasks" in err
