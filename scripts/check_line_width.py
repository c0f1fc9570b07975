"""Fail if a chapter's code or text output has a line wider than the book's text column.

The book shows code and output in a column that holds about 94 characters of its
monospace font (``book/_css/book.css``); wider lines are cut off at the right edge.
This script lists every line longer than ``--width`` (default 88):

- in the code cells of the stored notebooks (``notebooks/``), and
- in the text outputs of executed notebooks given as arguments (e.g. ``book/executed``),
  except papermill's injected-parameters cell and removed cells, which the book hides.

HTML outputs (tables, verdict boxes) wrap and are not checked here; ``make check-browser
--fail-on-wide`` checks the rendered pages.

Usage: ``python scripts/check_line_width.py [--width N] [PATH ...]`` (notebooks or folders;
default ``notebooks``); exit status 1 if a line is too wide.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_SKIP = ("injected-parameters", "remove-cell", "remove-input")


def _text(output: dict) -> str:
    if output.get("output_type") == "stream":
        txt = output.get("text", "")
    else:
        data = output.get("data", {})
        if "text/html" in data or "image/svg+xml" in data or "image/png" in data:
            return ""
        txt = data.get("text/plain", "")
    return "".join(txt) if isinstance(txt, list) else txt


def wide_lines(path: Path, width: int) -> list[str]:
    """``"<file>:cell <k> <source|output>: <n> chars: <line>"`` for each line over ``width``."""
    nb = json.loads(path.read_text(encoding="utf-8"))
    out = []
    for k, cell in enumerate(nb.get("cells", [])):
        if cell.get("cell_type") != "code":
            continue
        tags = cell.get("metadata", {}).get("tags", [])
        if any(t in tags for t in _SKIP):
            continue
        src = cell.get("source", "")
        src = "".join(src) if isinstance(src, list) else src
        texts = [("source", src)] + [("output", _text(o)) for o in cell.get("outputs", [])]
        for kind, text in texts:
            for line in text.splitlines():
                if len(line) > width:
                    out.append(f"{path}:cell {k} {kind}: {len(line)} chars: {line[:60]}...")
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="*", type=Path, default=[ROOT / "notebooks"])
    ap.add_argument("--width", type=int, default=88)
    args = ap.parse_args(argv)
    files = []
    for p in args.paths:
        files += sorted(p.rglob("*.ipynb")) if p.is_dir() else [p]
    files = [f for f in files if ".ipynb_checkpoints" not in f.parts]
    problems = [w for f in files for w in wide_lines(f, args.width)]
    for w in problems:
        print(w)
    print(f"{len(problems)} line(s) wider than {args.width} characters in {len(files)} "
          "notebook(s)", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
