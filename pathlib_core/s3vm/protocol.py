r"""The experimental protocol of Ogawa et al. (2013), Section 6, on offline data.

One *split* of a dataset: half of the points for training, of which
``|L| = min(30, 10% of the training half)`` are labeled and the rest unlabeled; from the other
half a validation set of size ``|L|``; the rest is the test set. Gaussian kernel
``exp(-gamma |x - x'|^2)`` on standardized features. Model selection by validation error over
``C`` and ``gamma`` and, for the transductive methods, ``C^*``:

- SVM (labeled points only, free bias, libsvm);
- annealing TSVM: ``C^*`` among its annealing steps ``2^-9 C, ..., C``;
- CCCP-TSVM: ``C^*`` in ``{C/8, C/4, C/2, C}`` (one run each);
- S3VM path: ``C^*`` minimizing the validation error over the whole continuum ``[0, C]``.

Ties in the validation error go to the first setting in grid order (``C``, ``gamma``, then
increasing ``C^*``; for the path the largest minimizing ``C^*``).
"""

from __future__ import annotations

import time

import numpy as np

from ..core.exceptions import PathFollowingError
from ..core.kernels import rbf_kernel
from .baselines import annealing_tsvm, cccp_tsvm, supervised_svm
from .path import conditional_solution, s3vm_objective, s3vm_path, select_C_unlabeled

__all__ = ["DATASETS", "make_split", "run_split", "objective_comparison", "timing_study"]

#: ten binary datasets of 200-1000 points from the offline registry (low and high dimension;
#: spambase, 4597 points, was dropped: one path on its training half did not finish in 230 s)
DATASETS = ("sonar", "heart", "spectf", "ionosphere", "wisconsin", "breast_cancer", "pima",
            "mammographic", "german", "saheart")


def make_split(y, random_state):
    """Index arrays ``(labeled, unlabeled, validation, test)`` of one random split.

    A random permutation is cut in half: the first half (``n // 2`` points) is the training
    set, whose first ``|L| = min(30, int(0.1 * (n // 2)))`` points are labeled and the rest
    unlabeled; the second half gives a validation set of ``|L|`` points and the test set
    (the rest). Permutations are redrawn (up to 100 times) until the labeled points contain
    both classes.

    Parameters
    ----------
    y : ndarray of shape (n,)
        Labels (a NumPy array: it is indexed with index arrays); only used to require both
        classes among the labeled points. Not otherwise validated.
    random_state : int or numpy.random.Generator
        Seed of :func:`numpy.random.default_rng`.

    Returns
    -------
    labeled, unlabeled, validation, test : ndarray of int
        Disjoint index arrays into ``y`` that together cover ``range(n)``, in the random
        order of the permutation (not sorted).

    Raises
    ------
    ValueError
        No draw out of 100 put both classes among the labeled points (always the case when
        ``n < 40``, where ``|L| <= 1``).
    """
    rng = np.random.default_rng(random_state)
    n = len(y)
    for _ in range(100):
        perm = rng.permutation(n)
        train, rest = perm[: n // 2], perm[n // 2:]
        n_lab = min(30, int(0.1 * len(train)))
        lab, unl = train[:n_lab], train[n_lab:]
        val, test = rest[:n_lab], rest[n_lab:]
        if len(np.unique(y[lab])) == 2:
            return lab, unl, val, test
    raise ValueError("could not draw a split with both classes among the labeled points")


def _training_half(y, random_state):
    """:func:`make_split` and the training set: its indices (labeled first) and labels (0 on
    the unlabeled points)."""
    lab, unl, val, test = make_split(y, random_state)
    tr = np.r_[lab, unl]
    ytr = np.r_[y[lab], np.zeros(len(unl))]
    return lab, unl, val, test, tr, ytr


def _err(f, y):
    return float(np.mean(np.where(f >= 0, 1.0, -1.0) != y))


def run_split(X, y, random_state, *, Cs=(1, 10, 100, 1000), gamma_factors=(1.0,), n_steps=10):
    """Run the four methods with model selection on one split; one row per method.

    Each row: ``method``, ``trans_err`` (unlabeled training points), ``test_err``,
    ``val_err``, the selected ``C``, ``gamma``, ``C_unlabeled`` and the training ``time``
    summed over the grid.

    The split is :func:`make_split` with ``random_state``; the kernel is the Gaussian
    ``exp(-gamma |x - x'|^2)`` with ``gamma = g / d`` for each ``g`` in ``gamma_factors``. The
    methods and their ``C^*`` candidates are those of the module docstring: the supervised
    SVM on the labeled points, annealing TSVM (every annealing step is a candidate), CCCP-TSVM
    with ``C^* in {C/8, C/4, C/2, C}`` and the S3VM path over ``[0, C]``
    (:func:`pathlib_core.s3vm.path.select_C_unlabeled`). For each method the setting with the
    smallest validation error is kept (ties: the first in grid order).

    Parameters
    ----------
    X : ndarray of shape (n, d)
        Features; expected standardized (not done here).
    y : ndarray of shape (n,)
        Labels in {-1, +1}.
    random_state : int
        Seed of the split (:func:`make_split`); stored in the rows as ``seed`` (so a
        Generator, which :func:`make_split` would accept, is not).
    Cs : sequence of float, default (1, 10, 100, 1000)
        Candidate labeled-loss weights ``C``.
    gamma_factors : sequence of float, default (1.0,)
        Kernel widths as multiples of ``1 / d``.
    n_steps : int, default 10
        Annealing steps of the annealing TSVM.

    Returns
    -------
    list of dict
        One row per method (``"SVM"``, ``"annealing"``, ``"CCCP"``, ``"S3VM path"``) with the
        keys ``method``, ``seed``, ``val_err``, ``trans_err``, ``test_err`` (error rates in
        [0, 1]; a decision value ``f >= 0`` predicts ``+1``), the selected ``C``, ``gamma``
        and ``C_unlabeled`` (0.0 for the SVM), ``time`` (seconds of training over the whole
        grid), the sizes ``n_train`` and ``n_lab``, and ``path_failures``: the number of
        ``(C, gamma)`` cells of the grid where the S3VM path could not be followed
        (:class:`~pathlib_core.core.exceptions.PathFollowingError`, e.g. a kernel matrix so
        ill-conditioned that the path is not determined). The path's model selection uses
        the other cells; if every cell fails, its row has ``nan`` errors and ``C``. The other
        methods' rows have ``path_failures = 0``.

    Raises
    ------
    ValueError
        From :func:`make_split`, or from the solvers on bad input.
    """
    lab, unl, val, test, tr, ytr = _training_half(y, random_state)
    isu = ytr == 0
    d = X.shape[1]
    best = {}
    times = {m: 0.0 for m in ("SVM", "annealing", "CCCP", "S3VM path")}
    path_failures = 0

    def offer(method, verr, key, fpair):
        if method not in best or verr < best[method][0]:
            best[method] = (verr, key, fpair)

    for g in gamma_factors:
        gamma = g / d
        K = rbf_kernel(X[tr], gamma=gamma)
        Kv = rbf_kernel(X[tr], X[val], gamma=gamma)
        Kt = rbf_kernel(X[tr], X[test], gamma=gamma)

        def fpair(coef, b, K=K, Kt=Kt):
            return (K @ coef + b)[isu], Kt.T @ coef + b

        for C in Cs:
            t0 = time.perf_counter()
            r = supervised_svm(K, ytr, C=C)
            times["SVM"] += time.perf_counter() - t0
            offer("SVM", _err(r.decision_function(Kv), y[val]), (C, gamma, 0.0),
                  fpair(r.coef, r.intercept))
            t0 = time.perf_counter()
            r = annealing_tsvm(K, ytr, C=C, C_unlabeled=C, n_steps=n_steps, keep_steps=True)
            times["annealing"] += time.perf_counter() - t0
            for cu, coef, _ in r.info["steps"]:
                offer("annealing", _err(Kv.T @ coef + r.intercept, y[val]), (C, gamma, cu),
                      fpair(coef, r.intercept))
            for cu in (C / 8, C / 4, C / 2, C):
                t0 = time.perf_counter()
                r = cccp_tsvm(K, ytr, C=C, C_unlabeled=cu)
                times["CCCP"] += time.perf_counter() - t0
                offer("CCCP", _err(r.decision_function(Kv), y[val]), (C, gamma, cu),
                      fpair(r.coef, r.intercept))
            t0 = time.perf_counter()
            try:
                p = s3vm_path(K, ytr, C=C, C_unlabeled_max=C)
            except PathFollowingError:
                # (counted and reported by the rows; the other cells select the model)
                times["S3VM path"] += time.perf_counter() - t0
                path_failures += 1
                continue
            times["S3VM path"] += time.perf_counter() - t0
            cu, verr = select_C_unlabeled(p, Kv, y[val])
            rec = p.at(cu)
            offer("S3VM path", verr, (C, gamma, cu), fpair(rec.coef, rec.intercept))
    rows = []
    for m in times:
        if m not in best:  # the path failed on every cell of the grid
            rows.append(dict(method=m, seed=int(random_state), val_err=np.nan,
                             trans_err=np.nan, test_err=np.nan, C=np.nan, gamma=np.nan,
                             C_unlabeled=np.nan, time=times[m], n_train=len(tr),
                             n_lab=len(lab), path_failures=path_failures))
            continue
        verr, (C, gamma, cu), (fu, ft) = best[m]
        rows.append(dict(method=m, seed=int(random_state), val_err=verr,
                         trans_err=_err(fu, y[unl]),
                         test_err=_err(ft, y[test]), C=C, gamma=gamma, C_unlabeled=cu,
                         time=times[m], n_train=len(tr), n_lab=len(lab),
                         path_failures=path_failures if m == "S3VM path" else 0))
    return rows


def objective_comparison(X, y, random_state, *, Cs=(1, 10, 100, 1000), n_steps=10):
    r"""Figure 5: ``J`` of each method's labels, re-solved, at ``gamma = 1/d``, ``C^* = C``.

    For each method the predicted labels of the unlabeled points are taken (annealing: its
    ``y_hat``; CCCP and the path: ``sign f``) and the conditional problem (eq. (5)) is
    solved for them; its ``J`` is reported. Rows: ``method``, ``C``, ``J``, ``trans_err``.

    The value reported is

    .. math::

        J = \min_{f \in \mathrm{pol}(\hat y)} \tfrac12 \beta^\top K \beta
            + C \sum_{i \in L} [1 - y_i f(x_i)]_+ + C \sum_{i \in U} [1 - \hat y_i f(x_i)]_+,

    eq. (1) at :math:`C^* = C`, minimized over the polytope of the method's labels
    :math:`\hat y` (:func:`pathlib_core.s3vm.path.conditional_solution`), so the methods are
    compared on the labelings they find rather than on their own stopping points.

    Parameters
    ----------
    X, y : ndarray of shape (n, d) and (n,)
        The data set, as for :func:`run_split` (standardized features, labels in {-1, +1}).
    random_state : int
        Seed of the split (:func:`make_split`; the validation and test parts are unused);
        stored in the rows as ``seed``.
    Cs : sequence of float, default (1, 10, 100, 1000)
        Values of ``C`` (``C^* = C`` each time); the kernel width is ``gamma = 1 / d``.
    n_steps : int, default 10
        Annealing steps of the annealing TSVM.

    Returns
    -------
    list of dict
        One row per ``C`` and method (``"annealing"``, ``"CCCP"``, ``"S3VM path"``) with the
        keys ``method``, ``seed``, ``C``, ``J`` (float) and ``trans_err`` (error rate of the
        method's labels on the unlabeled training points).

    Raises
    ------
    ValueError
        From :func:`make_split`, or from the solvers on bad input.
    pathlib_core.core.exceptions.SolverError
        A conditional problem could not be solved.
    """
    lab, unl, _, _, tr, ytr = _training_half(y, random_state)
    isu = ytr == 0
    K = rbf_kernel(X[tr], gamma=1.0 / X.shape[1])
    rows = []
    for C in Cs:
        labels = {
            "annealing": annealing_tsvm(K, ytr, C=C, C_unlabeled=C, n_steps=n_steps).labels,
            "CCCP": cccp_tsvm(K, ytr, C=C, C_unlabeled=C).labels,
            "S3VM path": s3vm_path(K, ytr, C=C, C_unlabeled_max=C).at(C).labels,
        }
        for m, lv in labels.items():
            rec, _, _ = conditional_solution(K, ytr, lv, C=C, C_unlabeled=C)
            J = s3vm_objective(K, ytr, rec.labels, rec.coef, rec.intercept, C=C,
                               C_unlabeled=C)
            rows.append(dict(method=m, seed=int(random_state), C=C, J=J,
                             trans_err=float(np.mean(lv[isu] != y[unl]))))
    return rows


def timing_study(X, y, random_state, *, C=10.0, steps=(1, 2, 5, 10, 20), candidates=(1, 2, 4, 8),
                 repeat=3, clock="wall"):
    """Figure 6: training time vs annealing steps / number of ``C^*`` candidates.

    Annealing with ``n_steps`` in ``steps`` (final ``C^* = C``); CCCP run once for each of
    ``k`` candidates ``C^* = C 2^{-j}``, ``j < k``; the S3VM path once over ``[0, C]``.
    The ``repeat`` rounds go through every setting in turn (round-robin), so that a busy
    spell of a shared machine falls on all methods alike rather than on one of them.

    Parameters
    ----------
    X, y : arrays
        The data set (labels in {-1, +1}); split by :func:`make_split` with ``random_state``.
    random_state : int
        Split seed.
    C : float
        Labeled-loss weight; also the final ``C^*`` of annealing and of the path.
    steps, candidates : sequences of int
        Annealing step counts and CCCP candidate counts to time.
    repeat : int
        Each time is the best of ``repeat`` runs (noise on a shared machine only adds time).
    clock : {"wall", "cpu"}, default "wall"
        ``"wall"``: elapsed time (``time.perf_counter``); ``"cpu"``: CPU time of the process,
        all its threads (``time.process_time``), which time spent waiting for a core busy
        with other work does not inflate.

    Returns
    -------
    list of dict
        One row per measurement: ``method``, ``k`` (steps, candidates, or the path's number
        of breakpoints) and ``time`` in seconds.
    """
    if int(repeat) < 1:
        raise ValueError(f"repeat must be a positive integer; got {repeat!r}")
    if clock not in ("wall", "cpu"):
        raise ValueError(f"clock must be 'wall' or 'cpu'; got {clock!r}")
    now = time.perf_counter if clock == "wall" else time.process_time
    lab, unl, _, _, tr, ytr = _training_half(y, random_state)
    K = rbf_kernel(X[tr], gamma=1.0 / X.shape[1])

    jobs = [("annealing", s, lambda s=s: annealing_tsvm(K, ytr, C=C, C_unlabeled=C,
                                                          n_steps=s))
            for s in steps]
    jobs += [("CCCP", k, lambda k=k: [cccp_tsvm(K, ytr, C=C, C_unlabeled=C * 2.0 ** (-j))
                                      for j in range(k)])
             for k in candidates]
    jobs.append(("S3VM path", None, lambda: s3vm_path(K, ytr, C=C, C_unlabeled_max=C)))
    best = [float("inf")] * len(jobs)
    path = None
    for _ in range(int(repeat)):
        for i, (method, _, fn) in enumerate(jobs):
            t0 = now()
            out = fn()
            best[i] = min(best[i], now() - t0)
            if method == "S3VM path":
                path = out
    return [dict(method=m, k=(len(path.breakpoints) if k is None else k), time=float(t))
            for (m, k, _), t in zip(jobs, best, strict=True)]
