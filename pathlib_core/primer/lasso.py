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

Numerics
--------
The homotopy runs on internally rescaled data: every column of ``X`` and ``y`` is divided by
the power of two nearest to its Euclidean norm (an exact operation in floating point). In those
units the problem is a weighted Lasso with the same breakpoints, its Gram matrix has a unit
diagonal whatever the scales of the user's columns (``1e-10`` next to ``1e20`` is fine), and
every tolerance is per coordinate: a correlation is compared with ``alpha`` to within its own
rounding error, a coefficient with its own scale. Results are reported in the user's units.

The inverse of ``G_AA`` is updated by bordering / rank-one downdates (``O(|A|^2)`` per event)
with drift control (a full re-inversion every ``refactor_every`` events, and whenever the
updated inverse no longer solves ``G_AA g = s_A`` to ``1e-10``).

Degenerate designs
------------------
- *Ties* (several features reach ``alpha`` at once, or enter as another leaves): the new active
  set must satisfy the optimality conditions to first order (active coefficients move away from
  0 in their sign's direction, tied inactive correlations do not outgrow ``alpha``); it is
  found by pivoting from the natural transition on the conditions a candidate violates.
- *Dependent columns* (duplicates, exact collinearity, more features than samples): a column in
  the span of the active columns never enters. Its correlation is then a fixed multiple of
  ``alpha`` along the segment, so it either stays tied at ``|c_j| = alpha`` (a duplicate: the
  KKT conditions hold with ``w_j = 0``) or never reaches ``alpha``. The test is the Schur
  complement of the scaled Gram matrix, ``1e-13`` relative (``lars_path``'s "degenerate
  regressor" test is ``1e-14`` on the unnormalized Gram).
- *End of the path*: at ``alpha_min`` (default 0). With more features than samples, or a
  rank-deficient design, the active set saturates (its columns span those of ``X``): from then
  on no feature can enter, the residual ``y - Xw`` shrinks in proportion to ``alpha``, and the
  path ends at ``alpha = 0`` at an interpolating (minimum-l1 on its support) solution, after the
  leave events that remain. Events whose parameter is below the rounding level of the
  correlations they concern cannot be located in floating point and are not reported.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular
from scipy.linalg.lapack import dpotri

from ..core.exceptions import HomotopyError
from ..core.linalg import REFACTOR_EVERY_VERIFIED, border_add, border_remove
from ..core.solution_path import Event, SolutionPath
from ..core.threads import single_blas_thread
from ..core.validation import as_matrix, as_vector, positive_int, positive_scalar
from ._lasso_kernel import END, FALLBACK, run, segment

__all__ = ["LassoSolution", "lasso_path", "lasso_kkt_residual"]

_EPS = np.finfo(float).eps
_DEP_TOL = 1e-13  # Schur complement (relative to the unit diagonal) of a dependent column
_SUSPECT_TOL = 1e-8  # below it, the Schur complement is measured again by a QR projection
_LEAVE_ULPS = 64.0  # rounding of the coefficients at lam = 0, in units of eps max|u|
_DRIFT_TOL = 1e-10  # backward error of a segment's solve that triggers a re-inversion


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
    r"""Largest violation of the Lasso optimality conditions, each against its own scale.

    With ``c = X'(y - X w) / n``, feature ``j`` must satisfy ``c_j = alpha sign(w_j)`` if
    ``w_j != 0`` and ``|c_j| <= alpha`` otherwise. Its violation is divided by the size of the
    terms it is computed from, ``s_j = alpha + |X_j|'(|y| + |X| |w|) / n`` (entrywise
    absolute values: the bound on the rounding error of ``c_j``, as in the componentwise
    backward error of Oettli and Prager):

    .. math::

        r = \max_j \frac{1}{s_j} \begin{cases}
            |c_j - \alpha\,\mathrm{sign}(w_j)|, & w_j \ne 0, \\
            \max(|c_j| - \alpha, 0), & w_j = 0,
            \end{cases}
        \qquad c = \tfrac1n X^\top (y - X w),

    the optimality conditions of :math:`\min_w \frac{1}{2n}\lVert y - Xw\rVert_2^2
    + \alpha\lVert w\rVert_1` (module docstring). Each ratio is at most about 1 and is of the
    order of the machine precision at a computed solution, whatever the data (a condition
    whose terms all vanish is measured against its rounding, not against zero); it does not
    change when ``y``, ``X`` and ``alpha`` are rescaled together with the solution, and a
    feature of small scale is not measured against the correlations of large ones. A
    perturbation of relative size ``d`` of the coefficients that enter a condition moves it
    by about ``d`` times their share of ``s_j``.

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
        The relative residual ``r >= 0``.

    Raises
    ------
    ValueError
        Non-finite or mis-shaped arrays, or ``alpha < 0``, naming the argument.
    """
    Xm = as_matrix(X, "X")
    yv = as_vector(y, "y", length=Xm.shape[0], length_of="X")
    w = as_vector(coef, "coef", length=Xm.shape[1], length_of="X'")
    alpha = positive_scalar(alpha, "alpha", allow_zero=True)
    return _Certificate(Xm, yv)(alpha, w)


class _Certificate:
    """:func:`lasso_kkt_residual` for one data set, evaluated at many points of a path."""

    def __init__(self, X: np.ndarray, y: np.ndarray):
        self.X, self.y = X, y
        self.n = X.shape[0]
        self.absX = np.abs(X)
        self.absy = np.abs(y)

    def __call__(self, alpha: float, w: np.ndarray) -> float:
        X, n = self.X, self.n
        c = X.T @ (self.y - X @ w) / n
        nz = np.flatnonzero(w)
        fit = self.absX[:, nz] @ np.abs(w[nz]) if nz.size else 0.0
        scale = alpha + self.absX.T @ (self.absy + fit) / n
        v = np.maximum(np.abs(c) - alpha, 0.0)
        v[nz] = np.abs(c[nz] - alpha * np.sign(w[nz]))
        out = np.divide(v, scale, out=np.zeros_like(v), where=scale > 0)
        return float(np.max(out)) if out.size else 0.0


def _pow2(x: np.ndarray) -> np.ndarray:
    """The power of two nearest to each positive entry (1 for zeros)."""
    out = np.ones_like(x)
    pos = x > 0
    out[pos] = np.exp2(np.round(np.log2(x[pos])))
    return out


class _Gram:
    """The scaled Gram matrix ``Z'Z``: stored when it is not larger than ``Z``, else by rows."""

    def __init__(self, Z: np.ndarray, refactor_every: int):
        self.n, self.p = Z.shape
        self.refactor_every = refactor_every
        self.has_G = self.p <= self.n
        # the full Gram matrix in one BLAS-3 call when it is not larger than Z; otherwise rows
        # on demand (O(np) each) for the features that enter
        self.Z = Z
        self.G = Z.T @ Z if self.has_G else np.zeros((1, 1))
        self.Zt = np.zeros((1, 1)) if self.has_G else np.ascontiguousarray(Z.T)
        self.rows: dict[int, np.ndarray] = {}
        self.n_refactor = 0
        self.n_updates = 0
        self.max_drift = 0.0
        self.since = 0
        self.n_tie_events = 0
        self.n_dependent = 0
        self.n_fallback = 0

    def row(self, j: int) -> np.ndarray:
        if self.has_G:
            return self.G[j]
        r = self.rows.get(j)
        if r is None:
            r = self.Zt @ self.Zt[j]
            self.rows[j] = r
        return r

    def inverse(self, A: list[int], GAT: np.ndarray) -> np.ndarray | None:
        """``G_AA^{-1}`` from scratch (``None`` if the block is numerically singular).

        ``GAT[r]`` is the Gram row of ``A[r]``.
        """
        self.n_refactor += 1
        self.since = 0
        if not A:
            return np.zeros((0, 0))
        G = GAT[:len(A)][:, A]
        try:
            L = np.linalg.cholesky(G)
        except np.linalg.LinAlgError:
            return None
        if float(np.min(np.diag(L))) ** 2 <= _DEP_TOL * float(np.max(np.diag(G))):
            return None
        Ginv, info = dpotri(L, lower=1)
        if info != 0:
            return None
        Ginv = np.tril(Ginv) + np.tril(Ginv, -1).T
        return np.ascontiguousarray(Ginv)

    def add(self, Ginv, A, j) -> np.ndarray | None:
        """Bordered inverse with ``j`` appended; ``None`` if ``j`` depends on ``A``.

        The Schur complement ``d - b'G_AA^{-1} b`` cancels when column ``j`` is close to the
        span of the active ones; below ``1e-8 d`` it is measured again as the squared
        distance of ``Z_j`` to that span (a QR projection), and the new inverse is built from
        the QR factor of ``Z_A`` (accurate to ``cond(Z_A) eps`` instead of ``cond(Z_A)^2
        eps``).
        """
        r = self.row(j)
        new, s = border_add(Ginv, np.ascontiguousarray(r[A], dtype=float), float(r[j]),
                            _SUSPECT_TOL)
        if new.shape[0]:
            return new
        cols = list(A) + [j]
        if len(cols) > self.n:  # more columns than samples: always dependent
            return None
        R = np.linalg.qr(self.Z[:, cols], mode="r")
        dist = abs(float(R[-1, -1])) ** 2
        if not dist > _DEP_TOL * float(r[j]):
            return None
        Rinv = solve_triangular(R, np.eye(len(cols)))
        return np.ascontiguousarray(Rinv @ Rinv.T)


class _State:
    """The homotopy in scaled units: ``lam = n alpha / s_y`` and ``v_j = d_j w_j / s_y``.

    Correlations are in ``lam`` units, ``ch_j = d_j Z_j'(y~ - Z v)`` (``ch_j = lam s_j`` on the
    active set), with ``omega_j = 1 / d_j`` the weight of feature ``j`` in the scaled problem.
    On a segment (fixed active set and signs) everything is affine in ``lam`` and is kept in
    closed form, computed afresh for each segment (no drift accumulates along the path):

    ``v_A(lam) = u - lam g``, ``u = G_AA^{-1} Z_A'y~``, ``g = G_AA^{-1} omega_A s_A``;
    ``ch(lam) = e + lam a``, ``e = d (Z'y~ - G[:, A] u)``, ``a = d G[:, A] g``.

    The active set is ``Aidx[:k]`` (``posA[j]`` its position, -1 if inactive) and ``GAT[r]``
    is the Gram row of ``Aidx[r]``; these arrays are shared with the compiled loop.
    """

    def __init__(self, eng: _Gram, c0t: np.ndarray, dsc: np.ndarray, ynorm: float):
        self.eng = eng
        self.c0t = c0t  # Z' y~
        self.dsc = dsc
        self.omega = 1.0 / dsc
        self.ynorm = ynorm
        p = c0t.shape[0]
        kmax = min(eng.n, p) + 2
        self.v = np.zeros(p)
        self.ch = dsc * c0t
        self.Aidx = np.zeros(kmax, dtype=np.int64)
        self.posA = np.full(p, -1, dtype=np.int64)
        self.k = 0
        self.signs = np.zeros(p)
        self.Ginv = np.zeros((0, 0))
        self.GAA = np.zeros((0, 0))  # G_AA in the order of Aidx (for the refinement)
        self.GAT = np.zeros((kmax, p))
        self.u = np.zeros(0)
        self.g = np.zeros(0)
        self.e = self.ch.copy()
        self.a = np.zeros(p)
        self.blocked = np.zeros(p, dtype=bool)
        self.side = np.zeros(p)  # +-1: the side an entering feature reaches (event search)

    @property
    def A(self) -> list[int]:
        return self.Aidx[:self.k].tolist()

    def tau(self) -> np.ndarray:
        """Rounding level of each correlation ``ch_j`` (in ``lam`` units).

        ``ch_j = d_j Z_j'(y~ - Z v)`` with unit-norm columns (up to a factor 2): a few units
        of the last place of ``d_j (|Z_j|'|y~| + sum_k |Z_j'Z_k| |v_k|)``.
        """
        return 4.0 * _EPS * self.dsc * (1.5 * self.ynorm + 2.0 * float(np.sum(np.abs(self.v))))

    def candidate(self, order, Ginv, signs, GAT=None):
        """``(u, g, e, a, drift)`` for an ordered candidate active set (not yet accepted).

        ``GAT``: the Gram rows of ``order`` when the caller has them.
        """
        k = len(order)
        Aidx = np.asarray(order, dtype=np.int64)
        if GAT is None:
            GAT = (np.stack([self.eng.row(j) for j in order]) if k
                   else np.zeros((1, self.c0t.size)))
        GAA = np.ascontiguousarray(GAT[:k][:, Aidx]) if k else np.zeros((0, 0))
        return segment(self.c0t, self.omega, self.dsc, signs, Aidx, k,
                       np.ascontiguousarray(Ginv), GAA, GAT, 0.0, self.e, self.a, True), GAT

    def accept(self, order, Ginv, signs, seg, GAT) -> None:
        k = len(order)
        self.posA[self.Aidx[:self.k]] = -1
        self.Aidx[:k] = order
        self.posA[self.Aidx[:k]] = np.arange(k)
        self.k = k
        self.GAT[:k] = GAT[:k]
        self.GAA = np.ascontiguousarray(GAT[:k][:, self.Aidx[:k]]) if k else np.zeros((0, 0))
        self.Ginv, self.signs = np.ascontiguousarray(Ginv), signs
        self.u, self.g, self.e, self.a, drift = seg
        eng = self.eng
        eng.max_drift = max(eng.max_drift, drift)
        eng.n_updates += 1
        eng.since += 1
        if drift > _DRIFT_TOL:
            eng.since = eng.refactor_every  # re-invert before the next step

    def move_to(self, lam: float, leave=()) -> None:
        """Coefficients and correlations at ``lam`` on the current segment."""
        A = self.Aidx[:self.k]
        self.v[A] = self.u - lam * self.g
        for j in leave:
            self.v[j] = 0.0
        self.ch = self.e + lam * self.a
        self.ch[A] = lam * self.signs[A]


@single_blas_thread
def lasso_path(X, y, *, alpha_min: float | None = None,
               refactor_every: int = REFACTOR_EVERY_VERIFIED,
               max_events: int | None = None) -> SolutionPath:
    r"""Exact Lasso path in scikit-learn's scaling, from ``alpha_max`` down to ``alpha_min``.

    Solves, for every ``alpha`` in ``[alpha_min, alpha_max]``,

    .. math::

        \min_w \; \frac{1}{2n} \lVert y - X w \rVert_2^2 + \alpha \lVert w \rVert_1

    (no intercept; center ``X`` and ``y`` beforehand for one) by the homotopy of Osborne et al.
    (2000) / LARS-Lasso of Efron et al. (2004), with ``alpha_max = max|X'y| / n`` (above it
    ``w = 0``; equation ``(lasso-alphamax)`` of the primer chapter on the Lasso homotopy, whose
    ``(lasso-kkt)`` and ``(lasso-segment)`` are the optimality conditions and the affine segment
    between two events). The breakpoints coincide with those of
    ``sklearn.linear_model.lars_path(X, y, method="lasso")`` on generic data.

    Parameters
    ----------
    X : array_like of shape (n, p)
        Design matrix. Columns may differ in scale by many orders of magnitude; the homotopy
        runs on internally rescaled columns (module docstring).
    y : array_like of shape (n,)
        Response.
    alpha_min : float, optional
        End of the path (``0 <= alpha_min <= alpha_max``). ``None``: ``0``, where the path
        ends at the least-squares solution when ``X`` has full column rank, or at an
        interpolating solution once the active columns span those of ``X`` (more features
        than samples, or a rank-deficient design).
    refactor_every : int
        Full re-inversion of ``G_AA`` every this many updates (drift control). The default,
        :data:`pathlib_core.core.linalg.REFACTOR_EVERY_VERIFIED` (four times the SVM loops'
        ``REFACTOR_EVERY``), is affordable because every segment's solve is also checked
        against its backward error (a re-inversion as soon as it exceeds ``1e-10``).
    max_events : int, optional
        Safety bound on the number of events (default ``20 (n + p) + 100``).

    Returns
    -------
    SolutionPath
        ``param_name == "alpha"``; ``path.at(alpha)`` is a :class:`LassoSolution`. Events
        ``"enter"`` / ``"leave"`` with feature indices. ``kkt_residuals()`` are per-feature
        relative residuals (:func:`lasso_kkt_residual`). ``info`` holds ``n_events``,
        ``n_refactorizations``, ``max_drift``, ``n_tie_events``, ``n_dependent`` (entries
        refused to a column in the span of the active ones), ``saturated`` (the active set
        spans the columns of ``X`` at the end), ``time``, ``alpha_max``.

    Raises
    ------
    ValueError
        Bad input (non-finite values, shapes, ``alpha_min`` < 0 or > ``alpha_max``).
    pathlib_core.core.exceptions.HomotopyError
        A degenerate event that cannot be resolved, or more than ``max_events`` events.
    """
    t0 = time.perf_counter()
    Xm = as_matrix(X, "X")
    n, p = Xm.shape
    yv = as_vector(y, "y", length=n, length_of="X")
    refactor_every = positive_int(refactor_every, "refactor_every")
    # the user's alpha_max, exactly as lars_path computes it
    amax = float(np.max(np.abs(Xm.T @ yv))) / n
    if alpha_min is None:
        a_end = 0.0
    else:
        a_end = positive_scalar(alpha_min, "alpha_min", allow_zero=True)
        if a_end > amax:
            raise ValueError(f"alpha_min must be <= alpha_max = max|X'y|/n = {amax!r}; "
                             f"got {a_end!r}")
    info = {"alpha_max": amax}
    cert = _Certificate(Xm, yv)

    def residual(t, rec):
        return cert(t, rec.coef)

    if amax == 0.0:
        info.update(n_events=0, n_breakpoints=1, time=time.perf_counter() - t0)
        return SolutionPath.piecewise_linear("alpha", [0.0], [LassoSolution(np.zeros(p))], [],
                                     residual=residual, info=info)
    # exact rescaling by powers of two: Z = X / d, y~ = y / s_y, lam = n alpha / s_y
    dsc = _pow2(np.sqrt(np.einsum("ij,ij->j", Xm, Xm)))
    sy = float(_pow2(np.array([np.linalg.norm(yv)]))[0])
    Z = Xm / dsc
    to_lam = n / sy
    eng = _Gram(Z, refactor_every)
    st = _State(eng, Z.T @ (yv / sy), dsc, float(np.linalg.norm(yv / sy)))
    lam_max = float(np.max(np.abs(st.ch)))
    lam_end = a_end * to_lam
    lam = lam_max
    params = [amax]
    coefs = [np.zeros(p)]
    events: list[Event] = []
    max_ev = max_events if max_events is not None else 20 * (n + p) + 100
    # entering at alpha_max: every feature tied at |c_j| = alpha_max
    first = np.flatnonzero(np.abs(st.ch) >= lam_max * (1 - 1e-12) - st.tau()).tolist()
    _transition(st, first, [], lam, st.tau())
    st.move_to(lam)
    if st.A:
        events.append(Event(amax, "enter", tuple(sorted(st.A))))
    n_ev = 0
    n_zero = 0
    cap = 2 * min(n, p) + 64
    out_lam = np.empty(cap)
    out_v = np.empty((cap, p))
    out_kind = np.empty(cap, dtype=np.int64)
    out_idx = np.empty(cap, dtype=np.int64)
    while lam > lam_end:
        if n_ev > max_ev:
            raise HomotopyError(f"more than max_events={max_ev} events")
        if eng.since >= refactor_every:
            _refactor(st, lam / to_lam)
        # plain single-index events in the compiled loop
        (status, n_rec, st.k, lam, st.Ginv, st.GAA, st.u, st.g, st.e, st.a, eng.since,
         drift) = run(eng.G, eng.Zt, eng.has_G, st.c0t, dsc, st.omega, st.ynorm, st.v,
                      st.signs, st.posA, st.blocked, st.Aidx, st.k, st.Ginv, st.GAA, st.GAT,
                      st.u, st.g, st.e, st.a, lam, lam_end, n, eng.since, refactor_every,
                      _SUSPECT_TOL, _DRIFT_TOL, _LEAVE_ULPS, out_lam, out_v, out_kind, out_idx)
        eng.max_drift = max(eng.max_drift, drift)
        for r in range(n_rec):
            kind = int(out_kind[r])
            if kind == 0:
                params.append(a_end)
            else:
                alpha = float(out_lam[r]) / to_lam
                events.append(Event(alpha, "enter" if kind > 0 else "leave", (int(out_idx[r]),)))
                params.append(alpha)
                eng.n_updates += 1
            coefs.append(out_v[r] * sy / dsc)
        if n_rec:
            n_ev += n_rec
            n_zero = 0
        if status == END:
            break
        if status != FALLBACK:  # REFACTOR or FULL: go on from the last breakpoint
            continue
        # an event that needs the general search: ties, zero-length steps, dependent columns
        eng.n_fallback += 1
        n_ev += 1
        st.move_to(lam)
        lam_new, enter, leave = _next_event(st, lam, lam_end)
        final = enter is None
        step = lam - lam_new
        lam = lam_new
        st.move_to(lam, leave or ())
        if final:
            if lam == 0.0:  # coefficients that reach 0 at the end of the path, to rounding
                A = st.Aidx[:st.k]
                st.v[A[np.abs(st.u) <= _LEAVE_ULPS * _EPS * np.max(np.abs(st.u))]] = 0.0
            params.append(a_end)
            coefs.append(st.v * sy / dsc)
            break
        old = set(st.A)
        if len(enter) + len(leave) > 1:
            eng.n_tie_events += 1
        _transition(st, enter, leave, lam, st.tau())
        gone = sorted(old - set(st.A))
        came = sorted(set(st.A) - old)
        for j in gone:
            st.v[j] = 0.0
        if gone:
            st.blocked[:] = False  # a column dependent on the old set may now enter
        alpha = lam / to_lam
        if came:
            events.append(Event(alpha, "enter", tuple(came)))
        if gone:
            events.append(Event(alpha, "leave", tuple(gone)))
        if step <= 1e-12 * lam:
            n_zero += 1
            if n_zero > 50:
                raise HomotopyError(f"cycling at alpha={alpha!r}")
            coefs[-1] = st.v * sy / dsc
        else:
            n_zero = 0
            params.append(alpha)
            coefs.append(st.v * sy / dsc)
    saturated = st.k >= n
    params = params[::-1]
    coefs = coefs[::-1]
    recs = [LassoSolution(cf) for cf in coefs]
    info.update({"n_events": len(events), "n_breakpoints": len(params),
                 "n_refactorizations": eng.n_refactor, "n_updates": eng.n_updates,
                 "max_drift": eng.max_drift, "n_tie_events": eng.n_tie_events,
                 "n_dependent": eng.n_dependent, "n_fallback": eng.n_fallback,
                 "saturated": bool(saturated),
                 "time": time.perf_counter() - t0})
    return SolutionPath.piecewise_linear("alpha", params, recs, events, residual=residual,
                                 direction=-1, info=info)


def _refactor(st: _State, alpha: float) -> None:
    """Re-invert ``G_AA`` from scratch and recompute the segment (drift control)."""
    Ginv = st.eng.inverse(st.A, st.GAT)
    if Ginv is None:
        raise HomotopyError("the active Gram matrix became numerically singular at "
                            f"alpha={alpha!r} ({st.k} active features)")
    seg, GAT = st.candidate(st.A, Ginv, st.signs, st.GAT[:max(st.k, 1)].copy())
    st.accept(st.A, Ginv, st.signs, seg, GAT)
    st.eng.n_updates -= 1
    st.eng.since = 0


def _crossings(e, a, tau):
    """Where each correlation ``e + lam a`` reaches ``+lam`` (``l1``) and ``-lam`` (``l2``)
    as ``lam`` decreases (``-inf``: never).

    A crossing closer to 0 than the rounding of the correlation allows (``tau_j / den_j``,
    ``den_j = 1 -+ a_j`` the relative speed) cannot be located and counts as none.
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        den1 = 1.0 - a
        den2 = 1.0 + a
        l1 = np.where(den1 > 1e-9, e / den1, -np.inf)
        l2 = np.where(den2 > 1e-9, -e / den2, -np.inf)
        l1[l1 <= tau / den1] = -np.inf
        l2[l2 <= tau / den2] = -np.inf
    return l1, l2


def _next_event(st: _State, lam: float, lam_end: float):
    """``(lam_next, enter, leave)``: the next event below ``lam`` and who moves there.

    Entry of inactive ``j`` where ``e_j + lam a_j = +-lam``; exit of active ``j`` where
    ``u_j - lam g_j = 0`` (only if ``v_j`` moves towards 0). ``enter`` is ``None`` when no
    event happens above ``lam_end`` (the path ends there). An entry below the rounding level
    of its correlation cannot be located and is ignored; a feature whose column depends on
    the active ones is marked blocked and skipped; no feature enters a saturated active set
    (as many active columns as samples: they span every column).
    """
    A = st.A
    e, a = st.e, st.a
    lam_leave = np.full(len(A), -np.inf)
    if A:
        with np.errstate(divide="ignore", invalid="ignore"):
            lam_leave = np.where(st.signs[A] * st.g < 0, st.u / st.g, -np.inf)
            # a coefficient that reaches 0 closer to lam = 0 than the rounding of u allows
            # (64 eps max|u| / |g_j|) does so at the end of the path
            lam_leave[lam_leave <= _LEAVE_ULPS * _EPS * np.max(np.abs(st.u)) / np.abs(st.g)] = \
                -np.inf
        lam_leave = np.minimum(lam_leave, lam)
    tau = st.tau()
    while True:
        saturated = len(A) >= st.eng.n
        if saturated:
            lam_enter = np.full(e.shape[0], -np.inf)
        else:
            l1, l2 = _crossings(e, a, tau)
            lam_enter = np.minimum(np.maximum(l1, l2), lam)
            lam_enter[A] = -np.inf
            lam_enter[st.blocked] = -np.inf
        le = float(np.max(lam_enter)) if lam_enter.size else -np.inf
        ll = float(np.max(lam_leave)) if A else -np.inf
        lam_next = max(le, ll)
        if not lam_next > lam_end:
            return lam_end, None, None
        ttol = 1e-10 * lam_next  # ties: events within rounding of each other
        enter = np.flatnonzero(lam_enter >= lam_next - ttol).tolist()
        if not saturated:  # the side each feature reaches: +lam (l1) or -lam (l2)
            st.side[enter] = np.where(l1[enter] >= l2[enter], 1.0, -1.0)
        leave = [A[k] for k in np.flatnonzero(lam_leave >= lam_next - ttol)]
        if len(enter) == 1 and not leave and st.eng.add(st.Ginv, A, enter[0]) is None:
            st.blocked[enter[0]] = True
            st.eng.n_dependent += 1
            continue
        return lam_next, enter, leave


def _transition(st: _State, enter, leave, lam, tau):
    """New active set after the event: natural transition, repaired by pivoting on violations.

    A candidate is valid when its direction moves every (near-)zero active coefficient away
    from 0 in its sign's direction and no (near-)tied inactive correlation outgrows ``lam``
    (``s_j a_j >= 1`` where ``|ch_j| = lam``). Sets the new segment on ``st``.
    """
    A = st.A
    leave_set = set(leave)
    queue = [[j for j in A if j not in leave_set] + [j for j in enter if j not in set(A)]]
    if len(enter) + len(leave) > 1:
        # a tie: the consistent set is the support of the path's direction, a small QP
        queue.insert(0, _direction_support(st, enter, lam, tau))
    seen = set()
    tried = 0
    pos_of = {j: k for k, j in enumerate(A)}
    while queue and tried < 4 * (len(enter) + len(leave)) + 40:
        cand = queue.pop(0)
        key = tuple(sorted(cand))
        if key in seen:
            continue
        seen.add(key)
        tried += 1
        upd = _update(st, A, pos_of, cand)
        if upd is None:
            continue
        order, Gi, skipped = upd
        s_new = st.signs.copy()
        for j in order:
            if j not in pos_of or st.side[j] != 0:  # a new feature, or a sign that flips
                s_new[j] = _entry_sign(st, j, tau)
        (seg, GAT), viol_drop, viol_add = _violations(st, order, Gi, s_new, lam, tau, skipped)
        if not viol_add and not viol_drop:
            st.side[:] = 0.0
            st.accept(order, Gi, s_new, seg, GAT)
            if skipped:
                st.blocked[skipped] = True
                st.eng.n_dependent += len(skipped)
            return
        for j in viol_drop:
            queue.append([k for k in cand if k != j])
        for j in viol_add:
            queue.append(list(cand) + [j])
        if len(viol_add) + len(viol_drop) > 1:
            queue.append([k for k in cand if k not in viol_drop] + viol_add)
    raise HomotopyError(f"no consistent active set found at alpha={lam!r} in scaled units "
                        f"(entering {enter[:10]}, leaving {leave[:10]})")


def _direction_support(st: _State, enter, lam, tau) -> list[int]:
    r"""The active set after a tie, from the first-order problem of the path's direction.

    With ``T`` the active and tied features, the direction ``delta = dv_T / d(-lam)`` solves

    .. math::

        \min_\delta \tfrac12 \delta^\top G_{TT} \delta - (\omega_T s_T)^\top \delta
        \quad\text{s.t.}\quad s_j \delta_j \ge 0 \ \text{for } v_j = 0,

    whose optimality conditions are those the new active set must satisfy: a coefficient at
    0 moves away from 0 on its sign's side, or stays at 0 with its correlation not outgrowing
    ``lam`` (``s_j a_j >= 1``: the multiplier of its sign constraint). Returns the features
    with a nonzero direction, active ones first (solved by :func:`pathlib_core.core.qp.solve_qp`).
    """
    from ..core.qp import solve_qp

    A = st.A
    vtol = 1e-12 * max(float(np.max(np.abs(st.v))), 1e-300)
    ina = np.ones(st.ch.shape[0], dtype=bool)
    ina[A] = False
    ina &= ~st.blocked
    tied = np.flatnonzero(ina & (np.abs(np.abs(st.ch) - lam) <= 1e-9 * lam + tau)).tolist()
    T = list(A) + sorted(set(tied) | (set(enter) - set(A)))
    side = np.array([st.signs[j] if j in set(A) else _entry_sign(st, j, tau) for j in T])
    at0 = np.array([abs(st.v[j]) <= vtol for j in T])
    P = np.stack([st.eng.row(j)[T] for j in T])
    lb = np.where(at0 & (side > 0), 0.0, -np.inf)
    ub = np.where(at0 & (side < 0), 0.0, np.inf)
    res = solve_qp(P, -st.omega[T] * side, lb=lb, ub=ub)
    if res.status != "optimal":
        return [j for j in A if j not in set(enter)] + [j for j in enter if j not in set(A)]
    for j, sj in zip(T, side, strict=True):
        if j not in set(A):
            st.side[j] = sj
    return [j for j, dj, z in zip(T, res.x, at0, strict=True) if not z or dj != 0.0]


def _entry_sign(st: _State, j: int, tau) -> float:
    """Sign of a feature that enters: the side of ``+-lam`` its correlation reaches.

    The side found by the event search or by the check of a candidate (``st.side``) when
    there is one, else the sign of the correlation.
    """
    if st.side[j] != 0:
        return float(st.side[j])
    return 1.0 if st.ch[j] >= 0 else -1.0


def _violations(st: _State, order, Gi, s_new, lam, tau, skipped=()):
    """Segment of a candidate active set and the first-order conditions it violates.

    ``viol_drop``: (near-)zero active coefficients that would not move away from 0 on their
    sign's side;
    ``viol_add``: inactive features whose correlation on the candidate's segment reaches
    ``+-lam`` at the event itself (tied at ``|ch_j| = lam`` and moving out, ``s_j a_j < 1``),
    other than blocked columns and the ``skipped`` ones (in the span of the candidate's
    columns: their correlation is a fixed multiple of ``lam``); crossings below the rounding of
    a correlation do not count (:func:`_crossings`).
    Returns ``((segment, GAT), viol_drop, viol_add)``.
    """
    p = st.ch.shape[0]
    seg, GAT = st.candidate(order, Gi, s_new)
    g, a = seg[1], seg[3]
    viol_drop = []
    if order:
        rhs = st.omega[order] * s_new[order]
        gscale = np.abs(Gi) @ np.abs(rhs)
        vtol = 1e-12 * max(float(np.max(np.abs(st.v))), 1e-300)
        near0 = np.abs(st.v[order]) <= vtol
        # a coefficient at 0 must move away from 0 on its sign's side, strictly: one whose
        # direction vanishes to rounding stays out (its correlation then tracks lam)
        viol_drop = [order[k] for k in np.flatnonzero(near0 & (s_new[order] * g
                                                               <= 1e-9 * gscale))]
    ina = np.ones(p, dtype=bool)
    ina[order] = False
    ina &= ~st.blocked
    ina[list(skipped)] = False
    # an inactive feature whose correlation, on the candidate's segment, reaches +-lam at the
    # event itself (or has passed it): the candidate's first step would have zero length
    l1, l2 = _crossings(seg[2], a, tau)
    cross = np.maximum(l1, l2)
    viol_add = np.flatnonzero(ina & (cross >= lam * (1.0 - 1e-9))).tolist()
    for j in viol_add:
        if st.side[j] == 0:
            st.side[j] = 1.0 if l1[j] >= l2[j] else -1.0
    return (seg, GAT), viol_drop, viol_add


def _update(st: _State, A, pos_of, cand):
    """``(order, G_AA^{-1}, skipped)`` for ``cand``: kept features (a leaver's place taken by
    the last one), then the new ones in increasing index, except those whose column depends on
    the columns before them (``skipped``); ``None`` beyond the capacity of the buffers."""
    eng = st.eng
    cset = set(cand)
    drop = [j for j in A if j not in cset]
    new = sorted(j for j in cand if j not in pos_of)
    skipped = []
    Gi = st.Ginv
    order = list(A)
    for j in drop:
        pos = order.index(j)
        Gi = border_remove(Gi, pos)
        order[pos] = order[-1]
        order.pop()
    for j in new:
        Gi2 = eng.add(Gi, order, j)
        if Gi2 is None:
            skipped.append(j)
            continue
        Gi = Gi2
        order.append(j)
    if len(order) > st.Aidx.shape[0]:
        return None
    return order, Gi, skipped
