"""Start-up of the command line: `--help`, `table --list` and `table NAME --help` import none of the heavy
libraries (checked by module list, not by time), and what they read from the source (artifact titles,
each artifact's parameters) matches the imported registry."""
from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("scipy", "matplotlib", "seaborn", "papermill", "statsmodels", "pandas", "pingouin", "nbformat", "polars",
         "pyarrow")


def _imported(args: list[str]) -> set[str]:
    code = ("import sys\nfrom voxmem_analysis.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('\\n'.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return set(done.stderr.split())


@pytest.mark.parametrize("args", [["--help"], ["table", "--list"], ["cache"], ["table", "table18", "--help"],
                                  ["table", "table2", "-h"], ["table", "amc_table2", "--help"]])
def test_light_commands_import_no_heavy_library(args):
    assert not _imported(args) & set(HEAVY)


def test_source_catalogue_matches_the_registry():
    from voxmem_analysis import artifacts
    from voxmem_analysis.artifacts import source_titles as catalogue

    assert catalogue() == {n: artifacts.get(n).title for n in artifacts.names()}


def test_source_parameters_match_the_artifact_functions():
    """`table NAME --help` lists (and `table NAME` parses) the parameters read from the source: the same
    names, defaults and annotations as the imported functions' signatures."""
    from voxmem_analysis import artifacts
    from voxmem_analysis.commands.table import inspected_parameters

    source = artifacts.source_parameters()
    assert source is not None
    assert set(source) == set(artifacts.names())
    for name in artifacts.names():
        assert source[name] == inspected_parameters(artifacts.get(name)), name
    assert [(q.name, q.default) for q in source["table2"]] == [("model", None), ("budget", None)]  # taken from the data


def test_table_help_names_the_parameters_and_their_data_defaults(capsys):
    from voxmem_analysis.cli import main

    assert main(["table", "table18", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--baseline BASELINE" in out and "--comparison COMPARISON" in out and "--mc-se MC_SE" in out
    assert "the shorter of two budgets run, else chosen from the data" in " ".join(out.split())
