"""`reproduce` on a user's own run (not the paper's release): an analysis report naming the models,
no reproduction scoreboard or paper audit, the LongMemEval example only when asked, --embed."""
from __future__ import annotations

import json
import re
import shutil

import pandas as pd

from voxmem_analysis.cli import main
from voxmem_analysis.reproduce.report import render_report


def test_reproduce_on_a_one_model_run_writes_an_analysis_report(my_eval_report, tmp_path, capsys):
    """The README's run of the example (made once per session), its report built again with --embed."""
    done = json.loads((my_eval_report / "result.json").read_text())
    printed = done["stdout"]
    assert done["argv"][:3] == ["reproduce", "--data", "data/examples/my_eval"] and done["returncode"] == 0, printed
    out = tmp_path / "out"
    shutil.copytree(my_eval_report / "my_eval_report", out)
    assert main(["reproduce", "--report-only", "--embed", "--out", str(out)]) == 0
    assert "report mode: analysis of your runs (MyModel-v1)" in printed
    assert "published numbers" not in printed and "audit.csv" not in printed
    assert not (out / "reproduction.csv").exists() and not (out / "audit.csv").exists()
    run = json.loads((out / "run.json").read_text())
    assert run["release"]["mode"] == "analysis" and run["reproduction"].get("numbers") is None
    html = (out / "report" / "index.html").read_text()
    assert "VoxMem analysis report: MyModel-v1 (SYNTHETIC DATA)" in html
    assert html.index('id="runs"') < html.index('id="figures"') < html.index('id="reference"')
    for absent in ("published numbers reproduced", "Published vs reproduced", "Consistency audit", "not reproduced"):
        assert absent not in html
    # the paper appears only as labelled reference columns, at the budgets it publishes
    assert "paper: mean of its 10-model 64K set at 8K (Table 18)" in html
    assert "paper: proprietary mean at 32K (§4.2)" in html
    # captions as in the paper; figures inlined (--embed); Table 15 open with integer counts
    assert "<b>Figure 4: " in html and re.search(r"<summary>Table 15: accuracy \(%\) at 32K", html)
    assert 'src="data:image/png;base64,' in html and 'src="../figures/' not in html
    t15 = html[html.index("<summary>Table 15"):]
    t15 = t15[:t15.index("</details>")]
    assert "<td>n</td>" in t15 and '<td class="num">110</td>' in t15 and "110.0" not in t15


def test_compare_published_and_include_examples_flags(tmp_path, capsys):
    from voxmem_analysis.reproduce.notebook import plan_parameters

    _, reason = plan_parameters({"manifest": None, "questions": None}, data_dir="/d", out_dir="/o", seed=0, n_boot=1,
                                include_examples=False)
    assert "--include-examples" in reason
    parser_help = _help(capsys)
    for opt in ("--compare-published", "--include-examples", "--embed"):
        assert opt in parser_help


def _help(capsys) -> str:
    try:
        main(["reproduce", "--help"])
    except SystemExit:
        pass
    return capsys.readouterr().out


def test_analysis_report_lists_skipped_sections_with_reasons(tmp_path):
    out = tmp_path / "out"
    (out / "tables").mkdir(parents=True)
    pd.DataFrame({"Budget|Model": ["32K|Mine", "32K|n"], "Speech Semantics": [50.0, 30], "Speaker Identity": [4.5, 22],
                  "Paralinguistic Cues": [23.1, 39], "Environmental Sound": [26.3, 19], "Overall": [27.3, 110]}
                 ).to_csv(out / "tables" / "fig4.csv", index=False)
    run = {"data_dir": "/x/mine", "out_dir": str(out), "seed": 0, "n_boot": 10, "jobs": 1, "wall_seconds": 1.0,
           "tasks_failed": [], "reproduction": {}, "audit": {}, "problems": [],
           "release": {"path": "/x/mine", "name": "mine", "synthetic": False, "mode": "analysis",
                       "model_names": ["Mine"], "predictions": 110, "models": 1, "stats": {},
                       "runs": [{"model": "Mine", "budget": "32K", "predictions": 110, "scored": 110, "correct": 30,
                                 "accuracy": 27.27, "accuracy_answerable": 18.0, "accuracy_refusal": 66.7}]},
           "notebooks": [{"name": "30_judge_agreement", "path": "", "status": "skipped", "seconds": 0, "outputs": [],
                          "reason": "the release has no judge2/ folder (optional part)", "error": None,
                          "collisions": [], "executed": None, "parameters": {}}]}
    (out / "run.json").write_text(json.dumps(run))
    html = render_report(out)
    assert "VoxMem analysis report: Mine" in html and "SYNTHETIC" not in html
    assert "the release has no judge2/ folder" in html[html.index('id="skipped"'):]
    assert "paper: open-weight mean at 32K (§4.2)" in html and "Published vs reproduced" not in html
