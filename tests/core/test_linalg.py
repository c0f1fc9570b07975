"""The bordered-inverse primitive of core.linalg against dense inverses."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pathlib_core.core.linalg import (
    border_add,
    border_append,
    border_drop,
    border_remove,
    load_block,
    schur_complement,
)


def _spd(rng, n):
    A = rng.normal(size=(n, n))
    return A @ A.T + n * np.eye(n)


def _kkt(rng, n, m):
    """A symmetric indefinite KKT matrix [[H, A'], [A, 0]] of full rank."""
    H = _spd(rng, n)
    A = rng.normal(size=(m, n))
    return np.block([[H, A.T], [A, np.zeros((m, m))]])


def _rel(A, B):
    return float(np.max(np.abs(A - B)) / np.max(np.abs(B)))


@given(n=st.integers(1, 8), seed=st.integers(0, 2**31 - 1))
@settings(max_examples=40, deadline=None)
def test_border_add_then_remove_matches_dense_inverse(n, seed):
    rng = np.random.default_rng(seed)
    M = _spd(rng, n + 1)
    inv = np.linalg.inv(M[:n, :n])
    new, s = border_add(inv, M[:n, n].copy(), float(M[n, n]), 1e-12)
    assert s > 0 and new.shape == (n + 1, n + 1)
    assert _rel(new, np.linalg.inv(M)) <= 1e-10
    for pos in range(n + 1):
        keep = [r for r in range(n + 1) if r != pos]
        if pos != n:  # the last index takes pos's place
            keep = [n if r == pos else r for r in range(n)]
        down = border_remove(new, pos)
        assert _rel(down, np.linalg.inv(M[np.ix_(keep, keep)])) <= 1e-9


def test_border_add_refuses_a_dependent_column():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(10, 3))
    X = np.c_[X, X[:, 0] + X[:, 1]]  # the new column is in the span of the others
    G = X.T @ X
    new, s = border_add(np.linalg.inv(G[:3, :3]), G[:3, 3].copy(), float(G[3, 3]), 1e-10)
    assert new.size == 0 and abs(s) <= 1e-10 * G[3, 3]


@pytest.mark.parametrize("seed", range(6))
def test_signed_border_add_on_an_indefinite_matrix(seed):
    rng = np.random.default_rng(seed)
    K = _kkt(rng, 4, 2)  # the last index is a constraint row: zero diagonal, s < 0
    k = K.shape[0] - 1
    inv = np.linalg.inv(K[:k, :k])
    s, _ = schur_complement(inv, K[:k, k].copy(), float(K[k, k]))
    assert s < 0
    refused, _ = border_add(inv, K[:k, k].copy(), float(K[k, k]), 0.0)
    assert refused.size == 0  # the default asks for a positive definite block
    new, s2 = border_add(inv, K[:k, k].copy(), float(K[k, k]), 0.0, True)
    assert s2 == s and _rel(new, np.linalg.inv(K)) <= 1e-10


def test_signed_border_add_refuses_zero_and_nonfinite():
    inv = np.eye(2)
    new, s = border_add(inv, np.array([1.0, 0.0]), 1.0, 0.0, True)  # s = 0: singular
    assert new.size == 0 and s == 0.0
    new, s = border_add(inv, np.array([np.nan, 0.0]), 1.0, 0.0, True)
    assert new.size == 0 and np.isnan(s)


def test_buffer_layout_append_and_drop():
    rng = np.random.default_rng(3)
    n = 6
    M = _spd(rng, n)
    keys = np.zeros(n, dtype=np.int64)
    buf = np.zeros((n, n))
    k = load_block(keys, buf, np.array([0, 1]), np.linalg.inv(M[:2, :2]))
    for j in range(2, n):
        assert border_append(buf, k, M[keys[:k], j].copy(), float(M[j, j]), 1e-12, 1.0) == 1
        keys[k] = j
        k += 1
    assert _rel(buf[:k, :k], np.linalg.inv(M)) <= 1e-9
    assert not border_drop(keys, k, buf, 99, 1e-14)  # not a key: nothing changes
    assert border_drop(keys, k, buf, 2, 1e-14)
    k -= 1
    rows = keys[:k]
    assert sorted(rows.tolist()) == [0, 1, 3, 4, 5]
    assert _rel(buf[:k, :k], np.linalg.inv(M[np.ix_(rows, rows)])) <= 1e-9
    # a negative Schur complement (a not positive semi-definite block) is reported
    d = float(M[keys[:k], 2] @ np.linalg.solve(M[np.ix_(rows, rows)], M[keys[:k], 2])) - 1.0
    assert border_append(buf, k, M[keys[:k], 2].copy(), d, 1e-12, 1.0) == -1
