"""Tests of the build pipeline: notebooks, table of contents, results, figures, pages."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from pathlib_core.experiments.results import Results, atomic_write_text, compare_values

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
sys.path.insert(0, str(ROOT / "scripts"))

import check_toc  # noqa: E402
import generate_pages  # noqa: E402
import record_full_run  # noqa: E402

NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").rglob("*.ipynb")
                   if ".ipynb_checkpoints" not in p.parts)


def test_there_are_notebooks():
    assert NOTEBOOKS, "notebooks/ holds no notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_notebook_has_parameters_cell_and_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    params = [c for c in nb.cells
              if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    assert len(params) == 1, "exactly one code cell must be tagged 'parameters'"
    src = params[0].source
    assert "MODE" in src and "SEED" in src, "the parameters cell must define MODE and SEED"
    for c in nb.cells:
        if c.cell_type == "code":
            assert not c.outputs, "notebooks are stored without outputs"
            assert c.execution_count is None, "notebooks are stored without execution counts"
            assert "pip install" not in c.source, "never pip install inside a notebook"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_notebook_code_reads_only_its_own_record_under_benchmarks(path):
    """The Makefile re-executes a chapter when its own record changes, and for nothing else
    under benchmarks/: a code cell reading another file there would show stale numbers."""
    import re

    own = "benchmarks/full_runs/" + path.relative_to(ROOT / "notebooks").with_suffix(
        "").as_posix().replace("/", "__") + ".json"
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            for ref in re.findall(r"benchmarks/[\w./-]+", cell.source):
                assert ref == own, f"{cell.get('id')}: reads {ref}"


def test_toc_lists_every_notebook_once():
    import yaml

    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text())
    listed = [f.removesuffix(".ipynb") for f in check_toc.toc_files(toc)]
    for entry in check_toc.expected_entries(ROOT):
        assert listed.count(entry) == 1, entry
    for entry in listed:
        assert (ROOT / "book" / (entry + ".md")).exists() or entry.startswith(
            ("executed/", "generated/")), f"{entry} in _toc.yml has no source file"


def test_no_figure_or_build_file_is_tracked_by_git():
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip("not a git checkout")
    tracked = out.stdout.split()
    figures = [f for f in tracked if f.endswith((".svg", ".png", ".pdf", ".jpg"))
               and not f.startswith(("book/_static/", "book/images/"))]
    assert figures == []
    assert not [f for f in tracked if f.startswith(("build/", "book/executed/",
                                                    "book/generated/", "book/_build/"))]


def test_results_save_is_atomic_json_and_validates_claims(tmp_path):
    r = Results(mode="quick", seed=3, notebook="primer/x")
    r.record("n_breakpoints", 12, "number of breakpoints")
    r.claim("c1", paper="primer", text="t", paper_value="O(n)", ours="12", verdict="matches")
    with pytest.raises(ValueError, match="needs a reason"):
        r.claim("c2", paper="primer", text="t", paper_value=1, ours=2, verdict="differs")
    with pytest.raises(ValueError, match="verdict must be one of"):
        r.claim("c3", paper="primer", text="t", paper_value=1, ours=2, verdict="ok")
    with pytest.raises(ValueError, match="already recorded"):
        r.claim("c1", paper="primer", text="t", paper_value=1, ours=1, verdict="matches")
    with pytest.raises(ValueError, match="part keys"):  # a citation is not a part key
        r.claim("c4", paper="Badge et al. 2021", text="t", paper_value=1, ours=1,
                verdict="matches")
    path = r.save(tmp_path)
    assert path.name == "primer__x.json"
    data = json.loads(path.read_text())
    assert data["numbers"]["n_breakpoints"] == 12 and data["seed"] == 3
    assert data["claims"][0]["notebook"] == "primer/x"
    assert not list(tmp_path.glob(".*tmp")), "no temporary file is left behind"
    with pytest.raises(ValueError, match="mode"):
        Results(mode="bogus", seed=0)


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    target = tmp_path / "a.json"
    atomic_write_text(target, "old")

    with pytest.raises(TypeError):
        atomic_write_text(target, 123)  # type: ignore[arg-type]
    assert target.read_text() == "old"
    assert not list(tmp_path.glob(".a.json.*"))


def test_compare_values():
    assert compare_values(1.05, 1.0, rel_tol=0.1) == "matches"
    assert compare_values(1.2, 1.0, rel_tol=0.1) == "differs"
    assert compare_values(float("nan"), 1.0) == "differs"


_FIGURE_SCRIPT = """
import sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from pathlib_core.experiments import plotting
plotting.setup()
fig, ax = plt.subplots()
x = np.linspace(0, 1, 50)
ax.plot(x, np.sin(6 * x), label="sin")
ax.set_title("a title with $\\\\alpha$")
ax.legend()
print(plotting.save_figure(fig, "demo", directory=sys.argv[1]))
"""


def test_saved_figures_are_byte_identical_across_processes(tmp_path):
    digests = []
    for k in range(2):
        out = subprocess.run([PY, "-c", _FIGURE_SCRIPT, str(tmp_path / str(k))],
                             capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONHASHSEED": str(k + 1)})
        svg = Path(out.stdout.strip()).read_bytes()
        assert b"<dc:date>" not in svg
        digests.append(hashlib.sha256(svg).hexdigest())
    assert digests[0] == digests[1]


def test_save_figure_rejects_bad_names(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pathlib_core.experiments.plotting import save_figure

    fig = plt.figure()
    with pytest.raises(ValueError, match="name"):
        save_figure(fig, "../escape", directory=tmp_path)
    plt.close(fig)


def test_generated_pages_render_claims_benchmarks_and_status():
    results = [{"claims": [{"id": "a", "paper": "primer", "text": "x | y", "paper_value": "1",
                            "ours": "2", "verdict": "differs", "reason": "r",
                            "notebook": "primer/n"}]}]
    page = generate_pages.scoreboard(results)
    assert "x | y" in page and "differs" in page and "\n## Primer" in page
    assert page.count("\n## ") == 2, "the summary, then each paper's section once"
    assert "(scoreboard-primer)=" in page
    # the row links to the claim's verdict box, the cell that checks it
    assert '<a href="../executed/primer/n.html#claim-primer-a">primer/<wbr>n</a>' in page
    # the reason is folded under its claim
    assert ('<td class="sb-claim">x | y<details class="sb-why"><summary>why differs'
            "</summary>r</details></td>") in page
    # a long value shows its first words, the whole text one click away
    long = dict(results[0]["claims"][0], ours="word " * 40)
    cell = generate_pages._clip(long["ours"])
    assert cell.startswith('<details class="sb-more"><summary><span class="sb-head">word')
    assert cell.endswith(" ".join(["word"] * 40) + "</details>")
    assert generate_pages._clip("a <b>") == "a &lt;b&gt;"
    # the table is one HTML block: a blank line inside it would end the block in MyST
    multi = generate_pages.scoreboard([{"claims": [dict(results[0]["claims"][0],
                                                        text="a\n\nb", reason="c\n\nd")]}])
    tables = [ln for ln in multi.splitlines() if ln.startswith('<table class="table sb')]
    assert len(tables) == 1 and tables[0].endswith("</table>") and "a b" in tables[0]
    other = generate_pages.scoreboard([{"claims": [dict(results[0]["claims"][0], paper="new")]}])
    assert other.count("\n## ") == 2 and "## Paper new" in other
    assert "No claims" in generate_pages.scoreboard([])


def test_scoreboard_shows_both_scales_and_counts_current_records_in_the_headline(tmp_path):
    claim = {"id": "a", "paper": "s3vm", "text": "t", "paper_value": "1", "ours": "2",
             "verdict": "differs", "reason": "r", "notebook": "p/nb"}
    (tmp_path / "notebooks" / "p").mkdir(parents=True)
    _tiny_notebook(tmp_path / "notebooks" / "p" / "nb.ipynb", "x = 1")
    rec = {"notebook": "p/nb", "mode": "full", "seed": 0, "parameters": {}, "date": "D",
           "commit": "c0ffee", "results": {"claims": [dict(claim, ours="9",
                                                           verdict="matches")]}}
    rec["inputs"] = generate_pages.provenance.inputs("p/nb", tmp_path)
    rec["input_parameters"] = generate_pages.provenance.sha256(json.dumps(
        generate_pages.provenance.semantic_parameters(rec), sort_keys=True).encode())
    page = generate_pages.scoreboard([{"claims": [claim]}], [rec], root=tmp_path)
    summary, section = page.split("\n## S3VM")
    # quick value, paper-scale value, and the paper-scale verdict in the verdict column
    row = ('<td>1</td><td>⚠ 2</td><td>✓ <span class="sb-state">(current)</span> 9</td>'
           '<td class="sb-verdict">✓ matches</td><td class="sb-where">'
           '<a href="../executed/p/nb.html#claim-s3vm-a">p/<wbr>nb</a></td>')
    assert row in section
    assert "<scoreboard-s3vm>` | 1 | 1 | 0 | 0 |" in summary
    assert "| **the five papers** | 1 | 1 | 0 | 0 |" in summary
    assert "for the 1 of 1 claims" in summary
    assert "This build alone gives 0 matches, 1 differs" in summary
    # a stale record is shown, but the counts and the verdict keep this build's verdict
    (tmp_path / "notebooks" / "p" / "nb.ipynb").write_text(
        (tmp_path / "notebooks" / "p" / "nb.ipynb").read_text().replace("x = 1", "x = 2"))
    page = generate_pages.scoreboard([{"claims": [claim]}], [rec], root=tmp_path)
    assert ('✓ <span class="sb-state">(stale)</span> 9</td>'
            '<td class="sb-verdict">⚠ differs</td>') in page
    assert "| **the five papers** | 1 | 0 | 1 | 0 |" in page
    # the primer's claims are not among the papers' counts
    primer = dict(claim, id="p", paper="primer", verdict="matches", notebook="primer/x")
    page = generate_pages.scoreboard([{"claims": [claim, primer]}], [rec], root=tmp_path)
    summary = page.split("\n## S3VM")[0]
    assert "| **the five papers** | 1 | 0 | 1 | 0 |" in summary
    assert "<scoreboard-primer>` (background) | 1 | 1 | 0 | 0 |" in summary
    assert "The primer's 1 claims" in summary and "1 matches" in summary
    # a claim without a paper-scale record says so
    lone = dict(claim, id="z", notebook="q/other")
    assert ('<td>⚠ 2</td><td><span class="sb-none">no record</span></td>'
            '<td class="sb-verdict">⚠ differs</td>') in generate_pages.scoreboard(
                [{"claims": [lone]}])
    report = {"suite": "s", "title": "Suite S", "date": "2026-01-02", "commit": "abc1234",
              "machine": "x86_64, 2 cores", "results": [
                  {"name": "b", "what": "w", "ours_s": 0.5, "peer": "p", "peer_s": 1.0,
                   "ratio": 0.5, "goal": "<= 2x", "goal_met": True}]}
    perf = generate_pages.performance([report])
    assert "500.0 ms" in perf and "met" in perf
    # provenance lives on the status page, not on the performance page
    assert "abc1234" not in perf and "2026-01-02" not in perf and "2 cores" not in perf
    bench_status = generate_pages.status([], [], [report])
    assert "## Benchmark reports" in bench_status
    assert "| Suite S | 2026-01-02 | `abc1234` | x86_64, 2 cores |" in bench_status
    moded = generate_pages.status([], [], [dict(report, mode="quick")])
    assert "| Suite S | quick | 2026-01-02 |" in moded
    slope = generate_pages.performance([{"suite": "s", "results": [
        {"name": "b", "what": "log-log slope", "ours_s": 0.573, "slope": 0.573,
         "peer": "goal slope", "peer_s": 1.2, "ratio": 0.478, "goal": "slope <= 1.2",
         "goal_met": True}]}])
    assert "| 0.573 |" in slope and "goal slope<br>1.2 |" in slope and " ms" not in slope
    st = generate_pages.status([{"notebook": "a/b", "mode": "quick", "seed": 0,
                                 "seconds": 1.5, "date": "d", "versions": {"numpy": "2"}}])
    assert ">a/<wbr>b</a>" in st and "1.5 s" in st and "1 notebook, 2 s of execution" in st
    assert "Every notebook ran with " in st and "numpy 2" in st  # shared versions once
    two = generate_pages.status([{"notebook": n, "mode": "quick", "seed": 0, "seconds": 1.0,
                                  "date": "d", "versions": {"numpy": v, "scipy": "1"}}
                                 for n, v in (("a/b", "2"), ("a/c", "3"))])
    assert "| numpy |" in two and "scipy 1" in two and "| scipy |" not in two


def _fake_build(tmp_path: Path, mode: str, results_written=True) -> Path:
    build = tmp_path / f"build_{mode}"
    for sub in ("status", "results", "tables/p/nb"):
        (build / sub).mkdir(parents=True)
    (build / "status" / "p__nb.json").write_text(json.dumps(
        {"notebook": "p/nb", "mode": mode, "seed": 3, "seconds": 5400.0, "date": "d",
         "results_written": results_written, "versions": {"numpy": "2"}}))
    (build / "results" / "p__nb.json").write_text(json.dumps(
        {"claims": [{"id": "c", "verdict": "differs"}, {"id": "e", "verdict": "matches"}],
         "numbers": {"x": 1.0}, "mode": mode, "seed": 3, "notebook": "p/nb"}))
    (build / "tables" / "p" / "nb" / "t.json").write_text(json.dumps([{"a": 1}]))
    (tmp_path / "notebooks" / "p").mkdir(parents=True, exist_ok=True)
    _tiny_notebook(tmp_path / "notebooks" / "p" / "nb.ipynb", "x = 1")
    return build


def test_a_recorded_full_run_keeps_results_tables_and_provenance(tmp_path):
    rec = record_full_run.gather(_fake_build(tmp_path, "full"), "p/nb", "abc1234", root=tmp_path)
    assert rec["mode"] == "full" and rec["seconds"] == 5400.0 and rec["commit"] == "abc1234"
    assert rec["results"]["numbers"] == {"x": 1.0} and rec["tables"] == {"t": [{"a": 1}]}
    st = generate_pages.status([], [rec])
    assert "## Recorded full-mode runs" in st and ">p/<wbr>nb</a>" in st and "1.5 min" not in st
    assert "90.0 min" in st and "`abc1234`" in st and "✓ 1 · ⚠ 1" in st
    assert "None recorded yet." in generate_pages.status([], [])


def test_a_resumed_full_run_records_the_time_of_every_attempt(tmp_path):
    build = _fake_build(tmp_path, "full")  # status: 5400 s (the last attempt)
    rec = record_full_run.gather(build, "p/nb", "abc", [3600.0, 5400.5], root=tmp_path)
    assert rec["seconds"] == 9000.5 and rec["seconds_last_attempt"] == 5400.0
    assert rec["attempt_seconds"] == [3600.0, 5400.5] and rec["parameters"] == {}
    rec["parameters"] = {"N_JOBS": 2}
    assert "2.50 h (2 attempts, resumed, 2 workers)" in generate_pages.status([], [rec])
    rec["parameters"] = {"N_JOBS": 2, "CHECKPOINT": "/tmp/some/machine/path", "RUNS": 5}
    page = generate_pages.status([], [rec])
    assert "2.50 h (2 attempts, resumed, 2 workers, RUNS=5)" in page and "/tmp" not in page
    with pytest.raises(ValueError, match="shorter"):
        record_full_run.gather(build, "p/nb", "abc", [9000.0, 60.0], root=tmp_path)
    with pytest.raises(ValueError, match=">= 0"):
        record_full_run.gather(build, "p/nb", "abc", [-1.0, 5400.0], root=tmp_path)


@pytest.mark.parametrize("mode, written", [("quick", True), ("full", False)])
def test_recording_refuses_a_quick_or_failed_run(tmp_path, mode, written):
    with pytest.raises(ValueError, match="not 'full'|did not save"):
        record_full_run.gather(_fake_build(tmp_path, mode, written), "p/nb", None, root=tmp_path)
    with pytest.raises(ValueError, match="no status record"):
        record_full_run.gather(tmp_path / "nowhere", "p/nb", None, root=tmp_path)


def _tiny_notebook(path: Path, body: str):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell('MODE = "quick"\nSEED = 0',
                                          metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell(body)]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    nbformat.write(nb, path)


@pytest.mark.slow
def test_executor_injects_parameters_and_reports_a_failing_cell(tmp_path):
    ok = tmp_path / "ok_nb.ipynb"
    _tiny_notebook(ok, "from pathlib_core.experiments.results import Results\n"
                       "r = Results(mode=MODE, seed=SEED)\nr.record('seed', SEED)\nr.save()")
    build = tmp_path / "build"
    run = subprocess.run([PY, str(ROOT / "scripts" / "execute_notebook.py"), str(ok),
                          str(tmp_path / "out" / "ok.ipynb"), "--mode", "full", "--seed", "7",
                          "--build-dir", str(build)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    data = json.loads((build / "results" / "ok_nb.json").read_text())
    assert data["mode"] == "full" and data["numbers"]["seed"] == 7
    status = json.loads((build / "status" / "ok_nb.json").read_text())
    assert status["mode"] == "full" and status["seed"] == 7
    assert isinstance(status["seconds"], float) and 0 < status["seconds"] < 600

    bad = tmp_path / "ok_nb_bad.ipynb"
    _tiny_notebook(bad, "raise RuntimeError('boom')")
    out = tmp_path / "out" / "bad.ipynb"
    run = subprocess.run([PY, str(ROOT / "scripts" / "execute_notebook.py"), str(bad), str(out),
                          "--build-dir", str(build)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "ok_nb_bad" in run.stderr and "cell [" in run.stderr and "boom" in run.stderr
    assert not out.exists(), "a failed run must not leave an executed copy"
    assert (build / "failed" / "ok_nb_bad.ipynb").exists(), "papermill's output is kept"
    assert not (build / "results" / "ok_nb_bad.json").exists()

    run = subprocess.run([PY, str(ROOT / "scripts" / "execute_notebook.py"), str(ok), str(out),
                          "--mode", "bogus"], capture_output=True, text=True)
    assert run.returncode == 2 and "valid modes" in run.stderr


def test_executor_passes_extra_parameters(tmp_path):
    import execute_notebook

    assert execute_notebook.parse_params(["N_JOBS=2", "TAG=abc", "P='x y'", "D=None"]) == {
        "N_JOBS": 2, "TAG": "abc", "P": "x y", "D": None}
    for bad in (["N_JOBS"], ["2x=1"], ["MODE=full"]):
        with pytest.raises(ValueError, match="--param"):
            execute_notebook.parse_params(bad)


@pytest.mark.slow
def test_executor_injects_extra_parameters(tmp_path):
    nb = tmp_path / "extra_nb.ipynb"
    _tiny_notebook(nb, "from pathlib_core.experiments.results import Results\n"
                       "r = Results(mode=MODE, seed=SEED)\nr.record('n', N_JOBS)\nr.save()")
    build = tmp_path / "build"
    run = subprocess.run([PY, str(ROOT / "scripts" / "execute_notebook.py"), str(nb),
                          str(tmp_path / "out.ipynb"), "--build-dir", str(build),
                          "--param", "N_JOBS=3"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads((build / "results" / "extra_nb.json").read_text())["numbers"]["n"] == 3
    status = json.loads((build / "status" / "extra_nb.json").read_text())
    assert status["parameters"] == {"N_JOBS": 3}
    run = subprocess.run([PY, str(ROOT / "scripts" / "execute_notebook.py"), str(nb),
                          str(tmp_path / "out.ipynb"), "--param", "SEED=3"],
                         capture_output=True, text=True)
    assert run.returncode == 2 and "--seed" in run.stderr


def test_make_rejects_an_unknown_mode_at_once():
    run = subprocess.run(["make", "-n", "book", "MODE=bogus"], cwd=ROOT, capture_output=True,
                         text=True)
    assert run.returncode != 0
    assert "valid modes: quick full" in run.stderr


def test_manifest_compares_timing_figures_by_name_only(tmp_path):
    import figure_manifest
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pathlib_core.experiments.plotting import is_timing_figure, save_figure

    manifests = []
    for k, seconds in enumerate(([0.1, 0.2], [0.3, 0.1])):  # two builds, different timings
        build = tmp_path / f"b{k}"
        fig, ax = plt.subplots()
        ax.plot([1, 2], [1, 2])
        save_figure(fig, "fixed", directory=build / "figures" / "nb")
        ax.plot([1, 2], seconds)
        path = save_figure(fig, "times", directory=build / "figures" / "nb", timing=True)
        plt.close(fig)
        assert path.name == "times.timing.svg" and is_timing_figure(path)
        assert figure_manifest.cmd_write(build) == 0
        manifests.append(build / "figures.sha256")
    lines = manifests[0].read_text().splitlines()
    assert "timing  nb/times.timing.svg" in lines and len(lines) == 2
    assert figure_manifest.cmd_compare(*manifests) == 0
    # a deterministic figure that changes is still caught
    (tmp_path / "b1" / "figures" / "nb" / "fixed.svg").write_text("<svg>changed</svg>")
    figure_manifest.cmd_write(tmp_path / "b1")
    assert figure_manifest.cmd_compare(*manifests) == 1


def test_verify_html_checks_shown_images_and_drops_leftovers(tmp_path):
    import figure_manifest

    build, html = tmp_path / "build", tmp_path / "html"
    (build / "figures" / "nb").mkdir(parents=True)
    (build / "figures" / "nb" / "a.svg").write_text('<?xml version="1.0"?>\n<svg>a</svg>')
    (html / "_images").mkdir(parents=True)
    (html / "_images" / "h1.svg").write_text("<svg>a</svg>")      # this build's figure
    (html / "_images" / "old.svg").write_text("<svg>older</svg>")  # leftover, shown nowhere
    (html / "page.html").write_text('<img src="_images/h1.svg" />')
    assert figure_manifest.cmd_verify_html(html, build) == 0
    assert not (html / "_images" / "old.svg").exists()
    # an image a page shows that no notebook of this build produced is an error
    (html / "_images" / "h2.svg").write_text("<svg>stale but shown</svg>")
    (html / "page2.html").write_text('<img src="../_images/h2.svg" />')
    assert figure_manifest.cmd_verify_html(html, build) == 1


def test_scoreboard_reads_only_the_chapters_results(tmp_path):
    """A claim file of a notebook run outside the book (no notebooks/<part>/<name>.ipynb) does
    not reach the scoreboard."""
    (tmp_path / "results").mkdir()
    (tmp_path / "notebooks" / "p").mkdir(parents=True)
    (tmp_path / "notebooks" / "p" / "nb.ipynb").write_text("{}")
    claim = {"id": "a", "paper": "s3vm", "text": "t", "paper_value": "1", "ours": "2",
             "verdict": "differs", "reason": "r", "notebook": "p/nb"}
    for stem in ("p__nb", "interactive", "p__gone"):
        (tmp_path / "results" / f"{stem}.json").write_text(json.dumps(
            {"claims": [dict(claim, id=stem)]}))
    got = generate_pages._load_results(tmp_path / "results", tmp_path / "notebooks")
    assert [c["id"] for r in got for c in r["claims"]] == ["p__nb"]


def test_papermills_injected_cell_is_removed_from_the_page(tmp_path):
    import execute_notebook

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("MODE = 'quick'", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("# Parameters\nMODE = 'full'\n",
                                          metadata={"tags": ["injected-parameters"]}),
                nbformat.v4.new_code_cell("x = 1")]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    execute_notebook._remove_injected_cell(path)
    tags = [c.metadata.get("tags", []) for c in nbformat.read(path, as_version=4).cells]
    assert tags == [["parameters"], ["injected-parameters", "remove-cell"], []]


def test_boilerplate_cells_are_collapsed_and_the_check_can_fail(tmp_path):
    import tag_cells

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("MODE = 'quick'", metadata={"tags": ["parameters"]}),
                nbformat.v4.new_code_cell("import numpy as np\nN = 3"),
                nbformat.v4.new_code_cell("x = np.arange(N)\ny = x ** 2"),
                nbformat.v4.new_code_cell("fig, ax = plt.subplots()\nax.plot(x, y)\nz = 1"),
                nbformat.v4.new_code_cell("results.claim('a', paper='s3vm', text='t',\n"
                                          "  paper_value=1, ours=1, verdict='matches')"),
                nbformat.v4.new_code_cell("results.record('k', 1,\n    'what')\nresults.save();"),
                nbformat.v4.new_code_cell("\n".join(f"a{k} = {k}" for k in range(30))),
                nbformat.v4.new_code_cell("\n".join(f"b{k} = {k}" for k in range(25)))]
    path = tmp_path / "nb.ipynb"
    nbformat.write(nb, path)
    assert tag_cells.missing_tags(path) == [(1, "setup"), (3, "figure"), (4, "claims"),
                                            (5, "bookkeeping"), (6, "long")]
    assert tag_cells.tag(path) == 5
    assert tag_cells.missing_tags(path) == []
    cells = nbformat.read(path, as_version=4).cells
    assert [c.metadata.get("tags", []) for c in cells][1:] == [
        ["hide-input"], [], ["hide-input"], ["hide-input"], ["remove-input"], ["hide-input"],
        []]
    # a record-keeping cell that was only collapsed leaves the page
    nb = nbformat.read(path, as_version=4)
    nb.cells[5].metadata["tags"] = ["hide-input"]
    nbformat.write(nb, path)
    assert tag_cells.missing_tags(path) == [(5, "bookkeeping")]
    tag_cells.tag(path)
    assert nbformat.read(path, as_version=4).cells[5].metadata["tags"] == ["remove-input"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_notebooks_boilerplate_is_collapsed(path):
    import tag_cells

    assert tag_cells.missing_tags(path) == []
