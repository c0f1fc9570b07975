"""The compiled DOP853 piece (:mod:`pathlib_core.core.dop853_kernel`) against scipy's DOP853.

A test consumer drives the reverse-communication generator for a damped rotation
``z' = [[-0.1, 1], [-1, -0.1]] z`` with the event ``z_0 + 0.5 >= 0``; the Python follower
(:func:`~pathlib_core.core.ode_path.follow_path` without a kernel) integrates the same
problem with scipy's DOP853, whose steps, located event and dense output the kernel must
reproduce to rounding.
"""

import numpy as np
import pytest

from pathlib_core.core.dop853_kernel import (
    EVENTS,
    EVENTS_LIGHT,
    RESIDUAL,
    RHS,
    DenseSteps,
    StepBuffers,
    dop853_piece,
)
from pathlib_core.core.linalg import njit
from pathlib_core.core.ode_path import Update, follow_path

_M = np.array([[-0.1, 1.0], [-1.0, -0.1]])


@njit
def _drive(t0, z0, t1, shift, g_start, first, drift_tol, drift_on, floor, req_t, req_y,
           f_buf, g_buf, r_buf, out_t, out_step, out_yold, out_F, out_z, info):
    for code in dop853_piece(t0, z0, t1, shift, g_start, -1, first, 1e-10, 1e-12, np.inf,
                             drift_tol, drift_on, floor, req_t, req_y, f_buf, g_buf, r_buf,
                             out_t, out_step, out_yold, out_F, out_z, info):
        y = req_y
        if code == RHS:
            f_buf[0] = -0.1 * y[0] + y[1]
            f_buf[1] = -y[0] - 0.1 * y[1]
        elif code == EVENTS or code == EVENTS_LIGHT:
            g_buf[0] = y[0] + 0.5
        elif code == RESIDUAL:
            r_buf[0] = 0.0
        else:
            break


def _piece(t, t1, z, shift, g_start, first_step, buf, rtol, atol, max_step, drift_tol,
           drift_on, floor):
    assert (rtol, atol) == (1e-10, 1e-12)
    _drive(t, z, t1, shift, g_start, first_step, drift_tol, drift_on, floor, buf.req_t, buf.req_y,
           buf.f_buf, buf.g_buf(1), buf.r_buf, buf.out_t, buf.out_step, buf.out_yold,
           buf.out_F, buf.out_z, buf.info)


def _follow(kernel, floor):
    def update(t, z, s, fired):
        return Update(s + 1, None, "turning")

    def events(t, z, s):
        return np.array([z[0] + 0.5]) if s == 0 else np.array([1.0])

    return follow_path(np.array([1.0, 0.0]), (0.5, 9.0), rhs=lambda t, z, s: _M @ z,
                       events=events, update=update, residual=lambda t, z, s: 0.0, state=0,
                       rtol=1e-10, atol=1e-12, param_floor=floor,
                       kernel=(lambda s: _piece if s == 0 else None) if kernel else None)


@pytest.mark.parametrize("floor", [0.0, 1.0])
def test_compiled_piece_reproduces_scipys_dop853(floor):
    ref, comp = _follow(False, floor), _follow(True, floor)
    assert ref.info["n_steps"] == comp.info["n_steps"] > 10
    assert ref.info["n_rhs_evals"] >= comp.info["n_rhs_evals"] - 2
    assert len(ref.events) == len(comp.events) == 1
    # the event z_0 = -0.5, located by Brent's method on the dense output, to rounding
    t_ev = comp.events[0].param
    assert abs(t_ev - ref.events[0].param) <= 1e-13 * t_ev
    assert abs(comp.at(t_ev)[0] + 0.5) <= 1e-9
    for t in np.linspace(0.5, 9.0, 23):
        np.testing.assert_allclose(comp.at(t), ref.at(t), rtol=1e-12, atol=1e-13)
        exact = _exact(t)
        np.testing.assert_allclose(comp.at(t), exact, rtol=1e-8, atol=1e-9)


def _exact(t):
    # z(t) = e^{-0.1 (t - 0.5)} [cos(t - 0.5), -sin(t - 0.5)]
    s = t - 0.5
    return np.exp(-0.1 * s) * np.array([np.cos(s), -np.sin(s)])


def test_step_buffers_and_dense_output():
    buf = StepBuffers(2, max_steps=4)
    assert buf.g_buf(3).shape == (3,) and buf.g_buf(3) is buf.g_buf(3)
    _piece(0.5, 9.0, np.array([1.0, 0.0]), np.zeros(1), np.array([1.5]), 0.0, buf, 1e-10,
           1e-12, np.inf, 1e-8, False, 1.0)
    status, n = int(buf.info[0]), int(buf.info[1])
    assert (status, n) == (3, 4)           # the buffer is full after 4 steps
    dense = buf.dense()
    assert isinstance(dense, DenseSteps)
    t_end = buf.out_t[n]
    np.testing.assert_allclose(dense(t_end), buf.out_z, rtol=1e-14, atol=1e-15)
    np.testing.assert_allclose(dense(0.5 + 0.3 * (t_end - 0.5)),
                               _exact(0.5 + 0.3 * (t_end - 0.5)), rtol=1e-9, atol=1e-10)
