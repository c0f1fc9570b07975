"""The verdict box each claim shows where a notebook checks it."""

import json

from pathlib_core.experiments import results as results_module
from pathlib_core.experiments.results import Results, VerdictBox


def _claim(res: Results, verdict="differs", text="Table 2: the path <wins>"):
    res.claim("demo-claim", paper="s3vm", text=text, paper_value="4/10 data sets",
              ours="1/3 data sets", verdict=verdict, reason="fewer splits & data sets")
    return res.claims[-1]


def test_box_shows_paper_this_run_the_record_and_the_reason_escaped():
    res = Results(mode="quick", seed=0, notebook="demo/01")
    c = _claim(res)
    box = VerdictBox(c, "quick", {"ours": "4/10 data sets", "verdict": "matches"})
    page = box._repr_html_()
    assert "admonition warning" in page  # the verdict of this run colours the box
    assert "Table 2: the path &lt;wins&gt;" in page and "<wins>" not in page
    assert "fewer splits &amp; data sets" in page
    for value in ("4/10 data sets", "1/3 data sets", "matches", "differs"):
        assert value in page
    assert "scoreboard.html#scoreboard-s3vm" in page
    assert 'id="claim-s3vm-demo-claim"' in page  # the scoreboard links here
    text = repr(box)
    assert text.splitlines()[0] == "[differs] Table 2: the path <wins>"
    assert "full-mode run (recorded): 4/10 data sets  (matches)" in text


def test_box_without_a_record_says_so_and_full_mode_shows_no_record_row():
    res = Results(mode="quick", seed=0, notebook="demo/01")
    c = _claim(res, verdict="matches")
    assert "no record of this claim" in repr(VerdictBox(c, "quick", None))
    full = repr(VerdictBox(c, "full", None))
    assert "recorded run" not in full and "this run (full mode): 1/3 data sets" in full


def test_claim_reads_its_own_notebooks_record(tmp_path, monkeypatch):
    root = tmp_path / "repo"
    (root / "pathlib_core").mkdir(parents=True)
    (root / "pyproject.toml").write_text("")
    (root / "benchmarks" / "full_runs").mkdir(parents=True)
    rec = {"date": "2026-01-01", "results": {"claims": [
        {"id": "demo-claim", "ours": "9/10", "verdict": "matches"}]}}
    (root / "benchmarks" / "full_runs" / "demo__01.json").write_text(json.dumps(rec))
    monkeypatch.setattr(results_module, "__file__",
                        str(root / "pathlib_core" / "experiments" / "results.py"))
    res = Results(mode="quick", seed=0, notebook="demo/01")
    assert res._recorded("demo-claim")["ours"] == "9/10"
    assert res._recorded("other") is None
    assert Results(mode="full", seed=0, notebook="demo/01")._recorded("demo-claim") is None


def test_claim_displays_nothing_outside_a_kernel(capsys):
    res = Results(mode="quick", seed=0, notebook="demo/01")
    _claim(res)
    assert capsys.readouterr().out == ""
