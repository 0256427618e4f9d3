"""Steps 1 and 2 of the synthetic error attribution: the class counts per system x evidence x subtype.

(1) the subtype x evidence x class counts are fitted to both published margins of Table 20 by
iterative proportional fitting and rounded with a max-flow (exact margins); (2) a seeded
simulated annealing distributes them over the systems with count-preserving moves (move a
unit to another system; swap two classes between systems; a 2 x 2 cycle over evidence type
x subtype), minimising the misfit of the Cells column, the macro targets and bounds, plus a
weak pull toward each system's refusal propensity and toward the fitted table.
Entry point: :func:`solve_counts`.
"""
from __future__ import annotations

import math

import numpy as np

from voxmem_analysis import taxonomy as tx
from voxmem_analysis.analysis import attribution as A
from voxmem_analysis.synth.attribution_targets import (CLASSES, EVS, MACRO_BOUNDS, MACRO_TARGETS, OPS, SOLVER_TOL, SPK, SUBS, TARGETS,
                                                       TABLE20_CELLS, TABLE20_COUNTS, TABLE20_EVIDENCE)

__all__ = ["solve_counts", "group_index"]


# ----------------------------------------------------------------------------- step 1: subtype x evidence x class
def _allowed() -> np.ndarray:
    """Structural zeros: binding outside the cue-keyed subtypes only through another speaker (speaker items)."""
    ok = np.ones((len(EVS), len(SUBS), len(CLASSES)), bool)
    b = CLASSES.index("binding")
    for j, s in enumerate(SUBS):
        if s not in tx.CUE_KEYED_SUBTYPES:
            for i, e in enumerate(EVS):
                if e != SPK:
                    ok[i, j, b] = False
    return ok


def _maxflow_round(X: np.ndarray, rows: np.ndarray, cols: np.ndarray, allowed: np.ndarray) -> np.ndarray:
    """Integer matrix with the given row/column sums, within one unit of X (controlled rounding)."""
    F = np.floor(X + 1e-9).astype(int)
    F = np.where(allowed, F, 0)
    rdef = rows - F.sum(1)
    cdef = cols - F.sum(0)
    if (rdef < 0).any() or (cdef < 0).any():
        raise RuntimeError("rounding: floor exceeds a margin")
    frac = X - F
    R, C = X.shape
    # bipartite b-matching rows->cols, edge capacity 1, preferring large fractional parts
    edges = sorted(((frac[i, j], i, j) for i in range(R) for j in range(C) if allowed[i, j]), reverse=True)
    flow = np.zeros((R, C), int)
    rleft, cleft = rdef.copy(), cdef.copy()
    for _, i, j in edges:
        if rleft[i] > 0 and cleft[j] > 0 and flow[i, j] == 0:
            flow[i, j] = 1
            rleft[i] -= 1
            cleft[j] -= 1
    # augmenting paths for what the greedy pass left over
    while rleft.sum() > 0:
        src = [i for i in range(R) if rleft[i] > 0]
        prev: dict = {("r", i): None for i in src}
        queue = [("r", i) for i in src]
        end = None
        while queue and end is None:
            node = queue.pop(0)
            kind, k = node
            if kind == "r":
                for j in range(C):
                    if allowed[k, j] and flow[k, j] == 0 and ("c", j) not in prev:
                        prev[("c", j)] = node
                        if cleft[j] > 0:
                            end = ("c", j)
                            break
                        queue.append(("c", j))
            else:
                for i in range(R):
                    if flow[i, k] == 1 and ("r", i) not in prev:
                        prev[("r", i)] = node
                        queue.append(("r", i))
        if end is None:
            raise RuntimeError("rounding: no integer table with these margins")
        node = end
        while prev[node] is not None:
            p = prev[node]
            if p[0] == "r":
                flow[p[1], node[1]] = 1
            else:
                flow[node[1], p[1]] = 0
            node = p
        rleft[node[1]] -= 1
        cleft[end[1]] -= 1
    return F + flow


def _fit_table(I_es: np.ndarray, t_sub: np.ndarray, t_ev: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """IPF of availability to both Table 20 margins, then exact integer rounding. Returns (real, integer)."""
    allowed = _allowed() & (t_sub[None, :, :] > 0) & (t_ev[:, None, :] > 0)
    X = I_es[:, :, None] * allowed.astype(float)
    for _ in range(500):
        s = X.sum(0)
        X *= np.divide(t_sub, s, out=np.zeros_like(s), where=s > 0)[None]
        e = X.sum(1)
        X *= np.divide(t_ev, e, out=np.zeros_like(e), where=e > 0)[:, None, :]
        if np.abs(X.sum(0) - t_sub).max() < 1e-7:
            break
    T = np.zeros(X.shape, int)
    for c in range(len(CLASSES)):
        T[:, :, c] = _maxflow_round(X[:, :, c], t_ev[:, c], t_sub[:, c], allowed[:, :, c])
    return X, T


# ----------------------------------------------------------------------------- step 2: over systems
_W_CELLS, _W_HARD, _W_PULL, _W_SHARE, _W_TABLE, _SHARE_BAND = 30.0, 10.0, 0.05, 400.0, 0.02, 0.05


class _State:
    """Counts n[model, evidence, subtype, class] with incrementally maintained macro averages.

    For each grouping (subtype, operation, evidence type) the sum of the class proportions
    over qualifying cells (>= MIN_ERRORS errors) and their number are kept up to date, so a
    move touching a few cells costs a few dozen float operations.
    """

    def __init__(self, n: np.ndarray, I: np.ndarray, share_target: np.ndarray, t_ref: np.ndarray):
        self.M, self.E, self.S, self.C = n.shape
        self.n = n.astype(int).tolist()            # nested lists [m][e][s][c]
        self.I = I.tolist()
        self.op_of = [OPS.index(tx.SUBTYPE_OPERATION[s]) for s in SUBS]
        self.O = len(OPS)
        self.share_target = share_target.tolist()
        self.I_m = [max(float(x), 1.0) for x in I.sum((1, 2))]
        self.t_ref = t_ref.tolist()
        self.cells_target = [TABLE20_CELLS[s] for s in SUBS]
        self.macro = [(g, group_index(g, k), CLASSES.index(c), t) for g, k, c, t in MACRO_TARGETS]
        self.bounds = [(g, group_index(g, k), CLASSES.index(c), t, TARGETS["tolerance"][g, k, c])
                       for g, k, c, t in MACRO_BOUNDS]
        M, E, S, C, O = self.M, self.E, self.S, self.C, self.O
        self.A = [[[sum(self.n[m][e][s]) for s in range(S)] for e in range(E)] for m in range(M)]
        self.Nop = [[[[sum(self.n[m][e][s][c] for s in range(S) if self.op_of[s] == o) for c in range(C)]
                      for o in range(O)] for e in range(E)] for m in range(M)]
        self.Nev = [[[sum(self.n[m][e][s][c] for s in range(S)) for c in range(C)] for e in range(E)] for m in range(M)]
        self.Am = [sum(sum(self.A[m][e]) for e in range(E)) for m in range(M)]
        self.T = n.sum(0).astype(float).tolist()
        self.tpen = sum(((self.T[e][s][c] - self.t_ref[e][s][c]) ** 2) / (self.t_ref[e][s][c] + 2.0)
                        for e in range(E) for s in range(S) for c in range(C))
        self.sum = {"subtype": [[0.0] * C for _ in range(S)], "operation": [[0.0] * C for _ in range(O)],
                    "evidence_type": [[0.0] * C for _ in range(E)]}
        self.k = {"subtype": [0] * S, "operation": [0] * O, "evidence_type": [0] * E}
        for m in range(M):
            for e in range(E):
                for s_ in range(S):
                    self._contrib("subtype", s_, self.n[m][e][s_], +1)
                for o in range(O):
                    self._contrib("operation", o, self.Nop[m][e][o], +1)
                self._contrib("evidence_type", e, self.Nev[m][e], +1)

    def _contrib(self, grouping: str, g: int, counts: list, sign: int) -> None:
        tot = sum(counts)
        if tot >= A.MIN_ERRORS:
            acc = self.sum[grouping][g]
            for c, x in enumerate(counts):
                acc[c] += sign * x / tot
            self.k[grouping][g] += sign

    def apply(self, changes) -> None:
        sub_cells = {(m, e, s) for (m, e, s, _), _ in changes}
        op_cells = {(m, e, self.op_of[s]) for (m, e, s) in sub_cells}
        ev_cells = {(m, e) for (m, e, _) in sub_cells}
        for m, e, s in sub_cells:
            self._contrib("subtype", s, self.n[m][e][s], -1)
        for m, e, o in op_cells:
            self._contrib("operation", o, self.Nop[m][e][o], -1)
        for m, e in ev_cells:
            self._contrib("evidence_type", e, self.Nev[m][e], -1)
        for (m, e, s, c), d in changes:
            self.n[m][e][s][c] += d
            self.A[m][e][s] += d
            self.Nop[m][e][self.op_of[s]][c] += d
            self.Nev[m][e][c] += d
            self.Am[m] += d
            t, r = self.T[e][s][c], self.t_ref[e][s][c]
            self.tpen += (((t + d) - r) ** 2 - (t - r) ** 2) / (r + 2.0)
            self.T[e][s][c] = t + d
        for m, e, s in sub_cells:
            self._contrib("subtype", s, self.n[m][e][s], +1)
        for m, e, o in op_cells:
            self._contrib("operation", o, self.Nop[m][e][o], +1)
        for m, e in ev_cells:
            self._contrib("evidence_type", e, self.Nev[m][e], +1)

    def macro_value(self, grouping: str, g: int, c: int) -> float:
        k = self.k[grouping][g]
        return 100.0 * self.sum[grouping][g][c] / k if k else 0.0

    def value(self) -> tuple[float, float]:
        """(objective, misfit of the hard targets alone; 0 when all are met)."""
        hard = _W_CELLS * sum((k - t) ** 2 for k, t in zip(self.k["subtype"], self.cells_target))
        soft = _W_TABLE * self.tpen
        for g, k, c, t in self.macro:
            d = abs(self.macro_value(g, k, c) - t)
            if d > SOLVER_TOL:
                hard += _W_HARD * (d - SOLVER_TOL) ** 2
            soft += _W_PULL * d * d
        for g, k, c, t, tol in self.bounds:
            x = self.macro_value(g, k, c) - (t + tol - SOLVER_TOL)
            if x > 0:
                hard += _W_HARD * x * x
        for m in range(self.M):
            x = abs(self.Am[m] / self.I_m[m] - self.share_target[m]) - _SHARE_BAND
            if x > 0:
                soft += _W_SHARE * x * x
        return hard + soft, hard

    def array(self) -> np.ndarray:
        return np.array(self.n, dtype=int)


def _anneal(st: _State, allowed: np.ndarray, rnd, n_iter: int, t0: float = 2.0, t1: float = 0.005) -> float:
    """Simulated annealing with count-preserving moves, in place; returns the final hard misfit.

    Moves: (a) one unit to another system (same evidence, subtype, class); (b) two classes
    swapped between two systems (same evidence, subtype); (c) a 2 x 2 cycle over evidence x
    subtype for one class.  All keep both Table 20 margins; capacities are respected.
    """
    M, E, S, C = st.M, st.E, st.S, st.C
    n, I, A_ = st.n, st.I, st.A
    ok = allowed.tolist()
    cur, cur_hard = st.value()
    best, best_val, best_hard = st.array(), cur, cur_hard
    ratio = t1 / t0
    for it in range(n_iter):
        temp = t0 * ratio ** (it / max(n_iter - 1, 1))
        m1, e, s, c = rnd.randrange(M), rnd.randrange(E), rnd.randrange(S), rnd.randrange(C)
        if n[m1][e][s][c] == 0:
            continue
        r = rnd.random()
        if r < 0.4:
            m2 = rnd.randrange(M)
            if m2 == m1 or A_[m2][e][s] >= I[m2][e][s]:
                continue
            changes = (((m1, e, s, c), -1), ((m2, e, s, c), 1))
        elif r < 0.8:
            m2, c2 = rnd.randrange(M), rnd.randrange(C)
            if m2 == m1 or c2 == c or n[m2][e][s][c2] == 0:
                continue
            changes = (((m1, e, s, c), -1), ((m1, e, s, c2), 1), ((m2, e, s, c2), -1), ((m2, e, s, c), 1))
        else:
            e2, s2 = rnd.randrange(E), rnd.randrange(S)
            if e2 == e or s2 == s or not (ok[e][s2][c] and ok[e2][s][c]):
                continue
            m2, m3, m4 = rnd.randrange(M), rnd.randrange(M), rnd.randrange(M)
            if n[m3][e2][s2][c] == 0 or A_[m2][e][s2] >= I[m2][e][s2] or A_[m4][e2][s] >= I[m4][e2][s]:
                continue
            changes = (((m1, e, s, c), -1), ((m2, e, s2, c), 1), ((m3, e2, s2, c), -1), ((m4, e2, s, c), 1))
        st.apply(changes)
        new, new_hard = st.value()
        if new <= cur or rnd.random() < math.exp(-(new - cur) / temp):
            cur, cur_hard = new, new_hard
            if cur < best_val:
                best, best_val, best_hard = st.array(), cur, cur_hard
        else:
            st.apply(tuple((idx, -d) for idx, d in changes))
    # leave the best state in place
    cur_arr = st.array()
    diff = best - cur_arr
    if diff.any():
        st.apply(tuple(((int(m), int(e), int(s), int(c)), int(diff[m, e, s, c])) for m, e, s, c in zip(*np.nonzero(diff))))
    return best_hard


def solve_counts(I: np.ndarray, share_target: np.ndarray, rng: np.random.Generator, n_iter: int) -> np.ndarray:
    """Counts n[model, evidence, subtype, class] meeting Table 20 exactly and the macro targets."""
    import random

    t_sub = np.array([TABLE20_COUNTS[s] for s in SUBS], float)
    t_ev = np.array([TABLE20_EVIDENCE[e] for e in EVS], float)
    I_es = I.sum(0).astype(float)
    X, T = _fit_table(I_es, t_sub, t_ev)
    allowed = _allowed() & (t_sub[None, :, :] > 0) & (t_ev[:, None, :] > 0)
    over = T.sum(2) > I_es
    if over.any():
        raise ValueError("too few incorrect predictions for Table 20 in "
                         + ", ".join(f"{EVS[i]}/{SUBS[j]}" for i, j in zip(*np.nonzero(over))))
    M = I.shape[0]
    n = np.zeros(I.shape + (len(CLASSES),), int)
    for i in range(len(EVS)):
        for j in range(len(SUBS)):
            units = np.repeat(np.arange(len(CLASSES)), T[i, j])
            rng.shuffle(units)
            for c in units:
                room = I[:, i, j] - n[:, i, j].sum(1)
                w = np.where(room > 0, share_target * room, 0.0)
                m = rng.choice(M, p=w / w.sum())
                n[m, i, j, c] += 1
    st = _State(n, I, share_target, X)
    rnd = random.Random(int(rng.integers(2**62)))
    hard = _anneal(st, allowed, rnd, n_iter)
    for _ in range(8):              # reheat while a hard target is still missed
        if hard <= 0:
            break
        hard = _anneal(st, allowed, rnd, max(n_iter // 2, 1), t0=0.5)
    return st.array()


def group_index(by: str, group: str) -> int:
    return {"operation": OPS, "evidence_type": EVS, "subtype": SUBS}[by].index(group)
