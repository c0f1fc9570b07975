"""The runner on a Dask cluster: a ``distributed.LocalCluster`` with two worker processes.

The rows must be those of the sequential run, whatever the cluster does; a worker that dies
in the middle of a run loses nothing and duplicates nothing.
"""

import json
import logging
import os
import sys
import time

import pytest

distributed = pytest.importorskip("distributed")

from pathlib_core.experiments.runner import run_grid  # noqa: E402


@pytest.fixture(scope="module")
def cluster():
    import cloudpickle

    # the workers are fresh processes that cannot import this test module: send its
    # functions by value
    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    for name in ("distributed", "distributed.nanny", "distributed.scheduler",
                 "distributed.worker", "distributed.core"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=logging.CRITICAL,
                                  worker_dashboard_address=None) as c:
        yield c
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _work(dataset, method, seed, log=None, kill=None):
    """A deterministic run; optionally logs each finished execution and kills its worker."""
    import numpy as np

    if kill is not None and dataset == kill["dataset"] and method == kill["method"]:
        marker = kill["marker"]
        if not os.path.exists(marker):  # first attempt: the worker dies mid-run
            with open(marker, "w") as f:
                f.write(str(os.getpid()))
            time.sleep(0.2)
            os._exit(1)
    time.sleep(0.05)
    rng = np.random.default_rng(seed)
    row = {"score": float(rng.standard_normal()), "pid": os.getpid(),
           "weights": rng.random(3).tolist()}
    if log is not None:
        with open(log, "a") as f:
            f.write(json.dumps([dataset, method]) + "\n")
    return row


SETTINGS = [{"dataset": d, "method": m} for d in ("a", "b", "c", "d") for m in ("x", "y", "z")]


def _without_pid(rows):
    return [{k: v for k, v in r.items() if k != "pid"} for r in rows]


def test_cluster_rows_equal_the_sequential_rows(cluster, monkeypatch):
    sequential = run_grid(_work, SETTINGS, seed=11, progress=False)
    on_cluster = run_grid(_work, SETTINGS, seed=11, progress=False,
                          scheduler=cluster.scheduler_address)
    assert _without_pid(on_cluster) == _without_pid(sequential)
    assert len({r["pid"] for r in on_cluster}) == 2  # both workers took runs
    assert os.getpid() not in {r["pid"] for r in on_cluster}
    # the environment variable selects the cluster when no scheduler is given
    monkeypatch.setenv("DASK_SCHEDULER", cluster.scheduler_address)
    via_env = run_grid(_work, SETTINGS, seed=11, progress=False)
    assert _without_pid(via_env) == _without_pid(sequential)
    assert os.getpid() not in {r["pid"] for r in via_env}


def test_a_killed_worker_loses_and_duplicates_nothing(cluster, tmp_path):
    log, marker, ckpt = tmp_path / "log.jsonl", tmp_path / "killed", tmp_path / "ckpt"
    kill = {"dataset": "b", "method": "y", "marker": str(marker)}
    settings = [dict(s, log=str(log), kill=kill) for s in SETTINGS]
    rows = run_grid(_work, settings, seed=11, progress=False, checkpoint=ckpt,
                    scheduler=cluster.scheduler_address)
    assert marker.exists()  # a worker did die in the middle of run (b, y)
    sequential = run_grid(_work, SETTINGS, seed=11, progress=False)
    strip = [{k: v for k, v in r.items() if k not in ("log", "kill")} for r in rows]
    assert _without_pid(strip) == _without_pid(sequential)  # nothing lost, same values
    done = [tuple(json.loads(line)) for line in log.read_text().splitlines()]
    assert sorted(done) == sorted((s["dataset"], s["method"]) for s in SETTINGS)  # once each
    assert len(list(ckpt.glob("run-*.json"))) == len(SETTINGS)
    # the checkpoint holds every run: a rerun computes nothing
    log.unlink()
    again = run_grid(_work, settings, seed=11, progress=False, checkpoint=ckpt,
                     scheduler=cluster.scheduler_address)
    assert again == rows and not log.exists()


def test_bad_scheduler():
    with pytest.raises(ValueError, match="scheduler"):
        run_grid(_work, SETTINGS, seed=0, scheduler="localhost")
