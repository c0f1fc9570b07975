"""fit_mcm's sparse reformulations (margin form, null-space form) against HiGHS on the dense
LP of ``_lp_matrices`` (the form fit_mcm solved before): same optimum, same certificates."""

import numpy as np
import pytest
from scipy.optimize import linprog

from pathlib_core import datasets
from pathlib_core.core.kernels import linear_kernel, rbf_kernel
from pathlib_core.mcm import fit_mcm
from pathlib_core.mcm.lp import _lp_matrices


def _dense_value(A, y, C, l1):
    lp = _lp_matrices(A, y, C=C, l1=l1, split=l1 > 0)
    res = linprog(lp["c"], A_ub=lp["G"], b_ub=lp["h"],
                  bounds=[(v if np.isfinite(v) else None, None) for v in lp["lb"]],
                  method="highs")
    assert res.status == 0
    return res.fun


@pytest.mark.parametrize("kind, gamma, l1", [
    ("rbf", 3.0, 0.0),     # full numerical rank: null-space form without equalities
    ("rbf", 0.3, 0.0),     # rank > n/2 but < n: margin form on the range
    ("haberman", None, 0.0),  # real data with duplicates, rank in (n/2, n): margin form
    ("linear", None, 0.0),  # rank 2: margin form on the range
    ("rbf", 0.3, 0.05),    # l1 > 0: margin form on K
])
def test_sparse_form_matches_dense_lp(kind, gamma, l1):
    rng = np.random.default_rng(5)
    n = 60
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    X = rng.normal(size=(n, 2)) + 0.8 * y[:, None]
    if kind == "haberman":  # a projected null-space solve was 6e-7 off here (KKT 1.5e-6)
        X, y = datasets.load("haberman", standardize=True)
        X, y, n = X[:200], y[:200], 200
        gamma = 1.0 / 3
    K = linear_kernel(X) if kind == "linear" else rbf_kernel(X, gamma=gamma)
    r = fit_mcm(K, y, C=0.7, l1=l1)
    if kind == "haberman":
        assert n / 2 < r.rank < n
    A = r.lp["A"]
    if kind == "rbf" and gamma == 0.3 and l1 == 0:
        assert n / 2 < r.rank < n
    ref = _dense_value(A, y, 0.7, l1)
    assert abs(r.objective - ref) <= 1e-7 * max(1.0, abs(ref))
    assert r.kkt.max <= 1e-8
    # multipliers of (31)-(32) mapped back to the dense LP: dual feasibility rows
    assert abs(r.dual_upper.sum() - 1) <= 1e-8
    assert abs(y @ (r.dual_upper - r.dual_lower)) <= 1e-8
