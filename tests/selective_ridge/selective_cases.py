"""Data and checks shared by the squared-loss selective-ridge tests (homotopy, ALM search)."""

import numpy as np
from hypothesis import strategies as st

from pathlib_core.selective_ridge import kkt_residuals, selective_fit


def linear_data(N, n, seed):
    """Gaussian features, a response from the first four of them plus noise."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n))
    y = X[:, :4] @ np.array([1.5, -1.0, 0.8, 0.5]) + 0.3 * rng.standard_normal(N)
    return X, y


def assert_certified_and_primal(X, y, alpha, mu, r):
    """``r`` is certified (gap, KKT) and agrees with the cvxpy primal of (11)."""
    assert abs(r.gap) <= 1e-9
    assert kkt_residuals(X, y, r.coef, r.intercept, r.dual, alpha=alpha, mu=mu,
                         loss="squared")["max"] <= 1e-7
    p = selective_fit(X, y, alpha=alpha, mu=mu, method="primal")
    scale = max(1.0, abs(p.objective))
    assert r.objective <= p.objective + 1e-7 * scale
    assert abs(r.objective - p.objective) <= 1e-6 * scale
    np.testing.assert_allclose(X @ r.coef + r.intercept, X @ p.coef + p.intercept,
                               atol=1e-5 * (1 + np.abs(y).max()))


DEGENERACIES = ("dup_objects", "dup_features", "collinear", "constant", "ties")


def make_degenerate(X, kind):
    """Make ``X`` (in place) degenerate: duplicate objects or features, two collinear
    features, a constant feature, or nothing more than the ties its rounding made."""
    N, n = X.shape
    if kind == "dup_objects":
        X[N // 2:] = X[: N - N // 2]
    elif kind == "dup_features" and n > 1:
        X[:, n // 2:] = X[:, : n - n // 2]
    elif kind == "collinear" and n > 2:
        X[:, 2] = 2 * X[:, 0] - X[:, 1]
        X[:, -1] = -3 * X[:, 0]
    elif kind == "constant":
        X[:, 0] = 1.0
    return X


@st.composite
def degenerate_squared(draw, fracs=(0.01, 0.1, 0.5, 0.9)):
    """Small regression problems with duplicate objects or features, collinear or constant
    features, or ties (rounded entries); returns ``(X, y, alpha, mu / mu_0)``."""
    seed = draw(st.integers(0, 2**16))
    N = draw(st.integers(4, 12))
    n = draw(st.integers(2, 25))
    rng = np.random.default_rng(seed)
    X = np.round(rng.standard_normal((N, n)), draw(st.sampled_from([0, 1, 3])))
    make_degenerate(X, draw(st.sampled_from(DEGENERACIES)))
    y = np.round(X[:, 0] - X[:, 1] + 0.5 * rng.standard_normal(N), 1)
    alpha = draw(st.sampled_from([0.1, 1.0, 10.0]))
    frac = draw(st.sampled_from(list(fracs)))
    return X, y, alpha, frac
