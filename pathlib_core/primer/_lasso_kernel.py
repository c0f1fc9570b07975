"""Compiled event loop of the Lasso homotopy (numba; see :mod:`pathlib_core.primer.lasso`).

One call processes plain single-index events (one feature enters, or one leaves) downward in
``lam`` until the path ends, a re-factorization is due, or an event needs the Python side (a
tie, a zero-length step, a dependent column, a transition whose first-order conditions fail).
The state is the scaled homotopy of :class:`pathlib_core.primer.lasso._State`; the arithmetic is
that
of its docstring:

* segment: ``[u g] = G_AA^{-1} [Z_A'y~, omega_A s_A]`` with one step of iterative refinement,
  ``e = d (Z'y~ - G[:, A] u)``, ``a = d G[:, A] g`` (rows ``GAT[r] = G[A[r], :]``);
* events: ``e_j + lam a_j = +-lam`` for an inactive ``j``, ``u_r - lam g_r = 0`` for an
  active one moving towards zero;
* the inverse of ``G_AA`` by :func:`pathlib_core.core.linalg.border_add` / ``border_remove`` (the
  last active index takes the place of one that leaves).

Status codes: ``0`` the end was reached (and recorded), ``1`` a re-factorization is due,
``2`` the next event needs the Python side (the state is that of the last recorded
breakpoint), ``3`` the record buffers are full. Runs as plain Python when numba is
unavailable or ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import numpy as np

from ..core.linalg import border_add, border_remove, njit

END, REFACTOR, FALLBACK, FULL = 0, 1, 2, 3
_EPS = 2.220446049250313e-16


@njit(cache=True)
def gram_row(G, Zt, has_G, j, out):
    """Row ``j`` of the scaled Gram matrix ``Z'Z`` (a stored row, or ``O(np)`` on demand)."""
    if has_G:
        out[:] = G[j]
    else:
        out[:] = np.dot(Zt, Zt[j])


@njit(cache=True)
def _backward(GAA, R0, R1, u, g, res0, res1):
    """Residuals ``R - G_AA [u g]`` (written to ``res0``, ``res1``) and their backward error,
    each row against the size of its two sides, ``|R_r| + |(G_AA x)_r|``."""
    Gu = np.dot(GAA, u)
    Gg = np.dot(GAA, g)
    err = 0.0
    for r in range(R0.shape[0]):
        res0[r] = R0[r] - Gu[r]
        res1[r] = R1[r] - Gg[r]
        s0 = abs(R0[r]) + abs(Gu[r])
        s1 = abs(R1[r]) + abs(Gg[r])
        if s0 > 0.0:
            err = max(err, abs(res0[r]) / s0)
        if s1 > 0.0:
            err = max(err, abs(res1[r]) / s1)
    return err


@njit(cache=True)
def gaa_add(GAA, row, Aidx, k):
    """``G_AA`` bordered by the Gram row ``row`` of a new last index."""
    new = np.empty((k + 1, k + 1))
    new[:k, :k] = GAA
    for r in range(k):
        new[r, k] = row[Aidx[r]]
        new[k, r] = row[Aidx[r]]
    new[k, k] = row[Aidx[k]]
    return new


@njit(cache=True)
def gaa_remove(GAA, pos):
    """``G_AA`` without index ``pos``, the last index moved to its place."""
    last = GAA.shape[0] - 1
    new = np.empty((last, last))
    for r in range(last):
        ir = last if (r == pos and pos != last) else r
        for c in range(last):
            ic = last if (c == pos and pos != last) else c
            new[r, c] = GAA[ir, ic]
    return new


@njit(cache=True)
def segment(c0t, omega, dsc, signs, Aidx, k, Ginv, GAA, GAT, lam, e_prev, a_prev, exact):
    """``(u, g, e, a, drift)`` of the segment of the first ``k`` indices of ``Aidx``.

    ``drift``: the backward error of the solve through the updated inverse, each row of
    ``G_AA [u g] = R`` against the size of its terms. The result is refined with the same
    inverse: one step, and up to two more while the backward error stays above ``1e-14``
    when the first was above ``1e-10`` (an ill-conditioned block). With ``exact`` false,
    ``e`` comes from the continuity of the correlations at the breakpoint ``lam``,
    ``e + lam a = e_prev + lam a_prev`` (one product with the Gram rows instead of two).
    """
    p = c0t.shape[0]
    if k == 0:
        return np.zeros(0), np.zeros(0), dsc * c0t, np.zeros(p), 0.0
    R0 = np.empty(k)
    R1 = np.empty(k)
    for r in range(k):
        j = Aidx[r]
        R0[r] = c0t[j]
        R1[r] = omega[j] * signs[j]
    u = np.dot(Ginv, R0)
    g = np.dot(Ginv, R1)
    res0 = np.empty(k)
    res1 = np.empty(k)
    drift = _backward(GAA, R0, R1, u, g, res0, res1)
    u = u + np.dot(Ginv, res0)
    g = g + np.dot(Ginv, res1)
    if drift > 1e-10:  # an ill-conditioned block: refine while it helps (two more steps)
        for _ in range(2):
            if not _backward(GAA, R0, R1, u, g, res0, res1) > 1e-14:
                break
            u = u + np.dot(Ginv, res0)
            g = g + np.dot(Ginv, res1)
    a = np.dot(g, GAT[:k])
    e = np.dot(u, GAT[:k]) if exact else np.empty(p)
    for j in range(p):  # fused: a = d G[:, A] g; e exact or from continuity at lam
        aj = dsc[j] * a[j]
        a[j] = aj
        if exact:
            e[j] = dsc[j] * (c0t[j] - e[j])
        else:
            e[j] = e_prev[j] + lam * (a_prev[j] - aj)
    return u, g, e, a, drift


@njit(cache=True)
def _swap(GAT, Aidx, posA, row, r, q):
    """Swap the active positions ``r`` and ``q`` (Gram rows, features and their positions;
    ``row`` is scratch space)."""
    row[:] = GAT[r]
    GAT[r] = GAT[q]
    GAT[q] = row
    jr = Aidx[r]
    Aidx[r] = Aidx[q]
    Aidx[q] = jr
    posA[Aidx[r]] = r
    posA[Aidx[q]] = q


@njit(cache=True)
def _crossing(ej, aj, tj):
    """Largest ``lam`` where ``ej + lam aj`` reaches ``+-lam`` (``-inf``: none), counting none
    closer to 0 than the rounding ``tj`` of the correlation allows (``tj / den``)."""
    lj = -np.inf
    den = 1.0 - aj
    if den > 1e-9 and ej > tj:
        lj = ej / den
    den = 1.0 + aj
    if den > 1e-9 and -ej > tj:
        lj = max(lj, -ej / den)
    return lj


@njit(cache=True)
def _sign(x):
    return 1.0 if x >= 0.0 else -1.0


@njit(cache=True)
def run(G, Zt, has_G, c0t, dsc, omega, ynorm, v, signs, posA, blocked, Aidx, k, Ginv, GAA, GAT,
        u, g, e, a, lam, lam_end, n, since, refactor_every, dep_tol, drift_tol, leave_ulps,
        out_lam, out_v, out_kind, out_idx):
    """Process events from the breakpoint ``lam``; see the module docstring.

    Returns ``(status, n_rec, k, lam, Ginv, GAA, u, g, e, a, since, max_drift)``. Recorded
    breakpoints go to ``out_*`` (``out_kind``: +1 enter, -1 leave, 0 the end at ``lam_end``;
    ``out_idx`` the feature). ``v``, ``signs``, ``posA``, ``Aidx`` and ``GAT`` are updated in
    place up to the last recorded breakpoint.
    """
    p = c0t.shape[0]
    cap = out_lam.shape[0]
    n_rec = 0
    max_drift = 0.0
    row = np.empty(p)
    while True:
        if since >= refactor_every:
            return REFACTOR, n_rec, k, lam, Ginv, GAA, u, g, e, a, since, max_drift
        vn1 = 0.0
        for j in range(p):
            vn1 += abs(v[j])
        tscale = 4.0 * _EPS * (1.5 * ynorm + 2.0 * vn1)
        best = -np.inf
        second = -np.inf
        bj = -1
        bkind = 0
        if k < n:  # not saturated
            for j in range(p):
                if posA[j] >= 0 or blocked[j]:
                    continue
                lj = _crossing(e[j], a[j], tscale * dsc[j])
                if lj == -np.inf:
                    continue
                if lj > lam:
                    lj = lam
                if lj > best:
                    second = best
                    best, bj, bkind = lj, j, 1
                elif lj > second:
                    second = lj
        umax = 0.0
        for r in range(k):
            umax = max(umax, abs(u[r]))
        for r in range(k):
            if signs[Aidx[r]] * g[r] < 0.0:
                lr = u[r] / g[r]
                if lr <= leave_ulps * _EPS * umax / abs(g[r]):
                    continue  # reaches 0 at the end of the path, to rounding
                if lr > lam:
                    lr = lam
                if lr > best:
                    second = best
                    best, bj, bkind = lr, r, -1
                elif lr > second:
                    second = lr
        if not best > lam_end:
            for r in range(k):
                v[Aidx[r]] = u[r] - lam_end * g[r]
                if lam_end == 0.0 and abs(u[r]) <= leave_ulps * _EPS * umax:
                    v[Aidx[r]] = 0.0  # reaches 0 at the end of the path (to rounding)
            out_lam[n_rec] = lam_end
            out_v[n_rec] = v
            out_kind[n_rec] = 0
            out_idx[n_rec] = -1
            return END, n_rec + 1, k, lam_end, Ginv, GAA, u, g, e, a, since, max_drift
        ttol = 1e-10 * best
        if second >= best - ttol or best >= lam * (1.0 - 1e-12):
            return FALLBACK, n_rec, k, lam, Ginv, GAA, u, g, e, a, since, max_drift
        lam_new = best
        # tentative transition
        if bkind == 1:
            j = bj
            gram_row(G, Zt, has_G, j, row)
            b = np.empty(k)
            for r in range(k):
                b[r] = row[Aidx[r]]
            Gi1, s = border_add(Ginv, b, row[j], dep_tol)
            if Gi1.shape[0] == 0:
                return FALLBACK, n_rec, k, lam, Ginv, GAA, u, g, e, a, since, max_drift
            GAT[k] = row
            Aidx[k] = j
            GA1 = gaa_add(GAA, row, Aidx, k)
            posA[j] = k
            old_sign = signs[j]
            signs[j] = _sign(e[j] + lam_new * a[j])
            k1 = k + 1
        else:
            r = bj
            j = Aidx[r]
            last = k - 1
            Gi1 = border_remove(Ginv, r)
            GA1 = gaa_remove(GAA, r)
            if r != last:
                _swap(GAT, Aidx, posA, row, r, last)
            posA[j] = -1
            k1 = k - 1
        u1, g1, e1, a1, drift = segment(c0t, omega, dsc, signs, Aidx, k1, Gi1, GA1, GAT, lam_new,
                                        e, a, since % 8 == 7)
        ok = True
        if bkind == 1:
            gscale = 0.0
            for c in range(k1):
                gscale += abs(Gi1[k1 - 1, c]) * abs(omega[Aidx[c]])
            if signs[j] * g1[k1 - 1] <= 1e-9 * gscale:
                ok = False
        if ok:
            # no inactive correlation may reach +-lam at the event itself on the new segment
            # (a zero-length first step), crossings below rounding excepted
            for m in range(p):
                if posA[m] >= 0 or blocked[m]:
                    continue
                if _crossing(e1[m], a1[m], tscale * dsc[m]) >= lam_new * (1.0 - 1e-9):
                    ok = False
                    break
        if not ok:  # undo the tentative transition; Python takes over at lam
            if bkind == 1:
                posA[j] = -1
                signs[j] = old_sign
            else:
                r = bj
                last = k - 1
                if r != last:
                    _swap(GAT, Aidx, posA, row, r, last)
                posA[j] = r
            return FALLBACK, n_rec, k, lam, Ginv, GAA, u, g, e, a, since, max_drift
        # commit: the old segment's coefficients at lam_new, then the new segment
        if bkind == 1:
            for r in range(k):
                v[Aidx[r]] = u[r] - lam_new * g[r]
        else:
            # positions moved: recompute from the old order (the leaver now sits last)
            r = bj
            last = k - 1
            for q in range(k):
                qq = q
                if q == r and r != last:
                    qq = last
                elif q == last and r != last:
                    qq = r
                v[Aidx[q]] = u[qq] - lam_new * g[qq]
            v[j] = 0.0
            blocked[:] = False  # a column dependent on the old set may now enter
        lam = lam_new
        Ginv, GAA, u, g, e, a, k = Gi1, GA1, u1, g1, e1, a1, k1
        since += 1
        max_drift = max(max_drift, drift)
        if drift > drift_tol:
            since = refactor_every
        out_lam[n_rec] = lam
        out_v[n_rec] = v
        out_kind[n_rec] = bkind
        out_idx[n_rec] = j
        n_rec += 1
        if n_rec >= cap:
            return FULL, n_rec, k, lam, Ginv, GAA, u, g, e, a, since, max_drift
