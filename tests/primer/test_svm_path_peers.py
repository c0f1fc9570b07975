"""The data sets and documented examples of R's ``svmpath`` (Hastie 2003-2020, CRAN), as tests
of :func:`pathlib_core.primer.svm.svm_path`.

``tests/primer/data/svmpath_datasets.npz`` holds the four data sets of ``data(svmpath)`` (CRAN
package ``svmpath`` 0.970, file ``data/svmpath.RData``, md5 34edb9d20c6982c2f372aaa13fadd92f),
read with the ``rdata`` package once and stored as arrays ``<name>__x`` / ``<name>__y``:
``balanced.overlap`` (12 points, 6 per class), ``balanced.separated`` (12, 6 + 6),
``unbalanced.separated`` (11: 4 negative, 7 positive) and ``mixture.data`` (the 200-point
mixture of Hastie, Tibshirani and Friedman's *Elements of Statistical Learning*).

Hastie, Rosset, Tibshirani and Zhu (2004) trace the path in ``lambda = 1 / C`` with
multipliers ``a_i = alpha_i / C`` in ``[0, 1]`` and ``f(x) = (sum_i a_i y_i K(x, x_i) + a_0) /
lambda``, so our intercept is ``b = a_0 / lambda``. For large ``lambda`` every point is in
the left set; section 4 gives the start of the path:

* balanced classes (4.1): with ``f = K y``, ``f_max = max_{y_i = +1} f_i``, ``f_min =
  min_{y_i = -1} f_i``, the first event is at ``lambda_0 = (f_max - f_min) / 2``, where the
  two extreme points enter the elbow, and the intercept there is ``b = 1 - f_max / lambda_0``
  (``Balanced.Initialization``); below it ``alpha = C 1``;
* unbalanced classes (4.2, ``n_+ > n_-``): the minority class stays at ``a = 1`` and the
  majority's multipliers solve ``min 1/2 a_+' Q_{++} a_+ + (Q_{+-} 1)' a_+`` subject to
  ``sum a_+ = n_-``, ``0 <= a_+ <= 1`` (``Unbalanced.Initialization``); with ``f = K (y a)``,
  ``f_min`` the minimum over the minority and ``f_max`` the maximum over the majority's
  elbow, the first event is at ``lambda_0 = (f_max - f_min) / 2`` and the intercept is affine
  in ``lambda`` below it, ``a_0(lambda) = lambda + lambda_0 (beta_0 - 1)`` with ``beta_0 = 1 -
  f_max / lambda_0``.

The documented examples run ``svmpath(x, y)`` (linear kernel ``x x'``) and
``svmpath(x, y, kernel = radial.kernel, param.kernel = .8)`` (``exp(-0.8 |x - x'|^2)``) down
to ``lambda.min = 1e-4``, i.e. up to ``C = 1e4``. Every path here is also checked against
scikit-learn's ``SVC`` at random ``C`` (the independent oracle) and, on the separable sets,
against the hard-margin SVM solved by cvxpy.
"""

import warnings
from pathlib import Path

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from pathlib_core.primer.svm import svm_kkt_residual, svm_path

cp = pytest.importorskip("cvxpy")

_DATA = np.load(Path(__file__).parent / "data" / "svmpath_datasets.npz")
NAMES = ["balanced.overlap", "balanced.separated", "unbalanced.separated", "mixture.data"]
C_TOP = 1e4  # svmpath's lambda.min = 1e-4


def data(name):
    return _DATA[f"{name}__x"], _DATA[f"{name}__y"]


def kernel(x, kind):
    return x @ x.T if kind == "linear" else rbf_kernel(x, gamma=0.8)


def balanced_start(K, y):
    """Section 4.1: (C_0, intercept at C_0, the two entering points)."""
    f = K @ y
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    fmax, fmin = f[pos].max(), f[neg].min()
    lam0 = (fmax - fmin) / 2
    return 1 / lam0, 1 - fmax / lam0, {int(pos[np.argmax(f[pos])]), int(neg[np.argmin(f[neg])])}


def unbalanced_start(K, y):
    """Section 4.2 (majority class +1): (C_0, a at C_0 in [0, 1], intercept slope data)."""
    pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y < 0)
    assert pos.size > neg.size
    Q = K * np.outer(y, y)
    w, V = np.linalg.eigh(Q[np.ix_(pos, pos)])
    keep = w > 1e-12 * w.max()
    L = V[:, keep] * np.sqrt(w[keep])
    a = cp.Variable(pos.size)
    c = Q[np.ix_(pos, neg)] @ np.ones(neg.size)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ a) + c @ a),
                      [cp.sum(a) == neg.size, a >= 0, a <= 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13)
    full = np.ones(y.size)
    full[pos] = np.clip(a.value, 0, 1)
    f = K @ (y * full)
    elbow = pos[(full[pos] > 1e-6) & (full[pos] < 1 - 1e-6)]
    fmax = f[elbow].max() if elbow.size else f[pos[full[pos] >= 1 - 1e-6]].max()
    fmin = f[neg].min()
    lam0 = (fmax - fmin) / 2
    return 1 / lam0, full, 1 - fmax / lam0, elbow.size > 0


def svc_decision(K, y, C):
    """libsvm's decision values and dual coefficients at C (on the mixture with a linear
    kernel at large C, SMO reaches its iteration cap: the comparisons allow for that)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf = SVC(kernel="precomputed", C=C, tol=1e-12, max_iter=10**7).fit(K, y)
    alpha = np.zeros(y.size)
    alpha[clf.support_] = np.abs(clf.dual_coef_.ravel())
    return clf.decision_function(K), alpha


def dual_objective(K, y, alpha):
    v = alpha * y
    return 0.5 * v @ K @ v - alpha.sum()


def cvxpy_dual(K, y, C):
    """The dual QP by CLARABEL (PSD-safe through a factor of K)."""
    w, V = np.linalg.eigh(K)
    keep = w > 1e-12 * w.max()
    L = V[:, keep] * np.sqrt(w[keep])
    a = cp.Variable(y.size)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ cp.multiply(y, a)) - cp.sum(a)),
                      [y @ a == 0, a >= 0, a <= C])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13,
               max_iter=500)
    return np.asarray(a.value), prob.value


def hard_margin(x, y):
    """min 1/2 |w|^2 s.t. y_i (w'x_i + b) >= 1 (cvxpy): the separable linear SVM."""
    w, b = cp.Variable(x.shape[1]), cp.Variable()
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)),
               [cp.multiply(y, x @ w + b) >= 1]).solve(solver=cp.CLARABEL, tol_gap_abs=1e-12,
                                                       tol_gap_rel=1e-12, tol_feas=1e-12)
    return w.value, float(b.value)


@pytest.fixture(scope="module", params=[(n, k) for n in NAMES for k in ("linear", "radial")],
                ids=lambda p: f"{p[0]}-{p[1]}")
def documented(request):
    name, kind = request.param
    x, y = data(name)
    K = kernel(x, kind)
    return name, kind, x, y, K, svm_path(K, y, C_max=C_TOP)


def test_the_data_sets_are_svmpaths():
    sizes = {n: (int(np.sum(data(n)[1] < 0)), int(np.sum(data(n)[1] > 0))) for n in NAMES}
    assert sizes == {"balanced.overlap": (6, 6), "balanced.separated": (6, 6),
                     "unbalanced.separated": (4, 7), "mixture.data": (100, 100)}
    # the mixture's first point, as printed in the Elements of Statistical Learning data file
    np.testing.assert_allclose(data("mixture.data")[0][0], [2.52609297, 0.32105045])


def test_documented_example_path_certificate_and_oracle(documented):
    name, kind, x, y, K, path = documented
    assert path.param_range[1] == C_TOP
    assert path.kkt_residuals().max() <= 1e-10
    rng = np.random.default_rng(0)
    lo = path.param_range[0]
    for C in np.exp(rng.uniform(np.log(lo), np.log(C_TOP), 5)):
        s = path.at(C)
        f = K @ (s.alpha * y) + s.intercept
        v = dual_objective(K, y, s.alpha)
        # scikit-learn's SVC (libsvm): its dual value is never below ours, and its decision
        # values agree to its own accuracy (SMO stops on a gradient criterion)
        ref, a_svc = svc_decision(K, y, C)
        v_svc = dual_objective(K, y, a_svc)
        assert v <= v_svc + 1e-12 * abs(v_svc)
        assert v_svc - v <= 1e-6 * abs(v_svc)
        np.testing.assert_allclose(f, ref, atol=1e-3 * max(1.0, np.abs(ref).max()))
        # cvxpy (an interior-point method) to its tighter tolerance
        a_cvx, v_cvx = cvxpy_dual(K, y, C)
        assert abs(v - v_cvx) <= 1e-8 * max(1.0, abs(v_cvx))
        assert svm_kkt_residual(K, y, C, s.alpha, s.intercept) <= 1e-10


@pytest.mark.parametrize("name", ["balanced.overlap", "balanced.separated", "mixture.data"])
@pytest.mark.parametrize("kind", ["linear", "radial"])
def test_balanced_initialization(name, kind):
    x, y = data(name)
    K = kernel(x, kind)
    C0, b0, entering = balanced_start(K, y)
    path = svm_path(K, y, C_max=C_TOP)  # C_min=None: the path ends at its smallest event
    assert path.param_range[0] == pytest.approx(C0, rel=1e-12)
    s = path.at(path.param_range[0])
    np.testing.assert_allclose(s.alpha, path.param_range[0] * np.ones(y.size), rtol=1e-12)
    assert s.intercept == pytest.approx(b0, rel=1e-10, abs=1e-12)
    last = [e for e in path.events if e.param == path.param_range[0]]
    assert {i for e in last for i in e.indices} == entering
    assert all(e.info == {"from": "elbow", "to": "left"} for e in last)
    # below the first event: every point in the left set, alpha = C (and b in an interval)
    below = svm_path(K, y, C_max=C_TOP, C_min=C0 / 4)
    np.testing.assert_allclose(below.at(C0 / 3).alpha, C0 / 3 * np.ones(y.size), rtol=1e-12)
    assert below.kkt_residuals().max() <= 1e-10


@pytest.mark.parametrize("kind", ["linear", "radial"])
@pytest.mark.parametrize("name", ["unbalanced.separated", "mixture-unbalanced"])
def test_unbalanced_initialization(name, kind):
    if name == "mixture-unbalanced":  # every negative point, the first 60 positive ones
        x, y = data("mixture.data")
        keep = np.r_[np.flatnonzero(y < 0), np.flatnonzero(y > 0)[:60]]
        x, y = x[keep], -y[keep]  # the majority class is +1, as in section 4.2
    else:
        x, y = data(name)
    K = kernel(x, kind)
    C0, a0, b0, has_elbow = unbalanced_start(K, y)
    path = svm_path(K, y, C_max=C_TOP)
    assert path.param_range[0] == pytest.approx(C0, rel=1e-7)
    s = path.at(path.param_range[0])
    # the majority's multipliers may not be unique (a singular kernel block); the decision
    # values are
    f = K @ (s.alpha * y) + s.intercept
    f_ref = C0 * (K @ (a0 * y)) + b0
    np.testing.assert_allclose(f, f_ref, atol=1e-7 * np.abs(f_ref).max())
    np.testing.assert_array_equal(s.alpha[y < 0], path.param_range[0])  # minority at C
    if has_elbow:
        # below C_0: alpha = C a and an intercept affine in C, b(C) = 1 + (b_0 - 1) C / C_0
        below = svm_path(K, y, C_max=C_TOP, C_min=C0 / 4)
        for C in (C0 / 3, C0 / 2):
            sb = below.at(C)
            fb = K @ (sb.alpha * y) + sb.intercept
            np.testing.assert_allclose(fb, C * (K @ (a0 * y)) + 1 + (b0 - 1) * C / C0,
                                       atol=1e-7 * np.abs(f_ref).max())
        assert below.kkt_residuals().max() <= 1e-12


@pytest.mark.parametrize("name", ["balanced.separated", "unbalanced.separated"])
@pytest.mark.parametrize("C_max", [C_TOP, 1e8, 1e12, 1e300])
def test_separable_sets_end_at_the_hard_margin_svm(name, C_max):
    x, y = data(name)
    K = x @ x.T
    w_ref, b_ref = hard_margin(x, y)
    path = svm_path(K, y, C_max=C_max)
    assert path.info["hard_margin"] and path.param_range[1] == C_max
    C_hm = path.info["C_last_event"]
    assert path.breakpoints[-2] == C_hm < C_TOP
    assert path.kkt_residuals().max() <= 1e-12
    for C in (C_hm, np.sqrt(C_hm * C_max), C_max):
        s = path.at(C)
        np.testing.assert_allclose(x.T @ (s.alpha * y), w_ref, rtol=1e-6)
        assert s.intercept == pytest.approx(b_ref, rel=1e-6, abs=1e-8)
        # nothing changes above the last event: one segment up to C_max whose two ends carry
        # the same solution (inside, linear interpolation of equal values: to one ulp)
        np.testing.assert_allclose(s.alpha, path.at(C_hm).alpha, rtol=1e-15, atol=0)
    np.testing.assert_array_equal(path.at(C_max).alpha, path.at(C_hm).alpha)
    assert path.at(C_max).intercept == path.at(C_hm).intercept
    # the breakpoints below the hard margin do not depend on C_max
    np.testing.assert_array_equal(path.breakpoints[:-1],
                                  svm_path(K, y, C_max=C_TOP).breakpoints[:-1])


def test_overlapping_set_grows_linearly_above_its_last_event():
    """Not separable by a line: above the last event the left set is not empty and alpha grows
    linearly in C for ever (one segment up to any C_max)."""
    x, y = data("balanced.overlap")
    K = x @ x.T
    for C_max in (C_TOP, 1e12):
        path = svm_path(K, y, C_max=C_max)
        assert not path.info["hard_margin"]
        C1 = path.breakpoints[-2]
        s1, s2 = path.at(C1), path.at(C_max)
        assert np.any(s2.left)
        np.testing.assert_allclose(s2.alpha[s2.left], C_max, rtol=1e-15)
        assert path.kkt_residuals().max() <= 1e-12
        s = path.at(100.0 * C1)
        _, v_cvx = cvxpy_dual(K, y, 100.0 * C1)
        assert dual_objective(K, y, s.alpha) == pytest.approx(v_cvx, rel=1e-8)
        assert s1.elbow.sum() == s2.elbow.sum()
