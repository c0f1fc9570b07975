"""Content keys of the paper-scale records (``scripts/provenance.py``): a record is stale
exactly when an input of its notebook changed."""

import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import provenance  # noqa: E402
import record_full_run  # noqa: E402


def _notebook(path: Path, code: str, params: str = "MODE = 'quick'\nSEED = 0") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cells = [{"cell_type": "code", "metadata": {"tags": ["parameters"]}, "source": params,
              "outputs": [], "execution_count": None},
             {"cell_type": "markdown", "metadata": {}, "source": "# A chapter"},
             {"cell_type": "code", "metadata": {}, "source": code, "outputs": [],
              "execution_count": None}]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}), encoding="utf-8")


@pytest.fixture
def tree(tmp_path):
    """A package with a lazily attached subpackage, a shared core, two chapters."""
    pkg = tmp_path / "pathlib_core"
    (pkg / "core").mkdir(parents=True)
    (pkg / "alpha").mkdir()
    (pkg / "beta").mkdir()
    (pkg / "datasets").mkdir()
    (pkg / "__init__.py").write_text(
        "import lazy_loader as _lazy\n__getattr__, __dir__, __all__ = _lazy.attach("
        "__name__, submodules=['alpha', 'beta', 'core'])\n")
    (pkg / "core" / "__init__.py").write_text("")
    (pkg / "core" / "shared.py").write_text("X = 1\n")
    (pkg / "core" / "unused.py").write_text("Y = 2\n")
    (pkg / "alpha" / "__init__.py").write_text(
        "import lazy_loader as _lazy\n__getattr__, __dir__, __all__ = _lazy.attach("
        "__name__, submod_attrs={'engine': ['run']})\n")
    (pkg / "alpha" / "engine.py").write_text(
        "def run():\n    from ..core.shared import X  # a function-level import\n"
        "    return X\n")
    (pkg / "beta" / "__init__.py").write_text("")
    (pkg / "beta" / "model.py").write_text("from ..core import shared\n")
    (pkg / "datasets" / "registry.json").write_text("{}\n")
    (tmp_path / "requirements.lock").write_text("numpy==2\n")
    _notebook(tmp_path / "notebooks" / "a" / "01.ipynb",
              "from pathlib_core import alpha\n%matplotlib inline\nalpha.run()")
    _notebook(tmp_path / "notebooks" / "b" / "01.ipynb",
              "import pathlib_core.beta.model as m")
    return tmp_path


def _record(root: Path, nb: str, **params) -> dict:
    rec = {"notebook": nb, "mode": "full", "seed": 0, "parameters": params,
           "inputs": provenance.inputs(nb, root)}
    rec["input_parameters"] = provenance.sha256(json.dumps(
        provenance.semantic_parameters(rec), sort_keys=True).encode())
    return rec


def test_closure_follows_lazy_attach_relative_and_function_level_imports(tree):
    a = set(provenance.inputs("a/01", tree))
    b = set(provenance.inputs("b/01", tree))
    assert "pathlib_core/alpha/engine.py" in a and "pathlib_core/core/shared.py" in a
    assert "pathlib_core/beta/model.py" not in a      # the top package's attach list is
    assert "pathlib_core/alpha/engine.py" not in b    # not followed: only what is imported
    assert "pathlib_core/core/shared.py" in b
    assert "pathlib_core/core/unused.py" not in a | b
    for shared in ("pathlib_core/datasets/registry.json", "requirements.lock"):
        assert shared in a and shared in b


def test_a_one_line_change_makes_exactly_the_dependent_records_stale(tree):
    recs = {nb: _record(tree, nb) for nb in ("a/01", "b/01")}
    assert all(not provenance.staleness(r, tree) for r in recs.values())
    engine = tree / "pathlib_core" / "alpha" / "engine.py"
    engine.write_text(engine.read_text() + "Z = 3\n")
    assert provenance.staleness(recs["a/01"], tree) == [
        "changed: pathlib_core/alpha/engine.py"]
    assert provenance.staleness(recs["b/01"], tree) == []
    shared = tree / "pathlib_core" / "core" / "shared.py"
    shared.write_text("X = 10\n")
    assert "changed: pathlib_core/core/shared.py" in provenance.staleness(recs["b/01"], tree)
    # outputs, metadata and prose are not inputs; a code edit is
    nb = tree / "notebooks" / "b" / "01.ipynb"
    data = json.loads(nb.read_text())
    data["metadata"]["kernelspec"] = {"name": "other"}
    data["cells"][2]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "x"}]
    nb.write_text(json.dumps(data))
    assert "changed: notebooks/b/01.ipynb" not in provenance.staleness(recs["b/01"], tree)
    data["cells"][1]["source"] = "# A chapter, edited"
    nb.write_text(json.dumps(data))
    assert "changed: notebooks/b/01.ipynb" not in provenance.staleness(recs["b/01"], tree)
    data["cells"][2]["source"] += "\n# a comment is code"
    nb.write_text(json.dumps(data))
    assert "changed: notebooks/b/01.ipynb" in provenance.staleness(recs["b/01"], tree)


def test_parameters_that_change_results_make_a_record_stale(tree):
    rec = _record(tree, "a/01", N_JOBS=2, CHECKPOINT="/tmp/ck", RUNS=5)
    assert provenance.staleness(rec, tree) == []
    rec["parameters"] = {"N_JOBS": 1, "CHECKPOINT": "/elsewhere", "RUNS": 5}
    assert provenance.staleness(rec, tree) == []      # how the work is spread, not what
    rec["parameters"]["RUNS"] = 6
    assert provenance.staleness(rec, tree) == ["parameters changed"]
    assert provenance.staleness({"notebook": "a/01"}, tree) == [
        "no recorded inputs (recorded before content keys)"]


def test_recorder_keys_the_record_and_a_fresh_record_is_current(tree, tmp_path):
    build = tmp_path / "build"
    for sub, payload in (("status", {"mode": "full", "seed": 0, "results_written": True,
                                     "parameters": {"N_JOBS": 2}, "seconds": 1.5}),
                         ("results", {"claims": []})):
        (build / sub).mkdir(parents=True)
        (build / sub / "a__01.json").write_text(json.dumps(payload))
    rec = record_full_run.gather(build, "a/01", "abc1234", root=tree)
    assert rec["inputs"] == provenance.inputs("a/01", tree)
    assert provenance.staleness(rec, tree) == []


def test_every_committed_record_is_keyed_by_its_chapters_modules():
    """The real chapters: a GAGA chapter depends on the GAGA engines and not on the MCM
    ones, and every committed record can be judged."""
    gaga = set(provenance.inputs("gaga/03_reproduction"))
    mcm = set(provenance.inputs("mcm/03_algorithm_and_reproduction"))
    assert {"pathlib_core/gaga/linear_path.py", "pathlib_core/gaga/age_kernel.py",
            "pathlib_core/core/dop853_kernel.py"} <= gaga
    assert not any(p.startswith("pathlib_core/mcm/") for p in gaga)
    assert "pathlib_core/mcm/path.py" in mcm
    assert not any(p.startswith("pathlib_core/gaga/") for p in mcm)
    rows = provenance.status()
    assert len(rows) == len(list((ROOT / provenance.RECORDS).glob("*.json"))) > 0
    assert all(r["current"] == (not r["why"]) for r in rows)


def test_make_full_reruns_only_stale_records(tree, monkeypatch, capsys):
    rec = _record(tree, "a/01")
    out = tree / provenance.RECORDS
    out.mkdir(parents=True)
    (out / "a__01.json").write_text(json.dumps(rec))
    (out / "b__01.json").write_text(json.dumps({"notebook": "b/01"}))
    monkeypatch.setattr(provenance, "ROOT", tree)
    monkeypatch.setattr(provenance, "status", lambda root=tree: [
        dict(r, why=provenance.staleness(r, tree), current=not provenance.staleness(r, tree),
             notebook=r["notebook"]) for r in provenance.records(tree)])
    assert provenance.main(["stale"]) == 0
    assert capsys.readouterr().out.split() == ["b/01"]
    shutil.rmtree(out)
