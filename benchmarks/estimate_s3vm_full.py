"""Estimate of the run time of MODE="full" of notebooks/s3vm/03_reproduction.ipynb.

Full mode runs, for each of the ten data sets of ``s3vm_protocol.DATASETS``: 10 splits of
``run_split`` on the whole grid (C in {1, 10, 100, 1000} x five gamma factors), 3 splits of
``objective_comparison`` and one ``timing_study``. Running it is too long for a session, so this
script times ONE split of each piece per data set (seed 0, n_jobs = 1) and extrapolates:
``estimate = 10 t_split + 3 t_objective + t_timing``. The split-to-split variation of the
times is not measured (one split each), so the estimate is rough (the path's cost grows with
the number of breakpoints and label flips, which vary between splits).

The report goes to ``benchmarks/estimates/`` (not ``results/``: it is an estimate, not a
timed comparison, and the book's performance page lists only ``results/``).

Usage: ``.venv/bin/python benchmarks/estimate_s3vm_full.py --out
benchmarks/estimates/s3vm_full.json`` (``--quick``: the first two data sets only).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import parse_args, write_report  # noqa: E402

from pathlib_core import datasets  # noqa: E402
from pathlib_core.s3vm import protocol as proto  # noqa: E402

CS = (1, 10, 100, 1000)
GAMMAS = (0.25, 0.5, 1.0, 2.0, 4.0)
N_SPLITS, N_OBJ = 10, 3


def main() -> None:
    args = parse_args(__doc__)
    names = list(proto.DATASETS)[:2] if args.quick else list(proto.DATASETS)
    rows = []
    for name in names:
        X, y = datasets.load(name, standardize=True)
        t0 = time.perf_counter()
        proto.run_split(X, y, 0, Cs=CS, gamma_factors=GAMMAS)
        t_split = time.perf_counter() - t0
        t0 = time.perf_counter()
        proto.objective_comparison(X, y, 0, Cs=CS)
        t_obj = time.perf_counter() - t0
        t0 = time.perf_counter()
        proto.timing_study(X, y, 0, C=10.0)
        t_time = time.perf_counter() - t0
        est = N_SPLITS * t_split + N_OBJ * t_obj + t_time
        rows.append(dict(dataset=name, n=int(X.shape[0]), d=int(X.shape[1]),
                         split_s=t_split, objective_s=t_obj, timing_s=t_time, estimate_s=est))
        print(f"{name:14s} n={X.shape[0]:5d} d={X.shape[1]:3d}  one split {t_split:8.1f} s  "
              f"objective {t_obj:6.1f} s  timing {t_time:6.1f} s  -> full {est / 60:7.1f} min",
              flush=True)
    total = sum(r["estimate_s"] for r in rows)
    notes = (f"estimated MODE=full time of 03_reproduction: {total / 3600:.2f} h "
             f"({len(rows)} data sets; one split timed per data set, shared 2-core machine)")
    print(notes)
    write_report(args.out, suite="s3vm_full_estimate", title="S3VM full-mode run time estimate",
                 results=[], notes=notes, datasets=rows, total_estimate_s=total,
                 protocol=dict(Cs=list(CS), gamma_factors=list(GAMMAS), n_splits=N_SPLITS,
                               n_objective_splits=N_OBJ))


if __name__ == "__main__":
    main()
