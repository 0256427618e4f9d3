"""Every figure the notebooks save shows all its data, on every release shape (issue 23).

Each notebook runs in this process as the reproduction runner would run it (its parameters
planned by ``reproduce.notebook.plan_parameters``, ``n_boot`` small), on each release shape of
:mod:`shapes`; every ``output.save_figure`` call is replaced by a check of the laid-out figure
(:mod:`figure_harness`): every drawn point, error-bar end, bar and band inside its axes, and no
two visible texts (titles, labels, drawn tick labels, annotations, legends, the SYNTHETIC stamp)
overlapping, no marker on an axis line.  A figure a shape cannot have (a scaling figure on one budget, a judge figure
without ``judge2/``, a panel that would only repeat another) must be skipped with its reason.

``VOXMEM_FIGURE_PNG=/some/dir`` also writes each checked figure as a PNG (to look at them).
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

import figure_harness as H
import shapes as S

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"

#: Every figure the notebooks save (one entry per ``save_figure`` call), by notebook.
FIGURES: dict[str, tuple[str, ...]] = {
    "05_benchmark_design": ("fig2a_history_scale", "session_roles"),
    "10_main_results": ("fig4_model_evidence", "fig5_operation_evidence", "fig8_operation_evidence_shared",
                        "table16_answerable_vs_refusal"),
    "20_context_scaling": ("fig6_context_scaling", "table18_forest", "scaling_model", "d5_sensitivity"),
    "30_judge_agreement": ("judges_per_model", "table13_slices"),
    "31_transcript_ablation": ("table2_ablation",),
    "40_error_attribution": ("fig7_error_attribution", "fig10_error_attribution_subtype"),
    "50_subtype_explorer": ("explorer", "explorer_by_budget"),
    "60_longmemeval": ("lme_accuracy_by_type", "lme_comparison_matrix", "lme_scaling"),
    "70_audio_multichallenge": ("amc_fig5", "amc_fig6", "amc_fig7", "amc_fig8", "amc_fig9"),
}


def figure_id(saved: str) -> str:
    """The :data:`FIGURES` entry a saved file name belongs to (some names carry a budget or a grouping)."""
    if saved.startswith("fig5_operation_evidence_"):
        return "fig5_operation_evidence"
    if saved.startswith("explorer_"):
        return "explorer_by_budget" if saved.endswith("_by_budget") else "explorer"
    return saved


_NO = "the release has no {}/ folder"
_ONE_BUDGET = "one budget only"
#: (figure, shape) -> what the notebook must say instead of saving the figure.
SKIPS: dict[tuple[str, str], str] = {
    **{(f, s): _NO.format("judge2") for f in FIGURES["30_judge_agreement"]
       for s in ("my_eval", "one_budget", "improves", "extremes")},
    **{(f, s): _NO.format("ablation") for f in FIGURES["31_transcript_ablation"]
       for s in ("my_eval", "one_budget", "improves", "extremes")},
    **{(f, s): _NO.format("attribution") for f in FIGURES["40_error_attribution"]
       for s in ("my_eval", "one_budget", "improves", "extremes", "two_models")},
    **{(f, "one_budget"): "scaling needs two budgets" for f in FIGURES["20_context_scaling"]},
    ("fig8_operation_evidence_shared", "one_budget"): "would only repeat Figure 5",
    ("explorer_by_budget", "one_budget"): "would only repeat",
    ("lme_scaling", "lme_one_budget"): _ONE_BUDGET,
}
#: Notebook parameters a shape needs beyond what the runner injects (none: every default is taken from the data).
OVERRIDES: dict[tuple[str, str], dict] = {}


def _shapes_of(notebook: str) -> tuple[str, ...]:
    if notebook.startswith("60_"):
        return S.LONGMEMEVAL
    if notebook.startswith("70_"):
        return S.AUDIO_MULTICHALLENGE
    return S.VOXMEM


#: One case per notebook and shape: the notebook runs once and every figure it saves is checked.
CASES = [pytest.param(nb, shape, id=f"{shape}-{nb}") for nb in FIGURES for shape in _shapes_of(nb)]


@pytest.fixture(scope="session")
def shape_root(tmp_path_factory):
    return tmp_path_factory.mktemp("shapes")


_DATA: dict[str, Path] = {}


def _data(shape: str, root: Path) -> Path:
    if shape not in _DATA:
        _DATA[shape] = S.build(shape, root)
    return _DATA[shape]


def figure_failures(notebook: str, shape: str, run: H.NotebookRun) -> list[str]:
    """What is wrong with each figure of ``notebook`` on ``shape``, one line per figure ("" when nothing)."""
    saved: dict[str, list[str]] = {}
    for name, problems in run.figures.items():
        saved.setdefault(figure_id(name), []).extend(problems)
    said = [run.skipped or "", *run.skip_lines()]
    out = []
    for figure in FIGURES[notebook]:
        where = f"{figure} on {shape}"
        expected_skip = SKIPS.get((figure, shape))
        if expected_skip is not None:
            if figure in saved:
                out.append(f"{where}: drawn, but expected to be skipped ({expected_skip})")
            elif not any(expected_skip in line for line in said):
                out.append(f"{where}: not drawn, and the notebook did not say {expected_skip!r}; it said {said}")
        elif figure not in saved:
            out.append(f"{where}: not drawn; the notebook said {said}")
        else:
            out += [f"{where}: {p}" for p in saved[figure]]
    return out


@pytest.mark.parametrize("notebook,shape", CASES)
def test_figures_show_all_their_data(notebook, shape, shape_root):
    """Every figure of ``notebook`` on ``shape``: all drawn data inside its axes, no two texts
    overlapping, or skipped with the expected reason."""
    data = _data(shape, shape_root)
    over = dict(OVERRIDES.get((notebook, shape), {}))
    if notebook.startswith("60_"):
        over.update(manifest=str(data / "manifest.csv"), questions=str(data / "questions.json"))
    run = H.run_notebook(NOTEBOOKS / f"{notebook}.py", data, shape_root / "out" / shape / notebook,
                         overrides=over, png_dir=H.png_dir_for(shape))
    failures = figure_failures(notebook, shape, run)
    if failures:
        pytest.fail("\n".join(failures), pytrace=False)


def test_every_saved_figure_is_listed():
    """A new ``save_figure`` call in a notebook must be listed in FIGURES (and so be tested)."""
    for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py")):
        calls = len(re.findall(r"\bsave_figure\(", path.read_text(encoding="utf-8")))
        assert calls == len(FIGURES.get(path.stem, ())), (
            f"{path.name} has {calls} save_figure call(s); FIGURES lists {FIGURES.get(path.stem, ())}")
