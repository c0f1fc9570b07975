"""Benchmarks of the Minimal Complexity Machine (issue 8): HiGHS LP fits against ``SVC``.

Measured in one run, on random stratified subsets of ``german`` (standardized, Gaussian kernel
with gamma = 1/d), at n in {200, 500, 1000} (``--quick``: {200, 500}):

* ``fit_mcm`` (the paper's LP, range form, ``method="highs"``) vs ``SVC(kernel="precomputed")``
  on the same kernel matrix: the ratio;
* the LP algorithm: HiGHS dual simplex (``highs-ds``) vs interior point (``highs-ipm``), each
  timed, with the method ``"highs"`` picks reported by its timing;
* the l1 variant (``l1 = 0.01``) vs ``SVC``;
* the conformal MCM's extra cost: ``ConformalMCMClassifier(l1=0.01)`` fit vs
  ``MCMClassifier(l1=0.01)`` fit (both from raw features, including kernel evaluation);
* the exact path over ``C`` in [0.01, 100] (``mcm_path``, l1 = 0.01) at n in {100, 200, 300}
  (``--quick``: {100}): against one fit at the largest ``C`` (goal: at most 3x), against a
  30-point log grid of fits over the same range, and model selection on the path
  (``mcm_path_cv``, 5 folds) against ``GridSearchCV(SVC)`` over the same 30 values of ``C``,
  the peer a user would pick instead;
* the chapter's nested cross-validation protocol (``pathlib_core.mcm.protocol``, 5 inner
  folds) on one outer fold of ``hepatitis`` and ``heart`` (``--quick``: ``hepatitis``), all
  five classifiers: the protocol as it runs (the plain MCM's ``C`` chosen on exact paths, the
  conformal step only at the base model's choice with ``D`` searched) against the former
  protocol, an inner grid search over every classifier's whole grid (one run of each).

Run: ``python benchmarks/bench_mcm.py --out benchmarks/results/mcm.json [--quick]``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_time, parse_args, ratio_row, write_report  # noqa: E402

from pathlib_core import datasets  # noqa: E402
from pathlib_core.core.kernels import rbf_kernel  # noqa: E402
from pathlib_core.mcm import (  # noqa: E402
    ConformalMCMClassifier,
    MCMClassifier,
    fit_mcm,
    protocol,  # noqa: E402
)
from pathlib_core.mcm.path import mcm_path, mcm_path_cv  # noqa: E402

#: the range of C of the path rows, and the l1 weight
C_RANGE, PATH_L1 = (0.01, 100.0), 0.01


def _subset(n: int, seed: int = 0):
    X, y = datasets.load("german", standardize=True)
    if n >= len(y):
        return X, y
    rng = np.random.default_rng(seed)
    idx = np.concatenate([rng.choice(np.flatnonzero(y == c), size=round(n * np.mean(y == c)),
                                     replace=False) for c in (-1.0, 1.0)])
    return X[np.sort(idx)], y[np.sort(idx)]


def bench_size(n: int, repeat: int) -> list[dict]:
    X, y = _subset(n)
    K = rbf_kernel(X, gamma=1.0 / X.shape[1])
    t_svc, _ = best_time(lambda: SVC(kernel="precomputed", C=1.0).fit(K, y), repeat=repeat)
    rows = []
    times = {}
    for method in ("highs", "highs-ds", "highs-ipm"):
        t, res = best_time(lambda m=method: fit_mcm(K, y, C=1.0, method=m), repeat=repeat)
        times[method] = (t, res)
    t, res = times["highs"]
    rows.append(ratio_row(f"MCM fit, n = {n}", "`fit_mcm` (the paper's LP; HiGHS picks the "
                          "algorithm) vs `SVC` on the same kernel matrix", t,
                          "`SVC(kernel='precomputed')`", t_svc, n=n, h=res.h,
                          n_support=res.n_support, rank=res.rank, max_kkt=res.kkt.max,
                          n_iter=res.n_iter))
    (t_ds, r_ds), (t_ipm, r_ipm) = times["highs-ds"], times["highs-ipm"]
    rows.append(ratio_row(f"MCM LP algorithm, n = {n}",
                          "`fit_mcm` by the HiGHS dual simplex vs by its interior-point method",
                          t_ds, "`fit_mcm(method='highs-ipm')`", t_ipm, n=n,
                          objective_ds=r_ds.objective,
                          objective_ipm=r_ipm.objective, max_kkt_ds=r_ds.kkt.max,
                          max_kkt_ipm=r_ipm.kkt.max))
    t1, r1 = best_time(lambda: fit_mcm(K, y, C=1.0, l1=0.01), repeat=repeat)
    rows.append(ratio_row(f"MCM with ℓ1 penalty, n = {n}", "`fit_mcm` with ℓ1 = 0.01 vs `SVC`",
                          t1, "`SVC(kernel='precomputed')`", t_svc, n=n, n_support=r1.n_support,
                          max_kkt=r1.kkt.max, n_iter=r1.n_iter))
    t_m, _ = best_time(lambda: MCMClassifier(C=1.0, l1=0.01).fit(X, y), repeat=repeat)
    t_c, cm = best_time(lambda: ConformalMCMClassifier(C=1.0, l1=0.01).fit(X, y),
                        repeat=repeat)
    rows.append(ratio_row(f"conformal MCM, n = {n}", "`ConformalMCMClassifier(l1=0.01)` vs "
                          "`MCMClassifier(l1=0.01)`, both fitted from the raw features",
                          t_c, "`MCMClassifier(l1=0.01)`", t_m, n=n,
                          n_cores=int(cm.cores_.shape[0]),
                          n_support=int(cm.support_.size)))
    return rows


def bench_path(n: int, repeat: int) -> list[dict]:
    X, y = _subset(n)
    K = rbf_kernel(X, gamma=1.0 / X.shape[1])
    lo, hi = C_RANGE
    t_path, path = best_time(lambda: mcm_path(K, y, C_min=lo, C_max=hi, l1=PATH_L1),
                             repeat=repeat)
    t_fit, fit = best_time(lambda: fit_mcm(K, y, C=hi, l1=PATH_L1), repeat=repeat)
    grid = np.geomspace(lo, hi, 30)
    t_grid, _ = best_time(lambda: [fit_mcm(K, y, C=C, l1=PATH_L1) for C in grid], repeat=1)
    nb = len(path)
    stats = dict(n=n, n_breakpoints=nb, per_breakpoint_ms=1e3 * t_path / nb,
                 simplex_iterations=path.info["simplex_iterations"],
                 n_solves=path.info["n_solves"], max_kkt=float(path.kkt_residuals().max()),
                 fit_n_iter=fit.n_iter)
    rows = [ratio_row(f"MCM path vs one fit, n = {n}",
                      f"`mcm_path` over C in [{lo:g}, {hi:g}] vs one fit at C = {hi:g}",
                      t_path, f"`fit_mcm(C={hi:g})`", t_fit, goal="ratio ≤ 3", goal_ratio=3.0,
                      **stats),
            ratio_row(f"MCM path vs a grid of 30 fits, n = {n}",
                      "`mcm_path` vs 30 fits on a log grid of C over the same interval",
                      t_path, "30 × `fit_mcm`", t_grid, n=n, n_breakpoints=nb)]
    folds = list(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    t_cv, cv = best_time(lambda: mcm_path_cv(K, y, folds, C_min=lo, C_max=hi, l1=PATH_L1),
                         repeat=1)
    gs = GridSearchCV(SVC(kernel="precomputed"), {"C": grid}, cv=folds)
    t_gs, _ = best_time(lambda: gs.fit(K, y), repeat=repeat)
    rows.append(ratio_row(f"MCM model selection on the path vs SVC grid search, n = {n}",
                          "model selection: `mcm_path_cv` (5 folds, exact over the whole "
                          "interval of C) vs `GridSearchCV(SVC)` over 30 values of C", t_cv,
                          "`GridSearchCV(SVC)`", t_gs, n=n, C=cv.C, cv_error=cv.best_error,
                          svc_C=float(gs.best_params_["C"]), svc_cv_error=1 - gs.best_score_,
                          fold_breakpoints=cv.n_breakpoints.tolist()))
    return rows


def bench_protocol(name: str) -> list[dict]:
    """One outer fold of the chapter's full-mode protocol: as it runs vs all-grid."""
    import time

    data = protocol.load_datasets([name], n_max=None, random_state=0)
    X, y, _ = data[name]
    tr, _ = next(StratifiedKFold(5, shuffle=True, random_state=0).split(X, y))
    t0 = time.perf_counter()
    rows = [r for f in protocol.FAMILIES for r in protocol.fit_family(
        data, name, 0, f, outer=5, inner=5, folds_seed=0)]
    t_new = time.perf_counter() - t0
    per_new = {r["method"]: r["t"] for r in rows}
    per_old = {}
    for m in protocol.METHODS:
        est, grid = protocol.make_method(m, X.shape[1])
        gs = GridSearchCV(est, grid, cv=StratifiedKFold(5, shuffle=True, random_state=0))
        t0 = time.perf_counter()
        gs.fit(X[tr], y[tr])
        per_old[m] = time.perf_counter() - t0
    sel = next(r["selection"] for r in rows if r["method"] == "MCM")
    return [ratio_row(f"nested cross-validation, one outer fold, {name}",
                      f"one outer fold of the chapter's nested cross-validation on {name} "
                      "(5 classifiers, 5 inner folds): the MCM's C chosen on exact paths, the "
                      "conformal step only at the base model's choice",
                      t_new, "inner grid search over every classifier's whole grid",
                      sum(per_old.values()), n=int(tr.size), per_method_s=per_new,
                      per_method_peer_s=per_old, mcm_selection=sel["how"],
                      mcm_path_breakpoints=sel["n_breakpoints"])]


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    repeat = 1 if args.quick else 3
    sizes = [200, 500] if args.quick else [200, 500, 1000]
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in sizes:
            results += bench_size(n, repeat)
        for n in ([100] if args.quick else [100, 200, 300]):
            results += bench_path(n, repeat)
        for name in (["hepatitis"] if args.quick else ["hepatitis", "heart"]):
            results += bench_protocol(name)
    write_report(args.out, suite="mcm", title="Minimal Complexity Machine: HiGHS LP vs SVC",
                 results=results,
                 notes=("Times are the best of several runs, on stratified subsets of the "
                        "German credit data (standardized features, Gaussian kernel with "
                        "γ = 1/d, C = 1). The MCM rows include the eigendecomposition of the "
                        "range form (ℓ1 = 0). The conformal rows include the base MCM, the "
                        "eigenproblem and the final MCM. The path rows use ℓ1 = 0.01 and C in "
                        "[0.01, 100]; each fit of the grid starts from scratch, as in the "
                        "chapter's grid search."))


if __name__ == "__main__":
    main()
