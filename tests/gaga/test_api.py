"""The part's public surface: names, the ACS grids as solution paths, the range arguments,
the kernel arguments and the error types."""

from __future__ import annotations

import ast
import pathlib

import numpy as np
import pytest

from pathlib_core import datasets, gaga
from pathlib_core.core.exceptions import PathlibCoreError, SolverError
from pathlib_core.core.kernels import rbf_kernel
from pathlib_core.core.solution_path import SolutionPath

PART = pathlib.Path(gaga.__file__).parent


def test_public_names_are_the_functions():
    import pathlib_core.gaga.linear_path  # noqa: F401  (a submodule import must not shadow)
    from pathlib_core.gaga import SelfPacedSVC, acs, age_path, svm_age_path
    for fn in (age_path, svm_age_path, acs):
        assert callable(fn) and not isinstance(fn, type(pathlib))
    assert gaga.age_path is age_path and isinstance(SelfPacedSVC(), SelfPacedSVC)


def test_no_import_cycle_inside_the_part():
    """Every import between the part's modules (also inside functions) goes one way."""
    graph = {}
    for f in PART.glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(f.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                deps.add(node.module.split(".")[0])
        graph[f.stem] = deps
    state = {}

    def visit(m, stack):
        if state.get(m) == "done":
            return
        assert state.get(m) != "open", f"import cycle: {' -> '.join(stack + [m])}"
        state[m] = "open"
        for d in graph.get(m, ()):
            visit(d, stack + [m])
        state[m] = "done"

    for m in graph:
        visit(m, [])


def _lasso(n=60):
    X, y = datasets.load("diabetes", standardize=True)
    return X[:n, :4], y[:n] - y[:n].mean()


def test_acs_paths_take_the_age_range_of_the_age_paths():
    X, y = _lasso()
    kw = dict(model="lasso", regularizer="linear", alpha=0.05)
    grid = gaga.acs_path(X, y, age_min=0.5, age_max=2.2, **kw)
    assert isinstance(grid, SolutionPath) and grid.param_name == "age"
    np.testing.assert_allclose(grid.breakpoints, [0.5, 1.0, 1.5, 2.0, 2.2])
    path = gaga.age_path(X, y, age_min=0.5, age_max=2.2, **kw)
    assert grid.param_range == path.param_range
    np.testing.assert_allclose(grid.kkt_residuals(), [r.residual for _, _, r in grid.records()])
    assert np.max(grid.kkt_residuals()) <= 1e-11
    # both start from the unweighted fit (later ages may sit on other branches: the SPL
    # objective has several partial optima)
    np.testing.assert_allclose(grid.at(0.5).coef, path.at(0.5).coef, rtol=1e-7, atol=1e-10)
    with pytest.raises(ValueError, match="either ages or age_min"):
        gaga.acs_path(X, y, ages=[1.0], age_min=0.5, age_max=2.0, **kw)
    with pytest.raises(ValueError, match="age_min"):
        gaga.acs_path(X, y, **kw)
    with pytest.raises(ValueError, match="age_step"):
        gaga.acs_path(X, y, age_min=0.5, age_max=2.0, age_step=0.0, **kw)


def test_unsorted_ages_are_visited_in_order_and_reported_sorted():
    X, y = _lasso()
    kw = dict(model="lasso", regularizer="linear", alpha=0.05)
    grid = gaga.acs_path(X, y, ages=[2.0, 0.5, 1.0], **kw)
    assert grid.info["ages"] == [2.0, 0.5, 1.0]
    np.testing.assert_array_equal(grid.breakpoints, [0.5, 1.0, 2.0])
    first = gaga.acs(X, y, 2.0, **kw)
    np.testing.assert_array_equal(grid.at(2.0).coef, first.coef)


def test_svm_kernel_arguments():
    X, y = datasets.load("breast_cancer", standardize=True)
    X, y = X[:50, :4], y[:50]
    kw = dict(regularizer="linear", age_min=2.5, age_max=4.0)
    by_name = gaga.svm_age_path(X, y, kernel="rbf", gamma=0.3, **kw)
    pre = gaga.svm_age_path(rbf_kernel(X, gamma=0.3), y, kernel="precomputed", **kw)
    np.testing.assert_allclose(pre.breakpoints, by_name.breakpoints, rtol=1e-9)
    np.testing.assert_allclose(pre.at(3.0).alpha, by_name.at(3.0).alpha, atol=1e-9)
    scale = gaga.svm_age_path(X, y, kernel="rbf", **kw)
    assert scale.info["gamma"] == "scale"
    width = 1.0 / (X.shape[1] * X.var())
    same = gaga.svm_age_path(X, y, kernel="rbf", gamma=width, **kw)
    np.testing.assert_array_equal(scale.breakpoints, same.breakpoints)
    with pytest.raises(ValueError, match="square"):
        gaga.svm_age_path(X, y, kernel="precomputed", **kw)
    with pytest.raises(ValueError, match="gamma"):
        gaga.svm_age_path(X, y, kernel="rbf", gamma=-1.0, **kw)


def test_age_derivative_is_the_paths_slope():
    X, y = _lasso()
    kw = dict(model="lasso", regularizer="linear", alpha=0.05)
    path = gaga.age_path(X, y, age_min=0.5, age_max=2.0, **kw)
    a = 0.5 * (path.breakpoints[0] + path.breakpoints[1])
    h = 1e-6 * (path.breakpoints[1] - path.breakpoints[0])
    fd = (path.at(a + h).coef - path.at(a - h).coef) / (2 * h)
    slope = gaga.age_derivative(X, y, path.at(a).coef, 0.0, a, **kw)
    np.testing.assert_allclose(slope, fd, rtol=1e-4, atol=1e-8 * np.max(np.abs(fd)))


def test_error_types():
    assert issubclass(gaga.DegenerateStartError, ValueError)
    assert issubclass(gaga.DegenerateStartError, PathlibCoreError)
    assert issubclass(gaga.IllPosedError, ValueError)
    assert issubclass(gaga.IllPosedError, PathlibCoreError)
    X = np.ones((4, 1))
    y = np.array([1.0, 1.0, -1.0, -1.0])
    with pytest.raises(SolverError, match="no minimizer"):
        gaga.weighted_fit(X, y, np.array([1.0, 1.0, 0.0, 0.0]), model="logistic")
    for f in PART.glob("*.py"):
        assert "raise RuntimeError" not in f.read_text(), f.name
