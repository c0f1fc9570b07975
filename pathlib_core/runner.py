"""A small experiment runner: a grid of settings, one tidy row per run.

Reproduction chapters loop over datasets x splits x methods. :func:`run_grid` runs a function
over a list of settings, in parallel through :mod:`joblib` when asked (a user with a cluster
can switch joblib's backend, e.g. to Dask, with ``joblib.parallel_backend``), shows a progress
bar for long loops, and returns one flat dict per run. Each run gets its own seed, derived
from the experiment seed and the run's position with :class:`numpy.random.SeedSequence`, so
results do not depend on the number of workers or on the order in which runs finish.
:func:`save_table` writes the rows as JSON and CSV under the build folder.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .results import _clean, atomic_write_text, build_dir, notebook_id

__all__ = ["run_grid", "save_table", "spawn_seeds"]


def spawn_seeds(seed: int, n: int) -> list[int]:
    """``n`` independent 32-bit seeds derived from ``seed`` (stable across numpy versions)."""
    if n < 0:
        raise ValueError(f"n must be >= 0; got {n}")
    children = np.random.SeedSequence(int(seed)).spawn(n)
    return [int(c.generate_state(1)[0]) for c in children]


def run_grid(fn: Callable[..., dict], settings: Sequence[dict], *, seed: int, n_jobs: int = 1,
             progress: bool = True, desc: str = "runs") -> list[dict]:
    """Run ``fn(**setting, seed=run_seed)`` for every setting and collect tidy rows.

    Parameters
    ----------
    fn : callable
        Returns a dict of measured values for one run; it receives the setting's keys as
        keyword arguments plus ``seed``.
    settings : sequence of dict
        One dict per run (e.g. ``{"dataset": "pima", "split": 3, "method": "svm"}``).
    seed : int
        Experiment seed; run ``k`` receives ``spawn_seeds(seed, len(settings))[k]``.
    n_jobs : int
        joblib workers (1 runs in-process, which keeps tracebacks simple).
    progress : bool
        Show a tqdm progress bar (disabled when ``TQDM_DISABLE`` is set, as in builds).

    Returns
    -------
    list of dict
        One row per run: the setting's keys, ``seed``, then ``fn``'s values, in the order of
        ``settings``.
    """
    if not isinstance(n_jobs, int) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer; got {n_jobs!r}")
    settings = [dict(s) for s in settings]
    seeds = spawn_seeds(seed, len(settings))

    def one(setting: dict, run_seed: int) -> dict:
        out = fn(**setting, seed=run_seed)
        if not isinstance(out, dict):
            raise TypeError(f"fn must return a dict; got {type(out).__name__}")
        clash = set(out) & (set(setting) | {"seed"})
        if clash:
            raise ValueError(f"fn's result repeats setting keys {sorted(clash)}")
        return {**setting, "seed": run_seed, **out}

    iterator: Any = zip(settings, seeds, strict=True)
    if progress:
        from tqdm.auto import tqdm

        iterator = tqdm(list(iterator), desc=desc)
    if n_jobs == 1:
        return [one(s, sd) for s, sd in iterator]
    from joblib import Parallel, delayed

    return list(Parallel(n_jobs=n_jobs)(delayed(one)(s, sd) for s, sd in iterator))


def save_table(rows: Sequence[dict], name: str, *, directory=None) -> dict[str, Any]:
    """Write ``rows`` to ``<build>/tables/<notebook>/<name>.json`` and ``.csv`` (atomically).

    Values are made JSON-safe first (NumPy scalars and arrays to Python numbers and lists,
    non-finite floats to the strings ``"nan"``, ``"inf"``, ``"-inf"``). The CSV has one
    column per key, in order of first appearance over the rows; a row without some key
    leaves that cell empty. Each file is written to a temporary file and renamed, so a
    reader never sees a partial table; the folder is created if needed.

    Parameters
    ----------
    rows : sequence of dict
        The table, one dict per row (e.g. the output of :func:`run_grid`).
    name : str
        File stem: letters, digits, ``-`` and ``_`` only.
    directory : path-like, optional
        Target folder; default ``<build>/tables/<notebook-id>`` (see
        :func:`pathlib_core.results.build_dir` and :func:`pathlib_core.results.notebook_id`).

    Returns
    -------
    dict
        ``{"json": path, "csv": path}``, the :class:`pathlib.Path` of each written file.

    Raises
    ------
    ValueError
        ``name`` is empty or contains other characters.
    """
    if not name or not all(ch.isalnum() or ch in "-_" for ch in name):
        raise ValueError(f"name must be a file stem of letters, digits, - and _; got {name!r}")
    base = (build_dir() / "tables" / notebook_id()) if directory is None else directory
    rows = [_clean(dict(r)) for r in rows]
    columns: list[str] = []
    for r in rows:
        columns += [k for k in r if k not in columns]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    from pathlib import Path

    base = Path(base)
    return {
        "json": atomic_write_text(base / f"{name}.json", json.dumps(rows, indent=1)),
        "csv": atomic_write_text(base / f"{name}.csv", buf.getvalue()),
    }
