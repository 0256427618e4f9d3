"""``slice`` on the command line: what "no verdicts selected" names, the options echoed above the table,
warnings about what the selection uses, a filter that fails cleanly, escaped Markdown, and the output guard."""
from __future__ import annotations

import io
import os
import shutil
from pathlib import Path

import pandas as pd

from conftest import run_cli

REPO = Path(__file__).resolve().parent.parent
AMC = REPO / "data" / "examples" / "amc_run"
SYNTHETIC = REPO / "data" / "synthetic"


def test_a_budget_not_run_names_the_budgets_present(tiny_release, capsys):
    rc, _, err = run_cli(["slice", "--data", tiny_release, "--budget", "32K"], capsys)
    assert rc == 2
    assert "no verdicts selected: --budget 32K: the data was run at 8K, 64K; pass --budget one of them" in err


def test_a_where_selecting_nothing_says_how_many_it_was_given(tiny_release, capsys):
    rc, _, err = run_cli(["slice", "--data", tiny_release, "--where", "session_count > 1000"], capsys)
    assert rc == 2 and "--where 'session_count > 1000' holds for none of the 8 verdicts" in err


def test_the_filter_and_options_in_force_are_echoed(tiny_release, capsys):
    argv = ["slice", "--data", tiny_release, "--by", "model", "--where", "session_count >= 1", "--n-boot", "50"]
    rc, out, err = run_cli([*argv, "--format", "md"], capsys)
    assert rc == 0
    head = out.splitlines()[2]
    assert head == ("options in force: --convention paper --by model --interval auto --where 'session_count >= 1' "
                    "--seed 0 --n-boot 50")
    rc, out, err = run_cli(argv, capsys)   # CSV: the line on stderr, stdout stays a CSV table
    assert "# options in force: --convention paper --by model" in err
    assert list(pd.read_csv(io.StringIO(out)).columns[:2]) == ["model", "level"]


def test_mixed_prompt_delivery_is_said_only_when_the_selection_mixes_it(capsys):
    rc, _, err = run_cli(["slice", "--data", SYNTHETIC, "--model", "Gemini-2.5-Pro", "--budget", "8K", "--by", "model",
                          "--n-boot", "20"], capsys)
    assert rc == 0 and "mixed_prompt_delivery" not in err
    rc, _, err = run_cli(["slice", "--data", SYNTHETIC, "--model", "Gemini-2.5-Pro,Phi-4-Multimodal", "--budget", "8K",
                          "--by", "model", "--n-boot", "20"], capsys)
    assert rc == 0 and "mixed_prompt_delivery" in err


def test_a_where_that_polars_cannot_evaluate_is_a_clear_usage_error(tiny_release, capsys):
    rc, _, err = run_cli(["slice", "--data", tiny_release, "--where", "coalesce() IS NULL"], capsys)
    assert rc == 2 and "--where 'coalesce() IS NULL'" in err and "needs at least one argument" in err
    chain = "session_count" + " + 1 - 1" * 300 + " >= 0"     # 600 terms
    rc, _, err = run_cli(["slice", "--data", tiny_release, "--where", chain], capsys)
    assert rc == 2 and "600 of them arithmetic; at most 1,000 and 64" in err
    chain = "session_count" + " + 1 - 1" * 12 + " >= 0"
    rc, _, err = run_cli(["slice", "--data", tiny_release, "--where", chain, "--by", "model"], capsys)
    assert rc == 0, err


def test_a_pipe_in_a_name_does_not_split_a_markdown_row(tmp_path, capsys):
    man = tmp_path / "m.csv"
    man.write_text("path,system,output_modality,judge\n"
                   f"{AMC / 'results' / 'synth-e2e-audio.jsonl'},\"a|b\",Audio,j\n"
                   f"{AMC / 'results' / 'synth-cascade-text.jsonl'},\"two\nlines\",Text,j\n")
    rc, out, err = run_cli(["slice", "--manifest", man, "--tasks", AMC / "tasks.jsonl", "--by", "system",
                            "--format", "md", "--n-boot", "20"], capsys)
    assert rc == 0, err
    rows = [line for line in out.splitlines() if line.startswith("| a")] + [
        line for line in out.splitlines() if line.startswith("| two")]
    assert rows[0].startswith("| a\\|b (Audio)") and rows[1].startswith("| two<br>lines (Text)")
    table = [line for line in out.splitlines() if line.startswith("|")]
    assert len({line.replace("\\|", "").count("|") for line in table}) == 1   # every row has the same cells


def test_an_output_on_the_task_table_is_refused(tmp_path, capsys):
    work = tmp_path / "amc"
    shutil.copytree(AMC, work)
    before = (work / "tasks.jsonl").read_bytes()
    rc, _, err = run_cli(["slice", "--manifest", work / "manifest.csv", "--tasks", work / "tasks.jsonl", "--by",
                          "system", "--out", work / "tasks.jsonl"], capsys)
    assert rc == 2 and "is the input file" in err
    assert (work / "tasks.jsonl").read_bytes() == before


def test_an_output_on_a_linked_item_table_is_refused(tiny_release, tmp_path, capsys):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tiny_release / "items.csv").rename(elsewhere / "items.csv")
    os.symlink(elsewhere / "items.csv", tiny_release / "items.csv")
    before = (elsewhere / "items.csv").read_bytes()
    rc, _, err = run_cli(["slice", "--data", tiny_release, "--by", "model", "--out", elsewhere / "items.csv"], capsys)
    assert rc == 2 and "is the input file" in err
    assert (elsewhere / "items.csv").read_bytes() == before
