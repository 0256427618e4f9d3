"""Supplementary material: names as in the paper, booktabs LaTeX at printed precision, deterministic zip."""
from __future__ import annotations

import json
import os
import shutil
import zipfile

import pandas as pd

from voxmem_analysis.cli import main
from voxmem_analysis.reproduce.supplement import format_table, paper_figure_names, write_zip


def test_paper_figure_names():
    got = paper_figure_names(["fig5_operation_evidence_32k", "fig6_scaling", "fig6_retention", "figure7",
                              "table18_forest", "d5_sensitivity", "explorer_subtype_32k", "validation_counts",
                              "fig10_subtypes"])
    assert got == {
        "fig5_operation_evidence_32k": "figure5", "fig6_retention": "figure6_retention",
        "fig6_scaling": "figure6_scaling", "figure7": "figure7", "fig10_subtypes": "figure10",
        "table18_forest": "table18_forest", "d5_sensitivity": "d5_sensitivity",
    }


def test_format_table_uses_the_printed_precision():
    pub = pd.DataFrame({"artifact": ["table13"] * 3, "row": ["All", "All", "AR"], "column": ["κ", "n", "κ"],
                        "decimals": [3, 0, 3]})
    t = pd.DataFrame({"n": [11978.0, 1949.0, 5.0], "κ": [0.95312, 0.9, 0.81234], "Other": [1.25, 2.0, None],
                      "Count": [3.0, 4.0, 5.0]},
                     index=pd.Index(["All", "AR", "Extra"], name="Slice"))
    f = format_table(t, "table13", pub)
    assert f.loc["All"].tolist() == ["11978", "0.953", "1.2", "3"]
    assert f.loc["AR", "κ"] == "0.900"          # exact cell
    assert f.loc["Extra", "κ"] == "0.812"       # column's usual precision
    assert f.loc["Extra", "Other"] == ""
    assert f.index.name == "Slice"


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


def test_supplement_from_a_reproduce_output(tiny_release, tmp_path, capsys):
    (tiny_release / "release.json").write_text(json.dumps({"name": "tiny", "synthetic": True}))
    repro = tmp_path / "repro"
    (repro / "figures").mkdir(parents=True)
    (repro / "figures" / "fig5_operation_evidence_32k.pdf").write_bytes(b"%PDF-1.4 five")
    (repro / "figures" / "table18_forest.pdf").write_bytes(b"%PDF-1.4 forest")
    (repro / "figures" / "explorer_subtype_32k.pdf").write_bytes(b"%PDF-1.4 explorer")
    zips = []
    for k in (1, 2):
        out = tmp_path / f"sup{k}"
        rc = main(["supplement", "--data", str(tiny_release), "--out", str(out), "--from", str(repro),
                   "--n-boot", "20"])
        folder = out / "voxmem_supplement"
        assert (folder / "figure5.pdf").read_bytes() == b"%PDF-1.4 five"
        assert (folder / "table18_forest.pdf").exists()
        assert not any("explorer" in p.name for p in folder.iterdir())
        readme = (folder / "README.md").read_text()
        assert "SYNTHETIC DATA -- not real model output" in readme and "`figure5.pdf`" in readme
        assert "explorer_subtype_32k" in readme        # listed as left out, not silently dropped
        numbers = pd.read_csv(folder / "voxmem_numbers.csv")
        assert list(numbers.columns) == ["artifact", "row", "column", "value"]
        for tex in folder.glob("table*.tex"):
            text = tex.read_text()
            assert r"\toprule" in text and r"\bottomrule" in text and "SYNTHETIC DATA" in text
        # artifacts the tiny release cannot give (no ablation, no audit records) are named, exit code 1
        assert rc == (1 if "could not be computed" in readme else 0)
        zips.append((out / "voxmem_supplement.zip").read_bytes())
    assert zips[0] == zips[1]
    assert "could not be computed" in capsys.readouterr().err or rc == 0


def test_supplement_requires_figures_folder(tiny_release, tmp_path):
    assert main(["supplement", "--data", str(tiny_release), "--out", str(tmp_path / "o"),
                 "--from", str(tmp_path / "nothing")]) == 2
    shutil.rmtree(tmp_path / "o", ignore_errors=True)
