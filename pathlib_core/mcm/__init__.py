"""The Minimal Complexity Machine (Jayadeva, 2015) and conformal kernel optimization.

- :mod:`pathlib_core.mcm.lp`         -- the MCM linear program: :func:`fit_mcm`, :func:`mcm_lp`
- :mod:`pathlib_core.mcm.path`       -- the exact path over ``C`` by parametric linear
  programming: :func:`mcm_path`, and model selection on it, :func:`mcm_path_cv`
- :mod:`pathlib_core.mcm.conformal`  -- kernel scatter matrices, the Fisher ratio and
  :func:`optimize_conformal` (Badge et al. 2021)
- :mod:`pathlib_core.mcm.estimators` -- :class:`MCMClassifier`, :class:`ConformalMCMClassifier`,
  :class:`ConformalSVMClassifier`
- :mod:`pathlib_core.mcm.protocol`   -- the reproduction protocol: data sets, nested
  cross-validation, learning curves and the numbers of the chapter's tables
"""

import lazy_loader as _lazy

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["lp", "path", "conformal", "estimators", "protocol"],
    submod_attrs={
        "lp": ["fit_mcm", "at_larger_C", "mcm_lp", "MCMResult", "LP_METHODS", "C_RESOLVE", "C_MIN"],
        "path": ["mcm_path", "mcm_path_cv", "MCMPathSolution", "PathCVResult"],
        "conformal": ["scatter_matrices", "fisher_ratio_direct", "optimize_conformal",
                      "ConformalSolution"],
        "estimators": ["MCMClassifier", "ConformalMCMClassifier", "ConformalSVMClassifier"],
    },
)
