"""The MCM reproduction protocol on tiny settings: data sets, folds, tasks, checkpoints and the
numbers of the chapter's tables."""

import numpy as np
import pytest

from pathlib_core.mcm import protocol


def _tiny_data(n=24, seed=0):
    rng = np.random.default_rng(seed)
    out = {}
    for k, name in enumerate(["a", "b"]):
        y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
        X = rng.normal(size=(n, 2)) + (1.0 + k) * y[:, None]
        out[name] = (X, y, n)
    return out


def test_settings_of_the_modes():
    q, f = protocol.protocol_settings("quick"), protocol.protocol_settings("full")
    assert (q["outer"], q["inner"], q["n_max"], len(q["names"])) == (3, 0, 80, 12)
    assert (f["outer"], f["inner"], f["n_max"], len(f["names"])) == (5, 3, None, 16)
    assert protocol.learning_curve_settings("quick")["sizes"][0] == 25
    for fn in (protocol.protocol_settings, protocol.learning_curve_settings):
        with pytest.raises(ValueError, match="mode"):
            fn("medium")


def test_load_datasets_subsamples_by_class_and_is_seeded():
    a = protocol.load_datasets(["breast_cancer", "haberman"], n_max=40, random_state=0)
    b = protocol.load_datasets(["breast_cancer", "haberman"], n_max=40, random_state=0)
    for name, (X, y, n_full) in a.items():
        assert n_full > 40 and abs(len(y) - 40) <= 1 and set(np.unique(y)) == {-1.0, 1.0}
        np.testing.assert_array_equal(X, b[name][0])
    full = protocol.load_datasets(["glass"], n_max=None, random_state=0)["glass"]
    assert len(full[1]) == full[2]  # glass 1 vs 2, nothing dropped


@pytest.mark.parametrize("method", protocol.METHODS)
def test_make_method_gives_an_estimator_and_its_grid(method):
    est, grid = protocol.make_method(method, 4)
    assert grid and all(len(v) >= 2 for v in grid.values())
    est.set_params(**{k: v[0] for k, v in grid.items()})  # grid keys address the estimator
    with pytest.raises(ValueError, match="method"):
        protocol.make_method("LDA", 4)


def test_run_protocol_rows_summary_and_checkpoint(tmp_path):
    data = _tiny_data()
    kw = dict(outer=2, inner=0, seed=0, methods=("SVM", "MCM", "MCM-l1"),
              checkpoint=tmp_path, context={"mode": "test"})
    rows = protocol.run_protocol(data, **kw)
    assert len(rows) == 2 * 2 * 3
    assert [(r["name"], r["fold"], r["method"]) for r in rows[:3]] == [
        ("a", 0, "SVM"), ("a", 0, "MCM"), ("a", 0, "MCM-l1")]
    again = protocol.run_protocol(data, **kw)
    assert again == rows  # every task read back from the checkpoint (fit times included)
    runs, svfrac, warn = protocol.summarize(rows, methods=kw["methods"])
    assert set(runs) == {"a", "b"} and len(runs["a"]["MCM"]["h"]) == 2
    assert all(0.0 <= v <= 1.0 for rec in svfrac.values() for v in rec.values())
    counts = protocol.interpolation_counts(runs)
    h, q, interp = counts["a"]
    assert h.shape == q.shape == interp.shape == (2,) and np.all(h >= 1 - 1e-9)
    assert 0 <= protocol.wins(runs, "MCM-l1", "SVM") <= 2
    assert protocol.path_selection_counts(rows) is None  # fixed hyperparameters, no selection


def test_fit_family_selects_and_the_conformal_model_reuses_the_base_choice():
    data = _tiny_data(n=30)
    for family, members in protocol.FAMILIES.items():
        rows = protocol.fit_family(data, "b", 1, family, outer=2, inner=2, folds_seed=3)
        assert [r["method"] for r in rows] == list(members)
        for r in rows:
            assert r["ntr"] == 15 and 0.0 <= r["acc"] <= 1.0 and r["nsv"] >= 1
        if len(rows) == 2:
            base, conf = rows[0]["params"], rows[1]["params"]
            assert conf["D"] in protocol.D_GRID
            assert {k: conf[k] for k in base} == base  # C, gamma (and l1) of the base model
    mcm = protocol.fit_family(data, "b", 1, "MCM", outer=2, inner=2, folds_seed=3)
    sel = mcm[0]["selection"]
    assert sel["C"] == mcm[0]["params"]["C"] and sel["gamma"] == mcm[0]["params"]["gamma"]
    assert (sel["how"] == "grid") == (sel["interval"] is None)
    counts = protocol.path_selection_counts([dict(r, name="b") for r in mcm] * 2)
    assert counts == dict(folds=2, path=2 * int(sel["how"] == "path"),
                          fallback_widths=2 * sel["fallbacks"],
                          whole_range=2 * int(sel["interval"] == list(protocol.PATH_C)))
    only = protocol.fit_family(data, "b", 1, "SVM", outer=2, inner=2, folds_seed=3,
                               methods=("CSVM",))
    assert [r["method"] for r in only] == ["CSVM"]
    with pytest.raises(ValueError, match="family"):
        protocol.fit_family(data, "b", 1, "LDA", outer=2, inner=2, folds_seed=3)
    with pytest.raises(ValueError, match="methods"):
        protocol.run_protocol(data, outer=2, inner=0, seed=0, methods=("LDA",))


def _cv_error(X, y, C, gamma, folds):
    from sklearn.model_selection import cross_val_score
    from sklearn.preprocessing import StandardScaler

    from pathlib_core.mcm import MCMClassifier

    Z = StandardScaler().fit_transform(X)
    return 1.0 - np.mean(cross_val_score(MCMClassifier(C=C, gamma=gamma), Z, y, cv=folds))


@pytest.mark.parametrize("seed", [0, 1])
def test_path_selection_is_exact_and_no_worse_than_the_grid(seed):
    """The chosen C's error is what cross-validated fits at that C give, and the minimum over
    the continuum is no larger than the minimum over the former C grid."""
    from sklearn.model_selection import StratifiedKFold

    X, y = protocol.load_binary("heart")
    X, y = X[:90], y[:90]
    widths = [1.0 / X.shape[1], 4.0 / X.shape[1]]
    sel = protocol.select_mcm_by_path(X, y, widths, inner=3, seed=seed)
    assert sel["how"] == "path" and sel["fallbacks"] == 0 and sel["n_breakpoints"] >= 6
    lo, hi = sel["interval"]
    assert protocol.PATH_C[0] <= lo < sel["C"] < hi <= protocol.PATH_C[1]
    folds = list(StratifiedKFold(3, shuffle=True, random_state=seed).split(X, y))
    assert sel["error"] == pytest.approx(_cv_error(X, y, sel["C"], sel["gamma"], folds),
                                         abs=1e-12)
    grid = protocol.make_method("MCM", X.shape[1])[1]["mcmclassifier__C"]
    best_grid = min(_cv_error(X, y, C, g, folds) for C in grid for g in widths)
    assert sel["error"] <= best_grid + 1e-12


def test_path_selection_falls_back_to_the_grid(monkeypatch):
    X, y = protocol.load_binary("housevotes")
    X, y = X[:60], y[:60]
    monkeypatch.setattr(protocol, "PATH_GAP_TOL", -1.0)  # no path is trusted
    sel = protocol.select_mcm_by_path(X, y, [1.0 / X.shape[1]], inner=3, seed=0)
    assert sel["how"] == "grid" and sel["fallbacks"] == 1 and sel["interval"] is None
    assert sel["C"] in protocol.make_method("MCM", X.shape[1])[1]["mcmclassifier__C"]


def test_nested_prefix_sets_grow_and_are_stratified():
    y = np.r_[np.ones(30), -np.ones(20)]
    r = np.random.default_rng(0)
    perms = {cl: r.permutation(np.flatnonzero(y == cl)) for cl in (-1.0, 1.0)}
    small, large = protocol.nested_prefix(y, 10, perms), protocol.nested_prefix(y, 20, perms)
    assert set(small) <= set(large) and len(small) == 10 and len(large) == 20
    assert np.sum(y[large] > 0) == 12


def test_learning_curves_tiny():
    acc, _ = protocol.learning_curves(["haberman"], [10, 20], 2, seed=0,
                                      methods=("SVM", "CSVM"))
    assert acc["haberman"]["SVM"].shape == (2, 2)
    assert np.all((acc["haberman"]["CSVM"] >= 0) & (acc["haberman"]["CSVM"] <= 1))


def test_gain_shrink_rule():
    shrinking = np.array([[0.10, 0.0], [0.12, 0.01], [0.09, -0.01], [0.11, 0.0]])
    v = protocol.gain_shrink(shrinking)
    assert v["shrinks"] and v["shrink"] == pytest.approx(0.105)
    assert not protocol.gain_shrink(-shrinking)["shrinks"]  # a negative gain does not shrink
    noisy = np.array([[0.1, 0.0], [-0.1, 0.0], [0.12, 0.2]])
    assert not protocol.gain_shrink(noisy)["shrinks"]


def test_path_selection_on_a_low_rank_kernel_ranks_failed_fits_last():
    """tae (duplicated points, 5 features): the plain LP's paths are not certified and one
    grid fit fails in HiGHS; the failure must rank last (as in GridSearchCV), not win as nan."""
    from sklearn.model_selection import StratifiedKFold

    X, y = protocol.load_binary("tae")
    tr, _ = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    from sklearn.preprocessing import StandardScaler

    d = X.shape[1]
    widths = [0.5 / d, 1.0 / d, 2.0 / d]
    sel = protocol.select_mcm_by_path(X[tr], y[tr], widths, inner=5, seed=0)
    assert sel["how"] == "grid" and np.isfinite(sel["error"]) and 0 <= sel["error"] < 0.5
    # the failure did happen on these folds: some grid fit scores nan
    Z = StandardScaler().fit_transform(X[tr])
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(Z, y[tr]))
    Cs = protocol.make_method("MCM", d)[1]["mcmclassifier__C"]
    acc, _, _ = protocol._grid_accuracies(Z, y[tr], folds, {"C": Cs, "gamma": widths,
                                                            "l1": [0.0]}, standardize=False)
    assert any(np.isnan(a).any() for a in acc.values())


@pytest.mark.parametrize("name", ["heart", "tic-tac-toe"])
def test_mcm_l1_selection_is_that_of_grid_search(name):
    """select_mcm_l1 scores every setting as GridSearchCV does (the same mean accuracies,
    hence the same choice), while reusing slack-free solutions along C."""
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    X, y = protocol.load_binary(name)
    keep = np.random.default_rng(0).permutation(len(y))[:120]
    X, y = X[keep], y[keep]
    est, grid = protocol.make_method("MCM-l1", X.shape[1])
    cv = StratifiedKFold(3, shuffle=True, random_state=0)
    sel = protocol.select_mcm_l1(X, y, grid, cv)
    gs = GridSearchCV(est, grid, cv=cv).fit(X, y)
    assert [{k.split("__")[-1]: v for k, v in p.items()} for p in gs.cv_results_["params"]] \
        == sel["settings"]
    np.testing.assert_allclose(sel["mean_scores"], gs.cv_results_["mean_test_score"],
                               rtol=0, atol=1e-12)
    assert sel["params"] == {k.split("__")[-1]: v for k, v in gs.best_params_.items()}
    assert sel["n_solved"] + sel["n_reused"] == 3 * len(sel["settings"])
    if name == "tic-tac-toe":  # a near-separable set: some larger C are taken without a solve
        assert sel["n_reused"] > 0


def test_mcm_l1_selection_ranks_failed_fits_last(monkeypatch):
    from pathlib_core.core.exceptions import SolverError
    from pathlib_core.mcm import lp

    X, y = protocol.load_binary("heart")
    X, y = X[:60], y[:60]
    grid = {"C": [0.1, 1.0], "gamma": [0.1], "l1": [1e-3, 1e-1]}
    real = lp.fit_mcm

    def failing(K, y, *, C, l1):
        if l1 == 1e-3:
            raise SolverError("simulated failure")
        return real(K, y, C=C, l1=l1)

    monkeypatch.setattr(lp, "fit_mcm", failing)
    sel = protocol.select_mcm_l1(X, y, grid, [(np.arange(30), np.arange(30, 60))])
    assert sel["params"]["l1"] == 1e-1
    assert np.isnan(sel["mean_scores"][[s["l1"] == 1e-3 for s in sel["settings"]]]).all()
    monkeypatch.setattr(lp, "fit_mcm", lambda *a, **k: (_ for _ in ()).throw(SolverError("x")))
    with pytest.raises(SolverError, match="every MCM-l1 fit"):
        protocol.select_mcm_l1(X, y, grid, [(np.arange(30), np.arange(30, 60))])
    with pytest.raises(ValueError, match="grid"):
        protocol.select_mcm_l1(X, y, {"C": [1.0]}, [(np.arange(30), np.arange(30, 60))])
