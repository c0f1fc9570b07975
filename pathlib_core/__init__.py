"""pathlib_core: exact solution paths for large-margin learning.

The shared code of the compendium *Solution paths for large-margin learning*. The tree shows
its layers:

- :mod:`pathlib_core.core` -- the engine: the :class:`SolutionPath` result type, KKT
  certificates, QP and LP solvers, the piecewise-linear homotopy and the ODE path follower,
  the bordered inverse, kernels, input validation and the error hierarchy. It imports nothing
  else from the package.
- one subpackage per part of the book, named like its notebook folder, each holding that
  paper's path and fit functions, estimators, baselines and experiment protocol:

  - :mod:`pathlib_core.primer` -- the SVM path in ``C`` and the Lasso homotopy
  - :mod:`pathlib_core.s3vm` -- the S3VM path by infinitesimal annealing (Ogawa et al. 2013)
  - :mod:`pathlib_core.pdgdp` -- PDGDP: critical regions of the SVM dual, latent-SVM training
    (Algorithm 1) and gradient-based model selection (Algorithm 2)
  - :mod:`pathlib_core.selective_ridge` -- selective ridge regularization in the dual (n >> N)
  - :mod:`pathlib_core.gaga` -- the self-paced learning age-path (GAGA)
  - :mod:`pathlib_core.mcm` -- the Minimal Complexity Machine and conformal kernels

  A part uses the core's public names only and no other part (the primer excepted).
- :mod:`pathlib_core.datasets` -- the offline dataset registry, splits and label noise
- :mod:`pathlib_core.experiments` -- the book's helpers: results records, figures, the runner

Subpackages are imported on first use, so ``import pathlib_core`` stays cheap.
"""

import lazy_loader as _lazy

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = _lazy.attach(
    __name__,
    submodules=["core", "primer", "s3vm", "pdgdp", "selective_ridge", "gaga", "mcm",
                "datasets", "experiments"],
    submod_attrs={"core.solution_path": ["SolutionPath", "Event"]},
)
__all__ = [*__all__, "__version__"]
