"""Tests of :func:`pathlib_core.primer.lasso.lasso_path` against scikit-learn's LARS and Lasso."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_diabetes
from sklearn.linear_model import Lasso, lars_path

from pathlib_core.primer.lasso import LassoSolution, lasso_kkt_residual, lasso_path


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


# ---------------------------------------------------------------------------------------------
# Where lars_path completes, lasso_path completes too (cases after scikit-learn's
# test_least_angle.py and test_coordinate_descent.py, written again for the exact path)
# ---------------------------------------------------------------------------------------------
def _objective(X, y, w, alpha):
    X, y = np.asarray(X, float), np.asarray(y, float)
    return float(np.sum((y - X @ w) ** 2) / (2 * len(y)) + alpha * np.abs(w).sum())


def _centered(X, y):
    X, y = np.asarray(X, float), np.asarray(y, float)
    return X - X.mean(axis=0), y - y.mean()


@pytest.mark.parametrize("seed", range(40))
def test_more_features_than_samples_matches_lars_and_interpolates(seed):
    rng = np.random.default_rng(seed)
    X, y = rng.standard_normal((67, 170)), rng.standard_normal(67)
    path = lasso_path(X, y)
    alphas, _, _ = lars_path(X, y, method="lasso")
    bp = path.breakpoints[::-1]
    assert path.info["saturated"]
    assert len(bp) == len(alphas)
    # lars accumulates its correlations: agreement to rounding of alpha_max
    np.testing.assert_allclose(bp[:-1], alphas[:-1], rtol=1e-9, atol=1e-12 * alphas[0])
    # lars stops where its correlations reach rounding level; the exact path ends at 0
    assert bp[-1] == 0.0 and alphas[-1] < 1e-10 * alphas[0]
    assert path.kkt_residuals().max() <= 1e-12
    w = path.at(0.0).coef
    assert np.linalg.norm(X @ w - y) <= 1e-10 * np.linalg.norm(y)
    assert np.count_nonzero(w) == 67


def test_hilbert_design_ends_at_least_squares():
    # lars_path's "add features" case: a 5 x 5 Hilbert matrix (Gram condition number 1e11)
    H = 1.0 / (np.arange(1, 6) + np.arange(5)[:, None])
    y = np.arange(5.0)
    path = lasso_path(H, y)
    assert path.kkt_residuals().max() <= 1e-12  # backward error
    # forward error: the Gram matrix's condition number times the backward error
    np.testing.assert_allclose(path.at(0.0).coef, np.linalg.solve(H, y), rtol=1e-4)
    assert np.all(path.at(0.0).coef != 0)


def test_least_squares_at_the_end_of_the_path():
    X, y = load_diabetes(return_X_y=True)
    for Xs in (X, 3 * X):
        w = lasso_path(Xs, y).at(0.0).coef
        np.testing.assert_allclose(w, np.linalg.lstsq(Xs, y, rcond=None)[0], rtol=1e-8)


def test_collinear_columns_and_zero_response():
    X = np.array([[3.0, 3.0, 1.0], [2.0, 2.0, 0.0], [1.0, 1.0, 0.0]])
    y = np.array([1.0, 0.0, 0.0])
    path = lasso_path(X, y, alpha_min=0.01)
    w = path.at(0.01).coef
    assert np.all(np.isfinite(w)) and np.sum((X @ w - y) ** 2) < 1.0
    assert path.kkt_residuals().max() <= 1e-12
    # the duplicated column never enters next to its twin
    assert np.count_nonzero(w[:2]) <= 1
    rng = np.random.default_rng(0)
    zero = lasso_path(rng.random((10, 5)), np.zeros(10))
    assert len(zero) == 1 and not np.any(zero.at(0.0).coef)


def test_singular_design_keeps_one_of_two_twins():
    X, y = np.array([[1.0, 1.0], [1.0, 1.0]]), np.array([1.0, 1.0])
    path = lasso_path(X, y)
    np.testing.assert_allclose(path.at(0.0).coef, [1.0, 0.0])
    assert path.kkt_residuals().max() <= 1e-14


@pytest.mark.parametrize("X", [
    [[5.0, 0.0], [0.0, 5.0], [10.0, 10.0]],
    [[10.0, 10.0, 0.0], [1e-32, 0.0, 0.0], [0.0, 0.0, 1.0]],
])
def test_rank_deficient_design_reaches_the_minimum(X):
    Xc, yc = _centered(X, [5.0, 0.0, 5.0])
    w = lasso_path(Xc, yc).at(0.1).coef
    ref = Lasso(alpha=0.1, fit_intercept=False, tol=1e-12, max_iter=10**6).fit(Xc, yc).coef_
    assert _objective(Xc, yc, w, 0.1) <= _objective(Xc, yc, ref, 0.1) * (1 + 1e-12)
    assert lasso_kkt_residual(Xc, yc, 0.1, w) <= 1e-13


def test_scaled_diabetes_agrees_with_coordinate_descent_at_every_breakpoint():
    X, y = load_diabetes(return_X_y=True)
    X = 3 * X
    path = lasso_path(X, y)
    for a in path.breakpoints[1:]:
        ref = Lasso(alpha=a, fit_intercept=False, tol=1e-14, max_iter=10**6).fit(X, y).coef_
        np.testing.assert_allclose(path.at(a).coef, ref, atol=1e-6 * np.abs(ref).max())


@pytest.mark.parametrize("alpha_min", [10.0, 0.9, 1e-4])
def test_early_stop_agrees_with_coordinate_descent(alpha_min):
    X, y = load_diabetes(return_X_y=True)
    amax = np.max(np.abs(X.T @ y)) / len(y)
    path = lasso_path(X, y, alpha_min=min(alpha_min, amax))
    a = path.param_range[0]
    ref = Lasso(alpha=a, fit_intercept=False, tol=1e-14, max_iter=10**6).fit(X, y).coef_
    np.testing.assert_allclose(path.at(a).coef, ref, atol=1e-6 * max(1.0, np.abs(ref).max()))


def test_ill_conditioned_wide_design_reaches_coordinate_descent_objective():
    rng = np.random.RandomState(42)
    n, m, k = 70, 100, 5
    X = rng.randn(n, m)
    w = np.zeros(m)
    i = np.arange(m)
    rng.shuffle(i)
    w[i[:k]] = np.sign(rng.randn(k)) * (rng.rand(k) + 1)
    y = X @ w + 0.2 * rng.rand(n)
    path = lasso_path(X, y)
    assert path.kkt_residuals().max() <= 1e-12
    for a in path.breakpoints[path.breakpoints > 1e-3 * path.param_range[1]][::7]:
        ref = Lasso(alpha=a, fit_intercept=False, tol=1e-12, max_iter=10**6).fit(X, y).coef_
        assert _objective(X, y, path.at(a).coef, a) <= _objective(X, y, ref, a) * (1 + 1e-10)


def test_extreme_column_scales_reach_the_minimum():
    # lars_path needs its "degenerate regressor" drop here; the exact path does not
    X = np.array([[1e20, 1e20, 0.0], [-1e-32, 0.0, 0.0], [1.0, 1.0, 1.0]])
    y = np.array([10.0, 10.0, 1.0])
    path = lasso_path(X, y)
    w = path.at(1e-4).coef
    ref = Lasso(alpha=1e-4, fit_intercept=False, tol=1e-12, max_iter=10**6).fit(X, y).coef_
    assert _objective(X, y, w, 1e-4) <= _objective(X, y, ref, 1e-4) * (1 + 1e-12)
    assert path.kkt_residuals().max() <= 1e-13


def test_tied_features_without_jitter():
    # scikit-learn issue 2746: two features tie at alpha_max; LassoLars needs jitter
    X = np.array([[0.0, 0.0, 0.0, -1.0, 0.0], [0.0, -1.0, 0.0, 0.0, 0.0]])
    y = np.array([-2.5, -2.5])
    path = lasso_path(X, y)
    np.testing.assert_allclose(path.at(1e-3).coef, [0, 2.5, 0, 2.5, 0], rtol=1e-3)
    assert path.events[-1].indices == (1, 3)
    assert path.kkt_residuals().max() <= 1e-15


def test_path_prefix_does_not_depend_on_alpha_min():
    X, y = load_diabetes(return_X_y=True)
    full = lasso_path(X, y).breakpoints[::-1]
    part = lasso_path(X, y, alpha_min=full[2]).breakpoints[::-1]
    np.testing.assert_array_equal(part, full[:3])


@pytest.mark.parametrize("alpha, coef", [(1e-8, 1.0), (0.1, 0.85), (0.5, 0.25), (2 / 3, 0.0)])
def test_one_feature_toy_problem(alpha, coef):
    X, y = np.array([[-1.0], [0.0], [1.0]]), np.array([-1.0, 0.0, 1.0])
    np.testing.assert_allclose(lasso_path(X, y).at(alpha).coef, [coef], atol=1e-12)


def test_zero_response_gives_the_zero_path():
    path = lasso_path(np.array([[-1.0], [0.0], [1.0]]), np.zeros(3))
    assert path.param_range == (0.0, 0.0)
    assert path.at(0.0).coef.tolist() == [0.0]


# ---------------------------------------------------------------------------------------------
# Certificates that can fail, and properties at extreme scales and shapes
# ---------------------------------------------------------------------------------------------
def coherent_perturbation(X, y, alpha, w, size=1e-6):
    """``w`` moved by ``size`` relative, coordinate by coordinate, in the direction that adds
    up in the condition of the feature whose coefficients weigh most in it.

    The weight is the share of ``|X_j|'|X||w| / n`` in the scale ``alpha + |X_j|'(|y| +
    |X||w|) / n`` of :func:`lasso_kkt_residual`. Returns the perturbed coefficients and that
    share: the perturbation moves the condition by about ``size`` times the share, relative
    to its scale.
    """
    n = len(y)
    absX = np.abs(X)
    terms = absX.T @ (absX @ np.abs(w)) / n
    share = terms / (alpha + absX.T @ np.abs(y) / n + terms)
    j = int(np.argmax(share))
    return w * (1 + size * np.sign((X.T @ X)[j] * w)), float(share[j])


@pytest.mark.parametrize("scales", ["unit", "mixed"])
def test_perturbed_solution_is_not_certified(scales):
    # centered, as for a model with an intercept (an uncentered response's mean would weigh in
    # every condition's scale without entering its violation)
    X, y = _centered(*load_diabetes(return_X_y=True))
    if scales == "mixed":
        X = X * np.logspace(-8, 8, X.shape[1])
    path = lasso_path(X, y)
    checked = 0
    for a in path.breakpoints[1:-1]:
        w = path.at(a).coef
        assert lasso_kkt_residual(X, y, a, w) <= 1e-14
        wrong, share = coherent_perturbation(X, y, a, w)
        if share >= 0.2:
            assert lasso_kkt_residual(X, y, a, wrong) > 1e-7
            checked += 1
    assert checked >= 0.75 * (len(path) - 2)


@st.composite
def wide_problems(draw):
    n = draw(st.integers(2, 15))
    p = draw(st.integers(n + 1, 3 * n + 2))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.normal(size=(n, p))
    kind = draw(st.sampled_from(["plain", "dup_cols", "collinear", "tied_y", "binary"]))
    y = rng.normal(size=n)
    if kind == "dup_cols":
        X[:, p // 2:] = X[:, : p - p // 2]
    elif kind == "collinear":
        X[:, -1] = X[:, 0] - 2 * X[:, 1]
    elif kind == "tied_y":
        y = np.round(y)
    elif kind == "binary":
        X = np.sign(X)
    return X, y


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide_problems())
def test_property_more_features_than_samples(problem):
    X, y = problem
    path = lasso_path(X, y)
    assert path.kkt_residuals().max() <= 1e-9
    assert path.param_range[0] == 0.0
    # the end interpolates (a wide design of full row rank) or is the least-squares fit
    w = path.at(0.0).coef
    r = y - X @ w
    assert np.linalg.norm(X.T @ r) <= 1e-8 * np.linalg.norm(X) * np.linalg.norm(y)


@st.composite
def scaled_problems(draw):
    n = draw(st.integers(4, 30))
    p = draw(st.integers(1, 10))
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    X = rng.normal(size=(n, p))
    scales = 10.0 ** rng.uniform(-10, 20, size=p)
    if p > 1 and draw(st.booleans()):
        X[:, -1] = X[:, 0]  # a duplicate at another scale: collinear columns
    return X * scales, rng.normal(size=n) * 10.0 ** draw(st.integers(-8, 8))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scaled_problems())
def test_property_extreme_column_scales(problem):
    X, y = problem
    path = lasso_path(X, y)
    assert path.kkt_residuals().max() <= 1e-10
    # the same model in other units: scaling X by s and y by t maps the path exactly
    # (powers of two: bit for bit)
    s, t = 2.0 ** 30, 2.0 ** -20
    other = lasso_path(X * s, y * t)
    np.testing.assert_array_equal(other.breakpoints, path.breakpoints * (s * t))
    for a in path.breakpoints:
        np.testing.assert_array_equal(other.at(a * s * t).coef, path.at(a).coef * (t / s))
