r"""Compiled inner loop of the lean S3VM CP-step (numba; see :mod:`pathlib_core.s3vm._fast`).

The CP-step of the S3VM path (Ogawa et al. 2013, Algorithm 2) follows the box QP

.. math::

    \min_\theta \tfrac12 \theta^\top Q \theta + q^\top \theta
    \quad\text{s.t.}\quad 0 \le \theta \le u_0 + t\,u_1

upward in ``t = C^*`` (no equality row: the bias is fixed). With the free set ``F``, the
upper set ``U`` (``theta = u_0 + t u_1``) and the lower set (``theta = 0``) fixed,

.. math::

    Q_{FF}\,\theta_F = -q_F - s_{0,F} - t\, s_{1,F}, \qquad
    s_0 = Q_{:U} u_{0,U}, \; s_1 = Q_{:U} u_{1,U},

so ``theta_F`` and the gradient ``g = Q theta + q = q + s_0 + t s_1 + Q_{:F} theta_F`` are
affine in ``t`` and cost ``O(n |F|)`` per segment with the running sums ``s_0, s_1``. The
inverse of ``Q_FF`` is updated by bordering / downdating in place
(:func:`pathlib_core.core.linalg.border_append` / :func:`~pathlib_core.core.linalg.border_drop`,
the primitives of the SVM path's loop, here without the equality row).

Events as ``t`` grows: a free ``theta_i`` reaches 0 or its upper bound; a lower-bound point's
gradient reaches 0 from above; an upper-bound point's gradient reaches 0 from below. After
every event the watched margins ``y_i f(x_i) = g_i + 1`` are compared with their stop levels
(the polytope boundary of the S3VM); the loop ends at the first breakpoint where one is
reached.

Status codes: ``0`` the end ``t_end`` was reached, ``1`` a re-factorization is due, ``2`` the
next event needs the generic engine (tie, zero-length step, singular update, wrong-way index,
drift, infeasibility), ``3`` the stop rule fired at the last recorded breakpoint, ``4`` a
bordering met a negative Schur complement beyond rounding (negative curvature: the caller
checks the kernel for positive semi-definiteness).
"""

from __future__ import annotations

import numpy as np

from ..core import linalg as la
from ..core.linalg import njit

FREE, LOWER, UPPER = 0, 1, 2
END, REFACTOR, FALLBACK, STOP, NOT_PSD = 0, 1, 2, 3, 4


@njit(cache=True)
def _solve(Q, q, keys, k, Minv, s0, s1, A0, A1, g0, g1):
    """Segment through the current inverse, with one step of iterative refinement."""
    n = q.shape[0]
    sol0 = np.zeros(k)
    sol1 = np.zeros(k)
    for r in range(k):
        acc0 = 0.0
        acc1 = 0.0
        for c in range(k):
            j = keys[c]
            m = Minv[r, c]
            acc0 -= m * (q[j] + s0[j])
            acc1 -= m * s1[j]
        sol0[r] = acc0
        sol1[r] = acc1
    r0 = np.empty(k)
    r1 = np.empty(k)
    for r in range(k):
        j = keys[r]
        acc0 = -(q[j] + s0[j])
        acc1 = -s1[j]
        for c in range(k):
            qq = Q[j, keys[c]]
            acc0 -= qq * sol0[c]
            acc1 -= qq * sol1[c]
        r0[r] = acc0
        r1[r] = acc1
    la.refine_two(Minv, k, r0, r1, sol0, sol1)
    for i in range(n):
        g0[i] = q[i] + s0[i]
        g1[i] = s1[i]
    for r in range(k):
        j = keys[r]
        a0 = sol0[r]
        a1 = sol1[r]
        A0[j] = a0
        A1[j] = a1
        for i in range(n):
            qq = Q[j, i]
            g0[i] += a0 * qq
            g1[i] += a1 * qq


@njit(cache=True)
def _enter(Q, keys, k, Minv, j, sing_tol, p_scale):
    """Border the inverse of ``Q_FF`` by index ``j``; the code of
    :func:`pathlib_core.core.linalg.border_append`."""
    c = np.empty(k)
    for r in range(k):
        c[r] = Q[keys[r], j]
    code = la.border_append(Minv, k, c, Q[j, j], sing_tol, p_scale)
    if code == 1:
        keys[k] = j
    return code


@njit(cache=True)
def run(Q, q, ub0, ub1, st, keys, k, Minv, s0, s1, t, t_end, watch, level, max_updates,
        tie_tol, zero_tol, drift_tol, sing_tol, p_scale, out_t, out_i, out_new, out_x):
    """Process events upward from the exact breakpoint ``t``; see the module docstring.

    Returns ``(status, n_recorded, max_drift)``; breakpoints are written to ``out_*``
    (``out_i = -1`` marks the end point at ``t_end``). ``watch`` (indices) and ``level``:
    the loop stops (status 3) at the first breakpoint where ``g_i + 1 <= level_i``.
    """
    n = q.shape[0]
    A0 = np.zeros(n)
    A1 = np.zeros(n)
    g0 = np.empty(n)
    g1 = np.empty(n)
    max_drift = 0.0
    n_rec = 0
    n_upd = 0
    cap = out_t.shape[0]
    _solve(Q, q, keys, k, Minv, s0, s1, A0, A1, g0, g1)
    d = la.gradient_drift(st, FREE, t, g0, g1)
    if d > drift_tol:
        return FALLBACK, 0, max_drift
    max_drift = max(max_drift, d)
    while True:
        # ---- next event above t ----
        t1, t2, ib, nb, bad = la.next_box_event(st, A0, A1, g0, g1, ub0, ub1, t, -1.0,
                                             max(t, 1.0), 1.0, zero_tol, FREE, LOWER, UPPER)
        if bad:
            return FALLBACK, n_rec, max_drift
        span = t_end - t
        ttol = tie_tol * t
        if ib < 0 or t1 >= span - ttol:
            out_t[n_rec] = t_end
            out_i[n_rec] = -1
            out_new[n_rec] = -1
            la.box_point(st, A0, A1, ub0, ub1, t_end, out_x[n_rec], FREE, UPPER)
            n_rec += 1
            return END, n_rec, max_drift
        if t1 <= ttol:
            return FALLBACK, n_rec, max_drift
        if t2 - t1 <= tie_tol * max(t + t1, 1e-300):
            return FALLBACK, n_rec, max_drift
        if n_upd >= max_updates or n_rec + 2 > cap:
            return REFACTOR, n_rec, max_drift
        t_ev = t + t1
        i = ib
        old = st[i]
        # ---- update the inverse and the running sums ----
        if nb == FREE:
            code = _enter(Q, keys, k, Minv, i, sing_tol, p_scale)
            if code < 0:
                return NOT_PSD, n_rec, max_drift
            if code == 0:
                return FALLBACK, n_rec, max_drift
            k += 1
        else:
            if not la.border_drop(keys, k, Minv, i, sing_tol):
                return FALLBACK, n_rec, max_drift
            k -= 1
        n_upd += 1
        if nb == UPPER:
            for j in range(n):
                s0[j] += Q[i, j] * ub0[i]
                s1[j] += Q[i, j] * ub1[i]
        if old == UPPER:
            for j in range(n):
                s0[j] -= Q[i, j] * ub0[i]
                s1[j] -= Q[i, j] * ub1[i]
        st[i] = nb
        A0[i] = 0.0
        A1[i] = 0.0
        _solve(Q, q, keys, k, Minv, s0, s1, A0, A1, g0, g1)
        d = la.gradient_drift(st, FREE, t_ev, g0, g1)
        if d > drift_tol:
            st[i] = old
            return FALLBACK, n_rec, max_drift
        max_drift = max(max_drift, d)
        # ---- the changed index must move into its new set as t grows ----
        if nb == FREE:
            if old == LOWER:
                ok = A1[i] > 0.0
                c0, c1 = A0[i], A1[i]
            else:
                ok = A1[i] - ub1[i] < 0.0
                c0, c1 = A0[i] - ub0[i], A1[i] - ub1[i]
        elif nb == LOWER:
            ok = g1[i] > 0.0
            c0, c1 = g0[i], g1[i]
        else:
            ok = g1[i] < 0.0
            c0, c1 = g0[i], g1[i]
        if not ok:
            st[i] = old
            return FALLBACK, n_rec, max_drift
        # ---- refine the breakpoint: root of the changed index's value on the new segment
        if c1 != 0.0:
            t_star = -c0 / c1
            if abs(t_star - t_ev) <= 1e-6 * t_ev and t_star > t:
                t_ev = t_star
        if t_ev >= t_end:
            st[i] = old
            return FALLBACK, n_rec, max_drift
        t = t_ev
        out_t[n_rec] = t
        out_i[n_rec] = i
        out_new[n_rec] = nb
        la.box_point(st, A0, A1, ub0, ub1, t, out_x[n_rec], FREE, UPPER)
        n_rec += 1
        # ---- stop rule: a watched margin g_i + 1 reached its level ----
        for r in range(watch.shape[0]):
            j = watch[r]
            if g0[j] + t * g1[j] + 1.0 <= level[r]:
                return STOP, n_rec, max_drift
