"""The HTML page of ``reproduce --manifest --tasks``: its tables are built from the DataFrames by the
reproduction report's ``table_html`` and show every row, with the numbers the Markdown file prints."""
from __future__ import annotations

import html
import io
import re
from pathlib import Path

import pandas as pd

from voxmem_analysis.io import load_amc_runs
from voxmem_analysis.reproduce.amc_runs import write_amc_runs_report

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "examples" / "amc_run"
_SUP = str.maketrans("-\u22120123456789", "\u207b\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def _html_rows(table: str) -> list[list[str]]:
    def cell(c: str) -> str:
        c = re.sub(r"<sup>(.*?)</sup>", lambda m: m.group(1).translate(_SUP), c)
        return html.unescape(re.sub(r"<[^>]+>", "", c)).replace("\u2212", "-")
    return [[cell(c) for c in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row)] for row in re.findall(r"<tr>(.*?)</tr>", table)]


def _md_rows(block: str) -> list[list[str]]:
    rows = [ln for ln in block.splitlines() if ln.startswith("|") and not ln.startswith("| ---")]
    return [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", ln)[1:-1]] for ln in rows]


def test_html_tables_are_the_markdown_tables_with_every_row(tmp_path):
    data = load_amc_runs(EXAMPLE / "manifest.csv", EXAMPLE / "tasks.jsonl", strict=False)
    out = tmp_path / "out"
    write_amc_runs_report(data, out, n_boot=200, seed=1, stream=io.StringIO())
    page = (out / "report" / "index.html").read_text(encoding="utf-8")
    md = (out / "report" / "index.md").read_text(encoding="utf-8")
    html_tables = re.findall(r"<table>.*?</table>", page, flags=re.S)
    md_tables = re.findall(r"(?:^\|.*\n)+", md, flags=re.M)
    assert len(html_tables) == len(md_tables) == 5   # runs, slice, table2, compare, judges
    for h, m in zip(html_tables, md_tables):
        assert _html_rows(h)[1:] == _md_rows(m)[1:]
    slice_csv = pd.read_csv(out / "tables" / "amc_runs_slice.csv")
    assert len(_html_rows(html_tables[1])) == len(slice_csv) + 1 == 16
    t2 = _html_rows(html_tables[2])
    assert t2[0][:3] == ["row", "APR", "ARS"] and [r[0] for r in t2[1:]] == [
        "synth-e2e|Audio", "synth-e2e|Text", "synth-cascade|Text"]   # a label with "|" is one cell
    assert t2[1][1] == f"{100 * 21 / 48:.2f}" == "43.75"
    assert '<td class="num">\u22128.33</td>' in page                   # a real minus sign
    assert page.count('<div class="banner synthetic">') == 1 and "SYNTHETIC DATA" in page.split("<h1>")[1]
    assert "**" not in page and "`" not in page and "<code>tables/amc_runs_slice.csv</code>" in page
