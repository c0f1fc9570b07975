r"""Self-paced SVM and its exact age-path (Proposition 1 of Qu, Li, Zhao and Gu, NeurIPS 2022).

The self-paced support vector classifier minimizes over ``(w, b)`` and ``v in [0, 1]^n``

.. math::

    \tfrac12 \|w\|_{\mathcal H}^2 + \sum_{i=1}^n \bigl[ v_i \, \ell_i(w, b) + f(v_i, \lambda)
    \bigr], \qquad \ell_i = C \max\{0, g_i\}, \quad g_i = 1 - y_i(\langle \phi(x_i), w\rangle
    + b)                                                                              \qquad (7)

with a self-paced regularizer ``f`` (linear or mixture, :func:`pathlib_core.gaga.spl.sp_weights`).
For fixed ``v`` this is the weighted SVM; its dual is the box QP

.. math::

    \min_\alpha \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha \quad \text{s.t.} \quad
    0 \le \alpha_i \le C v_i, \quad y^\top \alpha = 0, \qquad Q = \mathrm{diag}(y) K
    \mathrm{diag}(y),

and ``w = sum_i alpha_i y_i phi(x_i)``, ``g = 1 - Q alpha - y b`` (eq. 21 of Appendix B.4,
``alpha = C v * t``). A *partial optimum* at age ``lambda`` is a dual pair ``(alpha, b)`` that
is a KKT point of the weighted dual with the weights ``v = v*(l(alpha, b), lambda)`` of its own
losses; :func:`svm_partial_optimum_residual` measures this certificate.

Sample sets (Section 4.1). The paper splits the easy set ``E`` by the sign of ``g``:

========  ===================================  =========================================
set       condition                            dual variable
========  ===================================  =========================================
``E_N``   ``g_i < 0``                          ``alpha_i = 0``
``E_Z``   ``g_i = 0``                          ``0 <= alpha_i <= C`` (free)
``E_P``   ``0 < g_i``, ``v_i`` on its E branch  ``alpha_i = C v_i`` (linear:
                                               ``C (1 - C g_i / lambda)``; mixture: ``C``)
``M``     mixture only: interior branch        ``alpha_i = C (gamma / sqrt(l_i) - gamma /
                                               lambda)``
``D``     ``l_i >= lambda``                    ``alpha_i = 0``
========  ===================================  =========================================

On a piece where the sets stay fixed, ``(alpha_F, b)`` with ``F = E_Z + E_P`` (linear) or
``F = E_Z + M`` (mixture) solves a smooth system ``F(alpha, b, lambda) = 0``; the implicit
function theorem gives the ODEs (8) (linear) and (9) (mixture). We scale the rows of the
``E_P`` / ``M`` equations so that the Jacobian is the *symmetric* saddle matrix

.. math::

    J = \begin{pmatrix} 0 & y_F^\top \\ y_F & Q_{FF} - \mathrm{diag}(d_F) \end{pmatrix},
    \qquad d_i = 0 \ (E_Z), \quad d_i = \lambda / C^2 \ (E_P, \text{linear}), \quad
    d_i = 2 \ell_i^{3/2} / (C^2 \gamma) \ (M),

(the paper's matrices in (8) / (9), rows scaled), so that its inertia can be tracked: an
eigenvalue of ``J`` crossing zero is a fold of the branch, i.e. a jump point. Critical points
are sign changes of ``g_i`` (``E_N``/``E_Z``/``E_P``), ``alpha_i`` reaching ``0`` or ``C`` in
``E_Z``, the set thresholds of ``v*``, and folds. The path is integrated with
:func:`pathlib_core.core.ode_path.follow_path` and Newton-corrected on the system itself; all
violators at a critical point are reassigned together, and an inconsistent reassignment (or a
fold) is a jump point re-solved by warm alternate convex search (Algorithm 3, Appendix C.1).

Numerics. The engine works on the kernel divided by ``kappa``, the power of 4 nearest to its
largest diagonal entry, with ``kappa C``, the multipliers ``kappa alpha`` and the age times
``kappa`` (linear) or ``sqrt(kappa)`` (mixture, ``gamma`` likewise; the losses are ``kappa``
times larger inside): the same
problem, mapped back exactly (features scaled by powers of two give the same path bit for
bit). The sets, the events and the certificate (:func:`svm_partial_optimum_residual`)
measure each margin against the size of its terms and each multiplier against its box, so a
margin at zero to rounding neither fires nor decides a set. A start whose margins are sums of
terms more than 1e8 times the margin (``C max K`` huge on samples that are not separable)
cannot be resolved in double precision and is reported (:class:`IllPosedError`).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from ..core.kernels import Kernel, linear_kernel
from ..core.ode_path import Update, follow_path
from ..core.qp import solve_qp
from ..core.threads import single_blas_thread
from ..core.validation import as_binary_labels, as_matrix, as_vector, finite_scalar, positive_scalar
from .spl import (
    PATH_REGULARIZERS,
    DegenerateStartError,
    _check_acs_controls,
    _check_reg,
    _map_path,
    _pow4,
    _sp_slope,
    candidate_ages,
    sp_weights,
)

__all__ = ["SVMSolution", "IllPosedError", "svm_age_path", "svm_acs", "svm_acs_path",
           "svm_weighted_fit", "svm_partial_optimum_residual", "SelfPacedSVC"]

_N, _Z, _P, _M, _D = 0, 1, 2, 3, 4  # sample sets: E_N, E_Z, E_P, M (mixture), D
_ZERO_EIG = 1e-9  # |eig J| below this (relative) is a structural zero (exact degeneracy)
#: margins and multipliers cross their bounds (an event) only beyond this relative rounding
_NOISE = 1e-12


class IllPosedError(ValueError):
    """The weighted SVM dual at the start of the path cannot be resolved in double
    precision (its margins cancel to fewer than 8 significant digits)."""


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


def _kernel(X, kernel):
    if kernel is None or (isinstance(kernel, str) and kernel == "linear"):
        return linear_kernel(X), True
    if isinstance(kernel, Kernel):
        if kernel.name == "precomputed":
            raise ValueError("kernel: a precomputed kernel is not supported; pass X and a "
                             "Kernel such as kernel_from_name('rbf', gamma=...)")
        return kernel(X), kernel.name == "linear"
    raise ValueError("kernel must be None, 'linear' or a pathlib_core.core.kernels.Kernel (e.g. "
                     f"kernel_from_name('rbf', gamma=0.5)); got {kernel!r}")


class _SVM:
    """The weighted SVM dual for one data set, kernel and ``C``."""

    def __init__(self, K, y, C, regularizer, gamma, mult=None):
        self.K, self.y, self.C = K, y, C
        # a row standing for m identical samples (same x, same y) has the bound m C v
        self.m = np.ones(y.size) if mult is None else np.asarray(mult, float)
        self.Cv = C * self.m
        self.Q = (y[:, None] * K) * y[None, :]
        self.n = y.size
        self.reg, self.gamma = regularizer, gamma
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
        return sp_weights(self.losses(z), age, regularizer=self.reg, gamma=self.gamma)

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
        v = sp_weights(loss, age, regularizer=self.reg, gamma=self.gamma)
        return self.kkt(z, v, _sp_slope(loss, age, self.reg, self.gamma, widen=1e-8))

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
            raise RuntimeError(
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
        v = sp_weights(loss, age, regularizer=self.reg, gamma=self.gamma)
        g, s, ub, nu_lo, nu_up = self._scales(
            z, v, _sp_slope(loss, age, self.reg, self.gamma, widen=1e-8))
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
            lo = age * self.gamma / (age + self.gamma)
            part[(part == _P) & (s > lo)] = _M
            part[(part != _N) & (part != _Z) & (s >= age)] = _D
        # g = 0 with alpha at a bound that says otherwise is decided by alpha
        z0 = (part == _Z) & (a <= 1e-12 * self.aunit)
        part[z0 & (g < 0)] = _N
        return part


@dataclass(frozen=True)
class _State:
    part: np.ndarray
    n_neg: int = 0    # negative eigenvalues of J on this piece
    n_zero: int = 0   # structural zero eigenvalues (duplicates, a low-rank kernel)
    # relative distance to a fold below which the fold event fires: fold_tol, or half the
    # smallest non-structural |eig J| / max |eig J| when a piece starts closer than fold_tol
    # (a jump can land on a branch that is merely ill-conditioned there; it is a fold only
    # if the eigenvalue keeps shrinking toward zero)
    fold_floor: float | None = None


class _SVMGAGA:
    def __init__(self, svm: _SVM, fold_tol, jump_deltas):
        self.s = svm
        self.fold_tol = fold_tol
        self.jump_deltas = jump_deltas
        self.n_acs_iter = 0
        self.n_fallbacks = 0
        self.jumps: list[dict] = []
        self._pending_kkt = False
        self._in_fallback = False
        self._last_turn = None
        #: age_user = age_factor * age and alpha_user = alpha_factor * alpha (the engine's
        #: rescaled kernel, for reports in the user's units)
        self.age_factor = 1.0
        self.alpha_factor = 1.0
        self._recent: list[tuple[float, tuple]] = []

    # sets
    def free(self, st: _State) -> np.ndarray:
        return np.flatnonzero((st.part == _Z) | (st.part == (_P if self.s.reg == "linear"
                                                              else _M)))

    def fixed_alpha(self, st: _State) -> np.ndarray:
        """Values of the dual variables not in ``F`` (0, or ``C`` on ``E_P`` (mixture))."""
        a = np.zeros(self.s.n)
        if self.s.reg == "mixture":
            a[st.part == _P] = self.s.Cv[st.part == _P]
        return a

    def state_from(self, z, t) -> _State:
        return self._with_inertia(_State(self.s.partition(z, t)), z, t)

    def _with_inertia(self, st: _State, z, t) -> _State:
        w = np.linalg.eigvalsh(self.jac(t, z, st))
        wmax = max(float(np.max(np.abs(w))), 1e-300)
        tiny = _ZERO_EIG * wmax
        aw = np.abs(w[np.abs(w) > tiny])
        floor = min(self.fold_tol, 0.5 * float(aw.min()) / wmax) if aw.size else self.fold_tol
        return _State(st.part, int(np.sum(w < -tiny)), int(np.sum(np.abs(w) <= tiny)), floor)

    def _d(self, t, z, st, F):
        """The diagonal ``d_F`` of ``J`` and the (scaled) equations' pieces."""
        s = self.s
        part = st.part[F]
        d = np.zeros(F.size)
        if s.reg == "linear":
            d[part == _P] = t / (s.C * s.Cv[F[part == _P]])
        else:
            m = part == _M
            loss = np.maximum(s.losses(z)[F[m]], 1e-100)
            d[m] = 2.0 * loss ** 1.5 / (s.C * s.Cv[F[m]] * s.gamma)
        return d

    def system(self, t, z, st: _State, *, scales: bool = False):
        """``(F, dF/dlambda)`` of the scaled equations on the free set (first row: ``y'a``);
        with ``scales``, also the size of each equation's terms (its rounding scale)."""
        s = self.s
        F = self.free(st)
        a = z[:-1]
        gF = s.g(z)[F]
        part = st.part[F]
        res = np.empty(F.size + 1)
        dlam = np.zeros(F.size + 1)
        res[0] = s.y @ a
        r = -gF  # E_Z: (Q a)_i + y_i b - 1 = 0
        if s.reg == "linear":
            p = part == _P
            # alpha_i = C (1 - C g_i / t)  <=>  -g_i + t / C - t alpha_i / C^2 = 0
            cp = s.C * s.Cv[F[p]]
            r[p] = -gF[p] + t / s.C - t * a[F[p]] / cp
            dlam[1:][p] = 1.0 / s.C - a[F[p]] / cp
        else:
            m = part == _M
            loss = np.maximum(s.C * gF[m], 1e-100)  # M has l > 0; guards Newton trials
            cm = s.Cv[F[m]]
            c = s.C * cm * s.gamma / (2.0 * loss ** 1.5)
            # alpha_i = C gamma (l^-1/2 - 1/t), divided by -c_i (c_i = d v-term / d g)
            r[m] = -(a[F[m]] - cm * s.gamma / np.sqrt(loss) + cm * s.gamma / t) / c
            dlam[1:][m] = (cm * s.gamma / t ** 2) / c
        res[1:] = r
        if not scales:
            return res, dlam, F
        sc = np.empty(F.size + 1)
        sc[0] = float(np.sum(np.abs(a)))
        sF = 1.0 + s.absQ[F] @ np.abs(a) + abs(z[-1])
        if s.reg == "linear":
            sF[p] += t / s.C + t * np.abs(a[F[p]]) / cp
        else:
            sF[m] = (np.abs(a[F[m]]) + cm * s.gamma / np.sqrt(loss) + cm * s.gamma / t) / c
        sc[1:] = sF
        return res, dlam, F, sc

    def jac(self, t, z, st: _State):
        F = self.free(st)
        d = self._d(t, z, st, F)
        J = np.zeros((F.size + 1, F.size + 1))
        J[0, 1:] = self.s.y[F]
        J[1:, 0] = self.s.y[F]
        J[1:, 1:] = self.s.Q[np.ix_(F, F)] - np.diag(d)
        return J

    def _unknowns(self, z, F):
        return np.r_[z[-1], z[:-1][F]]

    def _set_unknowns(self, z, F, u):
        out = z.copy()
        out[-1] = u[0]
        out[:-1][F] = u[1:]
        return out

    def rhs(self, t, z, st: _State):
        _, dlam, F = self.system(t, z, st)
        J = self.jac(t, z, st)
        du = None
        if st.n_zero == 0:
            try:
                du = -np.linalg.solve(J, dlam)
            except np.linalg.LinAlgError:
                du = None
        if du is None:  # singular but consistent (dual degeneracy): minimum-norm direction
            du = -np.linalg.lstsq(J, dlam, rcond=_ZERO_EIG)[0]
        out = np.zeros_like(z)
        out[-1] = du[0]
        out[:-1][F] = du[1:]
        return out

    def state_residual(self, t, z, st: _State) -> float:
        """The piece's equations at ``z``, each against the size of its terms."""
        res, _, _, sc = self.system(t, z, st, scales=True)
        r = np.divide(np.abs(res), sc, out=np.zeros_like(res), where=sc > 0)
        return float(np.max(r))

    def residual(self, t, z, st=None) -> float:
        return self.s.certificate(z, t)

    def events(self, t, z, st: _State):
        s = self.s
        a = z[:-1]
        loss = s.losses(z)
        # every condition in the units of the certificate (violations): g relative to the
        # size of its terms, alpha_i in the units of its lower and upper bound
        g, sz, _, nu_lo, nu_up = s._scales(
            z, sp_weights(loss, t, regularizer=s.reg, gamma=s.gamma),
            _sp_slope(loss, t, s.reg, s.gamma, widen=1e-8))
        part = st.part
        ev = np.ones(s.n)
        # (offset by _NOISE: a margin that stays at 0 to rounding, e.g. a margin point whose
        # kernel row depends on the others', does not fire on its rounding noise)
        gs = g / sz
        ev[part == _N] = _NOISE - gs[part == _N]
        zz = part == _Z
        ev[zz] = _NOISE + np.minimum(a[zz] / nu_lo[zz], (s.Cv[zz] - a[zz]) / nu_up[zz])
        if s.reg == "linear":
            p = part == _P
            ev[p] = np.minimum(_NOISE + gs[p], (t - loss[p]) / t)
            dd = part == _D
            ev[dd] = (loss[dd] - t) / t
        else:
            rt = np.sqrt(loss)
            lo = t * s.gamma / (t + s.gamma)
            p, m, dd = part == _P, part == _M, part == _D
            ev[p] = np.minimum(_NOISE + gs[p], (lo - rt[p]) / t)
            ev[m] = np.minimum(rt[m] - lo, t - rt[m]) / t
            ev[dd] = (rt[dd] - t) / t
        J = self.jac(t, z, st)
        fold = 1.0
        w = np.linalg.eigvalsh(J)
        scale = max(float(np.max(np.abs(w))), 1e-300)
        q = st.n_neg
        ftol = self.fold_tol if st.fold_floor is None else st.fold_floor
        if q + st.n_zero < w.size:  # the structural zeros sit between the two groups
            fold = min(fold, w[q + st.n_zero] / scale - ftol)
        if q > 0:
            fold = min(fold, -w[q - 1] / scale - ftol)
        return np.r_[ev, fold, -1.0 if self._pending_kkt else 1.0]

    def correct(self, t, z, st: _State):
        z = z.copy()
        for _ in range(30):
            res, _, F = self.system(t, z, st)
            J = self.jac(t, z, st)
            if not (np.all(np.isfinite(J)) and np.all(np.isfinite(res))):
                break
            # the Newton step of the system itself (a tiny diagonal d of E_P rows at a
            # very large C makes J nearly singular; a truncated least-squares step would
            # leave that direction's residual); least squares where J is singular
            try:
                step = np.linalg.solve(J, res) if st.n_zero == 0 else None
            except np.linalg.LinAlgError:
                step = None
            if step is None or not np.all(np.isfinite(step)):
                step = np.linalg.lstsq(J, res, rcond=None)[0]
            u = self._unknowns(z, F) - step
            z = self._set_unknowns(z, F, u)
            z[:-1][~np.isin(np.arange(self.s.n), F)] = self.fixed_alpha(st)[
                ~np.isin(np.arange(self.s.n), F)]
            if self.state_residual(t, z, st) <= 1e-13:
                break
        if self.state_residual(t, z, st) > 1e-10 and not self._in_fallback:
            # the sets no longer describe the solution: re-solve by ACS and let the "kkt"
            # event record a jump with the new sets
            self.n_fallbacks += 1
            self._in_fallback = True
            try:
                z, _, _ = _acs_newton(self, t, z)
                self._pending_kkt = True
            finally:
                self._in_fallback = False
        return z

    def _polish(self, t, z, st: _State):
        """``z`` Newton-corrected onto the piece's equations where the integration left it
        above 1e-12 (the records are exact to rounding, not to the integration
        tolerance)."""
        r0 = self.state_residual(t, z, st)
        if r0 <= 1e-12:
            return z
        new = self.correct_quiet(t, z, st)
        # (Newton steps in fixed sets know nothing of the sets' inequalities: the point is
        # kept only where the partial-optimum certificate improves too)
        if (self.state_residual(t, new, st) < r0
                and self.s.certificate(new, t) <= self.s.certificate(z, t)):
            return new
        return z

    def record(self, t, z, st: _State):
        z = self._polish(t, z, st)
        a = z[:-1].copy()
        v = self.s.v(z, t)
        return SVMSolution(None, a * self.s.y, float(z[-1]), v, a)

    # critical points
    def _switch(self, t, z, st: _State, fired):
        s = self.s
        part = st.part.copy()
        g = s.g(z)
        a = z[:-1]
        for k in fired:
            if k >= s.n:
                continue
            i = k
            loss = s.C * max(g[i], 0.0)
            if part[i] == _N:
                part[i] = _Z
            elif part[i] == _Z:
                part[i] = _N if a[i] < 0.5 * s.Cv[i] else _P
            elif part[i] == _P:
                if s.reg == "linear":
                    part[i] = _Z if g[i] < 0.5 * t / s.C else _D
                else:
                    lo = t * s.gamma / (t + s.gamma)
                    rt = math.sqrt(loss)
                    part[i] = _Z if rt < 0.5 * lo else _M
            elif part[i] == _M:
                lo = t * s.gamma / (t + s.gamma)
                rt = math.sqrt(loss)
                part[i] = _P if abs(rt - lo) < abs(rt - t) else _D
            else:  # D
                part[i] = _P if s.reg == "linear" else _M
        new = _State(part)
        z = z.copy()
        fixed = self.fixed_alpha(new)
        F = self.free(new)
        mask = np.ones(s.n, bool)
        mask[F] = False
        z[:-1][mask] = fixed[mask]
        return self._with_inertia(new, z, t), z

    def _consistent(self, t, z, st: _State, fired) -> bool:
        J = self.jac(t, z, st)
        w = np.abs(np.linalg.eigvalsh(J))
        # no eigenvalue approaching a fold; exact (structural) zeros are allowed when the
        # ODE's right-hand side lies in the range of J (checked below). A small eigenvalue
        # (relative size below fold_tol) that grows along the new piece is ill-conditioning,
        # not a fold (seen on noisy labels: 5.5e-7 at a margin entry, confirmed by ACS), and
        # neither is one whose linear extrapolation reaches zero only far away (> 1e-3 t)
        h = 1e-7 * t
        near = (w > _ZERO_EIG * w.max()) & (w <= self.fold_tol * w.max())
        if np.any(near):
            r0 = float(np.min(w[near])) / w.max()
            w1 = np.abs(np.linalg.eigvalsh(self.jac(t + h, z + h * self.rhs(t, z, st), st)))
            nz = w1 > _ZERO_EIG * w1.max()
            if not nz.any():
                return False
            shrink = r0 - float(np.min(w1[nz])) / w1.max()
            if shrink > 0 and r0 * h / shrink <= 1e-3 * t:
                return False
        if st.n_zero:
            _, dlam, _ = self.system(t, z, st)
            du = np.linalg.lstsq(J, dlam, rcond=_ZERO_EIG)[0]
            if np.max(np.abs(J @ du - dlam)) > 1e-9 * max(1.0, float(np.max(np.abs(dlam)))):
                return False
        if self.state_residual(t, z, st) > 1e-9:
            return False
        g0 = self.events(t, z, st)
        g1 = self.events(t + h, z + h * self.rhs(t, z, st), st)
        idx = np.asarray([k for k in fired if k < self.s.n], dtype=int)
        return bool(np.all((g1[idx] - g0[idx] > -1e-10 * h) | (g1[idx] > 1e-9)))

    def update(self, t, z, st: _State, fired):
        fired = [int(k) for k in fired]
        n = self.s.n
        info = {"fired": fired}
        self._check_chattering(t, fired)
        kept = self.s.v(z, t) > 0
        kept[[k for k in fired if k < n]] = True  # (at a threshold: may be kept just after)
        if np.unique(self.s.y[kept]).size < 2:
            raise RuntimeError(
                f"svm age_path: at age={t * self.age_factor:.10g} the partial optimum keeps "
                "samples of one class only (the losses of the other class all exceed the "
                "age, so their weights vanish): w = 0 and the intercept is not unique, so "
                "the path has no unique continuation beyond this age")
        if n + 1 in fired:
            self._pending_kkt = False
            self.jumps.append({"age": t, "reason": "kkt", **info})
            return Update(self.state_from(z, t), z, "jump", dict(info, reason="kkt"))
        # fired again at the same age right after a reassignment: only proper subsets
        again = self._last_turn is not None and self._last_turn[0] == t and bool(
            set(fired) & self._last_turn[1])
        if n not in fired:
            # all violators reassigned together (the paper's heuristic); on degenerate data
            # (several margin points on one hyperplane, a swap at one age) a subset may be
            # the consistent choice: proper subsets are tried next, largest first
            samples = [k for k in fired if k < n]
            options = [] if again else [samples]
            # (at most 6 violators: 62 subsets; more would be exponential, so a larger
            # simultaneous set that is inconsistent as a whole is a jump point)
            if (again or len(samples) >= 2) and len(samples) <= 6:
                options += [list(c) for r in range(len(samples) - 1, 0, -1)
                            for c in itertools.combinations(samples, r)]
            for move in options:
                st_new, z_new = self._switch(t, z, st, move)
                if again and np.array_equal(st_new.part, st.part):
                    continue
                if self._consistent(t, z_new, st_new, fired):
                    self._last_turn = (t, set(fired))
                    info = dict(info, moved=move) if move != samples else info
                    return Update(st_new, z_new, "turning", info)
        # an index that fires again at the same age right after its reassignment, with no
        # consistent subset, means neither side continues: restart (jump point)
        self._last_turn = None
        return self._jump(t, z, info)

    def _check_chattering(self, t, fired) -> None:
        """Raise when the same samples keep firing: in each of the last 40 events, within
        5% of the age. The continuation then alternates between sets at a degenerate point
        (or crawls along one by re-solves) instead of leaving it."""
        self._recent.append((t, tuple(fired)))
        if len(self._recent) > 40:
            self._recent.pop(0)
        if len(self._recent) < 40:
            return
        t_first = self._recent[0][0]
        common = set(self._recent[0][1]).intersection(*(set(f) for _, f in self._recent))
        if common and t - t_first <= 0.05 * t:
            idx = sorted(k for k in common if k < self.s.n)
            raise RuntimeError(
                f"svm age_path: at age={t * self.age_factor:.10g} sample(s) {idx} changed sets "
                f"40 times within a relative age interval of {(t - t_first) / t:.1e}: a "
                "degenerate point (a margin point at the bound of its box whose kernel row is "
                "numerically dependent on the other margin points', so that J is singular "
                "and neither set continues); the path has no consistent continuation here")

    def _distance(self, z2, z) -> float:
        """``max`` over the dual variables of ``|d alpha_i|`` in its natural unit, and of
        ``|d b|`` (margin units)."""
        return max(float(np.max(np.abs(z2[:-1] - z[:-1]) / self.s.aunit, initial=0.0)),
                   abs(float(z2[-1] - z[-1])))

    def _jump(self, t, z, info):
        outcomes = set()
        for delta in self.jump_deltas:
            t1 = t * (1 + delta)
            try:
                z1, k1, ok1 = _acs_newton(self, t1, z, max_iter=300)
                self.n_acs_iter += k1
                z2 = self.correct_quiet(t, z1, self.state_from(z1, t1))
                if self.s.certificate(z2, t) > 1e-10:
                    z2, k2, _ = _acs_newton(self, t, z1)
                    self.n_acs_iter += k2
            except RuntimeError as exc:  # a weighted dual the QP solver could not solve
                outcomes.add(str(exc))
                continue
            if self.s.certificate(z2, t) > 1e-10:
                outcomes.add("ACS did not reach a partial optimum")
                continue
            if self._distance(z2, z) > 1e-8:
                info = dict(info, delta=delta, acs_iterations=k1, acs_converged=ok1,
                            jump_size=max(float(np.max(np.abs(z2[:-1] - z[:-1])))
                                          * self.alpha_factor, abs(float(z2[-1] - z[-1]))))
                self.jumps.append({"age": t, **info})
                return Update(self.state_from(z2, t), z2, "jump", info)
            # the same solution: a degenerate turning point (dependent margin points) whose
            # continuation the sets of the ACS solution just after t describe
            st1 = self._with_inertia(_State(self.s.partition(z1, t1)), z2, t)
            if (self.state_residual(t, z2, st1) <= 1e-9
                    and self._consistent(t, z2, st1, info["fired"])):
                self._last_turn = (t, set(info["fired"]))
                return Update(st1, z2, "turning", dict(info, resolved_by_acs=True))
            outcomes.add("ACS returned to the current point and its sets do not continue")
        raise RuntimeError(
            f"svm age_path: no continuation found at age={t * self.age_factor:.10g}: the "
            "reassigned sets are inconsistent (or the branch folds) and warm ACS at ages "
            f"just above found no other partial optimum ({'; '.join(sorted(outcomes))})")

    def correct_quiet(self, t, z, st):
        self._in_fallback, old = True, self._in_fallback
        try:
            return self.correct(t, z, st)
        finally:
            self._in_fallback = old


def _acs_newton(g: _SVMGAGA, t, z, *, max_iter=3000, tol=1e-11):
    """Warm ACS at ``t`` (Algorithm 1); once the sets are stable, Newton steps on the
    piece's system in those sets (ACS alone converges only linearly)."""
    s = g.s
    v = s.v(z, t)
    prev, stable, next_try = None, 0, 2
    for k in range(1, max_iter + 1):
        z = s.weighted_fit(v, z)
        loss = s.losses(z)
        v = sp_weights(loss, t, regularizer=s.reg, gamma=s.gamma)
        if s.kkt(z, v, _sp_slope(loss, t, s.reg, s.gamma, widen=1e-8)) <= tol:
            return z, k, True
        key = s.partition(z, t).tobytes()
        if key != prev:
            prev, stable, next_try = key, 0, 2
            continue
        stable += 1
        if stable >= next_try:
            next_try *= 2
            cand = g.correct_quiet(t, z, g.state_from(z, t))
            if s.certificate(cand, t) <= tol:
                return cand, k, True
    return z, max_iter, False


def _validate(X, y, regularizer, C, gamma, kernel):
    X = as_matrix(X, "X")
    y = as_binary_labels(y, "y", length=X.shape[0], length_of="X")
    if regularizer not in PATH_REGULARIZERS:
        raise ValueError(f"regularizer must be one of {PATH_REGULARIZERS} for the SVM "
                         f"age-path; got {regularizer!r}")
    gamma = _check_reg(regularizer, gamma)
    C = positive_scalar(1.0 if C is None else C, "C")
    K, is_linear = _kernel(X, kernel)
    return X, y, C, gamma, K, is_linear


@single_blas_thread
def svm_weighted_fit(X, y, v, *, C=1.0, kernel=None):
    r"""Weighted SVM ``1/2 ||w||^2 + C sum_i v_i max(0, g_i)`` by its dual; returns
    ``(alpha, b)`` (decision function ``K(x, X) @ (alpha * y) + b``).

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
    X : array_like of shape (n, d)
        Data, one sample per row (the kernel is evaluated on it).
    y : array_like of shape (n,)
        Labels in {-1, +1}, both classes present.
    v : array_like of shape (n,)
        Sample weights in :math:`[0, 1]`.
    C : float > 0, default 1.0
        Hinge-loss weight (``None`` also means 1).
    kernel : None, "linear" or pathlib_core.core.kernels.Kernel, optional
        ``None`` / ``"linear"``: the linear kernel ``X X'``; otherwise a
        :class:`~pathlib_core.core.kernels.Kernel` evaluated on ``X`` (not ``"precomputed"``).

    Returns
    -------
    alpha : ndarray of shape (n,)
        Dual variables, ``0 <= alpha_i <= C v_i``.
    intercept : float
        Bias ``b``.

    Raises
    ------
    ValueError
        Weights outside :math:`[0, 1]` or other bad input, naming the argument.
    RuntimeError
        The QP solver did not report an optimal solution.
    """
    X, y, C, _, K, _ = _validate(X, y, "linear", C, None, kernel)
    v = as_vector(v, "v", length=X.shape[0], length_of="X")
    if np.any(v < 0) or np.any(v > 1):
        raise ValueError("v must lie in [0, 1]")
    sc = _Scaled(K, y, C, "linear", None)
    z = sc.svm.weighted_fit(v)
    return sc.alpha_to_user(z[:-1]), float(z[-1])


def svm_partial_optimum_residual(X, y, alpha, intercept, age, *, regularizer, C=1.0,
                                 gamma=None, kernel=None) -> float:
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
    X : array_like of shape (n, d)
        Data, one sample per row (the kernel is evaluated on it).
    y : array_like of shape (n,)
        Labels in {-1, +1}, both classes present.
    alpha : array_like of shape (n,)
        Dual variables to check.
    intercept : float
        Bias ``b`` (finite).
    age : float > 0
        The age :math:`\lambda`.
    regularizer : {"linear", "mixture"}
        SP-regularizer defining :math:`v^*` (:func:`pathlib_core.gaga.spl.sp_weights`).
    C : float > 0, default 1.0
        Hinge-loss weight (``None`` also means 1).
    gamma : float > 0, optional
        Mixture regularizer parameter (required for ``regularizer="mixture"``).
    kernel : None, "linear" or pathlib_core.core.kernels.Kernel, optional
        ``None`` / ``"linear"``: the linear kernel ``X X'``; otherwise a
        :class:`~pathlib_core.core.kernels.Kernel` evaluated on ``X`` (not ``"precomputed"``).

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
    X, y, C, gamma, K, _ = _validate(X, y, regularizer, C, gamma, kernel)
    alpha = as_vector(alpha, "alpha", length=X.shape[0], length_of="X")
    intercept = finite_scalar(intercept, "intercept")
    age = positive_scalar(age, "age")
    return _SVM(K, y, C, regularizer, gamma).certificate(np.r_[alpha, intercept], age)


@single_blas_thread
def svm_acs(X, y, age, *, regularizer, C=1.0, gamma=None, kernel=None, max_iter=500,
            tol=1e-11):
    r"""Alternate convex search (Algorithm 1) for the self-paced SVM at one age; returns
    ``(alpha, b, v, n_iter, converged)``; starts from the unweighted SVM.

    Alternates :math:`v \leftarrow v^*(\ell(\alpha, b), \lambda)` and the weighted SVM of
    :func:`svm_weighted_fit` for the self-paced objective (7); once the sample sets have been
    stable for a few iterations, Newton steps on the piece's equations are tried (ACS alone
    converges only linearly). It stops when :func:`svm_partial_optimum_residual` is at most
    ``tol``.

    Parameters
    ----------
    X : array_like of shape (n, d)
        Data, one sample per row (the kernel is evaluated on it).
    y : array_like of shape (n,)
        Labels in {-1, +1}, both classes present.
    age : float > 0
        The age :math:`\lambda`.
    regularizer : {"linear", "mixture"}
        SP-regularizer defining :math:`v^*` (:func:`pathlib_core.gaga.spl.sp_weights`).
    C : float > 0, default 1.0
        Hinge-loss weight (``None`` also means 1).
    gamma : float > 0, optional
        Mixture regularizer parameter (required for ``regularizer="mixture"``).
    kernel : None, "linear" or pathlib_core.core.kernels.Kernel, optional
        ``None`` / ``"linear"``: the linear kernel ``X X'``; otherwise a
        :class:`~pathlib_core.core.kernels.Kernel` evaluated on ``X`` (not ``"precomputed"``).
    max_iter : int >= 1, default 500
        Cap on the ACS iterations (an integer; a float only with an integral value).
    tol : float > 0, default 1e-11
        Partial-optimum tolerance.

    Returns
    -------
    alpha : ndarray of shape (n,)
        Dual variables (``0 <= alpha_i <= C v_i``).
    intercept : float
        Bias ``b``.
    v : ndarray of shape (n,)
        The weights :math:`v^*(\ell(\alpha, b), \lambda)` of the returned point.
    n_iter : int
        ACS iterations done.
    converged : bool
        Whether the partial-optimum residual reached ``tol`` (``False``: the cap was hit and
        the point is not certified).

    Raises
    ------
    ValueError
        Bad input, naming the argument (including ``max_iter`` not an integer >= 1 and
        ``tol <= 0`` / NaN / inf).
    RuntimeError
        A weighted SVM QP was not solved to optimality.
    """
    X, y, C, gamma, K, _ = _validate(X, y, regularizer, C, gamma, kernel)
    age = positive_scalar(age, "age")
    max_iter, tol = _check_acs_controls(max_iter, tol)
    sc = _Scaled(K, y, C, regularizer, gamma)
    g = _SVMGAGA(sc.svm, 1e-6, ())
    z = sc.svm.weighted_fit(np.ones(y.size))
    z, k, ok = _acs_newton(g, age / sc.age_factor, z, max_iter=max_iter, tol=tol)
    return (sc.alpha_to_user(z[:-1]), float(z[-1]), sc.svm.v(z, age / sc.age_factor), k,
            ok)


@single_blas_thread
def svm_acs_path(X, y, ages, *, regularizer, C=1.0, gamma=None, kernel=None, max_iter=500,
                 tol=1e-11):
    r"""ACS on a grid of ages, each warm-started from the previous solution (the baseline);
    returns a list of ``(alpha, b, v, n_iter, converged)``.

    The first age starts from the unweighted SVM, each later one from the solution at the
    previous age, in the order given (the ages need not be sorted); each point is the
    search of :func:`svm_acs` for the self-paced objective (7).

    Parameters
    ----------
    X : array_like of shape (n, d)
        Data, one sample per row (the kernel is evaluated on it).
    y : array_like of shape (n,)
        Labels in {-1, +1}, both classes present.
    ages : array_like of shape (n_ages,)
        The ages :math:`\lambda > 0`, visited in the given order.
    regularizer : {"linear", "mixture"}
        SP-regularizer defining :math:`v^*` (:func:`pathlib_core.gaga.spl.sp_weights`).
    C : float > 0, default 1.0
        Hinge-loss weight (``None`` also means 1).
    gamma : float > 0, optional
        Mixture regularizer parameter (required for ``regularizer="mixture"``).
    kernel : None, "linear" or pathlib_core.core.kernels.Kernel, optional
        ``None`` / ``"linear"``: the linear kernel ``X X'``; otherwise a
        :class:`~pathlib_core.core.kernels.Kernel` evaluated on ``X`` (not ``"precomputed"``).
    max_iter : int >= 1, default 500
        Cap on the ACS iterations at each age (an integer; a float only with an integral
        value).
    tol : float > 0, default 1e-11
        Partial-optimum tolerance.

    Returns
    -------
    list of tuple
        One ``(alpha, intercept, v, n_iter, converged)`` per age, in the order of ``ages``,
        with the meaning of :func:`svm_acs`'s return values.

    Raises
    ------
    ValueError
        Empty or non-positive ``ages``, ``max_iter`` not an integer >= 1, ``tol <= 0`` or
        other bad input, naming the argument.
    RuntimeError
        A weighted SVM QP was not solved to optimality.
    """
    ages = as_vector(ages, "ages")
    if ages.size == 0 or np.any(ages <= 0):
        raise ValueError("ages must be a non-empty array of positive values")
    X, y, C, gamma, K, _ = _validate(X, y, regularizer, C, gamma, kernel)
    max_iter, tol = _check_acs_controls(max_iter, tol)
    sc = _Scaled(K, y, C, regularizer, gamma)
    g = _SVMGAGA(sc.svm, 1e-6, ())
    z = sc.svm.weighted_fit(np.ones(y.size))
    out = []
    for a in ages:
        tau = float(a) / sc.age_factor
        z, k, ok = _acs_newton(g, tau, z, max_iter=max_iter, tol=tol)
        out.append((sc.alpha_to_user(z[:-1]), float(z[-1]), sc.svm.v(z, tau), k, ok))
    return out


@single_blas_thread
def svm_age_path(X, y, *, regularizer: str, age_min: float, age_max: float, C: float = 1.0,
                 gamma: float | None = None, kernel=None, rtol: float = 1e-10,
                 atol: float = 1e-12, drift_tol: float = 1e-9, fold_tol: float = 1e-6,
                 max_events: int = 10_000):
    r"""Exact age-path of the self-paced SVM (eq. 7, Proposition 1, Algorithm 3).

    The partial optimum of the self-paced SVM objective (eqs. 2 and 7),

    .. math::

        \min_{f \in \mathcal H,\, b,\; v \in [0, 1]^n} \;
            \tfrac12 \|f\|_{\mathcal H}^2
            + \sum_{i=1}^n v_i \, C \max\bigl(0,\, 1 - y_i (f(x_i) + b)\bigr)
            + \sum_{i=1}^n f_{\mathrm{SP}}(v_i, \lambda),

    followed in the age ``lambda`` from ``age_min`` to ``age_max`` (``f_SP`` the linear or
    mixture SP-regularizer).

    Called by :func:`pathlib_core.gaga.spl.age_path` with ``model="svm"``. Starts from a partial
    optimum at ``age_min`` (warm ACS from the unweighted SVM, Newton-polished), then follows
    ODE (8) (linear regularizer) or (9) (mixture) in the dual variables ``(alpha_F, b)`` with
    DOP853 at ``rtol``/``atol``, Newton-corrected on the piece's equations above
    ``drift_tol``. Critical points as described in the module docstring; all violators are
    reassigned at once; a reassignment that does not continue consistently, or a fold of
    ``J`` (``min |eig| / max |eig| < fold_tol``), is a jump point re-solved by warm ACS at
    ``age (1 + delta)`` and brought back to ``age`` by Newton steps (or ACS).

    Parameters
    ----------
    X : array_like (n, d)
    y : array_like (n,), labels in {-1, +1}
    regularizer : {"linear", "mixture"}
    age_min, age_max : float
        ``0 < age_min < age_max``.
    C : float
        Hinge-loss weight (default 1).
    gamma : float
        Mixture regularizer parameter.
    kernel : None, "linear" or Kernel
        ``None``/``"linear"``: linear kernel (``coef`` is reported); otherwise a
        :class:`pathlib_core.core.kernels.Kernel` (e.g. ``kernel_from_name("rbf", gamma=0.5)``).

    Returns
    -------
    SolutionPath
        ``path.at(age)`` is an :class:`SVMSolution`; events ``"turning"`` / ``"jump"`` carry
        the fired indices (samples ``0..n-1``, then ``n`` = fold, ``n+1`` = KKT monitor).
        ``path.info`` adds ``n_turning``, ``acs_iterations``, ``n_fallbacks``, ``jumps``.

    Raises
    ------
    ValueError
        Bad input, naming the argument.
    pathlib_core.gaga.spl.DegenerateStartError
        (a ``ValueError``) The partial optimum at ``age_min`` keeps samples of one class only,
        or has ``w = 0`` (its dual is degenerate); a larger ``age_min`` (or ``C``) may work.
    IllPosedError
        (a ``ValueError``) The weighted dual at ``age_min`` cannot be resolved in double
        precision (its margins are sums of terms more than 1e8 times the margin).
    RuntimeError
        No partial optimum could be certified at ``age_min``, or the path cannot be
        continued, with the cause: the partial optimum keeps one class only (``w = 0``, no
        unique continuation), a degenerate point where the same samples keep changing sets,
        or a branch that ends with no other partial optimum found by warm ACS.
    """
    X, y, C, gamma, K, is_linear = _validate(X, y, regularizer, C, gamma, kernel)
    age_min = positive_scalar(age_min, "age_min")
    age_max = positive_scalar(age_max, "age_max")
    if age_min >= age_max:
        raise ValueError(f"age_min must be < age_max; got {age_min} >= {age_max}")
    fold_tol = positive_scalar(fold_tol, "fold_tol")
    t0 = time.perf_counter()
    # identical samples (same x and y) always share g, loss and v: trace one row per group
    # with the bound m C v (otherwise their dual variables are not unique and J is singular)
    _, first, inv, mult = np.unique(np.c_[X, y], axis=0, return_index=True,
                                    return_inverse=True, return_counts=True)
    inv = inv.ravel()
    sc = _Scaled(K[np.ix_(first, first)], y[first], C, regularizer, gamma, mult)
    svm, f = sc.svm, sc.age_factor
    user = _SVM(K, y, C, regularizer, gamma)  # the user's problem, for the certificate
    g = _SVMGAGA(svm, fold_tol, (1e-3, 1e-6, 1e-2))
    g.age_factor, g.alpha_factor = f, 1.0 / sc.kappa
    tau_min, tau_max = age_min / f, age_max / f
    z0 = _svm_start(g, tau_min, age_min)

    def record(t, z, st):
        rec = g.record(t, z, st)
        alpha = rec.alpha[inv] / (mult[inv] * sc.kappa)  # each copy carries an equal share
        dual = alpha * y
        return SVMSolution(X.T @ dual if is_linear else None, dual, rec.intercept,
                           rec.weights[inv], alpha)

    def residual(t, rec):
        return user.certificate(np.r_[rec.alpha, rec.intercept], t)

    path = follow_path(z0, (tau_min, tau_max), rhs=g.rhs, events=g.events, update=g.update,
                       residual=g.state_residual, correct=g.correct, record=record,
                       state=g.state_from(z0, tau_min), rtol=rtol, atol=atol,
                       drift_tol=drift_tol, max_events=max_events, param_name="age",
                       param_floor=0.0, param_unit=f)
    info = dict(path.info)
    info.update(n_turning=sum(1 for e in path.events if e.kind == "turning"),
                acs_iterations=g.n_acs_iter, n_fallbacks=g.n_fallbacks,
                jumps=[dict(j, age=j["age"] * f) for j in g.jumps],
                correction_params=[t * f for t in info["correction_params"]],
                model="svm", regularizer=regularizer, gamma=gamma, C=C,
                kernel="linear" if is_linear else repr(kernel),
                n_duplicates=int(X.shape[0] - first.size),
                scaling={"kernel_factor": sc.kappa, "age_factor": f},
                wall_time_total=time.perf_counter() - t0)
    return _map_path(path, f, lambda rec: rec, residual, info)



class _Scaled:
    """The weighted SVM dual of the user's data with the kernel divided by ``kappa``, the
    power of 4 nearest to its largest diagonal entry (an exact operation).

    ``(K, C)`` and ``(K / kappa, kappa C)`` with ``alpha kappa`` are the same problem (the
    decision values ``K (alpha y)`` are unchanged); the losses ``C max(0, g)`` are
    ``kappa`` times larger inside, so the age is divided by ``age_factor = 1 / kappa``
    (linear regularizer) or ``1 / sqrt(kappa)`` (mixture, with ``gamma`` likewise).
    """

    def __init__(self, K, y, C, regularizer, gamma, mult=None):
        top = float(np.max(np.abs(np.diag(K)))) if K.size else 0.0
        self.kappa = _pow4(top) if math.isfinite(top) else 1.0
        root = math.sqrt(self.kappa)  # a power of two
        self.age_factor = 1.0 / (self.kappa if regularizer == "linear" else root)
        self.gamma = None if gamma is None else gamma * root
        self.svm = _SVM(K / self.kappa, y, C * self.kappa, regularizer, self.gamma, mult)

    def alpha_to_user(self, a):
        return a / self.kappa


def _svm_start(g: _SVMGAGA, tau: float, age: float) -> np.ndarray:
    """A certified partial optimum at the internal age ``tau`` (the user's ``age``), by warm
    ACS from the unweighted SVM polished by Newton steps; a precise error otherwise."""
    svm = g.s
    z0 = svm.weighted_fit(np.ones(svm.n))
    z0, k0, ok = _acs_newton(g, tau, z0, max_iter=1000)
    g.n_acs_iter += k0
    # Newton steps in the sets of the ACS point (kept if they do not make it worse: on an
    # ill-conditioned piece they can leave the sets' inequalities)
    z1 = g.correct_quiet(tau, z0, g.state_from(z0, tau))
    if svm.certificate(z1, tau) <= svm.certificate(z0, tau):
        z0 = z1
    v = svm.v(z0, tau)
    if np.unique(svm.y[v > 0]).size < 2:
        raise DegenerateStartError(
            f"age_min={age} is too small: the partial optimum found there keeps samples of "
            "one class only (the losses of the other class all reach the age, so their "
            "weights vanish; w = 0 and the intercept is not unique); start at a larger age")
    # decision values K (alpha y) against the margin 1 (the kernel is normalized inside):
    # below 1e-6 every sample's margin is its intercept's to that accuracy, the positive
    # (or negative) class ties on the margin and the dual is degenerate
    dec = float(np.max(np.abs(svm.Q @ z0[:-1])))
    if dec <= 1e-6:
        raise DegenerateStartError(
            f"age_min={age}: the partial optimum found there has w = 0 to {dec:.1e} (every "
            "decision value is the intercept's to that accuracy: C max K = "
            f"{svm.C * float(np.max(np.abs(np.diag(svm.K)))):.1e} is too small for a margin, "
            "or the weighted SVM predicts one class, its multipliers at the bounds C v of the "
            "minority class balancing y'alpha = 0); its dual is degenerate and has no unique "
            "path: use a larger C, rescale the features, or a larger age_min")
    # the margins g = 1 - Q alpha - y b are sums of terms up to s_max times the margin;
    # beyond 1e8 (fewer than 8 significant digits left in double precision: C max K huge
    # and the multipliers at their bounds cancel) the sets cannot be decided
    smax = float(np.max(1.0 + svm.absQ @ np.abs(z0[:-1]) + abs(z0[-1])))
    if smax > 1e8:
        raise IllPosedError(
            f"age_min={age}: the weighted SVM dual there is numerically ill-posed: its "
            f"margins are sums of terms up to {smax:.1e} times the margin (C max K = "
            f"{svm.C * float(np.max(np.abs(np.diag(svm.K)))):.1e}, multipliers at their "
            "bounds C v that cancel), so they keep fewer than 8 significant digits and "
            "the sample sets cannot be decided; rescale the features or use a smaller C "
            "(or another age range)")
    r0 = svm.certificate(z0, tau)
    if r0 > 1e-10:
        raise RuntimeError(
            f"no partial optimum found at age_min={age}: alternate convex search "
            + ("converged but Newton steps in its sets left" if ok else
               "did not converge in 1000 iterations (the sample sets still change);")
            + f" partial-optimum residual {r0:.3g}")
    return z0


# -- estimator ---------------------------------------------------------------------------------

class SelfPacedSVC:
    """Self-paced SVM (eq. 7) whose age is chosen on validation data along the exact age-path.

    The validation misclassification rate is evaluated at every breakpoint of the path and at
    ``n_eval_per_piece`` interior points of every piece; the first age with the smallest
    error is kept.

    Parameters
    ----------
    C : float
        Hinge-loss weight.
    kernel : None, "linear" or Kernel
        As in :func:`svm_age_path`.
    regularizer : {"linear", "mixture"}
    gamma : float, optional
        Mixture parameter.
    age_min, age_max : float
        The age range traced (default 2.5 to 20 with ``C = 1``: below about ``2 C`` ACS can
        end at the trivial partial optimum that drops a whole class, reported as an error).
    validation_fraction : float
        Held-out share of ``(X, y)`` when no ``X_val`` is given.
    n_eval_per_piece : int
    random_state : int
        Seed of the validation split.
    """

    def __init__(self, C: float = 1.0, *, kernel=None, regularizer: str = "linear",
                 gamma: float | None = None, age_min: float = 2.5, age_max: float = 20.0,
                 validation_fraction: float = 0.25, n_eval_per_piece: int = 8,
                 random_state: int = 0):
        self.C = C
        self.kernel = kernel
        self.regularizer = regularizer
        self.gamma = gamma
        self.age_min = age_min
        self.age_max = age_max
        self.validation_fraction = validation_fraction
        self.n_eval_per_piece = n_eval_per_piece
        self.random_state = random_state

    def _kfun(self):
        return linear_kernel if self.kernel in (None, "linear") else self.kernel

    @single_blas_thread
    def fit(self, X, y, X_val=None, y_val=None):
        """Trace the age-path on ``(X, y)``; keep the age with the smallest validation error."""
        X = as_matrix(X, "X")
        y = as_binary_labels(y, "y", length=X.shape[0], length_of="X")
        k = self.n_eval_per_piece
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 0:
            raise ValueError(f"n_eval_per_piece must be an integer >= 0; got {k!r}")
        if X_val is None:
            if not 0 < self.validation_fraction < 1:
                raise ValueError("validation_fraction must be in (0, 1); got "
                                 f"{self.validation_fraction!r}")
            perm = np.random.default_rng(self.random_state).permutation(X.shape[0])
            n_val = max(1, int(round(self.validation_fraction * X.shape[0])))
            val, tr = perm[:n_val], perm[n_val:]
            X, y, X_val, y_val = X[tr], y[tr], X[val], y[val]
        else:
            X_val = as_matrix(X_val, "X_val")
            y_val = as_binary_labels(y_val, "y_val", length=X_val.shape[0],
                                     length_of="X_val")
            if X_val.shape[1] != X.shape[1]:
                raise ValueError(f"X_val must have {X.shape[1]} columns; got {X_val.shape[1]}")
        self.path_ = svm_age_path(X, y, regularizer=self.regularizer, gamma=self.gamma,
                                  age_min=self.age_min, age_max=self.age_max, C=self.C,
                                  kernel=self.kernel)
        self.X_fit_ = X
        Kval = self._kfun()(X_val, X)
        ages = candidate_ages(self.path_, k)
        errs = np.empty(ages.size)
        for j, a in enumerate(ages):
            sol = self.path_.at(a)
            errs[j] = np.mean(np.where(Kval @ sol.dual_coef + sol.intercept >= 0, 1.0, -1.0)
                              != y_val)
        best = int(np.argmin(errs))
        self.age_, self.validation_error_ = float(ages[best]), float(errs[best])
        self.ages_, self.validation_curve_ = ages, errs
        sol = self.path_.at(self.age_)
        self.coef_, self.dual_coef_ = sol.coef, sol.dual_coef
        self.intercept_, self.weights_ = sol.intercept, sol.weights
        return self

    def decision_function(self, X):
        """``K(X, X_fit) @ dual_coef_ + intercept_``."""
        if not hasattr(self, "dual_coef_"):
            raise ValueError("this SelfPacedSVC is not fitted yet; call fit first")
        X = as_matrix(X, "X")
        if X.shape[1] != self.X_fit_.shape[1]:
            raise ValueError(f"X must have {self.X_fit_.shape[1]} columns; got {X.shape[1]}")
        return self._kfun()(X, self.X_fit_) @ self.dual_coef_ + self.intercept_

    def predict(self, X):
        return np.where(self.decision_function(X) >= 0, 1.0, -1.0)
