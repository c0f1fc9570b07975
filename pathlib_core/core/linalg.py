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

Two layouts are served. :func:`border_add` / :func:`border_remove` return a new inverse (the
Lasso homotopy, whose block is the Gram matrix of its active features).
:func:`border_append` / :func:`border_drop` update a preallocated buffer in place, the block's
rows named by *keys* (``keys[r]`` is the index of row ``r``; the compiled loops of the SVM and
S3VM paths): no allocation per event, and the positive semi-definiteness of the block is
watched (a Schur complement negative beyond rounding is reported, not refused silently).
The same loops share their event search (:func:`next_box_event`, with :func:`smallest_two`
keeping the two nearest events), the refinement of their two solves (:func:`refine_two`), the
solution at a breakpoint (:func:`box_point`) and the check they run after every update
(:func:`gradient_drift`: the stationarity residual on the free set, relative to the gradient's
size); above :data:`DRIFT_TOL` the inverse is rebuilt, and it is rebuilt anyway every
:data:`REFACTOR_EVERY` updates (:data:`REFACTOR_EVERY_VERIFIED` for engines that verify every
solve made with it).

The functions are compiled by numba (they run as plain Python without it, and
``NUMBA_DISABLE_JIT=1`` turns compilation off) and are called from Python and from the
engines' compiled loops alike; :func:`njit` is the decorator those loops use, so that the
fallback is written once.
"""

from __future__ import annotations

import numpy as np

try:  # pragma: no cover - exercised through the import
    from numba import njit
except ImportError:  # pragma: no cover
    def njit(*args, **kwargs):
        """numba's decorator when numba is installed; without it, the function unchanged."""
        if args and callable(args[0]):
            return args[0]
        return lambda f: f

__all__ = ["njit", "border_add", "border_remove", "load_block", "border_append", "border_drop",
           "gradient_drift", "refine_two", "smallest_two", "next_box_event", "box_point",
           "schur_complement", "psd_screen", "solve_square", "REFACTOR_EVERY",
           "REFACTOR_EVERY_VERIFIED", "DRIFT_TOL"]

#: updates of a bordered inverse between two rebuilds from scratch (drift control)
REFACTOR_EVERY = 50
#: the same for engines that verify every solve made with the inverse (its backward error, or
#: an exact re-solve of every point they return), so that drift cannot reach a result: a
#: rebuild is then needed only for speed's sake and can come less often
REFACTOR_EVERY_VERIFIED = 4 * REFACTOR_EVERY
#: relative stationarity residual of the free set above which the inverse is rebuilt
DRIFT_TOL = 1e-9


@njit(cache=True)
def _times(Minv, k, b):
    """``Minv[:k, :k] @ b``, summed in column order."""
    u = np.zeros(k)
    for r in range(k):
        acc = 0.0
        for c in range(k):
            acc += Minv[r, c] * b[c]
        u[r] = acc
    return u


@njit(cache=True)
def schur_complement(Minv, b, d):
    """``(s, u)``: the Schur complement ``d - b' M^{-1} b`` and ``u = M^{-1} b``."""
    k = Minv.shape[0]
    u = _times(Minv, k, b)
    s = d
    for r in range(k):
        s -= b[r] * u[r]
    return s, u


@njit(cache=True)
def border_add(Minv, b, d, rtol, signed=False):
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
    signed : bool, default False
        For a symmetric *indefinite* block (a KKT matrix with zero diagonal border rows): a
        Schur complement of either sign is accepted, and the index refused only when
        ``|s| <= rtol * |d|`` or ``s`` is not finite. The default accepts only ``s > 0``, as
        a positive definite block requires.

    Returns
    -------
    new : ndarray of shape (k + 1, k + 1)
        The bordered inverse (the new index last), or an empty ``(0, 0)`` array if refused.
    s : float
        The Schur complement.
    """
    k = Minv.shape[0]
    s, u = schur_complement(Minv, b, d)
    size = abs(s) if signed else s
    if not (size > rtol * abs(d) and size < np.inf):
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


def load_block(keys, Minv, block_keys, block_inv) -> int:
    """Copy an inverse and the keys of its rows into the leading block of the buffers used by
    :func:`border_append` / :func:`border_drop`; returns the block's size."""
    k = block_keys.size
    keys[:k] = block_keys
    Minv[:k, :k] = block_inv
    return k


@njit(cache=True)
def border_append(Minv, k, c, d, sing_tol, p_scale):
    """Border the inverse held in ``Minv[:k, :k]`` by one index, in place.

    Parameters
    ----------
    Minv : ndarray of shape (m, m), m > k
        Buffer whose leading ``k x k`` block is the current inverse; on success its leading
        ``(k + 1) x (k + 1)`` block is the bordered inverse (the new index last).
    k : int
        Size of the current block.
    c, d : ndarray of shape (k,), float
        The entering index's column on the current indices, and its diagonal entry.
    sing_tol : float
        Relative size under which the Schur complement ``s = d - c' M^{-1} c`` counts as 0,
        against ``max(|d|, |c' M^{-1} c|, p_scale)``.
    p_scale : float
        Scale of the whole matrix (a floor of that reference).

    Returns
    -------
    int
        ``1`` done; ``0`` ``s`` is zero to that tolerance or not finite (a dependent index:
        the buffer is unchanged); ``-1`` ``s`` is negative beyond rounding (the bordered
        matrix gains a negative eigenvalue: the matrix is not positive semi-definite on the
        block; the buffer is unchanged).
    """
    u = _times(Minv, k, c)
    cu = 0.0
    for r in range(k):
        cu += c[r] * u[r]
    sch = d - cu
    ref = max(abs(d), abs(cu), p_scale)
    if not np.isfinite(sch):
        return 0
    if sch < -sing_tol * ref:
        return -1
    if abs(sch) <= sing_tol * ref:
        return 0
    for r in range(k):
        for q in range(k):
            Minv[r, q] += u[r] * u[q] / sch
        Minv[r, k] = -u[r] / sch
        Minv[k, r] = -u[r] / sch
    Minv[k, k] = 1.0 / sch
    return 1


@njit(cache=True)
def border_drop(keys, k, Minv, j, sing_tol):
    """Remove the row keyed ``j`` from the inverse held in ``Minv[:k, :k]``, in place.

    The last row takes the removed row's place (in ``Minv`` and in ``keys``), so the leading
    ``(k - 1) x (k - 1)`` block is the inverse of the block without ``j``.

    Parameters
    ----------
    keys : ndarray of int, shape (>= k,)
        ``keys[r]`` names row ``r`` of the block.
    k : int
        Size of the current block.
    Minv : ndarray of shape (m, m), m >= k
        Buffer holding the inverse in its leading block.
    j : int
        Key of the row that leaves.
    sing_tol : float
        The removal is refused when the pivot ``|Minv[pos, pos]|`` is at most ``sing_tol``
        times the largest entry (a near-singular downdate).

    Returns
    -------
    bool
        False (nothing changed) when ``j`` is not a key or the pivot is too small.
    """
    pos = -1
    for r in range(k):
        if keys[r] == j:
            pos = r
    if pos < 0:
        return False
    e = Minv[pos, pos]
    ref = 1e-300
    for r in range(k):
        for q in range(k):
            if abs(Minv[r, q]) > ref:
                ref = abs(Minv[r, q])
    if not np.isfinite(e) or abs(e) <= sing_tol * ref:
        return False
    col = Minv[:k, pos].copy()
    for r in range(k):
        for q in range(k):
            Minv[r, q] -= col[r] * col[q] / e
    last = k - 1
    if pos != last:  # move the last row/column into the removed slot
        for r in range(k):
            Minv[pos, r] = Minv[last, r]
        for r in range(k):
            Minv[r, pos] = Minv[r, last]
        Minv[pos, pos] = Minv[last, last]
        keys[pos] = keys[last]
    return True


@njit(cache=True)
def gradient_drift(state, free, t, g0, g1):
    """Stationarity residual of the free set for a gradient affine in the parameter.

    ``g = g0 + t g1`` must vanish on the indices with ``state == free``; the result is their
    largest ``|g_i|`` relative to ``max(1, max_i |g_i|)``. Compared with :data:`DRIFT_TOL`
    after each bordering / downdating, it tells when the updated inverse has drifted.
    """
    gs = 1.0
    ge = 0.0
    for i in range(state.shape[0]):
        g = abs(g0[i] + t * g1[i])
        if g > gs:
            gs = g
        if state[i] == free and g > ge:
            ge = g
    return ge / gs


@njit(cache=True)
def smallest_two(t, i, kind, t1, t2, ib, nb):
    """Offer the step ``t`` of index ``i`` (moving to set ``kind``) to an event search.

    ``(t1, ib, nb)`` is the smallest step so far with its index and new set, ``t2`` the
    second smallest (its gap to ``t1`` tells a tie); returns them updated.
    """
    if t < t1:
        return t, t1, i, kind
    if t < t2:
        return t1, t, ib, nb
    return t1, t2, ib, nb


@njit(cache=True)
def next_box_event(st, A0, A1, g0, g1, ub0, ub1, t, m_dir, t_scale, x_floor, zero_tol,
                   free, lower, upper):
    """The next index-set event of a box QP path with affine pieces, and its runner-up.

    On the current piece the free variables are ``x_i = A0_i + t A1_i`` inside the box
    ``[0, u_i]`` with ``u = ub0 + t ub1``, and the gradient of a variable at a bound (``st_i``
    is ``lower`` or ``upper``) is ``g_i = g0_i + t g1_i``, of the sign that keeps it there.
    Moving ``t`` in the direction whose rates are the slopes times ``m_dir`` (``-1``: ``t``
    grows; ``+1``: it shrinks), the events are: a free variable reaches 0 (new set
    ``lower``) or ``u_i`` (``upper``), a bound variable's gradient reaches 0 (``free``). A
    rate counts only above its rounding (``1e-9`` of the largest rate, or ``zero_tol``; for
    gradients also ``zero_tol`` times the gradient's size over ``t_scale``).

    Returns ``(t1, t2, ib, nb, bad)``: the smallest step, the second smallest, the index and
    its new set (``ib = -1``: no event), and whether the piece is infeasible at ``t`` beyond
    rounding (a free variable outside its box by ``1e3 zero_tol`` of the box scale
    ``max(x_floor, max_i u_i)``, or a bound gradient of the wrong sign by ``1e3 zero_tol`` of
    the gradient's size).
    """
    n = st.shape[0]
    gs = 1.0
    dgs = 1e-300
    dxs = 1.0
    xs = x_floor
    for i in range(n):
        g = abs(g0[i] + t * g1[i])
        if g > gs:
            gs = g
        if abs(g1[i]) > dgs:
            dgs = abs(g1[i])
        u = ub0[i] + t * ub1[i]
        if u > xs:
            xs = u
        if st[i] == free and abs(A1[i]) > dxs:
            dxs = abs(A1[i])
    rtol_d = max(1e-9 * dgs, zero_tol * gs / t_scale)
    rtol_p = max(1e-9 * dxs, zero_tol)
    t1 = np.inf
    t2 = np.inf
    ib = -1
    nb = 0
    bad = False
    for i in range(n):
        si = st[i]
        if si == free:
            a = A0[i] + t * A1[i]
            u = ub0[i] + t * ub1[i]
            if a < -1e3 * zero_tol * xs or a > u + 1e3 * zero_tol * xs:
                bad = True
            r = m_dir * A1[i]
            if r > rtol_p:
                t1, t2, ib, nb = smallest_two(max(a, 0.0) / r, i, lower, t1, t2, ib, nb)
            r = m_dir * (ub1[i] - A1[i])
            if r > rtol_p:
                t1, t2, ib, nb = smallest_two(max(u - a, 0.0) / r, i, upper, t1, t2, ib, nb)
        else:
            sg = 1.0 if si == lower else -1.0
            v = sg * (g0[i] + t * g1[i])
            if v < -1e3 * zero_tol * gs:
                bad = True
            r = m_dir * sg * g1[i]
            if r > rtol_d:
                t1, t2, ib, nb = smallest_two(max(v, 0.0) / r, i, free, t1, t2, ib, nb)
    return t1, t2, ib, nb, bad


@njit(cache=True)
def refine_two(Minv, k, r0, r1, sol0, sol1):
    """One step of iterative refinement of two solves through the inverse held in
    ``Minv[:k, :k]``: ``sol += Minv @ r`` for the residuals ``r0``, ``r1`` (in place)."""
    for r in range(k):
        acc0 = 0.0
        acc1 = 0.0
        for c in range(k):
            acc0 += Minv[r, c] * r0[c]
            acc1 += Minv[r, c] * r1[c]
        sol0[r] += acc0
        sol1[r] += acc1


@njit(cache=True)
def box_point(st, A0, A1, ub0, ub1, t, out, free, upper):
    """The solution at ``t`` of a box QP path's piece (see :func:`next_box_event`) into
    ``out``: ``A0 + t A1`` on the free set, ``ub0 + t ub1`` on the upper set, 0 elsewhere."""
    for j in range(st.shape[0]):
        sj = st[j]
        if sj == upper:
            out[j] = ub0[j] + t * ub1[j]
        elif sj == free:
            out[j] = A0[j] + t * A1[j]
        else:
            out[j] = 0.0


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


@njit(cache=True)
def solve_square(J, b, rcond):
    """``J x = b`` for a small dense square ``J`` (LAPACK's ``gesv``); where ``J`` is exactly
    singular or the solution is not finite, the least-squares solution with singular values
    below ``rcond`` times the largest cut off (``gelsd``). Never raises on a singular
    ``J``: the compiled path engines call it at every right-hand-side evaluation."""
    if J.shape[0] == 0:
        return b.copy()
    ok = True
    try:
        x = np.linalg.solve(J, b)
    except Exception:  # noqa: BLE001 - numba raises a generic error for a singular J
        ok = False
        x = b.copy()
    if ok:
        for v in x:
            if not np.isfinite(v):
                ok = False
                break
    if not ok:
        x = np.linalg.lstsq(J, b, rcond=rcond)[0]
    return x
