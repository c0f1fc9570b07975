"""The exact homotopy in mu that takes over when the dual set iteration of
:func:`pathlib_core.selective.selective_fit` stalls (squared loss): every result it returns is
certified (duality gap, KKT) and equals the cvxpy primal of (11)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathlib_core.selective import eeg_like, kkt_residuals, mu_0, selective_fit


def _data(N, n, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n))
    y = X[:, :4] @ np.array([1.5, -1.0, 0.8, 0.5]) + 0.3 * rng.standard_normal(N)
    return X, y


def _assert_certified_and_primal(X, y, gamma, mu, r):
    assert abs(r.gap) <= 1e-9
    assert kkt_residuals(X, y, r.coef, r.intercept, r.dual, gamma=gamma, mu=mu,
                         loss="squared")["max"] <= 1e-7
    p = selective_fit(X, y, gamma=gamma, mu=mu, method="primal")
    scale = max(1.0, abs(p.objective))
    assert r.objective <= p.objective + 1e-7 * scale
    assert abs(r.objective - p.objective) <= 1e-6 * scale
    np.testing.assert_allclose(X @ r.coef + r.intercept, X @ p.coef + p.intercept,
                               atol=1e-5 * (1 + np.abs(y).max()))


@pytest.mark.parametrize("frac", [0.3, 0.05, 1e-3])
@pytest.mark.parametrize("shape", [(25, 8), (20, 150)], ids=["N>n", "N<n"])
def test_homotopy_from_mu0_equals_the_cvxpy_primal(frac, shape):
    # max_iter=1 stops the set iteration before it can converge (mu < mu_0), so the result
    # comes from the homotopy traced from the empty model at mu_0
    X, y = _data(*shape, seed=3)
    gamma = 1.0
    mu = frac * mu_0(X, y, gamma=gamma)
    r = selective_fit(X, y, gamma=gamma, mu=mu, max_iter=1)
    assert r.info["homotopy_steps"] > 0 and not r.info["rescued"]
    assert r.active.any()
    _assert_certified_and_primal(X, y, gamma, mu, r)
    # and it is the optimum the set iteration finds when it is allowed to run
    full = selective_fit(X, y, gamma=gamma, mu=mu)
    np.testing.assert_allclose(r.coef, full.coef, atol=1e-8)
    np.testing.assert_allclose(r.dual, full.dual, atol=1e-8)


def test_homotopy_from_a_warm_start_needs_fewer_steps_and_agrees():
    X, y = _data(20, 200, seed=5)
    gamma = 0.5
    m0 = mu_0(X, y, gamma=gamma)
    warm = selective_fit(X, y, gamma=gamma, mu=0.2 * m0)
    assert warm.info["mu"] == pytest.approx(0.2 * m0)
    mu = 0.01 * m0
    hot = selective_fit(X, y, gamma=gamma, mu=mu, max_iter=1, warm_start=warm)
    cold = selective_fit(X, y, gamma=gamma, mu=mu, max_iter=1)
    assert 0 < hot.info["homotopy_steps"] < cold.info["homotopy_steps"]
    np.testing.assert_allclose(hot.dual, cold.dual, atol=1e-8)
    _assert_certified_and_primal(X, y, gamma, mu, hot)


@st.composite
def degenerate_squared(draw):
    seed = draw(st.integers(0, 2**16))
    N = draw(st.integers(4, 12))
    n = draw(st.integers(2, 25))
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((N, n)), draw(st.sampled_from([0, 1, 3])))
    kind = draw(st.sampled_from(["dup_objects", "dup_features", "collinear", "constant",
                                 "ties"]))
    if kind == "dup_objects":
        X[N // 2:] = X[: N - N // 2]
    elif kind == "dup_features":
        X[:, n // 2:] = X[:, : n - n // 2]
    elif kind == "collinear" and n > 2:
        X[:, 2] = 2 * X[:, 0] - X[:, 1]
        X[:, -1] = -3 * X[:, 0]
    elif kind == "constant":
        X[:, 0] = 1.0
    y = np.round(X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(N), 1)
    gamma = draw(st.sampled_from([0.1, 1.0, 10.0]))
    frac = draw(st.sampled_from([0.01, 0.1, 0.5, 0.9]))
    return X, y, gamma, frac


@settings(deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(degenerate_squared())
def test_degenerate_data_homotopy_result_is_certified(problem):
    # duplicate features reach |s_i| = mu together: one enters the kink set, its twin then
    # stays at the kink with zero coefficient (the rows would be dependent); the result must
    # be optimal, and the homotopy (not the cvxpy restart) must have produced it
    X, y, gamma, frac = problem
    m0 = mu_0(X, y, gamma=gamma)
    if m0 <= 0:
        return
    mu = frac * m0
    r = selective_fit(X, y, gamma=gamma, mu=mu, max_iter=1)
    assert not r.info["rescued"]
    # either the one allowed set iteration was already optimal (e.g. mu_0 ~ 1e-17 from
    # rounding when X' lambda = 0 for every feasible lambda) or the homotopy finished
    assert r.info["homotopy_steps"] > 0 or r.n_iter == 1
    _assert_certified_and_primal(X, y, gamma, mu, r)


def test_regression_features_invisible_to_the_dual_need_no_homotopy():
    # found by hypothesis: a zero column and a constant column give X' lambda = 0 for every
    # lambda with sum 0, so mu_0 is rounding noise and the first iterate is already optimal
    X = np.array([[0.0, 1.0]] * 4)
    y = np.array([-0.7, -0.5, -1.3, -0.2])
    mu = 0.01 * mu_0(X, y, gamma=0.1)
    r = selective_fit(X, y, gamma=0.1, mu=mu, max_iter=1)
    assert r.n_iter == 1 and r.info["homotopy_steps"] == 0 and not r.coef.any()
    _assert_certified_and_primal(X, y, 0.1, mu, r)


def test_stalled_set_iteration_on_eeg_like_data_is_finished_by_the_homotopy():
    # a small EEG-shaped problem at a small selectivity: the set iteration does not settle
    # within its budget (it used to need the cvxpy restart); the homotopy finishes it exactly
    X, y = eeg_like(n_objects=40, n_channels=10, n_samples=20, seed=0)
    gamma = 1.0
    mu = 0.005 * mu_0(X, y, gamma=gamma)
    r = selective_fit(X, y, gamma=gamma, mu=mu)
    assert r.info["homotopy_steps"] > 0 and not r.info["rescued"]
    _assert_certified_and_primal(X, y, gamma, mu, r)
