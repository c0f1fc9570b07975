r"""Lean event loop for the SVM regularization path (the fast path of :func:`svm_path`).

The generic engine (:mod:`pathlib_core.homotopy`) pays, at every event, for machinery that
the SVM needs only rarely: the tie search, the undetermined multiplier of an empty elbow, the
full gradient ``P x`` and several rescans of every slack. This loop specialises the homotopy
to the SVM dual

.. math::

    \min_\alpha \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha
    \quad\text{s.t.}\quad y^\top\alpha = 0,\; 0 \le \alpha \le C

traced downward in ``C``. With the elbow ``E`` (free), the left set ``L`` (``alpha = C``) and
the right set ``R`` (``alpha = 0``) fixed, the bordered system

.. math::

    \begin{bmatrix} Q_{EE} & y_E \\ y_E^\top & 0 \end{bmatrix}
    \begin{bmatrix} \alpha_E \\ b \end{bmatrix}
    = \begin{bmatrix} \mathbf 1 \\ 0 \end{bmatrix}
    - C \begin{bmatrix} Q_{EL}\mathbf 1 \\ y_L^\top \mathbf 1 \end{bmatrix}

gives ``alpha_E`` and ``b`` affine in ``C``; the gradient ``g = Q alpha - 1 + b y`` is then
affine too and costs ``O(n |E|)`` with the running sum ``s_L = Q_{:L} 1`` kept up to date
(Hastie, Rosset, Tibshirani and Zhu 2004, sec. 3-4). The inverse of the bordered matrix is
updated by bordering / downdating (:class:`pathlib_core.homotopy._KKTInverse`) and rebuilt
every ``refactor_every`` updates or when the stationarity residual of the elbow drifts.

Whatever is not the plain single-index event -- an empty elbow (undetermined intercept), two
events closer than the tie tolerance, a zero-length step, a numerically singular bordered
matrix, a new index moving the wrong way, drift that a rebuild does not cure -- is handed to
the generic engine for exactly one event, after which this loop resumes from the engine's
exact breakpoint. The result is the same path (same breakpoints, same records); the tests
compare both.
"""

from __future__ import annotations

import time

import numpy as np

from .homotopy import (
    FREE,
    LOWER,
    UPPER,
    HomotopyError,
    QPPoint,
    _events_for,
    _KKTInverse,
    _Problem,
    _trace_raw,
)


class _Fallback(Exception):
    """The current event needs the generic engine."""


class _SVMSegment:
    """Affine solution in ``C`` for fixed index sets (see the module docstring)."""

    __slots__ = ("C", "state", "fac", "F", "a0", "a1", "b0", "b1", "g0", "g1", "g", "gs",
                 "sgn")

    def __init__(self, C, state, fac, F, a0, a1, b0, b1, g0, g1):
        self.C, self.state, self.fac, self.F = C, state, fac, F
        self.a0, self.a1, self.b0, self.b1, self.g0, self.g1 = a0, a1, b0, b1, g0, g1


class _SVMStepper:
    def __init__(self, prob: _Problem, y: np.ndarray, *, refactor_every: int, tie_tol: float,
                 zero_tol: float, drift_tol: float):
        self.prob, self.Q, self.y = prob, prob.P, y
        self.n = y.size
        self.s = float(prob.eq_scale[0])  # the engine scales the row y' to A = s y'
        self.refactor_every = refactor_every
        self.tie_tol, self.zero_tol, self.drift_tol = tie_tol, zero_tol, drift_tol
        self.n_refactor = 0
        self.n_updates = 0
        self.since = 0
        self.max_drift = 0.0
        self.sL = np.zeros(self.n)
        self.sL_state = None

    # ---- the running sum Q_{:L} 1 -----------------------------------------------------
    def _sum_left(self, state: np.ndarray) -> np.ndarray:
        if self.sL_state is not None:
            diff = np.flatnonzero(state != self.sL_state)
            if diff.size <= 4:
                for j in diff:
                    if state[j] == UPPER:
                        self.sL += self.Q[:, j]
                    elif self.sL_state[j] == UPPER:
                        self.sL -= self.Q[:, j]
                self.sL_state = state.copy()
                return self.sL
        L = np.flatnonzero(state == UPPER)
        self.sL = self.Q[:, L].sum(axis=1) if L.size else np.zeros(self.n)
        self.sL_state = state.copy()
        return self.sL

    def _signs(self, state: np.ndarray) -> np.ndarray:
        """+1 on the right set, -1 on the left set, 0 on the elbow (a copy)."""
        return (state == LOWER).astype(float) - (state == UPPER)

    # ---- one segment ---------------------------------------------------------------------
    def build(self, state: np.ndarray) -> _KKTInverse:
        F = np.flatnonzero(state == FREE)
        if F.size == 0:
            raise _Fallback
        fac = _KKTInverse.build(self.prob, F, np.zeros(1, dtype=np.int64))
        self.n_refactor += 1
        self.since = 0
        if fac is None:
            raise _Fallback
        # the incremental sum is refreshed with every factorization (drift control)
        self.sL_state = None
        return fac

    def solve(self, C: float, state: np.ndarray, fac: _KKTInverse) -> _SVMSegment:
        keys = fac.keys
        isv = keys >= 0
        F = keys[isv]
        sL = self._sum_left(state)
        yL = float(self.y[state == UPPER].sum())
        rhs = np.empty((keys.size, 2))
        rhs[isv, 0] = 1.0
        rhs[isv, 1] = -sL[F]
        rhs[~isv, 0] = 0.0
        rhs[~isv, 1] = -self.s * yL
        sol = fac.Minv @ rhs
        aF = sol[isv]
        nu = sol[~isv][0] * self.s
        G = aF.T @ self.Q[F]  # Q symmetric: rows of Q_F are contiguous, columns are not
        g0 = G[0] - 1.0 + nu[0] * self.y
        g1 = G[1] + sL + nu[1] * self.y
        seg = _SVMSegment(C, state, fac, F, aF[:, 0], aF[:, 1], float(nu[0]), float(nu[1]),
                          g0, g1)
        seg.sgn = self._signs(state)
        return seg

    def drift(self, seg: _SVMSegment) -> float:
        """Stationarity residual of the elbow at ``seg.C``, relative to ``max(|g|, 1)``."""
        g = seg.g0 + seg.C * seg.g1
        seg.g = g
        seg.gs = max(float(np.max(np.abs(g))), 1.0)
        return float(np.max(np.abs(g[seg.F]))) / seg.gs

    def checked(self, C: float, state: np.ndarray, fac: _KKTInverse) -> _SVMSegment:
        seg = self.solve(C, state, fac)
        d = self.drift(seg)
        if d > self.drift_tol:
            seg = self.solve(C, state, self.build(state))
            d = self.drift(seg)
            if d > self.drift_tol:
                raise _Fallback
        self.max_drift = max(self.max_drift, d)
        return seg

    # ---- the next event below seg.C ----------------------------------------------------
    def next_event(self, seg: _SVMSegment, C_end: float):
        """(C_event, index, new state) of the first event below ``seg.C``; None at C_end.

        Slacks ``v >= 0`` and their rates ``r`` per unit *decrease* of ``C``: ``alpha_i`` and
        ``C - alpha_i`` on the elbow, ``-g_i`` on the left set, ``g_i`` on the right set. A
        slack blocks when ``r < -rtol``; it reaches zero after ``v / -r``.
        """
        C, F, g, gs = seg.C, seg.F, seg.g, seg.gs
        sgn = seg.sgn  # +1 right (g >= 0), -1 left (g <= 0), 0 elbow
        aF = seg.a0 + C * seg.a1
        # bound points: v = sgn g, r = -sgn g1
        rb = sgn * seg.g1  # = -r
        rtol_d = max(1e-9 * float(np.max(np.abs(seg.g1))), self.zero_tol * gs / C)
        blk = rb > rtol_d
        vb = sgn * g
        if float(np.min(vb)) < -1e3 * self.zero_tol * gs or \
                float(np.min(aF)) < -1e3 * self.zero_tol * C or \
                float(np.max(aF)) > C * (1 + 1e3 * self.zero_tol):
            raise _Fallback  # infeasible beyond rounding: let the engine sort it out
        tb = np.full(vb.size, np.inf)
        tb[blk] = np.maximum(vb[blk], 0.0) / rb[blk]
        # elbow points: alpha_i decreases to 0 when a1 > 0; C - alpha_i when a1 < 1
        rtol_p = max(1e-9 * max(float(np.max(np.abs(seg.a1))), 1.0), self.zero_tol)
        a1 = seg.a1
        tlo = np.where(a1 > rtol_p, np.maximum(aF, 0.0) / np.where(a1 > rtol_p, a1, 1.0),
                       np.inf)
        om = 1.0 - a1
        tup = np.where(om > rtol_p, np.maximum(C - aF, 0.0) / np.where(om > rtol_p, om, 1.0),
                       np.inf)
        kb, kl, ku = int(np.argmin(tb)), int(np.argmin(tlo)), int(np.argmin(tup))
        cand = ((float(tb[kb]), int(kb), FREE), (float(tlo[kl]), int(F[kl]), LOWER),
                (float(tup[ku]), int(F[ku]), UPPER))
        t1, i, new = min(cand)
        span = C - C_end
        ttol = self.tie_tol * C
        if not np.isfinite(t1) or t1 >= span - ttol:
            return None
        if t1 <= ttol:
            raise _Fallback  # zero-length step: a degenerate event
        lim = t1 + self.tie_tol * max(C, t1)
        if int(np.count_nonzero(tb <= lim)) + int(np.count_nonzero(tlo <= lim)) + \
                int(np.count_nonzero(tup <= lim)) > 1:
            raise _Fallback  # tie
        return C - t1, i, new

    def step(self, seg: _SVMSegment, C_ev: float, i: int, new_state: int) -> _SVMSegment:
        st = seg.state.copy()
        old = st[i]
        st[i] = new_state
        fac = None
        if self.since < self.refactor_every:
            fac = seg.fac.add(i) if new_state == FREE else seg.fac.remove(i)
            if fac is not None:
                self.n_updates += 1
                self.since += 1
        if fac is None:
            fac = self.build(st)
        nseg = self.checked(C_ev, st, fac)
        # the changed index must move into its new set as C decreases (first order)
        if new_state == FREE:
            pos = int(np.flatnonzero(nseg.F == i)[0])
            a1 = nseg.a1[pos]
            # leaving alpha = 0 needs d alpha / d(-C) > 0; leaving alpha = C needs d(C - alpha)
            # / d(-C) > 0
            ok = (-a1 > 0) if old == LOWER else (a1 - 1.0 > 0)
        elif new_state == LOWER:
            ok = -nseg.g1[i] > 0  # g_i >= 0 below
        else:
            ok = nseg.g1[i] > 0  # g_i <= 0 below
        if not ok:
            raise _Fallback
        # refine the breakpoint: the event time comes from the old segment, where the crossing
        # rate may be small; the root of the changed index's value on the new segment is the
        # point where both index sets are exactly optimal (cf. homotopy._Engine._refine)
        if new_state == FREE:
            c1 = a1 if old == LOWER else a1 - 1.0
            c0 = nseg.a0[pos]
        else:
            c0, c1 = nseg.g0[i], nseg.g1[i]
        if c1 != 0.0:
            C_star = -c0 / c1
            if abs(C_star - C_ev) <= 1e-6 * C_ev and C_star < seg.C:
                nseg.C = C_star
                self.drift(nseg)
        return nseg

    def point(self, seg: _SVMSegment, C: float) -> QPPoint:
        st = seg.state
        x = np.zeros(self.n)
        x[st == UPPER] = C
        x[seg.F] = seg.a0 + C * seg.a1
        g = seg.g0 + C * seg.g1
        w_lb = np.where(st == LOWER, np.maximum(g, 0.0), 0.0)
        w_ub = np.where(st == UPPER, np.maximum(-g, 0.0), 0.0)
        return QPPoint(x, np.array([seg.b0 + C * seg.b1]), w_lb, w_ub, st.copy())


def trace_svm(prob: _Problem, y: np.ndarray, C_start: float, C_end: float, x0, *,
              until_last_event: bool, refactor_every: int = 50, tie_tol: float = 1e-10,
              zero_tol: float = 1e-11, drift_tol: float = 1e-9):
    """Trace the SVM path downward; breakpoints in tracing order (see :func:`_trace_raw`).

    Returns ``(params, points, events, info)``.
    """
    t0 = time.perf_counter()
    n = y.size
    kw = dict(until_last_event=until_last_event, refactor_every=refactor_every,
              tie_tol=tie_tol, zero_tol=zero_tol)
    stepper = _SVMStepper(prob, y, refactor_every=refactor_every, tie_tol=tie_tol,
                          zero_tol=zero_tol, drift_tol=drift_tol)
    eng_stats = {"n_refactorizations": 0, "n_updates": 0, "max_drift": 0.0,
                 "n_tie_events": 0, "max_ambiguous": 0, "n_candidates": 0}

    def engine(C_b, x_b, st_b, stop_after):
        try:
            out = _trace_raw(prob, C_b, C_end, x0=x_b, state0=st_b, stop_after=stop_after, **kw)
        except np.linalg.LinAlgError as exc:  # pragma: no cover - defensive
            raise HomotopyError(f"linear algebra failure near C={C_b:.17g}: {exc}") from exc
        e = out[3]
        eng_stats["n_refactorizations"] += e.n_refactor
        eng_stats["n_updates"] += e.n_updates
        eng_stats["max_drift"] = max(eng_stats["max_drift"], e.max_drift)
        eng_stats["n_tie_events"] += e.n_tie_events
        eng_stats["max_ambiguous"] = max(eng_stats["max_ambiguous"], e.max_ambiguous)
        eng_stats["n_candidates"] += e.n_candidates
        return out

    # the exact start (index sets identified and polished by the engine)
    params, points, events, _, n_ev = engine(C_start, x0, None, 0)
    n_fast = 0
    n_engine = n_ev
    max_events = 50 * n + 100
    done = False
    while not done:
        C_b, p_b = params[-1], points[-1]
        try:
            seg = stepper.checked(C_b, p_b.state, stepper.build(p_b.state))
            while True:
                ev = stepper.next_event(seg, C_end)
                if ev is None:
                    if not until_last_event:
                        params.append(C_end)
                        points.append(stepper.point(seg, C_end))
                    done = True
                    break
                C_ev, i, new_state = ev
                old_state = seg.state
                seg = stepper.step(seg, C_ev, i, new_state)
                C_ev = seg.C  # refined
                if C_ev <= C_end:
                    raise _Fallback  # the refined event lies at or beyond the end
                params.append(C_ev)
                points.append(stepper.point(seg, C_ev))
                events.extend(_events_for(C_ev, old_state, seg.state, [i]))
                n_fast += 1
                if n_fast + n_engine > max_events:
                    raise HomotopyError(f"more than max_events={max_events} events; stopping")
        except _Fallback:
            # one event by the generic engine, from the last exact breakpoint
            C_b, p_b = params[-1], points[-1]
            pe, ppts, evs, _, ne = engine(C_b, p_b.x, p_b.state, 1)
            n_engine += ne
            points[-1] = ppts[0]
            params.extend(pe[1:])
            points.extend(ppts[1:])
            events.extend(evs)
            if len(pe) == 1 or pe[-1] == C_end:
                done = True
    info = {
        "n_events": n_fast + n_engine,
        "n_breakpoints": len(params),
        "n_refactorizations": stepper.n_refactor + eng_stats["n_refactorizations"],
        "n_updates": stepper.n_updates + eng_stats["n_updates"],
        "max_drift": max(stepper.max_drift, eng_stats["max_drift"]),
        "n_tie_events": eng_stats["n_tie_events"],
        "max_ambiguous": max(eng_stats["max_ambiguous"], 1 if n_fast else 0),
        "n_candidates": n_fast + eng_stats["n_candidates"],
        "n_engine_events": n_engine,
        "time": time.perf_counter() - t0,
    }
    return params, points, events, info
