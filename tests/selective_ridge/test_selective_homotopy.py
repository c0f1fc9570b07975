"""The exact homotopy in mu that takes over when the dual set iteration of
:func:`pathlib_core.selective_ridge.fit.selective_fit` stalls (squared loss): every result it
returns is certified (duality gap, KKT) and equals the cvxpy primal of (11).

The augmented Lagrangian search (tested in ``test_selective_alm.py``) normally comes first;
it is switched off here (``set_search=False``) so that these results come from the homotopy
alone."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from selective_cases import assert_certified_and_primal as _assert_certified_and_primal
from selective_cases import degenerate_squared
from selective_cases import linear_data as _data

from pathlib_core.selective_ridge import eeg_like, mu_0, selective_fit


@pytest.mark.parametrize("frac", [0.3, 0.05, 1e-3])
@pytest.mark.parametrize("shape", [(25, 8), (20, 150)], ids=["N>n", "N<n"])
def test_homotopy_from_mu0_equals_the_cvxpy_primal(frac, shape):
    # max_iter=1 stops the set iteration before it can converge (mu < mu_0), so the result
    # comes from the homotopy traced from the empty model at mu_0
    X, y = _data(*shape, seed=3)
    alpha = 1.0
    mu = frac * mu_0(X, y, alpha=alpha)
    r = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1, set_search=False)
    assert r.info["homotopy_steps"] > 0 and not r.info["rescued"]
    assert r.active.any()
    _assert_certified_and_primal(X, y, alpha, mu, r)
    # and it is the optimum the set iteration finds when it is allowed to run
    full = selective_fit(X, y, alpha=alpha, mu=mu, set_search=False)
    np.testing.assert_allclose(r.coef, full.coef, atol=1e-8)
    np.testing.assert_allclose(r.dual, full.dual, atol=1e-8)


def test_homotopy_from_a_warm_start_needs_fewer_steps_and_agrees():
    X, y = _data(20, 200, seed=5)
    alpha = 0.5
    m0 = mu_0(X, y, alpha=alpha)
    warm = selective_fit(X, y, alpha=alpha, mu=0.2 * m0, set_search=False)
    assert warm.info["mu"] == pytest.approx(0.2 * m0)
    mu = 0.01 * m0
    hot = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1, warm_start=warm, set_search=False)
    cold = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1, set_search=False)
    assert 0 < hot.info["homotopy_steps"] < cold.info["homotopy_steps"]
    np.testing.assert_allclose(hot.dual, cold.dual, atol=1e-8)
    _assert_certified_and_primal(X, y, alpha, mu, hot)


@settings(deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(degenerate_squared())
def test_degenerate_data_homotopy_result_is_certified(problem):
    # duplicate features reach |s_i| = mu together: one enters the kink set, its twin then
    # stays at the kink with zero coefficient (the rows would be dependent); the result must
    # be optimal, and the homotopy (not the cvxpy restart) must have produced it
    X, y, alpha, frac = problem
    m0 = mu_0(X, y, alpha=alpha)
    if m0 <= 0:
        return
    mu = frac * m0
    r = selective_fit(X, y, alpha=alpha, mu=mu, max_iter=1, set_search=False)
    assert not r.info["rescued"]
    # either the one allowed set iteration was already optimal (e.g. mu_0 ~ 1e-17 from
    # rounding when X' lambda = 0 for every feasible lambda) or the homotopy finished
    assert r.info["homotopy_steps"] > 0 or r.n_iter == 1
    _assert_certified_and_primal(X, y, alpha, mu, r)


def test_regression_features_invisible_to_the_dual_need_no_homotopy():
    # found by hypothesis: a zero column and a constant column give X' lambda = 0 for every
    # lambda with sum 0, so mu_0 is rounding noise and the first iterate is already optimal
    X = np.array([[0.0, 1.0]] * 4)
    y = np.array([-0.7, -0.5, -1.3, -0.2])
    mu = 0.01 * mu_0(X, y, alpha=0.1)
    r = selective_fit(X, y, alpha=0.1, mu=mu, max_iter=1, set_search=False)
    assert r.n_iter == 1 and r.info["homotopy_steps"] == 0 and not r.coef.any()
    _assert_certified_and_primal(X, y, 0.1, mu, r)


def test_stalled_set_iteration_on_eeg_like_data_is_finished_by_the_homotopy():
    # a small EEG-shaped problem at a small selectivity: the set iteration does not settle
    # within its budget (it used to need the cvxpy restart); the homotopy finishes it exactly
    X, y = eeg_like(n_objects=40, n_channels=10, n_samples=20, random_state=0)
    alpha = 1.0
    mu = 0.005 * mu_0(X, y, alpha=alpha)
    r = selective_fit(X, y, alpha=alpha, mu=mu, set_search=False)
    assert r.info["homotopy_steps"] > 0 and not r.info["rescued"]
    _assert_certified_and_primal(X, y, alpha, mu, r)
