"""The MCM linear program: HiGHS solution vs a cvxpy oracle, KKT/LP-dual certificates,
separable data, the interpolation (ill-posedness) of the kernel LP, degenerate data, bad input."""

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathlib_core.core.kernels import linear_kernel, rbf_kernel
from pathlib_core.mcm import LP_METHODS, fit_mcm, mcm_lp


def _data(seed, n=24, d=3, shift=0.6):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + shift * y[:, None]
    return X, y


#: the degenerate designs of the property tests (see :func:`_degenerate`)
DEGENERATE_KINDS = ("dup", "collinear", "psd", "tie")


def _degenerate(seed, kind):
    """A small degenerate problem ``(K, y)``: duplicated points with some opposite labels,
    collinear features, a semi-definite linear kernel, or rounded (tied) coordinates."""
    X, y = _data(seed, n=16, d=3, shift=0.4)
    if kind == "dup":
        X[8:12] = X[:4]
        y[8:10] = -y[:2]
    elif kind == "collinear":
        X[:, 2] = 2 * X[:, 0] - X[:, 1]
    elif kind == "tie":
        X = np.round(X)
    K = linear_kernel(X) if kind in ("psd", "collinear") else rbf_kernel(X, gamma=0.7)
    return K, y


def _oracle(K, y, C, l1=0.0):
    """Optimal value of the LP (30)-(33), by Clarabel through cvxpy.

    ``l1 == 0``: the *dual* LP, max sum z1 s.t. zh, z1 >= 0, sum zh = 1, y'(zh - z1) = 0,
    z1 - zh <= C, K Y (zh - z1) = 0 (written as U_+' Y (zh - z1) = 0 on the range of K, so no
    equality is redundant). Its feasible set is compact, whereas the primal optimal face is
    unbounded (free lambda along the null space of K) and an interior-point solve of the
    primal then stalls. Strong duality makes the dual value the LP optimum.
    ``l1 > 0``: the primal in its natural variables (the norm bounds the optimal face).
    """
    n = y.size
    tol = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}
    if l1 > 0:
        lam, b, h, q = cp.Variable(n), cp.Variable(), cp.Variable(), cp.Variable(n)
        yf = cp.multiply(y, K @ lam + b)
        prob = cp.Problem(cp.Minimize(h + C * cp.sum(q) + l1 * cp.norm1(lam)),
                          [h >= yf + q, yf + q >= 1, q >= 0])
    else:
        zh, z1 = cp.Variable(n, nonneg=True), cp.Variable(n, nonneg=True)
        s, U = np.linalg.eigh(K)
        Up = U[:, s > 1e-10 * s.max()]
        prob = cp.Problem(cp.Maximize(cp.sum(z1)),
                          [cp.sum(zh) == 1, y @ (zh - z1) == 0, z1 - zh <= C,
                           Up.T @ cp.multiply(y, zh - z1) == 0])
    prob.solve(solver="CLARABEL", **tol)
    assert prob.status == "optimal", prob.status
    return prob.value


def _feasibility(r, K, y):
    yf = y * (K @ r.coef + r.intercept)
    return max(float(np.max(yf + r.slack - r.h)), float(np.max(1 - yf - r.slack)),
               float(np.max(-r.slack)))


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("l1", [0.0, 0.05])
def test_objective_matches_cvxpy_and_feasible(seed, l1):
    rng = np.random.default_rng(100 + seed)
    X, y = _data(seed, shift=0.3)
    K = linear_kernel(X) if seed == 0 else rbf_kernel(X, gamma=float(rng.uniform(0.1, 2)))
    C = float(rng.uniform(0.05, 5))
    r = fit_mcm(K, y, C=C, l1=l1)
    assert _feasibility(r, K, y) <= 1e-9
    ref = _oracle(K, y, C, l1)
    assert abs(r.objective - ref) <= 1e-7 * max(1.0, abs(ref))
    assert r.kkt.max <= 1e-8
    assert r.h >= 1 - 1e-9


def test_lp_dual_certificate():
    """Strong duality of the LP dual: objective = sum z^1; K Y (z^h - z^1) = 0; sum z^h = 1."""
    X, y = _data(3, shift=0.2)
    K = linear_kernel(X)  # rank 3: cannot interpolate, slack and C matter
    r = fit_mcm(K, y, C=0.5)
    zh, z1 = r.dual_upper, r.dual_lower
    assert min(zh.min(), z1.min()) >= -1e-10
    assert abs(zh.sum() - 1) <= 1e-9
    assert np.max(np.abs(K @ (y * (zh - z1)))) <= 1e-8
    assert abs(y @ (zh - z1)) <= 1e-9
    assert np.max(z1 - zh) <= 0.5 + 1e-9
    assert abs(z1.sum() - r.objective) <= 1e-8
    assert np.any(r.slack > 1e-6)  # the example really uses slack


@pytest.mark.parametrize("method", LP_METHODS)
def test_separable_linear_large_C(method):
    X, y = _data(4, d=2, shift=3.0)
    K = linear_kernel(X)
    r = fit_mcm(K, y, C=1e4, method=method)
    yf = y * (K @ r.coef + r.intercept)
    assert np.all(r.slack <= 1e-9)
    assert yf.min() >= 1 - 1e-9
    assert yf.max() <= r.h + 1e-9
    assert r.h > 1 + 1e-3  # a linear kernel cannot interpolate 24 points in 2-D


def test_full_rank_kernel_interpolates():
    """The issue's question: with a positive definite kernel the LP (30)-(33) interpolates."""
    X, y = _data(5, n=30, shift=0.0)  # no class structure at all
    K = rbf_kernel(X, gamma=1.0)
    assert np.linalg.eigvalsh(K).min() > 1e-8
    objs, nsv = [], []
    for C in (1e-3, 1.0, 1e3):
        r = fit_mcm(K, y, C=C)
        objs.append(r.objective)
        nsv.append(r.n_support)
        assert abs(r.h - 1) <= 1e-8 and np.all(r.slack <= 1e-9)
        assert np.max(np.abs(y * (K @ r.coef + r.intercept) - 1)) <= 1e-7
    assert np.ptp(objs) <= 1e-9  # C without effect
    assert min(nsv) == 30  # every lambda non-zero
    r1 = fit_mcm(K, y, C=1.0, l1=0.05)
    assert r1.objective > 1 + 1e-6 and r1.n_support < 30  # the l1 variant is sparse


def test_decision_uses_coefficients_of_training_points():
    X, y = _data(6)
    r = fit_mcm(rbf_kernel(X, gamma=0.5), y, C=1.0, l1=0.1)
    Xt = np.random.default_rng(1).normal(size=(7, 3))
    Kt = rbf_kernel(Xt, X, gamma=0.5)
    f = r.decision_function(Kt)
    f_sv = Kt[:, r.support] @ r.coef[r.support] + r.intercept
    np.testing.assert_allclose(f, f_sv, atol=1e-8 * max(1, np.abs(r.coef).max()))
    with pytest.raises(ValueError, match="K_test must have"):
        r.decision_function(Kt[:, :-1])


@settings(deadline=None, max_examples=20)
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(DEGENERATE_KINDS),
       C=st.floats(0.01, 100), l1=st.sampled_from([0.0, 0.1]))
def test_degenerate_data_feasible_and_optimal(seed, kind, C, l1):
    K, y = _degenerate(seed, kind)
    r = fit_mcm(K, y, C=C, l1=l1)
    assert _feasibility(r, K, y) <= 1e-9
    # multipliers of q >= 0 are of size C: the complementarity residual scales with C
    assert r.kkt.max <= 1e-8 * max(1.0, C)
    ref = _oracle(K, y, C, l1)
    assert abs(r.objective - ref) <= 1e-7 * max(1.0, abs(ref)) + 1e-9 * C


def test_solution_is_feasible_for_the_lp_as_written():
    """The returned (lambda, b, h, q) is feasible and has the stated cost in the LP (30)-(33)
    exactly as written (``mcm_lp``), whichever form fit_mcm solved internally."""
    X, y = _data(7)
    K = rbf_kernel(X, gamma=0.3)
    for l1 in (0.0, 0.2):
        r = fit_mcm(K, y, C=2.0, l1=l1)
        lp = mcm_lp(K, y, C=2.0, l1=l1)
        lam = ([np.maximum(r.coef, 0), np.maximum(-r.coef, 0)] if l1 > 0 else [r.coef])
        x = np.concatenate(lam + [[r.intercept, r.h], r.slack])
        assert np.max(lp["G"] @ x - lp["h"]) <= 1e-9
        assert abs(lp["c"] @ x - r.objective) <= 1e-10 * max(1, r.objective)
        assert abs(r.objective - (r.h + 2.0 * r.slack.sum() + l1 * np.abs(r.coef).sum())) \
            <= 1e-12 * max(1, r.objective)


def test_range_form_equals_lp_as_written_when_well_conditioned():
    """On a well-conditioned kernel, HiGHS on the LP as written gives the same optimum."""
    from scipy.optimize import linprog
    X, y = _data(8, n=30, shift=0.2)
    K = rbf_kernel(X, gamma=0.05) + 0.5 * np.eye(30)  # eigenvalues >= 0.5
    lp = mcm_lp(K, y, C=0.3)
    res = linprog(lp["c"], A_ub=lp["G"], b_ub=lp["h"],
                  bounds=[(v if np.isfinite(v) else None, None) for v in lp["lb"]],
                  method="highs")
    r = fit_mcm(K, y, C=0.3)
    assert r.rank == 30
    assert abs(res.fun - r.objective) <= 1e-7 * max(1, abs(res.fun))


def test_ill_conditioned_kernel_matches_dual_oracle():
    """Numerically low-rank RBF kernel (2-D data, wide kernel): HiGHS on the LP as written
    is unreliable here; the range form agrees with the dual oracle on the same range."""
    X, y = _data(9, n=120, d=2, shift=1.0)
    K = rbf_kernel(X, gamma=0.3)
    r = fit_mcm(K, y, C=1.0)
    assert r.rank < 120
    assert abs(r.objective - _oracle(K, y, 1.0)) <= 1e-7 * r.objective
    assert r.kkt.max <= 1e-7


@pytest.mark.parametrize("kw, match", [
    ({"C": 0.0}, "C must be > 0"),
    ({"C": -1.0}, "C must be > 0"),
    ({"l1": -0.1}, "l1 must be >= 0"),
    ({"method": "simplex"}, "method must be one of"),
    ({"C": float("nan")}, "C must be finite"),
])
def test_bad_parameters(kw, match):
    X, y = _data(8, n=8)
    with pytest.raises(ValueError, match=match):
        fit_mcm(linear_kernel(X), y, **{"C": 1.0, **kw})


def test_bad_data():
    X, y = _data(9, n=8)
    K = linear_kernel(X)
    with pytest.raises(ValueError, match="y must contain both classes"):
        fit_mcm(K, np.ones(8))
    with pytest.raises(ValueError, match="y must contain only -1 and"):
        fit_mcm(K, np.arange(8.0))
    Kn = K.copy()
    Kn[0, 1] = Kn[1, 0] = np.nan
    with pytest.raises(ValueError, match="K"):
        fit_mcm(Kn, y)
    with pytest.raises(ValueError, match="K must be a square"):
        fit_mcm(K[:, :5], y)
    with pytest.raises(ValueError, match="K must be symmetric"):
        fit_mcm(K + np.triu(np.ones((8, 8)), 1), y)
    with pytest.raises(ValueError, match="y"):
        fit_mcm(K, y[:5])


def test_mcm_lp_checks_its_arguments():
    K, y = np.eye(4), np.array([1.0, -1.0, 1.0, -1.0])
    with pytest.raises(ValueError, match="C"):
        mcm_lp(K, y, C=-1.0)
    with pytest.raises(ValueError, match="l1"):
        mcm_lp(K, y, C=1.0, l1=-0.1)
    with pytest.raises(ValueError, match="K"):
        mcm_lp(np.where(np.eye(4) > 0, np.nan, K), y, C=1.0)
    with pytest.raises(ValueError, match="y"):
        mcm_lp(K, y[:3], C=1.0)


def test_a_cycling_simplex_is_stopped_and_reported():
    """A training fold of tae (duplicated points, a numerically low-rank Gaussian kernel) on
    which HiGHS's simplex ran without end for the paper's LP: the iteration cap turns it into
    a SolverError, which a grid search scores as a failed fit."""
    from sklearn.model_selection import StratifiedKFold
    from sklearn.preprocessing import StandardScaler

    from pathlib_core.core.exceptions import SolverError
    from pathlib_core.mcm import protocol

    X, y = protocol.load_binary("tae")
    tr, _ = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[2]
    Z, yt = StandardScaler().fit_transform(X[tr]), y[tr]
    a, _ = list(StratifiedKFold(5, shuffle=True, random_state=0).split(Z, yt))[4]
    with pytest.raises(SolverError, match="not solved by HiGHS"):
        fit_mcm(rbf_kernel(Z[a], gamma=0.5 / X.shape[1]), yt[a], C=1.0)


def test_the_interior_point_fallback_has_its_own_iteration_cap(monkeypatch):
    """The IPM gets :data:`IPM_ITERATION_LIMIT`, not the simplex cap: a stalled IPM used to
    run ~28,000 iterations (minutes) before its failure was reported."""
    from scipy.optimize import OptimizeResult

    from pathlib_core.core.exceptions import SolverError
    from pathlib_core.mcm import lp as lpmod

    seen = {}

    def failing(c, method, options, **kw):
        seen[method] = options["maxiter"]
        return OptimizeResult(status=1, x=None, message="iteration limit")

    monkeypatch.setattr(lpmod, "linprog", failing)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with pytest.raises(SolverError, match="highs-ipm: status 1"):
        fit_mcm(rbf_kernel(X, gamma=0.5), y, C=1.0)
    assert set(seen) == set(LP_METHODS)
    assert seen["highs-ipm"] == lpmod.IPM_ITERATION_LIMIT < seen["highs"] == seen["highs-ds"]


def test_at_larger_C_is_the_solution_of_the_larger_C():
    """A slack-free solution is optimal at any larger C: same objective as a fresh solve, and a
    certificate at rounding level for the new costs."""
    from pathlib_core.mcm import at_larger_C

    X, y = _data(0, shift=2.0)
    K = rbf_kernel(X, gamma=0.5)
    r = fit_mcm(K, y, C=1.0, l1=0.01)
    assert not np.any(r.slack)
    up = at_larger_C(r, 50.0)
    fresh = fit_mcm(K, y, C=50.0, l1=0.01)
    assert up.C == 50.0 and up.n_iter == 0
    assert up.objective == pytest.approx(fresh.objective, rel=1e-9)
    from pathlib_core.core.kkt import lp_residuals

    lp = up.lp
    rel = lp_residuals(lp["c"], lp["x"], G=lp["G"], h=lp["h"], lb=lp["lb"], ub=lp["ub"],
                       z=lp["z"], w_lb=lp["w_lb"], w_ub=lp["w_ub"], relative=True)
    assert rel.max < 1e-9 and up.kkt.max <= 1e-8 * 50.0
    np.testing.assert_allclose(up.dual_slack, r.dual_slack + 49.0)
    with pytest.raises(ValueError, match="C must be at least"):
        at_larger_C(r, 0.5)
    soft = fit_mcm(K, np.where(np.arange(len(y)) < 3, -y, y), C=0.05, l1=0.5)
    assert np.any(soft.slack)
    with pytest.raises(ValueError, match="no slack"):
        at_larger_C(soft, 2.0)
