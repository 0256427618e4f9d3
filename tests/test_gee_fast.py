"""The vectorised exchangeable logistic GEE (voxmem_analysis.stats.gee) against statsmodels' GEE.

statsmodels (``GEE(..., family=Binomial(), cov_struct=Exchangeable()).fit()``) is the reference:
parameters, robust standard errors, p-values and the working correlation must agree to 1e-6
relative, on random data and on the fits ``scaling_model`` makes on data/synthetic.
"""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from voxmem_analysis.analysis import scaling_model as SM
from voxmem_analysis.stats import StatsInputError
from voxmem_analysis.stats.gee import doubling_slope, exchangeable_logit_gee, model_design

from conftest import SYNTHETIC

RTOL = 1e-6
FIELDS = ["log_or", "robust_se", "odds_ratio", "or_ci_low", "or_ci_high", "p_value", "working_corr"]


def _statsmodels(y, X, groups, **fit_kw):
    import statsmodels.api as sm

    model = sm.GEE(np.asarray(y, float), X, groups=np.asarray(groups), family=sm.families.Binomial(),
                   cov_struct=sm.cov_struct.Exchangeable())
    return model.fit(**fit_kw)


def _assert_same_fit(ours, ref) -> None:
    np.testing.assert_allclose(ours.params, np.asarray(ref.params), rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(ours.bse, np.asarray(ref.bse), rtol=RTOL, atol=1e-12)
    np.testing.assert_allclose(ours.pvalues, np.asarray(ref.pvalues), rtol=RTOL, atol=1e-300)
    assert ours.working_corr == pytest.approx(float(ref.cov_struct.dep_params), rel=RTOL, abs=1e-12)
    assert ours.converged == bool(ref.converged)


def _random_frame(seed: int, n_clusters: int, models: tuple[str, ...], sign: int,
                  fixed_half: float = 0.5) -> pd.DataFrame:
    """Clusters of unequal size (1..9 rows), rows shuffled. ``sign=+1``: a shared cluster effect
    (positive within-cluster correlation); ``sign=-1``: in half of the clusters the successes are a
    fixed half of the rows, drawn without replacement (negative correlation), independent coin
    flips in the others (share of the first kind: *fixed_half*)."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in range(n_clusters):
        n = int(rng.integers(1, 10))
        model = rng.choice(models, size=n)
        x = rng.integers(0, 4, size=n).astype(float)
        if sign > 0:
            eta = 0.3 - 0.25 * x + rng.normal(0, 1.5) + 0.3 * (model == models[-1])
            y = rng.random(n) < 1 / (1 + np.exp(-eta))
        elif rng.random() < fixed_half:
            y = rng.permutation(np.arange(n) < n // 2 + (rng.random() < 0.5) * (n % 2))
        else:
            y = rng.random(n) < 0.5
        rows += [(f"c{(c * 7919) % 1000:03d}", m, xi, bool(yi)) for m, xi, yi in zip(model, x, y)]
    df = pd.DataFrame(rows, columns=["question_id", "model", "doublings", "correct"])
    return df.sample(frac=1.0, random_state=seed).reset_index(drop=True)


# ----------------------------------------------------------------------------- (a) random data
@pytest.mark.parametrize("seed, sign", [(1, 1), (2, 1), (3, -1), (4, -1)])
def test_random_unequal_clusters_equal_statsmodels(seed, sign):
    df = _random_frame(seed, 150, ("m-a", "m-b", "m-c", "m-d"), sign)
    X, names = model_design(df["doublings"], df["model"])
    ours = exchangeable_logit_gee(df["correct"], X, df["question_id"], names=names)
    ref = _statsmodels(df["correct"], X, df["question_id"])
    _assert_same_fit(ours, ref)
    assert ours.converged and ours.n_iter == len(ref.fit_history["params"])  # the same iterations
    assert np.sign(ours.working_corr) == sign  # the data were made to have this correlation sign
    assert ours.n_clusters == df["question_id"].nunique() == 150 and ours.n_obs == len(df)


def test_fit_doubling_gee_engines_agree_and_match_the_formula_fit():
    df = _random_frame(5, 120, ("z", "b", "k"), 1)
    ours, ref = (SM.fit_doubling_gee(df, engine=e) for e in ("numpy", "statsmodels"))
    for key in FIELDS:
        assert ours[key] == pytest.approx(ref[key], rel=RTOL), key
    assert {k: ours[k] for k in ("n_obs", "n_clusters", "n_models", "converged")} == \
        {k: ref[k] for k in ("n_obs", "n_clusters", "n_models", "converged")} == \
        {"n_obs": len(df), "n_clusters": 120, "n_models": 3, "converged": True}


def test_design_matches_patsy_treatment_coding():
    import patsy

    df = pd.DataFrame({"doublings": [0.0, 1, 2, 3, 0, 1], "model": ["b", "a", "c", "a", "c", "b"]})
    X, names = model_design(df["doublings"], df["model"])
    ref = patsy.dmatrix("doublings + C(model)", df, return_type="dataframe")
    assert set(names) == set(ref.columns) and names[:2] == ("Intercept", "doublings")
    np.testing.assert_array_equal(X, ref[list(names)].to_numpy())
    assert names[2:] == ("C(model)[T.b]", "C(model)[T.c]")  # "a", first in sorted order, is the reference


# ----------------------------------------------------------------------------- (b) data/synthetic
@pytest.fixture(scope="module")
def synthetic_fits():
    """Every frame ``scaling_model`` passes to ``fit_doubling_gee`` on data/synthetic (item and family)."""
    from voxmem_analysis import load_release

    release = load_release(SYNTHETIC)
    captured = []
    real = SM.fit_doubling_gee

    def spy(data, **kw):
        captured.append((data, kw))
        return real(data, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(SM, "fit_doubling_gee", spy)
        for cluster in ("item", "family"):
            SM.scaling_model.__wrapped__(release, cluster=cluster)  # unwrapped: no memo
    return captured


def test_synthetic_scaling_model_inputs_equal_statsmodels(synthetic_fits):
    import statsmodels.formula.api as smf
    import statsmodels.api as sm

    assert [kw["groups"] for _, kw in synthetic_fits] == ["question_id"] * 5 + ["family"] * 5
    for data, kw in synthetic_fits:
        g = kw["groups"]
        ours, ref = (SM.fit_doubling_gee(data, groups=g, engine=e) for e in ("numpy", "statsmodels"))
        for key in FIELDS:
            assert ours[key] == pytest.approx(ref[key], rel=RTOL), (g, key)
        assert ours["converged"] and ref["converged"]
        # every coefficient, by patsy's name, against the formula fit
        df = data.assign(correct=data["correct"].astype(float)).sort_values([g, "model", "doublings"],
                                                                          kind="stable")
        X, names = model_design(df["doublings"], df["model"])
        fit = exchangeable_logit_gee(df["correct"], X, df[g], names=names)
        res = smf.gee("correct ~ doublings + C(model)", groups=g, data=df, family=sm.families.Binomial(),
                      cov_struct=sm.cov_struct.Exchangeable()).fit()
        np.testing.assert_allclose(fit.params, res.params[list(names)].to_numpy(), rtol=RTOL)
        np.testing.assert_allclose(fit.bse, res.bse[list(names)].to_numpy(), rtol=RTOL)


# ----------------------------------------------------------------------------- (c), (d) shapes
def test_single_model_has_no_dummies_and_equals_statsmodels():
    df = _random_frame(7, 80, ("only",), 1)
    X, names = model_design(df["doublings"], df["model"])
    assert names == ("Intercept", "doublings") and X.shape == (len(df), 2)
    _assert_same_fit(exchangeable_logit_gee(df["correct"], X, df["question_id"]),
                     _statsmodels(df["correct"], X, df["question_id"]))
    ours, ref = (SM.fit_doubling_gee(df, engine=e) for e in ("numpy", "statsmodels"))
    assert ours["n_models"] == ref["n_models"] == 1
    for key in FIELDS:
        assert ours[key] == pytest.approx(ref[key], rel=RTOL), key


def test_clusters_of_size_one():
    df = _random_frame(8, 60, ("a", "b"), 1)
    singles = pd.DataFrame({"question_id": ["solo1", "solo2"], "model": ["a", "b"], "doublings": [3.0, 0.0],
                            "correct": [True, False]})
    df = pd.concat([df, singles], ignore_index=True)
    X, names = model_design(df["doublings"], df["model"])
    _assert_same_fit(exchangeable_logit_gee(df["correct"], X, df["question_id"]),
                     _statsmodels(df["correct"], X, df["question_id"]))


def test_all_clusters_of_size_one_keep_rho_zero():
    rng = np.random.default_rng(9)
    n = 300
    x, y = rng.integers(0, 4, n).astype(float), rng.random(n) < 0.6
    X, _ = model_design(x, rng.choice(["a", "b", "c"], n))
    ours = exchangeable_logit_gee(y, X, np.arange(n))
    assert ours.working_corr == 0.0  # statsmodels never updates it (no pairs)
    _assert_same_fit(ours, _statsmodels(y, X, np.arange(n)))


# ----------------------------------------------------------------------------- (e) degenerate input
@pytest.mark.parametrize("value", [True, False])
def test_constant_outcome_behaves_as_before(value):
    """All correct (or all wrong) in one evidence type: the slope is not identified.  As with
    statsmodels, log OR 0 and converged=True; the robust SE, CI and p are NaN (statsmodels' SE
    there is rounding noise: NaN, ~1e-12 or ~1e-4 depending on the data, so it is not compared)."""
    df = _random_frame(10, 40, ("a", "b", "c"), 1).assign(correct=value)
    ours, ref = (SM.fit_doubling_gee(df, engine=e) for e in ("numpy", "statsmodels"))
    assert ours["log_or"] == pytest.approx(0.0, abs=1e-6) and ref["log_or"] == pytest.approx(0.0, abs=1e-6)
    assert ours["working_corr"] == pytest.approx(ref["working_corr"], rel=RTOL)
    for key in ("robust_se", "or_ci_low", "or_ci_high", "p_value"):
        assert np.isnan(ours[key]), key
    assert ours["converged"] is True and ref["converged"] is True


def test_diverging_fit_is_not_converged():
    """Every cluster with exactly half successes: a working correlation below -1/(n-1) for the
    largest clusters, the Fisher-scoring steps diverge.  statsmodels' ``results.converged`` is
    False and so is ours (the score is NaN; the old warning-based flag missed that case)."""
    df = _random_frame(1, 150, ("m-a", "m-b", "m-c", "m-d"), -1, fixed_half=1.0)
    X, _ = model_design(df["doublings"], df["model"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # overflow in exp, as in statsmodels
        ours = exchangeable_logit_gee(df["correct"], X, df["question_id"])
        ref = _statsmodels(df["correct"], X, df["question_id"])
        summary = SM.fit_doubling_gee(df)
    assert not ours.converged and not ref.converged and ours.n_iter == 60
    assert not np.isfinite(ours.params).all() and not np.isfinite(np.asarray(ref.params)).all()
    assert summary["converged"] is False


def test_iteration_limit_is_reported_as_not_converged():
    from statsmodels.tools.sm_exceptions import IterationLimitWarning

    # maxiter=2: the first step starts at the GLM fit with rho = 0, where the score is ~0 already
    df = _random_frame(11, 100, ("a", "b"), 1)
    X, _ = model_design(df["doublings"], df["model"])
    ours = exchangeable_logit_gee(df["correct"], X, df["question_id"], maxiter=2)
    with pytest.warns(IterationLimitWarning):
        ref = _statsmodels(df["correct"], X, df["question_id"], maxiter=2)
    assert not ours.converged and not ref.converged and ours.n_iter == 2
    np.testing.assert_allclose(ours.params, np.asarray(ref.params), rtol=RTOL)
    assert ours.score_norm == pytest.approx(float(ref.score_norm), rel=RTOL)


def test_bad_input_is_a_clear_error():
    X, _ = model_design([0.0, 1.0, 2.0], ["a", "a", "b"])
    with pytest.raises(StatsInputError, match="0/1"):
        exchangeable_logit_gee([0, 2, 1], X, ["g", "g", "h"])
    with pytest.raises(StatsInputError, match="no cluster label"):
        exchangeable_logit_gee([0, 1, 1], X, pd.Series(["g", None, "h"], dtype="string"))
    with pytest.raises(StatsInputError, match="same length"):
        exchangeable_logit_gee([0, 1], X, ["g", "g"])
    with pytest.raises(ValueError, match="engine"):
        SM.fit_doubling_gee(pd.DataFrame({"correct": [1], "doublings": [0.0], "model": ["a"],
                                          "question_id": ["q"]}), engine="R")


def test_row_order_does_not_matter():
    df = _random_frame(12, 50, ("a", "b"), 1)
    direct = doubling_slope(df, groups="question_id")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning on ordinary data
        via = SM.fit_doubling_gee(df)
    for key in FIELDS:
        assert direct[key] == pytest.approx(via[key], rel=1e-9), key
