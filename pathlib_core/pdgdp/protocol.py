"""The reproduction protocol of the PDGDP part (chapter ``pdgdp/04``).

Two experiments of the paper, rerun on offline data:

- Table 1 and Figure 1: latent-SVM training on yeast (eight of its ten classes against the
  other two, ``M = 8`` hidden states, ``sigma = 0.01``), PDGDP against AO, CCCP and SGD from one
  common k-means start (:func:`load_yeast`, :func:`compare_training`), the training times
  over repeated runs (:func:`time_training`), the cost of a PDGDP step with and without the
  cache of critical regions (:func:`pdgdp_step_costs`) and the shape of PDGDP's per-iteration
  trajectories (:func:`trajectory_summary`);
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
    "load_yeast", "compare_training", "time_training", "pdgdp_step_costs",
    "trajectory_summary", "load_hiva", "compare_selection",
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
        ``budget`` (QP solves of every selection method), ``n_inactive`` (hiva inactives
        kept beside its 135 actives) and ``repeat`` (runs of every training method whose
        best time is reported).
    """
    if mode == "quick":
        return dict(n_train=400, n_steps=100, budget=30, n_inactive=205, repeat=3)
    if mode == "full":
        return dict(n_train=None, n_steps=300, budget=186, n_inactive=405, repeat=3)
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


def time_training(X, y, *, n_states: int = 8, sigma: float = 0.01, n_steps: int,
                  random_state: int, repeat: int = 3, methods=TRAINING_METHODS) -> dict:
    """:func:`compare_training` run ``repeat`` times, every method timed (Table 1).

    The methods are deterministic, so the runs differ in their times only (the iteration
    counts are checked to agree). Each training is timed by the wall clock (the result's
    ``time``) and by the CPU time of the process, which waiting for a busy core does not
    inflate. Noise only adds time: report the best run, and the range over runs.

    Parameters
    ----------
    X, y, n_states, sigma, n_steps, random_state, methods
        As in :func:`compare_training` (one k-means start, computed once, for all runs).
    repeat : int >= 1
        Number of runs.

    Returns
    -------
    dict
        ``runs`` (``method -> LatentSVMResult`` of the last run), ``wall`` and ``cpu``
        (``method -> ndarray of shape (repeat,)``, seconds of every run).

    Raises
    ------
    ValueError
        ``repeat`` not an integer >= 1 (and the errors of :func:`compare_training`).
    RuntimeError
        Two runs of a method took different numbers of iterations (the method is not
        deterministic, so its times are not times of one computation).
    """
    import time

    if isinstance(repeat, bool) or not isinstance(repeat, int | np.integer) or repeat < 1:
        raise ValueError(f"repeat must be an integer >= 1; got {repeat!r}")
    theta0 = kmeans_init(X, y, n_states, random_state=random_state)
    wall = {m: [] for m in methods}
    cpu = {m: [] for m in methods}
    runs, n_iter = {}, {}
    for _ in range(int(repeat)):
        for m in methods:
            c0 = time.process_time()
            r = train_latent_svm(X, y, n_states=n_states, method=m, sigma=sigma,
                                 theta0=theta0,
                                 max_iter=n_steps if m == "pdgdp" else None,
                                 random_state=random_state)
            cpu[m].append(time.process_time() - c0)
            wall[m].append(r.time)
            if n_iter.setdefault(m, r.n_iter) != r.n_iter:
                raise RuntimeError(f"the runs of {m!r} took different numbers of "
                                   f"iterations ({n_iter[m]} and {r.n_iter})")
            runs[m] = r
    return dict(runs=runs, wall={m: np.array(v) for m, v in wall.items()},
                cpu={m: np.array(v) for m, v in cpu.items()})


def pdgdp_step_costs(X, y, result, *, n_steps: int = 20, repeat: int = 3) -> dict:
    """CPU seconds per PDGDP step with and without the cache of critical regions.

    Reruns the first steps of a PDGDP run (the same start ``theta_1`` and step ``tau``,
    hence the same iterates) in two ways: evaluating every component from a cached
    critical region where possible (Theorem 1, as in the run), and re-solving every
    component's dual QP at every step (warm-started), the cost of Algorithm 1 when each
    step enters new regions. The cost of a step is ``(t(n_steps + 1) - t(1)) / n_steps``
    with ``t(k)`` the best CPU time of ``repeat`` runs of ``k`` steps, so the common
    initial solve is not counted.

    Parameters
    ----------
    X, y : array_like
        The training data of the run.
    result : LatentSVMResult
        A PDGDP run on ``(X, y)`` with ``record_theta`` (its ``theta_history``).
    n_steps : int >= 1
        Steps timed (the run's steps at most).
    repeat : int >= 1
        Runs of every variant and length.

    Returns
    -------
    dict
        ``cached`` and ``resolved`` (seconds per step), ``qp_cached`` and ``qp_resolved``
        (QP solves of the timed steps) and ``n_steps`` (steps timed).

    Raises
    ------
    ValueError
        ``result`` not a PDGDP run of at least two steps with its ``theta_history``, or a
        count not an integer >= 1.
    """
    import time

    if (getattr(result, "method", None) != "pdgdp" or result.theta_history is None
            or result.n_iter < 2):
        raise ValueError("result must be a PDGDP LatentSVMResult of at least two steps "
                         "with its theta_history (record_theta=True)")
    for name, v in (("n_steps", n_steps), ("repeat", repeat)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
            raise ValueError(f"{name} must be an integer >= 1; got {v!r}")
    k = int(min(n_steps, result.n_iter - 1))
    theta0 = result.theta_history[0]
    out = {"n_steps": k}
    for key, use in (("cached", True), ("resolved", False)):
        t, qp = {}, {}
        for n in (1, k + 1):
            t[n] = np.inf
            for _ in range(int(repeat)):
                c0 = time.process_time()
                r = train_latent_svm(X, y, n_states=theta0.shape[1], theta0=theta0,
                                     step=result.step, max_iter=n, use_regions=use,
                                     record_theta=False)
                t[n] = min(t[n], time.process_time() - c0)
            qp[n] = r.n_qp_solves
        out[key] = max(t[k + 1] - t[1], 0.0) / k
        out[f"qp_{key}"] = qp[k + 1] - qp[1]
    return out


def trajectory_summary(result, X_test, y_test, *, tail: float = 0.1) -> dict:
    r"""The shape of PDGDP's per-iteration trajectories (the curves of Figure 1).

    Parameters
    ----------
    result : LatentSVMResult
        A PDGDP run (its histories).
    X_test, y_test : array_like
        Test data of the accuracy curve.
    tail : float in (0, 1)
        Fraction of the last steps whose share of the total decrease is reported.

    Returns
    -------
    dict
        ``n_steps``; for :math:`J(\theta_t)` (the objective Algorithm 1 descends) and
        for :math:`J(W_t, b_t)` (the model's objective) the start and end values
        (``theta_start``, ``theta_end``, ``model_start``, ``model_end``) and the number
        of steps at which they rose (``theta_rises``, ``model_rises``); ``rank_corr``
        (Spearman correlation of :math:`J(\theta_t)` with ``t``: -1 for a strictly
        decreasing curve); ``tail_share`` (share of the total decrease of
        :math:`J(\theta_t)` made in the last ``tail`` of the steps: about ``tail`` for a
        straight line, near 0 for a curve that has levelled off); ``accuracy_start``,
        ``accuracy_end``, ``accuracy_max`` (test accuracy) and ``accuracy_corr``
        (Spearman correlation of :math:`J(W_t, b_t)` with the test accuracy; NaN when
        either is constant).

    Raises
    ------
    ValueError
        ``result`` without a PDGDP history of at least one step, or ``tail`` outside
        (0, 1).
    """
    from scipy.stats import spearmanr

    Jt = np.asarray(getattr(result, "theta_objective_history", []), dtype=float)
    J = np.asarray(getattr(result, "objective_history", []), dtype=float)
    if getattr(result, "method", None) != "pdgdp" or Jt.size < 2 or J.size != Jt.size:
        raise ValueError("result must be a PDGDP LatentSVMResult of at least one step")
    if not 0.0 < float(tail) < 1.0:
        raise ValueError(f"tail must be in (0, 1); got {tail!r}")
    acc = result.accuracy_history(X_test, y_test)
    n = Jt.size - 1
    t = np.arange(Jt.size)

    def rises(v):  # steps that raised the value beyond rounding
        return int(np.sum(np.diff(v) > 1e-12 * np.maximum(np.abs(v[:-1]), 1e-300)))

    def corr(a, b):
        if np.ptp(a) == 0.0 or np.ptp(b) == 0.0:
            return float("nan")
        return float(spearmanr(a, b)[0])

    k = max(1, int(np.ceil(tail * n)))
    drop = Jt[0] - Jt[-1]
    return dict(
        n_steps=n, theta_start=float(Jt[0]), theta_end=float(Jt[-1]),
        model_start=float(J[0]), model_end=float(J[-1]),
        theta_rises=rises(Jt), model_rises=rises(J), rank_corr=corr(t, Jt),
        tail_share=float((Jt[n - k] - Jt[-1]) / drop) if drop > 0 else float("nan"),
        accuracy_start=float(acc[0]), accuracy_end=float(acc[-1]),
        accuracy_max=float(acc.max()), accuracy_corr=corr(J, acc))


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
