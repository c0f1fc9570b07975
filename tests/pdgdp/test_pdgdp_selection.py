"""Tests of Algorithm 2 (hyperparameter gradients through the explicit dual) and its baselines."""

import numpy as np
import pytest

from pathlib_core.core.kernels import ard_rbf_kernel
from pathlib_core.core.qp import solve_qp_cvxpy
from pathlib_core.pdgdp import (
    CostSensitiveARD,
    pack_hyperparameters,
    select_hyperparameters,
    unpack_hyperparameters,
)

pytest.importorskip("cvxpy")


def _data(seed=0, n=40, nv=30, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.where(X[:, 0] - 0.5 * X[:, 1] + 0.5 * rng.normal(size=n) > 0, 1.0, -1.0)
    Xv = rng.normal(size=(nv, d))
    yv = np.where(Xv[:, 0] - 0.5 * Xv[:, 1] + 0.3 * rng.normal(size=nv) > 0, 1.0, -1.0)
    return X, y, Xv, yv


def test_pack_unpack_roundtrip():
    t = pack_hyperparameters(2.5, 0.3, [0.1, 1.0, 4.0])
    C, g, s = unpack_hyperparameters(t)
    assert abs(C - 2.5) < 1e-12 and abs(g - 0.3) < 1e-12
    np.testing.assert_allclose(s, [0.1, 1.0, 4.0])


@pytest.mark.parametrize("seed", [0, 1])
def test_solution_matches_oracle(seed):
    X, y, Xv, yv = _data(seed)
    P = CostSensitiveARD(X, y, Xv, yv)
    theta = pack_hyperparameters(1.5, 0.4, [0.3, 0.2, 0.1])
    sol = P.solve(theta)
    C, g, s = unpack_hyperparameters(theta)
    u = np.where(y > 0, C * g, C * (1 - g))
    K = ard_rbf_kernel(X, scales=s)
    ref = solve_qp_cvxpy(np.outer(y, y) * K, -np.ones(len(y)), A=y[None, :], b=[0.0], lb=0.0,
                         ub=u, tol=1e-12)
    np.testing.assert_allclose(sol.alpha, ref.x, atol=1e-7)
    assert abs(sol.b - ref.nu[0]) < 1e-6
    assert sol.region.kkt_residuals(u).max < 1e-9


@pytest.mark.parametrize("seed", [0, 2])
def test_hypergradient_matches_finite_differences(seed):
    X, y, Xv, yv = _data(seed)
    P = CostSensitiveARD(X, y, Xv, yv, beta=3.0)
    theta = pack_hyperparameters(1.0, 0.4, [0.3, 0.2, 0.1])
    sol = P.solve(theta)
    idx = np.arange(len(yv))
    _, grad = P.hypergradient(sol, idx)
    h = 1e-6
    for k in range(theta.size):
        e = np.zeros(theta.size)
        e[k] = h
        fp = P.smoothed_cost(P.decision(P.solve(theta + e), Xv), idx)[0]
        fm = P.smoothed_cost(P.decision(P.solve(theta - e), Xv), idx)[0]
        assert abs(grad[k] - (fp - fm) / (2 * h)) < 1e-7 * max(1.0, abs(grad[k])) + 1e-9


def test_region_reuse_gives_the_resolved_solution():
    X, y, Xv, yv = _data(3)
    P = CostSensitiveARD(X, y, Xv, yv)
    theta = pack_hyperparameters(1.0, 0.5, [0.3, 0.2, 0.1])
    sol = P.solve(theta)
    near = theta + 1e-5 * np.array([1.0, -1.0, 0.5, 0.2, -0.3])
    reused = P.solve(near, sol)
    assert not reused.from_qp
    fresh = P.solve(near)
    np.testing.assert_allclose(reused.alpha, fresh.alpha, atol=1e-9)


@pytest.mark.parametrize("method", ["pdgdp", "random", "grid"])
def test_budget_respected_and_reported_cost_is_real(method):
    X, y, Xv, yv = _data(4)
    r = select_hyperparameters(X, y, Xv, yv, method=method, budget=15, max_iter=40, random_state=1)
    assert r.n_qp_solves <= 15
    assert abs(r.cost(Xv, yv) - r.val_cost) < 1e-12
    assert r.val_cost == np.min(r.history["val_cost"])
    assert r.scales.shape == (3,)


def test_full_batch_algorithm2_is_a_descent_method():
    """With the whole validation set as the batch, every accepted step lowers the cost."""
    X, y, Xv, yv = _data(5)
    r = select_hyperparameters(X, y, Xv, yv, method="pdgdp", budget=20, max_iter=60,
                               batch_size=len(yv), random_state=0)
    sm = r.history["val_smoothed"]
    assert np.all(np.diff(sm) <= 1e-12)
    assert sm[-1] < sm[0]
    assert r.n_region_evaluations + r.n_qp_solves >= r.n_iter


@pytest.mark.parametrize("kwargs,match", [
    (dict(method="bayes"), "method"),
    (dict(budget=0), "budget"),
    (dict(C0=-1.0), "C0"),
    (dict(balance0=1.5), "balance0"),
    (dict(backtrack=1.0), "backtrack"),
    (dict(scales0=[1.0, -1.0, 1.0]), "scales0"),
    (dict(scales0=[1.0, 1.0]), "scales0 must be one positive number"),
    (dict(costs=(0.0, 0.0)), "costs"),
])
def test_bad_input(kwargs, match):
    X, y, Xv, yv = _data(0)
    with pytest.raises(ValueError, match=match):
        select_hyperparameters(X, y, Xv, yv, **kwargs)


def test_bad_data():
    X, y, Xv, yv = _data(0)
    with pytest.raises(ValueError, match="X_val"):
        select_hyperparameters(X, y, Xv[:, :2], yv)
    with pytest.raises(ValueError, match="y_val"):
        select_hyperparameters(X, y, Xv, yv * 2)
    with pytest.raises(ValueError, match="y_train"):
        select_hyperparameters(X, np.ones_like(y), Xv, yv)


@pytest.mark.parametrize("kwargs", [
    dict(C0=1e-12), dict(C0=1e12), dict(C0=1e300), dict(C0=1e-300),
    dict(scales0=1e-12), dict(scales0=1e12), dict(balance0=1e-9), dict(balance0=1 - 1e-9),
    dict(C0=1e12, scales0=1e12),
], ids=lambda kw: ",".join(f"{k}={v:g}" for k, v in kw.items()))
@pytest.mark.parametrize("method", ["pdgdp", "grid"])
def test_extreme_hyperparameters_complete_with_exact_solutions(kwargs, method):
    # C0 = 1e300 looped in libsvm (its own cap is 10^7 iterations); now libsvm stops at
    # 100 n + 10^4 iterations and the active-set solver finishes from its point
    X, y, Xv, yv = _data(0)
    r = select_hyperparameters(X, y, Xv, yv, method=method, budget=8, max_iter=10, random_state=0,
                               **kwargs)
    assert 1 <= r.n_qp_solves <= 8
    assert np.isfinite(r.val_cost) and np.all(np.isfinite(r.theta))
    sol = r._solution
    # at the region's own tolerance (a kernel scale of 1e-13 leaves a near-constant kernel
    # whose margins differ by 1e-13: residual 2e-11 there, ~1e-16 elsewhere)
    assert sol.region.kkt_residuals(sol.u).max <= sol.region._tol


def test_region_solution_at_extreme_c_matches_the_oracle():
    # the oracle solves the same dual in units where its absolute tolerances are relative:
    # (C K, u / C) has the optimum alpha / C and the value V / C (the kernel-scale symmetry)
    X, y, Xv, yv = _data(1)
    P = CostSensitiveARD(X, y, Xv, yv)
    K = ard_rbf_kernel(X, scales=[0.3, 0.2, 0.1])
    for C in (1e-8, 1e8):
        theta = pack_hyperparameters(C, 0.4, [0.3, 0.2, 0.1])
        sol = P.solve(theta)
        ref = solve_qp_cvxpy(C * np.outer(y, y) * K, -np.ones(len(y)), A=y[None, :], b=[0.0],
                             lb=0.0, ub=sol.u / C, tol=1e-12)
        assert ref.status == "optimal"
        ours = sol.region.objective(sol.u) / C
        assert abs(ours - ref.objective) <= 1e-8 * abs(ref.objective)
        # libsvm's index sets are kept when the region holds within its tolerance (3e-10
        # here, at C = 1e-8), else the active-set solver finishes
        assert sol.region.kkt_residuals(sol.u).max <= sol.region._tol


def test_huge_c_on_a_near_constant_kernel_completes():
    # C = 1e300 with kernel scales 1e-12: libsvm ran to its own cap of 10^7 iterations
    # (minutes); capped, the active-set solver finishes from its point
    X, y, Xv, yv = _data(0)
    P = CostSensitiveARD(X, y, Xv, yv)
    sol = P.solve(pack_hyperparameters(1e300, 1e-9, [1e-12] * 3))
    assert sol.region.kkt_residuals(sol.u).max <= 1e-12
    assert np.all(np.isfinite(sol.alpha)) and np.isfinite(sol.b)
