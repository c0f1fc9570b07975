"""The PDGDP reproduction protocol on tiny settings."""

import numpy as np
import pytest

from pathlib_core.pdgdp import protocol


def test_settings_of_the_modes():
    q, f = protocol.reproduction_settings("quick"), protocol.reproduction_settings("full")
    assert q == dict(n_train=400, n_steps=100, budget=30, n_inactive=205)
    assert f["n_train"] is None and f["budget"] == 186
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
