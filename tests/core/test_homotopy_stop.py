"""The ``stop`` callback of :func:`pathlib_core.core.homotopy.trace_path` (used by the S3VM
CP-step)."""

import numpy as np

from pathlib_core.core.homotopy import make_problem, trace_path


def test_stop_ends_the_path_at_the_first_breakpoint_where_it_holds():
    rng = np.random.default_rng(0)
    A = rng.normal(size=(8, 8))
    P = A @ A.T + np.eye(8)
    q0, q1 = rng.normal(size=8), rng.normal(size=8)
    prob = make_problem(P, q0, q1, None, None, None, -np.ones(8), None, np.ones(8), None)
    full = trace_path(prob, 0.0, 20.0)
    assert len(full.breakpoints) >= 4
    t_stop = float(full.breakpoints[2])
    part = trace_path(prob, 0.0, 20.0, stop=lambda p, t: t >= t_stop)
    assert part.breakpoints[-1] == t_stop
    np.testing.assert_allclose(part.breakpoints, full.breakpoints[:3])
    np.testing.assert_allclose(part.at(t_stop).x, full.at(t_stop).x, atol=1e-12)
