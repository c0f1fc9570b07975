"""The exact MCM path over C (pathlib_core.mcm.path): LP certificate at every breakpoint, an
independent HiGHS solve and cvxpy at random C, the path's structure, degenerate data, model
selection on the path and bad input."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.model_selection import StratifiedKFold
from test_mcm import DEGENERATE_KINDS, _data, _degenerate, _oracle

from pathlib_core.core.exceptions import SolverError
from pathlib_core.core.kernels import linear_kernel, rbf_kernel
from pathlib_core.mcm import fit_mcm
from pathlib_core.mcm.path import MCMPathSolution, mcm_path, mcm_path_cv

#: the LP certificate at every breakpoint, relative to the terms of each condition. HiGHS
#: meets its feasibility tolerances (1e-10) on its internally scaled LP; after unscaling, a
#: tight row of (31)-(32) of a degenerate vertex can be off by a few 1e-9 of its terms (tied
#: points: 1.5e-9 measured), which the polish of q and h cannot move without breaking
#: complementarity. A wrong vertex or wrong multipliers give residuals of order one
CERT = 1e-8


def _random_C(rng, lo, hi, k):
    return np.exp(rng.uniform(np.log(lo), np.log(hi), k))


def _check_against_fits(path, K, y, l1, Cs):
    for C in Cs:
        s = path.at(C)
        f = fit_mcm(K, y, C=C, l1=l1)
        assert abs(s.objective - f.objective) <= 1e-9 * abs(f.objective), (C, s.objective,
                                                                           f.objective)
        assert abs(s.h - f.h) <= 1e-8 * f.h
        # the LP's optimum at a random C is a unique vertex: same support and slack sets
        if l1 > 0:
            sup_f = np.abs(f.coef) > 1e-7 * max(np.abs(f.coef).max(), 1e-300)
            if np.abs(f.coef).max() > 1e-9:
                np.testing.assert_array_equal(s.coef != 0, sup_f)
        np.testing.assert_array_equal(s.slack > 1e-9, f.slack > 1e-9)


@pytest.mark.parametrize("kind, l1", [("rbf", 0.05), ("rbf", 0.0), ("linear", 0.0),
                                      ("linear", 0.1)])
def test_path_matches_independent_solves_and_certificate(kind, l1):
    X, y = _data(3, n=40, d=4, shift=0.5)
    K = rbf_kernel(X, gamma=0.5) if kind == "rbf" else linear_kernel(X)
    path = mcm_path(K, y, C_min=1e-3, C_max=1e3, l1=l1)
    assert path.param_range == (1e-3, 1e3)
    assert path.kkt_residuals().max() <= CERT
    _check_against_fits(path, K, y, l1, _random_C(np.random.default_rng(0), 1e-3, 1e3, 8))


def test_path_matches_cvxpy():
    X, y = _data(5, n=30, d=3, shift=0.4)
    K = rbf_kernel(X, gamma=0.8)
    path = mcm_path(K, y, C_min=1e-2, C_max=1e2, l1=0.05)
    for C in _random_C(np.random.default_rng(1), 1e-2, 1e2, 3):
        ref = _oracle(K, y, C, 0.05)
        assert abs(path.at(C).objective - ref) <= 1e-7 * abs(ref)


def test_path_structure_value_concave_slack_monotone():
    X, y = _data(7, n=50, d=3, shift=0.3)
    K = rbf_kernel(X, gamma=0.5)
    path = mcm_path(K, y, C_min=1e-3, C_max=1e3, l1=0.02)
    assert len(path) > 20
    slopes, prev = [], None
    for seg in path.segments:
        lo, hi = seg.rec_lo, seg.rec_hi
        # the primal vertex is constant on a piece, the value affine with slope sum q
        np.testing.assert_array_equal(lo.coef, hi.coef)
        assert lo.h == hi.h and lo.intercept == hi.intercept
        assert abs((hi.objective - lo.objective) / (seg.hi - seg.lo) - lo.slack.sum()) <= (
            1e-8 * max(1.0, lo.slack.sum()))
        if prev is not None:  # the value is continuous at a breakpoint
            assert abs(prev.objective - lo.objective) <= 1e-9 * abs(lo.objective)
        slopes.append(lo.slack.sum())
        prev = hi
    # concave value: the slope sum q never increases with C
    assert np.all(np.diff(slopes) <= 1e-9 * max(slopes))
    # at a breakpoint both vertices are optimal
    for t in path.breakpoints[1:-1][::7]:
        left, right = path.at(t, side="left"), path.at(t, side="right")
        assert isinstance(right, MCMPathSolution)
        assert abs(left.objective - right.objective) <= 1e-9 * abs(right.objective)


def test_full_rank_plain_mcm_interpolates_for_every_C():
    # the paper's LP with a full-rank kernel: h = 1, q = 0 at every C (one piece)
    X, y = _data(2, n=30, d=3)
    path = mcm_path(rbf_kernel(X, gamma=1.0), y, C_min=1e-2, C_max=1e2)
    assert len(path) == 2
    s = path.at(1.0)
    assert abs(s.h - 1.0) <= 1e-9 and s.slack.max() == 0.0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), kind=st.sampled_from(DEGENERATE_KINDS),
       l1=st.sampled_from([0.0, 0.1]))
def test_property_degenerate_data(seed, kind, l1):
    K, y = _degenerate(seed, kind)
    path = mcm_path(K, y, C_min=1e-2, C_max=1e2, l1=l1)
    assert path.kkt_residuals().max() <= CERT
    rng = np.random.default_rng(seed)
    for C in _random_C(rng, 1e-2, 1e2, 2):
        f = fit_mcm(K, y, C=C, l1=l1)
        assert abs(path.at(C).objective - f.objective) <= 1e-9 * abs(f.objective)


def test_kernel_scale_invariance():
    X, y = _data(4, n=24, d=3)
    K = rbf_kernel(X, gamma=0.5)
    a = mcm_path(K, y, C_min=0.01, C_max=100, l1=0.05)
    b = mcm_path(K * 2.0 ** 20, y, C_min=0.01, C_max=100, l1=0.05 * 2.0 ** 20)
    np.testing.assert_array_equal(a.breakpoints, b.breakpoints)
    np.testing.assert_allclose(b.at(3.0).coef * 2.0 ** 20, a.at(3.0).coef, rtol=1e-12)


def test_path_cv_is_exact_over_the_continuum():
    X, y = _data(11, n=48, d=3, shift=0.25)
    K = rbf_kernel(X, gamma=0.5)
    folds = list(StratifiedKFold(3, shuffle=True, random_state=0).split(X, y))
    cv = mcm_path_cv(K, y, folds, C_min=1e-2, C_max=1e2, l1=0.05)
    assert cv.breakpoints[0] == 1e-2 and cv.breakpoints[-1] == 1e2
    assert cv.error.size == cv.breakpoints.size - 1
    assert cv.best_interval[0] <= cv.C <= cv.best_interval[1]
    # brute force: independent fits at random C give the step function's value
    for C in _random_C(np.random.default_rng(2), 1e-2, 1e2, 5):
        k = np.searchsorted(cv.breakpoints, C, side="right") - 1
        errs = []
        for tr, va in folds:
            f = fit_mcm(K[np.ix_(tr, tr)], y[tr], C=C, l1=0.05)
            errs.append(np.mean(np.where(f.decision_function(K[np.ix_(va, tr)]) >= 0, 1, -1)
                                != y[va]))
        assert cv.error[k] == pytest.approx(np.mean(errs), abs=1e-12)


@pytest.mark.parametrize("kw, match", [
    (dict(C_min=0.0), "C_min"), (dict(C_min=1e-12), "C_min"), (dict(C_max=1e13), "C_max"),
    (dict(C_min=2.0, C_max=1.0), "C_min must be smaller"), (dict(l1=-1.0), "l1"),
    (dict(max_breakpoints=0), "max_breakpoints"),
])
def test_bad_parameters(kw, match):
    X, y = _data(0, n=10)
    with pytest.raises(ValueError, match=match):
        mcm_path(rbf_kernel(X, gamma=1.0), y, **kw)


def test_bad_data_and_folds():
    X, y = _data(0, n=10)
    K = rbf_kernel(X, gamma=1.0)
    with pytest.raises(ValueError, match="y must contain both classes"):
        mcm_path(K, np.ones(10))
    with pytest.raises(ValueError, match="K"):
        mcm_path(K[:, :5], y)
    one_class = [(np.flatnonzero(y > 0), np.flatnonzero(y < 0))]
    with pytest.raises(ValueError, match="folds: training part 0 holds only one class"):
        mcm_path_cv(K, y, one_class)
    with pytest.raises(ValueError, match="folds must hold"):
        mcm_path_cv(K, y, [])


def test_german_fold_where_a_warm_start_stalls():
    # a training fold of a german subset (n = 300) on which HiGHS's warm start once reported
    # "unknown" at C = 0.95 (HiGHS 1.15): the path must complete, solving that step again from
    # scratch, with its certificate everywhere
    from pathlib_core import datasets

    X, y = datasets.load("german", standardize=True)
    rng = np.random.default_rng(0)
    idx = np.sort(np.concatenate([rng.choice(np.flatnonzero(y == c),
                                             size=round(300 * np.mean(y == c)), replace=False)
                                  for c in (-1.0, 1.0)]))
    X, y = X[idx], y[idx]
    tr, _ = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))[2]
    K = rbf_kernel(X[tr], gamma=1.0 / X.shape[1])
    path = mcm_path(K, y[tr], C_min=0.01, C_max=100, l1=0.01)
    assert path.param_range == (0.01, 100.0)
    assert path.kkt_residuals().max() <= CERT
    _check_against_fits(path, K, y[tr], 0.01, _random_C(np.random.default_rng(3), 0.01, 100, 3))


def _registry_kernel(name, n=120):
    from pathlib_core.mcm.protocol import load_binary

    X, y = load_binary(name)
    X = (X - X.mean(0)) / np.where(X.std(0) > 0, X.std(0), 1.0)
    X, y = X[:n], y[:n]
    return rbf_kernel(X, gamma=1.0 / X.shape[1]), y


@pytest.mark.xfail(strict=True, raises=SolverError, reason=(
    "known limitation: the paper's LP (l1 = 0) on low-dimensional data (haberman, 3 features: "
    "the Gaussian kernel is numerically low-rank) leaves HiGHS bases that are optimal only to "
    "its tolerance, and the exact ratio test finds no interval of C for them"))
def test_known_limitation_plain_lp_on_low_rank_kernel():
    K, y = _registry_kernel("haberman")
    mcm_path(K, y, C_min=0.01, C_max=100)


@pytest.mark.xfail(strict=True, reason=(
    "known limitation: on mammographic (l1 = 0.01) one breakpoint joins two bases between "
    "which HiGHS's tolerance hides a third; the certificate there is 1.6e-7"))
def test_known_limitation_hidden_basis_certificate():
    K, y = _registry_kernel("mammographic")
    path = mcm_path(K, y, C_min=0.01, C_max=100, l1=0.01)
    assert path.kkt_residuals().max() <= CERT


@pytest.mark.xfail(strict=True, reason=(
    "known limitation: on tied or duplicated points some draws of the property above give a "
    "path objective 0.6e-9 to 3.6e-9 relative above the optimum, which an independent HiGHS "
    "fit and Clarabel (tolerances 1e-12) agree on to 1e-13: HiGHS's dual tolerance accepts a "
    "basis that is not quite optimal, and the path's certificate (1e-8) cannot see it"))
@pytest.mark.parametrize("seed, kind", [(1293, "tie"), (797, "dup")])
def test_known_limitation_tied_points_oracle_gap(seed, kind):
    test_property_degenerate_data.hypothesis.inner_test(seed=seed, kind=kind, l1=0.1)
