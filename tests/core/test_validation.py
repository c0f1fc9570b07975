"""Tests of the public-edge validation helpers: every error names its argument."""

import numpy as np
import pytest

from pathlib_core.core import validation as v


def test_as_matrix():
    assert v.as_matrix([[1, 2]]).dtype == float
    with pytest.raises(ValueError, match="X must be 2-D"):
        v.as_matrix([1, 2])
    with pytest.raises(ValueError, match="X must contain only finite values; found 1"):
        v.as_matrix([[1, np.nan]])
    with pytest.raises(ValueError, match="Z must be a numeric"):
        v.as_matrix([["a"]], "Z")
    with pytest.raises(ValueError, match="at least 2 row"):
        v.as_matrix([[1.0]], min_rows=2)


def test_as_vector_and_length():
    with pytest.raises(ValueError, match=r"y must have length 3 \(the number of rows of X\)"):
        v.as_vector([1, 2], "y", length=3, length_of="X")
    with pytest.raises(ValueError, match="y must be 1-D"):
        v.as_vector([[1]], "y")
    with pytest.raises(ValueError, match="finite"):
        v.as_vector([np.inf], "y")


def test_as_kernel():
    K = np.array([[2.0, 1.0], [1.0, 2.0]])
    np.testing.assert_array_equal(v.as_kernel(K), K)
    with pytest.raises(ValueError, match="K must be a square"):
        v.as_kernel(np.ones((2, 3)))
    with pytest.raises(ValueError, match="K must be symmetric"):
        v.as_kernel(np.array([[1.0, 0.5], [0.0, 1.0]]))
    Kn = K + 1e-12 * np.array([[0, 1], [0, 0]])
    assert np.array_equal(v.as_kernel(Kn), v.as_kernel(Kn).T)


def test_binary_labels():
    np.testing.assert_array_equal(v.as_binary_labels([1, -1, 1]), [1.0, -1.0, 1.0])
    with pytest.raises(ValueError, match=r"y must contain only -1 and \+1; found \[0.0\]"):
        v.as_binary_labels([1, 0, -1])
    with pytest.raises(ValueError, match="both classes"):
        v.as_binary_labels([1, 1])


def test_scalars_and_choices():
    assert v.positive_scalar(2, "C") == 2.0
    assert v.positive_scalar(0, "mu", allow_zero=True) == 0.0
    for bad, msg in [(0, "C must be > 0"), (-1, "C must be > 0"), (np.nan, "C must be finite"),
                     ("1", "C must be a real number"), (True, "C must be a real number")]:
        with pytest.raises(ValueError, match=msg):
            v.positive_scalar(bad, "C")
    with pytest.raises(ValueError, match="mu must be >= 0"):
        v.positive_scalar(-1e-3, "mu", allow_zero=True)
    assert v.check_choice("svm", "model", {"svm", "lasso"}) == "svm"
    with pytest.raises(ValueError, match=r"model must be one of \['lasso', 'svm'\]; got 'x'"):
        v.check_choice("x", "model", {"svm", "lasso"})


def test_positive_int():
    assert v.positive_int(3, "n") == 3 and type(v.positive_int(3, "n")) is int
    assert v.positive_int(np.int64(4), "n") == 4
    assert v.positive_int(200.0, "max_iter") == 200
    assert v.positive_int(np.float64(2.0), "n_mu", minimum=2) == 2
    assert v.positive_int(0, "k", minimum=0) == 0
    for bad, msg in [(0.5, r"max_iter must be an integer >= 1; got 0.5 \(not an integral"),
                     (2.7, "max_iter must be an integer >= 1; got 2.7"),
                     (0, "max_iter must be an integer >= 1; got 0"),
                     (-3.0, "max_iter must be an integer >= 1; got -3"),
                     (np.nan, "max_iter must be an integer"), (np.inf, "max_iter must be"),
                     (True, "max_iter must be an integer"), ("5", "max_iter must be")]:
        with pytest.raises(ValueError, match=msg):
            v.positive_int(bad, "max_iter")
    with pytest.raises(ValueError, match="n_mu must be an integer >= 2; got 1"):
        v.positive_int(1, "n_mu", minimum=2)
