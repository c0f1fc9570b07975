"""No chapter types a paper-scale measurement in by hand (``scripts/check_typed_numbers.py``);
paper-scale numbers are printed from the records in ``benchmarks/full_runs/``."""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import check_typed_numbers as ctn  # noqa: E402


def test_no_chapter_or_page_types_a_paper_scale_number():
    hits = ctn.find(ROOT)
    assert not hits, "\n".join(f"{w}: {q}: {s[:160]}" for w, s, q in hits)


@pytest.mark.parametrize("sentence, expected", [
    ("At paper scale the path wins 4/10 data sets.", ["4/10"]),
    ("The full-mode run took about 6 minutes.", ["6 minutes"]),
    ("In the full run the speedup on the paper's grid was 18.8x.", ["18.8x"]),
    ("The record has a cost of 0.119 (-50 %).", ["0.119", "50 %"]),
    ("In full mode the path is best on 4 of 10 data sets.", ["4 of 10"]),
    # references, the paper's own values, settings and sentences not about the paper scale
    ("Full mode runs Table 2 and Figure 5 of the paper (42) with 20 runs.", []),
    ("Full mode uses the grid [0.2 mu_0, mu_0] and the paper's 4.62 points.", []),
    ("Quick mode gives 0.52 on 3/3 data sets.", []),
    ("The full-mode table is printed below from `numbers['t'] = 1.5`.", []),
])
def test_typed_quantities(sentence, expected):
    assert ctn.typed_quantities(sentence) == expected


def test_finds_typed_numbers_in_markdown_and_code_strings(tmp_path):
    cells = [{"cell_type": "markdown", "metadata": {}, "source": "Intro.\n\nAt paper scale the "
              "method took 25 s. It is fast."},
             {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
              "source": "x = 1.5\nprint(f'full mode: {x} and the record says 3.2x')"}]
    nb = tmp_path / "notebooks" / "part" / "01.ipynb"
    nb.parent.mkdir(parents=True)
    nb.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                              "nbformat_minor": 5}))
    (tmp_path / "book" / "parts").mkdir(parents=True)
    (tmp_path / "book" / "parts" / "p.md").write_text("The full run won 4/10 data sets.\n")
    found = {(w, tuple(q)) for w, _, q in ctn.find(tmp_path)}
    assert found == {("notebooks/part/01.ipynb cell 0", ("25 s",)),
                     ("notebooks/part/01.ipynb cell 1", ("3.2x",)),
                     ("book/parts/p.md", ("4/10",))}
    assert ctn.main([str(tmp_path)]) == 1
