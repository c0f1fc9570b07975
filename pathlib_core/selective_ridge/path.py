r"""The rough regularization path along the selectivity axis (section V, eq. (42))."""

from __future__ import annotations

import time

import numpy as np

from ..core.solution_path import Event, FunctionSegment, SolutionPath
from ..core.threads import single_blas_thread
from ..core.validation import positive_int, positive_scalar
from .empty_model import _mu_0
from .fit import _certified_result, _check_flag, _selective_fit, selective_fit
from .homotopy import _mu_homotopy_multi
from .objectives import _check, _kkt_residuals
from .result import SelectiveResult
from .units import SET_TOL, _Units

__all__ = ["selectivity_path"]


def _homotopy_fits(X, y, alpha, start_fit, mus, max_iter, ctx, tol=SET_TOL, set_search=True):
    """Squared-loss fits at the decreasing ``mus`` from one homotopy pass that starts at the
    sets of ``start_fit``; a grid point the pass does not certify is fitted on its own."""
    t0 = time.perf_counter()
    info = start_fit.info
    K0 = np.flatnonzero(info["kink"])
    sig0 = np.sign(X.T @ start_fit.dual)[K0]
    sig0[sig0 == 0] = 1.0
    start = (float(info["mu"]), np.flatnonzero(info["strong"]), K0, sig0)
    outs = _mu_homotopy_multi(X, y, alpha, mus, start, ctx.ft,
                              max_steps=10 * X.shape[1] + 1000)
    fits = []
    prev = start_fit
    for mu, out in zip(mus, outs, strict=True):
        if out[4]:
            lam, coef, b, steps, converged, strong, kink = out
            prev = _certified_result(X, y, alpha, mu, "squared", lam, coef, b, steps,
                                     converged, strong, kink, t0, ft=ctx.ft,
                                     homotopy_steps=steps)
        else:
            prev = _selective_fit(X, y, alpha, mu, "squared", "dual", prev, max_iter, tol, ctx,
                                  set_search)
        fits.append(prev)
        t0 = time.perf_counter()
    return fits


def _point_residual(X, y, rec, *, alpha, mu, loss, absX=None) -> float:
    """Certificate of one fitted point: the largest componentwise KKT residual
    (:func:`kkt_residuals`); rounding level (1e-16 to 1e-13) at an optimum, in any units.
    ``absX``: ``|X|`` if the caller keeps it. (The duality gap, a sum over all features, is
    kept in the record; with features of very different scales its rounding is that of the
    largest terms, 1e-12 relative on a problem whose conditions all hold to 1e-14.)"""
    s_terms = None if absX is None else absX.T @ np.abs(rec.dual)
    return float(_kkt_residuals(X, y, rec.coef, rec.intercept, rec.dual, alpha=alpha, mu=mu,
                                loss=loss, s_terms=s_terms)["max"])


@single_blas_thread
def selectivity_path(X, y, *, alpha, loss="squared", n_mu=20, ratio=1e-6, max_iter=200,
                     set_search=True) -> SolutionPath:
    r"""Rough regularization path over the selectivity grid (42), from ``mu_0`` downwards.

    The grid is ``mu_l = mu_0 * ratio ** ((n_mu - 1 - l) / (n_mu - 1))``, ``l = 0..n_mu-1``
    (log-spaced from ``ratio * mu_0`` to ``mu_0``, eq. (42) with ``ratio = 10^{-6}``). The fit
    at ``mu_0`` is the empty model (41); each next, smaller ``mu`` starts the dual iteration
    from the previous solution (warm start), as in section V.B of the paper. For the squared
    loss, a grid point whose set iteration stalls is finished as a single fit would be (the
    augmented Lagrangian search for the sets, started from the previous coefficients, see
    :func:`selective_fit`); if the homotopy in ``mu`` had to finish it, the remaining grid
    points come from one homotopy pass that continues from it. A grid point starting on the
    previous point's sets takes its first iterate from that point's inner system, whose
    solution is affine in ``mu`` (no new factorization). Each point is certified by the
    same set conditions and duality gap as a single fit.

    Parameters
    ----------
    X : array_like of shape (N, n)
        Objects in rows (``N`` of them), features in columns (``n``; ``n >> N`` is the
        intended regime).
    y : array_like of shape (N,)
        Real responses (``loss="squared"``) or labels in {-1, +1} with both classes present
        (``loss="hinge"``).
    alpha : float > 0
        Weight of the penalty: the paper's :math:`\gamma` in (11) (``alpha`` here, as in
        scikit-learn's ``Ridge``, since ``gamma`` names a kernel width elsewhere); fixed
        along the path (keyword-only).
    loss : {"squared", "hinge"}, default "squared"
        Loss :math:`q`: squared (eq. (7)) or hinge (eq. (8)).
    n_mu : int >= 2, default 20
        Number of grid points, ``mu_0`` included. A float is accepted only with an integral
        value (``20.0``); a non-integral one such as ``2.7`` is rejected, not truncated.
    ratio : float in (0, 1), default 1e-6
        Smallest grid point relative to ``mu_0`` (the grid spans ``[ratio * mu_0, mu_0]``).
    max_iter : int >= 1, default 200
        Cap on the outer iterations of the dual method at each grid point (passed to
        :func:`selective_fit`, also for the re-solves of ``at(mu)``); an integer, checked
        before any fit (as ``n_mu``).
    set_search : bool, default True
        Passed to :func:`selective_fit` at every grid point (and for ``at(mu)``).

    Returns
    -------
    SolutionPath
        ``param_name == "selectivity"``, increasing breakpoints = the grid, traced in
        decreasing order (``direction=-1``). Records are :class:`SelectiveResult`; ``at(mu)``
        between grid points re-solves warm-started from the grid point above (exact, not an
        interpolation). Events ``"enter"`` / ``"leave"`` list the features whose active
        status changed between consecutive grid points (reported at the smaller ``mu``).
        ``kkt_residuals()`` gives, per grid point, the largest componentwise residual of
        :func:`kkt_residuals` (each optimality condition of (11) against the size of its own
        terms, in the user's units and invariant under the problem's exact symmetries); the
        relative duality gap of each point is its record's ``gap``. ``info`` holds
        ``"mu_0"``, ``"n_iter"`` (per grid point, in tracing order) and ``"time"``.

    Raises
    ------
    ValueError
        Bad input, naming the argument (as :func:`selective_fit`; also ``n_mu`` not an
        integer >= 2, ``max_iter`` not an integer >= 1, or ``ratio`` outside (0, 1)), or
        ``mu_0 == 0`` (no feature correlates with ``y``: the path would be empty).
    pathlib_core.core.exceptions.SolverError
        A grid point whose dual iteration did not meet its optimality conditions (see
        :func:`selective_fit`).
    """
    X, y, alpha, _, loss = _check(X, y, alpha, None, loss)
    n_mu = positive_int(n_mu, "n_mu", minimum=2)
    max_iter = positive_int(max_iter, "max_iter")
    set_search = _check_flag(set_search, "set_search")
    ratio = positive_scalar(ratio, "ratio")
    if ratio >= 1:
        raise ValueError(f"ratio must be in (0, 1); got {ratio}")
    t0 = time.perf_counter()
    # the fits run in the solver's units (an exact power-of-two change, see _Units); the grid
    # and the results are converted back, so a power-of-two scaling of X or y scales them
    # exactly
    units = _Units.of(X, y, loss)
    Xs, ys = units.data(X, y)
    gs = units.alpha_in(alpha)
    m0s = _mu_0(Xs, ys, gs, loss)
    if m0s <= 0:
        raise ValueError("mu_0 is 0 for these data (no feature correlates with y): the "
                         "selectivity path is empty")
    grid_s = m0s * ratio ** (np.arange(n_mu - 1, -1, -1) / (n_mu - 1))
    grid_s[-1] = m0s
    grid = units.mu_out(grid_s)
    m0 = float(grid[-1])
    fits: list[SelectiveResult] = []
    prev = None
    down = [float(mu) for mu in grid_s[::-1]]
    # one context for all grid points: the per-feature tolerances once, and for the hinge
    # loss one working-set LP whose rows and basis carry over from each mu to the next
    ctx = units.context(Xs, SET_TOL)
    while len(fits) < n_mu:
        mu = down[len(fits)]
        prev = _selective_fit(Xs, ys, gs, mu, loss, "dual", prev, max_iter, SET_TOL, ctx,
                              set_search)
        fits.append(prev)
        if prev.info.get("homotopy_steps", 0) > 0 and len(fits) < n_mu:
            # squared loss: the set iteration stalled here and the homotopy in mu finished
            # the fit; further down it would stall again, so one homotopy pass from this
            # point's sets serves every remaining grid point
            fits += _homotopy_fits(Xs, ys, gs, prev, down[len(fits):], max_iter, ctx,
                                   set_search=set_search)
    fits = [units.result_out(f) for f in fits[::-1]]  # increasing mu, the user's units
    events = []
    for k in range(n_mu - 1):
        lo, hi = fits[k].active, fits[k + 1].active
        enter = np.flatnonzero(lo & ~hi)
        leave = np.flatnonzero(~lo & hi)
        if len(enter):
            events.append(Event(grid[k], "enter", enter))
        if len(leave):
            events.append(Event(grid[k], "leave", leave))

    def _refit_from(start):
        def fn(t):
            return selective_fit(X, y, alpha=alpha, mu=float(t), loss=loss, warm_start=start,
                                 max_iter=max_iter, set_search=set_search)
        return fn

    segs = [FunctionSegment(grid[k], grid[k + 1], _refit_from(fits[k + 1]), rec_lo=fits[k],
                            rec_hi=fits[k + 1], kind="refit") for k in range(n_mu - 1)]

    abs_x = []  # |X|, formed on the first call

    def residual(t, rec):
        if not abs_x:
            abs_x.append(np.abs(X))
        return _point_residual(X, y, rec, alpha=alpha, mu=t, loss=loss, absX=abs_x[0])

    return SolutionPath("selectivity", segs, events, residual=residual, direction=-1,
                info={"mu_0": m0, "n_iter": [f.n_iter for f in fits[::-1]],
                      "time": time.perf_counter() - t0, "loss": loss, "alpha": alpha})
