"""Tests of :mod:`pathlib_core.s3vm.path` (the S3VM path of Ogawa et al. 2013).

Each path is checked against an independent primal solve of the conditional problem (cvxpy),
the local-optimality certificate of Theorem 4 (strictly inside the polytope), Theorem 5 (J
decreases across every jump), the KKT residuals at every breakpoint, and on hypothesis-generated
degenerate data (duplicate points, ties, one class missing among the unlabeled points).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

from pathlib_core.s3vm.estimator import S3VMPathClassifier
from pathlib_core.s3vm.path import (
    class_balance_bias,
    conditional_solution,
    s3vm_objective,
    s3vm_path,
    select_C_unlabeled,
)

cp = pytest.importorskip("cvxpy")


def _mask_labels(y_true, n_lab, rng):
    y = np.zeros_like(y_true, dtype=float)
    pos, neg = np.flatnonzero(y_true > 0), np.flatnonzero(y_true < 0)
    idx = np.r_[rng.choice(pos, 1), rng.choice(neg, 1),
                rng.choice(len(y_true), n_lab - 2, replace=False)]
    y[idx] = y_true[idx]
    return y


def _blobs(seed=0, n=80):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-1, 1, (n // 2, 2)), rng.normal(1, 1, (n // 2, 2))])
    yt = np.r_[-np.ones(n // 2), np.ones(n // 2)]
    return rbf_kernel(X, gamma=0.5), _mask_labels(yt, 8, rng)


def _breast_cancer(seed=1, n=120):
    X, yt = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(yt), n, replace=False)
    X = StandardScaler().fit_transform(X[idx])
    yt = np.where(yt[idx] == 1, 1.0, -1.0)
    return rbf_kernel(X, gamma=1.0 / X.shape[1]), _mask_labels(yt, 12, rng)


def _duplicates_linear(seed=2, n=50):
    """Linear kernel in 2-D (rank 2, semi-definite) with duplicated points."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n // 2, 2))
    X = np.vstack([X, X])
    yt = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    return X @ X.T, _mask_labels(yt, 6, rng)


DATASETS = {"blobs": (_blobs, 10.0, 10.0), "breast_cancer": (_breast_cancer, 10.0, 10.0),
            "duplicates_linear": (_duplicates_linear, 1.0, 1.0)}


def oracle(K, y, labels, C, Cu):
    """Primal conditional problem (eq. (5)) solved by CLARABEL, written independently."""
    w, V = np.linalg.eigh(K)
    keep = w > 1e-12 * max(w.max(), 1e-300)
    L = V[:, keep] * np.sqrt(w[keep])
    b = 2 * np.mean(y[y != 0] == 1) - 1
    lab, unl = y != 0, y == 0
    u = cp.Variable(L.shape[1])
    f = L @ u + b
    hinge = cp.pos(1 - cp.multiply(labels, f))
    obj = 0.5 * cp.sum_squares(u) + C * cp.sum(hinge[np.flatnonzero(lab)])
    if Cu > 0:
        obj = obj + Cu * cp.sum(hinge[np.flatnonzero(unl)])
    cons = [cp.multiply(labels[unl], f[np.flatnonzero(unl)]) >= 0]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12,
               max_iter=500)
    return prob.value, L @ u.value + b


@pytest.fixture(scope="module", params=sorted(DATASETS))
def traced(request):
    make, C, Cmax = DATASETS[request.param]
    K, y = make()
    return K, y, C, Cmax, s3vm_path(K, y, C=C, C_unlabeled_max=Cmax)


def test_path_covers_range_and_starts_supervised(traced):
    K, y, C, Cmax, path = traced
    assert path.param_name == "C_unlabeled"
    assert path.breakpoints[0] == 0.0 and path.breakpoints[-1] == pytest.approx(Cmax)
    r0 = path.at(0.0, side="left")
    assert np.all(r0.coef[y == 0] == 0)
    assert r0.intercept == pytest.approx(class_balance_bias(y))
    # the start is the labeled-only SVM with fixed bias: oracle with C* = 0
    J0, f0 = oracle(K, y, r0.labels.astype(float), C, 0.0)
    J = s3vm_objective(K, y, r0.labels, r0.coef, r0.intercept, C=C, C_unlabeled=0.0)
    assert abs(J - J0) <= 1e-7 * max(1.0, abs(J0))
    # initial predicted labels are the signs of the supervised decision function
    assert np.array_equal(np.sign(r0.decision[y == 0]), r0.labels[y == 0])


def test_oracle_at_random_parameters(traced):
    K, y, C, Cmax, path = traced
    rng = np.random.default_rng(5)
    for t in rng.uniform(0, Cmax, 4):
        rec = path.at(t)
        J = s3vm_objective(K, y, rec.labels, rec.coef, rec.intercept, C=C, C_unlabeled=t)
        Jo, fo = oracle(K, y, rec.labels.astype(float), C, t)
        assert abs(J - Jo) <= 1e-7 * max(1.0, abs(Jo)), (t, J, Jo)
        np.testing.assert_allclose(rec.decision, fo, atol=1e-5)
        np.testing.assert_allclose(rec.decision, K @ rec.coef + rec.intercept, atol=1e-9)


def test_strictly_interior_theorem4(traced):
    K, y, C, Cmax, path = traced
    unl = y == 0
    ts = list(path.breakpoints) + list(np.random.default_rng(6).uniform(0, Cmax, 20))
    for t in ts:
        rec = path.at(t)  # after any jump: the local optimum
        assert np.min(rec.labels[unl] * rec.decision[unl]) > 0, t


def test_objective_decreases_across_jumps_theorem5(traced):
    K, y, C, Cmax, path = traced
    for e in path.events_of("jump"):
        assert e.info["J_after"] < e.info["J_before"]
    jumps = sorted({e.param for e in path.events_of("jump")})
    for t in jumps:
        left, right = path.at(t, side="left"), path.at(t, side="right")
        Jl = s3vm_objective(K, y, left.labels, left.coef, left.intercept, C=C, C_unlabeled=t)
        Jr = s3vm_objective(K, y, right.labels, right.coef, right.intercept, C=C,
                            C_unlabeled=t)
        assert Jr < Jl
        # at a jump the left solution sits on the polytope's boundary
        m = (left.labels * left.decision)[y == 0]
        assert np.min(m) == pytest.approx(0.0, abs=1e-8)


def test_labeled_labels_never_change(traced):
    K, y, C, Cmax, path = traced
    for _t, _side, rec in path.records():
        assert np.array_equal(rec.labels[y != 0], y[y != 0])
        assert set(np.unique(rec.labels[y == 0])) <= {-1, 1}


def test_kkt_residuals_at_breakpoints(traced):
    *_, path = traced
    assert np.max(path.kkt_residuals()) < 1e-9


@pytest.mark.parametrize("name", ["breast_cancer", "duplicates_linear"])
def test_examples_exercise_the_dj_step(name):
    """These fixtures have jumps, so the Theorem 5 checks above are not vacuous."""
    make, C, Cmax = DATASETS[name]
    K, y = make()
    path = s3vm_path(K, y, C=C, C_unlabeled_max=Cmax)
    assert len(path.events_of("jump")) >= 1
    assert path.info["n_jumps"] == len(path.events_of("jump"))


def test_conditional_solution_on_boundary_matches_oracle():
    """DJ-step solver with active polytope constraints (labels that disagree with f)."""
    K, y = _blobs(3)
    rng = np.random.default_rng(0)
    labels = np.where(y != 0, y, rng.choice([-1.0, 1.0], size=y.size))
    rec, gamma, _ = conditional_solution(K, y, labels, C=10.0, C_unlabeled=5.0)
    J = s3vm_objective(K, y, rec.labels, rec.coef, rec.intercept, C=10.0, C_unlabeled=5.0)
    Jo, fo = oracle(K, y, labels, 10.0, 5.0)
    assert np.any(gamma > 0)  # the polytope constraints are active here
    assert abs(J - Jo) <= 1e-7 * max(1.0, abs(Jo))
    np.testing.assert_allclose(rec.decision, fo, atol=1e-5)
    assert np.min((labels * rec.decision)[y == 0]) >= -1e-9


@st.composite
def _degenerate(draw):
    n = draw(st.integers(8, 20))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 2)), 1)  # rounding creates ties
    n_dup = draw(st.integers(0, 4))
    X = np.vstack([X, X[:n_dup]])  # duplicate points
    m = X.shape[0]
    kind = draw(st.sampled_from(["rbf", "linear"]))
    K = rbf_kernel(X, gamma=0.5) if kind == "rbf" else X @ X.T
    y = np.zeros(m)
    n_lab = draw(st.integers(2, 5))
    y[:n_lab] = np.where(rng.random(n_lab) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    C = draw(st.sampled_from([0.5, 1.0, 10.0]))
    Cmax = draw(st.sampled_from([0.5, 1.0, 5.0])) * C
    return K, y, C, Cmax, seed


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(_degenerate())
def test_hypothesis_degenerate_data(case):
    K, y, C, Cmax, seed = case
    path = s3vm_path(K, y, C=C, C_unlabeled_max=Cmax)
    unl = y == 0
    assert np.max(path.kkt_residuals()) < 1e-8
    for e in path.events_of("jump"):
        assert e.info["J_after"] < e.info["J_before"] or set(e.indices) & set(path.info["stuck"])
    t = float(np.random.default_rng(seed).uniform(0, Cmax))
    rec = path.at(t)
    stuck = np.zeros(len(y), dtype=bool)
    stuck[path.info["stuck"]] = True
    # a point is exempt only after a flip of it failed to decrease J (degenerate boundary point
    # whose polytope constraint is weakly active for both labels; Theorem 5's strict decrease
    # does not hold there)
    for i in path.info["stuck"]:
        assert any(i in e.indices and e.info["J_after"] >= e.info["J_before"]
                   - 1e-12 * max(1.0, abs(e.info["J_before"])) for e in path.events_of("jump"))
    # every unlabeled point, exempt or not, stays in its polytope (conditional optimality)
    assert np.min(rec.labels[unl] * rec.decision[unl]) >= -1e-9
    watch = unl & ~stuck
    if watch.any():
        assert np.min(rec.labels[watch] * rec.decision[watch]) > 0
    assert np.array_equal(rec.labels[~unl], y[~unl])
    J = s3vm_objective(K, y, rec.labels, rec.coef, rec.intercept, C=C, C_unlabeled=t)
    Jo, fo = oracle(K, y, rec.labels.astype(float), C, t)
    assert abs(J - Jo) <= 1e-7 * max(1.0, abs(Jo))
    np.testing.assert_allclose(rec.decision, fo, atol=1e-5)


def test_objective_by_hand():
    K = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.5], [0.0, 0.5, 1.0]])
    y = np.array([1.0, -1.0, 0.0])
    beta = np.array([0.3, -0.2, 0.1])
    b = class_balance_bias(y)
    assert b == 0.0
    f = K @ beta
    want = (0.5 * beta @ K @ beta + 2.0 * (max(0, 1 - f[0]) + max(0, 1 + f[1]))
            + 0.5 * max(0, 1 + f[2]))
    got = s3vm_objective(K, y, [1, -1, -1], beta, 0.0, C=2.0, C_unlabeled=0.5)
    assert got == pytest.approx(want, rel=1e-14)


def test_zero_length_path():
    K, y = _blobs()
    path = s3vm_path(K, y, C=1.0, C_unlabeled_max=0.0)
    assert path.breakpoints.tolist() == [0.0]
    assert np.min((path.at(0.0).labels * path.at(0.0).decision)[y == 0]) > 0


def test_model_selection_is_exact_over_the_continuum():
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(-1, 1, (60, 2)), rng.normal(1, 1, (60, 2))])
    yt = np.r_[-np.ones(60), np.ones(60)]
    perm = rng.permutation(120)
    X, yt = X[perm], yt[perm]
    tr, va = np.arange(80), np.arange(80, 120)
    y = _mask_labels(yt[tr], 8, rng)
    K = rbf_kernel(X[tr], gamma=0.5)
    Kv = rbf_kernel(X[tr], X[va], gamma=0.5)
    path = s3vm_path(K, y, C=10.0, C_unlabeled_max=10.0)
    t_best, err = select_C_unlabeled(path, Kv, yt[va])
    rec = path.at(t_best)
    assert np.mean(np.sign(Kv.T @ rec.coef + rec.intercept) != yt[va]) == pytest.approx(err)
    grid = np.linspace(0, 10, 400)
    errs = [np.mean(np.sign(Kv.T @ path.at(t).coef + path.at(t).intercept) != yt[va])
            for t in grid]
    assert err <= min(errs) + 1e-12


def test_classifier_sklearn_conventions():
    rng = np.random.default_rng(7)
    X = np.vstack([rng.normal(-1.5, 1, (40, 2)), rng.normal(1.5, 1, (40, 2))])
    yt = np.r_[np.zeros(40, int), np.ones(40, int)]
    y = np.full(80, -1)
    idx = np.r_[0, 1, 2, 40, 41, 42]
    y[idx] = yt[idx]
    clf = S3VMPathClassifier(C=10.0, gamma=0.5).fit(X, y, X_val=X[3:80:8], y_val=yt[3:80:8])
    assert set(clf.classes_.tolist()) == {0, 1}
    assert 0 <= clf.C_unlabeled_ <= 10.0
    pred = clf.predict(X)
    assert set(np.unique(pred)) <= {0, 1}
    assert np.mean(pred == yt) > 0.8
    assert np.array_equal(clf.transduction_[idx], yt[idx])
    with pytest.raises(ValueError, match="two classes"):
        S3VMPathClassifier().fit(X, np.where(y == 1, 0, y))


@pytest.mark.parametrize("kwargs, match", [
    (dict(C=0.0), "C must be > 0"),
    (dict(C=-1.0), "C must be > 0"),
    (dict(C_unlabeled_max=-1.0), "C_unlabeled_max must be >= 0"),
    (dict(y=np.r_[1.0, -1.0, 2.0, 0.0]), "y must contain only"),
    (dict(y=np.r_[1.0, 1.0, 0.0, 0.0]), "both classes"),
    (dict(y=np.r_[1.0, -1.0, 1.0, -1.0]), "unlabeled"),
    (dict(y=np.r_[1.0, -1.0, 0.0]), "y"),
    (dict(K=np.ones((4, 3))), "X"),
])
def test_bad_input(kwargs, match):
    X = np.arange(8.0).reshape(4, 2)
    args = dict(K=X @ X.T, y=np.r_[1.0, -1.0, 0.0, 0.0], C=1.0, C_unlabeled_max=1.0)
    args.update(kwargs)
    K, y = args.pop("K"), args.pop("y")
    with pytest.raises(ValueError, match=match):
        s3vm_path(K, y, **args)


def test_pinned_point_does_not_cycle():
    """A zero feature vector with b = 0 has f = 0 for every beta: flipping it cannot help."""
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(size=(12, 2)), np.zeros((1, 2))])
    y = np.zeros(13)
    y[:4] = [1.0, -1.0, 1.0, -1.0]  # balanced: b = 0
    path = s3vm_path(X @ X.T, y, C=1.0, C_unlabeled_max=2.0)
    assert path.info["intercept"] == 0.0
    assert path.info["stuck"] == [12]
    rec = path.at(2.0)
    watch = (y == 0) & (np.arange(13) != 12)
    assert np.min(rec.labels[watch] * rec.decision[watch]) > 0
    assert np.max(path.kkt_residuals()) < 1e-9


def test_exempt_point_never_leaves_its_polytope():
    """Regression (found by hypothesis): a point with f = 0 at C* = 0 whose flip does not
    decrease J is exempt from the strict-interior check, but must not cross to the wrong side
    of its polytope later (the path's solution would then not be the conditional optimum of
    its labels); it is flipped back and moves inside."""
    K = np.array([
        [1.0, 0.28, 0.5, -1.34, -1.2, 0.56, -2.04, 0.72, -0.88, 0.12],
        [0.28, 0.37, -0.4, -0.44, 0.15, 0.47, -1.23, 0.18, 0.38, 0.12],
        [0.5, -0.4, 1.25, -0.55, -1.5, -0.3, 0.2, 0.4, -1.6, -0.1],
        [-1.34, -0.44, -0.55, 1.81, 1.5, -0.82, 2.88, -0.96, 1.04, -0.18],
        [-1.2, 0.15, -1.5, 1.5, 2.25, -0.15, 1.35, -0.9, 2.1, 0.0],
        [0.56, 0.47, -0.3, -0.82, -0.15, 0.65, -1.85, 0.38, 0.18, 0.16],
        [-2.04, -1.23, 0.2, 2.88, 1.35, -1.85, 5.65, -1.42, 0.38, -0.44],
        [0.72, 0.18, 0.4, -0.96, -0.9, 0.38, -1.42, 0.52, -0.68, 0.08],
        [-0.88, 0.38, -1.6, 1.04, 2.1, 0.18, 0.38, -0.68, 2.12, 0.08],
        [0.12, 0.12, -0.1, -0.18, 0.0, 0.16, -0.44, 0.08, 0.08, 0.04]])
    y = np.r_[1.0, -1.0, np.zeros(8)]
    path = s3vm_path(K, y, C=0.5, C_unlabeled_max=0.25)
    assert path.info["stuck"] == [9]
    unl = y == 0
    for t in list(path.breakpoints) + [0.1706, 0.2]:
        for side in ("left", "right"):
            rec = path.at(t, side=side)
            assert np.min(rec.labels[unl] * rec.decision[unl]) >= -1e-9, (t, side)
    rec = path.at(0.1706)
    J = s3vm_objective(K, y, rec.labels, rec.coef, rec.intercept, C=0.5, C_unlabeled=0.1706)
    Jo, fo = oracle(K, y, rec.labels.astype(float), 0.5, 0.1706)
    assert abs(J - Jo) <= 1e-7 * max(1.0, abs(Jo))
    assert rec.labels[9] * rec.decision[9] > 0


def test_stop_without_recorded_crossing_does_not_hang():
    """Regression (found by hypothesis): the CP-step's stop rule fired at a breakpoint whose
    recorded margin was a rounding error above 0, and re-tracing from there never moved (an
    endless loop). Linear kernel on 19 rounded 2-D points, 4 of them duplicated."""
    rng = np.random.default_rng(19)
    X = np.round(rng.normal(size=(19, 2)), 1)
    X = np.vstack([X, X[:4]])
    y = np.zeros(23)
    y[:2] = [1.0, -1.0]
    K = X @ X.T
    path = s3vm_path(K, y, C=10.0, C_unlabeled_max=50.0)
    assert path.breakpoints[-1] == 50.0
    assert np.max(path.kkt_residuals()) < 1e-8
    unl = y == 0
    for t in (1.0, 10.0, 49.0):
        rec = path.at(t)
        assert np.min(rec.labels[unl] * rec.decision[unl]) >= -1e-9
        J = s3vm_objective(K, y, rec.labels, rec.coef, rec.intercept, C=10.0, C_unlabeled=t)
        Jo, _ = oracle(K, y, rec.labels.astype(float), 10.0, t)
        assert abs(J - Jo) <= 1e-7 * max(1.0, abs(Jo))


@pytest.mark.parametrize("labels, match", [
    (np.r_[1.0, -1.0, 0.0, 1.0], r"labels must be -1 or \+1 on the unlabeled points"),
    (np.r_[1.0, -1.0, 0.5, -1.0], r"labels must be -1 or \+1 on the unlabeled points"),
    (np.r_[1.0, -1.0, 1.0, np.nan], "labels must contain only finite values"),
    (np.r_[1.0, -1.0, 1.0], "labels must have length 4"),
])
def test_conditional_solution_checks_labels_like_the_objective(labels, match):
    X = np.arange(8.0).reshape(4, 2)
    K, y = X @ X.T + np.eye(4), np.r_[1.0, -1.0, 0.0, 0.0]
    with pytest.raises(ValueError, match=match):
        s3vm_objective(K, y, labels, np.zeros(4), 0.0, C=1.0, C_unlabeled=1.0)
    with pytest.raises(ValueError, match=match):
        conditional_solution(K, y, labels, C=1.0, C_unlabeled=1.0)
    # labeled entries are ignored (replaced by y), as in s3vm_objective
    rec, _, _ = conditional_solution(K, y, np.r_[0.0, 7.0, 1.0, -1.0], C=1.0, C_unlabeled=1.0)
    np.testing.assert_array_equal(rec.labels, [1, -1, 1, -1])


def test_class_balance_bias_needs_labeled_points():
    from pathlib_core.s3vm.path import class_balance_bias

    assert class_balance_bias([1, -1, 1, 0]) == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="labeled"):
        class_balance_bias([0, 0, 0])
