r"""One piece of an ODE path integrated at compiled speed: DOP853 with event location (numba).

:func:`pathlib_core.core.ode_path.follow_path` integrates each piece of a path with scipy's
``DOP853`` stepped from Python, checks the event functions after every step, locates a
crossing with ``brentq`` on the dense output and samples every step five times for dips that a
sign check at the step ends misses. On paths with hundreds of short pieces (the GAGA
age-path) that Python loop is most of the cost: about 24 right-hand-side and 13 event
evaluations per step, each a few numpy calls on a small system.

:func:`dop853_piece` is the same piece, step for step, as a numba *generator* written in
reverse communication: it never calls the model. Whenever it needs the right-hand side
``f(t, z)``, the event vector ``g(t, z)`` or the drift residual ``r(t, z)`` it writes the point
into ``req_t``/``req_y`` and yields :data:`RHS`, :data:`EVENTS` or :data:`RESIDUAL`; the
consumer -- a model's own compiled driver, e.g. :mod:`pathlib_core.gaga.age_kernel` -- writes
the answer into ``f_buf``, ``g_buf`` or ``r_buf`` and resumes it. The integrator is thus
written (and cached by numba) once, and each model supplies only its functions.

What it reproduces of the Python piece (:meth:`_Tracer._integrate` and
:meth:`_Tracer._missed_crossing`), so that both give the same breakpoints to rounding:

- scipy's DOP853 (Hairer, Norsett and Wanner's coefficients from
  ``scipy.integrate._ivp.dop853_coefficients``), its error norm, step-size control
  (safety 0.9, factors 0.2-10) and its 7th-order dense output;
- the first step: given, or scipy's heuristic (Hairer, Norsett and Wanner, Sec. II.4)
  evaluated in the parameter's own unit ``|t|`` when ``floor == 0``;
- events fire when ``g_k + shift_k`` goes from ``>= 0`` to ``<= 0`` within a step (the drift
  component ``drift_tol - r`` is appended when ``drift_on``); each crossing is located by
  Brent's method on the dense output with scipy's ``brentq`` tolerances (``4 eps``), the
  bracket starting after a component that is exactly 0 at the step start has risen
  (:meth:`_Tracer._bracket_start`);
- every step, up to the located crossing, is sampled at ``1/5, ..., 5/5`` of its length; a
  component below ``-1e-10`` there is a crossing the sign check missed, located by bisection.

One difference: the expensive component ``heavy`` (a fold monitor, the eigenvalues of a
Jacobian, about 90 % of an event evaluation on an SVM piece) is evaluated at the step ends
and while its own crossing is located, but not in the dip samples. A fold is an eigenvalue
of the Jacobian reaching zero, where the branch's slope grows without bound; an eigenvalue
that reaches zero and turns back within one accepted step is not a case the step-size
control lets through. Everywhere else the piece is the Python one.

Status codes (``info[0]``): :data:`FINISHED` (``t1`` reached), :data:`EVENT` (an event ended
the piece; ``info[2]`` is its component, ``m`` for the drift component, and ``info[6]`` is 1
for a dip found by sampling), :data:`FAILED` (step below scipy's minimum),
:data:`BUFFER_FULL` (``max_steps`` steps stored: the caller starts a new piece there).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.integrate._ivp import dop853_coefficients as _c

from .linalg import njit

__all__ = ["dop853_piece", "DenseSteps", "StepBuffers", "RHS", "EVENTS", "EVENTS_LIGHT",
           "RESIDUAL",
           "FINISHED", "EVENT", "FAILED", "BUFFER_FULL"]

RHS, EVENTS, RESIDUAL, EVENTS_LIGHT = 1, 2, 3, 4
FINISHED, EVENT, FAILED, BUFFER_FULL = 0, 1, 2, 3

_NS = _c.N_STAGES                      # 12 stages
_A = np.ascontiguousarray(_c.A[:_NS, :_NS])
_B = np.ascontiguousarray(_c.B)
_C = np.ascontiguousarray(_c.C[:_NS])
_E3 = np.ascontiguousarray(_c.E3)
_E5 = np.ascontiguousarray(_c.E5)
_D = np.ascontiguousarray(_c.D)        # (4, 16)
_AX = np.ascontiguousarray(_c.A[_NS + 1:])   # (3, 16) extra stages of the dense output
_CX = np.ascontiguousarray(_c.C[_NS + 1:])
_POWER = _c.INTERPOLATOR_POWER         # 7
_SAFETY, _MIN_FACTOR, _MAX_FACTOR = 0.9, 0.2, 10.0
_EXPONENT = -1.0 / 8.0                 # -1 / (error estimator order + 1)
_EPS = np.finfo(float).eps
_DIP_TOL = 1e-10
_BRACKET_FRACS = np.array([1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.3, 0.6, 0.9])


@njit(cache=True)
def dense_point(F, y_old, x, out):
    """The DOP853 dense output at ``x = (t - t_old) / h`` of one step (scipy's
    ``Dop853DenseOutput``): Horner's scheme in ``x`` and ``1 - x`` over ``F``."""
    p = y_old.size
    for j in range(p):
        out[j] = 0.0
    for i in range(_POWER):
        f = F[_POWER - 1 - i]
        fac = x if i % 2 == 0 else 1.0 - x
        for j in range(p):
            out[j] = (out[j] + f[j]) * fac
    for j in range(p):
        out[j] += y_old[j]


@njit(cache=True)
def _stage_point(K, a, s, y, h, out):
    """``out = y + h sum_{q < s} a_q K_q``: the point of a Runge-Kutta stage."""
    for j in range(y.size):
        acc = 0.0
        for q in range(s):
            acc += a[q] * K[q, j]
        out[j] = y[j] + acc * h


@njit(cache=True)
def _rms_scaled(a, scale):
    s = 0.0
    for j in range(a.size):
        q = a[j] / scale[j]
        s += q * q
    return math.sqrt(s / a.size) if a.size else 0.0


@njit(cache=True)
def _bracket_next(q, t_old, t):
    """The first sample ``t_old + frac (t - t_old)``, ``frac = _BRACKET_FRACS[q:]``,
    distinct from ``t_old``, with its index (``_BRACKET_FRACS.size``: none left)."""
    while q < _BRACKET_FRACS.size:
        x = t_old + _BRACKET_FRACS[q] * (t - t_old)
        if x != t_old:
            return q, x
        q += 1
    return q, t_old


@njit(cache=True)
def _brent_iter(st):
    """The top of one iteration of Brent's method (scipy's ``brentq``, ``xtol = rtol =
    4 eps``), on the state ``st = [xpre, fpre, xcur, fcur, xblk, fblk, spre, scur, it]``:
    returns ``(True, root)`` when converged, else ``(False, x)``, the next point to
    evaluate (then call :func:`_brent_next` with its value)."""
    xpre, fpre, xcur, fcur, xblk, fblk, spre, scur = st[0], st[1], st[2], st[3], st[4], \
        st[5], st[6], st[7]
    if fpre != 0.0 and fcur != 0.0 and (fpre < 0.0) != (fcur < 0.0):
        xblk = xpre
        fblk = fpre
        spre = xcur - xpre
        scur = spre
    if abs(fblk) < abs(fcur):
        xpre, xcur, xblk = xcur, xblk, xcur
        fpre, fcur, fblk = fcur, fblk, fcur
    delta = (4.0 * _EPS + 4.0 * _EPS * abs(xcur)) / 2.0
    sbis = (xblk - xcur) / 2.0
    done = fcur == 0.0 or abs(sbis) < delta
    if not done:
        if abs(spre) > delta and abs(fcur) < abs(fpre):
            if xpre == xblk:
                stry = -fcur * (xcur - xpre) / (fcur - fpre)
            else:
                dpre = (fpre - fcur) / (xpre - xcur)
                dblk = (fblk - fcur) / (xblk - xcur)
                stry = -fcur * (fblk * dblk - fpre * dpre) / (dblk * dpre * (fblk - fpre))
            if 2.0 * abs(stry) < min(abs(spre), 3.0 * abs(sbis) - delta):
                spre = scur
                scur = stry
            else:
                spre = sbis
                scur = sbis
        else:
            spre = sbis
            scur = sbis
        xpre = xcur
        fpre = fcur
        if abs(scur) > delta:
            xcur += scur
        else:
            xcur += delta if sbis > 0 else -delta
    st[0], st[1], st[2], st[3], st[4], st[5], st[6], st[7] = (xpre, fpre, xcur, fcur, xblk,
                                                              fblk, spre, scur)
    return done, xcur


@njit(cache=True)
def _brent_start(st, a, fa, b, fb):
    """Brent's method on the bracket ``[a, b]`` (``fa >= 0 >= fb``): see :func:`_brent_iter`."""
    if fa == 0.0:
        return True, a
    if fb == 0.0:
        return True, b
    st[0], st[1], st[2], st[3] = a, fa, b, fb
    st[4] = st[5] = st[6] = st[7] = st[8] = 0.0
    return _brent_iter(st)


@njit(cache=True)
def _brent_next(st, fx):
    """Continue Brent's method with the value ``fx`` at the point it asked for (at most
    100 evaluations, as ``brentq``)."""
    st[3] = fx
    st[8] += 1.0
    if st[8] >= 100.0:
        return True, st[2]
    return _brent_iter(st)


# Not cached itself: numba cannot compile a consumer against a generator loaded from its
# cache (KeyError in get_generator_impl). Each consumer (cached) compiles it in.
@njit
def dop853_piece(t0, z0, t1, shift, g_start, heavy, first_step, rtol, atol, max_step,
                 drift_tol, drift_on, floor, req_t, req_y, f_buf, g_buf, r_buf, out_t, out_step,
                 out_yold, out_F, out_z, info):
    """Integrate ``dz/dt = f(t, z)`` from ``(t0, z0)`` towards ``t1`` until an event fires.

    A reverse-communication generator (see the module docstring): it yields :data:`RHS`
    (write ``f(req_t[0], req_y)`` into ``f_buf``), :data:`EVENTS` (write the ``m`` raw event
    values into ``g_buf``; the piece adds ``shift``) or :data:`RESIDUAL` (write the drift
    residual into ``r_buf[0]``), and finally 0. ``g_start`` holds the shifted event values
    at the start (``g + shift``, computed by the caller); ``first_step <= 0`` selects the
    heuristic. ``heavy`` is the index of an expensive event component (a fold monitor's
    eigenvalues; ``-1``: none): where the piece needs other components only (the dip
    samples, and locating another component's crossing) it yields :data:`EVENTS_LIGHT`, and
    the consumer may write any value ``>= 1`` for that component instead of computing it.

    Outputs: ``out_t[:n + 1]`` the step ends (the last one the event or ``t1``),
    ``out_step[i] = (t_old, h)`` and ``out_yold[i]``, ``out_F[i]`` the dense output of step
    ``i``, ``out_z`` the point at the piece end (``out_t[n]``), and ``info = [status, n,
    component, n_rhs, n_event_evals, n_residual_evals, missed]``.
    """
    p = z0.size
    m = shift.size
    direction = 1.0 if t1 > t0 else -1.0
    n_g = m + (1 if drift_on else 0)
    max_steps = out_step.shape[0]
    n_rhs = 0
    n_ev = 0
    n_res = 0
    K = np.zeros((16, p))
    y = z0.copy()
    f = np.empty(p)
    t = t0
    yy = np.empty(p)
    g = np.empty(n_g)
    g_new = np.empty(n_g)
    bst = np.zeros(9)
    out_t[0] = t0
    n_steps = 0
    status = -1
    comp = -1
    missed = 0
    t_end = t0

    # f (and the drift) at the start
    req_t[0] = t
    req_y[:] = y
    yield RHS
    n_rhs += 1
    f[:] = f_buf
    for k in range(m):
        g[k] = g_start[k]
    if drift_on:
        yield RESIDUAL
        n_res += 1
        g[m] = drift_tol - r_buf[0]

    # the first step
    span = abs(t1 - t0)
    h_abs = first_step
    if h_abs <= 0.0:
        h_abs = -1.0
        unit = abs(t0) if floor == 0.0 else 1.0
        for attempt in range(2):
            if attempt == 1:
                if h_abs > 0.0:
                    break
                unit = 1.0          # the solver's own heuristic, in raw units
            if p == 0:
                h_abs = span
                break
            scale = np.empty(p)
            for j in range(p):
                scale[j] = atol + abs(y[j]) * rtol
            d0 = _rms_scaled(y, scale)
            fu = unit * f
            d1 = _rms_scaled(fu, scale)
            hs0 = 1e-6 if (d0 < 1e-5 or d1 < 1e-5) else 0.01 * d0 / d1
            hs0 = min(hs0, span / unit)
            for j in range(p):
                yy[j] = y[j] + hs0 * direction * fu[j]
            req_t[0] = t + unit * hs0 * direction
            req_y[:] = yy
            yield RHS
            n_rhs += 1
            diff = unit * f_buf - fu
            d2 = _rms_scaled(diff, scale) / hs0
            if d1 <= 1e-15 and d2 <= 1e-15:
                hs1 = max(1e-6, hs0 * 1e-3)
            else:
                hs1 = (0.01 / max(d1, d2)) ** (1.0 / 8.0)
            hs = min(100.0 * hs0, hs1, span / unit, max_step / unit)
            h_abs = hs * unit
            if not (math.isfinite(h_abs) and 0.0 < h_abs <= span):
                h_abs = -1.0
    else:
        h_abs = min(h_abs, span)

    y_new = np.empty(p)
    f_new = np.empty(p)
    scale = np.empty(p)
    dense_y = np.empty(p)
    while status < 0:
        if t == t1 or p == 0:
            status = FINISHED
            t_end = t1
            break
        min_step = 10.0 * abs(np.nextafter(t, direction * np.inf) - t)
        if h_abs > max_step:
            h_abs = max_step
        elif h_abs < min_step:
            h_abs = min_step
        accepted = False
        rejected = False
        h = 0.0
        t_new = t
        while not accepted:
            if h_abs < min_step:
                status = FAILED
                break
            h = h_abs * direction
            t_new = t + h
            if direction * (t_new - t1) > 0:
                t_new = t1
            h = t_new - t
            h_abs = abs(h)
            for j in range(p):
                K[0, j] = f[j]
            for s in range(1, _NS):
                _stage_point(K, _A[s], s, y, h, req_y)
                req_t[0] = t + _C[s] * h
                yield RHS
                n_rhs += 1
                K[s, :] = f_buf
            for j in range(p):
                acc = 0.0
                for q in range(_NS):
                    acc += _B[q] * K[q, j]
                y_new[j] = y[j] + h * acc
            req_t[0] = t + h
            req_y[:] = y_new
            yield RHS
            n_rhs += 1
            for j in range(p):
                f_new[j] = f_buf[j]
                K[_NS, j] = f_buf[j]
            e5 = 0.0
            e3 = 0.0
            for j in range(p):
                sc = atol + max(abs(y[j]), abs(y_new[j])) * rtol
                a5 = 0.0
                a3 = 0.0
                for q in range(_NS + 1):
                    a5 += K[q, j] * _E5[q]
                    a3 += K[q, j] * _E3[q]
                a5 /= sc
                a3 /= sc
                e5 += a5 * a5
                e3 += a3 * a3
            if e5 == 0.0 and e3 == 0.0:
                err = 0.0
            else:
                err = h_abs * e5 / math.sqrt((e5 + 0.01 * e3) * p)
            if err < 1.0:
                if err == 0.0:
                    factor = _MAX_FACTOR
                else:
                    factor = min(_MAX_FACTOR, _SAFETY * err ** _EXPONENT)
                if rejected:
                    factor = min(1.0, factor)
                h_abs *= factor
                accepted = True
            else:
                h_abs *= max(_MIN_FACTOR, _SAFETY * err ** _EXPONENT)
                rejected = True
        if status == FAILED:
            t_end = t
            break
        # the dense output of the accepted step (three extra stages)
        for s in range(3):
            _stage_point(K, _AX[s], _NS + 1 + s, y, h, req_y)
            req_t[0] = t + _CX[s] * h
            yield RHS
            n_rhs += 1
            K[_NS + 1 + s, :] = f_buf
        i = n_steps
        out_step[i, 0] = t
        out_step[i, 1] = h
        for j in range(p):
            out_yold[i, j] = y[j]
            dy = y_new[j] - y[j]
            out_F[i, 0, j] = dy
            out_F[i, 1, j] = h * f[j] - dy
            out_F[i, 2, j] = 2.0 * dy - h * (f_new[j] + f[j])
            for r in range(4):
                acc = 0.0
                for q in range(16):
                    acc += _D[r, q] * K[q, j]
                out_F[i, 3 + r, j] = h * acc
        n_steps += 1
        t_old = t
        t = t_new
        for j in range(p):
            y[j] = y_new[j]
            f[j] = f_new[j]
        finished = direction * (t - t1) >= 0

        # the events at the step end
        t_stop = t
        if n_g > 0:
            req_t[0] = t
            req_y[:] = y
            if m > 0:
                yield EVENTS
                n_ev += 1
                for k in range(m):
                    g_new[k] = g_buf[k] + shift[k]
            if drift_on:
                yield RESIDUAL
                n_res += 1
                g_new[m] = drift_tol - r_buf[0]
            for k in range(n_g):
                if not (g[k] >= 0.0 and g_new[k] <= 0.0):
                    continue
                # the bracket's left end: a component exactly 0 at the step start is
                # sampled at _BRACKET_FRACS until it is positive (it may rise and come
                # back down within the step); then Brent's method on [a, t]
                done = False
                q, x = _bracket_next(0 if g[k] == 0.0 else _BRACKET_FRACS.size, t_old, t)
                if q == _BRACKET_FRACS.size:
                    done, x = _brent_start(bst, t_old, g[k], t, g_new[k])
                while not done:
                    dense_point(out_F[i], out_yold[i], (x - t_old) / h, dense_y)
                    req_t[0] = x
                    req_y[:] = dense_y
                    if k < m:
                        yield EVENTS if k == heavy else EVENTS_LIGHT
                        n_ev += 1
                        val = g_buf[k] + shift[k]
                    else:
                        yield RESIDUAL
                        n_res += 1
                        val = drift_tol - r_buf[0]
                    if q < _BRACKET_FRACS.size:      # still looking for the bracket
                        q += 1
                        if val > 0.0:
                            q = _BRACKET_FRACS.size
                            done, x = _brent_start(bst, x, val, t, g_new[k])
                        else:
                            q, x = _bracket_next(q, t_old, t)
                            if q == _BRACKET_FRACS.size:
                                done, x = _brent_start(bst, t_old, g[k], t, g_new[k])
                    else:
                        done, x = _brent_next(bst, val)
                root = x
                if comp < 0 or direction * (root - t_stop) < 0:
                    comp = k
                    t_stop = root
            if comp >= 0:
                status = EVENT
        # dips inside the step (up to the crossing): five samples, then bisection
        if m > 0:
            prev = t_old
            for q in range(1, 6):
                tau = t_old + (t_stop - t_old) * (q / 5.0)
                dense_point(out_F[i], out_yold[i], (tau - t_old) / h, dense_y)
                req_t[0] = tau
                req_y[:] = dense_y
                yield EVENTS_LIGHT
                n_ev += 1
                kmin = 0
                gmin = g_buf[0] + shift[0]
                for k in range(1, m):
                    val = g_buf[k] + shift[k]
                    if val < gmin:
                        gmin = val
                        kmin = k
                if gmin < -_DIP_TOL:
                    lo = prev
                    hi = tau
                    for _it in range(200):
                        mid = 0.5 * (lo + hi)
                        if mid == lo or mid == hi:
                            break
                        dense_point(out_F[i], out_yold[i], (mid - t_old) / h, dense_y)
                        req_t[0] = mid
                        req_y[:] = dense_y
                        yield EVENTS_LIGHT
                        n_ev += 1
                        if g_buf[kmin] + shift[kmin] < 0.0:
                            hi = mid
                        else:
                            lo = mid
                    t_stop = hi
                    comp = kmin
                    missed = 1
                    status = EVENT
                    break
                prev = tau
        if status == EVENT:
            t_end = t_stop
            out_t[n_steps] = t_stop
            dense_point(out_F[i], out_yold[i], (t_stop - t_old) / h, out_z)
            if t_stop == t:
                out_z[:] = y
            break
        out_t[n_steps] = t
        for k in range(n_g):
            g[k] = g_new[k]
        if finished:
            status = FINISHED
            t_end = t
            break
        if n_steps == max_steps:
            status = BUFFER_FULL
            t_end = t
            break
    if status != EVENT:
        out_t[n_steps] = t_end
        out_z[:] = y
    info[0] = status
    info[1] = n_steps
    info[2] = comp
    info[3] = n_rhs
    info[4] = n_ev
    info[5] = n_res
    info[6] = missed
    yield 0


class StepBuffers:
    """The arrays one compiled piece writes (allocated once per path, reused per piece)."""

    def __init__(self, p: int, max_steps: int = 2048):
        self.p, self.max_steps = p, max_steps
        self.req_t = np.zeros(1)
        self.req_y = np.zeros(p)
        self.f_buf = np.zeros(p)
        self.r_buf = np.zeros(1)
        self.out_t = np.zeros(max_steps + 1)
        self.out_step = np.zeros((max_steps, 2))
        self.out_yold = np.zeros((max_steps, p))
        self.out_F = np.zeros((max_steps, _POWER, p))
        self.out_z = np.zeros(p)
        self.info = np.zeros(7, dtype=np.int64)
        self._g = np.zeros(0)

    def g_buf(self, m: int) -> np.ndarray:
        if self._g.size != m:
            self._g = np.zeros(m)
        return self._g

    def dense(self) -> DenseSteps:
        n = int(self.info[1])
        return DenseSteps(self.out_t[:n + 1].copy(), self.out_step[:n].copy(),
                          self.out_yold[:n].copy(), self.out_F[:n].copy())


class DenseSteps:
    """The dense output of a compiled piece: ``z(t)`` on ``[ts[0], ts[-1]]`` from the
    DOP853 interpolant of the step that contains ``t`` (as scipy's ``OdeSolution``)."""

    __slots__ = ("ts", "steps", "yold", "F", "_asc")

    def __init__(self, ts, steps, yold, F):
        self.ts, self.steps, self.yold, self.F = ts, steps, yold, F
        self._asc = ts[0] <= ts[-1]

    def __call__(self, t) -> np.ndarray:
        n = self.steps.shape[0]
        if n == 0:
            return self.yold[0].copy() if self.yold.size else np.zeros(0)
        t = float(t)
        if self._asc:
            i = int(np.searchsorted(self.ts, t, side="left")) - 1
        else:
            i = int(np.searchsorted(-self.ts, -t, side="left")) - 1
        i = min(max(i, 0), n - 1)
        out = np.empty(self.yold.shape[1])
        t_old, h = self.steps[i]
        dense_point(self.F[i], self.yold[i], (t - t_old) / h, out)
        return out
