"""The reproduction protocol on tiny settings: splits, runs, tables and verdicts."""

from __future__ import annotations

import numpy as np
import pytest

from pathlib_core.gaga import protocol


def _tiny(model, **kw):
    args = dict(lasso=("lasso diabetes", "lasso", "diabetes", "diabetes", dict(alpha=0.01)),
                logistic=("logistic bc", "logistic", "breast_cancer", "control",
                          dict(C=1.0)),
                svm=("svm bc", "svm", "breast_cancer", "control",
                     dict(C=1.0, kernel_gamma=1.0)))[model]
    key, m, data, stands_for, params = args
    return protocol.experiment(key, m, data, stands_for, n=(kw.pop("n", 60), None),
                               **kw, **params)


def test_experiments_of_the_chapter():
    quick, full = (protocol.reproduction_experiments(m) for m in protocol.MODES)
    assert len(quick) == len(full) == 12
    assert [e["key"] for e in quick] == [e["key"] for e in full]
    assert all(e["n"] in (None, 300, 160, 120) for e in quick)
    assert {e["model"] for e in quick} == {"lasso", "logistic", "svm"}
    # the kernel SVM of Table 2 on every stand-in, with one protocol (C = 1, width 1/d)
    svm = {e["data"]: (e, f) for e, f in zip(quick, full, strict=True) if e["model"] == "svm"}
    assert set(svm) == {"breast_cancer", "hiva", "digits", "penbased"}
    assert all(e["params"] == dict(C=1.0, kernel_gamma=1.0) and e["noise"] == 0.3
               and e["reg"] == "linear" for e, _ in svm.values())
    assert [svm[d][0]["stands_for"].split()[0] for d in ("digits", "penbased")] == \
        ["mfeat-pixel", "pendigits"]
    assert [(svm[d][0]["n"], svm[d][1]["n"]) for d in ("digits", "penbased")] == \
        [(120, 140), (120, 140)]
    mixture = [e for e in quick if e["reg"] == "mixture"]
    assert mixture and all(e["mixture"] == 0.5 for e in mixture)
    with pytest.raises(ValueError, match="mode"):
        protocol.reproduction_experiments("fast")


def test_split_is_a_partition_of_quarters():
    fit, val, te = protocol.split(100, run=1, seed=0)
    assert len(te) == 25 and len(val) == 18 and len(fit) == 57
    assert np.array_equal(np.sort(np.r_[fit, val, te]), np.arange(100))
    again = protocol.split(100, run=1, seed=0)
    assert all(np.array_equal(a, b) for a, b in zip((fit, val, te), again, strict=True))


def test_load_data_binarizes_and_centres():
    X, y = protocol.load_data(_tiny("lasso"), run=0, seed=0)
    assert X.shape == (60, 10) and abs(y.mean()) < 0.2 * np.std(y)
    X, y = protocol.load_data(_tiny("logistic"), run=0, seed=0)
    assert X.shape == (60, 10) and set(np.unique(y)) <= {-1.0, 1.0}
    for e in protocol.reproduction_experiments("quick")[-2:]:  # the SVM digit sets
        X, y = protocol.load_data(e, run=0, seed=0)
        assert X.shape == (120, {"digits": 64, "penbased": 16}[e["data"]])
        assert set(np.unique(y)) == {-1.0, 1.0}
        assert np.allclose(X.mean(axis=0), 0.0, atol=0.5)   # standardized before subsampling


@pytest.mark.parametrize("model", ["lasso", "logistic", "svm"])
def test_one_run_and_the_tables(model):
    e = _tiny(model, n=60 if model != "svm" else 48, age_min=2.5 if model == "svm" else None)
    rows = [protocol.one_run(e, run, seed=0) for run in range(2)]
    for r in rows:
        assert r["max_res"] <= 1e-9 and r["acs_not_converged"] == 0
        lo, hi = (0.0, np.inf) if model == "lasso" else (0.0, 1.0)
        assert all(lo <= r[k] <= hi for k in ("original", "acs", "gaga"))
        cand, val_g, grid, val_a = r["curve"]
        assert grid[0] == r["age_min"] and grid[-1] == protocol.AGE_MAX
        assert np.allclose(np.diff(grid[:-1]), protocol.ACS_STEP)
        assert cand[0] == r["age_min"] and cand[-1] == protocol.AGE_MAX
        assert r["age_gaga"] in cand and r["age_acs"] in grid
    table, table_rows, best = protocol.summarize([e], rows)
    s = table[e["key"]]
    assert s["gaga"][0] == np.mean([r["gaga"] for r in rows])
    assert table_rows[0]["runs"] == 2 and table_rows[0]["gaga_sd"] == s["gaga"][1]
    assert best[e["key"]] in ("original", "acs", "gaga")
    assert protocol.verdict(e, table)[0] in ("matches", "differs")


def test_verdict_needs_a_margin_beyond_the_spread():
    e = dict(key="k", model="logistic")
    table = {"k": {"original": (0.80, 0.01), "acs": (0.85, 0.01), "gaga": (0.90, 0.01)}}
    assert protocol.verdict(e, table)[0] == "matches"
    table["k"]["gaga"] = (0.855, 0.02)
    assert protocol.verdict(e, table) == ("differs", "within the spread (no clear winner)")
    lasso = dict(key="k", model="lasso")  # an error: lower is better
    table["k"] = {"original": (0.8, 0.01), "acs": (0.7, 0.01), "gaga": (0.5, 0.01)}
    assert protocol.verdict(lasso, table)[0] == "matches"


def test_timed_returns_both_times():
    t_gaga, t_acs, n_bp = protocol.timed(_tiny("lasso"), 60, 4.0, seed=0)
    assert t_gaga > 0 and t_acs > 0 and n_bp >= 2


def test_run_protocol_gives_one_runs_rows_with_workers_and_checkpoint(tmp_path):
    es = [_tiny("lasso", n=50), _tiny("logistic", n=50)]
    direct = [protocol.one_run(e, run, seed=3) for e in es for run in range(2)]
    timing = ("t_gaga", "t_acs")

    def same(a, b):
        assert [r["key"] for r in a] == [r["key"] for r in b]
        for r, s in zip(a, b, strict=True):
            assert {k: v for k, v in r.items() if k not in timing + ("curve",)} == \
                {k: v for k, v in s.items() if k not in timing + ("curve",)}
            for c, d in zip(r["curve"], s["curve"], strict=True):
                assert np.array_equal(np.asarray(c), np.asarray(d))

    same(protocol.run_protocol(es, 2, 3), direct)
    kept = protocol.run_protocol(es, 2, 3, n_jobs=2, checkpoint=tmp_path)
    same(kept, direct)
    assert len(list(tmp_path.glob("run-*.json"))) == 4
    again = protocol.run_protocol(es, 2, 3, checkpoint=tmp_path)  # read back, not recomputed
    assert [r["t_gaga"] for r in again] == [r["t_gaga"] for r in kept]
    assert all(isinstance(c, np.ndarray) for r in again for c in r["curve"])
    with pytest.raises(ValueError, match="n_runs"):
        protocol.run_protocol(es, 0, 3)
    with pytest.raises(ValueError, match="distinct keys"):
        protocol.run_protocol([es[0], es[0]], 1, 3)
