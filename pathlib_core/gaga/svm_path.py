r"""The exact age-path of the self-paced SVM (Proposition 1 and Algorithm 3 of Qu, Li, Zhao and
Gu, NeurIPS 2022).

The self-paced support vector classifier (7) is, for fixed weights ``v``, the weighted SVM
whose dual box QP is :class:`~pathlib_core.gaga.svm_dual._SVM`. A *partial optimum* at age
``lambda`` is a dual pair ``(alpha, b)`` that is a KKT point of the weighted dual with the
weights ``v = v*(l(alpha, b), lambda)`` of its own losses
(:func:`~pathlib_core.gaga.svm_dual.svm_partial_optimum_residual`).

Sample sets (Section 4.1). The paper splits the easy set ``E`` by the sign of ``g``:

========  ===================================  =========================================
set       condition                            dual variable
========  ===================================  =========================================
``E_N``   ``g_i < 0``                          ``alpha_i = 0``
``E_Z``   ``g_i = 0``                          ``0 <= alpha_i <= C`` (free)
``E_P``   ``0 < g_i``, ``v_i`` on its E branch  ``alpha_i = C v_i`` (linear:
                                               ``C (1 - C g_i / lambda)``; mixture: ``C``)
``M``     mixture only: interior branch        ``alpha_i = C (gamma / sqrt(l_i) - gamma /
                                               lambda)``, ``gamma`` = ``mixture``
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

Numerics. The engine works on the rescaled dual of
:class:`~pathlib_core.gaga.svm_dual._ScaledSVM` (the kernel divided by a power of 4), mapped
back exactly. The sets, the events and the certificate measure each margin against the size
of its terms and each multiplier against its box, so a margin at zero to rounding neither
fires nor decides a set. A start whose margins are sums of terms more than 1e8 times the
margin (``C max K`` huge on samples that are not separable) cannot be resolved in double
precision and is reported (:class:`~pathlib_core.gaga.exceptions.IllPosedError`).
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
from . import svm_kernel as _k
from .alternating import alternate, polish
from .checks import check_age_range
from .docstrings import fill_doc
from .exceptions import DegenerateStartError, IllPosedError
from .scaling import map_path, unchanged
from .svm_dual import (
    _D,
    _M,
    _N,
    _P,
    _SVM,
    _Z,
    SVMSolution,
    _ScaledSVM,
    _SVMCertificate,
    validate_svm,
)

__all__ = ["svm_age_path"]


_ZERO_EIG = 1e-9  # |eig J| below this (relative) is a structural zero (exact degeneracy)


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
        self._k_key, self._k_val = None, None
        self._arrays = (np.ascontiguousarray(svm.Q, dtype=float),
                        np.ascontiguousarray(svm.absQ, dtype=float),
                        np.ascontiguousarray(svm.y, dtype=float),
                        np.ascontiguousarray(svm.Cv, dtype=float),
                        np.ascontiguousarray(svm.aunit, dtype=float))

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
            d[m] = 2.0 * loss ** 1.5 / (s.C * s.Cv[F[m]] * s.mixture)
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
            c = s.C * cm * s.mixture / (2.0 * loss ** 1.5)
            # alpha_i = C gamma (l^-1/2 - 1/t), divided by -c_i (c_i = d v-term / d g)
            r[m] = -(a[F[m]] - cm * s.mixture / np.sqrt(loss) + cm * s.mixture / t) / c
            dlam[1:][m] = (cm * s.mixture / t ** 2) / c
        res[1:] = r
        if not scales:
            return res, dlam, F
        sc = np.empty(F.size + 1)
        sc[0] = float(np.sum(np.abs(a)))
        sF = 1.0 + s.absQ[F] @ np.abs(a) + abs(z[-1])
        if s.reg == "linear":
            sF[p] += t / s.C + t * np.abs(a[F[p]]) / cp
        else:
            sF[m] = (np.abs(a[F[m]]) + cm * s.mixture / np.sqrt(loss) + cm * s.mixture / t) / c
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

    def _kargs(self, st: _State):
        """The arrays and scalars of state ``st`` for :mod:`~pathlib_core.gaga.svm_kernel`
        (cached for the last state and KKT flag)."""
        key = (st, self._pending_kkt)
        if self._k_key is None or self._k_key[0] is not st or self._k_key[1] != key[1]:
            s = self.s
            sc = np.array([0.0 if s.reg == "linear" else 1.0, float(s.C),
                           float(s.mixture) if s.mixture is not None else 0.0,
                           float(st.n_neg), float(st.n_zero),
                           self.fold_tol if st.fold_floor is None else st.fold_floor,
                           1.0 if self._pending_kkt else 0.0])
            self._k_key = key
            self._k_val = (self._arrays[0], self._arrays[1], self._arrays[2],
                           self._arrays[3], self._arrays[4], st.part,
                           self.free(st).astype(np.int64), sc)
        return self._k_val

    def rhs(self, t, z, st: _State):
        """``dz/dlambda`` (:func:`~pathlib_core.gaga.svm_kernel.rhs`)."""
        Q, absQ, y, Cv, _, part, F, sc = self._kargs(st)
        out = np.zeros(self.s.n + 1)
        _k.rhs(float(t), np.ascontiguousarray(z, dtype=float), Q, absQ, y, Cv, part, F, sc,
               out)
        return out

    def state_residual(self, t, z, st: _State) -> float:
        """The piece's equations at ``z``, each against the size of its terms
        (:func:`~pathlib_core.gaga.svm_kernel.state_residual`)."""
        Q, absQ, y, Cv, _, part, F, sc = self._kargs(st)
        return _k.state_residual(float(t), np.ascontiguousarray(z, dtype=float), Q, absQ, y,
                                 Cv, part, F, sc)

    def residual(self, t, z, st=None) -> float:
        return self.s.certificate(z, t)

    def events(self, t, z, st: _State):
        """Every condition of the sets in the units of the certificate (violations): a
        margin relative to the size of its terms, ``alpha_i`` in the units of its lower and
        upper bound, each offset by ``1e-12`` (a margin that stays at 0 to rounding, e.g. a
        margin point whose kernel row depends on the others', does not fire on its
        rounding noise); then the fold of ``J`` and the KKT monitor
        (:func:`~pathlib_core.gaga.svm_kernel.events`)."""
        a = self._kargs(st)
        out = np.empty(self.s.n + 2)
        _k.events(float(t), np.ascontiguousarray(z, dtype=float), *a, out)
        return out

    def kernel(self, st: _State):
        """The compiled piece of state ``st`` for :func:`follow_path`
        (:func:`~pathlib_core.gaga.svm_kernel.run_piece`)."""
        a = self._kargs(st)

        def piece(t, t1, z, shift, g_start, first_step, buf, rtol, atol, max_step,
                  drift_tol, drift_on, floor):
            _k.run_piece(*a, float(t), z, float(t1), shift, g_start, self.s.n, first_step,
                         rtol, atol, max_step, drift_tol, drift_on, floor, buf.req_t, buf.req_y,
                         buf.f_buf, buf.g_buf(self.s.n + 2), buf.r_buf, buf.out_t,
                         buf.out_step, buf.out_yold, buf.out_F, buf.out_z, buf.info)

        return piece

    def correct(self, t, z, st: _State):
        """Newton steps on the piece's equations until their residual is at most ``1e-13``
        (30 at most; stopped once four steps in a row fail to reduce the best residual by
        10 %, as in the linear models' engine); warm ACS where the sets no longer describe the
        solution."""
        z = z.copy()
        stall = NewtonStall()
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
            r = self.state_residual(t, z, st)
            if r <= 1e-13 or stall(r):
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
                    lo = t * s.mixture / (t + s.mixture)
                    rt = math.sqrt(loss)
                    part[i] = _Z if rt < 0.5 * lo else _M
            elif part[i] == _M:
                lo = t * s.mixture / (t + s.mixture)
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
            raise PathFollowingError(
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
            raise PathFollowingError(
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
            except SolverError as exc:  # a weighted dual the QP solver could not solve
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
        raise PathFollowingError(
            f"svm age_path: no continuation found at age={t * self.age_factor:.10g}: the "
            "reassigned sets are inconsistent (or the branch folds) and warm ACS at ages "
            f"just above found no other partial optimum ({'; '.join(sorted(outcomes))})")

    # the Newton acceleration of alternate convex search (alternating.alternate)
    def sets_key(self, z, loss, t) -> bytes:
        """The sample sets at ``z``: ACS tries Newton steps once they stop changing."""
        return self.s.partition(z, t).tobytes()

    def newton(self, t, z):
        """Newton steps on the piece's system at ``t`` in the sets of ``z``."""
        return self.correct_quiet(t, z, self.state_from(z, t))

    def correct_quiet(self, t, z, st):
        self._in_fallback, old = True, self._in_fallback
        try:
            return self.correct(t, z, st)
        finally:
            self._in_fallback = old


@fill_doc
@single_blas_thread
def svm_age_path(X, y, *, regularizer: str, age_min: float, age_max: float, C: float = 1.0,
                 mixture: float | None = None, kernel="linear", gamma="scale", rtol: float = 1e-10,
                 atol: float = 1e-12, drift_tol: float = 1e-9, fold_tol: float = 1e-6,
                 max_events: int = 10_000, compiled: bool = True):
    r"""Exact age-path of the self-paced SVM (eq. 7, Proposition 1, Algorithm 3).

    The partial optimum of the self-paced SVM objective (eqs. 2 and 7),

    .. math::

        \min_{f \in \mathcal H,\, b,\; v \in [0, 1]^n} \;
            \tfrac12 \|f\|_{\mathcal H}^2
            + \sum_{i=1}^n v_i \, C \max\bigl(0,\, 1 - y_i (f(x_i) + b)\bigr)
            + \sum_{i=1}^n f_{\mathrm{SP}}(v_i, \lambda),

    followed in the age ``lambda`` from ``age_min`` to ``age_max`` (``f_SP`` the linear or
    mixture SP-regularizer).

    Called by :func:`~pathlib_core.gaga.linear_path.age_path` with ``model="svm"``. Starts
    from a partial optimum at ``age_min`` (warm ACS from the unweighted SVM,
    Newton-polished), then follows ODE (8) (linear regularizer) or (9) (mixture) in the
    dual variables ``(alpha_F, b)`` with DOP853 at ``rtol``/``atol``, Newton-corrected on
    the piece's equations above ``drift_tol``. Critical points as described in the module
    docstring; all violators are reassigned at once; a reassignment that does not continue
    consistently, or a fold of ``J`` (``min |eig| / max |eig| < fold_tol``), is a jump
    point re-solved by warm ACS at ``age (1 + delta)`` and brought back to ``age`` by
    Newton steps (or ACS).

    Parameters
    ----------
    {svm_data}
    regularizer : {"linear", "mixture"}
        SP-regularizer.
    age_min, age_max : float
        ``0 < age_min < age_max``.
    C : float > 0, default 1.0
        Hinge-loss weight.
    {mixture}
    {kernel_parameters}
    rtol, atol, drift_tol, fold_tol, max_events, compiled
        Integration and event controls, as in :func:`~pathlib_core.gaga.linear_path.age_path`.

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
    DegenerateStartError
        (a ``ValueError``) The partial optimum at ``age_min`` keeps samples of one class only,
        or has ``w = 0`` (its dual is degenerate); a larger ``age_min`` (or ``C``) may work.
    IllPosedError
        (a ``ValueError``) The weighted dual at ``age_min`` cannot be resolved in double
        precision (its margins are sums of terms more than 1e8 times the margin).
    PathFollowingError
        (a ``RuntimeError``) No partial optimum could be certified at ``age_min``, or the path
        cannot be continued, with the cause: the partial optimum keeps one class only (``w = 0``, no
        unique continuation), a degenerate point where the same samples keep changing sets,
        or a branch that ends with no other partial optimum found by warm ACS.
    """
    X, y, C, mixture, K, is_linear = validate_svm(X, y, regularizer, C, mixture, kernel, gamma)
    age_min, age_max = check_age_range(age_min, age_max)
    fold_tol = positive_scalar(fold_tol, "fold_tol")
    t0 = time.perf_counter()
    # identical samples (same x and y) always share g, loss and v: trace one row per group
    # with the bound m C v (otherwise their dual variables are not unique and J is singular)
    _, first, inv, mult = np.unique(np.c_[X, y], axis=0, return_index=True,
                                    return_inverse=True, return_counts=True)
    inv = inv.ravel()
    sc = _ScaledSVM(K[np.ix_(first, first)], y[first], C, regularizer, mixture, mult)
    svm, f = sc.svm, sc.age_factor
    user = _SVM(K, y, C, regularizer, mixture)  # the user's problem, for the certificate
    g = _SVMGAGA(svm, fold_tol, (1e-3, 1e-6, 1e-2))
    g.age_factor, g.alpha_factor = f, 1.0 / sc.kappa
    tau_min, tau_max = age_min / f, age_max / f
    z0 = _svm_start(g, tau_min, age_min)

    record = _UserRecord(g, X, y, inv, mult, sc.kappa, is_linear)
    path = follow_path(z0, (tau_min, tau_max), rhs=g.rhs, events=g.events, update=g.update,
                       residual=g.state_residual, correct=g.correct, record=record,
                       state=g.state_from(z0, tau_min), rtol=rtol, atol=atol,
                       drift_tol=drift_tol, max_events=max_events, param_name="age",
                       param_floor=0.0, param_unit=f,
                       kernel=g.kernel if compiled else None)
    info = dict(path.info)
    info.update(n_turning=sum(1 for e in path.events if e.kind == "turning"),
                acs_iterations=g.n_acs_iter, n_fallbacks=g.n_fallbacks,
                jumps=[dict(j, age=j["age"] * f) for j in g.jumps],
                correction_params=[t * f for t in info["correction_params"]],
                model="svm", regularizer=regularizer, mixture=mixture, C=C,
                kernel="linear" if is_linear else repr(kernel), gamma=gamma,
                n_duplicates=int(X.shape[0] - first.size),
                scaling={"kernel_factor": sc.kappa, "age_factor": f},
                wall_time_total=time.perf_counter() - t0)
    return map_path(path, f, unchanged, _SVMCertificate(user), info)


def _svm_start(g: _SVMGAGA, tau: float, age: float) -> np.ndarray:
    """A certified partial optimum at the internal age ``tau`` (the user's ``age``), by warm
    ACS from the unweighted SVM polished by Newton steps; a precise error otherwise."""
    svm = g.s
    z0 = svm.weighted_fit(np.ones(svm.n))
    z0, k0, ok = _acs_newton(g, tau, z0, max_iter=1000)
    g.n_acs_iter += k0
    # Newton steps in the sets of the ACS point (kept if they do not make it worse: on an
    # ill-conditioned piece they can leave the sets' inequalities)
    z0 = polish(svm, g, tau, z0, svm.reg, svm.mixture)
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
        raise PathFollowingError(
            f"no partial optimum found at age_min={age}: alternate convex search "
            + ("converged but Newton steps in its sets left" if ok else
               "did not converge in 1000 iterations (the sample sets still change);")
            + f" partial-optimum residual {r0:.3g}")
    return z0


def _acs_newton(g: _SVMGAGA, t, z, *, max_iter=3000, tol=1e-11):
    """Warm ACS at ``t`` (Algorithm 1); once the sets are stable, Newton steps on the
    piece's system in those sets (ACS alone converges only linearly)."""
    s = g.s
    z, _, k, ok = alternate(s, t, z, regularizer=s.reg, mixture=s.mixture, max_iter=max_iter,
                            tol=tol, accelerator=g, first_newton=2)
    return z, k, ok


class _UserRecord:
    """An internal record of the deduplicated, rescaled dual as the user's
    :class:`SVMSolution` (each copy of a repeated sample carries an equal share)."""

    def __init__(self, g, X, y, inv, mult, kappa, is_linear):
        self.g, self.X, self.y, self.inv = g, X, y, inv
        self.mult, self.kappa, self.is_linear = mult, kappa, is_linear

    def __call__(self, t, z, st):
        rec = self.g.record(t, z, st)
        inv = self.inv
        alpha = rec.alpha[inv] / (self.mult[inv] * self.kappa)
        dual = alpha * self.y
        return SVMSolution(self.X.T @ dual if self.is_linear else None, dual, rec.intercept,
                           rec.weights[inv], alpha)
