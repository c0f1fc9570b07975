"""Collapse the notebooks' boilerplate in the book: tag the cells readers need not read first.

The tags are cell metadata (MyST-NB reads them; a notebook's provenance hash does not): the
setup cell (imports and settings, the first code cell after ``parameters``), the cells that
mostly draw figures, the cells that record claims and every cell of more than ``LONG`` lines
get ``hide-input`` (their code is one click away; their output, a figure, a table or a
verdict box, stays visible); a cell that only keeps records (``results.save()``,
``results.record(...)``, ``results.show_summary()``) gets ``remove-input``. Run with ``--check`` to
list the cells that lack their tag (``make lint`` does).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_PLOT = re.compile(r"\b(ax|axes|axs|fig|plt)\b|save_figure|plotting\.")
_HIDDEN = ("hide-input", "hide-cell", "remove-input", "remove-cell")
_REMOVED = ("remove-input", "remove-cell")


def _lines(src: str) -> list[str]:
    return [ln for ln in src.splitlines() if ln.strip() and not ln.strip().startswith("#")]


#: a code cell longer than this (lines of code, not comments) is collapsed: its output is
#: what a reader reads first, the code one click away
LONG = 25
#: record-keeping calls: a cell of nothing else carries no reading for the page
_BOOKKEEPING = re.compile(r"^(results\.(save|record|show_summary)\(|save_table\()")


def wants_hiding(src: str, first_after_parameters: bool) -> str | None:
    """Why a code cell's input is collapsed (None: it stays open)."""
    lines = _lines(src)
    if not lines:
        return None
    if first_after_parameters and lines[0].startswith(("import ", "from ")):
        return "setup"
    starts = [ln for ln in lines if not ln.startswith((" ", "\t", ")", "]", "}"))]
    if starts and all(_BOOKKEEPING.match(ln) for ln in starts):
        return "bookkeeping"
    if ".claim(" in src:
        return "claims"
    if sum(bool(_PLOT.search(ln)) for ln in lines) >= 0.5 * len(lines):
        return "figure"
    if len(lines) > LONG:
        return "long"
    return None


#: the tag each reason asks for: a record-keeping cell leaves the page (it shows nothing, or
#: only its table); the others keep a "show code" toggle
TAG = {"bookkeeping": "remove-input"}


def missing_tags(path: Path) -> list[tuple[int, str]]:
    """``(cell index, reason)`` of the code cells of ``path`` that lack a hiding tag."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    out, after_params = [], False
    for i, cell in enumerate(nb["cells"]):
        if cell["cell_type"] != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        if "parameters" in tags:
            after_params = True
            continue
        why = wants_hiding(src, after_params)
        after_params = False
        enough = _REMOVED if why in TAG else _HIDDEN
        if why and not any(t in tags for t in enough):
            out.append((i, why))
    return out


def tag(path: Path) -> int:
    nb = json.loads(path.read_text(encoding="utf-8"))
    todo = missing_tags(path)
    for i, why in todo:
        tags = nb["cells"][i].setdefault("metadata", {}).setdefault("tags", [])
        tags[:] = [t for t in tags if t not in _HIDDEN] + [TAG.get(why, "hide-input")]
    if todo:
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return len(todo)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="list untagged cells, change nothing")
    args = ap.parse_args(argv)
    bad = 0
    for nb in sorted((ROOT / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in nb.parts:
            continue
        rel = nb.relative_to(ROOT)
        if args.check:
            for i, why in missing_tags(nb):
                print(f"{rel}: cell {i} ({why}) is not collapsed: tag it hide-input")
                bad += 1
        else:
            n = tag(nb)
            if n:
                print(f"{rel}: {n} cell(s) collapsed or removed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
