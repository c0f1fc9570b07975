"""Tests of :mod:`pathlib_core.pdgdp.region`: the closed form of Theorem 1 on a critical region.

Every check uses an independent solve of the same dual (cvxpy / CLARABEL through
:func:`pathlib_core.core.qp.solve_qp_cvxpy`) or finite differences of re-solved problems.
"""

import dataclasses

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pathlib_core.core.kernels import rbf_kernel
from pathlib_core.core.qp import solve_qp_cvxpy
from pathlib_core.pdgdp import critical_region, solve_svm_dual

pytest.importorskip("cvxpy")


def _data(seed, n=30, p=3, kernel="linear"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    K = X @ X.T if kernel == "linear" else rbf_kernel(X, gamma=0.5)
    return K, y, rng


def _oracle(K, y, u):
    n = y.shape[0]
    res = solve_qp_cvxpy(np.outer(y, y) * K, -np.ones(n), A=y[None, :], b=[0.0], lb=0.0,
                         ub=u, tol=1e-12)
    assert res.status == "optimal"
    return res


def _inside_perturbation(R, u, rng, scale=1e-3):
    """A perturbation of ``u`` that stays in the region (halved until it does)."""
    d = rng.normal(size=u.shape[0]) * u
    for _ in range(40):
        if R.contains(u + scale * d):
            return u + scale * d
        scale /= 2
    pytest.fail("no perturbation inside the region found")


@pytest.mark.parametrize("seed,kernel", [(0, "linear"), (1, "rbf"), (2, "rbf"), (3, "linear")])
def test_closed_form_matches_oracle_inside_region(seed, kernel):
    K, y, rng = _data(seed, kernel=kernel)
    u = rng.uniform(0.2, 2.0, y.shape[0])
    R = critical_region(K, y, u)
    assert R.degenerate == ""
    assert R.kkt_residuals(u).max < 1e-10
    for _ in range(3):
        v = _inside_perturbation(R, u, rng)
        ref = _oracle(K, y, v)
        obj = R.objective(v)
        assert abs(obj - ref.objective) <= 1e-9 * max(1.0, abs(ref.objective))
        np.testing.assert_allclose(R.alpha(v), ref.x, atol=1e-7 * max(1.0, v.max()))
        assert R.kkt_residuals(v).max < 1e-9


@pytest.mark.parametrize("seed", [0, 1])
def test_jacobian_and_gradient_match_finite_differences_of_resolves(seed):
    K, y, rng = _data(seed, kernel="rbf")
    n = y.shape[0]
    u = rng.uniform(0.2, 2.0, n)
    R = critical_region(K, y, u)
    J, g = R.jacobian(), R.gradient(u)
    h = 1e-6
    for j in rng.choice(n, 8, replace=False):
        e = np.zeros(n)
        e[j] = h
        plus, minus = solve_svm_dual(K, y, u + e), solve_svm_dual(K, y, u - e)
        fd_alpha = (plus.x - minus.x) / (2 * h)
        np.testing.assert_allclose(J[:, j], fd_alpha, atol=1e-5)
        fd_obj = (plus.objective - minus.objective) / (2 * h)
        assert abs(g[j] - fd_obj) < 1e-6
    # dV/du_i = -xi_i on U: minus the hinge slack of the SVM at the optimum
    a, b = R.alpha(u), R.intercept(u)
    f = K @ (a * y) + b
    xi = np.maximum(1 - y * f, 0)
    np.testing.assert_allclose(g[R.at_upper], -xi[R.at_upper], atol=1e-9)
    assert np.all(g[~R.at_upper] == 0)


def test_contains_agrees_with_resolving():
    """Inside (contains true) the closed form is the optimum; clearly outside it is not."""
    K, y, rng = _data(4, kernel="rbf")
    n = y.shape[0]
    u = rng.uniform(0.2, 2.0, n)
    R = critical_region(K, y, u)
    d = rng.normal(size=n) * u
    seen = {True: 0, False: 0}
    for t in np.geomspace(1e-5, 1.0, 25):
        v = np.clip(u + t * d, 1e-3, None)
        ref = _oracle(K, y, v)
        viol = R._violation(v)
        gap = abs(R.objective(v) - ref.objective) / max(1.0, abs(ref.objective))
        if R.contains(v):
            seen[True] += 1
            assert gap < 1e-9
            np.testing.assert_allclose(R.alpha(v), ref.x, atol=1e-7 * v.max())
        elif viol > 1e-4:  # away from the boundary: the affine formula is no longer optimal
            seen[False] += 1
            a = R.alpha(v)
            feasible = np.all(a >= -1e-9) and np.all(a <= v + 1e-9)
            assert (not feasible) or gap > 1e-9 or R.kkt_residuals(v).max > 1e-6
    assert seen[True] > 0 and seen[False] > 0


def test_halfspaces_describe_the_same_region():
    K, y, rng = _data(5, kernel="rbf")
    n = y.shape[0]
    u = rng.uniform(0.2, 2.0, n)
    R = critical_region(K, y, u)
    G, hvec = R.halfspaces()
    d = rng.normal(size=n) * u
    for t in np.geomspace(1e-5, 1.0, 20):
        v = u + t * d
        if np.any(v <= 0):
            continue
        slack = np.max(G @ v - hvec) / (1 + np.max(np.abs(hvec)))
        if abs(slack) > 1e-6:  # away from the boundary both descriptions agree
            assert R.contains(v) == (slack <= 0)


def test_optimal_value_is_convex_in_bounds():
    """Theorem 2's piecewise-quadratic value V(u) of the dual minimization is convex in u."""
    K, y, rng = _data(6, kernel="rbf")
    n = y.shape[0]
    for _ in range(4):
        u0, u1 = rng.uniform(0.05, 3.0, n), rng.uniform(0.05, 3.0, n)
        ts = np.linspace(0, 1, 7)
        vals = np.array([_oracle(K, y, (1 - t) * u0 + t * u1).objective for t in ts])
        second = vals[:-2] - 2 * vals[1:-1] + vals[2:]
        assert np.all(second >= -1e-7 * (1 + np.abs(vals).max()))


@st.composite
def _degenerate(draw):
    seed = draw(st.integers(0, 10_000))
    kind = draw(st.sampled_from(["duplicates", "collinear", "low_rank", "tied_bounds"]))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(8, 16))
    X = rng.normal(size=(n, 2))
    if kind == "duplicates":
        X[n // 2:] = X[: n - n // 2]
    elif kind == "collinear":
        X[:, 1] = 2 * X[:, 0]
    elif kind == "low_rank":
        X = X[:, :1] * rng.normal(size=(1, 5))  # rank-1 kernel of 5 features
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    if kind == "duplicates":
        y[n // 2:] = y[: n - n // 2]
    u = np.full(n, 0.7) if kind == "tied_bounds" else rng.uniform(0.1, 2.0, n)
    return X @ X.T, y, u, kind


@pytest.mark.filterwarnings("error::scipy.linalg.LinAlgWarning")
@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(_degenerate())
def test_degenerate_data_closed_form_is_optimal(case):
    K, y, u, _ = case
    R = critical_region(K, y, u)
    ref = _oracle(K, y, u)
    assert R.degenerate in ("", "singular", "no-free")
    assert R.kkt_residuals(u).max < 1e-8
    assert abs(R.objective(u) - ref.objective) <= 1e-8 * max(1.0, abs(ref.objective))
    # the closed form stays an optimum at a small move inside the region
    rng = np.random.default_rng(0)
    d = rng.normal(size=u.shape[0]) * u * 1e-4
    for _ in range(20):
        if R.contains(u + d):
            v = u + d
            ref_v = _oracle(K, y, v)
            assert abs(R.objective(v) - ref_v.objective) <= 1e-8 * max(1.0, abs(ref_v.objective))
            assert R.kkt_residuals(v).max < 1e-8
            break
        d /= 2


@pytest.mark.filterwarnings("error::scipy.linalg.LinAlgWarning")
def test_exactly_singular_kkt_matrix_goes_to_the_fallback_silently():
    # two identical free points with the same label: M = [[Q_FF, y_F], [y_F', 0]] has two
    # equal rows, LU meets an exact zero pivot; the eigh fallback must take over, no warning
    from pathlib_core.pdgdp.region import _apply_inverse, _factor

    M = np.array([[1.0, 1.0, 1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    lu, Vk, inv_lam = _factor(M)
    assert lu is None and inv_lam.size == 2
    r = np.array([2.0, 2.0, 1.0])  # consistent: r in the range of M
    z = _apply_inverse(lu, Vk, inv_lam, r)
    np.testing.assert_allclose(M @ z, r, atol=1e-12)


@pytest.mark.parametrize("bad,match", [
    (np.zeros(6), "upper must be > 0"),
    (np.r_[1.0, 1.0, np.inf, 1.0, 1.0, 1.0], "finite"),
    (np.ones(5), "upper must have shape"),
    (-np.ones(6), "upper must be > 0"),
])
def test_bad_bounds(bad, match):
    K, y, _ = _data(0, n=6)
    with pytest.raises(ValueError, match=match):
        critical_region(K, y, bad)


def test_bad_kernel_and_labels():
    K, y, _ = _data(0, n=6)
    A = K.copy()
    A[0, 1] += 1.0
    with pytest.raises(ValueError, match="K"):
        critical_region(A, y, np.ones(6))
    with pytest.raises(ValueError, match="y"):
        critical_region(K, np.ones(6), np.ones(6))
    with pytest.raises(ValueError, match="y"):
        critical_region(K, np.arange(6.0), np.ones(6))
    R = critical_region(K, y, np.ones(6))
    with pytest.raises(ValueError, match="u"):
        R.alpha(np.ones(4))
    with pytest.raises(ValueError, match="u must be >= 0"):
        R.objective(-np.ones(6))


# --------------------------------------------------------------------------------------------
# Certificates that can fail, kernels that are not PSD, extreme scales
# --------------------------------------------------------------------------------------------
def _coherent_perturbation(R, u, size=1e-6):
    """The region with its base point ``[alpha_F; b]`` moved by ``size`` relative.

    Each coordinate moves in the direction that adds up in the stationarity row of the free
    sample in which the perturbed terms weigh most (their share ``(|Q_iF||alpha_F| + |b|) /
    (|Q_i||alpha| + 1 + |b|)`` of that row's scale). Returns the perturbed region and that
    share: the row's relative residual moves by about ``size`` times the share.
    """
    a, b, _ = R._evaluate(u)
    Q, F = R._qop.dense(), R._F
    scale = np.abs(Q) @ np.abs(a) + 1.0 + abs(b)
    share = (np.abs(Q[:, F]) @ np.abs(a[F]) + abs(b)) / scale
    i = F[int(np.argmax(share[F]))]
    z = R._z0.copy()
    z[:-1] *= 1.0 + size * np.sign(Q[i, F] * a[F])
    z[-1] *= 1.0 + size * np.sign(R._y[i] * b)
    return dataclasses.replace(R, _z0=z), float(share[i])


def test_perturbed_closed_form_is_not_certified():
    checked = total = 0
    for seed in range(8):
        for kernel in ("linear", "rbf"):
            K, y, rng = _data(seed, kernel=kernel)
            u = rng.uniform(0.2, 2.0, y.shape[0])
            R = critical_region(K, y, u)
            if R.n_free == 0:
                continue
            total += 1
            v = _inside_perturbation(R, u, rng)
            for w in (u, v):  # at the solve point and elsewhere in the region
                assert R.kkt_residuals(w).max <= 1e-14
            wrong, share = _coherent_perturbation(R, u)
            if share >= 0.2:
                assert wrong.kkt_residuals(u).max > 1e-7
                assert wrong.kkt_residuals(v).max > 1e-7
                checked += 1
    assert total >= 12 and checked >= 0.75 * total


def _non_psd_kernels(n, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=n) > 0, 1.0, -1.0)
    y[:2] = [1.0, -1.0]
    K = rbf_kernel(X, gamma=0.5)
    lam, V = np.linalg.eigh(K)
    lam[-5] = -lam[-5]
    return y, {
        "sigmoid": np.tanh(0.5 * X @ X.T - 1.0),
        "rbf - 0.5 I": K - 0.5 * np.eye(n),
        "negative distance": -np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1)),
        "one negative eigenvalue": (V * lam) @ V.T,
    }


@pytest.mark.parametrize("n", [30, 200])
def test_kernel_that_is_not_psd_raises_naming_k(n):
    # before: a stationary point of the non-convex dual, returned silently
    y, kernels = _non_psd_kernels(n, n)
    for name, K in kernels.items():
        K = 0.5 * (K + K.T)
        for f in (critical_region, solve_svm_dual):
            with pytest.raises(ValueError, match="K must be positive semi-definite") as exc:
                f(K, y, np.ones(n))
            assert "smallest eigenvalue" in str(exc.value), name


def test_semidefinite_kernel_with_rounding_is_accepted():
    K, y, rng = _data(3, n=40, kernel="linear")  # rank 3: eigenvalues ~ -1e-15 relative
    K[20:30] = K[0:10]
    K[:, 20:30] = K[:, 0:10]
    y[20:30] = y[0:10]
    u = rng.uniform(0.2, 2.0, 40)
    R = critical_region(K, y, u)
    assert R.kkt_residuals(u).max <= 1e-12


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("s", [1e-300, 1e-150, 1e-12, 1e-8, 2.0 ** -20, 1e8, 1e12, 1e150, 1e300])
def test_scaled_kernel_symmetry(kernel, s):
    # (s K, u / s) has the optimum alpha / s with the same intercept and decision function
    K, y, rng = _data(1, kernel=kernel)
    u = rng.uniform(0.2, 2.0, y.shape[0])
    R0 = critical_region(K, y, u)
    R = critical_region(s * K, y, u / s)
    a0, a = R0.alpha(u), R.alpha(u / s)
    assert R.degenerate == R0.degenerate
    assert R.kkt_residuals(u / s).max <= 1e-14
    np.testing.assert_allclose(a * s, a0, rtol=0, atol=1e-13 * np.max(a0))
    assert abs(R.intercept(u / s) - R0.intercept(u)) <= 1e-13
    f0 = K @ (a0 * y) + R0.intercept(u)
    f = (s * K) @ (a * y) + R.intercept(u / s)
    np.testing.assert_allclose(f, f0, rtol=0, atol=1e-13 * np.max(np.abs(f0)))
    if s == 2.0 ** -20:  # a power of two: the equilibrated problems coincide, bit for bit
        np.testing.assert_array_equal(a * s, a0)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("factor", [1e-300, 1e-12, 1e12, 1e300])
def test_extreme_bounds_complete_with_a_certificate(kernel, factor):
    # C tiny or huge: the dual is solved (the previous tie test of the ratio test, with an
    # absolute 1e-300, picked the wrong blocking bound at 1e-300: residual 0.23)
    K, y, rng = _data(1, kernel=kernel)
    u = rng.uniform(0.2, 2.0, y.shape[0]) * factor
    R = critical_region(K, y, u)
    assert R.qp.status == "optimal"
    assert R.kkt_residuals(u).max <= 1e-11  # degenerate hard-margin faces: ~2e-12 at 1e12
    assert np.all(R.alpha(u) >= 0) and np.all(R.alpha(u) <= u)
