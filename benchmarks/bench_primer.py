"""Benchmarks of the core paths: ``svm_path`` and ``lasso_path`` against their peers.

Targets, each a ratio measured in this run:

* ``svm_path`` on breast_cancer (standardized, RBF, gamma = 1/d), C in [1e-2, 1e3], against
  ``SVC(kernel="precomputed")`` refit on a 30-point log grid: goal <= 2x the grid's time;
  and against an equal-resolution grid (as many SVC fits as the path has breakpoints): goal
  >= 10x faster. The equal-resolution grid is timed on a random sample of its C values and
  scaled to the full count (fits at nearby C cost alike; the sample size is recorded).
* ``lasso_path`` vs ``sklearn.linear_model.lars_path(method="lasso")``, whole path, on
  diabetes, on 1000 x 200 and 400 x 120 synthetic problems, and on designs with more features
  than samples (67 x 170 Gaussian, 200 x 1000): goal <= 1.0x, best of 5. Both run with one
  BLAS thread (``lasso_path`` sets it itself; ``lars_path`` is timed under the same limit, its
  faster setting on problems of this size).
* BLAS threads: ``lasso_path`` (400 x 120) and ``selective_fit`` (hinge loss, EEG-like
  196 x 6600, mu = 0.01 mu_0) in a fresh process *without* ``OMP_NUM_THREADS`` while another
  process keeps one core busy, against the same process with ``OMP_NUM_THREADS=1``: goal
  <= 1.3x (the package limits its own BLAS threads). For reference, the same run of the
  functions without the package's limit (``__wrapped__``) is recorded too.
* Scaling of ``svm_path`` with n (synthetic two-class RBF problem): time, breakpoints,
  log-log slopes. Both solvers of ``svm_path`` (the lean loop and the generic engine) are
  reported, the second as the "peer" of the first.

Run: ``python benchmarks/bench_primer.py --out benchmarks/results/primer.json [--quick]``.
"""

from __future__ import annotations

import os
import subprocess
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

from pathlib_core.core.threads import blas_controller  # noqa: E402
from pathlib_core.primer.lasso import lasso_path  # noqa: E402
from pathlib_core.primer.svm import svm_path  # noqa: E402

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
        ratio_row("SVM path vs 30-point SVC grid", "breast cancer, RBF kernel with γ = 1/d, "
                  "C in [1e-2, 1e3]", t_path, "`SVC` refit at 30 log-spaced values of C",
                  t_grid, goal="ratio ≤ 2", goal_ratio=2.0, **common),
        ratio_row("SVM path vs SVC grid at equal resolution", "as many SVC fits as the path "
                  f"has breakpoints ({sample.size} of them timed, scaled to all)", t_path,
                  f"`SVC` refit at {n_bp} values of C", t_equal,
                  goal="ratio ≤ 0.1 (10× faster)", goal_ratio=10.0, higher_is_better=True,
                  speedup=t_equal / t_path,
                  n_sampled=int(sample.size), **common),
    ]


def _synthetic_lasso(n=1000, p=200, seed=0, k=20):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    w = np.zeros(p)
    w[:k] = rng.normal(size=k)
    return X, X @ w + rng.normal(size=n)


def _gaussian(n, p, seed):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, p)), rng.standard_normal(n)


def bench_lasso(repeat: int) -> list[dict]:
    rows = []
    Xd, yd = load_diabetes(return_X_y=True)
    cases = {"diabetes (442 × 10)": (Xd, yd),
             "synthetic (1000 × 200)": _synthetic_lasso(),
             "synthetic (400 × 120)": _synthetic_lasso(400, 120, 1),
             "p > n: Gaussian (67 × 170)": _gaussian(67, 170, 1),
             "p > n: synthetic (200 × 1000)": _synthetic_lasso(200, 1000, 3)}
    with blas_controller().limit(limits=1, user_api="blas"):
        for name, (X, y) in cases.items():
            t_ours, path = best_time(lambda X=X, y=y: lasso_path(X, y), repeat=repeat,
                                     min_time=0.5)
            t_lars, out = best_time(lambda X=X, y=y: lars_path(X, y, method="lasso"),
                                    repeat=repeat, min_time=0.5)
            rows.append(ratio_row(f"Lasso path, {name}", "whole path, from α_max down to 0",
                                  t_ours, "`lars_path(method='lasso')`", t_lars,
                                  goal="ratio ≤ 1", goal_ratio=1.0,
                                  n_breakpoints=len(path.breakpoints),
                                  lars_breakpoints=len(out[0]),
                                  max_kkt=float(path.kkt_residuals().max())))
    return rows


_THREAD_WORKER = """
import sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
which, wrapped, repeat = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
if which == "lasso":
    from pathlib_core.primer.lasso import lasso_path as fn
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 120)); w = np.zeros(120); w[:20] = rng.normal(size=20)
    y = X @ w + rng.normal(size=400)
    call = lambda f: f(X, y)
else:
    from pathlib_core.selective_ridge import eeg_like, mu_0, selective_fit as fn
    X, y = eeg_like(random_state=0)
    mu = 0.01 * mu_0(X, y, alpha=1.0, loss="hinge")
    call = lambda f: f(X, y, alpha=1.0, mu=mu, loss="hinge")
f = fn.__wrapped__ if wrapped else fn
call(f)
best = min(
    (lambda t0: (call(f), time.perf_counter() - t0)[1])(time.perf_counter())
    for _ in range(repeat))
print(best)
"""


def _timed_subprocess(which: str, env: dict, wrapped: bool, repeat: int) -> float:
    out = subprocess.run([sys.executable, "-c", _THREAD_WORKER, which, "1" if wrapped else "0",
                          str(repeat)], env=env, capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def bench_threads(repeat: int) -> list[dict]:
    """One busy core; default BLAS threads vs one thread, in fresh processes."""
    base = {k: v for k, v in os.environ.items()
            if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    single = dict(base, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    rows = []
    try:
        for which, label, what in [
                ("lasso", "Lasso path", "`lasso_path`, 400 × 120"),
                ("selective", "selective ridge", "`selective_fit`, hinge loss, EEG-shaped "
                                                 "data 196 × 6600, μ = 0.01 μ₀")]:
            t_default = _timed_subprocess(which, base, False, repeat)
            t_one = _timed_subprocess(which, single, False, repeat)
            t_free = _timed_subprocess(which, base, True, repeat)
            rows.append(ratio_row(f"BLAS threads: {label}", f"{what}; default BLAS threads, "
                                  "another process keeping one core busy", t_default,
                                  "the same with `OMP_NUM_THREADS=1`",
                                  t_one, goal="ratio ≤ 1.3", goal_ratio=1.3,
                                  without_thread_control_s=t_free,
                                  without_thread_control_ratio=t_free / t_one))
    finally:
        busy.kill()
        busy.wait()
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
        rows.append(ratio_row(f"SVM path scaling, n = {n}", "synthetic two-class problem, "
                              "RBF kernel, C in [1e-2, 1e3]; the default solver vs the "
                              "generic engine", t_lean,
                              "`svm_path(solver='generic')`", t_gen, n=n,
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
    results += bench_lasso(5)
    results += bench_threads(2 if args.quick else 5)
    rows, slopes = bench_svm_scaling(sizes, 1 if args.quick else 2)
    results += rows
    write_report(args.out, suite="primer", title="Core paths: SVM path and Lasso homotopy",
                 results=results, slopes=slopes,
                 notes=("Times are the best of several runs. The SVM path's time includes "
                        "its start at the largest C (a libsvm fit, then made exact). Log-log "
                        "slopes against n in the scaling rows: time "
                        f"{slopes['time_vs_n']:.2f} with the default solver and "
                        f"{slopes['generic_time_vs_n']:.2f} with the generic engine; number "
                        f"of breakpoints {slopes['breakpoints_vs_n']:.2f}."))


if __name__ == "__main__":
    main()
