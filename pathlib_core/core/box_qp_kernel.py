r"""The active-set iterations of :func:`pathlib_core.core.qp.solve_qp` on a box, compiled (numba).

For a QP with bounds only,

.. math::

    \min_x \; \tfrac12 x^\top P x + q^\top x \quad \text{s.t.} \quad lb \le x \le ub,

the working set is a set of variables fixed at a bound, and every iteration of the primal
active-set method (Nocedal & Wright, Algorithm 16.3) works on the block ``P_FF`` of the free
variables ``F``. In Python each iteration is some thirty small numpy calls, whatever ``|F|``;
on the kernel QPs of the transductive SVMs (hundreds of variables, a few dozen free, thousands
of iterations per solve) that interpreter time is most of the cost. :func:`box_active_set`
runs the same iterations in one compiled loop, with the same rules and tests as
``_ActiveSetQP.run``:

- the step minimizes the model on the free variables: the Newton step when ``P_FF`` is well
  conditioned (reciprocal 1-norm condition ``> 1e-12`` and smallest eigenvalue, estimated as
  ``1 / ||P_FF^{-1}||_1``, above ``1e2 k`` times the zero-curvature level ``10 k eps max|P|``),
  else from the eigendecomposition of ``P_FF``: a zero-curvature descent ray when the gradient
  has a component along the null space, the minimum-norm Newton step otherwise;
- the ratio test takes the nearest bound, ties to the smallest index;
- the bound with the most negative relative multiplier is released (Bland's first one after
  three zero-length steps); the optimum is confirmed on an exact gradient;
- the gradient ``P x + q`` and the term scale ``|q| + |P||x|`` are updated from the moved
  coordinates and recomputed exactly every ``exact_every`` updates.

What differs is the linear algebra: ``P_FF^{-1}`` is held explicitly and updated in ``O(k^2)``
when a variable enters or leaves ``F`` (:func:`pathlib_core.core.linalg.border_append`,
:func:`~pathlib_core.core.linalg.border_drop`), instead of a Cholesky factorization per
iteration. Each Newton step is refined once (``u -= P_FF^{-1} (g_F + P_FF u)``) and
verified: when it leaves a free gradient entry above the optimality tolerance times its
terms, a corrective step follows (at most two per working set), from an inverse rebuilt
from ``P_FF`` if it had been updated. Whatever the loop cannot settle by itself -- negative
curvature, which needs the positive semi-definiteness test, or a non-finite step -- it
hands back (:data:`HAND_BACK`) before taking that iteration, and the Python loop goes on from
the same point.
"""

from __future__ import annotations

import numpy as np

from .linalg import REFACTOR_EVERY_VERIFIED, border_append, border_drop, njit
from .states import FREE, LOWER, UPPER

__all__ = ["box_active_set", "most_negative_bound", "OPTIMAL", "MAX_ITER", "UNBOUNDED",
           "HAND_BACK"]

#: outcome codes of :func:`box_active_set`
OPTIMAL, MAX_ITER, UNBOUNDED, HAND_BACK = 0, 1, 2, 3

_EPS = np.finfo(np.float64).eps
_NEWTON, _RAY, _NEGATIVE = 0, 1, 2


@njit(cache=True)
def most_negative_bound(state, w_lb, w_ub, s, tol, first):  # pragma: no cover - compiled
    """``(i, w_i / s_i)`` for the variable at a bound to release: among those whose relative
    multiplier ``w_i / s_i`` is below ``-tol``, the most negative ``w_i`` (Dantzig's rule on
    the equilibrated problem), or the first one when ``first``; ``(-1, 0)`` if none."""
    best, arg, rel = 0.0, -1, 0.0
    for i in range(state.shape[0]):
        if state[i] == LOWER:
            w = w_lb[i]
        elif state[i] == UPPER:
            w = w_ub[i]
        else:
            continue
        r = w / s[i] if s[i] > 0.0 else 0.0
        if r < -tol and (arg < 0 or w < best):
            best, arg, rel = w, i, r
            if first:
                break
    return arg, rel


@njit(cache=True)
def _exact(P, absP, q, x, g, s_x):  # pragma: no cover - compiled
    """``g = P x + q`` and ``s_x = |q| + |P||x|`` from scratch (rows of the symmetric ``P``)."""
    n = x.shape[0]
    for i in range(n):
        g[i] = q[i]
        s_x[i] = abs(q[i])
    for j in range(n):
        xj = x[j]
        if xj != 0.0:
            axj = abs(xj)
            for i in range(n):
                g[i] += P[j, i] * xj
                s_x[i] += absP[j, i] * axj


@njit(cache=True)
def _move(P, absP, q, x_old, x, g, s_x, stale):  # pragma: no cover - compiled
    """The gradient and term scale after a step; returns the new count of incremental updates
    (``0`` after an exact recomputation: most coordinates moved, or ``x = 0``)."""
    n = x.shape[0]
    moved, nonzero = 0, False
    for i in range(n):
        if x[i] != x_old[i]:
            moved += 1
        if x[i] != 0.0:
            nonzero = True
    if moved == 0:
        return stale
    if 4 * moved > n or not nonzero:
        _exact(P, absP, q, x, g, s_x)
        return 0
    for j in range(n):
        if x[j] != x_old[j]:
            dx = x[j] - x_old[j]
            da = abs(x[j]) - abs(x_old[j])
            for i in range(n):
                g[i] += dx * P[j, i]
                s_x[i] += da * absP[j, i]
    for i in range(n):
        if s_x[i] < 0.0:
            s_x[i] = 0.0
    return stale + 1


@njit(cache=True)
def _block(P, keys, k):  # pragma: no cover - compiled
    H = np.empty((k, k))
    for r in range(k):
        for c in range(k):
            H[r, c] = P[keys[r], keys[c]]
    return H


@njit(cache=True)
def _rebuild(P, keys, k, Minv):  # pragma: no cover - compiled
    """``Minv[:k, :k] = P_FF^{-1}`` from scratch; False when ``P_FF`` is not positive definite
    to working precision (its Cholesky factorization fails)."""
    H = _block(P, keys, k)
    try:
        np.linalg.cholesky(H)
        inv = np.linalg.inv(H)
    except Exception:  # noqa: BLE001 - numba raises a generic error for a singular block
        return False
    for r in range(k):
        for c in range(k):
            v = 0.5 * (inv[r, c] + inv[c, r])
            if not np.isfinite(v):
                return False
            Minv[r, c] = v
    return True


@njit(cache=True)
def _direction(P, g, s_x, keys, k, Minv, valid, tol, pscale, p):  # pragma: no cover
    """The step of ``_ActiveSetQP._direction`` into ``p``.

    Returns ``(kind, valid, work)``: ``_NEWTON``, ``_RAY`` or ``_NEGATIVE`` (negative
    curvature met: hand back), whether ``Minv`` holds ``P_FF^{-1}``, and the flops counted
    as the Python method counts them (a Cholesky factorization, and an eigendecomposition
    when one is made)."""
    p[:] = 0.0
    if k == 0:
        return _NEWTON, valid, 0.0
    gmax, smax = 0.0, 0.0
    for r in range(k):
        i = keys[r]
        gmax = max(gmax, abs(g[i]))
        smax = max(smax, s_x[i])
    gtol = tol * smax
    if gmax <= gtol * 1e-2:
        return _NEWTON, valid, 0.0
    zero_curv = 10.0 * k * _EPS * pscale
    work = k ** 3 / 3.0
    if not valid:
        valid = _rebuild(P, keys, k, Minv)
    if valid:
        anorm, ninv = 0.0, 0.0
        for c in range(k):
            a, m = 0.0, 0.0
            for r in range(k):
                a += abs(P[keys[r], keys[c]])
                m += abs(Minv[r, c])
            anorm = max(anorm, a)
            ninv = max(ninv, m)
        if ninv > 0.0 and np.isfinite(ninv):
            lam = 1.0 / ninv  # the smallest eigenvalue, up to a factor k
            if lam / anorm > 1e-12 and lam > 1e2 * k * zero_curv:
                # u = -Minv g_F, refined once: u -= Minv (g_F + P_FF u) (an explicit inverse
                # solves with an error of cond(P_FF) eps; the refinement brings the residual
                # to that of a factorization's solve)
                u = np.empty(k)
                for r in range(k):
                    acc = 0.0
                    for c in range(k):
                        acc += Minv[r, c] * g[keys[c]]
                    u[r] = -acc
                res = np.empty(k)
                for r in range(k):
                    acc = g[keys[r]]
                    for c in range(k):
                        acc += P[keys[r], keys[c]] * u[c]
                    res[r] = acc
                for r in range(k):
                    acc = 0.0
                    for c in range(k):
                        acc += Minv[r, c] * res[c]
                    p[keys[r]] = u[r] - acc
                return _NEWTON, valid, work
    work += 9.0 * k ** 3
    s, V = np.linalg.eigh(_block(P, keys, k))
    cut = max(zero_curv, 10.0 * k * _EPS * max(abs(s[0]), abs(s[k - 1])))
    if s[0] < -cut:
        return _NEGATIVE, valid, work
    gv = np.zeros(k)
    for c in range(k):
        acc = 0.0
        for r in range(k):
            acc += V[r, c] * g[keys[r]]
        gv[c] = acc
    g0, gap = 0.0, np.inf
    for c in range(k):
        if s[c] > cut:
            gap = min(gap, s[c])
        else:
            g0 = max(g0, abs(gv[c]))
    ray = g0 > gtol
    for r in range(k):
        acc = 0.0
        for c in range(k):
            if s[c] > cut:
                if not ray:
                    acc += V[r, c] * gv[c] / s[c]
            elif ray:
                acc += V[r, c] * gv[c]
        p[keys[r]] = -acc
    if not ray:
        return _NEWTON, valid, work
    # entries of the ray below its accuracy are rounding of V (see _ActiveSetQP._direction):
    # zeroed, unless that loses more than half of the slope
    acc_r = 10.0 * k * _EPS * (1.0 + (s[k - 1] / gap if np.isfinite(gap) else 0.0))
    pmax = 0.0
    for r in range(k):
        pmax = max(pmax, abs(p[keys[r]]))
    slope, slope_z = 0.0, 0.0
    for r in range(k):
        i = keys[r]
        slope += g[i] * p[i]
        if abs(p[i]) > acc_r * pmax:
            slope_z += g[i] * p[i]
    if slope_z <= 0.5 * slope:
        for r in range(k):
            i = keys[r]
            if abs(p[i]) <= acc_r * pmax:
                p[i] = 0.0
    return _RAY, valid, work


@njit(cache=True)
def _ray_length(P, g, p, keys, k, pscale):  # pragma: no cover - compiled
    """``(alpha, negative)``: the minimizer of the model along a ray (``inf`` when it does not
    curve up), and whether the ray has negative curvature beyond rounding."""
    n = g.shape[0]
    curv, slope, pp = 0.0, 0.0, 0.0
    for r in range(k):
        i = keys[r]
        if p[i] == 0.0:
            continue
        slope += g[i] * p[i]
        pp += p[i] * p[i]
        acc = 0.0
        for c in range(k):
            acc += P[i, keys[c]] * p[keys[c]]
        curv += p[i] * acc
    zero = 10.0 * _EPS * pscale * pp * n
    if curv < -zero:
        return np.inf, True
    if curv > zero / n and slope < 0.0:
        return -slope / curv, False
    return np.inf, False


@njit(cache=True)
def _step_length(x, p, state, lb, ub, alpha_max):  # pragma: no cover - compiled
    """``(alpha, i)``: the step to the nearest bound of a free variable (``i``, ties to the
    smallest index), or ``(alpha_max, -1)`` when no bound is nearer."""
    n = x.shape[0]
    pn = 0.0
    for i in range(n):
        pn = max(pn, abs(p[i]))
    ptol = 10.0 * _EPS * pn
    amin = np.inf
    ratios = np.full(n, np.inf)
    for i in range(n):
        if state[i] != FREE:
            continue
        r = np.inf
        if p[i] < -ptol and np.isfinite(lb[i]):
            r = (lb[i] - x[i]) / p[i]
        elif p[i] > ptol and np.isfinite(ub[i]):
            r = (ub[i] - x[i]) / p[i]
        r = max(r, 0.0)
        ratios[i] = r
        amin = min(amin, r)
    if not amin < alpha_max:
        return alpha_max, -1
    for i in range(n):
        if ratios[i] <= amin * (1.0 + 1e-12):
            return amin, i
    return amin, -1  # not reached


@njit(cache=True)
def _free_residual(g, s_x, keys, k):  # pragma: no cover - compiled
    """The largest ``|g_i| / s_i`` over the free variables (``0 / 0 = 0``)."""
    worst = 0.0
    for r in range(k):
        i = keys[r]
        if s_x[i] > 0.0:
            worst = max(worst, abs(g[i]) / s_x[i])
        elif g[i] != 0.0:
            return np.inf
    return worst


@njit(cache=True)
def box_active_set(P, absP, q, lb, ub, x, g, s_x, state, p, tol, pscale, max_iter, n_iter,
                   stale, exact_every, iteration_flops, bland, n_zero_steps):  # pragma: no cover
    """Active-set iterations on ``lb <= x <= ub`` from a feasible ``x`` and its working set.

    Parameters
    ----------
    P, absP : ndarray of shape (n, n)
        The symmetric positive semi-definite Hessian (no zero entry) and ``|P|``.
    q, lb, ub : ndarray of shape (n,)
    x, g, s_x : ndarray of shape (n,)
        The current point, ``P x + q`` and ``|q| + |P||x|`` (updated in place).
    state : ndarray of int8, shape (n,)
        The working set as :class:`~pathlib_core.core.states.IndexState` values (in place).
    p : ndarray of shape (n,)
        Work space; on ``UNBOUNDED`` the ray.
    tol : float
        Relative optimality tolerance.
    pscale : float
        ``max |P|``.
    max_iter, n_iter, stale, exact_every : int
        Iteration cap, iterations so far, incremental updates since the last exact gradient,
        and the cadence of exact ones.
    iteration_flops : float
        The flops an iteration's overhead counts for (see ``_ActiveSetQP._final_psd_check``).
    bland : bool
        Whether the smallest-index rule is on; ``n_zero_steps`` the zero steps in a row.

    Returns
    -------
    tuple
        ``(code, n_iter, stale, n_add, n_drop, bland, n_zero_steps, work)``: the outcome
        (:data:`OPTIMAL`, :data:`MAX_ITER`, :data:`UNBOUNDED` or :data:`HAND_BACK`), the
        counters after the loop, and the flops counted.
    """
    n = x.shape[0]
    keys = np.empty(n, dtype=np.int64)
    k = 0
    for i in range(n):
        if state[i] == FREE:
            keys[k] = i
            k += 1
    Minv = np.empty((n, n))
    valid, n_upd = False, 0
    n_add = n_drop = 0
    work = 0.0
    at_min = False
    n_fix = 0  # corrective steps on the current working set
    x_old = np.empty(n)
    col = np.empty(n)
    code = MAX_ITER
    while n_iter < max_iter:
        n_iter += 1
        if stale >= exact_every:
            _exact(P, absP, q, x, g, s_x)
            stale = 0
        work += float(n) * float(n) + iteration_flops
        if not at_min:
            if n_upd >= REFACTOR_EVERY_VERIFIED:
                valid, n_upd = False, 0
            was_valid = valid
            kind, valid, w = _direction(P, g, s_x, keys, k, Minv, valid, tol, pscale, p)
            work += w
            if valid and not was_valid:
                n_upd = 0
            pn = 0.0
            finite = True
            for i in range(n):
                if not np.isfinite(p[i]):
                    finite = False
                pn = max(pn, abs(p[i]))
            if kind == _NEGATIVE or not finite:
                return HAND_BACK, n_iter - 1, stale, n_add, n_drop, bland, n_zero_steps, work
            at_min = pn == 0.0
            if not at_min:
                alpha_max = 1.0
                if kind == _RAY:
                    alpha_max, negative = _ray_length(P, g, p, keys, k, pscale)
                    if negative:
                        return (HAND_BACK, n_iter - 1, stale, n_add, n_drop, bland,
                                n_zero_steps, work)
                alpha, blk = _step_length(x, p, state, lb, ub, alpha_max)
                if not np.isfinite(alpha):
                    return UNBOUNDED, n_iter, stale, n_add, n_drop, bland, n_zero_steps, work
                x_old[:] = x
                for i in range(n):
                    x[i] += alpha * p[i]
                if blk >= 0:
                    if p[blk] < 0:
                        state[blk] = LOWER
                        x[blk] = lb[blk]
                    else:
                        state[blk] = UPPER
                        x[blk] = ub[blk]
                    n_add += 1
                    if valid and border_drop(keys, k, Minv, blk, 1e-14):
                        n_upd += 1
                    else:  # the keys without blk, for a rebuild
                        valid = False
                        for r in range(k):
                            if keys[r] == blk:
                                keys[r] = keys[k - 1]
                                break
                    k -= 1
                else:
                    at_min = kind == _NEWTON
                stale = _move(P, absP, q, x_old, x, g, s_x, stale)
                moved = alpha * pn
                if moved <= _EPS * 10:
                    n_zero_steps += 1
                    if n_zero_steps >= 3:
                        bland = True
                else:
                    n_zero_steps = 0
                    bland = False
                if blk >= 0:
                    n_fix = 0
                elif at_min and n_fix < 2 and _free_residual(g, s_x, keys, k) > tol:
                    # the step left the free gradient above the optimality tolerance: a
                    # corrective step, from a rebuilt inverse if it had been updated
                    at_min = False
                    n_fix += 1
                    if n_upd > 0:
                        valid = False
                continue
        idx, _ = most_negative_bound(state, g, -g, s_x, tol, bland)
        if idx < 0 and stale:  # confirm the optimum on the exact gradient
            _exact(P, absP, q, x, g, s_x)
            stale = 0
            idx, _ = most_negative_bound(state, g, -g, s_x, tol, bland)
        if idx < 0:
            code = OPTIMAL
            break
        state[idx] = FREE
        n_drop += 1
        n_fix = 0
        at_min = False
        if valid:
            for r in range(k):
                col[r] = P[keys[r], idx]
            if border_append(Minv, k, col[:k], P[idx, idx], 1e-12, pscale) == 1:
                n_upd += 1
            else:
                valid = False
        keys[k] = idx
        k += 1
    return code, n_iter, stale, n_add, n_drop, bland, n_zero_steps, work
