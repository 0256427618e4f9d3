"""save_figure / save_table show what they write inside a kernel, and write the same bytes either way."""
from __future__ import annotations

import matplotlib.pyplot as plt
import pandas as pd
import pytest

from voxmem_analysis import output
from voxmem_analysis.output import display_frame, in_kernel, save_figure, save_table

IPython = pytest.importorskip("IPython")
from IPython.display import Image, Markdown  # noqa: E402


@pytest.fixture
def shown(monkeypatch):
    """Everything passed to IPython's ``display`` (nothing reaches a real frontend)."""
    seen: list = []
    monkeypatch.setattr("IPython.display.display", lambda obj, **kw: seen.append(obj))
    return seen


def _figure():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([8, 16, 32, 64], [48.0, 43.1, 38.5, 33.7], marker="o")
    return fig


def _table():
    return pd.DataFrame({"n": [232, 147], "8K": [48.04, 34.81], "retention": [0.7031, 0.6652], "zeros": [0.0, 0.0],
                         "name": ["a", "b"]}, index=pd.Index(["Speech Semantics", "Speaker Identity"], name="Evidence"))


def test_not_in_a_kernel_under_pytest(shown, tmp_path):
    assert not in_kernel()
    save_figure(_figure(), tmp_path, "f")
    save_table(_table(), tmp_path, "t")
    assert shown == []


def test_in_kernel_needs_a_shell_with_a_kernel(monkeypatch):
    class Shell:
        kernel = object()

    monkeypatch.setattr("IPython.get_ipython", lambda: Shell())
    assert in_kernel()
    monkeypatch.setattr("IPython.get_ipython", lambda: object())   # terminal IPython: no kernel
    assert not in_kernel()
    monkeypatch.setattr("IPython.get_ipython", lambda: None)
    assert not in_kernel()


def test_figure_is_shown_as_the_saved_png_and_bytes_do_not_change(shown, tmp_path):
    data = pd.DataFrame({"budget": ["8K", "64K"], "acc": [48.0, 33.7]})
    figs = [_figure(), _figure()]
    quiet = save_figure(figs[0], tmp_path / "quiet", "f", data=data, synthetic=True, show=False)
    loud = save_figure(figs[1], tmp_path / "loud", "f", data=data, synthetic=True, show=True)
    for a, b in zip(quiet, loud):
        assert a.read_bytes() == b.read_bytes(), a.name
    assert len(shown) == 1 and isinstance(shown[0], Image)
    png = (tmp_path / "loud" / "figures" / "f.png").read_bytes()
    assert shown[0].data == png
    width = int.from_bytes(png[16:20], "big")           # IHDR width in pixels
    assert shown[0].width == width // 2                  # 200 dpi shown at 100 dpi (retina)
    # closed: the inline backend shows nothing twice (other tests' figures may still be open)
    assert not {f.number for f in figs} & set(plt.get_fignums())


def test_figure_without_png_is_rendered_for_display(shown, tmp_path):
    written = save_figure(_figure(), tmp_path, "g", formats=("pdf",), show=True)
    assert [p.name for p in written] == ["g.pdf"]
    assert len(shown) == 1 and shown[0].data[:8] == b"\x89PNG\r\n\x1a\n"


def test_table_is_shown_with_caption_rounded_like_markdown(shown, tmp_path):
    save_table(_table(), tmp_path, "t", caption="Cap", synthetic=True, show=True)
    assert len(shown) == 2
    assert isinstance(shown[0], Markdown) and shown[0].data == f"**Cap [{output.SYNTHETIC_LABEL}]**"
    frame = shown[1]
    assert frame["n"].tolist() == [232, 147] and str(frame["n"].dtype) == "Int64"
    assert frame["8K"].tolist() == [48.0, 34.8]
    assert frame["retention"].tolist() == [0.703, 0.665]
    assert frame["zeros"].tolist() == [0, 0] and frame["name"].tolist() == ["a", "b"]
    save_table(_table(), tmp_path, "u", show=False)
    assert len(shown) == 2


def test_display_frame_matches_the_markdown_digits():
    df = _table()
    md = output.table_to_markdown(df)
    shown = display_frame(df)
    for _, row in shown.iterrows():
        cells = " | ".join(str(v) for v in row.tolist())
        assert cells in md, (cells, md)
