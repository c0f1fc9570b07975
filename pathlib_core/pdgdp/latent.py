r"""Latent (hidden-state) SVM training: PDGDP (Algorithm 1) and the AO, CCCP, SGD baselines.

The model (Example 1 of the PDGDP paper, whose displayed equations were lost in our copy; this
is the form we reconstructed and use throughout) has ``M`` linear components
``f_m(x) = w_m' x + b_m`` and predicts ``+1`` when ``max_m f_m(x) > 0``: the positive class is a
union of ``M`` hidden states, the negative class must be rejected by every component. With
per-sample weights ``c_i = eta / l`` (positives, ``I+``) and ``c_i = (1 - eta) / l``
(negatives, ``I-``), the training objective is

.. math::

    J(W, b) = \sum_{m=1}^M \frac{\sigma_m}{2} \lVert w_m \rVert^2
      + \sum_{i \in I_+} c_i \min_m \bigl[1 - f_m(x_i)\bigr]_+
      + \sum_{i \in I_-} c_i \sum_m \bigl[1 + f_m(x_i)\bigr]_+ .

The last-but-one term is not convex. The simplex trick of the paper,
``min_m a_m = min_{theta in S_M} sum_m theta_m a_m``, introduces hidden-state weights
``theta_i`` in the simplex ``S_M`` for every positive sample, and the joint objective
``J(theta, W, b)`` is bi-convex. For fixed ``theta`` it separates into ``M`` weighted SVMs, the
``m``-th with upper bounds ``u_im = c_i theta_im`` on positives and ``c_i`` on negatives and the
kernel ``K / sigma_m``; by strong duality

.. math::

    J(\theta) := \min_{W, b} J(\theta, W, b) = -\sum_m V\bigl(u_m(\theta)\bigr),
    \qquad \frac{\partial J}{\partial \theta_{im}} = c_i\, \xi_{im}(\theta),

with ``V`` the optimal value of :mod:`pathlib_core.pdgdp.region` and ``xi_im`` the hinge slack
of sample ``i`` in component ``m`` at the optimum. **Caution (our finding, see the chapter):**
``V`` is convex in ``u`` (the paper's Theorem 2), so ``J(theta) = -sum V`` is *concave* in
``theta``; projected sub-gradient descent on it converges to a stationary point (a vertex of
the simplices, i.e. a hard assignment that AO cannot improve), not to a certified global
minimum.

Methods of :func:`train_latent_svm`, all minimizing the same ``J(W, b)`` from the same start
(the weights ``theta_1`` given by k-means on the positives, and ``W(theta_1)``):

``"pdgdp"``
    Algorithm 1: projected sub-gradient steps ``theta <- P_S(theta - tau grad J(theta))`` with
    the constant step of Theorem 3, ``tau = B / (G sqrt(N))``; each component's dual is
    evaluated from a cached critical region when ``u_m(theta)`` lies in one (getRegion /
    thetaInsideRegion / getGrad of the paper) and re-solved by the warm-started QP otherwise.
``"ao"``
    Alternating optimization: solve the ``M`` SVMs, then set each ``theta_i`` to the vertex of
    its smallest slack (the exact minimizer of the linear function ``J(., W, b)``).
``"cccp"``
    The concave-convex procedure of Yu and Joachims (2009): write the positive loss as
    ``max(1, max_m f_m) - max_m f_m``, linearize the concave part at the current ``W`` (the
    component ``m*_i = argmax_m f_m(x_i)``) and solve the convex problem (a QP, by cvxpy).
``"sgd"``
    Stochastic sub-gradient descent on ``J(W, b)`` directly (step ``1 / (sigma (t + t_0))``).
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ..core.exceptions import SolverError
from ..core.fit_result import FitResult
from ..core.qp import QPResult, solve_qp
from ..core.states import FREE, LOWER, UPPER
from ..core.threads import single_blas_thread
from ..core.validation import (
    as_binary_labels,
    as_matrix,
    check_all_finite,
    check_choice,
    encode_binary_labels,
    positive_int,
    positive_scalar,
)
from .region import _apply_scaled, _factor_scaled

__all__ = [
    "LatentSVMResult",
    "LatentSVMClassifier",
    "train_latent_svm",
    "latent_objective",
    "hidden_state_objective",
    "project_simplex",
    "kmeans_init",
    "latent_global_optimum",
]

METHODS = ("pdgdp", "ao", "cccp", "sgd")


# ---------------------------------------------------------------------------------------------
# Small helpers
# ---------------------------------------------------------------------------------------------
def project_simplex(V) -> np.ndarray:
    r"""Euclidean projection of every row of ``V`` onto the probability simplex.

    The sort-based algorithm (Held, Wolfe and Crowder 1974; Duchi et al. 2008), vectorized
    over rows: ``P(v) = max(v - tau, 0)`` with the threshold ``tau`` that makes the row sum
    to one.

    .. math::

        P_S(v) = \operatorname*{arg\,min}_{\theta \in S_M} \lVert \theta - v \rVert_2,
        \qquad S_M = \Bigl\{\theta \in \mathbb R^M : \theta \ge 0,\;
            \textstyle\sum_m \theta_m = 1\Bigr\},

    the projection :math:`P_S` of PDGDP's step (Algorithm 1).

    Parameters
    ----------
    V : array_like of shape (k, M) or (M,)
        Points to project, one per row (a 1-D array is one point); finite, ``M >= 1``.

    Returns
    -------
    ndarray of shape (k, M)
        The projected rows (non-negative, each summing to 1 up to rounding). Always 2-D: a
        1-D input gives shape ``(1, M)``.

    Raises
    ------
    ValueError
        ``V`` not numeric, not 1-D / 2-D, without entries (``M == 0``) or with NaN / inf
        entries (naming ``V``).
    """
    try:
        arr = np.asarray(V, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"V must be a numeric 1-D vector or 2-D array of rows; got "
                         f"{type(V).__name__}") from exc
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise ValueError("V must be a non-empty 1-D vector (one point) or 2-D array (one "
                         f"point per row); got an array of shape {arr.shape}")
    check_all_finite(arr, "V")
    return _project_simplex(arr)


def _project_simplex(V) -> np.ndarray:
    """:func:`project_simplex` on trusted input (PDGDP's projection step)."""
    V = np.atleast_2d(np.asarray(V, dtype=float))
    M = V.shape[1]
    S = -np.sort(-V, axis=1)
    css = np.cumsum(S, axis=1) - 1.0
    k = np.arange(1, M + 1)
    cond = S - css / k > 0
    rho = M - 1 - np.argmax(cond[:, ::-1], axis=1)  # last index where cond holds
    tau = css[np.arange(V.shape[0]), rho] / (rho + 1)
    return np.maximum(V - tau[:, None], 0.0)


def _weights(y: np.ndarray, eta: float) -> np.ndarray:
    l = y.shape[0]
    return np.where(y > 0, eta / l, (1.0 - eta) / l)


def _decision(X: np.ndarray, W: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``F[i, m] = w_m' x_i + b_m``."""
    return X @ W.T + b[None, :]


def _objective(X, y, W, b, sigma, c) -> float:
    F = _decision(X, W, b)
    pos = y > 0
    loss_pos = np.min(np.maximum(1.0 - F[pos], 0.0), axis=1)
    loss_neg = np.sum(np.maximum(1.0 + F[~pos], 0.0), axis=1)
    return float(0.5 * sigma * np.sum(W * W) + c[pos] @ loss_pos + c[~pos] @ loss_neg)


def _check_data(X, y):
    Xv = as_matrix(X, "X")
    yv = as_binary_labels(y, "y", length=Xv.shape[0], length_of="X")
    return Xv, yv


def _check_eta(eta, y) -> float:
    if eta is None:
        return float(np.mean(y < 0))
    eta = positive_scalar(eta, "eta")
    if not eta < 1.0:
        raise ValueError(f"eta must be in (0, 1) (the weight of positive samples); got {eta}")
    return eta


#: smallest sigma / max_i ||x_i||^2 the components are solved at (the lifted QP keeps its
#: certificate at rounding level down to ~1e-80 on test data and fails near 1e-90)
_SIGMA_RATIO_MIN = 1e-60


def _check_sigma(sigma, X: np.ndarray) -> float:
    """``sigma > 0``, and not so small against the features that the model leaves the range
    where its components can be solved (a ``ValueError`` naming both)."""
    sigma = positive_scalar(sigma, "sigma")
    with np.errstate(over="ignore"):
        r2 = float(np.max(np.sum(X * X, axis=1)))
    if r2 > 0.0 and sigma < _SIGMA_RATIO_MIN * r2:
        raise ValueError(
            f"sigma = {sigma:g} is below {_SIGMA_RATIO_MIN:g} times the largest squared norm "
            f"of a row of X ({r2:.3g}): at this ratio the regularization is beyond the "
            "floating-point resolution of the components (the model is then the "
            "unregularized hinge minimization, a linear program). Scaling X by s is the "
            f"same as dividing sigma by s^2; use sigma >= {_SIGMA_RATIO_MIN * r2:.3g} or "
            "smaller features")
    return sigma


def _check_theta(theta, n_pos: int, M: int) -> np.ndarray:
    T = as_matrix(theta, "theta")
    if T.shape != (n_pos, M):
        raise ValueError(f"theta must have shape ({n_pos}, {M}) (positive samples x n_states); "
                         f"got {T.shape}")
    if np.any(T < -1e-12) or np.any(np.abs(T.sum(axis=1) - 1.0) > 1e-9):
        raise ValueError("theta must have rows in the simplex (non-negative, summing to 1)")
    return np.clip(T, 0.0, None) / np.clip(T, 0.0, None).sum(axis=1, keepdims=True)


@single_blas_thread
def latent_objective(X, y, weights, intercepts, *, sigma: float = 0.01,
                     eta: float | None = None) -> float:
    r"""The latent-SVM training objective ``J(W, b)`` (module docstring) of given weights.

    Parameters
    ----------
    X : array_like of shape (l, p)
    y : array_like of shape (l,)
        Labels in ``{-1, +1}``; ``+1`` is the class with hidden states.
    weights : array_like of shape (M, p)
    intercepts : array_like of shape (M,)
    sigma : float
        Regularization ``sigma_m`` (the same for every component).
    eta : float, optional
        Weight of the positives (default ``|I-| / l``).
    """
    Xv, yv = _check_data(X, y)
    W = as_matrix(weights, "weights")
    if W.shape[1] != Xv.shape[1]:
        raise ValueError(f"weights must have {Xv.shape[1]} columns (features of X); "
                         f"got shape {W.shape}")
    b = np.asarray(intercepts, dtype=float).reshape(-1)
    if b.shape[0] != W.shape[0] or not np.all(np.isfinite(b)):
        raise ValueError(f"intercepts must be {W.shape[0]} finite numbers (one per component)")
    sigma = positive_scalar(sigma, "sigma")
    return _objective(Xv, yv, W, b, sigma, _weights(yv, _check_eta(eta, yv)))


@single_blas_thread
def kmeans_init(X, y, n_states: int, *, random_state: int | None = 0) -> np.ndarray:
    """One-hot hidden-state weights of the positives from k-means cluster labels.

    The initialization of Algorithm 1 in the paper's experiment (scikit-learn ``KMeans`` with
    ``n_init=10`` on the positive samples).

    Parameters
    ----------
    X : array_like of shape (l, p)
        Training samples, one per row.
    y : array_like of shape (l,)
        Labels in ``{-1, +1}`` (both present); only the rows with ``y == +1`` are clustered.
    n_states : int
        Number of hidden states ``M`` (clusters), ``1 <= M <=`` the number of positives.
    random_state : int or None, default 0
        ``random_state`` of ``KMeans``.

    Returns
    -------
    ndarray of shape (n_pos, M)
        ``theta_1``: row ``i`` (the ``i``-th positive in the order of ``X``) is the indicator
        vector of its cluster, a vertex of the simplex.

    Raises
    ------
    ValueError
        Bad ``X`` / ``y`` (naming the argument), or ``n_states`` not an integer in
        ``[1, n_pos]``.
    """
    from sklearn.cluster import KMeans

    Xv, yv = _check_data(X, y)
    M = _check_states(n_states, int(np.sum(yv > 0)))
    Xp = Xv[yv > 0]
    labels = KMeans(n_clusters=M, n_init=10, random_state=random_state).fit_predict(Xp)
    T = np.zeros((Xp.shape[0], M))
    T[np.arange(Xp.shape[0]), labels] = 1.0
    return T


def _check_states(n_states, n_pos: int) -> int:
    if isinstance(n_states, bool) or not isinstance(n_states, int | np.integer) or n_states < 1:
        raise ValueError(f"n_states must be an integer >= 1; got {n_states!r}")
    if n_states > n_pos:
        raise ValueError(f"n_states must be <= the number of positive samples ({n_pos}); "
                         f"got {n_states}")
    return int(n_states)


# ---------------------------------------------------------------------------------------------
# The inner problem: M weighted linear SVMs, in the augmented (primal-dual) form
# ---------------------------------------------------------------------------------------------
class _LinearSVM:
    r"""The weighted linear SVM of one component, solved and differentiated stably.

    The dual of a component, ``min 1/2 a'Q a - 1'a`` with ``Q = Z Z' / sigma`` and ``Z = diag(y)
    X``, is ill-conditioned when ``sigma`` is small against the feature scale: the weights
    ``w = X'(y o a) / sigma`` are then a small difference of large terms (features scaled by
    1e8 at ``sigma = 0.01`` leave no correct digit in ``w``, and the QP on ``Q`` wanders). It
    is solved instead in the *lifted* form, with ``v = Z'a / sqrt(sigma)`` as extra variables,

    .. math::

        \min_{v, a} \tfrac12 \lVert v \rVert^2 - \mathbf 1^\top a
        \quad\text{s.t.}\quad v - Z^\top a / \sqrt\sigma = 0, \; y^\top a = 0,
        \; 0 \le a \le u,

    whose multipliers give ``w = -nu_v / sqrt(sigma)`` and the intercept ``b = nu_b`` from the
    margin conditions, without cancellation (the augmented system of a least-squares problem
    instead of its normal equations). The problem is the same, so the solution is the
    component's exact SVM at any scale; :func:`pathlib_core.core.qp.solve_qp` equilibrates it by
    powers of two.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, sigma: float):
        l, p = X.shape
        self.X, self.y, self.sigma, self.p = X, y, sigma, p
        N = l + p
        P = np.zeros((N, N))
        P[np.arange(p), np.arange(p)] = 1.0
        A = np.zeros((p + 1, N))
        A[np.arange(p), np.arange(p)] = 1.0
        A[:p, p:] = -(y[:, None] * X).T / np.sqrt(sigma)
        A[p, p:] = y
        self.P, self.A = P, A
        self.q = np.concatenate([np.zeros(p), -np.ones(l)])
        self.lb = np.concatenate([np.full(p, -np.inf), np.zeros(l)])

    def solve(self, u: np.ndarray, warm: QPResult | None) -> QPResult:
        """The lifted QP at the bounds ``u`` (an error, never a status, when it fails)."""
        ub = np.concatenate([np.full(self.p, np.inf), u])
        kw = dict(A=self.A, b=np.zeros(self.p + 1), lb=self.lb, ub=ub, tol=1e-12)
        res = solve_qp(self.P, self.q, warm_start=warm, **kw)
        if res.status != "optimal" and warm is not None:  # a far-away warm start: go cold
            res = solve_qp(self.P, self.q, **kw)
        if res.status != "optimal":
            raise SolverError(
                f"the SVM dual of a component (n = {u.size}) did not reach an optimum: "
                f"status {res.status!r} after {res.n_iter} active-set iterations (a numerical "
                "failure: the dual is feasible and bounded for every bound u >= 0)")
        return res

    def region(self, u: np.ndarray, res: QPResult, tol: float) -> _LinearRegion:
        """The critical region of the solution ``res`` at ``u``."""
        p = self.p
        a = np.clip(res.x[p:], 0.0, u)
        w = -res.nu[:p] / np.sqrt(self.sigma)
        b = float(res.nu[p])
        g = self.y * (self.X @ w + b) - 1.0
        state = np.full(u.size, FREE, dtype=np.int8)
        state[res.active.at_lower[p:]] = LOWER
        state[res.active.at_upper[p:]] = UPPER
        zero = u <= 0.0  # alpha_i = 0 is fixed; as u_i grows it stays (g_i >= 0) or tracks u_i
        state[zero & (g >= 0)] = LOWER
        state[zero & (g < 0)] = UPPER
        return _LinearRegion(self, u, state, a, w, b, tol)


class _LinearRegion:
    r"""Theorem 1's closed form for a linear kernel, in augmented form.

    With fixed index sets ``F``, ``L``, ``U`` the KKT conditions of a component are the
    square linear system in ``(w, b, alpha_F)``

    .. math::

        \begin{bmatrix} \sigma I & 0 & -X_F^\top Y_F \\ 0 & 0 & -y_F^\top \\
            -Y_F X_F & -y_F & 0 \end{bmatrix}
        \begin{bmatrix} w \\ b \\ \alpha_F \end{bmatrix} =
        \begin{bmatrix} X_U^\top Y_U u_U \\ y_U^\top u_U \\ -\mathbf 1_F \end{bmatrix},

    (stationarity in ``w``, ``y' alpha = 0``, the margins ``y_i (x_i' w + b) = 1`` on ``F``),
    affine in ``u``; eliminating ``w`` gives the system ``M`` of
    :class:`~pathlib_core.pdgdp.region.CriticalRegion`, whose product ``X X' / sigma`` loses
    the digits this form keeps. The matrix is equilibrated by powers of two and factored as in
    the region module (LU, else a symmetric eigendecomposition for singular index sets). The
    margins ``g = y o (X w + b) - 1`` come from ``w`` directly. The private interface is that
    of ``CriticalRegion`` (``_evaluate``, ``_violation``, ``_tol``) plus :meth:`weights`.
    """

    def __init__(self, svm: _LinearSVM, u0, state, a, w, b, tol):
        X, y, p, sigma = svm.X, svm.y, svm.p, svm.sigma
        self._X, self._y, self._tol = X, y, tol
        self.upper0 = u0.copy()
        F, L, U = (np.flatnonzero(state == k) for k in (FREE, LOWER, UPPER))
        self._F, self._L, self._U = F, L, U
        k = F.size
        m = p + 1 + k
        Kmat = np.zeros((m, m))
        Kmat[:p, :p] = sigma * np.eye(p)
        YX_F = y[F, None] * X[F]
        Kmat[:p, p + 1:] = -YX_F.T
        Kmat[p + 1:, :p] = -YX_F
        Kmat[p, p + 1:] = -y[F]
        Kmat[p + 1:, p] = -y[F]
        # symmetric power-of-two equilibration (exact), then LU or a pseudo-inverse
        self._fac, self._D = _factor_scaled(Kmat)
        self.degenerate = "no-free" if k == 0 else ("" if self._fac[0] is not None else
                                                    "singular")
        # right-hand side r(u) = r0 + B u_U
        B = np.zeros((m, U.size))
        if U.size:
            B[:p] = (y[U, None] * X[U]).T
            B[p] = y[U]
        rhs0 = np.zeros(m)
        rhs0[p + 1:] = -1.0
        xi = np.concatenate([w, [b], a[F]])
        r = rhs0 + (B @ u0[U] if U.size else 0.0)
        xi = xi + self._solve(r - Kmat @ xi)  # one refinement step (exact when regular)
        self._xi0 = xi
        self._dxi = self._solve(B) if U.size else np.zeros((m, 0))
        self._p = p

    def _solve(self, R: np.ndarray) -> np.ndarray:
        return _apply_scaled(self._fac, self._D, R)

    @property
    def n_free(self) -> int:
        return int(self._F.size)

    def _state(self, u: np.ndarray):
        p, F, U = self._p, self._F, self._U
        xi = self._xi0 + self._dxi @ (u[U] - self.upper0[U]) if U.size else self._xi0
        a = np.zeros(u.shape[0])
        a[F] = xi[p + 1:]
        a[U] = u[U]
        return a, xi[:p], float(xi[p])

    def _b_interval(self, yxw: np.ndarray) -> tuple[float, float]:
        """Interval of ``b`` with ``g_L >= 0`` and ``g_U <= 0`` (``g = yxw - 1 + b y``)."""
        y, L, U = self._y, self._L, self._U
        c = 1.0 - yxw
        lows = np.concatenate([c[L][y[L] > 0], -c[U][y[U] < 0]])
        highs = np.concatenate([-c[L][y[L] < 0], c[U][y[U] > 0]])
        return (float(np.max(lows)) if lows.size else -np.inf,
                float(np.min(highs)) if highs.size else np.inf)

    def _full(self, u: np.ndarray):
        a, w, b = self._state(u)
        yxw = self._y * (self._X @ w)
        if self.degenerate == "no-free":
            lo, hi = self._b_interval(yxw)
            if lo <= hi:
                b = float(np.clip(b, lo, hi))
        return a, w, b, yxw + b * self._y - 1.0, yxw

    def _evaluate(self, u: np.ndarray):
        """``(alpha, b, g)`` at ``u`` (``g = y o (X w + b) - 1``, the margins minus one)."""
        a, _, b, g, _ = self._full(u)
        return a, b, g

    def weights(self, u: np.ndarray) -> np.ndarray:
        """The component's weight vector ``w(u)`` (affine in ``u`` inside the region)."""
        return self._state(u)[1]

    def _violation(self, u: np.ndarray) -> float:
        """Largest violation of the region's conditions at ``u``, relative to their scale."""
        a, _, b, g, yxw = self._full(u)
        F, L, U, y = self._F, self._L, self._U, self._y
        ua = max(float(np.max(np.abs(u))), float(np.max(np.abs(self.upper0))), 1e-300)
        gs = 1.0 + float(np.max(np.abs(g)))
        v = 0.0
        if F.size:
            v = max(v, float(np.max(-a[F])) / ua, float(np.max(a[F] - u[F])) / ua,
                    float(np.max(np.abs(g[F]))) / gs)
        if L.size:
            v = max(v, float(np.max(-g[L])) / gs)
        if U.size:
            v = max(v, float(np.max(g[U])) / gs)
        if self.degenerate == "no-free":
            v = max(v, abs(float(y[U] @ u[U])) / ua if U.size else 0.0)
            lo, hi = self._b_interval(yxw)
            if lo > hi:
                v = max(v, (lo - hi) / gs)
        return v


class _Components:
    """Evaluates ``J(theta)``, its gradient and the component models, with region caching."""

    def __init__(self, X, y, M, sigma, c, *, cache_size: int = 16, use_regions: bool = True):
        self.X, self.y, self.M, self.sigma, self.c = X, y, M, sigma, c
        self.pos = np.flatnonzero(y > 0)
        self.svm = _LinearSVM(X, y, sigma)
        self.cache: list[list[_LinearRegion]] = [[] for _ in range(M)]
        self.last: list[QPResult | None] = [None] * M
        self.cache_size, self.use_regions = cache_size, use_regions
        self.n_qp = self.n_hits = 0

    def bounds(self, theta: np.ndarray, m: int) -> np.ndarray:
        u = self.c.copy()
        u[self.pos] *= theta[:, m]
        return u

    def region(self, u: np.ndarray, m: int) -> _LinearRegion:
        if self.use_regions:
            for k, R in enumerate(self.cache[m]):
                if R._violation(u) <= R._tol:
                    self.n_hits += 1
                    if k:  # most recently used first
                        self.cache[m].insert(0, self.cache[m].pop(k))
                    return R
        res = self.svm.solve(u, self.last[m])
        self.n_qp += 1
        self.last[m] = res
        R = self.svm.region(u, res, 1e-9)
        self.cache[m].insert(0, R)
        del self.cache[m][self.cache_size:]
        return R

    def evaluate(self, theta: np.ndarray):
        """``(J(theta), dJ/dtheta, W, b)`` with every component's exact dual."""
        l, p = self.X.shape
        W, b = np.zeros((self.M, p)), np.zeros(self.M)
        grad = np.zeros_like(theta)
        J = 0.0
        for m in range(self.M):
            u = self.bounds(theta, m)
            R = self.region(u, m)
            a, bm, g = R._evaluate(u)
            W[m] = R.weights(u)
            b[m] = bm
            xi = np.maximum(-g, 0.0)  # hinge slacks 1 - y_i f_m(x_i), clipped at 0
            # primal value of component m (= -V(u) by strong duality)
            J += 0.5 * self.sigma * float(W[m] @ W[m]) + float(u @ xi)
            grad[:, m] = self.c[self.pos] * xi[self.pos]
        return J, grad, W, b

    def objective(self, W: np.ndarray, b: np.ndarray) -> float:
        return _objective(self.X, self.y, W, b, self.sigma, self.c)


# ---------------------------------------------------------------------------------------------
# Result and the four methods
# ---------------------------------------------------------------------------------------------
@dataclass(repr=False)
class LatentSVMResult(FitResult):
    """A trained latent SVM and its training history.

    Attributes
    ----------
    method : str
    weights : ndarray of shape (M, p)
    intercepts : ndarray of shape (M,)
    theta : ndarray of shape (n_pos, M)
        Hidden-state weights of the positives for the returned model (PDGDP: the iterate with
        the lowest ``J(W_t, b_t)``, Theorem 3's "best" iterate; AO: its last assignment;
        CCCP, SGD: the hard assignment ``argmax_m f_m(x_i)``).
    objective : float
        ``J(W, b)`` of the returned model (the common objective of all methods).
    objective_history : ndarray
        ``J(W_t, b_t)`` of the model after each iteration (SGD: each epoch); entry 0 is the
        start. The same quantity for every method.
    theta_objective_history : ndarray
        PDGDP and AO: ``J(theta_t)`` (``>= J(W_t, b_t)``, equal at a hard assignment that is
        optimal for ``W_t``); empty for CCCP and SGD.
    grad_norm_history : ndarray
        PDGDP only: ``||grad J(theta_t)||`` per iteration.
    theta_history : ndarray or None
        PDGDP only (with ``record_theta``): ``theta_t`` per iteration, shape (T, n_pos, M).
    weights_history, intercepts_history : ndarray
        The model after each iteration (shapes (T, M, p) and (T, M)).
    n_iter : int
    n_qp_solves : int
        Dual QP solves (PDGDP, AO; CCCP counts its convex subproblems, SGD 0), the initial
        solve included.
    n_region_hits : int
        PDGDP: component evaluations served by a cached critical region.
    converged : bool
    time : float
        Wall-clock seconds of training (the common initial solve included).
    step : float
        PDGDP's step size ``tau`` (NaN otherwise).
    """

    method: str
    weights: np.ndarray
    intercepts: np.ndarray
    theta: np.ndarray
    objective: float
    objective_history: np.ndarray
    theta_objective_history: np.ndarray
    grad_norm_history: np.ndarray
    theta_history: np.ndarray | None
    weights_history: np.ndarray = field(repr=False)
    intercepts_history: np.ndarray = field(repr=False)
    n_iter: int
    n_qp_solves: int
    n_region_hits: int
    converged: bool
    time: float
    step: float = float("nan")

    @property
    def status(self) -> str:
        """``"converged"`` if the stopping test was met, else ``"max_iter"``."""
        return "converged" if self.converged else "max_iter"

    def decision_function(self, X) -> np.ndarray:
        """``max_m (w_m' x + b_m)`` for every row of ``X``."""
        Xv = as_matrix(X, "X")
        if Xv.shape[1] != self.weights.shape[1]:
            raise ValueError(f"X must have {self.weights.shape[1]} features; got {Xv.shape[1]}")
        return np.max(_decision(Xv, self.weights, self.intercepts), axis=1)

    def predict(self, X) -> np.ndarray:
        """Labels in ``{-1, +1}``."""
        return np.where(self.decision_function(X) > 0, 1.0, -1.0)

    def accuracy_history(self, X, y) -> np.ndarray:
        """Accuracy on ``(X, y)`` of the model after each iteration."""
        Xv, yv = _check_data(X, y)
        F = np.einsum("ip,tmp->tim", Xv, self.weights_history) + self.intercepts_history[:, None]
        return np.mean(np.where(F.max(axis=2) > 0, 1.0, -1.0) == yv[None, :], axis=1)


def _assignment(X, y, W, b) -> np.ndarray:
    F = _decision(X[y > 0], W, b)
    T = np.zeros_like(F)
    T[np.arange(F.shape[0]), np.argmax(F, axis=1)] = 1.0
    return T


@single_blas_thread
def train_latent_svm(X, y, *, n_states: int, method: str = "pdgdp", sigma: float = 0.01,
                     eta: float | None = None, theta0=None, max_iter: int | None = None,
                     step: float | None = None, random_state: int | None = 0,
                     record_theta: bool = True, use_regions: bool = True,
                     cache_size: int = 16, rel_tol: float = 1e-7) -> LatentSVMResult:
    r"""Train the latent SVM of the module docstring (linear components).

    .. math::

        \min_{W, b} \sum_m \frac{\sigma}{2} \lVert w_m \rVert^2
          + \sum_{i \in I_+} c_i \min_m [1 - f_m(x_i)]_+
          + \sum_{i \in I_-} c_i \sum_m [1 + f_m(x_i)]_+,
        \qquad c_i = \eta / l \;(I_+), \quad (1 - \eta) / l \;(I_-),

    the joint problem (J1) of the paper after the simplex trick of Example 1.

    Parameters
    ----------
    X : array_like of shape (l, p)
    y : array_like of shape (l,)
        Labels in ``{-1, +1}``; ``+1`` is the class made of hidden states.
    n_states : int
        Number of hidden states / components ``M`` (>= 1, <= number of positives).
    method : {"pdgdp", "ao", "cccp", "sgd"}
        See the module docstring.
    sigma : float
        Regularization ``sigma_m`` of every component (paper: 0.01).
    eta : float, optional
        Weight of the positives, in (0, 1); default ``|I-| / l`` as in the paper.
    theta0 : array_like of shape (n_pos, M), optional
        Start (rows in the simplex); default :func:`kmeans_init` with ``random_state``.
    max_iter : int, optional
        Iterations (PDGDP: sub-gradient steps, default 300; AO, CCCP: outer iterations,
        default 50; SGD: epochs, default 30).
    step : float, optional
        PDGDP: the constant step ``tau``; default Theorem 3's ``B / (G sqrt(N))`` with
        ``B = sqrt(2 n_pos)`` (the diameter of the product of simplices), ``G`` the norm of
        the first sub-gradient and ``N = max_iter``. SGD: ``t_0`` of the step
        ``1 / (sigma (t + t_0))`` (default ``1 / sigma``).
    random_state : int or None, default 0
        Seed of the k-means start and of SGD's sample order.
    record_theta : bool
        PDGDP: keep ``theta_t`` of every iteration.
    use_regions : bool
        PDGDP: evaluate from cached critical regions (``False``: one QP per component and step;
        the iterates are the same, only the cost changes).
    cache_size : int
        PDGDP: regions kept per component.
    rel_tol : float
        AO / CCCP stop when the objective decreases by less than ``rel_tol`` (relative).

    Returns
    -------
    LatentSVMResult
        ``converged`` says whether the method stopped by its own criterion (PDGDP: a fixed
        point of the projected step; AO / CCCP: no further decrease) or ran out of
        ``max_iter`` (SGD always runs its epochs).

    Raises
    ------
    ValueError
        Bad input, naming the argument; ``sigma`` below ``1e-60`` times the largest squared
        row norm of ``X`` (beyond the floating-point resolution of the components: the
        lifted QP keeps its certificate at rounding level down to about ``1e-80``).
    SolverError
        A component's dual QP failed numerically (it is feasible and bounded).

    Warns
    -----
    RuntimeWarning
        SGD diverged: it ended above the objectives of its start (the exact component SVMs
        at ``theta0``) and of the zero model; its step ``1 / (sigma (t + t_0))`` is too
        long for the scale of the features.

    Notes
    -----
    **Scale.** The model is not invariant to the scale of single features (the penalty
    ``||w_m||^2`` weighs every feature alike); its exact symmetry is a common factor,
    ``(s X, s^2 sigma) -> (W / s, b)``, and ``(X, t sigma, t c)`` has the same minimizers as
    ``(X, sigma, c)``, so ``(s X, sigma)`` is the problem ``(X, sigma / s^2)``: large
    features mean weak regularization. Every component is solved exactly at any scale (the
    lifted form of ``_LinearSVM``, whose weights and margins come from the augmented KKT
    system instead of the products ``X X' / sigma``): features scaled by 1e8, or by 1e-6 to
    1e6 within one matrix, train to the exact component optima; on the symmetry above the
    objectives agree to rounding.
    """
    Xv, yv = _check_data(X, y)
    n_pos = int(np.sum(yv > 0))
    M = _check_states(n_states, n_pos)
    check_choice(method, "method", METHODS)
    sigma = _check_sigma(sigma, Xv)
    eta = _check_eta(eta, yv)
    if max_iter is not None and (isinstance(max_iter, bool)
                                 or not isinstance(max_iter, int | np.integer) or max_iter < 1):
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}")
    if step is not None:
        step = positive_scalar(step, "step")
    theta = (kmeans_init(Xv, yv, M, random_state=random_state) if theta0 is None
             else _check_theta(theta0, n_pos, M))
    c = _weights(yv, eta)
    t0 = time.perf_counter()
    comp = _Components(Xv, yv, M, sigma, c, cache_size=cache_size,
                       use_regions=use_regions and method == "pdgdp")
    if method == "pdgdp":
        out = _pdgdp(comp, theta, max_iter or 300, step, record_theta)
    elif method == "ao":
        out = _ao(comp, theta, max_iter or 50, rel_tol)
    elif method == "cccp":
        out = _cccp(comp, theta, max_iter or 50, rel_tol)
    else:
        out = _sgd(comp, theta, max_iter or 30, step, random_state)
        J_zero = _objective(Xv, yv, np.zeros((M, Xv.shape[1])), np.zeros(M), sigma, c)
        if not out["J"][-1] <= max(out["J"][0], J_zero):
            warnings.warn(
                f"SGD diverged: it ended at objective {out['J'][-1]:.6g}, above both its start "
                f"{out['J'][0]:.6g} (the exact component SVMs at theta0) and the zero model "
                f"({J_zero:.6g}); the step "
                "1 / (sigma (t + t_0)) is too long for features of this scale (largest "
                f"squared norm {float(np.max(np.sum(Xv * Xv, axis=1))):.3g}, sigma = "
                f"{sigma:g}); pass a larger t_0 as step, or rescale X", RuntimeWarning,
                stacklevel=3)
    elapsed = time.perf_counter() - t0
    W, b = out["W"], out["b"]
    theta_out = out.get("theta")
    if theta_out is None:
        theta_out = _assignment(Xv, yv, W, b)
    return LatentSVMResult(
        method=method, weights=W, intercepts=b, theta=theta_out,
        objective=_objective(Xv, yv, W, b, sigma, c),
        objective_history=np.asarray(out["J"]),
        theta_objective_history=np.asarray(out.get("Jt", [])),
        grad_norm_history=np.asarray(out.get("G", [])),
        theta_history=out.get("T"), weights_history=np.asarray(out["Wh"]),
        intercepts_history=np.asarray(out["bh"]), n_iter=int(out["n_iter"]),
        n_qp_solves=comp.n_qp + int(out.get("n_extra", 0)), n_region_hits=comp.n_hits,
        converged=bool(out["converged"]), time=elapsed, step=float(out.get("step", np.nan)))


def _pdgdp(comp: _Components, theta, N, step, record_theta):
    """Algorithm 1: projected sub-gradient descent on ``J(theta)`` with region caching."""
    Jt, grad, W, b = comp.evaluate(theta)
    n_pos = theta.shape[0]
    if step is None:
        G = float(np.linalg.norm(grad))
        step = np.sqrt(2.0 * n_pos) / (max(G, 1e-300) * np.sqrt(N))
    J = comp.objective(W, b)
    hist = {"J": [J], "Jt": [Jt], "G": [float(np.linalg.norm(grad))], "Wh": [W], "bh": [b]}
    T = [theta.copy()] if record_theta else None
    best = (J, W, b, theta.copy())
    converged, it = False, 0
    for it in range(1, N + 1):
        new = _project_simplex(theta - step * grad)
        if np.max(np.abs(new - theta)) <= 1e-13:
            converged = True  # a fixed point of the projected step: stationary
            it -= 1
            break
        theta = new
        Jt, grad, W, b = comp.evaluate(theta)
        J = comp.objective(W, b)
        hist["J"].append(J)
        hist["Jt"].append(Jt)
        hist["G"].append(float(np.linalg.norm(grad)))
        hist["Wh"].append(W)
        hist["bh"].append(b)
        if T is not None:
            T.append(theta.copy())
        if J < best[0]:
            best = (J, W, b, theta.copy())
    return {**hist, "W": best[1], "b": best[2], "theta": best[3], "n_iter": it,
            "converged": converged, "step": step,
            "T": np.asarray(T) if T is not None else None}


def _record_step(hist: dict, W, b, J_old: float, J_new: float, rel_tol: float,
                 **values) -> bool:
    """Append one iteration's model ``(W, b)`` and ``values`` to ``hist``; True when the
    objective decreased by less than ``rel_tol`` (relative), the stopping rule of AO and
    CCCP."""
    for key, v in values.items():
        hist[key].append(v)
    hist["Wh"].append(W)
    hist["bh"].append(b)
    return J_old - J_new <= rel_tol * abs(J_old)


def _ao(comp: _Components, theta, N, rel_tol):
    """Alternating optimization: SVM step, then each positive to its smallest-slack state."""
    J, grad, W, b = comp.evaluate(theta)
    hist = {"J": [comp.objective(W, b)], "Jt": [J], "Wh": [W], "bh": [b]}
    converged, it = False, 0
    rows = np.arange(theta.shape[0])
    for it in range(1, N + 1):
        slack = grad  # c_i xi_im: same argmin as xi
        cur = np.argmax(theta, axis=1)
        best = np.argmin(slack, axis=1)
        keep = slack[rows, cur] <= slack[rows, best] * (1 + 1e-12) + 1e-15
        best = np.where(keep & (theta[rows, cur] == 1.0), cur, best)
        new = np.zeros_like(theta)
        new[rows, best] = 1.0
        if np.array_equal(new, theta):
            converged, it = True, it - 1
            break
        theta = new
        J_new, grad, W, b = comp.evaluate(theta)
        done = _record_step(hist, W, b, J, J_new, rel_tol, J=comp.objective(W, b), Jt=J_new)
        J = J_new
        if done:
            converged = True
            break
    return {**hist, "W": W, "b": b, "theta": theta, "n_iter": it, "converged": converged}


def _cccp_step(X, y, c, sigma, M, mstar):
    """The convex CCCP subproblem (a QP in the primal, solved by cvxpy / CLARABEL)."""
    import cvxpy as cp

    pos = y > 0
    Xp, Xn = X[pos], X[~pos]
    p = X.shape[1]
    Wv, bv = cp.Variable((M, p)), cp.Variable(M)
    t = cp.Variable(Xp.shape[0])
    xi = cp.Variable((Xn.shape[0], M))
    ones_p, ones_n = np.ones((Xp.shape[0], 1)), np.ones((Xn.shape[0], 1))
    Fp = Xp @ Wv.T + ones_p @ cp.reshape(bv, (1, M), order="C")
    Fn = Xn @ Wv.T + ones_n @ cp.reshape(bv, (1, M), order="C")
    sel = np.zeros((Xp.shape[0], M))
    sel[np.arange(Xp.shape[0]), mstar] = 1.0
    cp_, cn = c[pos], c[~pos]
    obj = (0.5 * sigma * cp.sum_squares(Wv) + cp_ @ t - cp.sum(cp.multiply(cp_[:, None] * sel,
                                                                            Fp))
           + cp.sum(cn @ xi))
    cons = [t >= 1, t[:, None] >= Fp, xi >= 0, xi >= 1 + Fn]
    prob = cp.Problem(cp.Minimize(obj), cons)
    prob.solve(solver=cp.CLARABEL)
    if prob.status not in ("optimal", "optimal_inaccurate"):
        raise SolverError(f"the CCCP subproblem did not solve (cvxpy status {prob.status!r})")
    return np.asarray(Wv.value), np.asarray(bv.value)


def _cccp(comp: _Components, theta, N, rel_tol):
    """Concave-convex procedure (Yu and Joachims 2009) on ``J(W, b)``."""
    _, _, W, b = comp.evaluate(theta)
    X, y, c, sigma, M = comp.X, comp.y, comp.c, comp.sigma, comp.M
    J = _objective(X, y, W, b, sigma, c)
    hist = {"J": [J], "Wh": [W], "bh": [b]}
    converged, n_iter, n_sub = False, 0, 0
    for n_iter in range(1, N + 1):  # noqa: B007 (n_iter is reported)
        mstar = np.argmax(_decision(X[y > 0], W, b), axis=1)
        W_new, b_new = _cccp_step(X, y, c, sigma, M, mstar)
        n_sub += 1
        J_new = _objective(X, y, W_new, b_new, sigma, c)
        if J_new > J:  # the solver's tolerance can undo the (tiny) last decrease
            converged = True
            break
        W, b = W_new, b_new
        done = _record_step(hist, W, b, J, J_new, rel_tol, J=J_new)
        J = J_new
        if done:
            converged = True
            break
    return {**hist, "W": W, "b": b, "n_iter": n_iter, "converged": converged, "n_extra": n_sub}


def _sgd(comp: _Components, theta, n_epochs, t0, random_state):
    """Stochastic sub-gradient descent on ``J(W, b)`` (one sample per step)."""
    _, _, W, b = comp.evaluate(theta)
    X, y, c, sigma = comp.X, comp.y, comp.c, comp.sigma
    W, b = W.copy(), b.copy()
    l = X.shape[0]
    t0 = 1.0 / sigma if t0 is None else t0
    rng = np.random.default_rng(random_state)
    hist = {"J": [_objective(X, y, W, b, sigma, c)], "Wh": [W.copy()], "bh": [b.copy()]}
    t = 0
    for _ in range(n_epochs):
        for i in rng.permutation(l):
            t += 1
            lr = 1.0 / (sigma * (t + t0))
            f = W @ X[i] + b
            W *= 1.0 - lr * sigma
            wi = l * c[i]  # the sample's loss enters the expectation with weight l c_i
            if y[i] > 0:
                m = int(np.argmax(f))
                if f[m] < 1.0:
                    W[m] += lr * wi * X[i]
                    b[m] += lr * wi
            else:
                act = f > -1.0
                W[act] -= lr * wi * X[i]
                b[act] -= lr * wi
        hist["J"].append(_objective(X, y, W, b, sigma, c))
        hist["Wh"].append(W.copy())
        hist["bh"].append(b.copy())
    return {**hist, "W": W, "b": b, "n_iter": n_epochs, "converged": False}


@single_blas_thread
def hidden_state_objective(X, y, theta, *, sigma: float = 0.01, eta: float | None = None):
    r"""``J(theta)`` and its gradient ``c_i xi_im`` by exact dual solves (for checks).

    .. math::

        J(\theta) = \min_{W, b} J(\theta, W, b) = -\sum_{m=1}^{M} V\bigl(u_m(\theta)\bigr),
        \qquad \frac{\partial J}{\partial \theta_{im}} = c_i\, \xi_{im}(\theta),

    with the bounds :math:`u_{im} = c_i\theta_{im}` (positives) and :math:`c_i` (negatives)
    of the ``m``-th weighted SVM (module docstring). Every component's dual is solved by the
    QP, without critical-region caching.

    Parameters
    ----------
    X : array_like of shape (l, p)
        Training samples, one per row.
    y : array_like of shape (l,)
        Labels in ``{-1, +1}``; ``+1`` is the class with hidden states.
    theta : array_like of shape (n_pos, M)
        Hidden-state weights of the positives (in the order of ``X``), rows in the simplex;
        ``M`` is taken from the number of columns (``1 <= M <= n_pos``).
    sigma : float, default 0.01
        Regularization ``sigma_m`` (the same for every component).
    eta : float, optional
        Weight of the positives, in (0, 1); default ``|I-| / l``.

    Returns
    -------
    value : float
        ``J(theta) = min_{W, b} J(theta, W, b) = -sum_m V(u_m(theta))``.
    gradient : ndarray of shape (n_pos, M)
        ``c_i xi_im``: the class weight times the hinge slack of positive ``i`` in component
        ``m`` at that component's optimum.
    weights : ndarray of shape (M, p)
        The optimal ``w_m`` for this ``theta``.
    intercepts : ndarray of shape (M,)
        The optimal ``b_m``.

    Raises
    ------
    ValueError
        Bad ``X`` / ``y``, ``theta`` of the wrong shape or with rows outside the simplex,
        ``sigma <= 0``, ``eta`` outside (0, 1) (each naming the argument).
    """
    Xv, yv = _check_data(X, y)
    n_pos = int(np.sum(yv > 0))
    T = as_matrix(theta, "theta")
    M = _check_states(T.shape[1], n_pos)
    T = _check_theta(T, n_pos, M)
    sigma = _check_sigma(sigma, Xv)
    comp = _Components(Xv, yv, M, sigma, _weights(yv, _check_eta(eta, yv)), use_regions=False)
    return comp.evaluate(T)


def _restricted_growth(n: int, M: int):
    """Assignments of ``n`` items to at most ``M`` unlabeled states (one per set partition)."""
    a = [0] * n

    def rec(i: int, used: int):
        if i == n:
            yield tuple(a)
            return
        for m in range(min(used + 1, M)):
            a[i] = m
            yield from rec(i + 1, max(used, m + 1))

    yield from rec(0, 0)


def _count_partitions(n: int, M: int, cap: int) -> int:
    """Number of set partitions of ``n`` items into at most ``M`` blocks, capped at ``cap``.

    ``sum_{k <= M} S(n, k)`` with the Stirling recurrence ``S(i, k) = k S(i-1, k) +
    S(i-1, k-1)`` in saturating arithmetic (every term is non-negative and the count grows
    with ``n``, so the result is exact below ``cap`` and ``cap`` otherwise); it equals the
    number of assignments :func:`_restricted_growth` yields.
    """
    row = [1] + [0] * M  # S(0, k), k = 0..M
    for _ in range(n):
        row = [0] + [min(k * row[k] + row[k - 1], cap) for k in range(1, M + 1)]
        if sum(row) >= cap:
            return cap
    return min(sum(row), cap)


@single_blas_thread
def latent_global_optimum(X, y, *, n_states: int, sigma: float = 0.01,
                          eta: float | None = None, max_assignments: int = 20000):
    r"""Global minimum of the latent-SVM objective by enumerating hard assignments.

    ``J(theta)`` is concave on the product of simplices (module docstring), so its minimum is
    attained at a vertex: a hard assignment of every positive to one state. Assignments that
    differ only by a relabeling of the states give the same value, so one per set partition
    of the positives into at most ``M`` blocks is solved (``M`` SVM duals each). Meant for
    tiny instances (a check of the training methods).

    .. math::

        \min_{W, b} J(W, b) = \min_{\theta \in \{e_1, \dots, e_M\}^{n_+}} J(\theta).

    Parameters
    ----------
    X, y : array_like of shapes (l, p) and (l,)
        The training samples (rows of ``X``) and their labels in ``{-1, +1}``, ``+1`` being
        the class with hidden states.
    n_states : int
        Number of hidden states ``M``, ``1 <= M <=`` the number of positives.
    sigma : float, default 0.01
        Regularization ``sigma_m`` (the same for every component).
    eta : float, optional
        Weight of the positives, in (0, 1); default ``|I-| / l``.
    max_assignments : int >= 1, default 20000
        Give up (``ValueError``) when there are more assignments than this; the count is
        the number of partitions of the ``n_pos`` positives into at most ``M`` blocks
        (a sum of Stirling numbers of the second kind), computed before anything is solved.

    Returns
    -------
    value : float
        ``min_{W, b} J(W, b)``.
    theta : ndarray of shape (n_pos, M)
        A minimizing hard assignment.
    n_assignments : int
        How many assignments were solved.

    Raises
    ------
    ValueError
        Bad input (naming the argument; ``max_assignments`` must be an integer >= 1), or
        more than ``max_assignments`` assignments (raised at once, before any SVM is solved).
    """
    Xv, yv = _check_data(X, y)
    n_pos = int(np.sum(yv > 0))
    M = _check_states(n_states, n_pos)
    sigma = _check_sigma(sigma, Xv)
    eta = _check_eta(eta, yv)
    max_assignments = positive_int(max_assignments, "max_assignments")
    n_assign = _count_partitions(n_pos, M, cap=max_assignments + 1)
    if n_assign > max_assignments:
        raise ValueError(f"more than max_assignments={max_assignments} assignments to "
                         f"enumerate (set partitions of the {n_pos} positives into at most {M} "
                         "states); use fewer positives or states")
    comp = _Components(Xv, yv, M, sigma, _weights(yv, eta), use_regions=False)
    best, best_T, count = np.inf, None, 0
    for assign in _restricted_growth(n_pos, M):
        count += 1
        T = np.zeros((n_pos, M))
        T[np.arange(n_pos), assign] = 1.0
        J = comp.evaluate(T)[0]
        if J < best:
            best, best_T = J, T
    return float(best), best_T, count


def _binary_labels(y) -> tuple[np.ndarray, np.ndarray]:
    """``(y_pm, classes_)`` of a two-class target; more classes are refused as scikit-learn's
    binary-only classifiers do."""
    check_classification_targets(y)
    if np.unique(y).size < 2:
        raise ValueError("y must contain two classes; got only one class")
    if type_of_target(y) != "binary":
        raise ValueError(f"Only binary classification is supported; y has "
                         f"{np.unique(y).size} classes (type {type_of_target(y)!r})")
    return encode_binary_labels(y, "y")


class LatentSVMClassifier(ClassifierMixin, BaseEstimator):
    """scikit-learn estimator around :func:`train_latent_svm` (linear components).

    The larger label, ``classes_[1]``, is the class made of hidden states; labels may be of any
    type (strings, 0/1, -1/+1). ``score`` is the accuracy.

    Parameters
    ----------
    n_states : int, default 2
        Number of hidden states ``M``.
    method : {"pdgdp", "ao", "cccp", "sgd"}, default "pdgdp"
    sigma : float, default 0.01
    eta : float, optional
    max_iter : int, optional
        As in :func:`train_latent_svm`.
    random_state : int or None, default 0
        Seed of the k-means start (and of SGD's sample order).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    n_features_in_ : int
    result_ : LatentSVMResult
        The trained model and its history.
    n_iter_ : int
        Iterations run by the training method: ``result_.n_iter`` (the steps that changed the
        model), and 1 when the start was already stationary (the step that found it).
    """

    def __init__(self, n_states: int = 2, *, method: str = "pdgdp", sigma: float = 0.01,
                 eta: float | None = None, max_iter: int | None = None,
                 random_state: int | None = 0):
        self.n_states = n_states
        self.method = method
        self.sigma = sigma
        self.eta = eta
        self.max_iter = max_iter
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    def fit(self, X, y):
        """Train on ``X`` with two-class labels ``y``; returns ``self``."""
        X, y = validate_data(self, X, y, dtype=float)
        y_pm, self.classes_ = _binary_labels(y)
        self.result_ = train_latent_svm(X, y_pm, n_states=self.n_states, method=self.method,
                                        sigma=self.sigma, eta=self.eta, max_iter=self.max_iter,
                                        random_state=self.random_state)
        # the iteration that finds the start already stationary was run too (it moved nothing)
        self.n_iter_ = max(self.result_.n_iter, 1)
        return self

    def decision_function(self, X) -> np.ndarray:
        """``max_m (w_m' x + b_m)``: positive for ``classes_[1]``."""
        check_is_fitted(self, "result_")
        X = validate_data(self, X, dtype=float, reset=False)
        return self.result_.decision_function(X)

    def predict(self, X) -> np.ndarray:
        """The label of every row of ``X``."""
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int)]
