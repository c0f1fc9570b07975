"""The cost studies' timer: what it runs, what it returns, what it refuses."""

import pytest

from pathlib_core.experiments import best_time


def test_runs_repeat_times_and_returns_the_last_value():
    calls = []
    t, out = best_time(lambda: calls.append(len(calls)) or len(calls), repeat=4)
    assert len(calls) == 4 and out == 4
    assert t >= 0.0


def test_warmup_adds_one_untimed_run():
    calls = []
    best_time(lambda: calls.append(1), repeat=2, warmup=True)
    assert len(calls) == 3


def test_min_time_adds_runs_until_enough_time_was_spent():
    calls = []
    best_time(lambda: calls.append(1), repeat=1, min_time=0.01)
    assert len(calls) > 1


def test_best_is_the_smallest_of_the_measured_times(monkeypatch):
    # a fake clock: run k takes 3, 1, 2 seconds
    ticks = iter([0.0, 3.0, 10.0, 11.0, 20.0, 22.0])
    monkeypatch.setattr("pathlib_core.experiments.timing.time.perf_counter",
                        lambda: next(ticks))
    t, _ = best_time(lambda: None, repeat=3)
    assert t == 1.0


def test_threads_bounds_the_blas_pools_while_timing():
    import numpy  # noqa: F401  (loads its BLAS, so that there is a pool to bound)
    from threadpoolctl import threadpool_info

    seen = []
    best_time(lambda: seen.append([p["num_threads"] for p in threadpool_info()]),
              repeat=1, threads=1)
    assert seen[0] and all(n == 1 for n in seen[0])


@pytest.mark.parametrize("kwargs, name", [
    (dict(repeat=0), "repeat"), (dict(repeat=1.5), "repeat"),
    (dict(min_time=-1.0), "min_time"), (dict(min_time=float("nan")), "min_time"),
    (dict(threads=0), "threads"), (dict(clock="gpu"), "clock"),
])
def test_bad_arguments_name_themselves(kwargs, name):
    with pytest.raises(ValueError, match=name):
        best_time(lambda: None, **kwargs)


def test_fn_must_be_callable():
    with pytest.raises(ValueError, match="fn"):
        best_time(3)


def test_cpu_clock_does_not_count_sleeping():
    import time

    t_wall, _ = best_time(lambda: time.sleep(0.05), repeat=1)
    t_cpu, _ = best_time(lambda: time.sleep(0.05), repeat=1, clock="cpu")
    assert t_wall >= 0.05 and t_cpu < 0.02
