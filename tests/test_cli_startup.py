"""Start-up of the command line: `--help` and `table --list` import none of the heavy libraries
(checked by module list, not by time), and the source-read artifact list matches the registry."""
from __future__ import annotations

import subprocess
import sys

import pytest

HEAVY = ("scipy", "matplotlib", "seaborn", "papermill", "statsmodels", "pandas", "pingouin", "nbformat")


def _imported(args: list[str]) -> set[str]:
    code = ("import sys\nfrom voxmem_analysis.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print('\\n'.join(sorted({m.split('.')[0] for m in sys.modules})), file=sys.stderr)")
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return set(done.stderr.split())


@pytest.mark.parametrize("args", [["--help"], ["table", "--list"], ["cache"]])
def test_light_commands_import_no_heavy_library(args):
    assert not _imported(args) & set(HEAVY)


def test_source_catalogue_matches_the_registry():
    from voxmem_analysis import artifacts
    from voxmem_analysis.artifacts import source_titles as catalogue

    assert catalogue() == {n: artifacts.get(n).title for n in artifacts.names()}
