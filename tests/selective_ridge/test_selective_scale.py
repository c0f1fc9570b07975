"""Selective ridge at extreme and mixed feature scales: fits, estimators and the selectivity
path complete and certify; the exact symmetries of (11) hold (bit for bit for powers of
two); the componentwise certificates cannot pass a wrong point; an independent solver
(cvxpy) agrees at moderate scales; the engines run with one BLAS thread."""

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selective_cases import make_degenerate
from threadpoolctl import threadpool_info, threadpool_limits

from pathlib_core.selective_ridge import (
    SelectiveRidgeClassifier,
    SelectiveRidgeRegressor,
    duality_gap,
    eeg_like,
    kkt_residuals,
    mu_0,
    selective_fit,
    selectivity_path,
)
from pathlib_core.selective_ridge import fit as fit_module
from pathlib_core.selective_ridge import path as path_module

LOSSES = ("squared", "hinge")


def _data(N, n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n))
    yr = X[:, :3] @ np.array([1.5, -1.0, 0.8]) + 0.3 * rng.standard_normal(N)
    yc = np.where(yr > np.median(yr), 1.0, -1.0)
    return X, yr, yc


def _column_scales(kind, n, seed):
    """The feature scales the issue tried: every column by 1e8 or 1e-8, or 1e-6..1e6."""
    if kind == "1e8":
        return np.full(n, 1e8)
    if kind == "1e-8":
        return np.full(n, 1e-8)
    return 10.0 ** np.random.default_rng(seed).uniform(-6, 6, n)


def _assert_certified(X, y, r, alpha, mu, loss, tol=1e-10):
    res = kkt_residuals(X, y, r.coef, r.intercept, r.dual, alpha=alpha, mu=mu, loss=loss)
    assert res["max"] <= tol
    assert abs(duality_gap(X, y, r.coef, r.intercept, r.dual, alpha=alpha, mu=mu,
                           loss=loss)) <= tol


# ---------------------------------------------------------------------------------------
# the failing cases of the issue
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", ["1e8", "1e-8", "mixed"])
@pytest.mark.parametrize("loss", LOSSES)
def test_extreme_feature_scales_fit_and_certify(scale, loss):
    X, yr, yc = _data(30, 60, 0)
    X = X * _column_scales(scale, 60, 1)
    y = yr if loss == "squared" else yc
    m0 = mu_0(X, y, alpha=1.0, loss=loss)
    for frac in (0.5, 0.1, 0.01, 1e-4):
        r = selective_fit(X, y, alpha=1.0, mu=frac * m0, loss=loss)
        _assert_certified(X, y, r, 1.0, frac * m0, loss)
        assert not r.info["rescued"]


@pytest.mark.parametrize("scale", ["1e8", "1e-8", "mixed"])
def test_extreme_feature_scales_estimators(scale):
    # the estimators' defaults (alpha = 1, mu = 0.1) on data whose columns are far from unit
    # size: at 1e8, mu = 0.1 is about 1e-11 mu_0 (the model interpolates, a lasso-like fit
    # with 29 kink features); at 1e-8, mu_0 is about 1e-15 and the model is empty
    X, yr, yc = _data(30, 60, 2)
    X = X * _column_scales(scale, 60, 3)
    reg = SelectiveRidgeRegressor().fit(X, yr)
    _assert_certified(X, yr, selective_fit(X, yr, alpha=1.0, mu=0.1), 1.0, 0.1, "squared")
    res = kkt_residuals(X, yr, reg.coef_, reg.intercept_, reg.dual_coef_, alpha=1.0, mu=0.1,
                        loss="squared")
    assert res["max"] <= 1e-10
    clf = SelectiveRidgeClassifier().fit(X, yc)
    r = selective_fit(X, yc, alpha=1.0, mu=0.1, loss="hinge")
    _assert_certified(X, yc, r, 1.0, 0.1, "hinge")
    np.testing.assert_array_equal(clf.coef_, r.coef)
    assert clf.intercept_ == r.intercept


@pytest.mark.parametrize("scale", ["1e8", "1e-8", "mixed"])
@pytest.mark.parametrize("loss", LOSSES)
def test_extreme_feature_scales_selectivity_path(scale, loss):
    X, yr, yc = _data(25, 50, 4)
    X = X * _column_scales(scale, 50, 5)
    y = yr if loss == "squared" else yc
    path = selectivity_path(X, y, alpha=1.0, loss=loss, n_mu=8, ratio=1e-4)
    assert path.kkt_residuals().max() <= 1e-10
    assert path.param_range[1] == pytest.approx(mu_0(X, y, alpha=1.0, loss=loss), rel=1e-12)


# ---------------------------------------------------------------------------------------
# exact symmetries: (sX, ty, alpha s^2, mu t / s) has the solution (t a / s, t b), with
# multipliers t lambda / s^2 (the hinge loss: t = 1)
# ---------------------------------------------------------------------------------------
def _scaled_fit(X, y, alpha, mu, loss, s, t):
    return selective_fit(X * s, y * t, alpha=alpha * s * s, mu=mu * t / s, loss=loss)


@pytest.mark.parametrize("loss", LOSSES)
def test_power_of_two_scalings_are_exact(loss):
    X, yr, yc = _data(20, 45, 6)
    y = yr if loss == "squared" else yc
    mu = 0.05 * mu_0(X, y, alpha=0.7, loss=loss)
    # X far from unit size is brought to it by a power of two: two such scalings of the
    # same problem are the same problem for the solver, and the results differ by exactly
    # the factors of the symmetry
    t = 2.0 ** -13 if loss == "squared" else 1.0
    a = _scaled_fit(X, y, 0.7, mu, loss, 2.0 ** 30, 1.0)
    b = _scaled_fit(X, y, 0.7, mu, loss, 2.0 ** 41, t)
    f = 2.0 ** -11 * t  # b = (t / 2^11) a for the coefficients
    np.testing.assert_array_equal(b.coef, a.coef * f)
    assert b.intercept == a.intercept * t
    np.testing.assert_array_equal(b.dual, a.dual * (t * 2.0 ** -22))
    np.testing.assert_array_equal(b.active, a.active)
    assert b.objective == a.objective * t * t
    assert b.gap == a.gap
    if loss == "squared":  # y alone: always rescaled, so exact at any size of X
        c = _scaled_fit(X, y, 0.7, mu, loss, 1.0, 2.0 ** 20)
        d = _scaled_fit(X, y, 0.7, mu, loss, 1.0, 1.0)
        np.testing.assert_array_equal(c.coef, d.coef * 2.0 ** 20)
        np.testing.assert_array_equal(c.dual, d.dual * 2.0 ** 20)


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("s, t", [(3.7, 0.3), (1e-6, 1e5), (2.5e7, 1.0)])
def test_general_scalings_hold_to_rounding(loss, s, t):
    X, yr, yc = _data(20, 45, 7)
    y = yr if loss == "squared" else yc
    t = t if loss == "squared" else 1.0
    mu = 0.05 * mu_0(X, y, alpha=0.7, loss=loss)
    a = selective_fit(X, y, alpha=0.7, mu=mu, loss=loss)
    b = _scaled_fit(X, y, 0.7, mu, loss, s, t)
    np.testing.assert_array_equal(a.active, b.active)
    np.testing.assert_allclose(b.coef * s / t, a.coef, rtol=1e-9,
                               atol=1e-12 * np.abs(a.coef).max())
    assert b.intercept / t == pytest.approx(a.intercept, rel=1e-9, abs=1e-12)
    assert b.objective / t ** 2 == pytest.approx(a.objective, rel=1e-10)


def test_path_breakpoints_follow_a_power_of_two_scaling_exactly():
    X, yr, _ = _data(20, 45, 8)
    p = selectivity_path(X * 2.0 ** 30, yr, alpha=2.0 ** 60, n_mu=6, ratio=1e-3)
    q = selectivity_path(X * 2.0 ** 40, yr * 2.0 ** 5, alpha=2.0 ** 80, n_mu=6, ratio=1e-3)
    np.testing.assert_array_equal(q.breakpoints, p.breakpoints * 2.0 ** -5)
    for mu_p, mu_q in zip(p.breakpoints, q.breakpoints, strict=True):
        np.testing.assert_array_equal(q.at(mu_q).coef, p.at(mu_p).coef * 2.0 ** -5)


# ---------------------------------------------------------------------------------------
# certificates: componentwise, so that a wrong point cannot look like rounding
# ---------------------------------------------------------------------------------------
def _perturbed(X, y, rec, alpha, mu, loss, size=1e-6):
    """``rec`` with its coefficients (and intercept) moved by ``size`` relative, in the
    direction that adds up in the optimality condition where the solution weighs most, and
    that condition's share: the residual rises by about ``size`` times it."""
    a, b, lam = rec.coef, rec.intercept, rec.dual
    absX = np.abs(X)
    s_terms = absX.T @ np.abs(lam)
    best, move = 0.0, None
    strong = np.abs(a) > mu
    if strong.any():  # a strong feature's condition a_i = s_i
        share = np.abs(a) / (s_terms + np.abs(a) + mu)
        share[~strong] = 0.0
        best, move = float(share.max()), (a * (1 + size), b)
    fit = absX @ np.abs(a) + abs(b)  # the terms of the scores
    if loss == "squared":
        share = fit / (alpha * np.abs(lam) + np.abs(y) + fit)
    else:
        u = 2 * alpha * y * lam
        share = np.where((u > 1e-3) & (u < 1 - 1e-3), fit / (1 + fit), 0.0)
    j = int(np.argmax(share))
    if share[j] > best:  # an object's condition: every term of z_j grows
        best = float(share[j])
        move = (a + size * np.abs(a) * np.sign(X[j]), b + size * abs(b) * np.sign(b))
    return dataclasses.replace(rec, coef=move[0], intercept=move[1]), best


@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("scales", ["unit", "mixed"])
def test_perturbed_path_point_is_not_certified(loss, scales):
    X, y = eeg_like(n_objects=50, n_channels=10, n_samples=20, random_state=3)
    if scales == "mixed":
        X = X * 10.0 ** np.random.default_rng(0).uniform(-6, 6, X.shape[1])
    path = selectivity_path(X, y, alpha=1.0, loss=loss, n_mu=10, ratio=1e-4)
    checked, inner = 0, 0
    for mu in path.breakpoints[:-1]:  # the last is mu_0, the empty model
        rec = path.at(mu)
        assert path._residual(mu, rec) <= 1e-12
        inner += 1
        wrong, share = _perturbed(X, y, rec, 1.0, mu, loss)
        if share >= 0.2:
            assert path._residual(mu, wrong) > 1e-7
            checked += 1
    assert checked >= 0.75 * inner


def test_a_wrong_coefficient_of_a_small_feature_is_seen():
    # feature 0 is a million times smaller than the others and carries the response: its
    # coefficient is large and strong; a relative error of 1e-4 in it is seen by its own
    # condition a_0 = s_0, whatever the sizes of the other features' terms
    rng = np.random.default_rng(9)
    X = rng.standard_normal((60, 10))
    X[:, 1:] *= 1e2
    X[:, 0] *= 1e-4
    y = 1e4 * X[:, 0] + 0.1 * rng.standard_normal(60)
    alpha = 1e-6
    mu = 1e-6 * mu_0(X, y, alpha=alpha)
    r = selective_fit(X, y, alpha=alpha, mu=mu)
    assert abs(r.coef[0]) > mu  # strong
    _assert_certified(X, y, r, alpha, mu, "squared")
    a = r.coef.copy()
    a[0] *= 1 + 1e-4
    res = kkt_residuals(X, y, a, r.intercept, r.dual, alpha=alpha, mu=mu, loss="squared")
    assert res["features"] > 1e-5


def test_certificates_are_invariant_under_the_symmetries():
    X, yr, _ = _data(20, 45, 10)
    mu = 0.1 * mu_0(X, yr, alpha=1.0)
    r = selective_fit(X, yr, alpha=1.0, mu=mu)
    a = r.coef * (1 + 1e-5)  # a wrong point: its residuals must not change with the units
    s, t = 2.0 ** 25, 2.0 ** -7
    base = kkt_residuals(X, yr, a, r.intercept, r.dual, alpha=1.0, mu=mu, loss="squared")
    moved = kkt_residuals(X * s, yr * t, a * t / s, r.intercept * t, r.dual * t / s ** 2,
                          alpha=s * s, mu=mu * t / s, loss="squared")
    assert moved == base
    assert base["max"] > 1e-7


# ---------------------------------------------------------------------------------------
# an independent solver at moderate, mixed scales
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("loss", LOSSES)
@pytest.mark.parametrize("seed", [0, 1])
def test_cvxpy_primal_agrees_at_moderate_mixed_scales(loss, seed):
    X, yr, yc = _data(18, 40, 20 + seed)
    d = 10.0 ** np.random.default_rng(seed).uniform(-1.5, 1.5, 40)
    X = X * d
    y = yr if loss == "squared" else yc
    rng = np.random.default_rng(30 + seed)
    for _ in range(2):
        alpha = float(10 ** rng.uniform(-1, 1))
        mu = float(mu_0(X, y, alpha=alpha, loss=loss) * 10 ** rng.uniform(-2, -0.1))
        r = selective_fit(X, y, alpha=alpha, mu=mu, loss=loss)
        p = selective_fit(X, y, alpha=alpha, mu=mu, loss=loss, method="primal")
        scale = max(1.0, abs(p.objective))
        assert r.objective <= p.objective + 1e-9 * scale
        assert abs(r.objective - p.objective) <= 1e-7 * scale
        # contributions x_i a_i to the scores (the coefficients themselves span the scales)
        np.testing.assert_allclose(r.coef * d, p.coef * d, atol=1e-5 * np.abs(p.coef * d).max())


# ---------------------------------------------------------------------------------------
# property: per-column scales 10^U(-8, 8), degenerate designs, y scaled too
# ---------------------------------------------------------------------------------------
@st.composite
def scaled_problems(draw):
    loss = draw(st.sampled_from(LOSSES))
    seed = draw(st.integers(0, 2 ** 31 - 1))
    N = draw(st.integers(6, 16))
    n = draw(st.integers(3, 40))
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((N, n)), draw(st.sampled_from([0, 2, 6])))
    make_degenerate(X, draw(st.sampled_from(["none", "dup_objects", "dup_features",
                                             "collinear", "constant"])))
    yr = X[:, 0] - X[:, min(1, n - 1)] + 0.5 * rng.standard_normal(N)
    if loss == "hinge":
        y = np.where(yr > np.median(yr), 1.0, -1.0)
        if y.min() == y.max():
            y[0] = -y[0]
    else:
        y = yr * 10.0 ** draw(st.floats(-8, 8))
    X = X * 10.0 ** rng.uniform(-8, 8, n)
    alpha = 10.0 ** draw(st.floats(-2, 2))
    frac = draw(st.sampled_from([0.5, 0.1, 1e-2, 1e-3]))
    return X, y, alpha, frac, loss


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scaled_problems())
def test_property_extreme_column_scales_complete_and_certify(problem):
    X, y, alpha, frac, loss = problem
    m0 = mu_0(X, y, alpha=alpha, loss=loss)
    if m0 == 0:
        return  # no feature correlates with y: every mu gives the empty model
    r = selective_fit(X, y, alpha=alpha, mu=frac * m0, loss=loss)
    _assert_certified(X, y, r, alpha, frac * m0, loss, tol=1e-9)


# ---------------------------------------------------------------------------------------
# one BLAS thread inside the engines, whatever the caller's setting
# ---------------------------------------------------------------------------------------
def test_engines_run_with_one_blas_thread(monkeypatch):
    seen = []
    inner = fit_module._selective_fit

    def spy(*args, **kwargs):
        seen.append(max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))
        return inner(*args, **kwargs)

    monkeypatch.setattr(fit_module, "_selective_fit", spy)
    monkeypatch.setattr(path_module, "_selective_fit", spy)
    X, yr, yc = _data(20, 45, 11)
    with threadpool_limits(limits=2, user_api="blas"):
        selective_fit(X, yr, alpha=1.0, mu=0.1 * mu_0(X, yr, alpha=1.0))
        selectivity_path(X, yc, alpha=1.0, loss="hinge", n_mu=3, ratio=0.5)
        outside = max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
    assert len(seen) >= 4 and max(seen) == 1
    assert outside == 2  # the caller's setting is restored
