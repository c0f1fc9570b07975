"""The PDGDP reproduction protocol on tiny settings."""

import numpy as np
import pytest

from pathlib_core.pdgdp import protocol


def test_settings_of_the_modes():
    q, f = protocol.reproduction_settings("quick"), protocol.reproduction_settings("full")
    assert q == dict(n_train=400, n_steps=100, budget=30, n_inactive=205, repeat=3)
    assert f["n_train"] is None and f["budget"] == 186 and f["repeat"] >= 1
    with pytest.raises(ValueError, match="mode"):
        protocol.reproduction_settings("medium")


def test_yeast_training_comparison_tiny():
    d = protocol.load_yeast(n_train=60, random_state=0)
    X, y, tr, te = d["X"], d["y"], d["train"], d["test"]
    assert len(tr) == 60 and not set(tr) & set(te) and set(np.unique(y)) == {-1.0, 1.0}
    np.testing.assert_allclose(X[tr].mean(axis=0), 0.0, atol=0.3)  # training statistics
    np.testing.assert_array_equal(tr, protocol.load_yeast(n_train=60, random_state=0)["train"])
    runs = protocol.compare_training(X[tr], y[tr], n_states=2, n_steps=5, random_state=0,
                                     methods=("pdgdp", "ao"))
    assert set(runs) == {"pdgdp", "ao"}
    # one common start: both histories begin at the same model
    assert runs["pdgdp"].objective_history[0] == pytest.approx(runs["ao"].objective_history[0])
    assert runs["pdgdp"].n_iter <= 5


def test_hiva_selection_comparison_tiny():
    d = protocol.load_hiva(n_inactive=40, n_features=12, random_state=0)
    n = len(d["y"])
    assert d["X"].shape == (n, 12) and np.sum(d["y"] > 0) == n - 40
    idx = np.concatenate([d["train"], d["val"], d["test"]])
    assert np.array_equal(np.sort(idx), np.arange(n))
    sel = protocol.compare_selection(d, budget=4, max_iter=4, random_state=0,
                                     methods=("pdgdp", "random"))
    assert all(1 <= s.n_qp_solves <= 4 and np.isfinite(s.val_cost) for s in sel.values())


def _tiny_yeast(n_train=60):
    d = protocol.load_yeast(n_train=n_train, random_state=0)
    return d["X"][d["train"]], d["y"][d["train"]], d["X"][d["test"]], d["y"][d["test"]]


def test_time_training_repeats_the_same_computation():
    X, y, _, _ = _tiny_yeast()
    out = protocol.time_training(X, y, n_states=2, n_steps=4, random_state=0, repeat=2,
                                 methods=("pdgdp", "ao"))
    assert set(out) == {"runs", "wall", "cpu"}
    for key in ("wall", "cpu"):
        assert set(out[key]) == {"pdgdp", "ao"}
        assert all(v.shape == (2,) and np.all(v >= 0) for v in out[key].values())
    # the runs are those of compare_training (same start, same models)
    ref = protocol.compare_training(X, y, n_states=2, n_steps=4, random_state=0,
                                    methods=("pdgdp", "ao"))
    for m in ("pdgdp", "ao"):
        assert out["runs"][m].n_iter == ref[m].n_iter
        np.testing.assert_allclose(out["runs"][m].weights, ref[m].weights, rtol=1e-9,
                                   atol=1e-12)
        assert out["wall"][m][-1] == out["runs"][m].time


@pytest.mark.parametrize("repeat", [0, -1, 1.5, True, "2"])
def test_time_training_rejects_bad_repeat(repeat):
    X, y, _, _ = _tiny_yeast(30)
    with pytest.raises(ValueError, match="repeat"):
        protocol.time_training(X, y, n_states=2, n_steps=2, random_state=0, repeat=repeat,
                               methods=("ao",))


def test_step_costs_rerun_the_same_iterates():
    from pathlib_core.pdgdp import train_latent_svm

    X, y, _, _ = _tiny_yeast()
    r = train_latent_svm(X, y, n_states=3, max_iter=12, random_state=0)
    assert r.n_iter >= 4
    out = protocol.pdgdp_step_costs(X, y, r, n_steps=3, repeat=1)
    assert out["n_steps"] == 3
    assert out["cached"] >= 0 and out["resolved"] >= 0
    # without the cache every step solves the dual of each of the 3 components
    assert out["qp_resolved"] == 3 * 3
    assert 0 <= out["qp_cached"] <= out["qp_resolved"]
    # the reruns follow the run's iterates: same start and step give the same first steps
    again = train_latent_svm(X, y, n_states=3, theta0=r.theta_history[0], step=r.step,
                             max_iter=4, use_regions=False)
    np.testing.assert_allclose(again.objective_history, r.objective_history[:5], rtol=1e-9)
    # more steps than the run has: capped
    assert protocol.pdgdp_step_costs(X, y, r, n_steps=1000, repeat=1)["n_steps"] == r.n_iter - 1


def test_step_costs_reject_bad_input():
    from pathlib_core.pdgdp import train_latent_svm

    X, y, _, _ = _tiny_yeast()
    ao = train_latent_svm(X, y, n_states=2, method="ao", random_state=0)
    with pytest.raises(ValueError, match="PDGDP"):
        protocol.pdgdp_step_costs(X, y, ao)
    r = train_latent_svm(X, y, n_states=3, max_iter=12, random_state=0)
    assert r.n_iter >= 2
    with pytest.raises(ValueError, match="n_steps"):
        protocol.pdgdp_step_costs(X, y, r, n_steps=0)
    with pytest.raises(ValueError, match="repeat"):
        protocol.pdgdp_step_costs(X, y, r, repeat=True)
    untracked = train_latent_svm(X, y, n_states=3, max_iter=12, random_state=0,
                                 record_theta=False)
    with pytest.raises(ValueError, match="theta_history"):
        protocol.pdgdp_step_costs(X, y, untracked)


def _fake_run(J_theta, J_model, acc):
    """A stand-in PDGDP result with given histories (accuracy_history returns ``acc``)."""
    class Run:
        method = "pdgdp"
        theta_objective_history = np.asarray(J_theta, dtype=float)
        objective_history = np.asarray(J_model, dtype=float)

        def accuracy_history(self, X, y):
            return np.asarray(acc, dtype=float)

    return Run()


def test_trajectory_summary_on_known_curves():
    n = 20
    line = 1.0 - 0.01 * np.arange(n + 1)  # a straight line: the last tenth makes 10%
    wiggle = line.copy()
    wiggle[[5, 9, 13]] += 0.02  # three rises (and the falls after them)
    acc = np.linspace(0.80, 0.85, n + 1)
    s = protocol.trajectory_summary(_fake_run(line, wiggle, acc), None, None)
    assert s["n_steps"] == n
    assert s["theta_rises"] == 0 and s["model_rises"] == 3
    assert s["rank_corr"] == pytest.approx(-1.0)
    assert s["tail_share"] == pytest.approx(0.1)
    assert s["theta_start"] == 1.0 and s["theta_end"] == pytest.approx(0.8)
    assert s["accuracy_start"] == 0.80 and s["accuracy_end"] == pytest.approx(0.85)
    assert s["accuracy_corr"] < -0.8  # accuracy rises as the objective falls
    # a curve that has levelled off: the last tenth makes nothing
    flat_end = np.r_[1.0 - 0.05 * np.arange(11), np.full(10, 0.5)]
    s2 = protocol.trajectory_summary(_fake_run(flat_end, flat_end, np.full(n + 1, 0.8)),
                                     None, None)
    assert s2["tail_share"] == pytest.approx(0.0)
    assert np.isnan(s2["accuracy_corr"])  # constant accuracy: no correlation
    # an increasing objective has a positive rank correlation
    s3 = protocol.trajectory_summary(_fake_run(line[::-1], line[::-1], acc), None, None)
    assert s3["rank_corr"] == pytest.approx(1.0) and s3["theta_rises"] == n
    assert np.isnan(s3["tail_share"])  # no decrease to share


def test_trajectory_summary_of_a_real_run_and_bad_input():
    from pathlib_core.pdgdp import train_latent_svm

    X, y, Xt, yt = _tiny_yeast()
    r = train_latent_svm(X, y, n_states=3, max_iter=10, random_state=0)
    s = protocol.trajectory_summary(r, Xt, yt)
    assert s["n_steps"] == r.n_iter
    assert s["theta_start"] == r.theta_objective_history[0]
    assert s["accuracy_end"] == pytest.approx(np.mean(r.predict(Xt) == yt))
    with pytest.raises(ValueError, match="tail"):
        protocol.trajectory_summary(r, Xt, yt, tail=1.0)
    ao = train_latent_svm(X, y, n_states=2, method="ao", random_state=0)
    with pytest.raises(ValueError, match="PDGDP"):
        protocol.trajectory_summary(ao, Xt, yt)
