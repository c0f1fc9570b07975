"""The Minimal Complexity Machine (Jayadeva, 2015) and conformal kernel optimization.
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["lp"],
    submod_attrs={
        "lp": [
            "fit_mcm", "mcm_lp", "MCMResult", "scatter_matrices", "fisher_ratio_direct",
            "optimize_conformal", "ConformalSolution", "MCMClassifier", "ConformalMCMClassifier",
            "ConformalSVMClassifier", "LP_METHODS",
        ],
    },
)
