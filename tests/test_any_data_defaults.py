"""Truthful on any data: defaults the release leaves no choice about, errors in the words of
the command line, notebooks that wrote nothing reported as skipped, the report's numbers and order,
findings stated as computed (never as the paper's claim about the user's data), the example that
validates cleanly."""
from __future__ import annotations

import json
import re
import shutil
from types import SimpleNamespace

import pandas as pd
import pytest

from conftest import REPO
from voxmem_analysis.cli import cli_message, main

EXAMPLE = REPO / "data" / "examples" / "my_eval"


@pytest.fixture(scope="module")
def one_budget(tmp_path_factory):
    """The example run at 32K only: one model, one budget, its item table."""
    root = tmp_path_factory.mktemp("one") / "one_budget"
    (root / "predictions" / "m").mkdir(parents=True)
    shutil.copy(EXAMPLE / "predictions" / "mymodel-v1" / "predictions_32k.jsonl", root / "predictions" / "m")
    shutil.copy(EXAMPLE / "items.csv", root / "items.csv")
    (root / "release.json").write_text(json.dumps({"name": "one-budget", "synthetic": True}))
    return root


# ----------------------------------------------------------------------------- command line
def test_the_only_budget_and_model_are_the_defaults(one_budget, capsys):
    assert main(["table", "table15", "--data", str(one_budget), "--format", "csv", "--no-cache"]) == 0
    out = capsys.readouterr()
    assert "# --budget 32K (the only budget run)" in out.err
    t = pd.read_csv(pd.io.common.StringIO(out.out), index_col=0)
    assert list(t.index) == ["MyModel-v1", "Mean all (1)", "n"] and t.loc["n", "Overall"] == 110
    assert main(["items", "--data", str(one_budget), "--wrong", "--no-cache"]) == 0
    err = capsys.readouterr().err
    assert "# --model MyModel-v1 (the only model)" in err and "# --budget 32K (the only budget)" in err
    assert "MyModel-v1 at 32K: 80 incorrect scored items" in err       # 110 scored, 30 correct


def test_two_budgets_give_the_scaling_comparison_and_ask_for_one_budget(capsys):
    assert main(["table", "table18", "--data", str(EXAMPLE), "--n-boot", "50", "--format", "csv"]) == 0
    out = capsys.readouterr()
    assert "# --baseline 8K (the shorter of the two budgets run)" in out.err
    assert "# --comparison 32K (the longer of the two budgets run)" in out.err
    assert pd.read_csv(pd.io.common.StringIO(out.out), index_col=0).columns[:3].tolist() == ["n", "8K", "32K"]
    assert main(["items", "--data", str(EXAMPLE)]) == 2
    assert "the release has 2 budgets (8K, 32K): pass --budget one of them" in capsys.readouterr().err
    assert main(["compare", "--data", str(EXAMPLE)]) == 2
    assert "the release has 1 model (MyModel-v1): a comparison needs two or more" in capsys.readouterr().err


def test_error_texts_name_command_line_options():
    assert cli_message("budgets run: 8K; pass budget= one of them") == "budgets run: 8K; pass --budget one of them"
    assert (cli_message("pass baseline=/comparison= budgets some model was run at")
            == "pass --baseline/--comparison budgets some model was run at")
    assert cli_message("several models; pass model=") == "several models; pass --model"
    assert cli_message("pass n_boot= 10") == "pass --n-boot 10"


def test_scaling_error_names_the_options(one_budget, capsys):
    assert main(["table", "table18", "--data", str(one_budget), "--n-boot", "20"]) == 1
    err = capsys.readouterr().err
    assert "baseline=" not in err and "comparison=" not in err


def test_the_shipped_example_validates_without_a_warning(capsys):
    assert main(["validate", "--data", str(EXAMPLE)]) == 0
    out = capsys.readouterr()
    assert "0 error(s), 0 warning(s)" in out.out and "WARNING" not in out.out + out.err


# ----------------------------------------------------------------------------- notebooks that wrote nothing
def test_skipped_sections_are_read_from_the_executed_notebook(tmp_path):
    from voxmem_analysis.reproduce.notebook import NotebookResult, nothing_written, skipped_sections

    nb = {"cells": [{"cell_type": "code", "outputs": [
        {"output_type": "stream", "name": "stdout",
         "text": ["SYNTHETIC DATA\n", "Figure 6: skipped \u2014 scaling needs two budgets\n"]},
        {"output_type": "stream", "name": "stdout", "text": "Power (scaling): skipped \u2014 no two budgets\n"
                                                            "Figure 6: skipped \u2014 scaling needs two budgets\n"},
        {"output_type": "stream", "name": "stderr", "text": "Table 9: skipped \u2014 on stderr, not a section\n"}]}]}
    path = tmp_path / "x.ipynb"
    path.write_text(json.dumps(nb))
    found = skipped_sections(path)
    assert found == [["Figure 6", "scaling needs two budgets"], ["Power (scaling)", "no two budgets"]]
    assert skipped_sections(tmp_path / "missing.ipynb") == []
    res = NotebookResult("20_x", "", "ok", sections_skipped=found)
    assert nothing_written(res) == ("wrote nothing: every section was skipped (scaling needs two budgets; "
                                    "no two budgets)")
    res.outputs = ["tables/t.csv"]
    assert nothing_written(res) is None


def test_context_scaling_on_one_budget_is_reported_as_skipped(one_budget, tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["reproduce", "--data", str(one_budget), "--out", str(out), "--only", "20", "--n-boot", "20",
               "--no-progress"])
    printed = capsys.readouterr().out
    assert rc == 0
    nb = json.loads((out / "run.json").read_text())["notebooks"][0]
    assert nb["status"] == "skipped" and nb["outputs"] == []
    assert nb["reason"].startswith("wrote nothing: every section was skipped (scaling needs two budgets")
    assert ["Figure 6", "scaling needs two budgets, but the release was run at one budget only (32K)"] \
        in nb["sections_skipped"]
    assert "0 of 1 notebooks ok, 1 skipped, 0 failed" in printed
    html = (out / "report" / "index.html").read_text()
    skipped = html[html.index('id="skipped"'):]
    assert "<code>20_context_scaling</code></td><td>wrote nothing: every section was skipped" in skipped


# ----------------------------------------------------------------------------- the report
def _fake_out(tmp_path):
    from voxmem_analysis import output
    from voxmem_analysis.reproduce.provenance import OutputFolder

    out = tmp_path / "out"
    folder = OutputFolder(out, notebook="10_main_results", parameters={"seed": 0, "n_boot": 10})
    for name in ("table20", "table2", "table13"):
        t = pd.DataFrame({"Acc": [50.0, 669.0]}, index=pd.Index(["a", "n"], name="Row"))
        output.save_table(t, folder, name, show=False)     # 50.0 an accuracy, 669 a count (row n)
    long = pd.DataFrame({"Acc": [float(i) + 0.25 for i in range(25)], "p": [10.0 ** -(i + 1) for i in range(25)]},
                        index=pd.Index([f"r{i}" for i in range(25)], name="Row"))
    output.save_table(long, folder, "long", show=False)
    output.save_finding(SimpleNamespace(topic="Evidence types", release="Speaker Identity is highest.",
                                        paper="The paper reports X."), folder, show=False)
    run = {"data_dir": "/x", "out_dir": str(out), "seed": 0, "n_boot": 10, "jobs": 1, "release": {"mode": "analysis"},
           "notebooks": [{"name": "10_main_results", "status": "ok", "provenance": folder.source,
                          "outputs": sorted(json.loads((out / "provenance.json").read_text())["files"])}]}
    (out / "run.json").write_text(json.dumps(run))
    return out


def test_report_tables_in_natural_order_long_ones_collapsed_numbers_unbroken(tmp_path):
    from voxmem_analysis.reproduce.report import render_report

    html = render_report(_fake_out(tmp_path))
    order = [html.index(f"<span class=\"counts\">{n} &middot;") for n in ("table2", "table13", "table20")]
    assert order == sorted(order)
    assert re.search(r"<details class=\"output\"><summary>Table S\d+: Long[^<]*<span class=\"counts\">long &middot; 25 rows", html)
    assert re.search(r"<details class=\"output\" open><summary>[^<]*<span class=\"counts\">table2 &middot;", html)
    t2 = html[html.index("table2 &middot;"):]
    t2 = t2[:t2.index("</details>")]
    assert '<td class="num">50.0</td>' in t2 and '<td class="num">669</td>' in t2      # not 50, not 669.000
    assert re.search(r"td\.num, th\.num \{[^}]*white-space: nowrap", html)           # numbers never wrap
    assert '<td class="num">1\u00d710<sup>\u221225</sup></td>' in html                 # p = 1e-25, not 0.000
    findings = html[html.index('id="findings"'):]
    assert "<b>Evidence types.</b> Speaker Identity is highest." in findings
    assert '<p class="paper">The paper reports X.</p>' in findings


# ----------------------------------------------------------------------------- notebooks state no finding as fact
PAPER_CLAIMS = ("far better than who", "rank models almost independently", "difficulty lives in the pairing",
                "evidence share shrinks", "roughly double", "speech semantics (answerable from words) barely moves",
                "the drop in points is tied to the baseline")


def test_notebooks_quote_the_paper_and_compute_the_release_finding():
    import jupytext

    for script in sorted((REPO / "notebooks").glob("[0-9][0-9]_*.py")):
        nb = jupytext.read(script)
        for cell in nb.cells:
            if cell.cell_type != "markdown":
                continue
            text = " ".join(cell.source.lower().split())
            for claim in PAPER_CLAIMS:
                if claim in text:
                    assert "the paper reports" in text or "the paper's" in text, (script.name, claim)
    for name in ("05_benchmark_design", "10_main_results", "20_context_scaling", "30_judge_agreement",
                 "31_transcript_ablation", "40_error_attribution"):
        assert "output.save_finding(F." in (REPO / "notebooks" / f"{name}.py").read_text(), name


def test_scaling_baseline_defaults_to_the_shortest_budget(capsys):
    from voxmem_analysis.commands.scaling import shortest_budget
    from voxmem_analysis.errors import InputError

    lme = REPO / "data" / "examples" / "longmemeval"
    assert main(["scaling", "--manifest", str(lme / "manifest.csv"), "--questions", str(lme / "questions.json"),
                 "--n-boot", "50", "--part", "correlations"]) == 0
    out = capsys.readouterr()
    assert "# --baseline 32k (the shortest budget)" in out.err
    assert set(pd.read_csv(pd.io.common.StringIO(out.out))["baseline_budget"]) == {"32k"}
    assert shortest_budget(["128k", "8K", "1M", "32000"]) == "8K"
    with pytest.raises(InputError, match="pass --baseline one of them"):
        shortest_budget(["full", "oracle"])
