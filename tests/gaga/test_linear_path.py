"""Tests of :mod:`pathlib_core.gaga.spl`: SP-regularizers, ACS and the GAGA age-path.

The age-path is checked by the partial-optimum certificate: at random ages, with
``v = v*(l(w), age)`` the weighted problem is re-solved independently (scikit-learn, tight
tolerance) and must return the same ``w``; ``.weights`` (from the path's sets) must equal
the closed form ``v*(l(w), age)``.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize_scalar
from sklearn.linear_model import Lasso, LogisticRegression

from pathlib_core import datasets, gaga
from pathlib_core.gaga.linear_models import _Model
from pathlib_core.gaga.linear_path import _GAGA, _LIFT_WIDTH, _State

REGS = {"hard": None, "linear": None, "mixture": 0.7, "log": None}


# -- closed-form minimizers ---------------------------------------------------------------------

@settings(deadline=None, max_examples=60)
@given(loss=st.floats(0.0, 30.0), age=st.floats(0.05, 0.95), reg=st.sampled_from(sorted(REGS)))
def test_sp_weights_minimize_the_regularized_loss(loss, age, reg):
    mixture = REGS[reg]
    v = float(gaga.sp_weights(np.array([loss]), age, regularizer=reg, mixture=mixture)[0])
    assert 0.0 <= v <= 1.0

    def obj(u):
        return u * loss + float(gaga.sp_regularizer(u, age, regularizer=reg, mixture=mixture))

    num = minimize_scalar(obj, bounds=(0.0, 1.0), method="bounded",
                          options={"xatol": 1e-12}).x
    best = min(obj(num), obj(0.0), obj(1.0))
    # the closed form attains the minimum value (the hard regularizer ties at l == age)
    assert obj(v) <= best + 1e-9 * max(1.0, abs(best))


def test_sp_weights_known_values():
    loss = np.array([0.0, 0.5, 1.0, 3.0])
    np.testing.assert_allclose(gaga.sp_weights(loss, 2.0, regularizer="linear"),
                               [1.0, 0.75, 0.5, 0.0])
    np.testing.assert_allclose(gaga.sp_weights(loss, 2.0, regularizer="hard"), [1, 1, 1, 0])
    # mixture, gamma = 1, age = 2: v = 1 for sqrt(l) <= 2/3, 0 for sqrt(l) >= 2
    v = gaga.sp_weights(loss, 2.0, regularizer="mixture", mixture=1.0)
    np.testing.assert_allclose(v, [1.0, 1 / np.sqrt(0.5) - 0.5, 0.5, 1 / np.sqrt(3) - 0.5])


# -- data and independent re-solves -----------------------------------------------------------

def _lasso_data(n=80, seed=0):
    X, y = datasets.load("diabetes", standardize=True)
    idx = np.random.default_rng(seed).choice(len(y), n, replace=False)
    X, y = X[idx][:, :6], y[idx]
    return X, (y - y.mean()) / 10.0


def _logistic_data(n=120, seed=0):
    X, y = datasets.load("breast_cancer", standardize=True)
    idx = np.random.default_rng(seed).choice(len(y), n, replace=False)
    return X[idx][:, :5], y[idx]


def _resolve_lasso(X, y, v, alpha):
    n = X.shape[0]
    s = np.sqrt(v)
    # sklearn's Lasso: (1 / 2n) ||y - Xw||^2 + alpha ||w||_1 with n rows (zero rows kept)
    est = Lasso(alpha=alpha, fit_intercept=False, tol=1e-15, max_iter=1_000_000)
    est.fit(X * s[:, None], y * s)
    assert X.shape[0] == n
    return est.coef_, 0.0


def _resolve_logistic(X, y, v, C):
    keep = v > 0  # zero weights dropped by hand (see the design notes' SVC trap)
    est = LogisticRegression(C=C, tol=1e-14, max_iter=100_000, solver="newton-cholesky")
    est.fit(X[keep], y[keep], sample_weight=v[keep])
    return est.coef_.ravel(), float(est.intercept_[0])


CASES = {
    ("lasso", "linear"): dict(alpha=0.05, mixture=None, span=(0.2, 6.0)),
    ("lasso", "mixture"): dict(alpha=0.05, mixture=0.5, span=(0.3, 6.0)),
    ("logistic", "linear"): dict(C=1.0, mixture=None, span=(1.0, 10.0)),
    ("logistic", "mixture"): dict(C=1.0, mixture=1.0, span=(1.0, 10.0)),
}


def _path(model, reg):
    case = dict(CASES[(model, reg)])
    span = case.pop("span")
    X, y = _lasso_data() if model == "lasso" else _logistic_data()
    path = gaga.age_path(X, y, model=model, regularizer=reg, age_min=span[0], age_max=span[1],
                        **case)
    return X, y, path, case, span


@pytest.fixture(scope="module", params=sorted(CASES))
def traced(request):
    model, reg = request.param
    return (model, reg) + _path(model, reg)


def test_path_is_a_partial_optimum_at_random_ages(traced):
    model, reg, X, y, path, case, span = traced
    assert path.param_name == "age"
    assert path.breakpoints[0] == span[0] and path.breakpoints[-1] == span[1]
    rng = np.random.default_rng(1)
    ages = np.r_[rng.uniform(*span, size=6), path.breakpoints[1:-1][:4]]
    for age in ages:
        sol = path.at(age)
        theta_loss = gaga.losses(X, y, sol.coef, sol.intercept, model=model, C=case.get("C"))
        v = gaga.sp_weights(theta_loss, age, regularizer=reg, mixture=case["mixture"])
        np.testing.assert_allclose(sol.weights, v, rtol=0, atol=1e-8)
        if model == "lasso":
            w, b = _resolve_lasso(X, y, v, case["alpha"])
        else:
            w, b = _resolve_logistic(X, y, v, case["C"])
        scale = max(1.0, np.max(np.abs(sol.coef)))
        np.testing.assert_allclose(sol.coef, w, rtol=0, atol=1e-6 * scale)
        assert abs(sol.intercept - b) <= 1e-6 * max(1.0, abs(b))


def test_kkt_residuals_at_every_breakpoint(traced):
    *_, path, case, span = traced
    res = path.kkt_residuals()
    assert res.size >= len(path.breakpoints)
    assert np.nanmax(res) <= 1e-9
    assert path.info["max_residual"] <= 1e-9


def test_path_is_continuous_at_turning_points(traced):
    *_, path, case, span = traced
    turning = [e.param for e in path.events if e.kind == "turning"]
    jumps = {e.param for e in path.events if e.kind == "jump"}
    for t in turning:
        if t in jumps:
            continue
        left, right = path.at(t, side="left"), path.at(t, side="right")
        scale = max(1.0, np.max(np.abs(left.coef)))
        np.testing.assert_allclose(left.coef, right.coef, atol=1e-7 * scale)
    # inside a piece the path is continuous: two nearby ages give nearby solutions
    bp = path.breakpoints
    k = int(np.argmax(np.diff(bp)))
    mid, h = 0.5 * (bp[k] + bp[k + 1]), 1e-7 * (bp[k + 1] - bp[k])
    a, b = path.at(mid).coef, path.at(mid + h).coef
    assert np.max(np.abs(a - b)) <= 1e-4 * max(1.0, np.max(np.abs(a)))


def test_ode_right_hand_side_matches_finite_differences(traced):
    """dw/dage from eq. (6) equals the central difference of re-solved partial optima."""
    model, reg, X, y, path, case, span = traced
    bp = path.breakpoints
    k = int(np.argmax(np.diff(bp)))
    age = 0.5 * (bp[k] + bp[k + 1])
    h = 1e-4 * (bp[k + 1] - bp[k])
    sol = path.at(age)
    m = _Model(model, X, y, alpha=case.get("alpha"), C=case.get("C"))
    g = _GAGA(m, reg, case["mixture"], 1e-6, ())
    theta = sol.coef if model == "lasso" else np.r_[sol.coef, sol.intercept]
    state = g.state_from(theta, age)
    slope = g.rhs(age, theta, state)
    # independent: ACS (re-solves with scikit-learn-free Newton / CD) at age +- h
    hi = gaga.acs(X, y, age + h, model=model, regularizer=reg, warm_start=theta, **case)
    lo = gaga.acs(X, y, age - h, model=model, regularizer=reg, warm_start=theta, **case)
    assert hi.converged and lo.converged
    th_hi = hi.coef if model == "lasso" else np.r_[hi.coef, hi.intercept]
    th_lo = lo.coef if model == "lasso" else np.r_[lo.coef, lo.intercept]
    fd = (th_hi - th_lo) / (2 * h)
    np.testing.assert_allclose(slope, fd, rtol=1e-4, atol=1e-6 * max(1.0, np.abs(fd).max()))


def test_lasso_rhs_equals_proposition_2():
    """Eq. (11): dw_A/dage = -sqrt(2n)/age^2 (X_AE' D X_EA)^-1 X_AE' (sign(r) l^(3/2))."""
    X, y = _lasso_data()
    path = gaga.age_path(X, y, model="lasso", regularizer="linear", alpha=0.05, age_min=0.2,
                        age_max=1.0)
    age = 0.6
    w = path.at(age).coef
    n = X.shape[0]
    r = X @ w - y
    loss = r ** 2 / (2 * n)
    E = loss < age
    A = w != 0
    XEA = X[np.ix_(E, A)]
    D = 1 - 3 * loss[E] / age
    paper = -np.sqrt(2 * n) / age ** 2 * np.linalg.solve(
        XEA.T @ (D[:, None] * XEA), XEA.T @ (np.sign(r[E]) * loss[E] ** 1.5))
    m = _Model("lasso", X, y, alpha=0.05)
    g = _GAGA(m, "linear", None, 1e-6, ())
    ours = g.rhs(age, w, g.state_from(w, age))[A]
    np.testing.assert_allclose(ours, paper, rtol=1e-10)


# -- degenerate data (hypothesis) -------------------------------------------------------------

@settings(deadline=None, max_examples=6, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), n_dup=st.integers(1, 4), reg=st.sampled_from(
    ["linear", "mixture"]))
def test_duplicates_and_ties_reach_age_max(seed, n_dup, reg):
    """Duplicated rows cross every threshold together (simultaneous critical points)."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(25, 3))
    X = np.vstack([X, np.repeat(X[:1], n_dup, axis=0)])
    y = X[:, 0] - 0.5 * X[:, 1] + rng.normal(scale=0.5, size=X.shape[0])
    y[-n_dup:] = y[0]
    y[1:4] = y[1]  # tied responses too
    mixture = 0.5 if reg == "mixture" else None
    path = gaga.age_path(X, y, model="lasso", regularizer=reg, mixture=mixture, alpha=0.02,
                        age_min=0.05, age_max=2.0)
    assert path.breakpoints[-1] == 2.0
    for age in rng.uniform(0.05, 2.0, size=3):
        sol = path.at(age)
        assert gaga.partial_optimum_residual(X, y, sol.coef, 0.0, age, model="lasso",
                                            regularizer=reg, mixture=mixture,
                                            alpha=0.02) <= 1e-8
        # duplicated samples have equal losses, hence equal weights, at every age
        np.testing.assert_allclose(sol.weights[-n_dup:], sol.weights[0], atol=1e-10)


def test_simultaneous_critical_points_do_not_stop_the_path():
    """Constructed data: pairs of identical rows, so every sample event is a tie of two."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(15, 2))
    y = X @ np.array([1.0, -1.0]) + rng.normal(scale=0.8, size=15)
    X, y = np.vstack([X, X]), np.r_[y, y]
    path = gaga.age_path(X, y, model="lasso", regularizer="linear", alpha=0.01, age_min=0.05,
                        age_max=3.0)
    assert path.breakpoints[-1] == 3.0
    sample_events = [e for e in path.events if e.kind == "turning"
                     and all(i < 30 for i in e.indices)]
    assert sample_events, "the constructed data must produce sample events"
    for e in sample_events:
        assert len(e.indices) % 2 == 0
        assert {i % 15 for i in e.indices} == {i % 15 for i in e.indices[: len(e.indices) // 2]}



def test_jump_whose_newton_return_lands_on_the_current_point():
    """The chapter-3 full-mode Lasso run 6 (whole diabetes fit split, 30% response noise).

    At age ~4.3691 sample 52 reaches its threshold; with it in E the branch runs backwards
    (a fold), so the point is a jump. Warm ACS at t (1 + 1e-3) lands on a branch that Newton
    steps bring back to the *current* point; the jump search then has to re-solve by ACS at t
    (a distinct partial optimum ~0.043 away) instead of giving up, which it used to do.
    """
    X, y = datasets.load("diabetes", standardize=True)
    y = y - y.mean()
    X, y = X[np.random.default_rng(6).permutation(len(y))], y[np.random.default_rng(6)
                                                               .permutation(len(y))]
    perm = np.random.default_rng(10_006).permutation(len(y))
    rest = perm[len(y) // 4:]
    fit = rest[len(rest) // 4:]
    y_fit, _ = datasets.add_response_noise(y[fit], rate=0.3, random_state=6, scale=2.0)
    path = gaga.age_path(X[fit], y_fit, model="lasso", regularizer="linear", alpha=0.01,
                        age_min=0.1, age_max=20.0)
    assert path.breakpoints[-1] == 20.0
    assert np.nanmax(path.kkt_residuals()) <= 1e-9
    jumps = [e for e in path.events if e.kind == "jump" and abs(e.param - 4.369116506) < 1e-6]
    # the jump itself (sample 52); a KKT-monitor re-solve may follow at the same age
    assert jumps and jumps[0].indices == (52,) and "delta" in jumps[0].info
    for age in (4.369116506 * (1 + 1e-9), 4.4, 5.0):
        sol = path.at(age)
        assert gaga.partial_optimum_residual(X[fit], y_fit, sol.coef, 0.0, age, model="lasso",
                                            regularizer="linear", alpha=0.01) <= 1e-9


def _chapter3_split(run):
    """The fit split of GAGA chapter 3's full-mode Lasso runs (whole diabetes set, 30%
    response noise): ``(X_fit, y_fit)``."""
    X, y = datasets.load("diabetes", standardize=True)
    y = y - y.mean()
    idx = np.random.default_rng(run).permutation(len(y))
    X, y = X[idx], y[idx]
    perm = np.random.default_rng(10_000 + run).permutation(len(y))
    rest = perm[len(y) // 4:]
    fit = rest[len(rest) // 4:]
    return X[fit], datasets.add_response_noise(y[fit], rate=0.3, random_state=run, scale=2.0)[0]


def test_jump_whose_new_branch_needs_a_long_acs_run():
    """GAGA chapter 3, full mode: the mixture Lasso (gamma 0.5) on the run-7 fit split.

    At age ~10.2617 an inactive coefficient (feature 6) reaches its threshold and neither
    keeping nor activating it continues (J has a small negative eigenvalue). Warm ACS at
    t (1 + delta) needs 1157 iterations to reach the new branch; with the 300-iteration cap
    alone every delta fell back to the current point and the path stopped with "no
    continuation found". The jump search now retries with a larger cap.
    """
    X, y = _chapter3_split(7)
    path = gaga.age_path(X, y, model="lasso", regularizer="mixture", mixture=0.5, alpha=0.01,
                        age_min=0.1, age_max=20.0)
    assert path.breakpoints[-1] == 20.0
    assert np.nanmax(path.kkt_residuals()) <= 1e-9
    jumps = [e for e in path.events if e.kind == "jump" and abs(e.param - 10.26168741) < 1e-6]
    assert jumps and jumps[0].info["jump_size"] > 1.0
    for age in (10.26168741 * (1 + 1e-9), 10.5, 12.0):
        sol = path.at(age)
        assert gaga.partial_optimum_residual(X, y, sol.coef, 0.0, age, model="lasso",
                                            regularizer="mixture", mixture=0.5,
                                            alpha=0.01) <= 1e-9


def test_a_threshold_crossed_twice_within_one_step_is_an_event():
    """GAGA chapter 3, full mode: the mixture Lasso on the run-3 fit split. Sample 4 (in the
    mixture zone since age 1.7982) reaches the upper threshold near 1.812 and would turn back
    within the same integrator step; solve_ivp's end-point sign test missed it, its weight
    went negative, and the left limit of the next event (a jump at 1.8197) had a
    partial-optimum residual of 4.8e-7. The dense-output samples of follow_path find it."""
    X, y = _chapter3_split(3)
    path = gaga.age_path(X, y, model="lasso", regularizer="mixture", mixture=0.5, alpha=0.01,
                        age_min=0.1, age_max=20.0)
    assert np.nanmax(path.kkt_residuals()) <= 1e-9
    assert any(4 in e.indices and 1.81 < e.param < 1.8125 for e in path.events)
    assert np.all(np.concatenate([path.at(a).weights for a in np.linspace(1.80, 1.83, 31)])
                  >= 0.0)


def _refire_data():
    """Seed 922 of the duplicates test (mixture, gamma 0.5): feature 2 leaves the active set
    at age ~0.1836 and its just-reassigned condition fires again at ~0.2013 in the same
    piece (found when the start-of-piece handling of reassigned conditions changed)."""
    rng = np.random.default_rng(922)
    X = rng.normal(size=(25, 3))
    X = np.vstack([X, X[:1]])
    y = X[:, 0] - 0.5 * X[:, 1] + rng.normal(scale=0.5, size=X.shape[0])
    y[-1] = y[0]
    y[1:4] = y[1]
    return X, y


def test_reassigned_condition_that_fires_again_in_the_next_piece():
    X, y = _refire_data()
    path = gaga.age_path(X, y, model="lasso", regularizer="mixture", mixture=0.5, alpha=0.02,
                        age_min=0.05, age_max=2.0)
    assert path.breakpoints[-1] == 2.0
    feat2 = [e for e in path.events if e.indices == (X.shape[0] + 2,)]
    # leaves at ~0.1836 (turning), re-enters at ~0.2013 (turning): neither is a restart
    ages = [e.param for e in feat2]
    assert any(abs(a - 0.18362) < 1e-4 for a in ages)
    assert any(abs(a - 0.20129) < 1e-4 for a in ages)
    assert all(e.kind == "turning" for e in feat2 if 0.18 < e.param < 0.21)
    for age in np.linspace(0.1837, 0.2012, 7):
        sol = path.at(age)
        assert gaga.partial_optimum_residual(X, y, sol.coef, 0.0, age, model="lasso",
                                            regularizer="mixture", mixture=0.5,
                                            alpha=0.02) <= 1e-9
        # the feature is out of the model in between: an exact zero, not a small value
        assert sol.coef[2] == 0.0


def test_event_lift_after_a_turning_point_is_local():
    """The reassigned conditions are lifted only in a 1e-8 window after the turning point
    (so that the next piece starts with a normal step); elsewhere the events are exact."""
    X, y = _lasso_data()
    m = _Model("lasso", X, y, alpha=0.05)
    g = _GAGA(m, "linear", None, 1e-6, (1e-3,))
    age = 0.5
    theta = gaga.acs(X, y, age, model="lasso", regularizer="linear", alpha=0.05).coef
    s0 = g.state_from(theta, age)
    s = _State(s0.part, s0.active, s0.signs, s0.n_neg, age, (0, 3))
    exact = g.events(age, theta, s, lift=False)
    lifted = g.events(age, theta, s)
    assert np.all(lifted[[0, 3]] > exact[[0, 3]])
    np.testing.assert_array_equal(np.delete(lifted, [0, 3]), np.delete(exact, [0, 3]))
    t1 = age * (1 + 2 * _LIFT_WIDTH)
    np.testing.assert_array_equal(g.events(t1, theta, s), g.events(t1, theta, s, lift=False))


# -- ACS and estimators ------------------------------------------------------------------------

def test_acs_reports_non_convergence():
    X, y = _lasso_data()
    res = gaga.acs(X, y, 0.5, model="lasso", regularizer="linear", alpha=0.05, max_iter=1)
    assert not res.converged and res.n_iter == 1
    full = gaga.acs(X, y, 0.5, model="lasso", regularizer="linear", alpha=0.05)
    assert full.converged and full.residual <= 1e-10


def test_acs_path_warm_starts_give_partial_optima():
    X, y = _logistic_data()
    grid = gaga.acs_path(X, y, ages=[1.0, 2.0, 4.0], model="logistic", regularizer="mixture",
                        C=1.0, mixture=1.0, max_iter=5000)
    out = [grid.at(a) for a in (1.0, 2.0, 4.0)]
    assert grid.info["ages"] == [1.0, 2.0, 4.0] and not grid.events_of("not_converged")
    assert [r.converged for r in out] == [True, True, True]
    for age, r in zip([1.0, 2.0, 4.0], out, strict=True):
        assert gaga.partial_optimum_residual(X, y, r.coef, r.intercept, age, model="logistic",
                                            regularizer="mixture", C=1.0, mixture=1.0) <= 1e-9


def test_estimators_select_an_age_on_validation_data():
    X, y = _lasso_data(n=100)
    est = gaga.SelfPacedLasso(alpha=0.05, age_min=0.2, age_max=3.0).fit(X, y)
    assert 0.2 <= est.age_ <= 3.0
    assert est.validation_error_ == pytest.approx(est.validation_curve_.min())
    assert est.predict(X).shape == (X.shape[0],)
    Xc, yc = _logistic_data()
    clf = gaga.SelfPacedLogisticRegression(C=1.0, age_min=1.0, age_max=5.0).fit(
        Xc[:80], yc[:80], Xc[80:], yc[80:])
    assert set(np.unique(clf.predict(Xc))) <= {-1.0, 1.0}
    assert clf.validation_error_ <= 0.5


# -- bad input -----------------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, match", [
    (dict(age_min=2.0, age_max=1.0), "age_min"),
    (dict(age_min=1.0, age_max=1.0), "age_min"),
    (dict(age_min=-1.0, age_max=1.0), "age_min"),
    (dict(age_min=0.0, age_max=1.0), "age_min"),
    (dict(regularizer="mixture", mixture=0.0), "mixture"),
    (dict(regularizer="mixture", mixture=None), "mixture"),
    (dict(model="tree"), "model"),
    (dict(regularizer="cubic"), "regularizer"),
    (dict(regularizer="hard"), "regularizer"),
    (dict(model="logistic", y="nonbinary"), "y"),
    (dict(X="nan"), "X"),
    (dict(model="lasso", alpha=None), "alpha"),
])
def test_bad_input_raises_value_error(kwargs, match):
    X, y = _lasso_data(n=30)
    args = dict(model="lasso", regularizer="linear", age_min=0.5, age_max=2.0, alpha=0.05)
    args.update(kwargs)
    if args.get("y") == "nonbinary":
        args.pop("y")
        y = np.arange(30.0)
    if args.get("X") == "nan":
        args.pop("X")
        X = X.copy()
        X[0, 0] = np.nan
    with pytest.raises(ValueError, match=match):
        gaga.age_path(X, y, **args)


def test_bad_input_acs_and_weights():
    X, y = _lasso_data(n=30)
    with pytest.raises(ValueError, match="age"):
        gaga.acs(X, y, 0.0, model="lasso", regularizer="linear", alpha=0.05)
    with pytest.raises(ValueError, match="ages"):
        gaga.acs_path(X, y, ages=[1.0, -1.0], model="lasso", regularizer="linear", alpha=0.05)
    with pytest.raises(ValueError, match="loss"):
        gaga.sp_weights([-1.0], 1.0, regularizer="linear")
    with pytest.raises(ValueError, match="age"):
        gaga.sp_weights([1.0], 2.0, regularizer="log")
    with pytest.raises(NotImplementedError, match="svm"):
        gaga.acs(X, np.sign(y) + (y == 0), 1.0, model="svm", regularizer="linear")


@pytest.mark.parametrize("kwargs, match", [
    (dict(max_iter=0), "max_iter must be an integer >= 1"),
    (dict(max_iter=2.5), "max_iter must be an integer >= 1"),
    (dict(max_iter="10"), "max_iter must be an integer >= 1"),
    (dict(tol=0.0), "tol must be > 0"),
    (dict(tol=-1e-9), "tol must be > 0"),
    (dict(tol=np.nan), "tol must be finite"),
])
def test_acs_and_acs_path_check_max_iter_and_tol(kwargs, match):
    X, y = _lasso_data(n=30)
    args = dict(model="lasso", regularizer="linear", alpha=0.05, **kwargs)
    with pytest.raises(ValueError, match=match):
        gaga.acs_path(X, y, ages=[0.5, 1.0], **args)
    with pytest.raises(ValueError, match=match):
        gaga.acs(X, y, 0.5, **args)


def test_acs_path_accepts_an_integral_float_max_iter():
    X, y = _lasso_data(n=30)
    kw = dict(model="lasso", regularizer="linear", alpha=0.05)
    a = gaga.acs_path(X, y, ages=[0.5, 1.0], max_iter=50.0, **kw)
    b = gaga.acs_path(X, y, ages=[0.5, 1.0], max_iter=50, **kw)
    for ra, rb in zip((a.at(0.5), a.at(1.0)), (b.at(0.5), b.at(1.0)), strict=True):
        np.testing.assert_array_equal(ra.coef, rb.coef)
        assert ra.n_iter == rb.n_iter


def test_logistic_age_min_without_partial_optimum_is_reported():
    X, y = _logistic_data()
    with pytest.raises(ValueError, match="age_min"):
        gaga.age_path(X, y, model="logistic", regularizer="linear", C=1.0, age_min=0.01,
                     age_max=1.0)


def test_regression_sample_on_the_mixture_boundary():
    """Found by hypothesis: a sample that enters M at sqrt(l) = age was reported again at
    the piece start (fixed in odepath: small first step when a component starts at 0)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(25, 3))
    X = np.vstack([X, X[:1]])
    y = X[:, 0] - 0.5 * X[:, 1] + rng.normal(scale=0.5, size=X.shape[0])
    y[-1:] = y[0]
    y[1:4] = y[1]
    path = gaga.age_path(X, y, model="lasso", regularizer="mixture", mixture=0.5, alpha=0.02,
                        age_min=0.05, age_max=2.0)
    assert path.breakpoints[-1] == 2.0
    assert np.nanmax(path.kkt_residuals()) <= 1e-9


def test_helpers_check_their_arguments():
    X, y = np.eye(4), np.array([1.0, -1.0, 0.5, 0.0])
    with pytest.raises(ValueError, match="coef"):
        gaga.losses(X, y, np.zeros(3), model="lasso", alpha=0.1)
    with pytest.raises(ValueError, match="intercept"):
        gaga.partial_optimum_residual(X, np.sign(y + 0.1), np.zeros(4), np.nan, 1.0,
                                     model="logistic", regularizer="linear", C=1.0)
    with pytest.raises(ValueError, match="age"):
        gaga.partial_optimum_residual(X, y, np.zeros(4), 0.0, -1.0, model="lasso",
                                     regularizer="linear", alpha=0.1)
    with pytest.raises(ValueError, match="v must"):
        gaga.weighted_fit(X, y, -np.ones(4), model="lasso", alpha=0.1)
    with pytest.raises(ValueError, match="part"):
        gaga.sp_weights_derivatives(np.ones(3), 1.0, np.array([0, 1, 7]), regularizer="linear")
    with pytest.raises(ValueError, match="regularizer"):
        gaga.sp_weights_derivatives(np.ones(3), 1.0, np.zeros(3, int), regularizer="hard")


def test_candidate_ages_are_breakpoints_plus_interior_points():
    class _P:  # only the breakpoints are read
        breakpoints = np.array([0.5, 1.0, 1.0, 3.0])

    got = gaga.candidate_ages(_P(), 3)
    want = np.unique(np.r_[0.5, 1.0, 3.0, 0.5 + 0.5 * np.arange(1, 4) / 4,
                           1.0 + 2.0 * np.arange(1, 4) / 4])
    np.testing.assert_array_equal(got, want)
    # a zero-length piece (the jump at 1.0) adds no interior points; 0 keeps breakpoints
    np.testing.assert_array_equal(gaga.candidate_ages(_P(), 0), [0.5, 1.0, 3.0])
    for bad in (-1, 2.5, True, "8"):
        with pytest.raises(ValueError, match="n_interior"):
            gaga.candidate_ages(_P(), bad)
    X, y = datasets.load("diabetes", standardize=True)
    est = gaga.SelfPacedLasso(alpha=0.05, age_min=0.5, age_max=2.0, n_eval_per_piece=2.5)
    with pytest.raises(ValueError, match="n_eval_per_piece"):
        est.fit(X[:80, :4], y[:80] - y[:80].mean())


def test_a_coefficient_that_leaves_is_recorded_at_zero():
    """GAGA chapter 3, quick mode, Lasso on 300 diabetes points (run 0): feature 4 leaves
    the active set at age ~0.77796. The event is located to the events' tolerance, and the
    integrated coefficient there was +1.2e-10 while its sign in the piece was negative: the
    left record had the wrong sign and a partial-optimum residual of 6.6e-4. A coefficient
    at or past 0 at the end of its piece is now recorded as 0."""
    X, y = datasets.load("diabetes", standardize=True)
    y = y - y.mean()
    idx = np.random.default_rng(0).permutation(len(y))[:300]
    X, y = X[idx], y[idx]
    perm = np.random.default_rng(10_000).permutation(300)
    rest = perm[75:]
    fit = rest[len(rest) // 4:]
    y_fit = datasets.add_response_noise(y[fit], rate=0.3, random_state=0, scale=2.0)[0]
    path = gaga.age_path(X[fit], y_fit, model="lasso", regularizer="linear", alpha=0.01,
                        age_min=0.1, age_max=20.0)
    assert np.nanmax(path.kkt_residuals()) <= 1e-10
    leave = [e for e in path.events if e.indices == (len(fit) + 4,)]  # feature 4
    assert any(abs(e.param - 0.77796432) < 1e-6 for e in leave)
    t = [e.param for e in leave if abs(e.param - 0.77796432) < 1e-6][0]
    assert path.at(t, side="left").coef[4] == 0.0
    np.testing.assert_array_equal(path.at(t, side="left").coef, path.at(t, side="right").coef)


def test_compiled_pieces_trace_the_python_path(traced):
    """The compiled piece (age_kernel + core.dop853_kernel) finds the same events and
    breakpoints as the Python piece (scipy's DOP853 stepped from Python), to the integration
    tolerance, and the same path between them."""
    model, reg, X, y, path, case, span = traced
    ref = gaga.age_path(X, y, model=model, regularizer=reg, age_min=span[0], age_max=span[1],
                        compiled=False, **case)
    assert [e.kind for e in path.events] == [e.kind for e in ref.events]
    assert [e.indices for e in path.events] == [e.indices for e in ref.events]
    bp, bp_ref = np.array(path.breakpoints), np.array(ref.breakpoints)
    np.testing.assert_allclose(bp, bp_ref, rtol=1e-10, atol=0)  # (rtol of the integration)
    for age in np.linspace(span[0], span[1], 7)[1:-1]:
        np.testing.assert_allclose(path.at(age).coef, ref.at(age).coef, rtol=1e-9,
                                   atol=1e-11)


def test_paper_scale_diabetes_run_through_a_fold_region():
    """The full-data diabetes Lasso of the reproduction protocol, run 15: near age 2.6868 the
    path meets a cluster of folds. With LU Newton steps in the corrector the path jumped
    between two branches there without end (533 updates at one age); the least-squares step
    keeps to the branch and the path reaches age_max, certified."""
    from pathlib_core.gaga import protocol

    e = next(e for e in protocol.reproduction_experiments("full")
             if e["key"] == "lasso diabetes")
    r = protocol.one_run(e, 15, 0)
    assert r["max_res"] <= 1e-9
    assert r["jump"] + r["turning"] > 0
