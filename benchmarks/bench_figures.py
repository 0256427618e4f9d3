"""Benchmark: drawing and saving representative figures, old-style saving next to ``save_figure``.

Builds, from ``data/synthetic`` through the package's own analysis and plot functions, the
figures whose cost dominates ``make reproduce``'s plotting time:

* Figure 4 — four panels of annotated evidence heatmaps (``plots.results.evidence_heatmaps``);
* Figure 5 — one operation heatmap (``plots.results.operation_heatmap``);
* Figure 6 — line panels (``plots.scaling.evidence_scaling_lines``);
* Table 16 — labelled scatter (``plots.results.answerable_refusal_scatter``);
* the per-budget explorer — a seaborn ``FacetGrid`` (``plots.slices.slice_facets``).

For each figure, ``--repeat`` times, alternating old and new:

* old: build it with seaborn's forced full draws left in (``plots.style.without_canvas_draw``
  replaced by a no-op context where the plot modules use it; ``place_labels`` still lays out
  without rasterizing, so the old build is slightly underestimated), then save it the old way
  (``savefig`` PNG at 200 dpi and PDF, each with ``bbox_inches="tight"``: each call lays the
  figure out and finds its tight box again);
* new: build it with the package as it is, then ``output.save_figure`` (PNG + PDF, no CSV).

Prints the median CPU seconds (``time.process_time``: less sensitive to other jobs on a shared
machine than wall time) of building and of saving per figure and in total, and the ratios
old / new.  Not a test.

    .venv/bin/python benchmarks/bench_figures.py [--repeat 3] [--only fig4,fig5]
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[1]
SYNTHETIC = REPO / "data" / "synthetic"
_PNG_META = {"Software": None}
_PDF_META = {"Creator": None, "Producer": None, "CreationDate": None, "ModDate": None}


def builders(release) -> dict:
    """Figure name -> a function drawing it afresh (analysis frames computed once, here)."""
    from voxmem_analysis.analysis import explore as E
    from voxmem_analysis.analysis import results as R
    from voxmem_analysis.analysis import scaling as S
    from voxmem_analysis.plots import results as P
    from voxmem_analysis.plots import scaling as PS
    from voxmem_analysis.plots.slices import slice_facets

    panels = R.evidence_panels(release)
    oe = R.operation_evidence(release, budgets=["32K"])
    es = S.evidence_scaling(release)
    t16 = R.answerable_vs_refusal(release, budget="64K")
    s16 = R.answerable_refusal_summary(release, budget="64K", table=t16)
    access = dict(zip(release.models["model"], release.models["access"]))
    facets, pooled = E.explore_by_budget(release, "subtype,evidence_type", n_boot=200, seed=0)
    return {
        "fig4_evidence_heatmaps": lambda: P.evidence_heatmaps(panels),
        "fig5_operation_heatmap": lambda: P.operation_heatmap(oe),
        "fig6_scaling_lines": lambda: PS.evidence_scaling_lines(es),
        "table16_scatter": lambda: P.answerable_refusal_scatter(t16, summary=s16, groups=access),
        "explorer_facet_grid": lambda: slice_facets(facets, "subtype,evidence_type", overall=pooled).figure,
    }


def save_old(fig, out: Path, name: str, synthetic: bool) -> None:
    """``save_figure`` as it was: two ``savefig`` calls, each with ``bbox_inches="tight"``."""
    import matplotlib.pyplot as plt

    from voxmem_analysis.output import stamp_synthetic

    out.mkdir(parents=True, exist_ok=True)
    if synthetic:
        stamp_synthetic(fig)
    fig.savefig(out / f"{name}.png", dpi=200, metadata=_PNG_META, bbox_inches="tight")
    fig.savefig(out / f"{name}.pdf", metadata=_PDF_META, bbox_inches="tight")
    plt.close(fig)


def save_new(fig, out: Path, name: str, synthetic: bool) -> None:
    from voxmem_analysis.output import save_figure

    save_figure(fig, out.parent, name, synthetic=synthetic, show=False)


@contextlib.contextmanager
def seaborn_draws_left_in():
    """The plot modules as they were: seaborn's forced draws happen."""
    from voxmem_analysis.plots import results, slices, verdicts

    mods = (results, slices, verdicts)
    saved = [m.without_canvas_draw for m in mods]
    for m in mods:
        m.without_canvas_draw = lambda fig: contextlib.nullcontext()
    try:
        yield
    finally:
        for m, f in zip(mods, saved):
            m.without_canvas_draw = f


def _cpu(fn) -> tuple[float, object]:
    t = time.process_time()
    res = fn()
    return time.process_time() - t, res


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=None, help="comma-separated figure names (default: all)")
    args = ap.parse_args(argv)

    from voxmem_analysis import load_release

    release = load_release(SYNTHETIC)
    build = builders(release)
    names = [n for n in build if args.only is None or n in args.only.split(",")]
    import matplotlib.pyplot as plt

    plt.close(build[names[0]]())   # warm imports, font caches and seaborn once
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            t = {k: [] for k in ("build_old", "build_new", "old", "new")}
            for k in range(args.repeat):
                for how, save in (("old", save_old), ("new", save_new)):
                    with seaborn_draws_left_in() if how == "old" else contextlib.nullcontext():
                        dt, fig = _cpu(build[name])
                    t[f"build_{how}"].append(dt)
                    ds, _ = _cpu(lambda: save(fig, Path(tmp) / how / "figures", f"{name}_{k}", release.synthetic))
                    t[how].append(ds)
            rows.append((name, *(statistics.median(t[c]) for c in ("build_old", "build_new", "old", "new"))))
    print(f"CPU seconds, median of {args.repeat} (synthetic release)")
    print(f"{'figure':<24}{'build old':>10}{'new':>7}{'ratio':>7}{'save old':>10}{'new':>7}{'ratio':>7}"
          f"{'both old':>10}{'new':>7}{'ratio':>7}")
    total = ["total", 0.0, 0.0, 0.0, 0.0]
    for row in rows:
        total[1:] = [a + b for a, b in zip(total[1:], row[1:])]
    for name, bo, bn, so, sn in [*rows, total]:
        print(f"{name:<24}{bo:10.3f}{bn:7.3f}{bo / bn:7.2f}{so:10.3f}{sn:7.3f}{so / sn:7.2f}"
              f"{bo + so:10.3f}{bn + sn:7.3f}{(bo + so) / (bn + sn):7.2f}")

if __name__ == "__main__":
    main()
