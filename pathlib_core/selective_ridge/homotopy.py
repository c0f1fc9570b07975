r"""The exact homotopy in ``mu`` (squared loss), which finishes a fit whose set iteration stalls.

For fixed feature sets the solution of the inner system is affine in ``mu``; the homotopy
follows it from sets known to be optimal at a larger ``mu`` (a warm start, or the empty model
at ``mu_0``) down to the target, one set change per breakpoint, keeping the inverse of the
inner matrix up to date by rank-one and bordering updates
(:mod:`pathlib_core.core.linalg`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg

from ..core.linalg import REFACTOR_EVERY_VERIFIED, border_add, border_remove
from .empty_model import _empty_dual
from .inner import _coef_from, _equilibration, _violations
from .objectives import _best_intercept

__all__: list[str] = []


def _mu_homotopy(X, y, alpha, mu_t, start, ft, max_steps):
    """Exact homotopy in ``mu`` for the squared loss, from a certified point down to ``mu_t``.

    For fixed feature sets ``(P, K, sig)`` the inner system (34)-(35) with the kink rows has
    the right-hand side ``[y; 0; sig * mu]``, so its solution ``(lambda, b, a_K)`` is affine in
    ``mu``, and so is ``s = X' lambda``. Starting from ``start = (mu_s, P, K, sig)`` (sets that
    are optimal at ``mu_s >= mu_t``; ``None``: the empty model at ``mu_0``), we follow this
    affine piece downwards to the largest ``mu`` where one set condition of (20) becomes tight
    (a zero feature reaches ``|s_i| = mu``, a strong one falls back to it, a kink coefficient
    reaches 0 or ``mu``), move that one feature and continue. Returns the same tuple as
    :func:`_dual_fit` (``converged`` is True only if the conditions hold at ``mu_t``, to the
    per-feature tolerances ``ft``, a :class:`_FeatureTol`).
    """
    return _mu_homotopy_multi(X, y, alpha, [mu_t], start, ft, max_steps)[0]


def _homotopy_fail(N, n, steps=0):
    return (np.zeros(N), np.zeros(n), math.nan, steps, False, np.zeros(n, bool),
            np.zeros(n, bool))


# updates of the inverse between exact refactorizations: the core's constant for verified
# engines, since every point the homotopy returns is re-solved exactly from its matrix (no
# drift reaches a result), a tiny pivot forces a refactorization anyway, and one costs a dense
# O(m^3) solve against O(m^2) per update
REFRESH = REFACTOR_EVERY_VERIFIED


def _bordered(Minv, b, d):
    """``[[M, b], [b', d]]^{-1}`` from ``Minv = M^{-1}`` for a Schur complement
    ``s = d - b' M^{-1} b`` of either sign (the inner matrix is indefinite: its border rows
    have zero diagonal); None if ``s`` is 0 or not finite
    (:func:`~pathlib_core.core.linalg.border_add` with ``signed=True``).
    """
    new, _ = border_add(Minv, b, d, 0.0, True)
    return new if new.size else None


class _InnerInverse:
    """The inverse of the inner matrix (sel-inner) for sets ``(P, K)``, kept up to date.

    ``M = [[X_P X_P' + alpha I, 1, X_K], [1', 0, 0], [X_K', 0, 0]]`` with the kink rows in
    the order of :attr:`K`. A kink row added / removed is a bordering / downdating step of
    :mod:`pathlib_core.core.linalg` (a removed row's place is taken by the last one); a
    feature entering / leaving ``P`` is the symmetric rank-one change ``+- x_i x_i'`` of the
    top-left block, whose inverse is the leading block of the inverse of ``M`` bordered by
    ``(x_i, -+1)`` (Sherman-Morrison as a bordering step); each costs ``O(m^2)`` with
    ``m = N + 1 + |K|``. Every ``REFRESH`` updates, and whenever an
    update's pivot is tiny, the inverse is recomputed from ``M``. ``ok`` turns False when
    ``M`` is singular.
    """

    def __init__(self, X, alpha, P, K):
        self.X, self.alpha = X, alpha
        self.N = X.shape[0]
        self.P = set(int(i) for i in P)
        self.K = [int(i) for i in K]
        self.G = X[:, sorted(self.P)] @ X[:, sorted(self.P)].T
        self.n_updates = 0
        self.dependent = False  # the last kink row offered was left out (see add_kink)
        self.ok = self.refresh()

    def matrix(self):
        N, k = self.N, len(self.K)
        M = np.zeros((N + 1 + k, N + 1 + k))
        M[:N, :N] = self.G
        M[np.arange(N), np.arange(N)] += self.alpha
        M[:N, N] = 1.0
        M[N, :N] = 1.0
        XK = self.X[:, self.K]
        M[:N, N + 1:] = XK
        M[N + 1:, :N] = XK.T
        return M

    def refresh(self):
        self.G = self.X[:, sorted(self.P)] @ self.X[:, sorted(self.P)].T
        M = self.matrix()
        # inverted after the symmetric power-of-two scaling of _equilibration (the units of
        # lambda are 1 / alpha where X_P X_P' is small); checked on the scaled matrix
        d = _equilibration(M, self.N)
        Ms = M * d[:, None] * d[None, :]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
                Minv_s = scipy.linalg.solve(Ms, np.eye(len(M)), assume_a="sym",
                                            check_finite=False)
        except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning, ValueError):
            return False
        if not np.allclose(Ms @ Minv_s, np.eye(len(M)), rtol=0, atol=1e-8):
            return False
        Minv = Minv_s * d[:, None] * d[None, :]
        self.Minv = 0.5 * (Minv + Minv.T)
        self.n_updates = 0
        return True

    def _counted(self):
        self.n_updates += 1
        if self.n_updates >= REFRESH:
            return self.refresh()
        return True

    def _pivot_ok(self, d, scale):
        return abs(d) > 1e-9 * scale

    def toggle_strong(self, i, enter):
        """Feature ``i`` enters (``enter``) or leaves ``P``."""
        xi = self.X[:, i]
        sgn = 1.0 if enter else -1.0
        (self.P.add if enter else self.P.discard)(i)
        self.G += sgn * np.outer(xi, xi)
        u = self.Minv[:, : self.N] @ xi
        den = 1.0 + sgn * float(xi @ u[: self.N])
        if not self._pivot_ok(den, 1.0 + abs(float(xi @ u[: self.N]))):
            return self.refresh()
        m = len(u)
        # (M + sgn x x')^{-1}: the leading block of [[M, x], [x', -sgn]]^{-1}, whose Schur
        # complement is -sgn den
        new = _bordered(self.Minv, self._padded(xi, m), -sgn)
        if new is None:
            return self.refresh()
        self.Minv = np.ascontiguousarray(new[:m, :m])
        return self._counted()

    def _padded(self, xi, m):
        """The column ``[x_i; 0]`` of length ``m`` (zero on the bias and kink rows)."""
        b = np.zeros(m)
        b[: self.N] = xi
        return b

    def add_kink(self, i):
        """Append the kink row of feature ``i``; False if the matrix cannot be inverted.

        A row that depends on the bias and kink rows already there (a duplicated feature) is
        left out: ``i`` stays a zero feature, held at ``|s_i| = mu`` by the rows it depends
        on, and :attr:`dependent` is set.
        """
        self.dependent = False
        xi = self.X[:, i]
        w = self.Minv[:, : self.N] @ xi
        d = -float(xi @ w[: self.N])
        self.K.append(i)
        # the new pivot against the size of its terms (a row dependent on the border gives
        # rounding there, whatever the units of the inverse)
        if not self._pivot_ok(d, float(np.abs(xi) @ (np.abs(self.Minv[: self.N, : self.N])
                                                       @ np.abs(xi)))):
            if self.refresh():
                return True
            self.K.pop()
            self.dependent = True
            return self.refresh()
        new = _bordered(self.Minv, self._padded(xi, len(w)), 0.0)
        if new is None:
            return self.refresh()
        self.Minv = new
        return self._counted()

    def remove_kink(self, i):
        """Remove the kink row of feature ``i`` (the last kink row takes its place)."""
        p = self.K.index(i)
        last = self.K.pop()
        if p < len(self.K):
            self.K[p] = last
        q = self.N + 1 + p
        g = self.Minv[q, q]
        # the pivot against the size of the terms of its row of Minv M = I
        if not self._pivot_ok(g, 1e-3 * float(np.abs(self.Minv[q]).max())):
            return self.refresh()
        self.Minv = border_remove(self.Minv, q)
        return self._counted()


def _mu_homotopy_multi(X, y, alpha, targets, start, ft, max_steps):
    """:func:`_mu_homotopy` through several targets (decreasing) in one pass.

    Returns one :func:`_dual_fit`-style tuple per target; its ``n_iter`` entry is the number
    of breakpoints passed since the previous target. After a failure every remaining target
    gets a tuple with ``converged == False``.

    Cost per breakpoint: the inverse of the inner matrix is kept up to date by rank-one and
    bordering updates (:class:`_InnerInverse`, ``O((N + |K|)^2)``), plus two products
    ``X' lambda`` (``O(N n)``). The solution at each target is re-solved exactly from the
    matrix of its sets (no drift reaches a returned result).
    """
    N, n = X.shape
    targets = [float(t) for t in targets]
    out = []
    if start is None:
        lam0 = _empty_dual(X, y, alpha, "squared")
        mu_c = float(np.max(np.abs(X.T @ lam0), initial=0.0))
        P, K, sig = np.zeros(0, int), np.zeros(0, int), np.zeros(0)
    else:
        mu_c, P, K, sig = start
    if not targets or mu_c < targets[0]:
        return [_homotopy_fail(N, n) for _ in targets]
    XT = np.ascontiguousarray(X.T)
    inv = _InnerInverse(X, alpha, P, K)
    signs = dict(zip((int(i) for i in K), (float(s) for s in sig), strict=True))
    last = -1
    steps = 0
    q = 0  # next target
    rhs = np.concatenate([y, [0.0]])
    while inv.ok:
        steps += 1
        if steps > max_steps:
            break
        K = np.array(inv.K, dtype=int)
        P = np.fromiter(inv.P, dtype=int, count=len(inv.P))
        sig = np.array([signs[i] for i in inv.K], dtype=float)
        k = len(K)
        Minv = inv.Minv
        sol_a = Minv[:, : N + 1] @ rhs
        sol_d = Minv[:, N + 1:] @ sig if k else np.zeros(N + 1)
        la, ld = sol_a[:N], sol_d[:N]
        sa, sd = XT @ la, XT @ ld  # two matrix-vector products beat one (n x 2) product
        ka, kd = sol_a[N + 1:], sol_d[N + 1:]
        # constraints c(mu) = c_0 + c_1 * mu >= 0, with the feature and its new set
        inZ = np.ones(n, bool)
        inZ[P] = False
        inZ[K] = False
        z = np.flatnonzero(inZ)
        sP = np.sign(sa[P] + mu_c * sd[P])
        c_0 = np.concatenate([-sa[z], sa[z], sP * sa[P], sig * ka, -sig * ka])
        c_1 = np.concatenate([1 - sd[z], 1 + sd[z], sP * sd[P] - 1, sig * kd, 1 - sig * kd])
        idx = np.concatenate([z, z, P, K, K])
        d_terms = np.concatenate([sd[z], sd[z], sd[P], kd, kd])
        # going down in mu, c decreases where c_1 > 0; it crosses zero at -c_0 / c_1
        # (c is in the units of s; c_1 * mu_c is its change over [0, mu_c])
        # (a slope at rounding level of its terms, 1 and s_d, is none: a feature held at
        # |s_i| = mu by a duplicate in the kink set has c = 0 identically)
        grow = c_1 * mu_c > 1e-12 * (np.abs(c_0) + mu_c * (1.0 + np.abs(d_terms)))
        cross = np.full(len(c_0), -np.inf)
        cross[grow] = -c_0[grow] / c_1[grow]
        cross[(idx == last) & (cross >= mu_c * (1.0 - 1e-12))] = -np.inf
        j = int(np.argmax(cross)) if len(cross) else -1
        mu_next = float(cross[j]) if j >= 0 else -np.inf
        # every target in [mu_next, mu_c] lies on this affine piece: solve it exactly there
        while q < len(targets) and targets[q] >= mu_next:
            out.append(_homotopy_point(X, y, alpha, targets[q], inv, sig, ft, steps))
            steps = 0
            if not out[-1][4]:
                return out + [_homotopy_fail(N, n) for _ in targets[q + 1:]]
            q += 1
        if q == len(targets):
            return out
        mu_c = min(mu_c, mu_next)
        i, last = int(idx[j]), int(idx[j])
        # the new set of feature i: a zero / strong feature reaching |s_i| = mu enters the
        # kink set; a kink coefficient reaching 0 leaves to Z, reaching +-mu goes to P
        n_z, n_p = len(z), len(P)
        if j < 2 * n_z + n_p:  # Z or P -> K
            if i in inv.P:
                inv.ok = inv.toggle_strong(i, enter=False)
            sgn = (1.0 if j < n_z else -1.0) if j < 2 * n_z else sP[j - 2 * n_z]
            signs[i] = float(sgn) if sgn != 0 else 1.0
            if inv.ok:
                inv.ok = inv.add_kink(i)
                if inv.ok and inv.dependent:
                    signs.pop(i)  # a duplicate of a kink feature: it stays at zero
        else:  # K -> Z or K -> P
            inv.ok = inv.remove_kink(i)
            signs.pop(i, None)
            if inv.ok and j >= 2 * n_z + n_p + k:
                inv.ok = inv.toggle_strong(i, enter=True)
        if len(inv.K) >= N:
            break
    return out + [_homotopy_fail(N, n, steps) for _ in targets[q:]]


def _homotopy_point(X, y, alpha, mu_t, inv, sig, ft, steps):
    """The exact solution at ``mu_t`` for the current sets, certified by the set conditions."""
    N, n = X.shape
    K = np.array(inv.K, dtype=int)
    P = np.array(sorted(inv.P), dtype=int)
    inv.G = X[:, P] @ X[:, P].T
    M = inv.matrix()
    rhs = np.concatenate([y, [0.0], sig * mu_t])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", scipy.linalg.LinAlgWarning)
            sol = scipy.linalg.solve(M, rhs, assume_a="sym", check_finite=False)
    except (np.linalg.LinAlgError, scipy.linalg.LinAlgWarning):
        return _homotopy_fail(N, n, steps)
    lam, aK = sol[:N], sol[N + 1:]
    s = X.T @ lam
    atol = ft.coef(lam, y, alpha)
    if _violations(s, mu_t, P, K, sig, aK, ft.at(lam, mu_t), n, atol=atol):
        return _homotopy_fail(N, n, steps)
    aK = np.where(np.abs(aK) > atol[K], aK, 0.0)
    coef = _coef_from(s, P, K, aK, n)
    b = _best_intercept(X @ coef, y, "squared")
    kink = np.zeros(n, bool)
    kink[K] = True
    strong = np.zeros(n, bool)
    strong[P] = True
    return lam, coef, b, steps, True, strong, kink
