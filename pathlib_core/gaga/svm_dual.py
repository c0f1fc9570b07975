r"""The self-paced SVM's weighted dual, its certificate and its rescaling (eq. 7 and Appendix
B.4 of Qu, Li, Zhao and Gu, NeurIPS 2022).

The self-paced support vector classifier minimizes over ``(w, b)`` and ``v in [0, 1]^n``

.. math::

    \tfrac12 \|w\|_{\mathcal H}^2 + \sum_{i=1}^n \bigl[ v_i \, \ell_i(w, b) + f(v_i, \lambda)
    \bigr], \qquad \ell_i = C \max\{0, g_i\}, \quad g_i = 1 - y_i(\langle \phi(x_i), w\rangle
    + b)                                                                              \qquad (7)

with a self-paced regularizer ``f`` (linear or mixture,
:func:`~pathlib_core.gaga.regularizers.sp_weights`). For fixed ``v`` this is the weighted
SVM; its dual is the box QP

.. math::

    \min_\alpha \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha \quad \text{s.t.} \quad
    0 \le \alpha_i \le C v_i, \quad y^\top \alpha = 0, \qquad Q = \mathrm{diag}(y) K
    \mathrm{diag}(y),

and ``w = sum_i alpha_i y_i phi(x_i)``, ``g = 1 - Q alpha - y b`` (eq. 21 of Appendix B.4,
``alpha = C v * t``), solved exactly by :func:`svm_weighted_fit`. A *partial optimum* at age
``lambda`` is a dual pair ``(alpha, b)`` that is a KKT point of the weighted dual with the
weights ``v = v*(l(alpha, b), lambda)`` of its own losses; :func:`svm_partial_optimum_residual`
measures this certificate.

Numerics. The engines work on the kernel divided by ``kappa``, the power of 4 nearest to its
largest diagonal entry (:class:`_ScaledSVM`), with ``kappa C``, the multipliers ``kappa
alpha`` and the age times ``kappa`` (linear) or ``sqrt(kappa)`` (mixture, ``mixture``
likewise): the same problem, mapped back exactly (features scaled by powers of two give the
same path bit for bit). The certificate measures each margin against the size of its terms
and each multiplier against its box.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..core.exceptions import SolverError
from ..core.kernels import Kernel, gamma_value, linear_kernel, rbf_kernel
from ..core.qp import solve_qp
from ..core.threads import single_blas_thread
from ..core.validation import as_binary_labels, as_matrix, as_vector, finite_scalar, positive_scalar
from .docstrings import fill_doc
from .linear_models import WeightedFitResult
from .regularizers import PATH_REGULARIZERS, _check_reg, _sp_slope, sp_weights
from .scaling import _pow4

__all__ = ["SVMSolution", "svm_weighted_fit", "svm_partial_optimum_residual"]


_N, _Z, _P, _M, _D = 0, 1, 2, 3, 4  # sample sets: E_N, E_Z, E_P, M (mixture), D


@dataclass
class SVMSolution:
    """A point of the SVM age-path.

    Attributes
    ----------
    coef : ndarray (d,) or None
        ``w = X' (alpha * y)`` for the linear kernel; ``None`` for other kernels.
    dual_coef : ndarray (n,)
        ``alpha * y``: the decision function is ``K(x, X) @ dual_coef + intercept``.
    intercept : float
    weights : ndarray (n,)
        The sample weights ``v = v*(l, age)`` on the branch of the current sets.
    alpha : ndarray (n,)
        The dual variables (``0 <= alpha <= C v``).
    """

    coef: np.ndarray | None
    dual_coef: np.ndarray
    intercept: float
    weights: np.ndarray
    alpha: np.ndarray


#: Kernel names the SVM functions accept (a :class:`~pathlib_core.core.kernels.Kernel` works too)
SVM_KERNELS = ("linear", "rbf", "precomputed")


def kernel_width(X, gamma) -> float:
    """The RBF width (:func:`~pathlib_core.core.kernels.gamma_value`; ``"scale"`` only)."""
    return gamma_value(gamma, X, choices=("scale",))


def check_kernel(kernel) -> None:
    """``kernel`` is one of :data:`SVM_KERNELS` or a :class:`~pathlib_core.core.kernels.Kernel`
    (``None`` means ``"linear"``)."""
    if kernel is None or isinstance(kernel, Kernel):
        return
    if not (isinstance(kernel, str) and kernel in SVM_KERNELS):
        raise ValueError(f"kernel must be one of {SVM_KERNELS} or a "
                         f"pathlib_core.core.kernels.Kernel; got {kernel!r}")


def kernel_matrix(X, Y, kernel, width: float | None) -> np.ndarray:
    """``K(X, Y)`` for a checked ``kernel`` (:func:`check_kernel`) and RBF ``width``; with
    ``kernel="precomputed"`` ``X`` already is the kernel matrix and is returned."""
    if kernel is None or kernel == "linear":
        return linear_kernel(X, Y)
    if isinstance(kernel, Kernel):
        return kernel(X, Y)
    if kernel == "rbf":
        return rbf_kernel(X, Y, gamma=width)
    return X


def _gram(X, kernel, gamma):
    """The training kernel matrix and whether the kernel is linear (``coef`` reported)."""
    check_kernel(kernel)
    if kernel == "precomputed" or (isinstance(kernel, Kernel) and kernel.name == "precomputed"):
        if X.shape[0] != X.shape[1]:
            raise ValueError("X must be the square training kernel matrix with "
                             f"kernel='precomputed'; got shape {X.shape}")
        return X, False
    width = kernel_width(X, gamma) if kernel == "rbf" else None
    K = kernel_matrix(X, None, kernel, width)
    return K, kernel is None or kernel == "linear" or (
        isinstance(kernel, Kernel) and kernel.name == "linear")


class _SVM:
    """The weighted SVM dual for one data set, kernel and ``C``."""

    def __init__(self, K, y, C, regularizer, mixture, mult=None):
        self.K, self.y, self.C = K, y, C
        # a row standing for m identical samples (same x, same y) has the bound m C v
        self.m = np.ones(y.size) if mult is None else np.asarray(mult, float)
        self.Cv = C * self.m
        self.Q = (y[:, None] * K) * y[None, :]
        self.n = y.size
        self.reg, self.mixture = regularizer, mixture
        self.absQ = np.abs(self.Q)
        # the natural unit of alpha_i: the change that moves some margin by 1,
        # 1 / max_j |Q_ij| (a zero kernel row: the largest entry of Q, else 1)
        qrow = np.max(self.absQ, axis=1) if self.n else np.zeros(0)
        qmax = float(np.max(qrow, initial=0.0))
        self.aunit = 1.0 / np.where(qrow > 0, qrow, qmax if qmax > 0 else 1.0)

    def g(self, z):
        """Margin violations ``g = 1 - Q alpha - y b`` (``z = (alpha, b)``)."""
        return 1.0 - self.Q @ z[:-1] - self.y * z[-1]

    def losses(self, z):
        return self.C * np.maximum(0.0, self.g(z))

    def v(self, z, age):
        return sp_weights(self.losses(z), age, regularizer=self.reg, mixture=self.mixture)

    def units(self, ub) -> np.ndarray:
        """Per-coordinate unit of ``alpha``: the box width ``ub_i`` when it is smaller than
        the natural unit ``1 / max_j |Q_ij|``."""
        return np.where(ub > 0, np.minimum(ub, self.aunit), self.aunit)

    def violations(self, z, v, vslope=None) -> np.ndarray:
        """Per-sample KKT violations of ``z`` for the weighted dual with weights ``v``, each
        against its own scale (then ``|y' alpha|`` against ``sum |alpha_i|``, last).

        With ``g = 1 - Q alpha - y b`` and ``s_i = 1 + (|Q| |alpha|)_i + |b|`` (the size of
        the terms of ``g_i``) and the box ``[0, u_i]``, ``u_i = C m_i v_i``: the upper
        bound is measured in ``nu_i = u_i + C m_i |dv_i/dl| C s_i`` (the box width plus the
        rounding of ``u_i`` through the loss; ``vslope`` holds ``|dv/dl|``, 0 if not
        given), the lower bound in ``min(nu_i, 1 / max_j |Q_ij|)`` (the change of
        ``alpha_i`` that moves some margin by 1), ``1 / max_j |Q_ij|`` for both where
        ``nu_i = 0``. Infeasibility ``(alpha_i - u_i)_+`` and ``(-alpha_i)_+``; where
        ``g_i > 0`` (``alpha_i`` must be ``u_i``) the smaller of ``g_i / s_i`` and the
        relative slack ``(u_i - alpha_i)_+``, where ``g_i < 0`` (``alpha_i`` must be 0) the
        smaller of ``-g_i / s_i`` and ``alpha_i`` relative (complementarity, as in
        :mod:`pathlib_core.core.kkt`). A computed optimum gives rounding level; the ratios do not
        change when ``(K, C)`` is rescaled to ``(s K, C / s)`` with ``alpha / s`` (and the
        age with the losses).
        """
        a = z[:-1]
        g, s, ub, nu_lo, nu_up = self._scales(z, v, vslope)
        infeas = np.maximum(np.maximum(-a / nu_lo, (a - ub) / nu_up), 0.0)
        comp = np.where(g > 0, np.minimum(g / s, np.maximum(ub - a, 0.0) / nu_up),
                        np.minimum(-g / s, np.maximum(a, 0.0) / nu_lo))
        tot = float(np.sum(np.abs(a)))
        eq = abs(float(self.y @ a)) / tot if tot > 0 else 0.0
        return np.r_[np.maximum(infeas, comp), eq]

    def _scales(self, z, v, vslope):
        """``g``, the size ``s`` of its terms, the upper bounds ``u`` and the units of
        ``alpha`` at its lower and upper bound (see :meth:`violations`)."""
        a, b = z[:-1], z[-1]
        ub = self.Cv * v
        g = 1.0 - self.Q @ a - self.y * b
        s = 1.0 + self.absQ @ np.abs(a) + abs(b)
        # the unit of alpha_i at the margins: the change that moves some g_j by its own
        # scale s_j, min_j s_j / |Q_ji| (1 / max_j |Q_ij| when the multipliers are small)
        qs = np.max(self.absQ / s[:, None], axis=0)
        unit = np.divide(1.0, qs, out=self.aunit.copy(), where=qs > 0)
        r_u = 0.0 if vslope is None else self.Cv * vslope * self.C * s  # rounding of u
        nu_up = ub + r_u
        nu_up = np.where(nu_up > 0, nu_up, unit)
        nu_lo = np.minimum(nu_up, unit)
        # at a threshold of v* (u within 1e-8 of its own rounding scale of 0) the target of
        # alpha_i is u_i, known only to that rounding: alpha_i < 0 is measured against it
        nu_lo = np.where(ub <= 1e-8 * r_u, np.maximum(nu_lo, r_u), nu_lo)
        return g, s, ub, nu_lo, nu_up

    def kkt(self, z, v, vslope=None) -> float:
        """The largest of :meth:`violations` (0 exactly at a KKT point)."""
        return float(np.max(self.violations(z, v, vslope)))

    def certificate(self, z, age) -> float:
        """The partial-optimum residual: :meth:`kkt` with ``v = v*(l(z), age)`` and its
        slope (on either side of a threshold within rounding of it)."""
        loss = self.losses(z)
        v = sp_weights(loss, age, regularizer=self.reg, mixture=self.mixture)
        return self.kkt(z, v, _sp_slope(loss, age, self.reg, self.mixture, widen=1e-8))

    def weighted_fit(self, v, z0=None):
        """Solve the weighted dual exactly (active set); returns ``z = (alpha, b)``."""
        ub = self.Cv * np.asarray(v, float)
        warm = None if z0 is None else np.clip(z0[:-1], 0.0, ub)
        if warm is not None and abs(float(self.y @ warm)) > 1e-12 * float(np.sum(warm)):
            warm = None
        res = solve_qp(self.Q, -np.ones(self.n), A=self.y[None, :], b=np.zeros(1),
                       lb=np.zeros(self.n), ub=ub, warm_start=warm, tol=1e-13)
        if res.status != "optimal":
            cmax = float(np.max(ub, initial=0.0)) * float(np.max(np.abs(np.diag(self.K))))
            raise SolverError(
                f"weighted SVM dual: solver status {res.status!r} (C v max K = {cmax:.1e}; "
                "far above 1 the dual is a nearly hard-margin problem whose multipliers at "
                "their bounds cancel in the margins: rescale the features or use a smaller "
                "C)")
        a = np.clip(res.x, 0.0, ub)
        return np.r_[a, self._intercept(a, ub, float(res.nu[0]))]

    def _intercept(self, a, ub, b0):
        """An intercept consistent with the KKT conditions: the mean over free SVs, else the
        midpoint of the interval the bounded samples allow (``b0`` when it lies in it)."""
        f = self.Q @ a  # y_i * (K (alpha y))_i
        tol = 1e-9 * self.units(ub)
        free = (a > tol) & (a < ub - tol)
        if np.any(free):
            return float(np.mean(self.y[free] * (1.0 - f[free])))
        # g_i <= 0 for alpha_i = 0 (ub > 0): y_i b >= 1 - f_i; g_i >= 0 at alpha_i = ub > 0
        lo, hi = -np.inf, np.inf
        s = (1.0 - f) * self.y  # b = s_i puts g_i = 0
        at0 = (a <= tol) & (ub > 0)
        atu = (a >= ub - tol) & (ub > 0)
        for mask, sign in ((at0, 1.0), (atu, -1.0)):
            up = mask & (self.y * sign > 0)  # y b >= ... for y = +1: b >= s
            dn = mask & (self.y * sign < 0)
            if np.any(up):
                lo = max(lo, float(np.max(s[up])))
            if np.any(dn):
                hi = min(hi, float(np.min(s[dn])))
        if lo <= b0 <= hi:
            return b0
        if np.isfinite(lo) and np.isfinite(hi):
            return 0.5 * (lo + hi)
        return lo if np.isfinite(lo) else (hi if np.isfinite(hi) else b0)

    # -- the smooth system of a piece ---------------------------------------------------
    def partition(self, z, age) -> np.ndarray:
        """Sample sets at ``z``: a margin point (``E_Z``) where ``g_i`` vanishes (relative
        to its terms, ``|g_i| <= 1e-10 s_i``) or holds better than either bound of
        ``alpha_i`` (``|g_i| / s_i`` below the relative slack ``min(alpha_i, u_i -
        alpha_i) / nu_i``, as in :meth:`violations`); else by the sign of ``g_i`` and the
        thresholds of ``v*``."""
        a = z[:-1]
        loss = self.losses(z)
        v = sp_weights(loss, age, regularizer=self.reg, mixture=self.mixture)
        g, s, ub, nu_lo, nu_up = self._scales(
            z, v, _sp_slope(loss, age, self.reg, self.mixture, widen=1e-8))
        slack = np.maximum(np.minimum(a / nu_lo, (ub - a) / nu_up), 0.0)
        rel = np.abs(g) / s
        part = np.full(self.n, _N, dtype=np.int8)
        margin = (rel <= 1e-10) | (rel < slack)
        part[margin] = _Z
        part[~margin & (g > 0)] = _P
        if self.reg == "linear":
            part[(part == _P) & (loss >= age)] = _D
        else:
            s = np.sqrt(loss)
            lo = age * self.mixture / (age + self.mixture)
            part[(part == _P) & (s > lo)] = _M
            part[(part != _N) & (part != _Z) & (s >= age)] = _D
        # g = 0 with alpha at a bound that says otherwise is decided by alpha
        z0 = (part == _Z) & (a <= 1e-12 * self.aunit)
        part[z0 & (g < 0)] = _N
        return part


class _ScaledSVM:
    """The weighted SVM dual of the user's data with the kernel divided by ``kappa``, the
    power of 4 nearest to its largest diagonal entry (an exact operation).

    ``(K, C)`` and ``(K / kappa, kappa C)`` with ``alpha kappa`` are the same problem (the
    decision values ``K (alpha y)`` are unchanged); the losses ``C max(0, g)`` are
    ``kappa`` times larger inside, so the age is divided by ``age_factor = 1 / kappa``
    (linear regularizer) or ``1 / sqrt(kappa)`` (mixture, with ``mixture`` likewise).
    """

    def __init__(self, K, y, C, regularizer, mixture, mult=None):
        top = float(np.max(np.abs(np.diag(K)))) if K.size else 0.0
        self.kappa = _pow4(top) if math.isfinite(top) else 1.0
        root = math.sqrt(self.kappa)  # a power of two
        self.age_factor = 1.0 / (self.kappa if regularizer == "linear" else root)
        self.mixture = None if mixture is None else mixture * root
        self.svm = _SVM(K / self.kappa, y, C * self.kappa, regularizer, self.mixture, mult)

    def alpha_to_user(self, a):
        return a / self.kappa


def validate_svm(X, y, regularizer, C, mixture, kernel, gamma):
    """Checked ``X``, labels in {-1, +1}, ``C``, ``mixture``, the kernel matrix and whether
    the kernel is linear."""
    X = as_matrix(X, "X")
    y = as_binary_labels(y, "y", length=X.shape[0], length_of="X")
    if regularizer not in PATH_REGULARIZERS:
        raise ValueError(f"regularizer must be one of {PATH_REGULARIZERS} for the SVM "
                         f"age-path; got {regularizer!r}")
    mixture = _check_reg(regularizer, mixture)
    C = positive_scalar(1.0 if C is None else C, "C")
    K, is_linear = _gram(X, kernel, gamma)
    return X, y, C, mixture, K, is_linear


@fill_doc
@single_blas_thread
def svm_weighted_fit(X, y, v, *, C=1.0, kernel="linear", gamma="scale"):
    r"""Weighted SVM ``1/2 ||w||^2 + C sum_i v_i max(0, g_i)`` by its dual (decision
    function ``K(x, X) @ (alpha * y) + b``).

    The ``w``-step of alternate convex search for the self-paced SVM (7) at fixed weights:

    .. math::

        \min_{w, b} \; \tfrac12 \|w\|_{\mathcal H}^2
            + C \sum_{i=1}^n v_i \max\bigl(0,\, 1 - y_i(\langle\phi(x_i), w\rangle + b)\bigr),

    solved exactly (active-set QP) through the dual box QP of the module docstring with the
    bounds :math:`0 \le \alpha_i \le C v_i`. The intercept is the mean of
    ``y_i (1 - (Q alpha)_i)`` over the free support vectors, or, without any, a value
    consistent with the KKT conditions of the bounded ones.

    Parameters
    ----------
    {svm_data}
    v : array_like of shape (n,)
        Sample weights in :math:`[0, 1]`.
    {hinge_C}
    {kernel_parameters}

    Returns
    -------
    WeightedFitResult
        ``dual_coef`` (the dual variables ``0 <= alpha_i <= C v_i``), ``intercept`` (the bias
        ``b``), ``objective`` (the primal value) and, for ``kernel="linear"``, ``coef``
        (``w = X' (alpha * y)``).

    Raises
    ------
    ValueError
        Weights outside :math:`[0, 1]` or other bad input, naming the argument.
    SolverError
        (a ``RuntimeError``) The QP solver did not report an optimal solution.
    """
    X, y, C, _, K, is_linear = validate_svm(X, y, "linear", C, None, kernel, gamma)
    v = as_vector(v, "v", length=X.shape[0], length_of="X")
    if np.any(v < 0) or np.any(v > 1):
        raise ValueError("v must lie in [0, 1]")
    sc = _ScaledSVM(K, y, C, "linear", None)
    z = sc.svm.weighted_fit(v)
    alpha, b = sc.alpha_to_user(z[:-1]), float(z[-1])
    ay = alpha * y
    f = K @ ay + b
    objective = 0.5 * float(ay @ (f - b)) + C * float(v @ np.maximum(0.0, 1.0 - y * f))
    coef = X.T @ ay if is_linear else None
    return WeightedFitResult(coef=coef, intercept=b, objective=objective, dual_coef=alpha)


@fill_doc
def svm_partial_optimum_residual(X, y, alpha, intercept, age, *, regularizer, C=1.0,
                                 mixture=None, kernel="linear", gamma="scale") -> float:
    r"""Partial-optimum certificate of a dual pair ``(alpha, b)`` at ``age``: the KKT
    conditions of the weighted dual with ``v = v*(l(alpha, b), age)``, each against its own
    scale (zero exactly at a partial optimum, rounding level at a computed one).

    With the margin violations :math:`g = 1 - Q\alpha - y b`, the size of their terms
    :math:`s = 1 + |Q||\alpha| + |b|`, the losses :math:`\ell_i = C\max(0, g_i)`,
    :math:`v = v^*(\ell, \lambda)` and the box :math:`[0, u_i]`, :math:`u_i = C v_i`:

    - where :math:`g_i > 0` (:math:`\alpha_i` must be :math:`u_i`) the smaller of
      :math:`g_i / s_i` and :math:`(u_i - \alpha_i)_+ / \nu^+_i`; where :math:`g_i < 0`
      (:math:`\alpha_i` must be 0) the smaller of :math:`-g_i / s_i` and
      :math:`(\alpha_i)_+ / \nu^-_i` (complementarity, as in :mod:`pathlib_core.core.kkt`);
    - infeasibility :math:`(\alpha_i - u_i)_+ / \nu^+_i` and :math:`(-\alpha_i)_+ /
      \nu^-_i`;
    - :math:`|y^\top\alpha| / \sum_i |\alpha_i|`;

    with :math:`\nu^+_i = u_i + C |dv_i/d\ell|\, C s_i` (the box width plus the rounding
    of :math:`u_i` through the loss) and :math:`\nu^-_i = \min(\nu^+_i, \min_j s_j /
    |Q_{ji}|)` (the change of :math:`\alpha_i` that moves some margin by its own scale);
    at a threshold of :math:`v^*` (a loss within ``1e-8`` of it) the slope of either side
    counts. The ratios do not change when the kernel is rescaled with ``C`` and the age (``(s
    K, C / s)`` gives ``alpha / s``), and a point moved by ``d`` (relative) in the direction
    that adds up in a margin moves that condition by ``d`` times the share of
    :math:`|Q||\alpha|` in :math:`s_i`.

    Parameters
    ----------
    {svm_data}
    alpha : array_like of shape (n,)
        Dual variables to check.
    intercept : float
        Bias ``b`` (finite).
    age : float > 0
        The age :math:`\lambda`.
    regularizer : {"linear", "mixture"}
        SP-regularizer defining :math:`v^*` (:func:`~pathlib_core.gaga.regularizers.sp_weights`).
    {hinge_C}
    {mixture}
    {kernel_parameters}

    Returns
    -------
    float
        The relative residual (``>= 0``).

    Raises
    ------
    ValueError
        Bad input, naming the argument (including an ``intercept`` that is not a finite
        real number).
    """
    X, y, C, mixture, K, _ = validate_svm(X, y, regularizer, C, mixture, kernel, gamma)
    alpha = as_vector(alpha, "alpha", length=X.shape[0], length_of="X")
    intercept = finite_scalar(intercept, "intercept")
    age = positive_scalar(age, "age")
    return _SVM(K, y, C, regularizer, mixture).certificate(np.r_[alpha, intercept], age)


class _SVMCertificate:
    """The partial-optimum residual of a record at an age, in the user's units."""

    def __init__(self, user: _SVM):
        self.user = user

    def __call__(self, t, rec) -> float:
        return self.user.certificate(np.r_[rec.alpha, rec.intercept], t)
