"""The SYNTHETIC DATA stamp of figures (:func:`stamp_synthetic`; :func:`clear_stamp` moves it below the figure
where it would cover anything) and :func:`drawn_texts`, the texts a drawn figure shows.  Re-exported by
:mod:`voxmem_analysis.output`."""
from __future__ import annotations

__all__ = ["SYNTHETIC_LABEL", "STAMP_GID", "stamp_synthetic", "clear_stamp", "drawn_texts", "prepare_figure",
           "is_synthetic"]

SYNTHETIC_LABEL = "SYNTHETIC DATA \u2014 not real model output"
#: ``gid`` of the text :func:`stamp_synthetic` adds (how :func:`clear_stamp` finds it).
STAMP_GID = "voxmem-synthetic-stamp"


def stamp_synthetic(fig) -> None:
    """Add the visible synthetic-data label to a figure (bottom right), once."""
    if any(t.get_gid() == STAMP_GID for t in fig.texts):
        return
    fig.text(0.995, 0.003, SYNTHETIC_LABEL, ha="right", va="bottom", fontsize=6.5, color="#b22222", alpha=0.9,
             gid=STAMP_GID)


def _stamp_of(fig):
    return next((t for t in fig.texts if t.get_gid() == STAMP_GID and t.get_visible()), None)


def _drawn_tick_labels(axis) -> list:
    """The tick labels ``axis`` draws: of ticks within its view interval, visible, not empty."""
    lo, hi = sorted(axis.get_view_interval())
    slack = 1e-9 * ((hi - lo) or 1.0)
    out = []
    for locs, ticks in ((axis.get_majorticklocs(), axis.get_major_ticks),
                        (axis.get_minorticklocs(), axis.get_minor_ticks)):
        locs = list(locs)
        for loc, tick in zip(locs, ticks(len(locs))):
            if lo - slack <= loc <= hi + slack and tick.get_visible():
                out += [lab for lab in (tick.label1, tick.label2) if lab.get_visible() and lab.get_text().strip()]
    return out


def _shown(artist, skip: set):
    """``artist`` and what it holds that is drawn (an invisible artist hides its children; an axes off, its axis)."""
    from matplotlib.axes import Axes

    if not artist.get_visible() or id(artist) in skip:
        return
    yield artist
    hidden = {id(artist.xaxis), id(artist.yaxis)} if isinstance(artist, Axes) and not artist.axison else set()
    for child in artist.get_children():
        if id(child) not in hidden:
            yield from _shown(child, skip)


def drawn_texts(fig) -> list:
    """Every non-empty text a drawn figure shows: titles, axis labels, the tick labels in view, annotations,
    legend and figure texts (what the figure tests check for overlaps)."""
    from matplotlib.text import Text

    ticks, drawn = set(), []
    for ax in fig.axes:
        for axis in (ax.xaxis, ax.yaxis):
            ticks |= {id(lab) for t in [*axis.get_major_ticks(), *axis.get_minor_ticks()] for lab in (t.label1, t.label2)}
            if ax.get_visible() and ax.axison and axis.get_visible():
                drawn += _drawn_tick_labels(axis)
    return drawn + [a for a in _shown(fig, ticks) if isinstance(a, Text) and a.get_text().strip()]


def _occupied(fig, stamp, renderer) -> list:
    """Boxes (display px) a stamp must not cover: every drawn text, visible axes and legend."""
    from matplotlib.legend import Legend
    from matplotlib.text import Text

    boxes = [Text.get_window_extent(t, renderer) for t in drawn_texts(fig) if t is not stamp]
    boxes += [ax.bbox for ax in fig.axes if ax.get_visible()]
    boxes += [a.get_window_extent(renderer) for a in _shown(fig, set()) if isinstance(a, Legend)]
    return [b for b in boxes if b is not None and b.width > 0 and b.height > 0]


def clear_stamp(fig, renderer=None) -> bool:
    """Move the stamp of a drawn figure below its tight box (right-aligned; the box grows by a line) when it
    covers anything where it stands; returns whether it moved."""
    stamp = _stamp_of(fig)
    if stamp is None:
        return False
    r = renderer or fig.canvas.get_renderer()
    box = stamp.get_window_extent(r)
    if not any(box.overlaps(b) for b in _occupied(fig, stamp, r)):
        return False
    stamp.set_visible(False)
    try:
        tight = fig.get_tightbbox(r)   # inches, without the stamp
    finally:
        stamp.set_visible(True)
    w, h = fig.get_size_inches()
    stamp.set_position((tight.x1 / w, (tight.y0 - 2.0 / 72) / h))
    stamp.set_verticalalignment("top")
    return True


def is_synthetic(release=None, synthetic: bool | None = None) -> bool:
    """``synthetic`` when given, else the release's ``synthetic`` flag (False without one)."""
    return bool(getattr(release, "synthetic", False)) if synthetic is None else bool(synthetic)


def prepare_figure(fig, *, synthetic: bool) -> None:
    """What :func:`save_figure` does to a figure before laying it out: the SYNTHETIC stamp."""
    if synthetic:
        stamp_synthetic(fig)
