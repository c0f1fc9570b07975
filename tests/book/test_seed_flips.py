"""scripts/check_seed_flips.py: a verdict that differs between two seeds fails the check."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import check_seed_flips  # noqa: E402


def _write(folder: Path, verdicts: dict[str, str]) -> Path:
    """Claim records of the notebook p/nb (which exists under tmp/notebooks), plus a stray
    file of a notebook outside the book that must be ignored."""
    folder.mkdir(parents=True)
    (folder.parent / "notebooks" / "p").mkdir(parents=True, exist_ok=True)
    (folder.parent / "notebooks" / "p" / "nb.ipynb").write_text("{}")
    claims = [{"id": k, "verdict": v, "ours": f"value of {k}"} for k, v in verdicts.items()]
    (folder / "p__nb.json").write_text(json.dumps({"claims": claims}))
    (folder / "interactive.json").write_text(json.dumps({"claims": [
        {"id": f"stray-{folder.name}", "verdict": "matches", "ours": "-"}]}))
    return folder


def _run(a, b, *extra):
    return check_seed_flips.main([str(a), str(b), "--notebooks-dir",
                                  str(a.parent / "notebooks"), *extra])


def test_agreeing_seeds_pass(tmp_path, capsys):
    a = _write(tmp_path / "a", {"x": "matches", "y": "differs"})
    b = _write(tmp_path / "b", {"x": "matches", "y": "differs"})
    assert _run(a, b, "--seeds", "0", "1") == 0
    assert "0 of 2 verdicts flip between seeds 0 and 1" in capsys.readouterr().out


def test_a_flip_fails_and_is_shown_with_both_values(tmp_path, capsys):
    a = _write(tmp_path / "a", {"x": "matches", "y": "differs"})
    b = _write(tmp_path / "b", {"x": "differs", "y": "differs"})
    assert _run(a, b, "--seeds", "0", "1") == 1
    out = capsys.readouterr().out
    assert "FLIP x: seed 0 matches, seed 1 differs" in out and "seed 1: value of x" in out
    assert "1 of 2 verdicts flip" in out


def test_a_claim_recorded_at_one_seed_only_fails(tmp_path, capsys):
    a = _write(tmp_path / "a", {"x": "matches", "y": "differs"})
    b = _write(tmp_path / "b", {"x": "matches"})
    assert _run(a, b) == 1
    assert "MISSING y" in capsys.readouterr().out


def test_empty_builds_fail(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    assert _run(tmp_path / "a", tmp_path / "b") == 1
