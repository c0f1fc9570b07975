"""Wall-clock timing for the chapters' cost studies and the benchmark scripts.

The machines that build the book are shared, and noise on a shared machine only ever adds
time: the best of several runs is the estimate of what deterministic code costs. One function
does it for every chapter and every ``benchmarks/bench_*.py``, so that a timing in the book
and one on the performance page mean the same thing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["best_time"]


def best_time(fn: Callable[[], Any], *, repeat: int = 3, warmup: bool = False,
              min_time: float = 0.0, threads: int | None = None,
              clock: str = "wall") -> tuple[float, Any]:
    """Best time of ``fn()`` over ``repeat`` runs, and the last return value.

    Parameters
    ----------
    fn : callable
        Called with no argument; its return value of the last run is returned.
    repeat : int, default 3
        Number of timed runs (at least 1).
    warmup : bool, default False
        Run ``fn`` once, untimed, before the timed runs (JIT compilation, caches, lazy
        imports).
    min_time : float, default 0.0
        Add timed runs until at least this many seconds were spent in them (for functions
        that take microseconds).
    threads : int, optional
        Bound the BLAS and OpenMP thread pools to this many threads while timing
        (``threadpoolctl``); ``None`` leaves them as they are.
    clock : {"wall", "cpu"}, default "wall"
        ``"wall"``: elapsed time (``time.perf_counter``). ``"cpu"``: the CPU time of this
        process, all its threads (``time.process_time``), which waiting for a core that
        other work holds does not inflate: the measure to compare single-threaded code on
        a busy machine (work done in other processes is not counted).

    Returns
    -------
    best : float
        The smallest of the measured times, in seconds.
    out : object
        What the last run of ``fn`` returned.

    Raises
    ------
    ValueError
        If ``repeat`` is below 1, ``min_time`` is negative, ``threads`` is below 1 or
        ``clock`` is not "wall" or "cpu".
    """
    if not callable(fn):
        raise ValueError(f"fn must be callable; got {type(fn).__name__}")
    if int(repeat) != repeat or repeat < 1:
        raise ValueError(f"repeat must be a positive integer; got {repeat!r}")
    if not min_time >= 0:
        raise ValueError(f"min_time must be a non-negative number of seconds; got {min_time!r}")
    if threads is not None and (int(threads) != threads or threads < 1):
        raise ValueError(f"threads must be a positive integer or None; got {threads!r}")
    if clock not in ("wall", "cpu"):
        raise ValueError(f"clock must be 'wall' or 'cpu'; got {clock!r}")
    now = time.perf_counter if clock == "wall" else time.process_time

    def run() -> tuple[float, Any]:
        if warmup:
            fn()
        best, out, spent, k = float("inf"), None, 0.0, 0
        while k < repeat or spent < min_time:
            t0 = now()
            out = fn()
            dt = now() - t0
            best, spent, k = min(best, dt), spent + dt, k + 1
        return best, out

    if threads is None:
        return run()
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=int(threads)):
        return run()
