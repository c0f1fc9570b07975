"""MOSPL (NSGA-III on the loss and SP-regularizer objectives): determinism, bad input, the
Pareto set against a brute-force dominance check and an independent recomputation of its
objectives, the selected model on a noiseless problem, and the protocol's splits."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from pathlib_core import datasets
from pathlib_core.gaga import (
    MOSPLResult,
    acs,
    losses,
    mospl_fit,
    mospl_objectives,
    mospl_paired,
    mospl_run,
    non_dominated,
    protocol,
    protocol_split,
    run_mospl_protocol,
    sp_regularizer,
    sp_weights,
    weighted_fit,
)

BUDGET = dict(pop_size=16, n_gen=15)


def _lasso_data(noise=0.3, seed=0):
    X, y = datasets.load("diabetes", standardize=True)
    X, y = X[:160, :5], y[:160] - y[:160].mean()
    y_noisy, _ = datasets.add_response_noise(y, rate=noise, random_state=seed, scale=2.0)
    return X[:120], y_noisy[:120], X[120:], y[120:]


def _logistic_data():
    X, y = datasets.load("breast_cancer", standardize=True)
    X, y = X[:200, :4], np.where(y[:200] > 0, 1.0, -1.0)
    y_noisy, _ = datasets.flip_labels(y[:150], rate=0.2, random_state=1)
    return X[:150], y_noisy, X[150:], y[150:]


def _dominates(a, b):
    return bool(np.all(a <= b) and np.any(a < b))


def test_same_random_state_same_result_and_global_generators_untouched():
    X, y, Xv, yv = _lasso_data()
    before = np.random.get_state()[1].copy()  # noqa: NPY002 (pymoo's global generator)
    a = mospl_fit(X, y, Xv, yv, model="lasso", alpha=0.01, random_state=7, **BUDGET)
    np.testing.assert_array_equal(np.random.get_state()[1], before)  # noqa: NPY002
    b = mospl_fit(X, y, Xv, yv, model="lasso", alpha=0.01, random_state=7, **BUDGET)
    c = mospl_fit(X, y, Xv, yv, model="lasso", alpha=0.01,
                  random_state=np.random.default_rng(7), **BUDGET)
    d = mospl_fit(X, y, Xv, yv, model="lasso", alpha=0.01, random_state=8, **BUDGET)
    assert isinstance(a, MOSPLResult) and a.success and a.nit == BUDGET["n_gen"]
    for k in ("pareto_coef", "pareto_age", "pareto_F", "coef"):
        np.testing.assert_array_equal(a[k], b[k])
    assert c.pareto_F.shape[1] == 2
    assert not np.array_equal(a.pareto_F, d.pareto_F)
    assert a.n_eval == BUDGET["pop_size"] * BUDGET["n_gen"]


@pytest.mark.parametrize("kw, match", [
    (dict(model="svm"), "model"),
    (dict(regularizer="mixture"), "regularizer"),
    (dict(regularizer="polynomial"), "order"),
    (dict(regularizer="polynomial", order=1.0), "order"),
    (dict(pop_size=3), "pop_size"),
    (dict(n_gen=0), "n_gen"),
    (dict(n_gen=2.5), "n_gen"),
    (dict(bound=0.0), "bound"),
    (dict(random_state=-1), "random_state"),
    (dict(random_state=1.5), "random_state"),
    (dict(random_state="a"), "random_state"),
    (dict(age_min=5.0, age_max=2.0), "age_min"),
    (dict(alpha=None), "alpha"),
    (dict(alpha=-1.0), "alpha"),
])
def test_bad_arguments_raise_value_error_naming_them(kw, match):
    X, y, Xv, yv = _lasso_data()
    args = dict(model="lasso", alpha=0.01, **BUDGET)
    args.update(kw)
    with pytest.raises((ValueError, NotImplementedError), match=match):
        mospl_fit(X, y, Xv, yv, **args)


def test_bad_data_raise_value_error():
    X, y, Xv, yv = _lasso_data()
    with pytest.raises(ValueError, match="X_val"):
        mospl_fit(X, y, Xv[:, :3], yv, model="lasso", alpha=0.01, **BUDGET)
    with pytest.raises(ValueError, match="y"):
        mospl_fit(X, y[:-1], Xv, yv, model="lasso", alpha=0.01, **BUDGET)
    Xc, yc, Xcv, ycv = _logistic_data()
    with pytest.raises(ValueError, match="y"):
        mospl_fit(Xc, yc * 3.0 + 1.0, Xcv, ycv, model="logistic", **BUDGET)


def test_protocol_runner_refuses_the_svm_and_bad_runs():
    svm = [e for e in protocol.reproduction_experiments("quick") if e["model"] == "svm"]
    with pytest.raises(ValueError, match="Lasso or logistic"):
        run_mospl_protocol(svm[:1], 1, 0, **BUDGET)
    with pytest.raises(ValueError, match="n_runs"):
        run_mospl_protocol([], 0, 0, **BUDGET)
    with pytest.raises(ValueError, match="model"):
        mospl_run(svm[0], 0, 0, **BUDGET)


@pytest.mark.parametrize("model, reg, order", [
    ("lasso", "linear", None), ("lasso", "hard", None), ("logistic", "linear", None),
    ("logistic", "polynomial", 1.35),
])
def test_pareto_set_is_non_dominated_and_its_objectives_recompute(model, reg, order):
    """Brute-force dominance over every pair, and (F1, F2) recomputed from the returned
    models with the part's own losses and weights (hard, linear) or the polynomial weights
    written out here."""
    X, y, Xv, yv = _lasso_data() if model == "lasso" else _logistic_data()
    kw = dict(alpha=0.01) if model == "lasso" else dict(C=1.0)
    res = mospl_fit(X, y, Xv, yv, model=model, regularizer=reg, order=order, age_min=1.0,
                    age_max=20.0, random_state=3, **BUDGET, **kw)
    F = res.pareto_F
    assert len(F) >= 2
    for i in range(len(F)):
        for j in range(len(F)):
            assert not _dominates(F[j], F[i]), (i, j)
    assert np.all(np.diff(res.pareto_age) >= 0)
    assert np.all((res.pareto_age >= 1.0) & (res.pareto_age <= 20.0))
    for k in range(len(F)):
        w, b, tau = res.pareto_coef[k], res.pareto_intercept[k], res.pareto_age[k]
        ell = losses(X, y, w, b, model=model, **kw)
        if reg == "polynomial":
            v = np.maximum(0.0, 1.0 - ell / tau) ** (1.0 / (order - 1.0))
            g = v ** order / order - v
        else:
            v = sp_weights(ell, tau, regularizer=reg)
            g = 0.5 * v ** 2 - v if reg == "linear" else -v
        pen = 0.01 * np.abs(w).sum() if model == "lasso" else 0.5 * w @ w
        np.testing.assert_allclose(F[k], [pen + v @ ell, g.sum()], rtol=1e-10, atol=1e-12)
    # the selected model is the Pareto member with the best validation score
    k = res.selected
    np.testing.assert_array_equal(res.coef, res.pareto_coef[k])
    best = np.min(res.val_score) if model == "lasso" else np.max(res.val_score)
    assert res.val_score[k] == best and res.age == res.pareto_age[k]


@settings(deadline=None, max_examples=60)
@given(arrays(np.float64, st.tuples(st.integers(1, 12), st.integers(1, 3)),
              elements=st.integers(-3, 3).map(float)))
def test_non_dominated_matches_brute_force(F):
    keep = non_dominated(F)
    rows = {tuple(r) for r in F}
    front = {r for r in rows if not any(_dominates(np.array(o), np.array(r)) for o in rows)}
    assert {tuple(F[i]) for i in keep} == front
    assert len(keep) == len(front)   # duplicated rows kept once


def test_noiseless_problem_selects_a_model_close_to_the_unweighted_fit():
    """Noiseless linear responses: the unweighted Lasso fit is the oracle; MOSPL (which starts
    from it) must select a model with as small a test error and nearly the same
    coefficients."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 4))
    w_true = np.array([2.0, -1.0, 0.5, 0.0])
    y = X @ w_true
    fit, val, te = slice(0, 120), slice(120, 160), slice(160, 200)
    res = mospl_fit(X[fit], y[fit], X[val], y[val], model="lasso", alpha=1e-3, pop_size=24,
                    n_gen=30, random_state=0)
    oracle = weighted_fit(X[fit], y[fit], np.ones(120), model="lasso", alpha=1e-3).coef

    def err(w):
        return np.mean((X[te] @ w - y[te]) ** 2) / np.var(y[te])

    assert err(res.coef) <= 1.5 * err(oracle) + 1e-6
    np.testing.assert_allclose(res.coef, oracle, atol=0.05 * np.abs(oracle).max())


def test_protocol_run_uses_the_protocols_split_and_noise():
    """``original_check`` (the unweighted fit on MOSPL's data) equals the protocol's
    ``original`` score of the same run: same data, split and corrupted responses."""
    e = protocol.reproduction_experiments("quick")[0]   # the Lasso on diabetes
    ours = mospl_run(e, 1, 0, **BUDGET)
    theirs = protocol.one_run(e, 1, 0)
    d = protocol_split(e, 1, 0)
    assert len(d["y_fit"]) == theirs["n_fit"]
    assert len(d["y_val"]) + len(d["y_test"]) + len(d["y_fit"]) == e["n"]
    assert ours["key"] == theirs["key"] and ours["run"] == 1
    np.testing.assert_allclose(ours["original_check"], theirs["original"], rtol=1e-6)
    assert np.isfinite(ours["mospl"]) and ours["n_eval"] == 16 * 15


def test_objectives_split_the_spl_objective_at_every_age():
    """F1 + age F2 is the SPL objective (2) with the linear regularizer at v = v*(l, age),
    evaluated here with the part's regularizer; and an ACS partial optimum placed in the
    objective space is not dominated by a model far from it at the same age."""
    X, y, _, _ = _logistic_data()
    r = acs(X, y, 3.0, model="logistic", regularizer="linear", C=1.0)
    for age in (1.5, 3.0, 7.0):
        F = mospl_objectives(X, y, r.coef, r.intercept, age, model="logistic", C=1.0)
        ell = losses(X, y, r.coef, r.intercept, model="logistic", C=1.0)
        v = sp_weights(ell, age, regularizer="linear")
        spl = 0.5 * r.coef @ r.coef + v @ ell + sp_regularizer(v, age,
                                                               regularizer="linear").sum()
        np.testing.assert_allclose(F[0] + age * F[1], spl, rtol=1e-12)
    F_acs = mospl_objectives(X, y, r.coef, r.intercept, 3.0, model="logistic", C=1.0)
    F_far = mospl_objectives(X, y, -r.coef, r.intercept, 3.0, model="logistic", C=1.0)
    assert F_acs[0] + 3.0 * F_acs[1] < F_far[0] + 3.0 * F_far[1]
    with pytest.raises(ValueError, match="coef"):
        mospl_objectives(X, y, r.coef[:2], 0.0, 1.0, model="logistic")
    with pytest.raises(ValueError, match="age"):
        mospl_objectives(X, y, r.coef, 0.0, 0.0, model="logistic")


def test_paired_comparison_against_mospl():
    e = dict(key="k", model="lasso")
    rows = [dict(key="k", gaga=0.5, acs=0.62, original=0.7, mospl=0.6 + 0.01 * k)
            for k in range(4)]
    out = mospl_paired(e, rows, "gaga")
    np.testing.assert_allclose(out["gain"], 0.115)
    assert out["outcome"] == "ahead" and out["wins"] == 4 and out["runs"] == 4
    assert mospl_paired(e, rows, "original")["outcome"] == "behind"
    assert mospl_paired(e, rows, "acs")["outcome"] == "tie"   # gain -0.005, se 0.0065
    with pytest.raises(ValueError, match="method"):
        mospl_paired(e, rows, "mospl")
    with pytest.raises(ValueError, match="two runs"):
        mospl_paired(e, rows[:1])
    with pytest.raises(ValueError, match="z"):
        mospl_paired(e, rows, z=0.0)
