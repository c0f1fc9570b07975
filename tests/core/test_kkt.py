"""KKT residuals: ~0 at an optimum, and each residual detects its own kind of violation."""

import numpy as np
import pytest

from pathlib_core.core import kkt
from pathlib_core.core.qp import solve_lp, solve_qp_cvxpy


def _problem(seed=0, n=8):
    rng = np.random.default_rng(seed)
    M = rng.standard_normal((n, n))
    P = M @ M.T + 0.1 * np.eye(n)
    q = 3.0 * rng.standard_normal(n)
    G = rng.standard_normal((2, n))
    h = np.array([0.2, 0.1])
    A = np.ones((1, n))
    b = np.array([0.5])
    lb = np.full(n, -0.3)
    ub = np.where(np.arange(n) % 2 == 0, 0.4, np.inf)
    return dict(P=P, q=q, G=G, h=h, A=A, b=b, lb=lb, ub=ub)


@pytest.fixture(scope="module")
def solved():
    prob = _problem()
    res = solve_qp_cvxpy(**prob)
    assert res.status == "optimal"
    return prob, res


def _res(prob, x, res, **over):
    kw = dict(z=res.z, nu=res.nu, w_lb=res.w_lb, w_ub=res.w_ub)
    kw.update(over)
    return kkt.qp_residuals(prob["P"], prob["q"], x, G=prob["G"], h=prob["h"], A=prob["A"],
                            b=prob["b"], lb=prob["lb"], ub=prob["ub"], **kw)


def test_residuals_vanish_at_the_optimum(solved):
    prob, res = solved
    r = _res(prob, res.x, res)
    assert r.max < 1e-8, r
    # the optimum is not trivial: some inequality and some bounds are active
    assert np.any(res.z > 1e-6) and np.any(res.w_lb + res.w_ub > 1e-6)


def test_bound_multipliers_recovered_when_omitted(solved):
    prob, res = solved
    r = _res(prob, res.x, res, w_lb=None, w_ub=None)
    assert r.max < 1e-7, r


def test_perturbing_x_is_detected(solved):
    prob, res = solved
    x = res.x.copy()
    i = int(np.argmax(res.w_lb))  # a variable at its lower bound
    x[i] -= 1e-3  # below the bound
    r = _res(prob, x, res)
    assert r.primal_feasibility >= 1e-3 * (1 - 1e-9)
    assert r.stationarity > 1e-5
    x2 = res.x + 1e-3
    assert _res(prob, x2, res).primal_feasibility > 1e-4  # breaks A x = b


def test_flipping_a_multiplier_sign_is_detected(solved):
    prob, res = solved
    j = int(np.argmax(res.z))
    z = res.z.copy()
    z[j] = -z[j]
    r = _res(prob, res.x, res, z=z)
    assert r.dual_feasibility == pytest.approx(res.z[j])
    assert r.stationarity > 0.1 * res.z[j]


# One-dimensional problems in which exactly one residual is non-zero.
def test_only_stationarity():
    r = kkt.qp_residuals([[1.0]], [1.0], [0.0], lb=[0.0], w_lb=[0.5], w_ub=[0.0])
    assert r.stationarity == pytest.approx(0.5)
    assert r.primal_feasibility == r.dual_feasibility == r.complementarity == 0.0


def test_only_primal_feasibility():
    # min 1/2 x^2 + x, x >= 0 at x = -1 with w = 0: stationary, but infeasible
    r = kkt.qp_residuals([[1.0]], [1.0], [-1.0], lb=[0.0], w_lb=[0.0], w_ub=[0.0])
    assert r.primal_feasibility == pytest.approx(1.0)
    assert r.stationarity == r.dual_feasibility == r.complementarity == 0.0
    assert r.parts["primal_bounds"] == pytest.approx(1.0)
    r = kkt.qp_residuals([[1.0]], [-2.0], [2.0], A=[[1.0]], b=[1.0], nu=[0.0])
    assert r.parts["primal_equality"] == pytest.approx(1.0)
    assert r.stationarity == 0.0


def test_only_dual_feasibility():
    # min 1/2 x^2 - x/2, x <= 1 at x = 1 needs z = -1/2 < 0
    r = kkt.qp_residuals([[1.0]], [-0.5], [1.0], G=[[1.0]], h=[1.0], z=[-0.5])
    assert r.dual_feasibility == pytest.approx(0.5)
    assert r.stationarity == r.primal_feasibility == r.complementarity == 0.0
    # a multiplier on an infinite bound must be zero
    r = kkt.qp_residuals([[1.0]], [-0.5], [0.5], lb=[-np.inf], w_lb=[0.0], w_ub=[0.0])
    assert r.max == 0.0
    r = kkt.qp_residuals([[1.0]], [-0.5], [1.0], lb=[-np.inf], w_lb=[0.5], w_ub=[0.0])
    assert r.dual_feasibility == pytest.approx(0.5)


def test_only_complementarity():
    # min 1/2 x^2 + x, x >= 0 at x = 0.5 with w = 1.5: stationary and feasible, not complementary
    r = kkt.qp_residuals([[1.0]], [1.0], [0.5], lb=[0.0], w_lb=[1.5], w_ub=[0.0])
    assert r.complementarity == pytest.approx(0.75)
    assert r.stationarity == r.primal_feasibility == r.dual_feasibility == 0.0
    r = kkt.qp_residuals([[1.0]], [1.0], [-1.0], G=[[1.0]], h=[0.0], z=[0.0])
    assert r.max == 0.0
    r = kkt.qp_residuals([[1.0]], [0.0], [-1.0], G=[[1.0]], h=[0.0], z=[1.0])
    assert r.complementarity == pytest.approx(1.0)


def test_relative_residuals_are_scale_free():
    x = np.array([2.0, -1.0])
    P = np.array([[2.0, 0.5], [0.5, 1.0]])
    q = -P @ x + np.array([1e-3, 0.0])
    small = kkt.qp_residuals(P, q, x, relative=True)
    big = kkt.qp_residuals(1e6 * P, 1e6 * q, x, relative=True)
    absolute = kkt.qp_residuals(1e6 * P, 1e6 * q, x)
    assert big.relative and not absolute.relative
    assert absolute.stationarity == pytest.approx(1e3)
    # row 0 against its own terms: |P||x| = 4.5 and |q_0| = 3.499
    assert small.stationarity == pytest.approx(1e-3 / (4.5 + 3.499))
    assert big.stationarity == pytest.approx(small.stationarity)


def test_relative_residuals_are_per_coordinate():
    """Rescaling one variable (and its row) leaves the relative residual unchanged, and a
    wrong coordinate of a tiny variable is not hidden by a large one."""
    rng = np.random.default_rng(0)
    M = rng.standard_normal((4, 4))
    P = M @ M.T + np.eye(4)
    x = rng.standard_normal(4)
    q = -P @ x
    D = np.diag([1e-8, 1.0, 1e8, 3.0])
    # x = D^{-1} u: P_u = D^{-1} P D^{-1}, q_u = D^{-1} q, u = D x
    Pu, qu, u = np.linalg.inv(D) @ P @ np.linalg.inv(D), np.linalg.solve(D, q), D @ x
    exact = kkt.qp_residuals(Pu, qu, u, relative=True).max
    assert exact < 1e-12
    for k in range(4):
        wrong = u.copy()
        wrong[k] *= 1 + 1e-6
        r = kkt.qp_residuals(Pu, qu, wrong, relative=True).max
        r0 = kkt.qp_residuals(P, q, x * np.where(np.arange(4) == k, 1 + 1e-6, 1.0),
                              relative=True).max
        assert r > 1e-7
        assert r == pytest.approx(r0, rel=1e-6)


def test_relative_bound_and_multiplier_conditions():
    # box [0, C]: a slack of 1e-20 C is at the bound; a negative multiplier that is a large
    # share of its stationarity row is a violation whatever the scale of C
    for C in (1e-10, 1.0, 1e10):
        r = kkt.qp_residuals([[1.0]], [-2.0 * C], [C * (1 - 1e-20)], lb=0.0, ub=C,
                             relative=True)
        assert r.max < 1e-15
        r = kkt.qp_residuals([[1.0]], [-2.0 * C], [C], lb=0.0, ub=C, w_lb=[0.0], w_ub=[-C],
                             relative=True)
        assert r.dual_feasibility > 0.1


def test_bound_multipliers_from_gradient():
    grad = np.array([2.0, -3.0, 1.0, -1.0, 0.5])
    x = np.array([0.0, 1.0, 0.5, 0.0, 1.0])
    w_lb, w_ub = kkt.bound_multipliers_from_gradient(grad, x, 0.0, [1.0, 1.0, 1.0, 1.0, np.inf])
    np.testing.assert_array_equal(w_lb, [2.0, 0.0, 0.0, 0.0, 0.0])
    np.testing.assert_array_equal(w_ub, [0.0, 3.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="x must have length 5"):
        kkt.bound_multipliers_from_gradient(grad, x[:3], 0.0, 1.0)
    with pytest.raises(ValueError, match="tol must be >= 0"):
        kkt.bound_multipliers_from_gradient(grad, x, tol=-1.0)


def test_lp_residuals_with_highs_marginals():
    rng = np.random.default_rng(3)
    c = rng.standard_normal(6)
    G = rng.standard_normal((3, 6))
    h = np.ones(3)
    res = solve_lp(c, G=G, h=h, A=np.ones((1, 6)), b=[1.0], lb=-1.0, ub=2.0)
    assert res.status == "optimal"
    r = kkt.lp_residuals(c, res.x, G=G, h=h, A=np.ones((1, 6)), b=[1.0], lb=-1.0, ub=2.0,
                         z=res.z, nu=res.nu, w_lb=res.w_lb, w_ub=res.w_ub)
    assert r.max < 1e-9, r
    assert res.kkt.max < 1e-9
    flipped = kkt.lp_residuals(c, res.x, G=G, h=h, A=np.ones((1, 6)), b=[1.0], lb=-1.0, ub=2.0,
                               z=res.z, nu=-res.nu, w_lb=res.w_lb, w_ub=res.w_ub)
    assert abs(res.nu[0]) < 1e-12 or flipped.stationarity > 1e-3


def test_result_object_is_readable():
    r = kkt.KKTResiduals(1e-12, 2e-13, 0.0, 3e-9)
    text = str(r)
    for word in ("stationarity", "primal", "dual", "complementarity", "max 3.00e-09"):
        assert word in text
    d = r.as_dict()
    assert set(d) == {"stationarity", "primal_feasibility", "dual_feasibility",
                      "complementarity", "max"}
    assert d["max"] == r.max == 3e-9
    with pytest.raises(AttributeError):
        r.stationarity = 1.0  # frozen


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(P=np.ones((2, 3)), q=np.ones(2), x=np.ones(2)), "P must be a square"),
        (dict(P=[[1.0, 2.0], [0.0, 1.0]], q=np.ones(2), x=np.ones(2)), "P must be symmetric"),
        (dict(P=np.eye(2), q=np.ones(3), x=np.ones(2)), "q must have length 2"),
        (dict(P=np.eye(2), q=np.ones(2), x=[1.0, np.nan]), "x must contain only finite"),
        (dict(P=np.eye(2), q=np.ones(2), x=np.ones(2), lb=[1.0, 0.0], ub=[0.0, 1.0]),
         r"lb must be <= ub; lb\[0\]"),
        (dict(P=np.eye(2), q=np.ones(2), x=np.ones(2), lb=[np.nan, 0.0]), "lb must not contain"),
        (dict(P=np.eye(2), q=np.ones(2), x=np.ones(2), ub=[-np.inf, 0.0]), "ub must be > -inf"),
        (dict(P=np.eye(2), q=np.ones(2), x=np.ones(2), G=np.ones((1, 2))), "h must be given"),
        (dict(P=np.eye(2), q=np.ones(2), x=np.ones(2), A=np.ones((1, 3)), b=[1.0]),
         "A must have 2 columns"),
        (dict(P=np.eye(2), q=np.ones(2), x=np.ones(2), G=np.ones((2, 2)), h=[1.0]),
         "h must have length 2"),
        (dict(P=np.eye(2), q=np.ones(2), x=np.ones(2), G=np.ones((2, 2)), h=[1.0, 1.0],
              z=[1.0]), "z must have length 2"),
        (dict(P=np.eye(2), q=np.ones(2), x=np.ones(2), w_lb=[1.0]), "w_lb must have length 2"),
    ],
)
def test_bad_input_names_the_argument(kwargs, match):
    with pytest.raises(ValueError, match=match):
        kkt.qp_residuals(kwargs.pop("P"), kwargs.pop("q"), kwargs.pop("x"), **kwargs)


def test_lp_residuals_names_c():
    with pytest.raises(ValueError, match="c must contain only finite"):
        kkt.lp_residuals([np.inf, 1.0], [0.0, 0.0])


def test_lp_residuals_rejects_crossing_bounds_naming_both():
    with pytest.raises(ValueError, match=r"lb must be <= ub; lb\[1\] = 3.0 > ub\[1\] = 2.0"):
        kkt.lp_residuals([1.0, 1.0], [0.0, 0.0], lb=[0.0, 3.0], ub=2.0)


def test_relative_residuals_of_a_scaled_optimum_stay_at_rounding():
    # the same optimum in other units (x -> x / d, rows times r): the componentwise relative
    # residuals do not move, where the absolute ones change by the scale factors
    prob = _problem(3)
    res = solve_qp_cvxpy(**prob, tol=1e-12)
    base = _res(prob, res.x, res, relative=True)
    d = 10.0 ** np.linspace(-8, 8, prob["q"].size)
    r_G = np.array([1e-6, 1e5])
    scaled = dict(P=d[:, None] * prob["P"] * d[None, :], q=d * prob["q"], G=r_G[:, None]
                  * prob["G"] * d, h=r_G * prob["h"], A=prob["A"] * d, b=prob["b"],
                  lb=prob["lb"] / d, ub=prob["ub"] / d)
    r = kkt.qp_residuals(scaled["P"], scaled["q"], res.x / d, G=scaled["G"], h=scaled["h"],
                         A=scaled["A"], b=scaled["b"], lb=scaled["lb"], ub=scaled["ub"],
                         z=res.z / r_G, nu=res.nu, w_lb=res.w_lb * d, w_ub=res.w_ub * d,
                         relative=True)
    assert base.max <= 1e-9
    assert abs(r.max - base.max) <= 1e-12 + 1e-6 * base.max
