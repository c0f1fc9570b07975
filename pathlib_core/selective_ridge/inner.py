r"""The inner problem of the set iteration and the feature-set conditions.

For fixed feature sets -- strong ``P`` (:math:`|s_i| > \mu`), kink ``K`` (:math:`s_i = \pm\mu`)
and zero -- the dual is the paper's inner problem (34) / (37) plus one equality row
:math:`x^{i\top}\lambda = \pm\mu` per kink feature; :func:`_solve_inner` solves it (a
bordered symmetric system for the squared loss, a QP for the hinge loss), and
:func:`_violations` lists the set conditions of (20) that its solution violates.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg

from ..core.qp import solve_qp
from .cuts import _box, _lam_scale

__all__: list[str] = []


def _equilibration(M, N):
    """Powers of two ``d`` such that ``diag(d) M diag(d)`` has a unit-size diagonal on its
    first ``N`` rows (``H + alpha I`` of the inner system) and border rows whose largest entry
    is of unit size: the symmetric scaling that makes the system's pivots and its condition
    estimate independent of the units of ``lambda`` (which are ``1 / alpha`` where ``H`` is
    small, as for a lasso-like fit, and smaller where ``H`` dominates)."""
    d = np.ones(len(M))
    dg = np.diag(M)[:N]
    pos = dg > 0
    d[:N][pos] = np.exp2(np.round(-0.5 * np.log2(dg[pos])))
    if len(M) > N:
        rowmax = np.max(np.abs(M[N:, :N]) * d[:N], axis=1)
        big = rowmax > 0
        d[N:][big] = np.exp2(np.round(-np.log2(rowmax[big])))
    return d


def _backward_ok(M, S, R, rtol) -> bool:
    """Normwise backward error of ``S`` as a solution of ``M S = R``, column by column:
    ``||M s - r|| <= rtol (||M||_F ||s|| + ||r||)`` (2-norms; the Frobenius norm bounds the
    spectral one), and ``S`` finite."""
    if not np.all(np.isfinite(S)):
        return False
    res = np.linalg.norm(M @ S - R, axis=0)
    nM = float(np.linalg.norm(M))
    return bool(np.all(res <= rtol * (nM * np.linalg.norm(S, axis=0)
                                      + np.linalg.norm(R, axis=0))))


def _sym_solve(M, R, rtol):
    """``(S, ok)``: ``M S = R`` by the symmetric indefinite factorization; ``ok`` False if
    the matrix is singular to working precision (scipy's condition estimate) or the
    backward error exceeds ``rtol``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            S = scipy.linalg.solve(M, R, assume_a="sym", check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning, ValueError):
        return None, False
    return S, _backward_ok(M, S, R, rtol)


def _solve_bordered(M, R, N):
    """Solve the symmetric inner system ``M S = R`` (``N`` multiplier rows, then the border
    rows of the bias and the kink features): by the symmetric indefinite factorization of
    ``M``; where that fails, of ``M`` after the scaling of :func:`_equilibration` (a graded
    matrix, e.g. ``alpha`` tiny next to ``X_P X_P'``, looks singular before it); where the
    scaled matrix is singular to working precision (dependent kink rows, e.g. duplicated
    features), by the minimum-norm least-squares solution. Returns ``(S, ok)``; ``ok`` is
    False unless the (scaled) system is solved with a small backward error (1e-10 for a
    factorization, 1e-7 for the least-squares solution of a consistent singular system)."""
    S, ok = _sym_solve(M, R, 1e-10)
    if ok:
        return S, True
    d = _equilibration(M, N)
    Ms = M * d[:, None] * d[None, :]
    Rs = R * d[:, None]
    Ss, ok = _sym_solve(Ms, Rs, 1e-10)
    if not ok:
        try:
            Ss = scipy.linalg.lstsq(Ms, Rs, check_finite=False)[0]
        except (np.linalg.LinAlgError, ValueError):
            return np.zeros_like(R), False
        ok = _backward_ok(Ms, Ss, Rs, 1e-7)
    return Ss * d[:, None], ok


def _solve_inner(X, y, alpha, mu, loss, P, K, sig, lam0, affine=False):
    """Inner problem (34)/(37) on the strong set ``P`` plus equalities ``x^{i'} lam = sig mu``
    for the kink set ``K``. Returns ``(lam, b, a_K, ok)``; with ``affine`` (squared loss) also
    the ``(N + 1 + |K|, 2)`` array ``S`` whose columns solve the system for the right-hand
    sides ``[y; 0; 0]`` and ``[0; 0; sig]``: the solution at any ``mu`` on the same sets is
    ``S @ [1, mu]`` (the system's matrix does not depend on ``mu``)."""
    N = X.shape[0]
    XP = X[:, P]
    H = XP @ XP.T  # N x N, the only Gram matrix ever formed
    XK = X[:, K]
    if loss == "squared":
        H = H + alpha * np.eye(N)
        k = XK.shape[1]
        M = np.zeros((N + 1 + k, N + 1 + k))
        M[:N, :N] = H
        M[:N, N] = 1.0
        M[N, :N] = 1.0
        M[:N, N + 1:] = XK
        M[N + 1:, :N] = XK.T
        R = np.zeros((N + 1 + k, 2))
        R[:N, 0] = y
        R[N + 1:, 1] = sig
        S, ok = _solve_bordered(M, R, N)
        sol = S[:, 0] + mu * S[:, 1]
        out = sol[:N], float(sol[N]), sol[N + 1:], ok
        return out + (S,) if affine else out
    # hinge (37): the QP in u = lambda / sc with its objective divided by sc (see _lam_scale:
    # the multipliers of the equality rows, b and a_K, are unchanged)
    sc = _lam_scale(alpha, mu, N * float(np.abs(XK).max()) if len(K) else None)
    lb, ub = _box(y, alpha)
    lb, ub = lb / sc, ub / sc
    A = np.vstack([np.ones((1, N)), XK.T])
    b = np.concatenate([[0.0], sig * (mu / sc)])
    H = (0.5 * sc) * (H + H.T)
    res = solve_qp(H, -y, A=A, b=b, lb=lb, ub=ub, warm_start=np.clip(lam0 / sc, lb, ub))
    if res.status != "optimal":
        return (lam0, math.nan, np.zeros(len(K)), False) + ((None,) if affine else ())
    aK = res.nu[1:].copy()
    if len(K) > 1:
        # dependent kink rows (duplicated or collinear features) share their multiplier in
        # many ways, and the solver gives a redundant row none; of all splits with the same
        # X_K a_K take the minimum-norm one (duplicates share equally), so that a feature
        # is not sent to the strong set only because its twin's share landed on it
        aK = np.linalg.lstsq(XK, XK @ aK, rcond=None)[0]
    return (sc * res.x, float(res.nu[0]), aK, True) + ((None,) if affine else ())


def _violations(s, mu, P, K, sig, aK, ftol, n, max_enter=None, atol=None):
    """Feature-set conditions violated at ``s = X' lam``: ``(size, index, new set, sign)``.

    ``ftol``: the tolerance of each feature's conditions (a scalar or one per feature; see
    :class:`_FeatureTol`); ``atol``: that of the sign of a kink coefficient (``ftol`` if not
    given; see :meth:`_FeatureTol.coef`). With ``max_enter`` only the
    ``max_enter`` largest violations of zero features (which enter the kink set) are
    listed, largest first; the others are all listed."""
    if np.ndim(ftol) == 0:
        ftol = np.full(n, float(ftol))
    inZ = np.ones(n, bool)
    inZ[P] = False
    inZ[K] = False
    zv = np.where(inZ, np.abs(s) - mu, -np.inf)
    enter = np.flatnonzero(zv > ftol)
    if max_enter is not None and len(enter) > max_enter:
        enter = enter[np.argpartition(-zv[enter], max_enter - 1)[:max_enter]]
    enter = enter[np.argsort(-zv[enter], kind="stable")]
    moves = [(float(zv[i]), int(i), "K", float(np.sign(s[i]))) for i in enter]
    fP = ftol[P]
    sP = np.abs(s[P])
    vP = mu - sP
    for j in np.flatnonzero(vP > fP):
        i = int(P[j])
        moves.append((float(vP[j]), i, "K" if sP[j] > fP[j] else "Z", float(np.sign(s[i]))))
    fK = ftol[K]
    aK_tol = fK if atol is None else (np.full(len(K), float(atol)) if np.ndim(atol) == 0
                                      else atol[K])
    sa = sig * aK
    for j in np.flatnonzero(sa < -aK_tol):
        moves.append((float(-sa[j]), int(K[j]), "Z", 0.0))
    for j in np.flatnonzero(sa > mu + fK):
        moves.append((float(sa[j] - mu), int(K[j]), "P", 0.0))
    return moves


def _apply_moves(P, K, sig, moves):
    setP = dict.fromkeys(P.tolist())
    setK = dict(zip(K.tolist(), sig.tolist(), strict=True))
    for _, i, to, sg in moves:
        setP.pop(i, None)
        setK.pop(i, None)
        if to == "P":
            setP[i] = None
        elif to == "K":
            setK[i] = float(sg)
    Pn = np.array(sorted(setP), dtype=int)
    Kn = np.array(sorted(setK), dtype=int)
    return Pn, Kn, np.array([setK[i] for i in Kn], dtype=float)


def _coef_from(s, P, K, aK, n):
    """Coefficients (20): ``a_i = s_i`` on the strong set ``P``, the kink multipliers on ``K``,
    zero elsewhere (a feature with ``|s_i|`` above ``mu`` only by rounding stays at zero)."""
    a = np.zeros(n)
    a[P] = s[P]
    a[K] = aK
    return a
