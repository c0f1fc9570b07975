"""The reproduction protocol of the PDGDP part (chapter ``pdgdp/04``).

Two experiments of the paper, rerun on offline data:

- Table 1 and Figure 1: latent-SVM training on yeast (eight of its ten classes against the
  other two, ``M = 8`` hidden states, ``sigma = 0.01``), PDGDP against AO, CCCP and SGD from one
  common k-means start (:func:`load_yeast`, :func:`compare_training`);
- Figure 2: selection of the ``d + 2`` hyperparameters of a cost-sensitive ARD SVM, Algorithm 2
  against random and grid search at equal QP budgets, on a subset of hiva standing in for the
  proprietary S500 (:func:`load_hiva`, :func:`compare_selection`).

:func:`reproduction_settings` holds the sizes of the quick and the full mode.
"""

from __future__ import annotations

import numpy as np

from .latent import METHODS as TRAINING_METHODS
from .latent import kmeans_init, train_latent_svm
from .selection import select_hyperparameters

__all__ = [
    "YEAST_HIDDEN_CLASSES", "SELECTION_METHODS", "TRAINING_METHODS", "reproduction_settings",
    "load_yeast", "compare_training", "load_hiva", "compare_selection",
]

#: the yeast classes that together form the positive class (the others are the negatives)
YEAST_HIDDEN_CLASSES = ("ERL", "EXC", "ME1", "ME2", "ME3", "MIT", "POX", "VAC")
SELECTION_METHODS = ("pdgdp", "random", "grid")


def reproduction_settings(mode: str) -> dict:
    """Sizes of a mode.

    Returns
    -------
    dict
        ``n_train`` (yeast training points kept, None for all), ``n_steps`` (PDGDP steps),
        ``budget`` (QP solves of every selection method) and ``n_inactive`` (hiva inactives
        kept beside its 135 actives).
    """
    if mode == "quick":
        return dict(n_train=400, n_steps=100, budget=30, n_inactive=205)
    if mode == "full":
        return dict(n_train=None, n_steps=300, budget=186, n_inactive=405)
    raise ValueError(f"mode must be 'quick' or 'full'; got {mode!r}")


def load_yeast(*, n_train: int | None, random_state: int) -> dict:
    """yeast as the latent-SVM problem of Table 1, split 70 / 30 and standardized.

    Parameters
    ----------
    n_train : int or None
        Keep this many of the training points (a seeded random subset), None for all.
    random_state : int
        Seed of the split and of the subset.

    Returns
    -------
    dict
        ``X`` (all points, standardized with the training statistics; a feature constant on
        the training points is only centred), ``y`` (in
        ``{-1, +1}``), ``train`` and ``test`` (index arrays).
    """
    from .. import datasets

    X, y = datasets.load("yeast", as_binary=list(YEAST_HIDDEN_CLASSES))
    sp = datasets.train_val_test_split(X, y, sizes=(0.7, 0.0, 0.3), random_state=random_state)
    tr, te = sp.train, sp.test
    if n_train is not None:
        tr = np.sort(np.random.default_rng(random_state).choice(tr, n_train, replace=False))
    mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
    sd = np.where(sd > 0, sd, 1.0)  # a feature constant on the training points stays as is
    return dict(X=(X - mu) / sd, y=y, train=tr, test=te)


def compare_training(X, y, *, n_states: int = 8, sigma: float = 0.01, n_steps: int,
                     random_state: int, methods=TRAINING_METHODS) -> dict:
    """Train the latent SVM by every method from one k-means start.

    PDGDP runs ``n_steps`` sub-gradient steps; AO and CCCP stop by their own criterion, SGD
    after its default epochs (:func:`~pathlib_core.pdgdp.latent.train_latent_svm`).

    Returns
    -------
    dict
        ``method -> LatentSVMResult``.
    """
    theta0 = kmeans_init(X, y, n_states, random_state=random_state)
    return {m: train_latent_svm(X, y, n_states=n_states, method=m, sigma=sigma, theta0=theta0,
                                max_iter=n_steps if m == "pdgdp" else None,
                                random_state=random_state)
            for m in methods}


def load_hiva(*, n_inactive: int, n_features: int = 500, random_state: int) -> dict:
    """A hiva subset for the model-selection experiment.

    Every active molecule and ``n_inactive`` inactive ones (a seeded draw), split 50 / 25 / 25
    into training, validation and test, with the ``n_features`` features of the largest
    training variance.

    Returns
    -------
    dict
        ``X``, ``y`` and the index arrays ``train``, ``val``, ``test``.
    """
    from .. import datasets

    X, y = datasets.load("hiva")
    rng = np.random.default_rng(random_state)
    keep = np.sort(np.r_[np.flatnonzero(y > 0),
                         rng.choice(np.flatnonzero(y < 0), n_inactive, replace=False)])
    X, y = X[keep], y[keep]
    sp = datasets.train_val_test_split(X, y, sizes=(0.5, 0.25, 0.25), random_state=random_state)
    feats = np.argsort(-X[sp.train].var(axis=0), kind="stable")[:n_features]
    return dict(X=X[:, feats], y=y, train=sp.train, val=sp.val, test=sp.test)


def compare_selection(data: dict, *, budget: int, max_iter: int = 350, random_state: int,
                      methods=SELECTION_METHODS) -> dict:
    """Select the hyperparameters on ``data`` (:func:`load_hiva`) by every method, each
    with ``budget`` QP solves.

    Returns
    -------
    dict
        ``method -> SelectionResult``.
    """
    X, y, tr, va = data["X"], data["y"], data["train"], data["val"]
    return {m: select_hyperparameters(X[tr], y[tr], X[va], y[va], method=m, budget=budget,
                                      max_iter=max_iter, random_state=random_state)
            for m in methods}
