"""The own-data workflow (issue 13): `table NAME` options, the example run folder, report modes,
the paper reference columns, captions and Table 15's paper order."""
from __future__ import annotations

import filecmp
import io
import json

import pandas as pd
import pytest

from tests.conftest import REPO, SYNTHETIC
from voxmem_analysis.cli import main
from voxmem_analysis.reproduce.mode import PAPER_RELEASE, describe_runs, is_paper_release, report_mode

EXAMPLE = REPO / "data" / "examples" / "my_eval"


# ----------------------------------------------------------------------------- table NAME options
def test_table15_on_a_one_model_8k_32k_run(capsys):
    assert main(["table", "table15", "--data", str(EXAMPLE), "--budget", "32K", "--format", "csv"]) == 0
    cap = capsys.readouterr()
    t = pd.read_csv(io.StringIO(cap.out), index_col=0)
    assert list(t.index) == ["MyModel-v1", "Mean all (1)", "n"]
    # 110 items per budget: 89 answerable + 21 refusal; 30 of them correct at 32K (describe_runs agrees)
    assert t.loc["n", "Overall"] == 110
    assert t.loc["MyModel-v1", "Overall"] == pytest.approx(100 * 30 / 110, abs=1e-3)
    assert "SYNTHETIC" in cap.err


def test_table_error_names_the_option(capsys):
    assert main(["table", "table15", "--data", str(EXAMPLE)]) == 0     # no 64K: the longest budget run, 32K
    capsys.readouterr()
    assert main(["table", "table15", "--data", str(EXAMPLE), "--budget", "64K"]) == 1
    err = capsys.readouterr().err
    assert "no model was run at 64K" in err and "8K, 32K" in err and "pass --budget one of them" in err
    assert main(["table", "table18", "--data", str(EXAMPLE), "--comparison", "64K"]) == 1
    assert "pass --comparison one of them" in capsys.readouterr().err


def test_table_help_lists_the_artifact_parameters(capsys):
    assert main(["table", "table18", "--help"]) == 0
    out = capsys.readouterr().out
    for opt in ("--comparison", "--baseline", "--models", "--seed", "--n-boot", "--data"):
        assert opt in out
    assert main(["table", "table15", "-h"]) == 0
    out = capsys.readouterr().out
    assert "--budget" in out and "--comparison" not in out
    assert main(["table", "--list"]) == 0 and "table15" in capsys.readouterr().out


def test_table_parameters_change_the_result(capsys):
    base = ["table", "table18", "--data", str(EXAMPLE), "--n-boot", "200", "--format", "csv"]
    assert main([*base, "--baseline", "8K", "--comparison", "32K"]) == 0
    t = pd.read_csv(io.StringIO(capsys.readouterr().out), index_col=0)
    assert t.loc["Overall", "8K"] == pytest.approx(100 * 38 / 110, abs=0.05)
    assert t.loc["Overall", "32K"] == pytest.approx(100 * 30 / 110, abs=0.05)
    assert main(["table", "fig4", "--data", str(SYNTHETIC), "--models", "Gemini-3.1-Pro,Gemini-2.5-Pro",
                 "--budgets", "64K", "--format", "csv"]) == 0
    rows = pd.read_csv(io.StringIO(capsys.readouterr().out)).iloc[:, 0].tolist()
    assert "64K|Gemini-3.1-Pro" in rows and not any("Qwen" in r for r in rows)
    assert main(["table", "table15", "--data", str(EXAMPLE), "--budget", "12K"]) == 2
    assert main(["table", "table15", "--data", str(EXAMPLE), "--models", "Nope", "--budget", "32K"]) in (1, 2)


# ----------------------------------------------------------------------------- the example run folder
def test_example_folder_is_regenerated_byte_for_byte(tmp_path):
    from voxmem_analysis.synth.example_run import write_example_run

    out = write_example_run(tmp_path / "my_eval")
    shipped = sorted(p.relative_to(EXAMPLE) for p in EXAMPLE.rglob("*") if p.is_file())
    made = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert shipped == made
    for rel in shipped:
        assert filecmp.cmp(EXAMPLE / rel, out / rel, shallow=False), rel
    meta = json.loads((EXAMPLE / "release.json").read_text())
    assert meta["synthetic"] is True and "SYNTHETIC" in meta["description"]
    assert all('"synthetic": true' in line for line in
               (EXAMPLE / "predictions" / "mymodel-v1" / "predictions_8k.jsonl").read_text().splitlines())


# ----------------------------------------------------------------------------- report mode
def test_report_mode_by_release_identity(tmp_path):
    from voxmem_analysis.synth.release import DEFAULT_SEED

    assert PAPER_RELEASE["seed"] == DEFAULT_SEED
    paper = json.loads((SYNTHETIC / "release.json").read_text())
    assert is_paper_release(paper) and report_mode(paper) == "paper"
    mine = json.loads((EXAMPLE / "release.json").read_text())
    assert not is_paper_release(mine) and report_mode(mine) == "analysis"
    assert report_mode(mine, compare_published=True) == "paper"
    assert not is_paper_release({**paper, "seed": 1}) and not is_paper_release(None)


def test_release_info_in_analysis_mode():
    from voxmem_analysis.io import load_release
    from voxmem_analysis.reproduce.mode import release_info

    info, problems = release_info(load_release(EXAMPLE), EXAMPLE)
    assert problems == []   # the example ships its item table: every refusal item has its source operation
    assert info["mode"] == "analysis" and info["model_names"] == ["MyModel-v1"]
    assert info["predictions"] == 220 and info["models"] == 1 and not info["paper_release"]
    runs = {r["budget"]: r for r in info["runs"]}
    assert set(runs) == {"8K", "32K"}
    assert (runs["8K"]["scored"], runs["8K"]["correct"], runs["32K"]["correct"]) == (110, 38, 30)
    assert (runs["32K"]["scored_answerable"], runs["32K"]["scored_refusal"]) == (89, 21)


def test_describe_runs_counts_match_the_frame():
    from voxmem_analysis.io import load_release

    rel = load_release(EXAMPLE)
    recs = describe_runs(rel)
    fr = rel.frame
    assert sum(r["predictions"] for r in recs) == fr.height
    assert sum(r["correct"] for r in recs) == int(fr["correct"].sum())


# ----------------------------------------------------------------------------- reference, captions, order
def test_paper_reference_columns():
    from voxmem_analysis.reproduce.published import published
    from voxmem_analysis.reproduce.reference import accuracy_reference, paper_columns, retention_reference

    pub = published()
    assert paper_columns("16K", pub) == {}
    c8 = paper_columns("8K", pub)
    assert list(c8.values())[0]["Overall"] == 30.6 and list(c8.values())[0]["Speech Semantics"] == 48.0
    c32 = paper_columns("32K", pub)
    assert [v["Overall"] for v in c32.values()] == [33.0, 21.9]
    c64 = paper_columns("64K", pub, ["Gemini-3.1-Pro", "MyModel-v1"])
    assert len(c64) == 2 and any("Gemini-3.1-Pro" in k for k in c64)
    fig4 = pd.DataFrame({"Budget|Model": ["8K|M", "8K|Mean all (1)", "8K|n", "16K|M", "16K|n"],
                         "Speech Semantics": [50.0, 50.0, 30, 40.0, 30], "Speaker Identity": [1.0, 1.0, 22, 2.0, 22],
                         "Paralinguistic Cues": [2.0, 2.0, 39, 3.0, 39], "Environmental Sound": [3.0, 3.0, 19, 4.0, 19],
                         "Overall": [10.0, 10.0, 110, 9.0, 110]})
    parts = dict(accuracy_reference(fig4, pub))
    assert list(parts) == ["8K", "16K"]
    t8 = parts["8K"].set_index("evidence type (8K)")
    assert t8.loc["Overall", "M"] == 10.0 and t8.loc["Overall", "n (your items)"] == 110
    assert t8.filter(like="paper").loc["Overall"].iloc[0] == 30.6
    assert not any(c.startswith("paper") for c in parts["16K"].columns)
    assert retention_reference(pd.DataFrame({"Evidence type": ["Overall"], "8K": [100], "32K": [80]}), pub) is None
    r = retention_reference(pd.DataFrame({"Evidence type": ["Speech Semantics"], "8K": [100], "64K": [70.0]}), pub)
    assert r.iloc[0, 2] == 70.3


def test_table15_in_the_papers_order_with_integer_counts():
    from voxmem_analysis.reproduce.report import paper_order_table15

    t = pd.DataFrame({"Model": ["A", "B", "C", "Mean all (3)", "n"], "Overall": [10.0, 30.0, 20.0, 20.0, 799.0]})
    out = paper_order_table15(t)
    assert out["Model"].tolist() == ["B", "C", "A", "Mean all (3)", "n"]
    assert out["Overall"].iloc[-1] == 799 and isinstance(out["Overall"].iloc[-1], int)
    # the synthetic release's Table 15 in the paper's order (published.csv lists its rows in print order)
    from voxmem_analysis.artifacts import compute
    from voxmem_analysis.io import load_release
    from voxmem_analysis.reproduce.published import published

    ours = paper_order_table15(compute("table15", load_release(SYNTHETIC)).reset_index())
    pub = published()
    paper_rows = list(dict.fromkeys(pub.loc[pub["artifact"] == "table15", "row"]))
    assert ours.iloc[:, 0].tolist() == paper_rows


def test_captions_number_figures_and_tables(tmp_path):
    from voxmem_analysis.reproduce.report import captions

    (tmp_path / "figures").mkdir()
    (tmp_path / "tables").mkdir()
    for name in ("fig4_model_evidence", "table16_answerable_vs_refusal", "session_roles", "lme_scaling"):
        (tmp_path / "figures" / f"{name}.png").write_bytes(b"\x89PNG")
    pd.DataFrame({"a": [1]}).to_csv(tmp_path / "tables" / "table15.csv", index=False)
    (tmp_path / "tables" / "table15.md").write_text("Table 15: accuracy (%) at 32K [SYNTHETIC DATA — x]\n\n| a |\n")
    pd.DataFrame({"a": [1]}).to_csv(tmp_path / "tables" / "groups.csv", index=False)
    caps = captions(tmp_path)
    assert caps["tables/table15.csv"] == "Table 15: accuracy (%) at 32K"
    assert caps["tables/groups.csv"].startswith("Table S5: Group means")      # its place in SUPPLEMENTARY
    assert caps["figures/fig4_model_evidence.png"].startswith("Figure 4: ")
    assert caps["figures/table16_answerable_vs_refusal.png"].startswith("Figure of Table 16: ")
    assert caps["figures/lme_scaling.png"] == "Figure S7: LongMemEval example (synthetic): accuracy by budget per system"
    assert caps["figures/session_roles.png"].startswith("Figure S1: Sessions per history by role")


def test_titles_follow_the_budget_passed():
    from voxmem_analysis.cli import cli_message
    from voxmem_analysis.artifacts import retitle

    t = "Table 15: accuracy (%) at 64K by evidence type, 64K model set, with group means"
    assert retitle(t, {"budget": "32k"}) == "Table 15: accuracy (%) at 32K by evidence type, models run at 32K, with group means"
    assert retitle("Table 18: paired change 8K to 64K with CIs", {"comparison": "32K"}) == \
        "Table 18: paired change 8K to 32K with CIs"
    assert cli_message("budgets run: 8K, 32K; pass budget= one of them") == "budgets run: 8K, 32K; pass --budget one of them"
