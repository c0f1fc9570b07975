r"""The exact regularization path of the kernel MCM over the slack penalty ``C``.

The MCM linear program (eqs. (30)-(33) of the MCM notes, optionally with the ``l1`` norm of
``lambda``, see :mod:`pathlib_core.mcm.lp`) has constraints that do not depend on ``C``; only
the cost moves, and it moves linearly:

.. math::

    c(C) = c_0 + C\,c_1, \qquad c_1 = (0, \dots, 0, \underbrace{1, \dots, 1}_{q}, 0, \dots).

For a fixed basis ``B`` the primal vertex ``x_B = B^{-1} b`` does not depend on ``C``, and the
multipliers are affine in it: ``y(C) = y_0 + C y_1`` with ``B' y_k = (c_k)_B``, and the reduced
costs ``d(C) = d_0 + C d_1`` with ``d_k = c_k - A' y_k``. The basis stays optimal exactly on the
interval where every nonbasic reduced cost keeps its sign (``d_j(C) >= 0`` for a variable at
its lower bound) and every tight inequality row keeps the sign of its multiplier; each of these
conditions is one affine inequality in ``C``, so the interval ``[C_lo, C_hi]`` follows from a
ratio test. This is parametric linear programming in the cost (Gass and Saaty 1955): the
solution path is

- **piecewise constant** in the primal variables ``(lambda, b, h, q)``: at a breakpoint the
  optimal set is the edge between the two vertices, and the path jumps from one to the other;
- **piecewise linear and continuous** in the optimal value ``h + C sum q + l1 sum |lambda|``,
  which is concave in ``C`` (a minimum of affine functions), and in the multipliers;
- monotone in the slack: ``sum q`` does not increase with ``C``.

:func:`mcm_path` follows it with HiGHS (through ``highspy``): at each breakpoint the cost is
moved just past the breakpoint and HiGHS re-optimizes from the current basis (usually one or
a few primal simplex pivots), then the new basis's interval is computed from two solves with
its factorization. A probe that lands beyond the start of the next basis's interval is
bisected back, so no basis in between is skipped. Validation error, the ``lambda`` support and
``h`` are constant between breakpoints, which is what :func:`mcm_path_cv` uses to choose ``C``
over the continuum.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse

from ..core.exceptions import SolverError
from ..core.fit_result import FitResult
from ..core.kkt import lp_residuals
from ..core.solution_path import Event, LinearSegment, SolutionPath
from ..core.threads import single_blas_thread
from ..core.validation import as_binary_labels, as_kernel, positive_scalar
from .lp import (
    C_MIN,
    C_RESOLVE,
    _KernelExpansion,
    _lp_matrices,
    _pow2_inverse,
    iteration_limit,
)

__all__ = ["MCMPathSolution", "mcm_path", "mcm_path_cv", "PathCVResult"]

#: relative step past a breakpoint at which the next basis is probed
_PROBE_STEP = 1e-9
#: two pieces meet when the next basis's interval starts within this relative distance of the
#: end of the previous one (the ratio tests are computed in floating point)
_CONTIGUOUS = 1e-11
#: probes per breakpoint before the path gives up (each halves or widens the step)
_MAX_PROBES = 80
#: a bounded variable within this distance (relative to the largest one) of its bound is at it
_SNAP = 1e-10


@dataclass
class MCMPathSolution(_KernelExpansion):
    """The MCM solution at one value of ``C`` on the path.

    Attributes
    ----------
    coef : ndarray of shape (n,)
        ``lambda`` (constant between breakpoints).
    intercept : float
        ``b``.
    h : float
        The bound ``h`` of eq. (31).
    slack : ndarray of shape (n,)
        ``q``.
    objective : float
        ``h + C sum q + l1 sum |lambda|`` (affine in ``C`` between breakpoints).
    dual_upper, dual_lower, dual_slack : ndarray of shape (n,)
        Multipliers of (31), of (32) and of ``q >= 0`` (affine in ``C`` between breakpoints).
    """

    coef: np.ndarray
    intercept: float
    h: float
    slack: np.ndarray
    objective: float
    dual_upper: np.ndarray = field(repr=False)
    dual_lower: np.ndarray = field(repr=False)
    dual_slack: np.ndarray = field(repr=False)

    @property
    def n_support(self) -> int:
        """Number of non-zero ``lambda_j`` (exact zeros: nonbasic variables of the LP)."""
        return int(np.count_nonzero(self.coef))


# ---------------------------------------------------------------------------------------------
# The LP in HiGHS
# ---------------------------------------------------------------------------------------------

def _margin_lp(A, y, *, l1: float, split: bool):
    r"""The sparse margin form of the MCM LP (see :func:`pathlib_core.mcm.lp._solve_sparse`).

    Variables ``(theta, b, h, q, g)``, ``theta = (lambda^+, lambda^-) >= 0`` when ``split``
    else free; rows: ``Y A theta + y b - g = 0`` (``n``), (31) ``g + q - h <= 0`` and (32)
    ``-g - q <= -1``. Returns the column-wise matrix, the bounds and the two cost vectors.
    """
    n, p = A.shape
    YA = y[:, None] * A
    n_th = 2 * p if split else p
    blocks = [YA, -YA] if split else [YA]
    eye = scipy.sparse.identity(n, format="csr")
    col = scipy.sparse.csr_matrix(np.ones((n, 1)))
    top = scipy.sparse.hstack([scipy.sparse.csr_matrix(np.hstack(blocks + [y[:, None]])),
                               scipy.sparse.csr_matrix((n, 1 + n)), -eye], format="csr")
    zero_th = scipy.sparse.csr_matrix((n, n_th + 1))
    ineq = scipy.sparse.bmat([[zero_th, -col, eye, eye], [zero_th, None, -eye, -eye]],
                             format="csr")
    M = scipy.sparse.vstack([top, ineq], format="csc")
    m = n_th + 2 + 2 * n
    c0 = np.zeros(m)
    c0[:n_th] = l1 if split else 0.0
    c0[n_th + 1] = 1.0
    c1 = np.zeros(m)
    c1[n_th + 2:n_th + 2 + n] = 1.0
    col_lo = np.full(m, -np.inf)
    if split:
        col_lo[:n_th] = 0.0
    col_lo[n_th + 2:n_th + 2 + n] = 0.0
    row_lo = np.concatenate([np.zeros(n), np.full(2 * n, -np.inf)])
    row_hi = np.concatenate([np.zeros(n), np.zeros(n), -np.ones(n)])
    return dict(M=M, c0=c0, c1=c1, col_lo=col_lo, row_lo=row_lo, row_hi=row_hi, n=n,
                n_th=n_th, p=p)


class _ParametricHighs:
    """HiGHS holding the margin-form LP, re-optimized at a new ``C`` from its current basis,
    with the interval of ``C`` on which its basis is optimal computed from the basis
    factorization (see the module docstring)."""

    def __init__(self, form: dict):
        import highspy

        self.f = form
        self.highspy = highspy
        H = highspy.Highs()
        H.setOptionValue("output_flag", False)
        H.setOptionValue("threads", 1)
        H.setOptionValue("primal_feasibility_tolerance", 1e-10)
        H.setOptionValue("dual_feasibility_tolerance", 1e-10)
        H.setOptionValue("simplex_iteration_limit", iteration_limit(*form["M"].shape))
        inf = highspy.kHighsInf
        M = form["M"]
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = M.shape[1], M.shape[0]
        lp.col_cost_ = form["c0"] + form["c1"]
        lp.col_lower_ = np.where(np.isfinite(form["col_lo"]), form["col_lo"], -inf)
        lp.col_upper_ = np.full(M.shape[1], inf)
        lp.row_lower_ = np.where(np.isfinite(form["row_lo"]), form["row_lo"], -inf)
        lp.row_upper_ = form["row_hi"]
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = M.indptr
        lp.a_matrix_.index_ = M.indices
        lp.a_matrix_.value_ = M.data
        H.passModel(lp)
        self.H = H
        self.M = M.tocsr()
        self.MT = M.T.tocsr()
        self.cols = np.arange(M.shape[1], dtype=np.int32)
        self.n_iter = 0
        self.n_solves = 0
        self.n_restarts = 0
        self.bounded = np.isfinite(form["col_lo"])
        # inequality rows (the equalities' multipliers have no sign)
        self.ineq_rows = ~np.isfinite(form["row_lo"])

    def solve(self, C: float):
        f = self.f
        H = self.H
        H.changeColsCost(self.cols.size, self.cols, f["c0"] + C * f["c1"])
        H.run()
        self.n_solves += 1
        status = H.getModelStatus()
        optimal = self.highspy.HighsModelStatus.kOptimal
        if status != optimal:
            # a warm start can stall on a near-degenerate basis ("unknown"): solve from scratch
            self.n_restarts += 1
            H.clearSolver()
            H.run()
            status = H.getModelStatus()
        if status != optimal:
            raise SolverError(f"HiGHS did not solve the MCM LP at C = {C:.17g} ({status}); the "
                              f"LP is feasible and bounded, so this is a numerical failure")
        self.n_iter += int(H.getInfo().simplex_iteration_count)
        x = np.array(H.getSolution().col_value)
        basic = np.asarray(H.getBasicVariables()[1])
        self.basic = basic
        # a degenerate basic variable at its bound comes back as +-1e-13 or so: the vertex has
        # it at the bound exactly (the rows' residuals then show whether that was right)
        b = self.bounded
        scale = 1.0 + float(np.max(np.abs(x[b]), initial=0.0))
        snap = b & (np.abs(x - np.where(b, self.f["col_lo"], 0.0)) <= _SNAP * scale)
        x[snap] = self.f["col_lo"][snap]
        return x

    def interval(self):
        """``(lo, hi, y0, y1, d0, d1)``: the interval of ``C`` on which the current basis is
        optimal and the affine multipliers ``y = y0 + C y1`` (rows) and reduced costs
        ``d = d0 + C d1`` (columns)."""
        f, H = self.f, self.H
        basic = self.basic
        is_col = basic >= 0
        bcols = basic[is_col]
        brows = -basic[~is_col] - 1

        def multipliers(c):
            # B' y = c_B, with one step of iterative refinement: the residual of a basic
            # column is its reduced cost, that of a basic row its multiplier (its column in
            # B is the unit vector)
            rhs = np.zeros(basic.size)
            rhs[is_col] = c[bcols]
            yv = np.asarray(H.getBasisTransposeSolve(rhs)[1])
            rhs[is_col] = (c - self.MT @ yv)[bcols]
            rhs[~is_col] = -yv[brows]
            yv = yv + np.asarray(H.getBasisTransposeSolve(rhs)[1])
            return yv, c - self.MT @ yv

        y0, d0 = multipliers(f["c0"])
        y1, d1 = multipliers(f["c1"])
        nonbasic = np.ones(d0.size, dtype=bool)
        nonbasic[bcols] = False
        basic_rows = np.zeros(y0.size, dtype=bool)
        basic_rows[brows] = True
        y0[basic_rows] = 0.0
        y1[basic_rows] = 0.0
        d0[bcols] = 0.0
        d1[bcols] = 0.0
        # conditions a + C s >= 0: reduced costs of nonbasic bounded columns, minus the
        # multipliers of nonbasic inequality rows (<= 0 at their upper bound)
        cb = nonbasic & self.bounded
        rb = self.ineq_rows & ~basic_rows
        a = np.concatenate([d0[cb], -y0[rb]])
        s = np.concatenate([d1[cb], -y1[rb]])
        # a slope at rounding level of its terms is no slope
        s = np.where(np.abs(s) > 1e-13 * (1.0 + np.abs(a)), s, 0.0)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = -a / s
        lo = float(np.max(t[s > 0], initial=-np.inf))
        hi = float(np.min(t[s < 0], initial=np.inf))
        # free nonbasic columns must keep a zero reduced cost: a slope pins the basis to a point
        free_nb = nonbasic & ~self.bounded
        if np.any(np.abs(d1[free_nb]) > 1e-13):
            tz = -d0[free_nb] / np.where(d1[free_nb] != 0, d1[free_nb], np.inf)
            lo, hi = max(lo, float(np.max(tz))), min(hi, float(np.min(tz)))
        return lo, hi, y0, y1, d0, d1


# ---------------------------------------------------------------------------------------------
# The path
# ---------------------------------------------------------------------------------------------

@single_blas_thread
def mcm_path(K, y, *, C_min: float = 1e-3, C_max: float = 1e3, l1: float = 0.0,
             rank_tol: float = 1e-10, max_breakpoints: int = 100_000) -> SolutionPath:
    r"""Exact solution path of the kernel MCM linear program for ``C`` in ``[C_min, C_max]``.

    .. math::

        \min_{\lambda, b, h, q} \; h + C \sum_{i=1}^M q_i + \ell_1 \sum_{j=1}^M |\lambda_j|
        \quad \text{s.t.} \quad
        h \ge y_i f(x_i) + q_i, \quad 1 \le y_i f(x_i) + q_i, \quad q_i \ge 0,

    with ``f(x) = sum_j lambda_j K(x_j, x) + b`` (eqs. (30)-(33) of the MCM notes; ``l1 > 0``
    adds the norm that makes the LP well posed, see :mod:`pathlib_core.mcm.lp`). The path is
    computed by parametric linear programming in the cost (module docstring): the primal
    solution is constant between breakpoints, the optimal value and the multipliers are affine.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Training kernel matrix (symmetric; any scale, it is solved at ``K / 2^e`` as in
        :func:`~pathlib_core.mcm.lp.fit_mcm`).
    y : array_like of shape (n,)
        Labels in {-1, +1}; both classes present.
    C_min, C_max : float, default 1e-3 and 1e3
        The range of ``C`` (``C_MIN <= C_min < C_max <= C_RESOLVE``).
    l1 : float >= 0, default 0.0
        Weight of ``sum |lambda_j|``. With ``l1 = 0`` (the paper's LP) the LP is solved over
        the range of ``K`` (eigen-directions above ``rank_tol`` of the largest), as
        :func:`~pathlib_core.mcm.lp.fit_mcm` does, and ``lambda`` is the minimum-norm
        representer.
    rank_tol : float, default 1e-10
        Relative eigenvalue cut-off of the range form (``l1 = 0`` only).
    max_breakpoints : int, default 100000
        The path stops with ``SolverError`` beyond this many pieces.

    Returns
    -------
    SolutionPath
        ``param_name="C"``; records :class:`MCMPathSolution`. The primal solution jumps at every
        breakpoint (both vertices of the optimal edge are stored; ``at(C)`` returns the one of
        the larger ``C`` there). ``kkt_residuals()`` gives the LP certificate at every
        breakpoint on both sides (primal and dual feasibility, stationarity and complementary
        slackness of eqs. (30)-(33), relative to their terms). Events: ``"enter"`` /
        ``"leave"`` of ``lambda``'s support, ``"slack"`` (the set ``q > 0`` changes) and
        ``"pivot"`` (another change of basis). ``info``: ``n_breakpoints``, ``n_solves``
        (HiGHS runs), ``n_restarts`` (runs repeated from scratch after a warm start did not
        report an optimum), ``simplex_iterations``, ``time``, ``max_gap`` (largest relative
        distance between the end of a piece and the start of the next basis's interval as
        the ratio test computes it in floating point; a probe closer to the joint returned
        the previous basis, so the pieces are joined there, and the certificate at the joint
        shows that both vertices are optimal), ``rank`` and ``l1``.

    Cost. Each breakpoint costs one HiGHS re-optimization from the current basis (usually one
    to three simplex iterations) and four solves with its factorization. HiGHS refactorizes
    the basis at every run, which dominates: about 1.7 ms per run at n = 300 before any
    pivot, so a path with thousands of breakpoints costs many single fits (the benchmark
    ``benchmarks/bench_mcm.py`` measures it against a fit and against a grid of fits).

    Limitations (measured on the registry's data sets, 120-150 points). HiGHS accepts a basis
    when its reduced costs are within its dual tolerance (1e-10, the smallest it allows), and
    the ratio test here is exact. Two cases follow:

    - With ``l1 = 0`` on low-dimensional data (haberman, tae, mammographic) the Gaussian
      kernel is numerically low-rank, and the range form leaves bases that HiGHS calls optimal
      but that are optimal on no interval of ``C``: ``SolverError``.
    - Rarely (1 to 2 of 16 data sets with ``l1 = 0.01``), two consecutive bases do not meet:
      HiGHS's tolerance hides the basis between them. The pieces are joined and the
      certificate at that breakpoint shows the gap (1e-7 to 1e-2); check
      ``kkt_residuals()``. ``info["max_gap"]`` also measures a first basis whose interval
      starts above ``C_min``.
    - On tied or duplicated points a piece's vertex can be 1e-9 (relative) above the optimum
      that an independent fit and Clarabel agree on, below what the certificate resolves.

    Raises
    ------
    ValueError
        Bad input, naming the argument.
    SolverError
        HiGHS fails, or a breakpoint cannot be resolved in ``_MAX_PROBES`` probes, or the path
        has more than ``max_breakpoints`` pieces.
    """
    t0 = time.perf_counter()
    K = as_kernel(K, "K")
    y = as_binary_labels(y, "y", length=K.shape[0])
    if np.unique(y).size < 2:
        raise ValueError("y must contain both classes -1 and +1; got only one class")
    C_min = positive_scalar(C_min, "C_min")
    C_max = positive_scalar(C_max, "C_max")
    if C_min < C_MIN:
        raise ValueError(f"C_min must be at least {C_MIN:g}; got {C_min:g}")
    if C_max > C_RESOLVE:
        raise ValueError(f"C_max must be at most {C_RESOLVE:g}; got {C_max:g}")
    if not C_min < C_max:
        raise ValueError(f"C_min must be smaller than C_max; got C_min={C_min:g}, C_max={C_max:g}")
    l1 = positive_scalar(l1, "l1", allow_zero=True)
    rank_tol = positive_scalar(rank_tol, "rank_tol", allow_zero=True)
    if int(max_breakpoints) < 1:
        raise ValueError(f"max_breakpoints must be positive; got {max_breakpoints}")
    n = K.shape[0]
    split = l1 > 0
    sig = _pow2_inverse(float(np.max(np.abs(K))))
    K_solve = K * sig
    if split:
        A, rank, back = K_solve, n, None
    else:
        s_eig, U = np.linalg.eigh(K_solve)
        smax = float(np.max(np.abs(s_eig)))
        keep = np.abs(s_eig) > rank_tol * smax if smax > 0 else np.zeros(n, dtype=bool)
        A, rank = U[:, keep], int(keep.sum())
        back = sig * (A / s_eig[keep])  # lambda = sig U S^-1 beta  (user units)
    form = _margin_lp(A, y, l1=l1 * sig, split=split)
    n_th, p = form["n_th"], form["p"]
    engine = _ParametricHighs(form)

    def record(x, y_row, d_col, C):
        theta = x[:n_th]
        lam = (theta[:p] - theta[p:]) * sig if split else back @ theta
        b, h = float(x[n_th]), float(x[n_th + 1])
        q = np.maximum(x[n_th + 2:n_th + 2 + n], 0.0)
        # HiGHS meets the rows to its tolerance on its scaled LP, which after unscaling can
        # leave (31)-(32) violated by ~1e-10 through the margin rows: as fit_mcm does, raise
        # the q_i off their bound and h by that amount (a q_i at its bound stays 0)
        yf = y * (K @ lam + b)
        q = np.where(q > 0, np.maximum(q, 1.0 - yf), 0.0)
        h = max(h, float(np.max(yf + q)))
        obj = h + C * float(q.sum()) + l1 * float(np.abs(lam).sum())
        return MCMPathSolution(coef=lam, intercept=b, h=h, slack=q, objective=obj,
                               dual_upper=-y_row[n:2 * n], dual_lower=-y_row[2 * n:],
                               dual_slack=d_col[n_th + 2:n_th + 2 + n].copy())

    def piece_records(x, lo, hi, y0, y1, d0, d1):
        # the primal part is shared by both ends: only the multipliers and the value move
        r_lo = record(x, y0 + lo * y1, d0 + lo * d1, lo)
        r_hi = record(x, y0 + hi * y1, d0 + hi * d1, hi)
        r_hi.coef, r_hi.slack = r_lo.coef, r_lo.slack
        return r_lo, r_hi

    x = engine.solve(C_min)
    lo, hi, *aff = engine.interval()
    max_gap = max(0.0, (lo - C_min) / C_min) if lo > C_min else 0.0
    pieces = []
    end = min(hi, C_max)
    if end > C_min:
        pieces.append((C_min, end, x, aff))
    else:
        # the exact ratio test ends this basis at C_min (HiGHS's tolerance accepted it): the
        # first piece starts with the next basis
        end = C_min
    while end < C_max:
        if len(pieces) >= max_breakpoints:
            raise SolverError(f"the MCM path has more than max_breakpoints={max_breakpoints} "
                              f"pieces below C = {end:.6g}")
        step, best = _PROBE_STEP, None
        for _ in range(_MAX_PROBES):
            C_p = min(end * (1.0 + step), C_max)
            x = engine.solve(C_p)
            lo, hi, *aff = engine.interval()
            if hi < C_p * (1.0 - _CONTIGUOUS):
                # HiGHS kept a basis that its tolerance calls optimal but the exact ratio test
                # does not. Before any candidate: move further. After one: the probe fell
                # back onto the previous basis, so nothing lies between it and the candidate
                if best is not None:
                    break
                step *= 8.0
                continue
            gap = (lo - end) / end if lo > end else 0.0
            if best is None or gap < best[0]:
                best = (gap, C_p, lo, hi, x, aff)
            if gap <= _CONTIGUOUS or step <= 1e-15:
                break
            # a basis in between was skipped: probe closer
            step = min(step, gap) / 4.0
        else:
            if best is None:
                raise SolverError(f"the MCM path could not resolve the breakpoint at "
                                  f"C = {end:.17g} in {_MAX_PROBES} probes")
        if best is None:
            raise SolverError(f"the MCM path could not resolve the breakpoint at C = {end:.17g}")
        gap, C_p, lo, hi, x, aff = best
        max_gap = max(max_gap, gap)
        new_end = min(max(hi, C_p), C_max)
        pieces.append((end, new_end, x, aff))
        end = new_end

    # records, segments and events
    segments, events = [], [Event(C_min, "start")]
    prev = None
    for lo_k, hi_k, x_k, aff_k in pieces:
        r_lo, r_hi = piece_records(x_k, lo_k, hi_k, *aff_k)
        segments.append(LinearSegment(lo_k, hi_k, r_lo, r_hi))
        if prev is not None:
            events.extend(_events(lo_k, prev, r_lo))
        prev = r_hi
    events.append(Event(C_max, "end"))

    # the LP certificate in the user's units, on the dense form of eqs. (30)-(33)
    lp = _lp_matrices(K, y, C=1.0, l1=l1, split=split)
    G, hv, lb = lp["G"], lp["h"], lp["lb"]
    c_base = lp["c"].copy()
    c_base[-n:] = 0.0

    def residual(C, rec):
        c = c_base.copy()
        c[-n:] = C
        lam = rec.coef
        th = np.concatenate([np.maximum(lam, 0.0), np.maximum(-lam, 0.0)]) if split else lam
        xv = np.concatenate([th, [rec.intercept, rec.h], rec.slack])
        z = np.concatenate([rec.dual_upper, rec.dual_lower])
        w = np.zeros_like(xv)
        if split:
            w[:2 * n] = (c + G.T @ z)[:2 * n]
        w[-n:] = rec.dual_slack
        return lp_residuals(c, xv, G=G, h=hv, lb=lb, z=z, w_lb=w, w_ub=np.zeros_like(w),
                            relative=True).max

    info = dict(n_breakpoints=len(pieces) + 1, n_solves=engine.n_solves,
                n_restarts=engine.n_restarts,
                simplex_iterations=engine.n_iter, time=time.perf_counter() - t0,
                max_gap=max_gap, rank=rank, l1=l1)
    return SolutionPath("C", segments, events, residual=residual, direction=1, info=info)


def _events(C, before: MCMPathSolution, after: MCMPathSolution) -> list[Event]:
    """What changes at a breakpoint between the vertex before and the vertex after it."""
    s0, s1 = before.coef != 0, after.coef != 0
    q0, q1 = before.slack > 0, after.slack > 0
    out = []
    if np.any(s1 & ~s0):
        out.append(Event(C, "enter", np.flatnonzero(s1 & ~s0)))
    if np.any(s0 & ~s1):
        out.append(Event(C, "leave", np.flatnonzero(s0 & ~s1)))
    if np.any(q0 != q1):
        out.append(Event(C, "slack", np.flatnonzero(q0 != q1)))
    if not out:
        out.append(Event(C, "pivot"))
    return out


# ---------------------------------------------------------------------------------------------
# Model selection on the path
# ---------------------------------------------------------------------------------------------

@dataclass(repr=False)
class PathCVResult(FitResult):
    """Cross-validation error as an exact step function of ``C`` (see :func:`mcm_path_cv`).

    Attributes
    ----------
    breakpoints : ndarray of shape (m + 1,)
        The union of the folds' breakpoints, ``C_min`` and ``C_max`` included.
    error : ndarray of shape (m,)
        Mean validation error over the folds on each interval ``[breakpoints[k],
        breakpoints[k + 1])``.
    fold_error : ndarray of shape (n_folds, m)
        Each fold's validation error on the same intervals.
    best_interval : tuple of float
        The first interval of smallest mean error.
    C : float
        The chosen ``C``: the geometric midpoint of ``best_interval``.
    best_error : float
    n_breakpoints : ndarray of int
        Breakpoints of each fold's path.
    max_gap : float
        The largest ``info["max_gap"]`` of the folds' paths (:func:`mcm_path`): 0 when
        consecutive bases meet exactly on every path; a larger value means a joint whose
        certificate should be read before the chosen ``C`` is trusted.

    As every fit's record (:class:`~pathlib_core.core.fit_result.FitResult`), it also has
    ``status`` (``"optimal"``: the minimum over the continuum is exact) and ``success``.
    """

    breakpoints: np.ndarray
    error: np.ndarray
    fold_error: np.ndarray
    best_interval: tuple
    C: float
    best_error: float
    n_breakpoints: np.ndarray
    max_gap: float
    #: the step function is minimized exactly over ``[C_min, C_max]``
    status: str = "optimal"


def _validation_steps(path: SolutionPath, K_val, y_val):
    """Breakpoints and the validation error on each piece of one path."""
    bps = path.breakpoints
    errs = np.empty(bps.size - 1)
    for k, seg in enumerate(path.segments):
        f = seg.rec_lo.decision_function(K_val)
        errs[k] = float(np.mean(np.where(f >= 0, 1, -1) != y_val))
    return bps, errs


def mcm_path_cv(K, y, folds, *, C_min: float = 1e-3, C_max: float = 1e3, l1: float = 0.0,
                rank_tol: float = 1e-10, max_breakpoints: int = 100_000) -> PathCVResult:
    """Choose ``C`` over the continuum ``[C_min, C_max]`` by cross-validation on exact paths.

    Each fold's validation error is constant between the breakpoints of its training path
    (the decision function is), so the mean error is a step function whose steps lie at the
    union of the folds' breakpoints; its minimum is found exactly, with no grid.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Kernel matrix of all points.
    y : array_like of shape (n,)
        Labels in {-1, +1}.
    folds : iterable of (train_idx, val_idx)
        E.g. ``StratifiedKFold(...).split(X, y)``. Each training part must hold both classes.
    C_min, C_max, l1, rank_tol, max_breakpoints
        As in :func:`mcm_path` (each fold's path).

    Returns
    -------
    PathCVResult
    """
    K = as_kernel(K, "K")
    y = as_binary_labels(y, "y", length=K.shape[0])
    steps, gaps = [], []
    for k, (tr, va) in enumerate(folds):
        tr, va = np.asarray(tr), np.asarray(va)
        if np.unique(y[tr]).size < 2:
            raise ValueError(f"folds: training part {k} holds only one class")
        path = mcm_path(K[np.ix_(tr, tr)], y[tr], C_min=C_min, C_max=C_max, l1=l1,
                        rank_tol=rank_tol, max_breakpoints=max_breakpoints)
        steps.append(_validation_steps(path, K[np.ix_(va, tr)], y[va]))
        gaps.append(float(path.info["max_gap"]))
    if not steps:
        raise ValueError("folds must hold at least one (train, validation) split")
    grid = np.unique(np.concatenate([b for b, _ in steps]))
    mids = np.sqrt(grid[:-1] * grid[1:])
    fold_error = np.empty((len(steps), mids.size))
    for k, (b, e) in enumerate(steps):
        idx = np.clip(np.searchsorted(b, mids, side="right") - 1, 0, e.size - 1)
        fold_error[k] = e[idx]
    error = fold_error.mean(axis=0)
    best = int(np.argmin(error))
    interval = (float(grid[best]), float(grid[best + 1]))
    return PathCVResult(breakpoints=grid, error=error, fold_error=fold_error,
                        best_interval=interval, C=float(np.sqrt(interval[0] * interval[1])),
                        best_error=float(error[best]),
                        n_breakpoints=np.array([b.size for b, _ in steps]), max_gap=max(gaps))
