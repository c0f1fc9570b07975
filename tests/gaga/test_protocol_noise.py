"""Figure 4's protocol: one experiment at several noise ratios, GAGA against the other
methods run by run (paired over splits), the verdict's three zones, and failed runs."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from pathlib_core.core.exceptions import PathFollowingError
from pathlib_core.gaga import protocol

LASSO = protocol.experiment("lasso diabetes", "lasso", "diabetes", "diabetes", n=(60, None),
                            alpha=0.01)


def _rows(key, gaga, original, acs):
    return [dict(key=key, run=k, gaga=g, original=o, acs=a)
            for k, (g, o, a) in enumerate(zip(gaga, original, acs, strict=True))]


def test_noise_experiments_copy_one_experiment():
    es = protocol.noise_experiments(LASSO, (0.1, 0.2, 0.3))
    assert [e["key"] for e in es] == [f"lasso diabetes, {p}% noise" for p in (10, 20, 30)]
    assert [e["noise"] for e in es] == [0.1, 0.2, 0.3]
    for e in es:
        assert {k: v for k, v in e.items() if k not in ("key", "noise")} == \
            {k: v for k, v in LASSO.items() if k not in ("key", "noise")}
    for bad in ((), (0.1, 1.0), (-0.1,), (0.2, 0.1), (0.1, 0.1)):
        with pytest.raises(ValueError, match="ratios"):
            protocol.noise_experiments(LASSO, bad)


@settings(deadline=None, max_examples=40)
@given(st.lists(st.tuples(st.floats(0.0, 1.0), st.floats(0.0, 1.0)), min_size=2,
                max_size=12),
       st.sampled_from(["lasso", "logistic", "svm"]))
def test_paired_comparison_is_the_paired_t_statistic(pairs, model):
    gaga, base = map(np.array, zip(*pairs, strict=True))
    e = dict(key="k", model=model)
    c = protocol.paired_comparison(e, _rows("k", gaga, base, base), "original")
    # oracle: scipy's paired t test, oriented so that positive means GAGA better
    a, b = (base, gaga) if model == "lasso" else (gaga, base)
    assert c["gain"] == pytest.approx(np.mean(a - b), abs=1e-12)
    assert c["runs"] == len(pairs) and c["failed"] == 0
    assert c["wins"] == np.sum(a > b) and c["losses"] == np.sum(a < b)
    if c["se"] > 1e-9:
        assert c["gain"] / c["se"] == pytest.approx(stats.ttest_rel(a, b).statistic,
                                                    rel=1e-6, abs=1e-9)
        t = c["gain"] / c["se"]
        assert c["outcome"] == ("ahead" if t > 2 else "behind" if t < -2 else "tie")


def test_paired_comparison_rejects_bad_input():
    rows = _rows("k", [0.5, 0.6], [0.5, 0.7], [0.5, 0.6])
    e = dict(key="k", model="lasso")
    with pytest.raises(ValueError, match="baseline"):
        protocol.paired_comparison(e, rows, "mospl")
    with pytest.raises(ValueError, match="z"):
        protocol.paired_comparison(e, rows, "acs", z=0.0)
    with pytest.raises(ValueError, match="rows"):
        protocol.paired_comparison(e, rows[:1], "acs")
    failed = rows[:1] + [dict(key="k", run=1, failed="PathFollowingError: gave up")]
    with pytest.raises(ValueError, match="finished runs"):
        protocol.paired_comparison(e, failed, "acs")


def test_robustness_verdict_has_three_zones_judged_at_the_highest_noise():
    es = protocol.noise_experiments(LASSO, (0.1, 0.3))
    low, high = (e["key"] for e in es)
    rng = np.random.default_rng(0)
    base = 0.6 + 0.05 * rng.standard_normal(10)
    jitter = 0.002 * rng.standard_normal(10)
    # at 10% GAGA is clearly worse: not judged; at 30% GAGA is clearly better than both
    rows = _rows(low, base + 0.05, base, base) + \
        _rows(high, base - 0.03 + jitter, base, base + 0.01)
    verdict, comps = protocol.robustness_verdict(es, rows)
    assert verdict == "matches"
    assert comps[low]["original"]["outcome"] == "behind"
    assert comps[high]["acs"]["outcome"] == "ahead"
    # behind ACS by far more than the spread at 30%: contradicted
    rows = _rows(low, base, base, base) + _rows(high, base + 0.03 + jitter, base + 0.1, base)
    assert protocol.robustness_verdict(es, rows)[0] == "contradicted"
    # equal to ACS in every run (a gain of exactly zero) and ahead of the original: differs
    rows = _rows(low, base, base, base) + _rows(high, base, base + 0.1 + jitter, base)
    verdict, comps = protocol.robustness_verdict(es, rows)
    assert verdict == "differs" and comps[high]["acs"]["outcome"] == "tie"
    with pytest.raises(ValueError, match="experiments"):
        protocol.robustness_verdict([], rows)


def test_run_protocol_records_a_path_that_gives_up(monkeypatch):
    e = dict(LASSO, n=50)
    real = protocol.one_run

    def flaky(exp, run, seed):
        if run == 1:
            raise PathFollowingError("the integrator failed on the piece starting at 1.2")
        return real(exp, run, seed)

    monkeypatch.setattr(protocol, "one_run", flaky)
    rows = protocol.run_protocol([e], 3, 0, on_error="record")
    assert [r["run"] for r in rows] == [0, 1, 2]
    assert rows[1] == dict(key=e["key"], run=1,
                           failed="PathFollowingError: the integrator failed on the piece "
                                  "starting at 1.2")
    assert "failed" not in rows[0] and isinstance(rows[0]["curve"][0], np.ndarray)
    c = protocol.paired_comparison(e, rows, "acs")
    assert c["runs"] == 2 and c["failed"] == 1
    with pytest.raises(PathFollowingError, match="integrator"):
        protocol.run_protocol([e], 3, 0)
    with pytest.raises(ValueError, match="on_error"):
        protocol.run_protocol([e], 3, 0, on_error="ignore")
