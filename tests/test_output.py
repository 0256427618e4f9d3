"""Tables and figures are written deterministically, labelled when synthetic, formatted per column."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd

from voxmem_analysis.output import SYNTHETIC_LABEL, column_digits, save_figure, save_table, table_to_latex, table_to_markdown


def _table():
    return pd.DataFrame({"n": [232, 147], "8K": [48.04, 34.81], "retention": [0.7031, 0.6652], "zeros": [0.0, 0.0]},
                        index=pd.Index(["Speech Semantics", "Speaker Identity"], name="Evidence type"))


def test_column_digits_and_markdown():
    df = _table()
    assert column_digits(df) == [0, 1, 3, 0]
    md = table_to_markdown(df)
    assert "| Speech Semantics | 232 | 48.0 | 0.703 | 0 |" in md


def test_latex_is_booktabs_and_escaped():
    df = _table().rename(columns={"retention": "κ_%"})
    tex = table_to_latex(df, caption="Table 18 & more", label="tab:t18")
    assert r"\toprule" in tex and r"\midrule" in tex and r"\bottomrule" in tex
    assert r"$\kappa$\_\%" in tex and r"Table 18 \& more" in tex
    assert r"Speaker Identity & 147 & 34.8 & 0.665 & 0 \\" in tex


def test_save_table_marks_synthetic(tmp_path):
    paths = save_table(_table(), tmp_path, "t", caption="Cap", synthetic=True)
    assert [p.name for p in paths] == ["t.csv", "t.long.csv", "t.md", "t.tex"]
    assert SYNTHETIC_LABEL in (tmp_path / "tables" / "t.md").read_text()
    back = pd.read_csv(tmp_path / "tables" / "t.csv", index_col=0)
    assert back.loc["Speaker Identity", "n"] == 147


def test_save_table_ends_the_caption_with_the_analysis_note(tmp_path):
    df = _table()
    df.attrs["note"] = "not estimable (left blank): Speech Semantics"
    save_table(df, tmp_path, "t", caption="Cap", synthetic=True)
    md = (tmp_path / "tables" / "t.md").read_text()
    assert md.splitlines()[0] == f"Cap (note: not estimable (left blank): Speech Semantics) [{SYNTHETIC_LABEL}]"
    assert "not estimable (left blank): Speech Semantics" in (tmp_path / "tables" / "t.tex").read_text()
    save_table(_table(), tmp_path, "u", caption="Cap")
    assert (tmp_path / "tables" / "u.md").read_text().splitlines()[0] == "Cap"


def _figure():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([8, 16, 32, 64], [48.0, 43.1, 38.5, 33.7], marker="o")
    ax.set_title("retention")
    return fig


def test_save_figure_is_byte_identical_and_writes_numbers(tmp_path):
    data = pd.DataFrame({"budget": ["8K", "64K"], "acc": [48.0, 33.7]})
    a = save_figure(_figure(), tmp_path / "a", "f", data=data, synthetic=True)
    b = save_figure(_figure(), tmp_path / "b", "f", data=data, synthetic=True)
    assert [p.name for p in a] == ["f.png", "f.pdf", "f.csv"]
    for pa, pb in zip(a, b):
        assert pa.read_bytes() == pb.read_bytes(), pa.name
    pdf = a[1].read_bytes()
    assert b"CreationDate" not in pdf and b"Matplotlib" not in pdf
    assert pd.read_csv(a[2])["acc"].tolist() == [48.0, 33.7]


def test_table_command_labels_synthetic_data(tiny_release, capsys):
    from voxmem_analysis.cli import main

    (tiny_release / "release.json").write_text('{"name": "t", "synthetic": true}')
    assert main(["table", "table17", "--data", str(tiny_release), "--format", "md"]) == 0
    captured = capsys.readouterr()
    assert SYNTHETIC_LABEL in captured.out and "SYNTHETIC" in captured.err


def test_numbers_of_any_size_are_formatted_for_tables():
    from voxmem_analysis.output import latex_number, text_number

    assert text_number(1e308) == "1\u00d710^308" and text_number(10 ** 309, 1) == "1\u00d710^309"
    assert latex_number(1e308) == r"$1\times10^{308}$" and latex_number(-1.5e300) == r"$-1.5\times10^{300}$"
    assert latex_number(float(10 ** 15), kind="count") == r"$1\times10^{15}$"
    assert text_number(123456.75, 1) == "123456.8" and latex_number(12345, kind="count") == "12,345"   # as before


def test_markdown_and_latex_cells_are_escaped():
    import pandas as pd

    from voxmem_analysis.output import table_to_latex, table_to_markdown

    df = pd.DataFrame({"v": [1.0, 2.0]}, index=pd.Index(["a|b", "two\nlines & 100%"], name="system"))
    md = table_to_markdown(df).splitlines()
    assert md[2] == "| a\\|b | 1.0 |" and md[3] == "| two<br>lines & 100% | 2.0 |"
    tex = table_to_latex(df)
    assert r"two lines \& 100\% & 2.0 \\" in tex and r"a\textbar{}b & 1.0 \\" in tex
