"""Tests of the generic parametric-QP engine
:func:`pathlib_core.core.homotopy.parametric_qp_path`."""

import numpy as np
import pytest

from pathlib_core.core.homotopy import QPPoint, parametric_qp_path

cp = pytest.importorskip("cvxpy")


def cvxpy_qp(P, q, lb, ub, A=None, b=None):
    w, V = np.linalg.eigh(P)
    keep = w > 1e-12 * max(w.max(), 1e-300)
    L = V[:, keep] * np.sqrt(w[keep])
    x = cp.Variable(len(q))
    cons = [x >= lb, x <= ub]
    if A is not None:
        cons.append(A @ x == b)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(L.T @ x) + q @ x), cons)
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return np.asarray(x.value), prob.value


def _box_problem(n=12, rank=None, seed=0):
    rng = np.random.default_rng(seed)
    B = rng.normal(size=(n, rank or n))
    return B @ B.T, rng.normal(size=n), rng.normal(size=n)


@pytest.mark.parametrize("t_start, t_end", [(-3.0, 3.0), (3.0, -3.0)])
def test_box_qp_path_matches_cvxpy_both_directions(t_start, t_end):
    P, q0, q1 = _box_problem()
    path = parametric_qp_path(P, q0, q1, lb0=-1.0, ub0=1.0, t_start=t_start, t_end=t_end)
    assert path.param_range == (-3.0, 3.0)
    assert path.direction == (1 if t_end > t_start else -1)
    assert path.kkt_residuals().max() <= 1e-10
    for t in np.linspace(-2.9, 2.9, 7):
        x_ref, v_ref = cvxpy_qp(P, q0 + t * q1, -np.ones(12), np.ones(12))
        x = path.at(t).x
        assert 0.5 * x @ P @ x + (q0 + t * q1) @ x == pytest.approx(v_ref, abs=1e-8)
        np.testing.assert_allclose(x, x_ref, atol=1e-6)
    assert isinstance(path.at(0.0), QPPoint)
    for key in ("n_events", "n_refactorizations", "max_drift", "time"):
        assert key in path.info


def test_equality_constraint_and_moving_bounds_with_semidefinite_P():
    P, q0, q1 = _box_problem(10, rank=3, seed=1)
    A = np.ones((1, 10))
    path = parametric_qp_path(P, q0, q1, A=A, b0=[1.0], b1=[0.5], lb0=0.0, ub0=0.2,
                              ub1=0.1, t_start=0.5, t_end=4.0)
    assert path.kkt_residuals().max() <= 1e-9
    for t in (0.7, 1.9, 3.3):
        lb, ub = np.zeros(10), np.full(10, 0.2 + 0.1 * t)
        _, v_ref = cvxpy_qp(P, q0 + t * q1, lb, ub, A, np.array([1.0 + 0.5 * t]))
        x = path.at(t).x
        assert 0.5 * x @ P @ x + (q0 + t * q1) @ x == pytest.approx(v_ref, abs=1e-7)
        assert abs(x.sum() - (1.0 + 0.5 * t)) <= 1e-9


def test_simultaneous_events_are_resolved_jointly():
    # two identical coordinates hit their bounds at the same t (a tie)
    P = np.eye(4)
    q1 = np.array([-1.0, -1.0, -0.5, 0.3])
    path = parametric_qp_path(P, np.zeros(4), q1, lb0=-1.0, ub0=1.0, t_start=0.0, t_end=5.0,
                              x0=np.zeros(4))
    ev = [e for e in path.events if e.param == pytest.approx(1.0)]
    assert ev and set(ev[0].indices) == {0, 1}
    assert ev[0].kind == "leave" and ev[0].info == {"from": "free", "to": "upper"}
    assert path.kkt_residuals().max() <= 1e-12
    np.testing.assert_allclose(path.at(5.0).x, [1, 1, 1, -1])


def test_unbounded_variables_and_no_events():
    P = np.diag([2.0, 1.0])
    path = parametric_qp_path(P, [1.0, 0.0], [0.0, 1.0], t_start=0.0, t_end=2.0)
    assert len(path.events) == 0
    np.testing.assert_allclose(path.at(1.0).x, [-0.5, -1.0])


@pytest.mark.parametrize("kwargs, match", [
    ({"P": np.ones((2, 3))}, "P"),
    ({"P": np.array([[1.0, 2.0], [0.0, 1.0]])}, "P"),
    ({"q0": [1.0]}, "q0"),
    ({"q1": [np.nan, 1.0]}, "q1"),
    ({"t_start": np.inf}, "t_start"),
    ({"lb0": [2.0, 2.0], "ub0": [1.0, 1.0]}, "bounds"),
    ({"lb0": [-np.inf, 0.0], "lb1": [1.0, 0.0]}, "lb1"),
    ({"refactor_every": 0.5}, "refactor_every.*integral"),
])
def test_bad_input_raises_value_error(kwargs, match):
    args = {"P": np.eye(2), "q0": [1.0, -1.0], "q1": None, "t_start": 0.0, "t_end": 1.0}
    args.update(kwargs)
    P, q0, q1 = args.pop("P"), args.pop("q0"), args.pop("q1")
    with pytest.raises(ValueError, match=match):
        parametric_qp_path(P, q0, q1, **args)


# ---------------------------------------------------------------------------------------------
# certificates that can fail, non-convex problems, long parameter ranges
# ---------------------------------------------------------------------------------------------
def _residual(path, t, x, nu):
    """The path's residual for a record at t with x (and nu) replaced (bound multipliers
    recovered from the gradient with no threshold, as for the engine's own records)."""
    from pathlib_core.core.kkt import qp_data_residuals, recover_bounds

    d = path.info["_qp"](t)
    g = d.P @ x + d.q + d.A.T @ nu
    w_lb, w_ub = recover_bounds(g, x, d.lb, d.ub, np.inf)
    return qp_data_residuals(d, x, np.zeros(0), nu, w_lb, w_ub, True).max


def coherent_perturbation(P, x, free, size=1e-6):
    """``x`` moved by ``size`` relative on its free coordinates, in the direction that adds up
    in the free row of ``P x`` where they weigh most; returns (x', that row's share of
    ``|P| |x|`` in the row's terms, the row)."""
    absPx = np.abs(P) @ np.abs(x)
    share = (np.abs(P[:, free]) @ np.abs(x[free])) / np.where(absPx > 0, absPx, 1.0)
    i = int(np.flatnonzero(free)[np.argmax(share[free])])
    out = x.copy()
    out[free] *= 1 + size * np.sign(P[i, free] * x[free])
    return out, float(share[i]), i


def test_perturbed_solution_is_not_certified():
    from pathlib_core.core.homotopy import make_problem

    P, q0, q1 = _box_problem(12, seed=3)
    A = np.ones((1, 12))
    kw = dict(A=A, b0=[0.5], b1=[0.2], lb0=-1.0, ub0=1.0, ub1=0.1)
    path = parametric_qp_path(P, q0, q1, t_start=-2.0, t_end=3.0, **kw)
    prob = make_problem(P, q0, q1, A, [0.5], [0.2], -1.0, None, 1.0, 0.1)
    path.info["_qp"] = prob.qp_data
    checked = 0
    for t in path.breakpoints:
        rec = path.at(t)
        assert _residual(path, t, rec.x, rec.nu) <= 1e-14
        lo, hi = prob.lb(t), prob.ub(t)
        free = (rec.x - lo > 0.01 * (hi - lo)) & (hi - rec.x > 0.01 * (hi - lo))
        if not free.any():
            continue
        wrong, share, i = coherent_perturbation(P, rec.x, free)
        s_i = (np.abs(P) @ np.abs(rec.x) + np.abs(prob.q(t)) + np.abs(A.T @ rec.nu))[i]
        weight = share * (np.abs(P) @ np.abs(rec.x))[i] / s_i
        if weight >= 0.2:
            assert _residual(path, t, wrong, rec.nu) > 1e-7, t
            checked += 1
    assert checked >= 0.75 * len(path)


def test_indefinite_P_is_named():
    rng = np.random.default_rng(0)
    V, _ = np.linalg.qr(rng.normal(size=(8, 8)))
    P = (V * np.r_[np.ones(7), -0.5]) @ V.T
    with pytest.raises(ValueError, match="P must be positive semi-definite"):
        parametric_qp_path(0.5 * (P + P.T), rng.normal(size=8), rng.normal(size=8), lb0=-1.0,
                           ub0=1.0, t_start=0.0, t_end=5.0)


@pytest.mark.parametrize("t_end", [1e3, 1e8, 1e15])
def test_long_range_ends_exactly(t_end):
    """Past the last event the solution is affine in t up to t_end; the end point is solved
    at t_end (an extrapolation over the segment's length would carry its slopes' rounding)."""
    P, q0, q1 = _box_problem(10, rank=4, seed=2)
    path = parametric_qp_path(P, q0, q1, lb0=-1.0, ub0=1.0, ub1=1.0, t_start=0.0,
                              t_end=t_end)
    assert path.kkt_residuals().max() <= 1e-13
    short = parametric_qp_path(P, q0, q1, lb0=-1.0, ub0=1.0, ub1=1.0, t_start=0.0,
                               t_end=100.0)
    np.testing.assert_allclose(path.breakpoints[:-1], short.breakpoints[:-1], rtol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_rank_deficient_box_qp_with_moving_bound(seed):
    """P of rank 4 in 10 variables: freeing a bound variable whose column depends on the free
    set's makes the KKT matrix singular; the solutions then form a line, along which another
    free variable reaches its bound and takes the freed one's place (5 of these 6 problems
    raised 'no consistent index sets' before)."""
    P, q0, q1 = _box_problem(10, rank=4, seed=seed)
    path = parametric_qp_path(P, q0, q1, lb0=-1.0, ub0=1.0, ub1=1.0, t_start=0.0, t_end=20.0)
    assert path.kkt_residuals().max() <= 1e-13
    for t in np.random.default_rng(seed).uniform(0.0, 20.0, 4):
        x = path.at(t).x
        _, v_ref = cvxpy_qp(P, q0 + t * q1, -np.ones(10), np.full(10, 1.0 + t))
        assert 0.5 * x @ P @ x + (q0 + t * q1) @ x == pytest.approx(v_ref, rel=1e-8, abs=1e-8)
