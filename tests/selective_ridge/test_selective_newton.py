"""The paper's Newton iteration with golden-section shortening (27)-(32), implemented literally
so that the book can measure how it behaves (pathlib_core.selective_ridge.newton)."""

import numpy as np
import pytest

from pathlib_core.selective_ridge import dual_objective, eeg_like, mu_0, selective_fit
from pathlib_core.selective_ridge.newton import paper_newton_iteration


def _problem(seed, N, n, loss):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, n))
    z = X[:, : max(1, n // 4)].sum(1) + 0.3 * rng.standard_normal(N)
    y = np.where(z > np.median(z), 1.0, -1.0) if loss == "hinge" else z
    return X, y


@pytest.mark.parametrize("loss", ["squared", "hinge"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_dual_objective_never_increases(loss, seed):
    X, y = _problem(seed, 25, 60, loss)
    mu = 0.1 * mu_0(X, y, alpha=1.0, loss=loss)
    r = paper_newton_iteration(X, y, alpha=1.0, mu=mu, loss=loss, max_iter=30)
    W = r.objective
    assert len(W) == r.n_iter == len(r.step) == len(r.n_active)
    assert np.all(np.diff(W) <= 1e-12 * (1 + np.abs(W[:-1])))
    # and it is a dual objective: never below the certified optimum
    best = selective_fit(X, y, alpha=1.0, mu=mu, loss=loss)
    W_opt = dual_objective(X, y, best.dual, alpha=1.0, mu=mu, loss=loss)
    assert W[-1] >= W_opt - 1e-9 * (1 + abs(W_opt))


def test_ridge_case_stops_at_the_optimum_in_two_steps():
    # mu = 0: every feature is active, W is a quadratic, the first step is exact
    X, y = _problem(3, 30, 80, "squared")
    r = paper_newton_iteration(X, y, alpha=2.0, mu=0.0)
    best = selective_fit(X, y, alpha=2.0, mu=0.0)
    assert r.stopped and r.n_iter <= 2
    np.testing.assert_allclose(r.dual, best.dual, rtol=0, atol=1e-9 * np.abs(best.dual).max())


def test_without_kink_features_it_converges_like_newton():
    # N >> n and a small mu: all features end strongly active (|s_i| > mu), no kink
    rng = np.random.default_rng(4)
    X = rng.standard_normal((200, 6))
    y = X @ np.arange(1.0, 7.0) + 0.3 * rng.standard_normal(200)
    mu = 1e-4 * mu_0(X, y, alpha=1.0)
    best = selective_fit(X, y, alpha=1.0, mu=mu)
    assert best.info["strong"].all() and not best.info["kink"].any()
    r = paper_newton_iteration(X, y, alpha=1.0, mu=mu)
    assert r.stopped
    W_opt = dual_objective(X, y, best.dual, alpha=1.0, mu=mu, loss="squared")
    assert abs(r.objective[-1] - W_opt) <= 1e-10 * (1 + abs(W_opt))


def test_stalls_in_the_kink_regime_on_eeg_like_data():
    # the finding the book reports: with features at |s_i| = mu at the optimum, the golden
    # section shrinks the steps and the iteration is far from the optimum after 40 steps
    X, y = eeg_like(random_state=0, n_channels=20, n_samples=50)
    mu = 1e-2 * mu_0(X, y, alpha=1.0)
    best = selective_fit(X, y, alpha=1.0, mu=mu)
    assert best.info["kink"].any()
    r = paper_newton_iteration(X, y, alpha=1.0, mu=mu, max_iter=40)
    W_opt = dual_objective(X, y, best.dual, alpha=1.0, mu=mu, loss="squared")
    assert (r.objective[-1] - W_opt) / abs(W_opt) > 1e-3
    assert np.median(r.step[1:]) < 0.1


@pytest.mark.parametrize("kw, name", [({"max_iter": 0}, "max_iter"), ({"n_golden": -1}, "n_golden"),
                                      ({"max_iter": 2.5}, "max_iter.*integral"),
                                      ({"n_golden": 1.5}, "n_golden.*integral"),
                                      ({"alpha": 0.0}, "alpha"), ({"mu": -1.0}, "mu")])
def test_bad_input_names_the_argument(kw, name):
    X, y = _problem(0, 10, 20, "squared")
    args = {"alpha": 1.0, "mu": 0.1, **kw}
    with pytest.raises(ValueError, match=name):
        paper_newton_iteration(X, y, **args)
