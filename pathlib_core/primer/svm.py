r"""The entire regularization path of the support vector machine.

The SVM dual with a precomputed kernel ``K`` and labels ``y`` in ``{-1, +1}``,

.. math::

    \min_\alpha \; \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha
    \quad \text{s.t.} \quad y^\top \alpha = 0, \quad 0 \le \alpha \le C,
    \qquad Q = (y y^\top) \circ K,

is a parametric QP in ``C`` whose solution is piecewise linear in ``C`` (Hastie, Rosset,
Tibshirani and Zhu 2004, "The entire regularization path for the support vector machine",
JMLR 5:1391-1415; their ``lambda = 1 / C`` and ``alpha_i / C``). The points split into three
sets: the *elbow* ``E`` (``0 < alpha_i < C``, ``y_i f(x_i) = 1``), the *left* set ``L``
(``alpha_i = C``, ``y_i f(x_i) <= 1``) and the *right* set ``R`` (``alpha_i = 0``,
``y_i f(x_i) >= 1``). The decision function is ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``;
the intercept ``b`` is the multiplier of ``y' alpha = 0``.

:func:`svm_path` is a client of the generic engine
:func:`pathlib_core.core.homotopy.parametric_qp_path`
(ties, singular kernels and cycling are handled there) and of its lean SVM event loop
(:mod:`pathlib_core.primer._svm_fast`).

Numerics
--------
*Scale.* The dual has the exact symmetry ``(s K, C / s) -> (alpha / s, b)`` (the decision
function is unchanged). The path is traced for ``K / s`` with ``s`` the power of two nearest
to ``max |K|`` (an exact operation in floating point) and reported in the user's units, so a
kernel of any magnitude (features scaled by ``1e-8`` or ``1e8``: ``K`` of order ``1e-16`` or
``1e16``) is the same problem to the engine, bit for bit when the factor is a power of two.

*Any C range.* The exact start is an approximate ``SVC(kernel="precomputed")`` solution made
exact by the engine's polishing (index sets identified, KKT system solved, signs verified).
It is taken at ``C_max`` when ``C_max`` is at most ``2^10`` in the normalized units
(``C max|K| <~ 1e3``), where libsvm converges quickly; above that, at ``C = 2^10 / s``, from
where the path is traced upward to ``C_max`` and downward to ``C_min``. Upward, the path ends
at its last event: above it the index sets no longer change and the solution is affine in
``C`` up to ``C_max`` (one segment, whatever ``C_max``). Every tolerance of the trace is
relative to the data of the segment at hand (the slopes, the solution, the current ``C``),
never to ``C_max``. If a degenerate event defeats the tie resolution (rank-deficient kernels
with many ties), the path is traced again from the other end of the range (``C_min``, or
``2^10 / s`` if smaller), upward: the two traces give the same exact path, and a start in a
degenerate configuration at one end is often regular at the other (``info["n_start_retries"]``).

*Separable data.* When the left set is empty above the last event, the solution no longer
depends on ``C``: it is the hard-margin SVM (``min 1/2 alpha' Q alpha - 1' alpha``, ``y'
alpha = 0``, ``alpha >= 0``), reached at the last breakpoint below ``C_max``; the path's last
segment ``[C_last_event, C_max]`` is constant.

*Kernels that are not positive semi-definite.* The dual is then not convex and the path is not
defined. The kernel is screened in ``O(n^2)`` (non-negative diagonal, ``K_ij^2 <= K_ii K_jj``)
and the factorizations watch for negative curvature (a negative Schur complement when a point
joins the elbow, a negative diagonal entry of a rebuilt inverse); either, or a failure of the
path, triggers an eigenvalue check that raises ``ValueError`` naming ``K``. The full check is
not run on every call (an eigendecomposition, about half the time of a path on 569 points):
a path that never meets the negative curvature of a slightly indefinite kernel is made of KKT
points at which ``Q`` is positive definite on the elbow (local minima of the non-convex
dual); :func:`pathlib_core.core.validation.check_psd` validates a kernel beforehand.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..core.exceptions import HomotopyError
from ..core.homotopy import (
    FREE,
    LOWER,
    UPPER,
    QPPoint,
    conditioning_note,
    engine_info,
    kernel_scale_pow2,
    make_problem,
    screen_psd,
    trace_raw,
)
from ..core.kernels import gamma_value, linear_kernel, rbf_kernel
from ..core.kkt import QPData, qp_data_residuals, recover_bounds
from ..core.linalg import REFACTOR_EVERY
from ..core.solution_path import Event, SolutionPath
from ..core.threads import single_blas_thread
from ..core.validation import (
    as_binary_labels,
    as_kernel,
    as_matrix,
    as_vector,
    check_choice,
    check_psd,
    finite_scalar,
    positive_scalar,
)
from ._svm_fast import trace_svm

__all__ = ["SVMSolution", "svm_path", "svm_kkt_residual", "kernel_matrix"]

_SET_NAMES = {"free": "elbow", "lower": "right", "upper": "left"}
_C_REF = 1024.0  # largest C of the libsvm start, in units where max|K| is in (1/2, 1]


@dataclass(frozen=True)
class SVMSolution:
    """SVM solution at one value of ``C``.

    Attributes
    ----------
    alpha : ndarray of shape (n,)
        Dual coefficients, ``0 <= alpha <= C``.
    intercept : float
        ``b`` in ``f(x) = sum_i alpha_i y_i K(x_i, x) + b``. Where it is not unique (empty
        elbow) it is the midpoint of the interval allowed by the KKT conditions at the
        breakpoints, linearly interpolated in between (see :func:`svm_path`).
    elbow, left, right : ndarray of bool, shape (n,)
        The index sets (``0 < alpha < C``; ``alpha = C``; ``alpha = 0``) of the segment
        containing ``C``; at a breakpoint, those of the segment just above it (larger ``C``),
        at ``C_max`` those at ``C_max``.
    """

    alpha: np.ndarray
    intercept: float
    elbow: np.ndarray = field(repr=False)
    left: np.ndarray = field(repr=False)
    right: np.ndarray = field(repr=False)

    def decision_function(self, K_test, y) -> np.ndarray:
        """``f`` on test points given ``K_test[i, j] = K(x_i, x_test_j)`` (train rows)."""
        return np.asarray(K_test).T @ (self.alpha * np.asarray(y, dtype=float)) + self.intercept


def svm_kkt_residual(K, y, C: float, alpha, intercept: float) -> float:
    r"""Largest componentwise relative KKT residual of ``(alpha, intercept)`` at ``C``.

    The conditions checked are those of the dual (module docstring) with the intercept as
    the multiplier of :math:`y^\top\alpha = 0`:

    .. math::

        Q\alpha - \mathbf 1 + b\,y - w^{lb} + w^{ub} = 0, \qquad y^\top\alpha = 0, \qquad
        0 \le \alpha \le C, \qquad w^{lb}, w^{ub} \ge 0, \quad
        w^{lb}_i \alpha_i = w^{ub}_i (C - \alpha_i) = 0,

    each measured against its own terms (:func:`pathlib_core.core.kkt.qp_residuals` with
    ``relative=True``): stationarity row ``i`` against ``(|Q| |alpha|)_i + 1 + |b| + w_i``,
    the equality against ``sum |alpha|``, a bound against the box width ``C``, and
    complementarity as the smaller of the multiplier's share of its row and the slack
    relative to ``C``. The bound multipliers are read off the gradient ``g = Q alpha - 1 + b
    y`` with no threshold: ``g_i > 0`` is the multiplier of ``alpha_i >= 0`` and ``g_i < 0``
    that of ``alpha_i <= C``, so a point with a non-zero gradient counts as optimal only to
    the extent that it sits at the bound its gradient pushes it to. The residual is
    invariant under the symmetry ``(s K, C / s, alpha / s, b)`` and under a permutation of
    the points; a computed optimum gives ``1e-16``-``1e-13``.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Kernel matrix (symmetric to a relative ``1e-8``; it is symmetrized).
    y : array_like of shape (n,)
        Labels in {-1, +1}, both classes present.
    C : float > 0
        Regularization parameter (upper bound of ``alpha``).
    alpha : array_like of shape (n,)
        Dual variables to check.
    intercept : float
        Bias ``b``.

    Returns
    -------
    float
        The largest of the four relative residuals (stationarity, primal feasibility, dual
        feasibility, complementarity); zero (to rounding) exactly at an optimum, at most 1.

    Raises
    ------
    ValueError
        Bad input, naming the argument.
    """
    Kv = as_kernel(K, "K")
    yv = as_binary_labels(y, "y", length=Kv.shape[0], length_of="K")
    Cv = positive_scalar(C, "C")
    av = as_vector(alpha, "alpha", length=Kv.shape[0], length_of="K")
    return _svm_residual(Kv * np.outer(yv, yv), yv, Cv, av, finite_scalar(intercept, "intercept"))


def _svm_residual(Q, y, C, alpha, b) -> float:
    n = y.shape[0]
    d = QPData(Q, -np.ones(n), np.zeros((0, n)), np.zeros(0), y[None, :], np.zeros(1),
                np.zeros(n), np.full(n, C))
    grad = Q @ alpha - 1.0 + b * y
    # every gradient entry is the multiplier of the bound it pushes toward (no threshold)
    w_lb, w_ub = recover_bounds(grad, alpha, d.lb, d.ub, np.inf)
    with np.errstate(over="ignore"):  # the absolute products (unused) may overflow at huge C
        return qp_data_residuals(d, alpha, np.zeros(0), np.array([b]), w_lb, w_ub, True).max


def _start_alpha(K, y, C) -> np.ndarray:
    """Approximate solution at C with libsvm (exactness comes from the engine's polishing).

    On degenerate data (duplicates, a singular kernel) libsvm may stop at its iteration cap
    with a ``ConvergenceWarning``; the point is only a start, which the engine polishes to an
    exact KKT point (or reports a clear ``HomotopyError``), so the warning is not passed on.
    """
    import warnings

    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import SVC

    clf = SVC(kernel="precomputed", C=C, tol=1e-10, cache_size=500, max_iter=10**7)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        clf.fit(K, y)
    alpha = np.zeros(y.shape[0])
    alpha[clf.support_] = np.abs(clf.dual_coef_.ravel())
    return np.clip(alpha, 0.0, C)


def _trace_part(prob, y, C_from, C_to, x0, state0, *, until_last, solver, refactor_every):
    """One direction of the path (lean loop or generic engine): tracing-order lists."""
    if solver == "generic":
        t0 = time.perf_counter()
        params, points, events, eng, n_ev = trace_raw(
            prob, C_from, C_to, x0=x0, state0=state0, until_last_event=until_last,
            refactor_every=refactor_every)
        return params, points, events, engine_info(eng, n_ev, len(params), t0)
    return trace_svm(prob, y, C_from, C_to, x0, until_last_event=until_last,
                     refactor_every=refactor_every, state0=state0, names=_SET_NAMES)


def _upward_events(events) -> list[Event]:
    """Events of an upward trace described as ``C`` decreases (the path's convention)."""
    out = []
    free = ("free", _SET_NAMES["free"])
    for e in events:
        fr, to = e.info["to"], e.info["from"]
        kind = "enter" if to in free else "leave" if fr in free else "switch"
        out.append(Event(e.param, kind, e.indices, {"from": fr, "to": to}))
    return out


def _merge_info(parts, extra) -> dict:
    info: dict = {}
    for part in parts:
        for key, val in part.items():
            if key in ("max_drift", "max_ambiguous"):
                info[key] = max(info.get(key, 0.0), val)
            elif key != "n_breakpoints":
                info[key] = info.get(key, 0) + val
    info.update(extra)
    return info


#: the kernels a path function computes from data (besides ``"precomputed"``)
KERNELS = ("precomputed", "linear", "rbf")


def kernel_matrix(X, kernel: str = "precomputed", gamma="scale") -> np.ndarray:
    """The training kernel of a path function, as scikit-learn's ``SVC`` reads its arguments.

    ``kernel="precomputed"``: ``X`` is the kernel matrix (returned as given; the path
    function validates it). ``"linear"``: ``X X'``. ``"rbf"``: ``exp(-gamma |x - x'|^2)``
    with :func:`~pathlib_core.core.kernels.gamma_value`.
    """
    check_choice(kernel, "kernel", KERNELS)
    if kernel == "precomputed":
        return X
    Xm = as_matrix(X, "X")
    if kernel == "linear":
        return linear_kernel(Xm)
    return rbf_kernel(Xm, gamma=gamma_value(gamma, Xm))


@single_blas_thread
def svm_path(X, y, *, kernel: str = "precomputed", gamma="scale", C_min: float | None = None,
             C_max: float, alpha0=None, refactor_every: int = REFACTOR_EVERY,
             solver: str = "lean") -> SolutionPath:
    r"""Exact regularization path of the kernel SVM for ``C`` in ``[C_min, C_max]``.

    Solves, for every ``C``, the dual

    .. math::

        \min_\alpha \; \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha
        \quad \text{s.t.} \quad y^\top \alpha = 0, \; 0 \le \alpha \le C,
        \qquad Q_{ij} = y_i y_j K_{ij},

    by the piecewise-linear homotopy of Hastie, Rosset, Tibshirani and Zhu (2004). In the
    primer chapter (``notebooks/primer/01_svm_path``) this dual is equation ``(svm-dual)``,
    the optimality conditions that define the index sets are ``(svm-stationarity)``-
    ``(svm-sets)``, and the affine solution between two events is ``(svm-segment)``. The
    module docstring describes the numerics (scaling, the start, any ``C_max``).

    Parameters
    ----------
    X : array_like of shape (n, n) or (n, d)
        The kernel matrix ``K`` when ``kernel="precomputed"`` (the default; symmetric positive
        semi-definite, may be singular, e.g. a linear kernel with ``d < n`` or duplicate
        points; any magnitude), else the data, from which ``K`` is computed.
    y : array_like of shape (n,)
        Labels in ``{-1, +1}``; both classes present, any class sizes.
    kernel : {"precomputed", "linear", "rbf"}, default "precomputed"
        How ``K`` is obtained from ``X`` (:func:`kernel_matrix`).
    gamma : float, "scale" or "auto", default "scale"
        RBF width for ``kernel="rbf"`` (:func:`~pathlib_core.core.kernels.gamma_value`;
        ``"scale"`` is scikit-learn's ``1 / (d X.var())``).
    C_max : float
        Largest ``C`` (> 0), any size: above the path's last event the solution is affine in
        ``C`` (constant on separable data: the hard-margin SVM).
    C_min : float, optional
        Smallest ``C`` (``0 < C_min <= C_max``). ``None``: the path ends at its smallest event
        ``C_min = C_last`` (the first event of Hastie et al.'s path, their ``1 / lambda_0``;
        the trace goes down to ``1 / (2 max_i sum_j |K_ij|)``, a lower bound of it). Below it
        the index sets no longer change and the solution is ``alpha(C) = (C / C_last)
        alpha(C_last)`` (the last segment extends linearly to ``alpha(0) = 0``; the intercept
        is affine in ``C`` there). If there is no event below ``C_max`` the path is the single
        point ``C_max``.
    alpha0 : array_like of shape (n,), optional
        A (possibly approximate) solution at ``C_max``; the trace then starts at ``C_max``
        from it. Default: libsvm via scikit-learn, at ``min(C_max, 2^10 / s)`` (module
        docstring).
    refactor_every : int
        Full re-factorization of the KKT matrix every this many updates (drift control).
    solver : {"lean", "generic"}
        ``"lean"`` (default): an event loop specialised to the SVM (``O(n |E|)`` per event,
        ``E`` the elbow) that hands every degenerate event (ties, empty elbow, singular
        systems) to the generic engine and resumes after it; ``"generic"``: the generic
        engine :func:`pathlib_core.core.homotopy.parametric_qp_path` for every event. Both give the
        same path; the lean loop is several times faster.

    Returns
    -------
    SolutionPath
        ``param_name == "C"``, breakpoints increasing from ``C_min`` to ``C_max`` (both
        included); ``path.at(C)`` is an :class:`SVMSolution` in the user's units. Events
        ``"enter"`` (a point joins the elbow) and ``"leave"`` (it leaves the elbow), described
        as ``C`` decreases, with ``info = {"from": ..., "to": ...}`` among ``"elbow"``,
        ``"left"`` (``alpha = C``) and ``"right"`` (``alpha = 0``). ``kkt_residuals()`` are the
        componentwise relative residuals of :func:`svm_kkt_residual`. ``path.info`` has the
        engine statistics (``n_events``, ``n_refactorizations``, ``max_drift``, ``time``,
        ...) and ``kernel_scale`` (``s``), ``C_start`` (where the exact start was computed),
        ``C_last_event`` (the largest event, ``None`` without events) and ``hard_margin``
        (the left set is empty at ``C_max``: the solution does not change on
        ``[C_last_event, C_max]``, the path's last segment).

    Notes
    -----
    *Empty elbow.* When no point is in the elbow the intercept is not determined by the
    linear system, only confined to an interval by the sign conditions of the left and right
    sets (Hastie et al. 2004, sec. 4). The path reports the midpoint of that interval at every
    breakpoint where it is not a single point and interpolates linearly in between (feasible
    because the set of feasible ``(C, b)`` is convex); at the ``C`` where the interval
    shrinks to a point, points enter the elbow and the intercept is continuous there.

    *Singular kernels, duplicates, ties.* See :mod:`pathlib_core.core.homotopy`: a point whose
    kernel column is dependent on the elbow's stays at its bound with a zero multiplier
    (Hastie et al. 2004, sec. 6); simultaneous events are resolved jointly.

    Raises
    ------
    ValueError
        Bad input (non-finite values, shapes, labels, non-square or non-symmetric ``X``,
        ``C_max <= 0``, ``C_min`` outside ``(0, C_max]``, ``C`` beyond the floating-point
        range once multiplied by ``max|K|``), or a kernel that is not positive
        semi-definite (named ``X``, with its smallest eigenvalue).
    pathlib_core.core.exceptions.HomotopyError
        A degenerate event that cannot be resolved (reported with the ``C`` concerned).
    """
    t_start = time.perf_counter()
    Kv = as_kernel(kernel_matrix(X, kernel, gamma), "X")
    n = Kv.shape[0]
    yv = as_binary_labels(y, "y", length=n, length_of="X")
    C_max = positive_scalar(C_max, "C_max")
    check_choice(solver, "solver", ("lean", "generic"))
    if C_min is not None:
        C_min = positive_scalar(C_min, "C_min")
        if C_min > C_max:
            raise ValueError(f"C_min must be <= C_max; got C_min={C_min} > C_max={C_max}")
    screen_psd(Kv, "X")
    s = kernel_scale_pow2(Kv)
    Cmax_n = C_max * s
    if not np.isfinite(Cmax_n):
        raise ValueError(f"C_max={C_max} is beyond the floating-point range for this kernel "
                         f"(C_max * max|K| overflows; max|K| = {np.max(np.abs(Kv)):.3g})")
    Cmin_n = None if C_min is None else C_min * s
    if Cmin_n is not None and Cmin_n == 0.0:
        raise ValueError(f"C_min={C_min} is below the floating-point range for this kernel "
                         f"(C_min * max|K| underflows)")
    Kn = Kv / s if s != 1.0 else Kv
    Q = Kn * np.outer(yv, yv)
    prob = make_problem(Q, -np.ones(n), None, yv[None, :], np.zeros(1), np.zeros(1),
                         np.zeros(n), None, np.zeros(n), np.ones(n))
    prob.psd_check = lambda: check_psd(Kv, "X")
    to_last_event = Cmin_n is None
    if to_last_event:
        # below the first event of the path (Hastie et al. 2004, sec. 4: C_0 = 2 / (f_max -
        # f_min) with |f_i| <= sum_j |K_ij|) the index sets no longer change; the trace goes
        # down to this lower bound of C_0 and the path is cut at its smallest event (tracing
        # on toward C = 0 would only meet rounding: every value and slope scales with C)
        Cmin_n = min(0.5 / float(np.max(np.abs(Q).sum(axis=1))), Cmax_n)
    if alpha0 is None:
        starts = [min(Cmax_n, _C_REF)]
        if min(Cmin_n, _C_REF) < starts[0]:
            starts.append(min(Cmin_n, _C_REF))
    else:
        starts = [Cmax_n]
        a0 = as_vector(alpha0, "alpha0", length=n, length_of="X") * s
    kw = dict(solver=solver, refactor_every=refactor_every)
    for k, C_a in enumerate(starts):
        x0 = _start_alpha(Kn, yv, C_a) if alpha0 is None else np.clip(a0, 0.0, C_a)
        try:
            down, up = _trace_both(prob, yv, C_a, Cmax_n, Cmin_n, x0, kw)
            break
        except (HomotopyError, np.linalg.LinAlgError) as exc:
            prob.diagnose(exc)  # a kernel that is not PSD is named as the cause
            if k + 1 == len(starts):
                units = "" if s == 1.0 else f" (t = {s:g} C, the kernel scaled by 1/{s:g})"
                raise HomotopyError(f"{exc}{units}{conditioning_note(Kv)}") from exc
    params, points, states, events, info = _join(down, up, Cmin_n)
    if to_last_event:
        C_first = min((e.param for e in events), default=params[-1])
        k0 = int(np.searchsorted(params, C_first))
        params, points, states = params[k0:], points[k0:], states[k0:]
    info["n_start_retries"] = k
    C_last = max((e.param for e in events), default=None)
    info = {**info, "kernel_scale": s, "C_start": C_a / s,
            "C_last_event": None if C_last is None else C_last / s,
            "hard_margin": bool(not np.any(states[-1] == UPPER)),
            "time": time.perf_counter() - t_start}

    def residual(t, rec):
        return _svm_residual(Q, yv, t * s, rec.alpha * s, rec.intercept)

    recs = [SVMSolution(p.x / s if s != 1.0 else p.x, float(p.nu[0]), st == FREE, st == UPPER,
                        st == LOWER) for p, st in zip(points, states, strict=True)]
    if info["hard_margin"] and len(recs) > 1 and np.array_equal(states[-2], states[-1]):
        # the left set is empty above the last event: the solution does not depend on C there
        # (the hard-margin SVM); both ends of the last segment carry the end point's exact
        # solve, so the segment is constant bit for bit
        recs[-2] = recs[-1]
    evs = [e if s == 1.0 and e.info["from"] not in _SET_NAMES and e.info["to"] not in _SET_NAMES
           else Event(e.param / s, e.kind, e.indices,
                      {"from": _SET_NAMES.get(e.info["from"], e.info["from"]),
                       "to": _SET_NAMES.get(e.info["to"], e.info["to"])}) for e in events]
    return SolutionPath.piecewise_linear("C", [t / s for t in params], recs, evs, residual=residual,
                                 direction=-1, info=info)


def _trace_both(prob, y, C_a, Cmax_n, Cmin_n, x0, kw):
    """The path below and above the start ``C_a`` (normalized units), in tracing order."""
    C_end = min(Cmin_n, C_a)
    if C_end < C_a:
        down = _trace_part(prob, y, C_a, C_end, x0, None, until_last=False, **kw)
    else:  # the whole range lies above the start: only its exact solution is needed here
        down = _trace_part(prob, y, C_a, C_a, x0, None, until_last=False, **kw)
        down = (down[0][:1], down[1][:1], [], down[3])
    up = None
    if Cmax_n > C_a:
        p0 = down[1][0]
        up = _trace_part(prob, y, C_a, Cmax_n, p0.x, p0.state, until_last=False, **kw)
    return down, up


def _join(down, up, Cmin_n):
    """One increasing list of breakpoints from the two traces, with the index sets of the
    segment above each breakpoint (the top one its own); ``C_min`` above the start cuts the
    upward part. Returns ``(params, points, states, events, info)``."""
    params, points, events, info_d = down
    params, points = params[::-1], points[::-1]
    states = [p.state for p in points[1:]] + [points[-1].state]
    events = list(events)
    infos = [info_d]
    if up is not None:
        pu, ptu, evu, info_u = up
        points[-1] = ptu[0]  # at the start: the index sets of the segment above it
        states[-1] = ptu[0].state
        events += _upward_events(evu)
        infos.append(info_u)
        if len(params) > 1 and len(pu) > 1 and not any(e.param == pu[0] for e in events) \
                and np.array_equal(states[-2], states[-1]):
            # the start is inside a segment (no event there): not a breakpoint
            params, points, states = params[:-1], points[:-1], states[:-1]
        params = params + list(pu[1:])
        points = points + list(ptu[1:])
        states = states + [p.state for p in ptu[1:]]
    if Cmin_n > params[0]:
        k = int(np.searchsorted(params, Cmin_n, side="right")) - 1
        if params[k] < Cmin_n:
            w = (Cmin_n - params[k]) / (params[k + 1] - params[k])
            a, b = points[k], points[k + 1]
            cut = QPPoint((1 - w) * a.x + w * b.x, (1 - w) * a.nu + w * b.nu, None, None,
                          states[k])
            params, points = [Cmin_n] + params[k + 1:], [cut] + points[k + 1:]
            states = states[k:k + 1] + states[k + 1:]
        else:
            params, points, states = params[k:], points[k:], states[k:]
        events = [e for e in events if e.param > Cmin_n]
    if len(params) == 2 and params[0] == params[1]:
        params, points, states = params[1:], points[1:], states[1:]
    return params, points, states, events, _merge_info(infos, {"n_breakpoints": len(params)})
