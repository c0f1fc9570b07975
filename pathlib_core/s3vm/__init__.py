"""The S3VM path by infinitesimal annealing (Ogawa, Imamura, Takeuchi and Sugiyama, 2013).

- :mod:`~pathlib_core.s3vm.path` -- :func:`s3vm_path`, its KKT conditions and the exact choice
  of ``C^*`` by validation error
- :mod:`~pathlib_core.s3vm.estimator` -- :class:`S3VMPathClassifier`, its scikit-learn face
- :mod:`~pathlib_core.s3vm.baselines` -- the supervised SVM, annealing TSVM and CCCP-TSVM peers
- :mod:`~pathlib_core.s3vm.protocol` -- the paper's experimental protocol (Section 6)
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["baselines", "estimator", "path", "protocol"],
    submod_attrs={
        "path": [
            "s3vm_path", "S3VMSolution", "s3vm_objective", "s3vm_kkt_residual",
            "conditional_solution", "class_balance_bias", "select_C_unlabeled",
        ],
        "estimator": ["S3VMPathClassifier"],
        "baselines": [
            "supervised_svm", "annealing_tsvm", "cccp_tsvm", "TSVMResult",
        ],
    },
)
