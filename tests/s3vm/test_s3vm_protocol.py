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
