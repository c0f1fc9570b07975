""":func:`pathlib_core.s3vm.path.s3vm_path` at any scale, any ``C_unlabeled_max`` and with
kernels that are not PSD; and its certificate, which a perturbed solution fails.

* Exact symmetry ``(s K, C / s, C^* / s) -> (beta / s, f)``: bit for bit for ``s`` a power of
  two (the path is traced for ``K`` divided by one), to rounding for features scaled by
  ``10^k``.
* ``C_unlabeled_max`` up to ``1e300``: past the last event one segment reaches the end, and
  its end point is solved there (not extrapolated), so the certificate stays at rounding.
* Per-column scales ``10^U(-8, 8)`` (linear kernel): complete with the certificate, or stop
  with a ``HomotopyError`` naming the kernel's conditioning.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import rbf_kernel

from pathlib_core.core.homotopy import HomotopyError
from pathlib_core.s3vm.path import s3vm_kkt_residual, s3vm_path


def _problem(seed=0, n=60, d=3, n_lab=6):
    rng = np.random.default_rng(seed)
    X = np.vstack([rng.normal(-1, 1, (n // 2, d)), rng.normal(1, 1, (n // 2, d))])
    yt = np.r_[-np.ones(n // 2), np.ones(n // 2)]
    y = np.zeros(n)
    idx = np.r_[np.arange(n_lab // 2), n // 2 + np.arange(n_lab // 2)]
    y[idx] = yt[idx]
    return X, y


def _effective_condition(K):
    ev = np.linalg.eigvalsh(K)
    pos = ev[ev > K.shape[0] * np.finfo(float).eps * np.abs(ev).max()]
    return pos[-1] / pos[0] if pos.size else 1.0


# ---------------------------------------------------------------------------------------------
# the certificate fails for a perturbed solution
# ---------------------------------------------------------------------------------------------
def coherent_perturbation(K, labels, b, theta, ub, size=1e-6):
    """``theta`` moved by ``size`` relative on its free coordinates (1% of the box away from
    both bounds), each in the direction that adds up in the free row where they weigh most:
    ``share_i = sum_{j free} |Q_ij theta_j| / ((|Q| |theta|)_i + |b y_i - 1|)``. Returns the
    perturbed ``theta`` and that share (0 without a free coordinate)."""
    Q = K * np.outer(labels, labels)
    F = (theta > 0.01 * ub) & (theta < 0.99 * ub)
    if not F.any():
        return theta, 0.0
    share = (np.abs(Q[:, F]) @ theta[F]) / (np.abs(Q) @ theta + np.abs(b * labels - 1))
    i = int(np.flatnonzero(F)[np.argmax(share[F])])
    t = theta.copy()
    t[F] *= 1 + size * np.sign(Q[i, F])
    return t, float(share[i])


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_perturbed_solution_is_not_certified(kernel):
    X, y = _problem()
    K = rbf_kernel(X, gamma=0.5) if kernel == "rbf" else X @ X.T
    C, Cmax = 10.0, 10.0
    path = s3vm_path(K, y, C=C, C_unlabeled_max=Cmax)
    b = path.info["intercept"]
    checked = free = 0
    for t, _side, rec in path.records():
        ub = np.where(y != 0, C, t)
        assert s3vm_kkt_residual(K, y, rec.labels, rec.theta, C=C, C_unlabeled=t) <= 1e-13
        wrong, share = coherent_perturbation(K, rec.labels, b, rec.theta, ub)
        free += bool(share)
        if share >= 0.2:
            assert s3vm_kkt_residual(K, y, rec.labels, wrong, C=C, C_unlabeled=t) > 1e-7, t
            checked += 1
    assert free >= 0.75 * len(path.records()) and checked >= 0.75 * free
    np.testing.assert_allclose(
        path.kkt_residuals(),
        [s3vm_kkt_residual(K, y, r.labels, r.theta, C=C, C_unlabeled=t)
         for t, r in zip(path.breakpoints, [path.at(t) for t in path.breakpoints],
                         strict=True)], rtol=0, atol=1e-15)


# ---------------------------------------------------------------------------------------------
# scale
# ---------------------------------------------------------------------------------------------
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 1000), st.integers(-60, 60), st.sampled_from(["rbf", "linear"]))
def test_power_of_two_scaling_is_bit_for_bit(seed, k, kernel):
    X, y = _problem(seed, n=30)
    K = rbf_kernel(X, gamma=0.5) if kernel == "rbf" else X @ X.T
    f = 2.0**k
    base = s3vm_path(K, y, C=5.0, C_unlabeled_max=5.0)
    scaled = s3vm_path(f * K, y, C=5.0 / f, C_unlabeled_max=5.0 / f)
    np.testing.assert_array_equal(scaled.breakpoints, base.breakpoints / f)
    for (t, side, a), (t2, side2, b) in zip(base.records(), scaled.records(), strict=True):
        assert t2 == t / f and side2 == side
        np.testing.assert_array_equal(b.coef, a.coef / f)
        np.testing.assert_array_equal(b.decision, a.decision)
        np.testing.assert_array_equal(b.labels, a.labels)
    np.testing.assert_array_equal(scaled.kkt_residuals(), base.kkt_residuals())


@pytest.mark.parametrize("factor", [1e8, 1e-8])
def test_features_scaled_by_powers_of_ten(factor):
    X, y = _problem()
    base = s3vm_path(X @ X.T, y, C=1.0, C_unlabeled_max=1.0)
    Xs = X * factor
    s = factor**2
    path = s3vm_path(Xs @ Xs.T, y, C=1.0 / s, C_unlabeled_max=1.0 / s)
    assert np.max(path.kkt_residuals()) <= 1e-13
    np.testing.assert_allclose(path.breakpoints * s, base.breakpoints, rtol=1e-9)
    for t in np.linspace(0, 1.0, 7):
        a, b = base.at(t), path.at(t / s)
        np.testing.assert_array_equal(a.labels, b.labels)
        np.testing.assert_allclose(b.decision, a.decision, rtol=0, atol=1e-9)


@pytest.mark.parametrize("factor", [1e8, 1e-8])
def test_scaled_features_with_unit_C_complete(factor):
    """C = C* = 1 in the user's units with features at 1e8 (the supervised start failed) or
    1e-8 (a boundary tolerance relative to C counted every point as on the boundary)."""
    X, y = _problem()
    Xs = X * factor
    path = s3vm_path(Xs @ Xs.T, y, C=1.0, C_unlabeled_max=1.0)
    assert path.breakpoints[-1] == 1.0
    assert np.max(path.kkt_residuals()) <= 1e-13
    ref = s3vm_path(X @ X.T, y, C=factor**2, C_unlabeled_max=factor**2)
    np.testing.assert_allclose(path.breakpoints * factor**2, ref.breakpoints, rtol=1e-9)
    np.testing.assert_array_equal(path.at(1.0).labels, ref.at(factor**2).labels)


@pytest.mark.parametrize("Cmax", [1e4, 1e8, 1e12, 1e300])
@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_any_C_unlabeled_max(kernel, Cmax):
    X, y = _problem()
    K = rbf_kernel(X, gamma=0.3) if kernel == "rbf" else X @ X.T
    ref = s3vm_path(K, y, C=1.0, C_unlabeled_max=100.0)
    path = s3vm_path(K, y, C=1.0, C_unlabeled_max=Cmax)
    assert path.breakpoints[-1] == Cmax
    assert np.max(path.kkt_residuals()) <= 1e-13  # 7e-5 at 1e12 before the end was solved
    grid = ref.breakpoints[ref.breakpoints < 100.0]
    np.testing.assert_array_equal(path.breakpoints[: grid.size], grid)
    unl = y == 0
    end = path.at(Cmax)
    assert np.min(end.labels[unl] * end.decision[unl]) > 0  # strictly interior


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000), st.integers(8, 30), st.integers(1, 4), st.floats(-2, 2))
def test_property_per_column_scales_complete_or_name_the_conditioning(seed, n, d, log_c):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-8, 8, size=d)
    y = np.zeros(n)
    y[: max(2, n // 5)] = np.where(rng.random(max(2, n // 5)) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    K = X @ X.T
    C = 10.0**log_c / np.abs(K).max()
    try:
        path = s3vm_path(K, y, C=C, C_unlabeled_max=C)
    except HomotopyError as exc:
        assert "ill-conditioned" in str(exc)
        assert _effective_condition(K) >= 1e8
        return
    assert np.max(path.kkt_residuals()) <= max(1e-12, 1e-14 * _effective_condition(K))
    unl = y == 0
    stuck = np.zeros(n, dtype=bool)
    stuck[path.info["stuck"]] = True
    rec = path.at(C)
    assert np.min(rec.labels[unl] * rec.decision[unl]) >= -1e-9
    if (unl & ~stuck).any():
        assert np.min((rec.labels * rec.decision)[unl & ~stuck]) > 0


# ---------------------------------------------------------------------------------------------
# kernels that are not PSD
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda X: np.tanh(0.5 * X @ X.T - 1.0),
    lambda X: -((X[:, None] - X[None]) ** 2).sum(-1),
    lambda X: rbf_kernel(X, gamma=0.3) - 0.3 * np.eye(len(X)),
])
def test_indefinite_kernels_are_named(make):
    X, y = _problem()
    with pytest.raises(ValueError, match="X must be positive semi-definite"):
        s3vm_path(make(X), y, C=1.0, C_unlabeled_max=1.0)


def test_indefinite_kernel_passing_the_screen_is_named():
    """One negative eigenvalue along the smallest eigenvector of an RBF kernel: every 2 x 2
    principal minor stays non-negative, the solvers meet the negative curvature."""
    X, y = _problem(0, n=40)
    R = rbf_kernel(X, gamma=0.5)
    w, V = np.linalg.eigh(R)
    K = R - (w[0] + 1e-2) * np.outer(V[:, 0], V[:, 0])
    from pathlib_core.core.linalg import psd_screen

    assert psd_screen(0.5 * (K + K.T), 1e-10 * np.abs(K).max())
    with pytest.raises(ValueError, match="X must be positive semi-definite"):
        s3vm_path(0.5 * (K + K.T), y, C=10.0, C_unlabeled_max=10.0)
