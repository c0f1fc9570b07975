r"""Small dense convex quadratic programs: a primal active-set solver and a cvxpy oracle.

The problem is

.. math::

    \min_x \; \tfrac12 x^\top P x + q^\top x
    \quad \text{s.t.} \quad G x \le h, \quad A x = b, \quad lb \le x \le ub,

with ``P`` symmetric positive *semi*-definite. Multipliers follow the sign convention of
:mod:`pathlib_core.core.kkt`: the Lagrangian is ``1/2 x'Px + q'x + z'(Gx - h) + nu'(Ax - b)
- w_lb'(x - lb) + w_ub'(x - ub)`` with ``z, w_lb, w_ub >= 0``, so at a solution

.. math::

    P x + q + G^\top z + A^\top \nu - w^{lb} + w^{ub} = 0.

Three solvers return the same :class:`QPResult`:

- :func:`solve_qp` -- the project's own primal active-set method (dense, ``n`` up to a few
  thousand, warm-startable; used inside the path algorithms);
- :func:`solve_qp_cvxpy` -- an independent reference solve through cvxpy (CLARABEL by default);
  tests and chapters use it as an oracle;
- :func:`solve_lp` -- linear programs through ``scipy.optimize.linprog`` (HiGHS).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
from scipy.optimize import linprog

from .box_qp_kernel import (
    HAND_BACK,
    MAX_ITER,
    OPTIMAL,
    UNBOUNDED,
    box_active_set,
    most_negative_bound,
)
from .exceptions import NotPSDError, QPSolverError
from .fit_result import FitResult
from .kkt import KKTResiduals, QPData, _qp_data, qp_data_residuals
from .linalg import njit
from .states import FIXED, FREE, LOWER, UPPER
from .threads import blas_controller, single_blas_thread
from .validation import check_choice, check_psd, positive_scalar

__all__ = [
    "ActiveSet",
    "QPResult",
    "QPSolverError",
    "NotPSDError",
    "solve_qp",
    "solve_qp_cvxpy",
    "solve_lp",
    "psd_factor", "solver_options", "ruiz_pow2",
]

#: up to this size, every optimal solve ends with a global PSD test of P (a Cholesky factor)
_PSD_CHECK_ALWAYS = 64
#: the interpreter's cost of one active-set iteration in flops (~50 us at a few Gflop/s),
#: counted with the arithmetic when deciding whether the closing PSD test is cheap
_ITERATION_FLOPS = 2.5e5
#: solve_qp limits the BLAS to one thread from this size on (below it the BLAS does not
#: thread, and the limit would only add its few microseconds per call)
_BLAS_LIMIT_MIN_N = 64
#: from this size on, a box-constrained QP whose Hessian has no zero entry (a kernel matrix)
#: updates its gradient and term scale after each step from the moved coordinates only
#: (``n |moved|`` flops instead of ``n^2``; see ``_ActiveSetQP._move``)
_INCREMENTAL_MIN_N = 128
#: incremental updates between two exact evaluations of the gradient and the term scale
#: (each update adds rounding of a few eps relative to the terms; an optimum is always
#: confirmed on the exact gradient)
_EXACT_EVERY = 50
_EPS = np.finfo(float).eps


# ---------------------------------------------------------------------------------------------
# Result types
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ActiveSet:
    """The working set of a solution: which constraints hold with equality *by decision*.

    Attributes
    ----------
    at_lower, at_upper : ndarray of bool, shape (n,)
        Variables fixed at their lower / upper bound. A variable with ``lb == ub`` is in both.
    inequalities : ndarray of bool, shape (m_G,)
        Rows of ``G x <= h`` in the working set.

    Notes
    -----
    For :func:`solve_qp` this is the final working set of the active-set method. Under
    degeneracy a variable may sit exactly at a bound while being *free* (its multiplier is
    zero); it is then in neither mask. For :func:`solve_qp_cvxpy` and :func:`solve_lp` the
    masks are read off the solution with a tolerance (see there).
    """

    at_lower: np.ndarray
    at_upper: np.ndarray
    inequalities: np.ndarray

    @property
    def free(self) -> np.ndarray:
        """Variables strictly between their bounds (in the working-set sense)."""
        return ~(self.at_lower | self.at_upper)

    def __str__(self) -> str:
        return (f"ActiveSet({int(self.free.sum())} free, {int(self.at_lower.sum())} at lower, "
                f"{int(self.at_upper.sum())} at upper, "
                f"{int(self.inequalities.sum())}/{self.inequalities.size} inequalities active)")


@dataclass(frozen=True, repr=False)
class QPResult(FitResult):
    """Solution of a QP (or LP) with multipliers in the convention of :mod:`pathlib_core.core.kkt`.

    Attributes
    ----------
    x : ndarray of shape (n,)
        Primal solution (NaN when ``status == "infeasible"``).
    nu : ndarray of shape (m_A,)
        Multipliers of ``A x = b``.
    z : ndarray of shape (m_G,)
        Multipliers of ``G x <= h`` (``>= 0``).
    w_lb, w_ub : ndarray of shape (n,)
        Multipliers of ``x >= lb`` and ``x <= ub`` (``>= 0``; zero for infinite bounds).
    active : ActiveSet
        The working set at termination.
    n_iter : int
        Iterations (active-set iterations for :func:`solve_qp`, solver iterations otherwise).
    status : str
        ``"optimal"``, ``"max_iter"``, ``"infeasible"``, ``"unbounded"``, or (cvxpy only)
        ``"optimal_inaccurate"`` / ``"error"`` (the solver failed).
    objective : float
        ``1/2 x'Px + q'x`` at ``x``.
    solver : str
        Which solver produced the result.
    info : dict
        Solver details (e.g. ``"phase1"``, ``"warm"``, ``"n_drop"``, ``"n_add"``).
    """

    x: np.ndarray
    nu: np.ndarray
    z: np.ndarray
    w_lb: np.ndarray
    w_ub: np.ndarray
    active: ActiveSet
    n_iter: int
    status: str
    objective: float
    solver: str = "active-set"
    info: dict = field(default_factory=dict, compare=False, repr=False)
    _data: QPData | None = field(default=None, compare=False, repr=False)

    @property
    def kkt(self) -> KKTResiduals:
        """Absolute KKT residuals of ``(x, z, nu, w_lb, w_ub)`` (:func:`kkt.qp_residuals`)."""
        return self.kkt_residuals()

    def kkt_residuals(self, *, relative: bool = False) -> KKTResiduals:
        """KKT residuals, absolute or relative (see :mod:`pathlib_core.core.kkt`)."""
        if self._data is None:
            raise ValueError("this result carries no problem data")
        return qp_data_residuals(self._data, self.x, self.z, self.nu, self.w_lb, self.w_ub,
                          bool(relative))

    def __str__(self) -> str:
        return (f"QPResult({self.solver}: status={self.status}, objective={self.objective:.10g}, "
                f"n_iter={self.n_iter}, {self.active})")


def _empty_result(d: QPData, status: str, n_iter: int, solver: str, info: dict) -> QPResult:
    n = d.n
    return QPResult(
        x=np.full(n, np.nan), nu=np.zeros(d.A.shape[0]), z=np.zeros(d.G.shape[0]),
        w_lb=np.zeros(n), w_ub=np.zeros(n),
        active=ActiveSet(np.zeros(n, bool), np.zeros(n, bool), np.zeros(d.G.shape[0], bool)),
        n_iter=n_iter, status=status, objective=np.nan, solver=solver, info=info, _data=d)


# ---------------------------------------------------------------------------------------------
# Equilibration by powers of two
# ---------------------------------------------------------------------------------------------
#: problems whose equilibration factors all lie in [2^-4, 2^4] are solved as given (the
#: tolerances are relative per coordinate; scaling pays off for wider spreads)
_SCALE_SPREAD = 4
#: Ruiz passes at most (each pass halves the log-spread of the column norms; a well-scaled
#: problem stops after the first pass with every factor equal to one)
_RUIZ_PASSES = 30


def _pow2_near(v: float) -> float:
    """``2^k`` with ``v / 2^k`` in ``[1/2, 2)``; exactly 1 when ``v`` is there already (or 0)."""
    if not (v > 0.0 and math.isfinite(v)):
        return 1.0
    e = math.frexp(v)[1]  # v in [2^(e-1), 2^e)
    return math.ldexp(1.0, e - 1 if e >= 2 else (e if e <= -1 else 0))


@dataclass(frozen=True)
class _Scaling:
    r"""A diagonal equilibration of a QP by powers of two (exact in floating point).

    The solver works on the variables ``x~ = x / col`` and the rows ``row_G * (G x <= h)``,
    ``row_A * (A x = b)``, with the objective multiplied by ``obj``:

    .. math::

        \tilde P = \sigma D P D, \quad \tilde q = \sigma D q, \quad
        \tilde G = R_G G D, \quad \tilde A = R_A A D, \quad
        \tilde{lb} = D^{-1} lb, \quad \tilde{ub} = D^{-1} ub .

    The two problems have the same solutions (``x = D x~``) and the same working sets; the
    multipliers map as ``z = R_G z~ / sigma``, ``nu = R_A nu~ / sigma``, ``w = w~ / (sigma D)``
    (stationarity of the scaled problem is ``sigma D`` times that of the original). Every
    factor is a power of two, so each of these maps is exact (no rounding).
    """

    col: np.ndarray
    row_G: np.ndarray
    row_A: np.ndarray
    obj: float

    @property
    def identity(self) -> bool:
        return self.spread == 0

    @property
    def spread(self) -> int:
        """The largest ``|k|`` of the factors ``2^k`` (0 for the identity)."""
        hi, lo = self.obj, self.obj
        for v in (self.col, self.row_G, self.row_A):
            if v.size:
                hi, lo = max(hi, float(np.max(v))), min(lo, float(np.min(v)))
        return max(math.frexp(hi)[1] - 1, 1 - math.frexp(lo)[1])

    def apply(self, d: QPData) -> QPData:
        c, s = self.col, self.obj
        P = None if d.P is None else (s * c[:, None]) * d.P * c[None, :]
        return QPData(P, s * c * d.q, self.row_G[:, None] * d.G * c[None, :], self.row_G * d.h,
                       self.row_A[:, None] * d.A * c[None, :], self.row_A * d.b, d.lb / c,
                       d.ub / c)

    def x_to_scaled(self, x: np.ndarray) -> np.ndarray:
        return x / self.col

    def x_from_scaled(self, x: np.ndarray) -> np.ndarray:
        return x * self.col

    def multipliers_from_scaled(self, nu, z, w_lb, w_ub):
        s = self.obj
        return (self.row_A * nu / s, self.row_G * z / s, w_lb / (s * self.col),
                w_ub / (s * self.col))


@njit(cache=True)
def _pow2_shift(v):  # pragma: no cover - compiled
    """``k`` with ``2^k ~ 1 / sqrt(v)``: 0 for ``v`` in ``[1/2, 2)`` and for ``v = 0``."""
    if v == 0.0:
        return 0
    e = math.frexp(v)[1]  # v in [2^(e-1), 2^e)
    return -int(math.floor(e / 2.0))


@njit(cache=True)
def _constraint_norms(M, rows, col, cn, out):  # pragma: no cover - compiled
    """Largest scaled entry ``|M_rj| rows_r col_j`` of each row into ``out``; ``cn`` (the
    column norms so far) raised to each column's largest one."""
    for r in range(M.shape[0]):
        m = 0.0
        for j in range(M.shape[1]):
            v = abs(M[r, j]) * rows[r] * col[j]
            if v > m:
                m = v
            if v > cn[j]:
                cn[j] = v
        out[r] = m


@njit(cache=True)
def _rescale(factors, norms):  # pragma: no cover - compiled
    """Multiply each factor by the power of two that brings its norm towards 1; whether one
    changed."""
    changed = False
    for r in range(factors.shape[0]):
        k = _pow2_shift(norms[r])
        if k != 0:
            factors[r] = math.ldexp(factors[r], k)
            changed = True
    return changed


@njit(cache=True)
def ruiz_pow2(P, A, G, q, has_p, passes):  # pragma: no cover - compiled
    """Ruiz passes on ``[[P, A', G'], [A, 0, 0], [G, 0, 0]]`` with power-of-two factors.

    Returns the column factors, the row factors of ``A`` and ``G``, the column norms of the
    scaled matrix (from the last pass), whether one of them is zero, and the size of the
    scaled objective, ``max(max |col q|, mean column norm of the P block)``.
    """
    n = A.shape[1]
    mA, mG = A.shape[0], G.shape[0]
    col, rA, rG = np.ones(n), np.ones(mA), np.ones(mG)
    cn, pn = np.zeros(n), np.zeros(n)
    nA, nG = np.zeros(mA), np.zeros(mG)
    for _ in range(passes):
        cn[:] = 0.0
        pn[:] = 0.0
        if has_p:
            for j in range(n):
                m = 0.0
                for i in range(n):
                    v = abs(P[i, j]) * col[i]
                    if v > m:
                        m = v
                pn[j] = m * col[j]
                cn[j] = pn[j]
        _constraint_norms(A, rA, col, cn, nA)
        _constraint_norms(G, rG, col, cn, nG)
        changed = _rescale(col, cn)
        changed = _rescale(rA, nA) or changed
        changed = _rescale(rG, nG) or changed
        if not changed:
            break
    size, empty = 0.0, False
    for j in range(n):
        size = max(size, abs(col[j] * q[j]))
        empty = empty or cn[j] == 0.0
    if has_p and n:
        size = max(size, np.mean(pn))
    return col, rA, rG, cn, empty, size


def _equilibrate(d: QPData) -> _Scaling:
    r"""Powers of two that equilibrate the KKT matrix of ``d`` and its objective.

    Ruiz's method (Ruiz 2001, as in OSQP) on the symmetric matrix
    ``[[P, A', G'], [A, 0, 0], [G, 0, 0]]``: each pass divides every row and column by the
    square root of its largest absolute entry, rounded to a power of two, until all of them
    lie in ``[1/2, 2)`` (a well-scaled problem is left unchanged). A variable that appears in
    no matrix entry is scaled by its largest finite bound instead; for a linear program the
    free common factor of Ruiz's scaling (columns times ``t``, rows over ``t``) is fixed so
    that the median finite bound is of order one. Then the objective is multiplied by a
    power of two that brings ``max(mean column norm of P~, max |q~|)`` into ``[1/2, 2)``
    (OSQP's cost scaling). Cost: a few ``O(n^2 + n m)`` passes (compiled).
    """
    has_p = d.P is not None and bool(np.any(d.P))
    P = d.P if has_p else np.zeros((0, 0))
    col, rA, rG, cn, any_empty, size = ruiz_pow2(P, d.A, d.G, d.q, has_p, _RUIZ_PASSES)
    if not has_p or any_empty:
        empty = cn == 0.0
        # variables in no matrix entry (only in q and the bounds): their bound sets the unit
        mag = np.fmax(np.where(np.isfinite(d.lb), np.abs(d.lb), 0.0),
                      np.where(np.isfinite(d.ub), np.abs(d.ub), 0.0))
        if np.any(empty):
            col[empty] = [_pow2_near(float(v)) for v in mag[empty]]
        if not has_p:
            # a linear program: fix Ruiz's free common factor by the median finite bound
            # (else by the median right-hand side)
            sizes = (mag / col)[(mag > 0) & ~empty]
            if sizes.size == 0:
                sizes = np.abs(np.concatenate([rA * d.b, rG * d.h]))
                sizes = sizes[sizes > 0]
            t = _pow2_near(float(np.median(sizes))) if sizes.size else 1.0
            if t != 1.0:
                col[~empty] *= t
                rA, rG = rA / t, rG / t
        size = max(size if has_p else 0.0, float(np.max(np.abs(col * d.q))))  # new columns
    # the objective: OSQP's cost scaling
    return _Scaling(col, rG, rA, 1.0 / _pow2_near(size))


def _scaled_problem(d: QPData) -> tuple[_Scaling | None, QPData]:
    """``(scaling, scaled data)``; ``(None, d)`` when no scaling is needed (or possible)."""
    sc = _equilibrate(d)
    if sc.spread <= _SCALE_SPREAD:
        return None, d  # moderately scaled: solved as given
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        ds = sc.apply(d)
    finite = all(np.all(np.isfinite(a)) for a in (ds.q, ds.G, ds.h, ds.A, ds.b)) and (
        ds.P is None or np.all(np.isfinite(ds.P)))
    if not (finite and np.array_equal(np.isfinite(ds.lb), np.isfinite(d.lb))
            and np.array_equal(np.isfinite(ds.ub), np.isfinite(d.ub))):
        return None, d  # the data span more than the floating-point range allows
    return sc, ds


# ---------------------------------------------------------------------------------------------
# Feasible starting points
# ---------------------------------------------------------------------------------------------
@njit(cache=True)
def _bound_tolerances(lb, ub, tau):  # pragma: no cover - compiled
    """``tau`` times the scale of each variable's bounds (see :class:`_Feasibility`)."""
    n = lb.shape[0]
    bs = np.zeros(n)
    tot, cnt = np.zeros(n), 0
    for i in range(n):
        lo, hi = lb[i], ub[i]
        if np.isfinite(lo) and np.isfinite(hi) and hi > lo:
            bs[i] = hi - lo
        else:
            m = 0.0
            if np.isfinite(lo):
                m = abs(lo)
            if np.isfinite(hi) and abs(hi) > m:
                m = abs(hi)
            bs[i] = m
        if bs[i] > 0.0:
            tot[cnt] = bs[i]
            cnt += 1
    if cnt < n:
        fill = np.median(tot[:cnt]) if cnt else 1.0
        for i in range(n):
            if bs[i] == 0.0:
                bs[i] = fill
    return tau * bs


class _Feasibility:
    """Feasibility tests, each constraint measured against its own scale.

    A bound on ``x_i`` holds within ``tau`` times the width of the box (both bounds
    finite) or the size of the bound (else; a bound at zero takes the median of the other
    scales); a row of ``G x <= h`` or ``A x = b`` within ``tau`` times the size of its terms,
    ``|G_j||x| + |h_j|`` (the relative residuals of :mod:`pathlib_core.core.kkt`). ``tau =
    max(1e3 tol, 1e-9)``.
    """

    def __init__(self, d: QPData, tol: float):
        self.d = d
        self.tau = max(1e3 * tol, 1e-9)
        self.btol = _bound_tolerances(d.lb, d.ub, self.tau)  # per variable
        self.absG = np.abs(d.G) if d.G.shape[0] else d.G
        self.absA = np.abs(d.A) if d.A.shape[0] else d.A

    def _rows(self, absM, M, rhs, x, equality: bool) -> np.ndarray:
        r = M @ x - rhs
        r = np.abs(r) if equality else np.maximum(r, 0.0)
        scale = self.tau * (absM @ np.abs(x) + np.abs(rhs))
        out = np.zeros_like(r)
        nz = scale > 0
        out[nz] = r[nz] / scale[nz]
        out[~nz & (r > 0)] = np.inf
        return out

    def violation(self, x: np.ndarray) -> float:
        """Largest violation in units of its tolerance (feasible when ``<= 1``)."""
        d = self.d
        with np.errstate(invalid="ignore"):
            v = max(float(np.max((d.lb - x) / self.btol)), float(np.max((x - d.ub) / self.btol)),
                    0.0)
        if d.A.shape[0]:
            v = max(v, float(np.max(self._rows(self.absA, d.A, d.b, x, True))))
        if d.G.shape[0]:
            v = max(v, float(np.max(self._rows(self.absG, d.G, d.h, x, False))))
        return v

    def feasible(self, x: np.ndarray) -> bool:
        return self.violation(x) <= 1.0

    def rows_feasible(self, x: np.ndarray) -> bool:
        d = self.d
        return not d.G.shape[0] or float(np.max(self._rows(self.absG, d.G, d.h, x,
                                                            False))) <= 1.0

    def tight_rows(self, x: np.ndarray) -> np.ndarray:
        """Rows of ``G x <= h`` holding with equality within their tolerance."""
        d = self.d
        return d.h - d.G @ x <= self.tau * (self.absG @ np.abs(x) + np.abs(d.h))


def _repair(d: QPData, x: np.ndarray, feas: _Feasibility) -> np.ndarray | None:
    """Clip ``x`` to the bounds and fix ``A x = b`` by least-squares moves of interior entries."""
    x = np.clip(x, d.lb, d.ub)
    for _ in range(4):
        if feas.feasible(x):
            return x
        if not feas.rows_feasible(x):
            return None
        r = d.A @ x - d.b
        margin = np.minimum(x - d.lb, d.ub - x)
        F = np.flatnonzero(margin > feas.btol)
        if F.size == 0:
            return None
        dx, *_ = np.linalg.lstsq(d.A[:, F], -r, rcond=None)
        x = x.copy()
        x[F] += dx
        x = np.clip(x, d.lb, d.ub)
    return x if feas.feasible(x) else None


def _bounds_list(lb: np.ndarray, ub: np.ndarray) -> list[tuple[float | None, float | None]]:
    return [(None if not np.isfinite(lo) else float(lo), None if not np.isfinite(hi) else float(hi))
            for lo, hi in zip(lb, ub, strict=True)]


def _phase1(d: QPData, x_ref: np.ndarray) -> tuple[np.ndarray | None, str]:
    """Feasible point closest to ``x_ref`` in the L1 norm (an LP solved by HiGHS).

    Returns ``(x, "ok")``, ``(None, "infeasible")`` or ``(None, message)``.
    """
    n = d.n
    # variables [x, t]: min sum t  s.t.  x - t <= x_ref, -x - t <= -x_ref, G x <= h, A x = b
    eye = sp.identity(n, format="csr")
    A_ub = sp.vstack([sp.hstack([eye, -eye]), sp.hstack([-eye, -eye]),
                      sp.hstack([sp.csr_matrix(d.G), sp.csr_matrix((d.G.shape[0], n))])],
                     format="csr")
    b_ub = np.concatenate([x_ref, -x_ref, d.h])
    A_eq = sp.hstack([sp.csr_matrix(d.A), sp.csr_matrix((d.A.shape[0], n))], format="csr") \
        if d.A.shape[0] else None
    b_eq = d.b if d.A.shape[0] else None
    bounds = _bounds_list(d.lb, d.ub) + [(0.0, None)] * n
    c = np.concatenate([np.zeros(n), np.ones(n)])
    res = linprog(c, A_ub=A_ub, b_ub=b_ub, A_eq=A_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status == 2:
        return None, "infeasible"
    if res.status != 0 or res.x is None:
        return None, f"phase 1 failed: {res.message}"
    return np.asarray(res.x[:n], dtype=float), "ok"


# ---------------------------------------------------------------------------------------------
# The active-set method
# ---------------------------------------------------------------------------------------------
class _RowBasis:
    """Rows accepted into a working set, with a QR factorization ``M_F' = Q R`` of their
    restriction to the free columns ``F``.

    :meth:`residual` is the residual of a new row after its least-squares fit by the
    accepted rows on ``F`` (the fit that ``numpy.linalg.lstsq`` would give, the accepted rows
    being independent on ``F``); :meth:`append` extends ``Q, R`` by one Gram-Schmidt step
    (re-orthogonalized). A change of ``F`` (a bound variable freed) recomputes the
    factorization. Cost per row ``O(r |F|)`` instead of a fresh least-squares solve
    ``O(r^2 |F|)``: 0.5 s -> a few ms for the 340 rows of the hinge split QP at 196 x 6600.
    """

    def __init__(self):
        self.k = 0  # rows accepted
        self._M = None  # (capacity x n), the first k rows are the accepted ones
        self._Q = None  # (|F| x capacity), the first k columns are Q
        self.F = None
        self.R = None

    def __len__(self):
        return self.k

    @property
    def M(self):
        return self._M[:self.k]

    @property
    def Q(self):
        return self._Q[:, :self.k]

    def _factor(self, F):
        self.F = F
        Q, self.R = sla.qr(self.M[:, F].T, mode="economic")
        self._Q = np.zeros((F.size, self._M.shape[0]))
        self._Q[:, :self.k] = Q

    def _coordinates(self, v):
        w = self.Q.T @ v
        w += self.Q.T @ (v - self.Q @ w)  # second pass: orthogonal to rounding
        return w

    def residual(self, row, F):
        if self.k == 0:
            return row.copy()
        if self.F is None or not np.array_equal(F, self.F):
            self._factor(F)
        c = sla.solve_triangular(self.R, self._coordinates(row[F]))
        return row - self.M.T @ c

    def append(self, row, F):
        if self._M is None or self.k == self._M.shape[0]:  # grow the buffers (doubling)
            cap = max(8, 2 * self.k)
            M = np.zeros((cap, row.size))
            if self.k:
                M[:self.k] = self.M
            self._M = M
            if self._Q is not None:
                Q = np.zeros((self._Q.shape[0], cap))
                Q[:, :self.k] = self.Q
                self._Q = Q
        k = self.k
        self._M[k] = row
        if k == 0 or self.F is None or not np.array_equal(F, self.F):
            self.k += 1
            self._factor(F)
            return
        v = row[F]
        w = self._coordinates(v)  # on the k rows before this one
        r = v - self.Q @ w
        rho = float(np.linalg.norm(r))
        R = np.zeros((k + 1, k + 1))
        R[:k, :k] = self.R
        R[:k, k] = w
        R[k, k] = rho
        self._Q[:, k] = r / rho
        self.R = R
        self.k += 1


class _ActiveSetQP:
    """Primal active-set method (Nocedal & Wright, Algorithm 16.3) with bound elimination.

    Working set = all (independent) rows of ``A``, the variables fixed at a bound (eliminated
    from the subproblem) and some rows of ``G``. ``state[i]`` is an
    :class:`~pathlib_core.core.states.IndexState` value: FREE, LOWER, UPPER or FIXED
    (``lb == ub``); ``gw[j]`` marks rows of ``G`` in the working set.
    """

    def __init__(self, d: QPData, tol: float, max_iter: int, compiled: bool = True):
        self.d, self.tol, self.max_iter = d, tol, max_iter
        self.compiled = compiled
        self.n, self.mG = d.n, d.G.shape[0]
        self.P = np.zeros((self.n, self.n)) if d.P is None else d.P
        self.pscale = max(float(np.max(np.abs(self.P))), 0.0)
        self.feas = _Feasibility(d, tol)
        self.a_keep = self._independent_rows(d.A)
        self.n_iter = self.n_add = self.n_drop = self.n_zero_steps = 0
        self.bland = False
        self.n_crash = 0
        self._absP = None
        self._no_curvature = ~np.any(self.P != 0.0, axis=0)  # zero columns of P
        # incremental gradient and term scale (_move): box constraints only, and no zero entry
        # in P, so that no coordinate's terms vanish while x != 0 (the exact zeros that
        # _fit_multipliers relies on never arise)
        self._incremental = bool(
            self.n >= _INCREMENTAL_MIN_N and d.A.shape[0] == 0 and self.mG == 0
            and self.pscale > 0.0 and not self._no_curvature.any() and np.all(self.P != 0.0))
        self.s_x = np.abs(d.q)  # |q| + |P||x| at the current point (set by _term_scale)
        self.psd_confirmed = False
        self.work = 0.0  # flops so far: gradients (n^2 each) and reduced-Hessian factorizations
        if self.pscale > 0.0 and float(np.min(np.diag(self.P))) < -1e-10 * self.pscale:
            self._confirm_psd()  # a negative diagonal entry is negative curvature

    def _final_psd_check(self) -> None:
        """At an optimum: a global PSD test of ``P`` when it costs a small part of the solve.

        Negative curvature outside every working-set subspace the method visited is not
        met by the iterations (a KKT point of a non-convex QP can be a strict local
        minimizer). When the solve has spent at least three times the flops of a Cholesky
        factorization of ``P`` (``n^3 / 3``; counting the gradients, ``n^2`` per iteration,
        the interpreter's overhead of an iteration, ``_ITERATION_FLOPS``, and the
        reduced-Hessian factorizations), or ``n <= 64`` (where the factorization costs
        about as much as one iteration's interpreter overhead, some microseconds),
        ``P + delta I`` is factored
        (``delta`` = ``n eps max|P|``, above the rounding of a PSD matrix) and a failure is
        confirmed by :meth:`_confirm_psd`. Short solves (warm starts) skip it.
        """
        if self.psd_confirmed or self.pscale == 0.0:
            return
        if self.n > _PSD_CHECK_ALWAYS and self.work < float(self.n) ** 3:
            return
        delta = 10.0 * self.n * _EPS * self.pscale
        S = self.P.copy()
        S.flat[:: self.n + 1] += delta
        try:
            np.linalg.cholesky(S)
            self.psd_confirmed = True
        except np.linalg.LinAlgError:
            self._confirm_psd()

    def _confirm_psd(self) -> None:
        """Negative curvature was met: raise :class:`NotPSDError` unless ``P`` is PSD.

        Called only where the method meets negative curvature (a negative diagonal entry, a
        reduced Hessian with an eigenvalue below minus its rounding level, a direction of
        negative curvature), so PSD input pays nothing; the test itself is
        :func:`pathlib_core.core.validation.check_psd` (an eigendecomposition, once per solve).
        ``P`` here is the equilibrated matrix ``sigma D P D``: a congruence by a positive
        diagonal, which has the same numbers of positive, zero and negative eigenvalues.
        """
        if self.psd_confirmed:
            return
        try:
            check_psd(self.P, "P")
        except ValueError as exc:
            msg = str(exc).replace(" (a valid kernel)", "")
            raise NotPSDError(f"{msg}; the QP is not convex (eigenvalues of the diagonally "
                              "equilibrated P, which has the same inertia)") from None
        self.psd_confirmed = True  # the negative curvature was rounding

    # -- the size of the terms of stationarity (per coordinate) -----------------------------
    def _term_scale(self, x: np.ndarray) -> np.ndarray:
        """``|q| + |P||x|``: per coordinate, the size of the terms that make up the gradient.

        Rounding in ``g = P x + q`` is a small multiple of ``eps`` times this; every test of
        the gradient and the multipliers is relative to it (the componentwise scale of
        :mod:`pathlib_core.core.kkt`), so a coordinate whose terms cancel is judged against its
        own terms, not against the largest entry of the gradient.
        """
        s = np.abs(self.d.q)
        nz = np.flatnonzero(x)
        if nz.size and self.pscale > 0.0:
            if self._absP is None:
                self._absP = np.abs(self.P)
            if 8 * nz.size > x.size:
                s = s + self._absP @ np.abs(x)
            else:  # a few nonzeros: a column subset is cheaper than the full product
                s = s + self._absP[:, nz] @ np.abs(x[nz])
        self.s_x = s
        return s

    def _free_term_scale(self, x: np.ndarray, F: np.ndarray) -> np.ndarray:
        """``(|q| + |P||x|)_F`` at ``x``: :meth:`_term_scale` on the free rows only (cost
        ``|F| nnz(x)``, below that of the reduced Hessian it goes with)."""
        s = np.abs(self.d.q[F])
        nz = np.flatnonzero(x)
        if nz.size and self.pscale > 0.0:
            if self._absP is None:
                self._absP = np.abs(self.P)
            s = s + self._absP[np.ix_(F, nz)] @ np.abs(x[nz])
        return s

    def _stat_scale(self, nu: np.ndarray, z: np.ndarray) -> np.ndarray:
        """``|q| + |P||x| + |A|'|nu| + |G|'|z|``: the scale of each stationarity row."""
        s = self.s_x
        if nu.size:
            s = s + self.feas.absA.T @ np.abs(nu)
        if z.size:
            s = s + self.feas.absG.T @ np.abs(z)
        return s

    @staticmethod
    def _relative(w: np.ndarray, s: np.ndarray) -> np.ndarray:
        """``w / s`` with ``0 / 0 = 0`` (a multiplier made of no terms is exact)."""
        return np.divide(w, s, out=np.zeros_like(w), where=s > 0.0)

    # -- working-set bookkeeping ------------------------------------------------------------
    @staticmethod
    def _independent_rows(A: np.ndarray) -> np.ndarray:
        """Indices of a maximal set of linearly independent rows of ``A``."""
        if A.shape[0] == 0:
            return np.zeros(0, dtype=int)
        _, R, piv = sla.qr(A.T, mode="economic", pivoting=True)
        diag = np.abs(np.diag(R))
        if diag.size == 0 or diag[0] == 0.0:
            return np.zeros(0, dtype=int)
        rank = int(np.sum(diag > 1e-10 * diag[0]))
        return np.sort(piv[:rank])

    def _constraint_rows(self) -> np.ndarray:
        return np.vstack([self.d.A[self.a_keep], self.d.G[self.gw]])

    def _init_working_set(self, x: np.ndarray, state: np.ndarray | None,
                          gw: np.ndarray | None) -> np.ndarray:
        d, btol = self.d, self.feas.btol
        fixed = d.lb == d.ub
        if state is None:
            state = np.full(self.n, FREE, dtype=np.int8)
            with np.errstate(invalid="ignore"):
                state[x - d.lb <= btol] = LOWER
                state[d.ub - x <= btol] = UPPER
        state = state.astype(np.int8).copy()
        state[(state == LOWER) & ~np.isfinite(d.lb)] = FREE
        state[(state == UPPER) & ~np.isfinite(d.ub)] = FREE
        state[(state == FIXED) & ~fixed] = FREE
        state[fixed] = FIXED
        x = x.copy()
        x[state == LOWER] = d.lb[state == LOWER]
        x[state == UPPER] = d.ub[state == UPPER]
        x[state == FIXED] = d.lb[state == FIXED]
        tight = self.feas.tight_rows(x) if self.mG else np.zeros(0, dtype=bool)
        gw = tight if gw is None else (gw & tight)  # a warm row must still be active
        cand_g = np.flatnonzero(gw)
        self.state, self.gw = state, np.zeros(self.mG, dtype=bool)
        # keep the working set linearly independent: add rows one by one, freeing a fixed
        # variable when a row is dependent on the rows and bounds already in the working set
        kept_a = []
        rows = _RowBasis()
        for kind, idx in [("A", i) for i in self.a_keep] + [("G", j) for j in cand_g]:
            row = d.A[idx] if kind == "A" else d.G[idx]
            if self._accept_row(row, rows):
                rows.append(row, np.flatnonzero(self.state == FREE))
                if kind == "A":
                    kept_a.append(idx)
                else:
                    self.gw[idx] = True
        self.a_keep = np.array(kept_a, dtype=int)
        return self._restore(x)

    def _accept_row(self, row: np.ndarray, rows: _RowBasis) -> bool:
        F = np.flatnonzero(self.state == FREE)
        rnorm = float(np.linalg.norm(row))
        if rnorm == 0.0:
            return False
        resid = rows.residual(row, F)
        if np.linalg.norm(resid[F]) > 1e-8 * rnorm:
            return True
        cand = np.flatnonzero((self.state == LOWER) | (self.state == UPPER))
        if cand.size == 0:
            return False
        j = int(cand[np.argmax(np.abs(resid[cand]))])
        if abs(resid[j]) <= 1e-8 * rnorm:
            return False
        self.state[j] = FREE
        return True

    # -- subproblem on the working set --------------------------------------------------------
    def _direction(self, x: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, str]:
        """Step ``p`` minimizing the model on the working set.

        Returns ``(p, "newton")`` (take at most a unit step) or ``(p, "ray")`` (a descent
        direction of zero curvature: step to the nearest blocking constraint).
        """
        F = np.flatnonzero(self.state == FREE)
        p = np.zeros(self.n)
        if F.size == 0:
            return p, "newton"
        C = self._constraint_rows()[:, F]
        gF = g[F]
        PFF = self.P[np.ix_(F, F)]
        Z = self._null_space(C)
        if Z is None:
            H, gz = PFF, gF
        else:
            if Z.shape[1] == 0:
                return p, "newton"
            H, gz = Z.T @ PFF @ Z, Z.T @ gF
        # the size of the gradient's terms on F at *this* x (not the last multiplier test's
        # scale, which can be zero here, e.g. after a step from a point with x_F = q_F = 0):
        # a reduced gradient below tol times it is rounding, neither a step nor a ray
        sF = self.s_x[F] if self._incremental else self._free_term_scale(x, F)
        gtol = self.tol * float(np.max(sF))
        u, kind, acc = self._reduced_step(0.5 * (H + H.T), gz, gtol)
        p[F] = u if Z is None else Z @ u
        if kind == "ray":
            # entries of a ray below its accuracy are rounding of the bases Z and V (a ray of
            # zero curvature computed through them has some in every coordinate): as such
            # they would block the ray far out (a bound met after a step of ~1/eps) or carry
            # x into directions *with* curvature over the ray's long step; they are zero.
            # Unless the accuracy is too poor to tell (a tiny spectral gap: acc ~ 1, which
            # duplicated points give): zeroing would then leave a direction that no longer
            # descends, and the same null step would repeat without end. The ray is kept
            # whole unless its zeroed form keeps at least half of its slope.
            pz = np.where(np.abs(p) <= acc * float(np.max(np.abs(p))), 0.0, p)
            if float(g @ pz) <= 0.5 * float(g @ p):
                p = pz
        return p, kind

    @staticmethod
    def _null_space(C: np.ndarray) -> np.ndarray | None:
        """Orthonormal basis of ``{p : C p = 0}`` (``None`` when ``C`` has no rows)."""
        m, k = C.shape
        if m == 0:
            return None
        try:
            Q, R = sla.qr(C.T, mode="full")
            diag = np.abs(np.diag(R[:m, :m])) if m <= k else np.zeros(0)
            if m <= k and diag.size and diag.min() > 1e-10 * max(diag.max(), 1e-300):
                return Q[:, m:]
        except (np.linalg.LinAlgError, ValueError):
            pass
        # rank-deficient (should not happen with an independent working set): use the SVD
        try:
            _, s, Vt = np.linalg.svd(C, full_matrices=True)
        except np.linalg.LinAlgError as exc:
            raise QPSolverError("SVD of the working-set constraints failed") from exc
        rank = int(np.sum(s > 1e-10 * max(s[0] if s.size else 0.0, 1e-300)))
        return Vt[rank:].T

    def _reduced_step(self, H: np.ndarray, gz: np.ndarray,
                      gtol: float) -> tuple[np.ndarray, str, float]:
        """``(u, kind, acc)``: the step in the null-space coordinates, ``"newton"`` or
        ``"ray"``, and for a ray its relative accuracy (rounding of the eigenvectors of
        zero curvature, ``eps ||H|| / gap``, and of the basis, ``k eps``)."""
        k = H.shape[0]
        if float(np.max(np.abs(gz))) <= gtol * 1e-2:
            return np.zeros(k), "newton", 0.0
        zero_curv = 10.0 * k * _EPS * self.pscale  # curvature below this counts as zero
        if self.pscale > 0.0:
            self.work += k ** 3 / 3.0
            try:
                c, low = sla.cho_factor(H, lower=False, check_finite=False)
                anorm = float(np.max(np.sum(np.abs(H), axis=0)))
                rcond, info = sla.lapack.dpocon(c, anorm)
                # rcond * anorm estimates the smallest eigenvalue (up to a factor ~k)
                if info == 0 and rcond > 1e-12 and rcond * anorm > 1e2 * k * zero_curv:
                    return -sla.cho_solve((c, low), gz, check_finite=False), "newton", 0.0
            except np.linalg.LinAlgError:
                pass
            self.work += 9.0 * k ** 3
            try:
                s, V = np.linalg.eigh(H)
            except np.linalg.LinAlgError as exc:
                raise QPSolverError("eigendecomposition of the reduced Hessian failed") from exc
        else:
            s, V = np.zeros(k), np.eye(k)
        cut = max(zero_curv, 10.0 * k * _EPS * float(np.max(np.abs(s))))
        if s.size and s[0] < -cut:
            self._confirm_psd()  # negative curvature: P is not PSD, or this is rounding
        pos = s > cut
        gv = V.T @ gz
        g0 = gv[~pos]
        if g0.size and float(np.max(np.abs(g0))) > gtol:
            gap = float(np.min(s[pos])) if pos.any() else 0.0
            acc = 10.0 * k * _EPS * (1.0 + (float(s[-1]) / gap if gap > 0.0 else 0.0))
            return -(V[:, ~pos] @ g0), "ray", acc
        return -(V[:, pos] @ (gv[pos] / s[pos])), "newton", 0.0

    # -- multipliers ------------------------------------------------------------------------
    def _multipliers(self, g: np.ndarray):
        """Least-squares multipliers of the working set at the current point (``g`` and the
        term scale ``s_x`` both at that point)."""
        d = self.d
        F = np.flatnonzero(self.state == FREE)
        C = self._constraint_rows()
        lam = np.zeros(C.shape[0])
        if C.shape[0]:
            CF = C[:, F]
            if F.size:
                lam = self._fit_multipliers(CF, -g[F], self.s_x[F])
        r = g + C.T @ lam
        nu = np.zeros(d.A.shape[0])
        nu[self.a_keep] = lam[: self.a_keep.size]
        z = np.zeros(self.mG)
        z[self.gw] = lam[self.a_keep.size:]
        st = self.state
        w_lb = np.where(st == LOWER, r, 0.0) + np.where(st == FIXED, np.maximum(r, 0.0), 0.0)
        w_ub = np.where(st == UPPER, -r, 0.0) + np.where(st == FIXED, np.maximum(-r, 0.0), 0.0)
        return nu, z, w_lb, w_ub

    @staticmethod
    def _fit_multipliers(CF: np.ndarray, rhs: np.ndarray, sF: np.ndarray) -> np.ndarray:
        """``lam`` with ``CF' lam ~= rhs`` (least squares), rows without terms held exactly.

        A free variable whose gradient has no terms (``|q_i| + (|P||x|)_i = 0``, so
        ``g_i = 0`` exactly) has the stationarity row ``(CF' lam)_i = 0`` made of
        multipliers only. When these rows determine the multipliers entering them (full
        rank), those are zero exactly; a least-squares fit over all rows would instead
        spread the rounding of the other rows onto them, leaving a row that is nothing but
        that rounding (relative residual 1, :mod:`pathlib_core.core.kkt`).
        """
        m = CF.shape[0]
        empty = sF == 0.0
        if empty.any():
            M0 = CF[:, empty]
            J0 = np.flatnonzero(np.any(M0 != 0.0, axis=1))  # constraints entering them
            if J0.size and np.linalg.matrix_rank(M0[J0]) == J0.size:
                lam = np.zeros(m)
                rest = np.ones(m, dtype=bool)
                rest[J0] = False
                if rest.any():
                    lam[rest] = np.linalg.lstsq(CF[rest].T, rhs, rcond=None)[0]
                return lam
        return np.linalg.lstsq(CF.T, rhs, rcond=None)[0]

    def _to_drop(self, nu: np.ndarray, z: np.ndarray, w_lb: np.ndarray, w_ub: np.ndarray):
        """The working-set constraint to drop: ``("bound", i)``, ``("G", j)`` or ``None``.

        A multiplier counts as negative when it is below ``-tol`` times its share of the
        stationarity rows it enters (the relative dual residual of :mod:`pathlib_core.core.kkt`);
        the most negative relative multiplier is dropped (Bland: the first one).
        """
        s = self._stat_scale(nu, z)
        k, val = most_negative_bound(self.state, w_lb, w_ub, s, self.tol, self.bland)
        if self.mG and not (self.bland and k >= 0):
            share = np.max(self.feas.absG * self._relative(np.ones(self.n), s)[None, :],
                           axis=1)
            zs = np.where(self.gw, z * share, np.inf)
            neg = np.flatnonzero(zs < -self.tol)
            if neg.size:
                j = int(neg[0]) if self.bland else int(neg[np.argmin(zs[neg])])
                if k < 0 or zs[j] < val:
                    return ("G", j)
        return None if k < 0 else ("bound", k)

    # -- step -----------------------------------------------------------------------------
    def _step_length(self, x: np.ndarray, p: np.ndarray, alpha_max: float):
        d = self.d
        pn = float(np.max(np.abs(p)))
        ptol = 10.0 * _EPS * pn
        ratios, idx = [], []
        free = self.state == FREE
        dec = free & (p < -ptol) & np.isfinite(d.lb)
        inc = free & (p > ptol) & np.isfinite(d.ub)
        with np.errstate(invalid="ignore", divide="ignore"):
            r_lo = np.where(dec, (d.lb - x) / np.where(dec, p, 1.0), np.inf)
            r_hi = np.where(inc, (d.ub - x) / np.where(inc, p, 1.0), np.inf)
        r_b = np.maximum(np.minimum(r_lo, r_hi), 0.0)
        ratios.append(r_b)
        idx.append(np.arange(self.n))
        if self.mG:
            Gp = d.G @ p
            out = ~self.gw & (Gp > 10.0 * _EPS * pn * np.sum(np.abs(d.G), axis=1))
            slack = d.h - d.G @ x
            r_g = np.where(out, np.maximum(slack, 0.0) / np.where(out, Gp, 1.0), np.inf)
            ratios.append(r_g)
            idx.append(self.n + np.arange(self.mG))
        ratios_all = np.concatenate(ratios)
        amin = float(np.min(ratios_all)) if ratios_all.size else np.inf
        if not amin < alpha_max:
            return alpha_max, None
        # smallest index among (near) ties: Bland-like, deterministic
        ties = np.flatnonzero(ratios_all <= amin * (1.0 + 1e-12))
        k = int(ties[0])
        return amin, (("bound", k) if k < self.n else ("G", k - self.n))

    def _add(self, x: np.ndarray, p: np.ndarray, block) -> None:
        kind, k = block
        if kind == "bound":
            if p[k] < 0:
                self.state[k] = LOWER
                x[k] = self.d.lb[k]
            else:
                self.state[k] = UPPER
                x[k] = self.d.ub[k]
        else:
            self.gw[k] = True
        self.n_add += 1

    # -- main loop --------------------------------------------------------------------------
    def crash(self, x: np.ndarray, *, rounds: int = 10) -> np.ndarray:
        """Guess the bounds active at the solution before the active-set iterations (cold start).

        A few rounds of the primal-dual active-set method (Hintermueller, Ito & Kunisch 2002):
        minimize the model on the working set ignoring the bounds of the free variables (one
        Newton step), then fix every free variable whose Newton value violates a bound and
        free every fixed variable whose multiplier has the wrong sign. The last *feasible*
        Newton point met and its working set are handed to the active-set iterations, which
        keep the method's guarantees (a wrong guess is undone by dropping / adding
        constraints); with no feasible point, nothing changes. Each round costs one
        factorization and fixes or frees many bounds at once.
        """
        d = self.d
        state0, best = self.state.copy(), None
        for _ in range(rounds):
            if self.n_iter >= self.max_iter - 1:
                break
            g = self.P @ x + d.q
            self._term_scale(x)
            p, kind = self._direction(x, g)
            if kind != "newton":
                break
            xn = x + p
            self._term_scale(xn)
            nu, z, w_lb, w_ub = self._multipliers(self.P @ xn + d.q)
            s = self._stat_scale(nu, z)
            free = self.state == FREE
            lo, hi = free & (xn < d.lb), free & (xn > d.ub)
            release = (((self.state == LOWER) & (self._relative(w_lb, s) < -self.tol))
                       | ((self.state == UPPER) & (self._relative(w_ub, s) < -self.tol)))
            if not (lo.any() or hi.any()) and self.feas.feasible(xn):
                best = (xn, self.state.copy())
            if not (lo.any() or hi.any() or release.any()):
                break
            self.n_crash += 1
            self.n_iter += 1
            self.state[lo], self.state[hi], self.state[release] = LOWER, UPPER, FREE
            if not self._independent_working_set():
                break
            x = np.clip(xn, d.lb, d.ub)
            x[release] = xn[release]
            x = self._restore(x)
        if best is None:
            self.state = state0
            return self._x_start
        self.state = best[1]
        return best[0]

    def _independent_working_set(self) -> bool:
        C = self._constraint_rows()[:, self.state == FREE]
        if C.shape[0] == 0:
            return True
        if C.shape[0] > C.shape[1]:
            return False
        s = np.linalg.svd(C, compute_uv=False)
        return bool(s[-1] > 1e-8 * s[0])

    def run(self, x: np.ndarray, state, gw, *, crash: bool = False):
        d = self.d
        x = self._init_working_set(x, state, gw)
        self._x_start = x
        compiled_box = self._incremental and self.compiled
        # the crash saves iterations that cost a factorization and some thirty numpy calls
        # each; the compiled loop's iterations cost O(k^2) and are cheaper than its rounds
        if crash and not compiled_box and np.count_nonzero(self.state == FREE) >= 20 and (
                np.isfinite(d.lb).any() or np.isfinite(d.ub).any()):
            x = self.crash(x)
        at_min = False
        status = "max_iter"
        ray = None
        g, stale = self._exact(x)
        settled = None  # the compiled loop's status (None: it handed back, or did not run)
        if compiled_box:
            x, g, stale, settled, ray = self._run_compiled(x, g, stale)
            status = settled or status
        while settled is None and self.n_iter < self.max_iter:
            self.n_iter += 1
            if stale >= _EXACT_EVERY:
                g, stale = self._exact(x)
            self.work += float(self.n) ** 2 + _ITERATION_FLOPS
            if not at_min:
                p, kind = self._direction(x, g)
                pn = float(np.max(np.abs(p)))
                if not np.isfinite(pn):
                    raise QPSolverError("the working-set subproblem gave a non-finite step")
                at_min = pn == 0.0
                if not at_min:
                    alpha_max = 1.0 if kind == "newton" else self._ray_length(g, p)
                    alpha, block = self._step_length(x, p, alpha_max)
                    if not np.isfinite(alpha):
                        status, ray = "unbounded", p
                        break
                    x_old, x = x, x + alpha * p
                    if block is not None:
                        self._add(x, p, block)
                    else:
                        at_min = kind == "newton"
                    g, stale = self._move(x_old, x, g, stale)
                    self._count_zero_step(alpha * pn)
                    continue
            if not self._incremental:
                self._term_scale(x)
            nu, z, w_lb, w_ub = self._multipliers(g)
            drop = self._to_drop(nu, z, w_lb, w_ub)
            if drop is None and stale:  # confirm the optimum on the exact gradient
                g, stale = self._exact(x)
                nu, z, w_lb, w_ub = self._multipliers(g)
                drop = self._to_drop(nu, z, w_lb, w_ub)
            if drop is None:
                status = "optimal"
                break
            kind_d, k = drop
            if kind_d == "bound":
                self.state[k] = FREE
            else:
                self.gw[k] = False
            self.n_drop += 1
            at_min = False
        if status == "optimal":
            x = self._restore(x)
            self._final_psd_check()
        g = self.P @ x + d.q
        self._term_scale(x)
        nu, z, w_lb, w_ub = self._multipliers(g)
        return x, nu, z, w_lb, w_ub, status, ray

    def _run_compiled(self, x: np.ndarray, g: np.ndarray, stale: int):
        """The iterations of :meth:`run` in the compiled loop
        (:func:`pathlib_core.core.box_qp_kernel.box_active_set`), for a box-only QP in the
        incremental mode. Returns ``(x, g, stale, status, ray)``; ``status`` is None when
        the loop handed back (negative curvature or a non-finite step met), and the Python
        loop goes on from the returned point."""
        if self._absP is None:
            self._absP = np.abs(self.P)
        d = self.d
        x, g = np.array(x, dtype=float), np.array(g, dtype=float)
        self.s_x = np.array(self.s_x, dtype=float)
        p = np.zeros(self.n)
        (code, self.n_iter, stale, n_add, n_drop, self.bland, self.n_zero_steps,
         work) = box_active_set(
            np.ascontiguousarray(self.P), self._absP, d.q, d.lb, d.ub, x, g, self.s_x,
            self.state, p, self.tol, self.pscale, self.max_iter, self.n_iter, stale,
            _EXACT_EVERY, _ITERATION_FLOPS, self.bland, self.n_zero_steps)
        self.n_add += n_add
        self.n_drop += n_drop
        self.work += work
        if code == HAND_BACK:
            return x, g, stale, None, None
        status = {OPTIMAL: "optimal", MAX_ITER: "max_iter", UNBOUNDED: "unbounded"}[code]
        return x, g, stale, status, (p if code == UNBOUNDED else None)

    def _exact(self, x: np.ndarray) -> tuple[np.ndarray, int]:
        """``(P x + q, 0)``, with the term scale ``s_x`` recomputed at ``x``."""
        self._term_scale(x)
        return self.P @ x + self.d.q, 0

    def _move(self, x_old: np.ndarray, x: np.ndarray, g: np.ndarray,
              stale: int) -> tuple[np.ndarray, int]:
        """The gradient at ``x`` after a step from ``x_old``, and the count of incremental
        updates since the last exact one.

        Without the incremental mode (see ``__init__``) it is ``P x + q`` afresh (the term scale
        is then computed where it is used). In that mode, only the rows of ``P`` of the moved
        coordinates enter: ``g += dx_M P_M`` and ``s_x += (|x_M| - |x_M^old|) |P|_M``
        (``n |M|`` flops; ``P`` is symmetric), unless most coordinates moved or ``x = 0``
        (then both are computed exactly).
        """
        if not self._incremental:
            return self.P @ x + self.d.q, 0
        moved = np.flatnonzero(x != x_old)
        if moved.size == 0:
            return g, stale
        if 4 * moved.size > self.n or not np.any(x):
            return self._exact(x)
        if self._absP is None:
            self._absP = np.abs(self.P)
        g = g + (x[moved] - x_old[moved]) @ self.P[moved]
        ds = (np.abs(x[moved]) - np.abs(x_old[moved])) @ self._absP[moved]
        self.s_x = np.maximum(self.s_x + ds, 0.0)
        return g, stale + 1

    def _restore(self, x: np.ndarray) -> np.ndarray:
        """Make the working-set equalities hold to rounding by a least-squares move of free x.

        The move changes the gradient by ``P dx``, which the multipliers cannot absorb (it
        is not in the range of the working-set rows): after the final optimality test, a
        rounding-size move of a variable with curvature whose stationarity row has no other
        terms (``x_i = 0``, ``q_i = 0``) leaves a gradient entry ``P_ii dx_i`` that is all
        of its row. So the move is made by the free variables *without* curvature (zero
        columns of ``P``), which changes no gradient entry, whenever their rows of the
        working set have full rank; else by all free variables (minimum norm).
        """
        F = np.flatnonzero(self.state == FREE)
        C = self._constraint_rows()
        if C.shape[0] == 0 or F.size == 0:
            return x
        rhs = np.concatenate([self.d.b[self.a_keep], self.d.h[self.gw]])
        r = C @ x - rhs
        if not np.any(r):
            return x
        F0 = F[self._no_curvature[F]]
        if F0.size >= C.shape[0]:
            dx, _, rank, _ = np.linalg.lstsq(C[:, F0], -r, rcond=None)
            if rank == C.shape[0]:
                F = F0
        if F is not F0:
            dx, *_ = np.linalg.lstsq(C[:, F], -r, rcond=None)
        x = x.copy()
        x[F] += dx
        return x

    def _ray_length(self, g: np.ndarray, p: np.ndarray) -> float:
        curv = float(p @ (self.P @ p))
        slope = float(g @ p)
        zero = 10.0 * _EPS * self.pscale * float(p @ p) * self.n
        if curv < -zero:
            self._confirm_psd()
        if curv > zero / self.n and slope < 0:
            return -slope / curv
        return np.inf

    def _count_zero_step(self, moved: float) -> None:
        if moved <= _EPS * 10:
            self.n_zero_steps += 1
            if self.n_zero_steps >= 3:
                self.bland = True
        else:
            self.n_zero_steps = 0
            self.bland = False

    def active_set(self) -> ActiveSet:
        st = self.state
        return ActiveSet(at_lower=(st == LOWER) | (st == FIXED),
                         at_upper=(st == UPPER) | (st == FIXED),
                         inequalities=self.gw.copy())


def _parse_warm(warm_start, d: QPData):
    """Return ``(x, state, gw)`` from a warm start (``None`` entries when unknown)."""
    if warm_start is None:
        return None, None, None
    if isinstance(warm_start, QPResult):
        x = np.asarray(warm_start.x, dtype=float)
        act = warm_start.active
        if x.shape != (d.n,) or act.at_lower.shape != (d.n,):
            raise ValueError(f"warm_start must be a QPResult of a problem with {d.n} variables; "
                             f"got one with {x.shape[0] if x.ndim else 0}")
        if not np.all(np.isfinite(x)):
            return None, None, None
        state = np.full(d.n, FREE, dtype=np.int8)
        state[act.at_lower] = LOWER
        state[act.at_upper] = UPPER
        state[act.at_lower & act.at_upper] = FIXED
        gw = act.inequalities.copy() if act.inequalities.shape == (d.G.shape[0],) else None
        return x, state, gw
    try:
        x = np.asarray(warm_start, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError("warm_start must be a QPResult or a vector of length "
                         f"{d.n}; got {type(warm_start).__name__}") from exc
    if x.shape != (d.n,):
        raise ValueError(f"warm_start must be a QPResult or a vector of length {d.n}; "
                         f"got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("warm_start must contain only finite values")
    return x, None, None


def _max_iter(max_iter, d: QPData) -> int:
    if max_iter is None:
        return 10 * (d.n + d.G.shape[0]) + 100
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be a positive integer or None; got {max_iter!r}")
    return int(max_iter)


def solve_qp(P, q, *, G=None, h=None, A=None, b=None, lb=None, ub=None, warm_start=None,
             tol: float = 1e-10, max_iter: int | None = None,
             compiled: bool = True) -> QPResult:
    r"""Solve a dense convex QP by a primal active-set method.

    .. math::

        \min_x \; \tfrac12 x^\top P x + q^\top x
        \quad \text{s.t.} \quad G x \le h, \quad A x = b, \quad lb \le x \le ub,

    with ``P`` symmetric positive semi-definite.

    Method
    ------
    Primal active-set method (Nocedal & Wright, *Numerical Optimization*, 2nd ed., Algorithm
    16.3). The working set holds the (linearly independent) rows of ``A``, the variables
    fixed at a bound -- eliminated from the subproblem -- and some rows of ``G``; it is kept
    linearly independent. Each iteration minimizes the model on the working set by the
    null-space method: ``Z`` spans the null space of the working-set rows restricted to the
    free variables (QR), and the reduced Hessian ``Z' P_FF Z`` is factored by Cholesky when it
    is well conditioned (LAPACK condition estimate > 1e-12), else by a symmetric
    eigendecomposition. **Singular P**: eigenvalues below ``10 k eps max|P|`` count as zero
    curvature; if the reduced gradient has a component along them, the step is that
    zero-curvature descent direction taken up to the nearest blocking constraint (Nocedal &
    Wright, sec. 16.5); no blocking constraint means the problem is unbounded
    (``status="unbounded"``). Otherwise the minimum-norm Newton step is taken. At a minimizer
    of the working set the multipliers are computed by least squares; the constraint with the
    most negative relative multiplier is dropped. Ties in the ratio test are broken by the
    smallest index; after three consecutive zero-length steps the drop rule switches to
    Bland's smallest-index rule until progress resumes. An iteration cap bounds the rest.

    Starting point: for a linear program (``P`` zero or ``None``) without a warm working
    set, the HiGHS dual-simplex solution (feasibility tolerances 1e-10), whose variables at a
    bound form the first working set, so that the active-set method only verifies (or
    finishes) it -- typically in one iteration, where a start from a non-vertex point adds
    the bounds one at a time (hundreds of iterations for a few hundred variables). Otherwise
    ``warm_start`` when given (repaired when infeasible, see below), else
    ``clip(0, lb, ub)`` when that is feasible, else a phase 1: the feasible point nearest to it
    in the L1 norm, an LP solved by HiGHS (a vertex, so the first working set is large and the
    subproblems small). An infeasible phase 1 gives ``status="infeasible"``. On a cold start
    with at least 20 free variables, a few primal-dual active-set rounds ("crash", see
    ``_ActiveSetQP.crash``) first guess many active bounds at once; they count as iterations
    (``info["n_crash"]``). Every iteration refactors the working-set subproblem (no factor
    updates), so one iteration costs ``O(k^3)`` for ``k`` free variables. **Box-only
    problems** with ``n >= 128`` and a Hessian without zero entries (kernel matrices) run
    the same iterations in one compiled loop instead (:mod:`pathlib_core.core.box_qp_kernel`:
    the inverse of the free block updated in ``O(k^2)`` per iteration, each Newton step
    verified), without the crash, whose rounds cost more than the iterations they save.

    **Scale.** The method runs on an equilibrated copy of the problem: Ruiz's diagonal
    scaling of the KKT matrix ``[[P, A', G'], [A, 0, 0], [G, 0, 0]]`` and a scaling of the
    objective, all by powers of two (so the copy has exactly the solutions of the given
    problem, ``x = D x~``, and the multipliers map back exactly, with no rounding; see
    ``_Scaling``). It is used when some factor lies outside ``[2^-4, 2^4]``, so variables
    and constraints given in units 1e-8 apart are solved like the unscaled problem, in about
    the same number of iterations; ``info["scaling"]`` then holds the factors. Every test is
    relative to the data, per coordinate: a multiplier is negative when it is below
    ``-tol`` times the size of the terms of its stationarity row, ``(|q| + |P||x| + |A|'|nu|
    + |G|'|z|)_i`` (the relative dual residual of :mod:`pathlib_core.core.kkt`), and a bound or
    a row holds within ``max(1e3 tol, 1e-9)`` times the box width or the size of its terms.

    **Convexity.** ``P`` must be positive semi-definite. The method checks it where it meets
    negative curvature (a negative diagonal entry, a reduced Hessian with an eigenvalue below
    minus its rounding level, a search direction of negative curvature) and, at an optimum,
    by a Cholesky factorization of ``P + n eps max|P| I`` when ``n <= 64`` or when the solve
    has already spent three times its flops; a failure is confirmed on the eigenvalues
    (:func:`pathlib_core.core.validation.check_psd`) and raises :class:`NotPSDError`, a
    ``ValueError`` naming ``P``. A short (warm-started) solve of a large non-convex problem
    can miss negative curvature that its working sets never touch; PSD input pays nothing
    but that closing factorization.

    **Threads.** For ``n >= 64`` the solve runs with one BLAS thread (restored on return,
    see :mod:`pathlib_core.core.threads`); smaller problems are below the sizes where the BLAS
    threads, and skip the few microseconds the limit costs.

    Parameters
    ----------
    P : array_like of shape (n, n), or None
        Symmetric positive semi-definite matrix (symmetry is checked, PSD is assumed);
        ``None`` means ``P = 0`` (a linear program).
    q : array_like of shape (n,)
    G, h : array_like of shapes (m_G, n) and (m_G,), optional
        General inequalities ``G x <= h`` (meant for a few rows).
    A, b : array_like of shapes (m_A, n) and (m_A,), optional
        Equalities ``A x = b``; redundant rows are detected and ignored (their ``nu`` is 0).
    lb, ub : float or array_like of shape (n,), optional
        Bounds; ``-inf`` / ``+inf`` entries mean no bound.
    warm_start : QPResult or array_like of shape (n,), optional
        A previous result (its ``x`` and working set are reused: variables it fixed at a bound
        are fixed at the *new* bound) or a primal point (ignored for a linear program, which
        starts at the simplex solution). An infeasible warm point is clipped to
        the bounds and corrected for ``A x = b`` by least squares; when that fails, the phase 1
        LP projects it onto the feasible set.
    tol : float
        Optimality tolerance: a multiplier counts as negative below ``-tol`` times the size
        of the terms of the stationarity rows it enters (see **Scale** above).
    max_iter : int, optional
        Iteration cap (default ``10 (n + m_G) + 100``); ``status="max_iter"`` when reached.
    compiled : bool, default True
        Run box-only kernel QPs in the compiled loop (see **Box-only problems** above).
        False keeps the Python iterations (a factorization per iteration): the same optimum,
        reached through different rounding. Callers whose next step depends on the exact
        point within a degenerate solution set can ask for it (the S3VM path does, see
        :mod:`pathlib_core.s3vm.path`).

    Returns
    -------
    QPResult
        ``x``, multipliers ``nu, z, w_lb, w_ub`` (convention of :mod:`pathlib_core.core.kkt`),
        ``active`` (the final working set), ``n_iter``, ``status``, ``objective``; ``kkt``
        gives the residuals. ``info`` holds ``"start"`` (how the first point was found:
        ``"lp-simplex"``, ``"warm"``, ``"warm-repaired"``, ``"phase1-from-warm"``, ``"zero"``,
        ``"phase1"``),
        ``"n_add"``, ``"n_drop"``, ``"n_crash"``, when the problem was equilibrated
        ``"scaling"`` (``"columns"``, ``"rows_G"``, ``"rows_A"``, ``"objective"``: the
        powers of two of ``_Scaling``) and, when unbounded, the ray
        ``"unbounded_direction"`` (in the user's units).

    Raises
    ------
    ValueError
        Bad input (shapes, NaN, ``lb > ub``, asymmetric ``P``, ...), naming the argument;
        :class:`NotPSDError` (a ``ValueError``) when ``P`` is found not positive
        semi-definite (see **Convexity**).
    QPSolverError
        An unrecoverable numerical failure (the phase-1 LP failing for another reason than
        infeasibility, a failed factorization); never a bare ``LinAlgError``.
    """
    d = _qp_data(P, q, G=G, h=h, A=A, b=b, lb=lb, ub=ub)
    tol = positive_scalar(tol, "tol")
    if not isinstance(compiled, bool):
        raise ValueError(f"compiled must be True or False; got {compiled!r}")
    iters = _max_iter(max_iter, d)
    x_w, state, gw = _parse_warm(warm_start, d)
    if d.n < _BLAS_LIMIT_MIN_N:
        return _solve_guarded(d, tol, iters, x_w, state, gw, compiled)
    with blas_controller().limit(limits=1, user_api="blas"):
        return _solve_guarded(d, tol, iters, x_w, state, gw, compiled)


def _solve_guarded(d: QPData, tol: float, iters: int, x_w, state, gw,
                   compiled: bool = True) -> QPResult:
    try:
        return _solve(d, tol, iters, x_w, state, gw, compiled)
    except np.linalg.LinAlgError as exc:  # pragma: no cover - defensive
        raise QPSolverError(f"linear algebra failure in the active-set method: {exc}") from exc


def _solve(d: QPData, tol: float, iters: int, x_w, state, gw,
           compiled: bool = True) -> QPResult:
    """The active-set method on the equilibrated problem; the result in the user's units."""
    sc, ds = _scaled_problem(d)
    if sc is not None and x_w is not None:
        x_w = sc.x_to_scaled(x_w)
    solver = _ActiveSetQP(ds, tol, iters, compiled)
    info: dict = {}
    x0, info["start"] = _starting_point(ds, x_w, state, solver.feas)
    if x0 is None:
        status = "infeasible" if info["start"] == "infeasible" else "error"
        if status == "error":
            raise QPSolverError(info["start"])
        return _empty_result(d, status, 0, "active-set", info)
    if info["start"] not in ("warm", "warm-repaired"):
        state, gw = None, None
    crash = state is None and info["start"] != "lp-simplex"
    x, nu, z, w_lb, w_ub, status, ray = solver.run(x0, state, gw, crash=crash)
    info.update(n_add=solver.n_add, n_drop=solver.n_drop, n_crash=solver.n_crash)
    if sc is not None:
        x = sc.x_from_scaled(x)
        nu, z, w_lb, w_ub = sc.multipliers_from_scaled(nu, z, w_lb, w_ub)
        if ray is not None:
            ray = sc.x_from_scaled(ray)
        info["scaling"] = {"columns": sc.col, "rows_G": sc.row_G, "rows_A": sc.row_A,
                           "objective": sc.obj}
    if ray is not None:
        info["unbounded_direction"] = ray
    return QPResult(x=x, nu=nu, z=z, w_lb=w_lb, w_ub=w_ub, active=solver.active_set(),
                    n_iter=solver.n_iter, status=status, objective=_objective(d, x),
                    solver="active-set", info=info, _data=d)


def _objective(d: QPData, x: np.ndarray) -> float:
    """``1/2 x'Px + q'x`` without spurious overflow: evaluated at ``x / m`` (``m = max|x|``)
    and scaled back, so a value beyond the floating-point range is ``+-inf``, never NaN."""
    m = float(np.max(np.abs(x))) if x.size else 0.0
    if not (m > 0.0 and np.isfinite(m)):
        return d.objective(x) if m == 0.0 else float("nan")
    if m <= 1e150:
        return d.objective(x)
    xs = x / m
    quad = 0.0 if d.P is None else 0.5 * float(xs @ (d.P @ xs))
    inner = m * quad + float(d.q @ xs)  # Python floats: overflow gives +-inf, no warning
    return m * inner


def _highs(d: QPData, method: str = "highs", options: dict | None = None):
    """``scipy.optimize.linprog`` (HiGHS) on ``min q'x`` over the constraints of ``d``."""
    mG, mA = d.G.shape[0], d.A.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return linprog(d.q, A_ub=d.G if mG else None, b_ub=d.h if mG else None,
                       A_eq=d.A if mA else None, b_eq=d.b if mA else None,
                       bounds=_bounds_list(d.lb, d.ub), method=method, options=options)


def _is_lp(d: QPData) -> bool:
    return d.P is None or not np.any(d.P)


def _lp_vertex(d: QPData) -> tuple[np.ndarray | None, str]:
    """A solution of the LP (``P = 0``) by the HiGHS dual simplex, at tight tolerances.

    Returns ``(x, "lp-simplex")``, ``(None, "infeasible")`` or ``(None, reason)`` when HiGHS
    gives no solution (e.g. an unbounded LP, left to the active-set method and its ray)."""
    res = _highs(d, method="highs-ds", options={"primal_feasibility_tolerance": 1e-10,
                                                  "dual_feasibility_tolerance": 1e-10})
    if res.status == 2:
        return None, "infeasible"
    if res.status != 0 or res.x is None:
        return None, f"no LP vertex: {res.message}"
    return np.asarray(res.x, dtype=float), "lp-simplex"


def _starting_point(d: QPData, x_w, state, feas: _Feasibility):
    if state is None and _is_lp(d):
        # an LP without a warm working set: start at the simplex solution, whose working
        # set (the variables at a bound) is then only verified by the active-set method
        x, msg = _lp_vertex(d)
        if x is not None:
            x_r = x if feas.feasible(x) else _repair(d, x, feas)
            if x_r is not None:
                return x_r, msg
        elif msg == "infeasible":
            return None, msg
    if x_w is not None:
        if state is not None:  # snap the warm working set to the new bounds
            x_w = x_w.copy()
            lo = (state == LOWER) & np.isfinite(d.lb)
            hi = (state == UPPER) & np.isfinite(d.ub)
            x_w[lo], x_w[hi] = d.lb[lo], d.ub[hi]
        if feas.feasible(x_w):
            return x_w, "warm"
        x = _repair(d, x_w, feas)
        if x is not None:
            return x, "warm-repaired"
        x, msg = _phase1(d, x_w)
        return x, ("phase1-from-warm" if x is not None else msg)
    x_ref = np.clip(np.zeros(d.n), d.lb, d.ub)
    if feas.feasible(x_ref):
        return x_ref, "zero"
    x, msg = _phase1(d, x_ref)
    return x, ("phase1" if x is not None else msg)


# ---------------------------------------------------------------------------------------------
# cvxpy oracle
# ---------------------------------------------------------------------------------------------
_CVXPY_SOLVERS = {"CLARABEL", "OSQP", "SCS", "HIGHS", "ECOS", "MOSEK", "GUROBI", "PIQP",
                  "PROXQP", "CVXOPT"}


def psd_factor(P: np.ndarray) -> np.ndarray:
    """``L`` with ``P ~= L L'`` from the eigendecomposition (negative rounding dropped)."""
    try:
        s, V = np.linalg.eigh(P)
    except np.linalg.LinAlgError as exc:
        raise QPSolverError("eigendecomposition of P failed") from exc
    cut = 10.0 * P.shape[0] * _EPS * max(float(np.max(np.abs(s))), 0.0)
    keep = s > cut
    return V[:, keep] * np.sqrt(s[keep])


def solver_options(solver: str, tol: float) -> dict:
    if solver == "CLARABEL":
        return {"tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol, "tol_ktratio": 1e-8,
                "max_iter": 500}
    if solver == "OSQP":
        return {"eps_abs": tol, "eps_rel": tol, "polish": True, "max_iter": 200000}
    if solver == "SCS":
        return {"eps_abs": tol, "eps_rel": tol, "max_iters": 200000}
    return {}


def _cvxpy_solve(prob, solver: str, options: dict) -> tuple[str, int, str]:
    """Solve a cvxpy problem; return ``(status, n_iter, cvxpy status or error message)``."""
    import cvxpy as cp

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            prob.solve(solver=solver, **options)
    except cp.error.SolverError as exc:
        return "error", -1, str(exc)
    stats = prob.solver_stats
    n_iter = int(stats.num_iters) if stats is not None and stats.num_iters is not None else -1
    status = {cp.OPTIMAL: "optimal", cp.OPTIMAL_INACCURATE: "optimal_inaccurate",
              cp.INFEASIBLE: "infeasible", cp.INFEASIBLE_INACCURATE: "infeasible",
              cp.UNBOUNDED: "unbounded", cp.UNBOUNDED_INACCURATE: "unbounded"}.get(
                  prob.status, "error")
    return status, n_iter, str(prob.status)


@single_blas_thread
def solve_qp_cvxpy(P, q, *, G=None, h=None, A=None, b=None, lb=None, ub=None,
                   solver: str = "CLARABEL", tol: float = 1e-10) -> QPResult:
    r"""Solve the QP of :func:`solve_qp` with cvxpy: the independent reference solution.

    .. math::

        \min_x \; \tfrac12 \|L^\top x\|^2 + q^\top x
        \quad \text{s.t.} \quad G x \le h, \quad A x = b, \quad lb \le x \le ub,

    where ``P = L L'`` is factored by an eigendecomposition (eigenvalues below
    ``10 n eps max|eig|`` are dropped), so a PSD ``P`` that is slightly indefinite through
    rounding is accepted. Duals are mapped to the convention of :mod:`pathlib_core.core.kkt`.

    Parameters
    ----------
    P, q, G, h, A, b, lb, ub
        As in :func:`solve_qp`.
    solver : str
        A cvxpy solver name (``"CLARABEL"``, ``"OSQP"``, ``"SCS"``, ``"HIGHS"``, ...).
    tol : float
        Passed as the solver's gap and feasibility tolerances where the solver has them
        (CLARABEL: ``tol_gap_abs``, ``tol_gap_rel``, ``tol_feas``; OSQP / SCS: ``eps_abs``,
        ``eps_rel``). When the solver fails or reports an inaccurate solution with these, the
        solve is repeated once with the solver's default tolerances.

    Returns
    -------
    QPResult
        ``solver="cvxpy:<name>"``; ``n_iter`` from the solver statistics (``-1`` if unknown);
        ``active`` read off the solution: a bound / row of ``G`` is active when its
        multiplier exceeds ``sqrt(tol)`` or its slack is below ``1e-8 (1 + |bound|)``.
    """
    import cvxpy as cp

    d = _qp_data(P, q, G=G, h=h, A=A, b=b, lb=lb, ub=ub)
    tol = positive_scalar(tol, "tol")
    check_choice(solver, "solver", _CVXPY_SOLVERS)
    n = d.n
    x = cp.Variable(n)
    L = psd_factor(d.P) if d.P is not None else np.zeros((n, 0))
    obj = d.q @ x
    if L.shape[1]:
        obj = 0.5 * cp.sum_squares(L.T @ x) + obj
    cons, tags = [], []
    if d.G.shape[0]:
        cons.append(d.G @ x <= d.h)
        tags.append("G")
    if d.A.shape[0]:
        cons.append(d.A @ x == d.b)
        tags.append("A")
    ilb, iub = np.flatnonzero(np.isfinite(d.lb)), np.flatnonzero(np.isfinite(d.ub))
    if ilb.size:
        cons.append(x[ilb] >= d.lb[ilb])
        tags.append("lb")
    if iub.size:
        cons.append(x[iub] <= d.ub[iub])
        tags.append("ub")
    prob = cp.Problem(cp.Minimize(obj), cons)
    name = f"cvxpy:{solver}"
    status, n_iter, message = _cvxpy_solve(prob, solver, solver_options(solver, tol))
    if status in ("error", "optimal_inaccurate"):
        # retry with the solver's default tolerances (the tight ones are not always reachable)
        retry = _cvxpy_solve(prob, solver, {})
        if retry[0] != "error":
            status, n_iter, message = retry
    if status not in ("optimal", "optimal_inaccurate"):
        return _empty_result(d, status, n_iter, name, {"cvxpy_status": message})
    duals = {t: np.atleast_1d(np.asarray(c.dual_value, dtype=float))
             for t, c in zip(tags, cons, strict=True)}
    xv = np.asarray(x.value, dtype=float)
    z = duals.get("G", np.zeros(0)).copy() if d.G.shape[0] else np.zeros(0)
    nu = duals.get("A", np.zeros(0)).copy() if d.A.shape[0] else np.zeros(0)
    w_lb, w_ub = np.zeros(n), np.zeros(n)
    if ilb.size:
        w_lb[ilb] = duals["lb"]
    if iub.size:
        w_ub[iub] = duals["ub"]
    active = _active_from_solution(d, xv, z, w_lb, w_ub, tol)
    return QPResult(x=xv, nu=nu, z=z, w_lb=w_lb, w_ub=w_ub, active=active, n_iter=n_iter,
                    status=status, objective=_objective(d, xv), solver=name,
                    info={"cvxpy_status": prob.status}, _data=d)


def _active_from_solution(d: QPData, x, z, w_lb, w_ub, tol: float) -> ActiveSet:
    mt = np.sqrt(tol)
    fin_lb, fin_ub = np.isfinite(d.lb), np.isfinite(d.ub)
    lbv, ubv = np.where(fin_lb, d.lb, 0.0), np.where(fin_ub, d.ub, 0.0)
    at_lower = fin_lb & ((w_lb > mt) | (x - lbv <= 1e-8 * (1.0 + np.abs(lbv))))
    at_upper = fin_ub & ((w_ub > mt) | (ubv - x <= 1e-8 * (1.0 + np.abs(ubv))))
    ineq = (z > mt) | (d.h - d.G @ x <= 1e-8 * (1.0 + np.abs(d.h))) if d.G.shape[0] \
        else np.zeros(0, dtype=bool)
    return ActiveSet(at_lower, at_upper, ineq)


# ---------------------------------------------------------------------------------------------
# Linear programs
# ---------------------------------------------------------------------------------------------
@single_blas_thread
def solve_lp(c, *, G=None, h=None, A=None, b=None, lb=None, ub=None,
             tol: float = 1e-10) -> QPResult:
    r"""Solve a linear program with HiGHS (``scipy.optimize.linprog(method="highs")``).

    .. math::

        \min_x \; c^\top x
        \quad \text{s.t.} \quad G x \le h, \quad A x = b, \quad lb \le x \le ub.

    Bounds default to ``-inf`` / ``+inf`` (unlike ``linprog``, whose default is ``x >= 0``).
    The HiGHS marginals are mapped to the convention of :mod:`pathlib_core.core.kkt`:
    ``z = -ineqlin.marginals``, ``nu = -eqlin.marginals``, ``w_lb = lower.marginals``,
    ``w_ub = -upper.marginals``; ``result.kkt`` then evaluates :func:`kkt.lp_residuals`.

    Parameters
    ----------
    c : array_like of shape (n,)
        Cost vector.
    G, h, A, b, lb, ub
        As in :func:`solve_qp`.
    tol : float
        Used to read the active set off the solution (as in :func:`solve_qp_cvxpy`).

    Returns
    -------
    QPResult
        With ``solver="highs"`` and ``objective = c'x``.
    """
    d = _qp_data(None, c, G=G, h=h, A=A, b=b, lb=lb, ub=ub, qname="c")
    tol = positive_scalar(tol, "tol")
    mG, mA = d.G.shape[0], d.A.shape[0]
    res = _highs(d)
    status = {0: "optimal", 1: "max_iter", 2: "infeasible", 3: "unbounded"}.get(res.status,
                                                                                "error")
    n_iter = int(getattr(res, "nit", -1) or -1)
    if res.x is None:
        return _empty_result(d, status, n_iter, "highs", {"message": res.message})
    x = np.asarray(res.x, dtype=float)
    z = -np.asarray(res.ineqlin.marginals, dtype=float) if mG else np.zeros(0)
    nu = -np.asarray(res.eqlin.marginals, dtype=float) if mA else np.zeros(0)
    w_lb = np.where(np.isfinite(d.lb), np.asarray(res.lower.marginals, dtype=float), 0.0)
    w_ub = np.where(np.isfinite(d.ub), -np.asarray(res.upper.marginals, dtype=float), 0.0)
    active = _active_from_solution(d, x, z, w_lb, w_ub, tol)
    return QPResult(x=x, nu=nu, z=z, w_lb=w_lb, w_ub=w_ub, active=active, n_iter=n_iter,
                    status=status, objective=float(d.q @ x), solver="highs",
                    info={"message": res.message}, _data=d)
