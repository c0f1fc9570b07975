"""Tests of :func:`pathlib_core.primer.svm.svm_path` against independent solvers (cvxpy, libsvm)."""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler

from pathlib_core.primer.svm import SVMSolution, svm_kkt_residual, svm_path

cp = pytest.importorskip("cvxpy")

C_LO, C_HI = 1e-2, 1e2


def _breast_cancer(n=150, seed=0):
    X, y = load_breast_cancer(return_X_y=True)
    idx = np.random.default_rng(seed).choice(len(y), n, replace=False)
    X = StandardScaler().fit_transform(X[idx])
    return rbf_kernel(X, gamma=1.0 / X.shape[1]), np.where(y[idx] == 1, 1.0, -1.0)


def _overlapping(seed=1):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (40, 2)), rng.normal(1, 1, (40, 2))])
    return rbf_kernel(X, gamma=0.5), np.r_[-np.ones(40), np.ones(40)]


def _unbalanced(seed=2):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(0, 1, (70, 3)), rng.normal(1, 1, (10, 3))])
    return rbf_kernel(X, gamma=1 / 3), np.r_[-np.ones(70), np.ones(10)]


DATASETS = {"breast_cancer": _breast_cancer, "overlapping": _overlapping,
            "unbalanced": _unbalanced}


def cvxpy_svm(K, y, C):
    """Independent oracle: the dual QP with CLARABEL, PSD-safe through a factor of K."""
    w, V = np.linalg.eigh(K)
    keep = w > 1e-12 * w.max()
    L = V[:, keep] * np.sqrt(w[keep])
    a = cp.Variable(len(y))
    obj = 0.5 * cp.sum_squares(L.T @ cp.multiply(y, a)) - cp.sum(a)
    prob = cp.Problem(cp.Minimize(obj), [y @ a == 0, a >= 0, a <= C])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13,
               max_iter=500)
    return np.asarray(a.value), prob.value


def dual_objective(K, y, a):
    ya = y * a
    return 0.5 * ya @ K @ ya - a.sum()


@pytest.fixture(scope="module", params=sorted(DATASETS))
def traced(request):
    K, y = DATASETS[request.param]()
    return request.param, K, y, svm_path(K, y, C_max=C_HI, C_min=C_LO)


def test_path_matches_cvxpy_at_random_C(traced):
    name, K, y, path = traced
    rng = np.random.default_rng(42)
    for C in np.exp(rng.uniform(np.log(C_LO), np.log(C_HI), 20)):
        sol = path.at(C)
        a_ref, v_ref = cvxpy_svm(K, y, C)
        v = dual_objective(K, y, sol.alpha)
        assert abs(v - v_ref) <= 1e-8 * max(1.0, abs(v_ref)), (name, C)
        np.testing.assert_allclose(K @ (sol.alpha * y), K @ (a_ref * y), rtol=0, atol=1e-6)
        assert np.all(sol.alpha >= -1e-9 * C) and np.all(sol.alpha <= C * (1 + 1e-9))
        assert abs(sol.alpha @ y) <= 1e-9 * C * len(y)


def test_kkt_residuals_at_every_breakpoint(traced):
    name, K, y, path = traced
    res = path.kkt_residuals()
    assert res.shape == path.breakpoints.shape
    assert res.max() <= 1e-8, name
    # the public residual function agrees
    C = path.breakpoints[len(path) // 2]
    s = path.at(C)
    assert svm_kkt_residual(K, y, C, s.alpha, s.intercept) <= 1e-8


def test_path_structure_and_events(traced):
    name, K, y, path = traced
    assert path.param_name == "C"
    assert path.param_range == (pytest.approx(C_LO), pytest.approx(C_HI))
    assert len(path) >= 3
    assert isinstance(path.at(1.0), SVMSolution)
    kinds = {e.kind for e in path.events}
    assert kinds <= {"enter", "leave"}
    for e in path.events:
        assert {e.info["from"], e.info["to"]} <= {"elbow", "left", "right"}
        assert (e.info["to"] == "elbow") == (e.kind == "enter")
    info = path.info
    for key in ("n_events", "n_refactorizations", "max_drift", "time"):
        assert key in info
    assert info["max_drift"] <= 1e-8
    # sets are consistent with alpha inside a segment
    lo, hi = path.breakpoints[1], path.breakpoints[2]
    s = path.at(0.5 * (lo + hi))
    C = 0.5 * (lo + hi)
    assert np.all(np.abs(s.alpha[s.left] - C) <= 1e-9 * C)
    assert np.all(np.abs(s.alpha[s.right]) <= 1e-9 * C)


def test_matches_libsvm_decision_values():
    from sklearn.svm import SVC

    K, y = _overlapping()
    path = svm_path(K, y, C_max=10.0, C_min=0.05)
    for C in (0.07, 0.5, 3.0, 10.0):
        s = path.at(C)
        clf = SVC(kernel="precomputed", C=C, tol=1e-10).fit(K, y)
        f_ref = clf.decision_function(K)
        f = K @ (s.alpha * y) + s.intercept
        np.testing.assert_allclose(f, f_ref, atol=1e-5)


def test_default_C_min_ends_at_last_event_and_scales_below():
    K, y = _unbalanced()
    path = svm_path(K, y, C_max=10.0)
    C_last = path.param_range[0]
    assert C_last == pytest.approx(min(e.param for e in path.events))
    assert path.kkt_residuals().max() <= 1e-8
    # below the last event the solution is alpha(C_last) scaled by C / C_last
    C = C_last / 3.0
    a_ref, v_ref = cvxpy_svm(K, y, C)
    a = path.at(C_last).alpha * (C / C_last)
    assert abs(dual_objective(K, y, a) - v_ref) <= 1e-8 * max(1.0, abs(v_ref))


def test_empty_elbow_intercept_is_midpoint_and_continuous():
    K, y = _overlapping(seed=3)
    path = svm_path(K, y, C_max=10.0, C_min=1e-4)
    s = path.at(1e-4)
    assert not s.elbow.any()  # balanced classes, tiny C: every point at alpha = C
    # intercept interval allowed by the sign conditions at C = 1e-4
    C = 1e-4
    f0 = K @ (s.alpha * y)
    lo, hi = -np.inf, np.inf
    for i in range(len(y)):
        # left (alpha = C): y_i (f0_i + b) <= 1 ; right (alpha = 0): y_i (f0_i + b) >= 1
        bound = (1 - y[i] * f0[i]) * y[i]
        if s.left[i]:
            hi, lo = (min(hi, bound), lo) if y[i] > 0 else (hi, max(lo, bound))
        else:
            lo, hi = (max(lo, bound), hi) if y[i] > 0 else (lo, min(hi, bound))
    assert lo <= s.intercept <= hi
    assert s.intercept == pytest.approx(0.5 * (lo + hi), rel=1e-9, abs=1e-12)
    # continuity of the intercept across the breakpoints
    bps = path.breakpoints
    for k in range(1, len(bps) - 1):
        left = path.at(bps[k], side="left").intercept
        right = path.at(bps[k], side="right").intercept
        assert left == pytest.approx(right, abs=1e-9)
    assert path.kkt_residuals().max() <= 1e-8
    assert svm_kkt_residual(K, y, C, s.alpha, s.intercept) <= 1e-8


# ---------------------------------------------------------------------------------------------
# Certificates that can fail: a solution moved by 1e-6 relative is not certified
# ---------------------------------------------------------------------------------------------
def coherent_perturbation(K, y, C, alpha, b, size=1e-6):
    """``(alpha, b)`` moved by ``size`` relative, the elbow coordinates and ``b`` each in the
    direction that adds up in one elbow row's stationarity condition.

    The row is the elbow point (at least 1% of ``C`` from both bounds) where the perturbed
    terms weigh most: ``share_i = (sum_{j in E} |Q_ij alpha_j| + |b|) / s_i`` with ``s_i =
    (|Q| |alpha|)_i + 1 + |b|`` the scale of :func:`svm_kkt_residual`. The condition moves
    by about ``size * share_i`` relative to its scale. Returns the perturbed pair and the
    share (0 when no elbow point qualifies).
    """
    Q = K * np.outer(y, y)
    E = (alpha > 0.01 * C) & (alpha < 0.99 * C)
    if not E.any():
        return alpha, b, 0.0
    absQa = np.abs(Q) @ np.abs(alpha)
    share = (np.abs(Q[:, E]) @ np.abs(alpha[E]) + abs(b)) / (absQa + 1 + abs(b))
    i = int(np.flatnonzero(E)[np.argmax(share[E])])
    a = alpha.copy()
    a[E] *= 1 + size * np.sign(Q[i, E] * alpha[E])
    return a, b * (1 + size * np.sign(y[i] * b)), float(share[i])


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_perturbed_solution_is_not_certified(name):
    K, y = DATASETS[name]()
    path = svm_path(K, y, C_max=C_HI, C_min=C_LO)
    checked = np.zeros(len(path), dtype=bool)
    for k, C in enumerate(path.breakpoints):
        s = path.at(C)
        assert svm_kkt_residual(K, y, C, s.alpha, s.intercept) <= 1e-13
        a, b, share = coherent_perturbation(K, y, C, s.alpha, s.intercept)
        if share >= 0.2:
            assert svm_kkt_residual(K, y, C, a, b) > 1e-7, C
            checked[k] = True
    # with C max|K| >= 1 the solution's terms weigh at least as much as the constant 1 of
    # the gradient: there every breakpoint is checked; below, about half of them
    large = path.breakpoints >= 1.0
    assert checked[large].mean() >= 0.75 and checked.mean() >= 0.5


def test_residual_does_not_depend_on_the_scale_of_C():
    """The certificate is componentwise: the symmetry (s K, C / s, alpha / s, b) leaves it
    unchanged (exactly for s a power of two), so a large C cannot hide a wrong point."""
    K, y = _overlapping()
    path = svm_path(K, y, C_max=10.0, C_min=0.1)
    C = path.breakpoints[len(path) // 2]
    s = path.at(C)
    a, b, _ = coherent_perturbation(K, y, C, s.alpha, s.intercept)
    for k in (-40, 0, 40):
        f = 2.0 ** k
        assert svm_kkt_residual(f * K, y, C / f, a / f, b) == svm_kkt_residual(K, y, C, a, b)
    assert svm_kkt_residual(K, y, C, a, b) > 1e-7


# ---------------------------------------------------------------------------------------------
# Property tests: degenerate data. Residuals are componentwise relative (each condition
# against the size of its own terms), so they compare across data scales.
# ---------------------------------------------------------------------------------------------
@st.composite
def svm_problems(draw):
    n = draw(st.integers(6, 40))
    d = draw(st.integers(1, 4))
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 10.0 ** draw(st.integers(-3, 3))
    n_dup = draw(st.integers(0, n // 3))
    if n_dup:
        X[-n_dup:] = X[:n_dup]
    frac = draw(st.sampled_from([0.5, 0.2, 0.1]))
    y = np.where(rng.random(n) < frac, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    kernel = draw(st.sampled_from(["linear", "rbf"]))
    if kernel == "linear":
        K = X @ X.T
    else:
        K = rbf_kernel(X, gamma=1.0 / (d * np.var(X)))
    C_max = 10.0 ** draw(st.floats(-1, 3)) / np.max(np.abs(K))
    return K, y, C_max


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(svm_problems())
def test_property_degenerate_data_path_completes_kkt_exact(problem):
    K, y, C_max = problem
    path = svm_path(K, y, C_max=C_max, C_min=C_max * 1e-3)
    assert path.kkt_residuals().max() <= 1e-8
    s = path.at(path.breakpoints[len(path) // 2])
    assert abs(s.alpha @ y) <= 1e-8 * max(1.0, s.alpha.sum())


# ---------------------------------------------------------------------------------------------
# The lean SVM loop (default) against the generic engine: the same path
# ---------------------------------------------------------------------------------------------
def _assert_same_path(p_lean, p_gen):
    np.testing.assert_allclose(p_lean.breakpoints, p_gen.breakpoints, rtol=1e-9, atol=0)
    scale = max(float(np.max(p_gen.breakpoints)), 1e-300)
    for C_lean, C_gen in zip(p_lean.breakpoints, p_gen.breakpoints, strict=True):
        # each at its own breakpoint (they agree to rounding, and the index sets of a
        # breakpoint are those of the segment above it)
        a, b = p_lean.at(C_lean), p_gen.at(C_gen)
        np.testing.assert_allclose(a.alpha, b.alpha, rtol=0, atol=1e-8 * scale)
        assert a.intercept == pytest.approx(b.intercept, rel=1e-7, abs=1e-8)
        assert np.array_equal(a.elbow, b.elbow) and np.array_equal(a.left, b.left)
    assert [(e.kind, e.indices) for e in p_lean.events] == \
        [(e.kind, e.indices) for e in p_gen.events]


@pytest.mark.parametrize("name", sorted(DATASETS))
def test_lean_loop_equals_generic_engine(name):
    K, y = DATASETS[name]()
    lean = svm_path(K, y, C_max=C_HI, C_min=C_LO)
    gen = svm_path(K, y, C_max=C_HI, C_min=C_LO, solver="generic")
    assert lean.info["n_engine_events"] < lean.info["n_events"]  # the lean loop did the work
    _assert_same_path(lean, gen)
    assert lean.kkt_residuals().max() <= 1e-8


def test_lean_loop_hands_degenerate_events_to_the_engine():
    # duplicated points tie at every event they take part in; a linear kernel in 2-D is
    # singular beyond 3 elbow points: both need the generic engine's tie/singular handling
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 2))
    X = np.vstack([X, X[:10]])
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=40) > 0, 1.0, -1.0)
    K = X @ X.T
    lean = svm_path(K, y, C_max=10.0, C_min=1e-3)
    gen = svm_path(K, y, C_max=10.0, C_min=1e-3, solver="generic")
    assert lean.info["n_engine_events"] > 0
    assert lean.kkt_residuals().max() <= 1e-8
    np.testing.assert_allclose(lean.breakpoints[[0, -1]], gen.breakpoints[[0, -1]])
    for C in np.geomspace(1e-3, 10.0, 25):
        a, b = lean.at(C), gen.at(C)
        # the solution need not be unique (singular kernel): compare the decision values
        np.testing.assert_allclose(K @ (a.alpha * y), K @ (b.alpha * y), atol=1e-7)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(svm_problems())
def test_property_lean_loop_decision_values_equal_generic(problem):
    K, y, C_max = problem
    lean = svm_path(K, y, C_max=C_max, C_min=C_max * 1e-3)
    gen = svm_path(K, y, C_max=C_max, C_min=C_max * 1e-3, solver="generic")
    assert lean.kkt_residuals().max() <= 1e-8
    scale = max(1.0, float(np.max(np.abs(K))) * C_max * len(y))
    for C in np.geomspace(C_max * 1e-3, C_max, 9):
        a, b = lean.at(C), gen.at(C)
        np.testing.assert_allclose(K @ (a.alpha * y), K @ (b.alpha * y), atol=1e-8 * scale)


# Regression cases found by hypothesis on kernels with duplicated points (numerically
# rank-deficient, ill-conditioned elbow systems). Each failed before the linear solves of both
# solvers gained one step of iterative refinement: the inverse kept up to date by rank-one
# updates solved the elbow system only to ~cond * eps, and that error either misled the
# identification of the index sets or was carried along a long segment.
REGRESSION_CASES = {
    "svm_tie_rank_deficient": "6-index tie reported on a rank-17 RBF kernel (32 points, 5 "
                              "duplicated): HomotopyError, no consistent candidate",
    "svm_tie13_rank_deficient": "13-index tie at C_max on a rank-9 kernel (16 points): "
                                "HomotopyError",
    "svm_start_rank_deficient": "index sets of the start at C_max = 1000 not identified "
                                "(rank-10 kernel, 17 points): HomotopyError",
    "svm_residual_ill_conditioned": "elbow system with cond 1e8: the start's error carried "
                                    "down to C_min = 0.1 gave a KKT residual of 2.6e-7",
}


@pytest.mark.parametrize("solver", ["lean", "generic"])
@pytest.mark.parametrize("case", sorted(REGRESSION_CASES))
def test_regression_rank_deficient_kernels(case, solver):
    data = np.load(Path(__file__).parent / "data" / f"{case}.npz", allow_pickle=True)
    K, y = data["K"], data["y"]
    C_max, C_min = float(data["C_max"]), float(data["C_min"].item())
    path = svm_path(K, y, C_max=C_max, C_min=C_min, solver=solver)
    assert path.breakpoints[0] == pytest.approx(C_min) and path.breakpoints[-1] == C_max
    assert path.kkt_residuals().max() <= 1e-8
    # the other solver reaches the same decision values (the optimal Q alpha is unique)
    other = svm_path(K, y, C_max=C_max, C_min=C_min,
                     solver="generic" if solver == "lean" else "lean")
    scale = max(1.0, float(np.max(np.abs(K))) * C_max * len(y))
    for C in np.geomspace(C_min, C_max, 7):
        a, b = path.at(C), other.at(C)
        np.testing.assert_allclose(K @ (a.alpha * y), K @ (b.alpha * y), atol=1e-8 * scale)


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------
def _small():
    K, y = _overlapping()
    return K[:10, :10], y[[0, 1, 2, 3, 4, 40, 41, 42, 43, 44]].copy() * 0 + np.r_[
        -np.ones(5), np.ones(5)]


@pytest.mark.parametrize("mutate, match", [
    (lambda K, y: (np.where(np.eye(10) > 0, np.nan, K), y), "X"),
    (lambda K, y: (K, np.r_[y[:-1], np.inf]), "y"),
    (lambda K, y: (K[:, :9], y), "X"),
    (lambda K, y: (K + np.triu(np.ones((10, 10)), 1), y), "X"),
    (lambda K, y: (K, y[:9]), "y"),
    (lambda K, y: (K, np.r_[y[:-1], 2.0]), "y"),
    (lambda K, y: (K, np.ones(10)), "y"),
])
def test_bad_data_raises_value_error_naming_argument(mutate, match):
    K, y = _small()
    Kb, yb = mutate(K, y)
    with pytest.raises(ValueError, match=match):
        svm_path(Kb, yb, C_max=1.0)


@pytest.mark.parametrize("kwargs, match", [
    ({"C_max": 0.0}, "C_max"), ({"C_max": -1.0}, "C_max"), ({"C_max": np.nan}, "C_max"),
    ({"C_max": 1.0, "C_min": 2.0}, "C_min"), ({"C_max": 1.0, "C_min": 0.0}, "C_min"),
])
def test_bad_C_raises_value_error(kwargs, match):
    K, y = _small()
    with pytest.raises(ValueError, match=match):
        svm_path(K, y, **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"C": -1.0}, "C"),
    ({"alpha": np.zeros(9)}, "alpha"),
    ({"intercept": np.nan}, "intercept"),
])
def test_kkt_residual_checks_its_arguments(kwargs, match):
    K, y = _small()
    args = {"C": 1.0, "alpha": np.zeros(10), "intercept": 0.0} | kwargs
    with pytest.raises(ValueError, match=match):
        svm_kkt_residual(K, y, args["C"], args["alpha"], args["intercept"])


def test_kernel_from_data_equals_precomputed():
    """``svm_path(X, y, kernel="rbf")`` is the path of the precomputed RBF kernel; ``"scale"``
    is scikit-learn's width ``1 / (d X.var())``."""
    rng = np.random.default_rng(4)
    X = np.vstack([rng.normal(-1, 1, (15, 3)), rng.normal(1, 1, (15, 3))])
    y = np.r_[-np.ones(15), np.ones(15)]
    g = 1.0 / (X.shape[1] * X.var())
    from pathlib_core.core.kernels import rbf_kernel as rbf

    ref = svm_path(rbf(X, gamma=g), y, C_max=10.0, C_min=0.1)
    path = svm_path(X, y, kernel="rbf", C_max=10.0, C_min=0.1)
    np.testing.assert_array_equal(path.breakpoints, ref.breakpoints)
    lin = svm_path(X, y, kernel="linear", C_max=10.0, C_min=0.1)
    np.testing.assert_array_equal(lin.breakpoints,
                                  svm_path(X @ X.T, y, C_max=10.0, C_min=0.1).breakpoints)
    with pytest.raises(ValueError, match="kernel"):
        svm_path(X, y, kernel="poly", C_max=1.0)
