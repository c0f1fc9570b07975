"""PDGDP: parametric dual sub-gradient descent for latent SVMs and model selection.

The explicit form of the optimal SVM dual inside a critical region (Theorem 1 of the PDGDP
paper), latent-SVM training by projected sub-gradient steps on the hidden-state weights
(Algorithm 1, with the AO, CCCP and SGD baselines), and gradient-based selection of the
``d + 2`` hyperparameters of a cost-sensitive SVM with an ARD kernel (Algorithm 2, with random
and grid search at equal QP budgets).

- :mod:`pathlib_core.pdgdp.region`    -- :func:`critical_region`, :class:`CriticalRegion`
- :mod:`pathlib_core.pdgdp.latent`    -- :func:`train_latent_svm`, :class:`LatentSVMClassifier`
- :mod:`pathlib_core.pdgdp.selection` -- :func:`select_hyperparameters`
- :mod:`pathlib_core.pdgdp.protocol`  -- the reproduction protocol (yeast training, hiva
  model selection)
"""

from .latent import (
    LatentSVMClassifier,
    LatentSVMResult,
    hidden_state_objective,
    kmeans_init,
    latent_global_optimum,
    latent_objective,
    project_simplex,
    train_latent_svm,
)
from .region import CriticalRegion, critical_region, solve_svm_dual
from .selection import (
    CostSensitiveARD,
    SelectionResult,
    pack_hyperparameters,
    select_hyperparameters,
    unpack_hyperparameters,
)

__all__ = [
    "CriticalRegion",
    "critical_region",
    "solve_svm_dual",
    "LatentSVMClassifier",
    "LatentSVMResult",
    "train_latent_svm",
    "latent_objective",
    "hidden_state_objective",
    "kmeans_init",
    "latent_global_optimum",
    "project_simplex",
    "CostSensitiveARD",
    "SelectionResult",
    "select_hyperparameters",
    "pack_hyperparameters",
    "unpack_hyperparameters",
]
