"""Audio MultiChallenge metrics and the paper's Tables 2-5 and Figures 5-9 as artifacts (AMC paper §3.1, App. A.4).

APR (Average Pass Rate) is the % of tasks whose every rubric item passes, with the Wilson interval; ARS (Average
Rubric Score) the mean over tasks of the share of items passed, with the task bootstrap (tasks drawn within their
axis) of :func:`voxmem_analysis.analysis.amc_runs.amc_slice`."""
from __future__ import annotations

import numpy as np
import pandas as pd

from voxmem_analysis.artifacts import artifact
from voxmem_analysis.errors import MissingDataError
from voxmem_analysis.io.amc import AXES, AXIS_LABELS
from voxmem_analysis.analysis.verdicts import BootstrapSettings, slice_accuracy
from voxmem_analysis.stats import ci_level_alias, cohen_kappa, holm, mcnemar_exact, spearman, wilson_interval

__all__ = [
    "task_scores", "apr_ars", "judge_agreement", "macro_f1", "tts_comparison",
    "cascaded_comparison", "audio_cue_scores", "rubric_type_scores", "apr_by_bins",
    "length_correlation", "DURATION_BINS", "correlation_interval",
]

SYSTEM = ["model", "output_modality"]
#: Cumulative user-audio bins of Figure 8b, seconds: (label, lower, upper).
DURATION_BINS = (("0-60 s", 0, 60), ("1-3 min", 60, 180), ("3-5 min", 180, 300), ("5-8 min", 300, 480),
                 ("8+ min", 480, np.inf))
_TYPE_LABELS = {"fixed": "Fixed", "conditional": "Conditional", "mid_utterance": "Mid-utterance",
                "prior_turn": "Prior-turn", "unedited": "Unedited"}


def _verdicts(data, part: str = "verdicts") -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        return data
    if getattr(data, part, None) is None:
        raise MissingDataError(f"the release has no {part} part", code="missing_part", file=part)
    return data.frame(part)


def task_scores(frame: pd.DataFrame, keys=SYSTEM) -> pd.DataFrame:
    """One row per ``keys`` x task: ``n_rubrics, n_passed, passed`` (every item), ``share``."""
    g = frame.groupby(list(keys) + ["task_id"], sort=False)["passed"]
    out = g.agg(n_rubrics="size", n_passed="sum").reset_index()
    out["passed"] = out["n_passed"] == out["n_rubrics"]
    out["share"] = out["n_passed"] / out["n_rubrics"]
    return out


def _ars_interval(scores: pd.DataFrame, keys: list[str], run: BootstrapSettings) -> pd.DataFrame:
    """ARS interval (%) per ``keys`` group: the task bootstrap of ``amc_slice`` (tasks within their axis), so a system's
    ARS has one interval wherever it is printed."""
    by = keys if "axis" in keys or "axis" not in scores else [*keys, "axis"]
    t = slice_accuracy(scores, by, value="share", scored=None, item="task_id", interval="bootstrap",
                       type_col="axis" if "axis" in by else None, separate=[k for k in by if k != "axis"] or None,
                       settings=run)
    t = t[t["level"] == ("slice" if by == keys else "overall")]
    return pd.DataFrame({**{k: t[k].to_numpy() for k in keys}, "ARS_lo": t["accuracy_ci_low"].to_numpy(),
                         "ARS_hi": t["accuracy_ci_high"].to_numpy()})


@ci_level_alias
def apr_ars(data, *, part: str = "verdicts", by=(), tasks=None, seed: int = 0, n_boot: int = 10_000,
            ci_level: float = 0.95, keys=SYSTEM) -> pd.DataFrame:
    """APR and ARS (%) per system and ``by`` group, with Wilson and task-bootstrap intervals (``n_boot=0``: none);
    ``tasks``: these task ids only. Columns ``*keys, *by, n_tasks, passes, APR, APR_lo, APR_hi, ARS, ARS_lo,
    ARS_hi``."""
    frame = _verdicts(data, part)
    if tasks is not None:
        frame = frame[frame["task_id"].isin(set(tasks))]
    by = list(by)
    grp = list(keys) + by
    scores = task_scores(frame, grp + (["axis"] if "axis" in frame and "axis" not in grp else []))
    out = scores.groupby(grp, sort=False).agg(n_tasks=("task_id", "size"), passes=("passed", "sum"),
                                              ARS=("share", "mean")).reset_index()
    out["ARS"] *= 100
    w = wilson_interval(out["passes"].to_numpy(), out["n_tasks"].to_numpy(), ci_level=ci_level)
    out["APR"] = 100 * w["proportion"].to_numpy()
    out["APR_lo"], out["APR_hi"] = 100 * w["ci_low"].to_numpy(), 100 * w["ci_high"].to_numpy()
    out["ARS_lo"] = out["ARS_hi"] = np.nan
    if n_boot and len(out):
        iv = _ars_interval(scores, grp, BootstrapSettings(n_boot=n_boot, seed=seed, ci_level=ci_level))
        for k in grp:
            out[k], iv[k] = out[k].astype(object), iv[k].astype(object)
        out = out.drop(columns=["ARS_lo", "ARS_hi"]).merge(iv, on=grp, how="left")
    return out[grp + ["n_tasks", "passes", "APR", "APR_lo", "APR_hi", "ARS", "ARS_lo", "ARS_hi"]]


def _row_label(model: str, modality: str) -> str:
    """``model|modality``, or the model alone when the modality is not known (no stray separator)."""
    return f"{model}|{modality}" if modality else str(model)


@artifact("amc_table2", title="AMC Table 2: APR / ARS (%) per model and output modality, per-axis APR")
def amc_table2(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Rows ``model|modality``; columns ``APR, ARS, IM, IR, SC, VE`` (as printed), ``APR lo/hi`` (Wilson), ``ARS lo/hi``."""
    overall = apr_ars(release, seed=seed, n_boot=n_boot)
    axes = apr_ars(release, by=["axis"], n_boot=0).pivot_table(index=SYSTEM, columns="axis", values="APR", sort=False)
    rows = []
    for r in overall.itertuples(index=False):
        ax = axes.loc[(r.model, r.output_modality)]
        rows.append({"row": _row_label(r.model, r.output_modality), "APR": r.APR, "ARS": r.ARS,
                     **{a: ax.get(a, np.nan) for a in AXES}, "APR lo": r.APR_lo, "APR hi": r.APR_hi,
                     "ARS lo": r.ARS_lo, "ARS hi": r.ARS_hi})
    return pd.DataFrame(rows).set_index("row")


def macro_f1(reference, predicted) -> float:
    """Mean of the F1 scores of class 1 and class 0 (``reference`` = the human labels)."""
    ref, pred = np.asarray(reference, dtype=bool), np.asarray(predicted, dtype=bool)
    out = []
    for cls in (True, False):
        tp = np.sum((pred == cls) & (ref == cls))
        fp = np.sum((pred == cls) & (ref != cls))
        fn = np.sum((pred != cls) & (ref == cls))
        out.append(2 * tp / (2 * tp + fp + fn) if (2 * tp + fp + fn) else np.nan)
    return float(np.mean(out))


def judge_agreement(release) -> pd.DataFrame:
    """Per judge against the human labels: ``judge, n, agreement`` (%), ``kappa, macro_f1``."""
    if release.judges is None or release.human is None:
        raise MissingDataError("the release has no judge_labels / human_labels", code="missing_part",
                               file="judge_labels")
    keys = SYSTEM + ["task_id", "rubric_id"]
    both = release.judges.merge(release.human[keys + ["passed"]], on=keys, suffixes=("", "_human"),
                                validate="many_to_one")
    rows = []
    for judge, g in both.groupby("judge", sort=False):
        k = cohen_kappa(g["passed_human"].astype(int), g["passed"].astype(int)).iloc[0]
        rows.append({"judge": judge, "n": int(k["n"]), "agreement": 100 * k["agreement"], "kappa": k["kappa"],
                     "macro_f1": macro_f1(g["passed_human"], g["passed"])})
    return pd.DataFrame(rows)


@artifact("amc_table3", title="AMC Table 3: LLM judge agreement with humans (Cohen's kappa, macro F1)",
          needs=("judges",))
def amc_table3(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Rows judges; columns ``κ``, ``Macro F1`` (as printed), ``n``, ``Agreement (%)``."""
    a = judge_agreement(release)
    return pd.DataFrame({"κ": a["kappa"].to_numpy(), "Macro F1": a["macro_f1"].to_numpy(), "n": a["n"].to_numpy(),
                         "Agreement (%)": a["agreement"].to_numpy()}, index=pd.Index(a["judge"], name="Judge"))


def _passes(frame: pd.DataFrame) -> pd.DataFrame:
    return task_scores(frame)[SYSTEM + ["task_id", "passed"]]


def tts_comparison(release) -> pd.DataFrame:
    """Human vs TTS user audio on the TTS subset, per system and per axis × modality (pooled). Columns ``row``
    (``model|modality`` or ``<axis>|modality``), ``n`` (tasks × systems), ``human, tts`` (APR %), ``relative`` (100 (tts
    / human − 1)), ``n01, n10`` (discordant tasks), ``p_value`` (exact McNemar, systems)."""
    tts = _verdicts(release, "tts")
    subset = set(release.tasks.loc[release.tasks["tts_subset"], "task_id"])
    systems = list(dict.fromkeys(zip(tts["model"], tts["output_modality"])))
    main = release.verdicts[release.verdicts["task_id"].isin(subset)]
    h, t = _passes(main), _passes(tts)
    pair = h.merge(t, on=SYSTEM + ["task_id"], suffixes=("_h", "_t"), validate="one_to_one")
    pair = pair.merge(release.tasks[["task_id", "axis"]], on="task_id")
    rows = []
    for s in systems:
        g = pair[(pair["model"] == s[0]) & (pair["output_modality"] == s[1])]
        mc = mcnemar_exact(g["passed_h"].astype(int), g["passed_t"].astype(int)).iloc[0]
        rows.append(_t4_row(_row_label(*s), g, mc))
    for ax in AXES:
        for mod in dict.fromkeys(m for _, m in systems):
            g = pair[(pair["axis"] == ax) & (pair["output_modality"] == mod)]
            rows.append(_t4_row(f"{AXIS_LABELS[ax]}|{mod}", g, None))
    return pd.DataFrame(rows)


def _t4_row(label: str, g: pd.DataFrame, mc) -> dict:
    hu, tt = 100 * g["passed_h"].mean(), 100 * g["passed_t"].mean()
    return {"row": label, "n": len(g), "human": hu, "tts": tt, "relative": 100 * (tt / hu - 1) if hu else np.nan,
            "n01": int((~g["passed_h"] & g["passed_t"]).sum()), "n10": int((g["passed_h"] & ~g["passed_t"]).sum()),
            "p_value": np.nan if mc is None else float(mc["p_value"])}


@artifact("amc_table4", title="AMC Table 4: APR (%) on human vs TTS user audio, per model and per axis",
          needs=("tts",))
def amc_table4(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Rows ``model|modality`` (4a) then ``<axis>|modality`` (4b); columns ``Human APR, TTS APR, Relative`` (as printed),
    ``n``, ``p (McNemar)``, ``p (Holm)`` (over 4a's tests) and ``Holm family``."""
    c = tts_comparison(release)
    p = c["p_value"].to_numpy(dtype=float)
    tested = ~np.isnan(p)
    adjusted = holm(p)["p_adjusted"].to_numpy() if p.size else p
    family = f"the {int(tested.sum())} per-system McNemar tests (4a)"
    return pd.DataFrame({"Human APR": c["human"].to_numpy(), "TTS APR": c["tts"].to_numpy(),
                         "Relative": c["relative"].to_numpy(), "n": c["n"].to_numpy(), "p (McNemar)": p,
                         "p (Holm)": adjusted, "Holm family": np.where(tested, family, "")},
                        index=pd.Index(c["row"], name="row"))


#: End-to-end systems Table 5 shows without a cascaded counterpart (Text output).
E2E_REFERENCE = ("GPT 4o Audio Preview", "GPT Realtime")


def cascaded_comparison(release, *, e2e_only=E2E_REFERENCE) -> pd.DataFrame:
    """Cascaded (ASR + LLM) vs end-to-end (Text output) APR on the subset (``a``) and the audio-specific rest (``b``).
    Columns ``panel, model, n, e2e`` (NaN without an end-to-end Text run), ``cascaded, relative``."""
    casc = _verdicts(release, "cascaded")
    tasks = release.tasks
    e2e = _passes(release.verdicts[release.verdicts["output_modality"] == "Text"])
    cas = _passes(casc)
    models = list(dict.fromkeys(casc["model"])) + [m for m in e2e_only if m in set(e2e["model"])]
    rows = []
    for panel, ids in (("a", set(tasks.loc[tasks["tts_subset"], "task_id"])),
                       ("b", set(tasks.loc[~tasks["tts_subset"], "task_id"]))):
        for m in models:
            pe = e2e[(e2e["model"] == m) & e2e["task_id"].isin(ids)]["passed"]
            pc = cas[(cas["model"] == m) & cas["task_id"].isin(ids)]["passed"]
            ve = 100 * pe.mean() if len(pe) else np.nan
            vc = 100 * pc.mean() if len(pc) else np.nan
            rows.append({"panel": panel, "model": m, "n": len(ids), "e2e": ve, "cascaded": vc,
                         "relative": 100 * (vc / ve - 1) if ve and not np.isnan(vc) else np.nan})
    return pd.DataFrame(rows)


@artifact("amc_table5", title="AMC Table 5: cascaded (ASR + LLM) vs end-to-end APR (%), 385- and 67-task subsets",
          needs=("cascaded",))
def amc_table5(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Rows ``a|model`` and ``b|model``; columns ``E2E APR``, ``Cascaded APR``, ``Relative``, ``n``."""
    c = cascaded_comparison(release)
    return pd.DataFrame({"E2E APR": c["e2e"].to_numpy(), "Cascaded APR": c["cascaded"].to_numpy(),
                         "Relative": c["relative"].to_numpy(), "n": c["n"].to_numpy()},
                        index=pd.Index(c["panel"] + "|" + c["model"], name="row"))


def audio_cue_scores(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Inference Memory :func:`apr_ars` per system for audio-cue and semantic tasks (column ``kind``)."""
    frame = release.frame()
    frame = frame[frame["axis"] == "IM"].assign(kind=lambda d: np.where(d["audio_cue"], "Audio-cue", "Semantic"))
    return apr_ars(frame, by=["kind"], seed=seed, n_boot=n_boot)


@artifact("amc_fig5", title="AMC Figure 5: Inference Memory APR / ARS (%), audio-cue vs semantic tasks")
def amc_fig5(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Rows ``model|modality`` and ``Mean``; APR/ARS of both kinds, their task counts and ``ARS relative change``."""
    s = audio_cue_scores(release, seed=seed, n_boot=n_boot)
    w = s.pivot_table(index=SYSTEM, columns="kind", values=["APR", "ARS", "n_tasks"], sort=False)
    out = pd.DataFrame({f"{k} {m}": w[(m, k)] for k in ("Audio-cue", "Semantic") for m in ("APR", "ARS")})
    out["ARS relative change"] = 100 * (out["Audio-cue ARS"] / out["Semantic ARS"] - 1)
    out.index = [_row_label(*i) for i in out.index]
    mean = out.mean().to_frame("Mean").T
    out["Audio-cue n"] = w[("n_tasks", "Audio-cue")].to_numpy()
    out["Semantic n"] = w[("n_tasks", "Semantic")].to_numpy()
    return pd.concat([out, mean])


def rubric_type_scores(release, column: str, axis: str) -> pd.DataFrame:
    """ARS (%) per system by a rubric attribute (``instruction_type`` on IR, ``edit_type`` on VE): per type, the mean
    over the tasks with such an item of the share of those items passed. Columns ``model, output_modality, type,
    n_tasks, n_rubrics, ARS``."""
    frame = release.frame()
    frame = frame[(frame["axis"] == axis) & frame[column].notna() & (frame[column].astype(str) != "")]
    per = frame.groupby(SYSTEM + [column, "task_id"], sort=False)["passed"].agg(["size", "mean"]).reset_index()
    out = per.groupby(SYSTEM + [column], sort=False).agg(n_tasks=("task_id", "size"), n_rubrics=("size", "sum"),
                                                          ARS=("mean", "mean")).reset_index()
    out["ARS"] *= 100
    return out.rename(columns={column: "type"})


def _type_table(release, column: str, axis: str, order) -> pd.DataFrame:
    s = rubric_type_scores(release, column, axis)
    w = s.pivot_table(index=SYSTEM, columns="type", values="ARS", sort=False)
    out = pd.DataFrame({_TYPE_LABELS[t]: w[t] for t in order if t in w.columns})
    n = s.drop_duplicates("type").set_index("type")["n_tasks"]
    out.index = [_row_label(*i) for i in out.index]
    for t in order:
        if t in n.index:
            out[f"{_TYPE_LABELS[t]} n"] = int(n[t])
    return out


@artifact("amc_fig6", title="AMC Figure 6: Instruction Retention ARS (%) by instruction type (fixed / conditional)")
def amc_fig6(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Rows ``model|modality``; columns ``Fixed``, ``Conditional`` and their task counts."""
    return _type_table(release, "instruction_type", "IR", ("fixed", "conditional"))


@artifact("amc_fig7", title="AMC Figure 7: Voice Editing ARS (%) by edit type")
def amc_fig7(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Rows ``model|modality``; columns ``Mid-utterance``, ``Prior-turn``, ``Unedited`` and their task counts."""
    return _type_table(release, "edit_type", "VE", ("mid_utterance", "prior_turn", "unedited"))


def apr_by_bins(release) -> pd.DataFrame:
    """APR (%) pooled over systems by turn count and by cumulative user-audio bin, per axis and all (tasks without the
    value left out, counted in ``attrs["missing"]``). Columns ``variable`` (``turns``/``duration``), ``bin, axis`` (or
    ``All``), ``n_tasks, n`` (task × system), ``APR``."""
    sc = task_scores(release.verdicts).merge(release.tasks, on="task_id")
    rows, missing = [], {}
    for var, col in (("turns", "turns"), ("duration", "user_audio_seconds")):
        d = sc[sc[col].notna()].copy()
        missing[var] = int(release.tasks[col].isna().sum())
        if var == "turns":
            d["bin"] = d[col].astype(int).astype(str)
            order = sorted(d["bin"].unique(), key=int)
        else:
            order = [b[0] for b in DURATION_BINS]
            d["bin"] = pd.cut(d[col], [b[1] for b in DURATION_BINS] + [np.inf], right=False, labels=order).astype(str)
        for ax in AXES + ("All",):
            g = d if ax == "All" else d[d["axis"] == ax]
            for b in order:
                gb = g[g["bin"] == b]
                rows.append({"variable": var, "bin": b, "axis": ax, "n_tasks": gb["task_id"].nunique(),
                             "n": len(gb), "APR": 100 * gb["passed"].mean() if len(gb) else np.nan})
    out = pd.DataFrame(rows)
    out.attrs["missing"] = missing
    return out


@artifact("amc_fig8", title="AMC Figure 8: APR (%) by turn count and by cumulative user-audio duration, per axis")
def amc_fig8(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Rows ``turns|<k>`` and ``duration|<bin>``; columns ``IM IR SC VE All`` (APR) and ``<axis> n`` (tasks)."""
    b = apr_by_bins(release)
    b["row"] = b["variable"] + "|" + b["bin"]
    apr = b.pivot_table(index="row", columns="axis", values="APR", sort=False)[list(AXES) + ["All"]]
    n = b.pivot_table(index="row", columns="axis", values="n_tasks", sort=False)[list(AXES) + ["All"]]
    n.columns = [f"{c} n" for c in n.columns]
    return pd.concat([apr, n], axis=1)


@ci_level_alias
def correlation_interval(r: float, n: int, *, method: str, ci_level: float = 0.95) -> tuple[float, float]:
    """Fisher-z interval: Pearson ``se = 1/sqrt(n-3)``; Spearman Bonett-Wright ``sqrt((1+r^2/2)/(n-3))``."""
    if n <= 3 or not np.isfinite(r) or abs(r) >= 1:
        return np.nan, np.nan
    from scipy.stats import norm   # SciPy where it computes, as in stats/ (export-frame and items never need it)

    se = np.sqrt((1 + r * r / 2) / (n - 3)) if method == "spearman" else 1 / np.sqrt(n - 3)
    z, q = np.arctanh(r), norm.ppf(0.5 + ci_level / 2)
    return float(np.tanh(z - q * se)), float(np.tanh(z + q * se))


@ci_level_alias
def length_correlation(release, *, ci_level: float = 0.95) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(points, correlations)``: per system ARS and mean response length (``model, output_modality, ARS,
    mean_tokens``), and their Pearson and Spearman correlations (``method, estimate, ci_low, ci_high, p_value, n``)."""
    from scipy.stats import pearsonr

    if release.lengths is None:
        raise MissingDataError("the release has no response_lengths", code="missing_part", file="response_lengths")
    ars = apr_ars(release, n_boot=0)[SYSTEM + ["ARS"]]
    ln = release.lengths.groupby(SYSTEM, sort=False)["tokens"].mean().rename("mean_tokens").reset_index()
    pts = ars.merge(ln, on=SYSTEM, how="inner")
    n = len(pts)
    pr = pearsonr(pts["mean_tokens"], pts["ARS"]) if n >= 3 else (np.nan, np.nan)
    sp = spearman(pts["mean_tokens"], pts["ARS"]).iloc[0]
    rows = []
    for method, est, p in (("pearson", float(pr[0]), float(pr[1])), ("spearman", float(sp["rho"]), float(sp["p_value"]))):
        lo, hi = correlation_interval(est, n, method=method, ci_level=ci_level)
        rows.append({"method": method, "estimate": est, "ci_low": lo, "ci_high": hi, "p_value": p, "n": n})
    return pts, pd.DataFrame(rows)


@artifact("amc_fig9", title="AMC Figure 9: ARS (%) vs mean response length (tokens), Pearson and Spearman",
          needs=("lengths",))
def amc_fig9(release, *, seed: int = 0, n_boot: int = 10_000) -> pd.DataFrame:
    """Rows ``model|modality`` (``Mean tokens``, ``ARS``), then ``Pearson r`` and ``Spearman rho`` (``estimate, ci_low,
    ci_high, p, n``)."""
    pts, cor = length_correlation(release)
    a = pd.DataFrame({"Mean tokens": pts["mean_tokens"].to_numpy(), "ARS": pts["ARS"].to_numpy()},
                     index=[_row_label(m, o) for m, o in zip(pts["model"], pts["output_modality"])])
    b = pd.DataFrame({"estimate": cor["estimate"].to_numpy(), "ci_low": cor["ci_low"].to_numpy(),
                      "ci_high": cor["ci_high"].to_numpy(), "p": cor["p_value"].to_numpy(), "n": cor["n"].to_numpy()},
                     index=["Pearson r", "Spearman rho"])
    return pd.concat([a, b])
