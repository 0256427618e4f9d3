"""``supplement`` packages only bytes it can vouch for: each output's digest in provenance.json must match
the file (a number edited by hand, a table copied in from another output are refused, or named in the
README with ``--allow-mixed``), and an output folder of an older layout is refused with the reason."""
from __future__ import annotations

import json
import shutil

import pytest

from test_supplement import _fake_run
from voxmem_analysis.cli import main
from voxmem_analysis.reproduce.provenance import PROVENANCE_FILE


@pytest.fixture
def repro(tiny_release, tmp_path):
    (tiny_release / "release.json").write_text(json.dumps({"name": "tiny", "synthetic": True}))
    _fake_run(tiny_release, tmp_path / "repro")
    return tmp_path / "repro"


def _supplement(release, repro, out, *extra) -> int:
    return main(["supplement", "--data", str(release), "--out", str(out), "--from", str(repro), *extra])


def test_a_number_edited_by_hand_is_refused_or_named(tiny_release, repro, tmp_path, capsys):
    long_csv = repro / "tables" / "table15.long.csv"
    rows = long_csv.read_text().splitlines()
    i = rows.index("table15,n,Overall,2.0")
    rows[i] = "table15,n,Overall,1799.0"            # a count edited by hand
    long_csv.write_text("\n".join(rows) + "\n")
    assert _supplement(tiny_release, repro, tmp_path / "sup") == 2
    err = capsys.readouterr().err
    assert "tables/table15 (.long.csv): its bytes are not those its notebook wrote (changed or replaced since)" in err
    assert not (tmp_path / "sup" / "voxmem_supplement").exists()
    assert _supplement(tiny_release, repro, tmp_path / "sup", "--allow-mixed") == 0
    readme = (tmp_path / "sup" / "voxmem_supplement" / "README.md").read_text()
    assert "- `tables/table15 (.long.csv)`: its bytes are not those its notebook wrote" in readme
    assert "1799" in (tmp_path / "sup" / "voxmem_supplement" / "table15.tex").read_text()   # packaged as asked


def test_a_table_copied_from_another_output_is_refused(tiny_release, repro, tmp_path, capsys):
    other_release = tmp_path / "other_rel"
    shutil.copytree(tiny_release, other_release)
    (other_release / "predictions" / "b" / "all.jsonl").unlink()    # another release: other numbers
    other = tmp_path / "other_out"
    _fake_run(other_release, other)
    for f in (other / "tables").glob("table15.*"):                 # copied over, without its record
        shutil.copyfile(f, repro / "tables" / f.name)
    shutil.copyfile(other / "tables" / "table15.csv", repro / "tables" / "table99.csv")   # and one of its own
    assert _supplement(tiny_release, repro, tmp_path / "sup") == 2
    err = capsys.readouterr().err
    assert "tables/table15 (.csv, .long.csv, .md, .tex): its bytes are not those its notebook wrote" in err
    assert "tables/table99 (.csv): no provenance record: not written by a notebook of this workbook" in err


@pytest.mark.parametrize("older", ["no digests", "format 1", "no long csv"])
def test_an_output_of_an_older_layout_is_refused_with_the_reason(tiny_release, repro, tmp_path, capsys, older):
    prov = json.loads((repro / PROVENANCE_FILE).read_text())
    if older in ("no digests", "format 1"):
        for rec in prov["files"].values():
            rec.pop("sha256")
        if older == "format 1":
            prov["format"] = "voxmem-provenance/1"
        (repro / PROVENANCE_FILE).write_text(json.dumps(prov))
        why = "its provenance.json records no digest of the outputs' bytes"
    else:
        for f in (repro / "tables").glob("*.long.csv"):
            f.unlink()
            del prov["files"][f"tables/{f.name}"]
        (repro / PROVENANCE_FILE).write_text(json.dumps(prov))
        why = "its tables/ holds no *.long.csv, the exact numbers the LaTeX tables are built from"
    assert _supplement(tiny_release, repro, tmp_path / "sup") == 2
    err = capsys.readouterr().err
    assert f"was written by an older version of voxmem-analysis ({why})" in err
    assert "run `voxmem-analysis reproduce --data" in err
    assert not (tmp_path / "sup" / "voxmem_supplement.zip").exists()
