"""The cheaper figure paths draw what the old ones drew.

``output.save_figure`` lays a figure out once (``output.laid_out``) and reuses its tight box for
the PNG and the PDF instead of ``bbox_inches="tight"`` per file; the heatmaps and the facet grid
skip seaborn's forced full draws (``plots.style.without_canvas_draw``).  Checked against
matplotlib's and seaborn's own paths on the same figures.
"""
from __future__ import annotations

import io

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.output import clear_stamp, figure_caption, laid_out, save_figure, stamp_synthetic
from voxmem_analysis.plots import results as P
from voxmem_analysis.plots.style import without_canvas_draw

matplotlib.use("Agg")
_META = {"Software": None}


def _constrained():
    """Constrained layout, colour bar, suptitle, a figure legend outside the axes, long tick labels."""
    fig, axes = plt.subplots(1, 2, figsize=(5, 3), constrained_layout=True)
    im = axes[0].imshow(np.arange(12.0).reshape(3, 4))
    axes[1].plot([1, 2, 3], [3, 1, 2], label="a long legend entry")
    axes[1].set_yticks([1, 2, 3], ["one", "two", "a much longer tick label"])
    fig.colorbar(im, ax=list(axes), shrink=0.8).set_label("value (%)")
    fig.legend(loc="outside upper right")
    fig.suptitle("a suptitle")
    return fig


def _tight():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.bar(["x", "y"], [1.0, 2.0])
    ax.set_xlabel("an x label")
    fig.tight_layout()
    return fig


def _plain():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.plot([8, 16, 32, 64], [48.0, 43.1, 38.5, 33.7], marker="o")
    ax.text(70, 40, "text outside the axes")
    return fig


def _operation_frame() -> pd.DataFrame:
    rows = [{"budget": "8K", "operation": op, "evidence_type": ev, "accuracy": 7.0 * i + 3.0 * j + 0.5,
             "n_questions": 10 + i + j, "n_models": 2}
            for i, op in enumerate(tx.OPERATIONS) for j, ev in enumerate(tx.EVIDENCE_TYPES) if (op, ev) in tx.VALID_CELLS]
    return pd.DataFrame(rows)


def _png(fig, **kw) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=200, metadata=_META, **kw)
    return buf.getvalue()


def _stamped(make):
    """``make()`` with its synthetic stamp where ``save_figure``'s layout puts it (moved below the
    figure when it would cover something: :func:`clear_stamp`), found on a probe figure (a layout
    engine run once more does not give the same layout, so the returned figure was never drawn)."""
    probe = make()
    stamp_synthetic(probe)
    probe.set_dpi(200)
    probe.draw_without_rendering()
    clear_stamp(probe)
    where, va = probe.texts[-1].get_position(), probe.texts[-1].get_verticalalignment()
    plt.close(probe)
    fig = make()
    stamp_synthetic(fig)
    fig.texts[-1].set_position(where)
    fig.texts[-1].set_verticalalignment(va)
    return fig


@pytest.mark.parametrize("make", [_constrained, _tight, _plain], ids=["constrained", "tight_layout", "no_layout"])
def test_the_png_is_matplotlibs_tight_png_byte_for_byte(make, tmp_path):
    fig = _stamped(make)
    reference = _png(fig, bbox_inches="tight")
    plt.close(fig)
    fig = make()
    png = save_figure(fig, tmp_path, "f", synthetic=True, formats=("png",), show=False)[0]
    assert png.read_bytes() == reference


@pytest.mark.parametrize("make", [_constrained, _tight, _plain], ids=["constrained", "tight_layout", "no_layout"])
def test_the_box_is_matplotlibs_tight_box_and_the_figure_is_left_as_it_was(make):
    from PIL import Image

    ref = make()
    w, h = Image.open(io.BytesIO(_png(ref, bbox_inches="tight"))).size   # matplotlib's own tight PNG
    plt.close(ref)
    fig = make()
    engine, dpi = fig.get_layout_engine(), fig.get_dpi()
    with laid_out(fig, 200) as box:
        assert fig.get_layout_engine() is None   # no layout pass left for savefig
        assert abs(box.width * 200 - w) <= 1 and abs(box.height * 200 - h) <= 1
        positions = [ax.get_position().bounds for ax in fig.axes]
        _png(fig, bbox_inches=box)
        assert [ax.get_position().bounds for ax in fig.axes] == positions   # rendering moved nothing
    assert fig.get_layout_engine() is engine and fig.get_dpi() == dpi
    plt.close(fig)


def test_heatmap_figures_are_deterministic_with_caption_and_stamp(tmp_path):
    paths = []
    for k in range(2):
        fig = P.operation_heatmap(_operation_frame())
        paths.append(save_figure(fig, tmp_path / str(k), "op", synthetic=True, caption="Figure 5: 8K", show=False))
    for a, b in zip(*paths):
        assert a.read_bytes() == b.read_bytes(), a.name
    png, pdf = paths[0]
    assert figure_caption(png) == "Figure 5: 8K"
    raw = pdf.read_bytes()
    assert b"Figure 5: 8K" in raw and b"CreationDate" not in raw and b"Matplotlib" not in raw


def _draws(fig) -> list:
    seen = []
    fig.canvas.mpl_connect("draw_event", lambda event: seen.append(event))
    return seen


def test_the_heatmap_is_seaborns_without_its_forced_draw():
    import seaborn as sns

    grid = np.array([[5.0, 65.0, np.nan], [30.0, 12.5, 70.0]])
    labels = np.vectorize(lambda v: f"{v:.1f}")(grid)
    kws = dict(annot=labels, fmt="", cmap="YlGnBu", vmin=0, vmax=70, cbar=False, annot_kws={"fontsize": 7},
               xticklabels=False, yticklabels=False)
    figs = [plt.subplots(constrained_layout=True) for _ in range(2)]
    plain_draws, quiet_draws = _draws(figs[0][0]), _draws(figs[1][0])
    sns.heatmap(grid, ax=figs[0][1], **kws)
    canvas = figs[1][0].canvas
    with without_canvas_draw(figs[1][0]):
        sns.heatmap(grid, ax=figs[1][1], **kws)
    assert figs[1][0].canvas is canvas
    assert len(plain_draws) == 1 and quiet_draws == []   # seaborn's own path draws the whole figure once
    texts = [[(t.get_position(), t.get_text(), t.get_color(), t.get_fontsize()) for t in ax.texts] for _, ax in figs]
    assert texts[0] == texts[1]
    # dark text where the cell's W3C relative luminance is above 0.408, white below; NaN cell blank
    rgb = plt.get_cmap("YlGnBu")(grid[np.isfinite(grid)] / 70)[:, :3]
    lin = np.where(rgb <= 0.03928, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    expected = [".15" if lum > 0.408 else "w" for lum in lin @ [0.2126, 0.7152, 0.0722]]
    assert [t.get_color() for t in figs[1][1].texts] == expected
    assert {".15", "w"} <= set(expected)
    assert _png(figs[0][0], bbox_inches="tight") == _png(figs[1][0], bbox_inches="tight")
    for fig, _ in figs:
        plt.close(fig)


def test_the_facet_legend_is_measured_as_seaborn_measures_it():
    import seaborn as sns

    data = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "y": [1.0, 2.0, 1.5, 3.0], "b": ["8K", "8K", "64K", "64K"],
                         "h": ["a", "a long hue level", "a", "a long hue level"]})
    sizes = []
    for quiet in (False, True):
        g = sns.FacetGrid(data, col="b")
        g.map_dataframe(sns.scatterplot, x="x", y="y", hue="h")
        if quiet:
            with without_canvas_draw(g.figure):
                g.add_legend()
        else:
            g.add_legend()
        sizes.append((tuple(g.figure.get_size_inches()), g.figure.subplotpars.right))
        plt.close(g.figure)
    assert sizes[0] == sizes[1]


def _media_box(raw: bytes) -> list[float]:
    import re

    return [float(v) for v in re.search(rb"/MediaBox \[([^\]]*)\]", raw).group(1).split()]


@pytest.mark.parametrize("make", [_constrained, _tight, _plain], ids=["constrained", "tight_layout", "no_layout"])
def test_the_pdf_page_is_the_png_box_and_close_to_matplotlibs_own(make, tmp_path):
    from PIL import Image

    ref = make()
    buf = io.BytesIO()
    ref.savefig(buf, format="pdf", bbox_inches="tight")   # laid out and measured with the PDF's metrics
    plt.close(ref)
    png, pdf = save_figure(make(), tmp_path, "f", show=False)
    w, h = Image.open(png).size
    page = _media_box(pdf.read_bytes())
    assert page[2] == pytest.approx(w / 200 * 72, abs=72 / 200) and page[3] == pytest.approx(h / 200 * 72, abs=72 / 200)
    theirs = _media_box(buf.getvalue())
    assert np.allclose(page, theirs, atol=5.0)   # points
