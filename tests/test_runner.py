"""Tests of the experiment runner."""

import json

import pytest

from pathlib_core.runner import run_grid, save_table, spawn_seeds


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
