"""Benchmarks of the Minimal Complexity Machine (issue 8): HiGHS LP fits against ``SVC``.

Measured in one run, on random stratified subsets of ``german`` (standardized, Gaussian kernel
with gamma = 1/d), at n in {200, 500, 1000} (``--quick``: {200, 500}):

* ``fit_mcm`` (the paper's LP, range form, ``method="highs"``) vs ``SVC(kernel="precomputed")``
  on the same kernel matrix: the ratio;
* the LP algorithm: HiGHS dual simplex (``highs-ds``) vs interior point (``highs-ipm``), each
  timed, with the method ``"highs"`` picks reported by its timing;
* the l1 variant (``l1 = 0.01``) vs ``SVC``;
* the conformal MCM's extra cost: ``ConformalMCMClassifier(l1=0.01)`` fit vs
  ``MCMClassifier(l1=0.01)`` fit (both from raw features, including kernel evaluation).

Run: ``python benchmarks/bench_mcm.py --out benchmarks/results/mcm.json [--quick]``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
from sklearn.svm import SVC

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import best_time, parse_args, ratio_row, write_report  # noqa: E402

from pathlib_core import datasets  # noqa: E402
from pathlib_core.core.kernels import rbf_kernel  # noqa: E402
from pathlib_core.mcm import ConformalMCMClassifier, MCMClassifier, fit_mcm  # noqa: E402


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
    rows.append(ratio_row(f"mcm_fit_n{n}", "fit_mcm (paper's LP, HiGHS auto) vs SVC", t,
                          "SVC(precomputed)", t_svc, n=n, h=res.h, n_support=res.n_support,
                          rank=res.rank, max_kkt=res.kkt.max, n_iter=res.n_iter))
    (t_ds, r_ds), (t_ipm, r_ipm) = times["highs-ds"], times["highs-ipm"]
    rows.append(ratio_row(f"mcm_lp_method_n{n}", "fit_mcm dual simplex vs interior point",
                          t_ds, "highs-ipm", t_ipm, n=n, objective_ds=r_ds.objective,
                          objective_ipm=r_ipm.objective, max_kkt_ds=r_ds.kkt.max,
                          max_kkt_ipm=r_ipm.kkt.max))
    t1, r1 = best_time(lambda: fit_mcm(K, y, C=1.0, l1=0.01), repeat=repeat)
    rows.append(ratio_row(f"mcm_l1_fit_n{n}", "fit_mcm l1=0.01 vs SVC", t1,
                          "SVC(precomputed)", t_svc, n=n, n_support=r1.n_support,
                          max_kkt=r1.kkt.max, n_iter=r1.n_iter))
    t_m, _ = best_time(lambda: MCMClassifier(C=1.0, l1=0.01).fit(X, y), repeat=repeat)
    t_c, cm = best_time(lambda: ConformalMCMClassifier(C=1.0, l1=0.01).fit(X, y),
                        repeat=repeat)
    rows.append(ratio_row(f"conformal_mcm_fit_n{n}", "ConformalMCM (l1=0.01) vs MCM (l1=0.01)",
                          t_c, "MCMClassifier", t_m, n=n, n_cores=int(cm.cores_.shape[0]),
                          n_support=int(cm.support_.size)))
    return rows


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    repeat = 1 if args.quick else 3
    sizes = [200, 500] if args.quick else [200, 500, 1000]
    results = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for n in sizes:
            results += bench_size(n, repeat)
    write_report(args.out, suite="mcm", title="Minimal Complexity Machine: HiGHS LP vs SVC",
                 results=results,
                 notes=("Best of several runs on stratified subsets of german (standardized, "
                        "Gaussian kernel gamma = 1/d, C = 1). The MCM rows include the "
                        "eigendecomposition of the range form (l1 = 0). The conformal row "
                        "includes the base MCM, the eigenproblem and the final MCM."))


if __name__ == "__main__":
    main()
