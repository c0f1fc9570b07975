r"""Semismooth Newton augmented Lagrangian start for the selective-ridge dual (squared loss).

The set iteration of :mod:`pathlib_core.selective_ridge.set_iteration` solves the dual
exactly once it knows the feature sets (zero ``Z``, kink ``K``, strong ``P``); from a cold
start at a small selectivity (hundreds of strong features) it needs many set changes to find
them. This module finds the
sets first, with an augmented Lagrangian method on the dual in the spirit of the SSNAL
method for the Lasso ({cite}`li2018ssnal`): every linear system is ``N x N`` (objects) and the
only work in the number of features ``n`` is ``X' u`` and ``X_J D_J X_J'``, as in the
paper's own method (linear in ``n``).

With centred data (``X_c``, ``c = y - mean(y)``; the bias is then ``b = mean(y - X a)``)
criterion (11) with the squared loss reads

.. math::

    \min_a\; h(X_c a) + p(a), \qquad h(z) = \lVert c - z\rVert^2, \qquad
    p(a) = \gamma \sum_i r_\mu(a_i).

Its dual is :math:`\min_{u, w} h^*(u) + p^*(w)` s.t. :math:`X_c^\top u + w = 0` with
:math:`h^*(u) = c^\top u + \lVert u\rVert^2 / 4`; at the optimum ``u = -2 r`` with the
residual ``r = c - X_c a``, i.e. ``u = -2 alpha lambda`` with the paper's multipliers. The
augmented Lagrangian method on this dual keeps ``a`` as the multiplier of the equality: with a
penalty ``sigma`` it minimizes over ``u`` (``w`` in closed form)

.. math::

    \psi(u) = h^*(u) - a^\top X_c^\top u + \tfrac{\sigma}{2}\lVert X_c^\top u\rVert^2
      - \operatorname{env}_{\sigma p}(a - \sigma X_c^\top u),
    \qquad
    \nabla\psi(u) = \tfrac12 u + c - X_c\,\operatorname{prox}_{\sigma p}(a - \sigma X_c^\top u),

by Newton steps with the generalized Hessian :math:`\tfrac12 I + \sigma X_c D X_c^\top`
(``D`` the derivative of the prox: 0 on the dead zone, 1 on the lasso zone, ``1/(1 + 2
sigma alpha)`` on the ridge zone; Armijo line search), then sets
:math:`a \leftarrow \operatorname{prox}_{\sigma p}(a - \sigma X_c^\top u)` and increases
``sigma``. The prox of ``sigma p`` is the scalar map

.. math::

    \operatorname{prox}(v) = \begin{cases} 0, & |v| \le 2\sigma\gamma\mu \\
      \operatorname{sign}(v)(|v| - 2\sigma\gamma\mu), & |v| \le \mu + 2\sigma\gamma\mu \\
      v / (1 + 2\sigma\gamma), & \text{otherwise,} \end{cases}

so every iterate has crisp feature sets (``a_i = 0``, ``0 < |a_i| <= mu``, ``|a_i| > mu``).
These sets, not the approximate ``a``, are what the caller uses: it re-solves the dual exactly
on them and certifies the result by the set conditions (20) (``certify`` below); nothing
approximate reaches a returned fit.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

__all__: list[str] = []

SIGMA_START = 10.0  # first penalty, times 1 / ||X_c||_F^2
SIGMA_WARM = 1e4  # first penalty after a warm start, times 1 / ||X_c||_F^2
SIGMA_GROWTH = 10.0  # penalty factor per outer iteration
SIGMA_MAX = 1e12  # largest penalty, times 1 / ||X_c||_F^2 (keeps the Newton matrix factorable)
MAX_OUTER = 60  # outer (multiplier) iterations
MAX_NEWTON = 50  # Newton steps per outer iteration
EPS_FACTOR = 0.2  # inner tolerance: this times the smaller of the last tolerance and violation
CERTIFY_AT = 1e-2  # certify sets once the set conditions hold to this (relative)
REBUILD_EVERY = 50  # incremental Gram updates between rebuilds


def _prox(v, sigma, alpha, mu):
    """The prox of ``sigma * alpha * r_mu`` at ``v`` and its derivative (0, 1 or
    ``1 / (1 + 2 sigma alpha)``), element-wise."""
    av = np.abs(v)
    t1 = 2.0 * sigma * alpha * mu
    t2 = mu + t1
    shrink = 1.0 / (1.0 + 2.0 * sigma * alpha)
    dead = av <= t1
    lasso = ~dead & (av <= t2)
    z = np.where(dead, 0.0, np.where(lasso, np.sign(v) * (av - t1), v * shrink))
    d = np.where(dead, 0.0, np.where(lasso, 1.0, shrink))
    return z, d


def _penalty(a, alpha, mu):
    aa = np.abs(a)
    return alpha * float((2.0 * mu * aa + np.maximum(0.0, aa - mu) ** 2).sum())


def _set_violation(a, s, mu):
    """Largest violation of the set conditions (20) by ``(a, s = X' lambda)``, relative to
    ``mu``: strong ``a_i = s_i``, kink ``|s_i| = mu`` (same sign), zero ``|s_i| <= mu``."""
    aa = np.abs(a)
    v = np.where(aa > mu, np.abs(a - s),
                 np.where(aa > 0, np.abs(s - np.sign(a) * mu), np.maximum(0.0, np.abs(s) - mu)))
    return float(v.max(initial=0.0)) / mu


class _ZoneGram:
    """``L = X_lasso X_lasso'`` and ``R = X_ridge X_ridge'`` over the prox zones, so that the
    Newton matrix is ``I / 2 + sigma (L + R / (1 + 2 sigma alpha))``.

    Between Newton steps only a few features change zone: ``update`` adds and removes their
    outer products (``O(N^2)`` each) and rebuilds from scratch when that is cheaper, and every
    ``REBUILD_EVERY`` updates (no drift accumulates)."""

    def __init__(self, Xc):
        self.Xc = Xc
        self.zone = None
        self.n_updates = 0
        self.G = None  # X_c X_c', formed when a rebuild by complement is cheaper

    def _gram(self, mask):
        Xs = self.Xc[:, mask]
        return Xs @ Xs.T

    def _rebuild_cost(self, zone):
        N = self.Xc.shape[0]
        n_lasso = int((zone == 1).sum())
        return min(n_lasso, len(zone) - n_lasso + N) + int((zone == 2).sum())

    def _rebuild(self, zone):
        N = self.Xc.shape[0]
        lasso = zone == 1
        n_lasso = int(lasso.sum())
        if len(zone) - n_lasso + N < n_lasso:  # mostly lasso zone: X_c X_c' minus the rest
            if self.G is None:
                self.G = self.Xc @ self.Xc.T
            self.L = self.G - self._gram(~lasso)
        else:
            self.L = self._gram(lasso)
        self.R = self._gram(zone == 2)
        self.n_updates = 0

    def update(self, d):
        zone = np.where(d == 0.0, 0, np.where(d == 1.0, 1, 2)).astype(np.int8)
        if self.zone is None or self.n_updates >= REBUILD_EVERY:
            self._rebuild(zone)
            self.zone = zone
            return self.L, self.R
        ch = np.flatnonzero(zone != self.zone)
        old, new = self.zone[ch], zone[ch]
        moves = []
        for acc, k in ((self.L, 1), (self.R, 2)):
            w = (new == k).astype(float) - (old == k).astype(float)
            nz = np.flatnonzero(w)
            if len(nz):
                moves.append((acc, ch[nz], w[nz]))
        if sum(len(m[1]) for m in moves) > self._rebuild_cost(zone):
            self._rebuild(zone)
        elif moves:
            for acc, idx, w in moves:
                Xs = self.Xc[:, idx]
                acc += (Xs * w) @ Xs.T
            self.n_updates += 1
        self.zone = zone
        return self.L, self.R


def alm_sets(X, y, alpha, mu, certify, *, coef0=None, tol=1e-9):
    """Search the feature sets of the squared-loss fit at ``(alpha, mu)`` by the augmented
    Lagrangian method above; ``certify`` turns sets into an exact solution.

    Parameters
    ----------
    X : ndarray of shape (N, n)
    y : ndarray of shape (N,)
    alpha, mu : float > 0
    certify : callable ``(strong, kink, lam) -> result or None``
        Called with boolean masks (``|a_i| > mu``, ``0 < |a_i| <= mu``) and the multipliers
        ``lam = r / alpha`` of the current outer iterate whenever its set conditions hold to
        ``CERTIFY_AT`` (relative to ``mu``) and its sets have not been tried yet, and once
        more at the end. The first result that is not ``None`` is returned.
    coef0 : ndarray of shape (n,), optional
        A start for ``a`` (e.g. the fit at a nearby ``mu``); the penalty ``sigma`` then
        starts larger.
    tol : float
        Stop when the set conditions hold to ``tol`` relative to ``mu``.

    Returns
    -------
    (result, n_newton) : the first non-``None`` value of ``certify`` (or ``None``) and the
    number of Newton systems solved.
    """
    N, n = X.shape
    xm = X.mean(axis=0)
    Xc = X - xm
    c = y - y.mean()
    scale = float(np.einsum("ij,ij->", Xc, Xc))  # ||X_c||_F^2 >= ||X_c||_2^2
    if scale == 0.0:
        return None, 0
    sigma = SIGMA_START / scale
    sigma_max = SIGMA_MAX / scale
    a = np.zeros(n) if coef0 is None else np.asarray(coef0, float).copy()
    if coef0 is not None and np.any(a):
        sigma = SIGMA_WARM / scale  # a warm start is already close: a larger proximal step
    u = -2.0 * (c - Xc @ a)
    cnorm = 1.0 + float(np.linalg.norm(c))
    eps = 1e-2
    n_newton = 0
    last_sets = None
    tried = set()
    gram = _ZoneGram(Xc)

    def psi(u, w):
        """psi at u (given w = X_c' u) and the prox there; O(n), no product with X."""
        v = a - sigma * w
        z, d = _prox(v, sigma, alpha, mu)
        val = (float(c @ u) + 0.25 * float(u @ u) - float(a @ w) + 0.5 * sigma * float(w @ w)
               - _penalty(z, alpha, mu) - float((z - v) @ (z - v)) / (2.0 * sigma))
        return val, z, d

    for _ in range(MAX_OUTER):
        w = Xc.T @ u
        val, z, d = psi(u, w)
        grad = c + 0.5 * u - Xc @ z
        for _ in range(MAX_NEWTON):
            if np.linalg.norm(grad) <= max(1e-13, min(eps, 0.1)) * cnorm:
                break
            L, R = gram.update(d)
            H = sigma * (L + (1.0 / (1.0 + 2.0 * sigma * alpha)) * R)
            H[np.diag_indices(N)] += 0.5
            try:
                du = -scipy.linalg.solve(H, grad, assume_a="pos", check_finite=False)
            except (np.linalg.LinAlgError, ValueError):
                return None, n_newton
            n_newton += 1
            dw = Xc.T @ du
            slope = float(grad @ du)
            t = 1.0
            while True:
                nval, nz, nd = psi(u + t * du, w + t * dw)
                if nval <= val + 1e-4 * t * slope + 1e-14 * abs(val) or t < 1e-8:
                    break
                t *= 0.5
            u = u + t * du
            w = w + t * dw
            val, z, d = nval, nz, nd
            grad = c + 0.5 * u - Xc @ z
        a = z
        r = c - Xc @ a
        s = Xc.T @ r / alpha
        viol = _set_violation(a, s, mu)
        strong = np.abs(a) > mu
        kink = (a != 0) & ~strong
        sets = (strong.tobytes(), kink.tobytes())
        if viol < CERTIFY_AT and sets not in tried:
            tried.add(sets)
            out = certify(strong, kink, r / alpha)
            if out is not None:
                return out, n_newton
        last_sets = sets
        if viol < tol:
            break
        eps = EPS_FACTOR * min(eps, viol)
        sigma = min(sigma * SIGMA_GROWTH, sigma_max)
    if last_sets not in tried:
        out = certify(strong, kink, r / alpha)
        if out is not None:
            return out, n_newton
    return None, n_newton
