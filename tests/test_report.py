"""The HTML report: banner, ordering of failures, error cells, audit, links, escaping."""
from __future__ import annotations

import json

import pandas as pd

from voxmem_analysis.reproduce.report import render_report, write_report


def _out(tmp_path, *, synthetic=True):
    out = tmp_path / "out"
    (out / "figures").mkdir(parents=True)
    (out / "tables").mkdir()
    (out / "figures" / "fig5_cells.png").write_bytes(b"\x89PNG fake")
    (out / "figures" / "fig5_cells.pdf").write_bytes(b"%PDF fake")
    pd.DataFrame({"Model": ["A"], "Overall": [21.04]}).to_csv(out / "tables" / "table15.csv", index=False)
    (out / "tables" / "table15.tex").write_text("tex")
    run = {
        "data_dir": str(tmp_path / "rel"), "out_dir": str(out), "seed": 0, "n_boot": 100, "jobs": 2,
        "wall_seconds": 12.5, "exit_code": 1, "tasks_failed": [],
        "release": {"path": str(tmp_path / "rel"), "name": "voxmem-synthetic", "synthetic": synthetic,
                    "description": "calibrated stand-in", "predictions": 10, "models": 2,
                    "stats": {"files": 2, "lines": 10}},
        "notebooks": [
            {"name": "10_main", "path": "/x/10_main.py", "status": "ok", "seconds": 3.2,
             "outputs": ["figures/fig5_cells.png", "figures/fig5_cells.pdf", "tables/table15.csv", "tables/table15.tex"],
             "executed": "notebooks/10_main.ipynb", "parameters": {}, "reason": None, "error": None, "collisions": []},
            {"name": "99_broken", "path": "/x/99_broken.py", "status": "failed", "seconds": 1.0, "outputs": [],
             "executed": "notebooks/99_broken.ipynb", "parameters": {}, "reason": None, "collisions": [],
             "error": {"cell_index": 3, "exec_count": 2, "line": 14, "source": "x = 1 / 0  # <script>",
                       "ename": "ZeroDivisionError", "evalue": "division by zero <b>", "traceback": "Traceback..."}},
            {"name": "60_lme", "path": "/x/60_lme.py", "status": "skipped", "seconds": 0.1, "outputs": [],
             "executed": None, "parameters": {}, "reason": "takes a LongMemEval `manifest`", "error": None,
             "collisions": []},
        ],
        "reproduction": {"numbers": 4, "within": 2, "outside": 1, "missing": 1, "missing_artifacts": {"table2": 1},
                         "artifact_errors": {"table2": "the release has no ablation"},
                         "by_kind": {"calibrated": {"numbers": 4, "within": 2}}},
        "audit": {"identities": 2, "hold": 1, "fail": 1},
        "problems": [{"severity": "warning", "code": "mixed_judges", "count": 3, "example": "WARNING mixed_judges"}],
    }
    (out / "run.json").write_text(json.dumps(run))
    pd.DataFrame([
        ("table15", "A", "Overall", 21.0, 21.04, 0.04, "calibrated", True),
        ("table16", "A", "AR", 50.0, 52.0, 2.0, "calibrated", False),
        ("table16", "B", "AR", 40.0, 40.1, 0.1, "calibrated", True),
        ("table2", "All", "n", 669.0, None, None, "calibrated", False),
    ], columns=["artifact", "row", "column", "published", "reproduced", "delta", "kind", "within_tolerance"]
    ).to_csv(out / "reproduction.csv", index=False)
    pd.DataFrame([
        ("t15_mean", "table15", "mean of models", "=", 21.0, 21.02, -0.02, 0.1, True, ""),
        ("t20_total", "table20", "row sums", "=", 100.0, 101.0, -1.0, 0.0, False, "Recog. column"),
    ], columns=["identity", "artifact", "description", "relation", "lhs", "rhs", "delta", "tolerance", "holds",
                "detail"]).to_csv(out / "audit.csv", index=False)
    return out


def test_synthetic_banner_and_sections(tmp_path):
    out = _out(tmp_path)
    path = write_report(out)
    assert path == out / "report" / "index.html"
    html = path.read_text()
    assert 'class="banner synthetic"' in html
    assert "SYNTHETIC data, not real model output" in html
    assert "voxmem-synthetic" in html and "calibrated stand-in" in html
    # the run summary with the error cell, escaped
    assert "99_broken failed at cell 3" in html and "line 14" in html
    assert "ZeroDivisionError" in html and "division by zero &lt;b&gt;" in html
    assert "&lt;script&gt;" in html and "<script>" not in html
    assert "takes a LongMemEval `manifest`" in html
    # reproduction grouped by artifact, failures first
    i16, i2, i15 = html.index("<summary>table16"), html.index("<summary>table2"), html.index("<summary>table15")
    assert i16 < i15 and i2 < i15
    assert "the release has no ablation" in html
    assert "2/4" in html and "1 outside tolerance, 1 not reproduced" in html
    # inside table16 the failing number comes first
    block = html[i16:html.index("</details>", i16)]
    assert block.index("52") < block.index("40.1")
    # audit: failing identity first, with its numbers
    ia, ib = html.index("t20_total"), html.index("t15_mean")
    assert ia < ib and "1 of 2 hold" in html
    # validation counts, figure and table links (relative), grouped by notebook
    assert "mixed_judges" in html
    assert 'src="../figures/fig5_cells.png"' in html and 'href="../figures/fig5_cells.pdf"' in html
    assert 'href="../tables/table15.tex"' in html and "21.04" in html
    assert "the CSV keeps the order of models.csv" in html      # the report sorts Table 15 as the paper does
    assert "<h3>10_main</h3>" in html
    assert "<script" not in html.replace("&lt;script", "")


def test_real_release_banner_has_no_synthetic_label(tmp_path):
    out = _out(tmp_path, synthetic=False)
    html = render_report(out)
    assert "SYNTHETIC" not in html
    assert 'class="banner"' in html and "Made from the release" in html


def test_report_without_any_run_files(tmp_path):
    html = render_report(tmp_path)
    assert "No reproduction.csv" in html and "No audit.csv" in html and "No figures were written" in html


def test_report_tables_print_numbers_as_the_saved_tables():
    """As the Markdown and LaTeX files: a percentage column to one decimal, a count row as integers
    (never 232.000, even read back from a CSV as floats), a tiny p-value in scientific notation, a
    p-value to three decimals, whole-number columns as integers, a real minus sign."""
    import numpy as np

    from voxmem_analysis.reproduce.report_html import table_html as _table_html

    df = pd.DataFrame({"Model": ["A", "B", "n"], "Overall": [24.49, -26.5306, 232.0],
                       "p": [0.00001, 0.5, np.nan], "count": [1.0, 2.0, 3.0]})
    html = _table_html(df)
    assert '<td class="num">24.5</td>' in html and '<td class="num">\u221226.5</td>' in html
    assert '<td>n</td><td class="num">232</td>' in html
    assert '<td class="num">1\u00d710<sup>\u22125</sup></td>' in html and '<td class="num">0.500</td>' in html
    assert '<td class="num">1</td></tr>' in html and '<td class="num">3</td></tr>' in html
