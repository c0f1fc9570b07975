"""The MCM at extreme feature scales and parameters: exact symmetries of the kernel LP, the
relative LP certificate (it cannot pass a perturbed solution), the linear-kernel estimator on
features of very different scales, extreme C, and the conformal step's named failures."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_mcm import _oracle
from threadpoolctl import threadpool_info, threadpool_limits

import pathlib_core.mcm.lp as mcm_module
from pathlib_core.core.kernels import conformal_basis, linear_kernel, rbf_kernel
from pathlib_core.core.kkt import lp_residuals
from pathlib_core.mcm import (
    C_RESOLVE,
    ConformalMCMClassifier,
    MCMClassifier,
    fit_mcm,
    optimize_conformal,
)


def _data(seed, n=30, d=4, shift=0.6):
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + shift * y[:, None]
    return X, y


def _relative_kkt(r, x=None):
    lp = r.lp
    return lp_residuals(lp["c"], lp["x"] if x is None else x, G=lp["G"], h=lp["h"],
                        lb=lp["lb"], ub=lp["ub"], z=lp["z"], w_lb=lp["w_lb"], w_ub=lp["w_ub"],
                        relative=True).max


# ---------------------------------------------------------------------------------------
# feature scales of the issue, and the symmetry (s K, lambda / s, l1 s)
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("scale", [1e8, 1e-8])
@pytest.mark.parametrize("l1", [0.0, 0.05])
def test_linear_kernel_at_extreme_feature_scales(scale, l1):
    X, y = _data(0)
    ref = fit_mcm(linear_kernel(X), y, C=1.0, l1=l1 if l1 == 0 else l1)
    r = fit_mcm(linear_kernel(X * scale), y, C=1.0, l1=l1 * scale ** 2)
    assert _relative_kkt(r) <= 1e-9
    # the same problem in other units: the same b, h, q and objective, lambda / scale^2
    assert r.objective == pytest.approx(ref.objective, rel=1e-9)
    assert r.h == pytest.approx(ref.h, rel=1e-9)
    np.testing.assert_allclose(r.coef * scale ** 2, ref.coef, rtol=1e-6,
                               atol=1e-9 * np.abs(ref.coef).max())


@pytest.mark.parametrize("l1", [0.0, 0.05])
def test_power_of_two_kernel_scaling_is_exact(l1):
    X, y = _data(1)
    K = rbf_kernel(X, gamma=0.4)
    a = fit_mcm(K * 2.0 ** 40, y, C=2.0, l1=l1 * 2.0 ** 40)
    b = fit_mcm(K * 2.0 ** -30, y, C=2.0, l1=l1 * 2.0 ** -30)
    np.testing.assert_array_equal(a.coef * 2.0 ** 70, b.coef)
    assert (a.intercept, a.h, a.objective) == (b.intercept, b.h, b.objective)
    np.testing.assert_array_equal(a.slack, b.slack)
    np.testing.assert_array_equal(a.dual_lower, b.dual_lower)


@pytest.mark.parametrize("scales", ["1e8", "1e-8", "mixed"])
def test_linear_estimator_gives_the_unit_scale_model(scales):
    X, y = _data(2, n=40, d=5)
    d = {"1e8": np.full(5, 1e8), "1e-8": np.full(5, 1e-8),
         "mixed": 10.0 ** np.linspace(-6, 6, 5)}[scales]
    ref = MCMClassifier(kernel="linear").fit(X, y)
    est = MCMClassifier(kernel="linear").fit(X * d, y)
    # with l1 = 0 only the range of the kernel enters the LP, and it is the range of X
    # whatever the column scales: the training decision values are those of unit scale
    f_ref = ref.decision_function(X)
    np.testing.assert_allclose(est.decision_function(X * d), f_ref, rtol=1e-7,
                               atol=1e-9 * np.abs(f_ref).max())
    np.testing.assert_allclose(est.coef_ * d, ref.coef_, rtol=1e-7)
    assert est.result_.objective == pytest.approx(ref.result_.objective, rel=1e-10)
    assert _relative_kkt(est.result_) <= 1e-9
    Xt = np.random.default_rng(3).normal(size=(20, 5))
    np.testing.assert_array_equal(est.predict(Xt * d), ref.predict(Xt))


@pytest.mark.parametrize("scales", ["1e8", "1e-8"])
def test_l1_linear_estimator_at_extreme_scales(scales):
    # with l1 > 0 the kernel LP is not invariant under feature scaling (the norm of lambda
    # weighs differently); the estimator solves the problem it is given, certified
    X, y = _data(3, n=40, d=5)
    s = float(scales)
    est = MCMClassifier(kernel="linear", l1=0.05).fit(X * s, y)
    assert _relative_kkt(est.result_) <= 1e-9
    # at 1e8 the norm of lambda costs next to nothing (lambda ~ 1e-16 does the work): the
    # value is that of the LP without it; at 1e-8 it forbids any lambda: f = b
    K = linear_kernel(X) if s > 1 else np.zeros((40, 40))
    ref = fit_mcm(K, y, C=1.0, l1=0.0 if s > 1 else 0.05)
    assert est.result_.objective == pytest.approx(ref.objective, rel=1e-9)


# ---------------------------------------------------------------------------------------
# the certificate: relative, at rounding level, and it cannot pass a wrong point
# ---------------------------------------------------------------------------------------
def _coherent(r, size=1e-6):
    """The LP solution moved by ``size`` relative, coordinate by coordinate, in the direction
    that raises the tight row of (31)-(32) where the solution weighs most, and that row's
    share ``(|G||x|)_j / ((|G||x|)_j + |h_j|)``."""
    lp = r.lp
    G, x = lp["G"], lp["x"]
    terms = np.abs(G) @ np.abs(x)
    tight = lp["z"] > 0
    share = np.where(tight, terms / (terms + np.abs(lp["h"])), 0.0)
    j = int(np.argmax(share))
    return x * (1 + size * np.sign(G[j] * x)), float(share[j])


@pytest.mark.parametrize("l1", [0.0, 0.05])
def test_perturbed_lp_solution_is_not_certified(l1):
    checked = total = 0
    for seed in range(6):
        X, y = _data(10 + seed, shift=0.3)
        K = linear_kernel(X) if seed % 2 else rbf_kernel(X, gamma=0.5)
        for C in (0.1, 1.0, 10.0):
            r = fit_mcm(K, y, C=C, l1=l1)
            total += 1
            assert _relative_kkt(r) <= 1e-9
            wrong, share = _coherent(r)
            if share >= 0.2:
                assert _relative_kkt(r, wrong) > 1e-7
                checked += 1
    assert checked >= 0.75 * total


# ---------------------------------------------------------------------------------------
# extreme C
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("l1", [0.0, 0.05])
def test_large_C_reaches_the_slack_free_solution(l1):
    X, y = _data(4)
    K = rbf_kernel(X, gamma=0.5)
    vals = [fit_mcm(K, y, C=C, l1=l1) for C in (1e4, 1e8, 1e12, 1e20, 1e300)]
    for r in vals:
        assert np.all(r.slack == 0)
        assert _relative_kkt(r) <= 1e-9
        assert r.objective == pytest.approx(vals[0].objective, rel=1e-10)
    assert vals[-1].C == 1e300


def test_large_C_with_unavoidable_slack_is_an_error():
    # duplicated points with opposite labels: no lambda separates them, q > 0 for any C
    X, y = _data(5, n=20)
    X[10:14] = X[:4]
    y[10:14] = -y[:4]
    K = rbf_kernel(X, gamma=0.5)
    r = fit_mcm(K, y, C=C_RESOLVE, l1=0.05)
    assert r.slack.sum() > 0 and _relative_kkt(r) <= 1e-9
    with pytest.raises(ValueError, match="C = 1e\\+14 is beyond"):
        fit_mcm(K, y, C=1e14, l1=0.05)


def test_small_C_completes_and_certifies_or_is_refused():
    X, y = _data(6, shift=0.2)
    K = linear_kernel(X)
    for C in (1e-8, 1e-6, 1e-3):
        for l1 in (0.0, 0.05):
            r = fit_mcm(K, y, C=C, l1=l1)
            assert _relative_kkt(r) <= 1e-9
            assert abs(r.objective - _oracle(K, y, C, l1)) <= 1e-7 * max(1.0, r.objective)
    with pytest.raises(ValueError, match="C must be at least 1e-08"):
        fit_mcm(K, y, C=1e-12)


# ---------------------------------------------------------------------------------------
# conformal step: the causes named
# ---------------------------------------------------------------------------------------
def test_two_samples_name_the_undefined_fisher_ratio():
    X2 = np.array([[0.0, 1.0], [1.0, 0.0]])
    y2 = np.array([1.0, -1.0])
    K0 = rbf_kernel(X2, gamma=0.5)
    K1 = conformal_basis(X2, X2, gamma=0.5)
    with pytest.raises(ValueError, match="within-class scatter 1'W0 1 of K0 is zero"):
        optimize_conformal(K0, y2, K1)
    with pytest.raises(ValueError, match="within-class scatter"):
        ConformalMCMClassifier(cores="all").fit(X2, y2)


def test_conformal_with_a_kernel_that_is_not_psd_is_named():
    X, y = _data(7, n=20)
    K0 = rbf_kernel(X, gamma=0.5) - 1.5 * np.eye(20)
    K1 = conformal_basis(X, X, gamma=0.5)
    with pytest.raises(ValueError, match="K0 must be positive semi-definite"):
        optimize_conformal(K0, y, K1)


# ---------------------------------------------------------------------------------------
# property: columns at 10^U(-8, 8), degenerate designs
# ---------------------------------------------------------------------------------------
@st.composite
def scaled_designs(draw):
    seed = draw(st.integers(0, 2 ** 31 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(6, 30))
    d = draw(st.integers(1, 8))
    X = np.round(rng.normal(size=(n, d)), draw(st.sampled_from([0, 1, 6])))
    kind = draw(st.sampled_from(["plain", "dup_points", "dup_columns", "constant"]))
    if kind == "dup_points":
        X[n // 2:] = X[: n - n // 2]
    elif kind == "dup_columns" and d > 1:
        X[:, -1] = X[:, 0]
    elif kind == "constant":
        X[:, 0] = 1.0
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    C = 10.0 ** draw(st.floats(-2, 3))
    return X, y, X * 10.0 ** rng.uniform(-8, 8, d), C


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scaled_designs())
def test_property_linear_mcm_at_extreme_column_scales(problem):
    X, y, Xs, C = problem
    ref = MCMClassifier(kernel="linear", C=C).fit(X, y)
    est = MCMClassifier(kernel="linear", C=C).fit(Xs, y)
    assert _relative_kkt(est.result_) <= 1e-9
    assert est.result_.objective == pytest.approx(ref.result_.objective, rel=1e-8)
    assert est.result_.h == pytest.approx(ref.result_.h, rel=1e-8)


# ---------------------------------------------------------------------------------------
# one BLAS thread inside the LP solve
# ---------------------------------------------------------------------------------------
def test_fit_mcm_runs_with_one_blas_thread(monkeypatch):
    seen = []
    inner = mcm_module._solve_sparse

    def spy(*args, **kwargs):
        seen.append(max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))
        return inner(*args, **kwargs)

    monkeypatch.setattr(mcm_module, "_solve_sparse", spy)
    X, y = _data(8)
    with threadpool_limits(limits=2, user_api="blas"):
        fit_mcm(rbf_kernel(X, gamma=0.5), y, C=1.0)
        MCMClassifier().fit(X, y)
    assert len(seen) == 2 and max(seen) == 1
