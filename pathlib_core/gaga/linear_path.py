r"""The exact age-path of self-paced Lasso and logistic regression (GAGA; Qu, Li, Zhao and Gu,
NeurIPS 2022, Algorithms 2 and 4).

The age-path (:func:`age_path`) follows the partial optimum of the SPL objective (2) as the
age ``lambda`` grows. While the *partition* of samples (by which branch of ``v*`` applies)
and, for the Lasso, the active set and signs stay fixed, the stationarity condition

.. math::

    F(w, \lambda) = \nabla R(w) + \sum_i v^*(\ell_i(w), \lambda) \nabla \ell_i(w) = 0   \qquad (5)

is smooth, and the implicit function theorem gives the ODE (6)

.. math::

    \frac{dw}{d\lambda} = -J^{-1} \sum_i \partial_\lambda v^*_i \, \nabla \ell_i, \qquad
    J = \nabla^2 R + \sum_i \bigl[ v^*_i \nabla^2 \ell_i
        + \partial_\ell v^*_i \, \nabla \ell_i \nabla \ell_i^\top \bigr],

which specializes to Proposition 2 (eqs. 11-12, the Lasso) and Theorem 5 (eq. 25, logistic
regression); :func:`age_derivative` evaluates it at a point. It is integrated with
:func:`pathlib_core.core.ode_path.follow_path`; a *critical point* is where a sample changes
set, a Lasso coefficient hits zero or a zero coefficient's correlation reaches ``alpha``, or
``J`` becomes singular (a fold). At a critical point all violators are reassigned at once
(ties included); if the reassigned system continues consistently the point is a *turning
point* (the path is continuous), otherwise it is a *jump point* and the path restarts from a
warm ACS solve.

The SVM of eq. (7) (Proposition 1) has its own engine,
:func:`~pathlib_core.gaga.svm_path.svm_age_path`; ``age_path(model="svm")`` dispatches
to it.

Numerics
--------
The engine runs on the rescaled problem of :mod:`~pathlib_core.gaga.linear_models` (exact
powers of two) and maps the path back to the user's units. Every tolerance is relative: the
age windows to the age, the stationarity conditions each to the size of its own terms (the
certificate reported by ``SolutionPath.kkt_residuals``, in the user's units), the folds to
the eigenvalues of ``J`` balanced by its diagonal. Where ACS runs away from a repelling
partial optimum at ``age_min`` (an intercept-only model), Newton steps on (5) from the
unweighted fit find it.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from ..core.exceptions import PathFollowingError, SolverError
from ..core.ode_path import NewtonStall, Update, follow_path
from ..core.threads import single_blas_thread
from ..core.validation import positive_scalar
from . import age_kernel as _k
from .alternating import alternate, polish
from .checks import check_age_range
from .docstrings import fill_doc
from .exceptions import DegenerateStartError
from .linear_models import (
    SPLSolution,
    _Certificate,
    _CoefToUser,
    _logistic_parts,
    _Model,
    _scaled_problem,
    _split,
    _theta,
    _validate,
)
from .regularizers import _D, _E, _M, _partition, _sp_weights_derivatives, sp_weights
from .scaling import map_path
from .svm_path import svm_age_path

__all__ = ["age_path", "age_derivative"]


#: window (relative to max(1, age)) and height of the lift of just-reassigned event
#: conditions at a turning point (see _GAGA.events)
_LIFT_WIDTH, _LIFT_HEIGHT = 1e-8, 1e-9


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
        self.ZRA2 = self.ZRA * self.ZRA
        self.inactive = np.flatnonzero(~s.active)
        self.ZRI = np.ascontiguousarray(self.ZR[:, self.inactive])
        self.yR = m.y[self.R]
        self.penA = m.pen[self.A]
        self.alphaA = m.alpha[self.A] if m.name == "lasso" else None
        # the engines' Lasso runs on columns of unit RMS (no ridge): J needs no balancing
        self.unit_diag = m.name == "lasso" and getattr(m, "unit_columns", False)
        self.signsA = s.signs[self.A]
        self.isM = s.part[self.R] == _M if reg == "mixture" else None
        self.diag = np.diag_indices(self.A.size)
        # the same constants for the compiled piece (age_kernel.run_piece)
        self.kernel_args = (
            m.Z, m.y, s.part, self.ZR, self.ZRA, self.ZRI, self.yR,
            self.isM if self.isM is not None else np.zeros(self.R.size, dtype=bool),
            self.A, self.inactive, np.ascontiguousarray(self.penA),
            m.alpha if m.name == "lasso" else np.zeros(m.p),
            np.ascontiguousarray(s.signs, dtype=float),
            np.asarray(s.fresh, dtype=np.int64))
        self.n_events = m.n + (m.p if m.name == "lasso" else 0) + 2


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
    def __init__(self, m: _Model, regularizer, mixture, fold_tol, jump_deltas):
        self.m, self.reg, self.mixture = m, regularizer, mixture
        self.fold_tol = fold_tol
        self.jump_deltas = jump_deltas
        self.n_acs_iter = 0
        self.n_fallbacks = 0
        self._pending_kkt = False
        self._last_turn = None
        self.jumps: list[dict] = []
        self._rows_state, self._rows_data = None, None
        self._jac_key, self._jac_val = None, None
        self._sc_key, self._sc_val = None, None
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
            g = self.mixture
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

    def kernel(self, s: _State):
        """The compiled piece of state ``s`` for :func:`follow_path`
        (:func:`~pathlib_core.gaga.age_kernel.run_piece`)."""
        c = self._rows(s)
        sc = self._sc(s)
        args = c.kernel_args
        n_events = c.n_events

        def piece(t, t1, z, shift, g_start, first_step, buf, rtol, atol, max_step,
                  drift_tol, drift_on, floor):
            _k.run_piece(*args, sc, float(t), z, float(t1), shift, g_start, n_events - 2,
                         first_step, rtol, atol,
                         max_step, drift_tol, drift_on, floor, buf.req_t, buf.req_y,
                         buf.f_buf, buf.g_buf(n_events), buf.r_buf, buf.out_t, buf.out_step,
                         buf.out_yold, buf.out_F, buf.out_z, buf.info)

        return piece

    # state helpers
    def state_from(self, theta, age) -> _State:
        part = _partition(self.m.losses(theta), age, self.reg, self.mixture)
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
                                             mixture=self.mixture)
        return loss, d1, d2, v, vl, vlam

    def jac(self, t, theta, s: _State):
        jr = self._jac_rows(t, theta, self._rows(s))
        return jr.J, jr.Flam

    def _scaled_jac(self, t, theta, s: _State):
        """``D J D`` (see :class:`_Jac`), whose eigenvalues measure the folds."""
        return self._jac_rows(t, theta, self._rows(s)).scaled()

    def _sc(self, s: _State) -> np.ndarray:
        """The scalars of state ``s`` for :mod:`~pathlib_core.gaga.age_kernel` (``sc``)."""
        key = (s, self._pending_kkt)
        if self._sc_key is None or self._sc_key[0] is not s or self._sc_key[1] != key[1]:
            m = self.m
            sc = np.array([
                0.0 if m.name == "lasso" else 1.0, 0.0 if self.reg == "linear" else 1.0,
                float(m.n), float(m.C) if m.name == "logistic" else 0.0,
                float(self.mixture) if self.mixture is not None else 0.0,
                0.0 if self._rows(s).unit_diag else 1.0, float(s.n_neg),
                self.fold_tol if s.fold_floor is None else s.fold_floor,
                math.nan if s.t0 is None else float(s.t0), _LIFT_WIDTH, _LIFT_HEIGHT,
                1.0 if self._pending_kkt else 0.0])
            self._sc_key, self._sc_val = key, sc
        return self._sc_val

    def rhs(self, t, theta, s: _State):
        """``dw/dlambda``, the ODE (6) (:func:`~pathlib_core.gaga.age_kernel.rhs`)."""
        c = self._rows(s)
        out = np.zeros(self.m.p)
        a = c.kernel_args
        _k.rhs(float(t), np.ascontiguousarray(theta, dtype=float), a[3], a[4], a[6], a[7],
               a[8], a[10], self._sc(s), out)
        return out

    def events(self, t, theta, s: _State, lift: bool = True):
        """The event vector (:func:`~pathlib_core.gaga.age_kernel.events`): samples
        ``0..n-1`` (each one's distance to the threshold of its set), then the Lasso's
        features (sign or correlation margin), the fold and the KKT monitor. The conditions
        reassigned at a turning point ``t0`` are zero there (to rounding) and grow with the
        age (:meth:`_consistent` checked it); a zero at a piece start would make the
        integrator begin with a ``1e-8`` step that grows tenfold per step (~6 steps per
        piece). With ``lift`` they are lifted by ``1e-9``, falling linearly to zero over the
        ``1e-8`` window after ``t0``: rounding noise cannot fire them at ``t0``, the piece
        starts with a normal step, and beyond the window the functions are exact, so a real
        decrease through zero is still found."""
        c = self._rows(s)
        out = np.empty(c.n_events)
        _k.events(float(t), np.ascontiguousarray(theta, dtype=float), *c.kernel_args,
                  self._sc(s), bool(lift), out)
        return out

    def residual(self, t, theta, s: _State | None):
        """The partial-optimum certificate: stationarity with ``v = v*(l(w), t)``, each
        coordinate against its own terms (:meth:`_Model.certificate`)."""
        return self.m.certificate(theta, t, self.reg, self.mixture)

    def state_residual(self, t, theta, s: _State):
        """``F_s(w, t)`` of eq. (5) in the sets ``s`` (the manifold the ODE follows), each
        coordinate against the size of its terms (as :meth:`_Model.conditions`); the
        integrator's drift is measured with it, set changes by the events
        (:func:`~pathlib_core.gaga.age_kernel.state_residual`)."""
        a = self._rows(s).kernel_args
        return _k.state_residual(float(t), np.ascontiguousarray(theta, dtype=float), a[3],
                                 a[4], a[6], a[7], a[8], a[10], a[11], a[12], self._sc(s))

    def record_residual(self, t, rec: SPLSolution):
        theta = rec.coef if self.m.name == "lasso" else np.r_[rec.coef, rec.intercept]
        return self.residual(t, theta, None)

    def correct(self, t, theta, s: _State):
        """Newton steps on (5) in the sets ``s`` until the state residual is at most
        ``1e-12`` (20 at most; stopped once four steps in a row fail to reduce the best
        residual by 10 %: next to a fold Newton converges linearly, halving the residual per
        step, and must go on; a stagnating or diverging attempt of the ACS accelerator is
        given up, where it was most of the cost of a jump restart). Each step
        is the least-squares solution in the variables of ``D J D``. Where the sets no
        longer describe the solution, warm ACS re-solves (see below)."""
        theta = theta.copy()
        c = self._rows(s)
        A = c.A
        stall = NewtonStall()
        for _ in range(20):
            jr = self._jac_rows(t, theta, c)
            J, vd1, dinv = jr.J, jr.vd1, jr.dinv
            F = self._F_rows(theta, c, vd1)
            if not (np.all(np.isfinite(J)) and np.all(np.isfinite(F))):
                break
            # in the scaled variables of D J D (columns of very different scales are not
            # truncated by the least-squares cutoff)
            Js = J * dinv[:, None] * dinv[None, :]
            try:
                # least squares, not an LU solve: next to a fold J is nearly singular, and
                # the minimum-norm step stays on the branch where an LU step runs along the
                # near-null direction (the full-data diabetes Lasso, run 15, age 2.6868:
                # with LU the path jumped back and forth there without end)
                step = np.linalg.lstsq(Js, dinv * F, rcond=None)[0]
            except np.linalg.LinAlgError:
                break
            theta[A] -= dinv * step
            r = self.state_residual(t, theta, s)
            if r <= 1e-12:
                return theta
            if stall(r):
                break
        if (self.state_residual(t, theta, s) > 1e-10
                and not getattr(self, "_in_fallback", False)):
            # the sets no longer describe the solution (a crossing inside one integration
            # step): re-solve by warm ACS, polish in the sets of the result, and make the
            # next event evaluation fire the "kkt" component so that update() records a
            # jump and installs those sets
            self.n_fallbacks += 1
            self._in_fallback = True
            try:
                th, _, k, _ = alternate(self.m, t, theta, regularizer=self.reg,
                                        mixture=self.mixture, max_iter=3000, tol=1e-11)
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
        v, _, _ = _sp_weights_derivatives(loss, t, s.part, self.reg, self.mixture)
        coef, b = _split(self.m, theta)
        return SPLSolution(coef, b, v)

    # critical points
    def _switch(self, t, theta, s: _State, fired):
        n = self.m.n
        part, active, signs = s.part.copy(), s.active.copy(), s.signs.copy()
        theta = theta.copy()
        new_part = _partition(self.m.losses(theta), t, self.reg, self.mixture)
        for k in fired:
            if k < n:
                i = k
                if new_part[i] != part[i]:
                    part[i] = new_part[i]
                elif self.reg == "linear":
                    part[i] = _D if part[i] == _E else _E
                else:  # at a threshold: move to the neighbouring set
                    r = math.sqrt(self.m.losses(theta)[i])
                    lo = t * self.mixture / (t + self.mixture)
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

    # the Newton acceleration of alternate convex search (alternating.alternate)
    def sets_key(self, theta, loss, t) -> tuple:
        """The sample sets (and the Lasso's signs) at ``theta``: ACS tries Newton steps once
        they stop changing."""
        return (_partition(loss, t, self.reg, self.mixture).tobytes(),
                np.sign(theta).tobytes() if self.m.name == "lasso" else b"")

    def newton(self, t, theta):
        """Newton steps on (5) at ``t`` in the sets of ``theta``."""
        return self.correct_quiet(t, theta, self.state_from(theta, t))

    def correct_quiet(self, t, theta, s: _State):
        """:meth:`correct` without its ACS fallback."""
        old = getattr(self, "_in_fallback", False)
        self._in_fallback = True
        try:
            return self.correct(t, theta, s)
        finally:
            self._in_fallback = old

    def _acs_newton(self, t, theta, *, max_iter=3000):
        """Warm ACS at ``t`` until the sets stop changing, then Newton steps on (5) in
        those sets (ACS alone converges only linearly near a fold)."""
        theta, _, k, ok = alternate(self.m, t, theta, regularizer=self.reg,
                                    mixture=self.mixture, max_iter=max_iter, tol=1e-11,
                                    accelerator=self)
        return theta, k, ok

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
                    # (with the second round's cap too: next to a fold ACS back at t can
                    # need more than 3000 iterations, e.g. logistic regression on digits,
                    # 1011 x 64, protocol run 8, age 1.86)
                    th2, k2, _ = self._acs_newton(t, th1, max_iter=max(3000, cap))
                    self.n_acs_iter += k2
                    # Newton-polished in its sets unless that makes it worse (steps that
                    # leave the sets' inequalities on an ill-conditioned piece)
                    th3 = self.correct(t, th2, self.state_from(th2, t))
                    if self.residual(t, th3, None) <= self.residual(t, th2, None):
                        th2 = th3
            except SolverError as exc:  # a weighted problem without minimizer on the way
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
        raise PathFollowingError(
            f"age_path: no continuation found at age={t * self.age_factor:.10g}: the "
            "reassigned sets are inconsistent (or the branch folds) and warm ACS at ages "
            f"just above found no other partial optimum ({'; '.join(sorted(outcomes))})")


@single_blas_thread
def age_path(X, y, *, model: str, regularizer: str, age_min: float, age_max: float,
             alpha: float | None = None, C: float | None = None, mixture: float | None = None,
             kernel=None, gamma="scale", rtol: float = 1e-10, atol: float = 1e-12,
             drift_tol: float = 1e-9, fold_tol: float = 1e-6, max_events: int = 10_000,
             compiled: bool = True):
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
        :func:`~pathlib_core.gaga.svm_path.svm_age_path` (``path.at(age)`` is then an
        :class:`~pathlib_core.gaga.svm_dual.SVMSolution`).
    regularizer : {"linear", "mixture"}
    age_min, age_max : float
        ``0 < age_min < age_max``.
    alpha : float
        Lasso penalty (eq. 10).
    C : float
        Logistic or hinge loss weight (eqs. 24, 7), default 1.
    mixture : float
        Parameter of the mixture regularizer (the paper's :math:`\gamma`, > 0).
    kernel : {"linear", "rbf", "precomputed"} or Kernel, optional
        SVM only (default linear), as in :func:`~pathlib_core.gaga.svm_path.svm_age_path`.
    gamma : float > 0 or "scale", default "scale"
        SVM with ``kernel="rbf"`` only: the kernel width (``"scale"``: scikit-learn's
        ``1 / (n_features * X.var())``).
    rtol, atol : float, default 1e-10, 1e-12
        DOP853's tolerances on each piece (its dense output is the path between
        breakpoints).
    drift_tol : float, default 1e-9
        Newton-correct the piece's equations when their residual exceeds it.
    fold_tol : float, default 1e-6
        Relative size of the smallest eigenvalue of ``J`` at which a fold (a jump point) is
        declared.
    max_events : int, default 10000
        Cap on the number of critical points.
    compiled : bool, default True
        Integrate each piece at compiled speed (:mod:`pathlib_core.core.dop853_kernel` driven
        by :mod:`~pathlib_core.gaga.age_kernel` or :mod:`~pathlib_core.gaga.svm_kernel`);
        ``False`` steps scipy's DOP853 from Python. Both take the same steps and locate the
        same breakpoints (to rounding); the switch exists for that comparison.

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
    PathFollowingError
        (a ``RuntimeError``) The path cannot be continued at some age, with the cause: the
        branch ends (the reassigned sets are inconsistent, or a fold) and ACS just above
        finds no other partial optimum (e.g. the weighted problems it meets keep one class
        only).

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
    if model == "svm":  # Proposition 1: svm_age_path
        if alpha is not None:
            raise ValueError("alpha is only used by model='lasso'; got alpha for model='svm'")
        return svm_age_path(X, y, regularizer=regularizer, age_min=age_min, age_max=age_max,
                            C=C, mixture=mixture, kernel="linear" if kernel is None else kernel,
                            gamma=gamma, rtol=rtol, atol=atol,
                            drift_tol=drift_tol, fold_tol=fold_tol, max_events=max_events,
                            compiled=compiled)
    X, y, m, mixture = _validate(X, y, model, regularizer, alpha, C, mixture, path=True)
    if kernel is not None:
        raise ValueError("kernel is only used by model='svm'; got a kernel for "
                         f"model={model!r}")
    age_min, age_max = check_age_range(age_min, age_max)
    t0 = time.perf_counter()
    sc = _scaled_problem(m, regularizer, mixture)
    f = sc.age_factor
    tau_min, tau_max = age_min / f, age_max / f
    g = _GAGA(sc.model, regularizer, sc.mixture, positive_scalar(fold_tol, "fold_tol"),
              (1e-3, 1e-6, 1e-2))
    g.coef_factor, g.age_factor = sc.coef_factor, f
    theta0 = _start(g, tau_min, age_min)
    path = follow_path(theta0, (tau_min, tau_max), rhs=g.rhs, events=g.events,
                       update=g.update, residual=g.state_residual, correct=g.correct,
                       record=g.record, state=g.state_from(theta0, tau_min), rtol=rtol,
                       atol=atol, drift_tol=drift_tol, max_events=max_events,
                       param_name="age", param_floor=0.0, param_unit=f,
                       kernel=g.kernel if compiled else None)

    info = dict(path.info)
    info.update(
        n_turning=sum(1 for e in path.events if e.kind == "turning"),
        acs_iterations=g.n_acs_iter, n_fallbacks=g.n_fallbacks,
        jumps=[dict(j, age=j["age"] * f) for j in g.jumps], model=model, mixture=mixture,
        regularizer=regularizer, correction_params=[t * f for t in info["correction_params"]],
        scaling={"coef_factor": sc.coef_factor, "age_factor": f},
        wall_time_total=time.perf_counter() - t0)
    return map_path(path, f, _CoefToUser(sc.coef_factor),
                    _Certificate(m, regularizer, mixture), info)


@fill_doc
def age_derivative(X, y, coef, intercept, age, *, model: str, regularizer: str, alpha=None,
                   C=None, mixture=None) -> np.ndarray:
    r"""The slope ``dw/dlambda`` of the age-path at a partial optimum: the ODE (6).

    .. math::

        \frac{dw}{d\lambda} = -J^{-1} \sum_i \partial_\lambda v^*_i \, \nabla \ell_i

    on the coordinates that move (the Lasso's active set; every coefficient and the intercept
    of logistic regression), with the sample sets of ``(coef, intercept)`` at ``age``: the
    right-hand side :func:`age_path` integrates, evaluated in the user's units (for the
    Lasso it is eqs. (11)-(12) of Proposition 2, for logistic regression eq. (25)).

    Parameters
    ----------
    {linear_data}
    coef : array_like of shape (d,)
        The partial optimum's weights.
    intercept : float
        Its intercept (logistic regression; ignored by the Lasso).
    age : float > 0
        The age :math:`\lambda`.
    model : {"lasso", "logistic"}
        Loss and regularizer: eq. (10) or eq. (24).
    regularizer : {"linear", "mixture"}
        SP-regularizer.
    {penalties}
    {mixture}

    Returns
    -------
    ndarray
        ``dw/dlambda`` of shape (d,) for the Lasso (0 off the active set), and of shape
        (d + 1,), the intercept's derivative last, for logistic regression.

    Raises
    ------
    ValueError
        Bad input, naming the argument.
    """
    X, y, m, mixture = _validate(X, y, model, regularizer, alpha, C, mixture, path=True)
    theta = _theta(m, coef, intercept)
    age = positive_scalar(age, "age")
    g = _GAGA(m, regularizer, mixture, 1e-6, ())
    return g.rhs(age, theta, g.state_from(theta, age))


def _start(g: _GAGA, tau: float, age: float) -> np.ndarray:
    """A certified partial optimum at the internal age ``tau`` (the user's ``age``): warm
    ACS from the unweighted fit, Newton-polished in its sets; where ACS fails (a repelling
    fixed point: ACS runs away from it), Newton steps on (5) from the unweighted fit; a
    precise error otherwise."""
    m = g.m
    start = m.weighted_fit(np.ones(m.n))
    why = None
    try:
        theta0, v, k0, ok = alternate(m, tau, start, regularizer=g.reg, mixture=g.mixture,
                                      max_iter=1000, tol=1e-11)
        g.n_acs_iter += k0
    except SolverError:
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
        theta0 = polish(m, g, tau, theta0, g.reg, g.mixture)
    else:
        theta0 = _newton_start(g, tau, start)
        if theta0 is None and why is None:
            why = ("alternate convex search did not converge in 1000 iterations (the sample "
                   "sets still change)")
    r0 = np.inf if theta0 is None else g.residual(tau, theta0, None)
    if r0 <= 1e-10 and m.name == "logistic":
        v = sp_weights(m.losses(theta0), tau, regularizer=g.reg, mixture=g.mixture)
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
