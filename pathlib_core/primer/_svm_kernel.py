"""Compiled inner loop of the lean SVM path (numba; see :mod:`pathlib_core.primer._svm_fast`).

One call processes plain single-index events in one direction of ``C`` (downward or upward)
until the path ends, a re-factorization is due, or an event needs the generic engine; the
caller (Python) keeps the records and handles everything else. The arithmetic is that of the
module docstring of :mod:`pathlib_core.primer._svm_fast`:

* segment: ``[alpha_E; b/s] = Minv @ (r0 + C r1)`` with ``r0 = [1; 0]`` and
  ``r1 = [-(Q_{EL} 1); -s y_L' 1]`` (``s`` the engine's scaling of the row ``y'``);
* gradient ``g = Q alpha - 1 + b y`` affine in ``C``, ``O(n |E|)`` from the rows of ``Q_E``
  and the running sum ``s_L = Q_{:L} 1``;
* slacks per unit step toward ``C_end``: ``alpha_i`` and ``C - alpha_i`` on the elbow,
  ``-g_i`` on the left set (``alpha = C``), ``g_i`` on the right set (``alpha = 0``); their
  rates are the slopes in ``C`` times ``-d`` (``d = -1`` downward, ``+1`` upward);
* bordering / downdating of ``Minv`` when an index enters / leaves the elbow;
* each breakpoint refined to the root of the changed index's value on the new segment, so
  that its accuracy is relative to the breakpoint itself (not to the ``C`` the step started
  from, which may be many orders of magnitude larger or smaller).

Status codes returned: ``0`` the end was reached, ``1`` a re-factorization is due (the caller
rebuilds ``Minv`` and ``s_L`` exactly and calls again), ``2`` the next event needs the generic
engine (tie, zero-length step, singular update, wrong-way index, drift, infeasibility, empty
elbow), ``3`` a bordering met a negative Schur complement beyond rounding (negative
curvature: the caller checks the kernel for positive semi-definiteness). Runs as plain Python
when numba is unavailable or ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import numpy as np

from ..core.linalg import (
    border_append,
    border_drop,
    box_point,
    gradient_drift,
    next_box_event,
    njit,
    refine_two,
)

FREE, LOWER, UPPER = 0, 1, 2
END, REFACTOR, FALLBACK, NOT_PSD = 0, 1, 2, 3


@njit(cache=True)
def _solve(Q, y, s, keys, k, Minv, sL, yL, A0, A1, g0, g1):
    """Segment through the current factorization; returns (b0, b1) (A0/A1/g0/g1 written)."""
    n = y.shape[0]
    sol0 = np.zeros(k)
    sol1 = np.zeros(k)
    for r in range(k):
        acc0 = 0.0
        acc1 = 0.0
        for c in range(k):
            key = keys[c]
            m = Minv[r, c]
            if key >= 0:
                acc0 += m
                acc1 -= m * sL[key]
            else:
                acc1 -= m * s * yL
        sol0[r] = acc0
        sol1[r] = acc1
    # one step of iterative refinement with the same inverse (kept up to date by rank-one
    # updates, it solves an ill-conditioned elbow system only to ~cond * eps): residuals of
    # [[Q_EE, s y_E], [s y_E', 0]] sol = rhs, then sol += Minv @ residual
    r0 = np.empty(k)
    r1 = np.empty(k)
    for r in range(k):
        j = keys[r]
        if j >= 0:
            acc0 = 1.0
            acc1 = -sL[j]
            for c in range(k):
                kc = keys[c]
                q = Q[j, kc] if kc >= 0 else s * y[j]
                acc0 -= q * sol0[c]
                acc1 -= q * sol1[c]
        else:
            acc0 = 0.0
            acc1 = -s * yL
            for c in range(k):
                kc = keys[c]
                if kc >= 0:
                    acc0 -= s * y[kc] * sol0[c]
                    acc1 -= s * y[kc] * sol1[c]
        r0[r] = acc0
        r1[r] = acc1
    refine_two(Minv, k, r0, r1, sol0, sol1)
    b0 = 0.0
    b1 = 0.0
    for r in range(k):
        if keys[r] < 0:
            b0 = sol0[r] * s
            b1 = sol1[r] * s
    for i in range(n):
        g0[i] = -1.0 + b0 * y[i]
        g1[i] = sL[i] + b1 * y[i]
    for r in range(k):
        j = keys[r]
        if j >= 0:
            A0[j] = sol0[r]
            A1[j] = sol1[r]
            a0 = sol0[r]
            a1 = sol1[r]
            for i in range(n):
                q = Q[j, i]
                g0[i] += a0 * q
                g1[i] += a1 * q
    return b0, b1


@njit(cache=True)
def _enter(Q, y, s, keys, k, Minv, j, sing_tol, p_scale):
    """Border the factorization by key ``j``; the code of
    :func:`pathlib_core.core.linalg.border_append` (the key ``-1`` is the equality row)."""
    c = np.empty(k)
    for r in range(k):
        key = keys[r]
        c[r] = Q[key, j] if key >= 0 else s * y[j]
    code = border_append(Minv, k, c, Q[j, j], sing_tol, p_scale)
    if code == 1:
        keys[k] = j
    return code


@njit(cache=True)
def run(Q, y, s, st, keys, k, Minv, sL, yL, C, C_end, until_last, max_updates, tie_tol,
        zero_tol, drift_tol, sing_tol, p_scale, out_C, out_i, out_new, out_x, out_b, d):
    """Process events from the exact breakpoint ``C`` toward ``C_end``; see the module docstring.

    ``d = -1.0`` traces downward (``C_end < C``), ``d = +1.0`` upward. Returns ``(status,
    n_recorded, k, yL, max_drift)``; recorded breakpoints are written to ``out_*`` (``out_i =
    -1`` marks the end point at ``C_end``). ``st``, ``keys``, ``Minv`` and ``sL`` are updated in
    place up to the last recorded breakpoint (after a ``FALLBACK`` or ``NOT_PSD`` the caller
    restarts from its own records).
    """
    m_dir = -d  # slopes in C times m_dir: rates of decrease per unit step toward C_end
    n = y.shape[0]
    A0 = np.zeros(n)
    A1 = np.zeros(n)
    g0 = np.empty(n)
    g1 = np.empty(n)
    ub0 = np.zeros(n)
    ub1 = np.ones(n)
    max_drift = 0.0
    n_rec = 0
    n_upd = 0
    cap = out_C.shape[0]
    nfree = 0
    for i in range(n):
        if st[i] == FREE:
            nfree += 1
    if nfree == 0:
        return FALLBACK, 0, k, yL, max_drift
    b0, b1 = _solve(Q, y, s, keys, k, Minv, sL, yL, A0, A1, g0, g1)
    dr = gradient_drift(st, FREE, C, g0, g1)
    if dr > drift_tol:
        return REFACTOR if n_upd > 0 else FALLBACK, 0, k, yL, max_drift
    max_drift = max(max_drift, dr)
    while True:
        # ---- next event below C (a box [0, C]: ub0 = 0, ub1 = 1) ----
        t1, t2, ib, nb, bad = next_box_event(st, A0, A1, g0, g1, ub0, ub1, C, m_dir, C, 0.0,
                                             zero_tol, FREE, LOWER, UPPER)
        if bad:
            return FALLBACK, n_rec, k, yL, max_drift
        span = d * (C_end - C)
        ttol = tie_tol * C
        if ib < 0 or t1 >= span - ttol:
            if not until_last:
                out_C[n_rec] = C_end
                out_i[n_rec] = -1
                out_new[n_rec] = -1
                box_point(st, A0, A1, ub0, ub1, C_end, out_x[n_rec], FREE, UPPER)
                out_b[n_rec] = b0 + C_end * b1
                n_rec += 1
            return END, n_rec, k, yL, max_drift
        if t1 <= ttol:
            return FALLBACK, n_rec, k, yL, max_drift
        if t2 - t1 <= tie_tol * max(C, t1):
            return FALLBACK, n_rec, k, yL, max_drift
        if n_upd >= max_updates or n_rec + 2 > cap:
            return REFACTOR, n_rec, k, yL, max_drift
        C_ev = C + d * t1
        i = ib
        old = st[i]
        # ---- update the factorization and the running sums ----
        if nb == FREE:
            code = _enter(Q, y, s, keys, k, Minv, i, sing_tol, p_scale)
            if code < 0:
                return NOT_PSD, n_rec, k, yL, max_drift
            if code == 0:
                return FALLBACK, n_rec, k, yL, max_drift
            k += 1
        else:
            ok = border_drop(keys, k, Minv, i, sing_tol)
            if not ok:
                return FALLBACK, n_rec, k, yL, max_drift
            k -= 1
        n_upd += 1
        if nb == UPPER:
            for q in range(n):
                sL[q] += Q[i, q]
            yL += y[i]
        if old == UPPER:
            for q in range(n):
                sL[q] -= Q[i, q]
            yL -= y[i]
        st[i] = nb
        if nb != FREE:
            nfree -= 1
        else:
            nfree += 1
        if nfree == 0:
            # empty elbow below this event: the intercept is undetermined (engine)
            st[i] = old
            return FALLBACK, n_rec, k, yL, max_drift
        A0[i] = 0.0
        A1[i] = 0.0
        b0, b1 = _solve(Q, y, s, keys, k, Minv, sL, yL, A0, A1, g0, g1)
        dr = gradient_drift(st, FREE, C_ev, g0, g1)
        if dr > drift_tol:
            st[i] = old
            return FALLBACK, n_rec, k, yL, max_drift
        max_drift = max(max_drift, dr)
        # ---- the changed index must move into its new set in the tracing direction ----
        if nb == FREE:
            if old == LOWER:
                ok = d * A1[i] > 0.0
                c0, c1 = A0[i], A1[i]
            else:
                ok = d * (1.0 - A1[i]) > 0.0
                c0, c1 = A0[i], A1[i] - 1.0
        elif nb == LOWER:
            ok = d * g1[i] > 0.0
            c0, c1 = g0[i], g1[i]
        else:
            ok = -d * g1[i] > 0.0
            c0, c1 = g0[i], g1[i]
        if not ok:
            st[i] = old
            return FALLBACK, n_rec, k, yL, max_drift
        # ---- refine the breakpoint: root of the changed index's value on the new segment
        # (computed from the segment's own coefficients, so its accuracy is relative to the
        # breakpoint, not to the parameter the step started from)
        if c1 != 0.0:
            C_star = -c0 / c1
            if abs(C_star - C_ev) <= 1e-6 * C_ev and d * (C_star - C) > 0.0:
                C_ev = C_star
        if d * (C_ev - C_end) >= 0.0:
            st[i] = old
            return FALLBACK, n_rec, k, yL, max_drift
        C = C_ev
        out_C[n_rec] = C
        out_i[n_rec] = i
        out_new[n_rec] = nb
        box_point(st, A0, A1, ub0, ub1, C, out_x[n_rec], FREE, UPPER)
        out_b[n_rec] = b0 + C * b1
        n_rec += 1
