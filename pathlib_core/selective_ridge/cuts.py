r"""Cutting-plane start for the selective-ridge dual with the hinge loss.

For the hinge loss the dual (22) of :mod:`pathlib_core.selective_ridge` is

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
rows (HiGHS dual simplex, one model updated in place), add the most violated of the other
rows (``|s_i| > mu``), drop rows that are slack by a margin and carry no multiplier, repeat
until no row is violated.

When a strong feature is needed (a multiplier above ``mu``) the LP is not the dual; then
:func:`hinge_qp_sets` and :func:`hinge_qp_exact` solve the dual as a QP in a split of ``s``
(see there), again by constraint generation over the features.

These are *starts*, like the augmented Lagrangian search for the squared loss: the caller
takes the kink and strong sets, re-solves the dual exactly on them by the set iteration and
certifies the result with the set conditions (20); nothing from this module reaches a fit
unchecked.
"""

from __future__ import annotations

import warnings

import numpy as np
import scipy.linalg
from scipy.linalg.blas import dsyrk as _syrk

from ..core.qp import solve_qp
from ..core.validation import as_binary_labels, as_matrix, check_choice, positive_scalar

__all__ = ["hinge_lp_sets", "hinge_qp_sets", "hinge_qp_exact", "solve_split_qp",
           "split_qp_objective"]

BATCH = 0.5  # rows added per round: at most this times N (the most violated ones)
DROP_BELOW = 0.9  # rows with |s_i| < DROP_BELOW * mu and no multiplier leave the working set
MAX_ROUNDS = 60  # LP solves (or interior-point rounds) before giving up
STRONG_EXIT_ROUND, STRONG_EXIT = 3, 4.0  # see hinge_lp_sets
# the split-QP search holds at most this many working-set rows per object: an iteration of
# _split_ipm costs O(N^2 |W|), 0.05 s with |W| = n = 6600 at N = 196 (the cap was 10 while
# Clarabel solved these QPs, at 2.5 s per solve with 2000 rows)
MAX_QP_ROWS = 40
_LP_OPTIONS = {"presolve": "off", "solver": "simplex", "simplex_strategy": 1,  # dual simplex
               "primal_feasibility_tolerance": 1e-10, "dual_feasibility_tolerance": 1e-10}
# Clarabel on the split QP: its KKT systems hold the dense block X_W' (|W| x N), which the
# simple LDL factorization (qdldl) handles 2-3x faster than Clarabel's default supernodal
# one (faer) at these sizes: 0.05 s vs 0.18 s per solve with 134 rows, 2.3 s vs 5.0 s with
# 2000 rows at N = 196 (one thread). The cvxpy primal, a sparse n-variable problem, is the
# other way round (faer 14 s, qdldl 32 s at 196 x 6600) and keeps the default.
_IPM_OPTIONS = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12,
                "max_iter": 200, "direct_solve_method": "qdldl"}


def _box(y, alpha):
    """Bounds of the dual variables: ``0 <= y_j lambda_j <= 1 / (2 alpha)``."""
    c_box = 0.5 / alpha
    return np.where(y > 0, 0.0, -c_box), np.where(y > 0, c_box, 0.0)


LAM_ROWS = 1e4  # the rows |x^i' u| <= mu / scale are given bounds of at least this share...


def _lam_scale(alpha, mu=None, row_scale=None) -> float:
    """The unit of the multipliers in the LPs and QPs below: the power of two nearest to the
    box width ``1 / (2 alpha)``, or to ``LAM_ROWS mu / row_scale`` if that is smaller
    (``row_scale`` bounds ``||x^i||_1``, e.g. ``N max|X|``).

    Every LP and QP below is solved in ``u = lambda / scale`` (the box of width about 1)
    with its objective divided by ``scale``: the row multipliers (the coefficients ``a``)
    and the balance row's multiplier (the intercept) are unchanged, and the solvers'
    absolute tolerances apply to a problem of unit size whatever ``alpha`` is (with
    ``alpha = 1e16`` the box is ``5e-17`` wide, below any absolute tolerance; with
    ``alpha = 1e-16``, ``5e15``). The rows ``|x^i' u| <= mu / scale`` then have bounds of the
    size of ``mu / mu_0`` times about ``N max|x^i|`` (``mu_0`` is proportional to the
    width): far below the solvers' tolerances when ``mu`` is below about ``1e-8 mu_0`` (a
    nearly hard margin: the multipliers are then far inside their box, of the size of
    ``mu / ||x^i||``), which the second bound prevents: the rows' bounds stay above
    ``row_scale / LAM_ROWS``.
    """
    v = 0.5 / alpha
    if mu is not None and row_scale is not None and mu > 0 and row_scale > 0:
        v = min(v, LAM_ROWS * mu / row_scale)
    return float(np.exp2(np.round(np.log2(v))))


def _tol_at(ftol, lam):
    """The per-feature tolerances at multipliers ``lam``: ``ftol(lam)`` if ``ftol`` is
    callable (as the fits pass it: each feature's tolerance follows the size of the terms
    of ``x^i' lam``), else ``ftol`` itself (a scalar or one value per feature)."""
    return ftol(lam) if callable(ftol) else ftol


def _at(ftol, W):
    """``ftol`` restricted to the features ``W`` (a scalar stays a scalar)."""
    return ftol[W] if np.ndim(ftol) else ftol


def _row_coefficients(a, sW, mu, ftol):
    """Row multipliers as coefficients: zero for a row inside ``|s_i| < mu`` (no multiplier)
    and for a tiny one against the sign of ``s_i`` (rounding; with ``mu`` below ``ftol``
    the sign of ``s_i`` itself is rounding, so a large one is kept)."""
    noise = (a * sW < 0) & (np.abs(a) <= 1e-9 * (1.0 + np.abs(a).max(initial=0.0)))
    return np.where((np.abs(sW) < mu - ftol) | noise, 0.0, a)


class _WorkingLP:
    """The LP above on a working set ``W`` of rows, as one persistent HiGHS model.

    Columns are the ``N`` multipliers (box bounds, cost ``-y``), row 0 is ``1' lambda = 0``
    and every feature ``i`` in ``W`` is one ranged row ``-mu <= x^i' lambda <= mu``. Between
    rounds rows are deleted and added in place, so each re-solve starts from the last basis
    (dual simplex: added rows leave it dual feasible), and no dense ``2|W| x N`` copy or
    ``linprog`` set-up is paid per round (6 ms instead of 33 ms per LP solve with 300 rows
    at ``N = 196``).

    HiGHS solves it in ``u = lambda / scale`` (:func:`_lam_scale`; rows
    ``|x^i' u| <= mu / scale``, cost ``-y``), so that its absolute tolerances apply to a
    problem of unit size; the row multipliers are those of the LP in ``lambda``.
    """

    def __init__(self, X, y, alpha, mu, row_scale=None):
        import highspy

        self.X, self.y, self.alpha, self.mu, self.N = X, y, alpha, float(mu), X.shape[0]
        self.row_scale = row_scale
        self.c_box = _lam_scale(alpha, mu, row_scale)
        lo, hi = _box(y, alpha)
        lo, hi = lo / self.c_box, hi / self.c_box
        self._optimal = highspy.HighsModelStatus.kOptimal
        h = highspy.Highs()
        h.silent()
        for key, val in _LP_OPTIONS.items():
            h.setOptionValue(key, val)
        N = self.N
        h.addCols(N, -np.asarray(y, float), np.asarray(lo, float), np.asarray(hi, float), 0,
                  np.zeros(N, np.int32), np.zeros(0, np.int32), np.zeros(0))
        h.addRow(0.0, 0.0, N, np.arange(N, dtype=np.int32), np.ones(N))
        self.h = h
        self.W = np.zeros(0, int)  # the feature of each ranged row, in model order
        self.s = None  # X' lam at the solution hinge_lp_sets returned last

    def serves(self, X, y, alpha, mu=None) -> bool:
        """Whether this model is the LP of ``(X, y, alpha)`` (the same arrays) in the units
        that ``mu`` asks for (:func:`_lam_scale`)."""
        return X is self.X and y is self.y and alpha == self.alpha and (
            mu is None or _lam_scale(alpha, mu, self.row_scale) == self.c_box)

    def set_mu(self, mu):
        """Re-bound every ranged row to ``[-mu, mu]`` (the basis is kept)."""
        self.mu = float(mu)
        k = self.W.size
        if k:
            mu_u = self.mu / self.c_box
            self.h.changeRowsBounds(k, np.arange(1, k + 1, dtype=np.int32),
                                    np.full(k, -mu_u), np.full(k, mu_u))

    def set_rows(self, W) -> np.ndarray:
        """Make the working set ``W`` (rows not in it deleted, new ones appended); returns
        the features in model order (the order of the multipliers :meth:`solve` returns)."""
        W = np.asarray(W, int)
        keep = np.isin(self.W, W)
        if not keep.all():
            drop = (np.flatnonzero(~keep) + 1).astype(np.int32)
            self.h.deleteRows(drop.size, drop)
            self.W = self.W[keep]
        new = W[~np.isin(W, self.W)]
        if new.size:
            N = self.N
            vals = np.ascontiguousarray(self.X[:, new].T).ravel()
            mu_u = self.mu / self.c_box
            self.h.addRows(new.size, np.full(new.size, -mu_u), np.full(new.size, mu_u),
                           vals.size, (np.arange(new.size) * N).astype(np.int32),
                           np.tile(np.arange(N, dtype=np.int32), new.size), vals)
            self.W = np.concatenate([self.W, new])
        return self.W

    def solve(self):
        """``(lam, a, b, value)``: the solution, the row multipliers (in the order of
        :attr:`W`; positive at ``x^i' lambda = mu``), the multiplier of the balance row
        (the intercept) and the optimal value; ``None`` if HiGHS does not report optimal."""
        self.h.run()
        if self.h.getModelStatus() != self._optimal:
            return None
        sol = self.h.getSolution()
        rd = np.asarray(sol.row_dual, float)
        return (self.c_box * np.asarray(sol.col_value, float), -rd[1:], -float(rd[0]),
                self.c_box * float(self.h.getInfo().objective_function_value))


def _lp_sets(a, s, W, mu, ftol):
    """Coefficients and proposed strong / kink masks from an LP solution: the row
    multipliers ``a`` of the working set ``W`` and ``s = X' lambda``."""
    coef = np.zeros(s.size)
    coef[W] = _row_coefficients(a, s[W], mu, _at(ftol, W))
    strong = np.abs(coef) > mu
    kink = ~strong & ((coef != 0) | (np.abs(np.abs(s) - mu) <= ftol))
    return coef, strong, kink


def hinge_lp_sets(X, y, alpha, mu, ftol, rows=None, lp=None, row_scale=None):
    """Feature sets of the hinge-loss dual from the LP above, by constraint generation.

    Parameters
    ----------
    X : ndarray of shape (N, n)
    y : ndarray of shape (N,)
        Labels in {-1, +1}.
    alpha, mu : float
        ``alpha > 0`` and ``mu > 0``.
    ftol : float, ndarray of shape (n,) or callable
        Tolerance on ``|s_i| - mu`` for a violated row (one per feature), or a function of
        the multipliers ``lam`` returning it.
    rows : array_like of int, optional
        First working set of rows (e.g. the active features of a fit at a nearby ``mu``);
        empty by default.
    lp : _WorkingLP, optional
        The model returned by an earlier call on the same ``X``, ``y`` and ``alpha`` (at
        another ``mu``, e.g. the previous point of a path): its rows are kept (re-bounded to
        ``mu``, joined by ``rows``) and its last basis starts the dual simplex.

    Returns
    -------
    (lam, coef, b, strong, kink, rounds, lp) or None
        The LP solution, its row multipliers (the coefficients ``a``, zero outside the
        working set and for rows with ``|s_i| < mu``), the multiplier of the balance row
        (the intercept), the proposed strong and kink sets (boolean masks of length ``n``),
        the number of LP solves and the LP model (for a next call); ``None`` when an LP
        fails or ``MAX_ROUNDS`` is reached. From round ``STRONG_EXIT_ROUND`` on, a working-set
        solution with a row multiplier above ``STRONG_EXIT * mu`` is returned at once, its
        strong set non-empty: the caller hands over to the split QP, which solves the dual
        whether or not strong features are needed in the end (the LP solves it only when
        none is). Multipliers that large on a partial working set have meant strong
        features in all our runs; at ``1e-3 mu_0`` on the EEG-like data the exit skips 11
        of 15 LP solves, while at ``1e-2 mu_0`` (no strong feature) the multipliers stay
        below ``2.7 mu`` and the LP runs to its end.

    Rows are dropped only after a round that raised the LP's optimal value, so the working
    set cannot cycle (at a degenerate optimum, e.g. ``mu = mu_0``, it only grows).
    """
    N, n = X.shape
    W = np.zeros(0, int) if rows is None else np.unique(np.asarray(rows, int))
    if lp is not None and lp.serves(X, y, alpha, mu):
        lp.set_mu(mu)
        W = np.union1d(lp.W, W)
    else:
        lp = _WorkingLP(X, y, alpha, mu, row_scale)
    W = lp.set_rows(W)
    sol = lp.solve()
    if sol is None:
        return None
    lam, a, b, obj = sol
    s = X.T @ lam
    obj_drop = -np.inf  # the optimal value when rows were last dropped
    for rounds in range(1, MAX_ROUNDS + 1):
        ft = _tol_at(ftol, lam)
        if _add_violators(W, s, mu, ft, N) is None:  # no violated row left: done
            lp.s = s  # X' lam at the returned solution, for the caller
            coef, strong, kink = _lp_sets(a, s, W, mu, ft)
            return lam, coef, b, strong, kink, rounds, lp
        if W.size and obj > obj_drop + 1e-12 * (1.0 + abs(obj)):
            W = W[(a != 0) | (np.abs(s[W]) >= DROP_BELOW * mu)]
            obj_drop = obj
        W = lp.set_rows(_add_violators(W, s, mu, ft, N))
        sol = lp.solve()
        if sol is None:
            return None
        lam, a, b, obj = sol
        s = X.T @ lam
        if rounds >= STRONG_EXIT_ROUND and np.abs(a).max(initial=0.0) > STRONG_EXIT * mu:
            # multipliers far above mu after a few rounds (strong features likely): the
            # split QP takes over from this working set (see the docstring)
            lp.s = s
            coef, strong, kink = _lp_sets(a, s, W, mu, _tol_at(ftol, lam))
            return lam, coef, b, strong, kink, rounds + 1, lp
    return None


def _split_qp(XW, y, lo, hi, mu, rho=1.0):
    """The working-set QP in ``z = [lam, c, p, m]`` as dense arrays for
    :func:`pathlib_core.core.qp.solve_qp`: ``(P, q, A, b, lb, ub)``. ``rho``: the QP in the
    scaled variables of :func:`_split_ipm` (``|c| <= mu / rho``, weight ``rho`` on the
    squares)."""
    N, k = XW.shape
    d = N + 3 * k
    cb = mu / rho
    P = np.zeros((d, d))
    P[N + k:, N + k:] = rho * np.eye(2 * k)
    q = np.concatenate([-y, np.zeros(k), np.full(2 * k, mu)])
    A = np.zeros((1 + k, d))
    A[0, :N] = 1.0
    A[1:, :N] = XW.T
    A[1:, N:N + k] = -np.eye(k)
    A[1:, N + k:N + 2 * k] = -np.eye(k)
    A[1:, N + 2 * k:] = np.eye(k)
    lb = np.concatenate([lo, np.full(k, -cb), np.zeros(2 * k)])
    ub = np.concatenate([hi, np.full(k, cb), np.full(2 * k, np.inf)])
    return P, q, A, np.zeros(1 + k), lb, ub


def _split_point(lam, sW, mu, rho=1.0):
    """``[lam, c, p, m]`` with ``c = clip(s)`` (to ``mu / rho``) and ``p``, ``m`` the excess:
    feasible for the rows of :func:`_split_qp` whenever ``sW = X_W' lam``."""
    cb = mu / rho
    return np.concatenate([lam, np.clip(sW, -cb, cb), np.maximum(sW - cb, 0.0),
                           np.maximum(-sW - cb, 0.0)])


IPM_MAX_ITER = 100  # iterations of the structured interior-point method (14-16 typical)


def _regularized_cholesky(S):
    """Cholesky factor of the SPD matrix ``S`` (only its lower triangle is read), or of
    ``S + delta I`` with the smallest ``delta`` in ``1e-14, 1e-12, ..., 1e-6`` times
    ``max diag(S)`` that factors: near the optimum multipliers inside their box get a
    vanishing barrier term and ``S`` a condition number beyond ``1 / eps`` (the usual static
    regularization of interior-point methods; the Newton step is then slightly inexact,
    which the infeasible-start iteration absorbs). None if none factors."""
    scale = float(np.max(np.diag(S)))
    if not np.isfinite(scale):
        return None
    diag = np.diag_indices(S.shape[0])
    for delta in (0.0, 1e-14, 1e-12, 1e-10, 1e-8, 1e-6):
        try:
            if not delta:
                return scipy.linalg.cho_factor(S, lower=True, check_finite=False)
            Sd = S.copy()
            Sd[diag] += delta * scale
            return scipy.linalg.cho_factor(Sd, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            continue
    return None


class _SplitNewton:
    """Newton steps of :func:`_split_ipm` at one iterate (one factorization, two steps)."""

    def __init__(self, XW, hu, Hw, cf, t_one, rd, rp0, rpW, sl, su, zl, zu):
        self.XW, self.hu, self.Hw, self.cf, self.t_one = XW, hu, Hw, cf, t_one
        self.rd, self.rp0, self.rpW = rd, rp0, rpW
        self.sl, self.su, self.zl, self.zu = sl, su, zl, zu

    def step(self, rcl, rcu):
        """``(dx, dnu0, dnu, dzl, dzu)`` for complementarity right-hand sides ``rcl, rcu``."""
        XW, hu, sl, su = self.XW, self.hu, self.sl, self.su
        N, k = XW.shape
        Hc, Hp, Hm, D = self.Hw
        g = -self.rd - rcl / sl + np.where(hu, rcu / su, 0.0)
        gl, gc, gp, gm = g[:N], g[N:N + k], g[N + k:N + 2 * k], g[N + 2 * k:]
        EHg = gc / Hc + gp / Hp - gm / Hm
        t_rhs = scipy.linalg.cho_solve(self.cf, gl + XW @ ((EHg - self.rpW) / D),
                                       check_finite=False)
        dnu0 = (-self.rp0 - t_rhs.sum()) / self.t_one.sum()
        dl = t_rhs + dnu0 * self.t_one
        dnu = (EHg - self.rpW - XW.T @ dl) / D
        dx = np.concatenate([dl, (gc - dnu) / Hc, (gp - dnu) / Hp, (gm + dnu) / Hm])
        dzl = (-rcl - self.zl * dx) / sl
        dzu = np.where(hu, (-rcu + self.zu * dx) / su, 0.0)
        return dx, dnu0, dnu, dzl, dzu

    def longest(self, dx, dzl, dzu):
        """The longest step in ``[0, 1]`` that keeps slacks and bound multipliers >= 0."""
        hu, a = self.hu, 1.0
        for v, dv in ((self.sl, dx), (self.su[hu], -dx[hu]), (self.zl, dzl),
                      (self.zu[hu], dzu[hu])):
            neg = dv < 0
            if neg.any():
                a = min(a, float(np.min(-v[neg] / dv[neg])))
        return a


def _split_ipm(XW, y, lo, hi, mu, rho=1.0):
    r"""The working-set split QP by a primal-dual interior-point method (Mehrotra
    predictor-corrector) whose Newton systems are reduced to ``N x N``.

    ``rho``: the QP in the variables ``(lambda, c, p, m) / rho`` with its objective divided
    by ``rho`` (``rho = `` :func:`_lam_scale`; ``lo``, ``hi`` given in these units): then
    ``Q = diag(0, 0, rho I, rho I)`` and ``|c| <= mu / rho``, the rest as below, and the row
    multipliers are those of the unscaled QP.

    In :math:`x = (\lambda, c, p, m)` the QP of :func:`hinge_qp_sets` is
    :math:`\min \tfrac12 x^\top Q x + q^\top x` s.t. :math:`A x = 0`, :math:`l \le x \le u` with
    :math:`Q = \operatorname{diag}(0, 0, I, I)`, :math:`q = (-y, 0, \mu, \mu)` and
    :math:`A = \begin{pmatrix} \mathbf 1^\top & 0 \\ X_W^\top & -E \end{pmatrix}`,
    :math:`E = (I, I, -I)`. With the bound barriers folded into the diagonal
    :math:`H = Q + Z_l S_l^{-1} + Z_u S_u^{-1}`, the split variables and the ``|W|`` row
    multipliers are eliminated per row (:math:`D = E H_w^{-1} E^\top` is diagonal), which
    leaves the SPD matrix

    .. math::

        S = H_\lambda + X_W D^{-1} X_W^\top \qquad (N \times N)

    bordered by the balance row ``1' lambda = 0``: one Cholesky factorization and
    ``O(N^2 |W|)`` work per iteration, against a sparse factorization of the whole
    ``(N + 4|W|)``-row KKT system (with its dense ``|W| x N`` block) in a general solver:
    0.01-0.09 s instead of 0.15-2.2 s per solve for 134-2000 rows at ``N = 196``.

    Returns ``[lam, c, p, m]`` once the residuals of the equality rows are below
    ``1e-10 (1 + max|X_W|)``, those of stationarity below ``1e-6 (1 + max|q|)`` and the mean
    complementarity below ``1e-13 (1 + max|q|)``; ``None`` if that is not reached within
    ``IPM_MAX_ITER`` iterations or a factorization fails (the caller then uses Clarabel).
    The stationarity bound is looser than the others because with complementarity near
    ``1e-13`` the barrier diagonal spans 20 orders of magnitude and its rounding keeps that
    residual near ``1e-8 - 1e-7`` on some problems (where an iteration to ``1e-8`` did not
    end); the sets are read off complementarity, and the exact solve that follows
    certifies them.
    """
    N, k = XW.shape
    nx = N + 3 * k
    cb = mu / rho
    low = np.concatenate([lo, np.full(k, -cb), np.zeros(2 * k)])
    up = np.concatenate([hi, np.full(k, cb), np.full(2 * k, np.inf)])
    hu = np.isfinite(up)
    qd = np.concatenate([np.zeros(N + k), np.full(2 * k, rho)])
    q = np.concatenate([-y, np.zeros(k), np.full(2 * k, mu)])
    # a strictly interior start (infeasible in the equality rows: an infeasible-start method)
    x = np.concatenate([0.5 * (lo + hi), np.zeros(k), np.full(2 * k, cb)])
    # the slacks to the bounds are iterated themselves, not recomputed from x: near a bound
    # x - l would lose its digits (e.g. c_i -> -mu)
    sl = x - low
    su = np.where(hu, up - x, 1.0)
    nu0, nu = 0.0, np.zeros(k)
    zl = np.ones(nx)
    zu = np.where(hu, 1.0, 0.0)
    n_c = nx + int(hu.sum())
    q_scale = 1.0 + float(np.abs(q).max())
    x_scale = 1.0 + float(np.abs(XW).max(initial=0.0))
    ones = np.ones(N)
    for _ in range(IPM_MAX_ITER):
        lam, c, p, m = x[:N], x[N:N + k], x[N + k:N + 2 * k], x[N + 2 * k:]
        rd = qd * x + q - np.concatenate([nu0 + XW @ nu, -nu, -nu, nu]) - zl + zu
        rp0 = float(lam.sum())
        rpW = XW.T @ lam - c - p + m
        tau = float(sl @ zl + (su * zu)[hu].sum()) / n_c
        if max(abs(rp0), float(np.abs(rpW).max(initial=0.0))) <= 1e-10 * x_scale and \
                float(np.abs(rd).max()) <= 1e-6 * q_scale and tau <= 1e-13 * q_scale:
            return x
        H = qd + zl / sl + np.where(hu, zu / su, 0.0)
        Hl, Hc, Hp, Hm = H[:N], H[N:N + k], H[N + k:N + 2 * k], H[N + 2 * k:]
        D = 1.0 / Hc + 1.0 / Hp + 1.0 / Hm
        # the lower triangle of X_W D^-1 X_W' by a symmetric rank-k update (half the flops
        # of the product; most of an iteration's cost for large working sets)
        B = XW * (1.0 / np.sqrt(D))
        S = _syrk(1.0, B.T, trans=1, lower=1)
        S[np.diag_indices(N)] += Hl
        cf = _regularized_cholesky(S)
        if cf is None:
            return None
        t_one = scipy.linalg.cho_solve(cf, ones, check_finite=False)
        newton = _SplitNewton(XW, hu, (Hc, Hp, Hm, D), cf, t_one, rd, rp0, rpW, sl, su, zl, zu)
        dx, _, _, dzl, dzu = newton.step(sl * zl, su * zu)  # predictor (affine scaling)
        a = newton.longest(dx, dzl, dzu)
        tau_aff = float((sl + a * dx) @ (zl + a * dzl)
                        + ((su - a * dx) * (zu + a * dzu))[hu].sum()) / n_c
        sigma = (tau_aff / tau) ** 3 if tau > 0 else 0.0
        dx, dnu0, dnu, dzl, dzu = newton.step(sl * zl + dx * dzl - sigma * tau,  # corrector
                                              su * zu - dx * dzu - sigma * tau)
        a = min(1.0, 0.99 * newton.longest(dx, dzl, dzu))
        x = x + a * dx
        sl = sl + a * dx
        su = np.where(hu, su - a * dx, 1.0)
        nu0 += a * dnu0
        nu = nu + a * dnu
        zl = zl + a * dzl
        zu = np.where(hu, zu + a * dzu, 0.0)
    return None


def _ipm_point(XW, y, lo, hi, mu, rho=1.0):
    """An interior-point solution of the working-set QP: ``[lam, c, p, m]``, or None.
    :func:`_split_ipm` first; Clarabel (through cvxpy) if that does not converge. ``rho``:
    the scaled QP of :func:`_split_ipm`."""
    z = _split_ipm(XW, y, lo, hi, mu, rho)
    return z if z is not None else _clarabel_point(XW, y, lo, hi, mu, rho)


def _clarabel_point(XW, y, lo, hi, mu, rho=1.0):
    """The working-set QP by Clarabel through cvxpy (the fallback of :func:`_ipm_point`)."""
    import cvxpy as cp

    N, k = XW.shape
    cb = mu / rho
    lam = cp.Variable(N)
    c = cp.Variable(k)
    p = cp.Variable(k, nonneg=True)
    m = cp.Variable(k, nonneg=True)
    obj = -y @ lam + mu * cp.sum(p + m) + 0.5 * rho * (cp.sum_squares(p) + cp.sum_squares(m))
    cons = [cp.sum(lam) == 0, XW.T @ lam - c - p + m == 0, lam >= lo, lam <= hi,
            c >= -cb, c <= cb]
    prob = cp.Problem(cp.Minimize(obj), cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver="CLARABEL", **_IPM_OPTIONS)
        except cp.error.SolverError:
            return None
    if lam.value is None:
        return None
    return np.concatenate([lam.value, c.value, p.value, m.value]).astype(float)


def _add_violators(W, s, mu, ftol, N, grow=False, cap=None):
    """``W`` plus the ``BATCH * N`` (``grow``: at least ``|W|``; at most ``cap - |W|``) most
    violated other rows (``|s_i| > mu``); ``None`` when no row outside ``W`` is violated."""
    inW = np.zeros(s.size, bool)
    inW[W] = True
    viol = np.flatnonzero(~inW & (np.abs(s) - mu > ftol))
    if viol.size == 0:
        return None
    k = max(1, int(BATCH * N), W.size if grow else 0)
    if cap is not None:
        k = min(k, cap - W.size)
        if k < 1:
            return W  # full: the caller sees that nothing was added
    if viol.size > k:
        viol = viol[np.argpartition(-np.abs(s[viol]), k - 1)[:k]]
    return np.union1d(W, viol)


def hinge_qp_sets(X, y, alpha, mu, ftol, rows, lam0, row_scale=None):
    r"""Strong features included: feature sets of the hinge-loss dual from an interior-point
    solution of the split QP, by constraint generation.

    With the splitting :math:`s_i = c_i + p_i - m_i`, :math:`|c_i| \le \mu`,
    :math:`p_i, m_i \ge 0`, the penalty term of the dual is the value of a small QP,

    .. math::

        \tfrac12\big(s_i^2 - \mu^2\big)_+ = \min\;
        \mu(p_i + m_i) + \tfrac12\big(p_i^2 + m_i^2\big),

    (``c_i = clip(s_i)``, the excess in ``p_i`` or ``m_i``), so on a working set ``W`` of
    features the dual is a QP in :math:`(\lambda, c_W, p_W, m_W)` with the equality rows
    :math:`x^{i\top}\lambda - c_i - p_i + m_i = 0`, :math:`\mathbf 1^\top\lambda = 0`, and
    bounds. Each round solves it by Clarabel and adds the most violated features outside
    ``W``. The multiplier of row ``i`` is the coefficient :math:`a_i` of (20): the KKT
    conditions of the split put it in :math:`\operatorname{sign}(s_i)[0, \mu]` at the kink and
    make it :math:`s_i` when :math:`p_i + m_i > 0`.

    Returns
    -------
    (lam, strong, kink, W, z, rounds) or None
        The interior-point multipliers and the sets read off its split (strong: ``p + m``
        above ``1e-7 mu``; kink: ``|c| >= mu (1 - 1e-7)``), the working set and the split
        point (a start for :func:`hinge_qp_exact`); None if a solve fails or ``MAX_ROUNDS``
        is reached.
    """
    N, n = X.shape
    lo, hi = _box(y, alpha)
    sc = _lam_scale(alpha, mu, row_scale)  # the QP in lambda / sc (see _lam_scale)
    lo, hi = lo / sc, hi / sc
    W = np.unique(np.asarray(rows, int))
    lam = np.asarray(lam0, float)
    s = X.T @ lam
    z, Wz = None, W  # the last interior-point solution and the rows it was solved on
    obj, obj_drop = -np.inf, -np.inf
    n_full = 0  # consecutive solves on a full working set
    for rounds in range(1, MAX_ROUNDS + 1):
        if z is not None and obj > obj_drop + 1e-9 * (1.0 + abs(obj)):
            # as in the LP: slack rows leave only after the optimal value rose
            W = W[np.abs(s[W]) >= DROP_BELOW * mu]
            obj_drop = obj
        # the interior-point rounds cost little more for a larger working set: let it double
        cap = MAX_QP_ROWS * N
        W_new = _add_violators(W, s, mu, _tol_at(ftol, lam), N, grow=True, cap=cap)
        n_full = n_full + 1 if Wz.size >= cap else 0
        if W_new is not None and z is not None and (W_new.size == W.size or n_full >= 2):
            return None  # violated rows remain, and the working set is full (twice in a row)
        if W_new is None and z is not None:
            # done: the sets from the last solve, on the rows it had (Wz)
            k = Wz.size
            c, p, m = z[N:N + k], z[N + k:N + 2 * k], z[N + 2 * k:]
            cb = mu / sc  # the bound of c in the scaled variables
            # a row is read as strong (kink) when its excess p + m (its slack to the bound of
            # c) exceeds (is below) 1e-7 of the bound, or ten times what the interior point's
            # complementarity target (1e-13 (1 + max|q|), objective units) leaves on a
            # variable whose multiplier has the size of mu, whichever is larger, but at most
            # 1e-5 of the bound: in the scaled variables the bound can be small next to that
            # (features at the kink with a zero coefficient then looked strong)
            delta = max(1e-7 * cb, min(1e-5 * cb, 1e-12 * (1.0 + max(1.0, mu)) / mu))
            strong = np.zeros(n, bool)
            strong[Wz] = (p + m) > delta
            kink = np.zeros(n, bool)
            kink[Wz] = (np.abs(c) >= cb - delta) & ~strong[Wz]
            return sc * z[:N], strong, kink, Wz, z, rounds - 1
        W = W if W_new is None else W_new
        if W.size == 0:
            return None
        z, Wz = _ipm_point(X[:, W], y, lo, hi, mu, sc), W
        if z is None:
            return None
        obj = _split_value(z, y, mu, sc)
        lam = sc * z[:N]
        s = X.T @ lam
    return None


def _split_value(z, y, mu, rho=1.0):
    """Objective of the split QP of :func:`hinge_qp_sets` at ``z = [lam, c, p, m]``:
    ``-y' lam + mu 1'(p + m) + rho (|p|^2 + |m|^2) / 2`` (``N = len(y)``; ``rho`` as in
    :func:`_split_ipm`)."""
    N = y.size
    k = (z.size - N) // 3
    p, m = z[N + k:N + 2 * k], z[N + 2 * k:]
    return float(-y @ z[:N] + mu * (p + m).sum() + 0.5 * rho * (p @ p + m @ m))


def hinge_qp_exact(X, y, alpha, mu, ftol, W, z, row_scale=None):
    """The split QP of :func:`hinge_qp_sets` solved exactly by the active-set method
    (:func:`pathlib_core.core.qp.solve_qp`), from the interior-point point ``z`` on the working
    set ``W`` reduced to its rows at ``|s_i| >= mu (1 - 1e-6)`` (the others carry no
    multiplier); features found violated afterwards are added and the QP re-solved.

    Returns
    -------
    (lam, coef, b, rounds) or None
        ``coef`` the row multipliers (zero outside the working set), ``b`` the multiplier
        of the balance row; None if a QP fails or ``MAX_ROUNDS`` is reached.
    """
    N, n = X.shape
    lo, hi = _box(y, alpha)
    sc = _lam_scale(alpha, mu, row_scale)  # z and the QP in lambda / sc, as in hinge_qp_sets
    lo, hi = lo / sc, hi / sc
    lam = sc * z[:N]
    s = X.T @ lam
    W = W[np.abs(s[W]) >= mu * (1.0 - 1e-6)]
    for rounds in range(1, MAX_ROUNDS + 1):
        P, q, A, b, lb, ub = _split_qp(X[:, W], y, lo, hi, mu, sc)
        res = solve_qp(P, q, A=A, b=b, lb=lb, ub=ub,
                       warm_start=_split_point(lam / sc, s[W] / sc, mu, sc))
        if res.status != "optimal":
            return None
        lam = sc * res.x[:N]
        s = X.T @ lam
        ft = _tol_at(ftol, lam)
        W_new = _add_violators(W, s, mu, ft, N)
        if W_new is None:
            coef = np.zeros(n)
            coef[W] = _row_coefficients(res.nu[1:], s[W], mu, _at(ft, W))
            return lam, coef, float(res.nu[0]), rounds
        W = W_new
    return None


SPLIT_QP_SOLVERS = ("ipm", "clarabel")


def solve_split_qp(X_W, y, *, alpha, mu, solver="ipm"):
    r"""The hinge-loss dual on a working set of features, as the split QP of
    :func:`hinge_qp_sets`, solved by an interior-point method.

    With the splitting :math:`s_i = c_i + p_i - m_i` of :math:`s = X_W^\top\lambda` the QP is

    .. math::

        \min_{\lambda, c, p, m}\; -y^\top\lambda + \mu\,\mathbf 1^\top(p + m)
            + \tfrac12\big(\lVert p\rVert^2 + \lVert m\rVert^2\big)
        \quad\text{s.t.}\quad X_W^\top\lambda - c - p + m = 0,\;
        \mathbf 1^\top\lambda = 0,\; |c_i| \le \mu,\; p, m \ge 0,\;
        0 \le y_j\lambda_j \le \tfrac{1}{2\gamma},

    the dual (22) with the hinge loss (eq. (36)) restricted to the features of ``X_W``
    (its penalty term :math:`\tfrac12 (s_i^2 - \mu^2)_+` is the value of the inner minimum
    over the split).

    Parameters
    ----------
    X_W : array_like of shape (N, k)
        The working-set columns of ``X`` (objects in rows).
    y : array_like of shape (N,)
        Labels in {-1, +1}, both classes present.
    alpha : float > 0
        Weight of the penalty, the paper's :math:`\gamma` in (11) (the box width is
        ``1 / (2 alpha)``).
    mu : float > 0
        Selectivity.
    solver : {"ipm", "clarabel"}, default "ipm"
        ``"ipm"``: our primal-dual interior-point method whose Newton systems are reduced to
        ``N x N`` (what the hinge-loss search uses); ``"clarabel"``: Clarabel through cvxpy,
        the general-purpose reference (and the search's fallback).

    Returns
    -------
    ndarray of shape (N + 3 k,) or None
        ``[lambda, c, p, m]`` (unscaled), or None if the solver did not converge.

    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, labels outside {-1, +1}, ``alpha <= 0``,
        ``mu <= 0``, unknown ``solver`` (naming the argument).
    """
    X_W = as_matrix(X_W, "X_W")
    y = as_binary_labels(y, "y", length=X_W.shape[0])
    alpha = positive_scalar(alpha, "alpha")
    mu = positive_scalar(mu, "mu")
    solver = check_choice(solver, "solver", SPLIT_QP_SOLVERS)
    lo, hi = _box(y, alpha)
    if solver == "ipm":
        return _split_ipm(X_W, y, lo, hi, mu)
    return _clarabel_point(X_W, y, lo, hi, mu)


def split_qp_objective(z, y, mu) -> float:
    """Objective of the split QP of :func:`solve_split_qp` at ``z = [lambda, c, p, m]``:
    ``-y' lambda + mu 1'(p + m) + (|p|^2 + |m|^2) / 2``.

    Parameters
    ----------
    z : array_like of shape (N + 3 k,)
        A point of the split QP, as :func:`solve_split_qp` returns it.
    y : array_like of shape (N,)
        The labels (their length gives ``N``).
    mu : float >= 0
        Selectivity.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        ``z`` whose length is not ``N + 3 k`` for an integer ``k``, or non-finite input.
    """
    y = np.asarray(y, dtype=float).ravel()
    z = np.asarray(z, dtype=float).ravel()
    if z.size < y.size or (z.size - y.size) % 3:
        raise ValueError(f"z must have length N + 3 k with N = len(y) = {y.size}; "
                         f"got length {z.size}")
    if not (np.all(np.isfinite(z)) and np.all(np.isfinite(y))):
        raise ValueError("z and y must be finite")
    mu = positive_scalar(mu, "mu", allow_zero=True)
    return _split_value(z, y, mu)
