"""Tests of :func:`pathlib_core.lasso.lasso_path` against scikit-learn's LARS and Lasso."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso, lars_path

from pathlib_core.lasso import LassoSolution, lasso_kkt_residual, lasso_path


def _synthetic(n=200, p=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X @ (rng.normal(size=p) * (rng.random(p) < 0.3)) + rng.normal(size=n)
    return X, y


DATA = {"diabetes": lambda: load_diabetes(return_X_y=True), "synthetic": _synthetic,
        "wide": lambda: _synthetic(30, 60, 1)}


@pytest.mark.parametrize("name", sorted(DATA))
def test_breakpoints_and_coefficients_match_lars_path(name):
    X, y = DATA[name]()
    path = lasso_path(X, y)
    alphas, _, coefs = lars_path(X, y, method="lasso")
    bp = path.breakpoints[::-1]
    assert path.param_name == "alpha"
    assert len(bp) == len(alphas)
    np.testing.assert_allclose(bp, alphas, rtol=1e-9, atol=1e-12 * alphas[0])
    for k, a in enumerate(bp):
        np.testing.assert_allclose(path.at(a).coef, coefs[:, k], rtol=1e-7,
                                   atol=1e-9 * np.abs(coefs).max())
    assert path.kkt_residuals().max() <= 1e-10
    assert isinstance(path.at(bp[0]), LassoSolution)
    assert {e.kind for e in path.events} <= {"enter", "leave"}
    assert path.info["n_events"] == len(path.events)


@pytest.mark.parametrize("name", ["diabetes", "synthetic"])
def test_matches_coordinate_descent_at_random_alphas(name):
    X, y = DATA[name]()
    path = lasso_path(X, y)
    amax = path.param_range[1]
    rng = np.random.default_rng(0)
    for a in amax * np.exp(rng.uniform(np.log(1e-3), 0, 6)):
        ref = Lasso(alpha=a, fit_intercept=False, tol=1e-14, max_iter=10**6).fit(X, y).coef_
        np.testing.assert_allclose(path.at(a).coef, ref, atol=1e-7 * max(1, np.abs(ref).max()))


def test_end_of_path_is_least_squares_when_n_greater_than_p():
    X, y = _synthetic(100, 10, 3)
    path = lasso_path(X, y)
    assert path.param_range[0] == 0.0
    ls = np.linalg.lstsq(X, y, rcond=None)[0]
    np.testing.assert_allclose(path.at(0.0).coef, ls, rtol=1e-9, atol=1e-10)
    assert lasso_kkt_residual(X, y, 0.0, path.at(0.0).coef) <= 1e-10


def test_alpha_min_stops_early():
    X, y = load_diabetes(return_X_y=True)
    path = lasso_path(X, y, alpha_min=0.5)
    assert path.param_range[0] == 0.5
    ref = Lasso(alpha=0.5, fit_intercept=False, tol=1e-14, max_iter=10**6).fit(X, y).coef_
    np.testing.assert_allclose(path.at(0.5).coef, ref, atol=1e-8)


# Residuals are relative to alpha_max = max|X'y|/n (the scale of the correlations).
@st.composite
def lasso_problems(draw):
    n = draw(st.integers(5, 40))
    p = draw(st.integers(1, 12))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.normal(size=(n, p)) * 10.0 ** draw(st.integers(-3, 3))
    kind = draw(st.sampled_from(["plain", "dup_rows", "tied_y", "collinear"]))
    y = rng.normal(size=n)
    if kind == "dup_rows":
        k = max(1, n // 3)
        X[-k:] = X[:k]
        y[-k:] = y[:k]
    elif kind == "tied_y":
        y = np.round(y)
    elif kind == "collinear" and p >= 2:
        X[:, -1] = 2.0 * X[:, 0]
    return X, y


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lasso_problems())
def test_property_degenerate_data_path_completes_kkt_exact(problem):
    X, y = problem
    path = lasso_path(X, y)
    assert path.kkt_residuals().max() <= 1e-8


@pytest.mark.parametrize("X, y, kw, match", [
    (np.full((3, 2), np.nan), np.ones(3), {}, "X"),
    (np.ones((3, 2)), np.ones(4), {}, "y"),
    (np.ones((3, 2)), np.array([1.0, np.inf, 0.0]), {}, "y"),
    (np.ones(3), np.ones(3), {}, "X"),
    (np.eye(3), np.ones(3), {"alpha_min": -1.0}, "alpha_min"),
    (np.eye(3), np.ones(3), {"alpha_min": 100.0}, "alpha_min"),
    (np.eye(3), np.ones(3), {"refactor_every": 2.5}, "refactor_every.*integral"),
])
def test_bad_input_raises_value_error(X, y, kw, match):
    with pytest.raises(ValueError, match=match):
        lasso_path(X, y, **kw)


def test_kkt_residual_checks_its_arguments():
    X, y = np.eye(3), np.ones(3)
    with pytest.raises(ValueError, match="alpha"):
        lasso_kkt_residual(X, y, -0.1, np.zeros(3))
    with pytest.raises(ValueError, match="coef"):
        lasso_kkt_residual(X, y, 0.1, np.zeros(2))
