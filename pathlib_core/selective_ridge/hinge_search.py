r"""Hinge loss: the search for the feature sets before the set iteration -- the dual's linear
program (exact while no feature is strong) and else the split QP (:mod:`.cuts`); the sets
found are re-solved by the set iteration and checked."""

from __future__ import annotations

import numpy as np

from .cuts import hinge_lp_sets, hinge_qp_exact, hinge_qp_sets
from .inner import _violations
from .objectives import _duality_gap, _kkt_residuals, _scores
from .set_iteration import _resolve_on_sets

__all__: list[str] = []

EXACT_SPLIT_ROWS = 2  # hinge: exact split-QP solve up to this many tight rows per object
POLISH_GAP = 1e-12  # hinge: a split-QP solution with a smaller relative gap is not re-solved


def _objects_ok(X, y, coef, b, lam, alpha, mu, s=None):
    """The object and bias conditions of a hinge-loss solution found outside the set
    iteration (whose inner problem meets them by construction): box, complementarity of
    ``lambda`` with the margins, ``1' lambda = 0`` (:func:`kkt_residuals`, to 1e-9)."""
    r = _kkt_residuals(X, y, coef, b, lam, alpha=alpha, mu=mu, loss="hinge", s=s,
                       features=False)
    return max(r["objects"], r["bias"]) <= 1e-9


def _hinge_search(X, y, alpha, mu, max_iter, tol, warm, use_lp, counts, ctx):
    """Hinge loss: a solution from the cutting-plane LP (``use_lp``; certified directly when
    no multiplier exceeds ``mu``) or else from the split QP (:mod:`.cuts`:
    interior-point rounds, then one exact active-set solve, whose sets the set iteration
    re-solves). Both start from the active features and multipliers of ``warm`` (the QP from
    the LP's). Returns the :func:`_dual_fit` tuple, or ``None`` unless the set conditions (20)
    and the object conditions are met; ``counts`` gets the LP solves and interior-point
    rounds. The LP model is kept in ``ctx.lp`` for the next fit of a path."""
    N, n = X.shape
    ftol = ctx.ft.bind(mu)  # lam -> the per-feature tolerances at lam
    rows, lam0 = (None, None) if warm is None else (np.flatnonzero(warm.coef), warm.dual)
    if warm is not None:
        # the rows that the warm multipliers violate at this mu (at most N, the largest)
        # are the likely new rows of the LP (or of the split QP when the LP is skipped):
        # with them the first solve is usually the last
        s_w = ctx.scores_of(warm.dual)
        s_w = np.abs(X.T @ warm.dual if s_w is None else s_w)
        over = np.flatnonzero(s_w > mu + ftol(warm.dual))
        over = over[np.argsort(-s_w[over], kind="stable")[:N]]
        rows = np.union1d(rows, over)
    if use_lp:
        cut = hinge_lp_sets(X, y, alpha, mu, ftol, rows=rows, lp=ctx.lp, row_scale=ctx.row_scale)
        if cut is None:
            ctx.lp = None  # a failed search: the next fit builds a fresh model
            return None
        lam, coef, b, strong, kink, counts["lp_rounds"], ctx.lp = cut
        if not strong.any():
            # no multiplier above mu: the LP solution solves the dual; check (20) on it
            s = ctx.lp.s
            ctx.scores = (lam, s)
            K = np.flatnonzero(coef)
            if not _violations(s, mu, np.zeros(0, int), K, np.sign(s[K]), coef[K], ftol(lam),
                               n, atol=ctx.ft.coef(lam, y, alpha)):
                # the object conditions too, by the certificate the result gets (kept for it)
                z = _scores(X, coef) + b
                kkt = _kkt_residuals(X, y, coef, b, lam, alpha=alpha, mu=mu, loss="hinge", s=s,
                                     s_terms=ctx.ft.norms * float(np.sqrt(lam @ lam)), z=z)
                if max(kkt["objects"], kkt["bias"]) <= 1e-9:
                    ctx.checked = (lam, coef, b, kkt["max"])
                    return lam, coef, b, 1, True, strong, coef != 0
            # not met to the tolerance: re-solve on its sets by the set iteration
            return _resolve_on_sets(X, y, alpha, mu, "hinge", lam, strong, kink, max_iter, tol,
                                    ctx.ft)
        # strong features are wanted: the split QP, from the LP's rows and multipliers
        rows, lam0 = np.flatnonzero(strong | kink), lam
    if rows is None:
        return None
    found = hinge_qp_sets(X, y, alpha, mu, ftol, rows, lam0, ctx.row_scale)
    if found is None:
        return None
    lam_i, strong_i, kink_i, W, z, counts["qp_rounds"] = found
    if strong_i.sum() + kink_i.sum() > EXACT_SPLIT_ROWS * N:
        # too many tight rows for the dense exact solve of the split QP: the set iteration
        # (N x N inner problems) re-solves on the interior-point sets, or the search fails
        return _resolve_on_sets(X, y, alpha, mu, "hinge", lam_i, strong_i, kink_i, max_iter,
                                tol, ctx.ft)
    exact = hinge_qp_exact(X, y, alpha, mu, ftol, W, z, ctx.row_scale)
    if exact is None:
        return None
    lam, coef, b, rounds = exact
    s = X.T @ lam
    ft_lam = ftol(lam)
    strong = (coef != 0) & (np.abs(s) > mu + ft_lam)
    kink = (coef != 0) & ~strong
    coef[strong] = s[strong]  # (20): equal to the multiplier, up to rounding
    P, K = np.flatnonzero(strong), np.flatnonzero(kink)
    if _violations(s, mu, P, K, np.sign(s[K]), coef[K], ft_lam, n,
                   atol=ctx.ft.coef(lam, y, alpha)) or \
            not _objects_ok(X, y, coef, b, lam, alpha, mu, s):
        # the split QP's multipliers missed the conditions (its coefficients come from
        # multipliers, which are less accurate than s where the coefficients are small
        # next to the bias): the set iteration re-solves on its sets, or the search fails
        return _resolve_on_sets(X, y, alpha, mu, "hinge", lam, strong, kink, max_iter, tol,
                                ctx.ft)
    ctx.scores = (lam, s)
    if abs(_duality_gap(X, y, coef, b, lam, alpha=alpha, mu=mu, loss="hinge", s=s)) \
            <= POLISH_GAP:
        # already exact to rounding: a re-solve cannot improve it (on duplicated binary
        # features it can even fail after POLISH_ITER iterations, 0.15 s each on hiva)
        return lam, coef, b, rounds, True, strong, kink
    # the same sets through the set iteration's own inner problem (N multipliers): usually
    # one iteration, and a cleaner duality gap than the split QP's larger system
    out = _resolve_on_sets(X, y, alpha, mu, "hinge", lam, strong, kink, max_iter, tol, ctx.ft)
    if out is not None:
        return out[:3] + (rounds + out[3],) + out[4:]
    return lam, coef, b, rounds, True, strong, kink
