r"""The S3VM path by infinitesimal annealing (Ogawa, Imamura, Takeuchi and Sugiyama, ICML 2013).

Problem (the forms we reconstruct from the paper's text; its displayed equations were lost in
our copy). Labeled points ``L`` with labels ``y_i`` in ``{-1, +1}``, unlabeled points ``U``
with predicted labels ``y_hat_i``; a kernel ``K`` and ``f(x) = sum_j beta_j K(x_j, x) + b``
with the bias fixed at ``b = 2 r - 1``, ``r`` the fraction of positive labeled points
(Chapelle and Zien 2005). The objective (eq. (1))

.. math::

    J(f, \hat y) = \tfrac12 \beta^\top K \beta
      + C \sum_{i \in L} [1 - y_i f(x_i)]_+
      + C^* \sum_{i \in U} [1 - \hat y_i f(x_i)]_+ ,

the polytope (eqs. (2), (6)) ``pol(y_hat) = {f : y_hat_i f(x_i) >= 0, i in U}`` and the
conditional problem (eq. (5)) ``min_{f in pol(y_hat)} J(f, y_hat)``. Its dual (the form of
eq. (7)-(8) we use) in the multipliers ``theta_i >= 0`` of the margin constraints (the paper
"augments" them by the labels: ``beta_i = y_i theta_i``)

.. math::

    \min_\theta \; \tfrac12 \theta^\top Q \theta + (b\,y - \mathbf 1)^\top \theta
    \quad \text{s.t.} \quad 0 \le \theta_i \le C \;(i \in L), \quad
    0 \le \theta_i \le C^* \;(i \in U), \qquad Q = (y y^\top) \circ K,

valid whenever the solution is strictly inside ``pol(y_hat)`` (the polytope constraints are
then inactive; Theorem 4 says exactly these conditionally optimal solutions are the local
optima of eq. (4)). With ``g = Q theta + b y - 1`` the margins are ``y_i f(x_i) = g_i + 1``.
On the boundary the polytope constraint ``y_hat_i f(x_i) >= 0`` gets a multiplier
``gamma_i >= 0`` and ``beta_i = y_hat_i (theta_i + gamma_i)``.

Algorithm 1-3: a CP-step follows the box QP above in ``t = C^*`` (upper bounds of ``U``
affine in ``t``) with :func:`pathlib_core.core.homotopy.trace_path` until some ``y_hat_i f(x_i)``
reaches
0 (the path hits the polytope's boundary); a DJ-step flips those labels (eq. (10)) and
re-solves the polytope-constrained problem with the warm-started active-set QP
(:func:`pathlib_core.core.qp.solve_qp`), repeating until the solution is strictly interior.

The path's QPs (the conditional problems of the DJ-steps, the supervised start, the exact
solves of a restart) run the active-set method's Python iterations (``compiled=False``):
on kernels with repeated points the solution set is not a point, and a trace that resumes
from a degenerate stretch can succeed or stall depending on rounding-level differences of
its start (observed on mammographic: a start 1e-13 away, from the compiled loop, stalled
where this one passes). The baselines of :mod:`pathlib_core.s3vm.baselines` use the
compiled loop.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

import numpy as np

from ..core.exceptions import HomotopyError, PathlibCoreError, QPSolverError, SolverError
from ..core.homotopy import (
    FREE,
    LOWER,
    UPPER,
    conditioning_note,
    kernel_scale_pow2,
    make_problem,
    screen_psd,
    trace_path,
)
from ..core.kkt import QPData, qp_data_residuals, recover_bounds
from ..core.linalg import REFACTOR_EVERY
from ..core.qp import solve_qp
from ..core.solution_path import Event, SolutionPath
from ..core.threads import single_blas_thread
from ..core.validation import as_kernel, as_vector, check_choice, check_psd, positive_scalar
from ..primer.svm import kernel_matrix
from ._fast import trace_cp

__all__ = [
    "S3VMSolution",
    "s3vm_path",
    "s3vm_objective",
    "conditional_solution",
    "class_balance_bias",
    "check_s3vm_inputs",
    "s3vm_kkt_residual",
]


@dataclass(frozen=True)
class S3VMSolution:
    """A (conditionally optimal) S3VM solution at one value of ``C^*``.

    Attributes
    ----------
    coef : ndarray of shape (n,)
        ``beta`` in ``f(x) = sum_i beta_i K(x_i, x) + intercept``.
    intercept : float
        The fixed bias ``b = 2 r - 1``.
    decision : ndarray of shape (n,)
        ``f(x_i)`` on the training points (labeled and unlabeled).
    theta : ndarray of shape (n,)
        Dual variables (``beta = labels * theta`` in the interior).
    labels : ndarray of int, shape (n,)
        The given labels on labeled points, ``y_hat`` on unlabeled points.
    """

    coef: np.ndarray
    intercept: float
    decision: np.ndarray = field(repr=False)
    theta: np.ndarray = field(repr=False)
    labels: np.ndarray = field(repr=False)

    def decision_function(self, K_cross) -> np.ndarray:
        """``f`` at new points, ``K_cross[i, j] = K(x_i, x_new_j)`` (training rows)."""
        return np.asarray(K_cross, dtype=float).T @ self.coef + self.intercept


# ---------------------------------------------------------------------------------------------
# validation and small helpers
# ---------------------------------------------------------------------------------------------
def check_s3vm_inputs(K, y, name: str = "K"):
    """Validate ``K`` (square, symmetric, finite; ``name`` in messages) and ``y`` in
    ``{-1, 0, +1}``.

    Returns ``(K, y, lab, unl)`` with boolean masks of labeled and unlabeled points. Raises
    ``ValueError`` naming the argument: labels outside ``{-1, 0, +1}``, no labeled point of one
    class, no unlabeled point, shape mismatch.
    """
    Kv = as_kernel(K, name)
    n = Kv.shape[0]
    yv = as_vector(y, "y", length=n, length_of=name)
    bad = sorted(set(np.unique(yv).tolist()) - {-1.0, 0.0, 1.0})
    if bad:
        raise ValueError(f"y must contain only -1, 0 (unlabeled) and +1; found {bad[:5]}")
    lab = yv != 0
    unl = ~lab
    if not np.any(yv == 1) or not np.any(yv == -1):
        raise ValueError("y must contain labeled points of both classes -1 and +1")
    if not np.any(unl):
        raise ValueError("y must contain at least one unlabeled point (label 0)")
    return Kv, yv, lab, unl


def _check_labels(labels, yv, lab, unl) -> np.ndarray:
    """``labels`` (n,) finite and -1 / +1 on the unlabeled points; returns ``y_hat``.

    The labeled entries of ``labels`` are ignored and replaced by the given labels ``y``
    (the rule of :func:`s3vm_objective`, shared by the functions that take ``labels``).
    """
    lv = as_vector(labels, "labels", length=yv.shape[0], length_of="K")
    if np.any(np.abs(lv[unl]) != 1):
        raise ValueError("labels must be -1 or +1 on the unlabeled points")
    return np.where(lab, yv, lv)


def class_balance_bias(y) -> float:
    """The fixed bias ``b = 2 r - 1``, ``r`` the fraction of ``+1`` among labeled points.

    ``y`` holds -1 / +1 for labeled points and 0 for unlabeled ones; a ``ValueError`` is
    raised when no point is labeled.
    """
    yv = as_vector(y, "y")
    lab = yv != 0
    if not lab.any():
        raise ValueError("y must contain labeled points (labels -1 or +1); all are 0")
    return float(2.0 * np.mean(yv[lab] == 1) - 1.0)


def s3vm_objective(K, y, labels, coef, intercept, *, C, C_unlabeled) -> float:
    r"""The S3VM objective ``J(f, y_hat)`` of eq. (1) of Ogawa et al. (2013).

    .. math::

        J = \tfrac12 \beta^\top K \beta + C \sum_{i \in L} [1 - y_i f(x_i)]_+
            + C^* \sum_{i \in U} [1 - \hat y_i f(x_i)]_+ ,
        \qquad f = K \beta + b .

    Parameters
    ----------
    K : array_like (n, n)
        Kernel over labeled and unlabeled points.
    y : array_like (n,)
        ``-1, +1`` for labeled points, ``0`` for unlabeled ones.
    labels : array_like (n,)
        Labels used for every point (``y_hat`` on unlabeled ones; labeled entries are ignored
        and replaced by ``y``).
    coef, intercept : array_like (n,), float
        ``beta`` and ``b``.
    C, C_unlabeled : float
        ``C > 0`` and ``C^* >= 0``.
    """
    Kv, yv, lab, unl = check_s3vm_inputs(K, y)
    n = Kv.shape[0]
    ylab = _check_labels(labels, yv, lab, unl)
    beta = as_vector(coef, "coef", length=n, length_of="K")
    C = positive_scalar(C, "C")
    Cu = positive_scalar(C_unlabeled, "C_unlabeled", allow_zero=True)
    return _objective(Kv, ylab, lab, beta, float(intercept), C, Cu)


def _objective(K, ylab, lab, beta, b, C, Cu) -> float:
    f = K @ beta + b
    hinge = np.maximum(0.0, 1.0 - ylab * f)
    return float(0.5 * beta @ K @ beta + C * hinge[lab].sum() + Cu * hinge[~lab].sum())


def _upper(lab, C, Cu):
    return np.where(lab, C, Cu)


def s3vm_kkt_residual(K, y, labels, theta, *, C, C_unlabeled) -> float:
    r"""Largest componentwise relative KKT residual of ``theta`` for the interior conditional
    problem (the box QP of the module docstring) at ``C^* = C_unlabeled``:

    .. math::

        \min_\theta \tfrac12 \theta^\top Q \theta + (b\,\hat y - \mathbf 1)^\top \theta,
        \quad 0 \le \theta_i \le C \ (i \in L), \quad 0 \le \theta_i \le C^* \ (i \in U),
        \qquad Q = (\hat y \hat y^\top) \circ K,

    each condition against its own terms (:func:`pathlib_core.core.kkt.qp_residuals` with
    ``relative=True``; bound multipliers read off the gradient with no threshold, as in
    :func:`pathlib_core.primer.svm.svm_kkt_residual`). This is what ``kkt_residuals()`` of
    :func:`s3vm_path` reports at each breakpoint.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Kernel over labeled and unlabeled points.
    y : array_like of shape (n,)
        ``-1, +1`` for labeled points, ``0`` for unlabeled ones.
    labels : array_like of shape (n,)
        ``y_hat`` on the unlabeled points (-1 or +1); labeled entries are replaced by ``y``.
    theta : array_like of shape (n,)
        Dual variables (``beta = labels * theta``).
    C, C_unlabeled : float
        ``C > 0`` and ``C^* >= 0``.

    Returns
    -------
    float
        Zero (to rounding) exactly at the conditional optimum; at most 1.
    """
    Kv, yv, lab, unl = check_s3vm_inputs(K, y)
    ylab = _check_labels(labels, yv, lab, unl)
    th = as_vector(theta, "theta", length=Kv.shape[0], length_of="K")
    C = positive_scalar(C, "C")
    Cu = positive_scalar(C_unlabeled, "C_unlabeled", allow_zero=True)
    rec = S3VMSolution(ylab * th, 0.0, np.zeros(0), th, ylab.astype(int))
    return _residual_fn(Kv, lab, class_balance_bias(yv), C)(Cu, rec)


def _residual_fn(K, lab, b, C):
    r"""Componentwise relative KKT residual of the interior conditional problem (the box QP
    of the module docstring) at ``C^* = t``: :func:`pathlib_core.core.kkt.qp_residuals` with
    ``relative=True``, each stationarity row ``(Q theta + b y - 1)_i`` against
    ``(|Q| |theta|)_i + |b y_i - 1|`` plus its multiplier, the bounds against the box width.
    The bound multipliers are read off the gradient with no threshold (``g_i > 0``: the
    multiplier of ``theta_i >= 0``, ``g_i < 0``: that of ``theta_i <= c_i``), so a point with
    a non-zero gradient counts as optimal only to the extent that it sits at that bound.

    ``residual(t, rec, s)``: ``rec`` in units where the kernel is ``s K`` (its ``theta`` is
    multiplied by ``s``), ``t`` already in the units of ``K``.
    """

    def residual(t, rec, s=1.0):
        ylab = rec.labels.astype(float)
        Q = K * np.outer(ylab, ylab)
        q = b * ylab - 1.0
        ub = _upper(lab, C, t)
        n = ylab.shape[0]
        theta = rec.theta * s
        d = QPData(Q, q, np.zeros((0, n)), np.zeros(0), np.zeros((0, n)), np.zeros(0),
                    np.zeros(n), ub)
        grad = Q @ theta + q
        w_lb, w_ub = recover_bounds(grad, theta, d.lb, d.ub, np.inf)
        with np.errstate(over="ignore"):  # the absolute products (unused) may overflow
            return qp_data_residuals(d, theta, np.zeros(0), np.zeros(0), w_lb, w_ub, True).max

    return residual


def _record(K, ylab, theta, gamma, b) -> S3VMSolution:
    beta = ylab * (theta + gamma)
    return S3VMSolution(beta, b, K @ beta + b, theta.copy(), ylab.astype(int))


# ---------------------------------------------------------------------------------------------
# the conditional problem with the polytope constraints (DJ-step)
# ---------------------------------------------------------------------------------------------
@single_blas_thread
def conditional_solution(K, y, labels, *, C, C_unlabeled, warm_start=None, tol=1e-10):
    r"""Conditionally optimal solution in ``pol(y_hat)`` (eq. (5) of Ogawa et al. 2013).

    Solves ``min_{f in pol(y_hat)} J(f, y_hat)`` through its dual

    .. math::

        \min_{\theta, \gamma} \tfrac12 (\theta + E\gamma)^\top Q (\theta + E\gamma)
        + b\,y^\top(\theta + E\gamma) - \mathbf 1^\top \theta,
        \quad 0 \le \theta \le c, \; \gamma \ge 0,

    where ``gamma`` are the multipliers of the polytope constraints ``y_hat_i f(x_i) >= 0``.
    Only the constraints that the relaxed solution violates get a ``gamma`` (a working set
    grown until the relaxed solution is feasible, hence optimal); the QPs are solved by the
    warm-started active-set method :func:`pathlib_core.core.qp.solve_qp`.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Kernel over labeled and unlabeled points (symmetric, finite).
    y : array_like of shape (n,)
        ``-1, +1`` for labeled points (both classes present), ``0`` for unlabeled ones (at
        least one).
    labels : array_like of shape (n,)
        Labels ``y_hat`` used on the unlabeled points, each -1 or +1 (as in
        :func:`s3vm_objective`); labeled entries are ignored and replaced by ``y``.
    C : float > 0
        Weight of the labeled hinge losses.
    C_unlabeled : float >= 0
        Weight ``C^*`` of the unlabeled hinge losses.
    warm_start : array_like of shape (n,), optional
        Initial ``theta`` (clipped to the box ``[0, C]`` / ``[0, C^*]``); not validated.
    tol : float, default 1e-10
        Tolerance passed to :func:`pathlib_core.core.qp.solve_qp`.

    Returns
    -------
    (S3VMSolution, gamma, n_qp)
        The solution (``coef = y_hat * (theta + gamma)``), the polytope multipliers (n,),
        the number of QP solves.

    Raises
    ------
    ValueError
        Bad ``K``, ``y``, ``labels`` (wrong length, NaN / inf, or a value other than -1 / +1
        on an unlabeled point), ``C`` or ``C_unlabeled``, naming the argument.
    pathlib_core.core.exceptions.SolverError
        A QP was not solved to optimality (:class:`~pathlib_core.core.exceptions.QPSolverError`),
        or the working set of polytope constraints did not settle.
    """
    Kv, yv, lab, unl = check_s3vm_inputs(K, y)
    ylab = _check_labels(labels, yv, lab, unl)
    C = positive_scalar(C, "C")
    Cu = positive_scalar(C_unlabeled, "C_unlabeled", allow_zero=True)
    b = class_balance_bias(yv)
    theta0 = None if warm_start is None else np.asarray(warm_start, dtype=float)
    return _conditional(Kv, ylab, lab, b, C, Cu, theta0, tol)


_LAST_ITERS: list = []  # active-set iterations of the QP solves of the last _conditional call


def _conditional(K, ylab, lab, b, C, Cu, theta0, tol=1e-10, viol_tol=None):
    _LAST_ITERS.clear()
    n = ylab.shape[0]
    Q = K * np.outer(ylab, ylab)
    q = b * ylab - 1.0
    ub = _upper(lab, C, Cu)
    unl = np.flatnonzero(~lab)
    act = np.zeros(0, dtype=int)
    theta = np.zeros(n) if theta0 is None else np.clip(theta0, 0.0, ub)
    gamma_a = np.zeros(0)
    n_qp = 0
    vtol = 1e-10 * max(1.0, C) if viol_tol is None else viol_tol
    for _ in range(unl.size + 1):
        m = act.size
        if m == 0:
            P, qq, lb_, ub_ = Q, q, np.zeros(n), ub
        else:
            E = Q[:, act]
            P = np.block([[Q, E], [E.T, Q[np.ix_(act, act)]]])
            qq = np.concatenate([q, b * ylab[act]])
            lb_ = np.zeros(n + m)
            ub_ = np.concatenate([ub, np.full(m, np.inf)])
        x0 = np.concatenate([theta, gamma_a])
        res = solve_qp(P, qq, lb=lb_, ub=ub_, warm_start=x0, tol=tol, compiled=False)
        n_qp += 1
        _LAST_ITERS.append(int(res.n_iter))
        if res.status != "optimal":
            raise QPSolverError(f"the conditional problem could not be solved ({res.status})")
        theta, gamma_a = res.x[:n], res.x[n:]
        gamma = np.zeros(n)
        gamma[act] = gamma_a
        coef = ylab * (theta + gamma)
        f = K @ coef + b
        marg = ylab * f
        viol = unl[(marg[unl] < -vtol) & ~np.isin(unl, act)]
        if viol.size == 0:
            return _record(K, ylab, theta, gamma, b), gamma, n_qp
        act = np.concatenate([act, viol])
        gamma_a = np.concatenate([gamma_a, np.zeros(viol.size)])
    raise SolverError("the working set of polytope constraints did not converge")


def supervised_fixed_bias(K, ylab, lab, b, C):
    """Dual ``theta`` (n,) of the SVM on the labeled points with the bias fixed at ``b``."""
    li = np.flatnonzero(lab)
    yl = ylab[li]
    Q = K[np.ix_(li, li)] * np.outer(yl, yl)
    res = solve_qp(Q, b * yl - 1.0, lb=np.zeros(li.size), ub=np.full(li.size, C),
                   compiled=False)
    if res.status != "optimal":
        raise QPSolverError(f"the supervised SVM could not be solved ({res.status})")
    theta = np.zeros(ylab.shape[0])
    theta[li] = res.x
    return theta


# ---------------------------------------------------------------------------------------------
# CP-step: the box QP path in C* until the polytope boundary
# ---------------------------------------------------------------------------------------------
def _first_crossing(params, recs, unl, ylab, level=None):
    """First parameter where some ``y_hat_i f(x_i)`` (i in U) reaches 0 on a linear path.

    ``level`` (same length as ``unl``, default 0): a point counts as crossing on a segment
    once its margin at the segment's end is ``<= level`` (the boundary tolerance, or a small
    negative level for exempt points that start on the boundary); the returned position is
    where the margin is 0 (the segment's end if it stays above 0 there, its start if it is
    already at the level there).
    """
    level = np.zeros(len(unl)) if level is None else level
    for k in range(len(params) - 1):
        m0 = ylab[unl] * recs[k].decision[unl]
        m1 = ylab[unl] * recs[k + 1].decision[unl]
        hit = m1 <= level
        if np.any(hit):
            # linear in t on the segment: m(t) = m0 + (m1 - m0) s, s in [0, 1]
            with np.errstate(divide="ignore", invalid="ignore"):
                s = np.where(hit, m0 / (m0 - m1), np.inf)
            s = np.where(np.isnan(s), 1.0, s)  # m0 == m1: flat at the level
            s = np.where(hit & (m0 <= level), 0.0, s)  # already at the level at the start
            s = np.clip(s, 0.0, 1.0)
            j = int(np.argmin(s))
            return k, float(s[j])
    return None


def _cp_step(K, ylab, lab, b, C, t0, t_max, theta0, refactor_every, watch, exempt=None,
             exempt_tol=0.0, fast=True, boundary_tol=0.0, psd_check=None):
    """Trace the box QP from ``t0`` until the polytope boundary or ``t_max``.

    ``watch``: mask of the unlabeled points whose margin defines the boundary (stop once a
    margin is ``<= boundary_tol``, the tolerance with which the DJ-step counts a point as on
    the boundary: a margin that stays at a rounding error above 0 over a whole segment is on
    the boundary, and the next DJ-step must see it). ``exempt``: mask of unlabeled points
    that start on the boundary after a flip that did not decrease ``J``; they stop the step
    only once their margin falls below ``-exempt_tol`` (they may stay at 0 or move inside,
    but never leave the polytope).

    Returns (params, records, events, t_end, hit_boundary, info) with ``params[0] == t0``.
    """
    n = ylab.shape[0]
    exempt = np.zeros(n, dtype=bool) if exempt is None else exempt
    watch = watch | exempt
    unl = np.flatnonzero(watch)
    level = np.where(exempt[unl], -exempt_tol, boundary_tol)
    Q = K * np.outer(ylab, ylab)
    q = b * ylab - 1.0
    ub0 = np.where(lab, C, 0.0)
    ub1 = np.where(lab, 0.0, 1.0)
    prob = make_problem(Q, q, None, None, None, None, np.zeros(n), None, ub0, ub1)
    if psd_check is not None:
        prob.psd_check = psd_check
    params_all, recs_all, events_all = [t0], [None], []
    t, theta = t0, theta0
    stats = {"n_events": 0, "n_chunks": 0, "n_restarts": 0, "max_restart_gap": 0.0}

    def record(p, tt):
        return _record(K, ylab, p.x, np.zeros(n), b)

    def record_many(xs):
        # one matrix-vector product per breakpoint (a single matrix-matrix product is faster
        # on an idle machine but much slower with threaded BLAS on a loaded one)
        lab_int = ylab.astype(int)
        out = []
        for x in xs:
            beta = ylab * x
            out.append(S3VMSolution(beta, b, K @ beta + b, np.array(x), lab_int))
        return out

    recs_all[0] = record(_X(theta0), t0)
    iu_mask = watch

    def stop(p, tt):
        # margins y_i f(x_i) = (Q theta + q)_i + 1; stop once an unlabeled one is <= 0
        return bool(np.any((Q[iu_mask] @ p.x + q[iu_mask]) + 1.0 <= level))
    while t < t_max:
        t_end = t_max
        if t_max - t_end <= 1e-12 * t_max:
            t_end = t_max
        params, recs, evs = _trace_chunk(prob, Q, q, ub0, ub1, t, t_end, theta, record,
                                         refactor_every, stats, stop,
                                         fast=(unl, level, record_many) if fast else None)
        stats["n_chunks"] += 1
        recs[0] = recs_all[-1]
        cross = _first_crossing(params, recs, unl, ylab, level)
        if cross is not None:
            k, s = cross
            tb = params[k] + s * (params[k + 1] - params[k])
            rb = _lerp(recs[k], recs[k + 1], s)
            m1 = ylab[unl] * recs[k + 1].decision[unl]
            stats["exempt_hit"] = unl[(m1 <= level) & exempt[unl]]
            params_all.extend(params[1:k + 1] + [tb])
            recs_all.extend(recs[1:k + 1] + [rb])
            events_all.extend(e for e in evs if e.param < tb)
            return params_all, recs_all, events_all, tb, True, stats
        params_all.extend(params[1:])
        recs_all.extend(recs[1:])
        events_all.extend(evs)
        t, theta = params[-1], recs[-1].theta
        if t < t_end:
            # the stop rule fired at a breakpoint although the recorded margins (computed as
            # K beta + b, rounded differently) show no crossing: that breakpoint is on the
            # boundary; report it so that the DJ-step acts (re-tracing would not move)
            m_end = (Q[iu_mask] @ theta + q[iu_mask]) + 1.0
            stats["exempt_hit"] = unl[(m_end <= level) & exempt[unl]]
            return params_all, recs_all, events_all, t, True, stats
    return params_all, recs_all, events_all, t, False, stats


_FAIL_AT = re.compile(r"at t=([-+0-9.eE]+)")


def _trace_chunk(prob, Q, q, ub0, ub1, t, t_end, theta, record, refactor_every, stats,
                 stop=None, fast=None):
    """Trace the box QP on ``[t, t_end]``; restart past an unresolvable degenerate event.

    ``fast = (watch, level, record_many)``: first try the lean compiled loop
    (:func:`pathlib_core.s3vm._fast.trace_cp`, same stop rule on the indices ``watch``); if it
    raises :class:`HomotopyError`, the chunk is traced again by the generic engine below.

    When the engine's tie resolution gives up at some ``t_f`` (near-singular kernels at large
    ``C``), the path is traced to ``t_f``, the QP is solved exactly (active set) at
    ``t_f + delta`` (``delta = 1e-7 max(1, t_f)``) and tracing resumes there; the two exact
    solutions are joined linearly (the gap to an exact solve at the midpoint is recorded in
    ``max_restart_gap``).
    """
    if fast is not None:
        try:
            ps, xs, evs, info = trace_cp(prob, t, t_end, theta,
                                         _start_state(Q, q, theta, ub0 + t * ub1),
                                         watch=fast[0], level=fast[1], stop=stop,
                                         refactor_every=refactor_every)
        except HomotopyError:
            stats["n_fast_fallbacks"] = stats.get("n_fast_fallbacks", 0) + 1
        else:
            stats["n_events"] += info["n_events"]
            stats["n_engine_events"] = (stats.get("n_engine_events", 0)
                                        + info["n_engine_events"])
            return [float(a) for a in ps], fast[2](xs), evs
    params, recs, evs = [], [], []
    for _ in range(100):
        try:
            path = trace_path(prob, t, t_end, x0=theta,
                          state0=_start_state(Q, q, theta, ub0 + t * ub1),
                          param_name="C_unlabeled", record=record,
                          refactor_every=refactor_every, stop=stop)
        except HomotopyError as exc:
            m = _FAIL_AT.search(str(exc))
            t_f = float(m.group(1)) if m else np.nan
            if not (t <= t_f <= t_end):
                raise
            stats["n_restarts"] += 1
            if t_f > t:
                p0 = trace_path(prob, t, t_f, x0=theta,
                            state0=_start_state(Q, q, theta, ub0 + t * ub1),
                            param_name="C_unlabeled", record=record,
                            refactor_every=refactor_every, stop=stop)
                _extend(params, recs, evs, p0)
                theta = recs[-1].theta
                if p0.breakpoints[-1] < t_f:  # stopped at the polytope boundary
                    return params, recs, evs
            t2 = min(t_end, t_f + 1e-7 * max(1.0, t_f))
            th2 = _solve_box(Q, q, ub0 + t2 * ub1, theta)
            thm = _solve_box(Q, q, ub0 + 0.5 * (t_f + t2) * ub1, theta)
            stats["max_restart_gap"] = max(stats["max_restart_gap"],
                                           float(np.max(np.abs(0.5 * (theta + th2) - thm))))
            if not params:
                params, recs = [t], [record(_X(theta), t)]
            params.append(t2)
            recs.append(record(_X(th2), t2))
            evs.append(Event(t_f, "restart", (), {}))
            t, theta = t2, th2
            if t >= t_end:
                return params, recs, evs
            continue
        stats["n_events"] += int(path.info.get("n_events", 0))
        _extend(params, recs, evs, path)
        return params, recs, evs
    raise HomotopyError(f"more than 100 restarts in the CP-step near C*={t}")


def _extend(params, recs, evs, path) -> None:
    """Append a traced piece's breakpoints (right limits), records and events to the lists
    (its first breakpoint, the end of the previous piece, only if the lists are empty)."""
    pts = [(float(a), r) for a, sd, r in path.records() if sd != "left"]
    if params:
        pts = pts[1:]
    params += [a for a, _ in pts]
    recs += [r for _, r in pts]
    evs += list(path.events)


class _X:
    def __init__(self, x):
        self.x = x



def _solve_box(Q, q, ub, theta0):
    res = solve_qp(Q, q, lb=np.zeros(q.size), ub=ub, warm_start=np.clip(theta0, 0.0, ub),
                   tol=1e-12, compiled=False)
    if res.status != "optimal":
        raise QPSolverError(f"restart solve failed ({res.status})")
    return res.x


def _start_state(Q, q, theta, ub):
    """Index sets of an exact solution (at ``C^* = 0`` the unlabeled box is ``[0, 0]``: a
    point goes to the upper bound when its margin is below 1, i.e. its gradient is negative)."""
    g = Q @ theta + q
    # at a bound to 1e-9 of the solution's own size (lower) or of the box width (upper); a
    # box far wider than the solution (large C) must not make every variable bound
    st = np.full(theta.shape[0], FREE, dtype=np.int8)
    at_lo = theta <= 1e-9 * float(np.max(np.abs(theta), initial=0.0))
    at_up = ub - theta <= 1e-9 * ub
    st[at_lo] = LOWER
    st[at_up & ~at_lo] = UPPER
    both = at_lo & at_up
    st[both & (g < 0)] = UPPER
    return st


def _lerp(r0: S3VMSolution, r1: S3VMSolution, s: float) -> S3VMSolution:
    return S3VMSolution((1 - s) * r0.coef + s * r1.coef, r0.intercept,
                        (1 - s) * r0.decision + s * r1.decision,
                        (1 - s) * r0.theta + s * r1.theta, r0.labels)


# ---------------------------------------------------------------------------------------------
# the whole path (Algorithm 1)
# ---------------------------------------------------------------------------------------------
@single_blas_thread
def s3vm_path(X, y, *, kernel: str = "precomputed", gamma="scale", C, C_unlabeled_max,
              boundary_tol: float = 1e-9,
              refactor_every: int = REFACTOR_EVERY, max_jumps: int | None = None,
              engine: str = "fast") -> SolutionPath:
    r"""Path of local optima of the S3VM for ``C^*`` in ``[0, C_unlabeled_max]``.

    Algorithm 1 of Ogawa et al. (2013): start at ``C^* = 0`` with the supervised SVM on the
    labeled points (bias fixed at ``b = 2 r - 1``) and ``y_hat = sign f`` on the unlabeled
    points; alternate CP-steps (exact piecewise-linear path of the conditional problem, eq.
    (5), in the interior of ``pol(y_hat)``) and DJ-steps (flip the labels of the unlabeled
    points with ``f(x_i) = 0``, eq. (10), and re-solve; Theorem 5 says ``J`` strictly
    decreases) until ``C^* = C_unlabeled_max``.

    Parameters
    ----------
    X : array_like of shape (n, n) or (n, d)
        The kernel ``K`` over labeled and unlabeled points (symmetric PSD) when
        ``kernel="precomputed"`` (the default), else the points, from which ``K`` is computed.
    y : array_like of shape (n,)
        ``-1`` / ``+1`` for labeled points, ``0`` for unlabeled points.
    kernel : {"precomputed", "linear", "rbf"}, default "precomputed"
        How ``K`` is obtained from ``X`` (:func:`pathlib_core.primer.svm.kernel_matrix`).
    gamma : float, "scale" or "auto", default "scale"
        RBF width for ``kernel="rbf"`` (``"scale"``: scikit-learn's ``1 / (d X.var())``).
    C : float
        Weight of the labeled losses (> 0).
    C_unlabeled_max : float
        End of the path (>= 0); ``C^*`` runs from 0 to here. The paper anneals up to
        ``C^* = C``; larger values are allowed (the problem stays well defined: the unlabeled
        points then weigh more than the labeled ones).
    boundary_tol : float
        A point counts as on the boundary when ``y_hat_i f(x_i) <= tol``, ``tol`` the larger
        of ``boundary_tol * min(max(1, min(C s, M)), 1e3)`` and ``256 eps M``, with ``M =
        max_i (|K| |beta|)_i`` the size of the terms of the margins (in the kernel's normalized
        units, ``s`` the power of two of the normalization below): a margin is zero to within
        its own rounding, whatever ``C``.
    refactor_every : int
        Passed to the homotopy engine.
    max_jumps : int, optional
        Safety cap on DJ iterations (default ``10 n + 100``).
    engine : {"fast", "generic"}
        How the CP-steps are traced: ``"fast"`` runs the plain events in a compiled loop
        (:mod:`pathlib_core.s3vm._fast`) and hands degenerate ones to the generic engine;
        ``"generic"`` uses :func:`pathlib_core.core.homotopy.trace_path` throughout. Both give the
        same path (up to rounding); ``"generic"`` is the reference the tests compare with.

    Returns
    -------
    SolutionPath
        ``param_name == "C_unlabeled"``; ``path.at(t)`` is an :class:`S3VMSolution`; at a
        jump ``at`` returns the solution after it (``side="left"`` the one before). Events
        ``"enter"`` / ``"leave"`` (index-set changes of the CP-steps, ``info["from"/"to"]``)
        and ``"jump"`` (one per DJ iteration, ``indices`` the flipped points, ``info`` with
        ``J_before``, ``J_after``, ``min_margin_after``). ``kkt_residuals()`` are the
        relative KKT residuals of the interior conditional problem. ``path.info`` has
        ``intercept``, ``n_jumps``, ``n_qp``, ``time``, ``n_restarts`` and
        ``max_restart_gap`` (see ``_trace_chunk``), ``stuck`` (unlabeled points whose flip
        did not decrease ``J`` -- degenerate boundary points where the strict decrease of
        Theorem 5 fails, e.g. a zero feature vector with ``b = 0``; they are exempt from the
        boundary checks) and
        ``min_interior_margin`` (the
        smallest ``y_hat_i f(x_i)``, i in U, over the breakpoints just after each DJ-step),
        ``kernel_scale`` (``s`` below).

    Notes
    -----
    *Scale.* The problem has the exact symmetry ``(s K, C / s, C^* / s) -> (beta / s, f)``
    (and ``J / s``). The path is traced for ``K / s``, ``s`` the power of two nearest to
    ``max |K|`` (exact in floating point), and reported in the user's units, so a kernel of
    any magnitude is the same problem to the engine (bit for bit when the factor is a power
    of two). ``C_unlabeled_max`` may be of any size: past the last event the CP-step's
    solution is affine in ``C^*`` up to the end.

    *Kernels that are not positive semi-definite* make the conditional problems non-convex;
    an ``O(n^2)`` screen of the kernel, negative curvature met by a factorization, or a failed
    solve trigger an eigenvalue check that raises ``ValueError`` naming ``K``.

    Raises
    ------
    ValueError
        Bad input (naming the argument), or ``K`` not positive semi-definite.
    pathlib_core.core.exceptions.HomotopyError
        A degenerate event that cannot be resolved, or more than ``max_jumps`` label flips.
    pathlib_core.core.exceptions.SolverError
        A conditional problem of a DJ-step was not solved.
    """
    t_start = time.perf_counter()
    Kv, yv, lab, unl = check_s3vm_inputs(kernel_matrix(X, kernel, gamma), y, "X")
    C = positive_scalar(C, "C")
    Cmax = positive_scalar(C_unlabeled_max, "C_unlabeled_max", allow_zero=True)
    check_choice(engine, "engine", ("fast", "generic"))
    btol = positive_scalar(boundary_tol, "boundary_tol")
    screen_psd(Kv, "X")
    s = kernel_scale_pow2(Kv)
    C_n, Cmax_n = C * s, Cmax * s
    for name, val, val_n in (("C", C, C_n), ("C_unlabeled_max", Cmax, Cmax_n)):
        if not np.isfinite(val_n) or (val > 0 and val_n == 0.0):
            raise ValueError(f"{name}={val} is outside the floating-point range for this "
                             f"kernel ({name} * max|K| over- or underflows)")
    Kn = Kv / s if s != 1.0 else Kv
    n = Kv.shape[0]
    max_j = 10 * n + 100 if max_jumps is None else int(max_jumps)
    psd_check = lambda: check_psd(Kv, "X")  # noqa: E731
    try:
        params, recs, events, info = _trace_s3vm(Kn, yv, lab, unl, C_n, Cmax_n, btol,
                                                 refactor_every, max_j, engine, psd_check)
    except (PathlibCoreError, ValueError, np.linalg.LinAlgError) as exc:
        # every input is valid here: a failure inside the solvers with a kernel that is not
        # PSD (a non-convex conditional problem) is reported as such, naming K
        try:
            psd_check()
        except ValueError as err:
            raise err from exc
        if isinstance(exc, HomotopyError):
            units = "" if s == 1.0 else f" (t = {s:g} C*, the kernel scaled by 1/{s:g})"
            raise HomotopyError(f"{exc}{units}{conditioning_note(Kv)}") from exc
        raise
    b = info["intercept"]
    if s != 1.0:
        recs = [S3VMSolution(r.coef / s, r.intercept, r.decision, r.theta / s, r.labels)
                for r in recs]
        events = [Event(e.param / s, e.kind, e.indices,
                        _scale_jump_info(e.info, s) if e.kind == "jump" else dict(e.info))
                  for e in events]
    residual = _residual_fn(Kn, lab, b, C_n)
    info.update(kernel_scale=s, time=time.perf_counter() - t_start)
    return SolutionPath.piecewise_linear("C_unlabeled", [t / s for t in params], recs, events,
                                 residual=lambda t, r: residual(t * s, r, s),
                                 direction=1, info=info)


def _scale_jump_info(info: dict, s: float) -> dict:
    out = dict(info)
    for key in ("J_before", "J_after"):
        out[key] = info[key] / s
    return out


def _trace_s3vm(Kv, yv, lab, unl, C, Cmax, btol, refactor_every, max_j, engine, psd_check):
    """Algorithm 1 in the kernel's normalized units; returns (params, recs, events, info)."""
    n = Kv.shape[0]
    b = class_balance_bias(yv)
    idx_u = np.flatnonzero(unl)
    fscale = [max(1.0, C)]  # the size of the terms of f (updated below)
    absK = np.abs(Kv)

    def tol_now(rec):
        # M: the size of the margins' terms, |K| |beta| (|b| <= 1). A margin counts as zero
        # within boundary_tol max(1, min(C, M)) (at most 1e3 boundary_tol) or within 256 eps M,
        # its own rounding, whichever is larger
        M = float(np.max(absK @ np.abs(rec.coef)))
        fscale[0] = max(min(max(1.0, min(C, M)), 1e3), 256 * np.finfo(float).eps * M / btol)
        return btol * fscale[0]

    # C* = 0: the supervised SVM with the fixed bias (unlabeled thetas are 0)
    ylab = np.where(lab, yv, 1.0)
    theta = supervised_fixed_bias(Kv, ylab, lab, b, C)
    n_qp = 1
    f_u = (Kv @ (ylab * theta) + b)[unl]
    ylab[unl] = np.where(f_u >= 0, 1.0, -1.0)
    rec = _record(Kv, ylab, theta, np.zeros(n), b)
    params, recs, events = [0.0], [rec], [Event(0.0, "start", (), {})]
    t = 0.0
    n_jumps = 0
    n_cp = {"n_events": 0, "n_chunks": 0, "n_restarts": 0, "max_restart_gap": 0.0,
            "n_engine_events": 0, "n_fast_fallbacks": 0}
    theta = rec.theta
    min_interior = np.inf
    stuck = np.zeros(n, dtype=bool)  # exempt now
    ever_stuck = np.zeros(n, dtype=bool)
    while True:
        # DJ-step (Algorithm 3): flip boundary labels until strictly interior
        tol = tol_now(rec)
        act = idx_u[~stuck[idx_u]]
        marg = ylab[act] * rec.decision[act]
        S = act[marg <= tol]
        jumped = False
        while S.size:
            n_jumps += 1
            if n_jumps > max_j:
                raise HomotopyError(f"more than max_jumps={max_j} label flips at C*={t}")
            J0 = _objective(Kv, ylab, lab, rec.coef, b, C, t)
            ylab = ylab.copy()
            ylab[S] = -ylab[S]
            rec, gamma, k = _conditional(Kv, ylab, lab, b, C, t, rec.theta,
                                         viol_tol=btol * fscale[0] / 10.0)
            n_qp += k
            J1 = _objective(Kv, ylab, lab, rec.coef, b, C, t)
            marg_all = ylab * rec.decision
            if J1 >= J0 - 1e-12 * max(1.0, abs(J0)):
                # no strict decrease (degenerate: the polytope constraint is weakly active for
                # both labels, or f(x_i) cannot move at all, e.g. a zero feature vector with
                # b = 0): the points of S still on the boundary are excluded from further
                # boundary checks, otherwise the DJ-step would cycle
                stuck[S[marg_all[S] <= tol]] = True
                ever_stuck |= stuck
            act = idx_u[~stuck[idx_u]]
            marg = marg_all[act]
            events.append(Event(t, "jump", tuple(int(i) for i in S),
                                {"J_before": J0, "J_after": J1,
                                 "qp_iterations": sum(_LAST_ITERS),
                                 "min_margin_after": float(marg.min(initial=np.inf))}))
            S = act[marg <= tol]
            jumped = True
        act = idx_u[~stuck[idx_u]]
        if act.size:
            min_interior = min(min_interior, float((ylab[act] * rec.decision[act]).min()))
        if jumped:
            params.append(t)
            recs.append(rec)
        if t >= Cmax:
            break
        # CP-step (Algorithm 2)
        tol = tol_now(rec)
        ps, rs, evs, t_new, hit, st = _cp_step(Kv, ylab, lab, b, C, t, Cmax, rec.theta,
                                               refactor_every, ~lab & ~stuck,
                                               exempt=~lab & stuck, exempt_tol=tol,
                                               fast=engine == "fast", boundary_tol=tol,
                                               psd_check=psd_check)
        # an exempt point that would leave its polytope is back on the boundary at t_new:
        # it is checked (and flipped) again by the next DJ-step
        stuck[st.get("exempt_hit", [])] = False
        n_cp["n_events"] += st["n_events"]
        n_cp["n_chunks"] += st["n_chunks"]
        n_cp["n_restarts"] += st["n_restarts"]
        n_cp["max_restart_gap"] = max(n_cp["max_restart_gap"], st["max_restart_gap"])
        n_cp["n_engine_events"] += st.get("n_engine_events", 0)
        n_cp["n_fast_fallbacks"] += st.get("n_fast_fallbacks", 0)
        params.extend(ps[1:])
        recs.extend(rs[1:])
        events.extend(Event(e.param, e.kind, e.indices, dict(e.info)) for e in evs)
        t = t_new
        rec = recs[-1]
        theta = rec.theta
        if not hit:
            break
    del theta
    info = {
        "intercept": b,
        "stuck": [int(i) for i in np.flatnonzero(ever_stuck)],
        "n_jumps": n_jumps,
        "n_qp": n_qp,
        "n_cp_events": n_cp["n_events"],
        "n_cp_chunks": n_cp["n_chunks"],
        "n_restarts": n_cp["n_restarts"],
        "max_restart_gap": n_cp["max_restart_gap"],
        "n_engine_events": n_cp["n_engine_events"],
        "n_fast_fallbacks": n_cp["n_fast_fallbacks"],
        "engine": engine,
        "min_interior_margin": min_interior,
    }
    return params, recs, events, info


def path_objective(K, y, path: SolutionPath, t: float, *, C: float, side=None) -> float:
    """``J(f, y_hat)`` of the path's solution at ``C^* = t`` (see :func:`s3vm_objective`)."""
    rec = path.at(t, side=side)
    return s3vm_objective(K, y, rec.labels, rec.coef, rec.intercept, C=C, C_unlabeled=t)


# ---------------------------------------------------------------------------------------------
# exact model selection of C* over the continuum
# ---------------------------------------------------------------------------------------------
def validation_error_profile(path: SolutionPath, K_val, y_val):
    """Validation error as a piecewise-constant function of ``C^*`` along the whole path.

    ``K_val[i, j] = K(x_i, x_val_j)`` (training rows). On each linear piece the validation
    decision values are affine in ``C^*``, so their sign changes are found exactly. Returns
    ``(grid, errors)``: sorted parameter values (breakpoints, sign changes and the midpoints
    between them) and the error rate at each (``at`` semantics: after a jump).
    """
    Kc = np.asarray(K_val, dtype=float)
    yv = np.asarray(y_val, dtype=float)
    pts = set(path.breakpoints.tolist())
    for seg in path.segments:
        if seg.hi <= seg.lo:
            continue
        f0 = seg.evaluate(seg.lo) if not hasattr(seg, "rec_lo") else seg.rec_lo
        f1 = seg.rec_hi if hasattr(seg, "rec_hi") else seg.evaluate(seg.hi)
        v0 = Kc.T @ f0.coef + f0.intercept
        v1 = Kc.T @ f1.coef + f1.intercept
        ch = (v0 * v1) < 0
        if np.any(ch):
            s = v0[ch] / (v0[ch] - v1[ch])
            pts.update((seg.lo + s * (seg.hi - seg.lo)).tolist())
    grid = np.array(sorted(pts))
    mids = 0.5 * (grid[:-1] + grid[1:])
    grid = np.array(sorted(set(grid.tolist()) | set(mids.tolist())))
    errs = np.array([np.mean(np.where(path.at(t).decision_function(Kc) >= 0, 1.0, -1.0) != yv)
                     for t in grid])
    return grid, errs


def select_C_unlabeled(path: SolutionPath, K_val, y_val) -> tuple[float, float]:
    """``C^*`` minimizing the validation error over the whole path (ties: the largest)."""
    grid, errs = validation_error_profile(path, K_val, y_val)
    best = float(errs.min())
    t = float(grid[np.flatnonzero(errs <= best)[-1]])
    return t, best


# ---------------------------------------------------------------------------------------------
# independent oracle
# ---------------------------------------------------------------------------------------------
def conditional_solution_cvxpy(K, y, labels, *, C, C_unlabeled, tol: float = 1e-10):
    r"""Independent solve of the conditional problem (eq. (5)) in the *primal* with cvxpy.

    .. math::

        \min_\beta \; \tfrac12 \beta^\top K \beta + C \sum_{i \in L} [1 - y_i f_i]_+
        + C^* \sum_{i \in U} [1 - \hat y_i f_i]_+
        \quad \text{s.t.} \quad \hat y_i f_i \ge 0 \; (i \in U), \qquad f = K\beta + b,

    with CLARABEL (``K = L L'`` by an eigendecomposition). Returns ``(objective, decision)``,
    the optimal ``J`` and ``f`` on the training points (unique although ``beta`` may not be).
    """
    import cvxpy as cp

    from ..core.qp import psd_factor, solver_options

    Kv, yv, lab, unl = check_s3vm_inputs(K, y)
    ylab = _check_labels(labels, yv, lab, unl)
    C = positive_scalar(C, "C")
    Cu = positive_scalar(C_unlabeled, "C_unlabeled", allow_zero=True)
    b = class_balance_bias(yv)
    Lf = psd_factor(Kv)
    u = cp.Variable(Lf.shape[1])  # f = L u + b, ||w||^2 = ||u||^2 (u = L' beta)
    f = Lf @ u + b
    hinge = cp.pos(1 - cp.multiply(ylab, f))
    wts = np.where(lab, C, Cu)
    obj = 0.5 * cp.sum_squares(u) + wts @ hinge
    iu = np.flatnonzero(unl)
    prob = cp.Problem(cp.Minimize(obj), [cp.multiply(ylab[iu], f[iu]) >= 0])
    try:
        prob.solve(solver="CLARABEL", **solver_options("CLARABEL", tol))
    except cp.error.SolverError:  # pragma: no cover - retried with defaults
        prob.solve(solver="CLARABEL")
    return float(prob.value), np.asarray(Lf @ u.value + b)
