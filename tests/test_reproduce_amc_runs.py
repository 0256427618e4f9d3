"""The report of judged Audio MultiChallenge runs (``reproduce --manifest --tasks``): its figures (drawn
from the tables, with the numbers drawn beside them), its findings (written from the numbers, each with
its counts) and its escaping, on the example and on odd shapes (one system, one axis, every item met or
none, long names)."""
from __future__ import annotations

import gzip
import io
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from voxmem_analysis.io import load_amc_runs
from voxmem_analysis.output import figure_caption, read_findings
from voxmem_analysis.reproduce.amc_findings import paired_by_axis, paired_overall, systems_overall
from voxmem_analysis.reproduce.amc_runs import rubric_rates, write_amc_runs_report

EXAMPLE = Path(__file__).resolve().parent.parent / "data" / "examples" / "amc_run"
LONG = "Qwen2.5-Omni-7B-Instruct-with-a-very-long-checkpoint-name-2026-01-15-exp"
NASTY = "<script>alert(1)</script> & Sons"


def _read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _met(rows: list[dict], value: bool) -> list[dict]:
    return [{**r, "pred_error": None, "pass": value,
             "rubric_results": [{**i, "criteria_met": value} for i in r["rubric_results"]] or
             [{"rubric_item": "x", "criteria_met": value, "explanation": "set"}]} for r in rows]


def build_runs(root: Path, shape: str) -> tuple[Path, Path]:
    """Judged runs made from the example, in ``root``: ``one_system``, ``one_axis`` (Inference Memory
    only), ``extremes`` (one system meets every rubric item, one none), ``long_names`` (names of 60+
    characters, one with markup and an ampersand).  Returns (manifest, task table)."""
    root.mkdir(parents=True, exist_ok=True)
    tasks = _read_jsonl(EXAMPLE / "tasks.jsonl")
    audio = _read_jsonl(EXAMPLE / "results" / "synth-e2e-audio.jsonl")
    text = _read_jsonl(EXAMPLE / "results" / "synth-e2e-text.jsonl.gz")
    runs = {"one_system": [("a.jsonl", "synth-e2e", "Audio", audio)],
            "one_axis": [("a.jsonl", "synth-e2e", "Audio", audio), ("b.jsonl", "synth-e2e", "Text", text)],
            "extremes": [("a.jsonl", "all-met", "Text", _met(text, True)), ("b.jsonl", "none-met", "Text", _met(text, False)),
                         ("c.jsonl", "synth-e2e", "Audio", audio)],
            "long_names": [("a.jsonl", LONG, "Audio", audio), ("b.jsonl", NASTY, "Text", text)]}[shape]
    if shape == "one_axis":
        tasks = [t for t in tasks if t["axis"] == "INFERENCE_MEMORY"]
        runs = [(f, s, m, [r for r in rows if r["axis"] == "INFERENCE_MEMORY"]) for f, s, m, rows in runs]
    (root / "tasks.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tasks), encoding="utf-8")
    lines = ["path,system,output_modality,judge"]
    for f, system, modality, rows in runs:
        (root / f).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        lines.append(f'{f},"{system}",{modality},judge-1')
    (root / "manifest.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root / "manifest.csv", root / "tasks.jsonl"


def _report(tmp_path, shape=None, n_boot=200) -> Path:
    manifest, tasks = (build_runs(tmp_path / "in", shape) if shape else
                       (EXAMPLE / "manifest.csv", EXAMPLE / "tasks.jsonl"))
    out = tmp_path / "out"
    write_amc_runs_report(load_amc_runs(manifest, tasks, strict=False), out, n_boot=n_boot, seed=1,
                          stream=io.StringIO())
    return out


@pytest.fixture(scope="module")
def example(tmp_path_factory) -> Path:
    return _report(tmp_path_factory.mktemp("amc_runs"))


def test_the_report_has_three_figures_each_with_the_numbers_drawn_and_the_synthetic_label(example):
    """Main wrote no figure at all."""
    figs = sorted(p.name for p in (example / "figures").glob("*.png"))
    assert figs == ["amc_runs_apr_ars.png", "amc_runs_differences.png", "amc_runs_rubric_rates.png"]
    slice_csv = pd.read_csv(example / "tables" / "amc_runs_slice.csv")
    drawn = pd.read_csv(example / "figures" / "amc_runs_apr_ars.csv")
    assert drawn[["apr", "apr_ci_low", "ars_ci_high"]].to_numpy() == pytest.approx(
        slice_csv[["apr", "apr_ci_low", "ars_ci_high"]].to_numpy())
    assert figure_caption(example / "figures" / "amc_runs_apr_ars.png").startswith("Figure 1: APR and ARS")
    rates = pd.read_csv(example / "figures" / "amc_runs_rubric_rates.csv")
    audio = rates[(rates["system"] == "synth-e2e (Audio)") & (rates["axis"] == "overall")].iloc[0]
    assert (audio["n_met"], audio["n_items"]) == (125, 169) and audio["rate"] == pytest.approx(100 * 125 / 169)
    run = json.loads((example / "run.json").read_text())
    assert "figures/amc_runs_differences.pdf" in run["outputs"] and "findings/amc_runs.json" in run["outputs"]
    page = (example / "report" / "index.html").read_text()
    for name in figs:
        assert f'<img src="../figures/{name}" alt="Figure ' in page
    assert 'loading="lazy"' not in page
    from voxmem_analysis.stamp import drawn_texts  # noqa: F401 - the label is drawn as every figure's

    md = (example / "report" / "index.md").read_text()
    assert "![Figure 2: Paired differences" in md


def test_rubric_rates_by_hand():
    import polars as pl

    frame = pl.DataFrame({"system": ["a", "a", "a", "b"], "axis": ["IM", "IM", "VE", "IM"],
                          "n_rubrics": [2, 3, 4, 0], "n_met": [2, 1, 0, 0]})
    r = rubric_rates(frame)
    assert r[["system", "axis", "n_items", "n_met"]].values.tolist() == [
        ["a", "IM", 5, 3], ["a", "VE", 4, 0], ["a", "overall", 9, 3], ["b", "IM", 0, 0], ["b", "overall", 0, 0]]
    assert r["rate"].tolist()[:3] == pytest.approx([60.0, 0.0, 100 / 3]) and r["rate"].isna().tolist()[3:] == [True, True]


def test_findings_are_written_from_the_numbers_with_their_counts(example):
    """Main stated no finding about the runs."""
    found = {r["topic"]: r["release"] for r in read_findings(example)["amc_runs"]}
    assert found["Systems"].startswith("By APR, highest first: synth-e2e (Text) passes 25 of 48 tasks (APR 52.1%")
    assert "synth-e2e (Audio) passes 21 of 48 tasks (APR 43.8%" in found["Systems"]
    # the overall differences: every interval holds zero -> "not detectable", never "no difference"
    assert "synth-e2e (Audio) minus synth-e2e (Text): APR \u22128.3 pp" in found["Paired differences"]
    assert found["Paired differences"].count("not detectable with n = 48 shared tasks") == 6
    assert "8 are passed by synth-e2e (Audio) only and 12 by synth-e2e (Text) only" in found["Paired differences"]
    assert "no difference" not in " ".join(found.values()).lower()
    # per axis: the one interval that excludes zero is named with its discordant counts
    assert found["Per axis"].startswith("1 of the 12 per-axis APR differences has an interval that excludes zero: "
                                        "on Self Coherence (SC), synth-e2e (Audio) minus synth-e2e (Text) \u221250.0 pp")
    assert "1 vs 7 discordant tasks of 12" in found["Per axis"]
    assert "the other 11 are not detectable with n = 12 tasks per axis" in found["Per axis"]
    assert "synth-e2e (Audio) meets 125 of 169 rubric items (74.0%)" in found["Rubric items"]
    assert "2 of the 48 tasks of synth-e2e (Audio" in found["Missing responses"]
    assert "agree on 88.2% of the 169 rubric items of synth-e2e (Text)" in found["Judges"]
    page = (example / "report" / "index.html").read_text()
    assert page.index('id="findings"') < page.index('id="figures"') < page.index('id="amc_runs_slice"')
    assert "<b>Per axis.</b> 1 of the 12" in page


def test_findings_read_columns_by_name_and_say_when_an_interval_excludes_zero():
    """Columns added or reordered by the analysis do not change the sentences."""
    row = {"axis": "overall", "system_a": "A", "system_b": "B", "n_tasks": 30, "apr_diff": 20.0,
           "apr_diff_ci_low": 3.3, "apr_diff_ci_high": 36.7, "ars_diff": 1.0, "ars_diff_ci_low": -2.0,
           "ars_diff_ci_high": 4.0, "a_pass_b_fail": 8, "a_fail_b_pass": 2, "p_mcnemar": 0.109375, "p_holm": 0.2,
           "added_by_someone": "x"}
    table = pd.DataFrame([dict(reversed(list(row.items())))])
    text = paired_overall(table).release
    assert text.startswith("A minus B: APR +20.0 pp (95% CI 3.3 to 36.7); ARS +1.0 pp (95% CI \u22122.0 to 4.0), "
                           "not detectable with n = 30 shared tasks; of the 30 tasks both have, 8 are passed by A only "
                           "and 2 by B only (exact McNemar p = 0.11, Holm-adjusted p = 0.20)")
    assert paired_by_axis(table) is None
    one = pd.DataFrame([{"system": "A", "axis": "overall", "n_tasks": 4, "n_passed": 4, "apr": 100.0, "apr_ci_low": 51.0,
                         "apr_ci_high": 100.0, "ars": 100.0, "ars_ci_low": 100.0, "ars_ci_high": 100.0}])
    assert systems_overall(one).release == ("A passes 4 of 4 tasks (APR 100.0%, 95% CI 51.0 to 100.0; ARS 100.0%, "
                                            "95% CI 100.0 to 100.0).")


@pytest.mark.parametrize("shape", ["one_system", "one_axis", "extremes", "long_names"])
def test_odd_shapes_give_their_figures_and_findings(tmp_path, shape):
    out = _report(tmp_path, shape, n_boot=100)
    figs = sorted(p.stem for p in (out / "figures").glob("*.png"))
    found = {r["topic"]: r["release"] for r in read_findings(out)["amc_runs"]}
    page = (out / "report" / "index.html").read_text()
    if shape == "one_system":   # nothing to pair
        assert figs == ["amc_runs_apr_ars", "amc_runs_rubric_rates"] and "Paired differences" not in found
        assert found["Systems"].startswith("synth-e2e (Audio) passes 21 of 48 tasks")
    elif shape == "one_axis":
        assert len(figs) == 3 and found["Axes"] == "Only one axis was run (Inference Memory (IM)): no comparison between axes."
    elif shape == "extremes":
        assert "all-met (Text) passes 48 of 48 tasks (APR 100.0%" in found["Systems"]
        assert "none-met (Text) passes 0 of 48 tasks (APR 0.0%" in found["Systems"]
        assert "all-met (Text) meets 169 of 169 rubric items (100.0%)" in found["Rubric items"]
        assert "all-met (Text) minus none-met (Text): APR +100.0 pp (95% CI 51.5 to 100.0);" in found["Paired differences"]
    else:
        assert f"{LONG} (Audio) passes" in found["Systems"]
        assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt; &amp; Sons" in page
        assert NASTY in (out / "report" / "index.md").read_text()
    assert re.search(r"<h2 id=\"findings\">Findings</h2>", page)
