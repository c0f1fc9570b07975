"""The reproduction protocol of the MCM part (chapter ``mcm/03``).

Five classifiers with a Gaussian basic kernel on standardized features -- ``SVC`` ("SVM"), the
paper's kernel LP ("MCM"), its ``l1`` variant ("MCM-l1"), the 8-step conformal MCM ("CMCM")
and the conformal kernel fed to ``SVC`` ("CSVM") -- are compared on binary data sets of the
offline registry by stratified outer folds. In the full mode each classifier's
hyperparameters are chosen by an inner grid search on the training fold; in the quick mode they
are fixed (``C = 1``, ``gamma = "scale"``, ``l1 = 0.01``, ``D = 1e-3``). The test fold is used
once. A second experiment, the learning curves, measures the conformal models' accuracy gain
over their base models on nested training sets of growing size and a fixed test set.

The pieces:

- :func:`load_binary` and :func:`load_datasets`: the data sets as the chapter uses them
  (class pairs, one-vs-rest, seeded stratified subsamples);
- :func:`make_method` and :func:`final_estimator`: the classifiers and their grids;
- :func:`select_mcm_by_path`: the plain MCM's ``C`` chosen on exact paths;
- :func:`select_mcm_l1`: MCM-l1's grid search, the selection of ``GridSearchCV`` with each
  fold's kernel computed once per width and slack-free fits reused at larger ``C``;
- :func:`fit_family` and :func:`run_protocol`: one (data set, outer fold, family) task (a base
  classifier and the conformal model that reuses its selection), and all of them through
  :func:`pathlib_core.experiments.runner.run_grid` (worker processes and a checkpoint folder,
  so that a long run resumes where it stopped);
- :func:`summarize`, :func:`interpolation_counts`, :func:`path_selection_counts`, :func:`wins`:
  the tables' numbers;
- :func:`learning_curves` and :func:`gain_shrink`: the learning-curve experiment and its
  verdict rule.
"""

from __future__ import annotations

import inspect
import time
import warnings
from collections import Counter

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold, train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from ..core.exceptions import SolverError
from ..core.kernels import rbf_kernel
from .estimators import ConformalMCMClassifier, ConformalSVMClassifier, MCMClassifier
from .path import mcm_path_cv

__all__ = [
    "PAIRS", "ONE_VS_REST", "ALL_DATASETS", "METHODS", "LEARNING_CURVE_PAIRS", "L1", "INNER_FOLDS",
    "protocol_settings", "learning_curve_settings", "load_binary", "load_datasets",
    "make_method", "final_estimator", "FAMILIES", "D_GRID", "PATH_C", "PATH_GAP_TOL",
    "PATH_MAX_BREAKPOINTS",
    "select_mcm_by_path", "select_mcm_l1", "fit_family", "run_protocol", "path_selection_counts",
    "summarize",
    "interpolation_counts", "wins", "nested_prefix", "learning_curves", "gain_shrink",
]

#: multiclass sets reduced to two of their classes (the paper's reductions)
PAIRS = {"balance": ("L", "R"), "ecoli": ("cp", "im"), "glass": ("1", "2")}
#: multiclass sets reduced to one class against the rest
ONE_VS_REST = {"tae": "1"}
#: the sixteen binary data sets of at most 1000 samples, in the order of the chapter's tables
ALL_DATASETS = ("hepatitis", "fertility", "tae", "sonar", "glass", "ecoli", "heart",
                "housevotes", "haberman", "ionosphere", "breast_cancer", "balance", "pima",
                "mammographic", "tic-tac-toe", "german")
METHODS = ("SVM", "MCM", "MCM-l1", "CMCM", "CSVM")
#: each conformal model and the base model its gain is measured against
LEARNING_CURVE_PAIRS = {"CMCM": "MCM-l1", "CSVM": "SVM"}
#: the fixed l1 weight of the quick mode (and the start of the full mode's grids)
L1 = 0.01
#: inner folds of the full mode's model selection. The papers do not fix an inner protocol;
#: three folds (training parts of 2/3 of the outer training fold) cost about a third of five
#: (measured on german's MCM-l1 grid: 66 s against 189 s per outer fold), which keeps the
#: paper-scale run of the chapter within its time budget on a 2-core machine
INNER_FOLDS = 3


def protocol_settings(mode: str) -> dict:
    """Data sets, subsample size and folds of a mode.

    Returns
    -------
    dict
        ``names`` (data sets), ``n_max`` (largest number of points kept, None for all),
        ``outer`` (outer folds) and ``inner`` (inner folds of the grid search; 0: the fixed
        quick-mode hyperparameters, no search).
    """
    if mode == "full":
        return dict(names=list(ALL_DATASETS), n_max=None, outer=5, inner=INNER_FOLDS)
    if mode == "quick":
        return dict(names=list(ALL_DATASETS[:12]), n_max=80, outer=3, inner=0)
    raise ValueError(f"mode must be 'quick' or 'full'; got {mode!r}")


def learning_curve_settings(mode: str) -> dict:
    """Data sets, training sizes and number of seeds of the learning curves of a mode."""
    if mode == "full":
        return dict(names=["pima", "mammographic", "german"], sizes=[25, 50, 100, 200, 400],
                    n_seeds=5)
    if mode == "quick":
        return dict(names=["pima", "mammographic"], sizes=[25, 50, 100, 200], n_seeds=3)
    raise ValueError(f"mode must be 'quick' or 'full'; got {mode!r}")


def load_binary(name: str):
    """``(X, y)`` of a registry data set as a two-class problem (``y`` in ``{-1, +1}``)."""
    from .. import datasets

    if name in PAIRS:
        a, b = PAIRS[name]
        X, ya = datasets.load(name, as_binary=a)
        _, yb = datasets.load(name, as_binary=b)
        keep = (ya > 0) | (yb > 0)
        return X[keep], ya[keep]
    if name in ONE_VS_REST:
        return datasets.load(name, as_binary=ONE_VS_REST[name])
    return datasets.load(name)


def load_datasets(names, *, n_max: int | None, random_state) -> dict:
    """The data sets, each cut to a stratified subsample of about ``n_max`` points.

    Parameters
    ----------
    names : sequence of str
    n_max : int or None
        Larger sets are subsampled (per class ``max(2, round(n_max * share))`` points, in
        their original order); None keeps every point.
    random_state : int or numpy.random.Generator
        The subsamples are drawn one data set after the other from this generator.

    Returns
    -------
    dict
        ``name -> (X, y, n_full)`` with ``n_full`` the size before subsampling.
    """
    rng = np.random.default_rng(random_state)
    data = {}
    for name in names:
        X, y = load_binary(name)
        n_full = len(y)
        if n_max is not None and n_full > n_max:
            idx = np.concatenate([
                rng.choice(np.flatnonzero(y == cl), size=max(2, round(n_max * np.mean(y == cl))),
                           replace=False) for cl in (-1.0, 1.0)])
            X, y = X[np.sort(idx)], y[np.sort(idx)]
        data[name] = (X, y, n_full)
    return data


def make_method(method: str, d: int):
    """A classifier of :data:`METHODS` with its quick-mode hyperparameters, and its full-mode
    grid.

    The Gaussian widths searched are ``{0.5, 1, 2} / d``, around the "scale" heuristic
    ``1 / (d Var X) = 1 / d`` on standardized features. SVM and the two plain MCMs are
    wrapped in a pipeline after a ``StandardScaler``; the conformal models standardize
    themselves (step 1 of the algorithm).

    Returns
    -------
    (estimator, dict)
        The estimator and its grid (keys prefixed for the pipeline step when wrapped).
    """
    g = "scale"
    widths = [0.5 / d, 1.0 / d, 2.0 / d]
    if method == "SVM":
        est, grid = SVC(C=1.0, gamma=g), {"C": [0.1, 1, 10, 100], "gamma": widths}
    elif method == "MCM":
        est, grid = MCMClassifier(C=1.0, gamma=g), {"C": [0.1, 1, 10, 100], "gamma": widths}
    elif method == "MCM-l1":
        est = MCMClassifier(C=1.0, gamma=g, l1=L1)
        grid = {"C": [0.1, 1, 10], "l1": [1e-3, 1e-2, 1e-1], "gamma": widths}
    elif method == "CMCM":
        est = ConformalMCMClassifier(C=1.0, l1=L1)
        grid = {"C": [0.1, 1, 10], "l1": [1e-3, 1e-2, 1e-1], "D": [1e-3, 1e-1], "gamma": widths}
    elif method == "CSVM":
        est = ConformalSVMClassifier(C=1.0, l1=L1)
        grid = {"C": [0.1, 1, 10], "D": [1e-3, 1e-1], "gamma": widths}
    else:
        raise ValueError(f"method must be one of {list(METHODS)}; got {method!r}")
    if method in ("SVM", "MCM", "MCM-l1"):
        est = make_pipeline(StandardScaler(), est)
        grid = {f"{est.steps[-1][0]}__{k}": v for k, v in grid.items()}
    return est, grid


def final_estimator(est):
    """The fitted classifier inside a grid search and / or a pipeline."""
    est = est.best_estimator_ if hasattr(est, "best_estimator_") else est
    return est.steps[-1][1] if hasattr(est, "steps") else est


#: the classifiers fitted in one task: a conformal model reuses the hyperparameters chosen for
#: its base model on the same training fold
FAMILIES = {"SVM": ("SVM", "CSVM"), "MCM": ("MCM",), "MCM-l1": ("MCM-l1", "CMCM")}
#: the conformal step's own parameter, searched (full mode) at the base model's choice
D_GRID = (1e-3, 1e-1)
#: the range of C over which the plain MCM's path is followed (that of its former grid)
PATH_C = (0.1, 100.0)
#: a path whose consecutive bases are further apart than this (relative, ``max_gap`` of
#: :func:`~pathlib_core.mcm.path.mcm_path_cv`) is not trusted: that width falls back to the grid
PATH_GAP_TOL = 1e-8
#: a fold's path with more pieces than this stops and its width falls back to the grid (the
#: plain LP's path has one piece on a full-rank kernel; many pieces come with a numerically
#: low-rank one, where the path is slow and the fallback cheaper)
PATH_MAX_BREAKPOINTS = 500


def _score(est, method: str, X, y, tr, te, t: float, caught) -> dict:
    """The row of one fitted classifier: test accuracy, support vectors, fit time, warnings
    (and ``h``, largest slack for the plain MCM)."""
    f = final_estimator(est)
    out = dict(method=method, acc=float(np.mean(est.predict(X[te]) == y[te])),
               nsv=int(len(f.support_)), ntr=len(tr), t=t,
               warnings=[f"{method}: {type(w.message).__name__}" for w in caught])
    if method == "MCM":
        out.update(h=float(f.h_), qmax=float(f.result_.slack.max()))
    return out


def _timed(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` recording its warnings; returns ``(value, seconds, warnings)``."""
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        value = fn(*args, **kwargs)
    return value, time.perf_counter() - t0, caught


def select_mcm_by_path(X, y, widths, *, inner: int, seed: int) -> dict:
    """Choose the plain MCM's ``(C, gamma)`` by inner cross-validation on exact paths in ``C``.

    For each Gaussian width the inner folds' paths over ``C`` in :data:`PATH_C`
    (:func:`~pathlib_core.mcm.path.mcm_path_cv`) give the cross-validation error as a step
    function of ``C``, minimized over the continuum. A width whose path fails (HiGHS on a
    numerically low-rank kernel), needs more than :data:`PATH_MAX_BREAKPOINTS` pieces on a
    fold, or whose bases do not meet within :data:`PATH_GAP_TOL` falls back to
    cross-validated fits on the C grid of :func:`make_method`. The features are
    standardized with the training fold's statistics (the later fit standardizes the same way).

    Returns
    -------
    dict
        ``C``, ``gamma``, ``error`` (the inner cross-validation error), ``how`` (``"path"``
        or ``"grid"``), ``interval`` (the best interval of ``C`` for a path, else None),
        ``n_breakpoints`` (summed over the folds' paths of the chosen width, 0 for the grid)
        and ``fallbacks`` (widths that used the grid).
    """
    Z = StandardScaler().fit_transform(X)
    folds = list(StratifiedKFold(inner, shuffle=True, random_state=seed).split(Z, y))
    _, grid = make_method("MCM", X.shape[1])
    best, fallbacks = None, 0
    for g in widths:
        try:
            cv = mcm_path_cv(rbf_kernel(Z, gamma=g), y, folds, C_min=PATH_C[0],
                             C_max=PATH_C[1], max_breakpoints=PATH_MAX_BREAKPOINTS)
            trusted = cv.max_gap <= PATH_GAP_TOL
        except SolverError:
            trusted = False
        if trusted:
            cand = dict(C=cv.C, gamma=g, error=cv.best_error, how="path",
                        interval=list(cv.best_interval),
                        n_breakpoints=int(cv.n_breakpoints.sum()))
        else:
            fallbacks += 1
            # cross-validated fits on the grid (a slack-free fit is reused at larger C); a fit
            # that fails (SolverError) scores nan and is ranked last; ties go to the smaller C
            Cs = grid["mcmclassifier__C"]
            acc, _, _ = _grid_accuracies(Z, y, folds, {"C": Cs, "gamma": [g], "l1": [0.0]},
                                         standardize=False)
            means = np.array([acc[(g, 0.0, C)].mean() for C in Cs])
            i = int(np.argmax(np.where(np.isnan(means), -np.inf, means)))
            err = 1.0 - float(means[i])
            cand = dict(C=float(Cs[i]), gamma=g, error=err if np.isfinite(err) else np.inf,
                        how="grid", interval=None, n_breakpoints=0)
        if best is None or cand["error"] < best["error"]:
            best = cand
    return dict(best, fallbacks=fallbacks)


def _grid_accuracies(X, y, folds, grid: dict, *, standardize: bool):
    """Validation accuracies of kernel MCMs over a ``C`` x ``gamma`` x ``l1`` grid.

    For each fold (standardized with its training part's statistics when ``standardize``)
    and width, the kernel is computed once; along increasing ``C`` a solution without slack
    is reused instead of solved (:func:`~pathlib_core.mcm.lp.at_larger_C`). A fit raising
    :class:`~pathlib_core.core.exceptions.SolverError` scores ``nan``. Prediction is that of
    :class:`~pathlib_core.mcm.estimators.MCMClassifier`: the kernel against the support
    vectors, ``+1`` where the decision value is positive.

    Returns ``({(gamma, l1, C): array of one accuracy per fold}, LPs solved, fits reused)``.
    """
    from .lp import at_larger_C, fit_mcm

    acc = {(g, l1, C): np.full(len(folds), np.nan) for g in grid["gamma"]
           for l1 in grid["l1"] for C in grid["C"]}
    n_solved = n_reused = 0
    for k, (itr, iva) in enumerate(folds):
        Z, Zv = X[itr], X[iva]
        if standardize:
            scaler = StandardScaler().fit(Z)
            Z, Zv = scaler.transform(Z), scaler.transform(Zv)
        for g in grid["gamma"]:
            K = rbf_kernel(Z, gamma=g)
            for l1 in grid["l1"]:
                prev = None
                for C in sorted(grid["C"]):
                    try:
                        if prev is not None and not np.any(prev.slack != 0.0):
                            res = at_larger_C(prev, C)
                            n_reused += 1
                        else:
                            res = fit_mcm(K, y[itr], C=C, l1=l1)
                            n_solved += 1
                    except SolverError:
                        prev = None
                        continue
                    prev = res
                    sv = res.support
                    f = (rbf_kernel(Zv, Z[sv], gamma=g) @ res.coef[sv] + res.intercept
                         if sv.size else np.full(len(iva), res.intercept))
                    acc[(g, l1, C)][k] = float(np.mean(np.where(f > 0, 1.0, -1.0) == y[iva]))
    return acc, n_solved, n_reused


def select_mcm_l1(X, y, grid: dict, cv) -> dict:
    """Choose MCM-l1's ``(C, gamma, l1)`` by inner cross-validation, as ``GridSearchCV`` would.

    The selection is that of ``GridSearchCV(make_pipeline(StandardScaler(),
    MCMClassifier()), grid, cv=cv)`` (:func:`make_method`'s ``"MCM-l1"`` grid): accuracy on
    each validation fold of a model fitted on the rest, standardized with that rest's
    statistics; the best mean accuracy wins, ties go to the first setting in the order of
    ``sklearn.model_selection.ParameterGrid``, and a fit that fails
    (:class:`~pathlib_core.core.exceptions.SolverError`) scores ``nan`` and ranks last. Each
    fold's kernel is computed once per width, and along ``C`` (increasing) a solution without
    slack is reused instead of solving the LP again: it is optimal for every larger ``C``
    (:func:`~pathlib_core.mcm.lp.at_larger_C`).

    Parameters
    ----------
    X, y : ndarray
        Training part (raw features; labels in {-1, +1}).
    grid : dict
        ``C``, ``gamma`` and ``l1`` candidate lists (keys with or without the pipeline's
        ``mcmclassifier__`` prefix).
    cv : cross-validation splitter or list of (train, validation) index pairs

    Returns
    -------
    dict
        ``params`` (the chosen ``C``, ``gamma``, ``l1``), ``mean_scores`` (one per setting,
        in ``ParameterGrid`` order), ``settings`` (the settings in that order), ``n_solved``
        (LPs solved) and ``n_reused`` (fits taken from a slack-free smaller ``C``).
    """
    from sklearn.model_selection import ParameterGrid

    grid = {k.split("__")[-1]: list(v) for k, v in grid.items()}
    if set(grid) != {"C", "gamma", "l1"}:
        raise ValueError(f"grid must have the keys C, gamma and l1; got {sorted(grid)}")
    settings = list(ParameterGrid(grid))
    folds = list(cv.split(X, y)) if hasattr(cv, "split") else list(cv)
    acc, n_solved, n_reused = _grid_accuracies(X, y, folds, grid, standardize=True)
    scores = np.array([acc[(p["gamma"], p["l1"], p["C"])] for p in settings])
    means = scores.mean(axis=1)
    if np.all(np.isnan(means)):
        raise SolverError("every MCM-l1 fit of the grid search failed")
    best = int(np.argmax(np.where(np.isnan(means), -np.inf, means)))
    return dict(params=dict(settings[best]), mean_scores=means, settings=settings,
                n_solved=n_solved, n_reused=n_reused)


def _conformal_at(method: str, params: dict, cv):
    """A conformal model at its base model's chosen ``params``, with ``D`` searched over
    :data:`D_GRID` on the same inner folds."""
    est = (ConformalMCMClassifier if method == "CMCM" else ConformalSVMClassifier)(**params)
    return GridSearchCV(est, {"D": list(D_GRID)}, cv=cv, n_jobs=1)


def fit_family(data: dict, name: str, fold: int, family: str, *, outer: int, inner: int,
               folds_seed: int, methods=METHODS) -> list[dict]:
    """One outer fold of one family of :data:`FAMILIES`: model selection (full mode) and fit on
    the training part, one evaluation per classifier on the test part.

    The folds are ``StratifiedKFold(outer, shuffle=True, random_state=folds_seed)``, the same
    for every method; the inner folds ``StratifiedKFold(inner, shuffle=True,
    random_state=folds_seed)`` of the training part.

    Model selection with ``inner > 0``:

    - SVM: grid search over :func:`make_method`'s grid (``GridSearchCV``);
    - MCM-l1: the same grid search by :func:`select_mcm_l1` (the same selection, with the
      fits at larger ``C`` taken from slack-free solutions), then a fit at the choice;
    - MCM: ``C`` chosen exactly over :data:`PATH_C` on the paths (:func:`select_mcm_by_path`),
      per Gaussian width;
    - CSVM and CMCM: the conformal step runs only at the hyperparameters chosen for the base
      model (SVM's ``C`` and width with ``l1 =`` :data:`L1`; MCM-l1's ``C``, ``l1`` and width),
      and searches only ``D`` over :data:`D_GRID`. Their fit time ``t`` counts that search
      and the final fit, not the base model's selection they reuse.

    With ``inner == 0`` every classifier is fitted with its fixed quick-mode hyperparameters.
    Only the members of ``methods`` are fitted, except that a conformal model's base model is
    always selected (its row is then not returned).

    Returns
    -------
    list of dict
        One row per classifier: ``method``, test accuracy ``acc``, support vectors ``nsv``,
        training size ``ntr``, fit time ``t``, the warnings raised by the fit
        (``"<method>: <category>"``), ``params`` (the chosen hyperparameters, full mode) and,
        for the plain MCM, the fitted ``h``, the largest slack ``qmax`` and ``selection``
        (:func:`select_mcm_by_path`'s record, full mode).
    """
    if family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}; got {family!r}")
    X, y, _ = data[name]
    tr, te = list(StratifiedKFold(outer, shuffle=True, random_state=folds_seed).split(X, y))[fold]
    d = X.shape[1]
    rows = []
    if not inner:
        for m in (m for m in FAMILIES[family] if m in methods):
            est, t, caught = _timed(make_method(m, d)[0].fit, X[tr], y[tr])
            rows.append(_score(est, m, X, y, tr, te, t, caught))
        return rows
    cv = StratifiedKFold(inner, shuffle=True, random_state=folds_seed)
    if family == "MCM":
        def select_and_fit():
            sel = select_mcm_by_path(X[tr], y[tr], make_method("MCM", d)[1]["mcmclassifier__gamma"],
                                     inner=inner, seed=folds_seed)
            est = make_pipeline(StandardScaler(), MCMClassifier(C=sel["C"], gamma=sel["gamma"]))
            return est.fit(X[tr], y[tr]), sel

        (est, sel), t, caught = _timed(select_and_fit)
        row = _score(est, "MCM", X, y, tr, te, t, caught)
        row.update(params=dict(C=sel["C"], gamma=sel["gamma"]), selection=sel)
        return [row]
    base, conformal = FAMILIES[family]
    est, grid = make_method(base, d)
    if base == "MCM-l1":
        def select_and_fit():
            sel = select_mcm_l1(X[tr], y[tr], grid, cv)
            fitted = make_pipeline(StandardScaler(), MCMClassifier(**sel["params"]))
            return fitted.fit(X[tr], y[tr]), sel["params"]

        (est, chosen), t, caught = _timed(select_and_fit)
    else:
        est, t, caught = _timed(GridSearchCV(est, grid, cv=cv, n_jobs=1).fit, X[tr], y[tr])
        chosen = {k.split("__")[-1]: v for k, v in est.best_params_.items()}
    if base in methods:
        rows.append(dict(_score(est, base, X, y, tr, te, t, caught), params=chosen))
    if conformal not in methods:
        return rows
    params = dict(chosen, l1=chosen.get("l1", L1))
    est, t, caught = _timed(_conformal_at(conformal, params, cv).fit, X[tr], y[tr])
    rows.append(dict(_score(est, conformal, X, y, tr, te, t, caught),
                     params=dict(params, D=est.best_params_["D"])))
    return rows


def run_protocol(data: dict, *, outer: int, inner: int, seed: int, methods=METHODS,
                 n_jobs: int = 1, checkpoint=None, context: dict | None = None) -> list[dict]:
    """Every (data set, outer fold, family) task of the protocol, as rows of its classifiers.

    Parameters
    ----------
    data : dict
        :func:`load_datasets`'s ``name -> (X, y, n_full)``.
    outer, inner : int
        Outer folds, and inner folds of the model selection (0: no search).
    seed : int
        Experiment seed: it fixes the folds (the run seeds the runner hands to each task are
        not used, the fits being deterministic).
    methods : sequence of str
        The classifiers kept; a family of :data:`FAMILIES` runs when one of its members is
        asked for (a conformal model needs its base model's selection).
    n_jobs : int
        Worker processes (:func:`~pathlib_core.experiments.runner.run_grid`).
    checkpoint : path-like, optional
        Folder keeping every finished task; a rerun of the same code and settings reuses
        them.
    context : dict, optional
        Further values the tasks depend on (e.g. the mode), part of the checkpoint identity
        next to the sources of the protocol's functions.

    Returns
    -------
    list of dict
        One row per (data set, outer fold, classifier): ``name``, ``fold``, ``method``,
        ``seed`` and :func:`fit_family`'s values, in the order data set, fold, method.
    """
    from ..experiments.runner import run_grid

    unknown = set(methods) - set(METHODS)
    if unknown:
        raise ValueError(f"methods must be among {list(METHODS)}; got {sorted(unknown)}")
    families = [f for f, members in FAMILIES.items() if set(members) & set(methods)]
    # the largest data sets first, so that no worker is left with one long task at the end
    # (the rows are put back in the data sets' order below)
    by_size = sorted(data, key=lambda name: -len(data[name][1]))
    settings = [dict(name=name, fold=k, family=f) for name in by_size for k in range(outer)
                for f in families]

    folds = seed  # the task's own seed argument is the runner's per-task seed (unused)

    def task(name, fold, family, seed):
        return {"rows": fit_family(data, name, fold, family, outer=outer, inner=inner,
                                   folds_seed=folds, methods=methods)}

    ctx = dict(context or {}, outer=outer, inner=inner, names=list(data), methods=list(methods),
               helpers="".join(inspect.getsource(f) for f in (
                   fit_family, select_mcm_by_path, select_mcm_l1, _grid_accuracies, _conformal_at,
                   _score, _timed, make_method, final_estimator)))
    done = run_grid(task, settings, seed=seed, n_jobs=n_jobs, progress=False,
                    checkpoint=checkpoint, checkpoint_context=ctx)
    order = {m: i for i, m in enumerate(METHODS)}
    rows = []
    for s, out in zip(settings, done, strict=True):
        rows.extend(dict(name=s["name"], fold=s["fold"], seed=seed, **r) for r in out["rows"])
    rows.sort(key=lambda r: (list(data).index(r["name"]), r["fold"], order[r["method"]]))
    return rows


def summarize(rows, methods=METHODS):
    """Per data set and method: the lists ``acc``, ``nsv``, ``ntr`` (and ``h``, ``qmax`` for
    the plain MCM) over the outer folds, the summed fit time ``t``; and the warnings of the
    fits counted by kind.

    Returns
    -------
    runs : dict
        ``name -> method -> {"acc": [...], "nsv": [...], "ntr": [...], "h": [...],
        "qmax": [...], "t": float}``.
    sv_fraction : dict
        ``name -> method ->`` mean over folds of support vectors / training points.
    fit_warnings : collections.Counter
    """
    runs, fit_warnings = {}, Counter()
    for r in rows:
        rec = runs.setdefault(r["name"], {m: dict(acc=[], nsv=[], ntr=[], h=[], qmax=[], t=0.0)
                                          for m in methods})
        rm = rec[r["method"]]
        for key in ("acc", "nsv", "ntr") + (("h", "qmax") if r["method"] == "MCM" else ()):
            rm[key].append(r[key])
        rm["t"] += r["t"]
        fit_warnings.update(r["warnings"])
    sv_fraction = {name: {m: float(np.mean(np.array(rec[m]["nsv"]) / np.array(rec[m]["ntr"])))
                          for m in methods} for name, rec in runs.items()}
    return runs, sv_fraction, fit_warnings


def interpolation_counts(runs: dict, tol: float = 1e-7) -> dict:
    """Per data set, the folds on which the plain MCM LP interpolated its training fold
    (``|h - 1| < tol`` and largest slack ``< tol``).

    Returns
    -------
    dict
        ``name -> (h array, qmax array, interpolated boolean array)``.
    """
    out = {}
    for name, rec in runs.items():
        h, q = np.array(rec["MCM"]["h"]), np.array(rec["MCM"]["qmax"])
        out[name] = (h, q, (np.abs(h - 1) < tol) & (q < tol))
    return out


def path_selection_counts(rows) -> dict | None:
    """How the plain MCM's ``C`` was chosen over the outer folds (full mode).

    Returns
    -------
    dict or None
        ``folds`` (outer folds with a selection), ``path`` (folds whose chosen width used the
        path), ``fallback_widths`` (widths, over all folds, that used the grid) and
        ``whole_range`` (folds whose best interval of ``C`` was all of :data:`PATH_C`: ``C``
        did not change the validation error); None when no fold ran a selection (quick mode).
    """
    sel = [r["selection"] for r in rows if r["method"] == "MCM" and r.get("selection")]
    if not sel:
        return None
    return dict(folds=len(sel), path=sum(s["how"] == "path" for s in sel),
                fallback_widths=sum(s["fallbacks"] for s in sel),
                whole_range=sum(s["interval"] is not None
                                and tuple(s["interval"]) == tuple(PATH_C) for s in sel))


def wins(runs: dict, a: str, b: str) -> int:
    """Data sets on which method ``a``'s mean accuracy exceeds ``b``'s (ties are no win)."""
    return sum(np.mean(runs[k][a]["acc"]) > np.mean(runs[k][b]["acc"]) + 1e-12 for k in runs)


def nested_prefix(y, n: int, perms: dict) -> np.ndarray:
    """Stratified training set of size about ``n``: the first ``max(2, round(n * share))``
    points of each class's permutation (so the sets for growing ``n`` are nested)."""
    return np.sort(np.concatenate([perms[cl][:max(2, round(n * np.mean(y == cl)))]
                                   for cl in (-1.0, 1.0)]))


def _learning_curve_seed(name: str, si: int, sizes, *, seed: int, methods) -> dict:
    """One data set and seed of :func:`learning_curves`: accuracies ``method -> list`` (one per
    size) and the warnings of the fits."""
    X, y = load_binary(name)
    Xp, Xt, yp, yt = train_test_split(X, y, test_size=min(300, round(0.4 * len(y))),
                                      stratify=y, random_state=seed + si)
    r = np.random.default_rng(seed + si)
    perms = {cl: r.permutation(np.flatnonzero(yp == cl)) for cl in (-1.0, 1.0)}
    acc = {m: [] for m in methods}
    caught_all = []
    for n in sizes:
        idx = nested_prefix(yp, n, perms)
        for m in methods:
            est, _ = make_method(m, X.shape[1])
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                est.fit(Xp[idx], yp[idx])
            caught_all += [f"{m} (learning curve): {type(w.message).__name__}" for w in caught]
            acc[m].append(float(np.mean(est.predict(Xt) == yt)))
    return {"acc": acc, "warnings": caught_all}


def learning_curves(names, sizes, n_seeds: int, *, seed: int,
                    methods=("SVM", "MCM-l1", "CMCM", "CSVM"), n_jobs: int = 1):
    """Test accuracy on nested training sets of growing size, with a fixed test set.

    For every data set and seed ``s`` in ``range(n_seeds)``, a stratified test set of
    ``min(300, round(0.4 n))`` points is held out (``random_state = seed + s``), the training
    sets for ``sizes`` are nested stratified prefixes of per-class permutations of the rest,
    and every method is fitted with the fixed quick-mode hyperparameters. The (data set, seed)
    tasks run on ``n_jobs`` worker processes
    (:func:`~pathlib_core.experiments.runner.run_grid`); the results do not depend on it.

    Returns
    -------
    accuracy : dict
        ``name -> method ->`` array of shape ``(n_seeds, len(sizes))``.
    fit_warnings : collections.Counter
        Warnings raised by the fits, ``"<method> (learning curve): <category>"``.
    """
    from ..experiments.runner import run_grid

    sizes, methods = list(sizes), list(methods)
    settings = [dict(name=name, si=si) for name in names for si in range(n_seeds)]
    base = seed  # the runner's per-task seed argument is not used: the tasks are seeded here

    def task(name, si, seed):
        return _learning_curve_seed(name, si, sizes, seed=base, methods=methods)

    done = run_grid(task, settings, seed=seed, n_jobs=n_jobs, progress=False)
    accuracy = {name: {m: np.full((n_seeds, len(sizes)), np.nan) for m in methods}
                for name in names}
    fit_warnings = Counter()
    for st, out in zip(settings, done, strict=True):
        for m in methods:
            accuracy[st["name"]][m][st["si"]] = out["acc"][m]
        fit_warnings.update(out["warnings"])
    return accuracy, fit_warnings


def gain_shrink(gains: np.ndarray) -> dict:
    """The verdict rule of the learning curves, fixed before the run.

    Parameters
    ----------
    gains : ndarray of shape (runs, sizes)
        Accuracy gain of a conformal model over its base model, one row per (data set, seed),
        one column per training size (increasing).

    Returns
    -------
    dict
        ``by_size`` (mean gain per size), ``shrink`` (mean of gain at the smallest minus gain
        at the largest size), ``se`` (its standard error) and ``shrinks``: True when the mean
        gain at the smallest size is positive and the shrink exceeds two standard errors.
    """
    g = np.asarray(gains, dtype=float)
    d = g[:, 0] - g[:, -1]
    se = float(d.std(ddof=1) / np.sqrt(d.size))
    return dict(by_size=g.mean(axis=0), shrink=float(d.mean()), se=se,
                shrinks=bool(g[:, 0].mean() > 0 and d.mean() > 2 * se))
