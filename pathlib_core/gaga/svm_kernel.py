r"""The self-paced SVM's age-path ODE at compiled speed (numba).

Holds the right-hand side, the event functions and the drift residual of
:class:`~pathlib_core.gaga.svm_path._SVMGAGA` for one piece (fixed sample sets), and
:func:`run_piece`, which feeds them to the compiled DOP853 piece
(:func:`pathlib_core.core.dop853_kernel.dop853_piece`). The formulas are those of the Python
methods they replace, term for term (see :mod:`~pathlib_core.gaga.svm_path`):

- the unknowns ``u = (b, alpha_F)`` on the free set ``F`` (``E_Z`` and ``E_P`` for the
  linear regularizer, ``E_Z`` and ``M`` for the mixture) solve the scaled equations whose
  Jacobian is the symmetric saddle matrix ``J = [[0, y_F'], [y_F, Q_FF - diag(d_F)]]``; the
  right-hand side is ``du/dlambda = -J^{-1} dF/dlambda`` (the ODEs (8) and (9) of the paper,
  rows scaled), by LAPACK, or by least squares (cutoff ``1e-9``) where ``J`` has structural
  zero eigenvalues or is singular;
- the events: each sample's condition in the units of the partial-optimum certificate
  (margins against the size of their terms, multipliers against their box), offset by
  ``1e-12``; the fold condition on the eigenvalues of ``J``; the KKT monitor;
- the drift residual: the piece's equations, each against the size of its terms.

Per-state constants are arrays: ``F`` (free indices), ``part`` (sets) and ``sc`` = (regularizer
(0 linear, 1 mixture), ``C``, mixture, the number of negative and of structural zero
eigenvalues of ``J`` at the piece start, the fold floor, whether a KKT re-solve is pending).
"""

from __future__ import annotations

import math

import numpy as np

from ..core.dop853_kernel import EVENTS, EVENTS_LIGHT, RESIDUAL, RHS, dop853_piece
from ..core.linalg import njit, solve_square

__all__ = ["rhs", "events", "state_residual", "run_piece", "SC_SIZE"]

_REG, _C, _MIX, _NNEG, _NZERO, _FTOL, _PENDING = range(7)
SC_SIZE = 7
_N, _Z, _P, _M, _D = 0, 1, 2, 3, 4      # as svm_dual
_ZERO_EIG = 1e-9                        # as svm_path
_NOISE = 1e-12


@njit(cache=True)
def _margins(Q, y, z):
    """``g = 1 - Q alpha - y b``."""
    n = y.size
    g = np.empty(n)
    b = z[n]
    for i in range(n):
        acc = 0.0
        for j in range(n):
            acc += Q[i, j] * z[j]
        g[i] = 1.0 - acc - y[i] * b
    return g


@njit(cache=True)
def _system(t, z, Q, absQ, y, Cv, part, F, sc, scales):
    """``(res, dF/dlambda, size)`` of the scaled equations on ``F`` (``size`` only with
    ``scales``; ``svm_path._SVMGAGA.system``)."""
    n = y.size
    k = F.size
    linear = sc[_REG] == 0.0
    C = sc[_C]
    mix = sc[_MIX]
    res = np.empty(k + 1)
    dlam = np.zeros(k + 1)
    size = np.zeros(k + 1)
    acc = 0.0
    tot = 0.0
    for i in range(n):
        acc += y[i] * z[i]
        tot += abs(z[i])
    res[0] = acc
    size[0] = tot
    b = z[n]
    for q in range(k):
        i = F[q]
        gi = 1.0 - y[i] * b
        si = 1.0 + abs(b)
        for j in range(n):
            gi -= Q[i, j] * z[j]
            if scales:
                si += absQ[i, j] * abs(z[j])
        ai = z[i]
        r = -gi
        if linear:
            if part[i] == _P:
                cp = C * Cv[i]
                r = -gi + t / C - t * ai / cp
                dlam[q + 1] = 1.0 / C - ai / cp
                si += t / C + t * abs(ai) / cp
        elif part[i] == _M:
            loss = max(C * gi, 1e-100)
            cm = Cv[i]
            c = C * cm * mix / (2.0 * loss ** 1.5)
            r = -(ai - cm * mix / math.sqrt(loss) + cm * mix / t) / c
            dlam[q + 1] = (cm * mix / (t * t)) / c
            si = (abs(ai) + cm * mix / math.sqrt(loss) + cm * mix / t) / c
        res[q + 1] = r
        size[q + 1] = si
    return res, dlam, size


@njit(cache=True)
def _jac(t, z, Q, y, Cv, part, F, sc):
    """The saddle matrix ``J`` (``svm_path._SVMGAGA.jac``)."""
    n = y.size
    k = F.size
    linear = sc[_REG] == 0.0
    C = sc[_C]
    mix = sc[_MIX]
    J = np.zeros((k + 1, k + 1))
    b = z[n]
    for q in range(k):
        i = F[q]
        J[0, q + 1] = y[i]
        J[q + 1, 0] = y[i]
        for r in range(k):
            J[q + 1, r + 1] = Q[i, F[r]]
        d = 0.0
        if linear:
            if part[i] == _P:
                d = t / (C * Cv[i])
        elif part[i] == _M:
            gi = 1.0 - y[i] * b
            for j in range(n):
                gi -= Q[i, j] * z[j]
            loss = max(C * max(gi, 0.0), 1e-100)
            d = 2.0 * loss ** 1.5 / (C * Cv[i] * mix)
        J[q + 1, q + 1] -= d
    return J


@njit(cache=True)
def rhs(t, z, Q, absQ, y, Cv, part, F, sc, out):
    """``dz/dlambda`` into ``out``: ``-J^{-1} dF/dlambda`` on ``(b, alpha_F)``, 0 elsewhere."""
    n = y.size
    for j in range(out.size):
        out[j] = 0.0
    _, dlam, _ = _system(t, z, Q, absQ, y, Cv, part, F, sc, False)
    J = _jac(t, z, Q, y, Cv, part, F, sc)
    if sc[_NZERO] == 0.0:
        du = solve_square(J, dlam, _ZERO_EIG)
    else:  # singular but consistent (dual degeneracy): the minimum-norm direction
        du = np.linalg.lstsq(J, dlam, rcond=_ZERO_EIG)[0]
    out[n] = -du[0]
    for q in range(F.size):
        out[F[q]] = -du[q + 1]


@njit(cache=True)
def state_residual(t, z, Q, absQ, y, Cv, part, F, sc):
    """The piece's equations at ``z``, each against the size of its terms (the largest)."""
    res, _, size = _system(t, z, Q, absQ, y, Cv, part, F, sc, True)
    worst = 0.0
    for q in range(res.size):
        if size[q] > 0.0:
            worst = max(worst, abs(res[q]) / size[q])
    return worst


@njit(cache=True)
def events(t, z, Q, absQ, y, Cv, aunit, part, F, sc, out, with_fold=True):
    """The event vector of ``svm_path._SVMGAGA.events`` into ``out`` (length ``n + 2``);
    without ``with_fold`` the fold component is 1 (not computed)."""
    n = y.size
    linear = sc[_REG] == 0.0
    C = sc[_C]
    mix = sc[_MIX]
    b = z[n]
    g = _margins(Q, y, z)
    s = np.empty(n)
    for i in range(n):
        acc = 1.0 + abs(b)
        for j in range(n):
            acc += absQ[i, j] * abs(z[j])
        s[i] = acc
    lo = t * mix / (t + mix) if not linear else 0.0
    hi = t * (1.0 + 1e-8)
    for i in range(n):
        ai = z[i]
        loss = C * max(0.0, g[i])
        # v*, its slope (widened by 1e-8) and the units of alpha_i (svm_dual._SVM._scales)
        if linear:
            v = max(0.0, 1.0 - loss / t)
            slope = 1.0 / t if loss < hi else 0.0
        else:
            rt = math.sqrt(loss)
            v = mix / rt - mix / t if rt > 0 else 1.0
            v = min(max(v, 0.0), 1.0)
            slope = (0.5 * mix / (loss * rt)
                     if (rt > lo * (1.0 - 1e-8) and rt < hi) else 0.0)
        ub = Cv[i] * v
        qs = 0.0
        for j in range(n):
            qs = max(qs, absQ[j, i] / s[j])
        unit = 1.0 / qs if qs > 0 else aunit[i]
        r_u = Cv[i] * slope * C * s[i]
        nu_up = ub + r_u
        if not nu_up > 0:
            nu_up = unit
        nu_lo = min(nu_up, unit)
        if ub <= 1e-8 * r_u:
            nu_lo = max(nu_lo, r_u)
        gs = g[i] / s[i]
        pi = part[i]
        if pi == _N:
            out[i] = _NOISE - gs
        elif pi == _Z:
            out[i] = _NOISE + min(ai / nu_lo, (Cv[i] - ai) / nu_up)
        elif linear:
            if pi == _P:
                out[i] = min(_NOISE + gs, (t - loss) / t)
            elif pi == _D:
                out[i] = (loss - t) / t
            else:
                out[i] = 1.0
        else:
            rt = math.sqrt(loss)
            if pi == _P:
                out[i] = min(_NOISE + gs, (lo - rt) / t)
            elif pi == _M:
                out[i] = min(rt - lo, t - rt) / t
            else:
                out[i] = (rt - t) / t
    out[n + 1] = -1.0 if sc[_PENDING] != 0.0 else 1.0
    out[n] = 1.0
    if not with_fold:
        return
    J = _jac(t, z, Q, y, Cv, part, F, sc)
    w = np.linalg.eigvalsh(J)
    top = 0.0
    for a in range(w.size):
        top = max(top, abs(w[a]))
    top = max(top, 1e-300)
    q = int(sc[_NNEG])
    nz = int(sc[_NZERO])
    ftol = sc[_FTOL]
    fold = 1.0
    if q + nz < w.size:  # the structural zeros sit between the two groups
        fold = min(fold, w[q + nz] / top - ftol)
    if q > 0:
        fold = min(fold, -w[q - 1] / top - ftol)
    out[n] = fold


@njit(cache=True)
def run_piece(Q, absQ, y, Cv, aunit, part, F, sc, t0, z0, t1, shift, g_start, heavy,
              first_step,
              rtol, atol, max_step, drift_tol, drift_on, floor, req_t, req_y, f_buf, g_buf,
              r_buf, out_t, out_step, out_yold, out_F, out_z, info):
    """One piece of the SVM age-path: :func:`dop853_piece` driven by this module's
    functions."""
    for code in dop853_piece(t0, z0, t1, shift, g_start, heavy, first_step, rtol, atol, max_step,
                             drift_tol, drift_on, floor, req_t, req_y, f_buf, g_buf, r_buf,
                             out_t, out_step, out_yold, out_F, out_z, info):
        t = req_t[0]
        if code == RHS:
            rhs(t, req_y, Q, absQ, y, Cv, part, F, sc, f_buf)
        elif code == EVENTS or code == EVENTS_LIGHT:
            events(t, req_y, Q, absQ, y, Cv, aunit, part, F, sc, g_buf, code == EVENTS)
        elif code == RESIDUAL:
            r_buf[0] = state_residual(t, req_y, Q, absQ, y, Cv, part, F, sc)
        else:
            break
