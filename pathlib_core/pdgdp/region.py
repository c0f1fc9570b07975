r"""Critical regions of the SVM dual with per-sample upper bounds (Theorem 1 of PDGDP).

The parametric dual of the PDGDP paper (its problem "Dual", in the compact form
the paper calls (2)) is, for a fixed kernel and labels ``y`` in ``{-1, +1}``,

.. math::

    V(u) = \min_{\alpha \in \mathbb R^n} \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha
    \quad \text{s.t.} \quad y^\top \alpha = 0, \quad 0 \le \alpha \le u,
    \qquad Q = (y y^\top) \circ K,

where the per-sample upper bounds ``u`` carry the parameters: hidden-state weights of a latent
SVM (``u_i = c_i \theta_{im}``, Example 1) or cost weights of a cost-sensitive SVM (Example 2).
The paper's (Dual) is the maximization of ``-V``; we write it as a minimization, the form the
QP tools of :mod:`pathlib_core.core.qp` use.

Index sets (Definition 1 of the paper): ``F`` (free, ``0 < alpha_i < u_i``; the paper's
unbounded support vectors ``S_ub``), ``L`` (``alpha_i = 0``; ``S_0``) and ``U``
(``alpha_i = u_i``; ``S_b``). With ``g = Q alpha - 1 + b y`` (``b`` = the multiplier of
``y' alpha = 0`` = the SVM intercept) the KKT conditions are ``g_F = 0``, ``g_L >= 0``,
``g_U <= 0``. For *fixed* index sets they reduce to the linear system

.. math::

    \underbrace{\begin{bmatrix} Q_{FF} & y_F \\ y_F^\top & 0 \end{bmatrix}}_{M}
    \begin{bmatrix} \alpha_F \\ b \end{bmatrix} =
    \begin{bmatrix} \mathbf 1_F - Q_{FU} u_U \\ -y_U^\top u_U \end{bmatrix},
    \qquad \alpha_U = u_U, \quad \alpha_L = 0,

whose right-hand side is affine in ``u``. Hence (Theorem 1) ``alpha*(u)`` and ``b(u)`` are
affine in ``u`` on the *critical region*

.. math::

    CR = \{u \ge 0 : 0 \le \alpha_F(u) \le u_F,\; g_L(u) \ge 0,\; g_U(u) \le 0\},

a polyhedron, and ``V(u)`` is quadratic there. The gradient of the optimal value is the
negative upper-bound multiplier, ``dV/du_i = g_i(u)`` for ``i`` in ``U`` and ``0`` otherwise
(so ``-dV/du_i`` is the hinge slack ``xi_i`` of the primal SVM).

The paper's Lemma 1 (the matrix ``M`` is invertible under its non-degeneracy Definition 2)
was lost in our copy of the text; here ``M`` is first balanced by powers of two (``alpha_F``
times ``t``, ``b`` over ``t`` with ``t^2 max|Q_FF|`` of order one, then Ruiz's scaling; exact,
so a kernel scaled by ``s`` with bounds over ``s`` gives ``alpha / s`` to rounding for ``s``
from 1e-300 to 1e300), then factored by LU when it is well conditioned, by a symmetric
eigendecomposition (pseudo-inverse) otherwise, and the two degenerate cases get a documented
fallback (see :class:`CriticalRegion`). A kernel that is not positive semi-definite makes
the dual non-convex and raises ``ValueError`` (see :func:`critical_region`).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg

from ..core.exceptions import NotPSDError, SolverError
from ..core.kkt import KKTResiduals, qp_residuals
from ..core.qp import QPResult, ruiz_pow2, solve_qp
from ..core.states import FREE, LOWER, UPPER
from ..core.threads import single_blas_thread
from ..core.validation import as_binary_labels, as_kernel, as_vector, check_psd, positive_scalar

__all__ = ["CriticalRegion", "critical_region", "solve_svm_dual"]

#: eigenvalues of ``M`` below this fraction of the largest count as zero
_RANK_RTOL = 1e-11
#: ``M`` is factored by LU when its estimated reciprocal condition number exceeds this
_LU_RCOND = 1e-10
#: libsvm's iteration cap (per sample, plus 10^4) before the active-set solver takes over
_LIBSVM_MAX_ITER_PER_SAMPLE = 100


# ---------------------------------------------------------------------------------------------
# Operators for Q (dense, or a factor Q = Z Z' for linear kernels)
# ---------------------------------------------------------------------------------------------
class _DenseQ:
    """``Q`` held as a dense symmetric matrix."""

    def __init__(self, Q: np.ndarray):
        self.Q = Q

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return self.Q[np.ix_(rows, cols)]

    def cols_dot(self, cols: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.Q[:, cols] @ v

    def dense(self) -> np.ndarray:
        return self.Q


class _FactorQ:
    """``Q = Z Z'`` (a linear kernel: ``Z = diag(y) X / sqrt(sigma)``); products in O(n p)."""

    def __init__(self, Z: np.ndarray):
        self.Z = Z
        self._Q: np.ndarray | None = None

    def block(self, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
        return self.Z[rows] @ self.Z[cols].T

    def cols_dot(self, cols: np.ndarray, v: np.ndarray) -> np.ndarray:
        return self.Z @ (self.Z[cols].T @ v)

    def dense(self) -> np.ndarray:
        if self._Q is None:
            self._Q = self.Z @ self.Z.T
        return self._Q


# ---------------------------------------------------------------------------------------------
# The SVM dual solve (a thin wrapper of qp.solve_qp)
# ---------------------------------------------------------------------------------------------
def _solve_dual(qop, y: np.ndarray, upper: np.ndarray, warm_start=None,
                tol: float = 1e-12) -> QPResult:
    """The dual by :func:`pathlib_core.core.qp.solve_qp`; an error (never a status) otherwise.

    The dual is feasible (``alpha = 0``) and bounded (a box) for any ``upper > 0``, so a
    status other than ``"optimal"`` is a numerical failure: a
    :class:`~pathlib_core.core.exceptions.SolverError` naming it.
    A kernel that is not positive semi-definite makes the dual non-convex: ``ValueError``
    naming ``K`` (with the eigenvalues of ``K``).
    """
    n = y.shape[0]
    Q = qop.dense()
    try:
        res = solve_qp(Q, -np.ones(n), A=y[None, :], b=[0.0], lb=0.0, ub=upper,
                       warm_start=warm_start, tol=tol)
        if res.status != "optimal" and warm_start is not None:  # far-away warm start: cold
            res = solve_qp(Q, -np.ones(n), A=y[None, :], b=[0.0], lb=0.0, ub=upper, tol=tol)
    except NotPSDError as exc:
        K = np.outer(y, y) * Q  # Q = (y y') o K with y in {-1, +1}
        check_psd(K, "K")  # raises with the eigenvalues of K itself
        raise ValueError(f"K must be positive semi-definite (a valid kernel): the SVM dual "
                         f"met negative curvature ({exc})") from exc
    if res.status != "optimal":
        raise SolverError(
            f"the SVM dual QP (n = {n}) did not reach an optimum: status {res.status!r} after "
            f"{res.n_iter} active-set iterations (a numerical failure: the dual is feasible "
            "and bounded for every positive upper bound)")
    return res


@single_blas_thread
def solve_svm_dual(K, y, upper, *, warm_start=None) -> QPResult:
    r"""Solve the SVM dual with per-sample upper bounds by the active-set solver.

    .. math::

        \min_\alpha \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha
        \quad \text{s.t.} \quad y^\top\alpha = 0,\; 0 \le \alpha \le u,
        \qquad Q = (y y^\top) \circ K .

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric positive semi-definite kernel matrix.
    y : array_like of shape (n,)
        Labels in ``{-1, +1}`` (both classes present).
    upper : array_like of shape (n,)
        Positive, finite upper bounds ``u``.
    warm_start : QPResult, optional
        A previous solution (its working set is reused).

    Returns
    -------
    QPResult
        From :func:`pathlib_core.core.qp.solve_qp`; ``nu[0]`` is the intercept ``b``.

    Raises
    ------
    ValueError
        Bad ``K``, ``y`` or ``upper`` (naming the argument), or a kernel that is not
        positive semi-definite (as in :func:`critical_region`).
    SolverError
        The dual QP failed numerically.
    """
    Kv, yv, uv = _validate(K, y, upper)
    return _solve_dual(_DenseQ(np.outer(yv, yv) * Kv), yv, uv, warm_start)


def _validate(K, y, upper):
    Kv = as_kernel(K, "K")
    n = Kv.shape[0]
    yv = as_binary_labels(y, "y", length=n, length_of="K")
    try:
        uv = np.asarray(upper, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"upper must be a numeric 1-D array of length {n}; "
                         f"got {type(upper).__name__}") from exc
    if uv.ndim != 1 or uv.shape[0] != n:
        raise ValueError(f"upper must have shape ({n},) (one bound per sample, the size of K); "
                         f"got shape {uv.shape}")
    if not np.all(np.isfinite(uv)):
        raise ValueError("upper must contain only finite values; found "
                         f"{int(np.size(uv) - np.count_nonzero(np.isfinite(uv)))} NaN/inf")
    if np.any(uv <= 0):
        i = int(np.flatnonzero(uv <= 0)[0])
        raise ValueError(f"upper must be > 0 for every sample; upper[{i}] = {uv[i]} "
                         f"({int(np.sum(uv <= 0))} non-positive entries)")
    return Kv, yv, uv.copy()


# ---------------------------------------------------------------------------------------------
# The critical region
# ---------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class CriticalRegion:
    r"""The closed form of Theorem 1 on one critical region of the SVM dual.

    Built by :func:`critical_region` (or internally from any solution of the dual). Inside the
    region every method below is *exact* (the KKT conditions hold), with no QP solve.

    Attributes
    ----------
    upper0 : ndarray of shape (n,)
        The bounds at which the region was computed (the solve point).
    free, at_lower, at_upper : ndarray of bool, shape (n,)
        The index sets ``F``, ``L``, ``U`` (a partition of the samples).
    degenerate : str
        ``""`` (the regular case: ``M`` invertible, the closed form is *the* solution);
        ``"singular"`` (``F`` not empty but ``M`` singular: duplicate points, or more free
        points than the rank of ``Q`` allows; ``alpha`` is then not unique and the region
        follows one optimal selection, the base solution plus the minimum-norm increment, which
        is exact because the system stays consistent for every ``u``; its region is the part of
        the true one where that selection stays feasible); or ``"no-free"`` (``F`` empty:
        Definition 2 fails on both classes, ``b`` is only confined to an interval, and the
        region lies in the hyperplane ``y_U' u_U = 0``; ``b(u)`` is the base intercept clipped
        to the interval at ``u``, and :meth:`gradient` returns the subgradient for that ``b``).
    rank_deficiency : int
        ``|F| + 1 - rank(M)``.
    qp : QPResult or None
        The QP solve the region was built from (``None`` when built from given index sets).
    """

    upper0: np.ndarray = field(repr=False)
    free: np.ndarray = field(repr=False)
    at_lower: np.ndarray = field(repr=False)
    at_upper: np.ndarray = field(repr=False)
    degenerate: str
    rank_deficiency: int
    qp: QPResult | None = field(repr=False)
    _qop: object = field(repr=False)
    _y: np.ndarray = field(repr=False)
    _F: np.ndarray = field(repr=False)
    _L: np.ndarray = field(repr=False)
    _U: np.ndarray = field(repr=False)
    _z0: np.ndarray = field(repr=False)  # [alpha_F; b] at upper0
    _dz: np.ndarray = field(repr=False)  # d[alpha_F; b] / d u_U, shape (|F| + 1, |U|)
    _tol: float = field(repr=False)
    _Vk: np.ndarray | None = field(repr=False)  # M^+ = Vk diag(inv_lam) Vk' (degenerate)
    _inv_lam: np.ndarray | None = field(repr=False)
    _lu: tuple | None = field(default=None, repr=False)  # LU factors of M (regular case)
    _D: np.ndarray | None = field(default=None, repr=False)  # M was factored as D M D

    def _solve_m(self, r: np.ndarray) -> np.ndarray:
        """``M^+ r`` (``M^{-1} r`` in the regular case)."""
        return _apply_scaled((self._lu, self._Vk, self._inv_lam), self._D, r)

    # -- evaluation (internal: trusts its input) ------------------------------------------------
    def _alpha_b(self, u: np.ndarray) -> tuple[np.ndarray, float]:
        F, U = self._F, self._U
        z = self._z0 + self._dz @ (u[U] - self.upper0[U]) if U.size else self._z0.copy()
        a = np.zeros(u.shape[0])
        a[F] = z[:-1]
        a[U] = u[U]
        return a, float(z[-1])

    def _support(self) -> np.ndarray:
        return np.concatenate([self._F, self._U])

    def _q_alpha(self, a: np.ndarray) -> np.ndarray:
        S = self._support()
        return self._qop.cols_dot(S, a[S]) if S.size else np.zeros(a.shape[0])

    def _b_interval(self, qa: np.ndarray) -> tuple[float, float]:
        """Interval of ``b`` with ``g_L >= 0`` and ``g_U <= 0`` (``g = qa - 1 + b y``)."""
        y, L, U = self._y, self._L, self._U
        c = 1.0 - qa  # g_i = y_i b - c_i
        # L: y_i b >= c_i ;  U: y_i b <= c_i
        lows = np.concatenate([c[L][y[L] > 0], -c[U][y[U] < 0]])
        highs = np.concatenate([-c[L][y[L] < 0], c[U][y[U] > 0]])
        lo = float(np.max(lows)) if lows.size else -np.inf
        hi = float(np.min(highs)) if highs.size else np.inf
        return lo, hi

    def _evaluate(self, u: np.ndarray):
        """``(alpha, b, g)`` of the closed form at ``u`` (``g = Q alpha - 1 + b y``)."""
        a, b = self._alpha_b(u)
        qa = self._q_alpha(a)
        if self.degenerate == "no-free":
            lo, hi = self._b_interval(qa)
            b = float(np.clip(self._z0[-1], lo, hi)) if lo <= hi else float(self._z0[-1])
        return a, b, qa - 1.0 + b * self._y

    def _violation(self, u: np.ndarray) -> float:
        """Largest violation of the region's conditions at ``u``, relative to their scale."""
        a, b, g = self._evaluate(u)
        F, L, U = self._F, self._L, self._U
        ua = max(float(np.max(np.abs(u))), float(np.max(np.abs(self.upper0))), 1e-300)
        v = 0.0
        if F.size:
            v = max(v, float(np.max(-a[F])) / ua, float(np.max(a[F] - u[F])) / ua)
        gs = 1.0 + float(np.max(np.abs(g)))
        if F.size:  # stationarity on F holds by construction unless M z = r is inconsistent
            v = max(v, float(np.max(np.abs(g[F]))) / gs)
        if L.size:
            v = max(v, float(np.max(-g[L])) / gs)
        if U.size:
            v = max(v, float(np.max(g[U])) / gs)
        if self.degenerate == "no-free":
            v = max(v, abs(float(self._y[U] @ u[U])) / ua if U.size else 0.0)
            lo, hi = self._b_interval(self._q_alpha(a))
            if lo > hi:
                v = max(v, (lo - hi) / gs)
        return v

    def _check_u(self, u) -> np.ndarray:
        n = self.upper0.shape[0]
        uv = as_vector(u, "u", length=n, length_of="K")
        if np.any(uv < 0):
            raise ValueError(f"u must be >= 0 (upper bounds); found {int(np.sum(uv < 0))} "
                             "negative entries")
        return uv

    # -- public API ------------------------------------------------------------------------------
    @property
    def n_free(self) -> int:
        return int(self._F.size)

    def contains(self, u, *, tol: float | None = None) -> bool:
        """Whether ``u`` lies in the critical region (its inequalities hold within ``tol``).

        The conditions are ``0 <= alpha_F(u) <= u_F`` (relative to ``max |u|``),
        ``g_L(u) >= 0`` and ``g_U(u) <= 0`` (relative to ``1 + max |g|``), and for a
        ``"no-free"`` region also ``y_U' u_U = 0`` and a non-empty interval for ``b``.
        ``tol`` defaults to the one given to :func:`critical_region`.
        """
        uv = self._check_u(u)
        t = self._tol if tol is None else positive_scalar(tol, "tol", allow_zero=True)
        return self._violation(uv) <= t

    def alpha(self, u) -> np.ndarray:
        """The closed-form optimal dual ``alpha*(u)`` (affine in ``u``; exact inside)."""
        return self._alpha_b(self._check_u(u))[0]

    def intercept(self, u) -> float:
        """The intercept ``b(u)`` (the multiplier of ``y' alpha = 0``)."""
        return self._evaluate(self._check_u(u))[1]

    def jacobian(self) -> np.ndarray:
        """``d alpha / d u``, shape (n, n): constant inside the region.

        Rows of ``L`` are zero, ``U`` rows are the unit vectors (``alpha_U = u_U``) and ``F``
        rows are ``-(M^{-1} [Q_FU; y_U'])_F`` on the ``U`` columns.
        """
        n = self.upper0.shape[0]
        J = np.zeros((n, n))
        if self._U.size:
            J[np.ix_(self._F, self._U)] = self._dz[:-1]
            J[self._U, self._U] = 1.0
        return J

    def objective(self, u) -> float:
        """The optimal value ``V(u) = 1/2 alpha' Q alpha - 1' alpha`` (quadratic in ``u``)."""
        a = self._alpha_b(self._check_u(u))[0]
        m = float(np.max(np.abs(a)))
        if m == 0.0:
            return 0.0
        s = a / m  # evaluated at alpha / m and scaled back: beyond the float range is -inf
        return m * (0.5 * float(s @ self._q_alpha(a)) - float(s.sum()))

    def gradient(self, u) -> np.ndarray:
        """``dV/du``: ``g_i(u)`` (<= 0) on ``U``, zero elsewhere (a subgradient at kinks)."""
        uv = self._check_u(u)
        _, _, g = self._evaluate(uv)
        out = np.zeros(uv.shape[0])
        out[self._U] = g[self._U]
        return out

    def halfspaces(self) -> tuple[np.ndarray, np.ndarray]:
        """The region as ``{u : G u <= h}`` (the inequalities of Theorem 1, in ``u``).

        Rows: ``-alpha_F(u) <= 0``, ``alpha_F(u) - u_F <= 0``, ``-g_L(u) <= 0``,
        ``g_U(u) <= 0``. For a ``"no-free"`` region ``b`` is held at its base value (the
        set is then a subset of the region) and the equality ``y_U' u_U = 0`` is added as two
        rows.
        """
        n = self.upper0.shape[0]
        F, L, U, y = self._F, self._L, self._U, self._y
        u0 = self.upper0
        dA, db = self._dz[:-1], self._dz[-1]
        a0, b0, g0 = self._evaluate(u0)
        # g(u) = g0 + Dg (u_U - u0_U),  Dg = Q_{:,F} dA + Q_{:,U} + y db
        Dg = np.zeros((n, U.size))
        if U.size:
            idx = np.arange(n)
            Dg = self._qop.block(idx, U) + np.outer(y, db)
            if F.size:
                Dg += self._qop.block(idx, F) @ dA
        rows, rhs = [], []

        def add(coef_U, coef_F, const):
            Gr = np.zeros((coef_U.shape[0], n))
            Gr[:, U] = coef_U
            if coef_F is not None:
                Gr[:, F] += coef_F
            rows.append(Gr)
            rhs.append(-const)

        if F.size:
            aF_const = a0[F] - dA @ u0[U]
            add(-dA, None, -aF_const)
            add(dA, -np.eye(F.size), aF_const)
        gc = g0 - Dg @ u0[U]
        if L.size:
            add(-Dg[L], None, -gc[L])
        if U.size:
            add(Dg[U], None, gc[U])
        if self.degenerate == "no-free" and U.size:
            eq = y[U][None, :]
            add(eq, None, np.zeros(1))
            add(-eq, None, np.zeros(1))
        if not rows:
            return np.zeros((0, n)), np.zeros(0)
        return np.vstack(rows), np.concatenate(rhs)

    def kkt_residuals(self, u, *, relative: bool = True) -> KKTResiduals:
        """KKT residuals of the closed form at ``u``
        (:func:`pathlib_core.core.kkt.qp_residuals`)."""
        uv = self._check_u(u)
        a, b, g = self._evaluate(uv)
        n = uv.shape[0]
        w_lb, w_ub = np.zeros(n), np.zeros(n)
        w_lb[self._L] = g[self._L]
        w_ub[self._U] = -g[self._U]
        return qp_residuals(self._qop.dense(), -np.ones(n), a, A=self._y[None, :], b=[0.0],
                            lb=0.0, ub=uv, nu=[b], w_lb=w_lb, w_ub=w_ub, relative=relative)

    def __str__(self) -> str:
        kind = self.degenerate or "regular"
        return (f"CriticalRegion({self._F.size} free, {self._L.size} at lower, "
                f"{self._U.size} at upper; {kind})")


def _classify(y: np.ndarray, u: np.ndarray, qp: QPResult, g: np.ndarray) -> np.ndarray:
    """State per sample: 0 free, 1 at lower, 2 at upper (bounds ``u_i = 0`` by the sign of g)."""
    state = np.full(y.shape[0], FREE, dtype=np.int8)
    state[qp.active.at_lower] = LOWER
    state[qp.active.at_upper] = UPPER
    zero = u <= 0.0
    # a zero bound fixes alpha_i = 0; as u_i grows it stays at 0 (g_i >= 0) or tracks u_i
    state[zero & (g >= 0)] = LOWER
    state[zero & (g < 0)] = UPPER
    return state


def _factor(M: np.ndarray):
    """Factor the KKT matrix ``M``: ``(lu, None, None)`` when it is well conditioned, else the
    kept eigenpairs ``(None, Vk, 1 / lam_k)`` of a symmetric eigendecomposition (``M^+``).

    LU with partial pivoting is several times cheaper than ``eigh``; it is used when the
    reciprocal condition number estimated from the LU factors exceeds ``_LU_RCOND``. Singular
    or nearly singular ``M`` (duplicate free points, Definition 2 violated) goes to the
    eigendecomposition, whose pseudo-inverse gives the documented fallback selection.
    """
    if M.shape[0] > 1:
        try:
            with warnings.catch_warnings():
                # an exactly singular M is expected here (it goes to the eigh fallback below)
                warnings.simplefilter("ignore", scipy.linalg.LinAlgWarning)
                lu = scipy.linalg.lu_factor(M, check_finite=False)
            d = np.abs(np.diag(lu[0]))
            if d.min() > _LU_RCOND * d.max():
                anorm = float(np.max(np.sum(np.abs(M), axis=0)))
                rcond = scipy.linalg.lapack.dgecon(lu[0], anorm, norm="1")[0]
                if rcond > _LU_RCOND:
                    return lu, None, None
        except (np.linalg.LinAlgError, ValueError):
            pass
    lam, V = np.linalg.eigh(M)
    scale = float(np.max(np.abs(lam))) if lam.size else 0.0
    keep = np.abs(lam) > _RANK_RTOL * max(scale, 1e-300)
    return None, V[:, keep], 1.0 / lam[keep]


def _apply_inverse(lu, Vk, inv_lam, R: np.ndarray) -> np.ndarray:
    """``M^{-1} R`` from LU factors, else ``M^+ R`` from the kept eigenpairs."""
    if lu is not None:
        return scipy.linalg.lu_solve(lu, R, check_finite=False)
    if R.ndim == 2:
        return Vk @ (inv_lam[:, None] * (Vk.T @ R))
    return Vk @ (inv_lam * (Vk.T @ R))


def _factor_scaled(M: np.ndarray, D0: np.ndarray | None = None):
    """``(factors, D)``: :func:`_factor` of ``D M D`` with ``D`` a diagonal of powers of two.

    ``D`` is ``D0`` (a given balancing of a saddle-point structure, default the identity)
    followed by Ruiz's scaling of ``D0 M D0``. The scaling is exact and leaves a well-scaled
    ``M`` unchanged (``D = I``); it keeps a kernel scaled by ``1e-300 .. 1e300`` from looking
    singular to the condition estimate, and the pseudo-inverse of the degenerate case is
    taken in the balanced metric.
    """
    m = M.shape[0]
    D0 = np.ones(m) if D0 is None else D0
    M0 = D0[:, None] * M * D0[None, :]
    D = D0 * ruiz_pow2(M0, np.zeros((0, m)), np.zeros((0, m)), np.zeros(m), True, 60)[0]
    return _factor(D[:, None] * M * D[None, :]), D


def _apply_scaled(fac, D: np.ndarray | None, R: np.ndarray) -> np.ndarray:
    """``M^{-1} R`` (``M^+ R``) from :func:`_factor_scaled`: ``D (D M D)^{-1} D R``."""
    if D is None:
        return _apply_inverse(*fac, R)
    Dr = D if R.ndim == 1 else D[:, None]
    return Dr * _apply_inverse(*fac, Dr * R)


def _region_from_state(qop, y: np.ndarray, u: np.ndarray, state: np.ndarray,
                       alpha: np.ndarray, b: float, tol: float,
                       qp: QPResult | None = None) -> CriticalRegion:
    """The region of the index sets ``state`` through a known solution ``(alpha, b)`` at ``u``."""
    F = np.flatnonzero(state == FREE)
    L = np.flatnonzero(state == LOWER)
    U = np.flatnonzero(state == UPPER)
    k = F.size
    M = np.zeros((k + 1, k + 1))
    if k:
        M[:k, :k] = qop.block(F, F)
        M[:k, k] = y[F]
        M[k, :k] = y[F]
    # balance Q_FF against the labels: alpha_F times t, b over t leave the y blocks alone
    t = np.ones(k + 1)
    if k:
        qmax = float(np.max(np.abs(M[:k, :k])))
        if qmax > 0.0:
            e = -int(np.floor(math.frexp(qmax)[1] / 2.0))  # t^2 qmax in [1/4, 2)
            t[:k], t[k] = math.ldexp(1.0, e), math.ldexp(1.0, -e)
    (lu, Vk, inv_lam), D = _factor_scaled(M, t)
    rank = k + 1 if lu is not None else int(inv_lam.size)

    def pinv_apply(R: np.ndarray) -> np.ndarray:
        return _apply_scaled((lu, Vk, inv_lam), D, R)

    # right-hand side r(u) = [1_F - Q_FU u_U; -y_U' u_U] and its derivative B = [Q_FU; y_U']
    B = np.zeros((k + 1, U.size))
    if U.size:
        if k:
            B[:k] = qop.block(F, U)
        B[k] = y[U]
    r0 = np.concatenate([np.ones(k), [0.0]]) - (B @ u[U] if U.size else 0.0)
    dz = -pinv_apply(B) if U.size else np.zeros((k + 1, 0))
    z = np.concatenate([alpha[F], [b]])
    if k:
        # one refinement step on the base solution: exact M^{-1} r0 when M is invertible,
        # else the given solution moved only within the range of M
        z = z + pinv_apply(r0 - M @ z)
    if k == 0:
        degenerate = "no-free"
    elif rank < k + 1:
        degenerate = "singular"
    else:
        degenerate = ""
    return CriticalRegion(upper0=u.copy(), free=state == FREE, at_lower=state == LOWER,
                          at_upper=state == UPPER, degenerate=degenerate,
                          rank_deficiency=k + 1 - rank, qp=qp, _qop=qop, _y=y, _F=F, _L=L,
                          _U=U, _z0=z, _dz=dz, _tol=tol, _Vk=Vk, _inv_lam=inv_lam, _lu=lu,
                          _D=D)


def _region_from_qp(qop, y: np.ndarray, u: np.ndarray, qp: QPResult,
                    tol: float) -> CriticalRegion:
    a = np.clip(qp.x, 0.0, u)
    b = float(qp.nu[0])
    g = qop.cols_dot(np.arange(y.shape[0]), a) - 1.0 + b * y
    state = _classify(y, u, qp, g)
    return _region_from_state(qop, y, u, state, a, b, tol, qp)


def _region_libsvm(K: np.ndarray, y: np.ndarray, u: np.ndarray, tol: float,
                   qop=None) -> tuple[CriticalRegion, QPResult | None]:
    """Exact region of the dual at ``u`` from a libsvm solve, polished.

    libsvm (scikit-learn's ``SVC``, per-sample ``C_i = u_i`` through ``sample_weight``; every
    ``u_i > 0``) gives an approximate solution; its index sets are read off with a relative
    threshold and the closed form of the region is then exact. When the sets read off do not
    satisfy the KKT conditions (a point near a bound misread), the active-set solver
    (:func:`pathlib_core.core.qp.solve_qp`) finishes from libsvm's point. Returns the region and the
    active-set result (``None`` when libsvm's sets were right).
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import SVC

    qop = _DenseQ(np.outer(y, y) * K) if qop is None else qop
    n = y.shape[0]
    # libsvm's own iteration limit is 10^7 (minutes at extreme C); past this cap the
    # active-set solver finishes from libsvm's point
    svc = SVC(kernel="precomputed", C=1.0, tol=1e-8, cache_size=100,
              max_iter=_LIBSVM_MAX_ITER_PER_SAMPLE * n + 10_000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        svc.fit(K, y, sample_weight=u)
    a = np.zeros(n)
    a[svc.support_] = np.abs(svc.dual_coef_[0])
    b = float(svc.intercept_[0])
    if not (np.all(np.isfinite(a)) and np.isfinite(b)):  # libsvm overflowed: solve afresh
        res = _solve_dual(qop, y, u)
        return _region_from_qp(qop, y, u, res, tol), res
    a = np.clip(a, 0.0, u)
    rel = 1e-6
    state = np.full(y.shape[0], FREE, dtype=np.int8)
    state[a <= rel * u] = LOWER
    state[a >= (1.0 - rel) * u] = UPPER
    R = _region_from_state(qop, y, u, state, a, b, tol)
    if R._violation(u) <= tol:
        return R, None
    res = _solve_dual(qop, y, u, a)
    return _region_from_qp(qop, y, u, res, tol), res


@single_blas_thread
def critical_region(K, y, upper, *, warm_start=None, tol: float = 1e-9) -> CriticalRegion:
    r"""Solve the SVM dual at ``upper`` and return its critical region (Theorem 1).

    .. math::

        \min_\alpha \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha
        \quad \text{s.t.} \quad y^\top\alpha = 0,\; 0 \le \alpha \le u,
        \qquad Q = (y y^\top) \circ K .

    The dual is solved once by :func:`pathlib_core.core.qp.solve_qp` (warm-startable); the index
    sets of the solution define the closed form ``alpha*(u) = alpha_0 + J (u - u_0)`` (the
    paper's Theorem 1, reconstructed in the module docstring) and the polyhedral region on
    which it is optimal.

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric positive semi-definite kernel matrix (symmetry is checked).
    y : array_like of shape (n,)
        Labels in ``{-1, +1}``, both classes present.
    upper : array_like of shape (n,)
        Positive finite per-sample upper bounds ``u``.
    warm_start : QPResult, optional
        A previous solve (e.g. ``region.qp`` of a neighbouring region).
    tol : float
        Relative tolerance of :meth:`CriticalRegion.contains`.

    Returns
    -------
    CriticalRegion

    Raises
    ------
    ValueError
        A kernel that is not square and symmetric, labels not in two classes, bounds of the
        wrong length, non-positive or non-finite bounds; a kernel that is not positive
        semi-definite (found where the active-set solver meets negative curvature, or by its
        closing Cholesky test, and confirmed on the eigenvalues of ``K``; see
        :func:`pathlib_core.core.qp.solve_qp`).
    SolverError
        The dual QP failed numerically (it is feasible and bounded for positive bounds).
    """
    Kv, yv, uv = _validate(K, y, upper)
    tol = positive_scalar(tol, "tol")
    qop = _DenseQ(np.outer(yv, yv) * Kv)
    res = _solve_dual(qop, yv, uv, warm_start)
    return _region_from_qp(qop, yv, uv, res, tol)
