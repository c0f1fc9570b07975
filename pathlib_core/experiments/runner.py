"""A small experiment runner: a grid of settings, one tidy row per run.

Reproduction chapters loop over datasets x splits x methods. :func:`run_grid` runs a function
over a list of settings and returns one flat dict per run: in this process, in local worker
processes through :mod:`joblib` (``n_jobs``), or on a Dask cluster through joblib's Dask
backend (``scheduler="tcp://host:port"``, or the ``DASK_SCHEDULER`` environment variable),
with a progress bar for long loops. Each run gets its own seed, derived from the experiment
seed and the run's position with :class:`numpy.random.SeedSequence`, so results do not depend
on the number of workers, on where a run is computed or on the order in which runs finish.
With ``checkpoint=<folder>`` every finished run is kept as a JSON file there, written by the
calling process as each result arrives (the workers need no shared file system), so that a
long run that is interrupted (a full-mode protocol of many hours) resumes where it stopped; a
kept row is reused only if the setting, the seeds, the source of ``pathlib_core`` and of
``fn``, and the caller's ``checkpoint_context`` are all unchanged. On a cluster, a run whose
worker dies is computed again on another worker by Dask's scheduler; it is kept once.
:func:`save_table` writes the rows as JSON and CSV under the build folder.
"""

from __future__ import annotations

import csv
import hashlib
import inspect
import io
import json
import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..core.io import atomic_write_text, to_jsonable
from .results import build_dir, notebook_id

__all__ = ["run_grid", "save_table", "source_fingerprint", "spawn_seeds"]


def spawn_seeds(seed: int, n: int) -> list[int]:
    """``n`` independent 32-bit seeds derived from ``seed`` (stable across numpy versions)."""
    if n < 0:
        raise ValueError(f"n must be >= 0; got {n}")
    children = np.random.SeedSequence(int(seed)).spawn(n)
    return [int(c.generate_state(1)[0]) for c in children]


def source_fingerprint() -> str:
    """SHA-256 of every ``pathlib_core`` source file (relative path and bytes, sorted).

    Identifies the code a kept result was computed with; any edit to the package changes it.
    """
    from pathlib import Path

    root = Path(__file__).resolve().parent
    h = hashlib.sha256()
    for f in sorted(root.rglob("*.py")):
        h.update(f.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(f.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _fn_source(fn: Callable) -> str:
    try:
        return inspect.getsource(fn)
    except (OSError, TypeError):  # no source available (built-in, exec'd code)
        return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"


def run_grid(fn: Callable[..., dict], settings: Sequence[dict], *, seed: int, n_jobs: int = 1,
             progress: bool = True, desc: str = "runs", checkpoint=None,
             checkpoint_context: dict | None = None, scheduler: str | None = None
             ) -> list[dict]:
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
        Local joblib worker processes (1 runs in-process, which keeps tracebacks simple).
        Ignored when the runs go to a Dask cluster (see ``scheduler``).
    progress : bool
        Show a tqdm progress bar (disabled when ``TQDM_DISABLE`` is set, as in builds).
    checkpoint : path-like, optional
        Folder in which every finished run is kept (one JSON file, written atomically), and
        from which a run is taken instead of being computed when its file matches: same
        setting, experiment and run seed, :func:`source_fingerprint`, source of ``fn`` and
        ``checkpoint_context``. A mismatching or unreadable file is recomputed and replaced.
        With a checkpoint every row is returned JSON-safe (NumPy values as Python numbers and
        lists), kept or fresh alike. Default: no checkpoint.
    checkpoint_context : dict, optional
        JSON-serializable values the runs depend on beyond ``fn``'s own source, e.g. the
        source of helpers ``fn`` calls or the chapter's ``MODE``; part of the match.
    scheduler : str, optional
        Address of a running Dask scheduler (``"tcp://host:port"``). The runs are sent to its
        workers through joblib's Dask backend; ``fn`` and the settings travel by cloudpickle
        and the rows come back to this process. Default: the ``DASK_SCHEDULER`` environment
        variable if set and non-empty, otherwise no cluster. The rows do not depend on it.

    Returns
    -------
    list of dict
        One row per run: the setting's keys, ``seed``, then ``fn``'s values, in the order of
        ``settings``.
    """
    if not isinstance(n_jobs, int) or n_jobs == 0:
        raise ValueError(f"n_jobs must be a non-zero integer; got {n_jobs!r}")
    if scheduler is None:
        scheduler = os.environ.get("DASK_SCHEDULER") or None
    if scheduler is not None and (not isinstance(scheduler, str) or "://" not in scheduler):
        raise ValueError("scheduler must be a Dask scheduler address such as "
                         f"'tcp://127.0.0.1:8786'; got {scheduler!r}")
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

    if checkpoint is None:
        return _dispatch(one, list(zip(settings, seeds, strict=True)), n_jobs, progress, desc,
                         scheduler)

    from pathlib import Path

    folder = Path(checkpoint)
    context = {"pathlib_core": source_fingerprint(), "fn": _fn_source(fn),
               "context": to_jsonable(dict(checkpoint_context or {})), "experiment_seed": seed}

    def ident_file(setting: dict, run_seed: int):
        ident = to_jsonable({"setting": setting, "seed": run_seed, **context})
        key = hashlib.sha256(json.dumps(ident, sort_keys=True).encode()).hexdigest()[:24]
        return ident, folder / f"run-{key}.json"

    def kept(setting: dict, run_seed: int):
        ident, file = ident_file(setting, run_seed)
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
            if data.get("ident") == ident:
                return data["row"]
        except (OSError, ValueError, KeyError, AttributeError):
            pass
        return None

    # kept runs are read here, and only the missing ones are dispatched: handing kept runs
    # to joblib too would make its automatic batching (tuned on the instant ones) put the
    # slow remainder into a few large batches, i.e. onto fewer workers than n_jobs
    rows = [kept(s, sd) for s, sd in zip(settings, seeds, strict=True)]
    todo = [k for k, r in enumerate(rows) if r is None]

    def keep(j: int, row: dict) -> dict:  # in this process, as each run arrives
        k = todo[j]
        ident, file = ident_file(settings[k], seeds[k])
        row = to_jsonable(row)
        atomic_write_text(file, json.dumps({"ident": ident, "row": row}))
        return row

    fresh = _dispatch(one, [(settings[k], seeds[k]) for k in todo], n_jobs, progress, desc,
                      scheduler, keep)
    for k, r in zip(todo, fresh, strict=True):
        rows[k] = r
    return rows


def _dispatch(task: Callable[[dict, int], dict], jobs: list, n_jobs: int, progress: bool,
              desc: str, scheduler: str | None = None,
              on_result: Callable[[int, dict], dict] | None = None) -> list[dict]:
    """``task(setting, seed)`` for every job; the rows in the order of ``jobs``.

    Runs in this process (``n_jobs == 1`` and no scheduler), on local joblib workers or on
    the Dask cluster at ``scheduler``, one job per batch. Each result passes through
    ``on_result(position, row)`` in this process as soon as it arrives (in completion
    order), and the progress bar counts finished runs.
    """
    bar = None
    if progress and jobs:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(jobs), desc=desc)
    out: list[Any] = [None] * len(jobs)

    def arrived(j: int, row: dict) -> None:
        out[j] = on_result(j, row) if on_result is not None else row
        if bar is not None:
            bar.update(1)

    try:
        if scheduler is None and (n_jobs == 1 or len(jobs) <= 1):
            for j, (s, sd) in enumerate(jobs):
                arrived(j, task(s, sd))
            return out
        from joblib import Parallel, delayed, parallel_config

        def numbered(j: int, s: dict, sd: int) -> tuple[int, dict]:
            return j, task(s, sd)

        calls = (delayed(numbered)(j, s, sd) for j, (s, sd) in enumerate(jobs))
        if scheduler is None:
            for j, row in Parallel(n_jobs=n_jobs, batch_size=1,
                                   return_as="generator_unordered")(calls):
                arrived(j, row)
            return out
        from distributed import Client

        with Client(scheduler, set_as_default=False) as client, \
                parallel_config(backend="dask", client=client):
            for j, row in Parallel(batch_size=1, return_as="generator_unordered")(calls):
                arrived(j, row)
        return out
    finally:
        if bar is not None:
            bar.close()


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
        :func:`pathlib_core.experiments.results.build_dir` and
        :func:`pathlib_core.experiments.results.notebook_id`).

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
    rows = [to_jsonable(dict(r)) for r in rows]
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
