"""The engine: what every paper's code is built on, and nothing paper-specific.

The core imports nothing from the rest of the package. Its public API, by module (the names
in the first column of each list are also attributes of :mod:`pathlib_core.core`, imported
on first use):

- :mod:`~pathlib_core.core.solution_path` -- the one result type of every path function:
  :class:`SolutionPath` (``at``, ``breakpoints``, ``events``, ``kkt_residuals``, ``to_json`` /
  ``from_json``, pickling), :class:`Event`, the pieces :class:`Segment`,
  :class:`LinearSegment`, :class:`FunctionSegment`; ``lerp_record``
- :mod:`~pathlib_core.core.fit_result` -- the one convention of fit results:
  :class:`FitResult`, a dataclass base in the style of scipy's ``OptimizeResult``
  (``success``, ``status``, ``message``, ``nit``, ``fun``, mapping access), ``SUCCESS_STATUSES``
- :mod:`~pathlib_core.core.kkt` -- scale-invariant residuals of QP and LP optimality
  conditions: :class:`KKTResiduals`, :func:`qp_residuals`, :func:`lp_residuals`; for the
  engines ``QPData``, ``qp_data_residuals``, ``recover_bounds``,
  ``bound_multipliers_from_gradient``
- :mod:`~pathlib_core.core.qp` -- dense QPs by a primal active-set method, LPs by HiGHS, a
  cvxpy oracle: :func:`solve_qp`, :func:`solve_lp`, :func:`solve_qp_cvxpy`,
  :class:`QPResult`, :class:`ActiveSet`; for the engines ``psd_factor``, ``solver_options``,
  ``ruiz_pow2``
- :mod:`~pathlib_core.core.homotopy` -- piecewise-linear paths of parametric QPs:
  :func:`parametric_qp_path`, :class:`QPPoint`; for the parts' path functions
  ``QPProblem``, ``make_problem``, ``trace_path``, ``trace_raw``, ``assemble_path``,
  ``exact_point``, ``events_for``, ``engine_info``, ``KKTInverse``, ``kernel_scale_pow2``,
  ``screen_psd``, ``conditioning_note``
- :mod:`~pathlib_core.core.ode_path` -- piecewise-smooth paths by ODE integration with
  events: :func:`follow_path`, :class:`Update`, ``METHODS``
- :mod:`~pathlib_core.core.linalg` -- the bordered inverse (one index enters or leaves),
  compiled: ``border_add``, ``border_remove``, ``schur_complement``, ``border_append``,
  ``border_drop``, ``load_block``, ``gradient_drift``, ``smallest_two``, ``psd_screen``,
  ``REFACTOR_EVERY``, ``REFACTOR_EVERY_VERIFIED``, ``DRIFT_TOL``, ``njit``
- :mod:`~pathlib_core.core.states` -- :class:`IndexState`, the one index-state enum (free, at
  the lower or upper bound, fixed), its values as plain ints and ``STATE_NAMES``
- :mod:`~pathlib_core.core.kernels` -- :func:`linear_kernel`, :func:`rbf_kernel`,
  :func:`ard_rbf_kernel` (with gradients), conformal kernels (:class:`ConformalKernel`,
  ``conformal_basis``, ``conformal_factor``, ``conformal_kernel``), :class:`Kernel`,
  :func:`kernel_from_name`, ``squared_distances``
- :mod:`~pathlib_core.core.validation` -- input checks whose ``ValueError`` names the
  argument: ``as_matrix``, ``as_vector``, ``as_kernel``, ``as_symmetric``,
  ``as_binary_labels``, :func:`encode_binary_labels`, ``finite_scalar``,
  ``positive_scalar``, ``positive_int``, ``check_choice``, ``check_psd``, ``check_bounds``,
  ``check_all_finite``
- :mod:`~pathlib_core.core.exceptions` -- the error hierarchy: :class:`PathlibCoreError`,
  :class:`PathFollowingError` > :class:`HomotopyError`, :class:`SolverError` >
  :class:`QPSolverError` (both also ``RuntimeError``), :class:`NotPSDError` (also
  ``ValueError``)
- :mod:`~pathlib_core.core.path_plot` -- :func:`plot_path`, a path's picture with its events
  marked (matplotlib imported on demand), ``EVENT_STYLE``
- :mod:`~pathlib_core.core.io` -- :func:`atomic_write_text`, :func:`to_jsonable` (numpy
  values as JSON types), ``ByValue`` (pickling of local functions through cloudpickle)
- :mod:`~pathlib_core.core.threads` -- :func:`single_blas_thread`, one BLAS thread inside
  small-matrix loops
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["exceptions", "fit_result", "homotopy", "io", "kernels", "kkt", "linalg",
                "ode_path", "path_plot", "qp", "solution_path", "states", "threads", "validation"],
    submod_attrs={
        "solution_path": [
            "SolutionPath", "Event", "Segment", "LinearSegment", "FunctionSegment",
        ],
        "fit_result": [
            "FitResult",
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
        "states": [
            "IndexState",
        ],
        "kernels": [
            "Kernel", "ConformalKernel", "kernel_from_name", "linear_kernel", "rbf_kernel",
            "ard_rbf_kernel",
        ],
        "validation": [
            "encode_binary_labels",
        ],
        "exceptions": [
            "PathlibCoreError", "PathFollowingError", "HomotopyError", "SolverError",
            "QPSolverError", "NotPSDError",
        ],
        "path_plot": [
            "plot_path",
        ],
        "io": [
            "atomic_write_text", "to_jsonable",
        ],
        "threads": [
            "single_blas_thread",
        ],
    },
)
