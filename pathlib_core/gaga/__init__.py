"""GAGA: the exact age-path of self-paced learning (Lasso, logistic regression, kernel SVM).

Qu, Li, Zhao and Gu, NeurIPS 2022. One module per responsibility:

- :mod:`~pathlib_core.gaga.regularizers` -- SP-regularizers, the weights ``v*`` and their
  derivatives (the mixture regularizer's parameter is ``mixture``, the paper's gamma)
- :mod:`~pathlib_core.gaga.linear_models` -- the Lasso and logistic regression: losses,
  weighted fits, the partial-optimum certificate
- :mod:`~pathlib_core.gaga.svm_dual` -- the self-paced SVM's weighted dual and certificate
- :mod:`~pathlib_core.gaga.alternating` -- alternate convex search (Algorithm 1) with Newton
  acceleration, shared by every model
- :mod:`~pathlib_core.gaga.acs_baseline` -- ACS at one age and on a grid (the baseline), for
  every model
- :mod:`~pathlib_core.gaga.linear_path` -- the age-path of the Lasso and logistic regression
- :mod:`~pathlib_core.gaga.svm_path` -- the age-path of the self-paced SVM
- :mod:`~pathlib_core.gaga.estimators` -- scikit-learn estimators choosing the age on
  validation data
- :mod:`~pathlib_core.gaga.protocol` -- the reproduction protocol of the paper's experiments
- :mod:`~pathlib_core.gaga.scaling`, :mod:`~pathlib_core.gaga.checks`,
  :mod:`~pathlib_core.gaga.docstrings`, :mod:`~pathlib_core.gaga.exceptions` -- exact
  rescaling, shared argument checks, shared parameter descriptions, input errors
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["regularizers", "linear_models", "svm_dual", "alternating", "acs_baseline",
                "linear_path", "svm_path", "estimators", "protocol", "scaling", "checks",
                "docstrings", "exceptions", "robust_baselines", "sensitivity",
                "mospl"],
    submod_attrs={
        "regularizers": ["REGULARIZERS", "PATH_REGULARIZERS", "sp_regularizer", "sp_weights",
                         "sp_weights_derivatives"],
        "linear_models": ["MODELS", "SPLSolution", "WeightedFitResult", "losses", "weighted_fit",
                          "partial_optimum_residual"],
        "svm_dual": ["SVMSolution", "svm_weighted_fit", "svm_partial_optimum_residual"],
        "acs_baseline": ["ACSResult", "SVMACSResult", "acs", "acs_path", "svm_acs", "svm_acs_path"],
        "linear_path": ["age_path", "age_derivative"],
        "svm_path": ["svm_age_path"],
        "estimators": ["candidate_ages", "SelfPacedLasso", "SelfPacedLogisticRegression",
                       "SelfPacedSVC"],
        "exceptions": ["DegenerateStartError", "IllPosedError"],
        "robust_baselines": ["RobustFitResult", "huber_loss", "huber_lasso_fit", "lssvm_fit",
                             "rlssvm_fit", "relssvm_fit", "robust_svm_fit", "suykens_weights"],
        "sensitivity": ["sensitivity_configs", "robust_run", "run_sensitivity",
                        "summarize_sensitivity", "compare"],
        "mospl": ["MOSPL_REGULARIZERS", "MIXTURE_ORDER", "MOSPLResult", "mospl_fit",
                  "mospl_objectives", "non_dominated", "protocol_split", "mospl_paired",
                  "mospl_run", "run_mospl_protocol"],
    },
)
