"""Run a notebook in this process and check every figure it saves, from the matplotlib objects.

:func:`run_notebook` executes a jupytext notebook's code cells in one namespace, with the
parameters the reproduction runner would inject (its own planning:
:func:`voxmem_analysis.reproduce.notebook.plan_parameters`) plus the test's overrides, after the
cell tagged ``parameters`` -- as papermill does, without a kernel.  ``output.save_figure`` is
replaced by a checker: the figure is stamped and laid out as ``save_figure`` lays it out
(:func:`voxmem_analysis.output.prepare_figure`, :func:`voxmem_analysis.output.laid_out`, at the
same dpi), then :func:`figure_problems` lists

* every drawn point (line vertex, marker, scatter offset), error-bar end, bar and band corner
  that lies outside its axes (display coordinates, so log axes, inverted and blended
  transforms are handled alike),
* every marker centred on a visible axis line (a 0 % or 100 % point half hidden by it), and
* every pair of visible texts whose boxes overlap (titles, axis labels, tick labels that are
  drawn, annotations, legend texts, figure texts such as the SYNTHETIC stamp); rotated texts
  are compared as rotated rectangles.

Nothing is written but the notebook's tables (to a temporary folder) and, when the environment
variable ``VOXMEM_FIGURE_PNG`` names a folder, a PNG of each checked figure (for looking at them).
"""
from __future__ import annotations

import contextlib
import io
import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

DPI = 200          # output.save_figure's default
TOLERANCE_PX = 1.0  # at DPI: how far a point may stray, how deep two texts may touch


# ----------------------------------------------------------------------------- points inside their axes
def _outside(ax, xy: np.ndarray) -> np.ndarray:
    """Display-space points (n x 2) that are finite and outside ``ax``'s box."""
    xy = xy[np.isfinite(xy).all(axis=1)]
    b = ax.bbox
    t = TOLERANCE_PX
    bad = (xy[:, 0] < b.x0 - t) | (xy[:, 0] > b.x1 + t) | (xy[:, 1] < b.y0 - t) | (xy[:, 1] > b.y1 + t)
    return xy[bad]


def _data_of(ax, pts: np.ndarray) -> str:
    d = ax.transData.inverted().transform(pts[:1])[0]
    return f"({d[0]:.4g}, {d[1]:.4g})"


def _lim(lim) -> str:
    return f"{float(lim[0]):.4g}..{float(lim[1]):.4g}"


def _artist_points(artist) -> list[np.ndarray]:
    """Display coordinates of what ``artist`` draws (vertices, offsets)."""
    from matplotlib.collections import Collection, PathCollection, QuadMesh
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    out = []
    if isinstance(artist, Line2D):
        xy = np.asarray(artist.get_xydata(), float)
        if xy.size:
            out.append(artist.get_transform().transform(xy))
    elif isinstance(artist, QuadMesh):
        return []
    elif isinstance(artist, Collection):
        offs = np.asarray(artist.get_offsets(), float)
        if isinstance(artist, PathCollection) or (offs.size and len(offs) > 1):
            if offs.size:
                out.append(artist.get_offset_transform().transform(offs))
        else:
            tr = artist.get_transform()
            for p in artist.get_paths():
                if len(p.vertices):
                    out.append(tr.transform(np.asarray(p.vertices, float)))
    elif isinstance(artist, Patch):
        p = artist.get_path()
        if len(p.vertices):
            out.append(artist.get_transform().transform(np.asarray(p.vertices, float)))
    return out


def _is_colorbar(ax) -> bool:
    return ax.get_label() == "<colorbar>"


def points_outside(fig) -> list[str]:
    """One line per artist that draws something outside its axes."""
    problems = []
    for ax in fig.axes:
        if _is_colorbar(ax) or not ax.get_visible() or not ax.axison:
            continue
        for artist in [*ax.lines, *ax.collections, *ax.patches]:
            if not artist.get_visible():
                continue
            for pts in _artist_points(artist):
                bad = _outside(ax, pts)
                if len(bad):
                    what = type(artist).__name__ + (f" {artist.get_label()!r}" if not str(artist.get_label()).startswith("_")
                                                    else "")
                    problems.append(f"axes {ax.get_title() or ax.get_label() or '#'}: {what}: {len(bad)} point(s) "
                                    f"outside the axes, e.g. at {_data_of(ax, bad)} (x limits {_lim(ax.get_xlim())}, "
                                    f"y limits {_lim(ax.get_ylim())})")
                    break
    return problems


def _markers(artist) -> np.ndarray:
    """Display coordinates of the markers ``artist`` draws (line markers, scatter points); none for
    lines without markers, bars or bands."""
    from matplotlib.collections import PathCollection
    from matplotlib.lines import Line2D

    if isinstance(artist, Line2D) and artist.get_marker() not in (None, "", " ", "None", "none"):
        xy = np.asarray(artist.get_xydata(), float)
        return artist.get_transform().transform(xy) if xy.size else np.empty((0, 2))
    if isinstance(artist, PathCollection):
        offs = np.asarray(artist.get_offsets(), float)
        return artist.get_offset_transform().transform(offs) if offs.size else np.empty((0, 2))
    return np.empty((0, 2))


def points_on_axis_lines(fig) -> list[str]:
    """One line per artist with a marker centred on a visible spine (a point at 0 % or 100 % drawn on
    the axis line, half hidden by it)."""
    problems = []
    for ax in fig.axes:
        if _is_colorbar(ax) or not ax.get_visible() or not ax.axison:
            continue
        b = ax.bbox
        edges = [(side, 0 if side in ("left", "right") else 1, v)
                 for side, v in (("left", b.x0), ("right", b.x1), ("bottom", b.y0), ("top", b.y1))
                 if ax.spines[side].get_visible()]
        for artist in [*ax.lines, *ax.collections]:
            if not artist.get_visible():
                continue
            xy = _markers(artist)
            xy = xy[np.isfinite(xy).all(axis=1)] if len(xy) else xy
            for side, dim, v in edges:
                on = xy[np.abs(xy[:, dim] - v) <= 1.5] if len(xy) else xy
                if len(on):
                    problems.append(f"axes {ax.get_title() or ax.get_label() or '#'}: {type(artist).__name__}: "
                                    f"{len(on)} marker(s) on the {side} axis line, e.g. at {_data_of(ax, on)}")
                    break
    return problems


# ----------------------------------------------------------------------------- texts
def visible_texts(fig) -> list:
    """Every text ``fig`` draws (:func:`voxmem_analysis.output.drawn_texts`)."""
    from voxmem_analysis.output import drawn_texts

    return drawn_texts(fig)


def _corners(t, renderer) -> np.ndarray:
    """The four corners (display px) of ``t``'s text box, rotated with the text (an annotation's
    arrow left out: ``Text.get_window_extent``, not the annotation's, which includes it)."""
    from matplotlib.text import Text

    b = Text.get_window_extent(t, renderer)
    theta = math.radians(t.get_rotation() % 180)
    c, s = abs(math.cos(theta)), abs(math.sin(theta))
    det = c * c - s * s
    cx, cy = (b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2
    if abs(det) < 0.2 or s < 1e-6:   # axis-aligned (or near 45 degrees: the box itself)
        return np.array([[b.x0, b.y0], [b.x1, b.y0], [b.x1, b.y1], [b.x0, b.y1]])
    w = (c * b.width - s * b.height) / det
    h = (c * b.height - s * b.width) / det
    u = np.array([math.cos(math.radians(t.get_rotation())), math.sin(math.radians(t.get_rotation()))])
    v = np.array([-u[1], u[0]])
    half = [u * w / 2 + v * h / 2, u * w / 2 - v * h / 2]
    return np.array([[cx, cy] + half[0], [cx, cy] + half[1], [cx, cy] - half[0], [cx, cy] - half[1]])


def _overlap_depth(p: np.ndarray, q: np.ndarray) -> float:
    """Smallest penetration of two convex quadrilaterals along their edge normals (<= 0: apart)."""
    depth = math.inf
    for poly in (p, q):
        for i in range(4):
            e = poly[(i + 1) % 4] - poly[i]
            n = np.array([-e[1], e[0]])
            norm = np.hypot(*n)
            if norm == 0:
                continue
            n = n / norm
            a, b = p @ n, q @ n
            depth = min(depth, min(a.max(), b.max()) - max(a.min(), b.min()))
    return depth


def overlapping_texts(fig) -> list[str]:
    """One line per pair of visible texts whose boxes overlap by more than the tolerance."""
    r = fig.canvas.get_renderer()
    texts = visible_texts(fig)
    if len(texts) < 2:
        return []
    boxes = np.array([_corners(t, r) for t in texts])           # n x 4 corners x 2
    lo, hi = boxes.min(axis=1), boxes.max(axis=1)                # axis-aligned hulls, n x 2
    t = TOLERANCE_PX
    near = ((np.minimum(hi[:, None, 0], hi[None, :, 0]) - np.maximum(lo[:, None, 0], lo[None, :, 0]) > t)
            & (np.minimum(hi[:, None, 1], hi[None, :, 1]) - np.maximum(lo[:, None, 1], lo[None, :, 1]) > t))
    problems = []
    for i, j in zip(*np.nonzero(np.triu(near, 1))):
        if _overlap_depth(boxes[i], boxes[j]) > t:
            problems.append(f"texts overlap: {texts[i].get_text()!r} and {texts[j].get_text()!r}")
    return problems


def figure_problems(fig) -> list[str]:
    """Everything :func:`points_outside`, :func:`points_on_axis_lines` and :func:`overlapping_texts` find
    in a laid-out figure."""
    return points_outside(fig) + points_on_axis_lines(fig) + overlapping_texts(fig)


# ----------------------------------------------------------------------------- one notebook, in process
@dataclass
class NotebookRun:
    """What a notebook did: problems per saved figure, its skip lines, its output."""

    figures: dict[str, list[str]] = field(default_factory=dict)
    check_seconds: float = 0.0
    skipped: str | None = None           # why the runner would skip the whole notebook
    stdout: str = ""

    def skip_lines(self) -> list[str]:
        return [line for line in self.stdout.splitlines() if "skipped" in line or "no scaling" in line
                or "not drawn" in line]


def check_saved_figure(run: NotebookRun, png_dir: Path | None):
    """A stand-in for ``output.save_figure`` that lays the figure out as it would and checks it."""
    import matplotlib.pyplot as plt

    from voxmem_analysis import output

    def save_figure(fig, out_dir, name, *, data=None, release=None, synthetic=None, formats=("png", "pdf"),
                    dpi=DPI, show=None, caption=None):
        try:
            output.prepare_figure(fig, synthetic=output.is_synthetic(release, synthetic))
            fig.set_dpi(dpi)   # laid_out draws at the file's dpi and then leaves it as it found it: at dpi
            with output.laid_out(fig, dpi) as box:   # laid out (drawn) as save_figure lays it out
                t0 = time.perf_counter()
                run.figures[name] = figure_problems(fig)
                run.check_seconds += time.perf_counter() - t0
                if png_dir is not None:
                    png_dir.mkdir(parents=True, exist_ok=True)
                    fig.savefig(png_dir / f"{name}.png", dpi=dpi, bbox_inches=box)
        finally:
            plt.close(fig)
        return []

    return save_figure


def code_cells(path: Path) -> tuple[list[str], int]:
    """The code cells of a jupytext percent script (``# %%`` headers; ``[markdown]`` cells left
    out) and the index of the one tagged ``parameters`` (-1: none)."""
    cells, tagged, current, header = [], -1, None, ""
    for line in [*path.read_text(encoding="utf-8").splitlines(), "# %%"]:
        if line.startswith("# %%"):
            if current is not None and "[markdown]" not in header:
                if "parameters" in header and tagged < 0:
                    tagged = len(cells)
                cells.append("\n".join(current))
            current, header = [], line
        elif current is not None:
            current.append(line)
    return cells, tagged


def run_notebook(path: Path, data_dir, out_dir: Path, *, overrides: dict | None = None,
                 png_dir: Path | None = None) -> NotebookRun:
    """Execute the notebook at ``path`` as the runner would on ``data_dir``, checking its figures."""
    from voxmem_analysis import output
    from voxmem_analysis.reproduce import notebook as N

    run = NotebookRun()
    script = path.read_text(encoding="utf-8")
    other = N.not_for_release(script, data_dir)
    missing = N.missing_parts(script, data_dir)
    if other or missing:
        run.skipped = other or ("the release has no " + ", ".join(f"{m}/ folder" for m in missing)
                                + " (optional part)")
        return run
    cells, p = code_cells(path)
    inject, reason = N.plan_parameters(N.declared_parameters(cells[p]), data_dir=str(data_dir), out_dir=str(out_dir),
                                       seed=0, n_boot=100, overrides=overrides, include_examples=True)
    if reason:
        run.skipped = reason
        return run
    from IPython.display import display

    ns: dict = {"__name__": "__notebook__", "display": display}   # IPython's builtin in a kernel
    buf = io.StringIO()
    original = output.save_figure, output.save_table
    output.save_figure = check_saved_figure(run, png_dir)
    output.save_table = lambda *a, **k: []   # the notebook's tables are not what is tested here
    try:
        with contextlib.redirect_stdout(buf):
            for i, src in enumerate(cells):
                exec(compile(src, f"{path.name}[cell {i}]", "exec"), ns)  # noqa: S102 - the notebook's own code
                if i == p:
                    ns.update(inject)
    finally:
        output.save_figure, output.save_table = original
        run.stdout = buf.getvalue()
    return run


def png_dir_for(label: str) -> Path | None:
    root = os.environ.get("VOXMEM_FIGURE_PNG")
    return Path(root) / label if root else None
