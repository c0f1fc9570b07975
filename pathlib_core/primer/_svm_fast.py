r"""Lean event loop for the SVM regularization path (the fast path of :func:`svm_path`).

The generic engine (:mod:`pathlib_core.core.homotopy`) pays, at every event, for machinery that
the SVM needs only rarely: the tie search, the undetermined multiplier of an empty elbow, the
full gradient ``P x`` and several rescans of every slack. This loop specialises the homotopy
to the SVM dual

.. math::

    \min_\alpha \tfrac12 \alpha^\top Q \alpha - \mathbf 1^\top \alpha
    \quad\text{s.t.}\quad y^\top\alpha = 0,\; 0 \le \alpha \le C

traced in ``C`` (downward from the exact start, and upward above it when ``C_max`` is
large; see :func:`pathlib_core.primer.svm.svm_path`). With the elbow ``E`` (free), the left set
``L``
(``alpha = C``) and the right set ``R`` (``alpha = 0``) fixed, the bordered system

.. math::

    \begin{bmatrix} Q_{EE} & y_E \\ y_E^\top & 0 \end{bmatrix}
    \begin{bmatrix} \alpha_E \\ b \end{bmatrix}
    = \begin{bmatrix} \mathbf 1 \\ 0 \end{bmatrix}
    - C \begin{bmatrix} Q_{EL}\mathbf 1 \\ y_L^\top \mathbf 1 \end{bmatrix}

gives ``alpha_E`` and ``b`` affine in ``C``; the gradient ``g = Q alpha - 1 + b y`` is then
affine too and costs ``O(n |E|)`` with the running sum ``s_L = Q_{:L} 1`` kept up to date
(Hastie, Rosset, Tibshirani and Zhu 2004, sec. 3-4). The inverse of the bordered matrix is
updated by bordering / downdating (:class:`pathlib_core.core.homotopy.KKTInverse`) and rebuilt
every ``refactor_every`` updates or when the stationarity residual of the elbow drifts.
The event loop itself is compiled with numba (:mod:`pathlib_core.primer._svm_kernel`): per event it
costs ``O(n |E|)`` arithmetic and no Python overhead.

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

from ..core.exceptions import HomotopyError
from ..core.homotopy import (
    FREE,
    STATE_NAMES,
    UPPER,
    KKTInverse,
    QPPoint,
    QPProblem,
    exact_point,
    trace_raw,
)
from ..core.linalg import DRIFT_TOL, REFACTOR_EVERY, load_block
from ..core.solution_path import Event
from . import _svm_kernel


def trace_svm(prob: QPProblem, y: np.ndarray, C_start: float, C_end: float, x0, *,
              until_last_event: bool, refactor_every: int = REFACTOR_EVERY,
              tie_tol: float = 1e-10, zero_tol: float = 1e-11, drift_tol: float = DRIFT_TOL,
              state0=None, names=None):
    """Trace the SVM path from ``C_start`` to ``C_end`` (either direction); breakpoints in
    tracing order (see :func:`trace_raw`).

    ``x0`` is an approximate solution at ``C_start`` (polished by the generic engine), or an
    exact one with its index sets ``state0``. Returns ``(params, points, events, info)``. The
    records' ``w_lb`` / ``w_ub`` are not filled for the breakpoints of the compiled loop
    (``svm_path`` keeps only ``x``, ``nu`` and the index sets). ``names`` maps the engine's
    set names (``"free"``, ``"lower"``, ``"upper"``) to those of the compiled loop's events
    (default: the engine's); the engine's own events keep the engine's names.
    """
    t0 = time.perf_counter()
    names = {k: (names or {}).get(v, v) for k, v in STATE_NAMES.items()}
    n = y.size
    Q = np.ascontiguousarray(prob.P)
    yv = np.ascontiguousarray(y, dtype=float)
    s = float(prob.eq_scale[0])  # the engine scales the row y' to A = s y'
    max_updates = max(int(refactor_every), 1)
    cap = max_updates + 2
    out_C, out_b = np.empty(cap), np.empty(cap)
    out_i, out_new = np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)
    out_x = np.empty((cap, n))
    keys = np.empty(n + 2, dtype=np.int64)
    Minv = np.zeros((n + 2, n + 2))
    kw = dict(until_last_event=until_last_event, refactor_every=refactor_every,
              tie_tol=tie_tol, zero_tol=zero_tol)
    stats = {"n_refactorizations": 0, "n_updates": 0, "max_drift": 0.0, "n_tie_events": 0,
             "max_ambiguous": 0, "n_candidates": 0}

    def engine(C_b, x_b, st_b, stop_after):
        try:
            out = trace_raw(prob, C_b, C_end, x0=x_b, state0=st_b, stop_after=stop_after, **kw)
        except np.linalg.LinAlgError as exc:  # pragma: no cover - defensive
            raise HomotopyError(f"linear algebra failure near C={C_b:.17g}: {exc}") from exc
        e = out[3]
        stats["n_refactorizations"] += e.n_refactor
        stats["n_updates"] += e.n_updates
        stats["max_drift"] = max(stats["max_drift"], e.max_drift)
        stats["n_tie_events"] += e.n_tie_events
        stats["max_ambiguous"] = max(stats["max_ambiguous"], e.max_ambiguous)
        stats["n_candidates"] += e.n_candidates
        return out

    # the exact start (index sets identified and polished by the engine)
    direction = 1.0 if C_end >= C_start else -1.0
    params, points, events, _, n_engine = engine(C_start, x0, state0, 0)
    n_fast = 0
    max_events = 50 * n + 100
    while True:
        C_b, p_b = params[-1], points[-1]
        cur = np.asarray(p_b.state, dtype=np.int8).copy()
        F = np.flatnonzero(cur == FREE)
        status = _svm_kernel.FALLBACK
        fac = KKTInverse.build(prob, F, np.zeros(1, dtype=np.int64)) if F.size else None
        if fac is not None:
            stats["n_refactorizations"] += 1
            k = load_block(keys, Minv, fac.keys, fac.Minv)
            left = cur == UPPER
            sL = np.ascontiguousarray(Q[:, left].sum(axis=1)) if left.any() else np.zeros(n)
            st = cur.copy()
            status, m, _, _, drift = _svm_kernel.run(
                Q, yv, s, st, keys, k, Minv, sL, float(yv[left].sum()), float(C_b),
                float(C_end), bool(until_last_event), max_updates, tie_tol, zero_tol,
                drift_tol, KKTInverse.sing_tol, prob.p_scale, out_C, out_i, out_new, out_x,
                out_b, direction)
            stats["max_drift"] = max(stats["max_drift"], drift)
            for r in range(m):
                C, i = float(out_C[r]), int(out_i[r])
                if i >= 0:
                    a, b = int(cur[i]), int(out_new[r])
                    cur = cur.copy()  # each record keeps its own state array
                    cur[i] = b
                    events.append(Event(C, "enter" if b == FREE else "leave", (i,),
                                        {"from": names[a], "to": names[b]}))
                    n_fast += 1
                    stats["n_updates"] += 1
                    stats["n_candidates"] += 1
                params.append(C)
                points.append(QPPoint(out_x[r].copy(), out_b[r:r + 1].copy(), None, None, cur))
            if n_fast + n_engine > max_events:
                raise HomotopyError(f"more than max_events={max_events} events; stopping")
        if status == _svm_kernel.END:
            break
        if status == _svm_kernel.REFACTOR:
            continue
        if status == _svm_kernel.NOT_PSD:
            prob.negative_curvature()  # ValueError naming the kernel unless it is PSD
        # one event by the generic engine, from the last exact breakpoint
        C_b, p_b = params[-1], points[-1]
        pe, ppts, evs, _, ne = engine(C_b, p_b.x, p_b.state, 1)
        n_engine += ne
        points[-1] = ppts[0]
        params.extend(pe[1:])
        points.extend(ppts[1:])
        events.extend(evs)
        if len(pe) == 1 or pe[-1] == C_end:
            break
    if len(params) > 1 and params[-1] == C_end and not until_last_event:
        # the end point solved at C_end itself (a long last segment, e.g. up to a very large
        # C_max, would multiply the rounding of the slopes by its length)
        exact = exact_point(prob, C_end, points[-1].state)
        if exact is not None:
            points[-1] = exact
    info = {
        "n_events": n_fast + n_engine,
        "n_breakpoints": len(params),
        "n_engine_events": n_engine,
        **stats,
        "max_ambiguous": max(stats["max_ambiguous"], 1 if n_fast else 0),
        "time": time.perf_counter() - t0,
    }
    return params, points, events, info
