r"""The empty model and the smallest selectivity that gives it, ``mu_0`` (eqs. (39)-(41))."""

from __future__ import annotations

import numpy as np

from ..core.exceptions import SolverError
from ..core.qp import solve_lp
from ..core.threads import single_blas_thread
from .cuts import _box
from .objectives import _check, _shared_docs
from .units import _Units

__all__ = ["mu_0"]


def _empty_dual(X, y, alpha, loss):
    """A solution of the truncated dual (39) whose ``max_i |x^{i'} lambda|`` is smallest."""
    N = X.shape[0]
    if loss == "squared":
        # min alpha/2 |lam|^2 - y'lam s.t. 1'lam = 0  ->  lam = (y - mean y) / alpha (unique)
        return (y - y.mean()) / alpha
    # hinge: the LP (39) min -y'lam on the box, 1'lam = 0 has optimum -min(N+, N-)/alpha
    # (u_j = y_j lam_j); pick among its solutions the one with the smallest ||X' lam||_inf.
    # The LP is homogeneous in the box width 1/(2 alpha): it is solved on the unit box and
    # its solution scaled, so that its tolerances do not depend on alpha
    c_box = 0.5 / alpha
    n_pos, n_neg = int((y > 0).sum()), int((y < 0).sum())
    opt = float(min(n_pos, n_neg))
    lb, ub = _box(y, 0.5)
    n = X.shape[1]
    # variables (lam, t): min t  s.t.  +-x^i'lam - t <= 0 for the rows i in a working set W,
    # 1'lam = 0, y'lam = 2 opt. Constraint generation: only a few of the 2 n rows are tight,
    # so start from the rows largest at the central solution (majority class spread evenly)
    # and add the most violated rows until none is left; the LP over all 2 n rows (dense,
    # 2 n x (N + 1)) cost 1.3 s at 196 x 6600, this a few milliseconds. Same optimum: a
    # solution of the restricted LP that violates no row solves the full one.
    c = np.zeros(N + 1)
    c[-1] = 1.0
    A = np.vstack([np.append(np.ones(N), 0.0), np.append(y, 0.0)])
    b = np.array([0.0, 2.0 * opt])
    lb_t, ub_t = np.append(lb, 0.0), np.append(ub, np.inf)
    lam = y * np.where(y > 0, opt / n_pos, opt / n_neg)  # feasible: 1'lam = 0, y'lam = 2 opt
    if n_pos == n_neg:
        # balanced classes: every y_j lam_j = 1 / (2 alpha), the only feasible point
        return c_box * lam
    s = X.T @ lam
    # a row counts as violated beyond rounding of its own terms (|x^i|'|lam| <= ||x^i|| ||lam||)
    row_tol = 1e-12 * np.sqrt(np.einsum("ij,ij->j", X, X))
    W = np.argsort(-np.abs(s), kind="stable")[:min(n, 2 * N)]
    for _ in range(n):  # each round adds a row: at most n rounds (in practice 1-3)
        XW = X[:, W].T
        G = np.vstack([np.hstack([XW, -np.ones((W.size, 1))]),
                       np.hstack([-XW, -np.ones((W.size, 1))])])
        res = solve_lp(c, G=G, h=np.zeros(2 * W.size), A=A, b=b, lb=lb_t, ub=ub_t)
        if res.status != "optimal":  # pragma: no cover - the LP is feasible and bounded
            raise SolverError(f"mu_0 LP failed: {res.status}")
        lam = np.clip(res.x[:N], lb, ub)
        s = np.abs(X.T @ lam)
        s[W] = -np.inf
        viol = np.flatnonzero(s > res.x[-1] * (1.0 + 1e-12) + row_tol * np.linalg.norm(lam))
        if viol.size == 0:
            return c_box * lam
        W = np.concatenate([W, viol[np.argsort(-s[viol], kind="stable")[:N]]])
    raise SolverError("mu_0 LP: constraint generation did not finish")  # pragma: no cover


@single_blas_thread
@_shared_docs
def mu_0(X, y, *, alpha, loss="squared") -> float:
    r"""Smallest selectivity that gives the empty model, eq. (40).

    :math:`\mu_0 = \max_i |x^{i\top}\lambda^0|` where :math:`\lambda^0` solves the truncated
    dual (39) (no active feature). For the hinge loss (39) can have many solutions; we take
    the one with the smallest :math:`\max_i|x^{i\top}\lambda|` (a small LP), so that
    ``mu >= mu_0`` is exactly the range of selectivities with all-zero coefficients.

    .. math::

        \mu_0 = \max_{1 \le i \le n} \big|x^{i\top}\lambda^0\big|,
        \qquad
        \lambda^0 \in \operatorname*{arg\,min}_{\sum_j \lambda_j = 0}
            \sum_{j=1}^{N} \varphi(y_j, \lambda_j),

    with :math:`\varphi` as in :func:`dual_objective` (for the hinge loss restricted to the box
    :math:`0 \le y_j\lambda_j \le 1/(2\gamma)`); :math:`x^i` is the :math:`i`-th column of
    ``X`` (feature :math:`i` over all objects). For the squared loss
    :math:`\lambda^0 = (y - \bar y\,\mathbf 1)/\gamma`, so
    :math:`\mu_0 = \max_i |x^{i\top}(y - \bar y\,\mathbf 1)| / \gamma`.

    Parameters
    ----------
    {parameters: X, y}
    alpha : float > 0
        Weight of the penalty: the paper's :math:`\gamma` in (11) (``alpha`` here, as in
        scikit-learn's ``Ridge``, since ``gamma`` names a kernel width elsewhere) (keyword-only).
    loss : {"squared", "hinge"}, default "squared"
        Loss :math:`q`: squared (eq. (7)) or hinge (eq. (8)).

    Returns
    -------
    float
        :math:`\mu_0 \ge 0`; 0 when no feature correlates with the dual solution (then the
        empty model is optimal for every ``mu``).

    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, ``alpha <= 0``, hinge labels outside {-1, +1} or a
        single class, unknown ``loss``.
    """
    X, y, alpha, _, loss = _check(X, y, alpha, None, loss)
    units = _Units.of(X, y, loss)
    Xs, ys = units.data(X, y)
    return float(units.mu_out(_mu_0(Xs, ys, units.alpha_in(alpha), loss)))


def _mu_0(X, y, alpha, loss) -> float:
    """:func:`mu_0` on trusted arrays (the solver's units)."""
    lam = _empty_dual(X, y, alpha, loss)
    return float(np.max(np.abs(X.T @ lam), initial=0.0))
