"""Deterministic generator of the SYNTHETIC Audio MultiChallenge (AMC) release.

``write_amc_release(out_dir, seed=DEFAULT_SEED)`` writes an AMC release folder (format:
:mod:`voxmem_analysis.io.amc`, ``data/README.md``) whose rubric verdicts give back the AMC
paper's Tables 2-5 (``published(benchmark="amc")``) under the paper's definitions of APR and
ARS.  Nothing in it is real: no model was run, no audio exists, no judge was called.

Construction
------------
* Design constants (:data:`AXIS_TASKS`, :data:`SUBSET_TASKS`, :data:`AUDIO_CUE_TASKS`) fix the
  task table.  The split of each axis into the 385-task TTS/cascaded subset and the 67 excluded
  tasks is the only one for which the per-axis APRs of Table 4b are integer counts that add up
  to the per-model counts of Table 4a (found by exhaustive search: IM 86, IR 117, SC 79, VE 103).
* Per system, pass counts per axis come from Table 2 (percent x axis size, rounded); their
  split between the subset and the excluded tasks, and the TTS pass counts, are solved as one
  small integer program (``scipy.optimize.milp``) so that Tables 4 and 5 hold exactly.
* Which tasks pass is the top-k of a latent easiness shared by all systems plus noise (longer
  user audio makes Self Coherence and Voice Editing harder; audio-cue tasks are harder).
* ARS: a failed task satisfies some of its rubric items; the numbers are set so each system's
  ARS equals Table 2's to within 0.002 pp.  Which items fail prefers conditional IR rules and
  edited VE statements.
* Judge agreement (Table 3): 1,712 observations, one per rubric item, each a response of
  GPT 4o Audio Preview or Gemini 2.5 Pro (Thinking) (Text).  o4 Mini's labels are those
  verdicts; human labels and the other judges' labels flip chosen items so that each judge's
  Cohen's kappa and macro F1 match Table 3.
"""
from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pandas as pd

from voxmem_analysis.io.amc import AXES, BENCHMARK_ID, EDIT_TYPES, load_amc
from voxmem_analysis.reproduce.published import published
from voxmem_analysis.reproduce.scoreboard import reproduction_table

__all__ = ["DEFAULT_SEED", "write_amc_release", "build_amc", "AXIS_TASKS", "SUBSET_TASKS",
           "AUDIO_CUE_TASKS", "N_RUBRICS", "calibration_report", "inconsistencies", "known_misprints",
           "calibration_markdown"]

DEFAULT_SEED = 20261
AXIS_TASKS = {"IM": 132, "IR": 120, "SC": 83, "VE": 117}
SUBSET_TASKS = {"IM": 86, "IR": 117, "SC": 79, "VE": 103}
AUDIO_CUE_TASKS = 38
N_RUBRICS = 1712
TOTAL_AUDIO_SECONDS = 14.99 * 3600
_AXIS_NAME = {"Inference Memory": "IM", "Instruction Retention": "IR", "Self Coherence": "SC",
              "Voice Editing": "VE"}
#: Responses graded by humans for Table 3 (§3.3: "GPT 4o Audio Preview or Gemini 2.5 Pro").
HUMAN_GRADED = (("GPT 4o Audio Preview", "Text"), ("Gemini 2.5 Pro (Thinking)", "Text"))
PRIMARY_JUDGE = "o4 Mini"


# ----------------------------------------------------------------------------- targets
def _targets() -> pd.DataFrame:
    return published(benchmark="amc")


def _count(pct: float, n: int) -> int:
    return int(round(pct / 100 * n))


def _table2_counts(pub: pd.DataFrame) -> tuple[list[tuple[str, str]], dict, dict]:
    """Systems in Table 2 order, pass counts per axis, ARS targets (percent)."""
    t2 = pub[pub["artifact"] == "amc_table2"]
    systems = list(dict.fromkeys(tuple(r.split("|")) for r in t2["row"]))
    counts, ars = {}, {}
    for s in systems:
        cells = t2[t2["row"] == "|".join(s)].set_index("column")["value"]
        total = _count(cells["APR"], sum(AXIS_TASKS.values()))
        c = {ax: _count(cells[ax], AXIS_TASKS[ax]) for ax in AXES}
        if sum(c.values()) != total:  # a misprinted axis cell (65.283): the overall count decides
            bad = [ax for ax in AXES if abs(100 * c[ax] / AXIS_TASKS[ax] - cells[ax]) > 0.005]
            if len(bad) == 1:
                c[bad[0]] += total - sum(c.values())
        counts[s], ars[s] = c, float(cells["ARS"])
    return systems, counts, ars


def _table4_targets(pub: pd.DataFrame) -> tuple[dict, dict, dict, dict]:
    """Human/TTS pass counts on the subset per system, and per axis x modality pooled counts."""
    t4 = pub[pub["artifact"] == "amc_table4"].pivot(index="row", columns="column", values="value")
    n_sub = sum(SUBSET_TASKS.values())
    human, tts, axis_h, axis_t = {}, {}, {}, {}
    for row, r in t4.iterrows():
        name, mod = row.split("|")
        if name in _AXIS_NAME:
            continue
        human[(name, mod)] = _count(r["Human APR"], n_sub)
        tts[(name, mod)] = _count(r["TTS APR"], n_sub)
    for row, r in t4.iterrows():
        name, mod = row.split("|")
        if name not in _AXIS_NAME:
            continue
        k = sum(1 for s in human if s[1] == mod)
        n = k * SUBSET_TASKS[_AXIS_NAME[name]]
        axis_h[(_AXIS_NAME[name], mod)] = _count(r["Human APR"], n)
        axis_t[(_AXIS_NAME[name], mod)] = _count(r["TTS APR"], n)
    return human, tts, axis_h, axis_t


def _table5_targets(pub: pd.DataFrame) -> dict:
    """``{model: (subset passes, excluded passes)}`` for the cascaded systems."""
    t5 = pub[(pub["artifact"] == "amc_table5") & (pub["column"] == "Cascaded APR")]
    n_sub = sum(SUBSET_TASKS.values())
    n_exc = sum(AXIS_TASKS.values()) - n_sub
    out: dict[str, list[int]] = {}
    for r in t5.itertuples(index=False):
        panel, model = r.row.split("|")
        out.setdefault(model, [0, 0])[0 if panel == "a" else 1] = _count(r.value, n_sub if panel == "a" else n_exc)
    return {m: tuple(v) for m, v in out.items()}


# ----------------------------------------------------------------------------- integer program
class _Vars:
    """Index bookkeeping for the integer program."""

    def __init__(self):
        self.idx: dict[tuple, int] = {}
        self.lo: list[float] = []
        self.hi: list[float] = []

    def add(self, key, lo, hi) -> int:
        self.idx[key] = len(self.lo)
        self.lo.append(lo)
        self.hi.append(hi)
        return self.idx[key]


def _solve_split(systems, counts, human, tts, axis_h, axis_t) -> tuple[dict, dict]:
    """Subset pass counts per system x axis (``s``) and TTS pass counts (``t``), exactly.

    Constraints: ``c - n_excluded <= s <= min(c, n_subset)``; for the TTS-study systems
    ``sum_ax s = human``, ``sum_ax t = tts``, and the per-modality column sums of Table 4b.
    Objective: ``s`` near the proportional split, ``t`` near ``s``.
    """
    from scipy.optimize import Bounds, LinearConstraint, milp

    v = _Vars()
    for m in systems:
        for ax in AXES:
            c, n_sub = counts[m][ax], SUBSET_TASKS[ax]
            v.add(("s", m, ax), max(0, c - (AXIS_TASKS[ax] - n_sub)), min(c, n_sub))
            v.add(("ds", m, ax), 0, np.inf)
    for m in human:
        for ax in AXES:
            v.add(("t", m, ax), 0, SUBSET_TASKS[ax])
            v.add(("dt", m, ax), 0, np.inf)
    n = len(v.lo)
    rows, lo, hi, cost = [], [], [], np.zeros(n)

    def con(coefs: dict, a: float, b: float) -> None:
        r = np.zeros(n)
        for k, x in coefs.items():
            r[v.idx[k]] = x
        rows.append(r)
        lo.append(a)
        hi.append(b)

    for m in systems:
        for ax in AXES:
            prop = counts[m][ax] * SUBSET_TASKS[ax] / AXIS_TASKS[ax]
            con({("ds", m, ax): 1, ("s", m, ax): -1}, -prop, np.inf)
            con({("ds", m, ax): 1, ("s", m, ax): 1}, prop, np.inf)
            cost[v.idx[("ds", m, ax)]] = 1.0
    for m in human:
        con({("s", m, ax): 1 for ax in AXES}, human[m], human[m])
        con({("t", m, ax): 1 for ax in AXES}, tts[m], tts[m])
        for ax in AXES:
            con({("dt", m, ax): 1, ("t", m, ax): -1, ("s", m, ax): 1}, 0, np.inf)
            con({("dt", m, ax): 1, ("t", m, ax): 1, ("s", m, ax): -1}, 0, np.inf)
            cost[v.idx[("dt", m, ax)]] = 1.0
    for (ax, mod), k in axis_h.items():
        con({("s", m, ax): 1 for m in human if m[1] == mod}, k, k)
        con({("t", m, ax): 1 for m in human if m[1] == mod}, axis_t[(ax, mod)], axis_t[(ax, mod)])
    integrality = np.array([1 if k[0] in ("s", "t") else 0 for k in v.idx])
    res = milp(cost, constraints=LinearConstraint(np.array(rows), lo, hi), integrality=integrality,
               bounds=Bounds(v.lo, v.hi))
    if not res.success:
        raise RuntimeError(f"AMC calibration: the integer program has no solution ({res.message})")
    x = np.round(res.x).astype(int)
    s = {m: {ax: int(x[v.idx[("s", m, ax)]]) for ax in AXES} for m in systems}
    t = {m: {ax: int(x[v.idx[("t", m, ax)]]) for ax in AXES} for m in human}
    return s, t


# ----------------------------------------------------------------------------- tasks and rubrics
def _tasks(rng: np.random.Generator) -> pd.DataFrame:
    rows = []
    for ax in AXES:
        n, n_sub = AXIS_TASKS[ax], SUBSET_TASKS[ax]
        n_exc = n - n_sub
        n_cue = AUDIO_CUE_TASKS if ax == "IM" else 0
        for i in range(n):
            rows.append({"task_id": f"amc-{ax.lower()}-{i + 1:03d}", "axis": ax,
                         "audio_cue": i < n_cue, "interruption": n_cue <= i < n_exc,
                         "tts_subset": i >= n_exc})
    tasks = pd.DataFrame(rows)
    turns = rng.integers(3, 9, size=len(tasks))
    secs = np.exp(rng.normal(np.log(22.0) + 0.0, 0.5, size=len(tasks))) * turns
    secs *= TOTAL_AUDIO_SECONDS / secs.sum()
    tasks["user_audio_seconds"] = np.round(secs, 2)
    tasks["turns"] = turns
    return tasks


def _rubric_counts(rng: np.random.Generator, n_tasks: int) -> np.ndarray:
    r = 2 + rng.binomial(6, (N_RUBRICS / n_tasks - 2) / 6, size=n_tasks)
    while r.sum() != N_RUBRICS:
        i = rng.integers(n_tasks)
        step = 1 if r.sum() < N_RUBRICS else -1
        if 2 <= r[i] + step <= 8:
            r[i] += step
    return r


def _rubrics(rng: np.random.Generator, tasks: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for (tid, ax), k in zip(zip(tasks["task_id"], tasks["axis"]), _rubric_counts(rng, len(tasks))):
        for j in range(int(k)):
            rows.append({"rubric_id": f"{tid}-r{j + 1}", "task_id": tid,
                         "instruction_type": (("conditional" if rng.random() < 0.4 else "fixed")
                                              if ax == "IR" else ""),
                         "edit_type": (str(rng.choice(EDIT_TYPES, p=[0.35, 0.35, 0.3])) if ax == "VE" else ""),
                         "exclusion": bool(rng.random() < 0.12)})
    return pd.DataFrame(rows)


# ----------------------------------------------------------------------------- verdicts
def _latent(rng: np.random.Generator, tasks: pd.DataFrame) -> np.ndarray:
    """Shared task easiness: audio-cue tasks and long SC/VE histories are harder."""
    e = rng.normal(0, 1, size=len(tasks))
    e -= 0.9 * tasks["audio_cue"].to_numpy()
    long = np.log(tasks["user_audio_seconds"].to_numpy() / 120.0)
    e -= 0.7 * long * tasks["axis"].isin(["SC", "VE"]).to_numpy()
    return e


def _top(rng: np.random.Generator, score: np.ndarray, idx: np.ndarray, k: int) -> np.ndarray:
    """``k`` of the task positions ``idx`` with the highest score + Gumbel noise."""
    if k <= 0:
        return idx[:0]
    noisy = score[idx] + rng.gumbel(0, 0.8, size=len(idx))
    return idx[np.argsort(-noisy, kind="stable")[:k]]


def _passes_e2e(rng, tasks, easy, split: dict, counts: dict) -> np.ndarray:
    """Boolean pass vector of one system: per axis, ``split`` passes in the subset, the rest outside."""
    passed = np.zeros(len(tasks), dtype=bool)
    own = easy + rng.normal(0, 0.6, size=len(tasks))
    for ax in AXES:
        sub = np.flatnonzero((tasks["axis"] == ax).to_numpy() & tasks["tts_subset"].to_numpy())
        exc = np.flatnonzero((tasks["axis"] == ax).to_numpy() & ~tasks["tts_subset"].to_numpy())
        passed[_top(rng, own, sub, split[ax])] = True
        passed[_top(rng, own, exc, counts[ax] - split[ax])] = True
    return passed


def _passes_tts(rng, tasks, easy, human: np.ndarray, t: dict) -> np.ndarray:
    passed = np.zeros(len(tasks), dtype=bool)
    score = easy + 2.5 * human
    for ax in AXES:
        sub = np.flatnonzero((tasks["axis"] == ax).to_numpy() & tasks["tts_subset"].to_numpy())
        passed[_top(rng, score, sub, t[ax])] = True
    return passed


def _passes_cascaded(rng, tasks, easy, k_sub: int, k_exc: int) -> np.ndarray:
    passed = np.zeros(len(tasks), dtype=bool)
    own = easy + rng.normal(0, 0.6, size=len(tasks))
    sub = np.flatnonzero(tasks["tts_subset"].to_numpy())
    exc = np.flatnonzero(~tasks["tts_subset"].to_numpy())
    passed[_top(rng, own, sub, k_sub)] = True
    passed[_top(rng, own, exc, k_exc)] = True
    return passed


def _best_move(err: float, inc: set, dec: set, *, fine: bool):
    """The combination of up to three +-1 steps (``(sign, r)``; a step changes the sum by
    ``sign / r``) that brings ``err`` closest to 0, or ``None`` if nothing improves it."""
    steps = [(1, v) for v in sorted(inc)] + [(-1, v) for v in sorted(dec)]
    combos = [(st,) for st in steps]
    if fine:
        combos += [(x, y) for i, x in enumerate(steps) for y in steps[i:]]
        combos += [(x, y, z) for i, x in enumerate(steps) for j, y in enumerate(steps[i:], i) for z in steps[j:]]
    best, best_err = None, abs(err)
    for c in combos:
        d = sum(sign / v for sign, v in c)
        if abs(err - d) < best_err - 1e-12:
            best, best_err = c, abs(err - d)
    return best


def _shares(rng: np.random.Generator, r: np.ndarray, target: float | None) -> np.ndarray:
    """Satisfied items ``m`` (0 <= m < r) of failed tasks with ``sum(m / r)`` within 0.01 of ``target``.

    Starts from a binomial draw, then applies the single step (+-1/r) or the pair of steps
    (+1/a on one task, -1/b on another) that brings the sum closest to the target.
    """
    cap = r - 1
    if target is None:
        return rng.binomial(cap, 0.55)
    q = min(max(target / max((cap / r).sum(), 1e-9), 0.0), 1.0)
    m = rng.binomial(cap, q)
    for _ in range(50_000):
        err = target - (m / r).sum()
        if abs(err) <= 0.01:
            return m
        move = _best_move(err, set(r[m < cap].tolist()), set(r[m > 0].tolist()), fine=abs(err) < 0.5)
        if move is None:
            break
        for sign, v in move:
            pool = np.flatnonzero(((m < cap) if sign > 0 else (m > 0)) & (r == v))
            m[rng.choice(pool)] += sign
    raise RuntimeError(f"AMC calibration: cannot reach an ARS share sum of {target:.4f}")


_RUBRIC_EASE = {"conditional": -0.8, "fixed": 0.3, "mid_utterance": -0.4, "prior_turn": -0.5, "unedited": 0.7}


def _rubric_verdicts(rng, rubrics: pd.DataFrame, tasks: pd.DataFrame, passed: np.ndarray,
                     target_share: float | None) -> np.ndarray:
    """Boolean ``passed`` per rubric row: all items of passed tasks; ``m`` items of failed ones."""
    pos = {t: i for i, t in enumerate(tasks["task_id"])}
    task_of = rubrics["task_id"].map(pos).to_numpy()
    r = np.bincount(task_of, minlength=len(tasks))
    failed = np.flatnonzero(~passed)
    m = _shares(rng, r[failed], target_share)
    ease = (rubrics["instruction_type"].map(_RUBRIC_EASE).fillna(0)
            + rubrics["edit_type"].map(_RUBRIC_EASE).fillna(0)).to_numpy()
    score = ease + rng.gumbel(0, 1.0, size=len(rubrics))
    out = passed[task_of].copy()
    starts = np.concatenate([[0], np.cumsum(r)[:-1]])
    for t, k in zip(failed, m):
        rows = np.arange(starts[t], starts[t] + r[t])
        out[rows[np.argsort(-score[rows], kind="stable")[:k]]] = True
    return out


# ----------------------------------------------------------------------------- judges (Table 3)
def _agreement(n11, n10, n01, n00):
    n = n11 + n10 + n01 + n00
    po = (n11 + n00) / n
    pa, pb = (n11 + n10) / n, (n11 + n01) / n
    pe = pa * pb + (1 - pa) * (1 - pb)
    kappa = (po - pe) / (1 - pe)
    f1_pos = 2 * n11 / (2 * n11 + n10 + n01)
    f1_neg = 2 * n00 / (2 * n00 + n10 + n01)
    return kappa, (f1_pos + f1_neg) / 2


def _flips(n_pos: int, n: int, kappa: float, f1: float) -> tuple[int, int]:
    """Positives to turn negative (``a``) and negatives to turn positive (``b``) so that the
    flipped vector agrees with the original with this kappa and macro F1 (to 0.0004)."""
    a, b = np.meshgrid(np.arange(0, 400), np.arange(0, 400), indexing="ij")
    a, b = a.ravel(), b.ravel()
    ok = (a <= n_pos) & (b <= n - n_pos)
    k, f = _agreement(n_pos - a, a, b, n - n_pos - b)
    err = np.where(ok, np.maximum(np.abs(k - kappa), np.abs(f - f1)), np.inf)
    i = int(np.argmin(err + 1e-7 * np.abs(a - b)))
    if err[i] > 0.0004:
        raise RuntimeError(f"AMC calibration: no confusion matrix gives kappa {kappa} and F1 {f1}")
    return int(a[i]), int(b[i])


def _flip(rng, x: np.ndarray, a: int, b: int) -> np.ndarray:
    y = x.copy()
    y[rng.choice(np.flatnonzero(x), a, replace=False)] = False
    y[rng.choice(np.flatnonzero(~x), b, replace=False)] = True
    return y


def _judge_parts(rng, pub, rubrics, verdicts: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Human labels (one per rubric item) and every judge's labels of the same responses."""
    t3 = pub[pub["artifact"] == "amc_table3"].pivot(index="row", columns="column", values="value")
    t3 = t3.loc[list(dict.fromkeys(pub.loc[pub["artifact"] == "amc_table3", "row"]))]
    tasks = rubrics["task_id"].unique()
    pick = dict(zip(tasks, rng.integers(0, len(HUMAN_GRADED), size=len(tasks))))
    graded = pd.DataFrame({"rubric_id": rubrics["rubric_id"], "task_id": rubrics["task_id"]})
    graded["model"] = [HUMAN_GRADED[pick[t]][0] for t in graded["task_id"]]
    graded["output_modality"] = [HUMAN_GRADED[pick[t]][1] for t in graded["task_id"]]
    keys = ["model", "output_modality", "task_id", "rubric_id"]
    graded = graded.merge(verdicts, on=keys, how="left", validate="one_to_one")
    primary = graded["passed"].to_numpy(dtype=bool)
    n = len(primary)
    a, b = _flips(int(primary.sum()), n, t3.loc[PRIMARY_JUDGE, "κ"], t3.loc[PRIMARY_JUDGE, "Macro F1"])
    human_v = _flip(rng, primary, a, b)
    human = graded[keys].assign(passed=human_v)
    parts = []
    for judge, row in t3.iterrows():
        if judge == PRIMARY_JUDGE:
            lab = primary
        else:
            a, b = _flips(int(human_v.sum()), n, row["κ"], row["Macro F1"])
            lab = _flip(rng, human_v, a, b)
        parts.append(graded[keys].assign(judge=judge, passed=lab)[["judge"] + keys + ["passed"]])
    return human, pd.concat(parts, ignore_index=True)


def _lengths(rng, systems, ars: dict, tasks: pd.DataFrame) -> pd.DataFrame:
    """Response lengths (tokens) per system and task: mean rises linearly with ARS (Figure 9)."""
    parts = []
    for s in systems:
        mean = 30.0 + 4.0 * ars[s] + rng.normal(0, 12)
        tok = np.round(rng.gamma(4.0, mean / 4.0, size=len(tasks))).astype(int) + 1
        parts.append(pd.DataFrame({"model": s[0], "output_modality": s[1], "task_id": tasks["task_id"],
                                   "tokens": tok}))
    return pd.concat(parts, ignore_index=True)


# ----------------------------------------------------------------------------- build / write
def _verdict_frame(system, rubrics, passed_rubric) -> pd.DataFrame:
    return pd.DataFrame({"model": system[0], "output_modality": system[1], "task_id": rubrics["task_id"],
                         "rubric_id": rubrics["rubric_id"], "passed": passed_rubric})


def build_amc(seed: int = DEFAULT_SEED) -> dict:
    """All tables of the synthetic AMC release as DataFrames (see :func:`write_amc_release`)."""
    rng = np.random.default_rng(seed)
    pub = _targets()
    systems, counts, ars = _table2_counts(pub)
    human_n, tts_n, axis_h, axis_t = _table4_targets(pub)
    split, tsplit = _solve_split(systems, counts, human_n, tts_n, axis_h, axis_t)
    tasks = _tasks(rng)
    rubrics = _rubrics(rng, tasks)
    easy = _latent(rng, tasks)
    n_tasks = len(tasks)
    main, tts, passes = [], [], {}
    for s in systems:
        p = _passes_e2e(rng, tasks, easy, split[s], counts[s])
        passes[s] = p
        share = ars[s] / 100 * n_tasks - p.sum()
        main.append(_verdict_frame(s, rubrics, _rubric_verdicts(rng, rubrics, tasks, p, share)))
    for s in [s for s in systems if s in human_n]:
        p = _passes_tts(rng, tasks, easy, passes[s], tsplit[s])
        keep = rubrics["task_id"].isin(set(tasks.loc[tasks["tts_subset"], "task_id"])).to_numpy()
        v = _rubric_verdicts(rng, rubrics, tasks, p, None)
        tts.append(_verdict_frame(s, rubrics[keep], v[keep]))
    cascaded = []
    for model, (k_sub, k_exc) in _table5_targets(pub).items():
        p = _passes_cascaded(rng, tasks, easy, k_sub, k_exc)
        cascaded.append(_verdict_frame((model, "Text"), rubrics, _rubric_verdicts(rng, rubrics, tasks, p, None)))
    verdicts = pd.concat(main, ignore_index=True)
    human, judges = _judge_parts(rng, pub, rubrics, verdicts)
    return {"tasks": tasks, "rubrics": rubrics, "verdicts": verdicts,
            "tts": pd.concat(tts, ignore_index=True), "cascaded": pd.concat(cascaded, ignore_index=True),
            "human_labels": human, "judge_labels": judges,
            "response_lengths": _lengths(rng, systems, ars, tasks), "seed": seed}


def _slug(model: str, modality: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", f"{model} {modality}".lower()).strip("-")


def _csv(df: pd.DataFrame, path: pathlib.Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    out = df.copy()
    for c in out.columns:
        if out[c].dtype == bool:
            out[c] = out[c].map({True: "true", False: "false"})
    out.to_csv(path, index=False, lineterminator="\n", float_format="%.2f")


def _write_part(df: pd.DataFrame, root: pathlib.Path, sub: str) -> None:
    for i, ((model, mod), g) in enumerate(df.groupby(["model", "output_modality"], sort=False), 1):
        _csv(g, root / sub / f"{i:02d}-{_slug(model, mod)}.csv")  # numbered: files sort in paper order


def write_amc_release(out_dir, seed: int = DEFAULT_SEED, *, report: bool = True) -> pathlib.Path:
    """Write the SYNTHETIC AMC release to ``out_dir`` (replacing the files it writes).

    Files: ``release.json``, ``README.md`` (SYNTHETIC banner), ``tasks.csv``, ``rubrics.csv``,
    ``verdicts/``, ``tts/``, ``cascaded/``, ``human_labels.csv``, ``judge_labels.csv``,
    ``response_lengths.csv`` and, with ``report``, ``CALIBRATION.md`` (every published AMC number
    next to the number recomputed from the written files, plus the paper's inconsistencies).
    """
    import shutil

    root = pathlib.Path(out_dir)
    data = build_amc(seed)
    for sub in ("verdicts", "tts", "cascaded"):
        if (root / sub).is_dir():
            shutil.rmtree(root / sub)
    root.mkdir(parents=True, exist_ok=True)
    meta = {"name": "amc-synthetic", "benchmark": BENCHMARK_ID, "synthetic": True, "seed": seed,
            "description": "SYNTHETIC Audio MultiChallenge release generated by voxmem_analysis.synth.amc; "
                           "calibrated to the AMC paper's Tables 2-5; not real model output.",
            "generator": "voxmem_analysis.synth.amc.write_amc_release"}
    (root / "release.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    _csv(data["tasks"], root / "tasks.csv")
    _csv(data["rubrics"], root / "rubrics.csv")
    for part in ("verdicts", "tts", "cascaded"):
        _write_part(data[part], root, part)
    for name in ("human_labels", "judge_labels", "response_lengths"):
        _csv(data[name], root / f"{name}.csv")
    (root / "README.md").write_text(_readme(seed), encoding="utf-8")
    if report:
        (root / "CALIBRATION.md").write_text(calibration_markdown(root), encoding="utf-8")
    return root


def _readme(seed: int) -> str:
    return f"""# SYNTHETIC Audio MultiChallenge release — not real model output

**Every file in this directory is synthetic.** It was generated by
`voxmem_analysis.synth.amc.write_amc_release(out_dir, seed={seed})`
(`voxmem-analysis synth --benchmark amc --out data/synthetic-amc --seed {seed}`). No model was
run, no audio exists and no judge was called: the rubric verdicts were constructed so that the
AMC paper's definitions of APR and ARS (§3.1, App. A.4), applied to them, give back the numbers
of its Tables 2–5 (the 214 `amc_*` rows of `data/paper/published.csv`) within 0.05 pp — except
where the paper contradicts itself (see `CALIBRATION.md`). Task ids, rubric attributes,
durations, turn counts, response lengths, which tasks pass and which rubric items fail are
invented.

`release.json` has `"synthetic": true` and `"benchmark": "{BENCHMARK_ID}"`, so every table and
figure made from this folder is labelled SYNTHETIC DATA.

Contents (format: `data/README.md`, section "Audio MultiChallenge release"):
`tasks.csv` (452 tasks: IM 132 of which 38 audio-cue, IR 120, SC 83, VE 117; 385 in the TTS /
cascaded subset), `rubrics.csv` (1,712 rubric items), `verdicts/` (20 model × output-modality
systems of Table 2), `tts/` (the 10 systems of Table 4 on TTS audio), `cascaded/` (the 6 ASR +
LLM systems of Table 5), `human_labels.csv` and `judge_labels.csv` (Table 3: 1,712 rubric items,
six judges), `response_lengths.csv` (Figure 9) and `CALIBRATION.md` (the calibration report).
"""


# ----------------------------------------------------------------------------- calibration report
def _grim(value: float, n: int) -> bool:
    """Can ``value`` (percent, printed with 2 decimals) be ``100 k / n`` for an integer ``k``?"""
    k = round(value * n / 100)
    return abs(100 * k / n - value) <= 0.005 + 1e-9


def inconsistencies(pub: pd.DataFrame | None = None) -> pd.DataFrame:
    """The AMC paper's own inconsistencies, found by checks on its printed numbers.

    Columns ``where``, ``printed``, ``consistent_value``, ``note``.  Checks: every Table 2 APR
    is an integer count over 452 tasks or over the axis (Table 2's axis sizes IM 132, IR 120,
    SC 83, VE 117); per-axis counts add up to the overall count; Table 1's axis sizes;
    the averages quoted in §3.1-3.2 against the means of Table 2's columns.
    """
    pub = _targets() if pub is None else pub
    t2 = pub[pub["artifact"] == "amc_table2"].pivot(index="row", columns="column", values="value")
    rows = [{"where": "Table 1 (Self Coherence, Voice Editing)", "printed": "117, 83", "consistent_value": "83, 117",
             "note": "Table 1 swaps the two axis sizes: Table 2's per-axis APRs are counts over SC 83 and VE 117 "
                     "(40.96 = 34/83, 49.57 = 58/117)."}]
    n_all = sum(AXIS_TASKS.values())
    for row, r in t2.iterrows():
        for col in ("APR",) + AXES:
            n = n_all if col == "APR" else AXIS_TASKS[col]
            if not _grim(r[col], n):
                total = round(r["APR"] * n_all / 100)
                others = sum(round(r[a] * AXIS_TASKS[a] / 100) for a in AXES if a != col)
                k = total - others
                rows.append({"where": f"Table 2, {row}, {col}", "printed": f"{r[col]:g}",
                             "key": ("amc_table2", row, col),
                             "consistent_value": f"{100 * k / n:.2f}",
                             "note": f"no count over {n} tasks gives {r[col]:g}; the overall APR ({total}/{n_all}) "
                                     f"minus the other axes leaves {k}/{n} = {100 * k / n:.2f}"})
    _, counts, _ = _table2_counts(pub)  # per-axis counts, a misprinted cell corrected by the overall count
    means = {c: float(np.mean([100 * k[c] / AXIS_TASKS[c] for k in counts.values()])) for c in AXES}
    quoted = {"VE": 17.99, "IM": 21.55, "IR": 25.08}
    for c, q in quoted.items():
        printed_mean = float(t2[c].mean())
        if abs(printed_mean - q) > 0.005 + 1e-9:
            rows.append({"where": f"§3.1/3.2 mean {c} APR over the 20 systems", "printed": f"{q:.2f}",
                         "consistent_value": f"{printed_mean:.3f} (mean of printed cells); {means[c]:.3f} (of counts)",
                         "note": "the quoted mean agrees with the corrected cell, not with the printed one"
                                 if abs(means[c] - q) <= 0.005 else "the quoted mean disagrees with Table 2"})
    return pd.DataFrame(rows, columns=["where", "printed", "consistent_value", "note", "key"])


def known_misprints() -> set:
    """``(artifact, row, column)`` of published numbers that :func:`inconsistencies` shows to be
    misprints (no release can reproduce them); ``synth --check`` does not fail on these."""
    return {k for k in inconsistencies()["key"] if isinstance(k, tuple)}


def calibration_report(path, *, n_boot: int = 0) -> pd.DataFrame:
    """Every published AMC number next to the number recomputed from the release at ``path``
    (``reproduction.csv`` columns of :mod:`voxmem_analysis.reproduce.scoreboard`)."""
    return reproduction_table(load_amc(path), _targets(), n_boot=n_boot)


def _md(x) -> str:
    return str(x).replace("|", "\\|")


def calibration_markdown(path) -> str:
    """``CALIBRATION.md``: the calibration report and the paper's inconsistencies as Markdown."""
    rep = calibration_report(path)
    inc = inconsistencies()
    ok = int(rep["within_tolerance"].sum())
    lines = ["# Calibration report — SYNTHETIC Audio MultiChallenge release", "",
             f"{ok} of {len(rep)} published AMC numbers (Tables 2-5, `amc_*` rows of "
             "`data/paper/published.csv`) are reproduced from this folder within their tolerance "
             "(0.05 pp for percentages, 0.0005 for kappa and macro F1).", ""]
    off = rep[~rep["within_tolerance"]]
    if len(off):
        lines += ["Outside tolerance (each explained below as an inconsistency of the paper):", "",
                  "| artifact | row | column | published | reproduced |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {r.artifact} | {_md(r.row)} | {r.column} | {r.published:g} | {r.reproduced:.4g} |"
                  for r in off.itertuples(index=False)]
        lines.append("")
    lines += ["## Inconsistencies in the paper", "", "| where | printed | consistent value | note |",
              "| --- | --- | --- | --- |"]
    lines += [f"| {_md(r.where)} | {r.printed} | {_md(r.consistent_value)} | {_md(r.note)} |"
              for r in inc.itertuples(index=False)]
    lines += ["", "## Not calibrated", "",
              "Figures 5-9 print no table; the numbers quoted in their text (Figure 5's 36.5 % relative "
              "ARS drop, Figure 8b's bins, the IR ARS of 46.11 %) come out of the construction and are "
              "not matched.  Per-system TTS and cascaded ARS are not published and not calibrated.", "",
              "## All numbers", "", "| artifact | row | column | published | reproduced | within |",
              "| --- | --- | --- | --- | --- | --- |"]
    lines += [f"| {r.artifact} | {_md(r.row)} | {r.column} | {r.published:g} | {r.reproduced:.4f} | "
              f"{'yes' if r.within_tolerance else 'NO'} |" for r in rep.itertuples(index=False)]
    return "\n".join(lines) + "\n"
