"""Tests of latent-SVM training (Algorithm 1 and the AO / CCCP / SGD baselines)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import lsq_linear
from sklearn.utils.estimator_checks import parametrize_with_checks

from pathlib_core.core.qp import solve_qp_cvxpy
from pathlib_core.pdgdp import (
    LatentSVMClassifier,
    hidden_state_objective,
    latent_global_optimum,
    latent_objective,
    project_simplex,
    train_latent_svm,
)

cp = pytest.importorskip("cvxpy")


def _latent_data(seed, n_pos=6, n_neg=8):
    """Positives in two clusters on either side of the negatives (a 2-state problem)."""
    rng = np.random.default_rng(seed)
    h = n_pos // 2
    Xp = np.vstack([rng.normal([2.0, 0.0], 0.8, (h, 2)), rng.normal([-2.0, 0.0], 0.8,
                                                                   (n_pos - h, 2))])
    Xn = rng.normal([0.0, 0.0], 0.9, (n_neg, 2))
    return np.vstack([Xp, Xn]), np.r_[np.ones(n_pos), -np.ones(n_neg)]


def _dual_value_oracle(X, y, theta, sigma, eta):
    """``J(theta) = -sum_m V(u_m)`` with every component's dual solved by cvxpy."""
    l = y.shape[0]
    c = np.where(y > 0, eta / l, (1 - eta) / l)
    Q = np.outer(y, y) * (X @ X.T) / sigma
    total = 0.0
    for m in range(theta.shape[1]):
        u = c.copy()
        u[y > 0] *= theta[:, m]
        res = solve_qp_cvxpy(Q, -np.ones(l), A=y[None, :], b=[0.0], lb=0.0, ub=u, tol=1e-12)
        total -= res.objective
    return total


def _primal_value(X, y, theta, W, b, sigma, eta):
    """``J(theta, W, b)``: the theta-weighted hinge on positives (the simplex trick)."""
    l = y.shape[0]
    c = np.where(y > 0, eta / l, (1 - eta) / l)
    F = X @ W.T + b
    pos = y > 0
    lp = np.sum(theta * np.maximum(1 - F[pos], 0), axis=1)
    ln = np.sum(np.maximum(1 + F[~pos], 0), axis=1)
    return 0.5 * sigma * np.sum(W * W) + c[pos] @ lp + c[~pos] @ ln


def test_hidden_state_objective_matches_oracle_and_primal():
    X, y = _latent_data(0)
    rng = np.random.default_rng(0)
    theta = project_simplex(rng.random((6, 2)))
    sigma, eta = 0.1, 0.5
    J, grad, W, b = hidden_state_objective(X, y, theta, sigma=sigma, eta=eta)
    assert abs(J - _dual_value_oracle(X, y, theta, sigma, eta)) < 1e-9 * max(1, abs(J))
    # strong duality: the primal value at the returned weights is the same number
    assert abs(J - _primal_value(X, y, theta, W, b, sigma, eta)) < 1e-8 * max(1, abs(J))
    # and min_m <= theta-average: the latent objective of (W, b) is at most J(theta)
    assert latent_objective(X, y, W, b, sigma=sigma, eta=eta) <= J + 1e-12


def test_gradient_matches_finite_differences_along_the_simplex():
    X, y = _latent_data(1)
    rng = np.random.default_rng(1)
    theta = project_simplex(rng.random((6, 2)) + 0.5)
    sigma, eta = 0.1, 0.5
    _, grad, _, _ = hidden_state_objective(X, y, theta, sigma=sigma, eta=eta)
    h = 1e-6
    for _ in range(4):
        D = rng.normal(size=theta.shape)
        D -= D.mean(axis=1, keepdims=True)  # tangent to the simplices
        jp = hidden_state_objective(X, y, theta + h * D, sigma=sigma, eta=eta)[0]
        jm = hidden_state_objective(X, y, theta - h * D, sigma=sigma, eta=eta)[0]
        assert abs((jp - jm) / (2 * h) - np.sum(grad * D)) < 1e-6


def test_hidden_state_objective_is_concave_not_convex():
    """Our finding: J(theta) is a minimum of functions linear in theta, hence concave.

    The paper's Theorem 2 calls it convex; on segments between hard assignments the second
    differences are never positive and on some segments they are clearly negative.
    """
    X, y = _latent_data(2)
    rng = np.random.default_rng(2)
    sigma, eta = 0.1, 0.5
    strict = 0
    for _ in range(3):
        T0 = np.eye(2)[rng.integers(0, 2, 6)]  # two hard assignments (simplex vertices)
        T1 = 1.0 - T0
        ts = np.linspace(0, 1, 7)
        vals = np.array([hidden_state_objective(X, y, (1 - t) * T0 + t * T1, sigma=sigma,
                                                eta=eta)[0] for t in ts])
        second = vals[:-2] - 2 * vals[1:-1] + vals[2:]
        assert np.all(second <= 1e-10)
        strict += int(np.any(second < -1e-6))
    assert strict > 0


@pytest.mark.parametrize("seed", [0, 3, 7])
def test_methods_minimize_the_same_objective_and_respect_global_optimum(seed):
    X, y = _latent_data(seed)
    sigma = 0.1
    opt, T_opt, count = latent_global_optimum(X, y, n_states=2, sigma=sigma)
    assert count == 2 ** 5  # set partitions of 6 positives into <= 2 blocks
    # the enumerated optimum is attained by its own assignment's SVMs
    J_opt, _, W, b = hidden_state_objective(X, y, T_opt, sigma=sigma)
    assert abs(latent_objective(X, y, W, b, sigma=sigma) - opt) < 1e-9
    for method in ("pdgdp", "ao", "cccp", "sgd"):
        r = train_latent_svm(X, y, n_states=2, method=method, sigma=sigma, random_state=seed,
                             max_iter=60)
        J = latent_objective(X, y, r.weights, r.intercepts, sigma=sigma)
        assert abs(J - r.objective) < 1e-12
        assert r.objective >= opt - 1e-7
        assert r.objective_history.shape[0] == r.weights_history.shape[0]
        if method in ("ao", "cccp"):
            assert np.all(np.diff(r.objective_history) <= 1e-9)


def test_pdgdp_cached_regions_do_not_change_the_iterates():
    X, y = _latent_data(4, n_pos=8, n_neg=10)
    theta0 = project_simplex(np.random.default_rng(4).random((8, 2)))  # an interior start
    kw = dict(n_states=2, method="pdgdp", sigma=0.1, max_iter=25, theta0=theta0, step=2.0)
    a = train_latent_svm(X, y, **kw)
    b = train_latent_svm(X, y, use_regions=False, **kw)
    assert a.n_region_hits > 0 and b.n_region_hits == 0
    assert a.n_qp_solves < b.n_qp_solves
    np.testing.assert_allclose(a.theta_history, b.theta_history, atol=1e-9)
    np.testing.assert_allclose(a.objective_history, b.objective_history, rtol=1e-9, atol=1e-12)


@settings(deadline=None, max_examples=30)
@given(st.lists(st.floats(-5, 5), min_size=3, max_size=3), st.integers(0, 1000))
def test_project_simplex_is_the_euclidean_projection(v, seed):
    v = np.asarray(v)
    p = project_simplex(v)[0]
    assert abs(p.sum() - 1) < 1e-12 and np.all(p >= 0)
    # exact optimality certificate (KKT of min ||x - v||^2 on the simplex; the minimizer is
    # unique): v - p = tau 1 - mu with mu >= 0 and mu_i p_i = 0, i.e. v_i - p_i equals one
    # tau on the support of p and is <= tau off it
    on = p > 0
    tau = float(np.mean((v - p)[on]))
    np.testing.assert_allclose((v - p)[on], tau, atol=1e-12)
    assert np.all((v - p)[~on] <= tau + 1e-12)
    # an independent solver finds no closer point (CLARABEL is only accurate to ~1e-5 at a
    # vertex of the simplex, e.g. v = (0, 0, 1), so its point is not compared entrywise)
    x = cp.Variable(3)
    cp.Problem(cp.Minimize(cp.sum_squares(x - v)), [x >= 0, cp.sum(x) == 1]).solve(
        solver=cp.CLARABEL)
    # the solver's point may be infeasible by ~1e-9 (e.g. x_3 = -6e-10 for v = (0, 0, -2)),
    # which lets it undercut the true minimum; compare with its feasible version instead
    xf = np.clip(x.value, 0.0, None)
    xf /= xf.sum()
    assert np.sum((p - v) ** 2) <= np.sum((xf - v) ** 2) + 1e-12


@settings(deadline=None, max_examples=8)
@given(st.integers(0, 10_000), st.sampled_from(["duplicates", "collinear", "ties"]))
def test_degenerate_latent_data(seed, kind):
    X, y = _latent_data(seed)
    if kind == "duplicates":
        X[3:6] = X[0:3]
        X[10:14] = X[6:10]
    elif kind == "collinear":
        X = np.c_[X, 2 * X[:, 0]]
    else:
        X = np.round(X)  # many tied points
    theta = np.tile([0.5, 0.5], (6, 1))
    J, grad, W, b = hidden_state_objective(X, y, theta, sigma=0.1)
    assert abs(J - _dual_value_oracle(X, y, theta, 0.1, np.mean(y < 0))) < 1e-8 * max(1, J)
    r = train_latent_svm(X, y, n_states=2, method="pdgdp", sigma=0.1, max_iter=15,
                         theta0=theta)
    assert np.isfinite(r.objective)
    assert abs(r.objective - latent_objective(X, y, r.weights, r.intercepts, sigma=0.1)) < 1e-12


def test_classifier_estimator():
    X, y = _latent_data(5, n_pos=10, n_neg=12)
    labels = np.where(y > 0, "pos", "neg")
    clf = LatentSVMClassifier(n_states=2, method="ao", sigma=0.1).fit(X, labels)
    assert set(clf.predict(X)) <= {"pos", "neg"}
    assert clf.score(X, labels) >= 0.8
    with pytest.raises(ValueError, match="two classes"):
        LatentSVMClassifier().fit(X, np.zeros(len(y)))
    with pytest.raises(ValueError, match="Invalid parameter"):
        clf.set_params(C=1)


@parametrize_with_checks([LatentSVMClassifier(method="pdgdp", max_iter=5),
                          LatentSVMClassifier(method="ao", max_iter=5)])
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def test_classifier_in_scikit_learn_tools():
    """clone, Pipeline, GridSearchCV and pickle; 0/1 labels; NotFittedError before fit."""
    import pickle

    from sklearn.base import clone
    from sklearn.exceptions import NotFittedError
    from sklearn.model_selection import GridSearchCV
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _latent_data(5, n_pos=10, n_neg=12)
    y01 = (y > 0).astype(int)
    est = LatentSVMClassifier(n_states=2, method="ao", sigma=0.1, random_state=3)
    with pytest.raises(NotFittedError):
        est.predict(X)
    c = clone(est)
    assert c.get_params() == est.get_params() and c.random_state == 3
    pipe = make_pipeline(StandardScaler(), est).fit(X, y01)
    assert set(pipe.predict(X)) <= {0, 1} and pipe.score(X, y01) >= 0.8
    grid = GridSearchCV(est, {"sigma": [0.1, 1.0]}, cv=2).fit(X, y01)
    assert grid.best_params_["sigma"] in (0.1, 1.0)
    fitted = est.fit(X, y01)
    assert fitted.n_features_in_ == X.shape[1] and list(fitted.classes_) == [0, 1]
    again = pickle.loads(pickle.dumps(fitted))
    np.testing.assert_array_equal(again.decision_function(X), fitted.decision_function(X))


@pytest.mark.parametrize("kwargs,match", [
    (dict(n_states=0), "n_states"),
    (dict(n_states=1.5), "n_states"),
    (dict(n_states=100), "n_states"),
    (dict(n_states=2, method="newton"), "method"),
    (dict(n_states=2, sigma=-1.0), "sigma"),
    (dict(n_states=2, eta=1.0), "eta"),
    (dict(n_states=2, max_iter=0), "max_iter"),
    (dict(n_states=2, theta0=np.ones((6, 2))), "theta"),
    (dict(n_states=2, theta0=np.ones((5, 2)) / 2), "theta"),
])
def test_bad_input(kwargs, match):
    X, y = _latent_data(0)
    with pytest.raises(ValueError, match=match):
        train_latent_svm(X, y, **kwargs)


@pytest.mark.parametrize("V, match", [
    (np.array([0.2, np.nan, 0.5]), "V must contain only finite values"),
    (np.array([[0.2, 0.3], [np.inf, 0.0]]), "V must contain only finite values"),
    (np.zeros((2, 2, 2)), "V must be a non-empty 1-D vector"),
    (np.float64(0.5), "V must be a non-empty 1-D vector"),
    (np.zeros(0), "V must be a non-empty 1-D vector"),
    (["a", "b"], "V must be a numeric"),
])
def test_project_simplex_bad_input(V, match):
    with pytest.raises(ValueError, match=match):
        project_simplex(V)


@pytest.mark.parametrize("max_assignments", [2.5, 0, -1, "many", True])
def test_latent_global_optimum_checks_max_assignments(max_assignments):
    X, y = _latent_data(0)
    with pytest.raises(ValueError, match="max_assignments must be an integer >= 1"):
        latent_global_optimum(X, y, n_states=1, max_assignments=max_assignments)


def test_latent_global_optimum_refuses_before_solving_anything(monkeypatch):
    """6 positives in <= 2 states: 2**5 = 32 assignments; the refusal comes before any solve."""
    from pathlib_core.pdgdp import latent

    calls = []
    orig = latent._Components.evaluate

    def counting(self, T):
        calls.append(1)
        return orig(self, T)

    monkeypatch.setattr(latent._Components, "evaluate", counting)
    X, y = _latent_data(0)
    with pytest.raises(ValueError, match="more than max_assignments=31"):
        latent_global_optimum(X, y, n_states=2, max_assignments=31)
    assert calls == []
    _, _, count = latent_global_optimum(X, y, n_states=2, max_assignments=32.0)
    assert count == 32 and len(calls) == 32


def test_bad_labels_and_shapes():
    X, y = _latent_data(0)
    with pytest.raises(ValueError, match="y"):
        train_latent_svm(X, np.ones_like(y), n_states=2)
    with pytest.raises(ValueError, match="y"):
        train_latent_svm(X, y[:-1], n_states=2)
    with pytest.raises(ValueError, match="X"):
        train_latent_svm(np.c_[X[:, :1], np.full(len(y), np.nan)], y, n_states=2)


# --------------------------------------------------------------------------------------------
# Feature scale: every component solved exactly at any scale
# --------------------------------------------------------------------------------------------
def _component_certificate(X, y, u, w, b, sigma):
    """Relative residual of the optimality of ``(w, b)`` for one weighted linear SVM.

    ``min_w,b sigma/2 ||w||^2 + sum_i u_i [1 - y_i (x_i'w + b)]_+`` is solved by ``(w, b)``
    iff some ``alpha`` in the subdifferential of the hinge terms (``alpha_i = u_i`` below the
    margin, ``0`` above it, in ``[0, u_i]`` on it) gives ``sigma w = X'(y o alpha)`` and
    ``y'alpha = 0``. The points on the margin (relative 1e-9) get the least-squares
    ``alpha``; the residual of each condition is relative to the size of its terms.
    """
    m = y * (X @ w + b)
    on = np.abs(m - 1.0) <= 1e-9
    alpha = np.where(m < 1.0, u, 0.0)
    alpha[on] = 0.0
    rhs_w = sigma * w - X.T @ (y * alpha)
    rhs_b = -float(y @ alpha)
    if on.any():  # a bounded least-squares alpha on the margin (the dual's own is in it)
        Mtx = np.vstack([X[on].T * y[on], y[on][None, :]])
        rhs = np.concatenate([rhs_w, [rhs_b]])
        row = np.abs(Mtx).max(axis=1, keepdims=True)  # each condition in its own units
        row[row == 0] = 1.0
        alpha[on] = lsq_linear(Mtx / row, rhs / row[:, 0], bounds=(0.0, u[on] + 1e-300),
                               method="bvls", tol=1e-15, max_iter=10_000).x
    stat = np.abs(sigma * w - X.T @ (y * alpha)) / (sigma * np.abs(w)
                                                     + np.abs(X).T @ np.abs(alpha) + 1e-300)
    bal = abs(float(y @ alpha)) / float(np.sum(np.abs(alpha)) + 1e-300)
    box = np.max(np.maximum(-alpha, alpha - u) / np.maximum(u, 1e-300))
    return max(float(np.max(stat)), bal, float(max(box, 0.0)))


def _scaled_latent_data(seed=0, n_pos=12, n_neg=16, p=4):
    rng = np.random.default_rng(seed)
    h = n_pos // 2
    shift = np.zeros(p)
    shift[0] = 2.0
    Xp = np.vstack([rng.normal(shift, 0.8, (h, p)), rng.normal(-shift, 0.8, (n_pos - h, p))])
    Xn = rng.normal(0.0, 0.9, (n_neg, p))
    return np.vstack([Xp, Xn]), np.r_[np.ones(n_pos), -np.ones(n_neg)]


@pytest.mark.parametrize("scale", ["1e8", "1e-8", "mixed"])
@pytest.mark.parametrize("method", ["pdgdp", "ao"])
def test_scaled_features_train_to_exact_components(scale, method):
    # before: RuntimeError (the dual QP stopped at 'max_iter') at 1e8 and mixed; at 1e8 the
    # dual's w = X'(y o alpha) / sigma had no correct digit (objective 0.49, AO 1.82, against
    # 0.145 from the primal)
    X, y = _scaled_latent_data()
    p = X.shape[1]
    d = {"1e8": np.full(p, 1e8), "1e-8": np.full(p, 1e-8),
         "mixed": 10.0 ** np.linspace(-6, 6, p)}[scale]
    Xs = X * d
    theta0 = np.eye(2)[np.r_[np.zeros(6, int), np.ones(6, int)]]
    sigma = 0.01
    r = train_latent_svm(Xs, y, n_states=2, method=method, sigma=sigma, theta0=theta0,
                         max_iter=40)
    assert np.all(np.isfinite(r.weights)) and np.isfinite(r.objective)
    assert r.objective <= r.objective_history[0] + 1e-12 * abs(r.objective_history[0])
    # every component at the returned theta is the exact weighted SVM (certificate on w, b)
    eta = float(np.mean(y < 0))
    c = np.where(y > 0, eta / y.size, (1 - eta) / y.size)
    _, _, W, b = hidden_state_objective(Xs, y, r.theta, sigma=sigma)
    for m in range(2):
        u = c.copy()
        u[y > 0] *= r.theta[:, m]
        assert _component_certificate(Xs, y, u, W[m], b[m], sigma) <= 1e-9


@pytest.mark.parametrize("s", [2.0 ** 20, 1e8, 1e-8])
def test_common_feature_scale_is_a_rescaled_sigma(s):
    # the model's exact symmetry: (s X, sigma) is (X, sigma / s^2) with weights W / s, the
    # same intercepts and decision values
    X, y = _scaled_latent_data(1, n_pos=20, n_neg=30)
    X = X + np.random.default_rng(5).normal(0.0, 1.0, X.shape)  # overlapping classes
    theta0 = np.eye(2)[np.r_[np.zeros(10, int), np.ones(10, int)]]
    kw = dict(n_states=2, method="ao", theta0=theta0, max_iter=20)
    a = train_latent_svm(s * X, y, sigma=0.01, **kw)
    b = train_latent_svm(X, y, sigma=0.01 / s**2, **kw)
    assert b.objective > 0.05  # not separable: the hinge terms count
    assert abs(a.objective - b.objective) <= 1e-12 * b.objective
    fa, fb = a.decision_function(s * X), b.decision_function(X)
    np.testing.assert_allclose(fa, fb, rtol=0, atol=1e-12 * np.max(np.abs(fb)))
    np.testing.assert_array_equal(a.theta, b.theta)


def test_component_weights_match_the_primal_oracle_at_moderate_scale():
    X, y = _scaled_latent_data(2)
    X = X * np.array([1e-2, 1.0, 1e2, 10.0])
    theta = project_simplex(np.random.default_rng(2).random((12, 2)))
    sigma = 0.05
    _, _, W, b = hidden_state_objective(X, y, theta, sigma=sigma)
    eta = float(np.mean(y < 0))
    c = np.where(y > 0, eta / y.size, (1 - eta) / y.size)
    for m in range(2):
        u = c.copy()
        u[y > 0] *= theta[:, m]
        w, bb = cp.Variable(X.shape[1]), cp.Variable()
        prob = cp.Problem(cp.Minimize(sigma / 2 * cp.sum_squares(w)
                                      + u @ cp.pos(1 - cp.multiply(y, X @ w + bb))))
        prob.solve(solver=cp.CLARABEL)
        ours = sigma / 2 * W[m] @ W[m] + u @ np.maximum(1 - y * (X @ W[m] + b[m]), 0)
        assert ours <= prob.value * (1 + 1e-9)
        assert _component_certificate(X, y, u, W[m], b[m], sigma) <= 1e-9


def test_sgd_divergence_is_reported():
    X, y = _scaled_latent_data(3)
    with pytest.warns(RuntimeWarning, match="SGD diverged"):
        r = train_latent_svm(1e8 * X, y, n_states=2, method="sgd", max_iter=3)
    assert not r.converged


@pytest.mark.parametrize("sigma", [1e-100, 1e-300])
def test_sigma_beyond_the_float_resolution_raises_naming_it(sigma):
    # before: sigma = 1e-100 returned a component off its optimum (certificate 0.29),
    # 1e-150 an objective of 7e10, 1e-300 a RuntimeError from the QP
    X, y = _scaled_latent_data(4)
    with pytest.raises(ValueError, match="sigma = .* is below 1e-60 times"):
        train_latent_svm(X, y, n_states=2, sigma=sigma)
    with pytest.raises(ValueError, match="sigma"):
        hidden_state_objective(X, y, np.full((12, 2), 0.5), sigma=sigma)


@pytest.mark.parametrize("sigma", [1e-40, 1e300])
def test_extreme_sigma_in_range_trains_exact_components(sigma):
    X, y = _scaled_latent_data(4)
    r = train_latent_svm(X, y, n_states=2, method="ao", sigma=sigma, max_iter=10)
    eta = float(np.mean(y < 0))
    c = np.where(y > 0, eta / y.size, (1 - eta) / y.size)
    _, _, W, b = hidden_state_objective(X, y, r.theta, sigma=sigma)
    for m in range(2):
        u = c.copy()
        u[y > 0] *= r.theta[:, m]
        assert _component_certificate(X, y, u, W[m], b[m], sigma) <= 1e-9
