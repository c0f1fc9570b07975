r"""Self-paced learning (SPL) and its exact age-path (GAGA; Qu, Li, Zhao and Gu, NeurIPS 2022).

Self-paced learning trains a model ``w`` together with sample weights ``v in [0, 1]^n``,

.. math::

    \min_{w,\; v \in [0,1]^n} \; \mathcal{L}(w, v) = R(w) + \sum_{i=1}^n
    \bigl[ v_i \, \ell_i(w) + f(v_i, \lambda) \bigr]                                  \qquad (2)

where ``f`` is a *self-paced regularizer* and ``lambda > 0`` is the *age*. For fixed ``w`` the
problem in ``v`` separates and has a closed-form minimizer ``v*(l, lambda)``
(:func:`sp_weights`); for fixed ``v`` it is a weighted convex learning problem. A *partial
optimum* (Definition 4 of the paper) is a pair with ``v = v*(l(w), lambda)`` and ``w`` a
minimizer of the weighted problem with those weights; alternate convex search (ACS, Algorithm
1, :func:`acs`) converges to one (Theorem 2).

The age-path (:func:`age_path`) follows the partial optimum as ``lambda`` grows. While the
*partition* of samples (by which branch of ``v*`` applies) and, for the Lasso, the active set
and signs stay fixed, the stationarity condition

.. math::

    F(w, \lambda) = \nabla R(w) + \sum_i v^*(\ell_i(w), \lambda) \nabla \ell_i(w) = 0   \qquad (5)

is smooth, and the implicit function theorem gives the ODE (6)

.. math::

    \frac{dw}{d\lambda} = -J^{-1} \sum_i \partial_\lambda v^*_i \, \nabla \ell_i, \qquad
    J = \nabla^2 R + \sum_i \bigl[ v^*_i \nabla^2 \ell_i
        + \partial_\ell v^*_i \, \nabla \ell_i \nabla \ell_i^\top \bigr],

which specializes to Proposition 2 (eqs. 11-12, the Lasso) and Theorem 5 (eq. 25, logistic
regression). It is integrated with :func:`pathlib_core.core.ode_path.follow_path`; a *critical
point* is where a sample changes set, a Lasso coefficient hits zero or a zero coefficient's
correlation reaches ``alpha``, or ``J`` becomes singular (a fold). At a critical point all
violators are reassigned at once (ties included); if the reassigned system continues
consistently the point is a *turning point* (the path is continuous), otherwise it is a *jump
point* and the path restarts from a warm ACS solve (Algorithms 2 and 4).

Models (losses as in the paper):

- ``"lasso"``: ``l_i(w) = (x_i'w - y_i)^2 / (2n)``, ``R(w) = alpha ||w||_1``, no intercept
  (eq. 10);
- ``"logistic"``: ``l_i(w, b) = C log(1 + exp(-y_i (x_i'w + b)))``, ``R = ||w||^2 / 2``,
  free intercept (eq. 24).

The SVM of eq. (7) (hinge loss, linear or RBF kernel; Proposition 1) lives in
:mod:`pathlib_core.gaga.spl_svm`; ``age_path(model="svm")`` dispatches to it.

Numerics
--------
The engines solve the user's problem in rescaled variables, exactly (:class:`_Scaled`):
every column of ``X`` is divided by the power of two nearest to its root mean square, and
for the Lasso ``y`` too; the penalty becomes per-feature weights, the age (and ``gamma``) is
divided by a power of two, and logistic regression's objective by the power of 4 nearest to
``C``. Results are mapped back exactly, so data that differ by powers of two give paths that
are the same bit for bit in the user's units, and columns of scales 1e-8 and 1e8 side by side
are traced as well as standardized ones. Every tolerance is relative: the age windows to the
age, the stationarity conditions each to the size of its own terms
(:func:`partial_optimum_residual`, the certificate reported by ``SolutionPath.kkt_residuals``, in
the user's units), the folds to the eigenvalues of ``J`` balanced by its diagonal. Where
ACS runs away from a repelling partial optimum at ``age_min`` (an intercept-only model),
Newton steps on (5) from the unweighted fit find it.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg.lapack import dgesv as _gesv

from ..core.ode_path import Update, follow_path
from ..core.solution_path import Event, FunctionSegment, SolutionPath
from ..core.threads import single_blas_thread
from ..core.validation import as_matrix, as_vector, check_choice, positive_int, positive_scalar

__all__ = [
    "REGULARIZERS", "MODELS", "sp_weights", "sp_regularizer", "sp_weights_derivatives",
    "SPLSolution", "ACSResult", "acs", "acs_path", "age_path", "partial_optimum_residual",
    "weighted_fit", "losses", "SelfPacedLasso", "SelfPacedLogisticRegression",
    "DegenerateStartError", "candidate_ages",
]

class DegenerateStartError(ValueError):
    """The path cannot start at ``age_min``: no partial optimum exists there, or the one found
    is degenerate (the kernel SVM: samples of one class only keep a positive weight, or
    ``w = 0``). A larger ``age_min`` (more samples admitted) may work; callers that scan for a
    usable start catch this type instead of matching the message."""


#: Self-paced regularizers with a closed-form minimizer (:func:`sp_weights`).
REGULARIZERS = ("hard", "linear", "mixture", "log")
#: Models supported by :func:`age_path` and :func:`acs`.
MODELS = ("lasso", "logistic")
#: Regularizers supported by :func:`age_path` (``v*`` continuous in the loss).
PATH_REGULARIZERS = ("linear", "mixture")

#: window (relative to max(1, age)) and height of the lift of just-reassigned event
#: conditions at a turning point (see _GAGA.events)
_LIFT_WIDTH, _LIFT_HEIGHT = 1e-8, 1e-9
_E, _M, _D = 0, 1, 2  # sample partition: easy (v = 1 or 1 - l/lam), mixed, difficult (v = 0)


# -- SP-regularizers ---------------------------------------------------------------------------

def _check_reg(regularizer, gamma, age=None):
    check_choice(regularizer, "regularizer", REGULARIZERS)
    if regularizer == "mixture":
        if gamma is None:
            raise ValueError("gamma must be given (> 0) with the mixture regularizer")
        gamma = positive_scalar(gamma, "gamma")
    if regularizer == "log" and age is not None and np.any(np.asarray(age) >= 1):
        raise ValueError("age must be in (0, 1) with the LOG regularizer (zeta = 1 - age)")
    return gamma


def sp_regularizer(v, age, *, regularizer: str, gamma: float | None = None) -> np.ndarray:
    r"""The SP-regularizer ``f(v, lambda)`` (Section 2.2 of the paper).

    - hard: ``f = -lambda v``;
    - linear: ``f = lambda (v^2 / 2 - v)``;
    - mixture: ``f = gamma^2 / (v + gamma / lambda)``;
    - LOG (Jiang et al. 2014): ``f = zeta v - zeta^v / log(zeta)`` with ``zeta = 1 - lambda``,
      ``0 < lambda < 1`` (the paper writes it in a KL form; the minimizer is the same family).

    In formulas, with :math:`\lambda` the age and :math:`\zeta = 1 - \lambda`,

    .. math::

        f_{\mathrm{hard}}(v, \lambda) = -\lambda v, \qquad
        f_{\mathrm{lin}}(v, \lambda) = \lambda\bigl(\tfrac12 v^2 - v\bigr), \qquad
        f_{\mathrm{mix}}(v, \lambda) = \frac{\gamma^2}{v + \gamma / \lambda}, \qquad
        f_{\mathrm{LOG}}(v, \lambda) = \zeta v - \frac{\zeta^v}{\log \zeta};

    these are the terms :math:`f(v_i, \lambda)` of the SPL objective (2).

    Parameters
    ----------
    v : array_like of float
        Sample weights, any shape (a scalar is accepted). Not checked to lie in
        :math:`[0, 1]`; the formula is evaluated as written.
    age : float > 0
        The age :math:`\lambda`; ``0 < age < 1`` for ``regularizer="log"``.
    regularizer : {"hard", "linear", "mixture", "log"}
        Which SP-regularizer (keyword-only, no default).
    gamma : float > 0, optional
        Parameter :math:`\gamma` of the mixture regularizer (required for it, ignored by the
        others).

    Returns
    -------
    ndarray of float
        :math:`f(v, \lambda)` with the shape of ``v`` (a NumPy scalar for scalar ``v``).

    Raises
    ------
    ValueError
        ``age <= 0`` or not finite, an unknown ``regularizer``, ``gamma`` missing or
        ``<= 0`` with the mixture regularizer, ``age >= 1`` with the LOG regularizer.
    """
    age = positive_scalar(age, "age")
    gamma = _check_reg(regularizer, gamma, age)
    v = np.asarray(v, dtype=float)
    if regularizer == "hard":
        return -age * v
    if regularizer == "linear":
        return age * (0.5 * v ** 2 - v)
    if regularizer == "mixture":
        return gamma ** 2 / (v + gamma / age)
    zeta = 1.0 - age
    return zeta * v - zeta ** v / math.log(zeta)


def sp_weights(loss, age, *, regularizer: str, gamma: float | None = None) -> np.ndarray:
    r"""Closed-form ``v*(l, lambda) = argmin_{v in [0, 1]} v l + f(v, lambda)``.

    - hard: ``v = 1`` if ``l < lambda`` else ``0``;
    - linear: ``v = max(0, 1 - l / lambda)``;
    - mixture: ``v = 1`` if ``sqrt(l) <= lambda gamma / (lambda + gamma)``, ``0`` if
      ``sqrt(l) >= lambda``, else ``gamma / sqrt(l) - gamma / lambda``;
    - LOG: ``v = log(l + zeta) / log(zeta)`` if ``l < lambda`` else ``0``.

    This is the closed-form ``v``-step of alternate convex search: for fixed ``w`` the SPL
    objective (2) separates over the samples, and each weight solves

    .. math::

        v^*(\ell_i, \lambda) = \operatorname*{arg\,min}_{v \in [0, 1]} \; v\,\ell_i
            + f(v, \lambda)

    with :math:`f` of :func:`sp_regularizer`.

    Parameters
    ----------
    loss : array_like of float
        Per-sample losses :math:`\ell_i \ge 0`, any shape (a scalar is accepted).
    age : float > 0
        The age :math:`\lambda`; ``0 < age < 1`` for ``regularizer="log"``.
    regularizer : {"hard", "linear", "mixture", "log"}
        Which SP-regularizer (keyword-only, no default).
    gamma : float > 0, optional
        Parameter :math:`\gamma` of the mixture regularizer (required for it, ignored by the
        others).

    Returns
    -------
    ndarray of float
        The weights :math:`v^* \in [0, 1]`, with the shape of ``loss``.

    Raises
    ------
    ValueError
        A negative or non-finite loss, ``age <= 0`` or not finite, an unknown
        ``regularizer``, ``gamma`` missing or ``<= 0`` with the mixture regularizer,
        ``age >= 1`` with the LOG regularizer.
    """
    age = positive_scalar(age, "age")
    gamma = _check_reg(regularizer, gamma, age)
    loss = np.asarray(loss, dtype=float)
    if np.any(loss < 0) or not np.all(np.isfinite(loss)):
        raise ValueError("loss must be finite and >= 0")
    if regularizer == "hard":
        return (loss < age).astype(float)
    if regularizer == "linear":
        return np.maximum(0.0, 1.0 - loss / age)
    if regularizer == "mixture":
        s = np.sqrt(loss)
        with np.errstate(divide="ignore"):
            v = np.where(s > 0, gamma / np.where(s > 0, s, 1.0) - gamma / age, 1.0)
        return np.clip(v, 0.0, 1.0)
    zeta = 1.0 - age
    with np.errstate(invalid="ignore"):
        v = np.where(loss < age, np.log(np.minimum(loss, age) + zeta) / math.log(zeta), 0.0)
    return np.clip(v, 0.0, 1.0)


def _partition(loss, age, regularizer, gamma) -> np.ndarray:
    """Set of each sample (E, M, D) by the partition rule (Figure 3)."""
    part = np.full(loss.shape, _E, dtype=np.int8)
    if regularizer == "linear":
        part[loss >= age] = _D
    else:
        s = np.sqrt(loss)
        lo = age * gamma / (age + gamma)
        part[s > lo] = _M
        part[s >= age] = _D
    return part


def sp_weights_derivatives(loss, age, part, *, regularizer: str, gamma=None):
    """``v``, ``dv/dl`` and ``dv/dlambda`` on the branch of ``v*`` given by ``part``.

    ``part`` holds 0 (E: ``v = 1``, or ``1 - l/lambda`` for the linear regularizer), 1 (M, the
    interior branch of the mixture regularizer) or 2 (D: ``v = 0``) for each sample.
    Only the ``"linear"`` and ``"mixture"`` regularizers have such branches.
    """
    check_choice(regularizer, "regularizer", ("linear", "mixture"))
    gamma = _check_reg(regularizer, gamma)
    loss = as_vector(loss, "loss")
    age = positive_scalar(age, "age")
    part = np.asarray(part)
    if part.shape != loss.shape or not np.isin(part, (_E, _M, _D)).all():
        raise ValueError(f"part must hold 0, 1 or 2 for each of the {loss.size} losses")
    return _sp_weights_derivatives(loss, age, part, regularizer, gamma)


def _sp_weights_derivatives(loss, age, part, regularizer, gamma):
    """:func:`sp_weights_derivatives` for trusted inputs (the ODE's right-hand side)."""
    v = np.zeros_like(loss)
    dl = np.zeros_like(loss)
    dlam = np.zeros_like(loss)
    e = part == _E
    if regularizer == "linear":
        v[e] = 1.0 - loss[e] / age
        dl[e] = -1.0 / age
        dlam[e] = loss[e] / age ** 2
    else:
        m = part == _M
        v[e] = 1.0
        s = np.maximum(np.sqrt(loss[m]), 1e-100)  # M has sqrt(l) > 0; guard Newton trials
        v[m] = gamma / s - gamma / age
        dl[m] = -0.5 * gamma / s ** 3
        dlam[m] = gamma / age ** 2
    return v, dl, dlam


def _sp_slope(loss, age, regularizer, gamma, widen: float = 0.0) -> np.ndarray:
    """``|d v*(l, lambda) / d l|`` at the losses (0 where ``v*`` is flat or a step); with
    ``widen``, the sloped branch extends that far (relative) past its thresholds (a loss
    within rounding of a threshold is on either side)."""
    out = np.zeros_like(loss)
    hi = age * (1.0 + widen)
    if regularizer == "linear":
        out[loss < hi] = 1.0 / age
    elif regularizer == "mixture":
        s = np.sqrt(loss)
        m = (s > age * gamma / (age + gamma) * (1.0 - widen)) & (s < hi)
        out[m] = 0.5 * gamma / (loss[m] * s[m])
    elif regularizer == "log":
        zeta = 1.0 - age
        m = loss < age
        out[m] = 1.0 / ((loss[m] + zeta) * abs(math.log(zeta)))
    return out


def _logistic_parts(m):
    """``log(1 + e^m)``, ``sigma(m)`` and ``1 - sigma(m) = sigma(-m)`` from one exponential,
    each to full relative accuracy in its tail (``0.5 (1 + tanh(m / 2))`` loses every digit
    of a small ``sigma``)."""
    e = np.exp(-np.abs(m))
    inv = 1.0 / (1.0 + e)
    pos = m >= 0
    return np.maximum(m, 0.0) + np.log1p(e), np.where(pos, inv, e * inv), np.where(
        pos, e * inv, inv)


def _pow2(x) -> np.ndarray:
    """The power of two nearest (in ratio) to each positive entry of ``x``; 1 for zeros.

    Exact: ``x * 2**k`` gives ``2**k`` times the result (the mantissa decides), so data that
    differ by a power of two are scaled to bit-identical internal problems.
    """
    m, e = np.frexp(np.asarray(x, dtype=float))
    e = np.where(m * m < 0.5, e - 1, e)
    return np.where(np.asarray(x) > 0, np.ldexp(1.0, e), 1.0)


def _pow4(x: float) -> float:
    """The power of 4 nearest (in ratio) to ``x > 0`` (1 for 0); exact under ``x 4**k``."""
    if not x > 0:
        return 1.0
    e = math.frexp(x)[1] - 1  # 2**e <= x < 2**(e + 1)
    lo = e - (e % 2)  # 4**(lo / 2) <= x < 4**(lo / 2 + 1)
    return math.ldexp(1.0, lo) if x * x < math.ldexp(1.0, 2 * lo + 2) else math.ldexp(1.0, lo + 2)


def _rms_columns(X) -> np.ndarray:
    """Root mean square of each column, without overflow or underflow."""
    big = np.max(np.abs(X), axis=0)
    safe = np.where(big > 0, big, 1.0)
    return big * np.sqrt(np.mean((X / safe) ** 2, axis=0))


# -- models ------------------------------------------------------------------------------------

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

    def certificate(self, theta, age, regularizer, gamma) -> float:
        """The partial-optimum residual at ``age``: :meth:`stationarity` with
        ``v = v*(l(theta), age)`` and its slope (a loss within 1e-8 of a threshold of
        ``v*`` is on either side of it)."""
        loss = self.losses(theta)
        v = sp_weights(loss, age, regularizer=regularizer, gamma=gamma)
        # (a loss within 1e-8 of a threshold of v* is on either side: its slope counts)
        return self.stationarity(theta, v, _sp_slope(loss, age, regularizer, gamma, 1e-8))

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
        raise RuntimeError("the weighted logistic problem has no minimizer: every sample "
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


# -- results -----------------------------------------------------------------------------------

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


@dataclass
class ACSResult:
    """Result of :func:`acs`: the solution, iterations and whether ACS converged."""

    coef: np.ndarray
    intercept: float
    weights: np.ndarray
    n_iter: int
    converged: bool
    residual: float
    info: dict = field(default_factory=dict)


def _validate(X, y, model, regularizer, alpha, C, gamma, path=False):
    check_choice(model, "model", MODELS + ("svm",))
    if model == "svm":
        raise NotImplementedError("model='svm': use age_path(model='svm') or "
                                  "pathlib_core.gaga.spl_svm (svm_acs, svm_weighted_fit)")
    check_choice(regularizer, "regularizer", PATH_REGULARIZERS if path else REGULARIZERS)
    X = as_matrix(X, "X")
    if model == "logistic":
        from ..core.validation import as_binary_labels
        y = as_binary_labels(y, "y", length=X.shape[0], length_of="X")
        C = positive_scalar(1.0 if C is None else C, "C")
    else:
        y = as_vector(y, "y", length=X.shape[0], length_of="X")
        if alpha is None:
            raise ValueError("alpha must be given (> 0) for model='lasso'")
        alpha = positive_scalar(alpha, "alpha")
    gamma = _check_reg(regularizer, gamma)
    return X, y, _Model(model, X, y, alpha=alpha, C=C), gamma


def _split(model, theta):
    if model.name == "lasso":
        return theta.copy(), 0.0
    return theta[:-1].copy(), float(theta[-1])


def _check_acs_controls(max_iter, tol) -> tuple[int, float]:
    """``max_iter`` an integer >= 1 and ``tol`` > 0 (shared by the ACS entry points)."""
    return positive_int(max_iter, "max_iter"), positive_scalar(tol, "tol")


def _acs_core(m, age, regularizer, gamma, theta, *, max_iter, tol):
    v = sp_weights(m.losses(theta), age, regularizer=regularizer, gamma=gamma)
    for k in range(1, max_iter + 1):
        theta = m.weighted_fit(v, theta)
        loss = m.losses(theta)
        v = sp_weights(loss, age, regularizer=regularizer, gamma=gamma)
        # converged: w is stationary for the weighted problem with ITS OWN weights v*(l(w))
        if m.stationarity(theta, v, _sp_slope(loss, age, regularizer, gamma, 1e-8)) <= tol:
            return theta, v, k, True
    return theta, v, max_iter, False


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
    weights ``1 / (kappa d_j^2)``). The age (and the mixture's ``gamma``) is divided by
    ``age_factor``: ``s_y^2`` (``kappa``) for the linear and hard regularizers, ``s_y``
    (``sqrt(kappa)``) for the mixture, whose thresholds are on the scale of ``sqrt(l)``;
    LOG's ``zeta = 1 - age`` does not scale, so there only the columns are. It is the
    user's problem, not an approximation; results are mapped back exactly.
    """

    user: _Model
    model: _Model
    coef_factor: np.ndarray
    age_factor: float
    gamma: float | None

    def to_user(self, theta):
        out = np.array(theta, dtype=float, copy=True)
        out[:self.user.d] *= self.coef_factor
        return out

    def from_user(self, theta):
        out = np.array(theta, dtype=float, copy=True)
        out[:self.user.d] /= self.coef_factor
        return out


def _scaled_problem(m: _Model, regularizer: str, gamma) -> _Scaled:
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
        return _Scaled(m, model, sy / d, factor, None if gamma is None else gamma / factor)
    # the objective divided by kappa, the power of 4 nearest to C: C / kappa in [0.5, 2),
    # the ridge weights 1 / (kappa d_j^2), the age / kappa (mixture: / sqrt(kappa), gamma
    # too); (s X, C / s^2) then has the same internal problem for every power of two s
    kappa = 1.0 if regularizer == "log" else _pow4(m.C)
    root = math.sqrt(kappa)
    factor = root if regularizer == "mixture" else kappa
    model = _Model("logistic", Z, m.y, C=m.C / kappa, weights=1.0 / (kappa * d * d))
    return _Scaled(m, model, 1.0 / d, factor, None if gamma is None else gamma / root)


@single_blas_thread
def acs(X, y, age, *, model: str, regularizer: str, alpha=None, C=None, gamma=None,
        warm_start=None, max_iter: int = 500, tol: float = 1e-11) -> ACSResult:
    r"""Alternate convex search (Algorithm 1) for the SPL objective (2) at one age.

    Alternates ``v <- v*(l(w), age)`` (closed form, :func:`sp_weights`) and ``w <- argmin_w
    R(w) + sum_i v_i l_i(w)`` (solved to ~1e-13) until ``w`` is stationary, to ``tol``
    (relative, :func:`partial_optimum_residual`), for the weights ``v*(l(w), age)`` of its
    own losses: the partial-optimum certificate. A run that hits ``max_iter`` is returned
    with ``converged=False``: it is not a partial optimum.

    Parameters
    ----------
    X, y : arrays
        Data; ``y`` in {-1, +1} for ``model="logistic"``.
    age : float
        The age ``lambda > 0``.
    model : {"lasso", "logistic"}
    regularizer : {"hard", "linear", "mixture", "log"}
    alpha, C, gamma : float
        Lasso penalty, logistic loss weight (default 1), mixture parameter.
    warm_start : array_like, optional
        Initial ``w`` (and intercept last, for logistic). Default: the unweighted fit.
    max_iter : int >= 1, default 500
        Cap on the ACS iterations (a float only with an integral value, never truncated).
    tol : float > 0, default 1e-11
        Partial-optimum tolerance (:func:`partial_optimum_residual`) that stops ACS.

    Raises
    ------
    ValueError
        Bad input, naming the argument (including ``max_iter`` not an integer >= 1 and
        ``tol <= 0`` / NaN / inf).
    """
    X, y, m, gamma = _validate(X, y, model, regularizer, alpha, C, gamma)
    age = positive_scalar(age, "age")
    _check_reg(regularizer, gamma, age)
    max_iter, tol = _check_acs_controls(max_iter, tol)
    sc = _scaled_problem(m, regularizer, gamma)
    if warm_start is None:
        theta = sc.model.weighted_fit(np.ones(m.n))
    else:
        theta = sc.from_user(as_vector(warm_start, "warm_start", length=m.p))
    theta, v, k, ok = _acs_core(sc.model, age / sc.age_factor, regularizer, sc.gamma, theta,
                                max_iter=max_iter, tol=tol)
    theta = sc.to_user(theta)
    coef, b = _split(m, theta)
    return ACSResult(coef, b, v, k, ok, m.certificate(theta, age, regularizer, gamma))


@single_blas_thread
def acs_path(X, y, ages, *, model: str, regularizer: str, alpha=None, C=None, gamma=None,
             max_iter: int = 500, tol: float = 1e-11) -> list[ACSResult]:
    r"""ACS on a grid of ages, each warm-started from the previous solution (the baseline).

    The first age starts from the unweighted fit (all ``v_i = 1``); each later age starts
    from the solution at the previous one, in the order given (the ages need not be
    sorted). Each point is the alternate convex search of :func:`acs` for the SPL
    objective (2).

    Parameters
    ----------
    X : array_like of shape (n, d)
        Data, one sample per row.
    y : array_like of shape (n,)
        Responses (``model="lasso"``) or labels in {-1, +1} with both classes present
        (``model="logistic"``).
    ages : array_like of shape (n_ages,)
        The ages :math:`\lambda > 0`, visited in the given order.
    model : {"lasso", "logistic"}
        Loss and regularizer: eq. (10) or eq. (24) (module docstring).
    regularizer : {"hard", "linear", "mixture", "log"}
        SP-regularizer (:func:`sp_regularizer`); ``"log"`` needs every age in (0, 1).
    alpha : float > 0, optional
        Lasso penalty (required for ``model="lasso"``, ignored otherwise).
    C : float > 0, optional
        Logistic loss weight (default 1; ignored by the Lasso).
    gamma : float > 0, optional
        Mixture regularizer parameter (required for ``regularizer="mixture"``).
    max_iter : int >= 1, default 500
        Cap on the ACS iterations at each age (validated as in :func:`acs`: an integer, a
        float only with an integral value).
    tol : float > 0, default 1e-11
        Partial-optimum tolerance (:func:`partial_optimum_residual`) that stops ACS.

    Returns
    -------
    list of ACSResult
        One result per age, in the order of ``ages``; ``converged`` is ``False`` where the
        cap ``max_iter`` was reached (that entry is not a partial optimum).

    Raises
    ------
    ValueError
        Empty or non-positive ``ages``, ``max_iter`` not an integer >= 1, ``tol <= 0`` or
        other bad input, naming the argument.
    NotImplementedError
        ``model="svm"`` (use :func:`pathlib_core.gaga.spl_svm.svm_acs_path`).
    RuntimeError
        Logistic model: a weighted problem whose samples with ``v_i > 0`` are all of one
        class (no minimizer).
    """
    ages = as_vector(ages, "ages")
    if ages.size == 0 or np.any(ages <= 0):
        raise ValueError("ages must be a non-empty array of positive values")
    X, y, m, gamma = _validate(X, y, model, regularizer, alpha, C, gamma)
    max_iter, tol = _check_acs_controls(max_iter, tol)
    if regularizer == "log" and np.any(ages >= 1):
        raise ValueError("ages must be in (0, 1) with the LOG regularizer (zeta = 1 - age)")
    sc = _scaled_problem(m, regularizer, gamma)
    theta = sc.model.weighted_fit(np.ones(m.n))
    out = []
    for a in ages:
        theta, v, k, ok = _acs_core(sc.model, float(a) / sc.age_factor, regularizer, sc.gamma,
                                    theta, max_iter=max_iter, tol=tol)
        th = sc.to_user(theta)
        coef, b = _split(m, th)
        out.append(ACSResult(coef, b, v, k, ok, m.certificate(th, float(a), regularizer,
                                                              gamma)))
    return out


def losses(X, y, coef, intercept=0.0, *, model: str, alpha=None, C=None) -> np.ndarray:
    r"""The per-sample losses ``l_i`` of the paper (eq. 10 / eq. 24) at ``(coef, intercept)``.

    .. math::

        \ell_i^{\mathrm{lasso}}(w) = \frac{(x_i^\top w - y_i)^2}{2n}, \qquad
        \ell_i^{\mathrm{logistic}}(w, b) = C \log\bigl(1 + e^{-y_i (x_i^\top w + b)}\bigr).

    Parameters
    ----------
    X : array_like of shape (n, d)
        Data, one sample per row.
    y : array_like of shape (n,)
        Responses (``model="lasso"``) or labels in {-1, +1} with both classes present
        (``model="logistic"``).
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


@single_blas_thread
def weighted_fit(X, y, v, *, model: str, alpha=None, C=None):
    r"""Solve the weighted problem ``argmin_w R(w) + sum v_i l_i(w)``; returns (coef, b).

    .. math::

        \min_{w} \; R(w) + \sum_{i=1}^{n} v_i\, \ell_i(w),

    the ``w``-step of alternate convex search for fixed weights ``v`` (Lasso: exact active
    set after coordinate descent; logistic regression: damped Newton, to about 1e-13).

    Parameters
    ----------
    X : array_like of shape (n, d)
        Data, one sample per row.
    y : array_like of shape (n,)
        Responses (``model="lasso"``) or labels in {-1, +1} with both classes present
        (``model="logistic"``).
    v : array_like of shape (n,)
        Sample weights in :math:`[0, 1]`.
    model : {"lasso", "logistic"}
        Lasso, ``R = alpha ||w||_1`` and eq. (10) losses, or logistic regression,
        ``R = ||w||^2 / 2`` with a free intercept and eq. (24) losses.
    alpha : float > 0, optional
        Lasso penalty (required for ``model="lasso"``, ignored otherwise).
    C : float > 0, optional
        Logistic loss weight (default 1; ignored by the Lasso).

    Returns
    -------
    coef : ndarray of shape (d,)
        The minimizer :math:`w`.
    intercept : float
        The logistic intercept :math:`b` (0 if every ``v_i`` is 0); always ``0.0`` for the
        Lasso.

    Raises
    ------
    ValueError
        Weights outside :math:`[0, 1]` or other bad input, naming the argument.
    NotImplementedError
        ``model="svm"`` (use :func:`pathlib_core.gaga.spl_svm.svm_weighted_fit`).
    RuntimeError
        Logistic model: every sample with ``v_i > 0`` has the same label (the intercept
        runs to infinity, no minimizer).
    """
    X, y, m, _ = _validate(X, y, model, "linear", alpha, C, None)
    v = as_vector(v, "v", length=X.shape[0], length_of="X")
    if np.any(v < 0) or np.any(v > 1):
        raise ValueError("v must hold sample weights in [0, 1]")
    sc = _scaled_problem(m, "linear", None)
    return _split(m, sc.to_user(sc.model.weighted_fit(v)))


def _theta(m, coef, intercept) -> np.ndarray:
    """The model's parameter vector from user-given ``coef`` (and ``intercept``), checked."""
    w = as_vector(coef, "coef", length=m.d, length_of="X'")
    if m.name == "lasso":
        return w
    b = float(np.asarray(intercept, dtype=float))
    if not np.isfinite(b):
        raise ValueError(f"intercept must be finite; got {b}")
    return np.r_[w, b]


def partial_optimum_residual(X, y, coef, intercept, age, *, model, regularizer, alpha=None,
                             C=None, gamma=None) -> float:
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
    X : array_like of shape (n, d)
        Data, one sample per row.
    y : array_like of shape (n,)
        Responses (``model="lasso"``) or labels in {-1, +1} with both classes present
        (``model="logistic"``).
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
    alpha : float > 0, optional
        Lasso penalty (required for ``model="lasso"``).
    C : float > 0, optional
        Logistic loss weight (default 1).
    gamma : float > 0, optional
        Mixture regularizer parameter (required for ``regularizer="mixture"``).

    Returns
    -------
    float
        The relative stationarity residual (``>= 0``).

    Raises
    ------
    ValueError
        Bad input, naming the argument.
    NotImplementedError
        ``model="svm"`` (use :func:`pathlib_core.gaga.spl_svm.svm_partial_optimum_residual`).
    """
    X, y, m, gamma = _validate(X, y, model, regularizer, alpha, C, gamma)
    theta = _theta(m, coef, intercept)
    age = positive_scalar(age, "age")
    _check_reg(regularizer, gamma, age)
    return m.certificate(theta, age, regularizer, gamma)


# -- the age-path (GAGA) -----------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class _State:
    part: np.ndarray                 # (n,) sample sets
    active: np.ndarray               # (p,) bool: coordinates that move
    signs: np.ndarray                # (p,) signs of active Lasso coefficients (0 elsewhere)
    n_neg: int = 0                   # number of negative eigenvalues of J on this piece
    t0: float | None = None          # age at which a turning point installed this state
    fresh: tuple = ()                # event components reassigned there (zero at t0)
    # relative size of the smallest |eigenvalue| of D J D below which the fold event fires:
    # fold_tol, or half the one at the piece start when the piece starts closer (a branch
    # that is merely ill-conditioned there, e.g. collinear raw features, is a fold only if
    # the eigenvalue keeps shrinking toward zero)
    fold_floor: float | None = None


class _Rows:
    """Per-state constants of the ODE (6): the samples with ``v > 0`` (D contributes
    nothing to ``J``, ``F_lambda`` or ``F``), their rows of ``Z`` restricted to the moving
    coordinates, and index arrays. Built once per piece instead of masking at every call."""

    def __init__(self, m: _Model, s: _State, reg: str):
        self.R = np.flatnonzero(s.part != _D)
        self.A = np.flatnonzero(s.active)
        self.ZR = np.ascontiguousarray(m.Z[self.R])
        self.ZRA = np.ascontiguousarray(self.ZR[:, self.A])
        self.absZRA = np.abs(self.ZRA)
        self.ZRA2 = self.ZRA * self.ZRA
        self.inactive = np.flatnonzero(~s.active)
        self.ZRI = np.ascontiguousarray(self.ZR[:, self.inactive])
        self.absZRI = np.abs(self.ZRI)
        self.yR = m.y[self.R]
        self.absyR = np.abs(self.yR) if m.name == "lasso" else None
        self.penA = m.pen[self.A]
        self.alphaA = m.alpha[self.A] if m.name == "lasso" else None
        # the engines' Lasso runs on columns of unit RMS (no ridge): J needs no balancing
        self.unit_diag = m.name == "lasso" and getattr(m, "unit_columns", False)
        self.signsA = s.signs[self.A]
        self.isM = s.part[self.R] == _M if reg == "mixture" else None
        self.diag = np.diag_indices(self.A.size)


class _Jac:
    """``J``, ``F_lambda`` and ``v phi'`` of eqs. (5)-(6) at one point, with the row terms
    they were built from; ``dinv`` (computed on first use) is the diagonal ``D`` of the
    symmetric scaling ``D J D``, ``D_j = (sum_i Z_ij^2 |W_i| + pen_j)^(-1/2)``, under which
    the folds are measured: it has the inertia of ``J`` (Sylvester's law) and does not
    mistake a ridge weight or a column scale far from the others for a fold."""

    __slots__ = ("J", "Flam", "vd1", "parts", "_c", "_dinv")

    def __init__(self, J, Flam, vd1, parts, c):
        self.J, self.Flam, self.vd1, self.parts, self._c = J, Flam, vd1, parts, c
        self._dinv = None

    @property
    def dinv(self) -> np.ndarray:
        if self._dinv is None:
            dj = self._c.ZRA2.T @ np.abs(self.parts[4]) + self._c.penA
            self._dinv = 1.0 / np.sqrt(np.where(dj > 0, dj, 1.0))
        return self._dinv

    def scaled(self) -> np.ndarray:
        if self._c.unit_diag:  # the Lasso's J in unit-RMS columns: already balanced
            return self.J
        d = self.dinv
        return self.J * d[:, None] * d[None, :]


class _GAGA:
    def __init__(self, m: _Model, regularizer, gamma, fold_tol, jump_deltas):
        self.m, self.reg, self.gamma = m, regularizer, gamma
        self.fold_tol = fold_tol
        self.jump_deltas = jump_deltas
        self.n_acs_iter = 0
        self.n_fallbacks = 0
        self._pending_kkt = False
        self._last_turn = None
        self.jumps: list[dict] = []
        self._rows_state, self._rows_data = None, None
        self._jac_key, self._jac_val = None, None
        #: w_user = coef_factor * w for the coefficients and age_user = age_factor * age
        #: (the engines' rescaled variables, for reports in the user's units)
        self.coef_factor = np.ones(m.d)
        self.age_factor = 1.0

    def _user_size(self, dtheta) -> float:
        """``max |dtheta|`` in the user's units."""
        d = np.array(dtheta, dtype=float, copy=True)
        d[:self.m.d] *= self.coef_factor
        return float(np.max(np.abs(d)))

    # per-state constants and the terms of (5)-(6) on the rows with v > 0
    def _rows(self, s: _State) -> _Rows:
        if s is not self._rows_state:
            self._rows_state, self._rows_data = s, _Rows(self.m, s, self.reg)
        return self._rows_data

    def _row_terms(self, t, theta, c: _Rows, *, jac_weights: bool = False):
        """``d1``, ``v``, ``dv/dlambda`` and ``W = v d2 + dv/dl d1^2`` (the weights of ``J``,
        only with ``jac_weights``) on the rows ``c.R``: the values of :meth:`_terms`
        without the zero rows of D."""
        d1, d2, v, vl, vlam = self._row_parts(t, theta, c)
        return d1, v, vlam, (v * d2 + vl * d1 * d1 if jac_weights else None)

    def _row_parts(self, t, theta, c: _Rows):
        """``d1``, ``d2``, ``v``, ``dv/dl`` and ``dv/dlambda`` on the rows ``c.R``."""
        m = self.m
        u = c.ZR @ theta
        if m.name == "lasso":
            r = u - c.yR
            loss, d1, d2 = r * r / (2 * m.n), r / m.n, 1.0 / m.n
        else:
            mm = -c.yR * u
            softplus, sig, sig_c = _logistic_parts(mm)
            loss = m.C * softplus
            d1, d2 = -m.C * c.yR * sig, m.C * sig * sig_c
        if self.reg == "linear":  # every row is in E: v = 1 - l / t, dv/dl = -1 / t
            v = 1.0 - loss / t
            vl = -1.0 / t
            vlam = loss / (t * t)
        else:
            isM = c.isM
            sq = np.where(isM, np.maximum(np.sqrt(loss), 1e-100), 1.0)
            g = self.gamma
            v = np.where(isM, g / sq - g / t, 1.0)
            with np.errstate(over="ignore"):  # (a Newton trial far outside M)
                vl = np.where(isM, -0.5 * g / sq ** 3, 0.0)
            vlam = np.where(isM, g / (t * t), 0.0)
        return d1, d2, v, vl, vlam

    def _jac_rows(self, t, theta, c: _Rows):
        # the integrator evaluates rhs at each step's end and then the events at the same
        # point: the last result is reused (read-only) when (t, theta, sets) repeat
        key = self._jac_key
        if key is not None and key[0] is c and key[1] == t and np.array_equal(key[2], theta):
            return self._jac_val
        d1, d2, v, vl, vlam = self._row_parts(t, theta, c)
        W = v * d2 + vl * d1 * d1
        J = (c.ZRA.T * W) @ c.ZRA
        J[c.diag] += c.penA
        out = _Jac(J, c.ZRA.T @ (vlam * d1), v * d1, (d1, d2, v, vl, W), c)
        for a in (out.J, out.Flam, out.vd1):
            a.flags.writeable = False
        self._jac_key, self._jac_val = (c, t, np.array(theta, copy=True)), out
        return out

    def _F_rows(self, theta, c: _Rows, vd1):
        F = c.ZRA.T @ vd1 + c.penA * theta[c.A]
        if self.m.name == "lasso":
            F = F + c.alphaA * c.signsA
        return F

    # state helpers
    def state_from(self, theta, age) -> _State:
        part = _partition(self.m.losses(theta), age, self.reg, self.gamma)
        if self.m.name == "lasso":
            active = theta != 0
            signs = np.sign(theta)
        else:
            active = np.ones(self.m.p, bool)
            signs = np.zeros(self.m.p)
        return self._with_inertia(_State(part, active, signs), theta, age)

    def _with_inertia(self, s: _State, theta, age) -> _State:
        Js = self._scaled_jac(age, theta, s)
        if not Js.size:
            return _State(s.part, s.active, s.signs, 0, s.t0, s.fresh, self.fold_tol)
        ev = np.linalg.eigvalsh(Js)
        top = max(float(np.max(np.abs(ev))), 1e-300)
        floor = min(self.fold_tol, 0.5 * float(np.min(np.abs(ev))) / top)
        return _State(s.part, s.active, s.signs, int(np.sum(ev < 0)), s.t0, s.fresh, floor)

    def _terms(self, t, theta, s: _State):
        m = self.m
        loss, d1, d2 = m.phi(m.Z @ theta)
        v, vl, vlam = _sp_weights_derivatives(loss, t, s.part, self.reg,
                                             gamma=self.gamma)
        return loss, d1, d2, v, vl, vlam

    def jac(self, t, theta, s: _State):
        jr = self._jac_rows(t, theta, self._rows(s))
        return jr.J, jr.Flam

    def _scaled_jac(self, t, theta, s: _State):
        """``D J D`` (see :class:`_Jac`), whose eigenvalues measure the folds."""
        return self._jac_rows(t, theta, self._rows(s)).scaled()

    def rhs(self, t, theta, s: _State):
        c = self._rows(s)
        out = np.zeros_like(theta)
        if c.A.size:
            jr = self._jac_rows(t, theta, c)
            J, Flam = jr.J, jr.Flam
            # LAPACK's gesv directly (np.linalg.solve costs 5x more on these p x p systems)
            _, _, x, info = _gesv(J, Flam)
            if info != 0:  # exactly singular J: least squares, as before
                x = np.linalg.lstsq(J, Flam, rcond=None)[0]
            out[c.A] = -x
        return out

    def events(self, t, theta, s: _State, lift: bool = True):
        m = self.m
        c = self._rows(s)
        u = m.Z @ theta
        loss = ((u - m.y) ** 2 / (2 * m.n) if m.name == "lasso"
                else m.C * np.logaddexp(0.0, -m.y * u))
        if self.reg == "linear":
            g = np.where(s.part == _E, t - loss, loss - t) / t
        else:
            r = np.sqrt(loss)
            lo = t * self.gamma / (t + self.gamma)
            g = np.where(s.part == _E, lo - r,
                         np.where(s.part == _M, np.minimum(r - lo, t - r), r - t)) / t
        jr = self._jac_rows(t, theta, c)
        J, vd1 = jr.J, jr.vd1
        if m.name == "lasso":
            # an inactive feature: |corr_j| <= alpha_j, relative to the size of the terms
            # of corr_j (its rounding), not to alpha_j: a tiny penalty is resolved as well
            scale = float(np.max(np.abs(theta), initial=0.0)) or 1.0
            gf = s.signs * theta / scale
            off = c.inactive
            if off.size:
                d1, d2, v, vl, _ = jr.parts
                # (|y| + |u| <= |r| + 2 |y|, with |r| = n |d1|: no product with |Z| here)
                size = m.n * np.abs(d1) + 2.0 * c.absyR
                x = (v * d2 + np.abs(vl) * d1 * d1) * size
                cscale = m.alpha[off] + x @ c.absZRI
                gf[off] = (m.alpha[off] - np.abs(vd1 @ c.ZRI)) / cscale
        else:
            gf = np.zeros(0)
        fold = 1.0
        if J.size:
            # an eigenvalue of J crossing zero (a fold of the smooth branch): the eigenvalues
            # keep the signs they had at the start of the piece
            ev = np.linalg.eigvalsh(jr.scaled())
            scale = max(float(np.max(np.abs(ev))), 1e-300)
            q = s.n_neg
            ftol = self.fold_tol if s.fold_floor is None else s.fold_floor
            if q < ev.size:
                fold = min(fold, ev[q] / scale - ftol)
            if q > 0:
                fold = min(fold, -ev[q - 1] / scale - ftol)
        out = np.concatenate((g, gf, (fold, -1.0 if self._pending_kkt else 1.0)))
        if lift and s.fresh and 0.0 <= t - s.t0 < (w := _LIFT_WIDTH * s.t0):
            # The conditions reassigned at the turning point t0 are zero there (to rounding)
            # and grow with the age (_consistent checked it). A zero at a piece start makes
            # follow_path begin with a 1e-8 step that grows tenfold per step (~6 steps per
            # piece, most of the integration cost). A lift that falls linearly to zero over
            # the same 1e-8 window keeps them positive just after t0 instead (rounding noise
            # cannot fire them at t0), so the piece starts with a normal step; beyond the
            # window the functions are exact, so a real decrease through zero is still found.
            idx = np.asarray(s.fresh)
            out[idx] += _LIFT_HEIGHT * (1.0 - (t - s.t0) / w)
        return out

    def residual(self, t, theta, s: _State | None):
        """The partial-optimum certificate: stationarity with ``v = v*(l(w), t)``, each
        coordinate against its own terms (:meth:`_Model.certificate`)."""
        return self.m.certificate(theta, t, self.reg, self.gamma)

    def state_residual(self, t, theta, s: _State):
        """``F_s(w, t)`` of eq. (5) in the sets ``s`` (the manifold the ODE follows), each
        coordinate against the size of its terms (as :meth:`_Model.conditions`); the
        integrator's drift is measured with it, set changes by the events."""
        c = self._rows(s)
        if not c.A.size:
            return 0.0
        key = self._jac_key  # the terms of the last Jacobian when it was built here
        if key is not None and key[0] is c and key[1] == t and np.array_equal(key[2], theta):
            d1, d2, v, vl, _ = self._jac_val.parts
        else:
            d1, d2, v, vl, _ = self._row_parts(t, theta, c)
        vd1 = v * d1
        F = self._F_rows(theta, c, vd1)
        size = c.absZRA @ np.abs(theta[c.A])
        W = v * d2 + np.abs(vl) * d1 * d1
        if c.alphaA is not None:  # the Lasso (as _Model.conditions)
            scale = c.absZRA.T @ (W * (size + c.absyR)) + c.alphaA
        else:
            scale = c.absZRA.T @ (np.abs(vd1) + W * size) + c.penA * np.abs(theta[c.A])
        r = np.divide(np.abs(F), scale, out=np.zeros_like(F), where=scale > 0)
        return float(np.max(r))

    def record_residual(self, t, rec: SPLSolution):
        theta = rec.coef if self.m.name == "lasso" else np.r_[rec.coef, rec.intercept]
        return self.residual(t, theta, None)

    def correct(self, t, theta, s: _State):
        theta = theta.copy()
        c = self._rows(s)
        A = c.A
        for _ in range(20):
            jr = self._jac_rows(t, theta, c)
            J, vd1, dinv = jr.J, jr.vd1, jr.dinv
            F = self._F_rows(theta, c, vd1)
            if not (np.all(np.isfinite(J)) and np.all(np.isfinite(F))):
                break
            try:
                # in the scaled variables of D J D (columns of very different scales are
                # not truncated by the least-squares cutoff)
                Js = J * dinv[:, None] * dinv[None, :]
                theta[A] -= dinv * np.linalg.lstsq(Js, dinv * F, rcond=None)[0]
            except np.linalg.LinAlgError:
                break
            if self.state_residual(t, theta, s) <= 1e-12:
                return theta
        if (self.state_residual(t, theta, s) > 1e-10
                and not getattr(self, "_in_fallback", False)):
            # the sets no longer describe the solution (a crossing inside one integration
            # step): re-solve by warm ACS, polish in the sets of the result, and make the
            # next event evaluation fire the "kkt" component so that update() records a
            # jump and installs those sets
            self.n_fallbacks += 1
            self._in_fallback = True
            try:
                th, _, k, _ = _acs_core(self.m, t, self.reg, self.gamma, theta,
                                        max_iter=3000, tol=1e-11)
                self.n_acs_iter += k
                theta = self.correct(t, th, self.state_from(th, t))
                self._pending_kkt = True
            finally:
                self._in_fallback = False
        return theta

    def _polish(self, t, theta, s: _State):
        """``theta`` Newton-corrected onto the piece's manifold (5) where the integration
        left it above 1e-12 (the dense output is accurate to the integration tolerance;
        the records are exact to rounding)."""
        r0 = self.state_residual(t, theta, s)
        if r0 <= 1e-12:
            return theta
        old = getattr(self, "_in_fallback", False)
        self._in_fallback = True
        try:
            new = self.correct(t, theta, s)
        finally:
            self._in_fallback = old
        # (Newton steps in fixed sets know nothing of the sets' inequalities: the point is
        # kept only where the partial-optimum certificate improves too)
        if (self.state_residual(t, new, s) < r0
                and self.residual(t, new, None) <= self.residual(t, theta, None)):
            return new
        return theta

    def record(self, t, theta, s: _State):
        theta = self._polish(t, theta, s)
        if self.m.name == "lasso":
            # an active coefficient at or past 0 (the end of a piece where it leaves, located
            # to the events' tolerance) is 0: its sign is the state's, never the other one
            past = s.active & (s.signs * theta <= 0)
            if np.any(past):
                theta = np.where(past, 0.0, theta)
        loss, *_ = self.m.phi(self.m.Z @ theta)
        v, _, _ = _sp_weights_derivatives(loss, t, s.part, self.reg, self.gamma)
        coef, b = _split(self.m, theta)
        return SPLSolution(coef, b, v)

    # critical points
    def _switch(self, t, theta, s: _State, fired):
        n = self.m.n
        part, active, signs = s.part.copy(), s.active.copy(), s.signs.copy()
        theta = theta.copy()
        new_part = _partition(self.m.losses(theta), t, self.reg, self.gamma)
        for k in fired:
            if k < n:
                i = k
                if new_part[i] != part[i]:
                    part[i] = new_part[i]
                elif self.reg == "linear":
                    part[i] = _D if part[i] == _E else _E
                else:  # at a threshold: move to the neighbouring set
                    r = math.sqrt(self.m.losses(theta)[i])
                    lo = t * self.gamma / (t + self.gamma)
                    if part[i] == _E:
                        part[i] = _M
                    elif part[i] == _D:
                        part[i] = _M
                    else:
                        part[i] = _E if abs(r - lo) < abs(r - t) else _D
            elif k < n + self.m.p:
                j = k - n
                if active[j]:
                    active[j], signs[j], theta[j] = False, 0.0, 0.0
                else:
                    _, d1, _, v, _, _ = self._terms(t, theta, s)
                    corr = self.m.Z[:, j] @ (v * d1)
                    active[j], signs[j] = True, -np.sign(corr)
        n_cond = n + (self.m.p if self.m.name == "lasso" else 0)  # samples, features
        fresh = tuple(k for k in fired if k < n_cond)
        return self._with_inertia(_State(part, active, signs, 0, t, fresh), theta, t), theta

    def _consistent(self, t, theta, s_new: _State, fired) -> _State | None:
        Js = self._scaled_jac(t, theta, s_new)
        slope = self.rhs(t, theta, s_new)
        if Js.size:
            ev = np.abs(np.linalg.eigvalsh(Js))
            r0 = ev.min() / ev.max()
            if r0 <= self.fold_tol:
                # near-singular: a fold if the eigenvalue shrinks toward zero close ahead,
                # ill-conditioning if it grows or its linear extrapolation reaches zero
                # only far away (> 1e-3 t)
                h = 1e-7 * t
                ev1 = np.abs(np.linalg.eigvalsh(self._scaled_jac(t + h, theta + h * slope,
                                                                 s_new)))
                shrink = r0 - ev1.min() / ev1.max()
                if r0 == 0.0 or (shrink > 0 and r0 * h / shrink <= 1e-3 * t):
                    return None
        g0 = self.events(t, theta, s_new, lift=False)
        idx = np.asarray(fired)
        # every reassigned condition must hold (or become strictly true) as the age grows.
        # A first-order probe 1e-7 t ahead; a condition that fails there is probed again
        # 1e-10 t ahead: a piece shorter than the first probe (a coefficient that passes
        # through 0 under a tiny penalty stays at 0 over ~2 alpha_j / |d corr_j / d age|)
        # is consistent, and it is not lifted (see events) so that its end is exact
        for h in (1e-7 * t, 1e-10 * t):
            g1 = self.events(t + h, theta + h * slope, s_new, lift=False)
            ok = (g1[idx] - g0[idx] > -1e-10 * h) | (g1[idx] > 1e-9)
            if np.all(ok):
                break
            if h < 1e-7 * t:
                return None
            idx = idx[~ok]
        short = set(idx.tolist()) if h < 1e-7 * t else set()
        return _State(s_new.part, s_new.active, s_new.signs, s_new.n_neg, s_new.t0,
                      tuple(k for k in s_new.fresh if k not in short), s_new.fold_floor)

    def update(self, t, theta, s: _State, fired):
        fired = [int(k) for k in fired]
        fold_index = self.m.n + (self.m.p if self.m.name == "lasso" else 0)
        info = {"fired": fired}
        if fold_index + 1 in fired:  # the KKT monitor: re-solved by ACS in correct()
            self._pending_kkt = False
            self.jumps.append({"age": t, "reason": "kkt", **info})
            return Update(self.state_from(theta, t), theta, "jump", dict(info, reason="kkt"))
        # an index that fires again at the same age right after its reassignment means
        # neither side continues (a non-smooth fold): restart
        again = self._last_turn is not None and self._last_turn[0] == t and bool(
            set(fired) & self._last_turn[1])
        if fold_index not in fired and not again:
            s_new, theta_new = self._switch(t, theta, s, fired)
            s_new = self._consistent(t, theta_new, s_new, fired)
            if s_new is not None:
                self._last_turn = (t, set(fired))
                return Update(s_new, theta_new, "turning", info)
        self._last_turn = None
        return self._jump(t, theta, info)

    def _acs_newton(self, t, theta, *, max_iter=3000):
        """Warm ACS at ``t`` until the sets stop changing, then Newton steps on (5) in
        those sets (ACS alone converges only linearly near a fold)."""
        m = self.m
        v = sp_weights(m.losses(theta), t, regularizer=self.reg, gamma=self.gamma)
        prev, stable, next_try = None, 0, 3
        for k in range(1, max_iter + 1):
            theta = m.weighted_fit(v, theta)
            loss = m.losses(theta)
            v = sp_weights(loss, t, regularizer=self.reg, gamma=self.gamma)
            if m.stationarity(theta, v, _sp_slope(loss, t, self.reg, self.gamma, 1e-8)) <= 1e-11:
                return theta, k, True
            key = (_partition(loss, t, self.reg, self.gamma).tobytes(),
                   np.sign(theta).tobytes() if m.name == "lasso" else b"")
            if key != prev:
                prev, stable, next_try = key, 0, 3
                continue
            stable += 1
            # Newton once the sets have been stable for a few iterations; after a failed
            # attempt in the same sets wait twice as long (each attempt costs ~20 solves)
            if stable >= next_try:
                next_try *= 2
                s = self.state_from(theta, t)
                self._in_fallback = True
                try:
                    cand = self.correct(t, theta, s)
                finally:
                    self._in_fallback = False
                if self.residual(t, cand, s) <= 1e-11:
                    return cand, k, True
        return theta, max_iter, False

    def _jump(self, t, theta, info):
        """Jump point: ACS at ``t (1 + delta)`` from the current solution finds the new
        branch; Newton steps in that branch's sets bring it back to ``t`` exactly."""
        scale = max(1.0, float(np.max(np.abs(theta))))
        outcomes = set()
        # capped: near a fold ACS can crawl for thousands of iterations; a non-converged
        # iterate is still a starting point, and the next delta follows. Only if no delta
        # finds a branch that way are they tried again with a much larger cap (the mixture
        # Lasso on diabetes, full data, run 7, age 10.26: ACS at t (1 + 1e-3) needs 1157
        # iterations to reach the new branch, 2.41 away)
        for cap, delta in itertools.product((300, 20_000), self.jump_deltas):
            t1 = t * (1 + delta)
            try:
                th1, k1, ok1 = self._acs_newton(t1, theta, max_iter=cap)
                self.n_acs_iter += k1
                # a non-converged ACS iterate is only a starting point: the residual decides
                s1 = self.state_from(th1, t1)
                th2 = self.correct(t, th1, s1)
                if (self.residual(t, th2, s1) > 1e-10
                        or np.max(np.abs(th2 - theta)) <= 1e-8 * scale):
                    # Newton back failed, or it returned to the current point (the branch
                    # found at t1 passes through it and folds back between t and t1): ACS
                    # back from the t1 solution instead, which can reach a distinct partial
                    # optimum at t (e.g. the diabetes Lasso, full data, age 4.369)
                    th2, k2, _ = self._acs_newton(t, th1)
                    self.n_acs_iter += k2
                    # Newton-polished in its sets unless that makes it worse (steps that
                    # leave the sets' inequalities on an ill-conditioned piece)
                    th3 = self.correct(t, th2, self.state_from(th2, t))
                    if self.residual(t, th3, None) <= self.residual(t, th2, None):
                        th2 = th3
            except RuntimeError as exc:  # a weighted problem without minimizer on the way
                outcomes.add(str(exc).split(":")[0])
                continue
            if self.residual(t, th2, s1) > 1e-10:
                outcomes.add("ACS did not reach a partial optimum")
            elif np.max(np.abs(th2 - theta)) <= 1e-8 * scale:
                outcomes.add("ACS returned to the current point")
            else:
                info = dict(info, delta=delta, acs_iterations=k1, acs_converged=ok1,
                            jump_size=self._user_size(th2 - theta))
                self.jumps.append({"age": t, **info})
                return Update(self.state_from(th2, t), th2, "jump", info)
        raise RuntimeError(
            f"age_path: no continuation found at age={t * self.age_factor:.10g}: the "
            "reassigned sets are inconsistent (or the branch folds) and warm ACS at ages "
            f"just above found no other partial optimum ({'; '.join(sorted(outcomes))})")


@single_blas_thread
def age_path(X, y, *, model: str, regularizer: str, age_min: float, age_max: float,
             alpha: float | None = None, C: float | None = None, gamma: float | None = None,
             kernel=None, rtol: float = 1e-10, atol: float = 1e-12, drift_tol: float = 1e-9,
             fold_tol: float = 1e-6, max_events: int = 10_000):
    r"""Exact age-path of self-paced learning (GAGA, Algorithm 2 of Qu et al. 2022).

    Follows the partial optimum of the SPL objective (2),

    .. math::

        \min_{w,\; v \in [0, 1]^n} \; R(w) + \sum_{i=1}^n v_i \, \ell_i(w)
            + \sum_{i=1}^n f(v_i, \lambda),

    with the model's loss and regularizer (Lasso, eq. 10: ``l_i = (x_i'w - y_i)^2 / (2n)``,
    ``R = alpha ||w||_1``; logistic, eq. 24: ``l_i = C log(1 + exp(-y_i (x_i'w + b)))``,
    ``R = ||w||^2 / 2``; SVM, eq. 7: ``l_i = C max(0, 1 - y_i f(x_i))``, ``R = ||f||_H^2 / 2``)
    and the SP-regularizer ``f`` (linear: ``lambda (v^2 / 2 - v)``; mixture:
    ``gamma^2 / (v + gamma / lambda)``), for the age ``lambda`` in ``[age_min, age_max]``.
    Between critical points the path solves the ODE (6) (for the Lasso eqs. (11)
    / (12), for logistic regression eq. (25)) with DOP853 at ``rtol``/``atol``; after every
    integration step the partial-optimum residual is checked and Newton-corrected above
    ``drift_tol``. At a critical point all violated conditions are reassigned together; if
    the reassigned system is consistent (every reassigned condition holds as the age grows,
    ``J`` non-singular) the point is a *turning point*, otherwise a *jump point*: ACS at
    ``age (1 + delta)`` warm-started from the current solution, then Newton steps (or, if
    they fail, ACS with Newton acceleration) back at ``age``, gives the new branch (``delta``
    tried in the order 1e-3, 1e-6, 1e-2: near a fold ACS passes the vanishing branch's
    "ghost" slowly, in a number of iterations growing like ``delta ** -0.5``, so the
    smallest offset is not tried first). A fold of the smooth branch (``min |eig J| / max
    |eig J| < fold_tol``) is a jump point too.

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,)
        Response (lasso) or labels in {-1, +1} (logistic).
    model : {"lasso", "logistic", "svm"}
        ``"svm"`` (eq. 7, Proposition 1) is traced by
        :func:`pathlib_core.gaga.spl_svm.svm_age_path` (``path.at(age)`` is then an
        :class:`~pathlib_core.gaga.spl_svm.SVMSolution`).
    regularizer : {"linear", "mixture"}
    age_min, age_max : float
        ``0 < age_min < age_max``.
    alpha : float
        Lasso penalty (eq. 10).
    C : float
        Logistic or hinge loss weight (eqs. 24, 7), default 1.
    gamma : float
        Mixture regularizer parameter (> 0).
    kernel : None, "linear" or pathlib_core.core.kernels.Kernel
        SVM only (default linear).

    Returns
    -------
    SolutionPath
        ``param_name == "age"``; ``path.at(age)`` is an :class:`SPLSolution`. Events of kind
        ``"turning"`` and ``"jump"`` carry the fired indices (samples ``0..n-1``, then Lasso
        features ``n..n+d-1``, then the fold index). ``path.info`` adds ``n_restarts``
        (jump points), ``n_turning``, ``acs_iterations`` and ``jumps``.

    Raises
    ------
    ValueError
        Bad input, naming the argument.
    DegenerateStartError
        (a ``ValueError``) No usable partial optimum at ``age_min``: every weight vanishes
        (all losses above the age), the only one found keeps one class (logistic), or for
        the SVM it keeps one class only or has ``w = 0``; a larger ``age_min`` may work.
    RuntimeError
        The path cannot be continued at some age, with the cause: the branch ends (the
        reassigned sets are inconsistent, or a fold) and ACS just above finds no other
        partial optimum (e.g. the weighted problems it meets keep one class only).

    Notes
    -----
    Cost. Each piece is one integrator run (:func:`pathlib_core.core.ode_path.follow_path`, DOP853
    stepped directly), so the cost grows with the number of
    breakpoints (hundreds on the benchmark problems; ``benchmarks/bench_gaga.py``). Per
    piece the sets are fixed, so the rows of ``Z`` with ``v > 0`` and the moving
    coordinates are extracted once (:class:`_Rows`); ``J`` is a small ``p x p`` matrix
    assembled from them at every right-hand-side call. The conditions reassigned at a
    turning point are lifted over a ``1e-8`` window after it (see :meth:`_GAGA.events`), so
    that the next piece starts with a normal integration step rather than a ``1e-8`` one
    (which cost ~6 steps, ~90 right-hand-side evaluations, per piece). Tolerances and the
    located breakpoints are unchanged by both.
    """
    if model == "svm":  # Proposition 1: pathlib_core.gaga.spl_svm
        if alpha is not None:
            raise ValueError("alpha is only used by model='lasso'; got alpha for model='svm'")
        from .spl_svm import svm_age_path
        return svm_age_path(X, y, regularizer=regularizer, age_min=age_min, age_max=age_max,
                            C=C, gamma=gamma, kernel=kernel, rtol=rtol, atol=atol,
                            drift_tol=drift_tol, fold_tol=fold_tol, max_events=max_events)
    X, y, m, gamma = _validate(X, y, model, regularizer, alpha, C, gamma, path=True)
    if kernel is not None:
        raise ValueError("kernel is only used by model='svm'; got a kernel for "
                         f"model={model!r}")
    age_min = positive_scalar(age_min, "age_min")
    age_max = positive_scalar(age_max, "age_max")
    if age_min >= age_max:
        raise ValueError(f"age_min must be < age_max; got {age_min} >= {age_max}")
    t0 = time.perf_counter()
    sc = _scaled_problem(m, regularizer, gamma)
    f = sc.age_factor
    tau_min, tau_max = age_min / f, age_max / f
    g = _GAGA(sc.model, regularizer, sc.gamma, positive_scalar(fold_tol, "fold_tol"),
              (1e-3, 1e-6, 1e-2))
    g.coef_factor, g.age_factor = sc.coef_factor, f
    theta0 = _start(g, tau_min, age_min)
    path = follow_path(theta0, (tau_min, tau_max), rhs=g.rhs, events=g.events,
                       update=g.update, residual=g.state_residual, correct=g.correct,
                       record=g.record, state=g.state_from(theta0, tau_min), rtol=rtol,
                       atol=atol, drift_tol=drift_tol, max_events=max_events,
                       param_name="age", param_floor=0.0, param_unit=f)

    def to_user(rec: SPLSolution) -> SPLSolution:
        return SPLSolution(rec.coef * sc.coef_factor, rec.intercept, rec.weights)

    def residual(t, rec: SPLSolution) -> float:
        return m.certificate(_theta(m, rec.coef, rec.intercept), t, regularizer, gamma)

    info = dict(path.info)
    info.update(
        n_turning=sum(1 for e in path.events if e.kind == "turning"),
        acs_iterations=g.n_acs_iter, n_fallbacks=g.n_fallbacks,
        jumps=[dict(j, age=j["age"] * f) for j in g.jumps], model=model, gamma=gamma,
        regularizer=regularizer, correction_params=[t * f for t in info["correction_params"]],
        scaling={"coef_factor": sc.coef_factor, "age_factor": f},
        wall_time_total=time.perf_counter() - t0)
    return _map_path(path, f, to_user, residual, info)


def _start(g: _GAGA, tau: float, age: float) -> np.ndarray:
    """A certified partial optimum at the internal age ``tau`` (the user's ``age``): warm
    ACS from the unweighted fit, Newton-polished in its sets; where ACS fails (a repelling
    fixed point: ACS runs away from it), Newton steps on (5) from the unweighted fit; a
    precise error otherwise."""
    m = g.m
    start = m.weighted_fit(np.ones(m.n))
    why = None
    try:
        theta0, v, k0, ok = _acs_core(m, tau, g.reg, g.gamma, start, max_iter=1000,
                                      tol=1e-11)
        g.n_acs_iter += k0
    except RuntimeError:
        theta0, v, ok = start, None, False
        why = ("alternate convex search from the unweighted fit keeps samples of one class "
               "only (v > 0), where the weighted problem has no minimizer (the intercept "
               "runs to infinity)")
    if v is not None and m.name == "logistic" and not np.any(v > 0):
        raise DegenerateStartError(
            f"age_min={age} is too small: every sample has a loss above the age (v = 0), "
            "so w = 0 and the intercept is not determined (any b whose losses all exceed "
            "the age is a partial optimum); start at a larger age")
    if ok:
        # polish the ACS iterate by Newton steps on (5) in its sets (ACS converges
        # linearly), unless that makes it worse (steps that leave the sets' inequalities)
        g._in_fallback = True
        try:
            theta1 = g.correct(tau, theta0, g.state_from(theta0, tau))
        finally:
            g._in_fallback = False
        if g.residual(tau, theta1, None) <= g.residual(tau, theta0, None):
            theta0 = theta1
    else:
        theta0 = _newton_start(g, tau, start)
        if theta0 is None and why is None:
            why = ("alternate convex search did not converge in 1000 iterations (the sample "
                   "sets still change)")
    r0 = np.inf if theta0 is None else g.residual(tau, theta0, None)
    if r0 <= 1e-10 and m.name == "logistic":
        v = sp_weights(m.losses(theta0), tau, regularizer=g.reg, gamma=g.gamma)
        if np.unique(m.y[v > 1e-12]).size < 2:
            raise DegenerateStartError(
                f"age_min={age} is too small: the only partial optimum found there keeps "
                "no weight above rounding on one class (the intercept alone puts those "
                "samples' losses at the age, so their weights vanish and w = 0); a path "
                "from it is not unique; start at a larger age")
    if r0 > 1e-10:
        if why is None:
            why = f"the partial-optimum residual is {r0:.3g} after Newton steps"
        raise DegenerateStartError(
            f"no partial optimum found at age_min={age}: {why}, and Newton steps on the "
            "stationarity conditions (5) from the unweighted fit did not reach one either; "
            "a larger age_min (more samples admitted) may have one")
    return theta0


def _newton_start(g: _GAGA, tau: float, theta) -> np.ndarray | None:
    """Newton steps on the partial-optimum conditions (5) at ``tau``: in the sets of the
    current point, the sets re-derived after each round; ``None`` if no certified point is
    reached in 50 rounds."""
    g._in_fallback = True
    try:
        for _ in range(50):
            try:
                new = g.correct(tau, theta, g.state_from(theta, tau))
            except (np.linalg.LinAlgError, ValueError, FloatingPointError):
                return None
            if not np.all(np.isfinite(new)):
                return None
            if g.residual(tau, new, None) <= 1e-11:
                return new
            if np.array_equal(new, theta):
                return None
            theta = new
    finally:
        g._in_fallback = False
    return None


def _map_path(path: SolutionPath, factor: float, rec_map, residual, info) -> SolutionPath:
    """``path`` traced in internal units as a path in the user's units: the parameter
    multiplied by ``factor`` (a power of two: exact) and every record mapped by
    ``rec_map``; ``residual(t, record)`` is the certificate in the user's units."""
    segs = []
    for s in path.segments:
        segs.append(FunctionSegment(
            s.lo * factor, s.hi * factor,
            lambda t, s=s: rec_map(s.evaluate(t / factor)),
            rec_lo=rec_map(s.rec_lo), rec_hi=rec_map(s.rec_hi), kind=s.kind))
    events = [Event(e.param * factor, e.kind, e.indices, e.info) for e in path.events]
    out = SolutionPath(path.param_name, segs, events, residual=residual, direction=path.direction,
               info=info)
    return out


# -- estimators --------------------------------------------------------------------------------

def candidate_ages(path, n_interior: int = 8) -> np.ndarray:
    """Ages at which to score a model along an exact age-path: every breakpoint of ``path``
    and ``n_interior`` evenly spaced interior points of every piece of positive length
    (sorted, without repeats).

    The estimators select their age on validation data over these candidates; a chapter that
    compares the path with ACS on a grid scores the path at the same ages.

    Parameters
    ----------
    path : Path
        An age-path (:func:`age_path`, :func:`pathlib_core.gaga.spl_svm.svm_age_path`).
    n_interior : int >= 0, default 8
        Interior points per piece (0: the breakpoints only).

    Returns
    -------
    ndarray of float
    """
    k = positive_int(n_interior, "n_interior", minimum=0)
    bp = np.asarray(path.breakpoints, dtype=float)
    inner = [lo + (hi - lo) * (np.arange(1, k + 1) / (k + 1))
             for lo, hi in zip(bp[:-1], bp[1:], strict=True) if hi > lo]
    return np.unique(np.concatenate([bp] + inner))


class _SelfPacedBase:
    _model = ""

    def __init__(self, *, regularizer: str = "linear", gamma: float | None = None,
                 age_min: float = 0.1, age_max: float = 20.0, validation_fraction: float = 0.25,
                 n_eval_per_piece: int = 8, random_state: int = 0):
        self.regularizer = regularizer
        self.gamma = gamma
        self.age_min = age_min
        self.age_max = age_max
        self.validation_fraction = validation_fraction
        self.n_eval_per_piece = n_eval_per_piece
        self.random_state = random_state

    def _path_kwargs(self) -> dict:  # pragma: no cover - interface
        raise NotImplementedError

    def _error(self, sol, X, y) -> float:  # pragma: no cover - interface
        raise NotImplementedError

    def _candidates(self, path) -> np.ndarray:
        """Ages at which the validation error is evaluated (:func:`candidate_ages`)."""
        return candidate_ages(path, positive_int(self.n_eval_per_piece, "n_eval_per_piece",
                                                 minimum=0))

    @single_blas_thread
    def fit(self, X, y, X_val=None, y_val=None):
        """Trace the age-path on ``(X, y)`` and select the age with the smallest error on
        ``(X_val, y_val)`` (default: a held-out ``validation_fraction`` of ``(X, y)``)."""
        X = as_matrix(X, "X")
        y = as_vector(y, "y", length=X.shape[0], length_of="X")
        if X_val is None:
            if not 0 < self.validation_fraction < 1:
                raise ValueError("validation_fraction must be in (0, 1); got "
                                 f"{self.validation_fraction!r}")
            rng = np.random.default_rng(self.random_state)
            perm = rng.permutation(X.shape[0])
            n_val = max(1, int(round(self.validation_fraction * X.shape[0])))
            val, tr = perm[:n_val], perm[n_val:]
            X, y, X_val, y_val = X[tr], y[tr], X[val], y[val]
        else:
            X_val = as_matrix(X_val, "X_val")
            y_val = as_vector(y_val, "y_val", length=X_val.shape[0], length_of="X_val")
            if X_val.shape[1] != X.shape[1]:
                raise ValueError(f"X_val must have {X.shape[1]} columns; got {X_val.shape[1]}")
        self.path_ = age_path(X, y, model=self._model, regularizer=self.regularizer,
                              gamma=self.gamma, age_min=self.age_min, age_max=self.age_max,
                              **self._path_kwargs())
        ages = self._candidates(self.path_)
        errs = np.array([self._error(self.path_.at(a), X_val, y_val) for a in ages])
        best = int(np.argmin(errs))
        self.age_, self.validation_error_ = float(ages[best]), float(errs[best])
        self.ages_, self.validation_curve_ = ages, errs
        sol = self.path_.at(self.age_)
        self.coef_, self.intercept_, self.weights_ = sol.coef, sol.intercept, sol.weights
        return self

    def decision_function(self, X):
        X = as_matrix(X, "X")
        return X @ self.coef_ + self.intercept_


class SelfPacedLasso(_SelfPacedBase):
    """Self-paced Lasso (eq. 10) whose age is chosen on validation data along the exact
    age-path (validation mean squared error)."""

    _model = "lasso"

    def __init__(self, alpha: float = 0.01, **kwargs):
        super().__init__(**kwargs)
        self.alpha = alpha

    def _path_kwargs(self):
        return {"alpha": self.alpha}

    def _error(self, sol, X, y):
        return float(np.mean((X @ sol.coef - y) ** 2))

    def predict(self, X):
        return self.decision_function(X)


class SelfPacedLogisticRegression(_SelfPacedBase):
    """Self-paced logistic regression (eq. 24) whose age is chosen on validation data along
    the exact age-path (validation misclassification rate)."""

    _model = "logistic"

    def __init__(self, C: float = 1.0, **kwargs):
        super().__init__(**kwargs)
        self.C = C

    def _path_kwargs(self):
        return {"C": self.C}

    def _error(self, sol, X, y):
        return float(np.mean(np.where(X @ sol.coef + sol.intercept >= 0, 1.0, -1.0) != y))

    def predict(self, X):
        return np.where(self.decision_function(X) >= 0, 1.0, -1.0)
