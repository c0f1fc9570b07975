r"""One fit of the selective-ridge criterion (11): :func:`selective_fit`.

The dual method runs the set iteration (:mod:`.set_iteration`); for the hinge loss the sets
are searched first (:mod:`.hinge_search`); a squared-loss set iteration that stalls hands
over to the augmented Lagrangian search (:mod:`.alm`) and then to the homotopy in ``mu``
(:mod:`.homotopy`); a cvxpy solve of the dual is the last resort. Every result is certified
by its set conditions, its duality gap and its componentwise KKT residuals.
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..core.exceptions import SolverError
from ..core.threads import single_blas_thread
from ..core.validation import check_choice, positive_int, positive_scalar
from .alm import alm_sets
from .cvxpy_solves import _dual_cvxpy, _primal_fit
from .hinge_search import _hinge_search
from .homotopy import _mu_homotopy
from .objectives import (
    _best_intercept,
    _check,
    _duality_gap,
    _kkt_residuals,
    _primal_objective,
    _scores,
)
from .result import SelectiveResult
from .set_iteration import _dual_fit, _resolve_on_sets
from .units import SET_TOL, _FeatureTol, _FitContext, _Units

__all__ = ["selective_fit"]

STALL_ITER = 8  # squared loss, warm start: set iterations before the ALM search takes over
SET_ITER = 20  # squared loss, cold start: set iterations before the ALM search takes over
HINGE_STALL_WINDOW = 15  # hinge loss: iterations without progress before the search / cvxpy
GAP_GUARD = 1e-6  # a "converged" fit whose relative duality gap exceeds this is refused
KKT_GUARD = 1e-8  # ... and one whose largest componentwise KKT residual exceeds this
METHODS = ("dual", "primal")


@single_blas_thread
def selective_fit(X, y, *, alpha, mu, loss="squared", method="dual", warm_start=None,
                  max_iter=200, tol=SET_TOL, set_search=True) -> SelectiveResult:
    r"""Fit the selective ridge criterion (11) at one ``(alpha, mu)``.

    .. math::

        \min_{a, b}\; \gamma \sum_{i=1}^{n} \big(2\mu|a_i| + \max(0, |a_i|-\mu)^2\big)
            + \sum_{j=1}^{N} q(y_j, a^\top x_j + b)

    Parameters
    ----------
    X : array_like of shape (N, n)
        Objects in rows, features in columns (``n >> N`` is the intended regime).
    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or class labels -1 / +1 (``loss="hinge"``; both
        classes present).
    alpha : float > 0
        Weight of the penalty: the paper's :math:`\gamma` in (11) (``alpha`` here, as in
        scikit-learn's ``Ridge``, since ``gamma`` names a kernel width elsewhere).
    mu : float >= 0
        Selectivity. ``mu = 0`` is ridge regression / the L2 SVM penalty; ``mu >= mu_0(X, y)``
        gives ``coef == 0``.
    loss : {"squared", "hinge"}
        Link function (7) or (8).
    method : {"dual", "primal"}
        ``"dual"``: the active-feature-set iteration (27)-(32) on the ``N`` multipliers, with
        inner problem the ``(N+1) x (N+1)`` system (34)-(35) (squared loss; extended by the
        kink rows, see the module notes) or a size-``N`` QP solved by
        :func:`pathlib_core.core.qp.solve_qp` (hinge, (37)). ``"primal"``: (11) with cvxpy
        (Clarabel), the reference.
        If the set iteration stalls (squared loss: ``SET_ITER`` = 20 iterations from a cold
        start, ``STALL_ITER`` = 8 from a warm start), an augmented Lagrangian search in the
        ``N`` multipliers proposes the feature sets (:mod:`pathlib_core.selective_ridge.alm`) and
        the set iteration re-solves exactly on them (``info["alm_newton"]`` counts its
        Newton systems). If that fails, the exact homotopy in ``mu`` takes over (for fixed
        sets the solution is affine in ``mu``; it is followed from the warm start's sets, or
        from the empty model at ``mu_0``, to ``mu``, one set change per breakpoint); only if
        that fails too, the iteration restarts from the sets of a cvxpy solve of the dual.
        For the hinge loss the sets are searched first (:mod:`pathlib_core.selective_ridge.cuts`):
        the dual's linear program, exact when no feature is strong, by constraint generation
        with HiGHS (``info["lp_rounds"]`` LP solves); if its multipliers ask for strong
        features, the split QP (interior-point rounds, ``info["qp_rounds"]``, then one exact
        active-set solve on the tight rows). The sets found are re-solved by the set iteration
        and checked. A warm start seeds both with its active features (one that has strong
        features skips the LP). Only if the search fails does the set iteration run, until
        it stops making progress (from its tenth iteration on, the number of violated set
        conditions has not fallen by 10 % within ``HINGE_STALL_WINDOW`` = 15 iterations);
        the cvxpy restart is the last resort. Every returned result meets the same set
        conditions (20).
    warm_start : SelectiveResult, optional
        A previous dual solution (e.g. at a nearby ``mu``): its multipliers and feature sets
        start the iteration.
    max_iter : int >= 1
        Cap on outer iterations of the dual method. A float is accepted only with an
        integral value (``200.0``); ``0.5`` is rejected, not truncated.
    tol : float > 0
        Tolerance of the feature-set conditions (20), relative to each feature's own terms:
        feature ``i`` is held to ``tol (||x^i|| ||lambda|| + mu)`` (see the notes on scale).
    set_search : bool, default True
        Search the feature sets before (hinge loss) or when (squared loss) the set iteration
        stalls: the augmented Lagrangian search of :mod:`.alm` for the squared loss, the LP /
        split-QP search of :mod:`.cuts` for the hinge loss. ``False`` leaves the set iteration
        alone with its fallbacks (the homotopy in ``mu`` for the squared loss, the cvxpy
        restart), e.g. to see what the homotopy does by itself; the result is certified the
        same way and is the same optimum.

    Returns
    -------
    SelectiveResult

    Raises
    ------
    ValueError
        Bad input, naming the argument (``alpha <= 0``, ``mu < 0``, hinge labels that are not
        two classes, NaN / inf, mismatched shapes, unknown ``loss`` / ``method``,
        ``max_iter`` not an integer >= 1).
    pathlib_core.core.exceptions.SolverError
        The dual iteration did not reach its optimality conditions within ``max_iter``, or
        its result's relative duality gap exceeds 1e-6 or a componentwise KKT residual
        (:func:`kkt_residuals`) exceeds 1e-8 (never a silently unconverged result).

    Notes
    -----
    Scale. Criterion (11) has the exact symmetry ``(X, y, alpha, mu) -> (s X, t y,
    alpha s^2, mu t / s)``, whose solution is ``(t a / s, t b)`` with multipliers
    ``t lambda / s^2`` (hinge loss: ``t = 1``; see :class:`_Units`). The fit runs on
    ``X / 2^k`` when the largest column norm of ``X`` lies outside ``[2^-16, 2^20)`` and, for the
    squared loss, on ``y / 2^l`` (powers of two: exact), and the results are converted
    back; so a power-of-two scaling of such an ``X`` or of ``y`` scales the results by
    exactly the factors above. Scaling single features is not a symmetry (``r_mu`` is not
    homogeneous: feature ``i`` scaled by ``d_i`` is a feature of penalty weight
    ``1 / d_i^2`` and selectivity ``mu d_i``), so every condition is held relative to the
    size of its own terms instead: feature scales from ``1e-8`` to ``1e8`` in one matrix
    give certified fits. The hinge loss's linear programs and QPs are solved in multipliers
    divided by their box width, so that the solvers' absolute tolerances meet a problem of
    unit size whatever ``alpha`` is.
    """
    X, y, alpha, mu, loss = _check(X, y, alpha, mu, loss)
    if mu is None:  # pragma: no cover - _check always returns a number here
        raise ValueError("mu is required")
    method = check_choice(method, "method", METHODS)
    if warm_start is not None and not isinstance(warm_start, SelectiveResult):
        raise ValueError("warm_start must be a SelectiveResult from selective_fit; got "
                         f"{type(warm_start).__name__}")
    if warm_start is not None and warm_start.dual.shape != (X.shape[0],):
        raise ValueError(f"warm_start must come from a problem with {X.shape[0]} objects")
    max_iter = positive_int(max_iter, "max_iter")
    tol = positive_scalar(tol, "tol")
    set_search = _check_flag(set_search, "set_search")
    units = _Units.of(X, y, loss)
    Xs, ys = units.data(X, y)
    warm = None if warm_start is None else units.result_in(warm_start)
    res = _selective_fit(Xs, ys, units.alpha_in(alpha), units.mu_in(mu), loss, method, warm,
                         max_iter, tol, units.context(Xs, tol), set_search)
    return units.result_out(res)


def _check_flag(value, name):
    """``value`` as a bool; ``ValueError`` naming ``name`` unless it is True or False."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def _selective_fit(X, y, alpha, mu, loss, method, warm_start, max_iter, tol,
                   ctx: _FitContext, set_search=True) -> SelectiveResult:
    """:func:`selective_fit` on validated arguments in the solver's units (see
    :class:`_Units`); ``ctx`` is shared by the fits of one path."""
    t0 = time.perf_counter()
    if method == "primal":
        coef, b, n_iter, status = _primal_fit(X, y, alpha, mu, loss)
        J = _primal_objective(X, y, coef, b, alpha=alpha, mu=mu, loss=loss)
        big = max(mu, float(np.abs(coef).max(initial=0.0)))
        return SelectiveResult(coef=coef, intercept=b, dual=np.zeros(X.shape[0]),
                               active=np.abs(coef) > 1e-8 * big, n_iter=n_iter,
                               objective=J, gap=math.nan, method="primal",
                               info={"time": time.perf_counter() - t0, "status": status})
    # squared loss: a set iteration that has not settled within its budget hands over to the
    # search for the sets (cheaper than letting it cycle up to max_iter); hinge loss: the
    # stall rule of _dual_fit hands over to the cvxpy restart
    squared = loss == "squared" and mu > 0
    budget = min(max_iter, SET_ITER if warm_start is None else STALL_ITER) if squared \
        else max_iter
    # hinge loss: search the sets first, by the dual's linear program (exact when no feature
    # is strong, the usual case down to about 0.01 mu_0 on the EEG-like data) and then the
    # split QP (strong features included); a warm start seeds both with its active features,
    # and one with strong features (which stay strong at a smaller mu) skips the LP. The set
    # iteration runs only if the search fails
    hinge = loss == "hinge" and mu > 0 and set_search
    counts = {"lp_rounds": 0, "qp_rounds": 0}
    warm_strong = warm_start is not None and np.any(warm_start.info.get("strong", False))
    out = _hinge_search(X, y, alpha, mu, max_iter, tol, warm_start, not warm_strong, counts,
                        ctx) if hinge else None
    if out is None:
        # a set iteration (cold or warm) whose sets outgrow N objects is in the regime where
        # it stalls: the search below is cheaper than letting it run its budget
        lam, coef, b, n_iter, converged, strong, kink = _dual_fit(
            X, y, alpha, mu, loss, warm_start, budget, tol,
            max_active=X.shape[0] if squared and set_search else None,
            stall_window=HINGE_STALL_WINDOW if loss == "hinge" else None, ctx=ctx)
    else:
        lam, coef, b, n_iter, converged, strong, kink = out
    rescued = False
    homotopy_steps = 0
    alm_newton = 0
    if not converged and squared and set_search:
        # the set iteration has not found the sets: search them with the augmented Lagrangian
        # method (N x N Newton systems), re-solve exactly on them and check (20)
        def certify(strong_a, kink_a, lam_a):
            return _resolve_on_sets(X, y, alpha, mu, loss, lam_a, strong_a, kink_a, max_iter,
                                    tol, ctx.ft)

        coef0 = warm_start.coef if warm_start is not None else None
        out, alm_newton = alm_sets(X, y, alpha, mu, certify, coef0=coef0)
        if out is not None:
            lam, coef, b, it2, converged, strong, kink = out
            n_iter += it2
    if not converged and loss == "squared" and mu > 0:
        # the set iteration stalled: follow the exact homotopy in mu (affine pieces, one set
        # change per breakpoint) from the warm start's sets, or from the empty model at mu_0
        start = None
        if warm_start is not None and warm_start.info.get("mu", -1.0) >= mu and \
                "strong" in warm_start.info:
            ws = warm_start.info
            K0 = np.flatnonzero(ws["kink"])
            sig0 = np.sign(X.T @ warm_start.dual)[K0]
            sig0[sig0 == 0] = 1.0
            start = (float(ws["mu"]), np.flatnonzero(ws["strong"]), K0, sig0)
        out = _mu_homotopy(X, y, alpha, mu, start, ctx.ft, max_steps=10 * X.shape[1] + 1000)
        if not out[4] and start is not None:
            out = _mu_homotopy(X, y, alpha, mu, None, ctx.ft, max_steps=10 * X.shape[1] + 1000)
        if out[4]:
            lam, coef, b, homotopy_steps, converged, strong, kink = out
            n_iter += homotopy_steps
    if not converged:
        # the set iteration stalled (it can cycle between feature sets): start it again
        # from the feature sets of a generic convex solve of the same N-variable dual
        lam0 = _dual_cvxpy(X, y, alpha, mu, loss)
        if lam0 is not None:
            s0 = X.T @ lam0
            # the interior-point solution is accurate to about 1e-6 relative on some scales
            # (its tolerances are absolute): a feature within 1e-4 mu of the kink starts in
            # the kink set, and the set iteration removes those that do not belong there
            delta = 1e-4 * mu
            start = SelectiveResult(coef=coef, intercept=b, dual=lam0, active=coef != 0,
                                    n_iter=0, objective=math.nan, gap=math.nan,
                                    method="dual",
                                    info={"kink": np.abs(np.abs(s0) - mu) <= delta})
            lam, coef, b, it2, converged, strong, kink = _dual_fit(
                X, y, alpha, mu, loss, start, max_iter, tol, ft=ctx.ft)
            n_iter += it2
            rescued = True
    return _certified_result(X, y, alpha, mu, loss, lam, coef, b, n_iter, converged, strong,
                             kink, t0, s=ctx.scores_of(lam), ctx=ctx, rescued=rescued,
                             homotopy_steps=homotopy_steps, alm_newton=alm_newton, **counts)


def _certified_result(X, y, alpha, mu, loss, lam, coef, b, n_iter, converged, strong, kink,
                      t0, s=None, ctx=None, ft=None, **info) -> SelectiveResult:
    """The :class:`SelectiveResult` of a dual solution, with its duality gap; raises
    :class:`~pathlib_core.core.exceptions.SolverError` if the set conditions were not met, or
    if they were and yet the duality gap or a componentwise optimality condition
    (:func:`kkt_residuals`) is not small (never an unconverged result). ``s``: ``X' lam``
    if already known; ``ctx``: remember ``(lam, s)`` for the next fit; ``ft``: the
    per-feature tolerances (``ctx.ft`` by default)."""
    z = _scores(X, coef) + b
    J = _primal_objective(X, y, coef, b, alpha=alpha, mu=mu, loss=loss, z=z)
    if s is None:
        s = X.T @ lam
    if ft is None:
        ft = ctx.ft if ctx is not None else _FeatureTol(X, SET_TOL)
    if converged and coef.any() and np.all(np.abs(s) <= mu + ft.at(lam, mu)):
        # no |s_i| above mu: the empty model can be optimal too, as at mu = mu_0 for the hinge
        # loss (several optima, e.g. duplicated features at |a_i| = mu); prefer it (41) when
        # it is one (the same lambda certifies it through the duality gap below)
        b0 = _best_intercept(np.zeros(X.shape[0]), y, loss, hint=b)
        J0 = _primal_objective(X, y, np.zeros_like(coef), b0, alpha=alpha, mu=mu, loss=loss)
        if J0 <= J * (1.0 + 1e-12):
            coef, b, J = np.zeros_like(coef), b0, J0
            z = np.full(X.shape[0], b0)
            kink = np.zeros_like(kink)
            strong = np.zeros_like(strong)
    gap = _duality_gap(X, y, coef, b, lam, alpha=alpha, mu=mu, loss=loss, s=s, J=J)
    kkt = math.nan
    if converged and not abs(gap) <= GAP_GUARD:
        converged = False  # the set conditions held, yet primal and dual disagree: refuse
    if converged:
        done = ctx.checked if ctx is not None else None
        if done is not None and done[0] is lam and done[1] is coef and done[2] == b:
            kkt = done[3]  # this very point was checked by the search that found it
        else:
            kkt = _kkt_residuals(X, y, coef, b, lam, alpha=alpha, mu=mu, loss=loss, s=s,
                                 s_terms=ft.norms * float(np.sqrt(lam @ lam)), z=z)["max"]
        converged = kkt <= KKT_GUARD
    if not converged:
        raise SolverError(f"selective_fit: the dual iteration stopped after {n_iter} "
                           f"iterations without meeting its optimality conditions "
                           f"(relative duality gap {gap:.3g}, largest relative KKT residual "
                           f"{kkt:.3g})")
    if ctx is not None:
        ctx.scores = (lam, s)
    return SelectiveResult(coef=coef, intercept=b, dual=lam, active=coef != 0, n_iter=n_iter,
                           objective=J, gap=gap, method="dual",
                           info={"time": time.perf_counter() - t0, "strong": strong,
                                 "kink": kink, "mu": mu, "rescued": False,
                                 "homotopy_steps": 0, "alm_newton": 0, "lp_rounds": 0,
                                 "qp_rounds": 0, **info})
