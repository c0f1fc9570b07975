"""Conformal kernel optimization (Theorem 2.3, eq. (41)) and the MCM estimators."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.utils.estimator_checks import parametrize_with_checks

from pathlib_core.core.kernels import conformal_basis, conformal_kernel, rbf_kernel
from pathlib_core.mcm import (
    ConformalMCMClassifier,
    ConformalSVMClassifier,
    MCMClassifier,
    fisher_ratio_direct,
    optimize_conformal,
    scatter_matrices,
)


def _data(seed, n=40, d=2):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.45, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    X = rng.normal(size=(n, d)) + 0.8 * y[:, None]
    return X, y


@settings(deadline=None, max_examples=25)
@given(seed=st.integers(0, 10_000), gamma=st.floats(0.05, 3.0), shuffle=st.booleans())
def test_theorem_2_3_identity(seed, gamma, shuffle):
    """J = c'B0c / c'W0c equals tr S_b / tr S_w in the empirical feature space of C K0 C."""
    X, y = _data(seed, n=25)
    if shuffle:  # points of both classes interleaved: (38)-(39) must not rely on sorting
        order = np.random.default_rng(seed).permutation(25)
        X, y = X[order], y[order]
    K0 = rbf_kernel(X, gamma=gamma)
    c = np.random.default_rng(seed + 1).uniform(0.2, 2.0, size=25)
    B0, W0 = scatter_matrices(K0, y)
    J_closed = (c @ B0 @ c) / (c @ W0 @ c)
    J_direct = fisher_ratio_direct(conformal_kernel(K0, c), y)
    assert abs(J_closed - J_direct) <= 1e-8 * max(1.0, abs(J_direct))


def test_scatter_matrices_block_form():
    """Sorted by class, B and W are exactly the block matrices (38) and (39)."""
    X, y = _data(3, n=12)
    order = np.argsort(y)
    X, y = X[order], y[order]
    K = rbf_kernel(X, gamma=0.5)
    m1 = int(np.sum(y < 0))
    n = y.size
    blk = np.zeros_like(K)
    blk[:m1, :m1] = K[:m1, :m1] / m1
    blk[m1:, m1:] = K[m1:, m1:] / (n - m1)
    B, W = scatter_matrices(K, y)
    np.testing.assert_allclose(B, blk - K / n, atol=1e-15)
    np.testing.assert_allclose(W, np.diag(np.diag(K)) - blk, atol=1e-15)
    assert np.linalg.eigvalsh(W).min() >= -1e-12  # within-class scatter is PSD


@pytest.mark.parametrize("D", [1e-3, 1e-1])
def test_eigenproblem_residual_and_optimality(D):
    X, y = _data(5)
    K0 = rbf_kernel(X, gamma=0.5)
    K1 = conformal_basis(X, X[::4], gamma=0.5)
    sol = optimize_conformal(K0, y, K1, D=D)
    a = sol.alpha
    assert sol.eig_residual <= 1e-10
    rq = (a @ sol.P @ a) / (a @ sol.Q @ a)
    assert abs(rq - sol.gamma_eig) <= 1e-9 * max(1, abs(sol.gamma_eig))
    # no random direction beats the top eigenvector on the Rayleigh quotient
    rng = np.random.default_rng(0)
    for _ in range(200):
        v = rng.normal(size=a.size)
        assert (v @ sol.P @ v) / (v @ sol.Q @ v) <= sol.gamma_eig * (1 + 1e-9) + 1e-12
    np.testing.assert_allclose(K1 @ a, sol.c_train, atol=1e-12)
    assert abs(np.mean(sol.c_train ** 2) - 1) <= 1e-12 and sol.c_train.mean() > 0


def test_duplicate_cores_raise_ridge_not_crash():
    X, y = _data(6, n=20)
    cores = np.vstack([X[:3], X[:3]])  # K1 has duplicated columns: K1'K1 singular
    sol = optimize_conformal(rbf_kernel(X, gamma=1.0), y, conformal_basis(X, cores, gamma=1.0),
                             D=1e-3)
    assert np.all(np.isfinite(sol.alpha)) and np.isfinite(sol.gamma_eig)


def test_conformal_bad_input():
    X, y = _data(7, n=10)
    K0 = rbf_kernel(X, gamma=1.0)
    K1 = conformal_basis(X, X[:2], gamma=1.0)
    with pytest.raises(ValueError, match="D must be > 0"):
        optimize_conformal(K0, y, K1, D=0.0)
    with pytest.raises(ValueError, match="K1 must have 10 rows"):
        optimize_conformal(K0, y, K1[:5], D=1e-3)
    with pytest.raises(ValueError, match="y must contain both classes"):
        scatter_matrices(K0, np.ones(10))


def test_fisher_ratio_direct_zero_within_class_scatter():
    """No kept eigen-direction: tr S_w = 0 and J = 0/0 is undefined (was a ZeroDivisionError)."""
    with pytest.raises(ValueError, match="within-class scatter .* is zero.*J is undefined"):
        fisher_ratio_direct(np.zeros((4, 4)), np.array([1.0, 1.0, -1.0, -1.0]))


@pytest.mark.parametrize("K", [-np.eye(4), np.diag([1.0, 1.0, 1.0, -0.5])],
                         ids=["negative", "indefinite"])
def test_fisher_ratio_direct_needs_a_psd_kernel(K):
    """The feature-space images exist only for a PSD kernel: dropping negative eigenvalues
    (as before) computed the ratio of another kernel; now the cause is named."""
    with pytest.raises(ValueError, match="K must be positive semi-definite"):
        fisher_ratio_direct(K, np.array([1.0, 1.0, -1.0, -1.0]))


# -- estimators -------------------------------------------------------------------------------

# The conformal estimators run with the l1 option here only to keep the suite within its
# time budget (the l1 LP is ~3x faster on the checks' 200-point blobs); the code paths of
# l1 = 0 are exercised by the default MCMClassifier and the other conformal tests.
@parametrize_with_checks([MCMClassifier(), MCMClassifier(kernel="linear", l1=0.1),
                          MCMClassifier(kernel="precomputed", l1=0.1),
                          ConformalMCMClassifier(l1=0.01), ConformalSVMClassifier(l1=0.01)])
def test_scikit_learn_checks(estimator, check):
    check(estimator)


def test_precomputed_matches_rbf():
    X, y = _data(8)
    Xt = _data(9, n=15)[0]
    a = MCMClassifier(C=1.0, gamma=0.5, l1=0.05).fit(X, y)
    b = MCMClassifier(C=1.0, kernel="precomputed", l1=0.05).fit(rbf_kernel(X, gamma=0.5), y)
    np.testing.assert_allclose(a.decision_function(Xt),
                               b.decision_function(rbf_kernel(Xt, X, gamma=0.5)), atol=1e-7)


def test_prediction_uses_only_training_support():
    """Moving non-support training points after fitting cannot change the prediction."""
    X, y = _data(10)
    Xt = _data(11, n=15)[0]
    clf = MCMClassifier(gamma=0.5, l1=0.1).fit(X, y)
    assert 0 < clf.support_.size < X.shape[0]
    f = clf.decision_function(Xt)
    manual = rbf_kernel(Xt, X[clf.support_], gamma=0.5) @ clf.dual_coef_ + clf.intercept_
    np.testing.assert_allclose(f, manual, atol=1e-10)
    assert clf.n_support_.sum() == clf.support_.size


def test_conformal_prediction_is_test_vs_train_kernel():
    X, y = _data(12)
    Xt = _data(13, n=9)[0]
    clf = ConformalMCMClassifier(gamma=0.5, l1=0.05).fit(X, y)
    Z, Zt = (X - clf.mean_) / clf.scale_, (Xt - clf.mean_) / clf.scale_
    ct = conformal_basis(Zt, clf.cores_, gamma=clf._gamma1) @ clf.alpha_
    c = conformal_basis(Z, clf.cores_, gamma=clf._gamma1) @ clf.alpha_
    Kt = rbf_kernel(Zt, Z, gamma=clf._gamma0) * np.outer(ct, c)
    np.testing.assert_allclose(clf.decision_function(Xt),
                               Kt @ clf.result_.coef + clf.intercept_, atol=1e-8)
    # a test point's score does not depend on the other test points
    np.testing.assert_allclose(clf.decision_function(Xt[:1]), clf.decision_function(Xt)[:1],
                               atol=1e-12)
    assert clf.conformal_.J_opt >= clf.conformal_.J_base - 1e-9


def test_conformal_no_cores_fallback():
    """A huge C-free problem where lambda = 0 is optimal: documented fallback c = 1."""
    X = np.array([[0.0], [0.0], [0.0], [0.0]])
    y = np.array([1, 1, -1, -1])
    clf = ConformalMCMClassifier(C=0.1, gamma=1.0).fit(X, y)
    assert clf.base_result_.n_support == 0 or clf.fallback_ is None
    if clf.fallback_ is not None:
        assert clf.cores_.shape[0] == 0
        np.testing.assert_allclose(clf.test_kernel(X), rbf_kernel(X, gamma=1.0))


@pytest.mark.parametrize("est, kw, match", [
    (MCMClassifier, {"C": 0}, "C must be > 0"),
    (MCMClassifier, {"kernel": "poly"}, "kernel must be one of"),
    (MCMClassifier, {"gamma": -1.0}, "gamma must be > 0"),
    (MCMClassifier, {"gamma": "auto"}, "gamma must be one of"),
    (ConformalMCMClassifier, {"D": 0.0}, "D must be > 0"),
    (ConformalMCMClassifier, {"cores": "some"}, "cores must be one of"),
    (ConformalSVMClassifier, {"C": -2.0}, "C must be > 0"),
])
def test_estimator_bad_parameters(est, kw, match):
    X, y = _data(14, n=10)
    with pytest.raises(ValueError, match=match):
        est(**kw).fit(X, y)


def test_estimator_bad_data():
    X, y = _data(15, n=10)
    with pytest.raises(ValueError, match="one class"):
        MCMClassifier().fit(X, np.ones(10))
    with pytest.raises(ValueError, match="Only binary classification"):
        MCMClassifier().fit(X, np.arange(10) % 3)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ConformalMCMClassifier().fit(Xn, y)
    with pytest.raises(ValueError, match="square kernel"):
        MCMClassifier(kernel="precomputed").fit(X, y)
