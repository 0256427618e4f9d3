"""Vectorised logistic GEE with an exchangeable working correlation (the context-length model).

:func:`exchangeable_logit_gee` is statsmodels' ``GEE(family=Binomial(), cov_struct=Exchangeable()).fit()`` step
for step (a GLM start by IRLS; Fisher scoring, at most 60 steps, converged below a score norm of 1e-6 after one
update of ``rho``; ``rho`` by moments; robust sandwich covariance; Wald p-values), every per-cluster sum at once:
a cluster of size ``n`` has the inverse working correlation ``(I - rho / (1 - rho + n rho) J) / (1 - rho)``.
``tests/test_gee_fast.py`` checks it against statsmodels to 1e-6 relative.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from voxmem_analysis.stats._validation import StatsInputError
from voxmem_analysis.stats.resampling import one_blas_thread

__all__ = ["ExchangeableGEE", "exchangeable_logit_gee", "model_design", "doubling_slope"]

_EPS = np.finfo(float).eps


@dataclass(frozen=True)
class ExchangeableGEE:
    """Result of :func:`exchangeable_logit_gee` (arrays in the column order of the design)."""

    names: tuple[str, ...]
    params: np.ndarray
    cov_robust: np.ndarray
    working_corr: float
    score_norm: float
    n_iter: int
    converged: bool
    n_obs: int
    n_clusters: int

    @property
    def bse(self) -> np.ndarray:
        """Robust standard errors (NaN where the fit has none: a separated design)."""
        with np.errstate(invalid="ignore"):
            return np.sqrt(np.diag(self.cov_robust))

    @property
    def pvalues(self) -> np.ndarray:
        """Two-sided Wald p-values (normal reference; NaN without a standard error)."""
        from scipy.stats import norm

        with np.errstate(divide="ignore", invalid="ignore"):
            return 2 * norm.sf(np.abs(self.params / self.bse))


# ----------------------------------------------------------------------------- design
def model_design(doublings, models) -> tuple[np.ndarray, tuple[str, ...]]:
    """Design matrix of ``1 + doublings + C(model)``: intercept, ``doublings``, a 0/1 column per model but the first
    in sorted order (patsy's reference level)."""
    x = np.asarray(doublings, dtype=float)
    levels, codes = np.unique(np.asarray(models, dtype=object).astype(str), return_inverse=True)
    dummies = (codes[:, None] == np.arange(1, len(levels))[None, :]).astype(float)
    X = np.column_stack([np.ones_like(x), x, dummies])
    names = ("Intercept", "doublings") + tuple(f"C(model)[T.{lv}]" for lv in levels[1:])
    return X, names


# ----------------------------------------------------------------------------- pieces
def _logistic(lin: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean, d(mean)/d(linear predictor) and the Binomial standard deviation (statsmodels' formulas)."""
    with np.errstate(invalid="ignore", over="ignore"):   # a separated design drives lin to +-inf: mu 0 or 1
        mu = 1.0 / (1.0 + np.exp(-lin))
        t = np.exp(lin)
        dmu = t / (1 + t) ** 2
    p = np.clip(mu, _EPS, 1 - _EPS)
    return mu, dmu, np.sqrt(p * (1 - p))


def _binomial_deviance(y: np.ndarray, mu: np.ndarray) -> float:
    a = np.clip(y / (mu + 1e-20), _EPS, np.inf)
    b = np.clip((1.0 - y) / (1.0 - mu + 1e-20), _EPS, np.inf)
    return float(np.sum(2 * (y * np.log(a) + (1 - y) * np.log(b))))


def _glm_start(y: np.ndarray, X: np.ndarray, maxiter: int = 100, tol: float = 1e-8) -> np.ndarray:
    """Logistic GLM by IRLS, the start of statsmodels' GEE (``GLM(...).fit()`` defaults)."""
    mu = (y + 0.5) / 2
    p = np.clip(mu, _EPS, 1 - _EPS)
    lin = np.log(p / (1 - p))
    dev = _binomial_deviance(y, mu)
    for _ in range(maxiter):
        p = np.clip(mu, _EPS, 1 - _EPS)
        deriv = 1.0 / (p * (1 - p))
        w = 1.0 / (deriv ** 2 * (p * (1 - p)))
        z = lin + deriv * (y - mu)
        if not (np.all(np.isfinite(w)) and np.all(np.isfinite(z))):
            raise StatsInputError("GEE start (logistic GLM): non-finite working weights or response")
        sw = np.sqrt(w)
        wx, wz = sw[:, None] * X, sw * z
        params = np.linalg.lstsq(wx, wz, rcond=None)[0]
        lin = X @ params
        with np.errstate(over="ignore"):   # separation: mu reaches 0 or 1, as statsmodels' GLM start
            mu = 1.0 / (1.0 + np.exp(-lin))
        new_dev = _binomial_deviance(y, mu)
        done = np.allclose(dev, new_dev, atol=tol, rtol=0.0)
        dev = new_dev
        if done:
            break
    return np.linalg.pinv(wx) @ wz


class _Clusters:
    """Cluster codes and sizes; per-cluster row sums by one ``np.add.reduceat`` over rows ordered by cluster."""

    def __init__(self, groups) -> None:
        codes, _ = pd.factorize(pd.Series(np.asarray(groups, dtype=object)), sort=True)
        if (codes < 0).any():
            raise StatsInputError(f"GEE: {int((codes < 0).sum())} observation(s) have no cluster label")
        self.sizes = np.bincount(codes).astype(float)
        self.k = len(self.sizes)
        self.order = None if np.all(codes[1:] >= codes[:-1]) else np.argsort(codes, kind="stable")
        self.starts = np.concatenate([[0], np.cumsum(self.sizes[:-1])]).astype(np.intp)

    def sum(self, values: np.ndarray) -> np.ndarray:
        rows = values if self.order is None else values[self.order]
        return np.add.reduceat(rows, self.starts, axis=0)


def _moments(X: np.ndarray, y: np.ndarray, params: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``d_ij / sd_ij`` (mean derivative over the Binomial SD) and Pearson residuals ``e_ij``."""
    mu, dmu, sd = _logistic(X @ params)
    return X * (dmu / sd)[:, None], (y - mu) / sd


def _cluster_terms(cl: _Clusters, a: np.ndarray, e: np.ndarray, rho: float) -> tuple[np.ndarray, np.ndarray]:
    """``B = sum_i D_i' V_i^-1 D_i`` and the cluster scores ``u_i`` (rows), ``R_i^-1 = [I - c_i J] / (1 - rho)``."""
    c = rho / (1.0 - rho) / (1.0 + rho * (cl.sizes - 1))
    a_sum, e_sum = cl.sum(a), cl.sum(e)
    bmat = a.T @ a / (1.0 - rho) - (a_sum * c[:, None]).T @ a_sum
    u = cl.sum(a * e[:, None]) / (1.0 - rho) - a_sum * (c * e_sum)[:, None]
    return bmat, u


def _exchangeable_rho(cl: _Clusters, e: np.ndarray, ddof: int) -> float:
    """statsmodels' ``Exchangeable.update``: moment estimate of the common within-cluster correlation."""
    n = len(e)
    ssr = cl.sum(e * e)
    scale = ssr.sum() / (n * (n - ddof) / float(n))
    pair_sum = np.sum((cl.sum(e) ** 2 - ssr) / 2) / scale
    n_pairs = float(np.sum(0.5 * cl.sizes * (cl.sizes - 1)))
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.float64(pair_sum) / (n_pairs * (n_pairs - ddof) / n_pairs))


def _solve(bmat: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    try:
        return np.linalg.solve(bmat, rhs)
    except np.linalg.LinAlgError:
        return np.linalg.pinv(bmat) @ rhs


# ----------------------------------------------------------------------------- the fit
def exchangeable_logit_gee(y, X, groups, *, names: tuple[str, ...] | None = None, maxiter: int = 60,
                           ctol: float = 1e-6) -> ExchangeableGEE:
    """Logistic GEE with an exchangeable working correlation and robust covariance (statsmodels' algorithm).

    ``X``: the design (:func:`model_design`), ``groups``: a cluster label per row, ``names``: of the columns of
    ``X`` (default ``x0 ..``), ``maxiter``, ``ctol``: statsmodels' ``GEE.fit`` limits.  ``converged`` is false
    when the limit is reached with a score norm >= ``ctol`` or the score is not finite; with one outcome for all
    rows the slopes are not identified and the covariance is NaN.
    """
    y = np.asarray(y, dtype=float)
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or len(y) != len(X) or len(np.asarray(groups)) != len(y):
        raise StatsInputError(f"GEE: y ({len(y)}), X {X.shape} and groups must have the same length")
    if len(y) == 0 or not np.all((y == 0) | (y == 1)):
        raise StatsInputError("GEE: y must be a non-empty vector of 0/1")
    with one_blas_thread():
        return _fit(y, X, _Clusters(groups), names, maxiter, ctol)


def _fit(y: np.ndarray, X: np.ndarray, cl: _Clusters, names, maxiter: int, ctol: float) -> ExchangeableGEE:
    """The iteration of :func:`exchangeable_logit_gee` (arguments checked)."""
    ddof = X.shape[1]
    update_dep = bool(cl.sizes.max() > 1)
    params = _glm_start(y, X)
    rho, score_norm, n_updates, n_iter = 0.0, -1.0, 0, 0
    a, e = _moments(X, y, params)
    for n_iter in range(1, maxiter + 1):
        bmat, u = _cluster_terms(cl, a, e, rho)
        score = u.sum(axis=0)
        params = params + _solve(bmat, score)
        a, e = _moments(X, y, params)
        score_norm = float(np.sqrt(np.sum(score ** 2)))
        if score_norm < ctol and (n_updates > 0 or not update_dep):
            break
        if update_dep:
            rho = _exchangeable_rho(cl, e, ddof)
            n_updates += 1
    bmat, u = _cluster_terms(cl, a, e, rho)
    try:
        bmati = np.linalg.inv(bmat)
    except np.linalg.LinAlgError:
        bmati = np.linalg.pinv(bmat)
    cov = bmati @ (u.T @ u) @ bmati
    if y.min() == y.max():  # a constant outcome identifies nothing: the sandwich is rounding noise
        cov = np.full_like(cov, np.nan)
    return ExchangeableGEE(names=tuple(names) if names is not None else tuple(f"x{j}" for j in range(ddof)),
                           params=params, cov_robust=cov, working_corr=rho, score_norm=score_norm,
                           n_iter=n_iter, converged=bool(score_norm < ctol), n_obs=len(y), n_clusters=cl.k)


def doubling_slope(data: pd.DataFrame, *, groups: str = "question_id", ci_level: float = 0.95) -> dict:
    """Fit ``correct ~ doublings + C(model)`` (clusters ``groups``, rows in the order given) and summarise the
    ``doublings`` slope: the dict of :func:`voxmem_analysis.analysis.scaling_model.fit_doubling_gee`."""
    from scipy.stats import norm

    X, names = model_design(data["doublings"].to_numpy(), data["model"].to_numpy())
    res = exchangeable_logit_gee(data["correct"].to_numpy(dtype=float), X, data[groups].to_numpy(), names=names)
    b, se, p = float(res.params[1]), float(res.bse[1]), float(res.pvalues[1])
    z = float(norm.ppf(0.5 + ci_level / 2))
    return {"n_obs": res.n_obs, "n_clusters": res.n_clusters, "n_models": X.shape[1] - 1,
            "log_or": b, "robust_se": se, "odds_ratio": float(np.exp(b)), "or_ci_low": float(np.exp(b - z * se)),
            "or_ci_high": float(np.exp(b + z * se)), "p_value": p, "working_corr": float(res.working_corr),
            "converged": res.converged}
