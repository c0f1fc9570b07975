"""The primer's two classic exact paths: the SVM regularization path in ``C`` (Hastie et al.,
2004) and the Lasso homotopy in ``alpha`` (Osborne et al., 2000; Efron et al., 2004).
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["lasso", "svm"],
    submod_attrs={
        "svm": [
            "svm_path", "svm_kkt_residual", "SVMSolution",
        ],
        "lasso": [
            "lasso_path", "lasso_kkt_residual", "LassoSolution",
        ],
    },
)
