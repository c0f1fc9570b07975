"""Fail if a chapter types in a paper-scale measurement instead of reading it from its record.

Paper-scale numbers live in ``benchmarks/full_runs/*.json`` and the chapters print them from
there. A sentence of a chapter (a markdown cell, a string in a code cell, or a page under
``book/``) that speaks of the paper-scale run ("full mode", "paper scale", "the record", ...)
and also holds a measured quantity typed as a literal (a decimal, a percentage, a ratio such
as ``18.8x``, a duration, a count such as ``4/10`` or ``4 of 10``) is reported, with the file
and the sentence. References (Table 2, Figure 5, paper (42), Section 3, years), the paper's
own values ("the paper's 4.62"), intervals and grids in brackets and settings without a unit
(20 runs, 2000 points) are not measurements and are not reported.

Usage: ``python scripts/check_typed_numbers.py [ROOT]``; exit status 1 if anything is found.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCALE = re.compile(
    r"full[- ]mode|paper[- ]scale|full[- ]scale|full[- ]size run|recorded (?:full|run)|"
    r"the record\b|full run|full protocol", re.IGNORECASE)

# a measured quantity typed as a literal
QUANTITY = re.compile(
    r"(?<![\w.{])("
    r"\d+(?:\.\d+)?\s*(?:%|x\b|×|min\b|minutes?\b|hours?\b|h\b|ms\b|s\b|seconds?\b)"
    r"|\d+\.\d+(?:e[-+]?\d+)?"
    r"|\d+\s*/\s*\d+"
    r"|\d+ of (?:the )?\d+"
    r")", re.IGNORECASE)

# what a number may follow without being a measurement
REFERENCE = re.compile(
    r"(?:Tables?|Figures?|Fig\.|Sections?|Appendix|Appendices|Lemma|Theorem|Algorithm|"
    r"Corollary|Proposition|Definition|Eq\.|eq\.|equations?|paper|paper's|version|Python|v)\s*\(?$",
    re.IGNORECASE)


def sentences(text: str):
    """Sentences of a text: split at full stops followed by a space, and at blank lines."""
    for block in re.split(r"\n\s*\n", text):
        for s in re.split(r"(?<=[.!?])\s+(?=[A-Z(`*])", " ".join(block.split())):
            if s.strip():
                yield s.strip()


def _strip_markup(s: str) -> str:
    s = re.sub(r"`[^`]*`", " ", s)           # inline code: names, not measurements
    s = re.sub(r"\$[^$]*\$", " ", s)          # inline math: symbols and equations
    s = re.sub(r"\{[^}]*\}`[^`]*`", " ", s)   # roles such as {eq}`label`
    s = re.sub(r"\]\([^)]*\)", "]", s)        # link targets
    s = re.sub(r"\[[^\]]*\]", " ", s)        # intervals and grids: settings
    return s


def typed_quantities(sentence: str) -> list[str]:
    """The measured quantities typed in ``sentence``, if it speaks of the paper-scale run."""
    if not SCALE.search(sentence):
        return []
    text = _strip_markup(sentence)
    found = []
    for m in QUANTITY.finditer(text):
        before = text[:m.start()].rstrip()
        if REFERENCE.search(before[-20:]):
            continue
        if re.fullmatch(r"(?:19|20)\d\d", m.group(1).strip()):
            continue
        found.append(m.group(1))
    return found


def _code_strings(source: str):
    """The string constants of a code cell (f-string literal parts included)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def texts(root: Path):
    """(where, text) for every markdown cell, code-cell string and book page."""
    for nb in sorted((root / "notebooks").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in nb.parts:
            continue
        cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
        for k, cell in enumerate(cells):
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            where = f"{nb.relative_to(root)} cell {k}"
            if cell["cell_type"] == "markdown":
                yield where, src
            elif cell["cell_type"] == "code":
                for s in _code_strings(src):
                    yield where, s
    for page in sorted((root / "book").rglob("*.md")):
        rel = page.relative_to(root)
        if rel.parts[1] in ("_build", "generated", "executed", "_vendor"):
            continue
        yield str(rel), page.read_text(encoding="utf-8")


def find(root: Path = ROOT) -> list[tuple[str, str, list[str]]]:
    """Every (where, sentence, quantities) with a typed paper-scale measurement."""
    out = []
    for where, text in texts(root):
        for s in sentences(text):
            q = typed_quantities(s)
            if q:
                out.append((where, s, q))
    return out


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0]) if argv else ROOT
    hits = find(root)
    for where, s, q in hits:
        print(f"{where}: typed paper-scale number(s) {q}: {s[:200]}")
    if hits:
        print(f"{len(hits)} sentence(s) type paper-scale numbers; read them from the record "
              "(benchmarks/full_runs/) instead")
        return 1
    print("no chapter types a paper-scale number")
    return 0


if __name__ == "__main__":
    sys.exit(main())
