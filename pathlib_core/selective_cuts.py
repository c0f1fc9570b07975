r"""Cutting-plane start for the selective-ridge dual with the hinge loss.

For the hinge loss the dual (22) of :mod:`pathlib_core.selective` is

.. math::

    \min_\lambda\; \sum_{i=1}^{n} \tfrac12\big(s_i^2 - \mu^2\big)_+ - y^\top\lambda
    \quad\text{s.t.}\quad \mathbf 1^\top\lambda = 0,\;
    0 \le y_j\lambda_j \le \tfrac{1}{2\gamma},
    \qquad s = X^\top\lambda .

The penalty term is zero for :math:`|s_i| \le \mu` and its subdifferential at
:math:`|s_i| = \mu` is :math:`\operatorname{sign}(s_i)[0, \mu]`. Hence, if no feature is
*strong* (:math:`|a_i| > \mu`), the dual is the linear program

.. math::

    \min_\lambda\; -y^\top\lambda
    \quad\text{s.t.}\quad |x^{i\top}\lambda| \le \mu \;(i = 1..n),\quad
    \mathbf 1^\top\lambda = 0,\quad 0 \le y_j\lambda_j \le \tfrac{1}{2\gamma},

and an LP solution is optimal for (22) exactly when the multipliers :math:`a_i` of its rows
``|x^i' lambda| <= mu`` satisfy :math:`|a_i| \le \mu` (they are then the coefficients of the
kink features, eq. (20)). With thousands of features and ``N`` objects only a few hundred rows
are ever tight, so the LP is solved by constraint generation: solve it on a working set of
rows (HiGHS dual simplex), add the most violated of the other rows (``|s_i| > mu``), drop rows
that are slack by a margin and carry no multiplier, repeat until no row is violated.

This is a *start*, like the augmented Lagrangian search for the squared loss: the caller takes
the kink set (rows with a multiplier or at ``|s_i| = mu``) and the strong set (multiplier above
``mu``), re-solves the dual exactly on them by the set iteration and certifies the result
with the set conditions (20); nothing from this module reaches a fit unchecked. When a strong
feature is needed the LP is not the dual, and the set iteration starts from its sets.
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import linprog

__all__: list[str] = []

BATCH = 0.5  # rows added per round: at most this times N (the most violated ones)
DROP_BELOW = 0.9  # rows with |s_i| < DROP_BELOW * mu and no multiplier leave the working set
MAX_ROUNDS = 60  # LP solves before giving up
_LP_OPTIONS = {"presolve": False, "primal_feasibility_tolerance": 1e-10,
               "dual_feasibility_tolerance": 1e-10}


def _solve_lp(y, bounds, XW, mu):
    N = XW.shape[0]
    k = XW.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = linprog(-y, A_ub=np.vstack([XW.T, -XW.T]) if k else None,
                      b_ub=np.full(2 * k, mu) if k else None, A_eq=np.ones((1, N)),
                      b_eq=[0.0], bounds=bounds, method="highs-ds", options=_LP_OPTIONS)
    if res.status != 0 or res.x is None:
        return None, None
    m = -np.asarray(res.ineqlin.marginals, float) if k else np.zeros(0)
    return np.asarray(res.x, float), m[:k] - m[k:]


def hinge_lp_sets(X, y, gamma, mu, ftol, rows=None):
    """Feature sets of the hinge-loss dual from the LP above, by constraint generation.

    Parameters
    ----------
    X : ndarray of shape (N, n)
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    gamma, mu : float
        ``gamma > 0`` and ``mu > 0``.
    ftol : float
        Absolute tolerance on ``|s_i| - mu`` for a violated row.
    rows : array_like of int, optional
        First working set of rows (e.g. the active features of a fit at a nearby ``mu``);
        empty by default.

    Returns
    -------
    (lam, strong, kink, rounds) or None
        The LP solution, the proposed strong and kink sets (boolean masks of length ``n``) and
        the number of LP solves; ``None`` when an LP fails or ``MAX_ROUNDS`` is reached.
    """
    N, n = X.shape
    c_box = 0.5 / gamma
    bounds = list(zip(np.where(y > 0, 0.0, -c_box), np.where(y > 0, c_box, 0.0), strict=True))
    W = np.zeros(0, int) if rows is None else np.unique(np.asarray(rows, int))
    lam, a = _solve_lp(y, bounds, X[:, W], mu)
    if lam is None:
        return None
    s = X.T @ lam
    for rounds in range(1, MAX_ROUNDS + 1):
        inW = np.zeros(n, bool)
        inW[W] = True
        viol = np.flatnonzero(~inW & (np.abs(s) - mu > ftol))
        if viol.size == 0:
            a_full = np.zeros(n)
            a_full[W] = a
            strong = np.abs(a_full) > mu
            kink = ~strong & ((np.abs(a_full) > 0) | (np.abs(np.abs(s) - mu) <= ftol))
            return lam, strong, kink, rounds
        if W.size:
            W = W[(a != 0) | (np.abs(s[W]) >= DROP_BELOW * mu)]
        k = max(1, int(BATCH * N))
        if viol.size > k:
            viol = viol[np.argpartition(-np.abs(s[viol]), k - 1)[:k]]
        W = np.union1d(W, viol)
        lam, a = _solve_lp(y, bounds, X[:, W], mu)
        if lam is None:
            return None
        s = X.T @ lam
    return None
