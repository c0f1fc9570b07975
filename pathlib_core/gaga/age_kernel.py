r"""The age-path ODE of self-paced Lasso and logistic regression at compiled speed (numba).

Holds the right-hand side, the event functions and the drift residual of
:class:`~pathlib_core.gaga.linear_path._GAGA` for one piece (fixed sample sets, active set
and signs), and :func:`run_piece`, which feeds them to the compiled DOP853 piece
(:func:`pathlib_core.core.dop853_kernel.dop853_piece`). The formulas are those of the Python
methods they replace, term for term:

- the right-hand side is the ODE (6), ``dw/dlambda = -J^{-1} F_lambda`` on the moving
  coordinates ``A`` with ``J = Z_RA' diag(W) Z_RA + diag(pen_A)``, ``W = v phi'' + (dv/dl)
  phi'^2`` and ``F_lambda = Z_RA' ((dv/dlambda) phi')`` over the samples ``R`` with
  ``v > 0`` (Proposition 2, eqs. (11)-(12), for the Lasso; Theorem 5, eq. (25), for
  logistic regression), solved by LAPACK (least squares where ``J`` is exactly singular);
- the events: each sample's distance to the threshold of its set, relative to the age; for
  the Lasso each active coefficient's sign and each inactive feature's correlation margin
  ``alpha_j - |corr_j|`` relative to the size of its terms; the fold condition on the
  eigenvalues of ``D J D`` (they keep the signs they had at the piece start); the lift of
  conditions reassigned at a turning point over the ``1e-8`` window after it;
- the drift residual: ``F_s(w, lambda)`` of (5) in the piece's sets, each coordinate
  against the size of its terms.

Per-state constants are passed as arrays: ``sc`` holds the scalars (model, regularizer,
``n``, ``C``, mixture, whether ``J`` needs balancing, the number of negative eigenvalues of
``J`` at the piece start, the fold floor, the turning point's age ``t0``, the lift window and
height, and whether a KKT re-solve is pending).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.dop853_kernel import EVENTS, EVENTS_LIGHT, RESIDUAL, RHS, dop853_piece
from ..core.linalg import njit, solve_square

__all__ = ["rhs", "events", "state_residual", "run_piece", "SC_SIZE"]

# indices into sc
_MODEL, _REG, _N, _C, _MIX, _BALANCE, _NNEG, _FTOL, _T0, _LWIDTH, _LHEIGHT, _PENDING = range(12)
SC_SIZE = 12
_SE, _SM = 0, 1   # sample sets easy / mixed (difficult samples are not in R)


@njit(cache=True)
def _logistic_parts(mm):
    """``log(1 + e^m)``, ``sigma(m)`` and ``sigma(-m)`` from one exponential, each to full
    relative accuracy in its tail (as ``linear_models._logistic_parts``)."""
    e = math.exp(-abs(mm))
    inv = 1.0 / (1.0 + e)
    softplus = max(mm, 0.0) + math.log1p(e)
    if mm >= 0:
        return softplus, inv, e * inv
    return softplus, e * inv, inv


@njit(cache=True)
def _loss_parts(z, theta, yi, lasso, n, C):
    """Loss, ``phi'`` and ``phi''`` of one sample at the score ``u = z'theta``: the
    Lasso's ``(u - y)^2 / (2n)`` or the logistic ``C log(1 + exp(-y u))``."""
    u = 0.0
    for j in range(theta.size):
        u += z[j] * theta[j]
    if lasso:
        r = u - yi
        return r * r / (2.0 * n), r / n, 1.0 / n
    softplus, sig, sig_c = _logistic_parts(-yi * u)
    return C * softplus, -C * yi * sig, C * sig * sig_c


@njit(cache=True)
def _row_parts(t, theta, ZR, yR, isM, sc):
    """``d1, d2, v, vl, vlam`` on the rows ``R`` (see ``_GAGA._row_parts``)."""
    nr = ZR.shape[0]
    lasso = sc[_MODEL] == 0.0
    linear = sc[_REG] == 0.0
    n = sc[_N]
    C = sc[_C]
    g = sc[_MIX]
    d1 = np.empty(nr)
    d2 = np.empty(nr)
    v = np.empty(nr)
    vl = np.empty(nr)
    vlam = np.empty(nr)
    for i in range(nr):
        loss, d1[i], d2[i] = _loss_parts(ZR[i], theta, yR[i], lasso, n, C)
        if linear:
            v[i] = 1.0 - loss / t
            vl[i] = -1.0 / t
            vlam[i] = loss / (t * t)
        elif isM[i]:
            sq = max(math.sqrt(loss), 1e-100)
            v[i] = g / sq - g / t
            vl[i] = -0.5 * g / (sq * sq * sq)
            vlam[i] = g / (t * t)
        else:
            v[i] = 1.0
            vl[i] = 0.0
            vlam[i] = 0.0
    return d1, d2, v, vl, vlam


@njit(cache=True)
def _jac(ZRA, penA, d1, d2, v, vl, vlam):
    """``J``, ``F_lambda``, ``v phi'`` and ``W`` (eqs. (5)-(6))."""
    nr, k = ZRA.shape
    W = np.empty(nr)
    vd1 = np.empty(nr)
    wl = np.empty(nr)
    for i in range(nr):
        W[i] = v[i] * d2[i] + vl[i] * d1[i] * d1[i]
        vd1[i] = v[i] * d1[i]
        wl[i] = vlam[i] * d1[i]
    J = np.zeros((k, k))
    Flam = np.zeros(k)
    for i in range(nr):
        w = W[i]
        for a in range(k):
            za = ZRA[i, a] * w
            for b in range(a + 1):
                J[a, b] += za * ZRA[i, b]
            Flam[a] += ZRA[i, a] * wl[i]
    for a in range(k):
        for b in range(a):
            J[b, a] = J[a, b]
        J[a, a] += penA[a]
    return J, Flam, vd1, W


@njit(cache=True)
def rhs(t, theta, ZR, ZRA, yR, isM, A, penA, sc, out):
    """``dw/dlambda`` (the ODE (6)) into ``out`` (0 off the moving coordinates)."""
    for j in range(out.size):
        out[j] = 0.0
    if A.size == 0:
        return
    d1, d2, v, vl, vlam = _row_parts(t, theta, ZR, yR, isM, sc)
    J, Flam, _, _ = _jac(ZRA, penA, d1, d2, v, vl, vlam)
    x = solve_square(J, Flam, -1.0)
    for a in range(A.size):
        out[A[a]] = -x[a]


@njit(cache=True)
def _scaled_eigs(J, ZRA, penA, W, balance):
    k = J.shape[0]
    if balance:
        d = np.empty(k)
        for a in range(k):
            dj = penA[a]
            for i in range(ZRA.shape[0]):
                dj += ZRA[i, a] * ZRA[i, a] * abs(W[i])
            d[a] = 1.0 / math.sqrt(dj) if dj > 0 else 1.0
        Js = np.empty((k, k))
        for a in range(k):
            for b in range(k):
                Js[a, b] = J[a, b] * d[a] * d[b]
        return np.linalg.eigvalsh(Js)
    return np.linalg.eigvalsh(J)


@njit(cache=True)
def events(t, theta, Z, y, part, ZR, ZRA, ZRI, yR, isM, A, inactive, penA, alpha, signs,
           fresh, sc, lift, out, with_fold=True):
    """The event vector of ``_GAGA.events`` into ``out`` (length ``n + d_lasso + 2``);
    without ``with_fold`` the fold component is 1 (not computed)."""
    n, p = Z.shape
    lasso = sc[_MODEL] == 0.0
    linear = sc[_REG] == 0.0
    ns = sc[_N]
    C = sc[_C]
    gmix = sc[_MIX]
    lo = t * gmix / (t + gmix) if not linear else 0.0
    for i in range(n):
        loss = _loss_parts(Z[i], theta, y[i], lasso, ns, C)[0]
        if linear:
            out[i] = ((t - loss) if part[i] == 0 else (loss - t)) / t
        else:
            rr = math.sqrt(loss)
            if part[i] == 0:
                out[i] = (lo - rr) / t
            elif part[i] == 1:
                out[i] = min(rr - lo, t - rr) / t
            else:
                out[i] = (rr - t) / t
    d1, d2, v, vl, vlam = _row_parts(t, theta, ZR, yR, isM, sc)
    J, _, vd1, W = _jac(ZRA, penA, d1, d2, v, vl, vlam)
    nf = 0
    if lasso:
        nf = p
        scale = 0.0
        for j in range(p):
            scale = max(scale, abs(theta[j]))
        if scale == 0.0:
            scale = 1.0
        for j in range(p):
            out[n + j] = signs[j] * theta[j] / scale
        for q in range(inactive.size):
            j = inactive[q]
            corr = 0.0
            csc = 0.0
            for i in range(ZRI.shape[0]):
                corr += vd1[i] * ZRI[i, q]
                size = ns * abs(d1[i]) + 2.0 * abs(yR[i])
                x = (v[i] * d2[i] + abs(vl[i]) * d1[i] * d1[i]) * size
                csc += x * abs(ZRI[i, q])
            out[n + j] = (alpha[j] - abs(corr)) / (alpha[j] + csc)
    fold = 1.0
    k = J.shape[0]
    if k > 0 and with_fold:
        ev = _scaled_eigs(J, ZRA, penA, W, sc[_BALANCE] != 0.0)
        top = 0.0
        for a in range(k):
            top = max(top, abs(ev[a]))
        top = max(top, 1e-300)
        q = int(sc[_NNEG])
        ftol = sc[_FTOL]
        if q < k:
            fold = min(fold, ev[q] / top - ftol)
        if q > 0:
            fold = min(fold, -ev[q - 1] / top - ftol)
    out[n + nf] = fold
    out[n + nf + 1] = -1.0 if sc[_PENDING] != 0.0 else 1.0
    if lift and fresh.size > 0:
        t0 = sc[_T0]
        w = sc[_LWIDTH] * t0
        if 0.0 <= t - t0 < w:
            bump = sc[_LHEIGHT] * (1.0 - (t - t0) / w)
            for q in range(fresh.size):
                out[fresh[q]] += bump


@njit(cache=True)
def state_residual(t, theta, ZR, ZRA, yR, isM, A, penA, alpha, signs, sc):
    """``_GAGA.state_residual``: ``max_j |F_j| / scale_j`` over the moving coordinates."""
    k = A.size
    if k == 0:
        return 0.0
    lasso = sc[_MODEL] == 0.0
    d1, d2, v, vl, _ = _row_parts(t, theta, ZR, yR, isM, sc)
    nr = ZRA.shape[0]
    size = np.zeros(nr)
    W = np.empty(nr)
    for i in range(nr):
        for b in range(k):
            size[i] += abs(ZRA[i, b]) * abs(theta[A[b]])
        W[i] = v[i] * d2[i] + abs(vl[i]) * d1[i] * d1[i]
    worst = 0.0
    for a in range(k):
        j = A[a]
        F = penA[a] * theta[j]
        scale = 0.0
        for i in range(nr):
            z = ZRA[i, a]
            vd1 = v[i] * d1[i]
            F += z * vd1
            if lasso:
                scale += abs(z) * (W[i] * (size[i] + abs(yR[i])))
            else:
                scale += abs(z) * (abs(vd1) + W[i] * size[i])
        if lasso:
            F += alpha[j] * signs[j]
            scale += alpha[j]
        else:
            scale += penA[a] * abs(theta[j])
        if scale > 0.0:
            worst = max(worst, abs(F) / scale)
    return worst


@njit(cache=True)
def run_piece(Z, y, part, ZR, ZRA, ZRI, yR, isM, A, inactive, penA, alpha, signs, fresh, sc,
              t0, z0, t1, shift, g_start, heavy, first_step, rtol, atol, max_step, drift_tol,
              drift_on, floor, req_t, req_y, f_buf, g_buf, r_buf, out_t, out_step, out_yold,
              out_F, out_z, info):
    """One piece of the age-path: :func:`dop853_piece` driven by this module's functions."""
    for code in dop853_piece(t0, z0, t1, shift, g_start, heavy, first_step, rtol, atol, max_step,
                             drift_tol, drift_on, floor, req_t, req_y, f_buf, g_buf, r_buf,
                             out_t, out_step, out_yold, out_F, out_z, info):
        t = req_t[0]
        if code == RHS:
            rhs(t, req_y, ZR, ZRA, yR, isM, A, penA, sc, f_buf)
        elif code == EVENTS or code == EVENTS_LIGHT:
            events(t, req_y, Z, y, part, ZR, ZRA, ZRI, yR, isM, A, inactive, penA, alpha,
                   signs, fresh, sc, True, g_buf, code == EVENTS)
        elif code == RESIDUAL:
            r_buf[0] = state_residual(t, req_y, ZR, ZRA, yR, isM, A, penA, alpha, signs, sc)
        else:
            break
