r"""The Lasso and logistic regression of self-paced learning: losses, weighted fits and the
partial-optimum certificate (eqs. 10 and 24 of Qu, Li, Zhao and Gu, NeurIPS 2022).

Models (losses as in the paper):

- ``"lasso"``: ``l_i(w) = (x_i'w - y_i)^2 / (2n)``, ``R(w) = alpha ||w||_1``, no intercept
  (eq. 10);
- ``"logistic"``: ``l_i(w, b) = C log(1 + exp(-y_i (x_i'w + b)))``, ``R = ||w||^2 / 2``,
  free intercept (eq. 24).

For fixed weights ``v`` the SPL objective (2) is the weighted problem :func:`weighted_fit`;
a *partial optimum* (Definition 4 of the paper) is a pair with ``v = v*(l(w), lambda)`` and
``w`` a minimizer of the weighted problem with those weights, certified by
:func:`partial_optimum_residual`.

Numerics
--------
The engines solve the user's problem in rescaled variables, exactly (:class:`_Scaled`):
every column of ``X`` is divided by the power of two nearest to its root mean square, and
for the Lasso ``y`` too; the penalty becomes per-feature weights, the age (and ``mixture``)
is divided by a power of two, and logistic regression's objective by the power of 4 nearest
to ``C``. Results are mapped back exactly. Every tolerance is relative: the stationarity
conditions each to the size of its own terms (:func:`partial_optimum_residual`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.exceptions import SolverError
from ..core.fit_result import FitResult
from ..core.threads import single_blas_thread
from ..core.validation import as_binary_labels, as_matrix, as_vector, check_choice, positive_scalar
from .docstrings import fill_doc
from .regularizers import PATH_REGULARIZERS, REGULARIZERS, _check_reg, _sp_slope, sp_weights
from .scaling import _pow2, _pow4, _rms_columns

__all__ = ["MODELS", "SPLSolution", "WeightedFitResult", "losses", "weighted_fit",
           "partial_optimum_residual"]


#: Models supported by :func:`age_path` and :func:`acs`.
MODELS = ("lasso", "logistic")


def _logistic_parts(m):
    """``log(1 + e^m)``, ``sigma(m)`` and ``1 - sigma(m) = sigma(-m)`` from one exponential,
    each to full relative accuracy in its tail (``0.5 (1 + tanh(m / 2))`` loses every digit
    of a small ``sigma``)."""
    e = np.exp(-np.abs(m))
    inv = 1.0 / (1.0 + e)
    pos = m >= 0
    return np.maximum(m, 0.0) + np.log1p(e), np.where(pos, inv, e * inv), np.where(
        pos, e * inv, inv)


class _Model:
    """Loss ``l_i = phi_i(u_i)`` of the linear score ``u = Z theta`` plus a regularizer.

    ``weights`` (one per feature, default 1) weight the penalty: ``sum_j alpha_j |w_j|`` with
    ``alpha_j = alpha weights_j`` for the Lasso, ``sum_j weights_j w_j^2 / 2`` for logistic
    regression. The engines solve the user's problem in power-of-two rescaled variables,
    where these weights carry the column scales (:func:`_scaled_problem`).
    """

    def __init__(self, name, X, y, *, alpha=None, C=None, weights=None):
        self.name, self.X, self.y = name, X, y
        self.n, self.d = X.shape
        omega = np.ones(self.d) if weights is None else np.asarray(weights, dtype=float)
        self.alpha_value = alpha
        if name == "lasso":
            self.Z = X
            self.alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (self.d,)) * omega
            self.pen = np.zeros(self.d)
            self.absy = np.abs(y)
            rms_x = _rms_columns(X)
            rms_y = _rms_columns(np.reshape(y, (-1, 1)))[0] if y.size else 0.0
            self.coef_unit = np.divide(rms_y, rms_x, out=np.zeros(self.d), where=rms_x > 0)
        else:
            self.Z = np.hstack([X, np.ones((self.n, 1))])
            self.C = C
            self.alpha = None
            self.pen = np.r_[omega, 0.0]  # sum_j omega_j w_j^2 / 2, intercept free
            self.absy = None
        self.absZ = np.abs(self.Z)
        self.p = self.Z.shape[1]

    def phi(self, u):
        """Loss value, first and second derivative in the score ``u``."""
        if self.name == "lasso":
            r = u - self.y
            return r ** 2 / (2 * self.n), r / self.n, np.full(self.n, 1.0 / self.n)
        m = -self.y * u
        softplus, sig, sig_c = _logistic_parts(m)
        loss = self.C * softplus
        # sigma(m) and 1 - sigma(m) = sigma(-m), each to full relative accuracy in its tail
        # (0.5 (1 + tanh(m / 2)) loses all digits of a small sigma)
        return loss, -self.C * self.y * sig, self.C * sig * sig_c

    def losses(self, theta):
        return self.phi(self.Z @ theta)[0]

    def objective(self, theta, v):
        reg = (float(self.alpha @ np.abs(theta)) if self.name == "lasso"
               else 0.5 * float(self.pen @ theta ** 2))
        return reg + float(v @ self.losses(theta))

    def gradient(self, theta, v):
        """Gradient of the smooth part ``sum v_i l_i + (ridge)``."""
        _, d1, _ = self.phi(self.Z @ theta)
        return self.Z.T @ (v * d1) + self.pen * theta

    def score_size(self, theta) -> np.ndarray:
        """Size of the terms of each sample's score: ``|Z| |theta|`` (plus ``|y|`` for the
        Lasso, whose loss is of ``r = u - y``)."""
        out = self.absZ @ np.abs(theta)
        return out + self.absy if self.name == "lasso" else out

    def conditions(self, theta, v, vl=None):
        """Stationarity conditions of the weighted problem and the size of their terms.

        Returns ``(g, scale)``: ``g = Z'(v phi') + pen theta`` (the gradient of the smooth
        part) and, per coordinate ``j``, ``scale_j = sum_i |Z_ij| (v_i |phi'_i| + W_i s_i)
        + pen_j |theta_j|`` (Lasso: ``alpha_j + sum_i |Z_ij| W_i s_i``, where the first
        term is part of the second) with ``W_i = v_i phi''_i + |dv_i/dl| phi'_i^2`` (the
        weight of sample ``i`` in the Jacobian of ``g``; ``vl`` holds ``|dv/dl|``, 0 when
        not given) and ``s_i`` the size of the score's terms (:meth:`score_size`): the
        rounding error of ``g_j`` is bounded by a small multiple of ``eps scale_j``
        (componentwise, as in Oettli and Prager's backward error).
        """
        _, d1, d2 = self.phi(self.Z @ theta)
        vd1 = v * d1
        W = v * d2 if vl is None else v * d2 + vl * d1 * d1
        g = self.Z.T @ vd1 + self.pen * theta
        if self.name == "lasso":  # (v |phi'| = v |r| / n is part of W s)
            scale = self.absZ.T @ (W * self.score_size(theta)) + self.alpha
        else:
            scale = self.absZ.T @ (np.abs(vd1) + W * self.score_size(theta)) + self.pen * (
                np.abs(theta))
        return g, scale, W

    def violations(self, theta, v, vl=None) -> np.ndarray:
        """Per-coordinate violation of ``0 in grad + dR``, each divided by its own scale."""
        g, scale, W = self.conditions(theta, v, vl)
        if self.name == "lasso":
            a = self.alpha
            r_zero = np.maximum(0.0, np.abs(g) - a)
            r_nz = np.abs(g + a * np.sign(theta))
            r = np.where(theta == 0, r_zero, r_nz)
            # a coefficient at rounding level (the left end of a piece where it reaches 0)
            # may meet the zero condition instead: below 1e-12 of its own unit, the
            # coefficient ||y|| / ||X_j|| that explains y with feature j alone
            tiny = (theta != 0) & (np.abs(theta) <= 1e-12 * self.coef_unit)
            r[tiny] = np.minimum(r_zero[tiny], r_nz[tiny])
        else:
            r = np.abs(g)
        return np.divide(r, scale, out=np.zeros_like(r), where=scale > 0)

    def stationarity(self, theta, v, vl=None) -> float:
        """Largest violation of ``0 in grad + dR``, each coordinate relative to its own
        scale (:meth:`conditions`); ``vl = |dv/dl|`` adds the weights' rounding."""
        r = self.violations(theta, v, vl)
        return float(np.max(r)) if r.size else 0.0

    #: the name :func:`~pathlib_core.gaga.alternating.alternate` calls it by
    kkt = stationarity

    def certificate(self, theta, age, regularizer, mixture) -> float:
        """The partial-optimum residual at ``age``: :meth:`stationarity` with
        ``v = v*(l(theta), age)`` and its slope (a loss within 1e-8 of a threshold of
        ``v*`` is on either side of it)."""
        loss = self.losses(theta)
        v = sp_weights(loss, age, regularizer=regularizer, mixture=mixture)
        # (a loss within 1e-8 of a threshold of v* is on either side: its slope counts)
        return self.stationarity(theta, v, _sp_slope(loss, age, regularizer, mixture, 1e-8))

    def weighted_fit(self, v, theta0=None, *, tol=1e-13, max_iter=200):
        """Minimize the weighted problem ``R(theta) + sum v_i l_i(theta)`` to tight accuracy."""
        if self.name == "lasso":
            return _weighted_lasso(self.X, self.y, v, self.alpha, theta0, tol=tol)
        return _weighted_logistic(self, v, theta0, tol=tol, max_iter=max_iter)


def _weighted_lasso(X, y, v, alpha, w0=None, *, tol=1e-13, max_iter=10_000):
    """Weighted Lasso ``sum v_i (x_i'w - y_i)^2 / (2n) + sum_j alpha_j |w_j|`` by exact active
    set.

    Coordinate descent to locate the active set, then the exact solution on it (sign-
    consistent), verified by the optimality conditions; repeated if a check fails.
    """
    n, d = X.shape
    alpha = np.broadcast_to(np.asarray(alpha, dtype=float), (d,))
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=float)
    G = (X.T * v) @ X / n
    c = X.T @ (v * y) / n
    diag = np.diag(G).copy()
    for _ in range(max_iter):
        w_old = w.copy()
        for j in range(d):
            if diag[j] <= 0:
                w[j] = 0.0
                continue
            rho = c[j] - G[j] @ w + diag[j] * w[j]
            w[j] = np.sign(rho) * max(abs(rho) - alpha[j], 0.0) / diag[j]
        # exact polish on the current active set
        A = np.flatnonzero(w)
        if A.size:
            s = np.sign(w[A])
            try:
                wA = np.linalg.solve(G[np.ix_(A, A)], c[A] - alpha[A] * s)
            except np.linalg.LinAlgError:
                wA = None
            if wA is not None and np.all(np.sign(wA) == s):
                cand = np.zeros(d)
                cand[A] = wA
                grad = G @ cand - c
                inact = np.setdiff1d(np.arange(d), A)
                if np.all(np.abs(grad[inact]) <= alpha[inact] * (1 + 1e-12)):
                    return cand
        elif np.all(np.abs(c) <= alpha):
            return np.zeros(d)
        if np.max(np.abs(w - w_old)) <= tol * max(1.0, np.max(np.abs(w))):
            return w
    return w


def _weighted_logistic(model, v, theta0=None, *, tol=1e-13, max_iter=200):
    """Damped Newton on ``C sum v_i log(1 + exp(-y_i u_i)) + sum_j pen_j w_j^2 / 2``,
    stopped when every coordinate of the gradient is below ``tol`` of its own terms."""
    theta = np.zeros(model.p) if theta0 is None else np.array(theta0, dtype=float)
    if not np.any(v > 0):
        theta[:-1] = 0.0
        return theta
    if np.unique(model.y[v > 0]).size < 2:
        raise SolverError("the weighted logistic problem has no minimizer: every sample "
                           "with v > 0 has the same label (the intercept runs to infinity)")
    f = model.objective(theta, v)
    Z, absZ, pen = model.Z, model.absZ, model.pen
    for _ in range(max_iter):
        u = Z @ theta
        _, d1, d2 = model.phi(u)
        vd1, W = v * d1, v * d2
        g = Z.T @ vd1 + pen * theta
        # every coordinate against the size of its terms (as _Model.conditions)
        scale = absZ.T @ (np.abs(vd1) + W * (absZ @ np.abs(theta))) + pen * np.abs(theta)
        if np.all(np.abs(g) <= tol * scale):
            break
        H = (Z.T * W) @ Z
        H[np.diag_indices_from(H)] += pen
        H[-1, -1] += 1e-14 * H[-1, -1]
        # the Newton step on the symmetrically (Jacobi) scaled Hessian, which is positive
        # definite (ridge on w, sum v d2 > 0 on b): nearly separable weighted data make it
        # ill-conditioned along the separating direction, where a truncated least-squares
        # step would stall (least squares only if the solve fails)
        dsc = np.sqrt(np.maximum(np.diag(H), np.finfo(float).tiny))
        Hs = H / dsc[:, None] / dsc[None, :]
        try:
            step = np.linalg.solve(Hs, g / dsc) / dsc
        except np.linalg.LinAlgError:
            step = np.linalg.lstsq(Hs, g / dsc, rcond=None)[0] / dsc
        t = 1.0
        while True:
            cand = theta - t * step
            fc = model.objective(cand, v)
            # (near the optimum the decrease is at rounding level: accept the full step)
            if fc <= f - 1e-4 * t * (g @ step) or fc <= f + 1e-14 * abs(f) or t < 1e-10:
                break
            t *= 0.5
        theta, f = cand, fc
        if np.all(np.abs(t * step) <= 1e-15 * np.abs(theta)):
            break
    return theta


@dataclass
class SPLSolution:
    """A point of the age-path.

    Attributes
    ----------
    coef : ndarray (d,)
    intercept : float
    weights : ndarray (n,)
        ``v`` from the branch formula of the current partition (it equals ``v*(l(w), age)``
        exactly when the partition is consistent; the tests check that).
    """

    coef: np.ndarray
    intercept: float
    weights: np.ndarray


@dataclass(repr=False)
class WeightedFitResult(FitResult):
    r"""The minimizer of the weighted problem at fixed sample weights (the ``w``-step of ACS).

    Returned by :func:`weighted_fit` and :func:`~pathlib_core.gaga.svm_dual.svm_weighted_fit`;
    both either reach their optimality test or raise, so ``status`` is ``"optimal"``.

    Attributes
    ----------
    coef : ndarray of shape (d,) or None
        The weights :math:`w` (None for the SVM with a non-linear kernel).
    intercept : float
        The bias :math:`b` (always ``0.0`` for the Lasso).
    objective : float
        :math:`R(w) + \sum_i v_i \ell_i(w)` at the minimizer (for the SVM its primal
        :math:`\tfrac12\|w\|^2 + C \sum_i v_i \max(0, 1 - y_i f(x_i))`).
    dual_coef : ndarray of shape (n,) or None
        SVM only: the dual variables :math:`0 \le \alpha_i \le C v_i`, the decision
        function being ``K(x, X) @ (dual_coef * y) + intercept``.
    status : str
        ``"optimal"``.
    """

    coef: np.ndarray | None
    intercept: float
    objective: float
    dual_coef: np.ndarray | None = None
    status: str = "optimal"

    @property
    def n_iter(self) -> int:
        """Not counted for this step (0)."""
        return 0


def _validate(X, y, model, regularizer, alpha, C, mixture, path=False):
    check_choice(model, "model", MODELS + ("svm",))
    if model == "svm":
        raise NotImplementedError("model='svm': use age_path(model='svm') or the SVM functions "
                                  "(svm_acs, svm_weighted_fit, svm_partial_optimum_residual)")
    check_choice(regularizer, "regularizer", PATH_REGULARIZERS if path else REGULARIZERS)
    X = as_matrix(X, "X")
    if model == "logistic":
        y = as_binary_labels(y, "y", length=X.shape[0], length_of="X")
        C = positive_scalar(1.0 if C is None else C, "C")
    else:
        y = as_vector(y, "y", length=X.shape[0], length_of="X")
        if alpha is None:
            raise ValueError("alpha must be given (> 0) for model='lasso'")
        alpha = positive_scalar(alpha, "alpha")
    mixture = _check_reg(regularizer, mixture)
    return X, y, _Model(model, X, y, alpha=alpha, C=C), mixture


def _split(model, theta):
    if model.name == "lasso":
        return theta.copy(), 0.0
    return theta[:-1].copy(), float(theta[-1])


@dataclass
class _Scaled:
    """The user's problem in power-of-two rescaled variables (exact in floating point).

    Every column of ``X`` is divided by the power of two nearest to its root mean square,
    ``d_j``; for the Lasso ``y`` is divided by ``s_y`` likewise. With ``w_j = c_j u_j``
    (``c_j = s_y / d_j`` for the Lasso, ``1 / d_j`` for logistic regression) the objective
    (2) becomes the same objective in ``u`` with per-feature penalty weights (Lasso:
    ``alpha_j = alpha / (s_y d_j)``; logistic: the ridge ``sum_j u_j^2 / (2 d_j^2)``) and,
    for the Lasso, losses divided by ``s_y^2``; logistic regression's objective is divided
    by ``kappa``, the power of 4 nearest to ``C`` (the loss weight ``C / kappa``, the ridge
    weights ``1 / (kappa d_j^2)``). The age (and the mixture's ``mixture``) is divided by
    ``age_factor``: ``s_y^2`` (``kappa``) for the linear and hard regularizers, ``s_y``
    (``sqrt(kappa)``) for the mixture, whose thresholds are on the scale of ``sqrt(l)``;
    LOG's ``zeta = 1 - age`` does not scale, so there only the columns are. It is the
    user's problem, not an approximation; results are mapped back exactly.
    """

    user: _Model
    model: _Model
    coef_factor: np.ndarray
    age_factor: float
    mixture: float | None

    def to_user(self, theta):
        out = np.array(theta, dtype=float, copy=True)
        out[:self.user.d] *= self.coef_factor
        return out

    def from_user(self, theta):
        out = np.array(theta, dtype=float, copy=True)
        out[:self.user.d] /= self.coef_factor
        return out


def _scaled_problem(m: _Model, regularizer: str, mixture) -> _Scaled:
    """The rescaled problem of :class:`_Scaled` for the user's model ``m``."""
    d = _pow2(_rms_columns(m.X))
    Z = m.X / d
    if m.name == "lasso":
        sy = 1.0
        if regularizer != "log" and np.any(m.y != 0):
            big = float(np.max(np.abs(m.y)))
            sy = float(_pow2(big * math.sqrt(float(np.mean((m.y / big) ** 2)))))
        model = _Model("lasso", Z, m.y / sy, alpha=m.alpha_value / sy, weights=1.0 / d)
        model.unit_columns = True
        factor = {"log": 1.0, "mixture": sy}.get(regularizer, sy * sy)
        return _Scaled(m, model, sy / d, factor, None if mixture is None else mixture / factor)
    # the objective divided by kappa, the power of 4 nearest to C: C / kappa in [0.5, 2),
    # the ridge weights 1 / (kappa d_j^2), the age / kappa (mixture: / sqrt(kappa), gamma
    # too); (s X, C / s^2) then has the same internal problem for every power of two s
    kappa = 1.0 if regularizer == "log" else _pow4(m.C)
    root = math.sqrt(kappa)
    factor = root if regularizer == "mixture" else kappa
    model = _Model("logistic", Z, m.y, C=m.C / kappa, weights=1.0 / (kappa * d * d))
    return _Scaled(m, model, 1.0 / d, factor, None if mixture is None else mixture / root)


@fill_doc
def losses(X, y, coef, intercept=0.0, *, model: str, alpha=None, C=None) -> np.ndarray:
    r"""The per-sample losses ``l_i`` of the paper (eq. 10 / eq. 24) at ``(coef, intercept)``.

    .. math::

        \ell_i^{\mathrm{lasso}}(w) = \frac{(x_i^\top w - y_i)^2}{2n}, \qquad
        \ell_i^{\mathrm{logistic}}(w, b) = C \log\bigl(1 + e^{-y_i (x_i^\top w + b)}\bigr).

    Parameters
    ----------
    {linear_data}
    coef : array_like of shape (d,)
        Weights :math:`w`.
    intercept : float, default 0.0
        Bias :math:`b` of the logistic model; ignored for the Lasso (no intercept).
    model : {"lasso", "logistic"}
        Which loss (keyword-only, no default).
    alpha : float > 0, optional
        Lasso penalty; it does not enter the losses (with ``model="lasso"`` it is checked to
        be positive when given, and ignored otherwise).
    C : float > 0, optional
        Logistic loss weight (default 1; ignored by the Lasso).

    Returns
    -------
    ndarray of shape (n,)
        The losses :math:`\ell_i \ge 0`.

    Raises
    ------
    ValueError
        Bad input, naming the argument (shapes, non-finite values, labels, ``C`` or ``alpha``
        not positive, a non-finite ``intercept``).
    NotImplementedError
        ``model="svm"``.
    """
    X, y, m, _ = _validate(X, y, model, "linear", alpha if alpha is not None else 1.0, C, None)
    return m.losses(_theta(m, coef, intercept))


@fill_doc
@single_blas_thread
def weighted_fit(X, y, v, *, model: str, alpha=None, C=None):
    r"""Solve the weighted problem ``argmin_w R(w) + sum v_i l_i(w)``.

    .. math::

        \min_{w} \; R(w) + \sum_{i=1}^{n} v_i\, \ell_i(w),

    the ``w``-step of alternate convex search for fixed weights ``v`` (Lasso: exact active
    set after coordinate descent; logistic regression: damped Newton, to about 1e-13).

    Parameters
    ----------
    {linear_data}
    v : array_like of shape (n,)
        Sample weights in :math:`[0, 1]`.
    model : {"lasso", "logistic"}
        Lasso, ``R = alpha ||w||_1`` and eq. (10) losses, or logistic regression,
        ``R = ||w||^2 / 2`` with a free intercept and eq. (24) losses.
    {penalties}

    Returns
    -------
    WeightedFitResult
        ``coef`` (the minimizer :math:`w`), ``intercept`` (the logistic :math:`b`, 0 if every
        ``v_i`` is 0; always ``0.0`` for the Lasso) and ``objective``.

    Raises
    ------
    ValueError
        Weights outside :math:`[0, 1]` or other bad input, naming the argument.
    NotImplementedError
        ``model="svm"`` (use :func:`~pathlib_core.gaga.svm_dual.svm_weighted_fit`).
    SolverError
        (a ``RuntimeError``) Logistic model: every sample with ``v_i > 0`` has the same
        label (the intercept runs to infinity, no minimizer).
    """
    X, y, m, _ = _validate(X, y, model, "linear", alpha, C, None)
    v = as_vector(v, "v", length=X.shape[0], length_of="X")
    if np.any(v < 0) or np.any(v > 1):
        raise ValueError("v must hold sample weights in [0, 1]")
    sc = _scaled_problem(m, "linear", None)
    theta = sc.to_user(sc.model.weighted_fit(v))
    coef, b = _split(m, theta)
    return WeightedFitResult(coef=coef, intercept=float(b), objective=m.objective(theta, v))


def _theta(m, coef, intercept) -> np.ndarray:
    """The model's parameter vector from user-given ``coef`` (and ``intercept``), checked."""
    w = as_vector(coef, "coef", length=m.d, length_of="X'")
    if m.name == "lasso":
        return w
    b = float(np.asarray(intercept, dtype=float))
    if not np.isfinite(b):
        raise ValueError(f"intercept must be finite; got {b}")
    return np.r_[w, b]


@fill_doc
def partial_optimum_residual(X, y, coef, intercept, age, *, model, regularizer, alpha=None,
                             C=None, mixture=None) -> float:
    r"""Stationarity residual of ``w`` for the weighted problem with ``v = v*(l(w), age)``.

    Zero (to rounding) exactly at a partial optimum; each condition against its own terms.

    With :math:`v = v^*(\ell(w), \lambda)` (:func:`sp_weights`) the residual is the largest
    violation of :math:`0 \in \nabla_w \sum_i v_i \ell_i(w) + \partial R(w)` (the
    stationarity condition (5) with the subdifferential of the Lasso penalty), coordinate by
    coordinate, each divided by the size of the terms it is computed from (componentwise, as
    in Oettli and Prager's backward error):

    .. math::

        r = \max_j \frac{|g_j + \partial_j R|}{s_j}, \qquad
        s_j = \sum_i |Z_{ij}| \bigl(v_i |\phi_i'| + W_i\, \sigma_i\bigr) + \rho_j |w_j|
              \;(+\,\alpha),

    with ``g = Z'(v phi')`` (``Z`` the design, a column of ones added for the logistic
    intercept; ``phi'``, ``phi''`` the loss derivatives in the score), ``W_i = v_i phi''_i +
    |dv_i/dl| phi'_i^2`` (the weight of sample ``i`` in the Jacobian of ``g``, weights
    included), ``sigma_i = (|Z| |w|)_i`` (plus ``|y_i|`` for the Lasso, whose loss is of
    ``x_i'w - y_i``) and ``rho`` the ridge weights (1; 0 for the intercept). For the Lasso a
    zero coefficient must satisfy ``|g_j| <= alpha``; a coefficient below ``1e-12`` of
    ``||y|| / ||X_j||`` may satisfy either condition (the end of a piece where it reaches 0).
    A loss within ``1e-8`` of a threshold of ``v*`` counts the slope of either side. Each
    ratio is at most about 1 and is of the order of the machine precision at a computed
    partial optimum whatever the scales of the columns, of ``y`` and of ``alpha``; a point
    moved by ``d`` (relative) in the direction that adds up in a condition moves it by ``d``
    times the share of those terms in ``s_j``.

    Parameters
    ----------
    {linear_data}
    coef : array_like of shape (d,)
        Weights :math:`w` to check.
    intercept : float
        Bias of the logistic model; ignored for the Lasso.
    age : float > 0
        The age :math:`\lambda`.
    model : {"lasso", "logistic"}
        Loss and regularizer (eq. (10) or eq. (24)).
    regularizer : {"hard", "linear", "mixture", "log"}
        SP-regularizer defining :math:`v^*`.
    {penalties}
    {mixture}

    Returns
    -------
    float
        The relative stationarity residual (``>= 0``).

    Raises
    ------
    ValueError
        Bad input, naming the argument.
    NotImplementedError
        ``model="svm"`` (use :func:`~pathlib_core.gaga.svm_dual.svm_partial_optimum_residual`).
    """
    X, y, m, mixture = _validate(X, y, model, regularizer, alpha, C, mixture)
    theta = _theta(m, coef, intercept)
    age = positive_scalar(age, "age")
    _check_reg(regularizer, mixture, age)
    return m.certificate(theta, age, regularizer, mixture)


class _CoefToUser:
    """A record of the internal path in the user's units (coefficients times their factor)."""

    def __init__(self, coef_factor):
        self.coef_factor = coef_factor

    def __call__(self, rec: SPLSolution) -> SPLSolution:
        return SPLSolution(rec.coef * self.coef_factor, rec.intercept, rec.weights)


class _Certificate:
    """The partial-optimum residual of a record at an age, in the user's units."""

    def __init__(self, m: _Model, regularizer, mixture):
        self.m, self.regularizer, self.mixture = m, regularizer, mixture

    def __call__(self, t, rec) -> float:
        return self.m.certificate(_theta(self.m, rec.coef, rec.intercept), t, self.regularizer,
                                  self.mixture)
