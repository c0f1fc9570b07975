"""The one fit-result convention: every fit's record is a FitResult (scipy OptimizeResult style)."""

import dataclasses
import importlib
import inspect
import pickle
import pkgutil

import numpy as np
import pytest

import pathlib_core
from pathlib_core.core.fit_result import SUCCESS_STATUSES, FitResult
from pathlib_core.core.qp import solve_qp


def _result_classes():
    """Every public class named ``*Result`` defined in the package."""
    found = {}
    for mod in pkgutil.walk_packages(pathlib_core.__path__, "pathlib_core."):
        if mod.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        module = importlib.import_module(mod.name)
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and name.endswith("Result") and not name.startswith("_")
                    and obj.__module__ == module.__name__ and obj is not FitResult):
                found[f"{obj.__module__}.{name}"] = obj
    return found


def test_every_result_record_is_a_fit_result():
    classes = _result_classes()
    assert len(classes) >= 10, sorted(classes)
    bad = [name for name, cls in classes.items()
           if not (issubclass(cls, FitResult) and dataclasses.is_dataclass(cls))]
    assert not bad, f"result records outside the FitResult convention: {bad}"
    # the repr is the convention's (scipy's listing), not a generated dataclass repr
    own_repr = [name for name, cls in classes.items() if "__repr__" in vars(cls)]
    assert not own_repr, f"declare these @dataclass(repr=False): {own_repr}"


def _qp():
    return solve_qp(np.eye(3), -np.ones(3), lb=np.zeros(3), ub=np.full(3, 0.5))


def test_scipy_names_and_mapping_access():
    res = _qp()
    assert res.success is True and res.status == "optimal"
    assert res.nit == res.n_iter and res.fun == res.objective == pytest.approx(-1.125)
    assert "optimality" in res.message
    keys = res.keys()
    assert keys[:4] == ["message", "success", "fun", "nit"]
    assert "x" in res and "_data" not in res and "nope" not in res and 3 not in res
    np.testing.assert_array_equal(res["x"], res.x)
    assert dict(res.items())["status"] == "optimal" and len(res.values()) == len(keys)
    assert res.get("nope", 7) == 7
    with pytest.raises(KeyError):
        res["_data"]
    text = repr(res)
    assert text.startswith("QPResult:") and "success: True" in text and "\n" in text


def test_failure_status_is_not_success():
    res = solve_qp(np.eye(2), np.zeros(2), A=np.ones((2, 2)), b=np.array([0.0, 1.0]))
    assert res.status == "infeasible" and res.success is False
    assert "infeasible" in res.message
    assert "infeasible" not in SUCCESS_STATUSES


def test_records_pickle_and_compare():
    res = _qp()
    back = pickle.loads(pickle.dumps(res))
    np.testing.assert_array_equal(back.x, res.x)
    assert back.status == res.status and back.fun == res.fun


def test_status_of_iterative_fits():
    from pathlib_core.s3vm.baselines import cccp_tsvm

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 2))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    y[10:] = 0.0  # unlabeled
    K = X @ X.T
    full = cccp_tsvm(K, y, C=1.0, C_unlabeled=1.0, max_iter=100)
    capped = cccp_tsvm(K, y, C=1.0, C_unlabeled=1.0, max_iter=1)
    assert full.success and full.status == "converged"
    assert full.nit > 1  # the ramp's active set changed after the first solve, so one is short
    assert capped.status == "max_iter" and not capped.success


def test_a_derived_name_that_cannot_be_evaluated_is_left_out():
    from pathlib_core.selective_ridge.newton import NewtonIterationResult

    empty = np.array([])
    res = NewtonIterationResult(np.zeros(2), empty, empty, empty, stopped=False, n_iter=0)
    assert "fun" not in res and res.status == "max_iter" and not res.success
    assert "fun" not in repr(res) and "objective" in repr(res)
    arr = np.array([res, res])  # records stay scalars for numpy (no sequence protocol)
    assert arr.shape == (2,) and arr.dtype == object
