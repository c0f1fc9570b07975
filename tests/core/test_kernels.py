"""Tests of :mod:`pathlib_core.core.kernels`."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.metrics import pairwise

from pathlib_core.core.kernels import (
    KERNEL_NAMES,
    ConformalKernel,
    Kernel,
    ard_rbf_gradient_contract,
    ard_rbf_kernel,
    ard_rbf_partial,
    conformal_basis,
    conformal_factor,
    conformal_kernel,
    kernel_from_name,
    linear_kernel,
    rbf_kernel,
    squared_distances,
)

# d = 3 uses the direct per-feature sums, d = 40 the centred Gram expansion
DIMS = [3, 40]


def _data(n, m, d, seed=0, shift=0.0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, d)) + shift, rng.normal(size=(m, d)) + shift


def _min_eig_ok(K):
    K = 0.5 * (K + K.T)
    return np.linalg.eigvalsh(K).min() >= -1e-10 * max(1.0, np.abs(K).max()) * K.shape[0]


# -- agreement with scikit-learn ------------------------------------------------------------

@pytest.mark.parametrize("d", DIMS)
def test_linear_and_rbf_agree_with_sklearn(d):
    X, Y = _data(30, 20, d)
    np.testing.assert_allclose(linear_kernel(X, Y), pairwise.linear_kernel(X, Y), atol=1e-12)
    np.testing.assert_allclose(linear_kernel(X), pairwise.linear_kernel(X), atol=1e-12)
    for gamma in (0.01, 0.3, 2.0):
        np.testing.assert_allclose(rbf_kernel(X, Y, gamma=gamma),
                                   pairwise.rbf_kernel(X, Y, gamma=gamma), rtol=1e-10,
                                   atol=1e-14)
        np.testing.assert_allclose(rbf_kernel(X, gamma=gamma),
                                   pairwise.rbf_kernel(X, gamma=gamma), rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(squared_distances(X, Y),
                               pairwise.euclidean_distances(X, Y, squared=True), atol=1e-10)


@pytest.mark.parametrize("d", DIMS)
def test_ard_with_equal_scales_is_rbf_and_matches_scaled_sklearn(d):
    X, Y = _data(25, 15, d, seed=1)
    np.testing.assert_allclose(ard_rbf_kernel(X, Y, scales=0.2), rbf_kernel(X, Y, gamma=0.2),
                               rtol=1e-12, atol=1e-15)
    s = np.random.default_rng(2).uniform(0.01, 1.0, size=d)
    ref = pairwise.rbf_kernel(X * np.sqrt(s), Y * np.sqrt(s), gamma=1.0)
    np.testing.assert_allclose(ard_rbf_kernel(X, Y, scales=s), ref, rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("d", DIMS)
def test_self_kernels_are_exactly_symmetric_with_exact_diagonal_and_psd(d):
    X, _ = _data(60, 1, d, seed=3, shift=50.0)  # far from the origin: cancellation-prone
    X[7] = X[3]  # a duplicate
    for K in (rbf_kernel(X, gamma=0.05), ard_rbf_kernel(X, scales=np.linspace(0.01, 0.1, d)),
              linear_kernel(X)):
        assert np.array_equal(K, K.T)
        assert _min_eig_ok(K)
    K = rbf_kernel(X, gamma=0.05)
    assert np.all(np.diag(K) == 1.0) and K[3, 7] == 1.0
    D = squared_distances(X)
    assert np.all(np.diag(D) == 0.0) and D[3, 7] == 0.0 and D.min() >= 0.0


# -- ARD gradients --------------------------------------------------------------------------

@pytest.mark.parametrize("d", DIMS)
def test_ard_gradient_tensor_and_partial_match_central_differences(d):
    X, Y = _data(12, 9, d, seed=4)
    s = np.random.default_rng(5).uniform(0.05, 0.5, size=d) / d
    K, dK = ard_rbf_kernel(X, Y, scales=s, return_gradient=True)
    assert dK.shape == (d, 12, 9)
    for k in range(0, d, max(1, d // 5)):
        h = 1e-5 * s[k]
        sp, sm = s.copy(), s.copy()
        sp[k] += h
        sm[k] -= h
        fd = (ard_rbf_kernel(X, Y, scales=sp) - ard_rbf_kernel(X, Y, scales=sm)) / (2 * h)
        assert np.linalg.norm(fd - dK[k]) <= 1e-6 * np.linalg.norm(dK[k])
        np.testing.assert_allclose(ard_rbf_partial(X, Y, scales=s, feature=k), dK[k],
                                   rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(ard_rbf_partial(X, Y, scales=s, feature=k, K=K), dK[k],
                                   rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("d", DIMS)
@pytest.mark.parametrize("same", [False, True])
def test_ard_gradient_contraction_matches_tensor_and_finite_differences(d, same):
    X, Y = _data(20, 14, d, seed=6, shift=3.0)
    Y = None if same else Y
    m = 20 if same else 14
    s = np.random.default_rng(7).uniform(0.05, 0.5, size=d) / d
    G = np.random.default_rng(8).normal(size=(20, m))
    v = ard_rbf_gradient_contract(X, Y, s, G)
    _, dK = ard_rbf_kernel(X, Y, scales=s, return_gradient=True)
    np.testing.assert_allclose(v, np.einsum("ij,dij->d", G, dK), rtol=1e-9,
                               atol=1e-12 * np.abs(v).max())

    def L(scales):
        return float(np.sum(G * ard_rbf_kernel(X, Y, scales=scales)))

    fd = np.empty(d)
    for k in range(d):
        h = 1e-5 * s[k]
        sp, sm = s.copy(), s.copy()
        sp[k] += h
        sm[k] -= h
        fd[k] = (L(sp) - L(sm)) / (2 * h)
    assert np.linalg.norm(fd - v) <= 1e-6 * np.linalg.norm(v)
    # log-parametrisation: chain rule, and a precomputed K gives the same answer
    K = ard_rbf_kernel(X, Y, scales=s)
    np.testing.assert_allclose(ard_rbf_gradient_contract(X, Y, s, G, K=K, wrt="log_scales"),
                               v * s, rtol=1e-12, atol=1e-300)


def test_contraction_is_memory_light_on_a_larger_problem():
    import tracemalloc

    X, Y = _data(400, 300, 60, seed=9)
    G = np.ones((400, 300))
    s = np.full(60, 1e-3)
    tracemalloc.start()
    v = ard_rbf_gradient_contract(X, Y, s, G)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    # the dense (n, m, d) gradient would take 400 * 300 * 60 * 8 bytes = 57.6 MB; the
    # contraction works feature by feature: a few n x m arrays at a time
    assert peak <= 6 * 400 * 300 * 8
    assert v.shape == (60,) and np.all(v < 0)  # all G > 0: every scale increase shrinks K
    for f in (0, 17, 59):  # each entry is <G, dK/ds_f>, checked against the single partial
        d = ard_rbf_partial(X, Y, scales=s, feature=f)
        np.testing.assert_allclose(v[f], np.sum(G * d), rtol=1e-12)


# -- conformal transform --------------------------------------------------------------------

def test_conformal_factor_matches_its_formula_and_the_basis_matrix():
    X, A = _data(15, 4, 2, seed=10)
    alphas, alpha0, gamma = np.array([0.5, -0.2, 1.0, 0.3]), 0.7, 0.8
    c = conformal_factor(X, A, alphas=alphas, alpha0=alpha0, gamma=gamma)
    manual = np.array([alpha0 + sum(a * np.exp(-gamma * np.sum((x - ai) ** 2))
                                    for a, ai in zip(alphas, A, strict=True)) for x in X])
    np.testing.assert_allclose(c, manual, rtol=1e-13)
    K1 = conformal_basis(X, A, gamma=gamma)
    assert K1.shape == (15, 5) and np.all(K1[:, 0] == 1.0)
    np.testing.assert_allclose(K1 @ np.r_[alpha0, alphas], c, rtol=1e-13)


def test_conformal_kernel_is_diag_c_k0_diag_c_and_psd_for_real_factors():
    X, A = _data(40, 5, 3, seed=11)
    K0 = rbf_kernel(X, gamma=0.5)
    c = conformal_factor(X, A, alphas=np.array([2.0, -1.5, 0.5, 1.0, -0.7]), alpha0=0.1,
                         gamma=1.0)
    assert np.any(c < 0)  # real but of both signs: still PSD
    K = conformal_kernel(K0, c)
    np.testing.assert_allclose(K, np.diag(c) @ K0 @ np.diag(c), rtol=1e-13, atol=1e-15)
    assert np.array_equal(K, K.T)
    assert _min_eig_ok(K)


def test_conformal_kernel_object_predicts_test_vs_train():
    Xtr, Xte = _data(30, 10, 3, seed=12)
    cores = Xtr[:4]
    ck = ConformalKernel("rbf", cores, alphas=[1.0, 0.5, -0.3, 0.2], alpha0=1.0, gamma=0.7,
                         base_params={"gamma": 0.3})
    full = ck(np.vstack([Xtr, Xte]))
    np.testing.assert_allclose(ck(Xte, Xtr), full[30:, :30], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(ck(Xtr), full[:30, :30], rtol=1e-12, atol=1e-15)
    assert ck(Xte, Xtr).shape == (10, 30)
    again = ConformalKernel.from_alpha_vector(kernel_from_name("rbf", gamma=0.3), cores,
                                              [1.0, 1.0, 0.5, -0.3, 0.2], gamma=0.7)
    np.testing.assert_allclose(again(Xte, Xtr), ck(Xte, Xtr), rtol=1e-14)
    np.testing.assert_allclose(ck.factor(Xte), conformal_factor(
        Xte, cores, alphas=[1.0, 0.5, -0.3, 0.2], alpha0=1.0, gamma=0.7))
    assert "n_cores=4" in repr(ck)


# -- named kernels --------------------------------------------------------------------------

def test_kernel_from_name_builds_every_kernel():
    X, Y = _data(8, 5, 3, seed=13)
    assert set(KERNEL_NAMES) == {"linear", "rbf", "ard", "precomputed", "conformal"}
    np.testing.assert_allclose(kernel_from_name("linear")(X, Y), X @ Y.T)
    k = kernel_from_name("rbf", gamma=0.4)
    assert isinstance(k, Kernel) and k.params == {"gamma": 0.4} and "rbf" in repr(k)
    np.testing.assert_allclose(k(X, Y), rbf_kernel(X, Y, gamma=0.4))
    np.testing.assert_allclose(kernel_from_name("ard", scales=[0.1, 0.2, 0.3])(X),
                               ard_rbf_kernel(X, scales=[0.1, 0.2, 0.3]))
    Kp = rbf_kernel(Y, X, gamma=1.0)
    assert np.array_equal(kernel_from_name("precomputed")(Kp), Kp)
    kc = kernel_from_name("conformal", base="linear", cores=X[:2], alphas=[1.0, 1.0],
                          alpha0=0.5, gamma=1.0)
    c_y, c_x = (conformal_factor(Z, X[:2], alphas=[1.0, 1.0], alpha0=0.5, gamma=1.0)
                for Z in (Y, X))
    np.testing.assert_allclose(kc(Y, X), c_y[:, None] * (Y @ X.T) * c_x[None, :])


def test_bad_inputs_raise_value_errors_naming_the_argument():
    X, Y = _data(5, 4, 3)
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        rbf_kernel(bad, gamma=1.0)
    with pytest.raises(ValueError, match="Y must have 3 columns"):
        linear_kernel(X, Y[:, :2])
    with pytest.raises(ValueError, match="gamma"):
        rbf_kernel(X, gamma=0.0)
    with pytest.raises(ValueError, match="gamma"):
        rbf_kernel(X, gamma=-1.0)
    with pytest.raises(ValueError, match="scales"):
        ard_rbf_kernel(X, scales=[1.0, 0.0, 1.0])
    with pytest.raises(ValueError, match="scales"):
        ard_rbf_kernel(X, scales=[1.0, 1.0])
    with pytest.raises(ValueError, match="scales"):
        ard_rbf_kernel(X, scales=-2.0)
    with pytest.raises(ValueError, match="G must have shape"):
        ard_rbf_gradient_contract(X, Y, 1.0, np.ones((4, 5)))
    with pytest.raises(ValueError, match="wrt"):
        ard_rbf_gradient_contract(X, Y, 1.0, np.ones((5, 4)), wrt="length_scales")
    with pytest.raises(ValueError, match="feature"):
        ard_rbf_partial(X, scales=1.0, feature=3)
    with pytest.raises(ValueError, match="alphas"):
        conformal_factor(X, Y, alphas=[1.0], alpha0=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="cores"):
        conformal_factor(X, Y[:, :2], alphas=np.ones(4), alpha0=1.0, gamma=1.0)
    with pytest.raises(ValueError, match="c_x"):
        conformal_kernel(np.eye(3), [1.0, 2.0])
    with pytest.raises(ValueError, match="c_y"):
        conformal_kernel(np.ones((3, 2)), [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="name"):
        kernel_from_name("poly")
    with pytest.raises(ValueError, match="gama"):
        kernel_from_name("rbf", gama=1.0)
    with pytest.raises(ValueError, match="gamma"):
        kernel_from_name("rbf")
    with pytest.raises(ValueError, match="scales"):
        kernel_from_name("ard", scales=[1.0, -1.0])
    with pytest.raises(ValueError, match="Y must be None"):
        kernel_from_name("precomputed")(np.eye(2), np.eye(2))


# -- property-based: duplicates, huge and tiny scales ----------------------------------------

_rows = hnp.arrays(np.float64, st.tuples(st.integers(1, 6), st.just(3)),
                   elements=st.floats(-1e3, 1e3, allow_nan=False, width=64))


@settings(max_examples=60, deadline=None)
@given(X=_rows, log_s=st.lists(st.floats(-12, 12), min_size=3, max_size=3),
       dup=st.booleans())
def test_ard_kernel_properties_with_duplicates_and_extreme_scales(X, log_s, dup):
    if dup:
        X = np.vstack([X, X[:1]])
    s = 10.0 ** np.array(log_s)
    K, dK = ard_rbf_kernel(X, scales=s, return_gradient=True)
    assert np.all(np.isfinite(K)) and np.all(np.isfinite(dK))
    assert np.all((K >= 0.0) & (K <= 1.0))
    assert np.array_equal(K, K.T) and np.all(np.diag(K) == 1.0)
    assert np.all(dK <= 0.0)
    if dup:
        assert K[0, -1] == 1.0 and np.all(dK[:, 0, -1] == 0.0)
    # the cross version on identical inputs agrees exactly (direct sums: exact duplicates)
    assert np.array_equal(ard_rbf_kernel(X, X, scales=s), K)
    v = ard_rbf_gradient_contract(X, None, s, np.ones_like(K))
    assert np.all(np.isfinite(v)) and np.all(v <= 0.0)


@settings(max_examples=40, deadline=None)
@given(X=hnp.arrays(np.float64, st.tuples(st.integers(2, 8), st.integers(33, 36)),
                    elements=st.floats(-1e2, 1e2, allow_nan=False, width=64)),
       gamma=st.floats(1e-6, 1e3))
def test_gram_branch_properties(X, gamma):
    X = np.vstack([X, X[:1]])
    D = squared_distances(X)
    assert D.min() >= 0.0 and np.all(np.diag(D) == 0.0) and np.array_equal(D, D.T)
    K = rbf_kernel(X, gamma=gamma)
    assert np.all((K >= 0.0) & (K <= 1.0)) and np.all(np.diag(K) == 1.0)
    ref = pairwise.euclidean_distances(X, squared=True)
    assert np.allclose(D, ref, rtol=1e-8, atol=1e-8 * max(1.0, ref.max()))
