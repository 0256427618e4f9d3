"""The terminal table: aligned, rounded to what the interval supports, display names, key columns."""
from __future__ import annotations

import io

import pandas as pd

from voxmem_analysis.console import emit, markdown_text, terminal_text


def _table():
    return pd.DataFrame({"evidence_type": ["speaker_information", "speech_semantics"], "n": [147, 232],
                         "accuracy": [21.76870748, 31.46551724], "accuracy_ci_low": [15.863, 25.8331],
                         "accuracy_ci_high": [29.1124, 37.7018], "p_holm": [0.00001, 0.5], "n_boot": [100, 100]})


def test_terminal_table_rounds_to_the_interval_and_shows_display_names():
    text = terminal_text(_table(), keys=["evidence_type", "n", "accuracy", "p_holm"])
    lines = text.splitlines()
    assert lines[0].split() == ["evidence_type", "n", "accuracy", "[95%", "CI]", "p_holm"]
    assert "Speaker Identity" in lines[2] and "21.8 [15.9, 29.1]" in lines[2] and "<0.001" in lines[2]
    assert len({len(line) for line in lines[:4]}) == 1          # aligned
    assert "1 more column(s)" in lines[-1]
    assert "n_boot" in terminal_text(_table(), keys=["n"], all_columns=True)


def test_csv_and_markdown_keep_every_column_at_full_precision():
    out = io.StringIO()
    emit(_table(), "csv", "title", header="options in force: --seed 0", stream=out)
    assert out.getvalue().splitlines()[1].startswith("speaker_information,147,21.7687,15.863,29.1124,1e-05,100")
    md = markdown_text(pd.DataFrame({"name": ["a|b", "x\ny"], "v": [1.5, 2.25]}), "T", "h")
    assert md.splitlines()[:4] == ["T", "", "h", ""] and "a\\|b" in md and "x<br>y" in md


def test_a_tty_gets_the_terminal_table_and_a_pipe_the_csv():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    emit(_table(), None, stream=tty)
    emit(_table(), None, stream=pipe)
    assert "[95% CI]" in tty.getvalue() and pipe.getvalue().startswith("evidence_type,n,accuracy,")


def test_progress_draws_on_a_terminal_only():
    from voxmem_analysis.console import progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Tty(), io.StringIO()
    for stream in (tty, pipe):
        step = progress("bootstrap", stream=stream, delay=0)
        step(0, 4)
        step(2, 4)
        step(4, 4)
    assert "bootstrap" in tty.getvalue() and "2/4" in tty.getvalue() and pipe.getvalue() == ""
