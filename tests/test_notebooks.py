"""Notebook hygiene: no cell echoes what a save call returns (the list of files ``output.save_table``
writes showed as a list of ``PosixPath`` under the tables), and every budget parameter defaults to one
taken from the release."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

import figure_harness as H

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("[0-9][0-9]_*.py"))


def _last_statements(path: Path):
    cells, _ = H.code_cells(path)
    for i, src in enumerate(cells):
        body = ast.parse(src).body
        if body:
            yield i, src, body[-1]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_cell_echoes_the_files_a_save_call_returns(path):
    for i, src, last in _last_statements(path):
        call = last.value if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call) else None
        name = getattr(call.func, "attr", getattr(call.func, "id", "")) if call is not None else ""
        if name.startswith("save_"):
            line = src.splitlines()[last.end_lineno - 1]
            assert line.rstrip().endswith(";"), f"{path.name} cell {i} ends with {name}(...) and echoes its files"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_budget_parameter_defaults_to_a_paper_budget(path):
    cells, p = H.code_cells(path)
    params = {n.targets[0].id: n.value for n in ast.parse(cells[p]).body if isinstance(n, ast.Assign)}
    for name, value in params.items():
        if "budget" in name or name == "baseline":
            assert isinstance(value, ast.Constant) and value.value in (None, "auto"), \
                f"{path.name}: {name} = {ast.unparse(value)} (a paper value; take it from the release)"
