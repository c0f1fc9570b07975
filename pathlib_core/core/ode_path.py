"""Piecewise-smooth solution paths by ODE integration with event detection.

The module holds :func:`follow_path` (the path follower, returning a
:class:`~pathlib_core.core.solution_path.SolutionPath` of ODE pieces), :class:`Update` (what
a client's ``update`` returns at a critical point) and :data:`METHODS` (the integrators).

Many parametric problems (the GAGA age-path of self-paced learning, Qu et al. 2022; paths of
smooth losses with set constraints) share one structure. While a discrete *state* -- the
partition of samples or features into index sets -- stays constant, the solution ``z(t)`` is
a smooth function of the parameter ``t`` defined implicitly by ``F_s(z, t) = 0``. The implicit
function theorem turns that into an initial value problem

.. math::

    \\frac{dz}{dt} = -\\bigl(\\partial_z F_s(z, t)\\bigr)^{-1} \\partial_t F_s(z, t)
    =: f(t, z, s),

valid until a *critical point*: some condition that defines the state stops holding. Each such
condition is written as an inequality ``g_k(t, z, s) >= 0``; a critical point is a zero
crossing of some ``g_k``. There the client updates the state:

- at a **turning point** the path is continuous and only the state changes (the new piece
  starts from the same ``z``, possibly re-expressed for the new state);
- at a **jump point** the path is discontinuous: the client re-solves the problem (warm
  start) and the new piece starts from a new ``z``.

:func:`follow_path` integrates each piece with one of scipy's ``solve_ivp`` integrators (dense
output), stepping it directly and checking the vector of event functions after every step
(the crossing is located by ``brentq`` on the dense output, as ``solve_ivp`` does for its
terminal events), locates critical points to the integrator's accuracy (and, since a sign
check at the ends of a step misses a component that dips below zero and recovers within it,
samples the dense output at five points of every step), hands *all*
event components that vanish at the located parameter (ties) to the client's ``update`` in one
call, optionally corrects drift away from the solution manifold (``residual > drift_tol`` ->
``correct``), and returns a :class:`~pathlib_core.core.solution_path.SolutionPath` whose pieces
evaluate the dense
output, so that ``path.at(t)`` is accurate to the integration tolerance everywhere, not only
at breakpoints.

Sign convention for events
--------------------------
``events(t, z, state)`` returns a 1-D array ``g`` with ``g[k] > 0`` while condition ``k`` of
the current state holds. Event ``k`` fires when ``g[k]`` decreases through zero *in the
tracing order* (increasing ``t`` for ``t_span = (a, b)`` with ``a < b``, decreasing ``t``
otherwise); increases through zero are ignored. Components that are irrelevant in the current
state should return a positive constant (e.g. ``1.0``), never ``inf`` or ``nan``. Scale the
components so that a unit change is meaningful (``start_tol`` is in the units of ``g``).
"""

from __future__ import annotations

import copy
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.integrate import BDF, DOP853, LSODA, RK45, OdeSolution, Radau
from scipy.optimize import brentq

try:  # scipy's initial-step heuristic, evaluated in the parameter's own unit (param_floor=0)
    from scipy.integrate._ivp.common import select_initial_step as _select_initial_step
except ImportError:  # pragma: no cover - a scipy without it: the solver's own choice
    _select_initial_step = None

from .dop853_kernel import StepBuffers
from .exceptions import PathFollowingError, SolverError
from .solution_path import Event, FunctionSegment, SolutionPath
from .validation import as_vector, check_choice, finite_scalar, positive_scalar

__all__ = ["Update", "follow_path", "METHODS", "NewtonStall"]

#: ``solve_ivp`` methods accepted by :func:`follow_path` (all provide dense output).
METHODS = ("DOP853", "RK45", "Radau", "BDF", "LSODA")
_SOLVERS = {"DOP853": DOP853, "RK45": RK45, "Radau": Radau, "BDF": BDF, "LSODA": LSODA}

_EPS = np.finfo(float).eps
#: an event component below ``-_DIP_TOL`` inside a step is a crossing the step-end check missed
_DIP_TOL = 1e-10


class NewtonStall:
    """The stopping rule of the models' Newton correctors: give up once ``patience`` steps in
    a row fail to bring the residual below ``factor`` times the best one so far.

    A corrector next to a fold (``J`` nearly singular) can creep along for many steps at a
    residual just above its target; it then hands the point to its fallback instead.

    Examples
    --------
    >>> stall = NewtonStall()
    >>> [stall(r) for r in (1.0, 0.5, 0.49, 0.48, 0.47, 0.46)]
    [False, False, False, False, False, True]
    """

    def __init__(self, factor: float = 0.9, patience: int = 4):
        self.factor, self.patience = factor, patience
        self.best, self.stalled = np.inf, 0

    def __call__(self, residual: float) -> bool:
        """Record a step's residual; ``True`` when the corrector should stop."""
        if residual < self.factor * self.best:
            self.best, self.stalled = residual, 0
        else:
            self.stalled += 1
        return self.stalled >= self.patience


@dataclass(frozen=True)
class Update:
    """What ``update`` returns at a critical point (a plain tuple is accepted as well).

    Attributes
    ----------
    state : object
        The new discrete state. Treated as immutable: build a new object rather than mutating
        the old one (pieces already traced keep a reference to their state), or pass
        ``copy_state=True`` to :func:`follow_path`.
    z : ndarray or None
        The point from which the next piece starts; ``None`` keeps the current ``z``. Its
        length may differ from the current one (e.g. the active set grew).
    kind : str
        The event kind recorded in the path: ``"turning"``, ``"jump"``, ``"enter"``, ...
    info : dict
        Extra details stored in :attr:`Event.info`.
    """

    state: Any
    z: np.ndarray | None
    kind: str
    info: dict = field(default_factory=dict)


def follow_path(z0, t_span: Sequence[float], *, rhs: Callable, events: Callable,
                update: Callable, residual: Callable, state: Any = None,
                correct: Callable | None = None, record: Callable | None = None,
                jac: Callable | None = None, method: str = "DOP853", rtol: float = 1e-10,
                atol: float = 1e-12, max_step: float = np.inf, drift_tol: float = 1e-8,
                drift_check: str = "step", tie_tol: float = 1e-9, start_tol: float = 1e-8,
                max_events: int = 10_000, max_events_per_point: int | None = None,
                restart_kinds: Sequence[str] = ("jump", "restart"), param_name: str = "t",
                copy_state: bool = False, record_residual: Callable | None = None,
                param_floor: float = 1.0, param_unit: float = 1.0,
                kernel: Callable | None = None) -> SolutionPath:
    """Follow a piecewise-smooth solution path ``z(t)`` from ``t_span[0]`` to ``t_span[1]``.

    On each piece the state ``s`` is fixed and ``z`` solves the initial value problem
    ``dz/dt = rhs(t, z, s)``. The piece ends at the first parameter where some event component
    ``g_k(t, z(t), s)`` (see the module docstring for the sign convention) crosses zero
    downwards; then ``update`` returns the new state (and possibly a new ``z``) and the next
    piece starts at the same parameter.

    Parameters
    ----------
    z0 : array_like of shape (p,)
        Solution at ``t_span[0]`` (consistent with ``state``: all ``g_k >= 0``).
    t_span : (float, float)
        Start and end of the parameter range; ``t_span[1] < t_span[0]`` traces downwards.
    rhs : callable
        ``rhs(t, z, state) -> ndarray (p,)``, the path's derivative ``dz/dt``.
    events : callable
        ``events(t, z, state) -> ndarray (m,)``, the event functions ``g``. The length may
        depend on the state; index ``k`` is what ``update`` receives and what the recorded
        :class:`Event` lists (use sample / feature indices).
    update : callable
        ``update(t, z, state, fired) -> (new_state, new_z, kind[, info])`` or an
        :class:`Update`. ``fired`` is a sorted int array of *every* component that vanishes
        at ``t`` (ties are passed together). ``new_z=None`` keeps ``z`` (a turning point);
        returning a re-solved ``z`` makes the path jump.
    residual : callable
        ``residual(t, z, state) -> float``, the optimality (KKT) residual of ``z``; used for
        the drift check and for :meth:`SolutionPath.kkt_residuals`.
    state : object, optional
        The initial state.
    correct : callable, optional
        ``correct(t, z, state) -> z``, a corrector (Newton steps, a re-solve) applied
        whenever ``residual > drift_tol``; each call is counted in ``info["n_corrections"]``
        and must bring the residual back below ``drift_tol``, or (after a drift check)
        return a re-solved point at which some event component is violated (below
        ``-start_tol``): those components then fire at once and ``update`` installs the
        point's state.
    record : callable, optional
        ``record(t, z, state) -> record`` builds the model's solution record (a dataclass)
        stored in the path; default: a copy of ``z``.
    jac : callable, optional
        ``jac(t, z, state) -> ndarray (p, p)``, Jacobian of ``rhs`` for the implicit methods.
    method : {"DOP853", "RK45", "Radau", "BDF", "LSODA"}
        The integrator (scipy's ``solve_ivp`` classes, stepped directly).
    rtol, atol : float
        Integration tolerances (tight by default: the dense output is the path).
    max_step : float
        Largest integration step.
    drift_tol : float
        Largest residual tolerated before ``correct`` is applied.
    drift_check : {"step", "end"}
        With ``correct`` given: check the residual after every integration step (a terminal
        event ``drift_tol - residual``), or only at piece ends and after updates. The check
        sees step ends (and the located crossing); inside a step the residual of the dense
        output is bounded only by the interpolant's accuracy (about 10 x ``drift_tol`` was
        seen with ``rtol = atol = 1e-3``).
    tie_tol : float
        Components whose zero crossing is predicted within ``tie_tol * max(param_floor,
        |t|)`` of the located event (first order, from the event function's slope) fire
        together with it.
    start_tol : float
        A piece may start with ``g_k`` slightly negative (down to ``-start_tol``): those
        components are shifted to start at zero. Below ``-start_tol`` the state is violated
        and the components fire immediately.
    max_events : int
        Cap on the number of calls to ``update``.
    max_events_per_point : int, optional
        Cap on consecutive updates at one parameter value (an event that fires again right
        after its update); default ``2 * m + 10``.
    restart_kinds : sequence of str
        Event kinds counted as restarts in ``info["n_restarts"]``.
    param_name : str
        Name of the parameter in the returned path.
    copy_state : bool
        Deep-copy the state before every ``update`` call (for clients that mutate it).
    record_residual : callable, optional
        ``record_residual(t, record) -> float`` for the path. By default the path reports the
        residuals computed while tracing at every piece end.
    param_floor : float >= 0, default 1.0
        The parameter's unit for the windows that are relative to it (the tie window, the
        shortest piece, ``64 eps max(param_floor, |t|)``, the first step after a reassigned
        component): ``max(param_floor, |t|)``. The default treats ``|t| < 1`` in absolute
        terms; ``0`` makes every window relative to ``|t|`` (for a parameter bounded away
        from zero whose scale is arbitrary, such as an age: then a path traced on ``2^k t``
        is the same path).
    param_unit : float > 0, default 1.0
        Parameter values in error messages are multiplied by it (for a client that traces
        a rescaled parameter and reports in its user's units).
    kernel : callable, optional
        ``kernel(state) -> piece or None``: a compiled integrator of the pieces in
        ``state`` (``method="DOP853"`` only). ``piece(t, t1, z, shift, g_start, first_step,
        buffers, rtol, atol, max_step, drift_tol, drift_on, param_floor)`` integrates one
        piece (``g_start``: the shifted event values at ``t``) with
        :func:`pathlib_core.core.dop853_kernel.dop853_piece` into the
        :class:`~pathlib_core.core.dop853_kernel.StepBuffers` ``buffers`` (the model's
        ``rhs``, ``events`` and ``residual`` in compiled form, e.g.
        :func:`pathlib_core.gaga.age_kernel.run_piece`); it locates the same events as the
        Python piece, without a Python call per step. ``None`` for a state integrates that
        piece in Python.

    Returns
    -------
    SolutionPath
        Pieces are :class:`~pathlib_core.core.solution_path.FunctionSegment` (kind ``"ode"``)
        evaluating the
        dense output; events carry the client's kinds and the fired indices. ``path.info``:
        ``n_pieces``, ``n_events``, ``n_events_by_kind``, ``n_corrections``,
        ``n_restarts``, ``n_zero_length`` (updates with no piece in between),
        ``max_residual`` (over the states stored in the path), ``max_residual_seen``
        (including states before correction), ``n_rhs_evals``, ``n_jac_evals``,
        ``n_residual_evals``, ``n_event_evals``, ``correction_params``, ``events_at_end``,
        ``method``, ``rtol``, ``atol``, ``wall_time``.

    Raises
    ------
    ValueError
        On invalid arguments, naming the argument.
    PathFollowingError
        If the integrator fails, or more than ``max_events`` events happen (or more than
        ``max_events_per_point`` at one parameter value).
    SolverError
        If ``correct`` fails to bring the residual below ``drift_tol``.

    Both are :class:`RuntimeError` subclasses (:mod:`pathlib_core.core.exceptions`).
    """
    z0 = as_vector(z0, "z0")
    t0, t1 = _check_span(t_span)
    for name, fn in (("rhs", rhs), ("events", events), ("update", update),
                     ("residual", residual)):
        if not callable(fn):
            raise ValueError(f"{name} must be callable; got {type(fn).__name__}")
    for name, fn in (("correct", correct), ("record", record), ("jac", jac),
                     ("record_residual", record_residual)):
        if fn is not None and not callable(fn):
            raise ValueError(f"{name} must be callable or None; got {type(fn).__name__}")
    check_choice(method, "method", METHODS)
    if kernel is not None and (not callable(kernel) or method != "DOP853"):
        raise ValueError("kernel must be callable and needs method='DOP853'; got "
                         f"{type(kernel).__name__} with method={method!r}")
    check_choice(drift_check, "drift_check", {"step", "end"})
    opts = _Options(
        rtol=positive_scalar(rtol, "rtol"), atol=positive_scalar(atol, "atol"),
        max_step=_positive_or_inf(max_step, "max_step"),
        drift_tol=positive_scalar(drift_tol, "drift_tol"),
        tie_tol=positive_scalar(tie_tol, "tie_tol", allow_zero=True),
        start_tol=positive_scalar(start_tol, "start_tol", allow_zero=True),
        max_events=_positive_int(max_events, "max_events"),
        max_events_per_point=(None if max_events_per_point is None
                              else _positive_int(max_events_per_point, "max_events_per_point")),
        method=method, drift_check=drift_check, restart_kinds=frozenset(restart_kinds),
        copy_state=bool(copy_state),
        param_floor=positive_scalar(param_floor, "param_floor", allow_zero=True),
        param_unit=positive_scalar(param_unit, "param_unit"))
    if opts.param_floor == 0.0 and min(t0, t1) <= 0.0 <= max(t0, t1):
        raise ValueError("param_floor=0 needs a parameter range that excludes 0; got "
                         f"t_span=({t0}, {t1})")
    tracer = _Tracer(rhs=rhs, events=events, update=update, residual=residual, correct=correct,
                     record=record or _copy_record, jac=jac, opts=opts, kernel=kernel)
    segments, evs, residual_table = tracer.run(z0, t0, t1, state)
    path_residual = record_residual if record_residual is not None else residual_table
    return SolutionPath(param_name, segments, evs, residual=path_residual,
                direction=1 if t1 > t0 else -1, info=tracer.info())


# -- internals ------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Options:
    rtol: float
    atol: float
    max_step: float
    drift_tol: float
    tie_tol: float
    start_tol: float
    max_events: int
    max_events_per_point: int | None
    method: str
    drift_check: str
    restart_kinds: frozenset
    copy_state: bool
    param_floor: float = 1.0
    param_unit: float = 1.0


def _copy_record(t, z, state):
    return np.array(z, dtype=float, copy=True)


def _check_span(t_span) -> tuple[float, float]:
    try:
        a, b = t_span
    except (TypeError, ValueError) as exc:
        raise ValueError(f"t_span must be a pair (start, end); got {t_span!r}") from exc
    a, b = finite_scalar(a, "t_span[0]"), finite_scalar(b, "t_span[1]")
    if a == b:
        raise ValueError(f"t_span must have distinct ends; got ({a}, {b})")
    return a, b


def _positive_or_inf(x, name: str) -> float:
    if isinstance(x, float | np.floating) and x == np.inf:
        return math.inf
    return positive_scalar(x, name)


def _positive_int(x, name: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int | np.integer) or x < 1:
        raise ValueError(f"{name} must be a positive integer; got {x!r}")
    return int(x)


def _min_length(t: float, floor: float = 1.0) -> float:
    """Pieces shorter than this (relative to max(floor, |t|)) are treated as zero-length."""
    return 64.0 * _EPS * max(floor, abs(t))


class _ResidualTable:
    """``SolutionPath`` residual: the values computed while tracing, looked up by record
    identity."""

    def __init__(self):
        self._values: dict[int, float] = {}
        self._keep: list[Any] = []  # keep records alive so that ids stay unique

    def add(self, rec, value: float) -> None:
        self._keep.append(rec)
        self._values[id(rec)] = float(value)

    def __call__(self, t: float, rec) -> float:
        return self._values.get(id(rec), math.nan)


@dataclass
class _Piece:
    """What :meth:`_Tracer._integrate` returns (the fields of ``solve_ivp``'s result we use)."""

    t: np.ndarray
    y: np.ndarray
    sol: Any
    t_events: list
    nlu: int


class _EventBank:
    """The vector event function of one piece, cached at the last ``(t, y)`` (the step check,
    the dip sampling and the tie search ask for the same point). ``shift`` lifts components
    that start slightly negative to start at zero.
    """

    def __init__(self, fn: Callable, state, shift: np.ndarray, counter: list[int]):
        self._fn, self._state, self.shift, self._counter = fn, state, shift, counter
        self._t: float | None = None
        self._y: np.ndarray | None = None
        self._g: np.ndarray | None = None

    def values(self, t: float, y: np.ndarray) -> np.ndarray:
        if not (self._t == t and (self._y is y or np.array_equal(self._y, y))):
            self._counter[0] += 1
            g = np.asarray(self._fn(t, y, self._state), dtype=float).reshape(-1)
            self._t, self._y, self._g = t, y, g + self.shift
        return self._g


class _Tracer:
    def __init__(self, *, rhs, events, update, residual, correct, record, jac, opts: _Options,
                 kernel=None):
        self.rhs_fn, self.events_fn, self.update_fn = rhs, events, update
        self.kernel_fn = kernel
        self._buffers = None
        self.residual_fn, self.correct_fn, self.record_fn, self.jac_fn = (
            residual, correct, record, jac)
        self.opts = opts
        # statistics reported in path.info
        self.n_rhs = self.n_jac = self.n_residual = self.n_steps = self.n_lu = 0
        self.n_pieces = self.n_zero_length = self.n_missed_crossings = 0
        self.n_corrections = self.n_restarts = 0
        self.n_event_evals = [0]
        self.kinds: dict[str, int] = {}
        self.max_residual = 0.0
        self.max_residual_seen = 0.0
        self.correction_params: list[float] = []
        self.events_at_end: list[int] = []
        self.n_events = 0
        self._point_t: float | None = None
        self._point_count = 0
        self._m = 0  # number of event components at the current piece start
        self._start_time = time.perf_counter()
        self._wall = 0.0

    def _show(self, t: float) -> str:
        """``t`` in the caller's units (``param_unit``), for messages."""
        return repr(float(t) * self.opts.param_unit)

    # -- counted client calls --------------------------------------------------------------
    def rhs(self, t, z, state) -> np.ndarray:
        self.n_rhs += 1
        return np.asarray(self.rhs_fn(t, z, state), dtype=float)

    def residual(self, t, z, state) -> float:
        self.n_residual += 1
        r = float(self.residual_fn(t, z, state))
        if not math.isnan(r):
            self.max_residual_seen = max(self.max_residual_seen, r)
        return r

    def event_values(self, t, z, state) -> np.ndarray:
        self.n_event_evals[0] += 1
        g = np.asarray(self.events_fn(t, z, state), dtype=float)
        if g.ndim != 1:
            raise ValueError(f"events must return a 1-D array; got shape {g.shape}")
        if not np.all(np.isfinite(g)):
            raise ValueError(f"events returned non-finite values at {self._show(t)}; use a "
                             "positive "
                             "constant for components that cannot fire")
        return g

    # -- main loop -------------------------------------------------------------------------
    def run(self, z0, t0, t1, state):
        self.direction = 1 if t1 > t0 else -1
        segments: list[FunctionSegment] = []
        evs: list[Event] = []
        table = _ResidualTable()
        t, z = t0, z0
        z = self._enforce_residual(t, z, state, where="the start")
        while True:
            g0 = self.event_values(t, z, state)
            self._m = g0.size
            violated = np.flatnonzero(g0 < -self.opts.start_tol)
            if violated.size:
                # the state is not valid at the piece start: those components fire now
                self.n_zero_length += 1
                state, z = self._handle_event(t, z, state, violated, evs)
                continue
            shift = np.maximum(0.0, -g0)
            bank = _EventBank(self.events_fn, state, shift, self.n_event_evals)
            # a component starting exactly at zero (just reassigned) would be reported at
            # the piece start if it dips below zero again inside the first step (the root
            # finder returns the bracket's end): start with a small step in that case
            first = (min(1e-8 * max(self.opts.param_floor, abs(t)), 0.5 * abs(t1 - t))
                     if np.any(g0 + shift <= 0.0) else None)
            piece = None if self.kernel_fn is None else self.kernel_fn(state)
            if piece is not None:
                t_end, z_end, status, reported, dense = self._integrate_compiled(
                    piece, t, t1, z, shift, g0 + shift, first)
            else:
                sol, status = self._integrate(t, t1, z, state, bank, g0.size, first_step=first)
                t_end = float(sol.t[-1])
                z_end = np.array(sol.y[:, -1], dtype=float)
                dense = sol.sol
                missed = self._missed_crossing(sol, bank)
                if missed is not None:
                    t_end, k_missed = missed
                    z_end = np.asarray(sol.sol(t_end), dtype=float)
                    status = 1
                    self.n_missed_crossings += 1
                    reported = np.array([k_missed])
                else:
                    reported = self._reported(sol, g0.size)
            at_end = status == 0 or abs(t1 - t_end) <= _min_length(t1, self.opts.param_floor)
            if at_end:
                t_end = t1
            if abs(t_end - t) > _min_length(t, self.opts.param_floor) or (at_end and t_end != t):
                segments.append(self._segment(t, z, t_end, z_end, state, dense, table))
                self.n_pieces += 1
            elif not at_end:
                # an event right at the piece start: stay at the same parameter value
                self.n_zero_length += 1
                t_end = t
            if at_end:
                if status == 1 and g0.size:
                    self.events_at_end = reported.tolist()
                break
            if status == 3:
                # the compiled piece's step buffer is full: a new piece in the same state
                t, z = t_end, z_end
                continue
            if reported.size == 0:
                # only the drift event fired: correct and continue with the same state
                z = self._correct(t_end, z_end, state)
                self._count_point(t_end, "correction")
                t = t_end
                continue
            fired = self._ties(t_end, z_end, state, bank, reported)
            t = t_end
            state, z = self._handle_event(t, z_end, state, fired, evs)
        if not segments:  # the whole range is shorter than the zero-length guard
            segments.append(self._segment(t0, z0, t1, z, state, lambda s: z, table))
        self._wall = time.perf_counter() - self._start_time
        return segments, evs, table

    def _integrate(self, t, t1, z, state, bank: _EventBank, m: int, first_step=None):
        """One piece: step the integrator from ``t`` towards ``t1`` until an event fires.

        Equivalent to ``solve_ivp(..., dense_output=True, events=...)`` with every event
        component terminal and of direction -1 (it fires where it goes from ``>= 0`` to
        ``<= 0``; its time is found by ``brentq`` on the dense output with the same
        tolerances), plus the drift event when Newton correction is on. The components are
        checked as one vector per step instead of ``m`` scalar callables, which is what
        ``solve_ivp`` needs (its Python loop over hundreds of events per step, and a closure
        per component per piece, cost about a quarter of a GAGA path's time).
        """
        drift_on = self.correct_fn is not None and self.opts.drift_check == "step"
        drift_tol = self.opts.drift_tol

        def values(tt, y):
            g = bank.values(tt, y)
            if drift_on:
                g = np.append(g, drift_tol - self.residual(tt, y, state))
            return g

        def component(k, tt, y):
            return bank.values(tt, y)[k] if k < m else drift_tol - self.residual(tt, y, state)

        if first_step is None and self.opts.param_floor == 0.0:
            first_step = self._initial_step(t, t1, z, state)
        kwargs = {} if first_step is None else {"first_step": first_step}
        if self.jac_fn is not None and self.opts.method in ("Radau", "BDF", "LSODA"):
            def jac(tt, y):
                self.n_jac += 1
                return self.jac_fn(tt, y, state)

            kwargs["jac"] = jac
        method = _SOLVERS[self.opts.method]
        solver = method(lambda tt, y: self.rhs(tt, y, state), t, z, t1,
                        rtol=self.opts.rtol, atol=self.opts.atol, max_step=self.opts.max_step,
                        **kwargs)
        ts, ys, interpolants = [t], [np.asarray(z, dtype=float)], []
        n_ev = m + (1 if drift_on else 0)
        t_events: list[list[float]] = [[] for _ in range(n_ev)]
        g = values(t, ys[0]) if n_ev else None
        status = None
        while status is None:
            message = solver.step()
            if solver.status == "failed":
                raise PathFollowingError(f"the integrator failed on the piece starting at "
                                   f"{self._show(t)}: "
                                   f"{message}")
            if solver.status == "finished":
                status = 0
            t_old, t_new, y_new = solver.t_old, solver.t, solver.y
            dense = solver.dense_output()
            interpolants.append(dense)
            if n_ev:
                g_new = values(t_new, y_new)
                active = np.flatnonzero((g >= 0) & (g_new <= 0))
                if active.size:
                    roots = np.array([
                        brentq(lambda tt, k=k, dense=dense: component(k, tt, dense(tt)),
                               self._bracket_start(k, g[k], t_old, t_new, dense, component),
                               t_new, xtol=4 * _EPS, rtol=4 * _EPS) for k in active])
                    first = int(np.argsort(roots if t_new > t_old else -roots)[0])
                    t_events[int(active[first])].append(float(roots[first]))
                    status = 1
                    t_new = float(roots[first])
                    y_new = dense(t_new)
                g = g_new
            if not (len(ts) > 1 and ts[-1] == t_new):
                ts.append(t_new)
                ys.append(np.asarray(y_new, dtype=float))
        sol = _Piece(t=np.array(ts), y=np.vstack(ys).T,
                     sol=OdeSolution(ts, interpolants,
                                     alt_segment=self.opts.method in ("BDF", "LSODA")),
                     t_events=[np.asarray(te) for te in t_events], nlu=int(solver.nlu))
        self.n_steps += max(0, len(sol.t) - 1)
        self.n_lu += sol.nlu
        return sol, status

    def _integrate_compiled(self, piece, t, t1, z, shift, g_start, first_step):
        """One piece by the client's compiled kernel (:mod:`pathlib_core.core.dop853_kernel`):
        the same steps, events and dip samples as :meth:`_integrate` followed by
        :meth:`_missed_crossing`. Returns ``(t_end, z_end, status, reported, dense)`` with
        ``status`` 0 (the end), 1 (an event) or 3 (the step buffer is full)."""
        z = np.ascontiguousarray(z, dtype=float)
        if self._buffers is None or self._buffers.p != z.size:
            self._buffers = StepBuffers(z.size)
        buf = self._buffers
        drift_on = self.correct_fn is not None and self.opts.drift_check == "step"
        piece(t, t1, z, np.ascontiguousarray(shift, dtype=float),
              np.ascontiguousarray(g_start, dtype=float),
              0.0 if first_step is None else float(first_step), buf, self.opts.rtol,
              self.opts.atol, self.opts.max_step, self.opts.drift_tol, drift_on,
              self.opts.param_floor)
        status, n, comp, n_rhs, n_ev, n_res, missed = (int(x) for x in buf.info)
        self.n_rhs += n_rhs
        self.n_event_evals[0] += n_ev
        self.n_residual += n_res
        self.n_steps += n
        self.n_missed_crossings += missed
        if status == 2:
            raise PathFollowingError(f"the integrator failed on the piece starting at "
                                     f"{self._show(t)}: the required step size is less "
                                     "than the spacing between numbers")
        m = shift.size
        reported = (np.array([comp]) if status == 1 and 0 <= comp < m
                    else np.zeros(0, dtype=int))
        return (float(buf.out_t[n]), buf.out_z.copy(), status, reported, buf.dense())

    @staticmethod
    def _bracket_start(k, g_old, t_old, t_new, dense, component) -> float:
        """Left end of the bracket of component ``k``'s crossing in ``[t_old, t_new]``.

        A component that is exactly 0 at ``t_old`` (just reassigned, or shifted to start at
        0) and negative at ``t_new`` may rise and come back down within the step (a piece
        shorter than the step); the bracket then starts at the first of a few points
        (geometrically spaced from ``t_old``) where the dense output makes it positive, so
        that the crossing found is its return to 0, not ``t_old``. Without such a point it
        decreases at once and ``t_old`` is the crossing.
        """
        if g_old != 0.0:
            return t_old
        for frac in (1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 0.3, 0.6, 0.9):
            tau = t_old + frac * (t_new - t_old)
            if tau != t_old and component(k, tau, dense(tau)) > 0.0:
                return tau
        return t_old

    def _initial_step(self, t, t1, z, state) -> float | None:
        """scipy's initial step (Hairer, Norsett and Wanner, Sec. II.4) in the parameter's
        own unit ``|t|`` (``param_floor=0``).

        The heuristic's step ``(0.01 / max(d1, d2)) ** (1 / (order + 1))`` assumes a
        parameter of unit size: for a parameter measured in other units (an age divided
        by 4096) it proposes a step far too large relative to the path's scale, which the
        integrator then rejects several times per piece. Evaluated on the parameter
        ``s = (t' - t) / |t|`` it is the same step whatever the unit.
        """
        method = _SOLVERS[self.opts.method]
        order = getattr(method, "error_estimator_order", None)
        if order is None or _select_initial_step is None or z.size == 0:
            return None
        unit = abs(t)
        direction = 1.0 if t1 > t else -1.0
        f0 = unit * self.rhs(t, z, state)

        def fun(s, y):
            return unit * self.rhs(t + unit * s, y, state)

        h = _select_initial_step(fun, 0.0, np.asarray(z, dtype=float), (t1 - t) / unit,
                                 self.opts.max_step / unit, f0, direction, order,
                                 self.opts.rtol, self.opts.atol)
        h = float(h) * unit
        return h if math.isfinite(h) and 0.0 < h <= abs(t1 - t) else None

    def _missed_crossing(self, sol, bank: _EventBank):
        """The earliest zero crossing of an event component that the step-end check missed.

        :meth:`_integrate` (like ``solve_ivp``) compares the sign of each event function at
        the two ends of a step only, so a component that dips below zero and recovers within
        one step (two crossings) goes unseen; if another component then ends the step, the
        dipped one can even be negative there (the GAGA mixture Lasso on diabetes: a sample's
        weight went negative over 0.008 in the age, which left a 4.8e-7 partial-optimum
        residual). The
        dense output is sampled at four interior points of every step and at its end; the
        first sample where some component is below ``-_DIP_TOL`` is bracketed against the
        previous one and that component's zero is found by bisection. Returns
        ``(t, k)`` or None.
        """
        ts = np.asarray(sol.t, dtype=float)
        if ts.size < 2 or sol.sol is None:
            return None
        frac = np.arange(1, 6) / 5.0
        prev_t = float(ts[0])
        for a, b in zip(ts[:-1], ts[1:], strict=True):
            for tau in a + (b - a) * frac:
                g = bank.values(float(tau), np.asarray(sol.sol(tau), dtype=float))
                k = int(np.argmin(g)) if g.size else -1
                if k >= 0 and g[k] < -_DIP_TOL:
                    lo, hi = prev_t, float(tau)
                    for _ in range(200):
                        mid = 0.5 * (lo + hi)
                        if mid in (lo, hi):
                            break
                        if bank.values(mid, np.asarray(sol.sol(mid), dtype=float))[k] < 0:
                            hi = mid
                        else:
                            lo = mid
                    return hi, k
                prev_t = float(tau)
        return None

    @staticmethod
    def _reported(sol, m: int) -> np.ndarray:
        if sol.t_events is None:
            return np.zeros(0, dtype=int)
        return np.array([k for k in range(m) if len(sol.t_events[k])], dtype=int)

    def _ties(self, t, z, state, bank: _EventBank, reported: np.ndarray) -> np.ndarray:
        """Every component that vanishes at ``t``: the reported ones and first-order ties."""
        g = bank.values(t, z).copy()
        fired = np.zeros(g.size, dtype=bool)
        fired[reported] = True
        fired |= g <= 0.0
        candidates = ~fired
        if np.any(candidates) and self.opts.tie_tol > 0:
            # slope of g along the tracing direction by one explicit Euler probe
            delta = math.sqrt(_EPS) * max(self.opts.param_floor, abs(t))
            try:
                z_probe = z + self.direction * delta * self.rhs(t, z, state)
                g_probe = self.event_values(t + self.direction * delta, z_probe,
                                            state) + bank.shift
            except (np.linalg.LinAlgError, ZeroDivisionError, FloatingPointError):
                g_probe = None
            if g_probe is not None and g_probe.shape == g.shape:
                slope = (g_probe - g) / delta
                window = self.opts.tie_tol * max(self.opts.param_floor, abs(t))
                fired |= candidates & (slope < 0) & (g <= -slope * window)
        return np.flatnonzero(fired)

    def _segment(self, ta, za, tb, zb, state, dense, table: _ResidualTable) -> FunctionSegment:
        rec_a = self.record_fn(ta, za, state)
        rec_b = self.record_fn(tb, zb, state)
        for tt, zz, rec in ((ta, za, rec_a), (tb, zb, rec_b)):
            r = self.residual(tt, zz, state)
            table.add(rec, r)
            if not math.isnan(r):
                self.max_residual = max(self.max_residual, r)
        record_fn = self.record_fn

        def fn(tt, _dense=dense, _state=state):
            return record_fn(tt, np.asarray(_dense(tt), dtype=float), _state)

        if ta < tb:
            return FunctionSegment(ta, tb, fn, rec_lo=rec_a, rec_hi=rec_b, kind="ode")
        return FunctionSegment(tb, ta, fn, rec_lo=rec_b, rec_hi=rec_a, kind="ode")

    def _count_point(self, t: float, what: str) -> None:
        if self._point_t == t:
            self._point_count += 1
        else:
            self._point_t, self._point_count = t, 1
        cap = self.opts.max_events_per_point
        if cap is None:
            cap = 2 * self._m + 10
        if self._point_count > cap:
            raise PathFollowingError(
                f"{self._point_count} consecutive updates/corrections at {self._show(t)} "
                f"(last: {what}); "
                "the path does not leave this point -- an event fires again right after its "
                "update. Check that update() returns a state whose event functions are >= 0 "
                "and increase along the tracing direction (or return a re-solved z), or raise "
                "max_events_per_point.")

    def _handle_event(self, t, z, state, fired: np.ndarray, evs: list[Event]):
        self.n_events += 1
        if self.n_events > self.opts.max_events:
            raise PathFollowingError(f"more than max_events={self.opts.max_events} events; last at "
                               f"{self._show(t)} with components {fired.tolist()}")
        self._count_point(t, f"event {fired.tolist()}")
        arg_state = copy.deepcopy(state) if self.opts.copy_state else state
        out = self.update_fn(t, np.array(z, copy=True), arg_state, fired.copy())
        new_state, new_z, kind, info = _parse_update(out)
        evs.append(Event(t, kind, tuple(fired.tolist()), info))
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if kind in self.opts.restart_kinds:
            self.n_restarts += 1
        if new_z is None:
            new_z = z
        else:
            new_z = as_vector(new_z, "the z returned by update")
        new_z = self._enforce_residual(t, new_z, new_state,
                                       where=f"the {kind} event at {self._show(t)}")
        return new_state, new_z

    def _enforce_residual(self, t, z, state, *, where: str) -> np.ndarray:
        r = self.residual(t, z, state)
        if self.correct_fn is not None and r > self.opts.drift_tol:
            z = self._correct(t, z, state, where=where)
        return z

    def _correct(self, t, z, state, *, where: str | None = None) -> np.ndarray:
        z_new = as_vector(self.correct_fn(t, np.array(z, copy=True), state),
                          "the z returned by correct")
        self.n_corrections += 1
        self.correction_params.append(float(t))
        r = self.residual(t, z_new, state)
        if not r <= self.opts.drift_tol:
            # a corrector that re-solved the problem in other sets (a point the current
            # state does not describe) signals it through its events: they fire at once
            # at the next piece start, and update() installs the new state
            if where is None and np.any(self.event_values(t, z_new, state)
                                        < -self.opts.start_tol):
                return z_new
            at = where or self._show(t)
            raise SolverError(f"correct() left a residual {r:.3g} > drift_tol="
                               f"{self.opts.drift_tol:g} at {at}")
        return z_new

    def info(self) -> dict:
        return {
            "method": self.opts.method, "rtol": self.opts.rtol, "atol": self.opts.atol,
            "n_pieces": self.n_pieces, "n_events": self.n_events,
            "n_events_by_kind": dict(self.kinds), "n_corrections": self.n_corrections,
            "n_restarts": self.n_restarts, "n_zero_length": self.n_zero_length,
            "n_missed_crossings": self.n_missed_crossings,
            "max_residual": self.max_residual, "max_residual_seen": self.max_residual_seen,
            "n_rhs_evals": self.n_rhs, "n_jac_evals": self.n_jac, "n_lu": self.n_lu,
            "n_steps": self.n_steps, "n_residual_evals": self.n_residual,
            "n_event_evals": self.n_event_evals[0],
            "correction_params": list(self.correction_params),
            "events_at_end": list(self.events_at_end), "wall_time": self._wall,
        }


def _parse_update(out) -> tuple[Any, np.ndarray | None, str, dict]:
    if isinstance(out, Update):
        state, z, kind, info = out.state, out.z, out.kind, out.info
    elif isinstance(out, tuple) and len(out) in (3, 4):
        state, z, kind = out[:3]
        info = out[3] if len(out) == 4 else {}
    else:
        raise ValueError("update must return (state, z, kind), (state, z, kind, info) or an "
                         f"Update; got {type(out).__name__}")
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"the kind returned by update must be a non-empty string; got {kind!r}")
    if not isinstance(info, dict):
        raise ValueError(f"the info returned by update must be a dict; got {type(info).__name__}")
    return state, z, kind, dict(info)
