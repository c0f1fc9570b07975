"""The error hierarchy: failures after valid input are package errors, bad input is ValueError."""

import numpy as np
import pytest

from pathlib_core.core import exceptions as ex
from pathlib_core.core import qp


def test_hierarchy_and_builtin_bases():
    for cls in (ex.PathFollowingError, ex.HomotopyError, ex.SolverError, ex.QPSolverError,
                ex.NotPSDError):
        assert issubclass(cls, ex.PathlibCoreError)
    assert issubclass(ex.HomotopyError, ex.PathFollowingError)
    assert issubclass(ex.QPSolverError, ex.SolverError)
    for cls in (ex.PathFollowingError, ex.SolverError):
        assert issubclass(cls, RuntimeError) and not issubclass(cls, ValueError)
    assert issubclass(ex.NotPSDError, ValueError) and not issubclass(ex.NotPSDError, RuntimeError)


def test_a_linear_algebra_failure_inside_the_qp_is_a_qp_solver_error(monkeypatch):
    def broken(*args, **kwargs):
        raise np.linalg.LinAlgError("SVD did not converge")

    monkeypatch.setattr(qp, "_solve", broken)
    with pytest.raises(ex.QPSolverError, match="SVD did not converge"):
        qp.solve_qp(np.eye(2), np.ones(2), lb=np.zeros(2), ub=np.ones(2))


def test_no_bare_runtime_error_is_raised_in_core():
    import ast
    from pathlib import Path

    import pathlib_core.core as core

    bare = []
    for file in sorted(Path(core.__file__).parent.glob("*.py")):
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Raise) and node.exc is not None:
                exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
                if isinstance(exc, ast.Name) and exc.id in ("RuntimeError", "Exception"):
                    bare.append(f"{file.name}:{node.lineno}")
    assert not bare, f"bare RuntimeError / Exception raised in core at {bare}"
