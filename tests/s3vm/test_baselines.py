"""Tests of the S3VM peers in :mod:`pathlib_core.s3vm.baselines`."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from pathlib_core.s3vm.baselines import annealing_tsvm, cccp_tsvm, supervised_svm
from pathlib_core.s3vm.path import class_balance_bias, s3vm_objective, supervised_fixed_bias


def _data(seed=0, n=90, n_lab=10):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-1, 1, (n // 2, 2)), rng.normal(1, 1, (n // 2, 2))])
    yt = np.r_[-np.ones(n // 2), np.ones(n // 2)]
    y = np.zeros(n)
    idx = np.r_[0, n - 1, rng.choice(n, n_lab - 2, replace=False)]
    y[idx] = yt[idx]
    return rbf_kernel(X, gamma=0.5), y, yt


def _ramp_objective(K, y, coef, b, C, Cu, s):
    f = K @ coef + b
    lab, unl = y != 0, y == 0

    def ramp(z):
        return np.maximum(0, 1 - z) - np.maximum(0, s - z)

    return (0.5 * coef @ K @ coef + C * np.maximum(0, 1 - y[lab] * f[lab]).sum()
            + Cu * (ramp(f[unl]) + ramp(-f[unl])).sum())


def test_supervised_svm_matches_libsvm_on_labeled_points():
    K, y, _ = _data()
    res = supervised_svm(K, y, C=3.0)
    lab = np.flatnonzero(y != 0)
    clf = SVC(kernel="precomputed", C=3.0, tol=1e-8).fit(K[np.ix_(lab, lab)], y[lab])
    np.testing.assert_allclose(res.decision_function(K[:, lab]),
                               clf.decision_function(K[np.ix_(lab, lab)]), atol=1e-6)
    assert np.all(res.coef[y == 0] == 0)
    f = K @ res.coef + res.intercept
    assert np.array_equal(res.labels[y == 0], np.where(f[y == 0] >= 0, 1, -1))


def test_annealing_keeps_balance_and_leaves_no_switching_pair():
    K, y, _ = _data(1)
    C, Cu = 10.0, 5.0
    res = annealing_tsvm(K, y, C=C, C_unlabeled=Cu, n_steps=10)
    unl = y == 0
    r = np.mean(y[~unl] == 1)
    assert np.sum(res.labels[unl] == 1) == int(round(r * unl.sum()))
    assert np.array_equal(res.labels[~unl], y[~unl])
    f = K @ res.coef + res.intercept
    xi = np.maximum(0, 1 - res.labels * f)
    pos = xi[unl & (res.labels == 1)]
    neg = xi[unl & (res.labels == -1)]
    if pos.size and neg.size:
        assert pos.max() + neg.max() <= 2 + 1e-9  # S3VM-light's stopping condition
    J = s3vm_objective(K, y, res.labels, res.coef, res.intercept, C=C, C_unlabeled=Cu)
    assert J == pytest.approx(res.objective, rel=1e-12)
    assert res.intercept == pytest.approx(class_balance_bias(y))


def test_cccp_is_a_fixed_point_and_decreases_the_ramp_objective():
    K, y, _ = _data(3)
    C, Cu, s = 10.0, 5.0, -0.3
    res = cccp_tsvm(K, y, C=C, C_unlabeled=Cu, s=s)
    assert res.info["n_iter"] < 50  # converged (rho unchanged)
    b = class_balance_bias(y)
    lab = y != 0

    ylab = np.where(lab, y, 1.0)
    theta0 = supervised_fixed_bias(K, ylab, lab, b, C)
    start = _ramp_objective(K, y, ylab * theta0, b, C, Cu, s)
    end = _ramp_objective(K, y, res.coef, res.intercept, C, Cu, s)
    assert end <= start + 1e-9
    f = K @ res.coef + res.intercept
    assert np.array_equal(res.labels[~lab], np.where(f[~lab] >= 0, 1, -1))


@pytest.mark.parametrize("fn", [annealing_tsvm, cccp_tsvm])
def test_transductive_methods_beat_chance(fn):
    K, y, yt = _data(4)
    res = fn(K, y, C=10.0, C_unlabeled=1.0)
    assert np.mean(res.labels[y == 0] == yt[y == 0]) > 0.7


@pytest.mark.parametrize("fn", [annealing_tsvm, cccp_tsvm])
@pytest.mark.parametrize("kwargs, match", [
    (dict(C=0.0), "C must be > 0"),
    (dict(C_unlabeled=-1.0), "C_unlabeled must be > 0"),
    (dict(y=np.r_[1.0, -1.0, 3.0, 0.0]), "y must contain only"),
    (dict(y=np.r_[1.0, -1.0, 1.0, 1.0]), "unlabeled"),
])
def test_bad_input(fn, kwargs, match):
    X = np.arange(8.0).reshape(4, 2)
    args = dict(K=X @ X.T, y=np.r_[1.0, -1.0, 0.0, 0.0], C=1.0, C_unlabeled=1.0)
    args.update(kwargs)
    K, y = args.pop("K"), args.pop("y")
    with pytest.raises(ValueError, match=match):
        fn(K, y, **args)


def test_bad_n_steps():
    K, y, _ = _data()
    with pytest.raises(ValueError, match="n_steps"):
        annealing_tsvm(K, y, C=1.0, C_unlabeled=1.0, n_steps=0)


def _indefinite_kernels():
    K, y, _ = _data(n=40)
    X = np.random.default_rng(1).normal(size=(40, 3))
    R = K
    w, V = np.linalg.eigh(R)
    yield "sigmoid", np.tanh(0.5 * X @ X.T - 1.0), y
    yield "rbf minus identity", R - 0.3 * np.eye(40), y
    # one negative eigenvalue along R's smallest eigenvector: every 2 x 2 principal minor is
    # still non-negative, so only the solvers' negative curvature reveals it
    Kn = R - (w[0] + 1e-2) * np.outer(V[:, 0], V[:, 0])
    yield "passes the 2 x 2 screen", 0.5 * (Kn + Kn.T), y


@pytest.mark.parametrize("case", list(_indefinite_kernels()), ids=lambda c: c[0])
@pytest.mark.parametrize("method", [cccp_tsvm, annealing_tsvm])
def test_indefinite_kernel_is_named(case, method):
    """A kernel that is not PSD makes the inner problems non-convex: the baselines used to
    return a stationary point silently; they raise ValueError naming K."""
    _, K, y = case
    with pytest.raises(ValueError, match="X must be positive semi-definite"):
        method(K, y, C=10.0, C_unlabeled=10.0)


@pytest.mark.parametrize("split, C, n_steps", [(2, 100.0, 10), (0, 10.0, 20)])
def test_annealing_on_duplicated_points_converges(split, C, n_steps):
    # regression: mammographic's training halves repeat points (315 distinct of 415); a
    # reduced Hessian with a tiny spectral gap gave a ray whose entries all fell below its
    # accuracy but one, the resulting direction did not descend, and the inner QP repeated
    # that null step until max_iter (the paper-scale S3VM protocol failed there)
    from pathlib_core import datasets
    from pathlib_core.s3vm.protocol import make_split

    X, y = datasets.load("mammographic", standardize=True)
    lab, unl, _, _ = make_split(y, split)
    tr = np.r_[lab, unl]
    assert len(np.unique(X[tr], axis=0)) < len(tr)
    ytr = np.r_[y[lab], np.zeros(len(unl))]
    K = rbf_kernel(X[tr], gamma=1.0 / X.shape[1])
    res = annealing_tsvm(K, ytr, C=C, C_unlabeled=C, n_steps=n_steps)
    assert res.status == "converged"
    assert res.info["n_qp"] >= n_steps
