"""Figures of context-length scaling (Figure 6, the Table 18 forest plot, the D.5 scatter, the length model),
drawn from the frames of :mod:`voxmem_analysis.analysis.scaling`."""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter, NullLocator

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis.findings import MIN_CORRELATION_POINTS
from voxmem_analysis.errors import InputError
from voxmem_analysis.plots.style import (EVIDENCE_COLORS, finish, fit_labels, from_zero, log_ticks, reserve_footer,
                                         styled)

__all__ = ["evidence_scaling_lines", "change_forest", "sensitivity_scatter", "odds_ratio_forest", "ratio_limits",
           "set_ratio_axis"]

_OVERALL_COLOR = "#333333"
_MARKERS = {"speech_semantics": "o", "speaker_information": "s", "paralinguistic_information": "^",
            "environmental_sound": "D", "overall": "X"}


def _label(code: str) -> str:
    return "Overall" if code == "overall" else tx.EVIDENCE_LABELS.get(code, code)


def _color(code: str) -> str:
    return EVIDENCE_COLORS.get(code, _OVERALL_COLOR)


def _spread(y: np.ndarray, gap: float) -> np.ndarray:
    """Label positions for values ``y``: in the same order, at least ``gap`` apart, centred on the data."""
    order = np.argsort(y)
    out = y.astype(float).copy()
    for k in range(1, len(order)):
        i, j = order[k - 1], order[k]
        out[j] = max(out[j], out[i] + gap)
    shift = (out - y).mean()
    return out - shift


@styled
def evidence_scaling_lines(data: pd.DataFrame, *, include_overall: bool = True, title: str | None = None):
    """Figure 6: mean accuracy (left) and retention relative to the ``reference_budget`` (right) per evidence type
    (``include_overall``: the pooled Overall, dashed) against a log2 budget axis, the no-change line at 1."""
    bs = [b for b in tx.BUDGETS if b in set(data["budget"].astype(str))]
    if not bs:
        raise InputError("no budget to draw: the data is empty")
    ref = str(data["reference_budget"].iloc[0]) if "reference_budget" in data and len(data) else bs[0]
    x = {b: np.log2(tx.budget_tokens(b)) for b in bs}
    codes = [e for e in [*tx.EVIDENCE_TYPES, *(["overall"] if include_overall else [])] if e in set(data["evidence_type"])]
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.2, 3.3), constrained_layout=True)
    reserve_footer(fig)
    ends = []
    for code in codes:
        sub = data[data["evidence_type"] == code].copy()
        sub["x"] = sub["budget"].astype(str).map(x)
        sub = sub.sort_values("x")
        kw = dict(color=_color(code), marker=_MARKERS.get(code, "o"), ms=4.5, lw=1.6,
                  ls="--" if code == "overall" else "-", label=_label(code))
        a1.plot(sub["x"], sub["accuracy"], **kw)
        a2.plot(sub["x"], sub["retention"], **kw)
        last = sub.iloc[-1]
        ends.append((float(last["x"]), float(last["retention"]), _color(code)))
    r = data["retention"].to_numpy(float)
    r = r[np.isfinite(r)] if np.isfinite(r).any() else np.array([1.0])
    lo_r, hi_r = min(0.5, np.nanmin(r) - 0.05), max(1.05, np.nanmax(r) + 0.05)
    undefined = [_label(c) for c, (_, ey, _) in zip(codes, ends) if not np.isfinite(ey)]
    ends = [e for e in ends if np.isfinite(e[1])]
    if ends:
        ys = _spread(np.array([e[1] for e in ends]), 0.045 * (hi_r - lo_r))
        for (ex, ey, col), ly in zip(ends, ys):
            a2.annotate(f"{ey:.2f}", (ex, ey), xytext=(ex + 0.12, ly), textcoords="data", fontsize=6.5,
                        color=col, va="center")
    a2.axhline(1.0, color="#999999", lw=0.8, ls=":")
    for ax in (a1, a2):
        ax.set_xticks([x[b] for b in bs], bs)
        ax.set_xlabel("History length (reference tokens, log\u2082 scale)")
        ax.grid(axis="y", color="#e6e6e6", lw=0.6)
        ax.set_xlim(min(x.values()) - 0.25, max(x.values()) + 0.55)
    a1.set_ylabel("Mean accuracy (%)")
    a1.set_ylim(*from_zero(max(5.0, float(np.nanmax(data["accuracy"])) * 1.12)))
    a2.set_ylabel(f"Retention (accuracy / {ref} accuracy)")
    a2.set_ylim(lo_r, hi_r)
    a1.set_title("Accuracy")
    a2.set_title(f"Retention relative to {ref}")
    if undefined:   # said where it would have been read: under the retention axis
        a2.set_xlabel(f"{a2.get_xlabel()}\nno retention for {', '.join(undefined)} (0 % at {ref})")
    _legend_on_top(fig, a1, title)
    return fig


def _legend_on_top(fig, ax, title: str | None) -> None:
    """One legend row above the panels, headed by ``title``."""
    handles, labels = ax.get_legend_handles_labels()
    leg = fig.legend(handles, labels, loc="outside upper center", ncol=len(labels), frameon=False,
                     title=title or None)
    if title:
        leg.get_title().set_fontsize(10)


@styled
def change_forest(data: pd.DataFrame, *, title: str | None = None):
    """Table 18 as a forest plot (:func:`~voxmem_analysis.analysis.scaling.paired_change`): drop (pp) and retention with
    their intervals, the evidence types then the models."""
    ev = data[data["level"] == "evidence_type"]
    pm = data[data["level"] == "model"]
    rows = [(r, _label(r["key"]), _color(r["key"]), float(y), r["key"] == "overall")
            for y, (_, r) in enumerate(ev.iterrows())]
    gap_at = len(rows) - 0.2   # the models below a gap of 0.6
    rows += [(r, name, "#555555", len(ev) + 0.6 + i, False)
             for i, ((_, r), name) in enumerate(zip(pm.iterrows(), fit_labels(pm["key"])))]
    b0 = str(data["baseline_budget"].iloc[0]) if "baseline_budget" in data else "8K"
    b1 = str(data["comparison_budget"].iloc[0]) if "comparison_budget" in data else "64K"
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.4, 0.24 * len(rows) + 1.4), sharey=True, constrained_layout=True)
    reserve_footer(fig)
    for r, lab, col, yy, bold in rows:
        for ax, s, ref in ((a1, "drop", 0.0), (a2, "retention", 1.0)):
            if s == "drop":  # drawn as the paper's drop: the negated change of paired_change
                est, lo, hi = 0.0 - r["change"], 0.0 - r["change_ci_high"], 0.0 - r["change_ci_low"]
            else:
                est, lo, hi = r[s], r[f"{s}_ci_low"], r[f"{s}_ci_high"]
            if not np.isfinite(est):
                continue
            ax.errorbar(est, yy, xerr=[[max(est - lo, 0)], [max(hi - est, 0)]] if np.isfinite(lo) else None,
                        fmt="D" if bold else "o", color=col, ms=4.5 if bold else 3.8, capsize=2, lw=1.1)
    a1.axvline(0, color="#999999", lw=0.8, ls=":")
    a2.axvline(1, color="#999999", lw=0.8, ls=":")
    for ax in (a1, a2):
        ax.axhline(gap_at, color="#bbbbbb", lw=0.6)
        ax.grid(axis="x", color="#eeeeee", lw=0.6)
    a1.set_yticks([r[3] for r in rows], [r[1] for r in rows])
    for t, (*_, bold) in zip(a1.get_yticklabels(), rows):
        if bold:
            t.set_fontweight("bold")
    a1.invert_yaxis()
    a1.set_xlabel(f"Drop {b0}\u2192{b1} (pp), 95% CI")
    a2.set_xlabel(f"Retention ({b1} / {b0}), 95% CI")
    a1.set_title("Drop in points")
    a2.set_title("Retention")
    nb = int(data["n_boot"].iloc[0])
    return finish(fig, title, f"Percentile bootstrap over items, {nb:,} resamples, both budgets rescored per resample.")


@styled
def sensitivity_scatter(data: pd.DataFrame, *, correlations: pd.DataFrame | None = None, title: str | None = None):
    """Appendix D.5: retention and the change in points vs the baseline accuracy over model × evidence cells
    (:func:`~voxmem_analysis.analysis.scaling.cell_changes`), ρ and its model-resampled interval from
    ``correlations`` (none over fewer than ``MIN_CORRELATION_POINTS`` cells; the change named as coupled)."""
    corr = {} if correlations is None else {r["measure"]: r for _, r in correlations.iterrows()}
    b0 = str(data["baseline_budget"].iloc[0]) if "baseline_budget" in data and len(data) else "8K"
    b1 = str(data["comparison_budget"].iloc[0]) if "comparison_budget" in data and len(data) else "64K"
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(7.2, 3.4), constrained_layout=True)
    reserve_footer(fig)
    for code in tx.EVIDENCE_TYPES:
        sub = data[data["evidence_type"] == code]
        if sub.empty:
            continue
        kw = dict(color=_color(code), marker=_MARKERS[code], s=22, edgecolor="white", linewidth=0.5,
                  label=_label(code), zorder=3)
        a1.scatter(sub["baseline"], sub["retention"], **kw)
        a2.scatter(sub["baseline"], sub["change"], **kw)
    a1.axhline(1.0, color="#999999", lw=0.8, ls=":")
    a2.axhline(0.0, color="#999999", lw=0.8, ls=":")
    for ax, m, ylabel, head in ((a1, "retention", f"Retention ({b1} / {b0})", f"Retention vs {b0} accuracy"),
                                (a2, "change", f"Change {b0}\u2192{b1} (pp, {b1} \u2212 {b0})",
                                 f"Change in points vs {b0} accuracy")):
        ax.set_xlabel(f"{b0} accuracy (%)")
        ax.set_ylabel(ylabel)
        ax.grid(color="#eeeeee", lw=0.6)
        left_out = int((~np.isfinite(data[m].to_numpy(float))).sum()) if m in data else 0
        if m in corr:
            head += "\n" + _rho_note(corr[m])
        if m == "change" and m in corr and _shown(corr[m]):
            head += ", coupled:\nthe change contains the baseline"
            if "change_vs_mean" in corr and _shown(corr["change_vs_mean"]):
                head += f";\nvs the mean of both budgets {_rho_note(corr['change_vs_mean'])}"
        if left_out:   # never left out silently: a cell at 0 % has no retention
            head += f"\n{left_out} cell{'s' if left_out != 1 else ''} at 0 % at {b0}: no {m}, not drawn"
        ax.set_title(head, fontsize=8.5)
    shown = [r for r in corr.values() if _shown(r)]
    if shown:
        k = int(shown[0].get("n_models", 0) or 0)
        finish(fig, note=f"Spearman \u03c1 over {int(shown[0]['n'])} model \u00d7 evidence cells"
               + (f"; 95% intervals resample the {k} models" if np.isfinite(shown[0].get("rho_ci_low", np.nan))
                  else f"; no interval ({k} model{'s' if k != 1 else ''}: too few to resample)"))
    _legend_on_top(fig, a1, title)
    return fig


def _shown(r) -> bool:
    return bool(np.isfinite(r["rho"]) and int(r["n"]) >= MIN_CORRELATION_POINTS)


def _rho_note(r) -> str:
    """``"ρ = -0.81 [-0.90, -0.69]"``, or why no ρ is shown."""
    n = int(r["n"])
    if not _shown(r):
        return (f"no correlation shown ({n} cells, fewer than {MIN_CORRELATION_POINTS})" if n < MIN_CORRELATION_POINTS
                else f"\u03c1 not defined ({n} cells)")
    lo, hi = r.get("rho_ci_low", np.nan), r.get("rho_ci_high", np.nan)
    return f"\u03c1 = {r['rho']:.2f}" + (f" [{lo:.2f}, {hi:.2f}]" if np.isfinite(lo) and np.isfinite(hi) else "")


def ratio_limits(values, *, around: tuple[float, float] = (0.95, 1.0), margin: float = 0.03) -> tuple[float, float]:
    """Limits of a log ratio axis holding every finite positive value and the span ``around`` (1 with a little room),
    widened by the factor ``margin``."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v) & (v > 0)]
    lo = min([around[0], *v.tolist()])
    hi = max([around[1], *v.tolist()])
    return lo * (1 - margin), hi * (1 + margin)


def set_ratio_axis(ax, lo: float, hi: float) -> None:
    """A log x axis from ``lo`` to ``hi`` with round ticks that cannot overprint, written plainly, no minor ticks."""
    ax.set_xscale("log")
    ax.set_xlim(lo, hi)
    ax.xaxis.set_major_locator(FixedLocator(log_ticks(lo, hi)))
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(NullFormatter())


@styled
def odds_ratio_forest(data: pd.DataFrame, *, title: str | None = None):
    """The length model's odds ratio per doubling with its interval per evidence type and overall (bold, below a
    rule) on a log axis holding every value and 1; a row that cannot be estimated says so."""
    rows = list(data.itertuples(index=False))
    fig, ax = plt.subplots(figsize=(5.0, 0.26 * len(rows) + 1.75), constrained_layout=True)
    reserve_footer(fig)
    for y, r in enumerate(rows):
        bold = r.evidence_type == "overall"
        if np.isfinite(r.odds_ratio) and r.odds_ratio > 0:
            lo, hi = r.or_ci_low, r.or_ci_high
            err = [[r.odds_ratio - lo], [hi - r.odds_ratio]] if np.isfinite(lo) and np.isfinite(hi) else None
            ax.errorbar(r.odds_ratio, y, xerr=err, fmt=_MARKERS.get(r.evidence_type, "o"), color=_color(r.evidence_type),
                        ms=5 if bold else 4.2, capsize=2.5, lw=1.2)
            text, grey = f"{r.odds_ratio:.3f} [{r.or_ci_low:.3f}, {r.or_ci_high:.3f}]", {}
        else:
            text = "not estimable" + (" (no convergence)" if not bool(getattr(r, "converged", True)) else "")
            grey = {"color": "#777777"}
        ax.annotate(text, (1.0, y), xycoords=("axes fraction", "data"), xytext=(4, 0), textcoords="offset points",
                    va="center", fontsize=7, fontweight="bold" if bold else "normal", **grey)
    set_ratio_axis(ax, *ratio_limits(data[["odds_ratio", "or_ci_low", "or_ci_high"]].to_numpy().ravel()))
    ax.axvline(1.0, color="#999999", lw=0.8, ls=":")
    if "overall" in set(data["evidence_type"]) and len(rows) > 1:
        ax.axhline(len(rows) - 1.5, color="#bbbbbb", lw=0.6)
    ax.set_yticks(range(len(rows)), [_label(r.evidence_type) for r in rows])
    for t, r in zip(ax.get_yticklabels(), rows):
        if r.evidence_type == "overall":
            t.set_fontweight("bold")
    ax.invert_yaxis()
    ax.grid(axis="x", color="#eeeeee", lw=0.6)
    budgets = str(data["budgets"].iloc[0]) if "budgets" in data and len(data) else ""
    unit = str(data["cluster"].iloc[0]) if "cluster" in data and len(data) else "question_id"
    ax.set_xlabel("Odds ratio per doubling of the history (robust 95% CI)\n"
                  f"GEE logistic, model fixed effects, exchangeable within {unit}; {budgets}", fontsize=8)
    ax.set_title(title or "Odds of a correct answer per doubling")
    return fig
