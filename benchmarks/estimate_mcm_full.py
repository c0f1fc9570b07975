"""Wall-time estimate of MODE="full" of notebooks/mcm/03_algorithm_and_reproduction.ipynb.

The full mode runs, on 16 datasets at full size, 5 outer stratified folds and inside each a
5-fold ``GridSearchCV`` per classifier over the notebook's grids (SVM 12 points, MCM 12,
MCM-l1 27, CMCM 54, CSVM 18), then one refit on the outer training fold. Running it is not
affordable here, so this script times ONE outer fold per dataset:

* datasets in ``EXACT`` (the smallest): the whole inner grid search of the first outer fold,
  exactly as the notebook runs it;
* the others: for each classifier, ``SAMPLE`` grid points drawn with a fixed seed, each fitted
  on the first inner training split; one fold is
  then estimated as ``mean fit time x (grid size x 5 + (5/4)^2)``, the last term the refit
  on 5/4 as many points at an assumed quadratic cost (the LP fits grow at least that fast).

The full-mode estimate is 5 x (one outer fold), summed over the datasets, plus the learning
curves (timed separately by the notebook). Grid points differ in cost (C, l1), so the sampled
part is an estimate; the script reports the spread of the sampled fit times.

Run: ``python benchmarks/estimate_mcm_full.py --out benchmarks/estimates/mcm_full.json``
(``--quick``: two small datasets only).
"""

from __future__ import annotations

import itertools
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, StratifiedKFold

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import parse_args, ratio_row, write_report  # noqa: E402

from pathlib_core.mcm.protocol import ALL_DATASETS, METHODS, load_binary  # noqa: E402
from pathlib_core.mcm.protocol import make_method as make  # noqa: E402

ALL = list(ALL_DATASETS)
EXACT = ["hepatitis", "fertility"]
OUTER = INNER = 5
SAMPLE = 2
REFIT_SCALE = (OUTER / (OUTER - 1)) ** 2  # refit on 5/4 as many points, cost ~ n^2 assumed


def _fit_time(est, X, y) -> float:
    t0 = time.perf_counter()
    est.fit(X, y)
    return time.perf_counter() - t0


def one_fold(name: str, exact: bool, seed: int = 0) -> dict:
    X, y = load_binary(name)
    tr, _ = next(StratifiedKFold(OUTER, shuffle=True, random_state=seed).split(X, y))
    Xo, yo = X[tr], y[tr]
    inner = StratifiedKFold(INNER, shuffle=True, random_state=seed)
    itr, _ = next(inner.split(Xo, yo))
    rng = np.random.default_rng(seed)
    out = {"n": int(len(y)), "n_outer_train": int(len(tr)), "n_inner_train": int(len(itr)),
           "methods": {}}
    for m in METHODS:
        est, grid = make(m, X.shape[1])
        points = [dict(zip(grid, v, strict=True)) for v in itertools.product(*grid.values())]
        if exact:
            t = _fit_time(GridSearchCV(est, grid, cv=inner, n_jobs=1), Xo, yo)
            out["methods"][m] = {"fold_s": t, "grid": len(points), "measured": "whole fold"}
            continue
        pick = rng.choice(len(points), size=min(SAMPLE, len(points)), replace=False)
        ts = [_fit_time(clone(est).set_params(**points[i]), Xo[itr], yo[itr]) for i in pick]
        t_refit = float(np.mean(ts)) * REFIT_SCALE
        fold = float(np.mean(ts)) * len(points) * INNER + t_refit
        out["methods"][m] = {"fold_s": fold, "grid": len(points), "sampled_fit_s": ts,
                             "refit_s": t_refit, "measured": f"{len(ts)} sampled fits"}
    out["fold_s"] = float(sum(v["fold_s"] for v in out["methods"].values()))
    return out


def main() -> None:
    args = parse_args(__doc__.splitlines()[0])
    names = EXACT if args.quick else ALL
    rows, per = [], {}
    t_all = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in names:
            r = one_fold(name, exact=name in EXACT)
            per[name] = r
            print(f"{name:14s} n={r['n']:4d}  one outer fold {r['fold_s']:9.1f} s  " + "  ".join(
                f"{m} {v['fold_s']:.1f}" for m, v in r["methods"].items()), flush=True)
            rows.append(ratio_row(f"mcm_full_{name}", f"notebook 3 full mode on {name} "
                                  f"(estimated, {OUTER} outer folds)", OUTER * r["fold_s"],
                                  "one outer fold", r["fold_s"], n=r["n"],
                                  per_method_fold_s={m: v["fold_s"]
                                                     for m, v in r["methods"].items()},
                                  measured="whole fold" if name in EXACT else
                                  f"{SAMPLE} sampled fits per classifier"))
    total = OUTER * sum(r["fold_s"] for r in per.values())
    write_report(args.out, suite="mcm_full_estimate",
                 title="MCM chapter 3: estimated wall time of MODE='full'", results=rows,
                 estimated_total_s=total, script_s=time.perf_counter() - t_all,
                 notes=(f"Estimated full-mode time of the nested CV over {len(per)} datasets: "
                        f"{total:.0f} s ({total / 3600:.1f} h), from one timed outer fold per "
                        "dataset (whole inner grid for " + ", ".join(EXACT) + "; sampled grid "
                        "points for the others) times 5. Excludes the learning curves."))
    print(f"estimated full mode (nested CV only): {total:.0f} s = {total / 3600:.2f} h")


if __name__ == "__main__":
    main()
