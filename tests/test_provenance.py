"""provenance.json: which notebook made each output, with which parameters, from which release and version;
outputs made otherwise than their run are named by the report and refused by the supplement."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from conftest import run_cli, write_tiny_release
from voxmem_analysis import output
from voxmem_analysis.io import release_fingerprint
from voxmem_analysis.reproduce.provenance import (PROVENANCE_FILE, Finding, OutputFolder, findings, grouped,
                                                  notebook_source, read_records)


class _Rel:
    """A stand-in for a loaded release: its folder, name and synthetic flag."""

    def __init__(self, path: Path, name: str = "rel", synthetic: bool = True):
        self.path, self.name, self.synthetic = Path(path), name, synthetic


def _table() -> pd.DataFrame:
    return pd.DataFrame({"Overall": [21.25, 0.1 + 0.2], "n": [799, 3]}, index=pd.Index(["A", "B"], name="Model"))


# ----------------------------------------------------------------------------- fingerprint
def test_fingerprint_depends_on_content_and_names_not_times(tmp_path):
    rel = tmp_path / "rel"
    (rel / "predictions").mkdir(parents=True)
    (rel / "predictions" / "a.jsonl").write_text('{"x": 1}\n')
    fp = release_fingerprint(rel)
    assert fp.startswith("sha256:") and len(fp) == 7 + 64
    copy = tmp_path / "copy"
    (copy / "predictions").mkdir(parents=True)
    (copy / "predictions" / "a.jsonl").write_text('{"x": 1}\n')
    assert release_fingerprint(copy) == fp                  # same files, elsewhere, another time: same
    (rel / "predictions" / "a.jsonl").write_text('{"x": 2}\n')   # same size, other bytes
    assert release_fingerprint(rel) != fp
    (rel / "predictions" / "a.jsonl").write_text('{"x": 1}\n')
    assert release_fingerprint(rel) == fp
    (rel / "predictions" / "b.jsonl").write_text("")
    assert release_fingerprint(rel) != fp                   # an added empty file counts


# ----------------------------------------------------------------------------- records
def test_output_folder_records_every_file_it_saves(tmp_path):
    rel = tmp_path / "rel"
    rel.mkdir()
    (rel / "x.jsonl").write_text("{}\n")
    out = OutputFolder(tmp_path / "out", notebook="20_context_scaling", release=_Rel(rel, "mine"),
                       parameters={"seed": 0, "n_boot": 50, "models": None, "out_dir": "anywhere"})
    written = output.save_table(_table(), out, "table18", show=False)
    assert [p.name for p in written] == ["table18.csv", "table18.long.csv", "table18.md", "table18.tex"]
    records = read_records(tmp_path / "out")
    assert sorted(records) == ["tables/table18.csv", "tables/table18.long.csv", "tables/table18.md",
                               "tables/table18.tex"]
    rec = records["tables/table18.csv"]
    assert rec["notebook"] == "20_context_scaling"
    assert rec["parameters"] == {"seed": 0, "n_boot": 50, "models": None, "out_dir": "anywhere"}
    assert rec["release"]["name"] == "mine" and rec["release"]["fingerprint"] == release_fingerprint(rel)
    assert rec["release"]["synthetic"] is True
    from voxmem_analysis import __version__

    assert rec["version"] == __version__
    # the folder is a path wherever one is expected
    assert Path(out) == (tmp_path / "out").resolve() or Path(out) == tmp_path / "out"
    import hashlib

    assert rec["sha256"] == hashlib.sha256((tmp_path / "out" / "tables" / "table18.csv").read_bytes()).hexdigest()
    assert notebook_source(records, "20_context_scaling") == {k: v for k, v in rec.items() if k != "sha256"}
    # no temporary file is left beside the outputs
    assert not [p for p in (tmp_path / "out").rglob("*.part")]


def test_long_form_reads_back_the_same_numbers(tmp_path):
    output.save_table(_table(), tmp_path, "t", formats=("csv",), show=False)
    rows = output.read_long(tmp_path / "tables" / "t.long.csv")
    assert rows == [("t", "A", "Overall", 21.25), ("t", "A", "n", 799), ("t", "B", "Overall", 0.1 + 0.2),
                    ("t", "B", "n", 3)]
    assert rows[2][3] == 0.30000000000000004          # exact, not rounded like the %.6g table CSV


def test_a_bad_long_file_is_named(tmp_path):
    bad = tmp_path / "x.long.csv"
    bad.write_text("artifact,row,column,value\nt,A,B\n")
    with pytest.raises(ValueError, match=r"x.long.csv: line 2: 3 fields, 4 expected"):
        output.read_long(bad)


def _two_notebooks(out: Path, rel: Path) -> None:
    for nb, n_boot in (("10_main_results", 10_000), ("20_context_scaling", 10_000)):
        f = OutputFolder(out, notebook=nb, release=_Rel(rel), parameters={"seed": 0, "n_boot": n_boot})
        output.save_table(_table(), f, nb[3:], formats=("csv",), show=False)


def test_findings_name_what_was_made_otherwise(tmp_path):
    rel, out = tmp_path / "rel", tmp_path / "out"
    rel.mkdir()
    (rel / "a.jsonl").write_text("1\n")
    _two_notebooks(out, rel)
    assert findings(out) == []
    # notebook 20 run again by hand with fewer resamples, for one of its tables only
    again = OutputFolder(out, notebook="20_context_scaling", release=_Rel(rel), parameters={"seed": 0, "n_boot": 200})
    output.save_table(_table(), again, "extra", formats=("csv",), show=False)
    found = findings(out)
    assert [f.file for f in found] == ["tables/extra.csv", "tables/extra.long.csv"]
    assert found[0].what == ("n_boot = 200 (the other outputs of 20_context_scaling: 10000)",)
    assert grouped(found) == [("tables/extra (.csv, .long.csv)",
                               "n_boot = 200 (the other outputs of 20_context_scaling: 10000)")]
    # a file nobody recorded, and a release changed since
    (out / "tables" / "mine.csv").write_text("x\n")
    (rel / "a.jsonl").write_text("2\n")
    later = OutputFolder(out, notebook="10_main_results", release=_Rel(rel), parameters={"seed": 0, "n_boot": 10_000})
    output.save_table(_table(), later, "main_results", formats=("csv",), show=False)
    by_file = {f.file: f.what for f in findings(out)}
    assert by_file["tables/mine.csv"] == ("no provenance record: not written by a notebook of this workbook",)
    # notebook 10 (all its files) now read another version of the release than notebook 20 did: a tie of
    # one notebook each, so both are named
    assert "read another version of" in by_file["notebook 10_main_results"][0]
    assert "read another version of" in by_file["notebook 20_context_scaling"][0]


def test_findings_against_the_run_and_across_notebooks(tmp_path):
    rel, out = tmp_path / "rel", tmp_path / "out"
    rel.mkdir()
    _two_notebooks(out, rel)
    records = read_records(out)
    run = {"notebooks": [{"name": n, "provenance": notebook_source(records, n)}
                         for n in ("10_main_results", "20_context_scaling")]}
    assert findings(out, run) == []
    # the whole of notebook 20 re-made with another seed: consistent in itself, not with the run
    again = OutputFolder(out, notebook="20_context_scaling", release=_Rel(rel), parameters={"seed": 7, "n_boot": 10_000})
    output.save_table(_table(), again, "context_scaling", formats=("csv",), show=False)
    assert {f.file: f.what for f in findings(out, run)}["tables/context_scaling.csv"] == ("seed = 7 (the run: 0)",)
    # without a run record, a notebook whose seed differs from the others' is named as a notebook;
    # with two notebooks there is no majority, and both are named
    assert {f for f in findings(out) if f.file.startswith("notebook")} == {
        Finding("notebook 20_context_scaling", "20_context_scaling", ("seed = 7 (the other notebooks: 0)",)),
        Finding("notebook 10_main_results", "10_main_results", ("seed = 0 (the other notebooks: 7)",))}
    third = OutputFolder(out, notebook="30_judge_agreement", release=_Rel(rel), parameters={"seed": 0, "n_boot": 10_000})
    output.save_table(_table(), third, "judges", formats=("csv",), show=False)
    assert {f for f in findings(out) if f.file.startswith("notebook")} == {
        Finding("notebook 20_context_scaling", "20_context_scaling", ("seed = 7 (the other notebooks: 0)",))}


def test_an_unreadable_record_is_named(tmp_path):
    (tmp_path / PROVENANCE_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="provenance.json: not JSON"):
        read_records(tmp_path)
    (tmp_path / PROVENANCE_FILE).write_text('{"files": {}}')
    with pytest.raises(ValueError, match="not a provenance record"):
        read_records(tmp_path)


# ----------------------------------------------------------------------------- with the runner and a Lab-like run
NOTEBOOK = textwrap.dedent('''\
    # ---
    # jupyter:
    #   kernelspec:
    #     display_name: Python 3
    #     language: python
    #     name: python3
    # ---

    # %% tags=["parameters"]
    data_dir = "data/synthetic"
    out_dir = "figures"
    seed = 0
    n_boot = 10_000

    # %%
    import pandas as pd
    from voxmem_analysis import load_release, output
    from voxmem_analysis.paths import resolve
    from voxmem_analysis.reproduce.provenance import OutputFolder

    release = load_release(resolve(data_dir))
    out = OutputFolder(out_dir, notebook="01_boot", release=release, parameters=dict(seed=seed, n_boot=n_boot))
    t = pd.DataFrame({"n_boot": [n_boot]}, index=pd.Index(["run"], name="what"))
    output.save_table(t, out, "boot", show=False)
    ''')


def test_a_notebook_rerun_by_hand_is_named_by_the_report_and_refused_by_supplement(tiny_release, tmp_path, capsys):
    """reproduce, then the notebook run again with other parameters straight into the output folder (as
    JupyterLab or papermill do), then the report and the supplement: the output is named, never passed off."""
    import papermill as pm

    from voxmem_analysis.cli import main

    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    (nbs / "01_boot.py").write_text(NOTEBOOK)
    out = tmp_path / "out"
    base = ["--data", str(tiny_release), "--out", str(out), "--notebooks", str(nbs), "--no-progress", "--n-boot", "20"]
    assert main(["reproduce", *base]) == 0
    capsys.readouterr()
    run = json.loads((out / "run.json").read_text())
    assert run["provenance"] == [] and run["notebooks"][0]["provenance"]["parameters"]["n_boot"] == 20
    assert read_records(out)["tables/boot.csv"]["release"]["fingerprint"] == run["release"]["fingerprint"]

    import jupytext

    ipynb = tmp_path / "01_boot.ipynb"
    jupytext.write(jupytext.read(nbs / "01_boot.py"), ipynb)
    pm.execute_notebook(str(ipynb), str(tmp_path / "ran.ipynb"), kernel_name="python3", progress_bar=False,
                        parameters={"data_dir": str(tiny_release), "out_dir": str(out), "n_boot": 200})
    assert pd.read_csv(out / "tables" / "boot.csv")["n_boot"].tolist() == [200]

    assert main(["reproduce", "--report-only", "--out", str(out)]) == 0
    html = (out / "report" / "index.html").read_text()
    assert "1 output not made like the rest of this run" in html
    assert "tables/boot (.csv, .long.csv, .md, .tex)</code>: n_boot = 200 (the run: 20)" in html
    assert "Not made like the rest of this run: n_boot = 200 (the run: 20)" in html   # on the table itself
    capsys.readouterr()
    assert main(["supplement", "--data", str(tiny_release), "--out", str(tmp_path / "sup"), "--from", str(out)]) == 2
    assert "tables/boot (.csv, .long.csv, .md, .tex): n_boot = 200 (the run: 20)" in capsys.readouterr().err


@pytest.fixture(scope="session")
def first_run(made_once) -> Path:
    """The output of one complete run of NOTEBOOK on the tiny release (made once; read only)."""
    def make(folder: Path) -> None:
        (folder / "notebooks").mkdir(parents=True)
        (folder / "notebooks" / "01_boot.py").write_text(NOTEBOOK)
        rc, out, err = run_cli(["reproduce", "--data", write_tiny_release(folder / "rel"), "--out", folder / "out",
                                "--notebooks", folder / "notebooks", "--no-progress", "--n-boot", "20"])
        assert rc == 0, out + err

    return made_once("provenance-first-run", make) / "out"


def test_a_release_changed_during_the_run_fails_it_and_keeps_the_previous_output(tiny_release, tmp_path, capsys,
                                                                                  first_run):
    import shutil

    from voxmem_analysis.cli import main

    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    (nbs / "01_boot.py").write_text(NOTEBOOK)
    out = tmp_path / "out"
    base = ["--data", str(tiny_release), "--out", str(out), "--notebooks", str(nbs), "--no-progress", "--n-boot", "20"]
    shutil.copytree(first_run, out)                       # a complete earlier run of the same notebook
    before = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    victim = sorted(tiny_release.rglob("*.jsonl"))[0]
    (nbs / "01_boot.py").write_text(NOTEBOOK + f"\nopen({str(victim)!r}, 'a').write('\\n')\n")
    capsys.readouterr()
    assert main(["reproduce", *base]) == 1
    printed = capsys.readouterr()
    assert "changed during the run" in printed.out
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
