"""Robust baselines of Appendix D.6 (Qu et al. 2022): oracles, input checks, determinism,
robustness."""

import cvxpy as cp
import numpy as np
import pytest

from pathlib_core.gaga import (
    huber_lasso_fit,
    huber_loss,
    lssvm_fit,
    relssvm_fit,
    rlssvm_fit,
    robust_svm_fit,
    sensitivity_configs,
    suykens_weights,
)


def _regression(n=60, d=5, seed=0, outliers=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    w = np.array([2.0, -1.0, 0.0, 0.5, 0.0])[:d]
    y = X @ w + 0.3 + 0.1 * rng.standard_normal(n)
    y_out = y.copy()
    if outliers:
        idx = rng.choice(n, outliers, replace=False)
        y_out[idx] += 20.0 * np.sign(rng.standard_normal(outliers)) + 10.0
    return X, y, y_out, w


@pytest.mark.parametrize("alpha,delta", [(0.05, 0.5), (0.01, 2.0), (0.0, 0.2), (0.3, 0.1)])
def test_huber_lasso_matches_cvxpy(alpha, delta):
    X, _, y, _ = _regression(outliers=6)
    res = huber_lasso_fit(X, y, alpha=alpha, delta=delta, tol=1e-12)
    assert res.success
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    n = len(y)
    obj = cp.sum(cp.huber(y - X @ w - b, delta)) / (2 * n) + alpha * cp.norm1(w)
    prob = cp.Problem(cp.Minimize(obj))
    prob.solve(solver=cp.CLARABEL)
    assert res.objective == pytest.approx(prob.value, rel=1e-7, abs=1e-9)
    np.testing.assert_allclose(res.coef, w.value, atol=1e-5)
    assert res.intercept == pytest.approx(float(b.value), abs=1e-5)


def test_huber_lasso_large_delta_is_the_lasso():
    from sklearn.linear_model import Lasso
    X, y, _, _ = _regression()
    res = huber_lasso_fit(X, y, alpha=0.02, delta=1e6, tol=1e-12)
    ref = Lasso(alpha=0.02, tol=1e-12, max_iter=100_000).fit(X, y)
    np.testing.assert_allclose(res.coef, ref.coef_, atol=1e-7)
    assert res.intercept == pytest.approx(ref.intercept_, abs=1e-7)


def test_huber_loss_values():
    np.testing.assert_allclose(huber_loss([0.5, -2.0], 1.0), [0.125, 1.5])


def test_lssvm_matches_cvxpy_primal():
    X, _, y, _ = _regression(n=40, outliers=3)
    rng = np.random.default_rng(1)
    v = rng.uniform(0.2, 1.0, len(y))
    res = lssvm_fit(X, y, C=3.0, sample_weight=v)
    w, b = cp.Variable(X.shape[1]), cp.Variable()
    obj = 0.5 * cp.sum_squares(w) + 1.5 * cp.sum(cp.multiply(v, cp.square(y - X @ w - b)))
    cp.Problem(cp.Minimize(obj)).solve(solver=cp.CLARABEL)
    np.testing.assert_allclose(res.coef, w.value, atol=1e-6)
    assert res.intercept == pytest.approx(float(b.value), abs=1e-6)
    np.testing.assert_allclose(res.decision_function(X), X @ w.value + b.value, atol=1e-5)


def test_lssvm_rbf_kernel_system():
    X, y, _, _ = _regression(n=30)
    res = lssvm_fit(X, y, C=2.0, kernel="rbf", gamma=0.3)
    K = np.exp(-0.3 * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    a, b = res.dual_coef, res.intercept
    # KKT: sum a = 0 and K a + b + a / C = y
    assert abs(a.sum()) < 1e-9
    np.testing.assert_allclose(K @ a + b + a / 2.0, y, atol=1e-9)
    assert res.coef is None


def test_rlssvm_cccp_decreases_and_is_fixed_point():
    X, _, y, _ = _regression(n=50, outliers=8)
    res = rlssvm_fit(X, y, C=1.0, tau=1.0)
    assert res.success
    plain = lssvm_fit(X, y, C=1.0)
    e0 = y - plain.decision_function(X)
    f0 = 0.5 * plain.coef @ plain.coef + 0.5 * np.minimum(e0 ** 2, 1.0).sum()
    assert res.objective <= f0 + 1e-9
    # fixed point: the LS-SVM on targets with truncated points at their predictions
    e = y - res.decision_function(X)
    out = np.abs(e) > 1.0
    again = lssvm_fit(X, np.where(out, y - e, y), C=1.0)
    np.testing.assert_allclose(again.coef, res.coef, atol=1e-8)


def test_suykens_weights():
    e = np.array([0.0, 1.0, -2.7, 3.5])
    np.testing.assert_allclose(suykens_weights(e, scale=1.0), [1.0, 1.0, 0.6, 1e-4])
    with pytest.raises(ValueError, match="c2"):
        suykens_weights(e, c1=3.0, c2=2.0)


def test_robust_svm_mu_zero_is_svc():
    from sklearn.svm import SVC
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(40) > 0, 1, -1)
    res = robust_svm_fit(X, y, C=0.7, mu=0.0, tol=1e-10)
    ref = SVC(C=0.7, kernel="linear", tol=1e-10).fit(X, y)
    np.testing.assert_allclose(res.decision_function(X), ref.decision_function(X), atol=1e-6)


def test_robust_svm_corrected_dual_matches_cvxpy():
    rng = np.random.default_rng(4)
    X = rng.standard_normal((30, 2))
    y = np.where(X[:, 0] - X[:, 1] > 0, 1.0, -1.0)
    y[:4] *= -1
    mu, C = 0.2, 1.0
    res = robust_svm_fit(X, y, C=C, mu=mu, tol=1e-10)
    K = X @ X.T
    s = 1 / (1 - 2 * mu) ** 2 - 1
    Kc = K + s * np.diag(np.diag(K))
    L = np.linalg.cholesky(Kc + 1e-12 * np.eye(30))
    a = cp.Variable(30)
    prob = cp.Problem(cp.Maximize(cp.sum(a) - 0.5 * cp.sum_squares(L.T @ cp.multiply(y, a))),
                      [a >= 0, a <= C, y @ a == 0])
    prob.solve(solver=cp.CLARABEL)
    assert res.objective == pytest.approx(prob.value, rel=1e-5)
    np.testing.assert_allclose(res.dual_coef, y * a.value, atol=1e-4)


@pytest.mark.parametrize("fit,kw", [
    (huber_lasso_fit, dict(alpha=0.1, delta=1.0)),
    (lssvm_fit, dict(C=1.0)),
    (rlssvm_fit, dict(C=1.0, tau=1.0)),
    (relssvm_fit, dict(C=1.0, coverage=0.75)),
])
def test_bad_input(fit, kw):
    X, y, _, _ = _regression(n=20)
    with pytest.raises(ValueError, match="y"):
        fit(X, y[:-1], **kw)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        fit(Xn, y, **kw)
    key = next(iter(kw))
    with pytest.raises(ValueError, match=key):
        fit(X, y, **{**kw, key: -1.0})


def test_bad_input_specific():
    X, y, _, _ = _regression(n=20)
    with pytest.raises(ValueError, match="coverage"):
        relssvm_fit(X, y, coverage=1.5)
    with pytest.raises(ValueError, match="kernel"):
        lssvm_fit(X, y, kernel="poly")
    with pytest.raises(ValueError, match="delta"):
        huber_lasso_fit(X, y, alpha=0.1, delta=0.0)
    yc = np.where(y > 0, 1, -1)
    with pytest.raises(ValueError, match="mu"):
        robust_svm_fit(X, yc, mu=0.5)
    with pytest.raises(ValueError, match="sample_weight"):
        lssvm_fit(X, y, sample_weight=np.zeros(20))
    with pytest.raises(ValueError, match="mode"):
        sensitivity_configs("fast")


@pytest.mark.parametrize("fit,kw", [
    (huber_lasso_fit, dict(alpha=0.05, delta=0.5)),
    (rlssvm_fit, dict(C=1.0, tau=1.0)),
    (relssvm_fit, dict(C=1.0, coverage=0.75)),
])
def test_deterministic_and_robust(fit, kw):
    X, y, y_out, _ = _regression(n=80, outliers=12, seed=5)
    r1, r2 = fit(X, y_out, **kw), fit(X, y_out, **kw)
    np.testing.assert_array_equal(r1.coef, r2.coef)
    clean = fit(X, y, **kw).coef
    # the plain fit of the same penalty on the corrupted data
    if fit is huber_lasso_fit:
        plain = huber_lasso_fit(X, y_out, alpha=kw["alpha"], delta=1e6).coef
    else:
        plain = lssvm_fit(X, y_out, C=kw["C"]).coef
    assert np.linalg.norm(r1.coef - clean) < 0.5 * np.linalg.norm(plain - clean)


def test_sensitivity_configs_cover_the_tables():
    cs = sensitivity_configs("quick")
    tables = {t for c in cs for t in c["tables"]}
    assert tables == {str(k) for k in range(9, 17)}
    assert len({c["key"] for c in cs}) == len(cs)
    assert all(c["baselines"] == any(t in c["tables"] for t in ("13", "14", "15", "16"))
               for c in cs)
