"""The book's presentation helpers: rendered tables, log-axis ticks, figure width, the
paper-scale record of a chapter, and the line-width check of the notebooks."""

import json
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from pathlib_core.experiments import plotting  # noqa: E402
from pathlib_core.experiments import results as results_module  # noqa: E402
from pathlib_core.experiments.results import Results  # noqa: E402
from pathlib_core.experiments.tables import Table, show_table  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def _frame():
    return pd.DataFrame({"paper": ["0.21", "0.30", "0.10"],
                         "A": [0.10, 0.50, np.nan], "B": [0.20, 0.40, 0.30]},
                        index=["x", "y", "z"])


def test_table_marks_the_best_entry_per_row_among_the_compared_columns():
    t = Table(_frame(), best="min", subset=["A", "B"], caption="Table 2")
    assert t.mask.to_numpy().tolist() == [[False, True, False], [False, False, True],
                                          [False, False, True]]
    html = t._repr_html_()
    assert "<caption>Table 2</caption>" in html and "font-weight: bold" in html
    text = repr(t)
    assert text.splitlines()[0] == "Table 2" and "0.100*" in text and "0.400*" in text
    # the NaN never wins and the "paper" column is not compared
    assert not t.mask["paper"].any() and not t.mask.loc["z", "A"]


def test_table_best_by_key_ties_and_columns():
    shown = pd.DataFrame({"A": ["1 ± 0", "2 ± 1"], "B": ["1 ± 0", "3 ± 1"]})
    key = pd.DataFrame({"A": [1.0, 2.0], "B": [1.0, 3.0]})
    t = Table(shown, best="max", key=key, axis=0)
    assert t.mask.to_numpy().tolist() == [[False, False], [True, True]]
    t = Table(shown, best="min", key=key)
    assert t.mask.to_numpy().tolist() == [[True, True], [True, False]]  # a tie marks both


def test_a_named_index_labels_the_header_corner_not_a_row_of_its_own():
    frame = _frame().rename_axis("dataset")
    html = Table(frame, best="min", subset=["A", "B"])._repr_html_()
    head = html[html.index("<thead>"):html.index("</thead>")]
    assert head.count("<tr>") == 1 and ">dataset</th>" in head
    assert frame.index.name == "dataset" and frame.columns.name is None  # not mutated
    # the best entries are still marked
    assert html.count("font-weight: bold") >= 1


def test_table_html_is_deterministic_and_bad_input_is_named():
    assert Table(_frame())._repr_html_() == Table(_frame())._repr_html_()
    with pytest.raises(ValueError, match="frame"):
        Table([[1, 2]])
    with pytest.raises(ValueError, match="best"):
        Table(_frame(), best="smallest")
    with pytest.raises(ValueError, match="axis"):
        Table(_frame(), axis=2)
    with pytest.raises(ValueError, match="subset"):
        Table(_frame(), best="min", subset=["C"])


def test_show_table_prints_outside_a_notebook(capsys):
    show_table(_frame(), caption="demo", best="max", subset=["A", "B"])
    out = capsys.readouterr().out
    assert out.startswith("demo\n") and "0.500*" in out


def test_log_axis_ticks_are_labelled_majors_and_silent_minors():
    plotting.setup()
    fig, ax = plt.subplots()
    ax.loglog([200, 300], [1e-5, 1e2])
    plotting.log_ticks(ax)
    fig.canvas.draw()
    xs = [t.get_text() for t in ax.get_xticklabels(minor=False)]
    assert {"200", "300"} <= set(xs)  # a range under one decade still gets labels
    assert all(t.get_text() == "" for t in ax.get_xticklabels(minor=True))
    ys = [t.get_text() for t in ax.get_yticklabels()]
    assert "$10^{-5}$" in ys and "1" in ys and "100" in ys
    plt.close(fig)
    with pytest.raises(ValueError, match="axis"):
        plotting.log_ticks(ax, axis="z")


def test_save_figure_fixes_default_log_ticks_keeps_custom_ones_and_bounds_width(tmp_path):
    from matplotlib.ticker import FuncFormatter, LogFormatter

    plotting.setup()
    fig, (a, b) = plt.subplots(1, 2, figsize=(8, 3))
    a.semilogx([1, 5], [0, 1])
    b.semilogx([1, 5], [0, 1])
    custom = FuncFormatter(lambda v, _: "v")
    b.xaxis.set_major_formatter(custom)
    assert isinstance(a.xaxis.get_major_formatter(), LogFormatter)
    plotting.save_figure(fig, "demo", directory=tmp_path)
    assert not isinstance(a.xaxis.get_major_formatter(), LogFormatter)
    assert b.xaxis.get_major_formatter() is custom
    assert fig.get_layout_engine() is not None  # constrained layout by default
    plt.close(fig)
    wide = plt.figure(figsize=(plotting.MAX_WIDTH_IN + 0.5, 3))
    with pytest.raises(ValueError, match="wide"):
        plotting.save_figure(wide, "wide", directory=tmp_path)
    assert not (tmp_path / "wide.svg").exists()
    plt.close(wide)


def test_paper_scale_record_reads_the_record_and_states_its_currency(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "pathlib_core" / "experiments").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "benchmarks" / "full_runs").mkdir(parents=True)
    record = {"seed": 0, "seconds": 90.0, "parameters": {"N_JOBS": 2}, "commit": "abc1234",
              "results": {"claims": []}}
    (root / "benchmarks" / "full_runs" / "demo__01.json").write_text(json.dumps(record))
    (root / "scripts").mkdir()
    (root / "scripts" / "provenance.py").write_text(
        "def staleness(record, root):\n    return ['changed: notebooks/demo/01.ipynb']\n")
    fake = root / "pathlib_core" / "experiments" / "results.py"
    monkeypatch.setattr(results_module, "__file__", str(fake))
    rec = results_module.paper_scale_record("demo/01")
    assert rec["seed"] == 0 and not rec.current
    text = rec.summary()
    assert "1.5 min" in text and "2 worker processes" in text
    assert "stale: the notebook's code changed since it was recorded" in " ".join(text.split())
    assert "notebooks/" not in text  # no repository paths in a chapter
    assert "abc1234" not in text  # provenance stays on the status page
    assert all(len(line) <= 88 for line in text.splitlines()) and "\n" in text
    assert rec.summary(width=None) == " ".join(text.split())
    assert max(len(line) for line in rec.summary(width=40).splitlines()) <= 40
    assert results_module.paper_scale_record("demo/02") is None


def test_what_changed_names_kinds_of_input_without_paths():
    what = results_module._what_changed
    assert what(["changed: notebooks/a/01.ipynb", "changed: pathlib_core/core/x.py",
                 "new input: pathlib_core/core/y.py", "parameters changed"]) == (
        "the notebook's code, the package code and the parameters changed")
    assert what(["changed: requirements.lock"]) == "the pinned dependencies changed"
    assert what(["changed: pathlib_core/datasets/registry.json"]) == "the data registry changed"
    assert what(["no recorded inputs (recorded before content keys)"]) == "its inputs changed"


def test_verdict_box_marks_a_stale_record():
    from pathlib_core.experiments.results import Claim, VerdictBox

    c = Claim(id="a", paper="s3vm", text="t", paper_value="1", ours="2", verdict="matches")
    stale = VerdictBox(c, "quick", {"ours": "9", "verdict": "matches", "stale": True})
    assert "stale" in repr(stale) and "stale" in stale._repr_html_()
    fresh = VerdictBox(c, "quick", {"ours": "9", "verdict": "matches", "stale": False})
    assert "stale" not in repr(fresh)


def test_show_summary_lists_the_claims_and_needs_one(capsys):
    res = Results(mode="full", seed=0, notebook="demo/01")
    with pytest.raises(ValueError, match="no claim"):
        res.show_summary()
    res.claim("c1", paper="s3vm", text="a claim", paper_value="1", ours="1",
              verdict="matches")
    res.show_summary()
    out = capsys.readouterr().out
    assert "a claim" in out and "matches" in out


def test_line_width_check_finds_wide_code_and_output_but_not_injected_cells(tmp_path):
    nb = {"cells": [
        {"cell_type": "code", "metadata": {}, "source": "x = 1\n" + "y" * 89,
         "outputs": [{"output_type": "stream", "name": "stdout", "text": "z" * 95 + "\n"}]},
        {"cell_type": "code", "metadata": {"tags": ["injected-parameters"]},
         "source": "w" * 120, "outputs": []},
        {"cell_type": "markdown", "metadata": {}, "source": "m" * 200}],
        "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path = tmp_path / "demo.ipynb"
    path.write_text(json.dumps(nb))
    run = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_line_width.py"),
                          str(path)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "cell 0 source: 89 chars" in run.stdout and "cell 0 output: 95 chars" in run.stdout
    assert "cell 1" not in run.stdout and "cell 2" not in run.stdout
    ok = subprocess.run([sys.executable, str(ROOT / "scripts" / "check_line_width.py"),
                         "--width", "100", str(path)], capture_output=True, text=True)
    assert ok.returncode == 0
