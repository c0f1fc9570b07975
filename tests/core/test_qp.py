"""The active-set QP solver against the cvxpy oracle; warm starts; degenerate data."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathlib_core.core.qp import NotPSDError, QPResult, solve_lp, solve_qp, solve_qp_cvxpy

GAP = 1e-8
KKT = 1e-8


def _rel_gap(a: float, b: float) -> float:
    return abs(a - b) / max(1.0, abs(b))


def _check_against_oracle(P, q, **kw):
    res = solve_qp(P, q, **kw)
    ref = solve_qp_cvxpy(P, q, **kw)
    assert res.status == "optimal", res
    assert ref.status == "optimal", ref
    assert _rel_gap(res.objective, ref.objective) <= GAP, (res.objective, ref.objective)
    assert res.kkt.max <= KKT, res.kkt
    return res, ref


def _svm(n, kernel, seed=0, C=1.0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 2))
    y = np.where(X[:, 0] + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    if kernel == "rbf":
        K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    else:
        K = X @ X.T  # rank 2
    Q = np.outer(y, y) * K
    return dict(P=Q, q=-np.ones(n), A=y[None, :], b=[0.0], lb=0.0, ub=C)


def _call(solver, prob, **extra):
    prob = dict(prob)
    return solver(prob.pop("P"), prob.pop("q"), **prob, **extra)


# --------------------------------------------------------------------------------------------
# Agreement with the oracle
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_strictly_convex_with_all_constraint_types(seed):
    rng = np.random.default_rng(seed)
    n = 25
    M = rng.standard_normal((n, n))
    P = M @ M.T + np.eye(n)
    q = 5 * rng.standard_normal(n)
    G = rng.standard_normal((3, n))
    A = rng.standard_normal((2, n))
    x_feas = rng.uniform(-0.5, 0.5, n)
    res, ref = _check_against_oracle(P, q, G=G, h=G @ x_feas + 0.1, A=A, b=A @ x_feas,
                                     lb=-1.0, ub=np.where(rng.random(n) < 0.5, 1.0, np.inf))
    np.testing.assert_allclose(res.x, ref.x, atol=1e-6)
    np.testing.assert_allclose(res.nu, ref.nu, atol=1e-5)


def test_box_only():
    rng = np.random.default_rng(5)
    M = rng.standard_normal((40, 40))
    res, _ = _check_against_oracle(M @ M.T, 10 * rng.standard_normal(40), lb=-0.2, ub=0.3)
    assert res.active.at_lower.any() and res.active.at_upper.any() and res.active.free.any()
    assert res.nu.shape == (0,) and res.z.shape == (0,)
    assert res.info["start"] == "zero" and res.info["n_crash"] >= 1  # the crash start was used


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_svm_dual(kernel):
    prob = _svm(80, kernel)
    res, ref = _check_against_oracle(**prob)
    free = res.active.free
    assert free.any()
    # free variables are margin support vectors: y_i f(x_i) = 1 with intercept -nu
    y = prob["A"][0]
    margin = y * (y * (prob["P"] @ res.x) / y - res.nu[0] * 0.0) - y * res.nu[0] * 0.0
    yf = prob["P"] @ res.x + res.nu[0] * y  # = y_i f(x_i) with f = sum_j a_j y_j K_ij + nu
    np.testing.assert_allclose(yf[free], 1.0, atol=1e-9)
    assert np.all(yf[res.active.at_lower] >= 1.0 - 1e-9)
    assert np.all(yf[res.active.at_upper] <= 1.0 + 1e-9)
    assert margin.shape == (80,)


def test_singular_psd_rank_deficient_and_duplicates():
    rng = np.random.default_rng(7)
    n = 30
    B = rng.standard_normal((n, 3))
    B[10:15] = B[0]  # duplicate points
    P = B @ B.T  # rank 3, with duplicate rows and columns
    q = rng.standard_normal(n)
    _check_against_oracle(P, q, lb=-1.0, ub=1.0)
    _check_against_oracle(P, q, A=np.ones((1, n)), b=[2.0], lb=-1.0, ub=1.0)


def test_lasso_split_form():
    # min 1/2 ||X (u - v) - y||^2 + lam 1'(u + v),  u, v >= 0  (P singular by construction)
    rng = np.random.default_rng(11)
    X = rng.standard_normal((20, 12))
    y = X[:, :3] @ np.array([2.0, -1.0, 0.5]) + 0.1 * rng.standard_normal(20)
    XtX, Xty, lam = X.T @ X, X.T @ y, 2.0
    P = np.block([[XtX, -XtX], [-XtX, XtX]])
    q = np.concatenate([lam - Xty, lam + Xty])
    res, _ = _check_against_oracle(P, q, lb=0.0)
    beta = res.x[:12] - res.x[12:]
    # Lasso optimality: |X'(y - X beta)| <= lam, with equality on the support
    corr = X.T @ (y - X @ beta)
    assert np.all(np.abs(corr) <= lam + 1e-9)
    assert np.allclose(np.abs(corr[np.abs(beta) > 1e-9]), lam, atol=1e-9)


def test_general_inequalities_only():
    rng = np.random.default_rng(2)
    n = 15
    M = rng.standard_normal((n, 5))
    P = M @ M.T + 1e-3 * np.eye(n)
    G = np.vstack([rng.standard_normal((4, n)), -np.eye(n)])
    res, _ = _check_against_oracle(P, rng.standard_normal(n), G=G, h=np.ones(4 + n))
    assert res.active.inequalities.any()


def test_p_none_is_a_linear_program_and_results_print():
    res = solve_qp(None, [1.0, -1.0], lb=0.0, ub=1.0)
    assert res.status == "optimal" and res.x.tolist() == [0.0, 1.0]
    assert res.w_lb.tolist() == [1.0, 0.0] and res.w_ub.tolist() == [0.0, 1.0]
    assert "status=optimal" in str(res) and "1 at lower" in str(res.active)
    assert res.kkt.max == 0.0


def test_lp_as_qp_with_zero_hessian_matches_highs():
    rng = np.random.default_rng(4)
    c = rng.standard_normal(10)
    G = rng.standard_normal((4, 10))
    kw = dict(G=G, h=np.ones(4), A=np.ones((1, 10)), b=[0.5], lb=-1.0, ub=1.0)
    res = solve_qp(np.zeros((10, 10)), c, **kw)
    lp = solve_lp(c, **kw)
    assert res.status == lp.status == "optimal"
    assert _rel_gap(res.objective, lp.objective) <= 1e-10
    assert res.kkt.max <= 1e-10 and lp.kkt.max <= 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_lp_starts_at_the_simplex_vertex_on_a_degenerate_hinge_dual(seed):
    # the shape of the selective-ridge hinge dual with no strong feature: box, one balance
    # row and kink rows, with duplicated objects (tied columns) and a repeated kink row
    rng = np.random.default_rng(seed)
    N, k = 120, 6
    X = rng.standard_normal((N, k))
    X[N // 2:] = X[: N // 2]  # every object twice
    y = np.where(rng.random(N) < 0.4, 1.0, -1.0)
    A = np.vstack([np.ones((1, N)), X.T, X[:, :1].T])  # the last row repeats the second
    lam = np.where(y > 0, 0.3, -0.3) * rng.random(N)
    lam -= np.where(y > 0, 1.0, 0.0) * (lam.sum() / max(1, (y > 0).sum()))
    lam = np.clip(lam, np.where(y > 0, 0.0, -1.0), np.where(y > 0, 1.0, 0.0))
    kw = dict(A=A, b=A @ lam, lb=np.where(y > 0, 0.0, -1.0), ub=np.where(y > 0, 1.0, 0.0))
    res = solve_qp(None, -y, warm_start=lam, **kw)
    assert res.info["start"] == "lp-simplex"
    assert res.status == "optimal" and res.kkt.max <= 1e-10, res.kkt
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = solve_qp_cvxpy(np.zeros((N, N)), -y, **kw)
    assert ref.status in ("optimal", "optimal_inaccurate")
    assert _rel_gap(res.objective, ref.objective) <= GAP
    assert res.n_iter <= 5  # the vertex is only verified
    # a warm start with a working set (a QPResult) still takes precedence over the simplex
    again = solve_qp(np.zeros((N, N)), -y, warm_start=res, **kw)
    assert again.info["start"] == "warm" and again.n_iter <= 2
    assert _rel_gap(again.objective, res.objective) <= 1e-12


# --------------------------------------------------------------------------------------------
# Status reporting
# --------------------------------------------------------------------------------------------
def test_infeasible_is_reported():
    kw = dict(A=[[1.0, 1.0]], b=[5.0], lb=0.0, ub=1.0)
    res = solve_qp(np.eye(2), np.zeros(2), **kw)
    assert res.status == "infeasible" and np.all(np.isnan(res.x))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert solve_qp_cvxpy(np.eye(2), np.zeros(2), **kw).status == "infeasible"
    res = solve_qp(np.eye(2), np.zeros(2), G=[[1.0, 1.0]], h=[-5.0], lb=0.0)
    assert res.status == "infeasible"
    assert solve_lp(np.ones(2), **kw).status == "infeasible"


@pytest.mark.parametrize(
    "P, q, kw",
    [
        (np.zeros((1, 1)), [-1.0], {}),
        (np.zeros((2, 2)), [-1.0, 1.0], dict(lb=[-1.0, -1.0])),
        (np.ones((2, 2)), [-1.0, 1.0], {}),  # zero curvature along (1, -1)
        (np.ones((2, 2)), [1.0, 1.0], dict(lb=[0.0, -np.inf], A=[[1.0, -1.0]], b=[0.0])
         ),  # bounded: included as a control
    ],
)
def test_unbounded_is_reported(P, q, kw):
    res = solve_qp(P, q, **kw)
    ref = solve_qp_cvxpy(P, q, **kw)
    assert res.status == ref.status
    if res.status == "optimal":
        assert _rel_gap(res.objective, ref.objective) <= GAP
    else:
        assert res.status == "unbounded"


def test_max_iter_status():
    rng = np.random.default_rng(0)
    M = rng.standard_normal((30, 30))
    res = solve_qp(M @ M.T, rng.standard_normal(30), lb=-0.01, ub=0.01, max_iter=3)
    assert res.status == "max_iter" and res.n_iter == 3


# --------------------------------------------------------------------------------------------
# Warm starts
# --------------------------------------------------------------------------------------------
def test_warm_start_after_changing_q_is_cheaper():
    prob = _svm(150, "rbf", seed=3)
    cold = _call(solve_qp, prob)
    prob2 = dict(prob, q=prob["q"] + 0.01 * np.random.default_rng(0).standard_normal(150))
    cold2 = _call(solve_qp, prob2)
    warm2 = _call(solve_qp, prob2, warm_start=cold)
    assert warm2.status == "optimal" and warm2.kkt.max <= KKT
    assert _rel_gap(warm2.objective, cold2.objective) <= 1e-12
    assert warm2.n_iter * 5 < cold2.n_iter, (warm2.n_iter, cold2.n_iter)


def test_warm_start_after_changing_bounds_is_cheaper():
    prob = _svm(150, "linear", seed=4, C=1.0)
    cold = _call(solve_qp, prob)
    prob2 = dict(prob, ub=1.05)
    cold2 = _call(solve_qp, prob2)
    warm2 = _call(solve_qp, prob2, warm_start=cold)
    assert warm2.status == "optimal" and warm2.kkt.max <= KKT
    assert _rel_gap(warm2.objective, cold2.objective) <= 1e-12
    assert warm2.n_iter * 5 < cold2.n_iter, (warm2.n_iter, cold2.n_iter)
    # shrinking the box makes the old point infeasible: it is repaired
    warm3 = _call(solve_qp, dict(prob, ub=0.9), warm_start=cold)
    assert warm3.status == "optimal" and warm3.kkt.max <= KKT


def test_warm_start_with_general_inequalities():
    rng = np.random.default_rng(3)
    n = 30
    M = rng.standard_normal((n, n))
    P, q = M @ M.T, 5 * rng.standard_normal(n)
    G = rng.standard_normal((3, n))
    kw = dict(A=np.ones((1, n)), b=[0.3], lb=-0.5, ub=0.5)
    h = G @ solve_qp(P, q, **kw).x - 0.05  # cuts off the solution without G
    kw["G"] = G
    first = solve_qp(P, q, h=h, **kw)
    assert first.active.inequalities.sum() >= 2
    for h2 in (h + 0.01, h - 0.01, h - 0.5):
        warm = solve_qp(P, q, h=h2, warm_start=first, **kw)
        cold = solve_qp(P, q, h=h2, **kw)
        assert warm.status == cold.status == "optimal"
        assert warm.kkt.max <= KKT
        assert _rel_gap(warm.objective, cold.objective) <= 1e-12
        assert warm.n_iter < cold.n_iter


def test_warm_start_from_a_vector():
    rng = np.random.default_rng(8)
    M = rng.standard_normal((20, 20))
    P, q = M @ M.T, rng.standard_normal(20)
    kw = dict(A=np.ones((1, 20)), b=[1.0], lb=-0.5, ub=0.5)
    cold = solve_qp(P, q, **kw)
    warm = solve_qp(P, q, warm_start=cold.x, **kw)
    assert warm.n_iter <= 2 and warm.info["start"] == "warm"
    far = solve_qp(P, q, warm_start=np.full(20, 3.0), **kw)  # infeasible warm point
    assert far.status == "optimal" and _rel_gap(far.objective, cold.objective) <= 1e-12
    assert far.info["start"] in ("warm-repaired", "phase1-from-warm")


# --------------------------------------------------------------------------------------------
# Validation at the public edge
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "args, kw, match",
    [
        ((np.ones((2, 3)), np.ones(2)), {}, "P must be a square"),
        ((np.eye(2), np.ones(3)), {}, "q must have length 2"),
        ((np.eye(2), [np.nan, 1.0]), {}, "q must contain only finite"),
        ((np.eye(2), np.ones(2)), dict(lb=[1.0, 0.0], ub=[0.0, 1.0]), "lb must be <= ub"),
        ((np.eye(2), np.ones(2)), dict(ub=[np.nan, 1.0]), "ub must not contain NaN"),
        ((np.eye(2), np.ones(2)), dict(A=[[1.0, np.inf]], b=[0.0]), "A must contain only"),
        ((np.eye(2), np.ones(2)), dict(tol=-1.0), "tol must be > 0"),
        ((np.eye(2), np.ones(2)), dict(max_iter=0), "max_iter must be a positive integer"),
        ((np.eye(2), np.ones(2)), dict(warm_start=np.ones(3)), "warm_start must be"),
        ((np.eye(2), np.ones(2)), dict(warm_start=[np.nan, 0.0]), "warm_start must contain"),
        ((np.eye(2), np.ones(2)), dict(compiled="yes"), "compiled must be True or False"),
    ],
)
def test_bad_input_raises_value_error_naming_the_argument(args, kw, match):
    with pytest.raises(ValueError, match=match):
        solve_qp(*args, **kw)


def test_oracle_validates_too():
    with pytest.raises(ValueError, match="solver must be one of"):
        solve_qp_cvxpy(np.eye(2), np.ones(2), solver="NOPE")
    with pytest.raises(ValueError, match="P must be symmetric"):
        solve_qp_cvxpy([[1.0, 1.0], [0.0, 1.0]], np.ones(2))


def test_warm_start_result_of_another_size_is_rejected():
    other = solve_qp(np.eye(3), np.ones(3))
    assert isinstance(other, QPResult)
    with pytest.raises(ValueError, match="warm_start must be a QPResult of a problem with 2"):
        solve_qp(np.eye(2), np.ones(2), warm_start=other)


def test_oracle_accepts_psd_matrix_with_negative_rounding():
    rng = np.random.default_rng(9)
    B = rng.standard_normal((10, 2))
    P = B @ B.T
    P = P - 1e-12 * np.eye(10)  # slightly indefinite
    P = 0.5 * (P + P.T)
    res = solve_qp_cvxpy(P, rng.standard_normal(10), lb=-1.0, ub=1.0)
    assert res.status == "optimal"


# --------------------------------------------------------------------------------------------
# Property tests on degenerate data
# --------------------------------------------------------------------------------------------
@st.composite
def degenerate_qps(draw):
    n = draw(st.integers(1, 7))
    k = draw(st.integers(0, 3))
    ints = st.integers(-2, 2)
    B = np.array(draw(st.lists(st.lists(ints, min_size=k, max_size=k), min_size=n,
                               max_size=n)), dtype=float).reshape(n, k)
    if n > 1 and draw(st.booleans()):
        B[-1] = B[0]  # duplicate point
    scale = draw(st.sampled_from([1e-3, 1.0, 1e3]))
    P = scale * (B @ B.T)
    q = scale * np.array(draw(st.lists(ints, min_size=n, max_size=n)), dtype=float)
    lo = np.array(draw(st.lists(st.sampled_from([-np.inf, -1.0, 0.0]), min_size=n,
                                max_size=n)))
    width = np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 2.0, np.inf]), min_size=n,
                                   max_size=n)))
    hi = np.where(np.isfinite(lo), np.where(np.isfinite(lo), lo, 0.0) + width, 1.0)
    kw = dict(lb=lo, ub=hi)
    # a feasible point to build consistent equality / inequality rows from
    x0 = np.clip(0.0, lo, hi)
    if draw(st.booleans()):
        a = np.array(draw(st.lists(ints, min_size=n, max_size=n)), dtype=float)
        kw.update(A=np.vstack([a, a]), b=np.array([a @ x0, a @ x0]))  # a redundant row
    if draw(st.booleans()):
        g = np.array(draw(st.lists(ints, min_size=n, max_size=n)), dtype=float)
        kw.update(G=g[None, :], h=np.array([g @ x0 + draw(st.sampled_from([0.0, 0.5]))]))
    return P, q, kw


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(degenerate_qps())
def test_property_degenerate_qps_agree_with_oracle(problem):
    P, q, kw = problem
    res = solve_qp(P, q, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = solve_qp_cvxpy(P, q, **kw)
    if ref.status not in ("optimal", "unbounded"):
        return  # the oracle itself is unsure; nothing to compare
    assert res.status == ref.status, (res, ref)
    if res.status == "optimal":
        scale = max(1.0, float(np.max(np.abs(P))), float(np.max(np.abs(q))))
        assert abs(res.objective - ref.objective) <= 1e-7 * scale * max(1.0, abs(ref.objective))
        assert res.kkt_residuals(relative=True).max <= 1e-9, res.kkt
        # warm restart from the solution converges at once
        again = solve_qp(P, q, warm_start=res, **kw)
        assert again.status == "optimal" and again.n_iter <= 2


@pytest.mark.parametrize("row", [[0.0, 1.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 1.0, 1.0]])
def test_degenerate_qp_with_a_ray_of_zero_curvature_to_a_bound(row):
    # found by test_property_degenerate_qps_agree_with_oracle: x_0 enters only linearly and
    # goes to its upper bound along a ray of zero curvature; the variables of the duplicated
    # equality row without curvature and cost (x_1 or x_3) are free directions of zero
    # gradient, not unbounded ones. The solver reported "unbounded" (a ray made of rounding,
    # judged against a stale zero gradient scale) or an optimum with relative stationarity
    # 1.0 (rounding left in x_4, whose stationarity row has no other terms, by the ray step
    # and by the closing feasibility correction).
    P = np.diag([0.0, 0.0, 0.0, 0.0, 0.001])
    q = np.array([-0.001, 0.0, 0.0, 0.0, 0.0])
    kw = dict(A=np.array([row, row]), b=np.zeros(2), lb=np.full(5, -np.inf), ub=np.ones(5))
    res = solve_qp(P, q, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = solve_qp_cvxpy(P, q, **kw)
    assert ref.status == "optimal" and ref.objective == pytest.approx(-0.001, abs=1e-9)
    assert res.status == ref.status, res
    assert abs(res.objective - ref.objective) <= 1e-7 * max(1.0, abs(ref.objective))
    assert res.kkt_residuals(relative=True).max <= 1e-9, res.kkt_residuals(relative=True)
    assert res.x[0] == 1.0 and res.active.at_upper[0]


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 12), st.integers(0, 10_000), st.floats(0.05, 20.0))
def test_property_svm_ties_and_duplicates(n, seed, C):
    rng = np.random.default_rng(seed)
    X = rng.integers(-1, 2, size=(n, 2)).astype(float)  # many duplicate points
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    Q = np.outer(y, y) * (X @ X.T)
    res = solve_qp(Q, -np.ones(n), A=y[None, :], b=[0.0], lb=0.0, ub=C)
    ref = solve_qp_cvxpy(Q, -np.ones(n), A=y[None, :], b=[0.0], lb=0.0, ub=C)
    assert res.status == "optimal"
    assert _rel_gap(res.objective, ref.objective) <= 1e-7
    assert res.kkt.max <= 1e-9 * max(1.0, C * n)


def test_beale_cycling_example_terminates():
    # Beale's LP, on which the simplex method with the textbook pivot rule cycles
    c = np.array([-0.75, 20.0, -0.5, 6.0])
    G = np.array([[0.25, -8.0, -1.0, 9.0], [0.5, -12.0, -0.5, 3.0], [0.0, 0.0, 1.0, 0.0]])
    h = np.array([0.0, 0.0, 1.0])
    for P in (None, np.zeros((4, 4))):
        res = solve_qp(P, c, G=G, h=h, lb=0.0, warm_start=np.zeros(4))
        assert res.status == "optimal" and res.objective == pytest.approx(-1.25, abs=1e-12)
        assert res.kkt.max <= 1e-12


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2 ** 31 - 1), st.integers(2, 12), st.integers(1, 10))
def test_row_basis_residuals_equal_least_squares(seed, n, k):
    # the working-set rows are tested for independence by their residual after a least-
    # squares fit on the free columns; _RowBasis updates a QR factorization instead of
    # solving afresh: the residuals must be lstsq's, also after the free columns change
    from pathlib_core.core.qp import _RowBasis

    rng = np.random.default_rng(seed)
    basis, rows = _RowBasis(), []
    F = np.sort(rng.choice(n, size=n - 1, replace=False))  # one bound variable
    for step in range(k + 3):
        if step == k // 2:
            F = np.arange(n)  # the bound variable is freed (as in _accept_row)
        if rows and rng.random() < 0.3:
            row = rng.standard_normal(len(rows)) @ np.vstack(rows)  # a dependent row
        else:
            row = rng.standard_normal(n)
        if rows:
            M = np.vstack(rows)
            c = np.linalg.lstsq(M[:, F].T, row[F], rcond=None)[0]
            expect = row - M.T @ c
        else:
            expect = row
        np.testing.assert_allclose(basis.residual(row, F), expect, rtol=0, atol=1e-9)
        if np.linalg.norm(expect[F]) > 1e-6 * np.linalg.norm(row):  # independent on F
            basis.append(row, F)
            rows.append(row)
    assert len(basis) == len(rows)


# --------------------------------------------------------------------------------------------
# Scale: equilibration by powers of two, per-coordinate tolerances
# --------------------------------------------------------------------------------------------
def _random_convex_qp(rng, *, strictly_convex=False):
    """A convex QP with bounds, equalities and inequalities (feasible by construction)."""
    n = int(rng.integers(2, 25))
    rank = n if strictly_convex else int(rng.integers(0, n + 1))
    M = rng.standard_normal((n, rank))
    P = M @ M.T + (np.eye(n) if strictly_convex else 0.0)
    q = 3.0 * rng.standard_normal(n)
    x_feas = rng.uniform(-0.5, 0.5, n)
    kw = dict(lb=np.where(rng.random(n) < 0.8, -1.0, -np.inf),
              ub=np.where(rng.random(n) < 0.6, 1.0, np.inf))
    if rank < n:  # a singular P: keep the problem bounded with a full box
        kw.update(lb=np.full(n, -2.0), ub=np.full(n, 2.0))
    mA, mG = int(rng.integers(0, 3)), int(rng.integers(0, 4))
    if mA:
        A = rng.standard_normal((mA, n))
        kw.update(A=A, b=A @ x_feas)
    if mG:
        G = rng.standard_normal((mG, n))
        kw.update(G=G, h=G @ x_feas + rng.uniform(0.0, 0.3, mG))
    return P, q, kw


def _rescaled(P, q, kw, d, r_G, r_A, s):
    """The same QP in the variables ``x / d``, rows times ``r``, objective times ``s``."""
    out = dict(P=s * d[:, None] * P * d[None, :], q=s * d * q, lb=kw["lb"] / d,
               ub=kw["ub"] / d)
    if "A" in kw:
        out.update(A=r_A[:, None] * kw["A"] * d[None, :], b=r_A * kw["b"])
    if "G" in kw:
        out.update(G=r_G[:, None] * kw["G"] * d[None, :], h=r_G * kw["h"])
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 2**31 - 1), st.booleans(), st.sampled_from(["columns", "all"]))
def test_property_scaled_qp_has_the_same_solution(seed, strictly_convex, which):
    # x -> D x, rows of G and A times R, objective times s: the exact symmetries of the QP.
    # Scales 10**U(-8, 8): the solver must return the same point in the user's units, with
    # a per-coordinate certificate at rounding level, in about as many iterations
    rng = np.random.default_rng(seed)
    P, q, kw = _random_convex_qp(rng, strictly_convex=strictly_convex)
    n = q.size
    base = solve_qp(P, q, **kw)
    assert base.status == "optimal"
    d = 10.0 ** rng.uniform(-8, 8, n)
    r_G, r_A = 10.0 ** rng.uniform(-8, 8, 3), 10.0 ** rng.uniform(-8, 8, 2)
    s = 10.0 ** rng.uniform(-8, 8)
    if which == "columns":
        r_G, r_A, s = np.ones(3), np.ones(2), 1.0
    mG = kw["G"].shape[0] if "G" in kw else 0
    mA = kw["A"].shape[0] if "A" in kw else 0
    res = solve_qp(**_rescaled(P, q, kw, d, r_G[:mG], r_A[:mA], s))
    assert res.status == "optimal", res
    rel = res.kkt_residuals(relative=True)
    assert rel.max <= 1e-12, rel
    assert abs(res.objective / s - base.objective) <= 1e-12 * max(abs(base.objective), 1e-300)
    if strictly_convex:  # a unique solution: the same point, to rounding
        np.testing.assert_allclose(res.x * d, base.x, rtol=0,
                                   atol=1e-10 * max(float(np.max(np.abs(base.x))), 1e-300))
    assert res.n_iter <= 3 * base.n_iter + 10  # not the old crawl to max_iter
    # the scaling is a set of powers of two, undone exactly
    for v in res.info.get("scaling", {}).values():
        v = np.atleast_1d(v)
        assert np.all(np.frexp(v)[0] == 0.5)


@pytest.mark.parametrize("seed", range(3))
def test_scaled_qp_agrees_with_the_oracle_at_moderate_scales(seed):
    rng = np.random.default_rng(100 + seed)
    P, q, kw = _random_convex_qp(rng)
    n = q.size
    d = 10.0 ** rng.uniform(-2, 2, n)
    mG = kw["G"].shape[0] if "G" in kw else 0
    mA = kw["A"].shape[0] if "A" in kw else 0
    prob = _rescaled(P, q, kw, d, 10.0 ** rng.uniform(-2, 2, mG), 10.0 ** rng.uniform(-2, 2, mA),
                     1.0)
    res = solve_qp(**prob)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = solve_qp_cvxpy(**prob)
    assert res.status == "optimal" and ref.status == "optimal"
    assert _rel_gap(res.objective, ref.objective) <= 1e-8
    assert res.kkt_residuals(relative=True).max <= 1e-12


@pytest.mark.parametrize("scale", ["1e8", "1e-8", "mixed"])
@pytest.mark.parametrize("rows", [False, True])
def test_extreme_scales_that_stopped_at_max_iter(scale, rows):
    # 25 variables, 3 inequalities, 2 equalities, bounds; the unscaled problem solves in
    # ~25 iterations. Scaled, the previous solver stopped at 'max_iter' (mixed), reported
    # 'infeasible' or 'unbounded' (rows scaled), or returned a point 6% off (1e8)
    rng = np.random.default_rng(0)
    n = 25
    M = rng.standard_normal((n, n // 2))
    P, q = M @ M.T, 5.0 * rng.standard_normal(n)
    G, A = rng.standard_normal((3, n)), rng.standard_normal((2, n))
    x_feas = rng.uniform(-0.5, 0.5, n)
    kw = dict(G=G, h=G @ x_feas + 0.1, A=A, b=A @ x_feas, lb=np.full(n, -1.0),
              ub=np.where(rng.random(n) < 0.5, 1.0, np.inf))
    base = solve_qp(P, q, **kw)
    d = {"1e8": np.full(n, 1e8), "1e-8": np.full(n, 1e-8),
         "mixed": 10.0 ** rng.uniform(-6, 6, n)}[scale]
    r_G = 10.0 ** rng.uniform(-8, 8, 3) if rows else np.ones(3)
    r_A = 10.0 ** rng.uniform(-8, 8, 2) if rows else np.ones(2)
    res = solve_qp(**_rescaled(P, q, kw, d, r_G, r_A, 1.0))
    assert res.status == "optimal"
    np.testing.assert_allclose(res.x * d, base.x, rtol=0, atol=1e-12)
    assert res.kkt_residuals(relative=True).max <= 1e-14
    assert res.n_iter <= 2 * base.n_iter


def test_scaled_lp_and_statuses_survive_scaling():
    rng = np.random.default_rng(3)
    n = 15
    c = rng.standard_normal(n)
    A = rng.standard_normal((1, n))
    d = 10.0 ** rng.uniform(-8, 8, n)
    base = solve_qp(None, c, A=A, b=[0.1], lb=-1.0, ub=1.0)
    res = solve_qp(None, c * d, A=A * d, b=[0.1], lb=-1.0 / d, ub=1.0 / d)
    assert base.status == res.status == "optimal"
    assert _rel_gap(res.objective, base.objective) <= 1e-12
    assert res.kkt_residuals(relative=True).max <= 1e-14
    # no solution: the status is kept, whatever the units
    infeasible = solve_qp(np.eye(n) * d[:, None] * d[None, :], np.zeros(n), A=A * d,
                          b=[10.0 * n], lb=-1.0 / d, ub=1.0 / d)
    assert infeasible.status == "infeasible"
    ray = solve_qp(np.zeros((n, n)), -c * d, lb=np.where(c > 0, 0.0, -np.inf) / d)
    assert ray.status == "unbounded"
    p = ray.info["unbounded_direction"]
    assert float(-c * d @ p) < 0  # a descent direction in the user's units


# --------------------------------------------------------------------------------------------
# Convexity: a P that is not PSD is an error, not a stationary point
# --------------------------------------------------------------------------------------------
def _indefinite(rng, n, ratio):
    M = rng.standard_normal((n, n))
    lam, V = np.linalg.eigh(M @ M.T)
    lam[0] = -ratio * lam[-1]
    P = (V * lam) @ V.T
    return 0.5 * (P + P.T)


@pytest.mark.parametrize("kw", [
    dict(lb=-1.0, ub=1.0), dict(lb=0.0, ub=3.0), dict(), dict(lb=0.0),
    dict(A=np.ones((1, 20)), b=[1.0], lb=0.0, ub=1.0),  # starts at a vertex
    dict(G=np.ones((1, 20)), h=[1.0], lb=0.0),
], ids=["box", "box0", "free", "lower", "simplex-like", "inequality"])
@pytest.mark.parametrize("ratio", [0.5, 0.005])
def test_non_psd_P_raises_naming_P(kw, ratio):
    rng = np.random.default_rng(int(ratio * 1000))
    P = _indefinite(rng, 20, ratio)
    with pytest.raises(NotPSDError, match="P must be positive semi-definite"):
        solve_qp(P, rng.standard_normal(20), **kw)
    assert issubclass(NotPSDError, ValueError)


@pytest.mark.parametrize("n", [30, 150])
def test_non_psd_kernel_in_an_svm_dual_raises(n):
    # negative curvature on directions the working sets never visit: an SVM dual whose
    # kernel has one negative eigenvalue along a smooth direction
    rng = np.random.default_rng(n)
    X = rng.standard_normal((n, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    K = np.exp(-0.5 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    lam, V = np.linalg.eigh(K)
    lam[-5] = -lam[-5]
    K = (V * lam) @ V.T
    Q = np.outer(y, y) * 0.5 * (K + K.T)
    with pytest.raises(NotPSDError, match="P must be positive semi-definite"):
        solve_qp(Q, -np.ones(n), A=y[None, :], b=[0.0], lb=0.0, ub=1.0)


def test_psd_P_with_negative_rounding_is_accepted():
    rng = np.random.default_rng(9)
    B = rng.standard_normal((40, 3))
    B[10:20] = B[0]  # duplicates: a singular P
    P = B @ B.T - 1e-13 * np.abs(B @ B.T).max() * np.eye(40)  # eigenvalues ~ -1e-13 relative
    res = solve_qp(P, rng.standard_normal(40), lb=-1.0, ub=1.0)
    assert res.status == "optimal"
    assert res.kkt_residuals(relative=True).max <= 1e-12


@pytest.mark.parametrize("solver", ["solve_lp", "solve_qp_cvxpy"])
def test_crossing_bounds_raise_naming_both(solver):
    with pytest.raises(ValueError, match=r"lb must be <= ub; lb\[1\] = 2.0 > ub\[1\] = 1.0"):
        if solver == "solve_lp":
            solve_lp(np.ones(2), lb=[0.0, 2.0], ub=[1.0, 1.0])
        else:
            solve_qp_cvxpy(np.eye(2), np.ones(2), lb=[0.0, 2.0], ub=1.0)
    with pytest.raises(ValueError, match="lb must be <= ub"):
        solve_qp(np.eye(2), np.ones(2), lb=1.0, ub=1.0 - 1e-15)  # one ulp below


def test_tiny_qps_are_not_thread_limited_and_large_ones_are(monkeypatch):
    # below 64 variables the BLAS does not thread: no per-call limit (a few microseconds)
    import pathlib_core.core.qp as qp_module

    entered = []

    class Spy:
        def limit(self, **kw):
            entered.append(kw)
            from contextlib import nullcontext
            return nullcontext()

    monkeypatch.setattr(qp_module, "blas_controller", lambda: Spy())
    solve_qp(np.eye(3), np.ones(3), lb=-1.0, ub=1.0)
    assert entered == []
    solve_qp(np.eye(80), np.ones(80), lb=-1.0, ub=1.0)
    assert entered == [dict(limits=1, user_api="blas")]


def _kernel_box_qp(seed, n=160):
    """A CCCP-like box QP: an RBF kernel on points of which a quarter are repeated (P is
    singular), signs z, bounds ``[-rho, c - rho]`` with ``rho`` in ``{0, c}``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    X[-n // 4:] = X[: n // 4]
    z = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=2)
    P = np.exp(-0.5 * sq) * np.outer(z, z)
    c = np.full(n, 10.0)
    rho = np.where(rng.random(n) < 0.2, c, 0.0)
    return P, 0.3 * z - 1.0, -rho, c - rho


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_incremental_gradient_mode_gives_the_solution_of_the_exact_mode(seed, monkeypatch):
    """Box QPs whose Hessian has no zero entry (kernels, n >= 128) update the gradient from
    the moved coordinates only; the solution is that of the mode recomputing ``P x + q`` at
    every step (to rounding), with a certificate at rounding level, cold and warm."""
    import pathlib_core.core.qp as qp

    modes = []
    init = qp._ActiveSetQP.__init__

    def spy(self, *a, **k):
        init(self, *a, **k)
        modes.append(self._incremental)

    monkeypatch.setattr(qp._ActiveSetQP, "__init__", spy)
    P, q, lb, ub = _kernel_box_qp(seed)
    fast = solve_qp(P, q, lb=lb, ub=ub)
    warm = solve_qp(P, q + 0.01, lb=lb, ub=ub, warm_start=fast)
    assert modes == [True, True]
    monkeypatch.setattr(qp, "_INCREMENTAL_MIN_N", 10 ** 9)
    exact = solve_qp(P, q, lb=lb, ub=ub)
    exact_warm = solve_qp(P, q + 0.01, lb=lb, ub=ub, warm_start=exact)
    assert modes[2:] == [False, False]
    for a, b in [(fast, exact), (warm, exact_warm)]:
        assert a.status == b.status == "optimal"
        assert a.objective == pytest.approx(b.objective, rel=1e-12, abs=1e-12)
        # P is singular, so x is not unique; P x (the gradient) is
        np.testing.assert_allclose(P @ a.x, P @ b.x, rtol=0, atol=1e-8 * np.abs(P @ b.x).max())
        assert a.kkt_residuals(relative=True).max < 1e-9
    # a Hessian with zero entries keeps the exact mode
    modes.clear()
    solve_qp(np.diag(np.arange(1.0, 161.0)), -np.ones(160), lb=np.zeros(160), ub=np.ones(160))
    assert modes == [False]


def _count_compiled(monkeypatch):
    """Spy on the compiled box loop: a list that gets one entry per call."""
    import pathlib_core.core.qp as qp

    calls = []
    real = qp.box_active_set

    def spy(*a):
        out = real(*a)
        calls.append(out[0])
        return out

    monkeypatch.setattr(qp, "box_active_set", spy)
    return calls


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_compiled_box_loop_gives_the_solution_of_the_python_loop(seed, monkeypatch):
    """The compiled iterations (an updated inverse of the free block) reach the optimum of
    the Python iterations (a factorization per iteration), cold and warm, with a certificate
    at rounding level; the compiled loop is the one that ran."""
    calls = _count_compiled(monkeypatch)
    P, q, lb, ub = _kernel_box_qp(seed, n=200)
    fast = solve_qp(P, q, lb=lb, ub=ub)
    warm = solve_qp(P, q + 0.05, lb=lb, ub=ub * 0.5, warm_start=fast)
    assert calls == [0, 0]  # OPTIMAL, from the compiled loop both times
    slow = solve_qp(P, q, lb=lb, ub=ub, compiled=False)
    slow_warm = solve_qp(P, q + 0.05, lb=lb, ub=ub * 0.5, warm_start=slow, compiled=False)
    assert calls == [0, 0]
    for a, b in [(fast, slow), (warm, slow_warm)]:
        assert a.status == b.status == "optimal"
        assert a.objective == pytest.approx(b.objective, rel=1e-12, abs=1e-12)
        np.testing.assert_allclose(P @ a.x, P @ b.x, rtol=0, atol=1e-8 * np.abs(P @ b.x).max())
        assert a.kkt_residuals(relative=True).max < 1e-9


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), n=st.integers(128, 220),
       dup=st.sampled_from([0.0, 0.25, 0.5]), scale=st.sampled_from([1e-6, 1.0, 1e6]),
       width=st.sampled_from([0.05, 1.0, 20.0]))
def test_property_compiled_box_loop_agrees_with_the_oracle(seed, n, dup, scale, width):
    """Kernel box QPs with repeated points (singular P), tiny and huge scales, narrow and
    wide kernels (near-constant or near-diagonal P): optimal, relative KKT residuals at
    rounding level, and cvxpy's objective."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 2))
    m = int(dup * n)
    if m:
        X[-m:] = X[:m]
    z = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=2)
    P = scale * np.exp(-sq / width) * np.outer(z, z)
    q = scale * (rng.uniform(-0.5, 0.5) * z - 1.0)
    ub = np.full(n, 5.0)
    lb = -np.where(rng.random(n) < 0.3, 5.0, 0.0)
    res = solve_qp(P, q, lb=lb, ub=ub)
    assert res.status == "optimal"
    assert res.kkt_residuals(relative=True).max < 1e-9
    ref = solve_qp_cvxpy(P, q, lb=lb, ub=ub)
    assert res.objective <= ref.objective + 1e-7 * max(1.0, abs(ref.objective))


def test_compiled_box_loop_hands_back_negative_curvature(monkeypatch):
    """A box QP whose kernel has a negative eigenvalue: the compiled loop hands back when it
    meets the negative curvature and the solve raises NotPSDError naming P, as before."""
    calls = _count_compiled(monkeypatch)
    P, q, lb, ub = _kernel_box_qp(5, n=160)
    # a positive diagonal (no negative entry to catch before the iterations), but two free
    # variables of opposite signs already span negative curvature
    Pn = P - 0.5 * np.ones_like(P)
    with pytest.raises(NotPSDError, match="P must be positive semi-definite"):
        solve_qp(Pn, q, lb=lb, ub=ub)
    assert calls and calls[0] == 3  # HAND_BACK


def test_compiled_box_loop_reports_an_unbounded_ray():
    """A rank-one Hessian without zero entries and free variables: the ray of zero curvature
    descends without a bound; the status is unbounded and the ray is in the null space."""
    rng = np.random.default_rng(3)
    v = rng.uniform(0.5, 1.5, size=140)
    P = np.outer(v, v)
    q = rng.standard_normal(140)
    lb = np.where(np.arange(140) < 70, 0.0, -np.inf)
    res = solve_qp(P, q, lb=lb)
    assert res.status == "unbounded"
    ray = res.info["unbounded_direction"]
    assert q @ ray < 0
    assert np.abs(P @ ray).max() <= 1e-8 * np.abs(ray).max() * np.abs(P).max()
    assert np.all(ray[:70][res.x[:70] <= 0.0] >= -1e-12)  # it keeps the bounds it meets


def test_compiled_box_loop_stops_at_max_iter(monkeypatch):
    calls = _count_compiled(monkeypatch)
    P, q, lb, ub = _kernel_box_qp(1, n=200)
    res = solve_qp(P, q, lb=lb, ub=ub, max_iter=5)
    assert res.status == "max_iter" and res.n_iter == 5
    assert calls == [1]
