"""The lean compiled CP-step (:mod:`pathlib_core.s3vm._fast`) gives the generic engine's path.

``s3vm_path(..., engine="fast")`` (the default) and ``engine="generic"`` must give the same
breakpoints, labels, jumps and solutions: on real registry data sets (no degenerate event,
the compiled loop does everything), and on hypothesis-generated degenerate data (duplicates,
rounded ties, rank-2 linear kernels), where degenerate events are handed to the engine; there
they agree up to the first "tie flip" (a point at f = 0 whose flip leaves J unchanged, where
the label is arbitrary), and past it the compiled loop's path is checked against cvxpy.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import rbf_kernel

from pathlib_core import datasets
from pathlib_core.s3vm import protocol as proto
from pathlib_core.s3vm.path import conditional_solution_cvxpy, s3vm_objective, s3vm_path


def _problem(name, n_max=200):
    X, y = datasets.load(name, standardize=True)
    lab, unl, _, _ = proto.make_split(y, 0)
    unl = unl[: max(0, n_max - len(lab))]
    tr = np.r_[lab, unl]
    ytr = np.r_[y[lab], np.zeros(len(unl))]
    return rbf_kernel(X[tr], gamma=1.0 / X.shape[1]), ytr


def _first_tie_flip(path):
    """``C^*`` of the first flip that did not decrease ``J`` (inf if none).

    Such a flip is a tie: the point sits at ``f = 0`` with the same ``J`` for both labels, and
    whether the stop rule sees its margin as ``<= 0`` or a rounding error above is arbitrary.
    Past it, two exact tracers may carry different (equally optimal) labels for that point.
    """
    ties = [e.param for e in path.events_of("jump")
            if e.info["J_after"] >= e.info["J_before"] - 1e-12 * max(1.0, abs(e.info["J_before"]))]
    return min(ties, default=np.inf)


def _same_path(K, y, C, Cmax, grid, *, upto_tie=False):
    fast = s3vm_path(K, y, C=C, C_unlabeled_max=Cmax, engine="fast")
    gen = s3vm_path(K, y, C=C, C_unlabeled_max=Cmax, engine="generic")
    scale = max(1.0, C)
    if upto_tie:
        t_tie = min(_first_tie_flip(fast), _first_tie_flip(gen))
        grid = [t for t in grid if t < t_tie]
    else:
        assert _first_tie_flip(fast) == np.inf and _first_tie_flip(gen) == np.inf
    for t in grid:
        for side in ("left", "right"):
            a, b = fast.at(t, side=side), gen.at(t, side=side)
            np.testing.assert_array_equal(a.labels, b.labels)
            np.testing.assert_allclose(a.decision, b.decision, rtol=0, atol=1e-8 * scale)
            if not upto_tie:  # theta is unique for a positive definite kernel only (f is)
                np.testing.assert_allclose(a.theta, b.theta, rtol=0, atol=1e-8 * scale)
    if not upto_tie:
        assert [e.indices for e in fast.events_of("jump")] == [e.indices for e in
                                                              gen.events_of("jump")]
    return fast, gen


@pytest.mark.parametrize("name", ["ionosphere", "breast_cancer", "sonar", "heart"])
def test_fast_cp_step_equals_generic_on_registry_data(name):
    K, y = _problem(name)
    C = 10.0
    bp_grid = np.linspace(0.0, C, 41)
    fast, gen = _same_path(K, y, C, C, bp_grid)
    # same breakpoints and index-set events, not only the same values
    assert len(fast.breakpoints) == len(gen.breakpoints)
    np.testing.assert_allclose(fast.breakpoints, gen.breakpoints, rtol=0, atol=1e-10 * C)
    assert [(e.kind, e.indices) for e in fast.events] == [(e.kind, e.indices)
                                                          for e in gen.events]
    # breakpoint by breakpoint (both sides of each jump; the jump positions agree only to
    # rounding, so evaluating one path at the other's breakpoints could pick the other side)
    rf, rg = list(fast.records()), list(gen.records())
    assert len(rf) == len(rg)
    for (tf, sf, a), (tg, sg, b) in zip(rf, rg, strict=True):
        assert sf == sg and abs(tf - tg) <= 1e-10 * C
        np.testing.assert_array_equal(a.labels, b.labels)
        np.testing.assert_allclose(a.decision, b.decision, rtol=0, atol=1e-8 * C)
    assert np.max(fast.kkt_residuals()) < 1e-10
    assert fast.info["engine"] == "fast" and gen.info["engine"] == "generic"
    # the compiled loop did the work: at most a few events went to the engine
    assert fast.info["n_engine_events"] <= 0.1 * fast.info["n_cp_events"]


@st.composite
def _degenerate(draw):
    n = draw(st.integers(8, 24))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed)
    X = np.round(rng.normal(size=(n, 2)), 1)  # rounding creates ties
    n_dup = draw(st.integers(0, 4))
    X = np.vstack([X, X[:n_dup]])
    m = X.shape[0]
    kind = draw(st.sampled_from(["rbf", "linear"]))
    K = rbf_kernel(X, gamma=0.5) if kind == "rbf" else X @ X.T
    y = np.zeros(m)
    n_lab = draw(st.integers(2, 5))
    y[:n_lab] = np.where(rng.random(n_lab) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    C = draw(st.sampled_from([0.5, 1.0, 10.0]))
    Cmax = draw(st.sampled_from([0.5, 1.0, 5.0])) * C
    return K, y, C, Cmax, seed


@settings(deadline=None, max_examples=30, suppress_health_check=[HealthCheck.too_slow])
@given(_degenerate())
def test_property_fast_cp_step_equals_generic_on_degenerate_data(case):
    """Identical up to the first tie flip (see ``_first_tie_flip``); after it, the compiled
    loop's path must still be exact: the conditional optimum of its labels (cvxpy)."""
    K, y, C, Cmax, seed = case
    grid = np.random.default_rng(seed).uniform(0.0, Cmax, 8)
    fast, gen = _same_path(K, y, C, Cmax, np.r_[grid, Cmax], upto_tie=True)
    assert np.max(fast.kkt_residuals()) < 1e-8
    t_tie = min(_first_tie_flip(fast), _first_tie_flip(gen))
    for t in [t for t in (grid[0], Cmax) if t >= t_tie]:
        rec = fast.at(t)
        J = s3vm_objective(K, y, rec.labels, rec.coef, rec.intercept, C=C, C_unlabeled=t)
        Jo, fo = conditional_solution_cvxpy(K, y, rec.labels.astype(float), C=C,
                                            C_unlabeled=t)
        assert abs(J - Jo) <= 1e-7 * max(1.0, abs(Jo))
        np.testing.assert_allclose(rec.decision, fo, atol=1e-5)
        assert np.min(rec.labels[y == 0] * rec.decision[y == 0]) >= -1e-9


def test_engine_argument_is_validated():
    K, y = _problem("sonar", n_max=40)
    with pytest.raises(ValueError, match="engine"):
        s3vm_path(K, y, C=1.0, C_unlabeled_max=1.0, engine="numba")


@pytest.mark.parametrize("engine", ["fast", "generic"])
def test_margin_resting_at_zero_is_on_the_boundary(engine):
    """Regression (found comparing the two tracers): on a rank-2 linear kernel with duplicates
    the margin of point 6 reaches 0 at C* = 0.2172 and then stays there (a rounding error
    above 0) over a whole segment. The CP-step used to stop only once a margin was <= 0, so the
    generic engine kept that boundary solution (not strictly interior, Theorem 4 fails) while
    the compiled loop, rounding the other way, flipped it. Both now stop at the DJ-step's
    boundary tolerance, flip the point there and strictly decrease J."""
    rng = np.random.default_rng(3377)
    X = np.round(rng.normal(size=(13, 2)), 1)
    X = np.vstack([X, X[:2]])
    y = np.zeros(15)
    y[:2] = [1.0, -1.0]
    K = X @ X.T
    path = s3vm_path(K, y, C=1.0, C_unlabeled_max=0.5, engine=engine)
    jumps = path.events_of("jump")
    assert [e.indices for e in jumps] == [(6,)]
    assert abs(jumps[0].param - 0.217155266) < 1e-8
    assert jumps[0].info["J_after"] < jumps[0].info["J_before"] - 1e-3
    unl = y == 0
    for t in (0.23, 0.25, 0.27, 0.5):
        rec = path.at(t)
        assert np.min(rec.labels[unl] * rec.decision[unl]) > 1e-6
