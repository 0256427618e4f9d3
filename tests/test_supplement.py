"""Supplementary material: names as in the paper, booktabs LaTeX at printed precision, deterministic zip."""
from __future__ import annotations

import json
import os
import shutil
import zipfile

import pandas as pd
import pytest

from voxmem_analysis.cli import main
from voxmem_analysis.output import latex_cells
from voxmem_analysis.reproduce.published import printed_decimals
from voxmem_analysis.reproduce.supplement import paper_figure_names, write_zip


def test_paper_figure_names():
    got = paper_figure_names(["fig5_operation_evidence_32k", "fig6_scaling", "fig6_retention", "figure7",
                              "table18_forest", "d5_sensitivity", "explorer_subtype_32k", "validation_counts",
                              "fig10_subtypes"])
    assert got == {
        "fig5_operation_evidence_32k": "figure5", "fig6_retention": "figure6_retention",
        "fig6_scaling": "figure6_scaling", "figure7": "figure7", "fig10_subtypes": "figure10",
        "table18_forest": "table18_forest", "d5_sensitivity": "d5_sensitivity",
    }


def format_table(table, name, published):
    """Every cell of ``table`` as the LaTeX text the supplement prints at ``published``'s precision of ``name``."""
    return pd.DataFrame(latex_cells(table, decimals=printed_decimals(name, published)), index=table.index,
                        columns=table.columns)


def test_format_table_uses_the_printed_precision():
    pub = pd.DataFrame({"artifact": ["table13"] * 3, "row": ["All", "All", "AR"], "column": ["κ", "n", "κ"],
                        "decimals": [3, 0, 3]})
    t = pd.DataFrame({"n": [11978.0, 1949.0, 5.0], "κ": [0.95312, 0.9, 0.81234], "Other": [1.25, 2.0, None],
                      "Count": [3.0, 4.0, 5.0]},
                     index=pd.Index(["All", "AR", "Extra"], name="Slice"))
    f = format_table(t, "table13", pub)
    assert f.loc["All"].tolist() == ["11,978", "0.953", "1.2", "3"]     # counts from 10,000 on as journals print them
    assert f.loc["AR", "κ"] == "0.900"          # exact cell
    assert f.loc["Extra", "κ"] == "0.812"       # column's usual precision
    assert f.loc["Extra", "Other"] == ""
    assert f.index.name == "Slice"


def test_latex_numbers_a_journal_takes():
    """p below 0.001 in scientific notation, counts as integers (even read back as floats), an estimate and
    its interval with the same decimals, typographic minus signs, readable headers."""
    from voxmem_analysis.output import table_to_latex

    pub = pd.DataFrame({"artifact": ["table2"] * 2, "row": ["All", "All"], "column": ["Δ", "n"], "decimals": [1, 0]})
    t = pd.DataFrame({"n": [669.0, 474.0], "Δ": [31.0912, -5.12821], "p_value": [5.92923e-47, 0.143307],
                      "Δ 95% CI low": [27.3543, -10.25641], "Δ 95% CI high": [34.8281, 1.5],
                      "kappa": [0.953, 0.9], "kappa_ci_low": [0.9467, 0.88], "kappa_ci_high": [0.9585, 0.93]},
                     index=pd.Index(["All", "Speech Semantics"], name="row"))
    f = format_table(t, "table2", pub)
    assert f.loc["All"].tolist() == ["669", "31.1", r"$5.9\times10^{-47}$", "27.4", "34.8", "0.953", "0.947", "0.959"]
    assert f.loc["Speech Semantics"].tolist()[:5] == ["474", "$-$5.1", "0.143", "$-$10.3", "1.5"]
    head = table_to_latex(t).splitlines()[5]
    assert head == (r" & n & $\Delta$ & p & $\Delta$ 95\% CI low & $\Delta$ 95\% CI high & $\kappa$ & "
                    r"$\kappa$, CI low & $\kappa$, CI high \\")


def test_zip_is_deterministic(tmp_path):
    folder = tmp_path / "voxmem_supplement"
    folder.mkdir()
    (folder / "b.tex").write_text("b")
    (folder / "a.csv").write_text("a")
    z1 = write_zip(folder, tmp_path / "one.zip")
    os.utime(folder / "a.csv", (1_000_000_000, 1_000_000_000))
    (folder / "b.tex").chmod(0o600)
    z2 = write_zip(folder, tmp_path / "two.zip")
    assert z1.read_bytes() == z2.read_bytes()
    with zipfile.ZipFile(z1) as zf:
        assert zf.namelist() == ["voxmem_supplement/a.csv", "voxmem_supplement/b.tex"]
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert zf.read("voxmem_supplement/b.tex") == b"b"


def _fake_run(tiny_release, repro, *, n_boot=20):
    """A reproduce output of the tiny release as the notebooks would leave it: Table 15 in long form
    and three figures, each recorded in provenance.json, and run.json naming the notebook's record."""
    from voxmem_analysis import artifacts, load_release, output
    from voxmem_analysis.io import release_fingerprint
    from voxmem_analysis.reproduce.provenance import OutputFolder, read_records

    release = load_release(tiny_release)
    out = OutputFolder(repro, notebook="10_main_results", release=release, parameters={"seed": 0, "n_boot": n_boot})
    output.save_table(artifacts.compute("table15", release, budget="8K"), out, "table15", show=False,
                      synthetic=True, caption="Table 15: accuracy (%) at 8K")
    (repro / "figures").mkdir(parents=True, exist_ok=True)
    figs = {"fig5_operation_evidence_32k": b"%PDF-1.4 five", "table18_forest": b"%PDF-1.4 forest",
            "explorer_subtype_32k": b"%PDF-1.4 explorer"}
    for stem, data in figs.items():
        (repro / "figures" / f"{stem}.pdf").write_bytes(data)
    out.record([repro / "figures" / f"{stem}.pdf" for stem in figs])
    run = {"seed": 0, "n_boot": n_boot, "data_dir": str(tiny_release),
           "release": {"name": "tiny", "synthetic": True, "fingerprint": release_fingerprint(tiny_release)},
           "notebooks": [{"name": "10_main_results", "status": "ok", "provenance": out.source,
                          "outputs": sorted(read_records(repro))}]}
    (repro / "run.json").write_text(json.dumps(run))
    return out


def test_supplement_from_a_reproduce_output(tiny_release, tmp_path, capsys):
    (tiny_release / "release.json").write_text(json.dumps({"name": "tiny", "synthetic": True}))
    repro = tmp_path / "repro"
    _fake_run(tiny_release, repro)
    zips = []
    for k in (1, 2):
        out = tmp_path / f"sup{k}"
        rc = main(["supplement", "--data", str(tiny_release), "--out", str(out), "--from", str(repro),
                   "--n-boot", "20"])
        assert rc == 0
        folder = out / "voxmem_supplement"
        assert (folder / "figure5.pdf").read_bytes() == b"%PDF-1.4 five"
        assert (folder / "table18_forest.pdf").exists()
        assert not any("explorer" in p.name for p in folder.iterdir())
        readme = (folder / "README.md").read_text()
        assert "SYNTHETIC DATA -- not real model output" in readme and "`figure5.pdf`" in readme
        assert "explorer_subtype_32k" in readme        # listed as left out, not silently dropped
        assert "| `10_main_results` | `n_boot=20, seed=0` | tiny (`sha256:" in readme   # what made it
        # the numbers are exactly those the notebook wrote, and Table 15 is rebuilt from them
        numbers = pd.read_csv(folder / "voxmem_numbers.csv")
        written = pd.read_csv(repro / "tables" / "table15.long.csv")
        pd.testing.assert_frame_equal(numbers, written)
        tex = (folder / "table15.tex").read_text()
        assert r"\toprule" in tex and r"\bottomrule" in tex and "SYNTHETIC DATA" in tex
        assert "\\renewcommand{\\thetable}{15}\n\\caption{Accuracy (\\%) at 8K" in tex   # the paper's table number
        zips.append((out / "voxmem_supplement.zip").read_bytes())
    assert zips[0] == zips[1]


def test_supplement_refuses_outputs_made_otherwise_unless_allowed(tiny_release, tmp_path, capsys):
    """A notebook re-run by hand with other parameters into the folder (what JupyterLab does) is named,
    never passed off as part of the run."""
    from voxmem_analysis import artifacts, load_release, output
    from voxmem_analysis.reproduce.provenance import OutputFolder

    repro = tmp_path / "repro"
    _fake_run(tiny_release, repro)
    later = OutputFolder(repro, notebook="10_main_results", release=load_release(tiny_release),
                         parameters={"seed": 0, "n_boot": 200})
    output.save_table(artifacts.compute("table15", load_release(tiny_release), budget="8K"), later, "table15",
                      show=False)
    args = ["supplement", "--data", str(tiny_release), "--out", str(tmp_path / "sup"), "--from", str(repro)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "holds 1 output(s) not made like the rest of its run" in err
    assert "tables/table15 (.csv, .long.csv, .md, .tex): n_boot = 200 (the run: 20)" in err
    assert not (tmp_path / "sup" / "voxmem_supplement.zip").exists()
    assert main([*args, "--allow-mixed"]) == 0
    readme = (tmp_path / "sup" / "voxmem_supplement" / "README.md").read_text()
    assert "- `tables/table15 (.csv, .long.csv, .md, .tex)`: n_boot = 200 (the run: 20)" in readme
    assert "packaged although not made like the rest of the run" in capsys.readouterr().err


def test_supplement_refuses_a_run_of_other_data_or_settings(tiny_release, tmp_path, capsys):
    repro = tmp_path / "repro"
    _fake_run(tiny_release, repro)
    other = tmp_path / "other"
    shutil.copytree(tiny_release, other)
    (next(other.rglob("*.jsonl"))).write_text("")
    assert main(["supplement", "--data", str(other), "--out", str(tmp_path / "s1"), "--from", str(repro)]) == 2
    assert "was made from other data than" in capsys.readouterr().err
    assert main(["supplement", "--data", str(tiny_release), "--out", str(tmp_path / "s2"), "--from", str(repro),
                 "--seed", "5"]) == 2
    assert "was made with seed 0, not 5" in capsys.readouterr().err


def test_supplement_requires_figures_folder(tiny_release, tmp_path):
    assert main(["supplement", "--data", str(tiny_release), "--out", str(tmp_path / "o"),
                 "--from", str(tmp_path / "nothing")]) == 2
    shutil.rmtree(tmp_path / "o", ignore_errors=True)


# ----------------------------------------------------------------------------- every release kind (issue 23)
_EXCEPTION_TEXT = ("Traceback", "Error:", "has no attribute", "is not callable", "Exception", "KeyError", "ValueError")


def _supplement_of(data, tmp_path, *only):
    from voxmem_analysis.cli import main

    src = None
    if only:
        src = tmp_path / "run"
        assert main(["reproduce", "--data", str(data), "--out", str(src), "--only", ",".join(only), "--n-boot", "50",
                     "--no-progress"]) == 0
    args = ["supplement", "--data", str(data), "--out", str(tmp_path / "sup"), "--no-progress"]
    args += ["--from", str(src)] if src else ["--n-boot", "50"]
    return main(args), tmp_path / "sup" / "voxmem_supplement"


@pytest.mark.parametrize("kind", ["paper", "own_run", "amc"])
def test_supplement_works_for_every_release_kind(kind, tmp_path, capsys):
    """Exit 0 on the paper's release, a user's own run and an Audio MultiChallenge release; no exception text
    in anything written; every section the data cannot support named with its reason."""
    from conftest import REPO

    data = {"paper": REPO / "data" / "synthetic", "own_run": REPO / "data" / "examples" / "my_eval",
            "amc": REPO / "data" / "synthetic-amc"}[kind]
    only = ("31_transcript_ablation", "70_audio_multichallenge") if kind == "paper" else ()
    rc, folder = _supplement_of(data, tmp_path, *only)
    err = capsys.readouterr().err
    assert rc == 0, err
    texts = {p.name: p.read_text(encoding="utf-8") for p in folder.iterdir() if p.suffix in (".md", ".tex")}
    for name, text in texts.items():
        assert not [e for e in _EXCEPTION_TEXT if e in text], name
    readme = texts["README.md"]
    if kind == "own_run":
        assert "- `30_judge_agreement`: the release has no judge2/ folder (optional part)" in readme
        assert "`table15.tex`" in readme and "`table18.tex`" in readme
        t15 = texts["table15.tex"]
        assert "\nn & 30 & 22 & 39 & 19 & 110 \\\\" in t15 and "110.0" not in t15
    if kind == "paper":
        t2 = texts["table2.tex"]
        assert r"$7.3\times10^{-20}$" in t2 and "0.00 " not in t2          # McNemar p, never 0.00
        assert r"Speech Semantics & 195 & 75.9 & 70.8 & 5.1 & 0.143 & $-$" in t2   # CI: n_boot 50
    if kind == "amc":
        assert readme.startswith("# Audio MultiChallenge supplementary material")
        assert {"amc_table2.tex", "amc_table4.tex"} <= set(texts) and (folder / "amc_figure8.pdf").is_file()
        t4 = texts["amc_table4.tex"]
        assert " & 385 & " in t4 and "385.0" not in t4 and "APR, CI low" in texts["amc_table2.tex"]
