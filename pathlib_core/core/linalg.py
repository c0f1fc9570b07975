r"""The bordered inverse: ``M^{-1}`` of a symmetric matrix under one-index growth and shrinkage.

Every active-set path engine solves, on each segment, a system whose matrix is the block of a
fixed symmetric matrix on the current active set. When one index enters or leaves, the inverse
of the block is updated in ``O(k^2)`` instead of being recomputed in ``O(k^3)``:

- *bordering* (an index enters): with ``b`` the new column restricted to the old block, ``d``
  its diagonal entry, ``u = M^{-1} b`` and the Schur complement ``s = d - b'u``,

  .. math::

      \begin{bmatrix} M & b \\ b^\top & d \end{bmatrix}^{-1} =
      \begin{bmatrix} M^{-1} + u u^\top / s & -u / s \\ -u^\top / s & 1 / s \end{bmatrix};

  ``s`` measures how far the new column is from the span of the old ones, so a (relatively)
  vanishing ``s`` flags a dependent index, which is refused;
- *downdating* (an index leaves): the inverse of the block without row and column ``pos`` is
  ``N_{KK} - N_{K,pos} N_{pos,K} / N_{pos,pos}`` with ``N = M^{-1}`` and ``K`` the kept
  indices. The last index takes the place of the removed one, so the caller moves its own
  per-index data (columns, signs, labels) the same way, in ``O(1)`` rows.

The functions are compiled by numba (they run as plain Python without it) and are called from
Python and from the engines' compiled loops alike.
"""

from __future__ import annotations

import numpy as np

try:  # pragma: no cover - exercised through the import
    from numba import njit
except ImportError:  # pragma: no cover
    def njit(*args, **kwargs):
        if args and callable(args[0]):
            return args[0]
        return lambda f: f

__all__ = ["border_add", "border_remove", "schur_complement", "psd_screen"]


@njit(cache=True)
def schur_complement(Minv, b, d):
    """``(s, u)``: the Schur complement ``d - b' M^{-1} b`` and ``u = M^{-1} b``."""
    k = Minv.shape[0]
    u = np.zeros(k)
    s = d
    for r in range(k):
        acc = 0.0
        for c in range(k):
            acc += Minv[r, c] * b[c]
        u[r] = acc
        s -= b[r] * acc
    return s, u


@njit(cache=True)
def border_add(Minv, b, d, rtol):
    """Inverse of ``[[M, b], [b', d]]`` from ``Minv = M^{-1}``.

    Parameters
    ----------
    Minv : ndarray of shape (k, k)
        Inverse of the current block.
    b : ndarray of shape (k,)
        The new column on the current indices.
    d : float
        The new diagonal entry.
    rtol : float
        The new index is refused when the Schur complement ``s <= rtol * |d|`` (a column in
        the span of the current ones, to that relative precision).

    Returns
    -------
    new : ndarray of shape (k + 1, k + 1)
        The bordered inverse (the new index last), or an empty ``(0, 0)`` array if refused.
    s : float
        The Schur complement.
    """
    k = Minv.shape[0]
    s, u = schur_complement(Minv, b, d)
    if not s > rtol * abs(d):
        return np.empty((0, 0)), s
    new = np.empty((k + 1, k + 1))
    for r in range(k):
        ur = u[r] / s
        for c in range(k):
            new[r, c] = Minv[r, c] + ur * u[c]
        new[r, k] = -ur
        new[k, r] = -ur
    new[k, k] = 1.0 / s
    return new, s


@njit(cache=True)
def border_remove(Minv, pos):
    """Inverse of the block without index ``pos``; the last index takes ``pos``'s place.

    Parameters
    ----------
    Minv : ndarray of shape (k, k)
        Inverse of the current block.
    pos : int
        Position of the index that leaves.

    Returns
    -------
    ndarray of shape (k - 1, k - 1)
        The downdated inverse, in the order of the current indices with the last one moved
        to ``pos`` (unchanged order when ``pos`` is the last).
    """
    k = Minv.shape[0]
    last = k - 1
    piv = Minv[pos, pos]
    new = np.empty((last, last))
    for r in range(last):
        ir = last if (r == pos and pos != last) else r
        mr = Minv[ir, pos] / piv
        for c in range(last):
            ic = last if (c == pos and pos != last) else c
            new[r, c] = Minv[ir, ic] - mr * Minv[ic, pos]
    return new


@njit(cache=True)
def psd_screen(K, tol):
    """``O(n^2)`` necessary conditions of positive semi-definiteness, to ``tol``: a diagonal
    entry ``>= -tol`` and every ``|K_ij| <= sqrt(K_ii K_jj) + tol``. False at the first
    violation."""
    n = K.shape[0]
    root = np.empty(n)
    for i in range(n):
        d = K[i, i]
        if d < -tol:
            return False
        root[i] = np.sqrt(max(d, 0.0))
    for i in range(n):
        ri = root[i]
        for j in range(i + 1, n):
            if abs(K[i, j]) > ri * root[j] + tol:
                return False
    return True
