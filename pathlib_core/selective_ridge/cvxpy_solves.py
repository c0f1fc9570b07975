"""General convex solves with cvxpy (Clarabel): the primal criterion (11), the reference of
``method="primal"``, and the dual (22), the last-resort start of a stalled set iteration."""

from __future__ import annotations

import warnings

import numpy as np

from ..core.exceptions import SolverError

__all__: list[str] = []


def _dual_cvxpy(X, y, alpha, mu, loss):
    """The dual (22) in ``N`` variables solved by cvxpy (Clarabel): the rescue start.

    Used only when the set iteration stalls; its solution fixes the feature sets, after which
    the set iteration re-solves exactly (see :func:`selective_fit`).
    """
    import cvxpy as cp

    N = X.shape[0]
    lam = cp.Variable(N)
    s = X.T @ lam
    W = 0.5 * cp.sum(cp.pos(cp.square(s) - mu * mu))
    cons = [cp.sum(lam) == 0]
    if loss == "squared":
        W = W + 0.5 * alpha * cp.sum_squares(lam) - y @ lam
    else:
        W = W - y @ lam
        c_box = 0.5 / alpha
        cons += [cp.multiply(y, lam) >= 0, cp.multiply(y, lam) <= c_box]
    prob = cp.Problem(cp.Minimize(W), cons)
    # only a start: its feature sets are re-solved exactly and certified by the duality gap,
    # so cvxpy's "Solution may be inaccurate" (status optimal_inaccurate) is not passed on
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        try:
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12,
                       tol_feas=1e-12, max_iter=500)
        except cp.error.SolverError:
            return None
    if lam.value is None:
        return None
    return np.asarray(lam.value, float)


def _primal_fit(X, y, alpha, mu, loss, solver=None):
    import cvxpy as cp

    N, n = X.shape
    a = cp.Variable(n)
    b = cp.Variable()
    absa = cp.abs(a)
    pen = 2 * mu * cp.sum(absa) + cp.sum_squares(cp.pos(absa - mu))
    z = X @ a + b
    if loss == "squared":
        fit = cp.sum_squares(y - z)
    else:
        fit = cp.sum(cp.pos(1 - cp.multiply(y, z)))
    prob = cp.Problem(cp.Minimize(alpha * pen + fit))
    solver = solver or "CLARABEL"
    opts = {"tol_gap_abs": 1e-11, "tol_gap_rel": 1e-11, "tol_feas": 1e-11,
            "max_iter": 500} if solver == "CLARABEL" else {}
    prob.solve(solver=solver, **opts)
    if prob.status not in ("optimal", "optimal_inaccurate") or a.value is None:
        raise SolverError(f"cvxpy primal solve failed: {prob.status}")
    n_iter = int(getattr(prob.solver_stats, "num_iters", 0) or 0)
    return np.asarray(a.value, float), float(b.value), n_iter, prob.status
