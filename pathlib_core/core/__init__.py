"""The engine: what every paper's code is built on, and nothing paper-specific.

- :mod:`~pathlib_core.core.solution_path` -- :class:`SolutionPath` and :class:`Event`, the one
  result type of every path function
- :mod:`~pathlib_core.core.path_plot` -- the picture of a path, events marked (matplotlib on
  demand)
- :mod:`~pathlib_core.core.io` -- atomic text writes and numpy values as JSON types
- :mod:`~pathlib_core.core.states` -- :class:`IndexState`, where each index of a box-constrained
  problem sits (free, at a bound, fixed)
- :mod:`~pathlib_core.core.kkt` -- scale-invariant residuals of QP / LP optimality conditions
- :mod:`~pathlib_core.core.qp` -- dense QPs by an active-set method, LPs by HiGHS, a cvxpy oracle
- :mod:`~pathlib_core.core.homotopy` -- piecewise-linear paths of parametric QPs
- :mod:`~pathlib_core.core.ode_path` -- piecewise-smooth paths by ODE integration with events
- :mod:`~pathlib_core.core.linalg` -- the bordered inverse (one index enters or leaves), compiled
- :mod:`~pathlib_core.core.kernels` -- linear, RBF, ARD-RBF and conformal kernels
- :mod:`~pathlib_core.core.validation` -- input checks that name the offending argument
- :mod:`~pathlib_core.core.exceptions` -- the package's error hierarchy
- :mod:`~pathlib_core.core.threads` -- one BLAS thread inside small-matrix loops

The core imports nothing from the rest of the package.
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["exceptions", "homotopy", "io", "kernels", "kkt", "linalg", "ode_path",
                "path_plot", "qp", "solution_path", "states", "threads", "validation"],
    submod_attrs={
        "solution_path": [
            "SolutionPath", "Event", "Segment", "LinearSegment", "FunctionSegment",
        ],
        "states": [
            "IndexState",
        ],
        "path_plot": [
            "plot_path",
        ],
        "io": [
            "atomic_write_text", "to_jsonable",
        ],
        "kkt": [
            "KKTResiduals", "qp_residuals", "lp_residuals",
        ],
        "qp": [
            "QPResult", "ActiveSet", "solve_qp", "solve_lp", "solve_qp_cvxpy",
        ],
        "homotopy": [
            "QPPoint", "parametric_qp_path",
        ],
        "ode_path": [
            "follow_path", "Update",
        ],
        "kernels": [
            "Kernel", "ConformalKernel", "kernel_from_name", "linear_kernel", "rbf_kernel",
            "ard_rbf_kernel",
        ],
        "exceptions": [
            "PathlibCoreError", "PathFollowingError", "HomotopyError", "SolverError",
            "QPSolverError", "NotPSDError",
        ],
        "threads": [
            "single_blas_thread",
        ],
    },
)
