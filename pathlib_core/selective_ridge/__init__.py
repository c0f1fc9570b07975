"""Selective ridge regularization solved in the dual, for many more features than samples.

- :mod:`~pathlib_core.selective_ridge.dual` -- the fit, the path in ``mu`` and the estimators
- :mod:`~pathlib_core.selective_ridge.alm` -- the augmented-Lagrangian search for feature sets
- :mod:`~pathlib_core.selective_ridge.cuts` -- the hinge loss's working-set LP and split QP
- :mod:`~pathlib_core.selective_ridge.newton` -- the paper's own Newton iteration (27)-(32)
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["alm", "cuts", "dual", "newton"],
    submod_attrs={
        "dual": [
            "selective_fit", "selectivity_path", "SelectiveResult", "mu_0", "selective_penalty",
            "primal_objective", "dual_objective", "duality_gap", "kkt_residuals", "eeg_like",
            "SelectiveRidgeRegressor", "SelectiveRidgeClassifier",
        ],
        "newton": [
            "paper_newton_iteration", "NewtonIterationResult",
        ],
    },
)
