"""Tests of the experiment runner."""

import json

import pytest

from pathlib_core.experiments.runner import run_grid, save_table, spawn_seeds


def _run(dataset, method, seed):
    return {"score": seed % 1000, "method_len": len(method)}


def test_rows_are_tidy_ordered_and_seeded_independently_of_workers(tmp_path):
    settings = [{"dataset": d, "method": m} for d in ("a", "b") for m in ("svm", "path")]
    rows1 = run_grid(_run, settings, seed=3, progress=False)
    rows2 = run_grid(_run, settings, seed=3, n_jobs=2, progress=False)
    assert rows1 == rows2
    assert [r["dataset"] for r in rows1] == ["a", "a", "b", "b"]
    assert len({r["seed"] for r in rows1}) == 4
    assert rows1[0]["seed"] == spawn_seeds(3, 4)[0]
    assert rows1 != run_grid(_run, settings, seed=4, progress=False)
    out = save_table(rows1, "demo", directory=tmp_path)
    assert json.loads(out["json"].read_text()) == rows1
    assert out["csv"].read_text().splitlines()[0] == "dataset,method,seed,score,method_len"


CALLS = []


def _counted(dataset, seed):
    CALLS.append(dataset)
    if dataset == "boom":
        raise RuntimeError("interrupted")
    return {"value": float(seed % 7), "vec": [1.0, 2.0]}


def test_checkpoint_resumes_and_invalidates(tmp_path):
    import numpy as np

    settings = [{"dataset": "a"}, {"dataset": "b"}, {"dataset": "boom"}]
    CALLS.clear()
    with pytest.raises(RuntimeError, match="interrupted"):
        run_grid(_counted, settings, seed=1, progress=False, checkpoint=tmp_path)
    # the two runs that finished before the failure are kept, nothing else
    assert CALLS == ["a", "b", "boom"] and len(list(tmp_path.glob("run-*.json"))) == 2
    CALLS.clear()
    rows = run_grid(_counted, settings[:2], seed=1, progress=False, checkpoint=tmp_path)
    assert CALLS == []  # resumed: both taken from the checkpoint
    fresh = run_grid(_counted, settings[:2], seed=1, progress=False)
    assert rows == fresh and CALLS == ["a", "b"]
    # another experiment seed, another context or a corrupt file: recomputed
    CALLS.clear()
    run_grid(_counted, settings[:1], seed=2, progress=False, checkpoint=tmp_path)
    run_grid(_counted, settings[:1], seed=1, progress=False, checkpoint=tmp_path,
             checkpoint_context={"MODE": "full"})
    assert CALLS == ["a", "a"]
    for f in tmp_path.glob("run-*.json"):
        f.write_text("{not json")
    CALLS.clear()
    assert run_grid(_counted, settings[:2], seed=1, progress=False,
                    checkpoint=tmp_path) == rows
    assert CALLS == ["a", "b"]
    # rows are JSON-safe with a checkpoint, kept or fresh
    out = run_grid(lambda dataset, seed: {"x": np.float64(1.5), "v": np.arange(2)},
                   [{"dataset": "c"}], seed=0, progress=False, checkpoint=tmp_path / "np")
    assert out == [{"dataset": "c", "seed": out[0]["seed"], "x": 1.5, "v": [0, 1]}]
    assert type(out[0]["x"]) is float


def test_source_fingerprint_is_stable():
    from pathlib_core.experiments.runner import source_fingerprint

    assert source_fingerprint() == source_fingerprint()
    assert len(source_fingerprint()) == 64


def test_bad_input():
    with pytest.raises(ValueError, match="n_jobs"):
        run_grid(_run, [], seed=0, n_jobs=0)
    with pytest.raises(ValueError, match="repeats setting keys"):
        run_grid(lambda dataset, seed: {"dataset": 1}, [{"dataset": "x"}], seed=0,
                 progress=False)
    with pytest.raises(ValueError, match="name"):
        save_table([], "a/b")
    with pytest.raises(ValueError, match="n must be"):
        spawn_seeds(0, -1)


def _slow_pid(dataset, seed):
    import os
    import time

    if dataset.startswith("slow"):
        time.sleep(0.4)
    return {"pid": os.getpid()}


def test_resumed_run_spreads_the_missing_tasks_over_the_workers(tmp_path, monkeypatch):
    # regression: kept runs were handed to joblib with the missing ones; its automatic
    # batching, tuned on the instant kept runs, put the slow remainder into one worker's
    # batch (a resumed full-mode run used one of its two workers for its last seven tasks)
    settings = [{"dataset": f"d{k}"} for k in range(400)] + \
        [{"dataset": f"slow{k}"} for k in range(4)]
    kept = run_grid(_slow_pid, settings[:400], seed=5, progress=False, checkpoint=tmp_path)
    import pathlib_core.experiments.runner as runner

    dispatched = []
    real = runner._dispatch

    def spy(task, jobs, *args):
        dispatched.append(len(jobs))
        return real(task, jobs, *args)

    monkeypatch.setattr(runner, "_dispatch", spy)
    rows = run_grid(_slow_pid, settings, seed=5, n_jobs=2, progress=False, checkpoint=tmp_path)
    assert dispatched == [4]  # the kept runs are read in the parent, never sent to a worker
    # run k's seed depends only on k, so the first 400 are kept; a third call keeps all
    assert rows[:400] == kept
    again = run_grid(_slow_pid, settings, seed=5, n_jobs=2, progress=False, checkpoint=tmp_path)
    assert dispatched == [4, 0] and again == rows
    assert [r["dataset"] for r in rows] == [s["dataset"] for s in settings]
    assert len({r["pid"] for r in rows[400:]}) == 2  # the missing runs used both workers
