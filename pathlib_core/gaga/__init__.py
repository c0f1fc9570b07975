"""GAGA: the exact age-path of self-paced learning (Lasso, logistic regression, kernel SVM).

- :mod:`~pathlib_core.gaga.spl` -- SP-regularizers, ACS, the age-path of the Lasso and of
  logistic regression, their estimators
- :mod:`~pathlib_core.gaga.spl_svm` -- the self-paced SVM's age-path and :class:`SelfPacedSVC`
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["spl", "spl_svm"],
    submod_attrs={
        "spl": [
            "age_path", "acs", "acs_path", "SPLSolution", "ACSResult", "sp_weights",
            "sp_regularizer", "partial_optimum_residual", "weighted_fit", "SelfPacedLasso",
            "SelfPacedLogisticRegression", "DegenerateStartError", "REGULARIZERS", "MODELS",
        ],
        "spl_svm": [
            "svm_age_path", "svm_acs", "svm_acs_path", "svm_weighted_fit",
            "svm_partial_optimum_residual", "SelfPacedSVC", "IllPosedError",
        ],
    },
)
