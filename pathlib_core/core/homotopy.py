r"""Piecewise-linear solution paths of parametric quadratic programs.

The module holds the public :func:`parametric_qp_path` (and its point type :class:`QPPoint`)
and the engine the parts' path functions are built on: the problem (:class:`QPProblem`,
:func:`make_problem`), the tracer (:func:`trace_path`, :func:`trace_raw`,
:func:`assemble_path`, :func:`exact_point`, :func:`events_for`, :func:`engine_info`), the
kept inverse of the reduced KKT matrix (:class:`KKTInverse`) and kernel checks
(:func:`kernel_scale_pow2`, :func:`screen_psd`, :func:`conditioning_note`).

The problem family is

.. math::

    \min_x \; \tfrac12 x^\top P x + (q_0 + t q_1)^\top x
    \quad \text{s.t.} \quad A x = b_0 + t b_1, \quad
    lb_0 + t\, lb_1 \le x \le ub_0 + t\, ub_1,

with ``P`` symmetric positive semi-definite (possibly singular), ``A`` possibly with zero rows
and bounds possibly infinite. For fixed index sets -- ``F`` (free), ``L`` (at the lower bound),
``U`` (at the upper bound) -- the optimality conditions reduce to the linear system

.. math::

    \begin{bmatrix} P_{FF} & A_F^\top \\ A_F & 0 \end{bmatrix}
    \begin{bmatrix} x_F \\ \nu \end{bmatrix} =
    \begin{bmatrix} -q_F(t) - P_{FB} x_B(t) \\ b(t) - A_B x_B(t) \end{bmatrix},

whose right-hand side is affine in ``t``; so ``x(t)``, ``nu(t)`` and the bound multipliers
``w_lb = g_L``, ``w_ub = -g_U`` (``g = P x + q + A' nu``) are affine in ``t`` until an *event*:
a free variable reaches a bound (``"leave"``) or the multiplier of a bound variable crosses zero
(``"enter"``). This is the parametric active-set method of Best (1996), "An algorithm for the
solution of the parametric quadratic programming problem", and the structure behind the SVM
path of Hastie, Rosset, Tibshirani and Zhu (2004), "The entire regularization path for the
support vector machine", JMLR 5, and the Lasso homotopy of Osborne, Presnell and Turlach (2000)
and Efron, Hastie, Johnstone and Tibshirani (2004).

Sign convention: the one of :mod:`pathlib_core.core.kkt`, ``P x + q + A' nu - w_lb + w_ub = 0`` with
``w_lb, w_ub >= 0``.

How the engine handles the hard cases
-------------------------------------
*Factorization.* The inverse of the reduced KKT matrix is kept and updated by bordering when
one index enters ``F`` and by the rank-one downdate of the inverse when one leaves (``O(m^2)``
each, ``m = |F| + rank A_F``), by :func:`~pathlib_core.core.linalg.border_add` and
:func:`~pathlib_core.core.linalg.border_remove`, the bordered inverse every engine shares.
Drift control: a full re-factorization every ``refactor_every`` events (default
:data:`~pathlib_core.core.linalg.REFACTOR_EVERY`) and whenever the stationarity residual of
a freshly solved segment exceeds ``drift_tol`` (relative; default
:data:`~pathlib_core.core.linalg.DRIFT_TOL`); both are counted in ``path.info``.

*Ties.* All indices whose event falls within a relative ``1e-10`` of the first event, and every
index whose slack or multiplier is numerically zero there, form the *ambiguous set* ``S``. The new
index sets are the solution of the local problem "which states of ``S`` give a segment of
positive length": candidate states are tried in order of the number of deviations from the
natural transition (blocking free variables go to their bound, blocking bound variables become
free, the others stay) and the first one whose new segment satisfies every KKT sign condition
to first order (values and slopes in the tracing direction) is taken. This is an exact solve of
the linear complementarity problem of the directional derivative (the critical-cone QP of
sensitivity analysis), by enumeration; at most ``2**max_tie`` candidates are tried, beyond
that a :class:`HomotopyError` is raised.

*Singular systems.* A candidate set whose KKT matrix is singular (duplicate points,
semi-definite kernels with ``|F|`` beyond the rank) is rejected in favour of another candidate:
an index whose column is dependent stays at its bound with a multiplier that is identically
zero (Hastie et al. 2004, sec. 6), which keeps the solution (one of the many optimal ones)
unique and the system non-singular. When a bound index must be freed (its multiplier changes
sign) and its column is dependent, the optimal points at the event form a line (the null
vector of the KKT matrix); the engine moves along it until another free variable reaches a
bound, and that variable takes the freed one's place (a degenerate pivot). At the start, a
singular free set is reduced by moving the point along the null-space direction of the KKT
matrix (an optimal face direction, along which the objective is constant) until a variable
reaches a bound.

*Non-convex problems.* A negative Schur complement when an index is bordered in, or a
negative diagonal entry of a rebuilt inverse's variable block, is negative curvature; so is
a path that fails. Either triggers one eigenvalue check of ``P`` (``QPProblem.psd_check``),
which raises ``ValueError`` naming the matrix when it is not positive semi-definite.

*Undetermined equality multipliers.* When ``A_F`` has fewer independent rows than ``A``
(for the SVM: the elbow is empty) the multiplier ``nu = nu_p + Z z`` is not determined by the
linear system but by the sign conditions on the bound multipliers, which confine ``(t, z)`` to a
convex polyhedron. The engine follows it: the segment ends where the polyhedron's section
shrinks to a point (then an index enters), and ``z`` is the midpoint of the feasible interval
at every breakpoint that is not such a point, linearly interpolated in between -- feasible by
convexity, and continuous across events. Only one undetermined direction (``dim Z = 1``, the
SVM case) is supported; more raise :class:`HomotopyError`.

*Cycling.* Index sets tried at the same parameter are remembered; a set is never accepted twice
at the same ``t``, so the tie resolution cannot cycle. More than ``max_zero_steps`` consecutive
events at the same parameter raise :class:`HomotopyError`.
"""

from __future__ import annotations

import dataclasses
import itertools
import time
from dataclasses import dataclass, field

import numpy as np

from .exceptions import HomotopyError
from .kkt import QPData, qp_data_residuals
from .linalg import DRIFT_TOL, REFACTOR_EVERY, border_add, border_remove, psd_screen
from .solution_path import Event, SolutionPath
from .states import FIXED, FREE, LOWER, STATE_NAMES, UPPER
from .threads import single_blas_thread
from .validation import (
    as_matrix,
    as_vector,
    check_psd,
    finite_scalar,
    positive_int,
    positive_scalar,
)

__all__ = [
    "HomotopyError", "QPPoint", "parametric_qp_path", "FREE", "LOWER", "UPPER", "FIXED",
    "QPProblem", "KKTInverse", "STATE_NAMES", "make_problem", "trace_path", "trace_raw",
    "assemble_path", "exact_point", "events_for", "engine_info", "kernel_scale_pow2",
    "screen_psd", "conditioning_note",
]



@dataclass(frozen=True)
class QPPoint:
    """Solution of the parametric QP at one parameter value.

    Attributes
    ----------
    x : ndarray of shape (n,)
        Primal solution.
    nu : ndarray of shape (m,)
        Multipliers of ``A x = b(t)``.
    w_lb, w_ub : ndarray of shape (n,)
        Multipliers of the lower and upper bounds (non-negative).
    state : ndarray of int8, shape (n,)
        Index set of each variable on the segment above this breakpoint (toward larger ``t``;
        the last breakpoint keeps its own): ``0`` free, ``1`` at the lower bound, ``2`` at the
        upper bound, ``3`` fixed (``lb == ub`` identically). Inside a segment, the sets of
        that segment.
    """

    x: np.ndarray
    nu: np.ndarray
    w_lb: np.ndarray
    w_ub: np.ndarray
    state: np.ndarray = field(repr=False)


# ---------------------------------------------------------------------------------------------
# Problem data
# ---------------------------------------------------------------------------------------------
@dataclass
class QPProblem:
    P: np.ndarray
    q0: np.ndarray
    q1: np.ndarray
    A: np.ndarray
    b0: np.ndarray
    b1: np.ndarray
    lb0: np.ndarray
    lb1: np.ndarray
    ub0: np.ndarray
    ub1: np.ndarray

    def __post_init__(self):
        # positive semi-definiteness of P is not checked up front (an eigendecomposition);
        # the factorizations call ``negative_curvature`` when they meet it, which runs
        # ``psd_check`` once (it raises ValueError naming the matrix when P is not PSD)
        self.psd_check = lambda: check_psd(self.P, "P")
        self.psd_verified = False
        self.n = self.q0.shape[0]
        self.m = self.A.shape[0]
        self.fin_lb = np.isfinite(self.lb0)
        self.fin_ub = np.isfinite(self.ub0)
        self.fixed = self.fin_lb & self.fin_ub & (self.lb0 == self.ub0) & (self.lb1 == self.ub1)
        self.p_scale = max(float(np.max(np.abs(self.P))) if self.P.size else 0.0, 1e-300)
        # equality rows are scaled to the size of P so that the KKT matrix is well balanced;
        # the engine works with A_s = diag(s) A, b_s = diag(s) b and nu_s = nu / s
        self.A_orig, self.b0_orig, self.b1_orig = self.A, self.b0, self.b1
        if self.m:
            rs = np.max(np.abs(self.A), axis=1)
            self.eq_scale = np.where(rs > 0, self.p_scale / np.where(rs > 0, rs, 1.0), 1.0)
        else:
            self.eq_scale = np.ones(0)
        self.A = self.A * self.eq_scale[:, None]
        self.b0 = self.b0 * self.eq_scale
        self.b1 = self.b1 * self.eq_scale

    def negative_curvature(self) -> None:
        """A factorization met negative curvature: raise ValueError if ``P`` is not PSD.

        Runs the (eigenvalue) check of :attr:`psd_check` once per problem; when it passes,
        the negative curvature was rounding in a near-singular system, and the caller treats
        the system as singular.
        """
        if not self.psd_verified:
            self.psd_check()
            self.psd_verified = True

    def diagnose(self, exc: Exception) -> None:
        """After a failure of the path: raise ValueError (from ``exc``) if ``P`` is not PSD.

        A non-convex problem shows up as an unbounded direction, negative curvature or a
        transition that no index set satisfies; the eigenvalue check names that cause.
        """
        try:
            self.negative_curvature()
        except ValueError as err:
            raise err from exc

    def q(self, t):
        return self.q0 + t * self.q1

    def b(self, t):
        return self.b0 + t * self.b1

    def lb(self, t):
        return np.where(self.fin_lb, self.lb0 + t * self.lb1, -np.inf)

    def ub(self, t):
        return np.where(self.fin_ub, self.ub0 + t * self.ub1, np.inf)

    def qp_data(self, t) -> QPData:
        return QPData(self.P, self.q(t), np.zeros((0, self.n)), np.zeros(0), self.A_orig,
                       self.b0_orig + t * self.b1_orig, self.lb(t), self.ub(t))


def _point_residual(prob: QPProblem, t: float, rec: QPPoint) -> float:
    """Largest relative KKT residual (scaling of :func:`pathlib_core.core.kkt.qp_residuals`)."""
    with np.errstate(over="ignore"):  # the absolute products (unused) may overflow
        res = qp_data_residuals(prob.qp_data(t), rec.x, np.zeros(0), rec.nu, rec.w_lb, rec.w_ub,
                                True)
    return res.max


# ---------------------------------------------------------------------------------------------
# Inverse of the reduced KKT matrix with bordering updates
# ---------------------------------------------------------------------------------------------
class KKTInverse:
    """Inverse of ``[[P_FF, A_RF'], [A_RF, 0]]`` for the free set ``F`` and equality rows ``R``.

    ``keys`` orders the rows of the matrix: ``k >= 0`` is variable ``k``, ``k < 0`` is equality
    row ``-k - 1``. Updates return new objects (the old one stays valid for backtracking).
    """

    sing_tol = 1e-12

    def __init__(self, prob: QPProblem, keys: np.ndarray, Minv: np.ndarray):
        self.prob, self.keys, self.Minv = prob, keys, Minv

    @property
    def F(self) -> np.ndarray:
        return self.keys[self.keys >= 0]

    @property
    def R(self) -> np.ndarray:
        return -self.keys[self.keys < 0] - 1

    @classmethod
    def build(cls, prob: QPProblem, F, R) -> KKTInverse | None:
        keys = np.concatenate([np.asarray(F, dtype=np.int64),
                               -np.asarray(R, dtype=np.int64) - 1])
        M = cls.matrix(prob, keys)
        if M.shape[0] == 0:
            return cls(prob, keys, np.zeros((0, 0)))
        try:
            Minv = np.linalg.inv(M)
        except np.linalg.LinAlgError:
            return None
        if not np.all(np.isfinite(Minv)):
            return None
        # condition estimate in the infinity norm; reject numerically singular systems
        nrm = max(float(np.max(np.abs(M).sum(axis=1))), 1e-300)
        inrm = float(np.max(np.abs(Minv).sum(axis=1)))
        if nrm * inrm * 1e-14 > 1.0:
            return None
        # the variable block of the inverse is Z (Z' P_FF Z)^-1 Z' (Z: null space of the
        # equality rows), positive semi-definite when P is: a negative diagonal entry beyond
        # rounding is negative curvature
        dv = np.diagonal(Minv)[keys >= 0]
        if dv.size and float(np.min(dv)) < -1e-10 * float(np.max(np.abs(Minv))):
            prob.negative_curvature()
        return cls(prob, keys, Minv)

    @staticmethod
    def matrix(prob: QPProblem, keys: np.ndarray) -> np.ndarray:
        isv = keys >= 0
        v, r = keys[isv], -keys[~isv] - 1
        f = v.size
        M = np.zeros((keys.size, keys.size))
        idx_v = np.flatnonzero(isv)
        idx_r = np.flatnonzero(~isv)
        M[np.ix_(idx_v, idx_v)] = prob.P[np.ix_(v, v)]
        if r.size:
            AR = prob.A[np.ix_(r, v)] if f else np.zeros((r.size, 0))
            M[np.ix_(idx_r, idx_v)] = AR
            M[np.ix_(idx_v, idx_r)] = AR.T
        return M

    def _column(self, key: int) -> tuple[np.ndarray, float]:
        keys, prob = self.keys, self.prob
        isv = keys >= 0
        c = np.empty(keys.size)
        if key >= 0:
            c[isv] = prob.P[keys[isv], key]
            c[~isv] = prob.A[-keys[~isv] - 1, key]
            return c, float(prob.P[key, key])
        r = -key - 1
        c[isv] = prob.A[r, keys[isv]]
        c[~isv] = 0.0
        return c, 0.0

    def add(self, key: int) -> KKTInverse | None:
        """Border the inverse by ``key`` (:func:`~pathlib_core.core.linalg.border_add`).

        ``None`` when the Schur complement ``s`` vanishes relative to
        ``max(|d|, |c' M^{-1} c|, p_scale)`` (a dependent index); a negative ``s`` beyond that
        is negative curvature and triggers the problem's PSD check first.
        """
        c, d = self._column(key)
        # rtol = 0: border_add refuses only s <= 0; the relative test is made here
        new, s = border_add(self.Minv, c, d, 0.0)
        ref = max(abs(d), abs(d - s), self.prob.p_scale)
        if np.isfinite(s) and s < -self.sing_tol * ref:
            # a second negative eigenvalue of the bordered matrix: negative curvature
            self.prob.negative_curvature()
            return None
        if not np.isfinite(s) or abs(s) <= self.sing_tol * ref:
            return None
        return KKTInverse(self.prob, np.append(self.keys, key), new)

    def remove(self, key: int) -> KKTInverse | None:
        """Downdate the inverse without ``key``
        (:func:`~pathlib_core.core.linalg.border_remove`; the last key takes its place).

        ``None`` when the pivot is at most ``sing_tol`` times the largest entry.
        """
        pos = np.flatnonzero(self.keys == key)
        if pos.size != 1:
            raise HomotopyError(f"internal error: key {key} not in the factorization")
        k = int(pos[0])
        e = self.Minv[k, k]
        ref = max(float(np.max(np.abs(self.Minv))), 1e-300)
        if not np.isfinite(e) or abs(e) <= self.sing_tol * ref:
            return None
        keys = self.keys.copy()
        keys[k] = keys[-1]
        return KKTInverse(self.prob, keys[:-1], border_remove(self.Minv, k))


# ---------------------------------------------------------------------------------------------
# Segment: the affine solution for fixed index sets
# ---------------------------------------------------------------------------------------------
@dataclass
class _Segment:
    t: float
    state: np.ndarray
    fac: KKTInverse
    Z: np.ndarray  # (m, k) orthonormal basis of the undetermined multiplier directions
    x: np.ndarray
    dx: np.ndarray
    nu: np.ndarray  # particular multiplier (z = 0)
    dnu: np.ndarray
    g: np.ndarray  # gradient P x + q + A' nu_p at t
    dg: np.ndarray
    AZ: np.ndarray  # (n, k) = A' Z
    drift: float
    eq_ok: bool


class _Engine:
    def __init__(self, prob: QPProblem, *, direction: int, refactor_every: int, drift_tol: float,
                 tie_tol: float, zero_tol: float, max_tie: int, max_zero_steps: int):
        self.prob = prob
        self.dir = direction
        self.refactor_every = refactor_every
        self.drift_tol = drift_tol
        self.tie_tol = tie_tol
        self.zero_tol = zero_tol
        self.max_tie = max_tie
        self.max_zero_steps = max_zero_steps
        self.value_tol = 1e-8
        self.t_scale = 0.0  # max(|t_start|, |t_end|), set by trace_path
        self.stuck_tol = 1e-9
        # statistics reported in path.info
        self.n_refactor = self.n_updates = self.since_refactor = 0
        self.n_tie_events = self.n_candidates = self.max_ambiguous = 0
        self.max_drift = 0.0

    # ---- index sets ------------------------------------------------------------------
    def _rows_for(self, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Independent equality rows ``R`` of ``A_F`` and a basis ``Z`` of null(A_F')."""
        prob = self.prob
        m = prob.m
        if m == 0:
            return np.zeros(0, dtype=np.int64), np.zeros((0, 0))
        AF = prob.A[:, F]
        if F.size == 0:
            return np.zeros(0, dtype=np.int64), np.eye(m)
        scale = max(float(np.max(np.abs(prob.A))), 1e-300)
        if m == 1:
            if float(np.max(np.abs(AF))) > 1e-12 * scale:
                return np.zeros(1, dtype=np.int64), np.zeros((1, 0))
            return np.zeros(0, dtype=np.int64), np.ones((1, 1))
        U, s, _ = np.linalg.svd(AF, full_matrices=True)
        rank = int(np.sum(s > 1e-12 * scale * max(AF.shape)))
        if rank == m:
            return np.arange(m, dtype=np.int64), np.zeros((m, 0))
        # rows: greedy selection of independent rows (pivoted QR of A_F')
        from scipy.linalg import qr

        _, _, piv = qr(AF.T, mode="economic", pivoting=True)
        R = np.sort(piv[:rank]).astype(np.int64)
        return R, U[:, rank:]

    def factor_for(self, state: np.ndarray, base: KKTInverse | None,
                   changes) -> KKTInverse | None:
        """Factorization for ``state``; bordered updates from ``base`` when the rows agree."""
        F = np.flatnonzero(state == FREE)
        R, _ = self._rows_for(F)
        if base is not None and np.array_equal(np.sort(base.R), R) and \
                self.since_refactor < self.refactor_every:
            fac = base
            adds = [i for i in changes if state[i] == FREE]
            rems = [i for i in changes if state[i] != FREE and i in set(base.F.tolist())]
            for i in adds + rems:  # entering indices first, then the leaving ones
                fac = fac.add(int(i)) if state[i] == FREE else fac.remove(int(i))
                if fac is None:
                    break
            else:
                self.n_updates += len(adds) + len(rems)
                return fac
        self.n_refactor += 1
        self.since_refactor = 0
        return KKTInverse.build(self.prob, F, R)

    # ---- solve one segment --------------------------------------------------------------
    def solve(self, t: float, state: np.ndarray, fac: KKTInverse) -> _Segment:
        prob = self.prob
        n, m = prob.n, prob.m
        keys = fac.keys
        isv = keys >= 0
        F = keys[isv]
        R = -keys[~isv] - 1
        x = np.zeros(n)
        dx = np.zeros(n)
        lo = state == LOWER
        up = state == UPPER
        fx = state == FIXED
        lo = lo | fx
        x[lo] = prob.lb0[lo] + t * prob.lb1[lo]
        dx[lo] = prob.lb1[lo]
        x[up] = prob.ub0[up] + t * prob.ub1[up]
        dx[up] = prob.ub1[up]
        B = np.flatnonzero(state != FREE)
        nu = np.zeros(m)
        dnu = np.zeros(m)
        if keys.size:
            rhs = np.empty((keys.size, 2))
            PFB = prob.P[np.ix_(F, B)]
            XB = np.stack([x[B], dx[B]], axis=1)
            rhs[isv] = -np.stack([prob.q(t)[F], prob.q1[F]], axis=1) - PFB @ XB
            if R.size:
                rhs[~isv] = np.stack([prob.b(t)[R], prob.b1[R]], axis=1) - \
                    prob.A[np.ix_(R, B)] @ XB
            sol = fac.Minv @ rhs
            # iterative refinement: the inverse is kept up to date by rank-one updates, so
            # M @ sol - rhs can be ~cond(M) eps |rhs|; each correction with the same inverse
            # multiplies the residual by about ||I - M Minv|| (an ill-conditioned free set would
            # otherwise carry its start error along a long segment). Up to three steps, while
            # the residual (relative to |M| |sol| + |rhs|, per row) keeps falling by 4x.
            M = KKTInverse.matrix(prob, keys)
            scale = np.abs(M) @ np.abs(sol) + np.abs(rhs)
            scale[scale == 0] = 1.0
            res = rhs - M @ sol
            prev = np.inf
            for _ in range(3):
                err = float(np.max(np.abs(res) / scale))
                if err <= 4 * np.finfo(float).eps or err > 0.25 * prev:
                    break
                sol += fac.Minv @ res
                prev = err
                res = rhs - M @ sol
            x[F] = sol[isv, 0]
            dx[F] = sol[isv, 1]
            nu[R] = sol[~isv, 0]
            dnu[R] = sol[~isv, 1]
        G2 = prob.P @ np.stack([x, dx], axis=1)
        g = G2[:, 0] + prob.q(t)
        dg = G2[:, 1] + prob.q1
        if m:
            g += prob.A.T @ nu
            dg += prob.A.T @ dnu
        _, Z = self._rows_for(F)
        AZ = prob.A.T @ Z if Z.size else np.zeros((n, 0))
        # drift: stationarity on F and the equality constraints
        gs = max(float(np.max(np.abs(G2[:, 0]))), float(np.max(np.abs(prob.q(t)))), 1e-300)
        drift = float(np.max(np.abs(g[F]))) / gs if F.size else 0.0
        eq_ok = True
        if m:
            r0 = prob.A @ x - prob.b(t)
            r1 = prob.A @ dx - prob.b1
            xs = max(float(np.max(np.abs(x))), 1e-300) * max(float(np.max(np.abs(prob.A))), 1.0)
            dxs = max(float(np.max(np.abs(dx))), 1e-300) * max(float(np.max(np.abs(prob.A))), 1.0)
            eq_ok = bool(np.max(np.abs(r0)) <= 1e-8 * xs + 1e-300 and
                         np.max(np.abs(r1)) <= 1e-8 * dxs + 1e-300)
            if R.size:
                drift = max(drift, float(np.max(np.abs(r0[R]))) / xs)
        return _Segment(t, state, fac, Z, x, dx, nu, dnu, g, dg, AZ, drift, eq_ok)

    def solve_checked(self, t, state, fac, changes=()) -> _Segment | None:
        seg = self.solve(t, state, fac)
        if seg.drift > self.drift_tol:
            F = np.flatnonzero(state == FREE)
            R, _ = self._rows_for(F)
            fac2 = KKTInverse.build(self.prob, F, R)
            self.n_refactor += 1
            self.since_refactor = 0
            if fac2 is None:
                return None
            seg = self.solve(t, state, fac2)
        self.max_drift = max(self.max_drift, seg.drift)
        return seg

    # ---- values, slopes and the polyhedron of undetermined multipliers ---------------------
    def slacks(self, seg: _Segment):
        """Slack values and slopes per unit of |t - t_seg| (in the tracing direction).

        Returns (v, rate, kind, a) where rows are constraints: free variable vs lower bound,
        free vs upper, multiplier of lower, multiplier of upper; ``a`` holds the coefficients
        of ``z`` (zero for primal slacks).
        """
        prob, st = self.prob, seg.state
        t, d = seg.t, self.dir
        fr = st == FREE
        lo_i = np.flatnonzero(fr & prob.fin_lb)
        up_i = np.flatnonzero(fr & prob.fin_ub)
        L = np.flatnonzero(st == LOWER)
        U = np.flatnonzero(st == UPPER)
        v = np.concatenate([
            seg.x[lo_i] - (prob.lb0[lo_i] + t * prob.lb1[lo_i]),
            (prob.ub0[up_i] + t * prob.ub1[up_i]) - seg.x[up_i],
            seg.g[L], -seg.g[U]])
        rate = d * np.concatenate([seg.dx[lo_i] - prob.lb1[lo_i], prob.ub1[up_i] - seg.dx[up_i],
                                   seg.dg[L], -seg.dg[U]])
        idx = np.concatenate([lo_i, up_i, L, U])
        kind = np.concatenate([np.full(lo_i.size, 0), np.full(up_i.size, 1),
                               np.full(L.size, 2), np.full(U.size, 3)])
        k = seg.Z.shape[1]
        a = np.zeros((idx.size, k))
        if k:
            nL, nU = L.size, U.size
            off = lo_i.size + up_i.size
            a[off:off + nL] = seg.AZ[L]
            a[off + nL:off + nL + nU] = -seg.AZ[U]
        return v, rate, idx, kind, a

    def scales(self, seg: _Segment) -> tuple[float, float, float, float]:
        prob = self.prob
        lbv, ubv = prob.lb(seg.t), prob.ub(seg.t)
        fin = np.concatenate([lbv[prob.fin_lb], ubv[prob.fin_ub]])
        xs = max(float(np.max(np.abs(seg.x))), float(np.max(np.abs(fin))) if fin.size else 0.0,
                 1e-300)
        gs = max(float(np.max(np.abs(prob.q(seg.t)))), float(np.max(np.abs(seg.g))),
                 float(np.max(np.abs(prob.A.T @ seg.nu))) if prob.m else 0.0, 1e-300)
        dxs = max(float(np.max(np.abs(seg.dx))), 1e-300)
        dgs = max(float(np.max(np.abs(seg.dg))), float(np.max(np.abs(prob.q1))), 1e-300)
        return xs, gs, dxs, dgs

    def _rate_tol(self, seg, isprim, vtol, dxs, dgs):
        """Slopes below this do not count: relative to the slopes, or too small to move a
        value by more than its zero tolerance over a parameter change of size ``|t|``."""
        tsc = max(abs(seg.t), 1e-3 * self.t_scale, 1e-300)
        # rounding level of P dx (a multiplier that is identically zero has such a slope)
        noise = 1e-13 * self.prob.p_scale * float(np.sum(np.abs(seg.dx)))
        return np.maximum(np.where(isprim, 1e-9 * dxs, max(1e-9 * dgs, noise)), vtol / tsc)

    @staticmethod
    def _interval(v, rate, a, tau):
        """Feasible interval of the scalar z at step tau (constraints v + tau rate + a z >= 0)."""
        c = v + tau * rate
        pos = a > 0
        neg = a < 0
        lo = float(np.max(-c[pos] / a[pos])) if pos.any() else -np.inf
        hi = float(np.min(c[neg] / -a[neg])) if neg.any() else np.inf
        return lo, hi

    @staticmethod
    def _center(lo, hi):
        if np.isfinite(lo) and np.isfinite(hi):
            return 0.5 * (lo + hi)
        if np.isfinite(lo):
            return lo
        if np.isfinite(hi):
            return hi
        return 0.0

    def _z_constraints(self, seg, v, rate, a, gs, dgs):
        """Split multiplier rows into those carrying z (a != 0) and the rest."""
        atol = 1e-12 * max(float(np.max(np.abs(a))) if a.size else 0.0, 1e-300)
        return np.abs(a[:, 0]) > atol

    def collapse_step(self, v, rate, a) -> float:
        """First tau at which the z-interval {z: v + tau rate + a z >= 0} becomes empty."""
        pos = a > 0
        neg = a < 0
        if not pos.any() or not neg.any():
            return np.inf
        l0, l1 = -v[pos] / a[pos], -rate[pos] / a[pos]
        u0, u1 = v[neg] / -a[neg], rate[neg] / -a[neg]
        gap0 = u0[None, :] - l0[:, None]
        gsl = u1[None, :] - l1[:, None]
        scale = max(float(np.max(np.abs(gsl))), 1e-300)
        mask = gsl < -1e-13 * scale
        if not mask.any():
            return np.inf
        taus = np.maximum(gap0[mask], 0.0) / -gsl[mask]
        return float(np.min(taus))

    # ---- validity of a segment (first-order KKT signs) -----------------------------------
    def valid(self, seg: _Segment, z_in: float | None) -> tuple[bool, float | None]:
        """Whether ``seg`` continues the path for a positive length; returns (ok, z)."""
        ok, z, _ = self.check(seg, z_in)
        return ok, z

    def _tolerated_slacks(self, seg: _Segment):
        """:meth:`slacks` with what decides an event: ``(v, rate, idx, kind, a, gs, dgs,
        vtol, rtol)``, ``gs`` / ``dgs`` the multiplier scales of :meth:`scales`, ``vtol`` the
        tolerance of each row's value (zero_tol times its scale), ``rtol`` of its rate."""
        v, rate, idx, kind, a = self.slacks(seg)
        xs, gs, dxs, dgs = self.scales(seg)
        isprim = kind < 2
        vtol = np.where(isprim, self.zero_tol * xs, self.zero_tol * gs)
        rtol = self._rate_tol(seg, isprim, vtol, dxs, dgs)
        return v, rate, idx, kind, a, gs, dgs, vtol, rtol

    def check(self, seg: _Segment, z_in: float | None, exempt=frozenset()):
        """(ok, z, violators): violators maps a variable to the state that repairs its row.

        Multiplier rows of ``exempt`` indices (dependent columns) are only checked against a
        value violation beyond ``value_tol``, not for their (rounding-level) slopes.
        """
        if not seg.eq_ok:
            return False, None, {}
        v, rate, idx, kind, a, gs, dgs, vtol, rtol = self._tolerated_slacks(seg)
        k = seg.Z.shape[1]
        z = None
        if k == 0:
            vv = v
        else:
            if k > 1:
                raise HomotopyError("more than one undetermined equality multiplier direction "
                                    "is not supported")
            zc = self._z_constraints(seg, v, rate, a, gs, dgs)
            lo, hi = self._interval(v[zc], rate[zc], a[zc, 0], 0.0)
            ztol = self.zero_tol * gs / max(float(np.max(np.abs(a))), 1e-300)
            if lo > hi + ztol:
                return False, None, {}
            if z_in is not None and lo - ztol <= z_in <= hi + ztol:
                z = z_in
            else:
                z = self._center(lo, hi)
            vv = v + a[:, 0] * z
            # the interval must not collapse immediately
            tau_c = self.collapse_step(v[zc], rate[zc], a[zc, 0])
            if tau_c <= self.tie_tol * max(abs(seg.t), 1.0) and hi - lo <= ztol:
                return False, None, {}
            # rows carrying z are governed by the interval; only check the others
            vv = np.where(zc, np.inf, vv)
        # values: a violation up to ``value_tol`` (relative) is rounding of the event time,
        # amplified by the conditioning of the KKT system; it is accepted when the slope points
        # back into the feasible region. Rows within ``stuck_tol`` of zero must not move
        # toward infeasibility (they would block at once).
        bad = vv < -vtol * (self.value_tol / self.zero_tol)
        at0 = vv <= vtol * (self.stuck_tol / self.zero_tol)
        slope_bad = at0 & (rate < -rtol)
        if exempt:
            slope_bad &= ~((kind >= 2) & np.isin(idx, list(exempt)))
        bad |= slope_bad
        if not bad.any():
            return True, z, {}
        viol: dict[int, int] = {}
        for r in np.flatnonzero(bad):
            kd = int(kind[r])
            viol[int(idx[r])] = (LOWER, UPPER, FREE, FREE)[kd]
        return False, None, viol

    # ---- step to the next event --------------------------------------------------------
    def next_event(self, seg: _Segment, z: float | None, span: float):
        """Return (tau, blocking rows, z_end, collapse) for the segment."""
        v, rate, idx, kind, a, gs, dgs, vtol, rtol = self._tolerated_slacks(seg)
        k = seg.Z.shape[1]
        zc = np.zeros(v.size, dtype=bool)
        if k:
            zc = self._z_constraints(seg, v, rate, a, gs, dgs)
        taus = np.full(v.size, np.inf)
        blk = (~zc) & (rate < -rtol)
        with np.errstate(divide="ignore", invalid="ignore"):
            taus[blk] = np.maximum(v[blk], 0.0) / -rate[blk]
        # rows stuck at zero with a slope within tolerance do not block
        taus[(~zc) & (v <= vtol) & (rate >= -rtol)] = np.inf
        tau_x = float(np.min(taus)) if taus.size else np.inf
        tau_c = np.inf
        if k:
            tau_c = self.collapse_step(v[zc], rate[zc], a[zc, 0])
        tau = min(tau_x, tau_c, span)
        return tau, v, rate, idx, kind, a, taus, zc, tau_c

    # ---- event processing ----------------------------------------------------------------
    def resolve(self, seg: _Segment, tau: float, info, seen: set, z_prev):
        """Find the index sets after the event at ``seg.t + dir * tau``.

        Returns (new segment, z at the new segment start, changed indices, old/new state).
        """
        v, rate, idx, kind, a, taus, zc, tau_c = info
        t_new = seg.t + self.dir * tau
        ttol = self.tie_tol * max(abs(t_new), tau, 1e-300)
        xs, gs, _, _ = self.scales(seg)
        k = seg.Z.shape[1]
        # values at the event in the old configuration
        v_new = v + tau * rate
        z_at = None
        if k:
            zrows = zc
            lo, hi = self._interval(v[zrows], rate[zrows], a[zrows, 0], tau)
            z_at = self._center(lo, hi) if lo <= hi else 0.5 * (lo + hi)
            v_new = v_new + a[:, 0] * z_at
        isprim = kind < 2
        vtol = np.where(isprim, self.zero_tol * xs, self.zero_tol * gs)
        blocking = taus <= tau + ttol
        if k and tau_c <= tau + ttol:
            blocking = blocking | (zc & (np.abs(v_new) <= max(1e-9 * gs, 0.0)))
        stuck = np.abs(v_new) <= vtol * (self.stuck_tol / self.zero_tol)
        amb_rows = blocking | stuck
        # natural transitions, per variable
        natural: dict[int, int] = {}
        alt: dict[int, int] = {}
        for r in np.flatnonzero(amb_rows):
            i = int(idx[r])
            kd = int(kind[r])
            if kd == 0:
                nat, other = (LOWER, FREE) if blocking[r] else (FREE, LOWER)
            elif kd == 1:
                nat, other = (UPPER, FREE) if blocking[r] else (FREE, UPPER)
            else:
                cur = LOWER if kd == 2 else UPPER
                nat, other = (FREE, cur) if blocking[r] else (cur, FREE)
            if i in natural and natural[i] != seg.state[i]:
                continue  # a blocking transition has priority
            natural[i], alt[i] = nat, other
        S = sorted(natural)
        self.max_ambiguous = max(self.max_ambiguous, len(S))
        if len(S) > 1:
            self.n_tie_events += 1
        # order: natural first, then by number of deviations
        if len(S) > self.max_tie:
            # only the blocking indices are enumerated; the others stay put
            S_enum = [i for i in S if natural[i] != seg.state[i]]
        else:
            S_enum = S
        base_state = seg.state.copy()
        for i in S:
            base_state[i] = natural[i]
        z_carry = None if z_at is None else z_at
        tried = 0

        exempt: set[int] = set()

        def attempt(st):
            """Evaluate one candidate: (result, None) if valid, else (None, repairs, singular)."""
            nonlocal tried
            key = st.tobytes()
            if key in seen:
                return None, None, False
            seen.add(key)
            tried += 1
            self.n_candidates += 1
            changes = np.flatnonzero(st != seg.state).tolist()
            fac = self.factor_for(st, seg.fac, changes)
            new = None if fac is None else self.solve_checked(t_new, st, fac)
            if new is None:
                # singular: an index that became free is dependent -> keep it at its bound
                return None, {i: int(seg.state[i]) for i in changes if st[i] == FREE}, True
            if len(changes) == 1 and new.Z.shape[1] == 0:
                refined = self._refine(seg, new, int(changes[0]), tau)
                if refined is not new:
                    ok, z, _ = self.check(refined, None, exempt)
                    if ok:
                        self.since_refactor += 1
                        return (refined, z, changes), None, False
            zi = None if z_carry is None else self._carry_z(seg, z_carry, new)
            ok, z, viol = self.check(new, zi, exempt)
            if ok:
                self.since_refactor += 1
                return (new, z, changes), None, False
            return None, viol, False

        # 1) violation-driven search from the natural transition (pivoting on the rows that
        #    the candidate violates, one at a time and all together). A bound index whose
        #    freeing makes the KKT matrix singular has a dependent column: its multiplier is
        #    identically zero on the segment, so a tiny "violation" of it is rounding and it is
        #    exempted (Hastie et al. 2004, sec. 6); the parent candidate is then re-examined.
        queue = [(base_state, None, -1)]
        budget = 4 * len(S) + 40
        while queue and tried < budget:
            st, parent, flipped = queue.pop(0)
            res, repairs, singular = attempt(st)
            if res is not None:
                return res
            if singular and len(repairs) == 1:
                # the freed index is dependent on the free set: the solutions at t_new form a
                # line; move along it (freeing the index into its box) until another free
                # variable reaches a bound, which swaps places with it (a degenerate pivot)
                swap = self._swap(seg, st, next(iter(repairs)), t_new)
                if swap is not None and swap.tobytes() not in seen:
                    queue.insert(0, (swap, None, -1))
            if singular and parent is not None and flipped >= 0 and st[flipped] == FREE \
                    and flipped not in exempt:
                exempt.add(flipped)
                seen.discard(parent.tobytes())
                queue.insert(0, (parent, None, -1))
                continue
            if singular and len(repairs) > 1:
                # several newly freed indices: keep a maximal independent subset (greedy, in
                # index order) and exempt the dependent ones
                st_g = st.copy()
                for i in repairs:
                    st_g[i] = repairs[i]
                for i in sorted(repairs):
                    trial = st_g.copy()
                    trial[i] = FREE
                    Ft = np.flatnonzero(trial == FREE)
                    if KKTInverse.build(self.prob, Ft, self._rows_for(Ft)[0]) is not None:
                        st_g = trial
                    else:
                        exempt.add(i)
                self.n_refactor += len(repairs)
                queue.insert(0, (st_g, None, -1))
                continue
            if not repairs:
                continue
            for i, to in repairs.items():
                st2 = st.copy()
                st2[i] = to
                queue.append((st2, st, i))
            if len(repairs) > 1:
                st2 = st.copy()
                for i, to in repairs.items():
                    st2[i] = to
                queue.append((st2, None, -1))
        # 2) exhaustive enumeration of the ambiguous set, by number of deviations
        if len(S_enum) <= self.max_tie:
            for r in range(len(S_enum) + 1):
                for flip in itertools.combinations(S_enum, r):
                    st = base_state.copy()
                    for i in flip:
                        st[i] = alt[i]
                    res, _, _ = attempt(st)
                    if res is not None:
                        return res
        raise HomotopyError(
            f"no consistent index sets found at t={t_new:.17g} after trying {tried} "
            f"candidate(s) for the ambiguous indices {S[:20]}; the problem may be degenerate "
            "beyond what the tie resolution handles")

    def _swap(self, seg: _Segment, st: np.ndarray, i: int, t: float) -> np.ndarray | None:
        """Index sets after freeing ``i`` when its column is dependent on the free set's.

        With ``F`` the free set including ``i``, the KKT matrix of ``F`` has a null vector
        ``(d, d_nu)``: at ``t`` the points ``x + s d`` are equally optimal. The direction is
        taken with ``x_i`` moving off its bound into the box, and ``s`` grows until another
        free variable reaches a bound (ratio test); that variable takes the bound.
        """
        prob = self.prob
        F = np.flatnonzero(st == FREE)
        R, _ = self._rows_for(F)
        keys = np.concatenate([F, -R - 1]).astype(np.int64)
        _, sv, Vt = np.linalg.svd(KKTInverse.matrix(prob, keys))
        d = Vt[-1, :F.size]
        k = int(np.flatnonzero(F == i)[0])
        if abs(d[k]) <= 1e-8 * float(np.max(np.abs(d))):
            return None
        if (seg.state[i] == LOWER) != (d[k] > 0):
            d = -d
        x = seg.x + (t - seg.t) * seg.dx
        lo, hi = prob.lb(t)[F], prob.ub(t)[F]
        with np.errstate(divide="ignore", invalid="ignore"):
            s_lo = np.where(d < 0, (x[F] - lo) / -d, np.inf)
            s_hi = np.where(d > 0, (hi - x[F]) / d, np.inf)
        s_lo[k] = s_hi[k] = np.inf
        s_lo = np.where(np.isnan(s_lo), np.inf, np.maximum(s_lo, 0.0))
        s_hi = np.where(np.isnan(s_hi), np.inf, np.maximum(s_hi, 0.0))
        j_lo, j_hi = int(np.argmin(s_lo)), int(np.argmin(s_hi))
        if not np.isfinite(min(s_lo[j_lo], s_hi[j_hi])):
            return None
        out = st.copy()
        if s_lo[j_lo] <= s_hi[j_hi]:
            out[F[j_lo]] = LOWER
        else:
            out[F[j_hi]] = UPPER
        return out

    def _refine(self, old: _Segment, new: _Segment, i: int, tau: float) -> _Segment:
        """Move a single-index breakpoint so that the new segment is exact at its start.

        The event time comes from the old segment; the new segment's value of the index that
        changed (its slack if it entered, its multiplier if it left) is then zero only up to
        rounding amplified by the conditioning of the KKT system. Shifting the breakpoint by
        the (tiny) root of that affine value makes the breakpoint solution exactly KKT.
        """
        prob, d, t = self.prob, self.dir, new.t
        st = new.state[i]
        if st == FREE:
            if old.state[i] == LOWER:
                v = new.x[i] - (prob.lb0[i] + t * prob.lb1[i])
                r = d * (new.dx[i] - prob.lb1[i])
            else:
                v = (prob.ub0[i] + t * prob.ub1[i]) - new.x[i]
                r = d * (prob.ub1[i] - new.dx[i])
        elif st == LOWER:
            v, r = new.g[i], d * new.dg[i]
        elif st == UPPER:
            v, r = -new.g[i], -d * new.dg[i]
        else:
            return new
        if v == 0.0 or r == 0.0:
            return new
        delta = -v / r
        if not (abs(delta) <= 1e-6 * max(abs(t), tau)) or delta <= -0.5 * tau:
            return new
        return self.solve(t + d * delta, new.state, new.fac)

    def _carry_z(self, seg_old: _Segment, z_old: float, seg_new: _Segment) -> float | None:
        if seg_new.Z.shape[1] == 0:
            return None
        nu_old = seg_old.nu + seg_old.dnu * (seg_new.t - seg_old.t) + seg_old.Z[:, 0] * z_old \
            if seg_old.Z.size else seg_old.nu + seg_old.dnu * (seg_new.t - seg_old.t)
        return float(seg_new.Z[:, 0] @ (nu_old - seg_new.nu))


# ---------------------------------------------------------------------------------------------
# Start: exact solution and index sets at t_start
# ---------------------------------------------------------------------------------------------
def _approximate_solution(prob: QPProblem, t: float) -> np.ndarray:
    """Approximate solution at t (pathlib_core.core.qp if available, else cvxpy/CLARABEL)."""
    lbv, ubv = prob.lb(t), prob.ub(t)
    try:
        from .qp import solve_qp

        sol = solve_qp(prob.P, prob.q(t), A=prob.A if prob.m else None,
                       b=prob.b(t) if prob.m else None, lb=lbv, ub=ubv, tol=1e-10)
        x = np.asarray(sol.x, dtype=float)
        if x.shape == (prob.n,) and np.all(np.isfinite(x)):
            return x
    except Exception:  # noqa: BLE001 - any failure falls back to cvxpy
        pass
    import cvxpy as cp

    w, V = np.linalg.eigh(prob.P)
    keep = w > 1e-12 * max(float(np.max(np.abs(w))), 1e-300)
    Lf = V[:, keep] * np.sqrt(w[keep])
    xv = cp.Variable(prob.n)
    obj = 0.5 * cp.sum_squares(Lf.T @ xv) + prob.q(t) @ xv
    cons = []
    if prob.m:
        cons.append(prob.A @ xv == prob.b(t))
    if np.isfinite(lbv).any():
        fl = np.isfinite(lbv)
        cons.append(xv[fl] >= lbv[fl])
    if np.isfinite(ubv).any():
        fu = np.isfinite(ubv)
        cons.append(xv[fu] <= ubv[fu])
    pr = cp.Problem(cp.Minimize(obj), cons)
    try:
        pr.solve(solver=cp.CLARABEL, tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    except Exception as exc:  # noqa: BLE001
        raise HomotopyError(f"could not solve the start problem at t={t}: {exc}") from exc
    if xv.value is None:
        raise HomotopyError(f"the start problem at t={t} is infeasible or unbounded "
                            f"(status {pr.status})")
    return np.asarray(xv.value, dtype=float)


def _initial_segment(eng: _Engine, t: float, x0: np.ndarray, state0: np.ndarray | None):
    """Identify exact index sets at ``t`` from an approximate solution and polish them.

    Without ``state0`` a variable within ``1e-7 xs`` of a bound starts at it, ``xs`` the
    larger of the solution's and the finite bounds' sizes; if the polishing fails from there,
    it is tried again with ``xs`` the size of the solution alone (a box far wider than the
    solution, e.g. ``[0, C]`` with ``C`` above the hard-margin SVM's multipliers, would
    otherwise call every variable bound).
    """
    if state0 is not None:
        return _polish_start(eng, t, x0, np.asarray(state0, dtype=np.int8).copy())
    prob = eng.prob
    lbv, ubv = prob.lb(t), prob.ub(t)
    x_size = float(np.max(np.abs(x0))) if x0.size else 0.0
    fin = np.concatenate([lbv[prob.fin_lb], ubv[prob.fin_ub]])
    b_size = float(np.max(np.abs(fin))) if fin.size else 0.0
    sizes = [max(x_size, b_size, 1e-300)]
    if 0.0 < x_size < b_size:
        sizes.append(x_size)
    for k, xs in enumerate(sizes):
        thr = 1e-7 * xs
        st = np.full(prob.n, FREE, dtype=np.int8)
        st[prob.fin_lb & (x0 - np.where(prob.fin_lb, lbv, 0.0) <= thr)] = LOWER
        st[prob.fin_ub & (np.where(prob.fin_ub, ubv, 0.0) - x0 <= thr)] = UPPER
        try:
            return _polish_start(eng, t, x0, st)
        except HomotopyError:
            if k == len(sizes) - 1:
                raise
    raise AssertionError("unreachable")  # pragma: no cover


def _polish_start(eng: _Engine, t: float, x0: np.ndarray, st: np.ndarray):
    """Exact index sets at ``t`` from the guess ``st`` (active-set iterations on the KKT
    system, fixing sign violations)."""
    prob = eng.prob
    lbv, ubv = prob.lb(t), prob.ub(t)
    st[prob.fixed] = FIXED
    x = np.clip(x0, lbv, ubv)
    seen = set()
    for it in range(200):
        F = np.flatnonzero(st == FREE)
        R, _ = eng._rows_for(F)
        fac = KKTInverse.build(prob, F, R)
        eng.n_refactor += 1
        if fac is None:
            st, x = _purify(eng, t, st, x)
            continue
        seg = eng.solve(t, st, fac)
        ok, z = eng.valid(_zero_slope(seg), None)
        if ok and seg.eq_ok:
            seg.t = t
            return seg, z
        # fix violations: free variables outside their bounds go to the bound; bound variables
        # with a negative multiplier are freed
        v, rate, idx, kind, a = eng.slacks(seg)
        xs2, gs, _, _ = eng.scales(seg)
        vv = v.copy()
        if seg.Z.shape[1]:
            zc = np.abs(a[:, 0]) > 0
            lo, hi = eng._interval(v[zc], rate[zc] * 0, a[zc, 0], 0.0)
            zz = eng._center(lo, hi) if lo <= hi else 0.5 * (lo + hi)
            vv = v + a[:, 0] * zz
        tol = np.where(kind < 2, eng.zero_tol * xs2, eng.zero_tol * gs)
        bad = np.flatnonzero(vv < -tol)
        if bad.size == 0 and not seg.eq_ok:
            # the bound variables violate the equality constraints: free the bound variable
            # with the smallest multiplier
            cand = np.flatnonzero(kind >= 2)
            if cand.size == 0:
                break
            bad = cand[[int(np.argmin(np.abs(vv[cand])))]]
        elif bad.size == 0:
            # only slope/zero-length issues; accept (the slope is not checked at the start)
            return seg, None if not seg.Z.shape[1] else zz
        if it >= 5:  # single pivots (least index of the most violated) against cycling
            bad = bad[[int(np.argmin(vv[bad] / tol[bad]))]]
        for r in bad:
            i = int(idx[r])
            kd = int(kind[r])
            st[i] = LOWER if kd == 0 else UPPER if kd == 1 else FREE
        key = st.tobytes()
        if key in seen and it >= 5:
            break
        seen.add(key)
    raise HomotopyError(f"could not identify exact index sets at the start t={t}; the "
                        "approximate start solution may be too inaccurate")


def _zero_slope(seg: _Segment) -> _Segment:
    """Copy of ``seg`` with slopes zeroed (only value signs are checked at the start)."""
    return _Segment(seg.t, seg.state, seg.fac, seg.Z, seg.x, np.zeros_like(seg.dx), seg.nu,
                    np.zeros_like(seg.dnu), seg.g, np.zeros_like(seg.dg), seg.AZ, seg.drift,
                    seg.eq_ok)


def _purify(eng: _Engine, t: float, st: np.ndarray, x: np.ndarray):
    """Reduce a singular free set: move along a null direction until a bound is reached."""
    prob = eng.prob
    F = np.flatnonzero(st == FREE)
    R, _ = eng._rows_for(F)
    keys = np.concatenate([F, -R - 1]).astype(np.int64)
    M = KKTInverse.matrix(prob, keys)
    _, s, Vt = np.linalg.svd(M)
    d = Vt[-1, :F.size]
    if float(np.max(np.abs(d))) <= 1e-8:
        raise HomotopyError("singular KKT system at the start that is not due to the free "
                            "variables; the equality constraints may be inconsistent")
    lbv, ubv = prob.lb(t), prob.ub(t)
    xF = x[F]
    best, which, side = np.inf, -1, FREE
    for sgn in (1.0, -1.0):
        dd = sgn * d
        with np.errstate(divide="ignore", invalid="ignore"):
            s_lo = np.where(dd < 0, (lbv[F] - xF) / dd, np.inf)
            s_up = np.where(dd > 0, (ubv[F] - xF) / dd, np.inf)
        s_lo = np.where(np.isnan(s_lo), np.inf, np.maximum(s_lo, 0.0))
        s_up = np.where(np.isnan(s_up), np.inf, np.maximum(s_up, 0.0))
        j_lo, j_up = int(np.argmin(s_lo)), int(np.argmin(s_up))
        for sv, j, sd in ((s_lo[j_lo], j_lo, LOWER), (s_up[j_up], j_up, UPPER)):
            if sv < best:
                best, which, side = float(sv), j, sd
    if not np.isfinite(best):
        raise HomotopyError("the reduced KKT system is singular along a direction without "
                            "bounds: the solution set is unbounded")
    x = x.copy()
    i = int(F[which])
    st = st.copy()
    st[i] = side
    x[i] = lbv[i] if side == LOWER else ubv[i]
    return st, x


# ---------------------------------------------------------------------------------------------
# Kernels: power-of-two normalization and a cheap PSD screen (shared by the SVM and S3VM paths)
# ---------------------------------------------------------------------------------------------
def kernel_scale_pow2(K: np.ndarray) -> float:
    """The power of two ``s`` with ``max|K| / s`` in ``(1/2, 1]`` (1 for a zero kernel)."""
    top = float(np.max(np.abs(K)))
    if top == 0.0:
        return 1.0
    m, e = np.frexp(top)  # top = m 2^e, m in [1/2, 1)
    return float(np.ldexp(1.0, int(e) - 1 if m == 0.5 else int(e)))


def screen_psd(K: np.ndarray, name: str) -> None:
    """``O(n^2)`` necessary conditions of positive semi-definiteness (non-negative diagonal,
    ``K_ij^2 <= K_ii K_jj``), to rounding; when one fails, :func:`check_psd` names the cause.
    """
    top = float(np.max(np.abs(K)))
    if top > 0.0 and not psd_screen(K, 1e-10 * top):
        check_psd(K, name)


def conditioning_note(K: np.ndarray) -> str:
    """Why a PSD kernel may defeat the path: the spread of its eigenvalues above rounding."""
    ev = np.linalg.eigvalsh(K)
    top = float(np.max(np.abs(ev)))
    floor = K.shape[0] * np.finfo(float).eps * top
    pos = ev[ev > floor]
    if top == 0.0 or pos.size < 2 or pos[-1] / pos[0] < 1e8:
        return ""
    digits = -np.log10(floor / pos[0])
    return (f" (K is ill-conditioned: its eigenvalues above the rounding level span "
            f"{np.log10(pos[-1] / pos[0]):.0f} orders of magnitude, so along those directions "
            f"the path is determined to about {max(digits, 0):.0f} significant digits; a "
            "linear kernel of features on very different scales gives this -- standardize "
            "the features)")


# ---------------------------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------------------------
def _vec_or(v, default: float, name: str, n: int, *, allow_inf: bool = False) -> np.ndarray:
    if v is None:
        return np.full(n, default)
    arr = np.asarray(v, dtype=float)
    if arr.ndim == 0:
        arr = np.full(n, float(arr))
    if arr.shape != (n,):
        raise ValueError(f"{name} must be a scalar or have shape ({n},); got shape {arr.shape}")
    if np.any(np.isnan(arr)) or (not allow_inf and not np.all(np.isfinite(arr))):
        raise ValueError(f"{name} must contain only finite values" +
                         (" (or +-inf bounds)" if allow_inf else ""))
    return arr.copy()


def make_problem(P, q0, q1, A, b0, b1, lb0, lb1, ub0, ub1) -> QPProblem:
    Pm = as_matrix(P, "P")
    n = Pm.shape[0]
    if Pm.shape != (n, n):
        raise ValueError(f"P must be square; got shape {Pm.shape}")
    scale = float(np.max(np.abs(Pm)))  # symmetry relative to P's own scale
    if float(np.max(np.abs(Pm - Pm.T))) > 1e-8 * scale:
        raise ValueError("P must be symmetric")
    Pm = 0.5 * (Pm + Pm.T)
    q0v = as_vector(q0, "q0", length=n, length_of="P")
    q1v = np.zeros(n) if q1 is None else as_vector(q1, "q1", length=n, length_of="P")
    if A is None:
        if b0 is not None or b1 is not None:
            raise ValueError("b0/b1 given without A")
        Am, b0v, b1v = np.zeros((0, n)), np.zeros(0), np.zeros(0)
    else:
        Am = np.asarray(A, dtype=float)
        if Am.ndim == 1:
            Am = Am.reshape(1, -1)
        Am = as_matrix(Am, "A") if Am.shape[0] else Am
        if Am.shape[1] != n:
            raise ValueError(f"A must have {n} columns; got shape {Am.shape}")
        m = Am.shape[0]
        b0v = np.zeros(m) if b0 is None else as_vector(np.atleast_1d(b0), "b0", length=m,
                                                       length_of="A")
        b1v = np.zeros(m) if b1 is None else as_vector(np.atleast_1d(b1), "b1", length=m,
                                                       length_of="A")
    lb0v = _vec_or(lb0, -np.inf, "lb0", n, allow_inf=True)
    ub0v = _vec_or(ub0, np.inf, "ub0", n, allow_inf=True)
    lb1v = _vec_or(lb1, 0.0, "lb1", n)
    ub1v = _vec_or(ub1, 0.0, "ub1", n)
    if np.any(lb0v == np.inf):
        raise ValueError("lb0 must be < +inf")
    if np.any(ub0v == -np.inf):
        raise ValueError("ub0 must be > -inf")
    if np.any(~np.isfinite(lb0v) & (lb1v != 0)) or np.any(~np.isfinite(ub0v) & (ub1v != 0)):
        raise ValueError("lb1/ub1 must be 0 where the bound lb0/ub0 is infinite")
    return QPProblem(Pm, q0v, q1v, Am, b0v, b1v, lb0v, lb1v, ub0v, ub1v)


@single_blas_thread
def parametric_qp_path(P, q0, q1=None, *, A=None, b0=None, b1=None, lb0=None, lb1=None,
                       ub0=None, ub1=None, t_start: float, t_end: float, x0=None,
                       param_name: str = "t", until_last_event: bool = False,
                       refactor_every: int = REFACTOR_EVERY, drift_tol: float = DRIFT_TOL,
                       tie_tol: float = 1e-10, zero_tol: float = 1e-11, max_tie: int = 12,
                       max_events: int | None = None, max_zero_steps: int = 50) -> SolutionPath:
    r"""Exact piecewise-linear solution path of a parametric convex QP.

    Traces the solution of

    .. math::

        \min_x \; \tfrac12 x^\top P x + (q_0 + t q_1)^\top x
        \quad \text{s.t.} \quad A x = b_0 + t b_1, \quad
        lb_0 + t\, lb_1 \le x \le ub_0 + t\, ub_1

    from ``t_start`` to ``t_end`` (either direction) with the parametric active-set method of
    Best (1996); see the module docstring for ties, singular systems, undetermined equality
    multipliers and cycling.

    Parameters
    ----------
    P : array_like of shape (n, n)
        Symmetric positive semi-definite Hessian.
    q0, q1 : array_like of shape (n,)
        Linear term ``q(t) = q0 + t q1`` (``q1=None``: zero).
    A : array_like of shape (m, n), optional
        Equality constraint matrix (``m`` may be 0).
    b0, b1 : array_like of shape (m,), optional
        ``b(t) = b0 + t b1`` (default zero).
    lb0, lb1, ub0, ub1 : float or array_like of shape (n,), optional
        Bounds ``lb(t) = lb0 + t lb1``, ``ub(t) = ub0 + t ub1``; ``-inf`` / ``+inf`` entries
        of ``lb0`` / ``ub0`` mean no bound (their slope must be 0).
    t_start, t_end : float
        Start and end of the path; the path is traced from ``t_start``.
    x0 : array_like of shape (n,), optional
        A solution (exact or approximate) at ``t_start``; the index sets are identified from
        it and the solution is re-solved exactly. Default: solved with
        :func:`pathlib_core.core.qp.solve_qp` when available, else cvxpy (CLARABEL).
    param_name : str
        Name of the parameter in the returned path.
    until_last_event : bool
        Stop at the last event before ``t_end`` instead of at ``t_end`` (used to end a path
        "where the algorithm naturally starts").
    refactor_every : int
        Full re-factorization of the KKT matrix after this many updates.
    drift_tol : float
        Relative stationarity residual of a segment that triggers a re-factorization.
    tie_tol : float
        Relative distance in ``t`` within which events count as simultaneous.
    zero_tol : float
        Relative size below which a slack or multiplier counts as zero.
    max_tie : int
        Largest number of simultaneous ambiguous indices resolved by enumeration.
    max_events : int, optional
        Stop with :class:`HomotopyError` after this many events (default ``50 n + 100``).
    max_zero_steps : int
        Largest number of consecutive events at the same parameter.

    Returns
    -------
    Path
        ``param_name`` path of :class:`QPPoint` records, affine between breakpoints, with events
        ``"enter"`` (an index becomes free; ``info = {"from": "lower"|"upper", "to": "free"}``)
        and ``"leave"`` (a free index reaches a bound; ``info = {"from": "free", "to":
        "lower"|"upper"}``). ``kkt_residuals()`` are the relative residuals of
        :func:`pathlib_core.core.kkt.qp_residuals`. ``info`` holds ``n_events``,
        ``n_refactorizations``, ``n_updates``, ``max_drift``, ``n_tie_events``,
        ``max_ambiguous``, ``time``.

    Raises
    ------
    ValueError
        Invalid input; or ``P`` is not positive semi-definite (found when a factorization
        meets negative curvature or the path fails; the message gives its smallest
        eigenvalue).
    HomotopyError
        The start cannot be identified, or a degenerate event cannot be resolved (with a
        ``P`` that is positive semi-definite).
    """
    prob = make_problem(P, q0, q1, A, b0, b1, lb0, lb1, ub0, ub1)
    t_start = finite_scalar(t_start, "t_start")
    t_end = finite_scalar(t_end, "t_end")
    lbs, ubs = prob.lb(t_start), prob.ub(t_start)
    if np.any(lbs > ubs):
        raise ValueError("the bounds are inconsistent at t_start (lb > ub)")
    x0v = None if x0 is None else as_vector(x0, "x0", length=prob.n, length_of="P")
    refactor_every = positive_int(refactor_every, "refactor_every")
    kw = dict(drift_tol=positive_scalar(drift_tol, "drift_tol"),
              tie_tol=positive_scalar(tie_tol, "tie_tol"),
              zero_tol=positive_scalar(zero_tol, "zero_tol"), max_tie=int(max_tie),
              max_events=max_events, max_zero_steps=int(max_zero_steps))
    try:
        return trace_path(prob, t_start, t_end, x0=x0v, param_name=param_name,
                      until_last_event=until_last_event, refactor_every=refactor_every, **kw)
    except HomotopyError as exc:
        prob.diagnose(exc)  # a P that is not PSD is named as the cause
        raise


def trace_path(prob: QPProblem, t_start: float, t_end: float, *, x0=None, state0=None,
           param_name="t", until_last_event=False, refactor_every=REFACTOR_EVERY,
           drift_tol=DRIFT_TOL, tie_tol=1e-10, zero_tol=1e-11, max_tie=12, max_events=None,
           max_zero_steps=50, residual=None, record=None, stop=None) -> SolutionPath:
    """Trace the path (trusted inputs). Returns a :class:`SolutionPath` of ``record(point, t)``.

    ``stop(point, t) -> bool``, if given, is called at every new breakpoint; tracing ends
    there (the path's last breakpoint) when it returns True.
    """
    t0 = time.perf_counter()
    params, points, events, eng, n_events = trace_raw(
        prob, t_start, t_end, x0=x0, state0=state0, until_last_event=until_last_event,
        refactor_every=refactor_every, drift_tol=drift_tol, tie_tol=tie_tol, zero_tol=zero_tol,
        max_tie=max_tie, max_events=max_events, max_zero_steps=max_zero_steps, stop=stop)
    info = engine_info(eng, n_events, len(params), t0)
    return assemble_path(prob, param_name, params, points, events, eng.dir, info, residual, record)


def engine_info(eng: _Engine, n_events: int, n_breakpoints: int, t0: float) -> dict:
    return {
        "n_events": n_events,
        "n_breakpoints": n_breakpoints,
        "n_refactorizations": eng.n_refactor,
        "n_updates": eng.n_updates,
        "max_drift": eng.max_drift,
        "n_tie_events": eng.n_tie_events,
        "max_ambiguous": eng.max_ambiguous,
        "n_candidates": eng.n_candidates,
        "time": time.perf_counter() - t0,
    }


def assemble_path(prob: QPProblem, param_name, params, points, events, direction, info, residual,
              record) -> SolutionPath:
    """Build the :class:`SolutionPath` from breakpoints listed in the order they were traced."""
    if len(params) > 1 and direction < 0:
        params = params[::-1]
        points = points[::-1]
        # each record carries the index sets of the segment above it (what a LinearSegment
        # keeps for the non-float fields inside the segment); the top one keeps its own
        points = [dataclasses.replace(points[k], state=points[k + 1].state)
                  for k in range(len(points) - 1)] + [points[-1]]
    if record is None:
        recs = points
        res = (lambda t, r: _point_residual(prob, t, r)) if residual is None else residual
    else:
        recs = [record(p, t) for p, t in zip(points, params, strict=True)]
        res = residual
    return SolutionPath.piecewise_linear(param_name, params, recs, events, residual=res,
                                 direction=direction, info=info)


def trace_raw(prob: QPProblem, t_start: float, t_end: float, *, x0=None, state0=None,
               until_last_event=False, refactor_every=REFACTOR_EVERY, drift_tol=DRIFT_TOL,
               tie_tol=1e-10, zero_tol=1e-11, max_tie=12, max_events=None, max_zero_steps=50,
               stop_after=None, stop=None):
    """Trace from ``t_start`` toward ``t_end``; breakpoints in tracing order.

    Returns ``(params, points, events, engine, n_events)``. ``stop_after``: stop once that
    many breakpoints beyond the start are recorded (``0``: only the exact start; ``1``: up to
    the next event of positive length, zero-length events included). Fast clients (the lean
    SVM loop) use it to hand one degenerate event to the engine and then resume. ``stop``:
    see :func:`trace_path`.
    """
    direction = 1 if t_end >= t_start else -1
    eng = _Engine(prob, direction=direction, refactor_every=refactor_every, drift_tol=drift_tol,
                  tie_tol=tie_tol, zero_tol=zero_tol, max_tie=max_tie,
                  max_zero_steps=max_zero_steps)
    eng.t_scale = max(abs(t_start), abs(t_end))
    if x0 is None:
        x0 = _approximate_solution(prob, t_start)
        seg, z = _initial_segment(eng, t_start, x0, state0)
    else:
        try:
            seg, z = _initial_segment(eng, t_start, x0, state0)
        except HomotopyError:
            # the given start was not accurate enough: use an interior-point solve instead
            seg, z = _initial_segment(eng, t_start, _approximate_solution(prob, t_start), None)
    # check the start in the direction of tracing (fix slopes if needed by a zero-length event)
    params = [t_start]
    points = [_point(prob, seg, z, t_start)]
    events: list[Event] = []
    max_ev = max_events if max_events is not None else 50 * prob.n + 100
    n_events = 0
    zero_steps = 0
    seen: set = set()
    t_last_event = None
    # a start whose slopes point out of feasibility shows up as an event at tau = 0
    while True:
        if stop_after is not None and len(params) > stop_after:
            break
        span = abs(t_end - seg.t)
        if span <= 0:
            break
        tau, v, rate, idx, kind, a, taus, zc, tau_c = eng.next_event(seg, z, span)
        ttol = tie_tol * max(abs(seg.t), 1e-300)
        if tau >= span - ttol:
            # no event before t_end
            if until_last_event and t_last_event is not None:
                break
            if until_last_event and t_last_event is None:
                break
            t_new = t_end
            z_end = None
            if seg.Z.shape[1]:
                zc2 = zc
                lo, hi = eng._interval(v[zc2], rate[zc2], a[zc2, 0], span)
                z_end = eng._center(lo, hi)
            # interpolate z linearly: record at t_end with the new z. The end point is solved
            # at t_end itself (not extrapolated from the segment's start: over a long last
            # segment, e.g. up to a very large parameter, rounding in the slopes would be
            # multiplied by its length)
            end_seg = _advance(seg, span, eng.dir)
            if not seg.Z.shape[1]:
                end_seg = eng.solve(t_new, seg.state, seg.fac)
            params.append(t_new)
            points.append(_point(prob, end_seg, z_end, t_new))
            break
        n_events += 1
        if n_events > max_ev:
            raise HomotopyError(f"more than max_events={max_ev} events; stopping")
        if tau <= ttol:
            zero_steps += 1
            if zero_steps > max_zero_steps:
                raise HomotopyError(f"cycling: {zero_steps} consecutive events at "
                                    f"t={seg.t:.17g}")
        else:
            zero_steps = 0
            seen = set()
        seen.add(seg.state.tobytes())
        old_state = seg.state.copy()
        new, z, changes = eng.resolve(seg, tau, (v, rate, idx, kind, a, taus, zc, tau_c), seen,
                                      z)
        t_new = new.t
        if tau > ttol:
            params.append(t_new)
            points.append(_point(prob, new, z, t_new))
        else:
            # a zero-length event: the new sets start at the recorded breakpoint (the new
            # segment's refined start may differ from it by rounding; evaluate it there)
            points[-1] = _point(prob, new, z, params[-1])
        events.extend(events_for(t_new, old_state, new.state, changes))
        t_last_event = t_new
        seg = new
        if stop is not None and stop(points[-1], t_new):
            break
    return params, points, events, eng, n_events


def exact_point(prob: QPProblem, t: float, state: np.ndarray) -> QPPoint | None:
    """The solution at ``t`` for the index sets ``state``, from a fresh factorization and the
    right-hand side at ``t`` (no extrapolation). ``None`` when the sets leave an equality
    multiplier undetermined or the system is singular (the caller keeps its own point)."""
    eng = _Engine(prob, direction=1, refactor_every=1, drift_tol=DRIFT_TOL, tie_tol=1e-10,
                  zero_tol=1e-11, max_tie=0, max_zero_steps=0)
    F = np.flatnonzero(state == FREE)
    R, Z = eng._rows_for(F)
    if Z.shape[1]:
        return None
    fac = KKTInverse.build(prob, F, R)
    if fac is None:
        return None
    return _point(prob, eng.solve(t, np.asarray(state, dtype=np.int8), fac), None, t)


def _advance(seg: _Segment, tau: float, d: int) -> _Segment:
    """The old segment's affine solution evaluated at ``seg.t + d tau``."""
    dt = d * tau
    return _Segment(seg.t + dt, seg.state, seg.fac, seg.Z, seg.x + dt * seg.dx, seg.dx,
                    seg.nu + dt * seg.dnu, seg.dnu, seg.g + dt * seg.dg, seg.dg, seg.AZ,
                    seg.drift, seg.eq_ok)


def _point(prob: QPProblem, seg: _Segment, z, t: float) -> QPPoint:
    nu = seg.nu.copy()
    g = seg.g.copy()
    if seg.Z.shape[1] and z is not None:
        nu = nu + seg.Z[:, 0] * z
        g = g + seg.AZ[:, 0] * z
    st = seg.state
    x = seg.x.copy()
    lo = (st == LOWER) | (st == FIXED)
    up = st == UPPER
    # bound variables sit exactly on their bounds (no rounding from the affine update)
    x[lo] = prob.lb0[lo] + t * prob.lb1[lo]
    x[up] = prob.ub0[up] + t * prob.ub1[up]
    w_lb = np.where(lo, g, 0.0)
    w_ub = np.where(up, -g, 0.0)
    fx = st == FIXED  # fixed variables: split the free-sign multiplier
    if fx.any():
        w_lb = np.where(fx, np.maximum(g, 0.0), w_lb)
        w_ub = np.where(fx, np.maximum(-g, 0.0), w_ub)
    return QPPoint(x, nu * prob.eq_scale, np.maximum(w_lb, 0.0), np.maximum(w_ub, 0.0),
                   st.copy())


def events_for(t, old, new, changes) -> list[Event]:
    groups: dict[tuple, list[int]] = {}
    for i in changes:
        a, b = int(old[i]), int(new[i])
        if a == b:
            continue
        kind = "enter" if b == FREE else "leave" if a == FREE else "switch"
        groups.setdefault((kind, a, b), []).append(int(i))
    return [Event(t, kind, tuple(sorted(ix)), {"from": STATE_NAMES[a], "to": STATE_NAMES[b]})
            for (kind, a, b), ix in sorted(groups.items())]
