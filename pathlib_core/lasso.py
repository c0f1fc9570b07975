r"""The Lasso homotopy (LARS-Lasso) in scikit-learn's scaling.

For the Lasso without intercept

.. math::

    \min_w \; \frac{1}{2n} \lVert y - X w \rVert_2^2 + \alpha \lVert w \rVert_1,

the solution is piecewise linear in ``alpha`` (Osborne, Presnell and Turlach 2000, "A new
approach to variable selection in least squares problems", IMA J. Numer. Anal. 20; Efron,
Hastie, Johnstone and Tibshirani 2004, "Least angle regression", Ann. Statist. 32). With the
correlations ``c = X'(y - X w) / n``, optimality reads ``c_j = alpha sign(w_j)`` on the active
set ``A`` and ``|c_j| <= alpha`` elsewhere; on ``A`` the coefficients move as
``dw_A / d(-alpha) = G_AA^{-1} s_A`` with ``G = X'X / n``. Events: a feature enters when
``|c_j|`` reaches ``alpha``; an active coefficient leaves when it reaches 0.

This is a dedicated implementation (not a client of the generic engine) for speed: Gram
columns are computed only for features that enter, and the inverse of ``G_AA`` is updated by
bordering / rank-one downdates (``O(|A|^2)`` per event) with drift control (a full
re-inversion every ``refactor_every`` events or when the residual of ``c_A = alpha s_A``
exceeds ``1e-10`` relative).

Ties and collinear features follow :mod:`pathlib_core.homotopy`: the new active set at an event
must satisfy the optimality conditions to first order (active coefficients move away from 0
in their sign's direction, inactive correlations do not outgrow ``alpha``); it is found by
pivoting from the natural transition on the conditions the candidate violates. A feature whose
Gram column is dependent on the active ones (a duplicate or an exactly collinear feature) stays
inactive with ``|c_j| = alpha`` identically, which keeps ``G_AA`` non-singular.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ._validation import as_matrix, as_vector, positive_int, positive_scalar
from .homotopy import HomotopyError
from .path import Event, Path

__all__ = ["LassoSolution", "lasso_path", "lasso_kkt_residual"]


@dataclass(frozen=True)
class LassoSolution:
    """Lasso solution at one ``alpha``.

    Attributes
    ----------
    coef : ndarray of shape (p,)
        Coefficients ``w``.
    """

    coef: np.ndarray

    @property
    def active(self) -> np.ndarray:
        """Support ``coef != 0`` (the active set inside a segment)."""
        return self.coef != 0


def lasso_kkt_residual(X, y, alpha: float, coef) -> float:
    r"""Largest violation of the Lasso optimality conditions, relative to ``alpha_max``.

    With ``c = X'(y - X w) / n``: ``|c_j - alpha sign(w_j)|`` for ``w_j != 0`` and
    ``max(|c_j| - alpha, 0)`` otherwise, divided by ``alpha_max = max|X'y| / n`` (the scale of
    the correlations; 1 if ``X'y = 0``).

    .. math::

        r = \frac{1}{\alpha_{\max}} \max_j \begin{cases}
            |c_j - \alpha\,\mathrm{sign}(w_j)|, & w_j \ne 0, \\
            \max(|c_j| - \alpha, 0), & w_j = 0,
            \end{cases}
        \qquad c = \tfrac1n X^\top (y - X w),

    the optimality conditions of :math:`\min_w \frac{1}{2n}\lVert y - Xw\rVert_2^2
    + \alpha\lVert w\rVert_1` (module docstring).

    Parameters
    ----------
    X : array_like of shape (n, p)
        Design matrix (no intercept column is added).
    y : array_like of shape (n,)
        Responses.
    alpha : float >= 0
        Penalty in scikit-learn's scaling.
    coef : array_like of shape (p,)
        Coefficients ``w`` to check.

    Returns
    -------
    float
        The relative residual ``r >= 0``; zero (to rounding) exactly at a Lasso solution.

    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, or ``alpha < 0``, naming the argument.
    """
    Xm = as_matrix(X, "X")
    yv = as_vector(y, "y", length=Xm.shape[0], length_of="X")
    w = as_vector(coef, "coef", length=Xm.shape[1], length_of="X'")
    alpha = positive_scalar(alpha, "alpha", allow_zero=True)
    return _residual(Xm, yv, alpha, w, float(np.max(np.abs(Xm.T @ yv))) / Xm.shape[0])


def _residual(X, y, alpha, w, amax) -> float:
    n = X.shape[0]
    c = X.T @ (y - X @ w) / n
    nz = w != 0
    r = np.where(nz, np.abs(c - alpha * np.sign(w)), np.maximum(np.abs(c) - alpha, 0.0))
    return float(np.max(r)) / (amax if amax > 0 else 1.0)


class _Lars:
    def __init__(self, X, y, refactor_every):
        self.X, self.y = X, y
        self.n, self.p = X.shape
        self.refactor_every = refactor_every
        self.cols: dict[int, np.ndarray] = {}
        self.n_refactor = 0
        self.n_updates = 0
        self.max_drift = 0.0
        self.since = 0
        self.n_tie_events = 0
        # the full Gram matrix in one BLAS-3 call when it is not larger than X; otherwise
        # columns on demand for the features that enter
        self.G = (X.T @ X) / self.n if self.p <= self.n else None
        kmax = min(self.n, self.p) + 2
        self.buf = np.empty((self.p, kmax))  # G[:, A] in the order of A (first k columns)

    def gcol(self, j: int) -> np.ndarray:
        if self.G is not None:
            return self.G[:, j]
        col = self.cols.get(j)
        if col is None:
            col = self.X.T @ self.X[:, j] / self.n
            self.cols[j] = col
        return col

    def inverse(self, A: list[int]) -> np.ndarray | None:
        self.n_refactor += 1
        self.since = 0
        if not A:
            return np.zeros((0, 0))
        G = np.stack([self.gcol(j)[A] for j in A], axis=1)
        try:
            inv = np.linalg.inv(G)
        except np.linalg.LinAlgError:
            return None
        nrm = float(np.max(np.abs(G).sum(axis=1)))
        if not np.all(np.isfinite(inv)) or nrm * float(np.max(np.abs(inv).sum(axis=1))) > 1e12:
            return None
        return inv

    def add(self, Ginv, A, j) -> np.ndarray | None:
        col = self.gcol(j)
        d = col[j]
        if not A:
            return np.array([[1.0 / d]]) if d > 1e-12 * self.scale else None
        b = col[A]
        u = Ginv @ b
        s = d - b @ u
        if not s > 1e-10 * d:  # dependent column (duplicate / collinear feature)
            return None
        k = len(A)
        new = np.empty((k + 1, k + 1))
        new[:k, :k] = Ginv + np.outer(u, u / s)
        new[:k, k] = -u / s
        new[k, :k] = -u / s
        new[k, k] = 1.0 / s
        return new

    @staticmethod
    def remove(Ginv, pos) -> np.ndarray:
        keep = np.ones(Ginv.shape[0], dtype=bool)
        keep[pos] = False
        col = Ginv[keep, pos]
        return Ginv[np.ix_(keep, keep)] - np.outer(col, col / Ginv[pos, pos])


def lasso_path(X, y, *, alpha_min: float | None = None, refactor_every: int = 50,
               max_events: int | None = None) -> Path:
    r"""Exact Lasso path in scikit-learn's scaling, from ``alpha_max`` down to ``alpha_min``.

    Solves, for every ``alpha`` in ``[alpha_min, alpha_max]``,

    .. math::

        \min_w \; \frac{1}{2n} \lVert y - X w \rVert_2^2 + \alpha \lVert w \rVert_1

    (no intercept; center ``X`` and ``y`` beforehand for one) by the homotopy of Osborne et al.
    (2000) / LARS-Lasso of Efron et al. (2004), with ``alpha_max = max|X'y| / n`` (above it
    ``w = 0``; equation ``(lasso-alphamax)`` of the primer chapter
    ``notebooks/primer/02_lasso_homotopy``, whose ``(lasso-kkt)`` and ``(lasso-segment)`` are
    the optimality conditions and the affine segment between two events). The breakpoints
    coincide with those of ``sklearn.linear_model.lars_path(X, y, method="lasso")`` on generic data.

    Parameters
    ----------
    X : array_like of shape (n, p)
        Design matrix.
    y : array_like of shape (n,)
        Response.
    alpha_min : float, optional
        End of the path (``0 <= alpha_min <= alpha_max``). ``None``: ``0``, where the path
        ends at the least-squares solution when ``X`` has full column rank, or at the
        minimum-l1-norm interpolating solution once the active set spans the rows of ``X``.
    refactor_every : int
        Full re-inversion of ``G_AA`` every this many updates (drift control).
    max_events : int, optional
        Safety bound on the number of events (default ``20 p + 100``).

    Returns
    -------
    Path
        ``param_name == "alpha"``; ``path.at(alpha)`` is a :class:`LassoSolution`. Events
        ``"enter"`` / ``"leave"`` with feature indices. ``kkt_residuals()`` are relative to
        ``alpha_max`` (:func:`lasso_kkt_residual`). ``info`` holds ``n_events``,
        ``n_refactorizations``, ``max_drift``, ``time``, ``alpha_max``.

    Raises
    ------
    ValueError
        Bad input (non-finite values, shapes, ``alpha_min`` < 0 or > ``alpha_max``).
    pathlib_core.homotopy.HomotopyError
        A degenerate event that cannot be resolved.
    """
    t0 = time.perf_counter()
    Xm = as_matrix(X, "X")
    n, p = Xm.shape
    yv = as_vector(y, "y", length=n, length_of="X")
    refactor_every = positive_int(refactor_every, "refactor_every")
    c = Xm.T @ yv / n
    amax = float(np.max(np.abs(c)))
    if alpha_min is None:
        a_end = 0.0
    else:
        a_end = positive_scalar(alpha_min, "alpha_min", allow_zero=True)
        if a_end > amax:
            raise ValueError(f"alpha_min must be <= alpha_max = max|X'y|/n = {amax!r}; "
                             f"got {a_end!r}")
    eng = _Lars(Xm, yv, refactor_every)
    eng.scale = max(float(np.max(np.abs(Xm))) ** 2, 1e-300)
    w = np.zeros(p)
    alpha = amax
    A: list[int] = []
    signs = np.zeros(p)
    Ginv = np.zeros((0, 0))
    params = [alpha]
    events: list[Event] = []
    coefs = [w.copy()]
    max_ev = max_events if max_events is not None else 20 * p + 100
    if amax == 0.0:
        rec = LassoSolution(np.zeros(p))
        return Path.piecewise_linear("alpha", [0.0], [rec], [],
                                     residual=lambda t, r: 0.0,
                                     info={"n_events": 0, "alpha_max": 0.0})
    ctol = 1e-11 * amax
    # entering at alpha_max: every feature with |c_j| = alpha_max (ties included)
    first = np.flatnonzero(np.abs(c) >= amax - ctol)
    A, Ginv, signs, GA, d, a = _transition(eng, [], Ginv, np.zeros(p), np.zeros((p, 0)),
                                           first.tolist(), [], c, w, alpha, amax)
    if A:
        events.append(Event(alpha, "enter", tuple(sorted(A))))
    n_ev = 0
    seen_zero = 0
    while alpha > a_end:
        n_ev += 1
        if n_ev > max_ev:
            raise HomotopyError(f"more than max_events={max_ev} events")
        Ai = np.asarray(A, dtype=np.intp)
        sA = signs[Ai]
        if eng.since >= refactor_every:
            Ginv = eng.inverse(A)
            if Ginv is None:
                raise HomotopyError(f"singular active Gram matrix at alpha={alpha!r}")
            d = Ginv @ sA
            a = GA @ d
        # drift monitor (every 8 events): the updated inverse must solve G_AA d = s_A
        if A and n_ev % 8 == 0:
            drift = float(np.max(np.abs(GA[A] @ d - sA)))
            eng.max_drift = max(eng.max_drift, drift)
            if drift > 1e-10:
                Ginv = eng.inverse(A)
                if Ginv is None:
                    raise HomotopyError(f"singular active Gram matrix at alpha={alpha!r}")
                d = Ginv @ sA
                a = GA @ d
        # step to the next event (delta = decrease of alpha)
        with np.errstate(divide="ignore", invalid="ignore"):
            den1 = 1.0 - a
            den2 = 1.0 + a
            g1 = alpha - c
            g2 = alpha + c
            d1 = g1 / den1
            d2 = g2 / den2
        # only positive denominators block; a slightly negative step (rounding) is 0; rows
        # stuck at |c_j| = alpha whose correlation moves with alpha do not block
        d1[(den1 <= 1e-9) | ~(d1 > -1e-12 * amax)] = np.inf
        d2[(den2 <= 1e-9) | ~(d2 > -1e-12 * amax)] = np.inf
        d_enter = np.maximum(np.minimum(d1, d2), 0.0)
        d_enter[Ai] = np.inf
        wA = w[Ai]
        with np.errstate(divide="ignore", invalid="ignore"):
            d_leave = np.where(wA * d < 0, -wA / d, np.inf) if A else np.zeros(0)
        de = float(np.min(d_enter)) if p else np.inf
        dl = float(np.min(d_leave)) if A else np.inf
        delta = min(de, dl, alpha - a_end)
        if delta >= alpha - a_end - 1e-13 * amax:
            # the end (events within rounding of alpha_min, e.g. alpha = 0 once the residual
            # vanishes, are not processed)
            delta = alpha - a_end
            alpha_new = a_end
            final = True
        else:
            alpha_new = alpha - delta
            final = False
        # advance
        w[Ai] = wA + delta * d
        c -= delta * a
        c[Ai] = alpha_new * sA
        alpha = alpha_new
        if final:
            params.append(alpha)
            coefs.append(w.copy())
            break
        ttol = 1e-10 * max(alpha, delta)
        enter = np.flatnonzero(d_enter <= delta + ttol * 10).tolist()
        leave = [A[k] for k in np.flatnonzero(d_leave <= delta + ttol * 10)] if A else []
        for j in leave:
            w[j] = 0.0
        old_A = list(A)
        if len(enter) + len(leave) > 1:
            eng.n_tie_events += 1
        A, Ginv, signs, GA, d, a = _transition(eng, A, Ginv, signs, GA, enter, leave, c, w,
                                               alpha, amax)
        gone = sorted(set(old_A) - set(A))
        came = sorted(set(A) - set(old_A))
        for j in gone:
            w[j] = 0.0
        if came:
            events.append(Event(alpha, "enter", tuple(came)))
        if gone:
            events.append(Event(alpha, "leave", tuple(gone)))
        if delta <= ttol:
            seen_zero += 1
            if seen_zero > 50:
                raise HomotopyError(f"cycling at alpha={alpha!r}")
            coefs[-1] = w.copy()
        else:
            seen_zero = 0
            params.append(alpha)
            coefs.append(w.copy())
    params = params[::-1]
    coefs = coefs[::-1]
    recs = [LassoSolution(cf) for cf in coefs]
    info = {"n_events": len(events), "n_breakpoints": len(params),
            "n_refactorizations": eng.n_refactor, "n_updates": eng.n_updates,
            "max_drift": eng.max_drift, "n_tie_events": eng.n_tie_events,
            "alpha_max": amax, "time": time.perf_counter() - t0}
    return Path.piecewise_linear("alpha", params, recs, events,
                                 residual=lambda t, r: _residual(Xm, yv, t, r.coef, amax),
                                 direction=-1, info=info)


def _transition(eng: _Lars, A, Ginv, signs, GA, enter, leave, c, w, alpha, amax):
    """New active set after the event: natural transition, repaired by pivoting on violations.

    A candidate is valid when its direction ``d = G_AA^{-1} s_A`` moves every (near-)zero
    active coefficient away from 0 in its sign's direction and no (near-)tied inactive
    correlation outgrows ``alpha`` (``s_j a_j >= 1`` where ``|c_j| = alpha``). Returns the
    new ordered active set, ``G_AA^{-1}``, signs, Gram columns ``G[:, A]``, ``d`` and
    ``a = G[:, A] d``.
    """
    ctol = 1e-9 * amax
    wtol = 1e-12 * max(float(np.max(np.abs(w))), 1e-300)
    fast = _single_change(eng, A, Ginv, signs, GA, enter, leave, c, w, alpha, ctol, wtol)
    if fast is not None:
        return fast
    seen = set()
    leave_set = set(leave)
    queue = [[j for j in A if j not in leave_set] + [j for j in enter if j not in set(A)]]
    tried = 0
    pos_of = {j: k for k, j in enumerate(A)}
    while queue and tried < 4 * (len(enter) + len(leave)) + 40:
        cand = queue.pop(0)
        key = tuple(sorted(cand))
        if key in seen:
            continue
        seen.add(key)
        tried += 1
        G = _update(eng, A, pos_of, Ginv, GA, cand)
        if G is None:
            # singular: drop the newly entered features one at a time
            for j in cand:
                if j not in pos_of:
                    queue.append([k for k in cand if k != j])
            continue
        order, Gi, GAn = G
        s_new = signs.copy()
        for j in order:
            if j not in pos_of:
                s_new[j] = np.sign(c[j]) if c[j] != 0 else 1.0
        d, a, viol_drop, viol_add = _violations(order, Gi, GAn, s_new, c, w, alpha, ctol, wtol)
        if not viol_add and not viol_drop:
            eng.n_updates += 1
            eng.since += 1
            return list(order), Gi, s_new, GAn, d, a
        for j in viol_drop:
            queue.append([k for k in cand if k != j])
        for j in viol_add:
            queue.append(list(cand) + [j])
        if len(viol_add) + len(viol_drop) > 1:
            queue.append([k for k in cand if k not in viol_drop] + viol_add)
    raise HomotopyError(f"no consistent active set found at alpha={alpha!r} (entering "
                        f"{enter[:10]}, leaving {leave[:10]})")


def _violations(order, Gi, GAn, s_new, c, w, alpha, ctol, wtol):
    """Direction of a candidate active set and the first-order conditions it violates.

    ``viol_drop``: (near-)zero active coefficients that would move against their sign;
    ``viol_add``: inactive features tied at ``|c_j| = alpha`` whose correlation would outgrow
    ``alpha`` (``s_j a_j < 1``).
    """
    p = c.shape[0]
    sA = s_new[order]
    d = Gi @ sA if order else np.zeros(0)
    a = GAn @ d
    dsc = max(float(np.max(np.abs(d))), 1e-300) if order else 1.0
    wo = w[order]
    viol_drop = [order[k] for k in np.flatnonzero((np.abs(wo) <= wtol) &
                                                  (sA * d < -1e-9 * dsc))]
    ina = np.ones(p, dtype=bool)
    ina[order] = False
    tied = ina & (np.abs(np.abs(c) - alpha) <= ctol)
    viol_add = np.flatnonzero(tied & (np.sign(c) * a < 1.0 - 1e-9)).tolist()
    return d, a, viol_drop, viol_add


def _single_change(eng: _Lars, A, Ginv, signs, GA, enter, leave, c, w, alpha, ctol, wtol):
    """The common event -- one feature enters or one leaves -- without the candidate search.

    Returns the result of :func:`_transition` when the natural transition is consistent,
    ``None`` otherwise (the caller then runs the general search).
    """
    k = len(A)
    if len(enter) == 1 and not leave:
        j = enter[0]
        Gi = eng.add(Ginv, A, j)
        if Gi is None or k + 1 > eng.buf.shape[1]:
            return None
        order = A + [j]
        eng.buf[:, k] = eng.gcol(j)
        s_new = signs.copy()
        s_new[j] = np.sign(c[j]) if c[j] != 0 else 1.0
    elif len(leave) == 1 and not enter:
        pos = A.index(leave[0])
        Gi = eng.remove(Ginv, pos)
        order = A[:pos] + A[pos + 1:]
        eng.buf[:, pos:k - 1] = eng.buf[:, pos + 1:k].copy()
        s_new = signs
    else:
        return None
    GAn = eng.buf[:, :len(order)]
    d, a, viol_drop, viol_add = _violations(order, Gi, GAn, s_new, c, w, alpha, ctol, wtol)
    if viol_drop or viol_add:
        if leave:  # the general search expects G[:, A] in the first k buffer columns
            eng.buf[:, :k] = np.stack([eng.gcol(i) for i in A], axis=1)
        return None
    eng.n_updates += 1
    eng.since += 1
    return order, Gi, s_new, GAn, d, a


def _update(eng: _Lars, A, pos_of, Ginv, GA, cand):
    """``(order, G_AA^{-1}, G[:, A])`` for ``cand``: kept features in A's order, then new ones."""
    cset = set(cand)
    drop = [j for j in A if j not in cset]
    new = [j for j in cand if j not in pos_of]
    Gi = Ginv
    order = list(A)
    for j in drop:
        pos = order.index(j)
        Gi = eng.remove(Gi, pos)
        order.pop(pos)
    for j in new:
        Gi2 = eng.add(Gi, order, j)
        if Gi2 is None:
            return None
        Gi = Gi2
        order.append(j)
    if drop or len(new) > 1 or len(order) > eng.buf.shape[1]:
        GAn = np.stack([eng.gcol(j) for j in order], axis=1) if order else \
            np.zeros((eng.p, 0))
        if len(order) <= eng.buf.shape[1]:
            eng.buf[:, :len(order)] = GAn
            GAn = eng.buf[:, :len(order)]
    else:
        # append in place: the first k columns of the buffer hold G[:, A]
        k = len(A)
        if new:
            eng.buf[:, k] = eng.gcol(new[0])
        GAn = eng.buf[:, :len(order)]
    return order, Gi, GAn
