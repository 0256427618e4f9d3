"""Command-line messages: every fault one message (no traceback), nothing misleading.

Each case runs the command line in-process (``voxmem_analysis.cli.main``) and asserts the exit
code, the message text and that no Python traceback reached standard error.  Reproduce
atomicity (staging, lock, stale files, interruption) is in ``test_reproduce_atomic.py``.
"""
from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as st

from voxmem_analysis.errors import ResourceLimitError, VoxMemDataError
from voxmem_analysis.stats import PairedSettings, paired_bootstrap_frame
from voxmem_analysis.stats import resources as R

from conftest import SYNTHETIC
from conftest import run_cli as run

FIX = Path(__file__).parent / "fixtures" / "longmemeval"
MANIFEST = ["--manifest", str(FIX / "manifest.csv"), "--questions", str(FIX / "questions.json")]


# ============================================================================ output paths
@pytest.fixture
def a_file(tmp_path) -> Path:
    f = tmp_path / "plain.txt"
    f.write_text("I am a regular file\n")
    return f


def _file_cases(rel: Path, target: str) -> list[list[str]]:
    return [
        ["slice", "--data", str(rel), "--by", "model", "--out", target],
        ["slice", "--data", str(rel), "--by", "model", "--plot", target.replace(".csv", ".png")],
        ["items", "--data", str(rel), "--model", "Model-A", "--budget", "8K", "--out", target],
        ["export-frame", "--data", str(rel), "--out", target],
    ]


def test_output_file_under_a_regular_file(tiny_release, a_file, capsys):
    target = str(a_file / "sub" / "t.csv")
    for argv in _file_cases(tiny_release, target):
        rc, out, err = run(argv, capsys)
        assert rc == 2, argv
        assert f"{argv[0]}: " in err and repr(str(a_file)) in err, err
        assert "is a regular file, so no folder can be created under it; choose a path in a folder" in err
        assert not out


def test_output_folder_is_a_file_or_under_one(tiny_release, a_file, capsys):
    for cmd in (["reproduce", "--data", str(tiny_release)], ["supplement", "--data", str(tiny_release)],
                ["synth"]):
        rc, _, err = run([*cmd, "--out", str(a_file)], capsys)
        assert rc == 2 and f"error: {cmd[0]}: --out {str(a_file)!r} is a regular file, not a folder" in err, err
        rc, _, err = run([*cmd, "--out", str(a_file / "x")], capsys)
        assert rc == 2 and "so no folder can be created under it; choose a path in a folder" in err, err


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs /proc (Linux)")
def test_output_folder_that_cannot_be_created(tiny_release, capsys):
    # nothing can be created in /proc, not even by root: the probe finds it before any work
    bad = "/proc/voxmem-no-such-folder/out"
    rc, _, err = run(["slice", "--data", str(tiny_release), "--by", "model", "--out", bad + "/t.csv"], capsys)
    assert rc == 2 and "cannot write in the folder '/proc/voxmem-no-such-folder/out'" in err
    assert "choose a location you can write to" in err
    rc, _, err = run(["reproduce", "--data", str(tiny_release), "--out", bad], capsys)
    assert rc == 2 and "error: reproduce: --out '/proc/voxmem-no-such-folder/out': cannot write in the folder" in err


def test_output_file_is_a_folder(tiny_release, tmp_path, capsys):
    rc, _, err = run(["slice", "--data", str(tiny_release), "--by", "model", "--out", str(tmp_path)], capsys)
    assert rc == 2 and f"--out {str(tmp_path)!r} is a folder; give a file name" in err


def test_output_in_new_folders_is_written(tiny_release, tmp_path, capsys):
    target = tmp_path / "a" / "b" / "t.csv"
    rc, _, err = run(["slice", "--data", str(tiny_release), "--by", "model", "--out", str(target)], capsys)
    assert rc == 0 and target.is_file() and "wrote" in err
    assert not [p for p in (tmp_path / "a" / "b").iterdir() if p.name.startswith(".voxmem-probe")]


# ============================================================================ --n-boot and memory
@pytest.mark.parametrize("cmd", [["slice", "--data", "{rel}", "--by", "model"], ["table", "d5", "--data", "{rel}"],
                                 ["compare", *MANIFEST]])
def test_huge_n_boot_refused_before_any_work(cmd, tiny_release, capsys):
    argv = [a.format(rel=tiny_release) for a in cmd] + ["--n-boot", "100000000000"]
    rc, _, err = run(argv, capsys)
    assert rc == 2
    assert ("argument --n-boot: --n-boot 100,000,000,000 is more than the maximum of 1,000,000 resamples" in err)
    assert "VOXMEM_MAX_N_BOOT" in err


def test_n_boot_maximum_overridable(monkeypatch):
    assert R.max_n_boot() == 1_000_000
    monkeypatch.setenv(R.MAX_N_BOOT_ENV, "5000000")
    assert R.check_n_boot(4_000_000) == 4_000_000
    with pytest.raises(ResourceLimitError, match="n_boot 6,000,000 is more than the maximum of 5,000,000"):
        R.check_n_boot(6_000_000)


def test_memory_estimate_and_limit():
    # the 45 GiB: 100 million resamples x 30 columns x 8 bytes x 2 arrays
    assert R.bootstrap_memory(10**8, 30, 2) == 48_000_000_000
    assert R.format_bytes(48_000_000_000) == "44.7 GiB"
    assert R.memory_limit() == 2 * 2**30
    assert R.parse_bytes("8GiB") == 8 * 2**30 and R.parse_bytes("500MB") == 500_000_000
    assert R.parse_bytes("1e9") == 10**9
    with pytest.raises(ResourceLimitError) as ei:
        R.check_bootstrap_memory(10**8, 30, arrays=2, what="the test bootstrap")
    msg = str(ei.value)
    assert msg.startswith("the test bootstrap would need about 44.7 GiB of memory (100,000,000 resamples x 30 "
                          "column(s) x 8 bytes x 2 array(s)), more than the limit of 2 GiB")
    assert "VOXMEM_BOOTSTRAP_MEMORY" in msg
    assert ei.value.estimate == 48e9 and ei.value.limit == 2 * 2**30
    assert not isinstance(ei.value, VoxMemDataError)  # a notebook section must not "skip" it


def test_memory_guard_in_the_engine(monkeypatch):
    """Refused before any resample is drawn, with the estimate for the actual frame."""
    monkeypatch.setenv(R.MEMORY_ENV, "1MiB")
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"item": np.repeat(np.arange(50), 2), "condition": ["a", "b"] * 50,
                       "value": rng.integers(0, 2, 100).astype(float), "series": "s"})
    with pytest.raises(ResourceLimitError, match=r"the paired bootstrap would need about 4.58 MiB of memory "
                                                 r"\(100,000 resamples x 1 column\(s\) x 8 bytes x 6 array\(s\)\)"):
        paired_bootstrap_frame(df, item="item", series="series", condition="condition", value="value",
                               baseline="a", comparison="b", settings=PairedSettings(n_boot=100_000))
    assert len(paired_bootstrap_frame(df, item="item", series="series", condition="condition", value="value",
                                      baseline="a", comparison="b", settings=PairedSettings(n_boot=1000))) == 2


def test_memory_guard_cli(tiny_release, monkeypatch, capsys):
    monkeypatch.setenv(R.MEMORY_ENV, "1KiB")
    rc, _, err = run(["slice", "--data", str(tiny_release), "--by", "model", "--interval", "bootstrap",
                      "--n-boot", "1000"], capsys)
    assert rc == 2
    assert ("error: slice: the item bootstrap would need about 31.2 KiB of memory (1,000 resamples x 2 column(s) "
            "x 8 bytes x 2 array(s)), more than the limit of 1 KiB") in err
    monkeypatch.setenv(R.MEMORY_ENV, "lots")
    rc, _, err = run(["slice", "--data", str(tiny_release), "--by", "model", "--interval", "bootstrap"], capsys)
    assert rc == 2 and "VOXMEM_BOOTSTRAP_MEMORY='lots' is not a size" in err


# ============================================================================ --rejection-pattern
@pytest.mark.parametrize("cmd", ["slice", "table table15", "validate", "export-frame"])
def test_invalid_rejection_pattern_names_the_option(cmd, tiny_release, tmp_path, capsys):
    argv = cmd.split() + ["--data", str(tiny_release), "--rejection-pattern", "blocked (before"]
    if cmd == "export-frame":
        argv += ["--out", str(tmp_path / "f.csv")]
    rc, _, err = run(argv, capsys)
    assert rc == 2
    assert "argument --rejection-pattern: not a valid regular expression (missing ), unterminated subpattern" in err
    assert "'blocked (before'" in err and not (tmp_path / "f.csv").exists()


# ============================================================================ compare
def _one_system_manifest(tmp_path: Path, systems=("System-A",), budgets=("32k",)) -> list[str]:
    rows = ["path,system,budget,judge"]
    for s, b in zip(systems, budgets):
        src = FIX / "verdicts" / f"hyp_{s[-1]}_{b}.jsonl.eval-results-gpt-4o-2024-08-06"
        rows.append(f"{src},{s},{b},gpt-4o")
    (tmp_path / "m.csv").write_text("\n".join(rows) + "\n")
    return ["--manifest", str(tmp_path / "m.csv"), "--questions", str(FIX / "questions.json")]


def test_compare_one_system_is_an_error(tmp_path, capsys):
    rc, out, err = run(["compare", *_one_system_manifest(tmp_path), "--n-boot", "100"], capsys)
    assert rc == 2 and not out
    assert "error: compare: compare needs at least two systems; found 1 (System-A): list two or more systems" in err


def test_compare_systems_never_at_the_same_budget(tmp_path, capsys):
    m = _one_system_manifest(tmp_path, ("System-A", "System-B"), ("32k", "115k"))
    rc, out, err = run(["compare", *m, "--n-boot", "100"], capsys)
    assert rc == 2 and not out
    assert "compare needs two systems at the same budget; no budget has more than one of System-A, System-B" in err


def test_compare_two_systems_still_works(capsys):
    rc, out, _ = run(["compare", *MANIFEST, "--n-boot", "100"], capsys)
    assert rc == 0 and len(pd.read_csv(io.StringIO(out))) == 6  # 3 pairs x 2 budgets


# ============================================================================ slice: pooling and --judge
def test_slice_by_system_has_no_cross_system_row_unless_pool(capsys):
    rc, out, err = run(["slice", *MANIFEST, "--by", "system,budget", "--n-boot", "200"], capsys)
    t = pd.read_csv(io.StringIO(out))
    assert rc == 0 and set(t["level"]) == {"slice"} and "overall" not in set(t["system"])
    assert "# no overall or macro row pooling several systems (each system is its own analysis); --pool adds it" in err
    rc, out, err = run(["slice", *MANIFEST, "--by", "system,budget", "--n-boot", "200", "--pool"], capsys)
    t = pd.read_csv(io.StringIO(out))
    assert rc == 0 and list(t.loc[t["level"] == "overall", "system"]) == ["overall"]
    assert "--pool adds it" not in err
    # with a question-type column the overall rows stay within each system: unchanged, no note
    rc, out, err = run(["slice", *MANIFEST, "--by", "system,question_type", "--n-boot", "200"], capsys)
    t = pd.read_csv(io.StringIO(out))
    assert sorted(t.loc[t["level"] == "overall", "system"]) == ["System-A", "System-B", "System-C"]
    assert "--pool adds it" not in err


def test_slice_by_model_with_data(tiny_release, capsys):
    rc, out, err = run(["slice", "--data", str(tiny_release), "--by", "model", "--n-boot", "200"], capsys)
    t = pd.read_csv(io.StringIO(out))
    assert rc == 0 and list(t["model"]) == ["Model-A", "Model-B"] and "several models" in err


def test_slice_honours_judge(capsys):
    # System-A at 32k has two judges: gpt-4o (u01..t03: 7 of 10 correct) and llama-3.1-70b (6 of 10)
    rows = {}
    for judge in ("gpt-4o", "llama-3.1-70b"):
        rc, out, err = run(["slice", *MANIFEST, "--by", "system,budget", "--judge", judge, "--n-boot", "200"], capsys)
        assert rc == 0 and f"using '{judge}'" in err
        t = pd.read_csv(io.StringIO(out)).set_index(["system", "budget"])
        rows[judge] = int(t.loc[("System-A", "32k"), "n_correct"])
    assert rows == {"gpt-4o": 7, "llama-3.1-70b": 6}
    rc, out, err = run(["slice", *MANIFEST, "--by", "system,judge", "--judge", "llama-3.1-70b"], capsys)
    t = pd.read_csv(io.StringIO(out))
    assert rc == 0 and "--judge llama-3.1-70b: only its verdicts" in err
    assert list(t.loc[t["level"] == "slice", "judge"]) == ["llama-3.1-70b"]  # one system left: its overall row stays
    rc, _, err = run(["slice", *MANIFEST, "--by", "system,judge", "--judge", "nobody"], capsys)
    assert rc == 2 and "--judge 'nobody' is not in the data; judges: gpt-4o, llama-3.1-70b" in err


def test_slice_judge_with_data_is_an_error(tiny_release, capsys):
    rc, _, err = run(["slice", "--data", str(tiny_release), "--judge", "x"], capsys)
    assert rc == 2 and "--judge selects among the judges of a --manifest" in err


# ============================================================================ error totals
def test_error_totals_count_findings_not_summary_lines(tmp_path, capsys):
    """60 malformed lines in one file: 50 listed and one summary line "... and 10 more" -> 60 errors."""
    (tmp_path / "v.jsonl").write_text("{not json\n" * 60)
    (tmp_path / "m.csv").write_text("path,system,budget\nv.jsonl,S,32k\n")
    argv = ["slice", "--manifest", str(tmp_path / "m.csv"), "--questions", str(FIX / "questions.json")]
    rc, _, err = run(["compare", *argv[1:], "--lenient"], capsys)
    assert "# 60 error(s)," in err and "malformed_json=60" in err
    assert "v.jsonl: ... and 10 more like the above (x10)" in err


def test_data_error_total_counts_findings():
    from voxmem_analysis.errors import Problem

    probs = [Problem("bad", "error", "broken", "f.jsonl", i) for i in range(1, 51)]
    probs.append(Problem("bad", "error", "... and 10 more like the above", "f.jsonl", None, None, 10))
    msg = str(VoxMemDataError(probs))
    assert msg.startswith("60 error(s) in input data\n")
    assert msg.endswith("\n  ... and 40 more")  # 20 shown of 60


# ============================================================================ D.5 from integer counts
def _exact_rank(values: list[Fraction]) -> np.ndarray:
    """Dense ranks of exact values (ties stay ties; Spearman ranks them again with averages)."""
    order = {v: i for i, v in enumerate(sorted(set(values)))}
    return np.array([order[v] for v in values], dtype=float)


def test_d5_equals_exact_count_spearman(capsys):
    from voxmem_analysis import load_release
    from voxmem_analysis.analysis.results import accuracy
    from voxmem_analysis.analysis.scaling import scaling_plan

    rel = load_release(SYNTHETIC)
    plan = scaling_plan(rel, baseline="8K", comparison="64K")
    acc = accuracy(rel, "evidence_type", models=list(plan.models), budgets=["8K", "64K"], overall=False)
    cnt = acc.set_index(["model", "evidence_type", "budget"])[["n", "n_correct"]]
    cells = sorted({(m, e) for m, e in zip(acc["model"], acc["evidence_type"])})
    assert len(cells) == 40
    base, ret, chg = [], [], []
    for m, e in cells:
        n0, c0 = (int(x) for x in cnt.loc[(m, e, "8K")])
        n1, c1 = (int(x) for x in cnt.loc[(m, e, "64K")])
        base.append(Fraction(c0, n0))
        ret.append(Fraction(c1 * n0, c0 * n1))         # every 8K cell has c0 > 0 here
        chg.append(Fraction(c1, n1) - Fraction(c0, n0))
    ref_ret = st.spearmanr(_exact_rank(base), _exact_rank(ret))
    ref_chg = st.spearmanr(_exact_rank(base), _exact_rank(chg))
    rc, out, _ = run(["table", "d5", "--data", str(SYNTHETIC), "--format", "csv"], capsys)
    d5 = pd.read_csv(io.StringIO(out)).set_index("Measure")
    assert rc == 0
    assert abs(d5.loc["retention", "rho"] - ref_ret.statistic) < 1e-6
    assert abs(d5.loc["change", "rho"] - ref_chg.statistic) < 1e-6
    assert abs(d5.loc["retention", "p"] - ref_ret.pvalue) < 1e-6
    assert abs(d5.loc["change", "p"] - ref_chg.pvalue) < 1e-6
    # the values the issue names: exact ties kept (rounded percentages gave -0.0086 and -0.8101)
    assert round(d5.loc["retention", "rho"], 4) == -0.0078 and round(d5.loc["change", "rho"], 4) == -0.8133


def test_cell_changes_keep_exact_ties():
    """Two cells with equal exact change/retention get identical floats (3/8 -> 6/8 and 6/16 -> 12/16)."""
    from voxmem_analysis.analysis.scaling import _exact_change_retention  # noqa: PLC2701 - the unit under test

    acc = pd.DataFrame({"model": ["a", "a", "b", "b"], "evidence_type": ["e"] * 4, "budget": ["8K", "64K"] * 2,
                        "n": [8, 8, 16, 16], "n_correct": [3, 6, 6, 12]})
    cells = pd.DataFrame({"model": ["a", "b"], "evidence_type": ["e", "e"]})
    change, retention = _exact_change_retention(acc, cells, "8K", "64K")
    assert change[0] == change[1] == 37.5 and retention[0] == retention[1] == 2.0
    # the difference of the rounded percentages differs in the last bit for other counts: 1/7 -> 3/7 vs 2/14 -> 6/14
    acc2 = acc.assign(n=[7, 7, 14, 14], n_correct=[1, 3, 2, 6])
    change, retention = _exact_change_retention(acc2, cells, "8K", "64K")
    assert change[0] == change[1] and retention[0] == retention[1] == 3.0
