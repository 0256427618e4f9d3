"""The report page as a reader sees it: figures that load eagerly (a PDF or a full-page capture shows
them), wide tables with their first column in view and their key columns first, captions in words,
supplementary numbers that do not depend on what else a report holds, every text escaped."""
from __future__ import annotations

import json
import re

import pandas as pd

from voxmem_analysis.reproduce.report import render_report
from voxmem_analysis.reproduce.report_html import KEY_COLUMNS, key_columns_first
from voxmem_analysis.reproduce.report_outputs import SUPPLEMENTARY, captions

NASTY = "<script>alert(1)</script> & Co"


def _png(path, width=40, height=20):
    head = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\x0dIHDR" + width.to_bytes(4, "big") + height.to_bytes(4, "big")
    path.write_bytes(head + b"\x08\x02\x00\x00\x00")


def _out(tmp_path, figures=(), tables=(), run=None):
    out = tmp_path / "out"
    (out / "figures").mkdir(parents=True)
    (out / "tables").mkdir()
    for name in figures:
        _png(out / "figures" / f"{name}.png")
    for name in tables:
        pd.DataFrame({"Row": ["a"], "x": [1.5]}).to_csv(out / "tables" / f"{name}.csv", index=False)
    if run is not None:
        (out / "run.json").write_text(json.dumps(run))
    return out


def test_figures_load_eagerly(tmp_path):
    """A lazy image is not loaded by a headless PDF or a full-page screenshot (main: loading="lazy")."""
    html = render_report(_out(tmp_path, figures=["fig4_model_evidence", "session_roles"]))
    assert html.count("<img ") == 2 and html.count('loading="eager"') == 2 and "lazy" not in html


def test_wide_tables_keep_the_first_column_in_view_and_print_whole(tmp_path):
    html = render_report(_out(tmp_path, tables=["table15"]))
    css = html[html.index("<style>"):html.index("</style>")]
    rule = re.search(r"\.wide th:first-child, \.wide td:first-child \{([^}]*)\}", css)
    assert rule and "position: sticky" in rule.group(1) and "left: 0" in rule.group(1)
    printed = css[css.index("@media print"):]
    assert "overflow: visible" in printed and "details.output::details-content" in printed
    assert '<details class="output" open><summary>Table 15' in html


def test_key_columns_come_first_in_the_report_and_the_files_keep_their_order(tmp_path):
    """Table 18 with question families: the drop and retention with their intervals and design effects
    come right after the row label (main showed them after n, 8K, 64K, and the design effects at the end)."""
    cols = ["Row", "n", "8K", "64K", "drop", "drop_lo", "drop_hi", "retention", "retention_lo", "retention_hi",
            "cluster", "drop deff", "retention deff", "drop_lo mc_se", "added later"]
    t = pd.DataFrame([[f"v{i}" for i in range(len(cols))]], columns=cols)
    shown = key_columns_first(t, "table18_family")
    assert list(shown.columns) == ["Row", *KEY_COLUMNS["table18_family"], "n", "8K", "64K", "cluster", "drop_lo mc_se",
                                   "added later"]
    assert list(key_columns_first(t, "table15").columns) == cols
    out = _out(tmp_path)
    t.to_csv(out / "tables" / "table18_family.csv", index=False)
    html = render_report(out)
    head = [re.sub(r"<[^>]+>", "", h) for h in re.findall(r"<th>(.*?)</th>", html[html.index("table18_family &middot;"):])[:5]]
    assert head == ["Row", "drop", "drop_lo", "drop_hi", "drop deff"]
    assert pd.read_csv(out / "tables" / "table18_family.csv").columns.tolist() == cols


def test_amc_compare_shows_the_differences_and_p_values_first(tmp_path):
    """``p_mcnemar`` was the 14th column of 24 (behind a horizontal scroll)."""
    cols = ["axis", "system_a", "system_b", "n_tasks", "only_a", "only_b", "apr_a", "apr_b", "apr_diff",
            "apr_diff_ci_low", "apr_diff_ci_high", "a_pass_b_fail", "a_fail_b_pass", "p_mcnemar", "p_holm"]
    shown = key_columns_first(pd.DataFrame(columns=cols), "amc_runs_compare")
    assert list(shown.columns)[:10] == ["axis", "system_a", "system_b", "n_tasks", "apr_diff", "apr_diff_ci_low",
                                        "apr_diff_ci_high", "p_mcnemar", "p_holm", "only_a"]


def test_captions_are_words_never_file_names(tmp_path):
    """Main: "Figure S2: Explorer subtype evidence type all by budget", "Figure S4: Session roles"."""
    out = _out(tmp_path, figures=["explorer_subtype_evidence_type_all_by_budget", "explorer_subtype_evidence_type_32k",
                                  "session_roles", "lme_accuracy_by_type", "lme_comparison_matrix"],
               tables=["explorer_subtype_evidence_type_32k"])
    (out / "tables" / "explorer_subtype_evidence_type_32k.md").write_text(
        "Accuracy by subtype \u00d7 evidence type \u2014 32K, all models (%, 95% auto interval) [SYNTHETIC DATA \u2014 x]\n")
    caps = captions(out)
    assert caps["figures/explorer_subtype_evidence_type_all_by_budget.png"] == (
        "Figure S3: Accuracy by subtype \u00d7 evidence type at every budget, one panel per budget")
    assert caps["figures/session_roles.png"].startswith("Figure S1: Sessions per history by role (evidence,")
    for path, cap in caps.items():
        stem = path.split("/")[1].rsplit(".", 1)[0]
        words = cap.split(": ", 1)[1].lower()
        assert stem.replace("_", " ") not in words and "_" not in words, cap


def test_supplementary_numbers_do_not_depend_on_what_else_a_report_holds(tmp_path):
    """The paper's release and a user's run (one model, no second judge): main numbered Table S6 in one
    and S5 in the other, counting only what was present."""
    paper = ["composition", "groups", "judges_disagreements", "scaling_model", "explorer_subtype_evidence_type_32k",
             "validation_counts", "validation_design", "validation_problems", "table15"]
    mine = [t for t in paper if t not in ("judges_disagreements", "groups", "composition")]
    caps = [captions(_out(tmp_path / kind, tables=tables)) for kind, tables in (("paper", paper), ("mine", mine))]
    for name in mine:
        assert caps[0][f"tables/{name}.csv"] == caps[1][f"tables/{name}.csv"]
    assert caps[0]["tables/validation_counts.csv"].startswith("Table S1: ")
    assert caps[1]["tables/scaling_model.csv"].startswith("Table S6: ")
    # an output the registry does not list is numbered after the registry, in words where it has them
    extra = captions(_out(tmp_path / "extra", tables=["my_own_table"]))
    assert extra["tables/my_own_table.csv"] == f"Table S{len(SUPPLEMENTARY['tables']) + 1}: My own table"


def test_every_text_of_the_report_is_escaped(tmp_path):
    """Model names, notebook names, counts, problem examples, findings and captions from the files of OUT
    are text, never markup (main printed some run.json fields, e.g. the file and line counts, as they were)."""
    run = {"data_dir": NASTY, "out_dir": NASTY, "seed": NASTY, "n_boot": NASTY, "jobs": NASTY, "wall_seconds": 1.0,
           "tasks_failed": [NASTY], "problems": [{"severity": "warning", "code": NASTY, "count": 3, "example": NASTY}],
           "release": {"path": NASTY, "name": NASTY, "synthetic": False, "mode": "analysis", "description": NASTY,
                       "model_names": [NASTY], "predictions": NASTY, "models": NASTY,
                       "stats": {"files": NASTY, "lines": NASTY, "rejected_lines": NASTY, "files_not_read_in_full": [NASTY]},
                       "runs": [{"model": NASTY, "budget": NASTY, "predictions": NASTY, "scored": NASTY, "correct": NASTY,
                                 "accuracy": NASTY}]},
           "notebooks": [{"name": NASTY, "status": "failed", "seconds": 1.0, "outputs": ["figures/fig4_model_evidence.png"],
                          "executed": NASTY, "reason": NASTY, "collisions": [NASTY], "sections_skipped": [[NASTY, NASTY]],
                          "error": {"cell_index": NASTY, "line": NASTY, "source": NASTY, "ename": NASTY, "evalue": NASTY,
                                    "traceback": NASTY}}]}
    out = _out(tmp_path, figures=["fig4_model_evidence", "my_figure"], tables=["table15"], run=run)
    pd.DataFrame({NASTY: [NASTY], "x": [1.0]}).to_csv(out / "tables" / "other.csv", index=False)
    (out / "tables" / "other.md").write_text(f"{NASTY}\n")
    (out / "findings").mkdir()
    (out / "findings" / "nb.json").write_text(json.dumps([{"topic": NASTY, "release": NASTY, "paper": NASTY}]))
    html = render_report(out)
    body = html[html.index("<body>"):]
    assert "<script" not in body and "& Co" not in body
    assert body.count("&lt;script&gt;alert(1)&lt;/script&gt; &amp; Co") >= 25
