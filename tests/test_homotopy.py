"""Tests of the generic parametric-QP engine :func:`pathlib_core.homotopy.parametric_qp_path`."""

import numpy as np
import pytest

from pathlib_core.homotopy import QPPoint, parametric_qp_path

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
