"""The S3VM chapter's protocol helpers (pathlib_core.s3vm.protocol): structure only, no
timing assertions (timings live in benchmarks/)."""

import numpy as np
import pytest

from pathlib_core.s3vm import protocol as proto


def _data(seed=0, n=120, d=4):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1.0, -1.0)
    return X, y


def test_timing_study_rows_cover_every_setting():
    X, y = _data()
    rows = proto.timing_study(X, y, 0, C=10.0, steps=(1, 2), candidates=(1, 2), repeat=2)
    kinds = [(r["method"], r["k"]) for r in rows]
    assert kinds[:4] == [("annealing", 1), ("annealing", 2), ("CCCP", 1), ("CCCP", 2)]
    assert rows[-1]["method"] == "S3VM path" and rows[-1]["k"] >= 2  # breakpoints of the path
    assert all(isinstance(r["time"], float) and np.isfinite(r["time"]) for r in rows)


@pytest.mark.parametrize("bad", [0, -1])
def test_timing_study_rejects_a_non_positive_repeat(bad):
    X, y = _data()
    with pytest.raises(ValueError, match="repeat"):
        proto.timing_study(X, y, 0, steps=(1,), candidates=(1,), repeat=bad)


def test_timing_study_cpu_clock_gives_the_same_rows():
    X, y = _data()
    rows = proto.timing_study(X, y, 0, steps=(1,), candidates=(1,), repeat=1, clock="cpu")
    assert [r["method"] for r in rows] == ["annealing", "CCCP", "S3VM path"]
    assert all(isinstance(r["time"], float) and r["time"] >= 0 for r in rows)
    with pytest.raises(ValueError, match="clock"):
        proto.timing_study(X, y, 0, steps=(1,), candidates=(1,), clock="gpu")


def test_run_split_counts_path_failures_and_selects_on_the_other_cells(monkeypatch):
    from pathlib_core.core.exceptions import HomotopyError

    X, y = _data()
    clean = proto.run_split(X, y, 0, Cs=(1, 10))
    assert [r["method"] for r in clean] == ["SVM", "annealing", "CCCP", "S3VM path"]
    assert all(r["path_failures"] == 0 for r in clean)
    real = proto.s3vm_path

    def fails_at_10(K, y, *, C, **kw):
        if C == 10:
            raise HomotopyError("ill-conditioned (test)")
        return real(K, y, C=C, **kw)

    monkeypatch.setattr(proto, "s3vm_path", fails_at_10)
    rows = {r["method"]: r for r in proto.run_split(X, y, 0, Cs=(1, 10))}
    assert rows["S3VM path"]["path_failures"] == 1 and rows["S3VM path"]["C"] == 1
    assert np.isfinite(rows["S3VM path"]["test_err"])
    # the other methods are untouched by the path's failure
    for m in ("SVM", "annealing", "CCCP"):
        same = next(r for r in clean if r["method"] == m)
        assert rows[m]["test_err"] == same["test_err"] and rows[m]["path_failures"] == 0

    def always_fails(K, y, **kw):
        raise HomotopyError("ill-conditioned (test)")

    monkeypatch.setattr(proto, "s3vm_path", always_fails)
    rows = {r["method"]: r for r in proto.run_split(X, y, 0, Cs=(1, 10))}
    path = rows["S3VM path"]
    assert path["path_failures"] == 2 and np.isnan(path["test_err"]) and np.isnan(path["C"])
    assert np.isfinite(rows["SVM"]["test_err"])
