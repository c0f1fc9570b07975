"""The augmented Lagrangian search for the feature sets of the squared-loss selective-ridge
fit (:mod:`pathlib_core.selective_ridge.alm`): its prox is the exact minimizer, the sets it proposes
give certified fits equal to the cvxpy primal and to the homotopy, and a search whose sets
cannot be certified never produces a result."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from scipy.optimize import minimize_scalar
from selective_cases import assert_certified_and_primal as _assert_certified_and_primal
from selective_cases import degenerate_squared
from selective_cases import linear_data as _data

from pathlib_core.selective_ridge import eeg_like, mu_0, selective_fit
from pathlib_core.selective_ridge import fit as fit_module
from pathlib_core.selective_ridge.alm import _prox, _ZoneGram, alm_sets


@pytest.mark.parametrize("sigma", [1e-3, 0.1, 1.0, 30.0])
def test_prox_is_the_minimizer_of_the_scaled_penalty(sigma):
    alpha, mu = 0.7, 0.4
    rng = np.random.default_rng(0)
    v = np.concatenate([rng.normal(scale=3.0, size=40),
                        [0.0, 2 * sigma * alpha * mu, -(mu + 2 * sigma * alpha * mu)]])
    z, d = _prox(v, sigma, alpha, mu)
    for vi, zi in zip(v, z, strict=True):
        def f(t, vi=vi):
            return sigma * alpha * (2 * mu * abs(t) + max(0.0, abs(t) - mu) ** 2) \
                + 0.5 * (t - vi) ** 2
        ref = minimize_scalar(f, bracket=(-10, 10), tol=1e-12).x
        assert f(zi) <= f(ref) + 1e-12
        assert abs(zi - ref) <= 1e-6
    # the derivative: 0 on the dead zone, 1 on the lasso zone, 1 / (1 + 2 sigma alpha) beyond
    h = 1e-7
    inner = np.abs(np.abs(v) - 2 * sigma * alpha * mu) > 1e-5
    inner &= np.abs(np.abs(v) - (mu + 2 * sigma * alpha * mu)) > 1e-5
    fd = (_prox(v + h, sigma, alpha, mu)[0] - _prox(v - h, sigma, alpha, mu)[0]) / (2 * h)
    np.testing.assert_allclose(d[inner], fd[inner], atol=1e-6)


@pytest.mark.parametrize("frac", [0.3, 0.05, 1e-3])
@pytest.mark.parametrize("shape", [(25, 8), (20, 150)], ids=["N>n", "N<n"])
def test_alm_sets_give_the_cvxpy_primal_and_the_homotopy_result(frac, shape):
    X, y = _data(*shape, seed=3)
    alpha = 1.0
    mu = frac * mu_0(X, y, alpha=alpha)
    # max_iter=1: the set iteration cannot converge first, so the ALM search is used
    r = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1)
    assert r.info["alm_newton"] > 0 and r.info["homotopy_steps"] == 0
    assert not r.info["rescued"] and r.active.any()
    _assert_certified_and_primal(X, y, alpha, mu, r)
    h = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1, set_search=False)
    assert h.info["homotopy_steps"] > 0
    np.testing.assert_allclose(r.coef, h.coef, atol=1e-8)
    np.testing.assert_allclose(r.dual, h.dual, atol=1e-8)


def test_paper_regime_on_eeg_like_data_is_found_without_the_homotopy():
    # a quarter of the features strongly active: the regime where the set iteration alone
    # stalls; the ALM sets are certified directly
    X, y = eeg_like(n_objects=40, n_channels=10, n_samples=30, random_state=0)
    alpha = 1.0
    mu = 1e-4 * mu_0(X, y, alpha=alpha)
    r = selective_fit(X, y, alpha=alpha, mu=mu)
    assert r.info["alm_newton"] > 0 and r.info["homotopy_steps"] == 0
    assert r.info["strong"].sum() > 0.1 * X.shape[1]
    _assert_certified_and_primal(X, y, alpha, mu, r)


def test_a_warm_start_from_a_larger_mu_gives_the_same_fit():
    X, y = _data(20, 200, seed=5)
    alpha = 0.5
    m0 = mu_0(X, y, alpha=alpha)
    warm = selective_fit(X, y, alpha=alpha, mu=0.2 * m0)
    mu = 0.002 * m0
    hot = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1, warm_start=warm)
    cold = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1)
    assert hot.info["alm_newton"] > 0
    np.testing.assert_allclose(hot.dual, cold.dual, atol=1e-8)
    _assert_certified_and_primal(X, y, alpha, mu, hot)


def test_sets_that_cannot_be_certified_are_never_returned():
    X, y = _data(20, 150, seed=1)
    mu = 0.01 * mu_0(X, y, alpha=1.0)
    calls = []

    def refuse(strong, kink, lam):
        calls.append((strong.sum(), kink.sum()))
        return None

    out, n_newton = alm_sets(X, y, 1.0, mu, refuse)
    assert out is None and calls and n_newton > 0


def test_a_failing_search_falls_back_to_the_homotopy(monkeypatch):
    X, y = _data(20, 150, seed=1)
    alpha = 1.0
    mu = 0.01 * mu_0(X, y, alpha=alpha)
    monkeypatch.setattr(fit_module, "alm_sets", lambda *a, **k: (None, 7))
    r = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1)
    assert r.info["alm_newton"] == 7 and r.info["homotopy_steps"] > 0
    _assert_certified_and_primal(X, y, alpha, mu, r)


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(degenerate_squared(fracs=(1e-4, 0.01, 0.1, 0.5, 0.9)))
def test_degenerate_data_give_certified_fits_whatever_stage_finishes(problem):
    # duplicates, collinear and constant features, ties: the ALM search, the homotopy or the
    # cvxpy restart may finish the fit; whichever does, the result must be optimal
    X, y, alpha, frac = problem
    m0 = mu_0(X, y, alpha=alpha)
    if m0 <= 0:
        return
    mu = frac * m0
    r = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1)
    _assert_certified_and_primal(X, y, alpha, mu, r)


def test_zone_gram_updates_equal_a_direct_computation():
    # the Newton matrix of the search comes from incrementally updated Gram matrices: after
    # a sequence of zone changes (few, many, none) they equal the sums formed from scratch
    rng = np.random.default_rng(4)
    Xc = rng.standard_normal((15, 300))
    gram = _ZoneGram(Xc)
    zone = rng.integers(0, 3, 300)
    for k in range(120):
        flip = rng.random(300) < (0.9 if k % 40 == 0 else 0.02 if k % 7 else 0.0)
        zone = np.where(flip, rng.integers(0, 3, 300), zone)
        d = np.where(zone == 0, 0.0, np.where(zone == 1, 1.0, 0.25))
        L, R = gram.update(d)
        XL, XR = Xc[:, zone == 1], Xc[:, zone == 2]
        np.testing.assert_allclose(L, XL @ XL.T, atol=1e-10 * 300)
        np.testing.assert_allclose(R, XR @ XR.T, atol=1e-10 * 300)
