"""``voxmem-analysis synth``: what it says when there is nothing to write or check."""
from __future__ import annotations

import pytest

from voxmem_analysis.cli import main


@pytest.mark.parametrize("args, said", [([], "give --out DIR"),
                                        (["--benchmark", "amc"], "--benchmark amc: give --out DIR")])
def test_synth_without_out_or_data_names_the_command_once(args, said, capsys):
    assert main(["synth", *args]) == 2
    assert capsys.readouterr().err.strip() == f"error: synth: {said} (or --check --data DIR)"
