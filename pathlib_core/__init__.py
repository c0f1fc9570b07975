"""pathlib_core: exact solution paths for large-margin learning.

The shared engine of the compendium *Solution paths for large-margin learning*.
Submodules are imported on demand so that ``import pathlib_core`` stays cheap:

- :mod:`pathlib_core.path`      -- :class:`Path` and :class:`Event`, the one result type
- :mod:`pathlib_core.kkt`       -- residuals of QP / LP optimality conditions
- :mod:`pathlib_core.qp`        -- small dense QPs (active set) and a cvxpy reference solve
- :mod:`pathlib_core.homotopy`  -- piecewise-linear paths of parametric QPs
- :mod:`pathlib_core.odepath`   -- piecewise-smooth paths by ODE integration
- :mod:`pathlib_core.kernels`   -- linear, RBF, ARD-RBF kernels and the conformal transform
- :mod:`pathlib_core.datasets`  -- the offline dataset registry, splits and label noise
- :mod:`pathlib_core.plotting`  -- deterministic figures
- :mod:`pathlib_core.results`   -- per-notebook results and scoreboard rows
- :mod:`pathlib_core.svm`, :mod:`pathlib_core.lasso` -- the primer's two classic paths
- :mod:`pathlib_core.pdgdp`     -- PDGDP: critical regions of the SVM dual, latent-SVM
  training (Algorithm 1) and gradient model selection (Algorithm 2)
- :mod:`pathlib_core.spl`       -- self-paced learning: SP-regularizers, ACS, the GAGA age-path
- :mod:`pathlib_core.mcm`       -- Minimal Complexity Machine LP and conformal kernel optimization
- :mod:`pathlib_core.s3vm`      -- the S3VM path by infinitesimal annealing (Ogawa et al. 2013)
- :mod:`pathlib_core.s3vm_protocol` -- the S3VM paper's experimental protocol (Section 6)
- :mod:`pathlib_core.baselines` -- the methods the papers compare against
- :mod:`pathlib_core.selective` -- selective ridge regularization in the dual (n >> N)
- :mod:`pathlib_core.selective_newton` -- the selective-ridge paper's own Newton iteration
  (27)-(32), kept to measure how it behaves
- :mod:`pathlib_core.spl_svm`   -- the self-paced SVM age-path (Proposition 1) and SelfPacedSVC
"""

from importlib import import_module

__version__ = "0.1.0"

_SUBMODULES = {
    "path", "kkt", "qp", "homotopy", "odepath", "kernels", "datasets", "plotting", "results",
    "svm", "lasso", "runner", "pdgdp", "spl", "mcm", "s3vm", "s3vm_protocol", "baselines",
    "selective", "selective_newton", "spl_svm",
}

__all__ = sorted(_SUBMODULES) + ["Path", "Event", "__version__"]


def __getattr__(name):
    if name in _SUBMODULES:
        return import_module(f"{__name__}.{name}")
    if name in {"Path", "Event"}:
        return getattr(import_module(f"{__name__}.path"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
