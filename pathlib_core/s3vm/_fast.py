r"""Lean event loop for the CP-step of the S3VM path (the fast path of :func:`s3vm_path`).

A CP-step (Ogawa et al. 2013, Algorithm 2) is the box QP of :mod:`pathlib_core.s3vm.path` traced
upward in ``t = C^*`` until a watched margin reaches the polytope boundary. The generic engine
(:func:`pathlib_core.core.homotopy.trace_path`) pays ``O(n k)`` Python work per event for
machinery that this QP needs only rarely (ties, equality rows, undetermined multipliers). This
module runs the plain single-index events in a compiled loop (:mod:`pathlib_core.s3vm._kernel`,
arithmetic in its docstring) and hands everything else -- the exact start, ties, zero-length
steps, singular updates, wrong-way indices, drift -- to the generic engine for exactly one
event, after which the loop resumes from the engine's exact breakpoint. Same design as the
lean SVM path (:mod:`pathlib_core.primer._svm_fast`); the tests compare it with the generic engine.
"""

from __future__ import annotations

import numpy as np

from ..core.exceptions import HomotopyError
from ..core.homotopy import (
    UPPER,
    KKTInverse,
    QPPoint,
    QPProblem,
    events_for,
    exact_point,
    trace_raw,
)
from ..core.linalg import DRIFT_TOL, REFACTOR_EVERY, load_block
from . import _kernel as _k


def trace_cp(prob: QPProblem, t_start: float, t_end: float, x0, state0, *, watch, level,
             stop, refactor_every: int = REFACTOR_EVERY, tie_tol: float = 1e-10,
             zero_tol: float = 1e-11, drift_tol: float = DRIFT_TOL):
    """Trace the box QP ``prob`` (no equality rows) from ``t_start`` up to ``t_end``.

    Stops at the first breakpoint where ``stop(point, t)`` is true (the compiled loop uses the
    equivalent affine test ``g_i + 1 <= level`` on the indices ``watch``).

    Returns ``(params, xs, events, info)``: breakpoints in increasing order, the primal
    solution at each, the index-set events, and counters (``n_events``,
    ``n_engine_events``, ``n_refactorizations``, ``max_drift``).
    """
    if prob.m:
        raise ValueError("trace_cp handles box QPs only (no equality rows)")
    n = prob.n
    Q = np.ascontiguousarray(prob.P)
    q = np.ascontiguousarray(prob.q0)
    ub0 = np.ascontiguousarray(prob.ub0, dtype=float)
    ub1 = np.ascontiguousarray(prob.ub1, dtype=float)
    watch = np.ascontiguousarray(watch, dtype=np.int64)
    level = np.ascontiguousarray(level, dtype=float)
    max_updates = max(int(refactor_every), 1)
    cap = max_updates + 2
    out_t = np.empty(cap)
    out_i = np.empty(cap, dtype=np.int64)
    out_new = np.empty(cap, dtype=np.int64)
    out_x = np.empty((cap, n))
    keys = np.empty(n, dtype=np.int64)
    Minv = np.zeros((n, n))
    kw = dict(refactor_every=refactor_every, tie_tol=tie_tol, zero_tol=zero_tol,
              drift_tol=drift_tol)
    stats = {"n_refactorizations": 0, "max_drift": 0.0}

    def engine(t_b, x_b, st_b, stop_after):
        try:
            out = trace_raw(prob, t_b, t_end, x0=x_b, state0=st_b, stop_after=stop_after,
                             stop=stop, **kw)
        except np.linalg.LinAlgError as exc:  # pragma: no cover - defensive
            raise HomotopyError(f"linear algebra failure at t={t_b:.17g}: {exc}") from exc
        stats["n_refactorizations"] += out[3].n_refactor
        stats["max_drift"] = max(stats["max_drift"], out[3].max_drift)
        return out

    params, points, events, _, n_engine = engine(t_start, x0, state0, 0)
    xs = [points[0].x]
    states = [np.asarray(points[0].state, dtype=np.int8)]
    n_fast = 0
    max_events = 50 * n + 100
    while True:
        t_b = params[-1]
        cur = states[-1].copy()
        F = np.flatnonzero(cur == 0)
        fac = KKTInverse.build(prob, F, np.zeros(0, dtype=np.int64))
        status = _k.FALLBACK
        if fac is not None:
            stats["n_refactorizations"] += 1
            kk = load_block(keys, Minv, fac.keys, fac.Minv)
            up = cur == UPPER
            s0 = np.ascontiguousarray(Q[:, up] @ ub0[up]) if up.any() else np.zeros(n)
            s1 = np.ascontiguousarray(Q[:, up] @ ub1[up]) if up.any() else np.zeros(n)
            st = cur.copy()
            status, m, drift = _k.run(Q, q, ub0, ub1, st, keys, kk, Minv, s0, s1, float(t_b),
                                      float(t_end), watch, level, max_updates, tie_tol,
                                      zero_tol, drift_tol, KKTInverse.sing_tol, prob.p_scale,
                                      out_t, out_i, out_new, out_x)
            stats["max_drift"] = max(stats["max_drift"], drift)
            for r in range(m):
                t, i = float(out_t[r]), int(out_i[r])
                if i >= 0:
                    new = cur.copy()
                    new[i] = out_new[r]
                    events.extend(events_for(t, cur, new, [i]))
                    cur = new
                    n_fast += 1
                params.append(t)
                xs.append(out_x[r].copy())
                states.append(cur.copy())
            if n_fast + n_engine > max_events:
                raise HomotopyError(f"more than max_events={max_events} events; stopping")
        if status in (_k.END, _k.STOP):
            break
        if status == _k.REFACTOR:
            continue
        if status == _k.NOT_PSD:
            prob.negative_curvature()  # ValueError naming the kernel unless it is PSD
        # one event by the generic engine, from the last exact breakpoint
        pe, ppts, evs, _, ne = engine(params[-1], xs[-1], states[-1], 1)
        n_engine += ne
        xs[-1] = ppts[0].x
        states[-1] = np.asarray(ppts[0].state, dtype=np.int8)
        params.extend(pe[1:])
        xs.extend(p.x for p in ppts[1:])
        states.extend(np.asarray(p.state, dtype=np.int8) for p in ppts[1:])
        events.extend(evs)
        if len(pe) == 1 or pe[-1] >= t_end:
            break
        if stop(ppts[-1], pe[-1]):
            break
    if len(params) > 1 and params[-1] == t_end:
        # the end point solved at t_end itself (a long last segment, e.g. up to a very large
        # C*, would multiply the rounding of the slopes and running sums by its length)
        exact = exact_point(prob, t_end, states[-1])
        if exact is not None:
            xs[-1] = exact.x
    info = {"n_events": n_fast + n_engine, "n_engine_events": n_engine, **stats}
    return params, xs, events, info


def point_of(x) -> QPPoint:
    """A minimal :class:`QPPoint` carrying only ``x`` (what the S3VM records use)."""
    z = np.zeros(0)
    return QPPoint(x, z, z, z, np.zeros(0, dtype=np.int8))
