"""Benchmarks of the core paths (issue 3): ``svm_path`` and ``lasso_path`` against their peers.

Targets, each a ratio measured in this run:

* ``svm_path`` on breast_cancer (standardized, RBF, gamma = 1/d), C in [1e-2, 1e3], against
  ``SVC(kernel="precomputed")`` refit on a 30-point log grid: goal <= 2x the grid's time;
  and against an equal-resolution grid (as many SVC fits as the path has breakpoints): goal
  >= 10x faster. The equal-resolution grid is timed on a random sample of its C values and
  scaled to the full count (fits at nearby C cost alike; the sample size is recorded).
* ``lasso_path`` vs ``sklearn.linear_model.lars_path(method="lasso")`` on diabetes and on a
  1000 x 200 synthetic problem: goal <= 1.5x.
* Scaling of ``svm_path`` with n (synthetic two-class RBF problem): time, breakpoints,
  log-log slopes. Both solvers of ``svm_path`` (the lean loop and the generic engine) are
  reported, the second as the "peer" of the first.

Run: ``python benchmarks/bench_primer.py --out benchmarks/results/primer.json [--quick]``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import lars_path
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_time, parse_args, ratio_row, write_report  # noqa: E402

from pathlib_core.lasso import lasso_path  # noqa: E402
from pathlib_core.svm import svm_path  # noqa: E402

C_LO, C_HI = 1e-2, 1e3


def _svc_grid(K, y, Cs):
    for C in Cs:
        SVC(kernel="precomputed", C=float(C)).fit(K, y)


def bench_svm_breast_cancer(repeat: int, n_sample: int) -> list[dict]:
    X, y = load_breast_cancer(return_X_y=True)
    X = StandardScaler().fit_transform(X)
    y = np.where(y == 1, 1.0, -1.0)
    K = rbf_kernel(X, gamma=1.0 / X.shape[1])
    t_path, path = best_time(lambda: svm_path(K, y, C_max=C_HI, C_min=C_LO), repeat=repeat)
    n_bp = len(path.breakpoints)
    grid30 = np.geomspace(C_LO, C_HI, 30)
    t_grid, _ = best_time(lambda: _svc_grid(K, y, grid30), repeat=repeat)
    rng = np.random.default_rng(0)
    sample = rng.choice(path.breakpoints, size=min(n_sample, n_bp), replace=False)
    t_sample, _ = best_time(lambda: _svc_grid(K, y, sample), repeat=repeat)
    t_equal = t_sample * n_bp / sample.size
    common = dict(n=len(y), n_breakpoints=n_bp, max_kkt=float(path.kkt_residuals().max()),
                  n_engine_events=path.info.get("n_engine_events"))
    return [
        ratio_row("svm_path vs 30-point SVC grid", "breast_cancer, RBF gamma=1/d, C in "
                  "[1e-2, 1e3]", t_path, "SVC refit on 30 log-spaced C", t_grid,
                  goal="<= 2x", goal_ratio=2.0, **common),
        ratio_row("svm_path vs equal-resolution SVC grid", "as many SVC fits as breakpoints "
                  f"(timed on {sample.size}, scaled)", t_path,
                  f"SVC refit at {n_bp} C values", t_equal, goal=">= 10x faster",
                  goal_ratio=10.0, higher_is_better=True, speedup=t_equal / t_path,
                  n_sampled=int(sample.size), **common),
    ]


def _synthetic_lasso(seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(1000, 200))
    w = np.zeros(200)
    w[:20] = rng.normal(size=20)
    return X, X @ w + rng.normal(size=1000)


def bench_lasso(repeat: int) -> list[dict]:
    rows = []
    Xd, yd = load_diabetes(return_X_y=True)
    for name, (X, y) in {"diabetes (442 x 10)": (Xd, yd),
                         "synthetic (1000 x 200)": _synthetic_lasso()}.items():
        t_ours, path = best_time(lambda X=X, y=y: lasso_path(X, y), repeat=repeat,
                                 min_time=0.5)
        t_lars, _ = best_time(lambda X=X, y=y: lars_path(X, y, method="lasso"),
                              repeat=repeat, min_time=0.5)
        rows.append(ratio_row(f"lasso_path, {name}", "whole path, alpha_max down to 0",
                              t_ours, "lars_path(method='lasso')", t_lars, goal="<= 1.5x",
                              goal_ratio=1.5, n_breakpoints=len(path.breakpoints),
                              max_kkt=float(path.kkt_residuals().max())))
    return rows


def _two_class(n, seed=0, d=10):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, 1.0, -1.0)
    X = rng.normal(size=(n, d)) + 0.75 * y[:, None]
    X = StandardScaler().fit_transform(X)
    return rbf_kernel(X, gamma=1.0 / d), y


def bench_svm_scaling(sizes, repeat: int) -> tuple[list[dict], dict]:
    rows, ts, tg, bps = [], [], [], []
    for n in sizes:
        K, y = _two_class(n)
        t_lean, p = best_time(lambda K=K, y=y: svm_path(K, y, C_max=C_HI, C_min=C_LO),
                              repeat=repeat)
        t_gen, _ = best_time(lambda K=K, y=y: svm_path(K, y, C_max=C_HI, C_min=C_LO,
                                                        solver="generic"), repeat=1)
        ts.append(t_lean)
        tg.append(t_gen)
        bps.append(len(p.breakpoints))
        rows.append(ratio_row(f"svm_path scaling, n={n}", "synthetic 2-class RBF, C in "
                              "[1e-2, 1e3]; lean loop vs generic engine", t_lean,
                              "svm_path(solver='generic')", t_gen, n=n,
                              n_breakpoints=len(p.breakpoints),
                              n_engine_events=p.info.get("n_engine_events"),
                              max_kkt=float(p.kkt_residuals().max())))
    logn = np.log(np.asarray(sizes, dtype=float))
    slopes = {"time_vs_n": float(np.polyfit(logn, np.log(ts), 1)[0]),
              "generic_time_vs_n": float(np.polyfit(logn, np.log(tg), 1)[0]),
              "breakpoints_vs_n": float(np.polyfit(logn, np.log(bps), 1)[0])}
    return rows, slopes


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    repeat = 2 if args.quick else 5
    sizes = [250, 500] if args.quick else [250, 500, 1000, 2000]
    results = bench_svm_breast_cancer(repeat, n_sample=50 if args.quick else 200)
    results += bench_lasso(repeat)
    rows, slopes = bench_svm_scaling(sizes, 1 if args.quick else 2)
    results += rows
    write_report(args.out, suite="primer", title="Core paths: SVM path and Lasso homotopy",
                 results=results, slopes=slopes,
                 notes=("Best of several runs. svm_path includes its libsvm start at C_max "
                        "and the exact polishing. Log-log slopes of the scaling runs: "
                        + ", ".join(f"{k} = {v:.2f}" for k, v in slopes.items()) + "."))


if __name__ == "__main__":
    main()
