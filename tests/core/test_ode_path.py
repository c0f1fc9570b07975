"""Tests of the piecewise-smooth path follower :func:`pathlib_core.core.ode_path.follow_path`.

Every test path has a closed form (or an independent re-solve) to compare with.
"""

from dataclasses import dataclass

import numpy as np
import pytest

from pathlib_core.core.exceptions import PathFollowingError, SolverError
from pathlib_core.core.ode_path import Update, follow_path
from pathlib_core.core.solution_path import Event, SolutionPath

LN2 = np.log(2.0)


def _no_residual(t, z, state):
    return 0.0


# -- (1) a piecewise linear ODE with known switching times ----------------------------------

def _thermostat(**kwargs):
    """dz/dt = s z with s = +1 until z = 2, then s = -1 until z = 1, ...; z(0) = 1.

    Switching times are k ln 2 exactly; z(t) = exp(tau) or 2 exp(-tau), tau = t - k ln 2.
    """
    calls = []

    def rhs(t, z, s):
        return s * z

    def events(t, z, s):
        return np.array([2.0 - z[0]]) if s > 0 else np.array([z[0] - 1.0])

    def update(t, z, s, fired):
        calls.append((t, tuple(fired)))
        return -s, None, "turning", {"from": s}

    return calls, dict(rhs=rhs, events=events, update=update, residual=_no_residual,
                       state=1, **kwargs)


def _thermostat_exact(t):
    k = int(np.floor(t / LN2 + 1e-12))
    tau = t - k * LN2
    return np.exp(tau) if k % 2 == 0 else 2.0 * np.exp(-tau)


def test_piecewise_linear_ode_event_times_and_values():
    calls, kw = _thermostat()
    path = follow_path([1.0], (0.0, 5.0), **kw)
    assert isinstance(path, SolutionPath)
    assert path.param_name == "t" and path.direction == 1
    times = np.array([e.param for e in path.events])
    np.testing.assert_allclose(times, LN2 * np.arange(1, 8), rtol=0, atol=1e-9)
    assert [e.kind for e in path.events] == ["turning"] * 7
    assert all(e.indices == (0,) for e in path.events)
    assert path.events[0].info == {"from": 1}
    assert len(calls) == 7
    ts = np.linspace(0.0, 5.0, 501)
    err = max(abs(path.at(t)[0] - _thermostat_exact(t)) for t in ts)
    assert err < 1e-8
    # breakpoints: both ends plus the 7 switches; the path is continuous at turning points
    assert len(path) == 9
    assert all(side == "both" for _, side, _ in path.records())  # continuous at turnings
    np.testing.assert_allclose(path.at(times[2], side="left"), path.at(times[2], side="right"),
                               atol=1e-9)
    info = path.info
    assert info["n_pieces"] == 8 and info["n_events"] == 7
    assert info["n_events_by_kind"] == {"turning": 7}
    assert info["n_restarts"] == 0 and info["n_corrections"] == 0
    assert info["n_rhs_evals"] > 0
    assert isinstance(info["wall_time"], float) and np.isfinite(info["wall_time"])
    np.testing.assert_array_equal(path.kkt_residuals(), np.zeros(9))


def test_backward_tracing_reproduces_the_same_path():
    T = 3.0
    # going down in t the thermostat switches at the same points with reversed roles:
    # s = -1 piece (z decreasing in t) followed backwards makes z grow, so the events are
    # z reaching 2 (for s = -1) and z reaching 1 (for s = +1) along decreasing t.

    def events(t, z, s):
        return np.array([2.0 - z[0]]) if s < 0 else np.array([z[0] - 1.0])

    k = int(np.floor(T / LN2))
    path = follow_path([_thermostat_exact(T)], (T, 0.0), rhs=lambda t, z, s: s * z,
                       events=events, update=lambda t, z, s, f: (-s, None, "turning"),
                       residual=_no_residual, state=1 if k % 2 == 0 else -1)
    assert path.direction == -1
    assert path.param_range == (0.0, T)
    np.testing.assert_allclose([e.param for e in path.events], LN2 * np.arange(1, k + 1),
                               atol=1e-9)
    ts = np.linspace(0.0, T, 301)
    assert max(abs(path.at(t)[0] - _thermostat_exact(t)) for t in ts) < 1e-8


def test_vector_rotation_with_switching_angular_speed():
    """dz/dt = w_s J z (a rotation); switch speed 1 <-> 2 whenever z_0 crosses zero."""
    Jm = np.array([[0.0, -1.0], [1.0, 0.0]])
    speeds = {0: 1.0, 1: 2.0}

    def rhs(t, z, s):
        return speeds[s[0]] * (Jm @ z)

    def events(t, z, s):
        return np.array([s[1] * z[0]])  # s[1]: current sign of z_0

    def update(t, z, s, fired):
        return (1 - s[0], -s[1]), None, "turning"

    path = follow_path([1.0, 0.0], (0.0, 6.0), rhs=rhs, events=events, update=update,
                       residual=_no_residual, state=(0, 1))
    # angle theta(t): z_0 = cos(theta) crosses zero at theta = pi/2 + k pi; speed alternates.
    switches, t, k = [], 0.0, 0
    theta_switch = np.pi / 2
    theta = 0.0
    while True:
        dt = (theta_switch - theta) / speeds[k % 2]
        if t + dt > 6.0:
            break
        t += dt
        theta = theta_switch
        theta_switch += np.pi
        switches.append(t)
        k += 1
    np.testing.assert_allclose([e.param for e in path.events], switches, atol=1e-9)

    def exact(tt):
        idx = np.searchsorted(switches, tt)
        t_prev = 0.0 if idx == 0 else switches[idx - 1]
        th = 0.0 if idx == 0 else np.pi / 2 + (idx - 1) * np.pi
        th += speeds[idx % 2] * (tt - t_prev)
        return np.array([np.cos(th), np.sin(th)])

    for tt in np.linspace(0.0, 6.0, 241):
        np.testing.assert_allclose(path.at(tt), exact(tt), atol=1e-8)


@pytest.mark.parametrize("method", ["DOP853", "Radau", "LSODA"])
def test_methods_are_selectable(method):
    _, kw = _thermostat(method=method, rtol=1e-10, atol=1e-12)
    if method != "DOP853":
        kw["jac"] = lambda t, z, s: np.array([[float(s)]])
    path = follow_path([1.0], (0.0, 2.0), **kw)
    np.testing.assert_allclose([e.param for e in path.events], [LN2, 2 * LN2], atol=1e-7)
    assert path.info["method"] == method


# -- (2) a self-paced-learning age-path against an independent re-solve ---------------------

@dataclass(frozen=True)
class SPLRecord:
    coef: np.ndarray
    n_active: int


class SelfPacedRidge:
    """Linear self-paced weights on a ridge problem (the GAGA setting in miniature).

    Losses ``l_i(w) = (x_i w - y_i)^2``; weights ``v_i = max(0, 1 - l_i / t)`` (the linear
    SP-regularizer); a partial optimum satisfies

        G(w, t) = sum_i v_i(l_i(w), t) grad l_i(w) + mu w = 0.

    On a fixed active set ``A = {i : l_i < t}`` this is smooth and
    ``dw/dt = -(d_w G_A)^{-1} d_t G_A``. ``mu`` is large enough for ``d_w G_A`` to stay
    positive definite, so the path is continuous: every set change is a turning point.
    """

    def __init__(self, seed=0, n=12):
        rng = np.random.default_rng(seed)
        self.X = rng.normal(size=(n, 2))
        y = self.X @ np.array([1.0, -2.0]) + 0.3 * rng.normal(size=n)
        y[:3] += 3.0
        self.y = 3.0 * y
        self.mu = 4.0 * np.linalg.norm(self.X, 2) ** 2 + 1.0
        self.n = n

    def G(self, w, t, A=None):
        r = self.X @ w - self.y
        v = np.maximum(0.0, 1.0 - r**2 / t) if A is None else np.isin(
            np.arange(self.n), A) * (1.0 - r**2 / t)
        return self.X.T @ (2.0 * v * r) + self.mu * w

    def jac(self, w, t, A):
        XA = self.X[list(A)]
        r = XA @ w - self.y[list(A)]
        return (XA.T * (2.0 * (1.0 - 3.0 * r**2 / t))) @ XA + self.mu * np.eye(2)

    def rhs(self, t, w, A):
        XA = self.X[list(A)]
        r = XA @ w - self.y[list(A)]
        return -np.linalg.solve(self.jac(w, t, A), XA.T @ (2.0 * r**3 / t**2))

    def events(self, t, w, A):
        loss = (self.X @ w - self.y) ** 2
        active = np.isin(np.arange(self.n), A)
        return np.where(active, t - loss, loss - t)

    def update(self, t, w, A, fired):
        new = set(A) ^ {int(i) for i in fired}
        entering = sorted(set(fired.tolist()) - set(A))
        return tuple(sorted(new)), None, "turning", {"enter": entering}

    def residual(self, t, w, A):
        return float(np.max(np.abs(self.G(w, t))))

    def record(self, t, w, A):
        return SPLRecord(np.array(w, copy=True), len(A))

    def newton(self, w, t, A):
        for _ in range(50):
            step = np.linalg.solve(self.jac(w, t, A), self.G(w, t, list(A)))
            w = w - step
            if np.max(np.abs(step)) < 1e-15:
                break
        return w

    def resolve(self, w, t):
        """Alternate search: A <- {l_i(w) < t}, then Newton on G_A, until A is stable."""
        for _ in range(100):
            A = tuple(int(i) for i in np.flatnonzero((self.X @ w - self.y) ** 2 < t))
            w = self.newton(w, t, A)
            if tuple(int(i) for i in np.flatnonzero((self.X @ w - self.y) ** 2 < t)) == A:
                return w, A
        raise AssertionError("alternate search did not settle")


def test_self_paced_age_path_matches_resolves_and_turning_points_are_exact():
    prob = SelfPacedRidge()
    t0, t1 = 0.5, 30.0
    w0, A0 = prob.resolve(np.zeros(2), t0)
    path = follow_path(w0, (t0, t1), rhs=prob.rhs, events=prob.events, update=prob.update,
                       residual=prob.residual, record=prob.record, state=A0,
                       param_name="age")
    assert path.param_name == "age"
    assert len(path.events) >= 4
    # at every turning point the fired sample's loss equals the age (to ~1e-12)
    for e in path.events:
        w = path.at(e.param).coef
        loss = (prob.X @ w - prob.y) ** 2
        np.testing.assert_allclose(loss[list(e.indices)], e.param, rtol=1e-11)
        assert e.kind == "turning"
    # the active set grows along the path as samples enter
    assert path.at(t1).n_active == len(A0) + sum(len(e.info["enter"]) for e in path.events)
    # independent re-solves on a grid
    w, err = w0, 0.0
    for t in np.linspace(t0, t1, 300):
        w, A = prob.resolve(w, t)
        err = max(err, float(np.max(np.abs(path.at(t).coef - w))))
        assert path.at(t).n_active == len(A) or any(abs(e.param - t) < 1e-9
                                                    for e in path.events)
    assert err < 1e-8
    assert path.kkt_residuals().max() < 1e-9
    assert path.info["max_residual"] < 1e-9


# -- (3) ties -----------------------------------------------------------------------------

def test_two_events_at_the_same_parameter_are_handled_in_one_update():
    """z_0 = 0.7 t / 3 and z_1 = 2.1 t / 9 both reach their thresholds at t = 3."""
    calls = []
    rates = np.array([0.7 / 3.0, 2.1 / 9.0, 1.0])

    def events(t, z, s):
        g = np.array([0.7 - z[0], 2.1 / 3.0 - z[1], 3.0 + 1e-4 - z[2]])
        return np.where(s, g, 1.0)

    def update(t, z, s, fired):
        calls.append((t, fired.tolist()))
        s = s.copy()
        s[fired] = False
        return s, None, "turning"

    path = follow_path([0.0, 0.0, 0.0], (0.0, 5.0), rhs=lambda t, z, s: rates,
                       events=events, update=update, residual=_no_residual,
                       state=np.array([True, True, True]))
    assert len(calls) == 2
    assert calls[0][1] == [0, 1]
    assert abs(calls[0][0] - 3.0) < 1e-9
    assert calls[1][1] == [2] and abs(calls[1][0] - (3.0 + 1e-4)) < 1e-9
    assert path.events[0].indices == (0, 1)
    assert path.info["n_zero_length"] == 0


def test_a_dip_below_zero_inside_one_step_is_found():
    """g_0 = (t - 0.5)^2 - 0.12^2 is negative on (0.38, 0.62) and positive at both ends of
    the integrator's steps (z' = 1 is integrated exactly in very long steps), so solve_ivp's
    end-point sign test misses both crossings; the dense-output samples find the first."""
    calls = []

    def events(t, z, s):
        return np.array([(z[0] - 0.5) ** 2 - 0.0144 if s else 1.0])

    def update(t, z, s, fired):
        calls.append((t, fired.tolist()))
        return False, None, "turning"

    path = follow_path([0.0], (0.0, 1.0), rhs=lambda t, z, s: np.ones(1), events=events,
                       update=update, residual=_no_residual, state=True)
    assert len(calls) == 1 and calls[0][1] == [0]
    assert abs(calls[0][0] - 0.38) < 1e-9
    assert path.info["n_missed_crossings"] == 1


def test_a_just_flipped_component_starting_at_zero_does_not_refire():
    """After the update the fired component is exactly 0 and increasing: no loop."""
    def events(t, z, s):
        return np.array([s * (1.0 - z[0])])

    path = follow_path([0.0], (0.0, 2.0), rhs=lambda t, z, s: np.ones(1), events=events,
                       update=lambda t, z, s, f: (-s, None, "turning"),
                       residual=_no_residual, state=1)
    assert len(path.events) == 1 and abs(path.events[0].param - 1.0) < 1e-12
    np.testing.assert_allclose(path.at(2.0), [2.0], atol=1e-10)


# -- (4) jumps and restarts -----------------------------------------------------------------

def test_jump_event_restarts_from_the_resolved_point():
    """dz/dt = -z; at z = 1/2 (t = ln 2) the client re-solves and restarts from z = 2."""
    def events(t, z, s):
        return np.array([z[0] - 0.5 if s == 0 else 1.0])

    def update(t, z, s, fired):
        return Update(state=1, z=np.array([2.0]), kind="jump", info={"warm_start": True})

    path = follow_path([1.0], (0.0, 2.0), rhs=lambda t, z, s: -z, events=events,
                       update=update, residual=_no_residual, state=0)
    (ev,) = path.events
    assert ev.kind == "jump" and ev.info == {"warm_start": True}
    assert abs(ev.param - LN2) < 1e-10
    np.testing.assert_allclose(path.at(ev.param, side="left"), [0.5], atol=1e-9)
    np.testing.assert_allclose(path.at(ev.param, side="right"), [2.0], atol=0)
    np.testing.assert_allclose(path.at(ev.param), [2.0])  # traced upwards: after the jump
    for t in np.linspace(0.0, 2.0, 101):
        exact = np.exp(-t) if t < ev.param else 2.0 * np.exp(-(t - LN2))
        np.testing.assert_allclose(path.at(t), [exact], atol=1e-9)
    assert path.info["n_restarts"] == 1
    assert [s for _, s, _ in path.records()].count("left") == 1


def _hard_spl(seed=1, n=15, mu=0.5):
    """Hard self-paced ridge: v_i = 1[l_i(w) < t], w(t) = ridge on the active set.

    The path is piecewise constant; every set change is a jump (a re-solve), and a jump can
    cascade (the new w makes another sample cross at the same t).
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ np.array([1.0, 0.5, -1.0]) + 0.5 * rng.standard_t(2, size=n)

    def ridge(A):
        XA = X[list(A)]
        return np.linalg.solve(XA.T @ XA + mu * np.eye(3), XA.T @ y[list(A)])

    def events(t, w, A):
        loss = (X @ w - y) ** 2
        return np.where(np.isin(np.arange(n), A), t - loss, loss - t)

    def update(t, w, A, fired):
        A2 = tuple(sorted(set(A) ^ {int(i) for i in fired}))
        return A2, ridge(A2), "jump"

    def residual(t, w, A):
        return float(np.max(np.abs(w - ridge(A))))

    def consistent(t, w0):
        w = w0
        for _ in range(200):
            A = tuple(int(i) for i in np.flatnonzero((X @ w - y) ** 2 < t))
            w_new = ridge(A)
            if np.array_equal(w_new, w):
                return w, A
            w = w_new
        raise AssertionError("no fixed point")

    return X, y, ridge, events, update, residual, consistent


def test_hard_self_paced_path_jumps_match_closed_form_ridge():
    X, y, ridge, events, update, residual, consistent = _hard_spl()
    t0, t1 = 0.05, 8.0
    w0, A0 = consistent(t0, ridge(tuple(range(len(y)))))
    path = follow_path(w0, (t0, t1), rhs=lambda t, w, A: np.zeros_like(w), events=events,
                       update=update, residual=residual, state=A0)
    assert path.info["n_restarts"] == len(path.events) > 3
    # each event happens where a loss of the (constant) piece solution equals t; a jump can
    # cascade: the re-solved w violates other samples' conditions at the same t, which fire
    # at once (zero-length pieces) until the active set is consistent
    first = {}
    for e in path.events:
        first.setdefault(e.param, e)
    assert path.info["n_zero_length"] == len(path.events) - len(first) >= 1
    for e in first.values():
        w_left = path.at(e.param, side="left")
        loss = (X @ w_left - y) ** 2
        np.testing.assert_allclose(loss[list(e.indices)], e.param, rtol=1e-9)
    # between events the path is the ridge fit of a consistent active set
    params = [t0] + [e.param for e in path.events] + [t1]
    for a, b in zip(params[:-1], params[1:], strict=True):
        if b - a < 1e-9:
            continue
        t = 0.5 * (a + b)
        w = path.at(t)
        A = tuple(int(i) for i in np.flatnonzero((X @ w - y) ** 2 < t))
        np.testing.assert_allclose(w, ridge(A), atol=1e-12)
    assert path.kkt_residuals().max() < 1e-12


def test_an_event_that_refires_after_a_wrong_turning_guess_gets_a_second_update():
    """First guess "turning" is wrong (the component fires again at once); then a jump."""
    kinds = []

    def events(t, z, s):
        return np.array([{0: 1.0 - z[0], 1: 1.0 - z[0], 2: 1.0}[s]])

    def update(t, z, s, fired):
        if s == 0:
            kinds.append("turning")
            return 1, None, "turning"  # wrong: the same condition is still violated
        kinds.append("jump")
        return 2, np.array([5.0]), "jump"

    path = follow_path([0.0], (0.0, 3.0), rhs=lambda t, z, s: np.ones(1), events=events,
                       update=update, residual=_no_residual, state=0)
    assert kinds == ["turning", "jump"]
    assert [e.param for e in path.events] == pytest.approx([1.0, 1.0], abs=1e-12)
    assert path.info["n_zero_length"] == 1
    np.testing.assert_allclose(path.at(3.0), [7.0], atol=1e-10)


def test_an_endless_event_loop_raises_a_clear_error():
    def events(t, z, s):
        return np.array([1.0 - z[0]])

    with pytest.raises(PathFollowingError, match="does not leave this point"):
        follow_path([0.0], (0.0, 3.0), rhs=lambda t, z, s: np.ones(1), events=events,
                    update=lambda t, z, s, f: (s, None, "turning"), residual=_no_residual)
    with pytest.raises(PathFollowingError, match="max_events=3"):
        follow_path([1.0], (0.0, 5.0), rhs=lambda t, z, s: s * z,
                    events=lambda t, z, s: np.array([2.0 - z[0]] if s > 0 else [z[0] - 1.0]),
                    update=lambda t, z, s, f: (-s, None, "turning"), residual=_no_residual,
                    state=1, max_events=3)


# -- (5) drift correction -------------------------------------------------------------------

def _cubic(t, z):
    return z**3 + z - t


def _cubic_root(t):
    return np.real(np.roots([1.0, 0.0, 1.0, -t])[np.argmin(np.abs(np.imag(
        np.roots([1.0, 0.0, 1.0, -t]))))])


def _newton(t, z, s):
    for _ in range(30):
        z = z - _cubic(t, z) / (3.0 * z**2 + 1.0)
    return z


def test_drift_corrector_triggers_with_loose_tolerances():
    kw = dict(rhs=lambda t, z, s: 1.0 / (3.0 * z**2 + 1.0), events=lambda t, z, s: np.zeros(0),
              update=lambda *a: None, residual=lambda t, z, s: float(abs(_cubic(t, z[0]))),
              method="RK45", rtol=1e-3, atol=1e-3, drift_tol=1e-6)
    loose = follow_path([0.0], (0.0, 10.0), **kw)
    assert loose.info["n_corrections"] == 0 and loose.info["max_residual"] > 1e-2
    fixed = follow_path([0.0], (0.0, 10.0), correct=_newton, **kw)
    info = fixed.info
    assert info["n_corrections"] >= 5
    assert len(info["correction_params"]) == info["n_corrections"]
    assert fixed.kkt_residuals().max() <= 1e-6 * (1 + 1e-6)
    assert info["max_residual_seen"] > 1e-6  # drift happened and was corrected
    ts = np.linspace(0.0, 10.0, 401)
    err = max(abs(fixed.at(t)[0] - _cubic_root(t)) for t in ts)
    assert err < 1e-4  # bounded by the loose interpolant between step ends
    assert max(abs(loose.at(t)[0] - _cubic_root(t)) for t in ts) > 10 * err


def test_drift_check_at_piece_ends_only_and_initial_correction():
    kw = dict(rhs=lambda t, z, s: 1.0 / (3.0 * z**2 + 1.0), events=lambda t, z, s: np.zeros(0),
              update=lambda *a: None, residual=lambda t, z, s: float(abs(_cubic(t, z[0]))))
    path = follow_path([0.3], (0.0, 2.0), correct=_newton, drift_check="end", **kw)
    assert path.info["n_corrections"] == 1 and path.info["correction_params"] == [0.0]
    np.testing.assert_allclose(path.at(2.0), [1.0], atol=1e-9)  # 1 + 1 = 2
    with pytest.raises(SolverError, match="drift_tol"):
        follow_path([0.3], (0.0, 2.0), correct=lambda t, z, s: z, **kw)


# -- API edges --------------------------------------------------------------------------------

def test_bad_arguments_raise_value_errors_naming_them():
    ok = dict(rhs=lambda t, z, s: z, events=lambda t, z, s: np.zeros(0),
              update=lambda *a: None, residual=_no_residual)
    with pytest.raises(ValueError, match="z0"):
        follow_path([np.nan], (0, 1), **ok)
    with pytest.raises(ValueError, match="t_span"):
        follow_path([1.0], (1.0, 1.0), **ok)
    with pytest.raises(ValueError, match="t_span"):
        follow_path([1.0], (0.0,), **ok)
    with pytest.raises(ValueError, match="method"):
        follow_path([1.0], (0, 1), method="Euler", **ok)
    with pytest.raises(ValueError, match="rtol"):
        follow_path([1.0], (0, 1), rtol=0.0, **ok)
    with pytest.raises(ValueError, match="rhs"):
        follow_path([1.0], (0, 1), **{**ok, "rhs": 3})
    with pytest.raises(ValueError, match="max_events"):
        follow_path([1.0], (0, 1), max_events=0, **ok)
    with pytest.raises(ValueError, match="kind"):
        follow_path([0.0], (0, 2), rhs=lambda t, z, s: np.ones(1),
                    events=lambda t, z, s: np.array([1.0 - z[0]]),
                    update=lambda t, z, s, f: (s, None, ""), residual=_no_residual)


def test_path_with_no_events_records_and_exports():
    path = follow_path([1.0, 2.0], (0.0, 1.0), rhs=lambda t, z, s: -z,
                       events=lambda t, z, s: np.zeros(0), update=lambda *a: None,
                       residual=_no_residual)
    np.testing.assert_allclose(path.at(0.5), np.exp(-0.5) * np.array([1.0, 2.0]), rtol=1e-10)
    assert path.events == [] and path.info["n_pieces"] == 1
    assert path.to_dict()["kkt_residuals"] == [0.0, 0.0]
    assert isinstance(Event(0.0, "x"), Event)
