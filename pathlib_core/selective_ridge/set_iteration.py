r"""The set iteration: solve the inner problem on the current feature sets, move the features
whose set conditions (20) fail, repeat (the active-set method of eqs. (27)-(32), extended by
the kink set)."""

from __future__ import annotations

import math

import numpy as np

from .inner import _apply_moves, _coef_from, _solve_inner, _violations
from .objectives import _best_intercept, _scores
from .result import SelectiveResult
from .units import _FeatureTol

__all__: list[str] = []

POLISH_ITER = 10  # set iterations from the sets the ALM search or the hinge LP proposes


def _dual_fit(X, y, alpha, mu, loss, warm, max_iter, tol, max_active=None,
              stall_window=None, ft=None, ctx=None):
    """The set iteration; ``max_active``: give up (not converged) once the strong and kink
    sets together hold more features than that; ``stall_window``: give up when, from the
    tenth iteration on, the number of violated set conditions has not fallen by 10 % within
    that many iterations (the iteration wanders between sets without settling); ``ft``: the
    per-feature tolerances (:class:`_FeatureTol`, ``tol`` if not given); ``ctx`` (squared
    loss): reuse and record the inner system of :class:`_FitContext`."""
    N, n = X.shape
    if ctx is not None:
        ft = ctx.ft
    if ft is None:
        ft = _FeatureTol(X, tol)
    affine = loss == "squared" and ctx is not None
    if warm is not None:
        lam = warm.dual.copy()
        s = None
        kink = warm.info.get("kink")
        K = np.flatnonzero(kink) if kink is not None else np.zeros(0, int)
        # keep the previous sets: features that were zero enter through the kink set (as
        # violators), not directly as strong ones (that overshoots at a smaller mu)
        strong = warm.info.get("strong")
        if strong is None:
            s = X.T @ lam
            strong = np.abs(s) > mu
        P = np.flatnonzero(strong & ~np.isin(np.arange(n), K))
        sig = np.sign(X[:, K].T @ lam)
        sig[sig == 0] = 1.0
    else:
        lam = np.zeros(N)
        s = None
        P = np.zeros(0, int) if mu > 0 else np.arange(n)
        K = np.zeros(0, int)
        sig = np.zeros(0)
    # the previous fit's last system, if it was solved on these sets: its solution at this
    # mu costs no factorization (the system is affine in mu)
    cached = None
    if affine and warm is not None and ctx.inner is not None:
        P0, K0, sig0, S0 = ctx.inner
        if np.array_equal(P0, P) and np.array_equal(K0, K) and np.array_equal(sig0, sig):
            cached = S0
    S = None
    seen = set()
    single = False
    n_repeat = 0  # repeated sets so far; each repeat lengthens the run of single changes
    n_single_left = 0
    b = math.nan
    aK = np.zeros(len(K))
    n_iter = 0
    converged = False
    prev = None  # (P, K, sig, moves) before the last set update
    tried_first = False  # the last update was a single change after a failed inner problem
    good = (P, K, sig, aK)  # the sets of the last solved inner problem
    best_moves, best_iter = math.inf, 0  # stall detection (stall_window)
    while n_iter < max_iter:
        if max_active is not None and len(P) + len(K) > max_active:
            break
        n_iter += 1
        if cached is not None:
            S_new, cached = cached, None
            sol = S_new[:, 0] + mu * S_new[:, 1]
            lam_new, b_new, aK_new, ok = sol[:N], float(sol[N]), sol[N + 1:], True
        elif affine:
            lam_new, b_new, aK_new, ok, S_new = _solve_inner(X, y, alpha, mu, loss, P, K, sig,
                                                             lam, affine=True)
        else:
            lam_new, b_new, aK_new, ok = _solve_inner(X, y, alpha, mu, loss, P, K, sig, lam)
        if not ok:
            # inconsistent / infeasible kink rows: go back to the last solved sets and from
            # now on make one change at a time (the next largest violation if one fails)
            if prev is None:
                break
            single = True
            P, K, sig, moves = prev
            moves = sorted(moves, key=lambda m: -m[0])[1:] if tried_first else moves
            if not moves:
                break
            moves = sorted(moves, key=lambda m: -m[0])
            prev = (P, K, sig, moves)
            tried_first = True
            P, K, sig = _apply_moves(P, K, sig, moves[:1])
            continue
        tried_first = False
        lam, b, aK = lam_new, b_new, aK_new
        good = (P, K, sig, aK)
        if affine:
            S = S_new
        s = X.T @ lam
        # at most N - 1 kink rows can be independent of 1'lam = 0, and entering in small
        # blocks (at most doubling the active set) avoids the wild overshoots of adding
        # every violator at once
        room = max(1, min(N - 1 - len(K), max(4, len(P) + len(K))))
        moves = _violations(s, mu, P, K, sig, aK, ft.at(lam, mu), n, max_enter=room,
                            atol=ft.coef(lam, y, alpha) if len(K) else None) if mu > 0 else []
        if not moves:
            converged = True
            break
        if stall_window is not None and n_iter >= 10:
            if len(moves) < 0.9 * best_moves:
                best_moves, best_iter = len(moves), n_iter
            elif n_iter - best_iter >= stall_window:
                break
        key = (tuple(P), tuple(K), tuple(sig))
        if key in seen:
            single = True
            n_repeat += 1
            n_single_left = n_repeat
        seen.add(key)
        prev = (P, K, sig, moves)
        if single:
            # one change (the largest violation) after a repeated set; block moves resume
            # after a solved inner problem unless a set repeats again
            moves = sorted(moves, key=lambda m: -m[0])
            prev = (P, K, sig, moves)
            tried_first = True
            moves = moves[:1]
            single = n_single_left > 0
            n_single_left = max(0, n_single_left - 1)
        else:
            enter = sorted((m for m in moves if m[2] == "K"), key=lambda m: -m[0])[:room]
            moves = [m for m in moves if m[2] != "K"] + enter
        P, K, sig = _apply_moves(P, K, sig, moves)
    P, K, sig, aK = good
    if s is None:
        s = X.T @ lam  # (the loop keeps s = X' lam for the last solved lam)
    if ctx is not None:
        ctx.scores = (lam, s)
        if affine:
            ctx.inner = (P, K, sig, S) if converged else None
    aK = np.where(np.abs(aK) > ft.coef(lam, y, alpha)[K], aK, 0.0)
    coef = _coef_from(s, P, K, aK, n)
    f = _scores(X, coef)
    b = _best_intercept(f, y, loss, hint=b)
    kink = np.zeros(n, bool)
    kink[K] = True
    strong = np.zeros(n, bool)
    strong[P] = True
    return lam, coef, b, n_iter, converged, strong, kink


def _resolve_on_sets(X, y, alpha, mu, loss, lam, strong, kink, max_iter, tol, ft=None):
    """The set iteration started at proposed sets (a search's): at most ``POLISH_ITER``
    iterations; the :func:`_dual_fit` tuple if the set conditions (20) are met, else None."""
    start = SelectiveResult(coef=np.zeros(X.shape[1]), intercept=0.0, dual=lam,
                            active=strong | kink, n_iter=0, objective=math.nan, gap=math.nan,
                            method="dual", info={"strong": strong, "kink": kink})
    out = _dual_fit(X, y, alpha, mu, loss, start, min(max_iter, POLISH_ITER), tol, ft=ft)
    return out if out[4] else None
